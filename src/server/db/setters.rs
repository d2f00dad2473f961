//! The audited writes of state fields (spec backend §1.2–§1.4): every change of a
//! field named in `transitions.csv` goes through [`Db::set`], which writes the row
//! and appends one [`Transition`]; a field whose write also moves a daemon's work
//! list has a setter here that calls it and then keeps the list in step.

use super::{Db, FeedKey};
use crate::engine::Time;
use crate::server::types::*;
use crate::server::types::{INT_MAX, db_time};
use serde::Serialize;

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

/// A state field's value as `transitions.csv` writes it: BOINC's integer column.
pub(crate) trait Code: Copy + PartialEq {
    fn code(self) -> i64;
}

impl Code for i32 {
    fn code(self) -> i64 {
        i64::from(self)
    }
}
impl Code for u32 {
    fn code(self) -> i64 {
        i64::from(self)
    }
}
impl Code for bool {
    fn code(self) -> i64 {
        i64::from(self)
    }
}
impl Code for Time {
    fn code(self) -> i64 {
        self
    }
}
impl Code for ResultId {
    fn code(self) -> i64 {
        i64::from(self.0)
    }
}
impl Code for HostId {
    fn code(self) -> i64 {
        i64::from(self.0)
    }
}

macro_rules! code_of_state {
    ($($t:ty),*) => {$(
        impl Code for $t {
            fn code(self) -> i64 {
                <$t>::code(self)
            }
        }
    )*};
}
code_of_state!(
    ServerState,
    Outcome,
    ValidateState,
    FileDeleteState,
    AssimilateState
);

/// One audited state field: which row holds it, where in the row, and how the
/// trail names it. [`Db::set`] is written once against this.
pub(crate) trait Column {
    /// How a row is found: its id, or `(host id, app version id)` for a host app
    /// version.
    type Key: Copy;
    type Row;
    type Value: Code;
    const ENTITY: Entity;
    const FIELD: Field;
    /// The row, if it exists (a workunit or result row must).
    fn row(db: &mut Db, key: Self::Key) -> Option<&mut Self::Row>;
    fn field(row: &mut Self::Row) -> &mut Self::Value;
    /// The id the trail gives the row.
    fn id(key: Self::Key) -> u32;
}

/// The audited state fields, one type each (the trail's [`Field`] names them).
pub(crate) mod col {
    use super::{Column, Db, Entity, Field};
    use crate::engine::Time;
    use crate::server::db::{HavRow, ResultRow, WorkunitRow};
    use crate::server::types::{self as t, HostId, ResultId, RowId, WuId};

    macro_rules! column {
        ($($name:ident = $trail:ident: $entity:ident $row:ident.$field:ident: $t:ty;)*) => {$(
            pub(crate) struct $name;
            column!(@impl $name $trail $entity $row $field $t);
        )*};
        (@impl $name:ident $trail:ident Workunit $row:ident $field:ident $t:ty) => {
            impl Column for $name {
                type Key = WuId;
                type Row = WorkunitRow;
                type Value = $t;
                const ENTITY: Entity = Entity::Workunit;
                const FIELD: Field = Field::$trail;
                #[inline]
                fn row(db: &mut Db, key: WuId) -> Option<&mut WorkunitRow> {
                    Some(db.wu_mut(key))
                }
                #[inline]
                fn field(row: &mut WorkunitRow) -> &mut $t {
                    &mut row.$field
                }
                fn id(key: WuId) -> u32 {
                    key.raw()
                }
            }
        };
        (@impl $name:ident $trail:ident Result $row:ident $field:ident $t:ty) => {
            impl Column for $name {
                type Key = ResultId;
                type Row = ResultRow;
                type Value = $t;
                const ENTITY: Entity = Entity::Result;
                const FIELD: Field = Field::$trail;
                #[inline]
                fn row(db: &mut Db, key: ResultId) -> Option<&mut ResultRow> {
                    Some(db.result_mut(key))
                }
                #[inline]
                fn field(row: &mut ResultRow) -> &mut $t {
                    &mut row.$field
                }
                fn id(key: ResultId) -> u32 {
                    key.raw()
                }
            }
        };
        (@impl $name:ident $trail:ident HostAppVersion $row:ident $field:ident $t:ty) => {
            impl Column for $name {
                type Key = (HostId, u32);
                type Row = HavRow;
                type Value = $t;
                const ENTITY: Entity = Entity::HostAppVersion;
                const FIELD: Field = Field::$trail;
                #[inline]
                fn row(db: &mut Db, (host, av): (HostId, u32)) -> Option<&mut HavRow> {
                    db.hosts.get_mut(host).and_then(|h| h.hav_mut(av))
                }
                #[inline]
                fn field(row: &mut HavRow) -> &mut $t {
                    &mut row.$field
                }
                fn id((host, _): (HostId, u32)) -> u32 {
                    host.raw()
                }
            }
        };
    }

