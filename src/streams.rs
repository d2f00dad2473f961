//! Which random stream each part of the simulation draws from.
//!
//! Every draw comes from a stream `(kind, id)` of the engine (`engine::rng`): one per
//! host, per project, per batch, and so on. The kind's number is part of the seed
//! of every stream of that kind, so a number, once given, is never reused or
//! renumbered: doing so would change every run's draws. Keeping a kind of its own
//! for each purpose is what lets a scenario turn a feature on without shifting any
//! other draw (common random numbers, docs/sweep.md).

/// What a stream belongs to. The discriminant is part of the seed derivation, so the
/// numbers must never be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum StreamKind {
    /// A project's server: trust draws, `result.random`, feeder scan offsets.
    Project = 1,
    /// A host's own behaviour: run times, outcomes, availability.
    Host = 2,
    /// A host group's population draws (speeds, attributes) at creation.
    HostGroup = 3,
    /// The work generator of a project.
    WorkGenerator = 4,
    /// A host's record in one project: `(host index << 16) | project index`.
    HostProject = 5,
    /// A sweep's run seeds: one per replication, shared by every point (common
    /// random numbers, `docs/sweep.md`). Ids were `(point << 20) | replication`
    /// before; point 0's seeds are unchanged.
    SweepRun = 6,
    /// A sweep's random or Latin-hypercube design draws.
    SweepDesign = 7,
    /// A host's truth: its error and wrong-result probabilities drawn at creation,
    /// then its wrong outputs' collision draws (id = host index).
    HostTruth = 8,
    /// A host's availability (on/off, active, connected periods), apart from its
    /// job draws: what a host does with its work never shifts when it is on, so two
    /// runs with the same seed share their hosts' availability whatever the project
    /// settings (common random numbers in sweeps, `docs/sweep.md`).
    HostAvailability = 10,
    /// A project's assimilation handler answers (spec backend §2.6).
    Assimilator = 9,
    /// A host's coprocessors' peak FLOPS, drawn at creation (id = host index): a
    /// stream of its own, so that giving hosts GPUs changes no other draw.
    HostCoproc = 11,
    /// A host's availability traits, drawn once when it joins (id = host index): its
    /// class in a mixture, then its own active and connected fractions. Each is
    /// drawn only when the scenario asks for it, so no other stream moves.
    HostAvailTraits = 12,
    /// A host's hardware drawn per host (id = host index): its CPU count, then per
    /// GPU type of its group, whether it has one and how many. Drawn only when the
    /// scenario gives those as distributions or probabilities.
    HostHardware = 13,
    /// A host's operating system in a group with a mix of them, drawn at first
    /// contact with each project (id = host index, so every project sees the same).
    HostOs = 14,
    /// The record of a host export a host draws when its group resamples the
    /// export (id = host index): a stream of its own, used only by such groups.
    HostRecord = 15,
    /// A host's background projects (id = host index): their count and shares drawn
    /// at creation, then their jobs' sizes and delay bounds. Used only by hosts of a
    /// group with background projects, so no other stream shifts.
    HostBackground = 16,
    /// A host's own preferences (`[host_group.prefs]`, id = host index), drawn at
    /// creation only when the group gives some.
    HostPrefs = 17,
    /// A host's file-transfer retry draws (id = host index; spec client §8.3), used
    /// only in a run with files.
    HostXfer = 18,
    /// A workunit's input file size (id = project · 2^40 + workunit id), drawn when a
    /// host receives one of its results, so every replica has the same input.
    WuFiles = 19,
    /// A result's output file size (id = project · 2^40 + result id).
    ResultFiles = 20,
    /// A host's download and upload bandwidths (id = host index), drawn at creation
    /// only in a run with files.
    HostLinks = 21,
    /// A batch's job sizes (id = project + batch id · 2^32; spec backend §1.5),
    /// drawn only when a batch is submitted.
    BatchJobs = 22,
    /// A project's scheduler service times (id = project index; spec backend
    /// §2.4.0), drawn only when the project has a `[project.NAME.server]`.
    SchedulerService = 24,
    /// A daemon's crash process (`[[project.NAME.daemon_outage]]` with `mtbf` and
    /// `repair`): its failure and repair times, drawn once when the world is built
    /// (id = project index · 2^32 + the entry's rank among the crash processes of its
    /// daemon · 2^8 + the daemon's code, `server::config::OutageTarget`). A stream per
    /// project, daemon and entry, so adding an outage moves no other draw.
    DaemonCrash = 23,
}

impl From<StreamKind> for u64 {
    fn from(kind: StreamKind) -> u64 {
        kind as u64
    }
}
