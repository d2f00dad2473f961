//! The `[[event]]` tables (docs/scenario.md, "`[[event]]`"): each scripted event
//! does exactly one thing (a daemon pass, a host's scheduler RPC, created workunits
//! or cancellations) before the end of the run, and the details of an RPC (its
//! request, reported results, lost results) come only with a host (spec backend
//! §2.4). Names of hosts, apps, workunits and results must resolve.

use super::Checker;
use crate::scenario::schema::{Daemon, OutputRead, Report, ScriptEvent};

impl Checker<'_> {
    pub(super) fn event(&mut self, i: usize, e: &ScriptEvent) {
        let prefix = format!("event.{i}");
        let at = |k: &str| format!("{prefix}.{k}");
        self.duration_non_negative(&at("at"), e.at);
        self.before_end(&at("at"), "event", e.at);

        let actions: Vec<&str> = [
            ("daemon", e.daemon.is_some()),
            ("host", e.host.is_some()),
            ("create_workunits", e.create_workunits.is_some()),
            ("submit_batch", e.submit_batch.is_some()),
            ("cancel", !e.cancel.is_empty()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(k, _)| *k)
        .collect();
        if actions.len() != 1 {
            let what = if actions.is_empty() {
                "event has no action".to_string()
            } else {
                format!(
                    "event has {} actions (`{}`)",
                    actions.len(),
                    actions.join("`, `")
                )
            };
            self.push(
                prefix.clone(),
                format!(
                    "{what}; expected exactly one of `daemon`, `host`, `create_workunits`, `submit_batch`, `cancel`"
                ),
            );
        }

        let project = self.project_ref(&at("project"), e.project.as_deref());

        if e.daemon == Some(Daemon::Scheduler) {
            self.push(
                at("daemon"),
                "the scheduler runs only on host RPCs; expected another daemon, or `host = \"NAME\"` for an RPC",
            );
        }
        if e.create_workunits == Some(0) {
            self.push(
                at("create_workunits"),
                "create_workunits = 0 creates nothing; expected at least 1",
            );
        }
        if let Some(b) = &e.submit_batch {
            if b.jobs == 0 {
                self.push(
                    at("submit_batch.jobs"),
                    "a batch of 0 jobs submits nothing; expected at least 1",
                );
            }
            self.job_size(&at("submit_batch.size"), &b.size);
            if b.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
                self.push(
                    at("submit_batch.name"),
                    "empty batch name; expected a name, or no `name` for `batch<id>`",
                );
            }
        }
        if let Some(app) = &e.app {
            if e.create_workunits.is_none() && e.submit_batch.is_none() {
                self.push(
                    at("app"),
                    "`app` names the app of created workunits; expected it only with `create_workunits` or `submit_batch`",
                );
            } else if let Some(p) = &project {
                self.app_ref(&at("app"), p, app);
            }
        }
        for (j, name) in e.cancel.iter().enumerate() {
            self.wu_name(&format!("{prefix}.cancel.{j}"), name);
        }
        if !e.assimilate.is_empty() && e.daemon != Some(Daemon::Assimilator) {
            self.push(
                at("assimilate"),
                "`assimilate` gives the assimilation handler's answers; expected it only with `daemon = \"assimilator\"`",
            );
        }
        for name in e.assimilate.keys() {
            self.wu_name(&format!("{prefix}.assimilate.{name}"), name);
        }

        match &e.host {
            Some(h) => self.host_ref(&at("host"), "event", h, project.as_deref()),
            None => {
                // RPC details without an RPC: almost certainly a forgotten `host`.
                for (key, given) in [
                    ("request", e.request.is_some()),
                    ("work_req_seconds", e.work_req_seconds.is_some()),
                    ("report", !e.report.is_empty()),
                    ("lost", !e.lost.is_empty()),
                    ("detach", e.detach),
                    ("send_other_results", !e.send_other_results),
                ] {
                    if given {
                        self.push(
                            at(key),
                            format!("`{key}` describes a scheduler RPC; expected it only with `host = \"NAME\"`"),
                        );
                    }
                }
            }
        }
        if e.request.is_some() && e.work_req_seconds.is_some() {
            self.push(
                at("work_req_seconds"),
                "both `request` and `work_req_seconds` are given; expected at most one of them",
            );
        }
        if let Some(x) = e.work_req_seconds {
            self.non_negative(&at("work_req_seconds"), x);
        }
        for (j, r) in e.report.iter().enumerate() {
            self.report(&format!("{prefix}.report.{j}"), r);
        }
        for (j, name) in e.lost.iter().enumerate() {
            self.result_name(&format!("{prefix}.lost.{j}"), name);
        }
    }

    fn report(&mut self, prefix: &str, r: &Report) {
        self.result_name(&format!("{prefix}.result"), &r.result);
        self.finite(&format!("{prefix}.value"), r.value);
        if let Some(x) = r.cpu_time {
            self.non_negative(&format!("{prefix}.cpu_time"), x);
        }
        if let Some(x) = r.elapsed_time {
            self.non_negative(&format!("{prefix}.elapsed_time"), x);
        }
        match (r.output, r.transient_until) {
            (OutputRead::Transient, None) => self.push(
                format!("{prefix}.transient_until"),
                "output = \"transient\" needs transient_until; expected the time the output becomes readable",
            ),
            (OutputRead::Transient, Some(t)) => {
                self.duration_non_negative(&format!("{prefix}.transient_until"), t)
            }
            (_, Some(_)) => self.push(
                format!("{prefix}.transient_until"),
                "transient_until is only meaningful with output = \"transient\"; expected no transient_until",
            ),
            (_, None) => {}
        }
    }
}
