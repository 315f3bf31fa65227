//! The calibration points of the reference testbed (docs/bottleneck.md), with the expected values derived here from the
//! model's arithmetic, and determinism.

use netsim::{run_rep, Scenario, Summary};

fn run(cc: &str, clients: u32, buffer: u64, reps: u32, seed: u64) -> Summary {
    let mut s = Scenario { cc: cc.into(), clients, reps, seed, ..Scenario::thesis() };
    s.uplink.buffer_bytes = buffer;
    s.downlink.buffer_bytes = buffer;
    let s = s.resolve().unwrap();
    let t = s.transport().unwrap();
    let results: Vec<_> = (0..reps).map(|r| run_rep(&s, &t, r, None)).collect();
    Summary::new(&results)
}

/// The bottleneck's section of a summary.
fn bn(s: &Summary) -> &netsim::summary::BottleneckSummary {
    s.network.bottleneck().expect("the wired bottleneck")
}

/// Request: 4-byte header + Uri-Path "hello" (1 + 5 bytes) + UDP 8 + IPv4 20 = 38 bytes;
/// response: 4 + marker + 60 payload + 28 = 93 bytes.
const REQ: f64 = 38.0;
const RESP: f64 = 93.0;

#[test]
fn one_client_takes_fifty_round_trips() {
    // fixed part of one RTT: uplink serialization + 200 ms + downlink serialization + 400 ms
    let fixed = REQ * 8.0 / 60_000.0 + 0.200 + RESP * 8.0 / 30_000.0 + 0.400; // 0.6298667 s
    for cc in ["default", "cocoa", "fasor", "fasor_token", "linux_rto", "gst", "eifel", "peakhopper", "cocoa_pp"] {
        let s = run(cc, 1, 2500, 1, 7);
        let fct = s.fct_s.p50;
        // plus two router–server hops of U[10, 20] ms per exchange: 100 draws in [1.0, 2.0] s
        assert!(fct >= 50.0 * fixed + 1.0 && fct <= 50.0 * fixed + 2.0, "{cc}: {fct}");
        // ≈ 33.0 s, the calibration point (mean hops 15 ms: 50 · 0.6598667 = 32.993 s)
        assert!((fct - 33.0).abs() < 0.2, "{cc}: {fct}");
        assert_eq!(s.retransmissions_hist, vec![50], "{cc}: no retransmission with one client");
        assert_eq!(bn(&s).drops.down_buffer + bn(&s).drops.up_buffer, 0);
        if cc == "default" {
            // 50 datagrams each way: 50 · 38 and 50 · 93 bytes; 50 · 24.8 ms on the downlink
            assert_eq!((bn(&s).links.uplink.bytes, bn(&s).links.downlink.bytes), (50 * 38, 50 * 93));
            assert!((bn(&s).links.downlink.busy_s - 50.0 * RESP * 8.0 / 30_000.0).abs() < 1e-6);
        }
    }
}

#[test]
fn fifty_clients_are_bound_by_the_downlink() {
    // 50 clients × 50 responses of 93 bytes at 30 kbit/s: at least 2500 · 24.8 ms = 62.0 s
    let floor = 2500.0 * RESP * 8.0 / 30_000.0;
    assert!((floor - 62.0_f64).abs() < 1e-9);
    for cc in ["default", "cocoa"] {
        let s = run(cc, 50, 2500, 2, 3);
        assert!(s.fct_s.max >= floor, "{cc}: the last client cannot finish before {floor}");
        // calibration point: median ≈ 62.0 s (within 2 %)
        assert!((s.fct_s.p50 - 62.0).abs() < 0.02 * 62.0, "{cc}: median {}", s.fct_s.p50);
    }
}

#[test]
fn same_seed_same_result_different_seed_different_result() {
    let a = run("cocoa", 20, 2500, 2, 11);
    let b = run("cocoa", 20, 2500, 2, 11);
    let c = run("cocoa", 20, 2500, 2, 12);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_ne!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&c).unwrap());
}

/// The reference's congestion collapse.
#[test]
fn default_collapses_and_fasor_does_not_with_400_clients_and_infinite_buffer() {
    let floor = 400.0 * 50.0 * RESP * 8.0 / 30_000.0; // 496 s of downlink work
    let d = run("default", 400, 1_410_000, 1, 1);
    let f = run("fasor", 400, 1_410_000, 1, 1);
    let retx = |s: &Summary| {
        let n: u64 = s.retransmissions_hist.iter().enumerate().map(|(i, n)| i as u64 * n).sum();
        n as f64 / s.exchanges as f64
    };
    // collapse: queueing far beyond the 2–3 s initial RTO, almost every request retransmitted
    // several times, most of the downlink carrying duplicates
    assert!(retx(&d) > 2.0, "{}", retx(&d));
    assert!(d.retransmissions_hist[0] < d.exchanges / 10);
    assert!(bn(&d).wasted_downlink_fraction > 0.5, "{}", bn(&d).wasted_downlink_fraction);
    assert!(d.fct_s.p50 > 2.0 * floor);
    // FASOR: close to the link's floor, few retransmissions
    assert!(retx(&f) < 0.5, "{}", retx(&f));
    assert!(bn(&f).wasted_downlink_fraction < 0.2);
    assert!(f.fct_s.p50 < 1.25 * floor, "{}", f.fct_s.p50);
}

