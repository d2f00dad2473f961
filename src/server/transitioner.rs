//! Transitioner (`sched/transitioner.cpp`, spec backend §2.2).
//!
//! Each pass takes a snapshot of the workunits whose `transition_time < now` (strict),
//! from the `transition_time` index, in ascending id, and runs [`handle_wu`] on each:
//! time out overdue results, trigger validation, set error bits, create the instances
//! still needed, flag files for deletion, and compute the next `transition_time`.
//! Where the seed pseudocode differs (spec backend §5 rows 5–12, quirks Q1, Q2, Q6),
//! the project's [`Switches`](super::config::Switches) choose.

use super::Project;
use super::db::{Db, Prefetch, ResultRow};
use super::step::Step;
use super::types::*;
use crate::engine::Time;
use crate::server::types::INT_MAX;

const ACTOR: Actor = Actor::Transitioner;

/// One pass: every workunit due at `now`, in id order.
pub fn pass(p: &mut Project, now: Time) -> Step {
    let due = |db: &mut Db, list: &mut Vec<WuId>| db.take_due_workunits(now, list);
    Step::handled(p.walk_workunits(Prefetch::RESULTS, due, |p, wuid| {
        handle_wu(p, now, wuid);
        true
    }))
}

/// Counts of spec backend §2.2 step 2.
#[derive(Default, Debug)]
struct Counts {
    ntotal: i32,
    nunsent: i32,
    ninprogress: i32,
    nover: i32,
    nsuccess: i32,
    nerrors: i32,
    nno_reply: i32,
    ncouldnt_send: i32,
    max_suffix: i32,
    have_new_result_to_validate: bool,
}

