//! A bottleneck link: a byte-counted tail-drop FIFO in front of a serializing link with a
//! propagation delay and link errors.
//!
//! The queue is computed ahead instead of simulated with dequeue events: a packet offered at
//! time `t` starts serializing when the link frees (`max(t, free_at)`), occupies it for
//! `S·8/rate`, and arrives `delay` after its last bit. A packet stays in the buffer until its
//! last bit has left, so the occupancy seen by an arrival is the bytes of packets whose
//! transmission has not finished by then. This needs offers in non-decreasing time order, which
//! the simulator guarantees (each link has one FIFO feeder). A packet lost to a link error has
//! used the link (it was sent, then corrupted).

use std::collections::VecDeque;

use coap_time::{Duration, Instant};
use rand_core::RngCore;

use crate::loss::LossProcess;

/// What became of an offered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// It arrives at the far end at `at`, having occupied the link for `busy`.
    Delivered {
        /// Arrival time of its last bit at the far end.
        at: Instant,
        /// Serialization time.
        busy: Duration,
    },
    /// The buffer was full.
    BufferDrop,
    /// Sent, but lost to a link error (after occupying the link for `busy`).
    ErrorDrop {
        /// Serialization time.
        busy: Duration,
    },
}

/// Counters of one link direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    /// Packets offered.
    pub offered: u64,
    /// Packets dropped because the buffer was full.
    pub buffer_drops: u64,
    /// Packets lost to link errors.
    pub error_drops: u64,
    /// Bytes serialized (link errors included).
    pub bytes: u64,
    /// Time the link spent serializing, ns (every packet accepted, also the part of its
    /// serialization that ends after the run).
    pub busy_ns: u64,
    /// When the link finishes serializing the last packet it accepted, ns: the backlog at a time
    /// `t` before it is `busy_until_ns − t` of serialization (the link works it off without a gap).
    pub busy_until_ns: u64,
    /// The largest buffer occupancy seen, bytes.
    pub max_queue_bytes: u64,
}

/// One direction of the bottleneck.
#[derive(Debug)]
pub struct Link<R> {
    rate_bps: u64,
    delay: Duration,
    capacity: u64,
    free_at: Instant,
    /// (time the last bit leaves, size) of each packet in the buffer, oldest first.
    in_buffer: VecDeque<(Instant, u32)>,
    queued_bytes: u64,
    loss: LossProcess<R>,
    /// The counters.
    pub stats: LinkStats,
}

impl<R: RngCore> Link<R> {
    /// A link of `rate_bps` bits/s, `delay` propagation and a `capacity`-byte buffer.
    pub fn new(rate_bps: u64, delay: Duration, capacity: u64, loss: LossProcess<R>) -> Self {
        Link {
            rate_bps,
            delay,
            capacity,
            free_at: Instant::ZERO,
            in_buffer: VecDeque::new(),
            queued_bytes: 0,
            loss,
            stats: LinkStats::default(),
        }
    }

    /// Serialization time of `size` bytes, rounded up to whole nanoseconds.
    pub fn serialization(&self, size: u32) -> Duration {
        Duration::from_nanos((size as u64 * 8 * 1_000_000_000).div_ceil(self.rate_bps))
    }

    /// Offers a packet of `size` bytes at time `t` (non-decreasing across calls).
    pub fn offer(&mut self, t: Instant, size: u32) -> Offer {
        self.stats.offered += 1;
        while let Some(&(done, s)) = self.in_buffer.front() {
            if done > t {
                break;
            }
            self.in_buffer.pop_front();
            self.queued_bytes -= s as u64;
        }
        if self.queued_bytes + size as u64 > self.capacity {
            self.stats.buffer_drops += 1;
            return Offer::BufferDrop;
        }
        let busy = self.serialization(size);
        let done = t.max(self.free_at) + busy;
        self.free_at = done;
        self.in_buffer.push_back((done, size));
        self.queued_bytes += size as u64;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queued_bytes);
        self.stats.bytes += size as u64;
        self.stats.busy_ns += busy.as_nanos();
        self.stats.busy_until_ns = done.as_nanos();
        if self.loss.lose() {
            self.stats.error_drops += 1;
            return Offer::ErrorDrop { busy };
        }
        Offer::Delivered { at: done + self.delay, busy }
    }
}

