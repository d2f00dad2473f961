//! Checking `[[expect]]` entries against the state of the run: how a scenario
//! states the exact states BOINC would be in (spec backend §4 worked examples) so
//! that a run verifies itself. The world runs the checks, since they read the
//! projects' databases and the hosts' client state.

use crate::client::host::{execution, run_for};
use crate::client::scripted::ScriptedHost;
use crate::scenario::schema::Expect;
use crate::server::db::result_name;
use crate::server::resource::CPU;
use crate::server::types::{HostId, ResultId, WuId};
use crate::server::{Project, lookup_result};

/// Tolerance of credit comparisons.
const CREDIT_EPS: f64 = 1e-6;

fn cmp_i(errs: &mut Vec<String>, what: &str, want: Option<i64>, got: i64) {
    if let Some(w) = want
        && w != got
    {
        errs.push(format!("{what} = {got}, expected {w}"));
    }
}

fn cmp_f(errs: &mut Vec<String>, what: &str, want: Option<f64>, got: f64) {
    if let Some(w) = want
        && (w - got).abs() > CREDIT_EPS * w.abs().max(1.0)
    {
        errs.push(format!("{what} = {got}, expected {w}"));
    }
}

/// Why an expectation is not met: the row it names is missing or still there, or
/// the fields that differ, each as `field = got, expected want`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum Unmet {
    /// The result or workunit (`subject`: `result NAME`, `workunit NAME`) is not
    /// in the database.
    #[error("{0} does not exist")]
    Missing(String),
    /// `exists = false`, but the row is still there.
    #[error("{0} still exists")]
    StillExists(String),
    /// No named host has this name.
    #[error("unknown host {0}")]
    UnknownHost(String),
    /// A per-project client field, on a host not attached to the project.
    #[error("the host is not attached to this project")]
    NotAttached,
    /// The fields of `subject` (a result, workunit or host) that differ.
    #[error("{subject}: {}", .fields.join("; "))]
    Fields {
        subject: String,
        fields: Vec<String>,
    },
    /// The fields of a simulated client that differ.
    #[error("{}", .0.join("; "))]
    ClientFields(Vec<String>),
}

