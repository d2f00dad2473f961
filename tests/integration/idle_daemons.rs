//! Idle daemons cost nothing (docs/performance.md "Idle daemons"): a daemon with no
//! work sleeps until the first tick of its lattice at which it could have some, and
//! the run is exactly as if it had woken at every tick. Each case runs one scenario
//! twice through the binary, idle daemons asleep and (hidden `--every-daemon-pass`)
//! every pass run, and compares every output file byte for byte, audit trail and
//! job log included; `summary.json`'s `daemon_passes` must count every tick of
//! every daemon's lattice up to the end, the skipped ones too, and those at which a
//! daemon was down (`[[project.NAME.daemon_outage]]`: it sleeps through its
//! outage).

use crate::common::{assert_same_files, run};
use proptest::prelude::*;
use std::path::Path;

/// Per project: periods of (transitioner, validator, assimilator, file deleter,
/// db_purge, feeder, work generator) in seconds, 0 for off.
type Periods = [i64; 7];

const KEYS: [&str; 7] = [
    "transitioner",
    "validator",
    "assimilator",
    "file_deleter",
    "db_purge",
    "feeder",
    "work_generator",
];

struct Case {
    seed: u64,
    hours: i64,
    projects: Vec<(Periods, ProjectKnobs)>,
}

#[derive(Clone, Debug)]
struct ProjectKnobs {
    /// 0 cushion, 1 rate, 2 batch, 3 batches.
    mode: u8,
    failure_prob: f64,
    min_age: i64,
    quorum: i32,
    start: i64,
    /// 0 none, 1 a window of daemon `down`, 2 a crash process of daemon `down`,
    /// 3 a database window and crash process.
    outage: u8,
    /// The daemon (index in `KEYS`) an outage stops.
    down: usize,
}

fn scenario(c: &Case) -> String {
    let mut s = format!(
        "[simulation]\nname = \"idle\"\nseed = {}\nduration = \"{}h\"\n\n",
        c.seed, c.hours
    );
    let mut shares = Vec::new();
    for (i, (periods, k)) in c.projects.iter().enumerate() {
        let name = format!("p{i}");
        shares.push(format!("{name} = {}", 100 * (i + 1)));
        s += &format!("[project.{name}.daemons]\n");
        for (key, p) in KEYS.iter().zip(periods) {
            s += &format!("{key} = {p}\n");
        }
        s += &format!(
            "\n[project.{name}.workunit]\nmin_quorum = {q}\ntarget_nresults = {q}\n\
             max_error_results = 3\nmax_total_results = 6\nmax_success_results = 4\n\
             delay_bound = \"6h\"\nrsc_fpops_est = 3.6e12\n\n\
             [project.{name}.file_deleter]\nfailure_prob = {f}\n\n\
             [project.{name}.db_purge]\nmin_age = {a}\n\n\
             [project.{name}.work_generator]\n",
            q = k.quorum,
            f = k.failure_prob,
            a = k.min_age,
        );
        s += &match k.mode {
            0 => "mode = \"cushion\"\ncushion = 20\nmax_workunits = 80\n".to_string(),
            1 => "mode = \"rate\"\ninterval = \"17m\"\nmax_workunits = 60\n".to_string(),
            2 => "mode = \"batch\"\ncount = 40\n".to_string(),
            _ => "mode = \"batches\"\ninterval = \"5h\"\ncount = 15\nmax_workunits = 70\n"
                .to_string(),
        };
        s += &format!("start = {}\n\n", k.start);
        s += &match k.outage {
            0 => String::new(),
            1 => format!(
                "[[project.{name}.daemon_outage]]\ndaemon = \"{}\"\nstart = 7001\nend = 13003\n\n",
                KEYS[k.down]
            ),
            2 => format!(
                "[[project.{name}.daemon_outage]]\ndaemon = \"{}\"\nmtbf = \"3h\"\n\
                 repair = {{ dist = \"exponential\", mean = \"20m\" }}\n\n",
                KEYS[k.down]
            ),
            _ => format!(
                "[[project.{name}.daemon_outage]]\ndaemon = \"database\"\nstart = 5000\nend = 9000\n\n\
                 [[project.{name}.daemon_outage]]\ndaemon = \"database\"\nmtbf = \"5h\"\n\
                 repair = \"17m\"\n\n"
            ),
        };
    }
    s += &format!(
        "[[host_group]]\ncount = 12\np_ncpus = 2\np_fpops = 1e9\nerror_prob = 0.05\n\
         shares = {{ {} }}\narrival = {{ dist = \"uniform\", min = 0, max = \"3h\" }}\n",
        shares.join(", ")
    );
    s
}

