//! Hand-computed traces of the connection, one mechanism at a time (the expected values are
//! derived in the comments from the rules in the module documentation and Linux's sources).

use super::*;
use coap_cc::Instant;

fn t(s: f64) -> Instant {
    Instant::from_nanos((s * 1e9).round() as u64)
}

fn close(a: Option<Instant>, s: f64) -> bool {
    a.is_some_and(|a| (a.as_nanos() as f64 / 1e9 - s).abs() < 1e-6)
}

/// Every segment `side` has to send at `now`.
fn drain(now: Instant, side: &mut Tcp) -> Vec<Segment> {
    let mut v = Vec::new();
    while let Some(s) = side.poll_segment(now) {
        v.push(s);
    }
    v
}

/// Moves every segment one side has to send into the other, at `now`; returns them.
fn pump(now: Instant, from: &mut Tcp, to: &mut Tcp) -> Vec<Segment> {
    let v = drain(now, from);
    for s in &v {
        to.on_segment(now, s);
    }
    v
}

/// A client and a server after the handshake: SYN at 0 s, the SYN/ACK at `syn_ack_at` s (the
/// client's RTT sample); the client's handshake ACK is still to be sent.
fn established(syn_ack_at: f64, p: &TcpParams) -> (Tcp, Tcp) {
    let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p.clone()));
    pump(t(0.0), &mut c, &mut s);
    pump(t(syn_ack_at), &mut s, &mut c);
    assert!(c.is_established());
    (c, s)
}

fn data(v: &[Segment]) -> Vec<&Segment> {
    v.iter().filter(|s| !s.payload.is_empty()).collect()
}

/// Linux's defaults with the timers at their exact times (`timer_hz=0`): the traces below derive
/// each mechanism's times without the timer wheel's rounding, which its own test covers.
fn exact() -> TcpParams {
    TcpParams { timer_hz: 0, ..TcpParams::default() }
}

fn textbook() -> TcpParams {
    TcpParams {
        rto: RtoRule::Rfc6298,
        sack: false,
        frto: false,
        early_retrans: 0,
        rack: false,
        slow_start_after_idle: false,
        quickack: false,
        retries_by_time: false,
        linux_close: false,
        ..exact()
    }
}

#[test]
fn handshake_data_and_piggybacked_acks() {
    let p = exact();
    let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p.clone()));
    let syn = pump(t(0.0), &mut c, &mut s);
    assert_eq!(syn.len(), 1);
    assert_eq!(syn[0].flags, SYN);
    assert_eq!(syn[0].wire_size(&p), 52, "MSS, window scale and SACK-permitted");
    let synack = pump(t(0.6), &mut s, &mut c);
    assert_eq!(synack[0].flags, SYN | ACK);
    assert!(c.is_established());
    // one sample of 0.6 s: Linux's RTO = 0.6 + 2·0.6
    assert!((c.rto() - 1.8).abs() < 1e-9);
    c.write(b"hello");
    let out = pump(t(0.6), &mut c, &mut s);
    // the third handshake segment is a pure ACK, then the data (carrying the ACK too)
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].flags, out[0].payload.len()), (ACK, 0));
    assert_eq!((out[1].flags, out[1].seq, out[1].payload.as_slice()), (ACK, 1, &b"hello"[..]));
    assert!(s.is_established());
    assert_eq!(s.read(), b"hello");
    s.write(b"world");
    let back = pump(t(0.7), &mut s, &mut c);
    assert_eq!(back.len(), 1, "the answer carries the ACK");
    assert_eq!((back[0].ack, back[0].payload.as_slice()), (6, &b"world"[..]));
    assert_eq!(c.read(), b"world");
}

/// Linux's quick-ACK mode acknowledges the first data of a connection at once; the textbook
/// receiver waits for the 200 ms timer.
#[test]
fn quickack_at_connection_start_versus_the_delayed_ack() {
    for (p, at_once) in [(exact(), true), (textbook(), false)] {
        let (mut c, mut s) = established(0.5, &p);
        c.write(b"csm");
        pump(t(0.5), &mut c, &mut s);
        let ack = s.poll_segment(t(0.5));
        if at_once {
            assert_eq!(ack.map(|a| (a.flags, a.ack)), Some((ACK, 4)));
        } else {
            assert!(ack.is_none());
            assert_eq!(s.poll_timeout(), Some(t(0.7)));
            s.on_timeout(t(0.7));
            assert_eq!(s.poll_segment(t(0.7)).map(|a| a.ack), Some(4));
        }
    }
}

