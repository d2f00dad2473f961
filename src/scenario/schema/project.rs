//! The `[project.NAME]` tables of a scenario file: the server's `config.xml`
//! parameters (spec backend §2.9), the apps' fields (§1.4), the work generator's
//! workunit template (§2.1), daemon periods (§2.0), validator and credit options
//! (§2.5, §6), the switches between seed pseudocode and real BOINC (§5), outages,
//! the assimilator's answers (§2.6) and pinned draws.
//!
//! Each struct is deserialised straight from the scenario file with
//! `deny_unknown_fields`, so a misspelt key is an error that names the valid keys,
//! and serialised back as the effective configuration (`boinc-sim check`,
//! `summary.json`). These are the file's view: durations as [`Duration`] (written
//! back as `"7d"`), and a section a one-app project may give at project level or in
//! its app kept where it was given. What the daemons read is the runtime
//! configuration ([`crate::server::ProjectConfig`]), which [`ProjectConfig::resolve`]
//! builds once when the scenario is loaded (`scenario::plan`).
//!
//! The defaults of a key not given are BOINC's parser defaults, which the runtime
//! types hold: each section here defaults to its runtime default written back.

use crate::base::dist::Dist;
use crate::base::units::Duration;
use crate::engine::Time;
use crate::server::config::{self as rt, CreditScheme, Variant};
use crate::server::config::{Comparison, OutageKind, OutageTarget, WorkGenMode};
use crate::server::resource::GpuType;
use crate::server::{self, assimilator};
use serde::{Deserialize, Serialize};

/// The two conversions of a section whose fields are those of its runtime namesake
/// in `server::config`, durations in `$dur` and every other field in `$val`:
/// `resolve` (file → daemons, at load time, durations to seconds) and `From` (the
/// runtime value written back, which gives the section its defaults).
macro_rules! mirror {
    ($rt:path => $name:ident { val: [$($val:ident),*], dur: [$($dur:ident),*] }) => {
        impl $name {
            /// The runtime section: durations in seconds.
            pub fn resolve(&self) -> $rt {
                #[allow(clippy::clone_on_copy)]
                {
                    use $rt as Rt;
                    Rt {
                        $($val: self.$val.clone(),)*
                        $($dur: self.$dur.get(),)*
                    }
                }
            }
        }

        impl From<&$rt> for $name {
            #[allow(clippy::clone_on_copy)]
            fn from(r: &$rt) -> Self {
                Self {
                    $($val: r.$val.clone(),)*
                    $($dur: Duration(r.$dur),)*
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::from(&<$rt>::default())
            }
        }
    };
}

/// Everything that configures one project's back end (`[project.NAME]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Seed/real-BOINC switches (spec backend §5).
    pub backend: BackendSection,
    /// `config.xml` (spec backend §2.9).
    pub config: SchedConfig,
    /// The project's apps (spec backend §1.4): one `[project.NAME.app]` table, or
    /// several `[[project.NAME.app]]`. Ids 1, 2, … in this order.
    #[serde(
        deserialize_with = "one_or_more_apps",
        serialize_with = "serialize_apps"
    )]
    pub app: Vec<AppConfig>,
    /// Workunit template of the work generator (spec backend §2.1) of a project
    /// with one app; with several, each app gives its own. `None`: not given (a
    /// one-app project is given BOINC's defaults when loaded, [`Self::fill_one_app`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workunit: Option<WuTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_generator: Option<WorkGenConfig>,
    /// Daemon polling periods (spec backend §2.0).
    pub daemons: DaemonPeriods,
    /// The validator's settings of a one-app project (as `workunit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validator: Option<ValidatorConfig>,
    pub file_deleter: FileDeleterConfig,
    /// The assimilation handler's answers in unscripted passes (spec backend §2.6).
    pub assimilator: AssimilatorConfig,
    pub db_purge: DbPurgeConfig,
    /// Pinned values of random draws.
    pub pin: PinnedDraws,
    /// Windows in which the project's scheduler cannot be reached.
    pub outage: Vec<Outage>,
    /// Daemons, or the database, stopped for a window or by a crash process. Left
    /// out of the echoed configuration when absent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub daemon_outage: Vec<DaemonOutage>,
    /// The files of every app that gives none of its own (`[project.NAME.files]`;
    /// spec client §8.1). Left out of the echoed configuration when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<FilesConfig>,
    /// The project's data server (`[project.NAME.data_server]`; spec client §8.5).
    /// Left out of the echoed configuration when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_server: Option<DataServerConfig>,
    /// The scheduler's processes and listen queue (`[project.NAME.server]`; spec
    /// backend §2.4.0). Absent: RPCs take no time and are never refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerConfig>,
}

