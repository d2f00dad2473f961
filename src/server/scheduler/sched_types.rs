//! The scheduler's request and reply (`sched_types.h`: `SCHEDULER_REQUEST`,
//! `SCHEDULER_REPLY`, and the per-request `WORK_REQ`; spec client §4.1, backend §2.4).

use crate::engine::Time;
use crate::server::db::OutputStatus;
use crate::server::resource::{N_RSC, ProcType};
use crate::server::types::*;

/// One result the client reports (spec backend §2.4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportedJob {
    pub result_id: ResultId,
    pub client_state: i32,
    pub exit_status: i32,
    pub cpu_time: f64,
    pub elapsed_time: f64,
    pub output: f64,
    /// Whether the output is right: simulator truth the server does not read, only
    /// records for the outputs (`None`: unknown, or no output).
    pub output_correct: Option<bool>,
    pub output_status: OutputStatus,
}

/// A scheduler request (spec client §4.1, the fields the server reads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request<'a> {
    pub hostid: HostId,
    /// The client detached and re-attached: it sends no valid host id and no jobs, so
    /// the server's host lookup marks the old jobs CLIENT_DETACHED (§2.4.2).
    pub reattached: bool,
    /// Seconds of work asked for per processor type (`cpu_req_secs`,
    /// `<coproc><req_secs>`), indexed by [`ProcType::index`]; 0 = none.
    pub req_secs: [f64; N_RSC],
    /// Idle instances to fill per processor type (`cpu_req_instances`, …).
    pub req_instances: [f64; N_RSC],
    /// At most this many new jobs (scripted requests; `u32::MAX` = no cap).
    pub max_jobs: u32,
    /// The client's estimate of its queued work, seconds (deadline check).
    pub estimated_delay: f64,
    pub reported: &'a [ReportedJob],
    /// Jobs the client holds (`other_results`), if it sent the list.
    pub other_results: Option<&'a [ResultId]>,
}

/// A job sent in a reply.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    pub result_id: ResultId,
    pub workunit_id: WuId,
    /// The workunit's app (the reply's `<app>`).
    pub appid: AppId,
    /// The app version it is sent with, and that version's usage on this host
    /// (the reply's `<app_version>`: `avg_ncpus`, the GPU type and instances).
    pub app_version_id: u32,
    pub proc_type: ProcType,
    pub avg_ncpus: f64,
    pub gpu_usage: f64,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    /// The app version's `flops` in the reply: the server's projected speed of this
    /// host for the app (§2.4.4 step 4). The modern client's runtime estimate is
    /// `rsc_fpops_est / flops` (spec client §3.6) and its time limit
    /// `rsc_fpops_bound / flops` (§1.2).
    pub flops: f64,
    /// Simulator-only: the FLOPs the job really takes (`wu.true_fpops`). The client
    /// computes it; nothing it estimates may read it.
    pub true_fpops: f64,
    /// Simulator-only: the speed the job truly computes at on this host, FLOPS: the
    /// version's peak FLOPS without its `flops_estimate_error` (spec backend §2.4.4
    /// step 4). The client executes at it; nothing it estimates may read it.
    pub true_flops: f64,
    /// The deadline told to the client (without grace).
    pub report_deadline: Time,
    pub resend: bool,
}

/// A user message of a reply (`g_reply->insert_message`). Kept as a code rather than
/// text so that a reply allocates nothing for it; [`Message::text`] gives BOINC's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// "Resent lost task NAME" (spec backend §2.4.5).
    ResentLost(ResultId),
    /// "Didn't resend lost task NAME (expired)" (spec backend §2.4.5).
    DidntResendLost(ResultId),
    /// "Project is temporarily shut down for maintenance" (`sched_main.cpp`).
    Maintenance,
}

impl Message {
    /// The message as the client shows it; `name` gives a result's name.
    pub fn text(&self, name: impl Fn(ResultId) -> String) -> String {
        match *self {
            Message::ResentLost(r) => format!("Resent lost task {}", name(r)),
            Message::DidntResendLost(r) => format!("Didn't resend lost task {} (expired)", name(r)),
            Message::Maintenance => "Project is temporarily shut down for maintenance".into(),
        }
    }
}

