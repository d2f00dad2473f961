//! Files and the network, as configured (spec client §8): each app's input and output
//! file sizes, its sticky files, and each project's data server (a host group's links
//! are resolved in `scenario::plan`, `LinksPlan`).
//! The transfers themselves are the host's ([`super::host`], `xfer.rs`), over links the
//! world shares between hosts ([`crate::engine::flow`]).
//!
//! Everything here is off unless a scenario gives a file size: a world whose
//! [`FilesPlan`] is `None` makes no transfer, draws nothing and writes the same bytes
//! as before files existed.

use crate::base::dist::Dist;
use crate::engine::Time;

/// One app's files (spec client §8.1): the workunit's own input file, the result's
/// output file, and optionally one of `sticky_files` sticky input files shared by
/// the app's workunits (workunit `id` uses sticky file `id mod sticky_files`), which a
/// host downloads once and keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppFiles {
    /// Bytes of a workunit's own input file (0: none), drawn once per workunit.
    pub input: Dist,
    /// Bytes of a result's output file (0: none), drawn once per result.
    pub output: Dist,
    /// Number of sticky input files of the app (0: none).
    pub sticky_files: u32,
    /// Bytes of each sticky file.
    pub sticky_bytes: f64,
}

impl Default for AppFiles {
    fn default() -> Self {
        AppFiles {
            input: Dist::fixed(0.0),
            output: Dist::fixed(0.0),
            sticky_files: 0,
            sticky_bytes: 0.0,
        }
    }
}

/// One project's data server (spec client §8.5): its link's capacity in each
/// direction, bytes/s (`f64::INFINITY`: unlimited), the windows in which it is
/// down, separate from the scheduler's outages, and how many transfers it serves
/// at once.
#[derive(Clone, Debug, PartialEq)]
pub struct DataServer {
    /// Capacity for downloads (server to hosts), bytes/s.
    pub download: f64,
    /// Capacity for uploads (hosts to server), bytes/s.
    pub upload: f64,
    /// `[start, end)` windows in which every transfer fails transiently.
    pub outages: Vec<(Time, Time)>,
    /// Transfers served at once, both directions together (`u32::MAX`: no
    /// limit); one that finds them all taken fails transiently (spec client
    /// §8.5).
    pub max_connections: u32,
}

impl Default for DataServer {
    fn default() -> Self {
        DataServer {
            download: f64::INFINITY,
            upload: f64::INFINITY,
            outages: Vec::new(),
            max_connections: u32::MAX,
        }
    }
}

impl DataServer {
    /// Whether the data server is down at `now`.
    pub fn down_at(&self, now: Time) -> bool {
        self.outages.iter().any(|&(s, e)| s <= now && now < e)
    }

    /// Whether the server limits its connections (`max_connections`).
    pub fn limits_connections(&self) -> bool {
        self.max_connections != u32::MAX
    }
}

/// One project's files: each app's (by `appid − 1`) and its data server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectFiles {
    pub apps: Vec<AppFiles>,
    pub server: DataServer,
}

impl ProjectFiles {
    /// The files of app `app` (`appid − 1`); none for an app not listed.
    pub fn app(&self, app: usize) -> AppFiles {
        self.apps.get(app).copied().unwrap_or_default()
    }
}

/// The files of a run: by world project, `None` for a project without files. Shared
/// by every host group (the sizes of a workunit's files are the project's, not the
/// host's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilesPlan {
    pub projects: Vec<Option<ProjectFiles>>,
    /// The scenario's master seed: a workunit's input size and a result's output
    /// size are drawn from streams of their own ids, so every replica of a workunit
    /// downloads the same bytes whichever host gets it.
    pub seed: u64,
}

/// When one result's files moved, as its host saw it (spec client §8.1), handed to
/// the recorder when the result is reported. Times are the host's event times,
/// whole seconds; `None`: that phase did not happen (no file to move, or the job
/// ended before it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct XferTimes {
    /// When the job arrived on the host (the result's `sent_time`).
    pub received: Time,
    /// First byte of the job's first input download.
    pub download_start: Option<Time>,
    /// The job's last input file on the host: it became runnable
    /// (FILES_DOWNLOADED).
    pub download_end: Option<Time>,
    /// When computing ended (the job's `completed_time`).
    pub completed: Option<Time>,
    /// First byte of its output upload.
    pub upload_start: Option<Time>,
    /// Its output on the server (FILES_UPLOADED): it may be reported.
    pub upload_end: Option<Time>,
    /// Bytes the job downloaded itself (its own input, and a sticky file it was the
    /// first to need), and uploaded.
    pub download_bytes: f64,
    pub upload_bytes: f64,
}

impl XferTimes {
    /// Seconds the job waited for its files: from arrival to runnable, plus from the
    /// end of computing to its output on the server (docs/outputs.md).
    pub fn wait(&self) -> f64 {
        let down = self.download_end.map_or(0, |e| e - self.received);
        let up = match (self.completed, self.upload_end) {
            (Some(c), Some(e)) => e - c,
            _ => 0,
        };
        (down + up) as f64
    }
}
