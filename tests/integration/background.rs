//! Background projects and per-host preferences (`[host_group.background]`,
//! `[host_group.prefs]`): the CLI runs `scenarios/background-projects.toml`, whose
//! hosts give the scenario's project only part of their CPUs. The server sees none
//! of the background work, and each host's split follows the shares.

use crate::common::{self, err, has};
use std::collections::HashMap;

/// One CSV file as rows of named cells.
fn read_csv(path: &std::path::Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} = {:?}", row[key]))
}

#[test]
fn background_work_never_reaches_the_server_and_the_share_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = common::run(&[
        "run",
        "scenarios/background-projects.toml",
        "--check-invariants",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    let hosts = read_csv(&out.join("hosts.csv"));
    assert_eq!(hosts.len(), 400);
    let summary = read_csv(&out.join("summary.csv"));
    let server_rpcs = num(&summary[0], "scheduler_requests");
    // Every RPC the server counted is one of the hosts' RPCs to it; the hosts' other
    // RPCs all went to their background projects.
    let all: f64 = hosts.iter().map(|h| num(h, "rpcs")).sum();
    let bg: f64 = hosts.iter().map(|h| num(h, "background_rpcs")).sum();
    assert!(bg > 10_000.0, "{bg} background RPCs");
    assert_eq!(server_rpcs, all - bg);
    // Only our jobs are rows: one result per job a host received from `main`.
    let results = read_csv(&out.join("results.csv"));
    let ours: f64 = hosts.iter().map(|h| num(h, "main_jobs_received")).sum();
    let sent = results.iter().filter(|r| r["hostid"] != "0").count() as f64;
    assert_eq!(sent, ours);
    // Hosts with one background project of share 300 beside ours (share 100) give
    // ours a quarter of their CPU time.
    let one: Vec<_> = hosts.iter().filter(|h| h["group"] == "one-other").collect();
    assert_eq!(one.len(), 200);
    for h in &one {
        assert_eq!(num(h, "background_projects"), 1.0);
        assert_eq!(num(h, "background_share"), 300.0);
        assert_eq!(num(h, "main_target_frac"), 0.25);
    }
    let mean = one.iter().map(|h| num(h, "main_cpu_frac")).sum::<f64>() / one.len() as f64;
    assert!(
        (0.23..0.28).contains(&mean),
        "main got {mean} of the CPU time"
    );
    // The other group's hosts drew 0 to 3 background projects; over all of them
    // the CPU split follows the shares.
    let several: Vec<_> = hosts
        .iter()
        .filter(|h| h["group"] == "several-others")
        .collect();
    let counts: Vec<f64> = several
        .iter()
        .map(|h| num(h, "background_projects"))
        .collect();
    assert!(counts.iter().all(|&n| (0.0..=3.0).contains(&n)));
    assert!(counts.contains(&0.0) && counts.contains(&3.0));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let clients = &json["clients"];
    let main = &clients["projects"]["main"];
    assert_eq!(main["rpcs"].as_f64(), Some(server_rpcs));
    let (cpu, target) = (
        main["cpu_frac"].as_f64().unwrap(),
        main["target_frac"].as_f64().unwrap(),
    );
    assert!(
        (cpu - target).abs() < 0.02,
        "main: cpu_frac {cpu}, target_frac {target}"
    );
    let b = &clients["background"];
    assert_eq!(b["rpcs"].as_f64(), Some(bg));
    let sum = cpu + b["cpu_frac"].as_f64().unwrap();
    assert!((sum - 1.0).abs() < 1e-9, "{sum}");
}

/// The background and preference keys are checked where they are written.
#[test]
fn bad_background_and_prefs_keys_are_refused_with_their_path() {
    let base = "[project.a]\n\n[[host_group]]\ncount = 1\n";
    let m = err(&format!("{base}[host_group.background]\nprojects = 1\n"));
    has(&m, &["host_group.0.background", "no job size", "job_flops"]);
    let m = err(&format!(
        "{base}[host_group.background]\nprojects = 1\njob_flops = 1e12\njob_duration = \"1h\"\n"
    ));
    has(&m, &["host_group.0.background.job_duration", "both given"]);
    let m = err(&format!(
        "{base}[host_group.background]\nprojects = 100\njob_duration = \"1h\"\n"
    ));
    has(
        &m,
        &[
            "bad.toml:6",
            "host_group.0.background.projects",
            "from 0 to 64",
        ],
    );
    let m = err(&format!(
        "{base}[host_group.background]\nprojects = 1\nshare = -1\njob_duration = \"1h\"\n"
    ));
    has(
        &m,
        &["host_group.0.background.share", "expected a share >= 0"],
    );
    let m = err(&format!(
        "{base}[host_group.background]\nprojects = 1\njob_duration = \"1h\"\ndelay_bound = 0\n"
    ));
    has(
        &m,
        &[
            "host_group.0.background.delay_bound",
            "expected a value > 0",
        ],
    );
    let m = err(&format!(
        "{base}[host_group.prefs]\nmax_ncpus_pct = {{ dist = \"uniform\", min = 9, max = 1 }}\n"
    ));
    has(&m, &["host_group.0.prefs.max_ncpus_pct", "min <= max"]);
    let m = err(&format!("{base}[host_group.prefs]\nwork_buf_days = 1\n"));
    has(&m, &["bad.toml:6", "work_buf_days", "work_buf_min_days"]);
}

/// A host's own preferences change what it does: hosts that keep a ten-day buffer
/// hold more jobs than hosts of the same group preferences in `[client]`, and hosts
/// that use a quarter of their CPUs compute a quarter as much.
#[test]
fn per_host_preferences_change_the_hosts() {
    let scenario = |prefs: &str| {
        format!(
            r#"[simulation]
seed = 3
duration = "4d"

[client]
policy = "modern_rec"

[project.main.workunit]
delay_bound = "20d"
rsc_fpops_est = 3.6e12
rsc_fpops_bound = 3.6e13

[project.main.work_generator]
mode = "cushion"
cushion = 2000

[[host_group]]
count = 10
p_ncpus = 4
{prefs}
"#
        )
    };
    let run = |prefs: &str| {
        let done = common::run_text(
            &scenario(prefs),
            "prefs.toml",
            &boinc_sim::world::RunOptions::CHECKED,
        );
        let jobs: u64 = done
            .hosts
            .iter()
            .map(|h| u64::from(h.projects[0].njobs))
            .sum();
        let cpu: f64 = done.hosts.iter().map(|h| h.projects[0].cpu_time).sum();
        (jobs, cpu)
    };
    let (jobs0, cpu0) = run("");
    let (jobs1, cpu1) =
        run("[host_group.prefs]\nwork_buf_min_days = 10\nwork_buf_additional_days = 0\n");
    assert!(jobs1 > jobs0 + 10 * 4 * 24 * 5, "{jobs1} vs {jobs0}");
    let (_, cpu2) = run("[host_group.prefs]\nmax_ncpus_pct = 25\n");
    let r = cpu2 / cpu0;
    assert!((0.24..0.26).contains(&r), "{r}");
    assert!(cpu1 > 0.0);
}

/// Background projects listed one by one (`[[host_group.background.project]]`):
/// every host gets exactly these, in order, each with its share; the entries' keys
/// left out are the section's.
#[test]
fn listed_background_projects_are_every_hosts() {
    let text = r#"[simulation]
seed = 5
duration = "3d"

[client]
policy = "modern_rec"

[project.main.workunit]
rsc_fpops_est = 3.6e12
rsc_fpops_bound = 3.6e13

[[host_group]]
count = 4
p_ncpus = 2

[host_group.background]
job_duration = "2h"
delay_bound = "5d"

[[host_group.background.project]]
share = 50

[[host_group.background.project]]
share = 250
job_flops = 1.8e13
"#;
    let done = common::run_text(text, "listed.toml", &boinc_sim::world::RunOptions::CHECKED);
    for h in &done.hosts {
        let shares: Vec<(bool, f64)> = h
            .projects
            .iter()
            .map(|p| (p.is_background(), p.resource_share))
            .collect();
        assert_eq!(shares, [(false, 100.0), (true, 50.0), (true, 250.0)]);
        assert!(h.projects[1].njobs > 0 && h.projects[2].njobs > 0);
        assert!(h.projects[1].cpu_time > 0.0 && h.projects[2].cpu_time > 0.0);
    }
    // The server saw only the hosts' RPCs to `main`.
    let to_main: u64 = done
        .hosts
        .iter()
        .map(|h| u64::from(h.projects[0].nrpcs))
        .sum();
    assert_eq!(done.counters.rpcs, to_main);
    let base = "[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.background]\n";
    let m = err(&format!(
        "{base}projects = 1\njob_duration = \"1h\"\n[[host_group.background.project]]\nshare = 5\n"
    ));
    has(
        &m,
        &["host_group.0.background.projects", "expected one of them"],
    );
    let m = err(&format!(
        "{base}[[host_group.background.project]]\nshare = 5\n"
    ));
    has(&m, &["host_group.0.background.project.0", "no job size"]);
    let m = err(&format!(
        "{base}share = {{ dist = \"uniform\", min = 1, max = 2 }}\njob_duration = \"1h\"\n[[host_group.background.project]]\n"
    ));
    has(
        &m,
        &[
            "host_group.0.background.project.0.share",
            "expected a share for each",
        ],
    );
    let m = err(&format!("{base}job_duration = \"1h\"\n"));
    has(&m, &["host_group.0.background", "no background project"]);
}