/// Runs `text` in both modes and compares every output; returns the counted passes.
fn both_modes(dir: &Path, text: &str) -> (u64, u64) {
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let f = file.to_str().unwrap();
    let mut outs = Vec::new();
    for (name, extra) in [("asleep", None), ("every", Some("--every-daemon-pass"))] {
        let out = dir.join(name);
        let o = out.to_str().unwrap();
        let mut args = vec!["run", f, "--out", o, "--audit", "--job-log", "--quiet"];
        args.push("--check-invariants");
        args.extend(extra);
        let r = run(&args);
        assert!(
            r.status.success(),
            "{}\n{text}",
            String::from_utf8_lossy(&r.stderr)
        );
        outs.push(out);
    }
    let files = assert_same_files(&outs[0], &outs[1], text);
    assert!(files > 5, "{files} files");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(outs[0].join("summary.json")).unwrap()).unwrap();
    let find = |key: &str| find_u64(&json, key).unwrap_or_else(|| panic!("no {key}"));
    (find("daemon_passes"), find("events"))
}

fn find_u64(v: &serde_json::Value, key: &str) -> Option<u64> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .and_then(|x| x.as_u64())
            .or_else(|| m.values().find_map(|x| find_u64(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_u64(x, key)),
        _ => None,
    }
}

/// The passes of every daemon at every tick `0, period, …` up to the end.
fn lattice_passes(c: &Case) -> u64 {
    let end = c.hours * 3600;
    (c.projects.iter())
        .flat_map(|(periods, _)| periods.iter())
        .filter(|&&p| p > 0)
        .map(|&p| (end / p + 1) as u64)
        .sum()
}

fn knobs(mode: u8) -> ProjectKnobs {
    ProjectKnobs {
        mode,
        failure_prob: 0.2,
        min_age: 1800,
        quorum: 2,
        start: 0,
        outage: 0,
        down: 0,
    }
}

#[test]
fn one_project_sleeps_and_counts_every_tick() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Case {
        seed: 3,
        hours: 30,
        projects: vec![([5, 5, 10, 5, 300, 5, 10], knobs(0))],
    };
    let (passes, _) = both_modes(tmp.path(), &scenario(&c));
    assert_eq!(passes, lattice_passes(&c));
}

/// Projects whose periods differ, so that passes of one daemon of several projects
/// fall on one tick in the order of their periods (the longest first).
#[test]
fn several_projects_keep_the_order_of_their_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let c = Case {
        seed: 11,
        hours: 26,
        projects: vec![
            ([5, 5, 10, 5, 300, 5, 10], knobs(0)),
            ([10, 3, 10, 7, 60, 15, 20], knobs(1)),
            ([5, 6, 5, 5, 900, 3, 0], knobs(2)),
        ],
    };
    let (passes, _) = both_modes(tmp.path(), &scenario(&c));
    assert_eq!(passes, lattice_passes(&c));
}

/// Daemons down for a window, by a crash process, or with the database: each sleeps
/// through its outage, and the run is the same as when every pass runs.
#[test]
fn down_daemons_sleep_through_their_outages() {
    let tmp = tempfile::tempdir().unwrap();
    let down = |mode: u8, outage: u8, down: usize| ProjectKnobs {
        outage,
        down,
        ..knobs(mode)
    };
    let c = Case {
        seed: 5,
        hours: 20,
        projects: vec![
            ([5, 5, 10, 5, 300, 5, 10], down(0, 1, 0)),
            ([10, 3, 10, 7, 60, 15, 20], down(1, 2, 5)),
            ([5, 6, 5, 5, 900, 3, 7], down(3, 3, 0)),
        ],
    };
    let (passes, _) = both_modes(tmp.path(), &scenario(&c));
    assert_eq!(passes, lattice_passes(&c));
}

fn periods() -> impl Strategy<Value = Periods> {
    let p = || prop_oneof![Just(0i64), 1i64..12, Just(60), Just(300), Just(3601)];
    [p(), p(), p(), p(), p(), p(), p()]
}

fn project() -> impl Strategy<Value = (Periods, ProjectKnobs)> {
    (
        periods(),
        0u8..4,
        prop_oneof![Just(0.0), Just(0.3)],
        prop_oneof![Just(0i64), Just(7), Just(3600)],
        1i32..=2,
        prop_oneof![Just(0i64), Just(5000)],
        (0u8..4, 0usize..7),
    )
        .prop_map(
            |(periods, mode, failure_prob, min_age, quorum, start, (outage, down))| {
                let k = ProjectKnobs {
                    mode,
                    failure_prob,
                    min_age,
                    quorum,
                    start,
                    outage,
                    down,
                };
                (periods, k)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// Random periods (off, short, long, not dividing an hour), work generator
    /// modes, file deletion failures, purge ages, daemon outages and project
    /// counts: both modes write the same bytes, and every tick is counted.
    #[test]
    fn both_modes_write_the_same_bytes(
        seed in 0u64..1000,
        hours in 3i64..20,
        projects in prop::collection::vec(project(), 1..=3),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let c = Case { seed, hours, projects };
        let (passes, _) = both_modes(tmp.path(), &scenario(&c));
        prop_assert_eq!(passes, lattice_passes(&c));
    }
}
