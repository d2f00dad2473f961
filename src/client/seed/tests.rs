//! Tests of the seed policy: the worked examples S16 and S17 (spec client §6), the
//! backoff formulas (§1.9), debt order (§1.3), EDF run-to-completion (§1.10),
//! reporting (§1.8) and event timing, driven through `wake` with a mock server.

use super::backoff::{backoff, rand_range, retry_delay};
use super::debt::{EXP_DECAY_RATE, compute_resource_debts, update_avg_cpu};
use super::*;
use crate::client::availability::AvailSpec;
use crate::client::config::{ClientSection, Policy, SeedBackoff};
use crate::client::host::{
    Answer, ClientJob, HostBehaviour, InFlight, ProjectState, RpcStatus, SeedProject, Sent,
    test_answer, test_reply,
};
use crate::server::scheduler::{Job, Request};
use crate::server::types::HostId;
use crate::server::types::{ResultId, WuId};

/// How the mock answers a project's RPCs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// 3600-s jobs while the remaining request is positive, as the real scheduler.
    Supply,
    /// A reply without jobs.
    Nothing,
    /// No scheduler URL answers.
    Failed,
    /// `project_is_down`.
    Down,
}

/// One logged RPC.
#[derive(Clone, Debug, PartialEq)]
struct Call {
    t: Time,
    project: u16,
    req_secs: f64,
    reported: usize,
}

struct Mock {
    modes: Vec<Mode>,
    calls: Vec<Call>,
    masters: Vec<(Time, u16)>,
    master_ok: bool,
    request_delay: f64,
    job_secs: f64,
    /// Deadline of sent jobs, relative to the RPC.
    deadline: Time,
    next_id: u32,
    /// The jobs of the reply being written.
    sent: Vec<Job>,
    /// Whether requests wait in the mock, as in a web server's queue, until
    /// [`Mock::reply_to`] answers them.
    queue: bool,
    held: Vec<Request>,
}

impl Mock {
    fn new(nprojects: usize) -> Self {
        Self {
            modes: vec![Mode::Supply; nprojects],
            calls: Vec::new(),
            masters: Vec::new(),
            master_ok: true,
            request_delay: 0.0,
            job_secs: 3600.0,
            deadline: 100 * 86_400,
            next_id: 1,
            sent: Vec::new(),
            queue: false,
            held: Vec::new(),
        }
    }

    /// The answer, at `now`, to the oldest request held in flight.
    fn reply_to(&mut self, now: Time) -> Answer {
        let req = self.held.remove(0);
        self.sent.clear();
        let (status, hostid) = self.answer(now, &req);
        test_answer(status, hostid, std::mem::take(&mut self.sent), &req)
    }
}

impl ServerLink for Mock {
    type Error = std::convert::Infallible;

    fn rpc(&mut self, now: Time, req: Request) -> Result<Sent, Self::Error> {
        if self.queue {
            self.held.push(req);
            return Ok(Sent::InFlight);
        }
        self.sent.clear();
        let (status, hostid) = self.answer(now, &req);
        let jobs = std::mem::take(&mut self.sent);
        Ok(Sent::Answered(test_reply(status, hostid, jobs, &req)))
    }

    fn master_fetch(&mut self, now: Time, project: u16) -> bool {
        self.masters.push((now, project));
        self.master_ok
    }
}

impl Mock {
    /// The answer to one request: its status and host id; its jobs go to `sent`.
    fn answer(&mut self, now: Time, call: &Request) -> (RpcStatus, HostId) {
        self.calls.push(Call {
            t: now,
            project: call.project,
            req_secs: call.work.req_secs,
            reported: call.reported.len(),
        });
        let request_delay = self.request_delay;
        match self.modes[call.project as usize] {
            Mode::Failed => (RpcStatus::Failed, HostId(0)),
            Mode::Down => (RpcStatus::Down { request_delay }, HostId(0)),
            Mode::Nothing => (
                RpcStatus::Ok {
                    new_jobs: 0,
                    request_delay,
                    no_work: call.work.req_secs > 0.0,
                },
                HostId(7),
            ),
            Mode::Supply => {
                let mut left = call.work.req_secs;
                let mut n = 0;
                while left > 0.0 {
                    self.sent.push(Job {
                        result_id: ResultId(self.next_id),
                        workunit_id: WuId(self.next_id),
                        appid: 1,
                        app_version_id: 1,
                        proc_type: crate::server::resource::ProcType::Cpu,
                        avg_ncpus: 1.0,
                        gpu_usage: 0.0,
                        rsc_fpops_est: self.job_secs * call.host_info.p_fpops,
                        rsc_fpops_bound: 10.0 * self.job_secs * call.host_info.p_fpops,
                        flops: call.host_info.p_fpops,
                        true_fpops: self.job_secs * call.host_info.p_fpops,
                        true_flops: call.host_info.p_fpops,
                        report_deadline: now + self.deadline,
                        resend: false,
                    });
                    self.next_id += 1;
                    left -= self.job_secs;
                    n += 1;
                }
                (
                    RpcStatus::Ok {
                        new_jobs: n,
                        request_delay,
                        no_work: n == 0 && call.work.req_secs > 0.0,
                    },
                    HostId(7),
                )
            }
        }
    }
}

