//! Simulated time.
//!
//! BOINC's database keeps every time as an `int` of Unix seconds, and every daemon rule
//! compares such integers (spec backend, "Conventions"). The simulator does the same:
//! time is a whole number of seconds since the start of the run. A signed type keeps
//! expressions such as `now - 1 + grace` (spec backend §2.4.5) free of underflow traps.

/// A point in simulated time, in whole seconds since the start of the run.
pub type Time = i64;

/// BOINC's "never" (`INT_MAX`), used for `transition_time` (spec backend, "Conventions").
pub const INT_MAX: Time = 2_147_483_647;

/// A time as a row stores it: BOINC's `int` (spec backend, "Conventions"). Rows
/// keep the times they only record in this type, 4 bytes instead of 8 (issue 12:
/// memory per job in flight); a run never reaches `INT_MAX`, because
/// `simulation.duration` is validated below it.
pub type DbTime = i32;

/// `t` as a row stores it. Within a run `t` is in `0..=INT_MAX`, so nothing is lost;
/// beyond that it saturates rather than wrap.
pub fn db_time(t: Time) -> DbTime {
    t.clamp(DbTime::MIN.into(), INT_MAX) as DbTime
}

/// Seconds in a day, the unit of quotas and credit averages.
pub const DAY: Time = 86_400;

/// Formats a duration in seconds the way scenario files accept it back (`"10d"`,
/// `"6h"`, `"90m"` or plain seconds), choosing the largest exact unit.
pub fn format_duration(secs: i64) -> String {
    if secs != 0 && secs % DAY == 0 {
        format!("{}d", secs / DAY)
    } else if secs != 0 && secs % 3600 == 0 {
        format!("{}h", secs / 3600)
    } else if secs != 0 && secs % 60 == 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_use_the_largest_exact_unit() {
        assert_eq!(format_duration(864_000), "10d");
        assert_eq!(format_duration(21_600), "6h");
        assert_eq!(format_duration(5_400), "90m");
        assert_eq!(format_duration(61), "61");
        assert_eq!(format_duration(0), "0");
    }
}
