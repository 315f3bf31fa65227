//! The receiving half of a connection: reassembly, SACK and D-SACK blocks, and when to ACK.
//!
//! * In-order data goes to the application; out-of-order data is kept and reported in SACK
//!   blocks (RFC 2018: the block holding the latest arrival first, then the others, newest
//!   start first — chosen; Linux keeps its own recency order, which differs only with three or
//!   more holes). Data that had all arrived before is reported once in a D-SACK block (RFC 2883).
//! * ACK policy, Linux (`quickack=true`; `tcp_input.c`: `__tcp_ack_snd_check`,
//!   `tcp_event_data_recv`, `tcp_incr_quickack`; `tcp_timer.c`: `tcp_delack_timer_handler`):
//!   ACK at once when more than one MSS is unacknowledged, out-of-order data is held, or the
//!   receiver is in quick-ACK mode (a count of immediate ACKs, [`QUICKACKS`], granted with the
//!   first data, after an idle period longer than the RTO and on duplicate data, and not used
//!   while in interactive "ping-pong" mode, which starts when the application sends data within
//!   the delayed-ACK time of the last arrival and ends when the delayed-ACK timer fires); else
//!   after the delayed-ACK timer (the testbed: a constant 200 ms). A FIN in ESTABLISHED enters
//!   ping-pong mode (its ACK waits, hoping to ride on the application's own FIN).
//! * Textbook (`quickack=false`, RFC 5681 §4.2): an ACK for every second full-sized segment,
//!   at once for out-of-order, duplicate or hole-filling data and for a FIN; else after the timer.

use std::collections::BTreeMap;

use coap_cc::{Duration, Instant};

use super::segment::{SackBlocks, Segment, FIN};

/// Immediate ACKs a quick-ACK mode grants: Linux's `rcv_wnd / (2·rcv_mss)` with its initial
/// receive window of 10 segments (`TCP_DEFAULT_INIT_RCVWND`; small segments such as CoAP's never
/// grow it, `tcp_grow_window` needing 128-byte ones) = 10·MSS / (2·MSS) = 5.
pub const QUICKACKS: u32 = 5;

/// What the receiving half holds.
#[derive(Debug)]
pub struct Receiver {
    /// Next sequence number expected.
    pub rcv_nxt: u64,
    ooo: BTreeMap<u64, Vec<u8>>,
    /// Start of the out-of-order segment that arrived last.
    latest_ooo: u64,
    delivered: Vec<u8>,
    /// The peer's FIN has arrived (in order).
    pub peer_fin: bool,
    /// Sequence number of a FIN that arrived out of order (with data kept in `ooo`).
    ooo_fin: Option<u64>,
    dsack: Option<(u64, u64)>,
    unacked_bytes: u64,
    ack_now: bool,
    delack_deadline: Option<Instant>,
    quick: u32,
    pingpong: bool,
    lrcvtime: Option<Instant>,
    linux: bool,
    mss: u64,
    delayed_ack: Duration,
}

/// What one arriving segment's data turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// No data and no FIN.
    Empty,
    /// New bytes (or the FIN).
    New,
    /// Every byte had arrived before (a spurious or merely late retransmission).
    Duplicate,
}

