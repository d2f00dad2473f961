//! `boinc-sim credit` and the job log (`docs/credit.md`): a run's own
//! job log replays to the run's granted credits bit for bit (credit_new and
//! classic); the shipped sample log, whose GPU version's FLOPS estimate is 10×
//! wrong, shows credit_new's scales correcting it; bad logs fail with the file,
//! line, column and what was expected, exit status 2.

use boinc_sim::base::units::Duration;
use boinc_sim::credit::replay;
use boinc_sim::credit::tally;
use boinc_sim::server::types::ResultId;
use boinc_sim::stats::job_log;
use boinc_sim::stats::job_log::ReplayConfig;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use crate::common::{replay_run_log, root, run as bin, text};

/// `column` of every row of a CSV, keyed by `key`.
fn column(path: &Path, key: &str, column: &str) -> BTreeMap<String, String> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    let h = rd.headers().unwrap().clone();
    let (k, c) = (
        h.iter().position(|x| x == key).unwrap(),
        h.iter().position(|x| x == column).unwrap(),
    );
    rd.records()
        .map(|r| {
            let r = r.unwrap();
            (r[k].to_string(), r[c].to_string())
        })
        .collect()
}

/// Runs the quickstart (50 hosts, 3 days) with `--job-log` and `sets`, replays its
/// log with the settings it wrote, and checks that every logged result got, in the
/// replay's `scheme` column, exactly the credit `results.csv` says it was granted.
fn round_trip(sets: &[&str], scheme: &str) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut args = vec![
        "run",
        "scenarios/quickstart.toml",
        "--set",
        "simulation.duration=3d",
        "--set",
        "host_group.0.count=50",
        "--job-log",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = bin(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let results = replay_run_log(&run, &tmp.path().join("replay"));
    // The run's hosts file gives every result a classic claim.
    let classic = column(&results, "result_id", "classic");
    assert!(classic.values().all(|c| !c.is_empty()));
    let run_credit = column(&run.join("results.csv"), "id", "granted_credit");
    let logged = column(&run.join("jobs.csv"), "result_id", "granted_credit");
    let replay_credit = column(&results, "result_id", scheme);
    assert!(
        logged.len() > 100,
        "too few results to test: {}",
        logged.len()
    );
    assert_eq!(
        replay_credit.len(),
        logged.len(),
        "one decision per logged result"
    );
    for (id, c) in &logged {
        let run: f64 = run_credit[id].parse().unwrap();
        let replay: f64 = replay_credit[id].parse().unwrap();
        let log: f64 = c.parse().unwrap();
        assert_eq!(
            replay.to_bits(),
            run.to_bits(),
            "result {id}: replay {replay}, run {run}"
        );
        assert_eq!(
            log.to_bits(),
            run.to_bits(),
            "result {id}: log {log}, run {run}"
        );
    }
    // One app version: no neutrality ratio, and summary.json says why.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["projects"]["main"]["credit_neutrality"]["1"]["reason"],
        boinc_sim::stats::credit::NO_RATIO
    );
    assert!(summary["projects"]["main"]["headline"]["credit_neutrality_ratio"].is_null());
    logged.len()
}

#[test]
fn a_runs_own_job_log_replays_to_its_credit_new_credits() {
    round_trip(&[], "credit_new");
}

#[test]
fn a_classic_runs_job_log_replays_to_its_classic_credits() {
    round_trip(&["project.main.validator.credit=\"classic\""], "classic");
}

/// The replay of the sample log, in 2-hour buckets.
fn sample() -> replay::Replay {
    let dir = root().join("scenarios/credit");
    let rows = job_log::read(&dir.join("jobs-sample.csv"), None).unwrap();
    let hosts = replay::read_hosts(&dir.join("hosts-sample.csv")).unwrap();
    let cfg = ReplayConfig::read(&dir.join("credit-sample.toml")).unwrap();
    assert_eq!(cfg.interval, Duration(7200));
    replay::replay(&rows, &cfg, &hosts).unwrap()
}

