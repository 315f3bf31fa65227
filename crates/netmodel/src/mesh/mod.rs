//! The low-power wireless mesh: IEEE 802.15.4 radios on Cooja's unit-disk medium, Contiki 3.0's
//! 6LoWPAN framing, nullrdc or ContikiMAC ([`contikimac`]) with nullmac or Contiki's CSMA, a
//! single-threaded CPU per mote, and RPL storing-mode routes; as a [`Medium`] of the one
//! simulation engine. Every detail, with its
//! source and the choices we made where the sources are silent, is in `docs/mesh.md`.
//!
//! ```text
//!  stack ─send─▶ [CPU: tx_prepare] ─▶ MAC (nullmac | CSMA queues) ─▶ [CPU: CCA, turnaround, airtime]
//!                                                                        │ frame on the UDGM medium
//!  stack ◀─deliver─ [CPU: rx_process (+ app at a server)] ◀─ RX FIFO ◀────┘ (or forward: tx_prepare …)
//! ```
//!
//! * By layer, a file each: `channel` (the radio medium: who a frame reaches, interferes and
//!   is sensed by; a frame's start and end), `nullrdc` and [`contikimac`] (the RDCs), `csma`
//!   (the MAC's queues and backoff, an object of its own), `cpu` (a mote's job queue), `nd`
//!   (neighbour discovery); here the motes' state, routing a prepared packet, and the
//!   [`Medium`] that drives them.
//! * [`frame`]: PHY timing and per-hop frame sizes; [`topology`]: the literature's layouts;
//!   [`routing`]: the converged min-hop tree and its next-hop table; [`rpl`]: RPL's control
//!   traffic (DIO trickle, DAO refreshes, probing) on the air over that tree, when asked for.
//! * Medium (Cooja UDGM, "distance loss"): a frame reaches the radios within the transmission
//!   range R, interferes those within the interference range I; a per-frame TX draw (p_tx, the
//!   sender's [`Stream::Radio`]) and per-receiver RX draw (p_rx(d) = 1 − d²/R²·(1 − p_rx), the
//!   receiver's [`Stream::Mac`]); a radio that is transmitting, interfered or already receiving
//!   cannot take a new frame, and a second frame destroys a reception in progress. A destroyed
//!   reception keeps the radio busy until its frame ends (choice). Carrier sense: the channel is
//!   busy at r while a frame from a sender within `cca_range_m` (derived from Cooja's signal
//!   strengths, cut to whole dBm, and Contiki's −90 dBm CCA threshold: R·81/85) is on the air.
//!   MSPSim's CC2420 ([`MeshSpec::partial_frame_stall`], [`MeshSpec::rx_turnaround`]): a frame
//!   cut short by the mote's own transmission stalls its RX FIFO; a frame that begins within 12
//!   symbols of the mote's own transmission's end, or 8 of a frame it took, is missed.
//!   Or Cooja's MRM ([`mrm`]): reception by SNR with free-space loss, and its capture effect.
//! * nullrdc: CCA at the strobe; busy → COLLISION, else 224 µs turnaround and the airtime; no
//!   ACKs (Contiki 3.0 does not request them with nullrdc), so OK does not mean delivered.
//! * nullmac: a COLLISION drops the packet (`cca_busy`). CSMA: at most `max_neighbor_queues`
//!   per-neighbour FIFOs sharing `queuebuf_num` buffers; a COLLISION retries after
//!   T + U{0 … 2^min(transmissions, 3)·T − 1} ticks of 1/128 s, T = 125 ms; after a packet is
//!   freed, the next one of the same queue waits T.
//! * CPU: one FIFO of jobs per mote: `tx_prepare_us` before a packet reaches the MAC,
//!   `rx_process_us` (+ `app_us` when a server's CoAP layer handles it) after a frame is taken
//!   from the RX FIFO, which holds `rx_fifo_frames` frames; a transmission occupies the CPU from
//!   its strobe to its last symbol. Forwarded packets queue a tx_prepare job behind the others.
//!   A client may add its CoAP processing to the requests it originates and print on its console
//!   (blocking UART output: a job of so many bytes) after a request and on a response; see
//!   [`CpuSpec`].
//!
//! Every packet handed to [`Mesh::send`] is, once the run has drained, either delivered or
//! dropped for exactly one counted cause; every frame sent either arrived or was lost for one
//! counted cause (tested by a property test).
//!
//! Datagrams that would need RFC 4944 fragmentation are computed by [`frame`] but not carried:
//! the simulator refuses a scenario whose messages do not fit one frame (no preset does).
//!
//! Equal-time events at different motes act in node-id order ([`Medium::HOST_ORDER`]), a mote's
//! own in the order they were scheduled.

