//! The `[[host_group]]` tables (docs/scenario.md, "`[[host_group]]`"): host
//! counts, the project or `shares` a group attaches to, probabilities and
//! availability models, its GPUs, and `[host_group.start]`, the clients' starting
//! state (spec client §1.1, §2.3), which must match the group's projects and its
//! client policy. The attributes a group shares with a named host are checked by
//! `Checker::host_attrs` in the parent module.

use super::{Checker, HostAttrs, host_attrs};
use crate::client::availability::daily::MAX_OFFSET_HOURS;
use crate::client::background::MAX_BACKGROUND;
use crate::client::config::Policy;
use crate::scenario::schema::{
    AvailabilitySection, BackgroundSection, COUNT_UNSET, ClockTime, Count, DailySection, HostGroup,
    HostsMode, ModelKeys, ZoneSpec,
};
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
            match &c.count {
                Count::Fixed(n) => self.min_int(&format!("{pc}.count"), *n, 1),
                Count::Dist(d) => self.dist(&format!("{pc}.count"), d),
            }
            self.probability(&format!("{pc}.probability"), c.probability);
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

    /// The importer keys (docs/population.md, "A project's own hosts"): each only
    /// with the file it applies to, one source of hosts per group, and a count only
    /// where the group does not take it from the file.
    fn imports(&mut self, prefix: &str, g: &HostGroup) {
        let replay = g.hosts_mode.unwrap_or_default() == HostsMode::Replay;
        if g.hosts_file.is_none() {
            for (key, given) in [
                ("hosts_mode", g.hosts_mode.is_some()),
                ("hosts_start", g.hosts_start.is_some()),
            ] {
                if given {
                    self.push(
                        format!("{prefix}.{key}"),
                        format!("{key} applies to a host export; expected hosts_file too"),
                    );
                }
            }
        } else {
            if g.client_state.is_some() {
                self.push(
                    format!("{prefix}.client_state"),
                    "a group takes its hosts from a host export or from a client state; expected only one of hosts_file and client_state",
                );
            }
            if replay && g.count != COUNT_UNSET {
                self.push(
                    format!("{prefix}.count"),
                    "a replayed host export has one host per record; expected no count (or hosts_mode = \"resample\")",
                );
            }
            if !replay && g.hosts_start.is_some() {
                self.push(
                    format!("{prefix}.hosts_start"),
                    "hosts_start places a replay in time; expected hosts_mode = \"replay\", or no hosts_start",
                );
            }
            for (key, given) in [
                (
                    "p_fpops",
                    !(g.p_fpops.is_fixed() && g.p_fpops.mean() == 1e9),
                ),
                ("lifetime", g.lifetime.is_some() && replay),
                ("start", g.start.is_some()),
            ] {
                if given {
                    self.push(
                        format!("{prefix}.{key}"),
                        format!(
                            "{key} is taken from the host export; expected no {key} with hosts_file"
                        ),
                    );
                }
            }
        }
        if g.global_prefs.is_some() && g.client_state.is_none() {
            self.push(
                format!("{prefix}.global_prefs"),
                "global_prefs belong to a client state; expected client_state too",
            );
        }
        if g.client_state.is_some() && g.start.is_some() && g.import_data.client.is_none() {
            self.push(
                format!("{prefix}.start"),
                "the client state gives the starting state; expected no [host_group.start] with client_state",
            );
        }
    }

    pub(super) fn host_group(&mut self, i: usize, g: &HostGroup) {
        let prefix = format!("host_group.{i}");
        if let Some(start) = &g.start {
            self.client_start(&format!("{prefix}.start"), g, start);
        }
        self.imports(&prefix, g);
        if g.count == COUNT_UNSET {
            // Only a replayed host export or a client state gives the count.
            if !(g.client_state.is_some()
                || g.hosts_file.is_some() && g.hosts_mode.unwrap_or_default() == HostsMode::Replay)
            {
                self.push(
                    prefix.clone(),
                    "missing field `count`; expected the number of hosts",
                );
            }
        } else if g.count < 1 {
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
        if g.connected_frac.is_fixed() {
            self.fraction(&path, g.connected_frac.mean());
        } else {
            self.dist(&path, &g.connected_frac);
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
        if let Some(a) = &g.availability {
            self.availability(&format!("{prefix}.availability"), g, a);
        }
        self.coprocs(&prefix, g);
        if let Some(n) = &g.network {
            let at = format!("{prefix}.network");
            for (key, d) in [("download", &n.download), ("upload", &n.upload)] {
                if let Some(d) = d {
                    let path = format!("{at}.{key}");
                    self.dist(&path, d);
                    if d.problem().is_none() && !d.always_positive() {
                        self.push(
                            path,
                            "a bandwidth can draw a value <= 0; expected a number > 0 or a distribution of positive values (lognormal, exponential, weibull, pareto, or lower > 0)",
                        );
                    }
                }
            }
            self.non_negative(&format!("{at}.max_bytes_sec_down"), n.max_bytes_sec_down);
            self.non_negative(&format!("{at}.max_bytes_sec_up"), n.max_bytes_sec_up);
        }
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
        self.host_attrs(&prefix, host_attrs!(g, 1e9, true));
    }
}

impl Checker<'_> {
    /// `[host_group.availability]`: one model or classes, not both; not together with
    /// the group's own model keys when it gives a model or classes; classes with
    /// unique names and weights >= 0 that are not all 0; each model's keys checked.
    fn availability(&mut self, path: &str, g: &HostGroup, a: &AvailabilitySection) {
        let top = a.keys();
        let own = g.trace.is_some() || g.on_period.is_some() || g.on_frac < 1.0;
        if (top.has_model() || !a.class.is_empty()) && own {
            self.push(
                path.to_string(),
                "the group's own on_frac, on_period/off_period or trace is given too; \
                 expected one availability model (move it into [host_group.availability])",
            );
        }
        if top.has_model() && !a.class.is_empty() {
            self.push(
                format!("{path}.class"),
                "classes are given together with a model of the whole group; expected \
                 either the model keys or classes",
            );
        }
        self.model_keys(path, &top);
        for (k, c) in a.class.iter().enumerate() {
            let pc = format!("{path}.class.{k}");
            if c.name.is_empty() {
                self.push(format!("{pc}.name"), "empty name; expected a class name");
            } else if a.class[..k].iter().any(|o| o.name == c.name) {
                self.push(
                    format!("{pc}.name"),
                    format!("class `{}` is listed twice; expected unique names", c.name),
                );
            }
            if self.finite(&format!("{pc}.weight"), c.weight) && c.weight < 0.0 {
                self.push(
                    format!("{pc}.weight"),
                    format!("weight = {}; expected a weight >= 0", c.weight),
                );
            }
            self.model_keys(&pc, &c.keys());
        }
        if !a.class.is_empty() && !a.class.iter().any(|c| c.weight > 0.0) {
            self.push(
                format!("{path}.class"),
                "every class has weight 0; expected at least one weight > 0",
            );
        }
        if a.class.len() > 256 {
            self.push(
                format!("{path}.class"),
                format!("{} classes; expected at most 256", a.class.len()),
            );
        }
    }

    /// One model's keys: at most one model, each well formed.
    fn model_keys(&mut self, path: &str, k: &ModelKeys) {
        let models = [
            k.on_frac.is_some(),
            k.on_period.is_some() || k.off_period.is_some(),
            k.daily.is_some(),
        ];
        if models.iter().filter(|m| **m).count() > 1 {
            self.push(
                path.to_string(),
                "more than one of on_frac, on_period/off_period and daily; expected one on/off model",
            );
        }
        if let Some(f) = k.on_frac {
            self.fraction(&format!("{path}.on_frac"), f);
        }
        if let Some(l) = k.on_lambda {
            self.duration_positive(&format!("{path}.on_lambda"), l);
        }
        match (&k.on_period, &k.off_period) {
            (Some(_), None) => self.push(
                format!("{path}.off_period"),
                "on_period is given without off_period; expected both or neither",
            ),
            (None, Some(_)) => self.push(
                format!("{path}.on_period"),
                "off_period is given without on_period; expected both or neither",
            ),
            _ => {}
        }
        for (key, d) in [("on_period", &k.on_period), ("off_period", &k.off_period)] {
            if let Some(d) = d {
                self.dist(&format!("{path}.{key}"), d);
            }
        }
        if let Some(d) = &k.daily {
            self.daily(&format!("{path}.daily"), d);
        }
        if let Some(v) = &k.vacation {
            let pv = format!("{path}.vacation");
            for (key, d) in [("every", &v.every), ("length", &v.length)] {
                self.dist(&format!("{pv}.{key}"), d);
                if d.problem().is_none() && !d.always_positive() {
                    self.push(
                        format!("{pv}.{key}"),
                        format!("{key} can be 0 or negative; expected a duration > 0 (use lower to clamp)"),
                    );
                }
            }
        }
    }

    /// `daily = { ... }`: clock times within the day, a window that is not empty,
    /// probabilities in [0, 1] (not both 0), a jitter and a zone that make sense.
    fn daily(&mut self, path: &str, d: &DailySection) {
        let day = 86_400;
        let clock = |c: &mut Self, key: &str, t: Option<ClockTime>| {
            if let Some(ClockTime(s)) = t
                && !(0..=day).contains(&s)
            {
                c.push(
                    format!("{path}.{key}"),
                    format!("{key} = {s} s is outside the day; expected a clock time from 00:00 to 24:00"),
                );
            }
        };
        clock(self, "start", Some(d.start));
        clock(self, "end", Some(d.end));
        clock(self, "weekend_start", d.weekend_start);
        clock(self, "weekend_end", d.weekend_end);
        let ws = d.weekend_start.unwrap_or(d.start);
        let we = d.weekend_end.unwrap_or(d.end);
        let weekend_given = d.weekend_start.is_some() || d.weekend_end.is_some();
        let windows = [
            ("end", d.start, d.end, true),
            ("weekend_end", ws, we, weekend_given),
        ];
        for (key, s, e, _) in windows.into_iter().filter(|w| w.3) {
            if s.0 == e.0 {
                self.push(
                    format!("{path}.{key}"),
                    "the window ends when it starts; expected an end different from the \
                     start (for the whole day, use start = \"00:00\", end = \"24:00\")",
                );
            }
        }
        self.probability(&format!("{path}.weekday_prob"), d.weekday_prob);
        self.probability(&format!("{path}.weekend_prob"), d.weekend_prob);
        if d.weekday_prob <= 0.0 && d.weekend_prob <= 0.0 {
            self.push(
                format!("{path}.weekday_prob"),
                "weekday_prob and weekend_prob are both 0; expected a day the host is used",
            );
        }
        if let Some(j) = &d.jitter {
            self.dist(&format!("{path}.jitter"), j);
        }
        let pz = format!("{path}.utc_offset");
        let hours = |c: &mut Self, p: &str, h: f64| {
            if c.finite(p, h) && !(-MAX_OFFSET_HOURS..=MAX_OFFSET_HOURS).contains(&h) {
                c.push(
                    p.to_string(),
                    format!("utc_offset = {h} hours; expected hours east of UTC such as -5 or 5.5 (at most {MAX_OFFSET_HOURS} either way)"),
                );
            }
        };
        match &d.utc_offset {
            ZoneSpec::Hours(h) => {
                self.dist(&pz, h);
                if h.is_fixed() {
                    hours(self, &pz, h.mean());
                }
            }
            ZoneSpec::Weighted(m) => {
                for k in m.keys() {
                    match k.trim().parse::<f64>() {
                        Ok(h) => hours(self, &format!("{pz}.{k}"), h),
                        Err(_) => self.push(
                            format!("{pz}.{k}"),
                            format!("zone `{k}` is not a number of hours; expected keys such as \"-5\" or \"5.5\""),
                        ),
                    }
                }
                self.weights(&pz, m.iter().map(|(k, w)| (k.as_str(), *w)));
            }
        }
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
