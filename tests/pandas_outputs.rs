//! Analysts load the run folder with pandas' `read_csv` and no options: every CSV
//! must come out with the documented types and the row counts of `summary.json`.
//! The check itself is `tests/pandas/check_outputs.py`.
//!
//! Without pandas the test says so and passes, so `cargo test` works on a machine
//! with only Rust; `.ci/run` installs pandas and sets `BOINC_SIM_REQUIRE_PANDAS=1`,
//! which turns a missing pandas into a failure.

use std::path::Path;
use std::process::Command;

#[test]
fn pandas_reads_every_output_with_the_documented_types() {
    let has_pandas = Command::new("python3")
        .args(["-c", "import pandas"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_pandas {
        assert!(
            std::env::var_os("BOINC_SIM_REQUIRE_PANDAS").is_none(),
            "pandas is required (BOINC_SIM_REQUIRE_PANDAS is set) but python3 cannot import it"
        );
        eprintln!("skipped: python3 with pandas is not available");
        return;
    }
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
