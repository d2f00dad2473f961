//! The stats side of a run: the [`Recorder`] the world reports to.
//!
//! [`StatsRecorder`] tallies every final row into its project's [`Tally`] (and its
//! time series and histograms) and into its app's and, for `boinc-sim run`, writes
//! the rows to the run folder as they become final. It depends on the world, never the reverse
//! ([`crate::world::Recorder`]): the world runs and hands over what happened, and what
//! is left at the end ([`Finished`](crate::world::Finished)) is read by
//! [`super::headline`], [`super::summary`] and [`super::hosts`].

use super::batches::BatchTally;
use super::metrics::{self, ProjectMetrics};
use super::output::RunOutput;
use super::tally::Tally;
use super::window::Window;
use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::scenario::{Loaded, ScenarioFile};
use crate::server::db::{Db, ResultRow, Transition, WorkunitRow};
use crate::server::job_log::DecidedResult;
use crate::server::types::{AppId, ResultId};
use crate::stats::credit::CreditFigures;
use crate::world::{DataServerSample, Recorder, RunOptions, SchedulerSample, ServerLoad, World};
use rustc_hash::FxHashMap;
use std::io;

/// Per-project tallies, and the run folder's tables if the run writes one.
pub struct StatsRecorder {
    /// Headline figures per project (scenario order), tallied as rows are finalised.
    pub tallies: Vec<Tally>,
    /// The same figures per app of a project with several: `app_tallies[pi][k]` is
    /// app `k + 1` of project `pi` (`summary_apps.csv`), fed the project's rows of
    /// that app. Empty for a one-app project, whose app's figures are the project's
    /// ([`Self::app_tally`]): every row is then tallied once, not twice.
    pub app_tallies: Vec<Vec<Tally>>,
    /// Receives every row as the run goes (`None`: no run folder, e.g. a sweep run).
    pub output: Option<RunOutput>,
    /// Credit per FLOP and device neutrality per project (scenario order), from the
    /// results the validator decided.
    pub credit: Vec<CreditFigures>,
    /// Names of the scenario's host groups, for the credit figures per group.
    pub group_names: Vec<String>,
    /// The job log (`jobs.csv`) being written, with `run --job-log`.
    job_log: Option<csv::Writer<std::fs::File>>,
    /// The run has files (spec client §8): the transfer columns, series and figures
    /// are written. Set by [`Recorder::files_enabled`] before the run, or by the
    /// first transfer hook.
    pub files: bool,
    /// The transfer times of results reported with files, by (project, result id),
    /// kept until the result's row is written to `results.csv` (then removed, so
    /// the map holds only results still in a database). Empty without a run folder.
    pub(crate) transfer_times: FxHashMap<(usize, ResultId), XferTimes>,
    /// Per project (scenario order), what its batches' final rows add up to
    /// (spec backend §1.5); empty tallies in a run without batches.
    pub batches: Vec<BatchTally>,
}

