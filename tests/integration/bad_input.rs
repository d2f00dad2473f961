//! Bad scenario files must fail with one message that names the file, the
//! `line:column`, the key path and what was expected — and never panic.
//!
//! Each case is a small inline scenario so that the expected line and column can be
//! checked by eye. A few positive cases check that the same loader fills defaults,
//! parses durations and applies `--set`.

use boinc_sim::base::units::Duration;
use boinc_sim::scenario::load::{ScenarioError, load, load_str};
use std::io::Write;

use crate::common::{err, err_with, has};

/// A valid one-project scenario to break.
const GOOD: &str = r#"[simulation]
duration = "10d"

[project.main.workunit]
min_quorum = 2
target_nresults = 2
max_error_results = 2
max_total_results = 4
max_success_results = 2
"#;

// ----- serde-level errors ----------------------------------------------------------

#[test]
fn unknown_key_lists_the_valid_keys() {
    let m = err(&format!("{GOOD}min_qorum = 2\n"));
    has(
        &m,
        &[
            "bad.toml:10:1",
            "`project.main.workunit.min_qorum`",
            "unknown field `min_qorum`",
            "expected one of `min_quorum`, `target_nresults`",
            "`delay_bound`",
        ],
    );
}

#[test]
fn unknown_table_lists_the_valid_sections() {
    let m = err("[project.main.workunits]\nmin_quorum = 1\n");
    has(
        &m,
        &[
            "bad.toml:1:15",
            "`project.main.workunits`",
            "unknown field `workunits`",
            "`workunit`",
            "`validator`",
        ],
    );
}

#[test]
fn wrong_type() {
    let m = err("[project.main.workunit]\nmin_quorum = \"two\"\n");
    has(
        &m,
        &[
            "bad.toml:2:14",
            "`project.main.workunit.min_quorum`",
            "got string \"two\"; expected a whole number from -2,147,483,648 to 2,147,483,647",
        ],
    );
}

#[test]
fn bad_duration_string() {
    let m = err(&format!("{GOOD}delay_bound = \"ten days\"\n"));
    has(
        &m,
        &[
            "bad.toml:10:15",
            "`project.main.workunit.delay_bound`",
            "invalid duration `ten days`",
            "expected seconds or a number with a unit d, h, m or s",
        ],
    );
}

#[test]
fn unknown_daemon_in_tie_order() {
    let m = err("[simulation]\ntie_order = [\"scheduler\", \"validatr\"]\n[project.a]\n");
    has(
        &m,
        &[
            "bad.toml:2:27",
            "`simulation.tie_order.1`",
            "unknown variant `validatr`",
            "`validator`",
        ],
    );
}

#[test]
fn missing_required_key() {
    let m = err("[project.a]\n\n[[host_group]]\nname = \"x\"\n");
    has(
        &m,
        &["bad.toml:3:1", "`host_group.0`", "missing field `count`"],
    );
}

#[test]
fn invalid_toml_syntax() {
    let m = err("[project.main\nmin_quorum = 1\n");
    has(
        &m,
        &[
            "bad.toml:1:14",
            "unclosed table, expected `]`",
            "[project.main",
        ],
    );
}

#[test]
fn duplicate_key() {
    let m = err("[project.main.workunit]\nmin_quorum = 1\nmin_quorum = 1\n");
    has(&m, &["bad.toml:3:1", "duplicate key"]);
}

// ----- workunit template (spec backend §2.1) ---------------------------------------

#[test]
fn min_quorum_above_target_nresults() {
    let m = err(
        "[project.main.workunit]\ntarget_nresults = 2\nmax_total_results = 4\nmax_success_results = 2\nmin_quorum = 3\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`project.main.workunit.min_quorum`",
            "min_quorum = 3 is greater than target_nresults = 2",
            "expected min_quorum <= target_nresults",
        ],
    );
}

#[test]
fn max_total_results_below_target_nresults() {
    let m = err(
        "[project.main.workunit]\ntarget_nresults = 3\nmax_success_results = 3\nmax_total_results = 2\n",
    );
    // The first problem comes first; create_work's own rejections follow.
    assert!(
        m.starts_with("bad.toml:4:1: `project.main.workunit.max_total_results`"),
        "{m}"
    );
    has(
        &m,
        &[
            "max_total_results = 2 is less than target_nresults = 3",
            "expected max_total_results >= target_nresults",
            "more problem",
            "max_success_results = 3 is greater than max_total_results = 2",
        ],
    );
}

#[test]
fn delay_bound_zero() {
    let m = err(&format!("{GOOD}delay_bound = 0\n"));
    has(
        &m,
        &[
            "bad.toml:10:1",
            "`project.main.workunit.delay_bound`",
            "expected a duration > 0",
        ],
    );
}

#[test]
fn a_run_longer_than_boincs_int_times() {
    let m = err(&GOOD.replace("duration = \"10d\"", "duration = \"25000d\""));
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`simulation.duration`",
            "duration = 2160000000 s does not fit BOINC's times",
            "expected less than 2147483647 s (68 years)",
        ],
    );
}

