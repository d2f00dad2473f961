//! `manifest.json`: what made a run folder, so any figure in it can be traced back to
//! the run that produced it: the crate version, the scenario file and its content
//! hash, the seed, the `--set` overrides, the effective configuration, and the list
//! of files. Deterministic: no wall-clock time or host name, so two runs of one
//! scenario and seed write identical manifests.

use crate::scenario::load::Loaded;
use std::io;
use std::path::Path;

/// The file's name; `super::outdir` owns it, as a boinc-sim manifest marks a folder
/// boinc-sim wrote.
pub(crate) use super::outdir::MANIFEST_JSON;

/// Writes `manifest.json` into `dir`, listing the files already there plus itself and
/// `summary.json`, which the output writer adds last (sorted).
pub fn write(dir: &Path, loaded: &Loaded, sets: &[String]) -> io::Result<()> {
    let mut files: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for f in [MANIFEST_JSON, super::output::SUMMARY_JSON] {
        if !files.iter().any(|x| x == f) {
            files.push(f.to_string());
        }
    }
    files.sort();
    let m = serde_json::json!({
        "crate": env!("CARGO_PKG_NAME"),
        "crate_version": env!("CARGO_PKG_VERSION"),
        "scenario_file": loaded.origin,
        "scenario_hash": loaded.hash,
        "scenario_name": loaded.file.simulation.name,
        "seed": loaded.file.simulation.seed,
        "duration_s": loaded.file.simulation.duration.get(),
        "overrides": sets,
        "files": files,
        "effective_config": serde_json::to_value(&loaded.file).unwrap_or_default(),
    });
    let mut text = serde_json::to_string_pretty(&m).map_err(io::Error::other)?;
    text.push('\n');
    std::fs::write(dir.join(MANIFEST_JSON), text)
}
