//! The request's top level (`handle_request.cpp`, spec backend §2.4.1): host
//! lookup, blacklist, the daily reset, then the steps the other `sched_*` modules
//! carry out, in BOINC's order.

use super::sched_resend::resend_lost_work;
use super::sched_result::handle_results;
use super::sched_send::{send_work, send_work_setup};
use super::sched_types::{HostInfo, Reply, Request, RpcState};
use super::{ACTOR, BLACKLIST_DELAY, DELAY_MAX};
use crate::engine::Time;
use crate::engine::time::DAY as DAY_SECS;
use crate::server::Project;
use crate::server::db::HavRow;
use crate::server::resource::{N_RSC, ProcType};
use crate::server::types::db_time;
use crate::server::types::*;

/// The request's `<host_info>` and `<time_stats>` update host `hostid`'s row, so
/// that the scheduler's runtime estimates use the client's own figures (spec backend
/// §2.4.4; `handle_request.cpp` copies them before handling the request).
pub(crate) fn copy_host_info(p: &mut Project, hostid: HostId, info: &HostInfo) {
    let h = p.db.host_mut(hostid);
    h.p_ncpus = info.p_ncpus as i32;
    h.p_fpops = info.p_fpops;
    if *h.coprocs != *info.coprocs {
        h.coprocs = info.coprocs[..].into();
    }
    h.on_frac = info.on_frac;
    h.active_frac = info.active_frac;
}

/// `<no_rsc_apps>` (spec client §2.6): the processor types project `p` has no app
/// version for.
pub(crate) fn no_rsc_apps(p: &Project) -> [bool; N_RSC] {
    std::array::from_fn(|k| !p.app_versions.iter().any(|v| v.proc_type.index() == k))
}

/// Handles one RPC (spec backend §2.4.1). `reply` is cleared first.
pub(crate) fn process_request(p: &mut Project, now: Time, req: &Request, reply: &mut Reply) {
    reply.clear();
    if p.db.hosts.get(req.hostid).is_none() {
        reply.refused = true;
        return;
    }
    // Step 3: host identification; a re-attached client reporting no jobs detaches.
    if req.reattached {
        mark_results_over(p, now, req.hostid);
    }
    // Step 4: blacklisted host.
    let host = p.db.host(req.hostid);
    if host.max_results_day == -1 {
        reply.refused = true;
        reply.request_delay = BLACKLIST_DELAY;
        return;
    }
    // Step 5: day boundary with the host's random offset.
    let offset = (host.day_offset * DAY_SECS as f64) as Time;
    let prev = host.rpc_time;
    let new_day =
        prev == 0 || (prev + offset).div_euclid(DAY_SECS) != (now + offset).div_euclid(DAY_SECS);
    let prev_rpc = prev;
    // Step 6: HAV quota initialisation and daily reset.
    let q = p.daily_result_quota();
    let h = p.db.host_mut(req.hostid);
    h.rpc_time = now;
    h.rpc_seqno += 1;
    let mut mjpd_init = Vec::new();
    for hav in &mut h.havs {
        if q != 0 && hav.max_jobs_per_day == 0 {
            mjpd_init.push(hav.app_version_id);
        }
        if new_day {
            hav.n_jobs_today = 0;
        }
    }
    for av in mjpd_init {
        p.db.set_max_jobs_per_day(ACTOR, req.hostid, av, q);
    }

    // Step 7: reported results.
    let (secs, instances) = (req.work.req_secs_by_rsc(), req.work.req_instances_by_rsc());
    let mut st = RpcState::new(secs, instances, req.max_jobs);
    st.estimated_delay[ProcType::Cpu.index()] = req.work.estimated_delay;
    st.resend_lost = p.cfg.config.resend_lost_results && p.sw.scheduler_features;
    handle_results(p, now, req, reply, &mut st);

    // Step 8: send_work_setup.
    send_work_setup(p, req.hostid, &mut st);

    // Step 9: lost results and aborts.
    if let Some(list) = req.other_results() {
        if st.resend_lost {
            resend_lost_work(p, now, req.hostid, list, reply, &mut st);
        }
        if p.cfg.config.send_result_abort {
            result_aborts(p, req.hostid, list, reply);
        }
    }

    // Step 10: new work.
    let wants_work = st.work_needed() && st.max_jobs > 0;
    if wants_work && !st.sent_any_resend {
        let msi = p.cfg.config.min_sendwork_interval;
        if msi > 0 && prev_rpc != 0 && now - prev_rpc < msi {
            reply.request_delay = 1.01 * msi as f64;
        } else {
            send_work(p, now, req.hostid, reply, &mut st);
        }
    }
    if wants_work && reply.jobs.is_empty() {
        reply.no_work = true;
    }

    // Step 11: create HAV rows for first-time app versions, one per (host, app
    // version), counting the new jobs sent with each.
    let h = p.db.host_mut(req.hostid);
    for av in &p.app_versions {
        let sent = reply.jobs.iter().filter(|j| j.app_version_id == av.id);
        if sent.clone().next().is_some() && h.hav(av.id).is_none() {
            h.add_hav(HavRow {
                app_version_id: av.id,
                n_jobs_today: sent.filter(|j| !j.resend).count() as i32,
                ..Default::default()
            });
        }
    }

    // Step 12: request delay.
    let msi = p.cfg.config.min_sendwork_interval as f64;
    if msi > 0.0 {
        reply.request_delay = reply.request_delay.max((1.01 * msi).max(msi + 1.0));
    }
    let nrd = p.cfg.config.next_rpc_delay as f64;
    if nrd > 0.0 {
        reply.request_delay = reply.request_delay.max(nrd);
    }
    reply.request_delay = reply.request_delay.min(DELAY_MAX);
}

/// `mark_results_over` (spec backend §2.4.2): every IN_PROGRESS result of the host
/// becomes OVER/CLIENT_DETACHED (seed: NO_REPLY) with `received_time = now`.
pub(super) fn mark_results_over(p: &mut Project, now: Time, hostid: HostId) {
    let list = p.db.host(hostid).in_progress.clone();
    let outcome = if p.sw.detach_client_detached {
        Outcome::ClientDetached
    } else {
        Outcome::NoReply
    };
    for rid in list {
        p.db.set_over(ACTOR, rid, outcome);
        let r = p.db.result_mut(rid);
        r.received_time = db_time(now);
        let wuid = r.workunitid;
        p.db.set_transition_time(ACTOR, wuid, now);
    }
}

/// `send_result_abort` (spec backend §2.4.6).
pub(super) fn result_aborts(
    p: &mut Project,
    hostid: HostId,
    client_has: &[ResultId],
    reply: &mut Reply,
) {
    for &rid in client_has {
        let Some(r) = p.db.results.get(rid) else {
            reply.aborts.push(rid);
            continue;
        };
        let mine = r.hostid == hostid;
        let in_progress = mine && r.server_state == ServerState::InProgress;
        let no_reply = r.server_state == ServerState::Over && r.outcome == Outcome::NoReply;
        if !(in_progress || no_reply) {
            reply.aborts.push(rid);
            continue;
        }
        let wu = p.db.wu(r.workunitid);
        if wu.error_mask & error_mask::CANCELLED != 0 {
            reply.aborts.push(rid);
        } else if wu.assimilate_state == AssimilateState::Done || no_reply {
            reply.aborts_if_not_started.push(rid);
        }
    }
}
