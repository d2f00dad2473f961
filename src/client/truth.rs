//! Whether a host's output is right: the simulator's ground truth of each result.
//!
//! BOINC never knows whether an output is correct; it only compares outputs (spec
//! backend §2.5) and trusts the majority. The simulator decides the truth when a task
//! finishes, so that the outputs can count what replication buys: wrong results
//! accepted as canonical, correct results judged INVALID (`docs/outputs.md`,
//! `docs/fidelity.md`).
//!
//! A correct output is [`correct_output`]`(wuid)`. A wrong output either
//! *collides* (with the app's `wrong_output_collision_frac`): it takes the value that
//! every host of the same error class returns when it errs on that workunit, so two
//! such results agree and can form a quorum, as when an application's output space is
//! small or a class of hosts shares a faulty library, compiler or CPU; or it is
//! *unique*: a value no other result of the workunit can match. All values of one
//! workunit lie at least [`OutputModel::spacing`] apart, wider than the validator's
//! fuzzy tolerance, so the comparison can never mistake one kind for another.

use crate::base::dist::Dist;
use crate::engine::rng::{SimRng, stream};
use crate::server::ProjectConfig;
use crate::server::config::Comparison;
use crate::server::types::{ResultId, WuId};
use crate::streams::StreamKind;
use rand::RngExt;

/// The output a correct computation of a workunit produces. Any deterministic
/// function of the workunit works: the validator only compares outputs.
pub fn correct_output(wuid: WuId) -> f64 {
    wuid.0 as f64
}

/// How one project's application errs (one per project, indexed like the world's
/// projects).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputModel {
    /// Probability that a wrong output is the error class's shared wrong value
    /// (`[project.<name>.app] wrong_output_collision_frac`).
    pub collision_frac: f64,
    /// Distance between any two distinct outputs of a workunit: more than twice the
    /// fuzzy tolerance, so distinct outputs never match (1 when comparing bitwise).
    pub spacing: f64,
}

impl Default for OutputModel {
    fn default() -> Self {
        Self {
            collision_frac: 0.0,
            spacing: 1.0,
        }
    }
}

impl OutputModel {
    /// The model of an app with this collision fraction, validated with this
    /// absolute tolerance (0 for the bitwise comparison).
    pub fn new(collision_frac: f64, tolerance: f64) -> Self {
        Self {
            collision_frac,
            spacing: 1.0 + 2.0 * tolerance.max(0.0),
        }
    }

    /// The wrong value every host of error class `class` returns when it collides on
    /// workunit `wuid`: above the correct output, one spacing per class.
    pub(crate) fn class_output(&self, wuid: WuId, class: u32) -> f64 {
        correct_output(wuid) + self.spacing * (1.0 + class as f64)
    }

    /// A wrong value that matches nothing: below the correct output, two spacings per
    /// result id, offset by `noise` ∈ [0, 1) of a spacing, so the unique values of two
    /// results differ by more than one spacing.
    pub(crate) fn unique_output(&self, wuid: WuId, result_id: ResultId, noise: f64) -> f64 {
        correct_output(wuid) - self.spacing * (2.0 * result_id.0 as f64 + 1.0 + noise)
    }
}

/// A host's own error behaviour, drawn once per host from its group's distributions
/// (stream [`crate::streams::StreamKind::HostTruth`]).
#[derive(Clone, Debug)]
pub struct HostTruth {
    /// Probability that a job ends in a client error.
    pub error_prob: f64,
    /// Probability that a successful job returns a wrong output.
    pub wrong_result_prob: f64,
    /// Index of the host's error class (`[[host_group]] error_class`).
    pub error_class: u32,
    /// The host's truth stream: collision draws. Kept apart from the host's main
    /// stream so that adding collisions changes no other draw.
    pub rng: SimRng,
    /// The host's own preferences and background stream, when it has either
    /// ([`ClientHost::extra`](super::host::ClientHost::extra)). Not truth: it sits
    /// here because the fields above leave 12 bytes of this 16-aligned struct unused,
    /// so a pointer costs the host nothing (a field of the host itself would grow
    /// it by 16 bytes).
    pub(crate) extra: Option<Box<super::background::HostExtra>>,
}

