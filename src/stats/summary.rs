//! `summary.json` (docs/outputs.md, "`summary.json`"): each project's tally with
//! its headline figures, the run's counters, the censoring warnings, the clients'
//! summary and the effective configuration, written when the run ends.
//!
//! It reads what the run left (the recorder's tallies, `super::headline`'s figures,
//! `super::hosts`) and stands above all of them: none of them names this module.

use super::headline::{self, Headline};
use super::recorder::StatsRecorder;
use super::window;
use crate::world::Finished;

/// The censoring warnings of a run, one per project whose `delay_bound` exceeds a
/// third of the measured window ([`window::censoring_warning`]), in scenario order;
/// in a project with several apps, one per such app, with the app's own censored
/// results.
pub(crate) fn censoring_warnings(f: &Finished<StatsRecorder>) -> Vec<String> {
    let mut out = Vec::new();
    for (pi, p) in f.projects.iter().enumerate() {
        for app in &p.apps {
            let who = if p.apps.len() > 1 {
                format!("project {}, app {}", p.name, app.cfg.name)
            } else {
                format!("project {}", p.name)
            };
            let t = f.recorder.app_tally(pi, app.id);
            let bound = app.cfg.workunit.delay_bound;
            out.extend(window::censoring_warning(
                &who,
                bound,
                t.window,
                t.deadline.censored,
            ));
        }
    }
    out
}

/// The drift warnings of a run (`super::drift`): per project in scenario order, each
/// figure whose last third of the measured window differs significantly from its
/// first, as (project index, figure, message).
pub(crate) fn drift_warnings(f: &Finished<StatsRecorder>) -> Vec<(usize, &'static str, String)> {
    let mut out = Vec::new();
    for (pi, (p, t)) in f.projects.iter().zip(&f.recorder.tallies).enumerate() {
        let who = format!("project {}", p.name);
        for (figure, msg) in t.drift_warnings(&who) {
            if super::batches::drift_applies(&f.projects[pi], figure) {
                out.push((pi, figure, msg));
            }
        }
    }
    out
}

/// The warnings of `summary.json`: the censoring warnings, then the drift warnings.
pub(crate) fn warnings(f: &Finished<StatsRecorder>) -> Vec<String> {
    let mut out = censoring_warnings(f);
    out.extend(drift_warnings(f).into_iter().map(|w| w.2));
    out
}

/// `summary.json`: headline figures and the effective configuration. Contains no
/// wall-clock figure, so two runs of one scenario give identical files.
///
/// Each project holds its tally and, under `headline`, the figures of its
/// `summary.csv` row.
pub fn summary_json(
    loaded: &crate::scenario::load::Loaded,
    f: &Finished<StatsRecorder>,
    headlines: &[Headline],
) -> serde_json::Value {
    let mut projects = serde_json::Map::new();
    let duration_s = loaded.file.simulation.duration.get() as f64;
    for (pi, (((p, t), h), c)) in (f.projects.iter())
        .zip(&f.recorder.tallies)
        .zip(headlines)
        .zip(&f.recorder.credit)
        .enumerate()
    {
        let mut v = serde_json::to_value(t).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("headline".into(), headline::to_json(h));
            o.insert("credit_neutrality".into(), c.neutrality_json());
            // Each outage and the time to recover from it, for a project that
            // reports its server load (docs/outputs.md, "Time to recover").
            if headline::reports_server_load(&t.metrics) {
                let r = headline::recoveries(f, pi, duration_s);
                o.insert(
                    "outages".into(),
                    serde_json::to_value(r).unwrap_or_default(),
                );
            }
        }
        projects.insert(p.name.clone(), v);
    }
    serde_json::json!({
        "scenario": loaded.file.simulation.name,
        "scenario_hash": loaded.hash,
        "seed": loaded.file.simulation.seed,
        "duration_s": loaded.file.simulation.duration.get(),
        "warmup_s": loaded.file.output.warmup.get(),
        "crate_version": env!("CARGO_PKG_VERSION"),
        "events": f.counters.events,
        "scheduler_rpcs": f.counters.rpcs,
        "daemon_passes": f.counters.daemon_passes,
        "scheduler_rpcs_failed": f.counters.rpcs_failed,
        "projects": projects,
        "warnings": warnings(f),
        "clients": serde_json::to_value(super::hosts::client_summary(f)).unwrap_or_default(),
        "effective_config": serde_json::to_value(&loaded.file).unwrap_or_default(),
    })
}
