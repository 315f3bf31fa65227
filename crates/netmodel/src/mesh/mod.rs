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

pub mod contikimac;
pub mod frame;
pub mod mobility;
pub mod mrm;
mod nd;
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
use rand_core::RngCore;

use crate::medium::{Medium, Packet, Schedule};
use crate::streams::Stream;
use contikimac::{ContikimacSpec, Duty, Timing};
use frame::{serial_ns, Compression, External, HopPlace, IPV6_UDP_HEADERS};
use mobility::{MobilitySource, MobilitySpec, Move, Mover, Point};
use nd::{is_nd, NdNode};
use routing::{Routes, NONE};
use rpl::{is_control, RplNode, RplSpec, RplTimer, BROADCAST};
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
    /// A mote's neighbour discovery runs its periodic work ([`nd`]).
    NdTick(u16),
}

#[derive(Debug, Clone, Copy)]
enum Job {
    Idle,
    Rx(Packet),
    Prepare(Packet),
    /// Transmit to the next hop (on a CSMA mote: the head of that neighbour's queue).
    Send(Packet, u16),
    /// The firmware prints this many bytes on its console, waiting for the UART.
    Print(u32),
}

#[derive(Debug, Default)]
struct NbrQueue {
    active: bool,
    nbr: u16,
    packets: VecDeque<Packet>,
    transmissions: u32,
    /// The binary exponential backoff's collision count (its BE before the cap).
    collisions: u32,
    gen: u32,
    /// ContikiMAC: the next hop took the head packet already (its ACK was lost).
    head_passed: bool,
}

impl NbrQueue {
    /// The CPU job that sends the head packet.
    fn send_head(&self) -> Job {
        Job::Send(self.packets[0], self.nbr)
    }
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
    queues: Vec<NbrQueue>,
    buffers: u32,
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
    /// MSPSim's CC2420: bytes a partial frame and the frames behind it hold in the RX FIFO
    /// (0: none; [`MeshSpec::partial_frame_stall`]).
    fifo_stall: u32,
}

/// A mote's [`CpuSpec`] delays at its own clock, ns.
#[derive(Debug, Clone, Copy)]
struct CpuNs {
    rx_process: u64,
    tx_prepare: u64,
    app: u64,
    client_app: u64,
}

