//! The sweep file (`docs/sweep.md`): a base scenario, the parameters to vary, the
//! design, the replications, the metrics and an optional objective.
//!
//! It is read with the scenario loader's diagnostics ([`parse_toml`]), and every
//! point of the design is loaded as a scenario before anything runs, so a bad sweep
//! file or a value the scenario refuses fails at once with the file, line, column and
//! key path.

use crate::base::units::{DurationError, parse_duration};
use crate::scenario::load::{ScenarioError, load, parse_toml, problem_at, problem_at_offset};
use crate::stats::batches::BATCH_COLUMNS;
use crate::stats::headline::{COLUMNS, CONNECTION_COLUMNS, PROJECT_ONLY, TRANSFER_COLUMNS};
use crate::stats::recovery::COLUMNS as RECOVERY_COLUMNS;
use crate::stats::scheduler_load::COLUMNS as SCHEDULER_COLUMNS;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub sweep: SweepSection,
    #[serde(default)]
    pub parameter: Vec<Parameter>,
    /// `[[case]]`: named configurations, crossed with the parameters' design.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub case: Vec<Case>,
    pub objective: Option<Objective>,
}

/// `[[case]]`: one named configuration, a set of keys given together (three
/// replication policies that do not form a grid of values: quorum 1, quorum 2,
/// adaptive replication). The cases are a categorical dimension of the design,
/// varying slowest: every case is run at every point of the parameters' design
/// (`docs/sweep.md`, "Cases").
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's name: the value of the `case` column and of the charts' legends.
    pub name: String,
    /// Key path (as for `--set`) = TOML value, applied after `[sweep.set]` and
    /// before the point's parameters. Empty: the base scenario as it is.
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
}

/// How the points are chosen.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Every combination of the parameters' values (the first parameter varies
    /// slowest).
    #[default]
    Grid,
    /// `points` points, each parameter drawn uniformly and independently.
    Random,
    /// `points` points of a Latin hypercube: each parameter's range is cut into
    /// `points` equal strata and each stratum is used exactly once.
    Lhs,
}

/// `[sweep]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// Names the default output folder (`output/sweeps/<name>/`); default: the file
    /// stem.
    #[serde(default)]
    pub name: String,
    /// The base scenario, relative to the sweep file's folder.
    pub scenario: String,
    /// Master seed of the sweep: each run's seed derives from it, the point's index
    /// and the replication.
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "one")]
    pub replications: u32,
    #[serde(default)]
    pub design: Design,
    /// Number of points of a random or Latin-hypercube design.
    pub points: Option<u32>,
    /// `summary.csv` columns to aggregate.
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    /// The project whose `summary.csv` row is used (default: the first in scenario
    /// order).
    pub project: Option<String>,
    /// An app of that project, by name: the metrics are then its
    /// `summary_apps.csv` row (the app's own throughput and deadlines) instead of
    /// the project's.
    pub app: Option<String>,
    /// Overrides applied to every run before the point's own (`--set` syntax:
    /// key path = TOML value).
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
}

fn one() -> u32 {
    1
}

fn default_metrics() -> Vec<String> {
    [
        "workunits_valid_per_day",
        "deadline_fail_frac",
        "wrong_canonical_frac",
        "turnaround_p90_s",
        "wasted_cpu_frac",
        "credit_per_host_gini",
    ]
    .map(String::from)
    .to_vec()
}

/// `[[parameter]]`: one scenario key to vary.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    /// Key path as for `--set` (`project.main.workunit.delay_bound`).
    pub key: String,
    /// Further keys set to the same value (`target_nresults` with `min_quorum`).
    #[serde(default)]
    pub also: Vec<String>,
    /// The values (grid: all of them; random and LHS: drawn among them).
    pub values: Option<Vec<toml::Value>>,
    /// A range instead of a list.
    pub range: Option<Range>,
}

/// `range = { from, to, step }`: numbers, or durations (`"1d"`, `3600`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: toml::Value,
    pub to: toml::Value,
    /// Grid: the spacing (required). Random and LHS: values are rounded to
    /// multiples of `step` from `from` when given, else continuous (integers for
    /// integer or duration bounds).
    pub step: Option<toml::Value>,
}

