//! CoCoA's tests: the draft's rules worked by hand.

use super::*;
use crate::controller::Echo;
use crate::testutil::*;

fn ctl(family: Family) -> Cocoa {
    Cocoa::new("cocoa", CocoaParams { max_retransmit: 20, aging: false, ..CocoaParams::default() }, family)
}

#[test]
fn vbf_thresholds_exactly_at_1_and_3() {
    assert_eq!(vbf(0.999, 3.0, 1.5), 3.0);
    assert_eq!(vbf(1.0, 3.0, 1.5), 2.0);
    assert_eq!(vbf(3.0, 3.0, 1.5), 2.0);
    assert_eq!(vbf(3.001, 3.0, 1.5), 1.5);
    assert_eq!(vbf(3.001, 3.0, 1.3), 1.3);
}

#[test]
fn backoff_truncated_at_32() {
    assert_eq!(step(10.0, 2.0, 32.0), 20.0);
    assert_eq!(step(20.0, 2.0, 32.0), 32.0); // 40 would exceed the limit
    assert_eq!(step(32.0, 1.5, 32.0), 32.0);
    assert_eq!(step(40.0, 1.5, 32.0), 40.0); // already above: stays
}

#[test]
fn first_exchange_dither_and_vbf_once() {
    let mut c = ctl(Family::COCOA);
    let mut r = rng(11);
    let mut ex = c.start(t(0.0), CON, &mut r);
    let r0 = ex.armed;
    assert!((2.0..3.0).contains(&r0)); // [RTO, 1.5 RTO] with RTO = 2
                                       // initial in 1..3 → VBF 2 for every step: r0·2, r0·4, r0·8 (16..24), then ≤ 32 truncation
    let mut timers = vec![];
    for _ in 0..5 {
        timers.push(c.on_timeout(t(0.0), &mut ex, &mut r).unwrap().as_secs_f64());
    }
    assert_close(timers[0], 2.0 * r0);
    assert_close(timers[1], 4.0 * r0);
    assert_close(timers[2], 8.0 * r0);
    assert_close(timers[3], 32.0); // 16·r0 ≥ 32
    assert_close(timers[4], 32.0);
}

#[test]
fn strong_and_weak_weights() {
    let mut c = ctl(Family::COCOA);
    let mut r = rng(12);
    // strong sample 1.0: E_strong = 1 + 4·0.5 = 3; RTO = 0.5·3 + 0.5·2 = 2.5
    let ex = c.start(t(0.0), CON, &mut r);
    c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
    assert_close(c.rto, 2.5);
    // weak sample (1 retransmission) of 4.0: E_weak = 4 + 1·2 = 6; RTO = 0.25·6 + 0.75·2.5 = 3.375
    let ex = c.start(t(10.0), CON, &mut r);
    c.on_complete(t(14.0), &ex, &done(&[t(10.0), t(12.0)]));
    assert_close(c.rto, 3.375);
    // 3 retransmissions: no sample, RTO unchanged
    let ex = c.start(t(20.0), CON, &mut r);
    c.on_complete(t(30.0), &ex, &done(&[t(20.0), t(22.0), t(24.0), t(28.0)]));
    assert_close(c.rto, 3.375);
    // second weak sample 2.0: RTTVAR = 0.75·2 + 0.25·|4-2| = 2; SRTT = 3.5 + 0.25 = 3.75;
    // E_weak = 3.75 + 2 = 5.75; RTO = 0.25·5.75 + 0.75·3.375 = 3.96875
    let ex = c.start(t(40.0), CON, &mut r);
    c.on_complete(t(42.0), &ex, &done(&[t(40.0), t(41.0), t(41.5)]));
    assert_close(c.rto, 3.96875);
    // the next exchange starts in [RTO, 1.5·RTO]; RTO > 3 → VBF 1.5
    let ex = c.start(t(50.0), CON, &mut r);
    assert!(ex.armed >= 3.96875 && ex.armed < 3.96875 * 1.5);
    assert_eq!(ex.state::<CocoaTimer>().vbf, 1.5);
}

/// Betzler's Contiki readings, all set.
fn betzler() -> Cocoa {
    let p = CocoaParams {
        aging: false,
        vbf_low: 2.5,
        vbf_from: VbfFrom::Overall,
        weights: Weights::Inverted,
        weak_max_retransmissions: 4,
        strong_reset_after: 3,
        blind_max: 32.0,
        ..CocoaParams::default()
    };
    Cocoa::new("cocoa", p, Family::COCOA)
}

