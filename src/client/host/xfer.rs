//! One host's file transfers (spec client §8): which files its jobs need and make,
//! when each transfer may start, what a failure costs, and the job states they
//! drive (§8.1). The bytes themselves move over links the world shares between
//! hosts; the host reaches them through [`ServerLink::xfer_start`] and
//! [`ServerLink::xfer_stop`], and hears that a transfer ended through
//! [`ClientHost::xfer_finished`] and [`ClientHost::xfer_failed`].
//!
//! A host of a run without files has no transfer state (`ClientHost::xfer` is `None`)
//! and every function here returns at once.
//!
//! BOINC's client keeps one `PERS_FILE_XFER` per file that must move
//! (`client/pers_file_xfer.cpp`) and starts them from `CLIENT_STATE::start_new_file_xfer`
//! (`client/cs_files.cpp`); this module keeps the same per-file state: bytes done,
//! `first_request_time`, `next_request_time`, `nretry`, and one `FILE_XFER_BACKOFF` per
//! project and direction (`client/client_types.cpp`).

use super::{ClientHost, TaskState, TransferFlag};
use crate::client::config::ClientConfig;
use crate::client::files::{FilesPlan, XferTimes};
use crate::engine::Time;
use crate::engine::rng::{SimRng, stream};
use crate::server::types::db_time;
use crate::server::types::*;
use crate::streams::StreamKind;
use rand::RngExt;

use super::ServerLink;

/// `max_file_xfers` (`lib/cc_config.cpp`): transfers at once in each direction (§8.2).
pub const MAX_FILE_XFERS: usize = 8;
/// `max_file_xfers_per_project`: transfers at once per project and direction (§8.2).
pub const MAX_FILE_XFERS_PER_PROJECT: usize = 2;
/// `PERS_RETRY_DELAY_MIN` and `PERS_RETRY_DELAY_MAX`, seconds (§8.3).
pub const PERS_RETRY_DELAY_MIN: f64 = 120.0;
pub const PERS_RETRY_DELAY_MAX: f64 = 21_600.0;
/// `file_xfer_giveup_period`: 90 days (§8.3).
pub const FILE_XFER_GIVEUP_PERIOD: Time = 90 * 86_400;
/// `FILE_XFER_FAILURE_LIMIT`: transient failures in a row before the project's
/// transfers in that direction back off (§8.3).
pub const FILE_XFER_FAILURE_LIMIT: u32 = 3;
/// `WF_UPLOAD_DEFER_INTERVAL`, seconds (§8.4).
pub const WF_UPLOAD_DEFER_INTERVAL: Time = 300;
/// `ERR_RESULT_DOWNLOAD` and `ERR_RESULT_UPLOAD` (`lib/error_numbers.h`): the exit
/// status of a job whose file could not be moved (`CLIENT_STATE::report_result_error`).
pub const ERR_RESULT_DOWNLOAD: i32 = -186;
pub const ERR_RESULT_UPLOAD: i32 = -187;
/// BOINC's client-side result states (`lib/common_defs.h`, spec client §8.1) that the
/// server's `client_state` codes do not name.
pub const RESULT_FILES_DOWNLOADING: u8 = 1;
pub const RESULT_FILES_UPLOADING: u8 = 4;
pub const RESULT_UPLOAD_FAILED: u8 = 7;

/// A transfer's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Server to host: input files.
    Down = 0,
    /// Host to server: output files.
    Up = 1,
}

/// What a file is: a job's own input, a sticky input shared by an app's workunits
/// (app, file number), or a job's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileFor {
    Input(ResultId),
    Sticky(u16, u32),
    Output(ResultId),
}

/// One file to move (`PERS_FILE_XFER`, spec client §8.3).
#[derive(Clone, Debug)]
struct PersFile {
    /// The project's slot in the host's list.
    slot: u16,
    dir: Dir,
    what: FileFor,
    size: f64,
    /// Bytes on the other side already: a transfer resumes where it stopped.
    done: f64,
    /// The world's flow while the file is moving.
    flow: Option<u32>,
    /// When the current transfer started (`FILE_XFER::start_time`).
    xfer_start: Time,
    first_request_time: Time,
    next_request_time: Time,
    nretry: u32,
}

impl PersFile {
    /// A file of project slot `slot` to move in direction `dir`, first asked for at
    /// `now`, nothing of it moved yet.
    fn new(slot: u16, dir: Dir, what: FileFor, size: f64, now: Time) -> Self {
        PersFile {
            slot,
            dir,
            what,
            size,
            done: 0.0,
            flow: None,
            xfer_start: now,
            first_request_time: now,
            next_request_time: now,
            nretry: 0,
        }
    }
}

/// What one job's transfer record costs (the memory budget of a job in flight in a
/// run with files, `crate::memory_budget`).
#[cfg(test)]
pub(crate) const JOB_FILES_BYTES: usize = std::mem::size_of::<JobFiles>();

/// The files of one of the host's jobs and when they moved: one per job a host
/// holds in a run with files, so kept small (64 bytes).
#[derive(Clone, Debug)]
struct JobFiles {
    result_id: ResultId,
    slot: u16,
    /// Its own input file is not on the host yet.
    input_pending: bool,
    /// The job waits in FILES_DOWNLOADING.
    waiting: bool,
    /// The sticky file it needs (app, number), if any.
    sticky: Option<(u16, u32)>,
    times: JobTimes,
}

/// [`XferTimes`] in whole seconds as `u32` (`NONE`: the phase did not happen): a
/// run is far shorter than 136 years.
#[derive(Clone, Copy, Debug)]
struct JobTimes {
    /// received, download start and end, completed, upload start and end.
    at: [u32; 6],
    /// Bytes downloaded and uploaded.
    bytes: [f64; 2],
}

