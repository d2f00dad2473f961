//! The client's runtime estimates: what a job will still take, as the client can
//! know it (spec client §1.4, §3.6).
//!
//! A job's true size ([`JobProgress::true_fpops`]) may differ from the workunit's
//! `rsc_fpops_est`. The client never sees the true size: it sees the estimate, the
//! app version's `flops`, the job's fraction done (which a real app reports from its
//! own progress, so it is the fraction of the *true* work) and its own elapsed time.
//! Its corrections are those of BOINC's clients:
//!
//! * the seed policy scales every estimate by the project's duration correction
//!   factor, [`Dcf`] (spec client §3.6; see docs/fidelity.md on why the seed-era
//!   client gets it);
//! * the modern client uses no DCF (servers send `dont_use_dcf` to clients from
//!   7.0.28 on) but divides by the app version's `flops`, which the server projects
//!   from this host's past elapsed times (spec backend §2.4.4 step 4), and it
//!   switches to the app's own progress once the static estimate is exceeded
//!   (`est_dur`, spec client §3.6).
//!
//! Estimates are returned in FLOPs at the host's `p_fpops` ("estimated seconds ×
//! `p_fpops`"), the unit the policies already use for `flops_left`. When the
//! estimate is exact (true size = estimate, DCF = 1, `flops = p_fpops`) every
//! function returns `flops_left` bit for bit, so runs without estimation error do not
//! change.

use super::config::Policy;

/// What the estimates read of a job the client holds: its sizes, the speed its app
/// version was sent with, and how far it has run. The host passes these numbers in
/// (`ClientJob::progress`), so this module names no host type: the host depends on
/// the estimates, never the reverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobProgress {
    /// `wu.rsc_fpops_est`: the client's estimate of the job's size.
    pub rsc_fpops_est: f64,
    /// The app version's `flops` from the reply (the server's projected speed).
    pub app_flops: f64,
    /// Simulator-only: the job's true size, read only as the fraction done
    /// `1 − flops_left / true_fpops` a real app reports.
    pub true_fpops: f64,
    /// True FLOPs still to compute.
    pub flops_left: f64,
    /// Elapsed seconds computed.
    pub cpu_time: f64,
}

/// The smallest and largest duration correction factor (spec client §3.6).
pub(crate) const DCF_MIN: f64 = 0.01;
pub(crate) const DCF_MAX: f64 = 100.0;

/// A project's duration correction factor (`PROJECT::duration_correction_factor`,
/// spec client §3.6): the ratio of actual to estimated run times the client has
/// learnt. It starts at 1, rises at once when a job runs more than 10 % over its
/// corrected estimate, and falls slowly (10 % of the way per job) otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dcf(pub f64);

impl Default for Dcf {
    fn default() -> Self {
        Dcf(1.0)
    }
}

impl Dcf {
    /// `update_duration_correction_factor` after a job that succeeded (spec client
    /// §3.6). `raw` = elapsed / uncorrected estimate. With `adj` = elapsed /
    /// corrected estimate = `raw / DCF`: above 1.1 the DCF jumps to `raw`; below 0.1
    /// it moves 1 % of the way to `raw`; otherwise 10 %. Then it is clamped to
    /// [0.01, 100].
    pub fn update(&mut self, raw: f64) {
        let adj = raw / self.0;
        self.0 = if adj > 1.1 {
            raw
        } else if adj < 0.1 {
            0.99 * self.0 + 0.01 * raw
        } else {
            0.9 * self.0 + 0.1 * raw
        };
        self.0 = self.0.clamp(DCF_MIN, DCF_MAX);
    }
}

/// `raw` of [`Dcf::update`] for a job that finished: elapsed time over the
/// uncorrected estimate `rsc_fpops_est / flops`. A job computes at the app
/// version's speed whenever it runs and work lost at a restart is redone from the
/// checkpoint's elapsed time (spec client §3.4), so its final elapsed time is
/// `true_fpops / p_fpops`, and with the seed client's `flops = p_fpops` the ratio is
/// exactly `true_fpops / rsc_fpops_est` (free of the rounding an accumulated clock
/// would add).
pub(crate) fn dcf_sample(j: JobProgress) -> f64 {
    j.true_fpops / j.rsc_fpops_est
}