impl CpuNs {
    /// `cpu`'s delays on a CPU clocked at `hz` (rounded down to the ns; exact at the reference).
    fn at(cpu: &CpuSpec, hz: u32) -> Self {
        let scale = |us: u32| us as u64 * 1000 * CPU_REFERENCE_HZ as u64 / hz.max(1) as u64;
        CpuNs {
            rx_process: scale(cpu.rx_process_us),
            tx_prepare: scale(cpu.tx_prepare_us),
            app: scale(cpu.app_us),
            client_app: scale(cpu.client_app_us),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Pending,
    Lost(Cause),
}

#[derive(Debug)]
struct Frame {
    packet: Packet,
    /// An ACK (ContikiMAC), not a data frame.
    ack: bool,
    dest: u16,
    airtime: u64,
    /// Its MPDU, bytes.
    mpdu: u32,
    /// When its first symbol went on the air, ns.
    start_ns: u64,
    fate: Fate,
    receivers: Vec<u16>,
    interfered: Vec<u16>,
    /// Who sensed it (kept: links change under mobility while a frame is on the air).
    sensed: Vec<u16>,
}

impl Frame {
    /// It passed its transmission draw: it is on the air for everybody in range.
    fn on_air(&self) -> bool {
        self.fate != Fate::Lost(Cause::TxFail)
    }
}

/// A receiver a sender's frames may reach.
#[derive(Debug, Clone, Copy)]
struct Link {
    /// The probability that it takes a frame (UDGM: within R; MRM: by the SNR).
    p: f64,
    to: u16,
    /// MRM: the frame's mean signal there, dBm.
    signal_dbm: f32,
}

/// Per-node lists in one array (compressed sparse rows).
#[derive(Debug, Default)]
struct Csr<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> Csr<T> {
    fn build(n: usize, mut f: impl FnMut(usize, &mut Vec<T>)) -> Self {
        let mut c = Csr { start: vec![0], items: Vec::new() };
        for i in 0..n {
            f(i, &mut c.items);
            c.start.push(c.items.len() as u32);
        }
        c
    }
    fn of(&self, i: usize) -> &[T] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }
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

/// Links, interference and carrier sense between `n` motes `d` ([`distances`]) apart.
fn geometry(r: &RadioSpec, n: usize, d: &[f64]) -> (Csr<Link>, Csr<u16>, Csr<u16>) {
    let reach = r.tx_range_m + RANGE_EPSILON_M;
    let interfere = r.interference_range_m.max(r.tx_range_m) + RANGE_EPSILON_M;
    let dist = |a: usize, b: usize| d[a * n + b];
    let links = Csr::build(n, |s, v| {
        for q in (0..n).filter(|&q| q != s) {
            let d = dist(s, q);
            match &r.mrm {
                // MRM: every receiver the SNR may reach, with the frame's signal there
                Some(m) => {
                    let p = m.reception(d);
                    if p >= mrm::P_MIN {
                        v.push(Link { p, to: q as u16, signal_dbm: m.signal_dbm(d) as f32 });
                    }
                }
                None if d <= reach => {
                    let p = 1.0 - (d * d) / (r.tx_range_m * r.tx_range_m) * (1.0 - r.success_ratio_rx);
                    v.push(Link { p: p.clamp(0.0, 1.0), to: q as u16, signal_dbm: 0.0 });
                }
                None => {}
            }
        }
    });
    // under MRM a frame disturbs only the receivers it reaches (its links)
    let interferes = Csr::build(n, |s, v| {
        if r.mrm.is_none() {
            v.extend((0..n).filter(|&q| q != s && dist(s, q) > reach && dist(s, q) <= interfere).map(|q| q as u16))
        }
    });
    let cs = r.cca_range_m + RANGE_EPSILON_M;
    let senses = Csr::build(n, |s, v| v.extend((0..n).filter(|&q| q != s && dist(s, q) <= cs).map(|q| q as u16)));
    (links, interferes, senses)
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
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
        let cm_spec = spec.contikimac.or_else(|| any_cm.then(ContikimacSpec::default));
        let cm_timing = cm_spec.map(|c| c.timing());
        let csma_base_ticks = cm_spec.map_or(16, |c| CLOCK_SECOND / c.channel_check_rate.max(1) as u64);
        let root = spec.root();
        let nodes = (0..n)
            .map(|i| {
                let mac = spec.macs[i];
                let queues = match mac {
                    MacSpec::Nullmac => Vec::new(),
                    MacSpec::Csma { max_neighbor_queues, queuebuf_num, .. } => (0..max_neighbor_queues)
                        .map(|_| NbrQueue {
                            packets: VecDeque::with_capacity(queuebuf_num as usize),
                            ..Default::default()
                        })
                        .collect(),
                };
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
                    queues,
                    buffers: 0,
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
                    fifo_stall: 0,
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
                    // start-up: only the root is in the DODAG at first; converged: every mote
                    // with a route (whose parent and rank are the converged tree's)
                    let joined = i == root || (!r.startup && routes.parent[i] != NONE);
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

    fn push_job<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, job: Job, sched: &mut S) {
        self.nodes[n].jobs.push_back(job);
        if !self.nodes[n].busy {
            self.run_next(now, n, sched);
        }
    }

    /// Starts `n`'s next job, if any.
    fn run_next<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        loop {
            let node = &mut self.nodes[n];
            let Some(job) = node.jobs.pop_front() else {
                node.busy = false;
                node.current = Job::Idle;
                return;
            };
            node.busy = true;
            node.current = job;
            let cpu = node.cpu;
            // the CPU's time on the job (a send holds it as its MAC says)
            let busy_ns = match job {
                Job::Rx(p) => {
                    node.rx_pending -= 1;
                    let app = p.to.index() == n && self.spec.nodes[n].role == Role::Server && !is_control(&p);
                    cpu.rx_process + if app { cpu.app } else { 0 }
                }
                Job::Prepare(p) => {
                    let own = p.from.index() == n && self.spec.nodes[n].role == Role::Client && !is_control(&p);
                    cpu.tx_prepare + if own { cpu.client_app } else { 0 }
                }
                Job::Print(bytes) => self.spec.cpu.print_ns(bytes),
                Job::Send(p, nh) => {
                    let going = if self.nodes[n].cm {
                        self.cm_send(now, n, p, nh, sched)
                    } else {
                        self.strobe(now, n, p, nh, sched)
                    };
                    if going {
                        return;
                    }
                    continue;
                }
                Job::Idle => continue,
            };
            sched.wake(Instant::from_nanos(now + busy_ns), MeshEvent::CpuDone(n as u16));
            return;
        }
    }

    fn cpu_done<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let logs = self.spec.cpu.uart_byte_ns > 0 && self.spec.nodes[n].role == Role::Client;
        let mut current = self.nodes[n].current;
        if let Job::Rx(p) = &mut current {
            if self.rpl_etx() && !is_control(p) && self.rpl_verify(now, n, p, sched) {
                self.drop_packet(n, Cause::RplLoop, *p, sched);
                return self.run_next(now, n, sched);
            }
        }
        if matches!(current, Job::Rx(_)) && !self.nd.is_empty() {
            self.nd_packet_in(n);
        }
        match current {
            Job::Rx(p) if is_nd(&p) => self.nd_input(now, n, p, sched),
            Job::Rx(p) if is_control(&p) => self.rpl_input(now, n, p, sched),
            Job::Prepare(p) if is_control(&p) => self.rpl_to_mac(n, p, sched),
            Job::Rx(mut p) if p.to.index() == n => {
                self.nodes[n].stats.delivered += 1;
                if self.rpl_etx() {
                    p.note = 0; // the hop-by-hop option stays in the mesh
                }
                sched.deliver(Instant::from_nanos(now), 0, p);
                // a client logs the response before its next request can go (that one, sent by
                // the stack at this instant, queues behind)
                let bytes = self.spec.cpu.client_log_response_bytes;
                if logs && bytes > 0 {
                    self.nodes[n].jobs.push_front(Job::Print(bytes));
                }
            }
            Job::Rx(p) => {
                self.nodes[n].stats.forwarded += 1;
                self.nodes[n].jobs.push_back(Job::Prepare(p));
            }
            Job::Prepare(p) => {
                self.route(now, n, p, sched);
                // a client logs its request as the send returns: after the transmission on a
                // nullmac mote (the send goes first), at once where the MAC queued it or dropped it
                let bytes = self.spec.cpu.client_log_request_bytes;
                if logs && bytes > 0 && p.from.index() == n {
                    let jobs = &mut self.nodes[n].jobs;
                    let after_send = matches!(jobs.front(), Some(Job::Send(q, _)) if q.id == p.id);
                    jobs.insert(usize::from(after_send), Job::Print(bytes));
                }
            }
            Job::Send(..) | Job::Print(_) | Job::Idle => {}
        }
        self.run_next(now, n, sched);
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
            (false, true) => self.rpl_next_hop(n, p.from.index(), p.to.index()),
            (false, false) => self.routes.next_hop(n, p.to.index()),
        };
        if nh == NONE {
            return self.drop_packet(n, Cause::NoRoute, p, sched);
        }
        if !self.nd.is_empty() && !is_control(&p) {
            // a client's own request goes from its timer; the rest inside input processing
            let in_input = !(p.from.index() == n && self.spec.nodes[n].role == Role::Client);
            if !self.nd_resolve(now, n, nh, in_input, sched) {
                return self.drop_packet(n, Cause::NdUnresolved, p, sched);
            }
        }
        if self.rpl_etx() && !is_control(&p) {
            p.note = self.rpl_hbh(n, nh, p.note);
        }
        match self.nodes[n].mac {
            // nullmac hands it to the RDC in the same call: the transmission follows at once
            MacSpec::Nullmac => self.nodes[n].jobs.push_front(Job::Send(p, nh)),
            MacSpec::Csma { .. } => self.csma_enqueue(n, p, nh, sched),
        }
    }

