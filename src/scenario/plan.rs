//! The resolved plan of a checked scenario: what the world is built from.
//!
//! Loading runs in three stages, as ripgrep turns raw arguments into resolved ones
//! before anything runs: serde reads the text into [`schema`](super::schema) structs,
//! [`validate`](super::validate) checks what types cannot, and [`Plan::resolve`]
//! turns the checked file into this plan. Here every name is an index (projects,
//! apps, named hosts, groups, `group#k` hosts, workunit names), every duration is
//! seconds, every distribution and availability model is built, and each
//! expectation keeps its source position for its messages. The world never looks a
//! name up while it runs, so it has no fallback to take: a name the validator let
//! through but that does not resolve is an error here, at load time.

use super::schema::{
    CoprocSpec, Count, Daemon, Expect, HostGroup, ModelKeys, NamedHost, OsName, OutputRead,
    ReportOutcome, ScenarioFile, ScriptEvent, ZoneSpec,
};
use super::start::{ClientStart, ProjectStart};
use super::validate::{Problem, parse_wu_name};
use crate::base::dist::Dist;
use crate::client::availability::{
    AvailClass, AvailSpec, Daily, OnOff, TimeStatsRule, Vacation, Window, Zone,
};
use crate::client::background::PrefsDraw;
use crate::client::config::ClientConfig;
use crate::client::files::{FilesPlan, ProjectFiles};
use crate::client::host::{CLIENT_ERROR_EXIT, GroupCtx, HostBehaviour};
use crate::client::truth;
use crate::engine::Time;
use crate::scenario::import::hosts::{self, HostTable};
use crate::server::ProjectConfig;
use crate::server::assimilator::HandlerResult;
use crate::server::batch::BatchSpec;
use crate::server::db::{HostNames, HostRow, OutputStatus};
use crate::server::resource::ProcType;
use crate::server::types::INT_MAX;
use crate::server::types::*;
use std::sync::Arc;

/// A group's operating systems, each with the group's CPU names, with cumulative
/// weights that end at 1.
pub type OsMix = Arc<[(Arc<HostNames>, f64)]>;

/// Everything the world needs of a scenario, resolved.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The master seed of every random stream.
    pub seed: u64,
    /// The simulated end of the run, s.
    pub end: Time,
    /// Each daemon's tie class at equal times (its place in `tie_order`), by its
    /// position in [`Daemon::ALL`] (spec backend §2.0).
    pub tie_class: [u8; 8],
    /// Interval of the server-state samples of `timeseries.csv`, s (at least 1).
    pub sample_interval: Time,
    /// `simulation.check_invariants`.
    pub check_invariants: bool,
    /// The projects, in world (name) order.
    pub projects: Vec<ProjectPlan>,
    /// Named hosts, in file order.
    pub named: Vec<NamedHostPlan>,
    /// Host groups, in file order.
    pub groups: Vec<GroupPlan>,
    /// Scripted events, in file order.
    pub events: Vec<EventPlan>,
    /// Expectations, in file order.
    pub expects: Vec<ExpectPlan>,
    /// The run's files and data servers (spec client §8); `None`: no job has a file,
    /// and no transfer is ever made.
    pub files: Option<Arc<FilesPlan>>,
}

/// One project: its name and its back end's configuration as the daemons read it
/// (the file's tables resolved, [`super::schema::ProjectConfig::resolve`]).
#[derive(Clone, Debug)]
pub struct ProjectPlan {
    pub name: String,
    pub cfg: ProjectConfig,
}

/// A host driven by scripted events.
#[derive(Clone, Debug)]
pub struct NamedHostPlan {
    pub name: String,
    /// The project it belongs to.
    pub project: u16,
    /// Its host row's attributes (id and user are the database's).
    pub row: HostRow,
    /// Its user (default: a user of its own, the host's id).
    pub userid: Option<u32>,
    /// Initial host app version state: `consecutive_valid`, `max_jobs_per_day`,
    /// `n_jobs_today`.
    pub hav: Option<(i32, i32, i32)>,
    /// Pinned day offset (spec backend §2.4.1 step 5).
    pub day_offset: Option<f64>,
}

/// A population of simulated hosts.
#[derive(Clone, Debug)]
pub struct GroupPlan {
    pub name: String,
    pub count: u32,
    /// What the group's hosts share: client configuration, behaviour, availability.
    pub ctx: Arc<GroupCtx>,
    /// Attributes of the host rows the group's hosts get in each project's database.
    pub row: HostRow,
    pub p_ncpus: u32,
    /// CPUs drawn per host (rounded, at least 1) instead of `p_ncpus`.
    pub ncpus_dist: Option<Dist>,
    /// Operating systems drawn per host at first contact, with cumulative weights
    /// normalised to end at 1, instead of the row's `os_name`.
    pub os_mix: Option<OsMix>,
    /// The projects the hosts attach to, with their resource shares, in project
    /// order (as the client lists them).
    pub attached: Vec<(u16, f64)>,
    pub p_fpops: Dist,
    pub arrival: Dist,
    pub lifetime: Option<Dist>,
    pub error_prob: Dist,
    pub wrong_result_prob: Dist,
    /// The group's error class (hosts of one class share wrong outputs).
    pub error_class: u32,
    pub coprocs: Vec<CoprocPlan>,
    pub start: Option<StartPlan>,
    /// The group's hosts are records of a host export (`hosts_file`).
    pub hosts: Option<HostsPlan>,
    /// The hosts' own preferences (`[host_group.prefs]`), drawn per host; `None`:
    /// the group's `[client]` values, and no draw.
    pub prefs: Option<PrefsDraw>,
    /// The hosts' links (`[host_group.network]`): `download`/`upload` are `None`
    /// where the group gives none (unlimited, or an imported host's own figure).
    pub links: LinksPlan,
}

