//! The replay of a job log: the project's own validator ([`validator::handle_wu`],
//! spec backend §2.5) over a database built from the log, in time order, with
//! credit_new through the same engine ([`crate::server::credit_new`]) and its
//! `update_av_scales` on the same 600-s schedule; and the same again with classic
//! credit (§6.1) for comparison.
//!
//! Each result enters the database (OVER, with its outcome and output) at the time
//! it was validated if the log says so (`validate_time_s`), else when it was
//! received; at each such time, the workunits that got a result are handled in
//! ascending id, as one validator pass does. A run's own log, which records when
//! each result was validated, therefore replays to the run's credits bit for bit.

use crate::engine::Time;
use crate::scenario::schema::{AppConfig, ProjectConfig, ValidatorConfig};
use crate::server::config::CreditScheme;
use crate::server::credit::classic_claimed_credit;
use crate::server::credit_new::CreditNew;
use crate::server::db::{HavRow, HostRow, OutputStatus, ResultRow, WorkunitRow, WuLimits};
use crate::server::job_log::DecidedResult;
use crate::server::types::{Actor, HostId, Outcome, ResultId, ServerState, WuId};
use crate::server::types::{INT_MAX, db_time};
use crate::server::{Project, validator};
use crate::stats::job_log::{self, Field, JobRow, LogError, LogOutcome, ReplayConfig};
use std::collections::BTreeMap;
use std::path::Path;

/// A host of the `--hosts` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostInfo {
    pub group: Option<String>,
    /// Benchmarks for classic claimed credit (per-CPU Whetstone, Dhrystone).
    pub p_fpops: Option<f64>,
    pub p_iops: Option<f64>,
}

/// Reads `--hosts`: `host_id` and optional `group`, `p_fpops`, `p_iops`.
pub fn read_hosts(path: &Path) -> Result<BTreeMap<u64, HostInfo>, LogError> {
    let (file, mut rd, headers) = job_log::open(path, "the hosts file")?;
    let col = |n: &str| headers.iter().position(|h| h == n);
    let c_id = col("host_id")
        .ok_or_else(|| LogError(format!("{file}: line 1: missing column `host_id`")))?;
    let (c_group, c_fp, c_ip) = (col("group"), col("p_fpops"), col("p_iops"));
    let mut out = BTreeMap::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i as u64 + 2;
        let rec = rec.map_err(|e| LogError(format!("{file}: line {line}: {e}")))?;
        let f = Field {
            file: &file,
            line,
            rec: &rec,
            headers: &headers,
        };
        let id: u64 = f.req(c_id, "a whole number (the host's id)")?;
        const SPEED: &str = "a speed ≥ 0 (operations per second)";
        let info = HostInfo {
            group: c_group
                .map(|c| f.text(c).to_string())
                .filter(|g| !g.is_empty()),
            p_fpops: c_fp
                .map(|c| f.opt_non_negative(c, SPEED))
                .transpose()?
                .flatten(),
            p_iops: c_ip
                .map(|c| f.opt_non_negative(c, SPEED))
                .transpose()?
                .flatten(),
        };
        out.insert(id, info);
    }
    Ok(out)
}

/// One replayed result: the validator's decision under each scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    /// The result, workunit and host ids of the log.
    pub result_id: u64,
    pub workunit_id: u64,
    pub host_id: u64,
    /// The decision under credit_new (with the replay's own dense ids).
    pub new: DecidedResult,
    /// Classic credit granted to the same result (`None`: classic not replayed).
    pub classic: Option<f64>,
    /// The server's granted credit, from the log.
    pub logged: Option<f64>,
}

/// What a replay produced.
#[derive(Clone, Debug)]
pub struct Replay {
    /// Every decided result, in the order decided.
    pub results: Vec<Replayed>,
    /// Host groups, indexed by `DecidedResult::host_group`.
    pub groups: Vec<String>,
    /// Why classic credit was not replayed (`None`: it was).
    pub classic_skipped: Option<String>,
    /// The credit_new engine at the end of the replay.
    pub credit: CreditNew,
    /// Rows that never reached the validator (client errors, no reply).
    pub unreported: usize,
}

