//! The project's web server in front of its scheduler: a few scheduler processes
//! (BOINC's `cgi` or `fcgi` behind Apache) and the listen queue of connections
//! waiting for one (spec backend §2.4.0).
//!
//! Without `[project.NAME.server]` a project has no web server here: every RPC is
//! served the moment it is sent and takes no time. With one, an RPC is
//! - **refused** when every process is busy and the listen queue holds
//!   `listen_backlog` connections already;
//! - else **served** when a process is free, oldest connection first. The
//!   scheduler reads and writes the database when the service starts, and the reply
//!   reaches the client when it ends: a duration drawn from `rpc_service_time`, plus
//!   a cost per job reported and per job sent;
//! - **given up** by its client when its service has not started
//!   [`CONNECT_TIMEOUT`] seconds after it was sent. The connection stays in the
//!   queue and is served anyway; the jobs sent then are lost to the client.
//!
//! The queue runs in continuous time (a service takes a fraction of a second),
//! while the database and the clients see whole seconds (spec backend §1.0): a
//! service that starts at `s` reads the database at the first event second at or
//! after `s`, and its reply arrives at `ceil(end)`. Each operation costs O(log n)
//! in the connections waiting and the processes.

use crate::base::dist::Dist;
use crate::engine::Time;
use crate::engine::rng::SimRng;
use crate::server::scheduler::{Reply, Request, WorkRequest};
use crate::server::types::HostId;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

/// Seconds a client waits for its RPC's service to start before it gives up: the
/// client's `CURLOPT_CONNECTTIMEOUT` (`client/http_curl.cpp`, 120 s; spec client
/// §4.3).
pub const CONNECT_TIMEOUT: Time = 120;

/// The `request_delay` of the reply a scheduler process sends when another one is
/// serving the same host (`sched/handle_request.cpp`, `lock_sched`: "Another
/// scheduler instance is running for this host", 60 s).
pub const LOCKED_REQUEST_DELAY: f64 = 60.0;

/// A project's scheduler capacity (`[project.NAME.server]`, spec backend §2.4.0).
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerCapacity {
    /// RPCs served at once.
    pub processes: u32,
    /// Seconds one RPC takes, before its per-job costs.
    pub service: Dist,
    /// Seconds added per job reported.
    pub per_job_reported: f64,
    /// Seconds added per job sent.
    pub per_job_sent: f64,
    /// Connections that may wait for a process; one more is refused.
    pub listen_backlog: u32,
}

/// A time in seconds, ordered totally (the heaps' key).
#[derive(Clone, Copy, Debug, PartialEq)]
struct At(f64);

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A connection waiting for a process.
struct Waiting {
    req: Request,
    sent: Time,
}

/// The bit of [`Caller::host_index`] that marks a named, scripted host (spec
/// backend §4): the low bits are then its index among the named hosts, not a
/// simulated host's world index.
pub const SCRIPTED_CALLER: u32 = 1 << 31;

/// Who an RPC in service answers, and what for: enough for the world to hand the
/// reply to its host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Caller {
    /// The host's world index.
    pub host_index: u32,
    /// The world project the request went to.
    pub project: u16,
    /// The host's id in the project (the scheduler's lock is per host).
    pub hostid: HostId,
    /// What the request asked for: the client's reply handling reads it.
    pub work: WorkRequest,
}

impl Caller {
    pub fn of(req: &Request) -> Self {
        Caller {
            host_index: req.host_index,
            project: req.project,
            hostid: req.hostid,
            work: req.work,
        }
    }
}

/// An RPC in service.
struct InService {
    caller: Caller,
    reply: Reply,
    /// Its client gave up before the service started: the reply goes nowhere.
    abandoned: bool,
    start: f64,
    end: f64,
}

/// What became of a connection when it arrived.
pub enum Admission {
    /// Every process busy and the queue full: refused at once.
    Refused(Request),
    /// A process is free and no connection waits: served from now.
    Serve(Request),
    /// Waiting for a process.
    Queued,
}

/// A waiting connection whose service starts now.
pub struct Start {
    pub req: Request,
    /// When the service starts, seconds (at or before the event's second).
    pub start: f64,
    /// Seconds it waited.
    pub wait: f64,
    /// Its client had given up.
    pub abandoned: bool,
}

/// A reply whose service has ended.
pub struct Done {
    pub caller: Caller,
    pub reply: Reply,
    /// Its client gave up: the reply is dropped, and the jobs it sent are lost.
    pub abandoned: bool,
}

