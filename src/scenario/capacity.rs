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

/// The limit where the machine's memory cannot be read: 64 GiB.
pub(crate) const FALLBACK_LIMIT: u64 = 64 << 30;

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`).
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory a run may use, in bytes.
pub(crate) fn memory_limit() -> u64 {
    machine_memory().unwrap_or(FALLBACK_LIMIT)
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
        // A host export's table, shared by the group's hosts (its records are
        // counted in `count` when replayed).
        if let Some(t) = &g.import_data.hosts {
            add(t.bytes(), format!("host_group.{i}.hosts_file"));
        }
    }
    let per_wu = (std::mem::size_of::<WorkunitRow>() + std::mem::size_of::<ResultRow>()) as u64;
    for (name, p) in &file.project {
        for (k, a) in p.apps().enumerate() {
            let g = a.work_generator;
            if g.mode == WorkGenMode::Batch {
                let path = if a.app.work_generator.is_none() {
                    format!("project.{name}.work_generator.count")
                } else if p.app.len() == 1 {
                    format!("project.{name}.app.work_generator.count")
                } else {
                    format!("project.{name}.app.{k}.work_generator.count")
                };
                add(u64::from(g.count).saturating_mul(per_wu), path);
            }
        }
    }
    (total, largest.1)
}

/// A [`Problem`] when `file` cannot fit in `limit` bytes, saying both numbers.
pub fn check(file: &ScenarioFile, limit: u64) -> Option<Problem> {
    let (need, path) = estimate(file);
    (need > limit).then(|| Problem {
        path,
        message: format!(
            "this scenario needs at least {} of memory (about {} per host), more than the {} this machine has; expected a smaller count",
            format_bytes(need),
            format_bytes(BYTES_PER_HOST),
            format_bytes(limit)
        ),
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
