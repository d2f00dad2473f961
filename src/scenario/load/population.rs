//! Host populations a host group takes in one line: `population = "volunteers"` (a
//! population shipped with boinc-sim) or `population = "my-hosts.toml"` (a file,
//! relative to the scenario's folder). docs/population.md describes the shipped one.
//!
//! A population file holds host-group keys (speeds, cores, availability, error rates,
//! preferences, other projects), never how many hosts there are or which projects
//! they attach to. Loading copies its keys into the group **before** the scenario is
//! deserialised, key by key: a key the group sets itself wins. A value replaces a
//! value whole, a distribution's inline table included (a group's `{ dist = "choice",
//! … }` is not merged with the population's `{ dist = "lognormal", mu, … }`); only
//! the group's sections ([`SECTIONS`]) merge key by key, so
//! `--set host_group.0.prefs.work_buf_min_days=2` turns one knob of a population and
//! keeps the rest. The merged text is the run's `scenario.toml`, so a run folder
//! stays self-contained and a population edited later changes the scenario hash.
//!
//! A mistake in a population is reported in the population file, at its line and
//! column, even when the scenario's validation finds it after the merge
//! (`super::provenance::Inlined::owns`).

use super::diagnostics::{Ctx, ScenarioError, first_line};
use super::provenance::{Inlined, Trail};
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

/// The host group's sections: tables of keys, which merge with the population's
/// table of the same name key by key (one level: a key inside a section is a value,
/// replaced whole). Every other key is a value, and a group's value replaces the
/// population's whole, whatever its form (docs/population.md).
pub(crate) const SECTIONS: [&str; 5] = ["availability", "background", "prefs", "network", "start"];

/// The names of the shipped populations, for messages and docs.
pub(crate) fn built_in_names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(n, _, _)| *n).collect()
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
        let mut trail = Trail::default();
        // Copied items must not keep spans into the population's text: despanned.
        let pop = doc.clone().into_mut();
        merge(group, pop.as_table(), &mut Vec::new(), &mut trail);
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
            trail,
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

/// Copies into `group` every key of `pop` the group does not set. At the group's top
/// level (`at` empty) a section ([`SECTIONS`]) that both give merges key by key; any
/// other key the group gives replaces the population's whole. `at` is the path of the
/// section being merged; each key's path goes to `trail`.
fn merge(group: &mut Table, pop: &dyn TableLike, at: &mut Vec<String>, trail: &mut Trail) {
    let top = at.is_empty();
    for (k, item) in pop.iter() {
        at.push(k.to_owned());
        match group.get_mut(k) {
            Some(mine) if top && SECTIONS.contains(&k) => merge_section(mine, item, at, trail),
            Some(_) => trail.replaced.push(at.clone()), // a value replaces a value
            None => {
                let mut item = item.clone();
                unplace(&mut item);
                group.insert(k, item);
                trail.wrote.push(at.clone());
            }
        }
        at.pop();
    }
}

/// Like [`merge`] into a section the group wrote as an inline table, which holds
/// values only.
fn merge_inline(
    group: &mut InlineTable,
    pop: &dyn TableLike,
    at: &mut Vec<String>,
    trail: &mut Trail,
) {
    for (k, item) in pop.iter() {
        at.push(k.to_owned());
        if group.get(k).is_some() {
            trail.replaced.push(at.clone());
        } else if let Ok(v) = item.clone().into_value() {
            group.insert(k, v);
            trail.wrote.push(at.clone());
        }
        at.pop();
    }
}

/// Merges the population's section `theirs` into the group's `mine` when both are
/// tables; otherwise the group's value stands.
fn merge_section(mine: &mut Item, theirs: &Item, at: &mut Vec<String>, trail: &mut Trail) {
    let Some(theirs) = theirs.as_table_like() else {
        return;
    };
    match mine {
        Item::Table(t) => merge(t, theirs, at, trail),
        Item::Value(Value::InlineTable(t)) => merge_inline(t, theirs, at, trail),
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
