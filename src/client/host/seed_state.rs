//! What the seed resource-debt policy keeps per project and no other part of the
//! client reads (spec client §1.1–1.3): the exponentially averaged CPU time, and the
//! resource debt and project order recomputed from it at each session.
//!
//! The seed policy (`client::seed`) owns these fields: it alone writes and reads
//! them. They are defined here, below the host, because the host holds them in each
//! [`ProjectState`](super::ProjectState) and the host names no policy (ARCHITECTURE.md,
//! "The layers"); the world sets them from a scenario's starting state and its
//! `[[expect]]` entries read them.

/// The seed client's own per-project state (`PROJECT` of the 2003 client,
/// `client/client_types.h`; spec client §1.1).
#[derive(Clone, Debug, Default)]
pub struct SeedProject {
    /// CPU seconds given to the project, summed with exponential decay (§1.2).
    pub exp_avg_cpu: f64,
    /// When `exp_avg_cpu` was last decayed (§1.2).
    pub exp_avg_mod_time: f64,
    /// `resource_share / exp_avg_cpu`, recomputed by `compute_resource_debts` (§1.3).
    pub resource_debt: f64,
    /// The project's rank by decreasing debt, 0 the largest (§1.3).
    pub debt_order: u32,
}
