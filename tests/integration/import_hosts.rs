//! A project's own hosts (docs/population.md): the shipped host export and client
//! state run from the command line, and broken files are refused with the file,
//! line and field, the scenario key that named them, and exit code 2.

use crate::common::{has, root, run, text};
use std::path::Path;

/// `check` and `run` of a shipped scenario succeed; returns the run's hosts.csv.
fn check_and_run(scenario: &str, out: &Path) -> String {
    let o = run(&["check", scenario]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&[
        "run",
        scenario,
        "--check-invariants",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::read_to_string(out.join("hosts.csv")).unwrap()
}

#[test]
fn the_shipped_host_export_replays_and_resamples() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = check_and_run("scenarios/project-hosts.toml", &dir.path().join("run"));
    let rows: Vec<&str> = hosts.lines().skip(1).collect();
    let replayed = rows.iter().filter(|r| r.contains(",replayed,")).count();
    let resampled = rows.iter().filter(|r| r.contains(",resampled,")).count();
    // The records present in the 4 days before the sample's latest rpc_time.
    assert_eq!(replayed, 85);
    assert_eq!(resampled, 200);
    // Each host has its record's CPUs: the sample's CPU counts only.
    for r in &rows {
        let ncpus: u32 = r.split(',').nth(3).unwrap().parse().unwrap();
        assert!([4, 6, 8, 12, 16, 20, 28, 64].contains(&ncpus), "{r}");
    }
    // A replayed host is its record: CPUs, speed, and its stay from create_time to
    // rpc_time, relative to the latest rpc_time minus the 4 days.
    let t =
        boinc_sim::scenario::import::hosts::read(&root().join("scenarios/hosts/host-sample.xml"))
            .unwrap();
    let start = t.latest_rpc() - 4 * 86_400;
    let present: Vec<_> = (t.records.iter())
        .filter(|r| r.rpc_time > start && r.create_time < start + 4 * 86_400)
        .collect();
    for (row, r) in rows.iter().zip(&present) {
        let c: Vec<&str> = row.split(',').collect();
        assert_eq!(c[3], r.ncpus.to_string(), "{row}");
        assert_eq!(c[4].parse::<f64>().unwrap(), r.p_fpops, "{row}");
        assert_eq!(c[5], (r.create_time - start).max(0).to_string(), "{row}");
        let left = r.rpc_time - start;
        if left < 4 * 86_400 {
            assert_eq!(c[6], left.to_string(), "{row}");
        }
    }
}

#[test]
fn the_shipped_client_state_runs() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = check_and_run("scenarios/client-state.toml", &dir.path().join("run"));
    let mut lines = hosts.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    // host_info's 8 CPUs and p_fpops 4.5e9; there from 1 s, to the end.
    assert_eq!(
        &row[1..7],
        ["volunteer", "modern_rec", "8", "4500000000.0", "1", ""]
    );
    // The client's other CPU project is a background project with its share (the
    // GPU-only one is left out): alpha's 100 beside its 50 entitle alpha to 2/3.
    assert_eq!(col("background_projects"), "1");
    assert_eq!(col("background_share"), "50.0");
    let target: f64 = col("alpha_target_frac").parse().unwrap();
    assert!((target - 2.0 / 3.0).abs() < 1e-9, "{target}");
    let got: f64 = col("alpha_cpu_frac").parse().unwrap();
    assert!(got > 0.0 && got < 1.0, "alpha got {got} of the CPU");
    assert!(col("background_jobs_received").parse::<u32>().unwrap() > 0);
}

