//! boinc-sim: a discrete-event simulator of BOINC volunteer-computing projects.
//!
//! A virtual-clock event queue ([`engine`]) drives simulated volunteer hosts
//! ([`client`]) against faithful models of BOINC's server daemons ([`server`]), as
//! described by a TOML [`scenario`]. [`world`] owns them all and dispatches events;
//! [`stats`] records the run and writes the run folder, and [`plot`] draws it.
//!
//! Module map, from the bottom up:
//! - [`engine`]: clock, event queue, seeded random streams; nothing of BOINC.
//! - [`streams`]: which random stream each part of the simulation draws from.
//! - [`server`]: the in-memory BOINC database and one module per daemon
//!   (spec backend §2).
//! - [`client`]: host models behind the scheduler request/reply interface.
//! - [`scenario`]: scenario files, validation with precise errors, expectations.
//! - [`world`]: runs the projects and hosts of a scenario, telling a
//!   [`world::Recorder`] what happens, and hands back its final state.
//! - [`stats`]: the recorder of a run (tallies, time series, the row tables) and the
//!   files made from the final state.
//! - [`plot`]: charts (PNG, SVG) and the HTML report of a run folder.
//! - [`compare`]: puts run folders side by side (`boinc-sim compare`).
//! - [`sweep`]: runs a scenario over a grid of parameters (`boinc-sim sweep`).
//! - [`cli`]: the `boinc-sim` command line; [`progress`] its progress bar.
//!
//! Roughly, a module names only modules listed before it. ARCHITECTURE.md ("The layers") is the
//! one statement of which module may name which, folder by folder; the layering
//! test (`tests/integration/layering/`) reads it and fails on an import against it.

pub mod base;
pub mod cli;
pub mod client;
pub mod compare;
pub mod credit;
pub mod engine;
pub mod hugepages;
#[cfg(test)]
mod memory_budget;
pub mod plot;
pub mod progress;
pub mod scenario;
pub mod server;
pub mod stats;
pub mod streams;
pub mod sweep;
pub mod world;
