//! Scripted scenarios for the scheduler and validator features the worked examples
//! of spec backend §4 do not cover: detach (§2.4.2), lost-result resend (§2.4.5),
//! cancellation (§2.1), unreadable outputs (§2.5), adaptive replication (§2.4.4
//! step 5), and the seed variant. Each expected value is derived from the spec by
//! hand and stated in the scenario's `[[expect]]` entries.

use boinc_sim::scenario::load::load_str;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::RunOptions;

/// Common setup of spec §4 with P(1,1,1,2,1) and two named hosts.
fn base(extra: &str, script: &str) -> String {
    format!(
        r#"
[simulation]
duration = 30000

[project.main.workunit]
min_quorum = 1
target_nresults = 1
max_error_results = 1
max_total_results = 2
max_success_results = 1
delay_bound = 1000
{extra}

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
{script}
"#
    )
}

fn run_ok(name: &str, text: &str) {
    let loaded = load_str(text, name, &[], None).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!loaded.file.expect.is_empty());
    let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
    if let Err(e) = world.run() {
        panic!("{name}: {e}");
    }
}

#[test]
fn detach_marks_jobs_client_detached_and_they_are_replaced() {
    let script = r#"
[[event]]
at = 100
host = "H1"
detach = true

[[event]]
at = 101
daemon = "transitioner"

[[expect]]
at = 100
result = "wu1_0"
state = "5/7/0/0"
received_time = 100

[[expect]]
at = 100
workunit = "wu1"
transition_time = 100

[[expect]]
at = 101
workunit = "wu1"
nresults = 2
error_mask = 0

[[expect]]
at = 101
result = "wu1_1"
state = "2/0/0/0"

# A later report of the detached job is rejected (quirk Q3).
[[event]]
at = 200
host = "H1"
report = [{ result = "wu1_0", value = 1.0 }]

[[expect]]
at = 200
result = "wu1_0"
state = "5/7/0/0"
"#;
    run_ok("detach.toml", &base("", script));
    // Seed variant (§5 row 18): a detached host's job becomes NO_REPLY.
    let seed = base("", script)
        .replace("state = \"5/7/0/0\"", "state = \"5/4/0/0\"")
        .replace(
            "[project.main.config]",
            "[project.main.backend]\nvariant = \"seed\"\n\n[project.main.config]",
        );
    run_ok("detach-seed.toml", &seed);
}

/// A resent job is sent as a first send (spec backend §2.4.5, corrected 2026-11-23):
/// told 100 + 1000 = 1100 (grace 0), while `tt` keeps the earlier 1010.
#[test]
fn lost_job_is_resent_as_a_first_send() {
    let script = r#"
[[event]]
at = 100
host = "H1"
request = 1
lost = ["wu1_0"]

[[expect]]
at = 100
result = "wu1_0"
state = "4/0/0/0"
sent_time = 100
report_deadline = 1100
hostid = "H1"

[[expect]]
at = 100
workunit = "wu1"
transition_time = 1010

[[expect]]
at = 100
host = "H1"
reply = { jobs = ["wu1_0"], deadlines = [1100], messages = ["Resent lost task wu1_0"] }

[[expect]]
at = 100
host = "H1"
n_jobs_today = 1
"#;
    let text = base("rsc_fpops_est = 1e11", script).replace(
        "one_result_per_host_per_wu = true",
        "one_result_per_host_per_wu = true\nresend_lost_results = true",
    );
    run_ok("resend.toml", &text);
}

#[test]
fn lost_job_that_cannot_finish_in_time_is_expired_and_replaced() {
    // est_dur = 3600 s > d - now = 910 s: not resendable (§2.4.5).
    let script = r#"
[[event]]
at = 100
host = "H1"
request = 1
lost = ["wu1_0"]

[[event]]
at = 101
daemon = "transitioner"

[[expect]]
at = 100
result = "wu1_0"
state = "4/0/0/0"
report_deadline = 99

[[expect]]
at = 100
workunit = "wu1"
transition_time = 99

[[expect]]
at = 100
host = "H1"
reply = { jobs = [], messages = ["Didn't resend lost task wu1_0 (expired)"] }

[[expect]]
at = 101
result = "wu1_0"
state = "5/4/0/0"

[[expect]]
at = 101
workunit = "wu1"
nresults = 2
"#;
    let text = base("", script).replace(
        "one_result_per_host_per_wu = true",
        "one_result_per_host_per_wu = true\nresend_lost_results = true",
    );
    run_ok("expire.toml", &text);
}

#[test]
fn cancelled_workunit_is_assimilated_with_error_16() {
    let script = r#"
[[event]]
at = 20
cancel = ["wu1"]

[[event]]
at = 21
daemon = "transitioner"

[[event]]
at = 22
daemon = "assimilator"

[[expect]]
at = 20
result = "wu1_0"
state = "4/0/0/0"

[[expect]]
at = 20
workunit = "wu1"
error_mask = 16
transition_time = 20

[[expect]]
at = 21
workunit = "wu1"
assimilate_state = 1
nresults = 1

[[expect]]
at = 22
workunit = "wu1"
assimilate_state = 2
"#;
    run_ok("cancel.toml", &base("", script));
}

#[test]
fn unreadable_output_is_a_validate_error_and_gets_a_retry() {
    let script = r#"
[[event]]
at = 500
host = "H1"
report = [{ result = "wu1_0", value = 1.0, output = "unreadable" }]

[[event]]
at = 501
daemon = "transitioner"

[[event]]
at = 502
daemon = "validator"

[[event]]
at = 503
daemon = "transitioner"

[[expect]]
at = 502
result = "wu1_0"
state = "5/6/2/0"

[[expect]]
at = 502
workunit = "wu1"
transition_time = 502
canonical = "none"

[[expect]]
at = 503
workunit = "wu1"
nresults = 2
error_mask = 0
"#;
    run_ok("unreadable.toml", &base("", script));
}

