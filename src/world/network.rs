//! The network of a run with files (spec client §8.5): each project's data-server
//! link in each direction, shared by every transfer in progress through the flow
//! model of [`crate::engine::flow`], which hosts reach through [`ServerLink`]'s
//! transfer calls, and the world's side of a transfer's end: the host whose file
//! moved is woken at once.
//!
//! A transfer ends at an exact fractional time inside the flow model; the world
//! hears of it at the next whole second (one `Event::Net` for all transfers due),
//! and the host reacts then, as a real client notices a finished transfer at its
//! next poll. The hosts' own events stay one per host: a host woken by a transfer
//! gets a new next event, and the one it had becomes stale
//! (the world's `host_wake_at`, lazy cancellation as in [`crate::engine::queue`]).
//!
//! [`ServerLink`]: crate::client::host::ServerLink

use crate::client::files::{DataServer, FilesPlan};
use crate::client::host::Dir;
use crate::engine::Time;
use crate::engine::flow::{FlowId, FlowNet, LinkId};

/// The network state of a run with files.
pub(crate) struct Net {
    pub flows: FlowNet,
    /// By world project: its data server and its links (down, up); `None` for a
    /// project without files.
    pub servers: Vec<Option<(DataServer, [LinkId; 2])>>,
    /// By flow: the host that moves it, and its link and bytes.
    pub owner: Vec<u32>,
    sized: Vec<(LinkId, f64)>,
    /// The time of the pending `Event::Net` that is current (`Time::MAX`: none).
    pub event_at: Time,
    /// Hosts to wake after a network event (reused: no allocation per event).
    pub woken: Vec<u32>,
    /// By link: the bytes of the transfers that ended on it, wholly or stopped part
    /// way, for the check that bytes are conserved ([`Self::check_bytes`]).
    pub moved: Vec<f64>,
}

impl Net {
    /// The links of `files`' projects.
    pub fn new(files: &FilesPlan) -> Self {
        let mut flows = FlowNet::new();
        let servers = (files.projects.iter())
            .map(|p| {
                p.as_ref().map(|p| {
                    let s = p.server.clone();
                    let links = [flows.add_link(s.download), flows.add_link(s.upload)];
                    (s, links)
                })
            })
            .collect();
        Net {
            flows,
            servers,
            owner: Vec::new(),
            sized: Vec::new(),
            event_at: Time::MAX,
            woken: Vec::new(),
            moved: Vec::new(),
        }
    }

    /// Starts a transfer for host `host`, or `None` if the project's data server is
    /// down at `now` (or the project has no files).
    pub fn start(
        &mut self,
        now: Time,
        project: u16,
        dir: Dir,
        host: u32,
        cap: f64,
        bytes: f64,
    ) -> Option<u32> {
        let (server, links) = self.servers.get(project as usize)?.as_ref()?;
        if server.down_at(now) {
            return None;
        }
        let access = (host as u64) << 1 | dir as u64;
        let flow = self
            .flows
            .start(now as f64, links[dir as usize], access, cap, bytes);
        let i = flow as usize;
        if self.owner.len() <= i {
            self.owner.resize(i + 1, u32::MAX);
            self.sized.resize(i + 1, (0, 0.0));
        }
        self.owner[i] = host;
        self.sized[i] = (links[dir as usize], bytes);
        Some(flow)
    }

    /// Stops a transfer and returns its bytes left.
    pub fn stop(&mut self, now: Time, flow: FlowId) -> f64 {
        self.owner[flow as usize] = u32::MAX;
        let (link, size) = self.sized[flow as usize];
        let left = self.flows.stop(now as f64, flow);
        self.note_moved(link, size - left);
        left
    }

    /// The next transfer that ended by `now`, with its host.
    pub fn pop_finished(&mut self, now: Time) -> Option<(FlowId, u32)> {
        let (flow, _) = self.flows.pop_finished(now as f64)?;
        let host = std::mem::replace(&mut self.owner[flow as usize], u32::MAX);
        let (link, size) = self.sized[flow as usize];
        self.note_moved(link, size);
        Some((flow, host))
    }

    fn note_moved(&mut self, link: LinkId, bytes: f64) {
        let l = link as usize;
        if self.moved.len() <= l {
            self.moved.resize(l + 1, 0.0);
        }
        self.moved[l] += bytes;
    }

    /// Bytes are conserved (spec client §8, checked under `--check-invariants`): on
    /// every link, the bytes it carried equal those of the transfers that ended on
    /// it plus the part moved of those in progress.
    pub fn check_bytes(&self, now: Time) -> Result<(), String> {
        let t = now as f64;
        for link in 0..self.flows.n_links() as LinkId {
            let ended = self.moved.get(link as usize).copied().unwrap_or(0.0);
            let moving: f64 = (self.flows.flows_on(link).into_iter())
                .map(|f| self.flows.size(f) - self.flows.remaining(f, t))
                .sum();
            let carried = self.flows.delivered(link, t);
            let want = ended + moving;
            if (carried - want).abs() > 1e-6 * want.max(1.0) {
                return Err(format!(
                    "link {link} carried {carried} bytes, but its transfers moved {want}"
                ));
            }
        }
        Ok(())
    }

    /// The whole second at which the next transfer ends, if any.
    pub fn next_event(&self) -> Option<Time> {
        self.flows.next_finish().map(|t| t.ceil() as Time)
    }
}
