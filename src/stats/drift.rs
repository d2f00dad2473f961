//! Drift warnings: a headline figure whose value over the last third of the measured
//! window differs significantly from its value over the first third.
//!
//! A figure of `summary.csv` is one number for the whole measured window. When the
//! run has not reached a steady state (adaptive replication trusting unreliable
//! hosts more and more, spec backend §2.4.7; a database still filling), that number
//! is an average over a moving target, and a designer comparing it with a limit is
//! misled. So each run also tallies, per figure, the counts of the first and the last
//! third of the window, and tests whether they differ more than chance allows:
//!
//! * a rate (`workunits_valid_per_day`) compares two counts over equally long
//!   periods: under a constant rate, given `n1 + n2`, `n2` is binomial with p = ½,
//!   so `z = (n2 − n1) / √(n1 + n2)`;
//! * a fraction (`deadline_fail_frac`, `wrong_canonical_frac`) compares two
//!   proportions with the pooled two-proportion z-test,
//!   `z = (p2 − p1) / √(p(1 − p)(1/n1 + 1/n2))`, p pooled;
//! * a percentile (`turnaround_p90_s`) compares the share of each third above the
//!   p90 of both thirds together (about 10 % in each when nothing changed), with the
//!   same two-proportion test.
//!
//! A figure drifts when `|z| ≥` [`Z_MIN`] **and** it changed by at least
//! [`REL_MIN`] of its first-third value: the first keeps a stationary run quiet (a
//! normal |z| ≥ 3 has probability 0.27 %, so about 1 % for the four figures), the
//! second keeps a giant run, where any difference is significant, from warning about
//! trivia. `docs/outputs.md` ("Drift warnings") says the same for the designer.
//!
//! Every count is taken from a final row and its own timestamps, like the other
//! figures (`super::window`), so the warning can be checked from `workunits.csv` and
//! `results.csv`.

use super::metrics::Hist;
use super::window::{self, DeadlineFate, Window};
use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::ResultId;

/// The smallest |z| that counts as a drift.
pub const Z_MIN: f64 = 3.0;
/// The smallest relative change that counts as a drift.
pub const REL_MIN: f64 = 0.10;

/// The figures tested, in the order their warnings come.
pub const FIGURES: [&str; 4] = [
    "workunits_valid_per_day",
    "deadline_fail_frac",
    "wrong_canonical_frac",
    "turnaround_p90_s",
];

/// The counts of the first (index 0) and last (1) third of a measured window.
#[derive(Clone, Debug, Default)]
pub struct Thirds {
    window: Window,
    /// Workunits assimilated as valid work, by `assimilated_time`.
    pub valid: [u64; 2],
    /// Results by `sent_time` whose deadline passed: (failed, passed) (see
    /// [`window::deadline_fate`]).
    pub deadline: [(u64, u64); 2],
    /// Canonical results of known truth by `canonical_found_time`: (wrong, known).
    pub science: [(u64, u64); 2],
    /// Turnarounds of the results reported in the third, by `received_time`, in
    /// the bins of `histograms.csv` (none under `bench --no-metrics`).
    pub turnaround: Option<Box<[Hist; 2]>>,
}

/// One figure that drifts.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// Its `summary.csv` column.
    pub figure: &'static str,
    /// Its value over the first and the last third.
    pub first: f64,
    pub last: f64,
    pub z: f64,
}

impl Thirds {
    /// Empty counts for `window`; the turnaround bins as `bins` (the histogram of
    /// `result_turnaround_s`), emptied.
    pub fn new(window: Window, bins: Option<&Hist>) -> Self {
        let turnaround = bins.map(|h| {
            let empty = Hist {
                counts: vec![0; h.counts.len()],
                below: 0,
                above: 0,
                ..h.clone()
            };
            Box::new([empty.clone(), empty])
        });
        Thirds {
            window,
            turnaround,
            ..Default::default()
        }
    }

    /// The first third `[warmup, a)` and the last `[b, end]`, seconds.
    fn bounds(&self) -> (Time, Time) {
        let third = (self.window.end - self.window.warmup) / 3;
        (self.window.warmup + third, self.window.end - third)
    }

    /// Which third `t` falls in: 0 (first), 1 (last), or none (the middle, the
    /// warm-up, or a run too short to have thirds).
    fn third(&self, t: Time) -> Option<usize> {
        let (a, b) = self.bounds();
        if a <= self.window.warmup || t < self.window.warmup || t > self.window.end {
            return None;
        }
        if t < a {
            Some(0)
        } else if t >= b {
            Some(1)
        } else {
            None
        }
    }