/// `[objective]`: which point is best.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Objective {
    pub maximize: Option<String>,
    pub minimize: Option<String>,
    /// Constraints on point means, all of which must hold, e.g.
    /// `["deadline_miss_frac < 0.05", "error_frac < 0.001"]`; an entry may also join
    /// several with `and`.
    #[serde(default)]
    pub subject_to: Vec<String>,
}

/// A comparison in a constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// A parsed `subject_to` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Constraint {
    pub metric: String,
    pub op: Op,
    pub bound: f64,
}

/// Why a `subject_to` entry is not a constraint; each message quotes the entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConstraintError {
    /// What follows the operator is not a number.
    #[error("`{entry}`: expected a number after `{}`, found `{found}`", .op.symbol())]
    BadBound {
        entry: String,
        op: Op,
        found: String,
    },
    /// No comparison operator.
    #[error("`{0}`: expected `METRIC OP NUMBER` with OP one of <, <=, >, >=")]
    NoOperator(String),
    /// An `and` with nothing on one side.
    #[error("`{0}`: expected constraints `METRIC OP NUMBER` on both sides of each `and`")]
    EmptySide(String),
}

/// Parses `metric OP number`.
pub(crate) fn parse_constraint(s: &str) -> Result<Constraint, ConstraintError> {
    for op in [Op::Le, Op::Ge, Op::Lt, Op::Gt] {
        if let Some((m, b)) = s.split_once(op.symbol()) {
            let bound = b
                .trim()
                .parse::<f64>()
                .map_err(|_| ConstraintError::BadBound {
                    entry: s.to_string(),
                    op,
                    found: b.trim().to_string(),
                })?;
            return Ok(Constraint {
                metric: m.trim().to_string(),
                op,
                bound,
            });
        }
    }
    Err(ConstraintError::NoOperator(s.to_string()))
}

/// Parses one `subject_to` entry: a constraint, or several joined by `and` (or
/// `&&`), all of which must hold: `"deadline_miss_frac < 0.05 and error_frac <
/// 0.001"` is the same as the two entries.
pub(crate) fn parse_constraints(s: &str) -> Result<Vec<Constraint>, ConstraintError> {
    let parts: Vec<&str> = s
        .split("&&")
        .flat_map(|p| p.split(" and "))
        .map(str::trim)
        .collect();
    if parts.len() > 1 && parts.iter().any(|p| p.is_empty()) {
        return Err(ConstraintError::EmptySide(s.to_string()));
    }
    parts.into_iter().map(parse_constraint).collect()
}

/// What the best point maximises or minimises, under which constraints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    pub metric: String,
    pub maximize: bool,
    pub constraints: Vec<Constraint>,
}

/// A value as text for a CSV cell (strings unquoted) and as the TOML literal of a
/// `--set`.
pub(crate) fn cell(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A sweep ready to run: the file resolved against its folder and checked.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub file: SweepFile,
    /// The sweep file as given, and its text (for the hash).
    pub path: PathBuf,
    pub text: String,
    /// The base scenario's path (resolved).
    pub scenario: PathBuf,
    /// `[sweep.set]` as `KEY=VALUE` arguments, in key order.
    pub base_sets: Vec<String>,
    pub goal: Option<Goal>,
    /// Where each parameter value is written (line, column), by key path
    /// (`parameter.K.values.J`, or `parameter.K.range`), to point at the value when a
    /// point's scenario is refused.
    pub positions: BTreeMap<String, (usize, usize)>,
}

