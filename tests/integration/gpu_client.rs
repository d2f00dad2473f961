//! The modern client with GPUs and multi-threaded jobs: GPU hosts
//! ask for GPU work per resource and run it on their GPUs, multi-threaded jobs use
//! several CPUs, and every step of the run passes the invariants (CPUs and GPU
//! instances of the running tasks, per-resource buffers).

use boinc_sim::server::db::ResultRow;
use boinc_sim::server::types::HostId;
use boinc_sim::stats::recorder::StatsRecorder;
use boinc_sim::world::{Finished, RunOptions};

use crate::common;

/// Two days of 20 CPU-only hosts and 20 hosts with one NVIDIA GPU, a CPU version
/// and `versions`, under `--check-invariants`.
fn run(versions: &str, gpu_hosts: &str) -> Finished<StatsRecorder> {
    let text = format!(
        r#"[simulation]
seed = 7
duration = "2d"

[client]
policy = "modern_rec"

[project.main.workunit]
rsc_fpops_est = 4.32e13
rsc_fpops_bound = 4.32e14

[project.main.config]
gpu_multiplier = 8

[project.main.work_generator]
mode = "cushion"
cushion = 100

[[project.main.app.version]]
plan_class = ""

{versions}

[[host_group]]
name = "cpu"
count = 20
p_ncpus = 4
p_fpops = {{ dist = "uniform", min = 1e9, max = 3e9 }}

[[host_group]]
name = "gpu"
count = 20
p_ncpus = 8
p_fpops = {{ dist = "uniform", min = 1e9, max = 3e9 }}
{gpu_hosts}
"#
    );
    common::run_text(&text, "gpu.toml", &RunOptions::CHECKED)
}

const CUDA: &str = r#"[[project.main.app.version]]
plan_class = "cuda"
avg_ncpus = 0.2
coproc = { type = "nvidia", count = 1 }
flops_scale = 0.1"#;

const GPUS: &str = r#"coproc = [{ type = "nvidia", count = 1, peak_flops = { dist = "uniform", min = 1e12, max = 3e12 } }]
gpu_active_frac = 0.8"#;

fn results(done: &Finished<StatsRecorder>) -> Vec<ResultRow> {
    done.projects[0]
        .db
        .results
        .iter()
        .map(|(_, r)| r.clone())
        .filter(|r| r.hostid != HostId(0))
        .collect()
}

/// The server's host id of each client host, by client index.
fn group_of_hostid(done: &Finished<StatsRecorder>, hostid: u32) -> u16 {
    done.hosts
        .iter()
        .find(|h| h.projects[0].hostid == HostId(hostid))
        .map(|h| h.group)
        .expect("a client has the host id")
}

#[test]
fn gpu_hosts_fetch_gpu_work_and_take_most_of_it() {
    let done = run(CUDA, GPUS);
    let rows = results(&done);
    let (mut cuda, mut cpu_on_gpu_hosts, mut cpu_on_cpu_hosts) = (0, 0, 0);
    for r in &rows {
        let g = group_of_hostid(&done, r.hostid.0);
        match (r.app_version_id, g) {
            (2, 1) => cuda += 1,
            (2, _) => panic!(
                "result {} of the CUDA version went to a CPU-only host",
                r.id
            ),
            (_, 1) => cpu_on_gpu_hosts += 1,
            _ => cpu_on_cpu_hosts += 1,
        }
    }
    // A GPU at a tenth of 1–3 TFLOPS does a 43.2-TFLOP job in 2.4–7.2 minutes.
    assert!(
        cuda > 4 * (cpu_on_gpu_hosts + cpu_on_cpu_hosts),
        "{cuda} CUDA results, {cpu_on_gpu_hosts} + {cpu_on_cpu_hosts} CPU"
    );
    assert!(cpu_on_cpu_hosts > 0 && cpu_on_gpu_hosts > 0);
    // GPU time is accounted on the GPU hosts only; a CUDA result reports a fifth of
    // its elapsed time as CPU time.
    for h in &done.hosts {
        let p = &h.projects[0];
        assert_eq!(p.gpu_time > 0.0, h.group == 1, "host {}", h.index);
    }
    for r in rows
        .iter()
        .filter(|r| r.app_version_id == 2 && r.elapsed_time > 0.0)
    {
        assert!(
            (r.cpu_time - 0.2 * r.elapsed_time).abs() <= 1e-9 * r.elapsed_time,
            "result {}",
            r.id
        );
    }
    // The same scenario and seed give the same results.
    let again = results(&run(CUDA, GPUS));
    assert_eq!(rows.len(), again.len());
    for (a, b) in rows.iter().zip(&again) {
        assert_eq!(
            (a.hostid, a.sent_time, a.received_time, a.cpu_time),
            (b.hostid, b.sent_time, b.received_time, b.cpu_time)
        );
    }
}

/// A 4-thread CPU version that the server believes faster than the plain one:
/// the hosts run 4-CPU jobs and never oversubscribe their CPUs (checked at every
/// step), and each host's CPU time is four times its jobs' elapsed time.
#[test]
fn multi_threaded_jobs_use_their_cpus() {
    let mt = r#"[[project.main.app.version]]
plan_class = "mt"
avg_ncpus = 4

# Keep the reported rows in the database to look at them.
[project.main.db_purge]
min_age = "10d""#;
    let done = run(mt, "");
    let rows = results(&done);
    let n_mt = rows.iter().filter(|r| r.app_version_id == 2).count();
    assert!(n_mt > rows.len() / 2, "{n_mt} of {}", rows.len());
    // The server keeps a multi-threaded result's elapsed time as reported (BOINC
    // raises it to the CPU time only for single-threaded versions): a successful
    // 4-thread job reports 4 CPU-seconds per elapsed second (errors too, up to
    // the moment they stopped).
    let ok: Vec<_> = rows
        .iter()
        .filter(|r| r.app_version_id == 2 && r.received_time != 0 && r.cpu_time > 0.0)
        .collect();
    assert!(!ok.is_empty());
    for r in ok {
        assert!(
            (r.cpu_time - 4.0 * r.elapsed_time).abs() <= 1e-6 * r.cpu_time,
            "result {}: cpu {} elapsed {}",
            r.id,
            r.cpu_time,
            r.elapsed_time
        );
    }
    // And the client's own accounting: a 4-thread job at 4·p_fpops uses 4 CPUs.
    for h in &done.hosts {
        let p = &h.projects[0];
        assert!(p.cpu_time > 0.0, "host {}", h.index);
        // FLOPs at 4·p_fpops per elapsed second are p_fpops per CPU second.
        let expect = h.p_fpops * p.cpu_time;
        assert!(
            (p.flops_used - expect).abs() <= 1e-9 * expect,
            "host {}",
            h.index
        );
    }
}
