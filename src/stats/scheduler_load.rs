//! The scheduler's load, for a project with a web server (`[project.NAME.server]`,
//! spec backend §2.4.0): how busy its processes were, how long RPCs waited for
//! one, and how many connections were refused or given up, per bucket of
//! `timeseries.csv` and over the measured window for `summary.csv`.
//!
//! The web server's counts are cumulative and sampled at the start of every bucket
//! (after every event of that second), so a bucket's figure is the difference of
//! two samples: bucket `k` covers `(k·interval, (k+1)·interval]`, as the data
//! server's bytes (`metrics::Transfers`). The waits' distribution is kept as a
//! histogram of the RPCs whose service started in the window.

use super::hist::Hist;
use crate::engine::Time;
use crate::world::SchedulerSample;

/// The series this module adds to `timeseries.csv` for a project with a web
/// server, per bucket, in this order (names carry their unit).
pub(crate) const SERIES: [&str; 7] = [
    "scheduler_busy_frac",
    "scheduler_queue_length",
    "scheduler_in_service",
    "rpcs_served",
    "rpcs_refused",
    "rpcs_timed_out",
    "rpc_wait_mean_s",
];

/// The columns `summary.csv` gets for a project with a web server: its processes
/// (a setting, so that a sweep can minimise it), then figures over the measured
/// window.
pub const COLUMNS: [&str; 9] = [
    "scheduler_processes",
    "scheduler_busy_frac",
    "rpc_wait_mean_s",
    "rpc_wait_p50_s",
    "rpc_wait_p90_s",
    "rpc_wait_p99_s",
    "rpcs_served",
    "rpcs_refused",
    "rpcs_timed_out",
];

/// Width of the wait histogram's bins, s, and its span: a wait past the span
/// counts above it (its percentile is then unknown).
const WAIT_BIN_S: f64 = 0.05;
const WAIT_SPAN_S: f64 = 7200.0;

/// One project's scheduler figures.
#[derive(Clone, Debug)]
pub struct SchedulerLoad {
    processes: u32,
    interval: Time,
    warmup: Time,
    /// The web server at the start of each bucket (index = bucket).
    samples: Vec<Option<SchedulerSample>>,
    /// Waits of the services started in the measured window, and their sum; a
    /// service that started the moment it was sent is counted apart, so that its
    /// wait reads 0, not the first bin's upper edge.
    waits: Hist,
    no_wait: u64,
    wait_sum: f64,
}

impl SchedulerLoad {
    pub fn new(processes: u32, interval: Time, warmup: Time) -> Self {
        SchedulerLoad {
            processes,
            interval: interval.max(1),
            warmup,
            samples: Vec::new(),
            waits: Hist::new(0.0, WAIT_SPAN_S, WAIT_BIN_S),
            no_wait: 0,
            wait_sum: 0.0,
        }
    }

    pub fn sample(&mut self, k: usize, s: SchedulerSample) {
        if self.samples.len() <= k {
            self.samples.resize(k + 1, None);
        }
        self.samples[k] = Some(s);
    }

    /// An RPC's service started at `now` after `wait` seconds.
    pub fn wait(&mut self, now: Time, wait: f64) {
        if now >= self.warmup {
            if wait > 0.0 {
                self.waits.add(wait);
            } else {
                self.no_wait += 1;
            }
            self.wait_sum += wait;
        }
    }

    /// Connections waiting at the start of bucket `k`, if sampled.
    pub fn queue_at(&self, k: usize) -> Option<f64> {
        self.samples
            .get(k)
            .copied()
            .flatten()
            .map(|s| s.waiting as f64)
    }

    /// Bucket `k`'s [`SERIES`] values; none where a sample is missing (the run
    /// ends inside the bucket).
    pub fn bucket(&self, k: usize) -> [Option<f64>; SERIES.len()] {
        let at = |k: usize| self.samples.get(k).copied().flatten();
        let (Some(a), b) = (at(k), at(k + 1)) else {
            return [None; SERIES.len()];
        };
        let d = |f: fn(&SchedulerSample) -> f64| b.map(|b| f(&b) - f(&a));
        let served = d(|s| s.counts.served as f64);
        let capacity = self.processes as f64 * self.interval as f64;
        [
            d(|s| s.busy_s).map(|x| x / capacity),
            Some(a.waiting as f64),
            Some(a.in_service as f64),
            served,
            d(|s| s.counts.refused as f64),
            d(|s| s.counts.timed_out as f64),
            served
                .filter(|&n| n > 0.0)
                .and_then(|n| d(|s| s.counts.wait_s).map(|w| w / n)),
        ]
    }

