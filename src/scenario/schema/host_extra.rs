//! A host group's background projects (`[host_group.background]`) and its hosts' own
//! preferences (`[host_group.prefs]`), as written in the scenario
//! (docs/scenario.md). They resolve into [`crate::client::background`]'s types.

use crate::base::dist::Dist;
use crate::client::background::{
    Background, BackgroundJobs, BackgroundProject, JobSize, PrefsDraw,
};
use serde::{Deserialize, Serialize};

/// `[host_group.background]`: the other projects each host of the group runs beside
/// the scenario's, whose servers are not simulated: drawn per host (`projects`,
/// `share`), or listed one by one (`[[host_group.background.project]]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSection {
    /// How many background projects a host has: a number or a distribution drawn
    /// once per host, rounded and clamped to 0–64. Not with a `project` list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects: Option<Dist>,
    /// Each background project's resource share, drawn per project (default 100).
    #[serde(default = "d_share")]
    pub share: Dist,
    /// A job's size in FLOPs, drawn per job. Exactly one of `job_flops` and
    /// `job_duration` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_flops: Option<Dist>,
    /// A job's size as computing time at the host's own speed (e.g. `"4h"`), drawn
    /// per job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_duration: Option<Dist>,
    /// A job's delay bound (deadline after sending), drawn per job (default 7 days).
    #[serde(default = "d_delay_bound")]
    pub delay_bound: Dist,
    /// Instead of `projects`: every host has exactly these background projects, in
    /// this order; each entry's keys left out are the section's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub project: Vec<BackgroundEntry>,
}

/// One listed background project (`[[host_group.background.project]]`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackgroundEntry {
    /// Its resource share (default: the section's `share`, which must then be a
    /// plain number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_flops: Option<Dist>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_duration: Option<Dist>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_bound: Option<Dist>,
}

fn d_share() -> Dist {
    Dist::fixed(100.0)
}
fn d_delay_bound() -> Dist {
    Dist::fixed(7.0 * 86_400.0)
}

impl BackgroundSection {
    /// The group's background projects (checked: exactly one job size is given
    /// for each; without one, jobs of one hour at the host's speed).
    pub fn resolve(&self) -> Background {
        let size = |flops: Option<Dist>, duration: Option<Dist>| match (flops, duration) {
            (Some(f), _) => JobSize::Flops(f),
            (None, Some(d)) => JobSize::Seconds(d),
            (None, None) => JobSize::Seconds(Dist::fixed(3600.0)),
        };
        if !self.project.is_empty() {
            let listed = self.project.iter().map(|e| {
                let own_size = e.job_flops.is_some() || e.job_duration.is_some();
                BackgroundProject {
                    share: e.share.unwrap_or(self.share.mean()),
                    jobs: BackgroundJobs {
                        size: if own_size {
                            size(e.job_flops, e.job_duration)
                        } else {
                            size(self.job_flops, self.job_duration)
                        },
                        delay_bound: e.delay_bound.unwrap_or(self.delay_bound),
                    },
                }
            });
            return Background::Listed(listed.collect());
        }
        Background::Drawn {
            projects: self.projects.unwrap_or(Dist::fixed(0.0)),
            share: self.share,
            jobs: BackgroundJobs {
                size: size(self.job_flops, self.job_duration),
                delay_bound: self.delay_bound,
            },
        }
    }
}

/// `[host_group.prefs]`: each host's own BOINC preferences, each a number or a
/// distribution drawn once per host; a key left out keeps the `[client]` value.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PrefsSection {
    /// Days, clamped to 0–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_buf_min_days: Option<Dist>,
    /// Days (modern client), clamped to 0–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_buf_additional_days: Option<Dist>,
    /// Days (seed client's high water mark), clamped to 0–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_buf_max_days: Option<Dist>,
    /// Percent of the CPUs the client uses, clamped to 0–100 (0: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ncpus_pct: Option<Dist>,
}

impl PrefsSection {
    pub fn resolve(&self) -> PrefsDraw {
        PrefsDraw {
            work_buf_min_days: self.work_buf_min_days,
            work_buf_additional_days: self.work_buf_additional_days,
            work_buf_max_days: self.work_buf_max_days,
            max_ncpus_pct: self.max_ncpus_pct,
        }
    }

    /// The keys and their distributions, in the order they are drawn.
    pub fn keys(&self) -> [(&'static str, Option<&Dist>); 4] {
        [
            ("work_buf_min_days", self.work_buf_min_days.as_ref()),
            (
                "work_buf_additional_days",
                self.work_buf_additional_days.as_ref(),
            ),
            ("work_buf_max_days", self.work_buf_max_days.as_ref()),
            ("max_ncpus_pct", self.max_ncpus_pct.as_ref()),
        ]
    }
}
