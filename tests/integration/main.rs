//! The integration tests: one test binary (`[[test]] integration` in `Cargo.toml`,
//! with `autotests = false`), so that `cargo test` compiles and links the library
//! into one test crate instead of one per file. Each file beside this one is a
//! module holding the tests of one area; `common` holds what they share. A new file
//! here is a test only once it is named below.
//!
//! One area's tests: `cargo test --release --test integration sweep::` (a filter
//! matches any test whose path contains it: `cli::` would also pick `plot_cli::`;
//! add `--exact` with a whole path for one test). The tests of all modules run at
//! once, as threads of one process: a test must not change the process's
//! environment, current folder or signal handling (give them to the binary it runs
//! instead), and what it writes goes to a folder of its own (a temporary one),
//! never to a fixed path another module might use.
//!
//! proptest keeps the regressions of a module `NAME.rs` of this crate in
//! `tests/proptest-regressions/NAME.txt` (its default for a crate whose root is a
//! `main.rs`).

mod common;

mod app_summary;
mod app_versions;
mod background;
mod bad_input;
mod batches;
mod cli;
mod client_properties;
mod compare;
mod credit;
mod daemon_outages;
mod drift;
mod fuzz;
mod gpu_client;
mod idle_daemons;
mod import_hosts;
mod last_request;
mod layering;
mod outsafe;
mod pandas_outputs;
mod plot_cli;
mod population;
mod progress;
mod properties;
mod report_chromium;
mod scheduler_capacity;
mod science;
mod scripted_features;
mod several_apps;
mod slurm;
mod spec_examples;
mod sweep;
mod sweep_cases;
mod sweep_racing;
mod transfer_outputs;
mod true_size;
mod volunteer_patterns;
