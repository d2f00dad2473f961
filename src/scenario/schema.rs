//! The scenario file's structure, as deserialised from TOML.
//!
//! Every struct denies unknown keys, so a misspelt key is reported with its line,
//! column and the list of valid keys. Semantic checks (cross-references, impossible
//! values) live in [`super::validate`]. Every key is documented in `docs/scenario.md`.

use crate::base::dist::Dist;
use crate::base::units::Duration;
use crate::client::config::{ClientSection, Policy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod availability;
pub mod expect;
pub mod host_extra;
pub mod project;
pub use availability::*;
pub use expect::{Expect, ExpectRow, ReplyExpect, SourcePos};
pub use host_extra::{BackgroundSection, PrefsSection};
pub use project::*;

/// Host attributes the scheduler reads (spec backend §1.4). Both host groups and
/// named hosts carry them as top-level keys; this macro adds them to a struct so the
/// list is written once (serde's `flatten` cannot be combined with
/// `deny_unknown_fields`).
macro_rules! with_host_attrs {
    ($(#[$m:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$m])*
        pub struct $name {
            $($extra)*
            /// CPUs: a whole number, or (host groups) a distribution drawn per host.
            #[serde(default = "d_ncpus")]
            pub p_ncpus: Count,
            /// Per-CPU integer ops/s (Dhrystone).
            #[serde(default = "d_giga")]
            pub p_iops: f64,
            /// RAM, bytes.
            #[serde(default = "d_ram")]
            pub m_nbytes: f64,
            /// Free disk, bytes.
            #[serde(default = "d_disk")]
            pub d_free: f64,
            #[serde(default = "d_one")]
            pub on_frac: f64,
            /// Fraction of on-time computing is allowed: a number, or (host groups)
            /// a distribution drawn once per host.
            #[serde(default = "d_one_dist")]
            pub active_frac: Dist,
            /// Operating system, for homogeneous redundancy: "Linux", "Microsoft
            /// Windows", "Darwin", "FreeBSD", "Android", or anything else; or
            /// (host groups) a weighted mix drawn per host.
            #[serde(default = "d_os")]
            pub os_name: OsName,
            /// CPU vendor: "GenuineIntel", "AuthenticAMD", "Power Macintosh", "ARM".
            #[serde(default = "d_vendor")]
            pub p_vendor: String,
            /// CPU model, for fine homogeneous redundancy.
            #[serde(default = "d_model")]
            pub p_model: String,
        }
    };
}

fn d_ncpus() -> Count {
    Count::Fixed(1)
}
fn d_one_dist() -> Dist {
    Dist::fixed(1.0)
}
fn d_giga() -> f64 {
    1e9
}
fn d_ram() -> f64 {
    4e9
}
fn d_disk() -> f64 {
    1e11
}
fn d_one() -> f64 {
    1.0
}
fn d_os() -> OsName {
    OsName::One("Linux".into())
}
fn d_vendor() -> String {
    "GenuineIntel".into()
}
fn d_model() -> String {
    "Intel Core2".into()
}

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default)]
    pub simulation: SimulationSection,
    /// Projects by name; each has its own back end. Iterated in name order.
    #[serde(default)]
    pub project: BTreeMap<String, ProjectConfig>,
    /// The client policy and preferences of every host group (spec client §7).
    #[serde(default)]
    pub client: ClientSection,
    /// Populations of simulated volunteer hosts.
    #[serde(default)]
    pub host_group: Vec<HostGroup>,
    /// Named hosts, driven only by scripted events.
    #[serde(default)]
    pub host: Vec<NamedHost>,
    /// Scripted events.
    #[serde(default)]
    pub event: Vec<ScriptEvent>,
    /// Expected states, checked during the run.
    #[serde(default)]
    pub expect: Vec<Expect>,
    #[serde(default)]
    pub output: OutputSection,
}

impl ScenarioFile {
    /// Whether the scenario is scripted: it has named hosts, scripted events or
    /// expected states (the spec's worked examples). Its audit trail is on by default.
    pub(crate) fn is_scripted(&self) -> bool {
        !self.host.is_empty() || !self.event.is_empty() || !self.expect.is_empty()
    }
}

