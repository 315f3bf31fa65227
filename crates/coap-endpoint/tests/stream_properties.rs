//! RFC 8323 connections on untrusted bytes: whatever arrives, in whatever chunks, the
//! connection never panics, keeps its buffers bounded, and writes nothing more once closed.

use coap_cc::Instant;
use coap_endpoint::{NotFound, StreamConnection};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_chunks_never_panic(
        csm_first in any::<bool>(),
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 0..12),
    ) {
        let mut s = StreamConnection::new(1u8, 1152, Some(Box::new(NotFound)));
        let _ = s.take_output();
        if csm_first {
            s.handle_bytes(Instant::ZERO, &[0x00, 0xE1]);
        }
        let mut closed_at = None;
        for (i, c) in chunks.iter().enumerate() {
            s.handle_bytes(Instant::ZERO, c);
            let out = s.take_output();
            // each input byte yields at most one small frame's worth of output (a reply or an Abort)
            prop_assert!(out.len() <= 256 + 64 * c.len(), "{} bytes out for {} in", out.len(), c.len());
            if closed_at.is_some() {
                prop_assert!(out.is_empty(), "output after close");
            }
            // a partial frame is held only up to our Max-Message-Size (plus its header)
            prop_assert!(s.buffered() <= 1152 + 6, "{} bytes buffered", s.buffered());
            if s.is_closed() && closed_at.is_none() {
                closed_at = Some(i);
            }
            while s.poll_event().is_some() {}
        }
    }
}
