//! A simulated client's starting state (`[host_group.start]`): the values a
//! client state file would give it when it joins, so that a scripted scenario can set
//! up a situation exactly.
//!
//! Every key is optional; a key left out keeps what a newly attached client has (the
//! time statistics of the availability model, REC 0, no backoff, an empty queue).
//! Jobs already in the queue (`[[host_group.start.job]]`) are results the project's
//! server holds as sent to the host (`scheduler::sent_before_start`). Names and units are
//! those of the spec: time statistics (spec client §1.11, §3.5), per-project REC
//! (modern, §2.3), `exp_avg_cpu` (seed, from which the resource debt is computed,
//! §1.2–1.3), the project RPC backoff `min_rpc_time` / `nrpc_failures` (§1.9, §2.8)
//! and the CPU work-fetch backoff `cpu_backoff_time` / `cpu_backoff_interval` (§2.7).
//! Times (`min_rpc_time`, `cpu_backoff_time`) are absolute simulation times, like an
//! expectation's `at`.

use crate::base::units::Duration;
use crate::client::config::Policy;
use crate::client::host::{ClientHost, TaskState, TimeStats};
use crate::server::resource::CPU;
use crate::server::scheduler::Job;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[host_group.start]`: the state every host of the group has when it joins.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ClientStart {
    /// Starting `time_stats.on_frac` (default: the availability model's).
    pub on_frac: Option<f64>,
    /// Starting `time_stats.active_frac`.
    pub active_frac: Option<f64>,
    /// Starting `time_stats.connected_frac`.
    pub connected_frac: Option<f64>,
    /// Per attached project, by project name.
    pub project: BTreeMap<String, ProjectStart>,
    /// Jobs in the client's queue when it joins, in queue (arrival) order.
    pub job: Vec<StartJob>,
}

/// `[[host_group.start.job]]`: a job the project sent before the host joined. It is
/// a workunit of its app's template; the project's database holds its result
/// as IN_PROGRESS on this host, sent at the join time.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StartJob {
    /// The project (default: the group's only project).
    #[serde(default)]
    pub project: String,
    /// The workunit's app, by name (default: the project's first app).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub app: String,
    /// The report deadline the client was told (absolute time, after the join time).
    pub report_deadline: Duration,
    /// Fraction of the job computed up to its last checkpoint, in [0, 1).
    #[serde(default)]
    pub fraction_done: f64,
}

/// `[host_group.start.project.NAME]`: one attached project's client state.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectStart {
    /// Recent estimated credit (modern policy, spec client §2.3), as of the join time.
    pub rec: Option<f64>,
    /// Exponentially averaged CPU seconds (seed policy, spec client §1.2), as of the
    /// join time; the seed client's resource debt is `resource_share / exp_avg_cpu`.
    pub exp_avg_cpu: Option<f64>,
    /// No scheduler RPC to the project before this time (spec client §1.9, §2.8).
    pub min_rpc_time: Option<Duration>,
    /// Consecutive failed RPCs, which set the next backoff's length.
    pub nrpc_failures: Option<u32>,
    /// No CPU work is asked of the project before this time (spec client §2.7).
    pub cpu_backoff_time: Option<Duration>,
    /// The current CPU backoff interval, seconds (spec client §2.7).
    pub cpu_backoff_interval: Option<Duration>,
}

impl ClientStart {
    /// Gives `host`, just built and joining at `joined`, this starting state.
    /// `project_index` maps a project name to the world's project index; every name
    /// has been checked by the validator to be one the group attaches to.
    pub fn apply(&self, host: &mut ClientHost, joined: f64, project_index: impl Fn(&str) -> u16) {
        let mut ts = host.avail.time_stats();
        if self.on_frac.is_some() || self.active_frac.is_some() || self.connected_frac.is_some() {
            ts = TimeStats {
                on_frac: self.on_frac.unwrap_or(ts.on_frac),
                active_frac: self.active_frac.unwrap_or(ts.active_frac),
                connected_frac: self.connected_frac.unwrap_or(ts.connected_frac),
            };
            host.avail.set_time_stats(ts);
            host.time_stats = ts;
        }
        for (name, s) in &self.project {
            let pi = project_index(name);
            let Some(p) = host.projects.iter_mut().find(|p| p.project == pi) else {
                continue;
            };
            if let Some(rec) = s.rec {
                p.rec = rec;
                p.rec_time = joined;
            }
            if let Some(x) = s.exp_avg_cpu {
                p.exp_avg_cpu = x;
                p.exp_avg_mod_time = joined;
            }
            if let Some(t) = s.min_rpc_time {
                p.min_rpc_time = t.get() as f64;
            }
            if let Some(n) = s.nrpc_failures {
                p.nrpc_failures = n;
            }
            if let Some(t) = s.cpu_backoff_time {
                p.backoff_time[CPU] = t.get() as f64;
            }
            if let Some(t) = s.cpu_backoff_interval {
                p.backoff_interval[CPU] = t.get() as f64;
            }
        }
    }
}

impl StartJob {
    /// Puts `job`, which project `pi` sent at `now`, in `host`'s queue with this
    /// job's progress: computed up to its last checkpoint and out of memory (the
    /// client was not running), so it resumes from there (spec client §3.4).
    pub fn enqueue(&self, host: &mut ClientHost, pi: usize, job: &Job, now: i64, policy: Policy) {
        host.receive(pi, job, now, policy);
        let Some(j) = host.jobs.last_mut() else {
            return;
        };
        let f = self.fraction_done;
        if f > 0.0 {
            j.flops_left = j.true_fpops * (1.0 - f);
            j.checkpoint_flops_left = j.flops_left;
            j.cpu_time = j.true_fpops * f / host.p_fpops;
            j.checkpoint_cpu_time = j.cpu_time;
            j.peak_flop_count = j.true_fpops * f;
            j.state = TaskState::Quit;
        }
    }
}