/// A project's scheduler capacity (`[project.NAME.server]`; spec backend §2.4.0):
/// the runtime [`server::web_server::SchedulerCapacity`]. The processes and the
/// service time have no default: they are the question a designer asks.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// RPCs served at once (the scheduler's CGI or FastCGI processes).
    pub scheduler_processes: u32,
    /// Seconds one RPC takes, before its per-job costs: a number or a distribution.
    pub rpc_service_time: Dist,
    /// Seconds added per job reported.
    #[serde(default)]
    pub per_job_reported: f64,
    /// Seconds added per job sent.
    #[serde(default)]
    pub per_job_sent: f64,
    /// Connections that may wait for a process (Apache's `ListenBacklog`, 511 by
    /// default); one more is refused.
    #[serde(default = "d_listen_backlog")]
    pub listen_backlog: u32,
}

fn d_listen_backlog() -> u32 {
    511
}

impl ServerConfig {
    /// The runtime form.
    pub fn resolve(&self) -> server::web_server::SchedulerCapacity {
        server::web_server::SchedulerCapacity {
            processes: self.scheduler_processes,
            service: self.rpc_service_time,
            per_job_reported: self.per_job_reported,
            per_job_sent: self.per_job_sent,
            listen_backlog: self.listen_backlog,
        }
    }
}

/// One app's files (`files`; spec client §8.1): sizes in bytes, numbers or
/// distributions. All 0 by default: a job with no file moves nothing.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FilesConfig {
    /// Bytes of each workunit's own input file, drawn once per workunit.
    #[serde(default = "d_zero_dist")]
    pub input: Dist,
    /// Bytes of each result's output file, drawn once per result.
    #[serde(default = "d_zero_dist")]
    pub output: Dist,
    /// Sticky input files shared by the app's workunits: workunit `id` also needs
    /// sticky file `id mod sticky_files`, which a host downloads once and keeps.
    #[serde(default)]
    pub sticky_files: u32,
    /// Bytes of each sticky file.
    #[serde(default)]
    pub sticky_bytes: f64,
}

fn d_zero_dist() -> Dist {
    Dist::fixed(0.0)
}

impl FilesConfig {
    /// The runtime form.
    pub fn resolve(&self) -> crate::client::files::AppFiles {
        crate::client::files::AppFiles {
            input: self.input,
            output: self.output,
            sticky_files: self.sticky_files,
            sticky_bytes: self.sticky_bytes,
        }
    }

    /// Whether any job of the app moves a byte.
    pub fn has_bytes(&self) -> bool {
        !self.input.always_zero()
            || !self.output.always_zero()
            || (self.sticky_files > 0 && self.sticky_bytes > 0.0)
    }
}

/// A project's data server (`[project.NAME.data_server]`; spec client §8.5): its
/// link's capacity in each direction, bytes/s (absent: unlimited), its own
/// outages, separate from the scheduler's, and how many transfers it serves at
/// once.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataServerConfig {
    /// Bytes/s the server can send to all hosts together (downloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<f64>,
    /// Bytes/s the server can receive from all hosts together (uploads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<f64>,
    /// Windows `[start, start + duration)` in which every transfer fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outage: Vec<DataOutage>,
    /// Transfers the web server serves at once, both directions together
    /// (Apache's `MaxRequestWorkers`); one that finds them all taken fails
    /// transiently (absent: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
}

/// A window in which a data server is down.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataOutage {
    pub start: Duration,
    pub duration: Duration,
}

