//! Simulated time.
//!
//! BOINC's database keeps every time as an `int` of Unix seconds, and every daemon rule
//! compares such integers (spec backend, "Conventions"). The simulator does the same:
//! time is a whole number of seconds since the start of the run. A signed type keeps
//! expressions such as `now - 1 + grace` (spec backend §2.4.5) free of underflow traps.

/// A point in simulated time, in whole seconds since the start of the run.
pub type Time = i64;

/// BOINC's "never" (`INT_MAX`), used for `transition_time` (spec backend, "Conventions").
pub(crate) const INT_MAX: Time = 2_147_483_647;

/// A time as a row stores it: BOINC's `int` (spec backend, "Conventions"). Rows
/// keep the times they only record in this type, 4 bytes instead of 8, to cut the
/// memory per job in flight; a run never reaches `INT_MAX`, because
/// `simulation.duration` is validated below it.
pub(crate) type DbTime = i32;

/// `t` as a row stores it. Within a run `t` is in `0..=INT_MAX`, so nothing is lost;
/// beyond that it saturates rather than wrap.
pub(crate) fn db_time(t: Time) -> DbTime {
    t.clamp(DbTime::MIN.into(), INT_MAX) as DbTime
}

pub(crate) use crate::base::units::{DAY, SECONDS_PER_DAY, format_duration};
