//! From run records to the sweep's tables: `sweep.csv` (one row per run),
//! `sweep-summary.csv` (one row per point: mean, standard deviation and 95%
//! confidence interval of each metric) and `best.json` (the best point under the
//! objective).
//!
//! A local sweep and `sweep-merge` both read the run records back from their files
//! and call [`write_all`], so the two give byte-identical tables.

use super::spec::{Constraint, Goal};
use super::{Plan, Records};
use crate::base::units::parse_duration;
pub(crate) use crate::plot::sweep::columns::{self, SUMMARY_CSV, SWEEP_CSV};
use crate::plot::sweep::{Kind, classify};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::io;
use std::path::Path;

pub(crate) const BEST_JSON: &str = "best.json";

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
pub(crate) fn point_stats(plan: &Plan, runs: &Records) -> Vec<Vec<Stats>> {
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

/// Whether point `p`'s means meet every constraint of `goal` (a constraint on a
/// metric without a mean is not met). Feasibility is judged on the means only; see
/// [`uncertain`] for the points where the intervals cannot tell.
pub(crate) fn feasible(plan: &Plan, st: &[Vec<Stats>], goal: &Goal, p: usize) -> bool {
    goal.constraints
        .iter()
        .all(|c| meets(c, constrained(plan, st, c, p)))
}

/// Whether some constraint's limit lies inside point `p`'s 95% interval of that
/// metric: more replications could move the point across the limit either way.
pub(crate) fn uncertain(plan: &Plan, st: &[Vec<Stats>], goal: &Goal, p: usize) -> bool {
    goal.constraints
        .iter()
        .any(|c| limit_inside(c, constrained(plan, st, c, p)))
}

/// Point `p`'s statistics of the metric constraint `c` is on (none if the metric is
/// not one of the sweep's).
pub(crate) fn constrained(plan: &Plan, st: &[Vec<Stats>], c: &Constraint, p: usize) -> Stats {
    metric_index(plan, &c.metric).map_or_else(Stats::default, |i| st[p][i])
}

/// Whether a mean meets constraint `c` (no mean does not): the rule of
/// [`feasible`], one constraint at a time.
pub(crate) fn meets(c: &Constraint, s: Stats) -> bool {
    s.mean.is_some_and(|v| c.op.holds(v, c.bound))
}

/// Whether `c`'s limit lies inside the 95% interval `s` (no interval: it cannot
/// be told): the rule of [`uncertain`], one constraint at a time.
pub(crate) fn limit_inside(c: &Constraint, s: Stats) -> bool {
    s.ci95
        .is_some_and(|(lo, hi)| lo <= c.bound && c.bound <= hi)
}

pub(crate) fn metric_index(plan: &Plan, m: &str) -> Option<usize> {
    plan.metrics.iter().position(|x| x == m)
}

/// The best point: the highest (or lowest) mean of the goal's metric among the
/// points whose means meet every constraint; ties go to the lower point index.
pub fn best(plan: &Plan, st: &[Vec<Stats>], goal: &Goal) -> Option<usize> {
    let g = metric_index(plan, &goal.metric)?;
    let mut best: Option<(usize, f64)> = None;
    for (p, row) in st.iter().enumerate() {
        let Some(v) = row[g].mean else { continue };
        if !feasible(plan, st, goal, p) {
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

/// How a point was compared with the best one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comparison {
    /// Paired: the differences best − other of the replications both have (they
    /// share their seeds, so their hosts), with the Student-t 95% interval of
    /// their mean. Within the noise when the interval holds 0.
    Paired(Stats),
    /// Fewer than two paired replications but an interval at both points: within
    /// the noise when the two 95% intervals of the means overlap.
    Overlap,
    /// No interval at all (one replication): the two cannot be told apart.
    Undecided,
}

impl Comparison {
    pub fn name(&self) -> &'static str {
        match self {
            Comparison::Paired(_) => "paired",
            Comparison::Overlap => "overlap",
            Comparison::Undecided => "undecided",
        }
    }
}

/// Compares an objective's values at the best point and at another, replication by
/// replication (`None`: that run has no value), with their statistics. Returns how
/// they were compared and whether the other point is within the noise of the best
/// (cannot be told apart from it at 95%).
pub fn within_noise(
    best: &[Option<f64>],
    other: &[Option<f64>],
    best_stats: Stats,
    other_stats: Stats,
) -> (Comparison, bool) {
    let diffs: Vec<f64> = best
        .iter()
        .zip(other)
        .filter_map(|(a, b)| Some((*a)? - (*b)?))
        .collect();
    if diffs.len() >= 2 {
        let d = stats(&diffs);
        let holds_zero = d.ci95.is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi);
        return (Comparison::Paired(d), holds_zero);
    }
    match (best_stats.ci95, other_stats.ci95) {
        (Some((a_lo, a_hi)), Some((b_lo, b_hi))) => {
            (Comparison::Overlap, a_lo <= b_hi && b_lo <= a_hi)
        }
        _ => (Comparison::Undecided, false),
    }
}

/// The objective's verdict: the best point, the feasible points whose objective
/// cannot be told apart from the best's, and the points of uncertain feasibility.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Choice {
    pub best: Option<usize>,
    /// Per point: whether its means meet every constraint.
    pub feasible: Vec<bool>,
    /// Other feasible points within the noise of the best, in point order.
    pub within_noise: Vec<usize>,
    /// Other feasible points that could not be compared (one replication).
    pub undecided: Vec<usize>,
    /// Points with a constraint's limit inside their 95% interval.
    pub uncertain: Vec<usize>,
    /// How each other feasible point was compared with the best, by point.
    pub comparisons: Vec<(usize, Comparison)>,
    /// The statistics of the objective's metric at the best point.
    pub objective_of_best: Option<Stats>,
}

