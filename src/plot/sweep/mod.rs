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
//!
//! One responsibility per file: `load` reads `sweep-summary.csv` into a [`Sweep`]
//! (its columns named by `columns`, shared with the writer, `sweep::aggregate`);
//! `series` classifies the parameters' values and builds the lines and grids the
//! charts show from the points; `charts` draws them: units, titles, captions, the
//! objective's marks, and the figures. This module holds the [`Sweep`] they share
//! and [`write_sweep_plots`], the entry point.

mod charts;
pub mod columns;
mod load;
mod series;
#[cfg(test)]
mod tests;

pub use charts::{BEST_MARK, Marks, MetricUnit, NEAR_MARK, coinciding};
pub use load::{Point, Stat};
pub use series::{
    Grouping, Kind, Lines, MAX_GRID_VALUES, MAX_GROUPS, MAX_PANELS, NotDrawn, Param, Series,
    classify, display_name, display_names, short_names,
};

use super::PlotError;
use std::path::Path;

/// Seconds in a day and an hour: the units of duration axes and metrics.
const DAY: f64 = 86_400.0;
const HOUR: f64 = 3_600.0;

/// The sweep: its parameters, metrics and points, as read from the file.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub params: Vec<Param>,
    pub metrics: Vec<String>,
    pub points: Vec<Point>,
    /// The objective's verdict; empty without an objective.
    pub marks: Marks,
}

/// What [`write_sweep_plots`] did: the charts drawn, by name, and why the others
/// were not ([`NotDrawn`]; also listed in the folder's `README.txt`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawn {
    pub names: Vec<String>,
    pub not_drawn: Vec<String>,
}

/// The file beside the charts that lists the charts not drawn and why.
pub const README_TXT: &str = "README.txt";

/// Draws the sweep charts from `summary_csv` (sweep-summary.csv) into `out_dir` as
/// PNG and SVG; returns the chart names in order, and the reasons of the charts
/// not drawn, which are also written to `out_dir/README.txt` (no such file when
/// every chart is drawn).
///
/// `params` are the swept parameters' key paths and `metrics` the metric names,
/// in the order the charts should follow; the file must have the columns `point`,
/// each parameter, `n`, and `<metric>_mean`, `<metric>_ci95_low` and
/// `<metric>_ci95_high` for each metric. A missing or malformed file is bad input
/// ([`PlotError::BadInput`], naming the file and line). `out_dir` is created if
/// needed; charts of the same names are replaced.
pub(crate) fn write_sweep_plots(
    summary_csv: &Path,
    out_dir: &Path,
    params: &[String],
    metrics: &[String],
    marks: &Marks,
) -> Result<Drawn, PlotError> {
    super::font::load()?;
    let mut sweep = Sweep::load(summary_csv, params, metrics)?;
    sweep.marks = marks.clone();
    std::fs::create_dir_all(out_dir).map_err(|e| super::failed("create", out_dir, e))?;
    let (figures, not_drawn) = sweep.charts();
    let mut drawn = Drawn::default();
    for fig in figures {
        super::write_figure(&fig, out_dir)?;
        drawn.names.push(fig.name);
    }
    drawn.not_drawn = not_drawn.into_iter().map(|n| n.0).collect();
    if !drawn.not_drawn.is_empty() {
        let mut text = String::from(
            "Sweep charts not drawn: in one panel they would average over swept \
             parameters, which shows configurations that were never run, and one panel \
             per combination would be too many (docs/plots.md, \"Sweep charts\").\n\n",
        );
        for n in &drawn.not_drawn {
            text.push_str(&format!("- {n}\n"));
        }
        let path = out_dir.join(README_TXT);
        std::fs::write(&path, text).map_err(|e| super::failed("write", &path, e))?;
    }
    Ok(drawn)
}
