//! Batches end to end (docs/outputs.md, "Batches"; spec backend §1.5): the batch
//! scenario run from the CLI writes `batches.csv`, `batch_progress.csv`, the batch
//! columns of `summary.csv` and the `batches` chart, identically twice; a run
//! without batches writes none of them; a bad batch is refused at its place.

use std::fs;
use std::path::Path;

use crate::common::{command as bin, err, has, text};

/// scenarios/batches.toml shrunk to 300 hosts and 12 days: batches on days 1, 5
/// and 9, into `out`.
fn run_batches(out: &Path) {
    let o = bin()
        .args(["run", "-q", "scenarios/batches.toml", "--out"])
        .arg(out)
        .args([
            "--set",
            "simulation.duration=\"12d\"",
            "--set",
            "host_group.0.count=200",
            "--set",
            "host_group.1.count=100",
            "--set",
            "project.main.work_generator.count=300",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let mut out = vec![header];
    for rec in r.records() {
        out.push(rec.unwrap().iter().map(String::from).collect());
    }
    out
}

fn col(table: &[Vec<String>], name: &str) -> usize {
    table[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn a_batch_run_writes_its_batches_and_repeats_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_batches(&a);
    run_batches(&b);
    for f in ["batches.csv", "batch_progress.csv", "summary.csv"] {
        assert_eq!(
            fs::read(a.join(f)).unwrap(),
            fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }

    let t = rows(&a.join("batches.csv"));
    assert_eq!(t.len(), 4, "three batches: {t:?}");
    let (sub, jobs, valid) = (
        col(&t, "submitted_s"),
        col(&t, "jobs"),
        col(&t, "jobs_valid"),
    );
    let submitted: Vec<&str> = t[1..].iter().map(|r| r[sub].as_str()).collect();
    assert_eq!(submitted, ["86400", "432000", "777600"]);
    let (t50, t90, t100) = (
        col(&t, "time_to_50_s"),
        col(&t, "time_to_90_s"),
        col(&t, "time_to_100_s"),
    );
    for r in &t[1..] {
        assert_eq!(r[jobs], "300");
        // The times to a larger share are never shorter.
        let t50: i64 = r[t50].parse().unwrap();
        let t90: i64 = r[t90].parse().unwrap();
        assert!(0 < t50 && t50 <= t90, "{r:?}");
        if let Ok(t100) = r[t100].parse::<i64>() {
            assert!(t90 <= t100 && r[valid] == "300", "{r:?}");
        }
    }
    // The first batch is done: every job valid, and BOINC's state COMPLETE (2).
    let first = &t[1];
    assert_eq!(first[col(&t, "state")], "2");
    assert_eq!(first[col(&t, "fraction_done")], "1.0");
    assert!(!first[t100].is_empty());

    // The progress of each batch ends at its completion or at the end of the run.
    let p = rows(&a.join("batch_progress.csv"));
    let last_of_first = p[1..].iter().rfind(|r| r[1] == "1").unwrap();
    assert_eq!(last_of_first[col(&p, "fraction_valid")], "1.0");

    let s = rows(&a.join("summary.csv"));
    assert_eq!(s[1][col(&s, "batches_submitted")], "3.0");
    assert!(s[0].iter().any(|c| c == "batch_completion_p90_s"));

    let o = bin().arg("plot").arg(&a).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(a.join("plots/batches.png").exists());
    assert!(a.join("plots/batches.svg").exists());
}

#[test]
fn a_run_without_batches_has_no_batch_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let o = bin()
        .args(["run", "-q", "scenarios/quickstart.toml", "--out"])
        .arg(&dir)
        .args([
            "--set",
            "simulation.duration=\"1d\"",
            "--set",
            "host_group.0.count=20",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!dir.join("batches.csv").exists());
    assert!(!dir.join("batch_progress.csv").exists());
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(!summary.contains("batch"));
    let o = bin().arg("plot").arg(&dir).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!dir.join("plots/batches.png").exists());
}

#[test]
fn a_bad_batch_is_refused_at_its_place() {
    let base = "[simulation]\nduration = \"1d\"\n\n[[event]]\nat = 10\n";
    let e = err(&format!("{base}submit_batch = {{ jobs = 0 }}\n"));
    has(
        &e,
        &[
            "bad.toml:6:",
            "event.0.submit_batch.jobs",
            "expected at least 1",
        ],
    );
    let e = err(&format!("{base}submit_batch = {{ jobs = 5, size = -1 }}\n"));
    has(&e, &["event.0.submit_batch.size", "factor <= 0"]);
    let e = err(&format!("{base}submit_batch = {{ jobs = 5, sizes = 2 }}\n"));
    has(&e, &["sizes"]);
    let e = err(
        "[simulation]\nduration = \"1d\"\n\n[project.main.work_generator]\nmode = \"batches\"\ncount = 10\ninterval = 0\n",
    );
    has(
        &e,
        &[
            "project.main.work_generator.interval",
            "mode = \"batches\" needs interval > 0",
        ],
    );
    let e = err(
        "[simulation]\nduration = \"1d\"\n\n[project.main.work_generator]\nmode = \"rate\"\nsize = 2\n",
    );
    has(
        &e,
        &["project.main.work_generator.size", "only with that mode"],
    );
}
