//! A run folder, written by one call: the scenario run to its end and every file of
//! its folder (the table at the top of `docs/outputs.md`), through a temporary
//! folder that is moved into place only when the run, its files and whatever the
//! caller adds (the charts of `run --plot`) all succeeded (`docs/outputs.md`,
//! "Atomic folder").
//!
//! This module is the one that knows what a run folder holds; the command line
//! parses its flags into [`RunFolderOptions`], calls [`write_run_folder`] and
//! prints what it returns.

use super::output::{AuditTrail, RunOutput};
use super::recorder::StatsRecorder;
use super::{apps, batches, credit, headline, hosts, job_log, manifest, metrics, summary};
use crate::engine::Time;
use crate::scenario::load::Loaded;
use crate::world::{Finished, Progress, RunError, RunOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a run folder holds beyond what every run writes, and how the world runs:
/// the command line's flags of `run`.
#[derive(Clone, Debug, Default)]
pub struct RunFolderOptions<'a> {
    /// Invariants checked after every step, every idle daemon pass run.
    pub run: RunOptions,
    /// The audit trail, even when the scenario leaves it off (`--audit`).
    pub audit: bool,
    /// The job log `jobs.csv`, with each project's validator settings and hosts
    /// beside it (`--job-log`, `docs/credit.md`).
    pub job_log: bool,
    /// The `--set` overrides the scenario was loaded with, which the manifest
    /// records.
    pub sets: &'a [String],
}

/// Why a run folder was not written. Each variant knows its exit status: 1, a
/// failure of the run or its outputs, or the run's own.
#[derive(Debug, thiserror::Error)]
pub enum RunFolderError {
    /// The temporary folder cannot be created.
    #[error("cannot create the output folder {}: {cause}", .dir.display())]
    Create { dir: PathBuf, cause: io::Error },
    /// The job log (`--job-log`) cannot be opened.
    #[error("cannot write the job log: {0}")]
    JobLog(io::Error),
    /// The simulation failed: an invariant, an expectation, a fatal state.
    #[error("run failed: {0}")]
    Run(#[from] RunError),
    /// A file of the folder cannot be written, or the folder cannot be moved into
    /// place.
    #[error("cannot write outputs to {}: {cause}", .dir.display())]
    Write { dir: PathBuf, cause: io::Error },
    /// The recorder gave back no run folder, although it was given one.
    #[error("the run folder was lost before its files were written")]
    OutputLost,
}

impl RunFolderError {
    /// The process exit status: the run's own for a failed run, else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Run(e) => e.exit_code(),
            Self::Create { .. } | Self::JobLog(_) | Self::Write { .. } | Self::OutputLost => 1,
        }
    }
}

/// A run whose folder is in place.
pub struct WrittenRun<T> {
    /// The world's final state, for what the caller prints.
    pub finished: Finished<StatsRecorder>,
    /// Wall time of building and running the world, s (the files not included).
    pub wall_s: f64,
    /// What the caller's `before_finish` returned.
    pub extra: T,
}

/// How the run writes its audit trail: on if asked (`--audit`) or by `[output]
/// transitions` (resolved by the loader: on for scripted scenarios); plain CSV for
/// scripted scenarios, where it is small and read as is, gzip otherwise, where it is
/// by far the largest file.
fn audit_trail(loaded: &Loaded, audit: bool) -> AuditTrail {
    if !(audit || loaded.file.output.transitions == Some(true)) {
        AuditTrail::Off
    } else if loaded.file.is_scripted() {
        AuditTrail::Csv
    } else {
        AuditTrail::Gzip
    }
}

