//! Charts of a parameter sweep, drawn from its `sweep-summary.csv` (`docs/plots.md`,
//! "Sweep charts"): each metric against each parameter, with the 95% confidence
//! band of the mean, and for each pair of parameters a heatmap of each metric.
//!
//! A sweep runs one base scenario at each point of a design (each point sets one or
//! more parameters, named by their scenario key paths) with several replications;
//! the file has one row per point with the mean, standard deviation and 95%
//! confidence interval of each metric over the replications. The sweep command
//! passes the parameter and metric names, in order, so no column name is guessed
//! from its suffix.
//!
//! Parameter values are kept as written in the sweep file (`3d`, `2`, `true`): they
//! name the lines and heatmap cells. A parameter whose values are all numbers or
//! durations is placed on a numeric axis (durations in days or hours); any other is
//! categorical, in first-appearance order.

use super::figure::{ColorScale, Figure, Layer, Panel, Tile, color};
use super::{PlotError, file_safe, format};
use crate::base::units::parse_duration;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// At most this many lines (combinations of the other parameters' values) on one
/// chart: more would be unreadable, so the chart shows marginal means instead.
pub const MAX_GROUPS: usize = 8;
/// A heatmap axis with more values than this is not a grid worth drawing cell by
/// cell (the numbers would not fit): its points are drawn as dots instead.
pub const MAX_GRID_VALUES: usize = 24;

const DAY: f64 = 86_400.0;
const HOUR: f64 = 3_600.0;

/// How a parameter's values are placed on an axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Numbers, placed at their value.
    Number,
    /// Durations (at least one written with a unit, `3d`), placed at their length
    /// in `unit` (`"days"` or `"hours"`) of `unit_s` seconds.
    Duration { unit_s: f64, unit: &'static str },
    /// Anything else (booleans, names): categories at 0, 1, … in first-appearance
    /// order.
    Category,
}

/// A value as written in the sweep file, without surrounding quotes.
fn unquote(raw: &str) -> &str {
    let t = raw.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.trim();
        }
    }
    t
}

/// A plain finite number (`2`, `0.5`, `-1e3`); `None` otherwise (`nan`, `inf` and
/// durations with a unit are not numbers).
fn as_number(raw: &str) -> Option<f64> {
    unquote(raw).parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A duration in seconds as the scenario reads it (`86400`, `3d`, `6h`, `90m`,
/// `30s`).
fn as_duration(raw: &str) -> Option<f64> {
    parse_duration(unquote(raw)).ok().map(|s| s as f64)
}

/// The kind of a parameter with these values: numbers if all are plain numbers,
/// durations if all are numbers or durations and at least one has a unit (plain
/// numbers are then seconds), categories otherwise. Durations are shown in days
/// when the largest is at least two days, else in hours.
pub fn classify(values: &[&str]) -> Kind {
    if values.iter().all(|v| as_number(v).is_some()) {
        return Kind::Number;
    }
    let secs: Option<Vec<f64>> = values.iter().map(|v| as_duration(v)).collect();
    match secs {
        Some(s) => {
            let max = s.iter().copied().fold(0.0, f64::max);
            if max >= 2.0 * DAY {
                Kind::Duration {
                    unit_s: DAY,
                    unit: "days",
                }
            } else {
                Kind::Duration {
                    unit_s: HOUR,
                    unit: "hours",
                }
            }
        }
        None => Kind::Category,
    }
}

/// The shortest suffix of each key path (whole components) that tells it apart from
/// the others: `delay_bound` for `project.main.workunit.delay_bound`, or
/// `a.workunit.delay_bound` beside `project.b.workunit.delay_bound`.
pub fn short_names(keys: &[String]) -> Vec<String> {
    keys.iter()
        .enumerate()
        .map(|(i, key)| {
            let parts: Vec<&str> = key.split('.').collect();
            (1..=parts.len())
                .map(|k| parts[parts.len() - k..].join("."))
                .find(|tail| {
                    keys.iter()
                        .enumerate()
                        .all(|(o, other)| o == i || !ends_with_components(other, tail))
                })
                .unwrap_or_else(|| key.clone())
        })
        .collect()
}

/// Whether the key path `key` ends with the components `tail` (`a.b.c` ends with
/// `b.c`, not with `.c` of `xb.c`).
fn ends_with_components(key: &str, tail: &str) -> bool {
    key == tail || key.ends_with(&format!(".{tail}"))
}

/// A swept parameter and its distinct values.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its key path, as in the sweep file and the CSV header.
    pub key: String,
    /// The shortest unique end of the key path (axis labels, legends, file names).
    pub short: String,
    pub kind: Kind,
    /// Distinct values as written (the first spelling of each: `3d` and `72h` are
    /// one value), in axis order: ascending for numbers and durations, first
    /// appearance for categories.
    pub values: Vec<String>,
    /// The axis position of each value: the number, the duration in the unit, or
    /// the category's index.
    pub xs: Vec<f64>,
}

impl Param {
    /// The parameter of key `key` taking `raw[i]` at point `i`, and the index of
    /// each point's value in [`Param::values`].
    pub fn new(key: &str, short: &str, raw: &[&str]) -> (Param, Vec<usize>) {
        let kind = classify(raw);
        let pos = |v: &str| match &kind {
            Kind::Number => as_number(v).unwrap_or(f64::NAN),
            Kind::Duration { unit_s, .. } => as_duration(v).unwrap_or(f64::NAN) / unit_s,
            Kind::Category => f64::NAN,
        };
        // Distinct values (by position for numbers, by text for categories), first
        // appearance order.
        let mut values: Vec<String> = Vec::new();
        let mut xs: Vec<f64> = Vec::new();
        let mut first: Vec<usize> = Vec::with_capacity(raw.len());
        for v in raw {
            let v = unquote(v);
            let found = match kind {
                Kind::Category => values.iter().position(|u| u == v),
                _ => xs.iter().position(|x| *x == pos(v)),
            };
            first.push(found.unwrap_or_else(|| {
                values.push(v.to_string());
                xs.push(pos(v));
                values.len() - 1
            }));
        }
        if kind == Kind::Category {
            xs = (0..values.len()).map(|i| i as f64).collect();
            let p = Param {
                key: key.into(),
                short: short.into(),
                kind,
                values,
                xs,
            };
            return (p, first);
        }
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
        let mut rank = vec![0; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        let p = Param {
            key: key.into(),
            short: short.into(),
            kind,
            values: order.iter().map(|&i| values[i].clone()).collect(),
            xs: order.iter().map(|&i| xs[i]).collect(),
        };
        (p, first.into_iter().map(|i| rank[i]).collect())
    }

    /// The axis label: the short name and its unit, `delay_bound (days)`.
    pub fn label(&self) -> String {
        match &self.kind {
            Kind::Duration { unit, .. } => format!("{} ({unit})", self.short),
            _ => self.short.clone(),
        }
    }

    /// The tick label of value `i` on a categorical axis: durations as the number
    /// in the axis's unit (the label names it), anything else as written.
    fn tick(&self, i: usize) -> String {
        match self.kind {
            Kind::Duration { .. } => format::trim(self.xs[i], 2),
            _ => self.values[i].clone(),
        }
    }

    /// One tick per value, at its position (a categorical axis).
    fn ticks(&self) -> Vec<(f64, String)> {
        (0..self.values.len())
            .map(|i| (i as f64, self.tick(i)))
            .collect()
    }

    /// The ticks of the parameter's axis on a line chart or dot plot: the
    /// categories; for numbers and durations, the swept values themselves when they
    /// are few and far enough apart to be labelled (1, 2, 3 for a quorum, not 1.5),
    /// else none (round numbers chosen by the chart).
    fn axis_ticks(&self) -> Vec<(f64, String)> {
        if self.kind == Kind::Category {
            return self.ticks();
        }
        let span = self.xs.last().unwrap_or(&0.0) - self.xs.first().unwrap_or(&0.0);
        let spread = self.xs.windows(2).all(|w| w[1] - w[0] >= span / 25.0);
        if self.xs.len() > 12 || !spread {
            return Vec::new();
        }
        (0..self.xs.len())
            .map(|i| (self.xs[i], self.tick(i)))
            .collect()
    }

    /// The axis range: a little beyond the values on a numeric axis, half a cell
    /// beyond the first and last category.
    fn range(&self) -> (f64, f64) {
        if self.kind == Kind::Category {
            return (-0.5, self.values.len() as f64 - 0.5);
        }
        padded(&self.xs)
    }

    /// `min_quorum = 2`, for legends.
    fn equals(&self, i: usize) -> String {
        format!("{} = {}", self.short, self.values[i])
    }
}

/// The range of `xs` widened by 5% on each side (±1 for a single value).
fn padded(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        (0.0, 1.0)
    } else if hi > lo {
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

/// A metric at one point: mean and 95% confidence interval over the replications;
/// NaN where the file has no value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
}

/// One row of `sweep-summary.csv`.
#[derive(Clone, Debug)]
pub struct Point {
    pub id: u64,
    /// Index of the point's value of each parameter in [`Param::values`].
    pub idx: Vec<usize>,
    /// Replications with results.
    pub n: u64,
    /// One per metric.
    pub stats: Vec<Stat>,
}

/// How a metric is shown, from its unit suffix (`docs/outputs.md` conventions).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricUnit {
    /// Values are multiplied by this before drawing (100 for percentages, 1/3600
    /// for hours).
    pub factor: f64,
    /// The metric in words, without its unit suffix (`deadline fail`).
    pub words: String,
    /// The unit for the axis label (`%`, `hours`, `PFLOP`, `credit`), or empty.
    pub unit: String,
    /// Appended to numbers in heatmap cells (` %`, ` h`), or empty.
    pub suffix: String,
}

impl MetricUnit {
    /// The unit of `metric`, whose values reach `max_abs`: `_frac` in percent,
    /// `_s` in days, hours, minutes or seconds (whichever keeps the largest at 2 or
    /// more), `_flops` with an SI prefix, `_credit` in credit; `_per_day` and
    /// anything else as they are.
    pub fn of(metric: &str, max_abs: f64) -> MetricUnit {
        let words = |stem: &str| stem.replace('_', " ");
        let unit = |factor: f64, stem: &str, unit: &str, suffix: &str| MetricUnit {
            factor,
            words: words(stem),
            unit: unit.into(),
            suffix: suffix.into(),
        };
        if let Some(stem) = metric.strip_suffix("_frac") {
            unit(100.0, stem, "%", " %")
        } else if let Some(stem) = metric.strip_suffix("_s") {
            let (secs, name, short) = if max_abs >= 2.0 * DAY {
                (DAY, "days", "d")
            } else if max_abs >= 2.0 * HOUR {
                (HOUR, "hours", "h")
            } else if max_abs >= 120.0 {
                (60.0, "minutes", "min")
            } else {
                (1.0, "seconds", "s")
            };
            unit(1.0 / secs, stem, name, &format!(" {short}"))
        } else if let Some(stem) = metric.strip_suffix("_flops") {
            let (div, prefix) = format::si_scale(max_abs);
            let u = format!("{prefix}FLOP");
            unit(1.0 / div, stem, &u, &format!(" {u}"))
        } else if let Some(stem) = metric.strip_suffix("_credit") {
            unit(1.0, stem, "credit", "")
        } else {
            unit(1.0, metric, "", "")
        }
    }

    /// The axis label: `deadline fail (%)`, `workunits valid per day`.
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.words.clone()
        } else {
            format!("{} ({})", self.words, self.unit)
        }
    }

    /// The metric's column and the unit it is drawn in, for captions:
    /// `` `deadline_fail_frac` in % ``.
    pub fn described(&self, metric: &str) -> String {
        if self.unit.is_empty() {
            format!("`{metric}`")
        } else {
            format!("`{metric}` in {}", self.unit)
        }
    }

    /// A drawn (already scaled) value, short, for a heatmap cell: `0.0123`,
    /// `4,512`, `12.5 h`, `–` for none.
    pub fn cell(&self, v: f64) -> String {
        if !v.is_finite() {
            return "–".into();
        }
        let n = if v.abs() >= 1000.0 {
            format::number(v.round())
        } else {
            format::number(v)
        };
        format!("{n}{}", self.suffix)
    }
}