impl Receiver {
    /// A receiver expecting `rcv_nxt` next.
    pub fn new(linux: bool, mss: u32, delayed_ack: f64) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            latest_ooo: 0,
            delivered: Vec::new(),
            peer_fin: false,
            ooo_fin: None,
            dsack: None,
            unacked_bytes: 0,
            ack_now: false,
            delack_deadline: None,
            quick: 0,
            pingpong: false,
            lrcvtime: None,
            linux,
            mss: mss as u64,
            delayed_ack: Duration::from_secs_f64(delayed_ack),
        }
    }

    /// Takes the bytes received in order so far.
    pub fn read(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.delivered)
    }

    /// An ACK is due now.
    pub fn wants_ack(&self) -> bool {
        self.ack_now
    }

    /// Asks for an immediate ACK (a handshake reply, a reset's answer, a re-ACK in TIME_WAIT).
    pub fn force_ack(&mut self) {
        self.ack_now = true;
    }

    /// The delayed-ACK deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.delack_deadline
    }

    fn incr_quickack(&mut self) {
        self.quick = self.quick.max(QUICKACKS);
    }

    fn enter_quickack_mode(&mut self) {
        self.incr_quickack();
        self.pingpong = false;
    }

    /// The delayed-ACK timer, if it is due at `now`.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.ack_now = true;
            if self.linux && self.pingpong {
                self.pingpong = false; // a missed delayed ACK ends interactive mode
            }
        }
    }

    /// The application sent data at `now` (Linux: within the delayed-ACK time of the last arrival
    /// the connection turns interactive).
    pub fn on_data_sent(&mut self, now: Instant) {
        if self.linux && self.lrcvtime.is_some_and(|t| now - t < self.delayed_ack) {
            self.pingpong = true;
        }
    }

    /// An ACK left (alone or on data): the pending one is answered.
    pub fn on_ack_sent(&mut self) {
        self.ack_now = false;
        self.delack_deadline = None;
        self.unacked_bytes = 0;
        self.dsack = None;
        self.quick = self.quick.saturating_sub(1);
    }

    /// The SACK blocks an ACK sent now carries (`sack` on): D-SACK first, then the held data.
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut b = SackBlocks::default();
        if let Some((s, e)) = self.dsack {
            b.push(s, e);
        }
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for (&s, bytes) in &self.ooo {
            let e = s + bytes.len() as u64;
            match ranges.last_mut() {
                Some(last) if last.1 >= s => last.1 = last.1.max(e),
                _ => ranges.push((s, e)),
            }
        }
        if let Some(i) = ranges.iter().position(|&(s, e)| (s..e).contains(&self.latest_ooo)) {
            let first = ranges.remove(i);
            b.push(first.0, first.1);
        }
        for &(s, e) in ranges.iter().rev() {
            b.push(s, e);
        }
        b
    }

    /// Handles the data (and FIN) of an arriving segment at `now`; `rto` is the connection's
    /// current RTO (Linux re-enters quick-ACK mode after an idle period longer than it).
    pub fn on_data(&mut self, now: Instant, seg: &Segment, rto: f64) -> Arrival {
        let fin = seg.flags & FIN != 0;
        if seg.payload.is_empty() && !fin {
            return Arrival::Empty;
        }
        let end = seg.seq + seg.payload.len() as u64;
        let new_fin = fin && end == self.rcv_nxt && !self.peer_fin;
        if end <= self.rcv_nxt && !new_fin {
            // all of it arrived before: a spurious (or merely late) retransmission
            if !seg.payload.is_empty() {
                self.dsack = Some((seg.seq, end));
            }
            if self.linux {
                self.enter_quickack_mode();
            }
            self.ack_now = true;
            return if seg.payload.is_empty() { Arrival::Empty } else { Arrival::Duplicate };
        }
        if seg.seq > self.rcv_nxt {
            let dup = self.ooo.get(&seg.seq).is_some_and(|b| b.len() >= seg.payload.len());
            if dup {
                self.dsack = Some((seg.seq, end));
            } else if !seg.payload.is_empty() {
                self.ooo.insert(seg.seq, seg.payload.clone());
            }
            if fin {
                self.ooo_fin = Some(end);
            }
            self.latest_ooo = seg.seq;
            self.ack_now = true; // a duplicate ACK tells the sender about the hole
            return if dup { Arrival::Duplicate } else { Arrival::New };
        }
        // in order (perhaps overlapping what came before)
        if self.linux && !seg.payload.is_empty() {
            match self.lrcvtime {
                None => self.incr_quickack(),
                Some(t) if (now - t).as_secs_f64() > rto => self.incr_quickack(),
                Some(_) => {}
            }
            self.lrcvtime = Some(now);
        }
        let had_hole = !self.ooo.is_empty();
        let skip = (self.rcv_nxt - seg.seq) as usize;
        self.delivered.extend_from_slice(&seg.payload[skip.min(seg.payload.len())..]);
        self.unacked_bytes += end.saturating_sub(self.rcv_nxt);
        self.rcv_nxt = self.rcv_nxt.max(end);
        while let Some((&s, _)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            let (s, bytes) = self.ooo.pop_first().expect("present");
            let e = s + bytes.len() as u64;
            if e > self.rcv_nxt {
                let skip = (self.rcv_nxt - s) as usize;
                self.delivered.extend_from_slice(&bytes[skip..]);
                self.unacked_bytes += e - self.rcv_nxt;
                self.rcv_nxt = e;
            }
        }
        let filled_hole = had_hole; // RFC 5681 §4.2: all or part of a gap
        if ((fin && end == self.rcv_nxt) || self.ooo_fin == Some(self.rcv_nxt)) && !self.peer_fin {
            self.peer_fin = true;
            self.rcv_nxt += 1;
            self.unacked_bytes += 1;
            if self.linux {
                self.pingpong = true; // the ACK may ride on the application's FIN
            } else {
                self.ack_now = true;
            }
        }
        let now_needed = if self.linux {
            self.unacked_bytes > self.mss || (self.quick > 0 && !self.pingpong) || !self.ooo.is_empty() || filled_hole
        } else {
            self.unacked_bytes >= 2 * self.mss || !self.ooo.is_empty() || filled_hole
        };
        if now_needed {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delayed_ack);
        }
        Arrival::New
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64) -> Instant {
        Instant::from_nanos((s * 1e9).round() as u64)
    }

    fn data(seq: u64, len: usize) -> Segment {
        Segment { seq, payload: vec![0; len], ..Segment::default() }
    }

    fn at(seq: u64) -> Receiver {
        let mut r = Receiver::new(true, 256, 0.2);
        r.rcv_nxt = seq;
        r
    }

    /// Linux: the first data grants 5 quick ACKs; the sixth small segment waits for the timer.
    #[test]
    fn quickack_mode_at_the_start_then_delayed() {
        let mut r = at(1);
        for i in 0..5 {
            assert_eq!(r.on_data(t(i as f64), &data(1 + 10 * i, 10), 1.0), Arrival::New);
            assert!(r.wants_ack(), "segment {i} is acknowledged at once");
            r.on_ack_sent();
        }
        r.on_data(t(5.0), &data(51, 10), 1.0);
        assert!(!r.wants_ack());
        assert_eq!(r.deadline(), Some(t(5.2)));
        r.on_timeout(t(5.2));
        assert!(r.wants_ack());
    }

    /// Textbook: the first small segment already waits; a second full-sized one is ACKed at once.
    #[test]
    fn textbook_acks_every_second_full_segment() {
        let mut r = Receiver::new(false, 256, 0.2);
        r.rcv_nxt = 1;
        r.on_data(t(0.0), &data(1, 10), 1.0);
        assert!(!r.wants_ack());
        assert_eq!(r.deadline(), Some(t(0.2)));
        r.on_data(t(0.1), &data(11, 256), 1.0);
        assert!(!r.wants_ack(), "266 bytes: less than two full segments");
        r.on_data(t(0.1), &data(267, 256), 1.0);
        assert!(r.wants_ack());
    }

    /// Sending data within 200 ms of an arrival makes the connection interactive: its quick ACKs
    /// are not used; the delayed-ACK timer ends the mode.
    #[test]
    fn pingpong_mode_delays_acks_until_the_timer_fires() {
        let mut r = at(1);
        r.on_data(t(0.0), &data(1, 10), 1.0);
        r.on_data_sent(t(0.05)); // an answer: interactive
        r.on_ack_sent(); // it carried the ACK
        r.on_data(t(1.0), &data(11, 10), 10.0);
        assert!(!r.wants_ack(), "ping-pong: the quick ACKs left are not used");
        r.on_timeout(t(1.2));
        assert!(r.wants_ack());
        r.on_ack_sent();
        r.on_data(t(2.0), &data(21, 10), 10.0);
        assert!(r.wants_ack(), "out of ping-pong mode, quick ACKs again");
    }

    #[test]
    fn sack_and_dsack_blocks() {
        let mut r = at(1);
        r.on_data(t(0.0), &data(21, 10), 1.0); // hole 1..21
        r.on_data(t(0.0), &data(51, 10), 1.0);
        assert_eq!(r.sack_blocks().as_slice(), &[(51, 61), (21, 31)], "the latest arrival's block first");
        r.on_data(t(0.0), &data(31, 10), 1.0); // joins 21..31
        assert_eq!(r.sack_blocks().as_slice(), &[(21, 41), (51, 61)]);
        r.on_data(t(0.1), &data(1, 20), 1.0); // fills the first hole
        assert_eq!(r.rcv_nxt, 41);
        assert_eq!(r.read().len(), 40);
        assert!(r.wants_ack(), "a filled hole is ACKed at once");
        r.on_ack_sent();
        assert_eq!(r.on_data(t(0.2), &data(1, 20), 1.0), Arrival::Duplicate);
        assert_eq!(r.sack_blocks().as_slice(), &[(1, 21), (51, 61)], "D-SACK first");
        r.on_ack_sent();
        assert_eq!(r.sack_blocks().as_slice(), &[(51, 61)], "a D-SACK is reported once");
    }

    #[test]
    fn fin_in_established_waits_for_the_applications_fin_under_linux() {
        let mut r = at(1);
        r.on_data(t(0.0), &data(1, 10), 1.0);
        r.on_ack_sent();
        let fin = Segment { flags: FIN, seq: 11, ..Segment::default() };
        r.on_data(t(0.5), &fin, 1.0);
        assert!(r.peer_fin);
        assert_eq!(r.rcv_nxt, 12);
        assert!(!r.wants_ack());
        assert_eq!(r.deadline(), Some(t(0.7)));
        let mut tb = Receiver::new(false, 256, 0.2);
        tb.rcv_nxt = 11;
        tb.on_data(t(0.5), &fin, 1.0);
        assert!(tb.wants_ack(), "textbook: a FIN is ACKed at once");
    }
}
