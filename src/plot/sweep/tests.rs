//! Tests of the sweep charts: reading `sweep-summary.csv` as the sweep writes it,
//! placing parameter values on axes, building lines and grids, and drawing every
//! chart deterministically (docs/plots.md, "Sweep charts"). They share fixtures
//! across `load`, `series` and `charts`, so they are kept together here.

use super::charts::metric_title;
use super::columns;
use super::*;
use crate::plot::PlotError;
use crate::plot::figure::Layer;
use std::collections::BTreeMap;
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
    let mut head = vec![columns::POINT.to_string()];
    head.extend(params.iter().map(|p| p.to_string()));
    head.push(columns::N.into());
    for m in metrics {
        for s in columns::STATS {
            head.push(columns::stat(m, s));
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
    let lines = s.series(0, 0).unwrap();
    assert_eq!(lines.grouping, Grouping::ByOthers);
    assert_eq!(lines.panels.len(), 1);
    let series = &lines.panels[0].1;
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["min_quorum = 1", "min_quorum = 2"]);
    let thr = 4512.3 * (1.0 - 0.0456);
    assert_eq!(series[0].points[1], (1, thr, thr - 50.0, thr + 50.0));
    assert_eq!(series[0].points.len(), 3);
    let series = s.series(1, 1).unwrap().panels.remove(0).1;
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
    let lines = one.series(0, 0).unwrap();
    assert_eq!(lines.grouping, Grouping::Single);
    let series = &lines.panels[0].1;
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
    assert_eq!(
        s.series(0, 0).unwrap().panels[0].1[0].points,
        [(0, 15.0, 9.0, 23.0)]
    );
}

#[test]
fn too_many_lines_give_one_panel_per_configuration_never_a_mean() {
    // x: 2 values; y: 9 values, so 9 lines against x: too many for one panel.
    let mut rows = Vec::new();
    let ys = ["1", "2", "3", "4", "5", "6", "7", "8", "9"];
    for x in ["0", "1"] {
        for y in ys {
            let v = x.parse::<f64>().unwrap() * 100.0 + y.parse::<f64>().unwrap();
            rows.push((vec![x, y], 3, vec![[v, v - 1.0, v + 1.0]]));
        }
    }
    let s = load(&csv(&["x", "y"], &["m"], &rows), &["x", "y"], &["m"]);
    let lines = s.series(0, 0).unwrap();
    assert_eq!(
        lines.grouping,
        Grouping::Panels {
            legend: None,
            panels: vec![1]
        }
    );
    assert_eq!(lines.panels.len(), 9);
    // Each panel holds the two real points of its y, not the mean over y (5, 105).
    assert_eq!(lines.panels[0].0, "y = 1");
    assert_eq!(
        lines.panels[0].1[0].points,
        [(0, 1.0, 0.0, 2.0), (1, 101.0, 100.0, 102.0)]
    );
    assert_eq!(lines.panels[8].1[0].points[1], (1, 109.0, 108.0, 110.0));
    let fig = s.versus(0, 0, "m_vs_x").unwrap();
    assert_eq!(fig.title, "M vs x, one panel per y");
    assert_eq!(fig.panels.len(), 9);
    assert_eq!(fig.columns, 3);
    assert!(
        fig.caption.contains("nothing is averaged"),
        "{}",
        fig.caption
    );
    assert!(!fig.caption.contains("marginal"), "{}", fig.caption);
    // Against y there are 2 lines: one panel.
    assert_eq!(s.series(0, 1).unwrap().grouping, Grouping::ByOthers);

    // A third parameter z (2 values): against x, a panel per y with a line per z.
    let mut rows = Vec::new();
    for x in ["0", "1"] {
        for y in ys {
            for z in ["a", "b"] {
                let v = x.parse::<f64>().unwrap() * 100.0
                    + y.parse::<f64>().unwrap()
                    + if z == "b" { 1000.0 } else { 0.0 };
                rows.push((vec![x, y, z], 2, vec![[v, v, v]]));
            }
        }
    }
    let s = load(
        &csv(&["x", "y", "z"], &["m"], &rows),
        &["x", "y", "z"],
        &["m"],
    );
    let lines = s.series(0, 0).unwrap();
    assert_eq!(
        lines.grouping,
        Grouping::Panels {
            legend: Some(2),
            panels: vec![1]
        }
    );
    let (title, series) = &lines.panels[2];
    assert_eq!(title, "y = 3");
    assert_eq!(series[1].label, "z = b");
    assert_eq!(
        series[1].points,
        [(0, 1003.0, 1003.0, 1003.0), (1, 1103.0, 1103.0, 1103.0)]
    );
    let fig = s.versus(0, 0, "m_vs_x").unwrap();
    assert_eq!(fig.title, "M vs x, by z, one panel per y");
}

