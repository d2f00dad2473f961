//! `hosts.csv` and the `clients` part of `summary.json`: the BOINC client emulator's
//! figures of merit (spec client §5.7) per host and over all hosts, and each host's
//! CPU time and credit per project.
//!
//! They come from the hosts and the projects' host rows alone, so they take the final
//! state of a run whatever its recorder.

use crate::client::host::ClientHost;
use crate::client::merit::{Figures, ProjectFigures, figures};
use crate::server::types::HostId;
use crate::stats::output::{CsvFile, Table};
use crate::world::{Finished, HostGroupRt};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

pub(crate) const HOSTS_CSV: &str = "hosts.csv";

/// The figures of one host.
pub(crate) fn host_figures(h: &ClientHost, g: &HostGroupRt) -> Figures {
    // Called once per host at the end of a run: a small allocation is fine here.
    let projects: Vec<ProjectFigures> = h.projects.iter().map(project_figures).collect();
    figures(
        h.merit.flops_total,
        h.merit.flops_used,
        h.merit.active_time,
        g.ctx.cfg.cpu_scheduling_period,
        &projects,
    )
}

fn project_figures(p: &crate::client::host::ProjectState) -> ProjectFigures {
    ProjectFigures {
        resource_share: p.resource_share,
        flops_used: p.flops_used,
        flops_wasted: p.flops_wasted,
        idle_time_sumsq: p.idle.idle_time_sumsq,
        nrpcs: p.nrpcs.into(),
        njobs: p.njobs.into(),
    }
}

/// Credit granted to a host by project `pi` (its host row's `total_credit`).
pub(crate) fn credit<R>(f: &Finished<R>, pi: usize, hostid: u32) -> f64 {
    if hostid == 0 {
        return 0.0;
    }
    f.projects[pi]
        .db
        .hosts
        .get(HostId(hostid))
        .map_or(0.0, |h| h.total_credit)
}

