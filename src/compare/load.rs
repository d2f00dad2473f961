//! Reading run folders: the headline metrics of each project and what made the run.
//!
//! Metrics come from `summary.csv` (one row per project, one numeric column per
//! metric, an empty field for a missing value), or, in folders written before it
//! existed, from the numeric leaves of `summary.json`'s `projects.<name>` objects.
//! The scenario name, seed, `--set` overrides and effective configuration come from
//! `manifest.json`, or from `summary.json` in folders without a manifest.

use super::CompareError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// File names read in a run folder.
pub(crate) const SUMMARY_CSV: &str = "summary.csv";
pub(crate) use crate::stats::apps::SUMMARY_APPS_CSV;
pub(crate) const SUMMARY_JSON: &str = "summary.json";
pub(crate) const MANIFEST_JSON: &str = "manifest.json";
/// The run's time series, for charts that overlay several runs.
pub const TIMESERIES_CSV: &str = "timeseries.csv";

/// One project's headline metrics in one run, in the file's column order.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectSummary {
    pub project: String,
    /// `(metric, value)`; `None` is a metric without data (an empty field).
    pub metrics: Vec<(String, Option<f64>)>,
}

impl ProjectSummary {
    /// The value of `metric`, if the run has the metric and a value for it.
    pub fn get(&self, metric: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(m, _)| m == metric)
            .and_then(|(_, v)| *v)
    }
}

/// A run folder, loaded.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its name in tables and in `compare.csv`: the `--label` given, else the folder
    /// name (the path as given when two runs have the same folder name).
    pub label: String,
    /// The folder, as given.
    pub path: PathBuf,
    /// `simulation.name` of the scenario, when recorded.
    pub scenario: Option<String>,
    pub seed: Option<u64>,
    /// The `--set` arguments of the run, in order (empty without a manifest).
    pub overrides: Vec<String>,
    /// The effective configuration flattened to key paths ([`super::config::flatten`]).
    pub config: BTreeMap<String, String>,
    /// The file the metrics were read from: `summary.csv` or `summary.json`.
    pub metrics_file: &'static str,
    /// One entry per project, in the file's order.
    pub projects: Vec<ProjectSummary>,
}

impl Run {
    /// The summary of `project`, if the run has it.
    pub fn project(&self, project: &str) -> Option<&ProjectSummary> {
        self.projects.iter().find(|p| p.project == project)
    }

    /// A file of the run folder, e.g. [`TIMESERIES_CSV`].
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

/// Loads every run folder in `paths`. `labels`, if not empty, names them (one per
/// run, in order; the command line checks the count).
pub fn load_runs(paths: &[PathBuf], labels: &[String]) -> Result<Vec<Run>, CompareError> {
    let mut runs = paths
        .iter()
        .map(|p| load_run(p))
        .collect::<Result<Vec<_>, _>>()?;
    if labels.is_empty() {
        disambiguate(&mut runs);
    } else {
        if labels.len() != runs.len() {
            return Err(CompareError::Input(format!(
                "{} --label for {} runs: give one per run, or none",
                labels.len(),
                runs.len()
            )));
        }
        for (r, l) in runs.iter_mut().zip(labels) {
            r.label = l.clone();
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = labels.iter().find(|l| !seen.insert(l.as_str())) {
            return Err(CompareError::Input(format!(
                "label `{dup}` is given twice: each run needs its own"
            )));
        }
    }
    Ok(runs)
}

/// Gives runs that share a folder name their path as given instead, and numbers
/// any that are still alike (the same folder given twice).
fn disambiguate(runs: &mut [Run]) {
    let count = |runs: &[Run], l: &str| runs.iter().filter(|r| r.label == l).count();
    let shared: Vec<bool> = runs.iter().map(|r| count(runs, &r.label) > 1).collect();
    for (r, s) in runs.iter_mut().zip(shared) {
        if s {
            r.label = r.path.display().to_string();
        }
    }
    for i in 0..runs.len() {
        let l = runs[i].label.clone();
        let before = runs[..i].iter().filter(|r| r.label == l).count();
        if before > 0 {
            runs[i].label = format!("{l}#{}", before + 1);
        }
    }
}

/// The folder name of `path` (`.` and `..` resolved), else the path as given.
fn folder_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::canonicalize(path)
                .ok()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| path.display().to_string())
}

