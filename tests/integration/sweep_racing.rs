//! `boinc-sim sweep --racing` end to end (docs/sweep.md, "Racing"), on
//! `tests/sweeps/racing-quorum.toml`, whose full design knows the answer (quorum 2):
//! the race finds the same best point with fewer runs, its runs are the full
//! design's runs (same seeds, same values), its files do not depend on the thread
//! count, a killed or budget-stopped race resumes to the same files, and racing is
//! refused where it cannot work.

use std::path::Path;
use std::process::{Output, Stdio};

use crate::common::{command, run, text};

const RACE: &str = "tests/sweeps/racing-quorum.toml";
const TABLES: [&str; 3] = ["sweep.csv", "sweep-summary.csv", "best.json"];

fn sweep(file: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", file, "--out", out.to_str().unwrap(), "--no-plots"];
    args.extend(extra);
    run(&args)
}

fn ok(o: Output) -> String {
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    err
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn same_tables(a: &Path, b: &Path) {
    for f in TABLES {
        let x = std::fs::read(a.join(f)).unwrap_or_else(|e| panic!("{}: {e}", a.join(f).display()));
        let y = std::fs::read(b.join(f)).unwrap_or_else(|e| panic!("{}: {e}", b.join(f).display()));
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

/// `sweep.csv`'s rows keyed by (point, replication): seed and metrics.
fn rows(dir: &Path) -> std::collections::BTreeMap<(String, String), Vec<String>> {
    let mut r = csv::Reader::from_path(dir.join("sweep.csv")).unwrap();
    r.records()
        .map(|x| {
            let x = x.unwrap();
            let cells: Vec<String> = x.iter().map(String::from).collect();
            ((cells[0].clone(), cells[1].clone()), cells[2..].to_vec())
        })
        .collect()
}

fn records(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("runs")).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .count()
    })
}

