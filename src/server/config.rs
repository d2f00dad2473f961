//! Server-side configuration of one project: the `config.xml` parameters the daemons
//! read (spec backend §2.9), the app's fields (§1.4), the work generator's workunit
//! template (§2.1), daemon periods (§2.0), validator and credit options (§2.5, §6),
//! and the switches between seed pseudocode and real BOINC (§5).
//!
//! These are the settings as the daemons read them, resolved once when the scenario
//! is loaded: every duration in seconds, each app with its own template, work
//! generator and validator, every default applied, so that nothing falls back while
//! the run goes. The scenario file's tables, which may leave a section to the
//! project or a key to its default, are separate types (`scenario::schema::project`)
//! that resolve into these. Only the value enums (a mode, a scheme, a variant) are
//! shared with them, with their spelling in the file.
//!
//! Defaults are BOINC's parser defaults unless a comment says otherwise; the file's
//! defaults are these.

use crate::base::dist::Dist;
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// `config.xml` parameters used by the scheduler and daemons (spec backend §2.9).
#[derive(Clone, Debug, PartialEq)]
pub struct SchedConfig {
    /// Seconds added to the DB deadline (not told to the client).
    pub report_grace_period: Time,
    /// Seconds after the last report before files may be deleted.
    pub delete_delay: Time,
    /// Jobs per (host, app version) per day per CPU. make_project writes 500, which is
    /// the default here; 0 reproduces quirk Q5 (see `backend.zero_quota_blocks`).
    pub daily_result_quota: i32,
    /// Jobs per RPC per CPU (0 = unlimited).
    pub max_wus_to_send: i32,
    /// Upper bound on a host's CPU count as seen by the scheduler.
    pub max_ncpus: i32,
    /// Jobs in progress per CPU (0 = unlimited).
    pub max_wus_in_progress: i32,
    /// Seconds between work-sending RPCs of one host (0 = no limit).
    pub min_sendwork_interval: Time,
    /// Resend jobs a client has lost (spec backend §2.4.5).
    pub resend_lost_results: bool,
    /// Tell clients to abort jobs the server no longer needs (§2.4.6).
    pub send_result_abort: bool,
    pub one_result_per_user_per_wu: bool,
    pub one_result_per_host_per_wu: bool,
    /// Seconds; 0 disables the turnaround test of `reliable`.
    pub reliable_max_avg_turnaround: Time,
    /// Priority from which a job needs a reliable host (0 = off).
    pub reliable_on_priority: i32,
    /// Fraction of `delay_bound` used for jobs sent to reliable hosts (0 = off).
    pub reliable_reduced_delay_bound: f64,
    /// Priority boost of retries created after a result ended (0 = off).
    pub reliable_priority_on_over: i32,
    /// Same, but only when no result errored.
    pub reliable_priority_on_over_except_error: i32,
    /// Never reset `hr_class`.
    pub hr_class_static: bool,
    /// Feeder cache slots (`MAX_WU_RESULTS`).
    pub shmem_work_items: u32,
    /// Skip the deadline feasibility check.
    pub ignore_delay_bound: bool,
    /// Reported results handled per RPC (0 = all).
    pub report_max: u32,
    /// Seconds a client is asked to wait before the next RPC (0 = not sent).
    pub next_rpc_delay: Time,
    /// `request_delay` of the reply a down scheduler sends (`maintenance_delay`,
    /// spec backend §2.9; BOINC's default 3600 s). An outage can override it.
    pub maintenance_delay: Time,
    /// GPU jobs per day per GPU instance relative to a CPU's (`gpu_multiplier`, spec
    /// backend §2.4.4 step 3 and §2.4.7; BOINC's default 1).
    pub gpu_multiplier: i32,
}

