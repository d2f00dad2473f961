//! Choosing and sending jobs (`sched_send.cpp`, `sched_score.cpp`, spec backend
//! §2.4.4, §2.4.7): the per-RPC setup, the score-ordered scan of the job cache, and
//! adding a result to the reply.

use super::sched_check::{est_dur, infeasible_fast};
use super::sched_types::{HavRpc, Job, Reply, RpcState};
use super::{ACTOR, CONS_VALID_RELIABLE, CONS_VALID_UNREPLICATED};
use crate::engine::Time;
use crate::server::app_version::{self, Bav, Want};
use crate::server::job_cache::Scan;
use crate::server::resource::{N_RSC, ProcType, coproc_of};
use crate::server::types::db_time;
use crate::server::types::*;
use crate::server::{Project, hr};
use crate::server::{db, work_generator};
use rand::RngExt;

/// `send_work_setup`: reliability, trust and HR class for this RPC (§2.4.7).
pub(super) fn send_work_setup(p: &mut Project, hostid: HostId, st: &mut RpcState) {
    let q = p.daily_result_quota();
    let cfg = &p.cfg.config;
    let host = p.db.host(hostid);
    st.ncpus = host.p_ncpus.min(cfg.max_ncpus).max(1);
    let features = p.sw.scheduler_features;
    if features {
        let n = &host.names;
        // Only the HR types the project's apps use: most use none.
        for t in 1..=2 {
            if p.apps.iter().any(|a| a.cfg.homogeneous_redundancy == t) {
                st.hr_classes[t as usize] = hr::hr_class(t, &n.os_name, &n.p_vendor, &n.p_model);
            }
        }
    }
    // Each host app version, in version order: its `reliable` and `trusted` (one
    // trust draw per HAV that qualifies).
    for k in 0..p.app_versions.len() {
        let av = p.app_versions[k].id;
        if let Some(h) = hav_rpc(p, hostid, av, q, features) {
            st.havs.push(h);
        }
    }
}

/// `reliable` and `trusted` of the host's HAV of version `av` (§2.4.7); `None`
/// without a HAV.
pub(super) fn hav_rpc(
    p: &mut Project,
    hostid: HostId,
    av: u32,
    q: i32,
    features: bool,
) -> Option<HavRpc> {
    let cfg = &p.cfg.config;
    let host = p.db.host(hostid);
    let hav = host.hav(av)?;
    let mut reliable = features;
    let tat = cfg.reliable_max_avg_turnaround as f64;
    if tat != 0.0 && hav.turnaround.avg.n > 10 {
        let os = &host.names.os_name;
        let intel_mac = hr::has(os, "darwin") && hr::has(&host.names.p_vendor, "intel");
        let m = if hr::has(os, "windows") || hr::has(os, "linux") || intel_mac {
            1.0
        } else {
            1.8
        };
        if hav.turnaround.avg.avg > tat * m {
            reliable = false;
        }
    }
    if hav.consecutive_valid < CONS_VALID_RELIABLE {
        reliable = false;
    }
    if q != 0 && hav.max_jobs_per_day < q {
        reliable = false;
    }
    let mut trusted = false;
    let cv = hav.consecutive_valid;
    if cv >= CONS_VALID_UNREPLICATED {
        let u = match p.cfg.pin.trust {
            Some(u) => u,
            None => p.rng.random::<f64>(),
        };
        trusted = u > 1.0 / cv as f64;
    }
    Some(HavRpc {
        av,
        reliable,
        trusted,
    })
}

/// The `flops_estimate_error` of version `av`: how much faster the server believes
/// it than it is (1 for the plain CPU version).
pub(super) fn estimate_error(p: &Project, av: u32) -> f64 {
    p.find_app_version(av)
        .map_or(1.0, |v| v.flops_estimate_error)
}

