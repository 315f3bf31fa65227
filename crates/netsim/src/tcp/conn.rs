//! One end of a TCP connection: the state machine, the sender's congestion and loss recovery,
//! and its timers. The mechanisms and their sources are listed in [`super`]; the names of the
//! functions follow Linux's (`tcp_ack`, `tcp_fastretrans_alert`, `tcp_process_loss`, …) so that a
//! reader can hold the two side by side.

use std::collections::VecDeque;

use coap_cc::{Duration, Instant};

use super::params::TcpParams;
use super::receiver::{Arrival, Receiver};
use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, Sent, EVER_RETRANS, LOST, RETRANS_OUT, SACKED};
use super::segment::{Segment, ACK, FIN, RST, SYN};

mod ack;
mod recovery;
mod timers;
mod window;

/// Linux's `sysctl_tcp_reordering` (the testbed's path never reorders, so it never adapts).
const REORDERING: u32 = 3;
/// Linux's TCP_DELACK_MAX, which a loss probe allows for the peer's delayed ACK, s.
const DELACK_MAX: f64 = 0.2;
/// Linux's TCP_TIMEOUT_MIN (2 jiffies at HZ = 1000; TCP_TIMEOUT_MIN_US from 6.7), s.
const TIMEOUT_MIN: f64 = 0.002;
/// Linux's TCP_TIMEOUT_FALLBACK: the RTO after a handshake without an RTT sample, s.
const TIMEOUT_FALLBACK: f64 = 3.0;
/// Linux's `tcp_invalid_ratelimit` (500 ms): the least time between two answers to segments out
/// of the window, a repeated SYN among them (`tcp_oow_rate_limited`), s.
const INVALID_RATELIMIT: f64 = 0.5;

// What an ACK did (Linux's FLAG_*).
const F_DATA: u32 = 1;
const F_WIN_UPDATE: u32 = 2;
const F_DATA_ACKED: u32 = 4;
const F_RETRANS_DATA_ACKED: u32 = 8;
const F_DATA_SACKED: u32 = 32;
const F_SND_UNA_ADVANCED: u32 = 64;
const F_DSACKING_ACK: u32 = 128;
const F_ORIG_SACK_ACKED: u32 = 256;
const F_LOST_RETRANS: u32 = 512;
/// Linux ≥ 4.13's FLAG_SET_XMIT_TIMER: the ACK acknowledged data (or SACKed data sent before the
/// head's last transmission), so the probe or RTO timer is set again from now.
const F_SET_XMIT_TIMER: u32 = 1024;
const F_NOT_DUP: u32 = F_DATA | F_WIN_UPDATE | F_DATA_ACKED;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Listening (passive side before a SYN).
    Closed,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    Closing,
    TimeWait,
    CloseWait,
    LastAck,
    /// Closed after a normal end.
    Done,
    /// Gave up (retries exhausted) or reset.
    Failed,
}

/// Linux's congestion-avoidance states (`icsk_ca_state`), ordered as Linux orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ca {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// The kind of the retransmission timer (Linux's `icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XmitTimer {
    Retrans,
    EarlyRetrans,
    LossProbe,
}

/// What the next ACK-driven transmission does (Linux's REXMIT_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rexmit {
    None,
    Lost,
    New,
}

/// Counters of one endpoint (summed over endpoints by [`TcpStats::add`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TcpStats {
    /// Data segments sent again (RTO, fast or early retransmit, loss probe).
    pub retransmissions: u64,
    /// Data segments received whose bytes had all arrived before (spurious retransmissions).
    pub spurious_received: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Tail loss probes sent.
    pub loss_probes: u64,
    /// Timeouts F-RTO found spurious (and undid).
    pub spurious_rtos: u64,
    /// Retransmission timeouts of an RTO above 60 s (the literature's measure of backoff).
    pub timeouts_over_60s: u64,
}