const NONE: u32 = u32::MAX;
const RECEIVED: usize = 0;
const DOWNLOAD_START: usize = 1;
const DOWNLOAD_END: usize = 2;
const COMPLETED: usize = 3;
const UPLOAD_START: usize = 4;
const UPLOAD_END: usize = 5;

impl JobTimes {
    fn new(received: Time) -> Self {
        let mut at = [NONE; 6];
        at[RECEIVED] = received.clamp(0, NONE as Time - 1) as u32;
        JobTimes {
            at,
            bytes: [0.0; 2],
        }
    }
    fn set(&mut self, k: usize, now: Time) {
        self.at[k] = now.clamp(0, NONE as Time - 1) as u32;
    }
    /// Sets phase `k` only if it has not happened yet.
    fn first(&mut self, k: usize, now: Time) {
        if self.at[k] == NONE {
            self.set(k, now);
        }
    }
    fn get(&self, k: usize) -> Option<Time> {
        (self.at[k] != NONE).then_some(self.at[k] as Time)
    }
    /// The times as the outputs read them.
    fn times(&self) -> XferTimes {
        XferTimes {
            received: self.at[RECEIVED] as Time,
            download_start: self.get(DOWNLOAD_START),
            download_end: self.get(DOWNLOAD_END),
            completed: self.get(COMPLETED),
            upload_start: self.get(UPLOAD_START),
            upload_end: self.get(UPLOAD_END),
            download_bytes: self.bytes[0],
            upload_bytes: self.bytes[1],
        }
    }
}

/// `FILE_XFER_BACKOFF` of one project, per direction (§8.3).
#[derive(Clone, Copy, Debug, Default)]
struct ProjXfer {
    failures: [u32; 2],
    next_xfer_time: [Time; 2],
}

/// A host's transfer state (spec client §8), kept behind one pointer: a host of a run
/// without files carries none.
#[derive(Clone, Debug)]
pub struct HostXfer {
    /// The host's link in each direction, bytes/s, after the user's
    /// `max_bytes_sec_*` limits (`f64::INFINITY`: unlimited), shared by its
    /// transfers in that direction.
    pub cap: [f64; 2],
    files: Vec<PersFile>,
    jobs: Vec<JobFiles>,
    /// Sticky files on the host: (slot, app, number).
    sticky: Vec<(u16, u16, u32)>,
    proj: Vec<ProjXfer>,
    /// The retry draws' own stream, so that transfers shift no other draw.
    rng: SimRng,
    /// Transfers that ended, by outcome, for the host's figures.
    pub finished: [u64; 2],
    pub transient_failures: [u64; 2],
    pub permanent_failures: [u64; 2],
}

/// Project slot `slot`'s job `r` among `jobs`, if it is in `state`.
fn job_in(
    jobs: &mut [super::ClientJob],
    slot: u16,
    r: ResultId,
    state: TaskState,
) -> Option<&mut super::ClientJob> {
    jobs.iter_mut()
        .find(|j| j.project == slot && j.result_id == r && j.state == state)
}

/// Pushes `v` onto `list`, growing it by a quarter rather than doubling: a host's
/// lists hover around their peak, and doubling left a third of their memory unused
/// (as for the host's jobs, `ClientHost::receive`).
fn push_small<T>(list: &mut Vec<T>, v: T) {
    if list.len() == list.capacity() {
        list.reserve_exact((list.len() / 4).max(2));
    }
    list.push(v);
}

impl HostXfer {
    /// A host's transfer state with links `cap` (bytes/s per direction) for `projects`
    /// project slots; its retry draws come from stream `(seed, HostXfer, index)`.
    pub fn new(cap: [f64; 2], projects: usize, seed: u64, index: u32) -> Self {
        HostXfer {
            cap,
            files: Vec::new(),
            jobs: Vec::new(),
            sticky: Vec::new(),
            proj: vec![ProjXfer::default(); projects],
            rng: stream(seed, StreamKind::HostXfer, index as u64),
            finished: [0; 2],
            transient_failures: [0; 2],
            permanent_failures: [0; 2],
        }
    }

    /// Stops every transfer in progress at `now`, keeping the bytes each moved: it
    /// resumes from there (spec client §8.2).
    fn stop_all<S: ServerLink + ?Sized>(&mut self, now: Time, server: &mut S) {
        for f in self.files.iter_mut() {
            if let Some(flow) = f.flow.take() {
                f.done = (f.size - server.xfer_stop(now, flow)).max(f.done);
            }
        }
    }

    /// The transfer record of project slot `slot`'s job `r`.
    fn job(&mut self, slot: u16, r: ResultId) -> Option<&mut JobFiles> {
        self.jobs
            .iter_mut()
            .find(|jf| jf.slot == slot && jf.result_id == r)
    }

    /// Transfers in progress in direction `dir`, and those of project slot `slot`.
    fn active(&self, dir: Dir, slot: u16) -> (usize, usize) {
        let mut n = (0, 0);
        for f in self
            .files
            .iter()
            .filter(|f| f.flow.is_some() && f.dir == dir)
        {
            n.0 += 1;
            n.1 += (f.slot == slot) as usize;
        }
        n
    }
}

/// The size of a file drawn from its own stream `(seed, kind, project · 2^40 + id)`,
/// 0 for a negative draw: every replica of a workunit has the same input, whoever
/// downloads it, and a result's output does not depend on its host's other draws.
fn file_size(
    files: &FilesPlan,
    kind: StreamKind,
    project: u16,
    id: u32,
    d: &crate::base::dist::Dist,
) -> f64 {
    if d.always_zero() {
        return 0.0;
    }
    let mut rng = stream(files.seed, kind, ((project as u64) << 40) | id as u64);
    d.sample(&mut rng).max(0.0)
}

