//! Volunteers drawn per host: availability classes of a mixed group, daily and
//! weekly patterns, vacations, and hardware (CPU count, GPUs, operating system)
//! drawn from distributions. The shipped example runs through the CLI and writes
//! each host's class in `hosts.csv`; a run through the library shows the draws
//! follow their weights; bad keys are refused with their place.

use boinc_sim::world::RunOptions;

use crate::common::{self, err, has, run, text};

/// A one-project scenario with `group` as its only host group.
fn scenario(group: &str) -> String {
    format!(
        r#"[simulation]
seed = 5
duration = "2d"

[client]
policy = "modern_rec"

[project.main.workunit]
rsc_fpops_est = 1.44e13
rsc_fpops_bound = 1.44e14

[project.main.work_generator]
mode = "cushion"
cushion = 200

{group}
"#
    )
}

const MIXED: &str = r#"[[host_group]]
name = "volunteers"
count = 600
arrival = 0
p_ncpus = { dist = "uniform", min = 1.5, max = 9.5 }
active_frac = { dist = "uniform", min = 0.5, max = 1.0 }
os_name = { "Microsoft Windows" = 0.8, Linux = 0.1, Darwin = 0.1 }
coproc = [ { type = "nvidia", probability = 0.25, count = { dist = "uniform", min = 0.5, max = 2.49 }, peak_flops = 5e12 } ]

[[host_group.availability.class]]
name = "random"
weight = 3
on_frac = 0.5

[[host_group.availability.class]]
name = "office"
weight = 7
daily = { start = "09:00", end = "17:30", weekday_prob = 0.95, weekend_prob = 0.1, utc_offset = { "-5" = 1, "1" = 1 } }
"#;

#[test]
fn a_mixed_group_draws_each_host_by_its_weights() {
    let f = common::run_text(&scenario(MIXED), "mixed.toml", &RunOptions::CHECKED);
    let n = f.hosts.len() as f64;
    assert_eq!(n, 600.0);
    // Classes 3 : 7.
    let random = f.hosts.iter().filter(|h| h.avail.class() == 0).count() as f64;
    assert!((random / n - 0.3).abs() < 0.06, "{random}");
    // CPUs: uniform on [1.5, 9.5] rounded, so 2..=10 (9.5 rounds to 10), mean 5.5.
    let ncpus: Vec<u32> = f.hosts.iter().map(|h| h.ncpus).collect();
    assert!(ncpus.iter().all(|&c| (2..=10).contains(&c)), "{ncpus:?}");
    let mean = ncpus.iter().sum::<u32>() as f64 / n;
    assert!((mean - 5.5).abs() < 0.3, "{mean}");
    // A quarter of the hosts have 1 or 2 GPUs; the others none.
    let gpus: Vec<u32> = f
        .hosts
        .iter()
        .map(|h| h.coprocs.iter().map(|c| c.count).sum())
        .collect();
    let with = gpus.iter().filter(|&&g| g > 0).count() as f64;
    assert!((with / n - 0.25).abs() < 0.05, "{with}");
    assert!(gpus.iter().all(|&g| g <= 2));
    assert!(gpus.contains(&2) && gpus.contains(&1));
    // The server's host records: 80 % Windows, and every host in one record.
    let p = &f.projects[0];
    let rows: Vec<_> =
        p.db.hosts
            .iter()
            .map(|(_, h)| h.names.os_name.to_string())
            .collect();
    assert!(rows.len() >= 590, "{}", rows.len());
    let win = rows.iter().filter(|o| *o == "Microsoft Windows").count() as f64;
    assert!((win / rows.len() as f64 - 0.8).abs() < 0.05, "{win}");
    assert!(rows.iter().any(|o| o == "Darwin") && rows.iter().any(|o| o == "Linux"));
    // Hosts that drew the same system share one copy of their names: one per entry
    // of the mix, not one per host.
    let copies: std::collections::BTreeSet<*const _> =
        p.db.hosts
            .iter()
            .map(|(_, h)| std::sync::Arc::as_ptr(&h.names))
            .collect();
    assert_eq!(copies.len(), 3, "{} copies", copies.len());
    // The same scenario and seed give the same hosts.
    let g = common::run_text(&scenario(MIXED), "mixed.toml", &RunOptions::CHECKED);
    let key = |f: &boinc_sim::world::Finished<_>| -> Vec<(u8, u32, usize)> {
        f.hosts
            .iter()
            .map(|h| (h.avail.class(), h.ncpus, h.coprocs.len()))
            .collect()
    };
    assert_eq!(key(&f), key(&g));
}

