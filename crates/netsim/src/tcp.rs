//! A TCP endpoint for the simulator's CoAP-over-TCP runs (docs/bottleneck.md, "CoAP over TCP in the
//! reference runs": Linux NewReno, no timestamps, no Fast Open, SYN/SYN-ACK retries 40, delayed
//! ACK on a constant 200 ms timer, Nagle on, initial RTO 2 s, RTO within [200 ms, 120 s]).
//! Sans-IO like everything the simulator drives: segments and time in, segments out.
//!
//! * Sequence numbers count bytes from 0 (no wrap-around within a run); SYN and FIN take one.
//! * Sender (RFC 5681 + RFC 6582 NewReno): initial window `init_cwnd` segments (Linux: 10,
//!   RFC 6928); slow start below ssthresh, congestion avoidance above (cwnd += MSS²/cwnd per
//!   ACK); three duplicate ACKs → fast retransmit, ssthresh = max(flight/2, 2·MSS), cwnd =
//!   ssthresh + 3·MSS, inflated per further duplicate; partial ACKs retransmit the next hole;
//!   the full ACK of `recover` deflates cwnd to ssthresh.
//! * RTO (RFC 6298 with Karn's rule): one timed segment at a time, never a retransmitted one;
//!   RTO = SRTT + 4·RTTVAR within [`min_rto`, `max_rto`], `initial_rto` before a sample. On
//!   expiry: ssthresh = max(flight/2, 2·MSS), cwnd = 1 MSS, RTO doubles, and everything from
//!   snd_una is sent again (go-back-N). SYN and SYN/ACK are retried up to `syn_retries` times.
//! * Receiver: in-order data goes to the application; out-of-order data is kept. ACK at once for
//!   every second full segment, out-of-order or duplicate data, a filled hole, or a FIN; else
//!   after the delayed-ACK timer. Data segments carry the ACK (piggybacking).
//! * Nagle: a segment smaller than the MSS waits while data is unacknowledged.
//! * A connection ends in failure after `retries2` RTO expirations without progress (Linux's
//!   tcp_retries2, 15), or on a reset; a host with no connection for an arriving segment (a
//!   gave-up or never-opened one) answers it with RST, as Linux does.
//! * The receive window never limits (the reference's buffers are far larger than its flows).
//! * Header bytes: 20 (IPv4) + 20 (TCP, no timestamps); SYN and SYN/ACK add 8 bytes of options
//!   (MSS and window scale; SACK is off for NewReno). Chosen: the testbed does not list them.

use std::collections::{BTreeMap, VecDeque};

use coap_cc::estimator::Rfc6298;
use coap_cc::{Duration, Instant};

/// TCP parameters (`tcp:key=value,...`).
#[derive(Debug, Clone, PartialEq)]
pub struct TcpParams {
    /// Maximum segment size: the MTU less 40 header bytes.
    pub mss: u32,
    /// Initial congestion window, segments.
    pub init_cwnd: u32,
    /// RTO before any sample, s (the thesis: 2).
    pub initial_rto: f64,
    /// Lower bound of the RTO, s (Linux: 0.2).
    pub min_rto: f64,
    /// Upper bound of the RTO, s (Linux: 120).
    pub max_rto: f64,
    /// SYN and SYN/ACK retransmissions before giving up.
    pub syn_retries: u32,
    /// Delayed-ACK timer, s.
    pub delayed_ack: f64,
    /// Nagle's algorithm.
    pub nagle: bool,
    /// Bytes of TCP options in SYN and SYN/ACK.
    pub syn_options: u32,
    /// RTO expirations of data without progress before the connection is given up (Linux: 15).
    pub retries2: u32,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            mss: 296 - 40,
            init_cwnd: 10,
            initial_rto: 2.0,
            min_rto: 0.2,
            max_rto: 120.0,
            syn_retries: 40,
            delayed_ack: 0.2,
            nagle: true,
            syn_options: 8,
            retries2: 15,
        }
    }
}

