//! A model driven on the wall clock, by the relay and the IP-level emulator (`coap-net`): a
//! [`Driven`] holds a [`Medium`] with its schedule (the deliveries and wake-ups it asked for, in
//! time order) and the bytes of the packets it carries; [`Live`] is what a driver asks of it,
//! object-safe, so one driver serves every model and needs no change for a new one.
//!
//! A real-time driver hands packets over in the order its sockets read them, which can run a
//! little behind the clock: the times given to the model are kept non-decreasing (its contract).

use std::collections::{BinaryHeap, HashMap};

use coap_time::Instant;

use crate::medium::{HostId, Medium, Packet, PacketId, Schedule};

/// What a model is told a packet's size is, by a driver that carries real packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// The IP packet's total length (the wired bottleneck: its links carry IP packets).
    Ip,
    /// The UDP payload's length (the mesh: its frames add the compressed IPv6/UDP headers to the
    /// CoAP message's size themselves); packets other than UDP are dropped (foreign).
    UdpPayload,
}

/// The hosts a model's clients are, in the order a driver's clients take them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientHosts {
    /// Client `i` is host `first + i`, as many as asked.
    Numbered {
        /// The first client's host.
        first: u32,
    },
    /// These hosts, in order, and no more.
    Listed(Vec<HostId>),
}

impl ClientHosts {
    /// The first `n` clients' hosts; `Err(available)` when there are fewer.
    pub fn first(&self, n: u32) -> Result<Vec<HostId>, usize> {
        match self {
            ClientHosts::Numbered { first } => Ok((0..n).map(|i| HostId(first + i)).collect()),
            ClientHosts::Listed(hosts) if hosts.len() >= n as usize => Ok(hosts[..n as usize].to_vec()),
            ClientHosts::Listed(hosts) => Err(hosts.len()),
        }
    }
}

/// A model as a real-time driver uses it (from any thread: a driver's task may move).
pub trait Live: Send {
    /// The run begins: the model schedules its own first events (a mesh's mobility).
    fn start(&mut self);
    /// `bytes` leave `from` for `to` at `t` (no earlier than the previous call's time: an
    /// earlier `t` is taken as that time), `size` bytes as the model counts them.
    fn offer(&mut self, t: Instant, from: HostId, to: HostId, size: u32, bytes: Vec<u8>);
    /// When the next delivery or wake-up is due.
    fn next_at(&self) -> Option<Instant>;
    /// The next packet due by `now` with its bytes, the model's wake-ups due before it handled
    /// on the way; `None` when nothing more is due.
    fn next_due(&mut self, now: Instant) -> Option<(Packet, Vec<u8>)>;
    /// The run ends at `end` (its counters of time close).
    fn finish(&mut self, end: Instant);
}

/// A [`Medium`] with its schedule and the bytes of the packets in flight.
#[derive(Debug)]
pub struct Driven<M: Medium> {
    medium: M,
    pending: Pending<M::Event>,
}

impl<M: Medium> Driven<M> {
    /// `medium`, nothing scheduled yet.
    pub fn new(medium: M) -> Self {
        Driven { medium, pending: Pending::default() }
    }

    /// The model's counters ([`Medium::report`]).
    pub fn report(&self) -> M::Report {
        self.medium.report()
    }
}

impl<M: Medium + Send> Live for Driven<M>
where
    M::Event: Send,
{
    fn start(&mut self) {
        self.medium.start(&mut self.pending);
    }

    fn offer(&mut self, t: Instant, from: HostId, to: HostId, size: u32, bytes: Vec<u8>) {
        let p = &mut self.pending;
        let now = t.max(p.last);
        p.last = now;
        let packet = Packet { id: PacketId(p.next_packet), from, to, size, note: 0 };
        p.next_packet = p.next_packet.wrapping_add(1);
        p.held.insert(packet.id, (packet, bytes));
        self.medium.send(now, packet, p);
    }

    fn next_at(&self) -> Option<Instant> {
        self.pending.heap.peek().map(|d| Instant::from_nanos(d.at))
    }

    fn next_due(&mut self, now: Instant) -> Option<(Packet, Vec<u8>)> {
        let p = &mut self.pending;
        while p.heap.peek().is_some_and(|d| d.at <= now.as_nanos()) {
            let d = p.heap.pop().expect("peeked");
            match d.due {
                Due::Wake(e) => {
                    let at = Instant::from_nanos(d.at).max(p.last);
                    p.last = at;
                    self.medium.handle(at, e, p);
                }
                Due::Deliver(id) => {
                    if let Some(held) = p.held.remove(&id) {
                        return Some(held);
                    }
                }
            }
        }
        None
    }

    fn finish(&mut self, end: Instant) {
        self.medium.finish(end.max(self.pending.last));
    }
}