#[test]
fn the_example_writes_each_hosts_class() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("vp");
    let o = run(&[
        "run",
        "scenarios/volunteer-patterns.toml",
        "--set",
        "simulation.duration=3d",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(out.join("hosts.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"avail_class"));
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    for l in lines {
        seen.insert(l.rsplit(',').next().unwrap().to_string());
        n += 1;
    }
    assert_eq!(n, 300);
    let want: std::collections::BTreeSet<String> = ["always", "home", "office", "random"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, want);
    // A group without classes has no such column.
    let out2 = tmp.path().join("q");
    let o = run(&[
        "run",
        "scenarios/trace-hosts.toml",
        "--set",
        "simulation.duration=1d",
        "--out",
        out2.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(out2.join("hosts.csv")).unwrap();
    assert!(!csv.lines().next().unwrap().contains("avail_class"));
}

#[test]
fn bad_availability_keys_are_located() {
    let group =
        |extra: &str| scenario(&format!("[[host_group]]\nname = \"v\"\ncount = 2\n{extra}"));
    // A clock time out of the day.
    let m = err(&group(
        "[host_group.availability]\ndaily = { start = \"25:00\", end = \"17:00\" }\n",
    ));
    has(
        &m,
        &[
            "host_group.0.availability.daily.start",
            "expected a clock time from 00:00 to 24:00",
        ],
    );
    // A malformed clock time, at its place.
    let m = err(&group(
        "[host_group.availability]\ndaily = { start = \"9:75\", end = \"17:00\" }\n",
    ));
    has(&m, &["bad.toml:20:", "expected HH:MM or HH:MM:SS"]);
    // Weights: negative, and all zero.
    let m = err(&group(
        "[[host_group.availability.class]]\nname = \"a\"\nweight = -1\n\
         [[host_group.availability.class]]\nname = \"b\"\nweight = 0\n",
    ));
    has(
        &m,
        &[
            "host_group.0.availability.class.0.weight",
            "expected a weight >= 0",
        ],
    );
    has(&m, &["every class has weight 0"]);
    // A zone that is not hours, a probability out of range.
    let m = err(&group(
        "[host_group.availability]\ndaily = { start = \"09:00\", end = \"17:00\", weekday_prob = 1.5, utc_offset = { \"-5h\" = 1 } }\n",
    ));
    has(
        &m,
        &[
            "host_group.0.availability.daily.weekday_prob",
            "host_group.0.availability.daily.utc_offset.-5h",
            "is not a number of hours",
        ],
    );
    // Two models in one class; a model beside the group's own on_frac.
    let m = err(&group(
        "on_frac = 0.5\n[[host_group.availability.class]]\nname = \"a\"\nweight = 1\non_frac = 0.5\ndaily = { start = \"09:00\", end = \"17:00\" }\n",
    ));
    has(
        &m,
        &[
            "host_group.0.availability.class.0",
            "expected one on/off model",
            "expected one availability model",
        ],
    );
    // An OS mix with no positive weight; a named host with a CPU distribution.
    let m = err(&group("os_name = { Linux = 0 }\n"));
    has(
        &m,
        &["host_group.0.os_name", "expected at least one weight > 0"],
    );
    let m = err(&format!(
        "{}[[host]]\nname = \"h\"\np_ncpus = {{ dist = \"uniform\", min = 1, max = 4 }}\n",
        scenario("")
    ));
    has(&m, &["host.0.p_ncpus", "a named host has one value"]);
    // A vacation length that can be 0, a GPU probability out of range.
    let m = err(&group(
        "coproc = [ { type = \"nvidia\", probability = 2, peak_flops = 1e12 } ]\n\
         [host_group.availability]\nvacation = { every = \"30d\", length = { dist = \"normal\", mean = \"7d\", sd = \"3d\" } }\n",
    ));
    has(
        &m,
        &[
            "host_group.0.availability.vacation.length",
            "expected a duration > 0",
        ],
    );
    has(&m, &["host_group.0.coproc.0.probability"]);
}

#[test]
fn a_whole_day_and_a_night_are_windows() {
    let group = |daily: &str| {
        scenario(&format!(
            "[[host_group]]\nname = \"v\"\ncount = 2\n[host_group.availability]\ndaily = {daily}\n"
        ))
    };
    for ok in [
        "{ start = \"00:00\", end = \"24:00\" }",
        "{ start = \"22:00\", end = \"07:00\", weekend_start = \"23:00\", weekend_end = \"09:30\" }",
    ] {
        boinc_sim::scenario::load::load_str(&group(ok), "ok.toml", &[], None)
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let m = err(&group("{ start = \"09:00\", end = \"09:00\" }"));
    has(
        &m,
        &["host_group.0.availability.daily.end", "ends when it starts"],
    );
    assert!(!m.contains("weekend_end"), "{m}");
}
