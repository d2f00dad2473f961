//! `boinc-sim sweep --racing` (`docs/sweep.md`, "Racing"): a sweep that spends its
//! runs where they can still change the verdict.
//!
//! Round `k` runs replication `k` of every point still alive, so the runs of a race
//! are runs of the full design with the same seeds (common random numbers), and
//! every live point has the same replications as every other. After each round the
//! sweep's own statistics decide ([`decide`]): a point is dropped when it is
//! significantly worse than the best point whose feasibility is certain, or when it
//! is significantly infeasible; every other point stays alive. The race stops when
//! no live point is short of the design's replications, or before a round that
//! would take it past `--budget`.
//!
//! Nothing of the race is stored but the run records: [`next`] replays the rounds
//! from them every time, so a race that is stopped and started again takes the same
//! decisions, runs only what is missing, and never depends on the thread count or
//! on the order runs finished in.

use super::aggregate::{self, Choice, Comparison, Stats};
use super::spec::{Constraint, Goal};
use super::{Plan, Records};
use crate::plot::format::number;

/// Why a point is where it is after the last decision of the race.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Why {
    /// One replication: there is no interval yet, so nothing can be decided.
    OneReplication,
    /// The reference: the best objective mean among the live points whose
    /// feasibility is certain; the others are compared with it.
    Reference,
    /// No live point is certainly feasible: there is nothing to compare with.
    NoReference,
    /// Not significantly worse than the reference `than`; `difference` is the
    /// paired difference reference − point of the objective.
    NotWorse { than: usize, difference: Stats },
    /// Fewer than two replications with an objective value at both the point and
    /// the reference `than`: no paired interval.
    NotCompared { than: usize },
    /// Dropped: significantly worse than the reference `than`.
    Worse { than: usize, difference: Stats },
    /// Dropped: the 95% interval of a constrained metric lies wholly on the wrong
    /// side of the constraint's limit.
    Infeasible {
        constraint: Constraint,
        stats: Stats,
    },
}

/// One point of a race.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PointRace {
    /// Replications run: `0..replications`, in order.
    pub replications: u32,
    /// The round after which the point was dropped (round `k` runs replication
    /// `k`); `None` while it is alive.
    pub dropped: Option<u32>,
    pub why: Why,
}

/// Why a race stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// No live point is short of the design's replications.
    Clear,
    /// The next round would have taken the race past `--budget`.
    Budget,
}

/// A finished race: what each point got and why, and the records of its runs,
/// which are the runs the tables are made of.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Race {
    pub points: Vec<PointRace>,
    /// Rounds run.
    pub rounds: u32,
    /// Runs of the race, and of the full design (points × replications).
    pub runs: usize,
    pub full: usize,
    pub stop: Stop,
    pub budget: Option<usize>,
    pub records: Records,
}

/// What the race needs next.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Next {
    /// The runs of round `round` that are not done yet, among its `alive` points.
    Run {
        round: u32,
        alive: usize,
        runs: Vec<(usize, u32)>,
    },
    /// The race is over.
    Done(Race),
}

/// Replays the race from the run records `have` of the sweep's folder: round after
/// round, the decisions its runs give, until a round has runs missing (those are
/// returned) or the race is over. Records the race would not run (a larger
/// budget's, or a point it drops) are not read.
pub(crate) fn next(plan: &Plan, goal: &Goal, have: &Records, budget: Option<usize>) -> Next {
    let n = plan.points.len();
    let mut points = vec![
        PointRace {
            replications: 0,
            dropped: None,
            why: Why::OneReplication,
        };
        n
    ];
    let mut used = Records::new();
    let (mut runs, mut rounds, mut stop) = (0, 0, Stop::Clear);
    for round in 0..plan.replications {
        let todo: Vec<(usize, u32)> = (0..n)
            .filter(|&p| points[p].dropped.is_none())
            .map(|p| (p, round))
            .collect();
        if todo.is_empty() {
            break;
        }
        if budget.is_some_and(|b| runs + todo.len() > b) {
            stop = Stop::Budget;
            break;
        }
        let missing: Vec<(usize, u32)> = todo
            .iter()
            .copied()
            .filter(|k| !have.contains_key(k))
            .collect();
        if !missing.is_empty() {
            return Next::Run {
                round,
                alive: todo.len(),
                runs: missing,
            };
        }
        for k in &todo {
            used.insert(*k, have[k].clone());
            points[k.0].replications += 1;
        }
        runs += todo.len();
        rounds += 1;
        decide(plan, goal, &used, round, &mut points);
    }
    Next::Done(Race {
        points,
        rounds,
        runs,
        full: n * plan.replications as usize,
        stop,
        budget,
        records: used,
    })
}

