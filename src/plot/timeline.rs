//! Charts over simulated time, from `timeseries.csv`: rates (throughput, deadlines,
//! computing, client RPCs), one line per project in one colour per project; and the
//! server's state per project (workunits and results by state, daemon backlogs) as
//! sampled gauges.
//!
//! Bucket counts become rates by [`calc::rates`]: per-day charts sum one simulated
//! day per point (shorter windows for runs under four days), per-hour charts use
//! finer windows so short events such as an outage stay visible.

use super::calc::{self, DAY, HOUR};
use super::data::RunData;
use super::figure::{Figure, INK, Layer, Panel, color};
use super::format;
use plotters::style::RGBColor;
use std::collections::HashMap;

/// The x-axis of the time charts: days, or hours for runs shorter than two days.
#[derive(Clone, Copy)]
struct TimeAxis {
    /// Seconds per axis unit.
    unit_s: f64,
    label: &'static str,
}

fn time_axis(d: &RunData) -> TimeAxis {
    if d.duration_s >= 2 * DAY {
        TimeAxis {
            unit_s: DAY as f64,
            label: "simulated time (days)",
        }
    } else {
        TimeAxis {
            unit_s: HOUR as f64,
            label: "simulated time (hours)",
        }
    }
}

/// Points with x in seconds, on the time axis.
pub(super) fn on_axis(d: &RunData, mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let unit = time_axis(d).unit_s;
    for p in &mut pts {
        p.0 /= unit;
    }
    pts
}

/// A panel over simulated time, spanning the whole run.
pub(super) fn time_panel(d: &RunData, title: &str, y_label: &str) -> Panel {
    let axis = time_axis(d);
    let mut p = Panel::new(title, axis.label, y_label);
    p.x_range = (d.duration_s > 0).then(|| (0.0, d.duration_s as f64 / axis.unit_s));
    p
}

/// At most this many gauge samples per line (long runs with short intervals).
const MAX_SAMPLES: usize = 2000;

/// Legend label of a project.
pub(crate) fn project_label(p: &str) -> String {
    format!("project {p}")
}

/// How a window reads in a caption: "one simulated day", "6 hours".
pub(super) fn window_words(window: i64) -> String {
    if window == DAY {
        "one simulated day".into()
    } else if window % HOUR == 0 {
        let h = window / HOUR;
        if h == 1 {
            "one hour".into()
        } else {
            format!("{h} hours")
        }
    } else {
        format::duration(window as f64)
    }
}

/// The caption sentence that says how per-day points are made.
fn per_day_note(window: i64) -> String {
    if window == DAY {
        "Each point is the total of one simulated day, drawn at the middle of the day.".into()
    } else {
        format!(
            "Each point is the total over {}, scaled to a rate per day, drawn at the middle of its window.",
            window_words(window)
        )
    }
}

/// Why a panel's series are not in `timeseries.csv`, as [`missing`] says it.
pub(super) const OLDER_RUN: &str = "older run, or the file is missing";

/// What a panel says when `metrics` are not in `timeseries.csv`.
pub(super) fn missing(metrics: &[&str]) -> String {
    let list = metrics
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("no data: {list} not in timeseries.csv ({OLDER_RUN})")
}

/// A panel with one line per project: `metric` summed per window, as a rate per
/// `per_s` seconds.
pub(super) fn rate_panel(
    d: &RunData,
    metric: &str,
    title: &str,
    y_label: &str,
    window: i64,
    per_s: f64,
) -> Panel {
    lines_panel(d, title, y_label, &[(metric, "")], |s| {
        calc::rates(s, window, d.duration_s, per_s)
    })
}

