//! Simulated time.
//!
//! BOINC's database keeps every time as an `int` of Unix seconds, and every daemon rule
//! compares such integers (spec backend, "Conventions"). The simulator does the same:
//! time is a whole number of seconds since the start of the run. A signed type keeps
//! expressions such as `now - 1 + grace` (spec backend §2.4.5) free of underflow traps.

/// A point in simulated time, in whole seconds since the start of the run.
pub type Time = i64;

pub(crate) use crate::base::units::{DAY, SECONDS_PER_DAY, format_duration};
