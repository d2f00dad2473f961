//! The credit_new engine across app versions (spec backend §6.2): each app version's
//! `pfc` average, `pfc_scale` and recent average credit, each app's `min_avg_pfc`,
//! `get_pfc` for one VALID result, the combination of a validated set
//! (`assign_credit_set`), and the feeder's `update_av_scales`.
//!
//! The API is pure arithmetic over this state and the host app version's averages:
//! it reads no database row. The validator ([`super::validator`]) calls it for the
//! simulated project, and `boinc-sim credit` replays a job log through that same
//! validator, so a replay is the server's arithmetic, not a copy of it.
//!
//! App versions are registered with their app and whether they run on a GPU
//! ([`CreditNew::register_version`]); BOINC knows this from the version's plan class
//! (`plan_class_to_proc_type`).

use super::credit::{self, Average, COBBLESTONE_SCALE, PfcMode};
use super::db::HavRow;
use crate::engine::Time;
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// How often the feeder runs `update_av_scales` (BOINC's master feeder: every 10
/// minutes, spec backend §6.2).
pub(crate) const AV_SCALES_PERIOD: Time = 600;

/// The credit_new columns of one APP_VERSION row (spec backend §1.4, §6.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VersionStats {
    /// The app the version belongs to (`app_version.appid`).
    pub app_id: u32,
    /// Whether the version uses a GPU (its plan class's processor type).
    pub is_gpu: bool,
    /// `pfc`: the average of `raw_pfc / rsc_fpops_est` over its VALID results.
    pub pfc: Average,
    /// `pfc_scale`: the factor bringing this version's `pfc` to the app's most
    /// efficient one; 0 = not yet computed.
    pub pfc_scale: f64,
    /// Recent average credit of the version's results (credits per day).
    pub expavg_credit: f64,
    /// When `expavg_credit` was last updated (0 = never).
    pub expavg_time: Time,
}

/// The credit_new column of one APP row.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AppStats {
    /// `app.min_avg_pfc`, maintained by `update_av_scales`; 0 = not yet computed.
    pub min_avg_pfc: f64,
}

/// What `get_pfc` needs to know of one VALID result and its workunit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PfcInput {
    pub app_id: u32,
    pub app_version_id: u32,
    pub elapsed_time: f64,
    pub cpu_time: f64,
    /// Peak FLOPS of the device(s) used, as the scheduler set it at send.
    pub flops_estimate: f64,
    pub runtime_outlier: bool,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
    /// `received_time − sent_time`, seconds.
    pub turnaround: f64,
}

/// `get_pfc`'s answer: the mode, the PFC, and whether the result is a runtime outlier
/// (set when its flops estimate was unusable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pfc {
    pub mode: PfcMode,
    pub pfc: f64,
    pub runtime_outlier: bool,
}

/// The validator settings `get_pfc` reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PfcSettings {
    /// `app.host_scale_check`: host scaling only after 10 consecutive valid results.
    pub host_scale_check: bool,
    /// `--max_granted_credit`.
    pub max_granted_credit: f64,
}

/// The credit_new statistics of one project: every registered app version and app.
#[derive(Clone, Debug, Default)]
pub struct CreditNew {
    versions: BTreeMap<u32, VersionStats>,
    apps: BTreeMap<u32, AppStats>,
    /// When `update_av_scales` is next due.
    next_av_scales: Time,
}

impl CreditNew {
    /// An engine with no versions; `update_av_scales` first due at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers app version `av_id` of app `app_id` (a GPU version if `is_gpu`).
    /// Registering a known version again keeps its statistics and updates its app
    /// and kind.
    pub(crate) fn register_version(&mut self, app_id: u32, av_id: u32, is_gpu: bool) {
        let v = self.versions.entry(av_id).or_default();
        v.app_id = app_id;
        v.is_gpu = is_gpu;
        self.apps.entry(app_id).or_default();
    }

    /// Sets an app's `min_avg_pfc` (the value configured in the APP row before any
    /// `update_av_scales`).
    pub(crate) fn set_min_avg_pfc(&mut self, app_id: u32, v: f64) {
        self.apps.entry(app_id).or_default().min_avg_pfc = v;
    }

    /// The statistics of app version `av_id`, if registered.
    pub fn version(&self, av_id: u32) -> Option<&VersionStats> {
        self.versions.get(&av_id)
    }