/// Writes `hosts.csv`: one row per host, its figures of merit and, per project, its
/// share, CPU time, credit, jobs and deadlines (columns in `docs/outputs.md`).
pub fn write_hosts_csv<R>(dir: &Path, f: &Finished<R>) -> io::Result<()> {
    let names: Vec<&str> = f.projects.iter().map(|p| p.name.as_str()).collect();
    let mut header: Vec<String> = [
        "host",
        "group",
        "policy",
        "p_ncpus",
        "p_fpops",
        "joined_s",
        "left_s",
        "active_time_s",
        "available_time_s",
        "flops_total",
        "flops_used",
        "wasted_frac",
        "idle_frac",
        "share_violation",
        "monotony",
        "rpcs_per_job",
        "rpcs",
        "rpcs_failed",
        "jobs_received",
        "detaches",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in &names {
        for c in [
            "share",
            "cpu_time_s",
            "credit",
            "jobs_received",
            "deadlines_met",
            "deadlines_missed",
        ] {
            header.push(format!("{n}_{c}"));
        }
    }
    // GPU time comes last, so that the columns before it keep their places.
    for n in &names {
        header.push(format!("{n}_gpu_time_s"));
    }
    // The background columns exist only when some group has background projects, so
    // that other runs' tables keep their bytes.
    let background = has_background(f);
    if background {
        header.extend(BACKGROUND_COLUMNS.iter().map(|c| c.to_string()));
        for n in &names {
            header.push(format!("{n}_cpu_frac"));
            header.push(format!("{n}_target_frac"));
        }
    }
    // A host's availability class, only when a group has a mixture of them, last,
    // so that every other run's table is unchanged.
    let classes = f.groups.iter().any(|g| !g.ctx.avail.classes.is_empty());
    if classes {
        header.push("avail_class".to_string());
    }
    let mut w = CsvFile::create(&dir.join(HOSTS_CSV), &header)?;
    for h in &f.hosts {
        let g = &f.groups[h.group as usize];
        let fig = host_figures(h, g);
        let rpcs: u64 = h.projects.iter().map(|p| u64::from(p.nrpcs)).sum();
        let failed: u64 = h.projects.iter().map(|p| u64::from(p.nrpc_failed)).sum();
        let jobs: u64 = h.projects.iter().map(|p| u64::from(p.njobs)).sum();
        let row = w.row();
        row.int(h.index as i64);
        row.str(&g.name);
        row.str(policy_name(g));
        row.int(i64::from(h.ncpus));
        row.float(h.p_fpops);
        row.int(h.joined);
        if h.gone {
            row.int(h.leave_at);
        } else {
            row.empty();
        }
        for v in [
            h.merit.active_time,
            h.merit.available_time,
            h.merit.flops_total,
            h.merit.flops_used,
            fig.wasted_frac,
            fig.idle_frac,
            fig.share_violation,
            fig.monotony,
            fig.rpcs_per_job,
        ] {
            row.float(v);
        }
        for v in [rpcs, failed, jobs, h.merit.detaches] {
            row.int(v as i64);
        }
        for pi in 0..names.len() {
            match h.projects.iter().find(|p| p.project as usize == pi) {
                Some(p) => {
                    row.float(p.resource_share);
                    row.float(p.cpu_time);
                    row.float(credit(f, pi, p.hostid.0));
                    for v in [p.njobs, p.met_deadline, p.missed_deadline] {
                        row.int(i64::from(v));
                    }
                }
                None => (0..6).for_each(|_| row.empty()),
            }
        }
        for pi in 0..names.len() {
            match h.projects.iter().find(|p| p.project as usize == pi) {
                Some(p) => row.float(p.gpu_time),
                None => row.empty(),
            }
        }
        if background {
            background_cells(h, names.len(), row);
        }
        if classes {
            let class = g.ctx.avail.class_name(h.avail.class());
            row.str(class.unwrap_or_default());
        }
        w.end_row()?;
    }
    w.finish()
}

/// The columns of the host's background projects, after the GPU times.
const BACKGROUND_COLUMNS: [&str; 5] = [
    "background_projects",
    "background_share",
    "background_cpu_time_s",
    "background_jobs_received",
    "background_rpcs",
];

/// Whether some group's hosts have background projects (`[host_group.background]`).
pub(crate) fn has_background<R>(f: &Finished<R>) -> bool {
    f.groups
        .iter()
        .any(|g| g.ctx.behaviour.background.is_some())
}

/// A host's background cells: its background projects' count, total share, CPU time,
/// jobs and RPCs, then per scenario project the fraction of the host's CPU time it
/// got (`cpu_time_s` over that of all its projects, background ones included) and
/// the fraction its share entitles it to (its share over all its projects' shares);
/// empty where the host is not attached or has nothing to divide.
fn background_cells(h: &ClientHost, nprojects: usize, row: &mut Table) {
    let bg = || h.projects.iter().filter(|p| p.is_background());
    row.int(bg().count() as i64);
    row.float(bg().map(|p| p.resource_share).sum());
    row.float(bg().map(|p| p.cpu_time).sum());
    row.int(bg().map(|p| i64::from(p.njobs)).sum());
    row.int(bg().map(|p| i64::from(p.nrpcs)).sum());
    let cpu: f64 = h.projects.iter().map(|p| p.cpu_time).sum();
    let rs: f64 = h.projects.iter().map(|p| p.resource_share).sum();
    for pi in 0..nprojects {
        match h.projects.iter().find(|p| p.project as usize == pi) {
            Some(p) => {
                for (part, whole) in [(p.cpu_time, cpu), (p.resource_share, rs)] {
                    if whole > 0.0 {
                        row.float(part / whole);
                    } else {
                        row.empty();
                    }
                }
            }
            None => (0..2).for_each(|_| row.empty()),
        }
    }
}

fn policy_name(g: &HostGroupRt) -> &'static str {
    match g.ctx.cfg.policy {
        crate::client::config::Policy::SeedDebt => "seed_debt",
        crate::client::config::Policy::ModernRec => "modern_rec",
    }
}

/// Per-project totals over all hosts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClientProjectTotals {
    pub cpu_time_s: f64,
    /// This project's part of all CPU time the hosts computed.
    pub cpu_frac: f64,
    /// Its part of the resource shares, averaged over hosts (weighted by their
    /// computed CPU time): the split `cpu_frac` should converge to.
    pub target_frac: f64,
    pub credit: f64,
    pub jobs_received: u64,
    pub deadlines_met: u64,
    pub deadlines_missed: u64,
    pub rpcs: u64,
    pub rpcs_failed: u64,
}

/// What the hosts' background projects got, over all hosts (only when some group has
/// them): their CPU time, its part of all CPU time the hosts computed, the part their
/// shares entitle them to (as [`ClientProjectTotals::target_frac`]), and their jobs
/// and RPCs, which no project's server saw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BackgroundTotals {
    pub projects: u64,
    pub cpu_time_s: f64,
    pub cpu_frac: f64,
    pub target_frac: f64,
    pub jobs_received: u64,
    pub deadlines_met: u64,
    pub deadlines_missed: u64,
    pub rpcs: u64,
}

