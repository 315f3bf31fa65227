//! The mesh driven on its own: a minimal event loop that records deliveries and discards.
//! Expected values are derived in each test from the PHY/CPU constants, not read from a run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::frame::{airtime_ns, Compression};
use super::topology::{NodeSpec, Role};
use super::*;
use crate::{HostId, PacketId};

#[derive(Debug, Default)]
struct Harness {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<MeshEvent>>,
    seq: u64,
    delivered: Vec<(u64, Packet)>,
    discarded: Vec<Packet>,
    starts: Vec<(u64, u16)>,
}

impl Schedule<MeshEvent> for Harness {
    fn deliver(&mut self, at: Instant, _lane: usize, packet: Packet) {
        self.delivered.push((at.as_nanos(), packet));
    }
    fn discard(&mut self, packet: Packet) {
        self.discarded.push(packet);
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
        contikimac: None,
        rdcs: Vec::new(),
        cpu_clocks_hz: Vec::new(),
        pinned_parents: Vec::new(),
        boots_ns: Vec::new(),
        rpl: None,
        cooja_mote: None,
        partial_frame_stall: false,
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

#[test]
fn a_sky_mote_takes_its_cpu_delays_at_3_9_mhz() {
    // the same hop with the sender and the receiver on Sky clocks: prepare 1000 µs and rx
    // 2000 µs at 8 MHz take 8/3.9 as long (2051.282 and 4102.564 µs, to the ns below); the
    // turnaround (224 µs) and the airtime (3040 µs) are the radio's
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.cpu_clocks_hz = vec![SKY_CPU_HZ; 2];
    let mut m = Mesh::new(s, 1, 0);
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(h.delivered[0].0, 2_051_282 + 224_000 + 3_040_000 + 4_102_564);
}

#[test]
fn one_hop_delivery_time_is_prepare_turnaround_airtime_and_rx() {
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    // 1000 µs prepare + 224 µs turnaround + 3040 µs airtime (89-byte MPDU) + 2000 µs rx
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(h.delivered[0].0, 1_000_000 + 224_000 + 3_040_000 + 2_000_000);
}

/// A client's CoAP processing and console output (uart 0.1 ms a byte, to keep the sums round).
fn logging_client(mesh: &mut MeshSpec) {
    mesh.cpu.client_app_us = 500;
    mesh.cpu.uart_byte_ns = 100_000;
    mesh.cpu.client_log_request_bytes = 10;
    mesh.cpu.client_log_response_bytes = 20;
}

#[test]
fn a_client_prints_its_request_after_the_frame_and_its_next_waits() {
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    logging_client(&mut s);
    let mut m = Mesh::new(s, 1, 0);
    // the client's second request is handed down at 1 ms, while the first is being prepared
    let h = run(&mut m, &[(0, 1, 0, 15), (MS, 1, 0, 15)]);
    // first: 1000 µs prepare + 500 µs CoAP, 224 µs turnaround → on the air at 1.724 ms until
    // 1.724 + 3.04 = 4.764 ms; then 10 bytes printed (1 ms) before the second's 1.5 ms of
    // preparation: its frame starts at 4.764 + 1 + 1.5 + 0.224 = 7.488 ms
    assert_eq!(h.starts, vec![(1_724_000, 1), (7_488_000, 1)]);
    assert_eq!(h.delivered.len(), 2);
}

#[test]
fn a_client_prints_a_response_before_its_next_request() {
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    logging_client(&mut s);
    let mut m = Mesh::new(s.clone(), 1, 0);
    // the border router (no client: no CoAP time, no output) answers at 0: on the air from
    // 1.224 to 4.264 ms, taken by the client's CPU until 6.264 ms; its next request, handed down
    // at that instant, waits for 20 printed bytes (2 ms) and its own 1.5 ms of preparation
    let h = run(&mut m, &[(0, 0, 1, 15), (6_264_000, 1, 0, 15)]);
    assert_eq!(h.delivered[0], (6_264_000, h.delivered[0].1));
    assert_eq!(h.starts, vec![(1_224_000, 0), (6_264_000 + 2_000_000 + 1_500_000 + 224_000, 1)]);
    // without console output the request goes after its preparation alone
    s.cpu.uart_byte_ns = 0;
    let h = run(&mut Mesh::new(s, 1, 0), &[(0, 0, 1, 15), (6_264_000, 1, 0, 15)]);
    assert_eq!(h.starts[1], (6_264_000 + 1_500_000 + 224_000, 1));
}

#[test]
fn two_senders_in_range_that_strobe_together_collide() {
    // A and B 5 m apart (they sense each other) both send to C at t = 0: both CCAs are clear
    // (nothing on the air during the turnaround), both frames go out and destroy each other at C
    let mut m = mesh(&[(2.5, 5.0), (0.0, 0.0), (5.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (0, 2, 0, 15)]);
    assert!(h.delivered.is_empty());
    let s = stats(&m);
    assert_eq!((s[1].drops.collision, s[2].drops.collision), (1, 1));
    assert_eq!((s[1].frames_sent, s[2].frames_sent), (1, 1));
}

#[test]
fn a_sender_that_senses_the_channel_busy_drops_under_nullmac_and_retries_under_csma() {
    // B sends 2 ms after A, while A's frame (1.224 → 4.264 ms) is on the air and A is 5 m away
    let pos = [(2.5, 5.0), (0.0, 0.0), (5.0, 0.0)];
    let mut m = mesh(&pos, MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (2 * MS, 2, 0, 15)]);
    // B's strobe at 3 ms: busy → dropped; A's frame arrives
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(stats(&m)[2].drops.cca_busy, 1);
    assert_eq!(stats(&m)[2].frames_sent, 0);

    // CSMA: the retry comes 125 ms + U{0..15} ticks later (window 2^0·16 ticks)
    let (lo, hi) = (3 * MS + 16 * TICK_NS, 3 * MS + 31 * TICK_NS);
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let mut m = mesh(&pos, CSMA, radio(1.0, 1.0), seed);
        let h = run(&mut m, &[(0, 1, 0, 15), (2 * MS, 2, 0, 15)]);
        assert_eq!(h.delivered.len(), 2);
        assert_eq!(stats(&m)[2].csma_busy_retries, 1);
        let start_b = h.starts.iter().find(|s| s.1 == 2).unwrap().0;
        let strobe = start_b - 224_000;
        assert!((lo..=hi).contains(&strobe), "retry strobe at {strobe}");
        assert_eq!((strobe - 3 * MS) % TICK_NS, 0, "whole ticks");
        seen.insert(strobe);
    }
    assert_eq!(seen.len(), 16, "every one of the 16 backoffs is drawn");
}

#[test]
fn a_hidden_terminal_beyond_carrier_sense_range_collides() {
    // A (0, 0) and B (19, 0) both reach C (9.5, 0); they are 19 m apart: hidden from CCA
    // (9.53 m) but within each other's interference range
    let mut m = mesh(&[(9.5, 0.0), (0.0, 0.0), (19.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (MS, 2, 0, 15)]);
    assert!(h.delivered.is_empty(), "B's CCA was clear, its frame destroyed A's reception at C");
    let s = stats(&m);
    assert_eq!((s[1].drops.collision, s[2].drops.collision, s[2].drops.cca_busy), (1, 1, 0));
}

#[test]
fn a_mote_between_r_and_i_is_interfered_but_receives_nothing() {
    // E (24, 0) sends to D (15, 0), 9 m; 1 ms later A (0, 0) sends to C (−5, 0). A is 15 m from
    // D: D receives nothing of A's frame, but the frame destroys D's reception of E's frame.
    // C is 29 m from E (untouched by E's frame); F (7.5, 5) links A and D for the routes.
    let pos = [(-5.0, 0.0), (0.0, 0.0), (15.0, 0.0), (24.0, 0.0), (7.5, 5.0)];
    let mut m = mesh(&pos, MacSpec::Nullmac, radio(1.0, 1.0), 1);
    assert_eq!(m.routes().next_hop(3, 2), 2);
    let h = run(&mut m, &[(0, 3, 2, 15), (MS, 1, 0, 15)]);
    let s = stats(&m);
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(h.delivered[0].1.from, HostId(1), "A's frame reached C");
    assert_eq!(s[3].drops.collision, 1, "E's frame was destroyed at D");
    assert_eq!(s[2].frames_received, 0);
    // without A, E's frame arrives
    let mut m = mesh(&pos, MacSpec::Nullmac, radio(1.0, 1.0), 1);
    assert_eq!(run(&mut m, &[(0, 3, 2, 15)]).delivered.len(), 1);
}

/// Binomial bounds: |x − n·p| ≤ 5·sqrt(n·p·(1 − p)).
fn within(x: u64, n: u64, p: f64) -> bool {
    let (n, x) = (n as f64, x as f64);
    (x - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt()
}

#[test]
fn tx_and_rx_draws_have_their_frequencies() {
    // 10,000 frames, one every 20 ms, from A to C at distance 8 m: p_tx = 0.7, and at 8 m
    // p_rx(d) = 1 − 0.64·(1 − 0.5) = 0.68 of the frames that were sent
    let n = 10_000u64;
    let sends: Vec<_> = (0..n).map(|k| (k * 20 * MS, 1, 0, 15)).collect();
    let mut m = mesh(&[(0.0, 0.0), (8.0, 0.0)], MacSpec::Nullmac, radio(0.7, 0.5), 3);
    let h = run(&mut m, &sends);
    let s = stats(&m)[1];
    assert!(within(s.drops.tx_fail, n, 0.3), "tx_fail {}", s.drops.tx_fail);
    let visible = n - s.drops.tx_fail;
    assert!(within(s.drops.rx_fail, visible, 0.32), "rx_fail {} of {visible}", s.drops.rx_fail);
    assert_eq!(h.delivered.len() as u64, n - s.drops.tx_fail - s.drops.rx_fail);
    // at exactly R the ratio is p_rx itself
    let mut m = mesh(&[(0.0, 0.0), (10.0, 0.0)], MacSpec::Nullmac, radio(1.0, 0.5), 4);
    let h = run(&mut m, &sends);
    assert!(within(h.delivered.len() as u64, n, 0.5));
}

#[test]
fn csma_waits_one_time_base_between_packets_to_the_same_neighbour() {
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], CSMA, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (0, 1, 0, 15), (0, 1, 0, 15)]);
    let t: Vec<u64> = h.delivered.iter().map(|d| d.0).collect();
    // three prepare jobs (1 ms each) come before the first send job: it strobes at 3 ms
    let air = 224_000 + airtime_ns(89);
    assert_eq!(t[0], 3 * MS + air + 2 * MS);
    // each later packet waits T = 125 ms after the previous one was freed (its last symbol)
    assert_eq!(t[1] - t[0], 125 * MS + air);
    assert_eq!(t[2] - t[1], 125 * MS + air);
}

