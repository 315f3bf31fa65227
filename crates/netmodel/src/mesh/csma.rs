//! Contiki's CSMA: per-neighbour FIFOs sharing a pool of packet buffers, retries after a
//! random backoff on a busy channel (COLLISION) or a missing ACK (NOACK), until
//! `max_transmissions`; Contiki 3.0's time-base backoff or the binary exponential one
//! (`docs/mesh.md`).

use std::collections::VecDeque;

use coap_time::Instant;
use rand_core::RngCore;

use super::cpu::Job;
use super::report::Cause;
use super::{CsmaBackoff, MacSpec, Mesh, MeshEvent, CSMA_MAX_BACKOFF, CSMA_MAX_BE, TICK_NS};
use crate::medium::{Packet, Schedule};

#[derive(Debug, Default)]
pub(super) struct NbrQueue {
    pub(super) active: bool,
    pub(super) nbr: u16,
    pub(super) packets: VecDeque<Packet>,
    pub(super) transmissions: u32,
    /// The binary exponential backoff's collision count (its BE before the cap).
    pub(super) collisions: u32,
    pub(super) gen: u32,
    /// ContikiMAC: the next hop took the head packet already (its ACK was lost).
    pub(super) head_passed: bool,
}

impl NbrQueue {
    /// The CPU job that sends the head packet.
    pub(super) fn send_head(&self) -> Job {
        Job::Send(self.packets[0], self.nbr)
    }
}

impl Mesh {
    pub(super) fn csma_enqueue<S: Schedule<MeshEvent>>(&mut self, n: usize, p: Packet, nh: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        let MacSpec::Csma { queuebuf_num: bufs, .. } = node.mac else { return };
        let qi = match node.queues.iter().position(|q| q.active && q.nbr == nh) {
            Some(i) => i,
            None => match node.queues.iter().position(|q| !q.active) {
                Some(i) => i,
                None => return self.drop_packet(n, Cause::NoNeighborQueue, p, sched),
            },
        };
        if node.buffers >= bufs || node.queues[qi].packets.len() >= bufs as usize {
            return self.drop_packet(n, Cause::QueueFull, p, sched);
        }
        let q = &mut node.queues[qi];
        if !q.active {
            q.active = true;
            q.nbr = nh;
            q.transmissions = 0;
        }
        q.packets.push_back(p);
        node.buffers += 1;
        if q.packets.len() == 1 {
            // the head of an empty queue goes out at once (a 0-tick timer: behind the CPU's jobs)
            node.jobs.push_back(q.send_head());
        }
    }

    pub(super) fn is_csma(&self, n: usize) -> bool {
        matches!(self.nodes[n].mac, MacSpec::Csma { .. })
    }

    pub(super) fn queue_of(&self, n: usize, nbr: u16) -> usize {
        self.nodes[n].queues.iter().position(|q| q.active && q.nbr == nbr).expect("an active CSMA queue")
    }

    /// The head packet of `nbr`'s queue is done with: the next one waits one time base.
    /// The head of `n`'s queue to `nbr` was acknowledged: link-stats hears of it with the
    /// transmissions it took (MAC_TX_OK), and it is freed.
    pub(super) fn csma_acked<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let numtx = self.nodes[n].queues[self.queue_of(n, nbr)].transmissions + 1;
        self.rpl_link_result(now, n, nbr, true, numtx, sched);
        self.csma_free_head(now, n, nbr, sched);
    }

    pub(super) fn csma_free_head<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let qi = self.queue_of(n, nbr);
        let node = &mut self.nodes[n];
        let q = &mut node.queues[qi];
        q.packets.pop_front();
        q.transmissions = 0;
        q.collisions = 0;
        q.head_passed = false;
        node.buffers -= 1;
        if q.packets.is_empty() {
            q.active = false;
            return;
        }
        q.gen = q.gen.wrapping_add(1);
        if let MacSpec::Csma { backoff: CsmaBackoff::BinaryExponential, .. } = node.mac {
            // BE 0: the next packet goes at once (a 0-tick timer: behind the CPU's jobs)
            node.jobs.push_back(q.send_head());
        } else {
            let at = Instant::from_nanos(now + self.csma_base_ticks * TICK_NS);
            sched.wake(at, MeshEvent::CsmaTimer(n as u16, qi as u16, q.gen));
        }
    }

    /// A COLLISION (busy channel) or a NOACK (counted in `transmissions` already): retry after
    /// a random backoff, or give up.
    pub(super) fn csma_after_failure<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        nbr: u16,
        collision: bool,
        sched: &mut S,
    ) {
        let qi = self.queue_of(n, nbr);
        let MacSpec::Csma { max_transmissions, backoff, .. } = self.nodes[n].mac else { return };
        let node = &mut self.nodes[n];
        if collision {
            node.stats.csma_busy_retries += 1;
        }
        let q = &mut node.queues[qi];
        if backoff == CsmaBackoff::BinaryExponential {
            if collision {
                q.collisions += 1;
                if q.collisions > CSMA_MAX_BACKOFF {
                    q.collisions = 0;
                    q.transmissions += 1;
                }
            } else {
                q.collisions = 0;
            }
        }
        if q.transmissions >= max_transmissions {
            let (p, passed, numtx) = (q.packets[0], q.head_passed, q.transmissions);
            if !collision {
                self.rpl_link_result(now, n, nbr, false, numtx, sched);
            }
            self.lose(n, Cause::CsmaRetryLimit, p, passed, sched);
            return self.csma_free_head(now, n, nbr, sched);
        }
        q.gen = q.gen.wrapping_add(1);
        let ticks = match backoff {
            CsmaBackoff::Timebase => {
                let base = self.csma_base_ticks;
                let window = (1u64 << q.transmissions.min(3)) * base;
                base + node.rng.next_u64() % window
            }
            CsmaBackoff::BinaryExponential => {
                // the backoff period: the RDC's channel check interval, 1 tick without one
                let period = if node.cm { self.csma_base_ticks } else { 1 };
                let window = ((1u64 << q.collisions.min(CSMA_MAX_BE)) - 1) * period;
                if window == 0 {
                    0
                } else {
                    node.rng.next_u64() % window
                }
            }
        };
        if ticks == 0 {
            let job = q.send_head();
            return self.push_job(now, n, job, sched);
        }
        // a Cooja mote's clock ticks every millisecond
        let tick_ns = match self.spec.cooja_mote {
            Some(c) if !node.cm => c.tick_ns,
            _ => TICK_NS,
        };
        sched.wake(Instant::from_nanos(now + ticks * tick_ns), MeshEvent::CsmaTimer(n as u16, qi as u16, q.gen));
    }

    pub(super) fn csma_timer<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        qi: usize,
        gen: u32,
        sched: &mut S,
    ) {
        let q = &self.nodes[n].queues[qi];
        if !q.active || q.gen != gen {
            return;
        }
        let job = q.send_head();
        self.push_job(now, n, job, sched);
    }
}