#[test]
fn a_race_finds_the_full_designs_best_point_with_fewer_runs_whatever_the_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, one, two) = (
        tmp.path().join("full"),
        tmp.path().join("j1"),
        tmp.path().join("j2"),
    );
    ok(sweep(RACE, &full, &["--quiet", "--jobs", "2"]));
    ok(sweep(RACE, &one, &["--racing", "--quiet", "--jobs", "1"]));
    let err = ok(sweep(RACE, &two, &["--racing", "--jobs", "2"]));
    same_tables(&one, &two);

    // The same best point as the full design, with fewer runs.
    let (f, r) = (json(&full.join("best.json")), json(&one.join("best.json")));
    assert_eq!(f["best"]["point"], 1, "{f}");
    assert_eq!(r["best"]["point"], f["best"]["point"]);
    assert_eq!(r["best"]["parameters"], f["best"]["parameters"]);
    assert!(
        f.get("racing").is_none(),
        "a full sweep has no racing section"
    );
    let race = &r["racing"];
    let ran = race["runs"].as_u64().unwrap();
    assert_eq!(race["full_design_runs"], 15);
    assert!((6..15).contains(&ran), "{race}");
    assert_eq!(race["saved"], 15 - ran);
    assert_eq!(race["stopped"], "clear");
    assert_eq!(race["budget"], serde_json::Value::Null);

    // Why each point got what it got: quorum 1 is infeasible, quorum 3 worse
    // than quorum 2, each dropped with at least two replications.
    let points = race["points"].as_array().unwrap();
    let status: Vec<&str> = points
        .iter()
        .map(|p| p["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["dropped", "best", "dropped"], "{race}");
    assert_eq!(points[1]["replications"], 5);
    let reason = |p: usize| points[p]["reason"].as_str().unwrap();
    assert!(
        reason(0).starts_with("infeasible: wrong_canonical_frac mean ")
            && reason(0).ends_with(" vs limit < 0.002"),
        "{}",
        reason(0)
    );
    assert_eq!(points[0]["constraint"], "wrong_canonical_frac < 0.002");
    assert!(points[0]["metric"]["ci95_low"].as_f64().unwrap() > 0.002);
    assert!(
        reason(2).starts_with("worse than point 1: difference mean "),
        "{}",
        reason(2)
    );
    assert_eq!(points[2]["compared_with"], 1);
    assert!(points[2]["difference"]["ci95_low"].as_f64().unwrap() > 0.0);
    for p in [0, 2] {
        let reps = points[p]["replications"].as_u64().unwrap();
        assert!(reps >= 2, "point {p} dropped with one replication");
        // Dropped after round k, it has replications 0..=k.
        assert_eq!(points[p]["round"].as_u64().unwrap() + 1, reps);
    }
    let total: u64 = points
        .iter()
        .map(|p| p["replications"].as_u64().unwrap())
        .sum();
    assert_eq!(total, ran);

    // Common random numbers: every run of the race is the full design's run of
    // the same point and replication, seed and values alike.
    let (full_rows, race_rows) = (rows(&full), rows(&one));
    assert_eq!(race_rows.len() as u64, ran);
    for (k, v) in &race_rows {
        assert_eq!(Some(v), full_rows.get(k), "run {k:?}");
    }
    let design = std::fs::read_to_string(one.join("design.json")).unwrap();
    assert!(design.contains("\"racing\": true"), "{design}");
    let full_design = std::fs::read_to_string(full.join("design.json")).unwrap();
    assert!(!full_design.contains("\"racing\":"), "{full_design}");

    // The printout: each round, then what racing ran and saved.
    assert!(
        err.contains("racing round 0: 3 of 3 points alive, replication 0 (3 runs)"),
        "{err}"
    );
    let line = format!(
        "racing: {ran} runs in 5 rounds instead of the full design's 15 ({} saved, ",
        15 - ran
    );
    assert!(err.contains(&line), "{line} not in {err}");
    assert!(
        err.contains("2 of 3 points dropped (1 worse, 1 infeasible); the verdict is clear"),
        "{err}"
    );
    assert!(err.contains("racing-quorum: 3 points, up to 5 replications each (racing)"));
    assert!(err.contains("best: point 1 (min_quorum = 2)"), "{err}");
}

#[test]
fn a_killed_or_budget_stopped_race_resumes_to_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    ok(sweep(RACE, &whole, &["--racing", "--quiet", "--jobs", "2"]));
    let ran = json(&whole.join("best.json"))["racing"]["runs"]
        .as_u64()
        .unwrap() as usize;

    // A budget of 7 runs stops the race before round 2 (6 runs, then 2 or 3
    // more): complete tables of a race that says it stopped.
    let out = tmp.path().join("budget");
    let err = ok(sweep(
        RACE,
        &out,
        &["--racing", "--budget", "7", "--jobs", "2"],
    ));
    assert!(
        err.contains("stopped by --budget 7 with 2 points alive"),
        "{err}"
    );
    let race = json(&out.join("best.json"))["racing"].clone();
    assert_eq!(
        (race["runs"].as_u64(), race["stopped"].as_str()),
        (Some(6), Some("budget"))
    );
    assert_eq!(race["budget"], 7);
    assert_eq!(records(&out), 6);

    // Resumed without a budget and killed after its first new run: the folder
    // has no tables (they described the budget's race, not these runs).
    let mut child = command()
        .args(["sweep", RACE, "--out"])
        .arg(&out)
        .args(["--racing", "--quiet", "--no-plots", "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while records(&out) < 7 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        records(&out) < ran,
        "the race finished before it was killed"
    );
    for f in TABLES {
        assert!(!out.join(f).exists(), "{f} left beside a killed race");
    }
    let err = ok(sweep(RACE, &out, &["--racing", "--jobs", "2"]));
    assert!(
        err.contains("resumed: ") && err.contains("already done"),
        "{err}"
    );
    same_tables(&whole, &out);
    assert_eq!(records(&out), ran);

    // A round half done (records missing in the middle of the race) is finished
    // with the same decisions.
    let partial = tmp.path().join("partial");
    std::fs::create_dir_all(partial.join("runs")).unwrap();
    std::fs::copy(whole.join("design.json"), partial.join("design.json")).unwrap();
    let mut kept = 0;
    for e in std::fs::read_dir(whole.join("runs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // Every run of replications 0 and 1, and point 1's of replication 2.
        if name.ends_with("-r00.json") || name.ends_with("-r01.json") || name == "p0001-r02.json" {
            std::fs::copy(e.path(), partial.join("runs").join(&name)).unwrap();
            kept += 1;
        }
    }
    assert_eq!(kept, 7);
    let err = ok(sweep(RACE, &partial, &["--racing", "--jobs", "2"]));
    assert!(
        err.contains("racing round 2: 2 of 3 points alive, replication 2 (1 run, 1 found done)"),
        "{err}"
    );
    same_tables(&whole, &partial);
}

#[test]
fn racing_is_refused_without_an_objective_in_shards_and_in_another_kind_of_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let refused = |o: Output, says: &str| {
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with("error: ") && err.contains(says),
            "{says} not in {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    };
    // Without an objective: nothing runs, no folder.
    let text = std::fs::read_to_string(crate::common::root().join(RACE)).unwrap();
    let plain = tmp.path().join("plain.toml");
    let cut = text.find("[objective]").unwrap();
    std::fs::write(
        &plain,
        text[..cut].replace(
            "../../scenarios/science-error.toml",
            &crate::common::root()
                .join("scenarios/science-error.toml")
                .display()
                .to_string()
                .replace('\\', "/"),
        ),
    )
    .unwrap();
    refused(
        sweep(plain.to_str().unwrap(), &out, &["--racing"]),
        "--racing needs an [objective]",
    );
    assert!(!out.exists());
    // Not as Slurm shards, nor in an array script.
    refused(
        sweep(RACE, &out, &["--racing", "--shard", "0/2"]),
        "--racing does not run as Slurm shards",
    );
    let slurm = tmp.path().join("slurm");
    refused(
        run(&[
            "sweep",
            RACE,
            "--racing",
            "--emit-slurm",
            slurm.to_str().unwrap(),
        ]),
        "--racing does not run as Slurm shards",
    );
    assert!(!out.exists() && !slurm.exists());
    // A budget under the first round's runs; a budget without --racing.
    refused(
        sweep(RACE, &out, &["--racing", "--budget", "2"]),
        "--budget 2 is less than the 3 runs of the race's first round",
    );
    refused(sweep(RACE, &out, &["--budget", "5"]), "--racing");
    assert!(!out.exists());

    // A race of one round (the budget allows no second), then the folder is
    // refused to a full sweep and to sweep-merge.
    let err = ok(sweep(RACE, &out, &["--racing", "--budget", "3"]));
    assert!(
        err.contains("racing: 3 runs in 1 round instead of"),
        "{err}"
    );
    refused(sweep(RACE, &out, &[]), "holds a racing sweep of this file");
    refused(
        run(&["sweep-merge", out.to_str().unwrap(), "--no-plots"]),
        "holds a racing sweep, which does not run as shards",
    );
    // With one replication per point no interval exists: nothing is dropped.
    let race = json(&out.join("best.json"))["racing"].clone();
    for p in race["points"].as_array().unwrap() {
        assert_ne!(p["status"], "dropped", "{p}");
        assert_eq!(p["reason"], "one replication: no interval yet");
    }
    // A full design's folder is refused to a race.
    let full = tmp.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    let design = std::fs::read_to_string(out.join("design.json"))
        .unwrap()
        .replace(",\n  \"racing\": true", "");
    std::fs::write(full.join("design.json"), design).unwrap();
    refused(
        sweep(RACE, &full, &["--racing"]),
        "holds this sweep's full design, not a race",
    );
}
