//! The points of a sweep: a full grid, or a random or Latin-hypercube sample, and
//! the seed of every run.
//!
//! Draws come from the sweep's own streams (one per parameter), so a design depends
//! only on the sweep file; each run's seed depends only on the sweep's seed and the
//! replication (common random numbers across points), never on the order runs
//! execute in.

use super::spec::{Design, Parameter, Range, number};
use crate::engine::rng::{stream, stream_seed};
use crate::engine::time::format_duration;
use crate::streams::StreamKind;
use rand::RngExt;

/// The values a range stands for in a grid: `from, from + step, ... ≤ to`.
/// Integers stay integers; durations stay durations, in whole seconds written with
/// their largest exact unit (`36h`), so they keep their unit in the tables and
/// charts.
fn grid_values(r: &Range) -> Vec<toml::Value> {
    let (from, to) = (number(&r.from).unwrap_or(0.0), number(&r.to).unwrap_or(0.0));
    let step = r.step.as_ref().and_then(|s| number(s).ok()).unwrap_or(1.0);
    let n = ((to - from) / step + 1e-9).floor() as usize + 1;
    (0..n).map(|k| value(from + k as f64 * step, r)).collect()
}

/// Whether a range's values are whole numbers: integer or duration bounds and step.
fn is_integer(r: &Range) -> bool {
    let int = |v: &toml::Value| matches!(v, toml::Value::Integer(_) | toml::Value::String(_));
    int(&r.from) && int(&r.to) && r.step.as_ref().is_none_or(int)
}

/// Whether a range is of durations: a bound written with a unit (`"1d"`).
fn is_duration(r: &Range) -> bool {
    matches!(r.from, toml::Value::String(_)) || matches!(r.to, toml::Value::String(_))
}

/// The value `x` of range `r`: a float, a whole number, or a duration (`"36h"`,
/// `"5400s"` when no larger unit is exact).
fn value(x: f64, r: &Range) -> toml::Value {
    if is_duration(r) && is_integer(r) {
        let secs = x.round() as i64;
        let text = format_duration(secs);
        let text = if text.parse::<i64>().is_ok() {
            format!("{text}s")
        } else {
            text
        };
        toml::Value::String(text)
    } else if is_integer(r) {
        toml::Value::Integer(x.round() as i64)
    } else {
        toml::Value::Float(x)
    }
}

/// A point of a range at `u` in `[0, 1)`: rounded to the step when there is one.
fn at(r: &Range, u: f64) -> toml::Value {
    let (from, to) = (number(&r.from).unwrap_or(0.0), number(&r.to).unwrap_or(0.0));
    let mut x = from + u * (to - from);
    if let Some(step) = r.step.as_ref().and_then(|s| number(s).ok()) {
        x = (from + ((x - from) / step).round() * step).min(to);
    }
    value(x, r)
}

/// The points: one value per parameter, in parameter order.
pub fn points(design: Design, n: u32, seed: u64, params: &[Parameter]) -> Vec<Vec<toml::Value>> {
    match design {
        Design::Grid => {
            let lists: Vec<Vec<toml::Value>> = params
                .iter()
                .map(|p| match (&p.values, &p.range) {
                    (Some(v), _) => v.clone(),
                    (None, Some(r)) => grid_values(r),
                    (None, None) => Vec::new(),
                })
                .collect();
            let mut out: Vec<Vec<toml::Value>> = vec![Vec::new()];
            for list in &lists {
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        list.iter().map(move |v| {
                            let mut p = prefix.clone();
                            p.push(v.clone());
                            p
                        })
                    })
                    .collect();
            }
            out
        }
        Design::Random | Design::Lhs => {
            let n = n as usize;
            // One column of n draws per parameter, then transposed into points.
            let columns: Vec<Vec<toml::Value>> = params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut rng = stream(seed, StreamKind::SweepDesign, i as u64);
                    let us: Vec<f64> = if design == Design::Random {
                        (0..n).map(|_| rng.random::<f64>()).collect()
                    } else {
                        // Fisher-Yates: stratum perm[k] for point k, jittered inside.
                        let mut perm: Vec<usize> = (0..n).collect();
                        for k in (1..n).rev() {
                            let j = rng.random_range(0..=k);
                            perm.swap(k, j);
                        }
                        perm.iter()
                            .map(|&s| (s as f64 + rng.random::<f64>()) / n as f64)
                            .collect()
                    };
                    us.into_iter()
                        .map(|u| match (&p.values, &p.range) {
                            (Some(v), _) => {
                                v[((u * v.len() as f64) as usize).min(v.len() - 1)].clone()
                            }
                            (None, Some(r)) => at(r, u),
                            (None, None) => toml::Value::Boolean(false),
                        })
                        .collect()
                })
                .collect();
            (0..n)
                .map(|k| columns.iter().map(|c| c[k].clone()).collect())
                .collect()
        }
    }
}

