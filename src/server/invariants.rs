//! The invariants of spec backend §3 as a checker.
//!
//! BOINC's daemons only talk through database fields, so the safety of the whole back
//! end can be stated as properties of the rows (spec backend §3). This module checks
//! them on a [`Project`]:
//!
//! * [`InvariantChecker::check_after_step`] runs after one daemon step (a pass, an RPC,
//!   a cancel) and looks only at the rows that step changed: the workunits and results
//!   named in the step's audit rows ([`Transition`]), the workunit of every touched
//!   result, and all results of those workunits. Its cost follows the number of
//!   changed rows, not the size of the database. Rules 1–15 ("always").
//! * [`InvariantChecker::check_all`] checks every live row (tests, end of a run),
//!   including rule 16, which needs sums over all of a host's results.
//! * [`check_quiescent`] checks the eventual rules 17–21, meaningful only once no host
//!   will report any more and the daemons have run until nothing changes.
//!
//! The "never changes" rules (3, 5, 7) are checked two ways: from the old and new
//! values of the audit rows (which also name the actor), and against the value the
//! checker saw the last time it looked at the row, so that
//! [`InvariantChecker::check_all`] catches a change even in a run without audit trail.
//! Use one checker per project: it remembers values by row id.
//!
//! Where the spec's literal wording would flag behaviour that the spec itself
//! prescribes elsewhere, the rule is narrowed; each narrowing is documented at the
//! rule (search for "Narrowed").

use super::Project;
use super::db::{Entity, Field, ResultRow, Transition, WorkunitRow, result_name};
use super::types::*;
use crate::engine::Time;
use crate::server::types::INT_MAX;
use std::collections::HashMap;
use std::fmt;

/// The `entity` of a violation about a workunit row.
pub(crate) const WORKUNIT: &str = "workunit";
/// The `entity` of a violation about a result row.
pub(crate) const RESULT: &str = "result";
/// The `entity` of a violation about a host row (rule 16).
pub(crate) const HOST: &str = "host";
/// The `entity` of a violation about the feeder's job cache (rule 13); the id is the
/// slot index.
pub(crate) const CACHE: &str = "cache";

/// All defined `error_mask` bits (spec backend §1.1).
const KNOWN_ERROR_BITS: i32 = 63;

/// One broken invariant: which rule (the number in spec backend §3), when, and on
/// which row.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The spec's rule number, 1..=21.
    pub rule: u8,
    /// Simulated time of the check.
    pub time: Time,
    /// `"workunit"`, `"result"`, `"host"` or `"cache"`.
    pub entity: &'static str,
    /// Row id (slot index for `"cache"`).
    pub id: u32,
    /// BOINC name of the row (`wu1`, `wu1_0`, `slot 3`), or empty when it has none.
    pub name: String,
    /// What is wrong, with the offending values.
    pub message: String,
}

impl fmt::Display for Violation {
    /// `invariant 4 violated at t=502: result 3 (wu1_0): granted_credit > 0 but
    /// validate_state = 2 (INVALID)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rule, time, entity, id) = (self.rule, self.time, self.entity, self.id);
        write!(f, "invariant {rule} violated at t={time}: {entity} {id}")?;
        if !self.name.is_empty() {
            write!(f, " ({})", self.name)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Violation {}

fn wu_violation(rule: u8, now: Time, wu: &WorkunitRow, message: String) -> Violation {
    let name = format!("wu{}", wu.id);
    Violation {
        rule,
        time: now,
        entity: WORKUNIT,
        id: wu.id.0,
        name,
        message,
    }
}

fn result_violation(rule: u8, now: Time, r: &ResultRow, message: String) -> Violation {
    let name = result_name(r.workunitid, r.suffix);
    Violation {
        rule,
        time: now,
        entity: RESULT,
        id: r.id.0,
        name,
        message,
    }
}

/// `return Err(..)`: a violation of `rule` on a workunit (`wu: row`) or a result
/// (`result: row`), with a `format!` message.
macro_rules! fail {
    ($rule:expr, $now:expr, wu: $row:expr, $($msg:tt)+) => {
        return Err(wu_violation($rule, $now, $row, format!($($msg)+)))
    };
    ($rule:expr, $now:expr, result: $row:expr, $($msg:tt)+) => {
        return Err(result_violation($rule, $now, $row, format!($($msg)+)))
    };
}

/// A BOINC enum value shown as `number (NAME)`, with the names of BOINC's headers.
trait Label: Copy {
    fn number(self) -> i64;
    fn label(self) -> &'static str;
}

macro_rules! labels {
    ($($ty:ident { $($v:ident => $s:literal),+ $(,)? })+) => {$(
        impl Label for $ty {
            fn number(self) -> i64 {
                self.code()
            }
            fn label(self) -> &'static str {
                match self { $($ty::$v => $s),+ }
            }
        }
    )+};
}

labels! {
    ServerState {
        Inactive => "INACTIVE", Unsent => "UNSENT", InProgress => "IN_PROGRESS", Over => "OVER",
    }
    Outcome {
        Init => "INIT", Success => "SUCCESS", CouldntSend => "COULDNT_SEND",
        ClientError => "CLIENT_ERROR", NoReply => "NO_REPLY", DidntNeed => "DIDNT_NEED",
        ValidateError => "VALIDATE_ERROR", ClientDetached => "CLIENT_DETACHED",
    }
    ValidateState {
        Init => "INIT", Valid => "VALID", Invalid => "INVALID", NoCheck => "NO_CHECK",
        Inconclusive => "INCONCLUSIVE", TooLate => "TOO_LATE",
    }
    FileDeleteState { Init => "INIT", Ready => "READY", Done => "DONE", Error => "ERROR" }
    AssimilateState { Init => "INIT", Ready => "READY", Done => "DONE" }
}

/// Display adaptor: `2 (INVALID)`.
struct Show<T>(T);

impl<T: Label> fmt::Display for Show<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0.number(), self.0.label())
    }
}

/// `server_state/outcome/validate_state` of a result, as the spec writes them.
struct States<'a>(&'a ResultRow);

impl fmt::Display for States<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        let (s, o, v) = (r.server_state, r.outcome, r.validate_state);
        write!(f, "{}/{}/{}", s.label(), o.label(), v.label())
    }
}

/// Checks spec backend §3 rules 1–16 on a project, incrementally or in full.
///
/// It keeps, per row, the last seen value of the fields that may never change or only
/// grow (rules 3, 5, 7) and the last seen cache slots (rule 13). Entries of purged rows
/// are dropped when their `row` 1 → 0 audit row is seen, or by [`Self::check_all`].
#[derive(Debug, Default)]
pub struct InvariantChecker {
    /// Last seen `hostid` of each result that had one (rule 3).
    hostid: HashMap<ResultId, HostId>,
    /// Last seen non-zero `canonical_resultid` per workunit (rule 5).
    canonical: HashMap<WuId, ResultId>,
    /// Last seen non-zero `error_mask` per workunit (rule 7).
    error_mask: HashMap<WuId, i32>,
    /// Cache slots at the last rule-13 check, to tell which slots were filled since.
    slots: Vec<Option<ResultId>>,
    /// Whether `slots` holds a real previous scan (false before the first one).
    slots_seen: bool,
    /// Scratch: workunits to check in this step.
    wus: Vec<WuId>,
    /// Scratch: (key, row) pairs for duplicate detection (rules 13, 14).
    pairs: Vec<(u32, u32)>,
}

