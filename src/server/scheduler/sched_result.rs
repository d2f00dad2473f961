//! Reported results (`sched_result.cpp`, spec backend §2.4.3).

use super::ACTOR;
use super::sched_types::{Reply, Request, RpcState};
use crate::engine::Time;
use crate::server::Project;
use crate::server::config::CreditScheme;
use crate::server::credit;
use crate::server::types::db_time;
use crate::server::types::*;

/// `handle_results` (spec backend §2.4.3).
pub(super) fn handle_results(
    p: &mut Project,
    now: Time,
    req: &Request,
    reply: &mut Reply,
    st: &mut RpcState,
) {
    let max = p.cfg.config.report_max as usize;
    let n = if max == 0 {
        req.reported.len()
    } else {
        req.reported.len().min(max)
    };
    let q = p.daily_result_quota();
    let host = p.db.host(req.hostid);
    let (userid, ncpus, p_fpops, p_iops) = (host.userid, host.p_ncpus, host.p_fpops, host.p_iops);
    for rep in &req.reported[..n] {
        reply.acks.push(rep.result_id);
        let Some(r) = p.db.results.get(rep.result_id) else {
            continue; // not in DB (purged, or never existed)
        };
        match (r.server_state, r.outcome) {
            (ServerState::Over, Outcome::Success) => {
                // The client probably missed our last reply.
                st.resend_lost = p.sw.scheduler_features;
                continue;
            }
            (ServerState::Over, Outcome::NoReply | Outcome::ClientDetached) => {}
            (ServerState::Over, _) | (ServerState::Unsent | ServerState::Inactive, _) => continue,
            (ServerState::InProgress, _) => {}
        }
        let detached_exempt =
            !p.sw.detached_reports_rejected && r.outcome == Outcome::ClientDetached;
        if r.received_time != 0 && !detached_exempt {
            continue;
        }
        if r.hostid != req.hostid {
            let owner = p.db.hosts.get(r.hostid).map(|h| h.userid);
            if owner != Some(userid) {
                continue;
            }
        }
        // Accepted.
        let rid = rep.result_id;
        let wuid = r.workunitid;
        let sent = Time::from(r.sent_time);
        // BOINC raises elapsed time to CPU time only for single-threaded versions: a
        // multi-threaded job rightly uses more CPU time than elapsed time.
        let single_threaded = p
            .find_app_version(r.app_version_id)
            .is_none_or(|av| av.avg_ncpus <= 1.0);
        p.db.set_hostid(ACTOR, rid, req.hostid);
        let mut et = rep.elapsed_time;
        let mut cpu = rep.cpu_time;
        if et < 0.0 {
            et = 0.0;
        }
        if et < cpu && single_threaded {
            et = cpu;
        }
        if et == 0.0 && cpu > 0.0 {
            et = cpu;
        }
        let span = (now - sent) as f64;
        if et > span {
            et = span;
        }
        cpu = cpu.min(et * ncpus as f64);
        let r = p.db.result_mut(rid);
        r.received_time = db_time(now);
        r.client_state = rep.client_state;
        r.exit_status = rep.exit_status;
        r.cpu_time = cpu;
        r.elapsed_time = et;
        r.output = rep.output;
        let success = rep.client_state == client_state::FILES_UPLOADED && rep.exit_status == 0;
        // An error has no output, so nothing to be right about.
        r.output_correct = rep.output_correct.filter(|_| success);
        r.output_status = rep.output_status;
        let av = r.app_version_id;
        p.db.set_server_state(ACTOR, rid, ServerState::Over);
        if success {
            p.db.set_outcome(ACTOR, rid, Outcome::Success);
            if p.app_of(wuid).cfg.validator.credit == CreditScheme::Classic {
                p.db.result_mut(rid).claimed_credit =
                    credit::classic_claimed_credit(cpu, p_fpops, p_iops);
            }
            if !p.sw.too_late_state {
                // Seed (§5 row 19): the scheduler sets TOO_LATE itself.
                let c = p.db.wu(wuid).canonical_resultid;
                if c != ResultId(0)
                    && p.db
                        .results
                        .get(c)
                        .is_some_and(|c| c.file_delete_state == FileDeleteState::Done)
                {
                    p.db.set_validate_state(ACTOR, rid, ValidateState::TooLate);
                }
            }
            if p.sw.hav_accounting
                && let Some(hav) = p.db.host(req.hostid).hav(av)
                && hav.max_jobs_per_day < q
            {
                let v = (2 * hav.max_jobs_per_day).min(q);
                p.db.set_max_jobs_per_day(ACTOR, req.hostid, av, v);
            }
        } else {
            p.db.set_outcome(ACTOR, rid, Outcome::ClientError);
            p.db.set_validate_state(ACTOR, rid, ValidateState::Invalid);
            if p.sw.hav_accounting
                && rep.exit_status != exit_status::EXIT_ABORTED_BY_PROJECT
                && let Some(hav) = p.db.host(req.hostid).hav(av)
            {
                let v = (hav.max_jobs_per_day.min(q) - 1).max(1);
                p.db.set_max_jobs_per_day(ACTOR, req.hostid, av, v);
                p.db.set_consecutive_valid(ACTOR, req.hostid, av, 0);
            }
        }
        p.db.set_transition_time(ACTOR, wuid, now);
    }
}
