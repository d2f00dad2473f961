//! The run folder on disk: written into a temporary sibling folder
//! `<final_dir>.tmp-<pid>` and moved into place by [`RunOutput::finish`] only after
//! its last byte is written, so that a folder named `final_dir` is always the
//! complete output of one successful run. A failed, abandoned or interrupted run
//! removes its temporary folder (or, if killed, leaves only a `.tmp-<pid>` folder
//! that the next run to the same place removes), never a half-written folder that
//! looks finished. [`move_into_place`] is the rename every atomic output folder
//! shares.
//!
//! [`RunOutput`] also owns the run's tables while it goes on: it copies each final
//! row into the batch of records for the writer thread ([`super::writer`]), formats
//! the audit trail's rows ([`Table`]), and joins the thread, taking its first error
//! as the run's, before the folder is moved into place.

use super::format::Table;
use super::records::{Records, WorkunitLine};
use super::writer::{Sink, TRANSITIONS_FILE, Writer, running};
use super::{
    AuditTrail, RESULTS_CSV, SUMMARY_JSON, TRANSITION_COLUMNS, TRANSITIONS_CSV, TRANSITIONS_CSV_GZ,
    WORKUNITS_CSV,
};
use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::server::db::{ResultRow, Transition, WorkunitRow};
use crate::stats::outdir;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Renames the finished folder `tmp_dir` to `final_dir`: an existing `final_dir` is
/// first renamed to `<final_dir>.old-<pid>`, the temporary folder renamed to
/// `final_dir`, then the old one deleted. If the last rename fails the old folder is
/// put back. Shared by every writer of an atomic output folder (runs, `compare`,
/// a run's `plots/`, a sweep's `plots/`). An existing `final_dir` that boinc-sim did
/// not write is never replaced unless `--force` allowed it ([`outdir::may_replace`]).
pub(crate) fn move_into_place(tmp_dir: &Path, final_dir: &Path) -> io::Result<()> {
    if fs::symlink_metadata(final_dir).is_ok() && !outdir::may_replace(final_dir) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and was not written by boinc-sim; it is left as it is",
                final_dir.display()
            ),
        ));
    }
    let old = outdir::sibling(final_dir, "old")?;
    outdir::while_moving(tmp_dir, || {
        let had_old = match fs::symlink_metadata(final_dir) {
            Ok(_) => {
                outdir::remove_any(&old)?;
                fs::rename(final_dir, &old)?;
                true
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if let Err(e) = fs::rename(tmp_dir, final_dir) {
            if had_old {
                let _ = fs::rename(&old, final_dir);
            }
            return Err(e);
        }
        Ok(had_old)
    })
    .and_then(|had_old| {
        if had_old {
            outdir::remove_any(&old).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "the new output is in {}, but the previous one, moved to {}, could not be removed: {e}",
                        final_dir.display(),
                        old.display()
                    ),
                )
            })?;
        }
        Ok(())
    })
}

/// The output folder of one run, written in a temporary folder and moved into place
/// by [`RunOutput::finish`]. Dropping it unfinished removes the temporary folder.
pub struct RunOutput {
    final_dir: PathBuf,
    tmp_dir: PathBuf,
    /// Rows of `workunits.csv` and `results.csv` not yet handed to the writer thread,
    /// which formats them ([`records`]).
    records: Records,
    /// The indexes of the projects (as the world numbers them) whose names the
    /// writer thread has.
    named: Vec<bool>,
    /// `None` when the transitions table is off.
    transitions: Option<Table>,
    /// Owns the files and writes the tables' batches (`None` only while the files
    /// are being opened).
    writer: Option<Writer>,
    /// `results.csv` has the transfer columns ([`RESULT_FILE_COLUMNS`]).
    result_files: bool,
    /// `results.csv`'s header is written: it is written with the first row (or at
    /// the end), so that a run with files can add its columns before the run starts.
    results_header: bool,
    transitions_enabled: bool,
    /// The temporary folder is ours to remove (false once moved into place).
    armed: bool,
}

