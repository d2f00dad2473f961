//! From the points of a sweep to what its charts show: how each parameter's values
//! are placed on an axis ([`classify`]: numbers, durations or categories, also used
//! by the sweep's tables for their `_s` columns), the short names of the parameters,
//! the lines of a metric against one parameter ([`Sweep::series`]: one per
//! combination of the others, in one panel or in small multiples, never a mean over
//! swept values), and whether two parameters form a grid of heatmap cells
//! ([`Sweep::is_grid_by`]). No drawing here: that is `super::charts`.

use super::columns;
use super::load::{Point, Stat};
use super::{DAY, HOUR, Sweep};
use crate::base::units::parse_duration;
use crate::plot::format;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many lines (combinations of the other parameters' values) on one
/// panel: more would be unreadable, so the chart is split into panels
/// ([`Grouping::Panels`]), never averaged.
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

/// What readers see for the parameter of key path `key` whose shortest unique end
/// is `short` (axis labels, legends, titles, the sweep's printout): `short`, except
/// for an app's adaptive replication level, `project.P.app.target_nresults` (or
/// `project.P.app.A.target_nresults` for one of several apps), shown as `adaptive
/// replication (app.target_nresults)` so that it is not taken for the workunit
/// template's `target_nresults` (`project.P.workunit.target_nresults`). The two
/// mean different things: the app's level replicates a job only for hosts not yet
/// trusted (spec backend §2.4.4 step 5, BOINC's `app.target_nresults` in
/// `sched/sched_send.cpp`), the template's is the number of results every workunit
/// gets at first. The file names of the charts keep `short`.
pub fn display_name(key: &str, short: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    let adaptive = matches!(parts.len(), 4 | 5)
        && parts[0] == "project"
        && parts[2] == "app"
        && parts.last() == Some(&"target_nresults");
    if !adaptive {
        return short.to_string();
    }
    let tail = parts[2..].join(".");
    // `short` is longer only when another key shares the tail (two projects).
    let shown = if short.len() > tail.len() {
        short
    } else {
        &tail
    };
    format!("adaptive replication ({shown})")
}

/// [`display_name`] of each key path, from its [`short_names`].
pub fn display_names(keys: &[String]) -> Vec<String> {
    keys.iter()
        .zip(short_names(keys))
        .map(|(k, s)| display_name(k, &s))
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
    /// The shortest unique end of the key path (file names).
    pub short: String,
    /// What readers see: `short`, or `adaptive replication (app.target_nresults)`
    /// ([`display_name`]); axis labels, legends and titles.
    pub name: String,
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
        // The cases are names, whatever they look like (`3d`, `2`): categories in
        // the sweep file's order.
        let kind = if key == columns::CASE {
            Kind::Category
        } else {
            classify(raw)
        };
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
                name: display_name(key, short),
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
            name: display_name(key, short),
            kind,
            values: order.iter().map(|&i| values[i].clone()).collect(),
            xs: order.iter().map(|&i| xs[i]).collect(),
        };
        (p, first.into_iter().map(|i| rank[i]).collect())
    }

    /// The axis label: the short name and its unit, `delay_bound (days)`.
    pub fn label(&self) -> String {
        match &self.kind {
            Kind::Duration { unit, .. } => format!("{} ({unit})", self.name),
            _ => self.name.clone(),
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
        format!("{} = {}", self.name, self.values[i])
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

/// At most this many panels (small multiples) in one chart: more would be too
/// small to read, so the chart is not drawn and the sweep says which parameters to
/// fix ([`NotDrawn`]).
pub const MAX_PANELS: usize = 12;

/// How the lines of a chart against a parameter were formed. Each line holds the
/// points of one configuration of every other parameter: no line, cell or band
/// is ever a mean over swept values (a designer would read such a mean as a
/// configuration that was never run).
#[derive(Clone, Debug, PartialEq)]
pub enum Grouping {
    /// One parameter: a single line.
    Single,
    /// One line per combination of the other parameters' values, in one panel.
    ByOthers,
    /// Too many combinations for one panel: one panel per combination of the
    /// values of parameters `panels`, and in each one line per value of parameter
    /// `legend`, or a single line when `legend` is `None` (then `panels` are all
    /// the other parameters).
    Panels {
        legend: Option<usize>,
        panels: Vec<usize>,
    },
}

/// The lines of a chart, panel by panel: each panel's title (the values fixed in
/// it; empty for a single panel) and its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Lines {
    pub grouping: Grouping,
    pub panels: Vec<(String, Vec<Series>)>,
}

/// A chart that is not drawn: in one panel it would have to average over swept
/// parameters, and one panel per combination of their values would be more than
/// [`MAX_PANELS`] (or more than [`MAX_GROUPS`] lines per panel). The message names
/// the chart and the parameters to fix.
#[derive(Clone, Debug, PartialEq)]
pub struct NotDrawn(pub String);

/// `case (3 values) and min_quorum (2 values)`.
fn counted(params: &[&Param]) -> String {
    let each: Vec<String> = params
        .iter()
        .map(|p| format!("{} ({} values)", p.name, p.values.len()))
        .collect();
    match each.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => each.join(""),
    }
}