/// `calculate_exponential_backoff(n, MIN, MAX)` (`client/client_state.cpp`):
/// `min(MAX, MIN · 2^n) · U(0.5, 1)`.
fn exponential_backoff(n: u32, u: f64) -> f64 {
    let x = (PERS_RETRY_DELAY_MIN * 2f64.powi(n.min(64) as i32)).min(PERS_RETRY_DELAY_MAX);
    x * (0.5 + 0.5 * u)
}

impl ClientHost {
    /// Whether the host can move files now: on and connected (spec client §8.2).
    fn can_transfer(&self) -> bool {
        self.avail.connected()
    }

    /// A job the host just received (the last of [`ClientHost::jobs`]) from project
    /// slot `pi`: its files are listed, and if any input is not on the host yet the
    /// job waits in FILES_DOWNLOADING (spec client §8.1).
    pub(crate) fn xfer_receive(&mut self, pi: usize, now: Time, files: &FilesPlan) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let Some(j) = self.jobs.last_mut() else {
            return;
        };
        let project = self.projects[pi].project;
        let Some(Some(pf)) = files.projects.get(project as usize) else {
            return;
        };
        let app_index = self.app_versions[j.app_version as usize].app;
        let app = pf.app(app_index as usize);
        let wu = j.workunit_id.0;
        let input = file_size(files, StreamKind::WuFiles, project, wu, &app.input);
        let sticky = (app.sticky_files > 0 && app.sticky_bytes > 0.0)
            .then(|| (app_index, wu % app.sticky_files));
        let slot = pi as u16;
        let mut times = JobTimes::new(now);
        let new_file = |what, size| PersFile::new(slot, Dir::Down, what, size, now);
        if input > 0.0 {
            push_small(&mut x.files, new_file(FileFor::Input(j.result_id), input));
            times.bytes[0] += input;
        }
        let mut waits = input > 0.0;
        if let Some((a, k)) = sticky
            && !x.sticky.contains(&(slot, a, k))
        {
            waits = true;
            let what = FileFor::Sticky(a, k);
            if !x.files.iter().any(|f| f.slot == slot && f.what == what) {
                push_small(&mut x.files, new_file(what, app.sticky_bytes));
                times.bytes[0] += app.sticky_bytes;
            }
        }
        if waits {
            j.state = TaskState::Downloading;
            j.client_state = RESULT_FILES_DOWNLOADING;
        }
        push_small(
            &mut x.jobs,
            JobFiles {
                result_id: j.result_id,
                slot,
                input_pending: input > 0.0,
                waiting: waits,
                sticky,
                times,
            },
        );
    }

    /// Job `k` just finished computing at `now` (spec client §8.1): if it succeeded
    /// and has an output file, it waits in FILES_UPLOADING until the file is on the
    /// server. Returns true if it does.
    pub(crate) fn xfer_computed(&mut self, k: usize, now: Time, files: &FilesPlan) -> bool {
        let Some(x) = self.xfer.as_deref_mut() else {
            return false;
        };
        let j = &mut self.jobs[k];
        let slot = j.project;
        let Some(jf) = x.job(slot, j.result_id) else {
            return false;
        };
        jf.times.set(COMPLETED, now);
        if j.exit_status != 0 || i32::from(j.client_state) != client_state::FILES_UPLOADED {
            return false;
        }
        let project = self.projects[slot as usize].project;
        let Some(Some(pf)) = files.projects.get(project as usize) else {
            return false;
        };
        let app = pf.app(self.app_versions[j.app_version as usize].app as usize);
        let size = file_size(
            files,
            StreamKind::ResultFiles,
            project,
            j.result_id.0,
            &app.output,
        );
        if size <= 0.0 {
            return false;
        }
        jf.times.bytes[1] = size;
        let what = FileFor::Output(j.result_id);
        push_small(&mut x.files, PersFile::new(slot, Dir::Up, what, size, now));
        j.state = TaskState::Uploading;
        j.client_state = RESULT_FILES_UPLOADING;
        true
    }

    /// The transfer step of a host event, after its policy ran (spec client §8.2):
    /// files no job needs any more are dropped; a host that is off or disconnected
    /// stops its transfers where they are (they resume later); otherwise waiting
    /// transfers start, in list order, while the limits allow and their retry time
    /// and their project's backoff have passed. A start refused because the data
    /// server is down is a transient failure. Then the policy's flags are refreshed.
    pub(crate) fn xfer_poll<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        cfg: &ClientConfig,
        server: &mut S,
    ) {
        if self.xfer.is_none() {
            return;
        }
        let connected = self.can_transfer();
        let host = self.index;
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        // Files that end in this step, by ascending index: given up for good
        // (false), or with every byte moved before their transfer was stopped, at
        // the very second it would have ended (true).
        let mut ends: smallvec::SmallVec<[(usize, bool); 8]> = smallvec::SmallVec::new();
        if !connected {
            x.stop_all(now, server);
        } else {
            for i in 0..x.files.len() {
                let f = &x.files[i];
                let (dir, slot) = (f.dir, f.slot);
                let project = self.projects[slot as usize].project;
                let ready = f.flow.is_none()
                    && f.next_request_time <= now
                    && x.proj[slot as usize].next_xfer_time[dir as usize] <= now;
                if f.flow.is_none() && f.size - f.done <= 0.0 {
                    ends.push((i, true));
                } else if ready {
                    let (all, mine) = x.active(dir, slot);
                    if all < MAX_FILE_XFERS && mine < MAX_FILE_XFERS_PER_PROJECT {
                        let left = f.size - f.done;
                        let cap = x.cap[dir as usize];
                        match server.xfer_start(now, project, dir, host, cap, left) {
                            Some(flow) => {
                                let f = &mut x.files[i];
                                f.flow = Some(flow);
                                f.xfer_start = now;
                                let what = f.what;
                                note_start(x, slot, what, now);
                            }
                            None => {
                                if transient_failure(x, i, now, cfg) {
                                    ends.push((i, false));
                                }
                            }
                        }
                    }
                }
            }
        }
        // Highest index first, so that the lower indices stay valid.
        for &(i, ok) in ends.iter().rev() {
            if ok {
                self.xfer_file_done(i, now);
            } else {
                self.xfer_give_up(i, now);
            }
        }
        self.xfer_flags(now, cfg);
    }

    /// The host leaves for good at `now`: its transfers stop.
    pub fn xfer_leave<S: ServerLink + ?Sized>(&mut self, now: Time, server: &mut S) {
        if let Some(x) = self.xfer.as_deref_mut() {
            x.stop_all(now, server);
        }
    }

    /// Drops the files no job needs any more (their job was reported, aborted or
    /// dropped), stopping their transfers, and the records of jobs gone. Jobs leave
    /// or are aborted only in a scheduler RPC, so [`ClientHost::rpc`] calls this after
    /// each one.
    pub(crate) fn xfer_collect<S: ServerLink + ?Sized>(&mut self, now: Time, server: &mut S) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let jobs = &self.jobs;
        let state_of = |slot: u16, rid: ResultId| {
            jobs.iter()
                .find(|j| j.project == slot && j.result_id == rid)
                .map(|j| j.state)
        };
        x.jobs
            .retain(|jf| state_of(jf.slot, jf.result_id).is_some());
        let mut k = 0;
        while k < x.files.len() {
            let f = &x.files[k];
            let keep = match f.what {
                FileFor::Input(r) => state_of(f.slot, r) == Some(TaskState::Downloading),
                FileFor::Output(r) => state_of(f.slot, r) == Some(TaskState::Uploading),
                FileFor::Sticky(..) => true,
            };
            if keep {
                k += 1;
            } else {
                if let Some(flow) = x.files[k].flow {
                    server.xfer_stop(now, flow);
                }
                x.files.remove(k);
            }
        }
    }

    /// The transfer `flow` of this host ended at `now` with every byte moved (spec
    /// client §8.1, §8.3): the file is there; a job whose inputs are all on the host
    /// becomes runnable (FILES_DOWNLOADED), a job whose output is on the server may be
    /// reported (FILES_UPLOADED). A success resets its project's failure count in
    /// that direction (`FILE_XFER_BACKOFF::file_xfer_succeeded`).
    pub fn xfer_finished(&mut self, now: Time, flow: u32) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let Some(i) = x.files.iter().position(|f| f.flow == Some(flow)) else {
            return;
        };
        self.xfer_file_done(i, now);
    }

    /// File `i` is wholly on the other side at `now` ([`Self::xfer_finished`]).
    fn xfer_file_done(&mut self, i: usize, now: Time) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let f = x.files.remove(i);
        let d = f.dir as usize;
        x.finished[d] += 1;
        let p = &mut x.proj[f.slot as usize];
        p.failures[d] = 0;
        p.next_xfer_time[d] = 0;
        match f.what {
            FileFor::Input(r) => {
                if let Some(jf) = x.job(f.slot, r) {
                    jf.input_pending = false;
                }
            }
            FileFor::Sticky(a, k) => push_small(&mut x.sticky, (f.slot, a, k)),
            FileFor::Output(r) => {
                // `CLIENT_STATE::update_results`: ready to report, completed now, and
                // the work-fetch backoff of its resource cleared.
                if let Some(j) = job_in(&mut self.jobs, f.slot, r, TaskState::Uploading) {
                    j.state = TaskState::Done;
                    j.client_state = client_state::FILES_UPLOADED as u8;
                    j.completed_time = db_time(now);
                    let p = &mut self.projects[f.slot as usize];
                    let rsc = self.app_versions[j.app_version as usize].proc_type.index();
                    p.modern.backoff_time[rsc] = 0.0;
                    p.modern.backoff_interval[rsc] = 0.0;
                }
                if let Some(jf) = x.job(f.slot, r) {
                    jf.times.set(UPLOAD_END, now);
                }
                // "project finished uploading": a work-fetch check.
                if !(x.files.iter()).any(|g| g.slot == f.slot && g.dir == Dir::Up) {
                    self.modern.must_check_work_fetch = true;
                    self.modern.request_poll_at = f64::INFINITY;
                }
                return;
            }
        }
        // Jobs of the project whose inputs are now all here.
        for jf in x
            .jobs
            .iter_mut()
            .filter(|jf| jf.waiting && jf.slot == f.slot && !jf.input_pending)
        {
            if jf
                .sticky
                .is_some_and(|(a, k)| !x.sticky.contains(&(f.slot, a, k)))
            {
                continue;
            }
            if let Some(j) = job_in(&mut self.jobs, f.slot, jf.result_id, TaskState::Downloading) {
                j.state = TaskState::Unstarted;
                j.client_state = 2; // RESULT_FILES_DOWNLOADED
                jf.times.set(DOWNLOAD_END, now);
                self.modern.must_schedule_cpus = true; // "files downloaded"
            }
            jf.waiting = false;
        }
    }

    /// The transfer `flow` of this host was cut at `now` by its data server going
    /// down, `left` bytes short: a transient failure (spec client §8.3); the bytes
    /// moved stay moved.
    pub fn xfer_failed(&mut self, now: Time, flow: u32, left: f64, cfg: &ClientConfig) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let Some(i) = x.files.iter().position(|f| f.flow == Some(flow)) else {
            return;
        };
        let f = &mut x.files[i];
        f.flow = None;
        f.done = (f.size - left).max(f.done);
        if transient_failure(x, i, now, cfg) {
            self.xfer_give_up(i, now);
        }
    }

    /// File `i` failed for good (spec client §8.1, §8.3): a download fails every job
    /// waiting for it, reported in FILES_DOWNLOADING with `ERR_RESULT_DOWNLOAD`; an
    /// upload fails its job, reported as `RESULT_UPLOAD_FAILED` with
    /// `ERR_RESULT_UPLOAD` (`CLIENT_STATE::report_result_error`). The CPU time spent
    /// is wasted.
    fn xfer_give_up(&mut self, i: usize, now: Time) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let f = x.files.remove(i);
        x.permanent_failures[f.dir as usize] += 1;
        let fail = |j: &mut super::ClientJob, cs: u8, es: i32| {
            j.state = TaskState::Done;
            j.completed_time = db_time(now);
            j.client_state = cs;
            j.exit_status = es;
            j.output_correct = None;
        };
        match f.what {
            FileFor::Output(r) => {
                if let Some(j) = job_in(&mut self.jobs, f.slot, r, TaskState::Uploading) {
                    fail(j, RESULT_UPLOAD_FAILED, ERR_RESULT_UPLOAD);
                }
            }
            FileFor::Input(_) | FileFor::Sticky(..) => {
                for jf in x.jobs.iter().filter(|jf| jf.slot == f.slot) {
                    let needs = match f.what {
                        FileFor::Input(r) => jf.result_id == r,
                        FileFor::Sticky(a, k) => jf.sticky == Some((a, k)),
                        FileFor::Output(_) => false,
                    };
                    if !needs {
                        continue;
                    }
                    let state = TaskState::Downloading;
                    if let Some(j) = job_in(&mut self.jobs, f.slot, jf.result_id, state) {
                        fail(j, RESULT_FILES_DOWNLOADING, ERR_RESULT_DOWNLOAD);
                    }
                }
            }
        }
    }

    /// Forgets the jobs of project slot `pi` without reporting them: the client was
    /// detached and its jobs dropped (their files are collected at the next step).
    pub(crate) fn xfer_forget(&mut self, pi: usize) {
        if let Some(x) = self.xfer.as_deref_mut() {
            x.jobs.retain(|jf| jf.slot as usize != pi);
        }
    }

    /// The transfer times of project slot `pi`'s jobs that the reply just
    /// acknowledged (they left [`ClientHost::jobs`]), handed to the server side for
    /// the outputs, and forgotten.
    pub(crate) fn xfer_reported<S: ServerLink + ?Sized>(&mut self, pi: usize, server: &mut S) {
        let Some(x) = self.xfer.as_deref_mut() else {
            return;
        };
        let project = self.projects[pi].project;
        let jobs = &self.jobs;
        x.jobs.retain(|jf| {
            let here = jf.slot as usize != pi
                || jobs
                    .iter()
                    .any(|j| j.project == jf.slot && j.result_id == jf.result_id);
            if !here {
                server.xfer_report(project, jf.result_id, &jf.times.times());
            }
            here
        });
    }

    /// Refreshes each project's transfer flags that the modern client's work fetch
    /// and reporting read at `now` (spec client §8.4): a download stalled (the
    /// project's download backoff running, or a download waiting for its retry
    /// time), too many uploads (more than `2 · max(usable CPUs, largest GPU count)`
    /// results in FILES_UPLOADING), and actively uploading (an upload started less
    /// than `WF_UPLOAD_DEFER_INTERVAL` ago).
    pub(crate) fn xfer_flags(&mut self, now: Time, cfg: &ClientConfig) {
        let Some(x) = self.xfer.as_deref() else {
            return;
        };
        // The seed policy (the 2003 client) has none of these gates.
        if cfg.policy != crate::client::config::Policy::ModernRec {
            return;
        }
        if x.files.is_empty() {
            // Nothing moves or waits: only a download backoff can stall.
            for (p, px) in self.projects.iter_mut().zip(&x.proj) {
                p.modern
                    .transfer
                    .set(TransferFlag::DownloadStalled, px.next_xfer_time[0] > now);
                p.modern.transfer.set(TransferFlag::TooManyUploads, false);
                p.modern
                    .transfer
                    .set(TransferFlag::ActivelyUploading, false);
            }
            return;
        }
        let gpus = self.coprocs.iter().map(|c| c.count).max().unwrap_or(0);
        let limit = 2 * (self.usable_cpus(cfg) as usize).max(gpus as usize);
        for (pi, p) in self.projects.iter_mut().enumerate() {
            let slot = pi as u16;
            let stalled = x.proj[pi].next_xfer_time[0] > now
                || (x.files.iter()).any(|f| {
                    f.slot == slot
                        && f.dir == Dir::Down
                        && f.flow.is_none()
                        && f.next_request_time > now
                });
            p.modern
                .transfer
                .set(TransferFlag::DownloadStalled, stalled);
            let uploading = (self.jobs.iter())
                .filter(|j| j.project == slot && j.state == TaskState::Uploading)
                .count();
            p.modern
                .transfer
                .set(TransferFlag::TooManyUploads, uploading > limit);
            let active = (x.files.iter()).any(|f| {
                f.slot == slot
                    && f.dir == Dir::Up
                    && f.flow.is_some()
                    && now - f.xfer_start <= WF_UPLOAD_DEFER_INTERVAL
            });
            p.modern
                .transfer
                .set(TransferFlag::ActivelyUploading, active);
        }
    }

    /// The next time a transfer rule changes on its own (spec client §8.2–8.4): a
    /// waiting file's retry time or its project's backoff ending, or an upload
    /// ceasing to be recent. `Time::MAX` when none, or when the host cannot move
    /// files (the availability change that lets it wakes the host).
    pub(crate) fn xfer_next_wake(&self, now: Time) -> Time {
        let Some(x) = self.xfer.as_deref() else {
            return Time::MAX;
        };
        if !self.can_transfer() {
            return Time::MAX;
        }
        let mut next = Time::MAX;
        for f in &x.files {
            let t = match f.flow {
                None => f
                    .next_request_time
                    .max(x.proj[f.slot as usize].next_xfer_time[f.dir as usize]),
                Some(_) if f.dir == Dir::Up => f.xfer_start + WF_UPLOAD_DEFER_INTERVAL + 1,
                Some(_) => continue,
            };
            if t > now {
                next = next.min(t);
            }
        }
        next
    }

    /// The first broken transfer invariant of the host, if any (spec client §8,
    /// checked after every host event under `--check-invariants`): more than
    /// [`MAX_FILE_XFERS`] transfers in a direction or [`MAX_FILE_XFERS_PER_PROJECT`]
    /// of one project, a file with more bytes moved than it has, or a job running,
    /// or uploaded and ready to report, with a file of its own still to move.
    pub(crate) fn xfer_violation(&self) -> Option<String> {
        let x = self.xfer.as_deref()?;
        for dir in [Dir::Down, Dir::Up] {
            for slot in 0..self.projects.len() as u16 {
                let (all, mine) = x.active(dir, slot);
                if all > MAX_FILE_XFERS || mine > MAX_FILE_XFERS_PER_PROJECT {
                    return Some(format!(
                        "host {}: {all} {dir:?} transfers at once, {mine} of project slot {slot}; expected at most {MAX_FILE_XFERS} and {MAX_FILE_XFERS_PER_PROJECT}",
                        self.index
                    ));
                }
            }
        }
        for f in &x.files {
            if f.done > f.size * (1.0 + 1e-9) || f.done < 0.0 {
                return Some(format!(
                    "host {}: a file of {} bytes has {} bytes moved",
                    self.index, f.size, f.done
                ));
            }
        }
        for j in &self.jobs {
            let waiting = (x.files.iter()).any(|f| {
                f.slot == j.project
                    && match f.what {
                        FileFor::Input(r) => r == j.result_id,
                        FileFor::Output(r) => r == j.result_id,
                        FileFor::Sticky(a, k) => (x.jobs.iter()).any(|jf| {
                            jf.slot == j.project
                                && jf.result_id == j.result_id
                                && jf.sticky == Some((a, k))
                        }),
                    }
            });
            let bad = match j.state {
                TaskState::Running | TaskState::Suspended | TaskState::Quit => waiting,
                TaskState::Done => {
                    waiting && i32::from(j.client_state) == client_state::FILES_UPLOADED
                }
                _ => false,
            };
            if bad {
                return Some(format!(
                    "host {}: result {} is {:?} with a file still to move",
                    self.index, j.result_id.0, j.state
                ));
            }
        }
        None
    }
}

