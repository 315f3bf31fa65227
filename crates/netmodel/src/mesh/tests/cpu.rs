//! A mote's CPU: its clock, its jobs' delays, the console, the RX FIFO while it is busy.

use super::*;

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
