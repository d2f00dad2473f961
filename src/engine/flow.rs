//! A flow-level network model of data-server links: file transfers sharing a
//! project's data-server link with max-min fairness (spec client §8.5).
//!
//! # The model
//!
//! A transfer is a *flow* of a number of bytes. It crosses two resources: one **link**
//! (a project's data-server link in one direction, capacity `C` bytes/s) and one
//! **access** (the host's own link in that direction, capacity `A` bytes/s). Either may
//! be infinite. BOINC itself has no bandwidth logic: the data server is a web server
//! (`upload_handler` for outputs) and the client's transfers (`pers_file_xfer.cpp`,
//! `http_curl.cpp`) go as fast as the network lets them. What limits a project is its
//! server's link, shared by every transfer in progress, each transfer also limited by
//! its host's link: spec client §8.5 names flow-level simulation with max-min fair
//! sharing, as in SimGrid's fluid network model, as the reference.
//!
//! Rates are computed in two steps:
//!
//! 1. All active flows of one access share it **equally**: each gets the cap
//!    `c_f = A / n_access`, `n_access` counting the access's flows on every link.
//! 2. On each link the rates are **max-min fair** given the caps: `rate_f = min(c_f, L)`,
//!    where the water level `L` solves `Σ_f min(c_f, L) = C` (`L` is infinite when
//!    `Σ c_f ≤ C`: the link is not a bottleneck).
//!
//! This is exact max-min fairness (what SimGrid's progressive filling gives) when each
//! access's flows are all on one link, the usual case (a host downloading several
//! files from one project). When an access has flows on several links, the equal split
//! is an approximation: true max-min would give a flow held back by a congested link
//! less than `A / n` and let the access's other flows use the rest.
//!
//! A flow whose access and link are both infinite has an infinite rate: it finishes at
//! the instant it starts (`pop_finished(now)` returns it with its start time).
//!
//! # How it is computed (the virtual clock)
//!
//! Recomputing a link's shares at every start and finish costs `O(n log n)` with `n`
//! flows on the link; with many thousands of transfers per server that would dominate
//! a run. Here each change costs `O(log n)` (amortised, expected). On each link the
//! flows are in two classes:
//!
//! * **capped** flows (`c_f ≤ L`) run at their cap; each has a fixed finish time in
//!   real time, which changes only when its own cap changes;
//! * **bottlenecked** flows (`c_f > L`) all run at `L`. The link keeps a virtual clock
//!   `V(t) = ∫ L dt`; a bottlenecked flow that joined the class at virtual time `V₀`
//!   with `r` bytes left finishes when `V` reaches `V₀ + r`, a key that does not
//!   change when `L` moves. So a change of `L` updates no flow.
//!
//! Each class has an order of finish keys and an order of caps, both `BTreeSet`s of
//! `(key, flow)`. A flow's finish key is a function of its own state (finish time, or
//! virtual finish), so a flow that is stopped or changes class is found and removed
//! in `O(log n)` without an index of its own. A keyed binary heap (`priority-queue`)
//! was measured against this and was no faster (docs/performance.md, "Measurements
//! behind the code").
//! `L = (C − Σ caps of capped flows) / n_bottlenecked`. After a change, flows move
//! across while the largest capped cap exceeds `L` or the smallest bottlenecked cap is
//! below `L` (both moves raise `L`, so a flow moves at most twice and the loop ends;
//! with many flows a change moves `O(1)` flows in expectation). A global keyed heap of
//! links by their next finish time (`priority-queue`, keyed by link: one entry per
//! link, moved in place when the link's next finish changes) gives `next_finish` at
//! once. A change of an
//! access's flow count re-caps only that access's flows.
//!
//! Floating error: a flow is finished when its remaining bytes are at most `1e-9` of its
//! size or below `1e-3` byte; a class boundary has a relative tolerance of `1e-12`;
//! the sum of the capped caps is recomputed from the set after as many changes as
//! there are capped flows (amortised `O(1)`), so it does not drift; the virtual clock
//! is rebased to 0 when no flow is bottlenecked and when it grows large against the
//! flows' sizes. [`FlowNet::check`] recomputes everything from scratch.
//!
//! The same calls give bit-identical results: there is no iteration over a hash map,
//! and simultaneous finishes pop in the order (time, link, flow).

use priority_queue::PriorityQueue;
use std::cmp::Reverse;
use std::collections::BTreeSet;

/// A flow (one transfer). Ids are recycled through a free list, so memory follows the
/// flows in progress, not the flows ever started.
pub type FlowId = u32;
/// A link (one data-server link in one direction).
pub type LinkId = u32;

/// Relative tolerance of the class boundary (cap against level).
const CLASS_TOL: f64 = 1e-12;
/// A flow is finished when its remaining bytes are at most this fraction of its size...
const DONE_REL: f64 = 1e-9;
/// ...or below this many bytes.
const DONE_ABS: f64 = 1e-3;
/// The virtual clock is rebased to 0 when it passes this many times the largest flow
/// size seen on the link, so that `V_f − V` keeps about 12 significant digits more than
/// a flow's size.
const REBASE_FACTOR: f64 = 8192.0;

/// Maps an `f64` to a `u64` with the same total order (negative numbers included).
fn ord_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

fn from_ord_key(k: u64) -> f64 {
    if k >> 63 == 1 {
        f64::from_bits(k & !(1 << 63))
    } else {
        f64::from_bits(!k)
    }
}

/// The heaps' hasher (FxHash) for their `u32` keys: the heaps only look items up
/// (their order never depends on the hash), and SipHash would cost more than the
/// heap operation itself.
type IdHash = std::hash::BuildHasherDefault<rustc_hash::FxHasher>;
/// Flows ordered by `(finish key, id)`. The key is a function of the flow's state
/// (`capped_fin_key`, or `ord_key(a)` for a bottlenecked flow), so a flow is found and
/// removed without an index of its own.
type FinishOrder = BTreeSet<(u64, FlowId)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Free,
    Capped,
    Bottlenecked,
}

#[derive(Clone, Debug)]
struct Flow {
    link: LinkId,
    /// Slot in `FlowNet::accesses`.
    access: u32,
    /// Position in the access's flow list.
    apos: u32,
    class: Class,
    size: f64,
    cap: f64,
    /// Capped: bytes left at `t_set`. Bottlenecked: the virtual finish `V_f`.
    a: f64,
    /// Capped: when `a` was set.
    t_set: f64,
}

impl Flow {
    fn done_tol(&self) -> f64 {
        (self.size * DONE_REL).max(DONE_ABS)
    }
}

/// A capped flow's key in its link's finish order: its finish time `t_set + a / cap`
/// (`t_set` when nothing is left), computed by the same expression at insertion and
/// removal, so it is the same bits.
fn capped_fin_key(f: &Flow) -> u64 {
    ord_key(if f.a == 0.0 {
        f.t_set
    } else {
        f.t_set + f.a / f.cap
    })
}

#[derive(Clone, Debug)]
struct Access {
    key: u64,
    cap: f64,
    flows: Vec<FlowId>,
}

