//! Analysts load the run folder with pandas' `read_csv` and no options: every CSV
//! must come out with the documented types and the row counts of `summary.json`.
//! The check itself is `tests/pandas/check_outputs.py`.
//!
//! Without pandas `cargo test` lists the test as ignored, with the reason
//! (build.rs), so it works on a machine with only Rust; `.ci/run` installs pandas and sets `BOINC_SIM_REQUIRE_PANDAS=1`,
//! which turns a missing pandas into a failure.

use std::path::Path;
use std::process::Command;

#[test]
#[cfg_attr(
    no_pandas,
    ignore = "python3 with pandas is not available (pip install pandas; build.rs)"
)]
fn pandas_reads_every_output_with_the_documented_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(root.join("scenarios/multi-project.toml"))
        .args([
            "--set",
            "simulation.duration=\"2d\"",
            "--set",
            "host_group.0.count=40",
            // Wrong results that collide, for the science error figures.
            "--set",
            "host_group.0.wrong_result_prob=0.2",
            "--set",
            "project.beta.app.wrong_output_collision_frac=1.0",
            "--set",
            "output.warmup=\"6h\"",
            // A validator outage in one project: its server-load gauges are
            // metrics of that project only.
            "--set",
            "project.beta.daemon_outage=[{ daemon = \"validator\", start = \"6h\", end = \"12h\" }]",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("python3")
        .arg(root.join("tests/pandas/check_outputs.py"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
