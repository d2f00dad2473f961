//! The crate's layering: which module may name which (the module map of `src/lib.rs`).
//!
//! Data flows one way. The engine is at the bottom; the server, the client and the
//! scenario sit on it; the world runs them and tells a recorder what happens; stats
//! is that recorder and reads the world's final state; the command line, sweeps,
//! plots and comparisons sit on top. Inside the client, each policy depends on the
//! host and the host on no policy. An import against that direction makes a cycle:
//! the two modules can then only be understood, tested and changed together. These
//! tests read the sources, so a cycle fails `cargo test` the day it is written.

use std::fs;
use std::path::{Path, PathBuf};

/// The code of `path` (a file, or every `.rs` file under a folder) without its
/// comment lines.
fn code(path: &Path) -> String {
    let mut files = Vec::new();
    collect(path, &mut files);
    assert!(!files.is_empty(), "no source under {}", path.display());
    let mut out = String::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for line in text.lines() {
            if !line.trim_start().starts_with("//") {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("readable folder").path())
            .collect();
        entries.sort();
        for e in entries {
            collect(&e, files);
        }
    } else if path.extension().is_some_and(|x| x == "rs") {
        files.push(path.to_path_buf());
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The names `code` reaches right below `prefix`: `prefix::name` and every
/// first-level name of a `prefix::{name, other::x}` group.
fn children(code: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    let pat = format!("{prefix}::");
    let mut from = 0;
    while let Some(i) = code[from..].find(&pat) {
        let start = from + i;
        from = start + pat.len();
        if code[..start].chars().next_back().is_some_and(is_ident) {
            continue; // `xprefix::`, another name
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            let mut first = true;
            for c in group.chars() {
                match c {
                    c if c.is_whitespace() => {}
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(std::mem::take(&mut item));
                        first = true;
                        continue;
                    }
                    c if first && is_ident(c) => item.push(c),
                    _ => first = false,
                }
            }
            names.push(item);
        } else {
            names.push(rest.chars().take_while(|&c| is_ident(c)).collect());
        }
    }
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
}

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(rel)
}

/// Fails with `why` if the code at `paths` names any of `forbidden` below `prefix`.
fn assert_never_names(paths: &[&str], prefix: &str, forbidden: &[&str], why: &str) {
    for p in paths {
        let path = src(p);
        if !path.exists() {
            continue; // `src/world/` exists only once the world has submodules
        }
        let named: Vec<String> = children(&code(&path), prefix)
            .into_iter()
            .filter(|n| forbidden.contains(&n.as_str()))
            .collect();
        assert!(
            named.is_empty(),
            "src/{p} names {prefix}::{{{}}}: {why}",
            named.join(", ")
        );
    }
}

/// The helper finds what it must: plain paths, groups over several lines, nested
/// groups; and not what it must not: comments, longer names.
#[test]
fn children_reads_paths_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.rs");
    fs::write(
        &f,
        "//! crate::comment\nuse crate::world::Finished;\nuse crate::{\n    stats::x,\n    server::{a, b},\n    engine,\n};\nfn f() { mycrate::no; crate::plot::draw(); }\n",
    )
    .unwrap();
    assert_eq!(
        children(&code(&f), "crate"),
        ["engine", "plot", "server", "stats", "world"]
    );
    assert_eq!(children(&code(&f), "server"), ["a", "b"]);
}

/// Modules above each layer, which it must never name.
#[test]
fn lower_layers_never_name_higher_ones() {
    const TOP: [&str; 6] = ["cli", "sweep", "plot", "compare", "progress", "credit"];
    let above_world: Vec<&str> = TOP.iter().copied().chain(["stats"]).collect();
    let above_models: Vec<&str> = above_world.iter().copied().chain(["world"]).collect();
    let above_engine: Vec<&str> = above_models
        .iter()
        .copied()
        .chain(["server", "client", "scenario"])
        .collect();
    // The leaf: durations, distributions and hashing name nothing else of the crate.
    let above_base: Vec<&str> = above_engine.iter().copied().chain(["engine"]).collect();
    assert_never_names(
        &["base"],
        "crate",
        &above_base,
        "durations, distributions and hashing are the leaf every layer shares",
    );
    assert_never_names(
        &["engine"],
        "crate",
        &above_engine,
        "the engine (clock, queue, random streams) serves every other module",
    );
    assert_never_names(
        &["server", "client", "scenario"],
        "crate",
        &above_models,
        "the server, client and scenario models are run by the world, so they cannot \
         depend on it or on the outputs",
    );
    assert_never_names(
        &["world.rs", "world"],
        "crate",
        &above_world,
        "the world hands what happens to a `world::Recorder` and its final state to \
         whoever started the run; stats implements the recorder and reads that state, \
         so stats depends on the world and never the reverse",
    );
    assert_never_names(
        &["stats"],
        "crate",
        &TOP,
        "stats writes the run folder; the command line, sweeps, plots and comparisons \
         read it",
    );
}