    /// A final workunit row.
    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow) {
        if window::assimilated_in_window(wu, self.window) == Some(true)
            && let Some(k) = self.third(wu.assimilated_time.into())
        {
            self.valid[k] += 1;
        }
        if wu.canonical_resultid != ResultId(0)
            && let Some(correct) = wu.canonical_correct
            && let Some(k) = self.third(wu.canonical_found_time.into())
        {
            self.science[k].0 += u64::from(!correct);
            self.science[k].1 += 1;
        }
    }

    /// A final result row.
    pub(crate) fn add_result(&mut self, r: &ResultRow) {
        if let Some(fate) = window::deadline_fate(r, self.window)
            && fate != DeadlineFate::Censored
            && let Some(k) = self.third(r.sent_time.into())
        {
            self.deadline[k].0 += u64::from(fate != DeadlineFate::Met);
            self.deadline[k].1 += 1;
        }
        if window::is_reported(r)
            && let Some(k) = self.third(r.received_time.into())
            && let Some(h) = &mut self.turnaround
        {
            h[k].add((r.received_time - r.sent_time) as f64);
        }
    }

    /// The days of the first and last third, for a message: `days 5–33`.
    pub fn days(&self) -> [String; 2] {
        let (a, b) = self.bounds();
        let d = |t: Time| (t as f64 / 86_400.0 * 10.0).round() / 10.0;
        [
            format!("days {}–{}", d(self.window.warmup), d(a)),
            format!("days {}–{}", d(b), d(self.window.end)),
        ]
    }

    /// The figures that drift, in [`FIGURES`] order.
    pub fn drifts(&self) -> Vec<Drift> {
        let mut out = Vec::new();
        let (a, _) = self.bounds();
        let third_days = (a - self.window.warmup) as f64 / 86_400.0;
        if third_days <= 0.0 {
            return out;
        }
        let [n1, n2] = self.valid;
        out.extend(judge(
            FIGURES[0],
            n1 as f64 / third_days,
            n2 as f64 / third_days,
            count_z(n1, n2),
        ));
        for (figure, [(x1, m1), (x2, m2)]) in
            [(FIGURES[1], self.deadline), (FIGURES[2], self.science)]
        {
            if m1 > 0 && m2 > 0 {
                out.extend(judge(
                    figure,
                    x1 as f64 / m1 as f64,
                    x2 as f64 / m2 as f64,
                    proportion_z(x1, m1, x2, m2),
                ));
            }
        }
        if let Some(h) = &self.turnaround
            && let Some((q1, q2, z)) = percentile_z(&h[0], &h[1], 0.9)
        {
            out.extend(judge(FIGURES[3], q1, q2, Some(z)));
        }
        out
    }
}

/// A drift when both rules hold: `|z| ≥ Z_MIN` and a change of at least `REL_MIN`
/// of the first value (any change from 0).
fn judge(figure: &'static str, first: f64, last: f64, z: Option<f64>) -> Option<Drift> {
    let z = z?;
    let big = (last - first).abs() >= REL_MIN * first.abs() && last != first;
    (z.abs() >= Z_MIN && big).then_some(Drift {
        figure,
        first,
        last,
        z,
    })
}

/// Two counts over equally long periods: `(n2 − n1) / √(n1 + n2)` (the normal
/// approximation of `n2 ~ Binomial(n1 + n2, ½)` under a constant rate); none
/// without any.
pub fn count_z(n1: u64, n2: u64) -> Option<f64> {
    let n = (n1 + n2) as f64;
    (n > 0.0).then(|| (n2 as f64 - n1 as f64) / n.sqrt())
}

/// The pooled two-proportion z statistic of `x2/n2` against `x1/n1`; none when
/// either is empty or the pooled proportion is 0 or 1 (no variance: no evidence of
/// a change either).
pub fn proportion_z(x1: u64, n1: u64, x2: u64, n2: u64) -> Option<f64> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let p = (x1 + x2) as f64 / (n1f + n2f);
    let se = (p * (1.0 - p) * (1.0 / n1f + 1.0 / n2f)).sqrt();
    (se > 0.0).then(|| (x2 as f64 / n2f - x1 as f64 / n1f) / se)
}

