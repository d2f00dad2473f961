//! When a project's daemons are down (`[[project.NAME.daemon_outage]]`): each
//! daemon's windows, resolved once when the world is built.
//!
//! BOINC's daemons are separate processes (spec backend §2.0); one that is stopped
//! or has crashed does nothing until it is restarted, and its work waits in the
//! database. A fixed outage is one window; a crash process is drawn here for the
//! whole run from a stream of its own ([`StreamKind::DaemonCrash`]), so it is the
//! same on every run and adding one moves no other draw. A database outage stops
//! every daemon, and the scheduler answers as when it cannot open the database
//! (`handle_request.cpp`: `project_is_down`, `request_delay = maintenance_delay`):
//! its windows join each daemon's and the scheduler's outages ([`Outage`] with
//! `database` set).
//!
//! What a down daemon does not do is the world's business (`world::link`,
//! `world::daemons`): it asks [`Downtime::down_until`] and [`Downtime::up_at`], a
//! binary search each.

use super::Project;
use super::config::{DaemonOutage, Outage, OutageKind, OutageSchedule, OutageTarget};
use crate::base::dist::{Dist, Kind, Num};
use crate::engine::Time;
use crate::engine::rng::{SimRng, stream};
use crate::streams::StreamKind;

/// A window `[start, end)` in which a daemon is down.
pub type Window = (Time, Time);

/// Every daemon's down windows of one project: sorted, disjoint and never touching
/// (two windows that meet are one), so the end of a window is a time the daemon is
/// up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Downtime {
    /// By daemon code ([`OutageTarget::DAEMONS`]), the database's windows included.
    daemons: [Vec<Window>; 7],
    /// The database's own windows, which are also the scheduler's.
    database: Vec<Window>,
}

impl Downtime {
    /// The windows of `outages` for a run ending at `end`: fixed ones as given,
    /// crash processes drawn from their streams under the master `seed` (`project`:
    /// the project's index). Each daemon's list takes the database's windows too.
    pub fn new(outages: &[DaemonOutage], seed: u64, project: usize, end: Time) -> Self {
        let mut by_target: [Vec<Window>; 8] = Default::default();
        let mut crashes = [0u64; 8];
        for o in outages {
            let k = o.target as usize;
            match &o.schedule {
                OutageSchedule::Window { start, end } => by_target[k].push((*start, *end)),
                OutageSchedule::Crashes { mtbf, repair } => {
                    let id = (project as u64) << 32 | crashes[k] << 8 | k as u64;
                    crashes[k] += 1;
                    let mut rng = stream(seed, StreamKind::DaemonCrash, id);
                    by_target[k].extend(crash_windows(&mut rng, *mtbf, repair, end));
                }
            }
        }
        let database = merge(by_target[OutageTarget::Database as usize].clone());
        let daemons = std::array::from_fn(|k| {
            let mut w = std::mem::take(&mut by_target[k]);
            w.extend_from_slice(&database);
            merge(w)
        });
        Downtime { daemons, database }
    }

    /// Whether no daemon is ever down.
    pub fn is_empty(&self) -> bool {
        self.database.is_empty() && self.daemons.iter().all(Vec::is_empty)
    }

    fn windows(&self, d: OutageTarget) -> &[Window] {
        match d {
            OutageTarget::Database => &self.database,
            _ => &self.daemons[d as usize],
        }
    }

    /// The end of the window in which `d` is down at `t`; `None`: it is up.
    pub fn down_until(&self, d: OutageTarget, t: Time) -> Option<Time> {
        let w = self.windows(d);
        let k = w.partition_point(|&(start, _)| start <= t);
        k.checked_sub(1).map(|k| w[k].1).filter(|&end| end > t)
    }

    /// The first time at or after `t` at which `d` is up.
    pub fn up_at(&self, d: OutageTarget, t: Time) -> Time {
        self.down_until(d, t).unwrap_or(t)
    }