impl<R: RngCore> Link<R> {
    /// Offers an IP datagram of `size` bytes, fragmenting it to `mtu` (RFC 791: each fragment
    /// carries a multiple of 8 payload bytes behind its own `ip_header`). It is delivered when
    /// its last fragment is; lost if any fragment is.
    pub fn offer_datagram(&mut self, t: Instant, size: u32, mtu: u32, ip_header: u32) -> Offer {
        if size <= mtu {
            return self.offer(t, size);
        }
        let per = ((mtu.saturating_sub(ip_header)) / 8 * 8).max(8);
        let mut left = size.saturating_sub(ip_header);
        let (mut buffer_drop, mut error_drop) = (false, false);
        let (mut arrival, mut busy) = (Instant::ZERO, Duration::ZERO);
        while left > 0 {
            let part = left.min(per);
            left -= part;
            match self.offer(t, part + ip_header) {
                Offer::Delivered { at, busy: b } => {
                    arrival = arrival.max(at);
                    busy = busy + b;
                }
                Offer::ErrorDrop { busy: b } => {
                    busy = busy + b;
                    error_drop = true;
                }
                Offer::BufferDrop => buffer_drop = true,
            }
        }
        if buffer_drop {
            Offer::BufferDrop
        } else if error_drop {
            Offer::ErrorDrop { busy }
        } else {
            Offer::Delivered { at: arrival, busy }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossModel;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn link(capacity: u64) -> Link<ChaCha8Rng> {
        Link::new(
            30_000,
            Duration::from_millis(400),
            capacity,
            LossProcess::new(LossModel::None, ChaCha8Rng::seed_from_u64(0)),
        )
    }

    #[test]
    fn serialization_queueing_and_propagation() {
        let mut l = link(1_000_000);
        // 93 bytes at 30 kbit/s: 93·8/30000 = 24.8 ms
        assert_eq!(l.serialization(93), Duration::from_micros(24_800));
        let t0 = Instant::ZERO;
        assert_eq!(
            l.offer(t0, 93),
            Offer::Delivered { at: t0 + Duration::from_micros(424_800), busy: Duration::from_micros(24_800) }
        );
        // a second packet at the same time waits for the first: 2 · 24.8 + 400 ms
        assert_eq!(
            l.offer(t0, 93),
            Offer::Delivered { at: t0 + Duration::from_micros(449_600), busy: Duration::from_micros(24_800) }
        );
        // after the link idles, a packet goes straight out
        let t1 = Instant::from_nanos(1_000_000_000);
        assert!(matches!(l.offer(t1, 93), Offer::Delivered { at, .. } if at == t1 + Duration::from_micros(424_800)));
        assert_eq!(l.stats.busy_ns, 3 * 24_800_000);
    }

    #[test]
    fn tail_drop_counts_bytes_until_the_last_bit_leaves() {
        let mut l = link(200); // room for two 93-byte packets
        let t0 = Instant::ZERO;
        assert!(matches!(l.offer(t0, 93), Offer::Delivered { .. }));
        assert!(matches!(l.offer(t0, 93), Offer::Delivered { .. }));
        assert_eq!(l.offer(t0, 93), Offer::BufferDrop); // 279 > 200
                                                        // the first leaves the buffer at 24.8 ms: one packet's room again
        assert_eq!(l.offer(Instant::from_nanos(24_799_999), 93), Offer::BufferDrop);
        assert!(matches!(l.offer(Instant::from_nanos(24_800_000), 93), Offer::Delivered { .. }));
        assert_eq!(l.stats.buffer_drops, 2);
        assert_eq!(l.stats.max_queue_bytes, 186);
    }

    #[test]
    fn fragmentation_to_the_mtu() {
        let mut l = link(1_000_000);
        // 600 bytes through MTU 296: fragments carry 272 payload bytes (276 rounded down to 8):
        // 580 payload bytes = 272 + 272 + 36 → IP sizes 292, 292, 56 = 640 bytes on the wire
        let busy = l.serialization(292) + l.serialization(292) + l.serialization(56);
        assert_eq!(
            l.offer_datagram(Instant::ZERO, 600, 296, 20),
            Offer::Delivered { at: Instant::ZERO + busy + Duration::from_millis(400), busy }
        );
        assert_eq!(l.stats.offered, 3);
        assert_eq!(l.stats.bytes, 640);
    }
}
