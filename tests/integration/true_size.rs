//! True job sizes that differ from `rsc_fpops_est` (docs/estimates.md):
//!
//! * a job whose true size passes its time limit `rsc_fpops_bound / flops` is
//!   aborted there and reported as a client error with `EXIT_TIME_LIMIT_EXCEEDED`;
//! * with every job twice its estimate, the seed client's DCF becomes exactly 2 and
//!   the modern client's app version speed (projected by the server) half the host's,
//!   so both clients' estimates become the truth (spec client §3.6);
//! * on random scenarios, no job ever computes past its time limit (checked after
//!   every host event by `--check-invariants`), the buffer invariant holds with
//!   misestimated jobs, and under the seed policy a result ends with exit status
//!   197 exactly when its workunit's true size exceeds the bound.

use boinc_sim::client::config::Policy;
use boinc_sim::scenario::load::load_str;
use boinc_sim::server::db::ResultRow;
use boinc_sim::server::types::{Outcome, client_state, exit_status};
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::{Finished, RunOptions};
use proptest::prelude::*;

/// One project of jobs estimated at 3.6e12 FLOPs (bound `bound` × the estimate,
/// true size `size`), `hosts` always-on 1-CPU hosts of `p_fpops` FLOPS.
fn scenario(policy: &str, size: &str, bound: f64, hosts: u32, days: u32, p_fpops: f64) -> String {
    format!(
        r#"[simulation]
seed = 3
duration = "{days}d"

[client]
policy = "{policy}"

[project.main.workunit]
delay_bound = "10d"
rsc_fpops_est = 3.6e12
rsc_fpops_bound = {b:e}
true_size = {size}

[project.main.daemons]
db_purge = 0

[project.main.work_generator]
mode = "cushion"
cushion = 100

[[host_group]]
count = {hosts}
p_ncpus = 1
p_fpops = {p_fpops:e}
"#,
        b = 3.6e12 * bound
    )
}

