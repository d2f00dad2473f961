//! Credit per FLOP of real work and device neutrality, from the
//! results the validator decided: per app version, per device type and per host
//! group, in time buckets, and over the headline window. A run
//! (`credit_versions.csv`, `credit_devices.csv`, `credit_groups.csv`, summary) and a
//! replay (`boinc-sim credit`) tally them with the same [`CreditFigures`], so both
//! mean the same thing. Definitions in `docs/outputs.md`.

use super::job_log::device_name;
use crate::engine::Time;
use crate::server::job_log::DecidedResult;
use crate::server::types::ValidateState;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

/// File names of the tables.
pub(crate) const VERSIONS_CSV: &str = "credit_versions.csv";
pub(crate) const DEVICES_CSV: &str = "credit_devices.csv";
pub(crate) const GROUPS_CSV: &str = "credit_groups.csv";

/// Why an app has no neutrality ratio.
pub const NO_RATIO: &str = "fewer than two app versions of the app were granted credit";

/// Credit and true FLOPs of some VALID results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Acc {
    pub results: u64,
    pub credit: f64,
    pub true_flops: f64,
    pub is_gpu: bool,
    /// The version's `pfc_scale`, `pfc` average and its app's `min_avg_pfc` at the
    /// last result tallied.
    pub pfc_scale: f64,
    pub av_pfc_avg: f64,
    pub min_avg_pfc: f64,
}

impl Acc {
    fn add(&mut self, r: &DecidedResult) {
        self.results += 1;
        self.credit += r.granted_credit;
        self.true_flops += r.true_flops;
        self.is_gpu = r.is_gpu;
        self.pfc_scale = r.pfc_scale;
        self.av_pfc_avg = r.av_pfc_avg;
        self.min_avg_pfc = r.min_avg_pfc;
    }

    /// Credit per GFLOP of real work (`None` without FLOPs).
    pub fn credit_per_gflop(&self) -> Option<f64> {
        (self.true_flops > 0.0).then(|| self.credit / (self.true_flops / 1e9))
    }
}

/// The tallies of one project.
#[derive(Clone, Debug)]
pub struct CreditFigures {
    interval: Time,
    warmup: Time,
    /// (bucket, app, app version).
    pub versions: BTreeMap<(i64, u32, u32), Acc>,
    /// (bucket, app, is_gpu).
    pub devices: BTreeMap<(i64, u32, bool), Acc>,
    /// (bucket, app, host group index, `None` for hosts of no group).
    pub groups: BTreeMap<(i64, u32, Option<u32>), Acc>,
    /// (app, app version) over the headline window (decided at or after `warmup`).
    pub window: BTreeMap<(u32, u32), Acc>,
}

impl CreditFigures {
    /// Buckets of `interval` seconds from 0; the window starts at `warmup`.
    pub fn new(interval: Time, warmup: Time) -> Self {
        Self {
            interval: interval.max(1),
            warmup,
            versions: BTreeMap::new(),
            devices: BTreeMap::new(),
            groups: BTreeMap::new(),
            window: BTreeMap::new(),
        }
    }

    /// Tallies a decided result: VALID results with credit count, at the time they
    /// were validated, under their host's group (`DecidedResult::host_group`).
    pub fn add(&mut self, r: &DecidedResult) {
        if r.validate_state != ValidateState::Valid || r.granted_credit <= 0.0 {
            return;
        }
        let b = r.validate_time.div_euclid(self.interval);
        let (app, av) = (r.app_id, r.app_version_id);
        self.versions.entry((b, app, av)).or_default().add(r);
        self.devices.entry((b, app, r.is_gpu)).or_default().add(r);
        self.groups
            .entry((b, app, r.host_group))
            .or_default()
            .add(r);
        if r.validate_time >= self.warmup {
            self.window.entry((app, av)).or_default().add(r);
        }
    }

    /// Device neutrality of app `app` in bucket `b`: highest / lowest credit per
    /// GFLOP across its versions with credit in the bucket.
    fn bucket_ratio(&self, b: i64, app: u32) -> Option<f64> {
        ratio(
            self.versions
                .range((b, app, 0)..=(b, app, u32::MAX))
                .map(|(_, a)| a),
        )
    }