/// Whether constraint `c` certainly fails at 95%: the mean fails it and the limit
/// is not inside the interval ([`aggregate::meets`], [`aggregate::limit_inside`]),
/// so the whole interval is on the wrong side. Without an interval it cannot fail
/// for certain.
fn certainly_fails(c: &Constraint, s: Stats) -> bool {
    s.ci95.is_some() && !aggregate::meets(c, s) && !aggregate::limit_inside(c, s)
}

/// Whether constraint `c` certainly holds at 95%: the whole interval on the right
/// side of the limit.
fn certainly_holds(c: &Constraint, s: Stats) -> bool {
    s.ci95.is_some() && aggregate::meets(c, s) && !aggregate::limit_inside(c, s)
}

/// The decision after round `round`, over the records `used` of the race so far:
///
/// 1. A live point with fewer than two replications stays alive (no interval).
/// 2. A live point is dropped as infeasible when some constraint certainly fails
///    ([`certainly_fails`], the first such constraint in the objective's order).
/// 3. The reference is the live point with the best objective mean among those
///    where every constraint certainly holds (ties: the lower index). Only a point
///    of certain feasibility may drop others: a best point that later turns out
///    infeasible would have dropped the point that is the answer.
/// 4. A live point is dropped as worse when the Student-t 95% interval of the
///    paired differences reference − point of the objective, over the replications
///    with a value at both ([`aggregate::within_noise`]), excludes 0 on the
///    reference's side (above 0 when maximizing, below when minimizing).
///
/// Dropped points stay dropped: later rounds run only live points.
pub(crate) fn decide(
    plan: &Plan,
    goal: &Goal,
    used: &Records,
    round: u32,
    points: &mut [PointRace],
) {
    let st = aggregate::point_stats(plan, used);
    let live =
        |points: &[PointRace], p: usize| points[p].dropped.is_none() && points[p].replications >= 2;
    for (p, point) in points.iter_mut().enumerate() {
        if point.dropped.is_some() {
            continue;
        }
        if point.replications < 2 {
            point.why = Why::OneReplication;
            continue;
        }
        let fails = goal
            .constraints
            .iter()
            .find(|c| certainly_fails(c, aggregate::constrained(plan, &st, c, p)));
        if let Some(c) = fails {
            point.dropped = Some(round);
            point.why = Why::Infeasible {
                constraint: c.clone(),
                stats: aggregate::constrained(plan, &st, c, p),
            };
        }
    }
    let Some(g) = aggregate::metric_index(plan, &goal.metric) else {
        return;
    };
    let mut reference: Option<(usize, f64)> = None;
    for p in (0..points.len()).filter(|&p| live(points, p)) {
        let certain = goal
            .constraints
            .iter()
            .all(|c| certainly_holds(c, aggregate::constrained(plan, &st, c, p)));
        let Some(m) = st[p][g].mean.filter(|_| certain) else {
            continue;
        };
        let better = reference.is_none_or(|(_, b)| if goal.maximize { m > b } else { m < b });
        if better {
            reference = Some((p, m));
        }
    }
    let values = aggregate::per_replication(plan, used, &goal.metric);
    let compared: Vec<usize> = (0..points.len()).filter(|&p| live(points, p)).collect();
    for p in compared {
        points[p].why = match reference {
            None => Why::NoReference,
            Some((k, _)) if k == p => Why::Reference,
            Some((k, _)) => {
                match aggregate::within_noise(&values[k], &values[p], st[k][g], st[p][g]) {
                    (Comparison::Paired(d), _) => {
                        let worse =
                            d.ci95.is_some_and(
                                |(lo, hi)| {
                                    if goal.maximize { lo > 0.0 } else { hi < 0.0 }
                                },
                            );
                        if worse {
                            points[p].dropped = Some(round);
                            Why::Worse {
                                than: k,
                                difference: d,
                            }
                        } else {
                            Why::NotWorse {
                                than: k,
                                difference: d,
                            }
                        }
                    }
                    _ => Why::NotCompared { than: k },
                }
            }
        };
    }
}

