//! `boinc-sim sweep` and `sweep-merge` end to end: results independent of the thread
//! count, a killed sweep resumed to the same files, shards merged to the same files as
//! a local run, and bad sweep files refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn quickstart() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/quickstart.toml")
        .display()
        .to_string()
        .replace('\\', "/")
}

/// A small sweep: 2 delay bounds x 2 quorums, `reps` replications, 40 hosts for 2
/// days (well under a second per run).
fn small_sweep(dir: &Path, reps: u32, extra: &str) -> PathBuf {
    let p = dir.join("small.toml");
    std::fs::write(
        &p,
        format!(
            r#"[sweep]
name = "small"
scenario = "{}"
seed = 5
replications = {reps}
metrics = ["workunits_assimilated_per_day", "deadline_miss_frac", "turnaround_p90_s"]

[sweep.set]
"simulation.duration" = "2d"
"host_group.0.count" = 40
"client.policy" = "modern_rec"

[[parameter]]
key = "project.main.workunit.delay_bound"
values = ["1d", "3d"]

[[parameter]]
key = "project.main.workunit.min_quorum"
also = ["project.main.workunit.target_nresults"]
values = [1, 2]
{extra}"#,
            quickstart()
        ),
    )
    .unwrap();
    p
}

const TABLES: [&str; 3] = ["sweep.csv", "sweep-summary.csv", "best.json"];
const OBJECTIVE: &str = r#"
[objective]
maximize = "workunits_assimilated_per_day"
subject_to = ["deadline_miss_frac < 0.5"]
"#;

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ];
    args.extend(extra);
    bin(&args)
}