#[test]
fn a_chart_that_would_need_too_many_panels_is_not_drawn_and_says_what_to_fix() {
    // a, b: 2 values; c: 13 values (more panels than MAX_PANELS).
    let cs: Vec<String> = (0..=MAX_PANELS).map(|i| i.to_string()).collect();
    let mut rows = Vec::new();
    for a in ["1", "2"] {
        for b in ["x", "y"] {
            for c in &cs {
                rows.push((vec![a, b, c.as_str()], 2, vec![[1.0, 1.0, 1.0]]));
            }
        }
    }
    let s = load(
        &csv(&["a", "b", "c"], &["m"], &rows),
        &["a", "b", "c"],
        &["m"],
    );
    let e = s.heatmap(0, 0, 1, "heatmap_m_a_b").unwrap_err();
    assert_eq!(
        e.0,
        "heatmap_m_a_b (heatmap of m over a × b) not drawn: one panel per combination of c \
         (13 values) would be 13 panels, more than 12, and one panel averaging over them \
         would show configurations that were never run; fix c with [sweep.set] (or a case) \
         or sweep fewer parameters"
    );
    // Against a: 26 combinations of b and c, 13 panels of b-lines: not drawn.
    let e = s.versus(0, 0, "m_vs_a").unwrap_err();
    assert!(
        e.0.starts_with("m_vs_a (m against a) not drawn: "),
        "{}",
        e.0
    );
    assert!(e.0.contains("fix b or c with [sweep.set]"), "{}", e.0);
    // Heatmaps with c on an axis are drawn; the others listed.
    let (figs, not_drawn) = s.charts();
    let names: Vec<&str> = figs.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["m_vs_c", "heatmap_m_a_c", "heatmap_m_b_c"]);
    assert_eq!(not_drawn.len(), 3, "{not_drawn:?}");
    assert_eq!(figs[1].panels.len(), 2, "one panel per value of b");
    // Written: the charts drawn, and README.txt naming those that are not.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("sweep-summary.csv");
    fs::write(&path, csv(&["a", "b", "c"], &["m"], &rows)).unwrap();
    let out = tmp.path().join("plots");
    let abc = strings(&["a", "b", "c"]);
    let drawn = write_sweep_plots(&path, &out, &abc, &strings(&["m"]), &Marks::default()).unwrap();
    assert_eq!(drawn.names, ["m_vs_c", "heatmap_m_a_c", "heatmap_m_b_c"]);
    assert_eq!(
        drawn.not_drawn,
        [
            s.versus(0, 0, "m_vs_a").unwrap_err().0,
            s.versus(0, 1, "m_vs_b").unwrap_err().0,
            s.heatmap(0, 0, 1, "heatmap_m_a_b").unwrap_err().0,
        ]
    );
    let readme = fs::read_to_string(out.join(README_TXT)).unwrap();
    assert!(readme.starts_with("Sweep charts not drawn:"), "{readme}");
    for n in &drawn.not_drawn {
        assert!(readme.contains(&format!("- {n}\n")), "{readme}");
    }
}

#[test]
fn grids_are_told_apart_from_scattered_designs() {
    let s = grid();
    assert!(s.is_grid_by(0, 1, &[]));
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
    assert!(!s.is_grid_by(0, 1, &[]), "a missing cell");
    let fig = s.heatmap(0, 0, 1, "h").unwrap();
    assert!(matches!(fig.panels[0].layers[0], Layer::Dots { .. }));
    assert!(fig.caption.contains("do not form a grid"));
    // A Latin hypercube: every value once.
    let lhs: Vec<Row> = [("10h", "0.1"), ("30h", "0.7"), ("20h", "0.4")]
        .into_iter()
        .map(|(a, b)| (vec![a, b], 2, vec![[1.0, 0.5, 1.5]]))
        .collect();
    let s = load(&csv(&[DB, "r"], &["m"], &lhs), &[DB, "r"], &["m"]);
    assert!(!s.is_grid_by(0, 1, &[]));
    // A full grid too large for numbers in cells.
    let values: Vec<String> = (0..=MAX_GRID_VALUES).map(|i| i.to_string()).collect();
    let big: Vec<Row> = values
        .iter()
        .flat_map(|a| ["x", "y"].map(|b| (vec![a.as_str(), b], 1, vec![[1.0, 1.0, 1.0]])))
        .collect();
    let s = load(&csv(&["a", "b"], &["m"], &big), &["a", "b"], &["m"]);
    assert!(!s.is_grid_by(0, 1, &[]));
}

