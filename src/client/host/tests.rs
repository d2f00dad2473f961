//! Unit tests of the host's execution model and its buffer invariant, on a one-project
//! host driven call by call.

use super::*;
use crate::client::config::ClientSection;
use crate::engine::rng::stream;
use crate::streams::StreamKind;

fn host(ncpus: u32) -> ClientHost {
    let projects = vec![ProjectState {
        resource_share: 100.0,
        ..Default::default()
    }];
    let rng = stream(1, StreamKind::Host, 0);
    let avail_rng = stream(1, StreamKind::HostAvailability, 0);
    let mut h = ClientHost::new(
        0,
        0,
        ncpus,
        1e9,
        rng,
        avail_rng,
        projects,
        Availability::default(),
        0,
    );
    // App version 0: a plain one-CPU job, the default of the jobs tests build.
    h.app_versions.push(JobUsage::default());
    h
}

fn job(secs: f64) -> ClientJob {
    ClientJob {
        report_deadline: 1_000_000,
        ..ClientJob::sized(secs * 1e9, secs * 1e9, 1e9, f64::INFINITY)
    }
}

/// Seed high water mark 3 days on 2 CPUs: 6 CPU-days plus one job is allowed,
/// one more job is a violation.
#[test]
fn buffer_bound_is_high_water_plus_one_reply() {
    let cfg = ClientConfig::resolve(&ClientSection::default(), None);
    let mut h = host(2);
    for _ in 0..(6 * 24 + 1) {
        h.jobs.push(job(3600.0));
    }
    assert_eq!(h.buffer_violation(&cfg), None);
    h.jobs.push(job(3600.0));
    assert!(h.buffer_violation(&cfg).is_some());
}

/// Progress is integrated exactly: a 1-hour task advanced in uneven pieces
/// finishes at exactly 3600 s with zero FLOPs left and 3600 CPU seconds.
#[test]
fn advance_integrates_exactly_and_finishes_cleanly() {
    let cfg = ClientConfig::resolve(&ClientSection::default(), None);
    let mut h = host(1);
    h.jobs.push(job(3600.0));
    h.start(0, 0);
    for t in [7, 1000, 1001, 2999, 3599] {
        h.advance(t, &cfg);
    }
    assert_eq!(h.next_completion(&cfg), 3600);
    h.advance(3600, &cfg);
    assert_eq!(h.jobs[0].flops_left, 0.0);
    assert!((h.projects[0].cpu_time - 3600.0).abs() < 1e-9);
    let n = h.finish_tasks(3600, &HostBehaviour::default(), |_, _| {});
    assert_eq!(n, 1);
    assert!(h.jobs[0].ready_to_report());
    assert_eq!(h.merit.flops_used, 3600.0 * 1e9);
}

/// A job whose true size passes its bound stops exactly at its time limit
/// `rsc_fpops_bound / flops` and ends as a client error with
/// `EXIT_TIME_LIMIT_EXCEEDED`; its DCF is not updated (spec client §3.6).
#[test]
fn a_job_past_its_bound_is_aborted_at_its_time_limit() {
    let cfg = ClientConfig::resolve(&ClientSection::default(), None);
    let mut h = host(1);
    h.jobs.push(ClientJob {
        report_deadline: 1_000_000,
        ..ClientJob::sized(3600e9, 3.0 * 3600e9, 1e9, 7200e9)
    });
    h.start(0, 0);
    assert_eq!(h.next_completion(&cfg), 7200);
    h.advance(7199, &cfg);
    assert_eq!(
        h.finish_tasks(7199, &HostBehaviour::default(), |_, _| {}),
        0
    );
    assert_eq!(h.next_completion(&cfg), 7200);
    h.advance(7200, &cfg);
    assert_eq!(h.time_limit_violation(), None);
    assert_eq!(
        h.finish_tasks(7200, &HostBehaviour::default(), |_, _| {}),
        1
    );
    let j = &h.jobs[0];
    assert!(j.ready_to_report());
    assert_eq!(j.completed_time, 7200);
    assert_eq!(i32::from(j.client_state), client_state::COMPUTE_ERROR);
    assert_eq!(j.exit_status, exit_status::EXIT_TIME_LIMIT_EXCEEDED);
    assert_eq!(j.cpu_time, 7200.0);
    assert_eq!(j.flops_left, 3600e9);
    assert_eq!(h.projects[0].dcf, Dcf(1.0));
}

/// A job that succeeds sets the DCF from its true size over its estimate.
#[test]
fn a_successful_job_updates_the_dcf() {
    let cfg = ClientConfig::resolve(&ClientSection::default(), None);
    let mut h = host(1);
    h.jobs.push(ClientJob {
        report_deadline: 1_000_000,
        ..ClientJob::sized(3600e9, 2.0 * 3600e9, 1e9, 36000e9)
    });
    h.start(0, 0);
    assert_eq!(h.next_completion(&cfg), 7200);
    h.advance(7200, &cfg);
    assert_eq!(
        h.finish_tasks(7200, &HostBehaviour::default(), |_, _| {}),
        1
    );
    assert_eq!(h.jobs[0].exit_status, 0);
    assert_eq!(h.projects[0].dcf, Dcf(2.0));
}