/// A job the project sent to `hostid` before the simulated history began (a client's
/// starting state, `[[host_group.start.job]]`): a new workunit of the project's
/// template whose first result was sent at `now` exactly as a first send
/// ([`add_result_to_reply`], spec backend §2.4.4), with the client deadline
/// `deadline` (the database deadline adds the grace period). Further results the
/// workunit needs are the transitioner's, as for any workunit.
///
/// The workunit is of app `appid`. It goes with the version `get_app_version` picks
/// for the host, quotas aside; `None` (and no workunit) if no version runs on it.
pub(crate) fn sent_before_start(
    p: &mut Project,
    appid: AppId,
    now: Time,
    hostid: HostId,
    deadline: Time,
) -> Option<Job> {
    let mut st = RpcState::new([0.0; N_RSC], [0.0; N_RSC], 0);
    // The host's CPUs cap a multi-threaded version's `avg_ncpus`, as at an RPC.
    let want = Want {
        appid,
        proc_type: None,
        check_quota: false,
        committed: 0,
        ncpus: p.db.host(hostid).p_ncpus.max(1),
    };
    let bav = app_version::get_app_version(p, hostid, want)?;
    let wuid = work_generator::create_work(p, appid, now, ACTOR);
    let r = db::ResultRow::new(wuid, 0, now, 0, 0, ServerState::Unsent);
    let rid = p.db.insert_result(ACTOR, r);
    let mut reply = Reply::default();
    let send = Send {
        rid,
        bav,
        delay_bound: deadline - now,
        resend: false,
    };
    add_result_to_reply(p, now, hostid, send, &mut reply, &mut st);
    Some(reply.jobs.swap_remove(0))
}

/// `send_work` (spec backend §2.4.4): one `send_work_score` pass per processor
/// type the request asks for, in descending type index (GPU types first, the CPU
/// last). A type no version of the host can use is not scanned.
pub(super) fn send_work(
    p: &mut Project,
    now: Time,
    hostid: HostId,
    reply: &mut Reply,
    st: &mut RpcState,
) {
    for &t in ProcType::ALL.iter().rev() {
        if !st.needs(t) {
            continue;
        }
        let host = p.db.host(hostid);
        let usable = p
            .app_versions
            .iter()
            .any(|av| av.proc_type == t && app_version::runs_on(av, host));
        if usable {
            send_work_score(p, now, hostid, t, reply, st);
        }
    }
}

/// `max_jobs_per_rpc` (§2.4.4 step 3): `max_wus_to_send × (effective_ncpus +
/// gpu_multiplier × ngpus)`, 999999 without a limit.
pub(super) fn max_jobs_per_rpc(p: &Project, hostid: HostId, ncpus: i32) -> usize {
    let cfg = &p.cfg.config;
    if cfg.max_wus_to_send == 0 {
        return 999_999;
    }
    let ngpus: i32 =
        p.db.host(hostid)
            .coprocs
            .iter()
            .map(|c| c.count as i32)
            .sum();
    // In 64 bits: a large `max_wus_to_send` must not wrap around (BOINC's `int`s
    // would; a scenario may set any value the schema accepts).
    let units = i64::from(ncpus) + i64::from(cfg.gpu_multiplier) * i64::from(ngpus);
    (i64::from(cfg.max_wus_to_send) * units).clamp(0, i64::MAX) as usize
}

