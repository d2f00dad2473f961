//! Host populations a host group takes in one line: `population = "volunteers"` (a
//! population shipped with boinc-sim) or `population = "my-hosts.toml"` (a file,
//! relative to the scenario's folder). docs/population.md describes the shipped one.
//!
//! A population file holds host-group keys (speeds, cores, availability, error rates,
//! preferences, other projects), never how many hosts there are or which projects
//! they attach to. Loading copies its keys into the group **before** the scenario is
//! deserialised, key by key: a key the group sets itself wins, and tables merge, so
//! `--set host_group.0.prefs.work_buf_min_days=2` turns one knob of a population and
//! keeps the rest. The merged text is the run's `scenario.toml`, so a run folder
//! stays self-contained and a population edited later changes the scenario hash.
//!
//! A mistake in a population is reported in the population file, at its line and
//! column, even when the scenario's validation finds it after the merge
//! (`Inlined::owns`).

use super::diagnostics::{Ctx, ScenarioError, first_line};
use super::spans::{locate, path_at};
use crate::scenario::validate::Problem;
use std::path::Path;
use toml_edit::{DocumentMut, InlineTable, Item, Table, TableLike, Value};

/// The populations shipped inside the binary, by name, with the file each was built
/// from (the same text is under `scenarios/populations/`).
const BUILT_IN: &[(&str, &str, &str)] = &[(
    "volunteers",
    "scenarios/populations/volunteers.toml",
    include_str!("../../../scenarios/populations/volunteers.toml"),
)];

/// Keys a population may not set: how many hosts, and where they attach, are the
/// scenario's.
const SCENARIO_ONLY: [&str; 5] = ["count", "project", "shares", "name", "population"];

/// The names of the shipped populations, for messages and docs.
pub(crate) fn built_in_names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(n, _, _)| *n).collect()
}

/// A population copied into host group `group`: where it came from and which keys
/// it gave, so that an error at one of them is reported in the population file.
pub(super) struct Inlined {
    group: usize,
    /// The population file as named in messages.
    origin: String,
    text: String,
    doc: toml_edit::Document<String>,
    /// Key paths, relative to the group, that the population wrote.
    wrote: Vec<Vec<String>>,
}

impl Inlined {
    /// The population's key path of scenario key path `segs`, if the population
    /// wrote it (or a table above it).
    fn owns<'a>(&self, segs: &'a [String]) -> Option<&'a [String]> {
        let rest = match segs {
            [h, i, rest @ ..] if h == "host_group" && *i == self.group.to_string() => rest,
            _ => return None,
        };
        self.wrote
            .iter()
            .any(|w| rest.starts_with(w))
            .then_some(rest)
    }

    /// Where key path `rest` of the population is, as a `(line, column)` and the
    /// context the diagnostic is written with.
    fn ctx(&self) -> Ctx<'_> {
        Ctx::of_file(&self.origin, &self.text, Some(self.doc.clone()))
    }
}

impl Ctx<'_> {
    /// The diagnostic of `message` at scenario key path `segs` when a population
    /// wrote that key: located in the population file.
    pub(super) fn in_population(
        &self,
        segs: &[String],
        message: &str,
    ) -> Option<super::Diagnostic> {
        self.populations.iter().find_map(|p| {
            let rest = p.owns(segs)?;
            let mut d = p.ctx().problem(&Problem {
                path: rest.join("."),
                message: message.to_owned(),
            });
            d.note = Some(format!(
                "(in the population of `host_group.{}`, file {})",
                p.group, p.origin
            ));
            Some(d)
        })
    }
}

/// Copies every host group's population into it, in `doc` (the scenario after its
/// `--set`s). `ctx` locates an error of the `population` key itself in the scenario.
pub(super) fn inline(
    doc: &mut DocumentMut,
    origin: &str,
    ctx: &Ctx<'_>,
) -> Result<Vec<Inlined>, ScenarioError> {
    let mut done = Vec::new();
    let Some(groups) = doc
        .get_mut("host_group")
        .and_then(Item::as_array_of_tables_mut)
    else {
        return Ok(done);
    };
    let base = Path::new(origin).parent().unwrap_or(Path::new("."));
    for (i, group) in groups.iter_mut().enumerate() {
        let Some(item) = group.get("population") else {
            continue;
        };
        let key = format!("host_group.{i}.population");
        let bad = |message: String| {
            let p = Problem {
                path: key.clone(),
                message,
            };
            ScenarioError::Invalid(Box::new(ctx.problem(&p)))
        };
        let Some(name) = item.as_str().map(str::to_owned) else {
            return Err(bad(
                "expected a string: the name of a shipped population or a file path".into(),
            ));
        };
        let (shown, text) = read(&name, base).map_err(bad)?;
        let doc = parse(&shown, &text)?;
        let mut wrote = Vec::new();
        // Copied items must not keep spans into the population's text: despanned.
        let pop = doc.clone().into_mut();
        merge(group, pop.as_table(), &mut Vec::new(), &mut wrote);
        group.remove("population");
        // The merged group says where its keys came from.
        group.decor_mut().set_prefix(format!(
            "\n# host group {i}: its own keys, then population \"{name}\" ({shown})\n"
        ));
        done.push(Inlined {
            group: i,
            origin: shown,
            doc,
            text,
            wrote,
        });
    }
    Ok(done)
}

