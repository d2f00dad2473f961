//! Why a run failed, as a value: every failure the world can meet, each with the
//! exit status the command line gives it.

use crate::server::invariants::Violation;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A server invariant failed (spec backend §3; `--check-invariants`).
    #[error("{0}")]
    Invariant(Violation),
    /// Some `[[expect]]` entries failed: one message per failure, each starting
    /// with the entry's `file:line:column`, and how many entries were checked.
    #[error("{} of {checked} expectation(s) checked failed:{}", failed.len(), failed.iter().map(|m| format!("\n  {m}")).collect::<String>())]
    Expectations { failed: Vec<String>, checked: u64 },
    /// A state the model cannot continue from (a project's fatal condition, or a
    /// counter that disagrees with a recount under `--check-invariants`).
    #[error("{0}")]
    Fatal(String),
    /// A client-side invariant failed (`--check-invariants`).
    #[error("client invariant violated: {0}")]
    Client(String),
    /// The recorder could not write the outputs.
    #[error("cannot write outputs: {0}")]
    Io(#[from] std::io::Error),
}

impl RunError {
    /// The process exit status of this failure: 1, a run failure or an invariant
    /// violation (the command line's documented codes).
    pub fn exit_code(&self) -> u8 {
        1
    }
}