/// The speed the client's estimates assume: the modern client's app version
/// `flops` from the reply; the seed client's benchmark `p_fpops`
/// (`estimate_cpu_time = rsc_fpops_est / host.p_fpops`, spec client §1.4).
pub(crate) fn client_flops(j: JobProgress, p_fpops: f64, policy: Policy) -> f64 {
    match policy {
        Policy::SeedDebt => p_fpops,
        Policy::ModernRec => j.app_flops,
    }
}

/// The client's time limit for a job, seconds of elapsed time:
/// `max_elapsed_time = rsc_fpops_bound / flops` (BOINC's `app_start`; spec backend
/// §1.2: the client aborts a job beyond its bound). The bound comes with the job
/// and is read only here, so the queued job does not keep it: dropping it took a
/// queued job from 152 to 144 bytes, memory paid once per job in flight
/// (docs/performance.md, "Sizes").
pub(crate) fn max_elapsed_time(
    rsc_fpops_bound: f64,
    j: JobProgress,
    p_fpops: f64,
    policy: Policy,
) -> f64 {
    rsc_fpops_bound / client_flops(j, p_fpops, policy)
}

/// The static estimate of a job's whole run, seconds: `rsc_fpops_est / flops`,
/// times the DCF where the policy uses one (`estimated_runtime`, spec client §3.6;
/// seed: `estimate_cpu_time`, §1.4).
pub(crate) fn estimated_runtime(j: JobProgress, p_fpops: f64, policy: Policy, dcf: Dcf) -> f64 {
    let uncorrected = j.rsc_fpops_est / client_flops(j, p_fpops, policy);
    match policy {
        Policy::SeedDebt => uncorrected * dcf.0,
        Policy::ModernRec => uncorrected,
    }
}

/// How much larger the client's estimate of a job's remaining work is than the
/// server's (`rsc_fpops_est / projected_flops`, spec backend §2.4.4 step 4): 1 when
/// they agree. The server sizes a reply by its estimate and the client measures its
/// buffer by its own, so a buffer can hold this factor more than was asked for.
pub(crate) fn client_over_server(j: JobProgress, p_fpops: f64, policy: Policy, dcf: Dcf) -> f64 {
    let server = (j.rsc_fpops_est / j.true_fpops) * (p_fpops / j.app_flops);
    est_ratio(j, p_fpops, policy, dcf) / server
}

/// The client's estimate of a job's remaining work, in FLOPs at `p_fpops`.
///
/// * Seed (§1.4): `estimate_cpu_time × DCF × (1 − fraction_done)`.
/// * Modern (§3.6, `est_dur − elapsed`): the app's progress is linear in this
///   model, so the dynamic estimate `elapsed / fraction_done` is the true run time
///   `T`, and the blend `fd·T + (1 − fd)·S − elapsed` of the static estimate `S` is
///   `(1 − fd)·S`. Once the static estimate is exceeded (elapsed > S) the client
///   uses the dynamic estimate alone: the true time left.
///
/// `1 − fraction_done` is `flops_left / true_fpops`, so both are `flops_left` times a
/// ratio that is exactly 1 when the estimate is right.
pub fn est_flops_left(j: JobProgress, p_fpops: f64, policy: Policy, dcf: Dcf) -> f64 {
    j.flops_left * est_ratio(j, p_fpops, policy, dcf)
}

