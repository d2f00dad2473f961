//! Parameter sweeps (`boinc-sim sweep`, `docs/sweep.md`): a base scenario run over
//! a design of points, each point replicated with its own seeds, in parallel, with
//! the results aggregated per point.
//!
//! * [`spec`] reads and checks the sweep file; [`design`] expands it into points and
//!   run seeds.
//! * [`Plan`] is the expanded sweep; every point's scenario is loaded and validated
//!   before any run starts ([`plan`]).
//! * [`execute`] runs the missing runs on a rayon pool. Each finished run is written
//!   at once, atomically, as `runs/pPPPP-rRR.json` (a [`RunRecord`]), so a sweep that
//!   is killed and started again skips what it has ([`existing`]).
//! * [`aggregate`] turns the records into `sweep.csv`, `sweep-summary.csv` and
//!   `best.json`; [`finish`] writes them only when every run is there.
//! * [`racing`] (`--racing`) runs replication 0 of every point, then further
//!   replications, round by round, only of the points that could still be the
//!   best feasible one; [`finish_racing`] writes the tables of the runs it ran.
//! * [`slurm`] writes the job-array script; a shard (`--shard I/N`) runs the points
//!   `p` with `p mod N = I` into `shard-I-of-N/runs/`, and [`merge`] gathers them.
//!
//! Results never depend on the thread count or on the order runs finish in: each run
//! is a pure function of its scenario and seed, and the tables are built from the
//! records sorted by point and replication.

pub(crate) mod aggregate;
pub mod design;
pub(crate) mod racing;
pub mod slurm;
pub mod spec;

use crate::base::hash::fnv1a64;
use crate::engine::time::format_duration;
use crate::scenario::load::{Loaded, ScenarioError, load};
use crate::scenario::schema::ScenarioFile;
use crate::stats::headline::Scope;
use crate::stats::recorder::StatsRecorder;
use crate::world::RunOptions;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) const PLAN_JSON: &str = "design.json";
pub(crate) const RUNS_DIR: &str = "runs";

/// Why a sweep failed. Bad input exits 2, a failed run or I/O 1.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Failed(String),
}

impl SweepError {
    pub fn exit_code(&self) -> u8 {
        match self {
            SweepError::Scenario(e) => e.exit_code() as u8,
            SweepError::Input(_) => 2,
            SweepError::Failed(_) => 1,
        }
    }
}

fn io_failed(what: &str, path: &Path, e: impl std::fmt::Display) -> SweepError {
    SweepError::Failed(format!("cannot {what} {}: {e}", path.display()))
}

/// The expanded sweep, as recorded in `design.json`: what `sweep-merge` needs to
/// rebuild the tables without the sweep file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub name: String,
    /// FNV-1a 64 of the sweep file and of the base scenario file.
    pub sweep_hash: String,
    pub scenario_hash: String,
    /// The varied key paths (one per parameter; `also` keys follow their parameter).
    pub params: Vec<String>,
    pub metrics: Vec<String>,
    pub project: Option<String>,
    /// The app whose `summary_apps.csv` row the metrics are, if not the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    pub replications: u32,
    pub seed: u64,
    /// Each point's values as written (CSV cells).
    pub points: Vec<Vec<String>>,
    pub goal: Option<spec::Goal>,
    /// What the sweep should know before trusting its figures ([`censoring`]);
    /// also printed before the runs and copied into `best.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The `[[case]]` tables in order. With cases, `params` starts with `case`
    /// ([`aggregate::columns::CASE`]) and each point's first value is its case's
    /// name; without, the field is absent from `design.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<PlanCase>,
    /// Whether the sweep races (`--racing`, [`racing`]): its folder holds the runs
    /// the race chose, not the full design, so a sweep of the other kind must not
    /// resume in it. Absent from `design.json` when false, so a full sweep's file
    /// reads as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub racing: bool,
}

/// A case of the plan: its name and its keys as `--set` arguments, in key order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanCase {
    pub name: String,
    pub set: Vec<String>,
}

/// Run records by (point, replication), in that order.
pub(crate) type Records = BTreeMap<(usize, u32), RunRecord>;

/// One finished run, as written to `runs/pPPPP-rRR.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub point: usize,
    pub replication: u32,
    pub seed: u64,
    /// The point's values, to check the record belongs to this plan.
    pub values: Vec<String>,
    /// Every `summary.csv` column of the sweep's project (`null`: no value).
    pub metrics: BTreeMap<String, Option<f64>>,
    /// The headline figures that drift in this run (`crate::stats::drift`): absent
    /// when none does, so records of runs without a drift read as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drifts: Vec<String>,
}

/// A sweep ready to run: the plan and each point's validated scenario.
pub struct Planned {
    pub plan: Plan,
    pub scenarios: Vec<Loaded>,
}