/// `send_work_score` for processor type `t` (spec backend §2.4.4).
///
/// BOINC scores every PRESENT slot from a random start slot, sorts the candidates by
/// score (stable: ties keep the scan order) and tries them in that order. The cache's
/// walk ([`Scan`]) yields the same sequence lazily from its index of live slots, so a
/// request touches only the slots it tries. Stale slots (result no
/// longer UNSENT), which BOINC lists and then skips without a side effect, are left
/// out of the walk; so are the `need_reliable` jobs a host none of whose versions is
/// reliable cannot get, as in BOINC. Each job goes with the version
/// `get_app_version` picks for it among those of type `t`.
pub(super) fn send_work_score(
    p: &mut Project,
    now: Time,
    hostid: HostId,
    t: ProcType,
    reply: &mut Reply,
    st: &mut RpcState,
) {
    let cfg = &p.cfg.config;
    let max_per_rpc = max_jobs_per_rpc(p, hostid, st.ncpus);
    let max_in_progress = if cfg.max_wus_in_progress > 0 {
        (i64::from(cfg.max_wus_in_progress) * i64::from(st.ncpus)).clamp(0, i64::MAX) as usize
    } else {
        usize::MAX
    };
    let (one_per_user, one_per_host) = (
        cfg.one_result_per_user_per_wu,
        cfg.one_result_per_host_per_wu,
    );
    // Step 1: `need_reliable` jobs (priority ≥ `reliable_on_priority`) are dropped
    // for a host none of whose versions is reliable, and per job for a version that
    // is not.
    let need_reliable_from = (p.sw.scheduler_features && cfg.reliable_on_priority != 0)
        .then_some(cfg.reliable_on_priority);
    let any_reliable = st.havs.iter().any(|h| h.reliable);
    let exclude_from = need_reliable_from.filter(|_| !any_reliable);
    let nslots = p.feeder.len();
    if nslots == 0 {
        return;
    }
    let offset = match p.cfg.pin.slot_offset {
        Some(o) => o as usize % nslots,
        None => p.rng.random_range(0..nslots),
    };
    p.feeder.sync(&mut p.db);
    // Step 2: send in score order.
    let mut scan = p.feeder.scan(offset, exclude_from);
    let mut ahead = SendAhead::new(p, scan);
    while let Some((slot, rid)) = p.feeder.next(&mut scan) {
        ahead.step(p);
        if !st.needs(t) || reply.jobs.len() >= max_per_rpc || reply.jobs.len() as u32 >= st.max_jobs
        {
            break;
        }
        if p.db.host(hostid).in_progress.len() >= max_in_progress {
            break;
        }
        if app_version::all_quota_exceeded(p, hostid, t, st.ncpus) {
            break;
        }
        // Re-check that the slot still holds the same UNSENT result (always true in
        // the simulator, where nothing runs between the walk and this check).
        if p.feeder.get(slot) != Some(rid) || p.db.result(rid).server_state != ServerState::Unsent {
            continue;
        }
        let r = p.db.result(rid);
        let wu = p.db.wu(r.workunitid);
        let app = p.app(wu.appid);
        let want = Want {
            appid: wu.appid,
            proc_type: Some(t),
            check_quota: true,
            committed: if p.sw.scheduler_features && app.cfg.homogeneous_app_version {
                wu.app_version_id
            } else {
                0
            },
            ncpus: st.ncpus,
        };
        let Some(bav) = app_version::get_app_version(p, hostid, want) else {
            continue;
        };
        if need_reliable_from.is_some_and(|from| r.priority >= from) && !st.reliable(bav.av) {
            continue;
        }
        let delay_bound = match infeasible_fast(p, now, hostid, rid, reply, st, &bav) {
            Ok(d) => d,
            Err(_) => {
                // Only the pre-2007 infeasible queue counted these (§5 row 4); in
                // HEAD only the HR slow check below bumps the count.
                if p.sw.legacy_couldnt_send {
                    p.feeder.bump_infeasible(&mut p.db, slot);
                }
                continue;
            }
        };
        // Slow checks.
        let wuid = p.db.result(rid).workunitid;
        let wu = p.db.wu(wuid);
        let userid = p.db.host(hostid).userid;
        if one_per_user {
            let taken = wu.results.iter().any(|&o| {
                let r = p.db.result(o);
                r.hostid != HostId(0)
                    && p.db.hosts.get(r.hostid).is_some_and(|h| h.userid == userid)
            });
            if taken {
                continue;
            }
        } else if one_per_host && wu.results.iter().any(|&o| p.db.result(o).hostid == hostid) {
            continue;
        }
        if wu.error_mask != 0 {
            p.feeder.empty(&mut p.db, slot);
            continue;
        }
        let hr_type = p.app(wu.appid).cfg.homogeneous_redundancy;
        if p.sw.scheduler_features && hr_type != 0 {
            let c = st.hr_class(hr_type).unwrap_or(0);
            if wu.hr_class != 0 && wu.hr_class != c {
                p.feeder.bump_infeasible(&mut p.db, slot);
                continue;
            }
        }
        // Success: empty the slot, send.
        p.feeder.empty(&mut p.db, slot);
        let send = Send {
            rid,
            bav,
            delay_bound,
            resend: false,
        };
        add_result_to_reply(p, now, hostid, send, reply, st);
    }
}