#[derive(Clone, Debug)]
struct Link {
    capacity: f64,
    /// Capped flows by cap.
    capped: BTreeSet<(u64, FlowId)>,
    /// Bottlenecked flows by cap.
    bott: BTreeSet<(u64, FlowId)>,
    /// Capped flows by real finish time.
    capped_fin: FinishOrder,
    /// Bottlenecked flows by virtual finish.
    bott_fin: FinishOrder,
    /// Σ of the finite caps of the capped flows.
    sum_capped: f64,
    /// Capped flows with an infinite cap (on an infinite link only).
    n_inf: usize,
    /// Changes of `sum_capped` since it was last summed from scratch.
    sum_age: usize,
    /// The water level (rate of a bottlenecked flow); infinite when none is.
    level: f64,
    /// The virtual clock at `t`.
    v: f64,
    /// When the link was last settled.
    t: f64,
    /// Bytes carried up to `t`.
    delivered: f64,
    /// Seconds up to `t` during which the load was at least [`BUSY_SHARE`] of a
    /// finite capacity: how long the link was saturated, exactly, where a bucket's
    /// average would spread a peak over the bucket.
    busy: f64,
    /// The largest flow size seen (for rebasing `v`).
    max_size: f64,
}

impl Link {
    fn n_bott(&self) -> usize {
        self.bott.len()
    }

    /// `L` from the current classes: `+∞` when no flow is bottlenecked and the caps
    /// fit, `−∞` when none is and they do not (the rebalance must move one).
    fn compute_level(&self) -> f64 {
        if self.capacity == f64::INFINITY {
            return f64::INFINITY;
        }
        let nb = self.n_bott();
        if nb == 0 {
            if self.n_inf == 0 && self.sum_capped <= self.capacity {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }
        } else {
            (self.capacity - self.sum_capped) / nb as f64
        }
    }

    /// Whether the link carries at least [`BUSY_SHARE`] of its capacity now (never
    /// for an unlimited link).
    fn saturated(&self) -> bool {
        self.finite_load() >= BUSY_SHARE * self.capacity
    }

    /// Σ of the finite rates.
    fn finite_load(&self) -> f64 {
        let b = if self.n_bott() > 0 && self.level.is_finite() {
            self.level * self.n_bott() as f64
        } else {
            0.0
        };
        self.sum_capped + b
    }
}

/// The share of its capacity at which a link counts as saturated in
/// [`FlowNet::busy_time`] (docs/outputs.md, `link_busy_down_frac`): 95 %, so that
/// the rounding of `C − Σ caps` never hides a saturated link.
pub const BUSY_SHARE: f64 = 0.95;

/// The flows in progress on a set of links, with their max-min fair rates.
#[derive(Clone, Debug, Default)]
pub struct FlowNet {
    links: Vec<Link>,
    flows: Vec<Flow>,
    free_flows: Vec<FlowId>,
    accesses: Vec<Access>,
    free_accesses: Vec<u32>,
    /// Access key → slot. Only looked up, never iterated.
    access_of: rustc_hash::FxHashMap<u64, u32>,
    /// Links by their next finish time.
    queue: PriorityQueue<LinkId, Reverse<(u64, LinkId)>, IdHash>,
    /// Links touched by the current change (kept to avoid an allocation per change).
    touched: Vec<LinkId>,
    /// Flows moved between the classes, ever (a measure of the rebalancing work).
    moves: u64,
}