/// One project's transfer state as a scripted expectation reads it (spec client
/// §8.2–8.3): transfers in progress, failures in a row and backoff end by direction,
/// and the earliest retry time of a waiting file (0 for none).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct XferView {
    pub active: [i64; 2],
    pub failures: [i64; 2],
    pub backoff: [i64; 2],
    pub next_retry: i64,
}

impl ClientHost {
    /// Project slot `pi`'s transfer state at `now` ([`XferView`]).
    pub fn xfer_view(&self, pi: usize, now: Time) -> XferView {
        let Some(x) = self.xfer.as_deref() else {
            return XferView::default();
        };
        let mut v = XferView::default();
        for d in [Dir::Down, Dir::Up] {
            v.active[d as usize] = x.active(d, pi as u16).1 as i64;
            v.failures[d as usize] = x.proj[pi].failures[d as usize] as i64;
            v.backoff[d as usize] = x.proj[pi].next_xfer_time[d as usize];
        }
        v.next_retry = (x.files.iter())
            .filter(|f| {
                f.slot as usize == pi
                    && f.flow.is_none()
                    && f.nretry > 0
                    && f.next_request_time > now
            })
            .map(|f| f.next_request_time)
            .min()
            .unwrap_or(0);
        v
    }
}

/// Marks the first start of a job's transfer in its times.
fn note_start(x: &mut HostXfer, slot: u16, what: FileFor, now: Time) {
    match what {
        FileFor::Input(r) => {
            if let Some(jf) = x.job(slot, r) {
                jf.times.first(DOWNLOAD_START, now);
            }
        }
        FileFor::Sticky(a, k) => {
            for jf in x
                .jobs
                .iter_mut()
                .filter(|jf| jf.slot == slot && jf.sticky == Some((a, k)))
            {
                jf.times.first(DOWNLOAD_START, now);
            }
        }
        FileFor::Output(r) => {
            if let Some(jf) = x.job(slot, r) {
                jf.times.first(UPLOAD_START, now);
            }
        }
    }
}

