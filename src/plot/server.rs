//! The `server` chart (docs/plots.md, "`server`"): a project's servers under load
//! and faults, over simulated time, one colour per project. The web server in front
//! of its scheduler (spec backend §2.4.0): how busy the scheduler processes were,
//! how long an RPC waited for one, the connections waiting, and the RPCs served,
//! refused and given up; and its daemons (spec backend §2.2, §2.3): how many were
//! down, the feeder's job cache, and the workunits waiting for the transitioner,
//! the validator and the assimilator. Each outage `summary.json` lists is shaded,
//! with the moment the project had recovered from it.
//!
//! Drawn only for a run with a web server or daemon outages (`figures` in
//! `mod.rs`): only such a run has these series, and every other run keeps its charts
//! and report as they were.

use super::calc::{self, HOUR};
use super::data::RunData;
use super::figure::{Figure, Layer, Panel, color};
use super::timeline::{
    OLDER_RUN, capacity_use_panel, line, lines_panel, missing, on_axis, project_label, rate_panel,
    time_panel, window_words,
};
use std::collections::HashMap;

/// Why a panel of the web server has no data in a chart drawn for daemon outages
/// alone: no project has `[project.NAME.server]`, so none has its series.
const NO_WEB_SERVER: &str = "no project has a web server, [project.NAME.server]";

/// The series whose presence draws the chart: the web server's load
/// (`src/stats/scheduler_load.rs`) or the daemons down (`src/stats/metrics.rs`,
/// `LOAD_GAUGES`), written for a project with a web server or daemon outages.
pub(super) const DRAWN_WITH: [&str; 2] = ["scheduler_busy_frac", "daemons_down"];

const WAIT: &str = "rpc_wait_mean_s";
const SERVED: &str = "rpcs_served";

/// The server chart: ten panels in two columns, the web server's on top, the
/// daemons' below, each outage shaded on every panel with data. Every line has at
/// most about [`calc::FINE_POINTS`] points, one per fine window: the bucket values
/// and samples of a long run, drawn as they are, would be too dense to read.
pub fn server(d: &RunData) -> Figure {
    let fine = calc::fine_window(d.duration_s, d.interval_s);
    let per_hour = |s: &[(i64, f64)]| calc::rates(s, fine, d.duration_s, HOUR as f64);
    // A gauge's highest sample in each window: a queue or backlog that built up
    // between two points still shows.
    let peak = |s: &[(i64, f64)]| calc::window_max(s, fine, d.duration_s);
    let busy = web(capacity_use_panel(
        d,
        DRAWN_WITH[0],
        "Scheduler processes busy",
        "% of the processes' time",
        fine,
        calc::FINE_POINTS as usize,
    ));
    let mut failed = rate_panel(
        d,
        "client_rpcs_failed",
        "Failed RPC attempts, as the clients saw them",
        "failed RPCs per hour",
        fine,
        HOUR as f64,
    );
    failed.note = note_if_zero(&failed, "no RPC attempt failed");
    let mut down = lines_panel(
        d,
        "Daemons down (of the 7 periodic ones)",
        "daemons down (highest sample)",
        &[(DRAWN_WITH[1], "")],
        peak,
    );
    down.note = note_if_zero(&down, "no daemon was down at any sample");
    let mut panels = vec![
        busy,
        web(wait_panel(d, fine)),
        web(lines_panel(
            d,
            "Scheduler queue: connections waiting, RPCs in service",
            "connections (highest sample)",
            &[
                ("scheduler_queue_length", "waiting"),
                ("scheduler_in_service", "in service"),
            ],
            peak,
        )),
        web(lines_panel(
            d,
            "Scheduler RPCs served",
            "RPCs per hour",
            &[(SERVED, "")],
            per_hour,
        )),
        web(lines_panel(
            d,
            "RPCs refused (queue full) and given up (timeout)",
            "RPCs per hour",
            &[("rpcs_refused", "refused"), ("rpcs_timed_out", "given up")],
            per_hour,
        )),
        failed,
        down,
        // Its lowest sample: an empty cache, no job to send, is the fault to see.
        lines_panel(
            d,
            "Feeder's job cache: slots occupied",
            "slots (lowest sample)",
            &[("job_cache_fill", "")],
            |s| calc::window_min(s, fine, d.duration_s),
        ),
        lines_panel(
            d,
            "Workunits past their transition time",
            "workunits (highest sample)",
            &[("backlog_transitioner_workunits", "")],
            peak,
        ),
        lines_panel(
            d,
            "Workunits waiting for the validator and the assimilator",
            "workunits (highest sample)",
            &[
                ("backlog_validator_workunits", "validator"),
                ("backlog_assimilator_workunits", "assimilator"),
            ],
            peak,
        ),
    ];
    mark_outages(d, &mut panels);
    let mut f = Figure::new(
        "server",
        "Server load: the scheduler's web server and the daemons, outages shaded",
        &format!(
            "How the project's servers hold up under load and faults (spec backend §2.4.0). \
             One colour per project; one point per {fine}. First row: the share of the \
             scheduler processes' time spent serving RPCs, in percent (in a run of more \
             than {points} buckets, the mean over each window and, dashed, its highest \
             bucket, so a saturated hour shows), and the mean wait of an RPC for a free \
             process, in seconds, over the RPCs whose service started in the window (gaps \
             where none did). Second row: the connections waiting for a process (solid) and \
             the RPCs in service (dashed), the highest sample in the window; and the RPCs \
             served per hour. Third row: connections refused because the listen queue was \
             full (solid) and requests given up by their client after 120 s without service \
             (dashed), per hour; and every failed RPC attempt as the clients saw it, \
             refused, given up or sent while the scheduler was down, per hour. Fourth row: \
             the periodic daemons down (7 during a database outage), the highest sample; and \
             the feeder's job cache slots occupied, the lowest sample, so that an emptied \
             cache shows. Fifth row, the highest sample: workunits past their transition \
             time, waiting for the transitioner's next pass; and workunits waiting for the \
             validator (solid) and the assimilator (dashed). Gauges are sampled at the start \
             of each bucket of timeseries.csv. Shaded: each outage of summary.json \
             `outages` (the scheduler's, the database's, or a daemon's fixed window), with a \
             dashed vertical line where the project had recovered from it (`end_s` + \
             `recovery_s`; none when it did not recover). From timeseries.csv \
             `scheduler_busy_frac`, `rpc_wait_mean_s`, `scheduler_queue_length`, \
             `scheduler_in_service`, `rpcs_served`, `rpcs_refused`, `rpcs_timed_out`, \
             `client_rpcs_failed`, `daemons_down`, `job_cache_fill`, \
             `backlog_transitioner_workunits`, `backlog_validator_workunits`, \
             `backlog_assimilator_workunits`.",
            fine = window_words(fine),
            points = calc::FINE_POINTS,
        ),
        panels,
    );
    f.columns = 2;
    f
}