pub mod air;
mod channel;
pub mod contikimac;
mod cpu;
mod csma;
pub mod frame;
pub mod mobility;
pub mod mrm;
mod nd;
mod nullrdc;
mod report;
pub mod routing;
pub mod rpl;
mod spec;
pub mod topology;

pub use nd::NdSpec;
pub use report::*;
use report::{Cause, Traffic};
pub use spec::*;

use std::collections::VecDeque;

use coap_time::Instant;
use rand_chacha::ChaCha8Rng;

use crate::medium::{Medium, Packet, Schedule};
use crate::streams::Stream;
use channel::{geometry, unit, Csr, Fate, Frame, Link};
use contikimac::{ContikimacSpec, Duty, Timing};
use cpu::{CpuNs, Job};
use csma::Csma;
use frame::{serial_ns, Compression, IPV6_UDP_HEADERS};
use mobility::{MobilitySource, MobilitySpec, Move, Mover, Point};
use nd::{is_nd, NdNode};
use routing::{Routes, NONE};
use rpl::{is_control, RplNode, RplSpec, RplTimer};
use topology::{NodeSpec, Role};

/// The mesh's own events.
#[derive(Debug, Clone, Copy)]
pub enum MeshEvent {
    /// A mote's current CPU job ends.
    CpuDone(u16),
    /// A mote's frame puts its first symbol on the air (after the turnaround).
    FrameStart(u16),
    /// A mote's frame puts its last symbol on the air.
    FrameEnd(u16),
    /// A CSMA neighbour queue's timer (mote, queue, generation).
    CsmaTimer(u16, u16, u32),
    /// Motes move (mobility): positions, links and routes change.
    Move,
    /// A packet from a cloud host has crossed the serial line into the border router mote.
    SerialIn(Packet),
    /// ContikiMAC: a mote's wake-up senses energy.
    Wake(u16),
    /// ContikiMAC: a mote's listen window ends (mote, generation).
    ListenEnd(u16, u32),
    /// ContikiMAC: a sender's phase wait is over.
    SendNow(u16),
    /// ContikiMAC: a sender's next CCA before the strobe.
    TxCca(u16),
    /// ContikiMAC: the gap after a copy is over.
    Gap(u16),
    /// ContikiMAC: the sender reads what it heard in the gap.
    AckRead(u16),
    /// ContikiMAC: a send deferred until near the receiver's wake-up (mote, next hop, packet).
    Deferred(u16, u16, Packet),
    /// One of a mote's RPL timers.
    Rpl(u16, RplTimer),
    /// A Cooja mote's nullrdc ACKs a unicast frame it took (mote, the frame's sender).
    SoftAck(u16, u16),
    /// A Cooja mote's nullrdc has waited for the ACK of its unicast.
    AckWaitEnd(u16),
    /// A mote's neighbour discovery runs its periodic work (`nd`).
    NdTick(u16),
}

#[derive(Debug)]
struct Node {
    // radio
    transmitting: bool,
    rx_from: u16,
    rx_ok: bool,
    /// The mean signal of the frame it is receiving, dBm (MRM's capture effect).
    rx_signal_dbm: f32,
    interfered: u32,
    cca_busy: u32,
    // cpu
    busy: bool,
    current: Job,
    jobs: VecDeque<Job>,
    rx_pending: u32,
    // mac
    mac: MacSpec,
    csma: Csma,
    rng: ChaCha8Rng,
    tx_rng: ChaCha8Rng,
    stats: NodeStats,
    /// It sends the ContikiMAC way.
    cm: bool,
    duty: Duty,
    /// Its CPU delays at its clock.
    cpu: CpuNs,
    /// A Cooja mote's unicast waiting for its ACK: the next hop, and whether the ACK came.
    ack_wait: Option<(u16, bool)>,
    /// A Cooja mote's CSMA sends nothing before this, ns ([`CoojaMoteSpec::csma_next_ns`]).
    send_after_ns: u64,
    /// MSPSim's CC2420: bytes a partial frame and the frames behind it hold in the RX FIFO
    /// (0: none; [`MeshSpec::partial_frame_stall`]).
    fifo_stall: u32,
    /// MSPSim's CC2420: when the radio searches for a frame's SFD again, ns, and whether it
    /// synchronised on the frame it receives ([`MeshSpec::rx_turnaround`]).
    rx_ready_ns: u64,
    rx_sync: bool,
}