/// Checks one expectation. `Err` lists every mismatch.
pub(crate) fn verify(
    ex: &Expect,
    p: &Project,
    named: &[ScriptedHost],
    host: Option<&Result<usize, String>>,
) -> Result<(), Unmet> {
    let mut errs = Vec::new();
    let host_name = |id: u32| -> String {
        named
            .iter()
            .find(|h| h.hostid == HostId(id) && p.index == h.project as usize)
            .map_or(id.to_string(), |h| h.name.clone())
    };
    if let Some(name) = &ex.result {
        let rid = lookup_result(p, name);
        let row = p.db.results.get(rid);
        let subject = format!("result {name}");
        match (row, ex.exists) {
            (None, Some(false)) => return Ok(()),
            (None, _) => return Err(Unmet::Missing(subject)),
            (Some(_), Some(false)) => return Err(Unmet::StillExists(subject)),
            _ => {}
        }
        let r = row.expect("checked");
        if let Some(s) = &ex.state {
            let got = format!(
                "{}/{}/{}/{}",
                r.server_state.code(),
                r.outcome.code(),
                r.validate_state.code(),
                r.file_delete_state.code()
            );
            if &got != s {
                errs.push(format!("state = {got}, expected {s}"));
            }
        }
        cmp_i(
            &mut errs,
            "server_state",
            ex.server_state,
            r.server_state.code(),
        );
        cmp_i(&mut errs, "outcome", ex.outcome, r.outcome.code());
        cmp_i(
            &mut errs,
            "validate_state",
            ex.validate_state,
            r.validate_state.code(),
        );
        cmp_i(
            &mut errs,
            "file_delete_state",
            ex.file_delete_state,
            r.file_delete_state.code(),
        );
        cmp_i(&mut errs, "sent_time", ex.sent_time, r.sent_time.into());
        cmp_i(
            &mut errs,
            "received_time",
            ex.received_time,
            r.received_time.into(),
        );
        cmp_i(
            &mut errs,
            "report_deadline",
            ex.report_deadline,
            r.report_deadline,
        );
        cmp_i(&mut errs, "priority", ex.priority, r.priority as i64);
        cmp_f(
            &mut errs,
            "granted_credit",
            ex.granted_credit,
            r.granted_credit,
        );
        if let Some(h) = &ex.hostid {
            let got = host_name(r.hostid.0);
            if &got != h {
                errs.push(format!("hostid = {got}, expected {h}"));
            }
        }
        return finish(subject, errs);
    }
    if let Some(name) = &ex.batch {
        let row = p.db.batches.rows.iter().find(|b| &*b.name == name.as_str());
        let subject = format!("batch {name}");
        let Some(b) = row else {
            return Err(Unmet::Missing(subject));
        };
        cmp_i(&mut errs, "batch_state", ex.batch_state, b.state.code());
        cmp_i(&mut errs, "njobs", ex.njobs, b.njobs.into());
        cmp_i(
            &mut errs,
            "njobs_success",
            ex.njobs_success,
            b.njobs_success.into(),
        );
        cmp_i(
            &mut errs,
            "nerror_jobs",
            ex.nerror_jobs,
            b.nerror_jobs.into(),
        );
        cmp_f(
            &mut errs,
            "fraction_done",
            ex.fraction_done,
            b.fraction_done,
        );
        cmp_i(
            &mut errs,
            "completion_time",
            ex.completion_time,
            b.completion_time,
        );
        return finish(subject, errs);
    }
    if let Some(name) = &ex.workunit {
        let id: u32 = name
            .strip_prefix("wu")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let row = p.db.workunits.get(WuId(id));
        let subject = format!("workunit {name}");
        match (row, ex.exists) {
            (None, Some(false)) => return Ok(()),
            (None, _) => return Err(Unmet::Missing(subject)),
            (Some(_), Some(false)) => return Err(Unmet::StillExists(subject)),
            _ => {}
        }
        let w = row.expect("checked");
        cmp_i(
            &mut errs,
            "need_validate",
            ex.need_validate,
            w.need_validate as i64,
        );
        cmp_i(
            &mut errs,
            "transition_time",
            ex.transition_time,
            w.transition_time.into(),
        );
        cmp_i(&mut errs, "error_mask", ex.error_mask, w.error_mask as i64);
        cmp_i(
            &mut errs,
            "assimilate_state",
            ex.assimilate_state,
            w.assimilate_state.code(),
        );
        cmp_i(
            &mut errs,
            "file_delete_state",
            ex.file_delete_state,
            w.file_delete_state.code(),
        );
        cmp_i(
            &mut errs,
            "target_nresults",
            ex.target_nresults,
            w.target_nresults as i64,
        );
        cmp_i(&mut errs, "min_quorum", ex.min_quorum, w.min_quorum as i64);
        cmp_i(&mut errs, "hr_class", ex.hr_class, w.hr_class as i64);
        cmp_i(&mut errs, "nresults", ex.nresults, w.results.len() as i64);
        cmp_i(
            &mut errs,
            "assimilate_count",
            ex.assimilate_count,
            w.assimilate_count as i64,
        );
        if let Some(c) = &ex.canonical {
            let got = if w.canonical_resultid == ResultId(0) {
                "none".to_string()
            } else {
                p.db.results
                    .get(w.canonical_resultid)
                    .map_or(w.canonical_resultid.to_string(), |r| {
                        result_name(r.workunitid, r.suffix)
                    })
            };
            if &got != c {
                errs.push(format!("canonical = {got}, expected {c}"));
            }
        }
        return finish(subject, errs);
    }
    if let Some(target) = host {
        let h = match target {
            Ok(k) => &named[*k],
            Err(name) => return Err(Unmet::UnknownHost(name.clone())),
        };
        let name = &h.name;
        let subject = format!("host {name}");
        let row = p.db.host(h.hostid);
        if let Some(want) = &ex.reply {
            super::expect_reply::check(&mut errs, want, h, p);
        }
        cmp_f(&mut errs, "total_credit", ex.total_credit, row.total_credit);
        let hav = row.hav(crate::server::APP_VERSION_ID);
        if ex.consecutive_valid.is_some()
            || ex.max_jobs_per_day.is_some()
            || ex.n_jobs_today.is_some()
        {
            match hav {
                None => errs.push("has no host app version yet".into()),
                Some(hav) => {
                    cmp_i(
                        &mut errs,
                        "consecutive_valid",
                        ex.consecutive_valid,
                        hav.consecutive_valid as i64,
                    );
                    cmp_i(
                        &mut errs,
                        "max_jobs_per_day",
                        ex.max_jobs_per_day,
                        hav.max_jobs_per_day as i64,
                    );
                    cmp_i(
                        &mut errs,
                        "n_jobs_today",
                        ex.n_jobs_today,
                        hav.n_jobs_today as i64,
                    );
                }
            }
        }
        return finish(subject, errs);
    }
    Ok(())
}

