//! Scheduler: one client RPC (spec backend §2.4), in modules named after the
//! BOINC `sched/` files they model: `handle_request` (the top
//! level, `process_request`), `sched_result` (reported results), `sched_resend`
//! (lost results), `sched_send` (choosing and sending jobs, with `sched_score`'s
//! ordering), `sched_check` (`wu_is_infeasible_fast`) and `sched_types` (the
//! request, the reply and the per-request state).
//!
//! This is the only door between hosts and a project: a host sends a [`Request`]
//! and gets a [`Reply`]. Host models (scripted hosts, or the client policies) never
//! touch the database directly, so they can be swapped without touching the server.

use super::types::Actor;
use crate::engine::time::SECONDS_PER_DAY;

mod handle_request;
mod sched_check;
mod sched_resend;
mod sched_result;
mod sched_send;
mod sched_types;

pub(crate) use handle_request::{copy_host_info, no_rsc_apps, process_request};
pub(crate) use sched_send::sent_before_start;
pub use sched_types::{HostInfo, Job, Message, Reply, ReportedJob, Request, WorkRequest};

const ACTOR: Actor = Actor::Scheduler;

/// `CONS_VALID_RELIABLE` and `CONS_VALID_UNREPLICATED` (spec backend §2.9).
pub(crate) const CONS_VALID_RELIABLE: i32 = 10;
pub(crate) const CONS_VALID_UNREPLICATED: i32 = 10;
/// Longest `request_delay` the scheduler asks for (`DELAY_MAX`, 2 days).
pub(crate) const DELAY_MAX: f64 = 2.0 * SECONDS_PER_DAY;
/// Retry delay given to a blacklisted host.
pub(crate) const BLACKLIST_DELAY: f64 = SECONDS_PER_DAY;
