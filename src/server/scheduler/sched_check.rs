//! Whether a job can go to this host (`sched_check.cpp`, spec backend §2.4.4):
//! homogeneous redundancy, one result per host, memory, disk and deadline.

use super::sched_types::{Reply, RpcState};
use crate::engine::Time;
use crate::server::Project;
use crate::server::app_version::Bav;
use crate::server::resource::ProcType;
use crate::server::types::*;

/// Why a job cannot go to this host (`wu_is_infeasible_fast`).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Infeasible {
    Hr,
    Dup,
    Memory,
    Disk,
    Deadline,
}

/// `wu_is_infeasible_fast` (spec backend §2.4.4), returning the delay bound to use.
pub(super) fn infeasible_fast(
    p: &Project,
    now: Time,
    hostid: HostId,
    rid: ResultId,
    reply: &Reply,
    st: &RpcState,
    bav: &Bav,
) -> Result<i64, Infeasible> {
    let r = p.db.result(rid);
    let wu = p.db.wu(r.workunitid);
    let host = p.db.host(hostid);
    let cfg = &p.cfg.config;
    let hr_type = p.app(wu.appid).cfg.homogeneous_redundancy;
    if p.sw.scheduler_features && hr_type != 0 {
        match st.hr_class(hr_type) {
            None => return Err(Infeasible::Hr),
            Some(c) if wu.hr_class != 0 && wu.hr_class != c => return Err(Infeasible::Hr),
            _ => {}
        }
    }
    if (cfg.one_result_per_host_per_wu || cfg.one_result_per_user_per_wu)
        && reply.jobs.iter().any(|j| j.workunit_id == wu.id)
    {
        return Err(Infeasible::Dup);
    }
    if wu.limits.rsc_memory_bound > host.m_nbytes {
        return Err(Infeasible::Memory);
    }
    if wu.limits.rsc_disk_bound > host.d_free {
        return Err(Infeasible::Disk);
    }
    // Deadline check with the delay bound for this send.
    let db = wu.limits.delay_bound;
    let (optimistic, pessimistic) = if r.server_state == ServerState::InProgress {
        if r.report_deadline < now {
            return Ok(0);
        }
        (r.report_deadline - now, db)
    } else if p.sw.scheduler_features
        && cfg.reliable_on_priority != 0
        && r.priority >= cfg.reliable_on_priority
        && cfg.reliable_reduced_delay_bound > 0.01
    {
        let mut o = (db as f64 * cfg.reliable_reduced_delay_bound) as i64;
        let two = (2.0 * est_dur(p, hostid, bav, wu.rsc_fpops_est)) as i64;
        if two > o && two < db && (two as f64) < 2.0 * db as f64 * cfg.reliable_reduced_delay_bound
        {
            o = two;
        }
        (o, db)
    } else {
        (db, db)
    };
    // The queue of the job's own resource (§2.4.4 deadline check).
    let delay = st.estimated_delay[bav.proc_type.index()];
    if cfg.ignore_delay_bound || delay <= 0.0 {
        return Ok(optimistic);
    }
    let dur = est_dur(p, hostid, bav, wu.rsc_fpops_est);
    for bound in [optimistic, pessimistic] {
        if delay + dur <= bound as f64 {
            return Ok(bound);
        }
    }
    Err(Infeasible::Deadline)
}

/// Estimated run time of a job with version `bav` on this host (§2.4.4 step 4),
/// which the deadline check and the sending both read:
/// `rsc_fpops_est / projected_flops / available_frac`, where `available_frac` is
/// `on_frac × active_frac`, with `gpu_active_frac` in place of `active_frac` for a
/// GPU version (BOINC's `available_frac`), clamped to [0.1, 1].
pub(super) fn est_dur(p: &Project, hostid: HostId, bav: &Bav, rsc_fpops_est: f64) -> f64 {
    let host = p.db.host(hostid);
    let active = if bav.proc_type == ProcType::Cpu {
        host.active_frac
    } else {
        host.gpu_active_frac
    };
    let avail = (host.on_frac * active).clamp(0.1, 1.0);
    rsc_fpops_est / bav.projected_flops / avail
}