/// Daemons and other actors that can have a place in the tie order.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Daemon {
    Scheduler,
    Transitioner,
    Validator,
    Assimilator,
    FileDeleter,
    DbPurge,
    Feeder,
    WorkGenerator,
}

impl Daemon {
    pub(crate) const ALL: [Daemon; 8] = [
        Daemon::Scheduler,
        Daemon::Transitioner,
        Daemon::Validator,
        Daemon::Assimilator,
        Daemon::FileDeleter,
        Daemon::DbPurge,
        Daemon::Feeder,
        Daemon::WorkGenerator,
    ];
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SimulationSection {
    /// Name of the run; the default output folder is `output/<name>/`.
    pub name: String,
    /// Master seed of every random stream.
    pub seed: u64,
    /// Simulated time at which the run stops.
    pub duration: Duration,
    /// Check the spec's invariants after every daemon step (also `--check-invariants`).
    pub check_invariants: bool,
    /// Order of actors at equal timestamps (spec backend §2.0).
    pub tie_order: Vec<Daemon>,
}

impl Default for SimulationSection {
    fn default() -> Self {
        Self {
            name: String::new(),
            seed: 1,
            duration: Duration(30 * 86_400),
            check_invariants: false,
            tie_order: Daemon::ALL.to_vec(),
        }
    }
}

with_host_attrs! {
    /// A population of volunteer hosts running the BOINC client policy of the
    /// `[client]` section (spec client §1–3).
    #[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct HostGroup {
        #[serde(default = "d_group_name")]
        pub name: String,
        /// Number of hosts. Required, except for a group that replays a host
        /// export (`hosts_file`), whose hosts are the file's; [`COUNT_UNSET`] when
        /// absent.
        #[serde(default = "d_count_unset")]
        pub count: u32,
        /// Per-CPU FLOPS of each host, a number or a distribution drawn once per host.
        #[serde(default = "d_speed")]
        pub p_fpops: Dist,
        /// The client policy of this group (default: `client.policy`).
        #[serde(default)]
        pub policy: Option<Policy>,
        /// Project the hosts attach to, with share 100 (default: the only project).
        /// Ignored when `shares` is given.
        #[serde(default)]
        pub project: String,
        /// Projects the hosts attach to, with their resource shares, e.g.
        /// `{ alpha = 100, beta = 300 }`. Listed in project-name order on the client.
        #[serde(default)]
        pub shares: BTreeMap<String, f64>,
        /// Fraction of the time the host is connected, while on: a number, or a
        /// distribution drawn once per host.
        #[serde(default = "d_one_dist")]
        pub connected_frac: Dist,
        /// Mean on-period of the on/off process driven by `on_frac` (the emulator's
        /// `on_lambda`), and likewise for the active and connected processes.
        #[serde(default = "d_hour")]
        pub on_lambda: Duration,
        #[serde(default = "d_hour")]
        pub active_lambda: Duration,
        #[serde(default = "d_hour")]
        pub connected_lambda: Duration,
        /// Explicit on-period distribution (with `off_period`), instead of `on_frac`.
        #[serde(default)]
        pub on_period: Option<Dist>,
        #[serde(default)]
        pub off_period: Option<Dist>,
        /// Availability trace CSV (`host_id,start,end`), relative to the scenario file.
        #[serde(default)]
        pub trace: Option<String>,
        /// Probability that a job ends in a client error: a number, or a
        /// distribution drawn once per host (clamped to [0, 1]).
        #[serde(default = "d_zero")]
        pub error_prob: Dist,
        /// Probability that a successful job returns a wrong output: a number, or a
        /// distribution drawn once per host (clamped to [0, 1]).
        #[serde(default = "d_zero")]
        pub wrong_result_prob: Dist,
        /// Hosts of one error class return the same wrong output when their wrong
        /// outputs collide (default: the group's name, a class of its own).
        #[serde(default)]
        pub error_class: Option<String>,
        /// Probability, per scheduler RPC, that the client was detached and
        /// re-attached since its previous RPC (its jobs become CLIENT_DETACHED).
        #[serde(default)]
        pub detach_prob: f64,
        /// Time at which each host joins, drawn per host.
        #[serde(default = "d_arrival")]
        pub arrival: Dist,
        /// How long each host stays before leaving for good (default: forever).
        #[serde(default)]
        pub lifetime: Option<Dist>,
        /// Each host's client state when it joins (`[host_group.start]`). Left out of
        /// the echoed configuration when absent, so runs without it write what they
        /// wrote before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub start: Option<super::start::ClientStart>,
        /// The hosts' GPUs, one entry per type (spec backend §1.4 HOST; BOINC's
        /// `COPROC`). Left out of the echoed configuration when absent.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub coproc: Vec<CoprocSpec>,
        /// Fraction of the time GPU computing is allowed (`gpu_active_frac`).
        #[serde(default = "d_one", skip_serializing_if = "is_one")]
        pub gpu_active_frac: f64,
        /// Daily and weekly patterns, vacations and a mixture of availability
        /// classes (`[host_group.availability]`). Left out of the echoed
        /// configuration when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub availability: Option<AvailabilitySection>,
        /// The hosts' other projects, whose servers are not simulated
        /// (`[host_group.background]`). Left out of the echoed configuration when
        /// absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub background: Option<BackgroundSection>,
        /// The hosts' own preferences, drawn per host (`[host_group.prefs]`). Left
        /// out of the echoed configuration when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prefs: Option<PrefsSection>,
        /// The hosts' network links (`[host_group.network]`; spec client §8.2).
        /// Left out of the echoed configuration when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub network: Option<NetworkSection>,
        /// The trace file's contents, read by the loader.
        #[serde(skip)]
        pub trace_data: TraceHandle,
        /// BOINC's statistics export of hosts (`host.xml`, gzipped or not), relative
        /// to the scenario file: the group's hosts are the project's own
        /// (docs/population.md, "A project's own hosts").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hosts_file: Option<String>,
        /// How the group uses `hosts_file`: one host per record, or `count` hosts
        /// drawn from the records.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hosts_mode: Option<HostsMode>,
        /// Replay: the Unix time the run starts at (default: the file's latest
        /// `rpc_time` minus `simulation.duration`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hosts_start: Option<i64>,
        /// One BOINC client's `client_state.xml`, relative to the scenario file: every
        /// host of the group starts as that client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub client_state: Option<String>,
        /// That client's `global_prefs.xml` (work buffer, CPU share).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub global_prefs: Option<String>,
        /// The imported files' contents, read by the loader.
        #[serde(skip)]
        pub import_data: ImportHandle,
    }
}

