#![no_main]
//! RFC 7252 datagram decoder on arbitrary bytes: never panics; what decodes re-encodes to the
//! same bytes; the semantic check and option iteration never panic either.
use coap_wire::Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::decode(data) {
        let _ = m.check_semantics();
        let n = m.options.iter().count();
        assert!(n <= data.len());
        assert_eq!(m.to_vec().unwrap(), data);
    } else {
        let _ = Message::peek_header(data);
    }
});