#[test]
fn delay_bound_negative() {
    let m = err(&format!("{GOOD}delay_bound = \"-2h\"\n"));
    has(
        &m,
        &[
            "bad.toml:10:1",
            "`project.main.workunit.delay_bound`",
            "delay_bound = -7200 s is not positive",
            "expected a duration > 0",
        ],
    );
}

#[test]
fn create_work_rejects_zero_fpops() {
    let m = err("[project.main.workunit]\nrsc_fpops_est = 0.0\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.main.workunit.rsc_fpops_est`",
            "expected a number > 0 (create_work rejects 0",
        ],
    );
}

#[test]
fn true_size_that_can_draw_a_non_positive_factor() {
    let m = err("[project.main.workunit]\ntrue_size = { dist = \"normal\", mean = 1, sd = 0.2 }\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.main.workunit.true_size`",
            "true_size can draw a factor <= 0",
        ],
    );
    let m = err("[project.main.workunit]\ntrue_size = 0\n");
    has(
        &m,
        &["`project.main.workunit.true_size`", "expected a number > 0"],
    );
    let m = err("[project.main.workunit]\ntrue_size = { dist = \"lognormal\", mu = 0 }\n");
    has(&m, &["`project.main.workunit.true_size`", "sigma"]);
}

#[test]
fn default_value_that_breaks_a_rule_points_at_the_table() {
    // max_total_results is absent (default 1) but target_nresults = 2 needs more.
    let m = err(
        "[simulation]\nseed = 3\n\n[project.main.workunit]\ntarget_nresults = 2\nmin_quorum = 2\n",
    );
    has(
        &m,
        &[
            "bad.toml:4:1",
            "`project.main.workunit.max_total_results`",
            "expected max_total_results >= target_nresults",
        ],
    );
}

// ----- other sections ----------------------------------------------------------------

#[test]
fn no_project() {
    let m = err("[simulation]\nseed = 1\n");
    has(
        &m,
        &[
            "bad.toml:1:1",
            "`project`",
            "expected at least one `[project.NAME]`",
        ],
    );
}

#[test]
fn bad_tie_order_duplicate() {
    let m = err(
        "[project.a]\n[simulation]\ntie_order = [\"scheduler\", \"transitioner\", \"validator\", \"validator\", \"file_deleter\", \"db_purge\", \"feeder\", \"work_generator\"]\n",
    );
    has(
        &m,
        &[
            "bad.toml:3:56",
            "`simulation.tie_order.3`",
            "`validator` appears twice",
            "expected each of the 8 daemons exactly once",
            "tie_order is missing assimilator",
        ],
    );
}

#[test]
fn probability_above_one() {
    let m = err("[project.a]\n\n[[host_group]]\ncount = 10\nerror_prob = 1.5\n");
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`host_group.0.error_prob`",
            "error_prob = 1.5 is not a probability",
            "expected a number in [0, 1]",
        ],
    );
}

#[test]
fn bad_wrong_result_distribution_and_collision_fraction() {
    let m = err(
        "[project.a]\n\n[[host_group]]\ncount = 10\nwrong_result_prob = { dist = \"uniform\", min = 0.5, max = 0.1 }\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`host_group.0.wrong_result_prob`",
            "uniform needs finite min <= max",
        ],
    );
    let m = err("[project.a.app]\nwrong_output_collision_frac = 2.0\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.a.app.wrong_output_collision_frac`",
            "is not a probability",
        ],
    );
    let m = err("[project.a]\n\n[[host_group]]\ncount = 10\nerror_class = 3\n");
    has(&m, &["bad.toml:5", "error_class", "expected a string"]);
}

#[test]
fn unknown_project_in_host_group() {
    let m = err("[project.main]\n\n[[host_group]]\ncount = 1\nproject = \"mian\"\n");
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`host_group.0.project`",
            "unknown project `mian`; known projects: main",
        ],
    );
}

#[test]
fn omitted_project_with_two_projects() {
    let m = err("[project.a]\n[project.b]\n\n[[host_group]]\ncount = 1\n");
    has(
        &m,
        &[
            "bad.toml:4:1",
            "`host_group.0.project`",
            "the scenario has 2 projects",
            "expected `project = \"NAME\"` with one of: a, b",
        ],
    );
}

#[test]
fn bad_project_name() {
    let m = err("[project.\"my project\"]\n");
    has(
        &m,
        &[
            "bad.toml:1:1",
            "`project.my project`",
            "expected letters, digits, `_` or `-`",
        ],
    );
}

#[test]
fn homogeneous_redundancy_out_of_range() {
    let m = err("[project.p.app]\nhomogeneous_redundancy = 3\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.p.app.homogeneous_redundancy`",
            "expected 0 (off), 1 (fine) or 2 (coarse)",
        ],
    );
}

#[test]
fn rate_generator_needs_an_interval() {
    let m = err("[project.p.work_generator]\nmode = \"rate\"\ninterval = 0\n");
    has(
        &m,
        &[
            "bad.toml:3:1",
            "`project.p.work_generator.interval`",
            "mode = \"rate\" needs interval > 0",
        ],
    );
}

