//! Reads what the charts need from a run folder (`docs/outputs.md`): `manifest.json`,
//! `timeseries.csv`, `histograms.csv`, `hosts.csv`, `summary.csv` and, for run
//! folders without a `summary.csv`, `summary.json`.
//!
//! Every file but the folder itself is optional: a run folder from an older
//! boinc-sim, or one missing a file, still gets every chart, with a "no data" note
//! where its figures are missing. A file that is present but malformed is an error
//! (bad input): a chart silently drawn from half a file would mislead.
//! `results.csv` and `transitions.csv`, by far the largest files, are never read:
//! the time series and histograms were tallied from the same rows.

use super::PlotError;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One bin of `histograms.csv`: `[lower, upper)`, `None` for an unbounded side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub count: f64,
}

/// `summary.csv` as written: its header and its rows, as text, in file order.
#[derive(Clone, Debug, Default)]
pub struct SummaryTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Everything the charts and the report read from a run folder.
#[derive(Debug, Default)]
pub struct RunData {
    pub dir: PathBuf,
    /// `manifest.json`, when present.
    pub manifest: Option<Value>,
    /// `summary.json`, when present.
    pub summary_json: Option<Value>,
    /// Scenario name: manifest, else summary.json, else the folder's name.
    pub scenario: String,
    /// Simulated length of the run, s.
    pub duration_s: i64,
    /// Length of a `timeseries.csv` bucket, s (`[output] interval`).
    pub interval_s: i64,
    /// Project names, sorted (the order of the colours).
    pub projects: Vec<String>,
    /// `timeseries.csv`: (project, metric) → (bucket start, value) in file order.
    pub series: BTreeMap<(String, String), Vec<(i64, f64)>>,
    /// `histograms.csv`: (project, metric) → bins in file order.
    pub histograms: BTreeMap<(String, String), Vec<Bin>>,
    /// `hosts.csv`: project → each host's `<project>_credit`, `None` when the host
    /// is not attached (empty field). Empty when the file is missing.
    pub host_credit: BTreeMap<String, Vec<Option<f64>>>,
    /// Number of rows of `hosts.csv` (0 when missing).
    pub hosts: usize,
    /// `summary.csv`, when present.
    pub summary: Option<SummaryTable>,
    /// `summary_apps.csv`, when present (folders from before it have none).
    pub summary_apps: Option<SummaryTable>,
    /// Files the charts would have used but that are not in the folder.
    pub missing_files: Vec<&'static str>,
    /// `credit_versions.csv`, in file order (empty when missing).
    pub credit_versions: Vec<CreditVersionRow>,
    /// `batch_progress.csv`: (project, batch) → (hours since submission, fraction
    /// of its jobs valid) in file order. Empty in a run without batches.
    pub batch_progress: BTreeMap<(String, u32), Vec<(f64, f64)>>,
}

/// One row of `credit_versions.csv` (what the credit chart draws).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CreditVersionRow {
    pub project: String,
    pub time_s: i64,
    pub app_id: String,
    pub app_version_id: String,
    pub device: String,
    pub credit_per_gflop: Option<f64>,
    pub neutrality_ratio: Option<f64>,
}

pub(crate) const MANIFEST_JSON: &str = "manifest.json";
pub(crate) const SUMMARY_JSON: &str = "summary.json";
pub(crate) const SUMMARY_CSV: &str = "summary.csv";

/// A CSV file of the folder as text cells, `None` when it is missing.
fn read_table(dir: &Path, name: &'static str) -> Result<Option<SummaryTable>, PlotError> {
    let Some(mut csv) = Csv::open(dir, name)? else {
        return Ok(None);
    };
    let columns: Vec<String> = csv.header.iter().map(String::from).collect();
    let mut rows = Vec::new();
    csv.rows(|r, _| {
        rows.push(r.iter().map(String::from).collect());
        Ok(())
    })?;
    Ok(Some(SummaryTable { columns, rows }))
}
pub(crate) const TIMESERIES_CSV: &str = "timeseries.csv";
pub(crate) const HISTOGRAMS_CSV: &str = "histograms.csv";
pub(crate) const HOSTS_CSV: &str = "hosts.csv";