/// A panel with, per project in its colour, a line for each of `metrics` (metric,
/// what its legend adds after the project; nothing with a single metric): the first
/// solid, the others dashed. `points` turns a series into points with x in
/// seconds (a rate per window, or a gauge's highest sample per window).
pub(super) fn lines_panel(
    d: &RunData,
    title: &str,
    y_label: &str,
    metrics: &[(&str, &str)],
    points: impl Fn(&[(i64, f64)]) -> Vec<(f64, f64)>,
) -> Panel {
    let mut p = time_panel(d, title, y_label);
    p.no_data = missing(&metrics.iter().map(|m| m.0).collect::<Vec<_>>());
    let mut all_zero = true;
    for (i, project) in d.projects.iter().enumerate() {
        for (k, (metric, words)) in metrics.iter().enumerate() {
            let Some(s) = d.series(project, metric) else {
                continue;
            };
            all_zero &= s.iter().all(|v| v.1 == 0.0);
            let label = match words {
                &"" => project_label(project),
                w => format!("{}, {w}", project_label(project)),
            };
            let mut l = line(label, color(i), on_axis(d, points(s)));
            if let Layer::Line { dashed, .. } = &mut l {
                *dashed = k > 0;
            }
            p.layers.push(l);
        }
    }
    if all_zero && p.has_data() {
        p.note = "zero throughout this run".into();
    }
    p
}

/// A solid line, with point markers when it has few points (each one then matters).
pub(super) fn line(label: String, color: RGBColor, points: Vec<(f64, f64)>) -> Layer {
    Layer::Line {
        label,
        color,
        markers: points.iter().filter(|p| p.1.is_finite()).count() <= 40,
        points,
        dashed: false,
    }
}

/// Throughput (valid workunits per day), with the workunits lost to errors and the
/// results reported beside it, never added to it.
pub fn throughput(d: &RunData) -> Figure {
    let w = calc::day_window(d.duration_s, d.interval_s);
    let panels = vec![
        rate_panel(
            d,
            "workunits_assimilated_valid",
            "Throughput: workunits assimilated as valid work (canonical result, no error)",
            "workunits per day",
            w,
            DAY as f64,
        ),
        rate_panel(
            d,
            "workunits_assimilated_error",
            "Not throughput: workunits assimilated in error (work lost)",
            "workunits per day",
            w,
            DAY as f64,
        ),
        rate_panel(
            d,
            "results_reported",
            "Results reported by hosts",
            "results per day",
            w,
            DAY as f64,
        ),
    ];
    Figure::new(
        "throughput",
        "Throughput (valid workunits per day), work lost to errors, and results reported",
        &format!(
            "How much science comes out over time. Top, the throughput: workunits the \
             assimilator finished as valid work (a canonical result and no error bit); middle: \
             workunits that ended in error, work lost and not part of the throughput; bottom: \
             results reported by hosts (success or error), the load on the server. One colour \
             per project. {} A rising start is the pipeline filling (hosts joining, first \
             deadlines); a flat curve is the steady state, whose level is summary.csv \
             `workunits_valid_per_day`. From timeseries.csv `workunits_assimilated_valid`, \
             `workunits_assimilated_error`, `results_reported`.",
            per_day_note(w)
        ),
        panels,
    )
}

/// Deadlines: results reported before / after their deadline, and results that timed
/// out, per day.
pub fn deadlines(d: &RunData) -> Figure {
    let w = calc::day_window(d.duration_s, d.interval_s);
    let panels = vec![
        rate_panel(
            d,
            "results_deadline_met",
            "Reported in time (deadline met)",
            "results per day",
            w,
            DAY as f64,
        ),
        rate_panel(
            d,
            "results_deadline_missed",
            "Reported after the deadline (missed)",
            "results per day",
            w,
            DAY as f64,
        ),
        rate_panel(
            d,
            "results_no_reply",
            "Never reported: deadline passed with no reply",
            "results per day",
            w,
            DAY as f64,
        ),
    ];
    Figure::new(
        "deadlines",
        "Deadlines: results reported in time, late, or never, per day",
        &format!(
            "Whether hosts beat the deadline (`delay_bound` after sending). Top: results reported \
             before their deadline; middle: reported after it (the work may be wasted if a \
             replacement already finished); bottom: results whose deadline passed without a \
             report (counted at the deadline; the server sends a replacement). A shorter \
             `delay_bound` moves results from the top panel to the others. Results lost with \
             a detached host are not drawn: summary.csv `results_deadline_detached` counts \
             them, and `deadline_fail_frac` counts all the jobs that did not come back in \
             time. {} From \
             timeseries.csv `results_deadline_met`, `results_deadline_missed`, `results_no_reply`.",
            per_day_note(w)
        ),
        panels,
    )
}

