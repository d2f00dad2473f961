//! Scenario tests of the whole policy, driven through `wake` and its own wake times
//! as the world drives hosts (spec client §6: S1, S4, S5; request size, hysteresis,
//! report triggers, time slices and checkpoints).

use super::test_util::*;
use crate::client::host::{ClientHost, TaskState};
use crate::engine::Time;
use crate::server::resource::CPU;
use crate::server::types::HostId;

fn running_project(h: &ClientHost) -> Option<u16> {
    h.jobs.iter().find(|j| j.is_running()).map(|j| j.project)
}

/// S4: REC of one project running 1 CPU (1 GFLOPS) for 10 days, then idle 10 days,
/// sampled at 1 h, 1 day, 10 days, 20 days; `extra` adds host events every `extra`
/// seconds (as availability changes would).
fn s4(extra: Option<Time>) -> Vec<f64> {
    let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
    h.projects[0].hostid = HostId(1);
    add_job(&mut h, 0, 864_000.0, 1000 * 86_400);
    let mut srv = MockServer::new(3600.0);
    srv.send = false;
    let samples = [3600, 86_400, 864_000, 1_728_000];
    let mut out = Vec::new();
    let mut t = 0;
    let mut natural = h.wake(0, &g, &mut srv).unwrap();
    loop {
        let sample = samples
            .iter()
            .copied()
            .find(|&s| s > t)
            .unwrap_or(Time::MAX);
        let step = extra.map_or(Time::MAX, |e| (t / e + 1) * e);
        let nt = natural.min(sample).min(step);
        if nt > 1_728_000 {
            break;
        }
        natural = h.wake(nt, &g, &mut srv).unwrap();
        t = nt;
        if samples.contains(&t) {
            out.push(h.projects[0].modern.rec);
        }
    }
    out
}

#[test]
fn s4_rec_growth_and_decay_is_step_independent() {
    let expect = [0.576789, 13.393402, 100.0, 50.0];
    let runs = [s4(None), s4(Some(60)), s4(Some(7777))];
    for run in &runs {
        assert_eq!(run.len(), 4);
        for (x, e) in run.iter().zip(expect) {
            assert!((x - e).abs() < 5e-7, "{run:?}");
        }
    }
    for (a, b) in runs[0].iter().zip(&runs[1]) {
        assert!((a - b).abs() < 1e-9);
    }
}

/// S5: A (share `a`) and B (share `b`) on 1 CPU, REC 0, 3600-s jobs, a buffer of 10
/// days so neither queue runs dry. Returns who ran in each of the first `hours`
/// hours, CPU hours at 24 h and 168 h, and REC at 16 h.
fn s5(a: f64, b: f64) -> (String, [f64; 4], [f64; 2]) {
    let (mut h, g) = host_and_ctx(1, &[a, b], |s| {
        s.work_buf_min_days = Some(10.0);
        s.work_buf_additional_days = Some(0.0);
    });
    let mut srv = MockServer::new(3600.0);
    let mut log: Vec<(Time, Option<u16>)> = Vec::new();
    let mut cpu = [0.0; 4];
    let mut rec = [0.0; 2];
    drive(&mut h, &g, &mut srv, 0, 168 * 3600, |h, t| {
        log.push((t, running_project(h)));
        if t == 24 * 3600 {
            cpu[0] = h.projects[0].cpu_time / 3600.0;
            cpu[1] = h.projects[1].cpu_time / 3600.0;
        }
        if t == 168 * 3600 {
            cpu[2] = h.projects[0].cpu_time / 3600.0;
            cpu[3] = h.projects[1].cpu_time / 3600.0;
        }
        if t == 16 * 3600 {
            rec = [h.projects[0].modern.rec, h.projects[1].modern.rec];
        }
    });
    let mut seq = String::new();
    for hour in 0..16 {
        let mid = hour * 3600 + 1800;
        let who = log.iter().rev().find(|(t, _)| *t <= mid).and_then(|e| e.1);
        seq.push(match who {
            Some(0) => 'A',
            Some(1) => 'B',
            _ => '-',
        });
    }
    (seq, cpu, rec)
}

