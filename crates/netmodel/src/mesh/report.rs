//! What the mesh counts: losses by cause ([`Drops`]), each mote's packets, frames and radio time
//! ([`NodeStats`], [`NodeReport`]), and the run's report ([`MeshReport`]).

use serde::Serialize;

use super::topology::Role;

/// Why a packet or a frame was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    Collision,
    CcaBusy,
    CsmaRetryLimit,
    QueueFull,
    NoNeighborQueue,
    RxOverflow,
    NoRoute,
    TxFail,
    RxFail,
    OutOfRange,
    Asleep,
    NoAck,
    RxStall,
    RxTurnaround,
    RplLoop,
    NdUnresolved,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Losses by cause. Frame losses are counted at the frame's sender; packet drops where they happen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Drops {
    /// The frame's receiver was transmitting, interfered or receiving another frame.
    pub collision: u64,
    /// nullmac found the channel busy.
    pub cca_busy: u64,
    /// CSMA gave up after its transmissions.
    pub csma_retry_limit: u64,
    /// No free CSMA packet buffer.
    pub queue_full: u64,
    /// No free CSMA neighbour queue.
    pub no_neighbor_queue: u64,
    /// The receiver's RX FIFO was full.
    pub rx_overflow: u64,
    /// No route to the destination.
    pub no_route: u64,
    /// The frame failed its transmission draw and reached nobody.
    pub tx_fail: u64,
    /// The receiver's reception draw failed.
    pub rx_fail: u64,
    /// The next hop was out of range.
    pub out_of_range: u64,
    /// ContikiMAC: the addressee's radio was off (a strobe's copy before its wake-up).
    #[serde(skip_serializing_if = "is_zero")]
    pub asleep: u64,
    /// ContikiMAC under nullmac: the strobe ended without an ACK.
    #[serde(skip_serializing_if = "is_zero")]
    pub noack: u64,
    /// MSPSim's CC2420: the receiver's RX FIFO held a partial frame, and its driver heard of no
    /// later frame until the FIFO overflowed ([`super::MeshSpec::partial_frame_stall`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub rx_stall: u64,
    /// MSPSim's CC2420: the receiver's radio was not yet searching for a frame again (12
    /// symbols after its own transmission, 8 after a frame it took) when the frame's preamble
    /// began, so it never synchronised on it ([`super::MeshSpec::rx_turnaround`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub rx_turnaround: u64,
    /// RPL's loop detection (`topology.rpl_etx`): a packet that crossed a rank inconsistency a
    /// second time (its hop-by-hop option's rank error already set) is dropped.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_loop: u64,
    /// IPv6 neighbour discovery ([`super::MeshSpec::nd`]): the next hop had no resolved entry in
    /// the mote's neighbour table; Contiki drops the packet (and starts resolving it).
    #[serde(skip_serializing_if = "is_zero")]
    pub nd_unresolved: u64,
}

impl Drops {
    pub(crate) fn add(&mut self, cause: Cause) {
        let c = match cause {
            Cause::Collision => &mut self.collision,
            Cause::CcaBusy => &mut self.cca_busy,
            Cause::CsmaRetryLimit => &mut self.csma_retry_limit,
            Cause::QueueFull => &mut self.queue_full,
            Cause::NoNeighborQueue => &mut self.no_neighbor_queue,
            Cause::RxOverflow => &mut self.rx_overflow,
            Cause::NoRoute => &mut self.no_route,
            Cause::TxFail => &mut self.tx_fail,
            Cause::RxFail => &mut self.rx_fail,
            Cause::OutOfRange => &mut self.out_of_range,
            Cause::Asleep => &mut self.asleep,
            Cause::NoAck => &mut self.noack,
            Cause::RxStall => &mut self.rx_stall,
            Cause::RxTurnaround => &mut self.rx_turnaround,
            Cause::RplLoop => &mut self.rpl_loop,
            Cause::NdUnresolved => &mut self.nd_unresolved,
        };
        *c += 1;
    }

    /// Losses of frames this node sent.
    pub fn frame_losses(&self) -> u64 {
        self.collision
            + self.rx_overflow
            + self.tx_fail
            + self.rx_fail
            + self.out_of_range
            + self.asleep
            + self.rx_stall
            + self.rx_turnaround
    }

