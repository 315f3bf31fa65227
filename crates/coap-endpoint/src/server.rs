//! The server side: the [`Handler`] trait resources implement and what it returns (the
//! deduplication cache of RFC 7252 §4.5 is [`crate::dedup`]).

use std::sync::Arc;

use coap_cc::Instant;
use coap_wire::{Code, Message};

/// A response to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The response code.
    pub code: Code,
    /// Options (any order; sorted stably by number when encoded).
    pub options: Vec<(u16, Vec<u8>)>,
    /// The payload.
    pub payload: Vec<u8>,
}

impl Response {
    /// A response with a code and payload, no options.
    pub fn new(code: Code, payload: impl Into<Vec<u8>>) -> Self {
        Response { code, options: Vec::new(), payload: payload.into() }
    }
}

/// Identifies a request whose handler answers later ([`crate::Endpoint::respond`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// What a handler does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answer now: piggybacked on the ACK of a CON, or a NON response to a NON.
    Now(Response),
    /// Answer now with a response many requests share (a fixed resource): the deduplication
    /// cache holds it without a copy per request.
    Shared(Arc<Response>),
    /// Answer later with [`crate::Endpoint::respond`]; a CON gets an empty ACK meanwhile.
    Later,
}

impl Reply {
    /// The response to send now (a shared one copied if it is still shared), or None for
    /// [`Reply::Later`].
    pub fn into_response(self) -> Option<Response> {
        match self {
            Reply::Now(r) => Some(r),
            Reply::Shared(r) => Some(Arc::unwrap_or_clone(r)),
            Reply::Later => None,
        }
    }
}

/// The server's resources.
pub trait Handler<A>: Send {
    /// Handles a request (already deduplicated: a retransmission never reaches the handler).
    /// An observable resource answers a GET carrying Observe 0 with an Observe option in its
    /// (success) response: the endpoint then adds the requester to its observers (RFC 7641).
    fn handle(&mut self, now: Instant, from: &A, id: RequestId, request: &Message<'_>) -> Reply;

    /// When one of its observable resources next changes, if ever (the endpoint then calls
    /// [`Handler::changes`] and notifies the observers).
    fn next_change(&self) -> Option<Instant> {
        None
    }

    /// The observable resources that changed by `now`, with their new representations.
    fn changes(&mut self, _now: Instant) -> Vec<Change> {
        Vec::new()
    }
}

/// A new representation of an observable resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its Uri-Path, segments joined by '/' (`"time"`, `"sensors/temp"`).
    pub path: String,
    /// The representation (its Observe option is the endpoint's business).
    pub response: Response,
    /// Send it as CON (else NON, with a CON every [`crate::observe::NON_MAX`]).
    pub confirmable: bool,
}

/// A handler with no resources: 4.04 to everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotFound;

impl<A> Handler<A> for NotFound {
    fn handle(&mut self, _: Instant, _: &A, _: RequestId, _: &Message<'_>) -> Reply {
        Reply::Now(Response::new(Code::NOT_FOUND, Vec::new()))
    }
}