#[test]
fn pinned_draw_must_be_below_one() {
    let m = err("[project.p.pin]\ntrust = 1.0\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.p.pin.trust`",
            "expected a uniform draw with 0 <= U < 1",
        ],
    );
}

#[test]
fn duplicate_host_names() {
    let m = err("[project.p]\n\n[[host]]\nname = \"H1\"\n\n[[host]]\nname = \"H1\"\n");
    has(
        &m,
        &[
            "bad.toml:7:1",
            "`host.1.name`",
            "duplicate host name `H1` (also host.0)",
            "expected unique names",
        ],
    );
}

// ----- events and expects --------------------------------------------------------------

const HOSTS: &str = "[project.p]\n\n[[host]]\nname = \"H1\"\n\n[[host]]\nname = \"H2\"\n";

#[test]
fn event_naming_unknown_host() {
    let m = err(&format!("{HOSTS}\n[[event]]\nat = \"1h\"\nhost = \"H9\"\n"));
    has(
        &m,
        &[
            "bad.toml:11:1",
            "`event.0.host`",
            "event names unknown host `H9`; known hosts: H1, H2",
        ],
    );
}

#[test]
fn event_with_two_actions() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 0\nhost = \"H1\"\ndaemon = \"transitioner\"\n"
    ));
    has(
        &m,
        &[
            "bad.toml:9:1",
            "`event.0`",
            "event has 2 actions (`daemon`, `host`)",
            "expected exactly one of `daemon`, `host`, `create_workunits`, `submit_batch`, `cancel`",
        ],
    );
}

#[test]
fn event_with_no_action() {
    let m = err(&format!("{HOSTS}\n[[event]]\nat = 0\n"));
    has(&m, &["bad.toml:9:1", "`event.0`", "event has no action"]);
}

#[test]
fn bad_result_name_in_report() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 0\nhost = \"H1\"\nreport = [{{ result = \"wu1-0\" }}]\n"
    ));
    has(
        &m,
        &[
            "bad.toml:12:13",
            "`event.0.report.0.result`",
            "`wu1-0` is not a result name",
            "expected `wu<id>_<suffix>`",
        ],
    );
}

#[test]
fn transient_output_needs_an_end() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 0\nhost = \"H1\"\n\n[[event.report]]\nresult = \"wu1_0\"\noutput = \"transient\"\n"
    ));
    has(
        &m,
        &[
            "bad.toml:13:1",
            "`event.0.report.0.transient_until`",
            "output = \"transient\" needs transient_until",
        ],
    );
}

#[test]
fn report_without_host() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 0\ndaemon = \"validator\"\nlost = [\"wu1_0\"]\n"
    ));
    has(
        &m,
        &[
            "bad.toml:12:1",
            "`event.0.lost`",
            "expected it only with `host = \"NAME\"`",
        ],
    );
}

#[test]
fn bad_cancel_name() {
    let m = err("[project.p]\n[[event]]\nat = 0\ncancel = [\"wu1\", \"job2\"]\n");
    has(
        &m,
        &[
            "bad.toml:4:18",
            "`event.0.cancel.1`",
            "`job2` is not a workunit name; expected `wu<id>`",
        ],
    );
}

#[test]
fn expect_with_mixed_fields() {
    let m = err(
        "[project.p]\n\n[[expect]]\nat = \"1h\"\nresult = \"wu1_0\"\nstate = \"5/1/1/2\"\ncanonical = \"wu1_0\"\n",
    );
    has(
        &m,
        &[
            "bad.toml:7:1",
            "`expect.0.canonical`",
            "`canonical` is a workunit field but this expect names a result",
            "expected only result fields",
        ],
    );
}

#[test]
fn expect_naming_two_rows() {
    let m = err("[project.p]\n\n[[expect]]\nworkunit = \"wu1\"\nresult = \"wu1_0\"\n");
    has(
        &m,
        &[
            "bad.toml:3:1",
            "`expect.0`",
            "expect names 2 rows",
            "expected exactly one of `workunit`, `result`, `host`",
        ],
    );
}

#[test]
fn expect_state_out_of_range() {
    let m = err("[project.p]\n\n[[expect]]\nresult = \"wu1_0\"\nstate = \"5/9/1/2\"\n");
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`expect.0.state`",
            "outcome 9 is not a BOINC value; expected 0..=7",
        ],
    );
    let m = err("[project.p]\n\n[[expect]]\nresult = \"wu1_0\"\nstate = \"5 / 1/1/2\"\n");
    has(
        &m,
        &["bad.toml:5:1", "is not a result state", "e.g. \"5/1/1/2\""],
    );
}

// ----- reading the file ------------------------------------------------------------------

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nope.toml");
    let e = load(&path, &[], None).expect_err("missing file must fail");
    assert_eq!(e.exit_code(), 2);
    let m = e.to_string();
    has(
        &m,
        &["cannot read scenario file", &path.display().to_string()],
    );
    assert!(matches!(e, ScenarioError::Read { .. }));
}