/// The metric's name in a title: a few well-known ones get a word (`Throughput`),
/// the others their name without the unit suffix, capitalised.
fn metric_title(metric: &str) -> String {
    let known = match metric {
        // Throughput is valid work only (docs/outputs.md, "The figures a designer
        // compares"); the sum with error workunits is never called that.
        "workunits_valid_per_day" => Some("Throughput"),
        "workunits_error_per_day" => Some("Workunits in error per day"),
        "workunits_assimilated_per_day" => Some("Valid + error workunits per day"),
        "results_reported_per_day" => Some("Results reported per day"),
        "deadline_fail_frac" => Some("Deadline failures"),
        "deadline_miss_frac" => Some("Late share of reported results"),
        "wrong_canonical_frac" => Some("Science error rate"),
        "credit_per_host_gini" => Some("Credit inequality (Gini)"),
        "wasted_cpu_frac" => Some("Wasted CPU share"),
        "hosts_idle_frac" => Some("Idle host capacity"),
        _ => None,
    };
    if let Some(k) = known {
        return k.into();
    }
    // `turnaround p90` → `Turnaround (90th percentile)`.
    let words: Vec<String> = MetricUnit::of(metric, 0.0)
        .words
        .split(' ')
        .map(
            |w| match w.strip_prefix('p').map(|d| (d, d.parse::<u32>())) {
                Some((_, Ok(50))) => "(median)".to_string(),
                Some((d, Ok(n))) if d.len() == 2 => {
                    let th = match n % 10 {
                        1 if n != 11 => "st",
                        2 if n != 12 => "nd",
                        3 if n != 13 => "rd",
                        _ => "th",
                    };
                    format!("({n}{th} percentile)")
                }
                _ => w.to_string(),
            },
        )
        .collect();
    capitalise(&words.join(" "))
}

/// The mean of the finite values; NaN when there are none.
fn mean(vs: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in vs.into_iter().filter(|v| v.is_finite()) {
        sum += v;
        n += 1;
    }
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

/// One line of a chart against a parameter: its label and, at each value of the
/// parameter it has points for, (value index, mean, band low, band high).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(usize, f64, f64, f64)>,
}

/// How the lines of a chart against a parameter were formed.
#[derive(Clone, Debug, PartialEq)]
pub enum Grouping {
    /// One parameter: a single line.
    Single,
    /// One line per combination of the other parameters' values.
    ByOthers,
    /// Too many combinations: the marginal mean over the other parameters.
    Marginal,
}

/// What the sweep's objective says about its points (`best.json`), for the
/// heatmaps: the best point, the points within the noise of it, the points that
/// meet the constraints, and the constraints' upper limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// The best point's id (`point` column).
    pub best: Option<u64>,
    /// Points whose objective cannot be told apart from the best's at 95%.
    pub within_noise: Vec<u64>,
    /// Points whose means meet every constraint; `None` when there are no
    /// constraints (nothing to outline).
    pub feasible: Option<Vec<u64>>,
    /// By metric, the lowest upper limit of the constraints on it (`m < 0.05`).
    pub limits: BTreeMap<String, f64>,
}

/// The mark written before a heatmap cell's number: the best point's cell and
/// the cells of points within the noise of it.
pub const BEST_MARK: &str = "★";
pub const NEAR_MARK: &str = "≈";

/// The sweep: its parameters, metrics and points, as read from the file.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub params: Vec<Param>,
    pub metrics: Vec<String>,
    pub points: Vec<Point>,
    /// The objective's verdict; empty without an objective.
    pub marks: Marks,
}

