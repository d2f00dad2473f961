//! The arithmetic behind the charts, kept apart from drawing so it can be tested on
//! known inputs: bucket sums turned into rates per day or hour, Lorenz curves (the
//! Gini coefficient is [`crate::stats::headline::gini`], shared with `summary.csv`), percentiles and re-binning of histograms.

use super::data::Bin;

pub(crate) const DAY: i64 = 86_400;
pub(crate) const HOUR: i64 = 3_600;

/// The window, in seconds, that per-day charts sum their buckets over: one day
/// (daily totals) when the run lasts at least four days, so there are enough
/// points to show a trend; else a multiple of the bucket interval that gives about
/// 24 points. Always a whole number of buckets, so no bucket straddles two windows.
pub(crate) fn day_window(duration_s: i64, interval_s: i64) -> i64 {
    let interval = interval_s.max(1);
    let target = if duration_s >= 4 * DAY {
        DAY
    } else {
        duration_s / 24
    };
    interval * (target / interval).max(1)
}

/// Points over the run of the finer charts, at most (about).
pub(crate) const FINE_POINTS: i64 = 180;

/// The window, in seconds, of the finer charts (per-hour rates): a whole number of
/// buckets giving at most about [`FINE_POINTS`] points over the run.
pub(crate) fn fine_window(duration_s: i64, interval_s: i64) -> i64 {
    let interval = interval_s.max(1);
    let buckets = (duration_s + interval - 1) / interval;
    interval * ((buckets + FINE_POINTS - 1) / FINE_POINTS).max(1)
}

/// Sums bucket values into windows of `window` seconds over `[0, end)`. A bucket is
/// counted in the window its start falls into; the bucket at `end` itself (events
/// of the run's last second) goes into the last window. Returns one sum per window.
pub(crate) fn window_sums(samples: &[(i64, f64)], window: i64, end: i64) -> Vec<f64> {
    if end <= 0 || window <= 0 {
        return Vec::new();
    }
    let n = ((end + window - 1) / window) as usize;
    let mut sums = vec![0.0; n];
    for &(t, v) in samples {
        let k = (t.max(0) / window) as usize;
        sums[k.min(n - 1)] += v;
    }
    sums
}

/// The middle of each window and its length, in seconds (the last window may be cut
/// short by the end of the run).
pub(crate) fn window_spans(window: i64, end: i64) -> Vec<(f64, f64)> {
    if end <= 0 || window <= 0 {
        return Vec::new();
    }
    let n = (end + window - 1) / window;
    (0..n)
        .map(|k| {
            let start = k * window;
            let len = window.min(end - start);
            (start as f64 + len as f64 / 2.0, len as f64)
        })
        .collect()
}

/// Bucket values as a rate per `per_s` seconds (86400 for "per day"): each window's
/// sum divided by its length, plotted at the window's middle (in seconds). With
/// one-day windows over whole days this is exactly the daily total.
pub fn rates(samples: &[(i64, f64)], window: i64, end: i64, per_s: f64) -> Vec<(f64, f64)> {
    window_sums(samples, window, end)
        .into_iter()
        .zip(window_spans(window, end))
        .map(|(sum, (x, len))| (x, sum * per_s / len))
        .collect()
}

/// Per window of `window` seconds over `[0, end)`, the largest bucket value in it
/// (its middle, the value; NaN for a window without a bucket): the peak that a
/// window's mean would spread over the window.
pub(crate) fn window_max(samples: &[(i64, f64)], window: i64, end: i64) -> Vec<(f64, f64)> {
    window_pick(samples, window, end, f64::max)
}

/// [`window_max`] for the smallest value: the trough of a gauge that should stay
/// high (a job cache that empties).
pub(crate) fn window_min(samples: &[(i64, f64)], window: i64, end: i64) -> Vec<(f64, f64)> {
    window_pick(samples, window, end, f64::min)
}