/// A scheduler reply. Reused across RPCs to avoid allocating per event.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub jobs: Vec<Job>,
    pub acks: Vec<ResultId>,
    pub aborts: Vec<ResultId>,
    pub aborts_if_not_started: Vec<ResultId>,
    /// User messages, in the order the scheduler inserted them.
    pub messages: Vec<Message>,
    /// Seconds the client must wait before its next RPC (0 = none).
    pub request_delay: f64,
    /// The request asked for work and none was sent.
    pub no_work: bool,
    /// The host is blacklisted ("Not accepting requests from this host").
    pub refused: bool,
    /// `<project_is_down/>`: the scheduler is shut down for maintenance.
    pub project_is_down: bool,
}

impl Reply {
    pub fn clear(&mut self) {
        self.jobs.clear();
        self.acks.clear();
        self.aborts.clear();
        self.aborts_if_not_started.clear();
        self.messages.clear();
        self.request_delay = 0.0;
        self.no_work = false;
        self.refused = false;
        self.project_is_down = false;
    }

    /// The reply of a scheduler shut down for maintenance (`sched_main.cpp`
    /// `send_message`; spec backend §2.9 `maintenance_delay`, client §4.2): the request
    /// is not read, so nothing is acked or sent; only `project_is_down`, the message
    /// and `request_delay = maintenance_delay`.
    pub fn maintenance(&mut self, maintenance_delay: f64) {
        self.clear();
        self.project_is_down = true;
        self.messages.push(Message::Maintenance);
        self.request_delay = maintenance_delay;
    }
}

/// Per-RPC `reliable` and `trusted` of one host app version (§2.4.7).
#[derive(Clone, Copy, Debug)]
pub(super) struct HavRpc {
    pub(super) av: u32,
    pub(super) reliable: bool,
    pub(super) trusted: bool,
}

/// Per-RPC state: the host app versions' `reliable` and `trusted`, the HR class,
/// and what is left of the request per processor type.
pub(super) struct RpcState {
    pub(super) havs: smallvec::SmallVec<[HavRpc; 2]>,
    /// The host's HR class under each HR type (index 0, 1 fine, 2 coarse): each app
    /// sets its own type (`app_hr_type`).
    pub(super) hr_classes: [Option<i32>; 3],
    pub(super) ncpus: i32,
    pub(super) req_secs: [f64; N_RSC],
    pub(super) req_instances: [f64; N_RSC],
    pub(super) max_jobs: u32,
    /// The host's queued work per processor type, seconds (the CPU's from the
    /// request; the clients send no GPU queue yet, so those start at 0).
    pub(super) estimated_delay: [f64; N_RSC],
    pub(super) resend_lost: bool,
    pub(super) sent_any_resend: bool,
}

impl RpcState {
    pub(super) fn new(req_secs: [f64; N_RSC], req_instances: [f64; N_RSC], max_jobs: u32) -> Self {
        Self {
            havs: smallvec::SmallVec::new(),
            hr_classes: [Some(0), None, None],
            ncpus: 1,
            req_secs,
            req_instances,
            max_jobs,
            estimated_delay: [0.0; N_RSC],
            resend_lost: false,
            sent_any_resend: false,
        }
    }

    /// The host's HR class under HR type `hr_type` (`None`: the host has none).
    pub(super) fn hr_class(&self, hr_type: i32) -> Option<i32> {
        self.hr_classes[hr_type as usize]
    }

    /// `reliable` of version `av` on this host (false without a HAV).
    pub(super) fn reliable(&self, av: u32) -> bool {
        self.havs.iter().any(|h| h.av == av && h.reliable)
    }

    /// `trusted` of version `av` on this host (false without a HAV).
    pub(super) fn trusted(&self, av: u32) -> bool {
        self.havs.iter().any(|h| h.av == av && h.trusted)
    }

    /// Whether the request still asks for work of type `t` (`need_proc_type`).
    pub(super) fn needs(&self, t: ProcType) -> bool {
        self.req_secs[t.index()] > 0.0 || self.req_instances[t.index()] > 0.0
    }

    /// `work_needed`: some resource still asks for work.
    pub(super) fn work_needed(&self) -> bool {
        ProcType::ALL.iter().any(|&t| self.needs(t))
    }
}
