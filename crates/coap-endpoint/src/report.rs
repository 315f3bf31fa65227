//! What an exchange leaves behind: everything the metrics need, so drivers keep no books.

use coap_cc::{Duration, Instant};
use coap_wire::Code;
use smallvec::SmallVec;

/// Transmissions kept inline by [`PerTransmission`]: an original and RFC 7252's default
/// MAX_RETRANSMIT (4) retransmissions, which every algorithm's defaults keep.
pub const INLINE_TRANSMISSIONS: usize = 5;

/// One value per transmission of an exchange: inline up to [`INLINE_TRANSMISSIONS`], so that
/// an exchange and its report allocate nothing for them (a simulator runs millions); more (a
/// larger MAX_RETRANSMIT, at most 30) go to the heap. It dereferences to a slice.
pub type PerTransmission<T> = SmallVec<[T; INLINE_TRANSMISSIONS]>;

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
    pub sent: PerTransmission<Instant>,
    /// The RTO armed after each transmission (CON only).
    pub rtos: PerTransmission<Duration>,
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

/// One client's exchanges folded as their reports come, in any order: the counts and the ends of
/// its flow that every driver's metrics need (the simulator's per-client records, `coapcc
/// load`'s statistics), without keeping the reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Exchanges folded in.
    pub exchanges: u64,
    /// Those that failed.
    pub failed: u64,
    /// Retransmissions sent.
    pub retransmissions: u64,
    /// Duplicate responses the reports counted.
    pub duplicates: u64,
    /// The largest RTO that expired.
    pub max_expired_rto: Duration,
    /// The exchange of the smallest id and its first transmission.
    first: Option<(ExchangeId, Instant)>,
    /// The exchange of the largest id and its response, if it got one.
    last: Option<(ExchangeId, Option<Instant>)>,
}

impl Tally {
    /// Folds in one exchange's report.
    pub fn add<A>(&mut self, r: &ExchangeReport<A>) {
        self.exchanges += 1;
        self.failed += matches!(r.outcome, Outcome::Failed(_)) as u64;
        self.retransmissions += r.retransmissions() as u64;
        self.duplicates += r.duplicates as u64;
        if let Some(&m) = r.expired_rtos().iter().max() {
            self.max_expired_rto = self.max_expired_rto.max(m);
        }
        if let Some(&sent) = r.sent.first() {
            if self.first.is_none_or(|(id, _)| r.id < id) {
                self.first = Some((r.id, sent));
            }
        }
        if self.last.is_none_or(|(id, _)| r.id > id) {
            self.last = Some((r.id, r.responded_at));
        }
    }

    /// The flow's length: the first exchange's first transmission to the last exchange's
    /// response; `None` if the last exchange got none.
    pub fn flow(&self) -> Option<Duration> {
        match (self.first, self.last) {
            (Some((_, start)), Some((_, Some(end)))) => Some(end - start),
            _ => None,
        }
    }
}