impl InvariantChecker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the rows changed by one daemon step (spec backend §3, "after every daemon
    /// step").
    ///
    /// `touched` are the audit rows the step produced (`Db::audit` since the previous
    /// call); `actor` is who ran the step (`None` if unknown or mixed). For every
    /// workunit named in `touched`, and the workunit of every result named in it, the
    /// workunit and all its results are checked against rules 1–11, 14 and 15;
    /// rule 12 only when `actor` is the transitioner (it holds "after the next T-pass");
    /// rule 13 (a scan of the cache slots) only when `actor` is the feeder or unknown,
    /// since only the feeder fills slots. The "at the moment it was set" parts of rules
    /// 8 and 9 are checked on the `file_delete_state` INIT → READY audit rows, which
    /// assumes a call after every step.
    ///
    /// With the audit trail disabled `touched` is empty and nothing is checked; use
    /// [`Self::check_all`] instead. Rule 16 is only checked by [`Self::check_all`].
    pub(crate) fn check_after_step(
        &mut self,
        p: &Project,
        now: Time,
        touched: &[Transition],
        actor: Option<Actor>,
    ) -> Result<(), Violation> {
        let mut wus = std::mem::take(&mut self.wus);
        wus.clear();
        let res = self
            .check_transitions(p, now, touched, &mut wus)
            .and_then(|()| {
                wus.sort_unstable();
                wus.dedup();
                let t_pass = actor == Some(Actor::Transitioner);
                wus.iter()
                    .try_for_each(|&wuid| self.check_wu(p, now, wuid, t_pass))
            });
        self.wus = wus;
        res?;
        if matches!(actor, None | Some(Actor::Feeder)) {
            self.check_cache(p, now, actor == Some(Actor::Feeder))?;
        }
        Ok(())
    }

    /// Checks every live row against rules 1–11 and 13–16 (rule 12 needs to know that
    /// a T-pass just ran, so it is left to [`Self::check_after_step`]).
    ///
    /// Rule 16 (host `total_credit` = Σ `granted_credit` of its VALID results) is only
    /// checked while no row has been purged: db_purge deletes results whose credit the
    /// hosts keep, and the checker does not record what was deleted.
    pub(crate) fn check_all(&mut self, p: &Project, now: Time) -> Result<(), Violation> {
        // Forget rows that no longer exist (purged).
        self.hostid.retain(|id, _| p.db.results.get(*id).is_some());
        self.canonical
            .retain(|id, _| p.db.workunits.get(*id).is_some());
        self.error_mask
            .retain(|id, _| p.db.workunits.get(*id).is_some());
        for (wuid, _) in p.db.workunits.iter() {
            self.check_wu(p, now, wuid, false)?;
        }
        self.check_cache(p, now, false)?;
        check_host_credit(p, now)
    }

    /// Per-audit-row checks (rules 3, 5, 7, 8, 9, 10), and collection of the
    /// workunits to check.
    fn check_transitions(
        &mut self,
        p: &Project,
        now: Time,
        touched: &[Transition],
        wus: &mut Vec<WuId>,
    ) -> Result<(), Violation> {
        for t in touched {
            let purge = t.field == Field::Row && t.new == 0;
            match t.entity {
                Entity::Workunit if purge => {
                    self.canonical.remove(&WuId(t.id));
                    self.error_mask.remove(&WuId(t.id));
                }
                Entity::Result if purge => {
                    self.hostid.remove(&ResultId(t.id));
                }
                Entity::Workunit => {
                    if let Some(wu) = p.db.workunits.get(WuId(t.id)) {
                        wus.push(WuId(t.id));
                        check_wu_transition(p, now, wu, t)?;
                    }
                }
                Entity::Result => {
                    if let Some(r) = p.db.results.get(ResultId(t.id)) {
                        wus.push(r.workunitid);
                        check_result_transition(p, now, r, t)?;
                    }
                }
                Entity::HostAppVersion => {}
            }
        }
        Ok(())
    }

    /// Rules 1–11, 14, 15 (and 12 after a T-pass) on one workunit and its results.
    fn check_wu(
        &mut self,
        p: &Project,
        now: Time,
        wuid: WuId,
        t_pass: bool,
    ) -> Result<(), Violation> {
        let Some(wu) = p.db.workunits.get(wuid) else {
            return Ok(());
        };
        for &rid in &wu.results {
            if let Some(r) = p.db.results.get(rid) {
                self.check_result(p, now, wu, r)?;
            }
        }

        // Rule 5: the canonical result belongs to the WU, is OVER+SUCCESS+VALID (until
        // purged), and canonical_resultid never changes once set.
        let canonical = wu.canonical_resultid;
        if let Some(&old) = self.canonical.get(&wuid)
            && old != canonical
        {
            fail!(5, now, wu: wu, "canonical_resultid changed from {old} to {canonical}");
        }
        if canonical != ResultId(0) {
            self.canonical.insert(wuid, canonical);
            if wu.results.binary_search(&canonical).is_err() {
                fail!(5, now, wu: wu, "canonical_resultid {canonical} is not one of its results");
            }
            if let Some(c) = p.db.results.get(canonical)
                && (c.server_state, c.outcome, c.validate_state)
                    != (ServerState::Over, Outcome::Success, ValidateState::Valid)
            {
                fail!(5, now, wu: wu, "canonical result {canonical} is {}", States(c));
            }
        }

        // Rule 6: never more results than max_total_results (the transitioner caps
        // creation, in the seed variant too).
        let (n, max) = (wu.results.len(), wu.limits.max_total_results);
        if n as i64 > max as i64 {
            fail!(6, now, wu: wu, "{n} results but max_total_results = {max}");
        }

        // Rule 7: error_mask bits are only added. The assimilator's assignment of 32
        // happens only when the mask was 0, so it is an addition too.
        let old = self.error_mask.get(&wuid).copied().unwrap_or(0);
        let mask = wu.error_mask;
        if old & !mask != 0 {
            fail!(7, now, wu: wu, "error_mask lost bits: was {old}, now {mask}");
        }
        if mask & !KNOWN_ERROR_BITS != 0 {
            fail!(7, now, wu: wu, "error_mask = {mask} has undefined bits");
        }
        if mask != 0 {
            self.error_mask.insert(wuid, mask);
        }

        // Rule 8 (lasting part): file_delete_state(WU) ≥ READY ⇒ assimilate_state = DONE.
        if wu.file_delete_state != FileDeleteState::Init
            && wu.assimilate_state != AssimilateState::Done
            && !q2_reopened(p, wu)
        {
            let (fd, a) = (Show(wu.file_delete_state), Show(wu.assimilate_state));
            fail!(8, now, wu: wu, "file_delete_state = {fd} but assimilate_state = {a}");
        }

        // Rule 10: DONE was preceded by a handler call; DONE ⇒ canonical or error.
        if wu.assimilate_state == AssimilateState::Done {
            if wu.assimilate_count == 0 {
                fail!(
                    10, now, wu: wu,
                    "assimilate_state = 2 (DONE) but the handler was never called"
                );
            }
            if canonical == ResultId(0) && mask == 0 {
                fail!(
                    10, now, wu: wu,
                    "assimilate_state = 2 (DONE) with canonical_resultid = 0 and error_mask = 0"
                );
            }
        }

        check_transition_time(p, now, wu)?;
        if t_pass {
            check_error_count(p, now, wu)?;
        }
        self.check_one_result_per(p, now, wu)?;
        check_equal_credit(p, now, wu)
    }

    /// Rules 1–4 and the lasting part of rule 9 on one result.
    fn check_result(
        &mut self,
        p: &Project,
        now: Time,
        wu: &WorkunitRow,
        r: &ResultRow,
    ) -> Result<(), Violation> {
        use Outcome as O;
        use ValidateState as V;
        let (state, outcome, vs, fd) = (
            r.server_state,
            r.outcome,
            r.validate_state,
            r.file_delete_state,
        );

        // Rule 1: outcome ≠ INIT ⇔ server_state = OVER. (server_state ∈ {1,2,4,5}
        // holds by construction of `ServerState`.)
        if (outcome != O::Init) != (state == ServerState::Over) {
            fail!(
                1, now, result: r,
                "server_state = {} with outcome = {}",
                Show(state), Show(outcome)
            );
        }

        // Rule 2: IN_PROGRESS or reported ⇒ hostid ≠ 0, sent_time > 0, DB deadline ≥
        // sent_time; reported ⇒ received_time ≥ sent_time. "Reported" = a report was
        // accepted (SUCCESS, CLIENT_ERROR, and VALIDATE_ERROR, which the validator makes
        // of a SUCCESS), a detach was recorded (CLIENT_DETACHED), or received_time set.
        let reported = r.received_time != 0
            || matches!(
                outcome,
                O::Success | O::ClientError | O::ValidateError | O::ClientDetached
            );
        if state == ServerState::InProgress || reported {
            let what = if reported { "reported" } else { "IN_PROGRESS" };
            let (sent, deadline, received) = (
                Time::from(r.sent_time),
                r.report_deadline,
                Time::from(r.received_time),
            );
            if r.hostid == HostId(0) {
                fail!(2, now, result: r, "{what} but hostid = 0");
            }
            if sent <= 0 {
                fail!(2, now, result: r, "{what} but sent_time = {sent}");
            }
            if deadline < sent {
                fail!(2, now, result: r, "report_deadline = {deadline} < sent_time = {sent}");
            }
            if reported && received < sent {
                fail!(
                    2, now, result: r,
                    "reported with received_time = {received} < sent_time = {sent}"
                );
            }
        }

        // Rule 3: hostid never changes once set, except a report from another host of
        // the same user, which rewrites it.
        if let Some(&old) = self.hostid.get(&r.id)
            && old != r.hostid
            && let Err(why) = same_user(p, old, r.hostid)
        {
            fail!(3, now, result: r, "hostid changed from {old} to {}: {why}", r.hostid);
        }
        if r.hostid != HostId(0) {
            self.hostid.insert(r.id, r.hostid);
        }

        // Rule 4.
        if vs == V::Valid && outcome != O::Success {
            fail!(4, now, result: r, "validate_state = 1 (VALID) but outcome = {}", Show(outcome));
        }
        if r.granted_credit > 0.0 && vs != V::Valid {
            fail!(4, now, result: r, "granted_credit > 0 but validate_state = {}", Show(vs));
        }
        if matches!(outcome, O::ClientError | O::ValidateError) && vs != V::Invalid {
            fail!(
                4, now, result: r,
                "outcome = {} but validate_state = {}",
                Show(outcome), Show(vs)
            );
        }
        if matches!(vs, V::Inconclusive | V::NoCheck | V::TooLate) && outcome != O::Success {
            fail!(
                4, now, result: r,
                "validate_state = {} but outcome = {}",
                Show(vs), Show(outcome)
            );
        }

        // Rule 9 (lasting part): file_delete_state ≥ READY ⇒ WU assimilated, outcome
        // CLIENT_ERROR or SUCCESS, SUCCESS ⇒ validated.
        if fd != FileDeleteState::Init {
            if wu.assimilate_state != AssimilateState::Done && !q2_reopened(p, wu) {
                let a = Show(wu.assimilate_state);
                fail!(
                    9, now, result: r,
                    "file_delete_state = {} but its workunit's assimilate_state = {a}",
                    Show(fd)
                );
            }
            // Narrowed: with quirk Q6 switched off (`keep_files_of_unused = false`)
            // the transitioner also deletes the files of NO_REPLY, DIDNT_NEED,
            // VALIDATE_ERROR and CLIENT_DETACHED results (spec backend §5 Q6). And a
            // SUCCESS result whose files were flagged can still reach the validator
            // (quirk Q2: `need_validate` set before the error branch); if its output
            // is gone, or unreadable, `init_result` fails permanently and it becomes
            // VALIDATE_ERROR after the fact (spec backend §2.5).
            let outcome_ok = match outcome {
                O::ClientError | O::Success | O::ValidateError => true,
                O::Init | O::CouldntSend => false,
                _ => !p.sw.keep_files_of_unused,
            };
            if !outcome_ok {
                fail!(
                    9, now, result: r,
                    "file_delete_state = {} with outcome = {}",
                    Show(fd), Show(outcome)
                );
            }
            if outcome == O::Success && vs == V::Init {
                fail!(
                    9, now, result: r,
                    "file_delete_state = {} on a SUCCESS result with validate_state = 0 (INIT)",
                    Show(fd)
                );
            }
        }
        Ok(())
    }

    /// Rule 14: with `one_result_per_user_per_wu` no two results of a WU share a user
    /// (nor a host); with `one_result_per_host_per_wu` no two share a host.
    fn check_one_result_per(
        &mut self,
        p: &Project,
        now: Time,
        wu: &WorkunitRow,
    ) -> Result<(), Violation> {
        let per_user = p.cfg.config.one_result_per_user_per_wu;
        let per_host = per_user || p.cfg.config.one_result_per_host_per_wu;
        if !per_host || wu.results.len() < 2 {
            return Ok(());
        }
        let keys: [RowKey; 2] = [("host", |r| r.hostid.0), ("user", |r| r.userid)];
        let checks = if per_user { &keys[..] } else { &keys[..1] };
        for &(what, key) in checks {
            self.pairs.clear();
            for r in wu.results.iter().filter_map(|&rid| p.db.results.get(rid)) {
                if key(r) != 0 {
                    self.pairs.push((key(r), r.id.0));
                }
            }
            self.pairs.sort_unstable();
            if let Some(w) = self.pairs.windows(2).find(|w| w[0].0 == w[1].0) {
                let ((k, a), (_, b)) = (w[0], w[1]);
                fail!(
                    14, now, wu: wu,
                    "results {a} and {b} both belong to {what} {k} (one_result_per_{what}_per_wu)"
                );
            }
        }
        Ok(())
    }

    /// Rule 13: no result in two cache slots; every occupied slot's result is marked
    /// `in_cache`; after a feeder step, every newly filled slot holds an UNSENT result
    /// (it was UNSENT when added). Slots whose result was purged are stale and allowed.
    fn check_cache(&mut self, p: &Project, now: Time, feeder_step: bool) -> Result<(), Violation> {
        let slots = p.feeder.slots();
        let compare = feeder_step && self.slots_seen && self.slots.len() == slots.len();
        // Most feeder passes change nothing: skip the scan then (the slots' results
        // were checked when they were added).
        if compare && self.slots == *slots {
            return Ok(());
        }
        self.pairs.clear();
        for (i, slot) in slots.iter().enumerate() {
            let Some(rid) = *slot else { continue };
            let Some(r) = p.db.results.get(rid) else {
                continue;
            };
            let filled = compare && self.slots[i] != Some(rid);
            if !r.in_cache || (filled && r.server_state != ServerState::Unsent) {
                let name = result_name(r.workunitid, r.suffix);
                let message = if !r.in_cache {
                    format!("slot holds result {rid} ({name}) whose in_cache is false")
                } else {
                    let s = Show(r.server_state);
                    format!("slot was filled with result {rid} ({name}) in server_state = {s}")
                };
                return Err(cache_violation(now, i, message));
            }
            self.pairs.push((rid.0, i as u32));
        }
        self.pairs.sort_unstable();
        if let Some(w) = self.pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            let ((rid, first), (_, second)) = (w[0], w[1]);
            let message = format!("result {rid} is also in slot {first}");
            return Err(cache_violation(now, second as usize, message));
        }
        self.slots.clear();
        self.slots.extend_from_slice(slots);
        self.slots_seen = true;
        Ok(())
    }
}

