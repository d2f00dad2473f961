//! The sections of the report's summary table: which `summary.csv` figure goes in
//! which group, under what readable name and unit.
//!
//! Table-driven, so a new figure is one line of [`FIGURES`]; a column the table does
//! not know still shows, under its raw name in the last group ("Other"), so nothing
//! is ever lost from the report.

/// The groups, in the order the report shows them.
pub(crate) const GROUPS: [&str; 11] = [
    "Design",
    "Throughput",
    "Deadlines",
    "Latency",
    "Waste",
    "Credit",
    "Science error",
    "Server and clients",
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
        "Workunits assimilated as valid work (whole run)",
        "",
    ),
    (
        "workunits_assimilated_error",
        "Throughput",
        "Workunits assimilated in error (whole run)",
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
    (
        "results_deadline_met",
        "Deadlines",
        "Reported in time (whole run)",
        "",
    ),
    (
        "results_deadline_missed",
        "Deadlines",
        "Reported late (whole run)",
        "",
    ),
    (
        "deadline_miss_frac",
        "Deadlines",
        "Late share of reported results only",
        "%",
    ),
    (
        "results_no_reply",
        "Deadlines",
        "Timed out, NO_REPLY (whole run)",
        "",
    ),
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
        "Wrong canonical results: share of canonical (whole run)",
        "%",
    ),
    (
        "workunits_wrong_canonical",
        "Science error",
        "Workunits whose canonical result is wrong (whole run)",
        "",
    ),
    (
        "results_wrong_valid",
        "Science error",
        "Wrong results judged VALID (whole run)",
        "",
    ),
    (
        "results_correct_invalid",
        "Science error",
        "Correct results judged INVALID (whole run)",
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
