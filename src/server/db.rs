//! The in-memory BOINC database of one project: workunits, results, hosts and host app
//! versions (spec backend §1.2–§1.4), with the indexes each daemon's query would use.
//!
//! Every write of a state field goes through a setter here. A setter does three
//! things: it changes the row, it keeps the daemons' work lists in step (the
//! transitioner's `transition_time` index, the validator's `need_validate` list, the
//! assimilator's and file deleter's lists, db_purge's list, the feeder's UNSENT order),
//! and it appends a [`Transition`] to the audit trail that becomes `transitions.csv`.
//! No daemon ever scans all rows: each reads only its own list, as BOINC's daemons
//! read only the rows their indexed SQL query selects.

use super::credit::{Average, AverageVar};
use super::id_set::IdSet;
use super::table::Table;
use super::transition_index::TransitionIndex;
use super::types::*;
use crate::engine::{DbTime, INT_MAX, Time, db_time};
use serde::Serialize;
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

/// What the validator can read of a reported output (spec backend §2.5,
/// `init_result`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum OutputStatus {
    /// Readable.
    #[default]
    Ok,
    /// Missing or corrupt: a permanent `init_result` error (→ VALIDATE_ERROR).
    Unreadable,
    /// A transient error ("NFS down") until the given time, then readable. The
    /// time is an `int`, as BOINC's times are: the status then takes 8 bytes of
    /// every result row instead of 16.
    TransientUntil(i32),
}

/// A WORKUNIT row (spec backend §1.2).
#[derive(Clone, Debug)]
pub struct WorkunitRow {
    pub id: WuId,
    pub appid: AppId,
    pub create_time: DbTime,
    pub priority: i32,
    pub batch: u32,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    /// Simulator-only: the FLOPs the app really computes for this workunit (the
    /// template's `true_size` times `rsc_fpops_est`). No daemon reads it; only the
    /// simulated client's execution does.
    pub true_fpops: f64,
    /// `rsc_memory_bound`, `rsc_disk_bound`, `delay_bound` and the `max_*_results`
    /// columns: set from the template when the workunit is created and never
    /// changed, so the workunits of one template share one copy ([`WuLimits`]).
    pub limits: Arc<WuLimits>,
    pub min_quorum: i32,
    pub target_nresults: i32,
    pub need_validate: bool,
    pub canonical_resultid: ResultId,
    pub canonical_credit: f64,
    /// BOINC's `int` column ([`DbTime`]): always in `0..=INT_MAX` (`INT_MAX`: no
    /// transition due), so 4 bytes hold it exactly; read it as `Time::from`.
    pub transition_time: DbTime,
    pub error_mask: i32,
    pub assimilate_state: AssimilateState,
    pub file_delete_state: FileDeleteState,
    pub hr_class: i32,
    pub app_version_id: u32,
    /// 0 normal, 1 `TRANSITION_NONE`, 2 `TRANSITION_NO_NEW_RESULTS`.
    pub transitioner_flags: u8,
    /// Simulator bookkeeping, not a BOINC column: whether the transitioner's index
    /// holds this workunit at its `transition_time` (see [`TransitionIndex`]). The
    /// index checks its entries against a copy kept beside the rows ([`Indexed`]).
    pub in_transition_index: bool,
    /// −1 = no size classes.
    pub size_class: i8,
    /// The WU's results, ascending id (the DB's join order). Inline up to four: a
    /// workunit rarely has more, so most rows need no allocation of their own, and
    /// the daemons' snapshot of the list copies without allocating (a per-pass
    /// allocation showed in the profile of bench-100k).
    pub results: WuResults,
    /// When the validator found the canonical result (0 = not yet).
    pub canonical_found_time: DbTime,
    /// When the assimilator last marked it DONE (0 = never).
    pub assimilated_time: DbTime,
    /// How many times the assimilation handler was called.
    pub assimilate_count: u32,
    /// When `file_delete_state` became DONE (db_purge's `mod_time`).
    pub files_deleted_time: DbTime,
    /// Whether the canonical result's output is right, copied from it when it is
    /// chosen (simulator truth; `None`: no canonical result, or unknown).
    pub canonical_correct: Option<bool>,
}

/// The columns of a workunit that come from its template and never change after
/// it is created (spec backend §1.2): `rsc_memory_bound` and `rsc_disk_bound` (the
/// scheduler's feasibility checks), `delay_bound`, and the `max_*_results` limits
/// (transitioner and validator). BOINC keeps them in every WORKUNIT row; here the
/// workunits of one template point to one shared copy: 36 bytes of every row
/// become an 8-byte pointer (`WorkunitRow` 168 → 128 bytes with its 4-byte
/// `transition_time` and result list; docs/performance.md "Sizes"). The values
/// every daemon and output sees are unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct WuLimits {
    pub rsc_memory_bound: f64,
    pub rsc_disk_bound: f64,
    pub delay_bound: i64,
    pub max_error_results: i32,
    pub max_total_results: i32,
    pub max_success_results: i32,
}

impl WuLimits {
    /// The limits a workunit made from template `t` has.
    pub(crate) fn of(t: &super::config::WuTemplate) -> Self {
        Self {
            rsc_memory_bound: t.rsc_memory_bound,
            rsc_disk_bound: t.rsc_disk_bound,
            delay_bound: t.delay_bound,
            max_error_results: t.max_error_results,
            max_total_results: t.max_total_results,
            max_success_results: t.max_success_results,
        }
    }

    /// `cached` if it still holds the limits of template `t`, else a new copy put
    /// in its place: a work generator creates its workunits from one shared copy
    /// without allocating, and a template changed since (by a test) is followed.
    pub(crate) fn shared(cached: &mut Arc<WuLimits>, t: &super::config::WuTemplate) -> Arc<Self> {
        let want = Self::of(t);
        if **cached != want {
            *cached = Arc::new(want);
        }
        Arc::clone(cached)
    }
}

/// The result ids of one workunit, ascending: inline up to three (16 bytes, where
/// `SmallVec<[ResultId; 4]>` took 24), in a boxed vector beyond. Most workunits
/// have at most `max(target_nresults, min_quorum)` results plus a retry or two, so
/// the daemons' snapshot of the list (`clone`) rarely allocates.
#[derive(Clone, Debug, PartialEq)]
pub struct WuResults(ResultsRepr);

#[derive(Clone, Debug, PartialEq)]
enum ResultsRepr {
    Inline(u8, [ResultId; 3]),
    /// Boxed: a `Vec` itself is 24 bytes, its box 8, which keeps the list at 16.
    #[allow(clippy::box_collection)]
    Spilled(Box<Vec<ResultId>>),
}

impl Default for WuResults {
    fn default() -> Self {
        Self::new()
    }
}

impl WuResults {
    pub fn new() -> Self {
        Self(ResultsRepr::Inline(0, [ResultId(0); 3]))
    }

    /// Appends `id` (ids arrive ascending).
    pub fn push(&mut self, id: ResultId) {
        match &mut self.0 {
            ResultsRepr::Inline(n, ids) if (*n as usize) < ids.len() => {
                ids[*n as usize] = id;
                *n += 1;
            }
            ResultsRepr::Inline(_, ids) => {
                let mut v = Vec::with_capacity(ids.len() + 2);
                v.extend_from_slice(ids);
                v.push(id);
                self.0 = ResultsRepr::Spilled(Box::new(v));
            }
            ResultsRepr::Spilled(v) => v.push(id),
        }
    }
}

impl std::ops::Deref for WuResults {
    type Target = [ResultId];
    fn deref(&self) -> &[ResultId] {
        match &self.0 {
            ResultsRepr::Inline(n, ids) => &ids[..*n as usize],
            ResultsRepr::Spilled(v) => v,
        }
    }
}

impl FromIterator<ResultId> for WuResults {
    fn from_iter<I: IntoIterator<Item = ResultId>>(iter: I) -> Self {
        let mut r = Self::new();
        for id in iter {
            r.push(id);
        }
        r
    }
}