/// Seed configuration with the given water marks (days) and `max_cpus = 2`.
fn config(min_days: f64, max_days: f64) -> ClientConfig {
    let mut cfg = ClientConfig::resolve(&ClientSection::default(), Some(Policy::SeedDebt));
    cfg.work_buf_min_days = min_days;
    cfg.work_buf_max_days = max_days;
    cfg
}

fn group(cfg: ClientConfig) -> GroupCtx {
    GroupCtx {
        cfg,
        behaviour: HostBehaviour::default(),
        avail: AvailSpec::default(),
    }
}

/// A 1-GFLOPS host with `ncpus` CPUs attached to projects with these shares.
fn host(ncpus: u32, shares: &[f64]) -> ClientHost {
    ClientHost::for_test(ncpus, 1e9, shares)
}

/// A job of `secs` seconds at 1 GFLOPS.
fn job(project: u16, id: u32, secs: f64, deadline: Time) -> ClientJob {
    ClientJob {
        project,
        result_id: ResultId(id),
        workunit_id: WuId(id),
        report_deadline: deadline,
        ..ClientJob::sized(secs * 1e9, secs * 1e9, 1e9, f64::INFINITY)
    }
}

/// Runs host events as the world does (each at the time the previous one returned)
/// until `stop` holds after an event or `limit` is passed. Returns the number of
/// events and the time of the next one.
fn drive(
    h: &mut ClientHost,
    g: &GroupCtx,
    m: &mut Mock,
    t0: Time,
    limit: Time,
    stop: impl Fn(&ClientHost, &Mock) -> bool,
) -> (u32, Time) {
    let mut t = t0;
    let mut n = 0;
    while t <= limit {
        let next = h.wake(t, g, m).unwrap();
        n += 1;
        assert!(next > t);
        if stop(h, m) {
            return (n, next);
        }
        t = next;
    }
    (n, t)
}

fn running(h: &ClientHost) -> Vec<u32> {
    h.jobs
        .iter()
        .filter(|j| j.is_running())
        .map(|j| j.result_id.0)
        .collect()
}

// ------------------------------------------------------ RPCs in flight (§4.3)

/// S16's first session with a scheduler that takes 30 s (spec client §4.3): the
/// get-work RPC to B is in flight, no other session starts meanwhile, and its
/// answer is applied when it comes: B's three days of jobs, which end the chain.
#[test]
fn a_get_work_session_waits_for_its_answer() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    m.queue = true;
    let t0 = 1;
    let next = h.wake(t0, &g, &mut m).unwrap();
    let in_flight = InFlight {
        project: 1,
        continues: true,
    };
    assert_eq!(h.rpc_in_flight, Some(in_flight));
    assert_eq!(m.held.len(), 1);
    assert!(h.jobs.is_empty());
    // Nothing to run and no session may start: the host sleeps until its answer.
    assert_eq!(next, Time::MAX);
    let answer = m.reply_to(t0 + 30);
    h.wake_with(t0 + 30, &g, &mut m, Some(answer)).unwrap();
    assert_eq!(h.rpc_in_flight, None);
    assert_eq!(h.jobs.len(), 72);
    assert_eq!(current_work_buf_days(&h), 3.0);
    assert!(m.held.is_empty(), "the buffer is full: the chain ends");
}

/// A get-work chain goes on when its answer comes: B answers with nothing (a
/// failure for a get-work session, §1.7), so the chain asks A next, whose RPC is
/// in flight in turn.
#[test]
fn a_get_work_chain_goes_on_with_the_next_project_when_the_answer_comes() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    m.modes[1] = Mode::Nothing;
    m.queue = true;
    h.wake(1, &g, &mut m).unwrap();
    let answer = m.reply_to(40);
    h.wake_with(40, &g, &mut m, Some(answer)).unwrap();
    assert_eq!(h.projects[1].nrpc_failures, 1, "no work backs B off");
    assert_eq!(
        h.rpc_in_flight,
        Some(InFlight {
            project: 0,
            continues: true
        })
    );
    assert_eq!(m.held.len(), 1);
    assert_eq!(m.held[0].project, 0);
    assert_eq!(m.held[0].work.req_secs, 259_200.0, "the whole need");
    let answer = m.reply_to(70);
    h.wake_with(70, &g, &mut m, Some(answer)).unwrap();
    assert_eq!(h.rpc_in_flight, None);
    assert_eq!(h.jobs.len(), 72);
}

/// A client that gave up waiting (no reply) backs the project off as after any
/// failed RPC (§1.9).
#[test]
fn a_given_up_rpc_is_a_failure() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    m.queue = true;
    h.wake(1, &g, &mut m).unwrap();
    let mut answer = m.reply_to(121);
    answer.reply = None;
    h.wake_with(121, &g, &mut m, Some(answer)).unwrap();
    assert_eq!(h.projects[1].nrpc_failures, 1);
    assert!(h.projects[1].min_rpc_time > 121.0);
    assert_eq!(h.projects[1].nrpc_failed, 1);
}

// ---------------------------------------------------------------- S16 (§6)