/// The models the world runs know nothing of how a run is described or recorded:
/// the server and the client import nothing from the scenario (the plan hands them
/// their configuration), the statistics, the plots or the world.
#[test]
fn server_and_client_name_no_scenario() {
    assert_never_names(
        &["server", "client"],
        "crate",
        &["scenario", "stats", "plot", "world"],
        "the scenario is read and resolved above the models (scenario::plan); the world \
         builds the server and the hosts from the plan and runs them",
    );
}

/// The host is the state and mechanics both client policies share; each policy
/// drives a host, and `client::policy` is the one place that names both.
#[test]
fn the_client_host_names_no_policy() {
    let policies = ["seed", "modern", "policy"];
    let why = "each policy depends on the host, not the reverse: the dispatch of a host \
               event to its policy is in src/client/policy.rs";
    // Nor does a policy name the other one: they are alternatives, not layers.
    for prefix in ["super", "client"] {
        assert_never_names(&["client/host"], prefix, &policies, why);
        assert_never_names(
            &["client/seed"],
            prefix,
            &["modern", "policy"],
            "the seed policy stands on the host alone",
        );
        assert_never_names(
            &["client/modern"],
            prefix,
            &["seed", "policy"],
            "the modern policy stands on the host alone",
        );
    }
}

/// Inside stats, data flows one way too: what a row counts for in the measured
/// window, the time series, the tallies, the recorder that feeds them, the headline
/// figures and `summary.json`; and the files' writeback, the safety of output
/// folders, the run folder's writer and the manifest. A module never names one after
/// it in its chain, so none of them can form a cycle again.
#[test]
fn stats_modules_form_no_cycle() {
    let chains: [(&[&str], &str); 2] = [
        (
            &[
                "window", "metrics", "drift", "tally", "recorder", "headline", "summary",
            ],
            "each reads only those before it in window → metrics → drift → tally → \
             recorder → headline → summary: pass the data in, or move what both need down",
        ),
        (
            &["writeback", "outdir", "output", "manifest"],
            "writeback (getting a growing file onto the disk) and outdir (which folders \
             may be replaced, temporary folders) serve the run folder's writer, output, \
             and all serve the manifest, never the reverse",
        ),
    ];
    for (chain, why) in chains {
        for (i, low) in chain.iter().enumerate() {
            let path = format!("stats/{low}.rs");
            assert!(src(&path).exists(), "src/{path} is gone: update this chain");
            for prefix in ["super", "stats"] {
                assert_never_names(&[path.as_str()], prefix, &chain[i + 1..], why);
            }
        }
    }
}

/// The server's configuration is what its daemons read, resolved when the scenario
/// is loaded; the scenario file's tables are the scenario's types, which resolve
/// into it (`scenario::schema::project`). So the server never names the scenario,
/// and its configuration structs are no file format: serde derives there are only
/// on the value enums the file shares (a mode, a scheme, a variant).
#[test]
fn the_server_configuration_is_not_the_file_schema() {
    assert_never_names(
        &["server"],
        "crate",
        &["scenario"],
        "the scenario resolves its tables into server::ProjectConfig when it loads; \
         the server reads only that",
    );
    let config = code(&src("server/config.rs"));
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

/// Inside the client, the host stands on its runtime estimates and its availability:
/// they name no host type (the host passes a job's numbers to `estimate` and keeps the
/// availability's `TimeStats`), so neither can only be understood together with the
/// host. The host, a folder since it was split, still names no policy.
#[test]
fn client_estimate_and_availability_never_name_the_host() {
    let below = ["client/estimate.rs", "client/availability"];
    let host = ["client/host"];
    for p in below.iter().chain(&host) {
        // `assert_never_names` skips a missing path: a rename must not pass silently.
        assert!(src(p).exists(), "src/{p} is gone: update this test");
    }
    for prefix in ["super", "client"] {
        assert_never_names(
            &below,
            prefix,
            &["host"],
            "the host depends on the estimates and the availability, not the reverse: \
             pass plain values in, or move the type down",
        );
        assert_never_names(
            &host,
            prefix,
            &["seed", "modern", "policy"],
            "each policy depends on the host, not the reverse: the dispatch of a host \
             event to its policy is in src/client/policy.rs",
        );
    }
}
