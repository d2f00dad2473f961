//! Reading a scenario file: text → `--set` overrides → serde → [`validate`].
//!
//! Every failure becomes one [`ScenarioError`] whose message names the file, the
//! `line:column` (1-based), the dotted key path and what was expected, because a
//! scenario author should be able to fix the file from the message alone.
//!
//! `--set KEY=VALUE` overrides are applied with `toml_edit` to the document *before*
//! deserialising, so an override goes through exactly the same type checks and
//! validation as the file itself. Applying them re-renders the text, which can move
//! lines; error positions are therefore mapped back to the original file through the
//! key path, and an error at a key that a `--set` wrote is reported as coming from
//! that `--set`.
//!
//! This module is the pipeline: read the bytes, parse, apply the overrides,
//! deserialise, validate, read traces and check capacity, then locate warnings and
//! expectations. Its parts live beside it: `diagnostics` turns each failure into a
//! located message, `spans` maps byte offsets to key paths and back in a parsed
//! document, and `overrides` applies `--set` (and so a sweep point's parameters,
//! which a sweep passes as `--set`s; docs/sweep.md).

mod diagnostics;
mod imports;
mod overrides;
mod population;
mod provenance;
mod spans;

pub use diagnostics::{Diagnostic, ScenarioError};

use super::plan::Plan;
use super::schema::ScenarioFile;
use super::validate::{Problem, validate};
use diagnostics::{Ctx, first_line, line_col};
use overrides::apply_set;
use spans::walk;
use std::path::Path;

/// A scenario read, overridden and checked, ready to build a world from.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub file: ScenarioFile,
    /// The file resolved for the world: names as indices, durations in seconds
    /// ([`Plan`]).
    pub plan: Plan,
    /// The scenario text after `--set` overrides (equal to the file's text when there
    /// are none). Written to the output so that a run can be reproduced; `--seed` is
    /// not written into it (it is in `file.simulation.seed`).
    pub source_text: String,
    /// Where the text came from: the path as given, or the origin of [`load_str`].
    pub origin: String,
    /// FNV-1a 64 of `source_text`, as 16 hex digits: a stable content id (not a
    /// cryptographic hash; no extra dependency for it).
    pub hash: String,
    /// Things that are allowed but probably not meant (a bare `delay_bound = 3`),
    /// located like errors, one line each, for the command line to print.
    pub warnings: Vec<String>,
}

/// Reads, overrides, deserialises and validates the scenario at `path`.
///
/// `sets` are `--set KEY=VALUE` arguments, applied in order; `seed` (from `--seed`)
/// replaces `simulation.seed` after them.
pub fn load(path: &Path, sets: &[String], seed: Option<u64>) -> Result<Loaded, ScenarioError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|cause| ScenarioError::Read {
        path: shown.clone(),
        cause,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        // The prefix up to the bad byte is valid UTF-8, so columns count characters.
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..good]);
        let (line, column) = line_col(&prefix, good);
        ScenarioError::NotUtf8 {
            path: shown.clone(),
            line,
            column,
        }
    })?;
    load_str(&text, &shown, sets, seed)
}

