//! Daily and weekly on/off patterns, and vacations: the two models of volunteer
//! availability that are not renewal processes of one host's own clock.
//!
//! Measured hosts are not random: Javadi, Kondo, Vincent and Anderson (IEEE TPDS
//! 22(11), 2011) found that an i.i.d. fit (Weibull on, lognormal off) describes only
//! 21–34 % of SETI@home hosts; the others follow the volunteer's day and week. A
//! [`Daily`] host is on during a window of its own local day, each day with the
//! probability of a weekday or of a weekend day, its start and end jittered per day.
//! A [`Vacation`] overlay takes a host off for long stretches whatever its model says.
//!
//! **Day 0 of the simulation is a Monday, 00:00 UTC.** A host's local time is
//! `t + utc_offset`; its local day `d = floor(local / 86400)` is a weekend day when
//! `d mod 7` is 5 (Saturday) or 6 (Sunday).
//!
//! The model is event driven: at each toggle the next one is computed directly from
//! the next used day's window, so a host costs nothing between toggles and keeps only
//! its offset and the day of its current or next session. The real client has no such
//! model: it runs whenever the computer is on (spec client §3.5); this module only
//! decides when that is. See `docs/availability.md`.

use crate::base::dist::Dist;
use crate::engine::Time;
use crate::engine::rng::SimRng;
use rand::RngExt;

/// Seconds in a day.
pub const DAY: Time = 86_400;
/// How far ahead, in days, a host looks for a day on which it is used before it is
/// taken as off for good (ten years: only a probability near 0 gets there).
const MAX_SKIP_DAYS: i64 = 3660;
/// The largest UTC offset a drawn zone is clamped to, hours (a week either way).
pub const MAX_OFFSET_HOURS: f64 = 168.0;

/// A window of the local day: on from `start` to `end`, seconds after local midnight
/// (both in `[0, 86400]`). An `end` at or before `start` is on the next day: a
/// window of 22:00–07:00 is a night.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub start: Time,
    pub end: Time,
}

impl Window {
    /// Length of the window, seconds (a whole day when `end == start`).
    pub fn length(&self) -> Time {
        if self.end > self.start {
            self.end - self.start
        } else {
            self.end + DAY - self.start
        }
    }
}

/// Where a host's time zone comes from: its UTC offset in hours, a distribution drawn
/// once per host or a weighted list of zones.
#[derive(Clone, Debug, PartialEq)]
// Configuration, held once per group: a distribution's size is accepted (see `Dist`).
#[allow(clippy::large_enum_variant)]
pub enum Zone {
    /// Hours east of UTC (negative: west), drawn once per host; a plain number is
    /// the same zone for every host (and draws nothing).
    Hours(Dist),
    /// Zones `(hours, cumulative weight)`, the weights normalised so that the last
    /// is 1: a host takes the first zone whose cumulative weight exceeds its draw.
    Weighted(Box<[(f64, f64)]>),
}

/// The daily and weekly pattern of one class of hosts (see the module's docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Daily {
    /// The window of Monday to Friday.
    pub weekday: Window,
    /// The window of Saturday and Sunday.
    pub weekend: Window,
    /// Probability that the host is used on a given weekday (drawn per day).
    pub weekday_prob: f64,
    /// Probability that it is used on a given weekend day.
    pub weekend_prob: f64,
    /// Seconds added to the start and, drawn apart, to the end of each day's window
    /// (rounded to whole seconds), so that hosts are not synchronised.
    pub jitter: Option<Dist>,
    /// The host's time zone.
    pub zone: Zone,
}

impl Daily {
    /// The long-run fraction of the week the host is on:
    /// `(5·p_weekday·len_weekday + 2·p_weekend·len_weekend) / (7·86400)`. A jitter
    /// drawn alike at both ends moves a window but does not lengthen it on average,
    /// so it does not enter (sessions that merge or vanish under a wide jitter are
    /// neglected).
    pub fn on_frac(&self) -> f64 {
        let wd = self.weekday_prob.clamp(0.0, 1.0) * self.weekday.length() as f64;
        let we = self.weekend_prob.clamp(0.0, 1.0) * self.weekend.length() as f64;
        ((5.0 * wd + 2.0 * we) / (7 * DAY) as f64).clamp(0.0, 1.0)
    }

    /// The host's UTC offset in whole seconds: one draw from `rng` unless the zone
    /// is a single fixed number.
    pub(super) fn draw_offset(&self, rng: &mut SimRng) -> i32 {
        let hours = match &self.zone {
            Zone::Hours(d) => d.sample(rng),
            Zone::Weighted(zones) => {
                let u: f64 = rng.random();
                let k = zones.partition_point(|&(_, c)| c <= u).min(zones.len() - 1);
                zones[k].0
            }
        };
        let hours = if hours.is_nan() { 0.0 } else { hours };
        (hours.clamp(-MAX_OFFSET_HOURS, MAX_OFFSET_HOURS) * 3600.0).round() as i32
    }

    /// The window and probability of local day `day` (day 0 is a Monday).
    fn day(&self, day: i64) -> (Window, f64) {
        if day.rem_euclid(7) >= 5 {
            (self.weekend, self.weekend_prob)
        } else {
            (self.weekday, self.weekday_prob)
        }
    }

    /// One jitter draw, whole seconds (0 without jitter or for a draw that is not
    /// finite).
    fn jitter(&self, rng: &mut SimRng) -> Time {
        match &self.jitter {
            Some(d) => {
                let x = d.sample(rng).round();
                if x.is_finite() {
                    x.clamp(-(DAY as f64), DAY as f64) as Time
                } else {
                    0
                }
            }
            None => 0,
        }
    }

    /// The first local day from `from` on which the host is used, and the (jittered)
    /// start of its session in simulation time, for a host at UTC offset `tz`
    /// seconds. Per day it draws whether the day is used (only when the
    /// probability is strictly between 0 and 1), then, on a used day, the start's
    /// jitter. `None`: no used day within [`MAX_SKIP_DAYS`].
    pub(super) fn next_start(&self, from: i64, tz: Time, rng: &mut SimRng) -> Option<(i64, Time)> {
        if self.weekday_prob <= 0.0 && self.weekend_prob <= 0.0 {
            return None;
        }
        for day in from..from + MAX_SKIP_DAYS {
            let (w, p) = self.day(day);
            let used = if p >= 1.0 {
                true
            } else if p <= 0.0 {
                false
            } else {
                rng.random::<f64>() < p
            };
            if used {
                let start = day * DAY - tz + w.start + self.jitter(rng);
                return Some((day, start));
            }
        }
        None
    }

    /// The (jittered) end of local day `day`'s session, in simulation time: one
    /// jitter draw.
    pub(super) fn end(&self, day: i64, tz: Time, rng: &mut SimRng) -> Time {
        let (w, _) = self.day(day);
        day * DAY - tz + w.start + w.length() + self.jitter(rng)
    }
}

/// Occasional long off periods over any on/off model: the gaps between vacations
/// are drawn from `every` and their lengths from `length` (seconds). During a
/// vacation the host is off whatever its model says; the model runs on underneath.
#[derive(Clone, Debug, PartialEq)]
pub struct Vacation {
    pub every: Dist,
    pub length: Dist,
}