    /// How many of the seven daemons are down at `t`.
    pub fn down_count(&self, t: Time) -> usize {
        (OutageTarget::DAEMONS.iter())
            .filter(|&&d| self.down_until(d, t).is_some())
            .count()
    }

    /// The database's windows as the scheduler's outages: a request then gets the
    /// reply of a scheduler that cannot open the database, `project_is_down` with
    /// `request_delay = maintenance_delay` (spec backend §2.9).
    pub fn scheduler_outages(&self, maintenance_delay: Time) -> impl Iterator<Item = Outage> + '_ {
        self.database.iter().map(move |&(start, end)| Outage {
            start,
            duration: end - start,
            kind: OutageKind::Down,
            maintenance_delay,
            database: true,
        })
    }
}

/// Draws the project's daemon outages for a run ending at `end`, and adds the
/// database's windows to its scheduler's outages, after the configured ones (an
/// unreachable server, configured, answers nothing even while the database is down).
pub fn install(p: &mut Project, end: Time) {
    let d = Downtime::new(&p.cfg.daemon_outage, p.seed, p.index, end);
    let delay = p.cfg.config.maintenance_delay;
    p.cfg.outage.extend(d.scheduler_outages(delay));
    p.downtime = d;
}

/// The windows of one crash process up to `end`: an up period exponential with mean
/// `mtbf`, then a repair drawn from `repair`, and again, from t = 0; both rounded
/// to whole seconds, a repair lasting at least 1 s. A failure at or after `end` is
/// not drawn.
pub fn crash_windows(rng: &mut SimRng, mtbf: Time, repair: &Dist, end: Time) -> Vec<Window> {
    let up = Dist {
        kind: Kind::Exponential {
            mean: Num(mtbf as f64),
        },
        min: None,
        max: None,
    };
    let mut out = Vec::new();
    let mut t: Time = 0;
    loop {
        t = t.saturating_add(seconds(up.sample(rng), 0));
        if t >= end {
            return out;
        }
        let fixed = t.saturating_add(seconds(repair.sample(rng), 1));
        out.push((t, fixed));
        t = fixed;
    }
}

/// A draw in seconds, rounded to a whole second, at least `min`.
fn seconds(x: f64, min: Time) -> Time {
    // `as` saturates: an infinite draw is the end of time.
    (x.round() as Time).max(min)
}