/// The science error rate: the share of canonical results that are wrong, so far
/// (cumulative `wrong_canonical_frac`) and per tenth of the measured window (from
/// `workunits_wrong_canonical` over `workunits_canonical_known`: a rise late in a
/// long run that the cumulative curve hides), with the warm-up marked; and wrong
/// canonical results and correct results judged INVALID per day (simulator truth,
/// `docs/outputs.md`).
pub fn science_error(d: &RunData) -> Figure {
    let w = calc::day_window(d.duration_s, d.interval_s);
    let metric = "wrong_canonical_frac";
    let warmup = d
        .summary_json
        .as_ref()
        .and_then(|s| s.get("warmup_s"))
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0)
        .clamp(0, d.duration_s.max(0));
    let tenth = calc::tenth_window(warmup, d.duration_s, d.interval_s);
    let mut frac = time_panel(
        d,
        "Share of canonical results that are wrong: so far, and per tenth of the measured window",
        "% of canonical results",
    );
    frac.no_data = missing(&[metric]);
    let mut all_zero = true;
    for (i, project) in d.projects.iter().enumerate() {
        if let Some(s) = d.series(project, metric) {
            all_zero &= s.iter().all(|v| v.1 == 0.0);
            // Each value covers canonical results found up to the end of its bucket.
            let end = |t: i64| match t + d.interval_s {
                e if d.duration_s > 0 => e.min(d.duration_s) as f64,
                e => e as f64,
            };
            let points = s.iter().map(|&(t, v)| (end(t), 100.0 * v)).collect();
            frac.layers.push(line(
                format!("{}, so far", project_label(project)),
                color(i),
                on_axis(d, points),
            ));
        }
        // Runs from before the per-bucket columns have no per-window line.
        if let (Some(wrong), Some(known)) = (
            d.series(project, "workunits_wrong_canonical"),
            d.series(project, "workunits_canonical_known"),
        ) && d.duration_s > warmup
        {
            let points = calc::ratios_from(wrong, known, warmup, tenth, d.duration_s, 100.0);
            frac.layers.push(Layer::Line {
                label: format!("{}, per {}", project_label(project), window_words(tenth)),
                color: color(i),
                points: on_axis(d, points),
                dashed: true,
                markers: true,
            });
        }
    }
    if warmup > 0 && frac.has_data() {
        frac.layers.push(Layer::VLine {
            label: format!("end of the warm-up ({})", format::duration(warmup as f64)),
            color: INK,
            x: warmup as f64 / time_axis(d).unit_s,
            dashed: true,
        });
    }
    if all_zero && frac.has_data() {
        frac.note = "no wrong canonical result in this run".into();
    }
    let panels = vec![
        frac,
        rate_panel(
            d,
            "workunits_wrong_canonical",
            "Wrong results accepted as canonical",
            "workunits per day",
            w,
            DAY as f64,
        ),
        rate_panel(
            d,
            "results_correct_invalid",
            "Correct results judged INVALID",
            "results per day",
            w,
            DAY as f64,
        ),
    ];
    Figure::new(
        "science_error",
        "Science error: wrong results accepted as canonical",
        &format!(
            "What replication buys. The simulator knows whether each output is right (BOINC \
             does not). Top: of the canonical results found so far, the percentage that is \
             wrong (its last value is the whole run's rate) as a solid line, and the same \
             share per tenth of the measured window as a dashed line with points (summary.csv \
             `wrong_canonical_frac` is the measured window's, after the warm-up, marked when \
             there is one): a rate that rises late in a long run shows there, not in the \
             cumulative curve. With quorum 1 it is \
             the hosts' wrong-result rate, with a larger quorum only wrong outputs that agree \
             (`wrong_output_collision_frac`) get through. Middle: workunits whose canonical \
             result is wrong, per day of finding it; bottom: correct results outvoted by \
             agreeing wrong ones, per day of reporting. One colour per project. {} From \
             timeseries.csv `wrong_canonical_frac`, `workunits_wrong_canonical`, \
             `workunits_canonical_known`, `results_correct_invalid`.",
            per_day_note(w)
        ),
        panels,
    )
}