#[test]
fn s5_rec_long_run_split() {
    let (seq, cpu, rec) = s5(100.0, 300.0);
    assert_eq!(seq, "ABBBABBBABBBABBB");
    assert_eq!(cpu, [6.0, 18.0, 42.0, 126.0]);
    assert!((rec[0] - 2.2481).abs() < 5e-5, "{rec:?}");
    assert!((rec[1] - 6.7835).abs() < 5e-5, "{rec:?}");
    // Equal shares: A's initial RPC is at 0 and B's at 5 (one operation per 5-s
    // poll), so A has run 10 s when the first work fetch, at 10, asks the project of
    // higher priority, B, for the whole buffer; A then has no job at 7200 and B runs
    // two hours in a row once. The split is still exact.
    let (seq, cpu, _) = s5(100.0, 100.0);
    assert_eq!(seq, "ABBABABABABABABA");
    assert_eq!(cpu, [12.0, 12.0, 84.0, 84.0]);
}

#[test]
fn s1_backoff_through_wake_and_master_fetch_cycle() {
    let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
    g.cfg.pin_u = Some(0.0);
    h.projects[0].hostid = HostId(1);
    let mut srv = MockServer::new(3600.0);
    srv.fail = true;
    drive(&mut h, &g, &mut srv, 0, 29_230, |_, _| {});
    let times: Vec<Time> = srv.calls.iter().map(|c| c.now).collect();
    let gaps: Vec<Time> = times.windows(2).map(|w| w[1] - w[0]).collect();
    // The RPC is retried at the check forced by the end of the project backoff, the
    // first second after it (`check_project_timeout`: `now > min_rpc_time`).
    assert_eq!(gaps, [61, 121, 241, 481, 961, 1921, 3841, 7201, 7201, 7201]);
    // Failure 11 started a master-fetch cycle with a fresh, short backoff.
    let p = &h.projects[0];
    assert!(p.master_url_fetch_pending);
    assert_eq!((p.master_fetch_failures, p.nrpc_failures), (1, 1));
    assert_eq!(p.min_rpc_time, 29_230.0 + 60.0);
    // The master fetch happens when that backoff ends and succeeds; the forced check
    // that follows retries the RPC at the next poll that may act, 5 s later
    // (SCHEDULER_RPC_POLL_PERIOD), which fails again (failure count 2).
    drive(&mut h, &g, &mut srv, 29_231, 29_295, |_, _| {});
    assert_eq!(srv.master_calls, [29_290]);
    let p = &h.projects[0];
    assert!(!p.master_url_fetch_pending);
    assert_eq!(p.master_fetch_failures, 0);
    assert_eq!(srv.calls.last().unwrap().now, 29_295);
    assert_eq!(p.nrpc_failures, 2);
    assert_eq!(p.min_rpc_time, 29_295.0 + 120.0);
    // A failed master fetch counts towards the cap and backs off like an RPC.
    srv.master_ok = false;
    h.projects[0].master_url_fetch_pending = true;
    h.projects[0].master_fetch_failures = 2;
    drive(&mut h, &g, &mut srv, 29_296, 29_415, |_, _| {});
    let p = &h.projects[0];
    assert_eq!(srv.master_calls, [29_290, 29_415]);
    assert_eq!(p.master_fetch_failures, 3);
    assert!(p.master_url_fetch_pending);
    assert_eq!(p.min_rpc_time, 29_415.0 + 86_400.0);
}

