//! Idle daemons cost nothing (docs/performance.md "Idle daemons").
//!
//! Each daemon of each project runs at the ticks `0, period, 2·period, …` (spec
//! backend §2: a daemon loops, sleeping its period between passes). A pass that
//! finds nothing to do changes no state, so a daemon may skip the ticks at which it
//! could have no work, provided the run is exactly as if it had woken at every
//! tick. Here each daemon sleeps until the first tick of its own lattice at which it
//! could have work: after every step of a project (an RPC, a daemon pass) the world
//! asks each of its sleeping daemons the earliest time it could have work
//! ([`next_work`], early rather than late: a pass that finds nothing is what the
//! original did anyway) and schedules its pass at the first tick from then on that
//! comes after the current event in queue order.
//!
//! Exactness:
//! - a pass pops where its periodic re-push would have put it: at a tick, in its
//!   daemon's tie class, and among the passes of one daemon of several projects at
//!   one tick in the order of the re-pushes, which is by period (longest first: it
//!   was pushed earlier), then by project index. A woken pass is pushed with the
//!   explicit sequence number [`EXPLICIT_SEQ_BASE`] + that rank
//!   ([`EventQueue::push_seq`]). Only the first passes, at time 0, are pushed at build,
//!   in project order, as before;
//! - a pass scheduled later than a new, earlier wake is left in the queue and
//!   recognised as stale by its generation when it pops: it is no event;
//! - the counters count the skipped ticks as passes and events: at each pass the
//!   ticks skipped since the last, at the end those up to the end of the run (a pass
//!   at exactly the end ran: the end marker has the last tie class);
//! - time-driven state is handled exactly: the file deleter's hourly retry clock is
//!   fast-forwarded ([`crate::server::file_deleter::State::fast_forward`]), the
//!   feeder wakes for every update of the credit scales, the work generator for
//!   every due time of its mode, db_purge when a workunit becomes old enough, the
//!   transitioner when a `transition_time` falls due.
//!
//! Skipping is off (every pass runs, as before) when the scenario has scripted
//! events, which change a project's state and run daemon passes outside the lattice,
//! when a run with files puts a daemon before the scheduler in `tie_order` (a daemon
//! pass then delivers a finished transfer before the `Net` event of the same
//! second would), and under `RunOptions::every_daemon_pass`, which the tests use to
//! compare both.

use super::link::Backend;
use super::{Event, Recorder, World};
use crate::engine::Time;
use crate::engine::queue::EXPLICIT_SEQ_BASE;
use crate::scenario::Daemon;
use crate::scenario::plan::daemon_index;
use crate::server::{feeder, file_deleter, work_generator};

/// The daemons with periodic passes, in build order: all but the scheduler, which
/// answers RPCs instead.
fn periodic() -> impl Iterator<Item = Daemon> {
    Daemon::ALL.into_iter().filter(|&d| d != Daemon::Scheduler)
}

/// The longest a daemon sleeps without a pass: a wake further ahead is a pass at
/// this horizon, which finds nothing (exact, as every idle pass) and sleeps again.
/// A pass moved earlier by a new wake stays in the queue until its time, as a stale
/// entry; a transitioner woken by every RPC and going back to sleep until the next
/// deadline days ahead left one such entry per pass, which filled the queue's
/// buckets (docs/performance.md, "Measurements behind the code"). With the horizon
/// a stale entry lives an hour at most, and the horizon costs 24 passes a day per
/// daemon.
const MAX_SLEEP: Time = 3600;

/// One daemon of one project: its lattice and where it stands on it.
#[derive(Clone, Debug)]
pub(super) struct Clock {
    /// Seconds between ticks; 0: the daemon never runs.
    pub period: Time,
    pub class: u8,
    /// The explicit sequence number of its passes after time 0.
    pub seq: u64,
    /// Time of its pending pass; `Time::MAX`: asleep with nothing pending.
    pub at: Time,
    /// Generation of its pending pass: an older one is stale.
    pub generation: u32,
    /// The last tick accounted for (run or counted as skipped); `-period` before 0.
    pub last: Time,
}

/// The daemons' clocks of a run, `[project × 8 + daemon index]`.
#[derive(Debug, Default)]
pub(super) struct Clocks {
    pub on: bool,
    pub clocks: Vec<Clock>,
}

/// The first tick of the lattice of `period` at or after `t`, and after the current
/// event at `now`: at `now` only when the daemon's class comes after the current
/// event's (`later_class`).
pub(super) fn first_tick(t: Time, now: Time, later_class: bool, period: Time) -> Time {
    let lo = t.max(if later_class { now } else { now + 1 }).max(0);
    (lo + period - 1) / period * period
}

/// Ticks of the lattice of `period` in `(last, t)` (exclusive at both ends), with
/// `last` a tick or `-period`, and `t` a tick.
pub(super) fn ticks_between(last: Time, t: Time, period: Time) -> u64 {
    ((t - last) / period - 1).max(0) as u64
}

/// Ticks of the lattice of `period` in `(last, end]`.
pub(super) fn ticks_through(last: Time, end: Time, period: Time) -> u64 {
    if end < 0 {
        return 0;
    }
    (end.div_euclid(period) - last.div_euclid(period)).max(0) as u64
}

