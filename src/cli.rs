//! The command line: `run`, `check`, `bench`, `compare`, `plot`, `sweep`,
//! `sweep-merge` and `credit`.
//!
//! Exit codes: 0 success; 1 run failure (invariant violation, failed expectation,
//! unwritable output); 2 bad input (scenario, flag, an output folder boinc-sim did
//! not write); 130/143 interrupted by SIGINT/SIGTERM (`stats::outdir`). Each command
//! returns its failure as a [`CliError`], which knows its exit code; [`main`] prints
//! it, once, as one message, never as a panic or a backtrace.

use crate::compare::CompareError;
use crate::credit::CreditError;
use crate::plot::PlotError;
use crate::progress::RunProgress;
use crate::scenario::load::{Loaded, ScenarioError, load};
use crate::stats::outdir::{self, OutDirError, Target};
use crate::stats::recorder::StatsRecorder;
use crate::stats::run_folder::{RunFolderError, RunFolderOptions, write_run_folder};
use crate::sweep::SweepError;
use crate::world::{Finished, RunError, RunOptions};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "boinc-sim",
    version,
    about = "Discrete-event simulator of BOINC volunteer-computing projects",
    long_about = "Discrete-event simulator of BOINC volunteer-computing projects.\n\n\
A scenario (TOML) describes one or more projects' server back ends, a population of \
volunteer hosts and, optionally, scripted events and expected states. See \
docs/scenario.md for every key and docs/outputs.md for the output files.",
    after_help = "Exit codes: 0 success, 1 run failure or invariant violation, 2 bad input \
(also: an output folder boinc-sim did not write, without --force), 130/143 interrupted \
by SIGINT/SIGTERM (the unfinished output is removed).\n\
Examples:\n  boinc-sim run scenarios/quickstart.toml\n  \
boinc-sim run scenarios/quickstart.toml --set project.main.workunit.delay_bound=3d --out output/db3\n  \
boinc-sim compare output/db3 output/db7\n  \
boinc-sim check scenarios/spec/s1-single-success.toml\n  \
boinc-sim run scenarios/quickstart.toml --plot\n  \
boinc-sim plot output/quickstart"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario and write its outputs to a run folder.
    Run(RunArgs),
    /// Validate a scenario and print its effective configuration (TOML).
    Check(ScenarioArgs),
    /// Run a scenario without writing outputs and report wall time, events per
    /// second and peak memory.
    Bench(BenchArgs),
    /// Compare run folders: their headline metrics side by side, the difference of
    /// each from the first, and the configuration keys that differ.
    Compare(CompareArgs),
    /// Draw the charts of a run folder (plots/*.png, plots/*.svg) and write its
    /// report.html (see docs/plots.md).
    Plot(PlotArgs),
    /// Run a parameter sweep: a base scenario over a grid or sample of points, with
    /// replications, in parallel; resumable (see docs/sweep.md).
    Sweep(SweepArgs),
    /// Gather the shards of a sweep run as a Slurm job array into the same tables a
    /// local sweep writes (see docs/cluster.md).
    SweepMerge(SweepMergeArgs),
    /// Replay a job log through the validator and credit_new (and classic credit,
    /// for comparison): credit per result, host, app version and device, scales
    /// over time and device neutrality (see docs/credit.md).
    Credit(CreditArgs),
}