/// Reads and checks a sweep file. Every point's scenario is then loaded and
/// validated by [`super::plan`], before any run.
pub fn read(path: &Path) -> Result<Sweep, ScenarioError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|cause| ScenarioError::Read {
        path: shown.clone(),
        cause,
    })?;
    let (mut file, doc): (SweepFile, _) = parse_toml(&text, &shown)?;
    let bad = |key: &str, message: String| problem_at(&text, &shown, &doc, key, message);
    if file.sweep.name.is_empty() {
        file.sweep.name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
    }
    let s = &file.sweep;
    if s.replications == 0 {
        return Err(bad(
            "sweep.replications",
            "expected at least 1 replication".into(),
        ));
    }
    match (s.design, s.points) {
        (Design::Grid, Some(_)) => {
            return Err(bad(
                "sweep.points",
                "`points` is for design = \"random\" or \"lhs\"; a grid has every combination"
                    .into(),
            ));
        }
        (Design::Random | Design::Lhs, None | Some(0)) => {
            return Err(bad(
                "sweep.design",
                "a random or Latin-hypercube design needs `points = N` (N ≥ 1)".into(),
            ));
        }
        _ => {}
    }
    if s.metrics.is_empty() {
        return Err(bad("sweep.metrics", "expected at least one metric".into()));
    }
    for (i, m) in s.metrics.iter().enumerate() {
        let transfer = TRANSFER_COLUMNS.contains(&m.as_str())
            || CONNECTION_COLUMNS.contains(&m.as_str())
            || SCHEDULER_COLUMNS.contains(&m.as_str())
            || RECOVERY_COLUMNS.contains(&m.as_str())
            || BATCH_COLUMNS.contains(&m.as_str());
        if !COLUMNS.contains(&m.as_str()) && !transfer {
            return Err(bad(
                &format!("sweep.metrics.{i}"),
                format!(
                    "unknown metric `{m}`: expected a summary.csv column ({}, or in a run with files {}, or with a web server {}, or in a run with batches {})",
                    COLUMNS.join(", "),
                    [&TRANSFER_COLUMNS[..], &CONNECTION_COLUMNS[..]]
                        .concat()
                        .join(", "),
                    [&SCHEDULER_COLUMNS[..], &RECOVERY_COLUMNS[..]]
                        .concat()
                        .join(", "),
                    BATCH_COLUMNS.join(", ")
                ),
            ));
        }
        if s.app.is_some() && (transfer || PROJECT_ONLY.contains(&m.as_str())) {
            return Err(bad(
                &format!("sweep.metrics.{i}"),
                format!(
                    "`{m}` exists only per project, not per app (docs/outputs.md, \
                     summary_apps.csv); expected a metric of summary_apps.csv, or no \
                     `sweep.app`"
                ),
            ));
        }
    }
    if file.parameter.is_empty() && file.case.is_empty() {
        return Err(bad(
            "sweep",
            "expected at least one [[parameter]] (or [[case]]) to vary".into(),
        ));
    }
    if file.parameter.is_empty() && s.design != Design::Grid {
        return Err(bad(
            "sweep.design",
            "a random or Latin-hypercube design draws the values of the [[parameter]] \
             tables, and there are none; expected design = \"grid\" (one point per case)"
                .into(),
        ));
    }
    for (i, p) in file.parameter.iter().enumerate() {
        let at = |k: &str| format!("parameter.{i}.{k}");
        if p.key.trim().is_empty() {
            return Err(bad(&at("key"), "expected a scenario key path".into()));
        }
        match (&p.values, &p.range) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(bad(
                    &format!("parameter.{i}"),
                    "expected exactly one of `values = [...]` and `range = { from, to, step }`"
                        .into(),
                ));
            }
            (Some(v), None) if v.is_empty() => {
                return Err(bad(&at("values"), "expected at least one value".into()));
            }
            (None, Some(r)) => {
                let msg = |m: String| bad(&at("range"), m);
                let num = |v: &toml::Value| number(v).map_err(|e| msg(e.to_string()));
                let from = num(&r.from)?;
                let to = num(&r.to)?;
                if to < from {
                    return Err(msg(format!("`to` ({to}) is below `from` ({from})")));
                }
                let step = r.step.as_ref().map(num).transpose()?;
                if step.is_some_and(|st| st <= 0.0) {
                    return Err(msg("`step` must be positive".into()));
                }
                if step.is_none() && s.design == Design::Grid {
                    return Err(msg("a grid needs `step` to list the range's values".into()));
                }
            }
            _ => {}
        }
        for (j, q) in file.parameter[..i].iter().enumerate() {
            let keys = |p: &Parameter| {
                std::iter::once(p.key.clone())
                    .chain(p.also.clone())
                    .collect::<Vec<_>>()
            };
            if keys(p).iter().any(|k| keys(q).contains(k)) {
                return Err(bad(
                    &at("key"),
                    format!("a key of this parameter is already varied by parameter {j}"),
                ));
            }
        }
    }
    check_cases(
        &file,
        &|i, key, m| case_set_error(&text, &shown, &doc, i, key, m),
        &bad,
    )?;
    for i in 0..file.case.len() {
        if let Some(key) = dotted_set_key(&doc, i) {
            return Err(case_set_error(
                &text,
                &shown,
                &doc,
                i,
                &key,
                format!(
                    "an unquoted dotted key: TOML reads it as nested tables and it would replace \
                     the whole `{key}` table; expected the key path in quotes, as in \
                     `set = {{ \"project.main.workunit.min_quorum\" = 1 }}`"
                ),
            ));
        }
    }
    let goal = match &file.objective {
        None => None,
        Some(o) => {
            let (metric, maximize) = match (&o.maximize, &o.minimize) {
                (Some(m), None) => (m.clone(), true),
                (None, Some(m)) => (m.clone(), false),
                _ => {
                    return Err(bad(
                        "objective",
                        "expected exactly one of `maximize` and `minimize`".into(),
                    ));
                }
            };
            let key = if maximize {
                "objective.maximize"
            } else {
                "objective.minimize"
            };
            if !s.metrics.contains(&metric) {
                return Err(bad(
                    key,
                    format!(
                        "`{metric}` is not one of the sweep's metrics; add it to `sweep.metrics`"
                    ),
                ));
            }
            let mut constraints = Vec::new();
            for (i, c) in o.subject_to.iter().enumerate() {
                let at = format!("objective.subject_to.{i}");
                for c in parse_constraints(c).map_err(|e| bad(&at, e.to_string()))? {
                    if !s.metrics.contains(&c.metric) {
                        return Err(bad(
                            &at,
                            format!(
                                "`{}` is not one of the sweep's metrics; add it to \
                                 `sweep.metrics`",
                                c.metric
                            ),
                        ));
                    }
                    constraints.push(c);
                }
            }
            Some(Goal {
                metric,
                maximize,
                constraints,
            })
        }
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let scenario = base.join(&file.sweep.scenario);
    if !scenario.is_file() {
        return Err(bad(
            "sweep.scenario",
            format!(
                "no scenario file at `{}` (the path is relative to the sweep file's folder)",
                scenario.display()
            ),
        ));
    }
    let base_sets: Vec<String> = file
        .sweep
        .set
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    // The project row the metrics come from must exist.
    let probe = load(&scenario, &base_sets, None)?;
    if let Some(p) = &file.sweep.project
        && !probe.file.project.contains_key(p)
    {
        return Err(bad(
            "sweep.project",
            format!(
                "the scenario has no project `{p}` (it has {})",
                probe
                    .file
                    .project
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // So must the app whose row it is.
    if let Some(app) = &file.sweep.app {
        let project = match &file.sweep.project {
            Some(p) => probe.file.project.get(p),
            None => probe.file.project.values().next(),
        };
        if let Some(project) = project
            && project.app.iter().all(|a| &a.name != app)
        {
            let names: Vec<String> = project
                .app
                .iter()
                .map(|a| format!("`{}`", a.name))
                .collect();
            return Err(bad(
                "sweep.app",
                format!(
                    "the project has no app `{app}`; expected one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut positions = BTreeMap::new();
    for (i, p) in file.parameter.iter().enumerate() {
        let keys: Vec<String> = match &p.values {
            Some(v) => (0..v.len())
                .map(|j| format!("parameter.{i}.values.{j}"))
                .collect(),
            None => vec![format!("parameter.{i}.range")],
        };
        for k in keys {
            if let Some(lc) = bad(&k, String::new()).line_col() {
                positions.insert(k, lc);
            }
        }
    }
    for (i, c) in file.case.iter().enumerate() {
        for key in c.set.keys() {
            if let Some(lc) = case_set_error(&text, &shown, &doc, i, key, String::new()).line_col()
            {
                positions.insert(case_set_path(i, key), lc);
            }
        }
    }
    Ok(Sweep {
        file,
        path: path.to_path_buf(),
        text,
        scenario,
        base_sets,
        goal,
        positions,
    })
}

/// Whether two key paths overlap: equal, or one is a table holding the other
/// (`project.main.workunit` holds `project.main.workunit.min_quorum`).
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

/// The key path of key `key` of case `i`'s `set`, as shown in messages: the key is
/// quoted, since it holds dots (`case.2.set."project.main.app.target_nresults"`).
pub(crate) fn case_set_path(i: usize, key: &str) -> String {
    format!("case.{i}.set.\"{key}\"")
}

/// A problem with key `key` of case `i`'s `set`, located at that key in the sweep
/// file (else at the `set` table).
fn case_set_error(
    text: &str,
    shown: &str,
    doc: &toml_edit::Document<String>,
    i: usize,
    key: &str,
    message: String,
) -> ScenarioError {
    let set = case_set_item(doc, i);
    let span = set.as_ref().and_then(|s| s.as_table_like()).and_then(|t| {
        let (k, _) = t.get_key_value(key)?;
        k.span()
    });
    match span {
        Some(r) => problem_at_offset(text, shown, r.start, case_set_path(i, key), message),
        None => {
            let mut e = problem_at(text, shown, doc, &format!("case.{i}.set"), message);
            if let ScenarioError::Invalid(d) = &mut e {
                d.key = Some(case_set_path(i, key));
            }
            e
        }
    }
}

/// The `set` table of case `i` as written (`[[case]]` tables or an inline array).
fn case_set_item(doc: &toml_edit::Document<String>, i: usize) -> Option<toml_edit::Item> {
    let set = |t: &dyn toml_edit::TableLike| t.get("set").cloned();
    match doc.get("case") {
        Some(toml_edit::Item::ArrayOfTables(a)) => a.get(i).and_then(|t| set(t)),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a
            .get(i)
            .and_then(|v| v.as_inline_table())
            .and_then(|t| set(t)),
        _ => None,
    }
}

/// The first key of case `i`'s `set` written as unquoted dotted keys
/// (`project.main.workunit.min_quorum = 1`): TOML reads it as nested tables, and
/// `--set project={ main = ... }` would replace the whole `project` table.
fn dotted_set_key(doc: &toml_edit::Document<String>, i: usize) -> Option<String> {
    let set = case_set_item(doc, i)?;
    let t = set.as_table_like()?;
    t.iter()
        .find(|(_, v)| v.as_table_like().is_some_and(|t| t.is_dotted()))
        .map(|(k, _)| k.to_string())
}

/// The `[[case]]` tables: each has a name of its own, and none sets a key that a
/// `[[parameter]]` varies (which of the two would hold at a point?).
fn check_cases(
    file: &SweepFile,
    set_error: &dyn Fn(usize, &str, String) -> ScenarioError,
    bad: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    for (i, c) in file.case.iter().enumerate() {
        let at = format!("case.{i}.name");
        if c.name.trim().is_empty() {
            return Err(bad(
                &at,
                "expected a case name (it is the case's value in the `case` column and the \
                 charts)"
                    .into(),
            ));
        }
        if let Some(j) = file.case[..i].iter().position(|o| o.name == c.name) {
            return Err(bad(
                &at,
                format!(
                    "case name `{}` is already used by case {j}; expected a distinct name per \
                     case",
                    c.name
                ),
            ));
        }
        for key in c.set.keys() {
            if key.trim().is_empty() {
                return Err(set_error(
                    i,
                    key,
                    "expected a scenario key path, as for --set".into(),
                ));
            }
            for (j, p) in file.parameter.iter().enumerate() {
                if let Some(k) = std::iter::once(&p.key)
                    .chain(&p.also)
                    .find(|k| overlaps(k, key))
                {
                    return Err(set_error(
                        i,
                        key,
                        format!(
                            "case `{}` sets `{key}`, which parameter {j} varies (`{k}`); \
                             expected each key to be set either by the cases or by a \
                             parameter, not both",
                            c.name
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Why a range bound or step is neither a number nor a duration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    /// A string that is not a duration.
    #[error("expected a number or a duration, found `{text}` ({cause})")]
    BadDuration { text: String, cause: DurationError },
    /// Another kind of value (a boolean, an array...), as TOML writes it.
    #[error("expected a number or a duration, found `{0}`")]
    NotANumber(String),
}

/// A number or a duration (`"3d"`) as a float (seconds for durations).
pub fn number(v: &toml::Value) -> Result<f64, NumberError> {
    match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        toml::Value::String(s) => {
            parse_duration(s)
                .map(|d| d as f64)
                .map_err(|cause| NumberError::BadDuration {
                    text: s.clone(),
                    cause,
                })
        }
        other => Err(NumberError::NotANumber(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_parse_with_every_operator() {
        assert_eq!(
            parse_constraint("deadline_miss_frac < 0.05").unwrap(),
            Constraint {
                metric: "deadline_miss_frac".into(),
                op: Op::Lt,
                bound: 0.05
            }
        );
        assert_eq!(parse_constraint("a>=2").unwrap().op, Op::Ge);
        assert_eq!(parse_constraint("a <= 2").unwrap().op, Op::Le);
        assert!(parse_constraint("a = 2").is_err());
        assert!(parse_constraint("a < x").is_err());
        assert!(Op::Le.holds(2.0, 2.0) && !Op::Lt.holds(2.0, 2.0));
    }

    #[test]
    fn constraints_combine_with_and() {
        let cs = parse_constraints("deadline_miss_frac < 0.05 and error_frac <= 0.001").unwrap();
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[1].metric, "error_frac");
        assert_eq!((cs[1].op, cs[1].bound), (Op::Le, 0.001));
        assert_eq!(parse_constraints("a > 1 && b < 2").unwrap().len(), 2);
        assert_eq!(parse_constraints("a < 1").unwrap().len(), 1);
        assert!(
            parse_constraints("a < 1 and ")
                .unwrap_err()
                .to_string()
                .contains("both sides")
        );
        assert!(parse_constraints("a < 1 and b").is_err());
        let msg = |s: &str| parse_constraint(s).unwrap_err().to_string();
        assert_eq!(
            msg("a <= x"),
            "`a <= x`: expected a number after `<=`, found `x`"
        );
        assert_eq!(
            msg("a = 2"),
            "`a = 2`: expected `METRIC OP NUMBER` with OP one of <, <=, >, >="
        );
    }

    #[test]
    fn keys_overlap_when_equal_or_one_holds_the_other() {
        assert!(overlaps(
            "project.main.workunit",
            "project.main.workunit.min_quorum"
        ));
        assert!(overlaps(" a.b ", "a.b"));
        assert!(overlaps("a.b.c", "a.b"));
        assert!(!overlaps("a.b", "a.bc"));
        assert!(!overlaps("a.b.min_quorum", "a.b.target_nresults"));
        assert_eq!(
            case_set_path(2, "project.main.app.target_nresults"),
            "case.2.set.\"project.main.app.target_nresults\""
        );
    }

    #[test]
    fn numbers_and_durations() {
        assert_eq!(number(&toml::Value::String("2d".into())), Ok(172_800.0));
        assert_eq!(number(&toml::Value::Integer(3)), Ok(3.0));
        assert!(number(&toml::Value::Boolean(true)).is_err());
        assert_eq!(
            number(&toml::Value::Boolean(true)).unwrap_err().to_string(),
            "expected a number or a duration, found `true`"
        );
        assert_eq!(
            number(&toml::Value::String("0.5s".into()))
                .unwrap_err()
                .to_string(),
            "expected a number or a duration, found `0.5s` (duration `0.5s` is not a whole number of seconds)"
        );
        assert_eq!(cell(&toml::Value::String("3d".into())), "3d");
        assert_eq!(cell(&toml::Value::Integer(3)), "3");
    }
}
