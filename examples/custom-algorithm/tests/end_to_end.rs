//! `min_rtt`, registered from outside coap-cc, runs where a built-in does: in the simulator
//! (named in a scenario's `cc`) and in the real client (loopback only, bounded in time). The
//! expected timers follow from the algorithm's rule, worked out from the exchanges' own RTTs.

use coap_cc::{CcConfig, Duration};
use custom_algorithm::register;
use netsim::{run_rep_with, Detail, Scenario, Transport};
use std::sync::{Arc, Mutex};

/// The RTO the rule gives after `min_rtt_ns`: 1.5 × the smallest RTT + 0.25 s, at the
/// nanosecond the timer is armed with.
fn rule_ns(min_rtt_ns: u64) -> u64 {
    Duration::from_secs_f64(1.5 * (min_rtt_ns as f64 / 1e9) + 0.25).as_nanos()
}

#[test]
fn the_simulator_runs_it_by_name() {
    register().unwrap();
    let mut scn = Scenario::thesis();
    scn.clients = 1;
    scn.exchanges = 12;
    scn.cc = "min_rtt".into();
    let scn = scn.resolve().unwrap();
    let transport = scn.transport().unwrap();
    let Transport::Udp(cc) = &transport else { panic!("min_rtt is a UDP algorithm") };
    assert_eq!(cc.name(), "min_rtt");
    // the testbed's MAX_RETRANSMIT 20 applies to it as to every algorithm with the key
    assert_eq!(cc.get("max_retransmit").as_deref(), Some("20"));
    let rep = run_rep_with(&scn, &transport, 0, None, Detail::Exchanges);
    let ex = &rep.exchanges;
    assert_eq!(ex.len(), 12);
    assert!(ex.iter().all(|e| e.rtt_ns.is_some() && e.retransmissions == 0), "one client, no errors: no loss");
    // the first exchange starts from initial_rto; each later one from the rule over the RTTs before it
    assert_eq!(ex[0].last_rto_ns, Some(2_000_000_000));
    for k in 1..ex.len() {
        let min = ex[..k].iter().filter_map(|e| e.rtt_ns).min().unwrap();
        assert_eq!(ex[k].last_rto_ns, Some(rule_ns(min)), "exchange {k}");
    }
}

#[test]
fn a_scenario_sets_its_parameters_and_its_rules_hold() {
    register().unwrap();
    let mut scn = Scenario::thesis();
    scn.cc = "min_rtt:margin=0.5,factor=2".into();
    let Transport::Udp(cc) = scn.transport().unwrap() else { panic!() };
    // printed in the order the parameters are declared, those that differ from the defaults
    assert_eq!(cc.to_string(), "min_rtt:factor=2,margin=0.5,max_retransmit=20");
    scn.cc = "min_rtt:factor=0.5".into();
    let e = scn.transport().unwrap_err().to_string();
    assert!(e.contains("min_rtt: factor must be >= 1"), "{e}");
}

#[tokio::test]
async fn the_real_client_runs_it() {
    register().unwrap();
    let server_cfg = coap_net::config(CcConfig::parse("default").unwrap());
    let (server, _) = coap_net::server("127.0.0.1:0".parse().unwrap(), server_cfg, 1).await.unwrap();
    let dest = server.local_addr();
    let log: Arc<Mutex<Vec<coap_net::TransmissionLog>>> = Arc::default();
    let sink = log.clone();
    let client = coap_net::client(
        "127.0.0.1:0".parse().unwrap(),
        CcConfig::parse("min_rtt:margin=0.3").unwrap(),
        2,
        Some(Box::new(move |t| sink.lock().unwrap().push(t))),
    )
    .await
    .unwrap();
    for _ in 0..4 {
        let reply = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            client.request(dest, coap_endpoint::Request::get("test")),
        )
        .await
        .expect("a loopback exchange within 10 s")
        .expect("answered");
        assert_eq!(reply.code, coap_wire::Code::CONTENT);
    }
    client.finish().await;
    server.finish().await;
    let rtos: Vec<f64> = log.lock().unwrap().iter().map(|t| t.rto.unwrap().as_secs_f64()).collect();
    // the first exchange from initial_rto (2 s exactly: no dither); then 1.5 × a loopback RTT
    // (well under a second) + 0.3 s, which no built-in would arm (DefaultCoAP draws from [2, 3])
    assert_eq!(rtos.len(), 4, "{rtos:?}");
    assert_eq!(rtos[0], 2.0);
    assert!(rtos[1..].iter().all(|&r| (0.3..1.8).contains(&r)), "{rtos:?}");
}
