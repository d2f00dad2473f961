
/// Background projects listed one by one (`[[host_group.background.project]]`):
/// every host gets exactly these, in order, each with its share; the entries' keys
/// left out are the section's.
#[test]
fn listed_background_projects_are_every_hosts() {
    let text = r#"[simulation]
seed = 5
duration = "3d"

[client]
policy = "modern_rec"

[project.main.workunit]
rsc_fpops_est = 3.6e12
rsc_fpops_bound = 3.6e13

[[host_group]]
count = 4
p_ncpus = 2

[host_group.background]
job_duration = "2h"
delay_bound = "5d"

[[host_group.background.project]]
share = 50

[[host_group.background.project]]
share = 250
job_flops = 1.8e13
"#;
    let done = common::run_text(text, "listed.toml", &boinc_sim::world::RunOptions::CHECKED);
    for h in &done.hosts {
        let shares: Vec<(bool, f64)> = h
            .projects
            .iter()
            .map(|p| (p.is_background(), p.resource_share))
            .collect();
        assert_eq!(shares, [(false, 100.0), (true, 50.0), (true, 250.0)]);
        assert!(h.projects[1].njobs > 0 && h.projects[2].njobs > 0);
        assert!(h.projects[1].cpu_time > 0.0 && h.projects[2].cpu_time > 0.0);
    }
    // The server saw only the hosts' RPCs to `main`.
    let to_main: u64 = done.hosts.iter().map(|h| h.projects[0].nrpcs).sum();
    assert_eq!(done.counters.rpcs, to_main);
    let base = "[project.a]\n\n[[host_group]]\ncount = 1\n[host_group.background]\n";
    let m = err(&format!(
        "{base}projects = 1\njob_duration = \"1h\"\n[[host_group.background.project]]\nshare = 5\n"
    ));
    has(&m, &["host_group.0.background.projects", "expected one of them"]);
    let m = err(&format!("{base}[[host_group.background.project]]\nshare = 5\n"));
    has(&m, &["host_group.0.background.project.0", "no job size"]);
    let m = err(&format!(
        "{base}share = {{ dist = \"uniform\", min = 1, max = 2 }}\njob_duration = \"1h\"\n[[host_group.background.project]]\n"
    ));
    has(&m, &["host_group.0.background.project.0.share", "expected a share for each"]);
    let m = err(&format!("{base}job_duration = \"1h\"\n"));
    has(&m, &["host_group.0.background", "no background project"]);
}
