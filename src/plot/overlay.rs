//! Charts that overlay several runs for `boinc-sim compare`: one line per run (one
//! colour per run, the first run in the first colour), one set of charts per project
//! the runs share. They answer "what changed when I raised delay_bound?" over time,
//! where the compare table gives the totals.
//!
//! The same arithmetic as the run charts ([`calc::rates`] per day or per hour, gauges
//! thinned to [`MAX_SAMPLES`]), each run with its own bucket interval and length; the
//! time axis spans the longest run.

use super::calc::{self, DAY, HOUR};
use super::data::RunData;
use super::figure::{Figure, Layer, Panel, color};
use super::format;

/// At most this many gauge samples per line.
const MAX_SAMPLES: usize = 2000;

/// The runs to overlay: a label (legend) and the data of each.
pub struct Overlay<'a> {
    pub runs: &'a [(String, RunData)],
    /// Seconds per unit of the time axis (a day, or an hour for runs under 2 days).
    unit_s: f64,
    x_label: &'static str,
    end_s: i64,
}

impl<'a> Overlay<'a> {
    pub fn new(runs: &'a [(String, RunData)]) -> Self {
        let end_s = runs.iter().map(|(_, d)| d.duration_s).max().unwrap_or(0);
        let (unit_s, x_label) = if end_s >= 2 * DAY {
            (DAY as f64, "simulated time (days)")
        } else {
            (HOUR as f64, "simulated time (hours)")
        };
        Overlay {
            runs,
            unit_s,
            x_label,
            end_s,
        }
    }

    fn time_panel(&self, title: &str, y_label: &str) -> Panel {
        let mut p = Panel::new(title, self.x_label, y_label);
        p.x_range = (self.end_s > 0).then(|| (0.0, self.end_s as f64 / self.unit_s));
        p.no_data = "no data in any run".into();
        p
    }

    fn line(&self, i: usize, label: &str, mut points: Vec<(f64, f64)>) -> Layer {
        for p in &mut points {
            p.0 /= self.unit_s;
        }
        Layer::Line {
            label: label.to_string(),
            color: color(i),
            markers: points.len() <= 40,
            points,
            dashed: false,
        }
    }

    /// One line per run: `metric` of `project` as a rate per `per_s` seconds, summed
    /// over one day (`fine` false) or the finer per-hour windows.
    fn rate_panel(&self, project: &str, metric: &str, title: &str, y: &str, fine: bool) -> Panel {
        let mut p = self.time_panel(title, y);
        for (i, (label, d)) in self.runs.iter().enumerate() {
            let Some(s) = d.series(project, metric) else {
                continue;
            };
            let (window, per_s) = if fine {
                (calc::fine_window(d.duration_s, d.interval_s), HOUR as f64)
            } else {
                (calc::day_window(d.duration_s, d.interval_s), DAY as f64)
            };
            let pts = calc::rates(s, window, d.duration_s, per_s);
            p.layers.push(self.line(i, label, pts));
        }
        p
    }

    /// One line per run: the sampled gauge `metric` of `project`.
    fn gauge_panel(&self, project: &str, metric: &str, title: &str, y: &str) -> Panel {
        let mut p = self.time_panel(title, y);
        for (i, (label, d)) in self.runs.iter().enumerate() {
            let Some(s) = d.series(project, metric) else {
                continue;
            };
            let pts: Vec<(f64, f64)> = calc::thin(s, MAX_SAMPLES)
                .into_iter()
                .map(|(t, v)| (t as f64, v))
                .collect();
            p.layers.push(self.line(i, label, pts));
        }
        p
    }

    /// The cumulative distribution of turnaround per run, in hours, with each run's
    /// delay_bound as a dashed line of its colour.
    fn turnaround_panel(&self, project: &str) -> Panel {
        let mut p = Panel::new(
            "",
            "turnaround: time from sending to report (hours)",
            "fraction of reported results",
        );
        p.no_data = "no data: no `result_turnaround_s` in any run's histograms.csv".into();
        p.y_range = Some((0.0, 1.05));
        let mut right: f64 = 0.0;
        for (i, (label, d)) in self.runs.iter().enumerate() {
            let bins = d.histogram(project, "result_turnaround_s").unwrap_or(&[]);
            let cdf = calc::cdf(bins);
            if let Some(&(x, _)) = cdf.last() {
                right = right.max(x / HOUR as f64);
            }
            if !cdf.is_empty() {
                let pts = cdf.into_iter().map(|(x, f)| (x / HOUR as f64, f)).collect();
                p.layers.push(Layer::Line {
                    label: label.clone(),
                    color: color(i),
                    markers: false,
                    points: pts,
                    dashed: false,
                });
            }
            if let Some(db) = d.delay_bound_s(project) {
                right = right.max(db / HOUR as f64);
                p.layers.push(Layer::VLine {
                    label: format!("{label}: delay bound {}", format::hours(db)),
                    color: color(i),
                    x: db / HOUR as f64,
                    dashed: true,
                });
            }
        }
        if right > 0.0 {
            p.x_range = Some((0.0, right * 1.05));
        }
        p
    }

