//! One scheduler RPC, as the client sees it (spec client §4): why it is made
//! ([`RpcReason`]), what it asks for ([`WorkRequest`]), the [`ServerLink`] it goes
//! through, and [`ClientHost::rpc`], which fills the request, sends it and applies
//! the reply. Client and server speak one request and one reply type, the
//! scheduler's ([`Request`], [`Reply`]); [`RpcStatus`] is how the policies read a
//! reply. Shared by both policies; what a failure or an empty reply means is theirs.

use super::{ClientHost, HostBehaviour, TaskState};
use crate::client::background::{BOUND_FACTOR, MAX_JOBS_PER_REPLY};
use crate::client::config::ClientConfig;
use crate::engine::Time;
use crate::server::db::OutputStatus;
pub use crate::server::scheduler::WorkRequest;
use crate::server::scheduler::{Job, Reply, ReportedJob, Request};
use crate::server::types::db_time;
use crate::server::types::*;
use rand::RngExt;

/// Why an RPC is made (`rpc_reason`, modern client; spec client §2.7, §2.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RpcReason {
    #[default]
    None,
    ResultsDue,
    NeedWork,
    Init,
}

/// What the server answered (spec client §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RpcStatus {
    /// No scheduler URL could be reached (outage, or the host is not connected).
    Failed,
    /// The reply said `project_is_down`.
    Down { request_delay: f64 },
    /// A real reply.
    Ok {
        new_jobs: u32,
        request_delay: f64,
        no_work: bool,
    },
}

/// What a scheduler RPC came to when it was sent.
pub enum Sent {
    /// Answered at once (the project's scheduler takes no time): the reply, or
    /// `None` when no scheduler was reached.
    Answered(Option<Reply>),
    /// Accepted by the project's web server: the answer comes later, as an event of
    /// its own ([`Answer`]; spec client §4.3).
    InFlight,
}

/// The answer to an RPC that was in flight (spec client §4.3): the reply when its
/// service ends, or `None` when the client gave up waiting for the service to
/// start.
pub struct Answer {
    /// The world project the request went to.
    pub project: u16,
    /// What the request asked for.
    pub work: WorkRequest,
    pub reply: Option<Reply>,
}

/// A host's RPC in flight: the client starts no other scheduler operation until
/// its answer comes (`SCHEDULER_OP` busy, spec client §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// The project's slot in the host's list.
    pub project: u16,
    /// The policy goes on with a session when the answer comes (the seed's get-work
    /// chain, spec client §1.6).
    pub continues: bool,
}

/// How an RPC stands when [`ClientHost::rpc`] returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RpcState {
    /// Answered: what the reply said.
    Answered(RpcStatus),
    /// In flight ([`ClientHost::rpc_in_flight`]).
    InFlight,
}

/// The answer's status as the client's policies read it: no reply, a project
/// shut down for maintenance, or a real reply.
pub fn status_of(reply: Option<&Reply>) -> RpcStatus {
    match reply {
        None => RpcStatus::Failed,
        Some(r) if r.project_is_down => RpcStatus::Down {
            request_delay: r.request_delay,
        },
        Some(r) => RpcStatus::Ok {
            new_jobs: r.jobs.len() as u32,
            request_delay: r.request_delay,
            no_work: r.no_work,
        },
    }
}

/// A test server's reply to `req` with status `status`: its jobs `jobs`, host id
/// `hostid`, every reported result acknowledged (`None` when `status` is a failure).
#[cfg(test)]
pub(crate) fn test_reply(
    status: RpcStatus,
    hostid: HostId,
    jobs: Vec<Job>,
    req: &Request,
) -> Option<Reply> {
    let mut reply = Reply {
        hostid,
        jobs,
        acks: req.reported.iter().map(|r| r.result_id).collect(),
        ..Reply::default()
    };
    match status {
        RpcStatus::Failed => return None,
        RpcStatus::Down { request_delay } => {
            reply.maintenance(request_delay);
            reply.hostid = hostid;
        }
        RpcStatus::Ok {
            request_delay,
            no_work,
            ..
        } => {
            reply.request_delay = request_delay;
            reply.no_work = no_work;
        }
    }
    Some(reply)
}

