//! A host's other projects ("background projects") and its own preferences.
//!
//! Real volunteers attach a host to several projects and give ours only a share of
//! it. A background project is one of those other projects: the host's client runs it
//! under the same policy as ours (debt or REC, round-robin simulation, EDF, work
//! fetch, backoffs; spec client §1–3), so our jobs compete with its jobs for the CPUs
//! as they do on a real client. Its servers are not simulated: it always has work,
//! and its scheduler RPCs are answered by the host itself
//! ([`ClientHost::background_rpc`](super::host::ClientHost)), so they cost no server
//! events and leave no row, audit entry or RPC count in any project's outputs.
//!
//! A background project's slot in [`ClientHost::projects`](super::host::ClientHost)
//! carries the world index [`BACKGROUND`]: no world project has it, and whatever
//! indexes the world's projects by a host's project skips it.
//!
//! The host's preferences ([`HostPrefs`]) are BOINC's global preferences that the
//! policies read (`work_buf_min_days`, `work_buf_additional_days`, the seed era's
//! `work_buf_max_days`, `max_ncpus_pct`; spec client §1.1, §2.1, §2.2), when a host
//! has values of its own rather than its group's `[client]` ones.

use crate::base::dist::Dist;
use crate::engine::rng::SimRng;

/// The world index a background project's slot carries: no world project has it (the
/// scenario validator allows at most `u16::MAX` projects, indices `0..u16::MAX`).
pub const BACKGROUND: u16 = u16::MAX;

/// At most this many background projects per host: a drawn count is clamped to it,
/// and a longer explicit list is refused when the scenario is loaded.
pub const MAX_BACKGROUND: usize = 64;

/// At most this many jobs in one background reply. BOINC's scheduler sends jobs until
/// the request is filled, within its `max_wus_to_send` limit (spec backend §2.4.4);
/// a client that asks for more asks again at its next work fetch.
pub const MAX_JOBS_PER_REPLY: u32 = 256;

/// A background job's time limit is this many times its estimate (BOINC's
/// `rsc_fpops_bound` is commonly ten times `rsc_fpops_est`): a job computes exactly
/// its estimate, so it never reaches it.
pub const BOUND_FACTOR: f64 = 10.0;

/// How large a background project's jobs are: FLOPs, or seconds of one CPU at the
/// host's own speed. Drawn per job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JobSize {
    Flops(Dist),
    Seconds(Dist),
}

impl JobSize {
    /// One job's size in FLOPs on a host of per-CPU speed `p_fpops` (at least one
    /// second of it: a job of no work would finish at once, forever).
    pub(crate) fn draw(&self, rng: &mut SimRng, p_fpops: f64) -> f64 {
        let flops = match self {
            JobSize::Flops(d) => d.sample(rng),
            JobSize::Seconds(d) => d.sample(rng) * p_fpops,
        };
        if flops.is_finite() {
            flops.max(p_fpops)
        } else {
            p_fpops
        }
    }
}

/// The jobs of one background project: their size and their delay bound (the time
/// from sending to the report deadline, s), both drawn per job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackgroundJobs {
    pub size: JobSize,
    pub delay_bound: Dist,
}

/// One background project given explicitly: its resource share and its jobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackgroundProject {
    pub share: f64,
    pub jobs: BackgroundJobs,
}

/// A host group's background projects.
// One per group, never per host or per event: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Background {
    /// Each host draws how many (`projects`, rounded, clamped to
    /// `0..=MAX_BACKGROUND`) and each one's share; all share one job description.
    Drawn {
        projects: Dist,
        share: Dist,
        jobs: BackgroundJobs,
    },
    /// Every host of the group has exactly these, in this order (an importer of a real
    /// client's state, whose other projects are known one by one).
    Listed(Vec<BackgroundProject>),
}

impl Background {
    /// The jobs of a host's `k`-th background project.
    pub(crate) fn jobs(&self, k: usize) -> Option<&BackgroundJobs> {
        match self {
            Background::Drawn { jobs, .. } => Some(jobs),
            Background::Listed(l) => l.get(k).map(|p| &p.jobs),
        }
    }

