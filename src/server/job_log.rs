//! What the validator tells of each result it decides: one row of the job log
//! (`docs/credit.md`) and of the credit figures (`credit_versions.csv`).
//!
//! A result is decided when the validator moves it from INIT or INCONCLUSIVE to
//! VALID or INVALID (spec backend §2.5). Each result is decided at most once, so the
//! log has one row per result; the row holds what `boinc-sim credit` needs to replay
//! the decision at the same moment, and the credit_new state right after it.

use super::Project;
use super::db::ResultRow;
use super::types::{Outcome, ResultId, ValidateState, WuId};
use crate::engine::Time;

/// One decided result, with its workunit's and app version's credit fields.
#[derive(Clone, Debug, PartialEq)]
pub struct DecidedResult {
    pub result_id: ResultId,
    pub workunit_id: WuId,
    pub app_id: u32,
    pub app_version_id: u32,
    /// Whether the app version runs on a GPU.
    pub is_gpu: bool,
    pub host_id: u32,
    /// The host's group in the scenario (`None`: a named host, or a replayed log).
    pub host_group: Option<u32>,
    pub elapsed_time: f64,
    pub cpu_time: f64,
    pub flops_estimate: f64,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    /// The job's true size (simulator truth; `rsc_fpops_est` when unknown).
    pub true_flops: f64,
    pub min_quorum: i32,
    pub sent_time: Time,
    pub received_time: Time,
    /// When the validator decided it.
    pub validate_time: Time,
    /// SUCCESS, or VALIDATE_ERROR when its output could not be read.
    pub outcome: Outcome,
    pub validate_state: ValidateState,
    /// The output value (results with equal values agree).
    pub output: f64,
    pub runtime_outlier: bool,
    pub claimed_credit: f64,
    pub granted_credit: f64,
    /// The version's `pfc_scale` and `pfc` average, and its app's `min_avg_pfc`,
    /// right after the decision.
    pub pfc_scale: f64,
    pub av_pfc_avg: f64,
    pub min_avg_pfc: f64,
}

impl DecidedResult {
    /// The row of result `r`, decided at `now`.
    pub fn new(p: &Project, r: &ResultRow, now: Time) -> Self {
        let wu = p.db.wu(r.workunitid);
        let app_id = wu.appid;
        let v = p.credit.version(r.app_version_id);
        Self {
            result_id: r.id,
            workunit_id: r.workunitid,
            app_id,
            app_version_id: r.app_version_id,
            is_gpu: v.is_some_and(|v| v.is_gpu),
            host_id: r.hostid.0,
            host_group: p.db.hosts.get(r.hostid).and_then(|h| h.host_group()),
            elapsed_time: r.elapsed_time,
            cpu_time: r.cpu_time,
            flops_estimate: r.flops_estimate,
            rsc_fpops_est: wu.rsc_fpops_est,
            rsc_fpops_bound: wu.rsc_fpops_bound,
            true_flops: wu.true_fpops,
            min_quorum: wu.min_quorum,
            sent_time: r.sent_time.into(),
            received_time: r.received_time.into(),
            validate_time: now,
            outcome: r.outcome,
            validate_state: r.validate_state,
            output: r.output,
            runtime_outlier: r.runtime_outlier,
            claimed_credit: r.claimed_credit,
            granted_credit: r.granted_credit,
            pfc_scale: v.map_or(0.0, |v| v.pfc_scale),
            av_pfc_avg: v.map_or(0.0, |v| v.pfc.avg),
            min_avg_pfc: p.credit.min_avg_pfc(app_id),
        }
    }

    /// Whether a change of `validate_state` from `before` to `after` decides the
    /// result (INIT or INCONCLUSIVE to VALID or INVALID).
    pub fn decides(before: ValidateState, after: ValidateState) -> bool {
        matches!(before, ValidateState::Init | ValidateState::Inconclusive)
            && matches!(after, ValidateState::Valid | ValidateState::Invalid)
    }
}
