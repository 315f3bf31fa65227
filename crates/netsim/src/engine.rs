//! The discrete-event engine: one event loop for every network model and transport.
//!
//! ```text
//!            Workload ── start / ended ──┐
//!                                        ▼
//!   EventQueue ──▶ Sim ──▶ Stack (per host: UDP endpoint, or TCP + RFC 8323) ──send──▶ Medium
//!      ▲            │                                                                   │
//!      └────────────┴──────────── deliveries, timers, the medium's own wake-ups ◀───────┘
//!                   └──▶ Observer (progress; builds the results)
//! ```
//!
//! The engine knows no topology: hosts are indices ([`HostId`]), packets are slots of a reused
//! pool, and the [`Medium`] decides where and when each packet arrives. It is generic over the
//! medium, the stack, the workload and the observer, so every combination is monomorphised and
//! the hot path has no dynamic dispatch.
//!
//! Events: `Start(host)` (its workload begins), `Deliver(packet)`, `Timer(host, slot, gen)` (a
//! stack's timer; stale generations are skipped and not counted), and the medium's own events.
//! The queue orders by (time, insertion); the medium's FIFO lanes keep that order exactly (see
//! [`crate::queue`]). A run ends when every workload host is done (then timers stop firing but
//! packets in flight are still delivered, so late duplicates count) or at its [`Until`]: a
//! safety net (the run is then truncated, unless its workload was done before it: then only
//! what was still in flight past the net is not delivered) or a planned end (a run of fixed
//! length).

use coap_cc::Instant;
use netmodel::{AirFrame, HostId, Medium, Next, Packet, PacketId, Schedule, Workload};

use crate::queue::EventQueue;
use crate::record::{ClientRecord, ExchangeRecord, ExchangeStats};

/// An event.
#[derive(Debug, Clone, Copy)]
enum Ev<E> {
    Start(HostId),
    Deliver(PacketId),
    Timer(HostId, u32, u32),
    /// The host's send of its packet returned ([`Schedule::send_returned`]).
    SendReturned(HostId, PacketId),
    Medium(E),
}

/// What a stack may ask of the engine while it handles an event.
pub trait Context<P> {
    /// The current virtual time.
    fn now(&self) -> Instant;
    /// Every workload host is done: timers are no longer armed.
    fn stopping(&self) -> bool;
    /// Sends a packet of `size` network-layer bytes from `from` to `to`; `fill` writes its
    /// payload into a reused slot.
    /// Returns the packet's handle, which [`Stack::send_returned`] names it by.
    fn send(&mut self, from: HostId, to: HostId, size: u32, fill: impl FnOnce(&mut P)) -> PacketId;
    /// Fires [`Stack::timeout`] for (`host`, `slot`, `gen`) at `at`.
    fn timer(&mut self, host: HostId, slot: u32, gen: u32, at: Instant);
    /// `host`'s workload starts: its first step (asked [`Context::parallel`] times).
    fn start(&mut self, host: HostId) -> Next;
    /// How many exchanges `host` keeps open at once.
    fn parallel(&self, host: HostId) -> u32;
    /// An open-loop host's next arrival after the exchange it just started (None: closed loop,
    /// or no more).
    fn next_arrival(&mut self, host: HostId) -> Option<Instant>;
    /// One of `host`'s exchanges ended: its next step.
    fn ended(&mut self, host: HostId) -> Next;
}