/// The ids of an owned list (a daemon's snapshot), in order.
pub struct WuResultsIntoIter {
    list: WuResults,
    next: usize,
}

impl Iterator for WuResultsIntoIter {
    type Item = ResultId;
    fn next(&mut self) -> Option<ResultId> {
        let id = self.list.get(self.next).copied();
        self.next += 1;
        id
    }
}

impl IntoIterator for WuResults {
    type Item = ResultId;
    type IntoIter = WuResultsIntoIter;
    fn into_iter(self) -> WuResultsIntoIter {
        WuResultsIntoIter {
            list: self,
            next: 0,
        }
    }
}

impl<'a> IntoIterator for &'a WuResults {
    type Item = &'a ResultId;
    type IntoIter = std::slice::Iter<'a, ResultId>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A RESULT row (spec backend §1.3). Its name is `wu<workunitid>_<suffix>`.
///
/// 128 bytes, aligned to a cache line: a row is exactly two lines, where at 136
/// bytes most rows straddled three, and every first touch of a row is a miss.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct ResultRow {
    pub id: ResultId,
    pub workunitid: WuId,
    pub suffix: u16,
    pub create_time: DbTime,
    pub priority: i32,
    /// BOINC's `int` (`lrand48()`, 0 to 2³¹ − 1).
    pub random: i32,
    pub server_state: ServerState,
    pub outcome: Outcome,
    pub validate_state: ValidateState,
    pub file_delete_state: FileDeleteState,
    pub hostid: HostId,
    pub userid: u32,
    /// Times this row only records: BOINC's `int` (`DbTime`), within the run.
    pub sent_time: DbTime,
    pub received_time: DbTime,
    /// The DB deadline: `sent_time + delay_bound_used + report_grace_period`.
    pub report_deadline: Time,
    pub flops_estimate: f64,
    pub app_version_id: u32,
    pub client_state: i32,
    pub exit_status: i32,
    pub cpu_time: f64,
    pub elapsed_time: f64,
    /// The reported output value; bitwise/fuzzy comparison reads it.
    pub output: f64,
    /// Whether the output is right: simulator truth, never read by a daemon
    /// (`None`: no output, or a scripted report that does not say).
    pub output_correct: Option<bool>,
    pub output_status: OutputStatus,
    pub claimed_credit: f64,
    pub granted_credit: f64,
    pub runtime_outlier: bool,
    /// Whether this result sits in a feeder cache slot (invariant 13).
    pub in_cache: bool,
    /// Legacy infeasible-queue counter (spec backend §2.3).
    pub infeasible_count: u32,
}

impl WorkunitRow {
    /// A new workunit from the work generator's template, created at `now` (spec
    /// backend §2.1 step 3): no results, no canonical result, every state INIT, and
    /// `transition_time = now` so the transitioner creates its results at once.
    pub(crate) fn from_template(t: &super::config::WuTemplate, now: Time) -> Self {
        Self::from_template_with(t, Arc::new(WuLimits::of(t)), now)
    }

    /// [`Self::from_template`] with the template's limits already shared
    /// ([`WuLimits::shared`]): what the work generators use, so that their
    /// workunits share one copy.
    pub(crate) fn from_template_with(
        t: &super::config::WuTemplate,
        limits: Arc<WuLimits>,
        now: Time,
    ) -> Self {
        debug_assert_eq!(*limits, WuLimits::of(t));
        Self {
            id: WuId(0),
            appid: 1,
            create_time: db_time(now),
            priority: t.priority,
            batch: 0,
            rsc_fpops_est: t.rsc_fpops_est,
            rsc_fpops_bound: t.rsc_fpops_bound,
            true_fpops: t.rsc_fpops_est,
            limits,
            min_quorum: t.min_quorum,
            target_nresults: t.target_nresults,
            need_validate: false,
            canonical_resultid: ResultId(0),
            canonical_credit: 0.0,
            // transitioner_flags is always 0 here; INT_MAX would apply otherwise.
            transition_time: db_time(now.min(INT_MAX)),
            error_mask: 0,
            assimilate_state: AssimilateState::Init,
            file_delete_state: FileDeleteState::Init,
            hr_class: 0,
            app_version_id: 0,
            transitioner_flags: 0,
            in_transition_index: false,
            size_class: -1,
            results: WuResults::new(),
            canonical_found_time: 0,
            assimilated_time: 0,
            assimilate_count: 0,
            files_deleted_time: 0,
            canonical_correct: None,
        }
    }
}

impl ResultRow {
    /// A new instance of a workunit as the transitioner creates it (spec backend
    /// §2.2 step 5b): outcome, validate and file-delete states INIT, nothing sent.
    pub fn new(
        workunitid: WuId,
        suffix: u16,
        create_time: Time,
        priority: i32,
        random: i32,
        server_state: ServerState,
    ) -> Self {
        Self {
            id: ResultId(0),
            workunitid,
            suffix,
            create_time: db_time(create_time),
            priority,
            random,
            server_state,
            outcome: Outcome::Init,
            validate_state: ValidateState::Init,
            file_delete_state: FileDeleteState::Init,
            hostid: HostId(0),
            userid: 0,
            sent_time: 0,
            received_time: 0,
            report_deadline: 0,
            flops_estimate: 0.0,
            app_version_id: 0,
            client_state: 0,
            exit_status: 0,
            cpu_time: 0.0,
            elapsed_time: 0.0,
            output: 0.0,
            output_correct: None,
            output_status: OutputStatus::Ok,
            claimed_credit: 0.0,
            granted_credit: 0.0,
            runtime_outlier: false,
            in_cache: false,
            infeasible_count: 0,
        }
    }

    /// `SUCCESS`, `OVER` and not yet validated: what triggers validation.
    pub(crate) fn is_success_init(&self) -> bool {
        self.server_state == ServerState::Over
            && self.outcome == Outcome::Success
            && self.validate_state == ValidateState::Init
    }
}

/// A HOST_APP_VERSION row (spec backend §1.4). One per (host, app version).
#[derive(Clone, Debug, Default)]
pub struct HavRow {
    pub app_version_id: u32,
    pub max_jobs_per_day: i32,
    pub n_jobs_today: i32,
    pub consecutive_valid: i32,
    pub pfc: Average,
    pub et: AverageVar,
    pub turnaround: AverageVar,
}

/// A host's operating system and CPU names, the texts of its HOST row (spec backend
/// §1.4) that HR and the platform check read. Hosts with the same three share one
/// copy: a group's hosts, each entry of a group's operating-system mix, each record
/// of a host export. Three `Arc<str>` in the row took 48 bytes a host (46 MiB at a
/// million hosts); the shared triple takes 8.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostNames {
    /// Operating system name (e.g. "Linux", "Microsoft Windows"), for HR.
    pub os_name: Arc<str>,
    /// CPU vendor (e.g. "GenuineIntel"), for HR.
    pub p_vendor: Arc<str>,
    /// CPU model (e.g. "Intel Core2"), for fine HR.
    pub p_model: Arc<str>,
}

impl HostNames {
    /// The three names, shared from here on.
    pub fn shared(os_name: &str, p_vendor: &str, p_model: &str) -> Arc<Self> {
        Arc::new(Self {
            os_name: os_name.into(),
            p_vendor: p_vendor.into(),
            p_model: p_model.into(),
        })
    }
}

