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
    /// The peer acknowledged the request but sent no separate response within
    /// EXCHANGE_LIFETIME of the first transmission.
    NoSeparateResponse,
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
/// load`'s statistics), without keeping the reports. 72 bytes: the simulator keeps one per host.
#[derive(Debug, Clone, PartialEq)]
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
    /// The exchange of the smallest id and its first transmission ([`NO_EXCHANGE`]: none yet).
    first: (ExchangeId, Instant),
    /// The exchange of the largest id ([`NO_EXCHANGE`]: none yet) and its response ([`NEVER`]:
    /// none).
    last: (ExchangeId, Instant),
}

/// No exchange (an endpoint numbers its exchanges from 0 up and never reaches this).
const NO_EXCHANGE: ExchangeId = ExchangeId(u64::MAX);
/// No response.
const NEVER: Instant = Instant::from_nanos(u64::MAX);

impl Default for Tally {
    fn default() -> Self {
        Tally {
            exchanges: 0,
            failed: 0,
            retransmissions: 0,
            duplicates: 0,
            max_expired_rto: Duration::ZERO,
            first: (NO_EXCHANGE, Instant::ZERO),
            last: (NO_EXCHANGE, NEVER),
        }
    }
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
            if r.id < self.first.0 {
                self.first = (r.id, sent);
            }
        }
        if self.last.0 == NO_EXCHANGE || r.id > self.last.0 {
            self.last = (r.id, r.responded_at.unwrap_or(NEVER));
        }
    }

    /// The flow's length: the first exchange's first transmission to the last exchange's
    /// response; `None` if the last exchange got none.
    pub fn flow(&self) -> Option<Duration> {
        let ((first, start), (last, end)) = (self.first, self.last);
        (first != NO_EXCHANGE && last != NO_EXCHANGE && end != NEVER).then(|| end - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(id: u64, sent: &[u64], responded: Option<u64>) -> ExchangeReport<u32> {
        let t = Instant::from_nanos;
        ExchangeReport {
            id: ExchangeId(id),
            dest: 1,
            sent: sent.iter().map(|&s| t(s)).collect(),
            rtos: PerTransmission::new(),
            expired: 0,
            acked_at: responded.map(t),
            responded_at: responded.map(t),
            outcome: if responded.is_some() {
                Outcome::Response(Code::CONTENT)
            } else {
                Outcome::Failed(FailReason::Timeout)
            },
            duplicates: 0,
        }
    }

    #[test]
    fn the_flow_runs_from_the_first_exchanges_first_send_to_the_last_ones_response() {
        let mut t = Tally::default();
        assert_eq!(t.flow(), None);
        // reports in any order: exchange 2 (sent at 5, answered at 9), 0 (sent at 3 and 4,
        // answered at 7), 1 (sent at 6, never answered)
        t.add(&report(2, &[5], Some(9)));
        t.add(&report(0, &[3, 4], Some(7)));
        t.add(&report(1, &[6], None));
        // from 0's first send (3) to 2's response (9)
        assert_eq!(t.flow(), Some(Duration::from_nanos(6)));
        assert_eq!((t.exchanges, t.failed, t.retransmissions), (3, 1, 1));
        // a later exchange without a response: no flow
        t.add(&report(3, &[10], None));
        assert_eq!(t.flow(), None);
        assert_eq!(std::mem::size_of::<Tally>(), 72);
    }
}
