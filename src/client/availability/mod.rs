//! Host availability: whether the host is on, allowed to compute (active) and
//! connected, over time (spec client §3.5, §5.3), and the time statistics the client
//! keeps about it (§1.11, §3.5).
//!
//! Three independent processes per host:
//!
//! - **on/off**, one of the models of [`OnOff`]: always on, the BOINC emulator's
//!   `RANDOM_PROCESS`, alternating renewal periods drawn from [`Dist`]s, or the replay
//!   of a recorded [`Trace`];
//! - **active** (computing allowed) and **connected**, each a `RANDOM_PROCESS`. They
//!   matter only while the host is on: [`Availability::computing`] is `on && active`,
//!   [`Availability::connected`] is `on && connected`.
//!
//! The state changes only at whole-second toggle times, so the simulator is event
//! driven: [`Availability::next_change`] says when the host must be woken, and
//! [`Availability::update`] applies every toggle due by `now` in time order and
//! integrates the exponential moving averages exactly over each constant interval.
//! All draws come from the host's own random stream. See `docs/availability.md`.

pub mod trace;

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
}

/// A host group's availability model.
#[derive(Clone, Debug)]
pub struct AvailSpec {
    /// Whether the host runs at all.
    pub on_off: OnOff,
    /// Computing allowed while on: `RANDOM_PROCESS (frac, lambda)`; `frac >= 1`:
    /// always.
    pub active: (f64, f64),
    /// Network available while on: `RANDOM_PROCESS (frac, lambda)`; `frac >= 1`:
    /// always.
    pub connected: (f64, f64),
    /// How the time statistics are kept: the client policy's `ALPHA` and restart rule.
    pub time_stats: TimeStatsRule,
}

impl Default for AvailSpec {
    /// Always on, active and connected.
    fn default() -> Self {
        AvailSpec {
            on_off: OnOff::Always,
            active: (1.0, DEFAULT_LAMBDA),
            connected: (1.0, DEFAULT_LAMBDA),
            time_stats: TimeStatsRule::MODERN,
        }
    }
}

impl AvailSpec {
    /// Whether every host of the group is always on, active and connected.
    pub fn is_always(&self) -> bool {
        matches!(self.on_off, OnOff::Always) && self.active.0 >= 1.0 && self.connected.0 >= 1.0
    }

    /// The long-run fraction of time group host `slot` is on, by the model.
    pub(crate) fn expected_on_frac(&self, slot: u32) -> f64 {
        match &self.on_off {
            OnOff::Always => 1.0,
            OnOff::Process { on_frac, .. } => unit(*on_frac),
            OnOff::Periods { on, off } => periods_on_prob(on, off),
            OnOff::Trace(t) => t.host_on_fraction(t.host_for_slot(slot)),
        }
    }

