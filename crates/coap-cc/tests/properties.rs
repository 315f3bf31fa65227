//! Properties every algorithm must keep (the properties every RTO algorithm must have): for arbitrary
//! sequences of events, every RTO handed out is finite, positive and within the algorithm's
//! documented bounds; and the same seed and events give the same RTOs.

use coap_cc::{CcConfig, Completion, Controller, Echo, ExchangeTimer, Instant, Start, ALGORITHMS};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
enum Op {
    /// Start an exchange after `gap` ms (confirmable or not).
    Start { gap: u32, con: bool },
    /// The oldest open exchange's timer expires.
    Timeout,
    /// The oldest open exchange completes `delay` ms after its last transmission, echoing a
    /// transmission number or not, piggybacked or not.
    Complete { delay: u32, echo: Option<u8>, piggybacked: bool },
    /// Reset all state (a random client's new batch).
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..5_000, any::<bool>()).prop_map(|(gap, con)| Op::Start { gap, con: con || gap % 3 != 0 }),
        3 => Just(Op::Timeout),
        3 => (0u32..20_000, proptest::option::of(0u8..4), any::<bool>())
            .prop_map(|(delay, echo, piggybacked)| Op::Complete { delay, echo, piggybacked }),
        1 => Just(Op::Reset),
    ]
}

struct Open {
    timer: ExchangeTimer,
    sent: Vec<Instant>,
}

/// Replays `ops`, checking every RTO against the bounds; returns every RTO in nanoseconds.
fn run(cfg: &CcConfig, seed: u64, ops: &[Op]) -> Result<Vec<u64>, TestCaseError> {
    let mut c: Box<dyn Controller> = cfg.build();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut now = Instant::ZERO;
    let mut open: Vec<Open> = Vec::new();
    let mut rtos = Vec::new();
    let (lo, hi) = c.rto_bounds();
    let mut check = |d: coap_cc::Duration, what: &str| -> Result<(), TestCaseError> {
        let s = d.as_secs_f64();
        prop_assert!(s > 0.0 && s.is_finite(), "{} {what}: {s}", cfg);
        prop_assert!(d >= lo && d <= hi, "{} {what}: {d:?} outside [{lo:?}, {hi:?}]", cfg);
        rtos.push(d.as_nanos());
        Ok(())
    };
    for op in ops {
        match op {
            Op::Start { gap, con } => {
                now += coap_cc::Duration::from_millis(*gap as u64);
                let earliest = c.earliest_start(now, *con);
                prop_assert!(earliest >= now);
                now = earliest;
                let timer = c.start(now, Start { outstanding: open.len(), confirmable: *con }, &mut rng);
                check(timer.rto(), "initial")?;
                open.push(Open { timer, sent: vec![now] });
            }
            Op::Timeout => {
                let Some(ex) = open.first_mut() else { continue };
                now += ex.timer.rto();
                match c.on_timeout(now, &mut ex.timer, &mut rng) {
                    Some(rto) => {
                        check(rto, "backoff")?;
                        prop_assert_eq!(rto, ex.timer.rto());
                        ex.sent.push(now);
                    }
                    None => {
                        let ex = open.remove(0);
                        prop_assert_eq!(ex.timer.retransmissions(), cfg_max_retransmit(cfg));
                        c.on_failure(now, &ex.timer);
                    }
                }
            }
            Op::Complete { delay, echo, piggybacked } => {
                if open.is_empty() {
                    continue;
                }
                let ex = open.remove(0);
                now += coap_cc::Duration::from_millis(*delay as u64);
                let echo = match echo {
                    Some(n) if ex.timer.marking() != coap_cc::Marking::None => Echo::Number(*n),
                    _ => Echo::None,
                };
                c.on_complete(now, &ex.timer, &Completion { sent: &ex.sent, echo, piggybacked: *piggybacked });
                let m = c.metrics();
                prop_assert!(m.rto.as_nanos() > 0, "{} metrics rto {:?}", cfg, m.rto);
            }
            Op::Reset => {
                c.reset();
                open.clear();
            }
        }
    }
    Ok(rtos)
}

fn cfg_max_retransmit(cfg: &CcConfig) -> u32 {
    let mut v = 0;
    cfg.describe(&mut |p| {
        if p.name == "max_retransmit" {
            v = p.value.to_string().parse().unwrap();
        }
    });
    v
}

fn configs() -> Vec<CcConfig> {
    let mut v: Vec<CcConfig> = ALGORITHMS.iter().map(|a| CcConfig::new(a.name).unwrap()).collect();
    // the reference testbed's settings, and the open-point switches
    for text in [
        "default:max_retransmit=20",
        "cocoa:max_retransmit=20,aging=false,vbf=per_step",
        "cocoa4:max_retransmit=20",
        "fasor:max_retransmit=20,dither_doubled=true,dither_slow=true,first_rttvar=pseudocode",
        "fasor_option:matched=ambiguous,max_retransmit=30",
        "cocoa_pp:max_retransmit=20,g_scale=0.003",
        "gsrtc:w_initial=0",
        "linux_rto:rtt_marking=token,max_retransmit=20",
        "eifel:first=zero,rtt_marking=option",
        "peakhopper:rtt_marking=token",
        "basic_rto:rule=last,rto_min=0.5",
    ] {
        v.push(CcConfig::parse(text).unwrap());
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rtos_within_bounds_and_deterministic(ops in proptest::collection::vec(op(), 1..120), seed in any::<u64>()) {
        for cfg in configs() {
            let a = run(&cfg, seed, &ops)?;
            let b = run(&cfg, seed, &ops)?;
            prop_assert_eq!(a, b, "{} is not deterministic", cfg);
        }
    }
}