/// Each point's value of `metric` in each replication (`None`: none).
pub(crate) fn per_replication(plan: &Plan, runs: &Records, metric: &str) -> Vec<Vec<Option<f64>>> {
    (0..plan.points.len())
        .map(|p| {
            (0..plan.replications)
                .map(|r| {
                    runs.get(&(p, r))
                        .and_then(|rec| rec.metrics.get(metric).copied().flatten())
                })
                .collect()
        })
        .collect()
}

/// The verdict of `goal` over the sweep.
pub(crate) fn choose(plan: &Plan, runs: &Records, st: &[Vec<Stats>], goal: &Goal) -> Choice {
    let n = plan.points.len();
    let feasible: Vec<bool> = (0..n).map(|p| feasible(plan, st, goal, p)).collect();
    let uncertain = (0..n).filter(|&p| uncertain(plan, st, goal, p)).collect();
    let best = best(plan, st, goal);
    let mut choice = Choice {
        best,
        feasible,
        uncertain,
        ..Choice::default()
    };
    let (Some(b), Some(g)) = (best, metric_index(plan, &goal.metric)) else {
        return choice;
    };
    choice.objective_of_best = Some(st[b][g]);
    let values = per_replication(plan, runs, &goal.metric);
    for p in (0..n).filter(|&p| p != b && choice.feasible[p]) {
        if st[p][g].mean.is_none() {
            continue;
        }
        let (how, near) = within_noise(&values[b], &values[p], st[b][g], st[p][g]);
        if near {
            choice.within_noise.push(p);
        } else if how == Comparison::Undecided {
            choice.undecided.push(p);
        }
        choice.comparisons.push((p, how));
    }
    choice
}

/// Writes a file through a temporary name, so it is never seen half-written.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
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