/// A quit task rolls back to its last checkpoint (spec client §3.4).
#[test]
fn quitting_loses_the_work_since_the_last_checkpoint() {
    let s = ClientSection {
        checkpoint_period: 600.0,
        ..Default::default()
    };
    let cfg = ClientConfig::resolve(&s, None);
    let mut h = host(1);
    h.jobs.push(job(3600.0));
    h.start(0, 0);
    h.advance(1500, &cfg);
    h.quit_all(&cfg);
    assert_eq!(h.jobs[0].state, TaskState::Quit);
    assert!((h.jobs[0].cpu_time - 1200.0).abs() < 1e-9);
    assert!((h.jobs[0].flops_left - 2400.0 * 1e9).abs() < 1.0);
}

/// A host's own preferences replace its group's, each on its own; without any, the
/// group's values are read unchanged (spec client §1.1, §2.1, §2.2).
#[test]
fn own_preferences_replace_the_groups() {
    use crate::client::background::{HostExtra, HostPrefs};
    use crate::client::config::Policy;
    let cfg = ClientConfig::resolve(&ClientSection::default(), Some(Policy::ModernRec));
    let mut h = host(8);
    assert_eq!(h.usable_cpus(&cfg), 8);
    assert_eq!(h.work_buf_min(&cfg), 8640.0);
    assert_eq!(h.work_buf_total(&cfg), 51_840.0);
    let extra = |prefs| HostExtra {
        prefs,
        bg_rng: stream(1, StreamKind::HostBackground, 0),
    };
    // No own value: still the group's.
    h.set_extra(extra(HostPrefs::default()));
    assert_eq!(h.usable_cpus(&cfg), 8);
    assert_eq!(h.work_buf_min(&cfg), 8640.0);
    assert_eq!(h.work_buf_total(&cfg), 51_840.0);
    h.set_extra(extra(HostPrefs {
        work_buf_min_days: 1.0,
        work_buf_additional_days: 2.5,
        work_buf_max_days: 4.0,
        max_ncpus_pct: 60.0,
    }));
    assert_eq!(h.usable_cpus(&cfg), 4); // floor(8 · 0.6)
    assert_eq!(h.work_buf_min(&cfg), 86_400.0);
    assert_eq!(h.work_buf_total(&cfg), 302_400.0); // 3.5 days
    assert_eq!(h.work_buf_max_days(&cfg), 4.0);
    // Only the additional days: the minimum stays the group's; the seed high water
    // mark becomes min + additional (0.1 + 0), not the group's 3 days.
    h.set_extra(extra(HostPrefs {
        work_buf_additional_days: 0.0,
        ..HostPrefs::default()
    }));
    assert_eq!(h.work_buf_min(&cfg), 8640.0);
    assert_eq!(h.work_buf_total(&cfg), 8640.0);
    assert!((h.work_buf_max_days(&cfg) - 0.1).abs() < 1e-6);
    // The seed era's CPU limit still applies after the percentage.
    let seed = ClientConfig::resolve(&ClientSection::default(), Some(Policy::SeedDebt));
    h.set_extra(extra(HostPrefs {
        max_ncpus_pct: 75.0,
        ..HostPrefs::default()
    }));
    assert_eq!(h.usable_cpus(&seed), 2); // min(floor(8 · 0.75), max_cpus 2)
}

/// The last work request is kept only when the run asks for it (a scenario with
/// `[[expect]]` entries): boxed once at the first RPC, then overwritten in place,
/// so no RPC allocates; without it nothing is kept and it reads as zeros.
#[test]
fn last_request_is_kept_only_when_asked_and_in_place() {
    let mut cfg = ClientConfig::resolve(&ClientSection::default(), None);
    let mut p = ProjectState::default();
    let work = |s: f64| WorkRequest {
        req_secs: s,
        estimated_delay: 2.0 * s,
        ..Default::default()
    };
    p.keep_request(work(10.0), &cfg);
    assert!(p.last_request.is_none());
    assert_eq!(p.last_request(), WorkRequest::default());
    cfg.keep_last_request = true;
    p.keep_request(work(10.0), &cfg);
    let first: *const WorkRequest = &**p.last_request.as_ref().unwrap();
    assert_eq!(p.last_request(), work(10.0));
    p.keep_request(work(30.5), &cfg);
    let second: *const WorkRequest = &**p.last_request.as_ref().unwrap();
    assert_eq!(first, second);
    assert_eq!(p.last_request().req_secs, 30.5);
    assert_eq!(p.last_request().estimated_delay, 61.0);
}

/// A project's per-processor-type flags read as the array they replace: each type
/// its own bit, set and cleared alone, built from and equal to that array.
#[test]
fn rsc_flags_read_as_an_array() {
    let mut f = RscFlags::default();
    f.set(0, true);
    f.set(2, true);
    assert_eq!([f[0], f[1], f[2], f[3]], [true, false, true, false]);
    f.set(0, false);
    assert_eq!(f, [false, false, true, false]);
    assert_eq!(
        RscFlags::from([true, true, false, true]),
        [true, true, false, true]
    );
    assert_ne!(
        RscFlags::from([true, true, false, true]),
        [true, true, false, false]
    );
}

/// Past the last processor type the flags panic, as the array did.
#[test]
#[should_panic(expected = "processor type 4")]
fn rsc_flags_out_of_range_panics() {
    let _ = RscFlags::default()[4];
}