#[test]
fn idle_host_with_failed_project_sleeps_until_the_backoff_ends() {
    let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
    g.cfg.pin_u = Some(0.0);
    h.projects[0].hostid = HostId(1);
    h.projects[0].master_fetch_failures = 3;
    (h.joined, h.last_advance) = (100, 100);
    let mut srv = MockServer::new(3600.0);
    srv.fail = true;
    let next = h.wake(100, &g, &mut srv).unwrap();
    assert_eq!(h.projects[0].min_rpc_time, 100.0 + 86_400.0);
    assert_eq!(next, 100 + 86_400);
}

/// A new host's first minutes: one operation per poll, polls that act 5 s apart
/// (`SCHEDULER_RPC_POLL_PERIOD`, spec client §2.1, §2.9): the initial RPC of each
/// project (1 s asked), then one work fetch for the whole shortfall, then nothing
/// until the buffer drains; no cap on rounds is involved.
#[test]
fn initial_rpc_asks_one_second_per_project() {
    let (mut h, g) = host_and_ctx(2, &[100.0, 100.0], |_| {});
    let mut srv = MockServer::new(3600.0);
    assert_eq!(h.wake(0, &g, &mut srv).unwrap(), 5);
    assert_eq!(srv.calls.len(), 1);
    assert_eq!(srv.calls[0].hostid, HostId(0));
    assert_eq!(srv.calls[0].work.req_secs, 1.0);
    assert_eq!(h.wake(5, &g, &mut srv).unwrap(), 10);
    assert_eq!(srv.calls[1].project, 1);
    assert_eq!(srv.calls[1].work.req_secs, 1.0);
    // Then a real work fetch for the whole shortfall (less what the two jobs, each
    // 3600 s and run from 0 and 5, still need).
    let next = h.wake(10, &g, &mut srv).unwrap();
    assert_eq!(srv.calls.len(), 3);
    assert_eq!(
        srv.calls[2].work.req_secs,
        2.0 * 51_840.0 - (3600.0 - 10.0) - (3600.0 - 5.0)
    );
    assert!(h.jobs.iter().filter(|j| j.is_running()).count() == 2);
    assert!(next > 15, "no further RPC right after the fetch: {next}");
}

/// The initial RPCs with a scheduler that takes time (spec client §4.3): while the
/// first is in flight the poll starts nothing, though a poll is due; its answer is
/// applied when it comes, and the next operation waits a poll period after it.
#[test]
fn an_rpc_in_flight_holds_the_poll_until_its_answer() {
    let (mut h, g) = host_and_ctx(2, &[100.0, 100.0], |_| {});
    let mut srv = MockServer::new(3600.0);
    srv.queue = true;
    let next = h.wake(0, &g, &mut srv).unwrap();
    assert_eq!(srv.held.len(), 1);
    assert!(h.rpc_in_flight.is_some());
    // No poll can act while the RPC is in flight: the host sleeps past the 5-s poll.
    assert!(next > 5, "{next}");
    // A wake for another reason starts no second RPC.
    h.wake(7, &g, &mut srv).unwrap();
    assert_eq!(srv.held.len(), 1);
    let answer = srv.reply_to(12);
    let next = h.wake_with(12, &g, &mut srv, Some(answer)).unwrap();
    assert!(h.rpc_in_flight.is_none());
    assert_eq!(h.projects[0].hostid, HostId(1));
    assert_eq!(h.jobs.len(), 1);
    assert_eq!(
        next, 17,
        "the next poll that may act: a poll period after the answer"
    );
    h.wake(17, &g, &mut srv).unwrap();
    assert_eq!(srv.held.len(), 1);
    assert_eq!(
        srv.held[0].project, 1,
        "then the second project's initial RPC"
    );
}

#[test]
fn empty_two_cpu_host_requests_the_whole_shortfall() {
    let (mut h, g) = host_and_ctx(2, &[100.0], |_| {});
    h.projects[0].hostid = HostId(1);
    let mut srv = MockServer::new(3600.0);
    h.wake(0, &g, &mut srv).unwrap();
    let w = srv.calls[0].work;
    assert_eq!((w.req_secs, w.req_instances), (2.0 * 51_840.0, 2.0));
    // 29 jobs cover the request; both CPUs run.
    assert_eq!(h.jobs.len(), 29);
    assert_eq!(h.jobs.iter().filter(|j| j.is_running()).count(), 2);
}