/// S16: B (share 300) is asked for 3 days at t0, the buffer then falls to 1 day at
/// exactly t0 + 172800, and A (now the larger debt) is asked for 2 days.
#[test]
fn s16_first_two_get_work_sessions() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    let t0 = 1;
    let next = h.wake(t0, &g, &mut m).unwrap();
    assert_eq!(
        m.calls,
        vec![Call {
            t: t0,
            project: 1,
            req_secs: 259_200.0,
            reported: 0
        }]
    );
    assert_eq!(h.jobs.len(), 72);
    assert_eq!(h.projects[1].seed.debt_order, 0);
    assert_eq!(h.projects[0].seed.debt_order, 1);
    assert_eq!(current_work_buf_days(&h), 3.0);
    assert_eq!(running(&h), vec![1]);
    // Event-driven: the next event is the first completion, not a poll tick.
    assert_eq!(next, t0 + 3600);

    let (events, _) = drive(&mut h, &g, &mut m, next, t0 + 10 * 86_400, |_, m| {
        m.calls.len() == 2
    });
    // 48 completions, the last one at t0 + 172800, and nothing in between.
    assert_eq!(events, 48);
    assert_eq!(
        m.calls[1],
        Call {
            t: t0 + 172_800,
            project: 0,
            req_secs: 172_800.0,
            reported: 0
        }
    );
    assert_eq!(h.projects[0].seed.debt_order, 0);
    assert_eq!(h.projects[0].seed.resource_debt, 100.0);
    // B's average: 48 jobs of 3600 s credited at completion, decayed in between.
    let mut e: f64 = 0.0;
    for _ in 0..48 {
        if e != 0.0 {
            e *= (-(3600.0 * EXP_DECAY_RATE)).exp();
        }
        e += 3600.0;
    }
    assert_eq!(h.projects[1].seed.exp_avg_cpu, e);
    assert_eq!((e / 1000.0).round(), 151.0);
    assert_eq!(h.projects[1].seed.resource_debt, 300.0 / e);
    assert_eq!(h.projects[0].seed.exp_avg_cpu, 0.0);
    // 24 jobs of B left, 48 new jobs of A: back at the high water mark.
    assert_eq!(h.jobs.iter().filter(|j| j.unfinished()).count(), 72);
    assert_eq!(current_work_buf_days(&h), 3.0);
}

/// S16, 0-jobs variant: the project that sent nothing is backed off 60 s as a failure
/// and the same session asks the next project for the whole remaining need.
#[test]
fn s16_no_work_reply_backs_off_and_asks_next_project() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    m.modes[1] = Mode::Nothing;
    let t0 = 1;
    let next = h.wake(t0, &g, &mut m).unwrap();
    let asked: Vec<(Time, u16, f64)> = m
        .calls
        .iter()
        .map(|c| (c.t, c.project, c.req_secs))
        .collect();
    assert_eq!(asked, vec![(t0, 1, 259_200.0), (t0, 0, 259_200.0)]);
    assert_eq!(h.projects[1].nrpc_failures, 1);
    assert_eq!(h.projects[1].min_rpc_time, (t0 + 60) as f64);
    assert_eq!(h.projects[0].nrpc_failures, 0);
    assert_eq!(h.projects[0].min_rpc_time, 0.0);
    assert_eq!(h.jobs.len(), 72);
    assert!(h.jobs.iter().all(|j| j.project == 0));
    assert_eq!(next, t0 + 3600);
}

/// A transport failure and `project_is_down` are errors: backoff and move on.
#[test]
fn failed_and_down_back_off_and_move_on() {
    for mode in [Mode::Failed, Mode::Down] {
        let g = group(config(1.0, 3.0));
        let mut h = host(1, &[100.0, 300.0]);
        let mut m = Mock::new(2);
        m.modes[1] = mode;
        h.wake(1, &g, &mut m).unwrap();
        let asked: Vec<(u16, f64)> = m.calls.iter().map(|c| (c.project, c.req_secs)).collect();
        assert_eq!(asked, vec![(1, 259_200.0), (0, 259_200.0)]);
        assert_eq!(h.projects[1].nrpc_failures, 1);
        assert_eq!(h.projects[1].min_rpc_time, 61.0);
        assert_eq!(h.projects[1].nrpc_failed, 1);
    }
}

/// `request_delay` (spec §1.7): by default it survives the success/backoff step as
/// `max(min_rpc_time, now + delay)`; the quirk drops it.
#[test]
fn request_delay_rule_and_quirk() {
    for (quirk, mode, want) in [
        (false, Mode::Down, 1.0 + 3600.0),
        (true, Mode::Down, 61.0),
        (false, Mode::Supply, 1.0 + 3600.0),
        (true, Mode::Supply, 0.0),
        (false, Mode::Nothing, 1.0 + 3600.0),
        (true, Mode::Nothing, 61.0),
    ] {
        let mut cfg = config(1.0, 3.0);
        cfg.seed_request_delay_quirk = quirk;
        let g = group(cfg);
        let mut h = host(1, &[100.0]);
        let mut m = Mock::new(1);
        m.modes[0] = mode;
        m.request_delay = 3600.0;
        h.wake(1, &g, &mut m).unwrap();
        assert_eq!(h.projects[0].min_rpc_time, want, "{quirk} {mode:?}");
        let failures = if mode == Mode::Supply { 0 } else { 1 };
        assert_eq!(h.projects[0].nrpc_failures, failures);
    }
}

