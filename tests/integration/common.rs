//! What the end-to-end tests share: running the `boinc-sim` binary from the
//! repository root, with backtraces asked for, so that a test that expects a clean
//! error message also proves that no panic produced it.

use std::path::Path;
use std::process::{Command, Output};

/// The repository root (scenario paths in tests are relative to it).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary, to run from the repository root with `RUST_BACKTRACE=1`.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_boinc-sim"));
    c.current_dir(root());
    c.env("RUST_BACKTRACE", "1");
    c
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("binary runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts that the files of folder `b` equal those of folder `a` byte for byte,
/// every file of `a` (sub-folders aside); `context` ends a failure's message.
/// Returns how many files were compared.
#[track_caller]
pub fn assert_same_files(a: &Path, b: &Path, context: &str) -> usize {
    let mut names: Vec<_> = std::fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut compared = 0;
    for n in &names {
        let (x, y) = (a.join(n), b.join(n));
        if x.is_dir() {
            continue;
        }
        assert!(
            std::fs::read(&x).unwrap() == std::fs::read(&y).unwrap(),
            "{n:?} differs between {} and {}\n{context}",
            a.display(),
            b.display()
        );
        compared += 1;
    }
    compared
}

/// Loads `text` as `bad.toml` with the `--set` arguments `sets` and returns the
/// error message; fails if it loads, or if the exit code is not 2 (bad input).
pub fn err_with(text: &str, sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match boinc_sim::scenario::load::load_str(text, "bad.toml", &sets, None) {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => {
            assert_eq!(e.exit_code(), 2);
            e.to_string()
        }
    }
}

/// [`err_with`] without `--set`.
pub fn err(text: &str) -> String {
    err_with(text, &[])
}

/// Asserts that `msg` contains every fragment, printing the message otherwise.
#[track_caller]
pub fn has(msg: &str, fragments: &[&str]) {
    for f in fragments {
        assert!(msg.contains(f), "expected {f:?} in the message:\n{msg}");
    }
}

/// Replays the job log of the run folder `run` (`run --job-log`, project `main`)
/// into `out` with the settings and hosts files the run wrote, and returns the
/// replay's `credit_results.csv`.
pub fn replay_run_log(run: &Path, out: &Path) -> std::path::PathBuf {
    let o = self::run(&[
        "credit",
        run.join("jobs.csv").to_str().unwrap(),
        "--config",
        run.join("credit-main.toml").to_str().unwrap(),
        "--hosts",
        run.join("credit-hosts-main.csv").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out.join("credit_results.csv")
}

/// Loads the scenario `text` (named `name` in messages) and runs it in process
/// with `opts`, without a run folder; panics with the message on any error.
pub fn run_text(
    text: &str,
    name: &str,
    opts: &boinc_sim::world::RunOptions,
) -> boinc_sim::world::Finished<boinc_sim::stats::recorder::StatsRecorder> {
    let loaded = boinc_sim::scenario::load::load_str(text, name, &[], None)
        .unwrap_or_else(|e| panic!("{e}"));
    let world = boinc_sim::stats::recorder::StatsRecorder::world(&loaded, opts, None);
    world.run().unwrap_or_else(|e| panic!("{e}"))
}