#[test]
fn no_fetch_while_saturated_above_work_buf_min() {
    let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
    h.projects[0].hostid = HostId(1);
    add_job(&mut h, 0, 50_000.0, 10_000_000);
    let mut srv = MockServer::new(3600.0);
    let next = h.wake(0, &g, &mut srv).unwrap();
    assert!(srv.calls.is_empty());
    // saturated_time 50000 − t < 8640 first for t > 41360: the 60-s grid says 41400.
    assert_eq!(next, 41_400);
    drive(&mut h, &g, &mut srv, next, next, |_, _| {});
    assert_eq!(srv.calls.len(), 1);
    assert_eq!(srv.calls[0].now, 41_400);
    assert_eq!(srv.calls[0].work.req_secs, 51_840.0 - 8600.0);
}

#[test]
fn resource_backoff_doubles_then_resets_when_jobs_come() {
    let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
    g.cfg.pin_u = Some(0.0);
    h.projects[0].hostid = HostId(1);
    let mut srv = MockServer::new(3600.0);
    srv.send = false;
    drive(&mut h, &g, &mut srv, 0, 4520, |_, _| {});
    let times: Vec<Time> = srv.calls.iter().map(|c| c.now).collect();
    // Each ask is on the 60-s grid restarted 5 s after the previous RPC, at or after
    // the end of its backoff: 300 → 305, 905 → 910, 2110 → 2115, 4515 → 4520.
    assert_eq!(times, [0, 305, 910, 2115, 4520]);
    assert_eq!(h.projects[0].modern.backoff_interval[CPU], 9600.0);
    assert!(h.projects[0].modern.sched_req_no_work[CPU]);
    srv.send = true;
    // Backoff to 4520 + 4800 = 9320; the grid 4525 + 60·k reaches it at 9325.
    drive(&mut h, &g, &mut srv, 4521, 9325, |_, _| {});
    assert_eq!(srv.calls.len(), 6);
    assert_eq!(srv.calls.last().unwrap().now, 9325);
    assert_eq!(h.projects[0].modern.backoff_interval[CPU], 0.0);
    assert_eq!(h.projects[0].modern.backoff_time[CPU], 0.0);
    assert!(!h.projects[0].modern.sched_req_no_work[CPU]);
}

/// A host with a long running job (no fetch) and finished results to report.
fn reporting_host(done: &[(Time, Time)]) -> (ClientHost, crate::client::host::GroupCtx) {
    let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
    h.projects[0].hostid = HostId(1);
    add_job(&mut h, 0, 100_000.0, 10_000_000);
    for &(completed, deadline) in done {
        add_job(&mut h, 0, 10.0, deadline);
        let j = h.jobs.last_mut().unwrap();
        j.state = TaskState::Done;
        j.completed_time = crate::server::types::db_time(completed);
    }
    (h, g)
}

#[test]
fn report_triggers() {
    // An hour after completion (strictly), on the 60-s grid.
    let (mut h, g) = reporting_host(&[(0, 10_000_000)]);
    let mut srv = MockServer::new(3600.0);
    assert_eq!(h.wake(0, &g, &mut srv).unwrap(), 3660);
    drive(&mut h, &g, &mut srv, 3660, 3660, |_, _| {});
    assert_eq!((srv.calls[0].now, srv.calls[0].reported), (3660, 1));
    assert_eq!(srv.calls[0].work.req_secs, 0.0); // buffer above work_buf_total
    assert_eq!(h.jobs.len(), 1);
    // Within max(86400, work_buf_min) of the deadline.
    let (mut h, g) = reporting_host(&[(0, 87_000)]);
    let mut srv = MockServer::new(3600.0);
    assert_eq!(h.wake(0, &g, &mut srv).unwrap(), 660);
    // 64 ready results: at once.
    let done: Vec<(Time, Time)> = (0..64).map(|_| (0, 10_000_000)).collect();
    let (mut h, g) = reporting_host(&done);
    let mut srv = MockServer::new(3600.0);
    h.wake(0, &g, &mut srv).unwrap();
    assert_eq!((srv.calls[0].now, srv.calls[0].reported), (0, 64));
}

