#![no_main]
//! RFC 8323 frame decoder on arbitrary stream bytes: never panics, never reads past the input;
//! consecutive frames are consumed exactly; each re-encodes to the same bytes.
use coap_wire::Frame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok((f, n)) = Frame::decode(rest, 1152) {
        assert!(n > 0 && n <= rest.len());
        assert_eq!(f.to_vec().unwrap(), &rest[..n]);
        rest = &rest[n..];
    }
});
