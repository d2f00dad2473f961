//! The BOINC server back end of one project: an in-memory database and one module per
//! daemon, each a faithful model of its BOINC counterpart (spec backend §2).
//!
//! Daemons talk only through database fields (`transition_time`, `need_validate`,
//! `assimilate_state`, `file_delete_state`), exactly as BOINC's processes do; the
//! world schedules their passes as periodic or scripted events.

pub mod app_version;
pub mod assimilator;
pub mod config;
pub mod credit;
pub mod credit_new;
pub mod db;
pub mod db_purge;
pub mod feeder;
pub mod file_deleter;
pub mod hr;
pub mod invariants;
pub mod job_cache;
pub mod job_log;
pub mod resource;
pub mod scheduler;
pub mod table;
pub mod transition_index;
pub mod transitioner;
pub mod types;
pub mod validator;
pub mod work_generator;

use crate::engine::Time;
use crate::engine::rng::{SimRng, StreamKind, stream};
use config::*;
use db::{Db, ResultRow, WorkunitRow};
use serde::{Deserialize, Serialize};

/// Everything that configures one project's back end.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Seed/real-BOINC switches (spec backend §5).
    pub backend: BackendSection,
    /// `config.xml` (spec backend §2.9).
    pub config: SchedConfig,
    /// The project's application (spec backend §1.4).
    #[serde(deserialize_with = "config::one_app")]
    pub app: AppConfig,
    /// Workunit template of the work generator (spec backend §2.1).
    pub workunit: WuTemplate,
    pub work_generator: WorkGenConfig,
    /// Daemon polling periods (spec backend §2.0).
    pub daemons: DaemonPeriods,
    pub validator: ValidatorConfig,
    pub file_deleter: FileDeleterConfig,
    /// The assimilation handler's answers in unscripted passes (spec backend §2.6).
    pub assimilator: assimilator::AssimilatorConfig,
    pub db_purge: DbPurgeConfig,
    /// Pinned values of random draws.
    pub pin: PinnedDraws,
    /// Windows in which the project's scheduler cannot be reached.
    pub outage: Vec<Outage>,
}

impl ProjectConfig {
    /// The outage in force at `now`, if any: what a client reaching the scheduler
    /// then meets (spec client §2.8, §4.2).
    pub fn outage_at(&self, now: Time) -> Option<&Outage> {
        self.outage.iter().find(|o| o.covers(now))
    }
}

/// The id of an app's first version, the only one of an app that lists none.
pub const APP_VERSION_ID: u32 = 1;
/// The id of the project's app (`workunit.appid`).
pub const APP_ID: u32 = 1;

/// One project: configuration, database, feeder cache, and its random stream.
pub struct Project {
    /// Index of the project in the scenario (sorted by name).
    pub index: usize,
    pub name: String,
    pub cfg: ProjectConfig,
    /// The resolved switches of `cfg.backend`.
    pub sw: Switches,
    pub db: Db,
    pub feeder: job_cache::Cache,
    /// The app's versions (spec backend §1.4), id `k` at index `k − 1`.
    pub app_versions: Vec<app_version::AppVersion>,
    /// credit_new's app version and app statistics (spec backend §6.2).
    pub credit: credit_new::CreditNew,
    /// Results the validator decided (VALID or INVALID) since the world last
    /// collected them: the job log and the credit figures ([`job_log`]).
    pub decided: Vec<job_log::DecidedResult>,
    pub rng: SimRng,
    /// Draws of the assimilation handler's answers (its own stream, so that enabling
    /// them changes no other draw).
    pub assimilator_rng: SimRng,
    pub work_generator: work_generator::State,
    /// Rows removed by db_purge, waiting to be written to the outputs.
    pub purged: Vec<(WorkunitRow, Vec<ResultRow>)>,
    /// Set when a pass found an unrecoverable error (a DEFER-less fatal handler
    /// return, spec backend §2.6); fails the run.
    pub fatal: Option<String>,
    /// Scratch list reused by daemon passes (no allocation per pass).
    pub scratch: Vec<u32>,
}

impl Project {
    pub fn new(index: usize, name: &str, cfg: ProjectConfig, seed: u64, audit: bool) -> Self {
        let sw = cfg.backend.resolve();
        let feeder = job_cache::Cache::new(cfg.config.shmem_work_items as usize);
        let app_versions = app_version::resolve(&cfg.app);
        let mut credit = credit_new::CreditNew::new();
        for av in &app_versions {
            let is_gpu = av.proc_type != resource::ProcType::Cpu;
            credit.register_version(APP_ID, av.id, is_gpu);
        }
        credit.set_min_avg_pfc(APP_ID, cfg.app.min_avg_pfc);
        Self {
            index,
            name: name.to_string(),
            sw,
            db: Db::new(audit),
            feeder,
            app_versions,
            credit,
            decided: Vec::new(),
            rng: stream(seed, StreamKind::Project, index as u64),
            assimilator_rng: stream(seed, StreamKind::Assimilator, index as u64),
            work_generator: work_generator::State::new(seed, index),
            purged: Vec::new(),
            fatal: None,
            scratch: Vec::new(),
            cfg,
        }
    }

    /// The grace period added to DB deadlines (0 under the seed's deadline rule,
    /// spec backend §5 row 2).
    pub fn report_grace_period(&self) -> i64 {
        if self.sw.grace_in_deadline {
            self.cfg.config.report_grace_period.get()
        } else {
            0
        }
    }

    /// The daily quota `Q` in force (0 = none, see quirk Q5).
    pub fn daily_result_quota(&self) -> i32 {
        if self.sw.hav_accounting {
            self.cfg.config.daily_result_quota
        } else {
            0
        }
    }
}

/// Result id of a result name (`wu<id>_<suffix>`, [`db::result_name`]); 0 (never a
/// valid id) if unknown or purged. Scripted reports and expectations name results
/// this way.
pub fn lookup_result(p: &Project, name: &str) -> types::ResultId {
    let Some((wuid, suffix)) = db::parse_result_name(name) else {
        return 0;
    };
    let Some(wu) = p.db.workunits.get(wuid) else {
        return 0;
    };
    wu.results
        .iter()
        .copied()
        .find(|&r| p.db.result(r).suffix == suffix)
        .unwrap_or(0)
}