/// A group's links as resolved ([`GroupPlan::links`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinksPlan {
    pub download: Option<Dist>,
    pub upload: Option<Dist>,
    pub max_bytes_sec_down: f64,
    pub max_bytes_sec_up: f64,
}

/// A host group's `[host_group.network]`, resolved.
fn links(g: &HostGroup) -> LinksPlan {
    g.network
        .as_ref()
        .map_or_else(LinksPlan::default, |n| LinksPlan {
            download: n.download,
            upload: n.upload,
            max_bytes_sec_down: n.max_bytes_sec_down,
            max_bytes_sec_up: n.max_bytes_sec_up,
        })
}

/// A group's host export (docs/population.md, "A project's own hosts").
#[derive(Clone, Debug)]
pub struct HostsPlan {
    pub table: Arc<HostTable>,
    /// Replay: the records of the group's hosts, in slot order, and the Unix time
    /// of the run's start. `None`: each host draws a record.
    pub replay: Option<(Arc<[u32]>, i64)>,
    /// Peak FLOPS of one GPU of each type of [`hosts::GPU_TYPES`]: the group's
    /// `coproc` entry of that type (the export has no GPU speed).
    pub gpu_peak_flops: [Option<Dist>; 3],
}

/// One GPU type of a group's hosts.
#[derive(Clone, Debug)]
pub struct CoprocPlan {
    pub kind: ProcType,
    pub count: u32,
    /// GPUs of this type drawn per host (rounded, at least 0) instead of `count`.
    pub count_dist: Option<Dist>,
    /// Fraction of the group's hosts that have this GPU.
    pub probability: f64,
    pub peak_flops: Dist,
}

/// A client's starting state (`[host_group.start]`), its names resolved.
#[derive(Clone, Debug)]
pub struct StartPlan {
    pub on_frac: Option<f64>,
    pub active_frac: Option<f64>,
    pub connected_frac: Option<f64>,
    /// Per attached project, by project index.
    pub projects: Vec<(u16, ProjectStartPlan)>,
    /// Jobs in the client's queue when it joins, in queue order.
    pub jobs: Vec<StartJobPlan>,
}

/// One attached project's starting client state; times in seconds.
#[derive(Clone, Copy, Debug)]
pub struct ProjectStartPlan {
    pub rec: Option<f64>,
    pub exp_avg_cpu: Option<f64>,
    pub min_rpc_time: Option<Time>,
    pub nrpc_failures: Option<u32>,
    pub cpu_backoff_time: Option<Time>,
    pub cpu_backoff_interval: Option<Time>,
}

impl From<&ProjectStart> for ProjectStartPlan {
    fn from(s: &ProjectStart) -> Self {
        ProjectStartPlan {
            rec: s.rec,
            exp_avg_cpu: s.exp_avg_cpu,
            min_rpc_time: s.min_rpc_time.map(|d| d.get()),
            nrpc_failures: s.nrpc_failures,
            cpu_backoff_time: s.cpu_backoff_time.map(|d| d.get()),
            cpu_backoff_interval: s.cpu_backoff_interval.map(|d| d.get()),
        }
    }
}

/// A job a project sent before the host joined.
#[derive(Clone, Debug)]
pub struct StartJobPlan {
    pub project: u16,
    pub appid: AppId,
    pub report_deadline: Time,
    pub fraction_done: f64,
}

/// A scripted event: its time, its tie class, and what it does.
#[derive(Clone, Debug)]
pub struct EventPlan {
    pub at: Time,
    pub class: u8,
    pub action: Action,
}

/// What a scripted event does.
#[derive(Clone, Debug)]
pub enum Action {
    /// One pass of a daemon.
    Daemon { project: usize, daemon: Daemon },
    /// An assimilator pass whose handler answers as the script says (spec backend
    /// §2.6).
    Assimilate {
        project: usize,
        script: Vec<(WuId, HandlerResult)>,
    },
    /// Workunits created from an app's template now.
    CreateWorkunits {
        project: usize,
        appid: AppId,
        count: u32,
    },
    /// A batch submitted now (spec backend §1.5).
    SubmitBatch {
        project: usize,
        spec: Box<BatchSpec>,
    },
    /// Workunits cancelled.
    Cancel {
        project: usize,
        workunits: Vec<WuId>,
    },
    /// A named host's scheduler RPC.
    Rpc(ScriptedRpc),
    /// An event that does nothing (no action key given).
    Nothing,
}