impl RunOutput {
    /// Starts the output of a run that will end up in `final_dir`: creates the parent
    /// folders, removes stale temporary folders ([`outdir::create_temp`]), and opens the CSV files there
    /// with their header rows. `transitions` turns `transitions.csv` on.
    pub fn create(final_dir: &Path, transitions: bool) -> io::Result<Self> {
        let audit = if transitions {
            AuditTrail::Csv
        } else {
            AuditTrail::Off
        };
        Self::create_audited(final_dir, audit)
    }

    /// [`Self::create`] with the audit trail written as `audit` says.
    pub(crate) fn create_audited(final_dir: &Path, audit: AuditTrail) -> io::Result<Self> {
        let transitions = audit != AuditTrail::Off;
        let tmp_dir = outdir::create_temp(final_dir)?;
        // From here on an error drops `out`, whose Drop removes the temporary folder.
        let mut out = RunOutput {
            final_dir: final_dir.to_path_buf(),
            tmp_dir,
            records: Records::new(),
            named: Vec::new(),
            transitions: transitions.then(|| Table::new(TRANSITIONS_FILE)),
            writer: None,
            result_files: false,
            results_header: false,
            transitions_enabled: transitions,
            armed: true,
        };
        // The files are created here, so that an unwritable folder fails at once.
        let mut sinks = vec![
            Sink::create(&out.tmp_dir.join(WORKUNITS_CSV), false)?,
            Sink::create(&out.tmp_dir.join(RESULTS_CSV), false)?,
        ];
        if let Some(t) = &mut out.transitions {
            let gzip = audit == AuditTrail::Gzip;
            let name = if gzip {
                TRANSITIONS_CSV_GZ
            } else {
                TRANSITIONS_CSV
            };
            sinks.push(Sink::create(&out.tmp_dir.join(name), gzip)?);
            t.header(TRANSITION_COLUMNS);
        }
        out.writer = Some(Writer::spawn(sinks)?);
        Ok(out)
    }

    /// The run has files: `results.csv` gets the transfer columns, unless a row
    /// was already written without them (the header is fixed by the first row).
    pub(crate) fn enable_files(&mut self) {
        if !self.results_header {
            self.result_files = true;
        }
    }

    /// Has the writer thread write `results.csv`'s header if it is not written yet.
    fn results_header(&mut self) -> io::Result<()> {
        if self.results_header {
            return Ok(());
        }
        self.results_header = true;
        let files = self.result_files;
        running(&mut self.writer)?.results_header(files)
    }

    /// Project `pi`'s index in the records, its name sent to the writer thread the
    /// first time.
    fn project_index(&mut self, pi: usize, project: &str) -> io::Result<u16> {
        if self.named.get(pi) == Some(&true) {
            return Ok(pi as u16);
        }
        let index = u16::try_from(pi).map_err(|_| io::Error::other("more than 65,536 projects"))?;
        let name = project.to_string();
        running(&mut self.writer)?.name_project(index, name)?;
        if self.named.len() <= pi {
            self.named.resize(pi + 1, false);
        }
        self.named[pi] = true;
        Ok(index)
    }

    /// Hands the records to the writer thread once they fill a batch.
    fn hand_over_records_if_full(&mut self) -> io::Result<()> {
        if !self.records.full() {
            return Ok(());
        }
        running(&mut self.writer)?.send_records(&mut self.records)
    }

    /// Hands `table`'s rows to the writer thread once they fill a batch.
    fn hand_over_if_full(writer: &mut Option<Writer>, table: &mut Table) -> io::Result<()> {
        if !table.full() {
            return Ok(());
        }
        running(writer)?.send(table)
    }

    /// Whether `transitions.csv` is written (callers may skip collecting the audit
    /// trail otherwise).
    pub fn transitions_enabled(&self) -> bool {
        self.transitions_enabled
    }