/// Expands the sweep and loads every point's scenario (base `[sweep.set]`, then the
/// case's keys, then the point's values), so that a value the scenario refuses
/// fails before any run. With `[[case]]` tables the points are every case at every
/// point of the parameters' design, the case varying slowest.
pub fn plan(s: &spec::Sweep) -> Result<Planned, SweepError> {
    let f = &s.file;
    let values = design::points(
        f.sweep.design,
        f.sweep.points.unwrap_or(0),
        f.sweep.seed,
        &f.parameter,
    );
    let cases: Vec<PlanCase> = f
        .case
        .iter()
        .map(|c| PlanCase {
            name: c.name.clone(),
            set: c.set.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        })
        .collect();
    // Without cases, one pass with no case.
    let passes: Vec<Option<usize>> = if cases.is_empty() {
        vec![None]
    } else {
        (0..cases.len()).map(Some).collect()
    };
    let n = passes.len() * values.len();
    let scenario_text = std::fs::read(&s.scenario).unwrap_or_default();
    let mut scenarios = Vec::with_capacity(n);
    let mut points = Vec::with_capacity(n);
    for case in passes {
        for point in &values {
            let i = points.len();
            let mut sets = s.base_sets.clone();
            if let Some(c) = case {
                sets.extend(cases[c].set.iter().cloned());
            }
            for (p, v) in f.parameter.iter().zip(point) {
                for key in std::iter::once(&p.key).chain(&p.also) {
                    sets.push(format!("{key}={v}"));
                }
            }
            let loaded =
                load(&s.scenario, &sets, None).map_err(|e| refused(s, i, case, point, &e))?;
            scenarios.push(loaded);
            let mut cells: Vec<String> = case.map(|c| cases[c].name.clone()).into_iter().collect();
            cells.extend(point.iter().map(spec::cell));
            points.push(cells);
        }
    }
    let mut params: Vec<String> = Vec::new();
    if !cases.is_empty() {
        params.push(aggregate::columns::CASE.to_string());
    }
    params.extend(f.parameter.iter().map(|p| p.key.clone()));
    let plan = Plan {
        name: f.sweep.name.clone(),
        sweep_hash: format!("{:016x}", fnv1a64(s.text.as_bytes())),
        scenario_hash: format!("{:016x}", fnv1a64(&scenario_text)),
        params,
        metrics: f.sweep.metrics.clone(),
        project: f.sweep.project.clone(),
        app: f.sweep.app.clone(),
        replications: f.sweep.replications,
        seed: f.sweep.seed,
        points,
        goal: s.goal.clone(),
        warnings: Vec::new(),
        cases,
        racing: false,
    };
    let files: Vec<&ScenarioFile> = scenarios.iter().map(|l| &l.file).collect();
    let warnings = censoring(&plan, &files);
    Ok(Planned {
        plan: Plan { warnings, ..plan },
        scenarios,
    })
}

/// The error of point `i` (case `case`, parameter values `point`) whose scenario
/// the loader refused with `e`: the sweep file's place of the refused key (the
/// parameter's value, or the case's key), the point with its case and values, and
/// the scenario's own message.
fn refused(
    s: &spec::Sweep,
    i: usize,
    case: Option<usize>,
    point: &[toml::Value],
    e: &ScenarioError,
) -> SweepError {
    let f = &s.file;
    let mut assigned: Vec<String> = case
        .map(|c| format!("{} = {}", aggregate::columns::CASE, f.case[c].name))
        .into_iter()
        .collect();
    assigned.extend(
        f.parameter
            .iter()
            .zip(point)
            .map(|(p, v)| format!("{} = {}", p.key, spec::cell(v))),
    );
    // Point at the parameter (or the case's key) whose `--set` the scenario
    // refused, if any.
    let refused = match e {
        ScenarioError::BadSet { arg, .. } => Some(arg.as_str()),
        ScenarioError::Invalid(d) => d.set_arg.as_deref(),
        _ => None,
    }
    .and_then(|arg| arg.split_once('=').map(|(k, _)| k.trim()));
    let of_case = refused.and_then(|key| {
        let c = case?;
        f.case[c]
            .set
            .keys()
            .find(|k| k.trim() == key)
            .map(|k| spec::case_set_path(c, k))
    });
    let of_param = || {
        refused.and_then(|key| {
            let k = f
                .parameter
                .iter()
                .position(|p| p.key == key || p.also.iter().any(|a| a == key))?;
            let p = &f.parameter[k];
            Some(
                match p
                    .values
                    .as_ref()
                    .and_then(|vs| vs.iter().position(|x| x == &point[k]))
                {
                    Some(j) => format!("parameter.{k}.values.{j}"),
                    None => format!("parameter.{k}.range"),
                },
            )
        })
    };
    let at = of_case.or_else(of_param).map_or(String::new(), |path| {
        let pos = s
            .positions
            .get(&path)
            .map_or(String::new(), |(l, c)| format!(":{l}:{c}"));
        format!("{pos}: `{path}`")
    });
    SweepError::Input(format!(
        "{}{at}: point {i} ({}) is not a valid scenario:\n{e}",
        s.path.display(),
        assigned.join(", ")
    ))
}

