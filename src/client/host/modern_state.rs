//! What the modern REC policy keeps and no other part of the client reads (spec
//! client §2–3, §8.4): per project, recent estimated credit and the scheduling
//! priority derived from it, the round-robin simulation's outputs, the work-fetch
//! backoff of each processor type and the flags work fetch reads; per host, the
//! cadences of CPU scheduling and of the RPC poll.
//!
//! The modern policy (`client::modern`) owns these fields: only it reads them. They
//! are defined here, below the host, because the host holds them
//! ([`ProjectState::modern`](super::ProjectState::modern),
//! [`ClientHost::modern`](super::ClientHost::modern)) and the host names no policy
//! (ARCHITECTURE.md, "The layers"). Some are written by the mechanics the host
//! shares, where the real client's event happens: a task's instance-seconds as it
//! runs (`secs_this_rec_interval`), a finished job (`request_if_idle_and_uploading`),
//! a reply's `no_rsc_apps`, an upload that ends a resource's backoff and forces a
//! work-fetch check, downloaded inputs that force a reschedule, and the transfer
//! flags. The seed policy never reads what they write.

use crate::server::resource::N_RSC;
use std::marker::PhantomData;

/// The modern client's own per-project state (`PROJECT`, `RSC_PROJECT_WORK_FETCH`
/// and `PROJECT_WORK_FETCH` of `client/project.h` and `client/work_fetch.h`).
#[derive(Clone, Debug, Default)]
pub struct ModernProject {
    // --- REC and scheduling priority (§2.3–2.4) ---
    /// Recent estimated credit, in credit per day (§2.3).
    pub rec: f64,
    /// When `rec` was last updated (`update_average`'s `avg_time`).
    pub rec_time: f64,
    /// Scratch copy of `rec` while building run lists (`adjust_rec_sched`).
    pub rec_temp: f64,
    /// Instance-seconds of CPU since the start of the REC interval.
    pub secs_this_rec_interval: f64,
    /// `compute_sched_priority`'s value, higher runs and fetches first (§2.4).
    pub sched_priority: f64,
    // --- RR simulation outputs (§2.5 step 5) ---
    pub deadlines_missed: u32,
    pub deadlines_missed_copy: u32,
    pub nused_total: f64,
    pub n_runnable_jobs: u32,
    // --- work fetch (§2.6–2.7) ---
    /// The last reply's `no_rsc_apps`: the project has no app version for that
    /// processor type, so work fetch never asks it for that type (spec client §2.6).
    pub no_rsc_apps: RscFlags,
    /// Whether the last request that asked for each processor type got no jobs of
    /// it (by BOINC's number; `PROJECT::sched_req_no_work[i]`, spec client §2.6): a
    /// better project so marked does not keep a piggy-backed request from asking
    /// for that type.
    pub sched_req_no_work: RscFlags,
    /// What transfers tell work fetch and reporting ([`TransferFlag`], spec client
    /// §8.4), refreshed by the host's transfer step; all clear without files, and
    /// under the seed policy, which has none of these gates.
    pub transfer: TransferFlags,
    /// The work-fetch backoff of each processor type, by BOINC's number (the
    /// CPU's at [`CPU`](crate::server::resource::CPU); spec client §2.7,
    /// `RSC_PROJECT_WORK_FETCH::backoff_interval`): its current length, and when it
    /// ends (0: none).
    pub backoff_interval: [f64; N_RSC],
    pub backoff_time: [f64; N_RSC],
}

/// The modern client's own per-host state: the cadences of CPU scheduling and of the
/// RPC poll (spec client §2.9, §3.1), and the start of the REC interval (§2.3).
#[derive(Clone, Debug)]
pub struct ModernHost {
    /// The last gated check of the RPC poll (`last_work_fetch_time`, spec client §2.9
    /// step 5): the 60-s work-fetch grid runs from it. Not read while
    /// `must_check_work_fetch` is set, since the pending check comes first.
    pub last_work_fetch_check: f64,
    /// A work-fetch check is requested (`request_work_fetch`): the next gated check
    /// runs at the next poll, whatever the grid says.
    pub must_check_work_fetch: bool,
    /// While `must_check_work_fetch` is set, the poll that will use the request up,
    /// as the modern policy knew it at the end of its last event: there
    /// `scheduler_rpc_poll` clears the flag and makes it the last check (§2.9 step
    /// 5); `f64::INFINITY`: raised since (a finished upload), so the host's next event
    /// is the first poll that may use it. Not read while the flag is clear.
    ///
    /// It once shared one field with `last_work_fetch_check`, each meaning read only
    /// in one state of the flag. Apart, each time is what its name says, at 16
    /// bytes a host: the 8 of the field, rounded up to the host's 16-byte alignment
    /// (448 → 464 bytes, a host with one project 1,056 bytes of its 1,100,
    /// `src/memory_budget.rs`).
    pub request_poll_at: f64,
    /// The RPC poll does not act before this time: the last scheduler operation plus
    /// `SCHEDULER_RPC_POLL_PERIOD` (spec client §2.1, §2.9).
    pub next_rpc_poll: f64,
    pub last_schedule: f64,
    pub must_schedule_cpus: bool,
    pub rec_interval_start: f64,
}