impl Default for SchedConfig {
    fn default() -> Self {
        Self {
            report_grace_period: 0,
            delete_delay: 0,
            daily_result_quota: 500,
            max_wus_to_send: 10,
            max_ncpus: 64,
            max_wus_in_progress: 0,
            min_sendwork_interval: 0,
            resend_lost_results: false,
            send_result_abort: false,
            one_result_per_user_per_wu: false,
            one_result_per_host_per_wu: false,
            reliable_max_avg_turnaround: 0,
            reliable_on_priority: 0,
            reliable_reduced_delay_bound: 0.0,
            reliable_priority_on_over: 0,
            reliable_priority_on_over_except_error: 0,
            hr_class_static: false,
            shmem_work_items: 100,
            ignore_delay_bound: false,
            report_max: 0,
            next_rpc_delay: 0,
            maintenance_delay: 3600,
            gpu_multiplier: 1,
        }
    }
}

/// One app (APP row, spec backend §1.4) with the settings of its own daemons: BOINC
/// runs one work generator and one validator per app, each reading its app's
/// workunit template and command line (spec backend §2.1, §2.5).
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    pub name: String,
    /// Adaptive replication level; 0 or 1 = off (spec backend §2.4.4 step 5).
    pub target_nresults: i32,
    /// Homogeneous redundancy type: 0 off, 1 fine, 2 coarse (§2.4.7).
    pub homogeneous_redundancy: i32,
    /// Commit a WU to the first app version it is sent with.
    pub homogeneous_app_version: bool,
    /// credit_new normalisation (§6.2); 0 = not yet computed.
    pub min_avg_pfc: f64,
    /// credit_new: require CV ≥ 10 before host scaling.
    pub host_scale_check: bool,
    /// Probability that a wrong output takes the value its host's error class shares,
    /// so that wrong results can agree and form a quorum (0: wrong outputs never
    /// match; near 1: a tiny output space, such as a yes/no answer). Simulator-only:
    /// BOINC has no such field (see `client::truth`).
    pub wrong_output_collision_frac: f64,
    /// The app's versions (APP_VERSION rows, spec backend §1.4), numbered across
    /// the project's apps in the order listed (the first app's from 1). Empty: one
    /// plain CPU version for every platform.
    pub version: Vec<AppVersionConfig>,
    /// The template its work generator creates workunits from.
    pub workunit: WuTemplate,
    pub work_generator: WorkGenConfig,
    pub validator: ValidatorConfig,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            name: "app".into(),
            target_nresults: 0,
            homogeneous_redundancy: 0,
            homogeneous_app_version: false,
            min_avg_pfc: 0.0,
            host_scale_check: false,
            wrong_output_collision_frac: 0.0,
            version: Vec::new(),
            workunit: WuTemplate::default(),
            work_generator: WorkGenConfig::default(),
            validator: ValidatorConfig::default(),
        }
    }
}

/// One APP_VERSION of an app: where it runs and what it uses (spec backend §1.4,
/// §2.4.4; BOINC's plan classes set `avg_ncpus`, the GPU usage and the speed).
#[derive(Clone, Debug, PartialEq)]
pub struct AppVersionConfig {
    /// BOINC platform name (`x86_64-pc-linux-gnu`, `windows_x86_64`, …); "" = every
    /// host's own platform.
    pub platform: String,
    /// Plan class; "" = a plain CPU version.
    pub plan_class: String,
    /// CPUs a job uses; above 1 the version is multi-threaded.
    pub avg_ncpus: f64,
    /// GPU usage: type and instances (a fraction shares a GPU between jobs).
    pub coproc: Option<CoprocUsage>,
    /// Speed the plan class gives relative to the devices' peak: the version's peak
    /// FLOPS on a host are `flops_scale × (p_fpops × avg_ncpus + GPU peak × count)`.
    pub flops_scale: f64,
    /// Factor by which the server's FLOPS estimate of this version is wrong (10: it
    /// believes the version 10× faster than it is). Simulator-only: a badly written
    /// plan class, as credit_new must correct (spec backend §6.2).
    pub flops_estimate_error: f64,
}

impl Default for AppVersionConfig {
    fn default() -> Self {
        Self {
            platform: String::new(),
            plan_class: String::new(),
            avg_ncpus: 1.0,
            coproc: None,
            flops_scale: 1.0,
            flops_estimate_error: 1.0,
        }
    }
}

