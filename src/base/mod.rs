//! The leaf of the crate: values every layer shares and that know nothing of the
//! simulation. Durations in whole seconds ([`units`]), probability distributions
//! ([`dist`]), a stable content hash ([`hash`]) and software
//! prefetch ([`prefetch`]).
//!
//! Nothing here imports another module of the crate (`tests/integration/layering.rs` checks it),
//! so the server, the client and the scenario loader can all use it without
//! depending on one another.

pub mod dist;
pub mod hash;
pub mod prefetch;
pub mod units;
