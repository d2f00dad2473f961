//! `--set KEY=VALUE` overrides (docs/scenario.md, "`--set` and `--seed`"), applied
//! to the `toml_edit` document before it is deserialised, so an override passes the
//! same type checks and validation as the file. A sweep gives each point's
//! parameters to the loader in the same form (docs/sweep.md), so they are applied
//! here too.
//!
//! A `--set` may create a missing table but never an array entry, nor a project the
//! file does not define (a misspelling); an array of tables may be indexed by
//! position or by an entry's `name`. Each refusal says what exists instead.

use super::diagnostics::first_line;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Key, Table, TableLike, Value};

/// A mutable place in a document (see `super::spans::Node`).
enum NodeMut<'a> {
    Item(&'a mut Item),
    Table(&'a mut Table),
    Value(&'a mut Value),
}

/// Applies one `--set KEY=VALUE` to `doc`; returns the key path it wrote.
///
/// VALUE is read as a TOML value (`86400`, `"10d"`, `true`, `1.5`, `[1, 2]`); text
/// that is not valid TOML (`seed`, `10d`) is taken as a string, so shell users need
/// not quote strings twice. Missing tables on the path are created.
pub(super) fn apply_set(doc: &mut DocumentMut, arg: &str) -> Result<Vec<String>, String> {
    let Some((k, v)) = arg.split_once('=') else {
        return Err(
            "expected KEY=VALUE, e.g. `--set project.main.workunit.delay_bound=86400`".into(),
        );
    };
    let k = k.trim();
    if k.is_empty() {
        return Err("empty key; expected KEY=VALUE, e.g. `--set simulation.seed=7`".into());
    }
    let keys = Key::parse(k).map_err(|e| {
        format!(
            "`{k}` is not a key path ({}); expected dotted keys such as `project.main.workunit.min_quorum`",
            first_line(e.message())
        )
    })?;
    let segs: Vec<String> = keys.iter().map(|k| k.get().to_owned()).collect();
    let Some((last, parents)) = segs.split_last() else {
        return Err("empty key; expected KEY=VALUE".into());
    };
    let raw = v.trim();
    let value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(raw.to_owned()));

    check_map_keys(doc, &segs)?;
    let mut node = NodeMut::Item(doc.as_item_mut());
    for (i, seg) in parents.iter().enumerate() {
        node = step_mut(node, seg, &segs[..i], &segs[i + 1])?;
    }
    assign(node, last, &segs[..parents.len()], value)?;
    Ok(segs)
}

/// A `--set` never adds an entry to a map the file defines by name: a project
/// that does not exist is a misspelling, not a new project with default settings.
/// Lists the names that do exist.
fn check_map_keys(doc: &DocumentMut, segs: &[String]) -> Result<(), String> {
    if let [first, name, ..] = segs
        && first == "project"
    {
        let names: Vec<&str> = doc
            .get("project")
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k).collect())
            .unwrap_or_default();
        if !names.contains(&name.as_str()) {
            return Err(if names.is_empty() {
                format!(
                    "there is no project `{name}`: the scenario defines no [project.NAME] table"
                )
            } else {
                format!(
                    "there is no project `{name}`; the scenario's projects are: {}",
                    names.join(", ")
                )
            });
        }
    }
    Ok(())
}

/// The names (`name` keys) of the entries of an array of tables, for messages.
fn entry_names(a: &ArrayOfTables) -> Vec<String> {
    a.iter()
        .filter_map(|t| t.get("name").and_then(Item::as_str).map(String::from))
        .collect()
}

/// The index of the entry of `a` named `seg` (`host_group.desktops.count`).
fn named_entry(a: &ArrayOfTables, seg: &str) -> Option<usize> {
    a.iter()
        .position(|t| t.get("name").and_then(Item::as_str) == Some(seg))
}