    /// Every overlay chart of `project`, named `compare_<chart><suffix>`.
    pub fn figures(&self, project: &str, suffix: &str) -> Vec<Figure> {
        let of = if suffix.is_empty() {
            String::new()
        } else {
            format!(" (project {project})")
        };
        let runs = self.legend_words();
        vec![
            Figure::new(
                &format!("compare_throughput{suffix}"),
                &format!("Throughput (valid workunits) per day, run by run{of}"),
                &format!(
                    "The throughput, workunits assimilated as valid work (top), and results \
                     reported (bottom) per simulated day, one line per run ({runs}). From each run's \
                     timeseries.csv `workunits_assimilated_valid` and `results_reported`."
                ),
                vec![
                    self.rate_panel(
                        project,
                        "workunits_assimilated_valid",
                        "Throughput: workunits assimilated as valid work",
                        "workunits per day",
                        false,
                    ),
                    self.rate_panel(
                        project,
                        "results_reported",
                        "Results reported by hosts",
                        "results per day",
                        false,
                    ),
                ],
            ),
            Figure::new(
                &format!("compare_deadlines{suffix}"),
                &format!("Missed deadlines per day, run by run{of}"),
                &format!(
                    "Results reported after their deadline (top) and results whose deadline \
                     passed with no reply (bottom), per simulated day, one line per run \
                     ({runs}). From timeseries.csv `results_deadline_missed` and \
                     `results_no_reply`."
                ),
                vec![
                    self.rate_panel(
                        project,
                        "results_deadline_missed",
                        "Reported after the deadline",
                        "results per day",
                        false,
                    ),
                    self.rate_panel(
                        project,
                        "results_no_reply",
                        "Deadline passed with no reply",
                        "results per day",
                        false,
                    ),
                ],
            ),
            Figure::new(
                &format!("compare_turnaround{suffix}"),
                &format!("Result turnaround, run by run{of}"),
                &format!(
                    "The share of reported results whose turnaround (sent → reported) is at \
                     most x hours, one curve per run ({runs}), each run's delay_bound dashed \
                     in its colour. A curve further left means faster results. From \
                     histograms.csv `result_turnaround_s`."
                ),
                vec![self.turnaround_panel(project)],
            ),
            Figure::new(
                &format!("compare_server{suffix}"),
                &format!("Server database over time, run by run{of}"),
                &format!(
                    "Workunits in the database (top) and results in progress on hosts \
                     (bottom), sampled every bucket, one line per run ({runs}). A longer \
                     delay_bound or a larger quorum keeps more rows in the database. From \
                     timeseries.csv `db_workunits` and `db_results_in_progress`."
                ),
                vec![
                    self.gauge_panel(
                        project,
                        "db_workunits",
                        "Workunits in the database",
                        "workunits",
                    ),
                    self.gauge_panel(
                        project,
                        "db_results_in_progress",
                        "Results in progress",
                        "results",
                    ),
                ],
            ),
            Figure::new(
                &format!("compare_rpcs{suffix}"),
                &format!("Scheduler requests per hour, run by run{of}"),
                &format!(
                    "Scheduler RPCs that reached the server, per hour, one line per run \
                     ({runs}): the load on the project's scheduler. From timeseries.csv \
                     `scheduler_requests`."
                ),
                vec![self.rate_panel(
                    project,
                    "scheduler_requests",
                    "Scheduler requests that reached the server",
                    "requests per hour",
                    true,
                )],
            ),
        ]
    }

    fn legend_words(&self) -> String {
        self.runs
            .iter()
            .map(|(l, _)| l.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(days: i64, per_bucket: f64) -> RunData {
        let mut d = RunData {
            projects: vec!["main".into()],
            duration_s: days * DAY,
            interval_s: HOUR,
            ..RunData::default()
        };
        let s: Vec<(i64, f64)> = (0..=days * 24).map(|k| (k * HOUR, per_bucket)).collect();
        d.series
            .insert(("main".into(), "results_reported".into()), s);
        d
    }

    #[test]
    fn one_line_per_run_with_its_own_rate() {
        let runs = vec![
            ("a".to_string(), run(4, 1.0)),
            ("b".to_string(), run(8, 2.0)),
        ];
        let o = Overlay::new(&runs);
        let p = o.rate_panel("main", "results_reported", "", "", false);
        assert_eq!(p.layers.len(), 2);
        let Layer::Line { points, label, .. } = &p.layers[1] else {
            panic!("a line")
        };
        assert_eq!(label, "b");
        // 2 per hour = 48 per day, at the middle of each day (x in days).
        assert_eq!(points[0], (0.5, 48.0));
        assert_eq!(points.len(), 8);
        assert_eq!(p.x_range, Some((0.0, 8.0)));
        // A metric no run has leaves the panel empty, with its note.
        assert!(!o.rate_panel("main", "nope", "", "", false).has_data());
    }
}