fn run_scn(s: Scenario) -> Summary {
    let s = s.resolve().unwrap();
    let t = s.transport().unwrap();
    Summary::new(&(0..s.reps).map(|r| run_rep(&s, &t, r, None)).collect::<Vec<_>>())
}

/// Serialization of `bytes` at `bps`, s.
fn ser(bytes: f64, bps: f64) -> f64 {
    bytes * 8.0 / bps
}

#[test]
fn one_tcp_client_continuous() {
    // RFC 8323 frames: request = Len/TKL + code + Uri-Path "hello" (6) = 8 bytes → 48-byte
    // segment (20 IP + 20 TCP); response = Len/TKL + extended length + code + marker + 60 = 64
    // bytes → 104-byte segment. Responses piggyback the ACK of the request, the next request
    // the ACK of the response: no pure ACK, no Nagle wait.
    let fixed = ser(48.0, 60_000.0) + 0.200 + ser(104.0, 30_000.0) + 0.400; // 0.6341333 s
    let s = run_scn(Scenario { transport: netsim::TransportKind::Tcp, clients: 1, ..Scenario::thesis() });
    let fct = s.fct_s.p50;
    assert!(fct >= 50.0 * fixed + 1.0 && fct <= 50.0 * fixed + 2.0, "{fct}"); // + 100 hops of 10..20 ms
    assert!((fct - 33.2).abs() < 0.15, "{fct}"); // the calibration point; UDP's is 33.0
    assert_eq!(s.retransmissions_hist, vec![50]);
    // 20 seeds: the median sits at the mean-hop value 50 · (fixed + 0.030) = 33.207 s
    let s = run_scn(Scenario { transport: netsim::TransportKind::Tcp, clients: 1, reps: 20, ..Scenario::thesis() });
    assert!((s.fct_s.p50 - 50.0 * (fixed + 0.030)).abs() < 0.03, "{}", s.fct_s.p50);
}

#[test]
fn one_tcp_client_random_pays_handshakes_and_csm() {
    // 10 batches of 5: every batch opens a connection. Per batch, at mean hop delay (15 ms each
    // way, so 0.630 s of propagation per round trip):
    // * the handshake: SYN (52 B: MSS, window scale, SACK-permitted) up, SYN/ACK (52 B) down;
    // * the client's ACK (40 B) goes up, then its CSM and first request in one segment (the
    //   request is written before the CSM leaves: 53 B). The server, established by that ACK,
    //   sends its CSM (45 B) and answers the request at once, but Nagle (Minshall) holds the
    //   64-byte response while the server's small CSM is unacknowledged. The client's quick-ACK
    //   mode acknowledges that CSM at once (40 B up), releasing the response (104 B down):
    //   2·(40 B up) + 45 B down + 104 B down + two round trips (the server's ACK of the
    //   request, 40 B down at once in quick-ACK mode, leaves before anything it could delay);
    // * the second exchange: neither side is interactive yet (the client's first data went
    //   before any arrived, the server's first response left a round trip after its request,
    //   Nagle holding it, beyond the 200-ms ACK delay), both in quick-ACK mode, so each ACKs
    //   what it received at once, from the receive path, before its application answers: the
    //   client's ACK of the response (40 B up) goes before its request, the server's of the
    //   request (40 B down) before its response; one round trip + ser(40 up) + ser(40 down).
    //   Its response leaves within the ACK delay of its request, as does the client's next
    //   request: both interactive from then;
    // * three more exchanges of one round trip each (48 B up, 104 B down);
    // * from the second batch on, the closing connection's FIN (40 B) goes up before the new
    //   SYN, and the server's FIN (40 B) comes down before the SYN/ACK, which waits
    //   ser(40 B down) − ser(52 B up) for it.
    let rtt = ser(48.0, 60_000.0) + ser(104.0, 30_000.0) + 0.630;
    let handshake = ser(52.0, 60_000.0) + ser(52.0, 30_000.0) + 0.630;
    let first = 2.0 * ser(40.0, 60_000.0) + ser(45.0, 30_000.0) + ser(104.0, 30_000.0) + 2.0 * 0.630;
    let gap = ser(40.0, 60_000.0) + ser(40.0, 30_000.0) - ser(52.0, 60_000.0);
    let acks = ser(40.0, 60_000.0) + ser(40.0, 30_000.0);
    let expected = 10.0 * (handshake + first + 4.0 * rtt + acks) + 9.0 * gap; // 46.419 s
    let mut scn = Scenario {
        transport: netsim::TransportKind::Tcp,
        clients: 1,
        workload: netsim::WorkloadKind::Random,
        ..Scenario::thesis()
    };
    scn.batch_min = 5;
    scn.batch_max = 5;
    let s = run_scn(scn.clone());
    assert!((s.fct_s.p50 - expected).abs() < 0.1, "{} vs {expected}", s.fct_s.p50);
    assert!(s.fct_s.p50 > 45.0, "markedly longer than the continuous 33.2 s");
    // the textbook's receiver delays its ACK of the server's CSM by 200 ms in every batch, and
    // has no quick-ACK mode to acknowledge the second exchange's messages at once
    scn = scn.with_stack("tcp:quickack=false").unwrap();
    let s = run_scn(scn);
    let textbook = expected - 10.0 * acks + 10.0 * 0.200;
    assert!((s.fct_s.p50 - textbook).abs() < 0.1, "{} vs {textbook}", s.fct_s.p50);
}

