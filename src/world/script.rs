//! Scripted events and expectations: daemon passes, workunits created or
//! cancelled, and named hosts' RPCs exactly when the scenario says (spec backend
//! §4), and the `[[expect]]` checks of the state they lead to.

use super::{Recorder, RunError, World, daemon_index};
use crate::engine::Time;
use crate::scenario::validate::parse_wu_name;
use crate::scenario::{Daemon, ReportOutcome, ScriptEvent};
use crate::server::config::OutageKind;
use crate::server::db::OutputStatus;
use crate::server::resource::N_RSC;
use crate::server::scheduler::{self, Reply, ReportedJob, Request};
use crate::server::types::*;
use crate::server::{assimilator, lookup_result, work_generator};

impl<R: Recorder> World<R> {
    fn project_of(&self, name: &Option<String>) -> usize {
        match name {
            Some(n) => self
                .backend
                .projects
                .iter()
                .position(|p| &p.name == n)
                .unwrap_or(0),
            None => 0,
        }
    }

    pub(super) fn run_script(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        let ev: ScriptEvent = self.scenario.event[i].clone();
        if let Some(d) = ev.daemon {
            let pi = self.project_of(&ev.project);
            if !ev.assimilate.is_empty() {
                // A pass whose handler answers as the script says (spec backend §2.6).
                let script: Vec<_> = ev
                    .assimilate
                    .iter()
                    .filter_map(|(name, &a)| parse_wu_name(name).map(|id| (id, a)))
                    .collect();
                self.backend.counters.daemon_passes += 1;
                let p = &mut self.backend.projects[pi];
                assimilator::pass_scripted(p, now, &script);
                return self.backend.after_step(now, pi, Some(Actor::Assimilator));
            }
            return self.backend.run_daemon(now, pi, d);
        }
        if let Some(n) = ev.create_workunits {
            let pi = self.project_of(&ev.project);
            let p = &mut self.backend.projects[pi];
            // Checked by scenario validation.
            let appid = p.cfg.app_id(ev.app.as_deref().unwrap_or("")).unwrap_or(1);
            for _ in 0..n {
                work_generator::create_work(p, appid, now, Actor::WorkGenerator);
            }
            return self.backend.after_step(now, pi, Some(Actor::WorkGenerator));
        }
        if !ev.cancel.is_empty() {
            let pi = self.project_of(&ev.project);
            let p = &mut self.backend.projects[pi];
            for name in &ev.cancel {
                if let Some(id) = name.strip_prefix("wu").and_then(|s| s.parse().ok()) {
                    work_generator::cancel(p, now, id);
                }
            }
            return self.backend.after_step(now, pi, Some(Actor::Cancel));
        }
        if let Some(name) = &ev.host {
            self.scripted_rpc(now, name, &ev)?;
        }
        Ok(())
    }

