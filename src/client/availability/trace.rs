//! Availability traces: recorded on-intervals of real hosts, replayed exactly.
//!
//! The file is a CSV with the header `host_id,start,end` and one row per interval in
//! which the host was available (on). `start` and `end` are seconds since the start of
//! the run, as integers or duration strings (`"3d"`, `"6h"`). A host's rows must be in
//! time order and must not overlap; rows of different hosts may interleave. Intervals
//! that touch (`end` of one equals `start` of the next) are merged. Lines starting with
//! `#` are comments.

use crate::base::units::{DurationError, parse_duration};
use crate::engine::Time;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A loaded trace: for each distinct host id, in order of first appearance, its
/// sorted, disjoint on-intervals `[start, end)`.
pub struct Trace {
    ids: Vec<String>,
    intervals: Vec<Vec<(Time, Time)>>,
    /// The latest `end` of any host.
    horizon: Time,
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Trace")
            .field("hosts", &self.ids.len())
            .field(
                "intervals",
                &self.intervals.iter().map(Vec::len).sum::<usize>(),
            )
            .field("horizon", &self.horizon)
            .finish()
    }
}

/// Why a trace cannot be used. Messages name the file (as given) and, for a bad
/// row, its line, so the file can be fixed from the message alone.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file cannot be read.
    #[error("{}: cannot read trace: {cause}", .path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// Nothing but comments: not even the header.
    #[error("{file}: empty trace: expected a header `host_id,start,end`")]
    Empty { file: String },
    /// The CSV reader's own error (the message has its position).
    #[error("{file}: {cause}")]
    Csv { file: String, cause: csv::Error },
    /// A bad header or row.
    #[error("{file}: line {line}: {problem}")]
    Line {
        file: String,
        line: u64,
        problem: LineProblem,
    },
    /// A header and no rows.
    #[error("{file}: the trace has no intervals")]
    NoIntervals { file: String },
    /// An interval of [`Trace::from_intervals`] that is empty, negative or before
    /// the previous one of its host.
    #[error("host {host}: interval [{start}, {end}) is empty, negative or out of order")]
    BadInterval { host: usize, start: Time, end: Time },
    /// [`Trace::from_intervals`] without hosts.
    #[error("the trace has no hosts")]
    NoHosts,
}

/// What is wrong with one line of a trace file ([`TraceError::Line`]).
#[derive(Debug, thiserror::Error)]
pub enum LineProblem {
    #[error("missing header: expected `host_id,start,end`, found `{found}`")]
    MissingHeader { found: String },
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    #[error("empty host_id")]
    EmptyHostId,
    #[error("bad start: {0}")]
    BadStart(TimeError),
    #[error("bad end: {0}")]
    BadEnd(TimeError),
    #[error("end ({end}) must be after start ({start}) for host `{host}`")]
    EndNotAfterStart {
        host: String,
        start: Time,
        end: Time,
    },
    #[error(
        "intervals of host `{host}` are not sorted: start {start} is before the start {previous_start} of its interval on line {previous_line}"
    )]
    NotSorted {
        host: String,
        start: Time,
        previous_start: Time,
        previous_line: u64,
    },
    #[error(
        "interval [{start}, {end}) of host `{host}` overlaps its interval on line {previous_line} (which ends at {previous_end})"
    )]
    Overlaps {
        host: String,
        start: Time,
        end: Time,
        previous_line: u64,
        previous_end: Time,
    },
}

/// Why a `start` or `end` value is not a time.
#[derive(Debug, thiserror::Error)]
pub enum TimeError {
    #[error("empty value")]
    Empty,
    #[error("`{0}` is negative")]
    Negative(String),
    #[error(transparent)]
    Duration(#[from] DurationError),
}

/// Parses a start or end value: an integer number of seconds or a duration string.
fn parse_time(s: &str) -> Result<Time, TimeError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(TimeError::Empty);
    }
    let v = match t.parse::<i64>() {
        Ok(v) => v,
        Err(_) => parse_duration(t)?,
    };
    if v < 0 {
        return Err(TimeError::Negative(t.to_string()));
    }
    Ok(v)
}

