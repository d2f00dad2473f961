//! The discrete-event engine: a virtual clock in whole seconds, a deterministic event
//! queue, and named random-number streams.
//!
//! The engine knows nothing about BOINC. It orders opaque events by
//! `(time, tie class, sequence number)`, so that two runs of the same scenario pop the
//! same events in the same order (spec backend §2.0, "recommended tie order").

pub mod flow;
pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub(crate) use time::Time;
