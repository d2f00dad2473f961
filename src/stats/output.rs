//! The run folder writer: `workunits.csv`, `results.csv`, `transitions.csv` and
//! `summary.json` (columns and conventions in `docs/outputs.md`).
//!
//! Everything is written into a temporary sibling folder `<final_dir>.tmp-<pid>`.
//! Only [`RunOutput::finish`] moves it into place, after the last byte is written, so
//! a folder named `final_dir` is always the complete output of one successful run: a
//! failed, abandoned or interrupted run removes its temporary folder (or, if killed,
//! leaves only a `.tmp-<pid>` folder that the next run to the same place removes) and
//! never a half-written folder that looks finished.
//!
//! The tables are long CSVs meant for pandas or polars: a header row, `,` separators,
//! `\n` line ends, integers in BOINC's own numbering, floats in Rust's shortest
//! round-trip form with a `.0` kept on whole values (so a column of floats always
//! reads as floats), and an empty field for a missing value.
//!
//! The tables are the largest files of a run (`docs/outputs.md`, "How much disk a run
//! takes"), so writing them must cost little beside the simulation
//! (`docs/performance.md`). A writer thread owns the files (and the gzip encoder of a
//! compressed audit trail) and works on the other core. The run's thread copies the
//! columns of each final workunit and result into a batch of records, which the
//! writer thread formats ([`records`]); the audit trail's rows it formats itself.
//! Rows are formatted straight into a byte buffer per table, with no csv writer and
//! no allocation per row, in exactly the bytes the csv crate wrote before, and go to
//! the file a mebibyte at a time. The thread is joined, and its first error
//! returned, before the folder is moved into place.

use super::outdir;
use super::writeback::Writeback;
use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::server::db::{ResultRow, Transition, WorkunitRow};
use crate::server::types::WuId;
use records::{Formatter, Records, WorkunitLine};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

mod records;

/// File name of the workunit table.
pub(crate) const WORKUNITS_CSV: &str = "workunits.csv";
/// File name of the result table.
pub(crate) const RESULTS_CSV: &str = "results.csv";
/// File name of the audit trail.
pub(crate) const TRANSITIONS_CSV: &str = "transitions.csv";
/// File name of the gzip-compressed audit trail (unscripted runs, see [`AuditTrail`]).
pub(crate) const TRANSITIONS_CSV_GZ: &str = "transitions.csv.gz";

/// Whether and how the audit trail `transitions.csv` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuditTrail {
    /// Not written.
    Off,
    /// `transitions.csv`, plain text (scripted scenarios: small, read by tests).
    Csv,
    /// `transitions.csv.gz`: the same rows gzip-compressed, for unscripted runs where
    /// the trail is by far the largest file. pandas and polars read it as is.
    Gzip,
}
/// File name of the headline figures and effective configuration.
pub(crate) const SUMMARY_JSON: &str = "summary.json";

/// Columns of `workunits.csv`.
pub(crate) const WORKUNIT_COLUMNS: &[&str] = &[
    "project",
    "id",
    "name",
    "appid",
    "create_time_s",
    "priority",
    "delay_bound_s",
    "rsc_fpops_est_flops",
    "true_size_flops",
    "min_quorum",
    "target_nresults",
    "max_error_results",
    "max_total_results",
    "max_success_results",
    "need_validate",
    "canonical_resultid",
    "canonical_credit",
    "transition_time_s",
    "error_mask",
    "assimilate_state",
    "file_delete_state",
    "hr_class",
    "nresults",
    "canonical_found_time_s",
    "assimilated_time_s",
    "assimilate_count",
    "files_deleted_time_s",
    "purged",
    "canonical_correct",
];

/// Columns of `results.csv`.
pub(crate) const RESULT_COLUMNS: &[&str] = &[
    "project",
    "id",
    "name",
    "workunitid",
    "hostid",
    "host",
    "server_state",
    "outcome",
    "validate_state",
    "file_delete_state",
    "client_state",
    "exit_status",
    "priority",
    "sent_time_s",
    "received_time_s",
    "report_deadline_s",
    "cpu_time_s",
    "elapsed_time_s",
    "flops_estimate_flops",
    "claimed_credit",
    "granted_credit",
    "purged",
    "output_correct",
    "app_version_id",
];

/// Columns `results.csv` gets after [`RESULT_COLUMNS`] in a run with files (spec
/// client §8.1): when the result's files moved on its host, how long the job waited
/// for them, and the bytes it moved (`docs/outputs.md`).
pub(crate) const RESULT_FILE_COLUMNS: &[&str] = &[
    "download_start_s",
    "download_end_s",
    "upload_start_s",
    "upload_end_s",
    "transfer_wait_s",
    "download_bytes",
    "upload_bytes",
];

/// Columns of `transitions.csv`.
pub(crate) const TRANSITION_COLUMNS: &[&str] = &[
    "time_s", "project", "actor", "entity", "id", "field", "old", "new",
];

/// A table's rows are formatted into a buffer of about this size, which then goes
/// whole to the writer thread: a few large writes, and one message per mebibyte of
/// rows rather than one per row.
const BATCH_BYTES: usize = 1 << 20;
/// Room past [`BATCH_BYTES`] for the row that fills a batch, so that a buffer
/// normally never grows.
const ROW_SLACK: usize = 1 << 14;
/// Batches queued for the writer thread at most: when the disk falls behind, the run
/// waits for it instead of piling rows up in memory.
const BATCHES_IN_FLIGHT: usize = 4;

/// The writer thread's files, by index: the two tables it formats itself, then the
/// audit trail when it is on.
const WORKUNITS_FILE: usize = 0;
const RESULTS_FILE: usize = 1;
const TRANSITIONS_FILE: usize = 2;

/// Appends the digits of `v`, as `{v}` prints them (the `itoa` crate's digits).
/// Most fields are a one-digit code, pushed as one byte; the rest are ids and times
/// of five to ten digits, copied by [`push_short`].
fn push_int(buf: &mut Vec<u8>, v: i64) {
    if (0..10).contains(&v) {
        buf.push(b'0' + v as u8);
        return;
    }
    let mut digits = itoa::Buffer::new();
    push_short(buf, digits.format(v).as_bytes());
}

/// The longest text [`push_short`] copies without a call to `memcpy`.
const SHORT: usize = 32;

