//! The progress bar of `boinc-sim run` and `bench`: where the run is in simulated
//! time (`day 12.3 / 30`), how many events it processes per second, and an estimate
//! of the wall time left.
//!
//! The bar is drawn on stderr with `indicatif`, only when stderr is a terminal: piped
//! or redirected output, CI logs and the test suite never see an escape code. The
//! event loop does not know about it: [`World::run_with`](crate::world::World::run_with)
//! hands an observer a [`Progress`] copy every few thousand events, and
//! [`RunProgress::update`] moves the bar. When no bar is shown the command line runs
//! [`World::run`](crate::world::World::run) without any observer at all.

use crate::engine::Time;
use crate::world::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Simulated seconds per day and per hour.
const DAY: f64 = 86_400.0;
const HOUR: f64 = 3_600.0;

/// A progress bar on stderr for one run. Dropping it clears the bar, so an error or
/// the run's summary printed afterwards starts on a clean line.
pub struct RunProgress {
    bar: ProgressBar,
    /// Events processed, read by the bar's `{rate}` key when it draws.
    events: Arc<AtomicU64>,
}

impl RunProgress {
    /// A bar for a run that ends at simulated time `end`, or `None` when none would
    /// be seen: `enabled` is false (`--quiet`, `--no-progress`) or stderr is not a
    /// terminal (indicatif's stderr target hides itself then, and when `TERM` is
    /// `dumb`; asking it first lets the caller skip the observer entirely).
    pub fn stderr(end: Time, enabled: bool) -> Option<Self> {
        if !enabled {
            return None;
        }
        let target = ProgressDrawTarget::stderr();
        if target.is_hidden() {
            return None;
        }
        Some(Self::with_target(end, target))
    }

