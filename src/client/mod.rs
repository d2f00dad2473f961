//! Simulated volunteer hosts. They talk to projects only through the scheduler's
//! [`Request`](crate::server::scheduler::Request) / [`Reply`](crate::server::scheduler::Reply)
//! interface, so host models can change without touching the server.
//!
//! - [`host`]: a host's jobs and per-project client state, its execution model and
//!   the RPC glue both policies share;
//! - [`files`]: file sizes, data servers and host links as configured (spec client §8);
//! - [`estimate`]: the client's runtime estimates and DCF (spec client §1.4, §3.6);
//! - [`seed`]: the seed resource-debt policy (spec client §1);
//! - [`modern`]: the modern REC policy (spec client §2–3);
//! - [`policy`]: runs a host event under its group's policy ([`host::ClientHost::wake`]);
//!   it depends on the host and both policies, each policy on the host, and the host
//!   on neither;
//! - [`availability`]: on/active/connected processes and traces;
//! - [`merit`]: the emulator's figures of merit (spec client §5.7);
//! - [`truth`]: whether an output is right, and how wrong outputs collide;
//! - [`background`]: a host's other projects, answered by the host itself, and its
//!   own preferences.
//!
//! Below the host are [`estimate`] and [`availability`]: they name no host type (the
//! host passes a job's numbers to the estimates, and the time statistics it keeps are
//! the availability's [`TimeStats`](availability::TimeStats)), so the host depends on
//! them and never the reverse.

pub mod availability;
pub mod background;
pub mod config;
pub mod estimate;
pub mod files;
pub mod host;
pub mod merit;
pub mod modern;
pub mod policy;
pub mod scripted;
pub mod seed;
pub mod truth;
