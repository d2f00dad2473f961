//! The minimal host model for unscripted runs: ask for one job when idle, compute it
//! at the host's speed, report it together with the next request.
//!
//! Each host draws from its own random stream (`StreamKind::Host`, its global index),
//! so adding a host never changes another host's draws. State is a few dozen bytes.

use crate::engine::Time;
use crate::engine::rng::SimRng;
use crate::server::db::OutputStatus;
use crate::server::scheduler::{Job, ReportedJob};
use crate::server::types::*;
use rand::RngExt;

/// `ERR_RESULT_START`, the exit status of a modelled client error.
pub const CLIENT_ERROR_EXIT: i32 = -177;

/// Behaviour parameters shared by a host group.
#[derive(Clone, Debug)]
pub struct GroupParams {
    pub error_prob: f64,
    pub wrong_result_prob: f64,
    pub dropout_prob: f64,
    pub retry_delay: Time,
}

/// One unscripted host.
#[derive(Clone, Debug)]
pub struct MinimalHost {
    pub project: u16,
    pub group: u16,
    pub hostid: HostId,
    /// Per-CPU FLOPS; the job runs on one CPU.
    pub p_fpops: f64,
    pub rng: SimRng,
    /// The job being computed: result id and send time.
    pub job: Option<(ResultId, WuId, Time)>,
    /// The finished job to report at the next RPC.
    pub pending: Option<ReportedJob>,
    /// Gone for good (dropped out).
    pub gone: bool,
}

/// The output a correct computation of a workunit produces. Any deterministic
/// function of the workunit works: the validator only compares outputs.
pub fn correct_output(wuid: WuId) -> f64 {
    wuid as f64
}

impl MinimalHost {
    /// Takes the job of a reply. Returns the time it completes, or `None` if the host
    /// dropped out with the job (it will never report it).
    pub fn start_job(&mut self, now: Time, job: &Job, params: &GroupParams) -> Option<Time> {
        if self.rng.random::<f64>() < params.dropout_prob {
            self.gone = true;
            return None;
        }
        let secs = (job.rsc_fpops_est / self.p_fpops).ceil().max(1.0) as Time;
        self.job = Some((job.result_id, job.workunit_id, now));
        Some(now + secs)
    }

    /// Finishes the current job and prepares its report.
    pub fn finish_job(&mut self, now: Time, params: &GroupParams) {
        let Some((rid, wuid, started)) = self.job.take() else {
            return;
        };
        let elapsed = (now - started) as f64;
        let u: f64 = self.rng.random();
        let (client_state, exit_status, output) = if u < params.error_prob {
            (client_state::COMPUTE_ERROR, CLIENT_ERROR_EXIT, 0.0)
        } else if self.rng.random::<f64>() < params.wrong_result_prob {
            let noise: f64 = self.rng.random();
            (
                client_state::FILES_UPLOADED,
                0,
                correct_output(wuid) + 0.5 + noise,
            )
        } else {
            (client_state::FILES_UPLOADED, 0, correct_output(wuid))
        };
        self.pending = Some(ReportedJob {
            result_id: rid,
            client_state,
            exit_status,
            cpu_time: elapsed,
            elapsed_time: elapsed,
            output,
            output_status: OutputStatus::Ok,
        });
    }
}
