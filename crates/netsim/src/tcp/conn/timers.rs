//! The connection's timers: the retransmission timer (RTO, early retransmit, tail loss probe;
//! Linux's `tcp_timer.c` and the probe functions of `tcp_output.c`) and the retry limits.

use coap_cc::{Duration, Instant};

use super::*;
use crate::tcp::TlpRule;

impl Tcp {
    /// Handles the timers due at `now`.
    pub fn on_timeout(&mut self, now: Instant) {
        self.rx.on_timeout(now);
        if self.close_deadline.is_some_and(|d| d <= now) {
            self.close_deadline = None;
            self.state = State::Done;
            self.timer = None;
        }
        let Some((_, kind)) = self.timer.filter(|_| self.timer_runs <= now) else { return };
        match kind {
            XmitTimer::Retrans => {
                self.timer = None;
                self.retransmit_timer(now);
            }
            XmitTimer::EarlyRetrans => self.resume_early_retransmit(now),
            XmitTimer::LossProbe => self.send_loss_probe(now),
        }
    }

    /// Linux's `retransmits_timed_out`: with `retries_by_time`, whether the time since the first
    /// retransmission exceeds the backoff series `boundary` retries from `base` would take
    /// (capped at the maximum RTO); else whether `boundary` RTOs have expired.
    pub(super) fn timed_out(
        &self,
        now: Instant,
        retransmits: u32,
        boundary: u32,
        base: f64,
        start: Option<Instant>,
    ) -> bool {
        if retransmits == 0 {
            return false;
        }
        if !self.p.retries_by_time {
            return retransmits >= boundary;
        }
        let thresh = ((self.p.max_rto / base) as u32).max(1).ilog2();
        let timeout = if boundary <= thresh {
            ((2u64 << boundary) - 1) as f64 * base
        } else {
            ((2u64 << thresh) - 1) as f64 * base + (boundary - thresh) as f64 * self.p.max_rto
        };
        let start = start.or(self.sb.segs.front().map(|s| s.sent_at)).unwrap_or(now);
        (now - start).as_secs_f64() >= timeout
    }

    /// `tcp_write_timeout` for a synchronized connection: `retries2`, or an orphan's limit.
    pub(super) fn write_timeout(&self, now: Instant) -> bool {
        let boundary = if self.orphan && self.p.linux_close {
            let alive = self.rto < self.p.max_rto;
            match self.p.orphan_retries {
                0 if alive => 8,
                r => r,
            }
        } else {
            self.p.retries2
        };
        self.timed_out(now, self.retransmits, boundary, self.p.min_rto, self.retrans_stamp)
    }

    /// `tcp_retransmit_timer`.
    pub(super) fn retransmit_timer(&mut self, now: Instant) {
        self.stats.timeouts += 1;
        self.stats.timeouts_over_60s += (self.rto > 60.0) as u64;
        if matches!(self.state, State::SynSent | State::SynReceived) {
            let linear = self.p.syn_linear_timeouts;
            let gave_up = if self.state != State::SynSent {
                self.syn_tries >= self.p.syn_retries // a request socket counts (reqsk_timer_handler)
            } else if linear > 0 {
                self.syn_tries >= self.p.syn_retries + linear // 6.5's tcp_write_timeout counts
            } else {
                self.timed_out(now, self.syn_tries, self.p.syn_retries, self.p.initial_rto, self.first_syn_at)
            };
            // 6.5's tcp_retransmit_timer: a SYN's first `linear` retransmissions keep the RTO
            if self.state != State::SynSent || self.syn_tries + 1 > linear {
                self.back_off();
            }
            if gave_up {
                self.fail();
            } else {
                self.syn_tries += 1; // the SYN (or SYN/ACK) goes again at poll_segment
            }
            return;
        }
        if self.sb.segs.is_empty() {
            return;
        }
        // an RTO ends a loss probe's episode (4.9's tcp_retransmit_timer; 6.x's tcp_enter_loss):
        // the next segment may be probed again
        self.tlp_high_seq = None;
        if self.write_timeout(now) {
            self.fail();
            return;
        }
        self.enter_loss();
        if let Some(seg) = self.retransmit(now, 0, false) {
            self.out.push_back(seg);
        }
        self.retransmits += 1;
        self.back_off();
        self.arm_rto(now);
    }

    /// An expired timer doubles the RTO, up to the maximum.
    fn back_off(&mut self) {
        self.rto = (self.rto * 2.0).min(self.p.max_rto);
    }