/// Appends `text` as `extend_from_slice` does, but without its call to `memcpy` when
/// `text` is at most [`SHORT`] bytes long: room for [`SHORT`] bytes is added in one
/// fixed-size store, `text` copied as two overlapping fixed-size halves, and the rest
/// cut off. Every field of a row is such a text (ids, times, names, floats' digits),
/// and on `bench-100k` the calls to `memcpy`, a dozen per row, had been about 30 %
/// of the run's time spent writing rows (docs/performance.md, "Writing the outputs").
fn push_short(buf: &mut Vec<u8>, text: &[u8]) {
    let n = text.len();
    if n > SHORT {
        buf.extend_from_slice(text);
        return;
    }
    let start = buf.len();
    buf.extend_from_slice(&[0; SHORT]);
    let to = &mut buf[start..start + n];
    // Each arm's two copies have a fixed length, and overlap when `n` is below twice
    // that length: together they cover all of `text`.
    match n {
        16.. => overlapping_halves::<16>(to, text),
        8..16 => overlapping_halves::<8>(to, text),
        4..8 => overlapping_halves::<4>(to, text),
        2..4 => overlapping_halves::<2>(to, text),
        1 => to[0] = text[0],
        _ => {}
    }
    buf.truncate(start + n);
}

/// Copies `from` into `to` (same length, from `K` to `2 * K` bytes) as its first and
/// its last `K` bytes.
fn overlapping_halves<const K: usize>(to: &mut [u8], from: &[u8]) {
    let n = from.len();
    to[..K].copy_from_slice(&from[..K]);
    to[n - K..].copy_from_slice(&from[n - K..]);
}

/// Appends `v` exactly as `{v:?}` prints it (shortest round-trip digits, a `.0` on
/// whole values, the exponent form below 1e-4 and from 1e16 in magnitude), using
/// std's formatter only where no faster way is provably the same bytes:
///
/// - a whole value below 1e16 in magnitude (zero included): its integer digits and
///   `.0`, with the sign of `-0.0` kept. Below 2^53 floats are at most 1 apart, and
///   from 2^53 to 1e16 they are even integers 2 apart whose neighbours in the
///   rounding interval are odd (so no shorter): either way the shortest round-trip
///   digits nearest to the value are the integer's own.
/// - another value from 1e-4 to below 1e16 in magnitude: ryu's digits, when they are
///   provably std's ([`ryu_digits_are_std`]). ryu prints plain decimal from 1e-5 to
///   below 1e16 and std's `{:?}` from 1e-4 to below 1e16, so the layouts agree here.
/// - anything else (the exponent form, NaN, infinities, a tie): std's `{:?}` itself.
fn push_float(buf: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    if a < 1e16 {
        let i = v as i64;
        if i as f64 == v {
            if i == 0 && v.is_sign_negative() {
                buf.push(b'-');
            }
            push_int(buf, i);
            buf.extend_from_slice(b".0");
            return;
        }
        if a >= 1e-4 {
            let mut r = ryu::Buffer::new();
            let text = r.format_finite(v);
            if ryu_digits_are_std(v, text) {
                push_short(buf, text.as_bytes());
                return;
            }
        }
    }
    // Writing into a Vec cannot fail.
    let _ = write!(buf, "{v:?}");
}

/// Whether ryu's `text` for `v`, a finite value from 1e-4 to below 1e16 in
/// magnitude that is not whole, has the digits std's `{:?}` gives. Both give the
/// fewest digits that read back as `v`, and among those the nearest to `v`; they
/// differ only on an exact tie between two nearest, which ryu breaks to the even
/// digit and std upwards (2002124917698601.25 is `...601.2` in ryu and `...601.3`
/// in std). A tie at `L` digits whose last unit is `10^k` puts `v` exactly at
/// `(2d + 1) * 5 * 10^(k - 1)` for some `d`:
///
/// - Two candidates `10^k` apart fit in the rounding interval, at most one unit in
///   the last place (ulp) wide, and the ulp is at most `2^-52 * |v|`, under
///   `2.3e-16 * 10^L * 10^k`: so `L >= 16`. Shorter digits are never a tie.
/// - A value that is not whole is then `m * 2^(k - 1)` with `m` odd, `k <= 0`: its
///   binary exponent, trailing zeros of the mantissa taken off, is `k - 1`, and
///   `|v| >= 1e-4` with at most 17 digits gives `k >= -20`. A smaller exponent (a
///   value with more than 21 bits after the binary point, as almost every computed
///   value has) is never a tie.
fn ryu_digits_are_std(v: f64, text: &str) -> bool {
    let bits = v.to_bits();
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1075 + mantissa.trailing_zeros() as i32;
    if exponent < -21 {
        return true;
    }
    let significant = text
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&d| d == b'0')
        .count();
    significant <= 15
}

/// Appends `s` as one CSV field, quoted as the csv crate quotes (its default
/// "necessary" style): only when it holds a `,`, a `"`, a `\n` or a `\r`, each `"`
/// then doubled. The only free text in the tables is a project's name, and the
/// scenario's validation keeps it to letters, digits, `_` and `-`, so in practice
/// nothing is quoted; the check keeps the bytes the csv crate's whatever the text.
fn push_str_field(buf: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    if !b.iter().any(|&c| matches!(c, b',' | b'"' | b'\n' | b'\r')) {
        push_short(buf, b);
        return;
    }
    buf.push(b'"');
    for &c in b {
        if c == b'"' {
            buf.push(b'"');
        }
        buf.push(c);
    }
    buf.push(b'"');
}

/// The gzip encoder is fed in pieces of this size: the compressed bytes depend on
/// how the text is cut, and this is how the csv crate's 8 KiB buffer fed it when
/// the tables were written through it, so a compressed audit trail stays the same
/// file byte for byte. (The csv writer cut a piece short only to keep a doubled
/// quote whole, and no field of the audit trail holds a quote, see
/// [`push_str_field`].)
const GZIP_PIECE: usize = 8 << 10;

