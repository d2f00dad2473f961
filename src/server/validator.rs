//! Validator (`sched/validator.cpp`, `validate_util2.cpp`; spec backend §2.5) and its
//! credit granting (spec backend §6).
//!
//! One pass handles, in ascending id, every workunit on the `need_validate` list. With
//! no canonical result yet it runs the default `check_set` (majority of
//! `⌊min_quorum/2⌋ + 1` matching outputs); with one it runs `check_pair` on each new
//! or inconclusive success. Outputs are compared by the pluggable [`Comparison`]
//! (bitwise or fuzzy), and `init_result` errors come from the reported
//! [`OutputStatus`].

use super::Project;
use super::config::{Comparison, CreditScheme};
use super::credit::{self, PfcMode};
use super::credit_new::{CreditNew, PfcInput, PfcSettings};
use super::db::{Db, OutputStatus, Prefetch, ResultRow};
use super::job_log::DecidedResult;
use super::step::Step;
use super::types::*;
use crate::engine::Time;
use crate::server::types::INT_MAX;
use smallvec::SmallVec;

const ACTOR: Actor = Actor::Validator;

/// Results of one workunit a validation handles at a time without allocating: a
/// validation runs once per workunit, millions of times in a large run, and each of
/// its lists is at most `max_total_results` long (a handful).
const SET: usize = 8;
/// A list of a workunit's results (viable, good, valid).
type Ids = SmallVec<[ResultId; SET]>;
/// The `(mode, PFC)` of each valid result of a set (spec backend §6.2).
pub(crate) type Pfcs = SmallVec<[(PfcMode, f64); SET]>;

/// Delay of the `DELAYED` transition action (+6 h, spec backend §2.5).
pub(crate) const DELAYED_SECS: Time = 21_600;

/// The validator's local `transition_time` action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TtAction {
    NoChange,
    Immediate,
    Delayed,
    Never,
}

/// What `init_result` says of one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InitResult {
    Ok,
    Transient,
    Permanent,
}

/// `init_result` of one result's output. Once the file deleter has deleted the output
/// (`file_delete_state = DONE`) there is nothing left to read: a permanent error, so
/// the result becomes VALIDATE_ERROR (spec backend §2.5 `init_result`, §2.7). This is
/// what makes the order of file-deleter and validator passes matter (quirk Q2).
fn init_result(r: &ResultRow, now: Time) -> InitResult {
    if r.file_delete_state == FileDeleteState::Done {
        return InitResult::Permanent;
    }
    match r.output_status {
        OutputStatus::Ok => InitResult::Ok,
        OutputStatus::Unreadable => InitResult::Permanent,
        OutputStatus::TransientUntil(t) if now < Time::from(t) => InitResult::Transient,
        OutputStatus::TransientUntil(_) => InitResult::Ok,
    }
}

/// `compare_results`: the project's output comparison.
pub(crate) fn outputs_match(cmp: Comparison, tolerance: f64, a: f64, b: f64) -> bool {
    match cmp {
        Comparison::Bitwise => a.to_bits() == b.to_bits(),
        Comparison::Fuzzy => (a - b).abs() <= tolerance,
    }
}

/// One pass over the `need_validate` list: the results it decides are in the step.
pub fn pass(p: &mut Project, now: Time) -> Step {
    let mut step = Step::default();
    let query = |db: &mut Db, list: &mut Vec<WuId>| list.extend(db.need_validate.iter());
    step.handled = p.walk_workunits(Prefetch::RESULTS_HOSTS_HAVS, query, |p, wuid| {
        handle_wu(p, now, wuid, &mut step.decided);
        true
    });
    step
}

/// Handles one workunit (spec backend §2.5 A and B), appending the results it
/// decides to `decided`.
pub(crate) fn handle_wu(p: &mut Project, now: Time, wuid: WuId, decided: &mut Vec<DecidedResult>) {
    let canonical = p.db.wu(wuid).canonical_resultid;
    let mut action = TtAction::NoChange;
    if canonical != ResultId(0) && p.db.results.get(canonical).is_none() {
        // The canonical result is gone: return without any write (§2.5 A).
        return;
    }
    // credit sees the app version scales of the feeder's 600-s schedule (§6.2).
    p.credit.av_scales_if_due(now);
    let before: SmallVec<[(ResultId, ValidateState); 4]> =
        p.db.wu(wuid)
            .results
            .iter()
            .map(|&r| (r, p.db.result(r).validate_state))
            .collect();
    if canonical != ResultId(0) {
        action = check_against_canonical(p, now, wuid, canonical);
    } else {
        action = check_for_consensus(p, now, wuid, action);
    }
    for (rid, old) in before {
        let r = p.db.result(rid);
        if DecidedResult::decides(old, r.validate_state) {
            decided.push(DecidedResult::new(p, r, now));
        }
    }
    // Step 8: the WU write.
    p.db.set_need_validate(ACTOR, wuid, false);
    let tt = Time::from(p.db.wu(wuid).transition_time);
    if p.sw.validator_tt_actions {
        match action {
            TtAction::NoChange => {}
            TtAction::Immediate => p.db.set_transition_time(ACTOR, wuid, now),
            TtAction::Delayed => {
                p.db.set_transition_time(ACTOR, wuid, tt.min(now + DELAYED_SECS))
            }
            TtAction::Never => p.db.set_transition_time(ACTOR, wuid, INT_MAX),
        }
    } else if action != TtAction::NoChange {
        // Seed: `tt = now` whenever over results were handled (§5 row 16).
        p.db.set_transition_time(ACTOR, wuid, now);
    }
}