#[test]
fn not_utf8() {
    let mut f = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("tempfile");
    f.write_all(b"[project.p]\n# caf\xe9\n").expect("write");
    let e = load(f.path(), &[], None).expect_err("latin-1 must fail");
    has(
        &e.to_string(),
        &[
            &f.path().display().to_string(),
            "not UTF-8 text",
            "line 2, column 6",
        ],
    );
}

#[test]
fn errors_in_a_file_name_its_path() {
    let mut f = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("tempfile");
    f.write_all(b"[project.p.config]\nshmem_work_items = 0\n")
        .expect("write");
    let e = load(f.path(), &[], None).expect_err("must fail");
    let m = e.to_string();
    has(
        &m,
        &[
            &format!("{}:2:1", f.path().display()),
            "`project.p.config.shmem_work_items`",
            "expected an integer >= 1",
        ],
    );
    assert_eq!(e.line_col(), Some((2, 1)));
    assert_eq!(e.key_path(), Some("project.p.config.shmem_work_items"));
}

// ----- --set ---------------------------------------------------------------------------------

#[test]
fn set_without_equals() {
    let m = err_with(GOOD, &["project.main.workunit.delay_bound"]);
    has(
        &m,
        &[
            "--set `project.main.workunit.delay_bound`",
            "expected KEY=VALUE",
        ],
    );
}

#[test]
fn set_with_empty_key() {
    let m = err_with(GOOD, &["=5"]);
    has(&m, &["--set `=5`", "empty key"]);
}

#[test]
fn set_with_wrong_type() {
    let m = err_with(GOOD, &["project.main.workunit.min_quorum=two"]);
    has(
        &m,
        &[
            "from --set `project.main.workunit.min_quorum=two`",
            "`project.main.workunit.min_quorum`",
            "got string \"two\"; expected a whole number from -2,147,483,648 to 2,147,483,647",
        ],
    );
}

#[test]
fn set_with_unknown_key() {
    let m = err_with(GOOD, &["project.main.workunit.deadline=5"]);
    has(
        &m,
        &[
            "from --set `project.main.workunit.deadline=5`",
            "unknown field `deadline`",
            "`delay_bound`",
        ],
    );
}

#[test]
fn set_index_out_of_range() {
    let text = format!("{GOOD}\n[[host_group]]\ncount = 1\n");
    let m = err_with(&text, &["host_group.3.count=5"]);
    has(
        &m,
        &[
            "--set `host_group.3.count=5`",
            "index 3 is out of range",
            "`host_group` has 1 entry",
        ],
    );
}

#[test]
fn set_through_a_value() {
    let m = err_with(GOOD, &["simulation.duration.days=5"]);
    has(
        &m,
        &[
            "--set `simulation.duration.days=5`",
            "`simulation.duration` is a string, not a table",
        ],
    );
}

#[test]
fn set_making_the_file_invalid() {
    let m = err_with(GOOD, &["project.main.workunit.min_quorum=3"]);
    has(
        &m,
        &[
            "from --set `project.main.workunit.min_quorum=3`",
            "min_quorum = 3 is greater than target_nresults = 2",
        ],
    );
}

#[test]
fn file_errors_keep_file_positions_under_set() {
    // The --set adds a line to [project.main.workunit]; the bad key below it must
    // still be reported at its line in the file.
    let text = format!("{GOOD}\n[project.main.config]\nbogus = 1\n");
    let m = err_with(&text, &["project.main.workunit.delay_bound=86400"]);
    has(
        &m,
        &[
            "bad.toml:12:1",
            "`project.main.config.bogus`",
            "(with --set project.main.workunit.delay_bound=86400 applied)",
        ],
    );
}

// ----- what must load -------------------------------------------------------------------------

#[test]
fn durations_with_units_parse() {
    let l = load_str(GOOD, "good.toml", &[], None).expect("loads");
    assert_eq!(l.file.simulation.duration, Duration(864_000));
    let l = load_str(
        "[project.p.workunit]\ndelay_bound = \"6h\"\n[project.p.daemons]\nvalidator = \"90m\"\n",
        "x",
        &[],
        None,
    )
    .expect("loads");
    let p = &l.file.project["p"];
    assert_eq!(p.workunit.as_ref().unwrap().delay_bound, Duration(21_600));
    assert_eq!(p.daemons.validator, Duration(5_400));
}

#[test]
fn set_takes_effect() {
    let sets = [
        "project.main.workunit.delay_bound=86400".to_string(),
        "project.main.backend.variant=seed".to_string(),
        "simulation.seed=7".to_string(),
        "project.main.config.delete_delay=10d".to_string(),
    ];
    let l = load_str(GOOD, "good.toml", &sets, None).expect("loads");
    let p = &l.file.project["main"];
    assert_eq!(p.workunit.as_ref().unwrap().delay_bound, Duration(86_400));
    assert_eq!(p.backend.variant, boinc_sim::server::config::Variant::Seed);
    assert_eq!(p.config.delete_delay, Duration(864_000));
    assert_eq!(l.file.simulation.seed, 7);
    assert!(
        l.source_text.contains("delay_bound = 86400"),
        "{}",
        l.source_text
    );
    // The hash covers the text after --set.
    let plain = load_str(GOOD, "good.toml", &[], None).expect("loads");
    assert_ne!(plain.hash, l.hash);
    assert_eq!(plain.hash.len(), 16);
}