/// A host group's links (`[host_group.network]`; spec client §8.2): each host's
/// download and upload bandwidth, bytes/s, numbers or distributions drawn once per
/// host (absent: unlimited, or an imported host's `n_bwdown` and `n_bwup`), and the
/// user's limits on the client's transfers (0: none, BOINC's default).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<Dist>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<Dist>,
    /// `max_bytes_sec_down` of the host's preferences, bytes/s.
    #[serde(default)]
    pub max_bytes_sec_down: f64,
    /// `max_bytes_sec_up` of the host's preferences, bytes/s.
    #[serde(default)]
    pub max_bytes_sec_up: f64,
}

/// `count` of a host group that does not give it.
pub const COUNT_UNSET: u32 = u32::MAX;

fn d_count_unset() -> u32 {
    COUNT_UNSET
}

/// How a host group uses its `hosts_file`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HostsMode {
    /// One simulated host per record present during the run, arriving and leaving
    /// as the record's `create_time` and `rpc_time` say.
    #[default]
    Replay,
    /// `count` hosts, each a record drawn uniformly from the file.
    Resample,
}

/// What the loader read for a host group's importers, shared by its hosts. Two
/// handles are equal when they share the same tables (file names are compared
/// through the keys).
#[derive(Clone, Debug, Default)]
pub struct ImportHandle {
    /// The host export.
    pub hosts: Option<std::sync::Arc<super::import::hosts::HostTable>>,
    /// Replay: the records present during the run, in file order, and the Unix
    /// time of the run's start.
    pub replay: Option<(std::sync::Arc<[u32]>, i64)>,
    /// The client state and preferences.
    pub client: Option<std::sync::Arc<super::import::client_state::ClientImport>>,
}

