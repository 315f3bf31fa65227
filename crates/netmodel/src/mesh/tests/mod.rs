//! The mesh driven on its own: a minimal event loop that records deliveries and discards.
//! Expected values are derived in each test from the PHY/CPU constants, not read from a run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::frame::{airtime_ns, Compression};
use super::topology::{NodeSpec, Role};
use super::*;
use crate::{HostId, PacketId};

mod channel;
mod cpu;
mod mac;
mod routing;

#[derive(Debug, Default)]
struct Harness {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<MeshEvent>>,
    seq: u64,
    delivered: Vec<(u64, Packet)>,
    discarded: Vec<Packet>,
    starts: Vec<(u64, u16)>,
    /// When each sender's send returned, and the packet's sender.
    returned: Vec<(u64, u32)>,
}

impl Schedule<MeshEvent> for Harness {
    fn deliver(&mut self, at: Instant, _lane: usize, packet: Packet) {
        self.delivered.push((at.as_nanos(), packet));
    }
    fn discard(&mut self, packet: Packet) {
        self.discarded.push(packet);
    }
    fn send_returned(&mut self, at: Instant, packet: Packet) {
        self.returned.push((at.as_nanos(), packet.from.0));
    }
    fn wake(&mut self, at: Instant, event: MeshEvent) {
        self.seq += 1;
        self.events.push(Some(event));
        self.heap.push(Reverse((at.as_nanos(), self.seq, self.events.len() - 1)));
    }
}

/// Sends at given times, runs until the queue drains.
fn run(mesh: &mut Mesh, sends: &[(u64, u32, u32, u32)]) -> Harness {
    run_until(mesh, sends, u64::MAX)
}

/// Sends at given times, runs until the queue drains or its next event is after `until`.
fn run_until(mesh: &mut Mesh, sends: &[(u64, u32, u32, u32)], until: u64) -> Harness {
    let mut h = Harness::default();
    mesh.start(&mut h);
    let mut sends: Vec<_> = sends.to_vec();
    sends.sort_by_key(|s| s.0);
    let mut next_send = 0;
    let mut id = 0;
    loop {
        let next_ev = h.heap.peek().map(|Reverse((t, _, _))| *t);
        let send_due = sends.get(next_send).map(|s| s.0);
        match (send_due, next_ev) {
            (Some(ts), ev) if ev.is_none_or(|te| ts <= te) => {
                let (t, from, to, size) = sends[next_send];
                next_send += 1;
                let p = Packet { id: PacketId(id), from: HostId(from), to: HostId(to), size, note: 0 };
                id += 1;
                mesh.send(Instant::from_nanos(t), p, &mut h);
            }
            (_, Some(t)) if t <= until => {
                let Reverse((t, _, i)) = h.heap.pop().unwrap();
                let ev = h.events[i].take().unwrap();
                if let MeshEvent::FrameStart(n) = ev {
                    h.starts.push((t, n));
                }
                mesh.handle(Instant::from_nanos(t), ev, &mut h);
            }
            _ => break,
        }
    }
    h
}

const NITK: Compression = Compression { context_matches_lln_prefix: false, rpl_hbh_option: true, link_local: false };

fn radio(p_tx: f64, p_rx: f64) -> RadioSpec {
    RadioSpec {
        tx_range_m: 10.0,
        interference_range_m: 20.0,
        success_ratio_tx: p_tx,
        success_ratio_rx: p_rx,
        cca_range_m: RadioSpec::derived_cca_range(10.0),
        tx_turnaround_us: 224,
        mrm: None,
    }
}

const CPU: CpuSpec = CpuSpec::new(2000, 1000, 1000, 1);

/// Motes at the given positions, the first the border router, all with `mac`.
fn mesh(pos: &[(f64, f64)], mac: MacSpec, radio: RadioSpec, seed: u64) -> Mesh {
    Mesh::new(spec(pos, mac, radio), seed, 0)
}

/// The spec of [`mesh`]: static, no cloud, nullrdc.
fn spec(pos: &[(f64, f64)], mac: MacSpec, radio: RadioSpec) -> MeshSpec {
    let nodes: Vec<NodeSpec> = pos
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| NodeSpec {
            id: i as u32 + 1,
            role: if i == 0 { Role::BorderRouter } else { Role::Client },
            x,
            y,
        })
        .collect();
    let macs = vec![mac; nodes.len()];
    MeshSpec {
        nodes,
        macs,
        radio,
        cpu: CPU,
        compression: NITK,
        mobility: None,
        cloud: None,
        contikimac: ContikimacSpec::default(),
        rdcs: Vec::new(),
        cpu_clocks_hz: Vec::new(),
        pinned_parents: Vec::new(),
        boots_ns: Vec::new(),
        dis_first_ns: Vec::new(),
        rpl: None,
        cooja_mote: None,
        partial_frame_stall: false,
        rx_turnaround: false,
        nd: None,
        jitter_m: 0.0,
    }
}

fn stats(m: &Mesh) -> Vec<NodeStats> {
    m.report().nodes.iter().map(|n| n.stats).collect()
}

const MS: u64 = 1_000_000;
const CSMA: MacSpec =
    MacSpec::Csma { queuebuf_num: 4, max_neighbor_queues: 2, max_transmissions: 4, backoff: CsmaBackoff::Timebase };

/// Binomial bounds: |x − n·p| ≤ 5·sqrt(n·p·(1 − p)).
fn within(x: u64, n: u64, p: f64) -> bool {
    let (n, x) = (n as f64, x as f64);
    (x - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt()
}
