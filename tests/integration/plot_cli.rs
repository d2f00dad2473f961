//! `boinc-sim plot` and `run --plot` end to end: the files they write, determinism,
//! and one-line errors with the documented exit codes. The browser side of the
//! report is `tests/integration/report_chromium.rs`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::command as bin;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs the multi-project example, shortened, into `out`.
fn run_multi(out: &Path, extra: &[&str]) -> Output {
    bin()
        .args(["run", "-q", "scenarios/multi-project.toml", "--out"])
        .arg(out)
        .args([
            "--set",
            "simulation.duration=\"2d\"",
            "--set",
            "host_group.0.count=40",
            "--set",
            "output.transitions=false",
        ])
        .args(extra)
        .output()
        .unwrap()
}

/// Every chart file under `dir/plots`, by name (not the `.boinc-sim` marker).
fn plots(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir.join("plots"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != ".boinc-sim")
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn run_plot_writes_every_chart_and_replotting_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let with = tmp.path().join("with");
    let without = tmp.path().join("without");
    let o = run_multi(&with, &["--plot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "-q prints nothing: {}", stderr(&o));
    let o = run_multi(&without, &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Plotting adds plots/ and report.html and changes no data file.
    let mut expected = entries(&without);
    expected.extend(["plots".to_string(), "report.html".to_string()]);
    expected.sort();
    assert_eq!(entries(&with), expected);
    for f in entries(&without) {
        assert!(
            fs::read(with.join(&f)).unwrap() == fs::read(without.join(&f)).unwrap(),
            "{f} differs with --plot"
        );
    }

    // Several projects: per-project charts carry the project's name.
    let first = plots(&with);
    for name in [
        "throughput",
        "deadlines",
        "science_error",
        "credit_per_host",
        "client_rpcs",
        "flops",
        "turnaround_alpha",
        "workunits_by_state_gamma",
        "results_by_state_beta",
        "slack_beta",
        "server_backlog_alpha",
    ] {
        for ext in ["png", "svg"] {
            let f = format!("{name}.{ext}");
            let bytes = first.get(&f).unwrap_or_else(|| panic!("no {f}: {first:?}"));
            assert!(bytes.len() > 2000, "{f} is nearly empty");
        }
    }
    // No web server and no daemon outage: no `server` chart (docs/plots.md).
    assert!(!first.contains_key("server.svg") && !first.contains_key("server.png"));
    for (name, bytes) in &first {
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        } else {
            assert!(name.ends_with(".svg"), "{name}");
            let text = String::from_utf8(bytes.clone()).unwrap();
            assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        }
    }

    // `plot` on the finished folder gives the same files and page again.
    let report = fs::read(with.join("report.html")).unwrap();
    let o = bin().arg("plot").arg(&with).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("report.html"), "{}", stderr(&o));
    let second = plots(&with);
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &first {
        if name.ends_with(".svg") {
            assert!(*bytes == second[name], "{name} differs between two plots");
        }
    }
    assert!(report == fs::read(with.join("report.html")).unwrap());
    // No temporary folder or page left behind.
    assert_eq!(entries(&with), expected);
}

#[test]
fn plot_errors_are_one_line_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file.txt");
    fs::write(&file, "x").unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let broken = tmp.path().join("broken");
    fs::create_dir(&broken).unwrap();
    fs::write(
        broken.join("timeseries.csv"),
        "time_s,project,metric,value\n0,main,results_reported,many\n",
    )
    .unwrap();
    let cases: [(PathBuf, &str); 4] = [
        (tmp.path().join("nope"), "cannot open the run folder"),
        (file, "is not a folder"),
        (empty.clone(), "not a boinc-sim run folder"),
        (broken.clone(), "timeseries.csv: line 2"),
    ];
    for (dir, msg) in cases {
        let o = bin().arg("plot").arg(&dir).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", dir.display());
        assert!(err.starts_with("error: ") && err.contains(msg), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
    }
    // Nothing was written into the folders.
    assert!(entries(&empty).is_empty());
    assert_eq!(entries(&broken), ["timeseries.csv"]);
    // A missing argument is a usage error.
    let o = bin().arg("plot").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn quiet_plot_prints_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = run_multi(&run, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bin().args(["plot", "-q"]).arg(&run).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    assert!(run.join("report.html").is_file());
}
