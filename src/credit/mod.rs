//! Credit across app versions: the job log, the credit figures of a
//! run, and `boinc-sim credit`, the replay of a job log (`docs/credit.md`).
//!
//! * [`crate::stats::job_log`] is the job log's format: what `run --job-log` writes
//!   and the replay reads, with located errors for bad input.
//! * [`crate::stats::credit`] tallies credit per FLOP of real work per app version,
//!   device type and host group, and the device-neutrality ratio, for runs and
//!   replays alike.
//! * [`replay`] runs the project's validator and credit_new engine over a log.
//! * This module writes a replay's folder: tables, chart and summary.

pub mod replay;

use crate::compare::CompareOutput;
use crate::stats::credit::{self as figures, CreditFigures};
use crate::stats::job_log::{self as log, ReplayConfig};
use replay::Replay;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// File names of a replay's folder (besides the tables of [`figures`]).
pub(crate) const RESULTS_CSV: &str = "credit_results.csv";
pub(crate) const HOSTS_CSV: &str = "credit_hosts.csv";
pub(crate) const SUMMARY_TXT: &str = "summary.txt";
pub(crate) const SUMMARY_JSON: &str = "summary.json";

/// Why a replay failed: bad input (exit 2) or an unwritable output (exit 1). The
/// message is meant to be printed as is.
#[derive(Debug, thiserror::Error)]
pub enum CreditError {
    /// The log, hosts or settings file is missing or malformed.
    #[error("{0}")]
    Input(String),
    /// The replay's folder cannot be written.
    #[error("{0}")]
    Output(String),
}

impl CreditError {
    /// 2 for bad input, 1 for a failure to write (the command line's convention).
    pub fn exit_code(&self) -> u8 {
        match self {
            CreditError::Input(_) => 2,
            CreditError::Output(_) => 1,
        }
    }
}

/// What `boinc-sim credit` was asked.
#[derive(Clone, Debug)]
pub struct ReplayArgs {
    pub jobs: PathBuf,
    pub hosts: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub project: Option<String>,
    pub out: PathBuf,
}

/// Replays a job log and writes the replay's folder into `a.out` (through a
/// temporary folder, renamed when complete). Returns the summary text.
pub fn run(a: &ReplayArgs) -> Result<String, CreditError> {
    let input = |e: log::LogError| CreditError::Input(e.0);
    let cfg = match &a.config {
        Some(c) => ReplayConfig::read(c).map_err(input)?,
        None => ReplayConfig::default(),
    };
    let hosts = match &a.hosts {
        Some(h) => replay::read_hosts(h).map_err(input)?,
        None => BTreeMap::new(),
    };
    let rows = log::read(&a.jobs, a.project.as_deref()).map_err(input)?;
    let r = replay::replay(&rows, &cfg, &hosts)
        .map_err(|e| CreditError::Input(format!("{}: {e}", a.jobs.display())))?;
    let project = a
        .project
        .clone()
        .or_else(|| rows.iter().find_map(|r| r.project.clone()))
        .unwrap_or_default();
    let fig = tally(&r, &cfg);
    let summary = summary_text(&r, &fig, &a.jobs);
    let out_err = |e: io::Error| {
        CreditError::Output(format!(
            "cannot write the replay to {}: {e}",
            a.out.display()
        ))
    };
    let out = CompareOutput::create(&a.out).map_err(out_err)?;
    write_results(out.dir(), &r).map_err(out_err)?;
    write_hosts(out.dir(), &r).map_err(out_err)?;
    let groups = figures::GroupNames {
        names: &r.groups,
        unnamed: "all",
    };
    figures::write(out.dir(), &[(&project, &fig)], &groups).map_err(out_err)?;
    std::fs::write(out.dir().join(SUMMARY_TXT), &summary).map_err(out_err)?;
    let json = serde_json::json!({
        "jobs": a.jobs.display().to_string(),
        "results_decided": r.results.len(),
        "results_unreported": r.unreported,
        "credit_new_total": r.results.iter().map(|x| x.new.granted_credit).sum::<f64>(),
        "classic_total": r.classic_skipped.is_none().then(|| r.results.iter().filter_map(|x| x.classic).sum::<f64>()),
        "classic_skipped": r.classic_skipped,
        "credit_neutrality": fig.neutrality_json(),
        "config": serde_json::to_value(&cfg).unwrap_or_default(),
    });
    std::fs::write(
        out.dir().join(SUMMARY_JSON),
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    )
    .map_err(out_err)?;
    crate::plot::write_credit_chart(out.dir()).map_err(|e| CreditError::Output(e.to_string()))?;
    out.finish().map_err(out_err)?;
    Ok(summary)
}

/// The credit figures of a replay (host groups from `--hosts`, else "all").
pub fn tally(r: &Replay, cfg: &ReplayConfig) -> CreditFigures {
    let mut fig = CreditFigures::new(cfg.interval.get(), cfg.warmup.get());
    for x in &r.results {
        fig.add(&x.new);
    }
    fig
}

fn float(v: f64) -> String {
    format!("{v:?}")
}

