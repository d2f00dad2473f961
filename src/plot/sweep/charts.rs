//! Drawing a sweep (docs/plots.md, "Sweep charts"): each metric against each
//! parameter with its 95% confidence band (`<metric>_vs_<parameter>`), and a heatmap
//! of each metric over each pair of parameters (`heatmap_<metric>_<p1>_<p2>`), with
//! their titles, axis units ([`MetricUnit`], from the metric's unit suffix as in
//! docs/outputs.md) and captions; and the objective's verdict on the heatmaps
//! ([`Marks`]: the best point, the points within the noise, the feasible ones). The
//! lines and cells come from `super::series`.

use super::columns::{self, SUMMARY_CSV};
use super::load::Point;
use super::series::{Grouping, Kind, MAX_PANELS, NotDrawn, Param, Series, fix_hint, mean};
use super::{DAY, HOUR, Sweep};
use crate::plot::figure::{ColorScale, Figure, Layer, Panel, Tile, color};
use crate::plot::{file_safe, format};
use std::collections::BTreeMap;

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
    pub(crate) fn cell(&self, v: f64) -> String {
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
pub(super) fn metric_title(metric: &str) -> String {
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

impl Sweep {
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
    pub(super) fn replications(&self) -> String {
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

    /// The chart of metric `m` against parameter `j`, named `name`; not drawn when
    /// it would need too many panels ([`Sweep::series`]).
    pub(crate) fn versus(&self, m: usize, j: usize, name: &str) -> Result<Figure, NotDrawn> {
        let metric = &self.metrics[m];
        let param = &self.params[j];
        let unit = self.unit(m);
        let f = unit.factor;
        let lines = self.series(m, j)?;
        let others: Vec<&Param> = (0..self.params.len())
            .filter(|&k| k != j)
            .map(|k| &self.params[k])
            .collect();
        let names = |ps: &[&Param], sep: &str| {
            ps.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(sep)
        };
        let keys = |ps: &[&Param]| {
            ps.iter()
                .map(|p| format!("`{}`", p.key))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        let mean_col = columns::stat(metric, columns::MEAN);
        let mut panels = Vec::with_capacity(lines.panels.len());
        for (title, series) in &lines.panels {
            let mut panel = Panel::new(title, &param.label(), &unit.label());
            panel.no_data = format!("no data: `{mean_col}` is empty at every point");
            panel.x_range = Some(param.range());
            panel.x_ticks = param.axis_ticks();
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
                panel.layers.push(Layer::Band {
                    label: "95% confidence interval".into(),
                    color: color(i),
                    points: s
                        .points
                        .iter()
                        .map(|&(xi, _, lo, hi)| (param.xs[xi], lo * f, hi * f))
                        .collect(),
                });
            }
            let legend: Vec<&Param> = match &lines.grouping {
                Grouping::Panels { legend, .. } => {
                    legend.iter().map(|&l| &self.params[l]).collect()
                }
                _ => others.clone(),
            };
            panel.note = coinciding(series, &legend);
            panels.push(panel);
        }
        let what = metric_title(metric);
        let title = match &lines.grouping {
            Grouping::Single => format!("{what} vs {}", param.name),
            Grouping::ByOthers => {
                format!("{what} vs {}, by {}", param.name, names(&others, " and "))
            }
            Grouping::Panels { legend, panels } => {
                let fixed: Vec<&Param> = panels.iter().map(|&k| &self.params[k]).collect();
                match legend {
                    Some(l) => format!(
                        "{what} vs {}, by {}, one panel per {}",
                        param.name,
                        self.params[*l].name,
                        names(&fixed, " and ")
                    ),
                    None => format!(
                        "{what} vs {}, one panel per {}",
                        param.name,
                        names(&fixed, " and ")
                    ),
                }
            }
        };
        let axis = match &param.kind {
            Kind::Number => String::new(),
            Kind::Duration { unit, .. } => format!(" (in {unit})"),
            Kind::Category => " (as categories, in the order of the sweep file)".into(),
        };
        const NOISE: &str = "the mean over the replications at each point, with its 95% \
             confidence interval shaded in the line's colour; where the bands of two points \
             do not overlap, their difference is unlikely to be replication noise";
        let lines_words = match &lines.grouping {
            Grouping::Single => "one line, the mean over the replications at each value, \
                 with its 95% confidence interval shaded"
                .to_string(),
            Grouping::ByOthers => format!(
                "one line per {} (legend), {NOISE}",
                match others.as_slice() {
                    [one] => format!("value of `{}`", one.key),
                    _ => format!("combination of values of {}", keys(&others)),
                }
            ),
            Grouping::Panels { legend, panels } => {
                let fixed: Vec<&Param> = panels.iter().map(|&k| &self.params[k]).collect();
                format!(
                    "one panel per combination of {} (its title), and in each {}, {NOISE}. \
                     Every line is one configuration that was run: nothing is averaged over \
                     swept values",
                    keys(&fixed),
                    match legend {
                        Some(l) =>
                            format!("one line per value of `{}` (legend)", self.params[*l].key),
                        None => "one line".to_string(),
                    }
                )
            }
        };
        let caption = format!(
            "{what} ({}) against the swept parameter `{}`{axis}: {lines_words}. {}. From \
             {SUMMARY_CSV} columns `{mean_col}`, `{}` and `{}`.",
            unit.described(metric),
            param.key,
            capitalise(&self.replications()),
            columns::stat(metric, columns::CI95_LOW),
            columns::stat(metric, columns::CI95_HIGH),
        );
        let mut fig = Figure::new(name, &title, &caption, panels);
        fig.columns = columns_for(fig.panels.len());
        Ok(fig)
    }

    /// The heatmap of metric `m` over parameters `a` (x) and `b` (y), named `name`:
    /// one panel per combination of the other parameters' values (a single panel
    /// without others), each cell one configuration that was run, or each point a
    /// dot when the points do not form a grid of the two. Not drawn when that would
    /// be more than [`MAX_PANELS`] panels of cells.
    pub fn heatmap(&self, m: usize, a: usize, b: usize, name: &str) -> Result<Figure, NotDrawn> {
        let metric = &self.metrics[m];
        let (pa, pb) = (&self.params[a], &self.params[b]);
        let unit = self.unit(m);
        let f = unit.factor;
        let rest: Vec<usize> = (0..self.params.len())
            .filter(|&k| k != a && k != b)
            .collect();
        let rest_params: Vec<&Param> = rest.iter().map(|&k| &self.params[k]).collect();
        let rest_keys: Vec<String> = rest_params.iter().map(|p| format!("`{}`", p.key)).collect();
        let groups = self.by(&rest);
        let grid = self.is_grid_by(a, b, &rest);
        // A scatter of more panels than fit: every point in one panel, each dot a
        // point that was run.
        let split = groups.len() <= MAX_PANELS;
        if grid && !split {
            return Err(NotDrawn(format!(
                "{name} (heatmap of {metric} over {} × {}) not drawn: {}",
                pa.name,
                pb.name,
                fix_hint(&rest_params, groups.len())
            )));
        }
        let groups: Vec<(String, Vec<&Point>)> = if split {
            groups
                .iter()
                .map(|(key, pts)| (self.fixed(&rest, key), pts.clone()))
                .collect()
        } else {
            vec![(String::new(), self.points.iter().collect())]
        };
        let mean_col = columns::stat(metric, columns::MEAN);
        // Per panel: cell positions, values and marks.
        let mut drawn: Vec<PanelCells> = Vec::new();
        let mut repeated = false;
        for (_, pts) in &groups {
            let (mut cells, mut values, mut marks) = (Vec::new(), Vec::new(), Vec::new());
            if grid {
                for i in 0..pa.values.len() {
                    for k in 0..pb.values.len() {
                        // One configuration: one point, or its repeats.
                        let here = || pts.iter().filter(move |p| p.idx[a] == i && p.idx[b] == k);
                        repeated |= here().count() > 1;
                        cells.push((i as f64, k as f64));
                        values.push(mean(here().map(|p| p.stats[m].mean)) * f);
                        marks.push(self.marks.of_cell(here().map(|p| p.id)));
                    }
                }
            } else {
                for p in pts {
                    cells.push((pa.xs[p.idx[a]], pb.xs[p.idx[b]]));
                    values.push(p.stats[m].mean * f);
                }
            }
            drawn.push(PanelCells {
                cells,
                values,
                marks,
            });
        }
        // One colour scale for every panel.
        let (lo, hi) = match self.fixed_scale(m) {
            Some(top) => (0.0, top * f),
            None => {
                let finite = drawn
                    .iter()
                    .flat_map(|d| d.values.iter().copied())
                    .filter(|v| v.is_finite());
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
        let mut panels = Vec::with_capacity(groups.len());
        for ((title, _), d) in groups.iter().zip(&drawn) {
            let (cells, values, marks) = (&d.cells, &d.values, &d.marks);
            let mut panel = Panel::new(title, &pa.label(), &pb.label());
            panel.no_data = format!("no data: `{mean_col}` is empty at every point");
            if grid {
                panel.x_ticks = pa.ticks();
                panel.y_ticks = pb.ticks();
                panel.x_range = Some((-0.5, pa.values.len() as f64 - 0.5));
                panel.y_range = Some((-0.5, pb.values.len() as f64 - 0.5));
            } else {
                panel.x_ticks = pa.axis_ticks();
                panel.y_ticks = pb.axis_ticks();
                panel.x_range = Some(pa.range());
                panel.y_range = Some(pb.range());
            }
            // Without a single value, grey cells would hide the panel's "no data" note.
            if values.iter().any(|v| v.is_finite()) {
                let layer = if grid {
                    Layer::Tiles {
                        scale: scale.clone(),
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
                        scale: scale.clone(),
                        points: cells
                            .iter()
                            .zip(values)
                            .map(|(&(x, y), &v)| (x, y, v))
                            .collect(),
                    }
                };
                panel.layers.push(layer);
            }
            panels.push(panel);
        }

        let what = metric_title(metric);
        let title = if split && !rest.is_empty() {
            format!(
                "{what} by {} and {}, one panel per {}",
                pa.name,
                pb.name,
                rest_params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        } else {
            format!("{what} by {} and {}", pa.name, pb.name)
        };
        let panels_words = if rest.is_empty() {
            String::new()
        } else if split {
            format!(
                " One panel per combination of {} (its title), so that every cell is one \
                 configuration that was run: nothing is averaged over swept values.",
                rest_keys.join(" and ")
            )
        } else {
            format!(
                " The values of {} differ from dot to dot (too many combinations for a \
                 panel each).",
                rest_keys.join(", ")
            )
        };
        let how = if grid {
            format!(
                "Each cell is one combination of `{}` (x) and `{}` (y); its colour and the \
                 number in it are the mean of {}{}. Grey cells marked – have no value.",
                pa.key,
                pb.key,
                unit.described(metric),
                if repeated {
                    " (over the repeats of a configuration the design holds more than once)"
                } else {
                    ""
                },
            )
        } else {
            format!(
                "The sweep's points do not form a grid of `{}` × `{}` (a random or \
                 Latin-hypercube design), so each point is a dot at its values of the two \
                 (x and y), coloured by the mean of {} at that point.",
                pa.key,
                pb.key,
                unit.described(metric),
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
            None => format!(
                "The colour bar on the right gives the scale{}: yellow is the highest \
                 value, dark purple the lowest",
                if panels.len() > 1 {
                    ", the same in every panel"
                } else {
                    ""
                }
            ),
        };
        let caption = format!(
            "{what} over two swept parameters.{panels_words} {how} {scale_words}.{} {}. From \
             {SUMMARY_CSV} column `{mean_col}`.",
            if grid {
                self.marks.caption(repeated)
            } else {
                String::new()
            },
            capitalise(&self.replications()),
        );
        let mut fig = Figure::new(name, &title, &caption, panels);
        fig.columns = columns_for(fig.panels.len());
        Ok(fig)
    }

    /// The fixed top of metric `m`'s colour scale (its lower end is 0): for a
    /// fraction (`_frac`), the lowest upper limit a constraint puts on it if any
    /// (below 1), else 1; `None` for other metrics (the scale spans their values).
    pub(crate) fn fixed_scale(&self, m: usize) -> Option<f64> {
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
    /// (`heatmap_<metric>_<p1>_<p2>`), names made file-safe and unique; and the
    /// charts not drawn, each with its reason ([`NotDrawn`]).
    pub fn charts(&self) -> (Vec<Figure>, Vec<NotDrawn>) {
        let mut used: Vec<String> = Vec::new();
        let mut unique = |n: String| {
            let mut n = file_safe(&n);
            while used.contains(&n) {
                n.push('_');
            }
            used.push(n.clone());
            n
        };
        let (mut out, mut not_drawn) = (Vec::new(), Vec::new());
        let mut keep = |r: Result<Figure, NotDrawn>| match r {
            Ok(f) => out.push(f),
            Err(e) => not_drawn.push(e),
        };
        for (m, metric) in self.metrics.iter().enumerate() {
            for (j, p) in self.params.iter().enumerate() {
                let name = unique(format!("{metric}_vs_{}", p.short));
                keep(self.versus(m, j, &name));
            }
            for a in 0..self.params.len() {
                for b in a + 1..self.params.len() {
                    let (pa, pb) = (&self.params[a].short, &self.params[b].short);
                    let name = unique(format!("heatmap_{metric}_{pa}_{pb}"));
                    keep(self.heatmap(m, a, b, &name));
                }
            }
        }
        (out, not_drawn)
    }

    /// The charts drawn ([`Sweep::charts`]).
    pub fn figures(&self) -> Vec<Figure> {
        self.charts().0
    }
}

/// One heatmap panel's cells: their positions, drawn values, and marks (the text
/// before the number, and whether the cell is outlined).
struct PanelCells {
    cells: Vec<(f64, f64)>,
    values: Vec<f64>,
    marks: Vec<(&'static str, bool)>,
}

/// Panels per row of a chart of `n` panels: one panel alone keeps its size, small
/// multiples go two or three abreast.
fn columns_for(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        2 | 4 => 2,
        _ => 3,
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
    /// an objective). `repeated`: a cell holds several points (repeats of one
    /// configuration).
    fn caption(&self, repeated: bool) -> String {
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
        if repeated && !s.is_empty() {
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
                    let prefix = format!("{} = ", one.name);
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