/// A HOST row (spec backend §1.4), with the attributes the scheduler screens on.
/// The names are shared ([`HostNames`]), not copied per host.
#[derive(Clone, Debug, Default)]
pub struct HostRow {
    pub id: HostId,
    pub userid: u32,
    pub rpc_seqno: u32,
    /// Last RPC time (0 = never).
    pub rpc_time: Time,
    pub total_credit: f64,
    pub expavg_credit: f64,
    pub expavg_time: Time,
    pub avg_turnaround: f64,
    pub p_ncpus: i32,
    /// Per-CPU Whetstone FLOPS.
    pub p_fpops: f64,
    /// Per-CPU Dhrystone IOPS.
    pub p_iops: f64,
    pub m_nbytes: f64,
    pub d_free: f64,
    pub on_frac: f64,
    pub active_frac: f64,
    /// Fraction of the time GPU computing is allowed (`gpu_active_frac`).
    pub gpu_active_frac: f64,
    /// The host's coprocessors, as its request describes them (spec backend §1.4).
    pub coprocs: Box<[super::resource::Coproc]>,
    /// Operating system and CPU names, shared with the other hosts that have them.
    pub names: Arc<HostNames>,
    /// −1 = blacklisted.
    pub max_results_day: i32,
    /// The host's day offset `U(host.id)` in [0, 1) (spec backend §2.4.1 step 5).
    pub day_offset: f64,
    pub havs: Vec<HavRow>,
    /// Results of this host that are IN_PROGRESS, ascending id.
    pub in_progress: Vec<ResultId>,
    /// Scheduler's estimate of queued work, seconds (§2.4.4 step 4).
    pub estimated_delay: f64,
    /// Simulator bookkeeping, not a BOINC column: the scenario host group the host
    /// belongs to, for the credit figures per group ([`Self::host_group`]): its
    /// index + 1, 0 for none (a named host), as BOINC's ids keep 0 for none. A
    /// plain `u32`, where `Option<u32>` took 8 bytes.
    pub(crate) group: u32,
    /// Simulator bookkeeping, not a BOINC column: the simulated host this row is,
    /// its world index + 1 (`hosts.csv`'s `host`), 0 for none (a row a test or a
    /// named host made), so that `results.csv` can name it ([`Self::world_host`]).
    pub(crate) host: u32,
}

impl HostRow {
    /// The world's index of the simulated host this row is (`hosts.csv`'s `host`):
    /// a host has one row, and one `hostid`, per project it attached to.
    pub fn world_host(&self) -> Option<u32> {
        self.host.checked_sub(1)
    }

    /// The scenario host group the host belongs to (`None` for a named host).
    pub fn host_group(&self) -> Option<u32> {
        self.group.checked_sub(1)
    }
    /// Sets [`Self::host_group`] (a group index is far below `u32::MAX`: each group
    /// is a table of the scenario file).
    pub fn set_host_group(&mut self, group: Option<u32>) {
        self.group = group.map_or(0, |g| g + 1);
    }

    pub fn hav(&self, av: u32) -> Option<&HavRow> {
        self.havs.iter().find(|h| h.app_version_id == av)
    }
    /// Adds a HAV row, growing the list by exactly one: a host has one row per app
    /// version it ran, usually one, and a vector's default growth to four would
    /// leave three rows' worth unused on every host (240 MB at a million hosts).
    pub(crate) fn add_hav(&mut self, hav: HavRow) {
        self.havs.reserve_exact(1);
        self.havs.push(hav);
    }
    pub(crate) fn hav_mut(&mut self, av: u32) -> Option<&mut HavRow> {
        self.havs.iter_mut().find(|h| h.app_version_id == av)
    }
}

/// The kind of row a [`Transition`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    Workunit,
    Result,
    /// A host app version; the id is the host id.
    HostAppVersion,
}

impl Entity {
    pub fn name(self) -> &'static str {
        match self {
            Entity::Workunit => "workunit",
            Entity::Result => "result",
            Entity::HostAppVersion => "host_app_version",
        }
    }
}

/// A state field named in `transitions.csv`. `Row` marks creation (0 → 1) and purge
/// (1 → 0) of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Row,
    ServerState,
    Outcome,
    ValidateState,
    FileDeleteState,
    Hostid,
    ReportDeadline,
    NeedValidate,
    CanonicalResultid,
    TransitionTime,
    ErrorMask,
    AssimilateState,
    TargetNresults,
    MinQuorum,
    HrClass,
    AppVersionId,
    ConsecutiveValid,
    MaxJobsPerDay,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Row => "row",
            Field::ServerState => "server_state",
            Field::Outcome => "outcome",
            Field::ValidateState => "validate_state",
            Field::FileDeleteState => "file_delete_state",
            Field::Hostid => "hostid",
            Field::ReportDeadline => "report_deadline",
            Field::NeedValidate => "need_validate",
            Field::CanonicalResultid => "canonical_resultid",
            Field::TransitionTime => "transition_time",
            Field::ErrorMask => "error_mask",
            Field::AssimilateState => "assimilate_state",
            Field::TargetNresults => "target_nresults",
            Field::MinQuorum => "min_quorum",
            Field::HrClass => "hr_class",
            Field::AppVersionId => "app_version_id",
            Field::ConsecutiveValid => "consecutive_valid",
            Field::MaxJobsPerDay => "max_jobs_per_day",
        }
    }
}

/// One change of one state field: a row of `transitions.csv`. It carries no time:
/// every row of the trail belongs to the step that made it, and the world, which
/// keeps the one clock, stamps the step's time on the rows when it drains them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transition {
    pub actor: Actor,
    pub entity: Entity,
    pub id: u32,
    pub field: Field,
    pub old: i64,
    pub new: i64,
}

/// A result's place in the feeder's order, `(priority descending, WU id, result
/// id)`, packed into one integer that sorts the same way: the list holds hundreds of
/// thousands of UNSENT results, and one integer comparison per step of a B-tree
/// search costs less than comparing three fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedKey(u128);

impl FeedKey {
    pub fn new(priority: i32, wuid: WuId, rid: ResultId) -> Self {
        // Flipping the sign bit maps i32 onto u32 in order; `!` reverses it.
        let descending = !((priority as u32) ^ 0x8000_0000);
        Self(u128::from(descending) << 64 | u128::from(wuid.0) << 32 | u128::from(rid.0))
    }
    pub fn wuid(self) -> WuId {
        WuId((self.0 >> 32) as u32)
    }
    pub fn rid(self) -> ResultId {
        ResultId(self.0 as u32)
    }
}

/// Entries between two prefetch stages of a daemon's walk ([`Db::prefetch_walk_step`]).
pub(crate) const WALK_AHEAD: usize = 2;

/// Which rows a daemon's walk prefetches beyond each workunit's own row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Prefetch {
    /// The workunit's result rows.
    pub results: bool,
    /// The server host rows of its results.
    pub hosts: bool,
    /// The first host app version row of each of those hosts (a list of its own).
    pub havs: bool,
}

impl Prefetch {
    /// The workunit and its results (transitioner, assimilator, db_purge).
    pub const RESULTS: Self = Self {
        results: true,
        hosts: false,
        havs: false,
    };
    /// Also the results' hosts and their app versions (the validator's credit and
    /// HAV updates: the first read of a HAV row was 3.3 % of a 100,000-host run).
    pub const RESULTS_HOSTS_HAVS: Self = Self {
        results: true,
        hosts: true,
        havs: true,
    };

    /// Stages of the walk, each `WALK_AHEAD` entries after the one before: the
    /// workunit's index entry, then its row; its results' index entries, then their
    /// rows; the hosts' index entries, then their rows; the HAV rows. Each stage reads
    /// only what the stage before loaded.
    fn stages(self) -> usize {
        if self.havs {
            7
        } else if self.hosts {
            6
        } else if self.results {
            4
        } else {
            2
        }
    }

    /// Entries between a workunit's first prefetch and its visit.
    pub(crate) fn lag(self) -> usize {
        WALK_AHEAD * self.stages()
    }
}