#[test]
fn nagle_holds_a_small_segment_while_a_small_one_is_unacknowledged() {
    let (mut c, mut s) = established(0.0, &exact());
    c.write(b"csm");
    let first = pump(t(0.0), &mut c, &mut s);
    assert_eq!(first.last().unwrap().payload, b"csm");
    c.write(b"req");
    assert!(c.poll_segment(t(0.01)).is_none(), "Nagle: 'req' waits for the ACK of 'csm'");
    s.write(b"CSM");
    pump(t(0.5), &mut s, &mut c); // the server's data acknowledges 'csm'
    assert_eq!(c.poll_segment(t(0.5)).unwrap().payload, b"req");
}

/// One segment out and lost. SYN RTT 1 s: RTO 3 s under both rules (1 + 2·1; 1 + 4·0.5).
/// Without loss probes the RTO fires at 1 + 3 = 4 s, backs off to 6 s, the window is 1.
/// With them (Linux) a probe goes first at max(2·1, 1.5·1 + 0.2) = 2 s after the send, i.e.
/// at 3 s, retransmitting the segment without backoff; the RTO then runs from the probe: 6 s.
#[test]
fn a_lost_segment_alone_rto_and_tail_loss_probe() {
    for tlp in [false, true] {
        let p = TcpParams { early_retrans: if tlp { 3 } else { 0 }, ..exact() };
        let (mut c, mut s) = established(1.0, &p);
        assert_eq!(c.rto(), 3.0);
        c.write(b"data");
        let out = drain(t(1.0), &mut c);
        assert_eq!(data(&out)[0].payload, b"data");
        if tlp {
            assert_eq!(c.poll_timeout(), Some(t(3.0)));
            c.on_timeout(t(3.0));
            let probe = c.poll_segment(t(3.0)).unwrap();
            assert_eq!((probe.seq, probe.retransmission), (1, true));
            assert_eq!((c.stats.loss_probes, c.stats.timeouts, c.rto(), c.cwnd()), (1, 0, 3.0, 10));
            assert_eq!(c.poll_timeout(), Some(t(6.0)));
        } else {
            assert_eq!(c.poll_timeout(), Some(t(4.0)));
            assert!(c.poll_segment(t(3.9)).is_none());
            c.on_timeout(t(4.0));
            let again = c.poll_segment(t(4.0)).unwrap();
            assert_eq!((again.seq, again.payload.as_slice(), again.retransmission), (1, &b"data"[..], true));
            assert_eq!((c.rto(), c.cwnd()), (6.0, 1));
            s.on_segment(t(5.0), &again);
            assert_eq!(s.read(), b"data");
        }
        assert_eq!(c.stats.retransmissions, 1);
    }
}

/// An RTO ends a probe's episode (Linux 4.9's `tcp_retransmit_timer`, 6.x's `tcp_enter_loss`:
/// `tlp_high_seq = 0`). SYN RTT 1 s, RTO 3 s; 'a' at 1 s is probed at 3 s (max(2·1, 1.5·1 + 0.2)),
/// the RTO from the probe fires at 6 s and backs off to 6 s. The ACK of 'a' at 6.5 s (no sample:
/// 'a' went three times) ends the recovery; 'b' then goes at 6.5 s and is probed again at 8.5 s
/// (2·SRTT, before its RTO at 12.5 s). Had the episode stayed open, the timer at 8.5 s would
/// have found a probe outstanding and set the RTO instead.
#[test]
fn an_rto_ends_the_probe_episode() {
    let (mut c, mut s) = established(1.0, &exact());
    c.write(b"a");
    let sent = drain(t(1.0), &mut c);
    s.on_segment(t(1.5), data(&sent)[0]);
    let _ack_lost = drain(t(1.5), &mut s);
    for at in [3.0, 6.0] {
        assert!(close(c.poll_timeout(), at), "{at}: {:?}", c.poll_timeout());
        c.on_timeout(t(at));
        assert_eq!(c.poll_segment(t(at)).unwrap().payload, b"a");
    }
    assert_eq!((c.stats.loss_probes, c.stats.timeouts, c.rto()), (1, 1, 6.0));
    let ack = Segment { flags: ACK, seq: 1, ack: 2, ..Segment::default() };
    c.on_segment(t(6.5), &ack);
    c.write(b"b");
    assert_eq!(drain(t(6.5), &mut c).last().unwrap().payload, b"b");
    assert!(close(c.poll_timeout(), 8.5), "{:?}", c.poll_timeout());
    c.on_timeout(t(8.5));
    let probe = c.poll_segment(t(8.5)).unwrap();
    assert_eq!((probe.payload.as_slice(), probe.retransmission, c.stats.loss_probes), (&b"b"[..], true, 2));
}

