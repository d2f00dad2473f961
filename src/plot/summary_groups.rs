//! The sections of the report's summary table: which `summary.csv` figure goes in
//! which group, under what readable name and unit.
//!
//! Table-driven, so a new figure is one line of [`FIGURES`]; a column the table does
//! not know still shows, under its raw name in the last group ("Other"), so nothing
//! is ever lost from the report.

/// The groups, in the order the report shows them.
pub(crate) const GROUPS: [&str; 12] = [
    "Design",
    "Throughput",
    "Deadlines",
    "Latency",
    "Waste",
    "Credit",
    "Science error",
    "Server and clients",
    "Scheduler load",
    "File transfers",
    "Batches",
    "Other",
];

/// `(column, group, readable name, unit)`: the unit is empty for counts.
pub(crate) const FIGURES: &[(&str, &str, &str, &str)] = &[
    ("delay_bound_s", "Design", "Delay bound", "time"),
    ("min_quorum", "Design", "Quorum (min_quorum)", ""),
    (
        "target_nresults",
        "Design",
        "Results created per workunit (target_nresults)",
        "",
    ),
    (
        "workunits_valid_per_day",
        "Throughput",
        "Throughput: valid workunits per day",
        "per day",
    ),
    (
        "workunits_error_per_day",
        "Throughput",
        "Workunits in error per day (not throughput)",
        "per day",
    ),
    ("workunits_created", "Throughput", "Workunits created", ""),
    (
        "workunits_assimilated_valid",
        "Throughput",
        "Workunits assimilated as valid work",
        "",
    ),
    (
        "workunits_assimilated_error",
        "Throughput",
        "Workunits assimilated in error",
        "",
    ),
    (
        "workunits_assimilated_per_day",
        "Throughput",
        "Valid + error workunits per day (not throughput)",
        "per day",
    ),
    ("results_created", "Throughput", "Results created", ""),
    ("results_sent", "Throughput", "Results sent", ""),
    ("results_reported", "Throughput", "Results reported", ""),
    (
        "results_reported_per_day",
        "Throughput",
        "Results reported per day",
        "per day",
    ),
    (
        "deadline_fail_frac",
        "Deadlines",
        "Deadline failures: not back in time",
        "%",
    ),
    (
        "results_deadline_passed",
        "Deadlines",
        "Results whose deadline passed (after warm-up)",
        "",
    ),
    ("results_deadline_late", "Deadlines", "… reported late", ""),
    (
        "results_deadline_no_reply",
        "Deadlines",
        "… never reported",
        "",
    ),
    (
        "results_deadline_detached",
        "Deadlines",
        "… lost with a detached host",
        "",
    ),
    (
        "results_censored",
        "Deadlines",
        "Results left out: deadline after the end",
        "",
    ),
    ("results_deadline_met", "Deadlines", "Reported in time", ""),
    ("results_deadline_missed", "Deadlines", "Reported late", ""),
    (
        "deadline_miss_frac",
        "Deadlines",
        "Late share of reported results only",
        "%",
    ),
    ("results_no_reply", "Deadlines", "Timed out, NO_REPLY", ""),
    (
        "no_reply_frac",
        "Deadlines",
        "NO_REPLY share of results",
        "%",
    ),
    (
        "results_too_late",
        "Deadlines",
        "Reported after the workunit was done (TOO_LATE)",
        "",
    ),
    (
        "too_late_frac",
        "Deadlines",
        "TOO_LATE share of results",
        "%",
    ),
    ("turnaround_p50_s", "Latency", "Turnaround, median", "time"),
    (
        "turnaround_p90_s",
        "Latency",
        "Turnaround, 90th percentile",
        "time",
    ),
    (
        "turnaround_p99_s",
        "Latency",
        "Turnaround, 99th percentile",
        "time",
    ),
    (
        "slack_p01_s",
        "Latency",
        "Slack before deadline, 1st percentile",
        "time",
    ),
    (
        "slack_p10_s",
        "Latency",
        "Slack before deadline, 10th percentile",
        "time",
    ),
    (
        "slack_p50_s",
        "Latency",
        "Slack before deadline, median",
        "time",
    ),
    (
        "time_to_canonical_p50_s",
        "Latency",
        "Workunit to canonical result, median",
        "time",
    ),
    (
        "time_to_canonical_p90_s",
        "Latency",
        "Workunit to canonical result, p90",
        "time",
    ),
    (
        "time_to_canonical_p99_s",
        "Latency",
        "Workunit to canonical result, p99",
        "time",
    ),
    (
        "time_to_assimilation_p50_s",
        "Latency",
        "Workunit to assimilation, median",
        "time",
    ),
    (
        "time_to_assimilation_p90_s",
        "Latency",
        "Workunit to assimilation, p90",
        "time",
    ),
    (
        "time_to_assimilation_p99_s",
        "Latency",
        "Workunit to assimilation, p99",
        "time",
    ),
    (
        "results_per_workunit",
        "Waste",
        "Results per workunit",
        "ratio",
    ),
    (
        "error_frac",
        "Waste",
        "Client errors: share of results",
        "%",
    ),
    (
        "didnt_need_frac",
        "Waste",
        "Not needed: share of results",
        "%",
    ),
    ("cpu_time_reported_s", "Waste", "CPU time reported", "time"),
    ("cpu_time_wasted_s", "Waste", "CPU time wasted", "time"),
    ("wasted_cpu_frac", "Waste", "Wasted share of CPU time", "%"),
    ("flops_useful_flops", "Waste", "Useful computing", "FLOP"),
    ("flops_wasted_flops", "Waste", "Wasted computing", "FLOP"),
    (
        "hosts_idle_frac",
        "Waste",
        "Idle share of host capacity",
        "%",
    ),
    (
        "credit_granted_credit",
        "Credit",
        "Credit granted",
        "credits",
    ),
    (
        "credit_granted_per_day_credit",
        "Credit",
        "Credit granted per day",
        "credits per day",
    ),
    (
        "credit_claimed_valid_credit",
        "Credit",
        "Credit claimed by valid results",
        "credits",
    ),
    (
        "claimed_to_granted_ratio",
        "Credit",
        "Claimed / granted",
        "ratio",
    ),
    ("hosts_attached", "Credit", "Hosts attached", ""),
    (
        "credit_per_host_mean_credit",
        "Credit",
        "Credit per host, mean",
        "credits",
    ),
    (
        "credit_per_host_p50_credit",
        "Credit",
        "Credit per host, median",
        "credits",
    ),
    (
        "credit_per_host_p90_credit",
        "Credit",
        "Credit per host, p90",
        "credits",
    ),
    (
        "credit_per_host_gini",
        "Credit",
        "Credit inequality (Gini)",
        "0–1",
    ),
    (
        "credit_neutrality_ratio",
        "Credit",
        "Device neutrality: highest / lowest credit per FLOP across app versions",
        "ratio",
    ),
    (
        "invalid_frac",
        "Science error",
        "Judged INVALID: share of validated results",
        "%",
    ),
    (
        "wrong_canonical_frac",
        "Science error",
        "Wrong canonical results: share of canonical",
        "%",
    ),
    (
        "workunits_wrong_canonical",
        "Science error",
        "Workunits whose canonical result is wrong",
        "",
    ),
    (
        "results_wrong_valid",
        "Science error",
        "Wrong results judged VALID",
        "",
    ),
    (
        "results_correct_invalid",
        "Science error",
        "Correct results judged INVALID",
        "",
    ),
    (
        "scheduler_requests",
        "Server and clients",
        "Scheduler requests",
        "",
    ),
    (
        "scheduler_requests_per_hour",
        "Server and clients",
        "Scheduler requests per hour",
        "per hour",
    ),
    (
        "client_rpcs_failed",
        "Server and clients",
        "RPCs refused by an outage",
        "",
    ),
    (
        "client_backoffs",
        "Server and clients",
        "Client backoffs",
        "",
    ),
    (
        "client_backoff_mean_s",
        "Server and clients",
        "Client backoff, mean",
        "time",
    ),
    (
        "results_with_files",
        "File transfers",
        "Results reported with files",
        "",
    ),
    (
        "download_time_mean_s",
        "File transfers",
        "Download time (arrival to runnable), mean",
        "time",
    ),
    (
        "download_time_p50_s",
        "File transfers",
        "Download time, median",
        "time",
    ),
    (
        "download_time_p90_s",
        "File transfers",
        "Download time, 90th percentile",
        "time",
    ),
    (
        "download_time_p99_s",
        "File transfers",
        "Download time, 99th percentile",
        "time",
    ),
    (
        "upload_time_mean_s",
        "File transfers",
        "Upload time (computed to output on the server), mean",
        "time",
    ),
    (
        "upload_time_p50_s",
        "File transfers",
        "Upload time, median",
        "time",
    ),
    (
        "upload_time_p90_s",
        "File transfers",
        "Upload time, 90th percentile",
        "time",
    ),
    (
        "upload_time_p99_s",
        "File transfers",
        "Upload time, 99th percentile",
        "time",
    ),
    (
        "bytes_down",
        "File transfers",
        "Data server: bytes sent to hosts",
        "bytes",
    ),
    (
        "bytes_up",
        "File transfers",
        "Data server: bytes received from hosts",
        "bytes",
    ),
    (
        "link_util_down_frac",
        "File transfers",
        "Data server: download link used",
        "%",
    ),
    (
        "link_util_up_frac",
        "File transfers",
        "Data server: upload link used",
        "%",
    ),
    (
        "link_busy_down_frac",
        "File transfers",
        "Data server: time the download link was at least 95 % used",
        "%",
    ),
    (
        "link_busy_up_frac",
        "File transfers",
        "Data server: time the upload link was at least 95 % used",
        "%",
    ),
    (
        "link_util_down_p90",
        "File transfers",
        "Data server: download link used, p90 of the buckets",
        "%",
    ),
    (
        "link_util_up_p90",
        "File transfers",
        "Data server: upload link used, p90 of the buckets",
        "%",
    ),
    (
        "data_max_connections",
        "Design",
        "Data server connections (max_connections)",
        "",
    ),
    (
        "data_connections_full_frac",
        "File transfers",
        "Data server: time every connection was taken",
        "%",
    ),
    (
        "transfers_refused",
        "File transfers",
        "Transfers refused (every connection taken)",
        "",
    ),
    ("scheduler_processes", "Design", "Scheduler processes", ""),
    (
        "scheduler_busy_frac",
        "Scheduler load",
        "Scheduler processes busy",
        "%",
    ),
    (
        "rpc_wait_mean_s",
        "Scheduler load",
        "RPC wait for a process, mean",
        "time",
    ),
    (
        "rpc_wait_p50_s",
        "Scheduler load",
        "RPC wait, median",
        "time",
    ),
    (
        "rpc_wait_p90_s",
        "Scheduler load",
        "RPC wait, 90th percentile",
        "time",
    ),
    (
        "rpc_wait_p99_s",
        "Scheduler load",
        "RPC wait, 99th percentile",
        "time",
    ),
    ("rpcs_served", "Scheduler load", "RPCs served", ""),
    (
        "rpcs_refused",
        "Scheduler load",
        "RPCs refused (listen queue full)",
        "",
    ),
    (
        "rpcs_timed_out",
        "Scheduler load",
        "RPCs given up by their client (connect timeout)",
        "",
    ),
    ("outages", "Scheduler load", "Outages", ""),
    (
        "recovery_time_max_s",
        "Scheduler load",
        "Time to recover from an outage, longest",
        "time",
    ),
    (
        "outages_unrecovered",
        "Scheduler load",
        "Outages not recovered from by the end",
        "",
    ),
    ("batches_submitted", "Batches", "Batches submitted", ""),
    (
        "batches_completed",
        "Batches",
        "Batches with every job valid",
        "",
    ),
    (
        "batch_time_to_90_p50_s",
        "Batches",
        "Time to 90 % of a batch, median",
        "time",
    ),
    (
        "batch_time_to_90_p90_s",
        "Batches",
        "Time to 90 % of a batch, 90th percentile",
        "time",
    ),
    (
        "batch_completion_p50_s",
        "Batches",
        "Batch completion (100 % valid), median",
        "time",
    ),
    (
        "batch_completion_p90_s",
        "Batches",
        "Batch completion, 90th percentile",
        "time",
    ),
    (
        "batch_completion_max_s",
        "Batches",
        "Batch completion, slowest batch",
        "time",
    ),
    (
        "batch_results_resent",
        "Batches",
        "Batches' results sent again",
        "",
    ),
    (
        "batch_cpu_time_wasted_s",
        "Batches",
        "Batches' CPU time wasted",
        "time",
    ),
];