/// A named host's scripted scheduler RPC.
#[derive(Clone, Debug)]
pub struct ScriptedRpc {
    /// Index of the named host.
    pub host: usize,
    /// Jobs the host has lost (result names, looked up in the database then).
    pub lost: Vec<String>,
    pub report: Vec<ScriptedReport>,
    pub detach: bool,
    pub send_other_results: bool,
    /// CPU seconds asked for, and the most jobs the host takes.
    pub work_req_seconds: f64,
    pub max_jobs: u32,
}

/// What a scripted host reports of one of its jobs.
#[derive(Clone, Debug)]
pub struct ScriptedReport {
    /// Result name, `wu<id>_<suffix>`.
    pub result: String,
    /// `None`: the host drops the job and never reports it.
    pub outcome: Option<(i32, i32)>,
    pub value: f64,
    pub correct: Option<bool>,
    pub cpu_time: Option<f64>,
    pub elapsed_time: Option<f64>,
    pub output_status: OutputStatus,
}

/// An `[[expect]]` entry with its targets resolved.
#[derive(Clone, Debug)]
pub struct ExpectPlan {
    /// When it is checked (`None`: at the end of the run).
    pub at: Option<Time>,
    pub project: usize,
    /// A simulated host's client state (`client = "group#k"`): the host's global
    /// index, `Err` with the name when there is no such host.
    pub client: Option<Result<usize, String>>,
    /// A named host (`host = "name"`): its index, `Err` with the name when unknown.
    pub named: Option<Result<usize, String>>,
    /// The fields to compare.
    pub expect: Expect,
    /// `file:line:column` of the entry, for its messages.
    pub place: String,
}

impl Plan {
    /// Resolves a checked scenario. A name that does not resolve is a problem with
    /// its key path, as the validator reports them: the world has no fallback.
    pub fn resolve(s: &ScenarioFile) -> Result<Plan, Vec<Problem>> {
        // Each project's configuration as its daemons read it: resolved here, once.
        let projects: Vec<ProjectPlan> = s
            .project
            .iter()
            .map(|(name, cfg)| ProjectPlan {
                name: name.clone(),
                cfg: cfg.resolve(),
            })
            .collect();
        let mut r = Resolver {
            s,
            names: s.project.keys().map(String::as_str).collect(),
            projects: &projects,
            problems: Vec::new(),
        };
        let mut tie_class = [0u8; 8];
        for (pos, d) in s.simulation.tie_order.iter().enumerate() {
            tie_class[daemon_index(*d)] = pos as u8;
        }
        let named = (s.host.iter().enumerate())
            .map(|(i, h)| r.named_host(i, h))
            .collect();
        let outputs = truth::output_models(projects.iter().map(|p| &p.cfg));
        let classes = error_classes(&s.host_group);
        let files = files_plan(s);
        let groups = (s.host_group.iter().enumerate())
            .map(|(i, g)| r.group(i, g, &outputs, classes[i], &files))
            .collect();
        let events = (s.event.iter().enumerate())
            .map(|(i, ev)| EventPlan {
                at: ev.at.get(),
                class: tie_class[daemon_index(event_daemon(ev))],
                action: r.action(i, ev),
            })
            .collect();
        let expects = (s.expect.iter().enumerate())
            .map(|(i, ex)| r.expect(i, ex))
            .collect();
        if !r.problems.is_empty() {
            return Err(r.problems);
        }
        Ok(Plan {
            seed: s.simulation.seed,
            end: s.simulation.duration.get(),
            tie_class,
            sample_interval: s.output.interval.get().max(1),
            check_invariants: s.simulation.check_invariants,
            projects,
            named,
            groups,
            events,
            expects,
            files,
        })
    }

    /// The tie class of `daemon`.
    pub(crate) fn tie_class_of(&self, daemon: Daemon) -> u8 {
        self.tie_class[daemon_index(daemon)]
    }

    /// Simulated hosts in all groups.
    pub(crate) fn host_count(&self) -> usize {
        self.groups.iter().map(|g| g.count as usize).sum()
    }
}

/// The position of `d` in [`Daemon::ALL`].
pub(crate) fn daemon_index(d: Daemon) -> usize {
    Daemon::ALL
        .iter()
        .position(|x| *x == d)
        .expect("ALL lists every daemon")
}

/// The daemon whose tie class a scripted event takes: its own, the work generator's
/// for created workunits, else the scheduler's.
fn event_daemon(ev: &ScriptEvent) -> Daemon {
    if let Some(d) = ev.daemon {
        d
    } else if ev.create_workunits.is_some() || ev.submit_batch.is_some() {
        Daemon::WorkGenerator
    } else {
        Daemon::Scheduler
    }
}

