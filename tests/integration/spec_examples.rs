//! The worked examples of spec backend §4, each a scenario under `scenarios/spec/`
//! whose `[[expect]]` entries state every intermediate and final state the spec
//! gives. A run fails if any expectation or invariant fails, so each test below can
//! fail on any deviation from BOINC's state sequence.

use boinc_sim::scenario::load::load;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::RunOptions;
use std::path::Path;

fn run_spec(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/spec")
        .join(name);
    let loaded = load(&path, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !loaded.file.expect.is_empty(),
        "{name} states no expectations"
    );
    let world = StatsRecorder::world(&loaded, &RunOptions::CHECKED, None);
    if let Err(e) = world.run() {
        panic!("{name}: {e}");
    }
}

#[test]
fn s1_single_instance_success() {
    run_spec("s1-single-success.toml");
}

#[test]
fn s2_single_instance_client_error() {
    run_spec("s2-client-error.toml");
}

#[test]
fn s3_error_then_retry_succeeds() {
    run_spec("s3-error-then-retry.toml");
}

#[test]
fn s3_retry_gets_priority_boost() {
    run_spec("s3b-retry-priority-boost.toml");
}

#[test]
fn s4_timeout_and_reissue() {
    run_spec("s4-timeout-reissue.toml");
}

#[test]
fn s6_quorum_two_agreement() {
    run_spec("s6-quorum2-agree.toml");
}

#[test]
fn s7_quorum_two_tie_broken_by_third_instance() {
    run_spec("s7-quorum2-tiebreak.toml");
}

#[test]
fn server_deleted_canonical_output_is_a_validate_error() {
    run_spec("server-deleted-canonical-output.toml");
}

#[test]
fn server_deleted_own_output_is_a_validate_error() {
    run_spec("server-deleted-output-q2.toml");
}

#[test]
fn server_lost_result_resends_follow_head() {
    run_spec("server-resend-lost.toml");
}

#[test]
fn server_assimilation_handler_answers_are_scriptable() {
    run_spec("server-assimilate-defer.toml");
}

#[test]
fn server_down_scheduler_sends_maintenance_delay() {
    run_spec("server-maintenance-delay.toml");
}

/// A validator outage: the backlog waits, and the first pass after it clears it; a
/// database outage stops the daemons and the scheduler ("Server can't open
/// database").
#[test]
fn server_daemon_outages_delay_their_work() {
    run_spec("server-daemon-outage.toml");
}

/// The scheduler's web server (spec backend §2.4.0): a queue, a refusal, a client
/// that gives up, a reply served late, and the given-up reply's job resent.
#[test]
fn server_scheduler_queue_refuses_times_out_and_resends() {
    run_spec("server-scheduler-queue.toml");
}

#[test]
fn clients_honour_maintenance_delay() {
    run_spec("client-maintenance-delay.toml");
}

/// Time statistics by policy, frozen while off, restart decay, and
/// the 14-day gap rule.
#[test]
fn client_time_statistics_as_boinc_keeps_them() {
    run_spec("client-time-stats.toml");
}

/// A new host's initial RPC and first work fetch, 5 s apart, with
/// the work request of each.
#[test]
fn client_first_minutes_one_operation_per_poll() {
    run_spec("client-first-minutes.toml");
}

#[test]
fn client_start_state_sets_rec_debts_backoff_and_time_stats() {
    run_spec("client-start-state.toml");
}

#[test]
fn client_monotony_on_the_global_grid() {
    run_spec("client-monotony.toml");
}

#[test]
fn client_rrsim_pointer_heap_order_takes_the_last_project() {
    run_spec("client-rrsim-order.toml");
}

#[test]
fn client_rrsim_default_order_is_by_priority() {
    run_spec("client-rrsim-priority-order.toml");
}

#[test]
fn client_start_jobs_are_in_progress_on_the_server() {
    run_spec("client-start-jobs.toml");
}

/// File transfers (spec client §8): job states 1, 2, 4, 5, per-file retries and the
/// project's transfer backoff while the data server is down, the download-stalled
/// gate, and two transfers per project sharing the host's link.
#[test]
fn client_files_states_limits_and_backoff() {
    run_spec("client-files.toml");
}

/// Every scenario under scenarios/spec/ is covered by a test above.
#[test]
fn server_batch_fields_follow_get_batch_params() {
    run_spec("server-batch.toml");
}

#[test]
fn every_spec_scenario_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/spec");
    let me = include_str!("spec_examples.rs");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".toml") {
            assert!(me.contains(&format!("\"{name}\"")), "no test runs {name}");
        }
    }
}

/// A wrong expectation must fail the run: the checks are not vacuous.
#[test]
fn a_wrong_expectation_fails_the_run() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/spec/s1-single-success.toml");
    let sets = vec!["expect.0.state=\"2/0/0/1\"".to_string()];
    let loaded = load(&path, &sets, None).unwrap_or_else(|e| panic!("{e}"));
    let world = StatsRecorder::world(&loaded, &RunOptions::default(), None);
    let err = world.run().err().expect("the run must fail");
    assert!(err.to_string().contains("expected 2/0/0/1"), "{err}");
}

// ----- client worked examples (spec client §6) ----------------------------------------

#[test]
fn client_s16_seed_debt_order_and_get_work_sessions() {
    run_spec("client-s16-seed-sessions.toml");
}

/// After an empty reply the next ask waits for the 60-s work-fetch grid restarted
/// by the poll that used up "RPC complete".
#[test]
fn client_work_fetch_waits_for_the_grid() {
    run_spec("client-work-fetch-grid.toml");
}

/// Work fetch per resource on a 4-CPU, 1-GPU host with a CPU-only and a GPU project
/// (spec client §2.6, §2.7): report RPCs to the GPU project top up its GPU although
/// the CPU project ranks first for the CPU, so it never needs a fetch of its own.
#[test]
fn client_gpu_fetch_split_per_resource() {
    run_spec("client-gpu-fetch-split.toml");
}

#[test]
fn client_mt_run_list_scan_overcommit_and_busy_time() {
    run_spec("client-mt-run-list.toml");
}

#[test]
fn client_s1_modern_project_backoff() {
    run_spec("client-s1-modern-backoff.toml");
}

#[test]
fn client_s5_rec_long_run_split() {
    run_spec("client-s5-rec-split.toml");
}

#[test]
fn client_s4_rec_growth() {
    run_spec("client-s4-rec-growth.toml");
}