impl StatsRecorder {
    /// Empty tallies for the projects of `scenario`: series of `[output] interval`
    /// (none with `opts.no_metrics`), histograms spanning the run, and the headline
    /// window from `[output] warmup` to the end.
    pub fn new(scenario: &ScenarioFile, opts: &RunOptions, output: Option<RunOutput>) -> Self {
        let end = scenario.simulation.duration.get();
        // Latencies never exceed the run, so the histograms span it.
        let out = &scenario.output;
        let tally = || {
            let metrics = if opts.no_metrics {
                ProjectMetrics::off()
            } else {
                ProjectMetrics::new(out.interval.get(), out.histogram_bin.get(), end.max(1))
            };
            let warmup = out.warmup.get();
            Tally::new(metrics, Window { warmup, end })
        };
        let tallies = (0..scenario.project.len()).map(|_| tally()).collect();
        let app_tallies = scenario
            .project
            .values()
            .map(|p| {
                if p.app.len() > 1 {
                    p.apps().map(|_| tally()).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let credit = (0..scenario.project.len())
            .map(|_| CreditFigures::new(out.interval.get(), out.warmup.get()))
            .collect();
        let group_names = scenario.host_group.iter().map(|g| g.name.clone()).collect();
        Self {
            tallies,
            app_tallies,
            output,
            credit,
            group_names,
            job_log: None,
            files: false,
            transfer_times: FxHashMap::default(),
            batches: vec![BatchTally::default(); scenario.project.len()],
        }
    }

    /// The figures of app `app` of project `pi`: its own tally, or the project's
    /// when the project has one app.
    pub fn app_tally(&self, pi: usize, app: AppId) -> &Tally {
        match self.app_tallies[pi].get(app as usize - 1) {
            Some(t) => t,
            None => &self.tallies[pi],
        }
    }

    /// Writes the job log `jobs.csv` into the run folder as the validator decides
    /// results (`run --job-log`, `docs/credit.md`). Needs a run folder.
    pub(crate) fn enable_job_log(&mut self) -> io::Result<()> {
        let Some(out) = &self.output else {
            return Err(io::Error::other("the job log needs a run folder"));
        };
        let mut w = csv::Writer::from_path(out.dir().join(crate::stats::job_log::JOBS_CSV))?;
        crate::stats::job_log::write_header(&mut w)?;
        self.job_log = Some(w);
        Ok(())
    }

    /// Turns the transfer figures on (see [`Self::files`]); `results.csv` gets its
    /// transfer columns unless a row was already written without them.
    fn enable_files(&mut self) {
        if self.files {
            return;
        }
        self.files = true;
        for t in &mut self.tallies {
            t.metrics.enable_transfers();
        }
        if let Some(out) = &mut self.output {
            out.enable_files();
        }
    }

    /// Flushes the job log, if any (before the run folder is finished).
    pub(crate) fn finish_job_log(&mut self) -> io::Result<()> {
        match self.job_log.take() {
            Some(mut w) => w.flush(),
            None => Ok(()),
        }
    }

    /// The world of a loaded scenario with a recorder of its own: the usual way to start a
    /// run whose figures are wanted.
    pub fn world(loaded: &Loaded, opts: &RunOptions, output: Option<RunOutput>) -> World<Self> {
        let recorder = Self::new(&loaded.file, opts, output);
        World::new(loaded.plan.clone(), opts, recorder)
    }
}

impl Recorder for StatsRecorder {
    fn wants_transitions(&self) -> bool {
        self.output
            .as_ref()
            .is_some_and(|o| o.transitions_enabled())
    }

    fn transitions(
        &mut self,
        _pi: usize,
        project: &str,
        time: Time,
        rows: &[Transition],
    ) -> io::Result<()> {
        match &mut self.output {
            Some(out) => out.write_transitions(project, time, rows),
            None => Ok(()),
        }
    }

    fn workunit(
        &mut self,
        pi: usize,
        project: &str,
        wu: &WorkunitRow,
        purged: bool,
    ) -> io::Result<()> {
        self.tallies[pi].add_workunit(wu, purged);
        self.batches[pi].add_workunit(wu);
        if let Some(t) = self.app_tallies[pi].get_mut(wu.appid as usize - 1) {
            t.add_workunit(wu, purged);
        }
        match &mut self.output {
            Some(out) => out.write_workunit(pi, project, wu, purged),
            None => Ok(()),
        }
    }

    fn decided(&mut self, pi: usize, project: &str, rows: &[DecidedResult]) -> io::Result<()> {
        for r in rows {
            self.credit[pi].add(r);
            if let Some(w) = &mut self.job_log {
                crate::stats::job_log::write_row(w, project, r)?;
            }
        }
        Ok(())
    }

    fn result(
        &mut self,
        pi: usize,
        project: &str,
        app: AppId,
        batch: u32,
        host: Option<u32>,
        r: &ResultRow,
        purged: bool,
    ) -> io::Result<()> {
        self.tallies[pi].add_result(r);
        self.batches[pi].add_result(batch, r);
        if let Some(t) = self.app_tallies[pi].get_mut(app as usize - 1) {
            t.add_result(r);
        }
        match &mut self.output {
            Some(out) => {
                let x = if self.files {
                    self.transfer_times.remove(&(pi, r.id))
                } else {
                    None
                };
                out.write_result(pi, project, host, r, purged, x.as_ref())
            }
            None => Ok(()),
        }
    }

    fn rpc(&mut self, pi: usize, now: Time, reached: bool) {
        self.tallies[pi].metrics.note_rpc(now, reached);
    }

    fn backoffs(&mut self, pi: usize, now: Time, n: u32, secs: f64) {
        self.tallies[pi].metrics.note_backoffs(now, n, secs);
    }

    fn sample(&mut self, pi: usize, k: usize, db: &Db) {
        self.tallies[pi].metrics.sample(k, metrics::gauges(db));
    }

    fn server_load(&mut self, pi: usize, k: usize, load: ServerLoad) {
        let g = [
            load.transitioner_backlog as f64,
            load.job_cache_fill as f64,
            load.daemons_down as f64,
        ];
        self.tallies[pi].metrics.server_load(k, g);
    }

    fn files_enabled(&mut self) {
        self.enable_files();
    }

    /// Tallied at the report: every reported result's row becomes final later
    /// (purged, or live at the end), so this counts the same results as its row
    /// would, and a run without a run folder keeps no map.
    fn result_transfers(&mut self, pi: usize, result: ResultId, times: &XferTimes) {
        self.enable_files();
        self.tallies[pi].metrics.add_transfers(times);
        if self.output.is_some() {
            self.transfer_times.insert((pi, result), *times);
        }
    }

    fn data_server(&mut self, pi: usize, k: usize, s: DataServerSample) {
        self.enable_files();
        self.tallies[pi].metrics.data_server(k, s);
    }

    fn scheduler_enabled(&mut self, pi: usize, processes: u32) {
        self.tallies[pi].metrics.enable_scheduler(processes);
    }

    fn rpc_wait(&mut self, pi: usize, now: Time, wait: f64) {
        if let Some(l) = &mut self.tallies[pi].metrics.scheduler {
            l.wait(now, wait);
        }
    }

    fn scheduler(&mut self, pi: usize, k: usize, s: SchedulerSample) {
        if let Some(l) = &mut self.tallies[pi].metrics.scheduler {
            l.sample(k, s);
        }
    }
}
