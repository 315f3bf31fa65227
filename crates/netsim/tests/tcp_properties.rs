//! The TCP model under a hostile channel: random loss, duplication and delay (so also
//! reordering) of segments in both directions. Whatever the channel does, the bytes each side
//! wrote arrive at the other intact and in order, and the exchange ends (no endless timers).

use coap_cc::{Duration, Instant};
use netsim::tcp::{Segment, Tcp, TcpParams};
use proptest::prelude::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs a transfer: `a` writes `up`, `b` writes `down`, both close; returns what each received.
fn transfer(up: &[u8], down: &[u8], loss: u32, dup: u32, seed: u64, p: TcpParams) -> (Vec<u8>, Vec<u8>, bool) {
    let p = TcpParams { retries2: 1000, syn_retries: 1000, orphan_retries: 1000, ..p };
    let mut a = Tcp::connect(p.clone());
    let mut b = Tcp::listen(p);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut in_flight: Vec<(Instant, bool, Segment)> = Vec::new(); // (arrival, to_b, segment)
    let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
    let mut now = Instant::ZERO;
    let (mut wrote, mut wrote_b) = (false, false);
    for _ in 0..200_000 {
        if !wrote && a.is_established() {
            a.write(up);
            a.shutdown(); // a half close: it still reads the answer
            wrote = true;
        }
        // the server answers once it has read everything, then closes
        if !wrote_b && b.is_established() && b.peer_closed() && got_b.len() == up.len() {
            b.write(down);
            b.close();
            wrote_b = true;
        }
        for (side, to_b) in [(&mut a, true), (&mut b, false)] {
            while let Some(seg) = side.poll_segment(now) {
                let roll = rng.next_u32() % 100;
                if roll < loss {
                    continue;
                }
                let copies = if roll >= 100 - dup { 2 } else { 1 };
                for _ in 0..copies {
                    let delay = Duration::from_millis(50 + (rng.next_u32() % 300) as u64);
                    in_flight.push((now + delay, to_b, seg.clone()));
                }
            }
        }
        got_a.extend(a.read());
        got_b.extend(b.read());
        let next_packet = in_flight.iter().map(|x| x.0).min();
        let next = [next_packet, a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        let Some(next) = next else { break };
        now = now.max(next);
        let (due, rest): (Vec<_>, Vec<_>) = in_flight.into_iter().partition(|x| x.0 <= now);
        in_flight = rest;
        for (_, to_b, seg) in due {
            if to_b {
                b.on_segment(now, &seg);
            } else {
                a.on_segment(now, &seg);
            }
        }
        if a.poll_timeout().is_some_and(|t| t <= now) {
            a.on_timeout(now);
        }
        if b.poll_timeout().is_some_and(|t| t <= now) {
            b.on_timeout(now);
        }
    }
    got_a.extend(a.read());
    got_b.extend(b.read());
    let quiet = a.poll_timeout().is_none() && in_flight.is_empty();
    (got_a, got_b, quiet)
}

/// Linux's TCP (the defaults), or every Linux mechanism switched to the textbook's.
fn params(linux: bool) -> TcpParams {
    if linux {
        return TcpParams::default();
    }
    TcpParams::parse(
        "rto=rfc6298,sack=false,frto=false,early_retrans=0,rack=false,slow_start_after_idle=false,\
         quickack=false,retries_by_time=false,linux_close=false",
    )
    .expect("valid")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bytes_arrive_intact_and_in_order(
        up in proptest::collection::vec(any::<u8>(), 1..3000),
        down in proptest::collection::vec(any::<u8>(), 0..3000),
        loss in 0u32..30,
        dup in 0u32..20,
        seed in any::<u64>(),
        linux in any::<bool>(),
    ) {
        let (got_a, got_b, quiet) = transfer(&up, &down, loss, dup, seed, params(linux));
        // compare lengths and contents without printing megabytes on failure
        prop_assert!(got_b == up, "client → server stream: {} bytes received of {}", got_b.len(), up.len());
        prop_assert!(got_a == down, "server → client stream: {} bytes received of {}", got_a.len(), down.len());
        prop_assert!(quiet, "the sender's timers stop once everything is acknowledged");
    }
}

#[test]
fn clean_channel_needs_no_retransmission() {
    let up = vec![7u8; 5000];
    for linux in [true, false] {
        let (_, got_b, quiet) = transfer(&up, &[], 0, 0, 1, params(linux));
        assert_eq!(got_b, up);
        assert!(quiet);
    }
}