/// Per parameter, whether its values are durations (all durations, at least one
/// with a unit: the rule of the charts' axes, [`classify`]). A duration parameter
/// gets a numeric column `<key>_s` in seconds next to its label (`3d`, 259200), so
/// tables sort and plot numerically.
pub(crate) fn duration_params(plan: &Plan) -> Vec<bool> {
    (0..plan.params.len())
        .map(|j| {
            // A case's name is a name, even one that reads as a duration (`3d`).
            if j == 0 && !plan.cases.is_empty() {
                return false;
            }
            let values: Vec<&str> = plan.points.iter().map(|v| v[j].as_str()).collect();
            matches!(classify(&values), Kind::Duration { .. })
        })
        .collect()
}

fn param_header(plan: &Plan, durations: &[bool]) -> Vec<String> {
    let mut out = Vec::new();
    for (key, &d) in plan.params.iter().zip(durations) {
        out.push(key.clone());
        if d {
            out.push(columns::seconds(key));
        }
    }
    out
}

fn param_cells(plan: &Plan, durations: &[bool], p: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (v, &d) in plan.points[p].iter().zip(durations) {
        out.push(v.clone());
        if d {
            out.push(parse_duration(v).map_or(String::new(), |s| s.to_string()));
        }
    }
    out
}

/// A mean and its 95% interval as `best.json` writes them.
pub(crate) fn interval(s: Stats) -> serde_json::Value {
    serde_json::json!({
        "mean": s.mean,
        "ci95_low": s.ci95.map(|c| c.0),
        "ci95_high": s.ci95.map(|c| c.1),
    })
}