/// A named key of a result row (rule 14).
type RowKey = (&'static str, fn(&ResultRow) -> u32);

fn cache_violation(now: Time, slot: usize, message: String) -> Violation {
    let name = format!("slot {slot}");
    Violation {
        rule: 13,
        time: now,
        entity: CACHE,
        id: slot as u32,
        name,
        message,
    }
}

/// Quirk Q2 (spec backend §5): a success that arrives after a WU errored is validated,
/// and the validator sets `assimilate_state = READY` again on a WU that was already
/// assimilated and may have had files flagged for deletion. Narrowed: rules 8 and 9
/// accept `assimilate_state ≠ DONE` in exactly that situation (error bit set,
/// canonical found, already assimilated once, `validate_after_error` on).
fn q2_reopened(p: &Project, wu: &WorkunitRow) -> bool {
    p.sw.validate_after_error
        && wu.error_mask != 0
        && wu.canonical_resultid != ResultId(0)
        && wu.assimilate_count > 0
}

/// Whether two hosts belong to the same user (the one exception of rule 3).
fn same_user(p: &Project, old: HostId, new: HostId) -> Result<(), String> {
    if new == HostId(0) {
        return Err("hostid was cleared".into());
    }
    match (p.db.hosts.get(old), p.db.hosts.get(new)) {
        (Some(a), Some(b)) if a.userid == b.userid => Ok(()),
        (Some(a), Some(b)) => Err(format!(
            "host {old} belongs to user {} but host {new} to user {}",
            a.userid, b.userid
        )),
        _ => Err("unknown host".into()),
    }
}

/// Whether an audit row is `file_delete_state` INIT → READY (the transitioner's flag).
fn flags_deletion(t: &Transition) -> bool {
    t.field == Field::FileDeleteState
        && t.old == FileDeleteState::Init.code()
        && t.new == FileDeleteState::Ready.code()
}

/// Checks on one audit row of a workunit: rules 5, 7 (with the actor), 8 ("at the
/// moment it was set") and 10 (DONE is only set by the assimilator).
fn check_wu_transition(
    p: &Project,
    now: Time,
    wu: &WorkunitRow,
    t: &Transition,
) -> Result<(), Violation> {
    let (actor, old, new) = (t.actor.name(), t.old, t.new);
    match t.field {
        Field::CanonicalResultid if old != 0 => {
            fail!(5, now, wu: wu, "{actor} changed canonical_resultid from {old} to {new}");
        }
        Field::ErrorMask => {
            if old & !new != 0 {
                fail!(7, now, wu: wu, "{actor} removed error_mask bits: {old} -> {new}");
            }
            let assigned_32 = old == 0 && new == error_mask::NO_CANONICAL_RESULT as i64;
            if t.actor == Actor::Assimilator && !assigned_32 {
                fail!(
                    7, now, wu: wu,
                    "assimilator set error_mask {old} -> {new} (only 0 -> 32 is allowed)"
                );
            }
        }
        Field::AssimilateState
            if new == AssimilateState::Done.code() && t.actor != Actor::Assimilator =>
        {
            fail!(
                10, now, wu: wu,
                "{actor} set assimilate_state = 2 (DONE) without a handler call"
            );
        }
        _ if flags_deletion(t) => {
            if wu.assimilate_state != AssimilateState::Done {
                let a = Show(wu.assimilate_state);
                fail!(
                    8, now, wu: wu,
                    "{actor} set file_delete_state = 1 (READY) with assimilate_state = {a}"
                );
            }
            if let Some(r) = first_unfinished(p, wu) {
                let name = result_name(r.workunitid, r.suffix);
                fail!(
                    8, now, wu: wu,
                    "{actor} set file_delete_state = 1 (READY) while result {} ({name}) is {}",
                    r.id, States(r)
                );
            }
        }
        _ => {}
    }
    Ok(())
}

/// Checks on one audit row of a result: rule 3 (with the actor) and rule 9's "canonical
/// result ⇒ all results OVER and validated when it was set".
fn check_result_transition(
    p: &Project,
    now: Time,
    r: &ResultRow,
    t: &Transition,
) -> Result<(), Violation> {
    let (actor, old, new) = (t.actor.name(), t.old, t.new);
    if t.field == Field::Hostid
        && old != 0
        && let Err(why) = same_user(p, HostId(old as u32), HostId(new as u32))
    {
        fail!(3, now, result: r, "{actor} changed hostid from {old} to {new}: {why}");
    }
    if flags_deletion(t)
        && let Some(wu) = p.db.workunits.get(r.workunitid)
        && wu.canonical_resultid == r.id
        && let Some(o) = first_unfinished(p, wu)
    {
        let name = result_name(o.workunitid, o.suffix);
        fail!(
            9, now, result: r,
            "{actor} set file_delete_state = 1 (READY) on the canonical result \
                while result {} ({name}) is {}",
            o.id, States(o)
        );
    }
    Ok(())
}

/// The first result of `wu` that is not OVER, or OVER+SUCCESS still awaiting
/// validation: what keeps a WU from being "all over and validated" (spec backend
/// §2.2 step 6).
fn first_unfinished<'a>(p: &'a Project, wu: &WorkunitRow) -> Option<&'a ResultRow> {
    wu.results
        .iter()
        .filter_map(|&rid| p.db.results.get(rid))
        .find(|r| r.server_state != ServerState::Over || r.is_success_init())
}

