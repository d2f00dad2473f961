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
//! A data server with `max_connections` serves that many transfers at once, both
//! directions together, as a web server's worker limit does (Apache's
//! `MaxRequestWorkers`). A transfer that finds them all taken is refused, a
//! transient failure for its host (spec client §8.3, §8.5). A connection is freed
//! when the world hears of its transfer's end, at the next whole second.
//!
//! [`ServerLink`]: crate::client::host::ServerLink

use crate::client::files::{DataServer, FilesPlan};
use crate::client::host::Dir;
use crate::engine::Time;
use crate::engine::flow::{FlowId, FlowNet, LinkId};

/// One project's data server in a run: as configured, its links, and its
/// connections.
pub(crate) struct DataServerState {
    pub server: DataServer,
    /// Its links (down, up).
    pub links: [LinkId; 2],
    pub connections: Connections,
}

/// A data server's connections (spec client §8.5): open now, the transfers
/// refused so far because all were taken, and how long all were taken.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Connections {
    /// Transfers in progress, both directions.
    pub open: u32,
    /// Transfers refused since t = 0.
    pub refused: u64,
    /// Seconds with every connection taken, up to `full_since`.
    full_s: f64,
    /// Since when every connection has been taken (`None`: one is free).
    full_since: Option<Time>,
}

impl Connections {
    /// Seconds with every connection taken, from t = 0 to `now`.
    pub fn full_s(&self, now: Time) -> f64 {
        self.full_s + self.full_since.map_or(0.0, |t| (now - t) as f64)
    }

    fn open_one(&mut self, now: Time, max: u32) {
        self.open += 1;
        if self.open == max {
            self.full_since = Some(now);
        }
    }

    fn close_one(&mut self, now: Time) {
        self.open -= 1;
        if let Some(t) = self.full_since.take() {
            self.full_s += (now - t) as f64;
        }
    }
}

/// The network state of a run with files.
pub(crate) struct Net {
    pub flows: FlowNet,
    /// By world project: its data server; `None` for a project without files.
    pub servers: Vec<Option<DataServerState>>,
    /// By flow: the host that moves it.
    pub owner: Vec<u32>,
    /// By flow: its link, bytes and project.
    sized: Vec<(LinkId, f64, u16)>,
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
                    let server = p.server.clone();
                    DataServerState {
                        links: [
                            flows.add_link(server.download),
                            flows.add_link(server.upload),
                        ],
                        server,
                        connections: Connections::default(),
                    }
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
    /// down at `now`, has all its connections taken (counted as refused), or the
    /// project has no files.
    pub fn start(
        &mut self,
        now: Time,
        project: u16,
        dir: Dir,
        host: u32,
        cap: f64,
        bytes: f64,
    ) -> Option<u32> {
        let d = self.servers.get_mut(project as usize)?.as_mut()?;
        if d.server.down_at(now) {
            return None;
        }
        if d.connections.open >= d.server.max_connections {
            d.connections.refused += 1;
            return None;
        }
        d.connections.open_one(now, d.server.max_connections);
        let link = d.links[dir as usize];
        let access = (host as u64) << 1 | dir as u64;
        let flow = self.flows.start(now as f64, link, access, cap, bytes);
        let i = flow as usize;
        if self.owner.len() <= i {
            self.owner.resize(i + 1, u32::MAX);
            self.sized.resize(i + 1, (0, 0.0, 0));
        }
        self.owner[i] = host;
        self.sized[i] = (link, bytes, project);
        Some(flow)
    }

    /// Stops a transfer and returns its bytes left.
    pub fn stop(&mut self, now: Time, flow: FlowId) -> f64 {
        self.owner[flow as usize] = u32::MAX;
        let left = self.flows.stop(now as f64, flow);
        self.ended(now, flow, left);
        left
    }

    /// The next transfer that ended by `now`, with its host.
    pub fn pop_finished(&mut self, now: Time) -> Option<(FlowId, u32)> {
        let (flow, _) = self.flows.pop_finished(now as f64)?;
        let host = std::mem::replace(&mut self.owner[flow as usize], u32::MAX);
        self.ended(now, flow, 0.0);
        Some((flow, host))
    }

    /// Transfer `flow` ended at `now`, `left` bytes short: its bytes are counted
    /// and its connection freed.
    fn ended(&mut self, now: Time, flow: FlowId, left: f64) {
        let (link, size, project) = self.sized[flow as usize];
        self.note_moved(link, size - left);
        if let Some(Some(d)) = self.servers.get_mut(project as usize) {
            d.connections.close_one(now);
        }
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

    /// Every data server has as many connections open as transfers on its links,
    /// and no more than `max_connections` (spec client §8.5, checked under
    /// `--check-invariants`).
    pub fn check_connections(&self) -> Result<(), String> {
        for (pi, d) in self.servers.iter().enumerate() {
            let Some(d) = d else { continue };
            let flows: usize = d.links.iter().map(|&l| self.flows.flows_on(l).len()).sum();
            if d.connections.open as usize != flows || d.connections.open > d.server.max_connections
            {
                return Err(format!(
                    "project {pi}'s data server has {} connections open for {flows} transfers, at most {}",
                    d.connections.open, d.server.max_connections
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::files::ProjectFiles;

    /// One project whose data server serves `max` transfers at once over 100-B/s
    /// links.
    fn net(max: u32) -> Net {
        let server = DataServer {
            download: 100.0,
            upload: 100.0,
            max_connections: max,
            ..DataServer::default()
        };
        Net::new(&FilesPlan {
            projects: vec![Some(ProjectFiles {
                apps: Vec::new(),
                server,
            })],
            seed: 0,
        })
    }

    fn connections(n: &Net) -> Connections {
        n.servers[0].as_ref().unwrap().connections
    }

    #[test]
    fn a_transfer_past_max_connections_is_refused_and_a_freed_one_reused() {
        let mut n = net(2);
        let a = n.start(0, 0, Dir::Down, 1, f64::INFINITY, 5000.0);
        let b = n.start(5, 0, Dir::Up, 2, f64::INFINITY, 1000.0);
        assert!(
            a.is_some() && b.is_some(),
            "both directions share the limit"
        );
        assert_eq!(n.start(6, 0, Dir::Down, 3, f64::INFINITY, 10.0), None);
        assert_eq!(n.start(7, 0, Dir::Up, 3, f64::INFINITY, 10.0), None);
        let c = connections(&n);
        assert_eq!((c.open, c.refused), (2, 2));
        assert_eq!(c.full_s(8), 3.0, "full since t = 5");
        n.check_connections().unwrap();
        // Stopping one frees its connection at once.
        n.stop(9, b.unwrap());
        let c = connections(&n);
        assert_eq!((c.open, c.full_s(20)), (1, 4.0), "full from 5 to 9");
        assert!(n.start(10, 0, Dir::Up, 3, f64::INFINITY, 10.0).is_some());
        // A finished transfer frees its connection when the world hears of it.
        let end = n.next_event().unwrap();
        let (_, host) = n.pop_finished(end).unwrap();
        assert_eq!(host, 3);
        let c = connections(&n);
        assert_eq!(c.open, 1);
        assert_eq!(c.full_s(end + 100), 4.0 + (end - 10) as f64);
        n.check_connections().unwrap();
    }

    #[test]
    fn without_a_limit_nothing_is_refused() {
        let mut n = net(u32::MAX);
        for h in 0..100 {
            assert!(n.start(0, 0, Dir::Down, h, f64::INFINITY, 10.0).is_some());
        }
        let c = connections(&n);
        assert_eq!((c.open, c.refused, c.full_s(10)), (100, 0, 0.0));
    }
}