fn run(text: &str, options: &RunOptions) -> Finished<StatsRecorder> {
    let loaded = load_str(text, "true_size.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    let world = StatsRecorder::world(&loaded, options, None);
    world
        .run()
        .unwrap_or_else(|e| panic!("{e}\n--- scenario ---\n{text}"))
}

/// Every reported result (the scenarios switch db_purge off, so all rows stay).
fn reported(f: &Finished<StatsRecorder>) -> Vec<ResultRow> {
    let mut out = Vec::new();
    for p in &f.projects {
        out.extend(p.db.results.iter().map(|(_, r)| r.clone()));
    }
    out.retain(|r| r.received_time > 0);
    out
}

#[test]
fn jobs_past_their_bound_end_as_time_limit_errors() {
    for policy in ["seed_debt", "modern_rec"] {
        // True size 3 h, bound 2 h: every job is aborted after 7200 s.
        let f = run(
            &scenario(policy, "3.0", 2.0, 2, 2, 1e9),
            &RunOptions::CHECKED,
        );
        let rs = reported(&f);
        assert!(rs.len() > 5, "{policy}: only {} results reported", rs.len());
        for r in &rs {
            assert_eq!(r.outcome, Outcome::ClientError, "{policy}: {r:?}");
            assert_eq!(r.client_state, client_state::COMPUTE_ERROR, "{policy}");
            assert_eq!(
                r.exit_status,
                exit_status::EXIT_TIME_LIMIT_EXCEEDED,
                "{policy}"
            );
            assert!((r.cpu_time - 7200.0).abs() < 1e-6, "{policy}: {r:?}");
            assert!((r.elapsed_time - 7200.0).abs() < 1e-6, "{policy}: {r:?}");
        }
    }
}

#[test]
fn jobs_within_their_bound_succeed_and_report_their_true_time() {
    for policy in ["seed_debt", "modern_rec"] {
        // True size 1.5 h, bound 2 h.
        let f = run(
            &scenario(policy, "1.5", 2.0, 2, 2, 1e9),
            &RunOptions::CHECKED,
        );
        let rs = reported(&f);
        assert!(rs.len() > 5, "{policy}");
        for r in &rs {
            assert_eq!(r.outcome, Outcome::Success, "{policy}: {r:?}");
            assert!((r.cpu_time - 5400.0).abs() < 1e-6, "{policy}: {r:?}");
        }
    }
}

/// Every job takes twice its estimate. The seed client's DCF is exactly 2 after
/// its first job and stays there, so its estimate of each job it holds is the
/// truth; the modern client (no DCF) gets the app version's `flops` from the server,
/// which after 10 validated results per host projects half the peak speed. (The
/// hosts run at 2 GFLOPS: the validator treats exactly 1e9, BOINC's default
/// benchmark, as unmeasured and keeps no statistics, spec backend §6.2.)
#[test]
fn clients_learn_a_2x_underestimate() {
    let f = run(
        &scenario("seed_debt", "2.0", 10.0, 3, 6, 2e9),
        &RunOptions::CHECKED,
    );
    for h in &f.hosts {
        assert_eq!(h.projects[0].dcf.0, 2.0, "host {}", h.index);
        assert!(!h.jobs.is_empty());
        for j in &h.jobs {
            let est = h.est_flops_left(j, Policy::SeedDebt);
            assert_eq!(est, j.flops_left, "host {} job {}", h.index, j.result_id);
        }
    }
    let f = run(
        &scenario("modern_rec", "2.0", 10.0, 3, 6, 2e9),
        &RunOptions::CHECKED,
    );
    let mut learnt = 0;
    for h in &f.hosts {
        assert_eq!(h.projects[0].dcf.0, 2.0, "the DCF is kept, just not used");
        for j in h
            .jobs
            .iter()
            .filter(|j| j.unfinished() && j.app_flops != 2e9)
        {
            assert!((j.app_flops / 1e9 - 1.0).abs() < 1e-9, "{}", j.app_flops);
            let est = h.est_flops_left(j, Policy::ModernRec);
            assert!((est / j.flops_left - 1.0).abs() < 1e-9);
            learnt += 1;
        }
    }
    assert!(learnt > 0, "no job was sent with a projected speed");
}

/// Random 1-to-4-CPU hosts with availability and checkpoints, true sizes from a
/// lognormal around `size`, bounds of 1.2 to 4 times the estimate.
fn random_scenario(
    seed: u64,
    policy: &str,
    ncpus: u32,
    size: f64,
    sigma: f64,
    bound: f64,
) -> String {
    format!(
        r#"[simulation]
seed = {seed}
duration = "6d"

[client]
policy = "{policy}"
checkpoint_period = 600

[project.main.workunit]
delay_bound = "3d"
rsc_fpops_est = 7.2e12
rsc_fpops_bound = {b:e}
true_size = {{ dist = "lognormal", mu = {mu}, sigma = {sigma} }}

[project.main.config]
max_wus_to_send = 0
daily_result_quota = 100000

[project.main.daemons]
transitioner = 60
validator = 60
assimilator = 60
file_deleter = 60
work_generator = 60
db_purge = 0

[project.main.work_generator]
mode = "cushion"
cushion = 60

[[host_group]]
count = 6
p_ncpus = {ncpus}
p_fpops = {{ dist = "uniform", min = 5e8, max = 2e9 }}
on_frac = 0.7
on_lambda = "6h"
arrival = {{ dist = "uniform", min = 0, max = "1d" }}
"#,
        b = 7.2e12 * bound,
        mu = size.ln(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn no_job_computes_past_its_time_limit(
        seed in 1u64..1_000_000,
        modern in any::<bool>(),
        ncpus in 1u32..=4,
        size in 0.3f64..3.0,
        sigma in 0.0f64..1.0,
        bound in 1.2f64..4.0,
    ) {
        let policy = if modern { "modern_rec" } else { "seed_debt" };
        let text = random_scenario(seed, policy, ncpus, size, sigma, bound);
        // CHECKED: the time-limit and buffer invariants after every host event.
        let f = run(&text, &RunOptions::CHECKED);
        let p = &f.projects[0];
        let rs = reported(&f);
        prop_assert!(!rs.is_empty());
        for r in &rs {
            let true_fpops = p.db.wu(r.workunitid).true_fpops;
            let bound_fpops = 7.2e12 * bound;
            if !modern {
                // The seed client's limit is the bound at its benchmark speed, which
                // is the result's `flops_estimate`.
                let computed = r.cpu_time * r.flops_estimate;
                prop_assert!(computed <= bound_fpops * (1.0 + 1e-9), "{r:?}");
                let over = true_fpops > bound_fpops;
                prop_assert_eq!(
                    r.exit_status == exit_status::EXIT_TIME_LIMIT_EXCEEDED,
                    over,
                    "{:?} true {} bound {}", r, true_fpops, bound_fpops
                );
            } else if r.exit_status == 0 {
                // A success computed its whole true size.
                prop_assert!((r.cpu_time * r.flops_estimate / true_fpops - 1.0).abs() < 1e-9);
            }
        }
    }
}
