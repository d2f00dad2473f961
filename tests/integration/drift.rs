//! The measured window and the drift warnings end to end (`stats::drift`,
//! docs/outputs.md "Drift warnings"): a run of adaptive replication whose science
//! error rises as hosts earn trust warns, on stderr under its figure and in
//! `summary.json`; the same run measured past the trust's onset does not.

use crate::common::{run, text};

fn warnings(dir: &std::path::Path) -> Vec<String> {
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_rising_science_error_warns_and_a_steady_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("drift");
    let o = run(&[
        "run",
        "scenarios/adaptive-drift.toml",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let science = "warning: project main: wrong_canonical_frac drifts: 0.122 % in days 1–8.7 → \
                   0.586 % in days 16.3–24 (z = 3.6); the run has not reached a steady state";
    assert!(err.contains(science), "{err}");
    // Each warning right under its figure.
    let lines: Vec<&str> = err.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{err}"))
    };
    assert_eq!(
        at("warning: project main: wrong_canonical_frac"),
        at("wrong canonical") + 1
    );
    assert_eq!(
        at("warning: project main: workunits_valid_per_day"),
        at("valid workunits") + 1
    );
    assert!(
        lines[at("wrong canonical")]
            .ends_with("0.5 % (80 of 15,862 canonical results of known truth)"),
        "{err}"
    );
    assert_eq!(
        lines[at("measured window")].trim(),
        "measured window     days 1–24"
    );
    let w = warnings(&out);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("project main: workunits_valid_per_day drifts: "),
        "{w:?}"
    );
    assert_eq!(w[1], science.strip_prefix("warning: ").unwrap());

    // Measured past the trust's onset: steady, no warning.
    let quiet = tmp.path().join("steady");
    let o = run(&[
        "run",
        "scenarios/adaptive-drift.toml",
        "--set",
        "output.warmup=10d",
        "--no-progress",
        "--out",
        quiet.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(err.contains("measured window     days 10–24"), "{err}");
    assert_eq!(warnings(&quiet), Vec::<String>::new());
    // The window's science error is the rate after day 10 (0.64 %), not the run's.
    let summary = std::fs::read_to_string(quiet.join("summary.csv")).unwrap();
    let mut rows = summary.lines().map(|l| l.split(',').collect::<Vec<_>>());
    let header = rows.next().unwrap();
    let row = rows.next().unwrap();
    let col = |name: &str| row[header.iter().position(|c| *c == name).unwrap()];
    assert_eq!(col("workunits_wrong_canonical"), "72.0");
    assert_eq!(
        col("wrong_canonical_frac").parse::<f64>().unwrap(),
        72.0 / 11_246.0
    );
    // The per-bucket columns add up to the window's counts.
    let ts = std::fs::read_to_string(quiet.join("timeseries.csv")).unwrap();
    let (mut wrong, mut known) = (0.0, 0.0);
    for l in ts.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let t: i64 = f[0].parse().unwrap();
        if t < 10 * 86_400 {
            continue;
        }
        match f[2] {
            "workunits_wrong_canonical" => wrong += f[3].parse::<f64>().unwrap(),
            "workunits_canonical_known" => known += f[3].parse::<f64>().unwrap(),
            _ => {}
        }
    }
    assert_eq!((wrong, known), (72.0, 11_246.0));
}

/// The shipped cases sweep of adaptive replication against quorum 2: the sweep
/// warns that adaptive replication's science error drifts, at both of its points,
/// and says nothing of quorum 2 (docs/sweep.md, "Drift").
#[test]
fn a_cases_sweep_warns_on_the_adaptive_replication_case_only() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let o = run(&[
        "sweep",
        "scenarios/sweeps/adaptive-drift.toml",
        "--no-plots",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let best: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("best.json")).unwrap()).unwrap();
    let w: Vec<&str> = best["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for point in [
        "point 2 (case = adaptive replication",
        "point 3 (case = adaptive replication",
    ] {
        assert!(
            w.iter().any(
                |m| m.starts_with(point) && m.contains("wrong_canonical_frac drifts in 3 of 3")
            ),
            "{w:?}"
        );
    }
    assert!(!w.iter().any(|m| m.contains("quorum 2")), "{w:?}");
    assert!(
        err.contains("warning: point 2 (case = adaptive replication"),
        "{err}"
    );
}