impl TcpParams {
    /// Parses `key=value,...` over the defaults.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut p = TcpParams::default();
        for kv in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("tcp: '{kv}' is not of the form key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let num = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("tcp: bad value '{v}' for {k}"))
            };
            let int = || {
                v.parse::<u32>().map_err(|_| format!("tcp: bad value '{v}' for {k}: expected a non-negative integer"))
            };
            match k {
                "init_cwnd" => p.init_cwnd = int()?.max(1),
                "initial_rto" => p.initial_rto = num()?,
                "min_rto" => p.min_rto = num()?,
                "max_rto" => p.max_rto = num()?,
                "syn_retries" => p.syn_retries = int()?,
                "delayed_ack" => p.delayed_ack = num()?,
                "nagle" => p.nagle = v.parse().map_err(|_| format!("tcp: bad value '{v}' for nagle: expected true or false"))?,
                "syn_options" => p.syn_options = int()?,
                "retries2" => p.retries2 = int()?,
                _ => {
                    return Err(format!(
                        "tcp has no parameter '{k}'; valid parameters: init_cwnd, initial_rto, min_rto, max_rto, syn_retries, delayed_ack, nagle, syn_options, retries2"
                    ))
                }
            }
        }
        if !(p.min_rto > 0.0 && p.min_rto <= p.max_rto && p.initial_rto > 0.0) {
            return Err("tcp: need 0 < min_rto <= max_rto and initial_rto > 0".into());
        }
        Ok(p)
    }

    /// `tcp[:key=value,...]` with the parameters that differ from the defaults.
    pub fn to_spec(&self) -> String {
        let d = TcpParams::default();
        let mut parts = Vec::new();
        macro_rules! diff {
            ($($f:ident),*) => { $( if self.$f != d.$f { parts.push(format!("{}={}", stringify!($f), self.$f)); } )* };
        }
        diff!(init_cwnd, initial_rto, min_rto, max_rto, syn_retries, delayed_ack, nagle, syn_options, retries2);
        if parts.is_empty() {
            "tcp".into()
        } else {
            format!("tcp:{}", parts.join(","))
        }
    }
}

/// Segment flags.
pub const SYN: u8 = 1;
/// Acknowledgement field valid.
pub const ACK: u8 = 2;
/// Sender has finished.
pub const FIN: u8 = 4;
/// Reset: the connection is gone.
pub const RST: u8 = 8;

/// A segment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    /// SYN | ACK | FIN.
    pub flags: u8,
    /// First sequence number.
    pub seq: u64,
    /// Acknowledgement number (with ACK).
    pub ack: u64,
    /// Payload.
    pub payload: Vec<u8>,
    /// A retransmission (for statistics only; TCP does not carry it).
    pub retransmission: bool,
}

impl Segment {
    /// Sequence space it takes.
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64 + (self.flags & SYN != 0) as u64 + (self.flags & FIN != 0) as u64
    }
    /// Bytes on the wire: IPv4 + TCP headers, SYN options, payload.
    pub fn wire_size(&self, p: &TcpParams) -> u32 {
        40 + if self.flags & SYN != 0 { p.syn_options } else { 0 } + self.payload.len() as u32
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    SynSent,
    SynReceived,
    Established,
    /// Gave up (SYN retries exhausted).
    Failed,
}

/// Counters of one endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Data segments sent again (RTO or fast retransmit).
    pub retransmissions: u64,
    /// Data segments received whose bytes had all arrived before (spurious retransmissions).
    pub spurious_received: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

/// One end of a TCP connection.
#[derive(Debug)]
pub struct Tcp {
    p: TcpParams,
    state: State,
    // sender
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Bytes from snd_una (SYN excluded) not yet acknowledged, then not yet sent.
    send_buf: VecDeque<u8>,
    close_requested: bool,
    fin_seq: Option<u64>,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    recover: u64,
    in_recovery: bool,
    retransmit_una: bool,
    est: Rfc6298,
    rto: f64,
    backoff: u32,
    rto_deadline: Option<Instant>,
    timed: Option<(u64, Instant)>,
    syn_tries: u32,
    // receiver
    rcv_nxt: u64,
    ooo: BTreeMap<u64, Vec<u8>>,
    delivered: Vec<u8>,
    unacked_segments: u32,
    ack_now: bool,
    delack_deadline: Option<Instant>,
    peer_fin: bool,
    /// The handshake's third segment, a pure ACK sent at once (Linux, blocking connect()).
    handshake_ack: bool,
    /// A reset to send (we have no connection for what arrived).
    send_rst: Option<u64>,
    /// The counters.
    pub stats: TcpStats,
}