    /// The shares of one host's background projects, drawn in order from its own
    /// stream `rng` (count first, then one share per project; a fixed value draws
    /// nothing). A share is at least 0.
    pub fn shares(&self, rng: &mut SimRng, out: &mut Vec<f64>) {
        out.clear();
        match self {
            Background::Drawn {
                projects, share, ..
            } => {
                let n = projects.sample(rng).round();
                let n = if n.is_finite() {
                    n.clamp(0.0, MAX_BACKGROUND as f64) as usize
                } else {
                    0
                };
                out.extend((0..n).map(|_| share.sample(rng).max(0.0)));
            }
            Background::Listed(l) => out.extend(l.iter().map(|p| p.share.max(0.0))),
        }
    }
}

/// A host's own preferences, each `NaN` when the host uses its group's `[client]`
/// value. Kept as `f32`: the policies widen them to `f64` when they read them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostPrefs {
    /// `work_buf_min_days`, days (0–10).
    pub work_buf_min_days: f32,
    /// `work_buf_additional_days` (modern), days (0–10).
    pub work_buf_additional_days: f32,
    /// `work_buf_max_days` (seed high water mark), days (0–10).
    pub work_buf_max_days: f32,
    /// `max_ncpus_pct`, % (0–100; 0 means no limit, as in BOINC).
    pub max_ncpus_pct: f32,
}

impl Default for HostPrefs {
    /// Every value the group's.
    fn default() -> Self {
        HostPrefs {
            work_buf_min_days: f32::NAN,
            work_buf_additional_days: f32::NAN,
            work_buf_max_days: f32::NAN,
            max_ncpus_pct: f32::NAN,
        }
    }
}

/// BOINC's limits on the work buffer preferences as its web form accepts them: 0 to
/// 10 days each (`work_buf_min_days`, `work_buf_additional_days`).
pub const MAX_BUF_DAYS: f64 = 10.0;

/// A host group's preference distributions (`[host_group.prefs]`): each key given is
/// drawn once per host, from the host's own preferences stream.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PrefsDraw {
    pub work_buf_min_days: Option<Dist>,
    pub work_buf_additional_days: Option<Dist>,
    pub work_buf_max_days: Option<Dist>,
    pub max_ncpus_pct: Option<Dist>,
}

impl PrefsDraw {
    /// One host's preferences, drawn in the order of the fields (only the keys
    /// given draw), the work buffers clamped to 0–10 days and the CPU share to
    /// 0–100 %.
    pub fn draw(&self, rng: &mut SimRng) -> HostPrefs {
        let days = |d: &Option<Dist>, rng: &mut SimRng| {
            d.as_ref().map_or(f32::NAN, |d| {
                let x = d.sample(rng);
                if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, MAX_BUF_DAYS) as f32
                }
            })
        };
        let work_buf_min_days = days(&self.work_buf_min_days, rng);
        let work_buf_additional_days = days(&self.work_buf_additional_days, rng);
        let work_buf_max_days = days(&self.work_buf_max_days, rng);
        let max_ncpus_pct = self.max_ncpus_pct.as_ref().map_or(f32::NAN, |d| {
            let x = d.sample(rng);
            if x.is_nan() {
                0.0
            } else {
                x.clamp(0.0, 100.0) as f32
            }
        });
        HostPrefs {
            work_buf_min_days,
            work_buf_additional_days,
            work_buf_max_days,
            max_ncpus_pct,
        }
    }
}

/// What a host keeps when it has background projects or preferences of its own,
/// boxed behind one pointer so that other hosts pay 8 bytes for it.
#[derive(Clone, Debug)]
pub struct HostExtra {
    pub prefs: HostPrefs,
    /// The stream of the background jobs' sizes and delay bounds
    /// ([`StreamKind::HostBackground`](crate::streams::StreamKind), after the
    /// host's count and shares).
    pub bg_rng: SimRng,
}