/// [`index`] for an array of tables, whose entries may also be named by their
/// `name` key; a miss lists the names there are.
fn aot_index(seg: &str, a: &ArrayOfTables, at: &[String]) -> Result<usize, String> {
    if let Some(i) = named_entry(a, seg) {
        return Ok(i);
    }
    index(seg, a.len(), at).map_err(|m| {
        let names = entry_names(a);
        if names.is_empty() {
            m
        } else {
            format!("{m}; or name an entry: {}", names.join(", "))
        }
    })
}

fn shown(path: &[String]) -> String {
    if path.is_empty() {
        "the document".into()
    } else {
        format!("`{}`", path.join("."))
    }
}

fn index(seg: &str, len: usize, at: &[String]) -> Result<usize, String> {
    let i: usize = seg.parse().map_err(|_| {
        format!(
            "{} is an array; expected an index 0..{len}, got `{seg}`",
            shown(at)
        )
    })?;
    if i >= len {
        return Err(format!(
            "index {i} is out of range: {} has {len} entr{}",
            shown(at),
            if len == 1 { "y" } else { "ies" }
        ));
    }
    Ok(i)
}

/// Descends one segment, creating a missing table (`at` is the path so far, `next`
/// the segment after `seg`).
fn step_mut<'a>(
    node: NodeMut<'a>,
    seg: &str,
    at: &[String],
    next: &str,
) -> Result<NodeMut<'a>, String> {
    match node {
        NodeMut::Table(t) | NodeMut::Item(Item::Table(t)) => child_mut(t, false, seg, at, next),
        NodeMut::Item(Item::ArrayOfTables(a)) => {
            let i = aot_index(seg, a, at)?;
            a.get_mut(i)
                .map(NodeMut::Table)
                .ok_or_else(|| format!("index {i} is out of range for {}", shown(at)))
        }
        NodeMut::Item(Item::Value(v)) | NodeMut::Value(v) => match v {
            Value::InlineTable(t) => child_mut(t, true, seg, at, next),
            Value::Array(a) => {
                let i = index(seg, a.len(), at)?;
                a.get_mut(i)
                    .map(NodeMut::Value)
                    .ok_or_else(|| format!("index {i} is out of range for {}", shown(at)))
            }
            other => Err(format!(
                "{} is a {}, not a table; cannot set a key inside it",
                shown(at),
                other.type_name()
            )),
        },
        NodeMut::Item(Item::None) => Err(format!("{} does not exist", shown(at))),
    }
}

fn child_mut<'a>(
    t: &'a mut dyn TableLike,
    inline: bool,
    seg: &str,
    at: &[String],
    next: &str,
) -> Result<NodeMut<'a>, String> {
    if !t.contains_key(seg) {
        if !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()) {
            // Arrays are not created: which entries should the others be?
            let mut path = at.to_vec();
            path.push(seg.to_owned());
            return Err(format!(
                "index {next} is out of range: {} has no entries; expected an index into an array the file defines (add a `[[{seg}]]` entry first)",
                shown(&path)
            ));
        }
        // An inline table can only hold values; a standard table gets a standard
        // sub-table, implicit so that it prints no empty header.
        let new = if inline {
            Item::Value(Value::InlineTable(InlineTable::new()))
        } else {
            let mut nt = Table::new();
            nt.set_implicit(true);
            Item::Table(nt)
        };
        t.insert(seg, new);
    }
    t.get_mut(seg)
        .map(NodeMut::Item)
        .ok_or_else(|| format!("cannot create `{seg}`"))
}

/// Replaces a value in place, keeping its comments and spacing.
fn replace_value(old: &mut Value, new: Value) {
    let decor = old.decor().clone();
    *old = new;
    *old.decor_mut() = decor;
}