#[test]
fn report_rpc_piggyback_backs_off_only_in_emulator_mode() {
    for emulator in [false, true] {
        let (mut h, mut g) = reporting_host(&[(0, 10_000_000)]);
        g.cfg.emulator_report_backoff = emulator;
        h.jobs[0].flops_left = 20_000.0 * P_FPOPS; // below work_buf_total, above min
        let mut srv = MockServer::new(3600.0);
        srv.send = false;
        drive(&mut h, &g, &mut srv, 0, 3660, |_, _| {});
        assert_eq!(srv.calls.len(), 1);
        assert!(srv.calls[0].work.req_secs > 0.0);
        assert_eq!(h.projects[0].modern.backoff_interval[CPU] > 0.0, emulator);
        assert!(h.projects[0].modern.sched_req_no_work[CPU]);
    }
}

/// 1 CPU, A and B with one 20000-s job each, checkpoint every `ck` s of CPU.
fn slice_host(
    ck: f64,
    leave_in_memory: bool,
) -> (ClientHost, crate::client::host::GroupCtx, MockServer) {
    let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |s| {
        s.checkpoint_period = ck;
        s.leave_apps_in_memory = leave_in_memory;
    });
    h.projects[0].hostid = HostId(1);
    h.projects[1].hostid = HostId(2);
    add_job(&mut h, 0, 20_000.0, 10_000_000);
    add_job(&mut h, 1, 20_000.0, 10_000_000);
    let mut srv = MockServer::new(3600.0);
    srv.send = false;
    (h, g, srv)
}

#[test]
fn slice_preemption_waits_for_a_checkpoint_and_quitting_loses_work() {
    let (mut h, g, mut srv) = slice_host(1000.0, false);
    let mut log = Vec::new();
    drive(&mut h, &g, &mut srv, 0, 4020, |h, t| {
        log.push((t, running_project(h)))
    });
    // A runs from 0; its slice ends at 3600 but its first checkpoint after that is at
    // 4000; the next reschedule on the 60-s grid is 4020.
    assert!(
        log.iter()
            .all(|&(t, p)| p == Some(if t < 4020 { 0 } else { 1 })),
        "{log:?}"
    );
    assert_eq!(log.last().unwrap().0, 4020);
    let a = &h.jobs[0];
    assert_eq!(a.state, TaskState::Quit);
    assert_eq!(a.cpu_time, 4000.0); // the 20 s since the checkpoint are lost
    assert_eq!(a.flops_left, 16_000.0 * P_FPOPS);
    // Kept in memory: nothing lost.
    let (mut h, g, mut srv) = slice_host(1000.0, true);
    drive(&mut h, &g, &mut srv, 0, 4020, |_, _| {});
    assert_eq!(h.jobs[0].state, TaskState::Suspended);
    assert_eq!(h.jobs[0].cpu_time, 4020.0);
}