/// Per window, the value `pick` keeps of its buckets' (`f64::max`, `f64::min`).
fn window_pick(
    samples: &[(i64, f64)],
    window: i64,
    end: i64,
    pick: fn(f64, f64) -> f64,
) -> Vec<(f64, f64)> {
    let spans = window_spans(window, end);
    let mut kept = vec![f64::NAN; spans.len()];
    for &(t, v) in samples {
        if let Some(m) =
            kept.get_mut(((t.max(0) / window.max(1)) as usize).min(spans.len().saturating_sub(1)))
        {
            *m = if m.is_nan() { v } else { pick(*m, v) };
        }
    }
    spans
        .into_iter()
        .zip(kept)
        .map(|((x, _), m)| (x, m))
        .collect()
}

/// Per window, `num / den` (e.g. mean backoff = total backoff seconds / backoffs
/// started), or NaN where `den` is 0: a gap in the line, not a misleading zero.
pub(crate) fn ratios(
    num: &[(i64, f64)],
    den: &[(i64, f64)],
    window: i64,
    end: i64,
    scale: f64,
) -> Vec<(f64, f64)> {
    let n = window_sums(num, window, end);
    let d = window_sums(den, window, end);
    n.into_iter()
        .zip(d)
        .zip(window_spans(window, end))
        .map(|((n, d), (x, _))| (x, if d > 0.0 { n / d * scale } else { f64::NAN }))
        .collect()
}

/// The window, in seconds, of a rate over the measured window `[start, end]`: a
/// tenth of it, as a whole number of buckets (at least one), so the rate of each
/// window rests on enough events to be read.
pub(crate) fn tenth_window(start: i64, end: i64, interval_s: i64) -> i64 {
    let interval = interval_s.max(1);
    interval * ((end - start).max(0) / 10 / interval).max(1)
}

/// Per window of `window` seconds from `start`, `num / den` times `scale`, at the
/// window's middle; NaN where `den` is 0 (no rate, a gap). There are
/// `⌊(end − start) / window⌋` windows (at least one), the last one running to `end`
/// and so up to one window longer: a short remainder would rest on too few events.
/// A bucket counts in the window its start falls into; buckets starting before
/// `start` (the warm-up) count in none, and the bucket at `end` itself goes into
/// the last window.
pub(crate) fn ratios_from(
    num: &[(i64, f64)],
    den: &[(i64, f64)],
    start: i64,
    window: i64,
    end: i64,
    scale: f64,
) -> Vec<(f64, f64)> {
    if end <= start || window <= 0 {
        return Vec::new();
    }
    let n = ((end - start) / window).max(1) as usize;
    let sums = |s: &[(i64, f64)]| {
        let mut out = vec![0.0; n];
        for &(t, v) in s.iter().filter(|p| p.0 >= start) {
            out[(((t - start) / window) as usize).min(n - 1)] += v;
        }
        out
    };
    let (nums, dens) = (sums(num), sums(den));
    (0..n)
        .map(|k| {
            let lo = start + k as i64 * window;
            let hi = if k + 1 == n { end } else { lo + window };
            let x = (lo + hi) as f64 / 2.0;
            let y = if dens[k] > 0.0 {
                nums[k] / dens[k] * scale
            } else {
                f64::NAN
            };
            (x, y)
        })
        .collect()
}

/// At most `max` of `points`, evenly spaced, first and last kept: sampled gauges of
/// long runs stay light in the SVG without changing their shape at chart scale.
pub fn thin<T: Copy>(points: &[T], max: usize) -> Vec<T> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)])
        .collect()
}

/// Lorenz curve of non-negative values: from (0, 0), for the poorest k of n hosts,
/// (k/n, their share of the total); ends at (1, 1). At most `max_points` points
/// (evenly chosen; the curve is piecewise linear, so the shape survives).
/// Empty when the values sum to 0.
pub(crate) fn lorenz(values: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let mut x: Vec<f64> = values.iter().map(|v| v.max(0.0)).collect();
    x.sort_by(f64::total_cmp);
    let total: f64 = x.iter().sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let n = x.len() as f64;
    let mut curve = Vec::with_capacity(x.len() + 1);
    curve.push((0.0, 0.0));
    let mut cum = 0.0;
    for (i, v) in x.iter().enumerate() {
        cum += v;
        curve.push(((i + 1) as f64 / n, cum / total));
    }
    thin(&curve, max_points)
}

