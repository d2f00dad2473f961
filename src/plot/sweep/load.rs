//! Reading `sweep-summary.csv` (docs/sweep.md, "Output folder"): one [`Point`] per
//! row with the mean and 95% confidence interval of each metric, and the swept
//! parameters' values, into a [`Sweep`]. The column names are the writer's
//! (`columns`), never spelled again here. Bad input names the
//! file and line: a missing file or column, a value that is not a number, no points.

use super::columns;
use super::{Marks, Param, Sweep, short_names};
use crate::plot::PlotError;
use std::path::Path;

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
        let point_col = col(columns::POINT)?;
        let n_col = col(columns::N)?;
        let param_cols = params
            .iter()
            .map(|p| col(p))
            .collect::<Result<Vec<_>, _>>()?;
        let metric_cols = metrics
            .iter()
            .map(|m| {
                Ok([
                    col(&columns::stat(m, columns::MEAN))?,
                    col(&columns::stat(m, columns::CI95_LOW))?,
                    col(&columns::stat(m, columns::CI95_HIGH))?,
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
            let id = whole(columns::POINT, point_col)?;
            let n = if field(n_col).is_empty() {
                0
            } else {
                whole(columns::N, n_col)?
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
                    mean: float(columns::stat(m, columns::MEAN), cols[0])?,
                    lo: float(columns::stat(m, columns::CI95_LOW), cols[1])?,
                    hi: float(columns::stat(m, columns::CI95_HIGH), cols[2])?,
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
}