/// Like [`load`] for text already in memory; `origin` names it in messages and its
/// file stem is the default `simulation.name`.
pub fn load_str(
    text: &str,
    origin: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let mut ctx = Ctx::of_file(origin, text, None);
    // Syntax first, with toml_edit: its document keeps the spans used to turn key
    // paths back into positions.
    let orig_doc = toml_edit::Document::parse(text.to_owned()).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.at_offset(span.start, None, first_line(e.message()))
    })?;
    ctx.orig_doc = Some(orig_doc);

    // `--set`s first, then populations: a key the scenario or a `--set` gives wins
    // over the population's (docs/population.md).
    let mut doc = ctx
        .orig_doc
        .clone()
        .map(toml_edit::Document::into_mut)
        .unwrap_or_default();
    for arg in sets {
        let path = apply_set(&mut doc, arg).map_err(|message| ScenarioError::BadSet {
            origin: origin.to_owned(),
            arg: arg.clone(),
            message,
        })?;
        ctx.sets.push((path, arg.clone()));
    }
    ctx.populations = population::inline(&mut doc, origin, &ctx)?;
    let source_text = if sets.is_empty() && ctx.populations.is_empty() {
        text.to_owned()
    } else {
        doc.to_string()
    };

    let mut file: ScenarioFile =
        toml::from_str(&source_text).map_err(|e| ctx.de_error(&source_text, &e))?;
    if file.simulation.name.is_empty() {
        file.simulation.name = Path::new(origin)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    if let Some(s) = seed {
        file.simulation.seed = s;
    }
    // The audit trail is on by default only where it is small and read: scripted
    // scenarios. An unscripted run's trail is large, so it is written only on request
    // (`[output] transitions`, `run --audit`; docs/scenario.md, "`[output]`").
    if file.output.transitions.is_none() {
        file.output.transitions = Some(file.is_scripted());
    }

    let mut problems = validate(&file);
    if problems.is_empty() {
        problems = load_traces(&mut file, origin);
    }
    if problems.is_empty() {
        problems = imports::load_imports(&mut file, origin);
        if problems.is_empty() && file.host_group.iter().any(|g| g.client_state.is_some()) {
            // What a client state filled in is checked like the file's own keys.
            problems = validate(&file);
        }
    }
    if problems.is_empty() {
        // Before anything is allocated for it.
        problems.extend(super::capacity::check(
            &file,
            super::capacity::memory_limit(),
        ));
    }
    if !problems.is_empty() {
        return Err(invalid(&ctx, &problems));
    }
    for p in file.project.values_mut() {
        p.fill_one_app();
    }

    let warnings = toml_edit::Document::parse(source_text.clone())
        .map(|doc| {
            crate::base::units::short_bare_durations(doc.as_item())
                .into_iter()
                .map(|(path, v)| {
                    let p = Problem {
                        path: path.join("."),
                        message: format!(
                            "the bare number {v} is read as {v} seconds; write \"{v}d\", \"{v}h\" or \"{v}m\" if you meant days, hours or minutes, or \"{v}s\" to keep seconds without this warning"
                        ),
                    };
                    ctx.problem(&p).headline()
                })
                .collect()
        })
        .unwrap_or_default();

    locate_expectations(&mut file, &ctx);
    // The world is built from the resolved plan, never from names.
    let plan = match Plan::resolve(&file) {
        Ok(plan) => plan,
        Err(problems) => return Err(invalid(&ctx, &problems)),
    };
    let hash = format!(
        "{:016x}",
        crate::base::hash::fnv1a64(source_text.as_bytes())
    );
    Ok(Loaded {
        file,
        plan,
        source_text,
        origin: origin.to_owned(),
        hash,
        warnings,
    })
}

/// The error of a scenario with `problems` (not empty): the first located in full,
/// the others by their headlines.
fn invalid(ctx: &Ctx<'_>, problems: &[Problem]) -> ScenarioError {
    let mut d = ctx.problem(&problems[0]);
    d.more = problems[1..]
        .iter()
        .map(|p| ctx.problem(p).headline())
        .collect();
    ScenarioError::Invalid(Box::new(d))
}

impl Loaded {
    /// The same scenario with master seed `seed` (a sweep's replication).
    pub(crate) fn with_seed(mut self, seed: u64) -> Self {
        self.file.simulation.seed = seed;
        self.plan.seed = seed;
        self
    }
}

/// Gives every `[[expect]]` entry its `file:line:column` (the entry's header in the
/// original file; an entry added by `--set` names only the file).
fn locate_expectations(file: &mut ScenarioFile, ctx: &Ctx<'_>) {
    for (i, ex) in file.expect.iter_mut().enumerate() {
        let segs = ["expect".to_owned(), i.to_string()];
        let at = ctx
            .orig_doc
            .as_ref()
            .and_then(|d| match walk(d.as_item(), &segs) {
                (Some(s), true) => s.best(),
                _ => None,
            })
            .map(|r| line_col(ctx.original, r.start));
        ex.source.0 = Some(match at {
            Some((l, c)) => format!("{}:{l}:{c}", ctx.origin),
            None => ctx.origin.to_owned(),
        });
    }
}