/// The mesh as a [`Medium`]: hosts are motes (host i = node id i + 1).
#[derive(Debug)]
pub struct Mesh {
    spec: MeshSpec,
    routes: Routes,
    nodes: Vec<Node>,
    frames: Vec<Frame>,
    /// The receivers a frame may reach.
    links: Csr<Link>,
    /// Within I but beyond R.
    interferes: Csr<u16>,
    /// Within the carrier-sense range.
    senses: Csr<u16>,
    /// Where the motes are now.
    pos: Vec<Point>,
    mobility: Option<Mobility>,
    /// The serial line's next free instants, host → mote and mote → host (ns).
    serial_free: (u64, u64),
    cloud_stats: CloudStats,
    /// ContikiMAC's constants (None: nullrdc).
    cm_timing: Option<Timing>,
    /// The latest instant seen, ns (the radio-on time of wake-ups is counted to it).
    clock: u64,
    /// CSMA's time base T in clock ticks: the RDC's channel-check interval, or CLOCK_SECOND/8
    /// when it has none (nullrdc).
    csma_base_ticks: u64,
    /// The border router.
    root: usize,
    /// Each mote's RPL state (empty: no control traffic).
    rpl: Vec<RplNode>,
    /// Each mote's neighbour discovery (empty: every neighbour resolved, no ND traffic).
    nd: Vec<NdNode>,
    /// Scratch: the motes that received a broadcast frame intact.
    heard: Vec<u16>,
}

/// What moves the motes: a model, or a trace's moves; and the trails kept for the report.
#[derive(Debug)]
struct Mobility {
    mover: Option<Mover>,
    moves: Vec<Move>,
    /// The next move of `moves` to apply, and the time the trace started over (ns).
    next_move: usize,
    offset_ns: u64,
    /// The next sample (model) or move (trace), ns.
    next_ns: u64,
    sample_ns: u64,
    trail_every_ns: u64,
    next_trail_ns: u64,
    trails: Vec<Vec<[f64; 2]>>,
    mobile: Vec<bool>,
}

/// Whose `p` is: a data packet, or one of the mesh's own control packets (RPL's or ND's).
fn traffic(p: &Packet) -> Traffic {
    if p.id != rpl::CONTROL_ID {
        Traffic::Data
    } else if is_nd(p) {
        Traffic::Nd
    } else {
        Traffic::Rpl
    }
}

fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

