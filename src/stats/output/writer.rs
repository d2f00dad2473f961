//! The writer thread: it owns a run's table files and writes them while the run goes
//! on, so that the formatting of the two large tables, the disk, and the gzip
//! encoder of a compressed audit trail work on the other core
//! (docs/performance.md, "Writing the outputs").
//!
//! The run hands it batches over one bounded channel, which keeps their order, so
//! the bytes are the same whatever the threads' timing: the rows of `workunits.csv`
//! and `results.csv` as records, which the thread formats ([`super::records`]), and
//! the audit trail's as bytes formatted on the run's thread ([`Table`]). Emptied
//! buffers come back for reuse. The thread starts each file's writeback as it grows
//! ([`Writeback`]), and its first error reaches the run at its next batch or when
//! it stops the thread.

use super::format::{BATCH_BYTES, ROW_SLACK, Table};
use super::records::{Formatter, Records};
use crate::stats::writeback::Writeback;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Batches queued for the writer thread at most: when the disk falls behind, the run
/// waits for it instead of piling rows up in memory.
const BATCHES_IN_FLIGHT: usize = 4;

/// The writer thread's files, by index: the two tables it formats itself, then the
/// audit trail when it is on.
const WORKUNITS_FILE: usize = 0;
const RESULTS_FILE: usize = 1;
pub(super) const TRANSITIONS_FILE: usize = 2;

/// The gzip encoder is fed in pieces of this size: the compressed bytes depend on
/// how the text is cut, and this is how the csv crate's 8 KiB buffer fed it when
/// the tables were written through it, so a compressed audit trail stays the same
/// file byte for byte. (The csv writer cut a piece short only to keep a doubled
/// quote whole, and no field of the audit trail holds a quote, see
/// [`push_str_field`](super::format::push_str_field).)
const GZIP_PIECE: usize = 8 << 10;

/// Where a table's bytes go: a buffered file, or a gzip stream into one.
pub(super) enum Sink {
    Plain(BufWriter<File>),
    Gzip {
        encoder: flate2::write::GzEncoder<BufWriter<File>>,
        /// The start of the next [`GZIP_PIECE`], not yet complete.
        piece: Vec<u8>,
    },
}

impl Sink {
    /// Opens `path`, written gzip-compressed when `gzip` (default compression level:
    /// a good ratio on repetitive CSV at a small cost in time).
    pub(super) fn create(path: &Path, gzip: bool) -> io::Result<Self> {
        let file = BufWriter::with_capacity(BATCH_BYTES, File::create(path)?);
        Ok(if gzip {
            Sink::Gzip {
                encoder: flate2::write::GzEncoder::new(file, flate2::Compression::default()),
                piece: Vec::with_capacity(GZIP_PIECE),
            }
        } else {
            Sink::Plain(file)
        })
    }

    /// Appends `bytes`, to the gzip encoder in whole [`GZIP_PIECE`]s.
    fn write_rows(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        let (encoder, piece) = match self {
            Sink::Plain(w) => return w.write_all(bytes),
            Sink::Gzip { encoder, piece } => (encoder, piece),
        };
        if !piece.is_empty() {
            let n = (GZIP_PIECE - piece.len()).min(bytes.len());
            piece.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if piece.len() < GZIP_PIECE {
                return Ok(());
            }
            encoder.write_all(piece)?;
            piece.clear();
        }
        let mut pieces = bytes.chunks_exact(GZIP_PIECE);
        for p in &mut pieces {
            encoder.write_all(p)?;
        }
        piece.extend_from_slice(pieces.remainder());
        Ok(())
    }

    /// The file the bytes go to.
    fn file(&self) -> &File {
        match self {
            Sink::Plain(w) => w.get_ref(),
            Sink::Gzip { encoder, .. } => encoder.get_ref().get_ref(),
        }
    }

    /// Ends the stream (the last piece, a flush and the gzip trailer, as the csv
    /// writer's own end left them) and syncs the file to disk.
    fn close(self) -> io::Result<()> {
        let buffered = match self {
            Sink::Plain(w) => w,
            Sink::Gzip { mut encoder, piece } => {
                encoder.write_all(&piece)?;
                encoder.flush()?;
                encoder.finish()?
            }
        };
        buffered
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()
    }
}

