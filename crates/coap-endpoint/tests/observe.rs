//! RFC 7641 Observe between two endpoints in virtual time: registration, notifications every
//! second with growing sequence numbers, cancellation by RST, deregistration with Observe 1,
//! unacknowledged CON notifications, the observer limit, and the end of an observation.

mod harness;

use coap_cc::CcConfig;
use coap_endpoint::{Change, Config, Duration, Endpoint, Event, Handler, Instant, Reply, Request, RequestId, Response};
use coap_wire::{registry, Code, Message, MessageType};
use harness::{t, Pair, C, S};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `/t`: observable; its value counts up every second from the first registration; it ends
/// (4.04) after `last` changes, and its changes are CON when `con`.
struct Ticker {
    n: u32,
    next: Option<Instant>,
    con: bool,
    last: u32,
}

impl Handler<u8> for Ticker {
    fn handle(&mut self, now: Instant, _: &u8, _: RequestId, req: &Message<'_>) -> Reply {
        let mut r = Response::new(Code::CONTENT, self.n.to_string());
        if req.options.get(registry::OBSERVE) == Some(&[][..]) {
            r.options.push((registry::OBSERVE, vec![100]));
            self.next.get_or_insert(now + Duration::from_secs(1));
        }
        Reply::Now(r)
    }
    fn next_change(&self) -> Option<Instant> {
        self.next
    }
    fn changes(&mut self, now: Instant) -> Vec<Change> {
        let Some(t) = self.next.filter(|&t| t <= now) else { return Vec::new() };
        self.n += 1;
        self.next = Some(t + Duration::from_secs(1));
        let response = if self.n > self.last {
            self.next = None;
            Response::new(Code::NOT_FOUND, Vec::new())
        } else {
            Response::new(Code::CONTENT, self.n.to_string())
        };
        vec![Change { path: "t".into(), response, confirmable: self.con }]
    }
}

fn pair(con: bool, last: u32, max_observers: usize) -> Pair {
    let mut cfg = Config::new(CcConfig::parse("default").unwrap());
    cfg.token_len = 2;
    let mut p = Pair::with(cfg.clone(), cfg.clone(), false, 7);
    let mut scfg = cfg;
    scfg.max_observers = max_observers;
    p.server = Endpoint::new(scfg, ChaCha8Rng::seed_from_u64(8)).unwrap().with_handler(Box::new(Ticker {
        n: 0,
        next: None,
        con,
        last,
    }));
    p
}

/// (seq, payload) of every notification so far.
fn notifications(p: &Pair) -> Vec<(Option<u32>, String)> {
    p.events
        .iter()
        .filter_map(|e| match e {
            Event::Notification { seq, payload, .. } => Some((*seq, String::from_utf8_lossy(payload).into_owned())),
            _ => None,
        })
        .collect()
}

/// Registration at 0 s (0.1 s each way): the response carries Observe 100; the resource then
/// changes at 1, 2, … s (from the registration's arrival at 0.1 s: 1.1, 2.1, … s) and each change
/// reaches the client 0.1 s later with the next number: by 5.5 s, values 1 to 5, seq 101 to 105.
#[test]
fn a_registration_brings_a_notification_per_change() {
    let mut p = pair(false, 100, 16);
    let id = p.client.observe(t(0.0), S, Request::get("t")).unwrap();
    p.run_until(5.5);
    let first = p.events.iter().find_map(|e| match e {
        Event::Response { id: i, options, .. } if *i == id => Some(options.clone()),
        _ => None,
    });
    assert_eq!(first.unwrap().iter().find(|o| o.0 == registry::OBSERVE).map(|o| o.1.clone()), Some(vec![100]));
    let n = notifications(&p);
    let want: Vec<(Option<u32>, String)> = (1..=5).map(|k| (Some(100 + k), k.to_string())).collect();
    assert_eq!(n, want);
    assert!(p.events.iter().all(|e| !matches!(e, Event::Notification { id: i, .. } if *i != id)));
    assert_eq!((p.server.observer_count(), p.client.observation_count()), (1, 1));
}

/// Cancelled at 2.5 s: the next notification (NON, 3.2 s) is answered with RST, which removes
/// the observer; nothing arrives after.
#[test]
fn a_cancelled_observation_is_reset_and_forgotten_by_the_server() {
    let mut p = pair(false, 100, 16);
    let id = p.client.observe(t(0.0), S, Request::get("t")).unwrap();
    p.run_until(2.5);
    assert_eq!(notifications(&p).len(), 2);
    p.client.cancel_observation(id);
    p.run_until(6.0);
    assert_eq!(notifications(&p).len(), 2, "nothing reported after the cancellation");
    assert_eq!(p.server.observer_count(), 0);
    let rst = p.sent_by(C).iter().filter(|(_, b)| Message::decode(b).unwrap().ty == MessageType::Rst).count();
    assert_eq!(rst, 1, "one RST, to the first notification after the cancellation");
}

