//! Unit tests of the host's execution model and its buffer invariant, on a one-project
//! host driven call by call.

use super::*;
use crate::client::config::ClientSection;
use crate::engine::rng::{StreamKind, stream};

fn host(ncpus: u32) -> ClientHost {
    let projects = vec![ProjectState {
        resource_share: 100.0,
        ..Default::default()
    }];
    let rng = stream(1, StreamKind::Host, 0);
    let avail_rng = stream(1, StreamKind::HostAvailability, 0);
    ClientHost::new(
        0,
        0,
        ncpus,
        1e9,
        rng,
        avail_rng,
        projects,
        Availability::default(),
        0,
    )
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

#[test]
fn a_host_stays_small() {
    // A hundred thousand hosts: the availability models a group may choose (daily
    // patterns, vacations, classes, fractions per host) add nothing per host.
    assert_eq!(std::mem::size_of::<ClientHost>(), 384);
}