/// SRTT 0.2 s (RTO 0.2 + 0.4 = 0.6 s). With two segments out the probe comes at 2·SRTT = 0.4 s
/// and retransmits the last one; with one, at max(0.4, 1.5·0.2 + 0.2) = 0.5 s.
#[test]
fn tail_loss_probe_at_two_srtt_with_no_further_data() {
    for (bytes, after, seq) in [(512usize, 0.4, 257u64), (100, 0.5, 1)] {
        let (mut c, _s) = established(0.2, &exact());
        assert!((c.rto() - 0.6).abs() < 1e-9);
        c.write(&vec![1u8; bytes]);
        drain(t(0.2), &mut c);
        assert!(close(c.poll_timeout(), 0.2 + after), "{bytes} bytes: {:?}", c.poll_timeout());
        c.on_timeout(c.poll_timeout().unwrap());
        let probe = c.poll_segment(c.poll_timeout().unwrap()).unwrap();
        assert_eq!((probe.seq, probe.retransmission), (seq, true));
        assert_eq!(c.stats.loss_probes, 1);
    }
}

/// The same under Linux 6's rule (`tlp=linux_6`): SRTT 0.2 s, RTO 0.6 s. Two segments out: the
/// probe at 2·SRTT + 2 ms = 0.402 s; one: 2·SRTT + rto_min = 0.6 s, which is the RTO's own
/// time, so the probe takes its place (the sooner of the two).
#[test]
fn linux_6_probes_at_two_srtt_plus_rto_min_with_one_segment_out() {
    let p = TcpParams::parse("tlp=linux_6,timer_hz=0").unwrap();
    for (bytes, after, seq) in [(512usize, 0.402, 257u64), (100, 0.6, 1)] {
        let (mut c, _s) = established(0.2, &p);
        c.write(&vec![1u8; bytes]);
        drain(t(0.2), &mut c);
        assert!(close(c.poll_timeout(), 0.2 + after), "{bytes} bytes: {:?}", c.poll_timeout());
        c.on_timeout(c.poll_timeout().unwrap());
        let probe = c.poll_segment(c.poll_timeout().unwrap()).unwrap();
        assert_eq!((probe.seq, probe.retransmission, c.stats.loss_probes), (seq, true, 1));
    }
}

/// When a duplicate ACK sets the timers (`tcp_ack`). Linux 4.9 schedules a probe at every ACK
/// that finds the RTO pending; from 4.13 (`tlp=linux_6`) only an ACK that acknowledges data sets
/// the probe or RTO timer again (FLAG_SET_XMIT_TIMER). SRTT 0.2 s, RTO 0.6 s; request A (seq
/// 1..101) at 0.2 s, its probe, the server's ACK of A at 1.0 s (no RTT sample: A went twice; the
/// probe's episode stays open, its D-SACK not yet in), request B (101..201) at 1.0 s. B's probe
/// timer finds the episode open and only sets the RTO: 4.9 probes at max(2·0.2, 1.5·0.2 + 0.2) =
/// 0.5 s, so A's probe at 0.7 s and B's timer at 1.5 s, the RTO then at B's 1.0 + 0.6 = 1.6 s; 6
/// probes at min(2·0.2 + 0.2, RTO 0.6) = 0.6 s, so at 0.8 and 1.6 s, the RTO then 0.6 s on, 2.2 s.
/// A's D-SACK then ends the episode (1.55 s; 1.7 s): 4.9 schedules B's probe, at the RTO's 1.6 s;
/// 6 leaves the RTO, which expires at 2.2 s.
#[test]
fn a_duplicate_ack_reschedules_the_probe_only_before_linux_4_13() {
    for (spec, probe_a, blocked, rto_at, dsack_at, probes, timeouts) in
        [("tlp=linux_4_9,timer_hz=0", 0.7, 1.5, 1.6, 1.55, 2, 0), ("tlp=linux_6,timer_hz=0", 0.8, 1.6, 2.2, 1.7, 1, 1)]
    {
        let (mut c, _s) = established(0.2, &TcpParams::parse(spec).unwrap());
        assert!((c.rto() - 0.6).abs() < 1e-9);
        c.write(&[1u8; 100]);
        drain(t(0.2), &mut c);
        assert!(close(c.poll_timeout(), probe_a), "{spec}: A's probe at {:?}", c.poll_timeout());
        c.on_timeout(t(probe_a));
        assert_eq!(data(&drain(t(probe_a), &mut c)).len(), 1, "{spec}: A's probe");
        c.on_segment(t(1.0), &Segment { flags: ACK, seq: 1, ack: 101, ..Segment::default() });
        c.write(&[2u8; 100]);
        drain(t(1.0), &mut c);
        assert!(close(c.poll_timeout(), blocked), "{spec}: B's probe timer at {:?}", c.poll_timeout());
        c.on_timeout(t(blocked));
        assert!(data(&drain(t(blocked), &mut c)).is_empty(), "{spec}: A's episode is open, no probe");
        assert!(close(c.poll_timeout(), rto_at), "{spec}: B's RTO at {:?}", c.poll_timeout());
        let mut dsack = Segment { flags: ACK, seq: 1, ack: 101, ..Segment::default() };
        dsack.sack.push(1, 101);
        c.on_segment(t(dsack_at), &dsack);
        assert!(close(c.poll_timeout(), rto_at), "{spec}: the timer after the D-SACK at {:?}", c.poll_timeout());
        c.on_timeout(t(rto_at));
        let again = drain(t(rto_at), &mut c);
        assert_eq!(data(&again).iter().map(|s| s.seq).collect::<Vec<_>>(), [101], "{spec}: B again");
        assert_eq!((c.stats.loss_probes, c.stats.timeouts), (probes, timeouts), "{spec}");
    }
}

