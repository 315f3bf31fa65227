//! Contiki's CSMA: per-neighbour FIFOs sharing a pool of packet buffers, retries after a
//! random backoff on a busy channel (COLLISION) or a missing ACK (NOACK), until
//! `max_transmissions`; Contiki 3.0's time-base backoff or the binary exponential one
//! (`docs/mesh.md`).
//!
//! [`Csma`] owns a mote's queues and says what is to happen next ([`Then`], [`Failed`]); the
//! glue at the bottom (`impl Mesh`) does it: a CPU job, a timer, a drop, link statistics.

use std::collections::VecDeque;

use coap_time::Instant;
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;

use super::cpu::Job;
use super::report::Cause;
use super::{CsmaBackoff, MacSpec, Mesh, MeshEvent, CSMA_MAX_BACKOFF, CSMA_MAX_BE, TICK_NS};
use crate::medium::{Packet, Schedule};

/// The packets for one neighbour.
#[derive(Debug, Default)]
struct NbrQueue {
    active: bool,
    nbr: u16,
    packets: VecDeque<Packet>,
    transmissions: u32,
    /// The binary exponential backoff's collision count (its BE before the cap).
    collisions: u32,
    /// Counts the queue's timers: a timer of an earlier generation is stale.
    gen: u32,
    /// The next hop took the head packet already (its ACK was lost).
    head_passed: bool,
}

impl NbrQueue {
    /// The CPU job that sends the head packet.
    fn send_head(&self) -> Job {
        Job::Send(self.packets[0], self.nbr)
    }
}

/// A mote's CSMA (a nullmac mote has one without queues, never used).
#[derive(Debug)]
pub(super) struct Csma {
    queues: Vec<NbrQueue>,
    /// Packets held in all queues.
    buffers: u32,
    /// QUEUEBUF_CONF_NUM.
    queuebuf_num: u32,
    max_transmissions: u32,
    backoff: CsmaBackoff,
}

/// What the mote does next about a queue.
#[derive(Debug)]
pub(super) enum Then {
    /// Nothing: the queue is empty.
    Idle,
    /// Send its head at once (a 0-tick timer: behind the CPU's jobs).
    Send(Job),
    /// Send its head when the timer (queue, generation) fires after `ticks` clock ticks.
    Timer { ticks: u64, queue: u16, gen: u32 },
}

/// What a failed transmission leaves.
#[derive(Debug)]
pub(super) enum Failed {
    /// `max_transmissions` reached: the head packet is given up (still queued: free it).
    GiveUp { packet: Packet, passed: bool, transmissions: u32 },
    /// A retry, after the backoff.
    Retry(Then),
}

impl Csma {
    /// The queues `mac` has (none under nullmac).
    pub(super) fn new(mac: &MacSpec) -> Self {
        match *mac {
            MacSpec::Nullmac => Csma {
                queues: Vec::new(),
                buffers: 0,
                queuebuf_num: 0,
                max_transmissions: 0,
                backoff: CsmaBackoff::Timebase,
            },
            MacSpec::Csma { queuebuf_num, max_neighbor_queues, max_transmissions, backoff } => Csma {
                queues: (0..max_neighbor_queues)
                    .map(|_| NbrQueue { packets: VecDeque::with_capacity(queuebuf_num as usize), ..Default::default() })
                    .collect(),
                buffers: 0,
                queuebuf_num,
                max_transmissions,
                backoff,
            },
        }
    }

    fn queue_of(&self, nbr: u16) -> usize {
        self.queues.iter().position(|q| q.active && q.nbr == nbr).expect("an active CSMA queue")
    }

    /// Queues `p` for `nh`: `Some(job)` when it is the head of an empty queue (it goes at once),
    /// or why it is dropped.
    pub(super) fn enqueue(&mut self, p: Packet, nh: u16) -> Result<Option<Job>, Cause> {
        let qi = match self.queues.iter().position(|q| q.active && q.nbr == nh) {
            Some(i) => i,
            None => self.queues.iter().position(|q| !q.active).ok_or(Cause::NoNeighborQueue)?,
        };
        let bufs = self.queuebuf_num;
        if self.buffers >= bufs || self.queues[qi].packets.len() >= bufs as usize {
            return Err(Cause::QueueFull);
        }
        let q = &mut self.queues[qi];
        if !q.active {
            q.active = true;
            q.nbr = nh;
            q.transmissions = 0;
        }
        q.packets.push_back(p);
        self.buffers += 1;
        Ok((q.packets.len() == 1).then(|| q.send_head()))
    }

