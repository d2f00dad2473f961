//! The BOINC server back end of one project: an in-memory database and one module per
//! daemon, each a faithful model of its BOINC counterpart (spec backend §2).
//!
//! Daemons talk only through database fields (`transition_time`, `need_validate`,
//! `assimilate_state`, `file_delete_state`), exactly as BOINC's processes do; the
//! world schedules their passes as periodic or scripted events.

pub mod app;
pub mod app_version;
pub mod assimilator;
pub mod batch;
pub mod config;
pub mod credit;
pub mod credit_new;
pub mod db;
pub mod db_purge;
pub mod downtime;
pub mod feeder;
pub mod file_deleter;
pub mod hr;
pub mod id_set;
pub mod invariants;
pub(crate) mod job_cache;
pub mod job_log;
pub mod resource;
pub mod scheduler;
pub mod step;
pub mod table;
pub mod transition_index;
pub mod transitioner;
pub mod types;
pub mod validator;
pub mod web_server;
pub mod work_generator;

use crate::engine::Time;
use crate::engine::rng::{SimRng, stream};
use crate::streams::StreamKind;
use config::*;
use db::Db;
use types::{ResultId, WuId};

/// Everything that configures one project's back end, as its daemons read it:
/// resolved once when the scenario is loaded, each app with its own settings
/// ([`config`] says why).
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectConfig {
    /// Seed/real-BOINC switches, the variant's preset with the file's overrides
    /// (spec backend §5).
    pub switches: Switches,
    /// `config.xml` (spec backend §2.9).
    pub config: SchedConfig,
    /// The project's apps (spec backend §1.4), id `k` at index `k − 1`.
    pub apps: Vec<AppConfig>,
    /// Daemon polling periods (spec backend §2.0).
    pub daemons: DaemonPeriods,
    pub file_deleter: FileDeleterConfig,
    /// The assimilation handler's answers in unscripted passes (spec backend §2.6).
    pub assimilator: assimilator::AssimilatorConfig,
    pub db_purge: DbPurgeConfig,
    /// Pinned values of random draws.
    pub pin: PinnedDraws,
    /// Windows in which the project's scheduler cannot be reached.
    pub outage: Vec<Outage>,
    /// The scheduler's processes and listen queue (`[project.NAME.server]`, spec
    /// backend §2.4.0); `None`: RPCs take no time and are never refused.
    pub server: Option<web_server::SchedulerCapacity>,
    /// Daemons (or the database) stopped for a while (`[[project.NAME.daemon_outage]]`),
    /// drawn into windows when the world is built ([`downtime::Downtime`]).
    pub daemon_outage: Vec<DaemonOutage>,
}

impl Default for ProjectConfig {
    /// One default app, every section at BOINC's defaults, real BOINC's switches.
    fn default() -> Self {
        Self {
            switches: Switches::preset(Variant::default()),
            config: SchedConfig::default(),
            apps: vec![AppConfig::default()],
            daemons: DaemonPeriods::default(),
            file_deleter: FileDeleterConfig::default(),
            assimilator: assimilator::AssimilatorConfig::default(),
            db_purge: DbPurgeConfig::default(),
            pin: PinnedDraws::default(),
            outage: Vec::new(),
            server: None,
            daemon_outage: Vec::new(),
        }
    }
}

impl ProjectConfig {
    /// The id of the app named `name`; "" names the first app.
    pub fn app_id(&self, name: &str) -> Option<types::AppId> {
        if name.is_empty() {
            return Some(1);
        }
        let k = self.apps.iter().position(|a| a.name == name)?;
        Some(k as types::AppId + 1)
    }

    /// The outage in force at `now`, if any: what a client reaching the scheduler
    /// then meets (spec client §2.8, §4.2).
    pub(crate) fn outage_at(&self, now: Time) -> Option<&Outage> {
        self.outage.iter().find(|o| o.covers(now))
    }

    /// Whether the project's server-load gauges are sampled (`timeseries.csv`'s
    /// `backlog_transitioner_workunits`, `job_cache_fill`, `daemons_down`): only for
    /// a project that asks about its servers' load, so that every other project's
    /// outputs stay as they were.
    pub fn reports_server_load(&self) -> bool {
        !self.daemon_outage.is_empty() || self.server.is_some()
    }
}

/// The id of the first app's first version (the only version of a one-app project
/// that lists none).
pub(crate) const APP_VERSION_ID: u32 = 1;