/// §2.5 A: the WU has a canonical result; check each new success against it.
fn check_against_canonical(
    p: &mut Project,
    now: Time,
    wuid: WuId,
    canonical: ResultId,
) -> TtAction {
    let mut action = TtAction::NoChange;
    let results = p.db.wu(wuid).results.clone();
    let can = p.db.result(canonical);
    let (can_output, can_init, can_files_gone, can_credit) = (
        can.output,
        init_result(can, now),
        can.file_delete_state == FileDeleteState::Done,
        can.granted_credit,
    );
    let v = &p.app_of(wuid).cfg.validator;
    let (cmp, tol) = (v.comparison, v.tolerance);
    for rid in results {
        let r = p.db.result(rid);
        let eligible = r.server_state == ServerState::Over
            && r.outcome == Outcome::Success
            && (r.validate_state == ValidateState::Init
                || (p.sw.recheck_inconclusive && r.validate_state == ValidateState::Inconclusive));
        if !eligible {
            continue;
        }
        // Seed (§5 row 13): canonical files deleted → INVALID.
        if !p.sw.too_late_state && can_files_gone {
            p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
            is_invalid(p, rid);
            action = TtAction::Immediate;
            continue;
        }
        let verdict = match (init_result(r, now), can_init) {
            // check_pair inits the new result first: its error wins.
            (InitResult::Transient, _) => {
                action = TtAction::Delayed;
                break;
            }
            (InitResult::Permanent, _) => None,
            (_, InitResult::Transient) => {
                action = TtAction::Delayed;
                break;
            }
            (_, InitResult::Permanent) => None,
            _ => Some(outputs_match(cmp, tol, r.output, can_output)),
        };
        action = TtAction::Immediate;
        match verdict {
            Some(true) => {
                p.db.set_validate_state(ACTOR, rid, ValidateState::Valid);
                is_valid(p, now, rid);
                // Statistics only; the credit is the canonical result's.
                let mut modes = Pfcs::new();
                credit_new_pfc(p, rid, &mut modes);
                grant(p, now, rid, can_credit);
            }
            Some(false) => {
                p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
                is_invalid(p, rid);
            }
            None => {
                p.db.set_outcome(ACTOR, rid, Outcome::ValidateError);
                p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
                is_invalid(p, rid);
            }
        }
    }
    action
}

/// §2.5 B: no canonical result yet; run `check_set` over the viable results.
fn check_for_consensus(p: &mut Project, now: Time, wuid: WuId, mut action: TtAction) -> TtAction {
    let wu = p.db.wu(wuid);
    let min_quorum = wu.min_quorum;
    let viable: Ids = wu
        .results
        .iter()
        .copied()
        .filter(|&rid| {
            let r = p.db.result(rid);
            r.server_state == ServerState::Over
                && r.outcome == Outcome::Success
                && (!p.sw.success_excludes_invalid || r.validate_state != ValidateState::Invalid)
        })
        .collect();
    if (viable.len() as i32) < min_quorum {
        return action;
    }
    let (canonical, retry) = check_set(p, now, wuid, &viable, min_quorum);
    if retry {
        action = TtAction::Delayed;
    }
    let credit = if canonical != ResultId(0) {
        set_credit(p, wuid, &viable)
    } else {
        0.0
    };

    // Step 5: write each viable result.
    let mut n_viable = 0;
    for &rid in &viable {
        let r = p.db.result(rid);
        if r.outcome != Outcome::Success || r.validate_state == ValidateState::Invalid {
            action = TtAction::Immediate;
            is_invalid(p, rid);
            continue;
        }
        n_viable += 1;
        match r.validate_state {
            ValidateState::Valid => {
                is_valid(p, now, rid);
                grant(p, now, rid, credit);
            }
            ValidateState::Init if p.sw.inconclusive_state => {
                p.db.set_validate_state(ACTOR, rid, ValidateState::Inconclusive);
            }
            _ => {}
        }
    }

    if canonical != ResultId(0) {
        // Step 6.
        action = TtAction::Never;
        p.db.set_canonical(ACTOR, wuid, canonical, now);
        p.db.wu_mut(wuid).canonical_credit = credit;
        if p.sw.assimilate_ready_unconditional
            || p.db.wu(wuid).assimilate_state == AssimilateState::Init
        {
            p.db.set_wu_assimilate_state(ACTOR, wuid, AssimilateState::Ready, now);
        }
        let results = p.db.wu(wuid).results.clone();
        for rid in results {
            if p.db.result(rid).server_state == ServerState::Unsent {
                p.db.set_over(ACTOR, rid, Outcome::DidntNeed);
            }
        }
        if !p.sw.validator_tt_actions {
            action = TtAction::Immediate;
        }
    } else {
        // Step 7: no consensus.
        let wu = p.db.wu(wuid);
        let (max_success, target, mask) = (
            wu.limits.max_success_results,
            wu.target_nresults,
            wu.error_mask,
        );
        if n_viable > max_success {
            p.db.set_error_mask(ACTOR, wuid, mask | error_mask::TOO_MANY_SUCCESS_RESULTS);
            action = TtAction::Immediate;
        }
        if p.sw.tiebreaker_target_bump && n_viable >= target {
            p.db.set_target_nresults(ACTOR, wuid, n_viable + 1);
            action = TtAction::Immediate;
        }
    }
    action
}

