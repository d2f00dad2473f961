//! `[[expect]]`: the expected state of one row (docs/scenario.md, "`[[expect]]`";
//! spec backend §4 worked examples, spec client §1–§8 for a client's state).
//!
//! The entry stays one flat table in TOML, so serde reads it into one flat struct.
//! Each key is listed once, in [`expect_table!`], with the kind of row it belongs
//! to ([`ExpectRow`]); the validator reads which key belongs to which row from that
//! list, and the world's verifier has one comparison per checked key
//! (`world::expect`), so adding a checkable key is one row here and one row there.

use crate::base::units::Duration;
use serde::{Deserialize, Serialize};

/// The kind of row an `[[expect]]` key is a field of, so that a key of another kind
/// of row is an error before the run (and the verifier never meets one). Ordered as
/// the validator reports misplaced keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExpectRow {
    /// Not a field: which row, when, and how floats compare (`exists` too, which
    /// every kind of row has).
    Entry,
    /// A result row (spec backend §1.1).
    Result,
    /// A workunit row (spec backend §1.1).
    Workunit,
    /// Both results and workunits have it (`file_delete_state`, spec backend §1.1).
    ResultOrWorkunit,
    /// A named host: its host row, host app version and last reply (spec backend
    /// §1.4, §2.4.1).
    Host,
    /// A simulated client's state: about one attached project (spec client §1.1),
    /// or about the whole host (spec client §1.11).
    Client,
    /// A batch row (spec backend §1.5).
    Batch,
    /// A project's web server in front of its scheduler (spec backend §2.4.0).
    WebServer,
}

impl ExpectRow {
    /// How a problem names the owner of a field (`None`: any entry may give it).
    pub fn owner(self) -> Option<&'static str> {
        match self {
            Self::Entry => None,
            Self::Result => Some("result"),
            Self::Workunit => Some("workunit"),
            Self::ResultOrWorkunit => Some("result and workunit"),
            Self::Host => Some("host"),
            Self::Client => Some("client"),
            Self::Batch => Some("batch"),
            Self::WebServer => Some("web_server"),
        }
    }

    /// Whether an entry naming a `kind` row (the key that names it: `result`,
    /// `workunit`, `host`, `client`, `batch` or `web_server`) may give this field.
    pub fn allows(self, kind: &str) -> bool {
        match self {
            Self::ResultOrWorkunit => kind == "result" || kind == "workunit",
            _ => self.owner().is_none_or(|o| o == kind),
        }
    }
}

/// Writes the struct and the list of its keys from one list of fields, each
/// `name: type => ExpectRow`, in the order of the echoed configuration.
macro_rules! expect_table {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* $field:ident : $ty:ty => $row:ident, )*
        }
    ) => {
        $(#[$m])*
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
            /// Where the entry is written (`file:line:column`), set by the loader so
            /// that a failed expectation points at its source like a scenario error
            /// does.
            #[serde(skip)]
            pub source: SourcePos,
        }

        impl $name {
            /// Every key, with the kind of row it belongs to.
            pub const FIELDS: &'static [(&'static str, ExpectRow)] =
                &[$( (stringify!($field), ExpectRow::$row) ),*];

            /// The keys this entry gives, in [`Self::FIELDS`] order.
            pub fn given(&self) -> impl Iterator<Item = (&'static str, ExpectRow)> {
                Self::FIELDS
                    .iter()
                    .copied()
                    .zip([$( self.$field.is_some() ),*])
                    .filter_map(|(f, given)| given.then_some(f))
            }
        }
    };
}

