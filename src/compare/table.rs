//! The comparison itself: one row per (project, metric) over the projects every run
//! has, each run's value and its difference from the first run; printed as an
//! aligned text table and written as the long table `compare.csv`.

use super::config::{self, KeyDiff};
use super::load::Run;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// File names written in the output folder.
pub(crate) const COMPARE_CSV: &str = "compare.csv";
pub(crate) const CONFIG_DIFF_CSV: &str = "config_diff.csv";

/// Columns of `compare.csv`.
pub(crate) const COMPARE_COLUMNS: &[&str] = &[
    "project",
    "metric",
    "run",
    "value",
    "diff_vs_first",
    "rel_diff_vs_first",
];

/// Columns of `config_diff.csv`.
pub(crate) const CONFIG_DIFF_COLUMNS: &[&str] = &["key", "run", "value"];

/// The configuration keys shown on screen; `config_diff.csv` has them all.
const SHOWN_KEYS: usize = 30;

/// One metric of one project in every run.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub project: String,
    pub metric: String,
    /// One per run, in the runs' order.
    pub values: Vec<Option<f64>>,
}

impl Row {
    /// `value − first value` of run `i` (0 for the first run itself).
    pub fn diff(&self, i: usize) -> Option<f64> {
        Some(self.values[i]? - self.values[0]?)
    }

    /// The difference relative to the first value, as a fraction (0.123 = +12.3%):
    /// none when the first value is 0 and the difference is not.
    pub(crate) fn rel_diff(&self, i: usize) -> Option<f64> {
        let d = self.diff(i)?;
        let base = self.values[0]?;
        if d == 0.0 {
            Some(0.0)
        } else if base == 0.0 {
            None
        } else {
            Some(d / base.abs())
        }
    }
}

/// What the runs have in common and how they differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The runs' labels, in order.
    pub labels: Vec<String>,
    /// Projects that every run has, in the first run's order.
    pub shared: Vec<String>,
    /// Projects that only some runs have, with the labels of those runs.
    pub partial: Vec<(String, Vec<String>)>,
    pub rows: Vec<Row>,
    /// Configuration keys whose values differ.
    pub config: Vec<KeyDiff>,
    /// The same, with a table that only some runs have shown as one entry
    /// ([`config::collapse`]).
    pub shown_config: Vec<KeyDiff>,
}

impl Comparison {
    /// Compares `runs` (at least one; the first is the reference).
    pub fn new(runs: &[Run]) -> Self {
        let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
        let mut all: Vec<&str> = Vec::new();
        for r in runs {
            for p in &r.projects {
                if !all.contains(&p.project.as_str()) {
                    all.push(&p.project);
                }
            }
        }
        let (mut shared, mut partial) = (Vec::new(), Vec::new());
        for p in all {
            let having: Vec<String> = runs
                .iter()
                .filter(|r| r.project(p).is_some())
                .map(|r| r.label.clone())
                .collect();
            if having.len() == runs.len() {
                shared.push(p.to_string());
            } else {
                partial.push((p.to_string(), having));
            }
        }
        let mut rows = Vec::new();
        for p in &shared {
            let summaries: Vec<_> = runs.iter().filter_map(|r| r.project(p)).collect();
            // The first run's metrics in its order, then any that only later runs have.
            let mut metrics: Vec<&str> = Vec::new();
            for s in &summaries {
                for (m, _) in &s.metrics {
                    if !metrics.contains(&m.as_str()) {
                        metrics.push(m);
                    }
                }
            }
            for m in metrics {
                rows.push(Row {
                    project: p.clone(),
                    metric: m.to_string(),
                    values: summaries.iter().map(|s| s.get(m)).collect(),
                });
            }
        }
        let configs: Vec<_> = runs.iter().map(|r| &r.config).collect();
        let diff = config::diff(&configs);
        Self {
            labels,
            shared,
            partial,
            rows,
            shown_config: config::collapse(&diff, &configs),
            config: diff,
        }
    }

