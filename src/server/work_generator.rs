//! Work generator (`create_work` in `tools/backend_lib.cpp`, and the loop of
//! `sample_work_generator.cpp`; spec backend §2.1).
//!
//! It only inserts WORKUNIT rows with `transition_time = now`: it creates **no**
//! results. The transitioner creates every instance, the first `target_nresults`
//! included (spec backend §2.1 step 3, §5 row 1).

use super::Project;
use super::batch::{self, BatchSpec};
use super::config::WorkGenMode;
use super::db::{WorkunitRow, WuLimits};
use super::types::*;
use crate::engine::Time;
use crate::engine::rng::{SimRng, stream};
use crate::streams::StreamKind;

/// Progress of the generator across passes.
#[derive(Clone, Debug)]
pub struct State {
    /// Workunits created so far.
    pub created: u64,
    /// First id of the last batch created in `cushion` mode, to wait until the
    /// transitioner has handled it (the sample generator's 5 s polling).
    pub last_batch: Option<(WuId, WuId)>,
    /// Every workunit of `last_batch` below this id is no longer pending (has
    /// results, an error, or is gone), which never reverts: the cushion rule's
    /// "last batch pending" test resumes here instead of rescanning the batch.
    pub pending_from: WuId,
    /// Batches submitted in `batches` mode (spec backend §1.5).
    pub batches: u64,
    /// The app's work-generator stream: the true sizes of its workunits. A stream
    /// of its own, so that drawing sizes moves no other random draw, and adding an
    /// app moves no other app's sizes.
    pub rng: SimRng,
    /// The limits its workunits share ([`WuLimits::shared`]): one copy per app,
    /// not one per workunit.
    pub limits: std::sync::Arc<WuLimits>,
}

impl State {
    /// The generator of app `app` of project `index` under the master `seed`,
    /// nothing created. The first app's stream id is the project index (the one
    /// stream of a project before projects had several apps); app `k` adds
    /// `(k − 1) << 32`.
    pub fn new(seed: u64, index: usize, app: AppId) -> Self {
        let id = index as u64 | (u64::from(app.saturating_sub(1)) << 32);
        Self {
            created: 0,
            last_batch: None,
            pending_from: WuId(0),
            batches: 0,
            rng: stream(seed, StreamKind::WorkGenerator, id),
            limits: std::sync::Arc::new(WuLimits::of(&Default::default())),
        }
    }
}

/// Creates one workunit of app `appid` from its template (spec backend §2.1 steps
/// 1–3). Its true size is `rsc_fpops_est` times a draw of the template's
/// `true_size`: the workunit's real work, which only the simulated client's
/// execution sees. A fixed factor draws no random number.
pub fn create_work(p: &mut Project, appid: AppId, now: Time, actor: Actor) -> WuId {
    let app = p.app_mut(appid);
    let limits = WuLimits::shared(&mut app.generator.limits, &app.cfg.workunit);
    let mut wu = WorkunitRow::from_template_with(&app.cfg.workunit, limits, now);
    wu.appid = appid;
    let factor = app.cfg.workunit.true_size.sample(&mut app.generator.rng);
    wu.true_fpops = wu.rsc_fpops_est * factor;
    app.generator.created += 1;
    p.db.insert_workunit(actor, wu)
}

/// One pass of every app's work generator, in app order, each in its configured
/// mode. Returns the number of workunits created.
pub fn pass(p: &mut Project, now: Time) -> u64 {
    (1..=p.apps.len() as AppId)
        .map(|appid| pass_app(p, appid, now))
        .sum()
}