/// Runs `loaded` and writes its run folder at `dir`. `progress` is given the run's
/// simulated end once the world is built and may return an observer of the run,
/// dropped as soon as the run ends (a progress bar, cleared before anything is
/// printed). `before_finish` is called with the temporary folder, complete, and the
/// summary, to add files of its own (`run --plot`'s charts); its error, or any
/// before it, drops the folder, so nothing that looks like a complete run folder is
/// ever left.
///
/// `dir` must have passed [`super::outdir::check_target`]; an earlier run's folder
/// there is replaced only once the new one is complete ([`RunOutput::finish`]).
pub fn write_run_folder<P, T, E>(
    loaded: &Loaded,
    dir: &Path,
    options: &RunFolderOptions<'_>,
    progress: impl FnOnce(Time) -> Option<P>,
    before_finish: impl FnOnce(&Path, &serde_json::Value) -> Result<T, E>,
) -> Result<WrittenRun<T>, E>
where
    P: FnMut(Progress),
    E: From<RunFolderError>,
{
    let output =
        RunOutput::create_audited(dir, audit_trail(loaded, options.audit)).map_err(|cause| {
            RunFolderError::Create {
                dir: dir.to_path_buf(),
                cause,
            }
        })?;
    let started = Instant::now();
    let mut world = StatsRecorder::world(loaded, &options.run, Some(output));
    if options.job_log {
        world
            .recorder_mut()
            .enable_job_log()
            .map_err(RunFolderError::JobLog)?;
    }
    let mut observer = progress(world.end);
    let finished = match &mut observer {
        Some(observe) => world.run_with(observe),
        None => world.run(),
    };
    drop(observer);
    let mut finished = finished.map_err(RunFolderError::from)?;
    let wall_s = started.elapsed().as_secs_f64();
    let mut output = finished
        .recorder
        .output
        .take()
        .ok_or(RunFolderError::OutputLost)?;
    let unwritable = |cause| RunFolderError::Write {
        dir: dir.to_path_buf(),
        cause,
    };
    // The tables are complete: their files are closed and synced on the writer
    // thread while the other files are written here.
    output.end_tables().map_err(unwritable)?;
    let summary = write_files(output.dir(), &mut finished, loaded, options).map_err(unwritable)?;
    // What the caller adds may read the tables: every byte of them is on disk first.
    output.wait_tables().map_err(unwritable)?;
    let extra = before_finish(output.dir(), &summary)?;
    output.finish(&summary).map_err(unwritable)?;
    Ok(WrittenRun {
        finished,
        wall_s,
        extra,
    })
}

/// Writes the files of a finished run into its temporary folder `dir`, the manifest
/// last (it lists the folder's files), and returns the summary that
/// `summary.json` holds once the folder is finished.
fn write_files(
    dir: &Path,
    finished: &mut Finished<StatsRecorder>,
    loaded: &Loaded,
    options: &RunFolderOptions<'_>,
) -> io::Result<serde_json::Value> {
    let end = loaded.file.simulation.duration.get();
    let headlines = headline::headlines(finished, end as f64);
    let app_headlines = apps::app_headlines(finished, end as f64);
    let summary = summary::summary_json(loaded, finished, &headlines);
    hosts::write_hosts_csv(dir, finished)?;
    headline::write_csv(dir, &headlines)?;
    apps::write_csv(dir, &app_headlines)?;
    let names: Vec<&str> = finished.projects.iter().map(|p| p.name.as_str()).collect();
    let series: Vec<_> = finished
        .recorder
        .tallies
        .iter()
        .map(|t| &t.metrics)
        .collect();
    metrics::write(dir, &names, &series, end)?;
    batches::write(
        dir,
        &finished.projects,
        &finished.recorder.batches,
        loaded.file.output.interval.get(),
        end,
    )?;
    let figures: Vec<_> = names
        .iter()
        .zip(&finished.recorder.credit)
        .map(|(n, c)| (*n, c))
        .collect();
    let groups = credit::GroupNames {
        names: &finished.recorder.group_names,
        unnamed: "(named hosts)",
    };
    credit::write(dir, &figures, &groups)?;
    finished.recorder.finish_job_log()?;
    if options.job_log {
        job_log::write_run_configs(dir, &finished.projects, &loaded.file)?;
    }
    manifest::write(dir, loaded, options.sets)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each failure's message, as the command line prints it, and its exit code.
    #[test]
    fn each_failure_keeps_its_message_and_exit_code() {
        let io = || io::Error::other("disk full");
        let dir = || PathBuf::from("output/x");
        let cases = [
            (
                RunFolderError::from(RunError::Fatal("stuck".into())),
                "run failed: stuck",
            ),
            (
                RunFolderError::JobLog(io()),
                "cannot write the job log: disk full",
            ),
            (
                RunFolderError::Write {
                    dir: dir(),
                    cause: io(),
                },
                "cannot write outputs to output/x: disk full",
            ),
            (
                RunFolderError::Create {
                    dir: dir(),
                    cause: io(),
                },
                "cannot create the output folder output/x: disk full",
            ),
            (
                RunFolderError::OutputLost,
                "the run folder was lost before its files were written",
            ),
        ];
        for (e, message) in cases {
            assert_eq!((e.to_string().as_str(), e.exit_code()), (message, 1));
        }
    }
}
