//! boinc-sim: a discrete-event simulator of BOINC volunteer-computing projects.
//!
//! A virtual-clock event queue ([`engine`]) drives simulated volunteer hosts
//! ([`client`]) against faithful models of BOINC's server daemons ([`server`]), as
//! described by a TOML [`scenario`]; [`world`] owns them all and dispatches events.

pub mod engine;
pub mod scenario;
pub mod server;
