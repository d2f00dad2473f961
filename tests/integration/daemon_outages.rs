//! Daemon outages (`[[project.NAME.daemon_outage]]`, docs/scenario.md): a stopped
//! daemon's work waits and is done once it is up again, a database outage stops the
//! daemons and the scheduler, the server-load gauges say so, and a run with outages
//! (crash processes included) is a pure function of its scenario and seed. The
//! scripted worked example is `scenarios/spec/server-daemon-outage.toml`.

use crate::common::{assert_same_files, run, run_text, text};
use boinc_sim::engine::time::Time;
use boinc_sim::server::Project;
use boinc_sim::world::RunOptions;

const DAY: Time = 86_400;

/// Two projects `a` and `b` sharing 30 hosts, `b` without outages; `outages` is
/// added to project `a`. db_purge is off, so every row stays to be read.
fn scenario(outages: &str) -> String {
    let project = |name: &str| {
        format!(
            "[project.{name}.workunit]\nmin_quorum = 2\ntarget_nresults = 2\n\
             max_error_results = 3\nmax_total_results = 6\nmax_success_results = 4\n\
             delay_bound = \"1d\"\nrsc_fpops_est = 3.6e12\n\n\
             [project.{name}.work_generator]\nmode = \"cushion\"\ncushion = 20\n\n\
             [project.{name}.daemons]\ndb_purge = 0\n\n"
        )
    };
    format!(
        "[simulation]\nname = \"down\"\nseed = 7\nduration = \"3d\"\n\n{}{}{outages}\n\
         [[host_group]]\ncount = 30\np_fpops = 1e9\nshares = {{ a = 100, b = 100 }}\n",
        project("a"),
        project("b"),
    )
}

/// The times `at` of project `p`'s workunits, where set (0: not yet).
fn times(p: &Project, at: impl Fn(&boinc_sim::server::db::WorkunitRow) -> Time) -> Vec<Time> {
    (p.db.workunits.iter())
        .map(|(_, w)| at(w))
        .filter(|&t| t > 0)
        .collect()
}

#[test]
fn a_validator_outage_delays_validation_until_it_ends() {
    let text = scenario(
        "[[project.a.daemon_outage]]\ndaemon = \"validator\"\nstart = \"1d\"\nend = \"2d\"\n",
    );
    let f = run_text(&text, "down.toml", &RunOptions::CHECKED);
    let canonical = |pi: usize| times(&f.projects[pi], |w| w.canonical_found_time.into());
    let (a, b) = (canonical(0), canonical(1));
    let during = |t: &Time| (DAY..2 * DAY).contains(t);
    // Nothing is validated while the validator is down; its first pass after the
    // outage, at 2d, takes the backlog; the other project validates all along.
    assert!(!a.iter().any(during), "validated during the outage");
    assert!(
        a.iter().filter(|&&t| t == 2 * DAY).count() > 1,
        "no catch-up at 2d"
    );
    assert!(a.iter().any(|&t| t > 2 * DAY) && a.iter().any(|&t| t < DAY));
    assert!(b.iter().any(during));
    // The gauges: one daemon down at the samples in the outage, the validator's
    // backlog grows and is gone at the sample of 2d (after every actor of that
    // second); the load gauges exist only for the project with the outage.
    let m = &f.recorder.tallies[0].metrics;
    let load = m.load.as_ref().expect("project a reports its server load");
    let down: Vec<f64> = load.iter().map(|g| g[2]).collect();
    for (k, d) in down.iter().enumerate() {
        let t = k as Time * 3600;
        assert_eq!(*d, if during(&t) { 1.0 } else { 0.0 }, "bucket {k}");
    }
    const BACKLOG_VALIDATOR: usize = 5;
    assert!(m.samples[47][BACKLOG_VALIDATOR] > m.samples[25][BACKLOG_VALIDATOR]);
    assert_eq!(m.samples[48][BACKLOG_VALIDATOR], 0.0);
    assert!(
        load.iter().any(|g| g[1] > 0.0),
        "the job cache is never filled"
    );
    assert!(f.recorder.tallies[1].metrics.load.is_none());
}

#[test]
fn a_database_outage_stops_every_daemon_and_the_scheduler() {
    let text = scenario(
        "[[project.a.daemon_outage]]\ndaemon = \"database\"\nstart = \"1d\"\nend = \"36h\"\n",
    );
    let f = run_text(&text, "down.toml", &RunOptions::CHECKED);
    let p = &f.projects[0];
    let during = |t: &Time| (DAY..DAY + DAY / 2).contains(t);
    for (what, ts) in [
        ("created", times(p, |w| w.create_time.into())),
        ("validated", times(p, |w| w.canonical_found_time.into())),
        ("assimilated", times(p, |w| w.assimilated_time.into())),
    ] {
        assert!(
            !ts.iter().any(during),
            "a workunit {what} during the outage"
        );
        assert!(
            ts.iter().any(|&t| t >= DAY + DAY / 2),
            "none {what} after it"
        );
    }
    let sent: Vec<Time> = (p.db.results.iter())
        .map(|(_, r)| Time::from(r.sent_time))
        .filter(|&t| t > 0)
        .collect();
    assert!(!sent.iter().any(during), "a result sent during the outage");
    assert!(sent.iter().any(|&t| t >= DAY + DAY / 2));
    // Hosts that asked meanwhile met the database-down reply, a failed RPC.
    assert!(f.counters.rpcs_failed > 0);
    let load = f.recorder.tallies[0].metrics.load.as_ref().unwrap();
    assert_eq!(load[30][2], 7.0);
    assert_eq!(load[36][2], 0.0);
}

/// A crash process run twice through the binary writes the same bytes, every file;
/// another seed draws other crashes.
#[test]
fn a_run_with_crash_processes_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("crash.toml");
    let outages = "[[project.a.daemon_outage]]\ndaemon = \"transitioner\"\nmtbf = \"12h\"\n\
                   repair = { dist = \"lognormal\", mu = 0.0, sigma = 1.0, scale = \"1h\" }\n\n\
                   [[project.a.daemon_outage]]\ndaemon = \"database\"\nmtbf = \"1d\"\nrepair = \"30m\"\n";
    std::fs::write(&file, scenario(outages)).unwrap();
    let f = file.to_str().unwrap();
    let mut outs = Vec::new();
    for (name, seed) in [("one", "7"), ("two", "7"), ("other", "8")] {
        let out = tmp.path().join(name);
        let o = out.to_str().unwrap();
        let r = run(&["run", f, "--out", o, "--audit", "--quiet", "--seed", seed]);
        assert!(r.status.success(), "{}", text(&r.stderr));
        outs.push(out);
    }
    assert_same_files(&outs[0], &outs[1], "two runs of one seed");
    let ts = |k: usize| std::fs::read_to_string(outs[k].join("timeseries.csv")).unwrap();
    let down = |k: usize| -> Vec<String> {
        ts(k)
            .lines()
            .filter(|l| l.contains(",daemons_down,"))
            .map(str::to_string)
            .collect()
    };
    assert!(
        down(0).iter().all(|l| l.contains(",a,")),
        "daemons_down of project b"
    );
    assert!(
        down(0).iter().any(|l| !l.ends_with(",0.0")),
        "no daemon ever down"
    );
    assert_ne!(down(0), down(2), "another seed draws the same crashes");
}