    /// Transmissions of the head packet to `nbr` so far.
    pub(super) fn transmissions(&self, nbr: u16) -> u32 {
        self.queues[self.queue_of(nbr)].transmissions
    }

    /// A transmission to `nbr` went without its ACK (MAC_TX_NOACK): it counts.
    pub(super) fn count_noack(&mut self, nbr: u16) {
        let qi = self.queue_of(nbr);
        self.queues[qi].transmissions += 1;
    }

    /// Whether `nbr` took the head of its queue already.
    pub(super) fn head_passed(&self, nbr: u16) -> bool {
        self.queues[self.queue_of(nbr)].head_passed
    }

    /// Whether `nbr` took the head of its queue already (no queue: no).
    pub(super) fn passed(&self, nbr: u16) -> bool {
        self.queues.iter().any(|q| q.active && q.nbr == nbr && q.head_passed)
    }

    pub(super) fn set_head_passed(&mut self, nbr: u16, passed: bool) {
        let qi = self.queue_of(nbr);
        self.queues[qi].head_passed = passed;
    }

    /// The head packet of `nbr`'s queue is done with: the next one goes at once (binary
    /// exponential: BE 0) or after `base_ticks` (the time base).
    pub(super) fn free_head(&mut self, nbr: u16, base_ticks: u64) -> Then {
        let qi = self.queue_of(nbr);
        let q = &mut self.queues[qi];
        q.packets.pop_front();
        q.transmissions = 0;
        q.collisions = 0;
        q.head_passed = false;
        self.buffers -= 1;
        if q.packets.is_empty() {
            q.active = false;
            return Then::Idle;
        }
        q.gen = q.gen.wrapping_add(1);
        match self.backoff {
            CsmaBackoff::BinaryExponential => Then::Send(q.send_head()),
            CsmaBackoff::Timebase => Then::Timer { ticks: base_ticks, queue: qi as u16, gen: q.gen },
        }
    }

    /// A COLLISION (busy channel) or a NOACK (counted in the transmissions already) on the
    /// transmission to `nbr`: retry after a random backoff drawn from `rng` (the time base
    /// `base_ticks`; the binary exponential backoff's period `be_period` ticks), or give up.
    pub(super) fn failed(
        &mut self,
        nbr: u16,
        collision: bool,
        base_ticks: u64,
        be_period: u64,
        rng: &mut ChaCha8Rng,
    ) -> Failed {
        let qi = self.queue_of(nbr);
        let q = &mut self.queues[qi];
        if self.backoff == CsmaBackoff::BinaryExponential {
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
        if q.transmissions >= self.max_transmissions {
            return Failed::GiveUp { packet: q.packets[0], passed: q.head_passed, transmissions: q.transmissions };
        }
        q.gen = q.gen.wrapping_add(1);
        let ticks = match self.backoff {
            CsmaBackoff::Timebase => {
                let window = (1u64 << q.transmissions.min(3)) * base_ticks;
                base_ticks + rng.next_u64() % window
            }
            CsmaBackoff::BinaryExponential => {
                let window = ((1u64 << q.collisions.min(CSMA_MAX_BE)) - 1) * be_period;
                if window == 0 {
                    0
                } else {
                    rng.next_u64() % window
                }
            }
        };
        Failed::Retry(if ticks == 0 {
            Then::Send(q.send_head())
        } else {
            Then::Timer { ticks, queue: qi as u16, gen: q.gen }
        })
    }

    /// The timer (queue `qi`, generation `gen`) fired: the head to send, unless it is stale.
    pub(super) fn timer(&self, qi: usize, gen: u32) -> Option<Job> {
        let q = &self.queues[qi];
        (q.active && q.gen == gen).then(|| q.send_head())
    }
}

impl Mesh {
    pub(super) fn csma_enqueue<S: Schedule<MeshEvent>>(&mut self, n: usize, p: Packet, nh: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        if !matches!(node.mac, MacSpec::Csma { .. }) {
            return;
        }
        match node.csma.enqueue(p, nh) {
            Err(cause) => self.drop_packet(n, cause, p, sched),
            Ok(Some(job)) => node.jobs.push_back(job),
            Ok(None) => {}
        }
    }

