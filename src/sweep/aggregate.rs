//! From run records to the sweep's tables: `sweep.csv` (one row per run),
//! `sweep-summary.csv` (one row per point: mean, standard deviation and 95%
//! confidence interval of each metric) and `best.json` (the best point under the
//! objective).
//!
//! A local sweep and `sweep-merge` both read the run records back from their files
//! and call [`write_all`], so the two give byte-identical tables.

use super::spec::Goal;
use super::{Plan, Records};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::io;
use std::path::Path;

pub const SWEEP_CSV: &str = "sweep.csv";
pub const SUMMARY_CSV: &str = "sweep-summary.csv";
pub const BEST_JSON: &str = "best.json";

fn float(x: f64) -> String {
    format!("{x:?}")
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), float)
}

/// Mean, sample standard deviation and the 95% confidence interval of the mean
/// (Student's t with n − 1 degrees of freedom) of the values present.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub ci95: Option<(f64, f64)>,
}

pub fn stats(values: &[f64]) -> Stats {
    let n = values.len();
    if n == 0 {
        return Stats::default();
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Stats {
            n,
            mean: Some(mean),
            ..Stats::default()
        };
    }
    let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .map(|d| d.inverse_cdf(0.975))
        .unwrap_or(f64::NAN);
    let half = t * sd / (n as f64).sqrt();
    Stats {
        n,
        mean: Some(mean),
        sd: Some(sd),
        ci95: Some((mean - half, mean + half)),
    }
}

/// Per point, per metric (in plan order), the statistics over its replications.
pub fn point_stats(plan: &Plan, runs: &Records) -> Vec<Vec<Stats>> {
    (0..plan.points.len())
        .map(|p| {
            plan.metrics
                .iter()
                .map(|m| {
                    let xs: Vec<f64> = runs
                        .range((p, 0)..(p + 1, 0))
                        .filter_map(|(_, r)| r.metrics.get(m).copied().flatten())
                        .collect();
                    stats(&xs)
                })
                .collect()
        })
        .collect()
}

/// The best point: the highest (or lowest) mean of the goal's metric among the
/// points whose means meet every constraint; ties go to the lower point index.
pub fn best(plan: &Plan, st: &[Vec<Stats>], goal: &Goal) -> Option<usize> {
    let col = |m: &str| plan.metrics.iter().position(|x| x == m);
    let g = col(&goal.metric)?;
    let feasible = |p: usize| {
        goal.constraints.iter().all(|c| {
            col(&c.metric)
                .and_then(|i| st[p][i].mean)
                .is_some_and(|v| c.op.holds(v, c.bound))
        })
    };
    let mut best: Option<(usize, f64)> = None;
    for (p, row) in st.iter().enumerate() {
        let Some(v) = row[g].mean else { continue };
        if !feasible(p) {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => {
                if goal.maximize {
                    v > b
                } else {
                    v < b
                }
            }
        };
        if better {
            best = Some((p, v));
        }
    }
    best.map(|(p, _)| p)
}

/// Writes a file through a temporary name, so it is never seen half-written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn csv_bytes(rows: Vec<Vec<String>>) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(&r)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// Writes `sweep.csv`, `sweep-summary.csv` and, with an objective, `best.json` into
/// `dir`. Returns the best point, if any.
pub fn write_all(dir: &Path, plan: &Plan, runs: &Records) -> io::Result<Option<usize>> {
    let mut rows = Vec::with_capacity(runs.len() + 1);
    let mut header = vec!["point".to_string(), "replication".into(), "seed".into()];
    header.extend(plan.params.iter().cloned());
    header.extend(plan.metrics.iter().cloned());
    rows.push(header);
    for ((p, rep), r) in runs {
        let mut row = vec![p.to_string(), rep.to_string(), r.seed.to_string()];
        row.extend(plan.points[*p].iter().cloned());
        row.extend(
            plan.metrics
                .iter()
                .map(|m| opt(r.metrics.get(m).copied().flatten())),
        );
        rows.push(row);
    }
    write_atomic(&dir.join(SWEEP_CSV), &csv_bytes(rows)?)?;

    let st = point_stats(plan, runs);
    let mut rows = Vec::with_capacity(plan.points.len() + 1);
    let mut header = vec!["point".to_string()];
    header.extend(plan.params.iter().cloned());
    header.push("n".into());
    for m in &plan.metrics {
        for s in ["mean", "sd", "ci95_low", "ci95_high"] {
            header.push(format!("{m}_{s}"));
        }
    }
    rows.push(header);
    for (p, row_stats) in st.iter().enumerate() {
        let mut row = vec![p.to_string()];
        row.extend(plan.points[p].iter().cloned());
        let n = runs.range((p, 0)..(p + 1, 0)).count();
        row.push(n.to_string());
        for s in row_stats {
            row.push(opt(s.mean));
            row.push(opt(s.sd));
            row.push(opt(s.ci95.map(|c| c.0)));
            row.push(opt(s.ci95.map(|c| c.1)));
        }
        rows.push(row);
    }
    write_atomic(&dir.join(SUMMARY_CSV), &csv_bytes(rows)?)?;

    let Some(goal) = &plan.goal else {
        return Ok(None);
    };
    let chosen = best(plan, &st, goal);
    let col = |m: &str| plan.metrics.iter().position(|x| x == m);
    let describe = |p: usize| {
        let params: serde_json::Map<String, serde_json::Value> = plan
            .params
            .iter()
            .zip(&plan.points[p])
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect();
        let means: serde_json::Map<String, serde_json::Value> = plan
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let s = st[p][i];
                (
                    m.clone(),
                    serde_json::json!({
                        "mean": s.mean,
                        "ci95_low": s.ci95.map(|c| c.0),
                        "ci95_high": s.ci95.map(|c| c.1),
                    }),
                )
            })
            .collect();
        serde_json::json!({ "point": p, "parameters": params, "metrics": means })
    };
    let doc = serde_json::json!({
        "objective": {
            if goal.maximize { "maximize" } else { "minimize" }: goal.metric,
            "subject_to": goal
                .constraints
                .iter()
                .map(|c| format!("{} {} {}", c.metric, c.op.symbol(), float(c.bound)))
                .collect::<Vec<_>>(),
        },
        "feasible_points": (0..st.len())
            .filter(|&p| goal.constraints.iter().all(|c| col(&c.metric)
                .and_then(|i| st[p][i].mean)
                .is_some_and(|v| c.op.holds(v, c.bound))))
            .count(),
        "best": chosen.map(describe),
    });
    let mut text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic(&dir.join(BEST_JSON), text.as_bytes())?;
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_and_t_interval() {
        let s = stats(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.n, 4);
        assert_eq!(s.mean, Some(2.5));
        let sd = (5.0f64 / 3.0).sqrt();
        assert!((s.sd.unwrap() - sd).abs() < 1e-12);
        // t(0.975, 3) = 3.182446305284263.
        let half = 3.182446305284263 * sd / 2.0;
        let (lo, hi) = s.ci95.unwrap();
        assert!((lo - (2.5 - half)).abs() < 1e-9 && (hi - (2.5 + half)).abs() < 1e-9);
        assert_eq!(stats(&[7.0]).sd, None);
        assert_eq!(stats(&[]).mean, None);
    }
}