impl Mesh {
    /// A mesh in its converged state (routes built), for replication `rep` of a run seeded
    /// with `seed`.
    pub fn new(spec: MeshSpec, seed: u64, rep: u32) -> Self {
        let n = spec.nodes.len();
        let mut pos = spec.positions();
        if spec.jitter_m > 0.0 {
            let mut rng = Stream::Layout.rng(seed, rep);
            for p in &mut pos {
                p.0 += spec.jitter_m * (2.0 * unit(&mut rng) - 1.0);
                p.1 += spec.jitter_m * (2.0 * unit(&mut rng) - 1.0);
            }
        }
        let mobility = spec.mobility.as_ref().map(|m| {
            let sample_ns = ns(m.sample_s).max(1);
            let (mover, moves, mobile, next_ns) = match &m.source {
                MobilitySource::Model { model, mobile } => {
                    let mover = Mover::new(
                        *model,
                        m.area,
                        &mut pos,
                        mobile,
                        |i| Stream::Mobility(i as u32).rng(seed, rep),
                        Stream::PursueTarget.rng(seed, rep),
                    );
                    (Some(mover), Vec::new(), mobile.clone(), sample_ns)
                }
                MobilitySource::Trace(moves) => {
                    let mut mobile = vec![false; n];
                    for mv in moves {
                        mobile[mv.mote as usize] = true;
                    }
                    let first = moves.first().map_or(u64::MAX, |mv| ns(mv.t));
                    (None, moves.clone(), mobile, first)
                }
            };
            let trails = (0..n).map(|i| if mobile[i] { vec![[pos[i].0, pos[i].1]] } else { Vec::new() }).collect();
            let trail_every_ns = ns(m.trail_every_s).max(1);
            Mobility {
                mover,
                moves,
                next_move: 0,
                offset_ns: 0,
                next_ns,
                sample_ns,
                trail_every_ns,
                next_trail_ns: trail_every_ns,
                trails,
                mobile,
            }
        });
        let d = distances(&pos);
        let (links, interferes, senses) = geometry(&spec.radio, n, &d);
        let routes = spec.routes_by(&d);
        let any_cm = (0..n).any(|i| spec.rdc(i) != Rdc::Nullrdc);
        let cm_spec = any_cm.then_some(spec.contikimac);
        let cm_timing = cm_spec.map(|c| c.timing());
        let csma_base_ticks = cm_spec.map_or(16, |c| CLOCK_SECOND / c.channel_check_rate.max(1) as u64);
        let root = spec.root();
        let nodes = (0..n)
            .map(|i| {
                let mac = spec.macs[i];
                Node {
                    transmitting: false,
                    rx_from: NONE,
                    rx_ok: false,
                    rx_signal_dbm: f32::NEG_INFINITY,
                    interfered: 0,
                    cca_busy: 0,
                    busy: false,
                    current: Job::Idle,
                    jobs: VecDeque::with_capacity(8),
                    rx_pending: 0,
                    mac,
                    csma: Csma::new(&mac),
                    rng: Stream::Mac(i as u32).rng(seed, rep),
                    tx_rng: Stream::Radio(i as u32).rng(seed, rep),
                    stats: NodeStats::default(),
                    cm: spec.rdc(i) != Rdc::Nullrdc,
                    duty: match (cm_timing, spec.rdc(i)) {
                        (Some(t), Rdc::Contikimac) => Duty::new(&mut Stream::Phase(i as u32).rng(seed, rep), t.cycle),
                        (Some(_), _) => Duty::always_on(),
                        (None, _) => Duty::default(),
                    },
                    cpu: CpuNs::at(&spec.cpu, spec.cpu_clocks_hz.get(i).copied().unwrap_or(CPU_REFERENCE_HZ)),
                    ack_wait: None,
                    send_after_ns: 0,
                    fifo_stall: 0,
                    rx_ready_ns: 0,
                    rx_sync: false,
                }
            })
            .collect();
        let frames = (0..n)
            .map(|i| Frame {
                packet: Packet {
                    id: crate::PacketId(0),
                    from: crate::HostId(0),
                    to: crate::HostId(0),
                    size: 0,
                    note: 0,
                },
                ack: false,
                dest: NONE,
                airtime: 0,
                mpdu: 0,
                start_ns: 0,
                fate: Fate::Pending,
                receivers: Vec::with_capacity(links.of(i).len()),
                interfered: Vec::with_capacity(links.of(i).len() + interferes.of(i).len()),
                sensed: Vec::with_capacity(senses.of(i).len()),
            })
            .collect();
        let reach = spec.radio.tx_range_m + RANGE_EPSILON_M;
        let rpl = match spec.rpl {
            None => Vec::new(),
            Some(r) => (0..n)
                .map(|i| {
                    // RPL's neighbours: the motes the tree may link (under MRM, those within R)
                    let nbrs =
                        (links.of(i).iter()).filter(|l| l.p > 0.0 && d[i * n + l.to as usize] <= reach).map(|l| l.to);
                    // start-up: only the root is in the DODAG at first (none until its prefix
                    // comes, where the run says when); converged: every mote with a route
                    // (whose parent and rank are the converged tree's)
                    let joined =
                        (i == root && (r.root_start_ns == 0 || !r.startup)) || (!r.startup && routes.parent[i] != NONE);
                    RplNode::new(joined, i == root, nbrs, Stream::Rpl(i as u32).rng(seed, rep))
                })
                .collect(),
        };
        let shared_nd = spec.nd.filter(|s| s.shared_random).map(|_| Stream::Nd(nd::SHARED_STREAM).rng(seed, rep));
        let nd = match &spec.nd {
            None => Vec::new(),
            Some(s) => (0..n)
                .map(|i| {
                    // motes that share one random sequence draw the same reachable time: a copy each
                    let mut shared = shared_nd.clone();
                    let boot = spec.boots_ns.get(i).copied().flatten();
                    NdNode::new(s, &mut Stream::Nd(i as u32).rng(seed, rep), shared.as_mut(), boot)
                })
                .collect(),
        };
        let heard = Vec::with_capacity(if rpl.is_empty() && nd.is_empty() { 0 } else { n });
        Mesh {
            spec,
            routes,
            nodes,
            frames,
            links,
            interferes,
            senses,
            pos,
            mobility,
            serial_free: (0, 0),
            cloud_stats: CloudStats::default(),
            cm_timing,
            clock: 0,
            csma_base_ticks,
            root,
            rpl,
            nd,
            heard,
        }
    }

