//! `boinc-sim compare` end to end: two runs of the quickstart that differ only in
//! `delay_bound`, compared; the configuration diff names the key, `compare.csv` has
//! every run's own summary values and their differences; bad inputs fail with one
//! line and exit status 2.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{root, run as bin, text};

/// Runs the quickstart cut to 50 hosts and 2 days with `delay_bound` set, into `out`.
fn run_quickstart(out: &Path, delay_bound: &str, extra: &[&str]) {
    run_scenario("scenarios/quickstart.toml", out, delay_bound, extra);
}

/// [`run_quickstart`] of another scenario file.
fn run_scenario(scenario: &str, out: &Path, delay_bound: &str, extra: &[&str]) {
    let set = format!("project.main.workunit.delay_bound={delay_bound}");
    let mut args = vec![
        "run",
        scenario,
        "--set",
        "simulation.duration=2d",
        "--set",
        "host_group.0.count=50",
        "--set",
        &set,
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend(extra);
    let o = bin(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Two runs with delay_bound 3 and 7 days, made once per test process in Cargo's
/// temporary folder for integration tests.
fn runs() -> &'static (PathBuf, PathBuf) {
    static RUNS: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-runs");
        let (a, b) = (dir.join("db3"), dir.join("db7"));
        run_quickstart(&a, "3d", &[]);
        run_quickstart(&b, "7d", &[]);
        (a, b)
    })
}

/// A run's summary values by (project, metric), read the way the docs say: from
/// `summary.csv` when the folder has it, else from `summary.json`'s projects.
fn summary_values(run: &Path) -> BTreeMap<(String, String), Option<f64>> {
    let mut out = BTreeMap::new();
    let csv_path = run.join("summary.csv");
    if csv_path.exists() {
        let mut r = csv::Reader::from_path(&csv_path).unwrap();
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        for rec in r.records() {
            let rec = rec.unwrap();
            for (c, name) in header.iter().enumerate().skip(1) {
                let v = rec.get(c).unwrap();
                if v.is_empty() || v.parse::<f64>().is_ok() {
                    out.insert((rec[0].to_string(), name.clone()), v.parse().ok());
                }
            }
        }
        return out;
    }
    fn leaves(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    leaves(x, p, out);
                }
            }
            Value::Number(n) => out.push((path, n.as_f64().unwrap())),
            _ => {}
        }
    }
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    for (p, v) in s["projects"].as_object().unwrap() {
        let mut l = Vec::new();
        leaves(v, String::new(), &mut l);
        for (m, x) in l {
            out.insert((p.clone(), m), Some(x));
        }
    }
    out
}

