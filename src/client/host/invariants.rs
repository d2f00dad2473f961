//! The client invariants the world checks after every host event: the work
//! buffer holds no more than the high water mark plus one reply
//! ([`ClientHost::buffer_violation`]), the running tasks fit the host
//! ([`ClientHost::resource_violation`]), and no job computes past its time limit
//! ([`ClientHost::time_limit_violation`]). Each returns a message naming the host,
//! or `None` when it holds.

use super::{ClientHost, ClientJob, TimeStats, execution};
use crate::client::config::{ClientConfig, Policy};
use crate::client::estimate;
use crate::engine::time::SECONDS_PER_DAY;
use crate::server::resource::{ProcType, coproc_of};

impl ClientHost {
    /// The work-buffer invariant: a client never holds more work than its high water
    /// mark plus one reply. The high water mark is the seed's `work_buf_max_days`
    /// scaled by `active_frac` (spec client §1.4), or the modern `work_buf_total()`
    /// scaled by the availability fraction the RR simulation uses (§2.5), times the
    /// CPUs. A reply overshoots its request by less than one job, because the
    /// scheduler stops once the request is met. The modern request is the shortfall,
    /// idle instance-seconds of the RR simulation: jobs are indivisible, so a CPU can
    /// idle inside the window while others run work past its end, by at most one job
    /// per other CPU; the modern slack is therefore one job per CPU, plus one job per
    /// project for the initial RPC after attach, which asks for one job whatever the
    /// buffer holds (`RPC_REASON_INIT`, §2.6). The server fills a request by its own
    /// estimates and the client measures its buffer by its own (§3.6), so when the
    /// client thinks jobs are larger than the server does, the window part grows by
    /// that factor ([`estimate::client_over_server`]), and the slack is counted in
    /// the client's estimate of a whole job. `None` when the invariant holds.
    ///
    /// Each resource is checked on its own: the CPU jobs' instance-seconds against
    /// the CPUs, and each GPU type's jobs against its instances, with that GPU's
    /// availability (`gpu_active_frac`).
    pub(crate) fn buffer_violation(&self, cfg: &ClientConfig) -> Option<String> {
        for t in ProcType::ALL {
            let n = match t {
                ProcType::Cpu => None,
                t => match coproc_of(&self.coprocs, t) {
                    Some(c) => Some(c.count as f64),
                    None => continue,
                },
            };
            if let Some(v) = self.buffer_violation_of(cfg, t, n) {
                return Some(v);
            }
        }
        None
    }

    /// [`Self::buffer_violation`] for the jobs of processor type `rsc`, which has
    /// `ninst` instances (`None`: the CPUs).
    fn buffer_violation_of(
        &self,
        cfg: &ClientConfig,
        rsc: ProcType,
        ninst: Option<f64>,
    ) -> Option<String> {
        let ts = self.time_stats;
        let gpu_frac = if rsc == ProcType::Cpu {
            1.0
        } else {
            cfg.gpu_active_frac
        };
        let ts = TimeStats {
            active_frac: ts.active_frac * gpu_frac,
            ..ts
        };
        let (window, frac) = match cfg.policy {
            Policy::SeedDebt => (
                self.work_buf_max_days(cfg) * SECONDS_PER_DAY,
                ts.active_frac,
            ),
            Policy::ModernRec => (
                self.work_buf_total(cfg),
                (ts.on_frac * ts.active_frac).clamp(0.01, 1.0),
            ),
        };
        // The server sizes jobs with its own availability estimate, clamped to 0.1.
        let frac = frac.min((ts.on_frac * ts.active_frac).clamp(0.1, 1.0));
        let ncpus = match (ninst, cfg.policy) {
            (Some(n), _) => n,
            (None, Policy::SeedDebt) => self.ncpus as f64,
            (None, Policy::ModernRec) => self.usable_cpus(cfg) as f64,
        };
        let policy = cfg.policy;
        let dcf = |j: &ClientJob| self.projects[j.project as usize].dcf;
        let mine = || self.jobs.iter().filter(|j| self.usage(j).proc_type == rsc);
        let instances = |j: &ClientJob| {
            if rsc == ProcType::Cpu {
                self.usage(j).avg_ncpus
            } else {
                self.usage(j).gpu_usage
            }
        };
        // The largest job in instance-seconds, the unit of `held`: a reply overshoots
        // its request by at most one job's seconds times the instances it uses.
        let largest = mine()
            .map(|j| {
                estimate::estimated_runtime(j.progress(), self.p_fpops, policy, dcf(j))
                    * instances(j)
            })
            .fold(0.0, f64::max);
        let mismatch = mine()
            .filter(|j| j.unfinished())
            .map(|j| estimate::client_over_server(j.progress(), self.p_fpops, policy, dcf(j)))
            .fold(1.0, f64::max);
        // Instance-seconds: a job's estimated seconds times the instances it uses.
        let plain = |j: &ClientJob| !self.usage(j).uses_gpu() && self.usage(j).avg_ncpus == 1.0;
        let held: f64 = if ninst.is_none() && self.jobs.iter().all(plain) {
            self.unfinished_secs(policy)
        } else {
            mine()
                .filter(|j| j.unfinished())
                .map(|j| self.est_flops_left(j, policy) / self.p_fpops * instances(j))
                .sum()
        };
        let slack_jobs = match cfg.policy {
            Policy::SeedDebt => 1.0,
            Policy::ModernRec => ncpus + self.projects.len() as f64,
        };
        // The round-robin simulation fills a resource while it is not saturated, so
        // the last job it picks may overcommit it by its instances less one (BOINC's
        // `pick_jobs_to_run`): the simulated queue then drains that much faster, and
        // the client fetches for that many more instances than it has.
        let widest = mine().map(instances).fold(1.0, f64::max);
        let simulated = ncpus + (widest - 1.0);
        let bound =
            mismatch * simulated * window / frac.max(1e-9) + slack_jobs * largest / frac.max(0.1);
        (held > bound * (1.0 + 1e-9)).then(|| {
            let what = if rsc == ProcType::Cpu {
                String::new()
            } else {
                format!(" of {} GPU", rsc.name())
            };
            format!(
                "host {} holds {held:.0} s of unfinished work{what}, more than its high water mark plus one reply ({bound:.0} s)",
                self.index
            )
        })
    }