impl FlowNet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a link of `capacity` bytes/s (> 0, may be `f64::INFINITY`).
    pub fn add_link(&mut self, capacity: f64) -> LinkId {
        assert!(
            capacity > 0.0,
            "a link's capacity must be > 0 (got {capacity})"
        );
        let id = LinkId::try_from(self.links.len()).expect("too many links");
        self.links.push(Link {
            capacity,
            capped: BTreeSet::new(),
            bott: BTreeSet::new(),
            capped_fin: FinishOrder::new(),
            bott_fin: FinishOrder::new(),
            sum_capped: 0.0,
            n_inf: 0,
            sum_age: 0,
            level: f64::INFINITY,
            v: 0.0,
            t: 0.0,
            delivered: 0.0,
            busy: 0.0,
            max_size: 0.0,
        });
        id
    }

    /// The number of links.
    pub fn n_links(&self) -> usize {
        self.links.len()
    }

    /// A link's capacity.
    pub fn capacity(&self, link: LinkId) -> f64 {
        self.links[link as usize].capacity
    }

    /// A new flow of `bytes` (> 0) on `link`, through access `access` of capacity
    /// `access_cap` (> 0; the caller always passes the same cap for the same key while
    /// it has flows).
    pub fn start(
        &mut self,
        now: f64,
        link: LinkId,
        access: u64,
        access_cap: f64,
        bytes: f64,
    ) -> FlowId {
        assert!(bytes > 0.0, "a flow must have bytes > 0 (got {bytes})");
        assert!(
            access_cap > 0.0,
            "an access capacity must be > 0 (got {access_cap})"
        );
        let slot = match self.access_of.get(&access) {
            Some(&s) => s,
            None => {
                let s = match self.free_accesses.pop() {
                    Some(s) => {
                        let a = &mut self.accesses[s as usize];
                        a.key = access;
                        a.cap = access_cap;
                        s
                    }
                    None => {
                        self.accesses.push(Access {
                            key: access,
                            cap: access_cap,
                            flows: Vec::new(),
                        });
                        u32::try_from(self.accesses.len() - 1).expect("too many accesses")
                    }
                };
                self.access_of.insert(access, s);
                s
            }
        };
        let id = match self.free_flows.pop() {
            Some(id) => id,
            None => {
                self.flows.push(Flow {
                    link: 0,
                    access: 0,
                    apos: 0,
                    class: Class::Free,
                    size: 0.0,
                    cap: 0.0,
                    a: 0.0,
                    t_set: 0.0,
                });
                FlowId::try_from(self.flows.len() - 1).expect("too many flows")
            }
        };
        let acc = &mut self.accesses[slot as usize];
        let apos = acc.flows.len() as u32;
        acc.flows.push(id);
        let cap = acc.cap / acc.flows.len() as f64;
        {
            let f = &mut self.flows[id as usize];
            f.link = link;
            f.access = slot;
            f.apos = apos;
            f.size = bytes;
            f.cap = cap;
        }
        self.touched.clear();
        self.touched.push(link);
        self.settle(link, now);
        let l = &mut self.links[link as usize];
        l.max_size = l.max_size.max(bytes);
        // The link's time: `now` when the calls come in time order, never behind it.
        let t = l.t;
        self.attach(id, bytes, t);
        self.recap_access(slot, id, t);
        self.finish_change();
        id
    }

    /// Removes a flow before it finished (interruption, failure); returns its bytes
    /// left (> 0 unless the flow was already due: a caller that pops finished flows
    /// up to `now` first never sees 0).
    pub fn stop(&mut self, now: f64, flow: FlowId) -> f64 {
        let link = self.flow(flow).link;
        self.touched.clear();
        self.touched.push(link);
        self.settle(link, now);
        let t = self.links[link as usize].t;
        let rem = self.detach(flow, t);
        self.release(flow, t);
        self.finish_change();
        rem
    }

    /// The exact earliest finish time of any flow, if any.
    pub fn next_finish(&self) -> Option<f64> {
        self.queue
            .peek()
            .map(|(_, Reverse((k, _)))| from_ord_key(*k))
    }

    /// If a flow finishes at or before `now`: advances the model to that flow's exact
    /// finish time, removes it, re-shares, and returns it with its finish time. Callers
    /// loop until `None`.
    pub fn pop_finished(&mut self, now: f64) -> Option<(FlowId, f64)> {
        let (&link, &Reverse((k, _))) = self.queue.peek()?;
        if from_ord_key(k) > now {
            return None;
        }
        let (t, flow) = self.link_next(link).expect("a queued link has a flow");
        self.touched.clear();
        self.touched.push(link);
        self.settle(link, t);
        let t = self.links[link as usize].t;
        self.detach(flow, t);
        self.release(flow, t);
        self.finish_change();
        Some((flow, t))
    }

    /// A flow's current rate (bytes/s).
    pub fn rate(&self, flow: FlowId) -> f64 {
        let f = self.flow(flow);
        match f.class {
            Class::Capped => f.cap,
            Class::Bottlenecked => self.links[f.link as usize].level,
            Class::Free => unreachable!(),
        }
    }

    /// A flow's bytes left at `now` (no finish of another flow in between).
    pub fn remaining(&self, flow: FlowId, now: f64) -> f64 {
        let f = self.flow(flow);
        let l = &self.links[f.link as usize];
        let r = match f.class {
            Class::Capped => {
                if f.cap == f64::INFINITY {
                    0.0
                } else {
                    f.a - f.cap * (now - f.t_set).max(0.0)
                }
            }
            Class::Bottlenecked => f.a - (l.v + l.level * (now - l.t).max(0.0)),
            Class::Free => unreachable!(),
        };
        r.max(0.0)
    }

    /// A flow's size in bytes.
    pub fn size(&self, flow: FlowId) -> f64 {
        self.flow(flow).size
    }

    /// The link a flow is on.
    pub fn link_of(&self, flow: FlowId) -> LinkId {
        self.flow(flow).link
    }

    /// The number of flows on a link.
    pub fn n_flows(&self, link: LinkId) -> usize {
        let l = &self.links[link as usize];
        l.capped.len() + l.bott.len()
    }

    /// The flows on a link, in id order (for a server outage that fails them all).
    pub fn flows_on(&self, link: LinkId) -> Vec<FlowId> {
        let l = &self.links[link as usize];
        let mut v: Vec<FlowId> = l
            .capped
            .iter()
            .chain(l.bott.iter())
            .map(|&(_, id)| id)
            .collect();
        v.sort_unstable();
        v
    }

    /// Cumulative bytes the link has carried up to `now` (exact integral of its load).
    pub fn delivered(&self, link: LinkId, now: f64) -> f64 {
        let l = &self.links[link as usize];
        l.delivered + l.finite_load() * (now - l.t).max(0.0)
    }

    /// Seconds up to `now` during which the link carried at least [`BUSY_SHARE`] of
    /// its capacity (0 for an unlimited link).
    pub fn busy_time(&self, link: LinkId, now: f64) -> f64 {
        let l = &self.links[link as usize];
        let rest = if l.saturated() {
            (now - l.t).max(0.0)
        } else {
            0.0
        };
        l.busy + rest
    }

    /// Current load (Σ rates) of a link.
    pub fn load(&self, link: LinkId) -> f64 {
        let l = &self.links[link as usize];
        if l.n_inf > 0 {
            f64::INFINITY
        } else {
            l.finite_load()
        }
    }

    /// Full check (for `--check-invariants`): recomputes every rate from scratch by
    /// progressive filling and compares it with the incremental state (relative 1e-9,
    /// plus 1e-12 of the link's capacity for cancellation in `C − Σ caps`), checks
    /// Σ rates ≤ C·(1+1e-9) on every link, Σ rates of an access ≤ its cap, and
    /// remaining ≥ 0. `Err(message)` on a violation.
    pub fn check(&self, now: f64) -> Result<(), String> {
        let close = |a: f64, b: f64, c: f64| {
            a == b
                || (a - b).abs()
                    <= 1e-9 * a.abs().max(b.abs()) + if c.is_finite() { 1e-12 * c } else { 0.0 }
        };
        // Access structure.
        let mut live = 0;
        for (s, a) in self.accesses.iter().enumerate() {
            if a.flows.is_empty() {
                continue;
            }
            if self.access_of.get(&a.key) != Some(&(s as u32)) {
                return Err(format!("access {} not in the key map", a.key));
            }
            let mut sum = 0.0;
            for (i, &f) in a.flows.iter().enumerate() {
                let fl = &self.flows[f as usize];
                if fl.class == Class::Free || fl.access != s as u32 || fl.apos != i as u32 {
                    return Err(format!("flow {f} misfiled in access {}", a.key));
                }
                let want = a.cap / a.flows.len() as f64;
                if !close(fl.cap, want, 0.0) {
                    return Err(format!(
                        "flow {f}: cap {} but access {} gives {want}",
                        fl.cap, a.key
                    ));
                }
                sum += self.rate(f);
                live += 1;
            }
            if sum > a.cap * (1.0 + 1e-9) {
                return Err(format!(
                    "access {}: rates {sum} exceed its cap {}",
                    a.key, a.cap
                ));
            }
        }
        let n_live = self.flows.iter().filter(|f| f.class != Class::Free).count();
        if n_live != live
            || self.access_of.len() != self.accesses.iter().filter(|a| !a.flows.is_empty()).count()
        {
            return Err("flows and accesses disagree".to_string());
        }
        let mut caps = Vec::new();
        for (li, l) in self.links.iter().enumerate() {
            caps.clear();
            for &(k, id) in l.capped.iter().chain(l.bott.iter()) {
                let f = &self.flows[id as usize];
                let filed = match f.class {
                    Class::Capped => l.capped_fin.contains(&(capped_fin_key(f), id)),
                    Class::Bottlenecked => l.bott_fin.contains(&(ord_key(f.a), id)),
                    Class::Free => false,
                };
                if f.link != li as u32 || ord_key(f.cap) != k || !filed {
                    return Err(format!("flow {id} misfiled on link {li}"));
                }
                caps.push((f.cap, id));
            }
            if l.capped_fin.len() != l.capped.len() || l.bott_fin.len() != l.bott.len() {
                return Err(format!("link {li}: heaps and sets disagree"));
            }
            let level = water_fill(l.capacity, &mut caps);
            let mut sum = 0.0;
            for &(c, id) in &caps {
                let want = c.min(level);
                let got = self.rate(id);
                if !close(got, want, l.capacity) {
                    return Err(format!(
                        "link {li}, flow {id}: rate {got}, progressive filling gives {want}"
                    ));
                }
                sum += got;
                // Unclamped: a flow past its finish (not popped) is a violation.
                let f = &self.flows[id as usize];
                let rem = match f.class {
                    Class::Capped if f.cap.is_finite() => f.a - f.cap * (now - f.t_set).max(0.0),
                    Class::Capped => 0.0,
                    _ => f.a - (l.v + l.level * (now - l.t).max(0.0)),
                };
                if rem.is_nan() || rem < -f.done_tol() {
                    return Err(format!("flow {id}: remaining {rem} at {now}"));
                }
            }
            if sum > l.capacity * (1.0 + 1e-9) {
                return Err(format!(
                    "link {li}: load {sum} exceeds capacity {}",
                    l.capacity
                ));
            }
            let exact: f64 = l
                .capped
                .iter()
                .map(|&(k, _)| from_ord_key(k))
                .filter(|c| c.is_finite())
                .sum();
            if !close(l.sum_capped, exact, l.capacity) {
                return Err(format!(
                    "link {li}: Σ capped caps {} but the set sums to {exact}",
                    l.sum_capped
                ));
            }
        }
        Ok(())
    }

    fn flow(&self, flow: FlowId) -> &Flow {
        let f = &self.flows[flow as usize];
        assert!(f.class != Class::Free, "flow {flow} is not in progress");
        f
    }

    /// Advances a link's virtual clock and delivered bytes to `t` (never backwards).
    fn settle(&mut self, link: LinkId, t: f64) {
        let l = &mut self.links[link as usize];
        if t <= l.t {
            return;
        }
        let dt = t - l.t;
        l.delivered += l.finite_load() * dt;
        if l.saturated() {
            l.busy += dt;
        }
        if l.n_bott() > 0 && l.level.is_finite() {
            l.v += l.level * dt;
        }
        l.t = t;
    }

    /// Takes a flow out of its class at the link's time `t`; returns its bytes left.
    fn detach(&mut self, id: FlowId, t: f64) -> f64 {
        let f = &self.flows[id as usize];
        let l = &mut self.links[f.link as usize];
        let key = (ord_key(f.cap), id);
        let rem = match f.class {
            Class::Capped => {
                l.capped.remove(&key);
                l.capped_fin.remove(&(capped_fin_key(f), id));
                if f.cap.is_finite() {
                    l.sum_capped -= f.cap;
                    l.sum_age += 1;
                } else {
                    l.n_inf -= 1;
                }
                if l.capped.is_empty() {
                    l.sum_capped = 0.0;
                    l.sum_age = 0;
                }
                if f.cap.is_finite() {
                    f.a - f.cap * (t - f.t_set)
                } else {
                    0.0
                }
            }
            Class::Bottlenecked => {
                l.bott.remove(&key);
                l.bott_fin.remove(&(ord_key(f.a), id));
                f.a - l.v
            }
            Class::Free => unreachable!(),
        };
        let rem = if rem <= f.done_tol() { 0.0 } else { rem };
        self.flows[id as usize].class = Class::Free;
        rem
    }

    /// Puts a flow with `rem` bytes left into the class its cap calls for at the
    /// link's current level (the rebalance corrects it if the level then moves).
    fn attach(&mut self, id: FlowId, rem: f64, t: f64) {
        let f = &mut self.flows[id as usize];
        let l = &mut self.links[f.link as usize];
        let key = (ord_key(f.cap), id);
        let capped = if l.capacity == f64::INFINITY {
            true
        } else {
            f.cap.is_finite() && f.cap <= l.compute_level()
        };
        if capped {
            let mut rem = rem;
            if f.cap.is_finite() {
                l.sum_capped += f.cap;
                l.sum_age += 1;
            } else {
                // An infinite rate: the bytes are carried at once.
                l.n_inf += 1;
                l.delivered += rem;
                rem = 0.0;
            }
            f.class = Class::Capped;
            f.a = rem;
            f.t_set = t;
            l.capped.insert(key);
            l.capped_fin.insert((capped_fin_key(f), id));
        } else {
            if l.bott.is_empty() {
                l.v = 0.0;
            }
            f.class = Class::Bottlenecked;
            f.a = l.v + rem;
            l.bott.insert(key);
            l.bott_fin.insert((ord_key(f.a), id));
        }
    }

    /// Frees a detached flow's slot and re-caps its access's other flows.
    fn release(&mut self, id: FlowId, t: f64) {
        let (slot, apos) = {
            let f = &self.flows[id as usize];
            (f.access, f.apos as usize)
        };
        let acc = &mut self.accesses[slot as usize];
        acc.flows.swap_remove(apos);
        if let Some(&moved) = acc.flows.get(apos) {
            self.flows[moved as usize].apos = apos as u32;
        }
        self.free_flows.push(id);
        if self.accesses[slot as usize].flows.is_empty() {
            let key = self.accesses[slot as usize].key;
            self.access_of.remove(&key);
            self.free_accesses.push(slot);
        } else {
            self.recap_access(slot, id, t);
        }
    }

    /// Gives every flow of an access (except `skip`, just attached or removed) the cap
    /// `A / n`, settling its link first.
    fn recap_access(&mut self, slot: u32, skip: FlowId, t: f64) {
        let acc = &self.accesses[slot as usize];
        if acc.cap == f64::INFINITY {
            return; // ∞ / n = ∞: no cap changes.
        }
        let cap = acc.cap / acc.flows.len() as f64;
        for i in 0..self.accesses[slot as usize].flows.len() {
            let id = self.accesses[slot as usize].flows[i];
            if id == skip || self.flows[id as usize].cap == cap {
                continue;
            }
            let link = self.flows[id as usize].link;
            if !self.touched.contains(&link) {
                self.touched.push(link);
            }
            self.settle(link, t);
            let lt = self.links[link as usize].t;
            let rem = self.detach(id, lt);
            self.flows[id as usize].cap = cap;
            self.attach(id, rem, lt);
        }
    }

    /// Rebalances every link the change touched and updates their places in the queue.
    fn finish_change(&mut self) {
        self.touched.sort_unstable();
        for i in 0..self.touched.len() {
            let link = self.touched[i];
            self.rebalance(link);
            match self.link_next(link) {
                Some((t, _)) if t < f64::INFINITY => {
                    self.queue.push(link, Reverse((ord_key(t), link)));
                }
                _ => {
                    self.queue.remove(&link);
                }
            }
        }
    }

    /// Moves flows between the classes until every capped cap is ≤ L and every
    /// bottlenecked cap ≥ L (within `CLASS_TOL`), then fixes L.
    fn rebalance(&mut self, link: LinkId) {
        let li = link as usize;
        let t = self.links[li].t;
        let l = &mut self.links[li];
        if l.sum_age > l.capped.len() + 64 {
            // Sum from scratch after as many changes as flows: amortised O(1), and
            // the incremental sum cannot drift.
            l.sum_capped = l
                .capped
                .iter()
                .map(|&(k, _)| from_ord_key(k))
                .filter(|c| c.is_finite())
                .sum();
            l.sum_age = 0;
        }
        if l.capacity < f64::INFINITY {
            // Each move raises L, so a flow moves at most twice; the bound only guards
            // against a floating-point cycle.
            let mut budget = 2 * (self.links[li].capped.len() + self.links[li].bott.len()) + 4;
            while budget > 0 {
                budget -= 1;
                let l = &mut self.links[li];
                let level = l.compute_level();
                if let Some(&(k, id)) = l.capped.last()
                    && from_ord_key(k) > level * (1.0 + CLASS_TOL)
                {
                    self.moves += 1;
                    let rem = self.detach(id, t);
                    let l = &mut self.links[li];
                    if l.bott.is_empty() {
                        l.v = 0.0;
                    }
                    let f = &mut self.flows[id as usize];
                    f.class = Class::Bottlenecked;
                    f.a = l.v + rem;
                    l.bott.insert((k, id));
                    l.bott_fin.insert((ord_key(f.a), id));
                    continue;
                }
                if let Some(&(k, id)) = l.bott.first()
                    && from_ord_key(k) < level * (1.0 - CLASS_TOL)
                {
                    self.moves += 1;
                    let rem = self.detach(id, t);
                    let l = &mut self.links[li];
                    let f = &mut self.flows[id as usize];
                    l.sum_capped += f.cap;
                    l.sum_age += 1;
                    f.class = Class::Capped;
                    f.a = rem;
                    f.t_set = t;
                    l.capped.insert((k, id));
                    l.capped_fin.insert((capped_fin_key(f), id));
                    continue;
                }
                break;
            }
        }
        let l = &mut self.links[li];
        if l.bott.is_empty() {
            l.v = 0.0;
            l.level = f64::INFINITY;
        } else {
            l.level = l.compute_level();
            if l.v > REBASE_FACTOR * l.max_size {
                // Rebase the virtual clock: every key moves by the same amount, so the
                // order is kept and the set is rebuilt from a sorted sequence.
                let v = l.v;
                let flows = &mut self.flows;
                l.bott_fin = std::mem::take(&mut l.bott_fin)
                    .into_iter()
                    .map(|(_, id)| {
                        let f = &mut flows[id as usize];
                        f.a -= v;
                        (ord_key(f.a), id)
                    })
                    .collect();
                l.v = 0.0;
            }
        }
    }

    /// A link's next finish: (time, flow), ties by flow id.
    fn link_next(&self, link: LinkId) -> Option<(f64, FlowId)> {
        let l = &self.links[link as usize];
        let capped = l
            .capped_fin
            .first()
            .map(|&(k, id)| (from_ord_key(k).max(l.t), id));
        let bott = l.bott_fin.first().map(|&(k, id)| {
            let f = &self.flows[id as usize];
            let rem = from_ord_key(k) - l.v;
            let t = if rem <= f.done_tol() {
                l.t
            } else if l.level > 0.0 {
                l.t + rem / l.level
            } else {
                f64::INFINITY
            };
            (t, id)
        });
        match (capped, bott) {
            (Some(a), Some(b)) => Some(if (ord_key(b.0), b.1) < (ord_key(a.0), a.1) {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        }
    }
}

/// Progressive filling on one link: sorts `caps` by cap and returns the water level `L`
/// (`f64::INFINITY` when the caps fit), so that each flow's rate is `min(cap, L)`.
pub fn water_fill(capacity: f64, caps: &mut [(f64, FlowId)]) -> f64 {
    if capacity == f64::INFINITY {
        return f64::INFINITY;
    }
    caps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut left = capacity;
    let n = caps.len();
    for (i, &(c, _)) in caps.iter().enumerate() {
        let share = left / (n - i) as f64;
        if c > share {
            return share;
        }
        left -= c;
    }
    f64::INFINITY
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};
    use rand_distr::{Distribution, Exp, LogNormal};
    use std::collections::BTreeMap;

    const INF: f64 = f64::INFINITY;

    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// Pops everything due by `now`.
    fn pop_all(net: &mut FlowNet, now: f64) -> Vec<(FlowId, f64)> {
        let mut v = Vec::new();
        while let Some(x) = net.pop_finished(now) {
            net.check(x.1).unwrap();
            v.push(x);
        }
        v
    }

    fn assert_seq(got: &[(FlowId, f64)], want: &[(FlowId, f64)]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.0 == w.0 && near(g.1, w.1), "{got:?} vs {want:?}");
        }
    }

    /// C = 100; access caps 10, 50, ∞; 1000 bytes each, all at t = 0.
    /// Progressive filling: 100/3 = 33.3 > 10, so A is capped at 10; (100 − 10)/2 = 45 < 50,
    /// so L = 45: rates 10, 45, 45. B and C both finish at 1000/45 = 200/9 s (ties pop
    /// in id order); A alone then keeps its cap 10 and finishes at 1000/10 = 100 s.
    #[test]
    fn worked_example_three_flows() {
        let mut net = FlowNet::new();
        let l = net.add_link(100.0);
        let a = net.start(0.0, l, 1, 10.0, 1000.0);
        let b = net.start(0.0, l, 2, 50.0, 1000.0);
        let c = net.start(0.0, l, 3, INF, 1000.0);
        net.check(0.0).unwrap();
        assert_eq!((net.rate(a), net.rate(b), net.rate(c)), (10.0, 45.0, 45.0));
        assert_eq!(net.load(l), 100.0);
        assert!(near(net.next_finish().unwrap(), 200.0 / 9.0));
        assert_eq!(net.pop_finished(22.0), None);
        let got = pop_all(&mut net, 1000.0);
        assert_seq(&got, &[(b, 200.0 / 9.0), (c, 200.0 / 9.0), (a, 100.0)]);
        assert_eq!(net.next_finish(), None);
        assert!(near(net.delivered(l, 1000.0), 3000.0));
        // Saturated until B and C finish; A alone then uses 10 % of the link.
        assert!(near(net.busy_time(l, 1000.0), 200.0 / 9.0));
    }

    /// The same with B of 500 bytes: B finishes at 500/45 = 100/9 s; then C re-shares to
    /// 100 − 10 = 90 B/s with 500 bytes left, finishing at 100/9 + 500/90 = 150/9 s; A
    /// (10 B/s throughout) at 100 s.
    #[test]
    fn worked_example_reshares_after_a_finish() {
        let mut net = FlowNet::new();
        let l = net.add_link(100.0);
        let a = net.start(0.0, l, 1, 10.0, 1000.0);
        let b = net.start(0.0, l, 2, 50.0, 500.0);
        let c = net.start(0.0, l, 3, INF, 1000.0);
        let got = pop_all(&mut net, 12.0);
        assert_seq(&got, &[(b, 100.0 / 9.0)]);
        assert_eq!(net.rate(c), 90.0);
        assert!(near(net.remaining(c, 100.0 / 9.0), 500.0));
        assert!(near(net.remaining(a, 12.0), 880.0));
        let got = pop_all(&mut net, 1000.0);
        assert_seq(&got, &[(c, 150.0 / 9.0), (a, 100.0)]);
    }

    /// A new flow lowers the level and pushes a capped flow into the bottlenecked class:
    /// C = 100, A (cap 40) alone runs at 40; B and C (caps ∞) join at t = 1: L = 100/3,
    /// A becomes bottlenecked at 33.3. All have 1000 bytes: A has 960 left at t = 1 and
    /// B and C 1000, so A finishes first at 1 + 960·3/100 = 29.8 s; then B and C have 40
    /// left and share 100: 29.8 + 40/50 = 30.6 s.
    #[test]
    fn a_start_moves_a_capped_flow_to_the_bottleneck() {
        let mut net = FlowNet::new();
        let l = net.add_link(100.0);
        let a = net.start(0.0, l, 1, 40.0, 1000.0);
        assert_eq!(net.rate(a), 40.0);
        let b = net.start(1.0, l, 2, INF, 1000.0);
        assert_eq!((net.rate(a), net.rate(b)), (40.0, 60.0));
        let c = net.start(1.0, l, 3, INF, 1000.0);
        net.check(1.0).unwrap();
        assert!(near(net.rate(a), 100.0 / 3.0) && near(net.rate(c), 100.0 / 3.0));
        let got = pop_all(&mut net, 100.0);
        assert_seq(&got, &[(a, 29.8), (b, 30.6), (c, 30.6)]);
    }

    /// Two flows of one access (cap 60) on a link of 1000 share the access: 30 each. One
    /// is stopped at t = 10 with 600 − 300 = 300 bytes left; the other then gets all 60
    /// and finishes its last 300 bytes at 10 + 300/60 = 15 s.
    #[test]
    fn one_access_splits_equally_and_stop_returns_bytes_left() {
        let mut net = FlowNet::new();
        let l = net.add_link(1000.0);
        let a = net.start(0.0, l, 7, 60.0, 600.0);
        let b = net.start(0.0, l, 7, 60.0, 600.0);
        assert_eq!((net.rate(a), net.rate(b)), (30.0, 30.0));
        assert_eq!(net.pop_finished(10.0), None);
        let left = net.stop(10.0, a);
        assert!(near(left, 300.0), "{left}");
        assert_eq!(net.rate(b), 60.0);
        net.check(10.0).unwrap();
        assert_seq(&pop_all(&mut net, 100.0), &[(b, 15.0)]);
        // Bytes carried: 600 by b, 300 by a before it stopped.
        assert!(near(net.delivered(l, 100.0), 900.0));
        assert_eq!(net.n_flows(l), 0);
    }

    /// An access of 100 with one flow on a 30 B/s link (300 bytes) and one on an
    /// unlimited link (1000 bytes): equal split, caps 50; the first is held to 30 by its
    /// link (the approximation: its unused 20 are not given to the other), the second
    /// runs at 50. The first finishes at 10 s; the second, with 500 bytes left, gets the
    /// whole access: 10 + 500/100 = 15 s.
    #[test]
    fn an_access_across_two_links() {
        let mut net = FlowNet::new();
        let slow = net.add_link(30.0);
        let fast = net.add_link(INF);
        let a = net.start(0.0, slow, 9, 100.0, 300.0);
        let b = net.start(0.0, fast, 9, 100.0, 1000.0);
        assert_eq!((net.rate(a), net.rate(b)), (30.0, 50.0));
        net.check(0.0).unwrap();
        assert_seq(&pop_all(&mut net, 100.0), &[(a, 10.0), (b, 15.0)]);
        assert!(
            near(net.delivered(slow, 100.0), 300.0) && near(net.delivered(fast, 100.0), 1000.0)
        );
    }

    /// On an unlimited link each flow runs at its access cap: 100 bytes at 20 and 10 B/s
    /// finish at 5 and 10 s. A flow with an unlimited access on it has an infinite rate:
    /// it finishes at the instant it starts, and its bytes count as carried at once.
    #[test]
    fn unlimited_link_and_access() {
        let mut net = FlowNet::new();
        let l = net.add_link(INF);
        let a = net.start(0.0, l, 1, 10.0, 100.0);
        let b = net.start(0.0, l, 2, 20.0, 100.0);
        assert_eq!((net.rate(a), net.rate(b), net.load(l)), (10.0, 20.0, 30.0));
        let c = net.start(3.0, l, 3, INF, 1e6);
        assert_eq!(net.rate(c), INF);
        assert_eq!(net.load(l), INF);
        assert_eq!(net.remaining(c, 3.0), 0.0);
        assert_eq!(net.next_finish(), Some(3.0));
        net.check(3.0).unwrap();
        assert_eq!(net.pop_finished(3.0), Some((c, 3.0)));
        assert!(near(net.delivered(l, 3.0), 1e6 + 90.0));
        assert_seq(&pop_all(&mut net, 100.0), &[(b, 5.0), (a, 10.0)]);
        assert!(near(net.delivered(l, 100.0), 1e6 + 200.0));
    }

    /// Ids are recycled, so memory follows the flows in progress.
    #[test]
    fn ids_are_recycled() {
        let mut net = FlowNet::new();
        let l = net.add_link(10.0);
        let a = net.start(0.0, l, 1, INF, 10.0);
        assert_eq!(net.pop_finished(1.0), Some((a, 1.0)));
        let b = net.start(1.0, l, 2, INF, 10.0);
        assert_eq!(a, b);
        assert_eq!(net.flows.len(), 1);
        assert_eq!(net.flows_on(l), vec![b]);
    }

    /// Three flows always bottlenecked on a link of 3 B/s (sizes 1, 1.5 and 2 bytes,
    /// each finish replaced): the virtual clock would pass 8192 × the largest size after
    /// some 33,000 finishes, so it is rebased on the way; the finish times still equal the
    /// naive reference's.
    #[test]
    fn virtual_clock_rebase_keeps_finish_times() {
        let mut net = FlowNet::new();
        let l = net.add_link(3.0);
        let mut naive = Naive {
            caps: vec![3.0],
            ..Naive::default()
        };
        let mut k = 0u64;
        let mut start = |net: &mut FlowNet, naive: &mut Naive, t: f64| {
            k += 1;
            let size = [1.0, 1.5, 2.0][(k % 3) as usize];
            let id = net.start(t, l, k, INF, size);
            let f = NFlow {
                link: 0,
                access: k,
                acap: INF,
                size,
                rem: size,
            };
            naive.flows.insert(id, f);
        };
        for _ in 0..3 {
            start(&mut net, &mut naive, 0.0);
        }
        let mut max_v: f64 = 0.0;
        for i in 0..60_000 {
            let (id, t) = net.pop_finished(INF).unwrap();
            let want = naive.advance(t);
            assert_eq!(want.len(), 1, "{want:?}");
            assert_eq!(want[0].0, id);
            assert!((want[0].1 - t).abs() <= 1e-9 * t, "{} vs {t}", want[0].1);
            start(&mut net, &mut naive, t);
            max_v = max_v.max(net.links[0].v);
            if i % 1000 == 0 {
                net.check(t).unwrap();
            }
        }
        assert!(max_v <= 8192.0 * 2.0 + 3.0, "{max_v}");
        // 60,000 flows of 1.5 bytes on average at 3 B/s: V ≈ 30,000 without the rebase.
        assert!(net.pop_finished(INF).unwrap().1 > 29_000.0);
    }

    /// `check` fails on a flow past its finish and on a corrupted rate (so the
    /// invariant tests can fail).
    #[test]
    fn check_detects_a_late_flow_and_a_wrong_rate() {
        let mut net = FlowNet::new();
        let l = net.add_link(100.0);
        net.start(0.0, l, 1, INF, 1000.0);
        net.start(0.0, l, 2, INF, 1000.0);
        net.check(0.0).unwrap();
        // Both finish at 20 s: at 30 s, unpopped, they are past their finish.
        assert!(net.check(30.0).unwrap_err().contains("remaining"));
        net.links[0].level = 60.0;
        assert!(net.check(0.0).unwrap_err().contains("progressive filling"));
    }

    // ---- The naive reference: every rate recomputed by progressive filling after
    // each change, every flow advanced at each step.

    #[derive(Clone, Debug)]
    struct NFlow {
        link: usize,
        access: u64,
        acap: f64,
        size: f64,
        rem: f64,
    }

    #[derive(Default)]
    struct Naive {
        caps: Vec<f64>,
        flows: BTreeMap<FlowId, NFlow>,
        t: f64,
        /// Scratch for the rates and the water filling.
        rates: Vec<(FlowId, f64)>,
        fill: Vec<(f64, FlowId)>,
    }

    impl Naive {
        fn rates(&mut self) {
            let mut n_acc: BTreeMap<u64, usize> = BTreeMap::new();
            for f in self.flows.values() {
                *n_acc.entry(f.access).or_default() += 1;
            }
            self.rates.clear();
            for (li, &c) in self.caps.iter().enumerate() {
                self.fill.clear();
                for (&id, f) in &self.flows {
                    if f.link == li {
                        self.fill.push((f.acap / n_acc[&f.access] as f64, id));
                    }
                }
                let level = water_fill(c, &mut self.fill);
                self.rates
                    .extend(self.fill.iter().map(|&(cap, id)| (id, cap.min(level))));
            }
            self.rates.sort_unstable_by_key(|r| r.0);
        }

        /// Advances to `target`, returning the flows that finish, in time order.
        fn advance(&mut self, target: f64) -> Vec<(FlowId, f64)> {
            let mut out = Vec::new();
            loop {
                self.rates();
                let dt = self
                    .rates
                    .iter()
                    .map(|&(id, r)| {
                        if r == INF {
                            0.0
                        } else {
                            self.flows[&id].rem / r
                        }
                    })
                    .fold(INF, f64::min);
                let step = if self.t + dt <= target {
                    dt
                } else {
                    target - self.t
                };
                for &(id, r) in &self.rates {
                    let f = self.flows.get_mut(&id).unwrap();
                    f.rem = if r == INF { 0.0 } else { f.rem - r * step };
                }
                self.t += step;
                let done: Vec<FlowId> = self
                    .flows
                    .iter()
                    .filter(|(_, f)| f.rem <= (f.size * DONE_REL).max(DONE_ABS))
                    .map(|(&id, _)| id)
                    .collect();
                if done.is_empty() {
                    return out;
                }
                for id in done {
                    self.flows.remove(&id);
                    out.push((id, self.t));
                }
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Start {
            link: usize,
            access: u64,
            bytes: f64,
        },
        Stop(usize),
        Advance(f64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..3usize, 0..5u64, 1.0..5000.0f64)
                .prop_map(|(link, access, bytes)| Op::Start { link, access, bytes }),
            1 => (0..64usize).prop_map(Op::Stop),
            3 => (0.0..30.0f64).prop_map(Op::Advance),
        ]
    }

    fn capacity() -> impl Strategy<Value = f64> {
        prop_oneof![1 => Just(INF), 4 => 5.0..500.0f64]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Random starts, stops and advances on three links and five accesses: check()
        /// holds after every step, every flow's rate equals the naive reference's, every
        /// flow finishes when the reference says, stop() returns the reference's bytes
        /// left, and the bytes the links carried are the bytes finished plus the bytes
        /// taken out by stop().
        #[test]
        fn matches_a_naive_reference(
            link_caps in proptest::collection::vec(capacity(), 3),
            access_caps in proptest::collection::vec(capacity(), 5),
            ops in proptest::collection::vec(op(), 1..80),
        ) {
            let mut net = FlowNet::new();
            for &c in &link_caps {
                net.add_link(c);
            }
            let mut naive = Naive { caps: link_caps.clone(), ..Naive::default() };
            let mut carried = 0.0;
            let mut sizes: BTreeMap<FlowId, f64> = BTreeMap::new();
            // A caller pops what is due before it stops a flow (an instant flow, for
            // one, is due when it starts).
            let ops = ops.into_iter().flat_map(|op| match op {
                Op::Stop(_) => vec![Op::Advance(0.0), op],
                _ => vec![op],
            });
            for op in ops {
                match op {
                    Op::Start { link, access, bytes } => {
                        let acap = access_caps[access as usize];
                        let id = net.start(naive.t, link as LinkId, access, acap, bytes);
                        prop_assert!(!naive.flows.contains_key(&id));
                        naive.flows.insert(id, NFlow { link, access, acap, size: bytes, rem: bytes });
                        sizes.insert(id, bytes);
                    }
                    Op::Stop(k) => {
                        if naive.flows.is_empty() {
                            continue;
                        }
                        let id = *naive.flows.keys().nth(k % naive.flows.len()).unwrap();
                        let f = naive.flows.remove(&id).unwrap();
                        let left = net.stop(naive.t, id);
                        prop_assert!((left - f.rem).abs() <= 1e-6 * f.size, "stop {id}: {left} vs {}", f.rem);
                        carried += f.size - left;
                        sizes.remove(&id);
                    }
                    Op::Advance(dt) => {
                        let target = naive.t + dt;
                        let want = naive.advance(target);
                        let mut got = Vec::new();
                        while let Some((id, t)) = net.pop_finished(target) {
                            net.check(t).map_err(TestCaseError::fail)?;
                            got.push((id, t));
                        }
                        let want: BTreeMap<FlowId, f64> = want.into_iter().collect();
                        let got_map: BTreeMap<FlowId, f64> = got.iter().copied().collect();
                        prop_assert_eq!(want.keys().collect::<Vec<_>>(), got_map.keys().collect::<Vec<_>>(),
                            "finished by {}", target);
                        for (id, t) in &got {
                            let w = want[id];
                            prop_assert!((t - w).abs() <= 1e-7 * w.max(1.0), "flow {id} finished at {t}, reference {w}");
                            carried += sizes.remove(id).unwrap();
                        }
                    }
                }
                net.check(naive.t).map_err(TestCaseError::fail)?;
                naive.rates();
                for &(id, r) in &naive.rates {
                    let got = net.rate(id);
                    prop_assert!(got == r || (got - r).abs() <= 1e-9 * got.max(r), "rate of {id}: {got} vs {r}");
                    if r == INF {
                        continue; // Carried at once, popped by the next advance.
                    }
                    let rem = net.remaining(id, naive.t);
                    let f = &naive.flows[&id];
                    prop_assert!((rem - f.rem).abs() <= 1e-6 * f.size, "remaining of {id}: {rem} vs {}", f.rem);
                }
            }
            for (&id, &size) in &sizes {
                carried += size - net.remaining(id, naive.t);
            }
            let delivered: f64 = (0..3).map(|l| net.delivered(l, naive.t)).sum();
            prop_assert!((delivered - carried).abs() <= 1e-9 * carried.max(1.0) + 1e-6,
                "delivered {delivered}, carried {carried}");
        }
    }

    /// The benchmark's clock: the thread's CPU time where Linux gives it
    /// (`/proc/thread-self/schedstat`, nanoseconds on a CPU), so that a machine shared
    /// with other work still gives comparable numbers; wall time elsewhere.
    struct Clock(Option<f64>, std::time::Instant);

    impl Clock {
        fn cpu() -> Option<f64> {
            let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
            Some(s.split_whitespace().next()?.parse::<f64>().ok()? * 1e-9)
        }
        fn start() -> Self {
            Clock(Self::cpu(), std::time::Instant::now())
        }
        fn seconds(&self) -> f64 {
            match (self.0, Self::cpu()) {
                (Some(a), Some(b)) => b - a,
                _ => self.1.elapsed().as_secs_f64(),
            }
        }
    }

    /// A seeded random workload: `n` flows kept in progress on link 0 (each finish
    /// replaced by a start), one access per flow with lognormal caps (median 1 MB/s,
    /// σ = 1), exponential sizes (mean 100 MB), the link's capacity `n`/4 MB/s. In the
    /// steady state the slow flows accumulate (a flow stays in proportion to 1/cap), so
    /// the flows' caps sum to about 0.6·n MB/s: the link is the bottleneck of the fast
    /// flows, and the level moves across the caps. With `share`, consecutive flows share
    /// an access in pairs. Returns the finish times' bits and the seconds of the loop.
    fn hold(
        net: &mut FlowNet,
        n: usize,
        ops: usize,
        share: bool,
        check_every: usize,
    ) -> (Vec<u64>, f64) {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(n as u64);
        let caps = LogNormal::new(1e6f64.ln(), 1.0).unwrap();
        let sizes = Exp::new(1.0f64 / 1e8).unwrap();
        let link = net.add_link(n as f64 * 0.25e6);
        let mut acap: BTreeMap<u64, f64> = BTreeMap::new();
        let mut key = 0u64;
        let mut start = |net: &mut FlowNet, rng: &mut rand_pcg::Pcg64Mcg, t: f64| {
            key += 1;
            let k = if share { key / 2 } else { key };
            let c = *acap.entry(k).or_insert_with(|| caps.sample(rng));
            net.start(t, link, k, c, sizes.sample(rng).max(1.0));
        };
        for _ in 0..n {
            start(net, &mut rng, 0.0);
        }
        let mut out = Vec::with_capacity(ops);
        let t0 = Clock::start();
        for i in 0..ops {
            let t = net.next_finish().unwrap();
            let (_, t) = net.pop_finished(t).unwrap();
            out.push(t.to_bits());
            start(net, &mut rng, t);
            if check_every > 0 && i % check_every == 0 {
                net.check(t).unwrap();
            }
            if rng.random_range(0..8u32) == 0 && check_every > 0 {
                // Now and then a stop, to exercise removal from the middle.
                let flows = net.flows_on(link);
                let f = flows[rng.random_range(0..flows.len())];
                net.stop(t, f);
                start(net, &mut rng, t);
            }
        }
        (out, t0.seconds())
    }

    /// Thousands of changes with hundreds of flows (so that the classes move at every
    /// change), access shared in pairs: the full check holds throughout, and the same
    /// calls give bit-identical finish times.
    #[test]
    fn many_flows_stay_consistent_and_deterministic() {
        let mut a = FlowNet::new();
        let first = hold(&mut a, 300, 4000, true, 7).0;
        let mut b = FlowNet::new();
        assert_eq!(first, hold(&mut b, 300, 4000, true, 7).0);
        // The classes really move (the level is crossed), a few times per change.
        assert!(a.moves > 100 && a.moves < 4 * 4000, "{}", a.moves);
        assert!(
            first
                .windows(2)
                .all(|w| f64::from_bits(w[0]) <= f64::from_bits(w[1]))
        );
        // Memory follows the flows in progress: ids are recycled.
        assert!(a.flows.len() <= 302, "{}", a.flows.len());
    }

    /// The naive recomputation on the same hold workload: every finish recomputes every
    /// rate by progressive filling and advances every flow.
    fn hold_naive(n: usize, ops: usize) -> f64 {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(n as u64);
        let caps = LogNormal::new(1e6f64.ln(), 1.0).unwrap();
        let sizes = Exp::new(1.0f64 / 1e8).unwrap();
        let mut naive = Naive {
            caps: vec![n as f64 * 0.25e6],
            ..Naive::default()
        };
        let mut next: FlowId = 0;
        let mut start = |naive: &mut Naive, rng: &mut rand_pcg::Pcg64Mcg| {
            next += 1;
            let s = sizes.sample(rng).max(1.0);
            let f = NFlow {
                link: 0,
                access: u64::from(next),
                acap: caps.sample(rng),
                size: s,
                rem: s,
            };
            naive.flows.insert(next, f);
        };
        for _ in 0..n {
            start(&mut naive, &mut rng);
        }
        let mut done = 0;
        while done < ops {
            naive.rates();
            let (id, dt) = naive
                .rates
                .iter()
                .map(|&(id, r)| (id, naive.flows[&id].rem / r))
                .fold((0, INF), |a, b| if b.1 < a.1 { b } else { a });
            for &(fid, r) in &naive.rates {
                naive.flows.get_mut(&fid).unwrap().rem -= r * dt;
            }
            naive.t += dt;
            naive.flows.remove(&id);
            start(&mut naive, &mut rng);
            done += 1;
        }
        naive.t
    }

    /// `cargo test --release --lib flow -- --ignored --nocapture`: finish+start pairs
    /// per second of the hold workload, incremental against naive (docs/performance.md).
    #[test]
    #[ignore]
    fn bench_hold_workload() {
        for &(n, ops) in &[
            (1_000usize, 400_000usize),
            (10_000, 400_000),
            (100_000, 400_000),
        ] {
            let mut net = FlowNet::new();
            let (out, s) = hold(&mut net, n, ops, false, 0);
            net.check(f64::from_bits(*out.last().unwrap())).unwrap();
            println!(
                "flownet n = {n:>7}: {:>10.0} finish+start pairs/s ({ops} in {s:.2} s, \
                 {:.2} class moves per change, {:.0} % bottlenecked at the end)",
                ops as f64 / s,
                net.moves as f64 / (n + 2 * ops) as f64,
                100.0 * net.links[0].bott.len() as f64 / n as f64
            );
        }
        for &(n, ops) in &[(1_000usize, 4_000usize), (10_000, 400)] {
            let t0 = Clock::start();
            hold_naive(n, ops);
            let s = t0.seconds();
            println!(
                "naive   n = {n:>7}: {:>10.0} finish+start pairs/s ({ops} in {s:.2} s)",
                ops as f64 / s
            );
        }
    }
}
