//! Named hosts driven by scripted events: they ask for work, report given outcomes,
//! lose jobs or detach exactly when the scenario says.

use crate::server::types::*;

/// A named host's client-side state: the jobs it holds.
#[derive(Clone, Debug)]
pub struct ScriptedHost {
    pub name: String,
    pub project: u16,
    pub hostid: HostId,
    /// Results the client holds (its `other_results` list), ascending id.
    pub holds: Vec<ResultId>,
}