/// A warning per distinct `delay_bound` of the sweep's project that is more than a
/// third of the simulated duration, naming the points that have it: a result sent
/// in the last `delay_bound` of a run has no outcome yet when the run ends (it is
/// censored), so the longer the deadline the larger the share of results whose
/// fate the run never sees, and rates such as `deadline_miss_frac` are biased
/// towards long deadlines (`docs/sweep.md`, "Censoring").
pub fn censoring(plan: &Plan, scenarios: &[&ScenarioFile]) -> Vec<String> {
    // (delay_bound, duration) -> points.
    let mut long: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (p, f) in scenarios.iter().enumerate() {
        let project = match &plan.project {
            Some(name) => f.project.get(name),
            None => f.project.values().next(),
        };
        let Some(project) = project else { continue };
        // The sweep's app, or the longest delay bound of the project's apps (the
        // app most censored).
        let bound = project
            .apps()
            .filter(|a| plan.app.as_ref().is_none_or(|name| &a.app.name == name))
            .map(|a| a.workunit.delay_bound.get())
            .max();
        let (bound, duration) = (bound.unwrap_or(0), f.simulation.duration.get());
        if 3 * bound > duration {
            long.entry((bound, duration)).or_default().push(p);
        }
    }
    long.into_iter()
        .map(|((bound, duration), points)| {
            let shown: Vec<String> = points.iter().take(10).map(|p| p.to_string()).collect();
            format!(
                "delay_bound {} is more than a third of the simulated duration ({}) at \
                 point{} {}{}: results sent in the run's last {} have no outcome yet when \
                 it ends, so deadline misses and turnaround undercount them",
                format_duration(bound),
                format_duration(duration),
                if points.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if points.len() > 10 {
                    format!(" and {} more", points.len() - 10)
                } else {
                    String::new()
                },
                format_duration(bound),
            )
        })
        .collect()
}

/// The drift warnings of a sweep (`docs/sweep.md`, "Drift"): one per point and
/// headline figure that drifts (`crate::stats::drift`) in a majority of the point's
/// replications. A majority, not any: with many points and figures, one replication
/// in a few hundred warns by chance, while a point whose runs have not reached a
/// steady state warns in most of them.
pub fn drift_warnings(plan: &Plan, records: &Records) -> Vec<String> {
    let mut out = Vec::new();
    for (p, values) in plan.points.iter().enumerate() {
        let runs: Vec<&RunRecord> = records.range((p, 0)..(p + 1, 0)).map(|r| r.1).collect();
        for figure in crate::stats::drift::FIGURES {
            let n = runs
                .iter()
                .filter(|r| r.drifts.iter().any(|d| d == figure))
                .count();
            if 2 * n > runs.len() {
                let assigned: Vec<String> = plan
                    .params
                    .iter()
                    .zip(values)
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect();
                out.push(format!(
                    "point {p} ({}): {figure} drifts in {n} of {} replications: its value over \
                     the last third of the measured window differs significantly from the \
                     first third's; the runs have not reached a steady state",
                    assigned.join(", "),
                    runs.len()
                ));
            }
        }
    }
    out
}

/// `--shard I/N`: this process runs the points `p` with `p mod N = I`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A `--shard` value that is not `I/N` with `0 ≤ I < N` (clap prints it after the
/// flag's name).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected I/N with 0 ≤ I < N (e.g. 0/4), found `{0}`")]
pub struct ShardError(pub String);

