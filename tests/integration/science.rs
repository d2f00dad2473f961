//! What quorum buys: the truth of each output (`client::truth`) and the science
//! error figures (`stats::science`). Wrong outputs that collide can agree and form a
//! wrong canonical result (spec backend §2.5: `⌊min_quorum/2⌋ + 1` matching
//! outputs); wrong outputs that do not collide never agree.

use boinc_sim::scenario::load::load_str;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::stats::science::Counts;
use boinc_sim::world::{Finished, RunOptions};

fn run(name: &str, text: &str) -> Finished<StatsRecorder> {
    let loaded = load_str(text, name, &[], None).unwrap_or_else(|e| panic!("{name}: {e}"));
    StatsRecorder::world(&loaded, &RunOptions::CHECKED, None)
        .run()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn science(f: &Finished<StatsRecorder>) -> Counts {
    f.recorder.tallies[0].metrics.science.total()
}

/// Two named hosts with quorum 2; every daemon is scripted.
fn scripted(reports: &str) -> String {
    format!(
        r#"
[simulation]
duration = 30000

[project.main.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 2
max_total_results = 4
max_success_results = 3
delay_bound = 1000

[project.main.config]
one_result_per_host_per_wu = true

[project.main.daemons]
transitioner = 0
validator = 0
assimilator = 0
file_deleter = 0
db_purge = 0
feeder = 0
work_generator = 0

[[host]]
name = "H1"

[[host]]
name = "H2"

[[event]]
at = 0
create_workunits = 1

[[event]]
at = 1
daemon = "transitioner"

[[event]]
at = 5
daemon = "feeder"

[[event]]
at = 10
host = "H1"
request = 1

[[event]]
at = 11
host = "H2"
request = 1

{reports}

[[event]]
at = 300
daemon = "transitioner"

[[event]]
at = 301
daemon = "validator"
"#
    )
}

#[test]
fn two_colliding_wrong_results_become_a_wrong_canonical_result() {
    let text = scripted(
        r#"
[[event]]
at = 100
host = "H1"
report = [{ result = "wu1_0", value = 7.0, correct = false }]

[[event]]
at = 101
host = "H2"
report = [{ result = "wu1_1", value = 7.0, correct = false }]

[[expect]]
at = 301
workunit = "wu1"
canonical = "wu1_0"
"#,
    );
    let f = run("collide.toml", &text);
    let db = &f.projects[0].db;
    let (_, wu) = db.workunits.iter().next().expect("wu1 is live");
    assert_eq!(wu.canonical_correct, Some(false));
    let c = science(&f);
    assert_eq!(
        (
            c.canonical_known,
            c.wrong_canonical,
            c.wrong_valid,
            c.correct_invalid
        ),
        (1, 1, 2, 0)
    );
    assert_eq!(c.wrong_canonical_frac(), Some(1.0));
}

#[test]
fn a_wrong_and_a_correct_result_do_not_agree_and_unknown_truth_counts_nowhere() {
    let text = scripted(
        r#"
[[event]]
at = 100
host = "H1"
report = [{ result = "wu1_0", value = 7.0, correct = false }]

[[event]]
at = 101
host = "H2"
report = [{ result = "wu1_1", value = 1.0, correct = true }]

[[expect]]
at = 301
workunit = "wu1"
canonical = "none"
"#,
    );
    let f = run("disagree.toml", &text);
    assert_eq!(science(&f), Counts::default());
    // Without `correct`, agreeing outputs make a canonical result of unknown truth.
    let text = scripted(
        r#"
[[event]]
at = 100
host = "H1"
report = [{ result = "wu1_0", value = 7.0 }]

[[event]]
at = 101
host = "H2"
report = [{ result = "wu1_1", value = 7.0 }]

[[expect]]
at = 301
workunit = "wu1"
canonical = "wu1_0"
"#,
    );
    let f = run("unknown.toml", &text);
    let (_, wu) = f.projects[0].db.workunits.iter().next().unwrap();
    assert_eq!(wu.canonical_correct, None);
    assert_eq!(science(&f), Counts::default());
    assert_eq!(science(&f).wrong_canonical_frac(), None);
}

/// Hosts that always return a wrong output, under quorum 2.
fn always_wrong(app: &str, groups: &str) -> String {
    format!(
        r#"
[simulation]
seed = 5
duration = "2d"

[project.main.app]
{app}

[project.main.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 3
max_total_results = 4
max_success_results = 4
delay_bound = "1d"
rsc_fpops_est = 3.6e12

[project.main.config]
one_result_per_host_per_wu = true

[project.main.work_generator]
mode = "cushion"
cushion = 20

{groups}
"#
    )
}

const ONE_GROUP: &str = r#"
[[host_group]]
count = 20
p_fpops = 2e9
wrong_result_prob = 1.0
"#;

#[test]
fn wrong_outputs_that_never_collide_never_make_a_canonical_result() {
    let f = run(
        "never.toml",
        &always_wrong("wrong_output_collision_frac = 0.0", ONE_GROUP),
    );
    let t = &f.recorder.tallies[0];
    // Every pair of outputs disagrees: inconclusive, never a canonical result.
    assert!(t.validate_count("inconclusive") > 100);
    assert_eq!(t.validate_count("valid"), 0);
    assert_eq!(t.workunits_with_canonical, 0);
    assert_eq!(science(&f), Counts::default());
}

#[test]
fn wrong_outputs_of_one_class_that_always_collide_make_every_canonical_result_wrong() {
    let f = run(
        "always.toml",
        &always_wrong("wrong_output_collision_frac = 1.0", ONE_GROUP),
    );
    let c = science(&f);
    assert!(c.canonical_known > 50, "{c:?}");
    assert_eq!(
        c.canonical_known,
        f.recorder.tallies[0].workunits_with_canonical
    );
    assert_eq!(c.wrong_canonical, c.canonical_known);
    assert_eq!(c.wrong_canonical_frac(), Some(1.0));
    assert_eq!(c.correct_invalid, 0);
}

#[test]
fn different_error_classes_never_agree_and_a_shared_class_does() {
    let two = |class_b: &str| {
        format!(
            r#"
[[host_group]]
name = "a"
count = 10
p_fpops = 2e9
wrong_result_prob = 1.0

[[host_group]]
name = "b"
count = 10
p_fpops = 2e9
wrong_result_prob = 1.0
{class_b}
"#
        )
    };
    let app = "wrong_output_collision_frac = 1.0";
    let own = run("own.toml", &always_wrong(app, &two("")));
    let shared = run(
        "shared.toml",
        &always_wrong(app, &two("error_class = \"a\"")),
    );
    let (o, s) = (science(&own), science(&shared));
    // Own classes: only pairs from one group agree; a shared class: every pair does.
    assert!(o.canonical_known > 0 && s.canonical_known > 0);
    assert!(o.canonical_known < s.canonical_known, "{o:?} vs {s:?}");
    assert!(own.recorder.tallies[0].workunits_with_error > 0);
    assert_eq!(s.wrong_canonical, s.canonical_known);
    assert_eq!(o.wrong_canonical, o.canonical_known);
}

/// Hosts whose own probabilities are drawn from distributions.
fn drawn(wrong: &str) -> String {
    format!(
        r#"
[simulation]
seed = 11
duration = "2d"

[project.main.app]
wrong_output_collision_frac = 0.5

[project.main.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 3
max_total_results = 6
max_success_results = 4
delay_bound = "1d"
rsc_fpops_est = 3.6e12

[project.main.config]
one_result_per_host_per_wu = true

[project.main.work_generator]
mode = "cushion"
cushion = 20

[[host_group]]
count = 40
p_fpops = {{ dist = "lognormal", mu = 21.6, sigma = 0.4 }}
arrival = {{ dist = "uniform", min = 0, max = "6h" }}
error_prob = {{ dist = "uniform", min = 0.0, max = 0.2 }}
wrong_result_prob = {wrong}
"#
    )
}

#[test]
fn no_wrong_results_means_no_science_error() {
    let f = run("zero.toml", &drawn("0.0"));
    let c = science(&f);
    assert!(c.canonical_known > 50);
    assert_eq!(
        c.canonical_known,
        f.recorder.tallies[0].workunits_with_canonical
    );
    assert_eq!(
        (c.wrong_canonical, c.wrong_valid, c.correct_invalid),
        (0, 0, 0)
    );
    assert_eq!(c.wrong_canonical_frac(), Some(0.0));
    // Every host drew its own error probability.
    let p: Vec<f64> = f.hosts.iter().map(|h| h.truth.error_prob).collect();
    assert!(p.iter().all(|x| (0.0..=0.2).contains(x)));
    assert!(p.iter().any(|x| *x != p[0]));
}

#[test]
fn per_host_draws_leave_every_other_draw_alone_and_are_deterministic() {
    let dist = "{ dist = \"exponential\", mean = 0.3, upper = 1.0 }";
    let a = run("a.toml", &drawn("0.0"));
    let b = run("b.toml", &drawn(dist));
    let c = run("c.toml", &drawn(dist));
    // The hosts' speeds and arrivals come from their main stream, untouched.
    for (x, y) in a.hosts.iter().zip(&b.hosts) {
        assert_eq!(x.p_fpops.to_bits(), y.p_fpops.to_bits());
        assert_eq!(x.joined, y.joined);
        assert_eq!(x.truth.error_prob.to_bits(), y.truth.error_prob.to_bits());
    }
    let w: Vec<f64> = b.hosts.iter().map(|h| h.truth.wrong_result_prob).collect();
    assert!(w.iter().all(|x| (0.0..=1.0).contains(x)));
    assert!(w.iter().any(|x| *x != w[0]));
    // The same scenario and seed give the same truth and the same figures.
    assert_eq!(science(&b), science(&c));
    assert!(science(&b).wrong_canonical > 0, "{:?}", science(&b));
    let rows = |f: &Finished<StatsRecorder>| -> Vec<(u32, Option<bool>, u64)> {
        f.projects[0]
            .db
            .results
            .iter()
            .map(|(_, r)| (r.id.0, r.output_correct, r.output.to_bits()))
            .collect()
    };
    assert_eq!(rows(&b), rows(&c));
}
