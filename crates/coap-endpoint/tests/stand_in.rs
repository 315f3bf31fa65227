//! The endpoint against `coap_cc::testing`'s stand-in controller: which calls the messaging
//! layer makes, when, and with what, independent of any algorithm's randomness. Every expected
//! time is worked out by hand from the stand-in's rule (RTO 1 s, doubled per retransmission,
//! two retransmissions) and the harness's 0.1 s each way.

mod harness;

use coap_cc::testing::{stand_in, Call};
use coap_cc::{CcConfig, Duration, Sample, Start};
use coap_endpoint::{Config, Event, FailReason, Outcome, Request};
use coap_wire::Code;
use harness::*;

fn pair(seed: u64) -> (Pair, coap_cc::testing::Probe) {
    let (cc, probe) = stand_in(Duration::from_secs(1), 2.0, 2);
    let p = Pair::with(Config::new(cc), Config::new(CcConfig::parse("default").unwrap()), false, seed);
    (p, probe)
}

const CON: Start = Start { outstanding: 0, confirmable: true };

#[test]
fn retransmissions_go_when_the_controller_says_and_the_sample_is_ambiguous() {
    let (mut p, probe) = pair(1);
    p.drop = Box::new(|from, i, _| from == C && i < 2); // the first two requests are lost
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    // sent at 0, 0 + 1, 1 + 2; the third arrives at 3.1 and its response at 3.2
    let sent: Vec<f64> = p.sent_by(C).iter().map(|(at, _)| *at).collect();
    assert_eq!(sent, [0.0, 1.0, 3.0]);
    assert_eq!(
        probe.calls(),
        [
            Call::Start { at: t(0.0), start: CON },
            Call::Timeout { at: t(1.0), retransmissions: 1, gave_up: false },
            Call::Timeout { at: t(3.0), retransmissions: 2, gave_up: false },
            // no marking: after retransmissions the sample runs from the original
            Call::Complete {
                at: t(3.2),
                sample: Sample::Ambiguous { rtt: Duration::from_millis(3200), retransmissions: 2 },
            },
        ]
    );
    assert_eq!(p.reports()[0].outcome, Outcome::Response(Code::CONTENT));
}

#[test]
fn the_exchange_fails_when_the_last_timer_expires() {
    let (mut p, probe) = pair(2);
    p.drop = Box::new(|from, _, _| from == C);
    let id = p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    // timers 1, 2, 4 s: sent at 0, 1, 3; the last timer expires at 7
    let sent: Vec<f64> = p.sent_by(C).iter().map(|(at, _)| *at).collect();
    assert_eq!(sent, [0.0, 1.0, 3.0]);
    assert_eq!(
        probe.calls()[1..],
        [
            Call::Timeout { at: t(1.0), retransmissions: 1, gave_up: false },
            Call::Timeout { at: t(3.0), retransmissions: 2, gave_up: false },
            Call::Timeout { at: t(7.0), retransmissions: 2, gave_up: true },
            Call::Failure { at: t(7.0), retransmissions: 2 },
        ]
    );
    assert!(p.events.contains(&Event::Failed { id, reason: FailReason::Timeout }));
}

#[test]
fn a_clean_exchange_gives_one_unambiguous_sample() {
    let (mut p, probe) = pair(3);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(10.0);
    assert_eq!(
        probe.calls(),
        [
            Call::Start { at: t(0.0), start: CON },
            Call::Complete {
                at: t(0.2),
                sample: Sample::Unambiguous { rtt: Duration::from_millis(200), retransmitted: false },
            },
        ]
    );
}
