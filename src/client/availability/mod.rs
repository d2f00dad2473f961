//! Host availability: whether the host is on, allowed to compute (active) and
//! connected, over time (spec client §3.5, §5.3), and the time statistics the client
//! keeps about it (§1.11, §3.5).
//!
//! Three independent processes per host:
//!
//! - **on/off**, one of the models of [`OnOff`]: always on, the BOINC emulator's
//!   `RANDOM_PROCESS`, alternating renewal periods drawn from [`Dist`]s, the replay
//!   of a recorded [`Trace`], or a daily and weekly pattern ([`Daily`]), with
//!   optional [`Vacation`]s over it; a group may mix several such classes, each host
//!   drawing one when it joins;
//! - **active** (computing allowed) and **connected**, each a `RANDOM_PROCESS`. They
//!   matter only while the host is on: [`Availability::computing`] is `on && active`,
//!   [`Availability::connected`] is `on && connected`.
//!
//! The state changes only at whole-second toggle times, so the simulator is event
//! driven: [`Availability::next_change`] says when the host must be woken, and
//! [`Availability::update`] applies every toggle due by `now` in time order and
//! makes the client's 11-s updates of the exponential moving averages in between.
//! All draws come from the host's own random stream. See `docs/availability.md`.

pub mod daily;
pub mod trace;

pub use daily::{Daily, Vacation, Window, Zone};
pub use trace::Trace;

use crate::base::dist::Dist;
use crate::engine::Time;
use crate::engine::rng::SimRng;
use rand::RngExt;
use rand_distr::Exp1;
use std::sync::Arc;

/// The emulator's default `lambda` (mean on-time) of every process, seconds.
pub(crate) const DEFAULT_LAMBDA: f64 = 3600.0;
/// The modern client's time-statistics averaging constant, seconds (`ALPHA`, 10
/// days, spec client §3.5).
pub(crate) const DEFAULT_ALPHA: f64 = 864_000.0;
/// The seed client's averaging constant, seconds (`ALPHA`, 30 days, spec client §1.11).
pub(crate) const SEED_ALPHA: f64 = 2_592_000.0;
/// A gap longer than this (14 days) between two updates of the time statistics is
/// taken as `dt = 0`: the averages are left unchanged (spec client §3.5).
pub(crate) const MAX_GAP: Time = 14 * 86_400;
/// `CLIENT_TIME_STATS::update` (`client/time_stats.cpp`) returns at once when
/// `dt <= 10` s (spec client §3.5), so a running client's statistics move in steps:
/// with the 1-s main loop, one update every `STATS_STEP` = 11 s.
pub(crate) const STATS_STEP: Time = 11;

/// The time-statistics the client keeps and sends to the server (spec client §1.11,
/// §3.5), as exponential moving averages over the host's real on/active/connected
/// intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStats {
    pub on_frac: f64,
    pub active_frac: f64,
    pub connected_frac: f64,
}

/// How a client keeps its time statistics (`CLIENT_TIME_STATS::update`), per policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStatsRule {
    /// EMA constant, seconds.
    pub alpha: f64,
    /// The first update after the client starts decays every fraction over the gap
    /// while it was off (seed, spec client §1.11), not only `on_frac` (modern, §3.5).
    pub restart_decays_all: bool,
}

impl TimeStatsRule {
    /// The modern client's rule (spec client §3.5).
    pub(crate) const MODERN: TimeStatsRule = TimeStatsRule {
        alpha: DEFAULT_ALPHA,
        restart_decays_all: false,
    };
    /// The seed client's rule (spec client §1.11).
    pub(crate) const SEED: TimeStatsRule = TimeStatsRule {
        alpha: SEED_ALPHA,
        restart_decays_all: true,
    };

    /// The rule of a client policy.
    pub fn of(policy: crate::client::config::Policy) -> Self {
        match policy {
            crate::client::config::Policy::SeedDebt => Self::SEED,
            crate::client::config::Policy::ModernRec => Self::MODERN,
        }
    }
}

/// "No toggle pending".
const NEVER: Time = Time::MAX;
/// Draws at or above this many seconds (about 31 million years) mean "never".
const HUGE: f64 = 1e15;

