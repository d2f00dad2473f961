//! `report.html` in a real browser: run a small scenario with `--plot`, load the page
//! in headless Chromium, and read back what the page's own script recorded on
//! `<body>` after loading: no script error, and as many charts rendered with a
//! non-empty box as the page expects and as `plots/` holds. Also checks every
//! chart file (SVG well formed, PNG signature and size).
//!
//! Without `chromium` on the PATH `cargo test` lists the test as ignored, with the
//! reason (build.rs), so it works
//! on a machine with only Rust; `.ci/run` installs it (Debian package `chromium`) and
//! sets `BOINC_SIM_REQUIRE_CHROMIUM=1`, which turns a missing browser into a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `name` on the PATH, if there.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The value of attribute `name` in the first `<body ...>` tag of `dom`.
fn body_attr(dom: &str, name: &str) -> Option<String> {
    let start = dom.find("<body")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!("{name}=\"");
    let from = tag.find(&key)? + key.len();
    Some(tag[from..from + tag[from..].find('"')?].to_string())
}

/// Runs `cmd`, killing it after `limit`; returns its stdout.
fn output_within(mut cmd: Command, limit: Duration) -> (bool, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let t0 = Instant::now();
    let ok = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.success();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (ok, reader.join().unwrap(), err_reader.join().unwrap())
}

#[test]
#[cfg_attr(
    no_chromium,
    ignore = "chromium is not on the PATH (apt-get install chromium; build.rs)"
)]
fn report_renders_every_chart_in_headless_chromium() {
    let chromium = on_path("chromium").expect(
        "chromium is required (BOINC_SIM_REQUIRE_CHROMIUM=1 or --ignored) but is not on the PATH",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .current_dir(root)
        .args(["run", "-q", "--plot", "scenarios/quickstart.toml", "--out"])
        .arg(&run)
        .args([
            "--set",
            "simulation.duration=\"4d\"",
            "--set",
            "host_group.0.count=150",
            "--set",
            "output.transitions=false",
            // Wrong results that collide, so that every chart, the science error
            // chart too, has data to draw (a chart whose panels are all blank
            // shrinks to strips).
            "--set",
            "host_group.0.wrong_result_prob=0.05",
            "--set",
            "project.main.app.wrong_output_collision_frac=1.0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The chart files: a PNG and an SVG per chart.
    let mut svgs = 0;
    for e in std::fs::read_dir(run.join("plots")).unwrap() {
        let path = e.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        match path.extension().and_then(|x| x.to_str()) {
            Some("svg") => {
                svgs += 1;
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.starts_with("<svg"), "{}", path.display());
                assert!(text.trim_end().ends_with("</svg>"), "{}", path.display());
                assert!(text.contains("<text"), "{} has no text", path.display());
                assert!(path.with_extension("png").is_file(), "{}", path.display());
            }
            Some("png") => {
                assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
                assert!(bytes.len() > 10_000, "{} is nearly empty", path.display());
                // IHDR: width and height, big-endian, at bytes 16..24.
                let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
                let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
                // Blank panels of stacked charts shrink to strips, so a chart with
                // one full panel is at least 300 px tall.
                assert!(w >= 1000 && h >= 300, "{}: {w}x{h}", path.display());
            }
            // The marker that makes plots/ boinc-sim's (src/stats/outdir.rs).
            _ if path.file_name().is_some_and(|n| n == ".boinc-sim") => {}
            _ => panic!("unexpected file {}", path.display()),
        }
    }
    assert!(svgs >= 10, "only {svgs} charts");

    let page = run.join("report.html");
    let profile = tmp.path().join("chromium-profile");
    let mut cmd = Command::new(&chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", page.display()));
    let (ok, dom, err) = output_within(cmd, Duration::from_secs(120));
    assert!(ok, "chromium failed or timed out:\n{err}");

    let attr = |name: &str| {
        body_attr(&dom, name).unwrap_or_else(|| {
            panic!(
                "<body> has no {name}; the page's script did not run? {}",
                &dom[..dom.len().min(500)]
            )
        })
    };
    assert_eq!(
        attr("data-errors"),
        "0",
        "script errors: {:?}",
        body_attr(&dom, "data-error-messages")
    );
    let expected: usize = attr("data-charts-expected").parse().unwrap();
    let rendered: usize = attr("data-charts-rendered").parse().unwrap();
    assert_eq!(
        expected, svgs,
        "the page expects as many charts as plots/ has"
    );
    assert_eq!(rendered, expected, "charts rendered with a non-empty box");
    assert_eq!(dom.matches("<figure class=\"chart\"").count(), svgs);
    assert!(dom.contains("id=\"summary-table\""), "no summary table");
    assert!(dom.contains("<pre class=\"config\">"), "no configuration");
}
