//! The server's resources (`coapcc server`):
//! * `/test`: GET → 2.05 with a 60-byte payload and no option, the reference workload's response;
//! * `/time`: GET → 2.05, seconds since the Unix epoch as text;
//! * `/echo`: POST and PUT → 2.04 Changed with the request's payload;
//! * `/.well-known/core`: GET → the resources in RFC 6690 link format (content-format 40).
//!
//! Anything else: 4.04 Not Found; a known path with another method: 4.05 Method Not Allowed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use coap_cc::Instant;
use coap_endpoint::{Handler, Reply, RequestId, Response};
use coap_wire::{encode_uint, registry, Code, Message};

/// The reference response payload: 60 bytes.
pub const TEST_PAYLOAD: [u8; 60] = *b"coapcc reference response: sixty bytes of payload, exactly!!";

/// RFC 6690 link format of the resources.
pub const WELL_KNOWN_CORE: &str = r#"</test>;rt="test";ct=0,</time>;rt="time";ct=0,</echo>;rt="echo";ct=0"#;

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
}

fn text(code: Code, body: &[u8]) -> Reply {
    let mut buf = [0u8; 4];
    let ct = encode_uint(0, &mut buf).to_vec(); // text/plain;charset=utf-8
    Reply::Now(Response { code, options: vec![(registry::CONTENT_FORMAT, ct)], payload: body.to_vec() })
}

impl Handler<SocketAddr> for Resources {
    fn handle(&mut self, _now: Instant, _from: &SocketAddr, _id: RequestId, req: &Message<'_>) -> Reply {
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
                #[allow(clippy::disallowed_methods)] // the resource reports the wall clock
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                text(Code::CONTENT, secs.to_string().as_bytes())
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
