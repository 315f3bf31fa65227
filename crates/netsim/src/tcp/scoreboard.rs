//! The sender's retransmission queue: every segment sent and not yet cumulatively acknowledged,
//! with Linux's tags (`TCP_SKB_CB(skb)->sacked`: SACKED_ACKED, LOST, SACKED_RETRANS,
//! EVER_RETRANS) and the counts Linux derives from them (`packets_out`, `sacked_out`,
//! `lost_out`, `retrans_out`, `fackets_out`, `tcp_packets_in_flight`). Each segment is one packet
//! (no TSO, no collapsing). Counts are recomputed from the tags (a connection holds a handful of
//! segments), which keeps them from drifting as Linux's incremental counters are kept from
//! drifting by its `WARN_ON`s.

use std::collections::VecDeque;

use coap_cc::Instant;

/// Selectively acknowledged.
pub const SACKED: u8 = 1;
/// Marked lost.
pub const LOST: u8 = 2;
/// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`).
pub const RETRANS_OUT: u8 = 4;
/// It was retransmitted at least once (`TCPCB_EVER_RETRANS`).
pub const EVER_RETRANS: u8 = 8;

/// A segment in the retransmission queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// First sequence number.
    pub seq: u64,
    /// One past the last (a FIN counts one).
    pub end: u64,
    /// It carries the FIN.
    pub fin: bool,
    /// Its last (re)transmission.
    pub sent_at: Instant,
    /// The tags above.
    pub tags: u8,
}

impl Sent {
    /// Has tag `t`.
    pub fn has(&self, t: u8) -> bool {
        self.tags & t != 0
    }
}

/// The queue, oldest first, and NewReno's emulated `sacked_out` (duplicate ACKs counted when
/// SACK is off; `tcp_add_reno_sack`).
#[derive(Debug, Default)]
pub struct Scoreboard {
    /// The segments.
    pub segs: VecDeque<Sent>,
    /// Duplicate ACKs standing for SACKed segments (SACK off).
    pub reno_sacked: u32,
}

impl Scoreboard {
    /// Segments sent and not cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }
    fn count(&self, t: u8) -> u32 {
        self.segs.iter().filter(|s| s.has(t)).count() as u32
    }
    /// SACKed segments (or, SACK off, duplicate ACKs).
    pub fn sacked_out(&self, sack: bool) -> u32 {
        if sack {
            self.count(SACKED)
        } else {
            self.reno_sacked
        }
    }
    /// Segments marked lost.
    pub fn lost_out(&self) -> u32 {
        self.count(LOST)
    }
    /// Retransmissions in flight.
    pub fn retrans_out(&self) -> u32 {
        self.count(RETRANS_OUT)
    }
    /// FACK's count: segments up to and including the highest SACKed one (SACK off:
    /// `sacked_out + 1`, Linux's `tcp_fackets_out` for Reno).
    pub fn fackets_out(&self, sack: bool) -> u32 {
        if sack {
            self.segs.iter().rposition(|s| s.has(SACKED)).map_or(0, |i| i as u32 + 1)
        } else {
            self.reno_sacked + 1
        }
    }
    /// `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) + retrans_out.
    pub fn in_flight(&self, sack: bool) -> u32 {
        (self.packets_out() + self.retrans_out()).saturating_sub(self.sacked_out(sack) + self.lost_out())
    }
    /// Marks the first `packets` segments lost as Linux's `tcp_mark_head_lost` does (FACK or
    /// NewReno: every segment counts; none beyond `loss_high`); only the head if `head_only`.
    pub fn mark_head_lost(&mut self, packets: u32, head_only: bool, loss_high: u64) {
        let mut cnt = 0;
        for s in self.segs.iter_mut() {
            if s.end > loss_high {
                break;
            }
            cnt += 1;
            if cnt > packets {
                break;
            }
            if !s.has(LOST | SACKED) {
                s.tags |= LOST;
            }
            if head_only {
                break;
            }
        }
    }
    /// NewReno: a duplicate ACK stands for one more segment having left the network, never more
    /// than leave one hole (`tcp_add_reno_sack`, `tcp_limit_reno_sacked`).
    pub fn add_reno_sack(&mut self) {
        let holes = self.lost_out().max(1).min(self.packets_out());
        self.reno_sacked = (self.reno_sacked + 1).min(self.packets_out() - holes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.segs.push_back(Sent { seq: 1 + 10 * i, end: 11 + 10 * i, fin: false, sent_at: Instant::ZERO, tags: 0 });
        }
        b
    }

    #[test]
    fn counts_and_fack_marking() {
        let mut b = board(6);
        b.segs[3].tags |= SACKED;
        b.segs[4].tags |= SACKED;
        assert_eq!((b.packets_out(), b.sacked_out(true), b.fackets_out(true)), (6, 2, 5));
        assert_eq!(b.in_flight(true), 4);
        // FACK: fackets_out 5 − reordering 3 = 2 segments from the head are lost
        b.mark_head_lost(2, false, u64::MAX);
        assert_eq!(b.lost_out(), 2);
        assert!(b.segs[0].has(LOST) && b.segs[1].has(LOST) && !b.segs[2].has(LOST));
        assert_eq!(b.in_flight(true), 2);
        b.segs[0].tags |= RETRANS_OUT | EVER_RETRANS;
        assert_eq!(b.in_flight(true), 3);
    }

    #[test]
    fn reno_sacks_leave_a_hole() {
        let mut b = board(3);
        for _ in 0..5 {
            b.add_reno_sack();
        }
        assert_eq!(b.reno_sacked, 2, "three segments out, one of them the hole");
        assert_eq!(b.fackets_out(false), 3);
    }
}
