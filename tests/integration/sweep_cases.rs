//! `boinc-sim sweep` with `[[case]]` tables end to end (docs/sweep.md, "Cases"):
//! every case at every point of the parameters' grid, the `case` column in every
//! table, charts that split into panels rather than average over a swept
//! parameter, the adaptive replication level named as such, and bad cases refused
//! before anything runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::text;

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boinc-sim"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .display()
        .to_string()
        .replace('\\', "/")
}

/// The shipped `scenarios/sweeps/replication-policies.toml` (three replication
/// policies as cases × two delay bounds), shrunk to 50 hosts for 3 days, with a
/// second parameter (the bad hosts' error rate, 2 values) so that the charts over
/// two of the three dimensions have the third to split by.
fn policies(dir: &Path) -> PathBuf {
    let shipped = std::fs::read_to_string(scenario("sweeps/replication-policies.toml")).unwrap();
    let text = shipped
        .replace(
            "scenario = \"../science-error.toml\"",
            &format!("scenario = \"{}\"", scenario("science-error.toml")),
        )
        .replace("replications = 3", "replications = 2")
        .replace(
            "\"simulation.duration\" = \"15d\"",
            "\"simulation.duration\" = \"3d\"\n\"host_group.0.count\" = 40\n\"host_group.1.count\" = 10",
        )
        .replace("\"output.warmup\" = \"2d\"", "\"output.warmup\" = \"1d\"")
        + "\n[[parameter]]\nkey = \"host_group.1.wrong_result_prob\"\nvalues = [0.1, 0.3]\n";
    assert!(text.contains("[[case]]") && text.contains("3d"), "{text}");
    let p = dir.join("policies.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The texts of an SVG chart.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn every_case_runs_at_every_point_and_no_chart_averages_over_a_case() {
    let tmp = tempfile::tempdir().unwrap();
    let file = policies(tmp.path());
    let out = tmp.path().join("out");
    let o = bin(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");

    // 3 cases × 2 delay bounds × 2 error rates = 12 points, 2 replications each.
    let mut r = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[..7],
        [
            "point",
            "replication",
            "seed",
            "case",
            "project.main.workunit.delay_bound",
            "project.main.workunit.delay_bound_s",
            "host_group.1.wrong_result_prob"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 24);
    let cases: Vec<&str> = rows.iter().map(|r| r.get(3).unwrap()).collect();
    // The case varies slowest: 4 points (8 runs) per case, in the file's order.
    for (i, c) in cases.iter().enumerate() {
        let want = ["quorum 1", "quorum 2", "adaptive replication"][i / 8];
        assert_eq!(*c, want, "run {i}");
    }
    assert_eq!((&rows[2][4], &rows[2][6]), ("1d", "0.3"));
    let mut s = csv::Reader::from_path(out.join("sweep-summary.csv")).unwrap();
    let h: Vec<String> = s.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        h[..3],
        ["point", "case", "project.main.workunit.delay_bound"]
    );
    let summary: Vec<csv::StringRecord> = s.records().map(|x| x.unwrap()).collect();
    assert_eq!(summary.len(), 12);
    assert_eq!(&summary[11][1], "adaptive replication");

    // design.json records the cases and their keys; best.json names the case.
    let design: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("design.json")).unwrap()).unwrap();
    assert_eq!(design["params"][0], "case");
    assert_eq!(design["cases"][2]["name"], "adaptive replication");
    assert_eq!(
        design["cases"][2]["set"][0],
        "project.main.app.target_nresults=2"
    );
    let best: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("best.json")).unwrap()).unwrap();
    if !best["best"].is_null() {
        let case = best["best"]["parameters"]["case"].as_str().unwrap();
        assert!(
            err.contains(&format!("(case = {case}, delay_bound = ")),
            "{err}"
        );
    }

    // The heatmap over case × delay_bound has one panel per error rate, each cell
    // one point's mean (no mean over the error rates); the cells of quorum 1 differ
    // between the panels.
    let plots = out.join("plots");
    let heat = svg_texts(&plots.join("heatmap_wrong_canonical_frac_case_delay_bound.svg"));
    for t in [
        "Science error rate by case and delay_bound, one panel per wrong_result_prob",
        "wrong_result_prob = 0.1",
        "wrong_result_prob = 0.3",
        "adaptive replication",
    ] {
        assert!(heat.iter().any(|x| x == t), "no `{t}` in {heat:?}");
    }
    // Lines against delay_bound: one per case and error rate (6), one panel; the
    // legend wraps each label after its comma.
    let lines = svg_texts(&plots.join("workunits_valid_per_day_vs_delay_bound.svg"));
    let legend: Vec<String> = lines
        .windows(2)
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect();
    assert!(
        legend
            .iter()
            .any(|x| x == "case = adaptive replication, wrong_result_prob = 0.3"),
        "{lines:?}"
    );
    // Every chart is drawn: nothing to say in plots/README.txt.
    assert!(!plots.join("README.txt").exists());
    let svgs = std::fs::read_dir(&plots)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    // 5 metrics × (3 line charts + 3 heatmaps).
    assert_eq!(svgs, 5 * 6);
}