/// CON notifications the client never acknowledges (everything from the client after its
/// registration is lost): the server retransmits each 4 times (timeouts 2–3 s, doubling) and
/// then forgets the observer — by the first notification's give-up, 1.1 + at most
/// 3·(1 + 2 + 4 + 8 + 16) = 94.1 s.
#[test]
fn an_unacknowledged_con_notification_ends_the_observer() {
    let mut p = pair(true, 1000, 16);
    p.drop = Box::new(|from, idx, _| from == C && idx >= 1);
    p.client.observe(t(0.0), S, Request::get("t")).unwrap();
    p.run_until(30.0);
    assert_eq!(p.server.observer_count(), 1);
    p.run_until(95.0);
    assert_eq!(p.server.observer_count(), 0);
}

/// A resource that stops existing: its 4.04 goes without Observe, ends the client's observation
/// (reported with no sequence number) and the server's list.
#[test]
fn a_failing_notification_ends_the_observation() {
    let mut p = pair(false, 2, 16);
    p.client.observe(t(0.0), S, Request::get("t")).unwrap();
    p.run_until(5.0);
    let n = notifications(&p);
    assert_eq!(n, vec![(Some(101), "1".into()), (Some(102), "2".into()), (None, String::new())]);
    assert_eq!((p.server.observer_count(), p.client.observation_count()), (0, 0));
}

fn get(token: &[u8], mid: u16, observe: Option<u8>) -> Vec<u8> {
    let value = observe.map(|v| if v == 0 { vec![] } else { vec![v] });
    let mut options: Vec<(u16, &[u8])> = vec![(registry::URI_PATH, b"t")];
    options.extend(value.as_deref().map(|v| (registry::OBSERVE, v)));
    harness::get_datagram(token, mid, &options)
}

/// RFC 7641 §3.6: a GET with the observation's token and Observe 1 deregisters; the observer
/// limit: a registration beyond it is answered without Observe (not added).
#[test]
fn deregistration_and_the_observer_limit() {
    let mut p = pair(false, 100, 1);
    let s = &mut p.server;
    s.handle_datagram(t(0.0), 10, &get(&[1], 1, Some(0)));
    assert_eq!(s.observer_count(), 1);
    s.handle_datagram(t(0.1), 11, &get(&[2], 2, Some(0)));
    assert_eq!(s.observer_count(), 1, "full");
    let mut buf = Vec::new();
    let mut answers = Vec::new();
    while let Some(tx) = s.poll_transmit(&mut buf) {
        answers.push((tx.dest, Message::decode(&buf[..tx.len]).unwrap().options.get(registry::OBSERVE).is_some()));
    }
    assert_eq!(answers, vec![(10, true), (11, false)]);
    s.handle_datagram(t(0.2), 10, &get(&[1], 3, Some(1)));
    assert_eq!(s.observer_count(), 0, "deregistered");
}

/// Deregistered at 2.5 s (RFC 7641 §3.6): a GET with the registration's token and options and
/// Observe 1 goes out; the server removes the observer and answers it (arriving at 2.7 s: 0.1 s
/// each way) without Observe; the client forgets the observation, and nothing is notified after
/// the two changes of 1.1 and 2.1 s.
#[test]
fn deregistration_sends_a_get_with_observe_1_and_the_observations_token() {
    let mut p = pair(false, 100, 16);
    let id = p.client.observe(t(0.0), S, Request::get("t")).unwrap();
    p.run_until(2.5);
    assert_eq!(notifications(&p).len(), 2);
    let dereg = p.client.deregister(t(2.5), id, Request::get("t")).expect("an observation").unwrap();
    assert_eq!(p.client.observation_count(), 0);
    p.run_until(6.0);
    assert_eq!(notifications(&p).len(), 2, "nothing after the deregistration");
    assert_eq!(p.server.observer_count(), 0);
    let sent: Vec<Vec<u8>> = p.sent_by(C).iter().map(|(_, b)| b.clone()).collect();
    let first = Message::decode(&sent[0]).unwrap();
    let last = sent.iter().map(|b| Message::decode(b).unwrap()).rfind(|m| m.code == Code::GET).unwrap();
    assert_eq!(last.token, first.token, "the observation's token");
    assert_eq!(last.options.get(registry::OBSERVE), Some(&[1u8][..]));
    assert_eq!(last.options.get(registry::URI_PATH), Some(&b"t"[..]));
    let answered = p.events.iter().find_map(|e| match e {
        Event::Response { id: i, options, code, .. } if *i == dereg => Some((*code, options.clone())),
        _ => None,
    });
    let (code, options) = answered.expect("the deregistration is answered");
    assert_eq!(code, Code::CONTENT);
    assert!(options.iter().all(|o| o.0 != registry::OBSERVE), "answered as a plain GET");
    // no observation: nothing to deregister
    assert!(p.client.deregister(t(6.0), id, Request::get("t")).is_none());
}
