//! Sequences of Observe and block-wise operations against a server with the amplification limit
//! on (an observable resource, a resource answered later, block-wise transfers with small
//! limits), and of notifications into a client that observes: the input is a list of
//! operations (register, deregister, Block1 and Block2 requests, ACK or RST of the server's last
//! CON, a repeat with its last Echo, time passing, raw bytes). Nothing may panic; the server's
//! observers stay within their limit; every output is drained.
#![no_main]

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{
    Block, BlockLimits, Blockwise, Change, Config, Endpoint, Handler, Reply, Request, RequestId, Response,
};
use coap_wire::{registry, CoapOption, Code, Message, MessageType, Options};
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `t`: observable, changing every second; `echo`: the body back; `slow`: answered later;
/// anything else 4.04.
struct Resources {
    next: Option<Instant>,
    n: u32,
}

impl Handler<u8> for Resources {
    fn handle(&mut self, now: Instant, _: &u8, _: RequestId, req: &Message<'_>) -> Reply {
        match req.options.get(registry::URI_PATH).unwrap_or(b"") {
            b"t" => {
                let mut r = Response::new(Code::CONTENT, vec![b't'; 40]);
                if req.options.get(registry::OBSERVE).is_some() {
                    r.options.push((registry::OBSERVE, vec![1]));
                    self.next.get_or_insert(now + Duration::from_secs(1));
                }
                Reply::Now(r)
            }
            b"echo" => Reply::Now(Response::new(Code::CHANGED, req.payload.to_vec())),
            b"slow" => Reply::Later,
            _ => Reply::Now(Response::new(Code::NOT_FOUND, Vec::new())),
        }
    }
    fn next_change(&self) -> Option<Instant> {
        self.next
    }
    fn changes(&mut self, now: Instant) -> Vec<Change> {
        let Some(t) = self.next.filter(|&t| t <= now) else { return Vec::new() };
        self.n += 1;
        self.next = Some(t + Duration::from_secs(1));
        let code = if self.n % 97 == 0 { Code::NOT_FOUND } else { Code::CONTENT };
        vec![Change { path: "t".into(), response: Response::new(code, vec![b'u'; 30]), confirmable: self.n % 3 == 0 }]
    }
}

fn request(code: Code, mid: u16, token: &[u8], path: &[u8], extra: &[(u16, &[u8])], payload: &[u8]) -> Vec<u8> {
    let mut opts = vec![CoapOption { number: registry::URI_PATH, value: path }];
    opts.extend(extra.iter().map(|&(number, value)| CoapOption { number, value }));
    opts.sort_by_key(|o| o.number);
    let m = Message { code, token, options: Options::from_list(&opts), payload, ..Message::empty(MessageType::Con, mid) };
    m.to_vec().unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let mut cfg = Config::new(CcConfig::parse("default").unwrap());
    cfg.amplification_factor = Some(3);
    cfg.amplification_allowance = 200;
    cfg.max_accounts = 2;
    cfg.max_observers = 3;
    cfg.max_deferred = 2;
    cfg.dedup_bytes = 4096;
    let limits = BlockLimits { max_bytes: 4096, max_body: 3000, ..BlockLimits::default() };
    let handler = Blockwise::new(Resources { next: None, n: 0 }, limits);
    let mut server = Endpoint::new(cfg, ChaCha8Rng::seed_from_u64(1)).unwrap().with_handler(Box::new(handler));
    let mut ccfg = Config::new(CcConfig::parse("default").unwrap());
    ccfg.max_observations = 2;
    let mut client = Endpoint::new(ccfg, ChaCha8Rng::seed_from_u64(2)).unwrap();
    let observed = client.observe(Instant::ZERO, 9u8, Request::get("t"));
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    let mut mid: u16 = 0;
    // per peer: the Message ID of the server's last CON to it, and the last Echo value it got
    let mut last_con = [None::<u16>; 4];
    let mut last_echo: [Vec<u8>; 4] = Default::default();
    let mut last_request: [Vec<u8>; 4] = Default::default();
    let mut rest = data;
    while let [op, a, b, tail @ ..] = rest {
        let (op, a, b) = (*op, *a, *b);
        rest = tail;
        let peer = a % 4;
        let token = [b % 4];
        mid = mid.wrapping_add(1);
        let datagram = match op % 9 {
            0 => request(Code::GET, mid, &token, b"t", &[(registry::OBSERVE, &[])], b""),
            1 => request(Code::GET, mid, &token, b"t", &[(registry::OBSERVE, &[1])], b""),
            2 => {
                let block = Block { num: u32::from(b >> 4), more: b & 8 != 0, szx: b & 7 }.encode();
                let n = (usize::from(a) * 4).min(rest.len());
                let (payload, next) = rest.split_at(n);
                rest = next;
                request(Code::POST, mid, &token, b"echo", &[(registry::BLOCK1, &block)], payload)
            }
            3 => {
                let block = Block { num: u32::from(b >> 3), more: false, szx: b & 7 }.encode();
                request(Code::POST, mid, &token, b"echo", &[(registry::BLOCK2, &block)], b"")
            }
            4 => request(Code::GET, mid, &token, b"slow", &[], b""),
            5 => {
                let ty = if b & 1 == 0 { MessageType::Ack } else { MessageType::Rst };
                match last_con[usize::from(peer)] {
                    Some(m) => Message::empty(ty, m).to_vec().unwrap_or_default(),
                    None => continue,
                }
            }
            6 => {
                // the last request again, with the last Echo value this peer was given
                let Ok(m) = Message::decode(&last_request[usize::from(peer)]) else { continue };
                let echo = last_echo[usize::from(peer)].clone();
                let mut opts: Vec<CoapOption<'_>> = m.options.iter().filter(|o| o.number != registry::ECHO).collect();
                opts.push(CoapOption { number: registry::ECHO, value: &echo });
                opts.sort_by_key(|o| o.number);
                let again = Message { options: Options::from_list(&opts), message_id: mid, ..m };
                again.to_vec().unwrap_or_default()
            }
            7 => {
                now = now + Duration::from_millis(u64::from(a) * u64::from(b) * 7);
                server.handle_timeout(now);
                client.handle_timeout(now);
                Vec::new()
            }
            _ => {
                // raw bytes: into the server, and into the client as if from the server it observes
                let n = usize::from(a).min(rest.len());
                let (d, next) = rest.split_at(n);
                rest = next;
                client.handle_datagram(now, 9u8, d);
                d.to_vec()
            }
        };
        if !datagram.is_empty() {
            if op % 9 < 5 {
                last_request[usize::from(peer)] = datagram.clone();
            }
            server.handle_datagram(now, peer, &datagram);
        }
        if op % 9 == 4 && b & 1 == 0 {
            server.respond(now, RequestId(u64::from(b >> 1)), Response::new(Code::CONTENT, vec![b'r'; usize::from(a)]));
        }
        while let Some(t) = server.poll_transmit(&mut buf) {
            let Ok(m) = Message::decode(&buf[..t.len]) else { continue };
            let p = usize::from(t.dest % 4);
            if m.ty == MessageType::Con {
                last_con[p] = Some(m.message_id);
            }
            if let Some(e) = m.options.get(registry::ECHO) {
                last_echo[p] = e.to_vec();
            }
        }
        while client.poll_transmit(&mut buf).is_some() {}
        while server.poll_event().is_some() {}
        while client.poll_event().is_some() {}
        assert!(server.observer_count() <= 3);
        assert!(client.observation_count() <= 2);
    }
    let _ = observed;
});
