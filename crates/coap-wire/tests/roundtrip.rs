//! Property tests: arbitrary messages survive encode → decode, and arbitrary bytes never panic
//! the decoders; whatever decodes re-encodes to the very same bytes (the encoding is canonical).

use coap_wire::{CoapOption, Code, Error, Frame, Message, MessageType, Options};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Owned {
    ty: MessageType,
    code: u8,
    mid: u16,
    token: Vec<u8>,
    options: Vec<(u16, Vec<u8>)>,
    payload: Vec<u8>,
}

fn option_value() -> impl Strategy<Value = Vec<u8>> {
    // mostly short values, sometimes long ones to reach the 13 and 14 extended length forms
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..16),
        2 => proptest::collection::vec(any::<u8>(), 12..300),
        1 => proptest::collection::vec(any::<u8>(), 268..1000),
    ]
}

fn owned() -> impl Strategy<Value = Owned> {
    (
        0u8..4,
        1u8..=255,
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..=8),
        proptest::collection::vec((any::<u16>(), option_value()), 0..8),
        proptest::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ty, code, mid, token, mut options, payload)| {
            options.sort_by_key(|o| o.0);
            Owned { ty: MessageType::from_bits(ty), code, mid, token, options, payload }
        })
}

fn options_of(o: &Owned) -> Vec<CoapOption<'_>> {
    o.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn datagram_round_trip(o in owned()) {
        let list = options_of(&o);
        let m = Message {
            ty: o.ty,
            code: Code(o.code),
            message_id: o.mid,
            token: &o.token,
            options: Options::from_list(&list),
            payload: &o.payload,
        };
        let bytes = m.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), m.encoded_len());
        let d = Message::decode(&bytes).unwrap();
        prop_assert_eq!(d, m);
        let back: Vec<_> = d.options.iter().map(|o| (o.number, o.value.to_vec())).collect();
        prop_assert_eq!(back, o.options.clone());
    }

    #[test]
    fn frame_round_trip(o in owned()) {
        let list = options_of(&o);
        let f = Frame { code: Code(o.code), token: &o.token, options: Options::from_list(&list), payload: &o.payload };
        let bytes = f.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), f.encoded_len());
        prop_assert_eq!(Frame::decode(&bytes, u64::MAX).unwrap(), (f, bytes.len()));
    }

    #[test]
    fn arbitrary_datagrams_decode_canonically(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(m) = Message::decode(&bytes) {
            prop_assert_eq!(m.to_vec().unwrap(), bytes);
        }
    }

    #[test]
    fn arbitrary_datagrams_with_valid_header(tail in proptest::collection::vec(any::<u8>(), 0..64), tkl in 0u8..=8, code in 1u8..) {
        let mut bytes = vec![0x40 | tkl, code, 0, 1];
        bytes.extend_from_slice(&tail);
        match Message::decode(&bytes) {
            Ok(m) => prop_assert_eq!(m.to_vec().unwrap(), bytes),
            Err(e) => prop_assert!(!matches!(e, Error::UnsupportedVersion(_) | Error::InvalidTokenLength(_))),
        }
    }

    #[test]
    fn arbitrary_streams_decode_canonically(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok((f, n)) = Frame::decode(&bytes, 1152) {
            prop_assert_eq!(f.to_vec().unwrap(), &bytes[..n]);
        }
    }
}
