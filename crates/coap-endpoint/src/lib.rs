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

pub mod blockwise;
mod config;
mod endpoint;
pub mod observe;
mod report;
mod server;
pub mod stream;
mod token;

pub use blockwise::{Block, BlockLimits, Blockwise, Step, Transfer};
pub use coap_cc::{Duration, Instant};
pub use config::{Config, ConfigError, GiveUp};
pub use endpoint::{Endpoint, Event, RequestError, Transmit};
pub use report::{ExchangeId, ExchangeReport, FailReason, Outcome, Tally};
pub use server::{Change, Handler, NotFound, Reply, RequestId, Response, ENTRY_OVERHEAD};
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
