//! Batches (spec backend §1.5): the submission of a batch of workunits into the
//! BATCH table a job submitter fills (the table itself is `db::Batches`).
//!
//! A scientist submits N jobs at once and waits for the last one, so a batch's
//! completion time, its tail, is what `delay_bound` trades against. BOINC's job
//! submission (`html/inc/submit_util.inc`, `create_batch` then `create_work` per
//! job) inserts a BATCH row in state IN_PROGRESS and one workunit per job with
//! `workunit.batch` set to it. `get_batch_params` then counts the batch's workunits
//! that have a canonical result or an error bit: `fraction_done` is their share,
//! and the batch becomes COMPLETE, with `completion_time = now`, when every
//! workunit is one or the other. BOINC computes this when a web page asks; the
//! simulator keeps it up to date at the moment the transitioner marks a workunit
//! ready to assimilate (the same condition, [`Batches::workunit_done`]), so the
//! fields are exact at every instant (docs/fidelity.md §3.10).

use super::Project;
pub use super::db::{BatchRow, Batches};
use super::db::{WorkunitRow, WuLimits};
use super::types::*;
use crate::base::dist::Dist;
use crate::engine::Time;
use crate::engine::rng::{SimRng, stream};
use crate::streams::StreamKind;
use std::sync::Arc;

/// What one submission asks for: `jobs` workunits of app `app_id`, each of
/// `size` times the template's `rsc_fpops_est` (and bound), with `priority`
/// (the template's when `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSpec {
    pub app_id: AppId,
    pub jobs: u32,
    pub size: Dist,
    pub priority: Option<i32>,
    pub name: Option<String>,
}

/// The random stream of batch `id` of project `index`: its own, so that adding a
/// batch moves no draw of another batch or of the work generator.
fn batch_stream(seed: u64, index: usize, id: u32) -> SimRng {
    stream(
        seed,
        StreamKind::BatchJobs,
        index as u64 | (u64::from(id) << 32),
    )
}

/// Submits a batch at `now` (spec backend §1.5): a BATCH row in state IN_PROGRESS,
/// then one workunit per job with `batch` set, from the app's template. Each job's
/// size factor, then its true size (`true_size`), come from the batch's stream.
/// Returns the batch id. A batch of 0 jobs is COMPLETE at once.
pub fn submit(p: &mut Project, spec: &BatchSpec, now: Time) -> u32 {
    let id = p.db.batches.rows.len() as u32 + 1;
    let mut rng = batch_stream(p.seed, p.index, id);
    let app = p.app_mut(spec.app_id);
    let template = app.cfg.workunit.clone();
    let limits = WuLimits::shared(&mut app.generator.limits, &template);
    let priority = spec.priority.unwrap_or(template.priority);
    let name: Arc<str> = match &spec.name {
        Some(n) => n.as_str().into(),
        None => format!("batch{id}").into(),
    };
    let mut first_wu = WuId(0);
    for k in 0..spec.jobs {
        let mut wu = WorkunitRow::from_template_with(&template, limits.clone(), now);
        wu.appid = spec.app_id;
        wu.batch = id;
        wu.priority = priority;
        let factor = spec.size.sample(&mut rng);
        wu.rsc_fpops_est *= factor;
        wu.rsc_fpops_bound *= factor;
        wu.true_fpops = wu.rsc_fpops_est * template.true_size.sample(&mut rng);
        p.app_mut(spec.app_id).generator.created += 1;
        let wuid = p.db.insert_workunit(Actor::WorkGenerator, wu);
        if k == 0 {
            first_wu = wuid;
        }
    }
    let empty = spec.jobs == 0;
    p.db.batches.rows.push(BatchRow {
        id,
        app_id: spec.app_id,
        name,
        create_time: now,
        njobs: spec.jobs,
        njobs_success: 0,
        nerror_jobs: 0,
        fraction_done: if empty { 1.0 } else { 0.0 },
        state: if empty {
            BatchState::Complete
        } else {
            BatchState::InProgress
        },
        completion_time: if empty { now } else { 0 },
        priority,
        first_wu,
        initial_results: template.target_nresults.max(0) as u32,
    });
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ProjectConfig;

    fn project() -> Project {
        Project::new(0, "p", ProjectConfig::default(), 7, false)
    }

    fn spec(jobs: u32) -> BatchSpec {
        BatchSpec {
            app_id: 1,
            jobs,
            size: Dist::fixed(2.0),
            priority: Some(5),
            name: None,
        }
    }

    #[test]
    fn a_submission_makes_a_row_and_its_workunits() {
        let mut p = project();
        let est = p.app(1).cfg.workunit.rsc_fpops_est;
        assert_eq!(submit(&mut p, &spec(3), 100), 1);
        assert_eq!(submit(&mut p, &spec(2), 200), 2);
        let b = &p.db.batches.rows[1];
        assert_eq!(
            (
                b.id,
                &*b.name,
                b.create_time,
                b.njobs,
                b.state.code(),
                b.priority
            ),
            (2, "batch2", 200, 2, 1, 5)
        );
        assert_eq!(b.first_wu, WuId(4));
        assert!(b.holds(WuId(5)) && !b.holds(WuId(3)) && !b.holds(WuId(6)));
        let wu = p.db.wu(WuId(4));
        assert_eq!((wu.batch, wu.priority, wu.create_time), (2, 5, 200));
        assert_eq!(wu.rsc_fpops_est, 2.0 * est);
        assert_eq!(p.app(1).generator.created, 5);
    }

    #[test]
    fn fraction_done_and_completion_follow_get_batch_params() {
        let mut p = project();
        submit(&mut p, &spec(2), 0);
        p.db.batches.workunit_done(1, true, 50);
        let b = &p.db.batches.rows[0];
        assert_eq!(
            (b.njobs_success, b.fraction_done, b.state),
            (1, 0.5, BatchState::InProgress)
        );
        p.db.batches.workunit_done(1, false, 80);
        let b = &p.db.batches.rows[0];
        assert_eq!(
            (
                b.nerror_jobs,
                b.fraction_done,
                b.state.code(),
                b.completion_time
            ),
            (1, 1.0, 2, 80)
        );
    }

    #[test]
    fn each_batch_draws_from_its_own_stream() {
        let mut spec = spec(4);
        spec.size = Dist {
            kind: crate::base::dist::Kind::Uniform {
                min: crate::base::dist::Num(1.0),
                max: crate::base::dist::Num(3.0),
            },
            min: None,
            max: None,
        };
        let mut a = project();
        submit(&mut a, &spec, 0);
        let second = a.db.wu(WuId(5 - 4)).rsc_fpops_est;
        let mut b = project();
        submit(&mut b, &spec, 0);
        assert_eq!(b.db.wu(WuId(1)).rsc_fpops_est, second);
        // A second batch's sizes do not depend on how many the first had.
        submit(&mut a, &spec, 10);
        let mut c = project();
        submit(
            &mut c,
            &BatchSpec {
                jobs: 1,
                ..spec.clone()
            },
            0,
        );
        submit(&mut c, &spec, 10);
        assert_eq!(
            c.db.wu(WuId(2)).rsc_fpops_est,
            a.db.wu(WuId(5)).rsc_fpops_est
        );
    }
}