#[test]
fn csma_queue_and_neighbour_queue_limits() {
    // 2 buffers: of 4 packets prepared back to back, the 3rd and 4th find no buffer
    let small =
        MacSpec::Csma { queuebuf_num: 2, max_neighbor_queues: 2, max_transmissions: 4, backoff: CsmaBackoff::Timebase };
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], small, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (0, 1, 0, 15), (0, 1, 0, 15), (0, 1, 0, 15)]);
    assert_eq!((h.delivered.len(), stats(&m)[1].drops.queue_full), (2, 2));
    // the root sends to three neighbours at once: only two neighbour queues exist
    let pos = [(0.0, 0.0), (5.0, 0.0), (-5.0, 0.0), (0.0, 5.0)];
    let mut m = mesh(&pos, CSMA, radio(1.0, 1.0), 1);
    let h = run(&mut m, &[(0, 0, 1, 15), (0, 0, 2, 15), (0, 0, 3, 15)]);
    assert_eq!((h.delivered.len(), stats(&m)[0].drops.no_neighbor_queue), (2, 1));
}

#[test]
fn the_rx_fifo_holds_one_frame_while_the_cpu_is_busy() {
    // C (the root, CSMA) prepares 8 packets for B from t = 0: its CPU is busy until 8 ms (its
    // first send job queues behind the prepares). B (−9, 0) and D (9, 0) are hidden from each
    // other (18 m). B's frame to C ends at 1 + 0.224 + 3.04 = 4.264 ms: it waits in the FIFO.
    // D sends at 3.1 ms: strobe 4.1 ms, its frame ends at 7.364 ms: the FIFO is full.
    let mut sends = vec![(0, 1, 0, 15), (3_100_000, 2, 0, 15)];
    sends.extend((0..8).map(|_| (0, 0, 1, 15)));
    let csma8 =
        MacSpec::Csma { queuebuf_num: 8, max_neighbor_queues: 2, max_transmissions: 4, backoff: CsmaBackoff::Timebase };
    let mut m8 = mesh(&[(0.0, 0.0), (-9.0, 0.0), (9.0, 0.0)], csma8, radio(1.0, 1.0), 1);
    let h = run(&mut m8, &sends);
    let s = stats(&m8);
    assert_eq!(s[2].drops.rx_overflow, 1);
    assert_eq!(s[0].frames_received, 1);
    // C's CPU: prepares until 8 ms, its first transmission 8 → 11.264 ms, then B's frame's
    // 2 ms: delivered at 13.264 ms
    let from_b = h.delivered.iter().find(|d| d.1.from == HostId(1)).unwrap();
    assert_eq!(from_b.0, 13_264_000);
    assert_eq!(h.delivered.len(), 1 + 8);
}