/// An idle host whose projects are all backed off sleeps exactly until the first
/// integer time after the earliest `min_rpc_time` (the get-work test is strict).
#[test]
fn idle_host_sleeps_until_backoff_ends() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0, 300.0]);
    let mut m = Mock::new(2);
    m.modes = vec![Mode::Failed, Mode::Failed];
    let next = h.wake(1, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 2);
    assert_eq!(h.projects[0].min_rpc_time, 61.0);
    assert_eq!(next, 62);
    let next = h.wake(next, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 4);
    assert_eq!(h.projects[0].nrpc_failures, 2);
    assert_eq!(next, 62 + 61);
    // Backoffs of different lengths: the earliest one counts.
    h.projects[0].min_rpc_time = 5000.5;
    h.projects[1].min_rpc_time = 4000.0;
    assert_eq!(next_wake(&h, 200, &g.cfg), 4001);
    // Nothing at all to do: never.
    let mut idle = host(1, &[100.0]);
    let cfg = config(0.0, 3.0);
    idle.jobs.push(job(0, 1, 100.0, 1_000_000));
    idle.jobs[0].state = TaskState::Suspended;
    assert_eq!(next_wake(&idle, 10, &cfg), Time::MAX);
}

// ---------------------------------------------------------------- S17 (§6)

/// S17: 3600 decays to 3120.76 after a day and 1324.37 after a week; the debt
/// example ranks the share-300 project first.
#[test]
fn s17_exponential_average_and_debt() {
    let mut p = SeedProject {
        exp_avg_cpu: 3600.0,
        ..Default::default()
    };
    update_avg_cpu(&mut p, 86_400.0, false);
    assert_eq!((p.exp_avg_cpu * 100.0).round() / 100.0, 3120.76);
    assert!((p.exp_avg_cpu - 3600.0 * (-1.0f64 / 7.0).exp()).abs() < 1e-9);
    assert_eq!(p.exp_avg_mod_time, 86_400.0);
    let mut p = SeedProject {
        exp_avg_cpu: 3600.0,
        ..Default::default()
    };
    update_avg_cpu(&mut p, 604_800.0, false);
    assert_eq!((p.exp_avg_cpu * 100.0).round() / 100.0, 1324.37);
    assert!((p.exp_avg_cpu - 3600.0 * (-1.0f64).exp()).abs() < 1e-9);
    // Decaying in steps gives the same value as in one step.
    let mut q = SeedProject {
        exp_avg_cpu: 3600.0,
        ..Default::default()
    };
    for d in 1..=7 {
        update_avg_cpu(&mut q, d as f64 * 86_400.0, false);
    }
    assert!((q.exp_avg_cpu - p.exp_avg_cpu).abs() < 1e-9);

    let now = 1_000.0;
    let mut ps = vec![
        ProjectState {
            resource_share: 100.0,
            seed: SeedProject {
                exp_avg_cpu: 3600.0,
                exp_avg_mod_time: now,
                ..Default::default()
            },
            ..Default::default()
        },
        ProjectState {
            resource_share: 300.0,
            seed: SeedProject {
                exp_avg_cpu: 7200.0,
                exp_avg_mod_time: now,
                ..Default::default()
            },
            ..Default::default()
        },
    ];
    compute_resource_debts(&mut ps, now, false);
    assert_eq!((ps[0].seed.resource_debt * 1e6).round() / 1e6, 0.027778);
    assert_eq!((ps[1].seed.resource_debt * 1e6).round() / 1e6, 0.041667);
    assert_eq!((ps[1].seed.debt_order, ps[0].seed.debt_order), (0, 1));
}

/// `seed_exp_sign_bug` (spec §1.2): the average grows by e^(dt/week).
#[test]
fn exp_sign_bug_makes_average_grow() {
    let mut p = SeedProject {
        exp_avg_cpu: 3600.0,
        ..Default::default()
    };
    update_avg_cpu(&mut p, 86_400.0, true);
    assert_eq!((p.exp_avg_cpu * 100.0).round() / 100.0, 4152.83);
    assert!((p.exp_avg_cpu - 3600.0 * (1.0f64 / 7.0).exp()).abs() < 1e-9);
    // Through a completion: the second job's credit finds the first one grown.
    let mut cfg = config(0.0, 3.0);
    cfg.seed_exp_sign_bug = true;
    let g = group(cfg);
    let mut h = host(1, &[100.0]);
    h.jobs.push(job(0, 1, 86_400.0, 10_000_000));
    h.jobs.push(job(0, 2, 86_400.0, 10_000_000));
    let mut m = Mock::new(1);
    m.modes[0] = Mode::Nothing;
    assert_eq!(h.wake(0, &g, &mut m).unwrap(), 86_400);
    assert_eq!(h.wake(86_400, &g, &mut m).unwrap(), 172_800);
    assert_eq!(h.projects[0].seed.exp_avg_cpu, 86_400.0);
    h.wake(172_800, &g, &mut m).unwrap();
    let grown = 86_400.0 * (86_400.0 * EXP_DECAY_RATE).exp() + 86_400.0;
    assert_eq!(h.projects[0].seed.exp_avg_cpu, grown);
    assert!(grown > 2.0 * 86_400.0);
}