impl DataServerConfig {
    /// The runtime form.
    pub fn resolve(&self) -> crate::client::files::DataServer {
        crate::client::files::DataServer {
            download: self.download.unwrap_or(f64::INFINITY),
            upload: self.upload.unwrap_or(f64::INFINITY),
            outages: (self.outage.iter())
                .map(|o| {
                    (
                        o.start.get(),
                        o.start.get().saturating_add(o.duration.get()),
                    )
                })
                .collect(),
            max_connections: self.max_connections.unwrap_or(u32::MAX),
        }
    }
}

impl Default for ProjectConfig {
    /// One default app, every section at BOINC's defaults.
    fn default() -> Self {
        Self {
            backend: BackendSection::default(),
            config: SchedConfig::default(),
            app: vec![AppConfig::default()],
            workunit: None,
            work_generator: None,
            daemons: DaemonPeriods::default(),
            validator: None,
            file_deleter: FileDeleterConfig::default(),
            assimilator: AssimilatorConfig::default(),
            db_purge: DbPurgeConfig::default(),
            pin: PinnedDraws::default(),
            outage: Vec::new(),
            daemon_outage: Vec::new(),
            files: None,
            data_server: None,
            server: None,
        }
    }
}

/// The defaults of the sections an app may take from its project.
static SECTION_DEFAULTS: std::sync::LazyLock<(WuTemplate, WorkGenConfig, ValidatorConfig)> =
    std::sync::LazyLock::new(Default::default);

impl ProjectConfig {
    /// Each app with its daemons' settings, id 1 first: its own tables, else the
    /// project-level ones, else BOINC's defaults ([`AppSettings`]).
    pub fn apps(&self) -> impl Iterator<Item = AppSettings<'_>> + '_ {
        let d = &*SECTION_DEFAULTS;
        self.app.iter().map(move |a| AppSettings {
            app: a,
            workunit: (a.workunit.as_ref())
                .or(self.workunit.as_ref())
                .unwrap_or(&d.0),
            work_generator: (a.work_generator.as_ref())
                .or(self.work_generator.as_ref())
                .unwrap_or(&d.1),
            validator: (a.validator.as_ref())
                .or(self.validator.as_ref())
                .unwrap_or(&d.2),
        })
    }

    /// Gives a one-app project whose app has none of its own the project-level
    /// template, work generator and validator, at BOINC's defaults where the file
    /// gives none: the effective configuration of such a project then shows every
    /// setting its daemons use. A project with several apps keeps none at project
    /// level: its apps' own tables are its settings.
    pub(crate) fn fill_one_app(&mut self) {
        let [a] = self.app.as_slice() else {
            return;
        };
        if a.workunit.is_none() {
            self.workunit.get_or_insert_with(Default::default);
        }
        if a.work_generator.is_none() {
            self.work_generator.get_or_insert_with(Default::default);
        }
        if a.validator.is_none() {
            self.validator.get_or_insert_with(Default::default);
        }
    }

    /// The configuration the project's daemons read: the switches of `backend`
    /// resolved, each app with its own template, work generator and validator (its
    /// tables, else the project's, else BOINC's defaults, as [`Self::apps`]), every
    /// duration in seconds and each outage's `request_delay` decided. Built once,
    /// when the scenario is loaded, so that nothing falls back while the run goes.
    pub fn resolve(&self) -> server::ProjectConfig {
        let config = self.config.resolve();
        server::ProjectConfig {
            switches: self.backend.resolve(),
            apps: self.apps().map(|s| s.resolve()).collect(),
            daemons: self.daemons.resolve(),
            file_deleter: self.file_deleter.resolve(),
            assimilator: self.assimilator.resolve(),
            db_purge: self.db_purge.resolve(),
            pin: self.pin.resolve(),
            outage: self.outage.iter().map(|o| o.resolve(&config)).collect(),
            server: self.server.as_ref().map(ServerConfig::resolve),
            daemon_outage: self.daemon_outage.iter().map(|o| o.resolve()).collect(),
            config,
        }
    }
}