impl TcpStats {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &TcpStats) {
        self.retransmissions += o.retransmissions;
        self.spurious_received += o.spurious_received;
        self.timeouts += o.timeouts;
        self.loss_probes += o.loss_probes;
        self.spurious_rtos += o.spurious_rtos;
        self.timeouts_over_60s += o.timeouts_over_60s;
    }
}

/// One end of a TCP connection.
#[derive(Debug)]
pub struct Tcp {
    p: TcpParams,
    state: State,
    // application data
    send_buf: VecDeque<u8>,
    /// Sequence number of `send_buf[0]`.
    buf_seq: u64,
    close_requested: bool,
    /// Closed by its application (Linux: an orphan).
    orphan: bool,
    fin_sent: bool,
    // sender
    snd_una: u64,
    /// Next new sequence number (Linux's snd_nxt: never rewound).
    snd_nxt: u64,
    sb: Scoreboard,
    cwnd: u32,
    ssthresh: u32,
    cwnd_cnt: u32,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    ca: Ca,
    high_seq: u64,
    undo_marker: Option<u64>,
    undo_retrans: i32,
    frto: bool,
    tlp_high_seq: Option<u64>,
    rexmit: Rexmit,
    retrans_stamp: Option<Instant>,
    /// Expired RTOs since progress (Linux's icsk_retransmits).
    retransmits: u32,
    rtt: RttEstimator,
    rto: f64,
    timer: Option<(Instant, XmitTimer)>,
    /// When the timer runs: its time, or with `timer_hz` its timer-wheel bucket's.
    timer_runs: Instant,
    rack_mstamp: Option<Instant>,
    rack_advanced: bool,
    min_rtt: Option<Duration>,
    snd_sml: u64,
    lsndtime: Option<Instant>,
    max_packets_out: u32,
    max_packets_seq: u64,
    is_cwnd_limited: bool,
    sent_new: bool,
    /// Segments the ACK being processed delivered (acknowledged or SACKed for the first time).
    delivered: u32,
    /// Segments a timer produced (an RTO's or a probe's), sent before anything else.
    out: VecDeque<Segment>,
    // handshake
    syn_tries: u32,
    syn_sent_at: Option<Instant>,
    first_syn_at: Option<Instant>,
    /// When a repeated SYN was last answered (`last_oow_ack_time`).
    last_oow_ack: Option<Instant>,
    handshake_ack: bool,
    send_rst: Option<u64>,
    close_deadline: Option<Instant>,
    rx: Receiver,
    /// The counters.
    pub stats: TcpStats,
}