impl PartialEq for ImportHandle {
    fn eq(&self, other: &Self) -> bool {
        fn same<T>(a: &Option<std::sync::Arc<T>>, b: &Option<std::sync::Arc<T>>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        same(&self.hosts, &other.hosts) && same(&self.client, &other.client)
    }
}

/// A loaded availability trace, shared by the hosts of a group. Two handles are equal
/// when they share the same trace (the file name is compared through `trace`).
#[derive(Clone, Debug, Default)]
pub struct TraceHandle(pub Option<std::sync::Arc<crate::client::availability::Trace>>);

impl PartialEq for TraceHandle {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// One type of GPU of a host group's hosts.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CoprocSpec {
    #[serde(rename = "type")]
    pub kind: crate::server::resource::GpuType,
    /// GPUs of this type per host: a whole number, or a distribution drawn per host
    /// (rounded; a host that draws 0 has none).
    #[serde(default = "d_one_count")]
    pub count: Count,
    /// Fraction of the group's hosts that have this GPU (default 1: all).
    #[serde(default = "d_one", skip_serializing_if = "is_one")]
    pub probability: f64,
    /// Peak FLOPS of one GPU, a number or a distribution drawn once per host.
    pub peak_flops: Dist,
}

fn d_one_count() -> Count {
    Count::Fixed(1)
}
fn is_one(v: &f64) -> bool {
    *v == 1.0
}
fn d_zero() -> Dist {
    Dist::fixed(0.0)
}
fn d_speed() -> Dist {
    Dist::fixed(1e9)
}
fn d_arrival() -> Dist {
    Dist {
        kind: crate::base::dist::Kind::Uniform {
            min: crate::base::dist::Num(0.0),
            max: crate::base::dist::Num(3600.0),
        },
        min: None,
        max: None,
    }
}

fn d_group_name() -> String {
    "hosts".into()
}
fn d_hour() -> Duration {
    Duration(3600)
}

with_host_attrs! {
    /// A host driven only by scripted events.
    #[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct NamedHost {
        pub name: String,
        /// Per-CPU FLOPS (Whetstone).
        #[serde(default = "d_giga")]
        pub p_fpops: f64,
        #[serde(default)]
        pub project: String,
        /// User id; hosts of one user may report each other's jobs (spec backend
        /// §2.4.3). Default: a user of its own.
        #[serde(default)]
        pub userid: Option<u32>,
        /// Initial host app version state (adaptive replication, quotas).
        #[serde(default)]
        pub hav: Option<HavInit>,
        /// Pinned day offset `U(host.id)` in [0, 1) (spec backend §2.4.1 step 5).
        #[serde(default)]
        pub day_offset: Option<f64>,
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct HavInit {
    pub consecutive_valid: i32,
    pub max_jobs_per_day: i32,
    pub n_jobs_today: i32,
}

/// What a scripted host says about one of its jobs.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReportOutcome {
    /// Finished and uploaded: `client_state` 5, exit 0.
    #[default]
    Success,
    /// Computation error: `client_state` 3 and `exit_status`.
    ClientError,
    /// Aborted by the user: `client_state` 6, exit 203.
    Abort,
    /// Aborted by the project: `client_state` 6, exit 202.
    ProjectAbort,
    /// The host drops the job and never reports it.
    NoReply,
}

/// Whether the validator can read a reported output.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutputRead {
    #[default]
    Ok,
    /// Permanently unreadable (→ VALIDATE_ERROR).
    Unreadable,
    /// Transiently unreadable until `transient_until`.
    Transient,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Result name, `wu<id>_<suffix>`.
    pub result: String,
    #[serde(default)]
    pub outcome: ReportOutcome,
    /// Output value compared by the validator.
    #[serde(default)]
    pub value: f64,
    /// Whether the output is right (simulator truth for the science figures;
    /// default: unknown, so the result counts in none of them).
    #[serde(default)]
    pub correct: Option<bool>,
    /// Exit status of a client error (default −177, `ERR_RESULT_START`).
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// CPU seconds (default: the elapsed time).
    #[serde(default)]
    pub cpu_time: Option<f64>,
    /// Elapsed seconds (default: received − sent).
    #[serde(default)]
    pub elapsed_time: Option<f64>,
    #[serde(default)]
    pub output: OutputRead,
    /// End of a transient read error.
    #[serde(default)]
    pub transient_until: Option<Duration>,
}

