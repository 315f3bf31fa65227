//! Typed errors of decoding and encoding.

use core::fmt;

/// Why bytes could not be decoded, or a message could not be encoded.
///
/// Variants named after RFC 7252 rules are "message format errors" (RFC 7252 §4.2/§4.3): a
/// receiver rejects a Confirmable message that has one with a Reset and silently drops any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside a header, token, option or extended length.
    Truncated,
    /// A complete stream frame (RFC 8323 §3.2) whose options run past the frame's announced
    /// length. Unlike [`Error::Truncated`], more bytes cannot help: the frame is malformed.
    OptionOverrunsFrame,
    /// RFC 7252 §3: "Messages with unknown version numbers MUST be silently ignored."
    UnsupportedVersion(u8),
    /// RFC 7252 §3 / RFC 8323 §3.2: token lengths 9–15 are reserved and a format error.
    InvalidTokenLength(u8),
    /// RFC 7252 §3.1: option delta nibble 15 in a byte that is not the payload marker.
    ReservedOptionDelta,
    /// RFC 7252 §3.1: option length nibble 15 is reserved.
    ReservedOptionLength,
    /// Option numbers above 65535 (the deltas added up past the 16-bit space).
    OptionNumberOverflow,
    /// RFC 7252 §3: a payload marker followed by a zero-length payload.
    EmptyPayloadAfterMarker,
    /// RFC 7252 §4.1: an Empty message (code 0.00) with a token, options or payload.
    NonEmptyEmptyMessage,
    /// RFC 7252 §4.3: a Non-confirmable message MUST NOT be Empty.
    EmptyNonConfirmable,
    /// RFC 7252 §4.2: a Reset message MUST be Empty.
    NonEmptyReset,
    /// RFC 7252 §4.2: an Acknowledgement carries a response or is Empty, never a request.
    RequestInAcknowledgement,
    /// RFC 7252 §3: code classes other than 0, 2, 4 and 5 are reserved (7 is RFC 8323 signaling).
    ReservedCodeClass(u8),
    /// RFC 8323 §3.2: the frame is longer than the receiver accepts (its Max-Message-Size).
    FrameTooLarge {
        /// Length of the whole frame, in bytes, as its header announces it.
        len: u64,
    },
    /// Encoding: options must be given in order of non-decreasing number.
    OptionsOutOfOrder,
    /// Encoding: an option value longer than [`crate::MAX_OPTION_VALUE_LEN`].
    OptionValueTooLong,
    /// Encoding: the caller's buffer is too small.
    BufferTooSmall,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => f.write_str("message truncated"),
            Error::OptionOverrunsFrame => f.write_str("an option runs past the end of its frame"),
            Error::UnsupportedVersion(v) => write!(f, "unsupported CoAP version {v}"),
            Error::InvalidTokenLength(l) => write!(f, "reserved token length {l}"),
            Error::ReservedOptionDelta => f.write_str("reserved option delta 15"),
            Error::ReservedOptionLength => f.write_str("reserved option length 15"),
            Error::OptionNumberOverflow => f.write_str("option number above 65535"),
            Error::EmptyPayloadAfterMarker => f.write_str("payload marker followed by no payload"),
            Error::NonEmptyEmptyMessage => f.write_str("Empty message (0.00) carries bytes after its header"),
            Error::EmptyNonConfirmable => f.write_str("Non-confirmable message is Empty"),
            Error::NonEmptyReset => f.write_str("Reset message is not Empty"),
            Error::RequestInAcknowledgement => f.write_str("Acknowledgement carries a request"),
            Error::ReservedCodeClass(c) => write!(f, "reserved code class {c}"),
            Error::FrameTooLarge { len } => write!(f, "frame of {len} bytes exceeds the limit"),
            Error::OptionsOutOfOrder => f.write_str("options not in non-decreasing order"),
            Error::OptionValueTooLong => f.write_str("option value too long"),
            Error::BufferTooSmall => f.write_str("output buffer too small"),
        }
    }
}

impl core::error::Error for Error {}