/// Linux's timer wheel at HZ = 250 (4-ms ticks): a timer due `d` ticks ahead runs at the next
/// boundary of its level's buckets (level 0 below 63 ticks, 1 below 504, 2 below 4032, 3 below
/// 32256; buckets of 1, 8, 64 and 512 ticks), counted from tick 0.
#[test]
fn the_timer_wheel_runs_a_timer_at_its_buckets_boundary() {
    let w = |now: f64, at: f64| conn::wheel_bucket(t(now), t(at), 250).as_nanos() as f64 / 1e9;
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // 100 ms = 25 ticks, level 0: one tick late, 26 ticks
    assert!(near(w(0.0, 0.1), 0.104));
    // 1 s = 250 ticks, level 1: ((250 >> 3) + 1) << 3 = 256 ticks
    assert!(near(w(0.0, 1.0), 1.024));
    // 3 s = 750 ticks, level 2: ((750 >> 6) + 1) << 6 = 768 ticks
    assert!(near(w(0.0, 3.0), 3.072));
    // 60 s = 15,000 ticks, level 3: ((15000 >> 9) + 1) << 9 = 15,360 ticks
    assert!(near(w(0.0, 60.0), 61.44));
    // armed at 10.001 s (tick 2500) and at 10.040 s (tick 2510), each 3 s ahead: due at ticks
    // 3250 and 3260, both in the bucket that ends at ((3250 >> 6) + 1) << 6 = 3264: together
    assert!(near(w(10.001, 13.001), 13.056) && near(w(10.040, 13.040), 13.056));
    // a connection's loss probe: SRTT 0.2 s, 4.9's probe at 0.5 s, armed at 0.2 s (tick 50):
    // due at tick 175, 125 ticks ahead, level 1: ((175 >> 3) + 1) << 3 = 176 ticks, 0.704 s
    let (mut c, _s) = established(0.2, &TcpParams::default());
    c.write(&[1u8; 100]);
    drain(t(0.2), &mut c);
    assert!(close(c.poll_timeout(), 0.704), "{:?}", c.poll_timeout());
    assert!(c.poll_segment(t(0.703)).is_none());
    c.on_timeout(t(0.700));
    assert_eq!(c.stats.loss_probes, 0, "not before its bucket's boundary");
    c.on_timeout(t(0.704));
    assert_eq!(c.stats.loss_probes, 1);
}

#[test]
fn a_lost_syn_is_retried_after_the_initial_rto_and_leaves_3_s() {
    let p = exact();
    let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p));
    let _lost = c.poll_segment(t(0.0)).unwrap();
    assert_eq!(c.poll_timeout(), Some(t(1.0))); // Linux's initial RTO
    c.on_timeout(t(1.0));
    let syn = c.poll_segment(t(1.0)).unwrap();
    assert_eq!((syn.flags, syn.retransmission), (SYN, true));
    assert_eq!(c.poll_timeout(), Some(t(3.0))); // doubled
    s.on_segment(t(1.3), &syn);
    pump(t(1.6), &mut s, &mut c);
    assert!(c.is_established());
    assert_eq!(c.rto(), 3.0, "no sample from a retransmitted SYN: Linux's 3 s fallback");
}

