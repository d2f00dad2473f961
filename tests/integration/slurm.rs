//! A sweep through a real Slurm cluster of one node: runs `tests/slurm/run.sh` with
//! this build's binary. The script starts munged, slurmctld and slurmd on loopback in
//! a temporary folder (installing Debian's `slurm-wlm` and `munge` if missing), emits
//! `tests/slurm/small-sweep.toml` as an sbatch array, submits it, merges the shards and
//! checks that the merged `sweep.csv` and `sweep-summary.csv` are byte for byte those
//! of a local run. See docs/cluster.md.
//!
//! It needs root and takes tens of seconds, so it runs only with `BOINC_SIM_SLURM=1`
//! (`.ci/run` sets it when it can); otherwise `cargo test` lists it as ignored, with
//! the reason (build.rs). Once asked for, a
//! skip of the script (exit 77: not root, Slurm not installable) is a failure.

use std::path::Path;
use std::process::Command;

#[test]
#[cfg_attr(
    no_slurm,
    ignore = "set BOINC_SIM_SLURM=1 to run tests/slurm/run.sh (as root; installs slurm-wlm and munge; build.rs)"
)]
fn sweep_through_slurm_equals_the_local_run() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/run.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("BOINC_SIM", env!("CARGO_BIN_EXE_boinc-sim"))
        .output()
        .expect("bash runs tests/slurm/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    let code = out.status.code();
    assert!(
        out.status.success(),
        "tests/slurm/run.sh exited with {code:?}{}:\n{stdout}\n{stderr}",
        if code == Some(77) {
            " (skipped: it cannot run here, yet BOINC_SIM_SLURM=1 asked for it)"
        } else {
            ""
        }
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("PASS: Slurm sweep")),
        "tests/slurm/run.sh exited 0 without its PASS line:\n{stdout}"
    );
}