/// Handles one workunit (spec backend §2.2 steps 1–10).
pub(crate) fn handle_wu(p: &mut Project, now: Time, wuid: WuId) {
    let Some(wu) = p.db.workunits.get(wuid) else {
        return;
    };
    let results = wu.results.clone();
    let canonical = wu.canonical_resultid;
    let sw = p.sw;

    // Step 1: canonical result and whether its files are gone.
    let canonical_files_deleted = canonical != ResultId(0)
        && p.db
            .results
            .get(canonical)
            .is_some_and(|r| r.file_delete_state == FileDeleteState::Done);

    // Step 2: scan and count.
    let mut c = Counts {
        max_suffix: -1,
        ..Default::default()
    };
    for &rid in &results {
        let r = p.db.result(rid);
        c.ntotal += 1;
        c.max_suffix = c.max_suffix.max(r.suffix as i32);
        match r.server_state {
            ServerState::Inactive | ServerState::Unsent => c.nunsent += 1,
            ServerState::InProgress => {
                if r.report_deadline < now {
                    p.db.set_over(ACTOR, rid, Outcome::NoReply);
                    result_timed_out(p, rid);
                    c.nover += 1;
                    c.nno_reply += 1;
                } else {
                    c.ninprogress += 1;
                }
            }
            ServerState::Over => {
                c.nover += 1;
                count_over(p, rid, canonical_files_deleted, &sw, &mut c);
            }
        }
    }

    let wu = p.db.wu(wuid);
    let (min_quorum, target, max_err, max_total) = (
        wu.min_quorum,
        wu.target_nresults,
        wu.limits.max_error_results,
        wu.limits.max_total_results,
    );
    let mut mask = wu.error_mask;

    // Step 3: trigger validation (before the error branch: quirk Q2).
    let validation_allowed = sw.validate_after_error || mask == 0;
    if c.have_new_result_to_validate && c.nsuccess >= min_quorum && validation_allowed {
        p.db.set_need_validate(ACTOR, wuid, true);
    }

    // Step 4: error conditions. Quirk Q1: they run even with a canonical result.
    let check_errors = sw.errors_after_canonical || canonical == ResultId(0);
    if c.ncouldnt_send > 0 {
        mask |= error_mask::COULDNT_SEND_RESULT;
    }
    if c.nerrors > 0
        && c.nsuccess == 0
        && c.ninprogress == 0
        && c.nno_reply == 0
        && !p.cfg.config.hr_class_static
    {
        p.db.set_hr_class(ACTOR, wuid, 0);
        p.db.set_wu_app_version_id(ACTOR, wuid, 0);
    }
    let mut needed;
    if sw.modern_needed {
        needed = (target - c.nunsent - c.ninprogress - c.nsuccess).max(0);
    } else {
        // Seed: L = N − #(UNSENT or IN_PROGRESS) (spec backend §5 row 9).
        needed = (target - c.nunsent - c.ninprogress).max(0);
    }
    if check_errors {
        if c.nerrors > max_err {
            mask |= error_mask::TOO_MANY_ERROR_RESULTS;
        }
        if sw.legacy_total_check {
            // Seed: error if total > B (spec backend §5 row 8).
            if c.ntotal > max_total {
                mask |= error_mask::TOO_MANY_TOTAL_RESULTS;
            }
        } else {
            let allowed = max_total - c.ntotal;
            if allowed < 0 || (allowed == 0 && needed > 0) {
                mask |= error_mask::TOO_MANY_TOTAL_RESULTS;
            } else if needed > allowed {
                needed = allowed;
            }
        }
    }
    // Creation is always capped at max_total_results (invariant 6), whichever
    // switches skipped the check above.
    needed = needed.min((max_total - c.ntotal).max(0));
    p.db.set_error_mask(ACTOR, wuid, mask);

    if mask != 0 {
        // Step 5a: clean up unsent results, trigger assimilation.
        for &rid in &results {
            let r = p.db.result(rid);
            match r.server_state {
                ServerState::Inactive | ServerState::Unsent => {
                    p.db.set_over(ACTOR, rid, Outcome::DidntNeed);
                }
                ServerState::Over
                    if sw.no_check_on_error
                        && r.outcome == Outcome::Success
                        && matches!(
                            r.validate_state,
                            ValidateState::Init | ValidateState::Inconclusive
                        ) =>
                {
                    p.db.set_validate_state(ACTOR, rid, ValidateState::NoCheck);
                }
                _ => {}
            }
        }
        if p.db.wu(wuid).assimilate_state == AssimilateState::Init {
            p.db.set_wu_assimilate_state(ACTOR, wuid, AssimilateState::Ready, now);
        }
    } else if canonical == ResultId(0) || !sw.modern_needed {
        // Step 5b: create the instances still needed.
        let flags = p.db.wu(wuid).transitioner_flags;
        if flags != 2 && needed > 0 {
            create_results(p, now, wuid, needed, c.max_suffix, c.nover, c.nerrors);
        }
    }

    // Step 6: "all over" flags, over the results with this pass's changes.
    let mut all_over_and_validated = true;
    let mut all_over_and_ready = true;
    let mut most_recently_returned: Time = 0;
    for &rid in &results {
        let r = p.db.result(rid);
        if r.server_state != ServerState::Over {
            all_over_and_validated = false;
            all_over_and_ready = false;
            continue;
        }
        most_recently_returned = most_recently_returned.max(r.received_time.into());
        if r.outcome == Outcome::Success && r.validate_state == ValidateState::Init {
            all_over_and_validated = false;
            all_over_and_ready = false;
        }
        if r.outcome == Outcome::NoReply && now < r.report_deadline {
            all_over_and_validated = false;
        }
    }
    // Results created in this pass are UNSENT: nothing is "all over".
    if p.db.wu(wuid).results.len() > results.len() {
        all_over_and_validated = false;
        all_over_and_ready = false;
    }

    // Step 7: deferred assimilation.
    let wu = p.db.wu(wuid);
    if all_over_and_ready
        && wu.assimilate_state == AssimilateState::Init
        && !results.is_empty()
        && wu.canonical_resultid > ResultId(0)
    {
        p.db.set_wu_assimilate_state(ACTOR, wuid, AssimilateState::Ready, now);
    }

    // Step 8: file deletion.
    let mut deferred: Option<Time> = None;
    if p.db.wu(wuid).assimilate_state == AssimilateState::Done {
        let delete_delay = p.cfg.config.delete_delay;
        if now >= most_recently_returned + delete_delay {
            if all_over_and_validated && p.db.wu(wuid).file_delete_state == FileDeleteState::Init {
                p.db.set_wu_file_delete_state(ACTOR, wuid, FileDeleteState::Ready, now);
            }
            let canonical = p.db.wu(wuid).canonical_resultid;
            for &rid in &results {
                if rid == canonical && !all_over_and_validated {
                    continue;
                }
                let r = p.db.result(rid);
                if r.file_delete_state == FileDeleteState::Init && files_deletable(r, &sw) {
                    p.db.set_result_file_delete_state(ACTOR, rid, FileDeleteState::Ready);
                }
            }
        } else {
            deferred = Some(most_recently_returned + delete_delay);
        }
    }

    // Step 9: next transition time.
    let tt = next_transition_time(p, now, wuid, deferred, &sw);
    // Step 10: write the WU (the concurrency guard is a no-op in an atomic step).
    p.db.set_transition_time(ACTOR, wuid, tt);
}

/// Step 2's counting of an OVER result.
fn count_over(
    p: &mut Project,
    rid: ResultId,
    canonical_files_deleted: bool,
    sw: &super::config::Switches,
    c: &mut Counts,
) {
    let r = p.db.result(rid);
    match r.outcome {
        Outcome::CouldntSend => c.ncouldnt_send += 1,
        Outcome::Success => {
            if r.validate_state == ValidateState::Init {
                if canonical_files_deleted && sw.too_late_state {
                    p.db.set_validate_state(ACTOR, rid, ValidateState::TooLate);
                } else {
                    c.have_new_result_to_validate = true;
                }
            }
            let r = p.db.result(rid);
            if !sw.success_excludes_invalid || r.validate_state != ValidateState::Invalid {
                c.nsuccess += 1;
            }
        }
        Outcome::ClientError => {
            if sw.modern_error_count && r.exit_status == exit_status::EXIT_ABORTED_VIA_GUI {
                c.nno_reply += 1;
            } else {
                c.nerrors += 1;
            }
        }
        Outcome::ValidateError => {
            if sw.modern_error_count {
                c.nerrors += 1;
            }
        }
        Outcome::ClientDetached | Outcome::NoReply => c.nno_reply += 1,
        Outcome::DidntNeed | Outcome::Init => {}
    }
}

