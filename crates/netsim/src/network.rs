//! The reference bottleneck between the clients and the server, as one object: the uplink and
//! downlink ([`Link`]) and the router–server hop, each direction computed ahead in one call
//! (see the [`crate::world`] doc for why that is exact). Used by the UDP and TCP simulations and
//! by coap-net's real-time relay, so that all three share the model.
//!
//! Random draws: the links' loss processes and the two hops' jitter each have their own stream
//! of the replication ([`streams`]).

use coap_cc::{Duration, Instant};
use rand_chacha::ChaCha8Rng;

use crate::link::{Link, LinkStats, Offer};
use crate::loss::LossProcess;
use crate::scenario::Scenario;

/// Stream numbers of a replication's components (client `i` uses stream `i`).
pub mod streams {
    /// The server endpoint.
    pub const SERVER: u64 = 0xFFFF_0001;
    /// Uplink errors.
    pub const UPLINK_LOSS: u64 = 0xFFFF_0002;
    /// Downlink errors.
    pub const DOWNLINK_LOSS: u64 = 0xFFFF_0003;
    /// Router → server jitter.
    pub const UP_HOP: u64 = 0xFFFF_0004;
    /// Server → router jitter.
    pub const DOWN_HOP: u64 = 0xFFFF_0005;
    /// Start offsets and batch sizes.
    pub const WORKLOAD: u64 = 0xFFFF_0006;
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
        let d = Duration::from_secs_f64(coap_cc::rng::uniform(&mut self.rng, self.min_s, self.max_s));
        self.last = (t + d).max(self.last);
        self.last
    }
}

/// Clients ⇄ uplink/downlink ⇄ router ⇄ hop ⇄ server.
#[derive(Debug)]
pub struct Network {
    /// Clients → router.
    pub uplink: Link<ChaCha8Rng>,
    /// Router → clients.
    pub downlink: Link<ChaCha8Rng>,
    up_hop: Hop,
    down_hop: Hop,
    up_mtu: u32,
    down_mtu: u32,
    ip_header: u32,
}

impl Network {
    /// The network of replication `rep` of a resolved scenario.
    pub fn new(scn: &Scenario, rep: u32) -> Self {
        let rng = |c| crate::component_rng(scn.seed, rep, c);
        let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
        let link = |s: &crate::scenario::LinkSpec, c| {
            Link::new(s.rate_bps, ms(s.delay_ms), s.buffer_bytes, LossProcess::new(s.loss, rng(c)))
        };
        let hop = |c| Hop {
            rng: rng(c),
            last: Instant::ZERO,
            min_s: scn.server_hop.delay_min_ms / 1000.0,
            max_s: scn.server_hop.delay_max_ms / 1000.0,
        };
        Network {
            uplink: link(&scn.uplink, streams::UPLINK_LOSS),
            downlink: link(&scn.downlink, streams::DOWNLINK_LOSS),
            up_hop: hop(streams::UP_HOP),
            down_hop: hop(streams::DOWN_HOP),
            up_mtu: scn.uplink.mtu,
            down_mtu: scn.downlink.mtu,
            ip_header: scn.ip_header_bytes,
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

    /// Both links' counters.
    pub fn stats(&self) -> (LinkStats, LinkStats) {
        (self.uplink.stats, self.downlink.stats)
    }
}