#[derive(Debug)]
enum Due<E> {
    Deliver(PacketId),
    Wake(E),
}

#[derive(Debug)]
struct Timed<E> {
    at: u64,
    seq: u64,
    due: Due<E>,
}

impl<E> PartialEq for Timed<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Timed<E> {}
impl<E> Ord for Timed<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}
impl<E> PartialOrd for Timed<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The schedule: a heap of due deliveries and wake-ups (earliest first, then in the order
/// asked); packets' bytes wait in `held`.
#[derive(Debug)]
struct Pending<E> {
    heap: BinaryHeap<Timed<E>>,
    held: HashMap<PacketId, (Packet, Vec<u8>)>,
    seq: u64,
    /// The latest time handed to the model: its calls must come in non-decreasing time.
    last: Instant,
    next_packet: u32,
}

impl<E> Default for Pending<E> {
    fn default() -> Self {
        Pending { heap: BinaryHeap::new(), held: HashMap::new(), seq: 0, last: Instant::ZERO, next_packet: 0 }
    }
}

impl<E> Schedule<E> for Pending<E> {
    fn deliver(&mut self, at: Instant, _lane: usize, packet: Packet) {
        self.heap.push(Timed { at: at.as_nanos(), seq: self.seq, due: Due::Deliver(packet.id) });
        self.seq += 1;
    }
    fn discard(&mut self, packet: Packet) {
        self.held.remove(&packet.id);
    }
    fn wake(&mut self, at: Instant, event: E) {
        self.heap.push(Timed { at: at.as_nanos(), seq: self.seq, due: Due::Wake(event) });
        self.seq += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coap_time::Duration;

    /// Delivers every packet 10 ms after it is sent, and drops packets of 0 bytes; wakes once
    /// at 5 ms after the start, counting the wake-ups.
    #[derive(Default)]
    struct Delay {
        wakes: u32,
        finished: Option<Instant>,
    }

    impl Medium for Delay {
        type Event = ();
        type Report = u32;
        fn start<S: Schedule<()>>(&mut self, sched: &mut S) {
            sched.wake(Instant::ZERO + Duration::from_millis(5), ());
        }
        fn send<S: Schedule<()>>(&mut self, now: Instant, packet: Packet, sched: &mut S) {
            if packet.size == 0 {
                sched.discard(packet);
            } else {
                sched.deliver(now + Duration::from_millis(10), 0, packet);
            }
        }
        fn handle<S: Schedule<()>>(&mut self, _: Instant, _: (), _: &mut S) {
            self.wakes += 1;
        }
        fn finish(&mut self, end: Instant) {
            self.finished = Some(end);
        }
        fn report(&self) -> u32 {
            self.wakes
        }
    }

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    #[test]
    fn packets_come_out_when_due_with_their_bytes_and_wake_ups_on_the_way() {
        let mut d = Driven::new(Delay::default());
        d.start();
        assert_eq!(d.next_at(), Some(ms(5)));
        d.offer(ms(1), HostId(1), HostId(0), 3, vec![1, 2, 3]);
        d.offer(ms(2), HostId(2), HostId(0), 0, vec![9]); // dropped by the model
        d.offer(ms(3), HostId(0), HostId(2), 1, vec![7]);
        assert_eq!(d.next_due(ms(10)), None, "nothing due before 11 ms; the wake-up at 5 ms handled");
        assert_eq!(d.report(), 1);
        assert_eq!(d.next_at(), Some(ms(11)));
        let (p, bytes) = d.next_due(ms(13)).unwrap();
        assert_eq!((p.from, p.to, p.size, bytes), (HostId(1), HostId(0), 3, vec![1, 2, 3]));
        let (p, bytes) = d.next_due(ms(13)).unwrap();
        assert_eq!((p.from, p.to, bytes), (HostId(0), HostId(2), vec![7]), "the dropped packet's bytes are gone");
        assert_eq!(d.next_due(ms(100)), None);
        assert_eq!(d.next_at(), None);
    }

    #[test]
    fn a_late_offer_is_taken_at_the_latest_time_given() {
        let mut d = Driven::new(Delay::default());
        d.offer(ms(8), HostId(1), HostId(0), 1, vec![1]);
        d.offer(ms(4), HostId(2), HostId(0), 1, vec![2]); // read late: sent at 8 ms for the model
        assert_eq!(d.next_at(), Some(ms(18)));
        assert_eq!(d.next_due(ms(18)).map(|p| p.1), Some(vec![1]));
        assert_eq!(d.next_due(ms(18)).map(|p| p.1), Some(vec![2]), "both due at 18 ms, in the order sent");
        d.finish(ms(2));
        assert_eq!(d.medium.finished, Some(ms(8)), "the end is no earlier than the model's last call");
    }
}