#[test]
fn betzler_vbf_low_and_inverted_weights() {
    assert_eq!(vbf(0.999, 2.5, 1.5), 2.5);
    assert_eq!(vbf(1.0, 2.5, 1.5), 2.0);
    let mut c = betzler();
    let mut r = rng(21);
    // strong sample 1.0: E = 1 + 4·0.5 = 3; weight 1 − 0.5 = 0.5: RTO = 0.5·3 + 0.5·2 = 2.5
    let ex = c.start(t(0.0), CON, &mut r);
    c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
    assert_close(c.rto, 2.5);
    // weak sample 4.0 (1 retransmission): E_weak = 4 + 1·2 = 6; 0.75·6 + 0.25·2.5 = 5.125
    let ex = c.start(t(10.0), CON, &mut r);
    c.on_complete(t(14.0), &ex, &done(&[t(10.0), t(12.0)]));
    assert_close(c.rto, 5.125);
    // 3 retransmissions still feed the weak estimator: RTTVAR = 0.75·2 + 0.25·|4 − 8| = 2.5,
    // SRTT = 0.875·4 + 0.125·8 = 4.5, E_weak = 7; RTO = 0.75·7 + 0.25·5.125 = 6.53125
    let ex = c.start(t(20.0), CON, &mut r);
    c.on_complete(t(28.0), &ex, &done(&[t(20.0), t(22.0), t(24.0), t(26.0)]));
    assert_close(c.rto, 6.53125);
}

#[test]
fn betzler_strong_reset_after_more_than_3_retransmissions() {
    let mut c = betzler();
    let mut r = rng(22);
    let ex = c.start(t(0.0), CON, &mut r);
    c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
    assert_eq!(c.strong.srtt(), Some(1.0));
    // 2 + 2 = 4 retransmissions accumulated > 3: the strong estimator starts over
    for start in [10.0, 20.0] {
        let ex = c.start(t(start), CON, &mut r);
        c.on_complete(t(start + 3.0), &ex, &done(&[t(start), t(start + 1.0), t(start + 2.0)]));
        let expect = if start == 10.0 { Some(1.0) } else { None };
        assert_eq!(c.strong.srtt(), expect, "after the exchange at {start}");
    }
    // so a sample of 0.2 initialises it (without the reset: 0.875·1 + 0.125·0.2 = 0.9)
    let ex = c.start(t(30.0), CON, &mut r);
    c.on_complete(t(30.2), &ex, &done(&[t(30.0)]));
    assert_close(c.strong.srtt().unwrap(), 0.2);
    // a strong sample clears the count: 3 more retransmissions do not reset
    let ex = c.start(t(40.0), CON, &mut r);
    c.on_complete(t(44.0), &ex, &done(&[t(40.0), t(41.0), t(42.0), t(43.0)]));
    assert_close(c.strong.srtt().unwrap(), 0.2);
}

#[test]
fn betzler_vbf_from_the_undithered_rto_and_blind_cap() {
    let mut c = betzler();
    let mut r = rng(23);
    let ex = c.start(t(0.0), CON, &mut r);
    c.on_complete(t(0.1), &ex, &done(&[t(0.0)]));
    c.rto = 0.9; // dithered timers fall in [0.9, 1.35): the undithered 0.9 chooses ×2.5
    let mut crossed = false;
    for i in 0..20 {
        let ex = c.start(t(1.0 + i as f64), CON, &mut r);
        crossed |= ex.armed >= 1.0;
        assert_eq!(ex.state::<CocoaTimer>().vbf, 2.5);
    }
    assert!(crossed, "some timer ≥ 1 s would have taken ×2 from the dithered value");
    // blind RTO with ACT 5: 2·2^5 = 64, capped at 32, dithered to [32, 48)
    let p = CocoaParams { nstart: 8, blind: Blind::Exp, blind_max: 32.0, ..CocoaParams::default() };
    let mut c = Cocoa::new("cocoa", p, Family::COCOA);
    let ex = c.start(t(0.0), Start { outstanding: 5, confirmable: true }, &mut r);
    assert!(ex.armed >= 32.0 && ex.armed < 48.0, "{}", ex.armed);
}