expect_table! {
    /// Expected state of one row at a time (checked after every event of that time),
    /// or at the end of the run when `at` is absent. Every field given must match
    /// exactly.
    #[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
    #[serde(default, deny_unknown_fields)]
    pub struct Expect {
        at: Option<Duration> => Entry,
        project: Option<String> => Entry,
        /// A workunit name, `wu<id>`.
        workunit: Option<String> => Entry,
        /// A result name, `wu<id>_<suffix>`.
        result: Option<String> => Entry,
        /// A named host (its host app version).
        host: Option<String> => Entry,
        /// Result shorthand `"server_state/outcome/validate_state/file_delete_state"`,
        /// as the spec writes result lines, e.g. `"5/1/1/2"`.
        state: Option<String> => Result,
        server_state: Option<i64> => Result,
        outcome: Option<i64> => Result,
        validate_state: Option<i64> => Result,
        file_delete_state: Option<i64> => ResultOrWorkunit,
        hostid: Option<String> => Result,
        sent_time: Option<i64> => Result,
        received_time: Option<i64> => Result,
        report_deadline: Option<i64> => Result,
        priority: Option<i64> => Result,
        granted_credit: Option<f64> => Result,
        need_validate: Option<i64> => Workunit,
        /// Result name of the canonical result, or `"none"`.
        canonical: Option<String> => Workunit,
        transition_time: Option<i64> => Workunit,
        error_mask: Option<i64> => Workunit,
        assimilate_state: Option<i64> => Workunit,
        target_nresults: Option<i64> => Workunit,
        min_quorum: Option<i64> => Workunit,
        hr_class: Option<i64> => Workunit,
        /// Number of results the workunit has.
        nresults: Option<i64> => Workunit,
        consecutive_valid: Option<i64> => Host,
        max_jobs_per_day: Option<i64> => Host,
        n_jobs_today: Option<i64> => Host,
        total_credit: Option<f64> => Host,
        /// Whether the row still exists (false after db_purge).
        exists: Option<bool> => Entry,
        // --- client state (with `client` and `project`) ---
        /// A simulated host: its group's name, optionally `#k` for the group's k-th
        /// host (default the first), e.g. `"volunteers#3"`.
        client: Option<String> => Entry,
        nrpc_failures: Option<i64> => Client,
        master_fetch_failures: Option<i64> => Client,
        master_url_fetch_pending: Option<bool> => Client,
        /// Seconds (0 = no backoff).
        min_rpc_time: Option<f64> => Client,
        /// Recent estimated credit (modern policy).
        rec: Option<f64> => Client,
        /// Exponentially averaged CPU seconds (seed policy).
        exp_avg_cpu: Option<f64> => Client,
        resource_debt: Option<f64> => Client,
        debt_order: Option<i64> => Client,
        /// CPU seconds the host computed for the project.
        cpu_time: Option<f64> => Client,
        /// Jobs of the project the client holds (not yet reported).
        jobs: Option<i64> => Client,
        /// Jobs received from the project so far.
        jobs_received: Option<i64> => Client,
        /// Scheduler RPCs that reached the project's server.
        rpcs: Option<i64> => Client,
        /// Resource (CPU) work-fetch backoff interval, seconds (modern policy).
        cpu_backoff_interval: Option<f64> => Client,
        /// Projects whose task runs now, comma-separated in CPU order, or `""` if
        /// idle.
        running: Option<String> => Client,
        // --- client values the policies compute (with `client`) ---
        /// Host time statistics at `at` (spec client §1.11, §3.5).
        on_frac: Option<f64> => Client,
        active_frac: Option<f64> => Client,
        connected_frac: Option<f64> => Client,
        /// Scheduling priority as the modern client last computed it (spec client
        /// §2.4).
        sched_priority: Option<f64> => Client,
        /// The work request of the project's last scheduler RPC: CPU seconds, CPU
        /// instances, and the `estimated_delay` sent with it (spec client §2.6).
        req_secs: Option<f64> => Client,
        req_instances: Option<f64> => Client,
        estimated_delay: Option<f64> => Client,
        /// The GPU work request of the same RPC: seconds and instances, summed over
        /// the GPU types (a host has one type in practice; modern, spec client §2.6).
        #[serde(skip_serializing_if = "Option::is_none")]
        gpu_req_secs: Option<f64> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        gpu_req_instances: Option<f64> => Client,
        /// When the CPU work-fetch backoff ends, seconds (modern, spec client §2.7).
        cpu_backoff_time: Option<f64> => Client,
        /// The project's idle run on the emulator's global `merit_step` grid at `at`:
        /// `idle_time` and `idle_time_sumsq` (spec client §5.4), from which monotony
        /// follows.
        idle_time: Option<f64> => Client,
        idle_time_sumsq: Option<f64> => Client,
        /// The project's CPU jobs the last RR simulation projected to miss their
        /// deadlines (`rsc_pwf.deadlines_missed`, modern, spec client §2.5 step 5).
        deadlines_missed: Option<i64> => Client,
        // --- file transfers of the project (with `client`; spec client §8); left
        // out of the echoed configuration when absent ---
        /// BOINC's `client_state` of each of the project's jobs the client holds, in
        /// arrival order, comma-separated (e.g. `"2,1,1"`; `""` for none; spec client
        /// §8.1).
        #[serde(skip_serializing_if = "Option::is_none")]
        client_states: Option<String> => Client,
        /// Transfers in progress, by direction.
        #[serde(skip_serializing_if = "Option::is_none")]
        xfers_down: Option<i64> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        xfers_up: Option<i64> => Client,
        /// The project's transient failures in a row, by direction
        /// (`FILE_XFER_BACKOFF::file_xfer_failures`, §8.3).
        #[serde(skip_serializing_if = "Option::is_none")]
        xfer_failures_down: Option<i64> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        xfer_failures_up: Option<i64> => Client,
        /// When the project's transfer backoff ends, by direction (0: none; §8.3).
        #[serde(skip_serializing_if = "Option::is_none")]
        xfer_backoff_down: Option<i64> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        xfer_backoff_up: Option<i64> => Client,
        /// The earliest retry time of the project's files waiting after a failure
        /// (`next_request_time`, §8.3; 0: none waits).
        #[serde(skip_serializing_if = "Option::is_none")]
        next_file_retry: Option<i64> => Client,
        /// The work-fetch and reporting gates (§8.4).
        #[serde(skip_serializing_if = "Option::is_none")]
        download_stalled: Option<bool> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        too_many_uploads: Option<bool> => Client,
        #[serde(skip_serializing_if = "Option::is_none")]
        actively_uploading: Option<bool> => Client,
        // --- a batch of the project (spec backend §1.5); left out of the echoed
        // configuration when absent ---
        /// A batch by its name (`batch<id>` unless its submission named it).
        #[serde(skip_serializing_if = "Option::is_none")]
        batch: Option<String> => Entry,
        /// `batch.state`: 0 INIT, 1 IN_PROGRESS, 2 COMPLETE, 3 ABORTED, 4 RETIRED.
        #[serde(skip_serializing_if = "Option::is_none")]
        batch_state: Option<i64> => Batch,
        #[serde(skip_serializing_if = "Option::is_none")]
        njobs: Option<i64> => Batch,
        #[serde(skip_serializing_if = "Option::is_none")]
        njobs_success: Option<i64> => Batch,
        #[serde(skip_serializing_if = "Option::is_none")]
        nerror_jobs: Option<i64> => Batch,
        #[serde(skip_serializing_if = "Option::is_none")]
        fraction_done: Option<f64> => Batch,
        /// 0 until the batch is complete.
        #[serde(skip_serializing_if = "Option::is_none")]
        completion_time: Option<i64> => Batch,
        /// Absolute tolerance of the client's float fields (default 1e-6).
        tolerance: Option<f64> => Entry,
        // --- server-side observables ---
        /// Handler calls the assimilator made for the workunit (a deferred workunit
        /// is offered, and counted, again).
        assimilate_count: Option<i64> => Workunit,
        /// With `host`: the reply to the host's last scheduler RPC.
        reply: Option<ReplyExpect> => Host,
        // --- a project's web server (spec backend §2.4.0); left out of the echoed
        // configuration when absent ---
        /// The project whose web server is checked (it must have
        /// `[project.NAME.server]`).
        #[serde(skip_serializing_if = "Option::is_none")]
        web_server: Option<String> => Entry,
        /// Connections waiting for a process, and RPCs in service, now.
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_waiting: Option<i64> => WebServer,
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_in_service: Option<i64> => WebServer,
        /// Since t = 0: services started, connections refused, clients that gave
        /// up, replies handed to a waiting client, services that found the host
        /// locked.
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_served: Option<i64> => WebServer,
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_refused: Option<i64> => WebServer,
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_timed_out: Option<i64> => WebServer,
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_replied: Option<i64> => WebServer,
        #[serde(skip_serializing_if = "Option::is_none")]
        rpcs_locked: Option<i64> => WebServer,
    }
}

/// What the reply to a named host's last scheduler RPC contained (spec backend
/// §2.4.1 step 12). Every list is compared in full and in order.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ReplyExpect {
    /// Result names of the jobs sent (new sends and resends), in reply order.
    pub jobs: Option<Vec<String>>,
    /// The deadline told to the client for each job of `jobs`, in the same order.
    pub deadlines: Option<Vec<i64>>,
    /// Result names acknowledged (`result_ack`).
    pub acks: Option<Vec<String>>,
    /// Result names to abort (`result_abort`).
    pub aborts: Option<Vec<String>>,
    /// Result names to abort if not started (`result_abort_if_not_started`).
    pub aborts_if_not_started: Option<Vec<String>>,
    /// Seconds (0 = none sent).
    pub request_delay: Option<f64>,
    /// User messages, in order, as the client shows them.
    pub messages: Option<Vec<String>>,
    /// `<project_is_down/>`.
    pub project_is_down: Option<bool>,
}

/// A `file:line:column` place in a scenario file, for messages only: two places
/// always compare equal, so that where an entry is written never changes what a
/// scenario means.
#[derive(Clone, Debug, Default)]
pub struct SourcePos(pub Option<String>);

impl PartialEq for SourcePos {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