#[test]
fn a_task_that_never_checkpoints_is_never_sliced() {
    let (mut h, g, mut srv) = slice_host(100_000.0, false);
    let mut log = Vec::new();
    drive(&mut h, &g, &mut srv, 0, 20_000, |h, t| {
        log.push((t, running_project(h)))
    });
    assert!(
        log.iter()
            .all(|&(t, p)| p == Some(if t < 20_000 { 0 } else { 1 })),
        "{log:?}"
    );
    assert_eq!(h.jobs[0].state, TaskState::Done);
    // Continuous checkpoints (emulator): sliced at the first reschedule after 3600.
    let (mut h, g, mut srv) = slice_host(0.0, false);
    let mut log = Vec::new();
    drive(&mut h, &g, &mut srv, 0, 3660, |h, t| {
        log.push((t, running_project(h)))
    });
    assert_eq!(log.last().unwrap(), &(3660, Some(1)));
    assert_eq!(h.jobs[0].cpu_time, 3660.0);
}

#[test]
fn a_task_past_its_slice_keeps_the_cpu_until_rec_crosses() {
    // B (REC 0) runs; A (REC 100) waits. B keeps the CPU after its slice until B's REC
    // exceeds A's decaying REC: w = 2/3, t* = H·log2(1.5). No per-minute wakes.
    let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |_| {});
    h.projects[0].hostid = HostId(1);
    h.projects[1].hostid = HostId(2);
    h.projects[0].modern.rec = 100.0;
    add_job(&mut h, 0, 1e7, 1_000_000_000);
    add_job(&mut h, 1, 1e7, 1_000_000_000);
    let mut srv = MockServer::new(3600.0);
    srv.send = false;
    let mut log = Vec::new();
    drive(&mut h, &g, &mut srv, 0, 600_000, |h, t| {
        log.push((t, running_project(h)))
    });
    let t_star = 864_000.0 * 1.5f64.log2();
    let switch = 3660 + 60 * ((t_star.floor() + 1.0 - 3660.0) / 60.0).ceil() as Time;
    let first_a = log.iter().find(|e| e.1 == Some(0)).unwrap().0;
    assert_eq!(first_a, switch);
    assert_eq!(log.iter().filter(|e| e.0 < switch).count(), 2, "{log:?}");
    // From then on the projects alternate in slices (3600 s + the 60-s grid).
    assert_eq!(
        log.iter().find(|e| e.0 > switch).unwrap(),
        &(switch + 3660, Some(1))
    );
}

/// Diagnostic, not a check: events, RPCs and run time of hosts over 100 days
/// (`cargo test --release --lib perf_probe -- --ignored --nocapture`).
#[test]
#[ignore]
fn perf_probe() {
    for (ncpus, shares, secs) in [
        (4, vec![100.0, 200.0, 300.0], 18_000.0),
        (1, vec![100.0], 7200.0),
        (8, vec![100.0, 100.0], 3000.0),
    ] {
        let (mut h, g) = host_and_ctx(ncpus, &shares, |_| {});
        let mut srv = MockServer::new(secs);
        srv.deadline_after = 10 * 86_400;
        let mut events = 0u64;
        let mut times = Vec::new();
        let t0 = std::time::Instant::now();
        drive(&mut h, &g, &mut srv, 0, 100 * 86_400, |_, t| {
            events += 1;
            times.push(t)
        });
        let mut gaps = std::collections::BTreeMap::new();
        for w in times.windows(2) {
            *gaps.entry(w[1] - w[0]).or_insert(0) += 1;
        }
        let mut top: Vec<_> = gaps.into_iter().collect();
        top.sort_by_key(|e| std::cmp::Reverse(e.1));
        eprintln!("gaps {:?}", &top[..top.len().min(8)]);
        let cpu: Vec<f64> = h
            .projects
            .iter()
            .map(|p| (p.cpu_time / 86_400.0 * 10.0).round() / 10.0)
            .collect();
        let missed: u32 = h.projects.iter().map(|p| p.missed_deadline).sum();
        eprintln!(
            "ncpus {ncpus}: {events} events, {} rpcs, {:?}, cpu-days {cpu:?}, missed {missed}, idle {:.4}",
            srv.calls.len(),
            t0.elapsed(),
            1.0 - h.merit.flops_used / h.merit.flops_total
        );
    }
}