impl ModernHost {
    /// A client that starts at `joined`: nothing scheduled or checked yet, so its
    /// first event schedules CPUs and checks work fetch at once (the client's
    /// start-up, spec client §5.2).
    pub fn starting(joined: f64) -> Self {
        ModernHost {
            last_work_fetch_check: f64::NEG_INFINITY,
            must_check_work_fetch: true,
            request_poll_at: f64::INFINITY,
            next_rpc_poll: 0.0,
            last_schedule: f64::NEG_INFINITY,
            must_schedule_cpus: true,
            rec_interval_start: joined,
        }
    }
}

/// Flags of one project, one bit each in one byte, indexed by `K`: read as an array
/// (`flags[k]`), set with [`Flags::set`]. Four `bool`s or two `[bool; N_RSC]` of
/// [`ModernProject`] took 4 and 8 bytes; as bits they take 1 and 2, which keeps the
/// project slot at 296 bytes with both policies' parts, a 304-byte block of the
/// allocator instead of 320 for a one-project host (16 MB at a million hosts).
pub struct Flags<K>(u8, PhantomData<K>);

/// What indexes [`Flags`]: each index its own bit of the byte.
pub trait FlagIndex: Copy {
    fn bit(self) -> u8;
}

/// The flags of the processor types, by BOINC's number.
pub type RscFlags = Flags<usize>;

/// The transfer flags (spec client §8.4) and `request_if_idle_and_uploading`.
pub type TransferFlags = Flags<TransferFlag>;

impl FlagIndex for usize {
    /// Processor type `self` (`self < N_RSC`, as an array index); out of range, a
    /// panic, as an array's.
    #[inline]
    fn bit(self) -> u8 {
        assert!(self < N_RSC, "processor type {self}");
        1 << self
    }
}

/// What transfers tell the modern client's work fetch and reporting about a project
/// (spec client §8.4; `compute_project_reason`, `find_project_with_overdue_results`,
/// `CLIENT_STATE::scheduler_rpc_poll`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferFlag {
    /// A download backoff is running, or a download waits for its retry time
    /// (`PROJECT::some_download_stalled`): no work fetch.
    DownloadStalled,
    /// More than `2 · max(usable CPUs, largest GPU count)` results in
    /// FILES_UPLOADING (`PROJECT::too_many_uploading_results`): no work fetch.
    TooManyUploads,
    /// An upload started less than `WF_UPLOAD_DEFER_INTERVAL` ago: no work-fetch
    /// RPC unless for idle instances, and no RPC just to report.
    ActivelyUploading,
    /// A job of the project finished since its last reply: work fetch may ask it
    /// for idle instances although it is uploading (`request_if_idle_and_uploading`,
    /// set in `CLIENT_STATE::app_finished`).
    RequestIfIdleAndUploading,
}

impl FlagIndex for TransferFlag {
    #[inline]
    fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl<K: FlagIndex> Flags<K> {
    /// Sets flag `k`.
    #[inline]
    pub fn set(&mut self, k: K, on: bool) {
        let bit = k.bit();
        if on {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
    }
}

impl<K: FlagIndex> std::ops::Index<K> for Flags<K> {
    type Output = bool;
    /// Flag `k`.
    #[inline]
    fn index(&self, k: K) -> &bool {
        if self.0 & k.bit() != 0 { &true } else { &false }
    }
}

// By hand rather than derived: a derive would ask the same of `K`, which is only an
// index and never stored.
impl<K> Clone for Flags<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Flags<K> {}

impl<K> Default for Flags<K> {
    fn default() -> Self {
        Flags(0, PhantomData)
    }
}

impl<K> PartialEq for Flags<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K> Eq for Flags<K> {}

impl<K> std::fmt::Debug for Flags<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Flags({:#06b})", self.0)
    }
}

impl From<[bool; N_RSC]> for RscFlags {
    fn from(flags: [bool; N_RSC]) -> Self {
        let mut f = RscFlags::default();
        for (rsc, &on) in flags.iter().enumerate() {
            f.set(rsc, on);
        }
        f
    }
}

impl PartialEq<[bool; N_RSC]> for RscFlags {
    fn eq(&self, other: &[bool; N_RSC]) -> bool {
        *self == RscFlags::from(*other)
    }
}