/// The population's figures (spec client §5.7): wasted and idle fractions from the
/// pooled FLOPs; share violation and monotony as means over hosts; RPCs per job from
/// the pooled counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClientSummary {
    pub hosts: u64,
    pub hosts_left: u64,
    pub wasted_frac: f64,
    pub idle_frac: f64,
    /// Idle fraction of the time hosts were on and allowed to compute.
    pub idle_frac_available: f64,
    pub share_violation_mean: f64,
    pub monotony_mean: f64,
    pub rpcs_per_job: f64,
    pub detaches: u64,
    pub projects: BTreeMap<String, ClientProjectTotals>,
    /// Left out when no group has background projects, so other runs' summaries
    /// keep their bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundTotals>,
}

pub fn client_summary<R>(f: &Finished<R>) -> ClientSummary {
    let mut s = ClientSummary::default();
    let (mut total, mut used, mut avail, mut wasted) = (0.0, 0.0, 0.0, 0.0);
    let (mut sv, mut m) = (0.0, 0.0);
    let (mut rpcs, mut jobs) = (0u64, 0u64);
    let mut totals: Vec<ClientProjectTotals> = vec![Default::default(); f.projects.len()];
    let mut target_w = vec![0.0; f.projects.len()];
    let mut bg = BackgroundTotals::default();
    let mut bg_target_w = 0.0;
    for h in &f.hosts {
        let g = &f.groups[h.group as usize];
        let fig = host_figures(h, g);
        s.hosts += 1;
        if h.gone {
            s.hosts_left += 1;
        }
        s.detaches += h.merit.detaches;
        total += h.merit.flops_total;
        used += h.merit.flops_used;
        avail += h.merit.flops_available;
        sv += fig.share_violation;
        m += fig.monotony;
        let rs: f64 = h.projects.iter().map(|p| p.resource_share).sum();
        let cpu: f64 = h.projects.iter().map(|p| p.cpu_time).sum();
        for p in &h.projects {
            wasted += p.flops_wasted;
            rpcs += u64::from(p.nrpcs);
            jobs += u64::from(p.njobs);
            if p.is_background() {
                // No world project: its figures go to the background totals.
                bg.projects += 1;
                bg.cpu_time_s += p.cpu_time;
                bg.jobs_received += u64::from(p.njobs);
                bg.deadlines_met += u64::from(p.met_deadline);
                bg.deadlines_missed += u64::from(p.missed_deadline);
                bg.rpcs += u64::from(p.nrpcs);
                if rs > 0.0 {
                    bg_target_w += cpu * p.resource_share / rs;
                }
                continue;
            }
            let t = &mut totals[p.project as usize];
            t.cpu_time_s += p.cpu_time;
            t.credit += credit(f, p.project as usize, p.hostid.0);
            t.jobs_received += u64::from(p.njobs);
            t.deadlines_met += u64::from(p.met_deadline);
            t.deadlines_missed += u64::from(p.missed_deadline);
            t.rpcs += u64::from(p.nrpcs);
            t.rpcs_failed += u64::from(p.nrpc_failed);
            if rs > 0.0 {
                target_w[p.project as usize] += cpu * p.resource_share / rs;
            }
        }
    }
    let n = s.hosts.max(1) as f64;
    s.wasted_frac = if total > 0.0 { wasted / total } else { 0.0 };
    s.idle_frac = if total > 0.0 {
        (total - used).max(0.0) / total
    } else {
        0.0
    };
    s.idle_frac_available = if avail > 0.0 {
        (avail - used).max(0.0) / avail
    } else {
        0.0
    };
    s.share_violation_mean = sv / n;
    s.monotony_mean = m / n;
    s.rpcs_per_job = if jobs > 0 {
        rpcs as f64 / (2.0 * jobs as f64)
    } else {
        0.0
    };
    // All CPU time the hosts computed, the background projects' included (added
    // last: without them the sum is the same number as before).
    let cpu_all: f64 = totals.iter().map(|t| t.cpu_time_s).sum::<f64>() + bg.cpu_time_s;
    for (pi, mut t) in totals.into_iter().enumerate() {
        if cpu_all > 0.0 {
            t.cpu_frac = t.cpu_time_s / cpu_all;
            t.target_frac = target_w[pi] / cpu_all;
        }
        s.projects.insert(f.projects[pi].name.clone(), t);
    }
    if has_background(f) {
        if cpu_all > 0.0 {
            bg.cpu_frac = bg.cpu_time_s / cpu_all;
            bg.target_frac = bg_target_w / cpu_all;
        }
        s.background = Some(bg);
    }
    s
}
