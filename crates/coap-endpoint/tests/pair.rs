//! Client and server endpoints back to back, with scripted loss and delay: retransmission
//! timing, deduplication, duplicate responses counted as unnecessary, NSTART queueing, separate
//! responses, accurate-RTT marking and its fallback, and rejection of bad input.

mod harness;

use coap_cc::CcConfig;
use coap_endpoint::{Config, Event, FailReason, GiveUp, Outcome, PreparedRequest, Request, Response};
use coap_wire::{registry, Code, Message, MessageType};
use harness::*;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use coap_endpoint::Reply;
use rand_chacha::rand_core::SeedableRng;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn retransmission_timing_follows_the_controller() {
    let mut p = Pair::new("default", 1);
    p.drop = Box::new(|from, i, _| from == C && i < 2); // the first two requests are lost
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    let r = &p.reports()[0];
    assert_eq!(r.retransmissions(), 2);
    assert_eq!(r.expired, 2);
    let rto0 = r.rtos[0].as_secs_f64();
    assert!((2.0..3.0).contains(&rto0)); // RFC 7252: U[ACK_TIMEOUT, ACK_TIMEOUT·1.5]
    let s: Vec<f64> = r.sent.iter().map(|&i| secs(i)).collect();
    assert!(close(s[1] - s[0], rto0)); // retransmitted when the first RTO expired
    assert!(close(s[2] - s[1], 2.0 * rto0)); // then after the doubled RTO
    assert!(close(r.rtos[1].as_secs_f64(), 2.0 * rto0));
    // the third transmission gets through: response 0.1 + 0.1 s later
    assert!(close(secs(r.responded_at.unwrap()), s[2] + 0.2));
    assert_eq!(r.outcome, Outcome::Response(Code::CONTENT));
    assert_eq!(r.duplicates, 0);
    assert_eq!(p.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn gives_up_after_max_retransmit() {
    let mut p = Pair::new("default", 2);
    p.drop = Box::new(|from, _, _| from == C);
    let id = p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(1000.0);
    let r = &p.reports()[0];
    assert_eq!(r.sent.len(), 5); // original + MAX_RETRANSMIT = 4
    assert_eq!(r.expired, 5);
    let rto0 = r.rtos[0].as_secs_f64();
    // fails when the last RTO expires: rto0·(1 + 2 + 4 + 8 + 16) = 31·rto0
    assert!(p.events.contains(&Event::Failed { id, reason: FailReason::Timeout }));
    let last = secs(*r.sent.last().unwrap()) + r.rtos[4].as_secs_f64();
    assert!(close(last, 31.0 * rto0));
}

#[test]
fn more_transmissions_than_kept_inline_are_all_reported() {
    // MAX_RETRANSMIT 7: eight transmissions, three beyond the five kept inline
    let mut p = Pair::new("default:max_retransmit=7", 2);
    p.drop = Box::new(|from, _, _| from == C);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(10_000.0);
    let r = &p.reports()[0];
    assert_eq!((r.sent.len(), r.rtos.len(), r.expired), (8, 8, 8));
    assert!(r.sent.spilled());
    // each transmission goes when the RTO armed after the one before expires
    for i in 1..8 {
        assert!(r.rtos[i] >= r.rtos[i - 1], "rto {i}");
        assert!(close(secs(r.sent[i]), secs(r.sent[i - 1]) + r.rtos[i - 1].as_secs_f64()), "sent {i}");
    }
}

/// Erbium's rule: the 4th retransmission is sent and the exchange fails at that instant; the
/// timers are 3 s + k/128 s, then doubled: the 4th retransmission goes at (1 + 2 + 4 + 8)·rto0.
#[test]
fn gives_up_at_the_last_send_like_erbium() {
    let erbium = || {
        let mut c = Config::new(CcConfig::parse("default:ack_timeout=3,timer_tick=0.0078125").unwrap());
        c.give_up = GiveUp::AtLastSend;
        let mut p = Pair::with(c, Config::new(CcConfig::parse("default").unwrap()), false, 3);
        p.drop = Box::new(|from, _, _| from == C);
        p
    };
    let mut p = erbium();
    let id = p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(1000.0);
    let r = &p.reports()[0];
    let rto0 = r.rtos[0].as_secs_f64();
    assert!((rto0 - 3.0) * 128.0 == ((rto0 - 3.0) * 128.0).round() && (3.0..=4.5).contains(&rto0));
    assert_eq!(r.sent.len(), 5);
    assert_eq!(p.sent_by(C).len(), 5, "the last retransmission goes out although the exchange is over");
    assert_eq!(r.expired, 4, "the last transmission's timer never runs");
    assert!(close(secs(r.sent[4]), 15.0 * rto0));
    // not failed just before the last send, failed at it
    let mut p = erbium();
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(15.0 * rto0 - 1e-3);
    assert!(!p.events.iter().any(|e| matches!(e, Event::Failed { .. })));
    p.run_until(15.0 * rto0 + 1e-9);
    assert!(p.events.contains(&Event::Failed { id, reason: FailReason::Timeout }));
}

/// An exchange that fails as its last retransmission goes out ends with the timer that expired
/// last (8·rto0 after the 4th expiry), not the doubled one Erbium never arms: Full Backoff
/// carries it into the next exchange (the NITK author's `fullbackoffvariant1 = interval`).
#[test]
fn a_failure_at_the_last_send_carries_the_last_timer_that_ran() {
    let mut c = Config::new(CcConfig::parse("default_fb1:ack_timeout=3,timer_tick=0.0078125").unwrap());
    c.give_up = GiveUp::AtLastSend;
    let mut p = Pair::with(c, Config::new(CcConfig::parse("default").unwrap()), false, 3);
    p.drop = Box::new(|from, i, _| from == C && i < 5); // the first exchange's five transmissions
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    p.client.request(t(100.0), S, Request::get("test")).unwrap();
    p.run_until(200.0);
    let reports = p.reports();
    let rto0 = reports[0].rtos[0].as_secs_f64();
    assert_eq!(reports[0].rtos.len(), 5);
    assert!(close(reports[1].rtos[0].as_secs_f64(), 8.0 * rto0), "{:?}", reports[1].rtos[0]);
}

/// With `report_at_finish` the report comes with the response, before its duplicate: the
/// duplicate is counted by the endpoint, not in the report.
#[test]
fn a_report_at_finish_leaves_late_duplicates_to_the_endpoints_count() {
    let mut c = Config::new(CcConfig::parse("default").unwrap());
    c.report_at_finish = true;
    let mut p = Pair::with(c, Config::new(CcConfig::parse("default").unwrap()), false, 3);
    p.down = 3.0; // as below: the retransmission's response is a duplicate, at 2·rto0… + 3.1 s
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(3.2); // the first response (at 3.1 s) is in, its duplicate not yet
    let reports: Vec<_> = p.events.iter().filter(|e| matches!(e, Event::Retired(_))).collect();
    assert_eq!(reports.len(), 1, "reported as it finished, 244 s before its lifetime ends");
    p.run_until(100.0);
    assert_eq!(p.client.duplicates_received(), 1);
    let r = &p.reports()[0];
    assert_eq!((r.retransmissions(), r.duplicates), (1, 0));
    assert_eq!(p.events.iter().filter(|e| matches!(e, Event::Retired(_))).count(), 1, "and only then");
}

#[test]
fn response_payloads_come_with_the_event_unless_switched_off() {
    // the test resource answers 2.05 with 60 bytes of 0x55
    for copy in [true, false] {
        let mut c = Config::new(CcConfig::parse("default").unwrap());
        c.response_payloads = copy;
        let mut p = Pair::with(c, Config::new(CcConfig::parse("default").unwrap()), false, 3);
        let id = p.client.request(t(0.0), S, Request::get("test")).unwrap();
        p.run_until(10.0);
        let expected = if copy { vec![0x55; 60] } else { Vec::new() };
        let got = p.events.iter().find_map(|e| match e {
            Event::Response { id: i, code, payload, .. } if *i == id => Some((*code, payload.clone())),
            _ => None,
        });
        assert_eq!(got, Some((Code::CONTENT, expected)), "response_payloads = {copy}");
    }
}

#[test]
fn duplicate_con_gets_the_cached_response_and_the_duplicate_is_counted() {
    let mut p = Pair::new("default", 3);
    p.down = 3.0; // responses take longer than the first RTO (2..3 s)
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    assert_eq!(p.calls.load(Ordering::SeqCst), 1, "the handler sees the request once");
    let responses = p.sent_by(S);
    assert_eq!(responses.len(), 2, "the retransmission got the cached response again");
    assert_eq!(responses[0].1, responses[1].1);
    let r = &p.reports()[0];
    assert_eq!(r.retransmissions(), 1);
    assert!(close(secs(r.responded_at.unwrap()), 3.1)); // the first response completes it
    assert_eq!(r.duplicates, 1); // the second one is an unnecessary retransmission's fruit
}

#[test]
fn nstart_queues_exchanges() {
    let mut p = Pair::new("default", 4);
    for _ in 0..3 {
        p.client.request(t(0.0), S, Request::get("test")).unwrap();
    }
    p.run_until(100.0);
    let r = p.reports();
    let starts: Vec<f64> = r.iter().map(|r| secs(r.sent[0])).collect();
    let ends: Vec<f64> = r.iter().map(|r| secs(r.responded_at.unwrap())).collect();
    assert!(close(starts[0], 0.0) && close(ends[0], 0.2));
    assert!(close(starts[1], 0.2) && close(ends[1], 0.4)); // NSTART = 1: starts when the first ends
    assert!(close(starts[2], 0.4) && close(ends[2], 0.6));
    // with NSTART = 3 all start at once
    let mut p = Pair::new("default:nstart=3", 4);
    for _ in 0..3 {
        p.client.request(t(0.0), S, Request::get("test")).unwrap();
    }
    p.run_until(100.0);
    assert!(p.reports().iter().all(|r| close(secs(r.sent[0]), 0.0)));
}

#[test]
fn empty_ack_then_separate_response() {
    let mut server = Config::new(CcConfig::parse("default").unwrap());
    server.separate_ack_delay = coap_cc::Duration::from_millis(200);
    let mut p = Pair::with(Config::new(CcConfig::parse("default").unwrap()), server, true, 5);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(1.0); // the server's empty ACK left at 0.3 and arrived at 0.4
    let id = p.deferred.lock().unwrap()[0];
    p.server.respond(p.now, id, Response::new(Code::CONTENT, b"late".to_vec()));
    p.run_until(100.0);
    let r = &p.reports()[0];
    assert!(close(secs(r.acked_at.unwrap()), 0.4));
    assert_eq!(r.retransmissions(), 0);
    assert!(close(secs(r.responded_at.unwrap()), 1.1));
    let from_server = p.sent_by(S);
    assert_eq!(from_server.len(), 2, "one empty ACK and one CON response, no retransmission");
    let resp = Message::decode(&from_server[1].1).unwrap();
    assert_eq!((resp.ty, resp.code, resp.payload), (MessageType::Con, Code::CONTENT, &b"late"[..]));
    // the client acknowledged the CON response, so the server did not retransmit it
    let acks = p.sent_by(C).into_iter().filter(|(_, b)| Message::decode(b).unwrap().ty == MessageType::Ack).count();
    assert_eq!(acks, 1);
    assert!(p.events.iter().any(|e| matches!(e, Event::Response { payload, .. } if payload == b"late")));
}

/// A server that acknowledges and never responds: the exchange fails EXCHANGE_LIFETIME after
/// its first transmission (RFC 7252 §4.8.2: 247 s with the defaults), not never, and is no
/// longer held.
#[test]
fn an_acknowledged_request_without_its_response_fails_after_exchange_lifetime() {
    let mut server = Config::new(CcConfig::parse("default").unwrap());
    server.separate_ack_delay = coap_cc::Duration::from_millis(200);
    let mut p = Pair::with(Config::new(CcConfig::parse("default").unwrap()), server, true, 5);
    let id = p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(246.9);
    assert!(p.events.iter().all(|e| !matches!(e, Event::Failed { .. })), "still waiting at 246.9 s");
    p.run_until(250.0);
    assert!(p.events.contains(&Event::Failed { id, reason: FailReason::NoSeparateResponse }));
    let r = &p.reports()[0];
    assert!(close(secs(r.acked_at.unwrap()), 0.4));
    assert_eq!(r.outcome, Outcome::Failed(FailReason::NoSeparateResponse));
}

#[test]
fn token_marking_gives_an_unambiguous_sample() {
    let mut p = Pair::new("fasor_token", 6);
    p.drop = Box::new(|from, i, _| from == C && i == 0);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    let sent = p.sent_by(C);
    // transmission numbers in the first token byte: 0, then 1
    assert_eq!(Message::decode(&sent[0].1).unwrap().token, &[0]);
    assert_eq!(Message::decode(&sent[1].1).unwrap().token, &[1]);
    // the response echoed token [1]: RTT 0.2 s measured from the retransmission, so FASOR's
    // first-sample rule gives fastrto = 1.5 · 0.2 = 0.3 (an ambiguous sample would leave 2)
    let m = p.client.controller(&S).unwrap().metrics();
    assert!(close(m.rto.as_secs_f64(), 0.3), "{:?}", m.rto);
}

#[test]
fn option_marking_probes_and_falls_back() {
    let client = Config::new(CcConfig::parse("fasor_option").unwrap());
    let mut server = Config::new(CcConfig::parse("default").unwrap());
    server.echo_transmission_numbers = false; // a server that does not know the option
    let mut p = Pair::with(client, server, false, 7);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    let sent = p.sent_by(C);
    let first = Message::decode(&sent[0].1).unwrap();
    assert_eq!(first.options.get(registry::TRANSMISSION_NUMBER), Some(&[255u8][..])); // the probe
    let second = Message::decode(&sent[1].1).unwrap();
    assert_eq!(second.options.get(registry::TRANSMISSION_NUMBER), None); // fell back
                                                                         // with a server that echoes, the option stays and is echoed unchanged
    let mut p = Pair::new("fasor_option", 7);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(100.0);
    let (from_server, from_client) = (p.sent_by(S), p.sent_by(C));
    let echoed = Message::decode(&from_server[0].1).unwrap();
    assert_eq!(echoed.options.get(registry::TRANSMISSION_NUMBER), Some(&[255u8][..]));
    let second = Message::decode(&from_client[1].1).unwrap();
    assert_eq!(second.options.get(registry::TRANSMISSION_NUMBER), Some(&[][..]));
    // 0: empty
}

#[test]
fn bad_input_is_rejected_and_never_fatal() {
    let mut p = Pair::new("default", 8);
    let rst = |p: &mut Pair| -> Option<Message<'static>> {
        let mut buf = Vec::new();
        let tx = p.server.poll_transmit(&mut buf)?;
        let bytes: &'static [u8] = Box::leak(buf[..tx.len].to_vec().into_boxed_slice());
        Some(Message::decode(bytes).unwrap())
    };
    // a CON with a format error (option delta 15) → RST with its Message ID
    p.server.handle_datagram(t(0.0), C, &[0x40, 0x01, 0x12, 0x34, 0xF0]);
    let m = rst(&mut p).unwrap();
    assert_eq!((m.ty, m.message_id), (MessageType::Rst, 0x1234));
    // a NON with a format error → silently dropped
    p.server.handle_datagram(t(0.0), C, &[0x50, 0x01, 0x12, 0x35, 0xFF]);
    assert!(rst(&mut p).is_none());
    // a CoAP ping (empty CON) → RST
    p.server.handle_datagram(t(0.0), C, &[0x40, 0x00, 0xAB, 0xCD]);
    assert_eq!(rst(&mut p).unwrap().ty, MessageType::Rst);
    // an unknown critical option (9) → 4.02 Bad Option, piggybacked
    p.server.handle_datagram(t(0.0), C, &[0x40, 0x01, 0x00, 0x07, 0x90]);
    let m = rst(&mut p).unwrap();
    assert_eq!((m.ty, m.code), (MessageType::Ack, Code::BAD_OPTION));
    // garbage of every length, then a normal exchange still works
    for n in 0..64u8 {
        let junk: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
        p.server.handle_datagram(t(0.0), C, &junk);
        while rst(&mut p).is_some() {}
    }
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(10.0);
    assert!(matches!(p.reports()[0].outcome, Outcome::Response(Code::CONTENT)));
}

/// An entry of the test server's: the overhead, two `u8` addresses, a 60-byte reply.
const ENTRY: usize = coap_endpoint::ENTRY_OVERHEAD + 2 + 60;

#[test]
fn dedup_state_stays_bounded_under_a_flood() {
    let mut cfg = Config::new(CcConfig::parse("default").unwrap());
    cfg.dedup_bytes = 16 * ENTRY;
    let mut p = Pair::with(Config::new(CcConfig::parse("default").unwrap()), cfg, false, 9);
    let mut buf = Vec::new();
    for i in 0..5000u32 {
        let (from, mid) = ((i % 251) as u8, i as u16);
        let req = [0x41, 0x01, (mid >> 8) as u8, mid as u8, (i % 256) as u8];
        p.server.handle_datagram(t(i as f64 * 1e-3), from, &req);
        while p.server.poll_transmit(&mut buf).is_some() {}
        assert!(p.server.dedup_len() <= 16 && p.server.dedup_bytes() <= 16 * ENTRY);
    }
    // all but the last 16 went before their EXCHANGE_LIFETIME, and the endpoint says so
    assert_eq!(p.server.dedup_early_evictions(), 5000 - 16);
    // entries expire after EXCHANGE_LIFETIME
    p.server.handle_timeout(t(5.0 + 247.0));
    assert_eq!(p.server.dedup_len(), 0);
}

#[test]
fn a_duplicate_within_exchange_lifetime_is_answered_from_the_cache_under_load() {
    // 200 requests/s from 250 peers for 50 s (10,000 entries, more than the 4,096 a count cap
    // held), then the first request again at 60 s: still within EXCHANGE_LIFETIME (247 s), so
    // the handler must not run again
    let mut p = Pair::with(
        Config::new(CcConfig::parse("default").unwrap()),
        Config::new(CcConfig::parse("default").unwrap()),
        false,
        9,
    );
    let mut buf = Vec::new();
    let req = |i: u32| [0x41, 0x01, (i >> 8) as u8, i as u8, (i % 256) as u8];
    for i in 0..10_000u32 {
        p.server.handle_datagram(t(i as f64 * 0.005), (i % 250) as u8, &req(i));
        while p.server.poll_transmit(&mut buf).is_some() {}
    }
    assert_eq!(p.calls.load(std::sync::atomic::Ordering::SeqCst), 10_000);
    p.server.handle_datagram(t(60.0), 0, &req(0));
    let tx = p.server.poll_transmit(&mut buf).expect("the cached reply");
    let m = coap_wire::Message::decode(&buf[..tx.len]).unwrap();
    assert_eq!((m.code, m.message_id, m.payload.len()), (Code::CONTENT, 0, 60));
    assert_eq!(p.calls.load(std::sync::atomic::Ordering::SeqCst), 10_000, "the handler ran once per request");
    assert_eq!(p.server.dedup_early_evictions(), 0);
}

#[test]
fn non_requests_and_reset() {
    let mut p = Pair::new("default", 10);
    let mut req = Request::get("test");
    req.confirmable = false;
    p.client.request(t(0.0), S, req.clone()).unwrap();
    p.run_until(10.0);
    let r = &p.reports()[0];
    assert_eq!(r.outcome, Outcome::Response(Code::CONTENT));
    assert!(r.rtos.is_empty());
    assert_eq!(Message::decode(&p.sent_by(S)[0].1).unwrap().ty, MessageType::Non);
    // a NON that gets no response fails after NON_LIFETIME
    let mut p = Pair::new("default", 11);
    p.drop = Box::new(|_, _, _| true);
    p.client.request(t(0.0), S, req).unwrap();
    p.run_until(1000.0);
    assert!(p.events.iter().any(|e| matches!(e, Event::Failed { reason: FailReason::Timeout, .. })));
    // RST to a CON request fails the exchange at once
    let mut p = Pair::new("default", 12);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    let mut buf = Vec::new();
    let tx = p.client.poll_transmit(&mut buf).unwrap();
    let mid = Message::decode(&buf[..tx.len]).unwrap().message_id;
    p.client.handle_datagram(t(0.1), S, &Message::empty(MessageType::Rst, mid).to_vec().unwrap());
    assert!(matches!(p.client.poll_event(), Some(Event::Failed { reason: FailReason::Reset, .. })));
}

#[test]
fn option_numbers_agree_across_crates() {
    assert_eq!(coap_cc::marking::TRANSMISSION_NUMBER_OPTION, registry::TRANSMISSION_NUMBER);
    assert_eq!(coap_cc::algorithms::rtt_coap::RTT_COAP_OPTION, registry::RTT_COAP_TRANSMISSION_COUNTER);
}

#[test]
fn rtt_coap_counter_is_echoed_under_an_elective_number_and_read_back() {
    // the request carries the critical counter 65001; the response echoes it as elective 65000
    // (a client that does not know it may ignore it), and the client reads it back: its sample
    // is unambiguous even after a retransmission
    let mut p = Pair::new("rtt_coap", 21);
    p.drop = Box::new(|from, i, _| from == C && i == 0); // the original is lost
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(60.0);
    let (req, resp) = (&p.log[1], &p.log[2]);
    let req = Message::decode(&req.bytes).unwrap();
    assert_eq!(req.options.get(registry::RTT_COAP_TRANSMISSION_COUNTER), Some(&[1u8][..]));
    let resp = Message::decode(&resp.bytes).unwrap();
    assert_eq!(resp.options.get(registry::RTT_COAP_COUNTER_ECHO), Some(&[1u8][..]));
    assert_eq!(resp.options.get(registry::RTT_COAP_TRANSMISSION_COUNTER), None);
    assert!(!registry::is_critical(registry::RTT_COAP_COUNTER_ECHO));
    assert!(matches!(p.reports()[0].outcome, Outcome::Response(Code::CONTENT)));
    // the echo names the retransmission: the sample is its round trip, 0.1 s up + 0.1 s down
    let srtt = p.client.controller(&S).unwrap().metrics().srtt.expect("a sample was taken").as_secs_f64();
    assert!((srtt - 0.2).abs() < 1e-9, "{srtt}");
}

#[test]
fn same_seed_same_trace() {
    let trace = |seed| {
        let mut p = Pair::new("cocoa", seed);
        p.drop = Box::new(|from, i, _| (from == C && i % 3 == 1) || (from == S && i % 4 == 2));
        for _ in 0..10 {
            p.client.request(t(0.0), S, Request::get("test")).unwrap();
        }
        p.run_until(1000.0);
        p.log.iter().map(|w| (w.at, w.from, w.bytes.clone())).collect::<Vec<_>>()
    };
    assert_eq!(trace(42), trace(42));
    assert_ne!(trace(42), trace(43));
}

#[test]
fn lost_ack_of_a_separate_response_is_answered_again() {
    let mut server = Config::new(CcConfig::parse("default").unwrap());
    server.separate_ack_delay = coap_cc::Duration::from_millis(100);
    let mut p = Pair::with(Config::new(CcConfig::parse("default").unwrap()), server, true, 13);
    // the client's datagrams: 0 = the request, 1 = the ACK of the separate response (lost)
    p.drop = Box::new(|from, i, _| from == C && i == 1);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    p.run_until(1.0);
    let id = p.deferred.lock().unwrap()[0];
    p.server.respond(p.now, id, Response::new(Code::CONTENT, b"sep".to_vec()));
    p.run_until(100.0);
    let from_server = p.sent_by(S);
    // empty ACK, the CON response, and its retransmission after the lost ACK (RFC 7252 timer 2..3 s)
    let cons: Vec<f64> = from_server
        .iter()
        .filter(|(_, b)| Message::decode(b).unwrap().ty == MessageType::Con)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(cons.len(), 2, "{cons:?}");
    assert!((2.0..3.0).contains(&(cons[1] - cons[0])), "{cons:?}");
    // the client acknowledged both copies and counted the second as a duplicate
    let acks = p.sent_by(C).iter().filter(|(_, b)| Message::decode(b).unwrap().ty == MessageType::Ack).count();
    assert_eq!(acks, 2);
    let r = &p.reports()[0];
    assert_eq!((r.outcome, r.duplicates), (Outcome::Response(Code::CONTENT), 1));
    assert!(close(secs(r.responded_at.unwrap()), 1.1));
}

#[test]
fn finished_exchanges_beyond_the_bound_retire_early_and_are_counted() {
    let mut cc = Config::new(coap_cc::CcConfig::parse("default").unwrap());
    cc.max_finished = 2;
    let mut p = Pair::with(cc, Config::new(coap_cc::CcConfig::parse("default").unwrap()), false, 4);
    for _ in 0..5 {
        p.client.request(t(0.0), S, Request::get("test")).unwrap();
    }
    // 5 exchanges, one after the other (NSTART 1), finished by 1 s: far within EXCHANGE_LIFETIME,
    // so only the bound retires them: 3 early, the last 2 kept
    p.run_until(1.0);
    assert_eq!(p.client.early_retirements(), 3);
    assert_eq!(p.client.exchange_count(), 2);
    let retired = p.events.iter().filter(|e| matches!(e, Event::Retired(_))).count();
    assert_eq!(retired, 3, "their reports were delivered");
}

/// A shared reply is encoded once and sent again with only its header and token rewritten
/// (`Reply::Shared`): every answer must still be exactly RFC 7252's encoding (§3), worked out
/// by hand here, whoever asks and whether or not it is a duplicate.
#[test]
fn a_shared_reply_is_sent_byte_for_byte_as_encoded_in_full() {
    struct Shared(Arc<Response>);
    impl coap_endpoint::Handler<u8> for Shared {
        fn handle(&mut self, _: coap_cc::Instant, _: &u8, _: coap_endpoint::RequestId, _: &Message<'_>) -> Reply {
            Reply::Shared(self.0.clone())
        }
    }
    let resp = Arc::new(Response::new(Code::CONTENT, b"hi".to_vec()));
    let cfg = Config::new(CcConfig::parse("default").unwrap());
    let mut server = coap_endpoint::Endpoint::new(cfg, rand_chacha::ChaCha8Rng::seed_from_u64(1))
        .unwrap()
        .with_handler(Box::new(Shared(resp)));
    let mut answer = |from: u8, request: &[u8]| {
        server.handle_datagram(t(1.0), from, request);
        let mut buf = Vec::new();
        let tx = server.poll_transmit(&mut buf).expect("an answer");
        assert_eq!(tx.dest, from);
        buf[..tx.len].to_vec()
    };
    // CON GET, Message ID 0x1234, token 0x71, Uri-Path "test": ACK 2.05, same ID and token,
    // payload marker, "hi"
    let get = [0x41, 0x01, 0x12, 0x34, 0x71, 0xb4, b't', b'e', b's', b't'];
    let ack = vec![0x61, 0x45, 0x12, 0x34, 0x71, 0xff, b'h', b'i'];
    assert_eq!(answer(C, &get), ack);
    assert_eq!(answer(C, &get), ack, "a duplicate gets the same bytes");
    // another client, Message ID 0x0001, two-byte token 0x72 0x73
    let other = [0x42, 0x01, 0x00, 0x01, 0x72, 0x73, 0xb4, b't', b'e', b's', b't'];
    assert_eq!(answer(3, &other), vec![0x62, 0x45, 0x00, 0x01, 0x72, 0x73, 0xff, b'h', b'i']);
    // a NON request: a NON 2.05 with the server's own next Message ID and the request's token
    let non = [0x51, 0x01, 0x00, 0x02, 0x74, 0xb4, b't', b'e', b's', b't'];
    let got = answer(4, &non);
    assert_eq!(got[0], 0x51); // NON, token length 1
    assert_eq!(&got[4..], &[0x74, 0xff, b'h', b'i']);
}

/// A request's options and payload are encoded once (`PreparedRequest`) and each transmission
/// writes only the header and the token in front of them: every transmission must still be
/// exactly RFC 7252's encoding (§3), worked out by hand here, with a plain token and with the
/// transmission number in front of it (token marking).
#[test]
fn a_prepared_request_is_sent_byte_for_byte_as_encoded_in_full() {
    // a POST whose options are given out of order: Content-Format 0 (12, an empty value), then
    // Uri-Path "ab" (11); payload "x"
    let req = Request {
        code: Code::POST,
        options: vec![(registry::CONTENT_FORMAT, Vec::new()), (registry::URI_PATH, b"ab".to_vec())],
        payload: b"x".to_vec(),
        confirmable: true,
    };
    // sorted: Uri-Path (delta 11, length 2, "ab"), Content-Format (delta 1, length 0), the
    // payload marker, "x"
    let tail = [0xb2, b'a', b'b', 0x10, 0xff, b'x'];
    let shared = PreparedRequest::from(req);
    for (cc, tkl) in [("default", 0), ("fasor_token", 1)] {
        let mut p = Pair::new(cc, 3);
        p.drop = Box::new(|from, i, _| from == C && i == 0); // the first transmission is lost
        p.client.request(t(0.0), S, shared.clone()).unwrap();
        p.client.request(t(0.0), S, shared.clone()).unwrap();
        p.run_until(100.0);
        let posts: Vec<Vec<u8>> = p.sent_by(C).into_iter().map(|(_, b)| b).filter(|b| b[1] == 0x02).collect();
        assert_eq!(posts.len(), 3, "{cc}: the first request twice, the second once");
        for b in &posts {
            assert_eq!(b[0], 0x40 | tkl, "{cc}: version 1, CON, token length"); // T=00
            assert_eq!(&b[4 + tkl as usize..], &tail, "{cc}");
        }
        // the retransmission keeps the Message ID; under token marking its token is the
        // transmission number, 1 (the first was 0)
        assert_eq!(posts[0][2..4], posts[1][2..4], "{cc}");
        if tkl == 1 {
            assert_eq!((posts[0][4], posts[1][4], posts[2][4]), (0, 1, 0));
        } else {
            assert_eq!(posts[0], posts[1], "{cc}: a retransmission is the same message");
        }
        assert_ne!(posts[1][2..4], posts[2][2..4], "{cc}: the next exchange has its own Message ID");
    }
}

/// RFC 7252 §5.4.3 and §5.4.5: a critical option of a length outside its registered range, or a
/// second occurrence of one that is not repeatable, is unrecognized: 4.02 Bad Option. Elective
/// ones are ignored, and repeatable ones may repeat.
#[test]
fn critical_options_of_a_bad_length_or_repeated_get_bad_option() {
    let answer = |options: &[(u16, &[u8])]| {
        let mut server = coap_endpoint::Endpoint::new(
            Config::new(CcConfig::parse("default").unwrap()),
            rand_chacha::ChaCha8Rng::seed_from_u64(1),
        )
        .unwrap()
        .with_handler(Box::new(coap_endpoint::NotFound));
        server.handle_datagram(t(0.0), 9u8, &get_datagram(&[1], 7, options));
        let mut out = Vec::new();
        let tx = server.poll_transmit(&mut out).expect("an answer");
        Message::decode(&out[..tx.len]).unwrap().code
    };
    let path: &[u8] = b"a";
    // Uri-Path (critical) is 0 to 255 bytes: 256 is unrecognized
    assert_eq!(answer(&[(registry::URI_PATH, &[b'p'; 255])]), Code::NOT_FOUND);
    assert_eq!(answer(&[(registry::URI_PATH, &[b'p'; 256])]), Code::BAD_OPTION);
    // Uri-Path repeats (segments); Block1 (critical) may not
    assert_eq!(answer(&[(registry::URI_PATH, path), (registry::URI_PATH, path)]), Code::NOT_FOUND);
    assert_eq!(
        answer(&[(registry::URI_PATH, path), (registry::BLOCK1, &[0x08]), (registry::BLOCK1, &[0x18])]),
        Code::BAD_OPTION
    );
    // Block1 is 0 to 3 bytes
    assert_eq!(answer(&[(registry::URI_PATH, path), (registry::BLOCK1, &[0, 0, 0, 0x08])]), Code::BAD_OPTION);
    // ETag (elective) is 1 to 8 bytes: 9 is ignored
    assert_eq!(answer(&[(registry::ETAG, &[1; 9]), (registry::URI_PATH, path)]), Code::NOT_FOUND);
}

#[test]
fn a_send_that_returns_late_moves_the_transmission_and_its_timer() {
    // Erbium over a blocking send: the first transmission's send returns 6 ms after the
    // datagram was handed out, and its time and timer start then
    let mut p = Pair::new("default", 7);
    p.client.request(t(0.0), S, Request::get("test")).unwrap();
    let mut buf = Vec::new();
    let tx = p.client.poll_transmit(&mut buf).unwrap();
    let mid = u16::from_be_bytes([buf[2], buf[3]]);
    let armed = p.client.poll_timeout().unwrap();
    let rto0 = secs(armed); // the RTO, from 0 s
    assert!((2.0..3.0).contains(&rto0));
    // a message ID of no exchange, and a time before the transmission's, change nothing
    p.client.send_returned(t(0.006), &tx.dest, mid.wrapping_add(1));
    assert_eq!(p.client.poll_timeout(), Some(armed));
    p.client.send_returned(t(0.006), &tx.dest, mid);
    assert!(close(secs(p.client.poll_timeout().unwrap()), 0.006 + rto0));
    // the datagram taken here never reaches the server (lost): the retransmission follows the
    // moved timer, and the exchange's first transmission reads 6 ms
    p.run_until(100.0);
    let r = &p.reports()[0];
    let s: Vec<f64> = r.sent.iter().map(|&i| secs(i)).collect();
    assert_eq!(s.len(), 2);
    assert!(close(s[0], 0.006));
    assert!(close(s[1], 0.006 + rto0));
    assert_eq!(r.outcome, Outcome::Response(Code::CONTENT));
}