    /// The temporary folder being written, for other writers that add files to the
    /// run folder before [`Self::finish`].
    pub fn dir(&self) -> &Path {
        &self.tmp_dir
    }

    /// Where the folder goes on [`Self::finish`].
    pub fn final_dir(&self) -> &Path {
        &self.final_dir
    }

    /// Appends one row to `workunits.csv`, of project `pi` (the world's index) named
    /// `project`. `purged` says whether db_purge deleted the row (it is written then,
    /// with its last state) or it was still live at the end. The row's columns are
    /// copied into the batch of records; the writer thread formats them.
    pub(crate) fn write_workunit(
        &mut self,
        pi: usize,
        project: &str,
        wu: &WorkunitRow,
        purged: bool,
    ) -> io::Result<()> {
        let project = self.project_index(pi, project)?;
        self.records
            .push_workunit(WorkunitLine::of(project, wu, purged));
        self.hand_over_records_if_full()
    }

    /// Appends one row to `results.csv` (see [`Self::write_workunit`] for `purged`).
    /// In a run with files, `x` is when its files moved, if it was reported with
    /// them (none: the transfer columns are empty).
    /// `host` is the world's index of the host the result was sent to (`hosts.csv`'s
    /// `host`), none when it was never sent.
    pub(crate) fn write_result(
        &mut self,
        pi: usize,
        project: &str,
        host: Option<u32>,
        r: &ResultRow,
        purged: bool,
        x: Option<&XferTimes>,
    ) -> io::Result<()> {
        self.results_header()?;
        let project = self.project_index(pi, project)?;
        self.records.push_result(project, host, r, purged, x);
        self.hand_over_records_if_full()
    }

    /// Appends the audit rows of one step at `time` to `transitions.csv`; does
    /// nothing when it is off.
    pub(crate) fn write_transitions(
        &mut self,
        project: &str,
        time: Time,
        rows: &[Transition],
    ) -> io::Result<()> {
        let Some(t) = self.transitions.as_mut() else {
            return Ok(());
        };
        for row in rows {
            t.int(time);
            t.str(project);
            t.str(row.actor.name());
            t.str(row.entity.name());
            t.int(row.id as i64);
            t.str(row.field.name());
            t.int(row.old);
            t.int(row.new);
            t.end_row();
            Self::hand_over_if_full(&mut self.writer, t)?;
        }
        Ok(())
    }

    /// Closes the tables, writes `summary.json` (pretty, with a trailing newline) and
    /// moves the folder into place: an existing `final_dir` is first renamed to
    /// `<final_dir>.old-<pid>`, the temporary folder renamed to `final_dir`, then the
    /// old one deleted. If the last rename fails the old folder is put back. On any
    /// error the temporary folder is removed.
    pub fn finish(mut self, summary: &serde_json::Value) -> io::Result<()> {
        // Every file is complete and synced before the summary and the rename.
        self.wait_tables()?;
        let mut f = BufWriter::new(File::create(self.tmp_dir.join(SUMMARY_JSON))?);
        serde_json::to_writer_pretty(&mut f, summary)?;
        f.write_all(b"\n")?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;

        // Once the folder is in place nothing is left at the temporary path, so
        // dropping `self` after an error removes nothing that matters.
        move_into_place(&self.tmp_dir, &self.final_dir)?;
        self.armed = false;
        Ok(())
    }

    /// Every row is written (the run is over): hands the last rows to the writer
    /// thread, which closes and syncs the table files while the caller writes the
    /// run's other files; [`Self::finish`] waits for it. A row written after this is
    /// an error, at the latest in `finish`.
    pub fn end_tables(&mut self) -> io::Result<()> {
        self.results_header()?;
        let writer = running(&mut self.writer)?;
        if !self.records.is_empty() {
            writer.send_records(&mut self.records)?;
        }
        if let Some(table) = self.transitions.as_mut()
            && !table.buf.is_empty()
        {
            writer.send(table)?;
        }
        writer.close();
        Ok(())
    }

