//! Feeder and the shared-memory job cache (`feeder.cpp`, spec backend §2.3).
//!
//! The cache has `shmem_work_items` slots. Each pass fills empty slots with UNSENT
//! results not already cached, in the default order `priority DESC, workunitid ASC`
//! (then result id), and marks results of workunits with an error OVER/DIDNT_NEED on
//! the way (without touching `transition_time`). This is the spec's "simulator
//! simplification that keeps the semantics": the scheduler re-reads a slot's result
//! before sending it, so a stale slot is harmless.

use super::Project;
use super::types::*;
use crate::engine::Time;
use std::ops::Bound;

/// Legacy infeasible-queue thresholds (pre-2007, spec backend §2.3; §5 row 4).
pub const MAX_INFEASIBLE_COUNT: u32 = 5000;
pub const MAX_INFEASIBLE_THRESHOLD: u32 = 2000;
pub const MAX_INFEASIBLE: u32 = 500;

/// The job cache: one optional result per slot.
#[derive(Clone, Debug)]
pub struct Cache {
    pub slots: Vec<Option<ResultId>>,
}

impl Cache {
    pub fn new(n: usize) -> Self {
        Self {
            slots: vec![None; n],
        }
    }

    /// Number of occupied slots.
    pub fn present(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

/// One feeder scan. Returns the number of slots filled.
pub fn pass(p: &mut Project, now: Time) -> usize {
    let _ = now;
    // Legacy mode: a cached result nobody could take too often falls off the
    // infeasible queue as COULDNT_SEND (seed BackendLogic, §5 row 4).
    if p.sw.legacy_couldnt_send {
        for i in 0..p.feeder.slots.len() {
            let Some(rid) = p.feeder.slots[i] else {
                continue;
            };
            let r = p.db.result(rid);
            if r.server_state == ServerState::Unsent
                && r.infeasible_count > MAX_INFEASIBLE_THRESHOLD
            {
                let wuid = r.workunitid;
                p.feeder.slots[i] = None;
                p.db.result_mut(rid).in_cache = false;
                p.db.set_over(Actor::Feeder, rid, Outcome::CouldntSend);
                p.db.set_transition_time(Actor::Feeder, wuid, now);
            }
        }
    }
    let mut filled = 0;
    let mut cursor = p.db.unsent.iter().next().copied();
    for slot in 0..p.feeder.slots.len() {
        if let Some(rid) = p.feeder.slots[slot] {
            // A slot whose result was sent or retired elsewhere is stale: free it.
            match p.db.results.get(rid) {
                Some(r) if r.server_state == ServerState::Unsent => continue,
                Some(_) => p.db.result_mut(rid).in_cache = false,
                None => {}
            }
            p.feeder.slots[slot] = None;
        }
        // Find the next eligible UNSENT result.
        let mut chosen = None;
        while let Some(key) = cursor {
            cursor =
                p.db.unsent
                    .range((Bound::Excluded(key), Bound::Unbounded))
                    .next()
                    .copied();
            let (_, wuid, rid) = key;
            let wu = p.db.wu(wuid);
            if wu.transitioner_flags != 0 || p.db.result(rid).in_cache {
                continue;
            }
            if wu.error_mask != 0 {
                p.db.set_over(Actor::Feeder, rid, Outcome::DidntNeed);
                continue;
            }
            chosen = Some(rid);
            break;
        }
        let Some(rid) = chosen else { break };
        p.feeder.slots[slot] = Some(rid);
        p.db.result_mut(rid).in_cache = true;
        filled += 1;
    }
    filled
}
