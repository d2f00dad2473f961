//! The rows of `workunits.csv` and `results.csv` on their way to the writer thread,
//! and their formatting there.
//!
//! The two tables are almost all a run writes, and formatted on the simulation's
//! thread they cost it more than the outputs may add (docs/performance.md, "The run
//! folder's tables"). So the run's thread only copies each final row's columns into
//! a [`Records`] batch, a few dozen bytes moved, and the writer thread formats them
//! with [`Formatter`], in the order they were sent: the float memos of [`Table`] see
//! the same rows in the same order, so the bytes are the same as formatting them in
//! place.

use super::format::Table;
use super::{RESULT_COLUMNS, RESULT_FILE_COLUMNS, WORKUNIT_COLUMNS};
use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::{AssimilateState, FileDeleteState, ResultId, WuId};
use crate::server::types::{DbTime, INT_MAX};

/// Rows of each table per batch at most: 768 KiB of results ([`ResultLine`], 192
/// bytes) and 448 KiB of workunits ([`WorkunitLine`], 112 bytes), about a batch of
/// formatted rows ([`BATCH_BYTES`](super::format::BATCH_BYTES)) per table.
pub(super) const RECORDS_PER_BATCH: usize = 4096;

/// The columns of a `workunits.csv` row (spec backend §1.2), copied from its
/// [`WorkunitRow`] when the row became final. Not the row itself: its shared
/// limits and its list of results would be touched by both threads.
#[derive(Clone, Copy)]
pub(super) struct WorkunitLine {
    /// The project's index in the world, which the writer thread knows the name of.
    project: u16,
    purged: bool,
    need_validate: bool,
    canonical_correct: Option<bool>,
    assimilate_state: AssimilateState,
    file_delete_state: FileDeleteState,
    id: WuId,
    appid: u32,
    create_time: DbTime,
    priority: i32,
    min_quorum: i32,
    target_nresults: i32,
    max_error_results: i32,
    max_total_results: i32,
    max_success_results: i32,
    canonical_resultid: ResultId,
    transition_time: DbTime,
    error_mask: i32,
    hr_class: i32,
    nresults: u32,
    canonical_found_time: DbTime,
    assimilated_time: DbTime,
    assimilate_count: u32,
    files_deleted_time: DbTime,
    delay_bound: i64,
    rsc_fpops_est: f64,
    true_fpops: f64,
    canonical_credit: f64,
}

impl WorkunitLine {
    pub(super) fn of(project: u16, wu: &WorkunitRow, purged: bool) -> Self {
        Self {
            project,
            purged,
            need_validate: wu.need_validate,
            canonical_correct: wu.canonical_correct,
            assimilate_state: wu.assimilate_state,
            file_delete_state: wu.file_delete_state,
            id: wu.id,
            appid: wu.appid,
            create_time: wu.create_time,
            priority: wu.priority,
            min_quorum: wu.min_quorum,
            target_nresults: wu.target_nresults,
            max_error_results: wu.limits.max_error_results,
            max_total_results: wu.limits.max_total_results,
            max_success_results: wu.limits.max_success_results,
            canonical_resultid: wu.canonical_resultid,
            transition_time: wu.transition_time,
            error_mask: wu.error_mask,
            hr_class: wu.hr_class,
            nresults: wu.results.len() as u32,
            canonical_found_time: wu.canonical_found_time,
            assimilated_time: wu.assimilated_time,
            assimilate_count: wu.assimilate_count,
            files_deleted_time: wu.files_deleted_time,
            delay_bound: wu.limits.delay_bound,
            rsc_fpops_est: wu.rsc_fpops_est,
            true_fpops: wu.true_fpops,
            canonical_credit: wu.canonical_credit,
        }
    }