/// `config.xml` parameters used by the scheduler and daemons (spec backend §2.9);
/// the meaning of each is on [`rt::SchedConfig`].
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SchedConfig {
    pub report_grace_period: Duration,
    pub delete_delay: Duration,
    pub daily_result_quota: i32,
    pub max_wus_to_send: i32,
    pub max_ncpus: i32,
    pub max_wus_in_progress: i32,
    pub min_sendwork_interval: Duration,
    pub resend_lost_results: bool,
    pub send_result_abort: bool,
    pub one_result_per_user_per_wu: bool,
    pub one_result_per_host_per_wu: bool,
    pub reliable_max_avg_turnaround: Duration,
    pub reliable_on_priority: i32,
    pub reliable_reduced_delay_bound: f64,
    pub reliable_priority_on_over: i32,
    pub reliable_priority_on_over_except_error: i32,
    pub hr_class_static: bool,
    pub shmem_work_items: u32,
    pub ignore_delay_bound: bool,
    pub report_max: u32,
    pub next_rpc_delay: Duration,
    pub maintenance_delay: Duration,
    /// Written back only when not BOINC's default 1.
    #[serde(skip_serializing_if = "is_one_i32")]
    pub gpu_multiplier: i32,
}

fn is_one_i32(v: &i32) -> bool {
    *v == 1
}

mirror!(rt::SchedConfig => SchedConfig {
    val: [
        daily_result_quota, max_wus_to_send, max_ncpus, max_wus_in_progress,
        resend_lost_results, send_result_abort, one_result_per_user_per_wu,
        one_result_per_host_per_wu, reliable_on_priority, reliable_reduced_delay_bound,
        reliable_priority_on_over, reliable_priority_on_over_except_error,
        hr_class_static, shmem_work_items, ignore_delay_bound, report_max, gpu_multiplier
    ],
    dur: [
        report_grace_period, delete_delay, min_sendwork_interval,
        reliable_max_avg_turnaround, next_rpc_delay, maintenance_delay
    ]
});

/// An `[project.NAME.app]` table: the APP row's fields the back end uses (spec
/// backend §1.4, meanings on [`rt::AppConfig`]), its versions, and the sections of
/// its own daemons when it gives them.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AppConfig {
    pub name: String,
    pub target_nresults: i32,
    pub homogeneous_redundancy: i32,
    pub homogeneous_app_version: bool,
    pub min_avg_pfc: f64,
    pub host_scale_check: bool,
    pub wrong_output_collision_frac: f64,
    /// The app's versions (APP_VERSION rows, spec backend §1.4), numbered across
    /// the project's apps in the order listed (the first app's from 1). None given:
    /// one plain CPU version for every platform.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub version: Vec<AppVersionConfig>,
    /// This app's workunit template (`[project.NAME.app.workunit]`); absent: the
    /// project's `[project.NAME.workunit]`, which only a one-app project may give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workunit: Option<WuTemplate>,
    /// This app's work generator; absent: the project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_generator: Option<WorkGenConfig>,
    /// This app's validator settings; absent: the project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validator: Option<ValidatorConfig>,
    /// This app's files (`[project.NAME.app.files]`); absent: the project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<FilesConfig>,
}

impl Default for AppConfig {
    /// The runtime default app's fields, no versions and no sections of its own.
    fn default() -> Self {
        let r = rt::AppConfig::default();
        Self {
            name: r.name,
            target_nresults: r.target_nresults,
            homogeneous_redundancy: r.homogeneous_redundancy,
            homogeneous_app_version: r.homogeneous_app_version,
            min_avg_pfc: r.min_avg_pfc,
            host_scale_check: r.host_scale_check,
            wrong_output_collision_frac: r.wrong_output_collision_frac,
            version: Vec::new(),
            workunit: None,
            work_generator: None,
            validator: None,
            files: None,
        }
    }
}