    /// The resource invariant: the running tasks fit the host as `enforce_run_list`
    /// chooses them (spec client §3.3, §5.4). Their `avg_ncpus` add up to at most the
    /// usable CPUs plus the one CPU GPU tasks may overcommit, or else were fewer than
    /// the usable CPUs before the largest CPU task joined (a multi-threaded task may
    /// overcommit them); at most the usable CPUs when the user limits the CPUs. The
    /// CPUs really used (CPU tasks slowed by `cpu_scale`) exceed the usable CPUs
    /// only as far as GPU tasks' own shares do. The tasks of a GPU type use at most
    /// the host's instances of it, and a GPU task runs only on a GPU type the host
    /// has. `None` when it holds.
    pub(crate) fn resource_violation(&self, cfg: &ClientConfig) -> Option<String> {
        const EPS: f64 = 1e-9;
        let n = self.usable_cpus(cfg) as f64;
        let cpu_scale = self.cpu_scale(cfg);
        let limited = self.cpus_limited(cfg);
        let (mut asked, mut used, mut largest_cpu_task, mut gpu_cpus) = (0.0, 0.0, 0.0f64, 0.0);
        let mut gpu = [0.0; crate::server::resource::N_RSC];
        for j in self.jobs.iter().filter(|j| j.is_running()) {
            let u = self.usage(j);
            asked += u.avg_ncpus;
            used += execution(u, self.p_fpops, cpu_scale, cfg.gpu_active_frac).cpus;
            if !u.uses_gpu() {
                largest_cpu_task = largest_cpu_task.max(u.avg_ncpus);
            } else {
                gpu_cpus += u.avg_ncpus;
                if coproc_of(&self.coprocs, u.proc_type).is_none() {
                    return Some(format!(
                        "host {} runs result {} on a {} GPU it does not have",
                        self.index,
                        j.result_id,
                        u.proc_type.name()
                    ));
                }
                gpu[u.proc_type.index()] += u.gpu_usage;
            }
        }
        let too_many = if limited {
            asked > n + EPS
        } else {
            asked > n + 1.0 + EPS && asked - largest_cpu_task >= n - EPS
        };
        if too_many || used > n.max(gpu_cpus) + EPS {
            return Some(format!(
                "host {} runs tasks of {asked} CPUs (really using {used}) on {n} usable CPUs",
                self.index
            ));
        }
        for c in self.coprocs.iter() {
            if gpu[c.kind.index()] > c.count as f64 + EPS {
                return Some(format!(
                    "host {} runs tasks of {} {} GPU instances on {}",
                    self.index,
                    gpu[c.kind.index()],
                    c.kind.name(),
                    c.count
                ));
            }
        }
        None
    }

    /// The time-limit invariant: no job computes past its `max_elapsed_time`
    /// (`rsc_fpops_bound / flops`, spec backend §1.2): one that reaches it is
    /// aborted there. `None` when the invariant holds.
    pub(crate) fn time_limit_violation(&self) -> Option<String> {
        self.jobs
            .iter()
            .find(|j| j.cpu_time > j.max_elapsed_time * (1.0 + 1e-12))
            .map(|j| {
                format!(
                    "host {} computed result {} for {} s, past its time limit of {} s",
                    self.index, j.result_id, j.cpu_time, j.max_elapsed_time
                )
            })
    }
}