    /// Whether host `h` is a cloud host (outside the mesh).
    fn is_cloud(&self, h: usize) -> bool {
        h >= self.nodes.len()
    }

    /// The border router mote (the RPL root).
    fn root(&self) -> usize {
        self.root
    }

    /// Serial-line time of a packet of `coap_bytes`.
    fn serial_time(&self, coap_bytes: u32) -> u64 {
        let baud = self.spec.cloud.map_or(115_200, |c| c.slip_baud);
        serial_ns(IPV6_UDP_HEADERS + coap_bytes + 2, baud)
    }

    /// Where the motes are now.
    pub fn positions(&self) -> &[Point] {
        &self.pos
    }

    /// The motes move (a [`MeshEvent::Move`] at `now`): a model's sample, or every trace move
    /// due; then links and routes follow the new positions, and the next move is scheduled.
    /// Packets already queued keep their next hop; frames on the air keep their receivers.
    fn on_move<S: Schedule<MeshEvent>>(&mut self, now: u64, sched: &mut S) {
        let Some(m) = self.mobility.as_mut() else { return };
        // trail points due before now saw the positions before this move
        let keep = |m: &mut Mobility, pos: &[Point], upto: u64| {
            while m.next_trail_ns <= upto {
                for (i, t) in m.trails.iter_mut().enumerate() {
                    if m.mobile[i] {
                        t.push([pos[i].0, pos[i].1]);
                    }
                }
                m.next_trail_ns += m.trail_every_ns;
            }
        };
        keep(m, &self.pos, now.saturating_sub(1));
        if let Some(mover) = m.mover.as_mut() {
            mover.advance(&mut self.pos, m.sample_ns as f64 / 1e9);
            m.next_ns = now + m.sample_ns;
        } else {
            while let Some(mv) = m.moves.get(m.next_move) {
                if m.offset_ns + ns(mv.t) > now {
                    break;
                }
                self.pos[mv.mote as usize] = (mv.x, mv.y);
                m.next_move += 1;
                if m.next_move == m.moves.len() {
                    // Cooja's plugin starts the file over from the time of its last move
                    let period = ns(m.moves[m.moves.len() - 1].t);
                    if period == 0 {
                        break;
                    }
                    m.offset_ns += period;
                    m.next_move = 0;
                }
            }
            m.next_ns = m.moves.get(m.next_move).map_or(u64::MAX, |mv| m.offset_ns + ns(mv.t));
            if m.next_move == m.moves.len() {
                m.next_ns = u64::MAX;
            }
        }
        keep(m, &self.pos, now);
        if m.next_ns != u64::MAX {
            sched.wake(Instant::from_nanos(m.next_ns), MeshEvent::Move);
        }
        let d = distances(&self.pos);
        let (links, interferes, senses) = geometry(&self.spec.radio, self.pos.len(), &d);
        self.links = links;
        self.interferes = interferes;
        self.senses = senses;
        self.routes = self.spec.routes_by(&d);
    }

    /// The routes.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// The specification.
    pub fn spec(&self) -> &MeshSpec {
        &self.spec
    }

    /// When mote `n`'s application starts, ns, where the model boots motes (with neighbour
    /// discovery: [`nd::NdSpec::app_start_ns`] after its boot); None: the workload's draw.
    pub fn app_start_ns(&self, n: usize) -> Option<u64> {
        let spec = self.spec.nd?;
        self.nd.get(n).map(|nd| nd.boot_ns + spec.app_start_ns)
    }

    /// Mote `n`'s send of `p`, one of its own data packets, returns at `at`, ns: a Cooja mote
    /// tells its application so ([`Schedule::send_returned`]; Erbium arms its timer then). Its
    /// nullmac returns after the frame's ACK wait (`ack_wait_end`), or at once when nothing went
    /// on the air (no route, a busy channel); CSMA once the packet is queued.
    fn send_returned<S: Schedule<MeshEvent>>(&self, at: u64, n: usize, p: &Packet, sched: &mut S) {
        if self.spec.cooja_mote.is_some() && p.from.index() == n && !is_control(p) {
            sched.send_returned(Instant::from_nanos(at), *p);
        }
    }

