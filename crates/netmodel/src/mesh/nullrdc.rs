//! nullrdc, Contiki's radio duty cycling that keeps the radio on: CCA before a frame; no ACKs
//! on the Z1 firmware (every transmission reports OK), a Cooja mote's ACK and its wait
//! ([`super::CoojaMoteSpec`]); what a unicast or a broadcast frame that ended delivers.

use coap_time::Instant;

use super::channel::Fate;
use super::cpu::Job;
use super::frame;
use super::report::Cause;
use super::routing::NONE;
use super::rpl::{is_control, BROADCAST};
use super::{traffic, Mesh, MeshEvent};
use crate::medium::{Packet, Schedule};

impl Mesh {
    /// nullrdc's send: CCA, then the transmission. False when it returned at once (busy channel).
    pub(super) fn strobe<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        p: Packet,
        nh: u16,
        sched: &mut S,
    ) -> bool {
        // busy: a frame on the air, or the radio sending its automatic ACK (beside ContikiMAC);
        // a Cooja mote's nullrdc also while it receives, or holds a frame not read yet (unicast)
        let node = &self.nodes[n];
        let refused =
            self.spec.cooja_mote.is_some() && (node.rx_from != NONE || (nh != BROADCAST && node.rx_pending > 0));
        if node.cca_busy > 0 || node.transmitting || refused {
            if self.is_csma(n) {
                self.csma_after_failure(now, n, nh, true, sched);
            } else {
                self.send_returned(now, n, &p, sched);
                self.drop_packet(n, Cause::CcaBusy, p, sched);
            }
            return false;
        }
        self.transmit(now, n, p, nh, sched);
        true
    }

    /// A nullrdc unicast frame of `s` ended: its addressee takes it if its radio and RX FIFO
    /// can, else the packet is lost (`missed`: why it did not arrive). True when it took it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unicast_end<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        s: usize,
        dest: usize,
        p: Packet,
        arrived: bool,
        missed: Option<Cause>,
        sched: &mut S,
    ) -> bool {
        let mut lost = missed;
        // a Cooja mote's CSMA retries what was not ACKed: a lost frame is a lost copy, and a
        // copy taken before is ACKed again but dropped as a duplicate (nullrdc's sequence numbers)
        let retried = self.spec.cooja_mote.is_some() && self.is_csma(s);
        let passed = retried && self.nodes[s].csma.head_passed(dest as u16);
        if arrived && self.cm_timing.is_some() && self.cm_nullrdc_frame_lost(now, dest) {
            lost = Some(Cause::Collision);
        } else if arrived && passed {
            if !is_control(&p) {
                self.nodes[dest].stats.duplicates += 1;
            }
        } else if arrived && self.stalled(dest, self.frames[s].mpdu) {
            lost = Some(Cause::RxStall);
        } else if arrived {
            let fifo = self.spec.cpu.rx_fifo_frames;
            let d = &mut self.nodes[dest];
            if d.rx_pending >= fifo {
                lost = Some(Cause::RxOverflow);
            } else {
                d.rx_pending += 1;
                d.stats.frame_received(traffic(&p));
                self.push_job(now, dest, Job::Rx(p), sched);
            }
        }
        let taken = lost.is_none();
        match lost {
            Some(cause) if retried && !is_control(&p) => self.nodes[s].stats.copy_drops.add(cause),
            Some(_) if retried => {}
            Some(cause) => self.drop_packet(s, cause, p, sched),
            None if retried => {
                self.nodes[s].csma.set_head_passed(dest as u16, true);
                if !passed && !is_control(&p) {
                    self.nodes[s].stats.handed_over += 1;
                }
            }
            None => {}
        }
        self.rpl_link_sent(now, s, dest as u16);
        if self.spec.cooja_mote.is_none() {
            // nullrdc without ACKs: every transmission reports OK
            self.rpl_link_result(now, s, dest as u16, true, 1, sched);
        }
        taken
    }

    /// A Cooja mote's nullrdc sends the ACK of a frame from `to` it took, unless its radio is
    /// sending.
    pub(super) fn soft_ack<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, to: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        if node.transmitting {
            return;
        }
        node.transmitting = true;
        if node.rx_from != NONE {
            node.rx_ok = false; // half duplex
        }
        node.stats.acks_sent += 1;
        let f = &mut self.frames[n];
        f.ack = true;
        f.dest = to;
        f.airtime = self.spec.airtime_ns(frame::ACK_MPDU);
        f.mpdu = frame::ACK_MPDU;
        f.fate = Fate::Pending;
        sched.wake(Instant::from_nanos(now), MeshEvent::FrameStart(n as u16));
    }

    /// A Cooja mote's ACK frame of `r` ended: the sender waiting for it has it if intact.
    pub(super) fn soft_ack_end<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        r: usize,
        to: usize,
        arrived: bool,
        sched: &mut S,
    ) {
        if arrived {
            if let Some((nbr, acked)) = self.nodes[to].ack_wait.as_mut() {
                if *nbr as usize == r {
                    *acked = true;
                }
            }
        }
        self.frames[r].ack = false;
        self.nodes[r].transmitting = false;
        if !self.nodes[r].busy {
            self.run_next(now, r, sched);
        }
    }

    /// A Cooja mote's wait for its unicast's ACK is over: CSMA frees an acknowledged packet and
    /// retries one that was not (MAC_TX_NOACK); the CPU goes on.
    pub(super) fn ack_wait_end<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let Some((nbr, acked)) = self.nodes[n].ack_wait.take() else { return };
        let ack_ns = if acked { self.spec.airtime_ns(frame::ACK_MPDU) } else { 0 };
        if !self.is_csma(n) {
            // nullmac's send returns, 2.096 ms after the frame when the ACK came (its 96 µs on
            // the air), 2.000 ms when none did (`CoojaMoteSpec`)
            if let Job::Send(p, _) = self.nodes[n].current {
                self.send_returned(now + ack_ns, n, &p, sched);
            }
            self.rpl_link_result(now, n, nbr, acked, 1, sched);
        } else {
            // the next frame, a retry or the next packet, is not on the air before this
            let next_ns = self.spec.cooja_mote.map_or(0, |c| c.csma_next_ns);
            self.nodes[n].send_after_ns = now + next_ns + ack_ns;
            if acked {
                self.csma_acked(now, n, nbr, sched);
            } else {
                self.nodes[n].csma.count_noack(nbr);
                self.csma_after_failure(now, n, nbr, false, sched);
            }
        }
        self.run_next(now, n, sched);
    }

    /// A broadcast frame of `s` ended: every mote that received it intact takes it, if its
    /// radio and RX FIFO can.
    pub(super) fn broadcast_end<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, p: Packet, sched: &mut S) {
        let fifo = self.spec.cpu.rx_fifo_frames;
        for i in 0..self.heard.len() {
            let r = self.heard[i] as usize;
            // beside ContikiMAC: a strobing radio loses it, a listening one takes it and sleeps
            let lost = self.cm_timing.is_some() && self.cm_nullrdc_frame_lost(now, r);
            if lost || self.stalled(r, self.frames[s].mpdu) {
                continue;
            }
            if !self.rpl_fresh_broadcast(s, r, &p) || self.nodes[r].rx_pending >= fifo {
                continue;
            }
            let rn = &mut self.nodes[r];
            rn.rx_pending += 1;
            rn.stats.frame_received(traffic(&p));
            self.push_job(now, r, Job::Rx(p), sched);
        }
        self.heard.clear();
    }
}
