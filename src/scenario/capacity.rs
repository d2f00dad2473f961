//! Sizes that cannot fit in memory are refused before anything is allocated: a
//! `count = 4e9` host group must end in a clear error, not in the
//! kernel's out-of-memory killer an hour later.
//!
//! The estimate is a lower bound, so a run that would fit is never refused: each
//! simulated host costs at least [`BYTES_PER_HOST`] (measured), and each workunit a
//! batch work generator creates up front at least one workunit row and one result
//! row (their struct sizes). The limit is the machine's memory (`MemTotal` in
//! `/proc/meminfo`); where it cannot be read, [`FALLBACK_LIMIT`].

use super::Problem;
use super::schema::ScenarioFile;
use crate::server::config::WorkGenMode;
use crate::server::db::{ResultRow, WorkunitRow};

/// Memory one simulated host takes, at least: measured with `bench` on
/// `quickstart.toml` at 1,000 and 20,000 hosts over 2 simulated days (peak RSS 26 and
/// 390 MiB: 19.6 KiB per host, its client state plus its share of the server's rows),
/// rounded down.
pub(crate) const BYTES_PER_HOST: u64 = 16 * 1024;

/// Memory one slot of the feeder's cache takes, at least: the slot's result id, its
/// job class and its two bits (`server::job_cache::Cache::new`).
pub(crate) const CACHE_SLOT_BYTES: u64 = 12;

/// Memory one of a host's project slots takes (the client's per-project state).
const PROJECT_SLOT_BYTES: u64 = std::mem::size_of::<crate::client::host::ProjectState>() as u64;

/// The limit where the machine's memory cannot be read: 64 GiB.
pub(crate) const FALLBACK_LIMIT: u64 = 64 << 30;

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`).
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The process's address-space limit (`setrlimit(RLIMIT_AS)`, `ulimit -v`), from
/// `/proc/self/limits`, when it has one.
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    // "Max address space   <soft>   <hard>   bytes": the soft limit is the one in force.
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The memory a run may use, in bytes: the machine's, or less where the process is
/// limited, so that a scenario refused under a limit is refused before it starts,
/// not killed part way.
pub(crate) fn memory_limit() -> u64 {
    let machine = machine_memory().unwrap_or(FALLBACK_LIMIT);
    address_space_limit().map_or(machine, |l| l.min(machine))
}

/// `bytes` in binary units for messages: `3.7 TiB`, `15.5 GiB`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The lower bound of the memory `file` needs, in bytes, and the key path of its
/// largest part (the key a user would change).
pub fn estimate(file: &ScenarioFile) -> (u64, String) {
    let mut total: u64 = 0;
    let mut largest = (0u64, "host_group".to_string());
    let mut add = |bytes: u64, path: String| {
        total = total.saturating_add(bytes);
        if bytes > largest.0 {
            largest = (bytes, path);
        }
    };
    for (i, g) in file.host_group.iter().enumerate() {
        add(
            u64::from(g.count).saturating_mul(BYTES_PER_HOST),
            format!("host_group.{i}.count"),
        );
        // Each host's background projects: a project slot each (at most 64).
        if let Some(b) = &g.background {
            let per_host = if b.project.is_empty() {
                b.projects.map_or(0.0, |d| d.mean().clamp(0.0, 64.0))
            } else {
                b.project.len() as f64
            };
            let bytes = (per_host * PROJECT_SLOT_BYTES as f64) as u64;
            add(
                u64::from(g.count).saturating_mul(bytes),
                format!("host_group.{i}.background.projects"),
            );
        }
        // A host export's table, shared by the group's hosts (its records are
        // counted in `count` when replayed).
        if let Some(t) = &g.import_data.hosts {
            add(t.bytes(), format!("host_group.{i}.hosts_file"));
        }
    }
    let (wu_row, result_row) = (
        std::mem::size_of::<WorkunitRow>() as u64,
        std::mem::size_of::<ResultRow>() as u64,
    );
    for (name, p) in &file.project {
        // The feeder's cache: a slot, its job class and its bits (`job_cache`).
        add(
            u64::from(p.config.shmem_work_items).saturating_mul(CACHE_SLOT_BYTES),
            format!("project.{name}.config.shmem_work_items"),
        );
        for (k, a) in p.apps().enumerate() {
            let g = a.work_generator;
            let key = |what: &str| {
                if a.app.work_generator.is_none() {
                    format!("project.{name}.work_generator.{what}")
                } else if p.app.len() == 1 {
                    format!("project.{name}.app.work_generator.{what}")
                } else {
                    format!("project.{name}.app.{k}.work_generator.{what}")
                }
            };
            // A workunit costs its row and its first results' rows.
            let replication = a.workunit.target_nresults.max(1) as u64;
            let per_wu = wu_row.saturating_add(replication.saturating_mul(result_row));
            match g.mode {
                // Created at once, in the first pass.
                WorkGenMode::Batch | WorkGenMode::Batches => {
                    add(u64::from(g.count).saturating_mul(per_wu), key("count"))
                }
                // Up to `cushion` unsent results at a time (spec backend §2.1).
                WorkGenMode::Cushion => add(
                    (u64::from(g.cushion) / replication).saturating_mul(per_wu),
                    key("cushion"),
                ),
                // One workunit per interval: those due at one pass, at least.
                WorkGenMode::Rate => {
                    let pass = p.daemons.work_generator.0.max(1) as u64;
                    let due = pass / (g.interval.0.max(1) as u64);
                    add(due.max(1).saturating_mul(per_wu), key("interval"));
                }
                WorkGenMode::None => {}
            }
        }
    }
    // Scripted creations: each event's workunits exist at once.
    for (i, ev) in file.event.iter().enumerate() {
        if let Some(b) = &ev.submit_batch {
            add(
                u64::from(b.jobs).saturating_mul(wu_row + result_row),
                format!("event.{i}.submit_batch.jobs"),
            );
        }
        if let Some(n) = ev.create_workunits {
            add(
                u64::from(n).saturating_mul(wu_row + result_row),
                format!("event.{i}.create_workunits"),
            );
        }
    }
    (total, largest.1)
}

/// A [`Problem`] when `file` cannot fit in `limit` bytes, at the key of its largest
/// part, saying both numbers.
pub fn check(file: &ScenarioFile, limit: u64) -> Option<Problem> {
    let (need, path) = estimate(file);
    (need > limit).then(|| {
        let per_host = if path.starts_with("host_group.") {
            format!(" (about {} per host)", format_bytes(BYTES_PER_HOST))
        } else {
            String::new()
        };
        Problem {
            path,
            message: format!(
                "this scenario needs at least {} of memory{per_host}, more than the {} this run may use; expected a smaller value",
                format_bytes(need),
                format_bytes(limit)
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(16 * 1024), "16.0 KiB");
        assert_eq!(format_bytes(4_000_000_000 * BYTES_PER_HOST), "59.6 TiB");
    }
}