/// Cumulative counts of a web server since the run began, for the outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Connections accepted: served at once or queued.
    pub accepted: u64,
    /// Replies handed to a client still waiting for them.
    pub replied: u64,
    /// Services started (every accepted connection, given up or not, is served).
    pub served: u64,
    /// Connections refused.
    pub refused: u64,
    /// Connections whose client gave up.
    pub timed_out: u64,
    /// Services that found another of the same host in service.
    pub locked: u64,
    /// Seconds waited by the services started.
    pub wait_s: f64,
}

/// A project's web server and scheduler processes.
pub struct WebServer {
    cap: SchedulerCapacity,
    rng: SimRng,
    /// When each process is free again: all of them, as a min-heap.
    free_at: BinaryHeap<Reverse<At>>,
    /// Connections waiting, oldest first.
    waiting: VecDeque<Waiting>,
    /// How many of the oldest waiting connections their clients gave up: the
    /// timeout is the same for every connection, so those are a prefix.
    given_up: usize,
    /// RPCs in service, by slot, and the free slots.
    in_service: Vec<Option<InService>>,
    free_slots: Vec<u32>,
    /// The ends of the services, as a min-heap of (end, order started, slot).
    ends: BinaryHeap<Reverse<(At, u64, u32)>>,
    started: u64,
    counts: Counts,
    /// Process-seconds of the services that ended (the ones in service are added
    /// up to the moment asked, [`Self::busy_s`]).
    busy_done: f64,
}

impl WebServer {
    pub fn new(cap: SchedulerCapacity, rng: SimRng) -> Self {
        let n = cap.processes as usize;
        WebServer {
            free_at: (0..n).map(|_| Reverse(At(f64::NEG_INFINITY))).collect(),
            waiting: VecDeque::new(),
            given_up: 0,
            in_service: Vec::with_capacity(n),
            free_slots: Vec::new(),
            ends: BinaryHeap::with_capacity(n),
            started: 0,
            counts: Counts::default(),
            busy_done: 0.0,
            cap,
            rng,
        }
    }

    pub fn capacity(&self) -> &SchedulerCapacity {
        &self.cap
    }

    fn first_free(&self) -> f64 {
        self.free_at.peek().map_or(f64::INFINITY, |r| r.0.0)
    }

    /// A connection arrives at `now`.
    pub fn admit(&mut self, now: Time, req: Request) -> Admission {
        if self.waiting.is_empty() && self.first_free() <= now as f64 {
            self.counts.accepted += 1;
            return Admission::Serve(req);
        }
        if self.waiting.len() >= self.cap.listen_backlog as usize {
            self.counts.refused += 1;
            return Admission::Refused(req);
        }
        self.counts.accepted += 1;
        self.waiting.push_back(Waiting { req, sent: now });
        Admission::Queued
    }

    /// The oldest waiting connection whose service starts by `now`, if a process is
    /// free by then.
    pub fn next_start(&mut self, now: Time) -> Option<Start> {
        let free = self.first_free();
        if free > now as f64 {
            return None;
        }
        let w = self.waiting.pop_front()?;
        let abandoned = self.given_up > 0;
        self.given_up = self.given_up.saturating_sub(1);
        let start = free.max(w.sent as f64);
        Some(Start {
            req: w.req,
            start,
            wait: start - w.sent as f64,
            abandoned,
        })
    }

    /// Whether an RPC of host `hostid` is in service at `at` (seconds): a
    /// scheduler process holds the host's lock file while it serves it. A service
    /// that ended by `at` holds it no more, even if its reply, due at the next
    /// whole second, has not been handed over yet.
    pub fn serving(&self, hostid: HostId, at: f64) -> bool {
        hostid != HostId(0)
            && (self.in_service.iter().flatten()).any(|s| s.caller.hostid == hostid && s.end > at)
    }

