//! `coapcc relay`: a userspace link emulator. It relays UDP datagrams between clients and a
//! server in real time through a network model of `netmodel` (a [`Medium`]), the very model the
//! simulator drives, here driven by the wall clock instead of virtual time. With the wired
//! bottleneck ([`netmodel::Bottleneck`]): rates and propagation delays per direction,
//! byte-counted tail-drop buffers, the MTU, the router–server hop's jitter (FIFO kept) and the
//! link-error models.
//!
//! Hosts as the model sees them: the server is [`SERVER`], the `i`-th client address mapped is
//! host `i + 1`. For each client address the relay opens an upstream socket, so the server sees
//! one source port per client and answers it there; the relay maps answers back to the client.
//! At most `MAX_CLIENTS` mappings are kept. A model's own wake-ups are honoured like deliveries.

use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use coap_cc::Instant;
use netmodel::{HostId, Medium, Packet, PacketId, Schedule};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use crate::clock::Clock;

/// The most client addresses mapped at once; datagrams from further ones are dropped.
pub const MAX_CLIENTS: usize = 4096;

/// The server's host id in the model.
pub const SERVER: HostId = HostId(0);

/// What the relay counted.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayStats<R> {
    /// The model's own report (the bottleneck: both links' counters).
    pub network: R,
    /// Datagrams dropped because the client table was full.
    pub unmapped_drops: u64,
    /// Clients mapped.
    pub clients: usize,
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

/// The relay's schedule: a heap of due deliveries and wake-ups; packets' bytes wait in `held`.
struct Pending<E> {
    heap: BinaryHeap<Timed<E>>,
    held: HashMap<PacketId, (Packet, Vec<u8>)>,
    seq: u64,
    /// The latest time handed to the model: its calls must come in non-decreasing time.
    last: Instant,
    next_packet: u32,
    overhead: u32,
}

impl<E> Pending<E> {
    /// Hands a datagram that arrived at `t` to the model (no earlier than its previous call: the
    /// upstream sockets' readers may hand over slightly out of order).
    fn offer<M: Medium<Event = E>>(&mut self, medium: &mut M, t: Instant, from: HostId, to: HostId, bytes: Vec<u8>) {
        let now = t.max(self.last);
        self.last = now;
        let size = bytes.len() as u32 + self.overhead;
        let packet = Packet { id: PacketId(self.next_packet), from, to, size, note: 0 };
        self.next_packet = self.next_packet.wrapping_add(1);
        self.held.insert(packet.id, (packet, bytes));
        medium.send(now, packet, self);
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

/// Relays between clients at `listen` and the server at `upstream` through `medium` until `stop`
/// completes. `overhead`: header bytes the model counts on top of each UDP payload (IP + UDP).
pub async fn run<M: Medium>(
    listen: SocketAddr,
    upstream: SocketAddr,
    mut medium: M,
    overhead: u32,
    stop: impl Future<Output = ()>,
) -> std::io::Result<RelayStats<M::Report>> {
    let listener = Arc::new(UdpSocket::bind(listen).await?);
    let clock = Clock::new();
    let (down_tx, mut down_rx) = mpsc::channel::<(HostId, Vec<u8>, Instant)>(4096);
    let mut map: HashMap<SocketAddr, (HostId, Arc<UdpSocket>)> = HashMap::new();
    let mut addrs: Vec<SocketAddr> = Vec::new(); // host i + 1 ↔ addrs[i]
    let mut pending: Pending<M::Event> = Pending {
        heap: BinaryHeap::new(),
        held: HashMap::new(),
        seq: 0,
        last: Instant::ZERO,
        next_packet: 0,
        overhead,
    };
    let mut unmapped_drops = 0;
    let mut buf = vec![0u8; 65536];
    let upstream_bind: SocketAddr = if upstream.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    tokio::pin!(stop);
    loop {
        let next = pending.heap.peek().map(|d| clock.tokio(Instant::from_nanos(d.at)));
        tokio::select! {
            _ = &mut stop => break,
            r = listener.recv_from(&mut buf) => {
                let Ok((n, client)) = r else { continue };
                let now = clock.now();
                let host = match map.get(&client) {
                    Some(&(h, _)) => h,
                    None => {
                        if map.len() >= MAX_CLIENTS {
                            unmapped_drops += 1;
                            continue;
                        }
                        let sock = Arc::new(UdpSocket::bind(upstream_bind).await?);
                        sock.connect(upstream).await?;
                        let host = HostId(addrs.len() as u32 + 1);
                        let (reader, tx) = (sock.clone(), down_tx.clone());
                        tokio::spawn(async move {
                            let mut b = vec![0u8; 65536];
                            loop {
                                // an ICMP error (say, the server was not up yet) surfaces here on Linux:
                                // it must not end this client's return path
                                let Ok(n) = reader.recv(&mut b).await else { continue };
                                if tx.send((host, b[..n].to_vec(), clock.now())).await.is_err() {
                                    break; // the relay stopped
                                }
                            }
                        });
                        map.insert(client, (host, sock));
                        addrs.push(client);
                        host
                    }
                };
                pending.offer(&mut medium, now, host, SERVER, buf[..n].to_vec());
            }
            Some((host, bytes, t)) = down_rx.recv() => {
                pending.offer(&mut medium, t, SERVER, host, bytes);
            }
            _ = tokio::time::sleep_until(next.unwrap_or_else(tokio::time::Instant::now)), if next.is_some() => {
                let now = clock.now();
                while pending.heap.peek().is_some_and(|d| d.at <= now.as_nanos()) {
                    let d = pending.heap.pop().expect("peeked");
                    match d.due {
                        Due::Wake(e) => {
                            let at = Instant::from_nanos(d.at).max(pending.last);
                            pending.last = at;
                            medium.handle(at, e, &mut pending);
                        }
                        Due::Deliver(id) => {
                            let Some((packet, bytes)) = pending.held.remove(&id) else { continue };
                            if packet.to == SERVER {
                                let client = addrs.get(packet.from.index().wrapping_sub(1));
                                if let Some((_, s)) = client.and_then(|a| map.get(a)) {
                                    let _ = s.send(&bytes).await;
                                }
                            } else if let Some(client) = addrs.get(packet.to.index().wrapping_sub(1)) {
                                let _ = listener.send_to(&bytes, client).await;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(RelayStats { network: medium.report(), unmapped_drops, clients: map.len() })
}