/// The `q` quantile (0..1) of a histogram, interpolating linearly inside a bin.
/// Unbounded bins give their bound. `None` for an empty histogram.
pub(crate) fn quantile(bins: &[Bin], q: f64) -> Option<f64> {
    let mut sorted: Vec<Bin> = bins.iter().copied().filter(|b| b.count > 0.0).collect();
    sorted.sort_by(|a, b| {
        let key = |b: &Bin| b.lower.unwrap_or(f64::NEG_INFINITY);
        key(a).total_cmp(&key(b))
    });
    let total: f64 = sorted.iter().map(|b| b.count).sum();
    if total <= 0.0 {
        return None;
    }
    let target = q.clamp(0.0, 1.0) * total;
    let mut cum = 0.0;
    for b in &sorted {
        if cum + b.count >= target {
            return match (b.lower, b.upper) {
                (Some(lo), Some(hi)) => Some(lo + (hi - lo) * ((target - cum) / b.count)),
                (None, Some(hi)) => Some(hi),
                (Some(lo), None) => Some(lo),
                (None, None) => None,
            };
        }
        cum += b.count;
    }
    sorted.last().and_then(|b| b.upper.or(b.lower))
}

/// The empirical cumulative distribution of a histogram: at each finite upper bin
/// edge, ascending, the fraction of all counts below it (values beyond the range
/// count in the total, so the curve then stays under 1). Empty without counts.
pub(crate) fn cdf(bins: &[Bin]) -> Vec<(f64, f64)> {
    let total: f64 = bins.iter().map(|b| b.count).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let mut edges: Vec<(f64, f64)> = bins
        .iter()
        .filter_map(|b| b.upper.map(|u| (u, b.count)))
        .collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cum = 0.0;
    edges
        .into_iter()
        .map(|(u, c)| {
            cum += c;
            (u, cum / total)
        })
        .collect()
}

/// Histogram bins regrouped for display: bins of `width` from `lo` up to `hi`, each
/// original bin counted in the display bin holding its middle (its finite bound
/// when unbounded). Returns the bins `(lower, upper, count)` and the counts left out
/// below `lo` and at or above `hi`.
pub(crate) fn rebin(
    bins: &[Bin],
    lo: f64,
    hi: f64,
    width: f64,
) -> (Vec<(f64, f64, f64)>, f64, f64) {
    let n = (((hi - lo) / width).ceil().max(1.0)) as usize;
    let mut out: Vec<(f64, f64, f64)> = (0..n)
        .map(|i| (lo + i as f64 * width, lo + (i + 1) as f64 * width, 0.0))
        .collect();
    let (mut below, mut above) = (0.0, 0.0);
    for b in bins {
        let mid = match (b.lower, b.upper) {
            (Some(l), Some(u)) => (l + u) / 2.0,
            (None, Some(u)) => u - f64::MIN_POSITIVE,
            (Some(l), None) => l,
            (None, None) => continue,
        };
        // An unbounded bin lies wholly outside any finite display range it touches.
        if mid < lo || b.lower.is_none() && b.upper.is_some_and(|u| u <= lo) {
            below += b.count;
        } else if mid >= out[n - 1].1 || b.upper.is_none() {
            above += b.count;
        } else {
            let i = (((mid - lo) / width).floor() as usize).min(n - 1);
            out[i].2 += b.count;
        }
    }
    (out, below, above)
}