/// Rule 11: for every IN_PROGRESS result r of w, `w.transition_time ≤
/// r.report_deadline`, so the transitioner looks at the WU by the deadline.
///
/// The spec's exception (a validator pass found the canonical result, tt = INT_MAX
/// until assimilation) is implemented as: skip when `canonical_resultid ≠ 0` or
/// `error_mask ≠ 0`, since the transitioner's own step 9 also uses INT_MAX as the base
/// then. Narrowed further, each because the spec prescribes it elsewhere:
/// * skipped for `TRANSITION_NONE` workunits (never transitioned) and in the seed
///   variant's next-transition-time rule (`modern_transition_time` off, spec backend
///   §5 row 12: `tt = max(tt, now + delay_bound)` exceeds deadlines on purpose);
/// * a `transition_time ≤ now` is accepted: the WU is already due, which is what a
///   report, assimilation or IMMEDIATE validator action writes while an overdue result
///   waits for the next T-pass to time it out.
///
/// No slack for the grace period: every write of a DB deadline `d` comes with
/// `tt = min(tt, d)` (first sends, resends and unresendable lost results alike, spec
/// backend §2.4.4–2.4.5 at BOINC HEAD).
fn check_transition_time(p: &Project, now: Time, wu: &WorkunitRow) -> Result<(), Violation> {
    let tt = Time::from(wu.transition_time);
    if wu.canonical_resultid != ResultId(0)
        || wu.error_mask != 0
        || wu.transitioner_flags == 1
        || !p.sw.modern_transition_time
        || tt <= now
    {
        return Ok(());
    }
    for r in wu.results.iter().filter_map(|&rid| p.db.results.get(rid)) {
        if r.server_state == ServerState::InProgress && tt > r.report_deadline {
            let (id, name, deadline) =
                (r.id, result_name(r.workunitid, r.suffix), r.report_deadline);
            fail!(
                11, now, wu: wu,
                "transition_time = {tt} is after the report_deadline = {deadline} \
                    of IN_PROGRESS result {id} ({name})"
            );
        }
    }
    Ok(())
}

/// Rule 12: after a T-pass, `nerrors > max_error_results` ⇒ bit 2 set. Errors are
/// counted as the transitioner counts them (spec backend §2.2 step 2; seed §5 row 7),
/// and only where the transitioner runs its error checks (quirk Q1 switch).
fn check_error_count(p: &Project, now: Time, wu: &WorkunitRow) -> Result<(), Violation> {
    let checked = p.sw.errors_after_canonical || wu.canonical_resultid == ResultId(0);
    if wu.transitioner_flags == 1 || !checked {
        return Ok(());
    }
    let modern = p.sw.modern_error_count;
    let is_error = |r: &&ResultRow| {
        r.server_state == ServerState::Over
            && match r.outcome {
                Outcome::ClientError => {
                    !(modern && r.exit_status == exit_status::EXIT_ABORTED_VIA_GUI)
                }
                Outcome::ValidateError => modern,
                _ => false,
            }
    };
    let nerrors = wu
        .results
        .iter()
        .filter_map(|&rid| p.db.results.get(rid))
        .filter(is_error)
        .count();
    let (max, mask) = (wu.limits.max_error_results, wu.error_mask);
    if nerrors as i64 > max as i64 && mask & error_mask::TOO_MANY_ERROR_RESULTS == 0 {
        fail!(
            12, now, wu: wu,
            "{nerrors} errors > max_error_results = {max} after a T-pass \
                but error_mask = {mask} lacks bit 2"
        );
    }
    Ok(())
}

/// Rule 15: all VALID results of a WU have the same `granted_credit` (not with
/// `grant_claimed_credit`). Compared with a relative tolerance of 1e-9, so that a
/// value recomputed rather than copied does not count as different.
fn check_equal_credit(p: &Project, now: Time, wu: &WorkunitRow) -> Result<(), Violation> {
    if p.app(wu.appid).cfg.validator.grant_claimed_credit {
        return Ok(());
    }
    let mut valid = wu
        .results
        .iter()
        .filter_map(|&rid| p.db.results.get(rid))
        .filter(|r| r.validate_state == ValidateState::Valid);
    let Some(first) = valid.next() else {
        return Ok(());
    };
    let a = first.granted_credit;
    for r in valid {
        let b = r.granted_credit;
        if (a - b).abs() > 1e-9 * a.abs().max(b.abs()) {
            fail!(
                15, now, wu: wu,
                "VALID results {} and {} were granted {a} and {b}",
                first.id, r.id
            );
        }
    }
    Ok(())
}

