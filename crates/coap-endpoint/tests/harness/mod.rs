//! Two endpoints wired back to back in virtual time, with a per-direction delay and a scripted
//! loss function.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use coap_cc::CcConfig;
use coap_endpoint::{Config, Endpoint, Event, ExchangeReport, Handler, Instant, Reply, RequestId, Response};
use coap_wire::{CoapOption, Code, Message, MessageType, Options};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub const C: u8 = 1;
pub const S: u8 = 2;

pub fn t(secs: f64) -> Instant {
    Instant::from_nanos((secs * 1e9).round() as u64)
}
pub fn secs(i: Instant) -> f64 {
    i.as_nanos() as f64 / 1e9
}

/// Serves 60 bytes to everything and counts the calls; defers when `later` is set.
pub struct TestResource {
    pub calls: Arc<AtomicUsize>,
    pub later: bool,
    pub deferred: Arc<std::sync::Mutex<Vec<RequestId>>>,
}

impl Handler<u8> for TestResource {
    fn handle(&mut self, _now: Instant, _from: &u8, id: RequestId, _req: &Message<'_>) -> Reply {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.later {
            self.deferred.lock().unwrap().push(id);
            Reply::Later
        } else {
            Reply::Now(Response::new(Code::CONTENT, vec![0x55; 60]))
        }
    }
}

/// Decides whether a datagram is lost: (from, its index in its direction, bytes) → drop?
pub type DropFn = Box<dyn FnMut(u8, usize, &[u8]) -> bool>;

pub struct Wire {
    pub at: Instant,
    pub from: u8,
    pub to: u8,
    pub bytes: Vec<u8>,
}

pub struct Pair {
    pub client: Endpoint<u8, ChaCha8Rng>,
    pub server: Endpoint<u8, ChaCha8Rng>,
    pub now: Instant,
    pub up: f64,
    pub down: f64,
    pub drop: DropFn,
    pub sent: [usize; 3],
    pub flight: Vec<Wire>,
    /// every datagram put on the wire (dropped ones too), with its send time
    pub log: Vec<Wire>,
    pub calls: Arc<AtomicUsize>,
    pub deferred: Arc<std::sync::Mutex<Vec<RequestId>>>,
    pub events: Vec<Event<u8>>,
}

impl Pair {
    pub fn new(cc: &str, seed: u64) -> Pair {
        Pair::with(
            Config::new(CcConfig::parse(cc).unwrap()),
            Config::new(CcConfig::parse("default").unwrap()),
            false,
            seed,
        )
    }

    pub fn with(client: Config, server: Config, later: bool, seed: u64) -> Pair {
        let calls = Arc::new(AtomicUsize::new(0));
        let deferred = Arc::new(std::sync::Mutex::new(Vec::new()));
        let res = TestResource { calls: calls.clone(), later, deferred: deferred.clone() };
        Pair {
            client: Endpoint::new(client, ChaCha8Rng::seed_from_u64(seed)).unwrap(),
            server: Endpoint::new(server, ChaCha8Rng::seed_from_u64(seed + 1)).unwrap().with_handler(Box::new(res)),
            now: Instant::ZERO,
            up: 0.1,
            down: 0.1,
            drop: Box::new(|_, _, _| false),
            sent: [0; 3],
            flight: Vec::new(),
            log: Vec::new(),
            calls,
            deferred,
            events: Vec::new(),
        }
    }

    fn flush(&mut self) {
        let mut buf = Vec::new();
        for from in [C, S] {
            loop {
                let ep = if from == C { &mut self.client } else { &mut self.server };
                let Some(tx) = ep.poll_transmit(&mut buf) else { break };
                let bytes = buf[..tx.len].to_vec();
                let idx = self.sent[from as usize];
                self.sent[from as usize] += 1;
                let delay = if from == C { self.up } else { self.down };
                self.log.push(Wire { at: self.now, from, to: tx.dest, bytes: bytes.clone() });
                if !(self.drop)(from, idx, &bytes) {
                    self.flight.push(Wire {
                        at: self.now + coap_cc::Duration::from_secs_f64(delay),
                        from,
                        to: tx.dest,
                        bytes,
                    });
                }
            }
        }
        while let Some(e) = self.client.poll_event() {
            self.events.push(e);
        }
    }

    /// Runs until nothing is left to do or `end` is reached.
    pub fn run_until(&mut self, end: f64) {
        let end = t(end);
        loop {
            self.flush();
            let next_wire = self.flight.iter().map(|w| w.at).min();
            let next = [next_wire, self.client.poll_timeout(), self.server.poll_timeout()].into_iter().flatten().min();
            let Some(next) = next.filter(|&n| n <= end) else {
                self.now = self.now.max(end); // nothing more before `end`: the clock reaches it
                break;
            };
            self.now = self.now.max(next);
            // deliver in send order (FIFO per direction: equal delays keep the order)
            let mut i = 0;
            while i < self.flight.len() {
                if self.flight[i].at <= self.now {
                    let w = self.flight.remove(i);
                    let ep = if w.to == C { &mut self.client } else { &mut self.server };
                    ep.handle_datagram(self.now, w.from, &w.bytes);
                } else {
                    i += 1;
                }
            }
            if self.client.poll_timeout().is_some_and(|d| d <= self.now) {
                self.client.handle_timeout(self.now);
            }
            if self.server.poll_timeout().is_some_and(|d| d <= self.now) {
                self.server.handle_timeout(self.now);
            }
        }
        self.flush();
    }

    pub fn reports(&mut self) -> Vec<ExchangeReport<u8>> {
        self.client.retire_all();
        self.flush();
        let mut v: Vec<_> = self
            .events
            .iter()
            .filter_map(|e| if let Event::Retired(r) = e { Some((**r).clone()) } else { None })
            .collect();
        v.sort_by_key(|r| r.id);
        v
    }

    /// Datagrams from `from` in the log, decoded.
    pub fn sent_by(&self, from: u8) -> Vec<(f64, Vec<u8>)> {
        self.log.iter().filter(|w| w.from == from).map(|w| (secs(w.at), w.bytes.clone())).collect()
    }
}

/// A Confirmable GET with `token`, Message ID `mid` and `options` (put in order), encoded: the
/// datagram a peer would send.
pub fn get_datagram(token: &[u8], mid: u16, options: &[(u16, &[u8])]) -> Vec<u8> {
    let mut list: Vec<CoapOption<'_>> = options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
    list.sort_by_key(|o| o.number);
    let m = Message {
        ty: MessageType::Con,
        code: Code::GET,
        message_id: mid,
        token,
        options: Options::from_list(&list),
        payload: &[],
    };
    let mut buf = vec![0; m.encoded_len()];
    m.encode(&mut buf).expect("a well-formed request");
    buf
}
