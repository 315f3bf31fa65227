//! Message types and codes (RFC 7252 §3 and §12.1, RFC 8323 §5 / §11.1).

use core::fmt;

/// The 2-bit message type of an RFC 7252 datagram (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageType {
    /// Confirmable (0): retransmitted until acknowledged.
    Con = 0,
    /// Non-confirmable (1).
    Non = 1,
    /// Acknowledgement (2).
    Ack = 2,
    /// Reset (3).
    Rst = 3,
}

impl MessageType {
    /// The type of the 2-bit field value `v & 3`.
    pub const fn from_bits(v: u8) -> Self {
        match v & 3 {
            0 => MessageType::Con,
            1 => MessageType::Non,
            2 => MessageType::Ack,
            _ => MessageType::Rst,
        }
    }
}

/// An 8-bit code: a 3-bit class and a 5-bit detail, written `c.dd` (RFC 7252 §3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(pub u8);

impl Code {
    /// Builds `class.detail`; both are masked to their field widths.
    pub const fn new(class: u8, detail: u8) -> Self {
        Code(((class & 0x07) << 5) | (detail & 0x1f))
    }
    /// The 3-bit class.
    pub const fn class(self) -> u8 {
        self.0 >> 5
    }
    /// The 5-bit detail.
    pub const fn detail(self) -> u8 {
        self.0 & 0x1f
    }
    /// 0.00: an Empty message (RFC 7252 §4.1).
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Class 0 with a non-zero detail: a method.
    pub const fn is_request(self) -> bool {
        self.class() == 0 && self.detail() != 0
    }
    /// Classes 2, 4 and 5.
    pub const fn is_response(self) -> bool {
        matches!(self.class(), 2 | 4 | 5)
    }
    /// Class 7: RFC 8323 signaling (CSM, Ping, Pong, Release, Abort).
    pub const fn is_signaling(self) -> bool {
        self.class() == 7
    }

    pub const EMPTY: Code = Code::new(0, 0);
    pub const GET: Code = Code::new(0, 1);
    pub const POST: Code = Code::new(0, 2);
    pub const PUT: Code = Code::new(0, 3);
    pub const DELETE: Code = Code::new(0, 4);
    pub const FETCH: Code = Code::new(0, 5);
    pub const PATCH: Code = Code::new(0, 6);
    pub const IPATCH: Code = Code::new(0, 7);
    pub const CREATED: Code = Code::new(2, 1);
    pub const DELETED: Code = Code::new(2, 2);
    pub const VALID: Code = Code::new(2, 3);
    pub const CHANGED: Code = Code::new(2, 4);
    pub const CONTENT: Code = Code::new(2, 5);
    pub const CONTINUE: Code = Code::new(2, 31);
    pub const BAD_REQUEST: Code = Code::new(4, 0);
    pub const UNAUTHORIZED: Code = Code::new(4, 1);
    pub const BAD_OPTION: Code = Code::new(4, 2);
    pub const FORBIDDEN: Code = Code::new(4, 3);
    pub const NOT_FOUND: Code = Code::new(4, 4);
    pub const METHOD_NOT_ALLOWED: Code = Code::new(4, 5);
    pub const NOT_ACCEPTABLE: Code = Code::new(4, 6);
    pub const REQUEST_ENTITY_INCOMPLETE: Code = Code::new(4, 8);
    pub const PRECONDITION_FAILED: Code = Code::new(4, 12);
    pub const REQUEST_ENTITY_TOO_LARGE: Code = Code::new(4, 13);
    pub const UNSUPPORTED_CONTENT_FORMAT: Code = Code::new(4, 15);
    pub const INTERNAL_SERVER_ERROR: Code = Code::new(5, 0);
    pub const NOT_IMPLEMENTED: Code = Code::new(5, 1);
    pub const BAD_GATEWAY: Code = Code::new(5, 2);
    pub const SERVICE_UNAVAILABLE: Code = Code::new(5, 3);
    pub const GATEWAY_TIMEOUT: Code = Code::new(5, 4);
    pub const PROXYING_NOT_SUPPORTED: Code = Code::new(5, 5);
    /// 7.01 Capabilities and Settings Message (RFC 8323 §5.3).
    pub const CSM: Code = Code::new(7, 1);
    /// 7.02 Ping (RFC 8323 §5.4).
    pub const PING: Code = Code::new(7, 2);
    /// 7.03 Pong (RFC 8323 §5.4).
    pub const PONG: Code = Code::new(7, 3);
    /// 7.04 Release (RFC 8323 §5.5).
    pub const RELEASE: Code = Code::new(7, 4);
    /// 7.05 Abort (RFC 8323 §5.6).
    pub const ABORT: Code = Code::new(7, 5);
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.class(), self.detail())
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Code({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_and_detail_fields() {
        // 2.05 = 0b010_00101 = 0x45 (RFC 7252 §12.1.2)
        assert_eq!(Code::CONTENT.0, 0x45);
        assert_eq!(Code::GET.0, 0x01);
        // 7.01 = 0b111_00001 = 0xE1 (RFC 8323 §11.1)
        assert_eq!(Code::CSM.0, 0xE1);
        assert_eq!(Code::NOT_FOUND.to_string(), "4.04");
        assert!(Code::GET.is_request() && !Code::GET.is_response());
        assert!(Code::EMPTY.is_empty() && !Code::EMPTY.is_request());
        assert!(Code::ABORT.is_signaling());
    }
}