    /// The service of `caller`'s RPC starts at `start` (seconds) after `wait`
    /// seconds in the queue, answering `reply`: it takes a drawn duration plus the
    /// per-job costs of `reported` jobs reported and the reply's jobs sent. Returns
    /// the second its reply is due.
    pub fn begin(
        &mut self,
        caller: Caller,
        reply: Reply,
        reported: usize,
        start: f64,
        wait: f64,
        abandoned: bool,
    ) -> Time {
        let service = self.cap.service.sample(&mut self.rng).max(0.0)
            + self.cap.per_job_reported * reported as f64
            + self.cap.per_job_sent * reply.jobs.len() as f64;
        let end = start + service;
        self.free_at.pop();
        self.free_at.push(Reverse(At(end)));
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.in_service.push(None);
                self.in_service.len() as u32 - 1
            }
        };
        self.in_service[slot as usize] = Some(InService {
            caller,
            reply,
            abandoned,
            start,
            end,
        });
        self.ends.push(Reverse((At(end), self.started, slot)));
        self.started += 1;
        self.counts.served += 1;
        self.counts.wait_s += wait;
        due(end)
    }

    /// Counts a service that found its host locked (it still took its process).
    pub fn count_locked(&mut self) {
        self.counts.locked += 1;
    }

    /// The next reply due by `now`, in the order the services end.
    pub fn next_done(&mut self, now: Time) -> Option<Done> {
        let Reverse((At(end), _, slot)) = *self.ends.peek()?;
        if due(end) > now {
            return None;
        }
        self.ends.pop();
        let s = self.in_service[slot as usize].take()?;
        self.free_slots.push(slot);
        self.busy_done += s.end - s.start;
        if !s.abandoned {
            self.counts.replied += 1;
        }
        Some(Done {
            caller: s.caller,
            reply: s.reply,
            abandoned: s.abandoned,
        })
    }

    /// The next waiting connection whose client gives up by `now`: it stays in the
    /// queue and is served later, but its client hears of a failure now.
    pub fn next_timeout(&mut self, now: Time) -> Option<Caller> {
        let w = self.waiting.get(self.given_up)?;
        if w.sent + CONNECT_TIMEOUT > now {
            return None;
        }
        self.given_up += 1;
        self.counts.timed_out += 1;
        Some(Caller::of(&w.req))
    }

    /// The next second at which something happens here (a service ends, a waiting
    /// connection finds a process, a client gives up), `None`: nothing pending.
    pub fn next_event(&self) -> Option<Time> {
        let end = self.ends.peek().map(|Reverse((At(e), _, _))| due(*e));
        let start = (!self.waiting.is_empty()).then(|| due(self.first_free()));
        let timeout = (self.waiting.get(self.given_up)).map(|w| w.sent + CONNECT_TIMEOUT);
        [end, start, timeout].into_iter().flatten().min()
    }

    /// Connections waiting (given up or not), and RPCs in service.
    pub fn queue_length(&self) -> usize {
        self.waiting.len()
    }

    pub fn in_service(&self) -> usize {
        self.in_service.len() - self.free_slots.len()
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// RPCs whose client still waits for their answer: queued and not given up,
    /// or in service for a client that did not give up.
    pub fn live(&self) -> usize {
        let queued = self.waiting.len() - self.given_up;
        queued
            + (self.in_service.iter().flatten())
                .filter(|s| !s.abandoned)
                .count()
    }

    /// The web server's invariants (spec backend §2.4.0), once every reply due has
    /// been delivered: no more RPCs in service than processes, and every accepted
    /// RPC ends once for its client: answered, given up, or still live.
    pub fn check(&self) -> Result<(), String> {
        let n = self.in_service();
        if n > self.cap.processes as usize {
            return Err(format!(
                "{n} RPCs in service with {} processes",
                self.cap.processes
            ));
        }
        let c = &self.counts;
        let ended = c.replied + c.timed_out + self.live() as u64;
        if c.accepted != ended {
            return Err(format!(
                "{} RPCs accepted, but {} answered, {} given up and {} live",
                c.accepted,
                c.replied,
                c.timed_out,
                self.live()
            ));
        }
        Ok(())
    }

    /// Process-seconds of service up to `now`.
    pub fn busy_s(&self, now: Time) -> f64 {
        let t = now as f64;
        let running: f64 = (self.in_service.iter().flatten())
            .map(|s| s.end.min(t) - s.start.min(t))
            .sum();
        self.busy_done + running
    }
}