impl std::str::FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let bad = || ShardError(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    pub(crate) fn owns(self, point: usize) -> bool {
        point % self.count == self.index
    }

    /// The folder of this shard's run records, under the sweep folder.
    pub(crate) fn dir_name(self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

/// The folder of the run records in sweep folder `dir`: `runs/`, or a shard's own
/// under its folder, which `sweep-merge` gathers ([`gather`]).
pub(crate) fn runs_dir(dir: &Path, shard: Option<Shard>) -> PathBuf {
    match shard {
        Some(sh) => dir.join(sh.dir_name()).join(RUNS_DIR),
        None => dir.join(RUNS_DIR),
    }
}

fn record_name(point: usize, rep: u32) -> String {
    format!("p{point:04}-r{rep:02}.json")
}

/// Reads a run record; `None` if it is unreadable or half-written (then it is run
/// again).
fn read_record(path: &Path) -> Option<RunRecord> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The records already in `runs_dir` that belong to `plan`.
pub(crate) fn existing(plan: &Plan, runs_dir: &Path) -> Records {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(runs_dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        if let Some(r) = read_record(&path)
            && r.point < plan.points.len()
            && r.replication < plan.replications
            && r.values == plan.points[r.point]
            && r.seed == design::run_seed(plan.seed, r.replication)
            && path.file_name() == Some(record_name(r.point, r.replication).as_ref())
        {
            out.insert((r.point, r.replication), r);
        }
    }
    out
}

/// Writes `design.json` into `dir`, or checks that the one there is this plan's: a
/// folder never mixes runs of two different sweeps.
pub(crate) fn claim_dir(dir: &Path, plan: &Plan) -> Result<(), SweepError> {
    std::fs::create_dir_all(dir).map_err(|e| io_failed("create", dir, e))?;
    let path = dir.join(PLAN_JSON);
    let mut text =
        serde_json::to_string_pretty(plan).map_err(|e| SweepError::Failed(e.to_string()))?;
    text.push('\n');
    if let Ok(old) = std::fs::read_to_string(&path) {
        if old == text {
            return Ok(());
        }
        // The same sweep, raced in one folder and not in the other: say so.
        let kind = serde_json::from_str::<Plan>(&old).ok().filter(|o| {
            o.racing != plan.racing
                && *o
                    == Plan {
                        racing: o.racing,
                        ..plan.clone()
                    }
        });
        if let Some(o) = kind {
            return Err(SweepError::Input(if o.racing {
                format!(
                    "{} holds a racing sweep of this file ({PLAN_JSON}: \"racing\": true): \
                     add --racing to resume it, or choose another --out",
                    dir.display()
                )
            } else {
                format!(
                    "{} holds this sweep's full design, not a race: --racing needs a folder \
                     of its own; choose another --out",
                    dir.display()
                )
            }));
        }
        return Err(SweepError::Input(format!(
            "{} holds the runs of a different sweep (its {PLAN_JSON} differs: another sweep \
             file, scenario or design); choose another --out or delete that folder",
            dir.display()
        )));
    }
    aggregate::write_atomic(&path, text.as_bytes()).map_err(|e| io_failed("write", &path, e))
}

/// What [`execute`] did.
pub(crate) struct Executed {
    pub skipped: usize,
    pub ran: usize,
}

/// Runs the runs of `planned` that `shard` owns and that `runs_dir` does not have
/// yet, on `jobs` threads, writing each record as soon as it is done. `progress` is
/// called after each run with (done, total). Stops starting new runs after the
/// first failure and reports it.
pub(crate) fn execute(
    planned: &Planned,
    runs_dir: &Path,
    shard: Option<Shard>,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Executed, SweepError> {
    let plan = &planned.plan;
    std::fs::create_dir_all(runs_dir).map_err(|e| io_failed("create", runs_dir, e))?;
    let have = existing(plan, runs_dir);
    let todo: Vec<(usize, u32)> = (0..plan.points.len())
        .filter(|&p| shard.is_none_or(|s| s.owns(p)))
        .flat_map(|p| (0..plan.replications).map(move |r| (p, r)))
        .filter(|k| !have.contains_key(k))
        .collect();
    let owned = (0..plan.points.len())
        .filter(|&p| shard.is_none_or(|s| s.owns(p)))
        .count()
        * plan.replications as usize;
    let skipped = owned - todo.len();
    run_list(planned, runs_dir, &todo, jobs, skipped, owned, progress)?;
    Ok(Executed {
        skipped,
        ran: todo.len(),
    })
}

/// Runs the runs `todo` on `jobs` threads, writing each record into `runs_dir` as
/// soon as it is done. `progress` is called with (done, total), `done` counting
/// from `skipped`. Stops starting new runs after the first failure and reports the
/// first failure in `todo`'s order.
pub(crate) fn run_list(
    planned: &Planned,
    runs_dir: &Path,
    todo: &[(usize, u32)],
    jobs: usize,
    skipped: usize,
    total: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(), SweepError> {
    std::fs::create_dir_all(runs_dir).map_err(|e| io_failed("create", runs_dir, e))?;
    let done = Mutex::new(skipped);
    progress(skipped, total);
    let failed = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| SweepError::Failed(format!("cannot start {jobs} threads: {e}")))?;
    let results: Vec<Result<(), SweepError>> = pool.install(|| {
        todo.par_iter()
            .map(|&(p, rep)| {
                if failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let r = run_one(planned, p, rep, runs_dir);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                } else if let Ok(mut d) = done.lock() {
                    *d += 1;
                    progress(*d, total);
                }
                r
            })
            .collect()
    });
    // The first failure in run order, so the message does not depend on timing.
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(())
}

/// What [`race`] did: the finished race, and the runs of it this process ran (the
/// others were found done in the folder).
pub(crate) struct Raced {
    pub race: racing::Race,
    pub ran: usize,
}

/// Runs a racing sweep in `dir` (`--racing`, [`racing`]): replays the race from the
/// records in `dir/runs/`, runs the missing runs of the first round that has some,
/// on `jobs` threads, and again, until the race is over. `round` is called before
/// each round that runs (round, live points, runs to run) and returns the progress
/// callback of that round's runs.
pub(crate) fn race<'a>(
    planned: &Planned,
    dir: &Path,
    jobs: usize,
    budget: Option<usize>,
    round: &dyn Fn(u32, usize, usize) -> Box<dyn Fn(usize, usize) + Sync + 'a>,
) -> Result<Raced, SweepError> {
    let plan = &planned.plan;
    let goal = plan.goal.as_ref().ok_or_else(|| {
        SweepError::Input("--racing needs an [objective] in the sweep file".into())
    })?;
    let runs_dir = runs_dir(dir, None);
    let mut ran = 0;
    let mut last: Option<Vec<(usize, u32)>> = None;
    loop {
        match racing::next(plan, goal, &existing(plan, &runs_dir), budget) {
            racing::Next::Done(race) => return Ok(Raced { race, ran }),
            racing::Next::Run {
                round: k,
                alive,
                runs,
            } => {
                // A run that left no readable record would be asked for forever.
                if last.as_ref() == Some(&runs) {
                    return Err(SweepError::Failed(format!(
                        "round {k} of the race ran, but {} has no record of point {} \
                         replication {}",
                        runs_dir.display(),
                        runs[0].0,
                        runs[0].1
                    )));
                }
                if ran == 0 {
                    remove_tables(dir)?;
                }
                let progress = round(k, alive, runs.len());
                run_list(planned, &runs_dir, &runs, jobs, 0, runs.len(), &*progress)?;
                ran += runs.len();
                last = Some(runs);
            }
        }
    }
}

/// One run: the point's scenario with the run's seed, no output folder; its
/// project's headline figures go into the record.
fn run_one(planned: &Planned, p: usize, rep: u32, runs_dir: &Path) -> Result<(), SweepError> {
    let plan = &planned.plan;
    let seed = design::run_seed(plan.seed, rep);
    let loaded = planned.scenarios[p].clone().with_seed(seed);
    let duration = loaded.file.simulation.duration.get() as f64;
    let finished = StatsRecorder::world(&loaded, &RunOptions::default(), None)
        .run()
        .map_err(|e| {
            SweepError::Failed(format!("point {p}, replication {rep}: run failed: {e}"))
        })?;
    let pi = match &plan.project {
        Some(name) => finished.projects.iter().position(|q| &q.name == name),
        None => (!finished.projects.is_empty()).then_some(0),
    }
    .ok_or_else(|| SweepError::Failed(format!("point {p}: the scenario has no project")))?;
    // The project's row, or its app's (`sweep.app`, checked when the sweep loaded).
    let scope = match &plan.app {
        Some(name) => {
            let id = finished.projects[pi].cfg.app_id(name).ok_or_else(|| {
                SweepError::Failed(format!("point {p}: the project has no app `{name}`"))
            })?;
            Scope::App(id)
        }
        None => Scope::Project,
    };
    let record = RunRecord {
        point: p,
        replication: rep,
        seed,
        values: plan.points[p].clone(),
        // The transfer, scheduler and batch figures of a project's row
        // (docs/outputs.md, "File transfers", "Scheduler load", "Batches"): empty
        // for a run without files, a web server or batches.
        metrics: crate::stats::headline::values(&finished, pi, scope, duration)
            .into_iter()
            .chain(match scope {
                Scope::Project => crate::stats::headline::transfer_values(&finished, pi)
                    .into_iter()
                    .chain(crate::stats::headline::connection_values(&finished, pi))
                    .chain(crate::stats::headline::scheduler_values(
                        &finished, pi, duration,
                    ))
                    .chain(batch_values(&finished, pi))
                    .filter(|(_, v)| v.is_some())
                    .collect(),
                Scope::App(_) => Vec::new(),
            })
            .map(|(c, v)| (c.to_string(), v))
            .collect(),
        drifts: match scope {
            Scope::Project => &finished.recorder.tallies[pi],
            Scope::App(a) => finished.recorder.app_tally(pi, a),
        }
        .thirds
        .drifts()
        .iter()
        .filter(|d| crate::stats::batches::drift_applies(&finished.projects[pi], d.figure))
        .map(|d| d.figure.to_string())
        .collect(),
    };
    let path = runs_dir.join(record_name(p, rep));
    let text = serde_json::to_vec(&record).map_err(|e| SweepError::Failed(e.to_string()))?;
    aggregate::write_atomic(&path, &text).map_err(|e| io_failed("write", &path, e))
}

/// The batch figures of project `pi` (none in a run without batches).
fn batch_values(
    f: &crate::world::Finished<crate::stats::recorder::StatsRecorder>,
    pi: usize,
) -> Vec<(&'static str, Option<f64>)> {
    use crate::stats::batches;
    if !batches::has_batches(&f.projects) {
        return Vec::new();
    }
    let figs = batches::project_figures(&f.projects[pi], &f.recorder.batches[pi]);
    batches::batch_values(&figs, f.recorder.tallies[pi].window)
}

/// Checks that `records` hold every run of `plan` exactly once; the message lists
/// what is missing.
pub(crate) fn check_complete(plan: &Plan, records: &Records) -> Result<(), SweepError> {
    let missing: Vec<String> = (0..plan.points.len())
        .flat_map(|p| (0..plan.replications).map(move |r| (p, r)))
        .filter(|k| !records.contains_key(k))
        .map(|(p, r)| format!("point {p} replication {r}"))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
    Err(SweepError::Failed(format!(
        "{} of {} runs are missing ({}{})",
        missing.len(),
        plan.points.len() * plan.replications as usize,
        shown.join(", "),
        if missing.len() > 5 { ", ..." } else { "" }
    )))
}

/// Writes the tables (and, through `plots`, the charts) of a complete sweep into
/// `dir`. Returns the objective's verdict (empty without an objective).
pub fn finish(dir: &Path, plan: &Plan, records: &Records) -> Result<aggregate::Choice, SweepError> {
    check_complete(plan, records)?;
    aggregate::write_all(dir, plan, records, None)
        .map_err(|e| io_failed("write the tables in", dir, e))
}

/// Writes the tables (and, through `plots`, the charts) of a finished race into
/// `dir`, from the runs the race ran; `best.json` gets its `racing` section.
/// Returns the objective's verdict.
pub(crate) fn finish_racing(
    dir: &Path,
    plan: &Plan,
    race: &racing::Race,
) -> Result<aggregate::Choice, SweepError> {
    aggregate::write_all(
        dir,
        plan,
        &race.records,
        Some(&|choice: &aggregate::Choice| racing::json(race, plan, choice)),
    )
    .map_err(|e| io_failed("write the tables in", dir, e))
}

/// What [`write_tables`] wrote: the objective's verdict and the charts.
pub(crate) struct Tables {
    pub choice: aggregate::Choice,
    pub drawn: crate::plot::sweep::Drawn,
}

/// Writes a finished sweep's tables into `dir` from `records`, every run of the
/// plan ([`finish`]) or, for a race, every run the race ran ([`finish_racing`]),
/// and with `plots` its charts ([`plots`]).
pub(crate) fn write_tables(
    dir: &Path,
    plan: &Plan,
    records: &Records,
    race: Option<&racing::Race>,
    plots: bool,
) -> Result<Tables, SweepError> {
    let choice = match race {
        Some(r) => finish_racing(dir, plan, r)?,
        None => finish(dir, plan, records)?,
    };
    let drawn = if plots {
        self::plots(dir, plan, &choice)?
    } else {
        Default::default()
    };
    Ok(Tables { choice, drawn })
}

/// Removes the tables of `dir` before a race runs more runs in it: a race resumed
/// with a larger `--budget` must not leave the smaller budget's tables beside runs
/// they do not describe if it is stopped, since a folder with its tables looks
/// complete.
pub(crate) fn remove_tables(dir: &Path) -> Result<(), SweepError> {
    for f in [
        aggregate::SWEEP_CSV,
        aggregate::SUMMARY_CSV,
        aggregate::BEST_JSON,
    ] {
        let path = dir.join(f);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_failed("remove", &path, e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads `DIR/design.json`, the plan every run record of the folder belongs to.
pub(crate) fn read_plan(dir: &Path) -> Result<Plan, SweepError> {
    let plan_path = dir.join(PLAN_JSON);
    let text = std::fs::read_to_string(&plan_path).map_err(|e| {
        SweepError::Input(format!(
            "{} is not a sweep folder: cannot read {PLAN_JSON} ({e})",
            dir.display()
        ))
    })?;
    serde_json::from_str(&text)
        .map_err(|e| SweepError::Input(format!("{}: {e}", plan_path.display())))
}

/// `sweep-merge DIR`: the run records of `DIR/runs/` and every
/// `DIR/shard-*/runs/`, each run exactly once (a run found in two folders means the
/// shards overlap: an error). Returns them and the number of shard folders.
pub(crate) fn gather(dir: &Path, plan: &Plan) -> Result<(Records, usize), SweepError> {
    let mut sources: Vec<PathBuf> = vec![runs_dir(dir, None)];
    let mut shard_dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_failed("read", dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
        })
        .collect();
    shard_dirs.sort();
    let nshards = shard_dirs.len();
    sources.extend(shard_dirs.into_iter().map(|d| d.join(RUNS_DIR)));
    let mut records: Records = BTreeMap::new();
    let mut origin: BTreeMap<(usize, u32), PathBuf> = BTreeMap::new();
    for src in &sources {
        for (k, r) in existing(plan, src) {
            if let Some(first) = origin.get(&k) {
                return Err(SweepError::Failed(format!(
                    "point {} replication {} is in both {} and {}: the shards overlap",
                    k.0,
                    k.1,
                    first.display(),
                    src.display()
                )));
            }
            origin.insert(k, src.clone());
            records.insert(k, r);
        }
    }
    Ok((records, nshards))
}

pub(crate) const PLOTS_DIR: &str = "plots";

/// Draws the sweep's charts from `sweep-summary.csv` into `DIR/plots/` (each metric
/// against each parameter with its confidence band, and a heatmap per pair of
/// parameters, split into panels rather than averaged; `docs/plots.md`). The charts
/// go into a temporary folder that replaces `plots/` only when all are drawn.
/// Returns the chart names and the reasons of the charts not drawn.
pub fn plots(
    dir: &Path,
    plan: &Plan,
    choice: &aggregate::Choice,
) -> Result<crate::plot::sweep::Drawn, SweepError> {
    let final_dir = dir.join(PLOTS_DIR);
    let tmp = crate::stats::outdir::create_temp(&final_dir)
        .map_err(|e| io_failed("create the charts' folder in", dir, e))?;
    let drawn = crate::plot::write_sweep_plots(
        &dir.join(aggregate::SUMMARY_CSV),
        &tmp,
        &plan.params,
        &plan.metrics,
        &marks(plan, choice),
    )
    .map_err(|e| {
        crate::stats::outdir::discard_temp(&tmp);
        SweepError::Failed(format!("cannot draw the sweep's charts: {e}"))
    })?;
    crate::stats::output::move_into_place(&tmp, &final_dir).map_err(|e| {
        crate::stats::outdir::discard_temp(&tmp);
        io_failed("move the charts into", dir, e)
    })?;
    Ok(drawn)
}

/// The objective's verdict in a sentence for the terminal: `best: point 4
/// (delay_bound = 3d, min_quorum = 1), workunits_valid_per_day 1959.3
/// [1940.2, 1978.4]; 7 other points are within the noise (best.json)`.
pub fn verdict(plan: &Plan, choice: &aggregate::Choice) -> String {
    let Some(goal) = &plan.goal else {
        return String::new();
    };
    let Some(b) = choice.best else {
        return "no point meets the objective's constraints (best.json)".into();
    };
    // Parameters by the names the charts use (`delay_bound`, `adaptive
    // replication (app.target_nresults)`).
    let names = crate::plot::sweep::display_names(&plan.params);
    let values = |p: usize| {
        names
            .iter()
            .zip(&plan.points[p])
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let n = crate::plot::format::number;
    let objective = match choice.objective_of_best {
        Some(s) => match (s.mean, s.ci95) {
            (Some(m), Some((lo, hi))) => {
                format!(", {} {} [{}, {}]", goal.metric, n(m), n(lo), n(hi))
            }
            (Some(m), None) => format!(", {} {}", goal.metric, n(m)),
            _ => String::new(),
        },
        None => String::new(),
    };
    let near = match choice.within_noise.len() {
        0 if choice.undecided.is_empty() => "no other point is within the noise".to_string(),
        0 => format!(
            "{} other feasible points cannot be told apart with one replication",
            choice.undecided.len()
        ),
        1 => "1 other point is within the noise".to_string(),
        n => format!("{n} other points are within the noise"),
    };
    let uncertain = match choice.uncertain.len() {
        0 => String::new(),
        n => format!(
            "; {n} point{} of uncertain feasibility (a limit inside the 95% interval)",
            if n == 1 { "" } else { "s" }
        ),
    };
    format!(
        "best: point {b} ({}){objective}; {near}{uncertain} (best.json)",
        values(b)
    )
}

/// The heatmaps' marks from the objective's verdict: best point, points within the
/// noise, feasible points (when there are constraints) and the constraints' upper
/// limits by metric (the top of a fraction's colour scale).
pub(crate) fn marks(plan: &Plan, choice: &aggregate::Choice) -> crate::plot::sweep::Marks {
    let mut limits: BTreeMap<String, f64> = BTreeMap::new();
    let constraints = plan.goal.as_ref().map_or(&[][..], |g| &g.constraints[..]);
    for c in constraints {
        if matches!(c.op, spec::Op::Lt | spec::Op::Le) {
            let e = limits.entry(c.metric.clone()).or_insert(c.bound);
            *e = e.min(c.bound);
        }
    }
    crate::plot::sweep::Marks {
        best: choice.best.map(|p| p as u64),
        within_noise: choice.within_noise.iter().map(|&p| p as u64).collect(),
        feasible: (!constraints.is_empty()).then(|| {
            (0..choice.feasible.len())
                .filter(|&p| choice.feasible[p])
                .map(|p| p as u64)
                .collect()
        }),
        limits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_points_round_robin() {
        let s: Shard = "1/3".parse().unwrap();
        assert!(s.owns(1) && s.owns(4) && !s.owns(0) && !s.owns(2));
        assert_eq!(s.dir_name(), "shard-1-of-3");
        assert!("3/3".parse::<Shard>().is_err());
        assert!("1".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
    }

    #[test]
    fn the_verdict_names_the_case_and_adaptive_replication() {
        let plan = Plan {
            name: "s".into(),
            sweep_hash: String::new(),
            scenario_hash: String::new(),
            params: vec![
                aggregate::columns::CASE.into(),
                "project.main.app.target_nresults".into(),
                "project.main.workunit.delay_bound".into(),
            ],
            metrics: vec!["workunits_valid_per_day".into()],
            project: None,
            app: None,
            replications: 1,
            seed: 0,
            points: vec![
                vec!["quorum 1".into(), "0".into(), "1d".into()],
                vec!["quorum 2".into(), "2".into(), "3d".into()],
            ],
            goal: Some(spec::Goal {
                metric: "workunits_valid_per_day".into(),
                maximize: true,
                constraints: Vec::new(),
            }),
            warnings: Vec::new(),
            cases: vec![
                PlanCase {
                    name: "quorum 1".into(),
                    set: vec!["project.main.workunit.min_quorum=1".into()],
                },
                PlanCase {
                    name: "quorum 2".into(),
                    set: vec!["project.main.workunit.min_quorum=2".into()],
                },
            ],
            racing: false,
        };
        let choice = aggregate::Choice {
            best: Some(1),
            feasible: vec![true, true],
            ..aggregate::Choice::default()
        };
        assert_eq!(
            verdict(&plan, &choice),
            "best: point 1 (case = quorum 2, adaptive replication (app.target_nresults) = 2, \
             delay_bound = 3d); no other point is within the noise (best.json)"
        );
        // design.json keeps the cases; a plan without cases has no `cases` key.
        let json = serde_json::to_string(&plan).unwrap();
        assert!(
            json.contains(r#""cases":[{"name":"quorum 1","set":["#),
            "{json}"
        );
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, plan);
        let plain = Plan {
            cases: Vec::new(),
            ..plan
        };
        assert!(!serde_json::to_string(&plain).unwrap().contains("cases"));
    }

    /// A figure warns for a point when it drifts in a majority of its replications:
    /// 2 of 3 does, 1 of 3 does not.
    #[test]
    fn drift_warns_per_point_by_majority() {
        let plan = Plan {
            name: "s".into(),
            sweep_hash: String::new(),
            scenario_hash: String::new(),
            params: vec!["project.main.workunit.min_quorum".into()],
            metrics: vec![],
            project: None,
            app: None,
            replications: 3,
            seed: 1,
            points: vec![vec!["1".into()], vec!["2".into()]],
            goal: None,
            warnings: Vec::new(),
            cases: Vec::new(),
            racing: false,
        };
        let mut records = Records::new();
        for (p, drifting) in [(0, [true, true, false]), (1, [false, true, false])] {
            for (r, d) in drifting.into_iter().enumerate() {
                records.insert(
                    (p, r as u32),
                    RunRecord {
                        point: p,
                        replication: r as u32,
                        seed: 0,
                        values: plan.points[p].clone(),
                        metrics: BTreeMap::new(),
                        drifts: if d {
                            vec!["wrong_canonical_frac".into()]
                        } else {
                            Vec::new()
                        },
                    },
                );
            }
        }
        assert_eq!(
            drift_warnings(&plan, &records),
            [
                "point 0 (project.main.workunit.min_quorum = 1): wrong_canonical_frac drifts in 2 \
              of 3 replications: its value over the last third of the measured window differs \
              significantly from the first third's; the runs have not reached a steady state"
            ]
        );
        // A record without drifts reads and writes as before the field existed.
        let json = serde_json::to_string(&records[&(1, 0)]).unwrap();
        assert!(!json.contains("drifts"), "{json}");
    }
}
