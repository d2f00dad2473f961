//! Identifiers and BOINC-numbered enumerations (spec backend §1.1).
//!
//! Every enum keeps BOINC's own numbers (`db/boinc_db_types.h`, `lib/common_defs.h`),
//! including the gap at `RESULT_SERVER_STATE` 3, so that the CSV outputs read the same
//! as a BOINC database dump.

use crate::engine::Time;
use serde::Serialize;

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

/// A database row id: a distinct type per table, so that a workunit id can never be
/// passed where a result id is meant (spec backend §1). It costs nothing at run
/// time: a `u32`, compared and ordered as one.
pub trait RowId: Copy + Eq + Ord + std::hash::Hash + std::fmt::Debug {
    fn from_raw(raw: u32) -> Self;
    fn raw(self) -> u32;
}

impl RowId for u32 {
    fn from_raw(raw: u32) -> Self {
        raw
    }
    fn raw(self) -> u32 {
        self
    }
}

macro_rules! row_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl RowId for $name {
            fn from_raw(raw: u32) -> Self {
                $name(raw)
            }
            fn raw(self) -> u32 {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                i64::from(id.0)
            }
        }
    };
}

row_id!(
    /// Workunit id (1-based, as a database auto-increment; 0: none).
    WuId
);
row_id!(
    /// Result id (1-based; 0: none).
    ResultId
);
row_id!(
    /// Host id in a project's database (1-based; 0: never contacted).
    HostId
);
/// App id within a project (1-based).
pub(crate) type AppId = u32;

macro_rules! boinc_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:expr),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[repr(u8)]
        pub enum $name { $($(#[$vm])* $v = $n),+ }
        impl $name {
            /// BOINC's numeric value.
            pub fn code(self) -> i64 { self as i64 }
            /// The value from BOINC's number, if it is one.
            pub(crate) fn from_code(c: i64) -> Option<Self> {
                match c { $($n => Some(Self::$v),)+ _ => None }
            }
        }
    };
}

boinc_enum!(
    /// `result.server_state`.
    ServerState {
        /// Created but not yet sendable (size classes).
        Inactive = 1,
        Unsent = 2,
        InProgress = 4,
        Over = 5,
    }
);

boinc_enum!(
    /// `result.outcome`, meaningful iff `server_state = OVER`.
    Outcome {
        Init = 0,
        Success = 1,
        CouldntSend = 2,
        ClientError = 3,
        NoReply = 4,
        DidntNeed = 5,
        ValidateError = 6,
        ClientDetached = 7,
    }
);

boinc_enum!(
    /// `result.validate_state`.
    ValidateState {
        Init = 0,
        Valid = 1,
        Invalid = 2,
        NoCheck = 3,
        Inconclusive = 4,
        TooLate = 5,
    }
);

boinc_enum!(
    /// `file_delete_state` of workunits and results.
    FileDeleteState {
        Init = 0,
        Ready = 1,
        Done = 2,
        Error = 3,
    }
);

boinc_enum!(
    /// `workunit.assimilate_state`.
    AssimilateState {
        Init = 0,
        Ready = 1,
        Done = 2,
    }
);

boinc_enum!(
    /// `batch.state` (`html/inc/common_defs.inc`; spec backend §1.5).
    BatchState {
        Init = 0,
        InProgress = 1,
        Complete = 2,
        Aborted = 3,
        Retired = 4,
    }
);

/// `wu.error_mask` bits (spec backend §1.1).
pub mod error_mask {
    pub(crate) const COULDNT_SEND_RESULT: i32 = 1;
    pub(crate) const TOO_MANY_ERROR_RESULTS: i32 = 2;
    pub(crate) const TOO_MANY_SUCCESS_RESULTS: i32 = 4;
    pub(crate) const TOO_MANY_TOTAL_RESULTS: i32 = 8;
    pub(crate) const CANCELLED: i32 = 16;
    pub(crate) const NO_CANONICAL_RESULT: i32 = 32;
}

/// `result.client_state` values the scheduler looks at.
pub mod client_state {
    pub const COMPUTE_ERROR: i32 = 3;
    pub(crate) const FILES_UPLOADED: i32 = 5;
    pub(crate) const ABORTED: i32 = 6;
}

/// Exit statuses with a meaning to the server (spec backend §1.1).
pub mod exit_status {
    pub const EXIT_TIME_LIMIT_EXCEEDED: i32 = 197;
    pub const EXIT_UNSTARTED_LATE: i32 = 200;
    pub(crate) const EXIT_ABORTED_BY_PROJECT: i32 = 202;
    /// User abort via the GUI: counted as "no reply", not as an error.
    pub(crate) const EXIT_ABORTED_VIA_GUI: i32 = 203;
}

/// Who changed a state field; the `actor` column of `transitions.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    WorkGenerator,
    Feeder,
    Scheduler,
    Transitioner,
    Validator,
    Assimilator,
    FileDeleter,
    DbPurge,
    /// The admin `cancel_jobs` tool (spec backend §2.1).
    Cancel,
}

impl Actor {
    pub fn name(self) -> &'static str {
        match self {
            Actor::WorkGenerator => "work_generator",
            Actor::Feeder => "feeder",
            Actor::Scheduler => "scheduler",
            Actor::Transitioner => "transitioner",
            Actor::Validator => "validator",
            Actor::Assimilator => "assimilator",
            Actor::FileDeleter => "file_deleter",
            Actor::DbPurge => "db_purge",
            Actor::Cancel => "cancel",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_keep_boinc_numbers() {
        assert_eq!(ServerState::InProgress.code(), 4);
        assert_eq!(ServerState::from_code(3), None);
        assert_eq!(Outcome::ClientDetached.code(), 7);
        assert_eq!(ValidateState::TooLate.code(), 5);
        assert_eq!(FileDeleteState::Error.code(), 3);
        assert_eq!(AssimilateState::Done.code(), 2);
        assert_eq!(Outcome::from_code(6), Some(Outcome::ValidateError));
    }
}