/// Mobility from a trace: mote 1 leaves the border router's range at 1 s (to 100 m) and comes
/// back at 3 s; the trace then starts over from 3 s (away at 4 s, back at 6 s). Its packets
/// reach the router while it is in range and are dropped for want of a route otherwise; its
/// trail holds where it was every second.
#[test]
fn a_mote_that_moves_away_loses_its_route_and_finds_it_again() {
    use super::mobility::{Area, MobilitySource, MobilitySpec, Move};
    let moves = vec![Move { mote: 1, t: 1.0, x: 100.0, y: 0.0 }, Move { mote: 1, t: 3.0, x: 9.0, y: 0.0 }];
    let mobility = MobilitySpec {
        area: Area { x_min: 0.0, y_min: 0.0, x_max: 100.0, y_max: 100.0 },
        sample_s: 1.0,
        trail_every_s: 1.0,
        source: MobilitySource::Trace(moves),
    };
    let spec =
        MeshSpec { mobility: Some(mobility), ..spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0)) };
    let mut m = Mesh::new(spec, 1, 0);
    let s = 1_000_000_000;
    let sends = [(s / 2, 1, 0, 15), (2 * s, 1, 0, 15), (3 * s + s / 2, 1, 0, 15), (4 * s + s / 2, 1, 0, 15)];
    let h = run_until(&mut m, &sends, 5 * s + s / 2);
    assert_eq!(h.delivered.len(), 2, "the sends at 0.5 s and 3.5 s");
    let st = stats(&m);
    assert_eq!(st[1].drops.no_route, 2, "the sends at 2 s and 4.5 s");
    assert_eq!(m.positions()[1], (100.0, 0.0), "away again since 4 s");
    let r = m.report();
    // at 0 (start), 1, 2, 3, 4 s; the point of 5 s is taken at the next move (6 s), after the run
    assert_eq!(r.nodes[1].trail, vec![[9.0, 0.0], [100.0, 0.0], [100.0, 0.0], [9.0, 0.0], [100.0, 0.0]]);
    assert!(r.nodes[0].trail.is_empty(), "the router does not move");
}

/// A cloud host (host 2) behind the border router (mote 0, its one neighbour the server mote 1,
/// 9 m away; no address context). In: Internet 15 ms + serial line (48 + 15 + 2 SLIP = 65 bytes ·
/// 10 bits at 115200 baud = 5.642362 ms, rounded up) + the border router's rx 2 ms and prepare
/// 1 ms + turnaround 0.224 ms + the frame (IPHC 2 + 1 + hop limit 1 + 32 = 36; 36 + 16 + 15 = 67
/// bytes; MPDU 90: 3.072 ms) + the server's rx 2 ms and CoAP processing 1 ms = 29.938362 ms.
/// Out (20 bytes): prepare 1 +
/// turnaround 0.224 + the frame (IPHC 35, 71 bytes, MPDU 94: 3.2 ms) + rx 2 + prepare 1 + serial
/// (70 bytes: 6.076389 ms) + Internet 15 = 28.500389 ms, on the cloud's own lane.
#[test]
fn a_cloud_host_reaches_a_mote_through_the_serial_line() {
    let mut spec = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    spec.nodes[1].role = Role::Server;
    spec.cloud = Some(CloudSpec { hosts: 1, internet_delay_ns: 15 * MS, slip_baud: 115_200 });
    let mut m = Mesh::new(spec.clone(), 1, 0);
    assert_eq!(m.lanes(), 2);
    let h = run(&mut m, &[(0, 2, 1, 15)]);
    assert_eq!(h.delivered.iter().map(|d| (d.0, d.1.to.0)).collect::<Vec<_>>(), vec![(29_938_362, 1)]);
    assert_eq!(stats(&m)[0].forwarded, 1);
    let mut m = Mesh::new(spec, 1, 0);
    let h = run(&mut m, &[(0, 1, 2, 20)]);
    assert_eq!(h.delivered.iter().map(|d| (d.0, d.1.to.0)).collect::<Vec<_>>(), vec![(28_500_389, 2)]);
}

/// B (9 m from A) sends to A under ContikiMAC with nullmac; A wakes at 50 ms (+ k·125 ms), B
/// at 100 ms. Every instant below is derived from Contiki's constants (`contikimac` module):
/// CCAs 610 351 ns apart, a copy every 224 µs turnaround + 3 040 µs airtime + 396 728 ns gap.
#[test]
fn contikimac_strobes_until_the_wakeup_then_learns_the_phase() {
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let spec = MeshSpec { contikimac: Some(ContikimacSpec::default()), ..m.spec().clone() };
    m = Mesh::new(spec, 1, 0);
    m.nodes[0].duty.phase = 50 * MS;
    m.nodes[1].duty.phase = 100 * MS;
    let h = run(&mut m, &[(0, 1, 0, 15), (200 * MS, 1, 0, 15)]);
    let period = 224_000 + 3_040_000 + 396_728;
    // send 1: prepared at 1 ms, 6 CCAs, copies from t0 = 1 ms + 6·610 351 ns. Copy 12 is on the
    // air at 50 ms (A's wake-up: 4 886 106 + 12·period = 48 814 842 … 51 854 842); A takes copy 13
    let t0 = 1_000_000 + 6 * 610_351;
    let copy13_end = t0 + 13 * period + 224_000 + 3_040_000;
    assert_eq!(copy13_end, 55_515_570);
    // send 2 (prepared at 201 ms): A's phase is known (copy 13's start, 52 251 570 ns); the
    // wait to the guard time before its predicted wake-up (302 251 570) is 10 ticks in a timer
    // (to 279 125 000), then 7 257 430 ns busy, 6 CCAs: t0 = 290 044 536. Copy 2 is on the air
    // at A's wake-up (300 ms): A takes copy 3
    let t0b = 279_125_000 + 7_257_430 + 6 * 610_351;
    assert_eq!(t0b, 290_044_536);
    let copy3_end = t0b + 3 * period + 224_000 + 3_040_000;
    let rx = 2_000_000;
    assert_eq!(h.delivered.iter().map(|d| d.0).collect::<Vec<_>>(), [copy13_end + rx, copy3_end + rx]);
    let s = stats(&m);
    assert_eq!(s[1].frames_sent, 14 + 4);
    assert_eq!(s[1].copy_drops.asleep, 13 + 3);
    assert_eq!((s[1].handed_over, s[0].frames_received, s[0].acks_sent), (2, 2, 2));
    // radio-on time. A: 3 wake-ups (50, 175, 300 ms ≤ the last event, its CPU at
    // copy3_end + rx) of 2 × 122 070 ns, listening from each wake-up to its ACK's end
    // (192 µs + 352 µs after the copy)
    let ack = 192_000 + 352_000;
    let a_listen = (copy13_end + ack - 50 * MS) + (copy3_end + ack - 300 * MS);
    assert_eq!(s[0].radio_on_ns, 3 * 244_140 + a_listen);
    // B: 2 wake-ups (100, 225 ms), 2 × 6 CCAs, each strobe from t0 to reading the ACK
    // (the gap's 396 728 ns + 640 869 ns after the copy)
    let read = 396_728 + 640_869;
    let strobes = (copy13_end + read - t0) + (copy3_end + read - t0b);
    assert_eq!(s[1].radio_on_ns, 2 * 244_140 + 12 * 122_070 + strobes);
}