/// The transport and application layers of every host: what it does with starts, packets and
/// timers. Implementations: [`crate::udp::UdpStack`] (CoAP over UDP, `coap_endpoint::Endpoint`)
/// and [`crate::tcp_stack::TcpStack`] (CoAP over the TCP model).
pub trait Stack {
    /// What a packet carries.
    type Payload: Default;
    /// `host`'s workload starts.
    fn start<C: Context<Self::Payload>>(&mut self, ctx: &mut C, host: HostId);
    /// A packet arrives at `packet.to`. Returns whether it was unnecessary (its receiver had
    /// what it carried already: a duplicate response, a spurious retransmission).
    fn receive<C: Context<Self::Payload>>(&mut self, ctx: &mut C, packet: &Packet, payload: &Self::Payload) -> bool;
    /// Timer (`host`, `slot`) of generation `gen` fires. Returns false for a stale one.
    fn timeout<C: Context<Self::Payload>>(&mut self, ctx: &mut C, host: HostId, slot: u32, gen: u32) -> bool;
    /// The end of the run: every workload host's records, in host order.
    fn finish(self) -> Records;
    /// Whether the stack takes the frames the medium puts on the air ([`Stack::on_air`]): a
    /// capture's. Without it the engine keeps none.
    const TAPS_AIR: bool = false;
    /// A frame went on the air, carrying `payload` when it is one of the stack's packets (not
    /// one of the medium's own). Called after the event in which it did, in order.
    fn on_air(&mut self, frame: &AirFrame, payload: Option<&Self::Payload>) {
        let _ = (frame, payload);
    }
    /// `host`'s send of `packet` (the handle [`Context::send`] gave) returned: a medium whose
    /// sends block tells it when ([`Schedule::send_returned`]). Nothing by default.
    fn send_returned<C: Context<Self::Payload>>(&mut self, ctx: &mut C, host: HostId, packet: PacketId) {
        let _ = (ctx, host, packet);
    }
}

/// Per-client and per-exchange records.
#[derive(Debug, Default)]
pub struct Records {
    /// One per workload host.
    pub clients: Vec<ClientRecord>,
    /// By client, then exchange (only with [`crate::record::Detail::Exchanges`]).
    pub exchanges: Vec<ExchangeRecord>,
    /// Every exchange's RTT and retransmissions.
    pub stats: ExchangeStats,
    /// CoAP over TCP: the TCP endpoints' counters.
    pub tcp: Option<crate::record::TcpCounters>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnd {
    /// Events processed.
    pub events: u64,
    /// When the last workload host finished (or the time limit), ns.
    pub end_ns: u64,
    /// The time limit came first.
    pub truncated: bool,
}

/// Sees a run and builds its results from the stack's records and the medium's report.
pub trait Observer<R> {
    /// The results.
    type Output;
    /// An exchange of `host` ended.
    fn exchange_ended(&mut self, now: Instant, host: HostId) {
        let _ = (now, host);
    }
    /// The run is over.
    fn finish(self, end: RunEnd, records: Records, network: R) -> Self::Output;
}

/// When a run stops if its workload has not finished by then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// A safety net: reaching it truncates the run (its unfinished exchanges are missing).
    SafetyNet(Instant),
    /// The run's planned length: it ends there, exchanges still open are not reported, and it
    /// is not a truncation (the mesh's fixed-duration runs).
    Planned(Instant),
}

impl Until {
    fn at(self) -> Instant {
        match self {
            Until::SafetyNet(t) | Until::Planned(t) => t,
        }
    }
}

/// One armed timer of a host, re-armed only when its deadline changes; an event of an older
/// generation is stale. 16 bytes (the deadline, whether it is armed, the generation): every
/// simulated host has two.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimerSlot {
    at: Instant,
    armed: bool,
    gen: u32,
}

impl TimerSlot {
    /// Arms the slot for `next` unless it already is (or the run is stopping).
    pub fn rearm<P, C: Context<P>>(&mut self, ctx: &mut C, host: HostId, slot: u32, next: Option<Instant>) {
        if next != self.armed.then_some(self.at) && !ctx.stopping() {
            self.armed = next.is_some();
            self.at = next.unwrap_or(Instant::ZERO);
            self.gen = self.gen.wrapping_add(1);
            if let Some(t) = next {
                ctx.timer(host, slot, self.gen, t);
            }
        }
    }

    /// An event of generation `gen` fires: true if it is current (the slot is then disarmed).
    pub fn fire(&mut self, gen: u32) -> bool {
        if gen != self.gen {
            return false;
        }
        self.armed = false;
        true
    }
}

struct Slot<P> {
    packet: Packet,
    payload: P,
}

/// Everything but the stack: what [`Context`] exposes.
struct Core<M: Medium, W, O, P> {
    now: Instant,
    queue: EventQueue<Ev<M::Event>>,
    medium: M,
    workload: W,
    observer: O,
    pool: Vec<Slot<P>>,
    free: Vec<u32>,
    /// The frames put on the air in the current event, when the stack takes them.
    air: Option<Vec<AirFrame>>,
    hosts_done: u32,
    stopping: bool,
    end: Instant,
}

