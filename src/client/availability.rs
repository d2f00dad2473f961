//! Host availability: whether the host is on, allowed to compute (active) and
//! connected, over time (spec client §3.5, §5.3). PLACEHOLDER being replaced.

use super::host::TimeStats;
use crate::engine::Time;
use crate::engine::rng::SimRng;

/// A host group's availability model.
#[derive(Clone, Debug, Default)]
pub struct AvailSpec {}

/// One host's availability state.
#[derive(Clone, Debug, Default)]
pub struct Availability {}

impl Availability {
    pub fn new(_spec: &AvailSpec, _slot: u32, _now: Time, _rng: &mut SimRng) -> Self {
        Self {}
    }
    pub fn update(&mut self, _now: Time, _spec: &AvailSpec, _rng: &mut SimRng) {}
    pub fn next_change(&self) -> Time {
        Time::MAX
    }
    pub fn is_on(&self) -> bool {
        true
    }
    pub fn computing(&self) -> bool {
        true
    }
    pub fn connected(&self) -> bool {
        true
    }
    pub fn time_stats(&self) -> TimeStats {
        TimeStats {
            on_frac: 1.0,
            active_frac: 1.0,
            connected_frac: 1.0,
        }
    }
}
