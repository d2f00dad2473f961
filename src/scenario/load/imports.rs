//! Reading each host group's imported files (`hosts_file`, `client_state`,
//! `global_prefs`) relative to the scenario file, as traces are read: a file that
//! cannot be used is a problem of the key that named it, and its message names the
//! file's own line and field (docs/population.md, "A project's own hosts").

use crate::base::dist::Dist;
use crate::base::units::Duration;
use crate::client::config::Policy;
use crate::scenario::import::{client_state, hosts};
use crate::scenario::schema::{COUNT_UNSET, CoprocSpec, HostGroup, HostsMode, ScenarioFile};
use crate::scenario::start::{ClientStart, ProjectStart, StartJob};
use crate::scenario::validate::Problem;
use crate::server::resource::{GpuType, ProcType};
use std::path::Path;
use std::sync::Arc;

/// Reads every group's imported files and applies them: a host export is kept in
/// the group (and a replay's count set from it), a client state fills the group's
/// host attributes, projects, starting state and preferences.
pub(super) fn load_imports(file: &mut ScenarioFile, origin: &str) -> Vec<Problem> {
    let base = Path::new(origin).parent().unwrap_or(Path::new("."));
    let duration = file.simulation.duration.get();
    let client_policy = file.client.policy;
    let mut problems = Vec::new();
    let projects: Vec<(String, Vec<String>)> = (file.project.iter())
        .map(|(n, p)| (n.clone(), p.app.iter().map(|a| a.name.clone()).collect()))
        .collect();
    for (i, g) in file.host_group.iter_mut().enumerate() {
        let prefix = format!("host_group.{i}");
        if let Some(rel) = g.hosts_file.clone() {
            let path = format!("{prefix}.hosts_file");
            match hosts::read(&base.join(&rel)) {
                Ok(t) => {
                    if let Err(message) = use_hosts(g, t, duration) {
                        problems.push(Problem { path, message });
                    }
                }
                Err(e) => problems.push(Problem {
                    path,
                    message: e.to_string(),
                }),
            }
        }
        if let Some(rel) = g.client_state.clone() {
            let prefs = g.global_prefs.as_ref().map(|p| base.join(p));
            let policy = g.policy.unwrap_or(client_policy);
            match client_state::read(&base.join(&rel), prefs.as_deref()) {
                Ok(c) => {
                    if let Err(message) = use_client(g, c, &projects, policy) {
                        problems.push(Problem {
                            path: format!("{prefix}.client_state"),
                            message,
                        });
                    }
                }
                Err(e) => {
                    // A preferences file's own problem is the `global_prefs` key's.
                    let in_prefs = (g.global_prefs.as_ref())
                        .is_some_and(|p| e.0.starts_with(&base.join(p).display().to_string()));
                    let key = if in_prefs {
                        "global_prefs"
                    } else {
                        "client_state"
                    };
                    problems.push(Problem {
                        path: format!("{prefix}.{key}"),
                        message: e.to_string(),
                    });
                }
            }
        }
    }
    problems
}

/// Keeps host export `t` in group `g`: a replay keeps the records present during the
/// run (`hosts_start` to `hosts_start + duration`) and takes their number as its
/// count. Every GPU type of the file needs the group's `coproc` entry of that type,
/// whose `peak_flops` the export does not have.
fn use_hosts(g: &mut HostGroup, t: hosts::HostTable, duration: i64) -> Result<(), String> {
    if t.records.is_empty() {
        return Err(format!(
            "the file has no host with CPUs and a speed ({} without: ncpus or p_fpops 0); expected at least one",
            t.skipped
        ));
    }
    for (k, (name, kind)) in hosts::GPU_TYPES.iter().enumerate() {
        let used = t.records.iter().find(|r| r.gpus[k] > 0);
        let listed = g.coproc.iter().any(|c| c.kind.proc_type() == *kind);
        if let (Some(r), false) = (used, listed) {
            return Err(format!(
                "host {} (line {}) has {} GPU(s) but the export gives no GPU speed; expected a [[host_group.coproc]] entry with type = \"{name}\" and its peak_flops",
                r.id, r.line, name
            ));
        }
    }
    if g.hosts_mode.unwrap_or_default() == HostsMode::Replay {
        let start = g
            .hosts_start
            .unwrap_or_else(|| t.latest_rpc().saturating_sub(duration));
        let end = start.saturating_add(duration);
        let present: Vec<u32> = (t.records.iter().enumerate())
            .filter(|(_, r)| r.rpc_time > start && r.create_time < end)
            .map(|(k, _)| k as u32)
            .collect();
        if present.is_empty() {
            return Err(format!(
                "no host of the file is present between Unix times {start} and {end} (create_time to rpc_time); expected hosts_start within the file's times"
            ));
        }
        g.count = present.len() as u32;
        g.import_data.replay = Some((present.into(), start));
    }
    g.import_data.hosts = Some(Arc::new(t));
    Ok(())
}

