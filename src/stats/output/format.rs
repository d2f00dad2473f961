//! The tables' formatting: rows written straight into bytes, with no csv writer and
//! no allocation per row, in exactly the bytes the csv crate writes (a header row,
//! `,` separators, `\n` line ends, a field quoted only where it needs it).
//!
//! Integers are the `itoa` crate's digits, floats `{:?}`'s shortest round-trip form
//! with a `.0` kept on whole values (through ryu where it is provably the same
//! bytes), and short fields are copied without a call to `memcpy`: the tables are
//! the largest files of a run, and their formatting is most of what writing them
//! costs (docs/performance.md, "Writing the outputs").
//!
//! [`Table`] holds one file's rows until they go to the writer thread
//! ([`super::writer`]); [`CsvFile`] writes the same rows straight to a file
//! (`hosts.csv`, after the run).

use crate::engine::Time;
use crate::server::types::WuId;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// A table's rows are formatted into a buffer of about this size, which then goes
/// whole to the writer thread: a few large writes, and one message per mebibyte of
/// rows rather than one per row.
pub(super) const BATCH_BYTES: usize = 1 << 20;
/// Room past [`BATCH_BYTES`] for the row that fills a batch, so that a buffer
/// normally never grows.
pub(super) const ROW_SLACK: usize = 1 << 14;

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
/// and a call per field was the largest part of writing a row (docs/performance.md,
/// "The run folder's tables").
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

/// One CSV file's rows not yet handed to the writer thread, formatted straight into
/// bytes (no csv writer, no allocation per row). Every field is followed by a `,`,
/// and [`Self::end_row`] turns the row's last one into the `\n`: the bytes are the
/// csv crate's, with `,` separators and `\n` line ends.
pub(crate) struct Table {
    /// The file's index among the writer thread's files.
    pub(super) file: usize,
    /// The rows so far, formatted.
    pub(super) buf: Vec<u8>,
    /// The last value written in each float column of the row, and its text (the
    /// `k`-th float of a row is column `k`'s).
    floats: Vec<FloatMemo>,
    /// Floats written so far in the current row.
    float_col: usize,
}

/// One float column's last value and its bytes. Neighbouring rows often repeat a
/// value (a workunit's estimate, the credit of one app, the CPU time of a host
/// type), and copying its text back costs a few cycles where finding the shortest
/// digits again costs tens of nanoseconds; most floats of a run's tables repeat the
/// one above them (docs/performance.md, "The run folder's tables").
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
    pub(super) fn new(file: usize) -> Self {
        Self {
            file,
            buf: Vec::with_capacity(BATCH_BYTES + ROW_SLACK),
            floats: Vec::new(),
            float_col: 0,
        }
    }

    /// A batch is full: hand it over after this row.
    pub(super) fn full(&self) -> bool {
        self.buf.len() >= BATCH_BYTES
    }

    /// Writes the header row: the names of `columns`, in order.
    pub(super) fn header<S: AsRef<str>>(&mut self, columns: impl IntoIterator<Item = S>) {
        for name in columns {
            self.str(name.as_ref());
        }
        self.end_row();
    }

    /// A time that may be 0 (a transfer at the start of the run): empty only when
    /// it did not happen.
    pub(super) fn opt_time(&mut self, t: Option<Time>) {
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

    pub(super) fn bool(&mut self, v: bool) {
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
    pub(super) fn truth(&mut self, v: Option<bool>) {
        match v {
            Some(b) => self.bool(b),
            None => self.empty(),
        }
    }

    pub(crate) fn empty(&mut self) {
        self.buf.push(b',');
    }

    /// A time where 0 means "never": empty field then.
    pub(super) fn time_or_never(&mut self, t: Time) {
        if t == 0 { self.empty() } else { self.int(t) }
    }

    /// `wu<id>`, the workunit's name.
    pub(super) fn wu_name(&mut self, id: WuId) {
        self.buf.extend_from_slice(b"wu");
        self.int(id.0 as i64);
    }

    /// `wu<id>_<suffix>`, the result's name ([`crate::server::db::result_name`]).
    pub(super) fn result_name(&mut self, wu: WuId, suffix: u16) {
        self.buf.extend_from_slice(b"wu");
        push_int(&mut self.buf, wu.0 as i64);
        self.buf.push(b'_');
        self.int(suffix as i64);
    }

    /// Ends the row: its last `,` becomes the line end. A row of no bytes (no field,
    /// or one empty field) is written `""`, as the csv crate writes it. A row starts
    /// at the buffer's start or after a `\n` that ends the row before (a `\n` in a
    /// field is always inside quotes, so never right before its `,`).
    pub(super) fn end_row(&mut self) {
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
/// `String` per field, since it is written after the simulation, on the run's own
/// thread with nothing to overlap, and grows with the hosts (docs/performance.md,
/// "The run folder's tables").
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
