//! Fuzzing the loaders with the shipped files: every scenario and sweep
//! file under `scenarios/` is mutated (token and byte edits: delete, duplicate,
//! replace with another token of the corpus, insert, flip a byte, drop or repeat a
//! line) and loaded. Every case must end in a usable scenario or in one clear error
//! with exit code 1 or 2, never a panic or an abort.
//!
//! In process, through the library, `BOINC_SIM_FUZZ_CASES` cases (default 2000, a
//! few seconds); through the binary (`check`, and a 6-hour `run` under a 4 GiB
//! memory limit set in the child), a fixed sample of `BOINC_SIM_FUZZ_RUNS` cases
//! (default 24): a run that is killed, aborts, prints a backtrace or goes over the
//! limit fails, naming its case and edits. Failures of the in-process cases shrink to
//! a minimal edit list (proptest).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The shipped scenario and sweep files, copied into a temporary tree (so that
/// relative paths such as traces and a sweep's base scenario resolve), with their
/// text and the corpus of all their tokens.
struct Corpus {
    _root: tempfile::TempDir,
    files: Vec<(PathBuf, Vec<u8>)>,
    tokens: Vec<Vec<u8>>,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Splits TOML text into tokens: runs of word characters, quoted strings, single
/// punctuation bytes and whitespace runs (kept, so that joining gives the text back).
fn tokenize(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        let start = i;
        if c == b'"' {
            i += 1;
            while i < text.len() && text[i] != b'"' && text[i] != b'\n' {
                i += 1;
            }
            i = (i + 1).min(text.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'+' {
            while i < text.len() && (text[i].is_ascii_alphanumeric() || b"_-+".contains(&text[i])) {
                i += 1;
            }
        } else if c.is_ascii_whitespace() {
            while i < text.len() && text[i].is_ascii_whitespace() {
                i += 1;
            }
        } else {
            i += 1;
        }
        out.push(text[start..i].to_vec());
    }
    out
}

fn corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        copy_tree(&src, &root.path().join("scenarios"));
        let mut files = Vec::new();
        for sub in ["", "spec", "sweeps"] {
            let dir = root.path().join("scenarios").join(sub);
            let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            names.sort();
            for p in names {
                let text = std::fs::read(&p).unwrap();
                files.push((p, text));
            }
        }
        let mut tokens: Vec<Vec<u8>> = files.iter().flat_map(|(_, t)| tokenize(t)).collect();
        tokens.sort();
        tokens.dedup();
        Corpus {
            _root: root,
            files,
            tokens,
        }
    })
}

/// One edit: a kind and two numbers that pick the place and the material.
type Edit = (u8, u32, u32);

fn mutate(text: &[u8], edits: &[Edit], tokens: &[Vec<u8>]) -> Vec<u8> {
    let mut toks = tokenize(text);
    let mut bytes_edits = Vec::new();
    for &(kind, a, b) in edits {
        if toks.is_empty() {
            break;
        }
        let i = a as usize % toks.len();
        let t = tokens[b as usize % tokens.len()].clone();
        match kind % 7 {
            0 => {
                toks.remove(i);
            }
            1 => {
                let d = toks[i].clone();
                toks.insert(i, d);
            }
            2 => toks[i] = t,
            3 => toks.insert(i, t),
            4 => bytes_edits.push((a, b)),
            5 => {
                // Drop the line that holds token i.
                let (s, e) = line_of(&toks, i);
                toks.drain(s..e);
            }
            _ => {
                let (s, e) = line_of(&toks, i);
                let line: Vec<Vec<u8>> = toks[s..e].to_vec();
                toks.splice(e..e, line);
            }
        }
    }
    let mut out: Vec<u8> = toks.concat();
    for (a, b) in bytes_edits {
        if !out.is_empty() {
            let i = a as usize % out.len();
            out[i] = (b % 256) as u8;
        }
    }
    out
}

/// Token range `[s, e)` of the line holding token `i` (with its line end).
fn line_of(toks: &[Vec<u8>], i: usize) -> (usize, usize) {
    let nl = |t: &Vec<u8>| t.contains(&b'\n');
    let s = (0..i).rev().find(|&j| nl(&toks[j])).map_or(0, |j| j + 1);
    let e = (i..toks.len())
        .find(|&j| nl(&toks[j]))
        .map_or(toks.len(), |j| j + 1);
    (s, e)
}

fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 1..5)
}

/// Writes the mutated file next to its original (same folder: relative paths work)
/// under a name unique to this thread.
fn write_case(orig: &Path, bytes: &[u8], tag: &str) -> PathBuf {
    let stem = orig.file_stem().unwrap().to_string_lossy();
    let p = orig.with_file_name(format!("{stem}-fuzz-{tag}.toml"));
    std::fs::write(&p, bytes).unwrap();
    p
}

