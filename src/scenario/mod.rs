//! Scenario files: TOML in, a checked [`ScenarioFile`] and its resolved [`plan`] out.
//!
//! Loading runs in stages, like ripgrep's low/high-level arguments: serde parses
//! the text into [`schema`] structs (type errors and unknown keys come out with line,
//! column and the valid keys), then [`validate`] checks what types cannot
//! (cross-references, impossible values) and names the key path of each problem;
//! [`capacity`] refuses sizes that cannot fit in memory; last, [`plan`] resolves the
//! checked file into what the world is built from (names as indices, durations in
//! seconds, distributions and availability models built).

pub(crate) mod capacity;
pub mod import;
pub mod load;
pub mod plan;
pub mod schema;
pub mod start;
pub(crate) mod validate;

pub use load::{Loaded, ScenarioError, load, load_str};
pub use schema::*;
pub use validate::Problem;
