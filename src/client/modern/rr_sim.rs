//! Round-robin simulation of the job queue (`client/rr_sim.cpp`, `RR_SIM::simulate`;
//! spec client §2.5), one simulation per processor type: the CPUs with the CPU jobs,
//! and each GPU type the host has with its jobs. A job occupies its instances
//! (`avg_ncpus` CPUs, or `coproc_usage` GPU instances) while active; the resource is
//! saturated when the active jobs' instances reach the resource's. Upstream runs the
//! resources in one simulation, where a project's picks on one resource lower its
//! priority on the others; here each resource's picks start from the projects' REC.
//!
//! Upstream rebuilds the active set from scratch at every step: it resets each
//! project's `rec_temp` to `rec`, then repeatedly activates the next pending (FIFO)
//! job of the highest-priority project, bumping that project's `rec_temp` by
//! `adjust_rec_sched`, until the CPUs are saturated. Because the per-pick priority of
//! a project depends only on its `rec` and on which of its jobs were picked (the
//! first k in FIFO order, each raising `rec_temp` by its share of the host's peak
//! FLOPS), this is the same as taking the `ncpus` best of all (project, k-th job)
//! slots, and from
//! one step to the next the allocation only changes where a job finished:
//! a project that still has pending jobs keeps its slot (its next FIFO job starts);
//! otherwise the freed slot goes to the best project with pending jobs. So a job,
//! once active, stays active until it finishes, and the simulation here keeps the
//! active set incrementally: O(jobs × steps), no allocation on ordinary hosts.
//!
//! The REC that upstream advances with the simulated work (`update_average` on
//! `rec_temp` at every step) is not modelled: the next pick resets `rec_temp` to `rec`
//! anyway, so it never influences which jobs run; it only leaves stale priorities for
//! the callers, which recompute them (`project_priority_init`).
//!
//! *Upstream quirk* (`rrsim_pointer_heap_order`): the project "heap" is built with
//! `std::make_heap` on `vector<PROJECT*>` without a comparator, so it is ordered by
//! pointer value, not by `sched_priority`. `make_heap` without a comparator is a
//! max-heap under `operator<`, so its top is the *highest* address; projects are
//! allocated in the order of the state file, so that is the *last* project in list
//! order, and the top project keeps the CPUs until its pending jobs run out. With the
//! switch on we reproduce that with reverse list order (the last project with pending
//! jobs wins); off (default) we use the intended order: decreasing priority, ties to
//! the earlier project.

use super::buf::SmallBuf;
use super::rec::{PrioCtx, job_peak_units, total_peak_units};
use crate::client::config::{ClientConfig, Policy};
use crate::client::host::gpu_relative_speeds;
use crate::client::host::{ClientHost, ClientJob, ProjectState, TaskState, TimeStats};
use crate::server::resource::{N_RSC, ProcType, coproc_of};

const NONE: u32 = u32::MAX;
/// Extra term of `computation_deadline` (`DEADLINE_CUSHION`, §2.1).
pub(crate) const DEADLINE_CUSHION: f64 = 0.0;

/// Per-resource outputs of the simulation (spec client §2.5 step 5). The
/// per-project (`deadlines_missed`, `nused_total`, `n_runnable_jobs`) and per-job
/// (`rr_sim_misses_deadline`, `last_deadline_miss_time`) outputs are written to the
/// host.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RrOut {
    /// Idle instance-seconds in `[now, now + work_buf_total]`.
    pub shortfall: f64,
    /// How long all instances stay busy, seconds from now.
    pub saturated_time: f64,
    /// Instances idle now.
    pub nidle_now: f64,
    /// Least-busy instance's load from deadline-missing jobs (`estimated_delay`).
    pub busy_time: f64,
    pub deadline_missed_instances: f64,
    /// `overall_cpu_frac` the simulation ran with.
    pub overall_frac: f64,
}

/// `overall_cpu_frac = clamp(on_frac·active_frac, 0.01, 1)` (spec client §3.5).
pub(crate) fn overall_cpu_frac(ts: &TimeStats) -> f64 {
    (ts.on_frac * ts.active_frac).clamp(0.01, 1.0)
}

/// A GPU's `overall_frac`: `clamp(on_frac·gpu_active_frac, 0.01, 1)` (§2.5 step 2),
/// where the GPU computes `gpu_active_frac` of the time the host computes.
pub(crate) fn overall_gpu_frac(ts: &TimeStats, gpu_active_frac: f64) -> f64 {
    (ts.on_frac * ts.active_frac * gpu_active_frac).clamp(0.01, 1.0)
}