/// A transient failure of file `i` at `now` (spec client §8.3,
/// `PERS_FILE_XFER::transient_failure` and `do_backoff`): past the 90-day give-up
/// period it becomes permanent (returns true: the caller gives the file up);
/// otherwise the file waits `calculate_exponential_backoff(nretry, 120, 21600)` after
/// one more retry, and its project's direction counts one failure more unless its
/// backoff is running, backing off for `calculate_exponential_backoff(failures, 120,
/// 21600)` from the third in a row (`FILE_XFER_BACKOFF::file_xfer_failed`).
fn transient_failure(x: &mut HostXfer, i: usize, now: Time, cfg: &ClientConfig) -> bool {
    let d = x.files[i].dir as usize;
    x.transient_failures[d] += 1;
    if now - x.files[i].first_request_time > FILE_XFER_GIVEUP_PERIOD {
        return true;
    }
    let draw = |rng: &mut SimRng| cfg.pin_u.unwrap_or_else(|| rng.random());
    let f = &mut x.files[i];
    f.nretry += 1;
    let u = draw(&mut x.rng);
    x.files[i].next_request_time = now + exponential_backoff(x.files[i].nretry, u).ceil() as Time;
    let slot = x.files[i].slot as usize;
    let p = &mut x.proj[slot];
    if p.next_xfer_time[d] <= now {
        p.failures[d] += 1;
        if p.failures[d] >= FILE_XFER_FAILURE_LIMIT {
            let u = draw(&mut x.rng);
            let p = &mut x.proj[slot];
            p.next_xfer_time[d] = now + exponential_backoff(p.failures[d], u).ceil() as Time;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::config::{ClientConfig, ClientSection, Policy};
    use crate::client::files::{AppFiles, ProjectFiles};
    use crate::client::host::job::test_job;

    /// A data server reached through [`ServerLink`]: each transfer gets a flow id
    /// and is remembered with its bytes; `down` refuses every start.
    #[derive(Default)]
    struct Server {
        down: bool,
        started: Vec<(u32, Dir, f64)>,
        stopped: Vec<u32>,
        reported: Vec<(ResultId, XferTimes)>,
        left: f64,
    }

    impl ServerLink for Server {
        type Error = std::convert::Infallible;
        fn rpc(
            &mut self,
            _now: Time,
            _req: crate::server::scheduler::Request,
        ) -> Result<crate::client::host::Sent, Self::Error> {
            unreachable!("no RPC in these tests")
        }
        fn master_fetch(&mut self, _now: Time, _project: u16) -> bool {
            true
        }
        fn xfer_start(
            &mut self,
            _now: Time,
            _p: u16,
            dir: Dir,
            _h: u32,
            _cap: f64,
            bytes: f64,
        ) -> Option<u32> {
            if self.down {
                return None;
            }
            let id = self.started.len() as u32;
            self.started.push((id, dir, bytes));
            Some(id)
        }
        fn xfer_stop(&mut self, _now: Time, flow: u32) -> f64 {
            self.stopped.push(flow);
            self.left
        }
        fn xfer_report(&mut self, _p: u16, r: ResultId, t: &XferTimes) {
            self.reported.push((r, *t));
        }
    }

    fn files(input: f64, output: f64, sticky: u32) -> FilesPlan {
        FilesPlan {
            projects: vec![Some(ProjectFiles {
                apps: vec![AppFiles {
                    input: crate::base::dist::Dist::fixed(input),
                    output: crate::base::dist::Dist::fixed(output),
                    sticky_files: sticky,
                    sticky_bytes: if sticky > 0 { 1e6 } else { 0.0 },
                }],
                server: Default::default(),
            })],
            seed: 1,
        }
    }

    fn cfg() -> ClientConfig {
        let mut c = ClientConfig::resolve(&ClientSection::default(), Some(Policy::ModernRec));
        c.pin_u = Some(0.0);
        c
    }

    /// A 1-CPU host with transfer state and `n` jobs of workunits 1..=n received at 0.
    fn host(n: u32, f: &FilesPlan) -> ClientHost {
        let mut h = ClientHost::for_test(1, 1e9, &[100.0]);
        h.xfer = Some(Box::new(HostXfer::new([1e6, 1e6], 1, 1, 0)));
        for k in 1..=n {
            let job = test_job(k, 1, 86_400);
            h.receive(0, &job, 0, Policy::ModernRec);
            h.xfer_receive(0, 0, f);
        }
        h
    }

    fn states(h: &ClientHost) -> Vec<u8> {
        h.jobs.iter().map(|j| j.client_state).collect()
    }

    /// §8.3: the per-file retry is min(21600, 120·2^n)·U(0.5, 1), the project backs
    /// off from the third failure in a row, and failures during that backoff do not
    /// count.
    #[test]
    fn retries_and_the_project_backoff() {
        assert_eq!(exponential_backoff(1, 0.0), 120.0);
        assert_eq!(exponential_backoff(1, 1.0), 240.0);
        assert_eq!(exponential_backoff(10, 0.0), 10_800.0);
        let f = files(1e6, 0.0, 0);
        let mut h = host(2, &f);
        let mut s = Server {
            down: true,
            ..Default::default()
        };
        let c = cfg();
        h.xfer_poll(0, &c, &mut s);
        // Two files, both refused: two failures in a row, each file retries at 120.
        let v = h.xfer_view(0, 0);
        assert_eq!((v.failures[0], v.backoff[0], v.next_retry), (2, 0, 120));
        assert!(h.projects[0].modern.transfer[TransferFlag::DownloadStalled]);
        h.xfer_poll(120, &c, &mut s);
        // The first file fails a third time: backoff min(21600, 960)·0.5 = 480 from
        // now, and its own retry 240 later. The second file is not even tried
        // inside the backoff (`FILE_XFER_BACKOFF::ok_to_transfer`).
        let v = h.xfer_view(0, 120);
        assert_eq!((v.failures[0], v.backoff[0], v.next_retry), (3, 600, 360));
        assert_eq!(h.xfer.as_ref().unwrap().transient_failures, [3, 0]);
        // During the backoff nothing starts, even past the files' retry times.
        s.down = false;
        h.xfer_poll(400, &c, &mut s);
        assert!(s.started.is_empty());
        h.xfer_poll(600, &c, &mut s);
        assert_eq!(s.started.len(), 2);
        assert_eq!(states(&h), [RESULT_FILES_DOWNLOADING; 2]);
        // A success resets the project's count.
        h.xfer_finished(610, 0);
        let v = h.xfer_view(0, 610);
        assert_eq!((v.failures[0], v.backoff[0]), (0, 0));
        assert_eq!(states(&h), [2, RESULT_FILES_DOWNLOADING]);
        assert_eq!(h.jobs[0].state, TaskState::Unstarted);
        assert!(h.modern.must_schedule_cpus);
    }

    /// §8.2: at most 2 transfers per project and direction start; a host that
    /// disconnects stops them with their bytes kept, and resumes them where they
    /// stopped.
    #[test]
    fn limits_and_resume() {
        let f = files(4e6, 0.0, 0);
        let mut h = host(3, &f);
        let c = cfg();
        let mut s = Server::default();
        h.xfer_poll(0, &c, &mut s);
        assert_eq!(s.started.len(), 2);
        assert_eq!(h.xfer_view(0, 0).active, [2, 0]);
        h.avail.set_connected(false);
        s.left = 1e6;
        h.xfer_poll(10, &c, &mut s);
        assert_eq!(s.stopped, [0, 1]);
        assert_eq!(h.xfer_view(0, 10).active, [0, 0]);
        h.avail.set_connected(true);
        h.xfer_poll(20, &c, &mut s);
        // The two resume with the 1e6 bytes they had left; no failure counted.
        assert_eq!(&s.started[2..], [(2, Dir::Down, 1e6), (3, Dir::Down, 1e6)]);
        assert_eq!(h.xfer.as_ref().unwrap().transient_failures, [0, 0]);
        assert!(h.xfer_violation().is_none());
    }

    /// A sticky file is downloaded once for every job that needs it, and kept: a
    /// later job of the same sticky file needs only its own input (§8.1).
    #[test]
    fn a_sticky_file_moves_once() {
        // Workunits 1 and 3 share sticky file 1 (id mod 2); workunit 2 needs file 0.
        let f = files(0.0, 0.0, 2);
        let mut h = host(3, &f);
        let c = cfg();
        let mut s = Server::default();
        h.xfer_poll(0, &c, &mut s);
        assert_eq!(s.started.len(), 2, "two sticky files, not three");
        h.xfer_finished(5, 0); // sticky file 1: jobs 1 and 3 are runnable
        assert_eq!(states(&h), [2, RESULT_FILES_DOWNLOADING, 2]);
        h.xfer_finished(6, 1);
        assert_eq!(states(&h), [2, 2, 2]);
    }

    /// §8.1, §8.3: an output waits in FILES_UPLOADING and is reported only once on
    /// the server; a download that keeps failing past 90 days fails its job as a
    /// client error in FILES_DOWNLOADING with ERR_RESULT_DOWNLOAD.
    #[test]
    fn uploads_and_giving_up() {
        let f = files(1e6, 2e6, 0);
        let mut h = host(2, &f);
        let c = cfg();
        let mut s = Server::default();
        h.xfer_poll(0, &c, &mut s);
        h.xfer_finished(1, 0);
        // Job 1 computes and succeeds: its output must go up first.
        h.jobs[0].state = TaskState::Running;
        h.jobs[0].flops_left = 0.0;
        h.truth.error_prob = 0.0;
        h.truth.wrong_result_prob = 0.0;
        let behaviour = crate::client::host::HostBehaviour {
            files: Some(std::sync::Arc::new(f.clone())),
            ..Default::default()
        };
        h.finish_tasks(1001, &behaviour, |_, _| {});
        assert_eq!(h.jobs[0].state, TaskState::Uploading);
        assert!(!h.jobs[0].ready_to_report());
        h.xfer_poll(1001, &c, &mut s);
        assert_eq!(s.started.last(), Some(&(2, Dir::Up, 2e6)));
        h.xfer_flags(1001, &c);
        assert!(h.projects[0].modern.transfer[TransferFlag::ActivelyUploading]);
        h.xfer_finished(1003, 2);
        assert!(h.jobs[0].ready_to_report());
        assert_eq!(h.jobs[0].completed_time, 1003);
        // Job 2's download: stopped, then refused for 90 days and a second.
        s.left = 5e5;
        h.avail.set_connected(false);
        h.xfer_poll(1004, &c, &mut s);
        h.avail.set_connected(true);
        s.down = true;
        h.xfer_poll(FILE_XFER_GIVEUP_PERIOD + 1, &c, &mut s);
        assert_eq!(h.jobs[1].state, TaskState::Done);
        assert_eq!(h.jobs[1].client_state, RESULT_FILES_DOWNLOADING);
        assert_eq!(h.jobs[1].exit_status, ERR_RESULT_DOWNLOAD);
        assert_eq!(h.xfer.as_ref().unwrap().permanent_failures, [1, 0]);
        // Reported: both jobs leave and their times go to the server side.
        h.jobs.clear();
        h.xfer_reported(0, &mut s);
        let t = s.reported[0].1;
        assert_eq!(
            (
                t.download_start,
                t.download_end,
                t.completed,
                t.upload_start,
                t.upload_end
            ),
            (Some(0), Some(1), Some(1001), Some(1001), Some(1003))
        );
        assert_eq!(t.wait(), 1.0 + 2.0);
        assert_eq!(s.reported[1].1.download_end, None);
    }

    /// §8.4: more results uploading than twice the usable CPUs stop work fetch.
    #[test]
    fn too_many_uploads() {
        let f = files(0.0, 1e6, 0);
        let mut h = host(3, &f);
        let c = cfg();
        h.truth.error_prob = 0.0;
        h.truth.wrong_result_prob = 0.0;
        for j in &mut h.jobs {
            j.state = TaskState::Running;
            j.flops_left = 0.0;
        }
        let behaviour = crate::client::host::HostBehaviour {
            files: Some(std::sync::Arc::new(f.clone())),
            ..Default::default()
        };
        assert_eq!(h.finish_tasks(10, &behaviour, |_, _| {}), 3);
        h.xfer_flags(10, &c);
        assert!(
            h.projects[0].modern.transfer[TransferFlag::TooManyUploads],
            "3 > 2·1"
        );
        let mut s = Server::default();
        h.xfer_poll(10, &c, &mut s);
        h.xfer_finished(12, 0);
        h.xfer_flags(12, &c);
        assert!(
            !h.projects[0].modern.transfer[TransferFlag::TooManyUploads],
            "2 is not more than 2"
        );
        assert!(h.projects[0].modern.transfer[TransferFlag::ActivelyUploading]);
        // Uploads started more than WF_UPLOAD_DEFER_INTERVAL ago are not recent.
        h.xfer_flags(10 + WF_UPLOAD_DEFER_INTERVAL + 1, &c);
        assert!(!h.projects[0].modern.transfer[TransferFlag::ActivelyUploading]);
    }
}