    /// Every registered version, ascending id.
    pub fn versions(&self) -> impl Iterator<Item = (u32, &VersionStats)> {
        self.versions.iter().map(|(k, v)| (*k, v))
    }

    /// `app.min_avg_pfc` (0 for an unknown app).
    pub fn min_avg_pfc(&self, app_id: u32) -> f64 {
        self.apps.get(&app_id).map_or(0.0, |a| a.min_avg_pfc)
    }

    /// credit_new's anchor `E = rsc_fpops_est × (app.min_avg_pfc if non-zero else 1)`
    /// (spec backend §6.2).
    pub(crate) fn anchor(&self, app_id: u32, rsc_fpops_est: f64) -> f64 {
        let m = self.min_avg_pfc(app_id);
        rsc_fpops_est * if m != 0.0 { m } else { 1.0 }
    }

    /// The version of `j`, registered on first sight as a CPU version of its app
    /// (what BOINC assumes of a plan class it does not know).
    fn version_mut(&mut self, app_id: u32, av_id: u32) -> &mut VersionStats {
        if !self.versions.contains_key(&av_id) {
            self.register_version(app_id, av_id, false);
        }
        self.versions.get_mut(&av_id).expect("just registered")
    }

    /// credit_new `get_pfc` of one VALID result (spec backend §6.2 steps 3–5; the
    /// caller handles step 1, no HAV): the PFC scaled by its version's `pfc_scale`
    /// and by the host scale of `hav` against its version, and the statistics
    /// updates of step 4 (`hav.pfc`, `hav.et`, `hav.turnaround`, the version's
    /// `pfc`).
    pub(crate) fn get_pfc(&mut self, j: &PfcInput, hav: &mut HavRow, s: &PfcSettings) -> Pfc {
        let elapsed = if j.elapsed_time < 1e-6 {
            j.cpu_time
        } else {
            j.elapsed_time
        };
        let mut outlier = j.runtime_outlier;
        let mut flops = j.flops_estimate;
        if flops <= 0.0 || flops == 1e9 {
            flops = credit::AVG_CPU_FPOPS;
            outlier = true;
        }
        let raw_pfc = elapsed * flops;
        let av = self.version_mut(j.app_id, j.app_version_id);
        let mut pfc = raw_pfc;
        let scale_applied = av.pfc_scale != 0.0;
        if scale_applied {
            pfc *= av.pfc_scale;
        }
        let host_scaled = (!s.host_scale_check
            || hav.consecutive_valid >= credit::CONS_VALID_HOST_SCALE)
            && hav.pfc.n >= credit::MIN_HOST_SAMPLES
            && hav.pfc.avg != 0.0
            && av.pfc.n >= credit::MIN_VERSION_SAMPLES;
        if host_scaled {
            pfc *= (av.pfc.avg / hav.pfc.avg).min(10.0);
        }
        let mut mode = if scale_applied && host_scaled {
            PfcMode::Normal
        } else {
            PfcMode::Approx
        };
        if !outlier {
            let x = raw_pfc / j.rsc_fpops_est;
            if (1e-4..=1e4).contains(&x) {
                let (t, w, l) = credit::HAV_AVG;
                hav.pfc.update(x, t, w, l);
                let (t, w, l) = credit::AV_AVG;
                av.pfc.update(x, t, w, l);
            }
            let (t, w, l) = credit::HAV_AVG;
            hav.et.update(elapsed / j.rsc_fpops_est, t, w, l);
            hav.turnaround.update(j.turnaround, t, w, l);
        }
        if pfc > j.rsc_fpops_bound {
            pfc = j.rsc_fpops_bound;
        }
        if pfc * COBBLESTONE_SCALE > s.max_granted_credit {
            pfc = s.max_granted_credit / COBBLESTONE_SCALE;
            mode = PfcMode::Invalid;
        }
        Pfc {
            mode,
            pfc,
            runtime_outlier: outlier,
        }
    }

