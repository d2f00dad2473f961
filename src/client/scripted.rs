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
    /// Its RPCs waiting in the project's web server for an answer or a timeout
    /// (spec backend §2.4.0; a project without one answers at once).
    pub rpcs_in_flight: u32,
}

impl ScriptedHost {
    /// The host hears the answer to an RPC (`None`: it reached no scheduler or was
    /// given up): it holds the jobs sent, and keeps the answer for `[[expect]]
    /// reply`. Returns the answer it replaces, for reuse.
    pub fn receive(&mut self, reply: Option<Reply>) -> Option<Reply> {
        for j in reply.iter().flat_map(|r| &r.jobs) {
            if let Err(k) = self.holds.binary_search(&j.result_id) {
                self.holds.insert(k, j.result_id);
            }
        }
        std::mem::replace(&mut self.last_reply, reply)
    }
}
