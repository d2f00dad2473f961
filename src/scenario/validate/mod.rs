//! Semantic checks of a deserialised scenario: what serde's types cannot express.
//!
//! serde already rejects unknown keys, wrong types and malformed durations. What is
//! left is values that parse but make no sense to BOINC (a workunit template that
//! `create_work` would reject, spec backend §2.1 step 2), probabilities outside
//! [0, 1], and cross-references (an event naming a host that does not exist). Each
//! [`Problem`] names the dotted key path of the offending value, so that the loader
//! can point at its line and column; for a value left at its default the path still
//! names the key, and the loader points at the nearest enclosing table.
//!
//! The checks never stop at the first problem: [`validate`] returns them all, in file
//! order of sections (simulation, projects, host groups, hosts, events, expects).

use super::schema::*;
use crate::client::config::Policy;
use crate::server::ProjectConfig;
use crate::server::config::{AppVersionConfig, WorkGenConfig, WorkGenMode, WuTemplate};
use crate::server::db::parse_result_name;
use crate::server::types::{AssimilateState, FileDeleteState, Outcome, ServerState, ValidateState};
use std::collections::BTreeMap;

/// One semantic problem of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Dotted key path of the offending value; array entries are `.N` (0-based), as in
    /// `host_group.0.count` or `event.2.report.0.result`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// Checks everything serde cannot; an empty list means the scenario is usable.
pub fn validate(file: &ScenarioFile) -> Vec<Problem> {
    let mut c = Checker {
        file,
        out: Vec::new(),
    };
    c.simulation();
    c.projects();
    for (i, g) in file.host_group.iter().enumerate() {
        c.host_group(i, g);
    }
    c.hosts();
    for (i, e) in file.event.iter().enumerate() {
        c.event(i, e);
    }
    for (i, x) in file.expect.iter().enumerate() {
        c.expect(i, x);
    }
    c.duration_positive("output.interval", file.output.interval);
    c.duration_positive("output.histogram_bin", file.output.histogram_bin);
    c.warmup();
    c.out
}

/// A policy's name as the scenario writes it.
fn policy_name(p: Policy) -> &'static str {
    match p {
        Policy::SeedDebt => "seed_debt",
        Policy::ModernRec => "modern_rec",
    }
}

/// Parses a workunit name `wu<id>`, the form [`crate::server::db::result_name`]
/// builds results from. (db.rs only parses result names.)
pub fn parse_wu_name(name: &str) -> Option<u32> {
    let id = name.strip_prefix("wu")?;
    // `u32::from_str` accepts a leading `+`, which no BOINC name has.
    if !all_digits(id) {
        return None;
    }
    id.parse().ok()
}

/// A non-empty run of ASCII digits (no sign, no spaces).
fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `name` may name a project: it becomes part of output file names, so only
/// letters, digits, `_` and `-`.
pub fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The scenario-file spelling of a daemon (serde's `snake_case`).
pub fn daemon_name(d: Daemon) -> &'static str {
    match d {
        Daemon::Scheduler => "scheduler",
        Daemon::Transitioner => "transitioner",
        Daemon::Validator => "validator",
        Daemon::Assimilator => "assimilator",
        Daemon::FileDeleter => "file_deleter",
        Daemon::DbPurge => "db_purge",
        Daemon::Feeder => "feeder",
        Daemon::WorkGenerator => "work_generator",
    }
}

/// Host attributes shared by `[[host_group]]` and `[[host]]` (the schema adds them to
/// both with a macro, so they are gathered here to be checked once).
struct HostAttrs {
    p_ncpus: i32,
    p_fpops: f64,
    p_iops: f64,
    m_nbytes: f64,
    d_free: f64,
    on_frac: f64,
    active_frac: f64,
}

macro_rules! host_attrs {
    ($h:expr, $fpops:expr) => {
        HostAttrs {
            p_ncpus: $h.p_ncpus,
            p_fpops: $fpops,
            p_iops: $h.p_iops,
            m_nbytes: $h.m_nbytes,
            d_free: $h.d_free,
            on_frac: $h.on_frac,
            active_frac: $h.active_frac,
        }
    };
}

/// Fields of `[[expect]]` that only make sense for one kind of row.
const RESULT_ONLY: &[&str] = &[
    "state",
    "server_state",
    "outcome",
    "validate_state",
    "hostid",
    "sent_time",
    "received_time",
    "report_deadline",
    "priority",
    "granted_credit",
];
const WORKUNIT_ONLY: &[&str] = &[
    "need_validate",
    "canonical",
    "transition_time",
    "error_mask",
    "assimilate_state",
    "target_nresults",
    "min_quorum",
    "hr_class",
    "nresults",
    "assimilate_count",
];
/// Workunits have a `file_delete_state` too (spec backend §1.1), and
/// `scenario::expect` compares it for both.
const RESULT_OR_WORKUNIT: &[&str] = &["file_delete_state"];
const HOST_ONLY: &[&str] = &[
    "consecutive_valid",
    "max_jobs_per_day",
    "n_jobs_today",
    "total_credit",
    "reply",
];
/// Client state of a simulated host (spec client §1.1, §2.3, §2.8).
pub(crate) const CLIENT_ONLY: &[&str] = &[
    "nrpc_failures",
    "master_fetch_failures",
    "master_url_fetch_pending",
    "min_rpc_time",
    "rec",
    "exp_avg_cpu",
    "resource_debt",
    "debt_order",
    "cpu_time",
    "jobs",
    "jobs_received",
    "rpcs",
    "cpu_backoff_interval",
    "running",
    "on_frac",
    "active_frac",
    "connected_frac",
    "sched_priority",
    "req_secs",
    "req_instances",
    "estimated_delay",
    "cpu_backoff_time",
    "idle_time",
    "idle_time_sumsq",
    "deadlines_missed",
];

/// Client fields about the whole host rather than one attached project.
pub(crate) const CLIENT_HOST_LEVEL: &[&str] =
    &["running", "on_frac", "active_frac", "connected_frac"];

/// A BOINC-numbered field of `[[expect]]`: key, value, allowed values, test.
type RangeCheck<'a> = (&'a str, Option<i64>, &'a str, fn(i64) -> bool);

struct Checker<'a> {
    file: &'a ScenarioFile,
    out: Vec<Problem>,
}