impl Tcp {
    fn new(p: TcpParams, state: State) -> Self {
        Tcp {
            rto: p.initial_rto,
            cwnd: (p.init_cwnd * p.mss) as f64,
            ssthresh: f64::INFINITY,
            p,
            state,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            send_buf: VecDeque::new(),
            close_requested: false,
            fin_seq: None,
            dupacks: 0,
            recover: 0,
            in_recovery: false,
            retransmit_una: false,
            est: Rfc6298::default(),
            backoff: 0,
            rto_deadline: None,
            timed: None,
            syn_tries: 0,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            delivered: Vec::new(),
            unacked_segments: 0,
            ack_now: false,
            delack_deadline: None,
            peer_fin: false,
            handshake_ack: false,
            send_rst: None,
            stats: TcpStats::default(),
        }
    }

    /// The active opener: its SYN goes out at the first [`Tcp::poll_segment`].
    pub fn connect(p: TcpParams) -> Self {
        Tcp::new(p, State::SynSent)
    }

    /// The passive side, waiting for a SYN.
    pub fn listen(p: TcpParams) -> Self {
        Tcp::new(p, State::Closed)
    }

    /// Handshake complete?
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    /// Gave up connecting?
    pub fn has_failed(&self) -> bool {
        self.state == State::Failed
    }

    /// The peer has closed its side.
    pub fn peer_closed(&self) -> bool {
        self.peer_fin
    }

    /// Everything written has been acknowledged (a FIN too, once closed).
    pub fn all_acked(&self) -> bool {
        self.send_buf.is_empty() && self.fin_seq.is_none_or(|f| self.snd_una > f)
    }

    /// Appends application bytes to the stream.
    pub fn write(&mut self, bytes: &[u8]) {
        self.send_buf.extend(bytes);
    }

    /// No more writes: a FIN follows the data.
    pub fn close(&mut self) {
        self.close_requested = true;
    }