impl Tcp {
    fn new(p: TcpParams, state: State) -> Self {
        Tcp {
            rto: p.initial_rto,
            cwnd: p.init_cwnd,
            ssthresh: u32::MAX,
            rtt: RttEstimator::new(p.rto, p.min_rto, p.max_rto),
            rx: Receiver::new(p.quickack, p.mss, p.delayed_ack),
            state,
            send_buf: VecDeque::new(),
            buf_seq: 1,
            close_requested: false,
            orphan: false,
            fin_sent: false,
            snd_una: 0,
            snd_nxt: 0,
            sb: Scoreboard::default(),
            cwnd_cnt: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            ca: Ca::Open,
            high_seq: 0,
            undo_marker: None,
            undo_retrans: -1,
            frto: false,
            tlp_high_seq: None,
            rexmit: Rexmit::None,
            retrans_stamp: None,
            retransmits: 0,
            timer: None,
            timer_runs: Instant::ZERO,
            rack_mstamp: None,
            rack_advanced: false,
            min_rtt: None,
            snd_sml: 0,
            lsndtime: None,
            max_packets_out: 0,
            max_packets_seq: 0,
            is_cwnd_limited: false,
            sent_new: false,
            delivered: 0,
            out: VecDeque::new(),
            syn_tries: 0,
            syn_sent_at: None,
            first_syn_at: None,
            last_oow_ack: None,
            handshake_ack: false,
            send_rst: None,
            close_deadline: None,
            stats: TcpStats::default(),
            p,
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

    /// The handshake has completed (the connection may since have begun to close).
    pub fn is_established(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::FinWait1
                | State::FinWait2
                | State::Closing
                | State::TimeWait
                | State::CloseWait
                | State::LastAck
        )
    }

    /// Gave up (retries ran out) or was reset.
    pub fn has_failed(&self) -> bool {
        self.state == State::Failed
    }

    /// The peer has closed its side.
    pub fn peer_closed(&self) -> bool {
        self.rx.peer_fin
    }

    /// Everything written has been acknowledged (a FIN too, once closed).
    pub fn all_acked(&self) -> bool {
        self.send_buf.is_empty() && self.sb.segs.is_empty() && (!self.close_requested || self.fin_sent)
    }

    /// The current RTO, s.
    pub fn rto(&self) -> f64 {
        self.rto
    }

    /// The congestion window, segments.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// The slow-start threshold, segments (`u32::MAX` before any loss).
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// Appends application bytes to the stream.
    pub fn write(&mut self, bytes: &[u8]) {
        self.send_buf.extend(bytes);
    }

    /// The application closes the socket (`close()`): a FIN follows the data, nothing more will
    /// be read, and the connection becomes an orphan (Linux's limits for orphans apply; new data
    /// arriving is answered with a reset, RFC 1122 §4.2.2.13).
    pub fn close(&mut self) {
        self.shutdown();
        self.orphan = true;
    }

    /// No more writes (`shutdown(SHUT_WR)`): a FIN follows the data; the connection still reads.
    pub fn shutdown(&mut self) {
        if !self.close_requested {
            self.close_requested = true;
            self.state = match self.state {
                State::Established => State::FinWait1,
                State::CloseWait => State::LastAck,
                s => s,
            };
        }
    }

    /// Takes the bytes received in order so far.
    pub fn read(&mut self) -> Vec<u8> {
        self.rx.read()
    }

    /// The next deadline of any timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.timer.map(|_| self.timer_runs), self.rx.deadline(), self.close_deadline].into_iter().flatten().min()
    }

    /// The RTO that expires at `now`, if the retransmission timer does (for statistics).
    pub fn rto_expiring(&self, now: Instant) -> Option<f64> {
        self.timer.is_some_and(|(_, k)| self.timer_runs <= now && k == XmitTimer::Retrans).then_some(self.rto)
    }

    fn data_end(&self) -> u64 {
        self.buf_seq + self.send_buf.len() as u64
    }

    fn in_flight(&self) -> u32 {
        self.sb.in_flight(self.p.sack)
    }

    /// Sets the retransmission timer, armed at `now`, due at `at`.
    fn arm(&mut self, now: Instant, at: Instant, kind: XmitTimer) {
        self.timer = Some((at, kind));
        self.timer_runs = if self.p.timer_hz == 0 { at } else { wheel_bucket(now, at, self.p.timer_hz) };
    }

    /// The retransmission timer one RTO from `now`.
    fn arm_rto(&mut self, now: Instant) {
        self.arm(now, now + Duration::from_secs_f64(self.rto), XmitTimer::Retrans);
    }

    /// `tcp_rearm_rto`: the RTO from now — or, replacing an early-retransmit or probe timer, from
    /// the head's transmission — or no timer with nothing in flight.
    fn rearm_rto(&mut self, now: Instant) {
        if self.sb.segs.is_empty() {
            self.timer = None;
            return;
        }
        let mut rto = Duration::from_secs_f64(self.rto);
        if let Some((_, XmitTimer::EarlyRetrans | XmitTimer::LossProbe)) = self.timer {
            let due = self.sb.segs[0].sent_at + rto;
            if due > now {
                rto = due - now;
            }
        }
        self.arm(now, now + rto, XmitTimer::Retrans);
    }

