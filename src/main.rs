//! The `boinc-sim` binary: a thin layer over [`boinc_sim::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    boinc_sim::hugepages::enable();
    boinc_sim::cli::main()
}
