//! Reading each host group's imported files (`hosts_file`, `client_state`,
//! `global_prefs`) relative to the scenario file, as traces are read: a file that
//! cannot be used is a problem of the key that named it, and its message names the
//! file's own line and field (docs/population.md, "A project's own hosts").

use crate::base::dist::Dist;
use crate::base::units::Duration;
use crate::client::config::Policy;
use crate::scenario::import::{client_state, hosts};
use crate::scenario::schema::host_extra::BackgroundEntry;
use crate::scenario::schema::{
    BackgroundSection, COUNT_UNSET, CoprocSpec, HostGroup, HostsMode, PrefsSection, ScenarioFile,
};
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
                    let gpus = g.policy.unwrap_or(client_policy) == Policy::ModernRec;
                    if let Err(message) = use_hosts(g, t, duration, gpus) {
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
/// count. Under a client that runs GPU jobs (`gpus`), every GPU type of the file
/// needs the group's `coproc` entry of that type, whose `peak_flops` the export does
/// not have; the seed client runs CPU jobs only (spec client §1), so its hosts'
/// GPUs are left out.
fn use_hosts(
    g: &mut HostGroup,
    t: hosts::HostTable,
    duration: i64,
    gpus: bool,
) -> Result<(), String> {
    if t.records.is_empty() {
        return Err(format!(
            "the file has no host with CPUs and a speed ({} without: ncpus or p_fpops 0); expected at least one",
            t.skipped
        ));
    }
    for (k, (name, kind)) in hosts::GPU_TYPES.iter().enumerate() {
        let used = t.records.iter().find(|r| r.gpus[k] > 0);
        let listed = g.coproc.iter().any(|c| c.kind.proc_type() == *kind);
        if let (Some(r), false, true) = (used, listed, gpus) {
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
    g.p_ncpus = crate::scenario::schema::Count::Fixed(h.p_ncpus.into());
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
    if !h.os_name.is_empty() {
        g.os_name = crate::scenario::schema::OsName::One(h.os_name.clone());
    }
    for (field, v) in [(&mut g.p_vendor, &h.p_vendor), (&mut g.p_model, &h.p_model)] {
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
            count: crate::scenario::schema::Count::Fixed(count.into()),
            probability: 1.0,
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
        g.active_frac = Dist::fixed(ts.active_frac);
    }
    if ts.connected_frac > 0.0 {
        g.connected_frac = Dist::fixed(ts.connected_frac);
    }
    let now = ts.last_update;
    // Clamped to BOINC's int times (`INT_MAX`), so no later sum overflows.
    let rel = |t: f64| Duration((t - now).clamp(0.0, i32::MAX as f64).ceil() as i64);
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
    // The client's other projects run beside ours as background projects, unless
    // the group describes its own.
    if g.background.is_none() {
        let other = (c.projects.iter())
            .filter(|p| {
                !projects
                    .iter()
                    .any(|(n, _)| *n == p.project_name || *n == p.master_url)
            })
            .filter_map(background_entry)
            .take(crate::client::background::MAX_BACKGROUND)
            .collect::<Vec<_>>();
        if !other.is_empty() {
            g.background = Some(BackgroundSection {
                projects: None,
                share: Dist::fixed(100.0),
                job_flops: None,
                job_duration: Some(Dist::fixed(3600.0)),
                delay_bound: Dist::fixed(7.0 * 86_400.0),
                project: other,
            });
        }
    }
    // The volunteer's preferences are the host's own, unless the group sets them.
    let pr = &c.prefs;
    if g.prefs.is_none()
        && (pr.work_buf_min_days.is_some()
            || pr.work_buf_additional_days.is_some()
            || pr.max_ncpus_pct.is_some())
    {
        let min = pr.work_buf_min_days.unwrap_or(0.1);
        let add = pr.work_buf_additional_days.unwrap_or(0.5);
        g.prefs = Some(PrefsSection {
            work_buf_min_days: pr.work_buf_min_days.map(Dist::fixed),
            work_buf_additional_days: pr.work_buf_additional_days.map(Dist::fixed),
            // The seed client's high water mark: the modern buffer's total.
            work_buf_max_days: Some(Dist::fixed(min + add)),
            max_ncpus_pct: pr.max_ncpus_pct.filter(|p| *p > 0.0).map(Dist::fixed),
        });
    }
    // At 1 s, not 0: a result the database holds as sent has a sent time > 0
    // (spec backend §3, invariant 2).
    g.arrival = Dist::fixed(1.0);
    if g.count == COUNT_UNSET {
        g.count = 1;
    }
    g.import_data.client = Some(Arc::new(c));
    Ok(())
}

/// One of the client's other projects as a background project: its resource
/// share, its jobs' size (the mean `rsc_fpops_est` of its workunits) and delay bound
/// (the median of its queued results' `report_deadline − received_time`; the
/// section's 7 days when no result says). A project that has only GPU app versions
/// is left out: background jobs run on one CPU (docs/population.md).
fn background_entry(p: &client_state::ClientProject) -> Option<BackgroundEntry> {
    if !p.app_versions.is_empty() && p.app_versions.iter().all(|v| v.gpu.is_some()) {
        return None;
    }
    let sizes: Vec<f64> = (p.workunits.iter())
        .map(|w| w.rsc_fpops_est)
        .filter(|x| *x > 0.0)
        .collect();
    let mut bounds: Vec<f64> = (p.results.iter())
        .filter_map(|r| r.received_time.map(|t| r.report_deadline - t))
        .filter(|d| *d >= 1.0)
        .collect();
    bounds.sort_by(f64::total_cmp);
    Some(BackgroundEntry {
        share: Some(p.resource_share.max(0.0)),
        job_flops: (!sizes.is_empty())
            .then(|| Dist::fixed(sizes.iter().sum::<f64>() / sizes.len() as f64)),
        job_duration: None,
        delay_bound: bounds.get(bounds.len() / 2).map(|d| Dist::fixed(d.ceil())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::import::hosts::HostRecord;

    fn record(id: u32, create_time: i64, rpc_time: i64, gpus: [u8; 3]) -> HostRecord {
        HostRecord {
            id,
            userid: 0,
            create_time,
            rpc_time,
            timezone: 0,
            ncpus: 4,
            p_fpops: 3e9,
            p_iops: 9e9,
            m_nbytes: 8e9,
            d_free: 5e10,
            n_bwup: 0.0,
            n_bwdown: 0.0,
            avg_turnaround: 0.0,
            expavg_credit: 0.0,
            total_credit: 0.0,
            os_name: 0,
            os_version: 0,
            p_vendor: 0,
            p_model: 0,
            gpus,
            line: id,
        }
    }

    fn group(text: &str) -> HostGroup {
        let f: ScenarioFile = toml::from_str(text).unwrap();
        f.host_group.into_iter().next().unwrap()
    }

    fn table(records: Vec<HostRecord>) -> hosts::HostTable {
        hosts::HostTable {
            records,
            strings: vec!["".into()],
            skipped: 0,
        }
    }

    #[test]
    fn a_replay_keeps_the_hosts_present_and_counts_them() {
        let mut g = group("[[host_group]]\nhosts_file = \"h.xml\"\n");
        let day = 86_400;
        let t = table(vec![
            record(1, 0, 10 * day, [0; 3]), // latest contact: the end of the run
            record(2, 0, 7 * day, [0; 3]),  // gone before the start (day 8)
            record(3, 9 * day, 9 * day + 5, [0; 3]),
            record(4, 8 * day, 8 * day, [0; 3]), // leaves exactly at the start
        ]);
        use_hosts(&mut g, t, 2 * day, true).unwrap();
        assert_eq!(g.count, 2);
        let (present, start) = g.import_data.replay.clone().unwrap();
        assert_eq!((&*present, start), (&[0u32, 2][..], 8 * day));
        // An explicit start moves the window.
        let mut g = group("[[host_group]]\nhosts_file = \"h.xml\"\nhosts_start = 0\n");
        let t = table(vec![
            record(1, 0, 10 * day, [0; 3]),
            record(3, 9 * day, 9 * day + 5, [0; 3]),
        ]);
        use_hosts(&mut g, t, 2 * day, true).unwrap();
        assert_eq!(g.count, 1);
    }

    #[test]
    fn a_gpu_type_needs_its_coproc_entry() {
        let mut g = group("[[host_group]]\nhosts_file = \"h.xml\"\n");
        let m = use_hosts(&mut g, table(vec![record(9, 0, 5, [0, 1, 0])]), 10, true).unwrap_err();
        assert_eq!(
            m,
            "host 9 (line 9) has amd GPU(s) but the export gives no GPU speed; expected a [[host_group.coproc]] entry with type = \"amd\" and its peak_flops"
        );
        let mut g = group(
            "[[host_group]]\nhosts_file = \"h.xml\"\ncoproc = [{ type = \"amd\", peak_flops = 1e12 }]\n",
        );
        use_hosts(&mut g, table(vec![record(9, 0, 5, [0, 1, 0])]), 10, true).unwrap();
        // The seed client needs no GPU speed: it runs CPU jobs only.
        let mut g = group("[[host_group]]\nhosts_file = \"h.xml\"\n");
        use_hosts(&mut g, table(vec![record(9, 0, 5, [0, 1, 0])]), 10, false).unwrap();
    }

    #[test]
    fn a_client_state_fills_the_group() {
        let text = include_str!("../../../scenarios/hosts/client_state-sample.xml");
        let c = client_state::parse_state(text, "cs.xml").unwrap();
        let mut g = group("[[host_group]]\nclient_state = \"cs.xml\"\n");
        let projects = vec![("alpha".to_owned(), vec!["sim".to_owned()])];
        use_client(&mut g, c, &projects, Policy::ModernRec).unwrap();
        let cpus = crate::scenario::schema::Count::Fixed(8);
        assert_eq!((g.count, g.p_ncpus, g.p_fpops.mean()), (1, cpus, 4.5e9));
        assert_eq!(
            (g.on_frac, g.active_frac.mean(), g.connected_frac.mean()),
            (0.8, 0.7, 0.95)
        );
        assert_eq!(g.shares.get("alpha"), Some(&100.0));
        let st = g.start.unwrap();
        assert_eq!(st.project["alpha"].rec, Some(1500.0));
        assert_eq!(st.project["alpha"].min_rpc_time, Some(Duration(600)));
        let jobs: Vec<(i64, f64, &str)> = (st.job.iter())
            .map(|j| (j.report_deadline.get(), j.fraction_done, j.app.as_str()))
            .collect();
        assert_eq!(
            jobs,
            [
                (259_200, 0.25, "sim"),
                (345_600, 0.0, "sim"),
                (432_000, 0.0, "sim")
            ]
        );
        assert_eq!(g.coproc.len(), 1);
        assert_eq!(g.coproc[0].peak_flops.mean(), 1.2e13);
    }
}