/// Betzler's Contiki code stores an RTT for every CON it frees, the one it gives up on too:
/// an exchange first sent at 1 s that gives up at 31 s (4 retransmissions) feeds a weak
/// sample of 30 s: SRTT 30, RTTVAR 15, E_weak = 30 + 1·15 = 45; with the draft's weights the
/// overall RTO becomes 0.25·45 + 0.75·2 = 12.75 s, with Betzler's inverted ones
/// 0.75·45 + 0.25·2 = 34.25 s. Without `weak_sample_on_failure` it stays at 2 s.
#[test]
fn a_failure_feeds_the_weak_estimator_as_betzler_s_code_does() {
    for (weights, on_failure, want) in
        [(Weights::Draft, true, 12.75), (Weights::Inverted, true, 34.25), (Weights::Inverted, false, 2.0)]
    {
        let p = CocoaParams {
            weights,
            weak_sample_on_failure: on_failure,
            weak_max_retransmissions: 4,
            ..CocoaParams::default()
        };
        let mut c = Cocoa::new("cocoa", p, Family::COCOA);
        let mut r = rng(41);
        let mut ex = c.start(t(1.0), CON, &mut r);
        for k in 1..=4 {
            assert!(c.on_timeout(t(1.0 + k as f64), &mut ex, &mut r).is_some());
        }
        c.on_failure(t(31.0), &ex);
        assert_close(c.metrics().rto.as_secs_f64(), want);
    }
    // a weak sample is one with retransmissions: more than weak_max_retransmissions, none
    let p = CocoaParams { weak_sample_on_failure: true, ..CocoaParams::default() };
    let mut c = Cocoa::new("cocoa", p, Family::COCOA);
    let mut r = rng(41);
    let mut ex = c.start(t(1.0), CON, &mut r);
    for k in 1..=4 {
        c.on_timeout(t(1.0 + k as f64), &mut ex, &mut r);
    }
    c.on_failure(t(31.0), &ex);
    assert_close(c.metrics().rto.as_secs_f64(), 2.0);
}

/// `cocoa_strong` (Californium's CocoaStrong): an exchange answered after one
/// retransmission leaves the RTO alone; plain CoCoA feeds its weak estimator: R = 3 s
/// (from the original) gives E_weak = 3 + 1·1.5 = 4.5, RTO = 0.25·4.5 + 0.75·2 = 2.625.
#[test]
fn cocoa_strong_takes_no_weak_sample() {
    let strong = crate::CcConfig::parse("cocoa_strong").unwrap();
    for (mut c, want) in [(strong.build(), 2.0), (crate::CcConfig::parse("cocoa").unwrap().build(), 2.625)] {
        let mut r = rng(31);
        let mut ex = c.start(t(0.0), CON, &mut r);
        c.on_timeout(t(2.5), &mut ex, &mut r);
        c.on_complete(t(3.0), &ex, &done(&[t(0.0), t(2.5)]));
        assert_close(c.metrics().rto.as_secs_f64(), want);
    }
}

/// CLOUD's estimator aging: a strong sample of 4 s at 4 s (SRTT 4, RTTVAR 2: 4 + 4·2 = 12 s);
/// an exchange starting at 125 s, 121 s later, finds two 60-s steps due: SRTT 3, RTTVAR 1
/// (3 + 4 = 7 > 2 s, so again), then SRTT 2.5, RTTVAR 0.5; the third would be due at 184 s.
/// Without the rule the estimator stays as it was.
#[test]
fn cloud_estimator_aging() {
    for (on, want) in [(true, (2.5, 0.5)), (false, (4.0, 2.0))] {
        let p = CocoaParams { aging_estimators: on, ..CocoaParams::default() };
        let mut c = Cocoa::new("cocoa", p, Family::COCOA);
        let mut r = rng(41);
        let ex = c.start(t(0.0), CON, &mut r);
        c.on_complete(t(4.0), &ex, &done(&[t(0.0)]));
        c.start(t(125.0), CON, &mut r);
        assert_close(c.strong.srtt().unwrap(), want.0);
        assert_close(c.strong.rttvar().unwrap(), want.1);
    }
}

