//! What the end-to-end tests share: running the `boinc-sim` binary from the
//! repository root, with backtraces asked for, so that a test that expects a clean
//! error message also proves that no panic produced it.

#![allow(dead_code)] // each test crate uses its own subset

use std::path::Path;
use std::process::{Command, Output};

/// The repository root (scenario paths in tests are relative to it).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary, to run from the repository root with `RUST_BACKTRACE=1`.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_boinc-sim"));
    c.current_dir(root());
    c.env("RUST_BACKTRACE", "1");
    c
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("binary runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