/// One project: configuration, database, feeder cache, and its random stream.
pub struct Project {
    /// Index of the project in the scenario (sorted by name).
    pub index: usize,
    pub name: String,
    pub cfg: ProjectConfig,
    /// The switches in force: `cfg.switches` when the project is built.
    pub sw: Switches,
    pub db: Db,
    pub feeder: job_cache::Cache,
    /// The apps (spec backend §1.4) with their daemons' settings, id `k` at index
    /// `k − 1`.
    pub apps: Vec<app::App>,
    /// Every app's versions (spec backend §1.4), id `k` at index `k − 1`: the first
    /// app's, then the second's, …
    pub app_versions: Vec<app_version::AppVersion>,
    /// credit_new's app version and app statistics (spec backend §6.2).
    pub credit: credit_new::CreditNew,
    pub rng: SimRng,
    /// Draws of the assimilation handler's answers (its own stream, so that enabling
    /// them changes no other draw).
    pub assimilator_rng: SimRng,
    /// The buffers a daemon's snapshot of its work list is written into, kept
    /// between passes so that a pass allocates nothing ([`Self::walk_workunits`],
    /// [`Self::walk_results`]).
    snapshot: Vec<WuId>,
    snapshot_results: Vec<ResultId>,
    /// The run's master seed: batches draw their jobs' sizes from streams of their
    /// own ([`batch::submit`]).
    pub seed: u64,
    /// When its daemons are down (`[[project.NAME.daemon_outage]]`), drawn when the
    /// world is built ([`downtime::install`]); empty until then.
    pub downtime: downtime::Downtime,
}

impl Project {
    /// A daemon's pass over a snapshot of its work list: `query` writes the list,
    /// as the daemon's database query returns it, and `visit` is called on each
    /// workunit in order until it answers false. Returns the snapshot's length.
    ///
    /// The rows the next workunits will touch are prefetched a few entries ahead
    /// ([`Db::prefetch_walk_step`]) and the snapshot reuses a buffer kept between
    /// passes, so that a daemon reads like the BOINC daemon it models: a query,
    /// then a loop.
    pub(crate) fn walk_workunits(
        &mut self,
        what: db::Prefetch,
        query: impl FnOnce(&mut Db, &mut Vec<WuId>),
        visit: impl FnMut(&mut Project, WuId) -> bool,
    ) -> usize {
        let mut list = std::mem::take(&mut self.snapshot);
        list.clear();
        query(&mut self.db, &mut list);
        self.walk(&list, what, visit);
        let n = list.len();
        self.snapshot = list;
        n
    }

    /// The walk of [`Self::walk_workunits`] over a given list.
    fn walk(
        &mut self,
        list: &[WuId],
        what: db::Prefetch,
        mut visit: impl FnMut(&mut Project, WuId) -> bool,
    ) {
        let lag = what.lag();
        for t in 0..list.len() + lag {
            self.db.prefetch_walk_step(list, t, what);
            if let Some(&w) = t.checked_sub(lag).and_then(|k| list.get(k))
                && !visit(self, w)
            {
                break;
            }
        }
    }

    /// A daemon's pass over a snapshot of result ids, as [`Self::walk_workunits`]
    /// (each result's row is prefetched a few entries ahead). Returns the
    /// snapshot's length.
    pub(crate) fn walk_results(
        &mut self,
        query: impl FnOnce(&mut Db, &mut Vec<ResultId>),
        mut visit: impl FnMut(&mut Project, ResultId),
    ) -> usize {
        let mut list = std::mem::take(&mut self.snapshot_results);
        list.clear();
        query(&mut self.db, &mut list);
        for (i, &rid) in list.iter().enumerate() {
            self.db.results.prefetch_list_step(&list, i);
            visit(self, rid);
        }
        let n = list.len();
        self.snapshot_results = list;
        n
    }