/// Useful and wasted computing per day, with an SI prefix on the axis.
pub fn flops(d: &RunData) -> Figure {
    let w = calc::day_window(d.duration_s, d.interval_s);
    let mut panels = Vec::new();
    for (metric, title) in [
        (
            "flops_useful_flops",
            "Useful computing: results that counted",
        ),
        (
            "flops_wasted_flops",
            "Wasted computing: errors, invalid, late or unneeded results",
        ),
    ] {
        let mut p = rate_panel(d, metric, title, "FLOP per day", w, DAY as f64);
        si_lines(&mut p, "FLOP per day");
        panels.push(p);
    }
    Figure::new(
        "flops",
        "Computing done per day: useful versus wasted",
        &format!(
            "Floating-point operations of the reported results, by whether they contributed to \
             a canonical result (top) or were wasted (bottom: errors, invalid or late results, \
             results not needed any more). Axis units use SI prefixes (T = 10^12, P = 10^15, \
             E = 10^18). {} From timeseries.csv `flops_useful_flops`, `flops_wasted_flops`.",
            per_day_note(w)
        ),
        panels,
    )
}

/// Client RPCs: requests that reached the scheduler, failed attempts, backoffs
/// started per hour, and the mean backoff started.
pub fn client_rpcs(d: &RunData) -> Figure {
    let w = calc::fine_window(d.duration_s, d.interval_s);
    let mut panels = vec![
        rate_panel(
            d,
            "scheduler_requests",
            "Scheduler requests that reached the server",
            "requests per hour",
            w,
            HOUR as f64,
        ),
        rate_panel(
            d,
            "client_rpcs_failed",
            "Failed RPC attempts (server down or unreachable)",
            "failed RPCs per hour",
            w,
            HOUR as f64,
        ),
        rate_panel(
            d,
            "client_backoffs",
            "Backoffs started by clients",
            "backoffs per hour",
            w,
            HOUR as f64,
        ),
    ];
    let mut mean = time_panel(
        d,
        "Mean length of the backoffs started",
        "mean backoff (hours)",
    );
    mean.no_data = missing(&["client_backoff_s", "client_backoffs"]);
    for (i, project) in d.projects.iter().enumerate() {
        if let (Some(num), Some(den)) = (
            d.series(project, "client_backoff_s"),
            d.series(project, "client_backoffs"),
        ) {
            let points = calc::ratios(num, den, w, d.duration_s, 1.0 / HOUR as f64);
            if points.iter().all(|p| p.1.is_nan()) {
                mean.no_data = "no backoffs were started in this run".into();
            }
            mean.layers
                .push(line(project_label(project), color(i), on_axis(d, points)));
        }
    }
    panels.push(mean);
    let mut f = Figure::new(
        "client_rpcs",
        "Client RPCs: scheduler requests, failures and backoffs",
        &format!(
            "How hard the volunteer clients knock on the project's door. Top left: scheduler \
             requests that reached an up server; top right: RPC attempts that failed (outages); \
             bottom left: backoffs the clients started (after a failure, or when the server had \
             no work); bottom right: the mean length of the backoffs started in each window, in \
             hours (total backoff time / backoffs; gaps where none started). Rates are per hour, \
             each point averaged over {}. After an outage, look for the failed RPCs and backoffs \
             to rise and the requests to recover. From timeseries.csv `scheduler_requests`, \
             `client_rpcs_failed`, `client_backoffs`, `client_backoff_s`.",
            window_words(w)
        ),
        panels,
    );
    f.columns = 2;
    f
}

/// Scales a panel's lines by the SI prefix of their largest value and labels the
/// axis with it (`unit` = `B per day` gives `GB per day`).
fn si_lines(p: &mut Panel, unit: &str) {
    let max = p
        .layers
        .iter()
        .filter_map(|l| match l {
            Layer::Line { points, .. } => Some(
                points
                    .iter()
                    .map(|p| p.1)
                    .filter(|v| v.is_finite())
                    .fold(0.0, f64::max),
            ),
            _ => None,
        })
        .fold(0.0, f64::max);
    let (div, prefix) = format::si_scale(max);
    for l in &mut p.layers {
        if let Layer::Line { points, .. } = l {
            for pt in points.iter_mut() {
                pt.1 /= div;
            }
        }
    }
    p.y_label = format!("{prefix}{unit}");
}

