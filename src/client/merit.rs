//! The BOINC client emulator's figures of merit (spec client §5.4, §5.7), accumulated
//! per host as the host's intervals are integrated.
//!
//! The emulator accumulates in fixed steps of `delta` (60 s) on one global grid from
//! the start of the run (`t = k·delta`). Our hosts are event-driven, so the per-step
//! sums are evaluated in closed form over each interval between host events, on that
//! same global grid ([`IdleRun::advance`]); with `merit_step = 60` they equal the
//! emulator's sums (the monotony example of spec S20 depends on that
//! discretisation).

/// Host-level accumulators.
#[derive(Clone, Debug, Default)]
pub struct HostMerit {
    /// Seconds simulated while the host was attached (`active_time`, §5.4: every
    /// step counts, whatever the availability).
    pub active_time: f64,
    /// Seconds the host was on and allowed to compute.
    pub available_time: f64,
    /// `cpu_peak × active_time`, FLOPs.
    pub flops_total: f64,
    /// Peak FLOPs of all executing tasks.
    pub flops_used: f64,
    /// Peak FLOPs the host could have used while available.
    pub flops_available: f64,
    /// Detach/re-attach events.
    pub detaches: u64,
}

impl HostMerit {
    /// Adds an interval of `dt` seconds with `peak` FLOPS of capacity and `used`
    /// FLOPS executing.
    pub(crate) fn account(&mut self, dt: f64, peak: f64, used: f64, available: bool) {
        self.active_time += dt;
        self.flops_total += peak * dt;
        self.flops_used += used * dt;
        if available {
            self.available_time += dt;
            self.flops_available += peak * dt;
        }
    }
}

/// A project's idle run as the emulator measures it (spec client §5.4): at the end of
/// every step of the global grid, if no task of the project executed in the step,
/// `idle_time += step` and `idle_time_sumsq += step·idle_time²`, otherwise
/// `idle_time = 0`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IdleRun {
    pub idle_time: f64,
    pub idle_time_sumsq: f64,
    /// Whether a task of the project executed in the grid step under way.
    pub ran_in_step: bool,
}

impl IdleRun {
    /// Accounts the interval `(from, to]`, over which a task of the project executed
    /// throughout (`ran`) or not at all, closing every step of the grid
    /// `k·step` that ends in it. A step counts as run if the project executed at any
    /// moment of it. `step <= 0` is the continuous limit (no grid).
    pub(crate) fn advance(&mut self, from: f64, to: f64, ran: bool, step: f64) {
        if to <= from {
            return;
        }
        if step <= 0.0 {
            self.span(ran, to - from, 0.0);
            return;
        }
        self.ran_in_step |= ran;
        // Step boundaries in (from, to]: first and last.
        let first = ((from / step).floor() + 1.0) * step;
        if first > to {
            return;
        }
        let last = (to / step).floor() * step;
        // The step under way at `from` ends at `first`.
        self.close_step(step);
        // The whole steps between `first` and `last` had the interval's state.
        let whole = ((last - first) / step).round();
        if whole > 0.0 {
            self.span(ran, whole * step, step);
        }
        // The step now under way started at `last`.
        self.ran_in_step = ran && to > last;
    }

    /// `dt` seconds all run (the idle run ends) or all idle (it grows as
    /// [`add_idle`] says).
    fn span(&mut self, ran: bool, dt: f64, step: f64) {
        if ran {
            self.idle_time = 0.0;
        } else {
            add_idle(&mut self.idle_time, &mut self.idle_time_sumsq, dt, step);
        }
    }

    /// The end of a grid step: the emulator's per-step update.
    fn close_step(&mut self, step: f64) {
        if self.ran_in_step {
            self.idle_time = 0.0;
        } else {
            self.idle_time += step;
            self.idle_time_sumsq += step * self.idle_time * self.idle_time;
        }
        self.ran_in_step = false;
    }
}