fn finish(subject: String, fields: Vec<String>) -> Result<(), Unmet> {
    if fields.is_empty() {
        Ok(())
    } else {
        Err(Unmet::Fields { subject, fields })
    }
}

/// Checks a client-state expectation against host `h`; `pos` is the position of the
/// expectation's project among the host's attached projects. Float fields compare
/// within `tolerance` (default 1e-6). `cpu_time` is integrated up to `now`; the other
/// fields are as the client last updated them.
pub(crate) fn verify_client(
    ex: &Expect,
    h: &crate::client::host::ClientHost,
    pos: Option<usize>,
    now: crate::engine::Time,
    cfg: &crate::client::config::ClientConfig,
    project_names: &[String],
    avail: &crate::client::availability::AvailSpec,
) -> Result<(), Unmet> {
    let mut errs = Vec::new();
    let tol = ex.tolerance.unwrap_or(1e-6);
    let cmp = |errs: &mut Vec<String>, what: &str, want: Option<f64>, got: f64| {
        if let Some(w) = want
            && ((w - got).abs() > tol || got.is_nan())
        {
            errs.push(format!("{what} = {got}, expected {w} (tolerance {tol})"));
        }
    };
    if let Some(want) = &ex.running {
        let mut names: Vec<&str> = h
            .jobs
            .iter()
            .filter(|j| j.is_running())
            .map(|j| {
                let p = &h.projects[j.project as usize];
                if p.is_background() {
                    return "background"; // no world project
                }
                project_names
                    .get(p.project as usize)
                    .map_or("?", |s| s.as_str())
            })
            .collect();
        names.sort_unstable();
        let got = names.join(",");
        if &got != want {
            errs.push(format!("running = \"{got}\", expected \"{want}\""));
        }
    }
    if ex.on_frac.is_some() || ex.active_frac.is_some() || ex.connected_frac.is_some() {
        let ts = h.avail.time_stats_at(now.max(h.last_advance), avail);
        cmp(&mut errs, "on_frac", ex.on_frac, ts.on_frac);
        cmp(&mut errs, "active_frac", ex.active_frac, ts.active_frac);
        cmp(
            &mut errs,
            "connected_frac",
            ex.connected_frac,
            ts.connected_frac,
        );
    }
    // Every other client field is about one attached project.
    let per_project = crate::scenario::validate::given_fields(ex).iter().any(|f| {
        !crate::scenario::validate::CLIENT_HOST_LEVEL.contains(f)
            && crate::scenario::validate::CLIENT_ONLY.contains(f)
    });
    if per_project {
        let Some(k) = pos else {
            return Err(Unmet::NotAttached);
        };
        let p = &h.projects[k];
        cmp_i(
            &mut errs,
            "nrpc_failures",
            ex.nrpc_failures,
            p.nrpc_failures as i64,
        );
        cmp_i(
            &mut errs,
            "master_fetch_failures",
            ex.master_fetch_failures,
            p.master_fetch_failures as i64,
        );
        if let Some(w) = ex.master_url_fetch_pending
            && w != p.master_url_fetch_pending
        {
            errs.push(format!(
                "master_url_fetch_pending = {}, expected {w}",
                p.master_url_fetch_pending
            ));
        }
        cmp(&mut errs, "min_rpc_time", ex.min_rpc_time, p.min_rpc_time);
        cmp(&mut errs, "rec", ex.rec, p.rec);
        cmp(&mut errs, "exp_avg_cpu", ex.exp_avg_cpu, p.exp_avg_cpu);
        cmp(
            &mut errs,
            "resource_debt",
            ex.resource_debt,
            p.resource_debt,
        );
        cmp_i(&mut errs, "debt_order", ex.debt_order, p.debt_order as i64);
        // CPU time integrated to `now` without touching the host, by the rule
        // `ClientHost::advance` integrates with (`run_for`): each running task at
        // its execution's speed and CPUs (a multi-threaded task's CPUs, slowed by
        // `cpu_scale` when the CPUs are overcommitted), until it finishes or
        // reaches its time limit.
        let mut cpu = p.cpu_time;
        if h.computing(cfg) && now > h.last_advance {
            let dt = (now - h.last_advance) as f64;
            let cpu_scale = h.cpu_scale(cfg);
            for j in h
                .jobs
                .iter()
                .filter(|j| j.is_running() && j.project as usize == k)
            {
                let x = execution(h.usage(j), h.p_fpops, cpu_scale, cfg.gpu_active_frac);
                cpu += run_for(j, &x, dt).0 * x.cpus;
            }
        }
        cmp(&mut errs, "cpu_time", ex.cpu_time, cpu);
        // The idle run closed up to `now` on the global grid, without touching the
        // host: a task of the project executes throughout `(last_advance, now]` or
        // not at all, since the host is woken at every change.
        let mut idle = p.idle;
        let ran = h.computing(cfg)
            && h.jobs
                .iter()
                .any(|j| j.is_running() && j.project as usize == k);
        idle.advance(h.last_advance as f64, now as f64, ran, cfg.merit_step);
        cmp(&mut errs, "idle_time", ex.idle_time, idle.idle_time);
        cmp(
            &mut errs,
            "idle_time_sumsq",
            ex.idle_time_sumsq,
            idle.idle_time_sumsq,
        );
        let held = h.jobs.iter().filter(|j| j.project as usize == k).count();
        cmp_i(&mut errs, "jobs", ex.jobs, held as i64);
        cmp_i(&mut errs, "jobs_received", ex.jobs_received, p.njobs as i64);
        cmp_i(&mut errs, "rpcs", ex.rpcs, p.nrpcs as i64);
        cmp_i(
            &mut errs,
            "deadlines_missed",
            ex.deadlines_missed,
            p.deadlines_missed as i64,
        );
        cmp(
            &mut errs,
            "cpu_backoff_interval",
            ex.cpu_backoff_interval,
            p.backoff_interval[CPU],
        );
        cmp(
            &mut errs,
            "cpu_backoff_time",
            ex.cpu_backoff_time,
            p.backoff_time[CPU],
        );
        cmp(
            &mut errs,
            "sched_priority",
            ex.sched_priority,
            p.sched_priority,
        );
        let w = p.last_request();
        cmp(&mut errs, "req_secs", ex.req_secs, w.req_secs);
        cmp(
            &mut errs,
            "req_instances",
            ex.req_instances,
            w.req_instances,
        );
        cmp(
            &mut errs,
            "estimated_delay",
            ex.estimated_delay,
            w.estimated_delay,
        );
        cmp(
            &mut errs,
            "gpu_req_secs",
            ex.gpu_req_secs,
            w.gpu_req_secs.iter().sum(),
        );
        cmp(
            &mut errs,
            "gpu_req_instances",
            ex.gpu_req_instances,
            w.gpu_req_instances.iter().sum(),
        );
        if let Some(want) = &ex.client_states {
            let got: Vec<String> = (h.jobs.iter())
                .filter(|j| j.project as usize == k)
                .map(|j| j.client_state.to_string())
                .collect();
            let got = got.join(",");
            if &got != want {
                errs.push(format!("client_states = \"{got}\", expected \"{want}\""));
            }
        }
        let x = h.xfer_view(k, now);
        for (what, want, got) in [
            ("xfers_down", ex.xfers_down, x.active[0]),
            ("xfers_up", ex.xfers_up, x.active[1]),
            ("xfer_failures_down", ex.xfer_failures_down, x.failures[0]),
            ("xfer_failures_up", ex.xfer_failures_up, x.failures[1]),
            ("xfer_backoff_down", ex.xfer_backoff_down, x.backoff[0]),
            ("xfer_backoff_up", ex.xfer_backoff_up, x.backoff[1]),
            ("next_file_retry", ex.next_file_retry, x.next_retry),
        ] {
            cmp_i(&mut errs, what, want, got);
        }
        for (what, want, got) in [
            ("download_stalled", ex.download_stalled, p.download_stalled),
            ("too_many_uploads", ex.too_many_uploads, p.too_many_uploads),
            (
                "actively_uploading",
                ex.actively_uploading,
                p.actively_uploading,
            ),
        ] {
            if let Some(w) = want
                && w != got
            {
                errs.push(format!("{what} = {got}, expected {w}"));
            }
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(Unmet::ClientFields(errs))
    }
}