impl Clocks {
    pub fn get(&self, pi: usize, d: Daemon) -> &Clock {
        &self.clocks[pi * 8 + daemon_index(d)]
    }
    pub fn get_mut(&mut self, pi: usize, d: Daemon) -> &mut Clock {
        &mut self.clocks[pi * 8 + daemon_index(d)]
    }
}

/// The earliest time at which a pass of daemon `d` of project `pi` could have work
/// (`None`: not before a step changes the project). `own_pass`: the daemon has just
/// run (the transitioner then reads its index instead of what moved since).
fn next_work<R: Recorder>(
    b: &mut Backend<R>,
    pi: usize,
    d: Daemon,
    now: Time,
    period: Time,
    own_pass: bool,
) -> Option<Time> {
    let p = &mut b.projects[pi];
    match d {
        // Due when `transition_time < t` (strict, `Db::take_due_workunits`).
        Daemon::Transitioner => {
            let lowered = p.db.take_transition_lowered();
            let t = if own_pass {
                p.db.next_transition_time()
            } else {
                lowered
            };
            t.map(|t| t + 1)
        }
        Daemon::Validator => (!p.db.need_validate.is_empty()).then_some(now),
        Daemon::Assimilator => (!p.db.assimilate_ready.is_empty()).then_some(now),
        Daemon::FileDeleter => file_deleter::next_work(p, now, period),
        Daemon::DbPurge => p.db.next_purgeable(p.cfg.db_purge.min_age),
        Daemon::Feeder => feeder::next_work(p, now),
        Daemon::WorkGenerator => work_generator::next_work(p, now),
        Daemon::Scheduler => None,
    }
    .map(|t| {
        let t = t.clamp(now, now.saturating_add(MAX_SLEEP));
        // A down daemon could have work only once it is up again: it sleeps
        // through its outage (the horizon too, which no earlier wake can beat
        // while it is down, so it leaves no stale pass).
        super::outage_target(d).map_or(t, |o| p.downtime.up_at(o, t))
    })
}

impl<R: Recorder> World<R> {
    /// Sets up the daemons' clocks; their first passes, at time 0, are already in
    /// the queue (pushed at build, in project order).
    pub(super) fn init_clocks(&mut self, on: bool) {
        let n = self.backend.projects.len();
        let mut clocks = Vec::with_capacity(n * 8);
        for p in &self.backend.projects {
            for k in 0..8 {
                let d = crate::scenario::Daemon::ALL
                    .into_iter()
                    .find(|&d| daemon_index(d) == k)
                    .expect("eight daemons");
                let period = if d != Daemon::Scheduler {
                    super::configured_period(p, d)
                } else {
                    0
                };
                clocks.push(Clock {
                    period: period.max(0),
                    class: self.tie_class[k],
                    seq: 0,
                    at: if period > 0 { 0 } else { Time::MAX },
                    generation: 0,
                    last: -period.max(1),
                });
            }
        }
        // Rank of each project among those running daemon `k`: period descending,
        // then project index (the order of the re-pushes at one tick).
        for k in 0..8 {
            let mut order: Vec<usize> =
                (0..n).filter(|&pi| clocks[pi * 8 + k].period > 0).collect();
            order.sort_by_key(|&pi| (std::cmp::Reverse(clocks[pi * 8 + k].period), pi));
            for (rank, pi) in order.into_iter().enumerate() {
                clocks[pi * 8 + k].seq = EXPLICIT_SEQ_BASE + rank as u64;
            }
        }
        self.clocks = Clocks { on, clocks };
        self.backend.track_steps(on);
    }

    /// Whether a popped daemon pass is stale (a newer wake replaced it).
    pub(super) fn pass_is_stale(&self, ev: Event) -> bool {
        match ev {
            Event::DaemonPass {
                project,
                daemon,
                generation,
            } => {
                self.clocks.on && self.clocks.get(project as usize, daemon).generation != generation
            }
            _ => false,
        }
    }

    /// Before a pass of `d` of `pi` at `now`: counts the ticks skipped since its
    /// last pass, and brings the time-driven state the skipped passes would have
    /// changed up to date.
    pub(super) fn before_pass(&mut self, now: Time, pi: usize, d: Daemon) {
        if !self.clocks.on {
            return;
        }
        let c = self.clocks.get_mut(pi, d);
        let skipped = ticks_between(c.last, now, c.period);
        c.last = now;
        c.at = Time::MAX;
        let period = c.period;
        let counters = &mut self.backend.counters;
        counters.daemon_passes += skipped;
        counters.events += skipped;
        if d == Daemon::FileDeleter {
            self.backend.fd_state[pi].fast_forward(now, period);
        }
    }