/// A zero average stays zero and no decay happens for dt <= 0.
#[test]
fn decay_edge_cases() {
    let mut p = SeedProject::default();
    update_avg_cpu(&mut p, 500.0, false);
    assert_eq!((p.exp_avg_cpu, p.exp_avg_mod_time), (0.0, 500.0));
    p.exp_avg_cpu = 10.0;
    update_avg_cpu(&mut p, 400.0, false);
    assert_eq!((p.exp_avg_cpu, p.exp_avg_mod_time), (10.0, 500.0));
}

// ---------------------------------------------------------------- debts (§1.3)

#[test]
fn debt_ties_go_to_earlier_project() {
    let mut ps: Vec<ProjectState> = (0..3)
        .map(|_| ProjectState {
            resource_share: 100.0,
            ..Default::default()
        })
        .collect();
    compute_resource_debts(&mut ps, 10.0, false);
    let order: Vec<u32> = ps.iter().map(|p| p.seed.debt_order).collect();
    assert_eq!(order, vec![0, 1, 2]);
    // Equal non-zero debts too.
    ps[0].seed.exp_avg_cpu = 2.0;
    ps[0].resource_share = 200.0;
    ps[2].seed.exp_avg_cpu = 1.0;
    ps[1].resource_share = 50.0;
    for p in ps.iter_mut() {
        p.seed.exp_avg_mod_time = 10.0;
    }
    compute_resource_debts(&mut ps, 10.0, false);
    let order: Vec<u32> = ps.iter().map(|p| p.seed.debt_order).collect();
    assert_eq!(order, vec![0, 2, 1]);
}

#[test]
fn never_run_project_ranks_by_raw_share() {
    // A never-run share-50 project (debt 50) beats share 100 with 3600 s (0.0278)…
    let mut ps = vec![
        ProjectState {
            resource_share: 100.0,
            seed: SeedProject {
                exp_avg_cpu: 3600.0,
                exp_avg_mod_time: 5.0,
                ..Default::default()
            },
            ..Default::default()
        },
        ProjectState {
            resource_share: 50.0,
            ..Default::default()
        },
    ];
    compute_resource_debts(&mut ps, 5.0, false);
    assert_eq!((ps[0].seed.debt_order, ps[1].seed.debt_order), (1, 0));
    assert_eq!(ps[1].seed.resource_debt, 50.0);
    // …but not a project whose history is below share_other/share_self seconds.
    ps[0].seed.exp_avg_cpu = 1.5;
    compute_resource_debts(&mut ps, 5.0, false);
    assert_eq!(ps[0].seed.resource_debt, 100.0 / 1.5);
    assert_eq!((ps[0].seed.debt_order, ps[1].seed.debt_order), (0, 1));
}

#[test]
fn next_project_skips_backoff_and_master_pending() {
    let mut ps: Vec<ProjectState> = [100.0, 200.0, 300.0, 400.0]
        .iter()
        .map(|&s| ProjectState {
            resource_share: s,
            ..Default::default()
        })
        .collect();
    compute_resource_debts(&mut ps, 10.0, false);
    ps[3].min_rpc_time = 10.5;
    ps[1].master_url_fetch_pending = true;
    assert_eq!(debt::next_project(&ps, None, 10.0), Some(2));
    assert_eq!(debt::next_project(&ps, Some(2), 10.0), Some(0));
    assert_eq!(debt::next_project(&ps, Some(0), 10.0), None);
    // min_rpc_time == now is not backoff for next_project.
    ps[3].min_rpc_time = 10.0;
    assert_eq!(debt::next_project(&ps, None, 10.0), Some(3));
}

// ---------------------------------------------------------------- buffer (§1.4)

#[test]
fn work_buffer_formulas() {
    let cfg = config(1.0, 3.0);
    let mut h = host(2, &[100.0]);
    h.time_stats.active_frac = 0.5;
    h.jobs.push(job(0, 1, 86_400.0, 1_000_000));
    h.jobs.push(job(0, 2, 86_400.0, 1_000_000));
    // Half of job 1 is done; job 3 is finished and does not count.
    h.jobs[0].flops_left = 43_200.0 * 1e9;
    h.jobs.push(job(0, 3, 86_400.0, 1_000_000));
    h.jobs[2].state = TaskState::Done;
    // (43200 + 86400) / 86400 / 2 / 0.5 = 1.5 days.
    assert_eq!(current_work_buf_days(&h), 1.5);
    // (3 − 1.5) · 86400 · 0.5 · 2.
    assert_eq!(work_needed_secs(&h, &cfg), 129_600.0);
    h.time_stats.active_frac = 0.25;
    assert_eq!(current_work_buf_days(&h), 3.0);
    assert_eq!(work_needed_secs(&h, &cfg), 0.0);
    h.time_stats.active_frac = 0.2;
    assert_eq!(work_needed_secs(&h, &cfg), 0.0);
}

// ---------------------------------------------------------------- backoff (§1.9)