    column! {
        NeedValidate = NeedValidate: Workunit WorkunitRow.need_validate: bool;
        ErrorMask = ErrorMask: Workunit WorkunitRow.error_mask: i32;
        CanonicalResultid = CanonicalResultid: Workunit WorkunitRow.canonical_resultid: ResultId;
        AssimilateState = AssimilateState: Workunit WorkunitRow.assimilate_state: t::AssimilateState;
        FileDeleteState = FileDeleteState: Workunit WorkunitRow.file_delete_state: t::FileDeleteState;
        TargetNresults = TargetNresults: Workunit WorkunitRow.target_nresults: i32;
        MinQuorum = MinQuorum: Workunit WorkunitRow.min_quorum: i32;
        HrClass = HrClass: Workunit WorkunitRow.hr_class: i32;
        AppVersionId = AppVersionId: Workunit WorkunitRow.app_version_id: u32;
        ServerState = ServerState: Result ResultRow.server_state: t::ServerState;
        Outcome = Outcome: Result ResultRow.outcome: t::Outcome;
        ValidateState = ValidateState: Result ResultRow.validate_state: t::ValidateState;
        ResultFileDeleteState = FileDeleteState: Result ResultRow.file_delete_state: t::FileDeleteState;
        Hostid = Hostid: Result ResultRow.hostid: HostId;
        ReportDeadline = ReportDeadline: Result ResultRow.report_deadline: Time;
        ConsecutiveValid = ConsecutiveValid: HostAppVersion HavRow.consecutive_valid: i32;
        MaxJobsPerDay = MaxJobsPerDay: HostAppVersion HavRow.max_jobs_per_day: i32;
    }
}

impl Db {
    /// Appends one change to the audit trail, if it is kept.
    #[inline]
    pub(super) fn record<I: RowId>(
        &mut self,
        actor: Actor,
        entity: Entity,
        id: I,
        field: Field,
        old: i64,
        new: i64,
    ) {
        if self.audit_enabled {
            self.audit.push(Transition {
                actor,
                entity,
                id: id.raw(),
                field,
                old,
                new,
            });
        }
    }

    /// Writes state field `C` of row `key` and audits the change; returns the old
    /// value, or `None` when the value was already `v` (no change, no trail row) or
    /// the row does not exist.
    #[inline]
    pub(crate) fn set<C: Column>(
        &mut self,
        actor: Actor,
        key: C::Key,
        v: C::Value,
    ) -> Option<C::Value> {
        self.set_then::<C, ()>(actor, key, v, |_| ())
            .map(|(old, ())| old)
    }

    /// [`Self::set`], then `read` of the row just written, while it is at hand: what
    /// the caller needs to move the daemons' work lists, read without a second
    /// lookup.
    #[inline]
    pub(crate) fn set_then<C: Column, R>(
        &mut self,
        actor: Actor,
        key: C::Key,
        v: C::Value,
        read: impl FnOnce(&mut C::Row) -> R,
    ) -> Option<(C::Value, R)> {
        let row = C::row(self, key)?;
        let field = C::field(row);
        let old = *field;
        if old == v {
            return None;
        }
        *field = v;
        let out = read(row);
        self.record(actor, C::ENTITY, C::id(key), C::FIELD, old.code(), v.code());
        Some((old, out))
    }

    // ----- workunit fields --------------------------------------------------------

