//! Policy dispatch: one host event under its group's client policy (spec client §7,
//! `[client] policy`).
//!
//! The layering is one way: [`host`](super::host) is a host's state and the
//! mechanics both policies share; [`seed`] (spec client §1) and [`modern`] (§2–3)
//! each drive a host through it; this module depends on all three and is the only
//! one that names both policies. The host never names a policy, so a policy can
//! change without touching the host, and another policy is one more arm here.

use super::config::Policy;
use super::host::{ClientHost, GroupCtx, ServerLink};
use super::{modern, seed};
use crate::engine::Time;

impl ClientHost {
    /// Runs one host event at `now` under the group's policy and returns the time of
    /// the host's next event (`Time::MAX`: none). Whatever the policy, the host wakes
    /// again no later than its next availability change and never at `now` itself.
    /// A failure on the server side comes back as the link's error, unchanged.
    pub(crate) fn wake<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        g: &GroupCtx,
        server: &mut S,
    ) -> Result<Time, S::Error> {
        let next = match g.cfg.policy {
            Policy::SeedDebt => seed::wake(self, now, g, server)?,
            Policy::ModernRec => modern::wake(self, now, g, server)?,
        };
        Ok(next.min(self.avail.next_change()).max(now + 1))
    }
}