/// The GPU usage of an app version (`HOST_USAGE::proc_type`, `gpu_usage`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoprocUsage {
    pub kind: super::resource::GpuType,
    /// GPU instances a job uses (0.5: two jobs share one GPU).
    pub count: f64,
}

/// The work generator's workunit template (spec backend §2.1). Defaults are those of
/// `tools/backend_lib.h`.
#[derive(Clone, Debug, PartialEq)]
pub struct WuTemplate {
    pub min_quorum: i32,
    pub target_nresults: i32,
    pub max_error_results: i32,
    pub max_total_results: i32,
    pub max_success_results: i32,
    /// Seconds from send to deadline.
    pub delay_bound: Time,
    /// Estimated FLOPs of one instance.
    pub rsc_fpops_est: f64,
    /// FLOP cap; credit is capped at it, and the client aborts a job that runs
    /// past `rsc_fpops_bound / flops` seconds (spec backend §1.2; BOINC's `app_start`).
    pub rsc_fpops_bound: f64,
    /// Bytes of RAM a host must have.
    pub rsc_memory_bound: f64,
    /// Bytes of disk a host must have.
    pub rsc_disk_bound: f64,
    pub priority: i32,
    /// Simulator-only: the true size of a workunit as a multiple of
    /// `rsc_fpops_est`, drawn per workunit when it is created (a number is a fixed
    /// factor). Real projects estimate badly; the server only ever sees the
    /// estimate. Default 1: every job is exactly as large as estimated.
    pub true_size: Dist,
}

impl Default for WuTemplate {
    fn default() -> Self {
        Self {
            min_quorum: 1,
            target_nresults: 1,
            max_error_results: 1,
            max_total_results: 1,
            max_success_results: 1,
            delay_bound: 7 * 86_400,
            rsc_fpops_est: 3600e9,
            rsc_fpops_bound: 86_400e9,
            rsc_memory_bound: 5e8,
            rsc_disk_bound: 1e9,
            priority: 0,
            true_size: Dist::fixed(1.0),
        }
    }
}

/// How the work generator creates workunits (spec backend §2.1 step 4).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WorkGenMode {
    /// No automatic generation (scripted workunits only).
    #[default]
    None,
    /// `count` workunits created at once at time `start`.
    Batch,
    /// One workunit every `interval` seconds from `start`.
    Rate,
    /// Keep at least `cushion` UNSENT results: the sample work generator's loop.
    Cushion,
    /// A batch of `count` jobs every `interval` seconds from `start`, each a BATCH
    /// row with its workunits (spec backend §1.5), of sizes drawn from `size`.
    Batches,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorkGenConfig {
    pub mode: WorkGenMode,
    /// Batch size (`batch`, `batches`), or workunits per pass (`cushion`, 0 = fill
    /// up).
    pub count: u32,
    /// When generation starts.
    pub start: Time,
    /// `rate`: seconds between two workunits.
    pub interval: Time,
    /// `cushion`: UNSENT results to keep (sample generator: 10... scaled to the project).
    pub cushion: u32,
    /// Stop after this many workunits in all (0 = no limit).
    pub max_workunits: u64,
    /// `batches`: each job's size as a multiple of the template's `rsc_fpops_est`
    /// (and bound). Default 1.
    pub size: Dist,
}

impl Default for WorkGenConfig {
    fn default() -> Self {
        Self {
            mode: WorkGenMode::None,
            count: 0,
            start: 0,
            interval: 3600,
            cushion: 10,
            max_workunits: 0,
            size: Dist::fixed(1.0),
        }
    }
}

/// Polling periods of the daemons (spec backend §2.0). A period of 0 turns the
/// periodic pass off (scripted passes still run).
#[derive(Clone, Debug, PartialEq)]
pub struct DaemonPeriods {
    pub transitioner: Time,
    pub validator: Time,
    pub assimilator: Time,
    pub file_deleter: Time,
    pub db_purge: Time,
    pub feeder: Time,
    pub work_generator: Time,
}