/// The cumulative distribution of a transfer time (`histograms.csv`), one line per
/// project, in `unit_s` seconds per axis unit.
fn transfer_cdf(d: &RunData, metric: &str, title: &str, unit_s: f64, unit: &str) -> Panel {
    let mut p = Panel::new(title, &format!("time ({unit})"), "% of results");
    p.no_data = format!("no data: no `{metric}` in histograms.csv (no result reported with files)");
    p.y_range = Some((0.0, 100.0));
    for (i, project) in d.projects.iter().enumerate() {
        let Some(bins) = d.histogram(project, metric) else {
            continue;
        };
        let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        points.extend(
            calc::cdf(bins)
                .into_iter()
                .map(|(x, f)| (x / unit_s, 100.0 * f)),
        );
        p.layers.push(Layer::Line {
            label: project_label(project),
            color: color(i),
            points: calc::thin(&points, MAX_SAMPLES),
            dashed: false,
            markers: false,
        });
    }
    p
}

/// The network of a run with files (spec client §8): the bytes each project's data
/// server carried per day in each direction, the share of its link that used, and
/// how long results took to download and upload.
pub fn network(d: &RunData) -> Figure {
    let w = calc::day_window(d.duration_s, d.interval_s);
    let fine = calc::fine_window(d.duration_s, d.interval_s);
    let mut panels = Vec::new();
    for (metric, title) in [
        (
            "bytes_down",
            "Downloads: bytes the data server sent to hosts",
        ),
        ("bytes_up", "Uploads: bytes the data server received"),
    ] {
        let mut p = rate_panel(d, metric, title, "B per day", w, DAY as f64);
        si_lines(&mut p, "B per day");
        panels.push(p);
    }
    for (metric, title) in [
        ("link_util_down", "Download link of the data server in use"),
        ("link_util_up", "Upload link of the data server in use"),
    ] {
        let mut p = capacity_use_panel(d, metric, title, "% of capacity", fine, MAX_SAMPLES);
        if !p.has_data() {
            p.no_data = format!(
                "no data: no `{metric}` in timeseries.csv (the link is unlimited, or the run has no files)"
            );
        }
        panels.push(p);
    }
    // Minutes unless some transfer took more than two hours.
    let longest = d
        .projects
        .iter()
        .flat_map(|p| TRANSFER_TIMES.iter().filter_map(move |m| d.histogram(p, m)))
        .filter_map(|bins| calc::quantile(bins, 0.99))
        .fold(0.0, f64::max);
    let (unit_s, unit) = if longest > 2.0 * HOUR as f64 {
        (HOUR as f64, "hours")
    } else {
        (60.0, "minutes")
    };
    panels.push(transfer_cdf(
        d,
        TRANSFER_TIMES[0],
        "Download time: arrival on the host to runnable",
        unit_s,
        unit,
    ));
    panels.push(transfer_cdf(
        d,
        TRANSFER_TIMES[1],
        "Upload time: end of computing to output on the server",
        unit_s,
        unit,
    ));
    let mut f = Figure::new(
        "network",
        "File transfers: data-server traffic, link use and transfer times",
        &format!(
            "What files cost the project's data server and its hosts. Top: bytes the data              server carried per day, to hosts (input files) and from hosts (output files), one              colour per project. {} Middle: the share of the data server's link those bytes              used in each bucket of timeseries.csv (in a run of more than {MAX_SAMPLES} buckets,              the mean over {} and, dashed, the highest bucket in it; no line for an unlimited              link); a point at 100 % is a saturated link, where every transfer slows down. Bottom: the cumulative              distribution of the time a reported result spent downloading its inputs (from              its arrival on the host to runnable) and uploading its output (from the end of              computing to its output on the server). From timeseries.csv `bytes_down`,              `bytes_up`, `link_util_down`, `link_util_up` and histograms.csv              `result_download_s`, `result_upload_s`.",
            per_day_note(w),
            window_words(fine)
        ),
        panels,
    );
    f.columns = 2;
    f
}