#[test]
fn transient_read_error_leaves_result_inconclusive_and_adds_an_instance() {
    let script = r#"
[[event]]
at = 500
host = "H1"
report = [{ result = "wu1_0", value = 1.0, output = "transient", transient_until = 30000 }]

[[event]]
at = 501
daemon = "transitioner"

[[event]]
at = 502
daemon = "validator"

[[event]]
at = 22103
daemon = "transitioner"

[[expect]]
at = 502
result = "wu1_0"
state = "5/1/4/0"

# The retry set DELAYED, but the undecided result still counts as viable: with
# n_viable = 1 >= target 1 the no-consensus rule (§2.5 B step 7) raises the target
# to 2 and makes the action IMMEDIATE.
[[expect]]
at = 502
workunit = "wu1"
transition_time = 502
target_nresults = 2
need_validate = 0

# An INCONCLUSIVE result does not re-trigger validation; the transitioner creates
# the extra instance instead.
[[expect]]
at = 22103
workunit = "wu1"
need_validate = 0
nresults = 2
"#;
    run_ok("transient.toml", &base("", script));
}

#[test]
fn adaptive_replication_replicates_for_untrusted_hosts_only() {
    let untrusted = r#"
[[expect]]
at = 10
workunit = "wu1"
target_nresults = 2
min_quorum = 2
transition_time = 10
"#;
    let ar = "[project.main.app]\ntarget_nresults = 2\n\n[project.main.config]";
    run_ok(
        "ar.toml",
        &base("", untrusted).replace("[project.main.config]", ar),
    );
    // A host with 20 consecutive valid results and a pinned trust draw of 0.99
    // (> 1/20) is trusted: the workunit stays unreplicated.
    let trusted = r#"
[[expect]]
at = 10
workunit = "wu1"
target_nresults = 1
min_quorum = 1
transition_time = 1010
"#;
    let text = base("", trusted)
        .replace(
            "[project.main.config]",
            &format!("[project.main.pin]\ntrust = 0.99\n\n{ar}"),
        )
        .replace(
            "name = \"H1\"\n",
            "name = \"H1\"\nhav = { consecutive_valid = 20 }\n",
        );
    run_ok("ar-trusted.toml", &text);
}

/// The unscripted handler answers (spec backend §2.6), drawn with probability 1 so
/// that the outcome is exact: a handler error ends the pass at the first READY
/// workunit (it stays READY, counted once; the second is not offered); a deferral
/// puts every workunit back to INIT, and the transitioner offers it again.
#[test]
fn assimilator_probabilities_give_errors_and_deferrals() {
    let script = r#"
[[event]]
at = 11
host = "H2"
request = 1

[[event]]
at = 100
host = "H1"
report = [{ result = "wu1_0", outcome = "success", value = 1.0 }]

[[event]]
at = 100
host = "H2"
report = [{ result = "wu2_0", outcome = "success", value = 1.0 }]

[[event]]
at = 101
daemon = "transitioner"

[[event]]
at = 102
daemon = "validator"

[[event]]
at = 103
daemon = "assimilator"

[[event]]
at = 104
daemon = "transitioner"

[[expect]]
at = 103
workunit = "wu1"
assimilate_state = 1
assimilate_count = 1

[[expect]]
at = 103
workunit = "wu2"
assimilate_state = 1
assimilate_count = 0
"#;
    let two_wus = |s: String| s.replace("create_workunits = 1", "create_workunits = 2");
    let text = two_wus(base("rsc_fpops_est = 1e11", script))
        + "\n[project.main.pin]\nslot_offset = 0\n\n[project.main.assimilator]\nerror_prob = 1.0\n";
    run_ok("assimilator-error.toml", &text);

    let deferred = script
        .replace(
            "assimilate_state = 1\nassimilate_count = 1",
            "assimilate_state = 0\nassimilate_count = 1\ntransition_time = 103",
        )
        .replace(
            "assimilate_state = 1\nassimilate_count = 0",
            "assimilate_state = 0\nassimilate_count = 1\ntransition_time = 103",
        )
        + r#"
[[expect]]
at = 104
workunit = "wu1"
assimilate_state = 1
"#;
    let text = two_wus(base("rsc_fpops_est = 1e11", &deferred))
        + "\n[project.main.pin]\nslot_offset = 0\n\n[project.main.assimilator]\ndefer_prob = 1.0\n";
    run_ok("assimilator-defer.toml", &text);
}

/// A failed expectation names its entry's file, line and column.
#[test]
fn failed_expectation_names_its_place() {
    let script = r#"
[[expect]]
at = 10
host = "H1"
reply = { jobs = ["wu1_1"] }
"#;
    let text = base("", script);
    let line = text
        .lines()
        .position(|l| l.starts_with("reply ="))
        .expect("the reply line")
        - 2; // the `[[expect]]` header, 1-based
    let loaded = load_str(&text, "place.toml", &[], None).unwrap();
    let err = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None)
        .run()
        .err()
        .expect("the expectation must fail")
        .to_string();
    assert!(
        err.contains(&format!("place.toml:{line}:1: expect[0] at t=10: host H1: reply.jobs = [\"wu1_0\"], expected [\"wu1_1\"]")),
        "{err}"
    );
    assert!(
        err.contains("1 of 1 expectation(s) checked failed"),
        "{err}"
    );
}