#[test]
fn backoff_first_four_failures_are_60s() {
    for variant in [SeedBackoff::Reference2003, SeedBackoff::Early2002] {
        for n in 1..=4 {
            for u in [0.0, 0.5, 0.999_999_999] {
                assert_eq!(
                    retry_delay(variant, n, 0, u),
                    60.0,
                    "{variant:?} n={n} u={u}"
                );
            }
        }
    }
    // Through `backoff` with a pinned U.
    let mut cfg = config(1.0, 3.0);
    cfg.pin_u = Some(0.999_999);
    let mut h = host(1, &[100.0]);
    for n in 1..=4 {
        backoff(&mut h, 0, 1000.0, &cfg);
        assert_eq!(h.projects[0].nrpc_failures, n);
        assert_eq!(h.projects[0].min_rpc_time, 1060.0);
    }
}

#[test]
fn backoff_bounds_n5_to_10() {
    let v = SeedBackoff::Reference2003;
    let upper = [148.0, 403.0, 1096.0, 2980.0, 8103.0, 14_399.0];
    for (i, n) in (5..=10).enumerate() {
        assert_eq!(retry_delay(v, n, 0, 0.0), 60.0);
        // U → 1: the exclusive upper limit, truncated.
        assert_eq!(retry_delay(v, n, 0, 0.999_999_999), upper[i], "n={n}");
        // U = 1/2 exactly.
        let hi = (n as f64).exp().min(14_400.0);
        assert_eq!(
            retry_delay(v, n, 0, 0.5),
            (60.0 + 0.5 * (hi - 60.0)).trunc()
        );
    }
    assert_eq!(retry_delay(v, 10, 0, 0.5), 7230.0);
    // n is capped at RETRY_CAP.
    assert_eq!(retry_delay(v, 25, 0, 0.5), 7230.0);
    assert_eq!(rand_range(60.0, 20.0, 0.7), 60.0);
    assert_eq!(rand_range(60.0, 160.0, 0.25), 85.0);
}

#[test]
fn backoff_early2002_limits() {
    let v = SeedBackoff::Early2002;
    assert_eq!(retry_delay(v, 10, 0, 0.0), 60.0);
    assert_eq!(retry_delay(v, 10, 0, 0.999_999_999), 14_400.0);
    assert_eq!(retry_delay(v, 10, 0, 1.0), 14_400.0);
    // e^(0.9·10) = 8103.08.
    assert_eq!(retry_delay(v, 10, 0, 0.9), 8103.0);
    // e^(0.5·8) = 54.6 < 60.
    assert_eq!(retry_delay(v, 8, 0, 0.5), 60.0);
    // e^(0.75·8) = 403.43.
    assert_eq!(retry_delay(v, 8, 0, 0.75), 403.0);
    assert_eq!(retry_delay(v, 30, 0, 0.9), 8103.0);
}

/// The 10-failure cycle: failure 11 marks the master file pending, counts a master
/// failure and restarts the count at 1 (60 s).
#[test]
fn backoff_ten_failure_master_cycle() {
    let mut cfg = config(1.0, 3.0);
    cfg.pin_u = Some(0.5);
    let mut h = host(1, &[100.0]);
    let delays = [
        60.0, 60.0, 60.0, 60.0, 104.0, 231.0, 578.0, 1520.0, 4081.0, 7230.0,
    ];
    for (i, d) in delays.iter().enumerate() {
        backoff(&mut h, 0, 0.0, &cfg);
        let p = &h.projects[0];
        assert_eq!(p.nrpc_failures, i as u32 + 1);
        assert_eq!(p.min_rpc_time, *d, "failure {}", i + 1);
        assert!(!p.master_url_fetch_pending);
    }
    backoff(&mut h, 0, 0.0, &cfg);
    let p = &h.projects[0];
    assert_eq!(
        (
            p.nrpc_failures,
            p.master_fetch_failures,
            p.master_url_fetch_pending,
            p.min_rpc_time
        ),
        (1, 1, true, 60.0)
    );
    // Two more cycles: the one that brings master_fetch_failures to 3 already uses
    // the long formula (e^3 < 60, so 60 s).
    for _ in 0..2 {
        for _ in 0..10 {
            backoff(&mut h, 0, 0.0, &cfg);
        }
    }
    let p = &h.projects[0];
    assert_eq!(
        (p.nrpc_failures, p.master_fetch_failures, p.min_rpc_time),
        (1, 3, 60.0)
    );
}

/// `master_fetch_failures >= 3`: master pending, failure not counted, delay
/// `int(rand_range(60, min(1209600, e^mff)))`.
#[test]
fn backoff_master_fetch_failures_branch() {
    let mut cfg = config(1.0, 3.0);
    cfg.pin_u = Some(0.5);
    let mut h = host(1, &[100.0]);
    h.projects[0].master_fetch_failures = 3;
    h.projects[0].nrpc_failures = 5;
    backoff(&mut h, 0, 100.0, &cfg);
    let p = &h.projects[0];
    assert_eq!(
        (
            p.nrpc_failures,
            p.master_fetch_failures,
            p.master_url_fetch_pending,
            p.min_rpc_time
        ),
        (5, 3, true, 160.0)
    );
    for variant in [SeedBackoff::Reference2003, SeedBackoff::Early2002] {
        // e^5 = 148.41: 60 + 0.5·88.41.
        assert_eq!(retry_delay(variant, 5, 5, 0.5), 104.0);
        // e^15 = 3.27e6 > 1209600.
        assert_eq!(retry_delay(variant, 5, 15, 0.5), 604_830.0);
        assert_eq!(retry_delay(variant, 5, 15, 0.999_999_999), 1_209_599.0);
    }
}

