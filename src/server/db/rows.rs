//! The rows of the project database (spec backend §1.2–§1.4): WORKUNIT, RESULT,
//! HOST and HOST_APP_VERSION, with the fields the daemons and the scheduler read.

use crate::engine::Time;
use crate::server::config::WuTemplate;
use crate::server::credit::{Average, AverageVar};
use crate::server::types::*;
use crate::server::types::{DbTime, INT_MAX, db_time};
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
    /// the daemons' snapshot of the list, taken on every pass, copies without
    /// allocating (docs/performance.md, "Measurements behind the code").
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
    pub(crate) fn of(t: &WuTemplate) -> Self {
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
    pub(crate) fn shared(cached: &mut Arc<WuLimits>, t: &WuTemplate) -> Arc<Self> {
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
    pub(crate) fn from_template(t: &WuTemplate, now: Time) -> Self {
        Self::from_template_with(t, Arc::new(WuLimits::of(t)), now)
    }

    /// [`Self::from_template`] with the template's limits already shared
    /// ([`WuLimits::shared`]): what the work generators use, so that their
    /// workunits share one copy.
    pub(crate) fn from_template_with(t: &WuTemplate, limits: Arc<WuLimits>, now: Time) -> Self {
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
/// of a host export. Three `Arc<str>` in the row took 48 bytes a host; the shared
/// triple takes 8 (docs/performance.md, "Measurements behind the code").
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
    pub coprocs: Box<[crate::server::resource::Coproc]>,
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
    /// leave three rows' worth unused on every host (docs/performance.md,
    /// "Measurements behind the code").
    pub(crate) fn add_hav(&mut self, hav: HavRow) {
        self.havs.reserve_exact(1);
        self.havs.push(hav);
    }
    pub(crate) fn hav_mut(&mut self, av: u32) -> Option<&mut HavRow> {
        self.havs.iter_mut().find(|h| h.app_version_id == av)
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
        let mut t = WuTemplate {
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