    pub(super) fn is_csma(&self, n: usize) -> bool {
        matches!(self.nodes[n].mac, MacSpec::Csma { .. })
    }

    /// The head of `n`'s queue to `nbr` was acknowledged: link-stats hears of it with the
    /// transmissions it took (MAC_TX_OK), and it is freed.
    pub(super) fn csma_acked<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let numtx = self.nodes[n].csma.transmissions(nbr) + 1;
        self.rpl_link_result(now, n, nbr, true, numtx, sched);
        self.csma_free_head(now, n, nbr, sched);
    }

    /// The head packet of `nbr`'s queue is done with: the next one follows.
    pub(super) fn csma_free_head<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        let node = &mut self.nodes[n];
        match node.csma.free_head(nbr, self.csma_base_ticks) {
            Then::Idle => {}
            Then::Send(job) => node.jobs.push_back(job),
            Then::Timer { ticks, queue, gen } => {
                sched.wake(Instant::from_nanos(now + ticks * TICK_NS), MeshEvent::CsmaTimer(n as u16, queue, gen))
            }
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
        if !self.is_csma(n) {
            return;
        }
        let node = &mut self.nodes[n];
        if collision {
            node.stats.csma_busy_retries += 1;
        }
        // the backoff period: the RDC's channel check interval, 1 tick without one
        let be_period = if node.cm { self.csma_base_ticks } else { 1 };
        match node.csma.failed(nbr, collision, self.csma_base_ticks, be_period, &mut node.rng) {
            Failed::GiveUp { packet, passed, transmissions } => {
                if !collision {
                    self.rpl_link_result(now, n, nbr, false, transmissions, sched);
                }
                self.lose(n, Cause::CsmaRetryLimit, packet, passed, sched);
                self.csma_free_head(now, n, nbr, sched);
            }
            Failed::Retry(Then::Send(job)) => self.push_job(now, n, job, sched),
            Failed::Retry(Then::Timer { ticks, queue, gen }) => {
                // a Cooja mote's clock ticks every millisecond
                let tick_ns = match self.spec.cooja_mote {
                    Some(c) if !node.cm => c.tick_ns,
                    _ => TICK_NS,
                };
                sched.wake(Instant::from_nanos(now + ticks * tick_ns), MeshEvent::CsmaTimer(n as u16, queue, gen));
            }
            Failed::Retry(Then::Idle) => {}
        }
    }