/// B 9.7 m from A: within range (10 m) but beyond carrier sense (10·81/85 = 9.53 m), so A's
/// wake-ups never sense B's copies. B (nullmac) strobes until the strobe time is over: copies every
/// 224 µs + 3040 µs + 396 728 ns = 3 660 728 ns from t0 = 1 ms + 6 CCAs; the gap after copy k ends
/// at t0 + (k + 1)·3 660 728, the first at or past t0 + 127 441 406 is k + 1 = 35: NOACK after 35
/// copies, the packet dropped (`noack`), no phase learned.
#[test]
fn contikimac_strobes_to_the_strobe_time_and_reports_noack() {
    let m = mesh(&[(0.0, 0.0), (9.7, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let spec = MeshSpec { contikimac: Some(ContikimacSpec::default()), ..m.spec().clone() };
    let mut m = Mesh::new(spec, 1, 0);
    m.nodes[0].duty.phase = 50 * MS;
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    assert!(h.delivered.is_empty());
    assert_eq!(h.discarded.len(), 1);
    let s = stats(&m);
    assert_eq!((s[1].frames_sent, s[1].copy_drops.asleep, s[1].drops.noack), (35, 35, 1));
    assert_eq!(s[0].acks_sent, 0);
    assert!(m.nodes[1].duty.known_phase(0).is_none());
    // B's radio: 6 CCAs, then on from t0 to the NOACK (t0 + 35 periods)
    let strobe = 35 * 3_660_728;
    let b_wakeups = (1 + 6 * 610_351 + strobe - m.nodes[1].duty.phase) / 125_000_000 + 1;
    assert_eq!(s[1].radio_on_ns, b_wakeups * 244_140 + 6 * 122_070 + strobe);
}

/// The NITK border router: CSMA over ContikiMAC with its radio kept on and phase optimisation
/// off (Contiki 3.1's default), beside nullrdc motes that acknowledge in hardware.
fn kept_on_border_router(pos: &[(f64, f64)]) -> MeshSpec {
    let mut s = spec(pos, MacSpec::Nullmac, radio(1.0, 1.0));
    s.macs[0] = CSMA;
    s.contikimac = Some(ContikimacSpec { channel_check_rate: 8, phase_optimization: false });
    s.rdcs = (0..pos.len()).map(|i| if i == 0 { Rdc::ContikimacKeptOn } else { Rdc::Nullrdc }).collect();
    s
}

#[test]
fn a_kept_on_border_router_makes_its_ccas_and_a_nullrdc_mote_acks_in_hardware() {
    let t = ContikimacSpec::default().timing();
    let mut m = Mesh::new(kept_on_border_router(&[(0.0, 0.0), (9.0, 0.0)]), 1, 0);
    let h = run(&mut m, &[(0, 0, 1, 15), (20 * MS, 0, 1, 15)]);
    // 1 ms preparation, 6 CCAs 610 351 ns apart, 224 µs turnaround: the copy starts at
    // 4 886 106 ns and ends 3.04 ms later (89 bytes); the mote's radio ACKs 192 µs after that
    // (5 bytes, 352 µs) and its CPU hands the packet up 2 ms after the copy's end
    let start = MS + 6 * t.cca_spacing + 224_000;
    assert_eq!(start, 4_886_106);
    let end = start + 3_040_000;
    assert_eq!(h.starts[..2], [(start, 0), (end + 192_000, 1)]);
    assert_eq!(h.delivered[0].0, end + 2_000_000);
    // no phase learnt: the second packet, 20 ms on, goes the same way
    assert_eq!(h.starts[2], (20 * MS + start, 0));
    assert_eq!(h.delivered.len(), 2);
    let s = stats(&m);
    assert_eq!((s[0].frames_sent, s[1].acks_sent, s[0].drops.total()), (2, 2, 0));
    // the mote's own frames to the border router request no ACK: it takes them as they end
    let mut m = Mesh::new(kept_on_border_router(&[(0.0, 0.0), (9.0, 0.0)]), 1, 0);
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    assert_eq!(h.starts, vec![(1_224_000, 1)]);
    assert_eq!(h.delivered[0].0, 1_224_000 + 3_040_000 + 2_000_000);
    assert_eq!(stats(&m)[0].acks_sent, 0);
}

#[test]
fn a_kept_on_border_router_sends_six_dio_trains_of_33_copies_in_300_s() {
    // Trickle from Imin = 2^12 ms in whole ticks of 1/128 s (524 ticks), doubling (1048, 2097,
    // 4194, 8388, 16777, 33554 ticks): the intervals end at 4.09, 12.28, 28.66, 61.43, 126.96,
    // 258.03 s, each with its DIO in its second half; the seventh's DIO falls after 389 s. Each DIO is a ContikiMAC
    // broadcast: a copy of 97 bytes (103 on the air: 3296 µs) after the 224 µs turnaround, then
    // the 13-tick gap (396.7 µs), until the 4176-tick strobe time (127.44 ms) is over:
    // ceil(127 441 / 3916.7) = 33 copies.
    let t = ContikimacSpec::default().timing();
    let period = airtime_ns(97) + 224_000 + t.inter_packet;
    assert_eq!(t.strobe.div_ceil(period), 33);
    let mut s = kept_on_border_router(&[(0.0, 0.0), (9.0, 0.0)]);
    s.rpl = Some(RplSpec::default());
    let mut m = Mesh::new(s, 1, 0);
    let h = run_until(&mut m, &[], 300 * 1_000_000_000);
    let st = stats(&m);
    assert_eq!(st[0].rpl_frames_sent, 6 * 33);
    // the nullrdc mote takes every copy (no duplicate detection without AUTOACK); its own
    // control frames are not data frames
    assert_eq!(st[1].rpl_frames_received, 6 * 33);
    assert_eq!((st[0].frames_sent, st[1].frames_sent, h.delivered.len()), (0, 0, 0));
    // the border router takes every frame the mote sends: its DIOs, its probes and a DAO after
    // each DIO whose DTSN the root had incremented (the second to the sixth)
    assert_eq!(st[0].rpl_frames_received, st[1].rpl_frames_sent);
    assert!(st[1].rpl_frames_sent >= 5, "{}", st[1].rpl_frames_sent);
}

#[test]
fn rpl_control_frames_stay_out_of_the_data_accounting() {
    // a nullrdc chain with data and control traffic: every data packet is delivered or dropped
    // for one counted cause, and none of the driver's packets is a control packet
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec::default());
    let mut m = Mesh::new(s, 3, 0);
    let sends: Vec<_> = (0..200).map(|k| (k * 100 * MS, 2, 0, 15)).collect();
    let h = run_until(&mut m, &sends, 30 * 1_000_000_000);
    assert!(h.delivered.iter().map(|d| &d.1).chain(&h.discarded).all(|p| !rpl::is_control(p)));
    let st = stats(&m);
    let drops: u64 = st.iter().map(|x| x.drops.total()).sum();
    assert_eq!(h.delivered.len() as u64 + drops, 200);
    assert!(st.iter().map(|x| x.rpl_frames_sent).sum::<u64>() > 0);
}

#[test]
fn in_start_up_mode_the_dodag_forms_hop_by_hop_and_packets_wait_for_routes() {
    // nullrdc chain: border router 0 — mote 1 (9 m) — mote 2 (18 m). Only the root is in the
    // DODAG at 0; its first DIO goes in the second half of its first 524-tick interval
    // (2.05–4.09 s), so mote 1 joins then (rank 1) and mote 2 only through mote 1's DIO (rank 2).
    // A packet mote 2 sends at 0.5 s has no parent to go to (no_route); one at 200 s, after both
    // DAOs (2–6 s after each join) reached the root, is delivered to the root, and one the root
    // sends a second later goes down the route mote 2's DAO left.
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 5, 0);
    let h =
        run_until(&mut m, &[(500 * MS, 2, 0, 15), (200_000 * MS, 2, 0, 15), (201_000 * MS, 0, 2, 15)], 210_000 * MS);
    let st = stats(&m);
    assert_eq!(st[2].drops.no_route, 1);
    let to_root = h.delivered.iter().filter(|d| d.1.to == HostId(0)).count();
    let to_mote = h.delivered.iter().filter(|d| d.1.to == HostId(2)).count();
    assert_eq!((to_root, to_mote), (1, 1));
    // the report's tree is the one RPL formed
    Medium::finish(&mut m, Instant::from_nanos(210_000 * MS));
    let r = m.report();
    assert_eq!(
        r.nodes.iter().map(|n| (n.parent, n.rank)).collect::<Vec<_>>(),
        [(None, Some(0)), (Some(1), Some(1)), (Some(2), Some(2))]
    );
}

/// Cooja's MRM with a sharp edge (no SNR variance) at −33 dBm: every frame is received up to
/// 10^((−33 − 40.044 + 94)/20) = 11.19 m (SNR ≥ 6 dB) and nowhere beyond; carrier sense to
/// 10^((−33 − 40.044 + 90)/20) = 7.05 m. The tree links motes within 11.5 m.
fn mrm_radio(capture: bool) -> RadioSpec {
    let m = mrm::MrmSpec { snr_variance_db2: 0.0, capture, ..mrm::MrmSpec::cooja(-33.0) };
    RadioSpec {
        tx_range_m: 11.5,
        interference_range_m: 20.0,
        success_ratio_tx: 1.0,
        success_ratio_rx: 1.0,
        cca_range_m: m.reach_m(mrm::CCA_THRESHOLD_DBM),
        tx_turnaround_us: 224,
        mrm: Some(m),
    }
}

#[test]
fn under_mrm_a_later_frame_not_3_db_weaker_captures_the_receiver() {
    // A and B 7.5 m either side of the border router, 15 m apart (neither senses the other).
    // A's frame is on the air 1.224 → 4.264 ms, B's (sent 1 ms later) 2.224 → 5.264 ms: as
    // strong at the router, it takes the router over (Cooja's MRM); the router gets B's packet
    // 2 ms after its frame, A's is lost
    let pos = [(0.0, 0.0), (7.5, 0.0), (-7.5, 0.0)];
    let mut m = mesh(&pos, MacSpec::Nullmac, mrm_radio(true), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (MS, 2, 0, 15)]);
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(h.delivered[0].0, 5_264_000 + 2_000_000);
    assert_eq!(h.delivered[0].1.from, HostId(2));
    assert_eq!(stats(&m)[1].drops.collision, 1);
    // without the capture effect both are lost, as under UDGM
    let mut m = mesh(&pos, MacSpec::Nullmac, mrm_radio(false), 1);
    assert!(run(&mut m, &[(0, 1, 0, 15), (MS, 2, 0, 15)]).delivered.is_empty());
}