/// Whether a result's output files may be flagged for deletion (spec backend §2.2
/// step 8; §5 row 11; quirk Q6).
fn files_deletable(r: &ResultRow, sw: &super::config::Switches) -> bool {
    match r.outcome {
        Outcome::ClientError => true,
        Outcome::Success => {
            if sw.delete_any_validated {
                r.validate_state != ValidateState::Init
            } else {
                matches!(
                    r.validate_state,
                    ValidateState::Valid | ValidateState::Invalid
                )
            }
        }
        Outcome::Init | Outcome::CouldntSend => false,
        _ => !sw.keep_files_of_unused,
    }
}

/// `result_timed_out`: the HAV penalty of a timeout (spec backend §2.2 step 2).
fn result_timed_out(p: &mut Project, rid: ResultId) {
    if !p.sw.hav_accounting {
        return;
    }
    let q = p.daily_result_quota();
    let r = p.db.result(rid);
    let (hostid, av) = (r.hostid, r.app_version_id);
    let delay_bound = p.db.wu(r.workunitid).limits.delay_bound as f64;
    let Some(hav) = p.db.hosts.get_mut(hostid).and_then(|h| h.hav_mut(av)) else {
        return;
    };
    let (t, w, l) = super::credit::HAV_AVG;
    hav.turnaround.update(delay_bound, t, w, l);
    let mut n = if hav.max_jobs_per_day == 0 {
        q
    } else {
        hav.max_jobs_per_day
    };
    n = (n.min(q) - 1).max(1);
    p.db.set_max_jobs_per_day(ACTOR, hostid, av, n);
    p.db.set_consecutive_valid(ACTOR, hostid, av, 0);
}

/// Step 5b: creates `needed` results with suffixes after `max_suffix`.
fn create_results(
    p: &mut Project,
    now: Time,
    wuid: WuId,
    needed: i32,
    max_suffix: i32,
    nover: i32,
    nerrors: i32,
) {
    let cfg = &p.cfg.config;
    let inc = if nover > 0 && cfg.reliable_priority_on_over != 0 {
        cfg.reliable_priority_on_over
    } else if nover > 0 && nerrors == 0 && cfg.reliable_priority_on_over_except_error != 0 {
        cfg.reliable_priority_on_over_except_error
    } else {
        0
    };
    let wu = p.db.wu(wuid);
    let priority = wu.priority + inc;
    let state = if wu.size_class >= 0 {
        ServerState::Inactive
    } else {
        ServerState::Unsent
    };
    for k in 0..needed {
        let random = match p.cfg.pin.result_random {
            Some(v) => v,
            None => {
                use rand::RngExt;
                // Drawn as before (an i64 below 2³¹), so the stream is unchanged.
                p.rng.random_range(0..(1i64 << 31)) as i32
            }
        };
        let suffix = (max_suffix + 1 + k) as u16;
        let r = ResultRow::new(wuid, suffix, now, priority, random, state);
        p.db.insert_result(ACTOR, r);
    }
}

/// Step 9 (spec backend §2.2; seed variant §5 row 12).
fn next_transition_time(
    p: &Project,
    now: Time,
    wuid: WuId,
    deferred: Option<Time>,
    sw: &super::config::Switches,
) -> Time {
    let wu = p.db.wu(wuid);
    let min_deadline = wu
        .results
        .iter()
        .map(|&rid| p.db.result(rid))
        .filter(|r| r.server_state == ServerState::InProgress)
        .map(|r| r.report_deadline)
        .min();
    if !sw.modern_transition_time {
        // Seed: min over IN_PROGRESS deadlines, then max(tt, now + delay_bound).
        let tt = min_deadline.unwrap_or(INT_MAX);
        let tt = deferred.map_or(tt, |d| tt.min(d));
        return tt.max(now + wu.limits.delay_bound).min(INT_MAX);
    }
    let mut tt = if wu.canonical_resultid != ResultId(0) || wu.error_mask != 0 {
        INT_MAX
    } else {
        now + ((1.5 * wu.limits.delay_bound as f64).floor() as Time).max(864_000)
    };
    if let Some(d) = min_deadline {
        tt = tt.min(d);
    }
    if let Some(d) = deferred {
        tt = tt.min(d);
    }
    if tt < now {
        tt = now + (2 * (now - tt)).clamp(60, 86_400);
    }
    tt.min(INT_MAX)
}