/// The tail of a [`NotDrawn`] message: what it would take, and what to do.
pub(super) fn fix_hint(fixed: &[&Param], count: usize) -> String {
    let names: Vec<&str> = fixed.iter().map(|p| p.name.as_str()).collect();
    format!(
        "one panel per combination of {} would be {count} panels, more than {MAX_PANELS}, \
         and one panel averaging over them would show configurations that were never run; \
         fix {} with [sweep.set] (or a case) or sweep fewer parameters",
        counted(fixed),
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    )
}

impl Sweep {
    /// The points grouped by their values of parameters `keys` (in the order of
    /// those values), with the panel title naming them (`case = quorum 1,
    /// delay_bound = 3d`).
    pub(super) fn by(&self, keys: &[usize]) -> BTreeMap<Vec<usize>, Vec<&Point>> {
        let mut groups: BTreeMap<Vec<usize>, Vec<&Point>> = BTreeMap::new();
        for p in &self.points {
            groups
                .entry(keys.iter().map(|&k| p.idx[k]).collect())
                .or_default()
                .push(p);
        }
        groups
    }

    /// `case = quorum 1, delay_bound = 3d`: parameters `keys` at value indices `at`.
    pub(super) fn fixed(&self, keys: &[usize], at: &[usize]) -> String {
        keys.iter()
            .zip(at)
            .map(|(&k, &i)| self.params[k].equals(i))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The lines of metric `m` against parameter `j`: one per combination of the
    /// other parameters' values (in their axis order) when there are at most
    /// [`MAX_GROUPS`]; else one panel per combination of all the others but the
    /// last, with one line per value of the last, when that makes at most
    /// [`MAX_PANELS`] panels of at most [`MAX_GROUPS`] lines; else one panel per
    /// combination of all the others, with one line each, when they are at most
    /// [`MAX_PANELS`]; else not drawn. Each
    /// line has, at each value of `j`, its point's mean and 95% confidence
    /// interval; with several points there (a design that repeats a
    /// configuration), the mean of their means and the envelope of their intervals.
    pub fn series(&self, m: usize, j: usize) -> Result<Lines, NotDrawn> {
        let others: Vec<usize> = (0..self.params.len()).filter(|&k| k != j).collect();
        let nx = self.params[j].values.len();
        let line = |label: String, pts: &[&Point]| {
            let points = (0..nx)
                .filter_map(|xi| {
                    let s: Vec<Stat> = pts
                        .iter()
                        .filter(|p| p.idx[j] == xi)
                        .map(|p| p.stats[m])
                        .collect();
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
        };
        let groups = self.by(&others);
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
                        self.fixed(&others, key)
                    };
                    line(label, pts)
                })
                .collect();
            return Ok(Lines {
                grouping,
                panels: vec![(String::new(), series)],
            });
        }
        // Lines for the last other parameter, a panel per combination of the rest.
        let (&last, rest) = others.split_last().expect("others is not empty");
        let by_rest = self.by(rest);
        let nl = self.params[last].values.len();
        let (legend, panel_keys, panels) = if by_rest.len() <= MAX_PANELS && nl <= MAX_GROUPS {
            (Some(last), rest.to_vec(), by_rest)
        } else if groups.len() <= MAX_PANELS {
            // Too many values of the last for lines: a panel per combination of
            // all the others, one line each.
            (None, others.clone(), groups)
        } else {
            let fixed: Vec<&Param> = others.iter().map(|&k| &self.params[k]).collect();
            let metric = &self.metrics[m];
            return Err(NotDrawn(format!(
                "{metric}_vs_{} ({metric} against {}) not drawn: {}",
                self.params[j].short,
                self.params[j].name,
                fix_hint(&fixed, groups.len())
            )));
        };
        let panels = panels
            .iter()
            .map(|(key, pts)| {
                let series = match legend {
                    // One line per value of the legend's parameter, present or not,
                    // so that a value has the same colour in every panel.
                    Some(l) => (0..nl)
                        .map(|v| {
                            let here: Vec<&Point> =
                                pts.iter().copied().filter(|p| p.idx[l] == v).collect();
                            line(self.params[l].equals(v), &here)
                        })
                        .collect(),
                    None => vec![line("mean".into(), pts)],
                };
                (self.fixed(&panel_keys, key), series)
            })
            .collect();
        Ok(Lines {
            grouping: Grouping::Panels {
                legend,
                panels: panel_keys,
            },
            panels,
        })
    }

    /// Whether, for each combination of the values of parameters `rest`, the points
    /// form a full grid over parameters `a` and `b` (every pair of their values
    /// occurs in each panel of a heatmap split by `rest`), small enough to draw
    /// cell by cell.
    pub(crate) fn is_grid_by(&self, a: usize, b: usize, rest: &[usize]) -> bool {
        let (na, nb) = (self.params[a].values.len(), self.params[b].values.len());
        na <= MAX_GRID_VALUES
            && nb <= MAX_GRID_VALUES
            && self.by(rest).values().all(|pts| {
                let pairs: BTreeSet<(usize, usize)> =
                    pts.iter().map(|p| (p.idx[a], p.idx[b])).collect();
                pairs.len() == na * nb
            })
    }
}
