//! The amplification limit (RFC 9175 §2.4 applied as RFC 9000 §8.1 does): each vector of a
//! source that never shows it receives (it never answers an Echo challenge nor acknowledges a
//! CON) is sent at most 3× the bytes it sent plus the 1,152-byte allowance, whatever it asks;
//! small answers go unchallenged; a source that proves itself is served without limit.

use coap_cc::CcConfig;
use coap_endpoint::{
    Block, BlockLimits, Blockwise, Change, Config, Duration, Endpoint, Handler, Instant, Reply, RequestId, Response,
};
use coap_wire::{registry, CoapOption, Code, Message, MessageType, Options};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

const ALLOWANCE: u64 = 1152;

/// `small`: 60 bytes; `big`: 1,000 bytes; `echo` (POST): the body back; `slow`: answered
/// later (by the test); `t`: observable, 100 bytes, a change every second; any PUT: 4.00 with a
/// 200-byte diagnostic.
struct Resources {
    next: Option<Instant>,
}

impl Handler<u8> for Resources {
    fn handle(&mut self, now: Instant, _: &u8, _: RequestId, req: &Message<'_>) -> Reply {
        let path = req.options.get(registry::URI_PATH).unwrap_or(b"");
        if req.code == Code::PUT {
            return Reply::Now(Response::new(Code::BAD_REQUEST, vec![b'e'; 200]));
        }
        match path {
            b"small" => Reply::Now(Response::new(Code::CONTENT, vec![b's'; 60])),
            b"big" => Reply::Now(Response::new(Code::CONTENT, vec![b'b'; 1000])),
            b"echo" => Reply::Now(Response::new(Code::CHANGED, req.payload.to_vec())),
            b"slow" => Reply::Later,
            b"t" => {
                let mut r = Response::new(Code::CONTENT, vec![b't'; 100]);
                if req.options.get(registry::OBSERVE) == Some(&[][..]) {
                    r.options.push((registry::OBSERVE, vec![1]));
                    self.next.get_or_insert(now + Duration::from_secs(1));
                }
                Reply::Now(r)
            }
            _ => Reply::Now(Response::new(Code::NOT_FOUND, Vec::new())),
        }
    }
    fn next_change(&self) -> Option<Instant> {
        self.next
    }
    fn changes(&mut self, now: Instant) -> Vec<Change> {
        let Some(t) = self.next.filter(|&t| t <= now) else { return Vec::new() };
        self.next = Some(t + Duration::from_secs(1));
        vec![Change { path: "t".into(), response: Response::new(Code::CONTENT, vec![b't'; 100]), confirmable: false }]
    }
}

/// A server with the limit on (factor 3, the default allowance), and the bytes that crossed
/// between it and each address.
struct Server {
    ep: Endpoint<u8, ChaCha8Rng>,
    now: Instant,
    received: [u64; 8],
    sent: [u64; 8],
    /// every datagram the server sent: (to, bytes)
    out: Vec<(u8, Vec<u8>)>,
}

impl Server {
    fn new() -> Server {
        let mut cfg = Config::new(CcConfig::parse("default").unwrap());
        cfg.amplification_factor = Some(3);
        assert_eq!(cfg.amplification_allowance as u64, ALLOWANCE);
        let res = Resources { next: None };
        let ep = Endpoint::new(cfg, ChaCha8Rng::seed_from_u64(1))
            .unwrap()
            .with_handler(Box::new(Blockwise::new(res, BlockLimits::default())));
        Server { ep, now: Instant::from_nanos(0), received: [0; 8], sent: [0; 8], out: Vec::new() }
    }

    fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let mut buf = Vec::new();
        while let Some(t) = self.ep.poll_transmit(&mut buf) {
            self.sent[t.dest as usize] += t.len as u64;
            self.out.push((t.dest, buf[..t.len].to_vec()));
            got.push(buf[..t.len].to_vec());
        }
        got
    }

    /// Sends `bytes` from `from`; what the server sends at once.
    fn send(&mut self, from: u8, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.received[from as usize] += bytes.len() as u64;
        self.ep.handle_datagram(self.now, from, bytes);
        self.drain()
    }

    /// Lets time run to `secs` after the current time, handling every deadline on the way.
    fn run(&mut self, secs: f64) {
        let end = self.now + Duration::from_secs_f64(secs);
        for _ in 0..100_000 {
            match self.ep.poll_timeout() {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.ep.handle_timeout(self.now);
                    self.drain();
                }
                _ => break,
            }
        }
        self.now = end;
    }

    /// The bound for `from`: 3 × what it sent + the allowance (one account: the runs here stay
    /// inside one 60-s window unless they say otherwise).
    fn bound(&self, from: u8) -> u64 {
        3 * self.received[from as usize] + ALLOWANCE
    }
}

