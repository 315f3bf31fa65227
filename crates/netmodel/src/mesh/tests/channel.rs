//! The radio channel: collisions, carrier sense, interference, the draws, MRM's capture, jitter,
//! MSPSim's partial frames and its turnaround between frames.

use super::*;

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
    let (ids, st) = delivered(&s, &sends);
    assert_eq!(ids, vec![4]);
    assert_eq!((st[0].drops.collision, st[0].drops.rx_stall, st[1].drops.collision), (1, 2, 1));
    // MSPSim's rule off: the two are delivered
    s.partial_frame_stall = false;
    assert_eq!(delivered(&s, &sends).0, vec![2, 3, 4]);
}

/// The packets `s`'s mesh (seed 1) delivers of `sends`, by id, and its motes' statistics.
fn delivered(s: &MeshSpec, sends: &[(u64, u32, u32, u32)]) -> (Vec<u32>, Vec<NodeStats>) {
    let mut m = Mesh::new(s.clone(), 1, 0);
    let h = run(&mut m, sends);
    (h.delivered.iter().map(|d| d.1.id.0).collect(), stats(&m))
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
fn mspsim_misses_a_frame_that_begins_while_its_radio_calibrates_after_sending() {
    // A (the root) and B 9.8 m apart: they hear but do not sense each other (9.53 m). B's packet
    // to A (89-byte MPDU): prepare 1 ms, turnaround, on the air 1.224–4.264 ms. A's packet to B,
    // sent at 3.14 ms, strobes at 4.14 ms (B's frame unsensed, so A sends and loses it) and is on
    // the air from 4.364 ms, 0.1 ms after B's frame ended: B's radio calibrates until
    // 4.264 + 0.192 = 4.456 ms and never synchronises on it. A's packet at 20 ms arrives.
    let sends = [(0, 1, 0, 15), (3_140_000, 0, 1, 15), (20 * MS, 0, 1, 15)];
    let mut s = spec(&[(0.0, 0.0), (9.8, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rx_turnaround = true;
    let (ids, st) = delivered(&s, &sends);
    assert_eq!(ids, vec![2]);
    assert_eq!((st[1].drops.collision, st[0].drops.rx_turnaround, st[0].drops.collision), (1, 1, 0));
    // the rule off: B takes A's first packet
    s.rx_turnaround = false;
    assert_eq!(delivered(&s, &sends).0, vec![1, 2]);
}

#[test]
fn mspsim_misses_a_frame_that_begins_while_its_radio_waits_after_one() {
    // B (9.8, 0) between A (the root, 0, 0) and C (19.6, 0), which neither sense nor reach each
    // other. C's packet to B: on the air 1.224–4.264 ms; B synchronised on it, so it waits 8
    // symbols, to 4.392 ms. A's packet to B, sent at 3.1 ms, is on the air from 4.324 ms: missed.
    // A's packet at 20 ms arrives.
    let sends = [(0, 2, 1, 15), (3_100_000, 0, 1, 15), (20 * MS, 0, 1, 15)];
    let mut s = spec(&[(0.0, 0.0), (9.8, 0.0), (19.6, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rx_turnaround = true;
    let (ids, st) = delivered(&s, &sends);
    assert_eq!(ids, vec![0, 2]);
    assert_eq!(st[0].drops.rx_turnaround, 1);
    s.rx_turnaround = false;
    assert_eq!(delivered(&s, &sends).0, vec![0, 1, 2]);
}