/// `credit_results.csv`: one row per decided result.
fn write_results(dir: &Path, r: &Replay) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(RESULTS_CSV))?;
    w.write_record([
        "result_id",
        "workunit_id",
        "host_id",
        "app_id",
        "app_version_id",
        "device",
        "validate_time_s",
        "validate_state",
        "true_flops",
        "credit_new",
        "classic",
        "logged_granted_credit",
    ])?;
    for x in &r.results {
        let d = &x.new;
        let state = if d.validate_state == crate::server::types::ValidateState::Valid {
            "valid"
        } else {
            "invalid"
        };
        w.write_record([
            x.result_id.to_string(),
            x.workunit_id.to_string(),
            x.host_id.to_string(),
            d.app_id.to_string(),
            d.app_version_id.to_string(),
            log::device_name(d.is_gpu).to_string(),
            d.validate_time.to_string(),
            state.to_string(),
            float(d.true_flops),
            float(d.granted_credit),
            x.classic.map(float).unwrap_or_default(),
            x.logged.map(float).unwrap_or_default(),
        ])?;
    }
    w.flush()
}

/// `credit_hosts.csv`: per host, VALID results, credit under each scheme, true
/// FLOPs and credit per GFLOP.
fn write_hosts(dir: &Path, r: &Replay) -> io::Result<()> {
    #[derive(Default)]
    struct H {
        group: String,
        valid: u64,
        new: f64,
        classic: Option<f64>,
        flops: f64,
    }
    let mut hosts: BTreeMap<u64, H> = BTreeMap::new();
    for x in &r.results {
        let h = hosts.entry(x.host_id).or_default();
        h.group = x
            .new
            .host_group
            .and_then(|g| r.groups.get(g as usize).cloned())
            .unwrap_or_default();
        if x.new.validate_state == crate::server::types::ValidateState::Valid {
            h.valid += 1;
            h.new += x.new.granted_credit;
            h.flops += x.new.true_flops;
            h.classic = x.classic.map(|c| h.classic.unwrap_or(0.0) + c);
        }
    }
    let mut w = csv::Writer::from_path(dir.join(HOSTS_CSV))?;
    w.write_record([
        "host_id",
        "host_group",
        "results_valid",
        "credit_new",
        "classic",
        "true_flops",
        "credit_new_per_gflop",
    ])?;
    for (id, h) in &hosts {
        w.write_record([
            id.to_string(),
            h.group.clone(),
            h.valid.to_string(),
            float(h.new),
            h.classic.map(float).unwrap_or_default(),
            float(h.flops),
            if h.flops > 0.0 {
                float(h.new / (h.flops / 1e9))
            } else {
                String::new()
            },
        ])?;
    }
    w.flush()
}

/// The printed summary: counts, totals, each version's credit per GFLOP in the
/// first and last bucket with its final scale, and each app's neutrality.
pub(crate) fn summary_text(r: &Replay, fig: &CreditFigures, jobs: &Path) -> String {
    let mut s = String::new();
    let valid: Vec<_> = r
        .results
        .iter()
        .filter(|x| x.new.validate_state == crate::server::types::ValidateState::Valid)
        .collect();
    let _ = writeln!(
        s,
        "replay of {}: {} results decided ({} valid), {} never reported",
        jobs.display(),
        r.results.len(),
        valid.len(),
        r.unreported
    );
    let new: f64 = valid.iter().map(|x| x.new.granted_credit).sum();
    let _ = writeln!(
        s,
        "  credit_new granted: {}",
        crate::plot::format::number(new)
    );
    match &r.classic_skipped {
        None => {
            let c: f64 = valid.iter().filter_map(|x| x.classic).sum();
            let _ = writeln!(
                s,
                "  classic granted:    {}",
                crate::plot::format::number(c)
            );
        }
        Some(why) => {
            let _ = writeln!(s, "  classic not replayed: {why}");
        }
    }
    let mut firsts: BTreeMap<(u32, u32), (&figures::Acc, &figures::Acc)> = BTreeMap::new();
    for ((_, app, av), a) in &fig.versions {
        firsts
            .entry((*app, *av))
            .and_modify(|e| e.1 = a)
            .or_insert((a, a));
    }
    for ((app, av), (first, last)) in &firsts {
        let cpg = |a: &figures::Acc| {
            a.credit_per_gflop()
                .map_or("-".into(), |v| crate::plot::format::trim(v, 4))
        };
        let _ = writeln!(
            s,
            "  app {app} version {av} ({}): credit per GFLOP {} in the first bucket, {} in the last; pfc_scale {}",
            log::device_name(last.is_gpu),
            cpg(first),
            cpg(last),
            crate::plot::format::trim(last.pfc_scale, 4)
        );
    }
    for (app, v) in fig.neutrality() {
        let _ = match v {
            Ok(x) => writeln!(
                s,
                "  app {app}: device neutrality (highest / lowest credit per GFLOP) {}",
                crate::plot::format::trim(x, 3)
            ),
            Err(why) => writeln!(s, "  app {app}: no neutrality ratio: {why}"),
        };
    }
    s
}