/// Dense ids of a log's entities, in ascending log id (so the validator meets
/// workunits and results in the same order as the server did).
struct Ids {
    wu: BTreeMap<u64, u32>,
    result: BTreeMap<u64, u32>,
    host: BTreeMap<u64, u32>,
}

/// Replays `rows` (see the module doc).
pub fn replay(
    rows: &[JobRow],
    cfg: &ReplayConfig,
    hosts: &BTreeMap<u64, HostInfo>,
) -> Result<Replay, LogError> {
    // App versions: each id one app and one device.
    let mut versions: BTreeMap<u32, (u32, bool, u64)> = BTreeMap::new();
    for r in rows {
        let v = versions
            .entry(r.app_version_id)
            .or_insert((r.app_id, r.is_gpu, r.line));
        if (v.0, v.1) != (r.app_id, r.is_gpu) {
            return Err(LogError(format!(
                "line {}: app version {} is app {} on {} here but app {} on {} at line {}",
                r.line,
                r.app_version_id,
                r.app_id,
                job_log::device_name(r.is_gpu),
                v.0,
                job_log::device_name(v.1),
                v.2
            )));
        }
    }
    if cfg.app.len() > 1
        && let Some(r) = rows.iter().find(|r| r.app_id as usize > cfg.app.len())
    {
        return Err(LogError(format!(
            "line {}: app {} has no [[app]] table in the configuration, which lists {} apps; \
             expected one [[app]] table per app id, or one [app] table for all",
            r.line,
            r.app_id,
            cfg.app.len()
        )));
    }
    let mut seen = BTreeMap::new();
    for r in rows {
        if let Some(l) = seen.insert(r.result_id, r.line) {
            return Err(LogError(format!(
                "line {}: result {} already appears at line {l}",
                r.line, r.result_id
            )));
        }
    }
    let mut groups: Vec<String> = Vec::new();
    let mut ids = Ids {
        wu: rows.iter().map(|r| (r.workunit_id, 0)).collect(),
        result: rows.iter().map(|r| (r.result_id, 0)).collect(),
        host: rows.iter().map(|r| (r.host_id, 0)).collect(),
    };
    let classic_skipped = rows
        .iter()
        .find(|r| {
            r.outcome == LogOutcome::Success && claim(r, hosts).is_none()
        })
        .map(|r| {
            format!(
                "line {} (result {}) has no claimed_credit and its host no p_fpops/p_iops in --hosts",
                r.line, r.result_id
            )
        });
    let mut new = build(
        rows,
        cfg,
        hosts,
        CreditScheme::CreditNew,
        &versions,
        &mut ids,
        &mut groups,
    );
    let mut classic = classic_skipped.is_none().then(|| {
        let mut g = Vec::new();
        build(
            rows,
            cfg,
            hosts,
            CreditScheme::Classic,
            &versions,
            &mut ids,
            &mut g,
        )
    });
    // Arrivals in time order; workunits of one time in ascending id.
    let mut order: Vec<(Time, u32, u32, usize)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.outcome, LogOutcome::Success | LogOutcome::ValidateError))
        .map(|(i, r)| {
            let t = r.validate_time.unwrap_or(r.received_time);
            (t, ids.wu[&r.workunit_id], ids.result[&r.result_id], i)
        })
        .collect();
    order.sort_unstable();
    let unreported = rows.len() - order.len();
    // The results each project's validator decides, in order.
    let (mut new_decided, mut classic_decided) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < order.len() {
        let t = order[i].0;
        let j = i + order[i..].iter().take_while(|o| o.0 == t).count();
        let classic = classic.as_mut().map(|c| (c, &mut classic_decided));
        for (p, decided) in std::iter::once((&mut new, &mut new_decided)).chain(classic) {
            for &(_, _, rid, k) in &order[i..j] {
                arrive(p, rid, &rows[k], hosts);
            }
            let mut last = 0;
            for &(_, wuid, _, _) in &order[i..j] {
                if wuid != last {
                    validator::handle_wu(p, t, WuId(wuid), decided);
                    last = wuid;
                }
            }
        }
        i = j;
    }
    // Back to the log's ids.
    let back = |m: &BTreeMap<u64, u32>| -> Vec<u64> { m.keys().copied().collect() };
    let (wus, results, hostids) = (back(&ids.wu), back(&ids.result), back(&ids.host));
    let classic_credit: BTreeMap<ResultId, f64> = classic
        .map(|_| {
            classic_decided
                .iter()
                .map(|d| (d.result_id, d.granted_credit))
                .collect()
        })
        .unwrap_or_default();
    let by_id: BTreeMap<u64, &JobRow> = rows.iter().map(|r| (r.result_id, r)).collect();
    let results = new_decided
        .into_iter()
        .map(|mut d| {
            let classic = classic_credit.get(&d.result_id).copied();
            let rid = results[d.result_id.0 as usize - 1];
            let row = by_id[&rid];
            d.true_flops = row.true_flops.unwrap_or(row.rsc_fpops_est);
            Replayed {
                result_id: rid,
                workunit_id: wus[d.workunit_id.0 as usize - 1],
                host_id: hostids[d.host_id as usize - 1],
                classic: classic_skipped.is_none().then_some(classic.unwrap_or(0.0)),
                logged: row.granted_credit,
                new: d,
            }
        })
        .collect();
    Ok(Replay {
        results,
        groups,
        classic_skipped,
        credit: new.credit,
        unreported,
    })
}

