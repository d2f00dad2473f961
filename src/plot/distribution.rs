//! Distributions from `histograms.csv`, in hours: result turnaround against the
//! project's deadline, and slack (how early or late results came back).
//!
//! The file's bins are narrow (`[output] histogram_bin`, a minute by default) and
//! span the whole run, so they are regrouped into round-width bins (about 60 over
//! the data) over the range that holds the data (up to the 99.9th percentile) and
//! the deadline; the few values beyond are counted in the legend instead of
//! squeezing the chart.

use super::calc;
use super::data::{Bin, RunData};
use super::figure::{BLUE, Figure, GREEN, GREY, INK, Layer, ORANGE, PURPLE, Panel, RED};
use super::format;
use plotters::style::RGBColor;

const BARS: RGBColor = BLUE;
const LATE: RGBColor = RED;
const DEADLINE: RGBColor = RED;
const P50: RGBColor = GREEN;
const P90: RGBColor = ORANGE;
const P99: RGBColor = PURPLE;

/// About this many display bins across the data (the 0.1 to 99.9 percentiles)...
const DATA_BINS: f64 = 60.0;
/// ...and at most this many across the whole axis (which also holds the deadline).
const MAX_BINS: f64 = 400.0;

/// The display bin width: about [`DATA_BINS`] over the data, so a narrow peak far
/// from the deadline still shows its shape, without exceeding [`MAX_BINS`] over the
/// axis; round, and a multiple of the file's own bins.
fn display_width(d: &RunData, bins: &[Bin], axis_span: f64) -> f64 {
    let lo = calc::quantile(bins, 0.001).unwrap_or(0.0);
    let hi = calc::quantile(bins, 0.999).unwrap_or(0.0);
    let raw = ((hi - lo) / DATA_BINS).max(axis_span / MAX_BINS);
    calc::nice_duration_width(raw, 1.0, base_width(d, bins))
}

/// Width of the file's own bins: the first bounded bin's, else `[output]
/// histogram_bin`, else 0 (unknown).
fn base_width(d: &RunData, bins: &[Bin]) -> f64 {
    bins.iter()
        .find_map(|b| Some(b.upper? - b.lower?))
        .or_else(|| {
            d.effective_config()?
                .get("output")?
                .get("histogram_bin")
                .and_then(super::data::json_duration)
                .map(|s| s as f64)
        })
        .unwrap_or(0.0)
}

fn title_for(title: &str, project: &str, several: bool) -> String {
    if several {
        format!("{title} — project {project}")
    } else {
        title.to_string()
    }
}

fn hours_bins(bins: Vec<(f64, f64, f64)>) -> Vec<(f64, f64, f64)> {
    let h = calc::HOUR as f64;
    bins.into_iter()
        .map(|(l, u, c)| (l / h, u / h, c))
        .collect()
}

/// Result turnaround (sent → reported) with the deadline and percentiles marked.
pub fn turnaround(d: &RunData, project: &str, name: &str) -> Figure {
    let several = d.projects.len() > 1;
    let mut p = Panel::new(
        "",
        "turnaround: time from sending to report (hours)",
        "results",
    );
    p.no_data =
        "no data: no `result_turnaround_s` in histograms.csv (no result was reported)".into();
    let bins = d.histogram(project, "result_turnaround_s").unwrap_or(&[]);
    let total: f64 = bins.iter().map(|b| b.count).sum();
    let delay_bound = d.delay_bound_s(project);
    let mut estimated = false;
    let mut pct = |col: &str, q: f64| {
        d.summary_value(project, col).or_else(|| {
            let v = calc::quantile(bins, q);
            estimated |= v.is_some();
            v
        })
    };
    let marks = [
        ("median (p50)", pct("turnaround_p50_s", 0.5), P50),
        ("p90", pct("turnaround_p90_s", 0.9), P90),
        ("p99", pct("turnaround_p99_s", 0.99), P99),
    ];
    let mut width_words = String::new();
    if total > 0.0 {
        let top = [calc::quantile(bins, 0.999), delay_bound, marks[2].1]
            .into_iter()
            .flatten()
            .fold(0.0, f64::max);
        let hi = if top > 0.0 { top * 1.08 } else { 3600.0 };
        let width = display_width(d, bins, hi);
        let (shown, below, above) = calc::rebin(bins, 0.0, hi, width);
        width_words = format::round_duration(width);
        let mut label = format!("results (n = {})", format::number(total));
        if below + above > 0.0 {
            label.push_str(&format!(
                "; {} beyond the right edge",
                format::number(below + above)
            ));
        }
        p.layers.push(Layer::Bars {
            label,
            color: BARS,
            bins: hours_bins(shown),
        });
        p.y_label = format!("results per {width_words} bin");
    }
    if let Some(db) = delay_bound {
        p.layers.push(Layer::VLine {
            label: format!("delay bound (deadline) = {}", format::hours(db)),
            color: DEADLINE,
            x: db / calc::HOUR as f64,
            dashed: false,
        });
    }
    if total > 0.0 {
        for (what, v, c) in marks {
            if let Some(v) = v {
                p.layers.push(Layer::VLine {
                    label: format!("{what} = {}", format::hours(v)),
                    color: c,
                    x: v / calc::HOUR as f64,
                    dashed: true,
                });
            }
        }
    }
    let source = if estimated {
        "The percentiles are estimated from the histogram bins (this run folder has no \
         summary.csv percentiles)."
    } else {
        "The percentiles are summary.csv `turnaround_p50_s`, `turnaround_p90_s`, \
         `turnaround_p99_s`."
    };
    Figure::new(
        name,
        &title_for(
            "Result turnaround: time from sending a result to its report",
            project,
            several,
        ),
        &format!(
            "How long hosts take to return results. Each bar counts the reported results whose \
             turnaround fell in its {} bin; the solid red line is the project's `delay_bound` \
             (results reported right of it missed their deadline) and the dashed lines the \
             median, 90th and 99th percentiles. A p99 close to the delay bound means a tighter \
             deadline would cut off slow but honest hosts. {source} From histograms.csv \
             `result_turnaround_s`; the delay bound from summary.csv `delay_bound_s` or the \
             configuration.",
            if width_words.is_empty() {
                "display".into()
            } else {
                width_words
            }
        ),
        vec![p],
    )
}

