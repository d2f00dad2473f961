//! App versions and hosts with GPUs in scenario files: bad
//! `[[project.NAME.app.version]]` and host-group `coproc` entries fail with the
//! file, `line:column`, key path and what was expected; a seed-policy group with
//! GPUs is refused; and giving hosts GPUs changes no draw of a run whose app has
//! no GPU version.

use boinc_sim::server::db::ResultRow;
use boinc_sim::server::resource::ProcType;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::{Finished, RunOptions};

use crate::common::{self, err, has};

#[test]
fn unknown_version_key_lists_the_valid_keys() {
    let m = err(
        "[project.main.app]\nname = \"a\"\n\n[[project.main.app.version]]\nplan_clas = \"cuda\"\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`project.main.app.version.0.plan_clas`",
            "unknown field `plan_clas`",
            "`plan_class`, `avg_ncpus`, `coproc`, `flops_scale`, `flops_estimate_error`",
        ],
    );
}

#[test]
fn unknown_gpu_type_names_the_types() {
    let m = err("[[project.main.app.version]]\ncoproc = { type = \"nvidai\", count = 1 }\n");
    has(
        &m,
        &[
            "bad.toml:2:19",
            "`project.main.app.version.0.coproc.type`",
            "unknown variant `nvidai`, expected one of `nvidia`, `amd`, `intel`",
        ],
    );
    let m = err("[[project.main.app.version]]\ncoproc = { type = \"amd\", cnt = 1 }\n");
    has(
        &m,
        &[
            "bad.toml:2:26",
            "`project.main.app.version.0.coproc.cnt`",
            "expected `type` or `count`",
        ],
    );
}

#[test]
fn impossible_version_values_are_each_reported() {
    let m = err("[[project.main.app.version]]\navg_ncpus = 0\n\
         [[project.main.app.version]]\nplatform = \"linux\"\ncoproc = { type = \"amd\", count = 0 }\n\
         [[project.main.app.version]]\nflops_estimate_error = -1\n");
    has(
        &m,
        &[
            "bad.toml:2:1: `project.main.app.version.0.avg_ncpus`: avg_ncpus = 0 is not positive",
            "bad.toml:4:1: `project.main.app.version.1.platform`: unknown platform `linux`; expected \"\" (every host's own) or one of: x86_64-pc-linux-gnu",
            "bad.toml:5:26: `project.main.app.version.1.coproc.count`",
            "bad.toml:7:1: `project.main.app.version.2.flops_estimate_error`",
        ],
    );
}

#[test]
fn two_versions_of_one_platform_and_plan_class() {
    let m = err(
        "[[project.main.app.version]]\nplan_class = \"mt\"\navg_ncpus = 4\n\
         [[project.main.app.version]]\nplan_class = \"mt\"\n",
    );
    has(
        &m,
        &[
            "bad.toml:5:1",
            "`project.main.app.version.1.plan_class`",
            "expected one version per platform and plan class",
        ],
    );
}

#[test]
fn the_seed_client_refuses_gpus() {
    let m = err("[project.main]\n[[host_group]]\ncount = 2\n\
         coproc = [{ type = \"nvidia\", count = 1, peak_flops = 1e12 }]\n");
    has(
        &m,
        &[
            "bad.toml:4:1",
            "`host_group.0.coproc`",
            "the seed_debt client runs CPU jobs only",
            "policy = \"modern_rec\"",
        ],
    );
}