/// Extends a project's idle run by `dt` seconds, as the emulator's per-step update
/// `idle_time += step; idle_time_sumsq += step·idle_time²` would over `dt/step` steps
/// (spec client §5.4). A remainder shorter than a step is added as a partial step.
pub(crate) fn add_idle(idle_time: &mut f64, sumsq: &mut f64, dt: f64, step: f64) {
    if dt <= 0.0 {
        return;
    }
    if step <= 0.0 {
        // Continuous limit: ∫ (a + t)² dt over [0, dt].
        let a = *idle_time;
        *sumsq += ((a + dt).powi(3) - a.powi(3)) / 3.0;
        *idle_time += dt;
        return;
    }
    let n = (dt / step).floor();
    let a = *idle_time;
    if n > 0.0 {
        // Σ_{k=1..n} step·(a + k·step)²
        let s1 = n * (n + 1.0) / 2.0;
        let s2 = n * (n + 1.0) * (2.0 * n + 1.0) / 6.0;
        *sumsq += step * (n * a * a + 2.0 * a * step * s1 + step * step * s2);
    }
    let mut idle = a + n * step;
    let rem = dt - n * step;
    if rem > 1e-9 {
        idle += rem;
        *sumsq += rem * idle * idle;
    }
    *idle_time = idle;
}

/// The five figures of merit of one host or of a population (spec client §5.7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub wasted_frac: f64,
    pub idle_frac: f64,
    pub share_violation: f64,
    pub monotony: f64,
    pub rpcs_per_job: f64,
}

/// Inputs of [`figures`] for one project.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProjectFigures {
    pub resource_share: f64,
    pub flops_used: f64,
    pub flops_wasted: f64,
    pub idle_time_sumsq: f64,
    pub nrpcs: u64,
    pub njobs: u64,
}