/// The project database with its daemon indexes and audit trail.
#[derive(Default)]
pub struct Db {
    pub workunits: Table<WorkunitRow, WuId>,
    /// The BATCH table (spec backend §1.5); empty unless batches are submitted.
    pub batches: super::batch::Batches,
    pub results: Table<ResultRow, ResultId>,
    pub hosts: Table<HostRow, HostId>,
    /// Transitioner index: WUs with `transition_time < INT_MAX`, by time then id.
    transition_index: TransitionIndex,
    /// Which entry of the transitioner index is current, per workunit row ([`Indexed`]).
    indexed: Indexed,
    /// Workunits in the transitioner index.
    transition_indexed: usize,
    /// Validator work list: `need_validate > 0`.
    pub need_validate: IdSet<WuId>,
    /// Assimilator work list: `assimilate_state = READY`.
    pub assimilate_ready: IdSet<WuId>,
    /// File deleter lists (`READY`, and `ERROR` for the hourly retry).
    pub fd_ready_results: IdSet<ResultId>,
    pub fd_ready_wus: IdSet<WuId>,
    pub fd_error_results: IdSet<ResultId>,
    pub fd_error_wus: IdSet<WuId>,
    /// db_purge list: WUs with `file_delete_state = DONE`.
    pub purge_ready: IdSet<WuId>,
    /// Entries of `purge_ready` by the time they entered it (`files_deleted_time`,
    /// the step's time, so in time order), for [`Self::take_purgeable`]: an entry
    /// whose row no longer holds that time, or left the list, is stale and dropped
    /// when it reaches the front.
    purge_queue: VecDeque<(Time, WuId)>,
    /// The workunits of `purge_ready` old enough to purge (db_purge's `min_age`),
    /// as of the last [`Self::take_purgeable`]: a pass takes the first in id order
    /// without scanning the whole list.
    purge_eligible: BTreeSet<WuId>,
    /// The smallest `transition_time` put in the transitioner index since the world
    /// last asked ([`Self::take_transition_lowered`]), to wake a sleeping
    /// transitioner in O(1) (spec backend §2.2; docs/performance.md "Idle daemons").
    transition_lowered: Option<Time>,
    /// UNSENT results not in the job cache (`in_cache` false), in feeder order:
    /// priority descending, WU id, result id (spec backend §2.3). The feeder skips
    /// cached results anyway; leaving them out of its list spares each pass a walk
    /// past every cached one. The job cache moves a result out when it fills a slot
    /// and back when it empties one while the result is still UNSENT.
    pub feedable: BTreeSet<FeedKey>,
    /// Cached results (`in_cache`) that entered or left UNSENT since the job cache
    /// last read this log: how the cache finds its stale slots without a walk
    /// (`job_cache::Cache::sync`, spec backend §2.3).
    pub cache_moves: Vec<ResultId>,
    /// Audit trail not yet written out; the world drains it after every event.
    pub audit: Vec<Transition>,
    /// Whether to record the audit trail at all.
    pub audit_enabled: bool,
    /// Live results per `server_state` code (index 0 and 3 unused), kept by the
    /// setters so the state of the database can be sampled in O(1).
    pub result_state_counts: [u64; 6],
    /// UNSENT results per app (index `appid − 1`), kept only in a project with
    /// several apps (empty otherwise: the project's count is the one app's). The
    /// cushion work generator of each app reads its own (spec backend §2.1).
    pub unsent_by_app: Vec<u64>,
    /// Live workunits.
    pub workunits_live: u64,
}

macro_rules! audit {
    ($db:expr, $actor:expr, $entity:expr, $id:expr, $field:expr, $old:expr, $new:expr) => {
        if $db.audit_enabled {
            $db.audit.push(Transition {
                actor: $actor,
                entity: $entity,
                id: RowId::raw($id),
                field: $field,
                old: $old,
                new: $new,
            });
        }
    };
}

impl Db {
    pub fn new(audit_enabled: bool) -> Self {
        Self {
            audit_enabled,
            ..Default::default()
        }
    }

    /// Keeps a count of UNSENT results per app from now on, for `napps` apps.
    pub(crate) fn track_unsent_by_app(&mut self, napps: usize) {
        if napps > 1 {
            self.unsent_by_app = vec![0; napps];
        }
    }

    /// UNSENT results of app `appid` (`count_unsent_results`).
    pub(crate) fn unsent_of_app(&self, appid: AppId) -> u64 {
        match self.unsent_by_app.get(appid as usize - 1) {
            Some(&n) => n,
            None => self.result_state_counts[ServerState::Unsent.code() as usize],
        }
    }

    /// Adds `delta` to the UNSENT count of workunit `wuid`'s app, when counted (the
    /// workunit is read only then).
    fn count_unsent(&mut self, wuid: WuId, delta: i64) {
        if !self.unsent_by_app.is_empty() {
            self.count_unsent_of(self.wu(wuid).appid, delta);
        }
    }

    /// Adds `delta` to app `appid`'s UNSENT count, when counted.
    fn count_unsent_of(&mut self, appid: AppId, delta: i64) {
        if let Some(n) = self.unsent_by_app.get_mut(appid as usize - 1) {
            *n = n.wrapping_add_signed(delta);
        }
    }

    /// The rows of a workunit's results that exist.
    fn result_rows<'a>(&'a self, wu: &'a WorkunitRow) -> impl Iterator<Item = &'a ResultRow> {
        wu.results.iter().filter_map(|&r| self.results.get(r))
    }

    /// The world's index of the simulated host whose row is `hostid`
    /// ([`HostRow::world_host`]): none for 0 (never sent) or a row no simulated host
    /// made.
    pub fn world_host(&self, hostid: HostId) -> Option<u32> {
        self.hosts.get(hostid).and_then(HostRow::world_host)
    }

    pub fn wu(&self, id: WuId) -> &WorkunitRow {
        self.workunits.get(id).expect("workunit exists")
    }
    pub(crate) fn wu_mut(&mut self, id: WuId) -> &mut WorkunitRow {
        self.workunits.get_mut(id).expect("workunit exists")
    }
    pub fn result(&self, id: ResultId) -> &ResultRow {
        self.results.get(id).expect("result exists")
    }
    pub(crate) fn result_mut(&mut self, id: ResultId) -> &mut ResultRow {
        self.results.get_mut(id).expect("result exists")
    }
    pub fn host(&self, id: HostId) -> &HostRow {
        self.hosts.get(id).expect("host exists")
    }
    pub(crate) fn host_mut(&mut self, id: HostId) -> &mut HostRow {
        self.hosts.get_mut(id).expect("host exists")
    }

    // ----- prefetch -------------------------------------------------------------

    /// Step `t` of a daemon's walk over its work list `list` ([`super::Project::walk`]
    /// visits entry `t − what.lag()` after it): stage `k` of [`Prefetch::stages`]
    /// works on entry `t − k·WALK_AHEAD`. A row is reached through its table's index
    /// entry, and with millions of rows alive both miss the cache: reading the index
    /// entry to prefetch the row stalled on the entry (8.7 % of `bench-1m`, where a
    /// pass visits workunits scattered over the whole table), so the entry is
    /// prefetched one stage before the row. The misses of several workunits overlap
    /// instead of following one another (docs/performance.md). A hint only: it
    /// changes no value.
    pub(crate) fn prefetch_walk_step(&self, list: &[WuId], t: usize, what: Prefetch) {
        let id = |stage: usize| {
            t.checked_sub(stage * WALK_AHEAD)
                .and_then(|k| list.get(k))
                .copied()
        };
        let wu = |stage: usize| id(stage).and_then(|w| self.workunits.get(w));
        if let Some(w) = id(0) {
            self.workunits.prefetch_index(w);
        }
        if let Some(w) = id(1) {
            self.workunits.prefetch(w);
        }
        if !what.results {
            return;
        }
        if let Some(wu) = wu(2) {
            wu.results
                .iter()
                .for_each(|&r| self.results.prefetch_index(r));
        }
        if let Some(wu) = wu(3) {
            wu.results.iter().for_each(|&r| self.results.prefetch(r));
        }
        if !what.hosts {
            return;
        }
        if let Some(wu) = wu(4) {
            self.result_rows(wu)
                .for_each(|r| self.hosts.prefetch_index(r.hostid));
        }
        if let Some(wu) = wu(5) {
            self.result_rows(wu)
                .for_each(|r| self.hosts.prefetch(r.hostid));
        }
        if what.havs
            && let Some(wu) = wu(6)
        {
            for r in self.result_rows(wu) {
                if let Some(hav) = self.hosts.get(r.hostid).and_then(|h| h.havs.first()) {
                    crate::base::prefetch::prefetch(hav);
                }
            }
        }
    }