/// Instances of its resource a job occupies in the simulation.
fn instances(host: &ClientHost, j: &ClientJob) -> f64 {
    let u = host.usage(j);
    if u.uses_gpu() {
        u.gpu_usage
    } else {
        u.avg_ncpus
    }
}

/// `BUSY_TIME_ESTIMATOR::update` (`client/work_fetch.h`, spec client §2.5 step 5):
/// a job projected to miss its deadline keeps `(int)nused` instances busy for `dur`
/// more seconds, the least-busy instance (the first of equals) and the ones after it,
/// wrapping around; a job that uses less than one instance adds nothing.
fn busy_time_update(busy: &mut [f64], dur: f64, nused: f64) {
    let n = busy.len();
    if n == 0 || nused < 1.0 {
        return;
    }
    let mut ib = 0;
    for i in 1..n {
        if busy[i] < busy[ib] {
            ib = i;
        }
    }
    for i in 0..nused as usize {
        busy[(ib + i) % n] += dur;
    }
}

/// The simulation runs "at most once per distinct now" (§2.5). Our RPCs take no time,
/// so jobs can change within one `now`: callers invalidate the cache after an RPC or
/// a preemption that rolled a task back.
#[derive(Default)]
pub(crate) struct RrCache {
    out: [Option<RrOut>; N_RSC],
}

impl RrCache {
    /// The CPU simulation.
    pub fn get(&mut self, host: &mut ClientHost, now: f64, cfg: &ClientConfig) -> RrOut {
        self.get_rsc(host, now, cfg, ProcType::Cpu)
    }
    /// The simulation of processor type `rsc` (the CPU's first: it also counts every
    /// project's runnable jobs).
    pub(crate) fn get_rsc(
        &mut self,
        host: &mut ClientHost,
        now: f64,
        cfg: &ClientConfig,
        rsc: ProcType,
    ) -> RrOut {
        if rsc != ProcType::Cpu && self.out[0].is_none() {
            self.get(host, now, cfg);
        }
        match self.out[rsc.index()] {
            Some(o) => o,
            None => {
                let o = rr_simulation(host, now, cfg, rsc);
                self.out[rsc.index()] = Some(o);
                o
            }
        }
    }
    pub(crate) fn invalidate(&mut self) {
        self.out = [None; N_RSC];
    }
}

/// The project whose next pending job (`next[q]`, `NONE`: none) a pick step of the
/// simulation activates: the highest `sched_priority` of `rec_temp = rec +
/// act_units[q]·inc`, ties to the earlier project; with `pointer_order`, upstream's
/// pointer-ordered heap (see the module's doc).
///
/// The first candidate wins unless a later one has a strictly higher priority, so a
/// lone candidate needs no priority at all: the first one's is computed only when a
/// second one turns up. Same pick as computing every candidate's priority (the test
/// `lazy_pick_is_the_eager_pick` compares them), and on the usual host (one project,
/// or one with work left) no divisions per step.
#[inline]
fn pick_project(
    projects: &[ProjectState],
    next: &[u32],
    act_units: &[f64],
    ctx: &PrioCtx,
    inc: f64,
    pointer_order: bool,
) -> Option<usize> {
    if pointer_order {
        // The heap's top: the highest address, i.e. the last project allocated.
        return (0..projects.len()).rev().find(|&q| next[q] != NONE);
    }
    let prio_of = |q: usize| {
        let p = &projects[q];
        ctx.priority(p.modern.rec + act_units[q] * inc, p.resource_share)
    };
    let mut best: Option<(usize, Option<f64>)> = None;
    for (q, &nq) in next[..projects.len()].iter().enumerate() {
        if nq == NONE {
            continue;
        }
        match &mut best {
            None => best = Some((q, None)),
            Some((b, bp)) => {
                let bprio = *bp.get_or_insert_with(|| prio_of(*b));
                let prio = prio_of(q);
                if prio > bprio {
                    best = Some((q, Some(prio)));
                }
            }
        }
    }
    best.map(|(q, _)| q)
}