/// `mean [lo, hi]`, or the mean alone without an interval.
fn mean_interval(s: Stats) -> String {
    let m = s.mean.map_or("–".to_string(), number);
    match s.ci95 {
        Some((lo, hi)) => format!("{m} [{}, {}]", number(lo), number(hi)),
        None => m,
    }
}

/// A point's reason, as `best.json` gives it.
pub(crate) fn reason(why: &Why) -> String {
    match why {
        Why::OneReplication => "one replication: no interval yet".into(),
        Why::Reference => {
            "the reference: the best objective among the points of certain feasibility".into()
        }
        Why::NoReference => {
            "no live point is certainly feasible yet: nothing to compare with".into()
        }
        Why::NotWorse { than, difference } => {
            let holds_zero = difference
                .ci95
                .is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi);
            if holds_zero {
                format!(
                    "within the noise of point {than}: difference mean {}",
                    mean_interval(*difference)
                )
            } else {
                format!(
                    "better than point {than}, but not certainly feasible: difference mean {}",
                    mean_interval(*difference)
                )
            }
        }
        Why::NotCompared { than } => format!(
            "fewer than two replications with a value at both it and point {than}: no paired \
             interval"
        ),
        Why::Worse { than, difference } => format!(
            "worse than point {than}: difference mean {}",
            mean_interval(*difference)
        ),
        Why::Infeasible {
            constraint: c,
            stats,
        } => format!(
            "infeasible: {} mean {} vs limit {} {}",
            c.metric,
            mean_interval(*stats),
            c.op.symbol(),
            number(c.bound)
        ),
    }
}

/// The `racing` section of `best.json`: the race's runs against the full
/// design's, why it stopped, and per point its replications, status (`best`: the
/// verdict's best point, `alive`, `dropped`), the round it was dropped at and the
/// reason, with the numbers the reason quotes.
pub(crate) fn json(race: &Race, plan: &Plan, choice: &Choice) -> serde_json::Value {
    let points: Vec<serde_json::Value> = race
        .points
        .iter()
        .enumerate()
        .map(|(p, r)| {
            let status = if r.dropped.is_some() {
                "dropped"
            } else if choice.best == Some(p) {
                "best"
            } else {
                "alive"
            };
            let mut o = serde_json::json!({
                "point": p,
                "parameters": plan
                    .params
                    .iter()
                    .zip(&plan.points[p])
                    .map(|(k, v)| (k.clone(), serde_json::json!(v)))
                    .collect::<serde_json::Map<_, _>>(),
                "replications": r.replications,
                "status": status,
                "reason": reason(&r.why),
            });
            if let Some(round) = r.dropped {
                o["round"] = round.into();
            }
            match &r.why {
                Why::NotWorse { than, difference } | Why::Worse { than, difference } => {
                    o["compared_with"] = (*than).into();
                    o["difference"] = aggregate::interval(*difference);
                }
                Why::NotCompared { than } => o["compared_with"] = (*than).into(),
                Why::Infeasible {
                    constraint: c,
                    stats,
                } => {
                    o["constraint"] =
                        format!("{} {} {:?}", c.metric, c.op.symbol(), c.bound).into();
                    o["metric"] = aggregate::interval(*stats);
                }
                _ => {}
            }
            o
        })
        .collect();
    serde_json::json!({
        "runs": race.runs,
        "full_design_runs": race.full,
        "saved": race.full - race.runs,
        "rounds": race.rounds,
        "stopped": match race.stop {
            Stop::Clear => "clear",
            Stop::Budget => "budget",
        },
        "budget": race.budget,
        "points": points,
    })
}