/// One pass of app `appid`'s work generator.
fn pass_app(p: &mut Project, appid: AppId, now: Time) -> u64 {
    let app = p.app(appid);
    let cfg = &app.cfg.work_generator;
    if now < cfg.start {
        return 0;
    }
    let cap = if cfg.max_workunits == 0 {
        u64::MAX
    } else {
        cfg.max_workunits
    };
    let created = app.generator.created;
    let room = cap.saturating_sub(created);
    let want: u64 = match cfg.mode {
        WorkGenMode::None => 0,
        WorkGenMode::Batch => {
            if created == 0 {
                cfg.count as u64
            } else {
                0
            }
        }
        WorkGenMode::Rate => {
            let interval = cfg.interval.max(1);
            let due = ((now - cfg.start) / interval + 1) as u64;
            due.saturating_sub(created)
        }
        WorkGenMode::Cushion => {
            let (cushion, count) = (cfg.cushion as u64, cfg.count as u64);
            cushion_want(p, appid, cushion, count)
        }
        WorkGenMode::Batches => return submit_due_batches(p, appid, now, room),
    };
    let n = want.min(room);
    let mut first = None;
    let mut last = WuId(0);
    for _ in 0..n {
        let id = create_work(p, appid, now, Actor::WorkGenerator);
        first.get_or_insert(id);
        last = id;
    }
    if let Some(f) = first {
        let g = &mut p.app_mut(appid).generator;
        g.last_batch = Some((f, last));
        g.pending_from = f;
    }
    n
}

/// The earliest time at which a pass of `appid`'s generator could create work,
/// given the database as it is (`None`: not before something else changes it). May
/// be early, never late: the world lets the generator sleep until then (spec
/// backend §2.1; docs/performance.md "Idle daemons").
fn next_work_app(p: &mut Project, appid: AppId, now: Time) -> Option<Time> {
    let app = p.app(appid);
    let cfg = &app.cfg.work_generator;
    let cap = if cfg.max_workunits == 0 {
        u64::MAX
    } else {
        cfg.max_workunits
    };
    let created = app.generator.created;
    if created >= cap {
        return None;
    }
    let start = cfg.start;
    let interval = cfg.interval.max(1);
    match cfg.mode {
        WorkGenMode::None => None,
        WorkGenMode::Batch => (created == 0 && cfg.count > 0).then_some(start),
        // Due once `(t − start) / interval + 1 > created`.
        WorkGenMode::Rate => Some(start.saturating_add((created as Time).saturating_mul(interval))),
        WorkGenMode::Batches => {
            let b = app.generator.batches as Time;
            Some(start.saturating_add(b.saturating_mul(interval)))
        }
        WorkGenMode::Cushion => {
            let (cushion, count) = (cfg.cushion as u64, cfg.count as u64);
            (cushion_want(p, appid, cushion, count) > 0).then_some(start.max(now))
        }
    }
}

/// The earliest time at which a pass of the project's work generator could create
/// work (see [`next_work_app`]).
pub fn next_work(p: &mut Project, now: Time) -> Option<Time> {
    (1..=p.apps.len() as AppId)
        .filter_map(|appid| next_work_app(p, appid, now))
        .min()
}

/// `batches` mode: submits every batch due by `now` (one per `interval` from
/// `start`) that is not submitted yet, each of `count` jobs but no more than
/// `room` in all (`max_workunits`). Returns the workunits created.
fn submit_due_batches(p: &mut Project, appid: AppId, now: Time, mut room: u64) -> u64 {
    let cfg = &p.app(appid).cfg.work_generator;
    let due = ((now - cfg.start) / cfg.interval.max(1) + 1) as u64;
    let spec = BatchSpec {
        app_id: appid,
        jobs: cfg.count,
        size: cfg.size,
        priority: None,
        name: None,
    };
    let mut created = 0;
    while p.app(appid).generator.batches < due && room > 0 {
        let jobs = u64::from(spec.jobs).min(room);
        let spec = BatchSpec {
            jobs: jobs as u32,
            ..spec.clone()
        };
        batch::submit(p, &spec, now);
        p.app_mut(appid).generator.batches += 1;
        room -= jobs;
        created += jobs;
    }
    created
}