/// The text of population `name`: a shipped one, or a file relative to `base`.
fn read(name: &str, base: &Path) -> Result<(String, String), String> {
    if let Some((_, file, text)) = BUILT_IN.iter().find(|(n, _, _)| *n == name) {
        return Ok(((*file).to_owned(), (*text).to_owned()));
    }
    if !name.ends_with(".toml") {
        return Err(format!(
            "no shipped population is called `{name}` (there are: {}); a population file's name ends in .toml",
            built_in_names().join(", ")
        ));
    }
    let path = base.join(name);
    let shown = path.display().to_string();
    std::fs::read_to_string(&path)
        .map(|t| (shown.clone(), t))
        .map_err(|e| format!("cannot read population file `{shown}`: {e}"))
}

/// Parses a population and checks what can be checked alone: TOML syntax, no key
/// that belongs to the scenario, and every value's type (as a host group's).
fn parse(origin: &str, text: &str) -> Result<toml_edit::Document<String>, ScenarioError> {
    let (_, doc) = super::parse_toml::<toml::Table>(text, origin)?;
    let ctx = Ctx::of_file(origin, text, Some(doc.clone()));
    for k in SCENARIO_ONLY {
        if doc.get(k).is_some() {
            let message = format!(
                "a population describes hosts, not `{k}`: set it in the scenario's host group"
            );
            let p = Problem {
                path: k.to_owned(),
                message,
            };
            return Err(ScenarioError::Invalid(Box::new(ctx.problem(&p))));
        }
    }
    // Type-check the keys as a host group's, with the one required key supplied in
    // front; an error's position is moved back over it.
    const PREFIX: &str = "count = 1\n";
    let checked = format!("{PREFIX}{text}");
    if let Err(e) = toml::from_str::<crate::scenario::schema::HostGroup>(&checked) {
        let message = super::diagnostics::in_words(&first_line(e.message()));
        let at = e.span().map(|s| s.start.saturating_sub(PREFIX.len()));
        let key = at
            .and_then(|off| path_at(doc.as_item(), off))
            .map(|p| p.join("."));
        let at = at.or_else(|| {
            let segs: Vec<String> = key.iter().cloned().collect();
            locate(doc.as_item(), &segs).map(|r| r.start)
        });
        return Err(match at {
            Some(off) => ctx.at_offset(off, key, message),
            None => ScenarioError::Invalid(Box::new(ctx.problem(&Problem {
                path: key.unwrap_or_default(),
                message,
            }))),
        });
    }
    Ok(doc)
}

/// Copies into `group` every key of `pop` the group does not set, merging tables
/// key by key. `at` is the path of the tables being merged; each copied key's path is
/// pushed to `wrote`.
fn merge(
    group: &mut Table,
    pop: &dyn TableLike,
    at: &mut Vec<String>,
    wrote: &mut Vec<Vec<String>>,
) {
    for (k, item) in pop.iter() {
        at.push(k.to_owned());
        match group.get_mut(k) {
            Some(mine) => merge_item(mine, item, at, wrote),
            None => {
                let mut item = item.clone();
                unplace(&mut item);
                group.insert(k, item);
                wrote.push(at.clone());
            }
        }
        at.pop();
    }
}

/// Like [`merge`] into an inline table, which holds values only: a table of the
/// population becomes an inline table there.
fn merge_inline(
    group: &mut InlineTable,
    pop: &dyn TableLike,
    at: &mut Vec<String>,
    wrote: &mut Vec<Vec<String>>,
) {
    for (k, item) in pop.iter() {
        at.push(k.to_owned());
        match group.get_mut(k) {
            Some(mine) => {
                if let (Value::InlineTable(mine), Some(theirs)) = (mine, item.as_table_like()) {
                    merge_inline(mine, theirs, at, wrote);
                }
            }
            None => {
                if let Ok(v) = item.clone().into_value() {
                    group.insert(k, v);
                    wrote.push(at.clone());
                }
            }
        }
        at.pop();
    }
}

/// Merges the population's `theirs` into the group's `mine` when both are tables;
/// otherwise the group's value stands.
fn merge_item(mine: &mut Item, theirs: &Item, at: &mut Vec<String>, wrote: &mut Vec<Vec<String>>) {
    let Some(theirs) = theirs.as_table_like() else {
        return;
    };
    match mine {
        Item::Table(t) => merge(t, theirs, at, wrote),
        Item::Value(Value::InlineTable(t)) => merge_inline(t, theirs, at, wrote),
        _ => {}
    }
}

/// Forgets where tables were in the population file, so that they are written
/// after the group they now belong to.
fn unplace(item: &mut Item) {
    match item {
        Item::Table(t) => unplace_table(t),
        Item::ArrayOfTables(a) => a.iter_mut().for_each(unplace_table),
        _ => {}
    }
}

fn unplace_table(t: &mut Table) {
    t.set_position(None);
    for (_, child) in t.iter_mut() {
        unplace(child);
    }
}