    /// Takes the bytes received in order so far.
    pub fn read(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.delivered)
    }

    /// The next deadline (retransmission or delayed ACK).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.rto_deadline, self.delack_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn flight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// The RTO that expires at `now`, if the retransmission timer does (for statistics).
    pub fn rto_expiring(&self, now: Instant) -> Option<f64> {
        self.rto_deadline.is_some_and(|d| d <= now).then_some(self.rto)
    }

    /// Data offset in send_buf of sequence number `seq` (the SYN takes sequence 0).
    fn buf_offset(&self, seq: u64) -> usize {
        (seq - self.snd_una.max(1)) as usize
    }

    fn arm_rto(&mut self, now: Instant) {
        self.rto_deadline = Some(now + Duration::from_secs_f64(self.rto));
    }

    /// Handles a timer.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.ack_now = true;
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            self.stats.timeouts += 1;
            self.timed = None;
            self.backoff += 1;
            self.rto = (self.rto * 2.0).min(self.p.max_rto);
            if self.state == State::Established && self.backoff > self.p.retries2 {
                self.fail();
                return;
            }
            if matches!(self.state, State::SynSent | State::SynReceived) {
                self.syn_tries += 1;
                if self.syn_tries > self.p.syn_retries {
                    self.state = State::Failed;
                }
                return; // the SYN (or SYN/ACK) goes again at poll_segment
            }
            let mss = self.p.mss as f64;
            self.ssthresh = (self.flight() as f64 / 2.0).max(2.0 * mss);
            self.cwnd = mss;
            self.in_recovery = false;
            self.dupacks = 0;
            self.recover = self.snd_max;
            self.snd_nxt = self.snd_una; // go back N
        }
    }

    fn fail(&mut self) {
        self.state = State::Failed;
        self.rto_deadline = None;
        self.delack_deadline = None;
        self.ack_now = false;
    }

    /// Handles an arriving segment.
    pub fn on_segment(&mut self, now: Instant, seg: &Segment) {
        if seg.flags & RST != 0 {
            if self.state != State::Closed {
                self.fail();
            }
            return;
        }
        match self.state {
            State::Failed | State::Closed if seg.flags & SYN == 0 || self.state == State::Failed => {
                // no connection here: reset the peer's (RFC 9293 §3.10.7.1)
                self.send_rst = Some(if seg.flags & ACK != 0 { seg.ack } else { 0 });
                return;
            }
            State::Closed => {
                self.state = State::SynReceived;
                self.rcv_nxt = seg.seq + 1;
                return;
            }
            State::Failed => return,
            State::SynSent if seg.flags & SYN != 0 && seg.flags & ACK != 0 && seg.ack == 1 => {
                self.rcv_nxt = seg.seq + 1;
                self.established(now, 1);
                self.handshake_ack = true;
                return;
            }
            State::SynSent => return,
            State::SynReceived if seg.flags & SYN != 0 => {
                self.ack_now = true; // our SYN/ACK was lost: it goes again on its timer
                return;
            }
            State::SynReceived if seg.flags & ACK != 0 && seg.ack >= 1 => self.established(now, 1),
            State::SynReceived => return,
            State::Established => {}
        }
        if seg.flags & ACK != 0 {
            self.on_ack(now, seg);
        }
        self.on_data(now, seg);
    }

    fn established(&mut self, now: Instant, acked: u64) {
        self.state = State::Established;
        if self.syn_tries == 0 {
            if let Some((_, sent)) = self.timed {
                self.sample((now - sent).as_secs_f64());
            }
        }
        self.timed = None;
        self.snd_una = acked;
        self.snd_nxt = self.snd_nxt.max(acked);
        self.snd_max = self.snd_max.max(acked);
        self.backoff = 0;
        self.rto_deadline = None;
        // RFC 6298 §5.7: a lost SYN leaves the RTO at 3 s; Linux keeps the estimate instead
        if self.syn_tries > 0 && self.est.srtt().is_none() {
            self.rto = self.p.initial_rto.max(3.0).min(self.p.max_rto);
        }
    }

    fn sample(&mut self, r: f64) {
        self.est.update(r);
        self.rto = self.est.rto(4.0, 0.0).unwrap_or(self.rto).clamp(self.p.min_rto, self.p.max_rto);
    }

    fn on_ack(&mut self, now: Instant, seg: &Segment) {
        let mss = self.p.mss as f64;
        if seg.ack > self.snd_una && seg.ack <= self.snd_max {
            let newly = seg.ack - self.snd_una;
            // drop acknowledged data bytes (the FIN takes sequence space but no buffer byte)
            let data_end = self.fin_seq.unwrap_or(u64::MAX);
            let drop_to = seg.ack.min(data_end);
            let n = drop_to.saturating_sub(self.snd_una) as usize;
            self.send_buf.drain(..n.min(self.send_buf.len()));
            self.snd_una = seg.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            if let Some((seq, sent)) = self.timed {
                if seg.ack > seq {
                    self.sample((now - sent).as_secs_f64());
                    self.timed = None;
                }
            }
            self.backoff = 0;
            self.dupacks = 0;
            if self.in_recovery {
                if seg.ack >= self.recover {
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                } else {
                    // partial ACK: retransmit the next hole, deflate by what was acknowledged
                    self.retransmit_una = true;
                    self.cwnd = (self.cwnd - newly as f64 + mss).max(mss);
                }
            } else if self.cwnd < self.ssthresh {
                self.cwnd += (newly as f64).min(mss);
            } else {
                self.cwnd += mss * mss / self.cwnd;
            }
            if self.flight() > 0 {
                self.arm_rto(now);
            } else {
                self.rto_deadline = None;
            }
        } else if seg.ack == self.snd_una && seg.payload.is_empty() && seg.flags & FIN == 0 && self.flight() > 0 {
            self.dupacks += 1;
            if self.dupacks == 3 && !self.in_recovery && seg.ack >= self.recover {
                self.ssthresh = (self.flight() as f64 / 2.0).max(2.0 * mss);
                self.cwnd = self.ssthresh + 3.0 * mss;
                self.in_recovery = true;
                self.recover = self.snd_max;
                self.retransmit_una = true;
            } else if self.in_recovery {
                self.cwnd += mss;
            }
        }
    }

    fn on_data(&mut self, now: Instant, seg: &Segment) {
        let fin = seg.flags & FIN != 0;
        if seg.payload.is_empty() && !fin {
            return;
        }
        let end = seg.seq + seg.payload.len() as u64;
        if end <= self.rcv_nxt && !(fin && end == self.rcv_nxt && !self.peer_fin) {
            // all of it arrived before: a spurious (or merely late) retransmission
            if !seg.payload.is_empty() {
                self.stats.spurious_received += 1;
            }
            self.ack_now = true;
            return;
        }
        if seg.seq > self.rcv_nxt {
            self.ooo.entry(seg.seq).or_insert_with(|| seg.payload.clone());
            self.ack_now = true; // a duplicate ACK tells the sender about the hole
            return;
        }
        let filled_hole = !self.ooo.is_empty();
        let skip = (self.rcv_nxt - seg.seq) as usize;
        self.delivered.extend_from_slice(&seg.payload[skip.min(seg.payload.len())..]);
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
                self.rcv_nxt = e;
            }
        }
        if fin && end == self.rcv_nxt && !self.peer_fin {
            self.peer_fin = true;
            self.rcv_nxt += 1;
            self.ack_now = true;
        }
        self.unacked_segments += 1;
        if filled_hole || self.unacked_segments >= 2 {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + Duration::from_secs_f64(self.p.delayed_ack));
        }
    }

    fn stamp_ack(&mut self, seg: &mut Segment) {
        if self.state != State::SynSent {
            seg.flags |= ACK;
            seg.ack = self.rcv_nxt;
            self.ack_now = false;
            self.unacked_segments = 0;
            self.delack_deadline = None;
        }
    }

    /// The next segment to send now, if any. Call until `None`.
    pub fn poll_segment(&mut self, now: Instant) -> Option<Segment> {
        if let Some(seq) = self.send_rst.take() {
            return Some(Segment { flags: RST, seq, ..Segment::default() });
        }
        match self.state {
            State::Failed | State::Closed => return None,
            State::SynSent | State::SynReceived => {
                // (re)send the SYN or SYN/ACK when no timer is running
                if self.rto_deadline.is_some() {
                    if self.ack_now && self.state == State::SynReceived {
                        self.ack_now = false;
                    }
                    return None;
                }
                let mut seg = Segment { flags: SYN, seq: 0, retransmission: self.syn_tries > 0, ..Segment::default() };
                if self.state == State::SynReceived {
                    seg.flags |= ACK;
                    seg.ack = self.rcv_nxt;
                }
                self.snd_nxt = 1;
                self.snd_max = 1;
                if self.syn_tries == 0 {
                    self.timed = Some((0, now));
                }
                self.arm_rto(now);
                return Some(seg);
            }
            State::Established => {}
        }
        if self.handshake_ack {
            self.handshake_ack = false;
            let mut seg = Segment { seq: self.snd_nxt, ..Segment::default() };
            self.stamp_ack(&mut seg);
            return Some(seg);
        }
        let mss = self.p.mss as u64;
        // fast retransmit / partial ACK: one segment from snd_una
        if self.retransmit_una && self.snd_una < self.snd_max {
            self.retransmit_una = false;
            let mut seg = self.data_segment(self.snd_una, mss);
            seg.retransmission = true;
            self.stats.retransmissions += !seg.payload.is_empty() as u64;
            self.stamp_ack(&mut seg);
            if self.rto_deadline.is_none() {
                self.arm_rto(now);
            }
            return Some(seg);
        }
        let data_end = self.snd_una.max(1) + self.send_buf.len() as u64;
        let unsent = data_end.saturating_sub(self.snd_nxt);
        let window = (self.cwnd as u64).saturating_sub(self.flight());
        if unsent > 0 && window > 0 {
            let len = unsent.min(mss).min(window);
            let nagle_wait = self.p.nagle && len < mss && len == unsent && self.flight() > 0;
            if len == unsent.min(mss) && !nagle_wait {
                let mut seg = self.data_segment(self.snd_nxt, len);
                if self.snd_nxt < self.snd_max {
                    seg.retransmission = true;
                    self.stats.retransmissions += 1;
                } else if self.timed.is_none() {
                    self.timed = Some((self.snd_nxt, now));
                }
                self.snd_nxt += len;
                self.snd_max = self.snd_max.max(self.snd_nxt);
                self.stamp_ack(&mut seg);
                if self.rto_deadline.is_none() {
                    self.arm_rto(now);
                }
                return Some(seg);
            }
        }
        // FIN after all data
        if self.close_requested
            && self.snd_nxt == data_end
            && (self.fin_seq.is_none() || self.snd_nxt == self.fin_seq.unwrap_or(0))
        {
            let fin_seq = *self.fin_seq.get_or_insert(data_end);
            if self.snd_nxt == fin_seq && window > 0 {
                let mut seg =
                    Segment { flags: FIN, seq: fin_seq, retransmission: self.snd_max > fin_seq, ..Segment::default() };
                self.snd_nxt = fin_seq + 1;
                self.snd_max = self.snd_max.max(self.snd_nxt);
                self.stamp_ack(&mut seg);
                if self.rto_deadline.is_none() {
                    self.arm_rto(now);
                }
                return Some(seg);
            }
        }
        if self.ack_now {
            let mut seg = Segment { seq: self.snd_nxt, ..Segment::default() };
            self.stamp_ack(&mut seg);
            return Some(seg);
        }
        None
    }

    fn data_segment(&self, seq: u64, max_len: u64) -> Segment {
        let off = self.buf_offset(seq);
        let avail = self.send_buf.len().saturating_sub(off);
        let len = (max_len as usize).min(avail);
        let payload: Vec<u8> = self.send_buf.range(off..off + len).copied().collect();
        Segment { seq, payload, ..Segment::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64) -> Instant {
        Instant::from_nanos((s * 1e9).round() as u64)
    }

    /// Moves every segment one side has to send into the other, at `now`; returns them.
    fn pump(now: Instant, from: &mut Tcp, to: &mut Tcp) -> Vec<Segment> {
        let mut v = Vec::new();
        while let Some(s) = from.poll_segment(now) {
            v.push(s);
        }
        for s in &v {
            to.on_segment(now, s);
        }
        v
    }

    /// A client and a server with default parameters after the handshake: SYN at 0 s, the
    /// SYN-ACK (and the client's ACK) at `syn_ack_at` s.
    fn established(syn_ack_at: f64) -> (Tcp, Tcp) {
        let p = TcpParams::default();
        let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p));
        pump(t(0.0), &mut c, &mut s);
        pump(t(syn_ack_at), &mut s, &mut c);
        (c, s)
    }

    #[test]
    fn handshake_data_and_piggybacked_acks() {
        let p = TcpParams::default();
        let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p.clone()));
        let syn = pump(t(0.0), &mut c, &mut s);
        assert_eq!(syn.len(), 1);
        assert_eq!(syn[0].flags, SYN);
        assert_eq!(syn[0].wire_size(&p), 48);
        let synack = pump(t(0.6), &mut s, &mut c);
        assert_eq!(synack[0].flags, SYN | ACK);
        assert!(c.is_established());
        c.write(b"hello");
        let out = pump(t(0.6), &mut c, &mut s);
        // the third handshake segment is a pure ACK, then the data (carrying the ACK too)
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].flags, out[0].payload.len()), (ACK, 0));
        assert_eq!((out[1].flags, out[1].seq, out[1].payload.as_slice()), (ACK, 1, &b"hello"[..]));
        assert!(s.is_established());
        assert_eq!(s.read(), b"hello");
        // one segment received: the ACK is delayed 200 ms, unless data goes back first
        assert_eq!(s.poll_timeout(), Some(t(0.8)));
        s.write(b"world");
        let back = pump(t(0.7), &mut s, &mut c);
        assert_eq!(back.len(), 1);
        assert_eq!((back[0].ack, back[0].payload.as_slice()), (6, &b"world"[..]));
        assert_eq!(c.read(), b"world");
        // RTT samples: the SYN's 0.6 s, then hello's 0.1 s
        assert!(c.est.srtt().is_some());
    }

    #[test]
    fn delayed_ack_timer_fires_after_200_ms() {
        let (mut c, mut s) = established(0.0);
        c.write(b"x");
        pump(t(0.0), &mut c, &mut s);
        assert!(s.poll_segment(t(0.1)).is_none()); // nothing to send before the timer
        s.on_timeout(t(0.2));
        let ack = s.poll_segment(t(0.2)).unwrap();
        assert_eq!((ack.flags, ack.ack, ack.payload.len()), (ACK, 2, 0));
    }

    #[test]
    fn nagle_holds_small_segments_while_data_is_unacknowledged() {
        let (mut c, mut s) = established(0.0);
        c.write(b"csm");
        let first = pump(t(0.0), &mut c, &mut s);
        assert_eq!(first.last().unwrap().payload, b"csm");
        c.write(b"req");
        assert!(c.poll_segment(t(0.01)).is_none(), "Nagle: 'req' waits for the ACK of 'csm'");
        s.write(b"CSM");
        pump(t(0.5), &mut s, &mut c); // the server's data acknowledges 'csm'
        let next = c.poll_segment(t(0.5)).unwrap();
        assert_eq!(next.payload, b"req");
    }

    #[test]
    fn a_lost_segment_alone_in_flight_is_recovered_by_the_rto() {
        let (mut c, mut s) = established(1.0); // SYN RTT 1 s: SRTT 1, RTTVAR 0.5 → RTO 3 s
        assert_eq!(c.rto, 3.0);
        c.write(b"data");
        let _ack_of_synack = c.poll_segment(t(1.0)).unwrap();
        let lost = c.poll_segment(t(1.0)).unwrap();
        assert_eq!(lost.payload, b"data");
        assert_eq!(c.poll_timeout(), Some(t(4.0)));
        assert!(c.poll_segment(t(3.9)).is_none());
        c.on_timeout(t(4.0));
        let again = c.poll_segment(t(4.0)).unwrap();
        assert_eq!((again.seq, again.payload.as_slice(), again.retransmission), (1, &b"data"[..], true));
        assert_eq!(c.rto, 6.0); // backed off
        assert_eq!(c.cwnd, 256.0); // loss window: one segment
        s.on_segment(t(5.0), &again);
        assert_eq!(s.read(), b"data");
        assert_eq!(c.stats.retransmissions, 1);
    }

    #[test]
    fn a_lost_syn_is_retried_after_the_initial_rto() {
        let p = TcpParams::default();
        let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p));
        let _lost = c.poll_segment(t(0.0)).unwrap();
        assert_eq!(c.poll_timeout(), Some(t(2.0))); // the thesis' initial RTO
        c.on_timeout(t(2.0));
        let syn = c.poll_segment(t(2.0)).unwrap();
        assert_eq!((syn.flags, syn.retransmission), (SYN, true));
        assert_eq!(c.poll_timeout(), Some(t(6.0))); // doubled
        s.on_segment(t(2.3), &syn);
        pump(t(2.6), &mut s, &mut c);
        assert!(c.is_established());
        assert_eq!(c.est.srtt(), None, "Karn: no sample from a retransmitted SYN");
        assert_eq!(c.rto, 3.0, "RFC 6298 §5.7: 3 s after a lost SYN");
    }

    #[test]
    fn syn_retries_run_out() {
        let p = TcpParams { syn_retries: 2, ..TcpParams::default() };
        let mut c = Tcp::connect(p);
        let mut now = t(0.0);
        for _ in 0..3 {
            assert!(c.poll_segment(now).is_some());
            now = c.poll_timeout().unwrap();
            c.on_timeout(now);
        }
        assert!(c.has_failed());
        assert!(c.poll_segment(now).is_none());
    }

    #[test]
    fn three_duplicate_acks_trigger_fast_retransmit() {
        let (mut c, mut s) = established(0.1);
        c.write(&[7u8; 256 * 5]);
        let mut segs = Vec::new();
        while let Some(seg) = c.poll_segment(t(0.1)) {
            segs.push(seg);
        }
        let data: Vec<_> = segs.into_iter().filter(|s| !s.payload.is_empty()).collect();
        assert_eq!(data.len(), 5);
        // the first is lost; the other four each make the receiver send a duplicate ACK
        let mut dupacks = Vec::new();
        for seg in &data[1..] {
            s.on_segment(t(0.2), seg);
            dupacks.push(s.poll_segment(t(0.2)).unwrap());
        }
        assert!(dupacks.iter().all(|a| a.ack == 1));
        for a in &dupacks[..3] {
            c.on_segment(t(0.3), a);
        }
        let rexmit = c.poll_segment(t(0.3)).unwrap();
        assert_eq!((rexmit.seq, rexmit.retransmission), (1, true));
        // ssthresh = flight/2 = 640, cwnd = 640 + 3·256
        assert_eq!(c.ssthresh, 640.0);
        assert_eq!(c.cwnd, 640.0 + 768.0);
        s.on_segment(t(0.4), &rexmit);
        assert_eq!(s.read().len(), 256 * 5); // the hole filled, everything delivered
        let full = s.poll_segment(t(0.4)).unwrap();
        assert_eq!(full.ack, 1 + 256 * 5);
        c.on_segment(t(0.5), &full);
        assert_eq!(c.cwnd, 640.0); // recovery ends: deflate to ssthresh
    }

    #[test]
    fn fin_closes_and_spurious_data_is_counted() {
        let (mut c, mut s) = established(0.1);
        c.write(b"last");
        let data = pump(t(0.1), &mut c, &mut s);
        let d = data.iter().find(|x| !x.payload.is_empty()).unwrap().clone();
        s.on_segment(t(0.2), &d); // the same segment again: spurious
        assert_eq!(s.stats.spurious_received, 1);
        c.close();
        let fin = pump(t(0.3), &mut c, &mut s);
        assert!(fin.iter().any(|x| x.flags & FIN != 0));
        assert!(s.peer_closed());
        pump(t(0.4), &mut s, &mut c);
        assert!(c.all_acked());
    }

    #[test]
    fn a_host_without_the_connection_resets_it_and_retries2_ends_a_dead_one() {
        let p = TcpParams::default();
        let (mut c, mut s) = (Tcp::connect(p.clone()), Tcp::listen(p.clone()));
        pump(t(0.0), &mut c, &mut s);
        pump(t(0.5), &mut s, &mut c);
        assert!(c.is_established());
        // the server forgets the connection (its SYN/ACK retries ran out, say): a fresh listener
        let mut s = Tcp::listen(p.clone());
        c.write(b"csm");
        let out = pump(t(0.5), &mut c, &mut s);
        assert!(out.iter().any(|x| !x.payload.is_empty()));
        let rst = s.poll_segment(t(0.6)).unwrap();
        assert_eq!(rst.flags, RST);
        c.on_segment(t(1.0), &rst);
        assert!(c.has_failed());
        assert!(c.poll_timeout().is_none());
        // without any answer, 15 backed-off RTOs end it too
        let mut c = Tcp::connect(TcpParams { retries2: 3, ..p.clone() });
        let mut s = Tcp::listen(p);
        pump(t(0.0), &mut c, &mut s);
        pump(t(0.5), &mut s, &mut c);
        c.write(b"x");
        let _ = pump(t(0.5), &mut c, &mut Tcp::listen(TcpParams::default()));
        for _ in 0..4 {
            let now = c.poll_timeout().unwrap();
            c.on_timeout(now);
            while c.poll_segment(now).is_some() {}
        }
        assert!(c.has_failed());
    }

    #[test]
    fn params_parse() {
        assert_eq!(TcpParams::parse("").unwrap(), TcpParams::default());
        let p = TcpParams::parse("initial_rto=1,nagle=false").unwrap();
        assert_eq!(p.to_spec(), "tcp:initial_rto=1,nagle=false");
        assert!(TcpParams::parse("rto=1").unwrap_err().contains("valid parameters"));
    }
}
