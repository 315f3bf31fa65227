//! CoAP messages on the wire.
//!
//! * RFC 7252 §3 datagrams: [`Message`] ([`Message::decode`], [`Message::encode`]).
//! * RFC 8323 §3.2 stream frames (CoAP over TCP): [`Frame`] ([`Frame::decode`],
//!   [`Frame::encode`]), including the signaling codes 7.01–7.05.
//! * The option encoding both framings share ([`Options`], [`CoapOption`]) and a registry of the
//!   options of RFC 7252/7641/7959/7967/8323 plus the experimental transmission-number options
//!   used for accurate RTT samples ([`registry`]).
//!
//! # Contract
//! `no_std`, no allocation (the `alloc` feature only adds `to_vec` helpers), no `unsafe`.
//! Decoding takes untrusted bytes: it borrows from the input (zero copy), validates everything
//! once, returns a typed [`Error`] for every malformed input, and never panics.
//! Encoding writes into a caller's buffer and fails cleanly when it is too small.
#![cfg_attr(not(any(test, feature = "std")), no_std)]

#[cfg(feature = "alloc")]
extern crate alloc;

mod code;
mod datagram;
mod error;
mod option;
pub mod registry;
mod stream;
mod writer;

pub use code::{Code, MessageType};
pub use datagram::Message;
pub use error::Error;
pub use option::{decode_uint, encode_uint, CoapOption, Options, OptionsIter};
pub use stream::{Frame, FrameHeader};

/// Maximum token length (RFC 7252 §3, RFC 8323 §3.2).
pub const MAX_TOKEN_LEN: usize = 8;
/// The payload marker (RFC 7252 §3).
pub const PAYLOAD_MARKER: u8 = 0xFF;
/// Largest option value length the 4-bit + 2-byte extended encoding can express (RFC 7252 §3.1).
pub const MAX_OPTION_VALUE_LEN: usize = 65535 + 269;
