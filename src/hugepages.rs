//! Transparent huge pages for the simulator's heap (docs/performance.md, "Huge
//! pages").
//!
//! With many hosts nearly every event starts with a cache miss on its host, its jobs
//! and its server rows, scattered over gigabytes; with 4-KiB pages most of those
//! misses also miss the TLB and walk the page tables. Backing the heap with 2-MiB
//! pages removes most of the walks: bench-100k with the modern client ran 13 %
//! faster on this project's 2-core machine, with the same peak memory.
//!
//! Where the kernel gives huge pages only to memory that asks for them
//! (`transparent_hugepage=madvise`, the common default), glibc's allocator asks
//! only when the `glibc.malloc.hugetlb=1` tunable is set, and glibc reads its
//! tunables once, when the process starts. So [`enable`] re-executes the binary,
//! once, with the same arguments and the tunable added to `GLIBC_TUNABLES`. `exec`
//! keeps the process id, so the exit status and signals are the re-executed
//! binary's own. It changes where memory comes from, never what the simulation
//! computes: outputs are byte-identical either way.
//!
//! Only the commands that simulate ask for it ([`crate::cli::Command::simulates`]:
//! `run`, `bench`, `sweep`), after the command line is parsed: the others (`check`,
//! `--help`, `compare`, `plot`, `sweep-merge`) are short and gain nothing from a
//! second start. `credit`, which replays a job log without simulating, is left out
//! too: it fills its memory and reads it about once, so the system time spent
//! faulting in huge pages outweighed the TLB misses saved (a quickstart run's
//! 300,000-row log: 0.35 s of system time without them, 0.8 s with them, the same
//! user time).
//!
//! Opt out with `BOINC_SIM_HUGEPAGES=0`. A `GLIBC_TUNABLES` that already names
//! `glibc.malloc.hugetlb` is left alone (so is any other platform than Linux with
//! glibc). If the re-execution fails the process simply goes on without it.

/// The environment variable that turns the re-execution off when set to `0`.
pub(crate) const OPT_OUT: &str = "BOINC_SIM_HUGEPAGES";

/// Re-executes the running binary with huge pages enabled for glibc's allocator,
/// unless they already are, or the user opted out; returns only if it does not.
pub(crate) fn enable() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(OPT_OUT).is_some_and(|v| v == "0") {
            return;
        }
        let old = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        let Some(tunables) = with_hugetlb(&old) else {
            return;
        };
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let argv0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        // `exec` returns only on failure; then the run goes on with small pages.
        let _ = std::process::Command::new(&exe)
            .arg0(argv0)
            .args(args)
            .env("GLIBC_TUNABLES", tunables)
            .exec();
    }
}

/// `GLIBC_TUNABLES` with `glibc.malloc.hugetlb=1` added, or `None` if it already
/// says something about that tunable (the user's choice stands).
fn with_hugetlb(old: &str) -> Option<String> {
    const HUGETLB: &str = "glibc.malloc.hugetlb";
    if old.split(':').any(|t| t.split('=').next() == Some(HUGETLB)) {
        return None;
    }
    Some(if old.is_empty() {
        format!("{HUGETLB}=1")
    } else {
        format!("{old}:{HUGETLB}=1")
    })
}

#[cfg(test)]
mod tests {
    use super::with_hugetlb;

    #[test]
    fn adds_the_tunable_once_and_keeps_the_users_choice() {
        assert_eq!(with_hugetlb("").as_deref(), Some("glibc.malloc.hugetlb=1"));
        assert_eq!(
            with_hugetlb("glibc.malloc.arena_max=2").as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        );
        assert_eq!(with_hugetlb("glibc.malloc.hugetlb=0"), None);
        assert_eq!(with_hugetlb("a=1:glibc.malloc.hugetlb=2"), None);
    }
}