#[test]
fn bad_host_coprocs() {
    let modern = "[project.main]\n[client]\npolicy = \"modern_rec\"\n[[host_group]]\ncount = 2\n";
    let m = err(&format!(
        "{modern}coproc = [{{ type = \"nvidia\", count = 1 }}]\n"
    ));
    has(
        &m,
        &[
            "bad.toml:6:11",
            "`host_group.0.coproc.0`",
            "missing field `peak_flops`",
        ],
    );
    let m = err(&format!(
        "{modern}coproc = [{{ type = \"amd\", count = 0, peak_flops = -1 }}, \
         {{ type = \"amd\", peak_flops = 1e12 }}]\ngpu_active_frac = 1.5\n"
    ));
    has(
        &m,
        &[
            "`host_group.0.coproc.0.count`: count = 0 is too small; expected an integer >= 1",
            "`host_group.0.coproc.0.peak_flops`: peak_flops = -1; expected FLOPS > 0",
            "`host_group.0.coproc.1.type`: this GPU type is listed twice",
            "bad.toml:7:1: `host_group.0.gpu_active_frac`",
        ],
    );
}

/// A modern-client run of 30 hosts for two days of a CPU-only app, with `extra`
/// added to the group.
fn run(extra: &str) -> Finished<StatsRecorder> {
    let text = format!(
        r#"[simulation]
seed = 5
duration = "2d"

[client]
policy = "modern_rec"

[project.main.workunit]
rsc_fpops_est = 3.6e12

[project.main.daemons]
db_purge = 0

# GPUs raise max_jobs_per_rpc by gpu_multiplier per GPU; 0 leaves it as without.
[project.main.config]
gpu_multiplier = 0

[project.main.work_generator]
mode = "cushion"
cushion = 50

[[host_group]]
count = 30
p_ncpus = 2
p_fpops = {{ dist = "uniform", min = 5e8, max = 2e9 }}
{extra}
"#
    );
    common::run_text(&text, "gpus.toml", &RunOptions::default())
}

fn results(done: &Finished<StatsRecorder>) -> Vec<ResultRow> {
    done.projects[0]
        .db
        .results
        .iter()
        .map(|(_, r)| r.clone())
        .collect()
}

#[test]
fn gpus_draw_from_their_own_stream() {
    let plain_run = run("");
    let gpu_run = run(
        "coproc = [{ type = \"nvidia\", count = 2, peak_flops = { dist = \"uniform\", min = 1e11, max = 1e12 } }]",
    );
    // Each client holds its GPUs, and its host row on the server has what its
    // requests said.
    for (hi, h) in gpu_run.hosts.iter().enumerate() {
        assert_eq!(h.coprocs.len(), 1, "host {hi}");
        let c = h.coprocs[0];
        assert_eq!((c.kind, c.count), (ProcType::Nvidia, 2));
        assert!((1e11..1e12).contains(&c.peak_flops), "{}", c.peak_flops);
    }
    assert!(gpu_run.hosts[0].coprocs[0].peak_flops != gpu_run.hosts[1].coprocs[0].peak_flops);
    let rows: Vec<_> = gpu_run.projects[0].db.hosts.iter().collect();
    assert_eq!(rows.len(), 30);
    for (_, row) in rows {
        assert!(gpu_run.hosts.iter().any(|h| *h.coprocs == *row.coprocs));
    }
    assert!(plain_run.hosts.iter().all(|h| h.coprocs.is_empty()));
    let (plain, gpus) = (results(&plain_run), results(&gpu_run));
    assert!(plain.len() > 30, "{} results", plain.len());
    assert_eq!(plain.len(), gpus.len());
    for (a, b) in plain.iter().zip(&gpus) {
        assert_eq!(
            (
                a.hostid,
                a.sent_time,
                a.received_time,
                a.cpu_time,
                a.flops_estimate
            ),
            (
                b.hostid,
                b.sent_time,
                b.received_time,
                b.cpu_time,
                b.flops_estimate
            ),
            "result {}",
            a.id
        );
        assert_eq!(a.app_version_id, b.app_version_id);
    }
}

#[test]
fn the_single_app_table_keeps_its_precise_errors() {
    let m = err("[project.main.app]\nnme = \"a\"\n");
    has(
        &m,
        &[
            "bad.toml:2:1",
            "`project.main.app.nme`",
            "expected one of `name`",
        ],
    );
}