fn request(code: Code, mid: u16, path: &str, extra: &[(u16, &[u8])], payload: &[u8]) -> Vec<u8> {
    let mut opts = vec![CoapOption { number: registry::URI_PATH, value: path.as_bytes() }];
    opts.extend(extra.iter().map(|&(number, value)| CoapOption { number, value }));
    opts.sort_by_key(|o| o.number);
    let m = Message {
        code,
        token: &[0xA5; 8],
        options: Options::from_list(&opts),
        payload,
        ..Message::empty(MessageType::Con, mid)
    };
    m.to_vec().unwrap()
}

fn code_of(bytes: &[u8]) -> Code {
    Message::decode(bytes).unwrap().code
}

#[test]
fn small_answers_to_clients_that_never_answer_echo_go_unchallenged() {
    // aiocoap's and Californium's plain GET: a 20-odd-byte request, a 73-byte answer (more than
    // 3×: the old per-request rule challenged it, and neither library answers a challenge)
    let mut s = Server::new();
    for mid in 0..10 {
        let got = s.send(1, &request(Code::GET, mid, "small", &[], b""));
        assert_eq!(got.len(), 1);
        assert!(got[0].len() > 3 * request(Code::GET, mid, "small", &[], b"").len());
        assert_eq!(code_of(&got[0]), Code::CONTENT);
    }
    assert_eq!(s.ep.echo_challenges(), 0);
}

#[test]
fn large_answers_to_a_source_that_never_answers_are_bounded_whatever_the_method() {
    let mut s = Server::new();
    // 100 small POSTs of a 1,000-byte answer each (the old rule challenged only GET and FETCH)
    // and, from another source, 100 copies of one request (duplicates were re-served)
    let mut content = 0;
    for mid in 0..100 {
        let got = s.send(1, &request(Code::POST, mid, "big", &[], b""));
        content += got.iter().filter(|d| code_of(d) == Code::CONTENT).count();
        s.run(0.05);
    }
    let dup = request(Code::POST, 7, "big", &[], b"");
    for _ in 0..100 {
        s.send(2, &dup);
        s.run(0.05);
    }
    for from in [1, 2] {
        assert!(s.sent[from as usize] <= s.bound(from), "{} > {}", s.sent[from as usize], s.bound(from));
    }
    // the allowance served the first answer; then challenges (26 bytes each, within the 48
    // bytes each 16-byte request earns), and a 1,013-byte answer again whenever the account
    // has room: at most 5,952 / 1,013 of them in all
    assert!((1..=5).contains(&content), "{content}");
    assert!(s.ep.echo_challenges() > 90, "{}", s.ep.echo_challenges());
    let c = s.out.iter().rev().find(|(to, _)| *to == 1).unwrap();
    let m = Message::decode(&c.1).unwrap();
    assert_eq!(m.code, Code::UNAUTHORIZED);
    assert_eq!(m.options.get(registry::ECHO).map(<[u8]>::len), Some(12));
}

#[test]
fn error_texts_and_held_block_wise_downloads_are_bounded() {
    let mut s = Server::new();
    // a 4.00 with a 200-byte text for every small PUT (9.4× in the probe)
    for mid in 0..50 {
        s.send(1, &request(Code::PUT, mid, "x", &[], b""));
    }
    assert!(s.sent[1] <= s.bound(1), "{} > {}", s.sent[1], s.bound(1));
    // one 1-KB POST whose 4-KB answer is held block-wise, then small POSTs asking for its
    // later blocks (94× in the probe)
    let body = vec![b'x'; 1024];
    let four = [body.clone(), body.clone(), body.clone(), body].concat();
    for (i, chunk) in four.chunks(1024).enumerate() {
        let b1 = Block { num: i as u32, more: i < 3, szx: 6 }.encode();
        s.send(2, &request(Code::POST, 100 + i as u16, "echo", &[(registry::BLOCK1, &b1)], chunk));
    }
    for k in 0..200u16 {
        let b2 = Block { num: u32::from(k % 4), more: false, szx: 6 }.encode();
        s.send(2, &request(Code::POST, 200 + k, "echo", &[(registry::BLOCK2, &b2)], b""));
    }
    assert!(s.sent[2] <= s.bound(2), "{} > {}", s.sent[2], s.bound(2));
    assert!(s.received[2] > 4096, "the upload itself counted");
}