/// A repeated SYN at the server (Linux's `tcp_check_req`, in 4.9 as in 6.x): answered at once
/// unless a repeated SYN was answered less than 500 ms before (`tcp_invalid_ratelimit`), and
/// the request's timer starts again from the answer with its current timeout (TCP_TIMEOUT_INIT
/// << expiries). SYN at 0: SYN/ACK, timer at 1 s. Again at 0.8 s: SYN/ACK, timer at 1.8 s. Again
/// at 1.1 s (0.3 s after the last answer): nothing. At 1.8 s the timer: SYN/ACK, timeout 2 s,
/// next at 3.8 s. Again at 2.0 s (1.2 s after the last answer): SYN/ACK, timer at 4.0 s.
#[test]
fn a_repeated_syn_is_answered_at_once_and_restarts_the_request_timer() {
    let mut s = Tcp::listen(exact());
    let syn = Segment { flags: SYN, ..Segment::default() };
    let mut answers = Vec::new();
    // (time, a SYN arrives (else the timer runs), the timer afterwards)
    for (at, arrives, timer) in
        [(0.0, true, 1.0), (0.8, true, 1.8), (1.1, true, 1.8), (1.8, false, 3.8), (2.0, true, 4.0)]
    {
        if arrives {
            s.on_segment(t(at), &syn);
        } else {
            assert!(close(s.poll_timeout(), at));
            s.on_timeout(t(at));
        }
        for seg in drain(t(at), &mut s) {
            assert_eq!(seg.flags, SYN | ACK);
            answers.push(at);
        }
        assert!(close(s.poll_timeout(), timer), "after {at} s: {:?}", s.poll_timeout());
    }
    assert_eq!(answers, vec![0.0, 0.8, 1.8, 2.0]);
}

/// A client whose SYNs nobody answers, until it gives up: the SYNs' send times and the time it
/// gave up.
fn syns_until_it_gives_up(p: TcpParams) -> (Tcp, Vec<Instant>, Instant) {
    let mut c = Tcp::connect(p);
    let mut now = t(0.0);
    let mut sent = Vec::new();
    while !c.has_failed() {
        if let Some(s) = c.poll_segment(now) {
            sent.push(now);
            assert_eq!(s.flags, SYN);
        }
        now = c.poll_timeout().unwrap();
        c.on_timeout(now);
    }
    (c, sent, now)
}

/// SYN retries 2 with an initial RTO of 2 s: SYNs at 0, 2 and 6 s; at 14 s Linux's limit,
/// (2^3 − 1)·2 s = 14 s after the first SYN, is reached — and the count (2 retries) too.
#[test]
fn syn_retries_run_out() {
    for by_time in [true, false] {
        let p = TcpParams { syn_retries: 2, retries_by_time: by_time, initial_rto: 2.0, ..exact() };
        let (mut c, sent, now) = syns_until_it_gives_up(p);
        assert_eq!(sent, vec![t(0.0), t(2.0), t(6.0)]);
        assert_eq!(now, t(14.0));
        assert!(c.poll_segment(now).is_none());
    }
}

/// Linux 6.5's `tcp_syn_linear_timeouts` = 4, SYN retries 2, initial RTO 1 s, no answer. The
/// k-th retransmission counts `total_rto` = k and backs the RTO off only when k > 4: SYNs at 0,
/// 1, 2, 3, 4 and 5 s (the first four retransmissions keep 1 s), the fifth leaves the RTO 2 s,
/// the sixth — the last, 2 + 4 retries — goes at 7 s and doubles it to 4 s; at 11 s the count
/// is out. Without linear timeouts the same retries run 0, 1, 3 s and end at 7 s (2^3 − 1).
#[test]
fn linux_6_5_retries_a_syn_at_the_initial_rto_four_times() {
    for (linear, sends, end) in [(4, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0], 11.0), (0, vec![0.0, 1.0, 3.0], 7.0)] {
        let p = TcpParams { syn_retries: 2, syn_linear_timeouts: linear, ..exact() };
        let (_, sent, now) = syns_until_it_gives_up(p);
        assert_eq!(sent, sends.into_iter().map(t).collect::<Vec<_>>(), "linear {linear}");
        assert_eq!(now, t(end), "linear {linear}");
    }
}

