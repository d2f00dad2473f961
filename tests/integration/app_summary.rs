//! `summary_apps.csv`: the headline figures per (project, app). With two
//! apps, the apps' counts add up to the project's row and agree with the row tables,
//! each app shows its own template; a one-app project's app row is its project row;
//! and two runs write the same file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;

/// One project, two apps: "long" (5-day deadline, no replication) and "short"
/// (1-day deadline, quorum 2), each with a rate work generator, 200 hosts, 3 days.
const TWO_APPS: &str = r#"
[simulation]
name = "two-apps"
seed = 7
duration = "3d"

[project.main.config]
daily_result_quota = 500
max_wus_to_send = 10

[[project.main.app]]
name = "long"
[project.main.app.workunit]
delay_bound = "5d"
min_quorum = 1
target_nresults = 1
rsc_fpops_est = 3.6e13
rsc_fpops_bound = 3.6e14
[project.main.app.work_generator]
mode = "rate"
interval = 300
count = 1

[[project.main.app]]
name = "short"
[project.main.app.workunit]
delay_bound = "1d"
min_quorum = 2
target_nresults = 2
max_total_results = 6
max_success_results = 4
max_error_results = 3
rsc_fpops_est = 3.6e12
rsc_fpops_bound = 3.6e13
[project.main.app.work_generator]
mode = "rate"
interval = 60
count = 1

[client]
policy = "modern_rec"

[[host_group]]
name = "volunteers"
count = 200
p_ncpus = 2
error_prob = 0.05
detach_prob = 0.01
arrival = { dist = "uniform", min = 0, max = "6h" }
"#;

/// Runs `boinc-sim run` on `scenario` with `extra` arguments into `dir/name`.
fn run(dir: &Path, name: &str, scenario: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let o = common::command()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(scenario)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    out
}

fn run_two_apps(dir: &Path, name: &str) -> PathBuf {
    let scenario = dir.join("two-apps.toml");
    std::fs::write(&scenario, TWO_APPS).unwrap();
    run(dir, name, &scenario, &[])
}

/// A CSV file as its header and its rows, each row by column name.
fn table(path: &Path) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

fn num(row: &BTreeMap<String, String>, c: &str) -> f64 {
    row[c]
        .parse()
        .unwrap_or_else(|e| panic!("{c} = {:?}: {e}", row[c]))
}

#[test]
fn two_apps_each_have_their_own_row_adding_up_to_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_two_apps(tmp.path(), "a");
    let (_, project) = table(&out.join("summary.csv"));
    let (header, apps) = table(&out.join("summary_apps.csv"));
    let project = &project[0];

    // The keys, then summary.csv's columns without the per-project ones.
    let mut want = vec!["project", "app_id", "app"];
    want.extend(boinc_sim::stats::headline::app_columns());
    assert_eq!(header, want);
    for c in boinc_sim::stats::headline::PROJECT_ONLY {
        assert!(!header.iter().any(|h| h == c), "{c} is per project");
    }

    let keys: Vec<_> = apps
        .iter()
        .map(|r| {
            (
                r["project"].as_str(),
                r["app_id"].as_str(),
                r["app"].as_str(),
            )
        })
        .collect();
    assert_eq!(keys, [("main", "1", "long"), ("main", "2", "short")]);

    // Each app's template is its own; the project, with two, shows none.
    assert_eq!(num(&apps[0], "delay_bound_s"), 5.0 * 86_400.0);
    assert_eq!(num(&apps[1], "delay_bound_s"), 86_400.0);
    assert_eq!(num(&apps[0], "min_quorum"), 1.0);
    assert_eq!(num(&apps[1], "min_quorum"), 2.0);
    assert_eq!(num(&apps[1], "target_nresults"), 2.0);
    assert_eq!(project["delay_bound_s"], "");

    // Counts add up to the project's exactly.
    for c in [
        "workunits_created",
        "workunits_assimilated_valid",
        "workunits_assimilated_error",
        "results_created",
        "results_sent",
        "results_reported",
        "results_deadline_met",
        "results_deadline_missed",
        "results_deadline_passed",
        "results_censored",
        "results_no_reply",
    ] {
        let sum: f64 = apps.iter().map(|r| num(r, c)).sum();
        assert_eq!(sum, num(project, c), "{c}");
    }
    // Both apps did work, and none of the long app's 5-day deadlines passed in 3
    // days: all its results sent are censored.
    for a in &apps {
        assert!(num(a, "results_reported") > 100.0, "{a:?}");
    }
    assert_eq!(num(&apps[0], "results_deadline_passed"), 0.0);
    assert_eq!(
        num(&apps[0], "results_censored"),
        num(&apps[0], "results_sent")
    );
    assert_eq!(apps[0]["deadline_fail_frac"], "");
    assert!(num(&apps[1], "results_deadline_passed") > 0.0);

    // The counts are those of the row tables, routed by each workunit's appid.
    let (_, wus) = table(&out.join("workunits.csv"));
    let app_of: BTreeMap<&str, &str> = wus
        .iter()
        .map(|w| (w["id"].as_str(), w["appid"].as_str()))
        .collect();
    let (_, results) = table(&out.join("results.csv"));
    for (a, id) in apps.iter().zip(["1", "2"]) {
        let created = app_of.values().filter(|&&x| x == id).count();
        let mine = results
            .iter()
            .filter(|r| app_of[r["workunitid"].as_str()] == id);
        let sent = mine
            .clone()
            .filter(|r| !r["sent_time_s"].is_empty())
            .count();
        assert_eq!(num(a, "workunits_created"), created as f64);
        assert_eq!(num(a, "results_created"), mine.count() as f64);
        assert_eq!(num(a, "results_sent"), sent as f64);
    }
}

#[test]
fn two_runs_write_the_same_app_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_two_apps(tmp.path(), "a");
    let b = run_two_apps(tmp.path(), "b");
    let x = std::fs::read(a.join("summary_apps.csv")).unwrap();
    assert!(x.len() > 500, "summary_apps.csv is nearly empty");
    assert_eq!(x, std::fs::read(b.join("summary_apps.csv")).unwrap());
}

/// Shipped scenarios have one app per project: each app row repeats its project's
/// row, column for column, in scenario order.
#[test]
fn a_one_app_project_row_is_its_project_row() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = common::root().join("scenarios/multi-project.toml");
    let out = run(
        tmp.path(),
        "m",
        &scenario,
        &[
            "--set",
            "simulation.duration=\"4d\"",
            "--set",
            "host_group.0.count=60",
            "--set",
            "output.warmup=\"1d\"",
        ],
    );
    let (_, projects) = table(&out.join("summary.csv"));
    let (header, apps) = table(&out.join("summary_apps.csv"));
    assert_eq!(projects.len(), 3);
    assert_eq!(apps.len(), projects.len());
    for (p, a) in projects.iter().zip(&apps) {
        assert_eq!(a["project"], p["project"]);
        assert_eq!((a["app_id"].as_str(), a["app"].as_str()), ("1", "app"));
        assert!(num(a, "results_reported") > 0.0, "{a:?}");
        for c in &header[3..] {
            assert_eq!(a[c], p[c], "{}: {c}", p["project"]);
        }
    }
}
