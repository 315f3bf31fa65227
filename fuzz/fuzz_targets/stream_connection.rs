//! Untrusted bytes into RFC 8323 connections (a server with a handler, a client with requests
//! outstanding) in arbitrary chunks and at arbitrary times, with every deadline set: nothing may
//! panic, and a partial frame stays within the Max-Message-Size.
#![no_main]

use coap_cc::{Duration, Instant};
use coap_endpoint::{NotFound, Request, StreamConnection, StreamLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = StreamLimits {
        csm: Some(Duration::from_secs(1)),
        frame: Some(Duration::from_secs(1)),
        idle: Some(Duration::from_secs(3)),
        response: Some(Duration::from_secs(2)),
    };
    let mut server = StreamConnection::new(1u8, 1152, Some(Box::new(NotFound))).with_limits(Instant::ZERO, limits);
    let mut client = StreamConnection::new(2u8, 1152, None).with_limits(Instant::ZERO, limits);
    let _ = client.request(Instant::ZERO, &Request::get("x"));
    let mut now = Instant::ZERO;
    let mut rest = data;
    while let [step, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (chunk, next) = tail.split_at(n);
        now = now + Duration::from_millis(u64::from(*step) * 13);
        for c in [&mut server, &mut client] {
            c.handle_bytes(now, chunk);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            let _ = c.take_output();
            while c.poll_event().is_some() {}
            assert!(c.buffered() <= 1152 + 6);
        }
        rest = next;
    }
});