/// A test server's answer, come later, to the request `req` it held in flight
/// ([`test_reply`]).
#[cfg(test)]
pub(crate) fn test_answer(
    status: RpcStatus,
    hostid: HostId,
    jobs: Vec<Job>,
    req: &Request,
) -> Answer {
    Answer {
        project: req.project,
        work: req.work,
        reply: test_reply(status, hostid, jobs, req),
    }
}

/// The project servers, as seen from a host: one call per scheduler RPC, and one
/// per master-file fetch. Whatever fails on the server side comes back as an
/// [`Self::Error`] value, which the client's policy passes up unchanged.
pub trait ServerLink {
    type Error;
    /// An empty request for a host to fill, whose lists may keep the capacity of
    /// earlier ones (so that an RPC allocates nothing).
    fn request(&mut self) -> Request {
        Request::default()
    }
    /// Makes one scheduler RPC: the whole reply at once (`None` when no scheduler
    /// was reached: an outage, a refused connection), or in flight, when the
    /// project's web server queues it (spec client §4.3).
    fn rpc(&mut self, now: Time, req: Request) -> Result<Sent, Self::Error>;
    /// Takes back a reply the host has applied, so that its lists can be reused.
    fn recycle(&mut self, reply: Reply) {
        drop(reply);
    }
    /// The host backed off project `project` at `now` for `secs` seconds after a
    /// failed RPC or master fetch (spec client §1.9, §2.8): the outputs'
    /// `client_backoffs` hear of it. The server itself never knows.
    fn backoff(&mut self, now: Time, project: u16, secs: f64) {
        let _ = (now, project, secs);
    }
    /// Fetches the project's master file: true if the project's web server answered.
    fn master_fetch(&mut self, now: Time, project: u16) -> bool;

    /// Starts moving `bytes` bytes between host `host` and project `project`'s data
    /// server in direction `dir`, through the host's link of `cap` bytes/s (spec
    /// client §8.2, §8.5). Returns the transfer's flow, or `None` when the data
    /// server is down (a transient failure, §8.3). A link without data servers
    /// (a test server) is always down.
    fn xfer_start(
        &mut self,
        now: Time,
        project: u16,
        dir: super::Dir,
        host: u32,
        cap: f64,
        bytes: f64,
    ) -> Option<u32> {
        let _ = (now, project, dir, host, cap, bytes);
        None
    }

    /// Stops transfer `flow` at `now` (the host went off or disconnected, or the
    /// file is no longer needed) and returns the bytes it had left.
    fn xfer_stop(&mut self, now: Time, flow: u32) -> f64 {
        let _ = (now, flow);
        0.0
    }

    /// A reported result's transfer times (spec client §8.1), for the outputs.
    fn xfer_report(
        &mut self,
        project: u16,
        result: ResultId,
        times: &crate::client::files::XferTimes,
    ) {
        let _ = (project, result, times);
    }
}