/// The rank of an event at `host` in the queue: its node id (host + 1) when the model orders
/// equal-time events by host, else 0 (insertion order alone).
fn rank<M: Medium>(host: HostId) -> u16 {
    if M::HOST_ORDER {
        u16::try_from(host.0 + 1).unwrap_or(u16::MAX)
    } else {
        0
    }
}

/// The medium's view of the queue and the pool.
struct Sched<'a, M: Medium, P> {
    queue: &'a mut EventQueue<Ev<M::Event>>,
    pool: &'a mut [Slot<P>],
    free: &'a mut Vec<u32>,
    air: &'a mut Option<Vec<AirFrame>>,
}

impl<M: Medium, P> Schedule<M::Event> for Sched<'_, M, P> {
    fn deliver(&mut self, at: Instant, lane: usize, packet: Packet) {
        self.pool[packet.id.0 as usize].packet.note = packet.note;
        self.queue.push_lane(lane, at.as_nanos(), rank::<M>(packet.to), Ev::Deliver(packet.id));
    }
    fn discard(&mut self, packet: Packet) {
        self.free.push(packet.id.0);
    }
    fn wake(&mut self, at: Instant, event: M::Event) {
        self.queue.push_ranked(at.as_nanos(), rank::<M>(M::event_host(&event)), Ev::Medium(event));
    }
    fn on_air(&mut self, frame: &AirFrame) {
        if let Some(air) = self.air {
            air.push(*frame);
        }
    }
    fn send_returned(&mut self, at: Instant, packet: Packet) {
        self.queue.push_ranked(at.as_nanos(), rank::<M>(packet.from), Ev::SendReturned(packet.from, packet.id));
    }
}

impl<M: Medium, W: Workload, O: Observer<M::Report>, P: Default> Context<P> for Core<M, W, O, P> {
    fn now(&self) -> Instant {
        self.now
    }

    fn stopping(&self) -> bool {
        self.stopping
    }

    fn send(&mut self, from: HostId, to: HostId, size: u32, fill: impl FnOnce(&mut P)) -> PacketId {
        let id = self.free.pop().unwrap_or(self.pool.len() as u32);
        let packet = Packet { id: PacketId(id), from, to, size, note: 0 };
        if id as usize == self.pool.len() {
            self.pool.push(Slot { packet, payload: P::default() });
        }
        let slot = &mut self.pool[id as usize];
        slot.packet = packet;
        fill(&mut slot.payload);
        let mut sched: Sched<'_, M, P> =
            Sched { queue: &mut self.queue, pool: &mut self.pool, free: &mut self.free, air: &mut self.air };
        self.medium.send(self.now, packet, &mut sched);
        packet.id
    }

    fn timer(&mut self, host: HostId, slot: u32, gen: u32, at: Instant) {
        self.queue.push_ranked(at.as_nanos(), rank::<M>(host), Ev::Timer(host, slot, gen));
    }

    fn parallel(&self, host: HostId) -> u32 {
        self.workload.parallel(host)
    }

    fn next_arrival(&mut self, host: HostId) -> Option<Instant> {
        self.workload.next_arrival(host, self.now)
    }

    fn start(&mut self, host: HostId) -> Next {
        let next = self.workload.start(host, self.now);
        self.on_next(host, next);
        next
    }

    fn ended(&mut self, host: HostId) -> Next {
        self.observer.exchange_ended(self.now, host);
        let next = self.workload.ended(host, self.now);
        self.on_next(host, next);
        next
    }
}

impl<M: Medium, W: Workload, O, P> Core<M, W, O, P> {
    /// Counts the workload hosts that are done; the last one stops the run. A host that is
    /// done may start another (a chained workload).
    fn on_next(&mut self, host: HostId, next: Next) {
        if next == Next::Done {
            if let Some((h, at)) = self.workload.after_done(host, self.now) {
                self.queue.push_ranked(at.as_nanos(), rank::<M>(h), Ev::Start(h));
            }
            self.hosts_done += 1;
            if self.hosts_done == self.workload.hosts() {
                self.stopping = true;
                self.end = self.end.max(self.now); // a planned end stays the end
            }
        }
    }
}