/// A bin width in seconds for a histogram of durations spanning `span_s`: the
/// smallest round duration (1, 2, 5, 10, 15, 30 s or min, 1, 2, 3, 6, 12 h, 1, 2,
/// 7 d) giving at most `max_bins` bins, then rounded to a multiple of `base_s` (the
/// width of the original bins, when positive) so no original bin is split.
pub(crate) fn nice_duration_width(span_s: f64, max_bins: f64, base_s: f64) -> f64 {
    const STEPS: [f64; 20] = [
        1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
        10800.0, 21600.0, 43200.0, 86400.0, 172800.0, 604800.0,
    ];
    let raw = (span_s / max_bins).max(f64::MIN_POSITIVE);
    let w = STEPS
        .iter()
        .copied()
        .find(|w| *w >= raw)
        .unwrap_or_else(|| (raw / 604800.0).ceil() * 604800.0);
    if base_s > 0.0 {
        (w / base_s).round().max(1.0) * base_s
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 100-hour run, 10 h of warm-up: windows of 9 h from hour 10; the warm-up's
    /// buckets count in none, the bucket at the end in the last window.
    #[test]
    fn rates_per_tenth_of_the_measured_window() {
        assert_eq!(tenth_window(10 * HOUR, 100 * HOUR, HOUR), 9 * HOUR);
        assert_eq!(tenth_window(0, 5 * HOUR, HOUR), HOUR, "at least one bucket");
        let num: Vec<(i64, f64)> = (0..=100).map(|h| (h * HOUR, 1.0)).collect();
        let den: Vec<(i64, f64)> = (0..=100)
            .map(|h| (h * HOUR, if (19..28).contains(&h) { 0.0 } else { 4.0 }))
            .collect();
        let r = ratios_from(&num, &den, 10 * HOUR, 9 * HOUR, 100 * HOUR, 100.0);
        assert_eq!(r.len(), 10);
        assert_eq!(r[0], (14.5 * HOUR as f64, 25.0));
        assert!(r[1].1.is_nan(), "no canonical result in hours 19–27: a gap");
        // The last window, hours 91–99, and the bucket at hour 100: 10 / 40.
        assert_eq!(r[9], (95.5 * HOUR as f64, 25.0));
        // 95 hours from hour 10 in windows of 9 h: the last of 9 runs to the end.
        let r = ratios_from(&num, &den, 10 * HOUR, 9 * HOUR, 95 * HOUR, 100.0);
        assert_eq!(r.len(), 9);
        assert_eq!(r[8], ((82.0 + 95.0) / 2.0 * HOUR as f64, 25.0));
    }

    #[test]
    fn cdf_rises_to_the_share_inside_the_range() {
        let b = |lower, upper, count| Bin {
            lower,
            upper,
            count,
        };
        let bins = [
            b(Some(60.0), Some(120.0), 2.0),
            b(Some(0.0), Some(60.0), 1.0),
            b(Some(120.0), None, 1.0),
        ];
        assert_eq!(cdf(&bins), [(60.0, 0.25), (120.0, 0.75)]);
        assert!(cdf(&[]).is_empty());
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn lorenz_curve_runs_from_origin_to_one_below_the_diagonal() {
        let c = lorenz(&[3.0, 1.0, 0.0, 4.0], 100);
        assert_eq!(c.first(), Some(&(0.0, 0.0)));
        assert_eq!(c.last(), Some(&(1.0, 1.0)));
        assert_eq!(c[1], (0.25, 0.0));
        assert_eq!(c[2], (0.5, 0.125));
        assert_eq!(c[3], (0.75, 0.5));
        assert!(c.iter().all(|(x, y)| y <= x));
        // Equal values: the diagonal.
        assert!(lorenz(&[2.0; 4], 100).iter().all(|(x, y)| close(*x, *y)));
        // Thinned, the ends stay.
        let big: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let c = lorenz(&big, 300);
        assert_eq!(c.len(), 300);
        assert_eq!((c[0], c[299]), ((0.0, 0.0), (1.0, 1.0)));
        assert!(lorenz(&[0.0, 0.0], 10).is_empty());
    }

    #[test]
    fn hourly_buckets_become_daily_totals() {
        // Two days of hourly buckets, 1 per hour on day 0 and 2 per hour on day 1,
        // plus the bucket at the end (the run's last second).
        let mut s: Vec<(i64, f64)> = (0..48).map(|h| (h * HOUR, 1.0 + (h / 24) as f64)).collect();
        s.push((2 * DAY, 5.0));
        let r = rates(&s, DAY, 2 * DAY, DAY as f64);
        assert_eq!(r, [(43_200.0, 24.0), (129_600.0, 53.0)]);
        // The same as per-hour rates.
        let r = rates(&s, DAY, 2 * DAY, HOUR as f64);
        assert_eq!(r[0], (43_200.0, 1.0));
        // A run ending mid-window: the last window is shorter, its rate is scaled.
        let r = rates(&s[..36], DAY, 36 * HOUR, DAY as f64);
        assert_eq!(r, [(43_200.0, 24.0), (108_000.0, 48.0)]);
    }

    #[test]
    fn windows_suit_the_run_length() {
        assert_eq!(day_window(30 * DAY, HOUR), DAY);
        assert_eq!(day_window(30 * DAY, 7 * HOUR), 21 * HOUR);
        assert_eq!(day_window(2 * DAY, HOUR), 2 * HOUR);
        assert_eq!(day_window(2 * HOUR, HOUR), HOUR);
        assert_eq!(day_window(30 * DAY, 2 * DAY), 2 * DAY);
        assert_eq!(fine_window(30 * DAY, HOUR), 4 * HOUR);
        assert_eq!(fine_window(2 * DAY, HOUR), HOUR);
    }

    #[test]
    fn ratios_leave_gaps_where_nothing_happened() {
        let num = [(0, 7200.0), (HOUR, 0.0)];
        let den = [(0, 2.0), (HOUR, 0.0)];
        let r = ratios(&num, &den, HOUR, 2 * HOUR, 1.0 / HOUR as f64);
        assert_eq!(r[0].1, 1.0);
        assert!(r[1].1.is_nan());
    }

    #[test]
    fn quantiles_interpolate_inside_bins() {
        let bins = [
            Bin {
                lower: Some(0.0),
                upper: Some(10.0),
                count: 50.0,
            },
            Bin {
                lower: Some(10.0),
                upper: Some(20.0),
                count: 50.0,
            },
        ];
        assert_eq!(quantile(&bins, 0.5), Some(10.0));
        assert_eq!(quantile(&bins, 0.25), Some(5.0));
        assert_eq!(quantile(&bins, 0.9), Some(18.0));
        assert_eq!(quantile(&[], 0.5), None);
        let with_overflow = [
            bins[0],
            Bin {
                lower: Some(20.0),
                upper: None,
                count: 50.0,
            },
        ];
        assert_eq!(quantile(&with_overflow, 0.99), Some(20.0));
    }

    #[test]
    fn rebinning_keeps_every_count() {
        let bins: Vec<Bin> = (0..100)
            .map(|i| Bin {
                lower: Some(i as f64 * 60.0),
                upper: Some((i + 1) as f64 * 60.0),
                count: 1.0,
            })
            .chain([
                Bin {
                    lower: None,
                    upper: Some(0.0),
                    count: 3.0,
                },
                Bin {
                    lower: Some(6000.0),
                    upper: None,
                    count: 4.0,
                },
            ])
            .collect();
        let (out, below, above) = rebin(&bins, 0.0, 3000.0, 600.0);
        assert_eq!(out.len(), 5);
        assert!(out.iter().all(|b| b.2 == 10.0));
        assert_eq!((below, above), (3.0, 50.0 + 4.0));
    }

    #[test]
    fn nice_widths() {
        assert_eq!(nice_duration_width(100.0, 10.0, 0.0), 10.0);
        assert_eq!(nice_duration_width(130.0, 10.0, 0.0), 15.0);
        assert_eq!(nice_duration_width(7.0 * 86400.0, 80.0, 60.0), 10800.0);
        // Never narrower than, and always a multiple of, the original bins.
        assert_eq!(nice_duration_width(600.0, 80.0, 60.0), 60.0);
        assert_eq!(nice_duration_width(86400.0, 80.0, 7.0), 1799.0);
    }

    #[test]
    fn window_max_keeps_a_one_bucket_peak() {
        // Hourly buckets, windows of 3 hours: a 100 % hour among idle ones.
        let s = [(0, 0.1), (3600, 1.0), (7200, 0.0), (10_800, 0.2)];
        let m = window_max(&s, 3 * 3600, 4 * 3600);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], (5400.0, 1.0));
        assert_eq!(m[1].1, 0.2);
        assert!((rates(&s, 3 * 3600, 4 * 3600, 3600.0)[0].1 - 1.1 / 3.0).abs() < 1e-12);
        // And the trough: the idle hour of the first window.
        assert_eq!(
            window_min(&s, 3 * 3600, 4 * 3600),
            [(5400.0, 0.0), (12_600.0, 0.2)]
        );
    }

    #[test]
    fn thinning_keeps_the_ends() {
        let v: Vec<i32> = (0..1000).collect();
        let t = thin(&v, 11);
        assert_eq!(t, [0, 100, 200, 300, 400, 500, 599, 699, 799, 899, 999]);
        assert_eq!(thin(&v[..5], 11), [0, 1, 2, 3, 4]);
    }
}