#[derive(Args, Debug)]
#[command(
    after_help = "Writes into --out (default output/credit-<log name>/): credit_results.csv, \
credit_hosts.csv, credit_versions.csv, credit_devices.csv, credit_groups.csv, summary.txt, \
summary.json and the chart credit_neutrality.svg/.png. See docs/credit.md.\n\
Example:\n  boinc-sim credit scenarios/credit/jobs-sample.csv --hosts scenarios/credit/hosts-sample.csv"
)]
pub struct CreditArgs {
    /// The job log (CSV, one row per result; columns in docs/credit.md).
    pub jobs: PathBuf,
    /// Hosts (CSV): `host_id`, optional `group`, `p_fpops`, `p_iops` (benchmarks,
    /// for classic claimed credit).
    #[arg(long)]
    pub hosts: Option<PathBuf>,
    /// Validator settings (TOML; defaults as the server's). `run --job-log` writes
    /// one next to the log: `credit-<project>.toml`.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The project to replay, when the log holds several (its `project` column).
    #[arg(long)]
    pub project: Option<String>,
    /// Output folder (default `output/credit-<log name>/`). Written to a temporary
    /// folder first and renamed when complete.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the output folder even if boinc-sim did not write it.
    #[arg(long)]
    pub force: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Writes into --out (default output/sweeps/<name>/): design.json, \
runs/ (one record per run, kept for resuming), sweep.csv, sweep-summary.csv, best.json (with \
an [objective]) and plots/. A sweep started again skips the runs it finished. \
--racing spends fewer runs: see \"Racing\" in docs/sweep.md. See docs/sweep.md and \
docs/cluster.md."
)]
pub struct SweepArgs {
    /// Sweep file (TOML).
    pub sweep: PathBuf,
    /// Output folder (default `output/sweeps/<sweep name>/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs in parallel (default: all cores). Results do not depend on it.
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Run only the points p with p mod N = I (a Slurm array task); writes its run
    /// records, not the tables (then `sweep-merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::sweep::Shard>,
    /// Write a Slurm job-array script into DIR instead of running.
    #[arg(long, value_name = "DIR", conflicts_with = "shard")]
    pub emit_slurm: Option<PathBuf>,
    /// With --emit-slurm: number of array tasks (default: one per point, at most 100).
    #[arg(long, requires = "emit_slurm")]
    pub shards: Option<usize>,
    /// With --emit-slurm: CPUs per array task, passed on as --jobs.
    #[arg(long, requires = "emit_slurm", default_value_t = 1)]
    pub cpus_per_task: usize,
    /// Race: replication 0 of every point, then further replications, round by
    /// round, only of the points that could still be the best feasible one (needs
    /// an [objective]; not with --shard or --emit-slurm).
    #[arg(long)]
    pub racing: bool,
    /// With --racing: run at most N runs; the race stops before a round that would
    /// exceed it.
    #[arg(long, value_name = "N", requires = "racing")]
    pub budget: Option<usize>,
    /// Do not draw the sweep's charts.
    #[arg(long)]
    pub no_plots: bool,
    /// Print nothing on success, and no progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct SweepMergeArgs {
    /// The sweep folder the shards wrote into (`--out` of the array tasks).
    pub dir: PathBuf,
    /// Do not draw the sweep's charts.
    #[arg(long)]
    pub no_plots: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ScenarioArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Override the master seed (`simulation.seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override any scenario key, e.g. `--set project.main.workunit.delay_bound=86400`.
    /// Repeatable; values are TOML (`3`, `"3d"`, `true`).
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Output folder (default `output/<scenario name>/`). Written to a temporary
    /// folder first and renamed when the run succeeds.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Check the spec's invariants after every daemon step.
    #[arg(long)]
    pub check_invariants: bool,
    /// Print nothing on success (and draw no progress bar).
    #[arg(long, short)]
    pub quiet: bool,
    /// Draw no progress bar. The bar is drawn on stderr only when stderr is a
    /// terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Also draw the charts (plots/) and write report.html, as `boinc-sim plot` does,
    /// before the run folder is moved into place.
    #[arg(long)]
    pub plot: bool,
    /// Write the audit trail of every state change (`transitions.csv.gz`; plain
    /// `transitions.csv` for scripted scenarios, where it is on anyway), as
    /// `[output] transitions = true` does.
    #[arg(long)]
    pub audit: bool,
    /// Replace the output folder even if boinc-sim did not write it (and lose
    /// everything in it). Never the current folder, a home folder or a root.
    #[arg(long)]
    pub force: bool,
    /// Also write the job log `jobs.csv` (one row per validated or invalidated
    /// result), each project's validator settings `credit-<project>.toml` and hosts
    /// `credit-hosts-<project>.csv`, the input of `boinc-sim credit` (see
    /// docs/credit.md).
    #[arg(long)]
    pub job_log: bool,
    /// Run every daemon pass, idle ones included (for tests: the outputs must be
    /// the same as when idle daemons sleep, `RunOptions::every_daemon_pass`).
    #[arg(long, hide = true)]
    pub every_daemon_pass: bool,
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Run folder written by `boinc-sim run`, e.g. output/quickstart.
    pub run_dir: PathBuf,
    /// Replace the run folder's plots/ even if it holds files boinc-sim did not write.
    #[arg(long)]
    pub force: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Check invariants too (slower).
    #[arg(long)]
    pub check_invariants: bool,
    /// Draw no progress bar. The bar is drawn on stderr only when stderr is a
    /// terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Collect no time series, gauges or histograms, to measure their cost.
    #[arg(long)]
    pub no_metrics: bool,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Writes compare.csv (project, metric, run, value, diff_vs_first, \
rel_diff_vs_first) and config_diff.csv into --out. See docs/compare.md.\n\
Example:\n  boinc-sim compare output/db3 output/db7"
)]
pub struct CompareArgs {
    /// Run folders written by `boinc-sim run` (two or more); the first is the
    /// reference the others are compared with.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Output folder for `compare.csv` (default `output/compare/`). Written to a
    /// temporary folder first and renamed when complete.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Name of a run in the table and `compare.csv` instead of its folder name; give
    /// one per run, in order.
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Replace the output folder even if boinc-sim did not write it (and lose
    /// everything in it). Never the current folder, a home folder or a root.
    #[arg(long)]
    pub force: bool,
}

/// Why a command failed: each variant is the failure of one step, and knows the
/// exit status the command line gives it ([`Self::exit_code`], the codes of the
/// module doc and of `--help`). [`main`] prints it once ([`Self::print`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The command line cannot be parsed, or asks for `--help` or `--version`
    /// (clap's way to stop early, with exit 0). clap prints it.
    #[error(transparent)]
    Args(#[from] clap::Error),
    /// The scenario cannot be read or is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The output folder may not be written (one boinc-sim did not write, the
    /// current folder...): refused before any work.
    #[error(transparent)]
    OutDir(#[from] OutDirError),
    /// `run` could not write its run folder: the run failed, or its files did.
    #[error(transparent)]
    RunFolder(#[from] RunFolderError),
    /// `bench`'s simulation failed: an invariant, an expectation, a fatal state.
    #[error("run failed: {0}")]
    Run(#[from] RunError),
    /// `run --plot` cannot draw the run just made: a run failure whatever the
    /// cause, since its input is the run's own files.
    #[error("cannot plot the run: {0}")]
    PlotRun(PlotError),
    /// `boinc-sim plot` failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// `boinc-sim compare` failed.
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// `boinc-sim sweep` or `sweep-merge` failed.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// `boinc-sim credit` failed.
    #[error(transparent)]
    Credit(#[from] CreditError),
    /// `check` cannot write the effective configuration as TOML.
    #[error("cannot print the configuration: {0}")]
    PrintConfig(#[from] toml::ser::Error),
}

impl CliError {
    /// The process exit status: 2 for bad input, 1 for a failure of the run or its
    /// outputs, clap's own for the command line (0 after `--help`, 2 for a usage
    /// error), and the wrapped error's where it has one.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Args(e) => e.exit_code() as u8,
            Self::Scenario(e) => e.exit_code() as u8,
            Self::OutDir(_) => 2,
            Self::RunFolder(e) => e.exit_code(),
            Self::Run(e) => e.exit_code(),
            Self::Plot(e) => e.exit_code(),
            Self::Compare(e) => e.exit_code(),
            Self::Sweep(e) => e.exit_code(),
            Self::Credit(e) => e.exit_code(),
            Self::PlotRun(_) | Self::PrintConfig(_) => 1,
        }
    }

    /// Prints the error: clap's own text (help on stdout, usage errors on stderr)
    /// for the command line, else `error: ` and the message on stderr.
    pub(crate) fn print(&self) {
        match self {
            Self::Args(e) => {
                let _ = e.print();
            }
            e => eprintln!("error: {e}"),
        }
    }
}

impl Command {
    /// Whether the command runs simulations, whose heap of hosts, jobs and server
    /// rows is what huge pages speed up ([`crate::hugepages`]). `credit` replays a
    /// log without simulating: its memory is allocated, filled and read about once,
    /// so faulting in huge pages cost it more system time than they saved. A sweep
    /// that only writes its Slurm script runs nothing either.
    pub(crate) fn simulates(&self) -> bool {
        match self {
            Command::Run(_) | Command::Bench(_) => true,
            Command::Sweep(a) => a.emit_slurm.is_none(),
            Command::Check(_)
            | Command::Compare(_)
            | Command::Plot(_)
            | Command::SweepMerge(_)
            | Command::Credit(_) => false,
        }
    }

    /// Whether the command writes an output folder through a temporary folder,
    /// which SIGINT and SIGTERM must remove ([`outdir::install_signal_cleanup`]).
    fn writes_output(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Compare(_)
                | Command::Plot(_)
                | Command::Sweep(_)
                | Command::Credit(_)
        )
    }
}

/// Entry point of the binary: the one place where a failure is printed and turned
/// into the exit status.
pub fn main() -> ExitCode {
    match parse_and_execute() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            e.print();
            ExitCode::from(e.exit_code())
        }
    }
}

/// Parses the command line, asks for huge pages if the command simulates (which
/// re-executes the binary with the same arguments, once), and runs the command.
fn parse_and_execute() -> Result<(), CliError> {
    let cli = Cli::try_parse()?;
    if cli.command.simulates() {
        crate::hugepages::enable();
    }
    execute(cli.command)
}

/// Runs one command.
pub(crate) fn execute(command: Command) -> Result<(), CliError> {
    if command.writes_output() {
        outdir::install_signal_cleanup();
    }
    match command {
        Command::Run(a) => run(a),
        Command::Check(a) => check(a),
        Command::Bench(a) => bench(a),
        Command::Compare(a) => compare(a),
        Command::Plot(a) => plot(a),
        Command::Sweep(a) => sweep(a),
        Command::SweepMerge(a) => sweep_merge(a),
        Command::Credit(a) => credit(a),
    }
}

fn credit(a: CreditArgs) -> Result<(), CliError> {
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| crate::stats::job_log::default_out(&a.jobs));
    let target = outdir::check_target(&out, a.force)?;
    let args = crate::credit::ReplayArgs {
        jobs: a.jobs,
        hosts: a.hosts,
        config: a.config,
        project: a.project,
        out: out.clone(),
    };
    let text = crate::credit::run(&args)?;
    if !a.quiet {
        print!("{text}");
        print_replaced(&out, target);
        eprintln!("replay outputs in {}", out.display());
    }
    Ok(())
}

/// Says on stderr that an earlier output was replaced (a second run to the same
/// folder), so nobody wonders where it went.
fn print_replaced(dir: &Path, target: Target) {
    match target {
        Target::New => {}
        Target::ReplacesOurs => {
            eprintln!("replaced the earlier output in {}", dir.display())
        }
        Target::ReplacesForced => eprintln!(
            "replaced {} and everything that was in it (--force)",
            dir.display()
        ),
    }
}

/// Loads the scenario and prints its warnings.
fn load_scenario(a: &ScenarioArgs) -> Result<Loaded, ScenarioError> {
    let loaded = load(&a.scenario, &a.sets, a.seed)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    Ok(loaded)
}

fn check(a: ScenarioArgs) -> Result<(), CliError> {
    let loaded = load_scenario(&a)?;
    let text = toml::to_string_pretty(&loaded.file)?;
    println!("# effective configuration of {}", a.scenario.display());
    print!("{text}");
    Ok(())
}

/// `boinc-sim run`: the run folder is the library's ([`write_run_folder`]); the
/// command line adds the charts of `--plot` before the folder is moved into place,
/// and prints.
fn run(a: RunArgs) -> Result<(), CliError> {
    let loaded = load_scenario(&a.scenario)?;
    let out_dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("output").join(&loaded.file.simulation.name));
    let target = outdir::check_target(&out_dir, a.force)?;
    let options = RunFolderOptions {
        run: RunOptions {
            check_invariants: a.check_invariants,
            every_daemon_pass: a.every_daemon_pass,
            ..RunOptions::default()
        },
        audit: a.audit,
        job_log: a.job_log,
        sets: &a.scenario.sets,
    };
    let show_bar = !a.quiet && !a.no_progress;
    let bar = |end| RunProgress::stderr(end, show_bar).map(|mut bar| move |p| bar.update(p));
    // The charts are drawn from the folder's files, inside the temporary folder, so
    // a failed plot never leaves a complete-looking run folder without them.
    let plot = |dir: &Path, summary: &serde_json::Value| -> Result<_, CliError> {
        if !a.plot {
            return Ok(None);
        }
        let charts =
            crate::plot::plot_unfinished_run(dir, Some(summary)).map_err(CliError::PlotRun)?;
        Ok(Some(charts.len()))
    };
    let written = write_run_folder(&loaded, &out_dir, &options, bar, plot)?;
    if !a.quiet {
        print_replaced(&out_dir, target);
        print_run(&loaded, &written.finished, &out_dir, written.wall_s);
        if let Some(n) = written.extra {
            print_plotted(&out_dir, n);
        }
    }
    leave_to_exit(written.finished);
    Ok(())
}

/// Leaves a finished world's memory to the operating system, which takes it back
/// at once when the command ends, right after: freeing millions of rows and hosts
/// one by one is slow (docs/performance.md, "Ending a run"). Only the commands that
/// end with their one world call this; a sweep drops each of its runs.
fn leave_to_exit(finished: Finished<StatsRecorder>) {
    std::mem::forget(finished);
}

/// What a finished run prints on stderr: its counts, its expectations, each
/// project's tally, and what the figures should not be trusted for.
fn print_run(loaded: &Loaded, finished: &Finished<StatsRecorder>, out_dir: &Path, wall: f64) {
    eprintln!(
        "{}: {} events, {} scheduler RPCs in {:.2} s wall; outputs in {}",
        loaded.file.simulation.name,
        finished.counters.events,
        finished.counters.rpcs,
        wall,
        out_dir.display()
    );
    let checked = finished.counters.expectations_checked;
    if checked > 0 {
        eprintln!("  checked {checked} expectation(s): all met");
    }
    let end = loaded.file.simulation.duration.get();
    let censoring = crate::stats::summary::censoring_warnings(finished);
    let drift = crate::stats::summary::drift_warnings(finished);
    for (pi, (p, t)) in finished
        .projects
        .iter()
        .zip(&finished.recorder.tallies)
        .enumerate()
    {
        eprintln!(
            "  project {}: {} workunits ({} with canonical result, {} with error), {} results, {:.1} credit granted",
            p.name,
            t.workunits,
            t.workunits_with_canonical,
            t.workunits_with_error,
            t.results,
            t.granted_credit_total
        );
        // A censoring warning names its project as `project NAME:` or, per app,
        // `project NAME, app …`.
        let ours = |w: &&String| {
            let rest = w.strip_prefix("project ").unwrap_or("");
            rest.strip_prefix(p.name.as_str())
                .is_some_and(|r| r.starts_with(':') || r.starts_with(','))
        };
        let censored: Vec<&String> = censoring.iter().filter(ours).collect();
        let drifts: Vec<(&str, &String)> = drift
            .iter()
            .filter(|d| d.0 == pi)
            .map(|d| (d.1, &d.2))
            .collect();
        for line in designer_lines(finished, pi, end, &censored, &drifts) {
            eprintln!("{line}");
        }
    }
}

/// A project's headline figures over the measured window, as a designer reads them
/// (`docs/outputs.md`, "The figures a designer compares"), aligned, each followed by
/// the warnings that concern it: the censoring warnings under the deadline
/// failures, a drift warning under its figure.
fn designer_lines(
    finished: &Finished<StatsRecorder>,
    pi: usize,
    end: i64,
    censored: &[&String],
    drifts: &[(&str, &String)],
) -> Vec<String> {
    use crate::plot::format::{duration, number, percent};
    let t = &finished.recorder.tallies[pi];
    let values = crate::stats::headline::values(
        finished,
        pi,
        crate::stats::headline::Scope::Project,
        end as f64,
    );
    let get = |c: &str| values.iter().find(|v| v.0 == c).and_then(|v| v.1);
    let day = |s: i64| number((s as f64 / 86_400.0 * 10.0).round() / 10.0);
    let count = |n: u64| number(n as f64);
    let none = "–".to_string();
    let mut out = vec![format!(
        "    {:<20}days {}–{}",
        "measured window",
        day(t.window.warmup),
        day(t.window.end)
    )];
    let mut rows: Vec<(&str, &str, String)> = Vec::new();
    rows.push((
        "valid workunits",
        "workunits_valid_per_day",
        get("workunits_valid_per_day").map_or(none.clone(), |v| format!("{} per day", number(v))),
    ));
    let dl = t.deadline;
    rows.push((
        "deadline failures",
        "deadline_fail_frac",
        match get("deadline_fail_frac") {
            Some(v) => format!(
                "{} ({} of {} whose deadline passed; {} censored)",
                percent(v),
                count(dl.failed()),
                count(dl.passed()),
                count(dl.censored)
            ),
            None => format!("– (no deadline passed; {} censored)", count(dl.censored)),
        },
    ));
    let sci = t.metrics.science.window_total();
    rows.push((
        "wrong canonical",
        "wrong_canonical_frac",
        match get("wrong_canonical_frac") {
            Some(v) => format!(
                "{} ({} of {} canonical results of known truth)",
                percent(v),
                count(sci.wrong_canonical),
                count(sci.canonical_known)
            ),
            None => "– (no canonical result of known truth)".into(),
        },
    ));
    rows.push((
        "turnaround p90",
        "turnaround_p90_s",
        get("turnaround_p90_s").map_or(none.clone(), duration),
    ));
    // Batch completion, in a run with batches (docs/outputs.md, "Batches"), with a
    // warning under it when batches of the window had not finished.
    let mut unfinished = 0;
    if crate::stats::batches::has_batches(&finished.projects) {
        let figs = crate::stats::batches::project_figures(
            &finished.projects[pi],
            &finished.recorder.batches[pi],
        );
        let bv = crate::stats::batches::batch_values(&figs, t.window);
        let get = |c: &str| bv.iter().find(|v| v.0 == c).and_then(|v| v.1);
        // The counts of the window's batches, as `summary.csv` has them.
        let n = get("batches_submitted").unwrap_or(0.0) as u64;
        let done = get("batches_completed").unwrap_or(0.0) as u64;
        unfinished = n - done;
        let d = |c: &str| get(c).map_or(none.clone(), duration);
        rows.push((
            "batch completion",
            "batch_completion_p90_s",
            format!(
                "median {}, p90 {} ({} of {} batches complete; 90 % of a batch in {} median)",
                d("batch_completion_p50_s"),
                d("batch_completion_p90_s"),
                count(done),
                count(n),
                d("batch_time_to_90_p50_s"),
            ),
        ));
    }
    for (label, figure, value) in rows {
        out.push(format!("    {label:<20}{value}"));
        if figure == "deadline_fail_frac" {
            out.extend(censored.iter().map(|w| format!("    warning: {w}")));
        }
        if figure == "batch_completion_p90_s" && unfinished > 0 {
            out.push(format!(
                "    warning: {unfinished} batch(es) submitted in the measured window had not finished by the end: their completion is unknown, and a percentile that falls on one is empty"
            ));
        }
        out.extend(
            drifts
                .iter()
                .filter(|d| d.0 == figure)
                .map(|d| format!("    warning: {}", d.1)),
        );
    }
    out
}

fn compare(a: CompareArgs) -> Result<(), CliError> {
    let out = a.out.unwrap_or_else(|| Path::new("output").join("compare"));
    let target = outdir::check_target(&out, a.force)?;
    let text = crate::compare::compare(&a.runs, &a.labels, &out)?;
    print!("{text}");
    print_replaced(&out, target);
    eprintln!(
        "compare.csv, config_diff.csv and the overlay charts in {}",
        out.display()
    );
    Ok(())
}

fn print_plotted(run_dir: &Path, charts: usize) {
    eprintln!(
        "{charts} charts in {}, report in {}",
        run_dir.join(crate::plot::PLOTS_DIR).display(),
        run_dir.join(crate::plot::REPORT_HTML).display()
    );
}

fn plot(a: PlotArgs) -> Result<(), CliError> {
    let started = Instant::now();
    crate::plot::check_plots_dir(&a.run_dir, a.force)?;
    let charts = crate::plot::plot_run(&a.run_dir)?;
    if !a.quiet {
        print_plotted(&a.run_dir, charts.len());
        eprintln!("  in {:.2} s wall", started.elapsed().as_secs_f64());
    }
    Ok(())
}

/// Peak resident memory of this process, in KiB (Linux `VmHWM`).
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(a: BenchArgs) -> Result<(), CliError> {
    let loaded = load_scenario(&a.scenario)?;
    let opts = RunOptions {
        check_invariants: a.check_invariants,
        no_metrics: a.no_metrics,
        ..RunOptions::default()
    };
    let t0 = Instant::now();
    let world = StatsRecorder::world(&loaded, &opts, None);
    let setup = t0.elapsed().as_secs_f64();
    let hosts = world.hosts.len() + world.named.len();
    let bar = RunProgress::stderr(world.end, !a.no_progress);
    let t1 = Instant::now();
    // The bar is cleared, at the end of its arm, before anything is printed.
    let finished = match bar {
        Some(mut bar) => world.run_with(&mut |p| bar.update(p)),
        None => world.run(),
    }?;
    let wall = t1.elapsed().as_secs_f64();
    let ev = finished.counters.events;
    let results: u64 = finished.recorder.tallies.iter().map(|t| t.results).sum();
    println!("scenario            {}", loaded.file.simulation.name);
    println!("hosts               {hosts}");
    println!(
        "simulated days      {:.1}",
        loaded.file.simulation.duration.get() as f64 / crate::engine::time::DAY as f64
    );
    println!("setup wall s        {setup:.2}");
    println!("run wall s          {wall:.2}");
    println!("events              {ev}");
    println!("events per s        {:.0}", ev as f64 / wall.max(1e-9));
    println!("scheduler RPCs      {}", finished.counters.rpcs);
    println!("daemon passes       {}", finished.counters.daemon_passes);
    println!("results created     {results}");
    for p in &finished.projects {
        println!(
            "peak rows           {}: {} workunits, {} results live",
            p.name, p.db.workunits.peak_live, p.db.results.peak_live,
        );
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS MiB        {:.1}", kib as f64 / 1024.0);
    }
    leave_to_exit(finished);
    Ok(())
}

/// The sweep's tables and charts once every run is there (for a race, every run
/// the race ran, [`crate::sweep::write_tables`]); prints the best point.
fn sweep_tables(
    dir: &Path,
    plan: &crate::sweep::Plan,
    records: &crate::sweep::Records,
    race: Option<&crate::sweep::racing::Race>,
    plots: bool,
    quiet: bool,
) -> Result<(), SweepError> {
    let crate::sweep::Tables { choice, drawn } =
        crate::sweep::write_tables(dir, plan, records, race, plots)?;
    let charts = drawn.names.len();
    if !quiet {
        let design = match race {
            Some(_) => format!(", up to {} replications each (racing)", plan.replications),
            None => format!(" x {} replications", plan.replications),
        };
        eprintln!(
            "{}: {} points{design}; sweep.csv, sweep-summary.csv and {charts} charts in {}",
            plan.name,
            plan.points.len(),
            dir.display()
        );
        if let Some(r) = race {
            eprintln!("{}", crate::sweep::racing::summary(r));
        }
        if plan.goal.is_some() {
            eprintln!("{}", crate::sweep::verdict(plan, &choice));
        }
        for w in crate::sweep::drift_warnings(plan, records) {
            eprintln!("warning: {w}");
        }
        for n in &drawn.not_drawn {
            eprintln!("note: {n} (plots/README.txt)");
        }
    }
    Ok(())
}

fn sweep(a: SweepArgs) -> Result<(), CliError> {
    if a.racing && (a.shard.is_some() || a.emit_slurm.is_some()) {
        return Err(SweepError::Input(
            "--racing does not run as Slurm shards (--shard, --emit-slurm): a race chooses \
             each round's runs from the results of the round before, which a job array \
             fixed in advance cannot; race on one machine, or run the full design on the \
             cluster (docs/sweep.md, \"Racing\")"
                .into(),
        )
        .into());
    }
    let s = crate::sweep::spec::read(&a.sweep)?;
    let mut planned = crate::sweep::plan(&s)?;
    if a.racing {
        if planned.plan.goal.is_none() {
            return Err(SweepError::Input(format!(
                "{}: --racing needs an [objective]: a race drops the points that cannot be \
                 the best feasible one, and without an objective no point is better than \
                 another",
                a.sweep.display()
            ))
            .into());
        }
        let first = planned.plan.points.len();
        if let Some(b) = a.budget.filter(|&b| b < first) {
            return Err(SweepError::Input(format!(
                "--budget {b} is less than the {first} runs of the race's first round \
                 (replication 0 of every point)"
            ))
            .into());
        }
        planned.plan.racing = true;
    }
    let plan = &planned.plan;
    if !a.quiet {
        for w in &plan.warnings {
            eprintln!("warning: {w}");
        }
    }
    match &a.emit_slurm {
        Some(dir) => emit_slurm(&a, plan, dir),
        None => run_sweep(&a, &planned),
    }
    .map_err(CliError::from)
}

/// `sweep --emit-slurm DIR`: writes the job-array script instead of running.
fn emit_slurm(a: &SweepArgs, plan: &crate::sweep::Plan, dir: &Path) -> Result<(), SweepError> {
    use crate::sweep::slurm;
    let (path, n) = slurm::emit(plan, &a.sweep, dir, a.shards, a.cpus_per_task)?;
    if !a.quiet {
        eprintln!(
            "{}: {} points x {} replications in {n} array tasks: sbatch {}\n\
             then: boinc-sim sweep-merge {}",
            plan.name,
            plan.points.len(),
            plan.replications,
            path.display(),
            slurm::absolute(dir).display()
        );
    }
    Ok(())
}

/// Runs the sweep's missing runs (all, or a shard's), then writes its tables, or,
/// for a shard, says how to merge.
fn run_sweep(a: &SweepArgs, planned: &crate::sweep::Planned) -> Result<(), SweepError> {
    use crate::sweep;
    let plan = &planned.plan;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("output").join("sweeps").join(&plan.name));
    sweep::claim_dir(&dir, plan)?;
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if plan.racing {
        return run_race(a, planned, &dir, jobs);
    }
    let runs_dir = sweep::runs_dir(&dir, a.shard);
    let bar = crate::progress::SweepProgress::stderr(!a.quiet);
    let report = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.update(done, total);
        }
    };
    let ex = sweep::execute(planned, &runs_dir, a.shard, jobs, &report)?;
    drop(bar);
    if !a.quiet && ex.skipped > 0 {
        eprintln!(
            "resumed: {} runs were already done in {} and were skipped; {} run now",
            ex.skipped,
            runs_dir.display(),
            ex.ran
        );
    }
    match a.shard {
        Some(sh) => {
            if !a.quiet {
                eprintln!(
                    "shard {}/{}: {} runs done in {}; merge with: boinc-sim sweep-merge {}",
                    sh.index,
                    sh.count,
                    ex.skipped + ex.ran,
                    runs_dir.display(),
                    dir.display()
                );
            }
            Ok(())
        }
        None => {
            let records = sweep::existing(plan, &runs_dir);
            sweep_tables(&dir, plan, &records, None, !a.no_plots, a.quiet)
        }
    }
}

/// `sweep --racing`: runs the race's rounds (or what is missing of them) into
/// `dir`, then writes its tables.
fn run_race(
    a: &SweepArgs,
    planned: &crate::sweep::Planned,
    dir: &Path,
    jobs: usize,
) -> Result<(), SweepError> {
    use crate::sweep;
    let n = planned.plan.points.len();
    let round = |k: u32, alive: usize, runs: usize| -> Box<dyn Fn(usize, usize) + Sync> {
        if !a.quiet {
            let found = match alive - runs {
                0 => String::new(),
                f => format!(", {f} found done"),
            };
            eprintln!(
                "racing round {k}: {alive} of {n} points alive, replication {k} ({runs} run{}{found})",
                if runs == 1 { "" } else { "s" }
            );
        }
        let bar = crate::progress::SweepProgress::stderr(!a.quiet);
        Box::new(move |done, total| {
            if let Some(b) = &bar {
                b.update(done, total);
            }
        })
    };
    let raced = sweep::race(planned, dir, jobs, a.budget, &round)?;
    let skipped = raced.race.runs.saturating_sub(raced.ran);
    if !a.quiet && skipped > 0 {
        eprintln!(
            "resumed: {skipped} runs of the race were already done in {} and were skipped; {} \
             run now",
            sweep::runs_dir(dir, None).display(),
            raced.ran
        );
    }
    let race = &raced.race;
    sweep_tables(
        dir,
        &planned.plan,
        &race.records,
        Some(race),
        !a.no_plots,
        a.quiet,
    )
}

fn sweep_merge(a: SweepMergeArgs) -> Result<(), CliError> {
    let plan = crate::sweep::read_plan(&a.dir)?;
    if plan.racing {
        return Err(SweepError::Input(format!(
            "{} holds a racing sweep, which does not run as shards: finish it with \
             `boinc-sim sweep SWEEP --racing --out {}`",
            a.dir.display(),
            a.dir.display()
        ))
        .into());
    }
    let (records, nshards) = crate::sweep::gather(&a.dir, &plan)?;
    if !a.quiet {
        eprintln!("{} run records from {nshards} shard folders", records.len());
    }
    Ok(sweep_tables(
        &a.dir,
        &plan,
        &records,
        None,
        !a.no_plots,
        a.quiet,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn command(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("boinc-sim").chain(args.iter().copied()))
            .unwrap()
            .command
    }

    #[test]
    fn only_the_commands_that_simulate_ask_for_huge_pages() {
        for args in [
            &["run", "s.toml"][..],
            &["bench", "s.toml"],
            &["sweep", "w.toml"],
            &["sweep", "w.toml", "--shard", "0/2"],
        ] {
            assert!(command(args).simulates(), "{args:?}");
        }
        for args in [
            &["check", "s.toml"][..],
            &["compare", "a", "b"],
            &["plot", "out"],
            &["sweep", "w.toml", "--emit-slurm", "slurm"],
            &["sweep-merge", "out"],
            &["credit", "jobs.csv"],
        ] {
            assert!(!command(args).simulates(), "{args:?}");
        }
    }

    #[test]
    fn help_and_version_exit_0_and_usage_errors_2() {
        let parse = |args: &[&str]| {
            CliError::from(
                Cli::try_parse_from(std::iter::once("boinc-sim").chain(args.iter().copied()))
                    .unwrap_err(),
            )
        };
        assert_eq!(parse(&["--help"]).exit_code(), 0);
        assert_eq!(parse(&["--version"]).exit_code(), 0);
        assert_eq!(parse(&["run"]).exit_code(), 2);
        assert_eq!(parse(&["sweep", "w.toml", "--shard", "2/2"]).exit_code(), 2);
    }

    #[test]
    fn each_failure_keeps_its_message_and_exit_code() {
        let run = CliError::from(RunError::Fatal("stuck".into()));
        assert_eq!(
            (run.to_string().as_str(), run.exit_code()),
            ("run failed: stuck", 1)
        );
        // A run folder's failure as the library words it (stats::run_folder's
        // tests), its exit code kept.
        let write = CliError::from(RunFolderError::JobLog(io::Error::other("disk full")));
        assert_eq!(write.to_string(), "cannot write the job log: disk full");
        assert_eq!(write.exit_code(), 1);
        let plot_run = CliError::PlotRun(PlotError::BadInput("bad".into()));
        assert_eq!(plot_run.to_string(), "cannot plot the run: bad");
        assert_eq!(plot_run.exit_code(), 1);
        let plot = CliError::from(PlotError::BadInput("bad".into()));
        assert_eq!((plot.to_string().as_str(), plot.exit_code()), ("bad", 2));
        let refused = CliError::from(OutDirError::IsFile(PathBuf::from("f")));
        assert_eq!(refused.exit_code(), 2);
        assert!(refused.to_string().starts_with("f is a file"), "{refused}");
        assert_eq!(
            CliError::from(CompareError::Input("x".into())).exit_code(),
            2
        );
        assert_eq!(
            CliError::from(SweepError::Failed("x".into())).exit_code(),
            1
        );
        assert_eq!(
            CliError::from(CreditError::Input("x".into())).exit_code(),
            2
        );
    }
}
