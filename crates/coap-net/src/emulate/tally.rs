//! What the emulator reads off the TCP segments it carries, in the simulator's terms, without
//! asking either kernel: per client, retransmissions of its data segments, the longest wait
//! before a segment it sent was sent again (an expired retransmission timer: the RTO, or a tail
//! loss probe's timeout where one fired first), and duplicates (data segments delivered whose
//! bytes had all been delivered before, either way).
//!
//! A connection is a client's (address, port); each direction keeps the highest sequence number
//! sent and delivered and the last segment's start and time. A SYN with a new initial sequence
//! number starts the direction afresh (a port used again). At most `max_flows` connections are
//! followed at once; one with no segment for [`IDLE`] is forgotten, and segments of connections
//! beyond the cap are counted as untracked.

use std::collections::HashMap;

use coap_cc::{Duration, Instant};

use super::packet::TcpSeg;

/// A connection without a segment this long is forgotten.
pub const IDLE: Duration = Duration::from_secs(300);

/// Counts of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirCounts {
    /// Data segments (with payload) offered to the network.
    pub data_segments: u64,
    /// Of those, retransmissions (starting below the highest sequence number sent).
    pub retransmissions: u64,
    /// Data segments delivered whose bytes had all been delivered before.
    pub duplicates: u64,
}

/// Counts of one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCounts {
    /// Its retransmitted data segments.
    pub retransmissions: u64,
    /// The longest time between two transmissions of the same segment it sent (SYN included).
    pub max_gap: Duration,
    /// The same of the server's segments to it.
    pub max_gap_down: Duration,
    /// Duplicates delivered on its connections, either way.
    pub duplicates: u64,
}

/// Everything counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpReport {
    /// Clients to server.
    pub up: DirCounts,
    /// Server to clients.
    pub down: DirCounts,
    /// Per client (by index).
    pub clients: Vec<ClientCounts>,
    /// Segments of connections beyond the cap, not followed.
    pub untracked: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Side {
    started: bool,
    isn: u32,
    high: u32,
    last_seq: u32,
    last_tx: Instant,
    delivered_started: bool,
    delivered: u32,
}

/// `a` before `b` in sequence space.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl Side {
    /// A segment sent at `now`: whether it is a retransmission, and the wait since the same
    /// segment was last sent.
    fn sent(&mut self, s: &TcpSeg, now: Instant) -> (bool, Option<Duration>) {
        let end = s.seq.wrapping_add(s.seq_len());
        if s.syn && self.started && s.seq != self.isn {
            *self = Side::default(); // a new connection on the same port
        }
        if !self.started {
            *self = Side { started: true, isn: if s.syn { s.seq } else { 0 }, high: end, ..*self };
            (self.last_seq, self.last_tx) = (s.seq, now);
            return (false, None);
        }
        let again = before(s.seq, self.high);
        let gap = (again && s.seq == self.last_seq).then(|| now - self.last_tx);
        if before(self.high, end) {
            self.high = end;
        }
        (self.last_seq, self.last_tx) = (s.seq, now);
        (again, gap)
    }

    /// A data segment delivered: whether all its bytes had been delivered before.
    fn delivered(&mut self, s: &TcpSeg) -> bool {
        let end = s.seq.wrapping_add(s.seq_len());
        if !self.delivered_started {
            (self.delivered_started, self.delivered) = (true, end);
            return false;
        }
        let duplicate = s.payload > 0 && !before(self.delivered, end);
        if before(self.delivered, end) {
            self.delivered = end;
        }
        duplicate
    }
}

#[derive(Debug, Default)]
struct Flow {
    up: Side,
    down: Side,
    last: Instant,
}

/// The tally.
#[derive(Debug)]
pub struct Tally {
    flows: HashMap<(u32, u16), Flow>,
    max_flows: usize,
    report: TcpReport,
}

impl Tally {
    /// A tally of `clients` clients following at most `max_flows` connections.
    pub fn new(clients: u32, max_flows: usize) -> Tally {
        let report = TcpReport { clients: vec![ClientCounts::default(); clients as usize], ..TcpReport::default() };
        Tally { flows: HashMap::new(), max_flows, report }
    }

    fn flow(&mut self, client: u32, port: u16, now: Instant) -> Option<&mut Flow> {
        let key = (client, port);
        if !self.flows.contains_key(&key) {
            if self.flows.len() >= self.max_flows {
                self.sweep(now);
            }
            if self.flows.len() >= self.max_flows {
                self.report.untracked += 1;
                return None;
            }
        }
        let f = self.flows.entry(key).or_default();
        f.last = now;
        Some(f)
    }

    /// A segment offered to the network at `now` by `client` (`up`) or to it.
    pub fn sent(&mut self, client: u32, up: bool, s: &TcpSeg, now: Instant) {
        let port = if up { s.sport } else { s.dport };
        if s.rst {
            self.flows.remove(&(client, port));
            return;
        }
        if s.seq_len() == 0 {
            return;
        }
        let Some(f) = self.flow(client, port, now) else { return };
        let (again, gap) = if up { f.up.sent(s, now) } else { f.down.sent(s, now) };
        let dir = if up { &mut self.report.up } else { &mut self.report.down };
        let data = s.payload > 0;
        dir.data_segments += data as u64;
        dir.retransmissions += (data && again) as u64;
        if let Some(c) = self.report.clients.get_mut(client as usize) {
            let g = gap.unwrap_or(Duration::ZERO);
            if up {
                c.retransmissions += (data && again) as u64;
                c.max_gap = c.max_gap.max(g);
            } else {
                c.max_gap_down = c.max_gap_down.max(g);
            }
        }
    }

