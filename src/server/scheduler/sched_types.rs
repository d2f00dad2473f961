//! The scheduler's request and reply (`sched_types.h`: `SCHEDULER_REQUEST`,
//! `SCHEDULER_REPLY`, and the per-request `WORK_REQ`; spec client §4.1, backend §2.4).

use crate::engine::Time;
use crate::server::db::OutputStatus;
use crate::server::resource::{Coproc, N_RSC, ProcType};
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

/// What a client asks for in one RPC (spec client §4.1): CPU seconds and idle
/// instances (`work_req_seconds`/`cpu_req_secs`, `cpu_req_instances`), each GPU
/// type's (`<coproc><req_secs>`, `<req_instances>`), and its queued work
/// (`estimated_delay`). The client's work fetch fills it; the scheduler reads it
/// per processor type ([`Self::req_secs_by_rsc`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkRequest {
    /// CPU seconds asked for (`work_req_seconds`, `cpu_req_secs`).
    pub req_secs: f64,
    /// CPU instances asked for (`cpu_req_instances`, modern only).
    pub req_instances: f64,
    /// The client's queued work, seconds (`estimated_delay`).
    pub estimated_delay: f64,
    /// GPU seconds and instances asked for, by processor type (index 0 unused: the
    /// CPU's are `req_secs` and `req_instances`; modern only, spec client §4.1).
    pub gpu_req_secs: [f64; N_RSC],
    pub gpu_req_instances: [f64; N_RSC],
}

impl WorkRequest {
    /// Whether it asks for any work, of any resource.
    pub fn asks(&self) -> bool {
        self.req_secs > 0.0
            || self.req_instances > 0.0
            || self.gpu_req_secs.iter().any(|&x| x > 0.0)
            || self.gpu_req_instances.iter().any(|&x| x > 0.0)
    }

    /// Seconds asked for per processor type, as the scheduler reads them
    /// ([`ProcType::index`]). The simulated scheduler does not read the CPU
    /// instance count: a CPU request of instances and no seconds reads as one second,
    /// which `work_needed` treats alike (it tests both), so that CPU-only hosts get
    /// what they got before per-resource requests (docs/fidelity.md).
    pub fn req_secs_by_rsc(&self) -> [f64; N_RSC] {
        std::array::from_fn(|k| {
            if k > 0 {
                self.gpu_req_secs[k]
            } else if self.req_secs <= 0.0 && self.req_instances > 0.0 {
                1.0
            } else {
                self.req_secs
            }
        })
    }

    /// Idle instances asked for per processor type, as the scheduler reads them: the
    /// GPU types' ([`Self::req_secs_by_rsc`] says why the CPU's is 0).
    pub fn req_instances_by_rsc(&self) -> [f64; N_RSC] {
        std::array::from_fn(|k| {
            if k > 0 {
                self.gpu_req_instances[k]
            } else {
                0.0
            }
        })
    }
}

/// The request's `<host_info>` and `<time_stats>` the server copies into the host
/// row (spec backend §2.4.4): the runtime estimates use the client's own figures.
#[derive(Clone, Debug, Default)]
pub struct HostInfo {
    pub p_ncpus: u32,
    pub p_fpops: f64,
    /// The host's coprocessors (`<coprocs>`).
    pub coprocs: Vec<Coproc>,
    pub on_frac: f64,
    pub active_frac: f64,
}

/// A scheduler request (`SCHEDULER_REQUEST`, spec client §4.1): what a client
/// sends and the server reads, the one type both sides speak. It owns its lists, so
/// it can wait for a scheduler process after the client has moved on; a request is
/// reused ([`Self::clear`]) so that an RPC allocates nothing once its lists have
/// grown.
#[derive(Clone, Debug)]
pub struct Request {
    /// Simulator routing, not part of BOINC's request: the sending host's global
    /// index (its random streams' id) and group (whose attributes a new host row
    /// takes), and the project addressed.
    pub host_index: u32,
    pub group: u16,
    pub project: u16,
    pub hostid: HostId,
    /// The client detached and re-attached: it sends no valid host id and no jobs, so
    /// the server's host lookup marks the old jobs CLIENT_DETACHED (§2.4.2).
    pub reattached: bool,
    pub work: WorkRequest,
    /// At most this many new jobs (scripted requests; `u32::MAX` = no cap).
    pub max_jobs: u32,
    /// The reported results (`<result>` elements), in the client's order.
    pub reported: Vec<ReportedJob>,
    /// The jobs the client holds (`<other_results>`), when it sends the list
    /// ([`Self::sends_other_results`]); the server sorts them.
    pub other_results: Vec<ResultId>,
    pub sends_other_results: bool,
    pub host_info: HostInfo,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            host_index: 0,
            group: 0,
            project: 0,
            hostid: HostId(0),
            reattached: false,
            work: WorkRequest::default(),
            max_jobs: u32::MAX,
            reported: Vec::new(),
            other_results: Vec::new(),
            sends_other_results: false,
            host_info: HostInfo::default(),
        }
    }
}

