//! The `boinc-sim` binary: a thin layer over [`boinc_sim::cli`], which parses the
//! command line, asks for huge pages for the commands that simulate, runs the
//! command and turns its outcome into the exit status.

use std::process::ExitCode;

fn main() -> ExitCode {
    boinc_sim::cli::main()
}