    /// Writes `compare.csv` and `config_diff.csv` into `dir`.
    pub fn write_csv(&self, dir: &Path) -> io::Result<()> {
        let mut w = csv_writer(&dir.join(COMPARE_CSV))?;
        w.write_record(COMPARE_COLUMNS)?;
        for row in &self.rows {
            for (i, label) in self.labels.iter().enumerate() {
                w.write_record([
                    row.project.as_str(),
                    row.metric.as_str(),
                    label,
                    &csv_float(row.values[i]),
                    &csv_float(row.diff(i)),
                    &csv_float(row.rel_diff(i)),
                ])?;
            }
        }
        w.flush()?;
        let mut w = csv_writer(&dir.join(CONFIG_DIFF_CSV))?;
        w.write_record(CONFIG_DIFF_COLUMNS)?;
        for k in &self.config {
            for (label, v) in self.labels.iter().zip(&k.values) {
                w.write_record([k.key.as_str(), label, v.as_deref().unwrap_or("")])?;
            }
        }
        w.flush()?;
        Ok(())
    }

    /// The text report: the runs, the configuration keys that differ, the projects
    /// not in every run, then the table of metrics.
    pub(crate) fn render(&self, runs: &[Run]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Runs (the first is the reference; Δ = run − reference):");
        let mut head = Table::new(3);
        let mut sets = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let mut about = vec![
                format!("scenario {}", r.scenario.as_deref().unwrap_or("?")),
                match r.seed {
                    Some(seed) => format!("seed {seed}"),
                    None => "seed ?".to_string(),
                },
            ];
            if r.metrics_file != super::load::SUMMARY_CSV {
                about.push(format!("metrics from {}", r.metrics_file));
            }
            head.push(vec![
                format!("  [{}] {}", i + 1, r.label),
                r.path.display().to_string(),
                about.join(", "),
            ]);
            let set: Vec<String> = r.overrides.iter().map(|o| format!("--set {o}")).collect();
            sets.push(set.join(" "));
        }
        // The `--set` arguments of each run on a line of its own, under its run.
        let text = head.render(&[Align::Left, Align::Left, Align::Left]);
        for (line, set) in text.lines().zip(&sets) {
            let _ = writeln!(s, "{line}");
            if !set.is_empty() {
                let _ = writeln!(s, "      {set}");
            }
        }

        if self.config.is_empty() {
            let _ = writeln!(s, "\nConfiguration: identical.");
        } else {
            let _ = writeln!(
                s,
                "\nConfiguration keys that differ ({}):",
                self.config.len()
            );
            for k in self.shown_config.iter().take(SHOWN_KEYS) {
                let values: Vec<&str> = k
                    .values
                    .iter()
                    .map(|v| v.as_deref().unwrap_or("(absent)"))
                    .collect();
                let _ = writeln!(s, "  {}: {}", k.key, values.join(" → "));
            }
            if self.shown_config.len() > SHOWN_KEYS {
                let _ = writeln!(
                    s,
                    "  … and {} more (all keys in {CONFIG_DIFF_CSV})",
                    self.shown_config.len() - SHOWN_KEYS
                );
            }
        }
        if !self.partial.is_empty() {
            let _ = writeln!(s, "\nProjects not in every run (not compared):");
            for (p, having) in &self.partial {
                let _ = writeln!(s, "  {p}: only in {}", having.join(", "));
            }
        }
        s.push('\n');
        if self.shared.is_empty() {
            let _ = writeln!(s, "No project is in every run: nothing to compare.");
            return s;
        }
        let ncols = 2 + 1 + 3 * (self.labels.len() - 1);
        let mut t = Table::new(ncols);
        let mut header = vec![
            "project".to_string(),
            "metric".to_string(),
            self.labels[0].clone(),
        ];
        for l in &self.labels[1..] {
            header.extend([l.clone(), "Δ".to_string(), "Δ%".to_string()]);
        }
        t.push(header);
        for row in &self.rows {
            let mut cells = vec![
                row.project.clone(),
                row.metric.clone(),
                human(row.values[0]),
            ];
            for i in 1..self.labels.len() {
                cells.extend([
                    human(row.values[i]),
                    signed(row.diff(i)),
                    percent(row.rel_diff(i)),
                ]);
            }
            t.push(cells);
        }
        let mut align = vec![Align::Left, Align::Left];
        align.resize(ncols, Align::Right);
        s.push_str(&t.render(&align));
        s
    }
}

fn csv_writer(path: &Path) -> io::Result<csv::Writer<std::fs::File>> {
    Ok(csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_path(path)?)
}