/// The default `check_set` (spec backend §2.5). Returns `(canonicalid, retry)` and
/// writes each decided result's `validate_state` (and VALIDATE_ERROR outcomes).
fn check_set(
    p: &mut Project,
    now: Time,
    wuid: WuId,
    viable: &[ResultId],
    min_quorum: i32,
) -> (ResultId, bool) {
    let min_valid = min_quorum / 2 + 1;
    let mut retry = false;
    let mut good = Ids::new();
    let v = &p.app_of(wuid).cfg.validator;
    let (max_claimed, classic) = (v.max_claimed_credit, v.credit == CreditScheme::Classic);
    let (cmp, tol) = (v.comparison, v.tolerance);
    for &rid in viable {
        let r = p.db.result(rid);
        if classic && max_claimed > 0.0 && r.claimed_credit > max_claimed {
            p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
            continue;
        }
        match init_result(r, now) {
            InitResult::Ok => good.push(rid),
            InitResult::Transient => retry = true,
            InitResult::Permanent => {
                p.db.set_outcome(ACTOR, rid, Outcome::ValidateError);
                p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
            }
        }
    }
    if (good.len() as i32) < min_quorum {
        return (ResultId(0), retry);
    }
    for &i in &good {
        let oi = p.db.result(i).output;
        let count = good
            .iter()
            .filter(|&&j| outputs_match(cmp, tol, oi, p.db.result(j).output))
            .count() as i32;
        if count >= min_valid {
            for &j in &good {
                let v = if outputs_match(cmp, tol, oi, p.db.result(j).output) {
                    ValidateState::Valid
                } else {
                    ValidateState::Invalid
                };
                p.db.set_validate_state(ACTOR, j, v);
            }
            return (i, retry);
        }
    }
    (ResultId(0), retry)
}

/// Credit of a newly validated set (spec backend §6), capped at
/// `max_granted_credit`.
fn set_credit(p: &mut Project, wuid: WuId, viable: &[ResultId]) -> f64 {
    let valid: Ids = viable
        .iter()
        .copied()
        .filter(|&r| p.db.result(r).validate_state == ValidateState::Valid)
        .collect();
    let v = &p.app_of(wuid).cfg.validator;
    let max_granted = v.max_granted_credit;
    let credit = match v.credit {
        CreditScheme::Classic => {
            let claims: SmallVec<[f64; SET]> = valid
                .iter()
                .map(|&r| p.db.result(r).claimed_credit)
                .collect();
            credit::median_mean_credit(&claims)
        }
        CreditScheme::CreditNew => {
            let mut modes = Pfcs::new();
            for &r in &valid {
                credit_new_pfc(p, r, &mut modes);
            }
            CreditNew::assign_credit_set(&modes, anchor(p, wuid))
        }
    };
    credit.min(max_granted)
}

/// credit_new's anchor `E = rsc_fpops_est × (min_avg_pfc or 1)` of the workunit's app.
fn anchor(p: &Project, wuid: WuId) -> f64 {
    let wu = p.db.wu(wuid);
    p.credit.anchor(wu.appid, wu.rsc_fpops_est)
}