    /// Notes `credit` granted at `now` to a result of version `av_id` sent at
    /// `sent`: the version's recent average credit (spec backend §6.2 step 4, with
    /// the `update_average` of §6.3).
    pub(crate) fn note_credit(
        &mut self,
        app_id: u32,
        av_id: u32,
        now: Time,
        sent: Time,
        credit: f64,
    ) {
        let v = self.version_mut(app_id, av_id);
        let last = (v.expavg_time != 0).then_some(v.expavg_time);
        let (avg, t) = credit::update_average(
            now,
            sent,
            credit,
            credit::CREDIT_HALF_LIFE,
            v.expavg_credit,
            last,
        );
        v.expavg_credit = avg;
        v.expavg_time = t;
    }

    /// When [`Self::av_scales_if_due`] next runs the update: a feeder pass must
    /// happen then even if it has nothing else to do (docs/performance.md "Idle
    /// daemons").
    pub(crate) fn next_av_scales(&self) -> Time {
        self.next_av_scales
    }

    /// Runs [`Self::update_av_scales`] if it is due at `now` (every
    /// [`AV_SCALES_PERIOD`] seconds from time 0). The feeder calls it on each pass, as
    /// BOINC's master feeder does; the validator calls it too before granting, so
    /// credit sees the scales of the 600-s schedule whatever the order of daemon
    /// passes (the update depends only on statistics the validator changes, so
    /// running it late but before the next validation changes nothing). Returns
    /// whether it ran.
    pub(crate) fn av_scales_if_due(&mut self, now: Time) -> bool {
        if now < self.next_av_scales {
            return false;
        }
        self.update_av_scales();
        self.next_av_scales = (now.div_euclid(AV_SCALES_PERIOD) + 1) * AV_SCALES_PERIOD;
        true
    }

    /// `update_av_scales` (spec backend §6.2, "App-version normalisation"): per app,
    /// the sample-weighted mean `pfc` of its CPU versions and of its GPU versions
    /// with more than 100 samples; `min_avg_pfc` = the smaller mean if both kinds
    /// qualify, else the CPU mean if at least two CPU versions do, else the GPU mean ×
    /// 0.1 if a GPU version does (otherwise nothing changes); then every version of
    /// the app with at least 100 samples gets `pfc_scale = min_avg_pfc / pfc.avg`.
    pub fn update_av_scales(&mut self) {
        for (&app_id, app) in self.apps.iter_mut() {
            let (mut cpu, mut gpu) = (Mean::default(), Mean::default());
            for v in self.versions.values().filter(|v| v.app_id == app_id) {
                if v.pfc.n > credit::MIN_VERSION_SAMPLES {
                    let m = if v.is_gpu { &mut gpu } else { &mut cpu };
                    m.add(v.pfc.avg, v.pfc.n as f64);
                }
            }
            let min_avg_pfc = match (cpu.mean(), gpu.mean()) {
                (Some(c), Some(g)) => c.min(g),
                (Some(c), None) if cpu.count >= 2 => c,
                (_, Some(g)) => g * 0.1,
                _ => continue,
            };
            app.min_avg_pfc = min_avg_pfc;
            for v in self.versions.values_mut().filter(|v| v.app_id == app_id) {
                if v.pfc.n >= credit::MIN_VERSION_SAMPLES && v.pfc.avg != 0.0 {
                    v.pfc_scale = min_avg_pfc / v.pfc.avg;
                }
            }
        }
    }

    /// credit_new's combination of a validated set (`assign_credit_set`, spec backend
    /// §6.2): the pegged average of the NORMAL PFCs if at least two; else of the
    /// APPROX and WU-estimate ones (a single NORMAL counted twice), or the anchor if
    /// none; in credits.
    pub(crate) fn assign_credit_set(pfcs: &[(PfcMode, f64)], anchor: f64) -> f64 {
        let normal: SmallVec<[f64; 8]> = pfcs
            .iter()
            .filter(|(m, _)| *m == PfcMode::Normal)
            .map(|(_, v)| *v)
            .collect();
        let x = if normal.len() >= 2 {
            credit::pegged_average(&normal, anchor)
        } else {
            let mut approx: SmallVec<[f64; 8]> = pfcs
                .iter()
                .filter(|(m, _)| matches!(m, PfcMode::Approx | PfcMode::WuEstimate))
                .map(|(_, v)| *v)
                .collect();
            if normal.len() == 1 {
                approx.push(normal[0]);
                approx.push(normal[0]);
            }
            if approx.is_empty() {
                anchor
            } else {
                credit::pegged_average(&approx, anchor)
            }
        };
        x * COBBLESTONE_SCALE
    }
}

