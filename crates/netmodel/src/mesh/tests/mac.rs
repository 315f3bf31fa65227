//! The MACs and RDCs: CSMA's queues and retries, ContikiMAC's strobes, Cooja motes' ACKs.

use super::*;

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

/// B 9.7 m from A: within range (10 m) but beyond carrier sense (10·81/85 = 9.53 m), so A's
/// wake-ups never sense B's copies. B (nullmac) strobes until the strobe time is over: copies every
/// 224 µs + 3040 µs + 396 728 ns = 3 660 728 ns from t0 = 1 ms + 6 CCAs; the gap after copy k ends
/// at t0 + (k + 1)·3 660 728, the first at or past t0 + 127 441 406 is k + 1 = 35: NOACK after 35
/// copies, the packet dropped (`noack`), no phase learned.
#[test]
fn contikimac_strobes_to_the_strobe_time_and_reports_noack() {
    let m = mesh(&[(0.0, 0.0), (9.7, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let spec = MeshSpec { rdcs: vec![Rdc::Contikimac; 2], ..m.spec().clone() };
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
    s.contikimac = ContikimacSpec { channel_check_rate: 8, phase_optimization: false };
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
fn a_cooja_mote_acks_a_unicast_a_millisecond_after_it() {
    // the client's packet: prepare 2.096 ms, no turnaround, then 89 − 2 bytes at 32 µs (the
    // 2784 µs ContikiRadio takes): the frame ends at 4.880 ms; the root's nullrdc ACKs it at
    // 5.880 ms (3 bytes: 96 µs) and hands the packet up after 1 ms of its own, at 5.880 ms
    let mut m = cooja_pair(MacSpec::Nullmac, 1.0, 1);
    let h = run(&mut m, &[(0, 1, 0, 15)]);
    assert_eq!(h.starts, vec![(2_096_000, 1), (5_880_000, 0)]);
    assert_eq!(h.delivered.iter().map(|d| d.0).collect::<Vec<_>>(), vec![5_880_000]);
    assert_eq!(CoojaMoteSpec::airtime_ns(89), 2_784_000);
    assert_eq!(CoojaMoteSpec::airtime_ns(frame::ACK_MPDU), 96_000);
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
    let mut m = cooja_pair(cooja_csma(), 0.5, 7);
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
fn a_cooja_mote_s_csma_sends_again_4_ms_after_a_frame_not_acked() {
    // nobody hears the root (TX ratio 0), so none of its 4 transmissions is ACKed: each ACK wait
    // ends 2 ms after the frame (89 − 2 bytes at 32 µs: 2.784 ms) and the retry goes on the air
    // 2 ms after that. Starts: 2.096 ms (the packet's preparation), then every 2.784 + 4 ms
    let mut m = cooja_pair(cooja_csma(), 0.0, 1);
    let h = run(&mut m, &[(0, 0, 1, 15)]);
    assert_eq!(h.starts, vec![(2_096_000, 0), (8_880_000, 0), (15_664_000, 0), (22_448_000, 0)]);
    assert_eq!(stats(&m)[0].drops.csma_retry_limit, 1);
}

#[test]
fn a_cooja_mote_s_nullmac_send_returns_after_the_ack_wait() {
    // the client (nullmac) sends its 15-byte packet to the border router: prepared 2.096 ms,
    // on the air 2.784 ms (89 − 2 bytes at 32 µs) to 4.880 ms; the ACK wait ends 2 ms later,
    // and the send returns then, after the ACK's 96 µs when it came (Cooja: 2.096 / 2.000 ms
    // after the frame: 12,695 acknowledged and 875 unacknowledged client frames of
    // N-eifel-grid3x3-tx1.0-rx0.95-s1, a few dozen otherwise)
    for (p_tx, returned) in [(1.0, 6_976_000), (0.0, 6_880_000)] {
        let mut m = cooja_pair(cooja_csma(), p_tx, 1);
        let h = run(&mut m, &[(0, 1, 0, 15)]);
        assert_eq!(h.starts[0], (2_096_000, 1));
        assert_eq!(h.returned, vec![(returned, 1)], "TX ratio {p_tx}");
    }
    // the border router's CSMA returns once the packet is queued, after its preparation
    let mut m = cooja_pair(cooja_csma(), 1.0, 1);
    let h = run(&mut m, &[(0, 0, 1, 15)]);
    assert_eq!(h.returned, vec![(2_096_000, 0)]);
    // a mote that is no Cooja mote never reports one
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    assert!(run(&mut m, &[(0, 1, 0, 15)]).returned.is_empty());
}

/// The Cooja runs' border router's CSMA: 16 buffers, 2 neighbour queues, 4 transmissions.
fn cooja_csma() -> MacSpec {
    MacSpec::Csma {
        queuebuf_num: 16,
        max_neighbor_queues: 2,
        max_transmissions: 4,
        backoff: CsmaBackoff::BinaryExponential,
    }
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

/// B (9 m from A) sends to A under ContikiMAC with nullmac; A wakes at 50 ms (+ k·125 ms), B
/// at 100 ms. Every instant below is derived from Contiki's constants (`contikimac` module):
/// CCAs 610 351 ns apart, a copy every 224 µs turnaround + 3 040 µs airtime + 396 728 ns gap.
#[test]
fn contikimac_strobes_until_the_wakeup_then_learns_the_phase() {
    let mut m = mesh(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0), 1);
    let spec = MeshSpec { rdcs: vec![Rdc::Contikimac; 2], ..m.spec().clone() };
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
