//! The CoAP messaging layer of RFC 7252, sans-IO, on top of [`coap_wire`] and [`coap_cc`].
//!
//! # Contract
//! No sockets, no clocks, no threads: the driver (the simulator, or the tokio endpoints) feeds
//! datagrams and time in and takes datagrams and events out. Randomness (Message IDs, tokens,
//! RTO dither) comes from the seeded RNG the endpoint is built with. Nothing here prints.
//!
//! # Driving an endpoint (quinn-proto style)
//! * [`Endpoint::request`] opens an exchange (queued behind NSTART and the controller's pacing).
//! * [`Endpoint::handle_datagram`] with every datagram received.
//! * [`Endpoint::poll_transmit`] until `None` after every call above, sending what it returns.
//! * [`Endpoint::poll_timeout`] gives the next deadline; call [`Endpoint::handle_timeout`] then
//!   (calls at other times are harmless). Housekeeping (cache expiry, retiring finished
//!   exchanges) happens on every call that passes `now` in and sets no deadline of its own;
//!   [`Endpoint::retire_all`] retires what is left at the end of a run.
//! * [`Endpoint::poll_event`] for responses, failures and retired exchange reports.
//!
//! Client side: Message IDs and tokens, CON retransmission on the RTOs of a per-destination
//! [`coap_cc::Controller`] up to its MAX_RETRANSMIT, piggybacked and separate responses, NON
//! requests, RST, NSTART queueing, transmission numbering for accurate RTT samples, and a
//! per-exchange report ([`ExchangeReport`]) that also counts duplicate responses arriving after
//! completion. Server side: a [`Handler`] builds responses; duplicate requests get the cached
//! response for EXCHANGE_LIFETIME (NON_LIFETIME for NON) from a cache with a memory budget; a slow
//! handler gets an empty ACK and a separate response. Both sides of RFC 7641 Observe
//! ([`observe`]): [`Endpoint::observe`] and [`Event::Notification`]; observers and
//! [`Endpoint::notify`] (or a handler's [`Handler::changes`]).

pub mod amplification;
pub mod blockwise;
mod config;
mod dedup;
mod deque;
mod endpoint;
mod finished;
mod keys;
pub mod observe;
mod report;
mod server;
pub mod stream;
mod token;

pub use blockwise::{Block, BlockLimits, Blockwise, Step, Transfer};
pub use coap_cc::{Duration, Instant};
pub use config::{Config, ConfigError, GiveUp};
pub use dedup::ENTRY_OVERHEAD;
pub use endpoint::{Endpoint, Event, RequestError, Transmit};
pub use report::{ExchangeId, ExchangeReport, FailReason, Outcome, PerTransmission, Tally, INLINE_TRANSMISSIONS};
pub use server::{Change, Handler, NotFound, Reply, RequestId, Response};
pub use stream::{CloseReason, Deadline, StreamConnection, StreamEvent, StreamLimits};

/// A request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub code: coap_wire::Code,
    /// Options (any order; the endpoint sorts them stably by number).
    pub options: Vec<(u16, Vec<u8>)>,
    /// The payload.
    pub payload: Vec<u8>,
    /// CON (true) or NON.
    pub confirmable: bool,
}

impl Request {
    /// A CON GET of `path` (segments split on '/').
    pub fn get(path: &str) -> Self {
        let options = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| (coap_wire::registry::URI_PATH, s.as_bytes().to_vec()))
            .collect();
        Request { code: coap_wire::Code::GET, options, payload: Vec::new(), confirmable: true }
    }
}

/// A request with its options sorted and its options and payload encoded once: what an
/// exchange holds. Cloning it clones an `Arc`, so a driver that sends the same request again and
/// again (the simulator, a load generator) prepares it once, and every exchange and every
/// retransmission of it writes only the header and the token in front of the shared bytes.
/// `Request` and `Arc<Request>` convert into it ([`Endpoint::request`] takes either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedRequest(std::sync::Arc<Prepared>);

#[derive(Debug, PartialEq, Eq)]
struct Prepared {
    req: Request,
    /// The encoded options (deltas from 0) and payload (after its marker): what follows the
    /// token. None if it cannot be encoded (invalid options) or has the empty code: each
    /// transmission is then encoded in full (and fails as it would have anyway).
    tail: Option<Vec<u8>>,
    /// Bytes the options take.
    options_len: usize,
}

impl PreparedRequest {
    /// The request (options sorted stably by number).
    pub fn request(&self) -> &Request {
        &self.0.req
    }
    /// Its encoded options and payload, if it can be encoded.
    pub(crate) fn tail(&self) -> Option<&[u8]> {
        self.0.tail.as_deref()
    }
    /// Bytes its options take encoded.
    pub(crate) fn options_len(&self) -> usize {
        self.0.options_len
    }
}

impl From<Request> for PreparedRequest {
    fn from(mut req: Request) -> Self {
        req.options.sort_by_key(|o| o.0); // stable: repeated options keep their order
        let list: Vec<coap_wire::CoapOption<'_>> =
            req.options.iter().map(|(n, v)| coap_wire::CoapOption { number: *n, value: v }).collect();
        let options = coap_wire::Options::from_list(&list);
        let options_len = options.encoded_len();
        let m = coap_wire::Message {
            ty: coap_wire::MessageType::Con,
            code: req.code,
            message_id: 0,
            token: &[],
            options,
            payload: &req.payload,
        };
        // the header is 4 bytes for an empty token: the rest is what every transmission shares
        // (a request with the empty code is left to the full encoder, which refuses a token)
        let tail = if req.code.is_empty() { None } else { m.to_vec().ok().map(|mut v| v.split_off(4)) };
        PreparedRequest(std::sync::Arc::new(Prepared { req, tail, options_len }))
    }
}

impl From<std::sync::Arc<Request>> for PreparedRequest {
    fn from(req: std::sync::Arc<Request>) -> Self {
        std::sync::Arc::unwrap_or_clone(req).into()
    }
}

impl std::ops::Deref for PreparedRequest {
    type Target = Request;
    fn deref(&self) -> &Request {
        &self.0.req
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coap_wire::registry::{CONTENT_FORMAT, URI_PATH};

    #[test]
    fn a_prepared_request_sorts_its_options_stably_and_encodes_them_once() {
        let req = Request {
            code: coap_wire::Code::GET,
            options: vec![(URI_PATH, b"a".to_vec()), (CONTENT_FORMAT, Vec::new()), (URI_PATH, b"b".to_vec())],
            payload: Vec::new(),
            confirmable: true,
        };
        let p = PreparedRequest::from(req);
        let order: Vec<&[u8]> = p.options.iter().map(|o| o.1.as_slice()).collect();
        assert_eq!(order, [&b"a"[..], b"b", b""]);
        // Uri-Path "a" (delta 11), Uri-Path "b" (delta 0), Content-Format (delta 1, empty)
        assert_eq!(p.tail(), Some(&[0xb1, b'a', 0x01, b'b', 0x10][..]));
        assert_eq!(p.options_len(), 5);
    }

    #[test]
    fn a_request_with_the_empty_code_is_left_to_the_full_encoder() {
        let req = Request { code: coap_wire::Code::EMPTY, options: Vec::new(), payload: Vec::new(), confirmable: true };
        assert_eq!(PreparedRequest::from(req).tail(), None);
    }
}