impl Request {
    /// Empties the request for reuse, keeping its lists' capacity.
    pub fn clear(&mut self) {
        let mut reported = std::mem::take(&mut self.reported);
        let mut other_results = std::mem::take(&mut self.other_results);
        let mut coprocs = std::mem::take(&mut self.host_info.coprocs);
        reported.clear();
        other_results.clear();
        coprocs.clear();
        *self = Self {
            reported,
            other_results,
            host_info: HostInfo {
                coprocs,
                ..HostInfo::default()
            },
            ..Self::default()
        };
    }

    /// `<other_results>`, if the client sent the list.
    pub fn other_results(&self) -> Option<&[ResultId]> {
        self.sends_other_results.then_some(&self.other_results[..])
    }
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
    /// "Another scheduler instance is running for this host"
    /// (`handle_request.cpp`, `lock_sched`; spec backend §2.4.0).
    AnotherInstance,
    /// "Server can't open database" (`handle_request.cpp`).
    DatabaseDown,
}

impl Message {
    /// The message as the client shows it; `name` gives a result's name.
    pub fn text(&self, name: impl Fn(ResultId) -> String) -> String {
        match *self {
            Message::ResentLost(r) => format!("Resent lost task {}", name(r)),
            Message::DidntResendLost(r) => format!("Didn't resend lost task {} (expired)", name(r)),
            Message::Maintenance => "Project is temporarily shut down for maintenance".into(),
            Message::AnotherInstance => {
                "Another scheduler instance is running for this host".into()
            }
            Message::DatabaseDown => "Server can't open database".into(),
        }
    }
}

/// A scheduler reply. Reused across RPCs to avoid allocating per event.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The host's id in the project's database (`<hostid>`: a new one at first
    /// contact).
    pub hostid: HostId,
    pub jobs: Vec<Job>,
    /// The reported results the server acknowledges (`<result_ack>`): the client
    /// drops these, and reports the others again (spec client §4.2).
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
    /// `<no_rsc_apps>`: per processor type, whether the project has no app version
    /// for it (the client then never asks it for that type, spec client §2.6).
    pub no_rsc_apps: [bool; N_RSC],
}

impl Reply {
    pub fn clear(&mut self) {
        self.hostid = HostId(0);
        self.no_rsc_apps = [false; N_RSC];
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
        self.project_down(Message::Maintenance, maintenance_delay);
    }

    /// The reply of a scheduler that outage `o` (of kind `down`) keeps from serving
    /// a request: shut down for maintenance, or unable to open the database
    /// (`handle_request.cpp`: "Server can't open database", `project_is_down`,
    /// `request_delay = config.maintenance_delay`). Either way the request is not
    /// read.
    pub fn down(&mut self, o: &crate::server::config::Outage) {
        let message = if o.database {
            Message::DatabaseDown
        } else {
            Message::Maintenance
        };
        self.project_down(message, o.maintenance_delay as f64);
    }

    fn project_down(&mut self, message: Message, request_delay: f64) {
        self.clear();
        self.project_is_down = true;
        self.messages.push(message);
        self.request_delay = request_delay;
    }

    /// The reply of a scheduler process that finds another serving the same host
    /// (`handle_request.cpp`, `lock_sched`; spec backend §2.4.0): the request's
    /// results are not read, so nothing is acked or sent; only the message and a
    /// `request_delay` of `delay`.
    pub fn locked(&mut self, delay: f64) {
        self.clear();
        self.messages.push(Message::AnotherInstance);
        self.request_delay = delay;
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
