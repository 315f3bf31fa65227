//! The wired reference bottleneck between many clients and one server:
//!
//! ```text
//! clients ─▶ [uplink buffer] ═ uplink ═▶ router ─ U[min, max] ─▶ server
//! clients ◀═ downlink ═ [downlink buffer] ◀ router ◀ U[min, max] ─ server
//! ```
//!
//! Each direction is computed ahead in one call: the uplink's queue (see [`crate::link`]) then
//! the router–server hop, or the hop then the downlink's queue at the router-arrival time. This
//! is exact because every queue has a single FIFO feeder whose offers come in non-decreasing
//! time order; the model therefore never asks to be woken ([`Medium::Event`] is
//! [`Infallible`]) and costs one event per packet, its delivery.
//!
//! Which way a packet goes is decided by the server's [`HostId`]: packets to it go up, packets
//! from it go down; packets between two clients (one client host) are delivered at once.
//!
//! Random draws: the links' loss processes and the two hops' jitter each have their own stream
//! of the replication ([`Stream`]).

use std::convert::Infallible;

use coap_time::{Duration, Instant};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::link::{Link, LinkStats, Offer};
use crate::loss::{LossModel, LossProcess};
use crate::medium::{HostId, Medium, Packet, Schedule};
use crate::streams::Stream;

/// One direction of the bottleneck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay, ms.
    pub delay_ms: f64,
    /// Tail-drop buffer in front of the link, bytes of IP packets.
    pub buffer_bytes: u64,
    /// Largest IP packet; larger datagrams are fragmented.
    pub mtu: u32,
    /// Link errors (used when `errors = "custom"`, otherwise set from the profile).
    pub loss: LossModel,
}

/// The hop between the router and the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HopSpec {
    /// Smallest extra one-way delay, ms.
    pub delay_min_ms: f64,
    /// Largest extra one-way delay, ms (uniform per packet; FIFO order is kept).
    pub delay_max_ms: f64,
}

/// Everything the bottleneck needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct BottleneckSpec {
    /// Clients → router.
    pub uplink: LinkSpec,
    /// Router → clients.
    pub downlink: LinkSpec,
    /// Router ↔ server.
    pub server_hop: HopSpec,
    /// IP header bytes (of every fragment).
    pub ip_header_bytes: u32,
}

/// One hop of uniform jitter that keeps FIFO order.
#[derive(Debug)]
struct Hop {
    rng: ChaCha8Rng,
    last: Instant,
    min_s: f64,
    max_s: f64,
}

impl Hop {
    /// When a packet entering at `t` leaves: `t` + U[min, max], but never before the previous one.
    fn pass(&mut self, t: Instant) -> Instant {
        let d = Duration::from_secs_f64(coap_time::rng::uniform(&mut self.rng, self.min_s, self.max_s));
        self.last = (t + d).max(self.last);
        self.last
    }
}

/// The bottleneck's counters: its section of a run's results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BottleneckReport {
    /// Clients → router.
    pub uplink: LinkStats,
    /// Router → clients.
    pub downlink: LinkStats,
    /// Downlink busy time spent on packets that arrived unnecessary (duplicates), ns.
    pub wasted_downlink_ns: u64,
}

/// Clients ⇄ uplink/downlink ⇄ router ⇄ hop ⇄ server.
#[derive(Debug)]
pub struct Bottleneck {
    /// Clients → router.
    pub uplink: Link<ChaCha8Rng>,
    /// Router → clients.
    pub downlink: Link<ChaCha8Rng>,
    up_hop: Hop,
    down_hop: Hop,
    up_mtu: u32,
    down_mtu: u32,
    ip_header: u32,
    server: HostId,
    wasted_downlink_ns: u64,
}

/// Delivery lanes: to the server, to the clients, between clients.
const LANE_UP: usize = 0;
const LANE_DOWN: usize = 1;
const LANE_LOCAL: usize = 2;

impl Bottleneck {
    /// The bottleneck of replication `rep` of a run seeded with `seed`, in front of `server`.
    pub fn new(spec: &BottleneckSpec, server: HostId, seed: u64, rep: u32) -> Self {
        let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
        let link = |s: &LinkSpec, stream: Stream| {
            Link::new(s.rate_bps, ms(s.delay_ms), s.buffer_bytes, LossProcess::new(s.loss, stream.rng(seed, rep)))
        };
        let hop = |stream: Stream| Hop {
            rng: stream.rng(seed, rep),
            last: Instant::ZERO,
            min_s: spec.server_hop.delay_min_ms / 1000.0,
            max_s: spec.server_hop.delay_max_ms / 1000.0,
        };
        Bottleneck {
            uplink: link(&spec.uplink, Stream::UplinkLoss),
            downlink: link(&spec.downlink, Stream::DownlinkLoss),
            up_hop: hop(Stream::UpHop),
            down_hop: hop(Stream::DownHop),
            up_mtu: spec.uplink.mtu,
            down_mtu: spec.downlink.mtu,
            ip_header: spec.ip_header_bytes,
            server,
            wasted_downlink_ns: 0,
        }
    }

    /// A datagram of `size` IP bytes leaves a client at `t`: when it reaches the server, or
    /// `None` if it was dropped. Calls must come in non-decreasing `t`.
    pub fn upstream(&mut self, t: Instant, size: u32) -> Option<Instant> {
        match self.uplink.offer_datagram(t, size, self.up_mtu, self.ip_header) {
            Offer::Delivered { at, .. } => Some(self.up_hop.pass(at)),
            _ => None,
        }
    }

    /// A datagram of `size` IP bytes leaves the server at `t`: when it reaches its client and how
    /// long it kept the downlink busy, or `None` if it was dropped. Calls must come in
    /// non-decreasing `t`.
    pub fn downstream(&mut self, t: Instant, size: u32) -> Option<(Instant, Duration)> {
        let at_router = self.down_hop.pass(t);
        match self.downlink.offer_datagram(at_router, size, self.down_mtu, self.ip_header) {
            Offer::Delivered { at, busy } => Some((at, busy)),
            _ => None,
        }
    }
}

impl Medium for Bottleneck {
    type Event = Infallible;
    type Report = BottleneckReport;

    fn lanes(&self) -> usize {
        3
    }

    fn send<S: Schedule<Infallible>>(&mut self, now: Instant, mut packet: Packet, sched: &mut S) {
        if packet.to == self.server {
            match self.upstream(now, packet.size) {
                Some(at) => sched.deliver(at, LANE_UP, packet),
                None => sched.discard(packet),
            }
        } else if packet.from == self.server {
            match self.downstream(now, packet.size) {
                Some((at, busy)) => {
                    packet.note = busy.as_nanos();
                    sched.deliver(at, LANE_DOWN, packet)
                }
                None => sched.discard(packet),
            }
        } else {
            sched.deliver(now, LANE_LOCAL, packet);
        }
    }

    fn unnecessary(&mut self, packet: &Packet) {
        self.wasted_downlink_ns += packet.note;
    }

    fn report(&self) -> BottleneckReport {
        BottleneckReport {
            uplink: self.uplink.stats,
            downlink: self.downlink.stats,
            wasted_downlink_ns: self.wasted_downlink_ns,
        }
    }
}