/// Rule 16: host `total_credit` = Σ `granted_credit` of its VALID results (no trickle
/// credit). Skipped once db_purge has deleted any workunit or result, since the
/// deleted results' credit stays with the host. The user and team halves of the rule
/// are not checked: the simulator keeps no USER or TEAM rows. Tolerance: 1e-6
/// relative, as the host sum is accumulated in validation order.
fn check_host_credit(p: &Project, now: Time) -> Result<(), Violation> {
    // Ids are handed out densely from 1, so a table without removals has next − 1 rows.
    let purged = |next: u32, len: usize| next as usize - 1 != len;
    let db = &p.db;
    if purged(db.workunits.next_id().0, db.workunits.len())
        || purged(db.results.next_id().0, db.results.len())
    {
        return Ok(());
    }
    let mut sums = vec![0.0f64; db.hosts.next_id().0 as usize];
    for (_, r) in db.results.iter() {
        if r.validate_state == ValidateState::Valid
            && let Some(s) = sums.get_mut(r.hostid.0 as usize)
        {
            *s += r.granted_credit;
        }
    }
    for (hid, h) in db.hosts.iter() {
        let sum = sums[hid.0 as usize];
        if (h.total_credit - sum).abs() > 1e-6 * sum.abs().max(1.0) {
            let message = format!(
                "total_credit = {} but its VALID results were granted {sum} in all",
                h.total_credit
            );
            let name = String::new();
            return Err(Violation {
                rule: 16,
                time: now,
                entity: HOST,
                id: hid.0,
                name,
                message,
            });
        }
    }
    Ok(())
}

/// Checks the eventual invariants, rules 17–21 of spec backend §3, which hold at
/// quiescence: no host will report, all deadlines have passed, and the daemons have
/// run until nothing changes. Meant for tests and scenario ends; the violation's time
/// is `now`. Per workunit, lower rule numbers are reported first.
///
/// * 17: every WU has a canonical result or an error (or is `TRANSITION_NONE`).
/// * 18: every result OVER; every WU `need_validate = 0`, assimilated, tt = INT_MAX.
/// * 19: file deletion finished: the WU and the results whose files the transitioner
///   flags (CLIENT_ERROR; SUCCESS once validated, only VALID/INVALID in the seed
///   variant; with Q6 off also the other reported outcomes) are DONE, the others INIT
///   (or DONE for a VALIDATE_ERROR result whose output was deleted before the
///   validator read it, quirk Q2).
///   ERROR is accepted when deletion failures are injected
///   (`file_deleter.failure_prob > 0`), READY when the file deleter has no periodic
///   pass. With db_purge on, no WU with `file_delete_state = DONE` remains (so, without
///   injected errors, no rows remain).
/// * 20: each WU assimilated exactly once; twice is accepted for quirk Q2 (error
///   first, canonical later). A handler call that returned `DEFER_ASSIMILATION` or
///   an error also counts in `assimilate_count`, so scenarios whose handler defers
///   or fails (`[project.NAME.assimilator]`, `[[event]] assimilate`) must not rely on
///   this rule.
/// * 21: no SUCCESS result with `validate_state = INIT`.
///
/// `TRANSITION_NONE` workunits are skipped by the workunit parts of 18–20 as by 17.
pub fn check_quiescent(p: &Project, now: Time) -> Result<(), Violation> {
    let deleter_on = p.cfg.daemons.file_deleter > 0;
    let errors_injected = p.cfg.file_deleter.failure_prob > 0.0;
    let purge_on = p.cfg.daemons.db_purge > 0;
    let fd_final = |s: FileDeleteState| match s {
        FileDeleteState::Done => true,
        FileDeleteState::Error => errors_injected,
        FileDeleteState::Ready => !deleter_on,
        FileDeleteState::Init => false,
    };
    // Whether the transitioner flags a result's files (spec backend §2.2 step 8).
    let flagged = |r: &ResultRow| match r.outcome {
        Outcome::ClientError => true,
        Outcome::Success if p.sw.delete_any_validated => r.validate_state != ValidateState::Init,
        Outcome::Success => matches!(
            r.validate_state,
            ValidateState::Valid | ValidateState::Invalid
        ),
        Outcome::Init | Outcome::CouldntSend => false,
        _ => !p.sw.keep_files_of_unused,
    };
    for (_, wu) in p.db.workunits.iter() {
        let results = || wu.results.iter().filter_map(|&rid| p.db.results.get(rid));
        let broadcast = wu.transitioner_flags == 1;
        if !broadcast && wu.canonical_resultid == ResultId(0) && wu.error_mask == 0 {
            fail!(17, now, wu: wu, "neither a canonical result nor an error");
        }
        for r in results() {
            if r.server_state != ServerState::Over {
                fail!(18, now, result: r, "server_state = {} at quiescence", Show(r.server_state));
            }
        }
        if !broadcast {
            if wu.need_validate || wu.assimilate_state != AssimilateState::Done {
                let (nv, a) = (wu.need_validate as u8, Show(wu.assimilate_state));
                fail!(
                    18, now, wu: wu,
                    "need_validate = {nv}, assimilate_state = {a} at quiescence"
                );
            }
            if Time::from(wu.transition_time) != INT_MAX {
                fail!(18, now, wu: wu, "transition_time = {} at quiescence", wu.transition_time);
            }
            for r in results() {
                // A result whose output was deleted before the validator read it
                // became VALIDATE_ERROR afterwards (quirk Q2, spec backend §2.5).
                let validated_too_late = r.outcome == Outcome::ValidateError
                    && r.file_delete_state == FileDeleteState::Done;
                let ok = if flagged(r) {
                    fd_final(r.file_delete_state)
                } else {
                    r.file_delete_state == FileDeleteState::Init || validated_too_late
                };
                if !ok {
                    let (fd, o, v) = (
                        Show(r.file_delete_state),
                        Show(r.outcome),
                        Show(r.validate_state),
                    );
                    fail!(
                        19, now, result: r,
                        "file_delete_state = {fd} at quiescence \
                            (outcome = {o}, validate_state = {v})"
                    );
                }
            }
            if !fd_final(wu.file_delete_state) {
                fail!(
                    19, now, wu: wu,
                    "file_delete_state = {} at quiescence",
                    Show(wu.file_delete_state)
                );
            }
            if purge_on && wu.file_delete_state == FileDeleteState::Done {
                fail!(19, now, wu: wu, "files deleted but not purged although db_purge is on");
            }
            let q2 = p.sw.validate_after_error
                && wu.error_mask != 0
                && wu.canonical_resultid != ResultId(0);
            let n = wu.assimilate_count;
            if n == 0 || n > 1 + u32::from(q2) {
                let expected = if q2 { "1 or 2 (quirk Q2)" } else { "1" };
                fail!(20, now, wu: wu, "assimilated {n} times (expected {expected})");
            }
        }
        if let Some(r) = results().find(|r| r.is_success_init()) {
            fail!(21, now, result: r, "SUCCESS result still has validate_state = 0 (INIT)");
        }
    }
    Ok(())
}

/// Hand-made rows for tests of this crate.
#[cfg(test)]
pub(crate) mod test_rows {
    use super::super::db::{ResultRow, WorkunitRow};
    use super::super::types::*;

    /// A fresh workunit with P(1,1,1,2,1), delay bound 1000, created at 0.
    pub fn workunit() -> WorkunitRow {
        let t = crate::server::config::WuTemplate {
            max_total_results: 2,
            delay_bound: 1000,
            ..Default::default()
        };
        WorkunitRow::from_template(&t, 0)
    }