/// The second at which a time of `t` seconds is due (whole seconds, spec backend
/// §1.0).
fn due(t: f64) -> Time {
    if t <= 0.0 { 0 } else { t.ceil() as Time }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    fn server(processes: u32, secs: f64, backlog: u32) -> WebServer {
        WebServer::new(
            SchedulerCapacity {
                processes,
                service: Dist::fixed(secs),
                per_job_reported: 0.0,
                per_job_sent: 0.0,
                listen_backlog: backlog,
            },
            stream(1, 24u64, 0),
        )
    }

    fn req(host: u32) -> Request {
        Request {
            host_index: host,
            hostid: HostId(host + 1),
            ..Request::default()
        }
    }

    /// Serves every start due by `now`, as the world does at an event.
    fn starts(w: &mut WebServer, now: Time) -> Vec<(u32, f64, bool)> {
        let mut out = Vec::new();
        while let Some(s) = w.next_start(now) {
            let c = Caller::of(&s.req);
            out.push((c.host_index, s.start, s.abandoned));
            w.begin(c, Reply::default(), 0, s.start, s.wait, s.abandoned);
        }
        out
    }

    #[test]
    fn a_free_process_serves_at_once_and_the_reply_is_due_at_the_end() {
        let mut w = server(1, 2.5, 1);
        let Admission::Serve(r) = w.admit(10, req(0)) else {
            panic!("a free process serves");
        };
        assert_eq!(
            w.begin(Caller::of(&r), Reply::default(), 0, 10.0, 0.0, false),
            13
        );
        assert_eq!(w.next_event(), Some(13));
        assert!(w.next_done(12).is_none());
        let d = w.next_done(13).expect("due at 13");
        assert_eq!(d.caller.host_index, 0);
        assert!(!d.abandoned);
        assert_eq!(w.busy_s(20), 2.5);
    }

    #[test]
    fn the_queue_is_first_come_first_served_then_refuses() {
        let mut w = server(1, 50.0, 2);
        let Admission::Serve(r) = w.admit(0, req(0)) else {
            panic!()
        };
        w.begin(Caller::of(&r), Reply::default(), 0, 0.0, 0.0, false);
        assert!(matches!(w.admit(1, req(1)), Admission::Queued));
        assert!(matches!(w.admit(2, req(2)), Admission::Queued));
        // Two wait: the third is refused.
        assert!(matches!(w.admit(3, req(3)), Admission::Refused(_)));
        assert_eq!(w.counts().refused, 1);
        // The process frees at 50: host 1 starts then, waiting 49 s.
        assert_eq!(w.next_event(), Some(50));
        assert!(w.next_done(50).is_some());
        assert_eq!(starts(&mut w, 50), vec![(1, 50.0, false)]);
        assert_eq!(w.counts().wait_s, 49.0);
        // Host 2 starts at 100; it gives up at 122, before.
        assert_eq!(w.next_event(), Some(100));
        assert!(w.next_done(100).is_some());
        assert_eq!(starts(&mut w, 100), vec![(2, 100.0, false)]);
        assert_eq!(w.counts().timed_out, 0);
    }

    #[test]
    fn a_client_gives_up_after_the_connect_timeout_and_is_served_anyway() {
        let mut w = server(1, 200.0, 10);
        let Admission::Serve(r) = w.admit(0, req(0)) else {
            panic!()
        };
        w.begin(Caller::of(&r), Reply::default(), 0, 0.0, 0.0, false);
        assert!(matches!(w.admit(5, req(1)), Admission::Queued));
        assert_eq!(w.next_event(), Some(5 + CONNECT_TIMEOUT));
        assert!(w.next_timeout(124).is_none());
        assert_eq!(w.next_timeout(125).map(|c| c.host_index), Some(1));
        assert!(w.next_timeout(125).is_none(), "once only");
        // Still waiting: served at 200, its reply goes nowhere.
        assert_eq!(w.queue_length(), 1);
        assert!(w.next_done(200).is_some());
        assert_eq!(starts(&mut w, 200), vec![(1, 200.0, true)]);
        assert!(w.next_done(400).expect("ends at 400").abandoned);
        assert_eq!(w.counts().timed_out, 1);
        assert_eq!(w.counts().served, 2);
        assert_eq!(w.counts().replied, 1);
        w.check().expect("one answered, one given up");
    }

    #[test]
    fn fractional_services_share_a_second_and_busy_time_is_exact() {
        let mut w = server(2, 0.4, 10);
        for h in 0..2 {
            let Admission::Serve(r) = w.admit(0, req(h)) else {
                panic!()
            };
            w.begin(Caller::of(&r), Reply::default(), 0, 0.0, 0.0, false);
        }
        for h in 2..5 {
            assert!(matches!(w.admit(0, req(h)), Admission::Queued));
        }
        // Both processes free at 0.4: hosts 2 and 3 start at 0.4, host 4 at 0.8,
        // all read at the event of second 1.
        assert_eq!(w.next_event(), Some(1));
        let s = starts(&mut w, 1);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].1, s[1].1), (0.4, 0.4));
        assert!((s[2].1 - 0.8).abs() < 1e-12);
        // Host 2 (id 3) is served from 0.4 to 0.8: it holds its lock then, not after,
        // although its reply is handed over only at second 1.
        assert!(w.serving(HostId(3), 0.5) && !w.serving(HostId(9), 0.5));
        assert!(!w.serving(HostId(3), 0.8));
        assert!((w.busy_s(10) - 2.0).abs() < 1e-12);
        assert!((w.busy_s(1) - 1.8).abs() < 1e-12);
        // Five replies not yet delivered, four of them due: once those are, one
        // service is left, as at most two can overlap at any instant.
        assert_eq!(w.in_service(), 5);
        assert!(w.check().is_err(), "due replies still count");
        let mut n = 0;
        while w.next_done(1).is_some() {
            n += 1;
        }
        assert_eq!(n, 4);
        w.check().expect("one in service, four answered");
    }
}