/// The GPU version's FLOPS estimate is 10× its real peak: before credit_new has
/// 100 samples of it, its credit per FLOP is off (several times the CPU
/// version's); `update_av_scales` then sets its `pfc_scale` near CPU pfc / GPU pfc
/// (2 / 50 in the generator's model) and the two versions converge to neutral.
#[test]
fn the_sample_logs_wrong_gpu_estimate_is_corrected_by_the_scales() {
    let r = sample();
    let cfg = ReplayConfig {
        interval: Duration(7200),
        ..ReplayConfig::default()
    };
    let fig = tally(&r, &cfg);
    let cpg = |b: i64, av: u32| {
        fig.versions
            .get(&(b, 1, av))
            .and_then(|a| a.credit_per_gflop())
    };
    // The first bucket where both versions have credit: GPU far above CPU.
    let first = (0..200)
        .find(|&b| cpg(b, 1).is_some() && cpg(b, 2).is_some())
        .unwrap();
    let early = cpg(first, 2).unwrap() / cpg(first, 1).unwrap();
    assert!(
        early > 4.0,
        "GPU/CPU credit per FLOP before convergence: {early}"
    );
    // A day later and at the end: within 5 % of neutral.
    for b in [first + 12, 100, 110] {
        let ratio = cpg(b, 2).unwrap() / cpg(b, 1).unwrap();
        assert!((ratio - 1.0).abs() < 0.05, "bucket {b}: GPU/CPU {ratio}");
    }
    let gpu = r.credit.version(2).unwrap();
    assert!(gpu.is_gpu && gpu.pfc.n > 1000);
    assert!((0.035..0.045).contains(&gpu.pfc_scale), "{}", gpu.pfc_scale);
    let cpu = r.credit.version(1).unwrap();
    assert!((cpu.pfc_scale - 1.0).abs() < 1e-9, "{}", cpu.pfc_scale);
    // min_avg_pfc is the CPU mean, the smaller one.
    assert!((r.credit.min_avg_pfc(1) - cpu.pfc.avg).abs() < 0.05 * cpu.pfc.avg);
    // Classic credit (CPU time × benchmarks) under-credits the GPU hosts instead.
    let (mut new_gpu, mut classic_gpu) = (0.0, 0.0);
    for x in r.results.iter().filter(|x| x.new.is_gpu) {
        new_gpu += x.new.granted_credit;
        classic_gpu += x.classic.unwrap();
    }
    assert!(classic_gpu < 0.2 * new_gpu, "{classic_gpu} vs {new_gpu}");
}