impl Default for DaemonPeriods {
    fn default() -> Self {
        Self {
            transitioner: 5,
            validator: 5,
            assimilator: 10,
            file_deleter: 5,
            db_purge: 300,
            feeder: 5,
            work_generator: 10,
        }
    }
}

impl DaemonPeriods {
    /// All periodic passes off: a fully scripted scenario.
    pub fn all_off() -> Self {
        Self {
            transitioner: 0,
            validator: 0,
            assimilator: 0,
            file_deleter: 0,
            db_purge: 0,
            feeder: 0,
            work_generator: 0,
        }
    }
}

/// How the validator compares two outputs (`compare_results`, spec backend §2.5).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// Outputs match iff identical.
    #[default]
    Bitwise,
    /// Outputs match iff they differ by at most `tolerance` (absolute).
    Fuzzy,
}

/// Credit scheme (spec backend §6).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CreditScheme {
    /// credit_new, BOINC's default since 2010 (§6.2).
    #[default]
    CreditNew,
    /// Classic claimed/granted median-mean credit (≤ 2010, §6.1).
    Classic,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValidatorConfig {
    pub comparison: Comparison,
    /// Absolute tolerance of the fuzzy comparison.
    pub tolerance: f64,
    pub credit: CreditScheme,
    /// Grant each VALID result its own claim (classic `--grant_claimed_credit`).
    pub grant_claimed_credit: bool,
    /// Cap on granted credit (`--max_granted_credit`; 73,000,000 by default).
    pub max_granted_credit: f64,
    /// Classic: results claiming more are INVALID (0 = off).
    pub max_claimed_credit: f64,
}