fn assign(node: NodeMut<'_>, last: &str, at: &[String], value: Value) -> Result<(), String> {
    let into_table = |t: &mut dyn TableLike, value: Value| {
        match t.get_mut(last) {
            Some(Item::Value(old)) => replace_value(old, value),
            _ => {
                t.insert(last, Item::Value(value));
            }
        }
        Ok(())
    };
    match node {
        NodeMut::Table(t) | NodeMut::Item(Item::Table(t)) => into_table(t, value),
        NodeMut::Item(Item::ArrayOfTables(a)) => {
            aot_index(last, a, at)?;
            Err(format!(
                "cannot replace a whole `[[{}]]` entry; expected a key inside it, e.g. `{}.{last}.KEY=VALUE`",
                at.join("."),
                at.join(".")
            ))
        }
        NodeMut::Item(Item::Value(v)) | NodeMut::Value(v) => match v {
            Value::InlineTable(t) => into_table(t, value),
            Value::Array(a) => {
                let i = index(last, a.len(), at)?;
                match a.get_mut(i) {
                    Some(old) => {
                        replace_value(old, value);
                        Ok(())
                    }
                    None => Err(format!("index {i} is out of range for {}", shown(at))),
                }
            }
            other => Err(format!(
                "{} is a {}, not a table; cannot set `{last}` inside it",
                shown(at),
                other.type_name()
            )),
        },
        NodeMut::Item(Item::None) => Err(format!("{} does not exist", shown(at))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> DocumentMut {
        s.parse().expect("test document parses")
    }
    #[test]
    fn set_creates_tables_and_reads_bare_words_as_strings() {
        let mut d = doc("[simulation]\nseed = 1\n[project.main]\n");
        apply_set(&mut d, "project.main.backend.variant=seed").expect("applies");
        apply_set(&mut d, "simulation.seed = 7").expect("applies");
        let t = d.to_string();
        assert!(t.contains("seed = 7"), "{t}");
        assert!(t.contains("variant = \"seed\""), "{t}");
    }

    #[test]
    fn set_never_creates_a_project_and_names_the_ones_there_are() {
        let mut d = doc("[project.alpha]\n[project.beta]\n");
        let m = apply_set(&mut d, "project.alpah.workunit.min_quorum=2").unwrap_err();
        assert_eq!(
            m,
            "there is no project `alpah`; the scenario's projects are: alpha, beta"
        );
        let m = apply_set(&mut doc(""), "project.main.workunit.min_quorum=2").unwrap_err();
        assert!(m.contains("defines no [project.NAME] table"), "{m}");
    }

    #[test]
    fn set_names_host_groups_by_index_or_name_and_lists_the_names() {
        let mut d = doc(
            "[[host_group]]\nname = \"desk\"\ncount = 1\n[[host_group]]\nname = \"lap\"\ncount = 1\n",
        );
        apply_set(&mut d, "host_group.lap.count=7").expect("applies");
        assert!(d.to_string().contains("count = 7"));
        let m = apply_set(&mut d, "host_group.laptop.count=7").unwrap_err();
        assert!(m.ends_with("; or name an entry: desk, lap"), "{m}");
        let m = apply_set(&mut d, "host_group.2.count=7").unwrap_err();
        assert!(
            m.contains("has 2 entries") && m.contains("desk, lap"),
            "{m}"
        );
    }

    #[test]
    fn set_indexes_arrays_of_tables_and_inline_arrays() {
        let mut d = doc("[[host_group]]\ncount = 1\n[[event]]\nat = 0\nlost = [\"wu1_0\"]\n");
        apply_set(&mut d, "host_group.0.count=5").expect("applies");
        apply_set(&mut d, "event.0.lost.0=wu2_1").expect("applies");
        let t = d.to_string();
        assert!(t.contains("count = 5") && t.contains("\"wu2_1\""), "{t}");
        assert!(apply_set(&mut d, "host_group.1.count=5").is_err());
        assert!(apply_set(&mut d, "host_group.x.count=5").is_err());
        assert!(apply_set(&mut d, "host_group.0.count.x=5").is_err());
        assert!(apply_set(&mut d, "=5").is_err());
        assert!(apply_set(&mut d, "novalue").is_err());
    }
}