    pub(super) fn csma_timer<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        qi: usize,
        gen: u32,
        sched: &mut S,
    ) {
        if let Some(job) = self.nodes[n].csma.timer(qi, gen) {
            self.push_job(now, n, job, sched);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::PacketId;
    use crate::HostId;
    use rand_core::SeedableRng;

    fn packet(id: u32) -> Packet {
        Packet { id: PacketId(id), from: HostId(0), to: HostId(1), size: 60, note: 0 }
    }

    fn csma(queuebuf_num: u32, max_neighbor_queues: u32, backoff: CsmaBackoff) -> Csma {
        Csma::new(&MacSpec::Csma { queuebuf_num, max_neighbor_queues, max_transmissions: 3, backoff })
    }

    fn sent(job: Option<Job>) -> Option<(u32, u16)> {
        match job {
            Some(Job::Send(p, nbr)) => Some((p.id.0, nbr)),
            _ => None,
        }
    }

    #[test]
    fn queues_and_buffers_bound_what_is_held() {
        // 2 neighbour queues sharing 3 buffers
        let mut c = csma(3, 2, CsmaBackoff::Timebase);
        // the head of an empty queue goes at once; the next one waits behind it
        assert_eq!(sent(c.enqueue(packet(1), 7).unwrap()), Some((1, 7)));
        assert_eq!(sent(c.enqueue(packet(2), 7).unwrap()), None);
        assert_eq!(sent(c.enqueue(packet(3), 8).unwrap()), Some((3, 8)));
        // a third neighbour finds no queue; the buffers (3) are all taken
        assert_eq!(c.enqueue(packet(4), 9).unwrap_err(), Cause::NoNeighborQueue);
        assert_eq!(c.enqueue(packet(5), 7).unwrap_err(), Cause::QueueFull);
        // the time base: freeing 7's head leaves packet 2 for a timer of T ticks
        match c.free_head(7, 16) {
            Then::Timer { ticks: 16, queue: 0, gen } => {
                assert_eq!(sent(c.timer(0, gen)), Some((2, 7)))
            }
            other => panic!("{other:?}"),
        }
        // freeing 8's only packet empties its queue: a new neighbour may take it
        assert!(matches!(c.free_head(8, 16), Then::Idle));
        assert_eq!(sent(c.enqueue(packet(6), 9).unwrap()), Some((6, 9)));
    }

    #[test]
    fn a_stale_timer_sends_nothing() {
        let mut c = csma(4, 1, CsmaBackoff::Timebase);
        c.enqueue(packet(1), 5).unwrap();
        c.enqueue(packet(2), 5).unwrap();
        let Then::Timer { gen, .. } = c.free_head(5, 16) else { panic!() };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // a failure before the timer fires re-arms it: the first generation is stale
        let Failed::Retry(Then::Timer { gen: regen, .. }) = c.failed(5, true, 16, 1, &mut rng) else { panic!() };
        assert_eq!(regen, gen + 1);
        assert!(c.timer(0, gen).is_none());
        assert_eq!(sent(c.timer(0, regen)), Some((2, 5)));
    }

    #[test]
    fn time_base_backoff_grows_with_transmissions_and_gives_up_at_the_limit() {
        // T + U{0 … 2^min(transmissions, 3)·T − 1}: with T = 16 ticks, [16, 32) after the
        // first transmission failed to be ACKed, [16, 48) after two
        let mut c = csma(4, 1, CsmaBackoff::Timebase);
        c.enqueue(packet(1), 5).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for (transmissions, hi) in [(1, 32), (2, 80)] {
            c.count_noack(5);
            assert_eq!(c.transmissions(5), transmissions);
            let Failed::Retry(Then::Timer { ticks, .. }) = c.failed(5, false, 16, 1, &mut rng) else { panic!() };
            assert!((16..hi).contains(&ticks), "{ticks}");
        }
        // the third NOACK reaches max_transmissions (3): the head is given up, still queued
        c.set_head_passed(5, true);
        c.count_noack(5);
        match c.failed(5, false, 16, 1, &mut rng) {
            Failed::GiveUp { packet, passed: true, transmissions: 3 } => assert_eq!(packet.id.0, 1),
            other => panic!("{other:?}"),
        }
        assert!(c.passed(5) && !c.passed(6));
        assert!(matches!(c.free_head(5, 16), Then::Idle));
    }

    #[test]
    fn binary_exponential_backoff_counts_busy_channels_then_a_transmission() {
        let mut c = csma(4, 1, CsmaBackoff::BinaryExponential);
        c.enqueue(packet(1), 5).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // the k-th busy channel: U{0 … (2^min(k, 4) − 1)·period − 1} ticks; period 1 (nullrdc)
        for k in 1..=CSMA_MAX_BACKOFF {
            let window = (1u64 << k.min(CSMA_MAX_BE)) - 1;
            match c.failed(5, true, 16, 1, &mut rng) {
                Failed::Retry(Then::Timer { ticks, .. }) => assert!(ticks < window, "{ticks}"),
                Failed::Retry(Then::Send(_)) => {} // a draw of 0 ticks sends at once
                other => panic!("{other:?}"),
            }
            assert_eq!(c.transmissions(5), 0);
        }
        // one more (macMaxCSMABackoffs = 5 exceeded): it counts a transmission, BE starts over
        // at 0 and the retry goes at once
        assert!(matches!(c.failed(5, true, 16, 1, &mut rng), Failed::Retry(Then::Send(_))));
        assert_eq!(c.transmissions(5), 1);
        // an ACK frees the head; the next packet goes at once (BE 0), no timer
        c.enqueue(packet(2), 5).unwrap();
        assert_eq!(
            sent(match c.free_head(5, 16) {
                Then::Send(job) => Some(job),
                other => panic!("{other:?}"),
            }),
            Some((2, 5))
        );
    }
}
