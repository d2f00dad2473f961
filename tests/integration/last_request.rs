//! A host keeps the work request of each project's last scheduler RPC only in a
//! scenario with `[[expect]]` entries, the only readers of it (docs/performance.md,
//! "Memory per entity"). These tests run the binary on a client scenario whose
//! expectations read the request: its values are still checked exactly, and
//! keeping it or not changes no output.

use crate::common::{run, text};
use std::path::Path;

const SCENARIO: &str = "scenarios/spec/client-first-minutes.toml";

/// Runs `scenario` (a path) into `out`; returns whether it succeeded and its stderr.
fn run_into(scenario: &Path, out: &Path) -> (bool, String) {
    let o = run(&[
        "run",
        scenario.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    (o.status.success(), text(&o.stderr))
}

/// The first expectation's `req_secs = 1.0` passes; stated as 2 it fails with the
/// value the host kept.
#[test]
fn expectations_still_read_the_last_request() {
    let tmp = tempfile::tempdir().unwrap();
    let root = crate::common::root();
    let (ok, err) = run_into(&root.join(SCENARIO), &tmp.path().join("ok"));
    assert!(ok, "{err}");
    let src = std::fs::read_to_string(root.join(SCENARIO)).unwrap();
    assert_eq!(src.matches("req_secs = 1.0\n").count(), 1);
    let wrong = tmp.path().join("wrong.toml");
    std::fs::write(&wrong, src.replace("req_secs = 1.0\n", "req_secs = 2.0\n")).unwrap();
    let (ok, err) = run_into(&wrong, &tmp.path().join("wrong"));
    assert!(!ok);
    assert!(err.contains("req_secs = 1, expected 2"), "{err}");
}

/// The same scenario without its expectations keeps no request, and its hosts,
/// results and time series are byte for byte those of the run that kept it.
#[test]
fn keeping_the_request_changes_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let root = crate::common::root();
    let src = std::fs::read_to_string(root.join(SCENARIO)).unwrap();
    let cut = src
        .find("[[expect]]")
        .expect("the scenario has expectations");
    let bare = tmp.path().join("bare.toml");
    std::fs::write(&bare, &src[..cut]).unwrap();
    let (ok, err) = run_into(&root.join(SCENARIO), &tmp.path().join("with"));
    assert!(ok, "{err}");
    let (ok, err) = run_into(&bare, &tmp.path().join("without"));
    assert!(ok, "{err}");
    for file in ["hosts.csv", "results.csv", "timeseries.csv"] {
        let a = std::fs::read(tmp.path().join("with").join(file));
        let b = std::fs::read(tmp.path().join("without").join(file));
        let (a, b) = (a.unwrap_or_else(|e| panic!("{file}: {e}")), b.unwrap());
        assert!(!a.is_empty(), "{file} is empty");
        assert!(a == b, "{file} differs");
    }
}