#[test]
fn blind_rto_with_nstart() {
    let p = CocoaParams { nstart: 4, blind: Blind::Exp, ..CocoaParams::default() };
    let mut c = Cocoa::new("cocoa4", p, Family::COCOA);
    let mut r = rng(13);
    for (act, base) in [(0usize, 2.0), (1, 4.0), (2, 8.0), (3, 16.0)] {
        let ex = c.start(t(0.0), Start { outstanding: act, confirmable: true }, &mut r);
        assert!(ex.armed >= base && ex.armed < 1.5 * base, "ACT {act}: {}", ex.armed);
    }
    c.p.blind = Blind::Linear;
    let ex = c.start(t(0.0), Start { outstanding: 3, confirmable: true }, &mut r);
    assert!(ex.armed >= 8.0 && ex.armed < 12.0); // 2·(3+1)
}

#[test]
fn aging_rules() {
    let mut c = Cocoa::new("cocoa", CocoaParams::default(), Family::COCOA);
    c.rto = 0.5;
    c.last_update = Some(t(0.0));
    c.age(t(7.9)); // 16·0.5 = 8 s not yet elapsed
    assert_close(c.rto, 0.5);
    c.age(t(8.0));
    assert_close(c.rto, 1.0);
    c.rto = 10.0;
    c.last_update = Some(t(100.0));
    c.age(t(140.0)); // 4·10 = 40 s: RTO = 1 + 10/2 = 6; next needs 24 s more
    assert_close(c.rto, 6.0);
    c.age(t(164.0)); // 1 + 6/2 = 4; then 16 s more
    assert_close(c.rto, 4.0);
    c.age(t(180.0)); // 1 + 4/2 = 3: no longer above 3
    assert_close(c.rto, 3.0);
    c.age(t(10_000.0));
    assert_close(c.rto, 3.0);
}

#[test]
fn fb1_uses_backed_off_timer() {
    let mut c = ctl(Family::FB1);
    let mut r = rng(14);
    let mut ex = c.start(t(0.0), CON, &mut r);
    let r0 = ex.armed;
    c.on_timeout(t(0.0), &mut ex, &mut r);
    c.on_timeout(t(0.0), &mut ex, &mut r); // 4·r0
    c.on_complete(t(20.0), &ex, &done(&[t(0.0), t(1.0), t(2.0)]));
    let next = c.start(t(30.0), CON, &mut r);
    assert_close(next.armed, 4.0 * r0);
}

#[test]
fn fb2_backs_off_the_larger_estimate() {
    let mut c = ctl(Family::FB2);
    let mut r = rng(15);
    let mut ex = c.start(t(0.0), CON, &mut r); // VBF 2
    c.on_timeout(t(0.0), &mut ex, &mut r);
    // one retransmission, ambiguous sample 5: weak E = 5 + 2.5 = 7.5 > RTO 2;
    // backed off once with VBF 2: 15
    c.on_complete(t(5.0), &ex, &done(&[t(0.0), t(3.0)]));
    let next = c.start(t(10.0), CON, &mut r);
    assert_close(next.armed, 15.0);
}

#[test]
fn non_pacing_and_con_every_eighth() {
    let mut c = Cocoa::new("cocoa", CocoaParams::default(), Family::COCOA);
    let mut r = rng(16);
    let non = Start { outstanding: 0, confirmable: false };
    let mut cons = 0;
    for i in 0..16 {
        let now = t(i as f64 * 2.0);
        assert_eq!(c.earliest_start(now, false), now); // RTO 2 s between NONs
        if c.start(now, non, &mut r).confirmable() {
            cons += 1;
        }
        assert_eq!(c.earliest_start(now, false), now + Duration::from_secs(2));
    }
    assert_eq!(cons, 2);
}

#[test]
fn marking_option_probe_and_fallback() {
    let p = CocoaParams { rtt_marking: MarkingKind::Option, ..CocoaParams::default() };
    let mut c = Cocoa::new("cocoa", p, Family::COCOA);
    let mut r = rng(17);
    let ex = c.start(t(0.0), CON, &mut r);
    assert_eq!(ex.marking(), crate::Marking::Option { number: 65028, probe: true });
    // the first piggybacked response has no echo: stop sending the option
    c.on_complete(t(1.0), &ex, &Completion { sent: &[t(0.0)], echo: Echo::None, piggybacked: true });
    assert_eq!(c.start(t(2.0), CON, &mut r).marking(), crate::Marking::None);
}