    /// Packets dropped at this node before a frame was sent.
    pub fn packet_drops(&self) -> u64 {
        self.cca_busy
            + self.csma_retry_limit
            + self.queue_full
            + self.no_neighbor_queue
            + self.no_route
            + self.noack
            + self.rpl_loop
            + self.nd_unresolved
    }

    /// Every loss.
    pub fn total(&self) -> u64 {
        self.frame_losses() + self.packet_drops()
    }

    /// Sums another's counts into this one.
    pub fn merge(&mut self, o: &Drops) {
        self.collision += o.collision;
        self.cca_busy += o.cca_busy;
        self.csma_retry_limit += o.csma_retry_limit;
        self.queue_full += o.queue_full;
        self.no_neighbor_queue += o.no_neighbor_queue;
        self.rx_overflow += o.rx_overflow;
        self.no_route += o.no_route;
        self.tx_fail += o.tx_fail;
        self.rx_fail += o.rx_fail;
        self.out_of_range += o.out_of_range;
        self.asleep += o.asleep;
        self.noack += o.noack;
        self.rx_stall += o.rx_stall;
        self.rx_turnaround += o.rx_turnaround;
        self.rpl_loop += o.rpl_loop;
        self.nd_unresolved += o.nd_unresolved;
    }

    pub(crate) fn is_empty(&self) -> bool {
        *self == Drops::default()
    }
}

/// One mote's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NodeStats {
    /// Packets its CoAP layer sent.
    pub originated: u64,
    /// Packets it received for others and queued for forwarding.
    pub forwarded: u64,
    /// Packets delivered to its CoAP layer.
    pub delivered: u64,
    /// Frames it put on the air.
    pub frames_sent: u64,
    /// Frames addressed to it that it took into its RX FIFO.
    pub frames_received: u64,
    /// CSMA transmission attempts that found the channel busy and were retried later.
    pub csma_busy_retries: u64,
    /// Time its radio spent transmitting, ns.
    pub tx_busy_ns: u64,
    /// Losses.
    pub drops: Drops,
    /// ContikiMAC: packets its next hop took (a strobe's copy taken into the next hop's FIFO).
    #[serde(skip_serializing_if = "is_zero")]
    pub handed_over: u64,
    /// ContikiMAC: copies it ACKed but had taken already.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// ContikiMAC: ACKs its radio sent.
    #[serde(skip_serializing_if = "is_zero")]
    pub acks_sent: u64,
    /// ContikiMAC: packets the MAC gave up on after the next hop had taken them (lost ACKs);
    /// not drops.
    #[serde(skip_serializing_if = "is_zero")]
    pub given_up_after_handover: u64,
    /// ContikiMAC: strobe copies that did not reach the addressee, by cause (the packet is not
    /// lost with them: the strobe goes on, the MAC retries).
    #[serde(skip_serializing_if = "Drops::is_empty")]
    pub copy_drops: Drops,
    /// ContikiMAC: time its radio was on, ns (nullrdc: 0, the radio is always on).
    #[serde(skip_serializing_if = "is_zero")]
    pub radio_on_ns: u64,
    /// RPL control frames it put on the air (each copy of a ContikiMAC train); not in
    /// `frames_sent`.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_frames_sent: u64,
    /// RPL control frames it took into its RX FIFO (broadcasts too); not in `frames_received`.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_frames_received: u64,
    /// RPL control packets it sent that were lost (busy channel, full queue, a unicast frame lost
    /// on the air); not in `drops`.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_dropped: u64,
    /// Neighbour discovery's NS and NA frames it put on the air ([`super::MeshSpec::nd`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub nd_frames_sent: u64,
    /// Neighbour discovery's NS and NA frames it took into its RX FIFO.
    #[serde(skip_serializing_if = "is_zero")]
    pub nd_frames_received: u64,
    /// Neighbour discovery's messages it sent that were lost.
    #[serde(skip_serializing_if = "is_zero")]
    pub nd_dropped: u64,
    /// RPL start-up: DAOs whose route its full table refused (the DAO went no further).
    #[serde(skip_serializing_if = "is_zero")]
    pub routes_refused: u64,
    /// RPL start-up: routes its full table evicted (least recently used) for a new one.
    #[serde(skip_serializing_if = "is_zero")]
    pub routes_evicted: u64,
    /// RPL start-up: times it changed its preferred parent after joining.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_parent_switches: u64,
    /// RPL start-up: times the parent its DAOs (originated or forwarded, not No-Path) go to
    /// changed, which is all of its parent changes a trace of the frames can see: one undone
    /// before its next DAO leaves none (`validation/cooja`'s `parent_history`).
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_dao_parent_changes: u64,
    /// RPL on ETX: local repairs (`rpl_local_repair`: its rank through the best candidate rose
    /// above what MaxRankIncrease allows, or no candidate was left, and it detached).
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_local_repairs: u64,
}