/// A share of a capacity in use, in percent, per bucket of `timeseries.csv` (a
/// data-server link's, spec client §8.5; the scheduler processes', spec backend
/// §2.4.0): every bucket as it is while the run has at most `raw_limit` of them (a
/// saturated hour is a point at 100 %), else the mean over windows of `window`
/// seconds with, dashed, the highest bucket of each window, so that averaging never
/// hides a saturated link or scheduler.
pub(super) fn capacity_use_panel(
    d: &RunData,
    metric: &str,
    title: &str,
    y_label: &str,
    window: i64,
    raw_limit: usize,
) -> Panel {
    let mut p = time_panel(d, title, y_label);
    p.no_data = missing(&[metric]);
    let interval = d.interval_s.max(1);
    let raw = ((d.duration_s + interval - 1) / interval) as usize <= raw_limit;
    let pct = |pts: Vec<(f64, f64)>| pts.into_iter().map(|(x, v)| (x, v * 100.0)).collect();
    for (i, project) in d.projects.iter().enumerate() {
        let Some(s) = d.series(project, metric) else {
            continue;
        };
        if raw {
            let pts = s
                .iter()
                .map(|&(t, v)| ((t + interval / 2) as f64, v))
                .collect();
            p.layers.push(line(
                format!("{}, each bucket", project_label(project)),
                color(i),
                on_axis(d, pct(pts)),
            ));
        } else {
            let mean = calc::rates(s, window, d.duration_s, interval as f64);
            p.layers.push(line(
                format!(
                    "{}, mean per {}",
                    project_label(project),
                    window_words(window)
                ),
                color(i),
                on_axis(d, pct(mean)),
            ));
            p.layers.push(Layer::Line {
                label: format!(
                    "{}, highest bucket per {}",
                    project_label(project),
                    window_words(window)
                ),
                color: color(i),
                points: on_axis(d, pct(calc::window_max(s, window, d.duration_s))),
                dashed: true,
                markers: false,
            });
        }
    }
    p
}

/// The transfer-time histograms of a run with files: download, then upload.
const TRANSFER_TIMES: [&str; 2] = ["result_download_s", "result_upload_s"];

/// A gauge as (time in days, value) points, thinned.
fn gauge(d: &RunData, s: &[(i64, f64)]) -> Vec<(f64, f64)> {
    let pts: Vec<(f64, f64)> = s.iter().map(|&(t, v)| (t as f64, v)).collect();
    on_axis(d, calc::thin(&pts, MAX_SAMPLES))
}

/// A stacked-area panel of the gauges `layers` (metric, label, colour) that the run
/// has; times from the first of them.
fn stack_panel(
    d: &RunData,
    project: &str,
    layers: &[(&str, &str, RGBColor)],
    y_label: &str,
) -> Panel {
    let mut p = time_panel(d, "", y_label);
    p.no_data = missing(&layers.iter().map(|l| l.0).collect::<Vec<_>>());
    let present: Vec<_> = layers
        .iter()
        .filter_map(|(m, label, c)| Some((d.series(project, m)?, *label, *c)))
        .collect();
    let Some(first) = present.first() else {
        return p;
    };
    let times: Vec<i64> = calc::thin(
        &first.0.iter().map(|s| s.0).collect::<Vec<_>>(),
        MAX_SAMPLES,
    );
    let unit = time_axis(d).unit_s;
    let xs: Vec<f64> = times.iter().map(|t| *t as f64 / unit).collect();
    let mut stack = Vec::new();
    for (s, label, c) in present {
        let by_time: HashMap<i64, f64> = s.iter().copied().collect();
        let ys = times
            .iter()
            .map(|t| by_time.get(t).copied().unwrap_or(0.0))
            .collect();
        stack.push((label.to_string(), c, ys));
    }
    p.layers.push(Layer::Stack { xs, layers: stack });
    p
}

/// Colours of server states: blue in progress, orange waiting, green done, red
/// trouble, purple purge, grey idle.
use super::figure::{BLUE, BROWN, GREEN, ORANGE, PURPLE, RED};
const SILVER: RGBColor = RGBColor(170, 170, 170);

fn for_project(title: &str, project: &str, several: bool) -> String {
    if several {
        format!("{title} — project {project}")
    } else {
        title.to_string()
    }
}