// ---------------------------------------------------------------- master fetch (§1.6)

#[test]
fn master_fetch_then_rpc() {
    let g = group(config(1.0, 3.0));
    let mut h = host(1, &[100.0]);
    h.projects[0].master_url_fetch_pending = true;
    let mut m = Mock::new(1);
    h.wake(1, &g, &mut m).unwrap();
    assert_eq!(m.masters, vec![(1, 0)]);
    assert!(!h.projects[0].master_url_fetch_pending);
    assert_eq!(m.calls.len(), 1);
    assert_eq!((m.calls[0].t, m.calls[0].req_secs), (1, 259_200.0));
    assert_eq!(h.projects[0].master_fetch_failures, 0);
}

#[test]
fn master_fetch_failure_backs_off_and_retries() {
    let mut cfg = config(1.0, 3.0);
    cfg.pin_u = Some(0.0);
    let g = group(cfg);
    let mut h = host(1, &[100.0]);
    h.projects[0].master_url_fetch_pending = true;
    let mut m = Mock::new(1);
    m.master_ok = false;
    let next = h.wake(1, &g, &mut m).unwrap();
    let p = &h.projects[0];
    assert_eq!(m.masters, vec![(1, 0)]);
    assert!(m.calls.is_empty());
    assert_eq!(
        (
            p.master_fetch_failures,
            p.nrpc_failures,
            p.min_rpc_time,
            p.master_url_fetch_pending
        ),
        (1, 1, 61.0, true)
    );
    // The pending fetch is due when the backoff ends (min_rpc_time <= now).
    assert_eq!(next, 61);
    m.master_ok = true;
    h.wake(next, &g, &mut m).unwrap();
    assert_eq!(m.masters, vec![(1, 0), (61, 0)]);
    // Our master files list no new URLs: the failure counters stay.
    assert_eq!(h.projects[0].master_fetch_failures, 1);
    // min_rpc_time (61) is not < 61, so get-work waits one more second.
    assert!(m.calls.is_empty());
    h.wake(62, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 1);
    assert_eq!(h.projects[0].nrpc_failures, 0);
}

// ---------------------------------------------------------------- CPU (§1.10)

#[test]
fn edf_start_order_without_preemption() {
    let g = group(config(0.0, 3.0));
    let mut h = host(1, &[100.0]);
    let mut m = Mock::new(1);
    m.modes[0] = Mode::Nothing;
    h.jobs.push(job(0, 1, 100.0, 1_005_000));
    h.jobs.push(job(0, 2, 100.0, 1_003_000));
    h.jobs.push(job(0, 3, 100.0, 1_004_000));
    h.jobs.push(job(0, 4, 100.0, 1_004_000));
    assert_eq!(h.wake(1, &g, &mut m).unwrap(), 101);
    assert_eq!(running(&h), vec![2]);
    // A job with an earlier deadline arrives; it does not preempt.
    h.jobs.push(job(0, 5, 100.0, 1_002_000));
    assert_eq!(h.wake(50, &g, &mut m).unwrap(), 101);
    assert_eq!(running(&h), vec![2]);
    let mut order = vec![2];
    let mut t = 101;
    while h.jobs.iter().any(|j| j.unfinished()) {
        t = h.wake(t, &g, &mut m).unwrap();
        if let Some(&r) = running(&h).first()
            && order.last() != Some(&r)
        {
            order.push(r);
        }
    }
    // Earliest deadline first; equal deadlines (3, 4) in arrival order.
    assert_eq!(order, vec![2, 5, 3, 4, 1]);
    // The queue ran dry at 501 (buffer 0 <= 0): only then a get-work RPC, whose empty
    // reply backs off to 561, so the next event is 562.
    assert_eq!(m.calls.len(), 1);
    assert_eq!((m.calls[0].t, m.calls[0].reported), (501, 5));
    assert_eq!(t, 562);
}

#[test]
fn slots_are_min_of_ncpus_and_max_cpus() {
    for (ncpus, max_cpus, want) in [(1, 2, 1), (2, 2, 2), (4, 2, 2), (4, 3, 3)] {
        let mut cfg = config(0.0, 3.0);
        cfg.max_cpus = max_cpus;
        let mut h = host(ncpus, &[100.0]);
        for k in 0..5 {
            h.jobs.push(job(0, k, 100.0, 10_000));
        }
        schedule_cpus(&mut h, 0, &cfg);
        assert_eq!(running(&h).len(), want);
    }
}

#[test]
fn stopped_tasks_resume_first() {
    let cfg = config(0.0, 3.0);
    let mut h = host(1, &[100.0]);
    h.jobs.push(job(0, 1, 100.0, 1000));
    h.jobs.push(job(0, 2, 100.0, 9000));
    h.jobs[1].state = TaskState::Quit;
    schedule_cpus(&mut h, 0, &cfg);
    assert_eq!(running(&h), vec![2]);
}

// ---------------------------------------------------------------- reporting (§1.8)