/// Loads one run folder.
pub(crate) fn load_run(path: &Path) -> Result<Run, CompareError> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(CompareError::Input(format!(
                "{shown} is not a run folder: it is a file"
            )));
        }
        Err(e) => {
            return Err(CompareError::Input(format!(
                "{shown} is not a run folder: {}",
                io_reason(&e)
            )));
        }
    }
    let has = |name: &str| path.join(name).is_file();
    let (csv, json, manifest) = (has(SUMMARY_CSV), has(SUMMARY_JSON), has(MANIFEST_JSON));
    let missing = match (csv || json, manifest || json) {
        (true, true) => None,
        (false, false) => Some("no summary.csv, summary.json or manifest.json".to_string()),
        (false, true) => Some(format!(
            "{MANIFEST_JSON} but no summary.csv or summary.json"
        )),
        (true, false) => Some(format!("{SUMMARY_CSV} but no manifest.json")),
    };
    if let Some(what) = missing {
        return Err(CompareError::Input(format!(
            "{shown} is not a run folder of boinc-sim: it has {what} (a folder written by `boinc-sim run` has them)"
        )));
    }
    let summary = if json {
        Some(read_json(&path.join(SUMMARY_JSON))?)
    } else {
        None
    };
    let manifest = if manifest {
        Some(read_json(&path.join(MANIFEST_JSON))?)
    } else {
        None
    };
    // What made the run: the manifest, else the summary (which repeats it).
    let about = manifest
        .as_ref()
        .or(summary.as_ref())
        .expect("one of them exists");
    let scenario = about
        .get("scenario_name")
        .or_else(|| about.get("scenario"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let seed = about.get("seed").and_then(Value::as_u64);
    let overrides = about
        .get("overrides")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let config = about
        .get("effective_config")
        .map(super::config::flatten)
        .unwrap_or_default();
    let (metrics_file, projects) = if csv {
        let mut projects = read_summary_csv(&path.join(SUMMARY_CSV))?;
        // The apps of projects with several, after the projects (older folders
        // have no summary_apps.csv).
        let apps = path.join(SUMMARY_APPS_CSV);
        if apps.is_file() {
            let text = std::fs::read_to_string(&apps).map_err(|e| {
                CompareError::Input(format!("cannot read {}: {}", apps.display(), io_reason(&e)))
            })?;
            projects.extend(parse_summary_apps_csv(&text, &apps.display().to_string())?);
        }
        (SUMMARY_CSV, projects)
    } else {
        let summary = summary.as_ref().expect("checked above");
        (SUMMARY_JSON, projects_of_summary_json(summary))
    };
    Ok(Run {
        label: folder_name(path),
        path: path.to_path_buf(),
        scenario,
        seed,
        overrides,
        config,
        metrics_file,
        projects,
    })
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such folder".to_string(),
        _ => e.to_string(),
    }
}

fn read_json(path: &Path) -> Result<Value, CompareError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CompareError::Input(format!("cannot read {}: {}", path.display(), io_reason(&e)))
    })?;
    serde_json::from_str(&text)
        .map_err(|e| CompareError::Input(format!("{}: not valid JSON: {e}", path.display())))
}

/// Parses `summary.csv`: a `project` column, then metric columns. Empty fields are
/// missing values. A column with a non-empty field that is not a number is not a
/// metric and is left out (the column set is open-ended).
pub(crate) fn parse_summary_csv(
    text: &str,
    origin: &str,
) -> Result<Vec<ProjectSummary>, CompareError> {
    Ok(parse_keyed_csv(text, origin, &[])?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// Parses `summary_apps.csv` and keeps the apps of projects with several, each
/// named `project/app` (`main/search`): a one-app project's app row repeats its
/// `summary.csv` row.
pub(crate) fn parse_summary_apps_csv(
    text: &str,
    origin: &str,
) -> Result<Vec<ProjectSummary>, CompareError> {
    let rows = parse_keyed_csv(text, origin, &["app", "app_id"])?;
    let projects: Vec<&str> = rows.iter().map(|(project, _)| project.as_str()).collect();
    let shown = crate::stats::apps::shown_beside_projects(&projects);
    Ok(rows
        .into_iter()
        .zip(shown)
        .filter(|(_, s)| *s)
        .map(|((_, row), _)| row)
        .collect())
}

/// Rows keyed by the `project` column, named by it or, with `keys`, by the app
/// label of it and the first key ([`crate::stats::apps::label`]; the other keys are
/// dropped, not metrics); each with its project.
fn parse_keyed_csv(
    text: &str,
    origin: &str,
    keys: &[&str],
) -> Result<Vec<(String, ProjectSummary)>, CompareError> {
    let bad = |msg: String| CompareError::Input(format!("{origin}: {msg}"));
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read the header: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let Some(pi) = column("project") else {
        return Err(bad("no `project` column".to_string()));
    };
    let mut key_columns = vec![pi];
    for k in keys {
        key_columns.push(column(k).ok_or_else(|| bad(format!("no `{k}` column")))?);
    }
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| bad(format!("line {}: {e}", i + 2)))?;
        let fields: Vec<String> = rec.iter().map(|f| f.trim().to_string()).collect();
        let name = match key_columns.get(1) {
            Some(&a) => crate::stats::apps::label(&fields[pi], &fields[a]),
            None => fields[pi].clone(),
        };
        rows.push((name, fields));
    }
    let numeric: Vec<bool> = (0..header.len())
        .map(|c| {
            !key_columns.contains(&c)
                && rows
                    .iter()
                    .all(|(_, f)| f[c].is_empty() || f[c].parse::<f64>().is_ok())
        })
        .collect();
    Ok(rows
        .into_iter()
        .map(|(name, fields)| {
            let row = ProjectSummary {
                project: name,
                metrics: (0..header.len())
                    .filter(|&c| numeric[c])
                    .map(|c| (header[c].clone(), fields[c].parse::<f64>().ok()))
                    .collect(),
            };
            (fields[pi].clone(), row)
        })
        .collect())
}