/// Reads `app` in either form: one `[project.NAME.app]` table (a project with one
/// app), or several `[[project.NAME.app]]` tables (spec backend §1.4: a project has
/// one or more apps). Serde alone cannot take both: it would read a table where a
/// list is expected as the list's fields in order.
pub(crate) fn one_or_more_apps<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<AppConfig>, D::Error> {
    use serde::de::{self, MapAccess, SeqAccess, Visitor};
    struct Apps;
    impl<'de> Visitor<'de> for Apps {
        type Value = Vec<AppConfig>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("one [project.NAME.app] table, or [[project.NAME.app]] tables")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Ok(vec![AppConfig::deserialize(
                de::value::MapAccessDeserializer::new(map),
            )?])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut apps = Vec::new();
            while let Some(a) = seq.next_element::<AppConfig>()? {
                apps.push(a);
            }
            if apps.is_empty() {
                return Err(de::Error::custom(
                    "an empty list of apps; expected at least one [[project.NAME.app]] table",
                ));
            }
            Ok(apps)
        }
    }
    d.deserialize_any(Apps)
}

/// Writes `app` as it is read: one table for a project with one app (so that the
/// effective configuration of such a scenario keeps its shape), a list otherwise.
pub(crate) fn serialize_apps<S: serde::Serializer>(
    apps: &[AppConfig],
    s: S,
) -> Result<S::Ok, S::Error> {
    match apps {
        [one] => one.serialize(s),
        many => many.serialize(s),
    }
}

/// One app with the settings its own daemons read: its work generator's template and
/// mode, and its validator (spec backend §2.1, §2.5; BOINC runs one work generator
/// and one validator per app). An app takes the project-level table of a section it
/// does not give; with several apps the project-level tables are refused (see
/// `scenario::validate`), so each app's settings are exactly what its own tables say.
#[derive(Clone, Copy, Debug)]
pub struct AppSettings<'a> {
    pub app: &'a AppConfig,
    pub workunit: &'a WuTemplate,
    pub work_generator: &'a WorkGenConfig,
    pub validator: &'a ValidatorConfig,
}

impl AppSettings<'_> {
    /// The runtime app: its fields, versions and the sections it takes.
    pub fn resolve(&self) -> rt::AppConfig {
        let a = self.app;
        rt::AppConfig {
            name: a.name.clone(),
            target_nresults: a.target_nresults,
            homogeneous_redundancy: a.homogeneous_redundancy,
            homogeneous_app_version: a.homogeneous_app_version,
            min_avg_pfc: a.min_avg_pfc,
            host_scale_check: a.host_scale_check,
            wrong_output_collision_frac: a.wrong_output_collision_frac,
            version: a.version.iter().map(AppVersionConfig::resolve).collect(),
            workunit: self.workunit.resolve(),
            work_generator: self.work_generator.resolve(),
            validator: self.validator.resolve(),
        }
    }
}

/// One `[[project.NAME.app.version]]`: an APP_VERSION of an app (spec backend §1.4,
/// §2.4.4; meanings on [`rt::AppVersionConfig`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AppVersionConfig {
    pub platform: String,
    pub plan_class: String,
    pub avg_ncpus: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coproc: Option<CoprocUsage>,
    pub flops_scale: f64,
    pub flops_estimate_error: f64,
}

impl AppVersionConfig {
    /// The runtime version.
    pub fn resolve(&self) -> rt::AppVersionConfig {
        rt::AppVersionConfig {
            platform: self.platform.clone(),
            plan_class: self.plan_class.clone(),
            avg_ncpus: self.avg_ncpus,
            coproc: self.coproc.map(|c| c.resolve()),
            flops_scale: self.flops_scale,
            flops_estimate_error: self.flops_estimate_error,
        }
    }
}

impl Default for AppVersionConfig {
    fn default() -> Self {
        let r = rt::AppVersionConfig::default();
        Self {
            platform: r.platform,
            plan_class: r.plan_class,
            avg_ncpus: r.avg_ncpus,
            coproc: r.coproc.as_ref().map(CoprocUsage::from),
            flops_scale: r.flops_scale,
            flops_estimate_error: r.flops_estimate_error,
        }
    }
}

/// The GPU usage of an app version (`HOST_USAGE::proc_type`, `gpu_usage`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CoprocUsage {
    #[serde(rename = "type")]
    pub kind: GpuType,
    /// GPU instances a job uses (0.5: two jobs share one GPU).
    pub count: f64,
}

impl CoprocUsage {
    pub fn resolve(&self) -> rt::CoprocUsage {
        rt::CoprocUsage {
            kind: self.kind,
            count: self.count,
        }
    }
}

