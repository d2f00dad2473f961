//! What one entity of a run costs in memory, against a stated budget.
//!
//! A million hosts and a simulated year must fit in a workstation's memory
//! (docs/performance.md, "Sizes"), so each entity that a large run holds by the
//! million has a budget in bytes: a host with its first project, a job in flight,
//! a workunit, an event, an imported host record. A field added to a model struct
//! fails nothing while its entity stays within budget; past it, the test names the
//! entity, its budget, and each part's size now against the size recorded here,
//! so the part that grew is read off the message. The recorded sizes are those of
//! docs/performance.md's table; update both together.

use crate::client::availability::Availability;
use crate::client::host::JOB_FILES_BYTES;
use crate::client::host::{ClientHost, ClientJob, JobUsage, ProjectState};
use crate::client::truth::HostTruth;
use crate::engine::queue::ENTRY_BYTES;
use crate::scenario::import::hosts::HostRecord;
use crate::server::db::{HavRow, HostRow, ResultRow, WorkunitRow, WuResults};
use crate::server::transition_index::ENTRY_BYTES as TRANSITION_ENTRY_BYTES;
use std::mem::size_of;

/// One part of an entity: `share` copies of a struct of `now` bytes, recorded at
/// `recorded` bytes. A part "of which" another one is made is listed with share 0:
/// it says what grew inside its container and adds nothing to the total.
struct Part {
    what: &'static str,
    now: usize,
    recorded: usize,
    share: f64,
}

fn part(what: &'static str, now: usize, recorded: usize, share: f64) -> Part {
    Part {
        what,
        now,
        recorded,
        share,
    }
}

/// Fails when `parts` cost more than `budget` bytes, with a table of the parts.
fn within_budget(entity: &str, budget: f64, parts: &[Part]) {
    let total: f64 = parts.iter().map(|p| p.now as f64 * p.share).sum();
    let table: Vec<String> = parts
        .iter()
        .map(|p| {
            let grew = match p.now.cmp(&p.recorded) {
                std::cmp::Ordering::Greater => "  <- grew",
                std::cmp::Ordering::Less => "  (shrank)",
                std::cmp::Ordering::Equal => "",
            };
            let share = if p.share == 0.0 {
                "of which".to_string()
            } else {
                format!("x {}", p.share)
            };
            format!(
                "  {:<44} {:>5} B (recorded {:>5} B) {share}{grew}",
                p.what, p.now, p.recorded
            )
        })
        .collect();
    assert!(
        total <= budget,
        "{entity}: {total} bytes, over its budget of {budget} (docs/performance.md, \
         \"Sizes\"):\n{}",
        table.join("\n")
    );
}

/// A simulated host attached to one project: its client state, its project slot,
/// its row in the project's database and one host app version. About 1 KB before
/// its jobs, which is what lets a million hosts fit in a few gigabytes.
#[test]
fn a_host_fits_its_budget() {
    within_budget(
        "a host with one project",
        1100.0,
        &[
            part("ClientHost", size_of::<ClientHost>(), 464, 1.0),
            part(
                "  its availability (Availability)",
                size_of::<Availability>(),
                88,
                0.0,
            ),
            part("  its truth (HostTruth)", size_of::<HostTruth>(), 48, 0.0),
            part(
                "  one app version inline (JobUsage)",
                size_of::<JobUsage>(),
                40,
                0.0,
            ),
            part(
                "its project slot (ProjectState)",
                size_of::<ProjectState>(),
                296,
                1.0,
            ),
            part(
                "its HOST row (Option<HostRow>)",
                size_of::<Option<HostRow>>(),
                216,
                1.0,
            ),
            part(
                "one host app version (HavRow)",
                size_of::<HavRow>(),
                80,
                1.0,
            ),
        ],
    );
}

/// A job in flight: its result row, its share of a workunit of two replicas, and
/// its place in a client's queue.
fn job_parts() -> Vec<Part> {
    vec![
        part(
            "its result row (Option<ResultRow>)",
            size_of::<Option<ResultRow>>(),
            128,
            1.0,
        ),
        part(
            "half its workunit row (WorkunitRow)",
            size_of::<WorkunitRow>(),
            128,
            0.5,
        ),
        part(
            "its place in a client's queue (ClientJob)",
            size_of::<ClientJob>(),
            128,
            1.0,
        ),
    ]
}

#[test]
fn a_job_in_flight_fits_its_budget() {
    within_budget("a job in flight", 340.0, &job_parts());
    // In a run with files a job also has its transfer record on its host.
    let mut with_files = job_parts();
    with_files.push(part(
        "its transfer record (JobFiles)",
        JOB_FILES_BYTES,
        64,
        1.0,
    ));
    within_budget("a job in flight in a run with files", 400.0, &with_files);
    // A result row is two cache lines, read with one prefetch per line.
    assert_eq!(
        size_of::<ResultRow>() % 64,
        0,
        "a result row is whole cache lines"
    );
}

/// A workunit: its row, with up to three result ids inline, and its transitioner
/// index entry.
#[test]
fn a_workunit_fits_its_budget() {
    within_budget(
        "a workunit",
        136.0,
        &[
            part("WorkunitRow", size_of::<WorkunitRow>(), 128, 1.0),
            part(
                "  its result ids inline (WuResults)",
                size_of::<WuResults>(),
                16,
                0.0,
            ),
            part("its transition index entry", TRANSITION_ENTRY_BYTES, 8, 1.0),
        ],
    );
}

/// A pending event in the queue: millions of them at a million hosts.
#[test]
fn an_event_fits_its_budget() {
    within_budget(
        "a pending event",
        24.0,
        &[part("a radix heap entry", ENTRY_BYTES, 24, 1.0)],
    );
}

/// A record of an imported host export: a million-record export in about 112 MB.
#[test]
fn an_imported_host_record_fits_its_budget() {
    within_budget(
        "an imported host record",
        112.0,
        &[part("HostRecord", size_of::<HostRecord>(), 112, 1.0)],
    );
}