/// A replay's decisions, written as a job log with the times they were made, replay
/// to the same credits: the round trip with two versions and moving scales.
#[test]
fn a_replays_decisions_replay_to_the_same_credits() {
    let r = sample();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("jobs.csv");
    let mut w = csv::Writer::from_path(&path).unwrap();
    job_log::write_header(&mut w).unwrap();
    for x in &r.results {
        job_log::write_row(&mut w, "sample", &x.new).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let rows = job_log::read(&path, None).unwrap();
    let cfg = ReplayConfig {
        min_quorum: 2,
        ..ReplayConfig::default()
    };
    let again = replay::replay(&rows, &cfg, &BTreeMap::new()).unwrap();
    assert_eq!(again.results.len(), r.results.len());
    let first: BTreeMap<_, f64> = r
        .results
        .iter()
        .map(|x| (x.new.result_id, x.new.granted_credit))
        .collect();
    for x in &again.results {
        let want = first[&ResultId(x.result_id as u32)];
        assert_eq!(
            x.new.granted_credit.to_bits(),
            want.to_bits(),
            "result {}",
            x.result_id
        );
    }
    assert!(again.classic_skipped.is_some(), "no claims, no benchmarks");
}

/// Writes `content` to a log file in a fresh folder and replays it.
fn replay_text(content: &str, extra: &[&str]) -> (Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("bad.csv");
    std::fs::write(&log, content).unwrap();
    let out = tmp.path().join("out");
    let mut args = vec![
        "credit",
        log.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    (bin(&args), tmp)
}

const HEADER: &str = "result_id,workunit_id,app_version_id,device,host_id,elapsed_time_s,flops_estimate_flops,rsc_fpops_est_flops,rsc_fpops_bound_flops,sent_time_s,received_time_s,outcome,output\n";

fn assert_bad(o: &Output, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
}

#[test]
fn bad_logs_name_file_line_column_and_what_was_expected() {
    // A missing column.
    let (o, _t) = replay_text("result_id,workunit_id\n1,1\n", &[]);
    assert_bad(&o, &["bad.csv", "line 1", "missing column `host_id`"]);
    // A bad number, on the second row (line 3).
    let rows = format!(
        "{HEADER}1,1,1,cpu,7,3600,1e9,3.6e12,3.6e13,0,3700,success,1\n2,1,1,cpu,8,abc,1e9,3.6e12,3.6e13,0,3700,success,1\n"
    );
    let (o, _t) = replay_text(&rows, &[]);
    assert_bad(
        &o,
        &[
            "bad.csv",
            "line 3",
            "column `elapsed_time_s`",
            "expected seconds ≥ 0",
            "`abc`",
        ],
    );
    // An unknown outcome.
    let rows = format!("{HEADER}1,1,1,cpu,7,3600,1e9,3.6e12,3.6e13,0,3700,done,1\n");
    let (o, _t) = replay_text(&rows, &[]);
    assert_bad(
        &o,
        &["line 2", "column `outcome`", "success, validate_error"],
    );
    // Received before sent.
    let rows = format!("{HEADER}1,1,1,cpu,7,3600,1e9,3.6e12,3.6e13,5000,3700,success,1\n");
    let (o, _t) = replay_text(&rows, &[]);
    assert_bad(&o, &["line 2", "column `received_time_s`", "≥ sent_time_s"]);
    // One app version on two devices.
    let rows = format!(
        "{HEADER}1,1,1,cpu,7,3600,1e9,3.6e12,3.6e13,0,3700,success,1\n2,1,1,gpu,8,3600,1e9,3.6e12,3.6e13,0,3700,success,1\n"
    );
    let (o, _t) = replay_text(&rows, &[]);
    assert_bad(
        &o,
        &["line 3", "app version 1", "on gpu here", "on cpu at line 2"],
    );
    // A duplicate result.
    let rows = format!(
        "{HEADER}1,1,1,cpu,7,3600,1e9,3.6e12,3.6e13,0,3700,success,1\n1,1,1,cpu,8,3600,1e9,3.6e12,3.6e13,0,3700,success,1\n"
    );
    let (o, _t) = replay_text(&rows, &[]);
    assert_bad(&o, &["line 3", "result 1 already appears at line 2"]);
}

#[test]
fn a_bad_config_or_hosts_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("credit.toml");
    std::fs::write(
        &cfg,
        "min_quorum = 2\n[validator]\ncomparsion = \"fuzzy\"\n",
    )
    .unwrap();
    let log = root().join("scenarios/credit/jobs-sample.csv");
    let out = tmp.path().join("out");
    let o = bin(&[
        "credit",
        log.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_bad(&o, &["credit.toml", "line 3", "comparsion"]);
    let hosts = tmp.path().join("hosts.csv");
    std::fs::write(&hosts, "host_id,p_fpops\n1,fast\n").unwrap();
    let o = bin(&[
        "credit",
        log.to_str().unwrap(),
        "--hosts",
        hosts.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_bad(&o, &["hosts.csv", "line 2", "column `p_fpops`", "`fast`"]);
    assert!(!out.exists(), "nothing written on bad input");
}

/// The replay's folder: every table, the chart and the summary; a folder the user
/// made is not replaced.
#[test]
fn the_replay_writes_its_folder_and_spares_the_users() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("replay");
    let args = |out: &Path| {
        vec![
            "credit".to_string(),
            "scenarios/credit/jobs-sample.csv".into(),
            "--hosts".into(),
            "scenarios/credit/hosts-sample.csv".into(),
            "--config".into(),
            "scenarios/credit/credit-sample.toml".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let a = args(&out);
    let o = bin(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(said.contains("device neutrality"), "{said}");
    for f in [
        "credit_results.csv",
        "credit_hosts.csv",
        "credit_versions.csv",
        "credit_devices.csv",
        "credit_groups.csv",
        "summary.txt",
        "summary.json",
        "credit_neutrality.svg",
        "credit_neutrality.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let groups = column(&out.join("credit_hosts.csv"), "host_id", "host_group");
    assert_eq!(groups["1"], "cpu_only");
    assert_eq!(groups["300"], "gpu");
    let mine = tmp.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let a = args(&mine);
    let o = bin(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "keep"
    );
}

/// A project registers each app version of its scenario with the credit_new engine,
/// the CUDA version as a GPU version, so its `update_av_scales` takes the GPU mean
/// × 0.1 or the smaller of the CPU and GPU means (spec backend §6.2).
#[test]
fn the_scenarios_app_versions_are_registered_with_their_device() {
    let loaded =
        boinc_sim::scenario::load::load(&root().join("scenarios/gpu-mixed.toml"), &[], None)
            .unwrap();
    let cfg = loaded.file.project["main"].resolve();
    let p = boinc_sim::server::Project::new(0, "main", cfg, 1, false);
    let versions: Vec<(u32, u32, bool)> = p
        .credit
        .versions()
        .map(|(id, v)| (id, v.app_id, v.is_gpu))
        .collect();
    assert_eq!(versions, [(1, 1, false), (2, 1, true)]);
}
