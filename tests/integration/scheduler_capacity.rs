//! The scheduler's capacity (`[project.NAME.server]`, spec backend §2.4.0, client
//! §4.3), end to end:
//!
//! * on many random scenarios, under both client policies, the web server's
//!   invariants hold after every event (`--check-invariants`): no more RPCs in
//!   service than processes, every accepted RPC answered or given up exactly once,
//!   and as many hosts waiting for an answer as the server has RPCs live (so no
//!   host has two at once), together with every server and client invariant;
//! * an overloaded scheduler refuses and loses connections, and the figures agree
//!   with each other;
//! * a run with a web server is deterministic;
//! * `--plot` draws its `server` chart, into report.html too, and a plain run has
//!   none;
//! * a bad `[project.NAME.server]` is refused with its key path.

use super::common::{err, has, run, run_text, text};
use boinc_sim::world::RunOptions;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A small project with `hosts` hosts behind a scheduler of `processes`
/// processes taking `service` seconds per RPC and `backlog` waiting connections.
#[allow(clippy::too_many_arguments)]
fn scenario(
    seed: u64,
    policy: &str,
    hosts: u32,
    processes: u32,
    service: f64,
    backlog: u32,
    resend: bool,
    on_frac: f64,
    days: u32,
) -> String {
    format!(
        r#"[simulation]
seed = {seed}
duration = "{days}d"

[client]
policy = "{policy}"

[project.a.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 4
max_total_results = 8
max_success_results = 6
delay_bound = "2d"
rsc_fpops_est = 3.6e12
rsc_fpops_bound = 3.6e13

[project.a.config]
resend_lost_results = {resend}
daily_result_quota = 100000

[project.a.work_generator]
mode = "cushion"
cushion = 100

[project.a.daemons]
transitioner = 60
validator = 60
assimilator = 60
file_deleter = 60
work_generator = 60

[project.a.server]
scheduler_processes = {processes}
rpc_service_time = {{ dist = "exponential", mean = {service} }}
per_job_reported = 0.05
per_job_sent = 0.1
listen_backlog = {backlog}

[[host_group]]
count = {hosts}
p_ncpus = 2
p_fpops = {{ dist = "uniform", min = 5e8, max = 2e9 }}
on_frac = {on_frac}
on_lambda = "6h"
error_prob = 0.05
detach_prob = 0.01
arrival = {{ dist = "uniform", min = 0, max = "6h" }}
lifetime = {{ dist = "exponential", mean = "10d" }}
"#
    )
}

/// Runs the scenario `text` from the command line into `dir/name`, with the
/// options `extra` (`--check-invariants`, `--plot`), and returns the run folder.
fn run_cli(dir: &std::path::Path, name: &str, scn: &str, extra: &[&str]) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, scn).unwrap();
    let out = dir.join(name);
    let mut args = vec![
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend(extra);
    let o = run(&args);
    assert!(o.status.success(), "{name}: {}", text(&o.stderr));
    out
}