/// A host group's on/off model.
#[derive(Clone, Debug, Default)]
// Held once per group (the hosts keep only their `Availability` state), so the size
// of a `Periods` model's two distributions is accepted.
#[allow(clippy::large_enum_variant)]
pub enum OnOff {
    /// Always on; consumes no random numbers.
    #[default]
    Always,
    /// The emulator's `RANDOM_PROCESS` (spec client §5.3): alternating exponential
    /// periods, on-times of mean `lambda`, off-times of mean `lambda/on_frac - lambda`;
    /// starts on with probability `on_frac`. Always on if `on_frac >= 1`, always off
    /// if `on_frac <= 0` (neither draws random numbers).
    Process { on_frac: f64, lambda: f64 },
    /// Alternating renewal periods: on-periods drawn from `on`, off-periods from `off`
    /// (seconds). The host starts on with probability `mean_on/(mean_on+mean_off)`,
    /// part-way (a uniform fraction) through a drawn first period.
    Periods { on: Dist, off: Dist },
    /// Exact replay of a recorded trace; group host slot `k` replays trace host
    /// `k mod hosts()`. Consumes no random numbers.
    Trace(Arc<Trace>),
    /// A daily and weekly pattern in the host's own time zone ([`Daily`]).
    Daily(Box<Daily>),
}

/// One availability class of a mixed host group: its name (a column of
/// `hosts.csv`), its weight among the group's classes, its on/off model and its
/// vacations.
#[derive(Clone, Debug)]
pub struct AvailClass {
    pub name: String,
    /// Cumulative weight, normalised so that the last class's is 1.
    pub cum_weight: f64,
    pub on_off: OnOff,
    pub vacation: Option<Vacation>,
}

/// A host group's availability model.
#[derive(Clone, Debug)]
pub struct AvailSpec {
    /// Whether the host runs at all (when the group has no classes).
    pub on_off: OnOff,
    /// Vacations over `on_off` (when the group has no classes).
    pub vacation: Option<Vacation>,
    /// A mixture: each host draws one class when it joins and follows its model
    /// (empty: every host follows `on_off`).
    pub classes: Vec<AvailClass>,
    /// Computing allowed while on: `RANDOM_PROCESS (frac, lambda)`; `frac >= 1`:
    /// always.
    pub active: (f64, f64),
    /// Network available while on: `RANDOM_PROCESS (frac, lambda)`; `frac >= 1`:
    /// always.
    pub connected: (f64, f64),
    /// A distribution of `active.0` across hosts, drawn once per host (clamped to
    /// [0, 1]) instead of the one fraction.
    pub active_dist: Option<Dist>,
    /// Likewise for `connected.0`.
    pub connected_dist: Option<Dist>,
    /// How the time statistics are kept: the client policy's `ALPHA` and restart rule.
    pub time_stats: TimeStatsRule,
}

impl Default for AvailSpec {
    /// Always on, active and connected.
    fn default() -> Self {
        AvailSpec {
            on_off: OnOff::Always,
            vacation: None,
            classes: Vec::new(),
            active: (1.0, DEFAULT_LAMBDA),
            connected: (1.0, DEFAULT_LAMBDA),
            active_dist: None,
            connected_dist: None,
            time_stats: TimeStatsRule::MODERN,
        }
    }
}

/// What a host draws once when it joins, apart from its periods: its class and its
/// own active and connected fractions ([`AvailSpec::draw_traits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTraits {
    pub class: u8,
    pub active_frac: f32,
    pub connected_frac: f32,
    /// The host's own UTC offset, seconds, for a daily model (a host export's
    /// `timezone`); `None`: drawn from the model's zones.
    pub utc_offset: Option<i32>,
}

impl AvailSpec {
    /// Whether every host of the group is always on, active and connected.
    pub fn is_always(&self) -> bool {
        matches!(self.on_off, OnOff::Always)
            && self.vacation.is_none()
            && self.classes.is_empty()
            && self.active_dist.is_none()
            && self.connected_dist.is_none()
            && self.active.0 >= 1.0
            && self.connected.0 >= 1.0
    }

    /// Whether a host has traits to draw when it joins: a class or a fraction of its
    /// own.
    pub fn has_traits(&self) -> bool {
        !self.classes.is_empty() || self.active_dist.is_some() || self.connected_dist.is_some()
    }

