//! Resending results the client lost (`sched_resend.cpp`, spec backend §2.4.5).

use super::ACTOR;
use super::sched_check::{est_dur, infeasible_fast};
use super::sched_send::{Send, add_result_to_reply};
use super::sched_types::{Message, Reply, RpcState};
use crate::engine::Time;
use crate::server::Project;
use crate::server::app_version::{self, Want};
use crate::server::types::*;

/// `resend_lost_work` (spec backend §2.4.5).
pub(super) fn resend_lost_work(
    p: &mut Project,
    now: Time,
    hostid: HostId,
    client_has: &[ResultId],
    reply: &mut Reply,
    st: &mut RpcState,
) {
    let grace = p.report_grace_period();
    let max = if p.cfg.config.max_wus_to_send == 0 {
        999_999
    } else {
        p.cfg.config.max_wus_to_send as usize
    };
    let lost: Vec<ResultId> =
        p.db.host(hostid)
            .in_progress
            .iter()
            .copied()
            .filter(|rid| !client_has.contains(rid))
            .collect();
    for rid in lost {
        // Stop when `work_needed` turns false (§2.4.5).
        if !st.work_needed() || reply.jobs.len() as u32 >= st.max_jobs {
            break;
        }
        let r = p.db.result(rid);
        let wuid = r.workunitid;
        let (sent, rd) = (Time::from(r.sent_time), r.report_deadline);
        let wu = p.db.wu(wuid);
        // The best version for the host, quotas aside (resends do not count).
        let want = Want {
            appid: wu.appid,
            proc_type: None,
            check_quota: false,
            committed: if p.sw.scheduler_features && p.app(wu.appid).cfg.homogeneous_app_version {
                wu.app_version_id
            } else {
                0
            },
            ncpus: st.ncpus,
        };
        let bav = app_version::get_app_version(p, hostid, want);
        let mut resendable =
            wu.error_mask == 0 && wu.canonical_resultid == ResultId(0) && bav.is_some();
        let mut bound = 0;
        if let Some(bav) = &bav
            && resendable
        {
            match infeasible_fast(p, now, hostid, rid, reply, st, bav) {
                Ok(b) => bound = b,
                Err(_) => resendable = false,
            }
            // `possibly_give_result_new_deadline`: capped at `now + delay_bound`
            // with the bound `wu_is_infeasible_fast` wrote into `wu.delay_bound`.
            let d = (now + (rd - sent) / 2).max(rd).min(now + bound);
            if resendable && est_dur(p, hostid, bav, wu.rsc_fpops_est) > (d - now) as f64 {
                resendable = false;
            }
        }
        if let Some(bav) = bav
            && resendable
        {
            // The new deadline `d` only decided that the job can be resent; it is then
            // sent exactly as a first send, with the workunit's `delay_bound` (spec
            // backend §2.4.5 as corrected on 2026-11-23; see docs/fidelity.md §3.4).
            let delay_bound = p.db.wu(wuid).limits.delay_bound;
            let send = Send {
                rid,
                bav,
                delay_bound,
                resend: true,
            };
            add_result_to_reply(p, now, hostid, send, reply, st);
            reply.messages.push(Message::ResentLost(rid));
            st.sent_any_resend = true;
            if reply.jobs.len() >= max {
                break;
            }
        } else {
            // Time it out at the next T-pass: DB deadline `now − 1 + grace`
            // (`mark_as_sent` adds the grace), WU `tt = min(tt, now − 1 + grace)`
            // (`update_wu_on_send` with `report_deadline + grace`).
            let deadline = now - 1 + grace;
            p.db.set_report_deadline(ACTOR, rid, deadline);
            let tt = Time::from(p.db.wu(wuid).transition_time).min(deadline);
            p.db.set_transition_time(ACTOR, wuid, tt);
            reply.messages.push(Message::DidntResendLost(rid));
        }
    }
}
