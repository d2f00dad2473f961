//! A histogram with fixed-width bins: the distributions of `histograms.csv` and
//! the percentiles of `summary.csv`.

/// A histogram with fixed-width bins from `lo`, and counts below and above the range.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    pub lo: f64,
    pub width: f64,
    pub counts: Vec<u64>,
    pub below: u64,
    pub above: u64,
}

impl Hist {
    pub(crate) fn new(lo: f64, hi: f64, width: f64) -> Self {
        let n = ((hi - lo) / width).ceil().max(1.0) as usize;
        Hist {
            lo,
            width,
            counts: vec![0; n],
            below: 0,
            above: 0,
        }
    }

    pub fn add(&mut self, x: f64) {
        if x < self.lo {
            self.below += 1;
            return;
        }
        let k = ((x - self.lo) / self.width).floor() as usize;
        match self.counts.get_mut(k) {
            Some(c) => *c += 1,
            None => self.above += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.below + self.above + self.counts.iter().sum::<u64>()
    }

    /// The `q`-quantile (0..=1), to within one bin: the upper edge of the bin where
    /// the cumulative count reaches `q·n`. `None` without samples.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        self.quantile_among(q, 0)
    }

    /// The `q`-quantile of these values together with `zeros` more values of 0
    /// (below every bin): 0 when the quantile falls among those, else as
    /// [`Self::quantile`]. `None` without any value.
    pub(crate) fn quantile_among(&self, q: f64, zeros: u64) -> Option<f64> {
        let n = self.total() + zeros;
        if n == 0 {
            return None;
        }
        let target = ((q * n as f64).ceil() as u64).max(1);
        if target <= zeros {
            return Some(0.0);
        }
        let target = target - zeros;
        let mut cum = self.below;
        if cum >= target {
            return Some(self.lo);
        }
        for (k, c) in self.counts.iter().enumerate() {
            cum += c;
            if cum >= target {
                return Some(self.lo + (k + 1) as f64 * self.width);
            }
        }
        Some(f64::INFINITY)
    }
}
