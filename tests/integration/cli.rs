//! The `boinc-sim` binary end to end: exit codes, error messages, determinism of the
//! output files, and the atomic run folder.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{command as bin, run};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small unscripted scenario: 50 hosts for 3 days.
const SMALL: &str = r#"
[simulation]
name = "small"
seed = 3
duration = "3d"

[project.main.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 3
max_total_results = 6
max_success_results = 4
delay_bound = "1d"
rsc_fpops_est = 3.6e12

[project.main.config]
one_result_per_host_per_wu = true

[project.main.work_generator]
mode = "cushion"
cushion = 20

[[host_group]]
count = 50
p_fpops = 2e9
error_prob = 0.1
wrong_result_prob = 0.1
detach_prob = 0.05
"#;

fn write_small(dir: &Path) -> PathBuf {
    let p = dir.join("small.toml");
    std::fs::write(&p, SMALL).unwrap();
    p
}

/// Runs the small scenario quietly into `dir/name`, with `extra` arguments, and
/// returns that folder.
fn run_small_with(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    run_small_env(dir, name, extra, &[])
}

/// [`run_small_with`] with extra environment variables.
fn run_small_env(dir: &Path, name: &str, extra: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let sc = write_small(dir);
    let out = dir.join(name);
    let mut args = vec![
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend(extra);
    let o = bin()
        .args(&args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn run_small(dir: &Path, name: &str) -> PathBuf {
    run_small_with(dir, name, &[])
}

#[test]
fn same_scenario_and_seed_give_byte_identical_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_small_with(tmp.path(), "a", &["--check-invariants", "--audit"]);
    // The second run without huge pages and glibc's default mmap threshold
    // (src/hugepages.rs): where memory comes from must not change what is computed.
    let b = run_small_env(
        tmp.path(),
        "b",
        &["--check-invariants", "--audit"],
        &[("BOINC_SIM_HUGEPAGES", "0")],
    );
    for f in [
        "workunits.csv",
        "results.csv",
        "transitions.csv.gz",
        "hosts.csv",
        "timeseries.csv",
        "histograms.csv",
        "summary.csv",
        "summary_apps.csv",
        "summary.json",
        "manifest.json",
    ] {
        let x = std::fs::read(a.join(f)).unwrap();
        let y = std::fs::read(b.join(f)).unwrap();
        assert!(x.len() > 100, "{f} is nearly empty");
        assert!(x == y, "{f} differs between two runs");
    }
    // A different seed gives a different run.
    let c = run_small_with(tmp.path(), "c", &["--seed", "4"]);
    assert_ne!(
        std::fs::read(a.join("results.csv")).unwrap(),
        std::fs::read(c.join("results.csv")).unwrap()
    );
}

#[test]
fn set_overrides_a_key_and_lands_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_small_with(
        tmp.path(),
        "o",
        &["--set", "project.main.workunit.delay_bound=86399"],
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["effective_config"]["project"]["main"]["workunit"]["delay_bound"],
        86399
    );
    let wus = std::fs::read_to_string(out.join("workunits.csv")).unwrap();
    assert!(wus.lines().nth(1).unwrap().contains(",86399,"));
}

#[test]
fn bad_scenario_exits_2_with_location_and_no_backtrace() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("bad.toml");
    std::fs::write(
        &p,
        "[project.main.workunit]\nmin_quorum = 3\ntarget_nresults = 2\nmax_success_results = 2\nmax_total_results = 4\n",
    )
    .unwrap();
    for cmd in ["run", "check"] {
        let o = run(&[
            cmd,
            p.to_str().unwrap(),
            "--out",
            tmp.path().join("x").to_str().unwrap(),
        ][..if cmd == "run" { 4 } else { 2 }]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("bad.toml:2:"), "{e}");
        assert!(e.contains("project.main.workunit.min_quorum"), "{e}");
        assert!(
            !e.contains("panicked") && !e.contains("stack backtrace"),
            "{e}"
        );
    }
    assert!(!tmp.path().join("x").exists());
}

#[test]
fn missing_file_and_bad_flag_exit_2() {
    let o = run(&["run", "does/not/exist.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does/not/exist.toml"));
    let o = run(&[
        "run",
        scenario("quickstart.toml").to_str().unwrap(),
        "--seed",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&[
        "run",
        scenario("quickstart.toml").to_str().unwrap(),
        "--set",
        "nokey",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nokey"));
}

#[test]
fn failed_expectation_exits_1_and_leaves_no_output_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = run(&[
        "run",
        scenario("spec/s1-single-success.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "expect.0.state=\"4/0/0/0\"",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("expected 4/0/0/0"));
    // The failure names the entry's header in the file, and the count checked.
    let path = scenario("spec/s1-single-success.toml");
    let place = format!("{}:78:1: expect[0] at t=1:", path.display());
    assert!(stderr(&o).contains(&place), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 of 14 expectation(s) checked failed"));
    assert!(!out.exists(), "a failed run left an output folder");
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "temporary folder left behind");
}

/// A scripted run says how many expectations it checked.
#[test]
fn scripted_run_prints_how_many_expectations_it_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = run(&[
        "run",
        scenario("spec/s1-single-success.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("checked 14 expectation(s): all met"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn worked_example_runs_from_the_cli_with_invariants() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s7");
    let o = run(&[
        "run",
        scenario("spec/s7-quorum2-tiebreak.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--check-invariants",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // s7 has 17 `[[expect]]` entries; a scripted run says how many it checked.
    assert!(
        stderr(&o).contains("checked 17 expectation(s): all met"),
        "{}",
        stderr(&o)
    );
    let tr = std::fs::read_to_string(out.join("transitions.csv")).unwrap();
    // The validator bumps target_nresults from 2 to 3 at t=602 (spec §4 S7).
    assert!(
        tr.contains("602,main,validator,workunit,1,target_nresults,2,3"),
        "{tr}"
    );
}

#[test]
fn check_prints_the_effective_configuration() {
    let o = run(&["check", scenario("quickstart.toml").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("daily_result_quota = 500"), "{s}");
    assert!(s.contains("variant = \"boinc\""), "{s}");
}

#[test]
fn help_lists_the_commands() {
    let o = run(&["--help"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    for c in ["run", "check", "bench", "Exit codes"] {
        assert!(s.contains(c), "{s}");
    }
}

/// The modern policy is as deterministic as the seed one, and a host's population
/// draws (speed, arrival) come from its own stream: adding a host changes no other
/// host's draws.
#[test]
fn modern_policy_is_deterministic_and_host_streams_are_independent() {
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for (name, count) in [("m1", 50), ("m2", 50), ("m3", 51)] {
        let count = format!("host_group.0.count={count}");
        outs.push(run_small_with(
            tmp.path(),
            name,
            &[
                "--set",
                "client.policy=\"modern_rec\"",
                "--set",
                &count,
                "--set",
                "host_group.0.p_fpops={ dist = \"uniform\", min = 1e9, max = 3e9 }",
            ],
        ));
    }
    for f in ["results.csv", "hosts.csv", "summary.json"] {
        let x = std::fs::read(outs[0].join(f)).unwrap();
        assert!(x == std::fs::read(outs[1].join(f)).unwrap(), "{f} differs");
    }
    let draws = |dir: &std::path::Path| -> Vec<(String, String)> {
        let text = std::fs::read_to_string(dir.join("hosts.csv")).unwrap();
        text.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                (c[4].to_string(), c[5].to_string()) // p_fpops, joined_s
            })
            .collect()
    };
    let (a, b) = (draws(&outs[0]), draws(&outs[2]));
    assert_eq!(b.len(), 51);
    assert_eq!(a[..], b[..50]);
    assert!(a.iter().any(|(f, _)| f != &a[0].0), "speeds were not drawn");
}

/// True sizes (`true_size`, docs/estimates.md) are deterministic and come from the
/// work generator's own stream: the n-th workunit gets the same size whatever the
/// client policy, and sizes really scatter around the estimate.
#[test]
fn true_sizes_are_deterministic_and_independent_of_the_clients() {
    let tmp = tempfile::tempdir().unwrap();
    let size = "project.main.workunit.true_size={ dist = \"lognormal\", mu = 0.0, sigma = 0.5 }";
    let mut outs = Vec::new();
    for (name, policy) in [
        ("t1", "seed_debt"),
        ("t2", "seed_debt"),
        ("t3", "modern_rec"),
    ] {
        let policy = format!("client.policy=\"{policy}\"");
        let args = ["--check-invariants", "--set", size, "--set", &policy];
        outs.push(run_small_with(tmp.path(), name, &args));
    }
    for f in ["workunits.csv", "results.csv", "summary.json"] {
        let x = std::fs::read(outs[0].join(f)).unwrap();
        assert!(x == std::fs::read(outs[1].join(f)).unwrap(), "{f} differs");
    }
    let sizes = |dir: &Path| -> Vec<(u64, f64, f64)> {
        let text = std::fs::read_to_string(dir.join("workunits.csv")).unwrap();
        let head: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
        let (id, est, size) = (
            col("id"),
            col("rsc_fpops_est_flops"),
            col("true_size_flops"),
        );
        let mut v: Vec<(u64, f64, f64)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                (
                    c[id].parse().unwrap(),
                    c[est].parse().unwrap(),
                    c[size].parse().unwrap(),
                )
            })
            .collect();
        v.sort_by_key(|r| r.0);
        v
    };
    let (a, b) = (sizes(&outs[0]), sizes(&outs[2]));
    let n = a.len().min(b.len());
    assert!(n > 20, "only {n} workunits");
    assert_eq!(a[..n], b[..n]);
    assert!(a.iter().all(|r| r.1 == 3.6e12 && r.2 > 0.0));
    assert!(a.iter().any(|r| r.2 > 1.2 * r.1) && a.iter().any(|r| r.2 < 0.8 * r.1));
}

/// Every example scenario shipped in `scenarios/` loads and validates, so the
/// examples never drift from the schema the docs describe.
#[test]
fn every_shipped_scenario_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for dir in [root.clone(), root.join("spec")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                if let Err(e) = boinc_sim::scenario::load::load(&path, &[], None) {
                    panic!("{}: {e}", path.display());
                }
                n += 1;
            }
        }
    }
    assert!(n >= 15, "only {n} scenarios found");
    // Shipped sweeps too: the file, and every point's scenario.
    let mut sweeps = 0;
    for entry in std::fs::read_dir(root.join("sweeps")).unwrap() {
        let path = entry.unwrap().path();
        let s = boinc_sim::sweep::spec::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let planned = boinc_sim::sweep::plan(&s).unwrap_or_else(|e| panic!("{e}"));
        assert!(!planned.plan.points.is_empty());
        sweeps += 1;
    }
    assert!(sweeps >= 1);
}

/// `timeseries.csv` agrees with `results.csv` and `workunits.csv` recomputed:
/// results sent and reported, and workunits with a canonical result, per hour.
#[test]
fn timeseries_agree_with_the_row_tables() {
    use std::collections::BTreeMap;
    let tmp = tempfile::tempdir().unwrap();
    let out = run_small(tmp.path(), "ts");
    let mut series: BTreeMap<(i64, String), f64> = BTreeMap::new();
    let mut r = csv::Reader::from_path(out.join("timeseries.csv")).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        // A bucket without a canonical result of known truth has no rate of its
        // own (`wrong_canonical_frac_interval` empty).
        if rec[3].is_empty() {
            assert_eq!(&rec[2], "wrong_canonical_frac_interval", "{rec:?}");
            continue;
        }
        series.insert(
            (rec[0].parse().unwrap(), rec[2].to_string()),
            rec[3].parse().unwrap(),
        );
    }
    let mut want: BTreeMap<(i64, String), f64> = BTreeMap::new();
    let mut bump = |t: &str, m: &str| {
        if let Ok(t) = t.parse::<i64>() {
            *want.entry((t / 3600 * 3600, m.to_string())).or_default() += 1.0;
        }
    };
    let mut r = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (sent, recv, outcome) = (col("sent_time_s"), col("received_time_s"), col("outcome"));
    for rec in r.records() {
        let rec = rec.unwrap();
        bump(&rec[sent], "results_sent");
        if ["1", "3", "6"].contains(&&rec[outcome]) {
            bump(&rec[recv], "results_reported");
        }
    }
    let mut r = csv::Reader::from_path(out.join("workunits.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let canon = h
        .iter()
        .position(|c| c == "canonical_found_time_s")
        .unwrap();
    for rec in r.records() {
        bump(&rec.unwrap()[canon], "workunits_canonical_found");
    }
    assert!(want.len() > 10, "too few rows to compare");
    for (k, v) in &want {
        assert_eq!(series.get(k), Some(v), "{k:?}");
    }
    for ((t, m), v) in &series {
        if [
            "results_sent",
            "results_reported",
            "workunits_canonical_found",
        ]
        .contains(&m.as_str())
        {
            assert_eq!(
                want.get(&(*t, m.clone())).copied().unwrap_or(0.0),
                *v,
                "{t} {m}"
            );
        }
    }
}

/// `summary.csv` agrees with `results.csv` and `workunits.csv` recomputed: counts,
/// shares, CPU time, FLOPs and credit exactly; the throughput and deadline figures
/// over the window after a 12-hour warm-up; turnaround percentiles to within one
/// histogram bin (60 s); and with `summary.json`'s `headline`.
#[test]
fn summary_csv_agrees_with_the_row_tables() {
    let tmp = tempfile::tempdir().unwrap();
    // Hosts that are off half the time, detach now and then and leave for good
    // give every deadline fate: late, no reply, detached and censored. Frequent
    // wrong outputs that always collide make some canonical results wrong and some
    // correct results judged INVALID.
    let out = run_small_with(
        tmp.path(),
        "s",
        &[
            "--set",
            "output.warmup=43200",
            "--set",
            "host_group.0.detach_prob=0.005",
            "--set",
            "host_group.0.on_frac=0.5",
            "--set",
            r#"host_group.0.lifetime={dist="exponential",mean="4d"}"#,
            "--set",
            "project.main.app.wrong_output_collision_frac=1.0",
            "--set",
            "host_group.0.wrong_result_prob=0.4",
        ],
    );
    let (warmup, end) = (43_200.0, 3.0 * 86_400.0);
    let mut r = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let rows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][0], "main");
    let got = |c: &str| -> f64 {
        let i = header
            .iter()
            .position(|h| h == c)
            .unwrap_or_else(|| panic!("{c}"));
        rows[0][i]
            .parse()
            .unwrap_or_else(|_| panic!("{c}: {:?}", &rows[0][i]))
    };

    let mut r = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (outcome, vs, sent, recv, dl, cpu, fl, credit) = (
        col("outcome"),
        col("validate_state"),
        col("sent_time_s"),
        col("received_time_s"),
        col("report_deadline_s"),
        col("cpu_time_s"),
        col("flops_estimate_flops"),
        col("granted_credit"),
    );
    let (mut n, mut with_outcome, mut reported, mut met, mut missed) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut errors, mut invalid, mut judged, mut no_reply) = (0.0, 0.0, 0.0, 0.0);
    // The measured window (docs/outputs.md, "The measured window"): results sent
    // after the warm-up or never sent, and results reported after it.
    let (mut w_n, mut w_reported, mut no_reply_in_window) = (0.0, 0.0, 0.0);
    // Results sent after the warm-up, by their fate at the deadline.
    let (mut dl_met, mut dl_late, mut dl_no_reply, mut dl_detached, mut censored) =
        (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut cpu_rep, mut cpu_wasted, mut useful, mut wasted, mut granted) =
        (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut turnaround = Vec::new();
    let truth = col("output_correct");
    let (mut wrong_valid, mut correct_invalid) = (0.0, 0.0);
    for rec in r.records() {
        let rec = rec.unwrap();
        let num = |i: usize| rec[i].parse::<f64>().unwrap_or(0.0);
        n += 1.0;
        let received_in_window = !rec[recv].is_empty() && num(recv) >= warmup;
        match (&rec[truth], &rec[vs]) {
            ("0", "1") if received_in_window => wrong_valid += 1.0,
            ("1", "2") if received_in_window => correct_invalid += 1.0,
            _ => {}
        }
        granted += num(credit);
        let o = &rec[outcome];
        if o == "4" {
            no_reply += 1.0;
        }
        let of_window = rec[sent].is_empty() || num(sent) >= warmup;
        if of_window {
            w_n += 1.0;
            if o != "0" {
                with_outcome += 1.0;
            }
            match o {
                "3" => errors += 1.0,
                "4" => no_reply_in_window += 1.0,
                _ => {}
            }
        }
        if o == "1" && ["1", "2"].contains(&&rec[vs]) && received_in_window {
            judged += 1.0;
            if &rec[vs] == "2" {
                invalid += 1.0;
            }
        }
        let is_rep = ["1", "3", "6"].contains(&o) && !rec[recv].is_empty();
        if !rec[sent].is_empty() && num(sent) >= warmup {
            if num(dl) >= end {
                censored += 1.0;
            } else if is_rep && num(recv) <= num(dl) {
                dl_met += 1.0;
            } else if is_rep {
                dl_late += 1.0;
            } else if o == "7" || (o == "4" && !rec[recv].is_empty()) {
                dl_detached += 1.0;
            } else {
                dl_no_reply += 1.0;
            }
        }
        if ["1", "3", "6"].contains(&o) && !rec[recv].is_empty() {
            reported += 1.0;
            if num(recv) <= num(dl) {
                met += 1.0
            } else {
                missed += 1.0
            }
            if received_in_window {
                turnaround.push(num(recv) - num(sent));
                w_reported += 1.0;
            }
            cpu_rep += num(cpu);
            let flops = num(cpu) * num(fl);
            match (o, &rec[vs]) {
                ("1", "1") => useful += flops,
                ("1", "0" | "4") => {}
                _ => {
                    wasted += flops;
                    cpu_wasted += num(cpu);
                }
            }
        }
    }
    let mut r = csv::Reader::from_path(out.join("workunits.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (assim, canon, mask, at, created, found) = (
        col("assimilate_state"),
        col("canonical_resultid"),
        col("error_mask"),
        col("assimilated_time_s"),
        col("create_time_s"),
        col("canonical_found_time_s"),
    );
    let mut w_wus = 0.0;
    let canon_truth = col("canonical_correct");
    let (mut wus, mut assim_valid, mut assim_error) = (0.0, 0.0, 0.0);
    let (mut valid_in_window, mut error_in_window) = (0.0, 0.0);
    let (mut canonical, mut wrong_canonical) = (0.0, 0.0);
    for rec in r.records() {
        let rec = rec.unwrap();
        wus += 1.0;
        if rec[created].parse::<f64>().unwrap() >= warmup {
            w_wus += 1.0;
        }
        if &rec[canon] != "0" && rec[found].parse::<f64>().unwrap() >= warmup {
            canonical += 1.0;
            // Every simulated host's output has a known truth.
            assert!(["0", "1"].contains(&&rec[canon_truth]), "{rec:?}");
            if &rec[canon_truth] == "0" {
                wrong_canonical += 1.0;
            }
        }
        if &rec[assim] == "2" {
            let valid = &rec[canon] != "0" && &rec[mask] == "0";
            let in_window = rec[at].parse::<f64>().unwrap() >= warmup;
            match (valid, in_window) {
                (true, true) => valid_in_window += 1.0,
                (false, true) => error_in_window += 1.0,
                _ => {}
            }
            if valid {
                assim_valid += 1.0
            } else {
                assim_error += 1.0
            }
        }
    }
    assert!(reported > 100.0 && errors > 0.0 && invalid > 0.0 && wasted > 0.0);
    assert!(
        wrong_canonical > 0.0 && correct_invalid > 0.0,
        "{wrong_canonical} {correct_invalid} {wrong_valid}"
    );
    // Every fate occurs, so the test can fail on each.
    assert!(dl_late > 0.0 && dl_no_reply > 0.0 && dl_detached > 0.0 && censored > 0.0);
    assert!(valid_in_window > 0.0 && error_in_window > 0.0);
    let window_days = (end - warmup) / 86_400.0;
    let passed = dl_met + dl_late + dl_no_reply + dl_detached;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for (c, want) in [
        ("results_created", n),
        ("results_reported", reported),
        ("results_deadline_met", met),
        ("results_deadline_missed", missed),
        ("results_no_reply", no_reply),
        ("error_frac", errors / with_outcome),
        ("no_reply_frac", no_reply_in_window / with_outcome),
        ("invalid_frac", invalid / judged),
        ("results_deadline_passed", passed),
        ("results_deadline_late", dl_late),
        ("results_deadline_no_reply", dl_no_reply),
        ("results_deadline_detached", dl_detached),
        ("results_censored", censored),
        (
            "deadline_fail_frac",
            (dl_late + dl_no_reply + dl_detached) / passed,
        ),
        ("workunits_valid_per_day", valid_in_window / window_days),
        ("workunits_error_per_day", error_in_window / window_days),
        ("cpu_time_reported_s", cpu_rep),
        ("cpu_time_wasted_s", cpu_wasted),
        ("flops_useful_flops", useful),
        ("flops_wasted_flops", wasted),
        ("credit_granted_credit", granted),
        ("workunits_created", wus),
        ("workunits_assimilated_valid", assim_valid),
        ("workunits_assimilated_error", assim_error),
        ("results_per_workunit", w_n / w_wus),
        ("results_reported_per_day", w_reported / window_days),
        ("delay_bound_s", 86_400.0),
        ("min_quorum", 2.0),
        ("workunits_wrong_canonical", wrong_canonical),
        ("wrong_canonical_frac", wrong_canonical / canonical),
        ("results_wrong_valid", wrong_valid),
        ("results_correct_invalid", correct_invalid),
    ] {
        assert!(
            close(got(c), want),
            "{c}: summary.csv {} vs recomputed {want}",
            got(c)
        );
    }
    turnaround.sort_by(f64::total_cmp);
    for (c, q) in [
        ("turnaround_p50_s", 0.5),
        ("turnaround_p90_s", 0.9),
        ("turnaround_p99_s", 0.99),
    ] {
        let k = ((q * turnaround.len() as f64).ceil() as usize).max(1) - 1;
        let exact = turnaround[k];
        assert!(
            got(c) >= exact && got(c) <= exact + 60.0,
            "{c}: {} vs exact {exact}",
            got(c)
        );
    }
    // summary.json carries the same row.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let headline = &json["projects"]["main"]["headline"];
    for (i, c) in header.iter().enumerate().skip(1) {
        match rows[0][i].parse::<f64>() {
            // serde_json parses floats to within an ulp, not exactly.
            Ok(v) => assert!(close(headline[c].as_f64().unwrap(), v), "{c}"),
            Err(_) => assert!(headline[c].is_null(), "{c}"),
        }
    }
}
