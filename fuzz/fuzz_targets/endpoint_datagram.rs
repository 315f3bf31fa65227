//! Untrusted datagrams into a server endpoint (with block-wise transfers and Echo challenges)
//! and a client endpoint with requests outstanding: the input is a sequence of
//! (peer, time step, length, bytes) records. Nothing may panic; every output is drained.
#![no_main]

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{BlockLimits, Blockwise, Config, Endpoint, NotFound, Request};
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fuzz_target!(|data: &[u8]| {
    let mut server_cfg = Config::new(CcConfig::parse("default").unwrap());
    server_cfg.amplification_factor = Some(3);
    server_cfg.dedup_bytes = 4096;
    let handler = Blockwise::new(NotFound, BlockLimits { max_bytes: 4096, ..BlockLimits::default() });
    let mut server = Endpoint::new(server_cfg, ChaCha8Rng::seed_from_u64(1)).unwrap().with_handler(Box::new(handler));
    let mut client = Endpoint::new(Config::new(CcConfig::parse("cocoa").unwrap()), ChaCha8Rng::seed_from_u64(2)).unwrap();
    let _ = client.request(Instant::ZERO, 9u8, Request::get("a"));
    let _ = client.request(Instant::ZERO, 9u8, Request::get("b"));
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    let mut rest = data;
    while let [peer, step, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (d, next) = tail.split_at(n);
        now = now + Duration::from_millis(u64::from(*step) * 37);
        server.handle_datagram(now, peer % 4, d);
        client.handle_datagram(now, 9u8, d);
        server.handle_timeout(now);
        client.handle_timeout(now);
        while server.poll_transmit(&mut buf).is_some() {}
        while client.poll_transmit(&mut buf).is_some() {}
        while server.poll_event().is_some() {}
        while client.poll_event().is_some() {}
        rest = next;
    }
});