    /// The long-run time statistics of group host `slot`: the values a host starts
    /// with (the emulator reads them from its state file).
    pub(crate) fn expected_time_stats(&self, slot: u32) -> TimeStats {
        TimeStats {
            on_frac: self.expected_on_frac(slot),
            active_frac: unit(self.active.0),
            connected_frac: unit(self.connected.0),
        }
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

/// One host's availability state.
#[derive(Clone, Debug)]
pub struct Availability {
    on: Toggle,
    active: Toggle,
    connected: Toggle,
    /// Trace replay: the trace host this host replays and the index of its current
    /// or next on-interval.
    trace_host: u32,
    cursor: u32,
    /// Time up to which the statistics are integrated.
    last: Time,
    stats: TimeStats,
}

impl Default for Availability {
    /// Always on, active and connected, with all fractions 1.
    fn default() -> Self {
        Availability {
            on: Toggle::ALWAYS_ON,
            active: Toggle::ALWAYS_ON,
            connected: Toggle::ALWAYS_ON,
            trace_host: 0,
            cursor: 0,
            last: 0,
            stats: TimeStats {
                on_frac: 1.0,
                active_frac: 1.0,
                connected_frac: 1.0,
            },
        }
    }
}

impl Availability {
    /// The state of group host `slot` joining at `now`: initial states and first
    /// toggle times drawn from the host's stream (on/off first, then active, then
    /// connected), fractions at the model's long-run values.
    pub fn new(spec: &AvailSpec, slot: u32, now: Time, rng: &mut SimRng) -> Self {
        let mut trace_host = 0;
        let mut cursor = 0;
        let on = match &spec.on_off {
            OnOff::Always => Toggle::ALWAYS_ON,
            OnOff::Process { on_frac, lambda } => rp_init(*on_frac, *lambda, now, rng),
            OnOff::Periods { on, off } => {
                let u: f64 = rng.random();
                let state = u < periods_on_prob(on, off);
                let d = if state { on } else { off }.sample(rng);
                let f: f64 = rng.random();
                Toggle {
                    on: state,
                    next: after(now, f * d),
                }
            }
            OnOff::Trace(t) => {
                let k = t.host_for_slot(slot);
                let c = t.cursor_at(k, now);
                trace_host = k as u32;
                cursor = c as u32;
                match t.intervals(k).get(c) {
                    Some(&(s, e)) if s <= now => Toggle { on: true, next: e },
                    Some(&(s, _)) => Toggle { on: false, next: s },
                    None => Toggle::ALWAYS_OFF,
                }
            }
        };
        let active = rp_init(spec.active.0, spec.active.1, now, rng);
        let connected = rp_init(spec.connected.0, spec.connected.1, now, rng);
        Availability {
            on,
            active,
            connected,
            trace_host,
            cursor,
            last: now,
            stats: spec.expected_time_stats(slot),
        }
    }

    /// Applies, in time order, every toggle due at or before `now` (drawing new
    /// periods), integrating the time statistics exactly over each constant interval.
    /// `spec` must be the one the state was created with.
    pub fn update(&mut self, now: Time, spec: &AvailSpec, rng: &mut SimRng) {
        loop {
            let t = self.on.next.min(self.active.next).min(self.connected.next);
            if t > now {
                break;
            }
            self.integrate(t, spec.time_stats.alpha);
            if self.on.next == t {
                let was_on = self.on.on;
                self.flip_on(spec, rng);
                if !was_on && self.on.on {
                    self.client_start(t, spec.time_stats);
                }
            }
            if self.active.next == t {
                rp_flip(&mut self.active, spec.active.0, spec.active.1, rng);
            }
            if self.connected.next == t {
                rp_flip(&mut self.connected, spec.connected.0, spec.connected.1, rng);
            }
        }
        self.integrate(now, spec.time_stats.alpha);
    }

    /// The on/off toggle due at `self.on.next`.
    fn flip_on(&mut self, spec: &AvailSpec, rng: &mut SimRng) {
        match &spec.on_off {
            OnOff::Always => self.on = Toggle::ALWAYS_ON,
            OnOff::Process { on_frac, lambda } => rp_flip(&mut self.on, *on_frac, *lambda, rng),
            OnOff::Periods { on, off } => {
                self.on.on = !self.on.on;
                let d = if self.on.on { on } else { off }.sample(rng);
                self.on.next = after(self.on.next, d);
            }
            OnOff::Trace(t) => {
                let list = t.intervals(self.trace_host as usize);
                if self.on.on {
                    // The interval ended: wait for the next one.
                    self.cursor += 1;
                    self.on = match list.get(self.cursor as usize) {
                        Some(&(s, _)) => Toggle { on: false, next: s },
                        None => Toggle::ALWAYS_OFF,
                    };
                } else {
                    self.on = match list.get(self.cursor as usize) {
                        Some(&(_, e)) => Toggle { on: true, next: e },
                        None => Toggle::ALWAYS_OFF,
                    };
                }
            }
        }
    }

    /// Integrates the statistics from `self.last` to `t` while the host is on:
    /// `frac = frac*w2 + w1*state`, `w1 = 1 - exp(-dt/alpha)` (spec client §3.5,
    /// §1.11). While the host is off the client is not running, so nothing moves: the
    /// statistics stay as the client last wrote them, and `self.last` stays at the
    /// time it stopped, for [`Self::client_start`].
    fn integrate(&mut self, t: Time, alpha: f64) {
        let dt = t - self.last;
        if dt <= 0 || !self.on.on {
            return;
        }
        self.last = t;
        let x = -(dt as f64) / alpha;
        let w2 = x.exp();
        let w1 = -x.exp_m1();
        let s = &mut self.stats;
        let ema = |f: f64, state: bool| f * w2 + if state { w1 } else { 0.0 };
        s.on_frac = ema(s.on_frac, true);
        s.active_frac = ema(s.active_frac, self.active.on);
        s.connected_frac = ema(s.connected_frac, self.connected.on);
    }

    /// The first update after the client starts again at `t`, covering the gap since
    /// it stopped: `on_frac *= w2` (and, in the seed client, `active_frac` and
    /// `connected_frac` too), except that a gap of more than [`MAX_GAP`] counts as
    /// `dt = 0` and leaves the averages unchanged (spec client §3.5, §1.11).
    fn client_start(&mut self, t: Time, rule: TimeStatsRule) {
        let gap = t - self.last;
        self.last = t;
        if gap <= 0 || gap > MAX_GAP {
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
    /// the host is off only the on/off toggle counts; the active and connected
    /// toggles that fall in an off period are applied at the next `update`.
    pub(crate) fn next_change(&self) -> Time {
        if self.on.on {
            self.on.next.min(self.active.next).min(self.connected.next)
        } else {
            self.on.next
        }
    }

    /// Whether the host (the client) is running.
    pub(crate) fn is_on(&self) -> bool {
        self.on.on
    }

    /// Whether tasks may compute: on and computing allowed.
    pub fn computing(&self) -> bool {
        self.on.on && self.active.on
    }

    /// Whether the host can reach the network: on and connected.
    pub(crate) fn connected(&self) -> bool {
        self.on.on && self.connected.on
    }

    /// The time statistics as of the last `update`.
    pub(crate) fn time_stats(&self) -> TimeStats {
        self.stats
    }

    /// The time statistics as the client would have them at `now` (≥ the last
    /// `update`), without changing the state: valid because the host is woken at
    /// every change of its on/active/connected states, so none lies in between.
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