    // ----- creation and deletion ------------------------------------------------

    /// Inserts a workunit (work generator, spec backend §2.1 step 3).
    pub(crate) fn insert_workunit(&mut self, actor: Actor, mut wu: WorkunitRow) -> WuId {
        let id = self.workunits.next_id();
        wu.id = id;
        let tt = Time::from(wu.transition_time);
        wu.in_transition_index = tt < INT_MAX;
        self.workunits.insert(wu);
        self.indexed.store(&self.workunits, id, tt);
        self.workunits_live += 1;
        audit!(self, actor, Entity::Workunit, id, Field::Row, 0, 1);
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::TransitionTime,
            0,
            tt
        );
        if tt < INT_MAX {
            self.transition_index.push(tt, id);
            self.transition_indexed += 1;
            self.note_transition(tt);
        }
        id
    }

    /// Inserts a result of a workunit (transitioner, spec backend §2.2 step 5b).
    pub(crate) fn insert_result(&mut self, actor: Actor, mut r: ResultRow) -> ResultId {
        let id = self.results.next_id();
        r.id = id;
        let (wuid, state, prio) = (r.workunitid, r.server_state, r.priority);
        self.results.insert(r);
        self.result_state_counts[state.code() as usize] += 1;
        self.wu_mut(wuid).results.push(id);
        audit!(self, actor, Entity::Result, id, Field::Row, 0, 1);
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::ServerState,
            0,
            state.code()
        );
        if state == ServerState::Unsent {
            self.feedable.insert(FeedKey::new(prio, wuid, id));
            self.count_unsent(wuid, 1);
        }
        id
    }

    /// Deletes a workunit and its results (db_purge, spec backend §2.8). Returns the
    /// workunit's row and appends its results' to `rows`, so that they can still be
    /// written to the outputs (one list for a whole pass: no allocation per
    /// workunit).
    pub(crate) fn purge_workunit(&mut self, wuid: WuId, rows: &mut Vec<ResultRow>) -> WorkunitRow {
        let wu = self.workunits.remove(wuid).expect("workunit exists");
        self.workunits_live -= 1;
        // Its index entry, if any, is stale now that the row is gone (the entry's
        // id finds no row slot any more).
        if wu.in_transition_index {
            self.transition_indexed -= 1;
        }
        self.need_validate.remove(wuid);
        self.assimilate_ready.remove(wuid);
        self.fd_ready_wus.remove(wuid);
        self.fd_error_wus.remove(wuid);
        self.purge_ready.remove(wuid);
        self.purge_eligible.remove(&wuid);
        for &rid in &wu.results {
            let r = self.results.remove(rid).expect("result exists");
            self.result_state_counts[r.server_state.code() as usize] -= 1;
            self.fd_ready_results.remove(rid);
            self.fd_error_results.remove(rid);
            if r.server_state == ServerState::Unsent && !r.in_cache {
                self.feedable.remove(&FeedKey::new(r.priority, wuid, rid));
            }
            if r.server_state == ServerState::Unsent {
                self.count_unsent_of(wu.appid, -1);
            }
            if r.server_state == ServerState::InProgress {
                self.detach_from_host(r.hostid, rid);
            }
            audit!(self, Actor::DbPurge, Entity::Result, rid, Field::Row, 1, 0);
            rows.push(r);
        }
        audit!(
            self,
            Actor::DbPurge,
            Entity::Workunit,
            wuid,
            Field::Row,
            1,
            0
        );
        wu
    }

    /// Adds an IN_PROGRESS result to its host's list, keeping it sorted.
    fn attach_to_host(&mut self, hostid: HostId, rid: ResultId) {
        if let Some(h) = self.hosts.get_mut(hostid)
            && let Err(i) = h.in_progress.binary_search(&rid)
        {
            h.in_progress.insert(i, rid);
        }
    }

    fn detach_from_host(&mut self, hostid: HostId, rid: ResultId) {
        if let Some(h) = self.hosts.get_mut(hostid)
            && let Ok(i) = h.in_progress.binary_search(&rid)
        {
            h.in_progress.remove(i);
        }
    }

    // ----- transitioner index ---------------------------------------------------

    /// Pops every workunit with `transition_time < now` into `out`, in ascending id
    /// (the transitioner's snapshot, spec backend §2.0, §2.2).
    pub(crate) fn take_due_workunits(&mut self, now: Time, out: &mut Vec<WuId>) {
        out.clear();
        let count = &mut self.transition_indexed;
        self.transition_index.pop_due(
            now,
            out,
            &mut (&mut self.workunits, &mut self.indexed),
            |(rows, indexed), id, tt| {
                let current = indexed.is_current(rows, id, tt);
                if current {
                    indexed.store(rows, id, INT_MAX);
                    rows.get_mut(id)
                        .expect("an indexed workunit exists")
                        .in_transition_index = false;
                    *count -= 1;
                }
                current
            },
            // The row too: a due workunit's is written here, and read by the
            // transitioner right after.
            |(rows, indexed), id| {
                indexed.prefetch(rows, id);
                rows.prefetch(id);
            },
        );
        out.sort_unstable();
    }

    /// Whether the lazy transitioner index agrees with the rows (checked under
    /// `--check-invariants`): every workunit marked indexed has a time below
    /// `INT_MAX` and an entry at that time, and the count of marked workunits, which
    /// sizes compaction, is right. `None` when it does; otherwise what is wrong.
    pub(crate) fn transition_index_error(&self) -> Option<String> {
        let mut marked = 0;
        for (id, wu) in self.workunits.iter() {
            let at = self.indexed.get(&self.workunits, id);
            if at
                != wu
                    .in_transition_index
                    .then_some(Time::from(wu.transition_time))
            {
                return Some(format!(
                    "workunit {id} (transition_time {}, marked indexed: {}) is indexed at {at:?} beside the rows",
                    wu.transition_time, wu.in_transition_index
                ));
            }
            if !wu.in_transition_index {
                continue;
            }
            marked += 1;
            let tt = Time::from(wu.transition_time);
            if tt >= INT_MAX || !self.transition_index.holds(tt, id) {
                return Some(format!(
                    "workunit {id} is marked in the transitioner index at {} but has no entry there",
                    wu.transition_time
                ));
            }
        }
        (marked != self.transition_indexed).then(|| {
            format!(
                "{} workunits are marked in the transitioner index, the count says {}",
                marked, self.transition_indexed
            )
        })
    }

    fn note_transition(&mut self, tt: Time) {
        self.transition_lowered = Some(self.transition_lowered.map_or(tt, |t| t.min(tt)));
    }

    /// The smallest `transition_time` indexed since the last call, if any, and
    /// forgets it: what a sleeping transitioner must wake for besides the time it
    /// went to sleep with.
    pub(crate) fn take_transition_lowered(&mut self) -> Option<Time> {
        self.transition_lowered.take()
    }

    /// The first `limit` workunits of `purge_ready`, in ascending id, whose
    /// `files_deleted_time` is at least `min_age` before `now` (db_purge's query,
    /// spec backend §2.8), into `out`: exactly those the scan of the whole list
    /// found, at the cost of the workunits that became old enough since the last
    /// call. `now` never decreases between calls.
    pub(crate) fn take_purgeable(
        &mut self,
        now: Time,
        min_age: Time,
        limit: usize,
        out: &mut Vec<WuId>,
    ) {
        while let Some(&(t, id)) = self.purge_queue.front() {
            if now - t < min_age {
                break;
            }
            self.purge_queue.pop_front();
            let current = self.purge_ready.contains(id)
                && self
                    .workunits
                    .get(id)
                    .is_some_and(|w| Time::from(w.files_deleted_time) == t);
            if current {
                self.purge_eligible.insert(id);
            }
        }
        out.clear();
        out.extend(self.purge_eligible.iter().take(limit).copied());
    }

    /// The earliest time at which [`Self::take_purgeable`] may find a workunit
    /// with this `min_age` (`None`: none waits). May be early, never late.
    pub(crate) fn next_purgeable(&self, min_age: Time) -> Option<Time> {
        if !self.purge_eligible.is_empty() {
            return Some(Time::MIN);
        }
        self.purge_queue
            .front()
            .map(|&(t, _)| t.saturating_add(min_age))
    }

    /// Earliest `transition_time` in the index, if any.
    pub fn next_transition_time(&mut self) -> Option<Time> {
        let (rows, indexed) = (&self.workunits, &self.indexed);
        self.transition_index
            .peek(|id, tt| indexed.is_current(rows, id, tt))
    }

    // ----- workunit setters -----------------------------------------------------

    pub(crate) fn set_transition_time(&mut self, actor: Actor, id: WuId, tt: Time) {
        let wu = self.wu_mut(id);
        let old = Time::from(wu.transition_time);
        let was_indexed = wu.in_transition_index;
        debug_assert!(
            (0..=INT_MAX).contains(&tt),
            "transition_time {tt} out of range"
        );
        wu.transition_time = db_time(tt);
        // The index may have popped this WU for a pass; always re-sync it. An entry
        // already current at this time is not pushed twice.
        wu.in_transition_index = tt < INT_MAX;
        self.transition_indexed =
            self.transition_indexed + usize::from(tt < INT_MAX) - usize::from(was_indexed);
        if !(was_indexed && old == tt) {
            self.indexed.store(&self.workunits, id, tt);
            if tt < INT_MAX {
                self.transition_index.push(tt, id);
                self.note_transition(tt);
                let (rows, indexed) = (&self.workunits, &self.indexed);
                self.transition_index.compact_if_sparse(
                    self.transition_indexed,
                    |id, tt| indexed.is_current(rows, id, tt),
                    |id| indexed.prefetch(rows, id),
                );
            }
        }
        if old != tt {
            audit!(
                self,
                actor,
                Entity::Workunit,
                id,
                Field::TransitionTime,
                old,
                tt
            );
        }
    }

    pub(crate) fn set_need_validate(&mut self, actor: Actor, id: WuId, v: bool) {
        let wu = self.wu_mut(id);
        let old = wu.need_validate;
        if old == v {
            return;
        }
        wu.need_validate = v;
        if v {
            self.need_validate.insert(id);
        } else {
            self.need_validate.remove(id);
        }
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::NeedValidate,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_error_mask(&mut self, actor: Actor, id: WuId, v: i32) {
        let wu = self.wu_mut(id);
        let old = wu.error_mask;
        if old == v {
            return;
        }
        wu.error_mask = v;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::ErrorMask,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_canonical(&mut self, actor: Actor, id: WuId, rid: ResultId, now: Time) {
        let truth = self.results.get(rid).and_then(|r| r.output_correct);
        let wu = self.wu_mut(id);
        let old = wu.canonical_resultid;
        if old == rid {
            return;
        }
        wu.canonical_resultid = rid;
        wu.canonical_found_time = db_time(now);
        wu.canonical_correct = truth;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::CanonicalResultid,
            old.0 as i64,
            rid.0 as i64
        );
    }

    pub(crate) fn set_wu_assimilate_state(
        &mut self,
        actor: Actor,
        id: WuId,
        v: AssimilateState,
        now: Time,
    ) {
        let wu = self.wu_mut(id);
        let old = wu.assimilate_state;
        if old == v {
            return;
        }
        wu.assimilate_state = v;
        if v == AssimilateState::Done {
            wu.assimilated_time = db_time(now);
        }
        // A workunit leaves INIT once, when it has a canonical result or an error
        // bit: the moment its batch counts it done (spec backend §1.5).
        let (batch, success) = (wu.batch, wu.canonical_resultid != ResultId(0));
        if old == AssimilateState::Init && batch != 0 {
            self.batches.workunit_done(batch, success, now);
        }
        if v == AssimilateState::Ready {
            self.assimilate_ready.insert(id);
        } else {
            self.assimilate_ready.remove(id);
        }
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::AssimilateState,
            old.code(),
            v.code()
        );
    }

    pub(crate) fn set_wu_file_delete_state(
        &mut self,
        actor: Actor,
        id: WuId,
        v: FileDeleteState,
        now: Time,
    ) {
        let wu = self.wu_mut(id);
        let old = wu.file_delete_state;
        if old == v {
            return;
        }
        wu.file_delete_state = v;
        if v == FileDeleteState::Done {
            wu.files_deleted_time = db_time(now);
        }
        self.fd_ready_wus.remove(id);
        self.fd_error_wus.remove(id);
        match v {
            FileDeleteState::Ready => {
                self.fd_ready_wus.insert(id);
            }
            FileDeleteState::Error => {
                self.fd_error_wus.insert(id);
            }
            FileDeleteState::Done => {
                self.purge_ready.insert(id);
                // A new `files_deleted_time`: not old enough now, whatever it was.
                self.purge_eligible.remove(&id);
                self.purge_queue.push_back((now, id));
            }
            FileDeleteState::Init => {}
        }
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::FileDeleteState,
            old.code(),
            v.code()
        );
    }

    pub(crate) fn set_target_nresults(&mut self, actor: Actor, id: WuId, v: i32) {
        let wu = self.wu_mut(id);
        let old = wu.target_nresults;
        if old == v {
            return;
        }
        wu.target_nresults = v;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::TargetNresults,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_min_quorum(&mut self, actor: Actor, id: WuId, v: i32) {
        let wu = self.wu_mut(id);
        let old = wu.min_quorum;
        if old == v {
            return;
        }
        wu.min_quorum = v;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::MinQuorum,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_hr_class(&mut self, actor: Actor, id: WuId, v: i32) {
        let wu = self.wu_mut(id);
        let old = wu.hr_class;
        if old == v {
            return;
        }
        wu.hr_class = v;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::HrClass,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_wu_app_version_id(&mut self, actor: Actor, id: WuId, v: u32) {
        let wu = self.wu_mut(id);
        let old = wu.app_version_id;
        if old == v {
            return;
        }
        wu.app_version_id = v;
        audit!(
            self,
            actor,
            Entity::Workunit,
            id,
            Field::AppVersionId,
            old as i64,
            v as i64
        );
    }

    // ----- result setters -------------------------------------------------------

    pub(crate) fn set_server_state(&mut self, actor: Actor, id: ResultId, v: ServerState) {
        let r = self.result_mut(id);
        let old = r.server_state;
        if old == v {
            return;
        }
        r.server_state = v;
        let (prio, wuid, hostid) = (r.priority, r.workunitid, r.hostid);
        let cached = r.in_cache;
        self.result_state_counts[old.code() as usize] -= 1;
        self.result_state_counts[v.code() as usize] += 1;
        if cached && (old == ServerState::Unsent || v == ServerState::Unsent) {
            self.cache_moves.push(id);
        } else if old == ServerState::Unsent {
            self.feedable.remove(&FeedKey::new(prio, wuid, id));
        } else if v == ServerState::Unsent {
            self.feedable.insert(FeedKey::new(prio, wuid, id));
        }
        if old == ServerState::Unsent {
            self.count_unsent(wuid, -1);
        } else if v == ServerState::Unsent {
            self.count_unsent(wuid, 1);
        }
        if old == ServerState::InProgress {
            self.detach_from_host(hostid, id);
        }
        if v == ServerState::InProgress {
            self.attach_to_host(hostid, id);
        }
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::ServerState,
            old.code(),
            v.code()
        );
    }

    pub(crate) fn set_outcome(&mut self, actor: Actor, id: ResultId, v: Outcome) {
        let r = self.result_mut(id);
        let old = r.outcome;
        if old == v {
            return;
        }
        r.outcome = v;
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::Outcome,
            old.code(),
            v.code()
        );
    }

    /// Sets `server_state = OVER` and `outcome` together, the common pair.
    pub(crate) fn set_over(&mut self, actor: Actor, id: ResultId, outcome: Outcome) {
        self.set_server_state(actor, id, ServerState::Over);
        self.set_outcome(actor, id, outcome);
    }

    pub(crate) fn set_validate_state(&mut self, actor: Actor, id: ResultId, v: ValidateState) {
        let r = self.result_mut(id);
        let old = r.validate_state;
        if old == v {
            return;
        }
        r.validate_state = v;
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::ValidateState,
            old.code(),
            v.code()
        );
    }

    pub(crate) fn set_result_file_delete_state(
        &mut self,
        actor: Actor,
        id: ResultId,
        v: FileDeleteState,
    ) {
        let r = self.result_mut(id);
        let old = r.file_delete_state;
        if old == v {
            return;
        }
        r.file_delete_state = v;
        self.fd_ready_results.remove(id);
        self.fd_error_results.remove(id);
        match v {
            FileDeleteState::Ready => {
                self.fd_ready_results.insert(id);
            }
            FileDeleteState::Error => {
                self.fd_error_results.insert(id);
            }
            _ => {}
        }
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::FileDeleteState,
            old.code(),
            v.code()
        );
    }

    pub(crate) fn set_hostid(&mut self, actor: Actor, id: ResultId, hostid: HostId) {
        let r = self.result_mut(id);
        let old = r.hostid;
        if old == hostid {
            return;
        }
        let in_progress = r.server_state == ServerState::InProgress;
        r.hostid = hostid;
        if in_progress {
            self.detach_from_host(old, id);
            self.attach_to_host(hostid, id);
        }
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::Hostid,
            old.0 as i64,
            hostid.0 as i64
        );
    }

    pub(crate) fn set_report_deadline(&mut self, actor: Actor, id: ResultId, t: Time) {
        let r = self.result_mut(id);
        let old = r.report_deadline;
        if old == t {
            return;
        }
        r.report_deadline = t;
        audit!(
            self,
            actor,
            Entity::Result,
            id,
            Field::ReportDeadline,
            old,
            t
        );
    }

    // ----- host app version setters ---------------------------------------------

    pub(crate) fn set_consecutive_valid(&mut self, actor: Actor, host: HostId, av: u32, v: i32) {
        let Some(hav) = self.hosts.get_mut(host).and_then(|h| h.hav_mut(av)) else {
            return;
        };
        let old = hav.consecutive_valid;
        if old == v {
            return;
        }
        hav.consecutive_valid = v;
        audit!(
            self,
            actor,
            Entity::HostAppVersion,
            host,
            Field::ConsecutiveValid,
            old as i64,
            v as i64
        );
    }

    pub(crate) fn set_max_jobs_per_day(&mut self, actor: Actor, host: HostId, av: u32, v: i32) {
        let Some(hav) = self.hosts.get_mut(host).and_then(|h| h.hav_mut(av)) else {
            return;
        };
        let old = hav.max_jobs_per_day;
        if old == v {
            return;
        }
        hav.max_jobs_per_day = v;
        audit!(
            self,
            actor,
            Entity::HostAppVersion,
            host,
            Field::MaxJobsPerDay,
            old as i64,
            v as i64
        );
    }
}