impl Checker<'_> {
    /// The key a path ends with, to name it in messages.
    fn key(path: &str) -> &str {
        path.rsplit('.').next().unwrap_or(path)
    }

    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.out.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    // ----- generic value checks -------------------------------------------------

    fn finite(&mut self, path: &str, x: f64) -> bool {
        if x.is_finite() {
            true
        } else {
            self.push(
                path,
                format!(
                    "{} = {x} is not a finite number; expected a finite number",
                    Self::key(path)
                ),
            );
            false
        }
    }

    fn non_negative(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && x < 0.0 {
            self.push(
                path,
                format!(
                    "{} = {x} is negative; expected a number >= 0",
                    Self::key(path)
                ),
            );
        }
    }

    fn positive(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && x <= 0.0 {
            self.push(
                path,
                format!(
                    "{} = {x} is not positive; expected a number > 0",
                    Self::key(path)
                ),
            );
        }
    }

    /// A probability: `[0, 1]`.
    fn probability(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && !(0.0..=1.0).contains(&x) {
            self.push(
                path,
                format!(
                    "{} = {x} is not a probability; expected a number in [0, 1]",
                    Self::key(path)
                ),
            );
        }
    }

    /// A pinned uniform draw: `[0, 1)`.
    fn unit_draw(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && !(0.0..1.0).contains(&x) {
            self.push(
                path,
                format!(
                    "{} = {x} is outside [0, 1); expected a uniform draw with 0 <= U < 1",
                    Self::key(path)
                ),
            );
        }
    }

    fn min_int(&mut self, path: &str, v: i64, min: i64) {
        if v < min {
            self.push(
                path,
                format!(
                    "{} = {v} is too small; expected an integer >= {min}",
                    Self::key(path)
                ),
            );
        }
    }

    fn duration_non_negative(&mut self, path: &str, d: crate::base::units::Duration) {
        if d.get() < 0 {
            self.push(
                path,
                format!(
                    "{} = {} s is negative; expected a duration >= 0",
                    Self::key(path),
                    d.get()
                ),
            );
        }
    }

    fn duration_positive(&mut self, path: &str, d: crate::base::units::Duration) {
        if d.get() <= 0 {
            self.push(
                path,
                format!(
                    "{} = {} s is not positive; expected a duration > 0, e.g. \"1d\"",
                    Self::key(path),
                    d.get()
                ),
            );
        }
    }

    /// Nothing runs after `simulation.duration`: a later event would be silently
    /// dropped, and a later expect silently never checked.
    fn before_end(&mut self, path: &str, what: &str, t: crate::base::units::Duration) {
        let end = self.file.simulation.duration.get();
        if t.get() > end {
            self.push(
                path,
                format!(
                    "this {what} at t = {} s is after the end of the run (simulation.duration = {end} s); expected at <= {end}",
                    t.get()
                ),
            );
        }
    }

    // ----- cross-references -----------------------------------------------------

    fn project_list(&self) -> String {
        let names: Vec<&str> = self.file.project.keys().map(String::as_str).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    fn host_list(&self) -> String {
        let names: Vec<&str> = self.file.host.iter().map(|h| h.name.as_str()).collect();
        if names.is_empty() {
            "none (no [[host]] is defined)".into()
        } else {
            names.join(", ")
        }
    }

    /// Resolves a `project = ...` reference: empty or absent means "the only project".
    /// Returns the resolved name when it is valid.
    fn project_ref(&mut self, path: &str, name: Option<&str>) -> Option<String> {
        match name {
            None | Some("") => {
                let n = self.file.project.len();
                if n == 1 {
                    self.file.project.keys().next().cloned()
                } else {
                    if n > 1 {
                        let list = self.project_list();
                        self.push(
                            path,
                            format!(
                                "no project given but the scenario has {n} projects; expected `project = \"NAME\"` with one of: {list}"
                            ),
                        );
                    }
                    // With no project at all, `projects()` already reported it.
                    None
                }
            }
            Some(p) if self.file.project.contains_key(p) => Some(p.to_owned()),
            Some(p) => {
                let list = self.project_list();
                self.push(
                    path,
                    format!("unknown project `{p}`; known projects: {list}"),
                );
                None
            }
        }
    }

    /// `app` must name an app of project `project` ("" names its first app); an
    /// unknown project was reported where it was named.
    fn app_ref(&mut self, path: &str, project: &str, app: &str) {
        let Some(p) = self.file.project.get(project) else {
            return;
        };
        if p.app_id(app).is_none() {
            let names: Vec<&str> = p.app.iter().map(|a| a.name.as_str()).collect();
            self.push(
                path.to_string(),
                format!(
                    "unknown app `{app}` of project `{project}`; expected one of: {}",
                    names.join(", ")
                ),
            );
        }
    }

    /// Whether host group `g` attaches to project `name`: its `project` (the only
    /// project when it names none), or one of its `shares`.
    fn attaches(&self, g: &HostGroup, name: &str) -> bool {
        if g.shares.is_empty() {
            let only = (self.file.project.len() == 1)
                .then(|| self.file.project.keys().next())
                .flatten();
            g.project == name || (g.project.is_empty() && only.is_some_and(|o| o == name))
        } else {
            g.shares.contains_key(name)
        }
    }

    /// The project a named host belongs to, if it resolves (no problem pushed).
    fn host_project(&self, h: &NamedHost) -> Option<String> {
        if h.project.is_empty() {
            (self.file.project.len() == 1)
                .then(|| self.file.project.keys().next().cloned())
                .flatten()
        } else {
            self.file
                .project
                .contains_key(&h.project)
                .then(|| h.project.clone())
        }
    }

    fn find_host(&self, name: &str) -> Option<&NamedHost> {
        self.file.host.iter().find(|h| h.name == name)
    }

    /// A `host = "..."` reference of an event or expect: must name a `[[host]]` of the
    /// same project.
    fn host_ref(&mut self, path: &str, kind: &str, name: &str, project: Option<&str>) {
        match self.find_host(name) {
            None => {
                let list = self.host_list();
                self.push(
                    path,
                    format!("{kind} names unknown host `{name}`; known hosts: {list}"),
                );
            }
            Some(h) => {
                if let (Some(hp), Some(p)) = (self.host_project(h), project)
                    && hp != p
                {
                    self.push(
                        path,
                        format!("host `{name}` belongs to project `{hp}`, not `{p}`; expected a host of project `{p}`"),
                    );
                }
            }
        }
    }

    fn result_name(&mut self, path: &str, name: &str) {
        if parse_result_name(name).is_none() {
            self.push(
                path,
                format!(
                    "`{name}` is not a result name; expected `wu<id>_<suffix>`, e.g. \"wu1_0\""
                ),
            );
        }
    }

    fn wu_name(&mut self, path: &str, name: &str) {
        if parse_wu_name(name).is_none() {
            self.push(
                path,
                format!("`{name}` is not a workunit name; expected `wu<id>`, e.g. \"wu1\""),
            );
        }
    }

    // ----- sections -------------------------------------------------------------

    /// `[output] warmup` must leave part of the run to measure.
    fn warmup(&mut self) {
        let (w, d) = (
            self.file.output.warmup.get(),
            self.file.simulation.duration.get(),
        );
        if w < 0 || (w > 0 && w >= d) {
            self.push(
                "output.warmup",
                format!(
                    "warmup = {w} s is not within the run; expected a duration from 0 to less than simulation.duration ({d} s)"
                ),
            );
        }
    }

    fn simulation(&mut self) {
        let s = &self.file.simulation;
        if s.name.contains(['/', '\\']) || s.name == "." || s.name == ".." {
            self.push(
                "simulation.name",
                format!(
                    "`{}` cannot name the output folder; expected a name without `/` or `\\`",
                    s.name
                ),
            );
        }
        self.duration_positive("simulation.duration", s.duration);
        if s.duration.get() >= crate::engine::INT_MAX {
            self.push(
                "simulation.duration",
                format!(
                    "duration = {} s does not fit BOINC's times, 32-bit ints of seconds; expected less than {} s (68 years)",
                    s.duration.get(),
                    crate::engine::INT_MAX
                ),
            );
        }
        let mut seen: BTreeMap<Daemon, usize> = BTreeMap::new();
        for (i, d) in s.tie_order.iter().enumerate() {
            if let Some(first) = seen.insert(*d, i) {
                self.push(
                    format!("simulation.tie_order.{i}"),
                    format!(
                        "`{}` appears twice in tie_order (also entry {first}); expected each of the 8 daemons exactly once",
                        daemon_name(*d)
                    ),
                );
            }
        }
        let missing: Vec<&str> = Daemon::ALL
            .iter()
            .filter(|d| !seen.contains_key(d))
            .map(|d| daemon_name(*d))
            .collect();
        if !missing.is_empty() {
            let all: Vec<&str> = Daemon::ALL.iter().map(|d| daemon_name(*d)).collect();
            self.push(
                "simulation.tie_order",
                format!(
                    "tie_order is missing {}; expected a permutation of all 8: {}",
                    missing.join(", "),
                    all.join(", ")
                ),
            );
        }
    }

    fn projects(&mut self) {
        if self.file.project.is_empty() {
            self.push(
                "project",
                "the scenario defines no project; expected at least one `[project.NAME]` table",
            );
        }
        for (name, p) in &self.file.project {
            let prefix = format!("project.{name}");
            if !is_identifier(name) {
                self.push(
                    prefix.clone(),
                    format!(
                        "project name `{name}` is not valid; expected letters, digits, `_` or `-`"
                    ),
                );
            }
            self.project(&prefix, p);
        }
    }

    fn project(&mut self, prefix: &str, p: &ProjectConfig) {
        for (k, o) in p.outage.iter().enumerate() {
            self.duration_non_negative(&format!("{prefix}.outage.{k}.start"), o.start);
            self.duration_positive(&format!("{prefix}.outage.{k}.duration"), o.duration);
            if let Some(d) = o.maintenance_delay {
                let path = format!("{prefix}.outage.{k}.maintenance_delay");
                self.duration_non_negative(&path, d);
                if o.kind != crate::server::config::OutageKind::Down {
                    self.push(
                        path,
                        "maintenance_delay is the reply of a down scheduler; expected \
                         kind = \"down\" (an unreachable server sends no reply)",
                    );
                }
            }
        }
        self.apps(prefix, p);

        let c = &p.config;
        let pc = format!("{prefix}.config");
        for (key, d) in [
            ("report_grace_period", c.report_grace_period),
            ("delete_delay", c.delete_delay),
            ("min_sendwork_interval", c.min_sendwork_interval),
            ("reliable_max_avg_turnaround", c.reliable_max_avg_turnaround),
            ("next_rpc_delay", c.next_rpc_delay),
            ("maintenance_delay", c.maintenance_delay),
        ] {
            self.duration_non_negative(&format!("{pc}.{key}"), d);
        }
        self.min_int(
            &format!("{pc}.daily_result_quota"),
            c.daily_result_quota.into(),
            0,
        );
        self.min_int(
            &format!("{pc}.max_wus_to_send"),
            c.max_wus_to_send.into(),
            0,
        );
        self.min_int(&format!("{pc}.max_ncpus"), c.max_ncpus.into(), 1);
        self.min_int(
            &format!("{pc}.max_wus_in_progress"),
            c.max_wus_in_progress.into(),
            0,
        );
        self.min_int(
            &format!("{pc}.shmem_work_items"),
            c.shmem_work_items.into(),
            1,
        );
        self.probability(
            &format!("{pc}.reliable_reduced_delay_bound"),
            c.reliable_reduced_delay_bound,
        );

        self.min_int(&format!("{pc}.gpu_multiplier"), c.gpu_multiplier.into(), 0);

        let d = &p.daemons;
        let pd = format!("{prefix}.daemons");
        for (key, v) in [
            ("transitioner", d.transitioner),
            ("validator", d.validator),
            ("assimilator", d.assimilator),
            ("file_deleter", d.file_deleter),
            ("db_purge", d.db_purge),
            ("feeder", d.feeder),
            ("work_generator", d.work_generator),
        ] {
            self.duration_non_negative(&format!("{pd}.{key}"), v);
        }

        self.probability(
            &format!("{prefix}.file_deleter.failure_prob"),
            p.file_deleter.failure_prob,
        );
        let a = &p.assimilator;
        let pa = format!("{prefix}.assimilator");
        self.probability(&format!("{pa}.defer_prob"), a.defer_prob);
        self.probability(&format!("{pa}.error_prob"), a.error_prob);
        if a.defer_prob + a.error_prob > 1.0 {
            self.push(
                format!("{pa}.error_prob"),
                format!(
                    "defer_prob + error_prob = {} exceeds 1; expected the two \
                     probabilities of one handler call to sum to at most 1",
                    a.defer_prob + a.error_prob
                ),
            );
        }
        self.duration_non_negative(&format!("{prefix}.db_purge.min_age"), p.db_purge.min_age);

        let pin = &p.pin;
        let pp = format!("{prefix}.pin");
        for (key, x) in [
            ("trust", pin.trust),
            ("day_offset", pin.day_offset),
            ("file_delete", pin.file_delete),
        ] {
            if let Some(x) = x {
                self.unit_draw(&format!("{pp}.{key}"), x);
            }
        }
        if let Some(s) = pin.slot_offset
            && s >= c.shmem_work_items
            && c.shmem_work_items > 0
        {
            self.push(
                format!("{pp}.slot_offset"),
                format!(
                    "slot {s} is outside the feeder cache; expected a slot < config.shmem_work_items ({})",
                    c.shmem_work_items
                ),
            );
        }
    }

    /// The project's apps (spec backend §1.4), each with the sections of its own
    /// daemons: its workunit template, work generator and validator. A one-app
    /// project may give them at project level (`[project.NAME.workunit]`) or in its
    /// app; with several apps each app gives its own, and a project-level one would
    /// be ambiguous (which app's? all, key by key or whole?), so it is refused.
    fn apps(&mut self, prefix: &str, p: &ProjectConfig) {
        let several = p.app.len() > 1;
        let pa = |k: usize| {
            if several {
                format!("{prefix}.app.{k}")
            } else {
                format!("{prefix}.app")
            }
        };
        // Each section: given at project level, and in the (first) app.
        let first = &p.app[0];
        for (section, at_project, in_app) in [
            ("workunit", p.workunit.is_some(), first.workunit.is_some()),
            (
                "work_generator",
                p.work_generator.is_some(),
                first.work_generator.is_some(),
            ),
            (
                "validator",
                p.validator.is_some(),
                first.validator.is_some(),
            ),
        ] {
            if !at_project {
                continue;
            }
            if several {
                self.push(
                    format!("{prefix}.{section}"),
                    format!(
                        "a project with several apps has no project-level {section}; expected \
                         a [{prefix}.app.{section}] table in each [[{prefix}.app]]"
                    ),
                );
            } else if in_app {
                self.push(
                    format!("{}.{section}", pa(0)),
                    format!(
                        "{section} is given both here and as [{prefix}.{section}]; expected one \
                         of the two"
                    ),
                );
            }
        }
        for (k, s) in p.apps().enumerate() {
            let pa = pa(k);
            let a = s.app;
            if several && !is_identifier(&a.name) {
                self.push(
                    format!("{pa}.name"),
                    format!(
                        "app name `{}` is not valid; expected letters, digits, `_` or `-`",
                        a.name
                    ),
                );
            }
            if let Some(j) = p.app[..k].iter().position(|o| o.name == a.name) {
                self.push(
                    format!("{pa}.name"),
                    format!(
                        "app {k} has the name of app {j} (`{}`); expected a distinct name for \
                         each app",
                        a.name
                    ),
                );
            }
            let section = |name: &str, own: bool| {
                if own {
                    format!("{pa}.{name}")
                } else {
                    format!("{prefix}.{name}")
                }
            };
            self.workunit(&section("workunit", a.workunit.is_some()), s.workunit);
            self.min_int(
                &format!("{pa}.target_nresults"),
                a.target_nresults.into(),
                0,
            );
            if !(0..=2).contains(&a.homogeneous_redundancy) {
                self.push(
                    format!("{pa}.homogeneous_redundancy"),
                    format!(
                        "{} is not a homogeneous redundancy type; expected 0 (off), 1 (fine) or 2 (coarse)",
                        a.homogeneous_redundancy
                    ),
                );
            }
            self.non_negative(&format!("{pa}.min_avg_pfc"), a.min_avg_pfc);
            self.probability(
                &format!("{pa}.wrong_output_collision_frac"),
                a.wrong_output_collision_frac,
            );
            self.app_versions(&pa, &a.version);
            self.multi_threaded_for_seed(prefix, &pa, &a.version);
            self.work_generator(
                &section("work_generator", a.work_generator.is_some()),
                s.work_generator,
            );
            let pv = section("validator", a.validator.is_some());
            let v = s.validator;
            // A fuzzy comparison with tolerance 0 is allowed: it equals bitwise.
            self.non_negative(&format!("{pv}.tolerance"), v.tolerance);
            self.non_negative(&format!("{pv}.max_granted_credit"), v.max_granted_credit);
            self.non_negative(&format!("{pv}.max_claimed_credit"), v.max_claimed_credit);
        }
    }

    /// A multi-threaded version needs a client that schedules CPUs, not jobs: the
    /// seed_debt client runs one job per CPU (spec client §1), so a group with it
    /// attached to this project is refused, as a seed group with GPUs is.
    fn multi_threaded_for_seed(&mut self, prefix: &str, pa: &str, versions: &[AppVersionConfig]) {
        let name = prefix.strip_prefix("project.").unwrap_or(prefix);
        let seed_group = self.file.host_group.iter().find(|g| {
            g.policy.unwrap_or(self.file.client.policy) == Policy::SeedDebt
                && self.attaches(g, name)
        });
        let Some(g) = seed_group else {
            return;
        };
        if let Some(k) = versions.iter().position(|v| v.avg_ncpus > 1.0) {
            let group = g.name.clone();
            self.push(
                format!("{pa}.version.{k}.avg_ncpus"),
                format!(
                    "a multi-threaded version, but host group `{group}` attaches to this \
                     project with the seed_debt client, which runs one-CPU jobs only (spec \
                     client §1); expected avg_ncpus <= 1, or policy = \"modern_rec\""
                ),
            );
        }
    }

    /// A work generator's mode and times (spec backend §2.1 step 4).
    fn work_generator(&mut self, pg: &str, g: &WorkGenConfig) {
        self.duration_non_negative(&format!("{pg}.start"), g.start);
        match g.mode {
            WorkGenMode::Rate if g.interval.get() <= 0 => self.push(
                format!("{pg}.interval"),
                format!(
                    "mode = \"rate\" needs interval > 0, got {} s; expected a duration such as \"1h\"",
                    g.interval.get()
                ),
            ),
            WorkGenMode::Batch if g.count == 0 => self.push(
                format!("{pg}.count"),
                "mode = \"batch\" needs count > 0; expected the number of workunits to create",
            ),
            _ => self.duration_non_negative(&format!("{pg}.interval"), g.interval),
        }
    }

    /// An app's versions (spec backend §1.4): known platforms, positive usage and
    /// speed, one version per (platform, plan class) as BOINC's APP_VERSION table.
    fn app_versions(&mut self, pa: &str, versions: &[AppVersionConfig]) {
        use crate::server::resource::PLATFORMS;
        for (k, v) in versions.iter().enumerate() {
            let pv = format!("{pa}.version.{k}");
            if !v.platform.is_empty() && !PLATFORMS.contains(&v.platform.as_str()) {
                self.push(
                    format!("{pv}.platform"),
                    format!(
                        "unknown platform `{}`; expected \"\" (every host's own) or one of: {}",
                        v.platform,
                        PLATFORMS.join(", ")
                    ),
                );
            }
            self.positive(&format!("{pv}.avg_ncpus"), v.avg_ncpus);
            self.positive(&format!("{pv}.flops_scale"), v.flops_scale);
            self.positive(
                &format!("{pv}.flops_estimate_error"),
                v.flops_estimate_error,
            );
            if let Some(c) = &v.coproc {
                self.positive(&format!("{pv}.coproc.count"), c.count);
            }
            if let Some(j) = versions[..k]
                .iter()
                .position(|o| o.platform == v.platform && o.plan_class == v.plan_class)
            {
                self.push(
                    format!("{pv}.plan_class"),
                    format!(
                        "version {k} has the platform and plan class of version {j} (\"{}\"); \
                         expected one version per platform and plan class",
                        v.plan_class
                    ),
                );
            }
        }
    }

    /// A host group's GPUs: positive counts and speeds, one entry per type, and a
    /// client policy that can run GPU jobs.
    fn coprocs(&mut self, prefix: &str, g: &HostGroup) {
        for (k, c) in g.coproc.iter().enumerate() {
            let pc = format!("{prefix}.coproc.{k}");
            self.min_int(&format!("{pc}.count"), c.count.into(), 1);
            if let Some(m) = c.peak_flops.problem() {
                self.push(format!("{pc}.peak_flops"), m);
            } else if c.peak_flops.is_fixed() && c.peak_flops.mean() <= 0.0 {
                self.push(
                    format!("{pc}.peak_flops"),
                    format!("peak_flops = {}; expected FLOPS > 0", c.peak_flops.mean()),
                );
            }
            if g.coproc[..k].iter().any(|o| o.kind == c.kind) {
                self.push(
                    format!("{pc}.type"),
                    "this GPU type is listed twice; expected one entry per type, with its count",
                );
            }
        }
        self.probability(&format!("{prefix}.gpu_active_frac"), g.gpu_active_frac);
        let policy = g.policy.unwrap_or(self.file.client.policy);
        if !g.coproc.is_empty() && policy == Policy::SeedDebt {
            self.push(
                format!("{prefix}.coproc"),
                "the seed_debt client runs CPU jobs only (spec client §1); expected no \
                 coproc in this group, or policy = \"modern_rec\"",
            );
        }
    }

    /// The template must pass `create_work`'s checks (spec backend §2.1 step 2), plus
    /// the convention `1 <= min_quorum <= target_nresults <= max_total_results`.
    fn workunit(&mut self, pw: &str, w: &WuTemplate) {
        let at = |k: &str| format!("{pw}.{k}");
        if w.min_quorum < 1 {
            self.push(
                at("min_quorum"),
                format!(
                    "min_quorum = {} is too small; expected an integer >= 1",
                    w.min_quorum
                ),
            );
        } else if w.min_quorum > w.target_nresults {
            self.push(
                at("min_quorum"),
                format!(
                    "min_quorum = {} is greater than target_nresults = {}; expected min_quorum <= target_nresults",
                    w.min_quorum, w.target_nresults
                ),
            );
        }
        for (key, v) in [
            ("target_nresults", w.target_nresults),
            ("max_error_results", w.max_error_results),
            ("max_total_results", w.max_total_results),
            ("max_success_results", w.max_success_results),
        ] {
            if v <= 0 {
                self.push(
                    at(key),
                    format!("{key} = {v}; expected an integer >= 1 (create_work rejects 0, spec backend §2.1)"),
                );
            }
        }
        if w.max_total_results < w.target_nresults {
            self.push(
                at("max_total_results"),
                format!(
                    "max_total_results = {} is less than target_nresults = {}; expected max_total_results >= target_nresults",
                    w.max_total_results, w.target_nresults
                ),
            );
        }
        if w.max_success_results > w.max_total_results {
            self.push(
                at("max_success_results"),
                format!(
                    "max_success_results = {} is greater than max_total_results = {}; expected max_success_results <= max_total_results (spec backend §2.1)",
                    w.max_success_results, w.max_total_results
                ),
            );
        }
        if w.max_error_results > w.max_total_results {
            self.push(
                at("max_error_results"),
                format!(
                    "max_error_results = {} is greater than max_total_results = {}; expected max_error_results <= max_total_results (spec backend §2.1)",
                    w.max_error_results, w.max_total_results
                ),
            );
        }
        if w.target_nresults > w.max_success_results {
            self.push(
                at("target_nresults"),
                format!(
                    "target_nresults = {} is greater than max_success_results = {}; expected target_nresults <= max_success_results (spec backend §2.1)",
                    w.target_nresults, w.max_success_results
                ),
            );
        }
        if w.delay_bound.get() <= 0 {
            self.push(
                at("delay_bound"),
                format!(
                    "delay_bound = {} s is not positive; expected a duration > 0, e.g. \"7d\"",
                    w.delay_bound.get()
                ),
            );
        }
        for (key, x) in [
            ("rsc_fpops_est", w.rsc_fpops_est),
            ("rsc_fpops_bound", w.rsc_fpops_bound),
            ("rsc_disk_bound", w.rsc_disk_bound),
        ] {
            if self.finite(&at(key), x) && x <= 0.0 {
                self.push(
                    at(key),
                    format!("{key} = {x}; expected a number > 0 (create_work rejects 0, spec backend §2.1)"),
                );
            }
        }
        self.non_negative(&at("rsc_memory_bound"), w.rsc_memory_bound);
        if let Some(m) = w.true_size.problem() {
            self.push(at("true_size"), m);
        } else if !w.true_size.always_positive() {
            self.push(
                at("true_size"),
                "true_size can draw a factor <= 0; expected a number > 0 or a distribution of positive values (lognormal, exponential, weibull, pareto, or lower > 0)",
            );
        }
    }

    /// `[host_group.start]`: fractions in (0, 1], projects the group attaches to,
    /// each policy's own credit average, non-negative amounts and times.
    fn client_start(&mut self, prefix: &str, g: &HostGroup, s: &super::start::ClientStart) {
        for (key, x) in [
            ("on_frac", s.on_frac),
            ("active_frac", s.active_frac),
            ("connected_frac", s.connected_frac),
        ] {
            let path = format!("{prefix}.{key}");
            if let Some(x) = x
                && self.finite(&path, x)
                && !(x > 0.0 && x <= 1.0)
            {
                self.push(path, format!("{key} = {x}; expected a fraction in (0, 1]"));
            }
        }
        for (k, j) in s.job.iter().enumerate() {
            let path = format!("{prefix}.job.{k}");
            // The group's project when it has no shares (its only project if unnamed).
            let only = (self.file.project.len() == 1)
                .then(|| self.file.project.keys().next())
                .flatten()
                .map_or("", |n| n.as_str());
            let group_project = if g.project.is_empty() {
                only
            } else {
                g.project.as_str()
            };
            let name = if j.project.is_empty() {
                group_project
            } else {
                j.project.as_str()
            };
            if g.shares.is_empty() && name != group_project {
                self.push(
                    format!("{path}.project"),
                    format!("project `{name}` is not one this host group attaches to; expected `{group_project}`"),
                );
            } else if !g.shares.is_empty() && !g.shares.contains_key(name) {
                self.push(
                    format!("{path}.project"),
                    format!("project `{name}` is not one this host group attaches to; expected one of its `shares`"),
                );
            }
            self.app_ref(&format!("{path}.app"), name, &j.app);
            self.duration_non_negative(&format!("{path}.report_deadline"), j.report_deadline);
            let fp = format!("{path}.fraction_done");
            if self.finite(&fp, j.fraction_done) && !(0.0..1.0).contains(&j.fraction_done) {
                self.push(
                    fp,
                    format!(
                        "fraction_done = {}; expected a fraction in [0, 1)",
                        j.fraction_done
                    ),
                );
            }
        }
        let policy = g.policy.unwrap_or(self.file.client.policy);
        for (name, p) in &s.project {
            let path = format!("{prefix}.project.{name}");
            if !self.attaches(g, name) {
                self.push(
                    path.clone(),
                    format!("project `{name}` is not one this host group attaches to; expected a project of its `project` or `shares`"),
                );
            }
            for (key, x, wanted) in [
                ("rec", p.rec, Policy::ModernRec),
                ("exp_avg_cpu", p.exp_avg_cpu, Policy::SeedDebt),
            ] {
                let Some(x) = x else { continue };
                let kp = format!("{path}.{key}");
                if policy != wanted {
                    self.push(
                        kp,
                        format!(
                            "{key} is kept only by the {} policy; this group runs {}",
                            policy_name(wanted),
                            policy_name(policy)
                        ),
                    );
                } else {
                    self.non_negative(&kp, x);
                }
            }
            for (key, d) in [
                ("min_rpc_time", p.min_rpc_time),
                ("cpu_backoff_time", p.cpu_backoff_time),
                ("cpu_backoff_interval", p.cpu_backoff_interval),
            ] {
                if let Some(d) = d {
                    self.duration_non_negative(&format!("{path}.{key}"), d);
                }
            }
            if policy == Policy::SeedDebt {
                for (key, given) in [
                    ("cpu_backoff_time", p.cpu_backoff_time.is_some()),
                    ("cpu_backoff_interval", p.cpu_backoff_interval.is_some()),
                ] {
                    if given {
                        self.push(
                            format!("{path}.{key}"),
                            format!("{key} is kept only by the modern_rec policy; this group runs seed_debt"),
                        );
                    }
                }
            }
        }
    }

    fn host_attrs(&mut self, prefix: &str, a: HostAttrs) {
        self.min_int(&format!("{prefix}.p_ncpus"), a.p_ncpus.into(), 1);
        self.positive(&format!("{prefix}.p_fpops"), a.p_fpops);
        self.positive(&format!("{prefix}.p_iops"), a.p_iops);
        self.non_negative(&format!("{prefix}.m_nbytes"), a.m_nbytes);
        self.non_negative(&format!("{prefix}.d_free"), a.d_free);
        for (key, x) in [("on_frac", a.on_frac), ("active_frac", a.active_frac)] {
            let path = format!("{prefix}.{key}");
            if self.finite(&path, x) && !(x > 0.0 && x <= 1.0) {
                self.push(path, format!("{key} = {x}; expected a fraction in (0, 1]"));
            }
        }
    }

    fn host_group(&mut self, i: usize, g: &HostGroup) {
        let prefix = format!("host_group.{i}");
        if let Some(start) = &g.start {
            self.client_start(&format!("{prefix}.start"), g, start);
        }
        if g.count < 1 {
            self.push(
                format!("{prefix}.count"),
                "count = 0; expected at least 1 host",
            );
        }
        if g.shares.is_empty() {
            self.project_ref(&format!("{prefix}.project"), Some(g.project.as_str()));
        } else {
            for (name, share) in &g.shares {
                let path = format!("{prefix}.shares.{name}");
                if !self.file.project.contains_key(name) {
                    let known: Vec<&str> = self.file.project.keys().map(|k| k.as_str()).collect();
                    self.push(
                        path,
                        format!(
                            "unknown project `{name}`; expected one of: {}",
                            known.join(", ")
                        ),
                    );
                } else if self.finite(&path, *share) && *share < 0.0 {
                    self.push(path, format!("share = {share}; expected a share >= 0"));
                }
            }
            if g.shares.values().all(|s| *s <= 0.0) {
                self.push(
                    format!("{prefix}.shares"),
                    "every share is 0; expected at least one project with a positive share",
                );
            }
        }
        self.probability(&format!("{prefix}.detach_prob"), g.detach_prob);
        // A fixed probability must be one; a distribution's draws are clamped.
        for (key, d) in [
            ("error_prob", &g.error_prob),
            ("wrong_result_prob", &g.wrong_result_prob),
        ] {
            if d.is_fixed() && d.problem().is_none() {
                self.probability(&format!("{prefix}.{key}"), d.mean());
            }
        }
        let path = format!("{prefix}.connected_frac");
        if self.finite(&path, g.connected_frac)
            && !(g.connected_frac > 0.0 && g.connected_frac <= 1.0)
        {
            self.push(
                path,
                format!(
                    "connected_frac = {}; expected a fraction in (0, 1]",
                    g.connected_frac
                ),
            );
        }
        for (key, d) in [
            ("on_lambda", g.on_lambda),
            ("active_lambda", g.active_lambda),
            ("connected_lambda", g.connected_lambda),
        ] {
            self.duration_positive(&format!("{prefix}.{key}"), d);
        }
        let dists = [
            ("p_fpops", Some(&g.p_fpops)),
            ("error_prob", Some(&g.error_prob)),
            ("wrong_result_prob", Some(&g.wrong_result_prob)),
            ("arrival", Some(&g.arrival)),
            ("lifetime", g.lifetime.as_ref()),
            ("on_period", g.on_period.as_ref()),
            ("off_period", g.off_period.as_ref()),
        ];
        for (key, d) in dists {
            if let Some(m) = d.and_then(|d| d.problem()) {
                self.push(format!("{prefix}.{key}"), m);
            }
        }
        if g.p_fpops.is_fixed() && g.p_fpops.mean() <= 0.0 {
            self.push(
                format!("{prefix}.p_fpops"),
                format!("p_fpops = {}; expected FLOPS > 0", g.p_fpops.mean()),
            );
        }
        match (&g.on_period, &g.off_period) {
            (Some(_), None) => self.push(
                format!("{prefix}.off_period"),
                "on_period is given without off_period; expected both or neither",
            ),
            (None, Some(_)) => self.push(
                format!("{prefix}.on_period"),
                "off_period is given without on_period; expected both or neither",
            ),
            _ => {}
        }
        if g.trace.is_some() && (g.on_period.is_some() || g.on_frac < 1.0) {
            self.push(
                format!("{prefix}.trace"),
                "a trace replaces on_frac and on_period/off_period; expected only one availability model",
            );
        }
        if g.on_period.is_some() && g.on_frac < 1.0 {
            self.push(
                format!("{prefix}.on_frac"),
                "on_frac < 1 together with on_period/off_period; expected only one on/off model",
            );
        }
        self.coprocs(&prefix, g);
        self.host_attrs(&prefix, host_attrs!(g, 1e9));
    }

    fn hosts(&mut self) {
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, h) in self.file.host.iter().enumerate() {
            let prefix = format!("host.{i}");
            if h.name.is_empty() {
                self.push(
                    format!("{prefix}.name"),
                    "empty host name; expected a name such as \"H1\"",
                );
            } else if let Some(j) = first.insert(h.name.as_str(), i) {
                self.push(
                    format!("{prefix}.name"),
                    format!(
                        "duplicate host name `{}` (also host.{j}); expected unique names",
                        h.name
                    ),
                );
            }
            self.project_ref(&format!("{prefix}.project"), Some(h.project.as_str()));
            if let Some(hav) = &h.hav {
                for (key, v) in [
                    ("consecutive_valid", hav.consecutive_valid),
                    ("max_jobs_per_day", hav.max_jobs_per_day),
                    ("n_jobs_today", hav.n_jobs_today),
                ] {
                    self.min_int(&format!("{prefix}.hav.{key}"), v.into(), 0);
                }
            }
            if let Some(x) = h.day_offset {
                self.unit_draw(&format!("{prefix}.day_offset"), x);
            }
            self.host_attrs(&prefix, host_attrs!(h, h.p_fpops));
        }
    }

    fn event(&mut self, i: usize, e: &ScriptEvent) {
        let prefix = format!("event.{i}");
        let at = |k: &str| format!("{prefix}.{k}");
        self.duration_non_negative(&at("at"), e.at);
        self.before_end(&at("at"), "event", e.at);

        let actions: Vec<&str> = [
            ("daemon", e.daemon.is_some()),
            ("host", e.host.is_some()),
            ("create_workunits", e.create_workunits.is_some()),
            ("cancel", !e.cancel.is_empty()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(k, _)| *k)
        .collect();
        if actions.len() != 1 {
            let what = if actions.is_empty() {
                "event has no action".to_string()
            } else {
                format!(
                    "event has {} actions (`{}`)",
                    actions.len(),
                    actions.join("`, `")
                )
            };
            self.push(
                prefix.clone(),
                format!(
                    "{what}; expected exactly one of `daemon`, `host`, `create_workunits`, `cancel`"
                ),
            );
        }

        let project = self.project_ref(&at("project"), e.project.as_deref());

        if e.daemon == Some(Daemon::Scheduler) {
            self.push(
                at("daemon"),
                "the scheduler runs only on host RPCs; expected another daemon, or `host = \"NAME\"` for an RPC",
            );
        }
        if e.create_workunits == Some(0) {
            self.push(
                at("create_workunits"),
                "create_workunits = 0 creates nothing; expected at least 1",
            );
        }
        if let Some(app) = &e.app {
            if e.create_workunits.is_none() {
                self.push(
                    at("app"),
                    "`app` names the app of created workunits; expected it only with `create_workunits`",
                );
            } else if let Some(p) = &project {
                self.app_ref(&at("app"), p, app);
            }
        }
        for (j, name) in e.cancel.iter().enumerate() {
            self.wu_name(&format!("{prefix}.cancel.{j}"), name);
        }
        if !e.assimilate.is_empty() && e.daemon != Some(Daemon::Assimilator) {
            self.push(
                at("assimilate"),
                "`assimilate` gives the assimilation handler's answers; expected it only with `daemon = \"assimilator\"`",
            );
        }
        for name in e.assimilate.keys() {
            self.wu_name(&format!("{prefix}.assimilate.{name}"), name);
        }

        match &e.host {
            Some(h) => self.host_ref(&at("host"), "event", h, project.as_deref()),
            None => {
                // RPC details without an RPC: almost certainly a forgotten `host`.
                for (key, given) in [
                    ("request", e.request.is_some()),
                    ("work_req_seconds", e.work_req_seconds.is_some()),
                    ("report", !e.report.is_empty()),
                    ("lost", !e.lost.is_empty()),
                    ("detach", e.detach),
                    ("send_other_results", !e.send_other_results),
                ] {
                    if given {
                        self.push(
                            at(key),
                            format!("`{key}` describes a scheduler RPC; expected it only with `host = \"NAME\"`"),
                        );
                    }
                }
            }
        }
        if e.request.is_some() && e.work_req_seconds.is_some() {
            self.push(
                at("work_req_seconds"),
                "both `request` and `work_req_seconds` are given; expected at most one of them",
            );
        }
        if let Some(x) = e.work_req_seconds {
            self.non_negative(&at("work_req_seconds"), x);
        }
        for (j, r) in e.report.iter().enumerate() {
            self.report(&format!("{prefix}.report.{j}"), r);
        }
        for (j, name) in e.lost.iter().enumerate() {
            self.result_name(&format!("{prefix}.lost.{j}"), name);
        }
    }

    /// `[[expect]] reply`: result names, and one deadline per job.
    fn reply_expect(&mut self, prefix: &str, r: &super::schema::ReplyExpect) {
        for (key, names) in [
            ("jobs", &r.jobs),
            ("acks", &r.acks),
            ("aborts", &r.aborts),
            ("aborts_if_not_started", &r.aborts_if_not_started),
        ] {
            for (j, name) in names.iter().flatten().enumerate() {
                self.result_name(&format!("{prefix}.{key}.{j}"), name);
            }
        }
        if let (Some(d), Some(j)) = (&r.deadlines, &r.jobs)
            && d.len() != j.len()
        {
            self.push(
                format!("{prefix}.deadlines"),
                format!(
                    "{} deadlines for {} jobs; expected one deadline per job of `jobs`",
                    d.len(),
                    j.len()
                ),
            );
        }
        if let Some(x) = r.request_delay {
            self.non_negative(&format!("{prefix}.request_delay"), x);
        }
    }

    fn report(&mut self, prefix: &str, r: &Report) {
        self.result_name(&format!("{prefix}.result"), &r.result);
        self.finite(&format!("{prefix}.value"), r.value);
        if let Some(x) = r.cpu_time {
            self.non_negative(&format!("{prefix}.cpu_time"), x);
        }
        if let Some(x) = r.elapsed_time {
            self.non_negative(&format!("{prefix}.elapsed_time"), x);
        }
        match (r.output, r.transient_until) {
            (OutputRead::Transient, None) => self.push(
                format!("{prefix}.transient_until"),
                "output = \"transient\" needs transient_until; expected the time the output becomes readable",
            ),
            (OutputRead::Transient, Some(t)) => {
                self.duration_non_negative(&format!("{prefix}.transient_until"), t)
            }
            (_, Some(_)) => self.push(
                format!("{prefix}.transient_until"),
                "transient_until is only meaningful with output = \"transient\"; expected no transient_until",
            ),
            (_, None) => {}
        }
    }

    /// `group` or `group#k`: a host group and the index of one of its hosts.
    fn client_ref(&mut self, path: &str, c: &str) {
        let (name, k) = match c.split_once('#') {
            Some((n, k)) => (n, k.parse::<u32>().ok()),
            None => (c, Some(0)),
        };
        let Some(g) = self.file.host_group.iter().find(|g| g.name == name) else {
            let known: Vec<&str> = self
                .file
                .host_group
                .iter()
                .map(|g| g.name.as_str())
                .collect();
            self.push(
                path,
                format!(
                    "unknown host group `{name}`; expected one of: {}",
                    if known.is_empty() {
                        "(no host groups)".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
            return;
        };
        match k {
            Some(k) if k < g.count => {}
            _ => self.push(
                path,
                format!(
                    "`{c}` is not a host of group `{name}`; expected `{name}` or `{name}#k` with k in 0..{}",
                    g.count
                ),
            ),
        }
    }

    fn expect(&mut self, i: usize, x: &Expect) {
        let prefix = format!("expect.{i}");
        let at = |k: &str| format!("{prefix}.{k}");
        if let Some(t) = x.at {
            self.duration_non_negative(&at("at"), t);
            self.before_end(&at("at"), "expect", t);
        }
        let project = self.project_ref(&at("project"), x.project.as_deref());

        let kinds: Vec<&str> = [
            ("workunit", x.workunit.is_some()),
            ("result", x.result.is_some()),
            ("host", x.host.is_some()),
            ("client", x.client.is_some()),
        ]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(k, _)| *k)
        .collect();
        if kinds.len() != 1 {
            let what = if kinds.is_empty() {
                "expect names no row".to_string()
            } else {
                format!(
                    "expect names {} rows (`{}`)",
                    kinds.len(),
                    kinds.join("`, `")
                )
            };
            self.push(
                prefix.clone(),
                format!("{what}; expected exactly one of `workunit`, `result`, `host`, `client`"),
            );
        }
        if let Some(w) = &x.workunit {
            self.wu_name(&at("workunit"), w);
        }
        if let Some(r) = &x.result {
            self.result_name(&at("result"), r);
        }
        if let Some(h) = &x.host {
            self.host_ref(&at("host"), "expect", h, project.as_deref());
        }
        if let Some(c) = &x.client {
            self.client_ref(&at("client"), c);
        }
        if let Some(t) = x.tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            self.push(
                at("tolerance"),
                format!("tolerance = {t}; expected a number >= 0"),
            );
        }

        // Fields of the other kinds of row. Only checked when the row kind is clear.
        if kinds.len() == 1 {
            let given = given_fields(x);
            let kind = kinds[0];
            for (list, owner, owners) in [
                (RESULT_ONLY, "result", &["result"][..]),
                (WORKUNIT_ONLY, "workunit", &["workunit"][..]),
                (
                    RESULT_OR_WORKUNIT,
                    "result and workunit",
                    &["result", "workunit"][..],
                ),
                (HOST_ONLY, "host", &["host"][..]),
                (CLIENT_ONLY, "client", &["client"][..]),
            ] {
                if owners.contains(&kind) {
                    continue;
                }
                for f in given.iter().filter(|f| list.contains(f)) {
                    self.push(
                        at(f),
                        format!(
                            "`{f}` is a {owner} field but this expect names a {kind}; expected only {kind} fields (or `exists`)"
                        ),
                    );
                }
            }
        }

        if let Some(s) = &x.state {
            self.state_shorthand(&at("state"), s);
        }
        if let Some(r) = &x.reply {
            self.reply_expect(&at("reply"), r);
        }
        let ranges: [RangeCheck; 7] = [
            (
                "server_state",
                x.server_state,
                "1 (INACTIVE), 2 (UNSENT), 4 (IN_PROGRESS) or 5 (OVER)",
                |v| ServerState::from_code(v).is_some(),
            ),
            ("outcome", x.outcome, "0..=7", |v| {
                Outcome::from_code(v).is_some()
            }),
            ("validate_state", x.validate_state, "0..=5", |v| {
                ValidateState::from_code(v).is_some()
            }),
            ("file_delete_state", x.file_delete_state, "0..=3", |v| {
                FileDeleteState::from_code(v).is_some()
            }),
            ("assimilate_state", x.assimilate_state, "0..=2", |v| {
                AssimilateState::from_code(v).is_some()
            }),
            ("need_validate", x.need_validate, "0 or 1", |v| {
                (0..=1).contains(&v)
            }),
            ("error_mask", x.error_mask, "a bit mask in 0..=63", |v| {
                (0..=63).contains(&v)
            }),
        ];
        for (key, v, expected, ok) in ranges {
            if let Some(v) = v
                && !ok(v)
            {
                self.push(
                    at(key),
                    format!("{key} = {v} is not a BOINC value; expected {expected}"),
                );
            }
        }
        for (key, v) in [
            ("nresults", x.nresults),
            ("target_nresults", x.target_nresults),
            ("min_quorum", x.min_quorum),
            ("hr_class", x.hr_class),
            ("consecutive_valid", x.consecutive_valid),
            ("max_jobs_per_day", x.max_jobs_per_day),
            ("n_jobs_today", x.n_jobs_today),
        ] {
            if let Some(v) = v {
                self.min_int(&at(key), v, 0);
            }
        }
        if let Some(c) = &x.canonical
            && c != "none"
            && parse_result_name(c).is_none()
        {
            self.push(
                at("canonical"),
                format!("`{c}` is not a result name; expected `wu<id>_<suffix>` or \"none\""),
            );
        }
        // `scenario::expect` shows a named host by name and any other by its id.
        if let Some(h) = &x.hostid
            && !all_digits(h)
            && self.find_host(h).is_none()
        {
            let list = self.host_list();
            self.push(
                at("hostid"),
                format!("hostid names unknown host `{h}`; expected a [[host]] name or a numeric host id (0 = not sent); known hosts: {list}"),
            );
        }
    }

    /// `"server_state/outcome/validate_state/file_delete_state"`, e.g. `"5/1/1/2"`.
    fn state_shorthand(&mut self, path: &str, s: &str) {
        const FORM: &str =
            "expected \"server_state/outcome/validate_state/file_delete_state\", e.g. \"5/1/1/2\"";
        // `scenario::expect` compares the text itself, so no spaces or signs.
        let nums: Option<Vec<i64>> = s
            .split('/')
            .map(|p| all_digits(p).then(|| p.parse::<i64>().ok()).flatten())
            .collect();
        let Some(n) = nums.filter(|n| n.len() == 4) else {
            self.push(path, format!("`{s}` is not a result state; {FORM}"));
            return;
        };
        let checks: [(&str, bool, &str); 4] = [
            (
                "server_state",
                ServerState::from_code(n[0]).is_some(),
                "1, 2, 4 or 5",
            ),
            ("outcome", Outcome::from_code(n[1]).is_some(), "0..=7"),
            (
                "validate_state",
                ValidateState::from_code(n[2]).is_some(),
                "0..=5",
            ),
            (
                "file_delete_state",
                FileDeleteState::from_code(n[3]).is_some(),
                "0..=3",
            ),
        ];
        for (i, (key, ok, range)) in checks.iter().enumerate() {
            if !ok {
                self.push(
                    path,
                    format!(
                        "`{s}`: {key} {} is not a BOINC value; expected {range} ({FORM})",
                        n[i]
                    ),
                );
            }
        }
    }
}

/// Names of the kind-specific fields an expect gives.
pub(crate) fn given_fields(x: &Expect) -> Vec<&'static str> {
    let opts: [(&'static str, bool); 51] = [
        ("state", x.state.is_some()),
        ("server_state", x.server_state.is_some()),
        ("outcome", x.outcome.is_some()),
        ("validate_state", x.validate_state.is_some()),
        ("file_delete_state", x.file_delete_state.is_some()),
        ("hostid", x.hostid.is_some()),
        ("sent_time", x.sent_time.is_some()),
        ("received_time", x.received_time.is_some()),
        ("report_deadline", x.report_deadline.is_some()),
        ("priority", x.priority.is_some()),
        ("granted_credit", x.granted_credit.is_some()),
        ("need_validate", x.need_validate.is_some()),
        ("canonical", x.canonical.is_some()),
        ("transition_time", x.transition_time.is_some()),
        ("error_mask", x.error_mask.is_some()),
        ("assimilate_state", x.assimilate_state.is_some()),
        ("target_nresults", x.target_nresults.is_some()),
        ("min_quorum", x.min_quorum.is_some()),
        ("hr_class", x.hr_class.is_some()),
        ("nresults", x.nresults.is_some()),
        ("consecutive_valid", x.consecutive_valid.is_some()),
        ("max_jobs_per_day", x.max_jobs_per_day.is_some()),
        ("n_jobs_today", x.n_jobs_today.is_some()),
        ("total_credit", x.total_credit.is_some()),
        ("nrpc_failures", x.nrpc_failures.is_some()),
        ("master_fetch_failures", x.master_fetch_failures.is_some()),
        (
            "master_url_fetch_pending",
            x.master_url_fetch_pending.is_some(),
        ),
        ("min_rpc_time", x.min_rpc_time.is_some()),
        ("rec", x.rec.is_some()),
        ("exp_avg_cpu", x.exp_avg_cpu.is_some()),
        ("resource_debt", x.resource_debt.is_some()),
        ("debt_order", x.debt_order.is_some()),
        ("cpu_time", x.cpu_time.is_some()),
        ("jobs", x.jobs.is_some()),
        ("jobs_received", x.jobs_received.is_some()),
        ("rpcs", x.rpcs.is_some()),
        ("cpu_backoff_interval", x.cpu_backoff_interval.is_some()),
        ("running", x.running.is_some()),
        ("assimilate_count", x.assimilate_count.is_some()),
        ("reply", x.reply.is_some()),
        ("on_frac", x.on_frac.is_some()),
        ("active_frac", x.active_frac.is_some()),
        ("connected_frac", x.connected_frac.is_some()),
        ("sched_priority", x.sched_priority.is_some()),
        ("req_secs", x.req_secs.is_some()),
        ("req_instances", x.req_instances.is_some()),
        ("estimated_delay", x.estimated_delay.is_some()),
        ("cpu_backoff_time", x.cpu_backoff_time.is_some()),
        ("idle_time", x.idle_time.is_some()),
        ("idle_time_sumsq", x.idle_time_sumsq.is_some()),
        ("deadlines_missed", x.deadlines_missed.is_some()),
    ];
    opts.iter().filter(|(_, g)| *g).map(|(k, _)| *k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_project() -> ScenarioFile {
        let mut f = ScenarioFile::default();
        f.project.insert("main".into(), ProjectConfig::default());
        f
    }

    #[test]
    fn defaults_with_one_project_are_valid() {
        assert_eq!(validate(&one_project()), vec![]);
    }

    #[test]
    fn no_project_is_a_problem() {
        let p = validate(&ScenarioFile::default());
        assert_eq!(p[0].path, "project");
    }

    #[test]
    fn names_parse() {
        assert_eq!(parse_wu_name("wu12"), Some(12));
        assert_eq!(parse_wu_name("wu"), None);
        assert_eq!(parse_wu_name("wu+1"), None);
        assert_eq!(parse_wu_name("w12"), None);
        assert!(is_identifier("main-2_b"));
        assert!(!is_identifier("a.b"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn every_expect_field_has_one_owner() {
        let mut all: Vec<&str> = RESULT_ONLY
            .iter()
            .chain(WORKUNIT_ONLY)
            .chain(RESULT_OR_WORKUNIT)
            .chain(HOST_ONLY)
            .chain(CLIENT_ONLY)
            .copied()
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert_eq!(n, 51);
    }
}
