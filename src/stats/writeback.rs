//! Getting a long file onto the disk while it is still being written, without
//! waiting for the disk at each step.
//!
//! A run writes its tables as it goes, over a gigabyte in a large run
//! (docs/performance.md, "Measurements behind the code"). Left to
//! itself the kernel keeps that in the page cache until the files are closed, and
//! the sync before the run folder is moved into place then waits seconds for all of
//! it. Syncing every few mebibytes (`sync_data`) spreads the disk's work over the
//! run, but each sync waits for its own writes, and for the file's metadata, on the
//! writer thread; with the formatting of the rows on that thread too, the run's
//! thread would wait behind it.
//!
//! On Linux, [`Writeback::advance`] instead starts the writeback of what was
//! written since its last call (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`, which
//! queues the pages and returns), and waits only for the range it started the call
//! before, which has had a whole step to reach the disk. The dirty pages a file
//! holds stay under two steps, and the final `sync_all` finds at most that left.
//! Elsewhere it falls back to `sync_data`.

use std::fs::File;
use std::io;

/// Where a file's writeback stands: every byte before `waited` is on the disk,
/// those up to `started` are on their way.
#[derive(Debug, Default)]
pub(crate) struct Writeback {
    waited: u64,
    started: u64,
}

impl Writeback {
    /// Starts writing back what `file` holds past the range started before, then
    /// waits for that earlier range to be on the disk.
    pub(crate) fn advance(&mut self, file: &File) -> io::Result<()> {
        let end = file.metadata()?.len();
        if end > self.started {
            os::start(file, self.started, end - self.started)?;
        }
        if self.started > self.waited {
            os::wait(file, self.waited, self.started - self.waited)?;
        }
        self.waited = self.started;
        self.started = end.max(self.started);
        Ok(())
    }
}

#[cfg(target_os = "linux")]
mod os {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    /// Queues the writeback of `len` bytes of `file` from `offset`, without waiting.
    pub(super) fn start(file: &File, offset: u64, len: u64) -> io::Result<()> {
        range(file, offset, len, libc::SYNC_FILE_RANGE_WRITE)
    }

    /// Writes back `len` bytes of `file` from `offset` and waits until they are on
    /// the disk (the pages only: the file's size and the folder reach the disk with
    /// the `sync_all` at its close).
    pub(super) fn wait(file: &File, offset: u64, len: u64) -> io::Result<()> {
        range(
            file,
            offset,
            len,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
        )
    }

    fn range(file: &File, offset: u64, len: u64, flags: libc::c_uint) -> io::Result<()> {
        let too_far = || io::Error::other("file offset out of range for sync_file_range");
        let offset = libc::off64_t::try_from(offset).map_err(|_| too_far())?;
        let len = libc::off64_t::try_from(len).map_err(|_| too_far())?;
        loop {
            // SAFETY: the call only reads its integer arguments; the descriptor is
            // `file`'s, open for the whole call.
            let rc = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, flags) };
            if rc == 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
}

/// Without `sync_file_range`: both steps are one `sync_data` of the whole file.
#[cfg(not(target_os = "linux"))]
mod os {
    use std::fs::File;
    use std::io;

    pub(super) fn start(file: &File, _offset: u64, _len: u64) -> io::Result<()> {
        file.sync_data()
    }

    pub(super) fn wait(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn each_step_starts_the_new_bytes_and_waits_for_the_ones_before() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = File::create(dir.path().join("t")).unwrap();
        let mut w = Writeback::default();
        w.advance(&file).unwrap();
        assert_eq!((w.waited, w.started), (0, 0));
        file.write_all(&[1; 10_000]).unwrap();
        w.advance(&file).unwrap();
        assert_eq!((w.waited, w.started), (0, 10_000));
        file.write_all(&[2; 5_000]).unwrap();
        w.advance(&file).unwrap();
        assert_eq!((w.waited, w.started), (10_000, 15_000));
        w.advance(&file).unwrap();
        assert_eq!((w.waited, w.started), (15_000, 15_000));
    }
}