#[test]
fn set_indexes_arrays_of_tables() {
    let text = format!("{GOOD}\n[[host_group]]\ncount = 1\n");
    let l = load_str(&text, "g.toml", &["host_group.0.count=5".into()], None).expect("loads");
    assert_eq!(l.file.host_group[0].count, 5);
}

#[test]
fn seed_overrides_the_file() {
    let l = load_str("[simulation]\nseed = 3\n[project.p]\n", "s", &[], Some(11)).expect("loads");
    assert_eq!(l.file.simulation.seed, 11);
}

#[test]
fn defaults_are_filled() {
    let mut f = tempfile::Builder::new()
        .prefix("myrun")
        .suffix(".toml")
        .tempfile()
        .expect("tempfile");
    f.write_all(b"[project.main]\n").expect("write");
    let l = load(f.path(), &[], None).expect("loads");
    let stem = f
        .path()
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("utf-8 stem");
    assert_eq!(l.file.simulation.name, stem);
    assert_eq!(l.file.simulation.seed, 1);
    assert_eq!(l.file.simulation.duration, Duration(30 * 86_400));
    assert_eq!(l.file.simulation.tie_order.len(), 8);
    let p = &l.file.project["main"];
    assert_eq!(
        p.workunit.as_ref().unwrap().delay_bound,
        Duration(7 * 86_400)
    );
    assert_eq!(p.workunit.as_ref().unwrap().min_quorum, 1);
    assert_eq!(p.config.daily_result_quota, 500);
    assert_eq!(p.config.shmem_work_items, 100);
    assert_eq!(l.file.output.transitions, Some(false), "unscripted: off");
    assert_eq!(l.origin, f.path().display().to_string());
}

#[test]
fn expect_host_with_a_row_state() {
    let m = err(&format!(
        "{HOSTS}\n[[expect]]\nhost = \"H1\"\nfile_delete_state = 2\n"
    ));
    has(
        &m,
        &[
            "bad.toml:11:1",
            "`expect.0.file_delete_state`",
            "is a result and workunit field but this expect names a host",
        ],
    );
}

#[test]
fn expect_hostid_unknown() {
    let m = err(&format!(
        "{HOSTS}\n[[expect]]\nresult = \"wu1_0\"\nhostid = \"H3\"\n"
    ));
    has(
        &m,
        &[
            "bad.toml:11:1",
            "`expect.0.hostid`",
            "hostid names unknown host `H3`",
            "known hosts: H1, H2",
        ],
    );
}

#[test]
fn workunit_expects_may_check_file_delete_state() {
    let text = "[project.p]\n[[expect]]\nworkunit = \"wu1\"\nfile_delete_state = 2\ncanonical = \"none\"\n[[expect]]\nresult = \"wu1_1\"\nhostid = \"0\"\nstate = \"5/1/1/2\"\n";
    load_str(text, "ok.toml", &[], None).expect("loads");
}

#[test]
fn event_after_the_end_of_the_run() {
    let m = err(
        "[simulation]\nduration = \"1h\"\n[project.p]\n[[event]]\nat = \"2h\"\ncreate_workunits = 1\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`event.0.at`",
            "after the end of the run (simulation.duration = 3600 s)",
            "expected at <= 3600",
        ],
    );
}

#[test]
fn set_creating_an_unknown_table() {
    let m = err_with(GOOD, &["project.main.workunits.min_quorum=1"]);
    has(
        &m,
        &[
            "from --set `project.main.workunits.min_quorum=1`",
            "`project.main.workunits`",
            "unknown field `workunits`",
            "`workunit`",
        ],
    );
}

// ----- host populations, [client], outages and client expectations -------------------

#[test]
fn unknown_distribution_names_the_valid_ones() {
    let m =
        err("[project.a]\n\n[[host_group]]\ncount = 1\np_fpops = { dist = \"gamma\", k = 2 }\n");
    has(
        &m,
        &[
            "bad.toml:5:",
            "`host_group.0.p_fpops`",
            "unknown variant `gamma`",
            "`lognormal`",
        ],
    );
}

#[test]
fn distribution_missing_a_parameter() {
    let m = err(
        "[project.a]\n\n[[host_group]]\ncount = 1\nlifetime = { dist = \"normal\", mean = \"3d\" }\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:",
            "`host_group.0.lifetime`",
            "missing field `sd`",
        ],
    );
}

#[test]
fn distribution_with_impossible_parameters() {
    let m = err(
        "[project.a]\n\n[[host_group]]\ncount = 1\narrival = { dist = \"uniform\", min = \"2d\", max = \"1d\" }\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`host_group.0.arrival`",
            "uniform needs finite min <= max",
        ],
    );
}