    /// Appends the row to `workunits.csv`'s table, in [`WORKUNIT_COLUMNS`]' order.
    pub(super) fn format(&self, t: &mut Table, project: &str) {
        t.str(project);
        t.int(self.id.0 as i64);
        t.wu_name(self.id);
        t.int(self.appid as i64);
        t.int(self.create_time.into());
        t.int(self.priority as i64);
        t.int(self.delay_bound);
        t.float(self.rsc_fpops_est);
        t.float(self.true_fpops);
        t.int(self.min_quorum as i64);
        t.int(self.target_nresults as i64);
        t.int(self.max_error_results as i64);
        t.int(self.max_total_results as i64);
        t.int(self.max_success_results as i64);
        t.bool(self.need_validate);
        t.int(self.canonical_resultid.0 as i64);
        t.float(self.canonical_credit);
        if Time::from(self.transition_time) >= INT_MAX {
            t.empty();
        } else {
            t.int(self.transition_time.into());
        }
        t.int(self.error_mask as i64);
        t.int(self.assimilate_state.code());
        t.int(self.file_delete_state.code());
        t.int(self.hr_class as i64);
        t.int(self.nresults as i64);
        t.time_or_never(self.canonical_found_time.into());
        t.time_or_never(self.assimilated_time.into());
        t.int(self.assimilate_count as i64);
        t.time_or_never(self.files_deleted_time.into());
        t.bool(self.purged);
        t.truth(self.canonical_correct);
        t.end_row();
    }
}

/// A `results.csv` row (spec backend §1.3): a copy of its [`ResultRow`], which holds
/// nothing shared, and of whether it has transfer times (the next of the batch's
/// [`Records::xfers`]).
pub(super) struct ResultLine {
    row: ResultRow,
    /// The project's index in the world, which the writer thread knows the name of.
    project: u16,
    /// The world's index of the host it was sent to.
    host: Option<u32>,
    purged: bool,
    xfer: bool,
}

/// Appends `r`'s row to `results.csv`'s table, in [`RESULT_COLUMNS`]' order, then,
/// in a run with files (`files`), [`RESULT_FILE_COLUMNS`]: empty when `x` is none.
pub(super) fn format_result(
    t: &mut Table,
    project: &str,
    host: Option<u32>,
    r: &ResultRow,
    purged: bool,
    files: bool,
    x: Option<&XferTimes>,
) {
    t.str(project);
    t.int(r.id.0 as i64);
    t.result_name(r.workunitid, r.suffix);
    t.int(r.workunitid.0 as i64);
    t.int(r.hostid.0 as i64);
    match host {
        Some(h) => t.int(h as i64),
        None => t.empty(),
    }
    t.int(r.server_state.code());
    t.int(r.outcome.code());
    t.int(r.validate_state.code());
    t.int(r.file_delete_state.code());
    t.int(r.client_state as i64);
    t.int(r.exit_status as i64);
    t.int(r.priority as i64);
    t.time_or_never(r.sent_time.into());
    t.time_or_never(r.received_time.into());
    if r.sent_time == 0 {
        t.empty();
    } else {
        t.int(r.report_deadline);
    }
    t.float(r.cpu_time);
    t.float(r.elapsed_time);
    t.float(r.flops_estimate);
    t.float(r.claimed_credit);
    t.float(r.granted_credit);
    t.bool(purged);
    t.truth(r.output_correct);
    if r.app_version_id == 0 {
        t.empty();
    } else {
        t.int(r.app_version_id as i64);
    }
    if files {
        match x {
            Some(x) => {
                t.opt_time(x.download_start);
                t.opt_time(x.download_end);
                t.opt_time(x.upload_start);
                t.opt_time(x.upload_end);
                t.float(x.wait());
                t.float(x.download_bytes);
                t.float(x.upload_bytes);
            }
            None => {
                for _ in RESULT_FILE_COLUMNS {
                    t.empty();
                }
            }
        }
    }
    t.end_row();
}

/// One batch of final rows from the run's thread: each table's in the order they
/// became final (the two tables are separate files, so their rows need no common
/// order).
pub(super) struct Records {
    workunits: Vec<WorkunitLine>,
    results: Vec<ResultLine>,
    /// The transfer times of the results that have them, in their order.
    xfers: Vec<XferTimes>,
}