/// Sorts windows and joins those that overlap or meet.
fn merge(mut w: Vec<Window>) -> Vec<Window> {
    w.retain(|&(s, e)| e > s);
    w.sort_unstable();
    let mut out: Vec<Window> = Vec::with_capacity(w.len());
    for (s, e) in w {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(target: OutageTarget, start: Time, end: Time) -> DaemonOutage {
        DaemonOutage {
            target,
            schedule: OutageSchedule::Window { start, end },
        }
    }

    fn crashes(target: OutageTarget, mtbf: Time, repair: f64) -> DaemonOutage {
        DaemonOutage {
            target,
            schedule: OutageSchedule::Crashes {
                mtbf,
                repair: Dist::fixed(repair),
            },
        }
    }

    #[test]
    fn windows_resolve_per_daemon_and_the_database_stops_all() {
        use OutageTarget::*;
        let d = Downtime::new(
            &[
                window(Validator, 100, 200),
                window(Validator, 150, 250),
                window(Validator, 250, 300),
                window(Feeder, 500, 600),
                window(Database, 1000, 1100),
            ],
            1,
            0,
            10_000,
        );
        // Overlapping and touching windows are one: its end is up.
        assert_eq!(d.windows(Validator), [(100, 300), (1000, 1100)]);
        assert_eq!(d.down_until(Validator, 99), None);
        assert_eq!(d.down_until(Validator, 100), Some(300));
        assert_eq!(d.down_until(Validator, 299), Some(300));
        assert_eq!(d.down_until(Validator, 300), None);
        assert_eq!(d.up_at(Validator, 120), 300);
        assert_eq!(d.up_at(Validator, 300), 300);
        assert_eq!(d.up_at(Feeder, 550), 600);
        assert_eq!(d.up_at(Feeder, 150), 150);
        // The database stops every daemon.
        for t in OutageTarget::DAEMONS {
            assert_eq!(d.down_until(t, 1050), Some(1100), "{t:?}");
        }
        assert_eq!(d.down_count(1050), 7);
        assert_eq!(d.down_count(250), 1);
        assert_eq!(d.down_count(550), 1);
        assert_eq!(d.down_count(400), 0);
        let o: Vec<Outage> = d.scheduler_outages(600).collect();
        assert_eq!(o.len(), 1);
        assert!(o[0].covers(1000) && o[0].covers(1099) && !o[0].covers(1100));
        assert!(o[0].database && o[0].kind == OutageKind::Down);
        assert_eq!(o[0].maintenance_delay, 600);
        assert!(Downtime::new(&[], 1, 0, 100).is_empty());
        // An empty window is none.
        assert!(Downtime::new(&[window(Feeder, 5, 5)], 1, 0, 100).is_empty());
    }

    #[test]
    fn a_crash_process_alternates_exponential_up_times_and_repairs() {
        let mut rng = stream(7, StreamKind::DaemonCrash, 0);
        let end = 2000 * 86_400;
        let w = crash_windows(&mut rng, 86_400, &Dist::fixed(3600.0), end);
        // Windows in order, disjoint, each one repair long, none starting at the end.
        assert!(w.windows(2).all(|p| p[0].1 <= p[1].0));
        assert!(w.iter().all(|&(s, e)| e - s == 3600 && s < end && s > 0));
        // Up periods average the MTBF (2000 of them: within 10 %).
        let mut last = 0;
        let mut up = 0;
        for &(s, e) in &w {
            up += s - last;
            last = e;
        }
        let mean = up as f64 / w.len() as f64;
        assert!((mean / 86_400.0 - 1.0).abs() < 0.1, "mean up {mean}");
        // The same stream draws the same windows.
        let mut again = stream(7, StreamKind::DaemonCrash, 0);
        assert_eq!(
            crash_windows(&mut again, 86_400, &Dist::fixed(3600.0), end),
            w
        );
        // Repairs are at least a second long.
        let mut rng = stream(7, StreamKind::DaemonCrash, 1);
        let w = crash_windows(&mut rng, 100, &Dist::fixed(0.2), 100_000);
        assert!(w.iter().all(|&(s, e)| e == s + 1));
    }

    /// Each crash process draws from its own stream: adding one to another daemon,
    /// or a second one to the same daemon, leaves the first's windows as they were;
    /// another project or seed draws others.
    #[test]
    fn crash_processes_have_streams_of_their_own() {
        use OutageTarget::*;
        let end = 100 * 86_400;
        let alone = Downtime::new(&[crashes(Validator, 86_400, 600.0)], 3, 2, end);
        let v = alone.windows(Validator).to_vec();
        assert!(v.len() > 50);
        let more = Downtime::new(
            &[
                crashes(Feeder, 86_400, 600.0),
                crashes(Validator, 86_400, 600.0),
            ],
            3,
            2,
            end,
        );
        assert_eq!(more.windows(Validator), v);
        assert_ne!(more.windows(Feeder), v);
        let second = Downtime::new(
            &[
                crashes(Validator, 86_400, 600.0),
                crashes(Validator, 7 * 86_400, 60.0),
            ],
            3,
            2,
            end,
        );
        assert!(v.iter().all(|w| {
            let (s, e) = *w;
            second.down_until(Validator, s).is_some_and(|x| x >= e)
        }));
        let other_project = Downtime::new(&[crashes(Validator, 86_400, 600.0)], 3, 1, end);
        assert_ne!(other_project.windows(Validator), v);
        let other_seed = Downtime::new(&[crashes(Validator, 86_400, 600.0)], 4, 2, end);
        assert_ne!(other_seed.windows(Validator), v);
    }
}
