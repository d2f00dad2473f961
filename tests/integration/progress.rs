//! Progress reporting observes a run without changing it: the observer of
//! `World::run_with` is called every `PROGRESS_EVERY` events and once at the end, and
//! the run folder is byte-identical to that of `World::run`. End to end, the binary
//! draws its bar only on a terminal, and clears it before the summary lines.

use boinc_sim::scenario::load::{Loaded, load};
use boinc_sim::stats::run_folder::{RunFolderError, RunFolderOptions, write_run_folder};
use boinc_sim::world::{PROGRESS_EVERY, Progress};
use std::path::Path;
use std::process::Command;

use crate::common::root;

/// The quickstart cut to 50 hosts and 2 days: about 170,000 events, so the observer
/// is called several times.
/// A 2-day run with a delay bound short enough (under a third of it) that no
/// censoring warning comes before the summary line.
const SETS: &[&str] = &[
    "simulation.duration=2d",
    "host_group.0.count=50",
    "project.main.workunit.delay_bound=12h",
];

fn quickstart() -> Loaded {
    let sets: Vec<String> = SETS.iter().map(|s| s.to_string()).collect();
    load(&root().join("scenarios/quickstart.toml"), &sets, None).unwrap_or_else(|e| panic!("{e}"))
}

/// Writes the run folder of `loaded` into `dir`, as `boinc-sim run --audit` does,
/// with `observe` as the run's progress observer if given; returns the run's events.
fn write_folder(loaded: &Loaded, dir: &Path, observe: Option<&mut dyn FnMut(Progress)>) -> u64 {
    let options = RunFolderOptions {
        audit: true,
        ..RunFolderOptions::default()
    };
    let written = write_run_folder(
        loaded,
        dir,
        &options,
        |_| observe,
        |_, _| Ok::<_, RunFolderError>(()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    written.finished.counters.events
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn an_observed_run_writes_the_same_folder_and_is_told_every_progress_every_events() {
    let tmp = tempfile::tempdir().unwrap();
    let loaded = quickstart();
    let (plain, observed) = (tmp.path().join("plain"), tmp.path().join("observed"));

    let events = write_folder(&loaded, &plain, None);

    let mut calls: Vec<Progress> = Vec::new();
    let observed_events = write_folder(&loaded, &observed, Some(&mut |p| calls.push(p)));
    assert_eq!(observed_events, events);

    assert!(events > 4 * PROGRESS_EVERY, "{events} events: too few");
    // The observer hears of each event that takes the counter past a multiple of
    // PROGRESS_EVERY. Skipped idle daemon passes count as events (docs/performance.md,
    // "Idle daemons"), so the counter may jump over several multiples at once: one
    // call for the jump, at least one call per four multiples on this run.
    let end = loaded.file.simulation.duration.get();
    let inner = &calls[..calls.len() - 1];
    assert!(
        inner.len() as u64 >= events / PROGRESS_EVERY / 4,
        "{} calls",
        inner.len()
    );
    assert!(inner.len() as u64 <= events / PROGRESS_EVERY);
    let mut passed = 0;
    for p in inner {
        assert!(
            p.events / PROGRESS_EVERY > passed,
            "{p:?} after {passed} multiples"
        );
        passed = p.events / PROGRESS_EVERY;
        assert_eq!(p.end, end);
    }
    assert!(calls.windows(2).all(|w| w[0].now <= w[1].now));
    assert_eq!(
        calls.last(),
        Some(&Progress {
            now: end,
            end,
            events
        })
    );

    let (a, b) = (files(&plain), files(&observed));
    assert_eq!(
        a.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs with a progress observer");
    }
}

/// Runs `boinc-sim` under a pseudo-terminal (util-linux `script`), so that stderr is
/// a terminal; `None` when `script` is not installed.
fn run_in_terminal(args: &[&str], log: &Path) -> Option<std::process::Output> {
    let bin = env!("CARGO_BIN_EXE_boinc-sim");
    let mut cmdline = bin.to_string();
    for a in args {
        cmdline.push(' ');
        cmdline.push_str(a);
    }
    let o = Command::new("script")
        .args(["-q", "-e", "-c", &cmdline])
        .arg(log)
        .current_dir(root())
        .env("TERM", "xterm")
        .env("COLUMNS", "120")
        .output()
        .ok()?;
    Some(o)
}

#[test]
fn the_bar_is_drawn_on_a_terminal_only_and_changes_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = root().join("scenarios/quickstart.toml");
    let sc = sc.to_str().unwrap();
    let (piped, tty) = (tmp.path().join("piped"), tmp.path().join("tty"));
    let mut args = vec!["run", sc];
    for s in SETS {
        args.extend(["--set", s]);
    }

    // Piped stderr: no bar, no escape code.
    let mut piped_args = args.clone();
    piped_args.extend(["--out", piped.to_str().unwrap()]);
    let o = Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(&piped_args)
        .current_dir(root())
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("ETA") && !err.contains('\x1b'), "{err}");
    assert!(err.starts_with("quickstart: "), "{err}");

    let log = tmp.path().join("typescript");
    let mut tty_args = args.clone();
    tty_args.extend(["--out", tty.to_str().unwrap()]);
    let Some(o) = run_in_terminal(&tty_args, &log) else {
        eprintln!("`script` is not installed: terminal part skipped");
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let screen = String::from_utf8_lossy(&o.stdout).into_owned();
    // Which positions are drawn depends on indicatif's rate limit; every draw has
    // the simulated day, the event rate and the ETA.
    assert!(screen.contains(" / 2, "), "{screen}");
    assert!(screen.contains("events/s, ETA "), "{screen}");
    assert!(screen.contains("day "), "{screen}");
    // The bar is cleared before the summary line, which starts a clean line.
    let summary = screen.rfind("quickstart: ").expect("summary line");
    assert!(!screen[summary..].contains("ETA"), "{screen}");
    assert!(
        screen[..summary].ends_with("\x1b[2K") || screen[..summary].ends_with('\r'),
        "{:?}",
        &screen[summary.saturating_sub(40)..summary]
    );

    for ((name, x), (_, y)) in files(&piped).iter().zip(&files(&tty)) {
        assert!(x == y, "{name} differs with the bar drawn");
    }
    assert_eq!(files(&piped).len(), files(&tty).len());
}
