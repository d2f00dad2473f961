//! The `[[host_group]]` tables (docs/scenario.md, "`[[host_group]]`"): host
//! counts, the project or `shares` a group attaches to, probabilities and
//! availability models, its GPUs, and `[host_group.start]`, the clients' starting
//! state (spec client §1.1, §2.3), which must match the group's projects and its
//! client policy. The attributes a group shares with a named host are checked by
//! `Checker::host_attrs` in the parent module.

use super::{Checker, HostAttrs, host_attrs};
use crate::client::background::MAX_BACKGROUND;
use crate::client::config::Policy;
use crate::scenario::schema::{BackgroundSection, HostGroup};
use crate::scenario::start::ClientStart;

/// A policy's name as the scenario writes it.
fn policy_name(p: Policy) -> &'static str {
    match p {
        Policy::SeedDebt => "seed_debt",
        Policy::ModernRec => "modern_rec",
    }
}

impl Checker<'_> {
    /// A host group's GPUs: positive counts and speeds, one entry per type, and a
    /// client policy that can run GPU jobs.
    fn coprocs(&mut self, prefix: &str, g: &HostGroup) {
        for (k, c) in g.coproc.iter().enumerate() {
            let pc = format!("{prefix}.coproc.{k}");
            self.min_int(&format!("{pc}.count"), c.count.into(), 1);
            if let Some(m) = c.peak_flops.problem() {
                self.push(format!("{pc}.peak_flops"), m);
            } else if c.peak_flops.is_fixed() && c.peak_flops.mean() <= 0.0 {
                self.push(
                    format!("{pc}.peak_flops"),
                    format!("peak_flops = {}; expected FLOPS > 0", c.peak_flops.mean()),
                );
            }
            if g.coproc[..k].iter().any(|o| o.kind == c.kind) {
                self.push(
                    format!("{pc}.type"),
                    "this GPU type is listed twice; expected one entry per type, with its count",
                );
            }
        }
        self.probability(&format!("{prefix}.gpu_active_frac"), g.gpu_active_frac);
        let policy = g.policy.unwrap_or(self.file.client.policy);
        if !g.coproc.is_empty() && policy == Policy::SeedDebt {
            self.push(
                format!("{prefix}.coproc"),
                "the seed_debt client runs CPU jobs only (spec client §1); expected no \
                 coproc in this group, or policy = \"modern_rec\"",
            );
        }
    }

    /// `[host_group.start]`: fractions in (0, 1], projects the group attaches to,
    /// each policy's own credit average, non-negative amounts and times.
    fn client_start(&mut self, prefix: &str, g: &HostGroup, s: &ClientStart) {
        for (key, x) in [
            ("on_frac", s.on_frac),
            ("active_frac", s.active_frac),
            ("connected_frac", s.connected_frac),
        ] {
            let path = format!("{prefix}.{key}");
            if let Some(x) = x
                && self.finite(&path, x)
                && !(x > 0.0 && x <= 1.0)
            {
                self.push(path, format!("{key} = {x}; expected a fraction in (0, 1]"));
            }
        }
        for (k, j) in s.job.iter().enumerate() {
            let path = format!("{prefix}.job.{k}");
            // The group's project when it has no shares (its only project if unnamed).
            let only = (self.file.project.len() == 1)
                .then(|| self.file.project.keys().next())
                .flatten()
                .map_or("", |n| n.as_str());
            let group_project = if g.project.is_empty() {
                only
            } else {
                g.project.as_str()
            };
            let name = if j.project.is_empty() {
                group_project
            } else {
                j.project.as_str()
            };
            if g.shares.is_empty() && name != group_project {
                self.push(
                    format!("{path}.project"),
                    format!("project `{name}` is not one this host group attaches to; expected `{group_project}`"),
                );
            } else if !g.shares.is_empty() && !g.shares.contains_key(name) {
                self.push(
                    format!("{path}.project"),
                    format!("project `{name}` is not one this host group attaches to; expected one of its `shares`"),
                );
            }
            self.app_ref(&format!("{path}.app"), name, &j.app);
            self.duration_non_negative(&format!("{path}.report_deadline"), j.report_deadline);
            let fp = format!("{path}.fraction_done");
            if self.finite(&fp, j.fraction_done) && !(0.0..1.0).contains(&j.fraction_done) {
                self.push(
                    fp,
                    format!(
                        "fraction_done = {}; expected a fraction in [0, 1)",
                        j.fraction_done
                    ),
                );
            }
        }
        let policy = g.policy.unwrap_or(self.file.client.policy);
        for (name, p) in &s.project {
            let path = format!("{prefix}.project.{name}");
            if !self.attaches(g, name) {
                self.push(
                    path.clone(),
                    format!("project `{name}` is not one this host group attaches to; expected a project of its `project` or `shares`"),
                );
            }
            for (key, x, wanted) in [
                ("rec", p.rec, Policy::ModernRec),
                ("exp_avg_cpu", p.exp_avg_cpu, Policy::SeedDebt),
            ] {
                let Some(x) = x else { continue };
                let kp = format!("{path}.{key}");
                if policy != wanted {
                    self.push(
                        kp,
                        format!(
                            "{key} is kept only by the {} policy; this group runs {}",
                            policy_name(wanted),
                            policy_name(policy)
                        ),
                    );
                } else {
                    self.non_negative(&kp, x);
                }
            }
            for (key, d) in [
                ("min_rpc_time", p.min_rpc_time),
                ("cpu_backoff_time", p.cpu_backoff_time),
                ("cpu_backoff_interval", p.cpu_backoff_interval),
            ] {
                if let Some(d) = d {
                    self.duration_non_negative(&format!("{path}.{key}"), d);
                }
            }
            if policy == Policy::SeedDebt {
                for (key, given) in [
                    ("cpu_backoff_time", p.cpu_backoff_time.is_some()),
                    ("cpu_backoff_interval", p.cpu_backoff_interval.is_some()),
                ] {
                    if given {
                        self.push(
                            format!("{path}.{key}"),
                            format!("{key} is kept only by the modern_rec policy; this group runs seed_debt"),
                        );
                    }
                }
            }
        }
    }

    pub(super) fn host_group(&mut self, i: usize, g: &HostGroup) {
        let prefix = format!("host_group.{i}");
        if let Some(start) = &g.start {
            self.client_start(&format!("{prefix}.start"), g, start);
        }
        if g.count < 1 {
            self.push(
                format!("{prefix}.count"),
                "count = 0; expected at least 1 host",
            );
        }
        if g.shares.is_empty() {
            self.project_ref(&format!("{prefix}.project"), Some(g.project.as_str()));
        } else {
            for (name, share) in &g.shares {
                let path = format!("{prefix}.shares.{name}");
                if !self.file.project.contains_key(name) {
                    let known: Vec<&str> = self.file.project.keys().map(|k| k.as_str()).collect();
                    self.push(
                        path,
                        format!(
                            "unknown project `{name}`; expected one of: {}",
                            known.join(", ")
                        ),
                    );
                } else if self.finite(&path, *share) && *share < 0.0 {
                    self.push(path, format!("share = {share}; expected a share >= 0"));
                }
            }
            if g.shares.values().all(|s| *s <= 0.0) {
                self.push(
                    format!("{prefix}.shares"),
                    "every share is 0; expected at least one project with a positive share",
                );
            }
        }
        self.probability(&format!("{prefix}.detach_prob"), g.detach_prob);
        // A fixed probability must be one; a distribution's draws are clamped.
        for (key, d) in [
            ("error_prob", &g.error_prob),
            ("wrong_result_prob", &g.wrong_result_prob),
        ] {
            if d.is_fixed() && d.problem().is_none() {
                self.probability(&format!("{prefix}.{key}"), d.mean());
            }
        }
        let path = format!("{prefix}.connected_frac");
        if self.finite(&path, g.connected_frac)
            && !(g.connected_frac > 0.0 && g.connected_frac <= 1.0)
        {
            self.push(
                path,
                format!(
                    "connected_frac = {}; expected a fraction in (0, 1]",
                    g.connected_frac
                ),
            );
        }
        for (key, d) in [
            ("on_lambda", g.on_lambda),
            ("active_lambda", g.active_lambda),
            ("connected_lambda", g.connected_lambda),
        ] {
            self.duration_positive(&format!("{prefix}.{key}"), d);
        }
        let dists = [
            ("p_fpops", Some(&g.p_fpops)),
            ("error_prob", Some(&g.error_prob)),
            ("wrong_result_prob", Some(&g.wrong_result_prob)),
            ("arrival", Some(&g.arrival)),
            ("lifetime", g.lifetime.as_ref()),
            ("on_period", g.on_period.as_ref()),
            ("off_period", g.off_period.as_ref()),
        ];
        for (key, d) in dists {
            if let Some(m) = d.and_then(|d| d.problem()) {
                self.push(format!("{prefix}.{key}"), m);
            }
        }
        if g.p_fpops.is_fixed() && g.p_fpops.mean() <= 0.0 {
            self.push(
                format!("{prefix}.p_fpops"),
                format!("p_fpops = {}; expected FLOPS > 0", g.p_fpops.mean()),
            );
        }
        match (&g.on_period, &g.off_period) {
            (Some(_), None) => self.push(
                format!("{prefix}.off_period"),
                "on_period is given without off_period; expected both or neither",
            ),
            (None, Some(_)) => self.push(
                format!("{prefix}.on_period"),
                "off_period is given without on_period; expected both or neither",
            ),
            _ => {}
        }
        if g.trace.is_some() && (g.on_period.is_some() || g.on_frac < 1.0) {
            self.push(
                format!("{prefix}.trace"),
                "a trace replaces on_frac and on_period/off_period; expected only one availability model",
            );
        }
        if g.on_period.is_some() && g.on_frac < 1.0 {
            self.push(
                format!("{prefix}.on_frac"),
                "on_frac < 1 together with on_period/off_period; expected only one on/off model",
            );
        }
        self.coprocs(&prefix, g);
        if let Some(b) = &g.background {
            self.background(&format!("{prefix}.background"), b);
        }
        if let Some(p) = &g.prefs {
            for (key, d) in p.keys() {
                if let Some(m) = d.and_then(|d| d.problem()) {
                    self.push(format!("{prefix}.prefs.{key}"), m);
                }
            }
        }
        self.host_attrs(&prefix, host_attrs!(g, 1e9));
    }

    /// `[host_group.background]`: a drawn count or a list (not both), valid
    /// distributions, exactly one job size for every project, and fixed values that
    /// make sense (a count of at most 64, shares >= 0, jobs and delay bounds > 0);
    /// drawn values are clamped instead.
    fn background(&mut self, prefix: &str, b: &BackgroundSection) {
        let dists = [
            ("projects", b.projects.as_ref()),
            ("share", Some(&b.share)),
            ("job_flops", b.job_flops.as_ref()),
            ("job_duration", b.job_duration.as_ref()),
            ("delay_bound", Some(&b.delay_bound)),
        ];
        for (key, d) in dists {
            if let Some(d) = d {
                self.background_value(&format!("{prefix}.{key}"), key, d);
            }
        }
        if b.project.len() > MAX_BACKGROUND {
            self.push(
                format!("{prefix}.project"),
                format!(
                    "{} background projects; expected at most {MAX_BACKGROUND}",
                    b.project.len()
                ),
            );
        }
        let section_size =
            self.one_job_size(prefix, b.job_flops.is_some(), b.job_duration.is_some());
        match (&b.projects, b.project.is_empty()) {
            (Some(_), false) => self.push(
                format!("{prefix}.projects"),
                "projects is given with a [[host_group.background.project]] list; expected one of them",
            ),
            (None, true) => self.push(
                prefix.to_string(),
                "no background project; expected `projects` (a number or distribution) or a [[host_group.background.project]] list",
            ),
            _ => {}
        }
        if b.project.is_empty() {
            if !section_size {
                self.push(
                    prefix.to_string(),
                    "no job size; expected `job_flops` (FLOPs) or `job_duration` (time at the host's speed)",
                );
            }
            return;
        }
        for (k, e) in b.project.iter().enumerate() {
            let path = format!("{prefix}.project.{k}");
            if let Some(x) = e.share {
                let sp = format!("{path}.share");
                if self.finite(&sp, x) && x < 0.0 {
                    self.push(sp, format!("share = {x}; expected a share >= 0"));
                }
            } else if !b.share.is_fixed() {
                self.push(
                    format!("{path}.share"),
                    "no share, and the section's `share` is a distribution; expected a share for each listed project",
                );
            }
            for (key, d) in [
                ("job_flops", e.job_flops.as_ref()),
                ("job_duration", e.job_duration.as_ref()),
                ("delay_bound", e.delay_bound.as_ref()),
            ] {
                if let Some(d) = d {
                    self.background_value(&format!("{path}.{key}"), key, d);
                }
            }
            let own = self.one_job_size(&path, e.job_flops.is_some(), e.job_duration.is_some());
            if !own && !section_size {
                self.push(
                    path,
                    "no job size; expected `job_flops` or `job_duration` here or in [host_group.background]",
                );
            }
        }
    }

    /// One distribution of `[host_group.background]` at `path` (key `key`): valid,
    /// and a fixed value in its range.
    fn background_value(&mut self, path: &str, key: &str, d: &crate::base::dist::Dist) {
        if let Some(m) = d.problem() {
            self.push(path, m);
            return;
        }
        if !d.is_fixed() {
            return;
        }
        let x = d.mean();
        let bad = match key {
            "projects" => (!(0.0..=MAX_BACKGROUND as f64).contains(&x))
                .then(|| format!("a number of projects from 0 to {MAX_BACKGROUND}")),
            "share" => (x < 0.0).then(|| "a share >= 0".to_string()),
            _ => (x <= 0.0).then(|| "a value > 0".to_string()),
        };
        if let Some(want) = bad {
            self.push(path, format!("{key} = {x}; expected {want}"));
        }
    }

    /// Whether a job size is given at `path`; both at once is an error.
    fn one_job_size(&mut self, path: &str, flops: bool, duration: bool) -> bool {
        if flops && duration {
            self.push(
                format!("{path}.job_duration"),
                "job_flops and job_duration are both given; expected one job size",
            );
        }
        flops || duration
    }
}