#[test]
fn notifications_to_an_observer_that_never_answers_stop_at_the_bound() {
    let mut s = Server::new();
    let got = s.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    assert_eq!(code_of(&got[0]), Code::CONTENT);
    assert_eq!(s.ep.observer_count(), 1);
    // 100-byte notifications every second, a CON every sixth, never acknowledged: the
    // observation ends at the bound, not after the CON's retransmissions (125 in 104 s)
    s.run(50.0);
    assert!(s.sent[1] <= s.bound(1), "{} > {}", s.sent[1], s.bound(1));
    assert_eq!(s.ep.observer_count(), 0);
    assert!(s.ep.amplification_withheld() >= 1);
    // the registration is 15 bytes (4 header, 8 token, Observe 1, Uri-Path "t" 2); its answer and
    // every notification 115 (4, 8, Observe 2, the payload marker and 100 bytes): the account
    // holds 3 × 15 + 1,152 = 1,197 bytes, ⌊1,197 / 115⌋ = 10 datagrams
    assert_eq!(s.received[1], 15);
    let sizes: Vec<usize> = s.out.iter().filter(|(to, _)| *to == 1).map(|(_, d)| d.len()).collect();
    assert_eq!(sizes, vec![115; 10]);
}

#[test]
fn many_registrations_of_one_source_share_its_bound() {
    // 50 tokens toward one victim (1,024 gave about 1,200 datagrams/s in the probe): one account
    let mut s = Server::new();
    for mid in 0..50u16 {
        let token = mid.to_be_bytes();
        let bytes = request(Code::GET, mid, "t", &[(registry::OBSERVE, &[])], b"");
        let mut r = Message::decode(&bytes).unwrap();
        r.token = &token;
        s.send(1, &r.to_vec().unwrap());
    }
    s.run(30.0);
    assert!(s.sent[1] <= s.bound(1), "{} > {}", s.sent[1], s.bound(1));
    assert_eq!(s.ep.observer_count(), 0, "every observation ended at the bound");
}

#[test]
fn an_observer_that_acknowledges_a_con_notification_is_verified_and_keeps_receiving() {
    let mut s = Server::new();
    s.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    // acknowledge every CON notification as it comes
    let mut acked = 0;
    for _ in 0..60 {
        let before = s.out.len();
        s.run(1.0);
        let cons: Vec<u16> = s.out[before..]
            .iter()
            .filter_map(|(_, d)| Message::decode(d).ok().filter(|m| m.ty == MessageType::Con).map(|m| m.message_id))
            .collect();
        for mid in cons {
            s.send(1, &Message::empty(MessageType::Ack, mid).to_vec().unwrap());
            acked += 1;
        }
    }
    assert!(acked >= 5);
    assert_eq!(s.ep.observer_count(), 1);
    assert!(s.sent[1] > s.bound(1), "verified: past the bound ({} ≤ {})", s.sent[1], s.bound(1));
    assert_eq!(s.ep.amplification_withheld(), 0);
}

#[test]
fn a_separate_response_never_acknowledged_stops_at_the_bound() {
    let mut s = Server::new();
    // a small request answered later with 1,000 bytes as a CON the source never acknowledges:
    // each retransmission counts (5 transmissions before)
    s.send(1, &request(Code::GET, 1, "slow", &[], b""));
    s.run(1.0); // the empty ACK
                // the handler's first request (ids count from 0)
    s.ep.respond(s.now, RequestId(0), Response::new(Code::CONTENT, vec![b'b'; 1000]));
    s.drain();
    s.run(120.0);
    assert!(s.sent[1] <= s.bound(1), "{} > {}", s.sent[1], s.bound(1));
    let bigs = s.out.iter().filter(|(_, d)| d.len() > 1000).count();
    assert_eq!(bigs, 1, "the allowance covers one transmission, not its retransmissions");
}