/// A TOML file other than a scenario (a sweep file), read with the same
/// diagnostics: syntax and type errors give the file, line, column, key path and a
/// snippet. Returns the value and the document with spans, for [`problem_at`].
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<(T, toml_edit::Document<String>), ScenarioError> {
    let mut ctx = Ctx::of_file(origin, text, None);
    let doc = toml_edit::Document::parse(text.to_owned()).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.at_offset(span.start, None, first_line(e.message()))
    })?;
    ctx.orig_doc = Some(doc.clone());
    let value: T = toml::from_str(text).map_err(|e| ctx.de_error(text, &e))?;
    Ok((value, doc))
}

/// A semantic problem at the dotted key path `path` of a file read by
/// [`parse_toml`], located in its text like a scenario's validation problems.
pub(crate) fn problem_at(
    text: &str,
    origin: &str,
    doc: &toml_edit::Document<String>,
    path: &str,
    message: String,
) -> ScenarioError {
    let ctx = Ctx::of_file(origin, text, Some(doc.clone()));
    ScenarioError::Invalid(Box::new(ctx.problem(&Problem {
        path: path.to_owned(),
        message,
    })))
}

/// A semantic problem at byte `offset` of a file read by [`parse_toml`], shown as
/// the key path `key`: for a key [`problem_at`] cannot find by a dotted path, such
/// as a quoted key holding dots (`set = { "project.main.workunit.min_quorum" = 1 }`
/// of a sweep's `[[case]]`).
pub(crate) fn problem_at_offset(
    text: &str,
    origin: &str,
    offset: usize,
    key: String,
    message: String,
) -> ScenarioError {
    let (line, column) = line_col(text, offset);
    ScenarioError::Invalid(Box::new(Diagnostic {
        origin: origin.to_owned(),
        line_col: Some((line, column)),
        key: Some(key),
        set_arg: None,
        message,
        snippet: Some(diagnostics::snippet(text, line, column)),
        note: None,
        more: Vec::new(),
    }))
}

/// Reads every host group's availability trace, relative to the scenario file's
/// folder, and keeps it in the group (`trace_data`). A file that cannot be read or
/// parsed is a problem of the `trace` key; the message names the trace file's line.
fn load_traces(file: &mut ScenarioFile, origin: &str) -> Vec<Problem> {
    let base = Path::new(origin).parent().unwrap_or(Path::new("."));
    let mut problems = Vec::new();
    for (i, g) in file.host_group.iter_mut().enumerate() {
        let Some(rel) = &g.trace else { continue };
        let path = base.join(rel);
        // A trace's intervals take at most about twice its text (a row of text is at
        // least 8 bytes, an interval 16): a file that could not fit is refused before
        // it is read.
        let limit = super::capacity::memory_limit();
        if let Ok(m) = std::fs::metadata(&path)
            && m.len().saturating_mul(2) > limit
        {
            problems.push(Problem {
                path: format!("host_group.{i}.trace"),
                message: format!(
                    "the trace file {} is {}: its intervals need about {}, more than the {} this run may use; expected a shorter trace",
                    path.display(),
                    super::capacity::format_bytes(m.len()),
                    super::capacity::format_bytes(m.len().saturating_mul(2)),
                    super::capacity::format_bytes(limit)
                ),
            });
            continue;
        }
        match crate::client::availability::Trace::read(&path) {
            Ok(t) => g.trace_data = super::schema::TraceHandle(Some(std::sync::Arc::new(t))),
            Err(e) => problems.push(Problem {
                path: format!("host_group.{i}.trace"),
                message: e.to_string(),
            }),
        }
    }
    problems
}