    /// After a pass of `d` of `pi` at `now`: its next pass, at the next tick when
    /// skipping is off, else at the first tick at which it could have work.
    pub(super) fn after_pass(&mut self, now: Time, pi: usize, d: Daemon) {
        let c = self.clocks.get(pi, d);
        let (period, class) = (c.period, c.class);
        if !self.clocks.on {
            let ev = Event::DaemonPass {
                project: pi as u16,
                daemon: d,
                generation: 0,
            };
            self.queue.push(now + period, class, ev);
            return;
        }
        let t = next_work(&mut self.backend, pi, d, now, period, true);
        if let Some(t) = t {
            self.schedule(pi, d, first_tick(t, now, false, period));
        }
    }

    /// Schedules the pass of `d` of `pi` at tick `t` unless one is pending at or
    /// before it; a later pending one becomes stale.
    fn schedule(&mut self, pi: usize, d: Daemon, t: Time) {
        let end = self.end;
        let c = self.clocks.get_mut(pi, d);
        if t >= c.at || t > end {
            return;
        }
        c.at = t;
        c.generation = c.generation.wrapping_add(1);
        let ev = Event::DaemonPass {
            project: pi as u16,
            daemon: d,
            generation: c.generation,
        };
        let (class, seq) = (c.class, c.seq);
        self.queue.push_seq(t, class, seq, ev);
    }

    /// After an event at `now` of tie class `class`: each daemon of every project a
    /// step changed that has no pass pending before the first tick at which it could
    /// have work gets one then.
    pub(super) fn wake_daemons(&mut self, now: Time, class: u8) {
        if !self.clocks.on || self.backend.stepped.is_empty() {
            return;
        }
        let mut dirty = std::mem::take(&mut self.backend.stepped);
        for &pi in &dirty {
            let pi = pi as usize;
            self.backend.is_stepped[pi] = false;
            for d in periodic() {
                let c = self.clocks.get(pi, d);
                let (period, dclass, at) = (c.period, c.class, c.at);
                // Pending at the next possible tick already: nothing can be earlier.
                if period == 0 || at <= first_tick(now, now, dclass > class, period) {
                    // The transitioner's record of lowered times is read anyway, so
                    // that it only ever holds what moved since its pass was set.
                    if d == Daemon::Transitioner {
                        self.backend.projects[pi].db.take_transition_lowered();
                    }
                    continue;
                }
                if let Some(t) = next_work(&mut self.backend, pi, d, now, period, false) {
                    self.schedule(pi, d, first_tick(t, now, dclass > class, period));
                }
            }
        }
        dirty.clear();
        self.backend.stepped = dirty;
    }

    /// At the end of the run: the ticks up to the end that each daemon skipped count
    /// as passes and events, as if it had run them.
    pub(super) fn count_skipped_to_end(&mut self) {
        if !self.clocks.on {
            return;
        }
        let end = self.end;
        let counters = &mut self.backend.counters;
        for c in &mut self.clocks.clocks {
            if c.period > 0 {
                let n = ticks_through(c.last, end, c.period);
                counters.daemon_passes += n;
                counters.events += n;
                c.last = end.div_euclid(c.period) * c.period;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_tick_is_on_the_lattice_and_after_the_current_event() {
        // Later class: the tick at `now` itself is still ahead.
        assert_eq!(first_tick(0, 10, true, 5), 10);
        assert_eq!(first_tick(0, 10, false, 5), 15);
        assert_eq!(first_tick(11, 10, false, 5), 15);
        assert_eq!(first_tick(16, 10, true, 5), 20);
        assert_eq!(first_tick(Time::MIN, 0, true, 7), 0);
        assert_eq!(first_tick(Time::MIN, 0, false, 7), 7);
        assert_eq!(first_tick(601, 599, false, 300), 900);
        // Against a walk of the lattice.
        for period in 1..12 {
            for now in 0..40 {
                for t in -3..60 {
                    for later in [false, true] {
                        let want = (0..)
                            .map(|k| k * period)
                            .find(|&x| x >= t && (x > now || (later && x == now)))
                            .unwrap();
                        assert_eq!(first_tick(t, now, later, period), want);
                    }
                }
            }
        }
    }

    #[test]
    fn skipped_ticks_are_counted_once() {
        // Passes at 0, 5, 10 of period 5: none skipped.
        assert_eq!(ticks_between(-5, 0, 5), 0);
        assert_eq!(ticks_between(0, 5, 5), 0);
        // From 10 to 30: 15, 20, 25 skipped.
        assert_eq!(ticks_between(10, 30, 5), 3);
        // To the end: ticks in (last, end].
        assert_eq!(ticks_through(-5, 100, 5), 21);
        assert_eq!(ticks_through(95, 100, 5), 1);
        assert_eq!(ticks_through(100, 100, 5), 0);
        assert_eq!(ticks_through(95, 99, 5), 0);
        assert_eq!(ticks_through(-300, 86_400, 300), 289);
        // Passes plus skipped ticks make the whole lattice, whatever the passes.
        for period in 1..9 {
            let end = 97;
            let mut last = -period;
            let mut n = 0;
            for t in (0..=end).step_by(period as usize) {
                if (t / period) % 3 == 1 {
                    n += 1 + ticks_between(last, t, period);
                    last = t;
                }
            }
            n += ticks_through(last, end, period);
            assert_eq!(n, (end / period + 1) as u64, "period {period}");
        }
    }
}