/// The run's files (spec client §8): each project's apps' sizes (an app's own
/// `files`, else the project's) and its data server. `None` when no app of any
/// project moves a byte, so that such a run makes no transfer at all.
fn files_plan(s: &ScenarioFile) -> Option<Arc<FilesPlan>> {
    let projects: Vec<Option<ProjectFiles>> = (s.project.values())
        .map(|p| {
            let apps: Vec<_> = (p.app.iter())
                .map(|a| a.files.as_ref().or(p.files.as_ref()))
                .collect();
            apps.iter()
                .any(|f| f.is_some_and(|f| f.has_bytes()))
                .then(|| ProjectFiles {
                    apps: (apps.iter())
                        .map(|f| f.map(|f| f.resolve()).unwrap_or_default())
                        .collect(),
                    server: p
                        .data_server
                        .as_ref()
                        .map(|d| d.resolve())
                        .unwrap_or_default(),
                })
        })
        .collect();
    projects.iter().any(Option::is_some).then(|| {
        Arc::new(FilesPlan {
            projects,
            seed: s.simulation.seed,
        })
    })
}

/// The error class index of each host group: classes are numbered in order of first
/// appearance; a group without `error_class` is a class named after itself.
fn error_classes(groups: &[HostGroup]) -> Vec<u32> {
    let mut names: Vec<&str> = Vec::new();
    groups
        .iter()
        .map(|g| {
            let name = g.error_class.as_deref().unwrap_or(&g.name);
            let k = names.iter().position(|n| *n == name).unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            });
            k as u32
        })
        .collect()
}

/// The availability model of a host group (spec client §3.5, §5.3): a trace, explicit
/// on/off periods, or the emulator's alternating process driven by `on_frac`, unless
/// `[host_group.availability]` gives a model or classes; vacations over it; the
/// active and connected processes, with a fraction per host when given as a
/// distribution; the time statistics kept by the rule of the group's client `policy`.
fn avail_spec(g: &HostGroup, policy: crate::client::config::Policy) -> AvailSpec {
    let mut on_off = if let Some(t) = &g.trace_data.0 {
        OnOff::Trace(Arc::clone(t))
    } else if let (Some(on), Some(off)) = (&g.on_period, &g.off_period) {
        OnOff::Periods { on: *on, off: *off }
    } else if g.on_frac < 1.0 {
        OnOff::Process {
            on_frac: g.on_frac,
            lambda: g.on_lambda.get() as f64,
        }
    } else {
        OnOff::Always
    };
    let mut vacation = None;
    let mut classes = Vec::new();
    if let Some(a) = &g.availability {
        let top = a.keys();
        if top.has_model() {
            on_off = on_off_of(&top);
        }
        vacation = top.vacation.as_ref().map(vacation_of);
        let total: f64 = a.class.iter().map(|c| c.weight.max(0.0)).sum();
        let mut cum = 0.0;
        for (k, c) in a.class.iter().enumerate() {
            cum += c.weight.max(0.0);
            let keys = c.keys();
            classes.push(AvailClass {
                name: c.name.clone(),
                cum_weight: if k + 1 == a.class.len() {
                    1.0
                } else {
                    cum / total
                },
                on_off: on_off_of(&keys),
                vacation: keys.vacation.as_ref().map(vacation_of).or(vacation.clone()),
            });
        }
    }
    let (active, active_dist) = frac_of(&g.active_frac);
    let (connected, connected_dist) = frac_of(&g.connected_frac);
    AvailSpec {
        on_off,
        vacation,
        classes,
        active: (active, g.active_lambda.get() as f64),
        connected: (connected, g.connected_lambda.get() as f64),
        active_dist,
        connected_dist,
        time_stats: TimeStatsRule::of(policy),
    }
}

/// The value of a distribution that draws nothing: a fixed value, clamped.
fn fixed_value(d: &Dist) -> Option<f64> {
    d.is_fixed().then(|| {
        let x = d.mean();
        let x = d.min.map_or(x, |m| x.max(m));
        d.max.map_or(x, |m| x.min(m))
    })
}

/// A fraction given as a number (the group's one fraction) or as a distribution
/// drawn per host (then the group's fraction is its mean, for the host rows).
fn frac_of(d: &Dist) -> (f64, Option<Dist>) {
    match fixed_value(d) {
        Some(x) => (x, None),
        None => (d.mean().clamp(0.0, 1.0), Some(*d)),
    }
}

/// The on/off model of checked model keys: `daily`, `on_period`/`off_period`,
/// `on_frac` below 1, or always on.
fn on_off_of(k: &ModelKeys) -> OnOff {
    if let Some(d) = &k.daily {
        let weekday = Window {
            start: d.start.0,
            end: d.end.0,
        };
        let weekend = Window {
            start: d.weekend_start.map_or(weekday.start, |c| c.0),
            end: d.weekend_end.map_or(weekday.end, |c| c.0),
        };
        let zone = match &d.utc_offset {
            ZoneSpec::Hours(h) => Zone::Hours(*h),
            ZoneSpec::Weighted(m) => Zone::Weighted(cumulative(
                m.iter()
                    .map(|(k, w)| (k.trim().parse::<f64>().unwrap_or(0.0), *w)),
            )),
        };
        OnOff::Daily(Box::new(Daily {
            weekday,
            weekend,
            weekday_prob: d.weekday_prob,
            weekend_prob: d.weekend_prob,
            jitter: d.jitter,
            zone,
        }))
    } else if let (Some(on), Some(off)) = (k.on_period, k.off_period) {
        OnOff::Periods { on, off }
    } else if let Some(f) = k.on_frac.filter(|f| *f < 1.0) {
        OnOff::Process {
            on_frac: f,
            lambda: k.on_lambda.map_or(3600, |l| l.get()) as f64,
        }
    } else {
        OnOff::Always
    }
}

