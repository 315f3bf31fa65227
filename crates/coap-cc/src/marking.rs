//! Accurate RTT samples by numbering transmissions (FASOR's "accurate RTT samples";
//! draft-ietf-core-fasor-02 §4.4), as a switch every RTT-based algorithm offers: parameter
//! `rtt_marking=none|token|option`.
//!
//! * `token`: the first token byte carries the transmission number; servers echo tokens
//!   unchanged, so no server change is needed. Piggybacked responses only.
//! * `option`: the Retransmission-Count option ([`TRANSMISSION_NUMBER_OPTION`]): the first
//!   request to a peer carries 255 as a probe; if the first piggybacked response does not echo
//!   it, the option is not sent to that peer again (the algorithm falls back to plain samples).

use crate::controller::{Completion, Echo, ExchangeTimer, Marking};
use crate::params::choice;

/// 0xFE04 (65028): Californium's number for its transmission-count option (see coap-wire's
/// registry, which must agree; the endpoint crate tests that it does).
pub const TRANSMISSION_NUMBER_OPTION: u16 = 0xFE04;

choice! {
    /// How transmissions are numbered.
    pub enum MarkingKind { None = "none", Token = "token", Option = "option" }
}

/// Per-destination marking state: the kind, and what the probe learnt (what a controller keeps to
/// number its exchanges' transmissions; public for controllers written outside this crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkingState {
    kind: MarkingKind,
    number: u16,
    /// `None` until the first piggybacked response to a probe.
    peer_echoes: Option<bool>,
}

impl MarkingState {
    /// Numbering of `kind`, with the option `number` where the kind is `option`.
    pub fn new(kind: MarkingKind, number: u16) -> Self {
        MarkingState { kind, number, peer_echoes: None }
    }

    /// The marking of the next exchange.
    pub fn next(&self) -> Marking {
        match (self.kind, self.peer_echoes) {
            (MarkingKind::None, _) | (MarkingKind::Option, Some(false)) => Marking::None,
            (MarkingKind::Token, _) => Marking::Token,
            (MarkingKind::Option, known) => Marking::Option { number: self.number, probe: known.is_none() },
        }
    }

    /// Is the option known to be echoed (the accurate-RTT path is active)?
    pub fn active(&self) -> bool {
        match self.kind {
            MarkingKind::None => false,
            MarkingKind::Token => true,
            MarkingKind::Option => self.peer_echoes == Some(true),
        }
    }

    /// Learns from a completion whether the peer echoes the option.
    pub fn observe(&mut self, ex: &ExchangeTimer, done: &Completion<'_>) {
        if let Marking::Option { .. } = ex.marking {
            if done.piggybacked && self.peer_echoes.is_none() {
                self.peer_echoes = Some(done.echo != Echo::None);
            }
        }
    }
}