/// How many candidates ahead of the send walk [`SendAhead`] loads result rows; their
/// workunit rows are loaded half as far ahead.
pub(super) const SEND_AHEAD: usize = 4;

/// Loads the rows the send walk of a request (spec backend §2.4.4) will read next:
/// the result rows of the next [`SEND_AHEAD`] candidates, and the workunit rows of
/// the nearer half. Every candidate reads both, and with a large job cache each is
/// a cache miss of its own (docs/performance.md, "Measurements behind the code"):
/// started ahead, the misses overlap.
///
/// It walks a copy of the request's [`Scan`], which yields the same candidates
/// because a request changes only the slot it visits (the walk's own argument). A hint only: should the copy go astray, rows are loaded for nothing.
pub(super) struct SendAhead {
    scan: Scan,
    /// The last candidates the copy yielded, oldest at `head`.
    ring: [Option<ResultId>; SEND_AHEAD],
    head: usize,
}

impl SendAhead {
    fn new(p: &Project, scan: Scan) -> Self {
        let mut a = Self {
            scan,
            ring: [None; SEND_AHEAD],
            head: 0,
        };
        for _ in 0..SEND_AHEAD {
            a.push(p);
        }
        a
    }

    /// Takes the copy's next candidate and starts loading its result row.
    fn push(&mut self, p: &Project) {
        let next = p.feeder.next(&mut self.scan).map(|(_, rid)| rid);
        if let Some(rid) = next {
            p.db.results.prefetch(rid);
        }
        self.ring[self.head] = next;
        self.head = (self.head + 1) % SEND_AHEAD;
    }

    /// One step, as the walk takes a candidate: one more result row, and the
    /// workunit row of the candidate half-way ahead (its result row was started
    /// half the distance ago).
    fn step(&mut self, p: &Project) {
        self.push(p);
        let mid = self.ring[(self.head + SEND_AHEAD / 2 - 1) % SEND_AHEAD];
        if let Some(r) = mid.and_then(|rid| p.db.results.get(rid)) {
            p.db.workunits.prefetch(r.workunitid);
        }
    }
}

/// One job to add to a reply: the result, the version it goes with, the delay
/// bound `wu_is_infeasible_fast` chose, and whether it is a resend.
#[derive(Clone, Copy, Debug)]
pub(super) struct Send {
    pub(super) rid: ResultId,
    pub(super) bav: Bav,
    pub(super) delay_bound: i64,
    pub(super) resend: bool,
}

