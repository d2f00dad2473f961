//! From the points of a sweep to what its charts show: how each parameter's values
//! are placed on an axis ([`classify`]: numbers, durations or categories, also used
//! by the sweep's tables for their `_s` columns), the short names of the parameters,
//! the lines of a metric against one parameter ([`Sweep::series`]: one per
//! combination of the others, or marginal means when there are too many), and
//! whether two parameters form a grid of heatmap cells ([`Sweep::is_grid`]). No
//! drawing here: that is `super::charts`.

use super::load::{Point, Stat};
use super::{DAY, HOUR, Sweep};
use crate::base::units::parse_duration;
use crate::plot::format;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many lines (combinations of the other parameters' values) on one
/// chart: more would be unreadable, so the chart shows marginal means instead.
pub const MAX_GROUPS: usize = 8;
/// A heatmap axis with more values than this is not a grid worth drawing cell by
/// cell (the numbers would not fit): its points are drawn as dots instead.
pub const MAX_GRID_VALUES: usize = 24;

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
    pub(super) fn tick(&self, i: usize) -> String {
        match self.kind {
            Kind::Duration { .. } => format::trim(self.xs[i], 2),
            _ => self.values[i].clone(),
        }
    }

    /// One tick per value, at its position (a categorical axis).
    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        (0..self.values.len())
            .map(|i| (i as f64, self.tick(i)))
            .collect()
    }

    /// The ticks of the parameter's axis on a line chart or dot plot: the
    /// categories; for numbers and durations, the swept values themselves when they
    /// are few and far enough apart to be labelled (1, 2, 3 for a quorum, not 1.5),
    /// else none (round numbers chosen by the chart).
    pub(super) fn axis_ticks(&self) -> Vec<(f64, String)> {
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
    pub(super) fn range(&self) -> (f64, f64) {
        if self.kind == Kind::Category {
            return (-0.5, self.values.len() as f64 - 0.5);
        }
        padded(&self.xs)
    }

    /// `min_quorum = 2`, for legends.
    pub(super) fn equals(&self, i: usize) -> String {
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

/// The mean of the finite values; NaN when there are none.
pub(super) fn mean(vs: impl IntoIterator<Item = f64>) -> f64 {
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

impl Sweep {
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
    pub(crate) fn is_grid(&self, a: usize, b: usize) -> bool {
        let (na, nb) = (self.params[a].values.len(), self.params[b].values.len());
        let pairs: BTreeSet<(usize, usize)> =
            self.points.iter().map(|p| (p.idx[a], p.idx[b])).collect();
        na <= MAX_GRID_VALUES && nb <= MAX_GRID_VALUES && pairs.len() == na * nb
    }

    /// How many combinations of values the parameters other than `j` take.
    pub(super) fn series_count(&self, j: usize) -> usize {
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
}