/// retries2 = 3, RTO 3 s (SYN RTT 1 s), data lost for good. Linux turns the count into a time
/// from 200 ms: (2^4 − 1)·0.2 = 3 s after the first retransmission (at 4 s), so the expiry at
/// 10 s ends it; counting, the fourth expiry does: 4, 10, 22, 46 s.
#[test]
fn retries2_by_time_and_by_count() {
    for (by_time, end) in [(true, 10.0), (false, 46.0)] {
        let p = TcpParams { retries2: 3, retries_by_time: by_time, early_retrans: 0, ..exact() };
        let (mut c, _s) = established(1.0, &p);
        c.write(b"x");
        drain(t(1.0), &mut c);
        let mut now = t(1.0);
        while !c.has_failed() {
            now = c.poll_timeout().unwrap();
            c.on_timeout(now);
            drain(now, &mut c);
        }
        assert_eq!(now, t(end), "by time: {by_time}");
        assert!(c.poll_timeout().is_none());
    }
}

/// Five segments, the first lost; each later one brings a duplicate ACK (with SACK, a SACK
/// block). NewReno counts three duplicates, FACK sees four segments up to the highest SACKed
/// one (> reordering 3): both retransmit at the third, not before; ssthresh = 10/2 = 5.
#[test]
fn three_duplicate_acks_trigger_fast_retransmit() {
    for sack in [false, true] {
        let p = TcpParams { sack, early_retrans: 0, ..exact() };
        let (mut c, mut s) = established(0.1, &p);
        c.write(&[7u8; 256 * 5]);
        let out = drain(t(0.1), &mut c);
        let segs: Vec<Segment> = data(&out).into_iter().cloned().collect();
        assert_eq!(segs.len(), 5);
        s.on_segment(t(0.2), &out[0]); // the handshake ACK
        let mut dupacks = Vec::new();
        for seg in &segs[1..] {
            s.on_segment(t(0.2), seg);
            dupacks.push(s.poll_segment(t(0.2)).unwrap());
        }
        assert!(dupacks.iter().all(|a| a.ack == 1));
        assert_eq!(dupacks[0].sack.as_slice().is_empty(), !sack);
        let mut rexmit = None;
        for (i, a) in dupacks[..3].iter().enumerate() {
            c.on_segment(t(0.3), a);
            let r = c.poll_segment(t(0.3));
            if i < 2 {
                assert!(r.is_none(), "sack {sack}: nothing after duplicate {}", i + 1);
            } else {
                rexmit = r;
            }
        }
        let rexmit = rexmit.expect("a fast retransmission at the third");
        assert_eq!((rexmit.seq, rexmit.retransmission), (1, true));
        assert_eq!(c.ssthresh(), 5);
        s.on_segment(t(0.4), &rexmit);
        assert_eq!(s.read().len(), 256 * 5, "the hole filled, everything delivered");
    }
}

/// Early retransmit: two segments out (SRTT 1 s), the first lost, one SACK. Linux's mode 3
/// waits SRTT/4 = 0.25 s, then retransmits; without it nothing happens before the RTO at
/// 1 + 3 = 4 s.
#[test]
fn early_retransmit_after_a_quarter_srtt() {
    for er in [3, 0] {
        let p = TcpParams { early_retrans: er, ..exact() };
        let (mut c, mut s) = established(1.0, &p);
        c.write(&[1u8; 512]);
        let out = drain(t(1.0), &mut c);
        s.on_segment(t(1.5), &out[0]);
        s.on_segment(t(1.5), data(&out)[1]);
        let dupack = s.poll_segment(t(1.5)).unwrap();
        assert_eq!(dupack.sack.as_slice(), &[(257, 513)]);
        c.on_segment(t(2.0), &dupack);
        assert!(c.poll_segment(t(2.0)).is_none());
        if er == 3 {
            assert_eq!(c.poll_timeout(), Some(t(2.25)));
            c.on_timeout(t(2.25));
            let r = c.poll_segment(t(2.25)).unwrap();
            assert_eq!((r.seq, r.retransmission), (1, true));
        } else {
            assert_eq!(c.poll_timeout(), Some(t(4.0)));
        }
    }
}