/// credit_new `get_pfc` for one VALID result (spec backend §6.2 steps 1–5) through
/// the engine ([`CreditNew::get_pfc`]), with its version's scale and the host scale
/// of its HAV. Pushes `(mode, pfc)`.
fn credit_new_pfc(p: &mut Project, rid: ResultId, out: &mut Pfcs) {
    let r = p.db.result(rid);
    let (hostid, av, wuid) = (r.hostid, r.app_version_id, r.workunitid);
    let wu = p.db.wu(wuid);
    let job = PfcInput {
        app_id: wu.appid,
        app_version_id: av,
        elapsed_time: r.elapsed_time,
        cpu_time: r.cpu_time,
        flops_estimate: r.flops_estimate,
        runtime_outlier: r.runtime_outlier,
        rsc_fpops_est: wu.rsc_fpops_est,
        rsc_fpops_bound: wu.rsc_fpops_bound,
        turnaround: (r.received_time - r.sent_time) as f64,
    };
    let app = p.app(wu.appid);
    let settings = PfcSettings {
        host_scale_check: app.cfg.host_scale_check,
        max_granted_credit: app.cfg.validator.max_granted_credit,
    };
    let Some(hav) = p.db.hosts.get_mut(hostid).and_then(|h| h.hav_mut(av)) else {
        out.push((PfcMode::WuEstimate, anchor(p, wuid)));
        return;
    };
    let pfc = p.credit.get_pfc(&job, hav, &settings);
    p.db.result_mut(rid).runtime_outlier = pfc.runtime_outlier;
    out.push((pfc.mode, pfc.pfc));
}

/// Grants credit to a VALID result and its host (spec backend §6.3).
fn grant(p: &mut Project, now: Time, rid: ResultId, credit: f64) {
    if p.db.result(rid).granted_credit != 0.0 {
        return;
    }
    let v = &p.app_of(p.db.result(rid).workunitid).cfg.validator;
    let credit = if v.grant_claimed_credit {
        p.db.result(rid).claimed_credit
    } else {
        credit
    }
    .min(v.max_granted_credit);
    let r = p.db.result_mut(rid);
    r.granted_credit = credit;
    let (hostid, sent, av, wuid) = (
        r.hostid,
        Time::from(r.sent_time),
        r.app_version_id,
        r.workunitid,
    );
    let app = p.db.wu(wuid).appid;
    p.credit.note_credit(app, av, now, sent, credit);
    if let Some(h) = p.db.hosts.get_mut(hostid) {
        h.total_credit += credit;
        let (avg, t) = credit::update_average(
            now,
            sent,
            credit,
            credit::CREDIT_HALF_LIFE,
            h.expavg_credit,
            // A HOST row gets `expavg_time` = its creation time (§6.3), so the
            // decay formula applies from the first credit on.
            Some(h.expavg_time),
        );
        h.expavg_credit = avg;
        h.expavg_time = t;
    }
}

/// HAV `is_valid`: host turnaround, MJPD + 1, consecutive valid + 1 unless the WU is
/// unreplicated (spec backend §2.5 A, §2.4.7).
fn is_valid(p: &mut Project, now: Time, rid: ResultId) {
    let _ = now;
    let r = p.db.result(rid);
    let (hostid, av, wuid) = (r.hostid, r.app_version_id, r.workunitid);
    let turnaround = (r.received_time - r.sent_time) as f64;
    if let Some(h) = p.db.hosts.get_mut(hostid) {
        h.avg_turnaround = if h.avg_turnaround == 0.0 {
            turnaround
        } else {
            0.7 * h.avg_turnaround + 0.3 * turnaround
        };
    }
    if !p.sw.hav_accounting {
        return;
    }
    let wu = p.db.wu(wuid);
    let unreplicated = wu.target_nresults == 1 && p.app(wu.appid).cfg.target_nresults > 1;
    let Some(hav) = p.db.hosts.get(hostid).and_then(|h| h.hav(av)) else {
        return;
    };
    let (mjpd, cv) = (hav.max_jobs_per_day, hav.consecutive_valid);
    p.db.set_max_jobs_per_day(ACTOR, hostid, av, mjpd + 1);
    if !unreplicated {
        p.db.set_consecutive_valid(ACTOR, hostid, av, cv + 1);
    }
}

/// HAV `is_invalid`: consecutive valid = 0; MJPD − 1 if above the quota.
fn is_invalid(p: &mut Project, rid: ResultId) {
    if !p.sw.hav_accounting {
        return;
    }
    let q = p.daily_result_quota();
    let r = p.db.result(rid);
    let (hostid, av) = (r.hostid, r.app_version_id);
    let Some(hav) = p.db.hosts.get(hostid).and_then(|h| h.hav(av)) else {
        return;
    };
    let mjpd = hav.max_jobs_per_day;
    p.db.set_consecutive_valid(ACTOR, hostid, av, 0);
    if mjpd > q {
        p.db.set_max_jobs_per_day(ACTOR, hostid, av, mjpd - 1);
    }
}