#[test]
fn under_mrm_a_frame_more_than_3_db_weaker_leaves_the_reception_alone() {
    // B at 11 m: 20·log10(11/7.5) = 3.33 dB weaker than A at the router, so the router keeps
    // A's frame (delivered at 4.264 + 2 ms) and never takes B's
    let pos = [(0.0, 0.0), (7.5, 0.0), (-11.0, 0.0)];
    let mut m = mesh(&pos, MacSpec::Nullmac, mrm_radio(true), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (MS, 2, 0, 15)]);
    assert_eq!(h.delivered.len(), 1);
    assert_eq!(h.delivered[0].0, 4_264_000 + 2_000_000);
    assert_eq!(h.delivered[0].1.from, HostId(1));
    assert_eq!(stats(&m)[2].drops.collision, 1);
    // 10.5 m is 2.92 dB weaker: within 3 dB, B captures
    let pos = [(0.0, 0.0), (7.5, 0.0), (-10.5, 0.0)];
    let mut m = mesh(&pos, MacSpec::Nullmac, mrm_radio(true), 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (MS, 2, 0, 15)]);
    assert_eq!(h.delivered.iter().map(|d| d.1.from).collect::<Vec<_>>(), vec![HostId(2)]);
}

#[test]
fn under_mrm_a_frame_disturbs_only_where_it_may_be_received() {
    // B, 15 m from the router (out of MRM's reach, inside UDGM's 20 m interference range),
    // sends to C at 22 m while A's frame reaches the router: MRM delivers A's packet, UDGM
    // (R = 11.5 m, I = 20 m) loses it to B's interference (D at 7.5 m links B to the tree)
    let pos = [(0.0, 0.0), (7.5, 0.0), (-15.0, 0.0), (-22.0, 0.0), (-7.5, 0.0)];
    let sends = [(0, 1, 0, 15), (MS, 2, 3, 15)];
    let mut m = mesh(&pos, MacSpec::Nullmac, mrm_radio(true), 1);
    let h = run(&mut m, &sends);
    assert!(h.delivered.iter().any(|d| d.1.from == HostId(1)));
    let udgm = RadioSpec { mrm: None, ..mrm_radio(true) };
    let mut m = mesh(&pos, MacSpec::Nullmac, udgm, 1);
    let h = run(&mut m, &sends);
    assert!(!h.delivered.iter().any(|d| d.1.from == HostId(1)));
}

#[test]
fn under_mrm_without_capture_a_failed_draw_still_spoils_a_reception_under_way() {
    // The sharp edge's TX power (−33 dBm) with MRM's SNR deviation (√5 dB): B, 20 m from the
    // router, reaches it at SNR −33 − 40.044 − 26.021 + 100 = 0.935 dB, taken with
    // p = 1 − Φ((6 − 0.935)/2.236) = 0.012. A, 3 m away (SNR 17.4 dB, p = 1 − 2·10^−7), sends
    // at 0 (on the air 1.224 → 4.264 ms), B to its child C 1 ms later (senses nothing at
    // 20 m). Without the capture effect B's frame interferes at the router whether its draw
    // fails or not, and A's packet is lost; with it, a failed draw disturbs nobody and A's
    // packet arrives in all but 1.2 % of draws (seed 1 is not among them). D at −10 m links B
    // to the tree.
    let pos = [(0.0, 0.0), (3.0, 0.0), (-20.0, 0.0), (-27.0, 0.0), (-10.0, 0.0)];
    let radio = |capture| {
        let m = mrm::MrmSpec { capture, ..mrm::MrmSpec::cooja(-33.0) };
        RadioSpec { cca_range_m: m.reach_m(mrm::CCA_THRESHOLD_DBM), mrm: Some(m), ..mrm_radio(capture) }
    };
    let sends = [(0, 1, 0, 15), (MS, 2, 3, 15)];
    let from_a = |capture| {
        let mut m = mesh(&pos, MacSpec::Nullmac, radio(capture), 1);
        run(&mut m, &sends).delivered.iter().filter(|d| d.1.from == HostId(1)).count()
    };
    assert_eq!((from_a(true), from_a(false)), (1, 0));
}

