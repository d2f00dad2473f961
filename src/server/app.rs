//! A project's apps (APP rows, spec backend §1.4) with the settings of their own
//! daemons. BOINC runs one work generator and one validator per app, each reading its
//! app's workunit template and command line (spec backend §2.1, §2.5); the scheduler
//! reads the app's fields (adaptive replication, homogeneous redundancy and app
//! version) for each job it sends (§2.4.4, §2.4.7).

use super::config::AppConfig;
use super::types::AppId;
use super::work_generator;
use std::ops::Range;

/// One app of a project, id `k` at index `k − 1` of [`super::Project::apps`].
#[derive(Clone, Debug)]
pub struct App {
    pub id: AppId,
    /// The APP row's fields (name, `target_nresults`, homogeneous redundancy, …)
    /// and its daemons' settings: the template its work generator creates
    /// workunits from, the generator's mode, and its validator's settings.
    pub cfg: AppConfig,
    /// Indices of its versions in [`super::Project::app_versions`].
    pub versions: Range<usize>,
    /// Its work generator's progress and random stream.
    pub generator: work_generator::State,
}

impl App {
    /// App `id` of the project with index `project` under the master `seed`, its
    /// versions at `versions`.
    pub fn new(
        id: AppId,
        cfg: AppConfig,
        versions: Range<usize>,
        seed: u64,
        project: usize,
    ) -> Self {
        Self {
            id,
            cfg,
            versions,
            generator: work_generator::State::new(seed, project, id),
        }
    }
}
