//! An arriving ACK (Linux's `tcp_ack`): SACK tagging, the retransmission queue's cleaning, RTT
//! samples, RACK's bookkeeping.

use coap_cc::{Duration, Instant};

use super::*;
use crate::tcp::TlpRule;

impl Tcp {
    /// `tcp_ack`.
    pub(super) fn on_ack(&mut self, now: Instant, seg: &Segment) {
        let ack = seg.ack;
        let prior_una = self.snd_una;
        if ack < prior_una {
            if self.p.sack && !seg.sack.is_empty() {
                let mut flag = self.sacktag(now, seg, prior_una);
                self.fastretrans_alert(now, 0, false, &mut flag);
            }
            return;
        }
        if ack > self.snd_nxt {
            return;
        }
        // Linux 4.9 restarts a pending probe's RTO at every ACK; from 4.13 only the early
        // retransmit (RACK's reordering) timer, and the probe or RTO only when data is acknowledged
        // (F_SET_XMIT_TIMER, below)
        match self.timer {
            Some((_, XmitTimer::EarlyRetrans)) => self.rearm_rto(now),
            Some((_, XmitTimer::LossProbe)) if self.p.tlp == TlpRule::Linux49 => self.rearm_rto(now),
            _ => {}
        }
        self.rexmit = Rexmit::None;
        let mut flag = 0;
        if ack > prior_una {
            flag |= F_SND_UNA_ADVANCED | F_WIN_UPDATE;
            self.retransmits = 0;
        }
        if !seg.payload.is_empty() || seg.flags & FIN != 0 {
            flag |= F_DATA;
        }
        // snd_una moves before the SACK blocks are read (tcp_ack_update_window first)
        let drop_to = ack.min(self.data_end());
        if drop_to > self.buf_seq {
            let n = (drop_to - self.buf_seq) as usize;
            self.send_buf.drain(..n.min(self.send_buf.len()));
            self.buf_seq = drop_to;
        }
        self.snd_una = ack;
        self.delivered = 0;
        let mut first_sackt = None;
        if self.p.sack && !seg.sack.is_empty() {
            flag |= self.sacktag_into(now, seg, prior_una, &mut first_sackt);
        }
        if self.sb.segs.is_empty() {
            // no_queue: nothing was outstanding
            if flag & F_DSACKING_ACK != 0 {
                self.fastretrans_alert(now, 0, false, &mut flag);
            }
            if self.tlp_high_seq.is_some() {
                self.process_tlp_ack(ack, flag);
            }
            self.fin_acked(now);
            return;
        }
        let acked = self.clean_rtx_queue(now, &mut flag, first_sackt);
        let dubious = flag & F_NOT_DUP == 0 || flag & F_DATA_SACKED != 0 || self.ca != Ca::Open;
        if dubious {
            let is_dupack = flag & (F_SND_UNA_ADVANCED | F_NOT_DUP) == 0;
            self.fastretrans_alert(now, acked, is_dupack, &mut flag);
        }
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(ack, flag);
        }
        match self.p.tlp {
            // 4.9: a probe after every ACK that finds the RTO pending, duplicate ACKs included
            TlpRule::Linux49 => {
                if let Some((_, XmitTimer::Retrans)) = self.timer {
                    self.schedule_loss_probe(now);
                }
            }
            TlpRule::Linux6 if flag & F_SET_XMIT_TIMER != 0 => self.set_xmit_timer(now),
            TlpRule::Linux6 => {}
        }
        self.cong_control(self.delivered, flag);
        self.fin_acked(now);
    }

    /// NewReno: a duplicate ACK stands for a segment delivered (`tcp_add_reno_sack`).
    pub(super) fn add_reno_sack(&mut self) {
        let before = self.sb.reno_sacked;
        self.sb.add_reno_sack();
        self.delivered += (self.sb.reno_sacked > before) as u32;
    }

    /// Our FIN was acknowledged: the closing states move on.
    pub(super) fn fin_acked(&mut self, now: Instant) {
        if !(self.fin_sent && self.sb.segs.is_empty() && self.send_buf.is_empty()) {
            return;
        }
        match self.state {
            State::FinWait1 => {
                self.state = State::FinWait2;
                if self.p.linux_close && self.orphan {
                    self.close_deadline = Some(now + Duration::from_secs_f64(self.p.fin_timeout));
                }
            }
            State::Closing => {
                self.state = State::TimeWait;
                self.close_deadline = Some(now + Duration::from_secs_f64(self.p.time_wait_len()));
            }
            State::LastAck => {
                self.state = State::Done;
                self.timer = None;
            }
            _ => {}
        }
    }

    pub(super) fn sacktag(&mut self, now: Instant, seg: &Segment, prior_una: u64) -> u32 {
        self.sacktag_into(now, seg, prior_una, &mut None)
    }

    /// `tcp_sacktag_write_queue` (with `tcp_check_dsack` and `tcp_sacktag_one`): tags SACKed
    /// segments; a D-SACK block tells a retransmission was unnecessary (`undo_retrans`).
    pub(super) fn sacktag_into(
        &mut self,
        now: Instant,
        seg: &Segment,
        prior_una: u64,
        first_sackt: &mut Option<Instant>,
    ) -> u32 {
        let blocks = seg.sack.as_slice();
        let mut flag = 0;
        let (s0, e0) = blocks[0];
        let dsack = s0 < seg.ack || blocks.get(1).is_some_and(|&(s1, e1)| e0 <= e1 && s0 >= s1);
        if dsack {
            flag |= F_DSACKING_ACK;
            if let Some(m) = self.undo_marker {
                if self.undo_retrans > 0 && e0 <= prior_una && e0 > m {
                    self.undo_retrans -= 1;
                }
            }
        }
        for (i, &(start, end)) in blocks.iter().enumerate() {
            let dup = i == 0 && dsack;
            if end > self.snd_nxt || start >= end || start <= self.snd_una {
                continue; // invalid, or (a D-SACK) below snd_una: counted above
            }
            for k in 0..self.sb.segs.len() {
                let s = self.sb.segs[k];
                if s.seq < start || s.end > end {
                    continue;
                }
                let mut tags = s.tags;
                if dup && s.has(EVER_RETRANS) {
                    if let Some(m) = self.undo_marker {
                        if self.undo_retrans > 0 && s.end > m {
                            self.undo_retrans -= 1;
                        }
                    }
                }
                if !s.has(SACKED) {
                    self.rack_advance(now, s.sent_at, s.tags);
                    if s.has(RETRANS_OUT) {
                        if s.has(LOST) {
                            tags &= !(LOST | RETRANS_OUT);
                        }
                    } else {
                        if !s.has(EVER_RETRANS) {
                            if s.end <= self.high_seq {
                                flag |= F_ORIG_SACK_ACKED;
                            }
                            first_sackt.get_or_insert(s.sent_at);
                        }
                        tags &= !LOST;
                    }
                    tags |= SACKED;
                    flag |= F_DATA_SACKED;
                    self.delivered += 1;
                }
                if dup && tags & RETRANS_OUT != 0 {
                    tags &= !RETRANS_OUT;
                }
                self.sb.segs[k].tags = tags;
            }
        }
        flag
    }

    /// `tcp_rack_advance`: the latest transmission time among delivered segments (a
    /// retransmission delivered sooner than the minimum RTT is ambiguous and ignored).
    pub(super) fn rack_advance(&mut self, now: Instant, sent_at: Instant, tags: u8) {
        if self.rack_mstamp.is_some_and(|m| sent_at <= m) {
            return;
        }
        if tags & EVER_RETRANS != 0 && self.min_rtt.is_some_and(|m| now - sent_at < m) {
            return;
        }
        self.rack_mstamp = Some(sent_at);
        self.rack_advanced = true;
    }

    /// `tcp_rack_mark_lost` (Linux 4.9: in recovery only): a segment sent more than 1 ms before
    /// one that was delivered is lost — a lost retransmission among them. Returns whether a
    /// retransmission in flight was found lost.
    pub(super) fn rack_mark_lost(&mut self) -> bool {
        if self.ca < Ca::Recovery || !self.rack_advanced {
            return false;
        }
        self.rack_advanced = false;
        let Some(mstamp) = self.rack_mstamp else { return false };
        let reo_wnd = Duration::from_millis(1);
        let mut lost_retrans = false;
        for s in self.sb.segs.iter_mut() {
            if s.end <= self.snd_una || s.has(SACKED) {
                continue;
            }
            if mstamp > s.sent_at {
                if mstamp - s.sent_at <= reo_wnd {
                    continue;
                }
                s.tags |= LOST;
                if s.has(RETRANS_OUT) {
                    s.tags &= !RETRANS_OUT;
                    lost_retrans = true;
                }
            } else if !s.has(EVER_RETRANS) {
                break; // sent in order after the latest delivered one
            }
        }
        lost_retrans
    }

    /// `tcp_clean_rtx_queue`: drops acknowledged segments, takes an RTT sample from the oldest
    /// one acknowledged if no retransmitted one was (Karn), and rearms the RTO. Returns the
    /// number of segments acknowledged.
    pub(super) fn clean_rtx_queue(&mut self, now: Instant, flag: &mut u32, first_sackt: Option<Instant>) -> u32 {
        let mut first_ackt = None;
        let mut last_ackt = None;
        let mut acked = 0u32;
        while let Some(&s) = self.sb.segs.front() {
            if s.end > self.snd_una {
                break;
            }
            if s.has(EVER_RETRANS) {
                *flag |= F_RETRANS_DATA_ACKED;
            } else if !s.has(SACKED) {
                first_ackt.get_or_insert(s.sent_at);
                last_ackt = Some(s.sent_at);
                if s.end <= self.high_seq {
                    *flag |= F_ORIG_SACK_ACKED;
                }
            }
            if !s.has(SACKED) && self.p.sack {
                self.delivered += 1;
                self.rack_advance(now, s.sent_at, s.tags);
            }
            *flag |= F_DATA_ACKED;
            acked += 1;
            self.sb.segs.pop_front();
        }
        if !self.p.sack && acked > 0 {
            // tcp_remove_reno_sacks
            self.delivered += acked.saturating_sub(self.sb.reno_sacked).max(1);
            self.sb.reno_sacked = self.sb.reno_sacked.saturating_sub(acked - 1);
        }
        let seq_rtt = first_ackt.filter(|_| *flag & F_RETRANS_DATA_ACKED == 0).map(|t| now - t);
        let ca_rtt = last_ackt.filter(|_| *flag & F_RETRANS_DATA_ACKED == 0).map(|t| now - t);
        let sack_rtt = first_sackt.map(|t| now - t);
        if let Some(r) = seq_rtt.or(sack_rtt) {
            let ca = ca_rtt.unwrap_or(r);
            self.min_rtt = Some(self.min_rtt.map_or(ca, |m| m.min(ca)));
            self.rtt.sample(r.as_secs_f64(), self.snd_una, self.snd_nxt);
            self.rto = self.rtt.rto().unwrap_or(self.rto);
        }
        match self.p.tlp {
            TlpRule::Linux49 if *flag & F_DATA_ACKED != 0 => self.rearm_rto(now),
            TlpRule::Linux49 => {}
            // tcp_clean_rtx_queue (Linux ≥ 4.13): data acknowledged, or a SACK sample of data sent
            // before the head's last transmission, sets the timer again (in `on_ack`)
            TlpRule::Linux6 => {
                let head_age = self.sb.segs.front().map(|s| now - s.sent_at);
                if *flag & F_DATA_ACKED != 0 || sack_rtt.zip(head_age).is_some_and(|(r, age)| r > age) {
                    *flag |= F_SET_XMIT_TIMER;
                }
            }
        }
        acked
    }
}