/// The `q`-quantiles of two histograms of the same bins, and the z statistic of the
/// shares of each above the `q`-quantile of both together (a value in a bin whose
/// lower edge is at or above it); none when either is empty.
pub fn percentile_z(h1: &Hist, h2: &Hist, q: f64) -> Option<(f64, f64, f64)> {
    let (q1, q2) = (h1.quantile(q)?, h2.quantile(q)?);
    let mut both = h1.clone();
    for (c, d) in both.counts.iter_mut().zip(&h2.counts) {
        *c += d;
    }
    both.below += h2.below;
    both.above += h2.above;
    let pooled = both.quantile(q)?;
    let above = |h: &Hist| -> u64 {
        let from = ((pooled - h.lo) / h.width).round().max(0.0) as usize;
        h.counts.iter().skip(from).sum::<u64>() + h.above
    };
    let z = proportion_z(above(h1), h1.total(), above(h2), h2.total())?;
    Some((q1, q2, z))
}

/// A figure's value for a message: a percentage for a fraction, a rate per day, a
/// duration in hours or days.
fn value(figure: &str, v: f64) -> String {
    if figure.ends_with("_frac") {
        let pct = 100.0 * v;
        let digits = if pct < 1.0 {
            3
        } else if pct < 10.0 {
            2
        } else {
            1
        };
        format!("{pct:.digits$} %")
    } else if figure.ends_with("_per_day") {
        format!("{v:.1} per day")
    } else if v >= 86_400.0 {
        format!("{:.2} d", v / 86_400.0)
    } else {
        format!("{:.2} h", v / 3_600.0)
    }
}

