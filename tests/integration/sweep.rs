//! `boinc-sim sweep` and `sweep-merge` end to end: results independent of the thread
//! count, a killed sweep resumed to the same files, shards merged to the same files as
//! a local run, and bad sweep files refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::text;

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
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
metrics = ["workunits_valid_per_day", "deadline_miss_frac", "turnaround_p90_s"]

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
maximize = "workunits_valid_per_day"
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
            "project.main.workunit.delay_bound_s",
            "project.main.workunit.min_quorum",
            "workunits_valid_per_day",
            "deadline_miss_frac",
            "turnaround_p90_s"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 4 * 3);
    assert_eq!(
        (&rows[0][3], &rows[0][4], &rows[0][5]),
        ("1d", "86400", "1")
    );
    assert_eq!(
        (&rows[11][3], &rows[11][4], &rows[11][5]),
        ("3d", "259200", "2")
    );
    // Common random numbers: replication r has the same seed at every point, and
    // the replications have different seeds.
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(&r[2], &rows[i % 3][2], "run {i}");
    }
    let mut seeds: Vec<&str> = rows.iter().map(|r| r.get(2).unwrap()).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), 3);

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
            .map(|r| r[6].parse().unwrap())
            .collect();
        let mean = xs.iter().sum::<f64>() / 3.0;
        let got: f64 = s[col("workunits_valid_per_day_mean")].parse().unwrap();
        assert!((got - mean).abs() < 1e-9 * mean.max(1.0), "point {p}");
        let lo: f64 = s[col("workunits_valid_per_day_ci95_low")].parse().unwrap();
        let hi: f64 = s[col("workunits_valid_per_day_ci95_high")].parse().unwrap();
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
metrics = ["workunits_valid_per_day"]
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
            // The label keeps its unit; the `_s` column next to it is in seconds.
            let x = x.unwrap();
            let v: i64 = x[2].parse().unwrap();
            assert!(x[1].ends_with(['d', 'h', 'm', 's']), "{}", &x[1]);
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
    let cases: [(&str, &str, &[&str]); 7] = [
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
        (
            "SCENARIO\nmetrics = [\"deadline_miss_frac\"]\n[[parameter]]\nkey = \"simulation.seed\"\nvalues = [1]\n[objective]\nminimize = \"deadline_miss_frac\"\nsubject_to = [\"deadline_miss_frac < 0.5\", \"deadline_miss_frac > 0 and \"]\n",
            "on both sides of each `and`",
            &[":9:43: `objective.subject_to.1`"],
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

/// The host columns of `hosts.csv` that depend on the population and availability
/// only: speed, arrival, departure and the time the host was on.
fn host_population(run: &Path) -> Vec<[String; 4]> {
    let mut r = csv::Reader::from_path(run.join("hosts.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let cols = [
        col("p_fpops"),
        col("joined_s"),
        col("left_s"),
        col("available_time_s"),
    ];
    r.records()
        .map(|x| {
            let x = x.unwrap();
            cols.map(|c| x[c].to_string())
        })
        .collect()
}

#[test]
fn a_replication_has_the_same_hosts_and_availability_at_every_point() {
    let tmp = tempfile::tempdir().unwrap();
    // Hosts that come and go (on ~8 h, off ~12 h) and leave, over 4 days: with the
    // availability on the host's job stream, 1-day and 7-day deadlines gave most
    // hosts different on-times.
    let churn = r#"
"host_group.0.on_period" = { dist = "weibull", scale = "8h", shape = 0.7 }
"host_group.0.off_period" = { dist = "exponential", mean = "12h" }
"host_group.0.lifetime" = { dist = "exponential", mean = "3d" }
"simulation.duration" = "4d"
"host_group.0.count" = 30
"client.policy" = "modern_rec"
"#;
    let file = tmp.path().join("crn.toml");
    std::fs::write(
        &file,
        format!(
            "[sweep]\nscenario = \"{}\"\nseed = 11\nreplications = 2\n\
             metrics = [\"deadline_miss_frac\"]\n[sweep.set]{churn}\n[[parameter]]\n\
             key = \"project.main.workunit.delay_bound\"\nvalues = [\"1d\", \"7d\"]\n",
            quickstart()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = sweep(&file, &out, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    // Rows: (point 0, rep 0), (0, 1), (1, 0), (1, 1).
    assert_eq!(&rows[0][2], &rows[2][2], "replication 0 shares its seed");
    assert_ne!(&rows[0][2], &rows[1][2]);
    // The two points of replication 0, run on their own with the sweep's seed.
    let mut populations = Vec::new();
    for db in ["1d", "7d"] {
        let run = tmp.path().join(format!("run-{db}"));
        let mut args: Vec<String> = vec![
            "run".into(),
            quickstart(),
            "--seed".into(),
            rows[0][2].to_string(),
            "--out".into(),
            run.display().to_string(),
            "--quiet".into(),
            "--set".into(),
            format!("project.main.workunit.delay_bound=\"{db}\""),
        ];
        for line in churn.lines().filter(|l| !l.is_empty()) {
            let (k, v) = line.split_once(" = ").unwrap();
            args.push("--set".into());
            args.push(format!("{}={}", k.trim_matches('"'), v));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = bin(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        populations.push(host_population(&run));
    }
    assert_eq!(populations[0].len(), 30);
    assert_eq!(populations[0], populations[1]);
    // The runs did differ: the deadline changed what the hosts did.
    let misses = |p: usize| rows[2 * p][4].to_string();
    assert_ne!(misses(0), misses(1));
}

#[test]
fn a_logged_sweep_prints_progress_lines_warnings_and_the_points_within_the_noise() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_sweep(tmp.path(), 3, OBJECTIVE);
    let out = tmp.path().join("out");
    // stderr is a pipe here, as in CI: no bar, plain lines.
    let o = bin(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-plots",
        "--jobs",
        "2",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains('\u{1b}'), "no escape codes: {err:?}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("sweep: ")).collect();
    assert!(lines.len() >= 5, "a line per tenth of 12 runs: {err}");
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("sweep: 12/12 runs done (100 %), "),
        "{err}"
    );
    assert!(lines.iter().all(|l| l.contains(" elapsed, ")), "{err}");
    // 2 simulated days: both delay bounds (1d, 3d) exceed a third of them.
    assert!(
        err.contains(
            "warning: delay_bound 1d is more than a third of the simulated duration (2d) at \
             points 0, 1: "
        ),
        "{err}"
    );
    assert!(err.contains("warning: delay_bound 3d"), "{err}");
    // The warnings come before the runs.
    assert!(err.find("warning:").unwrap() < err.find("sweep: ").unwrap());
    // The verdict: the best point and how many others cannot be told from it.
    let best: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("best.json")).unwrap()).unwrap();
    let near = best["within_noise"].as_array().unwrap().len();
    let verdict = err.lines().find(|l| l.starts_with("best: point ")).unwrap();
    let says = match near {
        0 => "no other point is within the noise".to_string(),
        1 => "1 other point is within the noise".to_string(),
        n => format!("{n} other points are within the noise"),
    };
    assert!(verdict.contains(&says), "{verdict} / {best}");
    // The two censoring warnings, then the drift warnings of the points whose runs
    // drift in a majority of replications (2-day runs without a warm-up: the
    // start is in their first third).
    let warnings = best["warnings"].as_array().unwrap();
    assert!(warnings[0].as_str().unwrap().starts_with("delay_bound 1d"));
    assert!(warnings[1].as_str().unwrap().starts_with("delay_bound 3d"));
    for w in &warnings[2..] {
        let w = w.as_str().unwrap();
        assert!(w.starts_with("point ") && w.contains(" drifts in "), "{w}");
        assert!(err.contains(&format!("warning: {w}")), "{err}");
    }
    for p in best["within_noise"].as_array().unwrap() {
        assert_eq!(p["rule"], "paired");
        let (lo, hi) = (
            p["difference"]["ci95_low"].as_f64().unwrap(),
            p["difference"]["ci95_high"].as_f64().unwrap(),
        );
        assert!(lo <= 0.0 && 0.0 <= hi, "{p}");
    }
    // --quiet: nothing at all.
    let o = sweep(&file, &tmp.path().join("quiet"), &[]);
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn an_apps_own_row_gives_the_metrics_of_a_sweep_over_its_template() {
    // Two apps; the sweep varies the second's delay_bound and reads its row: the
    // app's own delay_bound_s follows the point, while the project's is empty
    // (its apps' differ).
    let dir = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/multi-app.toml")
        .display()
        .to_string()
        .replace('\\', "/");
    let body = |app: &str| {
        format!(
            r#"[sweep]
scenario = "{scenario}"
seed = 3
metrics = ["delay_bound_s", "workunits_created"]
{app}

[sweep.set]
"simulation.duration" = "1d"
"host_group.0.count" = 30
"host_group.1.count" = 10

[[parameter]]
key = "project.main.app.search.workunit.delay_bound"
values = ["1d", "2d"]
"#
        )
    };
    let mean = |out: &Path, column: &str| -> Vec<String> {
        let mut r = csv::Reader::from_path(out.join("sweep-summary.csv")).unwrap();
        let h = r.headers().unwrap().clone();
        let k = h.iter().position(|c| c == column).unwrap();
        r.records().map(|x| x.unwrap()[k].to_string()).collect()
    };
    let file = dir.path().join("app.toml");
    std::fs::write(&file, body("app = \"search\"")).unwrap();
    let out = dir.path().join("app");
    let o = sweep(&file, &out, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(mean(&out, "delay_bound_s_mean"), ["86400.0", "172800.0"]);
    let app_created = mean(&out, "workunits_created_mean");

    std::fs::write(&file, body("")).unwrap();
    let out = dir.path().join("project");
    let o = sweep(&file, &out, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(mean(&out, "delay_bound_s_mean"), ["", ""]);
    // The project's workunits are both apps': more than the search app's alone.
    for (p, a) in mean(&out, "workunits_created_mean")
        .iter()
        .zip(&app_created)
    {
        assert!(
            p.parse::<f64>().unwrap() > a.parse::<f64>().unwrap(),
            "{p} vs {a}"
        );
    }

    // An app the project lacks, or a metric only a project has, is refused.
    std::fs::write(&file, body("app = \"serch\"")).unwrap();
    let o = sweep(&file, &dir.path().join("bad"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("the project has no app `serch`; expected one of `sim`, `search`")
    );
    let bad = body("app = \"search\"").replace("\"workunits_created\"", "\"hosts_attached\"");
    std::fs::write(&file, bad).unwrap();
    let o = sweep(&file, &dir.path().join("bad2"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("`hosts_attached` exists only per project"));
}

/// A sweep over file size takes the transfer figures of a run with files as metrics
/// (docs/sweep.md, docs/outputs.md "File transfers"): the download time grows with
/// the input, and the link carries ten times the bytes.
#[test]
fn a_sweep_over_file_size_reports_transfer_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("files.toml");
    std::fs::write(
        &p,
        format!(
            r#"[sweep]
name = "files"
scenario = "{}"
seed = 5
replications = 1
metrics = ["workunits_valid_per_day", "download_time_p90_s", "link_util_down_frac"]

[sweep.set]
"simulation.duration" = "2d"
"host_group.0.count" = 40
"project.main.data_server.download" = 5e6
"host_group.0.network" = {{ download = 1e6 }}

[[parameter]]
key = "project.main.files.input"
values = [1e7, 1e8]
"#,
            quickstart()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = sweep(&p, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("sweep-summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let v = |row: usize, n: &str| -> f64 { rows[row][col(n)].parse().unwrap() };
    assert_eq!(rows.len(), 2);
    // 10 MB at 1 MB/s takes at least 10 s, 100 MB at least 100 s.
    assert!(v(0, "download_time_p90_s_mean") >= 10.0);
    assert!(v(1, "download_time_p90_s_mean") > v(0, "download_time_p90_s_mean"));
    assert!(v(1, "link_util_down_frac_mean") > v(0, "link_util_down_frac_mean"));
}