impl HostTruth {
    /// A host that never errs.
    pub(crate) fn reliable(rng: SimRng) -> Self {
        Self {
            error_prob: 0.0,
            wrong_result_prob: 0.0,
            error_class: 0,
            rng,
            extra: None,
        }
    }

    /// The wrong output this host returns for result `result_id` of workunit `wuid`
    /// (`noise` is the draw that makes a unique value unique). Draws from the truth
    /// stream only when the app's outputs can collide.
    pub(crate) fn wrong_output(
        &mut self,
        model: &OutputModel,
        wuid: WuId,
        result_id: ResultId,
        noise: f64,
    ) -> f64 {
        if model.collision_frac > 0.0 && self.rng.random::<f64>() < model.collision_frac {
            model.class_output(wuid, self.error_class)
        } else {
            model.unique_output(wuid, result_id, noise)
        }
    }
}

/// Each project's [`OutputModel`] of each app (index `appid − 1`), in world (name)
/// order: the app's collision fraction and its validator's tolerance.
pub(crate) fn output_models<'a>(
    projects: impl Iterator<Item = &'a ProjectConfig>,
) -> Vec<Vec<OutputModel>> {
    projects
        .map(|p| {
            p.apps
                .iter()
                .map(|a| {
                    let tol = match a.validator.comparison {
                        Comparison::Bitwise => 0.0,
                        Comparison::Fuzzy => a.validator.tolerance,
                    };
                    OutputModel::new(a.wrong_output_collision_frac, tol)
                })
                .collect()
        })
        .collect()
}

/// The truth of host `index`, in error class `class`: its probabilities are drawn
/// first, error then wrong result, from its own truth stream (a plain number draws
/// nothing), so a group's other draws never change.
pub(crate) fn host_truth(
    seed: u64,
    index: u32,
    error_prob: &Dist,
    wrong_result_prob: &Dist,
    class: u32,
) -> HostTruth {
    let mut rng = stream(seed, StreamKind::HostTruth, index as u64);
    let error_prob = error_prob.sample(&mut rng).clamp(0.0, 1.0);
    let wrong_result_prob = wrong_result_prob.sample(&mut rng).clamp(0.0, 1.0);
    HostTruth {
        error_prob,
        wrong_result_prob,
        error_class: class,
        rng,
        extra: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::validator::outputs_match;

    #[test]
    fn distinct_outputs_never_match_under_the_tolerance() {
        let tol = 0.75;
        let m = OutputModel::new(0.0, tol);
        let wu = WuId(41);
        let mut outs = vec![
            correct_output(WuId(wu.0)),
            m.class_output(WuId(wu.0), 0),
            m.class_output(WuId(wu.0), 3),
        ];
        for (rid, noise) in [(1, 0.999), (2, 0.0), (3, 0.5), (1000, 0.25)] {
            outs.push(m.unique_output(wu, ResultId(rid), noise));
        }
        for (i, a) in outs.iter().enumerate() {
            for b in &outs[i + 1..] {
                assert!(!outputs_match(Comparison::Fuzzy, tol, *a, *b), "{a} ~ {b}");
                assert!(!outputs_match(Comparison::Bitwise, 0.0, *a, *b));
            }
        }
    }

    #[test]
    fn collision_fraction_decides_shared_values() {
        let m = OutputModel::new(1.0, 0.0);
        let mut a = HostTruth::reliable(stream(1, StreamKind::HostTruth, 0));
        let mut b = HostTruth::reliable(stream(1, StreamKind::HostTruth, 1));
        let (x, y) = (
            a.wrong_output(&m, WuId(7), ResultId(10), 0.3),
            b.wrong_output(&m, WuId(7), ResultId(11), 0.6),
        );
        assert_eq!(x, y);
        assert_eq!(x, 8.0);
        b.error_class = 2;
        assert_eq!(b.wrong_output(&m, WuId(7), ResultId(12), 0.6), 10.0);
        // Collision 0: unique values, and the truth stream is left untouched.
        let never = OutputModel::new(0.0, 0.0);
        let before = a.rng.clone();
        assert_eq!(
            a.wrong_output(&never, WuId(7), ResultId(10), 0.5),
            7.0 - 21.5
        );
        assert_eq!(a.rng, before);
    }
}
