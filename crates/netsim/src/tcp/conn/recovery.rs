//! Loss recovery on a dubious ACK (Linux's `tcp_fastretrans_alert` and what it calls): the
//! congestion states, fast and early retransmit, F-RTO, undo.

use coap_cc::{Duration, Instant};

use super::*;

impl Tcp {
    pub(super) fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca, Ca::Cwr | Ca::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4)
        }
    }

    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        let r = self.sb.retrans_out() as i32;
        self.undo_retrans = if r > 0 { r } else { -1 };
    }

    /// `tcp_fastretrans_alert`: loss detection and the congestion states on a dubious ACK.
    pub(super) fn fastretrans_alert(&mut self, now: Instant, _acked: u32, is_dupack: bool, flag: &mut u32) {
        let sack = self.p.sack;
        let mut do_lost = is_dupack || (*flag & F_DATA_SACKED != 0 && self.sb.fackets_out(sack) > REORDERING);
        let mut fast_rexmit = false;
        if self.ca == Ca::Open {
            self.retrans_stamp = None;
        } else if self.snd_una >= self.high_seq {
            match self.ca {
                Ca::Cwr if self.snd_una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.ca = Ca::Open;
                }
                Ca::Recovery => {
                    if !sack {
                        self.sb.reno_sacked = 0;
                    }
                    if self.try_undo_recovery() {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        if self.p.rack && self.rack_mark_lost() {
            *flag |= F_LOST_RETRANS;
        }
        let mut default_branch = true;
        match self.ca {
            Ca::Recovery => {
                default_branch = false;
                if *flag & F_SND_UNA_ADVANCED == 0 {
                    if !sack && is_dupack {
                        self.add_reno_sack();
                    }
                } else {
                    do_lost = !sack || self.sb.fackets_out(sack) > REORDERING;
                }
                if self.try_undo_dsack() {
                    self.try_keep_open();
                    return;
                }
            }
            Ca::Loss => {
                self.process_loss(*flag, is_dupack);
                if self.ca != Ca::Open && *flag & F_LOST_RETRANS == 0 {
                    return;
                }
            }
            _ => {}
        }
        if default_branch {
            if !sack {
                if *flag & F_SND_UNA_ADVANCED != 0 {
                    self.sb.reno_sacked = 0;
                }
                if is_dupack {
                    self.add_reno_sack();
                }
            }
            if self.ca <= Ca::Disorder {
                self.try_undo_dsack();
            }
            if !self.time_to_recover(now) {
                self.try_to_open();
                return;
            }
            self.enter_recovery();
            fast_rexmit = true;
        }
        if do_lost {
            self.update_scoreboard(fast_rexmit);
        }
        self.rexmit = Rexmit::Lost;
    }

    /// `tcp_process_loss`: after an RTO, with F-RTO (RFC 5682, SACK-enhanced as in Linux): the
    /// first ACK that advances sends new data instead of retransmitting; if the next one then
    /// acknowledges data that was never retransmitted, the timeout was spurious and is undone.
    pub(super) fn process_loss(&mut self, flag: u32, is_dupack: bool) {
        let recovered = self.snd_una >= self.high_seq;
        if flag & F_SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return;
        }
        if self.frto {
            if flag & F_ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return;
            }
            if self.snd_nxt > self.high_seq {
                if flag & F_DATA_SACKED != 0 || is_dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if flag & F_SND_UNA_ADVANCED != 0 && !recovered {
                self.high_seq = self.snd_nxt;
                if self.unsent() > 0 {
                    self.rexmit = Rexmit::New; // step 2.b: try new data
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery();
            return;
        }
        if !self.p.sack {
            if self.snd_nxt > self.high_seq && is_dupack {
                self.add_reno_sack();
            } else if flag & F_SND_UNA_ADVANCED != 0 {
                self.sb.reno_sacked = 0;
            }
        }
        self.rexmit = Rexmit::Lost;
    }

    pub(super) fn may_undo(&self) -> bool {
        // without timestamps a retransmission is known unnecessary only by D-SACK
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.retrans_stamp.is_none())
    }

    pub(super) fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for s in self.sb.segs.iter_mut() {
                s.tags &= !LOST;
            }
        }
        if self.prior_ssthresh > 0 {
            self.cwnd = self.cwnd.max(self.ssthresh.saturating_mul(2));
            if self.prior_ssthresh > self.ssthresh {
                self.ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = None;
    }

    pub(super) fn try_undo_recovery(&mut self) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        }
        if self.snd_una == self.high_seq && !self.p.sack {
            // NewReno holds the state until an ACK passes high_seq (no false fast retransmits)
            self.cwnd = self.cwnd.min(self.in_flight() + 3);
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            return true;
        }
        self.ca = Ca::Open;
        false
    }

    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    pub(super) fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(true);
            self.stats.spurious_rtos += frto_undo as u64;
            self.retransmits = 0;
            if frto_undo || self.p.sack {
                self.ca = Ca::Open;
            }
            self.rexmit = Rexmit::None;
            return true;
        }
        false
    }

    pub(super) fn any_retrans_done(&self) -> bool {
        self.sb.retrans_out() > 0 || self.sb.segs.front().is_some_and(|s| s.has(EVER_RETRANS))
    }

    pub(super) fn try_keep_open(&mut self) {
        let left_out = self.sb.sacked_out(self.p.sack) + self.sb.lost_out();
        let state = if left_out > 0 || self.any_retrans_done() { Ca::Disorder } else { Ca::Open };
        if self.ca != state {
            self.ca = state;
            self.high_seq = self.snd_nxt;
        }
    }

    pub(super) fn try_to_open(&mut self) {
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        if self.ca != Ca::Cwr {
            self.try_keep_open();
        }
    }

    /// New data could go now (window and Nagle allowing).
    pub(super) fn may_send_now(&self) -> bool {
        let unsent = self.unsent();
        unsent > 0 && self.in_flight() < self.cwnd && !self.nagle_holds(unsent.min(self.p.mss as u64))
    }

    /// `tcp_time_to_recover`: enough duplicate ACKs (FACK: SACKed segments above a hole) — or,
    /// with fewer than four segments out, an early retransmit (RFC 5827), delayed by a quarter
    /// of the SRTT (at least 2 ms) in Linux's modes 2 and 3 unless the RTO comes first.
    pub(super) fn time_to_recover(&mut self, now: Instant) -> bool {
        let sack = self.p.sack;
        if self.sb.lost_out() > 0 {
            return true;
        }
        let heuristics = if sack { self.sb.fackets_out(true) } else { self.sb.sacked_out(false) + 1 };
        if heuristics > REORDERING {
            return true;
        }
        let packets_out = self.sb.packets_out();
        let sacked = self.sb.sacked_out(sack);
        if packets_out <= REORDERING && sacked >= (packets_out / 2).max(REORDERING) && !self.may_send_now() {
            return true;
        }
        if self.p.early_retransmit()
            && self.sb.retrans_out() == 0
            && sacked > 0
            && packets_out > sacked
            && packets_out < 4
            && !self.may_send_now()
        {
            return !self.pause_early_retransmit(now);
        }
        false
    }

    pub(super) fn pause_early_retransmit(&mut self, now: Instant) -> bool {
        let Some(srtt) = self.rtt.srtt().filter(|_| (2..=3).contains(&self.p.early_retrans)) else { return false };
        let delay = Duration::from_secs_f64((srtt / 4.0).max(0.002));
        if self.timer.is_some_and(|(at, _)| at <= now + delay) {
            return false;
        }
        self.arm(now, now + delay, XmitTimer::EarlyRetrans);
        true
    }

    pub(super) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.cwnd_cnt = 0;
        self.prior_cwnd = self.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.ssthresh = (self.cwnd / 2).max(2);
    }

    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.ca == Ca::Cwr || (self.undo_marker.is_some() && self.ssthresh < u32::MAX) {
            self.cwnd = self.ssthresh;
        }
    }

    pub(super) fn enter_recovery(&mut self) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !matches!(self.ca, Ca::Cwr | Ca::Recovery) {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.ca = Ca::Recovery;
    }

    /// `tcp_update_scoreboard`: NewReno marks the head lost; FACK the segments below the highest
    /// SACKed one less the reordering degree.
    pub(super) fn update_scoreboard(&mut self, _fast_rexmit: bool) {
        if !self.p.sack {
            self.sb.mark_head_lost(1, true, self.high_seq);
        } else {
            // FACK (Linux 4.9's default with SACK) marks whether or not this ACK began recovery
            let lost = self.sb.fackets_out(true).saturating_sub(REORDERING).max(1);
            self.sb.mark_head_lost(lost, false, self.snd_nxt);
        }
    }

    /// `tcp_process_tlp_ack`: a probe's episode ends; if the ACK covered the probe without a
    /// D-SACK saying it was unnecessary, a loss was repaired and the window is halved once.
    pub(super) fn process_tlp_ack(&mut self, ack: u64, flag: u32) {
        let Some(high) = self.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if flag & F_DSACKING_ACK != 0 {
            self.tlp_high_seq = None;
        } else if ack > high {
            self.init_cwnd_reduction();
            self.ca = Ca::Cwr;
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (F_SND_UNA_ADVANCED | F_NOT_DUP | F_DATA_SACKED) == 0 {
            self.tlp_high_seq = None;
        }
    }
}
