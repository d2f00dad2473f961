//! Scripted events and expectations: daemon passes, workunits created or
//! cancelled, and named hosts' RPCs exactly when the scenario says (spec backend
//! §4), and the `[[expect]]` checks of the state they lead to. Every name was
//! resolved when the scenario was loaded ([`crate::scenario::plan`]).

use super::{Recorder, RunError, World};
use crate::engine::Time;
use crate::scenario::Daemon;
use crate::scenario::plan::{Action, ScriptedRpc};
use crate::server::config::OutageKind;
use crate::server::scheduler::{Reply, ReportedJob};
use crate::server::step::Step;
use crate::server::types::*;
use crate::server::web_server::{Admission, SCRIPTED_CALLER};
use crate::server::{assimilator, batch, lookup_result, work_generator};

impl<R: Recorder> World<R> {
    /// Runs scripted event `i`.
    pub(super) fn run_script(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        match &self.events[i].action {
            &Action::Daemon { project, daemon } => self.backend.run_daemon(now, project, daemon),
            Action::Assimilate { project, script } => {
                // A pass whose handler answers as the script says (spec backend §2.6);
                // nothing while the assimilator is down.
                self.backend.counters.daemon_passes += 1;
                if self.backend.is_down(*project, Daemon::Assimilator, now) {
                    return Ok(());
                }
                let p = &mut self.backend.projects[*project];
                let step = assimilator::pass_scripted(p, now, script);
                self.backend
                    .end_step(now, *project, Some(Actor::Assimilator), &step)
            }
            &Action::CreateWorkunits {
                project,
                appid,
                count,
            } => {
                let p = &mut self.backend.projects[project];
                for _ in 0..count {
                    work_generator::create_work(p, appid, now, Actor::WorkGenerator);
                }
                self.backend
                    .end_step(now, project, Some(Actor::WorkGenerator), &Step::default())
            }
            Action::SubmitBatch { project, spec } => {
                batch::submit(&mut self.backend.projects[*project], spec, now);
                self.backend
                    .end_step(now, *project, Some(Actor::WorkGenerator), &Step::default())
            }
            Action::Cancel { project, workunits } => {
                let p = &mut self.backend.projects[*project];
                for &id in workunits {
                    work_generator::cancel(p, now, id);
                }
                self.backend
                    .end_step(now, *project, Some(Actor::Cancel), &Step::default())
            }
            Action::Rpc(_) => self.scripted_rpc(now, i),
            Action::Nothing => Ok(()),
        }
    }

    /// A named host's scheduler RPC, as scripted event `i` says.
    fn scripted_rpc(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        let Action::Rpc(ev) = &self.events[i].action else {
            return Ok(());
        };
        let ScriptedRpc { host: ni, .. } = *ev;
        let b = &mut self.backend;
        let host = &mut self.named[ni];
        let pi = host.project as usize;
        // A lost job is gone from the client whether or not the RPC gets through.
        for lost in &ev.lost {
            let rid = lookup_result(&b.projects[pi], lost);
            host.holds.retain(|&h| h != rid);
        }
        // During an outage the request never reaches the scheduler: a down one answers
        // with the maintenance (or database-down) reply (spec backend §2.9), an
        // unreachable one not at all.
        if let Some(o) = b.projects[pi].cfg.outage_at(now) {
            b.counters.rpcs_failed += 1;
            let answer = match o.kind {
                OutageKind::Down => {
                    let mut r = Reply::default();
                    r.down(o);
                    Some(r)
                }
                OutageKind::Unreachable => None,
            };
            if let Some(old) = host.receive(answer) {
                b.rpc.keep_reply(old);
            }
            return Ok(());
        }
        let mut req = b.rpc.request();
        let p = &b.projects[pi];
        for rep in &ev.report {
            let rid = lookup_result(p, &rep.result);
            host.holds.retain(|&h| h != rid);
            let Some((client_state, exit_status)) = rep.outcome else {
                continue; // never reported
            };
            let sent = p.db.results.get(rid).map_or(now, |r| r.sent_time.into());
            let elapsed = rep.elapsed_time.unwrap_or((now - sent) as f64);
            req.reported.push(ReportedJob {
                result_id: rid,
                client_state,
                exit_status,
                cpu_time: rep.cpu_time.unwrap_or(elapsed),
                elapsed_time: elapsed,
                output: rep.value,
                output_correct: rep.correct,
                output_status: rep.output_status,
            });
        }
        if ev.detach {
            host.holds.clear();
        }
        req.other_results.extend_from_slice(&host.holds);
        req.sends_other_results = ev.send_other_results;
        req.hostid = host.hostid;
        req.reattached = ev.detach;
        req.work.req_secs = ev.work_req_seconds;
        req.max_jobs = ev.max_jobs;
        req.project = pi as u16;
        req.host_index = SCRIPTED_CALLER | ni as u32;
        // A project with a web server queues the request, or refuses it (spec
        // backend §2.4.0): its answer comes later, as a simulated host's does.
        if let Some(web) = &mut b.web[pi] {
            match web.admit(now, req) {
                Admission::Refused(req) => {
                    b.rpc_failed(pi, now);
                    b.rpc.keep_request(req);
                    if let Some(old) = host.receive(None) {
                        b.rpc.keep_reply(old);
                    }
                }
                Admission::Serve(req) => {
                    host.rpcs_in_flight += 1;
                    b.start_service(now, pi, req, now as f64, 0.0, false)?;
                }
                Admission::Queued => host.rpcs_in_flight += 1,
            }
            self.schedule_web();
            return Ok(());
        }
        let reply = b.serve_scripted(now, pi, req)?;
        if let Some(old) = self.named[ni].receive(Some(reply)) {
            self.backend.rpc.keep_reply(old);
        }
        Ok(())
    }

    /// Checks expectation `i`, noting a failure with its place and time.
    pub(super) fn check_expect(&mut self, i: usize) {
        self.backend.counters.expectations_checked += 1;
        let ex = &self.expects[i];
        let pi = ex.project;
        let p = &self.backend.projects[pi];
        let outcome = match &ex.client {
            Some(Ok(index)) => {
                let h = &self.hosts[*index];
                let g = &self.groups[h.group as usize];
                let now = ex.at.unwrap_or(self.end);
                let pos = h.projects.iter().position(|q| q.project as usize == pi);
                let names: Vec<String> = (self.backend.projects.iter())
                    .map(|p| p.name.clone())
                    .collect();
                super::expect::verify_client(
                    &ex.expect,
                    h,
                    pos,
                    now,
                    &g.ctx.cfg,
                    &names,
                    &g.ctx.avail,
                )
                .map_err(|e| e.to_string())
            }
            Some(Err(c)) => Err(format!("no simulated host `{c}`")),
            None => {
                let web = self.backend.web.get(pi).and_then(Option::as_ref);
                super::expect::verify(&ex.expect, p, &self.named, ex.named.as_ref(), web)
                    .map_err(|e| e.to_string())
            }
        };
        if let Err(msg) = outcome {
            let at = ex.at.map_or("end".to_string(), |t| format!("t={t}"));
            let place = &ex.place;
            self.expect_failures
                .push(format!("{place}: expect[{i}] at {at}: {msg}"));
        }
    }
}