/// The 2 × 2 × 2 grid a (1, 2) × b (x, y) × c (p, q), a varying slowest: the
/// value is 10·a, +1 for y, +100 for q; none at (2, y, q).
fn cube() -> Sweep {
    let mut rows = Vec::new();
    for a in ["1", "2"] {
        for b in ["x", "y"] {
            for c in ["p", "q"] {
                let v = if (a, b, c) == ("2", "y", "q") {
                    f64::NAN
                } else {
                    a.parse::<f64>().unwrap() * 10.0
                        + if b == "y" { 1.0 } else { 0.0 }
                        + if c == "q" { 100.0 } else { 0.0 }
                };
                rows.push((vec![a, b, c], 2, vec![[v, v, v]]));
            }
        }
    }
    load(
        &csv(&["a", "b", "c"], &["m"], &rows),
        &["a", "b", "c"],
        &["m"],
    )
}

#[test]
fn a_heatmap_has_a_panel_per_value_of_the_other_parameter_with_the_real_points() {
    let mut s = cube();
    let fig = s.heatmap(0, 0, 1, "h").unwrap();
    assert_eq!(fig.panels.len(), 2);
    assert_eq!(fig.title, "M by a and b, one panel per c");
    let titles: Vec<&str> = fig.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["c = p", "c = q"]);
    let cells = |p: usize| -> Vec<(f64, f64, String)> {
        let Layer::Tiles { tiles, .. } = &fig.panels[p].layers[0] else {
            panic!("tiles")
        };
        tiles.iter().map(|t| (t.x, t.y, t.text.clone())).collect()
    };
    // Every cell is one point's value, never the mean over c (60.5, 61.5...).
    assert_eq!(
        cells(0),
        [
            (0.0, 0.0, "10".into()),
            (0.0, 1.0, "11".into()),
            (1.0, 0.0, "20".into()),
            (1.0, 1.0, "21".into())
        ]
    );
    assert_eq!(
        cells(1),
        [
            (0.0, 0.0, "110".into()),
            (0.0, 1.0, "111".into()),
            (1.0, 0.0, "120".into()),
            (1.0, 1.0, "–".into())
        ]
    );
    // One colour scale for both panels.
    for p in &fig.panels {
        let Layer::Tiles { scale, .. } = &p.layers[0] else {
            panic!("tiles")
        };
        assert_eq!((scale.lo, scale.hi), (10.0, 120.0));
    }
    assert_eq!(
        fig.panels[0].x_ticks,
        [(0.0, "1".to_string()), (1.0, "2".to_string())]
    );
    assert!(
        fig.caption.contains("One panel per combination of `c`"),
        "{}",
        fig.caption
    );
    assert!(
        !fig.caption.contains("averaged over the values"),
        "{}",
        fig.caption
    );
    // The marks are the real points': the best is (2, x, q), point 5; (2, x, p),
    // point 4, is the only feasible one. Only their own cells carry them.
    s.marks = Marks {
        best: Some(5),
        within_noise: vec![],
        feasible: Some(vec![4]),
        limits: BTreeMap::new(),
    };
    let fig = s.heatmap(0, 0, 1, "h").unwrap();
    let texts = |p: usize| -> Vec<(String, bool)> {
        let Layer::Tiles { tiles, .. } = &fig.panels[p].layers[0] else {
            panic!("tiles")
        };
        tiles.iter().map(|t| (t.text.clone(), t.outlined)).collect()
    };
    let plain = |t: &str| (t.to_string(), false);
    assert_eq!(
        texts(0),
        [plain("10"), plain("11"), ("20".into(), true), plain("21")]
    );
    assert_eq!(
        texts(1),
        [plain("110"), plain("111"), plain("★ 120"), plain("–")]
    );
    assert!(!fig.caption.contains("several points"), "{}", fig.caption);
    // The other pairs too: over a × c one panel per b, over b × c one per a.
    let fig = s.heatmap(0, 1, 2, "h").unwrap();
    let titles: Vec<&str> = fig.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["a = 1", "a = 2"]);
    // Lines against a: one per combination of b and c (4 lines), in one panel.
    let lines = s.series(0, 0).unwrap();
    assert_eq!(lines.panels.len(), 1);
    let labels: Vec<&str> = lines.panels[0].1.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "b = x, c = p",
            "b = x, c = q",
            "b = y, c = p",
            "b = y, c = q"
        ]
    );
    assert_eq!(
        lines.panels[0].1[1].points,
        [(0, 110.0, 110.0, 110.0), (1, 120.0, 120.0, 120.0)]
    );
    // A metric with no value anywhere: the panels say so.
    let empty: Vec<Row> = s
        .points
        .iter()
        .map(|p| {
            let vs = s
                .params
                .iter()
                .zip(&p.idx)
                .map(|(q, &i)| q.values[i].as_str());
            (vs.collect(), 0, vec![[f64::NAN; 3]])
        })
        .collect();
    let s = load(
        &csv(&["a", "b", "c"], &["m"], &empty),
        &["a", "b", "c"],
        &["m"],
    );
    let fig = s.heatmap(0, 0, 1, "h").unwrap();
    assert!(!fig.panels[0].has_data());
    assert!(fig.panels[0].no_data.contains("`m_mean` is empty"));
    assert!(!s.versus(0, 0, "v").unwrap().panels[0].has_data());
}