    pub fn new(index: usize, name: &str, cfg: ProjectConfig, seed: u64, audit: bool) -> Self {
        let sw = cfg.switches;
        let feeder = job_cache::Cache::new(cfg.config.shmem_work_items as usize);
        let mut app_versions = Vec::new();
        let mut apps = Vec::new();
        let mut credit = credit_new::CreditNew::new();
        for (k, a) in cfg.apps.iter().enumerate() {
            let appid = k as types::AppId + 1;
            let first = app_versions.len();
            app_versions.extend(app_version::resolve(a, appid, first as u32 + 1));
            for av in &app_versions[first..] {
                let is_gpu = av.proc_type != resource::ProcType::Cpu;
                credit.register_version(appid, av.id, is_gpu);
            }
            credit.set_min_avg_pfc(appid, a.min_avg_pfc);
            apps.push(app::App::new(
                appid,
                a.clone(),
                first..app_versions.len(),
                seed,
                index,
            ));
        }
        let mut db = Db::new(audit);
        db.track_unsent_by_app(apps.len());
        if cfg.reports_server_load() {
            db.track_transition_backlog();
        }
        Self {
            index,
            name: name.to_string(),
            sw,
            db,
            feeder,
            apps,
            app_versions,
            credit,
            rng: stream(seed, StreamKind::Project, index as u64),
            assimilator_rng: stream(seed, StreamKind::Assimilator, index as u64),
            snapshot: Vec::new(),
            snapshot_results: Vec::new(),
            seed,
            downtime: downtime::Downtime::default(),
            cfg,
        }
    }

    /// App `id` (1-based, as `workunit.appid`).
    #[inline]
    pub fn app(&self, id: types::AppId) -> &app::App {
        &self.apps[id as usize - 1]
    }

    pub(crate) fn app_mut(&mut self, id: types::AppId) -> &mut app::App {
        &mut self.apps[id as usize - 1]
    }

    /// The app of workunit `wuid`.
    #[inline]
    pub fn app_of(&self, wuid: types::WuId) -> &app::App {
        self.app(self.db.wu(wuid).appid)
    }

    /// App version `id` (1-based, as `result.app_version_id`).
    #[inline]
    pub fn app_version(&self, id: u32) -> &app_version::AppVersion {
        &self.app_versions[id as usize - 1]
    }

    /// App version `id`, if there is one (a result never sent has version 0).
    #[inline]
    pub(crate) fn find_app_version(&self, id: u32) -> Option<&app_version::AppVersion> {
        self.app_versions.get((id as usize).wrapping_sub(1))
    }

    /// The versions of app `id`.
    pub(crate) fn versions_of(&self, id: types::AppId) -> &[app_version::AppVersion] {
        &self.app_versions[self.app(id).versions.clone()]
    }

    /// The grace period added to DB deadlines (0 under the seed's deadline rule,
    /// spec backend §5 row 2).
    pub fn report_grace_period(&self) -> i64 {
        if self.sw.grace_in_deadline {
            self.cfg.config.report_grace_period
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
pub(crate) fn lookup_result(p: &Project, name: &str) -> types::ResultId {
    let Some((wuid, suffix)) = db::parse_result_name(name) else {
        return ResultId(0);
    };
    let Some(wu) = p.db.workunits.get(wuid) else {
        return ResultId(0);
    };
    wu.results
        .iter()
        .copied()
        .find(|&r| p.db.result(r).suffix == suffix)
        .unwrap_or(ResultId(0))
}

#[cfg(test)]
mod tests {
    use super::db::{Prefetch, ResultRow};
    use super::invariants::test_rows;
    use super::types::*;
    use super::*;

    /// A daemon's walk visits its list in order, each entry once, whatever its
    /// prefetch stages and however the list's length compares with their lag, and
    /// stops at the first entry its visitor declines; entries naming no row (purged
    /// since the list was made) are visited too (spec backend §2.2–§2.8 walk their
    /// lists in id order).
    #[test]
    fn a_walk_visits_its_list_in_order_and_stops_when_told() {
        let mut p = Project::new(0, "main", ProjectConfig::default(), 1, false);
        let mut ids = Vec::new();
        for k in 0..40 {
            let w =
                p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
            if k % 3 == 0 {
                let r = ResultRow::new(w, 0, 0, 0, 0, ServerState::Unsent);
                p.db.insert_result(Actor::Transitioner, r);
            }
            ids.push(w);
        }
        ids.push(WuId(1_000_000));
        let whats = [
            Prefetch::default(),
            Prefetch::RESULTS,
            Prefetch::RESULTS_HOSTS_HAVS,
        ];
        for what in whats {
            for len in [0, 1, 5, what.lag(), what.lag() + 1, ids.len()] {
                let list = &ids[..len];
                let mut seen = Vec::new();
                p.walk(list, what, |_, w| {
                    seen.push(w);
                    true
                });
                assert_eq!(seen, list, "{what:?}, {len} entries");
                let mut seen = Vec::new();
                p.walk(list, what, |_, w| {
                    seen.push(w);
                    seen.len() < 3
                });
                assert_eq!(seen, list[..len.min(3)], "{what:?}, stop after 3");
            }
        }
    }
}
