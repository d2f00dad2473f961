//! `population = …` in a host group: the shipped population and population files,
//! merged key by key under the group's own keys, with errors located in the
//! population file (docs/population.md).

use super::common::*;
use boinc_sim::scenario::load::load;

const SCENARIO: &str = r#"
[simulation]
duration = "2d"
[project.main.workunit]
delay_bound = "3d"
[[host_group]]
count = 10
population = "pop.toml"
on_frac = 0.9
[host_group.start]
on_frac = 0.5
"#;

/// A scenario and a population file in a fresh folder.
fn folder(pop: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), SCENARIO).unwrap();
    std::fs::write(d.path().join("pop.toml"), pop).unwrap();
    d
}

#[test]
fn group_keys_win_and_tables_merge_key_by_key() {
    let d =
        folder("error_prob = 0.25\non_frac = 0.1\n\n[start]\non_frac = 0.2\nactive_frac = 0.7\n");
    let s = d.path().join("s.toml");
    let l = load(&s, &[], None).unwrap();
    let g = &l.file.host_group[0];
    assert_eq!(
        g.error_prob,
        boinc_sim::base::dist::Dist::fixed(0.25),
        "from the population"
    );
    assert_eq!(g.on_frac, 0.9, "the group's own key wins");
    let start = g.start.as_ref().unwrap();
    assert_eq!(
        start.on_frac,
        Some(0.5),
        "the group's key inside a merged table wins"
    );
    assert_eq!(
        start.active_frac,
        Some(0.7),
        "the population fills the rest of the table"
    );
    // A --set wins over the population too.
    let l = load(&s, &["host_group.0.error_prob=0.5".into()], None).unwrap();
    assert_eq!(
        l.file.host_group[0].error_prob,
        boinc_sim::base::dist::Dist::fixed(0.5)
    );
    // The population is part of the scenario's identity.
    let d2 = folder("error_prob = 0.3\n");
    let l2 = load(&d2.path().join("s.toml"), &[], None).unwrap();
    assert_ne!(l.hash, l2.hash);
}

#[test]
fn errors_are_located_in_the_population_file() {
    for (pop, want) in [
        (
            "error_prob = \"x\"\n",
            &["pop.toml:1:14", "`error_prob`"][..],
        ),
        // Found by the scenario's validation after the merge, still blamed on the file.
        (
            "# hosts\nerror_prob = 2.0\n",
            &[
                "pop.toml:2:1",
                "`error_prob`",
                "not a probability",
                "population of `host_group.0`",
            ][..],
        ),
        (
            "nonsense = 1\n",
            &["pop.toml:1:1", "unknown field `nonsense`"][..],
        ),
        ("count = 3\n", &["pop.toml:1:1", "not `count`"][..]),
        (
            "[start]\nactive_frac = 7\n",
            &["pop.toml:2:1", "`start.active_frac`"][..],
        ),
        ("error_prob = [\n", &["pop.toml:"][..]),
    ] {
        let d = folder(pop);
        let e = load(&d.path().join("s.toml"), &[], None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        has(&e.to_string(), want);
    }
}

#[test]
fn an_unknown_population_names_the_shipped_ones() {
    let e = err("[project.main]\n[[host_group]]\ncount = 1\npopulation = \"nope\"\n");
    has(
        &e,
        &[
            "bad.toml:4:1",
            "`host_group.0.population`",
            "no shipped population is called `nope`",
            "volunteers",
        ],
    );
    let e = err("[project.main]\n[[host_group]]\ncount = 1\npopulation = \"missing.toml\"\n");
    has(&e, &["cannot read population file", "missing.toml"]);
    let e = err_with(
        "[project.main]\n[[host_group]]\ncount = 1\n",
        &["host_group.0.population=7"],
    );
    has(
        &e,
        &[
            "from --set `host_group.0.population=7`",
            "expected a string",
        ],
    );
}

#[test]
fn the_cli_runs_a_population_and_refuses_a_bad_one() {
    let d = folder("error_prob = 0.25\n");
    let s = d.path().join("s.toml");
    let out = d.path().join("out");
    let o = run(&[
        "run",
        s.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let g = &m["effective_config"]["host_group"][0];
    assert_eq!(
        g["error_prob"], 0.25,
        "the effective configuration shows the population's keys"
    );
    assert_eq!(g["on_frac"], 0.9);
    std::fs::write(d.path().join("pop.toml"), "error_prob = -1\n").unwrap();
    let o = run(&["check", s.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    has(&e, &["pop.toml:1:1", "`error_prob`"]);
    assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
}
