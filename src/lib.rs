//! boinc-sim: a discrete-event simulator of BOINC volunteer-computing projects.
//!
//! A virtual-clock event queue ([`engine`]) drives simulated volunteer hosts
//! ([`client`]) against faithful models of BOINC's server daemons ([`server`]), as
//! described by a TOML [`scenario`]. [`world`] owns them all and dispatches events;
//! [`stats`] writes the run folder, and [`plot`] draws it.
//!
//! Module map:
//! - [`engine`]: clock, event queue, seeded random streams.
//! - [`server`]: the in-memory BOINC database and one module per daemon
//!   (spec backend §2).
//! - [`client`]: host models behind the scheduler request/reply interface.
//! - [`scenario`]: scenario files, validation with precise errors, expectations.
//! - [`stats`]: output files.
//! - [`plot`]: charts (PNG, SVG) and the HTML report of a run folder.
//! - [`compare`]: puts run folders side by side (`boinc-sim compare`).
//! - [`cli`]: the `boinc-sim` command line; [`progress`] its progress bar.

pub mod cli;
pub mod client;
pub mod compare;
pub mod engine;
pub mod plot;
pub mod progress;
pub mod scenario;
pub mod server;
pub mod stats;
pub mod sweep;
pub mod world;