/// `SIM_RESULTS::compute_figures_of_merit` (spec client §5.7), exactly as defined.
/// `flops_used` is the host's (or population's) total; `active_time` and
/// `flops_total` likewise; `schedint` is `cpu_scheduling_period` in seconds.
pub fn figures(
    flops_total: f64,
    flops_used: f64,
    active_time: f64,
    schedint: f64,
    projects: &[ProjectFigures],
) -> Figures {
    let wasted: f64 = projects.iter().map(|p| p.flops_wasted).sum();
    let wasted_frac = if flops_total > 0.0 {
        wasted / flops_total
    } else {
        0.0
    };
    let idle_frac = if flops_total > 0.0 {
        (flops_total - flops_used).max(0.0) / flops_total
    } else {
        0.0
    };
    let t: f64 = projects.iter().map(|p| p.flops_used).sum();
    let rs_sum: f64 = projects.iter().map(|p| p.resource_share).sum();
    let share_violation = if t > 0.0 && rs_sum > 0.0 {
        projects
            .iter()
            .map(|p| (p.flops_used - t * p.resource_share / rs_sum).abs())
            .sum::<f64>()
            / t
    } else {
        0.0
    };
    let n = projects.len() as f64;
    let monotony = if n > 0.0 && active_time > 0.0 && schedint > 0.0 {
        let s: f64 = projects
            .iter()
            .map(|p| (p.idle_time_sumsq / active_time).sqrt())
            .sum();
        let x = s / (n * schedint * n);
        1.0 - 1.0 / (x + 1.0)
    } else {
        0.0
    };
    let nrpcs: u64 = projects.iter().map(|p| p.nrpcs).sum();
    let njobs: u64 = projects.iter().map(|p| p.njobs).sum();
    let rpcs_per_job = if njobs > 0 {
        nrpcs as f64 / (2.0 * njobs as f64)
    } else {
        0.0
    };
    Figures {
        wasted_frac,
        idle_frac,
        share_violation,
        monotony,
        rpcs_per_job,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form equals the emulator's step-by-step loop.
    #[test]
    fn idle_closed_form_matches_steps() {
        let (mut a, mut s) = (120.0, 0.0);
        add_idle(&mut a, &mut s, 3600.0, 60.0);
        let (mut b, mut t) = (120.0, 0.0);
        for _ in 0..60 {
            b += 60.0;
            t += 60.0 * b * b;
        }
        assert_eq!(a, b);
        assert!((s - t).abs() < 1e-6 * t, "{s} vs {t}");
    }

    /// S20: two projects alternating hourly on one CPU give x ≈ 0.207 with the
    /// emulator's 60-s step, and the monotony is x/(x+1).
    #[test]
    fn s20_monotony_of_hourly_alternation() {
        let hours = 24 * 14;
        let mut p = [ProjectFigures::default(); 2];
        let mut idle = [0.0f64; 2];
        for h in 0..hours {
            let running = h % 2;
            let other = 1 - running;
            idle[running] = 0.0;
            add_idle(
                &mut idle[other],
                &mut p[other].idle_time_sumsq,
                3600.0,
                60.0,
            );
        }
        for q in &mut p {
            q.resource_share = 100.0;
            q.flops_used = 1.0;
        }
        let active = hours as f64 * 3600.0;
        let f = figures(active, active, active, 3600.0, &p);
        let x = f.monotony / (1.0 - f.monotony);
        assert!((x - 0.2067).abs() < 5e-4, "x = {x}");
        assert_eq!(f.share_violation, 0.0);
    }

    /// The emulator's loop, second by second: a step counts as run if the project
    /// executed in any of its seconds.
    fn brute(runs: &[(f64, f64, bool)], step: f64) -> (f64, f64) {
        let (mut idle, mut sumsq, mut ran) = (0.0, 0.0, false);
        for &(from, to, r) in runs {
            let mut t = from;
            while t < to {
                t += 1.0;
                ran |= r;
                if t % step == 0.0 {
                    if ran {
                        idle = 0.0;
                    } else {
                        idle += step;
                        sumsq += step * idle * idle;
                    }
                    ran = false;
                }
            }
        }
        (idle, sumsq)
    }

    /// Events closer than a step, and intervals crossing many steps, give the sums of
    /// the one global grid, whatever the event times.
    #[test]
    fn idle_run_uses_the_global_grid() {
        let runs = [
            (0.0, 30.0, false),
            (30.0, 45.0, true),
            (45.0, 100.0, false),
            (100.0, 130.0, false),
            (130.0, 131.0, true),
            (131.0, 1000.0, false),
            (1000.0, 1290.0, true),
            (1290.0, 1300.0, false),
            (1300.0, 5000.0, false),
        ];
        let mut r = IdleRun::default();
        for &(from, to, ran) in &runs {
            r.advance(from, to, ran, 60.0);
        }
        let (idle, sumsq) = brute(&runs, 60.0);
        assert_eq!(r.idle_time, idle);
        assert!(
            (r.idle_time_sumsq - sumsq).abs() <= 1e-9 * sumsq,
            "{r:?} vs {sumsq}"
        );
        // Splitting an interval at arbitrary points changes nothing.
        let mut s = IdleRun::default();
        for &(from, to, ran) in &runs {
            let mid = (from + to) / 2.0;
            s.advance(from, mid.floor(), ran, 60.0);
            s.advance(mid.floor(), to, ran, 60.0);
        }
        assert_eq!(s.idle_time, r.idle_time);
        assert!((s.idle_time_sumsq - r.idle_time_sumsq).abs() <= 1e-9 * sumsq);
        // By hand: (0, 60] ran (30..45), (60, 120] idle, (120, 180] ran (130..131),
        // (180, 960] idle (13 steps), (960, 1320] ran (1000..1290), then (1320, 4980]
        // idle: 61 steps. The partial step (4980, 5000] is not closed.
        assert_eq!(r.idle_time, 61.0 * 60.0);
        let run = |n: u32| {
            (1..=n)
                .map(|k| 60.0 * (60.0 * k as f64).powi(2))
                .sum::<f64>()
        };
        let want = run(1) + run(13) + run(61);
        assert!((r.idle_time_sumsq - want).abs() <= 1e-9 * want);
    }

    #[test]
    fn share_violation_and_rpcs_per_job() {
        let p = [
            ProjectFigures {
                resource_share: 100.0,
                flops_used: 50.0,
                nrpcs: 3,
                njobs: 2,
                ..Default::default()
            },
            ProjectFigures {
                resource_share: 300.0,
                flops_used: 50.0,
                nrpcs: 1,
                njobs: 2,
                ..Default::default()
            },
        ];
        let f = figures(200.0, 100.0, 100.0, 3600.0, &p);
        // |50 − 25| + |50 − 75| over 100.
        assert_eq!(f.share_violation, 0.5);
        assert_eq!(f.idle_frac, 0.5);
        assert_eq!(f.rpcs_per_job, 4.0 / 8.0);
    }
}