/// Where a table's bytes go: a buffered file, or a gzip stream into one.
enum Sink {
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
    fn create(path: &Path, gzip: bool) -> io::Result<Self> {
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

/// One CSV file's rows not yet handed to the writer thread, formatted straight into
/// bytes (no csv writer, no allocation per row). Every field is followed by a `,`,
/// and [`Self::end_row`] turns the row's last one into the `\n`: the bytes are the
/// csv crate's, with `,` separators and `\n` line ends.
pub(crate) struct Table {
    /// The file's index among the writer thread's files.
    file: usize,
    buf: Vec<u8>,
    /// The last value written in each float column of the row, and its text (the
    /// `k`-th float of a row is column `k`'s).
    floats: Vec<FloatMemo>,
    /// Floats written so far in the current row.
    float_col: usize,
}

/// One float column's last value and its bytes. Neighbouring rows often repeat a
/// value (a workunit's estimate, the credit of one app, the CPU time of a host
/// type), and copying its text back costs a few cycles where finding the shortest
/// digits again costs tens of nanoseconds. In the short-job benchmark's
/// `results.csv` (1,000 hosts), 95 % of the floats repeat the one above them, and
/// 85 % of those that are not whole (the ones ryu formats).
#[derive(Clone, Copy)]
struct FloatMemo {
    bits: u64,
    /// Bytes of `text` in use; 0: nothing remembered yet.
    len: u8,
    text: [u8; FloatMemo::CAP],
}

impl FloatMemo {
    /// Room for any `{:?}` of an `f64` (at most 24 bytes, as in
    /// `-2.2250738585072014e-308`), rounded up so that a copy is two vector moves.
    const CAP: usize = 32;
    const EMPTY: Self = Self {
        bits: 0,
        len: 0,
        text: [0; Self::CAP],
    };
}

impl Table {
    fn new(file: usize) -> Self {
        Self {
            file,
            buf: Vec::with_capacity(BATCH_BYTES + ROW_SLACK),
            floats: Vec::new(),
            float_col: 0,
        }
    }

    /// A batch is full: hand it over after this row.
    fn full(&self) -> bool {
        self.buf.len() >= BATCH_BYTES
    }

    /// Writes the header row: the names of `columns`, in order.
    fn header<S: AsRef<str>>(&mut self, columns: impl IntoIterator<Item = S>) {
        for name in columns {
            self.str(name.as_ref());
        }
        self.end_row();
    }

    /// A time that may be 0 (a transfer at the start of the run): empty only when
    /// it did not happen.
    fn opt_time(&mut self, t: Option<Time>) {
        match t {
            Some(t) => self.int(t),
            None => self.empty(),
        }
    }

    pub(crate) fn str(&mut self, s: &str) {
        push_str_field(&mut self.buf, s);
        self.buf.push(b',');
    }

    pub(crate) fn int(&mut self, v: i64) {
        push_int(&mut self.buf, v);
        self.buf.push(b',');
    }

    fn bool(&mut self, v: bool) {
        self.buf.extend_from_slice(if v { b"1," } else { b"0," });
    }

    /// Shortest round-trip digits as `{:?}` prints them rather than `{}`, so that
    /// whole values keep their `.0` and a float column never looks like an integer
    /// column ([`push_float`]).
    ///
    /// The text is the same as [`push_float`]'s; a value equal (bit for bit) to the
    /// one above it in its column reuses that one's text ([`FloatMemo`]).
    pub(crate) fn float(&mut self, v: f64) {
        let k = self.float_col;
        self.float_col += 1;
        if k == self.floats.len() {
            self.floats.push(FloatMemo::EMPTY);
        }
        let m = &mut self.floats[k];
        let start = self.buf.len();
        if m.len != 0 && m.bits == v.to_bits() {
            // A copy of fixed length, cut back to the text: no call to `memcpy`.
            self.buf.extend_from_slice(&m.text);
            self.buf.truncate(start + usize::from(m.len));
        } else {
            push_float(&mut self.buf, v);
            let text = &self.buf[start..];
            if let Some(slot) = m.text.get_mut(..text.len()) {
                slot.copy_from_slice(text);
                m.bits = v.to_bits();
                m.len = text.len() as u8;
            }
        }
        self.buf.push(b',');
    }

    /// Simulator truth: `1` right, `0` wrong, empty when unknown or no output.
    fn truth(&mut self, v: Option<bool>) {
        match v {
            Some(b) => self.bool(b),
            None => self.empty(),
        }
    }

    pub(crate) fn empty(&mut self) {
        self.buf.push(b',');
    }

    /// A time where 0 means "never": empty field then.
    fn time_or_never(&mut self, t: Time) {
        if t == 0 { self.empty() } else { self.int(t) }
    }

    /// `wu<id>`, the workunit's name.
    fn wu_name(&mut self, id: WuId) {
        self.buf.extend_from_slice(b"wu");
        self.int(id.0 as i64);
    }

    /// `wu<id>_<suffix>`, the result's name ([`crate::server::db::result_name`]).
    fn result_name(&mut self, wu: WuId, suffix: u16) {
        self.buf.extend_from_slice(b"wu");
        push_int(&mut self.buf, wu.0 as i64);
        self.buf.push(b'_');
        self.int(suffix as i64);
    }

    /// Ends the row: its last `,` becomes the line end. A row of no bytes (no field,
    /// or one empty field) is written `""`, as the csv crate writes it. A row starts
    /// at the buffer's start or after a `\n` that ends the row before (a `\n` in a
    /// field is always inside quotes, so never right before its `,`).
    fn end_row(&mut self) {
        self.float_col = 0;
        let n = self.buf.len();
        match self.buf.last() {
            Some(b',') if n >= 2 && self.buf[n - 2] != b'\n' => self.buf[n - 1] = b'\n',
            Some(b',') => {
                self.buf.pop();
                self.buf.extend_from_slice(b"\"\"\n");
            }
            _ => self.buf.extend_from_slice(b"\"\"\n"),
        }
    }
}

/// A CSV file written whole at the end of a run (`hosts.csv`), formatted as the
/// run's tables are ([`Table`]): the same bytes the csv crate writes, without a
/// `String` per field. `hosts.csv` is written after the simulation, on the run's own
/// thread and with nothing to overlap, and grows with the hosts (19 MB at
/// `bench-100k`'s 100,000): the csv writer and a `format!` per float had taken
/// 0.4 s of it there (docs/performance.md, "Writing the outputs").
pub(crate) struct CsvFile {
    rows: Table,
    file: File,
}

impl CsvFile {
    /// Creates `path` with the header row `columns`.
    pub(crate) fn create<S: AsRef<str>>(path: &Path, columns: &[S]) -> io::Result<Self> {
        let mut rows = Table::new(0);
        rows.header(columns);
        Ok(Self {
            rows,
            file: File::create(path)?,
        })
    }

    /// The row being written: its fields go in order through [`Table`]'s methods.
    pub(crate) fn row(&mut self) -> &mut Table {
        &mut self.rows
    }

    /// Ends the row, and writes the rows so far once they fill a batch.
    pub(crate) fn end_row(&mut self) -> io::Result<()> {
        self.rows.end_row();
        if self.rows.full() {
            self.file.write_all(&self.rows.buf)?;
            self.rows.buf.clear();
        }
        Ok(())
    }

    /// Writes the last rows.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.file.write_all(&self.rows.buf)
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

/// The thread that owns a run's table files and writes them while the run goes on,
/// so that the formatting of the two large tables, the disk, and the gzip encoder of
/// a compressed audit trail work on the other core. It gets batches over a bounded
/// channel: the rows of `workunits.csv` and `results.csv` as records, which it
/// formats itself ([`records`]), and the audit trail's as formatted bytes. One
/// channel keeps the order, so the bytes are the same whatever the threads' timing;
/// emptied buffers come back for reuse.
struct Writer {
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
    fn spawn(sinks: Vec<Sink>) -> io::Result<Self> {
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
    fn send(&mut self, table: &mut Table) -> io::Result<()> {
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
    fn send_records(&mut self, records: &mut Records) -> io::Result<()> {
        let empty = self
            .spare_records
            .try_recv()
            .unwrap_or_else(|_| Records::new());
        let batch = std::mem::replace(records, empty);
        self.post(Batch::Records(batch))
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
    fn close(&mut self) {
        if let Some(batches) = self.batches.take() {
            // A thread already ended on an error tells it when joined.
            let _ = batches.send(Batch::Close);
        }
    }

    /// Stops the thread and waits for it: with `close`, after it wrote every batch
    /// sent and closed and synced the files; without, the files are left unsynced
    /// (a run that gave up). Returns the first error the thread met.
    fn stop(&mut self, close: bool) -> io::Result<()> {
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
/// ([`RunOutput`]'s is `None` only while its files are being opened).
fn running(writer: &mut Option<Writer>) -> io::Result<&mut Writer> {
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

/// Renames the finished folder `tmp_dir` to `final_dir`: an existing `final_dir` is
/// first renamed to `<final_dir>.old-<pid>`, the temporary folder renamed to
/// `final_dir`, then the old one deleted. If the last rename fails the old folder is
/// put back. Shared by every writer of an atomic output folder (runs, `compare`,
/// a run's `plots/`, a sweep's `plots/`). An existing `final_dir` that boinc-sim did
/// not write is never replaced unless `--force` allowed it ([`outdir::may_replace`]).
pub(crate) fn move_into_place(tmp_dir: &Path, final_dir: &Path) -> io::Result<()> {
    if fs::symlink_metadata(final_dir).is_ok() && !outdir::may_replace(final_dir) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and was not written by boinc-sim; it is left as it is",
                final_dir.display()
            ),
        ));
    }
    let old = outdir::sibling(final_dir, "old")?;
    outdir::while_moving(tmp_dir, || {
        let had_old = match fs::symlink_metadata(final_dir) {
            Ok(_) => {
                outdir::remove_any(&old)?;
                fs::rename(final_dir, &old)?;
                true
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if let Err(e) = fs::rename(tmp_dir, final_dir) {
            if had_old {
                let _ = fs::rename(&old, final_dir);
            }
            return Err(e);
        }
        Ok(had_old)
    })
    .and_then(|had_old| {
        if had_old {
            outdir::remove_any(&old).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "the new output is in {}, but the previous one, moved to {}, could not be removed: {e}",
                        final_dir.display(),
                        old.display()
                    ),
                )
            })?;
        }
        Ok(())
    })
}

/// The output folder of one run, written in a temporary folder and moved into place
/// by [`RunOutput::finish`]. Dropping it unfinished removes the temporary folder.
pub struct RunOutput {
    final_dir: PathBuf,
    tmp_dir: PathBuf,
    /// Rows of `workunits.csv` and `results.csv` not yet handed to the writer thread,
    /// which formats them ([`records`]).
    records: Records,
    /// The indexes of the projects (as the world numbers them) whose names the
    /// writer thread has.
    named: Vec<bool>,
    /// `None` when the transitions table is off.
    transitions: Option<Table>,
    /// Owns the files and writes the tables' batches (`None` only while the files
    /// are being opened).
    writer: Option<Writer>,
    /// `results.csv` has the transfer columns ([`RESULT_FILE_COLUMNS`]).
    result_files: bool,
    /// `results.csv`'s header is written: it is written with the first row (or at
    /// the end), so that a run with files can add its columns before the run starts.
    results_header: bool,
    transitions_enabled: bool,
    /// The temporary folder is ours to remove (false once moved into place).
    armed: bool,
}

impl RunOutput {
    /// Starts the output of a run that will end up in `final_dir`: creates the parent
    /// folders, removes stale temporary folders ([`outdir::create_temp`]), and opens the CSV files there
    /// with their header rows. `transitions` turns `transitions.csv` on.
    pub fn create(final_dir: &Path, transitions: bool) -> io::Result<Self> {
        let audit = if transitions {
            AuditTrail::Csv
        } else {
            AuditTrail::Off
        };
        Self::create_audited(final_dir, audit)
    }

    /// [`Self::create`] with the audit trail written as `audit` says.
    pub(crate) fn create_audited(final_dir: &Path, audit: AuditTrail) -> io::Result<Self> {
        let transitions = audit != AuditTrail::Off;
        let tmp_dir = outdir::create_temp(final_dir)?;
        // From here on an error drops `out`, whose Drop removes the temporary folder.
        let mut out = RunOutput {
            final_dir: final_dir.to_path_buf(),
            tmp_dir,
            records: Records::new(),
            named: Vec::new(),
            transitions: transitions.then(|| Table::new(TRANSITIONS_FILE)),
            writer: None,
            result_files: false,
            results_header: false,
            transitions_enabled: transitions,
            armed: true,
        };
        // The files are created here, so that an unwritable folder fails at once.
        let mut sinks = vec![
            Sink::create(&out.tmp_dir.join(WORKUNITS_CSV), false)?,
            Sink::create(&out.tmp_dir.join(RESULTS_CSV), false)?,
        ];
        if let Some(t) = &mut out.transitions {
            let gzip = audit == AuditTrail::Gzip;
            let name = if gzip {
                TRANSITIONS_CSV_GZ
            } else {
                TRANSITIONS_CSV
            };
            sinks.push(Sink::create(&out.tmp_dir.join(name), gzip)?);
            t.header(TRANSITION_COLUMNS);
        }
        out.writer = Some(Writer::spawn(sinks)?);
        Ok(out)
    }

    /// The run has files: `results.csv` gets the transfer columns, unless a row
    /// was already written without them (the header is fixed by the first row).
    pub(crate) fn enable_files(&mut self) {
        if !self.results_header {
            self.result_files = true;
        }
    }

    /// Has the writer thread write `results.csv`'s header if it is not written yet.
    fn results_header(&mut self) -> io::Result<()> {
        if self.results_header {
            return Ok(());
        }
        self.results_header = true;
        let files = self.result_files;
        running(&mut self.writer)?.post(Batch::ResultsHeader { files })
    }

    /// Project `pi`'s index in the records, its name sent to the writer thread the
    /// first time.
    fn project_index(&mut self, pi: usize, project: &str) -> io::Result<u16> {
        if self.named.get(pi) == Some(&true) {
            return Ok(pi as u16);
        }
        let index = u16::try_from(pi).map_err(|_| io::Error::other("more than 65,536 projects"))?;
        let name = project.to_string();
        running(&mut self.writer)?.post(Batch::Project { index, name })?;
        if self.named.len() <= pi {
            self.named.resize(pi + 1, false);
        }
        self.named[pi] = true;
        Ok(index)
    }

    /// Hands the records to the writer thread once they fill a batch.
    fn hand_over_records_if_full(&mut self) -> io::Result<()> {
        if !self.records.full() {
            return Ok(());
        }
        running(&mut self.writer)?.send_records(&mut self.records)
    }

    /// Hands `table`'s rows to the writer thread once they fill a batch.
    fn hand_over_if_full(writer: &mut Option<Writer>, table: &mut Table) -> io::Result<()> {
        if !table.full() {
            return Ok(());
        }
        running(writer)?.send(table)
    }

    /// Whether `transitions.csv` is written (callers may skip collecting the audit
    /// trail otherwise).
    pub fn transitions_enabled(&self) -> bool {
        self.transitions_enabled
    }

    /// The temporary folder being written, for other writers that add files to the
    /// run folder before [`Self::finish`].
    pub fn dir(&self) -> &Path {
        &self.tmp_dir
    }

    /// Where the folder goes on [`Self::finish`].
    pub fn final_dir(&self) -> &Path {
        &self.final_dir
    }

    /// Appends one row to `workunits.csv`, of project `pi` (the world's index) named
    /// `project`. `purged` says whether db_purge deleted the row (it is written then,
    /// with its last state) or it was still live at the end. The row's columns are
    /// copied into the batch of records; the writer thread formats them.
    pub(crate) fn write_workunit(
        &mut self,
        pi: usize,
        project: &str,
        wu: &WorkunitRow,
        purged: bool,
    ) -> io::Result<()> {
        let project = self.project_index(pi, project)?;
        self.records
            .push_workunit(WorkunitLine::of(project, wu, purged));
        self.hand_over_records_if_full()
    }

    /// Appends one row to `results.csv` (see [`Self::write_workunit`] for `purged`).
    /// In a run with files, `x` is when its files moved, if it was reported with
    /// them (none: the transfer columns are empty).
    /// `host` is the world's index of the host the result was sent to (`hosts.csv`'s
    /// `host`), none when it was never sent.
    pub(crate) fn write_result(
        &mut self,
        pi: usize,
        project: &str,
        host: Option<u32>,
        r: &ResultRow,
        purged: bool,
        x: Option<&XferTimes>,
    ) -> io::Result<()> {
        self.results_header()?;
        let project = self.project_index(pi, project)?;
        self.records.push_result(project, host, r, purged, x);
        self.hand_over_records_if_full()
    }

    /// Appends the audit rows of one step at `time` to `transitions.csv`; does
    /// nothing when it is off.
    pub(crate) fn write_transitions(
        &mut self,
        project: &str,
        time: Time,
        rows: &[Transition],
    ) -> io::Result<()> {
        let Some(t) = self.transitions.as_mut() else {
            return Ok(());
        };
        for row in rows {
            t.int(time);
            t.str(project);
            t.str(row.actor.name());
            t.str(row.entity.name());
            t.int(row.id as i64);
            t.str(row.field.name());
            t.int(row.old);
            t.int(row.new);
            t.end_row();
            Self::hand_over_if_full(&mut self.writer, t)?;
        }
        Ok(())
    }

    /// Closes the tables, writes `summary.json` (pretty, with a trailing newline) and
    /// moves the folder into place: an existing `final_dir` is first renamed to
    /// `<final_dir>.old-<pid>`, the temporary folder renamed to `final_dir`, then the
    /// old one deleted. If the last rename fails the old folder is put back. On any
    /// error the temporary folder is removed.
    pub fn finish(mut self, summary: &serde_json::Value) -> io::Result<()> {
        // Every file is complete and synced before the summary and the rename.
        self.wait_tables()?;
        let mut f = BufWriter::new(File::create(self.tmp_dir.join(SUMMARY_JSON))?);
        serde_json::to_writer_pretty(&mut f, summary)?;
        f.write_all(b"\n")?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;

        // Once the folder is in place nothing is left at the temporary path, so
        // dropping `self` after an error removes nothing that matters.
        move_into_place(&self.tmp_dir, &self.final_dir)?;
        self.armed = false;
        Ok(())
    }

    /// Every row is written (the run is over): hands the last rows to the writer
    /// thread, which closes and syncs the table files while the caller writes the
    /// run's other files; [`Self::finish`] waits for it. A row written after this is
    /// an error, at the latest in `finish`.
    pub fn end_tables(&mut self) -> io::Result<()> {
        self.results_header()?;
        let writer = running(&mut self.writer)?;
        if !self.records.is_empty() {
            writer.send_records(&mut self.records)?;
        }
        if let Some(table) = self.transitions.as_mut()
            && !table.buf.is_empty()
        {
            writer.send(table)?;
        }
        writer.close();
        Ok(())
    }

    /// Ends the tables ([`Self::end_tables`]) and waits until the writer thread has
    /// written, closed and synced their files, for a reader of the temporary folder
    /// (the charts of `run --plot`). Returns the first error the thread met.
    pub fn wait_tables(&mut self) -> io::Result<()> {
        self.end_tables()?;
        running(&mut self.writer)?.stop(true)
    }

    /// Gives up: closes the files and deletes the temporary folder (a failed run).
    pub fn abandon(mut self) -> io::Result<()> {
        self.armed = false;
        self.stop_writer();
        outdir::discard_temp(&self.tmp_dir);
        Ok(())
    }

    /// Stops the writer thread of a run that gave up, without syncing its files, and
    /// waits for it, so that nothing writes into the folder while it is removed.
    fn stop_writer(&mut self) {
        if let Some(w) = &mut self.writer
            && w.thread.is_some()
        {
            let _ = w.stop(false);
        }
    }
}

impl Drop for RunOutput {
    /// An unfinished output must not survive: remove the temporary folder.
    fn drop(&mut self) {
        if self.armed {
            self.stop_writer();
            outdir::discard_temp(&self.tmp_dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::db::{Entity, Field};
    use crate::server::invariants::test_rows;
    use crate::server::types::INT_MAX;
    use crate::server::types::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn lines(path: &Path) -> Vec<String> {
        fs::read_to_string(path)
            .unwrap()
            .split_terminator('\n')
            .map(String::from)
            .collect()
    }

    fn sample_rows() -> (WorkunitRow, ResultRow) {
        let mut wu = test_rows::workunit();
        (wu.id, wu.transition_time, wu.results) =
            (WuId(1), INT_MAX as i32, [ResultId(3)].into_iter().collect());
        let mut r = test_rows::result(WuId(1), 0);
        r.id = ResultId(3);
        r.server_state = ServerState::Over;
        r.outcome = Outcome::Success;
        r.validate_state = ValidateState::Valid;
        (r.hostid, r.sent_time, r.received_time, r.report_deadline) = (HostId(2), 10, 500, 1010);
        (r.cpu_time, r.elapsed_time, r.granted_credit) = (480.5, 490.0, 100.0);
        (wu, r)
    }

    /// Rows of two projects, interleaved, over many batches of records and of bytes,
    /// with their floats varying: every row reaches its file once, in the order
    /// written, under its own project's name, with the text formatting it in place
    /// gives (records are formatted on the writer thread).
    #[test]
    fn rows_over_many_batches_keep_their_order_and_project() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let (mut wu, mut r) = sample_rows();
        let n = 3 * records::RECORDS_PER_BATCH + 17;
        let (mut want_wus, mut want_results) = (Table::new(0), Table::new(1));
        want_wus.header(WORKUNIT_COLUMNS);
        want_results.header(RESULT_COLUMNS);
        for k in 0..n {
            let (pi, name) = if k % 3 == 0 { (1, "b") } else { (0, "a") };
            wu.id = WuId(k as u32 + 1);
            wu.rsc_fpops_est = (k / 5) as f64 * 0.1;
            r.id = ResultId(k as u32 + 1);
            r.cpu_time = (k % 7) as f64 / 3.0;
            out.write_workunit(pi, name, &wu, k % 2 == 0).unwrap();
            out.write_result(pi, name, None, &r, false, None).unwrap();
            records::WorkunitLine::of(0, &wu, k % 2 == 0).format(&mut want_wus, name);
            records::format_result(&mut want_results, name, None, &r, false, false, None);
        }
        out.finish(&serde_json::Value::Null).unwrap();
        let read = |f: &str| fs::read(dir.join(f)).unwrap();
        assert!(read(WORKUNITS_CSV) == want_wus.buf, "workunits.csv");
        assert!(read(RESULTS_CSV) == want_results.buf, "results.csv");
        let ids: Vec<String> = lines(&dir.join(RESULTS_CSV))
            .iter()
            .skip(1)
            .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(ids.len(), n);
        assert_eq!(ids[0], "b,1");
        assert_eq!(ids[n - 1], format!("a,{n}"));
    }

    /// The sizes a batch of records is planned with ([`records::RECORDS_PER_BATCH`]).
    #[test]
    fn a_record_is_a_copy_of_a_few_cache_lines() {
        assert_eq!(size_of::<records::ResultLine>(), 192);
        assert_eq!(size_of::<records::WorkunitLine>(), 112);
    }

    #[test]
    fn finish_writes_exactly_the_expected_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("runs").join("s1");
        let mut out = RunOutput::create(&dir, true).unwrap();
        assert!(out.transitions_enabled());
        assert!(
            out.dir()
                .ends_with(format!("s1.tmp-{}", std::process::id()))
        );
        let (mut wu, mut r) = sample_rows();
        wu.canonical_correct = Some(false);
        r.output_correct = Some(true);
        r.app_version_id = 2;
        wu.true_fpops = 7.2e12;
        out.write_workunit(0, "main", &wu, true).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        let time = 502;
        let t = Transition {
            actor: Actor::Validator,
            entity: Entity::Workunit,
            id: 1,
            field: Field::CanonicalResultid,
            old: 0,
            new: 3,
        };
        out.write_transitions("main", time, &[t, Transition { old: -7, ..t }])
            .unwrap();
        out.finish(&serde_json::json!({"seed": 1})).unwrap();

        assert_eq!(entries(&tmp.path().join("runs")), ["s1"]);
        assert_eq!(
            entries(&dir),
            [
                outdir::MARKER,
                RESULTS_CSV,
                SUMMARY_JSON,
                TRANSITIONS_CSV,
                WORKUNITS_CSV
            ]
        );
        let wus = lines(&dir.join(WORKUNITS_CSV));
        assert_eq!(wus[0], WORKUNIT_COLUMNS.join(","));
        assert_eq!(
            wus[1],
            "main,1,wu1,1,0,0,1000,3600000000000.0,7200000000000.0,1,1,1,2,1,0,0,0.0,,0,0,0,0,1,,,0,,1,0"
        );
        assert_eq!(wus.len(), 2);
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(rs[0], RESULT_COLUMNS.join(","));
        assert_eq!(
            rs[1],
            "main,3,wu1_0,1,2,,5,1,1,0,0,0,0,10,500,1010,480.5,490.0,0.0,0.0,100.0,0,1,2"
        );
        let ts = lines(&dir.join(TRANSITIONS_CSV));
        assert_eq!(
            ts,
            [
                "time_s,project,actor,entity,id,field,old,new",
                "502,main,validator,workunit,1,canonical_resultid,0,3",
                "502,main,validator,workunit,1,canonical_resultid,-7,3",
            ]
        );
        let summary = fs::read_to_string(dir.join(SUMMARY_JSON)).unwrap();
        assert_eq!(summary, "{\n  \"seed\": 1\n}\n");
    }

    /// With files, `results.csv` gets the transfer columns after the others: filled
    /// for a result reported with files (a transfer at t = 0 is written as 0), empty
    /// for one never reported.
    #[test]
    fn results_get_transfer_columns_in_a_run_with_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        out.enable_files();
        let (_, r) = sample_rows();
        let x = XferTimes {
            received: 0,
            download_start: Some(0),
            download_end: Some(40),
            completed: Some(400),
            upload_start: Some(420),
            upload_end: Some(460),
            download_bytes: 5e6,
            upload_bytes: 250_000.0,
        };
        out.write_result(0, "main", None, &r, false, Some(&x))
            .unwrap();
        let half = XferTimes {
            download_end: None,
            upload_start: None,
            upload_end: None,
            ..x
        };
        out.write_result(0, "main", None, &r, false, Some(&half))
            .unwrap();
        out.write_result(0, "main", None, &r, true, None).unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(
            rs[0],
            format!(
                "{},download_start_s,download_end_s,upload_start_s,upload_end_s,\
                 transfer_wait_s,download_bytes,upload_bytes",
                RESULT_COLUMNS.join(",")
            )
        );
        let row = "main,3,wu1_0,1,2,,5,1,1,0,0,0,0,10,500,1010,480.5,490.0,0.0,0.0,100.0";
        assert_eq!(
            rs[1],
            format!("{row},0,,,0,40,420,460,100.0,5000000.0,250000.0")
        );
        assert_eq!(rs[2], format!("{row},0,,,0,,,,0.0,5000000.0,250000.0"));
        assert_eq!(rs[3], format!("{row},1{}", ",".repeat(9)));
        assert_eq!(rs.len(), 4);
    }

    /// Without files the header is the one of every run before files existed, even
    /// in a folder without a result row; files turned on after the first row keep
    /// the file consistent: no column is added under rows written without it.
    #[test]
    fn results_header_is_unchanged_without_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("empty");
        RunOutput::create(&dir, false)
            .unwrap()
            .finish(&serde_json::Value::Null)
            .unwrap();
        assert_eq!(lines(&dir.join(RESULTS_CSV)), [RESULT_COLUMNS.join(",")]);

        let dir = tmp.path().join("late");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let (_, r) = sample_rows();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.enable_files();
        out.write_result(0, "main", None, &r, false, Some(&XferTimes::default()))
            .unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        let rs = lines(&dir.join(RESULTS_CSV));
        assert_eq!(rs[0], RESULT_COLUMNS.join(","));
        assert_eq!(rs[1], rs[2]);
    }

    #[test]
    fn unsent_result_has_empty_times_and_no_transitions_file_when_off() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let r = test_rows::result(WuId(1), 2);
        out.write_result(0, "p", None, &r, true, None).unwrap();
        // A no-op when the table is off.
        let time = 0;
        let t = Transition {
            actor: Actor::Feeder,
            entity: Entity::Result,
            id: 1,
            field: Field::Row,
            old: 0,
            new: 1,
        };
        out.write_transitions("p", time, &[t]).unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        assert_eq!(
            entries(&dir),
            [outdir::MARKER, RESULTS_CSV, SUMMARY_JSON, WORKUNITS_CSV]
        );
        assert_eq!(
            lines(&dir.join(RESULTS_CSV))[1],
            "p,0,wu1_2,1,0,,2,0,0,0,0,0,0,,,,0.0,0.0,0.0,0.0,0.0,1,,"
        );
        assert_eq!(lines(&dir.join(WORKUNITS_CSV)).len(), 1);
    }

    #[test]
    fn dropping_unfinished_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, true).unwrap();
        let (wu, _) = sample_rows();
        out.write_workunit(0, "main", &wu, false).unwrap();
        assert!(out.dir().is_dir());
        drop(out);
        assert!(entries(tmp.path()).is_empty());

