//! The congestion window: Reno growth while the window limits, proportional rate reduction
//! (RFC 6937) while reducing (Linux's `tcp_cong_control`).

use super::*;

impl Tcp {
    /// `tcp_cong_control`: proportional rate reduction (RFC 6937) while reducing, else Reno.
    pub(super) fn cong_control(&mut self, delivered: u32, flag: u32) {
        if matches!(self.ca, Ca::Cwr | Ca::Recovery) {
            self.cwnd_reduction(delivered, flag);
        } else if flag & F_DATA_ACKED != 0 {
            self.reno_cong_avoid(delivered);
        }
    }

    pub(super) fn cwnd_reduction(&mut self, newly: u32, flag: u32) {
        if newly == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly;
        let in_flight = self.in_flight() as i64;
        let delta = self.ssthresh as i64 - in_flight;
        let mut sndcnt = if delta < 0 {
            let dividend = self.ssthresh as i64 * self.prr_delivered as i64 + self.prior_cwnd as i64 - 1;
            dividend / self.prior_cwnd as i64 - self.prr_out as i64
        } else if flag & F_RETRANS_DATA_ACKED != 0 && flag & F_LOST_RETRANS == 0 {
            delta.min((self.prr_delivered as i64 - self.prr_out as i64).max(newly as i64) + 1)
        } else {
            delta.min(newly as i64)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// Reno (`tcp_reno_cong_avoid`): only a window that limits the sender grows.
    pub(super) fn reno_cong_avoid(&mut self, mut acked: u32) {
        let limited =
            if self.cwnd < self.ssthresh { self.cwnd < 2 * self.max_packets_out } else { self.is_cwnd_limited };
        if !limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let cwnd = (self.cwnd + acked).min(self.ssthresh);
            acked -= cwnd - self.cwnd;
            self.cwnd = cwnd;
            if acked == 0 {
                return;
            }
        }
        let w = self.cwnd;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd += d;
        }
    }
}