    /// Device neutrality of each app over the window: `Ok(ratio)`, or `Err(reason)`.
    pub fn neutrality(&self) -> BTreeMap<u32, Result<f64, &'static str>> {
        let mut apps: BTreeMap<u32, Vec<&Acc>> = BTreeMap::new();
        for ((app, _), a) in &self.window {
            apps.entry(*app).or_default().push(a);
        }
        apps.into_iter()
            .map(|(app, accs)| (app, ratio(accs.into_iter()).ok_or(NO_RATIO)))
            .collect()
    }

    /// The largest neutrality ratio across apps (`summary.csv`'s
    /// `credit_neutrality_ratio`), `None` when no app has one.
    pub(crate) fn worst_neutrality(&self) -> Option<f64> {
        self.neutrality()
            .into_values()
            .filter_map(Result::ok)
            .reduce(f64::max)
    }

    /// The neutrality of each app as JSON (`summary.json`).
    pub(crate) fn neutrality_json(&self) -> serde_json::Value {
        let m: serde_json::Map<String, serde_json::Value> = self
            .neutrality()
            .into_iter()
            .map(|(app, r)| {
                let v = match r {
                    Ok(x) => serde_json::json!({ "ratio": x }),
                    Err(why) => serde_json::json!({ "ratio": null, "reason": why }),
                };
                (app.to_string(), v)
            })
            .collect();
        serde_json::Value::Object(m)
    }
}

/// Highest / lowest credit per GFLOP of `accs` (needs two with credit per GFLOP).
fn ratio<'a>(accs: impl Iterator<Item = &'a Acc>) -> Option<f64> {
    let v: Vec<f64> = accs
        .filter_map(Acc::credit_per_gflop)
        .filter(|x| *x > 0.0)
        .collect();
    if v.len() < 2 {
        return None;
    }
    let hi = v.iter().copied().fold(f64::MIN, f64::max);
    let lo = v.iter().copied().fold(f64::MAX, f64::min);
    Some(hi / lo)
}

fn float(v: f64) -> String {
    format!("{v:?}")
}

fn opt(v: Option<f64>) -> String {
    v.map(float).unwrap_or_default()
}

/// Names of host groups in `credit_groups.csv`: `names[i]` for group `i`,
/// `unnamed` for hosts of no group.
pub struct GroupNames<'a> {
    pub names: &'a [String],
    pub unnamed: &'a str,
}

impl GroupNames<'_> {
    fn name(&self, g: Option<u32>) -> &str {
        g.and_then(|g| self.names.get(g as usize))
            .map_or(self.unnamed, String::as_str)
    }
}

/// Writes the three tables for `projects` (name, tallies) into `dir`.
pub fn write(
    dir: &Path,
    projects: &[(&str, &CreditFigures)],
    groups: &GroupNames,
) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(VERSIONS_CSV))?;
    w.write_record([
        "project",
        "time_s",
        "app_id",
        "app_version_id",
        "device",
        "results",
        "credit",
        "true_flops",
        "credit_per_gflop",
        "pfc_scale",
        "av_pfc_avg",
        "min_avg_pfc",
        "neutrality_ratio",
    ])?;
    for (name, f) in projects {
        for ((b, app, av), a) in &f.versions {
            w.write_record([
                name.to_string(),
                (b * f.interval).to_string(),
                app.to_string(),
                av.to_string(),
                device_name(a.is_gpu).to_string(),
                a.results.to_string(),
                float(a.credit),
                float(a.true_flops),
                opt(a.credit_per_gflop()),
                float(a.pfc_scale),
                float(a.av_pfc_avg),
                float(a.min_avg_pfc),
                opt(f.bucket_ratio(*b, *app)),
            ])?;
        }
    }
    w.flush()?;
    let head = |key: &str| {
        [
            "project",
            "time_s",
            "app_id",
            key,
            "results",
            "credit",
            "true_flops",
            "credit_per_gflop",
        ]
        .map(String::from)
    };
    let row =
        |w: &mut csv::Writer<std::fs::File>, name: &str, t: i64, app: u32, k: &str, a: &Acc| {
            w.write_record([
                name.to_string(),
                t.to_string(),
                app.to_string(),
                k.to_string(),
                a.results.to_string(),
                float(a.credit),
                float(a.true_flops),
                opt(a.credit_per_gflop()),
            ])
        };
    let mut w = csv::Writer::from_path(dir.join(DEVICES_CSV))?;
    w.write_record(head("device"))?;
    for (name, f) in projects {
        for ((b, app, gpu), a) in &f.devices {
            row(&mut w, name, b * f.interval, *app, device_name(*gpu), a)?;
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join(GROUPS_CSV))?;
    w.write_record(head("host_group"))?;
    for (name, f) in projects {
        for ((b, app, g), a) in &f.groups {
            row(&mut w, name, b * f.interval, *app, groups.name(*g), a)?;
        }
    }
    w.flush()?;
    Ok(())
}