#[test]
fn an_echo_lifts_the_limit_for_its_source() {
    let mut s = Server::new();
    s.send(1, &request(Code::POST, 1, "big", &[], b""));
    let got = s.send(1, &request(Code::POST, 2, "big", &[], b""));
    assert_eq!(code_of(&got[0]), Code::UNAUTHORIZED);
    let echo = Message::decode(&got[0]).unwrap().options.get(registry::ECHO).unwrap().to_vec();
    let got = s.send(1, &request(Code::POST, 3, "big", &[(registry::ECHO, &echo)], b""));
    assert_eq!(code_of(&got[0]), Code::CONTENT);
    for mid in 4..20 {
        assert_eq!(code_of(&s.send(1, &request(Code::POST, mid, "big", &[], b""))[0]), Code::CONTENT);
    }
    assert!(s.sent[1] > s.bound(1));
}

/// The Message IDs of the CON notifications the server sent to `to` from `from_index` on.
fn con_mids(s: &Server, to: u8, from_index: usize) -> Vec<u16> {
    s.out[from_index..]
        .iter()
        .filter(|(dest, _)| *dest == to)
        .filter_map(|(_, d)| Message::decode(d).ok().filter(|m| m.ty == MessageType::Con).map(|m| m.message_id))
        .collect()
}

#[test]
fn spoofed_acknowledgements_predicted_from_the_attackers_own_ids_verify_nothing() {
    // the attacker (2) observes for itself and reads its CON notifications' Message IDs; it
    // registers the victim (1) and acknowledges, as the victim, the IDs next to its own (with
    // one counter for every address the victim's notification takes the ID after or before
    // the attacker's), then every ID within 150 of its own (the probe's 279 ACKs)
    let mut s = Server::new();
    s.send(2, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    s.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    let mut spoofed = 0;
    for _ in 0..40 {
        let before = s.out.len();
        s.run(1.0);
        for own in con_mids(&s, 2, before) {
            s.send(2, &Message::empty(MessageType::Ack, own).to_vec().unwrap());
            let near = [own.wrapping_add(1), own.wrapping_sub(1)];
            let sweep = (0..=300u16).map(|d| own.wrapping_sub(150).wrapping_add(d));
            for guess in near.into_iter().chain(sweep) {
                s.send(1, &Message::empty(MessageType::Ack, guess).to_vec().unwrap());
                spoofed += 1;
            }
        }
    }
    assert!(spoofed > 1000, "{spoofed}");
    assert!(s.ep.source_is_verified(s.now, &2), "the attacker's own acknowledgements verify it");
    assert!(!s.ep.source_is_verified(s.now, &1), "the victim was never verified");
    // what went to the victim: at most 3 × what came "from" it (the attacker's spoofed ACKs
    // included: the attack costs the attacker a third of what the victim receives) + the
    // allowance
    assert!(s.sent[1] <= s.bound(1), "{} > {}", s.sent[1], s.bound(1));
}

#[test]
fn a_blind_sweep_of_every_message_id_verifies_nothing() {
    // the victim (1) registered by the attacker, then all 65,536 Message IDs acknowledged in its
    // name while a CON notification to it is outstanding: the fourth that matches nothing ends
    // the source's chances for the window, whatever matches later
    let mut s = Server::new();
    s.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    s.run(6.5); // notifications every second: the sixth, at 6 s, is confirmable
    assert_eq!(con_mids(&s, 1, 0).len(), 1);
    let dedup = s.ep.dedup_len();
    for mid in 0..=u16::MAX {
        s.send(1, &Message::empty(MessageType::Ack, mid).to_vec().unwrap());
    }
    assert!(!s.ep.source_is_verified(s.now, &1));
    assert_eq!(s.ep.dedup_len(), dedup, "acknowledgements touch no deduplication entry");
    // RSTs the same
    let mut r = Server::new();
    r.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    r.run(6.5);
    for mid in 0..=u16::MAX {
        r.send(1, &Message::empty(MessageType::Rst, mid).to_vec().unwrap());
    }
    assert!(!r.ep.source_is_verified(r.now, &1));
}

#[test]
fn a_legitimate_observer_whose_ack_comes_twice_is_still_verified() {
    // the ACK of a CON notification, then the same ACK again (a copy of the retransmission's):
    // the second matches nothing, one guess, within the budget
    let mut s = Server::new();
    s.send(1, &request(Code::GET, 1, "t", &[(registry::OBSERVE, &[])], b""));
    s.run(6.5);
    let cons = con_mids(&s, 1, 0);
    assert_eq!(cons.len(), 1);
    for mid in cons.iter().chain(cons.iter()) {
        s.send(1, &Message::empty(MessageType::Ack, *mid).to_vec().unwrap());
    }
    assert!(s.ep.source_is_verified(s.now, &1));
}