impl Sweep {
    /// Reads `sweep-summary.csv` with these parameter and metric columns. Errors
    /// (bad input) name the file and line: a missing file or column, a value that
    /// is not a number, no points.
    pub fn load(path: &Path, params: &[String], metrics: &[String]) -> Result<Sweep, PlotError> {
        let bad = |line: u64, msg: String| {
            PlotError::BadInput(format!("{}: line {line}: {msg}", path.display()))
        };
        let mut reader = csv::ReaderBuilder::new()
            .from_path(path)
            .map_err(|e| PlotError::BadInput(format!("cannot read {}: {e}", path.display())))?;
        let header = reader
            .headers()
            .map_err(|e| bad(1, format!("not a CSV file: {e}")))?
            .clone();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| bad(1, format!("no column `{name}` in the header")))
        };
        let point_col = col("point")?;
        let n_col = col("n")?;
        let param_cols = params
            .iter()
            .map(|p| col(p))
            .collect::<Result<Vec<_>, _>>()?;
        let metric_cols = metrics
            .iter()
            .map(|m| {
                Ok([
                    col(&format!("{m}_mean"))?,
                    col(&format!("{m}_ci95_low"))?,
                    col(&format!("{m}_ci95_high"))?,
                ])
            })
            .collect::<Result<Vec<_>, PlotError>>()?;

        let mut raw: Vec<Vec<String>> = vec![Vec::new(); params.len()];
        let mut points = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                bad(line, e.to_string())
            })?;
            let line = record.position().map_or(0, |p| p.line());
            let field = |i: usize| record.get(i).unwrap_or("").trim();
            let whole = |name: &str, i: usize| {
                let s = field(i);
                s.parse::<u64>()
                    .ok()
                    .or_else(|| {
                        s.parse::<f64>()
                            .ok()
                            .filter(|v| v.fract() == 0.0 && *v >= 0.0 && *v < 1e15)
                            .map(|v| v as u64)
                    })
                    .ok_or_else(|| bad(line, format!("`{name}` is not a whole number ≥ 0: `{s}`")))
            };
            let float = |name: String, i: usize| {
                let s = field(i);
                if s.is_empty() {
                    return Ok(f64::NAN);
                }
                s.parse::<f64>()
                    .map(|v| if v.is_finite() { v } else { f64::NAN })
                    .map_err(|_| bad(line, format!("`{name}` is not a number: `{s}`")))
            };
            let id = whole("point", point_col)?;
            let n = if field(n_col).is_empty() {
                0
            } else {
                whole("n", n_col)?
            };
            for (j, &c) in param_cols.iter().enumerate() {
                if field(c).is_empty() {
                    return Err(bad(line, format!("`{}` is empty", params[j])));
                }
                raw[j].push(field(c).to_string());
            }
            let mut stats = Vec::with_capacity(metrics.len());
            for (m, cols) in metrics.iter().zip(&metric_cols) {
                stats.push(Stat {
                    mean: float(format!("{m}_mean"), cols[0])?,
                    lo: float(format!("{m}_ci95_low"), cols[1])?,
                    hi: float(format!("{m}_ci95_high"), cols[2])?,
                });
            }
            points.push(Point {
                id,
                idx: Vec::new(),
                n,
                stats,
            });
        }
        if points.is_empty() {
            return Err(bad(2, "no sweep points (only a header)".into()));
        }
        let shorts = short_names(params);
        let mut ps = Vec::with_capacity(params.len());
        for (j, key) in params.iter().enumerate() {
            let values: Vec<&str> = raw[j].iter().map(String::as_str).collect();
            let (p, idx) = Param::new(key, &shorts[j], &values);
            for (point, i) in points.iter_mut().zip(idx) {
                point.idx.push(i);
            }
            ps.push(p);
        }
        Ok(Sweep {
            params: ps,
            metrics: metrics.to_vec(),
            points,
            marks: Marks::default(),
        })
    }

    /// The lines of metric `m` against parameter `j`: one per combination of the
    /// other parameters' values (in their axis order) when there are at most
    /// [`MAX_GROUPS`], else one line of marginal means. Each line has, at each value
    /// of `j`: with one point there, its mean and 95% confidence interval; with
    /// several (a design that repeats a point), the mean of their means and the
    /// envelope of their intervals; marginal: the mean of the point means and, as
    /// the band, their range (lowest to highest point mean).
    pub fn series(&self, m: usize, j: usize) -> (Grouping, Vec<Series>) {
        let others: Vec<usize> = (0..self.params.len()).filter(|&k| k != j).collect();
        let mut groups: BTreeMap<Vec<usize>, Vec<&Point>> = BTreeMap::new();
        for p in &self.points {
            groups
                .entry(others.iter().map(|&k| p.idx[k]).collect())
                .or_default()
                .push(p);
        }
        let at = |pts: &[&Point], xi: usize| -> Vec<Stat> {
            pts.iter()
                .filter(|p| p.idx[j] == xi)
                .map(|p| p.stats[m])
                .collect()
        };
        let nx = self.params[j].values.len();
        if others.is_empty() || groups.len() <= MAX_GROUPS {
            let grouping = if others.is_empty() {
                Grouping::Single
            } else {
                Grouping::ByOthers
            };
            let series = groups
                .iter()
                .map(|(key, pts)| {
                    let label = if others.is_empty() {
                        "mean".to_string()
                    } else {
                        others
                            .iter()
                            .zip(key)
                            .map(|(&k, &i)| self.params[k].equals(i))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let points = (0..nx)
                        .filter_map(|xi| {
                            let s = at(pts, xi);
                            match s.as_slice() {
                                [] => None,
                                [one] => Some((xi, one.mean, one.lo, one.hi)),
                                many => Some((
                                    xi,
                                    mean(many.iter().map(|s| s.mean)),
                                    many.iter().map(|s| s.lo).fold(f64::NAN, f64::min),
                                    many.iter().map(|s| s.hi).fold(f64::NAN, f64::max),
                                )),
                            }
                        })
                        .collect();
                    Series { label, points }
                })
                .collect();
            return (grouping, series);
        }
        let all: Vec<&Point> = self.points.iter().collect();
        let points = (0..nx)
            .filter_map(|xi| {
                let s = at(&all, xi);
                if s.is_empty() {
                    return None;
                }
                let means: Vec<f64> = s.iter().map(|s| s.mean).filter(|v| v.is_finite()).collect();
                Some((
                    xi,
                    mean(means.iter().copied()),
                    means.iter().copied().fold(f64::NAN, f64::min),
                    means.iter().copied().fold(f64::NAN, f64::max),
                ))
            })
            .collect();
        let series = Series {
            label: "mean over the other parameters".into(),
            points,
        };
        (Grouping::Marginal, vec![series])
    }

    /// Whether the points form a full grid over parameters `a` and `b` (every pair of
    /// their values occurs) small enough to draw cell by cell.
    pub fn is_grid(&self, a: usize, b: usize) -> bool {
        let (na, nb) = (self.params[a].values.len(), self.params[b].values.len());
        let pairs: BTreeSet<(usize, usize)> =
            self.points.iter().map(|p| (p.idx[a], p.idx[b])).collect();
        na <= MAX_GRID_VALUES && nb <= MAX_GRID_VALUES && pairs.len() == na * nb
    }

    /// The unit of metric `m`, from the largest value it reaches.
    fn unit(&self, m: usize) -> MetricUnit {
        let max = self
            .points
            .iter()
            .flat_map(|p| [p.stats[m].mean, p.stats[m].lo, p.stats[m].hi])
            .filter(|v| v.is_finite())
            .fold(0.0, |a: f64, v| a.max(v.abs()));
        MetricUnit::of(&self.metrics[m], max)
    }

    /// "5 replications per point" (or "3–5").
    fn replications(&self) -> String {
        let lo = self.points.iter().map(|p| p.n).min().unwrap_or(0);
        let hi = self.points.iter().map(|p| p.n).max().unwrap_or(0);
        let n = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        let s = if hi == 1 { "" } else { "s" };
        format!("{n} replication{s} per point")
    }

    /// The chart of metric `m` against parameter `j`, named `name`.
    pub fn versus(&self, m: usize, j: usize, name: &str) -> Figure {
        let metric = &self.metrics[m];
        let param = &self.params[j];
        let unit = self.unit(m);
        let f = unit.factor;
        let (grouping, series) = self.series(m, j);
        let others: Vec<&Param> = (0..self.params.len())
            .filter(|&k| k != j)
            .map(|k| &self.params[k])
            .collect();
        let other_names = |sep: &str| {
            others
                .iter()
                .map(|p| p.short.as_str())
                .collect::<Vec<_>>()
                .join(sep)
        };
        let mut panel = Panel::new("", &param.label(), &unit.label());
        panel.no_data = format!("no data: `{metric}_mean` is empty at every point");
        panel.x_range = Some(param.range());
        panel.x_ticks = param.axis_ticks();
        let band_label = match grouping {
            Grouping::Marginal => "range of the point means",
            _ => "95% confidence interval",
        };
        // Lines first: the legend lists them before the band.
        for (i, s) in series.iter().enumerate() {
            panel.layers.push(Layer::Line {
                label: s.label.clone(),
                color: color(i),
                points: s
                    .points
                    .iter()
                    .map(|&(xi, mean, _, _)| (param.xs[xi], mean * f))
                    .collect(),
                dashed: false,
                markers: true,
            });
        }
        for (i, s) in series.iter().enumerate() {
            let c = color(i);
            panel.layers.push(Layer::Band {
                label: band_label.into(),
                color: c,
                points: s
                    .points
                    .iter()
                    .map(|&(xi, _, lo, hi)| (param.xs[xi], lo * f, hi * f))
                    .collect(),
            });
        }
        panel.note = coinciding(&series, &others);
        let what = metric_title(metric);
        let title = match grouping {
            Grouping::Single => format!("{what} vs {}", param.short),
            Grouping::ByOthers => format!("{what} vs {}, by {}", param.short, other_names(" and ")),
            Grouping::Marginal => format!(
                "{what} vs {} (mean over {})",
                param.short,
                other_names(", ")
            ),
        };
        let axis = match &param.kind {
            Kind::Number => String::new(),
            Kind::Duration { unit, .. } => format!(" (in {unit})"),
            Kind::Category => " (as categories, in the order of the sweep file)".into(),
        };
        let lines = match grouping {
            Grouping::Single => "one line, the mean over the replications at each value, \
                 with its 95% confidence interval shaded"
                .to_string(),
            Grouping::ByOthers => format!(
                "one line per {} (legend), the mean over the replications at each point, with \
                 its 95% confidence interval shaded in the line's colour; where the bands of \
                 two points do not overlap, their difference is unlikely to be replication \
                 noise",
                match others.as_slice() {
                    [one] => format!("value of `{}`", one.key),
                    _ => format!(
                        "combination of values of {}",
                        others
                            .iter()
                            .map(|p| format!("`{}`", p.key))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                }
            ),
            Grouping::Marginal => format!(
                "the {} combinations of the other parameters ({}) are too many for one line \
                 each, so the line is the marginal mean: the mean of the point means at each \
                 value, and the shaded band their range, from the lowest to the highest point \
                 mean (not a confidence interval)",
                self.series_count(j),
                others
                    .iter()
                    .map(|p| format!("`{}`", p.key))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let caption = format!(
            "{what} ({}) against the swept parameter `{}`{axis}: {lines}. {}. From \
             sweep-summary.csv columns `{metric}_mean`, `{metric}_ci95_low` and \
             `{metric}_ci95_high`.",
            unit.described(metric),
            param.key,
            capitalise(&self.replications()),
        );
        Figure::new(name, &title, &caption, vec![panel])
    }

    /// How many combinations of values the parameters other than `j` take.
    fn series_count(&self, j: usize) -> usize {
        let keys: BTreeSet<Vec<usize>> = self
            .points
            .iter()
            .map(|p| {
                p.idx
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != j)
                    .map(|(_, &i)| i)
                    .collect()
            })
            .collect();
        keys.len()
    }

    /// The heatmap of metric `m` over parameters `a` (x) and `b` (y), named `name`:
    /// cells when the points form a grid of the two, else dots.
    pub fn heatmap(&self, m: usize, a: usize, b: usize, name: &str) -> Figure {
        let metric = &self.metrics[m];
        let (pa, pb) = (&self.params[a], &self.params[b]);
        let unit = self.unit(m);
        let f = unit.factor;
        let rest: Vec<String> = (0..self.params.len())
            .filter(|&k| k != a && k != b)
            .map(|k| format!("`{}`", self.params[k].key))
            .collect();
        let mut panel = Panel::new("", &pa.label(), &pb.label());
        panel.no_data = format!("no data: `{metric}_mean` is empty at every point");
        let grid = self.is_grid(a, b);
        let mut values = Vec::new();
        // Per cell: its mark before the number and whether it is outlined.
        let mut marks: Vec<(&str, bool)> = Vec::new();
        let layer_of =
            |scale: ColorScale, values: &[f64], cells: &[(f64, f64)], marks: &[(&str, bool)]| {
                if grid {
                    Layer::Tiles {
                        scale,
                        tiles: cells
                            .iter()
                            .zip(values)
                            .zip(marks)
                            .map(|((&(x, y), &v), &(mark, outlined))| Tile {
                                x,
                                y,
                                value: v,
                                text: if mark.is_empty() {
                                    unit.cell(v)
                                } else {
                                    format!("{mark} {}", unit.cell(v))
                                },
                                outlined,
                            })
                            .collect(),
                    }
                } else {
                    Layer::Dots {
                        scale,
                        points: cells
                            .iter()
                            .zip(values)
                            .map(|(&(x, y), &v)| (x, y, v))
                            .collect(),
                    }
                }
            };
        let mut cells = Vec::new();
        if grid {
            for i in 0..pa.values.len() {
                for k in 0..pb.values.len() {
                    let here = || {
                        self.points
                            .iter()
                            .filter(move |p| p.idx[a] == i && p.idx[b] == k)
                    };
                    let v = mean(here().map(|p| p.stats[m].mean));
                    cells.push((i as f64, k as f64));
                    values.push(v * f);
                    marks.push(self.marks.of_cell(here().map(|p| p.id)));
                }
            }
            panel.x_ticks = pa.ticks();
            panel.y_ticks = pb.ticks();
            panel.x_range = Some((-0.5, pa.values.len() as f64 - 0.5));
            panel.y_range = Some((-0.5, pb.values.len() as f64 - 0.5));
        } else {
            for p in &self.points {
                cells.push((pa.xs[p.idx[a]], pb.xs[p.idx[b]]));
                values.push(p.stats[m].mean * f);
            }
            panel.x_ticks = pa.axis_ticks();
            panel.y_ticks = pb.axis_ticks();
            panel.x_range = Some(pa.range());
            panel.y_range = Some(pb.range());
        }
        let (lo, hi) = match self.fixed_scale(m) {
            Some(top) => (0.0, top * f),
            None => {
                let finite = values.iter().copied().filter(|v| v.is_finite());
                let lo = finite.clone().fold(f64::INFINITY, f64::min);
                let hi = finite.fold(f64::NEG_INFINITY, f64::max);
                if lo <= hi { (lo, hi) } else { (0.0, 1.0) }
            }
        };
        let scale = ColorScale {
            label: format!("{}, mean", unit.label()),
            lo,
            hi,
        };
        // Without a single value, grey cells would hide the panel's "no data" note.
        if values.iter().any(|v| v.is_finite()) {
            panel.layers.push(layer_of(scale, &values, &cells, &marks));
        }

        let what = metric_title(metric);
        let title = format!("{what} by {} and {}", pa.short, pb.short);
        let averaged = if rest.is_empty() {
            String::new()
        } else {
            format!(
                " averaged over the values of {} (the mean of the point means)",
                rest.join(", ")
            )
        };
        let how = if grid {
            format!(
                "Each cell is one combination of `{}` (x) and `{}` (y); its colour and the \
                 number in it are the mean of {}{averaged}. Grey cells marked – have no value.",
                pa.key,
                pb.key,
                unit.described(metric)
            )
        } else {
            format!(
                "The sweep's points do not form a grid of `{}` × `{}` (a random or \
                 Latin-hypercube design), so each point is a dot at its values of the two \
                 (x and y), coloured by the mean of {} at that point{}.",
                pa.key,
                pb.key,
                unit.described(metric),
                if rest.is_empty() {
                    String::new()
                } else {
                    format!(" (whatever the values of {})", rest.join(", "))
                }
            )
        };
        let scale_words = match self.fixed_scale(m) {
            Some(top) if top < 1.0 => format!(
                "The colour scale is fixed from 0 to the constraint's limit ({}): yellow is \
                 the limit and anything above it, dark purple 0",
                unit.cell(top * f)
            ),
            Some(_) => "The colour scale is fixed from 0 to 100 %, so that a small \
                        fraction never looks large: yellow is 100 %, dark purple 0"
                .to_string(),
            None => "The colour bar on the right gives the scale: yellow is the highest \
                     value, dark purple the lowest"
                .to_string(),
        };
        let caption = format!(
            "{what} over two swept parameters. {how} {scale_words}.{} {}. From \
             sweep-summary.csv column `{metric}_mean`.",
            if grid {
                self.marks.caption(!rest.is_empty())
            } else {
                String::new()
            },
            capitalise(&self.replications()),
        );
        Figure::new(name, &title, &caption, vec![panel])
    }

    /// The fixed top of metric `m`'s colour scale (its lower end is 0): for a
    /// fraction (`_frac`), the lowest upper limit a constraint puts on it if any
    /// (below 1), else 1; `None` for other metrics (the scale spans their values).
    pub fn fixed_scale(&self, m: usize) -> Option<f64> {
        let metric = &self.metrics[m];
        if !metric.ends_with("_frac") {
            return None;
        }
        Some(match self.marks.limits.get(metric) {
            Some(&limit) if limit > 0.0 && limit < 1.0 => limit,
            _ => 1.0,
        })
    }

    /// Every sweep chart, metric by metric: the metric against each parameter
    /// (`<metric>_vs_<param>`), then its heatmap over each pair of parameters
    /// (`heatmap_<metric>_<p1>_<p2>`), names made file-safe and unique.
    pub fn figures(&self) -> Vec<Figure> {
        let mut used: Vec<String> = Vec::new();
        let mut unique = |n: String| {
            let mut n = file_safe(&n);
            while used.contains(&n) {
                n.push('_');
            }
            used.push(n.clone());
            n
        };
        let mut out = Vec::new();
        for (m, metric) in self.metrics.iter().enumerate() {
            for (j, p) in self.params.iter().enumerate() {
                let name = unique(format!("{metric}_vs_{}", p.short));
                out.push(self.versus(m, j, &name));
            }
            for a in 0..self.params.len() {
                for b in a + 1..self.params.len() {
                    let (pa, pb) = (&self.params[a].short, &self.params[b].short);
                    let name = unique(format!("heatmap_{metric}_{pa}_{pb}"));
                    out.push(self.heatmap(m, a, b, &name));
                }
            }
        }
        out
    }
}

impl Marks {
    /// The mark and the outline of a heatmap cell holding the points `ids`: the
    /// best mark if the best point is among them, else the within-the-noise mark if
    /// one of them is within the noise; outlined if one of them meets the
    /// constraints.
    fn of_cell(&self, ids: impl Iterator<Item = u64>) -> (&'static str, bool) {
        let (mut best, mut near, mut ok) = (false, false, false);
        for id in ids {
            best |= self.best == Some(id);
            near |= self.within_noise.contains(&id);
            ok |= self.feasible.as_ref().is_some_and(|f| f.contains(&id));
        }
        let mark = if best {
            BEST_MARK
        } else if near {
            NEAR_MARK
        } else {
            ""
        };
        (mark, ok)
    }

    /// The sentence of a heatmap's caption that explains its marks (empty without
    /// an objective). `averaged`: a cell holds several points.
    fn caption(&self, averaged: bool) -> String {
        let mut s = String::new();
        if self.best.is_some() {
            s.push_str(&format!(
                " {BEST_MARK} marks the best point under the objective (best.json), \
                 {NEAR_MARK} the points whose objective cannot be told apart from the best's \
                 at 95% (within the noise)."
            ));
        }
        if self.feasible.is_some() {
            s.push_str(
                " Framed cells (a black or white frame inside the edge) meet every \
                 constraint (on the means).",
            );
        }
        if averaged && !s.is_empty() {
            s.push_str(" A cell holding several points carries a mark if one of them has it.");
        }
        s
    }
}

/// A note naming lines drawn on top of each other (every mean within 0.5% of the
/// chart's range of the other's), which would otherwise hide all but the last:
/// `min_quorum = 1, 2 and 3 coincide`. Empty when none do.
pub fn coinciding(series: &[Series], others: &[&Param]) -> String {
    let means = || series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let lo = means()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let hi = means()
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let tol = if hi > lo { 0.005 * (hi - lo) } else { 0.0 };
    let same = |a: &Series, b: &Series| {
        a.points.len() == b.points.len()
            && a.points.iter().zip(&b.points).all(|(p, q)| {
                p.0 == q.0 && ((p.1 - q.1).abs() <= tol || (p.1.is_nan() && q.1.is_nan()))
            })
            && a.points.iter().any(|p| p.1.is_finite())
    };
    let mut taken = vec![false; series.len()];
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for i in 0..series.len() {
        if taken[i] {
            continue;
        }
        let c: Vec<usize> = (i..series.len())
            .filter(|&k| !taken[k] && same(&series[i], &series[k]))
            .collect();
        if c.len() > 1 {
            for &k in &c {
                taken[k] = true;
            }
            clusters.push(c);
        }
    }
    let and = |items: Vec<String>| match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => items.join(""),
    };
    let parts: Vec<String> = clusters
        .iter()
        .map(|c| {
            let labels: Vec<String> = c.iter().map(|&k| series[k].label.clone()).collect();
            match others {
                // `min_quorum = 1, 2 and 3`: the values after the first label's name.
                [one] => {
                    let prefix = format!("{} = ", one.short);
                    let values = labels
                        .iter()
                        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_string())
                        .collect();
                    format!("{prefix}{}", and(values))
                }
                _ => and(labels.iter().map(|l| format!("({l})")).collect()),
            }
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("lines drawn on top of each other: {}", parts.join("; "))
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Draws the sweep charts from `summary_csv` (sweep-summary.csv) into `out_dir` as
/// PNG and SVG; returns the chart names in order.
///
/// `params` are the swept parameters' key paths and `metrics` the metric names,
/// in the order the charts should follow; the file must have the columns `point`,
/// each parameter, `n`, and `<metric>_mean`, `<metric>_ci95_low` and
/// `<metric>_ci95_high` for each metric. A missing or malformed file is bad input
/// ([`PlotError::BadInput`], naming the file and line). `out_dir` is created if
/// needed; charts of the same names are replaced.
pub fn write_sweep_plots(
    summary_csv: &Path,
    out_dir: &Path,
    params: &[String],
    metrics: &[String],
    marks: &Marks,
) -> Result<Vec<String>, PlotError> {
    super::font::register().map_err(PlotError::Failed)?;
    let mut sweep = Sweep::load(summary_csv, params, metrics)?;
    sweep.marks = marks.clone();
    std::fs::create_dir_all(out_dir).map_err(|e| super::failed("create", out_dir, e))?;
    let mut names = Vec::new();
    for fig in sweep.figures() {
        super::write_figure(&fig, out_dir)?;
        names.push(fig.name);
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const DB: &str = "project.main.workunit.delay_bound";
    const Q: &str = "project.main.workunit.min_quorum";
    const THROUGHPUT: &str = "workunits_valid_per_day";
    const MISS: &str = "deadline_fail_frac";

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A point: its parameter values, n, and (mean, low, high) per metric (NaN: an
    /// empty field).
    type Row<'a> = (Vec<&'a str>, u32, Vec<[f64; 3]>);

    /// `sweep-summary.csv` as the sweep writes it (sd = a tenth of the mean).
    fn csv(params: &[&str], metrics: &[&str], rows: &[Row]) -> String {
        let mut head = vec!["point".to_string()];
        head.extend(params.iter().map(|p| p.to_string()));
        head.push("n".into());
        for m in metrics {
            for s in ["mean", "sd", "ci95_low", "ci95_high"] {
                head.push(format!("{m}_{s}"));
            }
        }
        let field = |v: f64| {
            if v.is_nan() {
                String::new()
            } else {
                format!("{v:?}")
            }
        };
        let mut out = head.join(",") + "\n";
        for (i, (values, n, stats)) in rows.iter().enumerate() {
            let mut f = vec![i.to_string()];
            f.extend(values.iter().map(|v| v.to_string()));
            f.push(n.to_string());
            for [mean, lo, hi] in stats {
                f.extend([field(*mean), field(mean / 10.0), field(*lo), field(*hi)]);
            }
            out += &(f.join(",") + "\n");
        }
        out
    }

    fn load(text: &str, params: &[&str], metrics: &[&str]) -> Sweep {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sweep-summary.csv");
        fs::write(&path, text).unwrap();
        Sweep::load(&path, &strings(params), &strings(metrics)).unwrap()
    }

    /// The 3 × 2 grid: delay_bound 1d, 3d, 7d × min_quorum 1, 2; throughput falls
    /// with the quorum, the miss rate with the delay bound.
    fn grid_rows() -> Vec<Row<'static>> {
        let mut rows = Vec::new();
        for (db, miss) in [("1d", 0.125), ("3d", 0.0456), ("7d", 0.0123)] {
            for (q, thr) in [("1", 4512.3), ("2", 2210.0)] {
                let thr = thr * (1.0 - miss);
                rows.push((
                    vec![db, q],
                    5,
                    vec![
                        [thr, thr - 50.0, thr + 50.0],
                        [miss, miss * 0.8, miss * 1.2],
                    ],
                ));
            }
        }
        rows
    }

    fn grid() -> Sweep {
        load(
            &csv(&[DB, Q], &[THROUGHPUT, MISS], &grid_rows()),
            &[DB, Q],
            &[THROUGHPUT, MISS],
        )
    }

    #[test]
    fn values_are_numbers_durations_or_categories() {
        assert_eq!(classify(&["1", "2", "3"]), Kind::Number);
        assert_eq!(classify(&["0.5", "-1e3", "86400"]), Kind::Number);
        let days = Kind::Duration {
            unit_s: DAY,
            unit: "days",
        };
        let hours = Kind::Duration {
            unit_s: HOUR,
            unit: "hours",
        };
        // One value with a unit makes them all durations, plain numbers in seconds.
        assert_eq!(classify(&["86400", "3d", "\"6h\""]), days);
        assert_eq!(classify(&["1d", "2d"]), days, "two days: days");
        assert_eq!(
            classify(&["6h", "90m", "30s", "1d"]),
            hours,
            "under two days"
        );
        assert_eq!(classify(&["47h", "3600"]), hours);
        assert_eq!(classify(&["true", "false"]), Kind::Category);
        assert_eq!(classify(&["1", "fast"]), Kind::Category);
        assert_eq!(classify(&["nan", "1"]), Kind::Category);
        assert_eq!(classify(&["3d", "soon"]), Kind::Category);
    }

    #[test]
    fn parameter_values_are_distinct_and_in_axis_order() {
        let (p, idx) = Param::new(DB, "delay_bound", &["3d", "1d", "72h", "14d", "36h"]);
        assert_eq!(
            p.values,
            ["1d", "36h", "3d", "14d"],
            "72h is 3d, spelled first 3d"
        );
        assert_eq!(p.xs, [1.0, 1.5, 3.0, 14.0]);
        assert_eq!(idx, [2, 0, 2, 3, 1]);
        assert_eq!(p.label(), "delay_bound (days)");
        assert_eq!(p.tick(1), "1.5");
        let (p, _) = Param::new(DB, "delay_bound", &["6h", "30m"]);
        assert_eq!(
            (p.label(), p.xs.clone()),
            ("delay_bound (hours)".into(), vec![0.5, 6.0])
        );
        let (p, idx) = Param::new(Q, "min_quorum", &["3", "1", "2", "1"]);
        assert_eq!(
            (p.label(), p.values.clone()),
            ("min_quorum".into(), strings(&["1", "2", "3"]))
        );
        assert_eq!(idx, [2, 0, 1, 0]);
        // Categories keep the order of first appearance and sit at 0, 1, ….
        let (p, idx) = Param::new("host.fast", "fast", &["true", "false", "'true'"]);
        assert_eq!(
            (p.values.clone(), p.xs.clone()),
            (strings(&["true", "false"]), vec![0.0, 1.0])
        );
        assert_eq!(idx, [0, 1, 0]);
        assert_eq!(
            p.ticks(),
            [(0.0, "true".to_string()), (1.0, "false".to_string())]
        );
        assert_eq!(p.range(), (-0.5, 1.5));
    }

    #[test]
    fn numeric_axes_tick_the_swept_values_when_they_fit() {
        let (p, _) = Param::new(Q, "min_quorum", &["1", "2", "3"]);
        let ticks: Vec<String> = p.axis_ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(ticks, ["1", "2", "3"]);
        let (p, _) = Param::new(DB, "delay_bound", &["1d", "2d", "7d"]);
        assert_eq!(
            p.axis_ticks(),
            [(1.0, "1".into()), (2.0, "2".into()), (7.0, "7".into())]
        );
        // Crowded values (0.001 beside 1) get round ticks instead.
        let (p, _) = Param::new("x", "x", &["0.001", "0.01", "1"]);
        assert!(p.axis_ticks().is_empty());
    }

    #[test]
    fn short_names_are_the_shortest_unique_ends_of_key_paths() {
        assert_eq!(
            short_names(&strings(&[DB, Q])),
            ["delay_bound", "min_quorum"]
        );
        assert_eq!(
            short_names(&strings(&[
                "project.a.workunit.delay_bound",
                "project.b.workunit.delay_bound",
                "simulation.seed"
            ])),
            ["a.workunit.delay_bound", "b.workunit.delay_bound", "seed"]
        );
        // `xdelay_bound` does not end with the component `delay_bound`.
        assert_eq!(
            short_names(&strings(&["a.delay_bound", "b.xdelay_bound"])),
            ["delay_bound", "xdelay_bound"]
        );
    }

    #[test]
    fn metric_units_follow_the_suffix() {
        let u = MetricUnit::of(MISS, 0.2);
        assert_eq!(
            (u.label(), u.factor),
            ("deadline fail (%)".to_string(), 100.0)
        );
        assert_eq!(u.cell(1.23), "1.23 %");
        let u = MetricUnit::of(THROUGHPUT, 4512.3);
        assert_eq!(u.label(), "workunits valid per day");
        assert_eq!(
            (u.cell(4512.3), u.cell(0.012345), u.cell(f64::NAN)),
            ("4,512".into(), "0.0123".into(), "–".into())
        );
        assert_eq!(
            MetricUnit::of("turnaround_p90_s", 3.0 * DAY).label(),
            "turnaround p90 (days)"
        );
        assert_eq!(
            MetricUnit::of("turnaround_p90_s", 3.0 * HOUR).label(),
            "turnaround p90 (hours)"
        );
        assert_eq!(
            MetricUnit::of("client_backoff_mean_s", 600.0).unit,
            "minutes"
        );
        assert_eq!(MetricUnit::of("x_s", 60.0).cell(45.0), "45 s");
        let u = MetricUnit::of("flops_useful_flops", 3.2e16);
        assert_eq!(
            (u.label(), u.factor),
            ("flops useful (PFLOP)".to_string(), 1e-15)
        );
        assert_eq!(
            MetricUnit::of("credit_granted_credit", 1.0).label(),
            "credit granted (credit)"
        );
        assert_eq!(
            MetricUnit::of("credit_per_host_gini", 1.0).label(),
            "credit per host gini"
        );
        assert_eq!(metric_title(THROUGHPUT), "Throughput");
        assert_eq!(
            metric_title("turnaround_p90_s"),
            "Turnaround (90th percentile)"
        );
        assert_eq!(metric_title("slack_p01_s"), "Slack (1st percentile)");
        assert_eq!(
            metric_title("time_to_canonical_p50_s"),
            "Time to canonical (median)"
        );
    }

    #[test]
    fn lines_are_one_per_value_of_the_other_parameter() {
        let s = grid();
        let (g, series) = s.series(0, 0);
        assert_eq!(g, Grouping::ByOthers);
        let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["min_quorum = 1", "min_quorum = 2"]);
        let thr = 4512.3 * (1.0 - 0.0456);
        assert_eq!(series[0].points[1], (1, thr, thr - 50.0, thr + 50.0));
        assert_eq!(series[0].points.len(), 3);
        let (_, series) = s.series(1, 1);
        assert_eq!(series.len(), 3);
        assert_eq!(series[2].label, "delay_bound = 7d");
        assert_eq!(series[2].points[0].1, 0.0123);
        // One parameter: one line.
        let one = load(
            &csv(
                &[Q],
                &[MISS],
                &[
                    (vec!["2"], 5, vec![[0.5, 0.4, 0.6]]),
                    (vec!["1"], 1, vec![[0.3, f64::NAN, f64::NAN]]),
                ],
            ),
            &[Q],
            &[MISS],
        );
        let (g, series) = one.series(0, 0);
        assert_eq!(g, Grouping::Single);
        assert_eq!(series[0].points[0].1, 0.3);
        assert!(series[0].points[0].2.is_nan(), "n = 1: no interval");
        assert_eq!(one.replications(), "1–5 replications per point");
    }

    #[test]
    fn a_repeated_point_averages_means_and_spans_both_intervals() {
        let rows = vec![
            (vec!["1", "a"], 5, vec![[10.0, 9.0, 11.0]]),
            (vec!["1", "a"], 5, vec![[20.0, 18.0, 23.0]]),
        ];
        let s = load(&csv(&["x", "y"], &["m"], &rows), &["x", "y"], &["m"]);
        assert_eq!(s.series(0, 0).1[0].points, [(0, 15.0, 9.0, 23.0)]);
    }

    #[test]
    fn too_many_groups_give_marginal_means_with_their_range() {
        // x: 2 values; y: 9 values, so 9 lines against x: too many.
        let mut rows = Vec::new();
        let ys = ["1", "2", "3", "4", "5", "6", "7", "8", "9"];
        for x in ["0", "1"] {
            for y in ys {
                let v = x.parse::<f64>().unwrap() * 100.0 + y.parse::<f64>().unwrap();
                rows.push((vec![x, y], 3, vec![[v, v - 1.0, v + 1.0]]));
            }
        }
        let s = load(&csv(&["x", "y"], &["m"], &rows), &["x", "y"], &["m"]);
        let (g, series) = s.series(0, 0);
        assert_eq!(g, Grouping::Marginal);
        assert_eq!(series.len(), 1);
        assert_eq!(
            series[0].points,
            [(0, 5.0, 1.0, 9.0), (1, 105.0, 101.0, 109.0)]
        );
        let fig = s.versus(0, 0, "m_vs_x");
        assert_eq!(fig.title, "M vs x (mean over y)");
        assert!(fig.caption.contains("marginal mean"), "{}", fig.caption);
        // Against y there are 2 groups: one line each.
        assert_eq!(s.series(0, 1).0, Grouping::ByOthers);
    }

    #[test]
    fn grids_are_told_apart_from_scattered_designs() {
        let s = grid();
        assert!(s.is_grid(0, 1));
        let mut rows = grid_rows();
        rows.pop();
        let s = load(
            &csv(
                &[DB, Q],
                &[MISS],
                &rows
                    .iter()
                    .map(|r| (r.0.clone(), r.1, vec![r.2[1]]))
                    .collect::<Vec<_>>(),
            ),
            &[DB, Q],
            &[MISS],
        );
        assert!(!s.is_grid(0, 1), "a missing cell");
        let fig = s.heatmap(0, 0, 1, "h");
        assert!(matches!(fig.panels[0].layers[0], Layer::Dots { .. }));
        assert!(fig.caption.contains("do not form a grid"));
        // A Latin hypercube: every value once.
        let lhs: Vec<Row> = [("10h", "0.1"), ("30h", "0.7"), ("20h", "0.4")]
            .into_iter()
            .map(|(a, b)| (vec![a, b], 2, vec![[1.0, 0.5, 1.5]]))
            .collect();
        let s = load(&csv(&[DB, "r"], &["m"], &lhs), &[DB, "r"], &["m"]);
        assert!(!s.is_grid(0, 1));
        // A full grid too large for numbers in cells.
        let values: Vec<String> = (0..=MAX_GRID_VALUES).map(|i| i.to_string()).collect();
        let big: Vec<Row> = values
            .iter()
            .flat_map(|a| ["x", "y"].map(|b| (vec![a.as_str(), b], 1, vec![[1.0, 1.0, 1.0]])))
            .collect();
        let s = load(&csv(&["a", "b"], &["m"], &big), &["a", "b"], &["m"]);
        assert!(!s.is_grid(0, 1));
    }

    #[test]
    fn heatmap_cells_hold_the_mean_over_the_other_parameters() {
        let mut rows = Vec::new();
        for (a, b, c, v) in [
            ("1", "x", "p", 1.0),
            ("1", "x", "q", 3.0),
            ("2", "x", "p", 5.0),
            ("2", "x", "q", 7.0),
            ("1", "y", "p", 0.0),
            ("2", "y", "q", f64::NAN),
        ] {
            rows.push((vec![a, b, c], 2, vec![[v, v, v]]));
        }
        let s = load(
            &csv(&["a", "b", "c"], &["m"], &rows),
            &["a", "b", "c"],
            &["m"],
        );
        let fig = s.heatmap(0, 0, 1, "h");
        let Layer::Tiles { scale, tiles } = &fig.panels[0].layers[0] else {
            panic!("tiles")
        };
        let cells: Vec<(f64, f64, String)> =
            tiles.iter().map(|t| (t.x, t.y, t.text.clone())).collect();
        assert_eq!(
            cells,
            [
                (0.0, 0.0, "2".into()),
                (0.0, 1.0, "0".into()),
                (1.0, 0.0, "6".into()),
                (1.0, 1.0, "–".into())
            ]
        );
        assert_eq!((scale.lo, scale.hi), (0.0, 6.0));
        assert_eq!(
            fig.panels[0].x_ticks,
            [(0.0, "1".to_string()), (1.0, "2".to_string())]
        );
        assert!(
            fig.caption.contains("averaged over the values of `c`"),
            "{}",
            fig.caption
        );
        // A metric with no value anywhere: the panel says so.
        let empty: Vec<Row> = rows
            .iter()
            .map(|r| (r.0.clone(), 0, vec![[f64::NAN; 3]]))
            .collect();
        let s = load(
            &csv(&["a", "b", "c"], &["m"], &empty),
            &["a", "b", "c"],
            &["m"],
        );
        let fig = s.heatmap(0, 0, 1, "h");
        assert!(!fig.panels[0].has_data());
        assert!(fig.panels[0].no_data.contains("`m_mean` is empty"));
        assert!(!s.versus(0, 0, "v").panels[0].has_data());
    }

    #[test]
    fn heatmaps_mark_the_best_the_near_and_the_feasible_cells_and_fix_fraction_scales() {
        let mut s = grid();
        // Without an objective: no marks, and a fraction spans 0–100 %.
        let fig = s.heatmap(1, 0, 1, "h");
        let Layer::Tiles { scale, tiles } = &fig.panels[0].layers[0] else {
            panic!("tiles")
        };
        assert_eq!((scale.lo, scale.hi), (0.0, 100.0));
        assert!(
            tiles
                .iter()
                .all(|t| !t.outlined && !t.text.contains(BEST_MARK))
        );
        assert!(
            fig.caption.contains("fixed from 0 to 100 %"),
            "{}",
            fig.caption
        );
        // Points in grid order: (1d, 1) = 0, (1d, 2) = 1, (3d, 1) = 2, ...
        s.marks = Marks {
            best: Some(2),
            within_noise: vec![4],
            feasible: Some(vec![2, 3, 4, 5]),
            limits: [(MISS.to_string(), 0.05)].into_iter().collect(),
        };
        let fig = s.heatmap(0, 0, 1, "h");
        let Layer::Tiles { scale, tiles } = &fig.panels[0].layers[0] else {
            panic!("tiles")
        };
        let texts: Vec<&str> = tiles.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            ["3,948", "1,934", "★ 4,307", "2,109", "≈ 4,457", "2,183"]
        );
        let framed: Vec<bool> = tiles.iter().map(|t| t.outlined).collect();
        assert_eq!(framed, [false, false, true, true, true, true]);
        // Throughput is not a fraction: its scale spans its values.
        assert_eq!(scale.hi.round(), 4457.0);
        for words in ["★ marks the best point", "≈ the points", "Framed cells"] {
            assert!(fig.caption.contains(words), "no `{words}`: {}", fig.caption);
        }
        // The miss rate: 0 to the constraint's limit, 5 %.
        let fig = s.heatmap(1, 0, 1, "h");
        let Layer::Tiles { scale, .. } = &fig.panels[0].layers[0] else {
            panic!("tiles")
        };
        assert_eq!((scale.lo, scale.hi), (0.0, 5.0));
        assert!(
            fig.caption.contains("constraint's limit (5 %)"),
            "{}",
            fig.caption
        );
        super::super::font::register().unwrap();
        let svg = fig.to_svg().unwrap();
        assert!(svg.contains("★ 4.56 %"), "the best cell's mark is drawn");
    }

    #[test]
    fn coinciding_lines_are_named_in_a_note() {
        let line = |label: &str, ys: &[f64]| Series {
            label: label.into(),
            points: ys.iter().enumerate().map(|(i, &y)| (i, y, y, y)).collect(),
        };
        let (q, _) = Param::new(Q, "min_quorum", &["1", "2", "3"]);
        let series = [
            line("min_quorum = 1", &[0.0, 50.0, 100.0]),
            line("min_quorum = 2", &[0.0, 50.2, 100.0]),
            line("min_quorum = 3", &[0.0, 50.0, 100.0]),
        ];
        assert_eq!(
            coinciding(&series, &[&q]),
            "lines drawn on top of each other: min_quorum = 1, 2 and 3"
        );
        let apart = [
            series[0].clone(),
            line("min_quorum = 2", &[0.0, 60.0, 100.0]),
        ];
        assert_eq!(coinciding(&apart, &[&q]), "");
    }

    #[test]
    fn malformed_files_are_bad_input_naming_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sweep-summary.csv");
        let err = |text: Option<&str>| {
            if let Some(t) = text {
                fs::write(&path, t).unwrap();
            }
            let e = write_sweep_plots(
                &path,
                tmp.path(),
                &strings(&[DB, Q]),
                &strings(&[MISS]),
                &Marks::default(),
            )
            .unwrap_err();
            assert!(matches!(e, PlotError::BadInput(_)), "{e}");
            assert!(e.to_string().contains("sweep-summary.csv"), "{e}");
            e.to_string()
        };
        assert!(err(None).contains("cannot read"));
        assert!(err(Some("")).contains("line 1: no column `point`"));
        let good = csv(
            &[DB, Q],
            &[MISS],
            &grid_rows()
                .iter()
                .map(|r| (r.0.clone(), r.1, vec![r.2[1]]))
                .collect::<Vec<_>>(),
        );
        let no_high = good.replace("deadline_fail_frac_ci95_high", "x");
        assert!(err(Some(&no_high)).contains("line 1: no column `deadline_fail_frac_ci95_high`"));
        let mut lines: Vec<String> = good.lines().map(String::from).collect();
        lines[2] = lines[2].replacen(",5,", ",5,oops,", 1);
        lines[2] = lines[2].rsplit_once(',').unwrap().0.to_string();
        let e = err(Some(&(lines.join("\n") + "\n")));
        assert!(
            e.contains("line 3: `deadline_fail_frac_mean` is not a number: `oops`"),
            "{e}"
        );
        assert!(err(Some(&good.replace("\n1,1d,2,", "\nx,1d,2,"))).contains("line 3: `point`"));
        assert!(err(Some("point,n\n")).contains("no column"));
        let header_only = good.lines().next().unwrap().to_string() + "\n";
        assert!(err(Some(&header_only)).contains("no sweep points"));
        let ragged = good.clone() + "9,1d\n";
        assert!(
            err(Some(&ragged)).contains("line 8"),
            "{}",
            err(Some(&ragged))
        );
    }

    #[test]
    fn writes_every_chart_as_png_and_svg_deterministically() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sweep-summary.csv");
        fs::write(&path, csv(&[DB, Q], &[THROUGHPUT, MISS], &grid_rows())).unwrap();
        let out = tmp.path().join("plots");
        let (params, metrics) = (strings(&[DB, Q]), strings(&[THROUGHPUT, MISS]));
        let names = write_sweep_plots(&path, &out, &params, &metrics, &Marks::default()).unwrap();
        assert_eq!(
            names,
            [
                "workunits_valid_per_day_vs_delay_bound",
                "workunits_valid_per_day_vs_min_quorum",
                "heatmap_workunits_valid_per_day_delay_bound_min_quorum",
                "deadline_fail_frac_vs_delay_bound",
                "deadline_fail_frac_vs_min_quorum",
                "heatmap_deadline_fail_frac_delay_bound_min_quorum",
            ]
        );
        let svg = |n: &str| fs::read_to_string(out.join(format!("{n}.svg"))).unwrap();
        let expect: [(&str, &[&str]); 6] = [
            (
                &names[0],
                &[
                    "Throughput vs delay_bound, by min_quorum",
                    "delay_bound (days)",
                    "workunits valid per day",
                    "min_quorum = 1",
                    "min_quorum = 2",
                    "95% confidence interval",
                    "=7",
                    "=3",
                ],
            ),
            (
                &names[1],
                &[
                    "Throughput vs min_quorum, by delay_bound",
                    "delay_bound = 1d",
                    "delay_bound = 7d",
                    "=1",
                    "=2",
                ],
            ),
            (
                &names[2],
                // 4512.3 × (1 − 0.0123) = 4456.8 → 4,457 in its cell.
                &[
                    "Throughput by delay_bound and min_quorum",
                    "4,457",
                    "2,109",
                    "yellow = high",
                    "workunits valid per day, mean",
                ],
            ),
            (
                &names[3],
                &[
                    "Deadline failures vs delay_bound, by min_quorum",
                    "deadline fail (%)",
                    "lines drawn on top of each other: min_quorum = 1 and 2",
                ],
            ),
            (
                &names[4],
                &[
                    "Deadline failures vs min_quorum, by delay_bound",
                    "delay_bound = 3d",
                ],
            ),
            (
                &names[5],
                &[
                    "Deadline failures by delay_bound and min_quorum",
                    "12.5 %",
                    "4.56 %",
                    "1.23 %",
                    "deadline fail (%), mean",
                ],
            ),
        ];
        for (name, needles) in expect {
            // The SVG's texts; `=x` asks for a text that is exactly `x` (a tick).
            let text = svg(name);
            let texts: Vec<&str> = text
                .split("<text")
                .skip(1)
                .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
                .collect();
            for n in needles {
                let found = match n.strip_prefix('=') {
                    Some(exact) => texts.contains(&exact),
                    None => texts.iter().any(|t| t.contains(n)),
                };
                assert!(found, "{name}: no `{n}` in {texts:?}");
            }
            let png = fs::read(out.join(format!("{name}.png"))).unwrap();
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}");
            assert!(png.len() > 10_000, "{name}: {} bytes", png.len());
        }
        let first: Vec<String> = names.iter().map(|n| svg(n)).collect();
        write_sweep_plots(&path, &out, &params, &metrics, &Marks::default()).unwrap();
        let second: Vec<String> = names.iter().map(|n| svg(n)).collect();
        assert!(first == second, "the SVG files differ between two writes");
    }
}