/// Whose a frame is, for the counters: data, RPL's control traffic, or neighbour discovery's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Traffic {
    Data,
    Rpl,
    Nd,
}

impl NodeStats {
    /// A frame of `t` it put on the air.
    pub(crate) fn frame_sent(&mut self, t: Traffic) {
        *match t {
            Traffic::Data => &mut self.frames_sent,
            Traffic::Rpl => &mut self.rpl_frames_sent,
            Traffic::Nd => &mut self.nd_frames_sent,
        } += 1;
    }

    /// A frame of `t` it took into its RX FIFO.
    pub(crate) fn frame_received(&mut self, t: Traffic) {
        *match t {
            Traffic::Data => &mut self.frames_received,
            Traffic::Rpl => &mut self.rpl_frames_received,
            Traffic::Nd => &mut self.nd_frames_received,
        } += 1;
    }

    /// Sums another's counts into this one.
    pub fn merge(&mut self, o: &NodeStats) {
        self.originated += o.originated;
        self.forwarded += o.forwarded;
        self.delivered += o.delivered;
        self.frames_sent += o.frames_sent;
        self.frames_received += o.frames_received;
        self.csma_busy_retries += o.csma_busy_retries;
        self.tx_busy_ns += o.tx_busy_ns;
        self.drops.merge(&o.drops);
        self.handed_over += o.handed_over;
        self.duplicates += o.duplicates;
        self.acks_sent += o.acks_sent;
        self.given_up_after_handover += o.given_up_after_handover;
        self.copy_drops.merge(&o.copy_drops);
        self.radio_on_ns += o.radio_on_ns;
        self.rpl_frames_sent += o.rpl_frames_sent;
        self.rpl_frames_received += o.rpl_frames_received;
        self.rpl_dropped += o.rpl_dropped;
        self.nd_frames_sent += o.nd_frames_sent;
        self.nd_frames_received += o.nd_frames_received;
        self.nd_dropped += o.nd_dropped;
        self.routes_refused += o.routes_refused;
        self.routes_evicted += o.routes_evicted;
        self.rpl_parent_switches += o.rpl_parent_switches;
        self.rpl_dao_parent_changes += o.rpl_dao_parent_changes;
        self.rpl_local_repairs += o.rpl_local_repairs;
    }
}

/// One mote in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeReport {
    /// Its id.
    pub id: u32,
    /// What it did.
    pub role: Role,
    /// Position, m.
    pub x: f64,
    /// Position, m.
    pub y: f64,
    /// Its RPL parent's id (None for the root or an unreachable mote).
    pub parent: Option<u32>,
    /// Hops to the border router (None: unreachable).
    pub rank: Option<u32>,
    /// It sends the ContikiMAC way (its `frames_sent` are strobe copies); not written out.
    #[serde(skip)]
    pub contikimac: bool,
    /// A moving mote's positions every `trail_every_s` (empty for a mote that stays).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trail: Vec<[f64; 2]>,
    /// Counters.
    #[serde(flatten)]
    pub stats: NodeStats,
}

/// The mesh's counters at the end of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshReport {
    /// Per mote, in id order.
    pub nodes: Vec<NodeReport>,
    /// The cloud hosts' packets, if there are cloud hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudStats>,
}

/// What the cloud hosts sent into the mesh and received from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CloudStats {
    /// Packets the cloud hosts sent.
    pub originated: u64,
    /// Packets delivered to them.
    pub delivered: u64,
}