    /// Ends the tables ([`Self::end_tables`]) and waits until the writer thread has
    /// written, closed and synced their files, for a reader of the temporary folder
    /// (the charts of `run --plot`). Returns the first error the thread met.
    pub fn wait_tables(&mut self) -> io::Result<()> {
        self.end_tables()?;
        running(&mut self.writer)?.stop(true)
    }

    /// Gives up: closes the files and deletes the temporary folder (a failed run).
    pub fn abandon(mut self) -> io::Result<()> {
        self.armed = false;
        self.stop_writer();
        outdir::discard_temp(&self.tmp_dir);
        Ok(())
    }

    /// Stops the writer thread of a run that gave up, without syncing its files, and
    /// waits for it, so that nothing writes into the folder while it is removed.
    fn stop_writer(&mut self) {
        if let Some(w) = &mut self.writer
            && !w.joined()
        {
            let _ = w.stop(false);
        }
    }
}

impl Drop for RunOutput {
    /// An unfinished output must not survive: remove the temporary folder.
    fn drop(&mut self) {
        if self.armed {
            self.stop_writer();
            outdir::discard_temp(&self.tmp_dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::records;
    #[cfg(target_os = "linux")]
    use super::super::writer::full_sink;
    use super::super::{RESULT_COLUMNS, WORKUNIT_COLUMNS};
    use super::*;
    use crate::server::db::{Entity, Field};
    use crate::server::invariants::test_rows;
    use crate::server::types::INT_MAX;
    use crate::server::types::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn lines(path: &Path) -> Vec<String> {
        fs::read_to_string(path)
            .unwrap()
            .split_terminator('\n')
            .map(String::from)
            .collect()
    }

    fn sample_rows() -> (WorkunitRow, ResultRow) {
        let mut wu = test_rows::workunit();
        (wu.id, wu.transition_time, wu.results) =
            (WuId(1), INT_MAX as i32, [ResultId(3)].into_iter().collect());
        let mut r = test_rows::result(WuId(1), 0);
        r.id = ResultId(3);
        r.server_state = ServerState::Over;
        r.outcome = Outcome::Success;
        r.validate_state = ValidateState::Valid;
        (r.hostid, r.sent_time, r.received_time, r.report_deadline) = (HostId(2), 10, 500, 1010);
        (r.cpu_time, r.elapsed_time, r.granted_credit) = (480.5, 490.0, 100.0);
        (wu, r)
    }

    /// Rows of two projects, interleaved, over many batches of records and of bytes,
    /// with their floats varying: every row reaches its file once, in the order
    /// written, under its own project's name, with the text formatting it in place
    /// gives (records are formatted on the writer thread).
    #[test]
    fn rows_over_many_batches_keep_their_order_and_project() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let (mut wu, mut r) = sample_rows();
        let n = 3 * records::RECORDS_PER_BATCH + 17;
        let (mut want_wus, mut want_results) = (Table::new(0), Table::new(1));
        want_wus.header(WORKUNIT_COLUMNS);
        want_results.header(RESULT_COLUMNS);
        for k in 0..n {
            let (pi, name) = if k % 3 == 0 { (1, "b") } else { (0, "a") };
            wu.id = WuId(k as u32 + 1);
            wu.rsc_fpops_est = (k / 5) as f64 * 0.1;
            r.id = ResultId(k as u32 + 1);
            r.cpu_time = (k % 7) as f64 / 3.0;
            out.write_workunit(pi, name, &wu, k % 2 == 0).unwrap();
            out.write_result(pi, name, None, &r, false, None).unwrap();
            records::WorkunitLine::of(0, &wu, k % 2 == 0).format(&mut want_wus, name);
            records::format_result(&mut want_results, name, None, &r, false, false, None);
        }
        out.finish(&serde_json::Value::Null).unwrap();
        let read = |f: &str| fs::read(dir.join(f)).unwrap();
        assert!(read(WORKUNITS_CSV) == want_wus.buf, "workunits.csv");
        assert!(read(RESULTS_CSV) == want_results.buf, "results.csv");
        let ids: Vec<String> = lines(&dir.join(RESULTS_CSV))
            .iter()
            .skip(1)
            .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(ids.len(), n);
        assert_eq!(ids[0], "b,1");
        assert_eq!(ids[n - 1], format!("a,{n}"));
    }

    #[test]
    fn finish_writes_exactly_the_expected_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("runs").join("s1");
        let mut out = RunOutput::create(&dir, true).unwrap();
        assert!(out.transitions_enabled());
        assert!(
            out.dir()
                .ends_with(format!("s1.tmp-{}", std::process::id()))
        );
        let (mut wu, mut r) = sample_rows();
        wu.canonical_correct = Some(false);
        r.output_correct = Some(true);
        r.app_version_id = 2;
        wu.true_fpops = 7.2e12;
        out.write_workunit(0, "main", &wu, true).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        let time = 502;
        let t = Transition {
            actor: Actor::Validator,
            entity: Entity::Workunit,
            id: 1,
            field: Field::CanonicalResultid,
            old: 0,
            new: 3,
        };
        out.write_transitions("main", time, &[t, Transition { old: -7, ..t }])
            .unwrap();
        out.finish(&serde_json::json!({"seed": 1})).unwrap();

        assert_eq!(entries(&tmp.path().join("runs")), ["s1"]);
        assert_eq!(
            entries(&dir),
            [
                outdir::MARKER,
                RESULTS_CSV,
                SUMMARY_JSON,
                TRANSITIONS_CSV,
                WORKUNITS_CSV
            ]
        );
        let wus = lines(&dir.join(WORKUNITS_CSV));
        assert_eq!(wus[0], WORKUNIT_COLUMNS.join(","));
        assert_eq!(
            wus[1],
            "main,1,wu1,1,0,0,1000,3600000000000.0,7200000000000.0,1,1,1,2,1,0,0,0.0,,0,0,0,0,1,,,0,,1,0"
        );
        assert_eq!(wus.len(), 2);
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(rs[0], RESULT_COLUMNS.join(","));
        assert_eq!(
            rs[1],
            "main,3,wu1_0,1,2,,5,1,1,0,0,0,0,10,500,1010,480.5,490.0,0.0,0.0,100.0,0,1,2"
        );
        let ts = lines(&dir.join(TRANSITIONS_CSV));
        assert_eq!(
            ts,
            [
                "time_s,project,actor,entity,id,field,old,new",
                "502,main,validator,workunit,1,canonical_resultid,0,3",
                "502,main,validator,workunit,1,canonical_resultid,-7,3",
            ]
        );
        let summary = fs::read_to_string(dir.join(SUMMARY_JSON)).unwrap();
        assert_eq!(summary, "{\n  \"seed\": 1\n}\n");
    }

    /// With files, `results.csv` gets the transfer columns after the others: filled
    /// for a result reported with files (a transfer at t = 0 is written as 0), empty
    /// for one never reported.
    #[test]
    fn results_get_transfer_columns_in_a_run_with_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        out.enable_files();
        let (_, r) = sample_rows();
        let x = XferTimes {
            received: 0,
            download_start: Some(0),
            download_end: Some(40),
            completed: Some(400),
            upload_start: Some(420),
            upload_end: Some(460),
            download_bytes: 5e6,
            upload_bytes: 250_000.0,
        };
        out.write_result(0, "main", None, &r, false, Some(&x))
            .unwrap();
        let half = XferTimes {
            download_end: None,
            upload_start: None,
            upload_end: None,
            ..x
        };
        out.write_result(0, "main", None, &r, false, Some(&half))
            .unwrap();
        out.write_result(0, "main", None, &r, true, None).unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(
            rs[0],
            format!(
                "{},download_start_s,download_end_s,upload_start_s,upload_end_s,\
                 transfer_wait_s,download_bytes,upload_bytes",
                RESULT_COLUMNS.join(",")
            )
        );
        let row = "main,3,wu1_0,1,2,,5,1,1,0,0,0,0,10,500,1010,480.5,490.0,0.0,0.0,100.0";
        assert_eq!(
            rs[1],
            format!("{row},0,,,0,40,420,460,100.0,5000000.0,250000.0")
        );
        assert_eq!(rs[2], format!("{row},0,,,0,,,,0.0,5000000.0,250000.0"));
        assert_eq!(rs[3], format!("{row},1{}", ",".repeat(9)));
        assert_eq!(rs.len(), 4);
    }

