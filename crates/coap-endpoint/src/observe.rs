//! RFC 7641 Observe: the server's list of observers and the client's observations.
//!
//! * Server: a GET with Observe 0 whose (synchronous) answer is a success carrying an Observe
//!   option adds the requester to the resource's observers (at most `Config::max_observers`;
//!   beyond, the answer goes without the option, telling the client it was not added). Any GET
//!   of the same endpoint and token first removes its entry (re-registration replaces it;
//!   Observe 1 deregisters). [`crate::Endpoint::notify`] — or the handler's
//!   [`crate::Handler::changes`] — sends every observer of a path a notification with the next
//!   sequence number (24 bits); a NON notification is sent as CON after [`NON_MAX`] NON in a row
//!   (libcoap's COAP_OBS_MAX_NON) so that a departed observer is noticed: an observer whose CON
//!   notification is never acknowledged, or that answers one with RST, is removed.
//! * Client: a request carrying Observe 0 whose response carries Observe becomes an observation
//!   (at most `Config::max_observations`): later notifications with its token are acknowledged
//!   (CON), filtered for freshness ([`is_fresh`], RFC 7641 §3.4) and reported as
//!   [`crate::Event::Notification`]; one without Observe (an error, or the end) ends it.
//!   [`crate::Endpoint::cancel_observation`] forgets it: its later notifications get RST.

use coap_cc::{Duration, Instant};

use crate::report::ExchangeId;
use crate::token::Token;

/// Observe sequence numbers are 24-bit.
pub const SEQ_MODULUS: u32 = 1 << 24;

/// NON notifications in a row before one goes as CON (libcoap's COAP_OBS_MAX_NON).
pub const NON_MAX: u32 = 5;

/// Whether a notification numbered `v2` that arrived at `t2` is newer than the one numbered
/// `v1` that arrived at `t1` (RFC 7641 §3.4).
pub fn is_fresh(v1: u32, t1: Instant, v2: u32, t2: Instant) -> bool {
    const HALF: u32 = 1 << 23;
    (v1 < v2 && v2 - v1 < HALF) || (v1 > v2 && v1 - v2 > HALF) || t2 > t1 + Duration::from_secs(128)
}

/// An Observe option's value (RFC 7641: up to 3 bytes).
pub fn value(bytes: &[u8]) -> Option<u32> {
    (bytes.len() <= 3).then(|| bytes.iter().fold(0u32, |v, &b| (v << 8) | b as u32))
}

/// The option's minimal encoding of `seq`.
pub fn encode(seq: u32) -> Vec<u8> {
    let b = (seq % SEQ_MODULUS).to_be_bytes();
    let skip = b.iter().take_while(|&&x| x == 0).count();
    b[skip..].to_vec()
}

/// A server's observer.
#[derive(Debug, Clone)]
pub(crate) struct Observer<A> {
    pub peer: A,
    pub token: Token,
    /// The observed resource's Uri-Path, segments joined by '/'.
    pub path: String,
    /// The last sequence number sent.
    pub seq: u32,
    /// The Message ID of the last notification (an RST or an unacknowledged CON of it ends the
    /// observation).
    pub last_mid: Option<u16>,
    pub non_in_a_row: u32,
}

/// A client's observation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observation {
    pub id: ExchangeId,
    /// The newest notification's number and arrival.
    pub seq: u32,
    pub at: Instant,
    /// Cancelled by the application: notifications are answered with RST.
    pub cancelled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: u64) -> Instant {
        Instant::from_nanos(s * 1_000_000_000)
    }

    /// RFC 7641 §3.4's rule, case by case.
    #[test]
    fn freshness() {
        assert!(is_fresh(5, t(0), 6, t(1)), "the next number");
        assert!(!is_fresh(6, t(0), 5, t(1)), "an older number, soon after");
        assert!(!is_fresh(5, t(0), 5, t(1)), "the same number");
        assert!(is_fresh(SEQ_MODULUS - 1, t(0), 0, t(1)), "wrapped around: 2^24 − 1 then 0");
        assert!(!is_fresh(0, t(0), SEQ_MODULUS - 1, t(1)), "…not the other way");
        assert!(!is_fresh(0, t(0), 1 << 23, t(1)), "exactly half the space ahead is not newer");
        assert!(is_fresh(0, t(0), (1 << 23) - 1, t(1)));
        assert!(is_fresh(10, t(0), 3, t(129)), "anything 128 s later is newer");
        assert!(!is_fresh(10, t(0), 3, t(128)));
    }

    #[test]
    fn option_values() {
        assert_eq!(encode(0), Vec::<u8>::new());
        assert_eq!(encode(1), vec![1]);
        assert_eq!(encode(0x1234), vec![0x12, 0x34]);
        assert_eq!(encode(SEQ_MODULUS + 2), vec![2], "24 bits");
        assert_eq!(value(&[]), Some(0));
        assert_eq!(value(&[1, 0, 0]), Some(0x10000));
        assert_eq!(value(&[1, 0, 0, 0]), None);
    }
}
