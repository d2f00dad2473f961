//! Assimilator (`sched/assimilator.cpp`, spec backend §2.6).
//!
//! For each workunit with `assimilate_state = READY`: set error bit 32 if the
//! canonical result is missing, call the project's handler, and on success mark the
//! workunit DONE with `transition_time = now` so the transitioner can start file
//! deletion. The sample handler accepts everything; a scenario can ask it to defer.

use super::Project;
use super::types::*;
use crate::engine::Time;

const ACTOR: Actor = Actor::Assimilator;

/// What the project's assimilation handler returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerResult {
    Ok,
    /// `DEFER_ASSIMILATION`: back to INIT; the transitioner re-sets READY later.
    Defer,
}

/// The sample handler (`sample_dummy_assimilator.cpp`): accepts every workunit.
pub fn sample_handler(_p: &Project, _wuid: WuId) -> HandlerResult {
    HandlerResult::Ok
}

/// One pass. Returns the number of workunits handled.
pub fn pass(p: &mut Project, now: Time) -> usize {
    let mut list = std::mem::take(&mut p.scratch);
    list.clear();
    list.extend(p.db.assimilate_ready.iter().copied());
    for &wuid in &list {
        handle_wu(p, now, wuid, sample_handler);
    }
    let n = list.len();
    p.scratch = list;
    n
}

/// Assimilates one workunit with `handler`.
pub fn handle_wu(
    p: &mut Project,
    now: Time,
    wuid: WuId,
    handler: fn(&Project, WuId) -> HandlerResult,
) {
    let wu = p.db.wu(wuid);
    let canonical = wu.canonical_resultid;
    let canonical_missing = canonical == 0 || p.db.results.get(canonical).is_none();
    if p.sw.assimilator_missing_canonical && canonical_missing && wu.error_mask == 0 {
        p.db.set_error_mask(ACTOR, wuid, error_mask::NO_CANONICAL_RESULT);
    }
    p.db.wu_mut(wuid).assimilate_count += 1;
    match handler(p, wuid) {
        HandlerResult::Ok => {
            p.db.set_wu_assimilate_state(ACTOR, wuid, AssimilateState::Done);
        }
        HandlerResult::Defer => {
            p.db.set_wu_assimilate_state(ACTOR, wuid, AssimilateState::Init);
        }
    }
    p.db.set_transition_time(ACTOR, wuid, now);
}