/// Classic claimed credit of a row: the logged claim if positive, else from its
/// host's benchmarks as the scheduler computes it (spec backend §6.1).
fn claim(r: &JobRow, hosts: &BTreeMap<u64, HostInfo>) -> Option<f64> {
    if let Some(c) = r.claimed_credit.filter(|c| *c > 0.0) {
        return Some(c);
    }
    let h = hosts.get(&r.host_id)?;
    Some(classic_claimed_credit(r.cpu_time, h.p_fpops?, h.p_iops?))
}

/// The database of `rows` under `scheme`: hosts with one HAV per app version they
/// ran, workunits and results (IN_PROGRESS, sent) in ascending log id.
fn build(
    rows: &[JobRow],
    cfg: &ReplayConfig,
    hosts: &BTreeMap<u64, HostInfo>,
    scheme: CreditScheme,
    versions: &BTreeMap<u32, (u32, bool, u64)>,
    ids: &mut Ids,
    groups: &mut Vec<String>,
) -> Project {
    // One app per id up to the log's largest, each with its validator under `scheme`.
    let napps = rows.iter().map(|r| r.app_id).max().unwrap_or(1);
    let app = |id: u32| {
        &cfg.app[if cfg.app.len() == 1 {
            0
        } else {
            id as usize - 1
        }]
    };
    let apps = (1..=napps)
        .map(|id| {
            let a = app(id);
            AppConfig {
                validator: Some(ValidatorConfig {
                    credit: scheme,
                    ..a.validator.clone().unwrap_or_else(|| cfg.validator.clone())
                }),
                ..a.clone()
            }
        })
        .collect();
    let pc = ProjectConfig {
        backend: cfg.backend.clone(),
        app: apps,
        ..Default::default()
    };
    let mut p = Project::new(0, "replay", pc.resolve(), 0, false);
    for (&av, &(appid, gpu, _)) in versions {
        p.credit.register_version(appid, av, gpu);
        p.credit.set_min_avg_pfc(appid, app(appid).min_avg_pfc);
    }
    for (&hid, dense) in ids.host.iter_mut() {
        let group = hosts.get(&hid).and_then(|h| h.group.clone());
        let gi = group.map(|g| match groups.iter().position(|x| *x == g) {
            Some(i) => i as u32,
            None => {
                groups.push(g);
                groups.len() as u32 - 1
            }
        });
        let id = p.db.hosts.next_id();
        let mut row = HostRow {
            id,
            ..Default::default()
        };
        row.set_host_group(gi);
        *dense = p.db.hosts.insert(row).0;
    }
    let first: BTreeMap<u64, &JobRow> = rows.iter().rev().map(|r| (r.workunit_id, r)).collect();
    let template = crate::server::config::WuTemplate::default();
    // Every replayed workunit accepts any number of successes; they share one copy.
    let limits = std::sync::Arc::new(WuLimits {
        max_success_results: i32::MAX,
        ..WuLimits::of(&template)
    });
    for (&wid, dense) in ids.wu.iter_mut() {
        let r = first[&wid];
        let mut wu = WorkunitRow::from_template(&template, 0);
        wu.limits = limits.clone();
        wu.appid = r.app_id;
        wu.rsc_fpops_est = r.rsc_fpops_est;
        wu.rsc_fpops_bound = r.rsc_fpops_bound;
        wu.true_fpops = r.true_flops.unwrap_or(r.rsc_fpops_est);
        wu.min_quorum = r.min_quorum.unwrap_or(cfg.min_quorum);
        wu.target_nresults = wu.min_quorum;
        wu.transition_time = db_time(INT_MAX);
        *dense = p.db.insert_workunit(Actor::WorkGenerator, wu).0;
    }
    let by_id: BTreeMap<u64, &JobRow> = rows.iter().map(|r| (r.result_id, r)).collect();
    for (&rid, dense) in ids.result.iter_mut() {
        let r = by_id[&rid];
        let wuid = ids.wu[&r.workunit_id];
        let hostid = ids.host[&r.host_id];
        let suffix = p.db.wu(WuId(wuid)).results.len() as u16;
        let mut row = ResultRow::new(
            WuId(wuid),
            suffix,
            r.sent_time,
            0,
            0,
            ServerState::InProgress,
        );
        row.hostid = HostId(hostid);
        row.sent_time = db_time(r.sent_time);
        row.flops_estimate = r.flops_estimate;
        row.app_version_id = r.app_version_id;
        *dense = p.db.insert_result(Actor::Transitioner, row).0;
        let h = p.db.host_mut(HostId(hostid));
        if h.hav(r.app_version_id).is_none() {
            h.havs.push(HavRow {
                app_version_id: r.app_version_id,
                ..Default::default()
            });
        }
    }
    p
}

