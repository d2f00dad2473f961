//! `sweep --emit-slurm DIR`: a ready `sbatch` job-array script that runs the sweep
//! on a Slurm cluster, one array task per shard of points (`docs/cluster.md`).
//!
//! Array task `I` runs `boinc-sim sweep SWEEP --shard I/N --out DIR`, which writes
//! only its own run records (`DIR/shard-I-of-N/runs/`); `boinc-sim sweep-merge DIR`
//! then builds the same tables a local run gives. Paths in the script are absolute,
//! so it can be submitted from anywhere on a shared file system.

use super::{Plan, SweepError};
use std::path::{Path, PathBuf};

pub(crate) const SCRIPT: &str = "sweep.sbatch";

/// An absolute version of `p` (relative to the current folder), without requiring
/// it to exist.
pub(crate) fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Single-quotes a string for the shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The script's text: `shards` array tasks, each with `cpus` CPUs.
pub fn script(
    plan: &Plan,
    exe: &Path,
    sweep: &Path,
    dir: &Path,
    shards: usize,
    cpus: usize,
) -> String {
    let runs = plan.points.len() * plan.replications as usize;
    let exe = sh(&exe.display().to_string());
    let sweep = sh(&sweep.display().to_string());
    let out = sh(&dir.display().to_string());
    let logs = dir.join("logs");
    format!(
        "#!/bin/bash\n\
         # Slurm job array for the boinc-sim sweep `{name}`: {points} points x {reps} \
         replications = {runs} runs,\n\
         # split into {shards} shards (array tasks). Written by `boinc-sim sweep \
         --emit-slurm`; see docs/cluster.md.\n\
         # Submit:   sbatch {script_path}\n\
         # Then:     {exe} sweep-merge {out}\n\
         # Add your site's lines (partition, account, modules) below; rerunning a task \
         skips the runs it finished.\n\
         #SBATCH --job-name=boinc-sim-{name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --cpus-per-task={cpus}\n\
         #SBATCH --output={logs}/%A_%a.out\n\
         #SBATCH --error={logs}/%A_%a.out\n\
         set -euo pipefail\n\
         export RUST_BACKTRACE=0\n\
         exec {exe} sweep {sweep} --shard \"${{SLURM_ARRAY_TASK_ID}}/{shards}\" --out {out} \
         --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet\n",
        name = plan.name,
        points = plan.points.len(),
        reps = plan.replications,
        last = shards - 1,
        logs = logs.display(),
        script_path = dir.join(SCRIPT).display(),
    )
}

/// Writes `DIR/sweep.sbatch` (and `DIR/logs/`). `shards` defaults to one per point,
/// at most 100.
pub fn emit(
    plan: &Plan,
    sweep_file: &Path,
    dir: &Path,
    shards: Option<usize>,
    cpus: usize,
) -> Result<(PathBuf, usize), SweepError> {
    let n = shards.unwrap_or(plan.points.len().min(100)).max(1);
    if n > plan.points.len() {
        return Err(SweepError::Input(format!(
            "--shards {n}: the sweep has only {} points (a shard is a set of points)",
            plan.points.len()
        )));
    }
    let dir = absolute(dir);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs)
        .map_err(|e| SweepError::Failed(format!("cannot create {}: {e}", logs.display())))?;
    let exe = std::env::current_exe()
        .map_err(|e| SweepError::Failed(format!("cannot find this program's path: {e}")))?;
    let text = script(plan, &exe, &absolute(sweep_file), &dir, n, cpus.max(1));
    let path = dir.join(SCRIPT);
    super::aggregate::write_atomic(&path, text.as_bytes())
        .map_err(|e| SweepError::Failed(format!("cannot write {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    }
    Ok((path, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_one_shard_per_array_task() {
        let plan = Plan {
            name: "s".into(),
            sweep_hash: String::new(),
            scenario_hash: String::new(),
            params: vec!["k".into()],
            metrics: vec!["m".into()],
            project: None,
            app: None,
            replications: 3,
            seed: 1,
            points: vec![vec!["1".into()], vec!["2".into()]],
            goal: None,
            warnings: Vec::new(),
            cases: Vec::new(),
            racing: false,
        };
        let t = script(
            &plan,
            Path::new("/opt/boinc-sim"),
            Path::new("/w/it's.toml"),
            Path::new("/w/out"),
            2,
            4,
        );
        assert!(t.starts_with("#!/bin/bash\n"));
        assert!(t.contains("#SBATCH --array=0-1\n"));
        assert!(t.contains("#SBATCH --cpus-per-task=4\n"));
        assert!(t.contains("#SBATCH --output=/w/out/logs/%A_%a.out\n"));
        assert!(t.contains(
            "exec '/opt/boinc-sim' sweep '/w/it'\\''s.toml' --shard \"${SLURM_ARRAY_TASK_ID}/2\" --out '/w/out'"
        ));
        assert!(t.contains("2 points x 3 replications = 6 runs"));
    }
}