/// Workunits in the database by phase, stacked; the total as a line on top.
pub(crate) fn workunits_by_state(d: &RunData, project: &str, name: &str) -> Figure {
    let mut p = stack_panel(
        d,
        project,
        &[
            (
                "db_workunits_open",
                "open: being computed or validated",
                BLUE,
            ),
            (
                "backlog_assimilator_workunits",
                "waiting for the assimilator",
                ORANGE,
            ),
            (
                "backlog_file_deleter_workunits",
                "waiting for the file deleter",
                GREEN,
            ),
            (
                "db_workunits_file_delete_error",
                "file deletion failed (retried)",
                RED,
            ),
            (
                "backlog_db_purge_workunits",
                "files deleted, waiting for db_purge",
                PURPLE,
            ),
        ],
        "workunits in the database",
    );
    if let Some(total) = d.series(project, "db_workunits")
        && p.has_data()
    {
        p.layers.push(Layer::Line {
            label: "total (db_workunits)".into(),
            color: INK,
            points: gauge(d, total),
            dashed: true,
            markers: false,
        });
    }
    Figure::new(
        name,
        &for_project(
            "Workunits in the server database, by phase",
            project,
            d.projects.len() > 1,
        ),
        "The workunit table over time, split by where each workunit is in its life: open (its \
         results are out or being validated), then queued for the assimilator, for the file \
         deleter, and for db_purge, which finally deletes the row. The areas stack up to the \
         table's size (dashed line). A growing queue means that daemon cannot keep up. Sampled \
         at the start of every output interval; from timeseries.csv gauges `db_workunits_open`, \
         `backlog_assimilator_workunits`, `backlog_file_deleter_workunits`, \
         `db_workunits_file_delete_error`, `backlog_db_purge_workunits` and `db_workunits`.",
        vec![p],
    )
}

/// Results in the database by server state, stacked.
pub(crate) fn results_by_state(d: &RunData, project: &str, name: &str) -> Figure {
    let p = stack_panel(
        d,
        project,
        &[
            (
                "db_results_over",
                "over: reported, timed out or not needed",
                SILVER,
            ),
            ("db_results_in_progress", "in progress on a host", BLUE),
            (
                "db_results_unsent",
                "unsent: waiting in the job queue",
                ORANGE,
            ),
        ],
        "results in the database",
    );
    Figure::new(
        name,
        &for_project(
            "Results in the server database, by server state",
            project,
            d.projects.len() > 1,
        ),
        "The result table over time by `server_state`: unsent (created, waiting for a host), in \
         progress (sent, not yet reported or timed out) and over (finished in any way, kept until \
         db_purge deletes its workunit). The stack is the table's size. Many unsent results mean \
         hosts do not ask for work fast enough; a large \"over\" band means rows wait long for \
         purging. Sampled at the start of every output interval; from timeseries.csv gauges \
         `db_results_unsent`, `db_results_in_progress`, `db_results_over`.",
        vec![p],
    )
}

