//! Decides at build time which tests of optional tools cannot run here, so that
//! `cargo test` reports them as *ignored, with the reason* rather than as passed.
//! Each sets a cfg that the test reads with
//! `#[cfg_attr(no_TOOL, ignore = "reason")]`:
//!
//! * `no_chromium`: `chromium` is not on the PATH and `BOINC_SIM_REQUIRE_CHROMIUM`
//!   is not 1 (tests/integration/report_chromium.rs);
//! * `no_slurm`: `BOINC_SIM_SLURM` is not 1 (tests/integration/slurm.rs: it needs
//!   root and installs packages, so it runs only when asked);
//! * `no_pandas`: `python3 -c "import pandas"` fails and `BOINC_SIM_REQUIRE_PANDAS`
//!   is unset (tests/integration/pandas_outputs.rs).
//!
//! `.ci/run` sets the variables when the tools exist, and then the tests run (and
//! fail if the tool is missing after all). `cargo test -- --ignored` runs them anyway.

use std::path::Path;
use std::process::Command;

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| Path::new(&d).join(name).is_file()))
}

fn main() {
    for var in [
        "PATH",
        "BOINC_SIM_REQUIRE_CHROMIUM",
        "BOINC_SIM_SLURM",
        "BOINC_SIM_REQUIRE_PANDAS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    for cfg in ["no_chromium", "no_slurm", "no_pandas"] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    let is_1 = |var: &str| std::env::var(var).as_deref() == Ok("1");
    if !on_path("chromium") && !is_1("BOINC_SIM_REQUIRE_CHROMIUM") {
        println!("cargo:rustc-cfg=no_chromium");
    }
    if !is_1("BOINC_SIM_SLURM") {
        println!("cargo:rustc-cfg=no_slurm");
    }
    let pandas = Command::new("python3")
        .args(["-c", "import pandas"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !pandas && std::env::var_os("BOINC_SIM_REQUIRE_PANDAS").is_none() {
        println!("cargo:rustc-cfg=no_pandas");
    }
}
