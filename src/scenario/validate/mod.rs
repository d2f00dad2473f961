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
//!
//! One submodule per section of the file, each adding the checks of its section to
//! the one `Checker`: `simulation`, `project` (the server side: config, apps,
//! versions, templates, work generator, validator), `host_group`, `host` (named
//! hosts), `event`, `expect` and `output`. What several sections use
//! (value checks, cross-references, host attributes) stays here.

use super::schema::*;
use crate::server::db::parse_result_name;

mod event;
mod expect;
mod host;
mod host_group;
mod output;
mod project;
mod simulation;

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
pub(crate) fn validate(file: &ScenarioFile) -> Vec<Problem> {
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
    c.output();
    c.out
}

/// Parses a workunit name `wu<id>`, the form [`crate::server::db::result_name`]
/// builds results from. (db.rs only parses result names.)
pub(crate) fn parse_wu_name(name: &str) -> Option<u32> {
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
pub(crate) fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The scenario-file spelling of a daemon (serde's `snake_case`).
pub(crate) fn daemon_name(d: Daemon) -> &'static str {
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
struct HostAttrs<'a> {
    p_ncpus: &'a crate::scenario::schema::Count,
    p_fpops: f64,
    p_iops: f64,
    m_nbytes: f64,
    d_free: f64,
    on_frac: f64,
    active_frac: &'a crate::base::dist::Dist,
    os_name: &'a crate::scenario::schema::OsName,
    /// A host group's hosts may draw `p_ncpus`, `active_frac` and `os_name` per host;
    /// a named host has one of each.
    per_host: bool,
}

macro_rules! host_attrs {
    ($h:expr, $fpops:expr, $per_host:expr) => {
        HostAttrs {
            p_ncpus: &$h.p_ncpus,
            p_fpops: $fpops,
            p_iops: $h.p_iops,
            m_nbytes: $h.m_nbytes,
            d_free: $h.d_free,
            on_frac: $h.on_frac,
            active_frac: &$h.active_frac,
            os_name: &$h.os_name,
            per_host: $per_host,
        }
    };
}
/// For the sections of groups and named hosts.
use host_attrs;

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
        // "" names the first app, as at run time (`server::ProjectConfig::app_id`).
        if !app.is_empty() && !p.app.iter().any(|a| a.name == app) {
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

    // ----- host attributes ------------------------------------------------------

    /// The attributes a `[[host_group]]` and a `[[host]]` both give.
    fn host_attrs(&mut self, prefix: &str, a: HostAttrs) {
        let single =
            "a named host has one value; expected a plain value, not a distribution or a mix";
        match a.p_ncpus.fixed() {
            Some(n) => self.min_int(&format!("{prefix}.p_ncpus"), n, 1),
            None if !a.per_host => self.push(format!("{prefix}.p_ncpus"), single),
            None => {
                if let crate::scenario::schema::Count::Dist(d) = a.p_ncpus {
                    self.dist(&format!("{prefix}.p_ncpus"), d);
                }
            }
        }
        self.positive(&format!("{prefix}.p_fpops"), a.p_fpops);
        self.positive(&format!("{prefix}.p_iops"), a.p_iops);
        self.non_negative(&format!("{prefix}.m_nbytes"), a.m_nbytes);
        self.non_negative(&format!("{prefix}.d_free"), a.d_free);
        self.fraction(&format!("{prefix}.on_frac"), a.on_frac);
        let path = format!("{prefix}.active_frac");
        if a.active_frac.is_fixed() {
            self.fraction(&path, a.active_frac.mean());
        } else if !a.per_host {
            self.push(path, single);
        } else {
            self.dist(&path, a.active_frac);
        }
        match a.os_name {
            crate::scenario::schema::OsName::One(_) => {}
            crate::scenario::schema::OsName::Mix(_) if !a.per_host => {
                self.push(format!("{prefix}.os_name"), single);
            }
            crate::scenario::schema::OsName::Mix(m) => {
                self.weights(
                    &format!("{prefix}.os_name"),
                    m.iter().map(|(k, w)| (k.as_str(), *w)),
                );
            }
        }
    }

    /// A fraction in (0, 1].
    fn fraction(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && !(x > 0.0 && x <= 1.0) {
            let key = Self::key(path).to_string();
            self.push(path, format!("{key} = {x}; expected a fraction in (0, 1]"));
        }
    }

    /// A distribution's parameters.
    fn dist(&mut self, path: &str, d: &crate::base::dist::Dist) {
        if let Some(m) = d.problem() {
            self.push(path, m);
        }
    }

    /// Weights of a weighted choice, keyed by their entries: each finite and >= 0,
    /// and at least one > 0.
    fn weights<'k>(&mut self, path: &str, items: impl Iterator<Item = (&'k str, f64)>) {
        let mut any = false;
        for (k, w) in items {
            let p = format!("{path}.{k}");
            if self.finite(&p, w) && w < 0.0 {
                self.push(p, format!("weight = {w}; expected a weight >= 0"));
            }
            any |= w > 0.0;
        }
        if !any {
            self.push(
                path,
                "no weight is positive; expected at least one weight > 0",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ProjectConfig;

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
}