fn bad(path: &Path, msg: impl std::fmt::Display) -> PlotError {
    PlotError::BadInput(format!("{}: {msg}", path.display()))
}

/// Reads a JSON file if it exists.
fn read_json(path: &Path) -> Result<Option<Value>, PlotError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| bad(path, format!("not valid JSON: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(bad(path, format!("cannot read: {e}"))),
    }
}

/// A CSV file being read: its header, to find columns by name.
struct Csv {
    path: PathBuf,
    reader: csv::Reader<std::fs::File>,
    header: csv::StringRecord,
}

impl Csv {
    /// Opens `dir/name`; `None` if it does not exist.
    fn open(dir: &Path, name: &str) -> Result<Option<Csv>, PlotError> {
        let path = dir.join(name);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(bad(&path, format!("cannot read: {e}"))),
        };
        let mut reader = csv::ReaderBuilder::new().from_reader(file);
        let header = reader
            .headers()
            .map_err(|e| bad(&path, format!("not a CSV file: {e}")))?
            .clone();
        Ok(Some(Csv {
            path,
            reader,
            header,
        }))
    }

    /// Index of a column that must be there.
    fn column(&self, name: &str) -> Result<usize, PlotError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| bad(&self.path, format!("no column `{name}`")))
    }

    /// Calls `f` on every row, with the row's line number for error messages.
    fn rows(
        &mut self,
        mut f: impl FnMut(&csv::StringRecord, u64) -> Result<(), FieldError>,
    ) -> Result<(), PlotError> {
        let mut record = csv::StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {
                    let line = record.position().map_or(0, |p| p.line());
                    f(&record, line).map_err(|m| bad(&self.path, format!("line {line}: {m}")))?;
                }
                Err(e) => return Err(bad(&self.path, e)),
            }
        }
    }
}

/// A field of a CSV row that is not what the chart needs; the file and line are
/// added by [`Csv::rows`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum FieldError {
    #[error("`{name}` is not a number: `{value}`")]
    NotANumber { name: String, value: String },
    #[error("`{0}` is empty")]
    Empty(String),
}

/// Parses a float field; `None` for an empty field.
fn opt_f64(record: &csv::StringRecord, i: usize, name: &str) -> Result<Option<f64>, FieldError> {
    let s = record.get(i).unwrap_or("").trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse::<f64>()
        .map(Some)
        .map_err(|_| FieldError::NotANumber {
            name: name.to_string(),
            value: s.to_string(),
        })
}

fn req_f64(record: &csv::StringRecord, i: usize, name: &str) -> Result<f64, FieldError> {
    opt_f64(record, i, name)?.ok_or_else(|| FieldError::Empty(name.to_string()))
}

/// A duration as `manifest.json` writes it: whole seconds, or a string with a unit
/// (`"7d"`, `"1h"`), as the scenario accepts.
pub(crate) fn json_duration(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => crate::base::units::parse_duration(s).ok(),
        _ => None,
    }
}