/// The time a `summary.csv` figure covers (docs/outputs.md, "The measured window"):
/// every label of the report names it, so that a count over the whole run is never
/// read as the measured window's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// From `[output] warmup` to the end: every rate, fraction and percentile.
    Measured,
    /// The whole run: the plain counts and totals, the hosts' figures, the transfer
    /// figures.
    WholeRun,
    /// Not a figure over time: a setting of the scenario.
    Setting,
}

impl Window {
    /// The words a label ends with, and docs/outputs.md's table gives.
    pub fn words(self) -> &'static str {
        match self {
            Window::Measured => "measured window",
            Window::WholeRun => "whole run",
            Window::Setting => "setting",
        }
    }
}

/// The columns of `summary.csv` that are settings, not figures.
const SETTINGS: [&str; 5] = [
    "delay_bound_s",
    "min_quorum",
    "target_nresults",
    "scheduler_processes",
    "data_max_connections",
];

/// The `summary.csv` columns that stay whole-run (docs/outputs.md, after "These stay
/// whole-run"), with the transfer figures (`stats::headline::TRANSFER_COLUMNS`):
/// every other figure covers the measured window.
const WHOLE_RUN: [&str; 25] = [
    "workunits_created",
    "workunits_assimilated_valid",
    "workunits_assimilated_error",
    "results_created",
    "results_sent",
    "results_reported",
    "results_deadline_met",
    "results_deadline_missed",
    "results_no_reply",
    "results_too_late",
    "cpu_time_reported_s",
    "cpu_time_wasted_s",
    "flops_useful_flops",
    "flops_wasted_flops",
    "credit_granted_credit",
    "credit_claimed_valid_credit",
    "scheduler_requests",
    "client_rpcs_failed",
    "client_backoffs",
    "hosts_attached",
    "credit_per_host_mean_credit",
    "credit_per_host_p50_credit",
    "credit_per_host_p90_credit",
    "credit_per_host_gini",
    "hosts_idle_frac",
];

