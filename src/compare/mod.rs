//! `boinc-sim compare RUN_A RUN_B ...`: what changed between runs, e.g. when
//! `delay_bound` went from 3 to 7 days.
//!
//! * [`load`] reads run folders ([`load_runs`]): each project's headline metrics from
//!   `summary.csv` (or `summary.json` in older folders), each app's of a project with
//!   several from `summary_apps.csv` (named `project/app`), and the scenario, seed,
//!   `--set` overrides and effective configuration from `manifest.json`.
//! * [`config`] flattens the effective configurations to `--set`-style key paths
//!   and lists the keys whose values differ.
//! * [`table`] puts the runs side by side ([`Comparison`]): one row per (project,
//!   metric) over the projects every run has, each run's value and its difference
//!   from the first run; printed as an aligned table and written as `compare.csv`.
//!
//! The output folder (`--out`, default `output/compare/`) is written like a run
//! folder: into a temporary sibling, renamed into place when complete
//! ([`CompareOutput`]). Usage and columns: `docs/compare.md`.
//!
//! # Charts
//!
//! Between [`Comparison::write_csv`] and [`CompareOutput::finish`], [`compare`] draws
//! the runs' time series on shared axes ([`crate::plot::write_overlays`]: throughput,
//! missed deadlines, turnaround, database size and scheduler load, one line per run),
//! so the charts appear atomically with `compare.csv`.

pub mod config;
pub mod load;
pub mod table;

pub use load::{ProjectSummary, Run, load_runs};
pub use table::Comparison;

use crate::stats::outdir;
use crate::stats::output::move_into_place;
use std::io;
use std::path::{Path, PathBuf};

/// Why a comparison failed. The message is meant to be printed as is.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A run folder that cannot be compared (missing, not a run folder, unreadable
    /// summary): bad input.
    #[error("{0}")]
    Input(String),
    /// The output folder cannot be written.
    #[error("cannot write the comparison to {path}: {cause}")]
    Output { path: String, cause: io::Error },
}

impl CompareError {
    /// 2 for bad input, 1 for a failure to write (the command line's convention).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_) => 2,
            Self::Output { .. } => 1,
        }
    }
}

/// The output folder of a comparison, written in a temporary sibling folder and
/// moved into place by [`Self::finish`]. Dropping it unfinished removes the
/// temporary folder.
pub(crate) struct CompareOutput {
    final_dir: PathBuf,
    tmp_dir: PathBuf,
    armed: bool,
}

impl CompareOutput {
    /// Creates `<final_dir>.tmp-<pid>` (and the parent folders), removing stale ones
    /// ([`outdir::create_temp`]).
    pub fn create(final_dir: &Path) -> io::Result<Self> {
        let tmp_dir = outdir::create_temp(final_dir)?;
        Ok(Self {
            final_dir: final_dir.to_path_buf(),
            tmp_dir,
            armed: true,
        })
    }

    /// The temporary folder being written: every file of the comparison goes here.
    pub fn dir(&self) -> &Path {
        &self.tmp_dir
    }

    /// Moves the folder into place, replacing an earlier comparison there.
    pub fn finish(mut self) -> io::Result<()> {
        move_into_place(&self.tmp_dir, &self.final_dir)?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for CompareOutput {
    fn drop(&mut self) {
        if self.armed {
            outdir::discard_temp(&self.tmp_dir);
        }
    }
}

/// Compares the run folders `paths` (named by `labels`, or by their folder names)
/// and writes `compare.csv` and `config_diff.csv` into `out`. Returns the text
/// report for stdout.
pub fn compare(paths: &[PathBuf], labels: &[String], out: &Path) -> Result<String, CompareError> {
    let runs = load_runs(paths, labels)?;
    let cmp = Comparison::new(&runs);
    let io_err = |cause: io::Error| CompareError::Output {
        path: out.display().to_string(),
        cause,
    };
    let folder = CompareOutput::create(out).map_err(io_err)?;
    cmp.write_csv(folder.dir()).map_err(io_err)?;
    let labelled: Vec<(String, PathBuf)> = runs
        .iter()
        .map(|r| (r.label.clone(), r.path.clone()))
        .collect();
    // Overlays need a project's time series: apps (`project/app`) have none.
    let projects: Vec<String> = (cmp.shared.iter())
        .filter(|p| !p.contains('/'))
        .cloned()
        .collect();
    let charts =
        crate::plot::write_overlays(&labelled, &projects, folder.dir()).map_err(|e| match e {
            crate::plot::PlotError::BadInput(m) => CompareError::Input(m),
            other => CompareError::Output {
                path: out.display().to_string(),
                cause: io::Error::other(other.to_string()),
            },
        })?;
    folder.finish().map_err(io_err)?;
    let mut text = cmp.render(&runs);
    if !charts.is_empty() {
        text.push_str(&format!(
            "\nOverlay charts (PNG and SVG): {}\n",
            charts.join(", ")
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfinished_output_leaves_nothing_and_a_finished_one_replaces_the_old() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cmp");
        let out = CompareOutput::create(&dir).unwrap();
        std::fs::write(out.dir().join("a.csv"), "x").unwrap();
        drop(out);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);

        // A folder boinc-sim did not write is never replaced.
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("old.csv"), "old").unwrap();
        let out = CompareOutput::create(&dir).unwrap();
        assert!(out.finish().is_err());
        assert!(dir.join("old.csv").is_file());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);

        // An earlier comparison (it has the marker) is.
        std::fs::write(dir.join(outdir::MARKER), "").unwrap();
        let out = CompareOutput::create(&dir).unwrap();
        std::fs::write(out.dir().join("new.csv"), "new").unwrap();
        out.finish().unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, [outdir::MARKER, "new.csv"]);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