impl RunData {
    /// Reads the run folder `dir`. Errors: the folder is missing or is not a run
    /// folder (neither `manifest.json` nor `timeseries.csv`), or a file in it is
    /// malformed.
    pub fn load(dir: &Path) -> Result<RunData, PlotError> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(PlotError::BadInput(format!(
                    "{} is not a folder (expected a run folder such as output/quickstart)",
                    dir.display()
                )));
            }
            Err(e) => {
                return Err(PlotError::BadInput(format!(
                    "cannot open the run folder {}: {e}",
                    dir.display()
                )));
            }
        }
        if !dir.join(MANIFEST_JSON).exists() && !dir.join(TIMESERIES_CSV).exists() {
            return Err(PlotError::BadInput(format!(
                "{} is not a boinc-sim run folder: it has neither {MANIFEST_JSON} nor {TIMESERIES_CSV}",
                dir.display()
            )));
        }
        let mut d = RunData {
            dir: dir.to_path_buf(),
            manifest: read_json(&dir.join(MANIFEST_JSON))?,
            summary_json: read_json(&dir.join(SUMMARY_JSON))?,
            ..RunData::default()
        };
        if d.manifest.is_none() {
            d.missing_files.push(MANIFEST_JSON);
        }
        d.read_timeseries()?;
        d.read_histograms()?;
        d.read_summary_csv()?;
        d.collect_projects();
        d.read_hosts()?;
        d.read_credit_versions()?;
        d.read_batch_progress()?;
        d.scenario = d
            .manifest_str("scenario_name")
            .or_else(|| {
                d.summary_json
                    .as_ref()?
                    .get("scenario")?
                    .as_str()
                    .map(String::from)
            })
            .or_else(|| Some(dir.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "run".into());
        d.interval_s = d.find_interval();
        d.duration_s = d.find_duration();
        Ok(d)
    }

    /// A string field of `manifest.json`.
    pub(crate) fn manifest_str(&self, key: &str) -> Option<String> {
        let v = self.manifest.as_ref()?.get(key)?;
        Some(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// `manifest.json` `effective_config`, when present.
    pub fn effective_config(&self) -> Option<&Value> {
        self.manifest.as_ref()?.get("effective_config")
    }

    /// Reads `batch_progress.csv` if present (a run with batches).
    fn read_batch_progress(&mut self) -> Result<(), PlotError> {
        let name = crate::stats::batches::BATCH_PROGRESS_CSV;
        let Some(mut csv) = Csv::open(&self.dir, name)? else {
            return Ok(());
        };
        let c: Vec<usize> = ["project", "batch", "since_submit_s", "fraction_valid"]
            .iter()
            .map(|n| csv.column(n))
            .collect::<Result<_, _>>()?;
        let out = &mut self.batch_progress;
        csv.rows(|r, _| {
            let project = r.get(c[0]).unwrap_or("").to_string();
            let batch = req_f64(r, c[1], "batch")? as u32;
            let since = req_f64(r, c[2], "since_submit_s")?;
            let frac = req_f64(r, c[3], "fraction_valid")?;
            (out.entry((project, batch)).or_default()).push((since / 3600.0, frac));
            Ok(())
        })
    }

    /// Reads `credit_versions.csv` if present (a run folder or a replay's folder).
    pub(crate) fn read_credit_versions(&mut self) -> Result<(), PlotError> {
        let Some(mut csv) = Csv::open(&self.dir, crate::stats::credit::VERSIONS_CSV)? else {
            return Ok(());
        };
        let c: Vec<usize> = [
            "project",
            "time_s",
            "app_id",
            "app_version_id",
            "device",
            "credit_per_gflop",
            "neutrality_ratio",
        ]
        .iter()
        .map(|n| csv.column(n))
        .collect::<Result<_, _>>()?;
        let out = &mut self.credit_versions;
        csv.rows(|r, _| {
            let text = |i: usize| r.get(c[i]).unwrap_or("").to_string();
            out.push(CreditVersionRow {
                project: text(0),
                time_s: req_f64(r, c[1], "time_s")? as i64,
                app_id: text(2),
                app_version_id: text(3),
                device: text(4),
                credit_per_gflop: opt_f64(r, c[5], "credit_per_gflop")?,
                neutrality_ratio: opt_f64(r, c[6], "neutrality_ratio")?,
            });
            Ok(())
        })
    }

    fn read_timeseries(&mut self) -> Result<(), PlotError> {
        let Some(mut csv) = Csv::open(&self.dir, TIMESERIES_CSV)? else {
            self.missing_files.push(TIMESERIES_CSV);
            return Ok(());
        };
        let (it, ip, im, iv) = (
            csv.column("time_s")?,
            csv.column("project")?,
            csv.column("metric")?,
            csv.column("value")?,
        );
        let series = &mut self.series;
        csv.rows(|r, _| {
            let t = req_f64(r, it, "time_s")? as i64;
            // An empty value has no value (a link without a capacity has no
            // utilisation): the series skips the bucket.
            let Some(v) = opt_f64(r, iv, "value")? else {
                return Ok(());
            };
            let key = (
                r.get(ip).unwrap_or("").to_string(),
                r.get(im).unwrap_or("").to_string(),
            );
            series.entry(key).or_default().push((t, v));
            Ok(())
        })
    }

    fn read_histograms(&mut self) -> Result<(), PlotError> {
        let Some(mut csv) = Csv::open(&self.dir, HISTOGRAMS_CSV)? else {
            self.missing_files.push(HISTOGRAMS_CSV);
            return Ok(());
        };
        let (ip, im, il, iu, ic) = (
            csv.column("project")?,
            csv.column("metric")?,
            csv.column("bin_lower")?,
            csv.column("bin_upper")?,
            csv.column("count")?,
        );
        let hist = &mut self.histograms;
        csv.rows(|r, _| {
            let bin = Bin {
                lower: opt_f64(r, il, "bin_lower")?,
                upper: opt_f64(r, iu, "bin_upper")?,
                count: req_f64(r, ic, "count")?,
            };
            let key = (
                r.get(ip).unwrap_or("").to_string(),
                r.get(im).unwrap_or("").to_string(),
            );
            hist.entry(key).or_default().push(bin);
            Ok(())
        })
    }

    fn read_summary_csv(&mut self) -> Result<(), PlotError> {
        self.summary = read_table(&self.dir, SUMMARY_CSV)?;
        if self.summary.is_none() {
            self.missing_files.push(SUMMARY_CSV);
        }
        self.summary_apps = read_table(&self.dir, crate::stats::apps::SUMMARY_APPS_CSV)?;
        Ok(())
    }

    /// Projects named anywhere: the configuration, the time series, histograms and
    /// summary. Sorted, like `hosts.csv` orders its per-project columns.
    fn collect_projects(&mut self) {
        let mut set = BTreeSet::new();
        if let Some(Value::Object(p)) = self.effective_config().and_then(|c| c.get("project")) {
            set.extend(p.keys().cloned());
        }
        set.extend(self.series.keys().map(|(p, _)| p.clone()));
        set.extend(self.histograms.keys().map(|(p, _)| p.clone()));
        if let Some(s) = &self.summary
            && let Some(i) = s.columns.iter().position(|c| c == "project")
        {
            set.extend(s.rows.iter().filter_map(|r| r.get(i).cloned()));
        }
        self.projects = set.into_iter().collect();
    }

    fn read_hosts(&mut self) -> Result<(), PlotError> {
        let Some(mut csv) = Csv::open(&self.dir, HOSTS_CSV)? else {
            self.missing_files.push(HOSTS_CSV);
            return Ok(());
        };
        let cols: Vec<(String, usize)> = self
            .projects
            .iter()
            .filter_map(|p| {
                let name = format!("{p}_credit");
                csv.header
                    .iter()
                    .position(|h| h == name)
                    .map(|i| (p.clone(), i))
            })
            .collect();
        let mut credit: Vec<Vec<Option<f64>>> = vec![Vec::new(); cols.len()];
        let mut n = 0;
        csv.rows(|r, _| {
            n += 1;
            for ((p, i), v) in cols.iter().zip(credit.iter_mut()) {
                v.push(opt_f64(r, *i, &format!("{p}_credit"))?);
            }
            Ok(())
        })?;
        self.hosts = n;
        self.host_credit = cols.into_iter().map(|(p, _)| p).zip(credit).collect();
        Ok(())
    }

    /// `[output] interval` from the manifest, else the smallest step between bucket
    /// times, else the default hour.
    fn find_interval(&self) -> i64 {
        if let Some(s) = self
            .effective_config()
            .and_then(|c| c.get("output")?.get("interval"))
            .and_then(json_duration)
            .filter(|s| *s > 0)
        {
            return s;
        }
        let mut times: Vec<i64> = self
            .series
            .values()
            .flat_map(|v| v.iter().map(|(t, _)| *t))
            .collect();
        times.sort_unstable();
        times.dedup();
        times
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0)
            .min()
            .unwrap_or(3600)
    }

    /// The run's length from the manifest, else `summary.json`, else the last bucket.
    fn find_duration(&self) -> i64 {
        let from_json = |v: &Option<Value>| v.as_ref()?.get("duration_s")?.as_i64();
        from_json(&self.manifest)
            .or_else(|| from_json(&self.summary_json))
            .or_else(|| {
                let last = self.series.values().flat_map(|v| v.last()).map(|(t, _)| *t);
                last.max()
            })
            .unwrap_or(0)
            .max(0)
    }

    /// A time series, if the run has it.
    pub fn series(&self, project: &str, metric: &str) -> Option<&[(i64, f64)]> {
        self.series
            .get(&(project.to_string(), metric.to_string()))
            .map(Vec::as_slice)
    }

    /// Whether any project has `metric` in `timeseries.csv`.
    pub fn has_metric(&self, metric: &str) -> bool {
        self.projects
            .iter()
            .any(|p| self.series(p, metric).is_some())
    }

    /// The outages of `project` and the time it took to recover from each, from
    /// `summary.json` (its `outages`, written for a project with a web server, spec
    /// backend §2.4.0; docs/outputs.md, "Time to recover"). Empty without them, or
    /// when the list is not of that form: they only mark the charts.
    pub fn outages(&self, project: &str) -> Vec<crate::stats::recovery::Recovery> {
        (self.summary_json.as_ref())
            .and_then(|s| s.get("projects")?.get(project)?.get("outages"))
            .and_then(|o| serde_json::from_value(o.clone()).ok())
            .unwrap_or_default()
    }

    /// A histogram, if the run has it.
    pub fn histogram(&self, project: &str, metric: &str) -> Option<&[Bin]> {
        self.histograms
            .get(&(project.to_string(), metric.to_string()))
            .map(Vec::as_slice)
    }

    /// A numeric cell of `summary.csv` for `project`.
    pub(crate) fn summary_value(&self, project: &str, column: &str) -> Option<f64> {
        let s = self.summary.as_ref()?;
        let ip = s.columns.iter().position(|c| c == "project")?;
        let ic = s.columns.iter().position(|c| c == column)?;
        let row = s
            .rows
            .iter()
            .find(|r| r.get(ip).map(String::as_str) == Some(project))?;
        row.get(ic)?.trim().parse().ok()
    }

    /// The project's `delay_bound` in seconds: `summary.csv` `delay_bound_s`, else
    /// the effective configuration's `project.<name>.workunit.delay_bound`. None for
    /// a project with several apps whose delay bounds differ (`summary.csv` leaves
    /// the cell empty, and the project-level template is not theirs).
    pub fn delay_bound_s(&self, project: &str) -> Option<f64> {
        self.summary_value(project, "delay_bound_s").or_else(|| {
            let p = self.effective_config()?.get("project")?.get(project)?;
            if p.get("app").is_some_and(|a| a.is_array()) {
                return None;
            }
            p.get("workunit")?
                .get("delay_bound")
                .and_then(json_duration)
                .map(|s| s as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_missing_folder_or_a_folder_that_is_no_run_is_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let e = RunData::load(&tmp.path().join("nope")).unwrap_err();
        assert!(matches!(e, PlotError::BadInput(_)), "{e}");
        assert!(e.to_string().contains("cannot open the run folder"), "{e}");
        let e = RunData::load(tmp.path()).unwrap_err();
        assert!(e.to_string().contains("not a boinc-sim run folder"), "{e}");
    }

    #[test]
    fn reads_a_minimal_folder_and_infers_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join(TIMESERIES_CSV),
            "time_s,project,metric,value\n0,a,results_reported,1.0\n600,a,results_reported,2.0\n1200,a,results_reported,3.0\n",
        )
        .unwrap();
        fs::write(
            tmp.path().join(HISTOGRAMS_CSV),
            "project,metric,bin_lower,bin_upper,count\na,result_turnaround_s,,0.0,1\na,result_turnaround_s,0.0,60.0,5\n",
        )
        .unwrap();
        let d = RunData::load(tmp.path()).unwrap();
        assert_eq!(d.projects, ["a"]);
        assert_eq!(d.interval_s, 600);
        assert_eq!(d.duration_s, 1200);
        assert_eq!(d.series("a", "results_reported").unwrap().len(), 3);
        assert_eq!(
            d.histogram("a", "result_turnaround_s").unwrap()[0],
            Bin {
                lower: None,
                upper: Some(0.0),
                count: 1.0
            }
        );
        assert!(d.missing_files.contains(&MANIFEST_JSON));
        assert!(d.missing_files.contains(&HOSTS_CSV));
        assert_eq!(d.delay_bound_s("a"), None);
    }

    #[test]
    fn an_empty_value_is_a_bucket_without_a_value() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join(TIMESERIES_CSV),
            "time_s,project,metric,value\n0,a,link_util_down,0.5\n0,a,link_util_up,\n3600,a,link_util_down,\n",
        )
        .unwrap();
        let d = RunData::load(tmp.path()).unwrap();
        assert_eq!(d.series("a", "link_util_down").unwrap(), [(0, 0.5)]);
        assert_eq!(d.series("a", "link_util_up"), None);
    }

    #[test]
    fn a_malformed_file_names_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join(TIMESERIES_CSV),
            "time_s,project,metric,value\n0,a,x,1.0\n3600,a,x,lots\n",
        )
        .unwrap();
        let e = RunData::load(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("timeseries.csv: line 3"), "{e}");
        assert!(e.contains("`value` is not a number"), "{e}");

        fs::write(tmp.path().join(TIMESERIES_CSV), "time,project\n").unwrap();
        let e = RunData::load(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("no column `time_s`"), "{e}");

        fs::write(tmp.path().join(MANIFEST_JSON), "{ not json").unwrap();
        let e = RunData::load(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("manifest.json: not valid JSON"), "{e}");
    }

    #[test]
    fn manifest_and_summary_supply_interval_duration_and_delay_bound() {
        let tmp = tempfile::tempdir().unwrap();
        let manifest = serde_json::json!({
            "scenario_name": "demo",
            "duration_s": 172800,
            "effective_config": {
                "output": {"interval": "2h"},
                "project": {
                    "p": {"workunit": {"delay_bound": "3d"}},
                    "q": {"workunit": {"delay_bound": 7200}},
                    "r": {"workunit": {"delay_bound": 7200}, "app": [{"name": "a"}, {"name": "b"}]},
                },
            },
        });
        fs::write(tmp.path().join(MANIFEST_JSON), manifest.to_string()).unwrap();
        fs::write(
            tmp.path().join(SUMMARY_CSV),
            "project,delay_bound_s,results_reported\nq,3600,12\n",
        )
        .unwrap();
        fs::write(
            tmp.path().join(HOSTS_CSV),
            "host,p_credit,q_credit,q_share\n0,1.5,,100.0\n1,,2.0,100.0\n",
        )
        .unwrap();
        let d = RunData::load(tmp.path()).unwrap();
        assert_eq!(d.scenario, "demo");
        assert_eq!((d.interval_s, d.duration_s), (7200, 172800));
        assert_eq!(d.projects, ["p", "q", "r"]);
        assert_eq!(d.delay_bound_s("p"), Some(259200.0));
        // Several apps: their own delay bounds, not the project-level default.
        assert_eq!(d.delay_bound_s("r"), None);
        // summary.csv wins over the configuration.
        assert_eq!(d.delay_bound_s("q"), Some(3600.0));
        assert_eq!(d.summary_value("q", "results_reported"), Some(12.0));
        assert_eq!(d.hosts, 2);
        assert_eq!(d.host_credit["p"], [Some(1.5), None]);
        assert_eq!(d.host_credit["q"], [None, Some(2.0)]);
    }
}