/// The warning of a drift: `project main: wrong_canonical_frac drifts: 0.078 % in
/// days 5–33 → 0.109 % in days 62–90 (z = 5.1); the run has not reached a steady
/// state`. `who` starts it, as the censoring warning's.
pub fn message(who: &str, d: &Drift, days: &[String; 2]) -> String {
    format!(
        "{who}: {} drifts: {} in {} → {} in {} (z = {:.1}); the run has not reached a \
         steady state",
        d.figure,
        value(d.figure, d.first),
        days[0],
        value(d.figure, d.last),
        days[1],
        d.z
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::config::WuTemplate;
    use crate::server::types::*;

    #[test]
    fn z_statistics_of_known_counts() {
        // 100 then 144 in equal periods: 44 / √244.
        assert_eq!(count_z(100, 144), Some(44.0 / 244f64.sqrt()));
        assert_eq!(count_z(0, 0), None);
        // 10/1000 vs 30/1000: p = 0.02, se = √(0.02·0.98·0.002) = 0.00626..,
        // z = 0.02 / se = 3.194...
        let z = proportion_z(10, 1000, 30, 1000).unwrap();
        assert!(
            (z - 0.02 / (0.02f64 * 0.98 * 0.002).sqrt()).abs() < 1e-12,
            "{z}"
        );
        assert!((z - 3.194).abs() < 1e-3, "{z}");
        assert_eq!(proportion_z(0, 1000, 0, 1000), None, "no variance");
        assert_eq!(proportion_z(1, 0, 1, 10), None);
    }

    #[test]
    fn both_rules_must_hold() {
        // Significant but 5 %: a giant run's trivia.
        let z = proportion_z(100_000, 1_000_000, 105_000, 1_000_000);
        assert!(z.unwrap() > 3.0);
        assert_eq!(judge("x_frac", 0.1, 0.105, z), None);
        // Large but not significant.
        let z = proportion_z(1, 100, 2, 100);
        assert_eq!(judge("x_frac", 0.01, 0.02, z), None);
        // Both.
        let d = judge("x_frac", 0.01, 0.03, proportion_z(10, 1000, 30, 1000)).unwrap();
        assert_eq!((d.first, d.last), (0.01, 0.03));
        // From zero, any change is large enough.
        assert!(judge("x_frac", 0.0, 0.02, Some(4.0)).is_some());
        assert_eq!(judge("x_frac", 0.02, 0.02, Some(4.0)), None);
    }

    #[test]
    fn percentiles_of_two_thirds() {
        let mut h1 = Hist {
            lo: 0.0,
            width: 10.0,
            counts: vec![0; 100],
            below: 0,
            above: 0,
        };
        let mut h2 = h1.clone();
        // 100 values 0..99 in the first; the second is the same shifted by 200.
        for x in 0..100 {
            h1.add(x as f64);
            h2.add((x + 200) as f64);
        }
        let (q1, q2, z) = percentile_z(&h1, &h2, 0.9).unwrap();
        assert_eq!((q1, q2), (90.0, 290.0));
        // Pooled p90: the upper edge of the bin where 180 of 200 are reached, 280:
        // the first has none above it, the second 20 (bins from 280): 0/100 vs
        // 20/100, z = 0.2 / √(0.1 · 0.9 · 0.02) = 4.714.
        assert_eq!(z, proportion_z(0, 100, 20, 100).unwrap());
        assert!((z - 4.714).abs() < 1e-3, "{z}");
        // The same distribution: z = 0.
        let (_, _, z) = percentile_z(&h1, &h1, 0.9).unwrap();
        assert_eq!(z, 0.0);
    }

    fn window() -> Window {
        Window {
            warmup: 5 * 86_400,
            end: 95 * 86_400,
        }
    }

    /// Canonical results found every 100 s from the warm-up to the end, the k-th
    /// wrong when `wrong(k)`.
    fn science(wrong: impl Fn(u64, Time) -> bool) -> Thirds {
        let mut th = Thirds::new(window(), None);
        let mut wu = WorkunitRow::from_template(&WuTemplate::default(), 0);
        wu.canonical_resultid = ResultId(1);
        let mut t = window().warmup;
        let mut k = 0;
        while t <= window().end {
            wu.canonical_found_time = crate::server::types::db_time(t);
            wu.canonical_correct = Some(!wrong(k, t));
            th.add_workunit(&wu);
            t += 100;
            k += 1;
        }
        th
    }

    #[test]
    fn a_stationary_series_does_not_drift() {
        // One wrong in 1000 throughout, and the same valid throughput.
        let th = science(|k, _| k % 1000 == 7);
        assert_eq!(th.science[0], (26, 25_920));
        assert_eq!(th.science[1], (26, 25_921));
        assert_eq!(th.drifts(), vec![]);
        assert_eq!(
            th.days(),
            ["days 5–35".to_string(), "days 65–95".to_string()]
        );
    }

    #[test]
    fn a_step_drifts_with_its_exact_z() {
        // One wrong in 1000 up to day 50, then three in 1000.
        let th = science(|k, t| {
            if t < 50 * 86_400 {
                k % 1000 == 7
            } else {
                k % 1000 == 7 || k % 1000 == 507 || k % 1000 == 907
            }
        });
        let [(x1, n1), (x2, n2)] = th.science;
        assert_eq!((x1, n1, x2, n2), (26, 25_920, 78, 25_921));
        let d = th.drifts();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].figure, "wrong_canonical_frac");
        assert_eq!(d[0].z, proportion_z(26, 25_920, 78, 25_921).unwrap());
        assert!((d[0].z - 5.1).abs() < 0.05, "{}", d[0].z);
        assert_eq!(
            message("project main", &d[0], &th.days()),
            "project main: wrong_canonical_frac drifts: 0.100 % in days 5–35 → 0.301 % in \
             days 65–95 (z = 5.1); the run has not reached a steady state"
        );
    }

    #[test]
    fn rates_and_deadlines_by_thirds() {
        let mut th = Thirds::new(window(), None);
        // Valid workunits: 1000 in the first third, 1300 in the last (z = 300/√2300
        // = 6.26), 40 in the middle (not counted).
        let mut wu = WorkunitRow::from_template(&WuTemplate::default(), 0);
        wu.assimilate_state = AssimilateState::Done;
        wu.canonical_resultid = ResultId(1);
        for (n, day) in [(1000, 10), (40, 50), (1300, 80)] {
            wu.assimilated_time = crate::server::types::db_time(day * 86_400);
            for _ in 0..n {
                th.add_workunit(&wu);
            }
        }
        assert_eq!(th.valid, [1000, 1300]);
        // Deadlines: sent on day 10 and day 70, 5 % failed in both.
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::Over);
        for day in [10, 70] {
            r.sent_time = day * 86_400;
            r.report_deadline = Time::from(r.sent_time) + 86_400;
            for k in 0..100 {
                r.outcome = Outcome::Success;
                r.received_time = r.sent_time + if k < 5 { 2 * 86_400 } else { 3600 };
                th.add_result(&r);
            }
        }
        assert_eq!(th.deadline, [(5, 100), (5, 100)]);
        let d = th.drifts();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].figure, "workunits_valid_per_day");
        assert_eq!((d[0].first, d[0].last), (1000.0 / 30.0, 1300.0 / 30.0));
        assert_eq!(d[0].z, 300.0 / 2300f64.sqrt());
    }

    #[test]
    fn a_run_too_short_for_thirds_counts_nothing() {
        let mut th = Thirds::new(Window { warmup: 0, end: 2 }, None);
        let mut wu = WorkunitRow::from_template(&WuTemplate::default(), 0);
        wu.canonical_resultid = ResultId(1);
        wu.canonical_correct = Some(false);
        th.add_workunit(&wu);
        assert_eq!(th.science, [(0, 0), (0, 0)]);
        assert_eq!(th.drifts(), vec![]);
    }
}
