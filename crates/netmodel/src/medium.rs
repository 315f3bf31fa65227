//! The interface between a driver and a network model.
//!
//! A driver (the simulator's engine, or the relay) owns the packets' bytes; a model sees only a
//! [`Packet`]: who sends to whom, how many bytes cross the network, and the driver's handle. On
//! [`Medium::send`] the model decides the packet's fate through a [`Schedule`]: delivered to its
//! destination at some time, or discarded. A model whose state at time t depends on decisions
//! made after the packet was sent (a shared radio channel, a CSMA queue) asks to be woken with an
//! event of its own ([`Schedule::wake`]) and decides then; a model that can compute the whole
//! path at once (the wired bottleneck) never does, and costs one event per packet.
//!
//! Deliveries go on FIFO *lanes*: a lane's delivery times never decrease (the driver checks),
//! which lets the simulator's event queue handle them in O(1). A model with no FIFO paths uses
//! any lane; order is exact either way.

use coap_time::Instant;

/// A host: an index into the driver's list of hosts. A host may be a client, a server and a
/// router at once; what it does is up to the stack and the workload, not the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HostId(pub u32);

impl HostId {
    /// As an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The driver's handle of a packet in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketId(pub u32);

/// A packet as a model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// The driver's handle.
    pub id: PacketId,
    /// Sending host.
    pub from: HostId,
    /// Destination host.
    pub to: HostId,
    /// Bytes on the network layer (IP header included).
    pub size: u32,
    /// The model's own annotation, kept with the packet by the driver and handed back in
    /// [`Medium::unnecessary`] (the wired bottleneck: the packet's downlink busy time).
    pub note: u64,
}

/// A link-layer frame a model with a radio put on the air (the mesh's 802.15.4 frames), for a
/// driver that captures them: its first symbol's time, its sender and receiver (the model's
/// node indices; `None`: a broadcast), whether it is an acknowledgement, its MPDU bytes, and the
/// packet it carries as the model keeps it (a driver's packet, or one of the model's own with
/// what it means in its `note`, which the model decodes: the mesh's `air::OnAir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AirFrame {
    /// When its first symbol went on the air.
    pub at: Instant,
    /// The node that sent it.
    pub sender: u16,
    /// The node it is addressed to; `None` for a broadcast.
    pub receiver: Option<u16>,
    /// A link-layer acknowledgement (of the last frame `receiver` sent `sender`).
    pub ack: bool,
    /// MPDU bytes (MAC header, payload, FCS).
    pub mpdu: u32,
    /// What it carries.
    pub packet: Packet,
}

/// What a model asks of its driver.
pub trait Schedule<E> {
    /// Deliver `packet` (with its `note`) to `packet.to` at `at`, on FIFO lane `lane`
    /// (< [`Medium::lanes`]).
    fn deliver(&mut self, at: Instant, lane: usize, packet: Packet);
    /// The packet is lost; the driver forgets it.
    fn discard(&mut self, packet: Packet);
    /// Call [`Medium::handle`] with `event` at `at` (not before the current time).
    fn wake(&mut self, at: Instant, event: E);
    /// A frame went on the air (models with a radio). A driver that captures writes it; the
    /// default forgets it. Nothing the model does may depend on this call.
    fn on_air(&mut self, frame: &AirFrame) {
        let _ = frame;
    }
    /// The sending host's stack got `packet` back from its send at `at`: a mote whose send
    /// blocks (a Cooja mote's nullmac over nullrdc returns after the frame and its ACK wait)
    /// tells its application when the call returned, which is when Erbium takes a
    /// transmission's time and arms its timer. Models that never block a sender do not call it;
    /// the default forgets it.
    fn send_returned(&mut self, at: Instant, packet: Packet) {
        let _ = (at, packet);
    }
}

/// A network model.
pub trait Medium {
    /// The model's own events (a model that computes paths ahead has none: use
    /// [`core::convert::Infallible`]).
    type Event: Copy + core::fmt::Debug;
    /// The model's counters at the end of a run: its own section of the results.
    type Report;

    /// Whether events of equal time at different hosts act in host order (the mesh: Cooja's
    /// motes in node-id order) rather than in the order they were scheduled (the default).
    const HOST_ORDER: bool = false;

    /// The host one of the model's events acts at (used with [`Medium::HOST_ORDER`]).
    fn event_host(event: &Self::Event) -> HostId {
        let _ = event;
        HostId(0)
    }

    /// FIFO delivery lanes this model uses.
    fn lanes(&self) -> usize {
        1
    }

    /// The run begins (time 0): a model with events of its own from the start schedules them
    /// here (the mesh's mobility).
    fn start<S: Schedule<Self::Event>>(&mut self, _sched: &mut S) {}

    /// `packet` leaves `packet.from` at `now`. Calls come in non-decreasing `now`.
    fn send<S: Schedule<Self::Event>>(&mut self, now: Instant, packet: Packet, sched: &mut S);

    /// One of the model's own events, at the time it asked for.
    fn handle<S: Schedule<Self::Event>>(&mut self, now: Instant, event: Self::Event, sched: &mut S) {
        let _ = (now, event, sched);
    }

    /// A delivered packet turned out unnecessary (its receiver already had what it carried: a
    /// duplicate response, a spurious retransmission), for wasted-capacity accounting.
    fn unnecessary(&mut self, packet: &Packet) {
        let _ = packet;
    }

    /// The run ends at `end` (called once, before [`Medium::report`]): counters of time (a
    /// radio's on-time) close there. Nothing by default.
    fn finish(&mut self, end: Instant) {
        let _ = end;
    }

    /// The counters, at the end of a run.
    fn report(&self) -> Self::Report;
}