    fn fail(&mut self) {
        self.state = State::Failed;
        self.timer = None;
        self.close_deadline = None;
        self.out.clear();
    }

    // ---------------------------------------------------------------- arrivals

    /// Handles an arriving segment.
    pub fn on_segment(&mut self, now: Instant, seg: &Segment) {
        if seg.flags & RST != 0 {
            if !matches!(self.state, State::Closed | State::Done | State::Failed) {
                self.fail();
            }
            return;
        }
        match self.state {
            State::Closed if seg.flags & SYN != 0 && seg.flags & ACK == 0 => {
                self.state = State::SynReceived;
                self.rx.rcv_nxt = seg.seq + 1;
                return;
            }
            State::Closed | State::Done | State::Failed => {
                // no connection here: reset the peer's (RFC 9293 §3.10.7.1)
                self.send_rst = Some(if seg.flags & ACK != 0 { seg.ack } else { 0 });
                return;
            }
            State::SynSent => {
                if seg.flags & SYN != 0 && seg.flags & ACK != 0 && seg.ack >= 1 {
                    self.rx.rcv_nxt = seg.seq + 1;
                    self.established(now);
                    self.handshake_ack = true;
                }
                return;
            }
            State::SynReceived if seg.flags & SYN != 0 => {
                // the peer's SYN again: our SYN/ACK was lost or is late. Linux (tcp_check_req)
                // answers it at once unless it answered one less than tcp_invalid_ratelimit ago
                // (inet_rtx_syn_ack, counted as a retransmission of the request), and starts the
                // request's timer again from now with its current timeout (mod_timer_pending,
                // TCP_TIMEOUT_INIT << num_timeout)
                if self.last_oow_ack.is_some_and(|t| (now - t).as_secs_f64() < INVALID_RATELIMIT) {
                    return;
                }
                self.last_oow_ack = Some(now);
                self.syn_tries += 1;
                self.handshake_ack = true;
                if self.timer.is_some() {
                    self.arm_rto(now);
                }
                return;
            }
            State::SynReceived if seg.flags & ACK != 0 && seg.ack >= 1 => self.established(now),
            State::SynReceived => return,
            State::TimeWait => {
                if seg.flags & FIN != 0 {
                    self.rx.force_ack(); // the peer's FIN again: our last ACK was lost
                    self.close_deadline = Some(now + Duration::from_secs_f64(self.p.time_wait_len()));
                }
                return;
            }
            _ if seg.flags & SYN != 0 => {
                self.rx.force_ack(); // a SYN on a synchronized connection: a challenge ACK
                return;
            }
            _ => {}
        }
        if seg.flags & ACK != 0 {
            self.on_ack(now, seg);
        }
        if !self.is_established() {
            return; // the ACK ended the connection (LAST_ACK) or failed it
        }
        let new_data = seg.seq + seg.payload.len() as u64 > self.rx.rcv_nxt && !seg.payload.is_empty();
        if self.orphan && new_data && matches!(self.state, State::FinWait1 | State::FinWait2) {
            // data for a socket its application closed: abort (Linux's TCPAbortOnData)
            self.send_rst = Some(seg.ack);
            self.fail();
            return;
        }
        let had_fin = self.rx.peer_fin;
        match self.rx.on_data(now, seg, self.rto) {
            Arrival::Duplicate => self.stats.spurious_received += 1,
            Arrival::New | Arrival::Empty => {}
        }
        if self.rx.peer_fin && !had_fin {
            // (the FIN may have come earlier, out of order, with this segment filling the hole)
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => {
                    self.state = State::Closing;
                    self.rx.force_ack();
                }
                State::FinWait2 => {
                    self.state = State::TimeWait;
                    self.rx.force_ack();
                    self.timer = None;
                    self.close_deadline = Some(now + Duration::from_secs_f64(self.p.time_wait_len()));
                }
                _ => {}
            }
        }
    }

    /// The handshake completed at `now`: an RTT sample from an unretransmitted SYN (SYN/ACK);
    /// without one, Linux's 3 s fallback (RFC 6298 §5.7).
    fn established(&mut self, now: Instant) {
        self.state = State::Established;
        if self.syn_tries == 0 {
            if let Some(sent) = self.syn_sent_at {
                let r = now - sent;
                self.rtt.sample(r.as_secs_f64(), 1, 1);
                self.min_rtt = Some(r);
                self.rto = self.rtt.rto().unwrap_or(self.rto);
            }
        } else if self.rtt.srtt().is_none() {
            self.rto = TIMEOUT_FALLBACK.max(self.p.initial_rto).min(self.p.max_rto);
        }
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.high_seq = 1;
        self.timer = None;
        self.retransmits = 0;
    }

    // ---------------------------------------------------------------- sending

    fn unsent(&self) -> u64 {
        self.data_end().saturating_sub(self.snd_nxt.max(self.buf_seq))
    }

    fn fin_pending(&self) -> bool {
        self.close_requested && !self.fin_sent
    }

    /// Nagle as Linux has it (`tcp_nagle_check` with Minshall's rule): a segment shorter than the
    /// MSS waits while a previous short one is unacknowledged.
    fn nagle_holds(&self, len: u64) -> bool {
        self.p.nagle
            && len < self.p.mss as u64
            && !self.sb.segs.is_empty()
            && self.snd_sml > self.snd_una
            && self.snd_sml <= self.snd_nxt
    }

    fn stamp_ack(&mut self, seg: &mut Segment) {
        if self.state != State::SynSent {
            seg.flags |= ACK;
            seg.ack = self.rx.rcv_nxt;
            if self.p.sack {
                seg.sack = self.rx.sack_blocks();
            }
            self.rx.on_ack_sent();
        }
    }

    /// A data segment is transmitted at `now` (Linux's `tcp_event_data_sent`): slow start after
    /// an idle period longer than the RTO, and the receiver's interactive mode.
    fn data_sent(&mut self, now: Instant, idle: bool) {
        if self.p.slow_start_after_idle && idle {
            if let Some(last) = self.lsndtime {
                let mut delta = (now - last).as_secs_f64();
                if delta > self.rto {
                    // tcp_cwnd_restart: halve per idle RTO, not below the restart window
                    self.ssthresh = self.current_ssthresh();
                    let restart = self.p.init_cwnd.min(self.cwnd);
                    let mut cwnd = self.cwnd;
                    loop {
                        delta -= self.rto;
                        if delta <= 0.0 || cwnd <= restart {
                            break;
                        }
                        cwnd >>= 1;
                    }
                    self.cwnd = cwnd.max(restart);
                }
            }
        }
        self.lsndtime = Some(now);
        self.rx.on_data_sent(now);
    }

    /// The segment `s` stands for, less any head the peer has acknowledged since (an ACK can end
    /// inside a segment when the peer kept its data but not its FIN; Linux's `tcp_trim_head`).
    fn segment_of(&self, s: &Sent) -> Segment {
        let data_end = s.end - s.fin as u64;
        let seq = s.seq.max(self.buf_seq).min(data_end);
        let off = (seq - self.buf_seq) as usize;
        let len = (data_end - seq) as usize;
        let payload: Vec<u8> = self.send_buf.range(off..off + len).copied().collect();
        Segment { flags: if s.fin { FIN } else { 0 }, seq, payload, ..Segment::default() }
    }

    /// Sends segment `i` of the queue again (`tcp_retransmit_skb`; a loss probe's, `probe`, as
    /// `__tcp_retransmit_skb`: not counted as a retransmission in flight, no undo bookkeeping).
    fn retransmit(&mut self, now: Instant, i: usize, probe: bool) -> Option<Segment> {
        let s = *self.sb.segs.get(i)?;
        let mut seg = self.segment_of(&s);
        seg.retransmission = true;
        let t = &mut self.sb.segs[i];
        t.tags |= EVER_RETRANS;
        t.sent_at = now;
        if !probe {
            t.tags |= RETRANS_OUT;
            self.retrans_stamp.get_or_insert(now);
            self.undo_retrans = self.undo_retrans.max(0) + 1;
        }
        if matches!(self.ca, Ca::Cwr | Ca::Recovery) {
            self.prr_out += 1;
        }
        self.stats.retransmissions += !seg.payload.is_empty() as u64;
        if !seg.payload.is_empty() {
            self.data_sent(now, false);
        }
        self.stamp_ack(&mut seg);
        Some(seg)
    }

    /// The next lost segment the window allows (`tcp_xmit_retransmit_queue`).
    fn retransmit_lost(&mut self, now: Instant) -> Option<Segment> {
        if self.in_flight() >= self.cwnd {
            return None;
        }
        let i = self.sb.segs.iter().position(|s| s.has(LOST) && !s.has(RETRANS_OUT | SACKED))?;
        self.retransmit(now, i, false)
    }

    /// New data (and the FIN, riding on the last segment or alone), if the window (`cwnd`) and
    /// Nagle (`nagle`) allow; a probe is limited by neither, F-RTO's new data not by Nagle.
    fn send_new(&mut self, now: Instant, cwnd: bool, nagle: bool) -> Option<Segment> {
        let unsent = self.unsent();
        if unsent == 0 && !self.fin_pending() {
            return None;
        }
        if cwnd && self.in_flight() >= self.cwnd {
            self.is_cwnd_limited = true;
            return None;
        }
        let len = unsent.min(self.p.mss as u64);
        let fin = self.fin_pending() && self.snd_nxt.max(self.buf_seq) + len == self.data_end();
        if nagle && !fin && self.nagle_holds(len) {
            return None;
        }
        let force = !cwnd;
        let seq = self.snd_nxt.max(self.buf_seq);
        let end = seq + len + fin as u64;
        let idle = self.sb.segs.is_empty();
        let prior_timer = self.timer;
        let sent = Sent { seq, end, fin, sent_at: now, tags: 0 };
        let mut seg = self.segment_of(&sent);
        self.sb.segs.push_back(sent);
        self.snd_nxt = end;
        self.fin_sent |= fin;
        if len < self.p.mss as u64 {
            self.snd_sml = end;
        }
        if matches!(self.ca, Ca::Cwr | Ca::Recovery) {
            self.prr_out += 1;
        }
        if len > 0 {
            self.data_sent(now, idle);
        }
        // tcp_event_new_data_sent
        if idle || matches!(prior_timer, Some((_, XmitTimer::EarlyRetrans | XmitTimer::LossProbe))) {
            self.rearm_rto(now);
        }
        if !force {
            self.sent_new = true;
        }
        self.stamp_ack(&mut seg);
        Some(seg)
    }

    /// `tcp_cwnd_validate` after a burst: remembers how much of the window was used.
    fn cwnd_validate(&mut self) {
        let packets_out = self.sb.packets_out();
        let limited = self.is_cwnd_limited || self.in_flight() >= self.cwnd;
        if self.snd_una >= self.max_packets_seq || packets_out > self.max_packets_out {
            self.max_packets_out = packets_out;
            self.max_packets_seq = self.snd_nxt;
            self.is_cwnd_limited = limited;
        }
    }

    /// The next segment to send now, if any. Call until `None`.
    pub fn poll_segment(&mut self, now: Instant) -> Option<Segment> {
        if let Some(seq) = self.send_rst.take() {
            return Some(Segment { flags: RST, seq, ..Segment::default() });
        }
        match self.state {
            State::Failed | State::Closed | State::Done => return None,
            State::SynSent | State::SynReceived => return self.poll_handshake(now),
            State::TimeWait => {
                if self.rx.wants_ack() {
                    let mut seg = Segment { seq: self.snd_nxt, ..Segment::default() };
                    self.stamp_ack(&mut seg);
                    return Some(seg);
                }
                return None;
            }
            _ => {}
        }
        if self.handshake_ack {
            self.handshake_ack = false;
            let mut seg = Segment { seq: self.snd_nxt, ..Segment::default() };
            self.stamp_ack(&mut seg);
            return Some(seg);
        }
        if let Some(seg) = self.out.pop_front() {
            return Some(seg);
        }
        if self.rexmit == Rexmit::New {
            // F-RTO step 2.b: new data (Nagle off); if none went, conventional recovery
            if let Some(seg) = self.send_new(now, true, false) {
                return Some(seg);
            }
            self.rexmit = Rexmit::None;
            if self.snd_nxt <= self.high_seq {
                self.frto = false;
                self.rexmit = Rexmit::Lost;
            }
        }
        if self.rexmit == Rexmit::Lost {
            if let Some(seg) = self.retransmit_lost(now) {
                return Some(seg);
            }
            self.rexmit = Rexmit::None;
        }
        if let Some(seg) = self.send_new(now, true, true) {
            return Some(seg);
        }
        if self.sent_new {
            self.sent_new = false;
            self.cwnd_validate();
            self.is_cwnd_limited = false;
            if let Some((_, XmitTimer::Retrans)) = self.timer {
                self.schedule_loss_probe(now);
            }
        }
        if self.rx.wants_ack() {
            let mut seg = Segment { seq: self.snd_nxt, ..Segment::default() };
            self.stamp_ack(&mut seg);
            return Some(seg);
        }
        None
    }

    /// The SYN or SYN/ACK, when no timer is running (first or again after a timeout), or at once
    /// for a repeated SYN.
    fn poll_handshake(&mut self, now: Instant) -> Option<Segment> {
        let again_now = self.handshake_ack && self.state == State::SynReceived;
        if self.timer.is_some() && !again_now {
            return None;
        }
        self.handshake_ack = false;
        let mut seg = Segment { flags: SYN, seq: 0, retransmission: self.syn_tries > 0, ..Segment::default() };
        if self.state == State::SynReceived {
            seg.flags |= ACK;
            seg.ack = self.rx.rcv_nxt;
        }
        self.snd_nxt = 1;
        if self.syn_tries == 0 {
            self.syn_sent_at = Some(now);
        }
        self.first_syn_at.get_or_insert(now);
        if self.timer.is_none() {
            self.arm_rto(now);
        }
        Some(seg)
    }
}

/// When Linux's timer wheel (`kernel/time/timer.c`, from 4.8) runs a timer armed at `now` and due
/// at `at`, with `hz` ticks a second: in ticks, due `expires` = the tick of `now` + the delay
/// rounded up (`usecs_to_jiffies`); kept at the level whose range holds `expires − clk` (level 0
/// below 63 ticks, then below 63·8^level; `LVL_START`), and run at the level's next bucket
/// boundary after it, `((expires >> 3·level) + 1) << 3·level` (`calc_index`): one tick late at
/// level 0, up to 12.5 % of the delay at the others, and every timer of a bucket at once. The
/// ticks count from time 0 on every host (chosen: the model's hosts share one clock).
pub(crate) fn wheel_bucket(now: Instant, at: Instant, hz: u32) -> Instant {
    let tick = 1_000_000_000 / hz as u64;
    let clk = now.as_nanos() / tick;
    let delay = at.as_nanos().saturating_sub(now.as_nanos());
    let expires = clk + delay.div_ceil(tick);
    let delta = expires - clk;
    let level = (0..8u32).find(|&l| delta < 63u64 << (3 * l)).unwrap_or(8);
    let shift = 3 * level;
    Instant::from_nanos((((expires >> shift) + 1) << shift) * tick)
}