    /// A host's traits, drawn from `rng` (the host's own traits stream) in a fixed
    /// order: its class (only in a mixture), then its active fraction and its
    /// connected fraction (each only when given as a distribution).
    pub fn draw_traits(&self, rng: &mut SimRng) -> HostTraits {
        let mut t = self.typical_traits();
        if self.classes.len() > 1 {
            let u: f64 = rng.random();
            let k = self.classes.partition_point(|c| c.cum_weight <= u);
            t.class = k.min(self.classes.len() - 1) as u8;
        }
        if let Some(d) = &self.active_dist {
            t.active_frac = unit(d.sample(rng)) as f32;
        }
        if let Some(d) = &self.connected_dist {
            t.connected_frac = unit(d.sample(rng)) as f32;
        }
        t
    }

    /// The traits of a host that draws none: the first class, and the fractions'
    /// means (used only when the group has distributions).
    pub(crate) fn typical_traits(&self) -> HostTraits {
        let mean = |d: &Option<Dist>, x: f64| d.as_ref().map_or(x, |d| unit(d.mean())) as f32;
        HostTraits {
            class: 0,
            active_frac: mean(&self.active_dist, self.active.0),
            connected_frac: mean(&self.connected_dist, self.connected.0),
            utc_offset: None,
        }
    }

    /// The on/off model and vacations of class `class` (the group's own without
    /// classes).
    fn model(&self, class: u8) -> (&OnOff, Option<&Vacation>) {
        match self.classes.get(class as usize) {
            Some(c) => (&c.on_off, c.vacation.as_ref()),
            None => (&self.on_off, self.vacation.as_ref()),
        }
    }

    /// The long-run fraction of time group host `slot` of class `class` is on, by
    /// its model: the model's own fraction, times the fraction of time not on
    /// vacation, `mean(every)/(mean(every)+mean(length))`.
    pub(crate) fn expected_on_frac(&self, slot: u32, class: u8) -> f64 {
        let (on_off, vacation) = self.model(class);
        let base = match on_off {
            OnOff::Always => 1.0,
            OnOff::Process { on_frac, .. } => unit(*on_frac),
            OnOff::Periods { on, off } => periods_on_prob(on, off),
            OnOff::Trace(t) => t.host_on_fraction(t.host_for_slot(slot)),
            OnOff::Daily(d) => d.on_frac(),
        };
        match vacation {
            Some(v) => base * (1.0 - periods_on_prob(&v.length, &v.every)),
            None => base,
        }
    }

    /// The long-run time statistics of group host `slot` with traits `t`: the values
    /// a host starts with (the emulator reads them from its state file).
    pub(crate) fn expected_time_stats(&self, slot: u32, t: &HostTraits) -> TimeStats {
        let frac = |d: &Option<Dist>, x: f64, own: f32| {
            if d.is_some() { own as f64 } else { unit(x) }
        };
        TimeStats {
            on_frac: self.expected_on_frac(slot, t.class),
            active_frac: frac(&self.active_dist, self.active.0, t.active_frac),
            connected_frac: frac(&self.connected_dist, self.connected.0, t.connected_frac),
        }
    }

    /// The name of class `class`, for a mixed group (`None` without classes).
    pub fn class_name(&self, class: u8) -> Option<&str> {
        self.classes.get(class as usize).map(|c| c.name.as_str())
    }
}

/// `x` clamped to `[0, 1]` (NaN → 1).
fn unit(x: f64) -> f64 {
    if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) }
}

