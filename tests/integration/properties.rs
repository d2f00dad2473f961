//! Property tests: on many random scenarios (random quorum and limits, error,
//! wrong-result and dropout rates, grace period, variant, daemon outages; and
//! projects of several apps with multi-threaded and GPU versions), the invariants of
//! spec backend §3 and the client's hold after every daemon step, and a run is a
//! pure function of its seed.

use boinc_sim::scenario::load::load_str;
use boinc_sim::server::invariants::check_quiescent;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::RunOptions;
use proptest::prelude::*;

#[allow(clippy::too_many_arguments)]
fn scenario(
    q: i32,
    extra_target: i32,
    extra_total: i32,
    errors: i32,
    err_p: f64,
    wrong_p: f64,
    drop_p: f64,
    grace: i64,
    seed_variant: bool,
    classic: bool,
    seed: u64,
    outage: u8,
) -> String {
    let t = q + extra_target;
    let s = t + 1;
    let total = s + extra_total;
    let variant = if seed_variant { "seed" } else { "boinc" };
    let credit = if classic { "classic" } else { "credit_new" };
    // Daemons stopped for a window or by crash processes (docs/scenario.md,
    // `[[project.NAME.daemon_outage]]`): their work waits, and every invariant holds.
    let outages = match outage {
        0 => "",
        1 => {
            "[[project.main.daemon_outage]]\ndaemon = \"validator\"\nstart = \"1d\"\nend = \"2d\"\n"
        }
        2 => {
            "[[project.main.daemon_outage]]\ndaemon = \"transitioner\"\nmtbf = \"12h\"\nrepair = \"3h\"\n"
        }
        3 => {
            "[[project.main.daemon_outage]]\ndaemon = \"feeder\"\nmtbf = \"8h\"\n\
             repair = { dist = \"lognormal\", mu = 0.0, sigma = 1.0, scale = \"1h\" }\n\n\
             [[project.main.daemon_outage]]\ndaemon = \"file_deleter\"\nstart = \"20h\"\nend = \"3d\"\n"
        }
        _ => {
            "[[project.main.daemon_outage]]\ndaemon = \"database\"\nmtbf = \"1d\"\nrepair = \"2h\"\n"
        }
    };
    format!(
        r#"
[simulation]
name = "prop"
seed = {seed}
duration = "4d"

[project.main.backend]
variant = "{variant}"

[project.main.validator]
credit = "{credit}"

[project.main.workunit]
min_quorum = {q}
target_nresults = {t}
max_error_results = {errors}
max_total_results = {total}
max_success_results = {s}
delay_bound = "12h"
rsc_fpops_est = 1.8e13

[project.main.config]
one_result_per_host_per_wu = true
report_grace_period = {grace}

[project.main.daemons]
db_purge = "1h"

[project.main.work_generator]
mode = "cushion"
cushion = 15
max_workunits = 60

[[host_group]]
count = 25
p_fpops = 1.3e9
error_prob = {err_p}
wrong_result_prob = {wrong_p}
detach_prob = {drop_p}
arrival = {{ dist = "uniform", min = 0, max = "2h" }}
lifetime = {{ dist = "exponential", mean = "10d" }}

{outages}"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_scenarios(
        q in 1i32..=3,
        extra_target in 0i32..=1,
        extra_total in 0i32..=3,
        errors in 1i32..=3,
        err_p in 0.0f64..0.4,
        wrong_p in 0.0f64..0.3,
        drop_p in 0.0f64..0.3,
        grace in prop_oneof![Just(0i64), Just(3600i64)],
        seed_variant in any::<bool>(),
        classic in any::<bool>(),
        seed in 0u64..1000,
        outage in 0u8..5,
    ) {
        let errors = errors.min(q + extra_target + 1 + extra_total);
        let text = scenario(q, extra_target, extra_total, errors, err_p, wrong_p, drop_p, grace, seed_variant, classic, seed, outage);
        let loaded = load_str(&text, "prop.toml", &[], None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
        let finished = world.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let t = &finished.recorder.tallies[0];
        prop_assert!(t.workunits > 0, "no workunit was created");
        prop_assert!(t.results >= t.workunits, "fewer results than workunits");
    }
}

/// With a finite batch, hosts that never drop out and a long enough run, the
/// eventual invariants (spec backend §3 rules 17–21) hold at the end.
#[test]
fn eventual_invariants_hold_at_quiescence() {
    for seed in 0..5u64 {
        let text = scenario(2, 0, 2, 2, 0.1, 0.1, 0.0, 0, false, false, seed, 0)
            .replace("duration = \"4d\"", "duration = \"40d\"")
            .replace("db_purge = \"1h\"", "db_purge = 0");
        let loaded = load_str(&text, "q.toml", &[], None).unwrap();
        let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
        let finished = world.run().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let p = &finished.projects[0];
        assert_eq!(p.db.workunits.len(), 60);
        if let Err(v) = check_quiescent(p, 40 * 86_400) {
            panic!("seed {seed}: {v}");
        }
    }
}

/// A random heterogeneous project: two apps with their own quorum, deadline and
/// size; the first with a plain and an `mt_threads`-thread version, the second with
/// a CPU and (if `cuda`) a CUDA version using `gpu_count` GPUs; homogeneous
/// redundancy and app version and adaptive replication as drawn; CPU-only hosts
/// with `ncpus` CPUs and GPU hosts, on the modern client; db_purge on if `purge`.
#[allow(clippy::too_many_arguments)]
fn apps_scenario(
    q: [i32; 2],
    bound_h: [u32; 2],
    mt_threads: u32,
    cuda: bool,
    gpu_count: f64,
    hr: i32,
    hav: bool,
    adaptive: bool,
    ncpus: u32,
    err_p: f64,
    purge: bool,
    seed: u64,
) -> String {
    let purge = if purge { "\"1h\"" } else { "0" };
    let app = |k: usize, name: &str| {
        let (q, t) = (q[k], q[k]);
        format!(
            r#"
[[project.main.app]]
name = "{name}"
homogeneous_redundancy = {hr}
homogeneous_app_version = {hav}
target_nresults = {adaptive}
[project.main.app.workunit]
min_quorum = {q}
target_nresults = {t}
max_error_results = 3
max_total_results = {total}
max_success_results = {s}
delay_bound = "{b}h"
rsc_fpops_est = {est}
[project.main.app.work_generator]
mode = "cushion"
cushion = 10
max_workunits = 40
"#,
            total = t + 3,
            s = t + 1,
            b = bound_h[k],
            est = if k == 0 { 3.6e13 } else { 7.2e12 },
            adaptive = if adaptive && q == 1 { 2 } else { 0 },
        )
    };
    let cuda_version = if cuda {
        format!(
            "[[project.main.app.version]]\nplan_class = \"cuda\"\navg_ncpus = 0.2\n\
             coproc = {{ type = \"nvidia\", count = {gpu_count} }}\nflops_scale = 0.1\n"
        )
    } else {
        String::new()
    };
    format!(
        r#"
[simulation]
seed = {seed}
duration = "3d"

[client]
policy = "modern_rec"

[project.main.config]
one_result_per_host_per_wu = true

[project.main.daemons]
db_purge = {purge}
{first}
[[project.main.app.version]]
plan_class = ""
[[project.main.app.version]]
plan_class = "mt"
avg_ncpus = {mt_threads}
{second}
[[project.main.app.version]]
plan_class = ""
{cuda_version}
[[host_group]]
name = "cpu"
count = 20
p_ncpus = {ncpus}
p_fpops = {{ dist = "uniform", min = 1e9, max = 3e9 }}
error_prob = {err_p}
os_name = "Linux"

[[host_group]]
name = "gpu"
count = 10
p_ncpus = {ncpus}
os_name = "Microsoft Windows"
coproc = [{{ type = "nvidia", count = 2, peak_flops = 5e11 }}]
error_prob = {err_p}
"#,
        first = app(0, "long"),
        second = app(1, "short"),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Several apps with multi-threaded and GPU versions: the server's invariants
    /// and the client's (no CPU or GPU oversubscribed, GPU jobs only on GPUs, the
    /// buffer within its bounds) hold after every step; every result went with a
    /// version of its own workunit's app, a GPU version only to a host with that
    /// GPU; and the apps' figures add up to the project's.
    #[test]
    fn invariants_hold_on_random_multi_app_projects(
        q0 in 1i32..=2,
        q1 in 1i32..=3,
        b0 in 12u32..=72,
        b1 in 6u32..=48,
        mt_threads in 2u32..=8,
        cuda in any::<bool>(),
        gpu_count in prop_oneof![Just(0.5f64), Just(1.0f64), Just(2.0f64)],
        hr in 0i32..=2,
        hav in any::<bool>(),
        adaptive in any::<bool>(),
        ncpus in 1u32..=8,
        err_p in 0.0f64..0.2,
        purge in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let text = apps_scenario([q0, q1], [b0, b1], mt_threads, cuda, gpu_count, hr, hav, adaptive, ncpus, err_p, purge, seed);
        let loaded = load_str(&text, "apps.toml", &[], None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
        let finished = world.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let p = &finished.projects[0];
        for (_, r) in p.db.results.iter() {
            if r.app_version_id == 0 {
                continue;
            }
            let av = p.app_version(r.app_version_id);
            prop_assert_eq!(av.appid, p.db.wu(r.workunitid).appid);
            if av.proc_type != boinc_sim::server::resource::ProcType::Cpu {
                prop_assert!(!p.db.host(r.hostid).coprocs.is_empty(), "GPU job on a CPU-only host");
            }
        }
        // Hosts of 2 CPUs and more run the multi-threaded version, the fastest on
        // them (seen when db_purge kept every row). The CUDA version may go unused:
        // CPU hosts can take every new job of `short` first, and with a homogeneous
        // app version its other results then need the CPU version too, as in BOINC.
        let used = |pred: &dyn Fn(&boinc_sim::server::app_version::AppVersion) -> bool| {
            p.db.results
                .iter()
                .any(|(_, r)| r.app_version_id != 0 && pred(p.app_version(r.app_version_id)))
        };
        if ncpus >= 2 && !purge {
            prop_assert!(used(&|v| v.avg_ncpus > 1.0), "no multi-threaded job");
        }
        let t = &finished.recorder.tallies[0];
        let apps = [1, 2].map(|a| finished.recorder.app_tally(0, a));
        prop_assert!(apps.iter().all(|a| a.workunits > 0), "an app made no work");
        prop_assert_eq!(apps.iter().map(|a| a.workunits).sum::<u64>(), t.workunits);
        prop_assert_eq!(apps.iter().map(|a| a.results).sum::<u64>(), t.results);
    }
}

/// A random batch project: `batches` mode with random batch sizes, job sizes,
/// quorum, error and dropout rates; db_purge off so that every workunit is still
/// in the database at the end.
fn batch_scenario(q: i32, count: u32, err_p: f64, drop_p: f64, sigma: f64, seed: u64) -> String {
    format!(
        r#"
[simulation]
name = "prop-batches"
seed = {seed}
duration = "5d"

[project.main.workunit]
min_quorum = {q}
target_nresults = {q}
max_error_results = 2
max_total_results = {total}
max_success_results = {s}
delay_bound = "1d"
rsc_fpops_est = 1.8e13

[project.main.daemons]
db_purge = 0

[project.main.work_generator]
mode = "batches"
interval = "1d"
count = {count}
max_workunits = 100
size = {{ dist = "lognormal", mu = 0.0, sigma = {sigma} }}

[[host_group]]
count = 25
p_fpops = 1.3e9
error_prob = {err_p}
detach_prob = {drop_p}
arrival = {{ dist = "uniform", min = 0, max = "2h" }}
lifetime = {{ dist = "exponential", mean = "10d" }}
"#,
        total = q + 3,
        s = q + 1,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// The BATCH rows agree with their workunits at the end (spec backend §1.5):
    /// each batch's success and error counts are its workunits with a canonical
    /// result or an error bit that left assimilate_state INIT, its fraction done
    /// and state follow, and the batch figures are ordered (more of a batch never
    /// takes less time).
    #[test]
    fn batch_rows_agree_with_their_workunits(
        q in 1i32..=2,
        count in 1u32..=40,
        err_p in 0.0f64..0.3,
        drop_p in 0.0f64..0.2,
        sigma in 0.0f64..1.0,
        seed in 0u64..1000,
    ) {
        use boinc_sim::server::types::{AssimilateState, BatchState, ResultId};
        let text = batch_scenario(q, count, err_p, drop_p, sigma, seed);
        let loaded = load_str(&text, "prop.toml", &[], None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
        let f = world.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let p = &f.projects[0];
        let rows = &p.db.batches.rows;
        prop_assert!(!rows.is_empty());
        let jobs: u64 = rows.iter().map(|b| u64::from(b.njobs)).sum();
        prop_assert_eq!(jobs, p.db.workunits.len() as u64);
        for b in rows {
            let (mut ok, mut bad) = (0u32, 0u32);
            for (_, wu) in p.db.workunits.iter().filter(|(_, w)| w.batch == b.id) {
                prop_assert!(b.holds(wu.id));
                if wu.assimilate_state != AssimilateState::Init {
                    if wu.canonical_resultid != ResultId(0) { ok += 1 } else { bad += 1 }
                }
            }
            prop_assert_eq!((b.njobs_success, b.nerror_jobs), (ok, bad), "batch {}", b.id);
            prop_assert_eq!(b.fraction_done, f64::from(ok + bad) / f64::from(b.njobs));
            let complete = ok + bad == b.njobs;
            prop_assert_eq!(b.state == BatchState::Complete, complete);
            prop_assert_eq!(b.completion_time != 0, complete);
        }
        let figs = boinc_sim::stats::batches::project_figures(&f.projects[0], &f.recorder.batches[0]);
        for fig in &figs {
            let known: Vec<i64> = fig.time_to.iter().flatten().copied().collect();
            prop_assert!(known.windows(2).all(|w| w[0] <= w[1]), "{:?}", fig.time_to);
            // A share reached implies every smaller share was.
            let reached: Vec<bool> = fig.time_to.iter().map(Option::is_some).collect();
            prop_assert!(reached.windows(2).all(|w| w[0] || !w[1]), "{:?}", fig.time_to);
            prop_assert!(fig.jobs_valid <= fig.batch.njobs_success);
            prop_assert!(fig.cpu_wasted <= fig.cpu_time + 1e-6);
        }
    }
}