    /// A bar drawn to `target` (a hidden one in tests).
    pub fn with_target(end: Time, target: ProgressDrawTarget) -> Self {
        // Position and length are simulated seconds, so indicatif's `{eta}` is the
        // wall time left at the recent pace of simulated time. The text is drawn
        // from the bar's own state by custom keys, so one update is one draw (and
        // indicatif draws at most 20 times a second).
        let events = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&events);
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30.cyan/blue}] {sim}, {rate}, ETA {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> ")
        .with_key("sim", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let end = s.len().unwrap_or(0) as Time;
            let _ = w.write_str(&position(s.pos() as Time, end));
        })
        .with_key(
            "rate",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let events = counted.load(Ordering::Relaxed);
                let _ = w.write_str(&rate(events, s.elapsed().as_secs_f64()));
            },
        );
        let bar = ProgressBar::with_draw_target(Some(end.max(1) as u64), target);
        bar.set_style(style);
        Self { bar, events }
    }

    /// Moves the bar to `p`.
    pub fn update(&mut self, p: Progress) {
        self.events.store(p.events, Ordering::Relaxed);
        self.bar.set_position(p.now.max(0) as u64);
    }

    /// The bar's text without the elapsed time, the bar and the ETA, for tests.
    pub fn text(&self) -> String {
        let end = self.bar.length().unwrap_or(0) as Time;
        message(
            Progress {
                now: self.bar.position() as Time,
                end,
                events: self.events.load(Ordering::Relaxed),
            },
            self.bar.elapsed().as_secs_f64(),
        )
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// `day 12.3 / 30, 712k events/s`: [`position`] and [`rate`].
pub fn message(p: Progress, wall_s: f64) -> String {
    format!("{}, {}", position(p.now, p.end), rate(p.events, wall_s))
}

/// `day 12.3 / 30`: the simulated position in days (hours for runs shorter than two
/// days, seconds for runs shorter than two hours).
pub fn position(now: Time, end: Time) -> String {
    let (end, now) = (end.max(0) as f64, now.max(0) as f64);
    let (unit, scale) = if end >= 2.0 * DAY {
        ("day", DAY)
    } else if end >= 2.0 * HOUR {
        ("hour", HOUR)
    } else {
        ("s", 1.0)
    };
    let mut s = String::new();
    let _ = write!(s, "{unit} {} / {}", trim1(now / scale), trim1(end / scale));
    s
}

/// `712k events/s`: the mean event rate over `wall_s` seconds.
pub fn rate(events: u64, wall_s: f64) -> String {
    if wall_s > 0.0 {
        format!("{} events/s", si(events as f64 / wall_s))
    } else {
        "0 events/s".to_string()
    }
}

/// One decimal, without a trailing `.0` (`30`, `12.3`).
fn trim1(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A rate with three significant figures at most and an SI suffix: `950`, `71.2k`,
/// `1.25M`.
fn si(v: f64) -> String {
    let (v, suffix) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if v >= 100.0 || suffix.is_empty() {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{suffix}")
}

/// The progress of a sweep on stderr: on a terminal, a bar with the runs done of
/// all, the rate and the time left; otherwise (a CI log, a file, a pipe) a plain
/// line every tenth of the runs or every minute, whichever comes first, so a log
/// shows the sweep is alive ([`SweepLines`]). Nothing under `--quiet`.
pub(crate) enum SweepProgress {
    Bar(ProgressBar),
    Lines(SweepLines),
}

impl SweepProgress {
    pub fn stderr(enabled: bool) -> Option<Self> {
        if !enabled {
            return None;
        }
        let target = ProgressDrawTarget::stderr();
        if target.is_hidden() {
            return Some(SweepProgress::Lines(SweepLines::default()));
        }
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} runs, {per_sec}, ETA {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(0), target);
        bar.set_style(style);
        Some(SweepProgress::Bar(bar))
    }

    /// `done` of `total` runs (runs found done at the start count, and are not in the
    /// rate: the bar starts from them).
    pub fn update(&self, done: usize, total: usize) {
        match self {
            SweepProgress::Bar(bar) => {
                if bar.length() != Some(total as u64) {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.reset_eta();
                } else {
                    bar.set_position(done as u64);
                }
            }
            SweepProgress::Lines(lines) => {
                if let Some(line) = lines.update(done, total, Instant::now()) {
                    eprintln!("{line}");
                }
            }
        }
    }
}

impl Drop for SweepProgress {
    fn drop(&mut self) {
        if let SweepProgress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// How often [`SweepLines`] writes a line at the least.
pub(crate) const LINE_EVERY: Duration = Duration::from_secs(60);

/// The sweep's progress as plain lines: when a run crosses a tenth of all runs, or
/// a minute after the last line, or at the end.
#[derive(Default)]
pub(crate) struct SweepLines {
    state: Mutex<Option<LinesState>>,
}

struct LinesState {
    start: Instant,
    /// Runs already done when the sweep started (a resumed sweep): not in the rate.
    resumed: usize,
    last_line: Instant,
    last_tenth: usize,
}

impl SweepLines {
    /// The line to print, if any, for `done` of `total` runs at `now`. The first
    /// call (the runs found done) starts the clock and prints nothing.
    pub fn update(&self, done: usize, total: usize, now: Instant) -> Option<String> {
        let mut guard = self.state.lock().ok()?;
        let tenth = (done * 10).checked_div(total).unwrap_or(10);
        let Some(st) = guard.as_mut() else {
            *guard = Some(LinesState {
                start: now,
                resumed: done,
                last_line: now,
                last_tenth: tenth,
            });
            return None;
        };
        let due = done == total || tenth > st.last_tenth || now - st.last_line >= LINE_EVERY;
        if !due {
            return None;
        }
        st.last_line = now;
        st.last_tenth = tenth;
        let elapsed = now.duration_since(st.start).as_secs_f64();
        Some(sweep_line(
            done,
            total,
            done - st.resumed.min(done),
            elapsed,
        ))
    }
}

/// `sweep: 90/180 runs done (50 %), 1m 10s elapsed, ETA 1m 10s`: `ran` runs of
/// this process in `elapsed_s` give the rate of the time left; without one, the
/// ETA is unknown.
pub(crate) fn sweep_line(done: usize, total: usize, ran: usize, elapsed_s: f64) -> String {
    let pct = (done * 100).checked_div(total).unwrap_or(100);
    let eta = if done >= total {
        "done".to_string()
    } else if ran == 0 || elapsed_s <= 0.0 {
        "ETA unknown".to_string()
    } else {
        format!(
            "ETA {}",
            clock(elapsed_s / ran as f64 * (total - done) as f64)
        )
    };
    format!(
        "sweep: {done}/{total} runs done ({pct} %), {} elapsed, {eta}",
        clock(elapsed_s)
    )
}

/// Wall time as a clock reading: `45s`, `1m 10s`, `2h 05m`.
pub fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, s % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(now: Time, end: Time, events: u64) -> Progress {
        Progress { now, end, events }
    }

    #[test]
    fn message_shows_simulated_days_and_the_event_rate() {
        let day = 86_400;
        assert_eq!(
            message(at(12 * day + day * 3 / 10, 30 * day, 1_424_000), 2.0),
            "day 12.3 / 30, 712k events/s"
        );
        assert_eq!(message(at(0, 30 * day, 0), 0.0), "day 0 / 30, 0 events/s");
        // Short runs count hours, then seconds.
        assert_eq!(
            message(at(5400, day, 950), 1.0),
            "hour 1.5 / 24, 950 events/s"
        );
        assert_eq!(
            message(at(600, 3600, 2_500_000), 1.0),
            "s 600 / 3600, 2.50M events/s"
        );
    }

    #[test]
    fn rates_have_three_significant_figures() {
        assert_eq!(si(0.4), "0");
        assert_eq!(si(999.0), "999");
        assert_eq!(si(1_000.0), "1.00k");
        assert_eq!(si(71_234.0), "71.2k");
        assert_eq!(si(712_345.0), "712k");
        assert_eq!(si(3.2e9), "3.20G");
    }

    #[test]
    fn sweep_lines_come_every_tenth_every_minute_and_at_the_end() {
        let lines = SweepLines::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        // The first call starts the clock (here: 10 runs found done, resumed).
        assert_eq!(lines.update(10, 100, at(0)), None);
        assert_eq!(lines.update(15, 100, at(5)), None);
        assert_eq!(
            lines.update(20, 100, at(10)).as_deref(),
            Some("sweep: 20/100 runs done (20 %), 10s elapsed, ETA 1m 20s")
        );
        assert_eq!(lines.update(21, 100, at(20)), None);
        // A minute without a new tenth.
        assert_eq!(
            lines.update(22, 100, at(70)).as_deref(),
            Some("sweep: 22/100 runs done (22 %), 1m 10s elapsed, ETA 7m 35s")
        );
        assert_eq!(
            lines.update(100, 100, at(3725)).as_deref(),
            Some("sweep: 100/100 runs done (100 %), 1h 02m elapsed, done")
        );
        assert_eq!(
            sweep_line(0, 4, 0, 61.0),
            "sweep: 0/4 runs done (0 %), 1m 01s elapsed, ETA unknown"
        );
    }

    #[test]
    fn a_hidden_bar_follows_updates_and_clears_on_drop() {
        let mut bar = RunProgress::with_target(86_400 * 30, ProgressDrawTarget::hidden());
        bar.update(at(86_400 * 15, 86_400 * 30, 10));
        assert!(bar.text().starts_with("day 15 / 30, "), "{}", bar.text());
        assert_eq!(bar.bar.position(), 86_400 * 15);
        drop(bar);
        // Not enabled: no bar at all, so the run takes no observer.
        assert!(RunProgress::stderr(100, false).is_none());
    }
}
