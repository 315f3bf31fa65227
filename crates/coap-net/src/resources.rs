//! The server's resources (`coapcc server`):
//! * `/test`: GET → 2.05 with a 60-byte payload and no option, the reference workload's response;
//! * `/time`: GET → 2.05, seconds since the Unix epoch as text; observable (RFC 7641): a GET
//!   with Observe 0 registers, and observers get the new time every second (NON, every sixth
//!   CON);
//! * `/echo`: POST and PUT → 2.04 Changed with the request's payload;
//! * `/.well-known/core`: GET → the resources in RFC 6690 link format (content-format 40).
//!
//! Anything else: 4.04 Not Found; a known path with another method: 4.05 Method Not Allowed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use coap_cc::{Duration, Instant};
use coap_endpoint::{Change, Handler, Reply, RequestId, Response};
use coap_wire::{encode_uint, registry, Code, Message};

/// The reference response payload: 60 bytes.
pub const TEST_PAYLOAD: [u8; 60] = *b"coapcc reference response: sixty bytes of payload, exactly!!";

/// RFC 6690 link format of the resources.
pub const WELL_KNOWN_CORE: &str = r#"</test>;rt="test";ct=0,</time>;rt="time";ct=0;obs,</echo>;rt="echo";ct=0"#;

/// Counters a server exposes.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Requests handed to the resources (duplicates excluded).
    pub requests: AtomicU64,
}

/// The resources.
#[derive(Debug, Default)]
pub struct Resources {
    /// Counters.
    pub stats: Arc<ServerStats>,
    /// When `/time` next changes (from its first request on: every second).
    next_tick: Option<Instant>,
    /// Observe sequence numbers given in registrations' answers.
    seq: u32,
}

impl Resources {
    /// The resources, counting into `stats`.
    pub fn with_stats(stats: Arc<ServerStats>) -> Self {
        Resources { stats, next_tick: None, seq: 0 }
    }
}

fn text_response(code: Code, body: &[u8]) -> Response {
    let mut buf = [0u8; 4];
    let ct = encode_uint(0, &mut buf).to_vec(); // text/plain;charset=utf-8
    Response { code, options: vec![(registry::CONTENT_FORMAT, ct)], payload: body.to_vec() }
}

fn text(code: Code, body: &[u8]) -> Reply {
    Reply::Now(text_response(code, body))
}

/// `/time`'s representation: seconds since the Unix epoch.
fn time_now() -> Response {
    #[allow(clippy::disallowed_methods)] // the resource reports the wall clock
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    text_response(Code::CONTENT, secs.to_string().as_bytes())
}

impl Handler<SocketAddr> for Resources {
    fn next_change(&self) -> Option<Instant> {
        self.next_tick
    }

    fn changes(&mut self, now: Instant) -> Vec<Change> {
        let Some(mut t) = self.next_tick.filter(|&t| t <= now) else { return Vec::new() };
        while t <= now {
            t += Duration::from_secs(1);
        }
        self.next_tick = Some(t);
        vec![Change { path: "time".into(), response: time_now(), confirmable: false }]
    }

    fn handle(&mut self, now: Instant, _from: &SocketAddr, _id: RequestId, req: &Message<'_>) -> Reply {
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let mut path = Vec::new();
        for seg in req.options.get_all(registry::URI_PATH) {
            path.push(seg);
        }
        let m = req.code;
        match (path.as_slice(), m) {
            // exactly the reference response: 2.05, no options, 60 bytes (docs/bottleneck.md)
            ([b"test"], Code::GET) => Reply::Now(Response::new(Code::CONTENT, TEST_PAYLOAD.to_vec())),
            ([b"time"], Code::GET) => {
                let mut r = time_now();
                if req.options.get(registry::OBSERVE).and_then(coap_endpoint::observe::value) == Some(0) {
                    self.seq = (self.seq + 1) % coap_endpoint::observe::SEQ_MODULUS;
                    r.options.push((registry::OBSERVE, coap_endpoint::observe::encode(self.seq)));
                    self.next_tick.get_or_insert(now + Duration::from_secs(1));
                }
                Reply::Now(r)
            }
            ([b"echo"], Code::POST | Code::PUT) => text(Code::CHANGED, req.payload),
            ([b".well-known", b"core"], Code::GET) => {
                let mut buf = [0u8; 4];
                let ct = encode_uint(40, &mut buf).to_vec(); // application/link-format
                Reply::Now(Response {
                    code: Code::CONTENT,
                    options: vec![(registry::CONTENT_FORMAT, ct)],
                    payload: WELL_KNOWN_CORE.as_bytes().to_vec(),
                })
            }
            ([b"test"] | [b"time"] | [b"echo"] | [b".well-known", b"core"], _) => {
                Reply::Now(Response::new(Code::METHOD_NOT_ALLOWED, Vec::new()))
            }
            _ => Reply::Now(Response::new(Code::NOT_FOUND, Vec::new())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_is_sixty_bytes() {
        assert_eq!(TEST_PAYLOAD.len(), 60);
    }
}