/// A copy, beside the rows, of the time at which the transitioner index holds each
/// workunit (the row's `transition_time` when `in_transition_index` is set): the
/// index is lazy ([`TransitionIndex`]), and an entry `(tt, id)` is current only if
/// the workunit is indexed at exactly `tt`.
///
/// One `i32` per row slot of the workunit table: most entries the index drops are
/// stale (a result's deadline, left behind when the result came back early), and
/// checking one against its row missed the cache for each, hours after the row was
/// last touched; sixteen slots share a cache line here. The setters write
/// it without reading it (they know the old state from the row they hold), so a
/// write that misses does not stall.
#[derive(Debug, Default)]
struct Indexed {
    /// By row slot; [`Self::NOT`] when the workunit is not indexed. A time in the
    /// index is below `INT_MAX`, as BOINC's `int` column.
    tt: Vec<i32>,
}

impl Indexed {
    const NOT: i32 = i32::MIN;

    /// Records that the workunit's `transition_time` is `tt`: indexed at `tt` if
    /// below `INT_MAX`, not indexed otherwise.
    fn store(&mut self, rows: &Table<WorkunitRow, WuId>, id: WuId, tt: Time) {
        let s = rows.slot_of(id).expect("workunit exists") as usize;
        if s >= self.tt.len() {
            // In steps of the table's slab chunk: the slab never shrinks either.
            self.tt
                .resize((s + 1).next_multiple_of(super::table::CHUNK), Self::NOT);
        }
        self.tt[s] = if tt < INT_MAX {
            let t = i32::try_from(tt).expect("transition_time fits BOINC's int");
            debug_assert_ne!(t, Self::NOT);
            t
        } else {
            Self::NOT
        };
    }