/// `RR_SIM::simulate` (spec client §2.5) for processor type `rsc`. A job's
/// `estimated_flops_remaining` is the client's estimate
/// ([`ClientHost::est_flops_left`], §3.6), never its true size: the simulation
/// predicts with what the client knows. The per-project outputs
/// (`deadlines_missed`, `nused_total`) are the CPU's; `n_runnable_jobs` counts every
/// resource's jobs and is written by the CPU simulation.
pub(crate) fn rr_simulation(
    host: &mut ClientHost,
    now: f64,
    cfg: &ClientConfig,
    rsc: ProcType,
) -> RrOut {
    let cpu = rsc == ProcType::Cpu;
    let n = if cpu {
        host.usable_cpus(cfg) as usize
    } else {
        coproc_of(&host.coprocs, rsc).map_or(0, |c| c.count as usize)
    };
    let nf = n as f64;
    let np = host.projects.len();
    let frac = if cpu {
        overall_cpu_frac(&host.time_stats)
    } else {
        overall_gpu_frac(&host.time_stats, cfg.gpu_active_frac)
    };
    // Estimates are FLOPs at `p_fpops` ("estimated seconds × p_fpops") whatever the
    // resource, so every resource drains them at `p_fpops`.
    let mut rate = host.p_fpops * frac;
    if rate == 0.0 {
        rate = 1e6; // upstream's "just in case"
    }

    // rr_init + init_pending_lists.
    if cpu {
        for p in &mut host.projects {
            p.modern.deadlines_missed = 0;
            p.modern.nused_total = 0.0;
            p.modern.n_runnable_jobs = 0;
        }
    }
    // The per-project buffers are used through plain slices, taken once: each
    // index into a `SmallBuf` first asks whether it spilled, and the steps below
    // index them several times per step.
    let mut next_buf: SmallBuf<u32, 16> = SmallBuf::filled(np, NONE);
    let next = &mut *next_buf;
    // Per job of the type, the project's next unfinished job of the type after it
    // (`NONE`: none): a project's pending jobs in FIFO order, linked in this one walk
    // instead of searched for at every activation (with several projects each search
    // walked past the others' jobs).
    let mut link_buf: SmallBuf<u32, 128> = SmallBuf::filled(host.jobs.len(), NONE);
    let link = &mut *link_buf;
    let mut last_buf: SmallBuf<u32, 16> = SmallBuf::filled(np, NONE);
    let last = &mut *last_buf;
    for (k, j) in host.jobs.iter_mut().enumerate() {
        let u = &host.app_versions[j.app_version as usize];
        if u.proc_type != rsc {
            if cpu && j.unfinished() {
                host.projects[j.project as usize].modern.n_runnable_jobs += 1;
            }
            continue;
        }
        j.set_rr_sim_misses_deadline(false);
        if !j.unfinished() {
            continue;
        }
        let q = j.project as usize;
        let p = &mut host.projects[q];
        if cpu {
            p.modern.n_runnable_jobs += 1;
            p.modern.nused_total += u.avg_ncpus;
        }
        if next[q] == NONE {
            next[q] = k as u32;
        } else {
            link[last[q] as usize] = k as u32;
        }
        last[q] = k as u32;
    }
    let link = &*link;
    // project_priority_init(false): participants have a runnable job. Each pick
    // raises its project's `rec_temp` by the job's share of the host's peak FLOPS
    // (`adjust_rec_sched`, §2.4 step 4), whatever resource is simulated.
    let peak_units = total_peak_units(host, host.usable_cpus(cfg) as f64);
    let ctx = PrioCtx::new(&host.projects, |p| p.modern.n_runnable_jobs > 0, peak_units);
    let inc = ctx.rec_increment();
    let rel = gpu_relative_speeds(&host.coprocs, host.p_fpops);
    let pointer_order = cfg.rrsim_pointer_heap_order;
    // Per project, the peak units of its active jobs: `rec_temp = rec + units · inc`.
    let mut act_units_buf: SmallBuf<f64, 16> = SmallBuf::filled(np, 0.0);
    let act_units = &mut *act_units_buf;
    // Active jobs in activation order: their indices, and apart from them their
    // `rrsim_flops_left`, which every step searches and decreases: a plain array of
    // numbers, which those two loops read without striding over the indices.
    let mut active: SmallBuf<u32, 64> = SmallBuf::new();
    let mut left: SmallBuf<f64, 64> = SmallBuf::new();
    let mut busy: SmallBuf<f64, 64> = SmallBuf::filled(n, 0.0);

    let pick = |host: &ClientHost, next: &[u32], act_units: &[f64]| {
        pick_project(&host.projects, next, act_units, &ctx, inc, pointer_order)
    };
    // Instances the active jobs occupy (`sim_nused`).
    let mut nused = 0.0;
    let activate = |host: &ClientHost,
                    q: usize,
                    next: &mut [u32],
                    act_units: &mut [f64],
                    active: &mut SmallBuf<u32, 64>,
                    left: &mut SmallBuf<f64, 64>,
                    nused: &mut f64| {
        let k = next[q] as usize;
        active.push(k as u32);
        left.push(host.est_flops_left(&host.jobs[k], Policy::ModernRec));
        *nused += instances(host, &host.jobs[k]);
        act_units[q] += job_peak_units(host.usage(&host.jobs[k]), &rel);
        next[q] = link[k];
    };

    while nused < nf {
        let Some(q) = pick(host, next, act_units) else {
            break;
        };
        activate(host, q, next, act_units, &mut active, &mut left, &mut nused);
    }
    let nidle_now = (nf - nused).max(0.0);

    let buf_end = now + host.work_buf_total(cfg);
    let comp_cushion = host.work_buf_min(cfg) + DEADLINE_CUSHION;
    let mut sim_now = now;
    let (mut shortfall, mut saturated_time, mut dmi) = (0.0, 0.0, 0.0);
    while !active.is_empty() {
        // The job that finishes first (first minimum in list order).
        let mut bi = 0;
        let mut bleft = left[0];
        for (i, &l) in left.iter().enumerate() {
            if l < bleft {
                (bi, bleft) = (i, l);
            }
        }
        let bk = active[bi];
        let mut delta_t = bleft / rate;
        let finishes = delta_t <= 3600.0;
        if !finishes {
            delta_t = if delta_t > 36_000.0 {
                delta_t / 10.0
            } else {
                3600.0
            };
        } else {
            let computation_deadline = host.jobs[bk as usize].report_deadline as f64 - comp_cushion;
            if sim_now + delta_t > computation_deadline {
                // Looked up only for a miss: the estimate costs divisions (§3.6)
                // and most steps meet their deadline.
                let est_left = host.est_flops_left(&host.jobs[bk as usize], Policy::ModernRec);
                let inst = instances(host, &host.jobs[bk as usize]);
                let j = &mut host.jobs[bk as usize];
                // handle_missed_deadline (no RAM model: every miss counts).
                if !matches!(j.state, TaskState::Unstarted | TaskState::Downloading) {
                    j.last_deadline_miss_time = now;
                }
                j.set_rr_sim_misses_deadline(true);
                dmi += inst;
                let dur = est_left / host.p_fpops / frac;
                if cpu {
                    host.projects[j.project as usize].modern.deadlines_missed += 1;
                }
                busy_time_update(&mut busy, dur, inst);
            }
        }
        let drained = rate * delta_t;
        for l in left.iter_mut() {
            *l = (*l - drained).max(0.0);
        }
        // update_stats with this step's sim_nused.
        let idle = nf - nused;
        if idle > 1e-6 && sim_now < buf_end {
            shortfall += idle * delta_t.min(buf_end - sim_now);
        }
        if idle < 1e-6 {
            saturated_time = sim_now + delta_t - now;
        }
        sim_now += delta_t;
        if finishes {
            active.remove(bi);
            left.remove(bi);
            let q = host.jobs[bk as usize].project as usize;
            nused -= instances(host, &host.jobs[bk as usize]);
            act_units[q] -= job_peak_units(host.usage(&host.jobs[bk as usize]), &rel);
            // Refill the freed instances: the project's next job first, then the
            // best projects with pending jobs, while the resource is not saturated
            // (`pick_jobs_to_run` stops at `sim_nused >= ninstances`). A job may
            // overcommit the resource only as the last one picked: a multi-threaded
            // job freed by a one-CPU job's end does not start on the one CPU freed,
            // or the simulation would drain the queue faster than the CPUs can.
            if next[q] != NONE && nused < nf {
                activate(host, q, next, act_units, &mut active, &mut left, &mut nused);
            }
            while nused < nf {
                let Some(q2) = pick(host, next, act_units) else {
                    break;
                };
                activate(
                    host,
                    q2,
                    next,
                    act_units,
                    &mut active,
                    &mut left,
                    &mut nused,
                );
            }
        }
    }
    // Tail: every instance idle until the end of the buffer window.
    if sim_now < buf_end {
        shortfall += nf * (buf_end - sim_now);
    }
    let busy_time = busy.iter().copied().fold(f64::INFINITY, f64::min);
    RrOut {
        shortfall,
        saturated_time,
        nidle_now,
        busy_time: if busy_time.is_finite() {
            busy_time
        } else {
            0.0
        },
        deadline_missed_instances: dmi,
        overall_frac: frac,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::modern::test_util::*;

    /// `pick_project` computes priorities lazily; on random projects (ties,
    /// backup projects, zero REC, lone candidates) it picks what computing every
    /// candidate's priority first picks.
    #[test]
    fn lazy_pick_is_the_eager_pick() {
        use crate::engine::rng::SimRng;
        use rand::{RngExt, SeedableRng};
        let eager = |projects: &[ProjectState], next: &[u32], act: &[f64], ctx: &PrioCtx| {
            let inc = ctx.rec_increment();
            let mut best: Option<(usize, f64)> = None;
            for (q, p) in projects.iter().enumerate() {
                if next[q] == NONE {
                    continue;
                }
                let prio = ctx.priority(p.modern.rec + act[q] * inc, p.resource_share);
                if best.is_none_or(|(_, b)| prio > b) {
                    best = Some((q, prio));
                }
            }
            best.map(|(q, _)| q)
        };
        let mut rng = SimRng::seed_from_u64(7);
        let (mut lone, mut contested) = (0, 0);
        for _ in 0..20_000 {
            let np = rng.random_range(1..6usize);
            let shares: Vec<f64> = (0..np)
                .map(|_| [0.0, 50.0, 100.0][rng.random_range(0..3usize)])
                .collect();
            let (mut h, _) = host_and_ctx(1, &shares, |_| {});
            for p in &mut h.projects {
                p.modern.rec = [0.0, 1.0, 2.5][rng.random_range(0..3usize)];
            }
            let next: Vec<u32> = (0..np)
                .map(|q| if rng.random_bool(0.6) { q as u32 } else { NONE })
                .collect();
            let act: Vec<f64> = (0..np).map(|_| rng.random_range(0..3u32) as f64).collect();
            let ctx = PrioCtx::new(
                &h.projects,
                |_| true,
                [1.0, 4.0][rng.random_range(0..2usize)],
            );
            let lazy = pick_project(&h.projects, &next, &act, &ctx, ctx.rec_increment(), false);
            assert_eq!(
                lazy,
                eager(&h.projects, &next, &act, &ctx),
                "{next:?} {act:?}"
            );
            match next.iter().filter(|&&x| x != NONE).count() {
                1 => lone += 1,
                n if n > 1 => contested += 1,
                _ => {}
            }
        }
        assert!(lone > 1000 && contested > 1000, "{lone} {contested}");
    }

    #[test]
    fn empty_host_shortfall_is_the_whole_window() {
        let (mut h, g) = host_and_ctx(2, &[100.0], |_| {});
        let o = rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        assert_eq!(o.shortfall, 2.0 * 51_840.0);
        assert_eq!(o.saturated_time, 0.0);
        assert_eq!(o.nidle_now, 2.0);
        assert_eq!(o.busy_time, 0.0);
    }

    #[test]
    fn saturation_and_shortfall_for_fifo_queues() {
        // 2 CPUs, jobs of 3600, 7200 and 10000 s: CPU 0 idles at 3600 → picks the
        // third job; saturated until 7200; then idle CPU-seconds until 51840.
        let (mut h, g) = host_and_ctx(2, &[100.0, 100.0], |_| {});
        add_job(&mut h, 0, 3600.0, 10_000_000);
        add_job(&mut h, 1, 7200.0, 10_000_000);
        add_job(&mut h, 0, 10_000.0, 10_000_000);
        let o = rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        assert_eq!(o.nidle_now, 0.0);
        assert_eq!(o.saturated_time, 7200.0);
        // Busy: [0,7200] both; [7200,13600] one; then none.
        let expect = (13_600.0 - 7200.0) + 2.0 * (51_840.0 - 13_600.0);
        assert!((o.shortfall - expect).abs() < 1e-6, "{}", o.shortfall);
        assert_eq!(h.projects[0].modern.n_runnable_jobs, 2);
        assert_eq!(h.projects[1].modern.nused_total, 1.0);
    }

    #[test]
    fn multi_threaded_jobs_overcommit_only_as_the_last_job_picked() {
        // 8 CPUs: a one-CPU job of 600 s, then three 4-thread jobs of 3600 s. The
        // first pick takes 1 + 4 + 4 = 9 CPUs (the last job may overcommit). When
        // the one-CPU job ends, 8 are used: the third 4-thread job waits for a
        // 4-thread job's end at 3600, then runs alone on 4 CPUs until 7200.
        let (mut h, g) = host_and_ctx(8, &[100.0], |_| {});
        add_usage_job(&mut h, 0, 600.0, P_FPOPS, 1.0, 0.0);
        for _ in 0..3 {
            add_usage_job(&mut h, 0, 3600.0, 3.6 * P_FPOPS, 4.0, 0.0);
        }
        let o = rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        assert_eq!(o.nidle_now, 0.0);
        assert_eq!(o.saturated_time, 3600.0);
        // Idle: 4 CPUs over [3600, 7200], then all 8 until the window's end. Had
        // the third job started at 600 on the one CPU freed, the queue would drain
        // by 4200 and the shortfall be 4 × 600 + 8 × (51840 − 4200).
        let expect = 4.0 * 3600.0 + 8.0 * (51_840.0 - 7200.0);
        assert!((o.shortfall - expect).abs() < 1e-6, "{}", o.shortfall);
    }

    /// `BUSY_TIME_ESTIMATOR::update`: `(int)nused` instances from the least busy
    /// one (the first of equals), wrapping; less than one instance adds nothing.
    #[test]
    fn busy_time_takes_whole_instances_from_the_least_busy() {
        let mut busy = [5.0, 1.0, 1.0, 3.0];
        busy_time_update(&mut busy, 10.0, 0.5);
        assert_eq!(busy, [5.0, 1.0, 1.0, 3.0]);
        busy_time_update(&mut busy, 10.0, 2.7);
        assert_eq!(busy, [5.0, 11.0, 11.0, 3.0]);
        busy_time_update(&mut busy, 10.0, 2.0);
        assert_eq!(busy, [15.0, 11.0, 11.0, 13.0]);
        busy_time_update(&mut busy, 1.0, 1.0);
        assert_eq!(busy, [15.0, 12.0, 11.0, 13.0]);
    }

    #[test]
    fn deadline_miss_marks_job_project_and_busy_time() {
        let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
        // Finishes at 3600 + 3600 = 7200 > deadline 10000 − 8640.
        add_job(&mut h, 0, 3600.0, 10_000_000);
        add_job(&mut h, 0, 3600.0, 10_000);
        let o = rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        assert!(!h.jobs[0].rr_sim_misses_deadline());
        assert!(h.jobs[1].rr_sim_misses_deadline());
        assert_eq!(h.projects[0].modern.deadlines_missed, 1);
        assert_eq!(o.busy_time, 3600.0);
        assert_eq!(o.deadline_missed_instances, 1.0);
    }

    #[test]
    fn long_jobs_use_coarse_steps_and_priority_picks() {
        // One CPU: the project with the smaller rec/share runs first in the simulation.
        let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |_| {});
        h.projects[0].modern.rec = 10.0;
        add_job(&mut h, 0, 50_000.0, 60_000);
        add_job(&mut h, 1, 50_000.0, 60_000);
        rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        // B (index 1) runs first and meets 60000−8640; A finishes at 100000: miss.
        assert!(h.jobs[0].rr_sim_misses_deadline());
        assert!(!h.jobs[1].rr_sim_misses_deadline());
        // Pointer order: the last project (B) is the heap's top, so B first again.
        let mut g2 = g.clone();
        g2.cfg.rrsim_pointer_heap_order = true;
        rr_simulation(&mut h, 0.0, &g2.cfg, ProcType::Cpu);
        assert!(h.jobs[0].rr_sim_misses_deadline());
        assert!(!h.jobs[1].rr_sim_misses_deadline());
        // ... even when A has the higher priority: A misses, B meets its deadline.
        h.projects[0].modern.rec = 0.0;
        h.projects[1].modern.rec = 10.0;
        rr_simulation(&mut h, 0.0, &g.cfg, ProcType::Cpu);
        assert!(!h.jobs[0].rr_sim_misses_deadline());
        assert!(h.jobs[1].rr_sim_misses_deadline());
        rr_simulation(&mut h, 0.0, &g2.cfg, ProcType::Cpu);
        assert!(h.jobs[0].rr_sim_misses_deadline());
        assert!(!h.jobs[1].rr_sim_misses_deadline());
    }
}