#[test]
fn an_app_replication_level_is_named_adaptive_replication() {
    let keys = strings(&[
        "project.main.app.target_nresults",
        "project.main.workunit.target_nresults",
    ]);
    assert_eq!(
        display_names(&keys),
        [
            "adaptive replication (app.target_nresults)",
            "workunit.target_nresults"
        ]
    );
    // One app of several, by name; an app's own workunit template is not it.
    assert_eq!(
        display_names(&strings(&[
            "project.main.app.search.target_nresults",
            "project.main.app.search.workunit.target_nresults",
        ])),
        [
            "adaptive replication (app.search.target_nresults)",
            "workunit.target_nresults"
        ]
    );
    // Two projects: the project stays in the name.
    assert_eq!(
        display_names(&strings(&[
            "project.a.app.target_nresults",
            "project.b.app.target_nresults"
        ])),
        [
            "adaptive replication (a.app.target_nresults)",
            "adaptive replication (b.app.target_nresults)"
        ]
    );
    let (p, _) = Param::new(&keys[0], "target_nresults", &["0", "2"]);
    assert_eq!(p.short, "target_nresults", "file names keep the short name");
    assert_eq!(p.label(), "adaptive replication (app.target_nresults)");
    assert_eq!(
        p.equals(1),
        "adaptive replication (app.target_nresults) = 2"
    );
}

#[test]
fn cases_are_categories_in_the_sweep_file_order() {
    let (p, idx) = Param::new(columns::CASE, "case", &["3d", "1d", "3d"]);
    assert_eq!(p.kind, Kind::Category);
    assert_eq!(p.values, ["3d", "1d"]);
    assert_eq!(idx, [0, 1, 0]);
}

#[test]
fn heatmaps_mark_the_best_the_near_and_the_feasible_cells_and_fix_fraction_scales() {
    let mut s = grid();
    // Without an objective: no marks, and a fraction spans 0–100 %.
    let fig = s.heatmap(1, 0, 1, "h").unwrap();
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
    let fig = s.heatmap(0, 0, 1, "h").unwrap();
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
    let fig = s.heatmap(1, 0, 1, "h").unwrap();
    let Layer::Tiles { scale, .. } = &fig.panels[0].layers[0] else {
        panic!("tiles")
    };
    assert_eq!((scale.lo, scale.hi), (0.0, 5.0));
    assert!(
        fig.caption.contains("constraint's limit (5 %)"),
        "{}",
        fig.caption
    );
    super::super::font::load().unwrap();
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
    let drawn = write_sweep_plots(&path, &out, &params, &metrics, &Marks::default()).unwrap();
    assert!(drawn.not_drawn.is_empty());
    assert!(
        !out.join(README_TXT).exists(),
        "no README.txt when every chart is drawn"
    );
    let names = drawn.names;
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