/// What the run hands to the writer thread.
enum Batch {
    /// Rows to append to file `file`, whole.
    Rows { file: usize, bytes: Vec<u8> },
    /// Rows of `workunits.csv` and `results.csv`, for the thread to format.
    Records(Records),
    /// The name of the project records give as `index` (sent before them).
    Project { index: u16, name: String },
    /// `results.csv`'s header, with the transfer columns or not (sent before its
    /// first row).
    ResultsHeader { files: bool },
    /// Every row is handed over: end the files (the gzip trailer) and sync them.
    Close,
}

/// The run's end of the writer thread (the module doc): the channel its batches go
/// over, the buffers that come back, and the thread to join.
pub(super) struct Writer {
    /// `None` once the thread is told to stop.
    batches: Option<SyncSender<Batch>>,
    spare: Receiver<Vec<u8>>,
    spare_records: Receiver<Records>,
    /// `None` once joined.
    thread: Option<JoinHandle<io::Result<()>>>,
    /// The thread was joined after it closed every file without an error.
    closed: bool,
}

impl Writer {
    pub(super) fn spawn(sinks: Vec<Sink>) -> io::Result<Self> {
        let (batches, received) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let (give_back, spare) = mpsc::channel();
        let (give_back_records, spare_records) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("output writer".into())
            .spawn(move || write_batches(sinks, received, give_back, give_back_records))?;
        Ok(Self {
            batches: Some(batches),
            spare,
            spare_records,
            thread: Some(thread),
            closed: false,
        })
    }

    /// Hands `table`'s rows to the thread and gives the table an empty buffer. A
    /// write the thread failed is reported here, at the next batch after it, as the
    /// error it met.
    pub(super) fn send(&mut self, table: &mut Table) -> io::Result<()> {
        let empty = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_BYTES + ROW_SLACK));
        let bytes = std::mem::replace(&mut table.buf, empty);
        self.post(Batch::Rows {
            file: table.file,
            bytes,
        })
    }

    /// Hands the records to the thread, leaving `records` empty (a batch the thread
    /// gave back, if any).
    pub(super) fn send_records(&mut self, records: &mut Records) -> io::Result<()> {
        let empty = self
            .spare_records
            .try_recv()
            .unwrap_or_else(|_| Records::new());
        let batch = std::mem::replace(records, empty);
        self.post(Batch::Records(batch))
    }

    /// Tells the thread the name of the project records give as `index`, before
    /// the first of them.
    pub(super) fn name_project(&mut self, index: u16, name: String) -> io::Result<()> {
        self.post(Batch::Project { index, name })
    }

    /// Has the thread write `results.csv`'s header, with the transfer columns when
    /// `files`, before the first row.
    pub(super) fn results_header(&mut self, files: bool) -> io::Result<()> {
        self.post(Batch::ResultsHeader { files })
    }

    /// Sends one message to the thread. A write the thread failed is reported here,
    /// as the error it met.
    fn post(&mut self, batch: Batch) -> io::Result<()> {
        let Some(batches) = &self.batches else {
            return Err(writer_stopped());
        };
        match batches.send(batch) {
            Ok(()) => Ok(()),
            // The thread ended, which it does before the end only on an error.
            Err(_) => Err(self.stop(false).err().unwrap_or_else(writer_stopped)),
        }
    }

    /// Tells the thread that every batch is sent: it closes and syncs the files
    /// while the run goes on with other work; [`Self::stop`] then waits for it.
    pub(super) fn close(&mut self) {
        if let Some(batches) = self.batches.take() {
            // A thread already ended on an error tells it when joined.
            let _ = batches.send(Batch::Close);
        }
    }

    /// Stops the thread and waits for it: with `close`, after it wrote every batch
    /// sent and closed and synced the files; without, the files are left unsynced
    /// (a run that gave up). Returns the first error the thread met.
    pub(super) fn stop(&mut self, close: bool) -> io::Result<()> {
        if close {
            self.close();
        }
        self.batches = None;
        match self.thread.take() {
            Some(thread) => {
                let result = thread.join().unwrap_or_else(|_| Err(writer_stopped()));
                self.closed = close && result.is_ok();
                result
            }
            None if close && self.closed => Ok(()),
            None => Err(writer_stopped()),
        }
    }

    /// The thread has been joined ([`Self::stop`]).
    pub(super) fn joined(&self) -> bool {
        self.thread.is_none()
    }
}

/// The writer thread starts a file's writeback to disk after each this many bytes
/// written to it ([`Writeback`]), so that the disk writes go on during the run and
/// the sync before the folder is moved into place finds little left to write (the
/// run's own thread would wait for it).
const SYNC_BYTES: usize = 8 << 20;

