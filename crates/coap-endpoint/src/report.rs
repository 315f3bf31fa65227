//! What an exchange leaves behind: everything the metrics need, so drivers keep no books.

use coap_cc::{Duration, Instant};
use coap_wire::Code;

/// Identifies a client exchange of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExchangeId(pub u64);

/// Why an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// The last RTO expired after MAX_RETRANSMIT retransmissions (or a NON got no response).
    Timeout,
    /// The peer answered with RST.
    Reset,
}

/// How an exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A response with this code arrived.
    Response(Code),
    /// It failed.
    Failed(FailReason),
}

/// The record of one exchange, delivered by [`crate::Event::Retired`] once duplicates of its
/// response can no longer arrive (EXCHANGE_LIFETIME after completion, or at
/// [`crate::Endpoint::retire_all`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExchangeReport<A> {
    /// The exchange.
    pub id: ExchangeId,
    /// Where the request went.
    pub dest: A,
    /// Send time of every transmission (the original first).
    pub sent: Vec<Instant>,
    /// The RTO armed after each transmission (CON only).
    pub rtos: Vec<Duration>,
    /// How many of those RTOs expired.
    pub expired: u32,
    /// When the ACK (empty or piggybacked) arrived.
    pub acked_at: Option<Instant>,
    /// When the response arrived.
    pub responded_at: Option<Instant>,
    /// How it ended.
    pub outcome: Outcome,
    /// Responses that arrived after the first one (unnecessary retransmissions' fruit).
    pub duplicates: u32,
}

impl<A> ExchangeReport<A> {
    /// Retransmissions sent.
    pub fn retransmissions(&self) -> u32 {
        self.sent.len().saturating_sub(1) as u32
    }
    /// From the first transmission to the response.
    pub fn rtt(&self) -> Option<Duration> {
        Some(self.responded_at? - *self.sent.first()?)
    }
    /// The RTOs that expired.
    pub fn expired_rtos(&self) -> &[Duration] {
        &self.rtos[..(self.expired as usize).min(self.rtos.len())]
    }
}