/// A sample-weighted mean of version averages (BOINC weighs each version by its
/// number of samples).
#[derive(Default)]
struct Mean {
    sum: f64,
    weight: f64,
    count: u32,
}

impl Mean {
    fn add(&mut self, avg: f64, n: f64) {
        self.sum += avg * n;
        self.weight += n;
        self.count += 1;
    }
    fn mean(&self) -> Option<f64> {
        (self.count > 0 && self.weight > 0.0).then(|| self.sum / self.weight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: u32 = 1;
    const GPU: u32 = 2;

    fn two_versions() -> CreditNew {
        let mut c = CreditNew::new();
        c.register_version(1, CPU, false);
        c.register_version(1, GPU, true);
        c
    }

    fn job(av: u32, elapsed: f64, flops: f64) -> PfcInput {
        PfcInput {
            app_id: 1,
            app_version_id: av,
            elapsed_time: elapsed,
            cpu_time: elapsed,
            flops_estimate: flops,
            runtime_outlier: false,
            rsc_fpops_est: 8.64e13,
            rsc_fpops_bound: 8.64e15,
            turnaround: 3600.0,
        }
    }

    const SETTINGS: PfcSettings = PfcSettings {
        host_scale_check: false,
        max_granted_credit: 73_000_000.0,
    };

    fn set_pfc(c: &mut CreditNew, av: u32, n: u32, avg: f64) {
        c.versions.get_mut(&av).unwrap().pfc = Average { n, avg };
    }

    /// The spec's cold-start examples (§6.2) with a CPU and a GPU version: a raw
    /// PFC of 8.64e13 alone → 200; with a GPU result of raw PFC 1.728e14 → 216.67
    /// each, APPROX mode (no scale, no host scale); each version gets one sample.
    /// (Half a day at 2 GFLOPS stands for the spec's day at 1 GFLOPS: an estimate
    /// of exactly 1e9 is BOINC's "unknown", replaced by 4.3e9.)
    #[test]
    fn cold_start_examples_with_two_versions() {
        let mut c = two_versions();
        let mut hav = HavRow::default();
        let one = c.get_pfc(&job(CPU, 43200.0, 2e9), &mut hav, &SETTINGS);
        assert_eq!(one.mode, PfcMode::Approx);
        let credit = CreditNew::assign_credit_set(&[(one.mode, one.pfc)], c.anchor(1, 8.64e13));
        assert!((credit - 200.0).abs() < 1e-9, "{credit}");

        let mut c = two_versions();
        let (mut h1, mut h2) = (HavRow::default(), HavRow::default());
        let a = c.get_pfc(&job(CPU, 43200.0, 2e9), &mut h1, &SETTINGS);
        let b = c.get_pfc(&job(GPU, 86400.0, 2e9), &mut h2, &SETTINGS);
        let credit =
            CreditNew::assign_credit_set(&[(a.mode, a.pfc), (b.mode, b.pfc)], c.anchor(1, 8.64e13));
        assert!((credit - 216.666_666_666).abs() < 1e-6, "{credit}");
        assert_eq!(c.version(CPU).unwrap().pfc, Average { n: 1, avg: 1.0 });
        assert_eq!(c.version(GPU).unwrap().pfc, Average { n: 1, avg: 2.0 });
        assert_eq!((h1.pfc.n, h2.pfc.avg), (1, 2.0));
    }

    /// Both kinds qualify: `min_avg_pfc` is the smaller mean and every version is
    /// scaled to it; the GPU version's credit then matches the CPU version's per
    /// FLOP (NORMAL mode once host scaling applies).
    #[test]
    fn cpu_and_gpu_take_the_smaller_mean() {
        let mut c = two_versions();
        set_pfc(&mut c, CPU, 101, 2.0);
        set_pfc(&mut c, GPU, 150, 50.0);
        assert!(c.av_scales_if_due(0));
        assert_eq!(c.min_avg_pfc(1), 2.0);
        assert_eq!(c.version(CPU).unwrap().pfc_scale, 1.0);
        assert_eq!(c.version(GPU).unwrap().pfc_scale, 2.0 / 50.0);
        // Not due again before 600 s.
        assert!(!c.av_scales_if_due(599));
        assert!(c.av_scales_if_due(600));
        // A GPU host with 10 samples at the version's average: host scale 1, so a
        // job of one anchor's worth of real work at 50× claims 2 × E, like a CPU.
        let mut hav = HavRow {
            pfc: Average { n: 10, avg: 50.0 },
            ..HavRow::default()
        };
        let p = c.get_pfc(&job(GPU, 86400.0, 50e9), &mut hav, &SETTINGS);
        assert_eq!(p.mode, PfcMode::Normal);
        assert!((p.pfc - 2.0 * 8.64e13).abs() < 1e-3 * 8.64e13, "{}", p.pfc);
        // Credit anchored at E × min_avg_pfc: two such NORMAL results → 400.
        let credit =
            CreditNew::assign_credit_set(&[(p.mode, p.pfc), (p.mode, p.pfc)], c.anchor(1, 8.64e13));
        assert!((credit - 400.0).abs() < 1.0, "{credit}");
    }

    /// GPU versions only: the (sample-weighted) GPU mean × 0.1.
    #[test]
    fn gpu_only_takes_a_tenth_of_the_gpu_mean() {
        let mut c = CreditNew::new();
        c.register_version(1, 5, true);
        c.register_version(1, 6, true);
        set_pfc(&mut c, 5, 200, 10.0);
        set_pfc(&mut c, 6, 600, 30.0);
        c.update_av_scales();
        // Weighted mean (200×10 + 600×30)/800 = 25 → 2.5.
        assert_eq!(c.min_avg_pfc(1), 2.5);
        assert_eq!(c.version(5).unwrap().pfc_scale, 0.25);
        assert_eq!(c.version(6).unwrap().pfc_scale, 2.5 / 30.0);
    }

    /// CPU versions only: the weighted CPU mean needs two qualifying versions; one
    /// (today's single-version projects) changes nothing. A version with exactly
    /// 100 samples is left out of the means but scaled.
    #[test]
    fn cpu_only_needs_two_versions() {
        let mut c = CreditNew::new();
        c.register_version(1, 1, false);
        set_pfc(&mut c, 1, 5000, 3.0);
        c.set_min_avg_pfc(1, 0.0);
        c.update_av_scales();
        assert_eq!(c.min_avg_pfc(1), 0.0);
        assert_eq!(c.version(1).unwrap().pfc_scale, 0.0);

        c.register_version(1, 2, false);
        c.register_version(1, 3, false);
        set_pfc(&mut c, 2, 101, 1.0);
        set_pfc(&mut c, 3, 100, 8.0);
        c.update_av_scales();
        let mean = (5000.0 * 3.0 + 101.0 * 1.0) / 5101.0;
        assert_eq!(c.min_avg_pfc(1), mean);
        assert_eq!(c.version(1).unwrap().pfc_scale, mean / 3.0);
        assert_eq!(c.version(2).unwrap().pfc_scale, mean / 1.0);
        assert_eq!(c.version(3).unwrap().pfc_scale, mean / 8.0);
    }

    /// Apps are normalised separately.
    #[test]
    fn apps_do_not_mix() {
        let mut c = CreditNew::new();
        c.register_version(1, 1, false);
        c.register_version(2, 2, true);
        set_pfc(&mut c, 1, 500, 2.0);
        set_pfc(&mut c, 2, 500, 40.0);
        c.update_av_scales();
        assert_eq!(c.min_avg_pfc(1), 0.0, "one CPU version alone: no change");
        assert_eq!(c.min_avg_pfc(2), 4.0);
        assert_eq!(c.version(2).unwrap().pfc_scale, 0.1);
    }

    /// A flops estimate of exactly 1e9 is replaced by 4.3e9 and makes the result a
    /// runtime outlier: no statistics.
    #[test]
    fn unusable_estimate_is_an_outlier() {
        let mut c = two_versions();
        let mut hav = HavRow::default();
        let p = c.get_pfc(&job(CPU, 100.0, 1e9), &mut hav, &SETTINGS);
        assert!(p.runtime_outlier);
        assert_eq!(p.pfc, 100.0 * credit::AVG_CPU_FPOPS);
        assert_eq!(c.version(CPU).unwrap().pfc.n, 0);
        assert_eq!(hav.pfc.n, 0);
    }
}