/// The time column `column` of `summary.csv` covers.
pub fn window(column: &str) -> Window {
    if SETTINGS.contains(&column) {
        Window::Setting
    } else if WHOLE_RUN.contains(&column)
        || crate::stats::headline::TRANSFER_COLUMNS.contains(&column)
        || crate::stats::headline::CONNECTION_COLUMNS.contains(&column)
        || crate::stats::recovery::COLUMNS.contains(&column)
    {
        Window::WholeRun
    } else {
        Window::Measured
    }
}

/// The group, readable name and unit of a column; unknown columns go to "Other"
/// under their own name.
pub fn describe(column: &str) -> (&'static str, Option<(&'static str, &'static str)>) {
    match FIGURES.iter().find(|f| f.0 == column) {
        Some(&(_, group, name, unit)) => (group, Some((name, unit))),
        None => (GROUPS[GROUPS.len() - 1], None),
    }
}

/// Rows grouped in [`GROUPS`] order; within a group, in [`FIGURES`] order, then the
/// unknown columns in their own order. Empty groups are left out.
pub fn group<T>(rows: Vec<(String, T)>) -> Vec<(&'static str, Vec<(String, T)>)> {
    let rank = |c: &str| FIGURES.iter().position(|f| f.0 == c).unwrap_or(usize::MAX);
    let mut out: Vec<(&'static str, Vec<(String, T)>)> =
        GROUPS.iter().map(|g| (*g, Vec::new())).collect();
    for (column, v) in rows {
        let (g, _) = describe(&column);
        if let Some(slot) = out.iter_mut().find(|(name, _)| *name == g) {
            slot.1.push((column, v));
        }
    }
    for (_, rows) in &mut out {
        // Stable: unknown columns keep their order after the known ones.
        rows.sort_by_key(|(c, _)| rank(c));
    }
    out.retain(|(_, rows)| !rows.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_headline_column_has_a_group_and_a_name() {
        let transfers = crate::stats::headline::TRANSFER_COLUMNS;
        let batches = crate::stats::batches::BATCH_COLUMNS;
        for c in (crate::stats::headline::COLUMNS.into_iter())
            .chain(transfers)
            .chain(crate::stats::headline::CONNECTION_COLUMNS)
            .chain(crate::stats::scheduler_load::COLUMNS)
            .chain(crate::stats::recovery::COLUMNS)
            .chain(batches)
        {
            let (g, named) = describe(c);
            assert_ne!(g, "Other", "{c} has no group");
            assert!(named.is_some(), "{c}");
        }
        for f in FIGURES {
            assert!(GROUPS.contains(&f.1), "{}: unknown group {}", f.0, f.1);
        }
        let mut cols: Vec<&str> = FIGURES.iter().map(|f| f.0).collect();
        cols.sort();
        cols.dedup();
        assert_eq!(cols.len(), FIGURES.len(), "a column listed twice");
    }

    /// The windows here are docs/outputs.md's: its table of each figure's window
    /// lists every `summary.csv` column once, with [`window`]'s answer; the figures
    /// its table of the measured window names are measured, and the counts its
    /// "These stay whole-run" names are whole-run.
    #[test]
    fn windows_are_the_documented_ones() {
        let doc = include_str!("../../docs/outputs.md");
        let ticked = |text: &str| -> Vec<String> {
            text.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        };
        let mut listed = std::collections::BTreeMap::new();
        for w in [Window::Measured, Window::WholeRun, Window::Setting] {
            let line = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {} | `", w.words())))
                .unwrap_or_else(|| panic!("no row for {:?}", w));
            for c in ticked(line) {
                assert_eq!(window(&c), w, "{c}: docs say {}", w.words());
                assert!(listed.insert(c.clone(), w).is_none(), "{c} listed twice");
            }
        }
        let all = crate::stats::headline::COLUMNS
            .into_iter()
            .chain(crate::stats::headline::TRANSFER_COLUMNS)
            .chain(crate::stats::headline::CONNECTION_COLUMNS)
            .chain(crate::stats::scheduler_load::COLUMNS)
            .chain(crate::stats::recovery::COLUMNS)
            .chain(crate::stats::batches::BATCH_COLUMNS);
        for c in all {
            assert!(listed.contains_key(c), "{c} has no documented window");
        }
        // The prose: the measured window's table, and the whole-run counts.
        let section = &doc[doc.find("### The measured window").unwrap()..];
        let section = &section[..section.find("**The window of each figure**").unwrap()];
        let (measured, whole) = section.split_at(section.find("These stay **whole-run**").unwrap());
        let matches = |pattern: &str| -> Vec<&str> {
            let prefix = pattern.trim_end_matches('*');
            listed
                .keys()
                .map(String::as_str)
                .filter(|c| {
                    if pattern.contains('*') {
                        c.starts_with(prefix.split('*').next().unwrap())
                    } else {
                        *c == pattern
                    }
                })
                .collect()
        };
        for l in measured.lines().filter(|l| l.starts_with("| `")) {
            let first = l.split('|').nth(1).unwrap();
            for p in ticked(first).iter().filter(|p| !p.starts_with('…')) {
                let cs = matches(p);
                assert!(!cs.is_empty(), "{p} matches no column");
                for c in cs {
                    assert_eq!(
                        window(c),
                        Window::Measured,
                        "{c} is in the measured window's table"
                    );
                }
            }
        }
        let whole = &whole[..whole.find("`credit_neutrality_ratio` counts").unwrap()];
        for p in ticked(whole) {
            for c in matches(&p) {
                assert_eq!(
                    window(c),
                    Window::WholeRun,
                    "{c} stays whole-run in the docs"
                );
            }
        }
    }

    #[test]
    fn rows_are_grouped_in_order_and_unknown_ones_kept() {
        let rows = [
            "error_frac",
            "mystery",
            "deadline_fail_frac",
            "workunits_valid_per_day",
            "zz",
            "invalid_frac",
        ]
        .map(|c| (c.to_string(), c.len()))
        .to_vec();
        let g = group(rows);
        let names: Vec<(&str, Vec<&str>)> = g
            .iter()
            .map(|(g, r)| (*g, r.iter().map(|(c, _)| c.as_str()).collect()))
            .collect();
        assert_eq!(
            names,
            [
                ("Throughput", vec!["workunits_valid_per_day"]),
                ("Deadlines", vec!["deadline_fail_frac"]),
                ("Waste", vec!["error_frac"]),
                ("Science error", vec!["invalid_frac"]),
                ("Other", vec!["mystery", "zz"]),
            ]
        );
        assert_eq!(g[4].1[0].1, "mystery".len());
    }
}