/// The sample generator's rule: if more than `cushion` results of its app are
/// UNSENT (`count_unsent_results(n, app.id)`), do nothing; else create
/// `(cushion − n) / replication` workunits — but only once the transitioner has
/// created the previous batch's results.
fn cushion_want(p: &mut Project, appid: AppId, cushion: u64, per_pass: u64) -> u64 {
    if last_batch_pending(p, appid) {
        return 0;
    }
    let app = p.app(appid);
    let n = p.db.unsent_of_app(appid);
    if n > cushion {
        return 0;
    }
    let replication = app.cfg.workunit.target_nresults.max(1) as u64;
    let want = (cushion - n) / replication;
    if per_pass > 0 {
        want.min(per_pass)
    } else {
        want
    }
}

/// Whether a workunit of `appid`'s last batch is still pending: it exists, has no
/// result yet and no error. A workunit that stops being pending never is again
/// (results are only added, error bits never cleared, ids never reused), so the
/// test resumes where it last stopped (`State::pending_from`): amortised O(1) per
/// pass instead of a walk of the whole batch.
fn last_batch_pending(p: &mut Project, appid: AppId) -> bool {
    let Some((_, last)) = p.app(appid).generator.last_batch else {
        return false;
    };
    let mut id = p.app(appid).generator.pending_from.0;
    while id <= last.0 && !is_pending(p, WuId(id)) {
        id += 1;
    }
    p.app_mut(appid).generator.pending_from = WuId(id);
    id <= last.0
}

fn is_pending(p: &Project, id: WuId) -> bool {
    p.db.workunits
        .get(id)
        .is_some_and(|w| w.results.is_empty() && w.error_mask == 0)
}

/// Cancels a workunit (`cancel_jobs`, spec backend §2.1): every result with
/// `server_state ≤ UNSENT` becomes OVER/DIDNT_NEED, `error_mask |= 16`,
/// `transition_time = now`.
pub fn cancel(p: &mut Project, now: Time, wuid: WuId) {
    let Some(wu) = p.db.workunits.get(wuid) else {
        return;
    };
    let results = wu.results.clone();
    let mask = wu.error_mask | error_mask::CANCELLED;
    for rid in results {
        if p.db.result(rid).server_state <= ServerState::Unsent {
            p.db.set_over(Actor::Cancel, rid, Outcome::DidntNeed);
        }
    }
    p.db.set_error_mask(Actor::Cancel, wuid, mask);
    p.db.set_transition_time(Actor::Cancel, wuid, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ProjectConfig;
    use rand::{RngExt, SeedableRng};

    /// The cursor's answer equals a scan of the whole last batch, while its
    /// workunits get results, errors or are purged in random order.
    #[test]
    fn the_pending_cursor_agrees_with_a_scan_of_the_batch() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        for _ in 0..30 {
            let mut p = Project::new(0, "p", ProjectConfig::default(), 7, false);
            let n = rng.random_range(1..40u32);
            let ids: Vec<WuId> = (0..n)
                .map(|_| create_work(&mut p, 1, 0, Actor::WorkGenerator))
                .collect();
            let g = &mut p.app_mut(1).generator;
            g.last_batch = Some((ids[0], *ids.last().unwrap()));
            g.pending_from = ids[0];
            loop {
                let scan = ids.iter().any(|&id| is_pending(&p, id));
                assert_eq!(last_batch_pending(&mut p, 1), scan);
                if !scan {
                    break;
                }
                let id = ids[rng.random_range(0..ids.len())];
                if p.db.workunits.get(id).is_none() {
                    continue;
                }
                // A made-up result id, never purged with its workunit.
                match rng.random_range(0..3) {
                    0 => p.db.wu_mut(id).results.push(ResultId(1)),
                    1 => {
                        p.db.set_error_mask(Actor::Cancel, id, error_mask::CANCELLED)
                    }
                    _ if p.db.wu(id).results.is_empty() => {
                        p.db.purge_workunit(id, &mut Vec::new());
                    }
                    _ => {}
                }
            }
        }
    }
}