#[test]
fn share_of_an_unknown_project() {
    let m = err(
        "[project.a]\n[project.b]\n\n[[host_group]]\ncount = 1\nshares = { a = 100, c = 50 }\n",
    );
    has(
        &m,
        &[
            "bad.toml:6:",
            "`host_group.0.shares.c`",
            "unknown project `c`; expected one of: a, b",
        ],
    );
}

#[test]
fn negative_share() {
    let m = err(
        "[project.a]\n[project.b]\n\n[[host_group]]\ncount = 1\nshares = { a = 100, b = -5 }\n",
    );
    has(
        &m,
        &[
            "`host_group.0.shares.b`",
            "share = -5; expected a share >= 0",
        ],
    );
}

#[test]
fn on_period_without_off_period() {
    let m = err("[project.a]\n\n[[host_group]]\ncount = 1\non_period = \"8h\"\n");
    has(
        &m,
        &[
            "`host_group.0.off_period`",
            "on_period is given without off_period; expected both or neither",
        ],
    );
}

#[test]
fn unknown_client_policy() {
    let m = err("[client]\npolicy = \"rec\"\n[project.a]\n");
    has(
        &m,
        &[
            "bad.toml:2:10",
            "`client.policy`",
            "unknown variant `rec`",
            "expected `seed_debt` or `modern_rec`",
        ],
    );
}

#[test]
fn outage_without_duration() {
    let m = err("[project.a]\n[[project.a.outage]]\nstart = \"1d\"\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.a.outage.0`",
            "missing field `duration`",
        ],
    );
}

#[test]
fn outage_of_zero_length() {
    let m = err("[project.a]\n[[project.a.outage]]\nstart = \"1d\"\nduration = 0\n");
    has(&m, &["`project.a.outage.0.duration`"]);
}

#[test]
fn client_expect_names_an_unknown_group() {
    let m = err(
        "[project.a]\n[[host_group]]\nname = \"v\"\ncount = 2\n[[expect]]\nclient = \"w\"\nrec = 1.0\n",
    );
    has(
        &m,
        &[
            "`expect.0.client`",
            "unknown host group `w`; expected one of: v",
        ],
    );
    let m = err(
        "[project.a]\n[[host_group]]\nname = \"v\"\ncount = 2\n[[expect]]\nclient = \"v#2\"\nrec = 1.0\n",
    );
    has(
        &m,
        &[
            "`expect.0.client`",
            "`v#2` is not a host of group `v`; expected `v` or `v#k` with k in 0..2",
        ],
    );
}

#[test]
fn client_field_in_a_result_expect() {
    let m = err("[project.a]\n[[expect]]\nresult = \"wu1_0\"\nrec = 1.0\n");
    has(
        &m,
        &[
            "`expect.0.rec`",
            "`rec` is a client field but this expect names a result",
        ],
    );
}

#[test]
fn bad_trace_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    std::fs::write(
        dir.path().join("traces/t.csv"),
        "host_id,start,end\n1,0,100\n1,50,200\n",
    )
    .unwrap();
    let sc = dir.path().join("s.toml");
    std::fs::write(
        &sc,
        "[project.a]\n[[host_group]]\ncount = 2\ntrace = \"traces/t.csv\"\n",
    )
    .unwrap();
    let e = match load(&sc, &[], None) {
        Ok(_) => panic!("accepted a trace with overlapping intervals"),
        Err(e) => e,
    };
    assert_eq!(e.exit_code(), 2);
    let m = e.to_string();
    has(
        &m,
        &["s.toml:4:1", "`host_group.0.trace`", "t.csv", "line 3"],
    );
    // The same folder with a good trace loads.
    std::fs::write(
        dir.path().join("traces/t.csv"),
        "host_id,start,end\n1,0,100\n2,50,\"2d\"\n",
    )
    .unwrap();
    let l = load(&sc, &[], None).expect("loads");
    assert!(l.file.host_group[0].trace_data.0.is_some());
}

#[test]
fn zero_output_interval() {
    let m = err("[project.a]\n[output]\ninterval = 0\n");
    has(&m, &["`output.interval`"]);
}

#[test]
fn warmup_not_shorter_than_the_run() {
    let m = err("[simulation]\nduration = \"2d\"\n[project.a]\n[output]\nwarmup = \"2d\"\n");
    has(
        &m,
        &[
            ":5:",
            "`output.warmup`",
            "172800 s",
            "less than simulation.duration",
        ],
    );
    let m = err("[project.a]\n[output]\nwarmup = -5\n");
    has(&m, &["`output.warmup`", "-5 s"]);
}

// ----- assimilation answers, maintenance delay, reply expectations ----------------

#[test]
fn assimilate_answers_need_an_assimilator_pass() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 1\ndaemon = \"validator\"\nassimilate = {{ wu1 = \"defer\" }}\n"
    ));
    has(
        &m,
        &[
            "bad.toml:12:1",
            "`event.0.assimilate`",
            "expected it only with `daemon = \"assimilator\"`",
        ],
    );
}

