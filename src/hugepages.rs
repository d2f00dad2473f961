//! glibc's allocator set for the simulator's heap: transparent huge pages, and a
//! fixed mmap threshold (docs/performance.md, "Huge pages").
//!
//! With many hosts nearly every event starts with a cache miss on its host, its jobs
//! and its server rows, scattered over gigabytes; with 4-KiB pages most of those
//! misses also miss the TLB and walk the page tables. Backing the heap with 2-MiB
//! pages removes most of the walks, for the same peak memory (docs/performance.md,
//! "Measurements behind the code").
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
//! faulting in huge pages outweighs the TLB misses saved.
//!
//! The same re-execution fixes glibc's mmap threshold at 2 MiB, a huge page
//! (`glibc.malloc.mmap_threshold`). By default glibc raises the threshold to the
//! size of each mapped block freed, up to 32 MiB, so once large blocks had been
//! freed (the event queue's buckets shrink and regrow all run long), blocks of
//! megabytes came from the heap, where a freed one stays resident and the next
//! larger one goes elsewhere: fragmentation that raised the peak. With the threshold
//! fixed, blocks of 2 MiB or more are mapped on their own (advised for huge pages
//! like the heap), grow and shrink in place, and go back to the system when
//! freed; the tables' chunks (1 to 1.7 MB) and everything smaller stay in the heap.
//!
//! Opt out with `BOINC_SIM_HUGEPAGES=0`. A tunable `GLIBC_TUNABLES` already names is
//! left as the user set it (so is any other platform than Linux with glibc). If the
//! re-execution fails the process simply goes on without it.

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
        let Some(tunables) = with_tunables(&old) else {
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

/// The tunables the re-execution sets: huge pages for the heap, and the mmap
/// threshold fixed at one huge page (see the module comment).
const TUNABLES: [(&str, &str); 2] = [
    ("glibc.malloc.hugetlb", "1"),
    ("glibc.malloc.mmap_threshold", "2097152"),
];

/// `GLIBC_TUNABLES` with each of [`TUNABLES`] it does not name added, or `None` if it
/// names them all (the user's choices stand, and a re-executed process stops here).
fn with_tunables(old: &str) -> Option<String> {
    let named = |name: &str| old.split(':').any(|t| t.split('=').next() == Some(name));
    let added: Vec<String> = (TUNABLES.iter())
        .filter(|(name, _)| !named(name))
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if added.is_empty() {
        return None;
    }
    let old = (!old.is_empty()).then_some(old.to_string());
    Some(old.into_iter().chain(added).collect::<Vec<_>>().join(":"))
}

#[cfg(test)]
mod tests {
    use super::with_tunables;

    #[test]
    fn adds_the_tunables_once_and_keeps_the_users_choices() {
        let both = "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=2097152";
        assert_eq!(with_tunables("").as_deref(), Some(both));
        assert_eq!(
            with_tunables("glibc.malloc.arena_max=2").as_deref(),
            Some(format!("glibc.malloc.arena_max=2:{both}").as_str())
        );
        // A tunable the user named stays theirs; the other is added.
        assert_eq!(
            with_tunables("glibc.malloc.hugetlb=0").as_deref(),
            Some("glibc.malloc.hugetlb=0:glibc.malloc.mmap_threshold=2097152")
        );
        assert_eq!(
            with_tunables("glibc.malloc.mmap_threshold=65536").as_deref(),
            Some("glibc.malloc.mmap_threshold=65536:glibc.malloc.hugetlb=1")
        );
        // Both named (as after the re-execution): nothing to do.
        assert_eq!(with_tunables(both), None);
        assert_eq!(
            with_tunables("a=1:glibc.malloc.mmap_threshold=1:glibc.malloc.hugetlb=2"),
            None
        );
    }
}