    /// A segment the network delivered for `client`'s connection (`up`: to the server).
    pub fn delivered(&mut self, client: u32, up: bool, s: &TcpSeg) {
        let port = if up { s.sport } else { s.dport };
        if s.seq_len() == 0 || s.rst {
            return;
        }
        let Some(f) = self.flows.get_mut(&(client, port)) else { return };
        let dup = if up { f.up.delivered(s) } else { f.down.delivered(s) };
        if dup {
            let dir = if up { &mut self.report.up } else { &mut self.report.down };
            dir.duplicates += 1;
            if let Some(c) = self.report.clients.get_mut(client as usize) {
                c.duplicates += 1;
            }
        }
    }

    /// Forgets connections idle for [`IDLE`].
    pub fn sweep(&mut self, now: Instant) {
        self.flows.retain(|_, f| now - f.last < IDLE);
    }

    /// What was counted.
    pub fn report(&self) -> &TcpReport {
        &self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32, payload: u32, flags: u8) -> TcpSeg {
        TcpSeg {
            sport: 40000,
            dport: 5683,
            seq,
            payload,
            syn: flags & 2 != 0,
            fin: flags & 1 != 0,
            rst: flags & 4 != 0,
        }
    }
    fn down(seq: u32, payload: u32) -> TcpSeg {
        TcpSeg { sport: 5683, dport: 40000, ..seg(seq, payload, 0) }
    }
    fn s(secs: f64) -> Instant {
        Instant::from_nanos((secs * 1e9) as u64)
    }

    #[test]
    fn retransmissions_gaps_and_duplicates_by_hand() {
        let mut t = Tally::new(2, 16);
        // client 1: SYN at 0, again at 1 s and 3 s (backoff 1, 2 s), then a request of 20 B
        t.sent(1, true, &seg(1000, 0, 2), s(0.0));
        t.sent(1, true, &seg(1000, 0, 2), s(1.0));
        t.sent(1, true, &seg(1000, 0, 2), s(3.0));
        t.sent(1, true, &seg(1001, 20, 0), s(3.5));
        // its request again after 0.9 s (a probe or RTO), then the next request
        t.sent(1, true, &seg(1001, 20, 0), s(4.4));
        t.sent(1, true, &seg(1021, 20, 0), s(5.0));
        // the server's response delivered twice: one duplicate
        t.sent(1, false, &TcpSeg { syn: true, ..down(9000, 0) }, s(0.1));
        t.delivered(1, false, &TcpSeg { syn: true, ..down(9000, 0) });
        t.sent(1, false, &down(9001, 70), s(4.0));
        t.delivered(1, false, &down(9001, 70));
        t.sent(1, false, &down(9001, 70), s(4.5));
        t.delivered(1, false, &down(9001, 70));
        let r = t.report();
        assert_eq!(r.up, DirCounts { data_segments: 3, retransmissions: 1, duplicates: 0 });
        assert_eq!(r.down, DirCounts { data_segments: 2, retransmissions: 1, duplicates: 1 });
        // the SYN's 2 s backoff is the longest wait; the data's only 0.9 s; the server's response
        // went again after 0.5 s
        let c = r.clients[1];
        assert_eq!((c.retransmissions, c.max_gap, c.duplicates), (1, Duration::from_secs(2), 1));
        assert_eq!(c.max_gap_down, Duration::from_millis(500));
        assert_eq!(r.clients[0], ClientCounts::default());
    }

    #[test]
    fn a_new_connection_on_the_same_port_starts_afresh() {
        let mut t = Tally::new(1, 16);
        t.sent(0, true, &seg(5000, 0, 2), s(0.0));
        t.sent(0, true, &seg(5001, 30, 0), s(1.0));
        // later the port is used again with a lower initial sequence number: no retransmission
        t.sent(0, true, &seg(100, 0, 2), s(200.0));
        t.sent(0, true, &seg(101, 30, 0), s(201.0));
        assert_eq!(t.report().up.retransmissions, 0);
        assert_eq!(t.report().clients[0].max_gap, Duration::ZERO);
    }

    #[test]
    fn connections_beyond_the_cap_are_untracked_until_one_idles_out() {
        let mut t = Tally::new(1, 1);
        t.sent(0, true, &seg(1, 0, 2), s(0.0));
        t.sent(0, true, &TcpSeg { sport: 40001, ..seg(1, 0, 2) }, s(1.0));
        assert_eq!(t.report().untracked, 1);
        t.sent(0, true, &TcpSeg { sport: 40001, ..seg(1, 0, 2) }, s(302.0));
        assert_eq!(t.report().untracked, 1);
        assert_eq!(t.flows.len(), 1);
    }
}