        let out = RunOutput::create(&dir, true).unwrap();
        out.abandon().unwrap();
        assert!(entries(tmp.path()).is_empty());
    }

    #[test]
    fn finishing_replaces_an_earlier_run_and_a_stale_temp_one_but_no_user_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("old.txt"), "previous run").unwrap();
        // Left by this very process (same pid) and marked as ours.
        let stale = outdir::sibling(&dir, "tmp").unwrap();
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join(outdir::MARKER), "").unwrap();
        fs::write(stale.join("junk.csv"), "x").unwrap();

        // Not ours: the finished output is refused and the folder kept.
        let out = RunOutput::create(&dir, false).unwrap();
        assert_eq!(
            entries(out.dir()),
            [outdir::MARKER, RESULTS_CSV, WORKUNITS_CSV]
        );
        let err = out.finish(&serde_json::json!({})).unwrap_err();
        assert!(
            err.to_string().contains("not written by boinc-sim"),
            "{err}"
        );
        assert_eq!(entries(tmp.path()), ["run"]);
        assert_eq!(entries(&dir), ["old.txt"]);

        // An earlier run's folder: it stays intact until the new one is complete.
        fs::write(dir.join("manifest.json"), r#"{"crate": "boinc-sim"}"#).unwrap();
        let out = RunOutput::create(&dir, false).unwrap();
        assert_eq!(entries(&dir), ["manifest.json", "old.txt"]);
        out.finish(&serde_json::json!({})).unwrap();
        assert_eq!(entries(tmp.path()), ["run"]);
        assert_eq!(
            entries(&dir),
            [outdir::MARKER, RESULTS_CSV, SUMMARY_JSON, WORKUNITS_CSV]
        );
    }

    #[test]
    fn a_gzip_audit_trail_reads_back_as_the_csv() {
        use std::io::Read;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create_audited(&dir, AuditTrail::Gzip).unwrap();
        let time = 7;
        let t = Transition {
            actor: Actor::Feeder,
            entity: Entity::Result,
            id: 1,
            field: Field::Row,
            old: 0,
            new: 1,
        };
        out.write_transitions("p", time, &[t]).unwrap();
        out.finish(&serde_json::json!({})).unwrap();
        assert_eq!(
            entries(&dir),
            [
                outdir::MARKER,
                RESULTS_CSV,
                SUMMARY_JSON,
                TRANSITIONS_CSV_GZ,
                WORKUNITS_CSV
            ]
        );
        let mut text = String::new();
        flate2::read::GzDecoder::new(File::open(dir.join(TRANSITIONS_CSV_GZ)).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(
            text,
            "time_s,project,actor,entity,id,field,old,new\n7,p,feeder,result,1,row,0,1\n"
        );
    }

    #[test]
    fn a_path_without_a_folder_name_is_refused() {
        let err = RunOutput::create(Path::new(".."), false).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    fn int_bytes(v: i64) -> String {
        let mut buf = Vec::new();
        push_int(&mut buf, v);
        String::from_utf8(buf).unwrap()
    }

    fn float_bytes(v: f64) -> String {
        let mut buf = Vec::new();
        push_float(&mut buf, v);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn integers_format_like_display() {
        for v in [
            0,
            7,
            -1,
            10,
            -10,
            99,
            100,
            2_147_483_647,
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(int_bytes(v), v.to_string());
        }
        assert_eq!(int_bytes(i64::MIN), "-9223372036854775808");
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for _ in 0..200_000 {
            let v = rng.random::<i64>() >> rng.random_range(0..64);
            assert_eq!(int_bytes(v), v.to_string());
        }
        let mut buf = b"x".to_vec();
        push_int(&mut buf, -42);
        assert_eq!(buf, b"x-42", "appended, the surplus cut");
    }

    /// Every length, below, at and above [`SHORT`], each byte distinct so that a
    /// half copied to the wrong place shows: the same bytes as `extend_from_slice`,
    /// after what the buffer held, and nothing after them.
    #[test]
    fn a_short_copy_appends_exactly_the_text() {
        let text: Vec<u8> = (1..=2 * SHORT as u8 + 3).collect();
        for n in 0..=text.len() {
            let mut buf = b"ab".to_vec();
            push_short(&mut buf, &text[..n]);
            let mut want = b"ab".to_vec();
            want.extend_from_slice(&text[..n]);
            assert_eq!(buf, want, "{n} bytes");
        }
    }

    /// Ending the tables early (the run is over) hands every row to the thread; the
    /// folder is finished as before. A row written after that is refused at the
    /// latest by `finish`, and leaves no folder.
    #[test]
    fn tables_ended_early_are_complete_and_a_late_row_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, true).unwrap();
        let (wu, r) = sample_rows();
        out.write_workunit(0, "main", &wu, false).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.end_tables().unwrap();
        out.end_tables().unwrap();
        // Complete in the temporary folder once waited for, as the charts read them.
        out.wait_tables().unwrap();
        assert_eq!(lines(&out.dir().join(RESULTS_CSV)).len(), 2);
        out.wait_tables().unwrap();
        out.finish(&serde_json::Value::Null).unwrap();
        assert_eq!(lines(&dir.join(WORKUNITS_CSV)).len(), 2);
        assert_eq!(lines(&dir.join(RESULTS_CSV)).len(), 2);
        assert_eq!(lines(&dir.join(TRANSITIONS_CSV)).len(), 1);

        // A late row of a project the writer thread knows waits in its batch and
        // fails in `finish`; one of a new project fails at once (its name cannot
        // reach the thread).
        let stopped = "the output writer has stopped (the tables were ended, or a write failed)";
        let late = tmp.path().join("late");
        let mut out = RunOutput::create(&late, false).unwrap();
        out.write_result(0, "main", None, &r, false, None).unwrap();
        out.end_tables().unwrap();
        out.write_workunit(0, "main", &wu, false).unwrap();
        let err = out.finish(&serde_json::Value::Null).unwrap_err();
        assert_eq!(err.to_string(), stopped);
        let mut out = RunOutput::create(&late, false).unwrap();
        out.end_tables().unwrap();
        let err = out.write_workunit(0, "main", &wu, false).unwrap_err();
        assert_eq!(err.to_string(), stopped);
        drop(out);
        assert_eq!(entries(tmp.path()), ["run"]);
    }

    /// The edges of each way [`push_float`] takes, with the bytes `{:?}` gives.
    #[test]
    fn floats_format_like_debug_at_the_edges() {
        let next_up = |v: f64| f64::from_bits(v.to_bits() + 1);
        let next_down = |v: f64| f64::from_bits(v.to_bits() - 1);
        let exact = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-3.0, "-3.0"),
            (0.5, "0.5"),
            (-0.5, "-0.5"),
            (0.1, "0.1"),
            (480.5, "480.5"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.16e13, "21600000000000.0"),
            (1e15, "1000000000000000.0"),
            (9_007_199_254_740_992.0, "9007199254740992.0"),
            (9_007_199_254_740_994.0, "9007199254740994.0"),
            (9_999_999_999_999_998.0, "9999999999999998.0"),
            (1e16, "1e16"),
            (-1e16, "-1e16"),
            (1.5e17, "1.5e17"),
            (1e-4, "0.0001"),
            (-1e-4, "-0.0001"),
            (1.5e-4, "0.00015"),
            (9.9e-5, "9.9e-5"),
            (1e-5, "1e-5"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN, "-1.7976931348623157e308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (v, text) in exact {
            assert_eq!(float_bytes(v), text, "{v:e}");
            assert_eq!(format!("{v:?}"), text, "the expected text is std's");
        }
        // Next to each threshold, on both sides.
        for edge in [1e-4, 1e16, 9_007_199_254_740_992.0, 1.0, 0.5, 1e-5] {
            let mut v = edge;
            for _ in 0..50 {
                v = next_down(v);
            }
            for _ in 0..100 {
                for x in [v, -v] {
                    assert_eq!(float_bytes(x), format!("{x:?}"));
                }
                v = next_up(v);
            }
        }
    }

    /// Checks [`push_float`] against `{:?}` on `n` values of each kind: any bit
    /// pattern, log-uniform magnitudes over the whole range, short decimals (the
    /// kind a scenario or a credit gives), and whole numbers.
    fn compare_floats_with_debug(seed: u64, n: usize) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut buf = Vec::with_capacity(64);
        let mut check = |v: f64| {
            buf.clear();
            push_float(&mut buf, v);
            let want = format!("{v:?}");
            assert_eq!(
                std::str::from_utf8(&buf).unwrap(),
                want,
                "bits {:#x}",
                v.to_bits()
            );
        };
        for _ in 0..n {
            check(f64::from_bits(rng.random::<u64>()));
            check(10f64.powf(rng.random_range(-12.0..20.0)) * rng.random_range(0.1..1.0));
            let digits = rng.random_range(0..100_000_000_u64) as f64;
            check(digits / 10f64.powi(rng.random_range(0..12)));
            check((rng.random::<u64>() >> rng.random_range(0..64)) as f64);
        }
    }

    #[test]
    fn floats_format_like_debug_on_random_values() {
        compare_floats_with_debug(1, 250_000);
    }

    /// The same on 100 million values of each kind: minutes in a release build,
    /// run by hand (`cargo test --release --lib floats_on_many -- --ignored`).
    #[test]
    #[ignore]
    fn floats_on_many_values() {
        compare_floats_with_debug(2, 100_000_000);
    }

    /// A table's rows are the csv crate's bytes: fields quoted only when they
    /// need it, quotes doubled, `,` separators and `\n` line ends, and an empty
    /// record written `""`.
    #[test]
    fn rows_are_the_csv_crates_bytes() {
        let names = [
            "main",
            "",
            "a,b",
            "say \"hi\"",
            "\"",
            "two\nlines",
            "cr\rhere",
            "été",
            "\"\"",
            " spaced ",
        ];
        let mut ours = Table::new(0);
        let mut theirs = csv::WriterBuilder::new()
            .flexible(true)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        for (i, name) in names.iter().enumerate() {
            ours.str(name);
            ours.int(i as i64 - 3);
            ours.empty();
            ours.float(i as f64 / 4.0);
            ours.bool(i % 2 == 0);
            ours.truth(None);
            ours.end_row();
            let f = format!("{:?}", i as f64 / 4.0);
            let b = if i % 2 == 0 { "1" } else { "0" };
            let i = (i as i64 - 3).to_string();
            theirs.write_record([*name, &i, "", &f, b, ""]).unwrap();
        }
        ours.end_row();
        theirs.write_record(None::<&[u8]>).unwrap();
        ours.str("");
        ours.end_row();
        theirs.write_record([""]).unwrap();
        let theirs = theirs.into_inner().unwrap();
        assert_eq!(
            String::from_utf8(ours.buf).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
    }

    /// A float column that repeats values (the memo's case) gives `{:?}`'s bytes,
    /// row after row: repeats, values that differ only in sign or in the last bit,
    /// NaN, the exponent form, and rows of fewer floats than the one before.
    #[test]
    fn repeated_floats_keep_their_bytes() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let pool = [
            0.0,
            -0.0,
            1363.6363636363637,
            f64::from_bits(1363.6363636363637f64.to_bits() + 1),
            8.680555555555557,
            7.5e12,
            1e16,
            -2.2250738585072014e-308,
            f64::NAN,
            f64::INFINITY,
            1e-5,
        ];
        let mut ours = Table::new(0);
        let mut want = String::new();
        for _ in 0..5_000 {
            let ncols = rng.random_range(0..5usize);
            for _ in 0..ncols {
                let v = if rng.random_bool(0.8) {
                    pool[rng.random_range(0..pool.len())]
                } else {
                    f64::from_bits(rng.random::<u64>())
                };
                ours.float(v);
                want.push_str(&format!("{v:?},"));
            }
            ours.int(1);
            want.push_str("1\n");
            ours.end_row();
        }
        assert_eq!(String::from_utf8(ours.buf).unwrap(), want);
    }

    /// A file every write to fails with "no space left on device".
    #[cfg(target_os = "linux")]
    fn full_sink() -> Sink {
        let f = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        Sink::Plain(BufWriter::with_capacity(BATCH_BYTES, f))
    }

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

    /// The run gets the writer's error from a row's write, and the output that
    /// failed leaves no folder behind.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_failed_write_leaves_no_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut out = RunOutput::create(&dir, false).unwrap();
        let failing = Writer::spawn(vec![full_sink(), full_sink()]).unwrap();
        out.writer.replace(failing).unwrap().stop(false).unwrap();
        let (wu, _) = sample_rows();
        let err = (0..100_000)
            .find_map(|_| out.write_workunit(0, "main", &wu, false).err())
            .expect("the error comes back");
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
        assert!(out.finish(&serde_json::Value::Null).is_err());
        assert!(entries(tmp.path()).is_empty());
    }
}