/// A ready result is reported on its own at exactly `report_deadline − 21600`, in a
/// report-result session asking for no work (the buffer is above the high mark).
#[test]
fn report_result_session_at_deadline_minus_6h() {
    let g = group(config(0.0, 3.0));
    let mut h = host(1, &[100.0]);
    let mut m = Mock::new(1);
    h.jobs.push(job(0, 1, 100.0, 100_000));
    h.jobs.push(job(0, 2, 1_000_000.0, 5_000_000));
    assert_eq!(h.wake(1, &g, &mut m).unwrap(), 101);
    // Job 1 done at 101; the next event is the overdue time, not a tick.
    assert_eq!(h.wake(101, &g, &mut m).unwrap(), 100_000 - 21_600);
    assert!(m.calls.is_empty());
    assert!(h.jobs[0].ready_to_report());
    let next = h.wake(78_400, &g, &mut m).unwrap();
    assert_eq!(
        m.calls,
        vec![Call {
            t: 78_400,
            project: 0,
            req_secs: 0.0,
            reported: 1
        }]
    );
    assert_eq!(h.jobs.len(), 1);
    assert_eq!(h.projects[0].met_deadline, 1);
    assert_eq!(next, 101 + 1_000_000);
}

/// A report RPC that fails backs off; the overdue report waits for the backoff.
#[test]
fn overdue_report_waits_for_backoff() {
    let mut cfg = config(0.0, 3.0);
    cfg.pin_u = Some(0.0);
    let g = group(cfg);
    let mut h = host(1, &[100.0]);
    let mut m = Mock::new(1);
    m.modes[0] = Mode::Failed;
    h.jobs.push(job(0, 1, 100.0, 10_000));
    h.jobs.push(job(0, 2, 1_000_000.0, 5_000_000));
    h.jobs[0].state = TaskState::Done;
    let next = h.wake(5000, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 1);
    assert_eq!(h.projects[0].nrpc_failures, 1);
    assert_eq!(next, 5060);
    m.modes[0] = Mode::Supply;
    h.wake(next, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 2);
    assert_eq!(m.calls[1].reported, 1);
    // Any reply counts as success in a report-result session.
    assert_eq!(h.projects[0].nrpc_failures, 0);
    assert_eq!(h.projects[0].min_rpc_time, 0.0);
}

/// The report-result session asks for work only when its project has debt order 0.
#[test]
fn report_session_asks_work_only_for_top_debt() {
    let g = group(config(0.0, 3.0));
    for (shares, want) in [([300.0, 100.0], 129_600.0), ([100.0, 300.0], 0.0)] {
        let mut h = host(1, &shares);
        let mut m = Mock::new(2);
        m.modes = vec![Mode::Nothing, Mode::Nothing];
        h.jobs.push(job(0, 1, 100.0, 20_000));
        h.jobs[0].state = TaskState::Done;
        h.jobs.push(job(1, 2, 129_600.0, 5_000_000));
        h.wake(0, &g, &mut m).unwrap();
        assert_eq!(m.calls.len(), 1);
        assert_eq!((m.calls[0].project, m.calls[0].req_secs), (0, want));
    }
}

#[test]
fn reporting_variants() {
    // 2003-05: immediately.
    let mut cfg = config(0.0, 3.0);
    cfg.seed_reporting = SeedReporting::Immediate;
    let g = group(cfg);
    let mut h = host(1, &[100.0]);
    let mut m = Mock::new(1);
    h.jobs.push(job(0, 1, 100.0, 100_000));
    h.jobs.push(job(0, 2, 1_000_000.0, 5_000_000));
    h.wake(1, &g, &mut m).unwrap();
    h.wake(101, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 1);
    assert_eq!((m.calls[0].t, m.calls[0].reported), (101, 1));
    // 2004-04: cushion 21600·2·(1 − 0.75) + 21600 = 32400.
    let mut cfg = config(0.0, 3.0);
    cfg.seed_reporting = SeedReporting::ConnectedCushion2004;
    let mut h = host(1, &[100.0]);
    h.time_stats.connected_frac = 0.75;
    h.jobs.push(job(0, 1, 100.0, 100_000));
    h.jobs.push(job(0, 2, 1_000_000.0, 5_000_000));
    h.jobs[0].state = TaskState::Done;
    assert_eq!(next_wake(&h, 0, &cfg), 100_000 - 32_400);
}

/// Low water crossing between completions with 2 running tasks, computed exactly.
#[test]
fn low_water_crossing_is_exact() {
    let g = group(config(1.0, 3.0));
    let mut h = host(2, &[100.0]);
    let mut m = Mock::new(1);
    // Two jobs of 1.5 days each: buffer = 3 days/2 CPUs = 1.5 days; it falls by 2
    // s/s and reaches 1 day (172800 s) after 43200 s.
    h.jobs.push(job(0, 1, 129_600.0, 10_000_000));
    h.jobs.push(job(0, 2, 129_600.0, 10_000_000));
    let next = h.wake(10, &g, &mut m).unwrap();
    assert!(m.calls.is_empty());
    assert_eq!(next, 10 + 43_200);
    h.wake(next, &g, &mut m).unwrap();
    assert_eq!(m.calls.len(), 1);
    // Need (3 − 1)·86400·2.
    assert_eq!(m.calls[0].req_secs, 345_600.0);
}