#[test]
fn tcp_with_many_clients_completes_and_is_deterministic() {
    for workload in [netsim::WorkloadKind::Continuous, netsim::WorkloadKind::Random] {
        let scn =
            Scenario { transport: netsim::TransportKind::Tcp, clients: 50, reps: 2, workload, ..Scenario::thesis() };
        let a = run_scn(scn.clone());
        let b = run_scn(scn);
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        assert_eq!(a.exchanges, 2 * 50 * 50);
        assert_eq!(a.failed_exchanges, 0);
        // the downlink carries at least 2500 responses of 104 bytes
        assert!(a.fct_s.max >= 2500.0 * ser(104.0, 30_000.0), "{:?}", a.fct_s);
    }
}

#[test]
fn tcp_connections_that_cannot_be_established_fail_their_exchanges_and_the_run_ends() {
    // no SYN retries and 18 % link errors: some handshakes fail for good
    for workload in [netsim::WorkloadKind::Continuous, netsim::WorkloadKind::Random] {
        let mut scn =
            Scenario { clients: 20, reps: 3, workload, ..Scenario::thesis() }.with_stack("tcp:syn_retries=0").unwrap();
        scn.errors = netsim::loss::ErrorProfile::High;
        let s = run_scn(scn);
        assert_eq!(s.exchanges, 3 * 20 * 50, "{workload:?}");
        assert!(s.failed_exchanges > 0, "{workload:?}: some connection failed");
        assert!(s.failed_exchanges < s.exchanges, "{workload:?}: the others went on");
    }
}

#[test]
fn a_run_that_cannot_end_is_cut_at_max_time() {
    // the 20 continuous clients need ~33 s; a 10 s limit cuts every replication
    let s = run_scn(Scenario { clients: 20, reps: 2, max_time_s: 10.0, ..Scenario::thesis() });
    assert_eq!(s.truncated_reps, 2);
    assert!(s.exchanges < 2 * 20 * 50);
    let s = run_scn(Scenario { clients: 20, reps: 2, ..Scenario::thesis() });
    assert_eq!(s.truncated_reps, 0);
}

#[test]
fn a_truncated_replication_gives_its_unfinished_clients_no_fct() {
    // one exchange takes at least one fixed RTT (≈ 0.63 s, above): 50 of them need ≥ 31 s, so
    // none of the clients finishes its workload by a 5 s cut, over UDP or TCP
    for cc in ["default", "tcp"] {
        let s =
            Scenario { clients: 5, max_time_s: 5.0, ..Scenario::thesis() }.with_stack(cc).unwrap().resolve().unwrap();
        let r = run_rep(&s, &s.transport().unwrap(), 0, None);
        assert!(r.truncated);
        let sum = Summary::new(std::slice::from_ref(&r));
        assert_eq!((sum.truncated_reps, sum.clients_without_fct), (1, 5), "{cc}");
        assert!(sum.fct_s.p50.is_nan());
    }
}

/// CoAP over TCP reports its endpoints' counters per side. One client with nothing lost: no
/// data segment is retransmitted, probed or timed out on either side. With a queue far longer
/// than the handshake's RTT (400 clients, infinite buffer) and nothing dropped, the server's
/// responses are probed and time out (docs/tcp-mechanisms.md), all of it spurious: the clients
/// receive data they already had. A UDP run has no such section.
#[test]
fn tcp_counters_come_per_side() {
    let tcp = |clients: u32, buffer: u64| {
        let mut s = Scenario { clients, reps: 1, ..Scenario::thesis() }.with_stack("tcp").unwrap();
        s.uplink.buffer_bytes = buffer;
        s.downlink.buffer_bytes = buffer;
        run_scn(s)
    };
    let one = tcp(1, 2500).tcp.expect("a TCP run's counters");
    for side in [one.clients, one.servers] {
        assert_eq!((side.retransmissions, side.loss_probes, side.timeouts), (0, 0, 0));
    }
    let many = tcp(400, 1_410_000);
    assert_eq!(bn(&many).drops.down_buffer + bn(&many).drops.up_buffer, 0);
    let c = many.tcp.unwrap();
    assert!(c.servers.loss_probes > 0 && c.servers.timeouts > 0, "{c:?}");
    assert!(c.clients.spurious_received > 0, "{c:?}");
    let udp = run_scn(Scenario { clients: 1, reps: 1, ..Scenario::thesis() });
    assert!(udp.tcp.is_none());
}