    /// The [`COLUMNS`] over the measured window: from the sample at or after the
    /// warm-up to the last one. None without two such samples.
    pub fn columns(&self) -> [Option<f64>; COLUMNS.len()] {
        let first = (self.warmup + self.interval - 1) / self.interval;
        let last = self.samples.iter().rposition(Option::is_some);
        let pair = last.and_then(|l| {
            let f = first as usize;
            (l > f).then(|| {
                (
                    self.samples.get(f).copied().flatten(),
                    self.samples[l],
                    l - f,
                )
            })
        });
        let Some((Some(a), Some(b), n)) = pair else {
            let mut none = [None; COLUMNS.len()];
            none[0] = Some(self.processes as f64);
            return none;
        };
        let served = (b.counts.served - a.counts.served) as f64;
        let capacity = self.processes as f64 * (n as Time * self.interval) as f64;
        let q = |p: f64| (self.waits.quantile_among(p, self.no_wait)).filter(|x| x.is_finite());
        let n_waits = (self.waits.total() + self.no_wait) as f64;
        [
            Some(self.processes as f64),
            Some((b.busy_s - a.busy_s) / capacity),
            (n_waits > 0.0).then(|| self.wait_sum / n_waits),
            q(0.5),
            q(0.9),
            q(0.99),
            Some(served),
            Some((b.counts.refused - a.counts.refused) as f64),
            Some((b.counts.timed_out - a.counts.timed_out) as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::web_server::Counts;

    fn s(busy_s: f64, served: u64, refused: u64, wait_s: f64, waiting: u64) -> SchedulerSample {
        SchedulerSample {
            busy_s,
            waiting,
            in_service: 1,
            counts: Counts {
                served,
                refused,
                wait_s,
                ..Counts::default()
            },
        }
    }

    #[test]
    fn a_bucket_is_the_difference_of_its_two_samples() {
        let mut l = SchedulerLoad::new(2, 100, 0);
        l.sample(0, s(0.0, 0, 0, 0.0, 0));
        l.sample(1, s(50.0, 10, 1, 20.0, 3));
        let b = l.bucket(0);
        assert_eq!(b[0], Some(0.25), "50 process-seconds of 2 × 100");
        assert_eq!(b[1], Some(0.0), "the queue at the bucket's start");
        assert_eq!(b[3], Some(10.0));
        assert_eq!(b[4], Some(1.0));
        assert_eq!(b[6], Some(2.0), "20 s over 10 RPCs");
        // The last bucket has no closing sample.
        assert_eq!(l.bucket(1)[3], None);
        assert_eq!(l.bucket(1)[1], Some(3.0));
    }

    #[test]
    fn the_window_starts_at_the_first_sample_after_the_warmup() {
        let mut l = SchedulerLoad::new(1, 100, 150);
        l.sample(0, s(0.0, 0, 0, 0.0, 0));
        l.sample(1, s(10.0, 5, 0, 0.0, 0));
        l.sample(2, s(60.0, 8, 2, 0.0, 0));
        l.sample(3, s(80.0, 9, 2, 0.0, 0));
        l.wait(100, 9.0); // before the warm-up: not counted
        l.wait(200, 0.0);
        l.wait(200, 0.0);
        l.wait(200, 1.0);
        l.wait(250, 3.0);
        let c = l.columns();
        assert_eq!(c[0], Some(1.0), "one process");
        assert_eq!(c[1], Some(20.0 / 100.0), "from sample 2 to sample 3");
        assert_eq!(c[2], Some(1.0));
        assert_eq!(c[3], Some(0.0), "half the services did not wait");
        assert_eq!(c[6], Some(1.0));
        assert_eq!(c[7], Some(0.0));
        let p99 = c[5].unwrap();
        assert!((p99 - 3.0).abs() <= WAIT_BIN_S + 1e-9, "{p99}");
    }
}