#[test]
fn an_apps_replication_level_is_printed_as_adaptive_replication() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("ar.toml");
    std::fs::write(
        &p,
        format!(
            r#"[sweep]
scenario = "{}"
metrics = ["workunits_valid_per_day", "wrong_canonical_frac"]

[sweep.set]
"simulation.duration" = "2d"
"host_group.0.count" = 30
"host_group.1.count" = 5
"project.main.workunit.min_quorum" = 1
"project.main.workunit.target_nresults" = 1

[[parameter]]
key = "project.main.app.target_nresults"
values = [0, 2]

[objective]
maximize = "workunits_valid_per_day"
"#,
            scenario("science-error.toml")
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = bin(&["sweep", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("(adaptive replication (app.target_nresults) = "),
        "{err}"
    );
    let chart = svg_texts(
        &out.join("plots")
            .join("workunits_valid_per_day_vs_target_nresults.svg"),
    );
    assert!(
        chart
            .iter()
            .any(|t| t == "Throughput vs adaptive replication (app.target_nresults)"),
        "{chart:?}"
    );
}

#[test]
fn bad_cases_fail_before_any_run_with_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let head = format!(
        "[sweep]\nscenario = \"{}\"\nmetrics = [\"workunits_valid_per_day\"]\n",
        scenario("science-error.toml")
    );
    // (lines added to [sweep], the rest of the file, what the message says).
    let bad: [(&str, &str, &[&str]); 6] = [
        (
            "",
            "[[case]]\nname = \"a\"\n[[case]]\nname = \"a\"\n",
            &[
                ":7:1: `case.1.name`",
                "case name `a` is already used by case 0",
            ],
        ),
        (
            "",
            "[[case]]\nname = \"\"\n",
            &[":5:1: `case.0.name`", "expected a case name"],
        ),
        (
            "",
            "[[case]]\nname = \"q1\"\nset = { \"project.main.workunit.min_quorum\" = 1 }\n\
             [[parameter]]\nkey = \"project.main.workunit.min_quorum\"\nvalues = [1, 2]\n",
            &[
                ":6:9: `case.0.set.\"project.main.workunit.min_quorum\"`",
                "case `q1` sets `project.main.workunit.min_quorum`, which parameter 0 varies",
            ],
        ),
        (
            "",
            "[[case]]\nname = \"fine\"\n[[case]]\nname = \"too high\"\n\
             set = { \"project.main.workunit.min_quorum\" = 3 }\n",
            &[
                ":8:9: `case.1.set.\"project.main.workunit.min_quorum\"`",
                "point 1 (case = too high) is not a valid scenario",
                "min_quorum = 3 is greater than target_nresults = 2",
            ],
        ),
        (
            "",
            "[[case]]\nname = \"q1\"\nset = { project.main.workunit.min_quorum = 1 }\n",
            &[":6:9: `case.0.set.\"project\"`", "an unquoted dotted key"],
        ),
        (
            "design = \"lhs\"\npoints = 3\n",
            "[[case]]\nname = \"a\"\n",
            &[":2:1: `sweep.design`", "expected design = \"grid\""],
        ),
    ];
    for (i, (sweep, rest, says)) in bad.iter().enumerate() {
        let body = format!(
            "{}{rest}",
            head.replace("[sweep]\n", &format!("[sweep]\n{sweep}"))
        );
        let p = tmp.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, &body).unwrap();
        let out = tmp.path().join(format!("out{i}"));
        let o = bin(&[
            "sweep",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "case {i}: {err}");
        assert!(err.starts_with("error: "), "case {i}: {err}");
        for s in *says {
            assert!(err.contains(s), "case {i}: `{s}` not in {err}\n{body}");
        }
        assert!(!out.exists(), "case {i}: a bad sweep created its folder");
    }
}

#[test]
fn a_sampled_design_runs_the_same_sample_in_every_case() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("lhs.toml");
    std::fs::write(
        &p,
        format!(
            r#"[sweep]
scenario = "{}"
design = "lhs"
points = 3
seed = 9
metrics = ["workunits_valid_per_day"]

[sweep.set]
"simulation.duration" = "1d"
"host_group.0.count" = 20
"host_group.1.count" = 2

[[case]]
name = "quorum 1"
set = {{ "project.main.workunit.min_quorum" = 1, "project.main.workunit.target_nresults" = 1 }}

[[case]]
name = "quorum 2"

[[parameter]]
key = "project.main.workunit.delay_bound"
range = {{ from = "1d", to = "5d" }}
"#,
            scenario("science-error.toml")
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = bin(&[
        "sweep",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("sweep-summary.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    // 2 cases × 3 drawn points; the second case (the base scenario) has the same
    // three delay bounds in the same order.
    assert_eq!(rows.len(), 6);
    let cells = |i: usize| (rows[i][1].to_string(), rows[i][2].to_string());
    for i in 0..3 {
        assert_eq!(cells(i).0, "quorum 1");
        assert_eq!(cells(i + 3).0, "quorum 2");
        assert_eq!(cells(i).1, cells(i + 3).1, "point {i}");
    }
}