impl Default for ValidatorConfig {
    fn default() -> Self {
        Self {
            comparison: Comparison::Bitwise,
            tolerance: 0.0,
            credit: CreditScheme::CreditNew,
            grant_claimed_credit: false,
            max_granted_credit: 200.0 * 1000.0 * 365.0,
            max_claimed_credit: 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct FileDeleterConfig {
    /// Probability that deleting one item's files fails (→ `FILE_DELETE_ERROR`).
    pub failure_prob: f64,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct DbPurgeConfig {
    /// Only purge workunits whose files were deleted at least this long ago
    /// (`--min_age_days`).
    pub min_age: Time,
}

/// Pinned values for the random draws the spec mentions, so that a scripted scenario
/// reproduces an exact situation. Unset = drawn from the project's stream.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PinnedDraws {
    /// `U` of the adaptive-replication trust test (`trusted` iff `U > 1/CV`, §2.4.7).
    pub trust: Option<f64>,
    /// `U(host.id)` of the per-host day offset (§2.4.1 step 5).
    pub day_offset: Option<f64>,
    /// Random start offset of the cache scan in `send_work` (§2.4.4 step 1).
    pub slot_offset: Option<u32>,
    /// `result.random` of every result created (BOINC's `int`).
    pub result_random: Option<i32>,
    /// Draw deciding whether a file deletion fails (`< failure_prob` fails).
    pub file_delete: Option<f64>,
}

/// The two presets of [`Switches`] (spec backend §5).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Real BOINC (HEAD), the default.
    #[default]
    Boinc,
    /// The 2007 seed pseudocode (BackendLogic / BackendState).
    Seed,
}

/// Calls the macro `$then` with the list of switches (name, doc, `boinc` and `seed`
/// presets), written once here: it defines [`Switches`] in this module and the
/// file's `[project.NAME.backend]` section, whose keys are the same names.
macro_rules! with_switches {
    ($then:ident) => {
        $then! {
            /// §5 row 2, Q4: the DB deadline and `transition_time` include
            /// `report_grace_period` (seed: `report_deadline = now + delay_bound`).
            grace_in_deadline: boinc = true, seed = false;
            /// §5 row 4: the pre-2007 infeasible queue marks results that no host could take
            /// OVER/COULDNT_SEND.
            legacy_couldnt_send: boinc = false, seed = true;
            /// §5 rows 3, 5, 23: HAV daily quotas and consecutive-valid bookkeeping, with the
            /// transitioner's timeout penalty.
            hav_accounting: boinc = true, seed = false;
            /// §5 row 6: `nsuccess` excludes INVALID results (seed: every SUCCESS counts).
            success_excludes_invalid: boinc = true, seed = false;
            /// §5 rows 6, 13, 19: an INIT result whose canonical's files are gone becomes
            /// TOO_LATE in the transitioner (seed: the validator marks it INVALID).
            too_late_state: boinc = true, seed = false;
            /// §5 row 7: errors are CLIENT_ERROR except user aborts (exit 203), plus
            /// VALIDATE_ERROR (seed: every CLIENT_ERROR and nothing else).
            modern_error_count: boinc = true, seed = false;
            /// §5 row 8: seed's "total > B" check instead of "creating needed instances would
            /// exceed B".
            legacy_total_check: boinc = false, seed = true;
            /// §5 row 9: needed = target − unsent − in progress − success, only without
            /// canonical (seed: N − #(UNSENT or IN_PROGRESS) whenever error_mask = 0).
            modern_needed: boinc = true, seed = false;
            /// §5 row 10: on WU error, SUCCESS results in INIT/INCONCLUSIVE become NO_CHECK.
            no_check_on_error: boinc = true, seed = false;
            /// §5 row 11: any non-INIT validate state lets a SUCCESS result's files go
            /// (seed: only VALID or INVALID).
            delete_any_validated: boinc = true, seed = false;
            /// §5 row 12: modern next transition time (safety net, overload rule) instead of
            /// seed's `max(min deadline, now + delay_bound)`.
            modern_transition_time: boinc = true, seed = false;
            /// §5 row 13: INCONCLUSIVE results are re-checked against the canonical result.
            recheck_inconclusive: boinc = true, seed = false;
            /// §5 row 14: undecided results become INCONCLUSIVE.
            inconclusive_state: boinc = true, seed = false;
            /// §5 row 15: no consensus with `n_viable ≥ target` raises `target_nresults` to
            /// `n_viable + 1` (tie-breakers).
            tiebreaker_target_bump: boinc = true, seed = false;
            /// §5 rows 14, 16: validator `transition_time` actions (IMMEDIATE / DELAYED / NEVER)
            /// instead of seed's `tt = now` when it handled over results.
            validator_tt_actions: boinc = true, seed = false;
            /// §5 row 17: the assimilator sets error bit 32 when the canonical result is missing.
            assimilator_missing_canonical: boinc = true, seed = false;
            /// §5 row 18: a detached host's jobs become CLIENT_DETACHED (seed: NO_REPLY).
            detach_client_detached: boinc = true, seed = false;
            /// §5 row 21: the validator sets READY unconditionally (seed: only from INIT).
            assimilate_ready_unconditional: boinc = true, seed = false;
            /// §5 row 22: file deletion can fail into FILE_DELETE_ERROR, retried hourly.
            file_delete_error_state: boinc = true, seed = false;
            /// §5 row 23: lost-result resend, reliability, adaptive replication and
            /// homogeneous redundancy are honoured when configured.
            scheduler_features: boinc = true, seed = false;
            /// Q1: transitioner error checks also run when a canonical result exists.
            errors_after_canonical: boinc = true, seed = true;
            /// Q2: need_validate is set before the error branch, so a success arriving after
            /// an error is validated.
            validate_after_error: boinc = true, seed = true;
            /// Q3: late reports of CLIENT_DETACHED results are rejected (received_time set).
            detached_reports_rejected: boinc = true, seed = true;
            /// Q4: a resend adds the grace period to the DB deadline again.
            resend_regrace: boinc = true, seed = false;
            /// Q5: `daily_result_quota = 0` blocks hosts after their first RPC (otherwise 0
            /// means unlimited).
            zero_quota_blocks: boinc = true, seed = false;
            /// Q6: results with outcome VALIDATE_ERROR, NO_REPLY, DIDNT_NEED, CLIENT_DETACHED
            /// never get their files deleted.
            keep_files_of_unused: boinc = true, seed = true;
        }
    };
}
pub(crate) use with_switches;

macro_rules! switches {
    ($($(#[$m:meta])* $name:ident : boinc = $b:expr, seed = $s:expr;)+) => {
        /// Every difference between the seed pseudocode and real BOINC that the
        /// simulator can reproduce (spec backend §5 rows and quirks Q1–Q6). `boinc` and
        /// `seed` set them all; any one can be overridden.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Switches { $($(#[$m])* pub $name: bool,)+ }

        impl Switches {
            /// The preset of a variant.
            pub(crate) fn preset(v: Variant) -> Self {
                match v {
                    Variant::Boinc => Self { $($name: $b,)+ },
                    Variant::Seed => Self { $($name: $s,)+ },
                }
            }
            /// Names of all switches, for documentation and `--set` checks.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),+];
        }
    };
}

with_switches!(switches);
/// What clients see during an outage (spec client §2.8, §4.2).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutageKind {
    /// The scheduler answers `project_is_down`; the web server (master file) is up.
    #[default]
    Down,
    /// Nothing answers: every scheduler RPC and master-file fetch fails to connect.
    Unreachable,
}

/// A window `[start, start + duration)` in which scheduler RPCs fail. The daemons keep
/// running: only the scheduler is unavailable, as when a project disables it for
/// maintenance. A database outage (`[[project.NAME.daemon_outage]]` with
/// `daemon = "database"`) is one too, with `database` set, added when the world is
/// built (`server::downtime`).
#[derive(Clone, Debug, PartialEq)]
pub struct Outage {
    pub start: Time,
    pub duration: Time,
    pub kind: OutageKind,
    /// `kind = "down"`: the `request_delay` of the reply a down scheduler sends,
    /// seconds: the outage's own `maintenance_delay`, else the project's (spec backend
    /// §2.9).
    pub maintenance_delay: Time,
    /// The scheduler is up but cannot open the database: its reply says "Server
    /// can't open database" instead of the maintenance message (BOINC's
    /// `handle_request.cpp`), with the same `project_is_down` and `request_delay`.
    pub database: bool,
}

impl Outage {
    pub fn covers(&self, t: Time) -> bool {
        t >= self.start && t < self.start + self.duration
    }
}

/// What a `[[project.NAME.daemon_outage]]` stops: one of the seven periodic daemons
/// (spec backend §2.0), or the database, which stops all seven and the scheduler.
/// The discriminant is the daemon's code in its crash stream's id
/// ([`crate::streams::StreamKind::DaemonCrash`]): never renumbered.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutageTarget {
    Feeder = 0,
    Transitioner = 1,
    Validator = 2,
    Assimilator = 3,
    FileDeleter = 4,
    DbPurge = 5,
    WorkGenerator = 6,
    Database = 7,
}

impl OutageTarget {
    /// The seven daemons, by their code.
    pub const DAEMONS: [OutageTarget; 7] = [
        OutageTarget::Feeder,
        OutageTarget::Transitioner,
        OutageTarget::Validator,
        OutageTarget::Assimilator,
        OutageTarget::FileDeleter,
        OutageTarget::DbPurge,
        OutageTarget::WorkGenerator,
    ];
}

/// When a daemon outage's daemon is down.
#[derive(Clone, Debug, PartialEq)]
// Configuration, held once per outage: a distribution's size is accepted (see `Dist`).
#[allow(clippy::large_enum_variant)]
pub enum OutageSchedule {
    /// One window `[start, end)`.
    Window { start: Time, end: Time },
    /// A crash process: up periods exponential with mean `mtbf` seconds (from the
    /// end of a repair to the next failure), each failure lasting a draw of
    /// `repair` seconds; drawn once for the whole run when the world is built.
    Crashes { mtbf: Time, repair: Dist },
}

/// One `[[project.NAME.daemon_outage]]`: a daemon (or the database) that is stopped,
/// and when.
#[derive(Clone, Debug, PartialEq)]
pub struct DaemonOutage {
    pub target: OutageTarget,
    pub schedule: OutageSchedule,
}