    /// Sets `transition_time` (spec backend §2.2). Not [`Self::set`]: that one does
    /// nothing when the value is unchanged, but this write must re-sync the
    /// transitioner's index even then, since a pass may have popped the workunit's
    /// entry; the audit row is still written only for a change.
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
            if let Some(c) = &mut self.transition_due {
                if was_indexed {
                    c.remove(old);
                }
                if tt < INT_MAX {
                    c.add(tt);
                }
            }
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
            self.record(actor, Entity::Workunit, id, Field::TransitionTime, old, tt);
        }
    }

    pub(crate) fn set_need_validate(&mut self, actor: Actor, id: WuId, v: bool) {
        if self.set::<col::NeedValidate>(actor, id, v).is_none() {
            return;
        }
        if v {
            self.need_validate.insert(id);
        } else {
            self.need_validate.remove(id);
        }
    }

    pub(crate) fn set_error_mask(&mut self, actor: Actor, id: WuId, v: i32) {
        self.set::<col::ErrorMask>(actor, id, v);
    }

    pub(crate) fn set_canonical(&mut self, actor: Actor, id: WuId, rid: ResultId, now: Time) {
        let truth = self.results.get(rid).and_then(|r| r.output_correct);
        self.set_then::<col::CanonicalResultid, ()>(actor, id, rid, |wu| {
            wu.canonical_found_time = db_time(now);
            wu.canonical_correct = truth;
        });
    }

    pub(crate) fn set_wu_assimilate_state(
        &mut self,
        actor: Actor,
        id: WuId,
        v: AssimilateState,
        now: Time,
    ) {
        let Some((old, (batch, success))) =
            self.set_then::<col::AssimilateState, _>(actor, id, v, |wu| {
                if v == AssimilateState::Done {
                    wu.assimilated_time = db_time(now);
                }
                (wu.batch, wu.canonical_resultid != ResultId(0))
            })
        else {
            return;
        };
        // A workunit leaves INIT once, when it has a canonical result or an error
        // bit: the moment its batch counts it done (spec backend §1.5).
        if old == AssimilateState::Init && batch != 0 {
            self.batches.workunit_done(batch, success, now);
        }
        if v == AssimilateState::Ready {
            self.assimilate_ready.insert(id);
        } else {
            self.assimilate_ready.remove(id);
        }
    }

    pub(crate) fn set_wu_file_delete_state(
        &mut self,
        actor: Actor,
        id: WuId,
        v: FileDeleteState,
        now: Time,
    ) {
        let changed = self.set_then::<col::FileDeleteState, ()>(actor, id, v, |wu| {
            if v == FileDeleteState::Done {
                wu.files_deleted_time = db_time(now);
            }
        });
        if changed.is_none() {
            return;
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
    }

    pub(crate) fn set_target_nresults(&mut self, actor: Actor, id: WuId, v: i32) {
        self.set::<col::TargetNresults>(actor, id, v);
    }

    pub(crate) fn set_min_quorum(&mut self, actor: Actor, id: WuId, v: i32) {
        self.set::<col::MinQuorum>(actor, id, v);
    }

    pub(crate) fn set_hr_class(&mut self, actor: Actor, id: WuId, v: i32) {
        self.set::<col::HrClass>(actor, id, v);
    }

    pub(crate) fn set_wu_app_version_id(&mut self, actor: Actor, id: WuId, v: u32) {
        self.set::<col::AppVersionId>(actor, id, v);
    }

    // ----- result fields ----------------------------------------------------------

    pub(crate) fn set_server_state(&mut self, actor: Actor, id: ResultId, v: ServerState) {
        let Some((old, (prio, wuid, hostid, cached))) =
            self.set_then::<col::ServerState, _>(actor, id, v, |r| {
                (r.priority, r.workunitid, r.hostid, r.in_cache)
            })
        else {
            return;
        };
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
    }

    pub(crate) fn set_outcome(&mut self, actor: Actor, id: ResultId, v: Outcome) {
        self.set::<col::Outcome>(actor, id, v);
    }

    /// Sets `server_state = OVER` and `outcome` together, the common pair.
    pub(crate) fn set_over(&mut self, actor: Actor, id: ResultId, outcome: Outcome) {
        self.set_server_state(actor, id, ServerState::Over);
        self.set_outcome(actor, id, outcome);
    }

    pub(crate) fn set_validate_state(&mut self, actor: Actor, id: ResultId, v: ValidateState) {
        self.set::<col::ValidateState>(actor, id, v);
    }

    pub(crate) fn set_result_file_delete_state(
        &mut self,
        actor: Actor,
        id: ResultId,
        v: FileDeleteState,
    ) {
        if self
            .set::<col::ResultFileDeleteState>(actor, id, v)
            .is_none()
        {
            return;
        }
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
    }

    pub(crate) fn set_hostid(&mut self, actor: Actor, id: ResultId, hostid: HostId) {
        let Some((old, in_progress)) = self.set_then::<col::Hostid, _>(actor, id, hostid, |r| {
            r.server_state == ServerState::InProgress
        }) else {
            return;
        };
        if in_progress {
            self.detach_from_host(old, id);
            self.attach_to_host(hostid, id);
        }
    }

    pub(crate) fn set_report_deadline(&mut self, actor: Actor, id: ResultId, t: Time) {
        self.set::<col::ReportDeadline>(actor, id, t);
    }

    // ----- host app version fields ------------------------------------------------

    pub(crate) fn set_consecutive_valid(&mut self, actor: Actor, host: HostId, av: u32, v: i32) {
        self.set::<col::ConsecutiveValid>(actor, (host, av), v);
    }

    pub(crate) fn set_max_jobs_per_day(&mut self, actor: Actor, host: HostId, av: u32, v: i32) {
        self.set::<col::MaxJobsPerDay>(actor, (host, av), v);
    }
}