#[test]
fn assimilate_answer_must_be_known() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 1\ndaemon = \"assimilator\"\nassimilate = {{ wu1 = \"maybe\" }}\n"
    ));
    has(
        &m,
        &["bad.toml:12:", "unknown variant `maybe`", "`ok`, `defer`"],
    );
}

#[test]
fn assimilate_names_workunits() {
    let m = err(&format!(
        "{HOSTS}\n[[event]]\nat = 1\ndaemon = \"assimilator\"\nassimilate = {{ wu1_0 = \"ok\" }}\n"
    ));
    has(
        &m,
        &[
            "bad.toml:12:",
            "`event.0.assimilate.wu1_0`",
            "`wu1_0` is not a workunit name",
        ],
    );
}

#[test]
fn assimilator_probabilities_sum_to_at_most_one() {
    let m = err("[project.p.assimilator]\ndefer_prob = 0.7\nerror_prob = 0.5\n");
    has(
        &m,
        &[
            "bad.toml:3:1",
            "`project.p.assimilator.error_prob`",
            "defer_prob + error_prob = 1.2 exceeds 1",
        ],
    );
}

#[test]
fn maintenance_delay_only_for_a_down_outage() {
    let m = err(
        "[project.p]\n\n[[project.p.outage]]\nstart = 0\nduration = 10\nkind = \"unreachable\"\nmaintenance_delay = 60\n",
    );
    has(
        &m,
        &[
            "bad.toml:7:1",
            "`project.p.outage.0.maintenance_delay`",
            "expected kind = \"down\"",
        ],
    );
}

#[test]
fn negative_maintenance_delay() {
    let m = err("[project.p.config]\nmaintenance_delay = -5\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.p.config.maintenance_delay`",
            "expected a duration >= 0",
        ],
    );
}

#[test]
fn reply_deadlines_one_per_job() {
    let m = err(&format!(
        "{HOSTS}\n[[expect]]\nhost = \"H1\"\nreply = {{ jobs = [\"wu1_0\"], deadlines = [1, 2] }}\n"
    ));
    has(
        &m,
        &[
            "bad.toml:11:",
            "`expect.0.reply.deadlines`",
            "2 deadlines for 1 jobs; expected one deadline per job",
        ],
    );
}

#[test]
fn reply_is_a_host_field() {
    let m = err(&format!(
        "{HOSTS}\n[[expect]]\nworkunit = \"wu1\"\nreply = {{ request_delay = 0.0 }}\n"
    ));
    has(
        &m,
        &[
            "bad.toml:11:1",
            "`expect.0.reply`",
            "`reply` is a host field but this expect names a workunit",
        ],
    );
}

#[test]
fn reply_names_results() {
    let m = err(&format!(
        "{HOSTS}\n[[expect]]\nhost = \"H1\"\nreply = {{ acks = [\"wu1\"] }}\n"
    ));
    has(
        &m,
        &[
            "bad.toml:11:",
            "`expect.0.reply.acks.0`",
            "`wu1` is not a result name",
        ],
    );
}

// ----- a client's starting state ([host_group.start]) ---------------------------------

#[test]
fn start_time_stat_outside_a_fraction() {
    let m = err("[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.start]\non_frac = 1.5\n");
    has(
        &m,
        &[
            "bad.toml:6:1",
            "`host_group.0.start.on_frac`",
            "on_frac = 1.5; expected a fraction in (0, 1]",
        ],
    );
}

#[test]
fn start_project_not_attached() {
    let m = err(
        "[project.a]\n[project.b]\n\n[[host_group]]\ncount = 1\nproject = \"a\"\n[host_group.start.project.b]\nnrpc_failures = 1\n",
    );
    has(
        &m,
        &[
            "bad.toml:7:1",
            "`host_group.0.start.project.b`",
            "project `b` is not one this host group attaches to",
        ],
    );
}

#[test]
fn start_credit_average_of_the_other_policy() {
    // The default policy is seed_debt: REC is the modern policy's.
    let m =
        err("[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.start.project.a]\nrec = 5.0\n");
    has(
        &m,
        &[
            "bad.toml:6:1",
            "`host_group.0.start.project.a.rec`",
            "rec is kept only by the modern_rec policy; this group runs seed_debt",
        ],
    );
    let m = err(
        "[client]\npolicy = \"modern_rec\"\n[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.start.project.a]\nexp_avg_cpu = 5.0\ncpu_backoff_time = -3\n",
    );
    has(
        &m,
        &[
            "bad.toml:8:1",
            "`host_group.0.start.project.a.exp_avg_cpu`",
            "kept only by the seed_debt policy; this group runs modern_rec",
            "bad.toml:9:1",
            "`host_group.0.start.project.a.cpu_backoff_time`",
            "cpu_backoff_time = -3 s is negative",
        ],
    );
}