/// The seed of replication `rep` (`simulation.seed` of that run), the same at every
/// point: common random numbers. Replication `r` of every point has the same hosts
/// (speeds, arrivals, lifetimes) and the same availability, so two points differ
/// by their parameters and not by their volunteer populations, and a paired
/// comparison across replications ([`super::aggregate::within_noise`]) sees the
/// parameters' effect without the population's noise (`docs/sweep.md`, "Seeds").
pub(crate) fn run_seed(sweep_seed: u64, rep: u32) -> u64 {
    stream_seed(sweep_seed, StreamKind::SweepRun, rep as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(values: Option<Vec<toml::Value>>, range: Option<Range>) -> Parameter {
        Parameter {
            key: "k".into(),
            also: vec![],
            values,
            range,
        }
    }

    fn ints(v: &[i64]) -> Vec<toml::Value> {
        v.iter().map(|&i| toml::Value::Integer(i)).collect()
    }

    #[test]
    fn a_grid_has_every_combination_first_parameter_slowest() {
        let days = Range {
            from: toml::Value::String("1d".into()),
            to: toml::Value::String("3d".into()),
            step: Some(toml::Value::String("1d".into())),
        };
        let ps = [param(None, Some(days)), param(Some(ints(&[1, 2])), None)];
        let pts = points(Design::Grid, 0, 1, &ps);
        assert_eq!(pts.len(), 6);
        let day = |d: &str| toml::Value::String(d.into());
        assert_eq!(pts[0], [day("1d"), toml::Value::Integer(1)]);
        assert_eq!(pts[1], [day("1d"), toml::Value::Integer(2)]);
        assert_eq!(pts[5], [day("3d"), toml::Value::Integer(2)]);
        // Durations that are not whole units keep seconds, with their unit.
        let odd = Range {
            from: toml::Value::String("1m".into()),
            to: toml::Value::String("2m".into()),
            step: Some(toml::Value::Integer(45)),
        };
        assert_eq!(
            points(Design::Grid, 0, 1, &[param(None, Some(odd))]),
            [[day("1m")], [day("105s")]]
        );
    }

    #[test]
    fn a_latin_hypercube_uses_every_stratum_once() {
        let r = Range {
            from: toml::Value::Float(0.0),
            to: toml::Value::Float(1.0),
            step: None,
        };
        let ps = [param(None, Some(r.clone())), param(None, Some(r))];
        let pts = points(Design::Lhs, 10, 7, &ps);
        assert_eq!(pts.len(), 10);
        for col in 0..2 {
            let mut strata: Vec<usize> = pts
                .iter()
                .map(|p| (p[col].as_float().unwrap() * 10.0) as usize)
                .collect();
            strata.sort();
            assert_eq!(strata, (0..10).collect::<Vec<_>>());
        }
        // The same file gives the same design; another seed another one.
        assert_eq!(pts, points(Design::Lhs, 10, 7, &ps));
        assert_ne!(pts, points(Design::Lhs, 10, 8, &ps));
    }

    #[test]
    fn random_draws_stay_in_range_and_on_the_step() {
        let r = Range {
            from: toml::Value::Integer(10),
            to: toml::Value::Integer(20),
            step: Some(toml::Value::Integer(5)),
        };
        let ps = [param(None, Some(r)), param(Some(ints(&[7, 8])), None)];
        for p in points(Design::Random, 50, 3, &ps) {
            assert!([10, 15, 20].contains(&p[0].as_integer().unwrap()), "{p:?}");
            assert!([7, 8].contains(&p[1].as_integer().unwrap()));
        }
    }

    #[test]
    fn run_seeds_differ_by_replication_only() {
        let s = run_seed(1, 0);
        assert_ne!(s, run_seed(1, 1));
        assert_ne!(s, run_seed(2, 0));
        assert_eq!(s, run_seed(1, 0));
        // Point 0's seeds are those of the former `(point << 20) | rep` ids.
        assert_eq!(run_seed(9, 3), stream_seed(9, StreamKind::SweepRun, 3));
    }
}