    /// The time the workunit is indexed at, if it is.
    fn get(&self, rows: &Table<WorkunitRow, WuId>, id: WuId) -> Option<Time> {
        let s = rows.slot_of(id)? as usize;
        let t = *self.tt.get(s)?;
        (t != Self::NOT).then_some(Time::from(t))
    }

    /// Whether the index entry `(tt, id)` is the workunit's current one.
    fn is_current(&self, rows: &Table<WorkunitRow, WuId>, id: WuId, tt: Time) -> bool {
        self.get(rows, id) == Some(tt)
    }

    fn prefetch(&self, rows: &Table<WorkunitRow, WuId>, id: WuId) {
        if let Some(t) = rows.slot_of(id).and_then(|s| self.tt.get(s as usize)) {
            crate::base::prefetch::prefetch(t);
        }
    }
}

/// A result's BOINC name, `wu<id>_<suffix>`.
pub(crate) fn result_name(wuid: WuId, suffix: u16) -> String {
    format!("wu{wuid}_{suffix}")
}

/// Parses a result name back into `(wuid, suffix)`.
pub(crate) fn parse_result_name(name: &str) -> Option<(WuId, u16)> {
    let rest = name.strip_prefix("wu")?;
    let (w, s) = rest.rsplit_once('_')?;
    Some((WuId(w.parse().ok()?), s.parse().ok()?))
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The rows' sizes are what memory per job in flight is made of
    /// (docs/performance.md "Sizes"): a field added to a row shows here first.
    #[test]
    fn row_sizes() {
        assert_eq!(std::mem::size_of::<ResultRow>(), 128);
        assert_eq!(std::mem::size_of::<Option<ResultRow>>(), 128);
        assert_eq!(std::mem::size_of::<WorkunitRow>(), 128);
        assert_eq!(std::mem::size_of::<WuResults>(), 16);
        // One per host and project: the shared names and the group as a `u32`
        // took it from 256 bytes; the world's host index (for `results.csv`'s
        // `host`) added 8.
        assert_eq!(std::mem::size_of::<Option<HostRow>>(), 216);
    }

    /// A result list keeps its ids in order inline up to three and in a vector
    /// beyond, by reference and by value alike.
    #[test]
    fn result_list_spills_past_three_in_order() {
        let mut l = WuResults::new();
        assert!(l.is_empty());
        for k in 1..=3 {
            l.push(ResultId(10 * k));
        }
        assert!(matches!(l.0, ResultsRepr::Inline(3, _)));
        assert_eq!(&l[..], &[ResultId(10), ResultId(20), ResultId(30)]);
        l.push(ResultId(40));
        l.push(ResultId(50));
        assert!(matches!(l.0, ResultsRepr::Spilled(_)));
        let want: Vec<ResultId> = (1..=5).map(|k| ResultId(10 * k)).collect();
        assert_eq!(&l[..], &want[..]);
        assert_eq!(l.clone().into_iter().collect::<Vec<_>>(), want);
        assert_eq!((&l).into_iter().copied().collect::<Vec<_>>(), want);
        assert_eq!(want.iter().copied().collect::<WuResults>(), l);
    }

    /// Workunits of one template share one copy of its limits, with the template's
    /// values; a template changed since gets a new copy.
    #[test]
    fn limits_are_shared_per_template() {
        let mut t = super::super::config::WuTemplate {
            delay_bound: 3 * 86_400,
            max_total_results: 6,
            rsc_memory_bound: 2e9,
            ..Default::default()
        };
        let mut cached = Arc::new(WuLimits::of(&Default::default()));
        let a = WorkunitRow::from_template_with(&t, WuLimits::shared(&mut cached, &t), 5);
        let b = WorkunitRow::from_template_with(&t, WuLimits::shared(&mut cached, &t), 6);
        assert!(Arc::ptr_eq(&a.limits, &b.limits));
        assert_eq!(
            (
                a.limits.delay_bound,
                a.limits.max_total_results,
                a.limits.rsc_memory_bound
            ),
            (259_200, 6, 2e9)
        );
        assert_eq!((a.transition_time, b.transition_time), (5, 6));
        t.max_total_results = 8;
        let c = WorkunitRow::from_template_with(&t, WuLimits::shared(&mut cached, &t), 7);
        assert!(!Arc::ptr_eq(&a.limits, &c.limits));
        assert_eq!(
            (a.limits.max_total_results, c.limits.max_total_results),
            (6, 8)
        );
    }

    /// `transition_time` keeps BOINC's "none" (`INT_MAX`) exactly in its 4 bytes.
    #[test]
    fn transition_time_holds_int_max() {
        let wu = WorkunitRow::from_template(&Default::default(), INT_MAX + 5);
        assert_eq!(Time::from(wu.transition_time), INT_MAX);
    }
}