fn same_tables(a: &Path, b: &Path) {
    for f in TABLES {
        let x = std::fs::read(a.join(f)).unwrap_or_else(|e| panic!("{}: {e}", a.join(f).display()));
        let y = std::fs::read(b.join(f)).unwrap_or_else(|e| panic!("{}: {e}", b.join(f).display()));
        assert!(x.len() > 50, "{f} is nearly empty");
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn one_and_four_threads_give_identical_files_and_sensible_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_sweep(tmp.path(), 3, OBJECTIVE);
    let (one, four) = (tmp.path().join("j1"), tmp.path().join("j4"));
    for (out, j) in [(&one, "1"), (&four, "4")] {
        let o = bin(&[
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--jobs",
            j,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    same_tables(&one, &four);
    // The charts too: a band per metric and parameter, a heatmap per metric.
    let mut charts: Vec<String> = std::fs::read_dir(one.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".boinc-sim")
        .collect();
    charts.sort();
    assert_eq!(charts.len(), 3 * 3 * 2, "{charts:?}");
    assert!(charts.contains(&"heatmap_deadline_miss_frac_delay_bound_min_quorum.svg".into()));
    for c in charts.iter().filter(|c| c.ends_with(".svg")) {
        let x = std::fs::read(one.join("plots").join(c)).unwrap();
        assert!(
            x == std::fs::read(four.join("plots").join(c)).unwrap(),
            "{c}"
        );
    }

    // sweep.csv: one row per point and replication, with parameters and metrics.
    let mut r = csv::Reader::from_path(one.join("sweep.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "point",
            "replication",
            "seed",
            "project.main.workunit.delay_bound",
            "project.main.workunit.min_quorum",
            "workunits_assimilated_per_day",
            "deadline_miss_frac",
            "turnaround_p90_s"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 4 * 3);
    assert_eq!((&rows[0][3], &rows[0][4]), ("1d", "1"));
    assert_eq!((&rows[11][3], &rows[11][4]), ("3d", "2"));
    // Every run has its own seed.
    let mut seeds: Vec<&str> = rows.iter().map(|r| r.get(2).unwrap()).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), 12);

    // sweep-summary.csv: the mean and interval of each point agree with sweep.csv.
    let mut r = csv::Reader::from_path(one.join("sweep-summary.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let summary: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(summary.len(), 4);
    for (p, s) in summary.iter().enumerate() {
        assert_eq!(&s[col("n")], "3");
        let xs: Vec<f64> = rows[3 * p..3 * p + 3]
            .iter()
            .map(|r| r[5].parse().unwrap())
            .collect();
        let mean = xs.iter().sum::<f64>() / 3.0;
        let got: f64 = s[col("workunits_assimilated_per_day_mean")]
            .parse()
            .unwrap();
        assert!((got - mean).abs() < 1e-9 * mean.max(1.0), "point {p}");
        let lo: f64 = s[col("workunits_assimilated_per_day_ci95_low")]
            .parse()
            .unwrap();
        let hi: f64 = s[col("workunits_assimilated_per_day_ci95_high")]
            .parse()
            .unwrap();
        assert!(lo <= mean && mean <= hi && (mean - lo - (hi - mean)).abs() < 1e-6);
    }
    // Quorum 2 halves throughput: the objective picks a quorum-1 point.
    let best: serde_json::Value =
        serde_json::from_slice(&std::fs::read(one.join("best.json")).unwrap()).unwrap();
    assert_eq!(
        best["best"]["parameters"]["project.main.workunit.min_quorum"],
        "1"
    );
}

#[test]
fn a_killed_sweep_resumes_to_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_sweep(tmp.path(), 4, OBJECTIVE);
    let whole = tmp.path().join("whole");
    assert!(sweep(&file, &whole, &["--jobs", "2"]).status.success());

    let out = tmp.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(["sweep", file.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--quiet", "--no-plots", "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once a few runs are recorded, well before the 16th.
    let runs = out.join("runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let n = std::fs::read_dir(&runs).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        });
        if n >= 3 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = std::fs::read_dir(&runs).unwrap().count();
    assert!(done < 16, "the sweep finished before it was killed");
    // Nothing looks complete.
    for f in TABLES {
        assert!(!out.join(f).exists(), "{f} written by a killed sweep");
    }

    let o = bin(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-plots",
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("resumed: ") && err.contains("already done"),
        "{err}"
    );
    same_tables(&whole, &out);
}

#[test]
fn merged_shards_equal_a_local_run_and_gaps_or_overlaps_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_sweep(tmp.path(), 2, OBJECTIVE);
    let local = tmp.path().join("local");
    assert!(sweep(&file, &local, &[]).status.success());

    let sharded = tmp.path().join("sharded");
    let s = sharded.to_str().unwrap();
    let o = sweep(&file, &sharded, &["--shard", "0/2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for f in TABLES {
        assert!(!sharded.join(f).exists(), "a shard wrote {f}");
    }
    // One shard missing: the merge names what is missing.
    let o = bin(&["sweep-merge", s, "--no-plots"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("4 of 8 runs are missing"), "{err}");
    assert!(err.contains("point 1 replication 0"), "{err}");

    assert!(sweep(&file, &sharded, &["--shard", "1/2"]).status.success());
    let o = bin(&["sweep-merge", s, "--no-plots"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    same_tables(&local, &sharded);

    // A run recorded by two shards: the shards overlap.
    let extra = sharded.join("shard-9-of-10").join("runs");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::copy(
        sharded.join("shard-0-of-2/runs/p0000-r00.json"),
        extra.join("p0000-r00.json"),
    )
    .unwrap();
    let o = bin(&["sweep-merge", s, "--no-plots"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("the shards overlap"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn emit_slurm_writes_an_array_script_of_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_sweep(tmp.path(), 2, "");
    let dir = tmp.path().join("cluster");
    let o = bin(&[
        "sweep",
        file.to_str().unwrap(),
        "--emit-slurm",
        dir.to_str().unwrap(),
        "--shards",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let script = std::fs::read_to_string(dir.join("sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2\n"), "{script}");
    assert!(
        script.contains("--shard \"${SLURM_ARRAY_TASK_ID}/3\""),
        "{script}"
    );
    assert!(
        script.contains(&format!("--out '{}'", dir.display())),
        "{script}"
    );
    // Nothing ran.
    assert!(!dir.join("runs").exists());
    // More shards than points is refused.
    let o = bin(&[
        "sweep",
        file.to_str().unwrap(),
        "--emit-slurm",
        dir.to_str().unwrap(),
        "--shards",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn sampled_designs_have_the_requested_points() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("lhs.toml");
    std::fs::write(
        &p,
        format!(
            r#"[sweep]
scenario = "{}"
design = "lhs"
points = 5
metrics = ["workunits_assimilated_per_day"]
[sweep.set]
"simulation.duration" = "1d"
"host_group.0.count" = 20
[[parameter]]
key = "project.main.workunit.delay_bound"
range = {{ from = "1d", to = "6d" }}
"#,
            quickstart()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = sweep(&p, &out, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("sweep-summary.csv")).unwrap();
    let mut strata: Vec<i64> = r
        .records()
        .map(|x| {
            let v: i64 = x.unwrap()[1].parse().unwrap();
            assert!((86_400..=518_400).contains(&v));
            (v - 86_400) / 86_400
        })
        .collect();
    strata.sort();
    assert_eq!(strata, [0, 1, 2, 3, 4], "one point per fifth of the range");
    assert!(!out.join("best.json").exists());
}

#[test]
fn bad_sweep_files_fail_before_any_run_with_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "[sweep]\nscenario = \"x.toml\"\nreplication = 3\n",
            "unknown",
            &[":3:1", "replication"],
        ),
        (
            "SCENARIO\nmetrics = [\"throughput\"]\n[[parameter]]\nkey = \"simulation.seed\"\nvalues = [1]\n",
            "unknown metric `throughput`",
            &[":3:", "sweep.metrics.0"],
        ),
        (
            "SCENARIO\n[[parameter]]\nkey = \"project.main.workunit.min_quorum\"\nvalues = [1, 0]\n",
            "point 1 (project.main.workunit.min_quorum = 0) is not a valid scenario",
            &[
                ":5:14: `parameter.0.values.1`",
                "min_quorum = 0 is too small",
            ],
        ),
        (
            "SCENARIO\npoints = 4\n[[parameter]]\nkey = \"simulation.seed\"\nvalues = [1]\n",
            "`points` is for design",
            &["sweep.points"],
        ),
        (
            "[sweep]\nscenario = \"missing.toml\"\n[[parameter]]\nkey = \"simulation.seed\"\nvalues = [1]\n",
            "no scenario file at",
            &["sweep.scenario", ":2:"],
        ),
        (
            "SCENARIO\n[[parameter]]\nkey = \"simulation.seed\"\nvalues = [1]\n[objective]\nmaximize = \"results_sent\"\n",
            "is not one of the sweep's metrics",
            &["objective.maximize"],
        ),
    ];
    for (i, (body, says, also)) in cases.iter().enumerate() {
        let body = body.replace(
            "SCENARIO",
            &format!("[sweep]\nscenario = \"{}\"", quickstart()),
        );
        let p = tmp.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, body).unwrap();
        let out = tmp.path().join(format!("out{i}"));
        let o = sweep(&p, &out, &[]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "case {i}: {err}");
        assert!(err.starts_with("error: "), "case {i}: {err}");
        assert!(err.contains(says), "case {i}: {err}");
        for a in *also {
            assert!(err.contains(a), "case {i}: `{a}` not in {err}");
        }
        assert!(!err.contains("panicked"), "case {i}: {err}");
        assert!(!out.exists(), "case {i}: a bad sweep created its folder");
    }
    // A folder of another sweep is not mixed with this one.
    let file = small_sweep(tmp.path(), 1, "");
    let out = tmp.path().join("shared");
    assert!(sweep(&file, &out, &[]).status.success());
    let other = small_sweep(tmp.path(), 2, "");
    let o = sweep(&other, &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("holds the runs of a different sweep"));
}