#[test]
fn jitter_moves_every_mote_within_its_bounds_per_replication() {
    let base = [(0.0, 0.0), (10.0, 0.0), (20.0, 0.0), (20.0, 10.0)];
    let s = MeshSpec { jitter_m: 1.5, ..spec(&base, MacSpec::Nullmac, radio(1.0, 1.0)) };
    let (a, b, c) = (Mesh::new(s.clone(), 7, 0), Mesh::new(s.clone(), 7, 0), Mesh::new(s.clone(), 7, 1));
    for (p, q) in a.positions().iter().zip(&base) {
        assert!((p.0 - q.0).abs() <= 1.5 && (p.1 - q.1).abs() <= 1.5, "{p:?} from {q:?}");
        assert!(p != q);
    }
    // the same replication puts the motes at the same places; another one elsewhere
    assert_eq!(a.positions(), b.positions());
    assert_ne!(a.positions(), c.positions());
    // without jitter the layout stands
    let plain = Mesh::new(spec(&base, MacSpec::Nullmac, radio(1.0, 1.0)), 7, 0);
    assert_eq!(plain.positions(), &base[..]);
}

#[test]
fn a_full_route_table_refuses_or_evicts_as_its_contiki_does() {
    // nullrdc chain: border router 0 — 1 — 2 — 3, 9 m apart, RPL forming its DODAG; mote 1's
    // table holds one route (the root's is unbounded). At 200 s the root sends to motes 2 and 3.
    let run_with = |evict_lru: bool, motes: u32| {
        let pos = [(0.0, 0.0), (9.0, 0.0), (18.0, 0.0), (27.0, 0.0)];
        let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
        s.rpl = Some(RplSpec {
            startup: true,
            max_routes: rpl::MaxRoutes { root: 0, motes },
            evict_lru,
            ..RplSpec::default()
        });
        let mut m = Mesh::new(s, 5, 0);
        let h = run_until(&mut m, &[(200_000 * MS, 0, 2, 15), (201_000 * MS, 0, 3, 15)], 210_000 * MS);
        (h.delivered.len(), stats(&m))
    };
    // unbounded: both arrive
    assert_eq!(run_with(false, 0).0, 2);
    // the GST firmware's Contiki: mote 1 keeps the first route and refuses the other mote's
    // DAO, which then never reaches the root: the root has no route for that packet
    let (got, st) = run_with(false, 1);
    assert_eq!(got, 1);
    assert!(st[1].routes_refused >= 1);
    assert_eq!((st[0].drops.no_route, st[1].drops.no_route), (1, 0));
    // Contiki 3.0: mote 1 evicts, so the root learns both routes, but mote 1 holds one at a
    // time: the packet for the other is on its way down without a route there, and is dropped
    let (got, st) = run_with(true, 1);
    assert_eq!(got, 1);
    assert!(st[1].routes_evicted >= 1);
    assert_eq!((st[0].drops.no_route, st[1].drops.no_route), (0, 1));
}

/// Two Cooja motes 9 m apart, the first the border router with `root_mac`.
fn cooja_pair(root_mac: MacSpec, p_tx: f64, seed: u64) -> Mesh {
    let mut s = spec(
        &[(0.0, 0.0), (9.0, 0.0)],
        MacSpec::Nullmac,
        RadioSpec { tx_turnaround_us: 0, cca_range_m: 10.0, ..radio(p_tx, 1.0) },
    );
    s.macs[0] = root_mac;
    s.cpu = CpuSpec::new(CoojaMoteSpec::RX_PROCESS_US, CoojaMoteSpec::TX_PREPARE_US, 0, 1);
    s.cooja_mote = Some(CoojaMoteSpec::MEASURED);
    Mesh::new(s, seed, 0)
}

#[test]
fn a_cooja_mote_acks_a_unicast_a_millisecond_after_it() {
    // the client's packet: prepare 2.096 ms, no turnaround, then 89 − 2 bytes at 32 µs (the
    // 2784 µs ContikiRadio takes): the frame ends at 4.880 ms; the root's nullrdc ACKs it at
    // 5.880 ms (3 bytes: 96 µs) and hands the packet up after 1 ms of its own, at 5.880 ms
    let mut m = cooja_pair(MacSpec::Nullmac, 1.0, 1);
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    assert_eq!(h.starts, vec![(2_096_000, 1), (5_880_000, 0)]);
    assert_eq!(h.delivered.iter().map(|d| d.0).collect::<Vec<_>>(), vec![5_880_000]);
    assert_eq!(CoojaMoteSpec::airtime_ns(89), 2_784_000);
    assert_eq!(CoojaMoteSpec::airtime_ns(contikimac::ACK_MPDU), 96_000);
    assert_eq!(stats(&m)[0].acks_sent, 1);
    // the sender waits the whole ACK_WAIT_TIME (2 ms) before its next send: a second packet
    // prepared from 2.096 ms on (its CPU holds the first send until 6.880 ms) starts then
    let mut m = cooja_pair(MacSpec::Nullmac, 1.0, 1);
    let h = run(&mut m, &[(0, 1, 0, 15), (0, 1, 0, 15)]);
    let client: Vec<u64> = h.starts.iter().filter(|s| s.1 == 1).map(|s| s.0).collect();
    assert_eq!(client, vec![2_096_000, 6_880_000 + 2_096_000]);
}

#[test]
fn a_cooja_mote_s_csma_sends_again_what_was_not_acked() {
    // half the frames reach nobody (the TX draw), ACKs as much: a packet gets through when one
    // of its 4 transmissions does (1 − 0.5^4 = 93.75 %), and a data frame that arrived without
    // its ACK arriving is sent again and dropped there as a duplicate
    let csma = MacSpec::Csma {
        queuebuf_num: 16,
        max_neighbor_queues: 2,
        max_transmissions: 4,
        backoff: CsmaBackoff::BinaryExponential,
    };
    let mut m = cooja_pair(csma, 0.5, 7);
    let n = 2000u64;
    let sends: Vec<_> = (0..n).map(|k| (k * 100 * MS, 0, 1, 15)).collect();
    let h = run(&mut m, &sends);
    let s = stats(&m);
    let lost = s[0].drops.csma_retry_limit;
    // each packet once: delivered (some after the sender gave up on an ACK), or lost
    assert_eq!(h.delivered.len() as u64 + lost, n);
    assert!(within(h.delivered.len() as u64, n, 15.0 / 16.0), "{}", h.delivered.len());
    assert!(s[0].given_up_after_handover > 0);
    assert!(s[1].duplicates > 0 && s[0].frames_sent > n, "{} duplicates, {} frames", s[1].duplicates, s[0].frames_sent);
    // every packet the client took was ACKed (half the ACKs reach nobody)
    assert_eq!(s[1].acks_sent, s[1].frames_received + s[1].duplicates);
}