/// `max_ncpus_pct` applied to `p_ncpus`, as BOINC's `CLIENT_STATE::set_n_usable_cpus`
/// (`client/cpu_sched.cpp`) does: with a percentage,
/// `ncpus = max(1, floor(p_ncpus · pct / 100))`; 0 (BOINC's default in
/// `lib/prefs.cpp`, `GLOBAL_PREFS::defaults`) or none means no limit (spec client
/// §2.1).
pub fn ncpus_for_pct(p_ncpus: u32, pct: f64) -> u32 {
    if pct.is_nan() || pct <= 0.0 {
        return p_ncpus;
    }
    ((p_ncpus as f64 * pct / 100.0).floor() as u32).clamp(1, p_ncpus.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::streams::StreamKind;

    #[test]
    fn ncpus_pct_rounds_down_to_at_least_one() {
        assert_eq!(ncpus_for_pct(8, 100.0), 8);
        assert_eq!(ncpus_for_pct(8, 50.0), 4);
        assert_eq!(ncpus_for_pct(8, 60.0), 4); // 4.8
        assert_eq!(ncpus_for_pct(4, 10.0), 1); // 0.4 → at least one
        assert_eq!(ncpus_for_pct(4, 0.0), 4); // 0: no limit
        assert_eq!(ncpus_for_pct(4, f64::NAN), 4);
        assert_eq!(ncpus_for_pct(1, 99.0), 1);
    }

    #[test]
    fn prefs_draws_are_clamped_and_only_given_keys_draw() {
        let mut rng = stream(1, StreamKind::Host, 0);
        let d = PrefsDraw {
            work_buf_min_days: Some(Dist::fixed(-1.0)),
            work_buf_additional_days: Some(Dist::fixed(25.0)),
            work_buf_max_days: None,
            max_ncpus_pct: Some(Dist::fixed(150.0)),
        };
        let p = d.draw(&mut rng);
        assert_eq!(p.work_buf_min_days, 0.0);
        assert_eq!(p.work_buf_additional_days, 10.0);
        assert!(p.work_buf_max_days.is_nan());
        assert_eq!(p.max_ncpus_pct, 100.0);
        // Fixed values consume no number of the stream.
        let mut fresh = stream(1, StreamKind::Host, 0);
        assert_eq!(
            rand::RngExt::random::<u64>(&mut rng),
            rand::RngExt::random::<u64>(&mut fresh)
        );
    }

    #[test]
    fn drawn_counts_are_rounded_and_clamped() {
        let jobs = BackgroundJobs {
            size: JobSize::Seconds(Dist::fixed(3600.0)),
            delay_bound: Dist::fixed(86_400.0),
        };
        let mut rng = stream(1, StreamKind::Host, 0);
        let mut out = Vec::new();
        let b = |n: f64| Background::Drawn {
            projects: Dist::fixed(n),
            share: Dist::fixed(-5.0),
            jobs,
        };
        b(2.4).shares(&mut rng, &mut out);
        assert_eq!(out, vec![0.0, 0.0]);
        b(1e9).shares(&mut rng, &mut out);
        assert_eq!(out.len(), MAX_BACKGROUND);
        b(-3.0).shares(&mut rng, &mut out);
        assert!(out.is_empty());
        let l = Background::Listed(vec![
            BackgroundProject { share: 50.0, jobs },
            BackgroundProject { share: 150.0, jobs },
        ]);
        l.shares(&mut rng, &mut out);
        assert_eq!(out, vec![50.0, 150.0]);
        assert_eq!(l.jobs(1), Some(&jobs));
        assert_eq!(l.jobs(2), None);
    }

    #[test]
    fn job_sizes_in_seconds_scale_with_the_host() {
        let mut rng = stream(1, StreamKind::Host, 0);
        assert_eq!(
            JobSize::Seconds(Dist::fixed(3600.0)).draw(&mut rng, 2e9),
            7.2e12
        );
        assert_eq!(JobSize::Flops(Dist::fixed(1e12)).draw(&mut rng, 2e9), 1e12);
        // At least one second of the host.
        assert_eq!(JobSize::Flops(Dist::fixed(0.0)).draw(&mut rng, 2e9), 2e9);
    }
}