/// A panel of the web server's series, which says when it has no data that no
/// project has a web server rather than that the run is older: the chart is drawn
/// for daemon outages alone too.
fn web(mut p: Panel) -> Panel {
    p.no_data = p.no_data.replace(OLDER_RUN, NO_WEB_SERVER);
    p
}

/// `note` in place of the "zero throughout" note of a panel whose lines are all
/// zero; nothing for any other panel.
fn note_if_zero(p: &Panel, note: &str) -> String {
    if p.note.is_empty() {
        String::new()
    } else {
        note.into()
    }
}

/// The mean wait for a scheduler process of the RPCs whose service started in each
/// window of `window` seconds: their total wait (each bucket's mean times its RPCs
/// served) over their number, so a bucket of many RPCs weighs more than one of a
/// few; a gap where none started (spec backend §2.4.0).
fn wait_panel(d: &RunData, window: i64) -> Panel {
    let mut p = time_panel(d, "Wait for a scheduler process, mean per RPC", "seconds");
    p.no_data = missing(&[WAIT, SERVED]);
    for (i, project) in d.projects.iter().enumerate() {
        let Some(served) = d.series(project, SERVED) else {
            continue;
        };
        // A bucket without a service has no mean (an empty value): it adds nothing.
        let mean: HashMap<i64, f64> = (d.series(project, WAIT).unwrap_or_default())
            .iter()
            .copied()
            .collect();
        let total: Vec<(i64, f64)> = (served.iter())
            .map(|&(t, n)| (t, n * mean.get(&t).copied().unwrap_or(0.0)))
            .collect();
        let points = calc::ratios(&total, served, window, d.duration_s, 1.0);
        p.layers
            .push(line(project_label(project), color(i), on_axis(d, points)));
    }
    if !p.layers.is_empty() && !p.has_data() {
        p.no_data = "no data: no RPC was served in this run".into();
    }
    p
}