fn thread_tag() -> String {
    format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// Loads a mutated file the way the command line does: a scenario with `load`, a
/// sweep with `sweep::spec::read` and `sweep::plan`. Returns the exit code and the
/// message of an error.
fn load_case(path: &Path, is_sweep: bool) -> Result<(), (u8, String)> {
    if is_sweep {
        let s =
            boinc_sim::sweep::spec::read(path).map_err(|e| (e.exit_code() as u8, e.to_string()))?;
        boinc_sim::sweep::plan(&s).map_err(|e| (e.exit_code(), e.to_string()))?;
        Ok(())
    } else {
        boinc_sim::scenario::load(path, &[], None)
            .map(|_| ())
            .map_err(|e| (e.exit_code() as u8, e.to_string()))
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("BOINC_SIM_FUZZ_CASES", 2000),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_files_load_or_fail_with_one_clear_message(file in any::<prop::sample::Index>(), edits in edits()) {
        let c = corpus();
        let (orig, text) = &c.files[file.index(c.files.len())];
        let bytes = mutate(text, &edits, &c.tokens);
        let path = write_case(orig, &bytes, &thread_tag());
        let is_sweep = orig.parent().is_some_and(|d| d.ends_with("sweeps"));
        let outcome = load_case(&path, is_sweep);
        tally(&LOADS, match &outcome { Ok(()) => 0, Err((code, _)) => *code as usize });
        if let Err((code, msg)) = outcome {
            prop_assert!(code == 1 || code == 2, "exit code {code}: {msg}");
            prop_assert!(!msg.trim().is_empty(), "an empty message");
            prop_assert!(!msg.contains("panicked"), "{msg}");
        }
    }
}

/// Cases by outcome: loaded (0), or refused with exit code 1 or 2 (any other code
/// fails its case). Printed with `--nocapture` when a test has seen all its cases, for
/// the record of a long run (`BOINC_SIM_FUZZ_CASES=100000`).
static LOADS: [std::sync::atomic::AtomicUsize; 3] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 3];

fn tally(counts: &[std::sync::atomic::AtomicUsize; 3], code: usize) {
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(c) = counts.get(code) {
        c.fetch_add(1, Relaxed);
    }
    let seen: usize = counts.iter().map(|c| c.load(Relaxed)).sum();
    if seen == cases("BOINC_SIM_FUZZ_CASES", 2000) as usize {
        let n: Vec<usize> = counts.iter().map(|c| c.load(Relaxed)).collect();
        eprintln!(
            "fuzz loads: {seen} cases: {} exit 0, {} exit 1, {} exit 2",
            n[0], n[1], n[2]
        );
    }
}

/// The address space each case's process may use, KiB (4 GiB): far above what a
/// 6-hour run of any shipped scenario needs, far below what a mistyped size asks.
const MEMORY_LIMIT_KIB: u64 = 4 * 1024 * 1024;

/// Through the binary, on a fixed sample: `check`, then a short `run` of what loads,
/// each under a memory limit.
#[test]
fn the_binary_never_panics_on_mutated_files() {
    let c = corpus();
    let out = tempfile::tempdir().unwrap();
    let n = cases("BOINC_SIM_FUZZ_RUNS", 24);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut runs = [0usize; 3];
    for case in 0..n {
        let (file, edits) = (any::<prop::sample::Index>(), edits())
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let (orig, text) = &c.files[file.index(c.files.len())];
        if orig.parent().is_some_and(|d| d.ends_with("sweeps")) {
            continue;
        }
        let bytes = mutate(text, &edits, &c.tokens);
        let path = write_case(orig, &bytes, &format!("bin{case}"));
        let dest = out.path().join(format!("run{case}"));
        for args in [
            vec!["check".to_string(), path.display().to_string()],
            vec![
                "run".to_string(),
                path.display().to_string(),
                "--set".into(),
                "simulation.duration=\"6h\"".into(),
                "--out".into(),
                dest.display().to_string(),
                "-q".into(),
            ],
        ] {
            // Under a memory limit set in the child (`ulimit -v`, setrlimit
            // RLIMIT_AS), as a user's machine has one: a run that allocates past it
            // aborts, which fails the case. The loader reads the limit, so a scenario
            // too large for it must be refused before it starts.
            let o = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\""
                ))
                .arg(env!("CARGO_BIN_EXE_boinc-sim"))
                .args(&args)
                .env("RUST_BACKTRACE", "1")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            let code = o.status.code();
            let case_id = format!("case {case} (deterministic runner), edits {edits:?}");
            assert!(
                matches!(code, Some(0..=2)),
                "{case_id}: {args:?} on {} ended with {:?} (killed, aborted or over the memory limit):\n{err}",
                path.display(),
                o.status
            );
            assert!(
                !err.contains("panicked")
                    && !err.contains("RUST_BACKTRACE")
                    && !err.contains("memory allocation"),
                "{case_id}: {args:?} on {}:\n{err}",
                path.display()
            );
            if args[0] == "run" {
                runs[code.unwrap_or(0).clamp(0, 2) as usize] += 1;
            }
            if code != Some(0) {
                let errors = err.lines().filter(|l| l.starts_with("error: ")).count();
                assert_eq!(
                    errors,
                    1,
                    "{case_id}: {args:?} on {}: not one clear message:\n{err}",
                    path.display()
                );
            }
        }
    }
    eprintln!(
        "fuzz runs: {} runs: {} exit 0, {} exit 1, {} exit 2",
        runs.iter().sum::<usize>(),
        runs[0],
        runs[1],
        runs[2]
    );
}