/// Fills group `g` from client state `c`: its host attributes and GPUs, time
/// statistics (as the availability fractions and as the starting ones), the
/// scenario projects the client is attached to (a `<project>` whose `project_name`
/// or `master_url` is a scenario project's name) with their resource shares, REC
/// and backoff, and their queued results as starting jobs. Times are relative to
/// the state's `time_stats.last_update`, the run's time 0; the host is there from
/// the start.
fn use_client(
    g: &mut HostGroup,
    c: client_state::ClientImport,
    projects: &[(String, Vec<String>)],
    policy: Policy,
) -> Result<(), String> {
    let h = &c.host;
    g.p_ncpus = h.p_ncpus as i32;
    g.p_fpops = Dist::fixed(h.p_fpops);
    if h.p_iops > 0.0 {
        g.p_iops = h.p_iops;
    }
    if h.m_nbytes > 0.0 {
        g.m_nbytes = h.m_nbytes;
    }
    if h.d_free > 0.0 {
        g.d_free = h.d_free;
    }
    for (field, v) in [
        (&mut g.os_name, &h.os_name),
        (&mut g.p_vendor, &h.p_vendor),
        (&mut g.p_model, &h.p_model),
    ] {
        if !v.is_empty() {
            field.clone_from(v);
        }
    }
    g.coproc = (h.coprocs.iter())
        .map(|&(kind, count, peak)| CoprocSpec {
            kind: match kind {
                ProcType::Amd => GpuType::Amd,
                ProcType::Intel => GpuType::Intel,
                _ => GpuType::Nvidia,
            },
            count,
            peak_flops: Dist::fixed(peak),
        })
        .collect();
    let ts = c.time_stats;
    // The fractions drive the availability processes, unless the group has a model
    // of its own (a trace or explicit periods); fractions of 0 are kept out of the
    // processes, whose fractions must be positive.
    if g.trace.is_none() && g.on_period.is_none() && ts.on_frac > 0.0 {
        g.on_frac = ts.on_frac;
    }
    if ts.active_frac > 0.0 {
        g.active_frac = ts.active_frac;
    }
    if ts.connected_frac > 0.0 {
        g.connected_frac = ts.connected_frac;
    }
    let now = ts.last_update;
    let rel = |t: f64| Duration(((t - now).max(0.0)).ceil() as i64);
    let mut start = ClientStart {
        on_frac: (ts.on_frac > 0.0).then_some(ts.on_frac),
        active_frac: (ts.active_frac > 0.0).then_some(ts.active_frac),
        connected_frac: (ts.connected_frac > 0.0).then_some(ts.connected_frac),
        ..Default::default()
    };
    g.shares.clear();
    for p in &c.projects {
        let Some((name, apps)) = projects
            .iter()
            .find(|(n, _)| *n == p.project_name || *n == p.master_url)
        else {
            continue;
        };
        g.shares.insert(name.clone(), p.resource_share);
        start.project.insert(
            name.clone(),
            ProjectStart {
                rec: p.rec.filter(|_| policy == Policy::ModernRec),
                min_rpc_time: (p.min_rpc_time > now).then(|| rel(p.min_rpc_time)),
                nrpc_failures: (p.nrpc_failures > 0).then_some(p.nrpc_failures),
                ..Default::default()
            },
        );
        for r in &p.results {
            let app = p.app_of(&r.wu_name);
            start.job.push(StartJob {
                project: name.clone(),
                app: if apps.iter().any(|a| a == app) {
                    app.to_owned()
                } else {
                    String::new()
                },
                report_deadline: rel(r.report_deadline),
                fraction_done: r.fraction_done,
            });
        }
    }
    if g.shares.is_empty() {
        let names: Vec<&str> = (c.projects.iter())
            .map(|p| p.project_name.as_str())
            .collect();
        let known: Vec<&str> = projects.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "none of the client's projects ({}) is a project of the scenario; expected a <project_name> or <master_url> equal to one of: {}",
            names.join(", "),
            known.join(", ")
        ));
    }
    if g.shares.values().all(|s| *s <= 0.0) {
        return Err(
            "every project of the scenario the client is attached to has resource_share 0; expected a positive share".into(),
        );
    }
    g.start = Some(start);
    // At 1 s, not 0: a result the database holds as sent has a sent time > 0
    // (spec backend §3, invariant 2).
    g.arrival = Dist::fixed(1.0);
    if g.count == COUNT_UNSET {
        g.count = 1;
    }
    g.import_data.client = Some(Arc::new(c));
    Ok(())
}