    fn scripted_rpc(&mut self, now: Time, name: &str, ev: &ScriptEvent) -> Result<(), RunError> {
        let Some(ni) = self.named.iter().position(|h| h.name == name) else {
            return Ok(());
        };
        let pi = self.named[ni].project as usize;
        let hostid = self.named[ni].hostid;
        // A lost job is gone from the client whether or not the RPC gets through.
        for lost in &ev.lost {
            let rid = lookup_result(&self.backend.projects[pi], lost);
            self.named[ni].holds.retain(|&h| h != rid);
        }
        // During an outage the request never reaches the scheduler: a down one answers
        // with the maintenance reply (spec backend §2.9), an unreachable one not at all.
        if let Some(o) = self.backend.projects[pi].cfg.outage_at(now) {
            self.backend.counters.rpcs_failed += 1;
            self.named[ni].last_reply = match o.kind {
                OutageKind::Down => {
                    let mut r = Reply::default();
                    r.maintenance(o.maintenance_delay(&self.backend.projects[pi].cfg.config));
                    Some(r)
                }
                OutageKind::Unreachable => None,
            };
            return Ok(());
        }
        self.backend.reports.clear();
        let p = &self.backend.projects[pi];
        for rep in &ev.report {
            let rid = lookup_result(p, &rep.result);
            self.named[ni].holds.retain(|&h| h != rid);
            let (client_state, exit_status) = match rep.outcome {
                ReportOutcome::Success => (client_state::FILES_UPLOADED, 0),
                ReportOutcome::ClientError => (
                    client_state::COMPUTE_ERROR,
                    rep.exit_status
                        .unwrap_or(crate::client::host::CLIENT_ERROR_EXIT),
                ),
                ReportOutcome::Abort => (client_state::ABORTED, exit_status::EXIT_ABORTED_VIA_GUI),
                ReportOutcome::ProjectAbort => {
                    (client_state::ABORTED, exit_status::EXIT_ABORTED_BY_PROJECT)
                }
                ReportOutcome::NoReply => continue,
            };
            let sent = p.db.results.get(rid).map_or(now, |r| r.sent_time);
            let elapsed = rep.elapsed_time.unwrap_or((now - sent) as f64);
            let output_status = match rep.output {
                crate::scenario::OutputRead::Ok => OutputStatus::Ok,
                crate::scenario::OutputRead::Unreadable => OutputStatus::Unreadable,
                crate::scenario::OutputRead::Transient => OutputStatus::TransientUntil(
                    rep.transient_until
                        .map_or(crate::engine::INT_MAX, |d| d.get())
                        .clamp(0, crate::engine::INT_MAX) as i32,
                ),
            };
            self.backend.reports.push(ReportedJob {
                result_id: rid,
                client_state,
                exit_status,
                cpu_time: rep.cpu_time.unwrap_or(elapsed),
                elapsed_time: elapsed,
                output: rep.value,
                output_correct: rep.correct,
                output_status,
            });
        }
        if ev.detach {
            self.named[ni].holds.clear();
        }
        self.backend.other.clear();
        self.backend.other.extend_from_slice(&self.named[ni].holds);
        let (work_req_seconds, max_jobs) = match (ev.request, ev.work_req_seconds) {
            (Some(n), _) => (if n > 0 { 1e12 } else { 0.0 }, n),
            (None, Some(s)) => (s, u32::MAX),
            (None, None) => (0.0, 0),
        };
        let req = Request {
            hostid,
            reattached: ev.detach,
            req_secs: [work_req_seconds, 0.0, 0.0, 0.0],
            req_instances: [0.0; N_RSC],
            max_jobs,
            estimated_delay: 0.0,
            reported: &self.backend.reports,
            other_results: ev.send_other_results.then_some(&self.backend.other[..]),
        };
        let p = &mut self.backend.projects[pi];
        scheduler::process_request(p, now, &req, &mut self.backend.reply);
        self.backend.counters.rpcs += 1;
        let holds = &mut self.named[ni].holds;
        for j in &self.backend.reply.jobs {
            if let Err(k) = holds.binary_search(&j.result_id) {
                holds.insert(k, j.result_id);
            }
        }
        self.named[ni].last_reply = Some(self.backend.reply.clone());
        self.backend.after_step(now, pi, Some(Actor::Scheduler))
    }

    // ----- expectations -------------------------------------------------------

    pub(super) fn check_expect(&mut self, i: usize) {
        self.backend.counters.expectations_checked += 1;
        let ex = &self.scenario.expect[i];
        let pi = self.project_of(&ex.project);
        let p = &self.backend.projects[pi];
        let named = &self.named;
        let outcome = if let Some(c) = &ex.client {
            let (name, k) = c.split_once('#').unwrap_or((c.as_str(), "0"));
            let k: usize = k.parse().unwrap_or(0);
            let g = self.groups.iter().find(|g| g.name == name);
            let now = ex.at.map_or(self.end, |t| t.get());
            match g.and_then(|g| self.hosts.get(g.first + k).map(|h| (g, h))) {
                Some((g, h)) => {
                    let pos = h.projects.iter().position(|q| q.project as usize == pi);
                    let names: Vec<String> = self
                        .backend
                        .projects
                        .iter()
                        .map(|p| p.name.clone())
                        .collect();
                    crate::scenario::expect::check_client(
                        ex,
                        h,
                        pos,
                        now,
                        &g.ctx.cfg,
                        &names,
                        &g.ctx.avail,
                    )
                }
                None => Err(format!("no simulated host `{c}`")),
            }
        } else {
            crate::scenario::expect::check(ex, p, named)
        };
        if let Err(msg) = outcome {
            let at = ex
                .at
                .map_or("end".to_string(), |t| format!("t={}", t.get()));
            let place = ex.source.0.as_deref().unwrap_or("scenario");
            self.expect_failures
                .push(format!("{place}: expect[{i}] at {at}: {msg}"));
        }
    }
}

pub(super) fn script_class(ev: &ScriptEvent, tie: &[u8; 8]) -> u8 {
    let d = if let Some(d) = ev.daemon {
        d
    } else if ev.create_workunits.is_some() {
        Daemon::WorkGenerator
    } else {
        Daemon::Scheduler
    };
    tie[daemon_index(d)]
}