fn vacation_of(v: &super::schema::VacationSection) -> Vacation {
    Vacation {
        every: v.every,
        length: v.length,
    }
}

/// Values with their weights turned into cumulative weights that end at exactly 1
/// (negative weights count as 0; the validator refuses them).
fn cumulative<T>(items: impl Iterator<Item = (T, f64)>) -> Box<[(T, f64)]> {
    let items: Vec<(T, f64)> = items.map(|(x, w)| (x, w.max(0.0))).collect();
    let total: f64 = items.iter().map(|(_, w)| w).sum();
    let n = items.len();
    let mut cum = 0.0;
    (items.into_iter().enumerate())
        .map(|(k, (x, w))| {
            cum += w;
            (x, if k + 1 == n { 1.0 } else { cum / total })
        })
        .collect()
}

/// The operating-system mix of a group (`None` for one name): each system with the
/// group's CPU names, shared by the hosts that draw it.
fn os_mix(os: &OsName, p_vendor: &str, p_model: &str) -> Option<OsMix> {
    match os {
        OsName::One(_) => None,
        OsName::Mix(m) => Some(
            cumulative(
                m.iter()
                    .map(|(n, w)| (HostNames::shared(n, p_vendor, p_model), *w)),
            )
            .into(),
        ),
    }
}

/// The name a host row starts with: the one name, or the mix's heaviest (the
/// server replaces it with the host's own draw at first contact).
fn os_row_name(os: &OsName) -> &str {
    match os {
        OsName::One(n) => n.as_str(),
        OsName::Mix(m) => (m.iter())
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or("", |(n, _)| n.as_str()),
    }
}

/// A count's plain value, or the rounded mean of its distribution (for host rows).
fn count_value(c: &Count) -> i64 {
    match c {
        Count::Fixed(n) => *n,
        Count::Dist(d) => d.mean().round() as i64,
    }
}

/// Resolves names against one scenario, collecting what does not resolve.
struct Resolver<'a> {
    s: &'a ScenarioFile,
    names: Vec<&'a str>,
    /// The projects resolved, in the order of `names`.
    projects: &'a [ProjectPlan],
    problems: Vec<Problem>,
}