/// One scripted event. Exactly one of `daemon`, `host`, `create_workunits`,
/// `submit_batch` and `cancel` is given.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScriptEvent {
    pub at: Duration,
    /// Project the event applies to (default: the only project).
    #[serde(default)]
    pub project: Option<String>,
    /// Run one pass of this daemon.
    #[serde(default)]
    pub daemon: Option<Daemon>,
    /// A named host makes a scheduler RPC.
    #[serde(default)]
    pub host: Option<String>,
    /// Jobs the host asks for (0 = none).
    #[serde(default)]
    pub request: Option<u32>,
    /// Seconds of work asked for, instead of `request`.
    #[serde(default)]
    pub work_req_seconds: Option<f64>,
    /// Jobs reported in this RPC.
    #[serde(default)]
    pub report: Vec<Report>,
    /// Jobs the host has lost: left out of the in-progress list of this RPC.
    #[serde(default)]
    pub lost: Vec<String>,
    /// The client detached and re-attached: it sends no host id and no jobs.
    #[serde(default)]
    pub detach: bool,
    /// Whether the RPC carries the in-progress list (`other_results`).
    #[serde(default = "yes")]
    pub send_other_results: bool,
    /// Create this many workunits from the template now.
    #[serde(default)]
    pub create_workunits: Option<u32>,
    /// Submit a batch of jobs now (spec backend §1.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_batch: Option<BatchEvent>,
    /// With `create_workunits` or `submit_batch`: the app whose template they come
    /// from, by name (default: the project's first app).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Cancel these workunits (names `wu<id>`).
    #[serde(default)]
    pub cancel: Vec<String>,
    /// With `daemon = "assimilator"`: the handler's answer (`"ok"`, `"defer"`,
    /// `"error"`) for the named workunits in this pass, e.g. `{ wu1 = "defer" }`.
    #[serde(default)]
    pub assimilate: std::collections::BTreeMap<String, crate::server::assimilator::HandlerResult>,
}

fn yes() -> bool {
    true
}

/// A batch submitted by a scripted event (`submit_batch = { jobs = 500, … }`; spec
/// backend §1.5).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BatchEvent {
    /// Jobs (workunits) in the batch.
    pub jobs: u32,
    /// Each job's size as a multiple of the template's `rsc_fpops_est` (and
    /// bound): a number or a distribution. Default 1.
    #[serde(default = "one_factor", skip_serializing_if = "Dist::is_one")]
    pub size: Dist,
    /// The priority of its workunits and results (default: the template's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The batch's name in batches.csv (default `batch<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn one_factor() -> Dist {
    Dist::fixed(1.0)
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct OutputSection {
    /// Write the audit trail `transitions.csv` (every state change; large on big
    /// runs). Unset: on for scripted scenarios ([`ScenarioFile::is_scripted`]), off
    /// otherwise (`--audit` turns it on); [`super::load`] fills it in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transitions: Option<bool>,
    /// Bucket width of `timeseries.csv`.
    pub interval: Duration,
    /// Bin width of `histograms.csv`.
    pub histogram_bin: Duration,
    /// Warm-up the throughput and deadline figures of `summary.csv` skip (0: none).
    pub warmup: Duration,
}

impl Default for OutputSection {
    fn default() -> Self {
        Self {
            transitions: None,
            interval: Duration(3600),
            histogram_bin: Duration(60),
            warmup: Duration(0),
        }
    }
}
