//! The outputs of file transfers (docs/outputs.md, "File transfers"), end to end: a
//! run without files writes none of them, and `boinc-sim plot` draws the `network`
//! chart exactly when a run folder has the network series (docs/plots.md,
//! `network`), reading their empty values (an unlimited link) as missing.

use std::fs;
use std::path::Path;

use crate::common::{command as bin, text};

/// The quickstart scenario, two days of 30 hosts, into `out`.
fn run_short(out: &Path) {
    let o = bin()
        .args(["run", "-q", "scenarios/quickstart.toml", "--out"])
        .arg(out)
        .args([
            "--set",
            "simulation.duration=\"2d\"",
            "--set",
            "host_group.0.count=30",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// The quickstart scenario with files, three days of 40 hosts: 50 MB inputs, 5 MB
/// outputs, a 2 MB/s download link, under `--check-invariants`, into `out`, with
/// the options `extra`.
fn run_with_files(out: &Path, extra: &[&str]) {
    let o = bin()
        .args(["run", "-q", "scenarios/quickstart.toml", "--out"])
        .arg(out)
        .args([
            "--set",
            "simulation.duration=\"3d\"",
            "--set",
            "host_group.0.count=40",
            "--set",
            "project.main.files.input=5e7",
            "--set",
            "project.main.files.output=5e6",
            "--set",
            "project.main.data_server.download=2e6",
            "--check-invariants",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn first_line(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

fn plot(dir: &Path) -> Vec<String> {
    let o = bin().arg("plot").arg(dir).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut v: Vec<String> = fs::read_dir(dir.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn without_files_no_transfer_output_and_the_network_chart_only_with_its_series() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run_short(&dir);

    // Without files: the columns of every run before files existed.
    let results = first_line(&dir.join("results.csv"));
    assert!(
        results.ends_with(",purged,output_correct,app_version_id"),
        "{results}"
    );
    let summary = first_line(&dir.join("summary.csv"));
    assert!(summary.ends_with(",credit_neutrality_ratio"), "{summary}");
    let series = fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    assert!(!series.contains("bytes_down") && !series.contains("link_util"));
    let hist = fs::read_to_string(dir.join("histograms.csv")).unwrap();
    assert!(!hist.contains("result_download_s"));
    let charts = plot(&dir);
    assert!(
        !charts.iter().any(|c| c.starts_with("network")),
        "{charts:?}"
    );

    // The network series of a run with files, appended as the run writes them: one
    // download link of 1 kB/s, an unlimited upload link (empty utilisation).
    let mut ts = series;
    let buckets: Vec<String> = ts
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for t in &buckets {
        ts.push_str(&format!(
            "{t},main,bytes_down,1800000.0\n{t},main,bytes_up,20000.0\n\
             {t},main,link_util_down,0.5\n{t},main,link_util_up,\n"
        ));
    }
    fs::write(dir.join("timeseries.csv"), ts).unwrap();
    let mut hist = hist;
    hist.push_str("main,result_download_s,60.0,120.0,4\nmain,result_upload_s,0.0,60.0,4\n");
    fs::write(dir.join("histograms.csv"), hist).unwrap();
    let charts = plot(&dir);
    assert!(charts.contains(&"network.svg".to_string()), "{charts:?}");
    assert!(charts.contains(&"network.png".to_string()), "{charts:?}");
    let svg = fs::read_to_string(dir.join("plots/network.svg")).unwrap();
    assert!(
        svg.contains("MB per day"),
        "bytes per day with an SI prefix"
    );
    assert!(
        svg.contains("unlimited"),
        "the upload link has no utilisation"
    );
    let page = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.contains("id=\"chart-network\""));
}

/// A real run with files, from the command line (spec client §8; docs/outputs.md
/// "File transfers"): every reported result of a job with files has its transfer
/// times in order, from its arrival on the host to its report, its wait is the sum
/// of its two phases, and its bytes are the scenario's; the data server's series
/// and the summary's figures are there; the `network` chart is drawn.
#[test]
fn a_run_with_files_writes_consistent_transfer_times() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    run_with_files(&out, &["--plot"]);
    let mut rd = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let h = rd.headers().unwrap().clone();
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let (sent, recv, cs) = (
        col("sent_time_s"),
        col("received_time_s"),
        col("client_state"),
    );
    let (ds, de, us, ue, wait) = (
        col("download_start_s"),
        col("download_end_s"),
        col("upload_start_s"),
        col("upload_end_s"),
        col("transfer_wait_s"),
    );
    let (db, ub) = (col("download_bytes"), col("upload_bytes"));
    let num = |r: &csv::StringRecord, i: usize| -> Option<f64> { r[i].parse().ok() };
    let mut with_files = 0;
    for r in rd.records() {
        let r = r.unwrap();
        let Some(w) = num(&r, wait) else { continue };
        with_files += 1;
        let t = |i| num(&r, i).unwrap();
        // Downloaded after it was sent, computed after, uploaded before the report.
        assert!(t(sent) <= t(ds) && t(ds) <= t(de), "{r:?}");
        assert_eq!(t(db), 5e7, "{r:?}");
        if &r[cs] == "5" {
            assert!(
                t(de) <= t(us) && t(us) <= t(ue) && t(ue) <= t(recv),
                "{r:?}"
            );
            assert_eq!(t(ub), 5e6, "{r:?}");
            assert!(
                (w - ((t(de) - t(sent)) + (t(ue) - t(us)))).abs() < 1e-9,
                "{r:?}"
            );
        }
    }
    assert!(
        with_files > 50,
        "only {with_files} results with transfer times"
    );
    let ts = fs::read_to_string(out.join("timeseries.csv")).unwrap();
    assert!(ts.contains(",main,bytes_down,") && ts.contains(",main,link_util_down,"));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .next()
            .unwrap()
            .contains("download_time_p90_s")
    );
    assert!(out.join("plots/network.png").exists());
}

/// A data server with `max_connections` (spec client §8.5): never more transfers at
/// once than its connections, the refused ones counted the same in `timeseries.csv`
/// and `summary.csv`, and the network invariants hold throughout.
#[test]
fn a_data_server_serves_at_most_max_connections_transfers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    run_with_files(
        &out,
        &["--set", "project.main.data_server.max_connections=3"],
    );
    let mut rd = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let h = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let get = |name: &str| -> f64 {
        let i = h
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no {name}"));
        row[i].parse().unwrap()
    };
    assert_eq!(get("data_max_connections"), 3.0);
    let full = get("data_connections_full_frac");
    assert!(full > 0.0 && full <= 1.0, "{full}");
    let refused = get("transfers_refused");
    assert!(refused > 0.0, "40 hosts on 3 connections: some are refused");

    let ts = fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let values = |metric: &str| -> Vec<f64> {
        (ts.lines())
            .filter(|l| l.contains(&format!(",main,{metric},")))
            .filter_map(|l| l.rsplit(',').next().unwrap().parse().ok())
            .collect()
    };
    let open = values("data_connections");
    assert!(
        !open.is_empty() && open.iter().all(|&n| n <= 3.0),
        "{open:?}"
    );
    assert!(open.contains(&3.0), "{open:?}");
    let per_bucket: f64 = values("transfers_refused").iter().sum();
    assert_eq!(per_bucket, refused, "the buckets add up to the summary");
}

#[test]
fn max_connections_below_one_names_its_key() {
    let e = crate::common::err(
        "[simulation]\nduration = \"1d\"\n[[host_group]]\ncount = 1\n\
         [project.a.files]\ninput = 1e6\n[project.a.data_server]\nmax_connections = 0\n",
    );
    crate::common::has(&e, &["project.a.data_server.max_connections", ">= 1"]);
}