    /// `tcp_enter_loss`: every segment not SACKed is lost; the window is one segment.
    pub(super) fn enter_loss(&mut self) {
        let new_recovery = self.ca < Ca::Recovery;
        if self.ca <= Ca::Disorder || self.high_seq <= self.snd_una || (self.ca == Ca::Loss && self.retransmits == 0) {
            self.prior_ssthresh = self.current_ssthresh();
            self.ssthresh = (self.cwnd / 2).max(2);
            self.init_undo();
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        self.sb.reno_sacked = 0;
        let reneged = self.sb.segs.front().is_some_and(|s| s.has(SACKED));
        for s in self.sb.segs.iter_mut() {
            s.tags &= !(LOST | RETRANS_OUT);
            if reneged {
                s.tags &= !SACKED;
            }
            if !s.has(SACKED) {
                s.tags |= LOST;
            }
        }
        self.ca = Ca::Loss;
        self.high_seq = self.snd_nxt;
        self.frto = self.p.frto && (new_recovery || self.retransmits > 0);
    }

    /// `tcp_resume_early_retransmit`: the delayed early retransmit is due.
    pub(super) fn resume_early_retransmit(&mut self, now: Instant) {
        self.rearm_rto(now);
        if !self.p.early_retransmit() {
            return;
        }
        self.enter_recovery();
        self.update_scoreboard(true);
        self.rexmit = Rexmit::Lost;
    }

    /// `tcp_schedule_loss_probe`, as [`TlpRule`] says: Linux 4.9 probes at 2·SRTT (at least
    /// 1.5·SRTT + 200 ms with one segment out, 10 ms at least) in the Open state when the window
    /// or the application limits the connection; Linux 6 at 2·SRTT + rto_min with one segment out
    /// (+ 2 ms otherwise), in the Open or CWR state. Without an RTT sample, at the initial RTO;
    /// at the RTO if that is sooner.
    pub(super) fn schedule_loss_probe(&mut self, now: Instant) {
        let Some((rto_at, XmitTimer::Retrans)) = self.timer else { return };
        if !self.p.tlp() || self.sb.segs.is_empty() || !self.is_established() {
            return;
        }
        let rule = self.p.tlp;
        let state_ok = match rule {
            TlpRule::Linux49 => self.ca == Ca::Open,
            TlpRule::Linux6 => matches!(self.ca, Ca::Open | Ca::Cwr),
        };
        if !state_ok {
            return;
        }
        if rule == TlpRule::Linux49 && self.cwnd > self.in_flight() && self.unsent() > 0 {
            return;
        }
        let one_out = self.sb.packets_out() == 1;
        let srtt = self.rtt.srtt().unwrap_or(0.0);
        let timeout = match rule {
            TlpRule::Linux49 => {
                let mut t = if srtt > 0.0 { 2.0 * srtt } else { self.p.initial_rto };
                if one_out {
                    t = t.max(1.5 * srtt + DELACK_MAX);
                }
                t.max(0.010)
            }
            TlpRule::Linux6 if srtt > 0.0 => 2.0 * srtt + if one_out { self.p.min_rto } else { TIMEOUT_MIN },
            TlpRule::Linux6 => self.p.initial_rto,
        };
        let mut at = now + Duration::from_secs_f64(timeout);
        if at > rto_at && rto_at > now {
            at = rto_at;
        }
        self.arm(now, at, XmitTimer::LossProbe);
    }

    /// `tcp_set_xmit_timer` (Linux ≥ 4.13, with [`TlpRule::Linux6`]): the RTO from now, or the
    /// probe if it is due sooner.
    pub(super) fn set_xmit_timer(&mut self, now: Instant) {
        if self.sb.segs.is_empty() {
            self.timer = None;
            return;
        }
        self.arm_rto(now);
        self.schedule_loss_probe(now);
    }

    /// `tcp_send_loss_probe`: new data if there is any, else the last segment again.
    pub(super) fn send_loss_probe(&mut self, now: Instant) {
        if self.unsent() > 0 || self.fin_pending() {
            if let Some(seg) = self.send_new(now, false, false) {
                self.out.push_back(seg);
                self.probe_sent(now);
            } else {
                self.rearm_rto(now);
            }
            return;
        }
        if self.tlp_high_seq.is_some() || self.sb.segs.is_empty() {
            self.rearm_rto(now); // at most one probe retransmission outstanding
            return;
        }
        let last = self.sb.segs.len() - 1;
        if let Some(seg) = self.retransmit(now, last, true) {
            self.out.push_back(seg);
            self.tlp_high_seq = Some(self.snd_nxt);
            self.probe_sent(now);
        } else {
            self.rearm_rto(now);
        }
    }

    pub(super) fn probe_sent(&mut self, now: Instant) {
        self.stats.loss_probes += 1;
        self.timer = None; // the RTO then runs from now
        self.rearm_rto(now);
    }
}