impl Trace {
    /// Reads a trace file. Errors name the file, the line and the problem.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|cause| TraceError::Read {
            path: path.to_path_buf(),
            cause,
        })?;
        Self::from_csv(&path.display().to_string(), &text)
    }

    /// Parses trace text; `name` is used in error messages.
    pub fn from_csv(name: &str, text: &str) -> Result<Trace, TraceError> {
        let file = || name.to_string();
        let err = |line: u64, problem: LineProblem| TraceError::Line {
            file: file(),
            line,
            problem,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut records = rdr.records();
        // The header: the first record that is not a comment.
        let header = match records.next() {
            None => return Err(TraceError::Empty { file: file() }),
            Some(Err(cause)) => {
                return Err(TraceError::Csv {
                    file: file(),
                    cause,
                });
            }
            Some(Ok(r)) => r,
        };
        let hline = header.position().map_or(1, |p| p.line());
        let col = |n: &str| header.iter().position(|h| h.eq_ignore_ascii_case(n));
        let (Some(ci), Some(cs), Some(ce)) = (col("host_id"), col("start"), col("end")) else {
            return Err(err(
                hline,
                LineProblem::MissingHeader {
                    found: header.iter().collect::<Vec<_>>().join(","),
                },
            ));
        };
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut ids = Vec::new();
        let mut intervals: Vec<Vec<(Time, Time)>> = Vec::new();
        let mut last_line: Vec<u64> = Vec::new();
        for rec in records {
            let rec = rec.map_err(|cause| TraceError::Csv {
                file: file(),
                cause,
            })?;
            let line = rec.position().map_or(0, |p| p.line());
            if rec.iter().all(str::is_empty) {
                continue;
            }
            let field = |i: usize, what: &'static str| {
                rec.get(i)
                    .ok_or_else(|| err(line, LineProblem::MissingField(what)))
            };
            let id = field(ci, "host_id")?;
            if id.is_empty() {
                return Err(err(line, LineProblem::EmptyHostId));
            }
            let start =
                parse_time(field(cs, "start")?).map_err(|e| err(line, LineProblem::BadStart(e)))?;
            let end =
                parse_time(field(ce, "end")?).map_err(|e| err(line, LineProblem::BadEnd(e)))?;
            if end <= start {
                return Err(err(
                    line,
                    LineProblem::EndNotAfterStart {
                        host: id.to_string(),
                        start,
                        end,
                    },
                ));
            }
            let h = *index.entry(id.to_string()).or_insert_with(|| {
                ids.push(id.to_string());
                intervals.push(Vec::new());
                last_line.push(line);
                ids.len() - 1
            });
            let list = &mut intervals[h];
            match list.last_mut() {
                Some(&mut (ps, _)) if start < ps => {
                    return Err(err(
                        line,
                        LineProblem::NotSorted {
                            host: id.to_string(),
                            start,
                            previous_start: ps,
                            previous_line: last_line[h],
                        },
                    ));
                }
                Some(&mut (_, pe)) if start < pe => {
                    return Err(err(
                        line,
                        LineProblem::Overlaps {
                            host: id.to_string(),
                            start,
                            end,
                            previous_line: last_line[h],
                            previous_end: pe,
                        },
                    ));
                }
                Some((_, pe)) if start == *pe => *pe = end,
                _ => list.push((start, end)),
            }
            last_line[h] = line;
        }
        if ids.is_empty() {
            return Err(TraceError::NoIntervals { file: file() });
        }
        Ok(Self::build(ids, intervals))
    }

    /// A trace from in-memory intervals (`intervals[k]` belongs to host `k`); each
    /// host's intervals must be sorted and disjoint.
    pub fn from_intervals(intervals: Vec<Vec<(Time, Time)>>) -> Result<Trace, TraceError> {
        for (k, list) in intervals.iter().enumerate() {
            let mut prev_end = 0;
            for &(s, e) in list {
                if s < prev_end || e <= s {
                    return Err(TraceError::BadInterval {
                        host: k,
                        start: s,
                        end: e,
                    });
                }
                prev_end = e;
            }
        }
        if intervals.is_empty() {
            return Err(TraceError::NoHosts);
        }
        let ids = (0..intervals.len()).map(|k| k.to_string()).collect();
        Ok(Self::build(ids, intervals))
    }

    fn build(ids: Vec<String>, intervals: Vec<Vec<(Time, Time)>>) -> Trace {
        let horizon = intervals
            .iter()
            .filter_map(|l| l.last().map(|&(_, e)| e))
            .max()
            .unwrap_or(0);
        Trace {
            ids,
            intervals,
            horizon,
        }
    }

    /// Number of distinct hosts.
    pub fn hosts(&self) -> usize {
        self.ids.len()
    }

    /// The trace host that group host slot `slot` replays: `slot mod hosts()`.
    pub fn host_for_slot(&self, slot: u32) -> usize {
        slot as usize % self.ids.len()
    }

    /// The id of trace host `k` as written in the file.
    pub fn host_id(&self, k: usize) -> &str {
        &self.ids[k]
    }

    /// The on-intervals of trace host `k`, sorted and disjoint.
    pub fn intervals(&self, k: usize) -> &[(Time, Time)] {
        &self.intervals[k]
    }

    /// The latest end of any interval: every host is off from then on.
    pub fn horizon(&self) -> Time {
        self.horizon
    }

    /// Fraction of `[0, horizon)` during which trace host `k` is on.
    pub(crate) fn host_on_fraction(&self, k: usize) -> f64 {
        if self.horizon <= 0 {
            return 0.0;
        }
        let on: Time = self.intervals[k].iter().map(|&(s, e)| e - s).sum();
        on as f64 / self.horizon as f64
    }

    /// Fraction of host-time on over `[0, horizon)`, averaged over the hosts.
    pub fn on_fraction(&self) -> f64 {
        let n = self.hosts();
        (0..n).map(|k| self.host_on_fraction(k)).sum::<f64>() / n as f64
    }

    /// Index of the first interval of host `k` that ends after `t`.
    pub(super) fn cursor_at(&self, k: usize, t: Time) -> usize {
        self.intervals[k].partition_point(|&(_, e)| e <= t)
    }
}
