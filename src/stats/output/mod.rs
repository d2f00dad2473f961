//! The run folder's tables: `workunits.csv`, `results.csv`, `transitions.csv` and
//! `summary.json` (columns and conventions in `docs/outputs.md`).
//!
//! The tables are long CSVs meant for pandas or polars: a header row, `,` separators,
//! `\n` line ends, integers in BOINC's own numbering, floats in Rust's shortest
//! round-trip form with a `.0` kept on whole values (so a column of floats always
//! reads as floats), and an empty field for a missing value.
//!
//! The tables are the largest files of a run (`docs/outputs.md`, "How much disk a run
//! takes"), so writing them must cost little beside the simulation
//! (`docs/performance.md`, "Writing the outputs"). The work is split by concern,
//! each module naming only those after it:
//!
//! * [`folder`]: the run folder on disk, written into a temporary folder and moved
//!   into place whole ([`RunOutput`], [`move_into_place`]); `RunOutput` takes each
//!   final row from the recorder and hands it on.
//! * [`writer`]: the writer thread, which owns the files (and the gzip encoder of a
//!   compressed audit trail) and works on the other core.
//! * [`records`]: the columns of each final workunit and result, copied on the run's
//!   thread and formatted on the writer thread.
//! * [`format`]: the bytes of a row, written straight into a buffer per table
//!   ([`Table`]) with no csv writer and no allocation per row, in exactly the bytes
//!   the csv crate wrote before; [`CsvFile`] for a table written whole after the run.

mod folder;
mod format;
mod records;
mod writer;

pub use folder::RunOutput;
pub(crate) use folder::move_into_place;
pub(crate) use format::{CsvFile, Table};

/// File name of the workunit table.
pub(crate) const WORKUNITS_CSV: &str = "workunits.csv";
/// File name of the result table.
pub(crate) const RESULTS_CSV: &str = "results.csv";
/// File name of the audit trail.
pub(crate) const TRANSITIONS_CSV: &str = "transitions.csv";
/// File name of the gzip-compressed audit trail (unscripted runs, see [`AuditTrail`]).
pub(crate) const TRANSITIONS_CSV_GZ: &str = "transitions.csv.gz";

/// Whether and how the audit trail `transitions.csv` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuditTrail {
    /// Not written.
    Off,
    /// `transitions.csv`, plain text (scripted scenarios: small, read by tests).
    Csv,
    /// `transitions.csv.gz`: the same rows gzip-compressed, for unscripted runs where
    /// the trail is by far the largest file. pandas and polars read it as is.
    Gzip,
}
/// File name of the headline figures and effective configuration.
pub(crate) const SUMMARY_JSON: &str = "summary.json";

/// Columns of `workunits.csv`.
pub(crate) const WORKUNIT_COLUMNS: &[&str] = &[
    "project",
    "id",
    "name",
    "appid",
    "create_time_s",
    "priority",
    "delay_bound_s",
    "rsc_fpops_est_flops",
    "true_size_flops",
    "min_quorum",
    "target_nresults",
    "max_error_results",
    "max_total_results",
    "max_success_results",
    "need_validate",
    "canonical_resultid",
    "canonical_credit",
    "transition_time_s",
    "error_mask",
    "assimilate_state",
    "file_delete_state",
    "hr_class",
    "nresults",
    "canonical_found_time_s",
    "assimilated_time_s",
    "assimilate_count",
    "files_deleted_time_s",
    "purged",
    "canonical_correct",
];

/// Columns of `results.csv`.
pub(crate) const RESULT_COLUMNS: &[&str] = &[
    "project",
    "id",
    "name",
    "workunitid",
    "hostid",
    "host",
    "server_state",
    "outcome",
    "validate_state",
    "file_delete_state",
    "client_state",
    "exit_status",
    "priority",
    "sent_time_s",
    "received_time_s",
    "report_deadline_s",
    "cpu_time_s",
    "elapsed_time_s",
    "flops_estimate_flops",
    "claimed_credit",
    "granted_credit",
    "purged",
    "output_correct",
    "app_version_id",
];

/// Columns `results.csv` gets after [`RESULT_COLUMNS`] in a run with files (spec
/// client §8.1): when the result's files moved on its host, how long the job waited
/// for them, and the bytes it moved (`docs/outputs.md`).
pub(crate) const RESULT_FILE_COLUMNS: &[&str] = &[
    "download_start_s",
    "download_end_s",
    "upload_start_s",
    "upload_end_s",
    "transfer_wait_s",
    "download_bytes",
    "upload_bytes",
];

/// Columns of `transitions.csv`.
pub(crate) const TRANSITION_COLUMNS: &[&str] = &[
    "time_s", "project", "actor", "entity", "id", "field", "old", "new",
];
