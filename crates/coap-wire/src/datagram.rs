//! RFC 7252 §3 datagrams.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Ver| T |  TKL  |      Code     |          Message ID           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Token (if any, TKL bytes) ...
//! |   Options (if any) ...
//! |1 1 1 1 1 1 1 1|    Payload (if any) ...
//! ```

use crate::option::split_options;
use crate::writer::Writer;
use crate::{Code, Error, MessageType, Options, MAX_TOKEN_LEN, PAYLOAD_MARKER};

/// A CoAP datagram, borrowing its token, options and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// CON, NON, ACK or RST.
    pub ty: MessageType,
    /// Request method, response code, or 0.00 for Empty.
    pub code: Code,
    /// The 16-bit Message ID.
    pub message_id: u16,
    /// 0 to 8 bytes.
    pub token: &'a [u8],
    /// Options in order.
    pub options: Options<'a>,
    /// The payload (empty for none; the marker is implied).
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The version this implementation speaks (RFC 7252 §3).
    pub const VERSION: u8 = 1;

    /// An Empty message (ACK, RST, or a CON "ping") with this Message ID.
    pub const fn empty(ty: MessageType, message_id: u16) -> Self {
        Message { ty, code: Code::EMPTY, message_id, token: &[], options: Options::empty(), payload: &[] }
    }

    /// Decodes untrusted bytes. Checks the structure of RFC 7252 §3 (version, token length,
    /// option encoding, payload marker, Empty messages); the type/code combination rules of §4
    /// are checked separately by [`Message::check_semantics`].
    pub fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let (header, rest) = bytes.split_first_chunk::<4>().ok_or(Error::Truncated)?;
        let version = header[0] >> 6;
        if version != Self::VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let ty = MessageType::from_bits(header[0] >> 4);
        let tkl = header[0] & 0x0f;
        if tkl as usize > MAX_TOKEN_LEN {
            return Err(Error::InvalidTokenLength(tkl));
        }
        let code = Code(header[1]);
        let message_id = u16::from_be_bytes([header[2], header[3]]);
        //= https://www.rfc-editor.org/rfc/rfc7252#section-4.1
        //# The Token Length field MUST be set to 0 and bytes of data
        //# MUST NOT be present after the Message ID field.  If there are any
        //# bytes, they MUST be processed as a message format error.
        if code.is_empty() && (tkl != 0 || !rest.is_empty()) {
            return Err(Error::NonEmptyEmptyMessage);
        }
        if rest.len() < tkl as usize {
            return Err(Error::Truncated);
        }
        let (token, rest) = rest.split_at(tkl as usize);
        let (options, payload) = split_options(rest)?;
        Ok(Message { ty, code, message_id, token, options, payload })
    }

    /// Type/code rules of RFC 7252 §3, §4.2, §4.3: violations are message format errors
    /// (the receiver rejects a CON with RST and silently drops anything else).
    pub fn check_semantics(&self) -> Result<(), Error> {
        let class = self.code.class();
        //= https://www.rfc-editor.org/rfc/rfc7252#section-3
        //# The class can indicate a request (0), a success response (2), a client
        //# error response (4), or a server error response (5).  (All other
        //# class values are reserved.)
        if !matches!(class, 0 | 2 | 4 | 5) {
            return Err(Error::ReservedCodeClass(class));
        }
        match self.ty {
            MessageType::Non if self.code.is_empty() => Err(Error::EmptyNonConfirmable),
            MessageType::Rst if !self.code.is_empty() => Err(Error::NonEmptyReset),
            MessageType::Ack if self.code.is_request() => Err(Error::RequestInAcknowledgement),
            _ => Ok(()),
        }
    }

    /// The first 4 bytes of a datagram that failed to decode, if they are a version-1 header:
    /// its type and Message ID, which is all a receiver needs to reject it with a Reset.
    pub fn peek_header(bytes: &[u8]) -> Option<(MessageType, u16)> {
        let h = bytes.first_chunk::<4>()?;
        (h[0] >> 6 == Self::VERSION).then(|| (MessageType::from_bits(h[0] >> 4), u16::from_be_bytes([h[2], h[3]])))
    }

    /// Bytes [`Message::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        let payload = if self.payload.is_empty() { 0 } else { 1 + self.payload.len() };
        4 + self.token.len() + self.options.encoded_len() + payload
    }

    /// Encodes into `buf`, returning the number of bytes written. Fails on a token longer than 8
    /// bytes, options out of order, an Empty message with content, or a short buffer.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if self.token.len() > MAX_TOKEN_LEN {
            return Err(Error::InvalidTokenLength(self.token.len().min(255) as u8));
        }
        self.options.check()?;
        if self.code.is_empty() && (!self.token.is_empty() || !self.options.is_empty() || !self.payload.is_empty()) {
            return Err(Error::NonEmptyEmptyMessage);
        }
        let mut w = Writer::new(buf);
        w.byte((Self::VERSION << 6) | ((self.ty as u8) << 4) | self.token.len() as u8)?;
        w.byte(self.code.0)?;
        w.put(&self.message_id.to_be_bytes())?;
        w.put(self.token)?;
        self.options.write(&mut w)?;
        if !self.payload.is_empty() {
            w.byte(PAYLOAD_MARKER)?;
            w.put(self.payload)?;
        }
        Ok(w.written())
    }

    /// Encodes into a new vector.
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> Result<alloc::vec::Vec<u8>, Error> {
        let mut v = alloc::vec![0; self.encoded_len()];
        let n = self.encode(&mut v)?;
        v.truncate(n);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{CONTENT_FORMAT, URI_PATH};
    use crate::CoapOption;

    /// CON GET /test with Message ID 0x1234 and the one-byte token 0x71, worked out from §3:
    static CON_GET_TEST: [u8; 10] = [
        0x41, // Ver=01, T=00 (CON), TKL=0001
        0x01, // Code 0.01 GET
        0x12, 0x34, // Message ID 0x1234
        0x71, // token
        0xB4, // option delta 11 (Uri-Path, 0+11), length 4
        b't', b'e', b's', b't',
    ];

    #[test]
    fn con_get_with_token_and_uri_path() {
        let opts = [CoapOption { number: URI_PATH, value: b"test" }];
        let m = Message {
            ty: MessageType::Con,
            code: Code::GET,
            message_id: 0x1234,
            token: &[0x71],
            options: Options::from_list(&opts),
            payload: &[],
        };
        assert_eq!(m.to_vec().unwrap(), CON_GET_TEST);
        let d = Message::decode(&CON_GET_TEST).unwrap();
        assert_eq!(d, m);
        assert_eq!(d.options.get(URI_PATH), Some(&b"test"[..]));
    }

    #[test]
    fn piggybacked_content_response() {
        // ACK 2.05, MID 0x1234, no token, Content-Format 0 (text/plain: uint 0 = empty value),
        // payload "hi".
        let expected = [
            0x60, // Ver=01, T=10 (ACK), TKL=0
            0x45, // 2.05 Content
            0x12, 0x34, // Message ID
            0xC0, // delta 12 (Content-Format), length 0
            0xFF, // payload marker
            b'h', b'i',
        ];
        let opts = [CoapOption { number: CONTENT_FORMAT, value: &[] }];
        let m = Message {
            ty: MessageType::Ack,
            code: Code::CONTENT,
            message_id: 0x1234,
            token: &[],
            options: Options::from_list(&opts),
            payload: b"hi",
        };
        assert_eq!(m.to_vec().unwrap(), expected);
        assert_eq!(Message::decode(&expected).unwrap(), m);
    }

    #[test]
    fn reference_workload_sizes() {
        // the reference testbed: request = 4-byte header + 6-byte Uri-Path option, no payload: Uri-Path of
        // 5 characters (1 header byte + 5) = 10 bytes; response = 4 + marker + 60 = 65 bytes.
        let opts = [CoapOption { number: URI_PATH, value: b"hello" }];
        let req = Message {
            ty: MessageType::Con,
            code: Code::GET,
            message_id: 1,
            token: &[],
            options: Options::from_list(&opts),
            payload: &[],
        };
        assert_eq!(req.encoded_len(), 10);
        let resp = Message {
            payload: &[0; 60],
            code: Code::CONTENT,
            ty: MessageType::Ack,
            ..Message::empty(MessageType::Ack, 1)
        };
        assert_eq!(resp.to_vec().unwrap().len(), 65);
    }

    #[test]
    fn empty_ack_and_reset() {
        let ack = Message::empty(MessageType::Ack, 0xBEEF);
        assert_eq!(ack.to_vec().unwrap(), [0x60, 0x00, 0xBE, 0xEF]);
        let rst = Message::empty(MessageType::Rst, 7);
        assert_eq!(rst.to_vec().unwrap(), [0x70, 0x00, 0x00, 0x07]);
        assert!(Message::decode(&[0x60, 0, 0, 1]).unwrap().check_semantics().is_ok());
    }

    #[test]
    fn malformed_cases_of_rfc7252() {
        use Error::*;
        let cases: &[(&[u8], Error)] = &[
            (&[0x40, 0x01, 0x00], Truncated),             // header shorter than 4 bytes
            (&[0x80, 0x01, 0, 1], UnsupportedVersion(2)), // §3: version 2
            (&[0x00, 0x01, 0, 1], UnsupportedVersion(0)), // §3: version 0
            (&[0x49, 0x01, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9], InvalidTokenLength(9)), // §3: TKL 9
            (&[0x4F, 0x01, 0, 1], InvalidTokenLength(15)), // §3: TKL 15
            (&[0x42, 0x01, 0, 1, 0xAA], Truncated),       // token shorter than TKL
            (&[0x40, 0x01, 0, 1, 0xF0], ReservedOptionDelta), // §3.1: delta 15, not marker
            (&[0x40, 0x01, 0, 1, 0x1F], ReservedOptionLength), // §3.1: length 15
            (&[0x40, 0x01, 0, 1, 0xFF], EmptyPayloadAfterMarker), // §3: marker, no payload
            (&[0x40, 0x01, 0, 1, 0xD0], Truncated),       // delta 13 without its byte
            (&[0x40, 0x01, 0, 1, 0xE0, 0x01], Truncated), // delta 14 with one byte
            (&[0x40, 0x01, 0, 1, 0x0D], Truncated),       // length 13 without its byte
            (&[0x40, 0x01, 0, 1, 0xB4, b't'], Truncated), // value shorter than length
            // 65535 + 1: delta 14/0xFEF2 (65266+269 = 65535), then delta 1.
            (&[0x40, 0x01, 0, 1, 0xE0, 0xFE, 0xF2, 0x10], OptionNumberOverflow),
            (&[0x41, 0x00, 0, 1, 0xAA], NonEmptyEmptyMessage), // §4.1: Empty with token
            (&[0x60, 0x00, 0, 1, 0xFF, 1], NonEmptyEmptyMessage), // §4.1: Empty with payload
        ];
        for (bytes, err) in cases {
            assert_eq!(Message::decode(bytes), Err(*err), "{bytes:02x?}");
        }
    }

    #[test]
    fn semantic_format_errors() {
        let sem = |b: &[u8]| Message::decode(b).unwrap().check_semantics();
        assert_eq!(sem(&[0x50, 0x00, 0, 1]), Err(Error::EmptyNonConfirmable)); // §4.3
        assert_eq!(sem(&[0x70, 0x45, 0, 1]), Err(Error::NonEmptyReset)); // §4.2
        assert_eq!(sem(&[0x60, 0x01, 0, 1]), Err(Error::RequestInAcknowledgement)); // §4.2
        assert_eq!(sem(&[0x40, 0x21, 0, 1]), Err(Error::ReservedCodeClass(1))); // 1.01
        assert_eq!(sem(&[0x40, 0x61, 0, 1]), Err(Error::ReservedCodeClass(3))); // 3.01
        assert_eq!(sem(&[0x40, 0xC1, 0, 1]), Err(Error::ReservedCodeClass(6))); // 6.01
        assert_eq!(sem(&[0x40, 0xE1, 0, 1]), Err(Error::ReservedCodeClass(7))); // 7.01 over UDP
        assert_eq!(sem(&[0x40, 0x00, 0, 1]), Ok(())); // CON ping
        assert_eq!(Message::peek_header(&[0x40, 0x21, 0xAB, 0xCD, 0xF0]), Some((MessageType::Con, 0xABCD)));
        assert_eq!(Message::peek_header(&[0x80, 0, 0, 0]), None);
    }

    #[test]
    fn encode_rejects_bad_input() {
        let opts = [CoapOption { number: 12, value: &[] }, CoapOption { number: 11, value: &[] }];
        let mut m = Message::empty(MessageType::Con, 1);
        m.code = Code::GET;
        m.options = Options::from_list(&opts);
        assert_eq!(m.to_vec(), Err(Error::OptionsOutOfOrder));
        m.options = Options::empty();
        m.token = &[0; 9];
        assert_eq!(m.to_vec(), Err(Error::InvalidTokenLength(9)));
        m.token = &[1];
        let mut small = [0u8; 4];
        assert_eq!(m.encode(&mut small), Err(Error::BufferTooSmall));
        let e = Message { token: &[1], ..Message::empty(MessageType::Ack, 1) };
        assert_eq!(e.to_vec(), Err(Error::NonEmptyEmptyMessage));
    }
}
