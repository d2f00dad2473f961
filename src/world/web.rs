//! The world's side of the projects' web servers (spec backend §2.4.0, client
//! §4.3): one event per project for whatever its web server does next, in the
//! order a real server would do it within one second: services that start (the
//! scheduler reads the database), clients that give up, replies that arrive (the
//! host's event runs with its answer).
//!
//! Each project has at most one current `Event::WebServer`; an earlier need
//! replaces it, and the old one is stale when it pops (lazy cancellation, as the
//! hosts' own events).

use super::recorder::SchedulerSample;
use super::{Event, Recorder, RunError, World};
use crate::client::host::Answer;
use crate::engine::Time;
use crate::server::web_server::{SCRIPTED_CALLER, WebServer};

/// A web server's state for the time series at `now`.
pub(super) fn sample(w: &WebServer, now: Time) -> SchedulerSample {
    SchedulerSample {
        busy_s: w.busy_s(now),
        waiting: w.queue_length() as u64,
        in_service: w.in_service() as u64,
        counts: w.counts(),
    }
}

impl<R: Recorder> World<R> {
    /// Project `pi`'s web server at `now`: every service due to start starts,
    /// every client due to give up hears of it, and every reply due reaches its
    /// host (a reply its client gave up on, or whose host left, is dropped: the
    /// jobs it sent are lost, spec backend §2.4.5). A host's event may send a new
    /// RPC to the same server; it queues behind those waiting.
    pub(super) fn web_event(&mut self, now: Time, pi: usize) -> Result<(), RunError> {
        if self.web_wake_at[pi] != now {
            return Ok(()); // stale: an earlier need replaced it
        }
        self.web_wake_at[pi] = Time::MAX;
        loop {
            let web = self.web_mut(pi);
            if let Some(s) = web.next_start(now) {
                (self.backend).start_service(now, pi, s.req, s.start, s.wait, s.abandoned)?;
                continue;
            }
            if let Some(c) = web.next_timeout(now) {
                self.backend.rpc_failed(pi, now);
                let answer = Answer {
                    project: c.project,
                    work: c.work,
                    reply: None,
                };
                self.answer(now, c.host_index as usize, answer)?;
                continue;
            }
            if let Some(d) = web.next_done(now) {
                let h = d.caller.host_index as usize;
                if d.abandoned {
                    self.backend.rpc.keep_reply(d.reply);
                } else {
                    let answer = Answer {
                        project: d.caller.project,
                        work: d.caller.work,
                        reply: Some(d.reply),
                    };
                    self.answer(now, h, answer)?;
                }
                continue;
            }
            break;
        }
        if self.backend.checks_invariants() {
            self.check_web(now, pi)?;
        }
        self.schedule_web();
        Ok(())
    }

    /// Project `pi`'s web server keeps its invariants ([`WebServer::check`]), and
    /// the hosts agree with it: as many wait for an answer from it as it has RPCs
    /// live (a named host counts each of its RPCs in flight), so no host has two RPCs at once with it. It scans every host, so it
    /// runs only at the samples of the time series and at the end.
    pub(super) fn check_web_all(&self, now: Time) -> Result<(), RunError> {
        for (pi, w) in self.backend.web.iter().enumerate() {
            let Some(w) = w else {
                continue;
            };
            let waiting = (self.hosts.iter())
                .filter(|h| {
                    h.rpc_in_flight
                        .is_some_and(|f| h.projects[f.project as usize].project as usize == pi)
                })
                .count()
                + (self.named.iter())
                    .filter(|h| h.project as usize == pi)
                    .map(|h| h.rpcs_in_flight as usize)
                    .sum::<usize>();
            if waiting != w.live() {
                return Err(RunError::Fatal(format!(
                    "t={now}: project {pi}: {waiting} hosts wait for an answer, the web server has {} RPCs live",
                    w.live()
                )));
            }
            self.check_web(now, pi)?;
        }
        Ok(())
    }

    fn check_web(&self, now: Time, pi: usize) -> Result<(), RunError> {
        match &self.backend.web[pi] {
            Some(w) => {
                (w.check()).map_err(|m| RunError::Fatal(format!("t={now}: project {pi}: {m}")))
            }
            None => Ok(()),
        }
    }

    fn web_mut(&mut self, pi: usize) -> &mut WebServer {
        self.backend.web[pi]
            .as_mut()
            .expect("a project with a web server")
    }

    /// Host `h` hears the answer to its RPC in flight: its event runs now. A host
    /// that left for good only forgets the RPC. A named host's answer is kept for
    /// its script (`h` carries [`SCRIPTED_CALLER`]).
    fn answer(&mut self, now: Time, h: usize, answer: Answer) -> Result<(), RunError> {
        let scripted = SCRIPTED_CALLER as usize;
        if h & scripted != 0 {
            self.scripted_answer(h & !scripted, answer.reply);
            return Ok(());
        }
        if self.hosts[h].gone {
            self.hosts[h].rpc_in_flight = None;
            if let Some(r) = answer.reply {
                self.backend.rpc.keep_reply(r);
            }
            return Ok(());
        }
        self.host_event_with(now, h, Some(answer))
    }

    /// Named host `ni` hears the answer to an RPC it sent through the project's
    /// web server (`None`: refused or given up).
    fn scripted_answer(&mut self, ni: usize, reply: Option<crate::server::scheduler::Reply>) {
        let host = &mut self.named[ni];
        host.rpcs_in_flight = host.rpcs_in_flight.saturating_sub(1);
        if let Some(old) = host.receive(reply) {
            self.backend.rpc.keep_reply(old);
        }
    }

    /// Makes sure each web server's next need has a current event: one earlier than
    /// the pending one replaces it.
    pub(super) fn schedule_web(&mut self) {
        for (pi, w) in self.backend.web.iter().enumerate() {
            let Some(w) = w else {
                continue;
            };
            if let Some(t) = w.next_event()
                && t < self.web_wake_at[pi]
            {
                self.web_wake_at[pi] = t;
                let class = self.tie_class[0];
                self.queue.push(t, class, Event::WebServer(pi as u16));
            }
        }
    }
}