impl Resolver<'_> {
    fn problem(&mut self, path: String, message: String) {
        self.problems.push(Problem { path, message });
    }

    /// The index of project `name`; "" names the only project.
    fn project(&mut self, path: &str, name: &str) -> u16 {
        if name.is_empty() {
            return 0;
        }
        match self.names.iter().position(|n| *n == name) {
            Some(k) => k as u16,
            None => {
                self.problem(path.into(), format!("unknown project `{name}`"));
                0
            }
        }
    }

    /// The id of app `name` of project `pi`; "" names its first app.
    fn app(&mut self, path: &str, pi: u16, name: &str) -> AppId {
        let cfg = self.projects.get(pi as usize);
        match cfg.and_then(|p| p.cfg.app_id(name)) {
            Some(id) => id,
            None => {
                self.problem(path.into(), format!("unknown app `{name}`"));
                1
            }
        }
    }

    fn wu(&mut self, path: &str, name: &str) -> WuId {
        parse_wu_name(name).map(WuId).unwrap_or_else(|| {
            self.problem(
                path.into(),
                format!("`{name}` is not a workunit name (wu<id>)"),
            );
            WuId(0)
        })
    }

    fn named_host(&mut self, i: usize, h: &NamedHost) -> NamedHostPlan {
        NamedHostPlan {
            name: h.name.clone(),
            project: self.project(&format!("host.{i}.project"), &h.project),
            row: HostRow {
                p_ncpus: count_value(&h.p_ncpus) as i32,
                p_fpops: h.p_fpops,
                p_iops: h.p_iops,
                m_nbytes: h.m_nbytes,
                d_free: h.d_free,
                on_frac: h.on_frac,
                active_frac: fixed_value(&h.active_frac).unwrap_or(1.0),
                names: HostNames::shared(os_row_name(&h.os_name), &h.p_vendor, &h.p_model),
                ..Default::default()
            },
            userid: h.userid,
            hav: h
                .hav
                .as_ref()
                .map(|v| (v.consecutive_valid, v.max_jobs_per_day, v.n_jobs_today)),
            day_offset: h.day_offset,
        }
    }

    fn group(
        &mut self,
        gi: usize,
        g: &HostGroup,
        outputs: &[Vec<truth::OutputModel>],
        error_class: u32,
        files: &Option<Arc<FilesPlan>>,
    ) -> GroupPlan {
        let mut cfg = ClientConfig::resolve(&self.s.client, g.policy);
        cfg.gpu_active_frac = g.gpu_active_frac;
        // Only expectations read a host's last work request: without any, hosts
        // keep none (88 bytes a host-project saved).
        cfg.keep_last_request = !self.s.expect.is_empty();
        let p_ncpus = count_value(&g.p_ncpus).clamp(1, u32::MAX as i64) as u32;
        if let Some(c) = &g.import_data.client {
            prefs(&mut cfg, &c.prefs);
        }
        let ctx = Arc::new(GroupCtx {
            avail: avail_spec(g, cfg.policy),
            cfg,
            behaviour: HostBehaviour {
                outputs: outputs.to_vec(),
                detach_prob: g.detach_prob,
                background: g.background.as_ref().map(|b| b.resolve()),
                files: files.clone(),
            },
        });
        let attached = if g.shares.is_empty() {
            let p = self.project(&format!("host_group.{gi}.project"), &g.project);
            vec![(p, 100.0)]
        } else {
            (g.shares.iter())
                .map(|(n, s)| (self.project(&format!("host_group.{gi}.shares.{n}"), n), *s))
                .collect()
        };
        let mut row = HostRow {
            p_ncpus: count_value(&g.p_ncpus) as i32,
            p_iops: g.p_iops,
            m_nbytes: g.m_nbytes,
            d_free: g.d_free,
            on_frac: g.on_frac,
            active_frac: frac_of(&g.active_frac).0,
            gpu_active_frac: g.gpu_active_frac,
            names: HostNames::shared(os_row_name(&g.os_name), &g.p_vendor, &g.p_model),
            ..Default::default()
        };
        row.set_host_group(Some(gi as u32));
        let start = g.start.as_ref().map(|st| self.start(gi, g, st));
        GroupPlan {
            name: g.name.clone(),
            count: g.count,
            ctx,
            row,
            p_ncpus,
            ncpus_dist: match g.p_ncpus {
                Count::Dist(d) => Some(d),
                Count::Fixed(_) => None,
            },
            os_mix: os_mix(&g.os_name, &g.p_vendor, &g.p_model),
            attached,
            p_fpops: g.p_fpops,
            arrival: g.arrival,
            lifetime: g.lifetime,
            error_prob: g.error_prob,
            wrong_result_prob: g.wrong_result_prob,
            error_class,
            coprocs: if g.import_data.hosts.is_some() {
                Vec::new()
            } else {
                g.coproc.iter().map(coproc).collect()
            },
            start,
            hosts: g.import_data.hosts.as_ref().map(|t| HostsPlan {
                table: Arc::clone(t),
                replay: g.import_data.replay.clone(),
                gpu_peak_flops: hosts::GPU_TYPES.map(|(_, kind)| {
                    (g.coproc.iter())
                        .find(|c| c.kind.proc_type() == kind)
                        .map(|c| c.peak_flops)
                }),
            }),
            prefs: g.prefs.as_ref().map(|p| p.resolve()),
            links: links(g),
        }
    }

    fn start(&mut self, gi: usize, g: &HostGroup, st: &ClientStart) -> StartPlan {
        let path = format!("host_group.{gi}.start");
        let projects = (st.project.iter())
            .map(|(n, p)| (self.project(&format!("{path}.project.{n}"), n), p.into()))
            .collect();
        let jobs = (st.job.iter().enumerate())
            .map(|(k, j)| {
                let jp = format!("{path}.job.{k}");
                let name = if j.project.is_empty() {
                    &g.project
                } else {
                    &j.project
                };
                let project = self.project(&format!("{jp}.project"), name);
                StartJobPlan {
                    project,
                    appid: self.app(&format!("{jp}.app"), project, &j.app),
                    report_deadline: j.report_deadline.get(),
                    fraction_done: j.fraction_done,
                }
            })
            .collect();
        StartPlan {
            on_frac: st.on_frac,
            active_frac: st.active_frac,
            connected_frac: st.connected_frac,
            projects,
            jobs,
        }
    }

    fn action(&mut self, i: usize, ev: &ScriptEvent) -> Action {
        let path = format!("event.{i}");
        let project = |r: &mut Self| -> usize {
            r.project(
                &format!("{path}.project"),
                ev.project.as_deref().unwrap_or(""),
            ) as usize
        };
        if let Some(daemon) = ev.daemon {
            let project = project(self);
            if ev.assimilate.is_empty() {
                return Action::Daemon { project, daemon };
            }
            let script = (ev.assimilate.iter())
                .map(|(name, &a)| (self.wu(&format!("{path}.assimilate.{name}"), name), a))
                .collect();
            return Action::Assimilate { project, script };
        }
        if let Some(count) = ev.create_workunits {
            let pi = project(self);
            let appid = self.app(
                &format!("{path}.app"),
                pi as u16,
                ev.app.as_deref().unwrap_or(""),
            );
            return Action::CreateWorkunits {
                project: pi,
                appid,
                count,
            };
        }
        if let Some(b) = &ev.submit_batch {
            let pi = project(self);
            let app_id = self.app(
                &format!("{path}.app"),
                pi as u16,
                ev.app.as_deref().unwrap_or(""),
            );
            return Action::SubmitBatch {
                project: pi,
                spec: Box::new(BatchSpec {
                    app_id,
                    jobs: b.jobs,
                    size: b.size,
                    priority: b.priority,
                    name: b.name.clone(),
                }),
            };
        }
        if !ev.cancel.is_empty() {
            let project = project(self);
            let workunits = (ev.cancel.iter().enumerate())
                .map(|(k, name)| self.wu(&format!("{path}.cancel.{k}"), name))
                .collect();
            return Action::Cancel { project, workunits };
        }
        let Some(name) = &ev.host else {
            return Action::Nothing;
        };
        let Some(host) = self.s.host.iter().position(|h| &h.name == name) else {
            self.problem(format!("{path}.host"), format!("unknown host `{name}`"));
            return Action::Nothing;
        };
        let (work_req_seconds, max_jobs) = match (ev.request, ev.work_req_seconds) {
            (Some(n), _) => (if n > 0 { 1e12 } else { 0.0 }, n),
            (None, Some(s)) => (s, u32::MAX),
            (None, None) => (0.0, 0),
        };
        Action::Rpc(ScriptedRpc {
            host,
            lost: ev.lost.clone(),
            report: ev.report.iter().map(report).collect(),
            detach: ev.detach,
            send_other_results: ev.send_other_results,
            work_req_seconds,
            max_jobs,
        })
    }

    fn expect(&mut self, i: usize, ex: &Expect) -> ExpectPlan {
        let project = self.project(
            &format!("expect.{i}.project"),
            (ex.project.as_deref())
                .or(ex.web_server.as_deref())
                .unwrap_or(""),
        ) as usize;
        let client = ex.client.as_ref().map(|c| {
            let (name, k) = c.split_once('#').unwrap_or((c.as_str(), "0"));
            let mut first = 0usize;
            for g in &self.s.host_group {
                if g.name == name {
                    return match k.parse::<usize>() {
                        Ok(k) if k < g.count as usize => Ok(first + k),
                        _ => Err(c.clone()),
                    };
                }
                first += g.count as usize;
            }
            Err(c.clone())
        });
        let named = ex
            .host
            .as_ref()
            .map(|n| (self.s.host.iter().position(|h| &h.name == n)).ok_or_else(|| n.clone()));
        ExpectPlan {
            at: ex.at.map(|t| t.get()),
            project,
            client,
            named,
            expect: ex.clone(),
            place: ex.source.0.clone().unwrap_or_else(|| "scenario".into()),
        }
    }
}

