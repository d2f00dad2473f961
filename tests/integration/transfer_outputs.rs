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
