//! The job log: one row per result, the input of `boinc-sim credit` and what
//! `boinc-sim run --job-log` writes (columns in `docs/credit.md`), and the two files
//! such a run writes beside it for the replay: each project's validator settings
//! ([`ReplayConfig`], `credit-<project>.toml`) and hosts
//! (`credit-hosts-<project>.csv`), [`write_run_configs`].
//!
//! Reading is strict: a missing required column, or a field that is not what its
//! column expects, is a [`LogError`] naming the file, the line, the column and what
//! was expected (exit 2). Optional columns may be absent or have empty fields.

use crate::base::units::Duration;
use crate::scenario::ScenarioFile;
use crate::scenario::schema::{
    AppConfig, BackendSection, ValidatorConfig, WuTemplate, one_or_more_apps, serialize_apps,
};
use crate::server::Project;
use crate::server::job_log::DecidedResult;
use crate::server::types::{Outcome, ValidateState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// File name of the job log in a run folder.
pub(crate) const JOBS_CSV: &str = "jobs.csv";

/// Columns of the job log, in the order `boinc-sim run --job-log` writes them.
pub const COLUMNS: &[&str] = &[
    "project",
    "result_id",
    "workunit_id",
    "app_id",
    "app_version_id",
    "device",
    "host_id",
    "elapsed_time_s",
    "cpu_time_s",
    "flops_estimate_flops",
    "rsc_fpops_est_flops",
    "rsc_fpops_bound_flops",
    "true_flops",
    "min_quorum",
    "sent_time_s",
    "received_time_s",
    "validate_time_s",
    "outcome",
    "output",
    "runtime_outlier",
    "claimed_credit",
    "granted_credit",
];

/// A job log that cannot be read: the message is meant to be printed as is.
#[derive(Debug, Clone, PartialEq)]
pub struct LogError(pub String);

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a result's report said (the log's `outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogOutcome {
    /// Reported with an output (BOINC `SUCCESS`).
    Success,
    /// Reported with an output the validator could not read (`VALIDATE_ERROR`).
    ValidateError,
    /// Reported as failed (`CLIENT_ERROR`).
    ClientError,
    /// Never reported (`NO_REPLY`).
    NoReply,
}

impl LogOutcome {
    const NAMES: &'static str = "success, validate_error, client_error or no_reply";

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "success" | "1" => Self::Success,
            "validate_error" | "6" => Self::ValidateError,
            "client_error" | "3" => Self::ClientError,
            "no_reply" | "4" => Self::NoReply,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::ValidateError => "validate_error",
            Self::ClientError => "client_error",
            Self::NoReply => "no_reply",
        }
    }
}

/// One row of a job log.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// Line of the row in its file (1 = the header), for messages.
    pub line: u64,
    pub project: Option<String>,
    pub result_id: u64,
    pub workunit_id: u64,
    pub app_id: u32,
    /// The app version id, or the id given to the row's `plan_class` (see
    /// [`read`]).
    pub app_version_id: u32,
    pub is_gpu: bool,
    pub host_id: u64,
    pub elapsed_time: f64,
    pub cpu_time: f64,
    pub flops_estimate: f64,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    pub true_flops: Option<f64>,
    pub min_quorum: Option<i32>,
    pub sent_time: i64,
    pub received_time: i64,
    pub validate_time: Option<i64>,
    pub outcome: LogOutcome,
    pub output: f64,
    pub runtime_outlier: bool,
    pub claimed_credit: Option<f64>,
    pub granted_credit: Option<f64>,
}

/// The largest app id a job log may give: the replay keeps one app per id up to the
/// largest (`credit::replay`), as BOINC numbers its apps from 1.
pub(crate) const MAX_APP_ID: u32 = 10_000;

/// Writes the job log's header.
pub fn write_header<W: Write>(w: &mut csv::Writer<W>) -> io::Result<()> {
    Ok(w.write_record(COLUMNS)?)
}

/// Shortest round-trip digits, a whole value keeping its `.0` (as every table of a
/// run folder, `stats::output`).
fn float(v: f64) -> String {
    format!("{v:?}")
}

/// Writes one decided result of `project`.
pub fn write_row<W: Write>(
    w: &mut csv::Writer<W>,
    project: &str,
    r: &DecidedResult,
) -> io::Result<()> {
    let outcome = if r.outcome == Outcome::ValidateError {
        LogOutcome::ValidateError
    } else {
        LogOutcome::Success
    };
    let row = [
        project.to_string(),
        r.result_id.to_string(),
        r.workunit_id.to_string(),
        r.app_id.to_string(),
        r.app_version_id.to_string(),
        device_name(r.is_gpu).to_string(),
        r.host_id.to_string(),
        float(r.elapsed_time),
        float(r.cpu_time),
        float(r.flops_estimate),
        float(r.rsc_fpops_est),
        float(r.rsc_fpops_bound),
        float(r.true_flops),
        r.min_quorum.to_string(),
        r.sent_time.to_string(),
        r.received_time.to_string(),
        r.validate_time.to_string(),
        outcome.name().to_string(),
        float(r.output),
        u8::from(r.runtime_outlier).to_string(),
        float(r.claimed_credit),
        float(if r.validate_state == ValidateState::Valid {
            r.granted_credit
        } else {
            0.0
        }),
    ];
    Ok(w.write_record(&row)?)
}

/// `cpu` or `gpu`.
pub(crate) fn device_name(is_gpu: bool) -> &'static str {
    if is_gpu { "gpu" } else { "cpu" }
}

/// Reads a job log. Rows come back in file order. A log with a `project` column
/// holding several projects needs `project` to choose one. Without an
/// `app_version_id` column, each distinct (`app_id`, `plan_class`) gets an id, 1, 2,
/// … in order of first appearance.
pub fn read(path: &Path, project: Option<&str>) -> Result<Vec<JobRow>, LogError> {
    let (file, mut rd, headers) = open(path, "the job log")?;
    let col = |name: &str| headers.iter().position(|h| h == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            LogError(format!(
                "{file}: line 1: missing column `{name}` (see docs/credit.md for the job log's columns)"
            ))
        })
    };
    let c_wu = need("workunit_id")?;
    let c_host = need("host_id")?;
    let c_elapsed = need("elapsed_time_s")?;
    let c_flops = need("flops_estimate_flops")?;
    let c_est = need("rsc_fpops_est_flops")?;
    let c_bound = need("rsc_fpops_bound_flops")?;
    let c_sent = need("sent_time_s")?;
    let c_received = need("received_time_s")?;
    let c_outcome = need("outcome")?;
    let c_output = need("output")?;
    let c_av = col("app_version_id");
    let c_plan = col("plan_class");
    if c_av.is_none() && c_plan.is_none() {
        return Err(LogError(format!(
            "{file}: line 1: missing column `app_version_id` (or `plan_class` with `device`)"
        )));
    }
    let (c_result, c_app, c_device, c_cpu) = (
        col("result_id"),
        col("app_id"),
        col("device"),
        col("cpu_time_s"),
    );
    let (c_true, c_quorum, c_validate, c_outlier, c_claimed, c_granted, c_project) = (
        col("true_flops"),
        col("min_quorum"),
        col("validate_time_s"),
        col("runtime_outlier"),
        col("claimed_credit"),
        col("granted_credit"),
        col("project"),
    );
    let mut plan_ids: BTreeMap<(u32, String), u32> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut projects: Vec<String> = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i as u64 + 2;
        let rec = rec.map_err(|e| LogError(format!("{file}: line {line}: {e}")))?;
        let f = Field {
            file: &file,
            line,
            rec: &rec,
            headers: &headers,
        };
        let proj = c_project.map(|c| f.text(c).to_string());
        if let Some(p) = &proj {
            if let Some(want) = project
                && p != want
            {
                continue;
            }
            if !projects.contains(p) {
                projects.push(p.clone());
            }
        }
        const APP_ID: &str = "a whole number from 1 to 10000 (the app's id)";
        let app_id = match c_app {
            Some(c) => match f.opt::<u32>(c, APP_ID)?.unwrap_or(1) {
                id @ 1..=MAX_APP_ID => id,
                _ => return Err(f.bad(c, APP_ID)),
            },
            None => 1,
        };
        let is_gpu = match c_device.map(|c| f.text(c)) {
            None | Some("") | Some("cpu") => false,
            Some("gpu") => true,
            Some(_) => {
                return Err(f.bad(c_device.unwrap_or(0), "`cpu` or `gpu`"));
            }
        };
        let app_version_id = match c_av {
            Some(c) => f.req::<u32>(c, "a whole number ≥ 0 (the app version's id)")?,
            None => {
                let c = c_plan.unwrap_or(0);
                let next = plan_ids.len() as u32 + 1;
                *plan_ids
                    .entry((app_id, f.text(c).to_string()))
                    .or_insert(next)
            }
        };
        let outcome = LogOutcome::parse(f.text(c_outcome))
            .ok_or_else(|| f.bad(c_outcome, LogOutcome::NAMES))?;
        let row = JobRow {
            line,
            project: proj,
            result_id: match c_result {
                Some(c) => f.req(c, "a whole number (the result's id)")?,
                None => line - 1,
            },
            workunit_id: f.req(c_wu, "a whole number (the workunit's id)")?,
            app_id,
            app_version_id,
            is_gpu,
            host_id: f.req(c_host, "a whole number (the host's id)")?,
            elapsed_time: f.non_negative(c_elapsed, "seconds ≥ 0")?,
            cpu_time: match c_cpu {
                Some(c) => f.opt_non_negative(c, "seconds ≥ 0")?.unwrap_or(0.0),
                None => 0.0,
            },
            flops_estimate: f.non_negative(c_flops, "FLOPS ≥ 0")?,
            rsc_fpops_est: f.positive(c_est, "a number of FLOPs > 0")?,
            rsc_fpops_bound: f.positive(c_bound, "a number of FLOPs > 0")?,
            true_flops: match c_true {
                Some(c) => f
                    .opt_non_negative(c, "a number of FLOPs > 0")?
                    .filter(|v| *v > 0.0),
                None => None,
            },
            min_quorum: match c_quorum {
                Some(c) => f.opt::<i32>(c, "a whole number ≥ 1")?.map(|q| q.max(1)),
                None => None,
            },
            sent_time: f.req(c_sent, "a time in whole seconds")?,
            received_time: f.req(c_received, "a time in whole seconds")?,
            validate_time: match c_validate {
                Some(c) => f.opt(c, "a time in whole seconds")?,
                None => None,
            },
            outcome,
            output: match outcome {
                LogOutcome::Success => {
                    f.req(c_output, "a number (results with equal values agree)")?
                }
                _ => f
                    .opt(c_output, "a number (results with equal values agree)")?
                    .unwrap_or(0.0),
            },
            runtime_outlier: match c_outlier {
                Some(c) => f.opt::<u8>(c, "0 or 1")?.is_some_and(|v| v != 0),
                None => false,
            },
            claimed_credit: match c_claimed {
                Some(c) => f.opt_non_negative(c, "credits ≥ 0")?,
                None => None,
            },
            granted_credit: match c_granted {
                Some(c) => f.opt_non_negative(c, "credits ≥ 0")?,
                None => None,
            },
        };
        if row.received_time < row.sent_time {
            return Err(f.bad(c_received, "a time ≥ sent_time_s"));
        }
        rows.push(row);
    }
    if project.is_none() && projects.len() > 1 {
        return Err(LogError(format!(
            "{file}: the log holds several projects ({}); choose one with --project",
            projects.join(", ")
        )));
    }
    if let Some(want) = project
        && rows.is_empty()
    {
        return Err(LogError(format!("{file}: no row of project `{want}`")));
    }
    Ok(rows)
}

/// One field of one row, for typed reads with located errors.
/// Opens a CSV input of the credit replay (`what`: "the job log", "the hosts
/// file") and reads its header: the file's name for messages, the reader, the
/// header.
pub(crate) fn open(
    path: &Path,
    what: &str,
) -> Result<(String, csv::Reader<std::fs::File>, csv::StringRecord), LogError> {
    let file = path.display().to_string();
    let mut rd = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| LogError(format!("{file}: cannot read {what}: {e}")))?;
    let headers = rd
        .headers()
        .map_err(|e| LogError(format!("{file}: line 1: cannot read the header: {e}")))?
        .clone();
    Ok((file, rd, headers))
}

/// One field of a CSV input row, read with errors that name the file, the line,
/// the column and what was expected.
pub struct Field<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: u64,
    pub(crate) rec: &'a csv::StringRecord,
    pub(crate) headers: &'a csv::StringRecord,
}

impl Field<'_> {
    pub(crate) fn text(&self, c: usize) -> &str {
        self.rec.get(c).unwrap_or("")
    }

    pub(crate) fn bad(&self, c: usize, expected: &str) -> LogError {
        LogError(format!(
            "{}: line {}, column `{}`: expected {expected}, found `{}`",
            self.file,
            self.line,
            self.headers.get(c).unwrap_or("?"),
            self.text(c)
        ))
    }

    pub(crate) fn opt<T: std::str::FromStr>(
        &self,
        c: usize,
        expected: &str,
    ) -> Result<Option<T>, LogError> {
        let t = self.text(c);
        if t.is_empty() {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| self.bad(c, expected))
    }

    pub(crate) fn req<T: std::str::FromStr>(
        &self,
        c: usize,
        expected: &str,
    ) -> Result<T, LogError> {
        self.opt(c, expected)?.ok_or_else(|| self.bad(c, expected))
    }

    pub(crate) fn opt_non_negative(
        &self,
        c: usize,
        expected: &str,
    ) -> Result<Option<f64>, LogError> {
        match self.opt::<f64>(c, expected)? {
            Some(v) if !(v.is_finite() && v >= 0.0) => Err(self.bad(c, expected)),
            v => Ok(v),
        }
    }

    fn non_negative(&self, c: usize, expected: &str) -> Result<f64, LogError> {
        self.opt_non_negative(c, expected)?
            .ok_or_else(|| self.bad(c, expected))
    }

    fn positive(&self, c: usize, expected: &str) -> Result<f64, LogError> {
        match self.non_negative(c, expected)? {
            v if v > 0.0 => Ok(v),
            _ => Err(self.bad(c, expected)),
        }
    }
}

/// The default `--out` of a replay of `log`: `output/credit-<file stem>/`.
pub(crate) fn default_out(log: &Path) -> PathBuf {
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "jobs".into());
    Path::new("output").join(format!("credit-{stem}"))
}

/// `credit.toml`: the validator's settings (defaults as the server's), in the
/// scenario file's spelling (its `[project.NAME]` tables' types).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// Seed/real-BOINC switches of the validator (spec backend §5).
    pub backend: BackendSection,
    /// Comparison, credit caps (`[validator]` of a scenario's project); `credit` is
    /// ignored: both schemes are replayed.
    pub validator: ValidatorConfig,
    /// `min_avg_pfc` to start from, `host_scale_check`, `target_nresults`: one
    /// `[app]` table for every app of the log, or `[[app]]` tables for apps 1, 2, …
    /// in id order, each with an optional `[app.validator]` of its own.
    #[serde(
        deserialize_with = "one_or_more_apps",
        serialize_with = "serialize_apps"
    )]
    pub app: Vec<AppConfig>,
    /// `min_quorum` of workunits whose rows give none.
    pub min_quorum: i32,
    /// Width of the time buckets of the credit tables.
    pub interval: Duration,
    /// Start of the window of the summary's figures.
    pub warmup: Duration,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        Self {
            backend: BackendSection::default(),
            validator: ValidatorConfig::default(),
            app: vec![AppConfig::default()],
            min_quorum: WuTemplate::default().min_quorum,
            interval: Duration(86_400),
            warmup: Duration(0),
        }
    }
}

impl ReplayConfig {
    /// Reads `credit.toml`; errors name the file, line and column.
    pub fn read(path: &Path) -> Result<Self, LogError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| LogError(format!("{file}: cannot read: {e}")))?;
        let c: Self = toml::from_str(&text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start].matches('\n').count() + 1;
                    let col = s.start - text[..s.start].rfind('\n').map_or(0, |i| i + 1) + 1;
                    format!(" line {line}, column {col}:")
                })
                .unwrap_or_default();
            LogError(format!("{file}:{at} {}", e.message()))
        })?;
        if c.min_quorum < 1 {
            return Err(LogError(format!(
                "{file}: min_quorum: expected a whole number ≥ 1, found {}",
                c.min_quorum
            )));
        }
        if c.interval.get() < 1 {
            return Err(LogError(format!(
                "{file}: interval: expected a duration ≥ 1 s"
            )));
        }
        Ok(c)
    }
}

/// The validator settings a run writes next to its job log (one file per project).
pub(crate) fn config_file(project: &str) -> String {
    format!("credit-{project}.toml")
}

/// The hosts file a run writes next to its job log (one per project).
pub(crate) fn hosts_file(project: &str) -> String {
    format!("credit-hosts-{project}.csv")
}

/// Writes each project's validator settings as `credit-<project>.toml` into `dir`
/// (`run --job-log`): what makes the replay of the run's job log validate as the
/// run's validator did; and its hosts as `credit-hosts-<project>.csv` (`--hosts`:
/// group names, and the benchmarks classic credit claims from).
pub(crate) fn write_run_configs(
    dir: &Path,
    projects: &[Project],
    scenario: &ScenarioFile,
) -> io::Result<()> {
    for p in projects {
        // The settings as the scenario file spells them (its `[project.NAME]` tables),
        // which `credit.toml` shares, rather than as the daemons read them.
        let file = scenario.project.get(&p.name).ok_or_else(|| {
            io::Error::other(format!("project `{}` is not in the scenario", p.name))
        })?;
        let settings: Vec<_> = file.apps().collect();
        // A project with several apps gives each its own validator settings, so that
        // each app of the log is replayed as its validator ran.
        let app = if settings.len() == 1 {
            file.app.clone()
        } else {
            (settings.iter())
                .map(|s| AppConfig {
                    validator: Some(s.validator.clone()),
                    version: Vec::new(),
                    workunit: None,
                    work_generator: None,
                    ..s.app.clone()
                })
                .collect()
        };
        let c = ReplayConfig {
            backend: file.backend.clone(),
            validator: settings[0].validator.clone(),
            app,
            min_quorum: settings[0].workunit.min_quorum,
            interval: scenario.output.interval,
            warmup: scenario.output.warmup,
        };
        let text = toml::to_string_pretty(&c).map_err(io::Error::other)?;
        let head = format!(
            "# Validator settings of project `{}`, for `boinc-sim credit jobs.csv --project {} --config {}`\n",
            p.name,
            p.name,
            config_file(&p.name)
        );
        std::fs::write(dir.join(config_file(&p.name)), head + &text)?;
        let mut w = csv::Writer::from_path(dir.join(hosts_file(&p.name)))?;
        w.write_record(["host_id", "group", "p_fpops", "p_iops"])?;
        for (id, h) in p.db.hosts.iter() {
            let group = h
                .host_group()
                .and_then(|g| scenario.host_group.get(g as usize))
                .map_or("(named hosts)", |g| g.name.as_str());
            w.write_record([
                id.to_string(),
                group.into(),
                float(h.p_fpops),
                float(h.p_iops),
            ])?;
        }
        w.flush()?;
    }
    Ok(())
}