    /// A fresh UNSENT result of `wuid` with the given suffix.
    pub fn result(wuid: WuId, suffix: u16) -> ResultRow {
        ResultRow::new(wuid, suffix, 1, 0, 0, ServerState::Unsent)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ProjectConfig;
    use super::super::db::HostRow;
    use super::*;

    thread_local! {
        /// The tests' clock: the time of the step being built, as the world's clock
        /// would be.
        static NOW: std::cell::Cell<Time> = const { std::cell::Cell::new(0) };
    }

    fn set_now(t: Time) {
        NOW.with(|n| n.set(t));
    }

    fn now() -> Time {
        NOW.with(|n| n.get())
    }

    const T: Actor = Actor::Transitioner;

    fn project() -> Project {
        Project::new(0, "main", ProjectConfig::default(), 1, true)
    }

    fn add_host(p: &mut Project, userid: u32) -> HostId {
        let id = p.db.hosts.next_id();
        p.db.hosts.insert(HostRow {
            id,
            userid,
            ..Default::default()
        })
    }

    /// Sends result `rid` to `host` at `t` with deadline `t + 1000`, as the scheduler
    /// does (spec backend §2.4.4 `add_result_to_reply`).
    fn send(p: &mut Project, rid: ResultId, host: HostId, t: Time) {
        let a = Actor::Scheduler;
        set_now(t);
        let userid = p.db.host(host).userid;
        let r = p.db.result_mut(rid);
        r.sent_time = crate::server::types::db_time(t);
        r.userid = userid;
        let wuid = r.workunitid;
        p.db.set_hostid(a, rid, host);
        p.db.set_report_deadline(a, rid, t + 1000);
        p.db.set_server_state(a, rid, ServerState::InProgress);
        let tt = Time::from(p.db.wu(wuid).transition_time).min(t + 1000);
        p.db.set_transition_time(a, wuid, tt);
    }

    /// Accepts a successful report of `rid` at `t` (spec backend §2.4.3).
    fn report_success(p: &mut Project, rid: ResultId, t: Time) {
        set_now(t);
        p.db.result_mut(rid).received_time = crate::server::types::db_time(t);
        p.db.set_over(Actor::Scheduler, rid, Outcome::Success);
        let wuid = p.db.result(rid).workunitid;
        p.db.set_transition_time(Actor::Scheduler, wuid, t);
    }

    /// Drains the audit trail and checks it as one step of `actor`.
    fn step(c: &mut InvariantChecker, p: &mut Project, actor: Actor) -> Result<(), Violation> {
        let touched = std::mem::take(&mut p.db.audit);
        let now = now();
        c.check_after_step(p, now, &touched, Some(actor))
    }

    fn rule(r: Result<(), Violation>) -> u8 {
        r.expect_err("a violation").rule
    }

    /// S1 of spec backend §4, traced through the setters, checked after every step,
    /// and quiescent at the end.
    #[test]
    fn single_instance_success_passes_every_rule() {
        let mut p = project();
        p.cfg.daemons.db_purge = 0;
        let mut c = InvariantChecker::new();
        let h = add_host(&mut p, 7);
        let wuid =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        step(&mut c, &mut p, Actor::WorkGenerator).unwrap();

        set_now(1);
        let rid = p.db.insert_result(T, test_rows::result(wuid, 0));
        p.db.set_transition_time(T, wuid, 1 + 864_000);
        step(&mut c, &mut p, T).unwrap();

        set_now(5);
        p.feeder.fill(&mut p.db, 0, rid);
        step(&mut c, &mut p, Actor::Feeder).unwrap();

        send(&mut p, rid, h, 10);
        p.feeder.empty(&mut p.db, 0);
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        assert_eq!(p.db.wu(wuid).transition_time, 1010);

        report_success(&mut p, rid, 500);
        step(&mut c, &mut p, Actor::Scheduler).unwrap();

        set_now(501);
        p.db.set_need_validate(T, wuid, true);
        p.db.set_transition_time(T, wuid, 501 + 864_000);
        step(&mut c, &mut p, T).unwrap();

        let v = Actor::Validator;
        set_now(502);
        p.db.set_validate_state(v, rid, ValidateState::Valid);
        p.db.result_mut(rid).granted_credit = 100.0;
        p.db.host_mut(h).total_credit += 100.0;
        p.db.set_canonical(v, wuid, rid, now());
        p.db.set_wu_assimilate_state(v, wuid, AssimilateState::Ready, now());
        p.db.set_transition_time(v, wuid, INT_MAX);
        p.db.set_need_validate(v, wuid, false);
        step(&mut c, &mut p, v).unwrap();

        let a = Actor::Assimilator;
        set_now(503);
        p.db.wu_mut(wuid).assimilate_count += 1;
        p.db.set_wu_assimilate_state(a, wuid, AssimilateState::Done, now());
        p.db.set_transition_time(a, wuid, 503);
        step(&mut c, &mut p, a).unwrap();

        set_now(504);
        p.db.set_wu_file_delete_state(T, wuid, FileDeleteState::Ready, now());
        p.db.set_result_file_delete_state(T, rid, FileDeleteState::Ready);
        p.db.set_transition_time(T, wuid, INT_MAX);
        step(&mut c, &mut p, T).unwrap();

        let f = Actor::FileDeleter;
        set_now(505);
        p.db.set_wu_file_delete_state(f, wuid, FileDeleteState::Done, now());
        p.db.set_result_file_delete_state(f, rid, FileDeleteState::Done);
        step(&mut c, &mut p, f).unwrap();

        c.check_all(&p, 505).unwrap();
        check_quiescent(&p, now()).unwrap();

        // With db_purge on, the finished WU should have been purged (rule 19).
        p.cfg.daemons.db_purge = 300;
        assert_eq!(rule(check_quiescent(&p, now())), 19);
        p.db.purge_workunit(wuid, &mut Vec::new());
        step(&mut c, &mut p, Actor::DbPurge).unwrap();
        c.check_all(&p, 600).unwrap();
        check_quiescent(&p, now()).unwrap();
        assert!(c.hostid.is_empty() && c.canonical.is_empty());
    }

    #[test]
    fn display_names_rule_time_row_and_values() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        for s in 0..2 {
            p.db.insert_result(T, test_rows::result(w, s));
        }
        let w1 =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w1, 0));
        assert_eq!(rid, ResultId(3));
        p.db.set_over(Actor::Scheduler, rid, Outcome::ClientError);
        p.db.set_validate_state(Actor::Scheduler, rid, ValidateState::Invalid);
        let r = p.db.result_mut(rid);
        (r.hostid, r.sent_time, r.received_time, r.report_deadline) = (HostId(1), 10, 20, 1010);
        r.granted_credit = 5.0;
        let err = InvariantChecker::new().check_all(&p, 502).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invariant 4 violated at t=502: result 3 (wu2_0): \
             granted_credit > 0 but validate_state = 2 (INVALID)"
        );
        assert_eq!((err.entity, err.id), (RESULT, 3));
    }

    #[test]
    fn rule_1_over_needs_an_outcome() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w, 0));
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, T).unwrap();
        p.db.set_server_state(Actor::Feeder, rid, ServerState::Over);
        assert_eq!(rule(step(&mut c, &mut p, Actor::Feeder)), 1);
        p.db.set_outcome(Actor::Feeder, rid, Outcome::DidntNeed);
        step(&mut c, &mut p, Actor::Feeder).unwrap();
        c.check_all(&p, 0).unwrap();
    }

    #[test]
    fn rule_2_in_progress_needs_host_and_send_time() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w, 0));
        p.db.set_server_state(Actor::Scheduler, rid, ServerState::InProgress);
        let mut c = InvariantChecker::new();
        let v = step(&mut c, &mut p, Actor::Scheduler).unwrap_err();
        assert_eq!((v.rule, v.entity, v.id), (2, RESULT, rid.0));
        assert!(v.message.contains("hostid = 0"), "{v}");
    }

    #[test]
    fn rule_3_hostid_changes_only_within_a_user() {
        let mut p = project();
        let (h1, h2, h3) = (
            add_host(&mut p, 7),
            add_host(&mut p, 7),
            add_host(&mut p, 8),
        );
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w, 0));
        let mut c = InvariantChecker::new();
        send(&mut p, rid, h1, 10);
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        // A report from another host of the same user rewrites hostid: allowed.
        p.db.set_hostid(Actor::Scheduler, rid, h2);
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        // Another user's host: not allowed, seen from the audit row…
        p.db.set_hostid(Actor::Scheduler, rid, h3);
        let v = step(&mut c, &mut p, Actor::Scheduler).unwrap_err();
        assert_eq!(v.rule, 3);
        assert!(
            v.message.contains("scheduler changed hostid from 2 to 3"),
            "{v}"
        );
        // …and from the remembered value when rows change without audit.
        let mut c = InvariantChecker::new();
        p.db.result_mut(rid).hostid = h1;
        c.check_all(&p, 20).unwrap();
        p.db.result_mut(rid).hostid = h3;
        assert_eq!(rule(c.check_all(&p, 21)), 3);
    }

    #[test]
    fn rule_4_credit_only_for_valid_results() {
        let mut p = project();
        let h = add_host(&mut p, 1);
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w, 0));
        send(&mut p, rid, h, 10);
        report_success(&mut p, rid, 20);
        let mut c = InvariantChecker::new();
        c.check_all(&p, 20).unwrap();
        p.db.set_validate_state(Actor::Validator, rid, ValidateState::Inconclusive);
        p.db.result_mut(rid).granted_credit = 3.0;
        assert_eq!(rule(step(&mut c, &mut p, Actor::Validator)), 4);
        p.db.set_validate_state(Actor::Validator, rid, ValidateState::Valid);
        step(&mut c, &mut p, Actor::Validator).unwrap();
        // CLIENT_ERROR must be INVALID.
        p.db.set_outcome(Actor::Scheduler, rid, Outcome::ClientError);
        p.db.set_validate_state(Actor::Scheduler, rid, ValidateState::Init);
        p.db.result_mut(rid).granted_credit = 0.0;
        assert_eq!(rule(step(&mut c, &mut p, Actor::Scheduler)), 4);
    }

    /// A WU with a VALID canonical result R0 (and results 1..n unsent).
    fn validated(p: &mut Project, n: u16) -> (WuId, Vec<ResultId>, HostId) {
        let h = add_host(p, 1);
        let mut wu = test_rows::workunit();
        std::sync::Arc::make_mut(&mut wu.limits).max_total_results = 8;
        let w = p.db.insert_workunit(Actor::WorkGenerator, wu);
        let rids: Vec<_> = (0..n)
            .map(|s| p.db.insert_result(T, test_rows::result(w, s)))
            .collect();
        send(p, rids[0], h, 10);
        report_success(p, rids[0], 20);
        let v = Actor::Validator;
        set_now(30);
        p.db.set_validate_state(v, rids[0], ValidateState::Valid);
        p.db.set_canonical(v, w, rids[0], now());
        p.db.set_wu_assimilate_state(v, w, AssimilateState::Ready, now());
        p.db.set_transition_time(v, w, INT_MAX);
        (w, rids, h)
    }

    #[test]
    fn rule_5_canonical_is_valid_and_never_changes() {
        let mut p = project();
        let (w, rids, h) = validated(&mut p, 2);
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, Actor::Validator).unwrap();
        send(&mut p, rids[1], h, 40);
        report_success(&mut p, rids[1], 50);
        p.db.set_validate_state(Actor::Validator, rids[1], ValidateState::Valid);
        step(&mut c, &mut p, Actor::Validator).unwrap();
        // Changing it is caught from the audit row, naming the actor…
        p.db.set_canonical(Actor::Validator, w, rids[1], now());
        let v = step(&mut c, &mut p, Actor::Validator).unwrap_err();
        assert_eq!(v.rule, 5);
        assert!(
            v.message
                .starts_with("validator changed canonical_resultid from 1 to 2")
        );
        // …and by a checker that only looks at whole states.
        let mut c = InvariantChecker::new();
        p.db.wu_mut(w).canonical_resultid = rids[0];
        c.check_all(&p, 60).unwrap();
        p.db.wu_mut(w).canonical_resultid = rids[1];
        assert_eq!(rule(c.check_all(&p, 61)), 5);
        // A canonical result that is not VALID.
        let mut c = InvariantChecker::new();
        p.db.result_mut(rids[1]).validate_state = ValidateState::Inconclusive;
        let v = c.check_all(&p, 62).unwrap_err();
        assert_eq!((v.rule, v.entity), (5, WORKUNIT));
    }

    #[test]
    fn rule_6_no_more_results_than_max_total() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let mut c = InvariantChecker::new();
        p.db.insert_result(T, test_rows::result(w, 0));
        p.db.insert_result(T, test_rows::result(w, 1));
        step(&mut c, &mut p, T).unwrap();
        p.db.insert_result(T, test_rows::result(w, 2));
        let v = step(&mut c, &mut p, T).unwrap_err();
        assert_eq!((v.rule, v.id), (6, w.0));
    }

    #[test]
    fn rule_7_error_bits_are_only_added() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let mut c = InvariantChecker::new();
        p.db.set_error_mask(T, w, 2);
        step(&mut c, &mut p, T).unwrap();
        p.db.set_error_mask(T, w, 2 | 8);
        step(&mut c, &mut p, T).unwrap();
        p.db.set_error_mask(T, w, 8);
        assert_eq!(rule(step(&mut c, &mut p, T)), 7);
        // The assimilator may only assign 32 to a mask of 0.
        let w2 =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        p.db.set_error_mask(Actor::Assimilator, w2, 32);
        step(&mut c, &mut p, Actor::Assimilator).unwrap();
        p.db.set_error_mask(Actor::Assimilator, w2, 32 | 16);
        let v = step(&mut c, &mut p, Actor::Assimilator).unwrap_err();
        assert_eq!(v.rule, 7);
        assert!(
            v.message.starts_with("assimilator set error_mask 32 -> 48"),
            "{v}"
        );
    }

    #[test]
    fn rule_8_wu_files_go_only_when_all_over() {
        let mut p = project();
        let (w, rids, _) = validated(&mut p, 2);
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, Actor::Validator).unwrap();
        p.db.wu_mut(w).assimilate_count = 1;
        p.db.set_wu_assimilate_state(Actor::Assimilator, w, AssimilateState::Done, now());
        step(&mut c, &mut p, Actor::Assimilator).unwrap();
        // R1 is still UNSENT: flagging the input files now breaks rule 8.
        p.db.set_wu_file_delete_state(T, w, FileDeleteState::Ready, now());
        let v = step(&mut c, &mut p, T).unwrap_err();
        assert_eq!(v.rule, 8);
        assert!(v.message.contains("wu1_1"), "{v}");
        // Once R1 is over, the same change is fine.
        p.db.set_wu_file_delete_state(T, w, FileDeleteState::Init, now());
        p.db.set_over(T, rids[1], Outcome::DidntNeed);
        let _ = std::mem::take(&mut p.db.audit);
        p.db.set_wu_file_delete_state(T, w, FileDeleteState::Ready, now());
        step(&mut c, &mut p, T).unwrap();
    }

    #[test]
    fn rule_9_result_files_need_a_finished_wu() {
        let mut p = project();
        let (_, rids, _) = validated(&mut p, 1);
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, Actor::Validator).unwrap();
        // Assimilation has not happened yet.
        p.db.set_result_file_delete_state(T, rids[0], FileDeleteState::Ready);
        let v = step(&mut c, &mut p, T).unwrap_err();
        assert_eq!((v.rule, v.entity), (9, RESULT));
    }

    #[test]
    fn rule_10_done_needs_a_handler_call_by_the_assimilator() {
        let mut p = project();
        let (w, _, _) = validated(&mut p, 1);
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, Actor::Validator).unwrap();
        p.db.set_wu_assimilate_state(T, w, AssimilateState::Done, now());
        assert_eq!(rule(step(&mut c, &mut p, T)), 10);
        // The assimilator without counting the call: still rule 10.
        let mut c = InvariantChecker::new();
        assert_eq!(rule(c.check_all(&p, 40)), 10);
        p.db.wu_mut(w).assimilate_count = 1;
        c.check_all(&p, 40).unwrap();
    }

    #[test]
    fn rule_11_transition_time_by_the_deadline() {
        let mut p = project();
        let h = add_host(&mut p, 1);
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let rid = p.db.insert_result(T, test_rows::result(w, 0));
        let mut c = InvariantChecker::new();
        p.db.set_transition_time(T, w, 1 + 864_000);
        send(&mut p, rid, h, 10);
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        // The transitioner forgets the deadline.
        set_now(20);
        p.db.set_transition_time(T, w, 20 + 864_000);
        let v = step(&mut c, &mut p, T).unwrap_err();
        assert_eq!((v.rule, v.entity), (11, WORKUNIT));
        // No slack for the grace period (spec backend §2.4.5 at HEAD): with
        // `report_grace_period = 100`, a `tt` one second past the DB deadline
        // 1010 still fails (the earlier `now − 1 + 2×grace` needed that slack).
        p.cfg.config.report_grace_period = 100;
        p.db.set_transition_time(T, w, 1011);
        let v = step(&mut c, &mut p, T).unwrap_err();
        assert_eq!((v.rule, v.entity), (11, WORKUNIT));
        // A due WU (tt ≤ now) is fine, and so is a WU with an error.
        p.db.set_transition_time(T, w, 20);
        step(&mut c, &mut p, T).unwrap();
        p.db.set_error_mask(T, w, 2);
        p.db.set_transition_time(T, w, INT_MAX);
        step(&mut c, &mut p, T).unwrap();
    }

    #[test]
    fn rule_12_error_bit_after_a_transitioner_pass() {
        let mut p = project();
        let (h1, h2) = (add_host(&mut p, 1), add_host(&mut p, 2));
        let mut wu = test_rows::workunit();
        std::sync::Arc::make_mut(&mut wu.limits).max_total_results = 3;
        let w = p.db.insert_workunit(Actor::WorkGenerator, wu);
        let mut c = InvariantChecker::new();
        for (s, h) in [(0, h1), (1, h2)] {
            let rid = p.db.insert_result(T, test_rows::result(w, s));
            send(&mut p, rid, h, 10);
            p.db.result_mut(rid).received_time = 20;
            p.db.set_over(Actor::Scheduler, rid, Outcome::ClientError);
            p.db.set_validate_state(Actor::Scheduler, rid, ValidateState::Invalid);
        }
        p.db.set_transition_time(Actor::Scheduler, w, 20);
        // Two errors > max_error_results = 1: fine until the transitioner has run.
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        set_now(21);
        p.db.set_transition_time(T, w, INT_MAX);
        assert_eq!(rule(step(&mut c, &mut p, T)), 12);
        p.db.set_error_mask(T, w, error_mask::TOO_MANY_ERROR_RESULTS);
        p.db.set_wu_assimilate_state(T, w, AssimilateState::Ready, now());
        step(&mut c, &mut p, T).unwrap();
        // A user abort (exit 203) is not an error in the modern count.
        let mut p2 = project();
        let (h1, h2) = (add_host(&mut p2, 1), add_host(&mut p2, 2));
        let w = p2
            .db
            .insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        for (s, h) in [(0, h1), (1, h2)] {
            let rid = p2.db.insert_result(T, test_rows::result(w, s));
            send(&mut p2, rid, h, 10);
            p2.db.result_mut(rid).received_time = 20;
            p2.db.result_mut(rid).exit_status = exit_status::EXIT_ABORTED_VIA_GUI;
            p2.db.set_over(Actor::Scheduler, rid, Outcome::ClientError);
            p2.db
                .set_validate_state(Actor::Scheduler, rid, ValidateState::Invalid);
        }
        p2.db.set_transition_time(T, w, INT_MAX);
        step(&mut InvariantChecker::new(), &mut p2, T).unwrap();
    }

    #[test]
    fn rule_13_cache_slots() {
        let mut p = project();
        let w =
            p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let (r0, r1) = (
            p.db.insert_result(T, test_rows::result(w, 0)),
            p.db.insert_result(T, test_rows::result(w, 1)),
        );
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, T).unwrap();
        for (slot, rid) in [(0, r0), (1, r1)] {
            p.feeder.fill(&mut p.db, slot, rid);
        }
        step(&mut c, &mut p, Actor::Feeder).unwrap();
        // The same result in two slots.
        p.feeder.corrupt_slot(5, Some(r0));
        let v = step(&mut c, &mut p, Actor::Feeder).unwrap_err();
        assert_eq!((v.rule, v.entity, v.id), (13, CACHE, 5));
        p.feeder.corrupt_slot(5, None);
        // A slot whose result does not know it is cached.
        p.db.result_mut(r1).in_cache = false;
        assert_eq!(rule(c.check_all(&p, 0)), 13);
        p.db.result_mut(r1).in_cache = true;
        c.check_all(&p, 0).unwrap();
        // A slot filled with a result that is not UNSENT.
        p.feeder.empty(&mut p.db, 1);
        step(&mut c, &mut p, Actor::Feeder).unwrap();
        p.db.set_over(Actor::Feeder, r1, Outcome::DidntNeed);
        p.feeder.fill(&mut p.db, 1, r1);
        let v = step(&mut c, &mut p, Actor::Feeder).unwrap_err();
        assert_eq!((v.rule, v.id), (13, 1));
    }

    #[test]
    fn rule_14_one_result_per_host_or_user() {
        let mut p = project();
        let (h1, h2) = (add_host(&mut p, 1), add_host(&mut p, 1));
        let mut wu = test_rows::workunit();
        (wu.min_quorum, wu.target_nresults) = (2, 2);
        std::sync::Arc::make_mut(&mut wu.limits).max_total_results = 4;
        let w = p.db.insert_workunit(Actor::WorkGenerator, wu);
        let rids: Vec<_> = (0..3)
            .map(|s| p.db.insert_result(T, test_rows::result(w, s)))
            .collect();
        send(&mut p, rids[0], h1, 10);
        send(&mut p, rids[1], h2, 11);
        // Two hosts of one user: fine per host, not per user.
        p.cfg.config.one_result_per_host_per_wu = true;
        let mut c = InvariantChecker::new();
        step(&mut c, &mut p, Actor::Scheduler).unwrap();
        p.cfg.config.one_result_per_user_per_wu = true;
        let v = c.check_all(&p, 11).unwrap_err();
        assert_eq!((v.rule, v.id), (14, w.0));
        assert!(v.message.contains("user 1"), "{v}");
        // Two results on one host.
        p.cfg.config.one_result_per_user_per_wu = false;
        send(&mut p, rids[2], h1, 12);
        let v = step(&mut c, &mut p, Actor::Scheduler).unwrap_err();
        assert_eq!(v.rule, 14);
        assert!(v.message.contains("host 1"), "{v}");
        // Off by default.
        p.cfg.config.one_result_per_host_per_wu = false;
        c.check_all(&p, 12).unwrap();
    }

    #[test]
    fn rule_15_valid_results_share_the_credit() {
        let mut p = project();
        let (w, rids, _) = validated(&mut p, 2);
        let h2 = add_host(&mut p, 2);
        send(&mut p, rids[1], h2, 40);
        report_success(&mut p, rids[1], 50);
        p.db.set_validate_state(Actor::Validator, rids[1], ValidateState::Valid);
        p.db.result_mut(rids[0]).granted_credit = 100.0;
        p.db.result_mut(rids[1]).granted_credit = 90.0;
        let mut c = InvariantChecker::new();
        let v = step(&mut c, &mut p, Actor::Validator).unwrap_err();
        assert_eq!((v.rule, v.id), (15, w.0));
        p.apps[0].cfg.validator.grant_claimed_credit = true;
        step(&mut c, &mut p, Actor::Validator).unwrap();
        // Rule 16 still holds the hosts to the credit granted: they got none here.
        assert_eq!(rule(c.check_all(&p, 50)), 16);
    }

    #[test]
    fn rule_16_host_credit_is_the_sum_of_its_valid_results() {
        let mut p = project();
        let (_, rids, h) = validated(&mut p, 1);
        p.db.result_mut(rids[0]).granted_credit = 100.0;
        p.db.host_mut(h).total_credit = 99.0;
        let v = InvariantChecker::new().check_all(&p, 30).unwrap_err();
        assert_eq!((v.rule, v.entity, v.id), (16, HOST, h.0));
        p.db.host_mut(h).total_credit = 100.0;
        InvariantChecker::new().check_all(&p, 30).unwrap();
    }

    #[test]
    fn quiescent_rules_17_to_21() {
        let mut p = project();
        p.cfg.daemons.db_purge = 0;
        let (w, rids, _) = validated(&mut p, 2);
        // R1 still UNSENT: rule 18 (17 holds: there is a canonical result).
        assert_eq!(rule(check_quiescent(&p, now())), 18);
        p.db.set_over(Actor::Validator, rids[1], Outcome::DidntNeed);
        // Not assimilated yet: rule 18.
        assert_eq!(rule(check_quiescent(&p, now())), 18);
        p.db.wu_mut(w).assimilate_count = 1;
        p.db.set_wu_assimilate_state(Actor::Assimilator, w, AssimilateState::Done, now());
        // Files not deleted: rule 19.
        assert_eq!(rule(check_quiescent(&p, now())), 19);
        p.db.set_wu_file_delete_state(T, w, FileDeleteState::Done, now());
        p.db.set_result_file_delete_state(T, rids[0], FileDeleteState::Done);
        check_quiescent(&p, now()).unwrap();
        // A DIDNT_NEED result's files are never deleted (quirk Q6): rule 19.
        p.db.set_result_file_delete_state(T, rids[1], FileDeleteState::Done);
        assert_eq!(rule(check_quiescent(&p, now())), 19);
        p.db.set_result_file_delete_state(T, rids[1], FileDeleteState::Init);
        // Assimilated twice: rule 20.
        p.db.wu_mut(w).assimilate_count = 2;
        assert_eq!(rule(check_quiescent(&p, now())), 20);
        p.db.wu_mut(w).assimilate_count = 1;
        // A SUCCESS result never validated: rule 21.
        p.db.result_mut(rids[1]).outcome = Outcome::Success;
        assert_eq!(rule(check_quiescent(&p, now())), 21);
        p.db.result_mut(rids[1]).outcome = Outcome::DidntNeed;
        // A WU with neither canonical nor error: rule 17.
        p.db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        assert_eq!(rule(check_quiescent(&p, now())), 17);
    }
}
