//! The headline figures of each app: `summary_apps.csv`, one row per (project, app).
//!
//! A project with several apps (spec backend §1.4: each app has its own work
//! generator, validator and workunit template, so its own `delay_bound` and quorum)
//! mixes them in its `summary.csv` row: long CPU simulations and short GPU searches
//! share one deadline miss rate. Here each app has its own row, computed by the same
//! code as the project's row ([`headline::values`]) from the app's own tally, which
//! [`super::recorder::StatsRecorder`] feeds the rows of the app's workunits and their
//! results. The columns are those of `summary.csv` but the [`headline::PROJECT_ONLY`]
//! ones (`docs/outputs.md`, `summary_apps.csv`).

use super::headline::{self, Scope};
use super::recorder::StatsRecorder;
use crate::server::types::AppId;
use crate::world::Finished;
use std::io;
use std::path::Path;

pub(crate) const SUMMARY_APPS_CSV: &str = "summary_apps.csv";

/// The key columns of `summary_apps.csv`, before the figures.
pub(crate) const KEYS: [&str; 3] = ["project", "app_id", "app"];

/// One app's row: its project, id and name, and the figures of
/// [`headline::app_columns`] (`None`: no data, an empty field).
#[derive(Clone, Debug, PartialEq)]
pub struct AppHeadline {
    pub project: String,
    pub app_id: AppId,
    pub app: String,
    pub values: Vec<(&'static str, Option<f64>)>,
}

/// The rows of every app of every project: projects in scenario order, each
/// project's apps in id order (the order of its `[[project.NAME.app]]` tables).
pub(crate) fn app_headlines(f: &Finished<StatsRecorder>, duration_s: f64) -> Vec<AppHeadline> {
    f.projects
        .iter()
        .enumerate()
        .flat_map(|(pi, p)| {
            p.apps.iter().map(move |a| AppHeadline {
                project: p.name.clone(),
                app_id: a.id,
                app: a.cfg.name.clone(),
                values: headline::values(f, pi, Scope::App(a.id), duration_s),
            })
        })
        .collect()
}

/// The name an app's figures go by beside its project's (`compare`, the report's
/// summary table): `project/app`, e.g. `main/search`.
pub fn label(project: &str, app: &str) -> String {
    format!("{project}/{app}")
}

/// Which rows of `summary_apps.csv`, given each row's project, are shown beside the
/// projects' rows: those of projects with several apps. A one-app project's app row
/// repeats its project's row.
pub(crate) fn shown_beside_projects(projects: &[&str]) -> Vec<bool> {
    (projects.iter())
        .map(|p| projects.iter().filter(|q| *q == p).count() > 1)
        .collect()
}

/// Writes `summary_apps.csv`: the [`KEYS`], then one column per figure, written
/// as in `summary.csv` ([`headline::field`]).
pub fn write_csv(dir: &Path, rows: &[AppHeadline]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(SUMMARY_APPS_CSV))?;
    w.write_record(KEYS.into_iter().chain(headline::app_columns()))?;
    for h in rows {
        let keys = [h.project.clone(), h.app_id.to_string(), h.app.clone()];
        let figures = h.values.iter().map(|(_, v)| headline::field(*v));
        w.write_record(keys.into_iter().chain(figures))?;
    }
    w.flush()
}