/// `add_result_to_reply` for a new send or a resend (spec backend §2.4.4).
pub(super) fn add_result_to_reply(
    p: &mut Project,
    now: Time,
    hostid: HostId,
    send: Send,
    reply: &mut Reply,
    st: &mut RpcState,
) {
    let Send {
        rid,
        bav,
        delay_bound,
        resend,
    } = send;
    let grace = p.report_grace_period();
    let host = p.db.host(hostid);
    let userid = host.userid;
    let r = p.db.result(rid);
    let wuid = r.workunitid;
    // The deadline told to the client, and the one stored in the DB. A resend is
    // sent exactly as a first send (spec backend §2.4.5, BOINC HEAD `sched_send.cpp`:
    // `report_deadline = sent_time + wu.delay_bound`). Only with
    // `resend_regrace = false` does a resend's DB deadline go without the grace period.
    let client_deadline = now + delay_bound;
    let db_deadline = if resend && !p.sw.resend_regrace {
        client_deadline
    } else {
        client_deadline + grace
    };
    // Step 2: WU update.
    let wu = p.db.wu(wuid);
    let tt = Time::from(wu.transition_time).min(db_deadline);
    let (est, bound, true_fpops) = (wu.rsc_fpops_est, wu.rsc_fpops_bound, wu.true_fpops);
    let appid = wu.appid;
    let (app_target, homogeneous_av, hr_type) = {
        let a = &p.app(appid).cfg;
        (
            a.target_nresults,
            a.homogeneous_app_version,
            a.homogeneous_redundancy,
        )
    };
    p.db.set_transition_time(ACTOR, wuid, tt);
    if p.sw.scheduler_features {
        if homogeneous_av && p.db.wu(wuid).app_version_id == 0 {
            p.db.set_wu_app_version_id(ACTOR, wuid, bav.av);
        }
        if hr_type != 0
            && p.db.wu(wuid).hr_class == 0
            && let Some(c) = st.hr_class(hr_type)
        {
            p.db.set_hr_class(ACTOR, wuid, c);
        }
    }
    // Step 1 and 3: result update.
    p.db.set_hostid(ACTOR, rid, hostid);
    let r = p.db.result_mut(rid);
    r.userid = userid;
    r.sent_time = db_time(now);
    r.flops_estimate = bav.peak_flops;
    r.app_version_id = bav.av;
    p.db.set_server_state(ACTOR, rid, ServerState::InProgress);
    p.db.set_report_deadline(ACTOR, rid, db_deadline);
    // Step 4: bookkeeping. The request of the job's resource goes down by its
    // duration times the instances it uses; the resource's queue grows by the same
    // spread over the resource's instances.
    if !resend && let Some(hav) = p.db.host_mut(hostid).hav_mut(bav.av) {
        hav.n_jobs_today += 1;
    }
    let dur = est_dur(p, hostid, &bav, est);
    let k = bav.proc_type.index();
    let used = bav.instances();
    st.req_secs[k] -= dur * used;
    st.req_instances[k] -= used;
    let ninst = if bav.proc_type == ProcType::Cpu {
        st.ncpus as f64
    } else {
        coproc_of(&p.db.host(hostid).coprocs, bav.proc_type).map_or(1.0, |c| c.count as f64)
    };
    st.estimated_delay[k] += dur * used / ninst;
    if bav.proc_type == ProcType::Cpu {
        p.db.host_mut(hostid).estimated_delay = st.estimated_delay[k];
    }
    reply.jobs.push(Job {
        result_id: rid,
        workunit_id: wuid,
        appid,
        app_version_id: bav.av,
        proc_type: bav.proc_type,
        avg_ncpus: bav.avg_ncpus,
        gpu_usage: bav.gpu_usage,
        rsc_fpops_est: est,
        rsc_fpops_bound: bound,
        flops: bav.projected_flops,
        true_fpops,
        true_flops: bav.peak_flops / estimate_error(p, bav.av),
        report_deadline: client_deadline,
        resend,
    });
    // Step 5: adaptive replication.
    if p.sw.scheduler_features
        && p.db.wu(wuid).target_nresults == 1
        && app_target > 1
        && !st.trusted(bav.av)
    {
        p.db.set_target_nresults(ACTOR, wuid, app_target);
        p.db.set_min_quorum(ACTOR, wuid, app_target);
        p.db.set_transition_time(ACTOR, wuid, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ProjectConfig;
    use crate::server::db::{HostRow, ResultRow};
    use crate::server::invariants::test_rows;
    use proptest::prelude::*;

    /// `send_work` as it was written before the cache had indexes: every occupied
    /// slot scored into a list, sorted, then tried. The reference the indexed walk
    /// is tested against; `slots` stands for the cache.
    fn reference_send_work(
        p: &mut Project,
        slots: &mut [Option<ResultId>],
        now: Time,
        hostid: HostId,
        reply: &mut Reply,
        st: &mut RpcState,
    ) {
        let cfg = p.cfg.config.clone();
        let max_per_rpc = if cfg.max_wus_to_send == 0 {
            999_999
        } else {
            cfg.max_wus_to_send * st.ncpus
        } as usize;
        let nslots = slots.len();
        if nslots == 0 {
            return;
        }
        let offset = match p.cfg.pin.slot_offset {
            Some(o) => o as usize % nslots,
            None => p.rng.random_range(0..nslots),
        };
        // Step 1: score every present slot.
        let mut cands: Vec<(i64, usize, ResultId)> = Vec::with_capacity(nslots);
        for k in 0..nslots {
            let slot = (offset + k) % nslots;
            let Some(rid) = slots[slot] else {
                continue;
            };
            let r = p.db.result(rid);
            let need_reliable = p.sw.scheduler_features
                && cfg.reliable_on_priority != 0
                && r.priority >= cfg.reliable_on_priority;
            if need_reliable && !st.reliable(1) {
                continue;
            }
            let mut score = r.priority as i64;
            if r.infeasible_count > 0 {
                score += 1;
            }
            cands.push((score, k, rid));
        }
        // Stable order: score descending, then scan order. Most projects give every job
        // the same score, and then the scan order already is the answer.
        if cands.windows(2).any(|w| w[0].0 != w[1].0) {
            cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        // Step 2: send in score order.
        let max_in_progress = if cfg.max_wus_in_progress > 0 {
            (i64::from(cfg.max_wus_in_progress) * i64::from(st.ncpus)).clamp(0, i64::MAX) as usize
        } else {
            usize::MAX
        };
        for (_, k, rid) in cands {
            if !st.needs(ProcType::Cpu)
                || reply.jobs.len() >= max_per_rpc
                || reply.jobs.len() as u32 >= st.max_jobs
            {
                break;
            }
            if p.db.host(hostid).in_progress.len() >= max_in_progress {
                break;
            }
            if app_version::all_quota_exceeded(p, hostid, ProcType::Cpu, st.ncpus) {
                break;
            }
            let slot = (offset + k) % nslots;
            if slots[slot] != Some(rid) || p.db.result(rid).server_state != ServerState::Unsent {
                continue;
            }
            let want = Want {
                appid: 1,
                proc_type: Some(ProcType::Cpu),
                check_quota: true,
                committed: 0,
                ncpus: st.ncpus,
            };
            let bav = app_version::get_app_version(p, hostid, want).expect("the CPU version");
            let delay_bound = match infeasible_fast(p, now, hostid, rid, reply, st, &bav) {
                Ok(d) => d,
                Err(_) => {
                    // Only the pre-2007 infeasible queue counted these (§5 row 4); in
                    // HEAD only the HR slow check below bumps the count.
                    if p.sw.legacy_couldnt_send {
                        p.db.result_mut(rid).infeasible_count += 1;
                    }
                    continue;
                }
            };
            // Slow checks.
            let wuid = p.db.result(rid).workunitid;
            let wu = p.db.wu(wuid);
            let userid = p.db.host(hostid).userid;
            if cfg.one_result_per_user_per_wu {
                let taken = wu.results.iter().any(|&o| {
                    let r = p.db.result(o);
                    r.hostid != HostId(0)
                        && p.db.hosts.get(r.hostid).is_some_and(|h| h.userid == userid)
                });
                if taken {
                    continue;
                }
            } else if cfg.one_result_per_host_per_wu
                && wu.results.iter().any(|&o| p.db.result(o).hostid == hostid)
            {
                continue;
            }
            if wu.error_mask != 0 {
                slots[slot] = None;
                p.db.result_mut(rid).in_cache = false;
                continue;
            }
            let hr_type = p.apps[0].cfg.homogeneous_redundancy;
            if p.sw.scheduler_features && hr_type != 0 {
                let c = st.hr_class(hr_type).unwrap_or(0);
                if wu.hr_class != 0 && wu.hr_class != c {
                    p.db.result_mut(rid).infeasible_count += 1;
                    continue;
                }
            }
            // Success: empty the slot, send.
            slots[slot] = None;
            p.db.result_mut(rid).in_cache = false;
            let send = Send {
                rid,
                bav,
                delay_bound,
                resend: false,
            };
            add_result_to_reply(p, now, hostid, send, reply, st);
        }
    }

    /// A generated cache slot: empty, or a result with its priority, whether its
    /// `infeasible_count` is positive, its WU's `hr_class` (0, Linux/Intel, Windows),
    /// whether the WU has an error, is too big for the host, shares the previous
    /// slot's WU, has another result on this host, and whether the result went stale.
    type SlotSpec = Option<(i32, bool, u8, bool, bool, bool, bool, bool)>;

    /// A generated configuration and request: `reliable_on_priority`,
    /// `reliable_reduced_delay_bound`, one result per host / per user, `max_wus_to_send`,
    /// `max_wus_in_progress`, HR type, legacy mode; and the RPC's reliability, HR
    /// class, work request, job cap and estimated delay.
    type Setup = (
        (i32, f64, bool, bool, i32, i32, i32, bool),
        (bool, bool, f64, u32, f64),
    );

    fn slot_spec() -> impl Strategy<Value = SlotSpec> {
        prop::option::weighted(
            0.7,
            (
                0..4i32,
                any::<bool>(),
                0..3u8,
                prop::bool::weighted(0.1),
                prop::bool::weighted(0.1),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.1),
                prop::bool::weighted(0.15),
            ),
        )
    }

    fn setup() -> impl Strategy<Value = Setup> {
        (
            (
                prop_oneof![Just(0), Just(2)],
                prop_oneof![Just(0.0), Just(0.5)],
                any::<bool>(),
                any::<bool>(),
                prop_oneof![Just(0), Just(1), Just(3)],
                prop_oneof![Just(0), Just(4)],
                prop_oneof![Just(0), Just(2)],
                any::<bool>(),
            ),
            (
                any::<bool>(),
                any::<bool>(),
                prop_oneof![Just(1e3), Just(2e4), Just(1e7)],
                prop_oneof![Just(1u32), Just(4), Just(u32::MAX)],
                prop_oneof![Just(0.0), Just(500.0)],
            ),
        )
    }

    /// A project with one Linux/Intel host and the cache `specs`; `indexed` fills the
    /// job cache, otherwise the slots are returned plain for the reference.
    fn build(specs: &[SlotSpec], s: &Setup, indexed: bool) -> (Project, Vec<Option<ResultId>>) {
        let mut cfg = ProjectConfig::default();
        cfg.config.reliable_on_priority = s.0.0;
        cfg.config.reliable_reduced_delay_bound = s.0.1;
        cfg.config.one_result_per_host_per_wu = s.0.2;
        cfg.config.one_result_per_user_per_wu = s.0.3;
        cfg.config.max_wus_to_send = s.0.4;
        cfg.config.max_wus_in_progress = s.0.5;
        cfg.config.shmem_work_items = specs.len() as u32;
        cfg.apps[0].homogeneous_redundancy = s.0.6;
        let mut p = Project::new(0, "main", cfg, 7, true);
        p.sw.legacy_couldnt_send = s.0.7;
        p.sw.scheduler_features = true;
        let host = p.db.hosts.next_id();
        p.db.hosts.insert(HostRow {
            id: host,
            userid: 1,
            p_ncpus: 1,
            p_fpops: 1e9,
            m_nbytes: 1e9,
            d_free: 1e12,
            on_frac: 1.0,
            active_frac: 1.0,
            names: db::HostNames::shared("Linux", "GenuineIntel", ""),
            ..Default::default()
        });
        let mut slots = vec![None; specs.len()];
        let mut wuid = WuId(0);
        for (slot, spec) in specs.iter().enumerate() {
            let Some((prio, infeasible, hr, error, big, same_wu, on_host, stale)) = *spec else {
                continue;
            };
            if !same_wu || wuid == WuId(0) {
                let mut wu = test_rows::workunit();
                wu.rsc_fpops_est = 1e12;
                wu.hr_class = [0, 258, 386][hr as usize];
                wu.error_mask = error as i32;
                std::sync::Arc::make_mut(&mut wu.limits).rsc_memory_bound =
                    if big { 2e9 } else { 1e6 };
                wuid = p.db.insert_workunit(Actor::WorkGenerator, wu);
            }
            if on_host {
                let other =
                    p.db.insert_result(Actor::Transitioner, test_rows::result(WuId(wuid.0), 9));
                p.db.set_hostid(Actor::Scheduler, other, host);
                p.db.set_server_state(Actor::Scheduler, other, ServerState::InProgress);
            }
            let mut r = ResultRow::new(WuId(wuid.0), slot as u16, 0, prio, 0, ServerState::Unsent);
            r.infeasible_count = infeasible as u32;
            let rid = p.db.insert_result(Actor::Transitioner, r);
            if indexed {
                p.feeder.fill(&mut p.db, slot, rid);
            } else {
                slots[slot] = Some(rid);
                p.db.result_mut(rid).in_cache = true;
            }
            if stale {
                p.db.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
            }
        }
        p.db.audit.clear();
        (p, slots)
    }

    fn rpc_state(s: &Setup) -> RpcState {
        let mut st = RpcState::new([s.1.2, 0.0, 0.0, 0.0], [0.0; N_RSC], s.1.3);
        st.havs.push(HavRpc {
            av: 1,
            reliable: s.1.0,
            trusted: false,
        });
        st.hr_classes[1] = s.1.1.then_some(258);
        st.hr_classes[2] = s.1.1.then_some(258);
        st.estimated_delay[0] = s.1.4;
        st
    }

    proptest! {
        /// For random caches (scores, stale slots, errored, oversized and duplicate
        /// workunits, HR classes) and random configurations and requests, the indexed
        /// `send_work` sends the same jobs, empties the same slots, bumps the same
        /// `infeasible_count`s, writes the same audit trail and draws the same random
        /// numbers as BOINC's full scan.
        #[test]
        fn send_work_equals_reference_scan(
            specs in prop::collection::vec(slot_spec(), 1..60),
            s in setup(),
        ) {
            let host = 1;
            let (mut a, _) = build(&specs, &s, true);
            let (mut b, mut slots) = build(&specs, &s, false);
            let (mut ra, mut rb) = (Reply::default(), Reply::default());
            let (mut sa, mut sb) = (rpc_state(&s), rpc_state(&s));
            send_work(&mut a, 100, HostId(host), &mut ra, &mut sa);
            reference_send_work(&mut b, &mut slots, 100, HostId(host), &mut rb, &mut sb);
            prop_assert_eq!(&ra.jobs, &rb.jobs);
            prop_assert_eq!(a.feeder.slots(), &slots[..]);
            prop_assert_eq!(&a.db.audit, &b.db.audit);
            for id in 1..b.db.results.next_id().0 {
                let (x, y) = (a.db.result(ResultId(id)), b.db.result(ResultId(id)));
                prop_assert_eq!(
                    (x.server_state, x.in_cache, x.infeasible_count, x.hostid),
                    (y.server_state, y.in_cache, y.infeasible_count, y.hostid)
                );
            }
            prop_assert_eq!(a.rng.random::<u64>(), b.rng.random::<u64>());
            prop_assert_eq!(sa.req_secs, sb.req_secs);
            a.feeder.sync(&mut a.db);
            a.feeder.check_index(&a.db);
        }

        /// The send walk's lookahead names, at each step, the candidate the walk
        /// visits next and the ones after it, while the walk sends (empties), bumps
        /// or passes over each slot it visits, as a request does.
        #[test]
        fn send_ahead_names_the_walks_next_candidates(
            specs in prop::collection::vec(slot_spec(), 1..60),
            s in setup(),
            offset in 0usize..60,
            actions in prop::collection::vec(0..3u8, 1..20),
        ) {
            let (mut p, _) = build(&specs, &s, true);
            p.feeder.sync(&mut p.db);
            let mut scan = p.feeder.scan(offset % specs.len(), None);
            let mut ahead = SendAhead::new(&p, scan);
            let mut visited = Vec::new();
            let mut named = Vec::new();
            while let Some((slot, rid)) = p.feeder.next(&mut scan) {
                visited.push(rid);
                named.push(ahead.ring[ahead.head]);
                ahead.step(&p);
                match actions[visited.len() % actions.len()] {
                    0 => p.feeder.empty(&mut p.db, slot),
                    1 => p.feeder.bump_infeasible(&mut p.db, slot),
                    _ => {}
                }
            }
            prop_assert_eq!(named, visited.iter().map(|&r| Some(r)).collect::<Vec<_>>());
            // Past the end it names nothing.
            prop_assert!(ahead.ring.iter().all(Option::is_none));
        }
    }
}