/// Result `rid` is reported as `r` says: OVER with its outcome, times and output
/// (an unreadable output for VALIDATE_ERROR), and its classic claim.
fn arrive(p: &mut Project, rid: u32, r: &JobRow, hosts: &BTreeMap<u64, HostInfo>) {
    let claimed = if p
        .app_of(p.db.result(ResultId(rid)).workunitid)
        .cfg
        .validator
        .credit
        == CreditScheme::Classic
    {
        claim(r, hosts).unwrap_or(0.0)
    } else {
        r.claimed_credit.unwrap_or(0.0)
    };
    let row = p.db.result_mut(ResultId(rid));
    row.received_time = db_time(r.received_time);
    row.cpu_time = r.cpu_time;
    row.elapsed_time = r.elapsed_time;
    row.output = r.output;
    row.runtime_outlier = r.runtime_outlier;
    row.claimed_credit = claimed;
    row.output_status = if r.outcome == LogOutcome::ValidateError {
        OutputStatus::Unreadable
    } else {
        OutputStatus::Ok
    };
    p.db.set_server_state(Actor::Scheduler, ResultId(rid), ServerState::Over);
    p.db.set_outcome(Actor::Scheduler, ResultId(rid), Outcome::Success);
    let wuid = p.db.result(ResultId(rid)).workunitid;
    p.db.set_need_validate(Actor::Scheduler, wuid, true);
}