impl Records {
    /// No records, with room for a whole batch.
    pub(super) fn new() -> Self {
        Self {
            workunits: Vec::with_capacity(RECORDS_PER_BATCH),
            results: Vec::with_capacity(RECORDS_PER_BATCH),
            xfers: Vec::new(),
        }
    }

    pub(super) fn push_workunit(&mut self, line: WorkunitLine) {
        self.workunits.push(line);
    }

    pub(super) fn push_result(
        &mut self,
        project: u16,
        host: Option<u32>,
        r: &ResultRow,
        purged: bool,
        x: Option<&XferTimes>,
    ) {
        self.results.push(ResultLine {
            row: r.clone(),
            project,
            host,
            purged,
            xfer: x.is_some(),
        });
        self.xfers.extend(x);
    }

    /// The batch is full: hand it over.
    pub(super) fn full(&self) -> bool {
        self.workunits.len().max(self.results.len()) >= RECORDS_PER_BATCH
    }

    pub(super) fn is_empty(&self) -> bool {
        self.workunits.is_empty() && self.results.is_empty()
    }

    fn clear(&mut self) {
        self.workunits.clear();
        self.results.clear();
        self.xfers.clear();
    }
}

/// The writer thread's two tables: it formats each batch's records into them, and
/// hands each mebibyte of bytes to its file.
pub(super) struct Formatter {
    pub(super) workunits: Table,
    pub(super) results: Table,
    /// `results.csv` has the transfer columns ([`RESULT_FILE_COLUMNS`]).
    result_files: bool,
    /// The projects' names, by the index the records give (the world's).
    projects: Vec<String>,
}

impl Formatter {
    /// The tables of files `workunits` and `results`, `workunits.csv`'s with its
    /// header (`results.csv`'s waits for [`Self::results_header`]).
    pub(super) fn new(workunits: usize, results: usize) -> Self {
        let mut t = Table::new(workunits);
        t.header(WORKUNIT_COLUMNS);
        Self {
            workunits: t,
            results: Table::new(results),
            result_files: false,
            projects: Vec::new(),
        }
    }

    /// Records name project `name` by `index`.
    pub(super) fn add_project(&mut self, index: u16, name: String) {
        let k = usize::from(index);
        if self.projects.len() <= k {
            self.projects.resize(k + 1, String::new());
        }
        self.projects[k] = name;
    }

    /// Writes `results.csv`'s header, with the transfer columns when `files`.
    pub(super) fn results_header(&mut self, files: bool) {
        self.result_files = files;
        let extra: &[&str] = if files { RESULT_FILE_COLUMNS } else { &[] };
        self.results.header(RESULT_COLUMNS.iter().chain(extra));
    }

    /// Formats `records` into the tables, calling `put` with each table whose rows
    /// fill a batch (it writes and empties the buffer), and leaves `records` empty.
    pub(super) fn format<E>(
        &mut self,
        records: &mut Records,
        mut put: impl FnMut(&mut Table) -> Result<(), E>,
    ) -> Result<(), E> {
        for line in &records.workunits {
            line.format(&mut self.workunits, &self.projects[line.project as usize]);
            if self.workunits.full() {
                put(&mut self.workunits)?;
            }
        }
        let mut xfers = records.xfers.iter();
        for line in &records.results {
            let x = if line.xfer { xfers.next() } else { None };
            let project = &self.projects[line.project as usize];
            let t = &mut self.results;
            format_result(
                t,
                project,
                line.host,
                &line.row,
                line.purged,
                self.result_files,
                x,
            );
            if t.full() {
                put(t)?;
            }
        }
        records.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes a batch of records is planned with ([`RECORDS_PER_BATCH`]).
    #[test]
    fn a_record_is_a_copy_of_a_few_cache_lines() {
        assert_eq!(size_of::<ResultLine>(), 192);
        assert_eq!(size_of::<WorkunitLine>(), 112);
    }
}