/// A float as in the run folder's CSVs: shortest round-trip digits with a `.0` on
/// whole values; empty when missing.
fn csv_float(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:?}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// Rows of cells printed in aligned columns, two spaces apart.
struct Table {
    rows: Vec<Vec<String>>,
    widths: Vec<usize>,
}

impl Table {
    fn new(ncols: usize) -> Self {
        Self {
            rows: Vec::new(),
            widths: vec![0; ncols],
        }
    }

    fn push(&mut self, cells: Vec<String>) {
        for (w, c) in self.widths.iter_mut().zip(&cells) {
            *w = (*w).max(c.chars().count());
        }
        self.rows.push(cells);
    }

    fn render(&self, align: &[Align]) -> String {
        let mut s = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, c) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = self.widths[i] - c.chars().count();
                match align[i] {
                    Align::Left => {
                        line.push_str(c);
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        line.extend(std::iter::repeat_n(' ', pad));
                        line.push_str(c);
                    }
                }
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
        s
    }
}

/// `1234567` as `1,234,567`.
fn group(int: u64) -> String {
    let digits = int.to_string();
    let head = match digits.len() % 3 {
        0 => 3.min(digits.len()),
        n => n,
    };
    let mut out = digits[..head].to_string();
    for chunk in digits.as_bytes()[head..].chunks(3) {
        out.push(',');
        out.push_str(std::str::from_utf8(chunk).expect("ASCII digits"));
    }
    out
}

/// A number for people: about four significant figures, whole numbers from 100,000
/// on, thousands separators (`1,234,567`, `16,833.3`, `81.5`, `2.346`), three
/// significant figures below 1 (`0.0258`), scientific notation for the very large
/// or very small (`3.60e13`, `3.55e-5`); `–` when missing.
pub(crate) fn human(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "–".to_string();
    };
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".to_string();
    }
    if !(1e-3..1e12).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = if a >= 1e5 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        (2 - a.log10().floor() as i32).max(0) as usize
    };
    let digits = format!("{a:.decimals$}");
    let (int, frac) = digits.split_once('.').unwrap_or((&digits, ""));
    let frac = frac.trim_end_matches('0');
    let int = group(int.parse().expect("digits"));
    let sign = if v < 0.0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// [`human`] with a sign: `+345,600`, `-0.5`, `0`.
pub(crate) fn signed(v: Option<f64>) -> String {
    match v {
        Some(x) if x > 0.0 => format!("+{}", human(Some(x))),
        _ => human(v),
    }
}

