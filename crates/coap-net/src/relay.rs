//! `coapcc relay`: a userspace link emulator. It relays UDP datagrams between clients and a
//! server in real time through the bottleneck of a netsim [`Scenario`]: rates and propagation
//! delays per direction, byte-counted tail-drop buffers, the MTU, the router–server hop's jitter
//! (FIFO kept) and the link-error models. The model is netsim's own [`Network`], driven by the
//! wall clock instead of virtual time.
//!
//! Clients send to the relay's listen address. For each client address the relay opens an
//! upstream socket, so the server sees one source port per client and answers it there; the
//! relay maps answers back to the client. At most `MAX_CLIENTS` mappings are kept.

use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use coap_cc::Instant;
use netsim::link::LinkStats;
use netsim::network::Network;
use netsim::Scenario;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use crate::clock::Clock;

/// The most client addresses mapped at once; datagrams from further ones are dropped.
pub const MAX_CLIENTS: usize = 4096;

/// What the relay counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Clients → server.
    pub uplink: LinkStats,
    /// Server → clients.
    pub downlink: LinkStats,
    /// Datagrams dropped because the client table was full.
    pub unmapped_drops: u64,
    /// Clients mapped.
    pub clients: usize,
}

#[derive(Debug, PartialEq, Eq)]
struct Delivery {
    at: u64,
    seq: u64,
    up: bool,
    client: SocketAddr,
    bytes: Vec<u8>,
}

impl Ord for Delivery {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}
impl PartialOrd for Delivery {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Relays between clients at `listen` and the server at `upstream` until `stop` completes.
/// `scn` must be resolved ([`Scenario::resolve`]).
pub async fn run(
    listen: SocketAddr,
    upstream: SocketAddr,
    scn: &Scenario,
    stop: impl Future<Output = ()>,
) -> std::io::Result<RelayStats> {
    let listener = Arc::new(UdpSocket::bind(listen).await?);
    let clock = Clock::new();
    let mut net = Network::new(scn, 0);
    let overhead = scn.ip_header_bytes + scn.udp_header_bytes;
    let (down_tx, mut down_rx) = mpsc::channel::<(SocketAddr, Vec<u8>, Instant)>(4096);
    let mut map: HashMap<SocketAddr, Arc<UdpSocket>> = HashMap::new();
    let mut heap = BinaryHeap::new();
    let mut last_down = Instant::ZERO;
    let mut seq = 0u64;
    let mut stats = RelayStats::default();
    let mut buf = vec![0u8; 65536];
    let upstream_bind: SocketAddr = if upstream.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    tokio::pin!(stop);
    loop {
        let next = heap.peek().map(|d: &Delivery| clock.tokio(Instant::from_nanos(d.at)));
        tokio::select! {
            _ = &mut stop => break,
            r = listener.recv_from(&mut buf) => {
                let Ok((n, client)) = r else { continue };
                let now = clock.now();
                if !map.contains_key(&client) {
                    if map.len() >= MAX_CLIENTS {
                        stats.unmapped_drops += 1;
                        continue;
                    }
                    let sock = Arc::new(UdpSocket::bind(upstream_bind).await?);
                    sock.connect(upstream).await?;
                    let (reader, tx) = (sock.clone(), down_tx.clone());
                    tokio::spawn(async move {
                        let mut b = vec![0u8; 65536];
                        loop {
                            // an ICMP error (say, the server was not up yet) surfaces here on Linux:
                            // it must not end this client's return path
                            let Ok(n) = reader.recv(&mut b).await else { continue };
                            if tx.send((client, b[..n].to_vec(), clock.now())).await.is_err() {
                                break; // the relay stopped
                            }
                        }
                    });
                    map.insert(client, sock);
                }
                if let Some(arrive) = net.upstream(now, n as u32 + overhead) {
                    heap.push(Delivery { at: arrive.as_nanos(), seq, up: true, client, bytes: buf[..n].to_vec() });
                    seq += 1;
                }
            }
            Some((client, bytes, t)) = down_rx.recv() => {
                // the upstream sockets' readers may deliver slightly out of order: times only go forward
                let t = t.max(last_down);
                last_down = t;
                if let Some((at, _)) = net.downstream(t, bytes.len() as u32 + overhead) {
                    heap.push(Delivery { at: at.as_nanos(), seq, up: false, client, bytes });
                    seq += 1;
                }
            }
            _ = tokio::time::sleep_until(next.unwrap_or_else(tokio::time::Instant::now)), if next.is_some() => {
                let now = clock.now().as_nanos();
                while heap.peek().is_some_and(|d| d.at <= now) {
                    let d = heap.pop().expect("peeked");
                    if d.up {
                        if let Some(s) = map.get(&d.client) {
                            let _ = s.send(&d.bytes).await;
                        }
                    } else {
                        let _ = listener.send_to(&d.bytes, d.client).await;
                    }
                }
            }
        }
    }
    (stats.uplink, stats.downlink) = net.stats();
    stats.clients = map.len();
    Ok(stats)
}