impl From<&rt::CoprocUsage> for CoprocUsage {
    fn from(r: &rt::CoprocUsage) -> Self {
        Self {
            kind: r.kind,
            count: r.count,
        }
    }
}

/// The work generator's workunit template (spec backend §2.1; meanings on
/// [`rt::WuTemplate`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WuTemplate {
    pub min_quorum: i32,
    pub target_nresults: i32,
    pub max_error_results: i32,
    pub max_total_results: i32,
    pub max_success_results: i32,
    pub delay_bound: Duration,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    pub rsc_memory_bound: f64,
    pub rsc_disk_bound: f64,
    pub priority: i32,
    pub true_size: Dist,
}

mirror!(rt::WuTemplate => WuTemplate {
    val: [
        min_quorum, target_nresults, max_error_results, max_total_results,
        max_success_results, rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound,
        rsc_disk_bound, priority, true_size
    ],
    dur: [delay_bound]
});

/// How the work generator creates workunits (spec backend §2.1 step 4; meanings on
/// [`rt::WorkGenConfig`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkGenConfig {
    pub mode: WorkGenMode,
    pub count: u32,
    pub start: Duration,
    pub interval: Duration,
    pub cushion: u32,
    pub max_workunits: u64,
    /// `batches`: job sizes; left out of the echoed configuration when 1.
    #[serde(skip_serializing_if = "Dist::is_one")]
    pub size: Dist,
}

mirror!(rt::WorkGenConfig => WorkGenConfig {
    val: [mode, count, cushion, max_workunits, size],
    dur: [start, interval]
});

/// Polling periods of the daemons (spec backend §2.0); 0 turns a periodic pass off.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonPeriods {
    pub transitioner: Duration,
    pub validator: Duration,
    pub assimilator: Duration,
    pub file_deleter: Duration,
    pub db_purge: Duration,
    pub feeder: Duration,
    pub work_generator: Duration,
}

mirror!(rt::DaemonPeriods => DaemonPeriods {
    val: [],
    dur: [transitioner, validator, assimilator, file_deleter, db_purge, feeder, work_generator]
});

/// The validator's settings (spec backend §2.5, §6; meanings on
/// [`rt::ValidatorConfig`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ValidatorConfig {
    pub comparison: Comparison,
    pub tolerance: f64,
    pub credit: CreditScheme,
    pub grant_claimed_credit: bool,
    pub max_granted_credit: f64,
    pub max_claimed_credit: f64,
}

mirror!(rt::ValidatorConfig => ValidatorConfig {
    val: [
        comparison, tolerance, credit, grant_claimed_credit, max_granted_credit,
        max_claimed_credit
    ],
    dur: []
});

/// The file deleter's settings (spec backend §2.7).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FileDeleterConfig {
    pub failure_prob: f64,
}

mirror!(rt::FileDeleterConfig => FileDeleterConfig { val: [failure_prob], dur: [] });

/// db_purge's settings (spec backend §2.8).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct DbPurgeConfig {
    pub min_age: Duration,
}

mirror!(rt::DbPurgeConfig => DbPurgeConfig { val: [], dur: [min_age] });

/// Pinned values for the random draws the spec mentions (meanings on
/// [`rt::PinnedDraws`]). Unset = drawn from the project's stream.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PinnedDraws {
    pub trust: Option<f64>,
    pub day_offset: Option<f64>,
    pub slot_offset: Option<u32>,
    pub result_random: Option<i32>,
    pub file_delete: Option<f64>,
}

mirror!(rt::PinnedDraws => PinnedDraws {
    val: [trust, day_offset, slot_offset, result_random, file_delete],
    dur: []
});

/// The assimilation handler's answers in unscripted passes (spec backend §2.6).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AssimilatorConfig {
    pub defer_prob: f64,
    pub error_prob: f64,
}

mirror!(assimilator::AssimilatorConfig => AssimilatorConfig {
    val: [defer_prob, error_prob],
    dur: []
});