    fn drop_packet<S: Schedule<MeshEvent>>(&mut self, at: usize, cause: Cause, p: Packet, sched: &mut S) {
        let stats = &mut self.nodes[at].stats;
        match traffic(&p) {
            Traffic::Nd => stats.nd_dropped += 1,
            Traffic::Rpl => stats.rpl_dropped += 1,
            Traffic::Data => {
                stats.drops.add(cause);
                sched.discard(p);
            }
        }
    }

    /// A prepared packet goes to the MAC.
    fn route<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, mut p: Packet, sched: &mut S) {
        let cloud = self.is_cloud(p.to.index());
        if cloud && n == self.root() {
            // out over the serial line, then the Internet (lane 1: FIFO, constant delay)
            let start = now.max(self.serial_free.1);
            let end = start + self.serial_time(p.size);
            self.serial_free.1 = end;
            let delay = self.spec.cloud.map_or(0, |c| c.internet_delay_ns);
            self.cloud_stats.delivered += 1;
            sched.deliver(Instant::from_nanos(end + delay), 1, p);
            return;
        }
        // a packet for the cloud goes up the tree towards the border router
        let nh = match (cloud, self.rpl_dynamic()) {
            (true, _) => self.rpl_parent(n),
            (false, true) => self.rpl_next_hop(now, n, p.from.index(), p.to.index(), p.note),
            (false, false) => self.routes.next_hop(n, p.to.index()),
        };
        if nh == NONE {
            self.rpl_forwarding_error(now, n, &p, sched);
            self.send_returned(now, n, &p, sched);
            return self.drop_packet(n, Cause::NoRoute, p, sched);
        }
        if !self.nd.is_empty() && !is_control(&p) {
            // a client's own request goes from its timer; the rest inside input processing
            let in_input = !(p.from.index() == n && self.spec.nodes[n].role == Role::Client);
            if !self.nd_resolve(now, n, nh, in_input, sched) {
                self.send_returned(now, n, &p, sched);
                return self.drop_packet(n, Cause::NdUnresolved, p, sched);
            }
        }
        if self.rpl_etx() && !is_control(&p) {
            p.note = self.rpl_hbh(n, nh, p.note);
        }
        match self.nodes[n].mac {
            // nullmac hands it to the RDC in the same call: the transmission follows at once
            MacSpec::Nullmac => self.nodes[n].jobs.push_front(Job::Send(p, nh)),
            MacSpec::Csma { .. } => {
                self.send_returned(now, n, &p, sched);
                self.csma_enqueue(n, p, nh, sched)
            }
        }
    }
}

impl Medium for Mesh {
    type Event = MeshEvent;
    type Report = MeshReport;

    /// Equal-time events at different motes act in node-id order (Cooja steps its motes in
    /// order); a mote's own events in the order they were scheduled.
    const HOST_ORDER: bool = true;

    fn event_host(event: &MeshEvent) -> crate::HostId {
        match *event {
            MeshEvent::CpuDone(n)
            | MeshEvent::FrameStart(n)
            | MeshEvent::FrameEnd(n)
            | MeshEvent::CsmaTimer(n, ..)
            | MeshEvent::Wake(n)
            | MeshEvent::ListenEnd(n, _)
            | MeshEvent::SendNow(n)
            | MeshEvent::TxCca(n)
            | MeshEvent::Gap(n)
            | MeshEvent::AckRead(n)
            | MeshEvent::Deferred(n, ..)
            | MeshEvent::Rpl(n, _)
            | MeshEvent::SoftAck(n, _)
            | MeshEvent::AckWaitEnd(n)
            | MeshEvent::NdTick(n) => crate::HostId(n as u32),
            // the motes move before anything else of the same instant (host order: the first)
            MeshEvent::Move => crate::HostId(0),
            MeshEvent::SerialIn(p) => p.from,
        }
    }

    fn start<S: Schedule<MeshEvent>>(&mut self, sched: &mut S) {
        if let Some(m) = &self.mobility {
            if m.next_ns != u64::MAX {
                sched.wake(Instant::from_nanos(m.next_ns), MeshEvent::Move);
            }
        }
        if !self.rpl.is_empty() {
            self.rpl_start(sched);
        }
    }