    fn csma_enqueue<S: Schedule<MeshEvent>>(&mut self, n: usize, p: Packet, nh: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        let MacSpec::Csma { queuebuf_num: bufs, .. } = node.mac else { return };
        let qi = match node.queues.iter().position(|q| q.active && q.nbr == nh) {
            Some(i) => i,
            None => match node.queues.iter().position(|q| !q.active) {
                Some(i) => i,
                None => return self.drop_packet(n, Cause::NoNeighborQueue, p, sched),
            },
        };
        if node.buffers >= bufs || node.queues[qi].packets.len() >= bufs as usize {
            return self.drop_packet(n, Cause::QueueFull, p, sched);
        }
        let q = &mut node.queues[qi];
        if !q.active {
            q.active = true;
            q.nbr = nh;
            q.transmissions = 0;
        }
        q.packets.push_back(p);
        node.buffers += 1;
        if q.packets.len() == 1 {
            // the head of an empty queue goes out at once (a 0-tick timer: behind the CPU's jobs)
            node.jobs.push_back(q.send_head());
        }
    }

    /// nullrdc's send: CCA, then the transmission. False when it returned at once (busy channel).
    fn strobe<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, p: Packet, nh: u16, sched: &mut S) -> bool {
        // busy: a frame on the air, or the radio sending its automatic ACK (beside ContikiMAC);
        // a Cooja mote's nullrdc also while it receives, or holds a frame not read yet (unicast)
        let node = &self.nodes[n];
        let refused =
            self.spec.cooja_mote.is_some() && (node.rx_from != NONE || (nh != BROADCAST && node.rx_pending > 0));
        if node.cca_busy > 0 || node.transmitting || refused {
            if self.is_csma(n) {
                self.csma_after_failure(now, n, nh, true, sched);
            } else {
                self.drop_packet(n, Cause::CcaBusy, p, sched);
            }
            return false;
        }
        self.transmit(now, n, p, nh, sched);
        true
    }

    /// A data frame goes on the air after the turnaround.
    fn transmit<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, p: Packet, nh: u16, sched: &mut S) {
        if self.nodes[n].rx_from != NONE {
            self.nodes[n].rx_ok = false; // half duplex: the reception in progress is lost
                                         // (a ContikiMAC sender's CCAs before a strobe: modelled on nullrdc motes only)
            if self.spec.partial_frame_stall && !self.nodes[n].cm {
                self.keep_partial_frame(now, n);
            }
        }
        let node = &mut self.nodes[n];
        node.transmitting = true;
        let motes = self.spec.nodes.len();
        let external = if p.from.index() >= motes {
            External::Source
        } else if p.to.index() >= motes {
            External::Destination
        } else {
            External::None
        };
        let control = is_control(&p);
        let mpdu = if control {
            p.size
        } else {
            let hop = HopPlace { originated: p.from.index() == n, last: p.to.index() == nh as usize, external };
            self.spec.compression.frames(hop, p.size).mpdu(0)
        };
        let airtime = self.spec.airtime_ns(mpdu);
        node.stats.frame_sent(traffic(&p));
        node.stats.tx_busy_ns += airtime;
        let f = &mut self.frames[n];
        f.packet = p;
        f.ack = false;
        f.dest = nh;
        f.airtime = airtime;
        f.mpdu = mpdu;
        f.fate = Fate::Pending;
        let turnaround_ns = self.spec.radio.tx_turnaround_us as u64 * 1000;
        sched.wake(Instant::from_nanos(now + turnaround_ns), MeshEvent::FrameStart(n as u16));
    }

    fn frame_start<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, sched: &mut S) {
        let p_tx = self.spec.radio.success_ratio_tx;
        let visible = p_tx >= 1.0 || unit(&mut self.nodes[s].tx_rng) <= p_tx;
        let f = &mut self.frames[s];
        f.start_ns = now;
        if !visible {
            f.fate = Fate::Lost(Cause::TxFail);
        } else {
            for &r in self.senses.of(s) {
                self.nodes[r as usize].cca_busy += 1;
                f.sensed.push(r);
            }
            let dest = f.dest;
            let duty = self.cm_timing.is_some();
            let capture = self.spec.radio.mrm.map(|m| (m.capture, m.capture_threshold_db as f32));
            for &Link { p, to: r, signal_dbm } in self.links.of(s) {
                let rn = &mut self.nodes[r as usize];
                if duty && rn.duty.radio == contikimac::Radio::Off {
                    // ContikiMAC: a radio that is off hears nothing and is not disturbed
                    if r == dest {
                        f.fate = Fate::Lost(Cause::Asleep);
                    }
                    continue;
                }
                let lost = match capture {
                    // UDGM: a failed draw interferes, and so does any frame at a busy radio
                    // (which draws nothing)
                    None => {
                        if rn.transmitting || rn.interfered > 0 {
                            Some(Cause::Collision)
                        } else if rn.rx_from != NONE {
                            rn.rx_ok = false;
                            Some(Cause::Collision)
                        } else if p < 1.0 && unit(&mut rn.rng) > p {
                            Some(Cause::RxFail)
                        } else {
                            None
                        }
                    }
                    // MRM with the capture effect: a failed draw disturbs nobody; a frame not
                    // 3 dB weaker than the one a radio takes takes the radio over
                    Some((true, threshold)) => {
                        // every receiver draws: the frame disturbs only where it may be taken
                        if !(p >= 1.0 || unit(&mut rn.rng) <= p) {
                            if r == dest {
                                f.fate = Fate::Lost(Cause::RxFail);
                            }
                            continue;
                        }
                        if rn.transmitting || rn.interfered > 0 {
                            Some(Cause::Collision)
                        } else if rn.rx_from != NONE && signal_dbm < rn.rx_signal_dbm - threshold {
                            if r == dest {
                                f.fate = Fate::Lost(Cause::Collision);
                            }
                            continue;
                        } else {
                            // a frame under way is dropped there (frame_end finds its receiver gone)
                            None
                        }
                    }
                    // MRM without it: as UDGM, but every receiver draws (MRM.java), and the
                    // frame interferes wherever it reaches, whatever the draw: it spoils a
                    // reception under way
                    Some((false, _)) => {
                        let drawn = p >= 1.0 || unit(&mut rn.rng) <= p;
                        let busy = rn.transmitting || rn.interfered > 0 || rn.rx_from != NONE;
                        if rn.rx_from != NONE {
                            rn.rx_ok = false;
                        }
                        match (drawn, busy) {
                            (false, _) => Some(Cause::RxFail),
                            (true, true) => Some(Cause::Collision),
                            (true, false) => None,
                        }
                    }
                };
                match lost {
                    Some(cause) => {
                        rn.interfered += 1;
                        f.interfered.push(r);
                        if r == dest {
                            f.fate = Fate::Lost(cause);
                        }
                    }
                    None => {
                        rn.rx_from = s as u16;
                        rn.rx_ok = true;
                        rn.rx_signal_dbm = signal_dbm;
                        f.receivers.push(r);
                    }
                }
            }
            for &r in self.interferes.of(s) {
                let rn = &mut self.nodes[r as usize];
                if duty && rn.duty.radio == contikimac::Radio::Off {
                    continue;
                }
                rn.interfered += 1;
                if rn.rx_from != NONE {
                    rn.rx_ok = false;
                }
                f.interfered.push(r);
            }
            if duty {
                let end = now + f.airtime;
                self.cm_frame_sensed(s, now, end, sched);
            }
        }
        let f = &self.frames[s];
        sched.wake(Instant::from_nanos(now + f.airtime), MeshEvent::FrameEnd(s as u16));
    }

    fn frame_end<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, sched: &mut S) {
        let f = &mut self.frames[s];
        let (p, dest, ack) = (f.packet, f.dest, f.ack);
        let mut fate = f.fate;
        let mut arrived = false;
        if f.on_air() {
            for &r in &f.sensed {
                self.nodes[r as usize].cca_busy -= 1;
            }
            for &r in &f.interfered {
                self.nodes[r as usize].interfered -= 1;
            }
            for &r in &f.receivers {
                let rn = &mut self.nodes[r as usize];
                if rn.rx_from as usize != s {
                    // MRM's capture effect: a later frame took the radio over
                    if r == dest {
                        fate = Fate::Lost(Cause::Collision);
                    }
                    continue;
                }
                rn.rx_from = NONE;
                if r == dest {
                    if rn.rx_ok {
                        arrived = true;
                    } else {
                        fate = Fate::Lost(Cause::Collision);
                    }
                } else if dest == BROADCAST && rn.rx_ok {
                    self.heard.push(r);
                }
                // frames for other motes are discarded by the radio's address filter
            }
        }
        f.interfered.clear();
        f.sensed.clear();
        if ack && self.spec.cooja_mote.is_some() {
            self.frames[s].receivers.clear();
            return self.soft_ack_end(now, s, dest as usize, arrived, sched);
        }
        // why a frame that did not arrive was lost
        let missed = (!arrived).then_some(match fate {
            Fate::Lost(cause) => cause,
            Fate::Pending => Cause::OutOfRange,
        });
        if self.cm_timing.is_some() {
            // listeners that heard a frame for somebody else may close their window now
            for i in 0..self.frames[s].receivers.len() {
                let r = self.frames[s].receivers[i] as usize;
                if r != dest as usize {
                    self.cm_heard_other(now, r);
                }
            }
            if ack {
                self.frames[s].receivers.clear();
                return self.cm_ack_end(now, s, dest as usize, arrived);
            }
        }
        self.frames[s].receivers.clear();
        if dest == BROADCAST {
            self.broadcast_end(now, s, p, sched);
            if self.nodes[s].cm {
                // a train's copy: the next one after the gap
                return self.cm_copy_over(now, s, sched);
            }
        } else if self.nodes[s].cm {
            return self.cm_copy_end(now, s, dest as usize, missed, sched);
        } else {
            let taken = self.unicast_end(now, s, dest as usize, p, arrived, missed, sched);
            if let Some(c) = self.spec.cooja_mote {
                // nullrdc ACKs what it took at the mote's next run; the sender waits for it
                if taken {
                    sched.wake(Instant::from_nanos(now + c.ack_delay_ns), MeshEvent::SoftAck(dest, s as u16));
                }
                self.nodes[s].transmitting = false;
                self.nodes[s].ack_wait = Some((dest, false));
                sched.wake(Instant::from_nanos(now + c.ack_wait_ns), MeshEvent::AckWaitEnd(s as u16));
                return;
            }
        }
        self.nodes[s].transmitting = false;
        if self.is_csma(s) {
            // with nullrdc every transmission reports OK: the packet is freed
            self.csma_free_head(now, s, dest, sched);
        }
        self.run_next(now, s, sched);
    }

    /// A nullrdc unicast frame of `s` ended: its addressee takes it if its radio and RX FIFO
    /// can, else the packet is lost (`missed`: why it did not arrive). True when it took it.
    #[allow(clippy::too_many_arguments)]
    fn unicast_end<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        s: usize,
        dest: usize,
        p: Packet,
        arrived: bool,
        missed: Option<Cause>,
        sched: &mut S,
    ) -> bool {
        let mut lost = missed;
        // a Cooja mote's CSMA retries what was not ACKed: a lost frame is a lost copy, and a
        // copy taken before is ACKed again but dropped as a duplicate (nullrdc's sequence numbers)
        let retried = self.spec.cooja_mote.is_some() && self.is_csma(s);
        let passed = retried && {
            let qi = self.queue_of(s, dest as u16);
            self.nodes[s].queues[qi].head_passed
        };
        if arrived && self.cm_timing.is_some() && self.cm_nullrdc_frame_lost(now, dest) {
            lost = Some(Cause::Collision);
        } else if arrived && passed {
            if !is_control(&p) {
                self.nodes[dest].stats.duplicates += 1;
            }
        } else if arrived && self.stalled(dest, self.frames[s].mpdu) {
            lost = Some(Cause::RxStall);
        } else if arrived {
            let fifo = self.spec.cpu.rx_fifo_frames;
            let d = &mut self.nodes[dest];
            if d.rx_pending >= fifo {
                lost = Some(Cause::RxOverflow);
            } else {
                d.rx_pending += 1;
                d.stats.frame_received(traffic(&p));
                self.push_job(now, dest, Job::Rx(p), sched);
            }
        }
        let taken = lost.is_none();
        match lost {
            Some(cause) if retried && !is_control(&p) => self.nodes[s].stats.copy_drops.add(cause),
            Some(_) if retried => {}
            Some(cause) => self.drop_packet(s, cause, p, sched),
            None if retried => {
                let qi = self.queue_of(s, dest as u16);
                self.nodes[s].queues[qi].head_passed = true;
                if !passed && !is_control(&p) {
                    self.nodes[s].stats.handed_over += 1;
                }
            }
            None => {}
        }
        self.rpl_link_sent(now, s, dest as u16);
        if self.spec.cooja_mote.is_none() {
            // nullrdc without ACKs: every transmission reports OK
            self.rpl_link_result(now, s, dest as u16, true, 1, sched);
        }
        taken
    }

    /// A Cooja mote's nullrdc sends the ACK of a frame from `to` it took, unless its radio is
    /// sending.
    fn soft_ack<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, to: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        if node.transmitting {
            return;
        }
        node.transmitting = true;
        if node.rx_from != NONE {
            node.rx_ok = false; // half duplex
        }
        node.stats.acks_sent += 1;
        let f = &mut self.frames[n];
        f.ack = true;
        f.dest = to;
        f.airtime = self.spec.airtime_ns(contikimac::ACK_MPDU);
        f.mpdu = contikimac::ACK_MPDU;
        f.fate = Fate::Pending;
        sched.wake(Instant::from_nanos(now), MeshEvent::FrameStart(n as u16));
    }

    /// A Cooja mote's ACK frame of `r` ended: the sender waiting for it has it if intact.
    fn soft_ack_end<S: Schedule<MeshEvent>>(&mut self, now: u64, r: usize, to: usize, arrived: bool, sched: &mut S) {
        if arrived {
            if let Some((nbr, acked)) = self.nodes[to].ack_wait.as_mut() {
                if *nbr as usize == r {
                    *acked = true;
                }
            }
        }
        self.frames[r].ack = false;
        self.nodes[r].transmitting = false;
        if !self.nodes[r].busy {
            self.run_next(now, r, sched);
        }
    }

    /// A Cooja mote's wait for its unicast's ACK is over: CSMA frees an acknowledged packet and
    /// retries one that was not (MAC_TX_NOACK); the CPU goes on.
    fn ack_wait_end<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let Some((nbr, acked)) = self.nodes[n].ack_wait.take() else { return };
        if !self.is_csma(n) {
            self.rpl_link_result(now, n, nbr, acked, 1, sched);
        } else {
            if acked {
                self.csma_acked(now, n, nbr, sched);
            } else {
                let qi = self.queue_of(n, nbr);
                self.nodes[n].queues[qi].transmissions += 1;
                self.csma_after_failure(now, n, nbr, false, sched);
            }
        }
        self.run_next(now, n, sched);
    }

    /// A broadcast frame of `s` ended: every mote that received it intact takes it, if its
    /// radio and RX FIFO can.
    fn broadcast_end<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, p: Packet, sched: &mut S) {
        let fifo = self.spec.cpu.rx_fifo_frames;
        for i in 0..self.heard.len() {
            let r = self.heard[i] as usize;
            // beside ContikiMAC: a strobing radio loses it, a listening one takes it and sleeps
            let lost = self.cm_timing.is_some() && self.cm_nullrdc_frame_lost(now, r);
            if lost || self.stalled(r, self.frames[s].mpdu) {
                continue;
            }
            if !self.rpl_fresh_broadcast(s, r, &p) || self.nodes[r].rx_pending >= fifo {
                continue;
            }
            let rn = &mut self.nodes[r];
            rn.rx_pending += 1;
            rn.stats.frame_received(traffic(&p));
            self.push_job(now, r, Job::Rx(p), sched);
        }
        self.heard.clear();
    }

    /// MSPSim's CC2420: `n` starts to transmit while it receives: the bytes received so far
    /// (after the preamble and SFD: the length byte and the MPDU's first bytes) stay in its RX
    /// FIFO; past 128 bytes the FIFO overflows and the driver flushes it.
    fn keep_partial_frame(&mut self, now: u64, n: usize) {
        let f = &self.frames[self.nodes[n].rx_from as usize];
        let on_air = (now.saturating_sub(f.start_ns) / frame::BYTE_NS) as u32;
        // preamble (4) and SFD (1) are not stored; the length byte and the MPDU are
        let mut kept = on_air.saturating_sub(5).min(f.mpdu + 1);
        // a frame for another mote is rejected (its bytes taken back) once its destination
        // address is in: the length byte, FCF, sequence number, PAN id, 8-byte address
        if f.ack || (f.dest != BROADCAST && f.dest as usize != n && kept > 13) {
            kept = 0;
        }
        let node = &mut self.nodes[n];
        node.fifo_stall = match node.fifo_stall + kept {
            b if b > RX_FIFO_BYTES => 0,
            b => b,
        };
    }

    /// MSPSim's CC2420: whether a frame of `mpdu` bytes that `r`'s radio takes is lost behind a
    /// partial frame (it is stored but never signalled; one that overflows the FIFO is lost and
    /// the driver flushes the FIFO).
    fn stalled(&mut self, r: usize, mpdu: u32) -> bool {
        let node = &mut self.nodes[r];
        if node.fifo_stall == 0 {
            return false;
        }
        node.fifo_stall += mpdu + 1;
        if node.fifo_stall > RX_FIFO_BYTES {
            node.fifo_stall = 0;
        }
        true
    }

    fn is_csma(&self, n: usize) -> bool {
        matches!(self.nodes[n].mac, MacSpec::Csma { .. })
    }

    fn queue_of(&self, n: usize, nbr: u16) -> usize {
        self.nodes[n].queues.iter().position(|q| q.active && q.nbr == nbr).expect("an active CSMA queue")
    }

    /// The head packet of `nbr`'s queue is done with: the next one waits one time base.
    /// The head of `n`'s queue to `nbr` was acknowledged: link-stats hears of it with the
    /// transmissions it took (MAC_TX_OK), and it is freed.
    fn csma_acked<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let numtx = self.nodes[n].queues[self.queue_of(n, nbr)].transmissions + 1;
        self.rpl_link_result(now, n, nbr, true, numtx, sched);
        self.csma_free_head(now, n, nbr, sched);
    }

    fn csma_free_head<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let qi = self.queue_of(n, nbr);
        let node = &mut self.nodes[n];
        let q = &mut node.queues[qi];
        q.packets.pop_front();
        q.transmissions = 0;
        q.collisions = 0;
        q.head_passed = false;
        node.buffers -= 1;
        if q.packets.is_empty() {
            q.active = false;
            return;
        }
        q.gen = q.gen.wrapping_add(1);
        if let MacSpec::Csma { backoff: CsmaBackoff::BinaryExponential, .. } = node.mac {
            // BE 0: the next packet goes at once (a 0-tick timer: behind the CPU's jobs)
            node.jobs.push_back(q.send_head());
        } else {
            let at = Instant::from_nanos(now + self.csma_base_ticks * TICK_NS);
            sched.wake(at, MeshEvent::CsmaTimer(n as u16, qi as u16, q.gen));
        }
    }

    /// A COLLISION (busy channel) or a NOACK (counted in `transmissions` already): retry after
    /// a random backoff, or give up.
    fn csma_after_failure<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        nbr: u16,
        collision: bool,
        sched: &mut S,
    ) {
        let qi = self.queue_of(n, nbr);
        let MacSpec::Csma { max_transmissions, backoff, .. } = self.nodes[n].mac else { return };
        let node = &mut self.nodes[n];
        if collision {
            node.stats.csma_busy_retries += 1;
        }
        let q = &mut node.queues[qi];
        if backoff == CsmaBackoff::BinaryExponential {
            if collision {
                q.collisions += 1;
                if q.collisions > CSMA_MAX_BACKOFF {
                    q.collisions = 0;
                    q.transmissions += 1;
                }
            } else {
                q.collisions = 0;
            }
        }
        if q.transmissions >= max_transmissions {
            let (p, passed, numtx) = (q.packets[0], q.head_passed, q.transmissions);
            if !collision {
                self.rpl_link_result(now, n, nbr, false, numtx, sched);
            }
            self.lose(n, Cause::CsmaRetryLimit, p, passed, sched);
            return self.csma_free_head(now, n, nbr, sched);
        }
        q.gen = q.gen.wrapping_add(1);
        let ticks = match backoff {
            CsmaBackoff::Timebase => {
                let base = self.csma_base_ticks;
                let window = (1u64 << q.transmissions.min(3)) * base;
                base + node.rng.next_u64() % window
            }
            CsmaBackoff::BinaryExponential => {
                // the backoff period: the RDC's channel check interval, 1 tick without one
                let period = if node.cm { self.csma_base_ticks } else { 1 };
                let window = ((1u64 << q.collisions.min(CSMA_MAX_BE)) - 1) * period;
                if window == 0 {
                    0
                } else {
                    node.rng.next_u64() % window
                }
            }
        };
        if ticks == 0 {
            let job = q.send_head();
            return self.push_job(now, n, job, sched);
        }
        // a Cooja mote's clock ticks every millisecond
        let tick_ns = match self.spec.cooja_mote {
            Some(c) if !node.cm => c.tick_ns,
            _ => TICK_NS,
        };
        sched.wake(Instant::from_nanos(now + ticks * tick_ns), MeshEvent::CsmaTimer(n as u16, qi as u16, q.gen));
    }

    fn csma_timer<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, qi: usize, gen: u32, sched: &mut S) {
        let q = &self.nodes[n].queues[qi];
        if !q.active || q.gen != gen {
            return;
        }
        let job = q.send_head();
        self.push_job(now, n, job, sched);
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
