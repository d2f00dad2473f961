//! The crate's layering and its map, checked against ARCHITECTURE.md.
//!
//! ARCHITECTURE.md is the one place that states which module may name which: its
//! `layers` block gives, for every folder of `src/`, the order of its modules from
//! the top down. A module may name only modules below it in its folder's line; two
//! modules joined by `|` are alternatives on one level and name neither each other.
//! An import against that order makes a cycle, and two modules in a cycle can only
//! be understood, tested and changed together. Its `map` block names every file of
//! `src/`. These tests read the sources, so a cycle, a file the map forgets or a
//! name that no longer exists fails `cargo test` the day it is written.

mod imports;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use imports::ModPath;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn src(rel: &str) -> PathBuf {
    root().join("src").join(rel)
}

/// Every `.rs` file under `src/`, relative to it, with `/`, sorted.
fn source_files() -> Vec<String> {
    fn collect(path: &Path, files: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("readable folder").path())
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                collect(&e, files);
            } else if e.extension().is_some_and(|x| x == "rs") {
                files.push(e);
            }
        }
    }
    let mut files = Vec::new();
    collect(&src(""), &mut files);
    let base = src("");
    files
        .iter()
        .map(|f| {
            f.strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// The lines of ARCHITECTURE.md's fenced block `lang` (```` ```lang ````).
fn architecture_block(lang: &str) -> Vec<String> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let fence = format!("```{lang}");
    let mut lines = text.lines().skip_while(|l| l.trim() != fence);
    assert!(
        lines.next().is_some(),
        "ARCHITECTURE.md has no ```{lang} block"
    );
    lines
        .take_while(|l| l.trim() != "```")
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// One folder's order: the level of each of its modules, 0 at the top.
struct Order {
    line: String,
    level: BTreeMap<String, usize>,
}

/// The `layers` block: `scope: a > b | c > d`, scope being a module path.
fn layers() -> BTreeMap<ModPath, Order> {
    let mut out = BTreeMap::new();
    for line in architecture_block("layers") {
        let (scope, order) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("ARCHITECTURE.md layers: `{line}` has no `scope:`"));
        let scope: ModPath = scope.trim().split("::").map(String::from).collect();
        let mut level = BTreeMap::new();
        for (i, group) in order.split('>').enumerate() {
            for m in group.split('|') {
                let m = m.trim().to_string();
                assert!(
                    level.insert(m.clone(), i).is_none(),
                    "ARCHITECTURE.md layers: `{m}` twice in `{line}`"
                );
            }
        }
        let order = Order {
            line: line.clone(),
            level,
        };
        assert!(
            out.insert(scope, order).is_none(),
            "ARCHITECTURE.md layers: two lines for one folder (`{line}`)"
        );
    }
    out
}

fn name(m: &[String]) -> String {
    m.join("::")
}

/// Every folder of `src/` has an order that names each of its modules, and only
/// modules that exist: a renamed or new module fails here instead of slipping past.
#[test]
fn every_module_has_its_place_in_the_layers() {
    let tree = imports::module_tree(&source_files());
    let layers = layers();
    for (scope, children) in &tree {
        let order = layers.get(scope).unwrap_or_else(|| {
            panic!(
                "ARCHITECTURE.md layers: no line for `{}` (modules {children:?})",
                name(scope)
            )
        });
        let listed: BTreeSet<String> = order.level.keys().cloned().collect();
        let missing: Vec<_> = children.difference(&listed).collect();
        let gone: Vec<_> = listed.difference(children).collect();
        assert!(
            missing.is_empty() && gone.is_empty(),
            "ARCHITECTURE.md layers `{}`: modules missing from it {missing:?}, names \
             that are no module {gone:?}",
            order.line
        );
    }
    for scope in layers.keys() {
        assert!(
            tree.contains_key(scope),
            "ARCHITECTURE.md layers: `{}` is no folder of src/",
            name(scope)
        );
    }
}

/// No module names one above it, or beside it across a `|`. Unit tests inside a
/// module may drive its neighbours in the same folder (a test is a user of the
/// module, not part of it), but even they keep to the crate's own layers.
#[test]
fn no_module_names_one_above_it() {
    let files = source_files();
    let tree = imports::module_tree(&files);
    let children = |m: &[String]| tree.get(m).cloned().unwrap_or_default();
    let layers = layers();
    let mut wrong = BTreeSet::new();
    for f in files.iter().filter(|f| *f != "main.rs") {
        let module = imports::module_of(f);
        let text = fs::read_to_string(src(f)).unwrap_or_else(|e| panic!("src/{f}: {e}"));
        for named in imports::named_paths(&text, &module, &children) {
            let p = &named.path;
            // The folder both sit in, and the two modules of it that they are in.
            let k = module.iter().zip(p).take_while(|(a, b)| a == b).count();
            if k >= module.len() || k >= p.len() || !children(&module[..k]).contains(&p[k]) {
                continue; // a module naming itself, its children or an item of its folder
            }
            if named.in_test && k > 1 {
                continue;
            }
            let Some(order) = layers.get(&module[..k]) else {
                continue; // every_module_has_its_place_in_the_layers says so
            };
            let (from, to) = (&module[k], &p[k]);
            if let (Some(a), Some(b)) = (order.level.get(from), order.level.get(to))
                && a >= b
            {
                wrong.insert(format!(
                    "src/{f} names {}::{to}, but `{from}` is not above `{to}` in `{}`",
                    name(&module[..k]),
                    order.line
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against ARCHITECTURE.md's layers (pass the data in, or move what both \
         need down):\n{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The reader of imports finds what it must: plain, grouped, renamed and glob
/// imports, `super` paths, paths in code; and not what it must not: comments,
/// strings, longer names, outside crates.
#[test]
fn the_import_reader_sees_every_form_of_path() {
    let text = r##"
//! crate::comment
use crate::world::Finished;
use crate::{
    stats::x,
    server::{a, b as bee},
    engine,
};
use crate::plot as p;
use super::*;
use std::fmt;
fn f() { mycrate::no; crate::cli::run(); p::draw(); bee::c(); let s = "crate::string"; sibling::g(); fmt::x(); }
mod tests { use super::*; fn t() { child::h(); } }
"##;
    let children = |m: &[String]| -> BTreeSet<String> {
        match name(m).as_str() {
            "crate::top" => ["sibling".to_string(), "mid".into()].into(),
            "crate::top::mid" => ["child".to_string()].into(),
            _ => BTreeSet::new(),
        }
    };
    let module: ModPath = ["crate", "top", "mid"].map(String::from).to_vec();
    let got: Vec<(String, bool)> = imports::named_paths(text, &module, &children)
        .into_iter()
        .map(|n| (name(&n.path), n.in_test))
        .collect();
    let want = [
        ("crate::cli::run", false),
        ("crate::engine", false),
        ("crate::plot", false),
        ("crate::plot::draw", false),
        ("crate::server::a", false),
        ("crate::server::b", false),
        ("crate::server::b::c", false),
        ("crate::stats::x", false),
        ("crate::top", false),
        ("crate::top::mid", true),
        ("crate::top::mid::child::h", true),
        ("crate::top::sibling::g", false),
        ("crate::world::Finished", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(p, t)| (p.to_string(), *t)).collect();
    assert_eq!(got, want);
}

/// ARCHITECTURE.md's `map` block names every file under `src/`, and every file it
/// names exists: a newcomer's map that cannot drift from the tree.
#[test]
fn the_map_names_every_file() {
    let listed: BTreeSet<String> = architecture_block("map")
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| p.trim_start_matches("src/").to_string())
        .collect();
    let files: BTreeSet<String> = source_files().into_iter().collect();
    let missing: Vec<_> = files.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&files).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's map: files it does not name {missing:?}; names that are no \
         file {gone:?}"
    );
}

/// The server's configuration is what its daemons read, resolved when the scenario
/// is loaded; the scenario file's tables are the scenario's types, which resolve
/// into it (`scenario::schema::project`). So the server never names the scenario
/// (the layers say so), and its configuration structs are no file format: serde derives there are only
/// on the value enums the file shares (a mode, a scheme, a variant).
#[test]
fn the_server_configuration_is_not_the_file_schema() {
    let path = src("server/config.rs");
    let config = imports::strip(&fs::read_to_string(&path).expect("src/server/config.rs"));
    let mut lines = config.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with("#[derive(") && line.contains("Deserialize") {
            let item = lines
                .by_ref()
                .find(|l| l.starts_with("pub "))
                .unwrap_or_default();
            assert!(
                item.starts_with("pub enum "),
                "src/server/config.rs derives serde on `{item}`: the file's tables are \
                 scenario::schema types, resolved into plain runtime structs"
            );
        }
    }
}