/// A scenario in a temporary folder with `file` beside it, checked from the
/// command line: the refusal's message.
fn refused(scenario: &str, name: &str, file: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), file).unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, scenario).unwrap();
    let o = run(&["check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let m = text(&o.stderr);
    assert!(!m.contains("panicked"), "{m}");
    m
}

const PROJECT: &str = "[project.main]\n\n";

#[test]
fn a_broken_host_export_is_refused_with_its_line_and_field() {
    let sample = std::fs::read_to_string(root().join("scenarios/hosts/host-sample.xml")).unwrap();
    let broken = sample.replacen("<p_fpops>", "<p_fpops>x", 1);
    let line = 1 + broken[..broken.find("<p_fpops>x").unwrap()]
        .matches('\n')
        .count();
    let m = refused(
        &format!("{PROJECT}[[host_group]]\nhosts_file = \"h.xml\"\n"),
        "h.xml",
        broken.as_bytes(),
    );
    has(
        &m,
        &[
            "s.toml:4:1:",
            "`host_group.0.hosts_file`",
            &format!("h.xml:{line}:3: field `p_fpops` of host "),
            "is not a number",
        ],
    );
}

#[test]
fn a_truncated_gzip_export_is_refused() {
    let gz = std::fs::read(root().join("scenarios/hosts/host-sample.xml.gz")).unwrap();
    let m = refused(
        &format!(
            "{PROJECT}[[host_group]]\nhosts_file = \"h.xml.gz\"\nhosts_mode = \"resample\"\ncount = 3\n"
        ),
        "h.xml.gz",
        &gz[..gz.len() / 3],
    );
    has(
        &m,
        &[
            "`host_group.0.hosts_file`",
            "the compressed file ends early",
        ],
    );
}

#[test]
fn a_gpu_without_its_speed_is_refused() {
    let sample = std::fs::read(root().join("scenarios/hosts/host-sample.xml")).unwrap();
    // The modern client runs GPU jobs, so it needs the GPUs' speed.
    let m = refused(
        &format!(
            "{PROJECT}[client]\npolicy = \"modern_rec\"\n\n[[host_group]]\nhosts_file = \"h.xml\"\n"
        ),
        "h.xml",
        &sample,
    );
    has(
        &m,
        &[
            "`host_group.0.hosts_file`",
            "GPU(s) but the export gives no GPU speed",
            "type = \"nvidia\"",
        ],
    );
}

#[test]
fn a_broken_client_state_is_refused() {
    let sample =
        std::fs::read_to_string(root().join("scenarios/hosts/client_state-sample.xml")).unwrap();
    let broken = sample.replace("<on_frac>0.800000", "<on_frac>often");
    let m = refused(
        "[project.alpha]\n\n[[host_group]]\nclient_state = \"cs.xml\"\n",
        "cs.xml",
        broken.as_bytes(),
    );
    has(
        &m,
        &[
            "s.toml:4:1:",
            "`host_group.0.client_state`",
            "cs.xml:23:5: field `on_frac` of <time_stats>",
        ],
    );
    let m = refused(
        "[project.beta]\n\n[[host_group]]\nclient_state = \"cs.xml\"\n",
        "cs.xml",
        sample.as_bytes(),
    );
    has(
        &m,
        &[
            "none of the client's projects",
            "expected a <project_name> or <master_url> equal to one of: beta",
        ],
    );
}

#[test]
fn importer_keys_are_checked() {
    let m = crate::common::err(&format!(
        "{PROJECT}[[host_group]]\nhosts_file = \"h.xml\"\ncount = 3\n"
    ));
    has(&m, &["`host_group.0.count`", "one host per record"]);
    let m = crate::common::err(&format!(
        "{PROJECT}[[host_group]]\ncount = 3\nhosts_mode = \"resample\"\n"
    ));
    has(
        &m,
        &["`host_group.0.hosts_mode`", "expected hosts_file too"],
    );
    let m = crate::common::err(&format!(
        "{PROJECT}[[host_group]]\nhosts_file = \"h.xml\"\nhosts_mode = \"resample\"\n"
    ));
    has(&m, &["`host_group.0`", "missing field `count`"]);
}

/// The server's host rows of a host export's hosts carry their records' operating
/// system and CPU names, and hosts with the same three names share one copy of them.
#[test]
fn imported_host_rows_share_their_records_names() {
    let path = root().join("scenarios/project-hosts.toml");
    let loaded = boinc_sim::scenario::load::load(&path, &[], None).unwrap();
    let opts = boinc_sim::world::RunOptions::default();
    let f = boinc_sim::stats::recorder::StatsRecorder::world(&loaded, &opts, None)
        .run()
        .unwrap();
    let t =
        boinc_sim::scenario::import::hosts::read(&root().join("scenarios/hosts/host-sample.xml"))
            .unwrap();
    let in_export: std::collections::BTreeSet<[String; 3]> = (t.records.iter())
        .map(|r| [r.os_name, r.p_vendor, r.p_model].map(|k| t.text(k).to_string()))
        .collect();
    let mut triples = std::collections::BTreeSet::new();
    let mut copies = std::collections::BTreeSet::new();
    for (_, h) in f.projects[0].db.hosts.iter() {
        let n = &h.names;
        let triple = [&n.os_name, &n.p_vendor, &n.p_model].map(|s| s.to_string());
        assert!(in_export.contains(&triple), "{triple:?} is no record's");
        triples.insert(triple);
        copies.insert(std::sync::Arc::as_ptr(n));
    }
    assert!(triples.len() > 1, "{triples:?}");
    // Two groups read the export (its plain and its gzip copy): at most one copy of
    // each triple per group.
    assert!(copies.len() <= 2 * triples.len(), "{} copies", copies.len());
    assert!(copies.len() >= triples.len());
}