/// The legend entry of the results that never came back (no slack to draw): the
/// `summary.csv` counts of results never reported and lost with a detached host;
/// none for a run folder without them.
fn never_came_back(d: &RunData, project: &str) -> Option<Layer> {
    let no_reply = d.summary_value(project, "results_deadline_no_reply")?;
    let detached = d.summary_value(project, "results_deadline_detached")?;
    Some(Layer::Key {
        label: format!(
            "never came back: {} results ({} no reply, {} with a detached host)",
            format::number(no_reply + detached),
            format::number(no_reply),
            format::number(detached)
        ),
        color: GREY,
    })
}

/// Slack (deadline − report time): how early results came back, late ones in red.
pub(crate) fn slack(d: &RunData, project: &str, name: &str) -> Figure {
    let several = d.projects.len() > 1;
    let mut p = Panel::new(
        "",
        "slack: deadline minus report time (hours; negative = late)",
        "results",
    );
    p.no_data = "no data: no `result_slack_s` in histograms.csv (no result was reported)".into();
    let bins = d.histogram(project, "result_slack_s").unwrap_or(&[]);
    let total: f64 = bins.iter().map(|b| b.count).sum();
    if total > 0.0 {
        let late: f64 = bins
            .iter()
            .filter(|b| b.upper.is_some_and(|u| u <= 0.0))
            .map(|b| b.count)
            .sum();
        let lo = calc::quantile(bins, 0.001).unwrap_or(0.0).min(0.0);
        let hi = calc::quantile(bins, 0.999).unwrap_or(0.0).max(0.0);
        let pad = 0.04 * (hi - lo).max(3600.0);
        let width = display_width(d, bins, hi - lo + 2.0 * pad);
        // Bin edges on multiples of the width, so one edge is at 0 (the deadline).
        let lo = ((lo - pad) / width).floor() * width;
        let hi = ((hi + pad) / width).ceil() * width;
        let (shown, below, above) = calc::rebin(bins, lo, hi, width);
        let (late_bins, ok_bins): (Vec<_>, Vec<_>) =
            hours_bins(shown).into_iter().partition(|b| b.1 <= 0.0);
        let beyond = |n: f64, side: &str| {
            if n > 0.0 {
                format!("; {} beyond the {side} edge", format::number(n))
            } else {
                String::new()
            }
        };
        p.layers.push(Layer::Bars {
            label: format!(
                "on time: {} results ({}){}",
                format::number(total - late),
                format::percent((total - late) / total),
                beyond(above, "right")
            ),
            color: BARS,
            bins: ok_bins,
        });
        p.layers.push(Layer::Bars {
            label: format!(
                "late: {} results ({}){}",
                format::number(late),
                format::percent(late / total),
                beyond(below, "left")
            ),
            color: LATE,
            bins: late_bins,
        });
        p.layers.push(Layer::VLine {
            label: "deadline (slack 0)".into(),
            color: INK,
            x: 0.0,
            dashed: true,
        });
        p.y_label = format!("results per {} bin", format::round_duration(width));
    }
    if let Some(key) = never_came_back(d, project) {
        p.layers.push(key);
    }
    Figure::new(
        name,
        &title_for(
            "Result slack: how long before its deadline each result came back",
            project,
            several,
        ),
        "Slack is the deadline minus the time the result was reported: positive (blue) means it \
         came back that many hours early, negative (red) that it was late. The dashed line at 0 \
         is the deadline. A wide blue mass far to the right means the `delay_bound` leaves much \
         unused time; a red tail shows the hosts a tighter deadline would lose. The jobs \
         that never came back have no slack: the legend counts them (never reported, and lost \
         with a detached host, after the warm-up). From histograms.csv `result_slack_s` and \
         summary.csv `results_deadline_no_reply`, `results_deadline_detached`.",
        vec![p],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::data::SummaryTable;

    fn legend_of(f: &Figure) -> Vec<String> {
        f.panels[0]
            .layers
            .iter()
            .filter_map(|l| match l {
                Layer::Key { label, .. } => Some(label.clone()),
                _ => None,
            })
            .collect()
    }

    /// The slack chart's legend counts the results that never came back, which
    /// have no slack to draw; a folder without those columns gets no such entry.
    #[test]
    fn slack_legend_counts_the_jobs_that_never_came_back() {
        let mut d = RunData {
            projects: vec!["main".into()],
            ..RunData::default()
        };
        assert!(legend_of(&slack(&d, "main", "slack")).is_empty());
        d.summary = Some(SummaryTable {
            columns: vec![
                "project".into(),
                "results_deadline_no_reply".into(),
                "results_deadline_detached".into(),
            ],
            rows: vec![vec!["main".into(), "1200.0".into(), "34.0".into()]],
        });
        let f = slack(&d, "main", "slack");
        assert_eq!(
            legend_of(&f),
            [format!(
                "never came back: {} results ({} no reply, 34 with a detached host)",
                format::number(1234.0),
                format::number(1200.0)
            )]
        );
        // A count alone is not data: the panel still says it has none.
        assert!(!f.panels[0].has_data());
    }
}