#[test]
fn start_negative_rec_and_unknown_key() {
    let m = err(
        "[client]\npolicy = \"modern_rec\"\n[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.start.project.a]\nrec = -1.0\n",
    );
    has(
        &m,
        &[
            "bad.toml:8:1",
            "`host_group.0.start.project.a.rec`",
            "rec = -1 is negative; expected a number >= 0",
        ],
    );
    let m =
        err("[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.start]\non_fraction = 0.5\n");
    has(
        &m,
        &["bad.toml:6:1", "unknown field `on_fraction`", "`on_frac`"],
    );
}

#[test]
fn start_job_of_another_project_and_bad_progress() {
    let m = err(
        "[project.a]\n[project.b]\n\n[[host_group]]\ncount = 1\nproject = \"a\"\n[[host_group.start.job]]\nproject = \"b\"\nreport_deadline = \"1d\"\nfraction_done = 1.0\n",
    );
    has(
        &m,
        &[
            "bad.toml:8:1",
            "`host_group.0.start.job.0.project`",
            "project `b` is not one this host group attaches to; expected `a`",
            "bad.toml:10:1",
            "`host_group.0.start.job.0.fraction_done`",
            "fraction_done = 1; expected a fraction in [0, 1)",
        ],
    );
    let m = err(
        "[project.a]\n\n[[host_group]]\ncount = 1\n[[host_group.start.job]]\nfraction_done = 0.5\n",
    );
    has(&m, &["bad.toml:5", "missing field `report_deadline`"]);
}

/// The world numbers projects in 16 bits, and so does a client job the project it
/// belongs to; the last number marks a host's background projects: a scenario with
/// more than 65,535 projects is refused, not wrapped.
#[test]
fn a_scenario_with_too_many_projects_is_refused() {
    let mut text = String::from("[simulation]\nduration = \"1d\"\n\n");
    for i in 0..65_536 {
        text.push_str(&format!("[project.p{i}]\n"));
    }
    let m = err(&text);
    has(&m, &["`project`", "65536 projects; expected at most 65535"]);
}

// ----- daemon outages ----------------------------------------------------------------

#[test]
fn daemon_outage_names_an_unknown_daemon() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"scheduler\"\nstart = 0\nend = 10\n",
    );
    has(
        &m,
        &[
            "bad.toml:3:10",
            "`project.a.daemon_outage.0.daemon`",
            "unknown variant `scheduler`",
            "`feeder`",
            "`database`",
        ],
    );
}

#[test]
fn daemon_outage_without_a_schedule() {
    let m = err("[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"feeder\"\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.a.daemon_outage.0`",
            "no schedule",
            "start and end",
            "mtbf and repair",
        ],
    );
}

#[test]
fn daemon_outage_window_ends_before_it_starts() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"validator\"\nstart = \"11d\"\nend = \"10d\"\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`project.a.daemon_outage.0.end`",
            "end = 864000 s is not after start = 950400 s",
            "expected end > start",
        ],
    );
}

#[test]
fn daemon_outage_window_without_end() {
    let m =
        err("[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"validator\"\nstart = \"1d\"\n");
    has(
        &m,
        &["`project.a.daemon_outage.0.end`", "a window without end"],
    );
}

#[test]
fn daemon_outage_mixes_a_window_and_a_crash_process() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"transitioner\"\nstart = 0\nend = 10\nmtbf = \"1d\"\nrepair = \"1h\"\n",
    );
    has(
        &m,
        &[
            "bad.toml:6:1",
            "`project.a.daemon_outage.0.mtbf`",
            "expected one of the two",
        ],
    );
}

#[test]
fn daemon_outage_crash_process_needs_positive_times() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"database\"\nmtbf = 0\nrepair = { dist = \"normal\", mean = \"1h\", sd = \"1h\" }\n",
    );
    has(
        &m,
        &[
            "bad.toml:4:1",
            "`project.a.daemon_outage.0.mtbf`",
            "mtbf = 0 s is not positive",
            "bad.toml:5:1",
            "`project.a.daemon_outage.0.repair`",
            "repair can be 0 or negative",
        ],
    );
}

#[test]
fn daemon_outage_crash_process_without_repair() {
    let m = err("[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"feeder\"\nmtbf = \"30d\"\n");
    has(
        &m,
        &[
            "`project.a.daemon_outage.0.repair`",
            "a crash process without repair",
        ],
    );
}

#[test]
fn daemon_outage_repair_is_a_distribution() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"feeder\"\nmtbf = \"30d\"\nrepair = { dist = \"exponential\", mean = 0 }\n",
    );
    has(
        &m,
        &[
            "`project.a.daemon_outage.0.repair`",
            "exponential needs mean > 0",
        ],
    );
}

#[test]
fn daemon_outage_with_an_unknown_key() {
    let m = err(
        "[project.a]\n[[project.a.daemon_outage]]\ndaemon = \"feeder\"\nstart = 0\nduration = 10\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`project.a.daemon_outage.0.duration`",
            "unknown field `duration`",
            "`end`",
            "`mtbf`",
        ],
    );
}
