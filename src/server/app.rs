//! A project's apps (APP rows, spec backend §1.4) with the settings of their own
//! daemons. BOINC runs one work generator and one validator per app, each reading its
//! app's workunit template and command line (spec backend §2.1, §2.5); the scheduler
//! reads the app's fields (adaptive replication, homogeneous redundancy and app
//! version) for each job it sends (§2.4.4, §2.4.7).

use super::config::{AppConfig, AppSettings, ValidatorConfig, WorkGenConfig, WuTemplate};
use super::types::AppId;
use super::work_generator;
use std::ops::Range;

/// One app of a project, id `k` at index `k − 1` of [`super::Project::apps`].
#[derive(Clone, Debug)]
pub struct App {
    pub id: AppId,
    /// The APP row's fields (name, `target_nresults`, homogeneous redundancy, …).
    /// Its optional sections are cleared: the settings in force are the resolved
    /// ones beside it.
    pub cfg: AppConfig,
    /// The template its work generator creates workunits from.
    pub workunit: WuTemplate,
    pub work_generator: WorkGenConfig,
    pub validator: ValidatorConfig,
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
        s: AppSettings<'_>,
        versions: Range<usize>,
        seed: u64,
        project: usize,
    ) -> Self {
        Self {
            id,
            cfg: AppConfig {
                workunit: None,
                work_generator: None,
                validator: None,
                ..s.app.clone()
            },
            workunit: s.workunit.clone(),
            work_generator: s.work_generator.clone(),
            validator: s.validator.clone(),
            versions,
            generator: work_generator::State::new(seed, project, id),
        }
    }
}
