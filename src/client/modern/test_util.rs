//! Test fixtures: a host built by hand, a mock project server, and a driver that runs
//! hosts through their own wake times as the world does.

use crate::client::config::{ClientConfig, ClientSection, Policy};
use crate::client::host::{
    Answer, ClientHost, ClientJob, GroupCtx, HostBehaviour, RpcStatus, Sent, ServerLink,
    WorkRequest, test_answer, test_reply,
};
use crate::engine::Time;
use crate::server::scheduler::{Job, Request};
use crate::server::types::HostId;
use crate::server::types::{ResultId, WuId};

pub(crate) const P_FPOPS: f64 = 1e9;

/// A modern-policy host with `ncpus` CPUs of 1 GFLOPS and one project per share,
/// and its group context; `tweak` edits the `[client]` section first.
pub(crate) fn host_and_ctx(
    ncpus: u32,
    shares: &[f64],
    tweak: impl FnOnce(&mut ClientSection),
) -> (ClientHost, GroupCtx) {
    let mut s = ClientSection {
        policy: Policy::ModernRec,
        ..Default::default()
    };
    tweak(&mut s);
    let g = GroupCtx {
        cfg: ClientConfig::resolve(&s, None),
        behaviour: HostBehaviour::default(),
        avail: Default::default(),
    };
    let h = ClientHost::for_test(ncpus, P_FPOPS, shares);
    (h, g)
}

/// Appends an unstarted job of `secs` seconds with the given deadline.
pub(crate) fn add_job(h: &mut ClientHost, project: u16, secs: f64, deadline: Time) {
    let id = h.jobs.len() as u32 + 1_000_000;
    h.jobs.push(ClientJob {
        project,
        result_id: ResultId(id),
        workunit_id: WuId(id),
        report_deadline: deadline,
        ..ClientJob::sized(secs * P_FPOPS, secs * P_FPOPS, P_FPOPS, f64::INFINITY)
    });
}

/// Gives the host `count` NVIDIA GPUs of `peak_flops` each.
pub(crate) fn give_gpus(h: &mut ClientHost, count: u32, peak_flops: f64) {
    h.coprocs = vec![crate::server::resource::Coproc {
        kind: crate::server::resource::ProcType::Nvidia,
        count,
        peak_flops,
    }]
    .into();
}

/// Appends an unstarted job of `secs` seconds at `flops` that uses `avg_ncpus` CPUs
/// and, if `gpu_usage > 0`, that many NVIDIA GPU instances; its estimate is exact.
pub(crate) fn add_usage_job(
    h: &mut ClientHost,
    project: u16,
    secs: f64,
    flops: f64,
    avg_ncpus: f64,
    gpu_usage: f64,
) {
    use crate::client::host::JobUsage;
    use crate::server::resource::ProcType;
    let id = h.jobs.len() as u32 + 1_000_000;
    let app_version = h.intern_app_version(JobUsage {
        proc_type: if gpu_usage > 0.0 {
            ProcType::Nvidia
        } else {
            ProcType::Cpu
        },
        app: 0,
        avg_ncpus,
        gpu_usage,
        true_flops: Some(flops),
    });
    h.jobs.push(ClientJob {
        project,
        result_id: ResultId(id),
        workunit_id: WuId(id),
        report_deadline: 100_000_000,
        app_version,
        ..ClientJob::sized(secs * flops, secs * flops, flops, f64::INFINITY)
    });
}

/// One scheduler RPC as the mock saw it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    pub now: Time,
    pub project: u16,
    pub work: WorkRequest,
    pub reported: usize,
    pub hostid: HostId,
}

/// A project server that sends `job_secs` CPU jobs up to the request (while the
/// remaining seconds or instances are positive), or fails, or sends nothing.
pub(crate) struct MockServer {
    pub job_secs: f64,
    pub deadline_after: Time,
    pub fail: bool,
    pub send: bool,
    pub request_delay: f64,
    pub master_ok: bool,
    pub next_id: u32,
    pub calls: Vec<Call>,
    pub master_calls: Vec<Time>,
    /// The jobs of the reply being written.
    sent: Vec<Job>,
    /// Whether requests wait in the server, as in a web server's queue, until
    /// [`MockServer::reply_to`] answers them.
    pub queue: bool,
    pub held: Vec<Request>,
}

impl MockServer {
    pub fn new(job_secs: f64) -> Self {
        Self {
            job_secs,
            deadline_after: 100 * 86_400,
            fail: false,
            send: true,
            request_delay: 0.0,
            master_ok: true,
            next_id: 1,
            calls: Vec::new(),
            master_calls: Vec::new(),
            sent: Vec::new(),
            queue: false,
            held: Vec::new(),
        }
    }

    /// The answer, at `now`, to the oldest request held in flight.
    pub fn reply_to(&mut self, now: Time) -> Answer {
        let req = self.held.remove(0);
        self.sent.clear();
        let (status, hostid) = self.answer(now, &req);
        test_answer(status, hostid, std::mem::take(&mut self.sent), &req)
    }
}

impl ServerLink for MockServer {
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

    fn master_fetch(&mut self, now: Time, _project: u16) -> bool {
        self.master_calls.push(now);
        self.master_ok
    }
}

impl MockServer {
    /// The answer to one request: its status and host id; its jobs go to `sent`.
    fn answer(&mut self, now: Time, call: &Request) -> (RpcStatus, HostId) {
        self.calls.push(Call {
            now,
            project: call.project,
            work: call.work,
            reported: call.reported.len(),
            hostid: call.hostid,
        });
        if self.fail {
            return (RpcStatus::Failed, call.hostid);
        }
        let (mut secs, mut inst) = (call.work.req_secs, call.work.req_instances);
        let mut n = 0;
        while self.send && (secs > 0.0 || inst > 0.0) && n < 100_000 {
            self.sent.push(Job {
                result_id: ResultId(self.next_id),
                workunit_id: WuId(self.next_id),
                appid: 1,
                app_version_id: 1,
                proc_type: crate::server::resource::ProcType::Cpu,
                avg_ncpus: 1.0,
                gpu_usage: 0.0,
                rsc_fpops_est: self.job_secs * P_FPOPS,
                rsc_fpops_bound: 10.0 * self.job_secs * P_FPOPS,
                flops: P_FPOPS,
                true_fpops: self.job_secs * P_FPOPS,
                true_flops: P_FPOPS,
                report_deadline: now + self.deadline_after,
                resend: false,
            });
            self.next_id += 1;
            secs -= self.job_secs;
            inst -= 1.0;
            n += 1;
        }
        let status = RpcStatus::Ok {
            new_jobs: n,
            request_delay: self.request_delay,
            no_work: n == 0 && (call.work.req_secs > 0.0 || call.work.req_instances > 0.0),
        };
        (
            status,
            if call.hostid == HostId(0) {
                HostId(1 + u32::from(call.project))
            } else {
                call.hostid
            },
        )
    }
}

/// Runs the host from `start` through its own wake times while they are ≤ `until`,
/// calling `seen` after every event. Returns the first wake time after `until`.
pub(crate) fn drive(
    h: &mut ClientHost,
    g: &GroupCtx,
    srv: &mut MockServer,
    start: Time,
    until: Time,
    mut seen: impl FnMut(&ClientHost, Time),
) -> Time {
    let mut t = start;
    let mut guard = 0;
    while t <= until {
        let next = h.wake(t, g, srv).unwrap();
        seen(h, t);
        assert!(next > t);
        t = next;
        guard += 1;
        assert!(guard < 1_000_000, "runaway host");
    }
    t
}
