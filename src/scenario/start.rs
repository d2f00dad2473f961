//! A simulated client's starting state (`[host_group.start]`): the values a
//! client state file would give it when it joins, so that a scripted scenario can set
//! up a situation exactly.
//!
//! Every key is optional; a key left out keeps what a newly attached client has (the
//! time statistics of the availability model, REC 0, no backoff, an empty queue).
//! Jobs already in the queue (`[[host_group.start.job]]`) are results the project's
//! server holds as sent to the host (`scheduler::sent_before_start`). The world gives
//! a joining host this state ([`crate::scenario::plan::StartPlan`]). Names and units are
//! those of the spec: time statistics (spec client §1.11, §3.5), per-project REC
//! (modern, §2.3), `exp_avg_cpu` (seed, from which the resource debt is computed,
//! §1.2–1.3), the project RPC backoff `min_rpc_time` / `nrpc_failures` (§1.9, §2.8)
//! and the CPU work-fetch backoff `cpu_backoff_time` / `cpu_backoff_interval` (§2.7).
//! Times (`min_rpc_time`, `cpu_backoff_time`) are absolute simulation times, like an
//! expectation's `at`.

use crate::base::units::Duration;
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