/// Probability that a `Periods` host is on at a random time.
fn periods_on_prob(on: &Dist, off: &Dist) -> f64 {
    let (a, b) = (on.mean().max(0.0), off.mean().max(0.0));
    let p = a / (a + b);
    if p.is_nan() {
        // 0/0 or inf/inf: no information.
        0.5
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// A drawn period in whole seconds: rounded up, at least 1; `NEVER` if huge or NaN.
fn secs(x: f64) -> Time {
    if x < HUGE {
        (x.ceil() as Time).max(1)
    } else {
        NEVER
    }
}

/// `t` plus a drawn period.
fn after(t: Time, x: f64) -> Time {
    match secs(x) {
        NEVER => NEVER,
        d => t.saturating_add(d),
    }
}

/// One exponential draw of mean `mean`.
fn exponential(rng: &mut SimRng, mean: f64) -> f64 {
    let e: f64 = rng.sample(Exp1);
    e * mean
}

/// One two-state process: its state and the time of its next toggle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Toggle {
    on: bool,
    next: Time,
}

impl Toggle {
    const ALWAYS_ON: Toggle = Toggle {
        on: true,
        next: NEVER,
    };
    const ALWAYS_OFF: Toggle = Toggle {
        on: false,
        next: NEVER,
    };
}

/// `RANDOM_PROCESS` mean off-time.
fn rp_off_mean(frac: f64, lambda: f64) -> f64 {
    lambda / frac - lambda
}

/// `RANDOM_PROCESS::init` at `now`.
fn rp_init(frac: f64, lambda: f64, now: Time, rng: &mut SimRng) -> Toggle {
    if frac >= 1.0 || frac.is_nan() {
        return Toggle::ALWAYS_ON;
    }
    if frac <= 0.0 {
        return Toggle::ALWAYS_OFF;
    }
    let u: f64 = rng.random();
    let on = u < frac;
    let mean = if on {
        lambda
    } else {
        rp_off_mean(frac, lambda)
    };
    Toggle {
        on,
        next: after(now, exponential(rng, mean)),
    }
}

/// A `RANDOM_PROCESS` toggle at `p.next`, drawing the next period.
fn rp_flip(p: &mut Toggle, frac: f64, lambda: f64, rng: &mut SimRng) {
    p.on = !p.on;
    let mean = if p.on {
        lambda
    } else {
        rp_off_mean(frac, lambda)
    };
    p.next = after(p.next, exponential(rng, mean));
}

/// An alternating renewal process's start: on with probability
/// `mean(on)/(mean(on)+mean(off))`, part-way (a uniform fraction) through a drawn
/// first period. Draws `U`, a period, then the fraction.
fn renewal_init(on: &Dist, off: &Dist, now: Time, rng: &mut SimRng) -> Toggle {
    let u: f64 = rng.random();
    let state = u < periods_on_prob(on, off);
    let d = if state { on } else { off }.sample(rng);
    let f: f64 = rng.random();
    Toggle {
        on: state,
        next: after(now, f * d),
    }
}

/// An alternating renewal process's state at `now` as if it had run for a long
/// time: started by [`renewal_init`] five mean cycles before `now` and run forward
/// to `now`. A uniform fraction of a drawn period is the stationary residual only
/// for nearly fixed periods; for an exponential gap its mean is half the right one,
/// which for vacations (gaps of months) would double the time away in a run's first
/// months. Five cycles make the start close to stationary whatever the
/// distribution, and the random first period keeps fixed periods out of phase.
/// With an infinite mean it is [`renewal_init`] at `now`. Costs about ten draws,
/// once per host.
fn renewal_warm(on: &Dist, off: &Dist, now: Time, rng: &mut SimRng) -> Toggle {
    let cycle = on.mean().max(0.0) + off.mean().max(0.0);
    if !(cycle.is_finite() && cycle > 0.0) {
        return renewal_init(on, off, now, rng);
    }
    let burn = (5.0 * cycle).min(HUGE) as Time;
    let mut t = renewal_init(on, off, now - burn, rng);
    for _ in 0..WARM_FLIPS {
        if t.next > now {
            return t;
        }
        t.on = !t.on;
        t.next = after(t.next, if t.on { on } else { off }.sample(rng));
    }
    // Periods far shorter than their mean, over and over: start afresh at `now`.
    renewal_init(on, off, now, rng)
}

/// Most toggles [`renewal_warm`] runs through before it gives up.
const WARM_FLIPS: u32 = 10_000;

/// Indices of the four processes in [`Availability`]'s arrays.
const ON: usize = 0;
const ACTIVE: usize = 1;
const CONNECTED: usize = 2;
const VACATION: usize = 3;

/// One host's availability state. The four processes keep their states and next
/// toggles in two arrays rather than four `Toggle`s, so the host pays no padding per
/// process: the whole state is 88 bytes, per host.
#[derive(Clone, Debug)]
pub struct Availability {
    /// The next toggle of the on/off model, the active, connected and vacation
    /// processes.
    next: [Time; 4],
    /// The client's last update of the statistics (`last_update`): the next one is
    /// `STATS_STEP` later while the host is on.
    last: Time,
    stats: TimeStats,
    /// The on/off model's own state. Trace replay: the trace host this host replays
    /// and the index of its current or next on-interval. Daily pattern: the host's
    /// UTC offset in seconds and its current or next session's local day (as `i32`).
    m0: u32,
    m1: u32,
    /// This host's own active and connected fractions (used only when the group
    /// gives them as distributions).
    active_frac: f32,
    connected_frac: f32,
    /// The states: model on, active, connected, on vacation.
    state: [bool; 4],
    /// The host's availability class (0 without classes).
    class: u8,
}

impl Default for Availability {
    /// Always on, active and connected, with all fractions 1.
    fn default() -> Self {
        Availability {
            next: [NEVER; 4],
            last: 0,
            stats: TimeStats {
                on_frac: 1.0,
                active_frac: 1.0,
                connected_frac: 1.0,
            },
            m0: 0,
            m1: 0,
            active_frac: 1.0,
            connected_frac: 1.0,
            state: [true, true, true, false],
            class: 0,
        }
    }
}

impl Availability {
    /// The state of group host `slot` joining at `now`, with the traits of a host
    /// that draws none ([`Self::join`]).
    pub fn new(spec: &AvailSpec, slot: u32, now: Time, rng: &mut SimRng) -> Self {
        Self::join(spec, spec.typical_traits(), slot, now, rng)
    }

    /// The state of group host `slot` with traits `traits` joining at `now`: initial
    /// states and first toggle times drawn from the host's stream (on/off first, then
    /// active, then connected, then vacations), fractions at the model's long-run
    /// values.
    pub fn join(
        spec: &AvailSpec,
        traits: HostTraits,
        slot: u32,
        now: Time,
        rng: &mut SimRng,
    ) -> Self {
        let mut a = Availability {
            class: traits.class,
            active_frac: traits.active_frac,
            connected_frac: traits.connected_frac,
            last: now,
            stats: spec.expected_time_stats(slot, &traits),
            ..Availability::default()
        };
        let (on_off, vacation) = spec.model(traits.class);
        let on = match on_off {
            OnOff::Always => Toggle::ALWAYS_ON,
            OnOff::Process { on_frac, lambda } => rp_init(*on_frac, *lambda, now, rng),
            OnOff::Periods { on, off } => renewal_init(on, off, now, rng),
            OnOff::Trace(t) => {
                let k = t.host_for_slot(slot);
                let c = t.cursor_at(k, now);
                a.m0 = k as u32;
                a.m1 = c as u32;
                match t.intervals(k).get(c) {
                    Some(&(s, e)) if s <= now => Toggle { on: true, next: e },
                    Some(&(s, _)) => Toggle { on: false, next: s },
                    None => Toggle::ALWAYS_OFF,
                }
            }
            OnOff::Daily(d) => {
                let tz = traits.utc_offset.unwrap_or_else(|| d.draw_offset(rng));
                a.m0 = tz as u32;
                // Start a day early: yesterday's session may run past midnight.
                let today = (now + tz as Time).div_euclid(daily::DAY);
                a.daily_from(d, today - 1, now, rng)
            }
        };
        a.set(ON, on);
        let (frac, lambda) = a.active_params(spec);
        a.set(ACTIVE, rp_init(frac, lambda, now, rng));
        let (frac, lambda) = a.connected_params(spec);
        a.set(CONNECTED, rp_init(frac, lambda, now, rng));
        if let Some(v) = vacation {
            a.set(VACATION, renewal_warm(&v.length, &v.every, now, rng));
        }
        a
    }

    fn toggle(&self, k: usize) -> Toggle {
        Toggle {
            on: self.state[k],
            next: self.next[k],
        }
    }

    fn set(&mut self, k: usize, t: Toggle) {
        self.state[k] = t.on;
        self.next[k] = t.next;
    }

    /// The host's class (0 without classes).
    pub fn class(&self) -> u8 {
        self.class
    }

    /// The active process's `(frac, lambda)`: the host's own fraction when the group
    /// draws one per host.
    fn active_params(&self, spec: &AvailSpec) -> (f64, f64) {
        match spec.active_dist {
            Some(_) => (self.active_frac as f64, spec.active.1),
            None => spec.active,
        }
    }

    /// Likewise for the connected process.
    fn connected_params(&self, spec: &AvailSpec) -> (f64, f64) {
        match spec.connected_dist {
            Some(_) => (self.connected_frac as f64, spec.connected.1),
            None => spec.connected,
        }
    }

    /// A daily host's state at `t`, looking for sessions from local day `from` on:
    /// off until the next session that starts after `t`, or on until the end of one
    /// that started by `t` and ends after it. Sessions that ended by `t` (a day's
    /// window that a jitter emptied, or one overlapped by the previous) are passed.
    fn daily_from(&mut self, d: &Daily, from: i64, t: Time, rng: &mut SimRng) -> Toggle {
        let tz = self.m0 as i32 as Time;
        let mut from = from;
        loop {
            let Some((day, start)) = d.next_start(from, tz, rng) else {
                return Toggle::ALWAYS_OFF;
            };
            self.m1 = day as i32 as u32;
            if start > t {
                return Toggle {
                    on: false,
                    next: start,
                };
            }
            let end = d.end(day, tz, rng);
            if end > t {
                return Toggle {
                    on: true,
                    next: end,
                };
            }
            from = day + 1;
        }
    }

    /// Applies, in time order, every toggle due at or before `now` (drawing new
    /// periods), integrating the time statistics exactly over each constant interval.
    /// `spec` must be the one the state was created with.
    pub fn update(&mut self, now: Time, spec: &AvailSpec, rng: &mut SimRng) {
        loop {
            let n = &self.next;
            let t = n[ON].min(n[ACTIVE]).min(n[CONNECTED]).min(n[VACATION]);
            if t > now {
                break;
            }
            // The update of second `t` sees the states toggled at `t`.
            self.integrate(t - 1, spec.time_stats.alpha);
            let was_on = self.is_on();
            if self.next[ON] == t {
                self.flip_on(spec, rng);
            }
            if self.next[VACATION] == t {
                self.flip_vacation(spec, rng);
            }
            if !was_on && self.is_on() {
                self.client_start(t, spec.time_stats);
            }
            if self.next[ACTIVE] == t {
                let (frac, lambda) = self.active_params(spec);
                let mut p = self.toggle(ACTIVE);
                rp_flip(&mut p, frac, lambda, rng);
                self.set(ACTIVE, p);
            }
            if self.next[CONNECTED] == t {
                let (frac, lambda) = self.connected_params(spec);
                let mut p = self.toggle(CONNECTED);
                rp_flip(&mut p, frac, lambda, rng);
                self.set(CONNECTED, p);
            }
        }
        self.integrate(now, spec.time_stats.alpha);
    }

    /// The on/off model's toggle due at `self.next[ON]`.
    fn flip_on(&mut self, spec: &AvailSpec, rng: &mut SimRng) {
        let t = self.next[ON];
        let on = self.state[ON];
        let next = match spec.model(self.class).0 {
            OnOff::Always => Toggle::ALWAYS_ON,
            OnOff::Process { on_frac, lambda } => {
                let mut p = self.toggle(ON);
                rp_flip(&mut p, *on_frac, *lambda, rng);
                p
            }
            OnOff::Periods { on: don, off: doff } => {
                let d = if on { doff } else { don }.sample(rng);
                Toggle {
                    on: !on,
                    next: after(t, d),
                }
            }
            OnOff::Trace(tr) => {
                let list = tr.intervals(self.m0 as usize);
                if on {
                    // The interval ended: wait for the next one.
                    self.m1 += 1;
                    match list.get(self.m1 as usize) {
                        Some(&(s, _)) => Toggle { on: false, next: s },
                        None => Toggle::ALWAYS_OFF,
                    }
                } else {
                    match list.get(self.m1 as usize) {
                        Some(&(_, e)) => Toggle { on: true, next: e },
                        None => Toggle::ALWAYS_OFF,
                    }
                }
            }
            OnOff::Daily(d) => {
                let day = self.m1 as i32 as i64;
                if on {
                    // The session ended: the next day's, or a later one.
                    self.daily_from(d, day + 1, t, rng)
                } else {
                    // The session of `day` starts now (its start was drawn).
                    let end = d.end(day, self.m0 as i32 as Time, rng);
                    if end > t {
                        Toggle {
                            on: true,
                            next: end,
                        }
                    } else {
                        self.daily_from(d, day + 1, t, rng)
                    }
                }
            }
        };
        self.set(ON, next);
    }

    /// The vacation toggle due at `self.next[VACATION]`: a vacation starts (its
    /// length drawn) or ends (the gap to the next drawn).
    fn flip_vacation(&mut self, spec: &AvailSpec, rng: &mut SimRng) {
        let Some(v) = spec.model(self.class).1 else {
            self.next[VACATION] = NEVER;
            return;
        };
        let away = !self.state[VACATION];
        let d = if away { &v.length } else { &v.every }.sample(rng);
        self.set(
            VACATION,
            Toggle {
                on: away,
                next: after(self.next[VACATION], d),
            },
        );
    }

    /// Applies the client's updates at `last + k·STATS_STEP ≤ t` while the host is
    /// on: `frac = frac*w2 + w1*state`, `w1 = 1 - exp(-dt/alpha)` (spec client §3.5,
    /// §1.11), with the states of the update's second, which held since `last` (the
    /// host's states change only at toggles, and `update` applies every update before
    /// a toggle first). `k` updates of `STATS_STEP` with one state are one of
    /// `k·STATS_STEP`. While the host is off the client is not running, so nothing
    /// moves: the statistics stay as the client last wrote them, and `self.last`
    /// stays at its last update before it stopped, for [`Self::client_start`].
    fn integrate(&mut self, t: Time, alpha: f64) {
        let steps = (t - self.last).div_euclid(STATS_STEP);
        if steps <= 0 || !self.is_on() {
            return;
        }
        let dt = steps * STATS_STEP;
        self.last += dt;
        let x = -(dt as f64) / alpha;
        let w2 = x.exp();
        let w1 = -x.exp_m1();
        let (active, connected) = (self.state[ACTIVE], self.state[CONNECTED]);
        let s = &mut self.stats;
        let ema = |f: f64, state: bool| f * w2 + if state { w1 } else { 0.0 };
        s.on_frac = ema(s.on_frac, true);
        s.active_frac = ema(s.active_frac, active);
        s.connected_frac = ema(s.connected_frac, connected);
    }

    /// The first update after the client starts again at `t`, covering the gap since
    /// its last update: `on_frac *= w2` (and, in the seed client, `active_frac` and
    /// `connected_frac` too), except that a gap of more than [`MAX_GAP`] counts as
    /// `dt = 0` and leaves the averages unchanged (spec client §3.5, §1.11). A gap of
    /// `dt <= 10` s is no update: the statistics go on as if the client had not
    /// stopped.
    fn client_start(&mut self, t: Time, rule: TimeStatsRule) {
        let gap = t - self.last;
        if gap < STATS_STEP {
            return;
        }
        self.last = t;
        if gap > MAX_GAP {
            return;
        }
        let w2 = (-(gap as f64) / rule.alpha).exp();
        let s = &mut self.stats;
        s.on_frac *= w2;
        if rule.restart_decays_all {
            s.active_frac *= w2;
            s.connected_frac *= w2;
        }
    }

    /// When the host's observable state may next change (`Time::MAX`: never). While
    /// the host is off only what can turn it on counts: the end of its vacation if it
    /// is away, its model's toggle otherwise; the other toggles that fall in an off
    /// period are applied at the next `update`.
    pub(crate) fn next_change(&self) -> Time {
        let n = &self.next;
        if self.is_on() {
            n[ON].min(n[ACTIVE]).min(n[CONNECTED]).min(n[VACATION])
        } else if self.state[VACATION] {
            n[VACATION]
        } else {
            n[ON]
        }
    }

    /// Whether the host (the client) is running: its model says on and it is not on
    /// vacation.
    pub(crate) fn is_on(&self) -> bool {
        self.state[ON] && !self.state[VACATION]
    }

    /// Whether tasks may compute: on and computing allowed.
    pub fn computing(&self) -> bool {
        self.is_on() && self.state[ACTIVE]
    }

    /// Whether the host can reach the network: on and connected.
    pub(crate) fn connected(&self) -> bool {
        self.is_on() && self.state[CONNECTED]
    }

    /// Sets whether the host is connected, for unit tests of what depends on it.
    #[cfg(test)]
    pub(crate) fn set_connected(&mut self, connected: bool) {
        self.state[CONNECTED] = connected;
    }

    /// The time statistics as of the last `update`.
    pub(crate) fn time_stats(&self) -> TimeStats {
        self.stats
    }

    /// The time statistics as the client would have them at the end of second `now`
    /// (≥ the last `update`), its update of that second included, without changing
    /// the state: valid because the host is woken at every change of its
    /// on/active/connected states, so none lies in between.
    pub(crate) fn time_stats_at(&self, now: Time, spec: &AvailSpec) -> TimeStats {
        let mut a = self.clone();
        a.integrate(now, spec.time_stats.alpha);
        a.stats
    }

    /// Overrides the time statistics (for example with values from a client state
    /// file).
    pub(crate) fn set_time_stats(&mut self, stats: TimeStats) {
        self.stats = stats;
    }
}

#[cfg(test)]
mod tests;