macro_rules! backend_section {
    ($($(#[$m:meta])* $name:ident : boinc = $b:expr, seed = $s:expr;)+) => {
        /// The `[project.X.backend]` section: a variant and optional overrides of
        /// its switches ([`rt::Switches`], spec backend §5).
        #[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
        #[serde(default, deny_unknown_fields)]
        pub struct BackendSection {
            pub variant: Variant,
            $(#[serde(skip_serializing_if = "Option::is_none")] pub $name: Option<bool>,)+
        }

        impl BackendSection {
            /// The preset of `variant` with this section's overrides applied.
            pub fn resolve(&self) -> rt::Switches {
                let mut s = rt::Switches::preset(self.variant);
                $(if let Some(v) = self.$name { s.$name = v; })+
                s
            }
        }
    };
}

rt::with_switches!(backend_section);

/// A window `[start, start + duration)` in which scheduler RPCs fail (meanings on
/// [`rt::Outage`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub start: Duration,
    pub duration: Duration,
    #[serde(default)]
    pub kind: OutageKind,
    /// `kind = "down"`: the reply's `request_delay`, if not the project's
    /// `config.maintenance_delay`.
    #[serde(default)]
    pub maintenance_delay: Option<Duration>,
}

impl Outage {
    /// The runtime outage, its `request_delay` decided: its own
    /// `maintenance_delay`, else the project's `config` (spec backend §2.9).
    pub fn resolve(&self, config: &rt::SchedConfig) -> rt::Outage {
        let delay: Time = self
            .maintenance_delay
            .map_or(config.maintenance_delay, |d| d.get());
        rt::Outage {
            start: self.start.get(),
            duration: self.duration.get(),
            kind: self.kind,
            maintenance_delay: delay,
            database: false,
        }
    }
}

/// One `[[project.NAME.daemon_outage]]`: a daemon, or the database, stopped during
/// a window (`start`, `end`) or by a crash process (`mtbf`, `repair`); meanings on
/// [`rt::OutageSchedule`]. Exactly one of the two forms, which the validator checks.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DaemonOutage {
    pub daemon: OutageTarget,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
    /// Mean time between failures: the mean of the exponential up periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtbf: Option<Duration>,
    /// How long a repair takes, seconds: a number, a duration or a distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<Dist>,
}

impl DaemonOutage {
    /// The runtime outage: a window when `mtbf` is not given, else a crash process
    /// (a key left out of a checked file is 0 / a 0 s repair).
    pub fn resolve(&self) -> rt::DaemonOutage {
        let get = |d: Option<Duration>| d.map_or(0, |d| d.get());
        let schedule = match self.mtbf {
            None => rt::OutageSchedule::Window {
                start: get(self.start),
                end: get(self.end),
            },
            Some(mtbf) => rt::OutageSchedule::Crashes {
                mtbf: mtbf.get(),
                repair: self.repair.unwrap_or(Dist::fixed(0.0)),
            },
        };
        rt::DaemonOutage {
            target: self.daemon,
            schedule,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_on_top_of_the_variant() {
        let sec = BackendSection {
            variant: Variant::Seed,
            errors_after_canonical: Some(true),
            ..Default::default()
        };
        let s = sec.resolve();
        assert!(s.errors_after_canonical);
        assert!(!s.modern_needed);
        assert!(rt::Switches::preset(Variant::Boinc).modern_needed);
    }

    #[test]
    fn the_default_project_resolves_to_the_runtime_default() {
        assert_eq!(
            ProjectConfig::default().resolve(),
            server::ProjectConfig::default()
        );
    }

    #[test]
    fn an_app_takes_the_project_sections_it_does_not_give() {
        let mut p = ProjectConfig {
            workunit: Some(WuTemplate {
                delay_bound: Duration(100),
                ..Default::default()
            }),
            ..Default::default()
        };
        p.app[0].validator = Some(ValidatorConfig {
            tolerance: 0.5,
            ..Default::default()
        });
        let r = p.resolve();
        assert_eq!(r.apps[0].workunit.delay_bound, 100);
        assert_eq!(r.apps[0].validator.tolerance, 0.5);
        assert_eq!(r.apps[0].work_generator, rt::WorkGenConfig::default());
    }
}