/// Shades each outage of each project (`summary.json` `outages`, [`RunData::outages`])
/// on every panel with data, in the project's colour (the figure draws lines over
/// bands), and marks with a dashed vertical line the moment the project had
/// recovered from it. The panel's y range is fixed first, so that the shading spans
/// it without stretching it.
fn mark_outages(d: &RunData, panels: &mut [Panel]) {
    let outages: Vec<_> = (d.projects.iter().enumerate())
        .flat_map(|(i, p)| d.outages(p).into_iter().map(move |o| (i, o)))
        .collect();
    if outages.is_empty() {
        return;
    }
    let x = |t: i64| on_axis(d, vec![(t as f64, 0.0)])[0].0;
    for p in panels.iter_mut().filter(|p| p.has_data()) {
        let (_, (y0, y1)) = p.ranges();
        p.y_range = Some((y0, y1));
        for (i, o) in &outages {
            let project = project_label(&d.projects[*i]);
            p.layers.push(Layer::Band {
                label: format!("{project}: {} down", o.what),
                color: color(*i),
                points: vec![(x(o.start_s), y0, y1), (x(o.end_s), y0, y1)],
            });
            if let Some(r) = o.recovery_s {
                p.layers.push(Layer::VLine {
                    label: format!("{project}: recovered from the outage"),
                    color: color(*i),
                    x: x(o.end_s + r),
                    dashed: true,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::calc::DAY;

    /// A series by name: its value in each hour, none for an empty bucket.
    type Series<'a> = (&'a str, &'a dyn Fn(i64) -> Option<f64>);
    /// A line of a panel: its label, whether dashed, its points.
    type Line<'a> = (&'a str, bool, &'a [(f64, f64)]);

    /// Ten days of hourly buckets of project `p`, each series a function of the
    /// bucket's hour; `summary.json` lists `outages`.
    fn run(series: &[Series], outages: serde_json::Value) -> RunData {
        let hours = 10 * 24;
        RunData {
            duration_s: 10 * DAY,
            interval_s: HOUR,
            projects: vec!["p".into()],
            series: (series.iter())
                .map(|(m, f)| {
                    let s = (0..hours).filter_map(|h| Some((h * HOUR, f(h)?))).collect();
                    (("p".to_string(), m.to_string()), s)
                })
                .collect(),
            summary_json: Some(serde_json::json!({"projects": {"p": {"outages": outages}}})),
            ..RunData::default()
        }
    }

    fn lines(p: &Panel) -> Vec<Line<'_>> {
        (p.layers.iter())
            .filter_map(|l| match l {
                Layer::Line {
                    label,
                    dashed,
                    points,
                    ..
                } => Some((label.as_str(), *dashed, points.as_slice())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn server_draws_the_web_server_the_daemons_and_the_outages() {
        // Processes busy 20 % in even hours, 80 % in odd ones; 10 RPCs waiting 1 s
        // each in even hours, 30 waiting 3 s in odd ones, none in hours 100 and 101
        // (no mean); 2 refused an hour; 1 connection waiting in even hours, 4 in odd
        // ones; one daemon down in hours 48 to 53; the job cache full but in hour 61;
        // a scheduler outage from day 1 for 6 h, recovered an hour after it.
        let odd = |h: i64, even: f64, odd: f64| Some(if h % 2 == 0 { even } else { odd });
        let d = run(
            &[
                ("scheduler_busy_frac", &|h| odd(h, 0.2, 0.8)),
                ("rpcs_served", &|h| {
                    Some(match h {
                        100 | 101 => 0.0,
                        h if h % 2 == 0 => 10.0,
                        _ => 30.0,
                    })
                }),
                ("rpc_wait_mean_s", &|h| {
                    (!matches!(h, 100 | 101)).then_some(if h % 2 == 0 { 1.0 } else { 3.0 })
                }),
                ("rpcs_refused", &|_| Some(2.0)),
                ("scheduler_queue_length", &|h| odd(h, 1.0, 4.0)),
                ("daemons_down", &|h| {
                    Some(if (48..54).contains(&h) { 1.0 } else { 0.0 })
                }),
                ("job_cache_fill", &|h| {
                    Some(if h == 61 { 40.0 } else { 100.0 })
                }),
            ],
            serde_json::json!([
                {"what": "scheduler", "start_s": DAY, "end_s": DAY + 6 * HOUR, "recovery_s": HOUR},
            ]),
        );
        let f = server(&d);
        assert_eq!(
            (f.name.as_str(), f.columns, f.panels.len()),
            ("server", 2, 10)
        );

        // Every line has a point per two-hour window (240 buckets → at most 180
        // points), at its middle. Busy: the mean, 50 %, and dashed the highest
        // bucket, 80 %.
        let busy = lines(&f.panels[0]);
        assert_eq!(busy.len(), 2);
        assert_eq!(
            (busy[0].0, busy[0].1, busy[0].2.len()),
            ("project p, mean per 2 hours", false, 120)
        );
        assert_eq!(
            (busy[1].0, busy[1].1),
            ("project p, highest bucket per 2 hours", true)
        );
        for (i, want) in [(0, 50.0), (1, 80.0)] {
            assert!(
                busy[i].2.iter().all(|p| (p.1 - want).abs() < 1e-9),
                "{busy:?}"
            );
        }
        assert_eq!(busy[0].2[0].0, 1.0 / 24.0);

        // Wait: each window's mean over its RPCs, (10·1 + 30·3) / 40, not the mean
        // of the two means; a gap where none was served.
        let wait = lines(&f.panels[1]);
        assert_eq!(f.panels[1].y_label, "seconds");
        assert_eq!(wait[0].2.len(), 120);
        assert_eq!(wait[0].2[0], (1.0 / 24.0, 2.5));
        assert!(wait[0].2[50].1.is_nan(), "hours 100 and 101: no RPC");

        // Queue: waiting, solid, the highest sample of each window; no in-service
        // series here.
        let queue = lines(&f.panels[2]);
        assert_eq!(queue.len(), 1);
        assert_eq!((queue[0].0, queue[0].1), ("project p, waiting", false));
        assert!(queue[0].2.iter().all(|p| p.1 == 4.0), "{queue:?}");

        // Served per hour: 40 RPCs per two hours.
        assert_eq!(lines(&f.panels[3])[0].2[0], (1.0 / 24.0, 20.0));
        // Refused solid, 2 per hour; nothing given up.
        let lost = lines(&f.panels[4]);
        assert_eq!(lost.len(), 1);
        assert_eq!((lost[0].0, lost[0].1), ("project p, refused", false));
        assert_eq!(lost[0].2[0].1, 2.0);
        assert!(f.panels[4].no_data.contains("`rpcs_timed_out`"));
        // No client_rpcs_failed: the panel says which series is missing.
        assert!(!f.panels[5].has_data());
        assert!(f.panels[5].no_data.contains("`client_rpcs_failed`"));

        // Daemons down, the highest sample: hours 48 to 53 are windows 24 to 26.
        let down = lines(&f.panels[6]);
        assert_eq!(down[0].2[24], (49.0 / 24.0, 1.0));
        assert_eq!(down[0].2[26].1, 1.0);
        assert_eq!((down[0].2[23].1, down[0].2[27].1), (0.0, 0.0));
        assert!(f.panels[6].note.is_empty(), "a daemon was down");
        // The job cache, the lowest sample: the dip of hour 61 shows.
        let cache = lines(&f.panels[7]);
        assert_eq!((cache[0].2[30].1, cache[0].2[31].1), (40.0, 100.0));
        for p in &f.panels[8..] {
            assert!(!p.has_data() && p.no_data.contains("older run"), "{p:?}");
        }

        // The outage: shaded from day 1 to 1.25 over the whole y range, on the
        // panels with data only; recovered at 7 h after day 1.
        let busy_panel = &f.panels[0];
        let (_, (y0, y1)) = busy_panel.ranges();
        assert_eq!(busy_panel.y_range, Some((y0, y1)));
        let bands: Vec<_> = (busy_panel.layers.iter())
            .filter_map(|l| match l {
                Layer::Band { label, points, .. } => Some((label.as_str(), points.as_slice())),
                _ => None,
            })
            .collect();
        assert_eq!(
            bands,
            [(
                "project p: scheduler down",
                &[(1.0, y0, y1), (1.25, y0, y1)][..]
            )]
        );
        assert!(y1 > 80.0);
        match busy_panel.layers.last().unwrap() {
            Layer::VLine { x, dashed, .. } => {
                assert_eq!((*x, *dashed), ((DAY + 7 * HOUR) as f64 / DAY as f64, true));
            }
            other => panic!("{other:?}"),
        }
        for p in &f.panels[5..] {
            let shaded = p.layers.iter().any(|l| matches!(l, Layer::Band { .. }));
            assert_eq!(shaded, p.has_data(), "{}", p.title);
        }
    }

    #[test]
    fn only_a_run_with_a_web_server_or_daemon_outages_has_the_chart() {
        let names = |d: &RunData| -> Vec<String> {
            crate::plot::figures(d)
                .into_iter()
                .map(|f| f.name)
                .collect()
        };
        let plain = run(
            &[("client_rpcs_failed", &|_| Some(0.0))],
            serde_json::json!([]),
        );
        assert!(!names(&plain).contains(&"server".to_string()));
        let web = run(
            &[("scheduler_busy_frac", &|_| Some(0.1))],
            serde_json::json!([]),
        );
        assert!(names(&web).contains(&"server".to_string()));

        // Daemon outages alone: the web server's panels say it is missing, and
        // nothing is shaded without outages in summary.json.
        let daemons = run(&[("daemons_down", &|_| Some(7.0))], serde_json::Value::Null);
        assert!(names(&daemons).contains(&"server".to_string()));
        let f = server(&daemons);
        for p in &f.panels[..5] {
            assert!(!p.has_data(), "{}", p.title);
            assert!(p.no_data.contains("[project.NAME.server]"), "{}", p.no_data);
        }
        assert!(f.panels[6].has_data());
        assert_eq!(f.panels[6].y_range, None, "no outage to shade");
    }
}