/// A fraction as a signed percentage with one decimal: `+12.3%`, `-0.5%`, `0%`,
/// `-<0.1%` for a change too small for one decimal; `–` when there is none.
pub(crate) fn percent(v: Option<f64>) -> String {
    let Some(f) = v else {
        return "–".to_string();
    };
    if f == 0.0 {
        return "0%".to_string();
    }
    let p = f * 100.0;
    let tenths = (p.abs() * 10.0).round() as u64;
    let sign = if p < 0.0 { '-' } else { '+' };
    if tenths == 0 {
        // A change too small for one decimal is still a change.
        return format!("{sign}<0.1%");
    }
    format!("{sign}{}.{}%", group(tenths / 10), tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load::ProjectSummary;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    #[test]
    fn numbers_for_people() {
        assert_eq!(human(None), "–");
        assert_eq!(human(Some(0.0)), "0");
        assert_eq!(human(Some(604800.0)), "604,800");
        assert_eq!(human(Some(1234567.0)), "1,234,567");
        assert_eq!(human(Some(16833.333333)), "16,833.3");
        assert_eq!(human(Some(-16833.04)), "-16,833");
        assert_eq!(human(Some(999.9999)), "1,000");
        assert_eq!(human(Some(4_401_446_200.2)), "4,401,446,200");
        assert_eq!(human(Some(666.8333)), "666.8");
        assert_eq!(human(Some(81.496)), "81.5");
        assert_eq!(human(Some(2.34567)), "2.346");
        assert_eq!(human(Some(1.5)), "1.5");
        assert_eq!(human(Some(0.025760549558390577)), "0.0258");
        assert_eq!(human(Some(0.5)), "0.5");
        assert_eq!(human(Some(3.551891061126552e-5)), "3.55e-5");
        assert_eq!(human(Some(3.6e13)), "3.60e13");
        assert_eq!(human(Some(-2.0)), "-2");
        assert_eq!(group(0), "0");
        assert_eq!(group(100), "100");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(123456), "123,456");
    }

    #[test]
    fn signed_differences_and_percentages() {
        assert_eq!(signed(Some(345600.0)), "+345,600");
        assert_eq!(signed(Some(-0.5)), "-0.5");
        assert_eq!(signed(Some(0.0)), "0");
        assert_eq!(signed(None), "–");
        assert_eq!(percent(Some(0.123)), "+12.3%");
        assert_eq!(percent(Some(-0.005)), "-0.5%");
        assert_eq!(percent(Some(0.0)), "0%");
        assert_eq!(percent(Some(-1.1e-4)), "-<0.1%");
        assert_eq!(percent(Some(12.345)), "+1,234.5%");
        assert_eq!(percent(None), "–");
    }

    type Metrics<'a> = &'a [(&'a str, Option<f64>)];

    fn run(label: &str, projects: &[(&str, Metrics)], db: &str) -> Run {
        let mut config = BTreeMap::new();
        config.insert(
            "project.main.workunit.delay_bound".to_string(),
            db.to_string(),
        );
        config.insert("simulation.seed".to_string(), "42".to_string());
        Run {
            label: label.to_string(),
            path: PathBuf::from("output").join(label),
            scenario: Some("quickstart".into()),
            seed: Some(42),
            overrides: vec![format!("project.main.workunit.delay_bound={db}")],
            config,
            metrics_file: "summary.csv",
            projects: projects
                .iter()
                .map(|(p, m)| ProjectSummary {
                    project: p.to_string(),
                    metrics: m.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn rows_cover_shared_projects_and_differences_are_against_the_first_run() {
        let a = run(
            "db3",
            &[
                (
                    "main",
                    &[("delay_bound_s", Some(259200.0)), ("miss", Some(0.2))],
                ),
                ("beta", &[("x", Some(1.0))]),
            ],
            "3d",
        );
        let b = run(
            "db7",
            &[(
                "main",
                &[
                    ("delay_bound_s", Some(604800.0)),
                    ("miss", Some(0.0)),
                    ("new", None),
                ],
            )],
            "7d",
        );
        let c = Comparison::new(&[a.clone(), b.clone()]);
        assert_eq!(c.shared, ["main"]);
        assert_eq!(c.partial, [("beta".to_string(), vec!["db3".to_string()])]);
        assert_eq!(c.rows.len(), 3);
        assert_eq!(c.rows[0].diff(1), Some(345600.0));
        assert_eq!(c.rows[0].diff(0), Some(0.0));
        assert!((c.rows[0].rel_diff(1).unwrap() - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(c.rows[1].rel_diff(1), Some(-1.0));
        assert_eq!(c.rows[2].values, [None, None]);
        assert_eq!(c.rows[2].diff(1), None);
        assert_eq!(c.config.len(), 1);
        assert_eq!(c.config[0].key, "project.main.workunit.delay_bound");

        let text = c.render(&[a, b]);
        assert!(
            text.contains("  project.main.workunit.delay_bound: 3d → 7d\n"),
            "{text}"
        );
        assert!(text.contains("  beta: only in db3\n"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("project")).unwrap();
        assert_eq!(
            &lines[header..],
            [
                "project  metric             db3      db7         Δ       Δ%",
                "main     delay_bound_s  259,200  604,800  +345,600  +133.3%",
                "main     miss               0.2        0      -0.2  -100.0%",
                "main     new                  –        –         –        –",
            ]
        );
    }

    #[test]
    fn relative_difference_from_zero_is_missing_unless_there_is_none() {
        let row = Row {
            project: "p".into(),
            metric: "m".into(),
            values: vec![Some(0.0), Some(0.0), Some(3.0), Some(-1.0)],
        };
        assert_eq!(row.rel_diff(1), Some(0.0));
        assert_eq!(row.rel_diff(2), None);
        let row = Row {
            values: vec![Some(-2.0), Some(-1.0)],
            ..row
        };
        // Against a negative reference the sign still says up or down.
        assert_eq!(row.rel_diff(1), Some(0.5));
    }
}