/// `compare.csv` as records of strings.
fn compare_rows(dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(dir.join("compare.csv")).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn num(s: &str) -> Option<f64> {
    (!s.is_empty()).then(|| s.parse().unwrap())
}

#[test]
fn compare_shows_the_changed_key_and_every_runs_own_values() {
    let (a, b) = runs();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let stdout = compare_into(a, b, &out);
    assert!(
        stdout.contains(
            "Configuration keys that differ (1):\n  project.main.workunit.delay_bound: 3d → 7d\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("[1] db3"), "{stdout}");
    assert!(stdout.contains("[2] db7"), "{stdout}");
    assert!(
        stdout.contains("--set project.main.workunit.delay_bound=7d"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("project  metric") && l.contains("db3") && l.contains("Δ%")),
        "{stdout}"
    );

    let (header, rows) = compare_rows(&out);
    assert_eq!(
        header,
        [
            "project",
            "metric",
            "run",
            "value",
            "diff_vs_first",
            "rel_diff_vs_first"
        ]
    );
    let (va, vb) = (summary_values(a), summary_values(b));
    assert_eq!(va.keys().collect::<Vec<_>>(), vb.keys().collect::<Vec<_>>());
    // One row per (project, metric, run), every value the run's own, every
    // difference against the first run.
    assert_eq!(rows.len(), 2 * va.len());
    let mut first: BTreeMap<(String, String), Option<f64>> = BTreeMap::new();
    for r in &rows {
        let key = (r[0].clone(), r[1].clone());
        let own = match r[2].as_str() {
            "db3" => &va,
            "db7" => &vb,
            other => panic!("run {other}"),
        };
        let value = num(&r[3]);
        assert_eq!(value, own[&key], "{r:?}");
        if r[2] == "db3" {
            first.insert(key.clone(), value);
        }
        let expected = value.zip(first[&key]).map(|(v, f)| v - f);
        assert_eq!(num(&r[4]), expected, "{r:?}");
        if let (Some(d), Some(f), Some(rel)) = (expected, first[&key], num(&r[5])) {
            assert!(
                (rel * f.abs() - d).abs() <= 1e-9 * d.abs().max(1.0),
                "{r:?}"
            );
        }
    }
    // The folder has the files it says, and nothing is left beside it.
    let mut names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want = vec![
        ".boinc-sim".to_string(),
        "compare.csv".to_string(),
        "config_diff.csv".to_string(),
    ];
    for chart in ["deadlines", "rpcs", "server", "throughput", "turnaround"] {
        for ext in ["png", "svg"] {
            want.push(format!("compare_{chart}.{ext}"));
        }
    }
    want.sort();
    assert_eq!(names, want);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    // Each overlay chart draws both runs, named by their labels, and is a real PNG.
    for chart in ["throughput", "turnaround", "server"] {
        let svg = std::fs::read_to_string(out.join(format!("compare_{chart}.svg"))).unwrap();
        for label in ["db3", "db7"] {
            assert!(svg.lines().any(|l| l.trim() == label), "{chart}: {label}");
        }
        let png = std::fs::read(out.join(format!("compare_{chart}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{chart}");
    }
    assert!(stdout.contains("Overlay charts (PNG and SVG): compare_throughput"));
    let diff = std::fs::read_to_string(out.join("config_diff.csv")).unwrap();
    assert_eq!(
        diff,
        "key,run,value\n\
         project.main.workunit.delay_bound,db3,3d\n\
         project.main.workunit.delay_bound,db7,7d\n"
    );
    // When summary.csv gives the delay bound, it is the one each run was given.
    let key = ("main".to_string(), "delay_bound_s".to_string());
    if let (Some(x), Some(y)) = (va.get(&key), vb.get(&key)) {
        assert_eq!((*x, *y), (Some(259200.0), Some(604800.0)));
    }
}

#[test]
fn labels_name_the_runs_and_a_rerun_replaces_the_folder() {
    let (a, b) = runs();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    for _ in 0..2 {
        let o = bin(&[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            a.to_str().unwrap(),
            "--label",
            "short",
            "--label",
            "long",
            "--label",
            "again",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains("delay_bound: 3d → 7d → 3d"));
    }
    let (_, rows) = compare_rows(&out);
    let runs: Vec<&str> = rows.iter().take(3).map(|r| r[2].as_str()).collect();
    assert_eq!(runs, ["short", "long", "again"]);
    // The third run is the first again: no difference anywhere.
    assert!(
        rows.iter()
            .filter(|r| r[2] == "again")
            .all(|r| r[4].is_empty() || r[4] == "0.0")
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

/// Copies the summary.json and manifest.json of `src` into `dst` (a folder without
/// summary.csv), passing summary.json through `edit`.
fn copy_without_csv(src: &Path, dst: &Path, edit: impl Fn(&mut Value)) {
    std::fs::create_dir(dst).unwrap();
    std::fs::copy(src.join("manifest.json"), dst.join("manifest.json")).unwrap();
    let mut s: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("summary.json")).unwrap()).unwrap();
    edit(&mut s);
    std::fs::write(dst.join("summary.json"), s.to_string()).unwrap();
}

fn compare_into(a: &Path, b: &Path, out: &Path) -> String {
    let o = bin(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn without_summary_csv_the_metrics_come_from_summary_json() {
    let (a, b) = runs();
    let tmp = tempfile::tempdir().unwrap();

    // summary.json repeats summary.csv's row under `headline`: the same comparison.
    let with_csv = compare_rows(&{
        let out = tmp.path().join("cmp-csv");
        compare_into(a, b, &out);
        out
    })
    .1;
    let (j3, j7) = (tmp.path().join("db3"), tmp.path().join("db7"));
    copy_without_csv(a, &j3, |_| {});
    copy_without_csv(b, &j7, |_| {});
    let out = tmp.path().join("cmp-json");
    let stdout = compare_into(&j3, &j7, &out);
    assert!(stdout.contains("metrics from summary.json"), "{stdout}");
    let mut from_json = compare_rows(&out).1;
    let mut from_csv = with_csv.clone();
    from_json.sort();
    from_csv.sort();
    assert_eq!(from_json, from_csv);

    // A folder from before summary.csv (and before the credit figures): every
    // numeric figure of each project.
    let strip = |s: &mut Value| {
        for p in s["projects"].as_object_mut().unwrap().values_mut() {
            p.as_object_mut().unwrap().remove("headline");
            p.as_object_mut().unwrap().remove("credit_neutrality");
        }
    };
    let (o3, o7) = (tmp.path().join("old3"), tmp.path().join("old7"));
    copy_without_csv(a, &o3, strip);
    copy_without_csv(b, &o7, strip);
    let out = tmp.path().join("cmp-old");
    compare_into(&o3, &o7, &out);
    let rows = compare_rows(&out).1;
    let va = summary_values(&o3);
    assert_eq!(rows.len(), 2 * va.len());
    let workunits = rows
        .iter()
        .find(|r| r[1] == "results_by_outcome.success" && r[2] == "old3")
        .expect("a nested figure of summary.json");
    assert_eq!(
        num(&workunits[3]),
        va[&("main".to_string(), "results_by_outcome.success".to_string())]
    );
}

#[test]
fn runs_with_different_projects_compare_the_shared_ones_and_list_the_others() {
    let (a, _) = runs();
    let tmp = tempfile::tempdir().unwrap();
    let two = tmp.path().join("two-projects");
    // A `--set` cannot add a project (a misspelling must not make one): the
    // quickstart with a second project, as a file.
    let quickstart = std::fs::read_to_string(root().join("scenarios/quickstart.toml")).unwrap();
    let file = tmp.path().join("two.toml");
    std::fs::write(
        &file,
        format!("{quickstart}\n[project.extra.workunit]\ndelay_bound = \"1d\"\n"),
    )
    .unwrap();
    run_scenario(
        file.to_str().unwrap(),
        &two,
        "3d",
        &["--set", "host_group.0.project=main"],
    );
    let out = tmp.path().join("cmp");
    let stdout = compare_into(a, &two, &out);
    assert!(
        stdout
            .contains("Projects not in every run (not compared):\n  extra: only in two-projects\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  project.extra: (absent) → ("), "{stdout}");
    let (_, rows) = compare_rows(&out);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[0] == "main"));
}

#[test]
fn bad_inputs_fail_with_one_line_and_status_2() {
    let (a, _) = runs();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let out = out.to_str().unwrap();
    let a = a.to_str().unwrap();

    // Fewer than two runs: a usage error from the argument parser.
    let o = bin(&["compare", a, "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("Usage:"), "{}", text(&o.stderr));

    let empty = tmp.path().join("not-a-run");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "x").unwrap();
    let missing = tmp.path().join("missing");
    let only_manifest = tmp.path().join("only-manifest");
    std::fs::create_dir(&only_manifest).unwrap();
    std::fs::copy(
        Path::new(a).join("manifest.json"),
        only_manifest.join("manifest.json"),
    )
    .unwrap();
    let bad_json = tmp.path().join("bad-json");
    std::fs::create_dir(&bad_json).unwrap();
    std::fs::write(bad_json.join("summary.json"), "{ not json").unwrap();
    for (dir, says) in [
        (
            &empty,
            "it has no summary.csv, summary.json or manifest.json",
        ),
        (&missing, "no such folder"),
        (
            &only_manifest,
            "it has manifest.json but no summary.csv or summary.json",
        ),
        (&bad_json, "summary.json: not valid JSON"),
    ] {
        let o = bin(&["compare", a, dir.to_str().unwrap(), "--out", out]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(dir.to_str().unwrap()), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Nothing was written.
    assert!(!Path::new(out).exists());

    let o = bin(&["compare", a, a, "--label", "x", "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("1 --label for 2 runs"));
}
