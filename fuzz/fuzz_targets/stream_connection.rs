//! Untrusted bytes into RFC 8323 connections (a server with block-wise transfers and an
//! observable resource it notifies of changes, a client with requests and an observation
//! outstanding) in arbitrary chunks and at arbitrary times, with every deadline set: nothing may
//! panic, a partial frame stays within the Max-Message-Size, observers within their limit.
#![no_main]

use coap_cc::{Duration, Instant};
use coap_endpoint::stream::MAX_STREAM_OBSERVERS;
use coap_endpoint::{
    BlockLimits, Blockwise, Handler, Reply, Request, RequestId, Response, StreamConnection, StreamLimits,
};
use coap_wire::{registry, Code, Message};

/// Answers everything with 2.05 and `len` bytes, with Observe when asked to register.
struct Observable;

impl Handler<u8> for Observable {
    fn handle(&mut self, _: Instant, _: &u8, _: RequestId, req: &Message<'_>) -> Reply {
        let mut r = Response::new(Code::CONTENT, vec![b'o'; req.payload.len().min(3000)]);
        if req.options.get(registry::OBSERVE).is_some() {
            r.options.push((registry::OBSERVE, vec![1]));
        }
        Reply::Now(r)
    }
}
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = StreamLimits {
        csm: Some(Duration::from_secs(1)),
        frame: Some(Duration::from_secs(1)),
        idle: Some(Duration::from_secs(3)),
        response: Some(Duration::from_secs(2)),
    };
    let handler = Blockwise::new(Observable, BlockLimits { max_bytes: 8192, ..BlockLimits::default() });
    let mut server = StreamConnection::new(1u8, 1152, Some(Box::new(handler) as Box<dyn Handler<u8>>))
        .with_blockwise()
        .with_limits(Instant::ZERO, limits);
    let mut client = StreamConnection::new(2u8, 1152, None).with_limits(Instant::ZERO, limits);
    let _ = client.request(Instant::ZERO, &Request::get("x"));
    let _ = client.observe(Instant::ZERO, &Request::get("x"));
    let mut now = Instant::ZERO;
    let mut rest = data;
    while let [step, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (chunk, next) = tail.split_at(n);
        now = now + Duration::from_millis(u64::from(*step) * 13);
        if step % 5 == 0 {
            let code = if step % 7 == 0 { Code::NOT_FOUND } else { Code::CONTENT };
            server.notify(now, "x", &Response::new(code, chunk.to_vec()));
        }
        for c in [&mut server, &mut client] {
            c.handle_bytes(now, chunk);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            let _ = c.take_output();
            while c.poll_event().is_some() {}
            assert!(c.buffered() <= 1152 + 6);
            assert!(c.observation_count() <= MAX_STREAM_OBSERVERS);
        }
        rest = next;
    }
});