#[test]
fn mspsim_keeps_a_partial_frame_and_loses_the_frames_behind_it() {
    // A (the root) and B 9.8 m apart: B hears A but does not sense it (carrier sense to
    // R·81/85 = 9.53 m). A's packet to B: prepare 1 ms, turnaround, on the air 1.224–4.264 ms.
    // B's own packet, sent at 0.5 ms, strobes at 1.5 ms while it receives A's frame: 0.276 ms
    // of it, 8 bytes, of which the length byte and 3 of the MPDU went into the RX FIFO (after
    // 4 bytes of preamble and the SFD). Both frames are lost (each radio was sending).
    // A's next packets to B (89-byte MPDUs, 90 bytes in the FIFO): the first fills it to 93 bytes
    // and is never signalled; the second overflows it (183 > 128), and the driver flushes; the
    // third arrives.
    let sends = [(0, 0, 1, 15), (500_000, 1, 0, 15), (10 * MS, 0, 1, 15), (20 * MS, 0, 1, 15), (30 * MS, 0, 1, 15)];
    let mut s = spec(&[(0.0, 0.0), (9.8, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.partial_frame_stall = true;
    let mut m = Mesh::new(s.clone(), 1, 0);
    let h = run(&mut m, &sends);
    let st = stats(&m);
    assert_eq!(h.delivered.iter().map(|d| d.1.id.0).collect::<Vec<_>>(), vec![4]);
    assert_eq!((st[0].drops.collision, st[0].drops.rx_stall, st[1].drops.collision), (1, 2, 1));
    // MSPSim's rule off: the two are delivered
    s.partial_frame_stall = false;
    let mut m = Mesh::new(s, 1, 0);
    let h = run(&mut m, &sends);
    assert_eq!(h.delivered.iter().map(|d| d.1.id.0).collect::<Vec<_>>(), vec![2, 3, 4]);
}

/// A Cooja-mote diamond: the border router at (0, 0), motes 1 and 2 one hop from it, mote 3
/// 9 m from both and 12.7 m from the root (out of range): two candidate parents of equal rank.
/// Mote 3 sends to the root every 100 ms for 300 s; RX ratio `p_rx`; RPL forms its DODAG,
/// parents by MRHOF on ETX when `etx`.
fn cooja_diamond(etx: bool, p_rx: f64) -> (usize, Vec<NodeStats>) {
    let pos = [(0.0, 0.0), (0.0, 9.0), (9.0, 0.0), (9.0, 9.0)];
    let mut s = spec(&pos, MacSpec::Nullmac, RadioSpec { tx_turnaround_us: 0, cca_range_m: 10.0, ..radio(1.0, p_rx) });
    s.cpu = CpuSpec::new(CoojaMoteSpec::RX_PROCESS_US, CoojaMoteSpec::TX_PREPARE_US, 0, 1);
    s.cooja_mote = Some(CoojaMoteSpec::MEASURED);
    s.rpl = Some(RplSpec { startup: true, etx, ..RplSpec::default() });
    let mut m = Mesh::new(s, 11, 0);
    let sends: Vec<_> = (1..3000).map(|k| (k * 100 * MS, 3, 0, 15)).collect();
    let h = run_until(&mut m, &sends, 310_000 * MS);
    (h.delivered.len(), stats(&m))
}

#[test]
fn under_mrhof_on_etx_lost_acks_move_a_mote_between_equal_parents() {
    // At RX 0.8 a frame 9 m away arrives with 1 − 0.81 · 0.2 = 0.84, its ACK too: about a
    // quarter of mote 3's packets end without an ACK, each pulling its link's ETX towards 10.
    // By hop count the first parent heard stays (equal ranks never replace it); on ETX mote 3
    // moves between its two parents as their links' ETX cross (MRHOF's hysteresis: 0.75).
    let (_, hops) = cooja_diamond(false, 0.8);
    assert_eq!(hops[3].rpl_parent_switches, 0);
    let (delivered, st) = cooja_diamond(true, 0.8);
    assert!(st[3].rpl_parent_switches >= 2, "switches: {}", st[3].rpl_parent_switches);
    // no parent of 1 or 2 but the root: nothing to switch to
    assert_eq!((st[1].rpl_parent_switches, st[2].rpl_parent_switches), (0, 0));
    // every packet is delivered or dropped for a cause
    let drops: u64 = st.iter().map(|x| x.drops.total()).sum();
    assert_eq!(delivered as u64 + drops, 2999);
    // on perfect links every ACK comes: ETX falls to 1 on the parent used, and it stays
    let (_, perfect) = cooja_diamond(true, 1.0);
    assert_eq!(perfect[3].rpl_parent_switches, 0);
}

#[test]
fn rpl_drops_a_packet_that_crosses_a_rank_inconsistency_twice() {
    // a chain root 0 — 1 — 2, 9 m apart, RPL on ETX; after 100 s mote 1 has joined below the
    // root (rank 128 + its link's ETX ≥ 256). A packet going up that comes from the root (rank
    // 128, closer than mote 1) crossed a loop: the first time it goes on, flagged, and mote 1
    // sends the sender a DIO; flagged already, it is dropped. Going down from the root is fine.
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, etx: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 5, 0);
    let mut h = run_until(&mut m, &[], 100_000 * MS);
    assert!(m.rpl_rank(1) >= 256 && m.rpl_rank(1) < 0xFFFF);
    let up_from_root = 128; // sender 0 (bits 16–31), rank 128, not down
    let mut p = Packet { id: PacketId(1), from: HostId(0), to: HostId(2), size: 15, note: up_from_root };
    let dio_to_root = |m: &Mesh| {
        let n = &m.nodes[1];
        std::iter::once(&n.current)
            .chain(n.jobs.iter())
            .any(|j| matches!(j, Job::Prepare(q) if rpl::is_control(q) && q.to == HostId(0)))
    };
    assert!(!dio_to_root(&m));
    assert!(!m.rpl_verify(100_000 * MS, 1, &mut p, &mut h));
    assert_ne!(p.note & (1 << 33), 0, "the rank error is set");
    assert!(dio_to_root(&m), "a DIO to the sender");
    assert!(m.rpl_verify(100_000 * MS, 1, &mut p, &mut h), "the second time it is dropped");
    let mut down = Packet { note: 128 | (1 << 32), ..p };
    down.note &= !(1 << 33);
    assert!(!m.rpl_verify(100_000 * MS, 1, &mut down, &mut h));
    assert_eq!(down.note & (1 << 33), 0);
}

/// A link-local star: the server first at the origin, clients at `pos`, neighbour discovery with
/// a table of `cache` entries, every mote booted at 0.
fn nd_star(clients: &[(f64, f64)], cache: u32) -> Mesh {
    let mut pos = vec![(0.0, 0.0)];
    pos.extend_from_slice(clients);
    let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
    s.nodes[0].role = Role::Server;
    s.compression.link_local = true;
    s.rpl = None;
    s.nd = Some(NdSpec {
        cache,
        base_reachable_ms: 600_000,
        retrans_ms: 10_000,
        shared_random: false,
        reachable_ms: None,
        boot_spread_ns: 0,
        tcpip_start_ns: 0,
        app_start_ns: 0,
    });
    Mesh::new(s, 1, 0)
}

#[test]
fn neighbour_discovery_drops_the_first_packet_and_resolves_with_an_ns_and_an_na() {
    let mut m = nd_star(&[(5.0, 0.0)], 15);
    // the client's request at 0 finds no entry: dropped, its NS goes at the first periodic run
    // (12 ticks: 93.75 ms); the server's NA resolves it; the request at 1 s goes through
    let h = run_until(&mut m, &[(0, 1, 0, 15), (1_000 * MS, 1, 0, 15)], 10_000 * MS);
    assert_eq!(h.delivered.iter().map(|d| d.1.id.0).collect::<Vec<_>>(), [1]);
    assert_eq!(h.discarded.iter().map(|p| p.id.0).collect::<Vec<_>>(), [0]);
    let st = stats(&m);
    assert_eq!(st[1].drops.nd_unresolved, 1);
    // the NS goes on the air at 93.75 ms + 1 ms preparation + 224 µs turnaround
    assert_eq!(h.starts[0], (93_750_000 + 1_000_000 + 224_000, 1));
    // the server's NA makes its entry for the client DELAY (5 s of its clock: at 5 s), then
    // PROBE at the run after it, whose unicast NS the client answers: two frames each by 10 s
    assert_eq!((st[0].nd_frames_sent, st[1].nd_frames_sent), (2, 2));
    assert_eq!((st[0].nd_frames_received, st[1].nd_frames_received), (2, 2));
    // (DELAY becomes PROBE in the run at 5.0625 s, the 54th; the NS goes in the next: 5.15625 s)
    assert_eq!(h.starts.iter().filter(|s| s.1 == 0).nth(1).map(|s| s.0 / 1000), Some(5_157_474));
}

#[test]
fn a_boot_sequence_sets_the_periodic_runs_and_the_application_start() {
    // booted at 0, tcpip armed at tick 102 and the application at 103 (the star binaries): a
    // request one 10-s timer after the application starts, at tick 1383, leaves its NS at the
    // periodic run of tick 1386 (102 + 107·12); the NS timer runs to the clock's 20th second,
    // whose first periodic run is tick 2562, when the lost NS goes again
    let mut m = nd_star(&[(5.0, 0.0)], 15);
    let nd = m.spec.nd.as_mut().unwrap();
    (nd.tcpip_start_ns, nd.app_start_ns) = (102 * TICK_NS, 103 * TICK_NS);
    let mut m = Mesh::new(m.spec.clone(), 1, 0);
    assert_eq!(m.app_start_ns(1), Some(103 * TICK_NS));
    let request = (103 + 1280) * TICK_NS;
    let h = run_until(&mut m, &[(request, 1, 0, 15)], 12_000 * MS);
    assert_eq!(h.starts[0], (1386 * TICK_NS + 1_000_000 + 224_000, 1));
    // the same at the edge of the range with RX 0 (UDGM: a reception succeeds with probability
    // 1 − (d/R)²·(1 − RX), here 0.0002): the NS is not answered
    let mut m = nd_star(&[(9.999, 0.0)], 15);
    let nd = m.spec.nd.as_mut().unwrap();
    (nd.tcpip_start_ns, nd.app_start_ns) = (102 * TICK_NS, 103 * TICK_NS);
    m.spec.radio = radio(1.0, 0.0);
    let mut m = Mesh::new(m.spec.clone(), 1, 0);
    let h = run_until(&mut m, &[(request, 1, 0, 15)], 21_000 * MS);
    let ns: Vec<u64> = h.starts.iter().filter(|s| s.1 == 1).map(|s| s.0).collect();
    assert_eq!(ns, [1386 * TICK_NS + 1_224_000, 2562 * TICK_NS + 1_224_000]);
}

#[test]
fn a_multicast_ns_for_another_mote_is_dropped_by_its_hearers() {
    // two clients within range of each other: each one's multicast NS for the server reaches
    // the other, whose IP input drops it (a router build, not its solicited-node group): the
    // server learns both, neither client the other
    let mut m = nd_star(&[(5.0, 0.0), (0.0, 5.0)], 15);
    let h = run_until(&mut m, &[(0, 1, 0, 15), (500 * MS, 2, 0, 15)], 2_000 * MS);
    assert!(h.starts.iter().any(|s| s.1 == 2), "the second client's NS went out");
    assert!(m.nd[0].knows(1) && m.nd[0].knows(2));
    assert!(m.nd[1].knows(0) && m.nd[2].knows(0));
    assert!(!m.nd[1].knows(2) && !m.nd[2].knows(1));
}

#[test]
fn a_server_answers_only_the_clients_in_its_neighbour_table() {
    // three clients, a table of two: A's, B's and C's NSs (at the runs after 0, 200 and 400 ms)
    // leave B and C in the server's table; at 1 s each client asks and the server answers at
    // once: A's answer takes B's entry for an unresolved one and is dropped, B's takes that same
    // entry over and is dropped, C's goes (no NS from the server before its 10-s timer)
    // (120° apart on a 9-m circle: 15.6 m from each other, beyond the range, so no client hears
    // another's NS)
    let mut m = nd_star(&[(9.0, 0.0), (-4.5, 7.794), (-4.5, -7.794)], 2);
    let sends = [
        (0, 1, 0, 15),
        (200 * MS, 2, 0, 15),
        (400 * MS, 3, 0, 15),
        (1_000 * MS, 1, 0, 15),
        (1_200 * MS, 2, 0, 15),
        (1_400 * MS, 3, 0, 15),
        (1_100 * MS, 0, 1, 15),
        (1_300 * MS, 0, 2, 15),
        (1_500 * MS, 0, 3, 15),
    ];
    let h = run_until(&mut m, &sends, 1_900 * MS);
    let to_clients: Vec<u32> = h.delivered.iter().filter(|d| d.1.from.0 == 0).map(|d| d.1.to.0).collect();
    assert_eq!(to_clients, [3]);
    let st = stats(&m);
    assert_eq!(st[0].drops.nd_unresolved, 2);
    // three requests of the second round reach the server (the clients resolved it first)
    assert_eq!(h.delivered.iter().filter(|d| d.1.to.0 == 0).count(), 3);
    assert_eq!(st[0].nd_frames_sent, 3); // its three NAs; nothing else before 1.9 s
}
