//! Credit (spec backend §6): the classic claimed/granted scheme, credit_new, and the
//! recent-average-credit update shared by both.

use crate::engine::Time;

/// 200 credits per GFLOPS-day of peak speed (spec backend §6.2).
pub(crate) const COBBLESTONE_SCALE: f64 = 200.0 / 86400e9;
/// FLOPS assumed when a version's estimate is missing or exactly 1e9 (`AVG_CPU_FPOPS`).
pub(crate) const AVG_CPU_FPOPS: f64 = 4.3e9;
/// Half-life of recent average credit (`CREDIT_HALF_LIFE`).
pub(crate) const CREDIT_HALF_LIFE: f64 = 7.0 * 86400.0;
/// Minimum samples before a host's averages are trusted (`MIN_HOST_SAMPLES`).
pub(crate) const MIN_HOST_SAMPLES: u32 = 10;
/// Minimum samples before an app version's averages are trusted.
pub(crate) const MIN_VERSION_SAMPLES: u32 = 100;
/// `CONS_VALID_HOST_SCALE`.
pub(crate) const CONS_VALID_HOST_SCALE: i32 = 10;

/// BOINC's `AVERAGE` (`lib/average.h`): a mean over the first `thresh` samples, then
/// an exponential average with weight `weight`; samples are clipped at `avg × limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Average {
    pub n: u32,
    pub avg: f64,
}

impl Average {
    pub fn update(&mut self, sample: f64, thresh: u32, weight: f64, limit: f64) {
        if sample < 0.0 {
            return;
        }
        let mut s = sample;
        if self.n > 0 && self.avg > 0.0 && s > self.avg * limit {
            s = self.avg * limit;
        }
        self.n += 1;
        if self.n < thresh {
            self.avg += (s - self.avg) / self.n as f64;
        } else {
            self.avg += weight * (s - self.avg);
        }
    }
}

/// BOINC's `AVERAGE_VAR`: an [`Average`] that also tracks the variance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AverageVar {
    pub avg: Average,
    pub var: f64,
}

impl AverageVar {
    pub fn update(&mut self, sample: f64, thresh: u32, weight: f64, limit: f64) {
        if sample < 0.0 {
            return;
        }
        let old = self.avg.avg;
        self.avg.update(sample, thresh, weight, limit);
        let d = sample - old;
        let w = if self.avg.n < thresh {
            1.0 / self.avg.n as f64
        } else {
            weight
        };
        self.var += w * (d * d - self.var);
    }
}

/// HAV average parameters: (threshold, weight, limit).
pub(crate) const HAV_AVG: (u32, f64, f64) = (20, 0.01, 10.0);
/// App-version average parameters.
pub(crate) const AV_AVG: (u32, f64, f64) = (100, 0.001, 10.0);

/// Classic granted credit: `median_mean_credit` over the VALID results' claims
/// (spec backend §6.1), including its quirk that near-zero claims count in the sum of
/// the ≥ 3 case while the divisor is `N − 2`.
pub(crate) fn median_mean_credit(claims: &[f64]) -> f64 {
    let mut v: Vec<f64> = claims.iter().copied().filter(|c| *c >= 0.001).collect();
    match v.len() {
        0 => 0.001,
        1 => v[0],
        2 => v[0].min(v[1]),
        n => {
            v.sort_by(f64::total_cmp);
            let small: f64 = claims.iter().filter(|c| **c < 0.001).sum();
            let sum: f64 = v[1..n - 1].iter().sum::<f64>() + small;
            sum / (n - 2) as f64
        }
    }
}

/// Classic claimed credit from benchmarks: `cpu_time × (0.5 p_fpops + 0.5 p_iops) /
/// 1e9 × 100 / 86400` (spec backend §6.1, default weights and scale).
pub(crate) fn classic_claimed_credit(cpu_time: f64, p_fpops: f64, p_iops: f64) -> f64 {
    cpu_time * (0.5 * p_fpops + 0.5 * p_iops) / 1e9 * 100.0 / 86400.0
}

/// credit_new's `pegged_average` (spec backend §6.2).
pub(crate) fn pegged_average(v: &[f64], anchor: f64) -> f64 {
    match v.len() {
        0 => anchor,
        1 => v[0],
        _ => {
            let (mut num, mut den) = (0.0, 0.0);
            for &x in v {
                let w = 1.0 / (0.1 * anchor + (anchor - x).abs());
                num += w * x;
                den += w;
            }
            num / den
        }
    }
}

/// How a result's PFC was obtained (credit_new `get_pfc` modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PfcMode {
    Normal,
    Approx,
    WuEstimate,
    Invalid,
}

/// The recent average credit update `update_average` (spec backend §6.3). Returns the
/// new `(avg, avg_time)`.
pub(crate) fn update_average(
    now: Time,
    start: Time,
    work: f64,
    half_life: f64,
    avg: f64,
    avg_time: Option<Time>,
) -> (f64, Time) {
    let mut avg = avg;
    if let Some(avg_time) = avg_time {
        let diff = (now - avg_time) as f64;
        let w = (-diff * std::f64::consts::LN_2 / half_life).exp();
        if 1.0 - w > 1e-6 {
            avg = avg * w + (1.0 - w) * work / (diff / 86400.0);
        } else {
            avg += std::f64::consts::LN_2 * work * 86400.0 / half_life;
        }
    } else {
        let diff = (now - start).max(1) as f64;
        avg = work / (diff / 86400.0);
    }
    (avg, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_examples_from_the_spec() {
        assert_eq!(median_mean_credit(&[100.0, 150.0]), 100.0);
        assert_eq!(median_mean_credit(&[80.0, 100.0, 150.0]), 100.0);
        assert_eq!(median_mean_credit(&[100.0]), 100.0);
        assert_eq!(median_mean_credit(&[]), 0.001);
    }

    #[test]
    fn credit_new_cold_start_examples() {
        // One VALID result: 86400 s at 1 GFLOPS → 200.
        let one = pegged_average(&[86400.0 * 1e9], 8.64e13) * COBBLESTONE_SCALE;
        assert!((one - 200.0).abs() < 1e-9);
        // Two: raw 8.64e13 and 1.728e14 with E = 8.64e13 → 216.67 each.
        let two = pegged_average(&[8.64e13, 1.728e14], 8.64e13) * COBBLESTONE_SCALE;
        assert!((two - 216.666_666).abs() < 1e-3, "{two}");
    }

    #[test]
    fn average_follows_boinc() {
        let mut a = Average::default();
        a.update(10.0, 20, 0.01, 10.0);
        a.update(20.0, 20, 0.01, 10.0);
        assert_eq!(a.n, 2);
        assert!((a.avg - 15.0).abs() < 1e-12);
        a.update(1000.0, 20, 0.01, 10.0); // clipped at 150
        assert!((a.avg - 60.0).abs() < 1e-12);
    }
}
