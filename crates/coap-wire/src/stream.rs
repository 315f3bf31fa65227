//! RFC 8323 §3.2 stream frames (CoAP over TCP / TLS / WebSockets' sibling framing).
//!
//! ```text
//!   0                   1                   2                   3
//!   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |  Len  |  TKL  | Extended Length (0, 1, 2 or 4 bytes) ...
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |      Code     | Token (TKL bytes) ...
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |  Options (if any) ...  |1 1 1 1 1 1 1 1|    Payload (if any) ...
//! ```
//!
//! `Len` is the length of the options and payload (with the marker): 0–12 directly; 13: one
//! extended byte holding `Len - 13`; 14: two bytes holding `Len - 269`; 15: four bytes holding
//! `Len - 65805`. There is no version, type or Message ID: TCP is reliable and ordered.

use crate::option::split_options;
use crate::writer::Writer;
use crate::{Code, Error, Options, MAX_TOKEN_LEN, PAYLOAD_MARKER};

/// What the first bytes of a frame announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Bytes before the token: the Len/TKL byte, the extended length and the code.
    pub header_len: usize,
    /// Token length.
    pub token_len: usize,
    /// Length of the options and payload.
    pub body_len: u64,
}

impl FrameHeader {
    /// Reads the header from the start of a stream buffer. [`Error::Truncated`] means more
    /// bytes are needed; the header is complete once this succeeds, so a reader can refuse an
    /// oversized frame (by [`FrameHeader::frame_len`]) before buffering it.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let &first = bytes.first().ok_or(Error::Truncated)?;
        let tkl = first & 0x0f;
        if tkl as usize > MAX_TOKEN_LEN {
            return Err(Error::InvalidTokenLength(tkl));
        }
        let (ext, offset) = match first >> 4 {
            13 => (1, 13u64),
            14 => (2, 269),
            15 => (4, 65805),
            _ => (0, 0),
        };
        let ext_bytes = bytes.get(1..1 + ext).ok_or(Error::Truncated)?;
        let body_len = if ext == 0 {
            (first >> 4) as u64
        } else {
            ext_bytes.iter().fold(0u64, |a, &b| (a << 8) | b as u64) + offset
        };
        Ok(FrameHeader { header_len: 1 + ext + 1, token_len: tkl as usize, body_len })
    }

    /// Length of the whole frame in bytes.
    pub fn frame_len(&self) -> u64 {
        self.header_len as u64 + self.token_len as u64 + self.body_len
    }
}