/// Writes `sweep.csv`, `sweep-summary.csv` and, with an objective, `best.json` into
/// `dir`. Returns the objective's verdict (empty without an objective). A racing
/// sweep passes how to make `best.json`'s `racing` section from the verdict (its
/// race's account, `racing::json`): the verdict itself is the same function of the
/// runs either way, and the tables know nothing of how the runs were chosen.
pub(crate) fn write_all(
    dir: &Path,
    plan: &Plan,
    runs: &Records,
    racing: Option<&dyn Fn(&Choice) -> serde_json::Value>,
) -> io::Result<Choice> {
    let mut rows = Vec::with_capacity(runs.len() + 1);
    let durations = duration_params(plan);
    let mut header = vec![
        columns::POINT.to_string(),
        columns::REPLICATION.into(),
        columns::SEED.into(),
    ];
    header.extend(param_header(plan, &durations));
    header.extend(plan.metrics.iter().cloned());
    rows.push(header);
    for ((p, rep), r) in runs {
        let mut row = vec![p.to_string(), rep.to_string(), r.seed.to_string()];
        row.extend(param_cells(plan, &durations, *p));
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
    let mut header = vec![columns::POINT.to_string()];
    header.extend(param_header(plan, &durations));
    header.push(columns::N.into());
    for m in &plan.metrics {
        for s in columns::STATS {
            header.push(columns::stat(m, s));
        }
    }
    rows.push(header);
    for (p, row_stats) in st.iter().enumerate() {
        let mut row = vec![p.to_string()];
        row.extend(param_cells(plan, &durations, p));
        let n = runs.range((p, 0)..(p + 1, 0)).count();
        row.push(n.to_string());
        // In the order of `columns::STATS`.
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
        return Ok(Choice::default());
    };
    let choice = choose(plan, runs, &st, goal);
    let g = metric_index(plan, &goal.metric);
    let parameters = |p: usize| -> serde_json::Map<String, serde_json::Value> {
        plan.params
            .iter()
            .zip(&plan.points[p])
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect()
    };
    let describe = |p: usize| {
        let means: serde_json::Map<String, serde_json::Value> = plan
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), interval(st[p][i])))
            .collect();
        serde_json::json!({ "point": p, "parameters": parameters(p), "metrics": means })
    };
    let near: Vec<serde_json::Value> = choice
        .comparisons
        .iter()
        .filter(|(p, _)| choice.within_noise.contains(p))
        .map(|&(p, how)| {
            let mut o = serde_json::json!({
                "point": p,
                "parameters": parameters(p),
                "objective": g.map(|i| interval(st[p][i])),
                "rule": how.name(),
            });
            if let Comparison::Paired(d) = how {
                o["difference"] = interval(d);
            }
            o
        })
        .collect();
    let mut doc = serde_json::json!({
        "objective": {
            if goal.maximize { "maximize" } else { "minimize" }: goal.metric,
            "subject_to": goal
                .constraints
                .iter()
                .map(|c| format!("{} {} {}", c.metric, c.op.symbol(), float(c.bound)))
                .collect::<Vec<_>>(),
        },
        "feasible_points": choice.feasible.iter().filter(|&&f| f).count(),
        "best": choice.best.map(describe),
        "within_noise": near,
        "undecided": choice.undecided,
        "uncertain_feasibility": choice.uncertain,
        "warnings": plan
            .warnings
            .iter()
            .cloned()
            .chain(super::drift_warnings(plan, runs))
            .collect::<Vec<_>>(),
    });
    if let Some(section) = racing {
        doc["racing"] = section(&choice);
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic(&dir.join(BEST_JSON), text.as_bytes())?;
    Ok(choice)
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

    fn some(xs: &[f64]) -> Vec<Option<f64>> {
        xs.iter().map(|&x| Some(x)).collect()
    }

    fn compare(a: &[f64], b: &[f64]) -> (Comparison, bool) {
        within_noise(&some(a), &some(b), stats(a), stats(b))
    }

    #[test]
    fn the_paired_rule_sees_a_steady_difference_that_overlapping_intervals_hide() {
        // Replication noise is large (10 to 40) but shared by the two points: the
        // best is 1 above the other in every replication but one.
        let best = [10.0, 20.0, 30.0, 40.0];
        let other = [9.0, 19.0, 29.0, 39.5];
        let (how, near) = compare(&best, &other);
        let Comparison::Paired(d) = how else {
            panic!("{how:?}")
        };
        // Differences 1, 1, 1, 0.5: mean 0.875, sd 0.25, t(0.975, 3) = 3.1824463.
        assert!((d.mean.unwrap() - 0.875).abs() < 1e-12);
        let half = 3.182446305284263 * 0.25 / 2.0;
        let (lo, hi) = d.ci95.unwrap();
        assert!((lo - (0.875 - half)).abs() < 1e-9 && (hi - (0.875 + half)).abs() < 1e-9);
        assert!(lo > 0.0 && !near, "told apart");
        // The intervals of the two means overlap widely: the fallback would say
        // the two cannot be told apart.
        let (a, b) = (stats(&best).ci95.unwrap(), stats(&other).ci95.unwrap());
        assert!(a.0 <= b.1 && b.0 <= a.1);
    }

    #[test]
    fn differences_that_change_sign_are_within_the_noise() {
        // Differences 1, -1, 2, -1.5: mean 0.125, the interval holds 0.
        let (how, near) = compare(&[10.0, 20.0, 30.0, 40.0], &[9.0, 21.0, 28.0, 41.5]);
        assert_eq!(how.name(), "paired");
        assert!(near);
        // Identical values (a parameter without effect under common random
        // numbers): a zero difference with a zero-width interval is within.
        assert!(compare(&[3.0, 5.0], &[3.0, 5.0]).1);
        // A constant nonzero difference is not.
        assert!(!compare(&[3.0, 5.0], &[2.0, 4.0]).1);
    }

    #[test]
    fn without_two_pairs_the_intervals_decide_and_one_replication_cannot() {
        // Values at different replications: no pair, so the intervals of the means.
        let a = [Some(10.0), Some(12.0), None, None];
        let b = [None, None, Some(11.0), Some(13.0)];
        let (how, near) = within_noise(&a, &b, stats(&[10.0, 12.0]), stats(&[11.0, 13.0]));
        assert_eq!((how, near), (Comparison::Overlap, true));
        let far = stats(&[100.0, 101.0]);
        let (how, near) = within_noise(&a, &[None; 4], stats(&[10.0, 12.0]), far);
        assert_eq!((how, near), (Comparison::Overlap, false));
        let (how, near) = compare(&[1.0], &[1.0]);
        assert_eq!((how, near), (Comparison::Undecided, false));
    }

    fn plan(points: usize, reps: u32, goal: Goal) -> Plan {
        Plan {
            name: "t".into(),
            sweep_hash: String::new(),
            scenario_hash: String::new(),
            params: vec!["x".into()],
            metrics: vec!["y".into(), "miss_frac".into()],
            project: None,
            app: None,
            replications: reps,
            seed: 0,
            points: (0..points).map(|p| vec![format!("{p}d")]).collect(),
            goal: Some(goal),
            warnings: Vec::new(),
            cases: Vec::new(),
            racing: false,
        }
    }

    fn records(values: &[&[(f64, f64)]]) -> Records {
        let mut out = Records::new();
        for (p, reps) in values.iter().enumerate() {
            for (r, &(y, miss)) in reps.iter().enumerate() {
                let metrics = [("y".to_string(), Some(y)), ("miss_frac".into(), Some(miss))]
                    .into_iter()
                    .collect();
                out.insert(
                    (p, r as u32),
                    super::super::RunRecord {
                        point: p,
                        replication: r as u32,
                        seed: 0,
                        values: vec![format!("{p}d")],
                        metrics,
                        drifts: Vec::new(),
                    },
                );
            }
        }
        out
    }

    #[test]
    fn the_verdict_names_the_best_the_points_within_the_noise_and_uncertain_ones() {
        let goal = Goal {
            metric: "y".into(),
            maximize: true,
            constraints: vec![super::super::spec::Constraint {
                metric: "miss_frac".into(),
                op: super::super::spec::Op::Lt,
                bound: 0.05,
            }],
        };
        let p = plan(4, 3, goal.clone());
        let runs = records(&[
            // 0: best (y 10, 20, 30), feasible.
            &[(10.0, 0.01), (20.0, 0.01), (30.0, 0.01)],
            // 1: paired differences 1, -1, 0.5: within the noise.
            &[(9.0, 0.0), (21.0, 0.0), (29.5, 0.0)],
            // 2: always 2 below: told apart; infeasible, but its miss interval
            // (mean 0.055) straddles the limit.
            &[(8.0, 0.045), (18.0, 0.055), (28.0, 0.065)],
            // 3: higher y but infeasible.
            &[(50.0, 0.5), (60.0, 0.5), (70.0, 0.5)],
        ]);
        let st = point_stats(&p, &runs);
        let c = choose(&p, &runs, &st, &goal);
        assert_eq!(c.best, Some(0));
        assert_eq!(c.feasible, [true, true, false, false]);
        assert_eq!(c.within_noise, [1]);
        assert_eq!(c.uncertain, [2]);
        assert!(c.undecided.is_empty());
        assert_eq!(c.objective_of_best.unwrap().mean, Some(20.0));
        // best.json says so, and the tables have the duration's seconds.
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &p, &runs, None).unwrap();
        let best: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(BEST_JSON)).unwrap()).unwrap();
        assert_eq!(best["best"]["point"], 0);
        assert_eq!(best["within_noise"][0]["point"], 1);
        assert_eq!(best["within_noise"][0]["rule"], "paired");
        assert_eq!(best["within_noise"][0]["difference"]["mean"], 0.5 / 3.0);
        assert_eq!(best["uncertain_feasibility"], serde_json::json!([2]));
        let summary = std::fs::read_to_string(dir.path().join(SUMMARY_CSV)).unwrap();
        assert!(summary.starts_with("point,x,x_s,n,y_mean,"), "{summary}");
        assert!(summary.contains("\n2,2d,172800,3,"), "{summary}");
    }
}
