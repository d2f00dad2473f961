//! PLACEHOLDER being replaced.

use super::host::{ClientHost, GroupCtx, ServerLink};
use crate::engine::Time;

pub fn wake(host: &mut ClientHost, now: Time, g: &GroupCtx, _server: &mut dyn ServerLink) -> Time {
    host.begin_event(now, g);
    Time::MAX
}
