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
//!
//! The module is split along those three things: [`rows`] holds the row types,
//! [`setters`] the audited writes of state fields, [`indexes`] the daemons' work
//! lists and the prefetching of a daemon's walk; [`batches`] is the BATCH table.

mod batches;
mod indexes;
mod rows;
mod setters;

pub use batches::{BatchRow, Batches};
pub use indexes::FeedKey;
use indexes::Indexed;
pub(crate) use indexes::Prefetch;
pub use rows::*;
pub use setters::{Entity, Field, Transition};

use super::id_set::IdSet;
use super::table::Table;
use super::transition_index::{DueCount, TransitionIndex};
use super::types::*;
use crate::engine::Time;
use crate::server::types::INT_MAX;
use std::collections::{BTreeSet, VecDeque};

/// The project database with its daemon indexes and audit trail.
#[derive(Default)]
pub struct Db {
    pub workunits: Table<WorkunitRow, WuId>,
    /// The BATCH table (spec backend §1.5); empty unless batches are submitted.
    pub batches: Batches,
    pub results: Table<ResultRow, ResultId>,
    pub hosts: Table<HostRow, HostId>,
    /// Transitioner index: WUs with `transition_time < INT_MAX`, by time then id.
    transition_index: TransitionIndex,
    /// Which entry of the transitioner index is current, per workunit row ([`Indexed`]).
    indexed: Indexed,
    /// Workunits in the transitioner index.
    transition_indexed: usize,
    /// Their times, counted, for the samples of the transitioner's backlog: kept
    /// only when asked ([`Self::track_transition_backlog`]).
    transition_due: Option<Box<DueCount>>,
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

impl Db {
    pub fn new(audit_enabled: bool) -> Self {
        Self {
            audit_enabled,
            ..Default::default()
        }
    }

    /// Counts the workunits due for the transitioner from now on, for
    /// [`Self::transition_backlog`]: called before any workunit exists.
    pub(crate) fn track_transition_backlog(&mut self) {
        debug_assert_eq!(self.transition_indexed, 0, "tracked from the start");
        self.transition_due = Some(Box::new(DueCount::new()));
    }

    /// Workunits whose `transition_time` is at or before `now`: the transitioner's
    /// backlog (its next pass at `t > now` takes every one, `transition_time < t`,
    /// spec backend §2.2); 0 unless tracked. `now` never decreases between calls.
    pub fn transition_backlog(&mut self, now: Time) -> u64 {
        self.transition_due.as_mut().map_or(0, |c| c.at(now))
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
        self.record(actor, Entity::Workunit, id, Field::Row, 0, 1);
        self.record(actor, Entity::Workunit, id, Field::TransitionTime, 0, tt);
        if tt < INT_MAX {
            self.transition_index.push(tt, id);
            self.transition_indexed += 1;
            self.note_transition(tt);
            if let Some(c) = &mut self.transition_due {
                c.add(tt);
            }
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
        self.record(actor, Entity::Result, id, Field::Row, 0, 1);
        self.record(
            actor,
            Entity::Result,
            id,
            Field::ServerState,
            0,
            state.code(),
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
            if let Some(c) = &mut self.transition_due {
                c.remove(wu.transition_time.into());
            }
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
            self.record(Actor::DbPurge, Entity::Result, rid, Field::Row, 1, 0);
            rows.push(r);
        }
        self.record(Actor::DbPurge, Entity::Workunit, wuid, Field::Row, 1, 0);
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
}