/// The error of a write after the writer thread has already stopped.
fn writer_stopped() -> io::Error {
    io::Error::other("the output writer has stopped (the tables were ended, or a write failed)")
}

/// The run's writer thread, or the error a write gets when there is none
/// ([`RunOutput`](super::RunOutput)'s is `None` only while its files are being
/// opened).
pub(super) fn running(writer: &mut Option<Writer>) -> io::Result<&mut Writer> {
    writer.as_mut().ok_or_else(writer_stopped)
}

/// One of the writer thread's files, and how much of it is not yet on its way to
/// the disk.
struct OutFile {
    sink: Sink,
    /// Bytes written since its writeback was last started.
    unsynced: usize,
    writeback: Writeback,
}

impl OutFile {
    fn new(sink: Sink) -> Self {
        Self {
            sink,
            unsynced: 0,
            writeback: Writeback::default(),
        }
    }

    /// Appends `bytes`, and starts the file's writeback every [`SYNC_BYTES`].
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sink.write_rows(bytes)?;
        self.unsynced += bytes.len();
        if self.unsynced >= SYNC_BYTES {
            self.unsynced = 0;
            self.writeback.advance(self.sink.file())?;
        }
        Ok(())
    }
}

/// Writes out `table`'s rows to its file among `files`, and empties it.
fn put_table(files: &mut [OutFile], table: &mut Table) -> io::Result<()> {
    files[table.file].put(&table.buf)?;
    table.buf.clear();
    Ok(())
}

/// The writer thread: formats the records of `workunits.csv` and `results.csv`
/// ([`Formatter`]), appends each batch to its file, gives the emptied buffers back,
/// and on [`Batch::Close`] closes the files. It stops at the first error, which the
/// run gets at its next batch or when it stops the thread.
fn write_batches(
    sinks: Vec<Sink>,
    batches: Receiver<Batch>,
    give_back: mpsc::Sender<Vec<u8>>,
    give_back_records: mpsc::Sender<Records>,
) -> io::Result<()> {
    let mut out: Vec<OutFile> = sinks.into_iter().map(OutFile::new).collect();
    let mut tables = Formatter::new(WORKUNITS_FILE, RESULTS_FILE);
    for batch in batches {
        match batch {
            Batch::Rows { file, mut bytes } => {
                out[file].put(&bytes)?;
                bytes.clear();
                // The run may be gone already; the buffer is then simply freed.
                let _ = give_back.send(bytes);
            }
            Batch::Records(mut records) => {
                tables.format(&mut records, |t| put_table(&mut out, t))?;
                let _ = give_back_records.send(records);
            }
            Batch::Project { index, name } => tables.add_project(index, name),
            Batch::ResultsHeader { files } => tables.results_header(files),
            Batch::Close => {
                put_table(&mut out, &mut tables.workunits)?;
                put_table(&mut out, &mut tables.results)?;
                for f in out {
                    f.sink.close()?;
                }
                return Ok(());
            }
        }
    }
    // The run gave up: its folder is removed, the files need no sync.
    Ok(())
}

/// A file every write to fails with "no space left on device", for the tests of a
/// failed write (here and in [`super::folder`]).
#[cfg(all(test, target_os = "linux"))]
pub(super) fn full_sink() -> Sink {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    Sink::Plain(BufWriter::with_capacity(BATCH_BYTES, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file the writer thread cannot write: the error reaches the run at a later
    /// batch, or when the thread is stopped, as the operating system's error, and
    /// the thread is joined (no panic).
    #[test]
    #[cfg(target_os = "linux")]
    fn a_write_error_on_the_writer_thread_comes_back_as_the_error() {
        let full = full_sink;
        // A full batch goes to the file at once and fails there.
        let mut w = Writer::spawn(vec![full(), full()]).unwrap();
        let mut t = Table::new(0);
        let err = (0..100)
            .find_map(|_| {
                t.buf.resize(BATCH_BYTES + 1, b'x');
                w.send(&mut t).err()
            })
            .expect("the error comes back");
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
        assert!(w.thread.is_none(), "joined");
        assert_eq!(
            w.send(&mut t).unwrap_err().to_string(),
            "the output writer has stopped (the tables were ended, or a write failed)"
        );
        // A small batch waits in the file's buffer: the error comes at the close.
        let mut w = Writer::spawn(vec![full(), full()]).unwrap();
        t.buf.clear();
        t.buf.extend_from_slice(b"a,b\n");
        w.send(&mut t).unwrap();
        assert_eq!(w.stop(true).unwrap_err().raw_os_error(), Some(28));
    }
}