/// F-RTO (SRTT 1 s, RTO 3 s; loss probes off to isolate it): segments A, B, C sent at 1 s;
/// their ACKs are only late. The RTO at 4 s retransmits A alone (window 1). More data is
/// written. A's late ACK (4.1 s) moves the window to 2: F-RTO sends two new segments instead
/// of retransmitting B and C; B's late ACK (4.2 s) acknowledges data never retransmitted: the
/// timeout was spurious, undone (cwnd back to 2·ssthresh = 10), C is never sent again. Without
/// F-RTO the first ACK retransmits B and C.
#[test]
fn frto_undoes_a_spurious_timeout() {
    for frto in [true, false] {
        let p = TcpParams { frto, early_retrans: 0, ..exact() };
        let (mut c, _s) = established(1.0, &p);
        c.write(&[1u8; 3 * 256]);
        assert_eq!(data(&drain(t(1.0), &mut c)).len(), 3);
        c.on_timeout(t(4.0));
        let r = drain(t(4.0), &mut c);
        assert_eq!(r.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1]);
        assert_eq!(c.cwnd(), 1);
        c.write(&[2u8; 2 * 256]);
        assert!(c.poll_segment(t(4.0)).is_none(), "the window holds the new data back");
        c.on_segment(t(4.1), &Segment { flags: ACK, seq: 1, ack: 257, ..Segment::default() });
        let next: Vec<(u64, bool)> = drain(t(4.1), &mut c).iter().map(|s| (s.seq, s.retransmission)).collect();
        if frto {
            assert_eq!(next, vec![(769, false), (1025, false)]);
        } else {
            assert_eq!(next, vec![(257, true), (513, true)]);
        }
        c.on_segment(t(4.2), &Segment { flags: ACK, seq: 1, ack: 513, ..Segment::default() });
        assert!(drain(t(4.2), &mut c).iter().all(|s| !s.retransmission));
        if frto {
            assert_eq!((c.stats.spurious_rtos, c.stats.retransmissions, c.cwnd()), (1, 1, 10));
        } else {
            assert_eq!((c.stats.spurious_rtos, c.stats.retransmissions), (0, 3));
        }
    }
}

/// RACK (SRTT 1 s; loss probes off): segments A–F sent at 1 s, A lost. The third SACK (D, 2 s)
/// starts recovery and A is retransmitted (A'), which is lost too. G, written after, goes out at
/// 2.1 s when E's SACK makes room (PRR: window 3, 2 in flight). When G is SACKed (3.1 s), it was
/// sent 100 ms (> 1 ms) after A': RACK marks A' lost and A goes a third time. Without RACK, A'
/// counts as in flight until the RTO.
#[test]
fn rack_finds_a_lost_retransmission() {
    for rack in [true, false] {
        let p = TcpParams { rack, early_retrans: 0, ..exact() };
        let (mut c, mut s) = established(1.0, &p);
        c.write(&[1u8; 6 * 256]);
        let out = drain(t(1.0), &mut c);
        s.on_segment(t(1.5), &out[0]);
        let mut acks = Vec::new();
        for seg in &data(&out)[1..] {
            s.on_segment(t(1.5), seg);
            acks.push(s.poll_segment(t(1.5)).unwrap());
        }
        for a in &acks[..3] {
            c.on_segment(t(2.0), a);
        }
        let a1 = drain(t(2.0), &mut c);
        assert_eq!(a1.iter().map(|s| (s.seq, s.retransmission)).collect::<Vec<_>>(), vec![(1, true)]);
        c.write(&[2u8; 256]);
        assert!(c.poll_segment(t(2.05)).is_none());
        c.on_segment(t(2.1), &acks[3]);
        let g = drain(t(2.1), &mut c);
        assert_eq!(g.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1537]);
        c.on_segment(t(2.1), &acks[4]);
        assert!(drain(t(2.1), &mut c).is_empty());
        s.on_segment(t(2.6), &g[0]);
        let gack = s.poll_segment(t(2.6)).unwrap();
        assert_eq!(gack.sack.as_slice(), &[(257, 1793)], "B–G in one block");
        c.on_segment(t(3.1), &gack);
        let again = drain(t(3.1), &mut c);
        if rack {
            assert_eq!(again.iter().map(|s| (s.seq, s.retransmission)).collect::<Vec<_>>(), vec![(1, true)]);
        } else {
            assert!(again.is_empty());
        }
    }
}