/// A client's global preferences (`global_prefs.xml`) that are its group's client
/// configuration: the time slice (`cpu_scheduling_period_minutes`). The work buffer
/// and the CPU share are the host's own preferences (`[host_group.prefs]`, set by
/// the importer).
fn prefs(cfg: &mut ClientConfig, p: &crate::scenario::import::client_state::Prefs) {
    if let Some(m) = p.cpu_scheduling_period_minutes
        && m > 0.0
    {
        cfg.cpu_scheduling_period = m * 60.0;
    }
}

fn coproc(c: &CoprocSpec) -> CoprocPlan {
    CoprocPlan {
        kind: c.kind.proc_type(),
        count: count_value(&c.count).clamp(0, u32::MAX as i64) as u32,
        count_dist: match c.count {
            Count::Dist(d) => Some(d),
            Count::Fixed(_) => None,
        },
        probability: c.probability,
        peak_flops: c.peak_flops,
    }
}

/// A scripted report with its client state and exit status decided.
fn report(rep: &super::schema::Report) -> ScriptedReport {
    let outcome = match rep.outcome {
        ReportOutcome::Success => Some((client_state::FILES_UPLOADED, 0)),
        ReportOutcome::ClientError => Some((
            client_state::COMPUTE_ERROR,
            rep.exit_status.unwrap_or(CLIENT_ERROR_EXIT),
        )),
        ReportOutcome::Abort => Some((client_state::ABORTED, exit_status::EXIT_ABORTED_VIA_GUI)),
        ReportOutcome::ProjectAbort => {
            Some((client_state::ABORTED, exit_status::EXIT_ABORTED_BY_PROJECT))
        }
        ReportOutcome::NoReply => None,
    };
    let output_status = match rep.output {
        OutputRead::Ok => OutputStatus::Ok,
        OutputRead::Unreadable => OutputStatus::Unreadable,
        OutputRead::Transient => OutputStatus::TransientUntil(
            rep.transient_until
                .map_or(INT_MAX, |d| d.get())
                .clamp(0, INT_MAX) as i32,
        ),
    };
    ScriptedReport {
        result: rep.result.clone(),
        outcome,
        value: rep.value,
        correct: rep.correct,
        cpu_time: rep.cpu_time,
        elapsed_time: rep.elapsed_time,
        output_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(group: &str) -> Plan {
        let text = format!(
            "[project.main]\n[client]\npolicy = \"modern_rec\"\n[[host_group]]\nname = \"v\"\ncount = 3\n{group}"
        );
        crate::scenario::load::load_str(&text, "t.toml", &[], None)
            .unwrap_or_else(|e| panic!("{e}"))
            .plan
    }

    #[test]
    fn classes_resolve_with_cumulative_weights_and_inherited_vacations() {
        let p = plan(
            r#"[host_group.availability]
vacation = { every = "30d", length = "7d" }
[[host_group.availability.class]]
name = "random"
weight = 3
on_frac = 0.5
on_lambda = "2h"
[[host_group.availability.class]]
name = "office"
weight = 7
daily = { start = "09:00", end = "17:30", weekend_start = "10:00", weekend_end = "12:00", weekend_prob = 0.5, utc_offset = { "-5" = 1, "1" = 3 } }
vacation = { every = "60d", length = "14d" }
"#,
        );
        let spec = &p.groups[0].ctx.avail;
        assert_eq!(spec.classes.len(), 2);
        assert_eq!(spec.classes[0].cum_weight, 0.3);
        assert_eq!(spec.classes[1].cum_weight, 1.0);
        assert!(matches!(
            spec.classes[0].on_off,
            OnOff::Process { on_frac, lambda } if on_frac == 0.5 && lambda == 7200.0
        ));
        let OnOff::Daily(d) = &spec.classes[1].on_off else {
            panic!("{:?}", spec.classes[1].on_off)
        };
        assert_eq!((d.weekday.start, d.weekday.end), (32_400, 63_000));
        assert_eq!((d.weekend.start, d.weekend.end), (36_000, 43_200));
        assert_eq!((d.weekday_prob, d.weekend_prob), (1.0, 0.5));
        // Zones in key order ("-5" < "1"), weights normalised.
        assert_eq!(
            d.zone,
            Zone::Weighted(vec![(-5.0, 0.25), (1.0, 1.0)].into())
        );
        // The first class takes the section's vacations; the second keeps its own.
        let v = |c: usize| spec.classes[c].vacation.as_ref().map(|v| v.every.mean());
        assert_eq!(v(0), Some(30.0 * 86_400.0));
        assert_eq!(v(1), Some(60.0 * 86_400.0));
        assert!(matches!(spec.on_off, OnOff::Always));
    }

    #[test]
    fn a_vacation_alone_lies_over_the_groups_own_model() {
        let p = plan(
            "on_frac = 0.4\n[host_group.availability]\nvacation = { every = \"20d\", length = \"5d\" }\n",
        );
        let spec = &p.groups[0].ctx.avail;
        assert!(matches!(spec.on_off, OnOff::Process { on_frac, .. } if on_frac == 0.4));
        assert!(spec.classes.is_empty());
        // 0.4 · (1 − 5/25).
        assert!((spec.expected_on_frac(0, 0) - 0.32).abs() < 1e-12);
    }

    #[test]
    fn hardware_and_fractions_per_host_resolve() {
        let p = plan(
            r#"p_ncpus = { dist = "uniform", min = 1, max = 8 }
active_frac = { dist = "uniform", min = 0.4, max = 0.8 }
connected_frac = 0.9
os_name = { "Microsoft Windows" = 8, Linux = 1, Darwin = 1 }
coproc = [ { type = "nvidia", probability = 0.3, count = { dist = "uniform", min = 1, max = 2 }, peak_flops = 1e12 } ]
"#,
        );
        let g = &p.groups[0];
        // The row and the group's fixed count take the mean, rounded: 4.5 → 5.
        assert_eq!(g.p_ncpus, 5);
        assert_eq!(g.row.p_ncpus, 5);
        assert!(g.ncpus_dist.is_some());
        // A distribution's mean is the group's fraction; a number is kept as is.
        assert!((g.ctx.avail.active.0 - 0.6).abs() < 1e-12);
        assert!(g.ctx.avail.active_dist.is_some());
        assert_eq!(g.ctx.avail.connected.0, 0.9);
        assert!(g.ctx.avail.connected_dist.is_none());
        assert!((g.row.active_frac - 0.6).abs() < 1e-12);
        // Systems in name order with cumulative weights; the row starts with the
        // heaviest.
        let mix = g.os_mix.as_deref().unwrap();
        let names: Vec<&str> = mix.iter().map(|(n, _)| &*n.os_name).collect();
        assert_eq!(names, ["Darwin", "Linux", "Microsoft Windows"]);
        let cum: Vec<f64> = mix.iter().map(|&(_, c)| c).collect();
        assert_eq!(cum, [0.1, 0.2, 1.0]);
        assert_eq!(&*g.row.names.os_name, "Microsoft Windows");
        let c = &g.coprocs[0];
        assert_eq!((c.count, c.probability), (2, 0.3));
        assert!(c.count_dist.is_some());
        // Plain values resolve as before and draw nothing.
        let p = plan("p_ncpus = 4\n");
        let g = &p.groups[0];
        assert_eq!((g.p_ncpus, g.row.p_ncpus), (4, 4));
        assert!(g.ncpus_dist.is_none() && g.os_mix.is_none());
        assert!(!g.ctx.avail.has_traits());
    }
}
