//! Several apps per project (spec backend §1.4): each
//! `[[project.NAME.app]]` has its own workunit template, work generator, validator
//! and versions. Bad forms fail with file, line, column and key path; each app's
//! workunits carry its template and go with its own versions; a one-app project
//! reads the same in either form; adding an app moves no draw of another app's
//! work generator; and a run's job log replays to the run's credits app by app.

use boinc_sim::server::db::WorkunitRow;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::{Finished, RunOptions};
use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{self, err, has, replay_run_log, run as bin, text};

const TWO_APPS: &str = r#"
[[project.main.app]]
name = "long"
[project.main.app.workunit]
delay_bound = "5d"

[[project.main.app]]
name = "short"
[project.main.app.workunit]
delay_bound = "1d"
"#;

#[test]
fn bad_app_lists_name_the_line_and_key() {
    // A project-level template with several apps: whose would it be?
    let m = err(&format!(
        "[project.main.workunit]\nmin_quorum = 2\n{TWO_APPS}"
    ));
    has(
        &m,
        &[
            "bad.toml:1:1",
            "`project.main.workunit`",
            "several apps has no project-level workunit",
            "[project.main.app.workunit] table in each [[project.main.app]]",
        ],
    );
    // Two apps of one name.
    let m = err("[[project.main.app]]\nname = \"a\"\n[[project.main.app]]\nname = \"a\"\n");
    has(
        &m,
        &["bad.toml:4:1", "`project.main.app.1.name`", "distinct name"],
    );
    // A misspelt key in the second app.
    let m = err("[[project.main.app]]\nname = \"a\"\n[[project.main.app]]\nnme = \"b\"\n");
    has(
        &m,
        &[
            "bad.toml:4:1",
            "`project.main.app.1.nme`",
            "expected one of `name`",
        ],
    );
    // No app at all.
    let m = err("[project.main]\napp = []\n");
    has(
        &m,
        &["bad.toml:2:", "expected at least one [[project.NAME.app]]"],
    );
    // One app, its template given twice.
    let m = err(
        "[project.main.workunit]\nmin_quorum = 2\n[project.main.app.workunit]\nmin_quorum = 1\n",
    );
    has(
        &m,
        &[
            "`project.main.app.workunit`",
            "given both here and as [project.main.workunit]",
        ],
    );
    // A multi-threaded version for seed clients, which run one job per CPU.
    let m = err(
        "[[project.main.app.version]]\navg_ncpus = 4\n\n[[host_group]]\nname = \"old\"\ncount = 1\n",
    );
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.main.app.version.0.avg_ncpus`",
            "host group `old` attaches to this project with the seed_debt client",
            "policy = \"modern_rec\"",
        ],
    );
    // Scripted workunits of an app the project does not have.
    let m = err(&format!(
        "{TWO_APPS}\n[[event]]\nat = 0\ncreate_workunits = 1\napp = \"medium\"\n"
    ));
    has(
        &m,
        &[
            "`event.0.app`",
            "unknown app `medium` of project `main`",
            "expected one of: long, short",
        ],
    );
}

/// A modern-client run of 40 hosts for 3 days of `apps` (the project's apps and
/// anything else of the project), in process.
fn run(apps: &str) -> Finished<StatsRecorder> {
    run_with(apps, "")
}

/// [`run`] with `group` added to the host group's keys.
fn run_with(apps: &str, group: &str) -> Finished<StatsRecorder> {
    let text = format!(
        r#"[simulation]
seed = 8
duration = "3d"

[client]
policy = "modern_rec"

[project.main.daemons]
db_purge = 0

{apps}

[[host_group]]
count = 40
p_ncpus = 2
p_fpops = {{ dist = "uniform", min = 1e9, max = 3e9 }}
{group}
"#
    );
    common::run_text(&text, "apps.toml", &RunOptions::CHECKED)
}

fn workunits(done: &Finished<StatsRecorder>) -> Vec<WorkunitRow> {
    let mut w: Vec<WorkunitRow> = done.projects[0]
        .db
        .workunits
        .iter()
        .map(|(_, w)| w.clone())
        .collect();
    w.sort_by_key(|w| w.id);
    w
}

const LONG: &str = r#"
[[project.main.app]]
name = "long"
[project.main.app.workunit]
delay_bound = "5d"
rsc_fpops_est = 1.8e13
true_size = { dist = "lognormal", mu = 0.0, sigma = 0.3 }
[project.main.app.work_generator]
mode = "rate"
interval = "20m"
"#;

const SHORT: &str = r#"
[[project.main.app]]
name = "short"
[project.main.app.workunit]
delay_bound = "1d"
min_quorum = 2
target_nresults = 2
max_total_results = 4
max_success_results = 3
max_error_results = 3
rsc_fpops_est = 1.8e12
[project.main.app.work_generator]
mode = "cushion"
cushion = 30
[project.main.app.validator]
comparison = "fuzzy"
tolerance = 1e-9
[[project.main.app.version]]
plan_class = ""
[[project.main.app.version]]
plan_class = "mt"
avg_ncpus = 2
"#;

#[test]
fn each_app_makes_its_own_workunits_and_runs_its_own_versions() {
    let done = run(&format!("{LONG}{SHORT}"));
    let p = &done.projects[0];
    let wus = workunits(&done);
    let (long, short): (Vec<_>, Vec<_>) = wus.iter().partition(|w| w.appid == 1);
    // The rate generator of `long`: one workunit at 0, then one every 20 minutes.
    assert_eq!(long.len(), 3 * 72 + 1);
    assert!(
        short.len() > 30,
        "the cushion generator made {}",
        short.len()
    );
    for w in &long {
        assert_eq!((w.limits.delay_bound, w.min_quorum), (5 * 86_400, 1));
    }
    for w in &short {
        assert_eq!(
            (w.limits.delay_bound, w.min_quorum, w.target_nresults),
            (86_400, 2, 2)
        );
    }
    // Versions are numbered across apps: long's default version is 1, short's
    // are 2 and 3; every result went with a version of its workunit's app.
    let app_of_version: Vec<u32> = p.app_versions.iter().map(|v| v.appid).collect();
    assert_eq!(app_of_version, [1, 2, 2]);
    let mut by_version: BTreeMap<u32, usize> = BTreeMap::new();
    for (_, r) in p.db.results.iter() {
        if r.app_version_id == 0 {
            continue; // never sent
        }
        let appid = p.db.wu(r.workunitid).appid;
        assert_eq!(p.app_version(r.app_version_id).appid, appid);
        *by_version.entry(r.app_version_id).or_default() += 1;
    }
    // The 2-thread version is the faster on these 2-CPU hosts: most of short's
    // jobs use it (the plain one when its daily quota or timing says so).
    assert!(by_version[&1] > 200, "{by_version:?}");
    let plain = by_version.get(&2).copied().unwrap_or(0);
    assert!(by_version[&3] > 2 * plain + 100, "{by_version:?}");
}

#[test]
fn a_one_app_project_reads_the_same_in_either_form() {
    // One template and one generator, written at project level, then in the app.
    const TEMPLATE: &str = "delay_bound = \"2d\"\nmin_quorum = 2\ntarget_nresults = 2\n\
                            max_total_results = 4\nmax_success_results = 3\nmax_error_results = 3\n";
    const GENERATOR: &str = "mode = \"cushion\"\ncushion = 40\n";
    let project_level = run(&format!(
        "[project.main.workunit]\n{TEMPLATE}[project.main.work_generator]\n{GENERATOR}"
    ));
    let in_app = run(&format!(
        "[[project.main.app]]\nname = \"app\"\n[project.main.app.workunit]\n{TEMPLATE}\
         [project.main.app.work_generator]\n{GENERATOR}"
    ));
    let key = |d: &Finished<StatsRecorder>| {
        let mut v: Vec<(u32, u32, i64, i64, u64)> = d.projects[0]
            .db
            .results
            .iter()
            .map(|(_, r)| {
                (
                    r.id.0,
                    r.hostid.0,
                    i64::from(r.sent_time),
                    i64::from(r.received_time),
                    r.granted_credit.to_bits(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let a = key(&project_level);
    assert!(a.len() > 200, "{}", a.len());
    assert_eq!(a, key(&in_app));
}

#[test]
fn adding_an_app_moves_no_draw_of_the_first_apps_generator() {
    let alone = run(LONG);
    let with_short = run(&format!("{LONG}{SHORT}"));
    let sizes = |d: &Finished<StatsRecorder>| -> Vec<u64> {
        workunits(d)
            .iter()
            .filter(|w| w.appid == 1)
            .map(|w| w.true_fpops.to_bits())
            .collect()
    };
    let a = sizes(&alone);
    assert_eq!(a.len(), 3 * 72 + 1);
    // Sizes are drawn (not all equal), and the same in the same order.
    assert!(a.windows(2).any(|w| w[0] != w[1]));
    assert_eq!(a, sizes(&with_short));
}

/// `column` of a CSV file keyed by `key`.
fn column(path: &Path, key: &str, column: &str) -> BTreeMap<String, String> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    let k = h.iter().position(|c| c == key).unwrap();
    let c = h.iter().position(|c| c == column).unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (rec[k].to_string(), rec[c].to_string())
        })
        .collect()
}

#[test]
fn a_multi_app_runs_job_log_replays_to_its_credits() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = bin(&[
        "run",
        "scenarios/multi-app.toml",
        "--set",
        "simulation.duration=2d",
        "--set",
        "host_group.0.count=60",
        "--set",
        "host_group.1.count=20",
        "--job-log",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The settings file gives each app its validator.
    let cfg = std::fs::read_to_string(run.join("credit-main.toml")).unwrap();
    assert!(
        cfg.contains("[[app]]") && cfg.contains("comparison = \"fuzzy\""),
        "{cfg}"
    );
    let results = replay_run_log(&run, &tmp.path().join("replay"));
    let logged_app = column(&run.join("jobs.csv"), "result_id", "app_id");
    let run_credit = column(&run.join("results.csv"), "id", "granted_credit");
    let replay_credit = column(&results, "result_id", "credit_new");
    let apps: std::collections::BTreeSet<&str> = logged_app.values().map(|s| s.as_str()).collect();
    assert_eq!(apps.into_iter().collect::<Vec<_>>(), ["1", "2"]);
    assert_eq!(replay_credit.len(), logged_app.len());
    for (id, c) in &replay_credit {
        let run: f64 = run_credit[id].parse().unwrap();
        let replay: f64 = c.parse().unwrap();
        assert_eq!(replay.to_bits(), run.to_bits(), "result {id}");
    }
}

#[test]
fn wrong_outputs_collide_as_their_own_app_says() {
    // Every wrong output of `yes_no` takes its error class's value (collision 1);
    // those of `floats` never collide. One group, so one error class: its hosts
    // err alike, and a third of their outputs are wrong.
    let app = |name: &str, collision: f64| {
        format!(
            r#"
[[project.main.app]]
name = "{name}"
wrong_output_collision_frac = {collision}
[project.main.app.workunit]
min_quorum = 2
target_nresults = 2
max_total_results = 4
max_success_results = 3
max_error_results = 3
rsc_fpops_est = 3.6e12
[project.main.app.work_generator]
mode = "cushion"
cushion = 20
"#
        )
    };
    let done = run_with(
        &format!("{}{}", app("yes_no", 1.0), app("floats", 0.0)),
        "wrong_result_prob = 0.33",
    );
    let p = &done.projects[0];
    // Per app: (workunits with two wrong outputs, of which the outputs agree).
    let mut pairs = [(0, 0); 2];
    for w in workunits(&done) {
        let wrong: Vec<f64> = w
            .results
            .iter()
            .map(|&r| p.db.result(r))
            .filter(|r| r.output_correct == Some(false))
            .map(|r| r.output)
            .collect();
        if wrong.len() >= 2 {
            let k = w.appid as usize - 1;
            pairs[k].0 += 1;
            pairs[k].1 += usize::from(wrong[0] == wrong[1]);
        }
    }
    let [(yes_no, agree), (floats, agree_floats)] = pairs;
    assert!(yes_no > 10 && floats > 10, "{pairs:?}");
    assert_eq!(agree, yes_no, "yes_no's wrong outputs all collide");
    assert_eq!(agree_floats, 0, "floats' wrong outputs never collide");
}

#[test]
fn compare_puts_the_apps_of_two_multi_app_runs_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |db: &str| {
        let out = tmp.path().join(db);
        let o = bin(&[
            "run",
            "scenarios/multi-app.toml",
            "--set",
            "simulation.duration=2d",
            "--set",
            "host_group.0.count=40",
            "--set",
            "host_group.1.count=10",
            "--set",
            &format!("project.main.app.search.workunit.delay_bound={db}"),
            "-q",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        out
    };
    let (a, b) = (run("1d"), run("2d"));
    let out = tmp.path().join("cmp");
    let o = bin(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // compare.csv: the search app's own delay bound per run, the project's empty.
    let mut r = csv::Reader::from_path(out.join("compare.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (cp, cm, cv) = (col("project"), col("metric"), col("value"));
    let mut bounds: Vec<(String, String)> = Vec::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        if &rec[cm] == "delay_bound_s" {
            bounds.push((rec[cp].to_string(), rec[cv].to_string()));
        }
    }
    let of = |p: &str| -> Vec<&str> {
        bounds
            .iter()
            .filter(|(q, _)| q == p)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(of("main"), ["", ""]);
    assert_eq!(of("main/sim"), ["604800.0", "604800.0"]);
    assert_eq!(of("main/search"), ["86400.0", "172800.0"]);
    // Overlay charts are the project's only.
    assert!(out.join("compare_throughput.png").is_file());
    assert!(!out.join("compare_throughput_main_search.png").exists());
}