/// Estimated seconds of remaining work per true second of it: how fast a running
/// job's estimate shrinks relative to its true work (see [`est_flops_left`]).
pub(crate) fn est_ratio(j: JobProgress, p_fpops: f64, policy: Policy, dcf: Dcf) -> f64 {
    let size = j.rsc_fpops_est / j.true_fpops;
    match policy {
        Policy::SeedDebt => size * dcf.0,
        Policy::ModernRec => {
            let static_secs = estimated_runtime(j, p_fpops, policy, dcf);
            if j.cpu_time > static_secs {
                1.0
            } else {
                size * (p_fpops / j.app_flops)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job of estimate `est` that really takes `true_fpops`, sent with app version
    /// `flops` 1 GFLOPS, nothing of it run.
    fn job(est: f64, true_fpops: f64) -> JobProgress {
        JobProgress {
            rsc_fpops_est: est,
            app_flops: 1e9,
            true_fpops,
            flops_left: true_fpops,
            cpu_time: 0.0,
        }
    }

    /// Exact estimates leave the DCF at exactly 1, bit for bit.
    #[test]
    fn dcf_stays_one_when_estimates_are_exact() {
        let mut d = Dcf::default();
        for _ in 0..100 {
            d.update(dcf_sample(job(3.6e12, 3.6e12)));
        }
        assert_eq!(d, Dcf(1.0));
    }

    /// It rises at once: a job 2× its estimate sets DCF = 2 (adj = 2 > 1.1).
    #[test]
    fn dcf_rises_at_once() {
        let mut d = Dcf::default();
        d.update(2.0);
        assert_eq!(d, Dcf(2.0));
        // adj = 2.5/2 = 1.25 > 1.1: straight to 2.5.
        d.update(2.5);
        assert_eq!(d, Dcf(2.5));
    }

    /// It falls slowly: 10 % of the way per job while adj is in [0.1, 1.1], and
    /// 1 % when adj < 0.1.
    #[test]
    fn dcf_falls_slowly() {
        let mut d = Dcf(2.0);
        d.update(1.0); // adj 0.5
        assert!((d.0 - 1.9).abs() < 1e-15, "{d:?}");
        let mut d = Dcf(2.0);
        d.update(0.1); // adj 0.05 < 0.1
        assert!((d.0 - (0.99 * 2.0 + 0.01 * 0.1)).abs() < 1e-15, "{d:?}");
        // 1.1 itself is not "above 1.1": the 10 % rule.
        let mut d = Dcf(1.0);
        d.update(1.1);
        assert!((d.0 - 1.01).abs() < 1e-15, "{d:?}");
    }

    #[test]
    fn dcf_is_clamped() {
        let mut d = Dcf::default();
        d.update(1000.0);
        assert_eq!(d, Dcf(DCF_MAX));
        let mut d = Dcf(DCF_MIN);
        d.update(0.0);
        assert_eq!(d, Dcf(DCF_MIN));
    }

    /// With every job 2× its estimate, the seed client's estimate of a fresh job
    /// is half the truth before the first job ends and exact after it.
    #[test]
    fn seed_estimate_converges_with_dcf() {
        let mut d = Dcf::default();
        let j = job(3.6e12, 7.2e12);
        assert_eq!(est_flops_left(j, 1e9, Policy::SeedDebt, d), 3.6e12);
        d.update(dcf_sample(j));
        assert_eq!(d, Dcf(2.0));
        assert_eq!(est_flops_left(j, 1e9, Policy::SeedDebt, d), 7.2e12);
        // Half done: half the corrected estimate is left.
        let mut half = j;
        half.flops_left = 3.6e12;
        assert_eq!(est_flops_left(half, 1e9, Policy::SeedDebt, d), 3.6e12);
    }

    /// The modern client scales by `p_fpops / flops`: a server that has learnt
    /// this host runs the app at half speed gives exact estimates; once a job runs
    /// past its static estimate, the estimate is the true time left.
    #[test]
    fn modern_estimate_uses_the_app_version_flops() {
        let mut j = job(3.6e12, 7.2e12);
        assert_eq!(est_flops_left(j, 1e9, Policy::ModernRec, Dcf(5.0)), 3.6e12);
        j.app_flops = 0.5e9;
        assert_eq!(est_flops_left(j, 1e9, Policy::ModernRec, Dcf(5.0)), 7.2e12);
        // Static estimate 3600 s at 1 GFLOPS exceeded: true time left.
        j.app_flops = 1e9;
        j.cpu_time = 4000.0;
        j.flops_left = 3.2e12;
        assert_eq!(est_flops_left(j, 1e9, Policy::ModernRec, Dcf(1.0)), 3.2e12);
    }

    /// An exact estimate returns `flops_left` bit for bit under both policies.
    #[test]
    fn exact_estimates_are_the_truth_bit_for_bit() {
        let mut j = job(1.234_567e13, 1.234_567e13);
        j.app_flops = 1.7e9;
        j.flops_left = 3.333_333_333e12;
        for policy in [Policy::SeedDebt, Policy::ModernRec] {
            let e = est_flops_left(j, 1.7e9, policy, Dcf::default());
            assert_eq!(e.to_bits(), j.flops_left.to_bits());
        }
    }
}