/// The `summary.csv` row of project `a`, by column.
fn summary(dir: &std::path::Path) -> BTreeMap<String, String> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).expect("summary.csv");
    let head = r.headers().expect("header").clone();
    let row = r.records().next().expect("a row").expect("a record");
    head.iter()
        .zip(row.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn num(s: &BTreeMap<String, String>, k: &str) -> f64 {
    s[k].parse().unwrap_or_else(|_| panic!("{k} = {:?}", s[k]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    #[test]
    fn the_web_server_and_its_clients_keep_their_invariants(
        seed in 1u64..1_000_000,
        modern in any::<bool>(),
        hosts in 5u32..40,
        processes in 1u32..=3,
        service in prop_oneof![0.05f64..1.0, 1.0f64..60.0],
        backlog in 0u32..8,
        resend in any::<bool>(),
        on_frac in prop_oneof![Just(1.0), 0.3f64..1.0],
    ) {
        let policy = if modern { "modern_rec" } else { "seed_debt" };
        let text = scenario(seed, policy, hosts, processes, service, backlog, resend, on_frac, 4);
        let loaded = boinc_sim::scenario::load::load_str(&text, "capacity.toml", &[], None)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let world = boinc_sim::stats::recorder::StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
        if let Err(e) = world.run() {
            panic!("{e}\n--- scenario ---\n{text}");
        }
    }
}

#[test]
fn an_overloaded_scheduler_refuses_and_loses_connections_and_its_figures_agree() {
    for policy in ["seed_debt", "modern_rec"] {
        let dir = tempfile::tempdir().expect("temp dir");
        // 60 hosts, one process of 600 s per RPC on average, five connections
        // waiting: more than the scheduler can serve.
        let busy = scenario(7, policy, 60, 1, 600.0, 5, true, 1.0, 3);
        let out = run_cli(dir.path(), policy, &busy, &["--check-invariants"]);
        let s = summary(&out);
        let (served, refused, timed_out) = (
            num(&s, "rpcs_served"),
            num(&s, "rpcs_refused"),
            num(&s, "rpcs_timed_out"),
        );
        assert!(refused > 0.0 && timed_out > 0.0, "{policy}: {s:?}");
        assert!(num(&s, "scheduler_busy_frac") > 0.8, "{policy}: {s:?}");
        assert!(
            num(&s, "scheduler_busy_frac") <= 1.0 + 1e-9,
            "{policy}: {s:?}"
        );
        assert!(num(&s, "rpc_wait_mean_s") > 60.0, "{policy}: {s:?}");
        assert!(
            num(&s, "rpc_wait_p90_s") >= num(&s, "rpc_wait_p50_s"),
            "{policy}"
        );
        // Every refusal and every timeout is a failed RPC for its client; a
        // served request is a scheduler request, unless it found its host locked.
        assert!(
            num(&s, "client_rpcs_failed") >= refused + timed_out,
            "{policy}"
        );
        assert!(num(&s, "scheduler_requests") <= served, "{policy}");
        // The time series sum to the window's figures (no warm-up here).
        let mut r = csv::Reader::from_path(out.join("timeseries.csv")).unwrap();
        let mut sums: BTreeMap<String, f64> = BTreeMap::new();
        for rec in r.records() {
            let rec = rec.unwrap();
            if let Ok(v) = rec[3].parse::<f64>() {
                *sums.entry(rec[2].to_string()).or_default() += v;
            }
        }
        for k in ["rpcs_served", "rpcs_refused", "rpcs_timed_out"] {
            assert_eq!(sums[k], num(&s, k), "{policy}: {k}");
        }
    }
}

#[test]
fn a_run_with_a_web_server_is_deterministic() {
    let scn = scenario(11, "modern_rec", 20, 1, 200.0, 1, true, 0.7, 2);
    let a = run_text(&scn, "a.toml", &RunOptions::default());
    let b = run_text(&scn, "b.toml", &RunOptions::default());
    assert_eq!(a.counters.rpcs, b.counters.rpcs);
    assert_eq!(a.counters.rpcs_failed, b.counters.rpcs_failed);
    assert_eq!(a.counters.events, b.counters.events);
    assert!(
        a.counters.rpcs_failed > 0,
        "the scheduler was never busy enough"
    );
    // Byte-identical run folders from the command line.
    let dir = tempfile::tempdir().expect("temp dir");
    let outs: Vec<_> = (0..2)
        .map(|k| run_cli(dir.path(), &format!("d{k}"), &scn, &[]))
        .collect();
    for f in [
        "summary.csv",
        "timeseries.csv",
        "results.csv",
        "workunits.csv",
    ] {
        let a = std::fs::read(outs[0].join(f)).unwrap();
        let b = std::fs::read(outs[1].join(f)).unwrap();
        assert!(a == b, "{f} differs between runs");
    }
}

#[test]
fn a_bad_server_table_names_its_key() {
    let base = "[simulation]\nduration = \"1d\"\n[[host_group]]\ncount = 1\n";
    let e = err(&format!(
        "{base}[project.a.server]\nscheduler_processes = 0\nrpc_service_time = 1\n"
    ));
    has(&e, &["project.a.server.scheduler_processes", "1"]);
    let e = err(&format!(
        "{base}[project.a.server]\nscheduler_processes = 2\nrpc_service_time = 1\nper_job_sent = -1\n"
    ));
    has(&e, &["project.a.server.per_job_sent"]);
    let e = err(&format!(
        "{base}[project.a.server]\nscheduler_processes = 2\n"
    ));
    has(&e, &["rpc_service_time"]);
    let e = err(&format!(
        "{base}[project.a.server]\nscheduler_processes = 2\nrpc_service_time = 1\nbacklog = 3\n"
    ));
    has(&e, &["backlog", "listen_backlog"]);
}

/// After an outage of its scheduler the project recovers, and `summary.json` and
/// `summary.csv` say when (docs/outputs.md, "Time to recover").
#[test]
fn the_time_to_recover_from_an_outage_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut scn = scenario(5, "modern_rec", 40, 2, 1.0, 20, true, 1.0, 5);
    scn += "\n[[project.a.outage]]\nstart = \"2d\"\nduration = \"6h\"\n";
    let out = run_cli(dir.path(), "outage", &scn, &[]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let outages = json["projects"]["a"]["outages"].as_array().expect("a list");
    assert_eq!(outages.len(), 1);
    assert_eq!(outages[0]["what"], "scheduler");
    assert_eq!(outages[0]["start_s"], 172_800);
    assert_eq!(outages[0]["end_s"], 194_400);
    let r = outages[0]["recovery_s"].as_i64().expect("recovered");
    assert!((0..86_400).contains(&r), "{r}");
    assert_eq!(r % 3600, 0, "the outage ends on the hour: whole buckets");
    let s = summary(&out);
    assert_eq!(num(&s, "outages"), 1.0);
    assert_eq!(num(&s, "recovery_time_max_s"), r as f64);
    assert_eq!(num(&s, "outages_unrecovered"), 0.0);
}

/// `run --plot` of a run with a web server and a scheduler outage draws the
/// `server` chart (docs/plots.md, "`server`"; spec backend §2.4.0), with the outage
/// shaded, and report.html shows it; a plain quickstart run has no such chart.
#[test]
fn the_server_chart_is_drawn_only_for_a_run_with_a_web_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut scn = scenario(5, "modern_rec", 40, 2, 1.0, 20, true, 1.0, 3);
    scn += "\n[[project.a.outage]]\nstart = \"1d\"\nduration = \"6h\"\n";
    let out = run_cli(dir.path(), "server", &scn, &["--plot"]);
    for ext in ["png", "svg"] {
        let f = out.join(format!("plots/server.{ext}"));
        assert!(std::fs::metadata(&f).is_ok_and(|m| m.len() > 2000), "{f:?}");
    }
    let svg = std::fs::read_to_string(out.join("plots/server.svg")).unwrap();
    for text in [
        "Scheduler processes busy",
        "Wait for a scheduler process",
        "Daemons down",
        "project a: scheduler down",
    ] {
        assert!(svg.contains(text), "no `{text}` in server.svg");
    }
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("id=\"chart-server\""),
        "report.html lacks the chart"
    );
    assert!(page.contains("Server load"), "report.html lacks its title");

    // A run without a web server or daemon outages: no server chart anywhere.
    let plain = dir.path().join("quickstart");
    let o = run(&[
        "run",
        "scenarios/quickstart.toml",
        "--out",
        plain.to_str().unwrap(),
        "-q",
        "--plot",
        "--set",
        "simulation.duration=\"2d\"",
        "--set",
        "host_group.0.count=50",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(plain.join("plots/server_backlog.svg").is_file());
    assert!(!plain.join("plots/server.png").exists());
    assert!(!plain.join("plots/server.svg").exists());
    let page = std::fs::read_to_string(plain.join("report.html")).unwrap();
    assert!(!page.contains("id=\"chart-server\""));
}