fn read_summary_csv(path: &Path) -> Result<Vec<ProjectSummary>, CompareError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CompareError::Input(format!("cannot read {}: {}", path.display(), io_reason(&e)))
    })?;
    parse_summary_csv(&text, &path.display().to_string())
}

/// The projects of a `summary.json`: each `projects.<name>` object's numeric leaves,
/// flattened to dotted names (`results_by_outcome.success`), in key order. When the
/// object has a `headline` object (the values of `summary.csv`), only those.
pub(crate) fn projects_of_summary_json(summary: &Value) -> Vec<ProjectSummary> {
    let Some(projects) = summary.get("projects").and_then(Value::as_object) else {
        return Vec::new();
    };
    projects
        .iter()
        .map(|(name, v)| {
            let source = v.get("headline").filter(|h| h.is_object()).unwrap_or(v);
            let mut metrics = Vec::new();
            numeric_leaves(source, "", &mut metrics);
            ProjectSummary {
                project: name.clone(),
                metrics,
            }
        })
        .collect()
}

fn numeric_leaves(v: &Value, prefix: &str, out: &mut Vec<(String, Option<f64>)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                numeric_leaves(x, &key(k), out);
            }
        }
        Value::Number(n) if !prefix.is_empty() => out.push((prefix.to_string(), n.as_f64())),
        // A JSON null under a project is a figure without data.
        Value::Null if !prefix.is_empty() => out.push((prefix.to_string(), None)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_csv_keeps_numeric_columns_in_order_and_empty_fields_as_missing() {
        let text = "project,delay_bound_s,policy,deadline_miss_frac,turnaround_p50_s\n\
                    main,259200.0,fifo,0.25,\n\
                    beta,604800.0,,,1e3\n";
        let p = parse_summary_csv(text, "x/summary.csv").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].project, "main");
        assert_eq!(
            p[0].metrics,
            vec![
                ("delay_bound_s".to_string(), Some(259200.0)),
                ("deadline_miss_frac".to_string(), Some(0.25)),
                ("turnaround_p50_s".to_string(), None),
            ]
        );
        assert_eq!(p[1].get("turnaround_p50_s"), Some(1000.0));
        assert_eq!(p[1].get("deadline_miss_frac"), None);
        assert_eq!(p[1].get("policy"), None);
    }

    #[test]
    fn summary_csv_without_a_project_column_is_refused() {
        let e = parse_summary_csv("name,x\nmain,1\n", "r/summary.csv").unwrap_err();
        assert_eq!(e.to_string(), "r/summary.csv: no `project` column");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn summary_json_projects_flatten_to_numeric_leaves() {
        let v = serde_json::json!({
            "projects": {
                "main": {
                    "workunits": 10,
                    "granted_credit_total": 2.5,
                    "results_by_outcome": {"success": 7, "no_reply": 1},
                    "note": "text is not a metric",
                },
                "beta": {"headline": {"delay_bound_s": 86400.0, "x": null}, "workunits": 3},
            }
        });
        let p = projects_of_summary_json(&v);
        assert_eq!(p[0].project, "beta");
        assert_eq!(
            p[0].metrics,
            vec![
                ("delay_bound_s".to_string(), Some(86400.0)),
                ("x".to_string(), None)
            ]
        );
        let names: Vec<&str> = p[1].metrics.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "granted_credit_total",
                "results_by_outcome.no_reply",
                "results_by_outcome.success",
                "workunits"
            ]
        );
    }
}
