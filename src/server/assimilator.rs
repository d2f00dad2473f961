//! Assimilator (`sched/assimilator.cpp`, spec backend §2.6).
//!
//! For each workunit with `assimilate_state = READY`: set error bit 32 if the
//! canonical result is missing, call the project's handler, and act on its answer:
//! success marks the workunit DONE with `transition_time = now` so the transitioner
//! can start file deletion; `DEFER_ASSIMILATION` puts it back to INIT with
//! `transition_time = now`, and the transitioner offers it again (spec backend §2.2
//! step 7); any other answer is a handler error, on which BOINC's daemon exits.
//!
//! The handler's answer is the sample handler's (always success) unless the project
//! gives probabilities (`[project.NAME.assimilator]`, drawn from the project's own
//! assimilator stream) or a scripted pass names the answer for a workunit.

use super::Project;
use super::db::{Db, Prefetch};
use super::step::Step;
use super::types::*;
use crate::engine::Time;
use rand::RngExt;
use serde::{Deserialize, Serialize};

const ACTOR: Actor = Actor::Assimilator;

/// What the project's assimilation handler returns (spec backend §2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HandlerResult {
    /// 0: the workunit is assimilated.
    Ok,
    /// `DEFER_ASSIMILATION`: back to INIT; the transitioner re-sets READY later.
    Defer,
    /// Any other return: the daemon logs "handler error … exiting" and exits.
    Error,
}

/// The handler's answers in unscripted passes: each call defers with probability
/// `defer_prob`, fails with `error_prob`, and succeeds otherwise.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AssimilatorConfig {
    pub defer_prob: f64,
    pub error_prob: f64,
}

/// The handler's answer for `wuid`: a scripted answer for this pass if there is one,
/// else a draw (only when a probability is set, so that the stream, and every other
/// draw, is untouched in projects that do not use it), else success.
fn answer(p: &mut Project, wuid: WuId, script: &[(WuId, HandlerResult)]) -> HandlerResult {
    if let Some(&(_, a)) = script.iter().find(|(w, _)| *w == wuid) {
        return a;
    }
    let AssimilatorConfig {
        defer_prob,
        error_prob,
    } = p.cfg.assimilator;
    if defer_prob <= 0.0 && error_prob <= 0.0 {
        return HandlerResult::Ok;
    }
    let u: f64 = p.assimilator_rng.random();
    if u < error_prob {
        HandlerResult::Error
    } else if u < error_prob + defer_prob {
        HandlerResult::Defer
    } else {
        HandlerResult::Ok
    }
}

/// One pass.
pub fn pass(p: &mut Project, now: Time) -> Step {
    pass_scripted(p, now, &[])
}

/// One pass in which the handler answers `script`'s answer for the workunits it names.
/// A handler error ends the pass at that workunit, as the real daemon exits there:
/// the workunits handled before keep their updates (each is its own DB write), the
/// failing one stays READY, and the later ones wait. The daemon's next pass stands
/// for its restart (BOINC's `start --cron`).
pub(crate) fn pass_scripted(p: &mut Project, now: Time, script: &[(WuId, HandlerResult)]) -> Step {
    let query = |db: &mut Db, list: &mut Vec<WuId>| list.extend(db.assimilate_ready.iter());
    let mut n = 0;
    p.walk_workunits(Prefetch::RESULTS, query, |p, wuid| {
        n += 1;
        let a = answer(p, wuid, script);
        handle_wu(p, now, wuid, a)
    });
    Step::handled(n)
}

/// Assimilates one workunit with the handler's answer `a`. Returns false on a handler
/// error (the daemon exits).
pub(crate) fn handle_wu(p: &mut Project, now: Time, wuid: WuId, a: HandlerResult) -> bool {
    let wu = p.db.wu(wuid);
    let canonical = wu.canonical_resultid;
    let canonical_missing = canonical == ResultId(0) || p.db.results.get(canonical).is_none();
    if p.sw.assimilator_missing_canonical && canonical_missing && wu.error_mask == 0 {
        p.db.set_error_mask(ACTOR, wuid, error_mask::NO_CANONICAL_RESULT);
    }
    p.db.wu_mut(wuid).assimilate_count += 1;
    let state = match a {
        HandlerResult::Ok => AssimilateState::Done,
        HandlerResult::Defer => AssimilateState::Init,
        HandlerResult::Error => return false,
    };
    p.db.set_wu_assimilate_state(ACTOR, wuid, state, now);
    p.db.set_transition_time(ACTOR, wuid, now);
    true
}