/// One RFC 8323 frame: a request, response or signaling message, borrowing its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Method, response code, 0.00 (an empty keep-alive frame), or a 7.xx signaling code.
    pub code: Code,
    /// 0 to 8 bytes.
    pub token: &'a [u8],
    /// Options in order (signaling options are numbered per code; see `registry`).
    pub options: Options<'a>,
    /// The payload (empty for none).
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Decodes the first frame of a stream buffer, returning it and the bytes it took.
    /// [`Error::Truncated`] means the frame is not complete yet; [`Error::FrameTooLarge`] that it
    /// announces more than `max_frame_len` bytes (the connection's Max-Message-Size), which RFC
    /// 8323 §5.3.1 treats as a reason to abort.
    pub fn decode(bytes: &'a [u8], max_frame_len: u64) -> Result<(Self, usize), Error> {
        let h = FrameHeader::parse(bytes)?;
        let len = h.frame_len();
        if len > max_frame_len {
            return Err(Error::FrameTooLarge { len });
        }
        let len = usize::try_from(len).map_err(|_| Error::FrameTooLarge { len })?;
        let frame = bytes.get(..len).ok_or(Error::Truncated)?;
        let code = Code(frame[h.header_len - 1]);
        let (token, body) = frame[h.header_len..].split_at(h.token_len);
        // the frame is complete: an option that overruns it is malformed, never "wait for more"
        let (options, payload) = split_options(body).map_err(|e| match e {
            Error::Truncated => Error::OptionOverrunsFrame,
            e => e,
        })?;
        Ok((Frame { code, token, options, payload }, len))
    }

    fn body_len(&self) -> usize {
        let payload = if self.payload.is_empty() { 0 } else { 1 + self.payload.len() };
        self.options.encoded_len() + payload
    }

    /// Bytes [`Frame::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        let body = self.body_len();
        let ext = match body {
            0..=12 => 0,
            13..=268 => 1,
            269..=65804 => 2,
            _ => 4,
        };
        1 + ext + 1 + self.token.len() + body
    }

    /// Encodes into `buf`, returning the bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if self.token.len() > MAX_TOKEN_LEN {
            return Err(Error::InvalidTokenLength(self.token.len().min(255) as u8));
        }
        self.options.check()?;
        let body = self.body_len();
        let tkl = self.token.len() as u8;
        let mut w = Writer::new(buf);
        match body {
            0..=12 => w.byte(((body as u8) << 4) | tkl)?,
            13..=268 => {
                w.byte((13 << 4) | tkl)?;
                w.byte((body - 13) as u8)?;
            }
            269..=65804 => {
                w.byte((14 << 4) | tkl)?;
                w.put(&((body - 269) as u16).to_be_bytes())?;
            }
            _ => {
                let ext = u32::try_from(body - 65805).map_err(|_| Error::BufferTooSmall)?;
                w.byte((15 << 4) | tkl)?;
                w.put(&ext.to_be_bytes())?;
            }
        }
        w.byte(self.code.0)?;
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
    use crate::registry::{CSM_BLOCK_WISE_TRANSFER, CSM_MAX_MESSAGE_SIZE, URI_PATH};
    use crate::CoapOption;

    #[test]
    fn get_test_over_tcp() {
        // GET /test, token 0x71: body = Uri-Path option (1 + 4 bytes) = 5 → Len 5.
        let expected = [
            0x51, // Len=5, TKL=1
            0x01, // GET
            0x71, // token
            0xB4, b't', b'e', b's', b't', // Uri-Path "test"
        ];
        let opts = [CoapOption { number: URI_PATH, value: b"test" }];
        let f = Frame { code: Code::GET, token: &[0x71], options: Options::from_list(&opts), payload: &[] };
        assert_eq!(f.to_vec().unwrap(), expected);
        assert_eq!(Frame::decode(&expected, 1152).unwrap(), (f, 8));
    }

    #[test]
    fn csm_with_max_message_size_and_block_wise() {
        // 7.01 CSM: Max-Message-Size (2) = 1152 = 0x0480 (2 bytes), Block-Wise-Transfer (4), empty.
        let expected = [
            0x40, // Len=4 (0x22 0x04 0x80 0x20), TKL=0
            0xE1, // 7.01
            0x22, 0x04, 0x80, // delta 2, length 2, 1152
            0x20, // delta 2 (option 4), length 0
        ];
        let mut b = [0; 4];
        let mms = crate::encode_uint(1152, &mut b);
        let opts = [
            CoapOption { number: CSM_MAX_MESSAGE_SIZE, value: mms },
            CoapOption { number: CSM_BLOCK_WISE_TRANSFER, value: &[] },
        ];
        let f = Frame { code: Code::CSM, token: &[], options: Options::from_list(&opts), payload: &[] };
        assert_eq!(f.to_vec().unwrap(), expected);
    }

    #[test]
    fn extended_lengths() {
        // payload p bytes → body = 1 + p. Len field choices at the boundaries of §3.2.
        for (p, first, ext) in [
            (11usize, 0xC0u8, &[][..]),       // body 12: direct
            (12, 0xD0, &[0x00][..]),          // body 13: 13 + 0
            (267, 0xD0, &[0xFF][..]),         // body 268: 13 + 255
            (268, 0xE0, &[0x00, 0x00][..]),   // body 269: 269 + 0
            (65804, 0xF0, &[0, 0, 0, 0][..]), // body 65805: 65805 + 0
        ] {
            let payload = vec![0xAB; p];
            let f = Frame { code: Code::CONTENT, token: &[], options: Options::empty(), payload: &payload };
            let v = f.to_vec().unwrap();
            assert_eq!(v[0], first, "payload {p}");
            assert_eq!(&v[1..1 + ext.len()], ext, "payload {p}");
            assert_eq!(v.len(), 1 + ext.len() + 1 + 1 + p);
            assert_eq!(Frame::decode(&v, u64::MAX).unwrap(), (f, v.len()));
        }
    }

    #[test]
    fn stream_reassembly_and_limits() {
        let f = Frame { code: Code::PING, token: &[1, 2], options: Options::empty(), payload: &[] };
        let v = f.to_vec().unwrap();
        assert_eq!(v, [0x02, 0xE2, 1, 2]);
        for cut in 0..v.len() {
            assert_eq!(Frame::decode(&v[..cut], 1152), Err(Error::Truncated));
        }
        // two frames back to back
        let mut two = v.clone();
        two.extend_from_slice(&v);
        let (_, n) = Frame::decode(&two, 1152).unwrap();
        assert_eq!(Frame::decode(&two[n..], 1152).unwrap().0, f);
        // a frame announcing 4 GiB is refused from its header alone
        let huge = [0xF0, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(matches!(Frame::decode(&huge, 1152), Err(Error::FrameTooLarge { .. })));
        assert_eq!(FrameHeader::parse(&huge).unwrap().frame_len(), 1 + 4 + 1 + 0xFFFF_FFFF + 65805);
    }

    #[test]
    fn malformed_frames() {
        assert_eq!(Frame::decode(&[0x09], 1152), Err(Error::InvalidTokenLength(9)));
        assert_eq!(Frame::decode(&[0xD0], 1152), Err(Error::Truncated));
        assert_eq!(Frame::decode(&[0x10, 0x45, 0xFF], 1152), Err(Error::EmptyPayloadAfterMarker));
        assert_eq!(Frame::decode(&[0x10, 0x45, 0xF1], 1152), Err(Error::ReservedOptionDelta));
        assert_eq!(Frame::decode(&[0x10, 0x45, 0x1F], 1152), Err(Error::ReservedOptionLength));
        // complete frames whose option overruns them: malformed, not "truncated" (a reader that
        // waited for more bytes would buffer everything that follows)
        assert_eq!(Frame::decode(&[0x10, 0x45, 0x01], 1152), Err(Error::OptionOverrunsFrame));
        assert_eq!(Frame::decode(&[0x20, 0x01, 0x77, 0x00], 1152), Err(Error::OptionOverrunsFrame));
        assert_eq!(Frame::decode(&[0x20, 0x01, 0xE0, 0x00], 1152), Err(Error::OptionOverrunsFrame));
        // ... while the same bytes cut short of their announced length still wait for more
        assert_eq!(Frame::decode(&[0x20, 0x01, 0x77], 1152), Err(Error::Truncated));
    }
}
