//! Named hosts driven by scripted events: they ask for work, report given outcomes,
//! lose jobs or detach exactly when the scenario says.

use crate::server::scheduler::Reply;
use crate::server::types::*;

/// A named host's client-side state: the jobs it holds.
#[derive(Clone, Debug)]
pub struct ScriptedHost {
    pub name: String,
    pub project: u16,
    pub hostid: HostId,
    /// Results the client holds (its `other_results` list), ascending id.
    pub holds: Vec<ResultId>,
    /// The reply to the host's last scheduler RPC, for `[[expect]] reply` checks
    /// (`None` before the first RPC and after one that reached no server). Only
    /// scripted hosts keep it, so unscripted RPCs copy nothing.
    pub last_reply: Option<Reply>,
}