/// The daemons' backlogs (work lists), one line each.
pub(crate) fn server_backlog(d: &RunData, project: &str, name: &str) -> Figure {
    let metrics = [
        (
            "backlog_validator_workunits",
            "validator: workunits to validate",
            BLUE,
        ),
        (
            "backlog_assimilator_workunits",
            "assimilator: workunits to assimilate",
            ORANGE,
        ),
        (
            "backlog_file_deleter_workunits",
            "file deleter: workunits",
            GREEN,
        ),
        (
            "backlog_file_deleter_results",
            "file deleter: results",
            BROWN,
        ),
        (
            "backlog_file_deleter_files",
            "file deleter: workunits + results",
            GREEN,
        ),
        (
            "backlog_db_purge_workunits",
            "db_purge: workunits to purge",
            PURPLE,
        ),
    ];
    let mut p = time_panel(d, "", "items waiting");
    p.no_data = missing(&[metrics[0].0, metrics[1].0, metrics[5].0]);
    let present: Vec<_> = metrics
        .iter()
        .filter_map(|m| d.series(project, m.0))
        .collect();
    if !present.is_empty() && present.iter().flat_map(|s| s.iter()).all(|s| s.1 == 0.0) {
        p.note = "every backlog was 0 at every sample: the daemons keep up".into();
    }
    for (m, label, c) in metrics {
        if let Some(s) = d.series(project, m) {
            p.layers.push(Layer::Line {
                label: label.into(),
                color: c,
                points: gauge(d, s),
                dashed: false,
                markers: false,
            });
        }
    }
    Figure::new(
        name,
        &for_project(
            "Server daemon backlogs: items waiting for each daemon",
            project,
            d.projects.len() > 1,
        ),
        "How much work each back-end daemon has queued, sampled at the start of every output \
         interval: workunits waiting for the validator and the assimilator, workunits and \
         results whose files wait for the file deleter, and workunits waiting for db_purge. A \
         healthy server keeps these near zero between daemon passes; a line that climbs means \
         that daemon runs too rarely or too slowly. From timeseries.csv `backlog_*` gauges.",
        vec![p],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(duration_s: i64, metric: &str, per_bucket: f64) -> RunData {
        let samples: Vec<(i64, f64)> = (0..=duration_s / HOUR)
            .map(|h| (h * HOUR, per_bucket))
            .collect();
        RunData {
            duration_s,
            interval_s: HOUR,
            projects: vec!["p".into()],
            series: [(("p".to_string(), metric.to_string()), samples)]
                .into_iter()
                .collect(),
            ..RunData::default()
        }
    }

    fn points(p: &Panel) -> Vec<(f64, f64)> {
        match &p.layers[0] {
            Layer::Line { points, .. } => points.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hourly_counts_become_daily_totals_on_a_day_axis() {
        // 4 days of 2 results per hour; the bucket at the end (last second) has 0.
        let mut d = run(4 * DAY, "results_reported", 2.0);
        d.series.values_mut().next().unwrap().last_mut().unwrap().1 = 0.0;
        let f = throughput(&d);
        let reported = &f.panels[2];
        assert_eq!(reported.x_label, "simulated time (days)");
        assert_eq!(reported.x_range, Some((0.0, 4.0)));
        assert_eq!(
            points(reported),
            [(0.5, 48.0), (1.5, 48.0), (2.5, 48.0), (3.5, 48.0)]
        );
        // The other panels have no data and say which column is missing.
        assert!(!f.panels[0].has_data());
        assert!(
            f.panels[0]
                .no_data
                .contains("`workunits_assimilated_valid`")
        );
    }

    #[test]
    fn network_draws_bytes_per_day_link_use_and_transfer_times() {
        // Four days of 1 MB down per hour over a link used at 25 % each hour.
        let mut d = run(4 * DAY, "bytes_down", 1e6);
        let util: Vec<(i64, f64)> = (0..4 * 24).map(|h| (h * HOUR, 0.25)).collect();
        d.series
            .insert(("p".to_string(), "link_util_down".to_string()), util);
        d.histograms.insert(
            ("p".to_string(), "result_download_s".to_string()),
            vec![
                crate::plot::data::Bin {
                    lower: Some(0.0),
                    upper: Some(60.0),
                    count: 1.0,
                },
                crate::plot::data::Bin {
                    lower: Some(120.0),
                    upper: Some(180.0),
                    count: 3.0,
                },
            ],
        );
        let f = network(&d);
        assert_eq!(f.name, "network");
        assert_eq!(f.panels.len(), 6);
        assert_eq!(f.panels[0].y_label, "MB per day");
        assert_eq!(points(&f.panels[0])[0], (0.5, 24.0));
        assert!(!f.panels[1].has_data(), "no bytes_up");
        let util = points(&f.panels[2]);
        assert!(util.iter().all(|p| p.1 == 25.0), "{util:?}");
        assert!(f.panels[3].no_data.contains("unlimited"));
        assert_eq!(f.panels[4].x_label, "time (minutes)");
        assert_eq!(
            points(&f.panels[4]),
            [(0.0, 0.0), (1.0, 25.0), (3.0, 100.0)]
        );
        assert!(!f.panels[5].has_data());
    }

    #[test]
    fn short_runs_use_hours_and_say_so_when_all_is_zero() {
        let d = run(12 * HOUR, "client_rpcs_failed", 0.0);
        let f = client_rpcs(&d);
        let failed = &f.panels[1];
        assert_eq!(failed.x_label, "simulated time (hours)");
        assert_eq!(failed.x_range, Some((0.0, 12.0)));
        assert_eq!(points(failed).len(), 12);
        assert_eq!(points(failed)[0], (0.5, 0.0));
        assert_eq!(failed.note, "zero throughout this run");
    }
}
