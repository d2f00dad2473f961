//! Property tests: on many random scenarios (random quorum and limits, error,
//! wrong-result and dropout rates, grace period, variant), the invariants of spec
//! backend §3 hold after every daemon step, and a run is a pure function of its seed.

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
) -> String {
    let t = q + extra_target;
    let s = t + 1;
    let total = s + extra_total;
    let variant = if seed_variant { "seed" } else { "boinc" };
    let credit = if classic { "classic" } else { "credit_new" };
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
"#
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
    ) {
        let errors = errors.min(q + extra_target + 1 + extra_total);
        let text = scenario(q, extra_target, extra_total, errors, err_p, wrong_p, drop_p, grace, seed_variant, classic, seed);
        let loaded = load_str(&text, "prop.toml", &[], None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let world = StatsRecorder::world(loaded.file, &RunOptions::CHECKED, None);
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
        let text = scenario(2, 0, 2, 2, 0.1, 0.1, 0.0, 0, false, false, seed)
            .replace("duration = \"4d\"", "duration = \"40d\"")
            .replace("db_purge = \"1h\"", "db_purge = 0");
        let loaded = load_str(&text, "q.toml", &[], None).unwrap();
        let world = StatsRecorder::world(loaded.file, &RunOptions::CHECKED, None);
        let finished = world.run().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let p = &finished.projects[0];
        assert_eq!(p.db.workunits.len(), 60);
        if let Err(v) = check_quiescent(p) {
            panic!("seed {seed}: {v}");
        }
    }
}