/// Hands the frames put on the air in the last event to the stack, each with its packet's
/// payload while the packet is still in the pool (a slot freed and taken again holds another;
/// the medium's own packets are not in it). The medium may have rewritten its copy's `note`.
fn hand_on_air<S: Stack>(stack: &mut S, air: &mut Option<Vec<AirFrame>>, pool: &[Slot<S::Payload>]) {
    let Some(frames) = air else { return };
    for f in frames.drain(..) {
        let p = &f.packet;
        let same = |s: &&Slot<S::Payload>| (s.packet.from, s.packet.to, s.packet.size) == (p.from, p.to, p.size);
        let payload = pool.get(p.id.0 as usize).filter(same).map(|slot| &slot.payload);
        stack.on_air(&f, payload);
    }
}

/// Runs `stack` over `medium` with `workload` until every workload host is done or `until`,
/// and hands what happened to `observer`.
pub fn run<M, S, W, O>(medium: M, mut stack: S, workload: W, observer: O, until: Until) -> O::Output
where
    M: Medium,
    S: Stack,
    W: Workload,
    O: Observer<M::Report>,
{
    let lanes = medium.lanes();
    let mut core: Core<M, W, O, S::Payload> = Core {
        now: Instant::ZERO,
        queue: EventQueue::new(lanes),
        medium,
        workload,
        observer,
        pool: Vec::new(),
        free: Vec::new(),
        air: S::TAPS_AIR.then(Vec::new),
        hosts_done: 0,
        stopping: false,
        end: Instant::ZERO,
    };
    {
        let mut sched: Sched<'_, M, S::Payload> =
            Sched { queue: &mut core.queue, pool: &mut core.pool, free: &mut core.free, air: &mut core.air };
        core.medium.start(&mut sched);
    }
    for (host, at) in core.workload.starts() {
        core.queue.push_ranked(at.as_nanos(), rank::<M>(host), Ev::Start(host));
    }
    let (mut events, mut truncated) = (0u64, false);
    let limit = until.at();
    if let Until::Planned(t) = until {
        core.end = t;
    }
    while let Some((t, ev)) = core.queue.pop() {
        if t > limit.as_nanos() {
            // a finished workload keeps its end: what is left (packets in flight, timers) does
            // not make it a truncated run
            if !core.stopping {
                truncated = matches!(until, Until::SafetyNet(_));
                core.end = limit;
            }
            break;
        }
        core.now = Instant::from_nanos(t);
        match ev {
            Ev::Timer(..) if core.stopping => continue,
            Ev::Timer(host, slot, gen) => {
                if !stack.timeout(&mut core, host, slot, gen) {
                    continue;
                }
            }
            Ev::SendReturned(..) if core.stopping => continue,
            Ev::SendReturned(host, id) => stack.send_returned(&mut core, host, id),
            Ev::Start(host) => stack.start(&mut core, host),
            Ev::Deliver(id) => {
                let slot = &mut core.pool[id.0 as usize];
                let packet = slot.packet;
                // moved out while the stack (which may send, so use the pool) looks at it
                let payload = std::mem::take(&mut slot.payload);
                let unnecessary = stack.receive(&mut core, &packet, &payload);
                core.pool[id.0 as usize].payload = payload; // its buffers are reused
                core.free.push(id.0);
                if unnecessary {
                    core.medium.unnecessary(&packet);
                }
            }
            Ev::Medium(e) => {
                let mut sched: Sched<'_, M, S::Payload> =
                    Sched { queue: &mut core.queue, pool: &mut core.pool, free: &mut core.free, air: &mut core.air };
                core.medium.handle(core.now, e, &mut sched);
            }
        }
        if S::TAPS_AIR {
            hand_on_air(&mut stack, &mut core.air, &core.pool);
        }
        events += 1;
    }
    let end = RunEnd { events, end_ns: core.end.as_nanos(), truncated };
    let records = stack.finish();
    core.medium.finish(core.end);
    let network = core.medium.report();
    core.observer.finish(end, records, network)
}