impl ClientHost {
    /// Makes one scheduler RPC to `self.projects[pi]`: reports every ready result,
    /// lists the jobs in progress, asks for `work`, and adds the jobs of the reply.
    /// Shared by both policies; what a failure or an empty reply means is theirs.
    /// An RPC the project's web server queues is in flight
    /// ([`Self::rpc_in_flight`]) until [`Self::rpc_answered`].
    pub(crate) fn rpc<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        pi: usize,
        work: WorkRequest,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
        server: &mut S,
    ) -> Result<RpcState, S::Error> {
        if self.projects[pi].is_background() {
            let status = self.background_rpc(now, pi, work, behaviour, cfg);
            return Ok(RpcState::Answered(status));
        }
        let detach = behaviour.detach_prob > 0.0
            && {
                let u: f64 = self.rng.random();
                u < behaviour.detach_prob
            }
            && self.projects[pi].hostid != HostId(0);
        if detach {
            // Detach and re-attach: every job of the project is dropped unreported.
            self.jobs.retain(|j| j.project as usize != pi);
            self.xfer_forget(pi);
            self.merit.detaches += 1;
        }
        let mut req = server.request();
        self.fill_request(pi, work, detach, cfg, &mut req);
        match server.rpc(now, req)? {
            Sent::Answered(reply) => {
                let status = self.receive_reply(now, pi, work, reply, behaviour, cfg, server);
                Ok(RpcState::Answered(status))
            }
            Sent::InFlight => {
                self.rpc_in_flight = Some(InFlight {
                    project: pi as u16,
                    continues: false,
                });
                Ok(RpcState::InFlight)
            }
        }
    }

    /// The answer to the RPC in flight arrives at `now` (spec client §4.3): it is
    /// applied as a reply received at once would have been. Returns the project's
    /// slot and what the reply said; `None` when no RPC was in flight.
    pub(crate) fn rpc_answered<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        answer: Answer,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
        server: &mut S,
    ) -> Option<(usize, RpcStatus)> {
        let f = self.rpc_in_flight.take()?;
        let pi = f.project as usize;
        debug_assert_eq!(self.projects[pi].project, answer.project);
        let status = self.receive_reply(now, pi, answer.work, answer.reply, behaviour, cfg, server);
        Some((pi, status))
    }

    /// Applies a reply (`None`: no scheduler reached) to project `pi`, hands it
    /// back to the server, and reports and collects transfers (spec client §8).
    #[allow(clippy::too_many_arguments)]
    fn receive_reply<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        pi: usize,
        work: WorkRequest,
        reply: Option<Reply>,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
        server: &mut S,
    ) -> RpcStatus {
        let status = self.apply_reply(now, pi, work, reply.as_ref(), behaviour, cfg);
        if let Some(reply) = reply {
            server.recycle(reply);
        }
        if self.xfer.is_some() {
            if matches!(status, RpcStatus::Ok { .. }) {
                self.xfer_reported(pi, server);
            }
            self.xfer_collect(now, server);
        }
        status
    }

    /// What a host sends project `pi` in one RPC (spec client §4.1), into `req`:
    /// who it is, `work`, every result ready to report, the other jobs it holds,
    /// and its host info.
    fn fill_request(
        &self,
        pi: usize,
        work: WorkRequest,
        reattached: bool,
        cfg: &ClientConfig,
        req: &mut Request,
    ) {
        let p = &self.projects[pi];
        req.host_index = self.index;
        req.group = self.group;
        req.project = p.project;
        req.hostid = p.hostid;
        req.reattached = reattached;
        req.work = work;
        let slot = pi as u16;
        let ours = self.jobs.iter().filter(|j| j.project == slot);
        req.reported.extend(
            ours.clone()
                .filter(|j| j.ready_to_report())
                .map(|j| ReportedJob {
                    result_id: j.result_id,
                    client_state: i32::from(j.client_state),
                    exit_status: j.exit_status,
                    cpu_time: j.reported_cpu_time(&self.app_versions[j.app_version as usize]),
                    elapsed_time: j.cpu_time,
                    output: j.output,
                    output_correct: j.output_correct,
                    output_status: OutputStatus::Ok,
                }),
        );
        let held = ours.filter(|j| !j.ready_to_report()).map(|j| j.result_id);
        req.other_results.extend(held);
        req.sends_other_results = true;
        let info = &mut req.host_info;
        info.p_ncpus = self.usable_cpus(cfg);
        info.p_fpops = self.p_fpops;
        info.coprocs.extend_from_slice(&self.coprocs);
        info.on_frac = self.time_stats.on_frac;
        info.active_frac = self.time_stats.active_frac;
    }

    /// Applies to project `pi` the reply to the RPC that asked for `work` (`None`:
    /// no scheduler was reached): counts the RPC, and on a real reply keeps the host
    /// id, drops the acknowledged results, carries out the aborts and adds the new
    /// jobs (spec client §4.2). The reply owns what it says, so it can be applied
    /// after the request was sent: only the results it acknowledges leave.
    fn apply_reply(
        &mut self,
        now: Time,
        pi: usize,
        work: WorkRequest,
        reply: Option<&Reply>,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
    ) -> RpcStatus {
        let status = status_of(reply);
        let p = &mut self.projects[pi];
        p.keep_request(work, cfg);
        match (status, reply) {
            (RpcStatus::Ok { .. }, Some(reply)) => {
                p.nrpcs += 1;
                p.hostid = reply.hostid;
                p.modern.no_rsc_apps = reply.no_rsc_apps.into();
                // Acknowledged results leave the client (`<result_ack>`).
                let acks = &reply.acks;
                let (met, missed, wasted) = self.drop_reported(now, pi, |r| acks.contains(&r));
                // The server's aborts: the job stops and is reported as aborted by
                // the project (`result_abort`; `_if_not_started` only before it ran).
                let aborts = reply.aborts.iter().map(|&r| (r, false));
                let if_unstarted = reply.aborts_if_not_started.iter().map(|&r| (r, true));
                for (rid, only_unstarted) in aborts.chain(if_unstarted) {
                    if let Some(j) = self
                        .jobs
                        .iter_mut()
                        .find(|j| j.project as usize == pi && j.result_id == rid)
                        && j.unfinished()
                        && (!only_unstarted
                            || matches!(j.state, TaskState::Unstarted | TaskState::Downloading))
                    {
                        j.state = TaskState::Done;
                        j.completed_time = db_time(now);
                        j.client_state = client_state::ABORTED as u8;
                        j.exit_status = exit_status::EXIT_ABORTED_BY_PROJECT;
                    }
                }
                let p = &mut self.projects[pi];
                p.met_deadline += met;
                p.missed_deadline += missed;
                p.flops_wasted += wasted;
                p.njobs += reply.jobs.len() as u32;

                // Room for exactly the reply's jobs, when the list lacks it: the
                // list then keeps the capacity of the most jobs the host ever held,
                // not up to a quarter more ([`ClientHost::receive`]'s growth); at a
                // tenth of bench-1m that spare room was about 4 MB (docs/performance.md
                // "Memory per entity").
                self.jobs.reserve_exact(reply.jobs.len());
                for job in &reply.jobs {
                    // A job the client already has only gets the new deadline.
                    if let Some(j) = self
                        .jobs
                        .iter_mut()
                        .find(|j| j.result_id == job.result_id && j.project as usize == pi)
                    {
                        j.report_deadline = job.report_deadline;
                        continue;
                    }
                    self.receive(pi, job, now, cfg.policy);
                    if let Some(files) = &behaviour.files {
                        self.xfer_receive(pi, now, files);
                    }
                }
            }
            _ => p.nrpc_failed += 1,
        }
        status
    }

    /// Drops project `pi`'s reported results that a reply at `now` acknowledged
    /// (`acked`; a reply acknowledges at most the few results its request reported),
    /// and returns how many met and missed their deadline and the peak FLOPs of the
    /// late ones (spec client §5.7 `flops_wasted`).
    fn drop_reported(
        &mut self,
        now: Time,
        pi: usize,
        acked: impl Fn(ResultId) -> bool,
    ) -> (u32, u32, f64) {
        let (mut met, mut missed, mut wasted) = (0, 0, 0.0);
        self.jobs.retain(|j| {
            if j.project as usize == pi && j.ready_to_report() && acked(j.result_id) {
                if now > j.report_deadline {
                    missed += 1;
                    wasted += j.peak_flop_count;
                } else {
                    met += 1;
                }
                false
            } else {
                true
            }
        });
        (met, missed, wasted)
    }

    /// A scheduler RPC to background project `pi`, answered by the host itself: its
    /// servers are not simulated ([`crate::client::background`]). The reply always
    /// comes (the project is never down, and never detaches the host): it
    /// acknowledges every reported result and fills the request as BOINC's scheduler
    /// does (spec backend §2.4.4): jobs are sent while CPU seconds or instances are
    /// still asked for, each counting its estimate and one instance, up to
    /// [`MAX_JOBS_PER_REPLY`]. A job's size and delay bound are drawn from the host's
    /// background stream; its estimate is exact, its app version runs on one CPU at
    /// the host's speed, and it has no GPU version (`no_rsc_apps` for every GPU type).
    /// It allocates nothing but the jobs it adds to the queue.
    fn background_rpc(
        &mut self,
        now: Time,
        pi: usize,
        work: WorkRequest,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
    ) -> RpcStatus {
        let (met, missed, wasted) = self.drop_reported(now, pi, |_| true);
        let first_bg = self.projects.iter().position(|p| p.is_background());
        let k = pi - first_bg.unwrap_or(pi);
        let jobs = behaviour
            .background
            .as_ref()
            .and_then(|b| b.jobs(k))
            .copied();
        let p = &mut self.projects[pi];
        p.keep_request(work, cfg);
        p.nrpcs += 1;
        // A known host from now on, as after a first contact (spec client §2.9).
        p.hostid = HostId(1);
        let no_rsc_apps: [bool; crate::server::resource::N_RSC] =
            std::array::from_fn(|r| r != crate::server::resource::CPU);
        p.modern.no_rsc_apps = no_rsc_apps.into();
        p.met_deadline += met;
        p.missed_deadline += missed;
        p.flops_wasted += wasted;
        let asked = work.req_secs > 0.0 || work.req_instances > 0.0;
        // The stream is copied out while jobs are added, and put back after.
        let (Some(jobs), Some(mut rng)) = (jobs, self.extra().map(|x| x.bg_rng.clone())) else {
            return RpcStatus::Ok {
                new_jobs: 0,
                request_delay: 0.0,
                no_work: asked,
            };
        };
        let (mut secs, mut inst) = (work.req_secs, work.req_instances);
        let mut n = 0u32;
        let p_fpops = self.p_fpops;
        let mut next_id = self.projects[pi].njobs;
        while (secs > 0.0 || inst > 0.0) && n < MAX_JOBS_PER_REPLY {
            let size = jobs.size.draw(&mut rng, p_fpops);
            let delay = jobs.delay_bound.sample(&mut rng);
            let delay = if delay.is_finite() {
                delay.max(1.0)
            } else {
                1.0
            };
            next_id += 1;
            let id = next_id;
            let job = Job {
                result_id: ResultId(id),
                workunit_id: WuId(id),
                appid: 1,
                app_version_id: 0,
                proc_type: crate::server::resource::ProcType::Cpu,
                avg_ncpus: 1.0,
                gpu_usage: 0.0,
                rsc_fpops_est: size,
                rsc_fpops_bound: size * BOUND_FACTOR,
                flops: p_fpops,
                true_fpops: size,
                true_flops: p_fpops,
                report_deadline: now.saturating_add(delay.ceil() as Time),
                resend: false,
            };
            self.receive(pi, &job, now, cfg.policy);
            secs -= size / p_fpops;
            inst -= 1.0;
            n += 1;
        }
        if let Some(x) = self.extra_mut() {
            x.bg_rng = rng;
        }
        self.projects[pi].njobs = next_id;
        RpcStatus::Ok {
            new_jobs: n,
            request_delay: 0.0,
            no_work: asked && n == 0,
        }
    }
}