#[cfg(test)]
mod feed_key_tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::cmp::Reverse;

    /// Packed keys sort exactly as `(Reverse(priority), WU id, result id)` does, the
    /// extremes of each field included, and give their ids back.
    #[test]
    fn packed_keys_sort_as_the_triples() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(8);
        let edges = [i32::MIN, -1, 0, 1, i32::MAX];
        let mut triples: Vec<(i32, u32, u32)> = (0..5000)
            .map(|k| {
                let p = if k % 7 == 0 {
                    edges[k % 5]
                } else {
                    rng.random_range(-3..3)
                };
                let w = [0, 1, u32::MAX][k % 3].max(rng.random_range(0..50));
                (p, w, rng.random_range(0..u32::MAX))
            })
            .collect();
        triples.push((i32::MAX, u32::MAX, u32::MAX));
        triples.push((i32::MIN, 0, 0));
        let mut by_tuple = triples.clone();
        by_tuple.sort_by_key(|&(p, w, r)| (Reverse(p), w, r));
        let mut by_key = triples;
        by_key.sort_by_key(|&(p, w, r)| FeedKey::new(p, WuId(w), ResultId(r)));
        assert_eq!(by_key, by_tuple);
        let k = FeedKey::new(-5, WuId(u32::MAX), ResultId(7));
        assert_eq!((k.wuid(), k.rid()), (WuId(u32::MAX), ResultId(7)));
    }
}

#[cfg(test)]
mod indexed_tests {
    use super::super::invariants::test_rows;
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    /// db_purge's pick without a scan (`take_purgeable`) equals the old scan of the
    /// whole `purge_ready` list (first `limit` in id order with `now −
    /// files_deleted_time ≥ min_age`), under random inserts, deletions that end in
    /// DONE (again, too, with a new time), other file-delete states and purges.
    #[test]
    fn purgeable_pick_equals_the_scan_of_purge_ready() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(33);
        for round in 0..60 {
            let mut db = Db::new(false);
            let min_age: Time = [0, 1, 30, 600][round % 4];
            let limit = [1, 3, 1000][round % 3];
            let mut live: Vec<WuId> = Vec::new();
            let mut now: Time = 0;
            let mut out = Vec::new();
            for _ in 0..600 {
                match rng.random_range(0..10u32) {
                    0..=2 => {
                        let id = db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
                        live.push(id);
                    }
                    3..=5 if !live.is_empty() => {
                        let id = live[rng.random_range(0..live.len())];
                        let s = [
                            FileDeleteState::Done,
                            FileDeleteState::Done,
                            FileDeleteState::Ready,
                            FileDeleteState::Error,
                            FileDeleteState::Init,
                        ][rng.random_range(0..5)];
                        db.set_wu_file_delete_state(Actor::FileDeleter, id, s, now);
                    }
                    6 if !live.is_empty() => {
                        let id = live.swap_remove(rng.random_range(0..live.len()));
                        db.purge_workunit(id, &mut Vec::new());
                    }
                    7 => now += rng.random_range(0..400),
                    _ => {
                        let scan: Vec<WuId> = (db.purge_ready.iter())
                            .filter(|&id| now - Time::from(db.wu(id).files_deleted_time) >= min_age)
                            .take(limit)
                            .collect();
                        db.take_purgeable(now, min_age, limit, &mut out);
                        assert_eq!(out, scan, "t={now}");
                        // The wake time is never later than the first purgeable one.
                        let first = (db.purge_ready.iter())
                            .map(|id| Time::from(db.wu(id).files_deleted_time) + min_age)
                            .min();
                        if let Some(first) = first {
                            assert!(db.next_purgeable(min_age).is_some_and(|t| t <= first));
                        }
                        // Purge what was picked, as a pass does.
                        for &id in &out {
                            live.retain(|&w| w != id);
                            db.purge_workunit(id, &mut Vec::new());
                        }
                    }
                }
            }
        }
    }

    /// Random inserts, moves (to `INT_MAX` too), purges (whose row slots the next
    /// inserts reuse) and transitioner snapshots: each snapshot is exactly the
    /// workunits an exact index holds below `now`, and the lazy index stays
    /// consistent with the rows (`transition_index_error`) after every step.
    #[test]
    fn the_lazy_index_agrees_with_an_exact_one() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(21);
        for _ in 0..40 {
            let mut db = Db::new(false);
            let mut exact: BTreeMap<WuId, Time> = BTreeMap::new();
            let mut live: Vec<WuId> = Vec::new();
            let mut now: Time = 0;
            for _ in 0..800 {
                let pick = |rng: &mut rand_pcg::Pcg64Mcg, live: &[WuId]| {
                    live[rng.random_range(0..live.len())]
                };
                let tt = |rng: &mut rand_pcg::Pcg64Mcg, now: Time| {
                    if rng.random_bool(0.15) {
                        INT_MAX
                    } else {
                        (now + rng.random_range(-5..400)).max(0)
                    }
                };
                match rng.random_range(0..10u32) {
                    0..=2 => {
                        let mut wu = test_rows::workunit();
                        let t = tt(&mut rng, now);
                        wu.transition_time = db_time(t);
                        let id = db.insert_workunit(Actor::WorkGenerator, wu);
                        live.push(id);
                        if t < INT_MAX {
                            exact.insert(id, t);
                        }
                    }
                    3..=5 if !live.is_empty() => {
                        let id = pick(&mut rng, &live);
                        let t = tt(&mut rng, now);
                        db.set_transition_time(Actor::Transitioner, id, t);
                        if t < INT_MAX {
                            exact.insert(id, t);
                        } else {
                            exact.remove(&id);
                        }
                    }
                    6 if !live.is_empty() => {
                        let id = pick(&mut rng, &live);
                        live.retain(|&w| w != id);
                        exact.remove(&id);
                        db.purge_workunit(id, &mut Vec::new());
                    }
                    _ => {
                        now += rng.random_range(0..120);
                        let mut got = Vec::new();
                        db.take_due_workunits(now, &mut got);
                        let want: Vec<WuId> = exact
                            .iter()
                            .filter(|&(_, &t)| t < now)
                            .map(|(&id, _)| id)
                            .collect();
                        for id in &want {
                            exact.remove(id);
                        }
                        assert_eq!(got, want);
                        assert_eq!(db.next_transition_time(), exact.values().min().copied());
                    }
                }
                assert_eq!(db.transition_index_error(), None);
                assert_eq!(db.transition_indexed, exact.len());
            }
        }
    }
}
