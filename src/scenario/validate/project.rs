//! The `[project.NAME]` tables (docs/scenario.md, "`[project.NAME]`"): the
//! server's `config.xml` (spec backend §2.9), daemon periods (§2.0), outages, the
//! assimilator, file deleter and db_purge settings (§2.6–2.8) and pinned draws; and
//! each project's apps (§1.4) with what belongs to an app: its versions, its
//! workunit template as `create_work` checks it (§2.1 step 2), its work generator
//! (§2.1 step 4) and its validator (§2.5, §6). Everything that describes the server
//! side of one project is checked here, in one pass per project.

use super::{Checker, is_identifier};
use crate::base::dist::Dist;
use crate::client::config::Policy;
use crate::scenario::schema::{
    AppVersionConfig, DaemonOutage, ProjectConfig, WorkGenConfig, WuTemplate,
};
use crate::server::config::WorkGenMode;

impl Checker<'_> {
    pub(super) fn projects(&mut self) {
        if self.file.project.is_empty() {
            self.push(
                "project",
                "the scenario defines no project; expected at least one `[project.NAME]` table",
            );
        }
        // The world numbers its projects in 16 bits (`ProjectState::project`); the
        // last number, `u16::MAX`, marks a host's background projects
        // (`client::background::BACKGROUND`).
        let max = u16::MAX as usize;
        if self.file.project.len() > max {
            self.push(
                "project",
                format!(
                    "{} projects; expected at most {max}",
                    self.file.project.len()
                ),
            );
        }
        for (name, p) in &self.file.project {
            let prefix = format!("project.{name}");
            if !is_identifier(name) {
                self.push(
                    prefix.clone(),
                    format!(
                        "project name `{name}` is not valid; expected letters, digits, `_` or `-`"
                    ),
                );
            }
            self.project(&prefix, p);
        }
    }

    fn project(&mut self, prefix: &str, p: &ProjectConfig) {
        for (k, o) in p.outage.iter().enumerate() {
            self.duration_non_negative(&format!("{prefix}.outage.{k}.start"), o.start);
            self.duration_positive(&format!("{prefix}.outage.{k}.duration"), o.duration);
            if let Some(d) = o.maintenance_delay {
                let path = format!("{prefix}.outage.{k}.maintenance_delay");
                self.duration_non_negative(&path, d);
                if o.kind != crate::server::config::OutageKind::Down {
                    self.push(
                        path,
                        "maintenance_delay is the reply of a down scheduler; expected \
                         kind = \"down\" (an unreachable server sends no reply)",
                    );
                }
            }
        }
        for (k, o) in p.daemon_outage.iter().enumerate() {
            self.daemon_outage(&format!("{prefix}.daemon_outage.{k}"), o);
        }
        self.apps(prefix, p);
        if let Some(f) = &p.files {
            self.files(&format!("{prefix}.files"), f);
        }
        let several = p.app.len() > 1;
        for (k, a) in p.app.iter().enumerate() {
            if let Some(f) = &a.files {
                let at = if several {
                    format!("{prefix}.app.{k}.files")
                } else {
                    format!("{prefix}.app.files")
                };
                self.files(&at, f);
            }
        }
        if let Some(d) = &p.data_server {
            let at = format!("{prefix}.data_server");
            for (key, v) in [("download", d.download), ("upload", d.upload)] {
                if let Some(v) = v {
                    self.positive(&format!("{at}.{key}"), v);
                }
            }
            for (k, o) in d.outage.iter().enumerate() {
                self.duration_non_negative(&format!("{at}.outage.{k}.start"), o.start);
                self.duration_positive(&format!("{at}.outage.{k}.duration"), o.duration);
            }
            if let Some(n) = d.max_connections {
                self.min_int(&format!("{at}.max_connections"), n.into(), 1);
            }
        }
        if let Some(sv) = &p.server {
            let at = format!("{prefix}.server");
            self.min_int(
                &format!("{at}.scheduler_processes"),
                sv.scheduler_processes.into(),
                1,
            );
            self.dist(&format!("{at}.rpc_service_time"), &sv.rpc_service_time);
            self.non_negative(&format!("{at}.per_job_reported"), sv.per_job_reported);
            self.non_negative(&format!("{at}.per_job_sent"), sv.per_job_sent);
        }

        let c = &p.config;
        let pc = format!("{prefix}.config");
        for (key, d) in [
            ("report_grace_period", c.report_grace_period),
            ("delete_delay", c.delete_delay),
            ("min_sendwork_interval", c.min_sendwork_interval),
            ("reliable_max_avg_turnaround", c.reliable_max_avg_turnaround),
            ("next_rpc_delay", c.next_rpc_delay),
            ("maintenance_delay", c.maintenance_delay),
        ] {
            self.duration_non_negative(&format!("{pc}.{key}"), d);
        }
        self.min_int(
            &format!("{pc}.daily_result_quota"),
            c.daily_result_quota.into(),
            0,
        );
        self.min_int(
            &format!("{pc}.max_wus_to_send"),
            c.max_wus_to_send.into(),
            0,
        );
        self.min_int(&format!("{pc}.max_ncpus"), c.max_ncpus.into(), 1);
        self.min_int(
            &format!("{pc}.max_wus_in_progress"),
            c.max_wus_in_progress.into(),
            0,
        );
        self.min_int(
            &format!("{pc}.shmem_work_items"),
            c.shmem_work_items.into(),
            1,
        );
        self.probability(
            &format!("{pc}.reliable_reduced_delay_bound"),
            c.reliable_reduced_delay_bound,
        );

        self.min_int(&format!("{pc}.gpu_multiplier"), c.gpu_multiplier.into(), 0);

        let d = &p.daemons;
        let pd = format!("{prefix}.daemons");
        for (key, v) in [
            ("transitioner", d.transitioner),
            ("validator", d.validator),
            ("assimilator", d.assimilator),
            ("file_deleter", d.file_deleter),
            ("db_purge", d.db_purge),
            ("feeder", d.feeder),
            ("work_generator", d.work_generator),
        ] {
            self.duration_non_negative(&format!("{pd}.{key}"), v);
        }

        self.probability(
            &format!("{prefix}.file_deleter.failure_prob"),
            p.file_deleter.failure_prob,
        );
        let a = &p.assimilator;
        let pa = format!("{prefix}.assimilator");
        self.probability(&format!("{pa}.defer_prob"), a.defer_prob);
        self.probability(&format!("{pa}.error_prob"), a.error_prob);
        if a.defer_prob + a.error_prob > 1.0 {
            self.push(
                format!("{pa}.error_prob"),
                format!(
                    "defer_prob + error_prob = {} exceeds 1; expected the two \
                     probabilities of one handler call to sum to at most 1",
                    a.defer_prob + a.error_prob
                ),
            );
        }
        self.duration_non_negative(&format!("{prefix}.db_purge.min_age"), p.db_purge.min_age);

        let pin = &p.pin;
        let pp = format!("{prefix}.pin");
        for (key, x) in [
            ("trust", pin.trust),
            ("day_offset", pin.day_offset),
            ("file_delete", pin.file_delete),
        ] {
            if let Some(x) = x {
                self.unit_draw(&format!("{pp}.{key}"), x);
            }
        }
        if let Some(s) = pin.slot_offset
            && s >= c.shmem_work_items
            && c.shmem_work_items > 0
        {
            self.push(
                format!("{pp}.slot_offset"),
                format!(
                    "slot {s} is outside the feeder cache; expected a slot < config.shmem_work_items ({})",
                    c.shmem_work_items
                ),
            );
        }
    }

    /// A daemon outage has one schedule: a window, `start` before `end`, or a crash
    /// process, `mtbf` > 0 and a `repair` time that is always > 0.
    fn daemon_outage(&mut self, at: &str, o: &DaemonOutage) {
        let window = o.start.is_some() || o.end.is_some();
        let crashes = o.mtbf.is_some() || o.repair.is_some();
        if window && crashes {
            let key = if o.mtbf.is_some() { "mtbf" } else { "repair" };
            self.push(
                format!("{at}.{key}"),
                "a window (start, end) and a crash process (mtbf, repair) in one outage; \
                 expected one of the two (each in a [[project.NAME.daemon_outage]] of its own)",
            );
            return;
        }
        if !window && !crashes {
            self.push(
                at,
                "no schedule; expected a window, start and end (e.g. start = \"10d\", \
                 end = \"11d\"), or a crash process, mtbf and repair (e.g. mtbf = \"30d\", \
                 repair = \"2h\")",
            );
            return;
        }
        if window {
            match (o.start, o.end) {
                (Some(start), Some(end)) => {
                    self.duration_non_negative(&format!("{at}.start"), start);
                    if end.get() <= start.get() {
                        self.push(
                            format!("{at}.end"),
                            format!(
                                "end = {} s is not after start = {} s; expected end > start",
                                end.get(),
                                start.get()
                            ),
                        );
                    }
                }
                (None, _) => self.push(
                    format!("{at}.start"),
                    "a window without start; expected start and end, e.g. start = \"10d\"",
                ),
                (_, None) => self.push(
                    format!("{at}.end"),
                    "a window without end; expected start and end, e.g. end = \"11d\"",
                ),
            }
            return;
        }
        match o.mtbf {
            Some(m) => self.duration_positive(&format!("{at}.mtbf"), m),
            None => self.push(
                format!("{at}.mtbf"),
                "a crash process without mtbf; expected the mean time between failures, \
                 e.g. mtbf = \"30d\"",
            ),
        }
        let path = format!("{at}.repair");
        match &o.repair {
            Some(r) if r.problem().is_some() => self.dist(&path, r),
            Some(r) if !r.always_positive() => self.push(
                path,
                "repair can be 0 or negative; expected a duration > 0 or a distribution of \
                 positive values (lognormal, exponential, weibull, pareto, or lower > 0)",
            ),
            Some(_) => {}
            None => self.push(
                path,
                "a crash process without repair; expected how long a repair takes, e.g. \
                 repair = \"2h\" or a distribution",
            ),
        }
    }

    /// The project's apps (spec backend §1.4), each with the sections of its own
    /// daemons: its workunit template, work generator and validator. A one-app
    /// project may give them at project level (`[project.NAME.workunit]`) or in its
    /// app; with several apps each app gives its own, and a project-level one would
    /// be ambiguous (which app's? all, key by key or whole?), so it is refused.
    fn apps(&mut self, prefix: &str, p: &ProjectConfig) {
        let several = p.app.len() > 1;
        let pa = |k: usize| {
            if several {
                format!("{prefix}.app.{k}")
            } else {
                format!("{prefix}.app")
            }
        };
        // Each section: given at project level, and in the (first) app.
        let first = &p.app[0];
        for (section, at_project, in_app) in [
            ("workunit", p.workunit.is_some(), first.workunit.is_some()),
            (
                "work_generator",
                p.work_generator.is_some(),
                first.work_generator.is_some(),
            ),
            (
                "validator",
                p.validator.is_some(),
                first.validator.is_some(),
            ),
        ] {
            if !at_project {
                continue;
            }
            if several {
                self.push(
                    format!("{prefix}.{section}"),
                    format!(
                        "a project with several apps has no project-level {section}; expected \
                         a [{prefix}.app.{section}] table in each [[{prefix}.app]]"
                    ),
                );
            } else if in_app {
                self.push(
                    format!("{}.{section}", pa(0)),
                    format!(
                        "{section} is given both here and as [{prefix}.{section}]; expected one \
                         of the two"
                    ),
                );
            }
        }
        for (k, s) in p.apps().enumerate() {
            let pa = pa(k);
            let a = s.app;
            if several && !is_identifier(&a.name) {
                self.push(
                    format!("{pa}.name"),
                    format!(
                        "app name `{}` is not valid; expected letters, digits, `_` or `-`",
                        a.name
                    ),
                );
            }
            if let Some(j) = p.app[..k].iter().position(|o| o.name == a.name) {
                self.push(
                    format!("{pa}.name"),
                    format!(
                        "app {k} has the name of app {j} (`{}`); expected a distinct name for \
                         each app",
                        a.name
                    ),
                );
            }
            let section = |name: &str, own: bool| {
                if own {
                    format!("{pa}.{name}")
                } else {
                    format!("{prefix}.{name}")
                }
            };
            self.workunit(&section("workunit", a.workunit.is_some()), s.workunit);
            self.min_int(
                &format!("{pa}.target_nresults"),
                a.target_nresults.into(),
                0,
            );
            if !(0..=2).contains(&a.homogeneous_redundancy) {
                self.push(
                    format!("{pa}.homogeneous_redundancy"),
                    format!(
                        "{} is not a homogeneous redundancy type; expected 0 (off), 1 (fine) or 2 (coarse)",
                        a.homogeneous_redundancy
                    ),
                );
            }
            self.non_negative(&format!("{pa}.min_avg_pfc"), a.min_avg_pfc);
            self.probability(
                &format!("{pa}.wrong_output_collision_frac"),
                a.wrong_output_collision_frac,
            );
            self.app_versions(&pa, &a.version);
            self.multi_threaded_for_seed(prefix, &pa, &a.version);
            self.work_generator(
                &section("work_generator", a.work_generator.is_some()),
                s.work_generator,
            );
            let pv = section("validator", a.validator.is_some());
            let v = s.validator;
            // A fuzzy comparison with tolerance 0 is allowed: it equals bitwise.
            self.non_negative(&format!("{pv}.tolerance"), v.tolerance);
            self.non_negative(&format!("{pv}.max_granted_credit"), v.max_granted_credit);
            self.non_negative(&format!("{pv}.max_claimed_credit"), v.max_claimed_credit);
        }
    }

    /// A multi-threaded version needs a client that schedules CPUs, not jobs: the
    /// seed_debt client runs one job per CPU (spec client §1), so a group with it
    /// attached to this project is refused, as a seed group with GPUs is.
    fn multi_threaded_for_seed(&mut self, prefix: &str, pa: &str, versions: &[AppVersionConfig]) {
        let name = prefix.strip_prefix("project.").unwrap_or(prefix);
        let seed_group = self.file.host_group.iter().find(|g| {
            g.policy.unwrap_or(self.file.client.policy) == Policy::SeedDebt
                && self.attaches(g, name)
        });
        let Some(g) = seed_group else {
            return;
        };
        if let Some(k) = versions.iter().position(|v| v.avg_ncpus > 1.0) {
            let group = g.name.clone();
            self.push(
                format!("{pa}.version.{k}.avg_ncpus"),
                format!(
                    "a multi-threaded version, but host group `{group}` attaches to this \
                     project with the seed_debt client, which runs one-CPU jobs only (spec \
                     client §1); expected avg_ncpus <= 1, or policy = \"modern_rec\""
                ),
            );
        }
    }

    /// A work generator's mode and times (spec backend §2.1 step 4).
    fn work_generator(&mut self, pg: &str, g: &WorkGenConfig) {
        self.duration_non_negative(&format!("{pg}.start"), g.start);
        match g.mode {
            WorkGenMode::Rate if g.interval.get() <= 0 => self.push(
                format!("{pg}.interval"),
                format!(
                    "mode = \"rate\" needs interval > 0, got {} s; expected a duration such as \"1h\"",
                    g.interval.get()
                ),
            ),
            WorkGenMode::Batch if g.count == 0 => self.push(
                format!("{pg}.count"),
                "mode = \"batch\" needs count > 0; expected the number of workunits to create",
            ),
            WorkGenMode::Batches if g.count == 0 => self.push(
                format!("{pg}.count"),
                "mode = \"batches\" needs count > 0; expected the number of jobs in each batch",
            ),
            WorkGenMode::Batches if g.interval.get() <= 0 => self.push(
                format!("{pg}.interval"),
                format!(
                    "mode = \"batches\" needs interval > 0, got {} s; expected the time between two batches, such as \"1d\"",
                    g.interval.get()
                ),
            ),
            _ => self.duration_non_negative(&format!("{pg}.interval"), g.interval),
        }
        if g.mode != WorkGenMode::Batches && !g.size.is_one() {
            self.push(
                format!("{pg}.size"),
                "`size` is the job size of mode = \"batches\"; expected it only with that mode (other modes take their sizes from the workunit template's `true_size`)",
            );
        }
        self.job_size(&format!("{pg}.size"), &g.size);
    }

    /// A batch's job-size factor (spec backend §1.5): a valid distribution of
    /// positive values, since it multiplies `rsc_fpops_est`.
    pub(super) fn job_size(&mut self, at: &str, size: &Dist) {
        if let Some(m) = size.problem() {
            self.push(at.to_string(), m);
        } else if !size.always_positive() {
            self.push(
                at.to_string(),
                "a job size can draw a factor <= 0; expected a number > 0 or a distribution of positive values (lognormal, exponential, weibull, pareto, or lower > 0)",
            );
        }
    }

    /// An app's versions (spec backend §1.4): known platforms, positive usage and
    /// speed, one version per (platform, plan class) as BOINC's APP_VERSION table.
    fn app_versions(&mut self, pa: &str, versions: &[AppVersionConfig]) {
        use crate::server::resource::PLATFORMS;
        for (k, v) in versions.iter().enumerate() {
            let pv = format!("{pa}.version.{k}");
            if !v.platform.is_empty() && !PLATFORMS.contains(&v.platform.as_str()) {
                self.push(
                    format!("{pv}.platform"),
                    format!(
                        "unknown platform `{}`; expected \"\" (every host's own) or one of: {}",
                        v.platform,
                        PLATFORMS.join(", ")
                    ),
                );
            }
            self.positive(&format!("{pv}.avg_ncpus"), v.avg_ncpus);
            self.positive(&format!("{pv}.flops_scale"), v.flops_scale);
            self.positive(
                &format!("{pv}.flops_estimate_error"),
                v.flops_estimate_error,
            );
            if let Some(c) = &v.coproc {
                self.positive(&format!("{pv}.coproc.count"), c.count);
            }
            if let Some(j) = versions[..k]
                .iter()
                .position(|o| o.platform == v.platform && o.plan_class == v.plan_class)
            {
                self.push(
                    format!("{pv}.plan_class"),
                    format!(
                        "version {k} has the platform and plan class of version {j} (\"{}\"); \
                         expected one version per platform and plan class",
                        v.plan_class
                    ),
                );
            }
        }
    }

    /// The template must pass `create_work`'s checks (spec backend §2.1 step 2), plus
    /// the convention `1 <= min_quorum <= target_nresults <= max_total_results`.
    fn workunit(&mut self, pw: &str, w: &WuTemplate) {
        let at = |k: &str| format!("{pw}.{k}");
        if w.min_quorum < 1 {
            self.push(
                at("min_quorum"),
                format!(
                    "min_quorum = {} is too small; expected an integer >= 1",
                    w.min_quorum
                ),
            );
        } else if w.min_quorum > w.target_nresults {
            self.push(
                at("min_quorum"),
                format!(
                    "min_quorum = {} is greater than target_nresults = {}; expected min_quorum <= target_nresults",
                    w.min_quorum, w.target_nresults
                ),
            );
        }
        for (key, v) in [
            ("target_nresults", w.target_nresults),
            ("max_error_results", w.max_error_results),
            ("max_total_results", w.max_total_results),
            ("max_success_results", w.max_success_results),
        ] {
            if v <= 0 {
                self.push(
                    at(key),
                    format!("{key} = {v}; expected an integer >= 1 (create_work rejects 0, spec backend §2.1)"),
                );
            }
        }
        if w.max_total_results < w.target_nresults {
            self.push(
                at("max_total_results"),
                format!(
                    "max_total_results = {} is less than target_nresults = {}; expected max_total_results >= target_nresults",
                    w.max_total_results, w.target_nresults
                ),
            );
        }
        if w.max_success_results > w.max_total_results {
            self.push(
                at("max_success_results"),
                format!(
                    "max_success_results = {} is greater than max_total_results = {}; expected max_success_results <= max_total_results (spec backend §2.1)",
                    w.max_success_results, w.max_total_results
                ),
            );
        }
        if w.max_error_results > w.max_total_results {
            self.push(
                at("max_error_results"),
                format!(
                    "max_error_results = {} is greater than max_total_results = {}; expected max_error_results <= max_total_results (spec backend §2.1)",
                    w.max_error_results, w.max_total_results
                ),
            );
        }
        if w.target_nresults > w.max_success_results {
            self.push(
                at("target_nresults"),
                format!(
                    "target_nresults = {} is greater than max_success_results = {}; expected target_nresults <= max_success_results (spec backend §2.1)",
                    w.target_nresults, w.max_success_results
                ),
            );
        }
        if w.delay_bound.get() <= 0 {
            self.push(
                at("delay_bound"),
                format!(
                    "delay_bound = {} s is not positive; expected a duration > 0, e.g. \"7d\"",
                    w.delay_bound.get()
                ),
            );
        }
        for (key, x) in [
            ("rsc_fpops_est", w.rsc_fpops_est),
            ("rsc_fpops_bound", w.rsc_fpops_bound),
            ("rsc_disk_bound", w.rsc_disk_bound),
        ] {
            if self.finite(&at(key), x) && x <= 0.0 {
                self.push(
                    at(key),
                    format!("{key} = {x}; expected a number > 0 (create_work rejects 0, spec backend §2.1)"),
                );
            }
        }
        self.non_negative(&at("rsc_memory_bound"), w.rsc_memory_bound);
        if let Some(m) = w.true_size.problem() {
            self.push(at("true_size"), m);
        } else if !w.true_size.always_positive() {
            self.push(
                at("true_size"),
                "true_size can draw a factor <= 0; expected a number > 0 or a distribution of positive values (lognormal, exponential, weibull, pareto, or lower > 0)",
            );
        }
    }

    /// A `files` table (spec client §8.1): sizes are bytes, so a distribution's
    /// parameters must be valid and a fixed size must not be negative (a drawn size
    /// below 0 counts as 0).
    fn files(&mut self, at: &str, f: &crate::scenario::schema::FilesConfig) {
        for (key, d) in [("input", &f.input), ("output", &f.output)] {
            let path = format!("{at}.{key}");
            self.dist(&path, d);
            if let crate::base::dist::Kind::Fixed { value } = d.kind {
                self.non_negative(&path, value.0);
            }
        }
        self.non_negative(&format!("{at}.sticky_bytes"), f.sticky_bytes);
        if f.sticky_bytes > 0.0 && f.sticky_files == 0 {
            self.push(
                format!("{at}.sticky_bytes"),
                "sticky_bytes without sticky files; expected sticky_files >= 1 too",
            );
        }
    }
}
