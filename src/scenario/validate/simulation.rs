//! The `[simulation]` section (docs/scenario.md, "`[simulation]`"): a run name that
//! can name the output folder, a duration that fits BOINC's 32-bit times, and a
//! `tie_order` that orders all eight actors at equal timestamps (spec backend §2.0).

use super::{Checker, daemon_name};
use crate::scenario::schema::Daemon;
use std::collections::BTreeMap;

impl Checker<'_> {
    pub(super) fn simulation(&mut self) {
        let s = &self.file.simulation;
        if s.name.contains(['/', '\\']) || s.name == "." || s.name == ".." {
            self.push(
                "simulation.name",
                format!(
                    "`{}` cannot name the output folder; expected a name without `/` or `\\`",
                    s.name
                ),
            );
        }
        self.duration_positive("simulation.duration", s.duration);
        if s.duration.get() >= crate::server::types::INT_MAX {
            self.push(
                "simulation.duration",
                format!(
                    "duration = {} s does not fit BOINC's times, 32-bit ints of seconds; expected less than {} s (68 years)",
                    s.duration.get(),
                    crate::server::types::INT_MAX
                ),
            );
        }
        let mut seen: BTreeMap<Daemon, usize> = BTreeMap::new();
        for (i, d) in s.tie_order.iter().enumerate() {
            if let Some(first) = seen.insert(*d, i) {
                self.push(
                    format!("simulation.tie_order.{i}"),
                    format!(
                        "`{}` appears twice in tie_order (also entry {first}); expected each of the 8 daemons exactly once",
                        daemon_name(*d)
                    ),
                );
            }
        }
        let missing: Vec<&str> = Daemon::ALL
            .iter()
            .filter(|d| !seen.contains_key(d))
            .map(|d| daemon_name(*d))
            .collect();
        if !missing.is_empty() {
            let all: Vec<&str> = Daemon::ALL.iter().map(|d| daemon_name(*d)).collect();
            self.push(
                "simulation.tie_order",
                format!(
                    "tie_order is missing {}; expected a permutation of all 8: {}",
                    missing.join(", "),
                    all.join(", ")
                ),
            );
        }
    }
}