    fn lanes(&self) -> usize {
        if self.spec.cloud.is_some() {
            2
        } else {
            1
        }
    }

    fn send<S: Schedule<MeshEvent>>(&mut self, now: Instant, packet: Packet, sched: &mut S) {
        self.clock = self.clock.max(now.as_nanos());
        let n = packet.from.index();
        if self.is_cloud(n) {
            // over the Internet, then the border router host's serial line (FIFO)
            let delay = self.spec.cloud.map_or(0, |c| c.internet_delay_ns);
            let start = (now.as_nanos() + delay).max(self.serial_free.0);
            let end = start + self.serial_time(packet.size);
            self.serial_free.0 = end;
            self.cloud_stats.originated += 1;
            sched.wake(Instant::from_nanos(end), MeshEvent::SerialIn(packet));
            return;
        }
        self.nodes[n].stats.originated += 1;
        self.push_job(now.as_nanos(), n, Job::Prepare(packet), sched);
    }

    fn handle<S: Schedule<MeshEvent>>(&mut self, now: Instant, event: MeshEvent, sched: &mut S) {
        let now = now.as_nanos();
        self.clock = self.clock.max(now);
        match event {
            MeshEvent::CpuDone(n) => self.cpu_done(now, n as usize, sched),
            MeshEvent::FrameStart(n) => self.frame_start(now, n as usize, sched),
            MeshEvent::FrameEnd(n) => self.frame_end(now, n as usize, sched),
            MeshEvent::CsmaTimer(n, q, gen) => self.csma_timer(now, n as usize, q as usize, gen, sched),
            MeshEvent::Move => self.on_move(now, sched),
            MeshEvent::SerialIn(p) => {
                // the border router mote takes it off the serial line and processes it
                let root = self.root();
                self.nodes[root].rx_pending += 1;
                self.push_job(now, root, Job::Rx(p), sched);
            }
            MeshEvent::Wake(n) => self.cm_wake(now, n as usize, sched),
            MeshEvent::ListenEnd(n, gen) => self.cm_listen_end(now, n as usize, gen),
            MeshEvent::SendNow(n) => {
                if !self.cm_send_now(now, n as usize, sched) {
                    self.run_next(now, n as usize, sched);
                }
            }
            MeshEvent::TxCca(n) => {
                if !self.cm_tx_cca(now, n as usize, sched) {
                    self.run_next(now, n as usize, sched);
                }
            }
            MeshEvent::Gap(n) => self.cm_gap(now, n as usize, sched),
            MeshEvent::AckRead(n) => self.cm_ack_read(now, n as usize, sched),
            MeshEvent::Deferred(n, nh, p) => self.push_job(now, n as usize, Job::Send(p, nh), sched),
            MeshEvent::Rpl(n, t) => self.rpl_timer(now, n as usize, t, sched),
            MeshEvent::SoftAck(n, to) => self.soft_ack(now, n as usize, to, sched),
            MeshEvent::AckWaitEnd(n) => self.ack_wait_end(now, n as usize, sched),
            MeshEvent::NdTick(n) => self.nd_tick(now, n as usize, sched),
        }
    }

    fn finish(&mut self, end: Instant) {
        let end = end.as_nanos().max(self.clock);
        self.clock = end;
        for n in &mut self.nodes {
            n.duty.close(end);
        }
        if self.rpl_dynamic() {
            // the report gives the tree RPL formed
            self.routes = self.rpl_routes();
        }
    }

    fn report(&self) -> MeshReport {
        let nodes = (self.spec.nodes.iter().zip(&self.nodes).enumerate())
            .map(|(i, (spec, node))| NodeReport {
                id: spec.id,
                role: spec.role,
                x: spec.x,
                y: spec.y,
                parent: (self.routes.parent[i] != NONE).then(|| self.routes.parent[i] as u32 + 1),
                rank: (self.routes.rank[i] != u32::MAX).then_some(self.routes.rank[i]),
                contikimac: node.cm,
                trail: self.mobility.as_ref().map_or_else(Vec::new, |m| m.trails[i].clone()),
                stats: NodeStats {
                    radio_on_ns: self.cm_timing.map_or(0, |t| node.duty.radio_on_ns(&t, self.clock)),
                    ..node.stats
                },
            })
            .collect();
        MeshReport { nodes, cloud: self.spec.cloud.map(|_| self.cloud_stats) }
    }
}

#[cfg(test)]
mod tests;
