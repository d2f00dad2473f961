//! The `[[host]]` tables (docs/scenario.md, "`[[host]]`"): named hosts that
//! scripted events and expects refer to, so each needs a unique, non-empty name and
//! a known project. Their starting host app version counters (`hav`: adaptive
//! replication and quotas) and pinned day offset (spec backend §2.4.1 step 5) are
//! checked here; their host attributes are checked as a group's are.

use super::{Checker, HostAttrs, host_attrs};
use std::collections::BTreeMap;

impl Checker<'_> {
    pub(super) fn hosts(&mut self) {
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, h) in self.file.host.iter().enumerate() {
            let prefix = format!("host.{i}");
            if h.name.is_empty() {
                self.push(
                    format!("{prefix}.name"),
                    "empty host name; expected a name such as \"H1\"",
                );
            } else if let Some(j) = first.insert(h.name.as_str(), i) {
                self.push(
                    format!("{prefix}.name"),
                    format!(
                        "duplicate host name `{}` (also host.{j}); expected unique names",
                        h.name
                    ),
                );
            }
            self.project_ref(&format!("{prefix}.project"), Some(h.project.as_str()));
            if let Some(hav) = &h.hav {
                for (key, v) in [
                    ("consecutive_valid", hav.consecutive_valid),
                    ("max_jobs_per_day", hav.max_jobs_per_day),
                    ("n_jobs_today", hav.n_jobs_today),
                ] {
                    self.min_int(&format!("{prefix}.hav.{key}"), v.into(), 0);
                }
            }
            if let Some(x) = h.day_offset {
                self.unit_draw(&format!("{prefix}.day_offset"), x);
            }
            self.host_attrs(&prefix, host_attrs!(h, h.p_fpops, false));
        }
    }
}