/// The race in a sentence for the terminal: `racing: 10 runs in 5 rounds instead of
/// the full design's 15 (5 saved, 33 %); 2 of 3 points dropped (1 worse, 1
/// infeasible); the verdict is clear (best.json "racing")`.
pub(crate) fn summary(race: &Race) -> String {
    let saved = race.full - race.runs;
    let pct = (saved * 100 + race.full / 2)
        .checked_div(race.full)
        .unwrap_or(0);
    let dropped = race.points.iter().filter(|r| r.dropped.is_some()).count();
    let worse = race
        .points
        .iter()
        .filter(|r| matches!(r.why, Why::Worse { .. }))
        .count();
    let alive = race.points.len() - dropped;
    let rounds = if race.rounds == 1 { "round" } else { "rounds" };
    let stopped = match (race.stop, race.budget) {
        (Stop::Budget, Some(b)) => format!(
            "stopped by --budget {b} with {alive} point{} alive short of the design's \
             replications: more runs could change the verdict",
            if alive == 1 { "" } else { "s" }
        ),
        _ => "the verdict is clear".into(),
    };
    format!(
        "racing: {} runs in {} {rounds} instead of the full design's {} ({saved} saved, {pct} %); \
         {dropped} of {} points dropped ({worse} worse, {} infeasible); {stopped} \
         (best.json \"racing\")",
        race.runs,
        race.rounds,
        race.full,
        race.points.len(),
        dropped - worse,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::RunRecord;
    use crate::sweep::spec::Op;

    /// A plan of `points` points over metrics `y` (the objective) and `miss`.
    fn plan(points: usize, reps: u32) -> Plan {
        Plan {
            name: "race".into(),
            sweep_hash: String::new(),
            scenario_hash: String::new(),
            params: vec!["x".into()],
            metrics: vec!["y".into(), "miss".into()],
            project: None,
            app: None,
            replications: reps,
            seed: 0,
            points: (0..points).map(|p| vec![p.to_string()]).collect(),
            goal: None,
            warnings: Vec::new(),
            cases: Vec::new(),
            racing: true,
        }
    }

    fn goal(maximize: bool, limit: Option<f64>) -> Goal {
        Goal {
            metric: "y".into(),
            maximize,
            constraints: limit
                .map(|bound| Constraint {
                    metric: "miss".into(),
                    op: Op::Lt,
                    bound,
                })
                .into_iter()
                .collect(),
        }
    }

    /// Records of every point and replication given: `values[p][r] = (y, miss)`.
    fn records(values: &[&[(f64, f64)]]) -> Records {
        let mut out = Records::new();
        for (p, reps) in values.iter().enumerate() {
            for (r, &(y, miss)) in reps.iter().enumerate() {
                out.insert(
                    (p, r as u32),
                    RunRecord {
                        point: p,
                        replication: r as u32,
                        seed: 0,
                        values: vec![p.to_string()],
                        metrics: [("y".to_string(), Some(y)), ("miss".into(), Some(miss))]
                            .into_iter()
                            .collect(),
                        drifts: Vec::new(),
                    },
                );
            }
        }
        out
    }

    fn fresh(n: usize, reps: u32) -> Vec<PointRace> {
        vec![
            PointRace {
                replications: reps,
                dropped: None,
                why: Why::OneReplication,
            };
            n
        ]
    }

    #[test]
    fn one_replication_decides_nothing() {
        let p = plan(2, 4);
        let runs = records(&[&[(100.0, 0.0)], &[(1.0, 0.9)]]);
        let mut pts = fresh(2, 1);
        decide(&p, &goal(true, Some(0.05)), &runs, 0, &mut pts);
        assert!(pts.iter().all(|r| r.dropped.is_none()), "{pts:?}");
        assert!(pts.iter().all(|r| r.why == Why::OneReplication));
    }

    #[test]
    fn a_point_significantly_worse_is_dropped_one_within_the_noise_is_not() {
        let p = plan(3, 4);
        // Point 0 best; point 1 two below in both replications (a steady paired
        // difference despite the shared noise); point 2 changes sign.
        let runs = records(&[
            &[(10.0, 0.0), (20.0, 0.0)],
            &[(8.0, 0.0), (18.0, 0.0)],
            &[(11.0, 0.0), (19.0, 0.0)],
        ]);
        let mut pts = fresh(3, 2);
        decide(&p, &goal(true, None), &runs, 1, &mut pts);
        assert_eq!(pts[0].why, Why::Reference);
        assert_eq!(pts[0].dropped, None);
        assert_eq!(pts[1].dropped, Some(1));
        assert_eq!(
            reason(&pts[1].why),
            "worse than point 0: difference mean 2 [2, 2]"
        );
        assert_eq!(pts[2].dropped, None);
        assert_eq!(
            reason(&pts[2].why),
            "within the noise of point 0: difference mean 0 [-12.7, 12.7]"
        );
        // Minimizing, point 1 is the reference and drops point 0.
        let mut pts = fresh(3, 2);
        decide(&p, &goal(false, None), &runs, 1, &mut pts);
        assert_eq!(pts[1].why, Why::Reference);
        assert_eq!(pts[0].dropped, Some(1));
        assert_eq!(
            reason(&pts[0].why),
            "worse than point 1: difference mean -2 [-2, -2]"
        );
        assert_eq!(pts[2].dropped, None);
    }

    #[test]
    fn a_point_significantly_infeasible_is_dropped_one_uncertain_is_not() {
        let p = plan(3, 4);
        let runs = records(&[
            // Feasible for certain: miss [0.01, 0.01].
            &[(10.0, 0.01), (20.0, 0.01)],
            // miss 0.10, 0.12: mean 0.11, interval [-0.017, 0.237] holds 0.05.
            &[(30.0, 0.10), (40.0, 0.12)],
            // miss 0.20, 0.21: interval [0.141, 0.269], wholly above 0.05.
            &[(50.0, 0.20), (60.0, 0.21)],
        ]);
        let mut pts = fresh(3, 2);
        decide(&p, &goal(true, Some(0.05)), &runs, 1, &mut pts);
        assert_eq!(pts[2].dropped, Some(1));
        assert_eq!(
            reason(&pts[2].why),
            "infeasible: miss mean 0.205 [0.141, 0.269] vs limit < 0.05"
        );
        // Point 1's feasibility is uncertain: alive, and not the reference though
        // its objective is higher; point 0 (certainly feasible) is.
        assert_eq!(pts[1].dropped, None);
        assert_eq!(pts[0].why, Why::Reference);
        assert!(
            reason(&pts[1].why).starts_with("better than point 0, but not certainly feasible"),
            "{:?}",
            pts[1].why
        );
    }

    #[test]
    fn only_a_point_of_certain_feasibility_drops_others() {
        let p = plan(2, 4);
        // Point 0 has the best mean and meets the limit on average, but its
        // interval holds the limit; point 1 is far worse on the objective and
        // certainly feasible (miss 0, a zero-width interval). Point 1 is the
        // reference, not point 0, so point 1 stays: point 0 may yet prove
        // infeasible, and then point 1 could be the answer.
        let runs = records(&[&[(100.0, 0.01), (110.0, 0.06)], &[(1.0, 0.0), (2.0, 0.0)]]);
        let mut pts = fresh(2, 2);
        decide(&p, &goal(true, Some(0.05)), &runs, 1, &mut pts);
        assert_eq!(pts[1].why, Why::Reference);
        assert!(pts.iter().all(|r| r.dropped.is_none()), "{pts:?}");
        // Without a point of certain feasibility nothing is compared.
        let runs = records(&[&[(100.0, 0.01), (110.0, 0.06)], &[(1.0, 0.0), (2.0, 0.1)]]);
        let mut pts = fresh(2, 2);
        decide(&p, &goal(true, Some(0.05)), &runs, 1, &mut pts);
        assert_eq!(pts[0].why, Why::NoReference);
        assert_eq!(pts[1].why, Why::NoReference);
    }

    #[test]
    fn rounds_run_replications_in_order_for_the_live_points_only() {
        let p = plan(3, 4);
        let g = goal(true, None);
        // Every replication of the full design exists: the race reads only the
        // ones it would run.
        let all = records(&[
            &[(10.0, 0.0), (20.0, 0.0), (30.0, 0.0), (40.0, 0.0)],
            &[(8.0, 0.0), (18.0, 0.0), (28.0, 0.0), (38.0, 0.0)],
            &[(11.0, 0.0), (19.0, 0.0), (29.5, 0.0), (40.5, 0.0)],
        ]);
        let Next::Done(race) = next(&p, &g, &all, None) else {
            panic!("the race needs nothing more");
        };
        assert_eq!(race.rounds, 4);
        assert_eq!(race.runs, 3 + 3 + 2 + 2);
        assert_eq!(race.full, 12);
        assert_eq!(race.stop, Stop::Clear);
        assert_eq!(
            race.points
                .iter()
                .map(|r| r.replications)
                .collect::<Vec<_>>(),
            [4, 2, 4]
        );
        assert_eq!(race.points[1].dropped, Some(1));
        assert!(!race.records.contains_key(&(1, 2)));
        assert_eq!(race.records.len(), race.runs);

        // From an empty folder: round 0 is every point's replication 0.
        let none = Records::new();
        assert_eq!(
            next(&p, &g, &none, None),
            Next::Run {
                round: 0,
                alive: 3,
                runs: vec![(0, 0), (1, 0), (2, 0)]
            }
        );
        // Round 2 half done: only what is missing, for the live points.
        let mut some: Records = all
            .iter()
            .filter(|(k, _)| k.1 < 2 || **k == (0, 2))
            .map(|(k, r)| (*k, r.clone()))
            .collect();
        assert_eq!(
            next(&p, &g, &some, None),
            Next::Run {
                round: 2,
                alive: 2,
                runs: vec![(2, 2)]
            }
        );
        // A budget stops the race before a round that would exceed it.
        some.insert((2, 2), all[&(2, 2)].clone());
        let Next::Done(cut) = next(&p, &g, &some, Some(9)) else {
            panic!("the budget ends the race");
        };
        assert_eq!((cut.runs, cut.rounds, cut.stop), (8, 3, Stop::Budget));
        let s = summary(&cut);
        assert!(
            s.starts_with(
                "racing: 8 runs in 3 rounds instead of the full design's 12 (4 saved, 33 %); \
                 1 of 3 points dropped (1 worse, 0 infeasible); stopped by --budget 9 with 2 \
                 points alive"
            ),
            "{s}"
        );
        assert_eq!(
            summary(&race),
            "racing: 10 runs in 4 rounds instead of the full design's 12 (2 saved, 17 %); 1 \
             of 3 points dropped (1 worse, 0 infeasible); the verdict is clear (best.json \
             \"racing\")"
        );
    }
}