    /// Without files the header is the one of every run before files existed, even
    /// in a folder without a result row; files turned on after the first row keep
    /// the file consistent: no column is added under rows written without it.
    #[test]
    fn results_header_is_unchanged_without_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("empty");
        RunOutput::create(&dir, false)
            .unwrap()
            .finish(&serde_json::Value::Null)
            .unwrap();
        assert_eq!(lines(&dir.join(RESULTS_CSV)), [RESULT_COLUMNS.join(",")]);

        let dir = tmp.path().join("late");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let (_, r) = sample_rows();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.enable_files();
        out.write_result(0, "main", None, &r, false, Some(&XferTimes::default()))
            .unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(rs[0], RESULT_COLUMNS.join(","));
        assert_eq!(rs[1], rs[2]);
    }

    #[test]
    fn unsent_result_has_empty_times_and_no_transitions_file_when_off() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let r = test_rows::result(WuId(1), 2);
        out.write_result(0, "p", None, &r, true, None).unwrap();
        // A no-op when the table is off.
        let time = 0;
        let t = Transition {
            actor: Actor::Feeder,
            entity: Entity::Result,
            id: 1,
            field: Field::Row,
            old: 0,
            new: 1,
        };
        out.write_transitions("p", time, &[t]).unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        assert_eq!(
            entries(&dir),
            [outdir::MARKER, RESULTS_CSV, SUMMARY_JSON, WORKUNITS_CSV]
        );
        assert_eq!(
            lines(&dir.join(RESULTS_CSV))[1],
            "p,0,wu1_2,1,0,,2,0,0,0,0,0,0,,,,0.0,0.0,0.0,0.0,0.0,1,,"
        );
        assert_eq!(lines(&dir.join(WORKUNITS_CSV)).len(), 1);
    }

    #[test]
    fn dropping_unfinished_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, true).unwrap();
        let (wu, _) = sample_rows();
        out.write_workunit(0, "main", &wu, false).unwrap();
        assert!(out.dir().is_dir());
        drop(out);
        assert!(entries(tmp.path()).is_empty());

        let out = RunOutput::create(&dir, true).unwrap();
        out.abandon().unwrap();
        assert!(entries(tmp.path()).is_empty());
    }

    #[test]
    fn finishing_replaces_an_earlier_run_and_a_stale_temp_one_but_no_user_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("old.txt"), "previous run").unwrap();
        // Left by this very process (same pid) and marked as ours.
        let stale = outdir::sibling(&dir, "tmp").unwrap();
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join(outdir::MARKER), "").unwrap();
        fs::write(stale.join("junk.csv"), "x").unwrap();

        // Not ours: the finished output is refused and the folder kept.
        let out = RunOutput::create(&dir, false).unwrap();
        assert_eq!(
            entries(out.dir()),
            [outdir::MARKER, RESULTS_CSV, WORKUNITS_CSV]
        );
        let err = out.finish(&serde_json::json!({})).unwrap_err();
        assert!(
            err.to_string().contains("not written by boinc-sim"),
            "{err}"
        );
        assert_eq!(entries(tmp.path()), ["run"]);
        assert_eq!(entries(&dir), ["old.txt"]);

        // An earlier run's folder: it stays intact until the new one is complete.
        fs::write(dir.join("manifest.json"), r#"{"crate": "boinc-sim"}"#).unwrap();
        let out = RunOutput::create(&dir, false).unwrap();
        assert_eq!(entries(&dir), ["manifest.json", "old.txt"]);
        out.finish(&serde_json::json!({})).unwrap();
        assert_eq!(entries(tmp.path()), ["run"]);
        assert_eq!(
            entries(&dir),
            [outdir::MARKER, RESULTS_CSV, SUMMARY_JSON, WORKUNITS_CSV]
        );
    }

    #[test]
    fn a_gzip_audit_trail_reads_back_as_the_csv() {
        use std::io::Read;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create_audited(&dir, AuditTrail::Gzip).unwrap();
        let time = 7;
        let t = Transition {
            actor: Actor::Feeder,
            entity: Entity::Result,
            id: 1,
            field: Field::Row,
            old: 0,
            new: 1,
        };
        out.write_transitions("p", time, &[t]).unwrap();
        out.finish(&serde_json::json!({})).unwrap();
        assert_eq!(
            entries(&dir),
            [
                outdir::MARKER,
                RESULTS_CSV,
                SUMMARY_JSON,
                TRANSITIONS_CSV_GZ,
                WORKUNITS_CSV
            ]
        );
        let mut text = String::new();
        flate2::read::GzDecoder::new(File::open(dir.join(TRANSITIONS_CSV_GZ)).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(
            text,
            "time_s,project,actor,entity,id,field,old,new\n7,p,feeder,result,1,row,0,1\n"
        );
    }

    #[test]
    fn a_path_without_a_folder_name_is_refused() {
        let err = RunOutput::create(Path::new(".."), false).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    /// Ending the tables early (the run is over) hands every row to the thread; the
    /// folder is finished as before. A row written after that is refused at the
    /// latest by `finish`, and leaves no folder.
    #[test]
    fn tables_ended_early_are_complete_and_a_late_row_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, true).unwrap();
        let (wu, r) = sample_rows();
        out.write_workunit(0, "main", &wu, false).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.end_tables().unwrap();
        out.end_tables().unwrap();
        // Complete in the temporary folder once waited for, as the charts read them.
        out.wait_tables().unwrap();
        assert_eq!(lines(&out.dir().join(RESULTS_CSV)).len(), 2);
        out.wait_tables().unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        assert_eq!(lines(&dir.join(WORKUNITS_CSV)).len(), 2);
        assert_eq!(lines(&dir.join(RESULTS_CSV)).len(), 2);
        assert_eq!(lines(&dir.join(TRANSITIONS_CSV)).len(), 1);

        // A late row of a project the writer thread knows waits in its batch and
        // fails in `finish`; one of a new project fails at once (its name cannot
        // reach the thread).
        let stopped = "the output writer has stopped (the tables were ended, or a write failed)";
        let late = tmp.path().join("late");
        let mut out = RunOutput::create(&late, false).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.end_tables().unwrap();
        out.write_workunit(0, "main", &wu, false).unwrap();
        let err = out.finish(&serde_json::Value::Null).unwrap_err();
        assert_eq!(err.to_string(), stopped);
        let mut out = RunOutput::create(&late, false).unwrap();
        out.end_tables().unwrap();
        let err = out.write_workunit(0, "main", &wu, false).unwrap_err();
        assert_eq!(err.to_string(), stopped);
        drop(out);
        assert_eq!(entries(tmp.path()), ["run"]);
    }

    /// The run gets the writer's error from a row's write, and the output that
    /// failed leaves no folder behind.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_failed_write_leaves_no_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let failing = Writer::spawn(vec![full_sink(), full_sink()]).unwrap();
        out.writer.replace(failing).unwrap().stop(false).unwrap();
        let (wu, _) = sample_rows();
        let err = (0..100_000)
            .find_map(|_| out.write_workunit(0, "main", &wu, false).err())
            .expect("the error comes back");
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
        assert!(out.finish(&serde_json::Value::Null).is_err());
        assert!(entries(tmp.path()).is_empty());
    }
}