/// Slow start after idle: initial window 2 grows to 4 while it limits the sender; after an idle
/// period of more than two RTOs the next send halves it back to min(initial, current) = 2.
#[test]
fn slow_start_after_idle_restarts_the_window() {
    for ssai in [true, false] {
        let p = TcpParams { init_cwnd: 2, slow_start_after_idle: ssai, early_retrans: 0, ..exact() };
        let (mut c, mut s) = established(0.1, &p);
        c.write(&[1u8; 4 * 256]);
        for _ in 0..4 {
            pump(t(0.1), &mut c, &mut s);
            pump(t(0.1), &mut s, &mut c);
        }
        assert_eq!(s.read().len(), 4 * 256);
        assert!(c.all_acked());
        assert_eq!(c.cwnd(), 4);
        assert!(c.rto() < 4.0);
        c.write(&[1u8; 10]);
        drain(t(10.0), &mut c);
        assert_eq!(c.cwnd(), if ssai { 2 } else { 4 });
    }
}

/// An orphan's FIN into silence (SYN RTT 0.1 s, RTO 0.3 s): a loss probe at 0.4 s (the RTO's
/// time: 0.35 s would come later), the first RTO at 0.7 s, then RTOs 0.6, 1.2, … s apart.
/// Linux gives an orphan 8 retries — 511·0.2 = 102.2 s after the first retransmission — so
/// the expiry 153.0 s after it (at 153.7 s) ends it; without the orphan rule, retries2 (15):
/// 924.6 s, reached at the expiry 993.0 s after it (RTOs capped at 120 s), at 993.7 s.
#[test]
fn an_orphans_fin_gives_up_sooner() {
    for (linux_close, end) in [(true, 153.7), (false, 993.7)] {
        let p = TcpParams { linux_close, ..exact() };
        let (mut c, _s) = established(0.1, &p);
        c.close();
        let fin = drain(t(0.1), &mut c);
        assert!(fin.iter().any(|s| s.flags & FIN != 0));
        assert_eq!(c.poll_timeout(), Some(t(0.4)));
        let mut now = t(0.1);
        while !c.has_failed() {
            now = c.poll_timeout().unwrap();
            c.on_timeout(now);
            drain(now, &mut c);
        }
        assert!(close(Some(now), end), "linux_close {linux_close}: {now:?}");
        assert_eq!(c.stats.loss_probes, 1);
    }
}

/// Both close; the side that closed first waits in TIME_WAIT (Linux 60 s, textbook 2·MSL =
/// 240 s), then answers with a reset.
#[test]
fn time_wait_then_reset() {
    for (linux_close, wait) in [(true, 60.0), (false, 240.0)] {
        let p = TcpParams { linux_close, ..exact() };
        let (mut c, mut s) = established(0.1, &p);
        c.close();
        pump(t(0.2), &mut c, &mut s);
        assert!(s.peer_closed());
        s.close();
        let fin = pump(t(0.3), &mut s, &mut c);
        assert!(fin.iter().any(|x| x.flags & FIN != 0 && x.ack == 2), "the FIN carries the ACK");
        pump(t(0.3), &mut c, &mut s);
        assert!(c.all_acked() && s.all_acked());
        assert!(close(c.poll_timeout(), 0.3 + wait));
        c.on_timeout(t(0.3 + wait));
        c.on_segment(t(0.3 + wait), &Segment { flags: ACK, seq: 2, ack: 2, ..Segment::default() });
        assert_eq!(c.poll_segment(t(0.3 + wait)).map(|r| r.flags), Some(RST));
    }
}

#[test]
fn spurious_data_is_counted_and_dsacked() {
    let (mut c, mut s) = established(0.1, &exact());
    c.write(b"last");
    let out = pump(t(0.1), &mut c, &mut s);
    let d = data(&out)[0].clone();
    drain(t(0.1), &mut s);
    s.on_segment(t(0.2), &d); // the same segment again: spurious
    assert_eq!(s.stats.spurious_received, 1);
    let ack = s.poll_segment(t(0.2)).unwrap();
    assert_eq!(ack.sack.as_slice(), &[(1, 5)], "a D-SACK for it");
}

#[test]
fn a_host_without_the_connection_resets_it() {
    let p = exact();
    let (mut c, _s) = established(0.5, &p);
    let mut fresh = Tcp::listen(p);
    c.write(b"csm");
    let out = pump(t(0.5), &mut c, &mut fresh);
    assert!(out.iter().any(|x| !x.payload.is_empty()));
    let rst = fresh.poll_segment(t(0.6)).unwrap();
    assert_eq!(rst.flags, RST);
    c.on_segment(t(1.0), &rst);
    assert!(c.has_failed());
    assert!(c.poll_timeout().is_none());
}
