//! `coapcc relay`: a userspace link emulator. It relays UDP datagrams between clients and a
//! server in real time through a network model of `netmodel` (a [`Medium`]), the very model the
//! simulator drives, here driven by the wall clock instead of virtual time. With the wired
//! bottleneck ([`netmodel::Bottleneck`]): rates and propagation delays per direction,
//! byte-counted tail-drop buffers, the MTU, the router–server hop's jitter (FIFO kept) and the
//! link-error models.
//!
//! Hosts as the model sees them: the server is [`SERVER`] (or [`RelayHosts::server`]), the
//! `i`-th client address mapped is host `i`, never reused (or as [`RelayHosts::clients`] says: a
//! model with a fixed set of client hosts, a mesh's motes, maps at most that many client
//! addresses at once, and a host is free again when its mapping expires). For each client
//! address the relay opens an upstream socket, so the server sees one source per client and
//! answers it there; the relay maps answers back to the client. A model's own wake-ups are
//! honoured like deliveries.
//!
//! # Shared addresses
//! A server on IPv4 loopback sees each client from an address of its own
//! ([`loopback_source`]): its amplification limit, which verifies sources by IP address, then
//! verifies each client apart, as it would without the relay. A server elsewhere (or on IPv6)
//! sees every client from the relay's one address, as behind a NAT: once one client proves it
//! receives, the server trusts them all, a spoofed source the relay maps included, so such a
//! relay must not listen where an attacker can send to it.
//!
//! # Bounds
//! At most [`RelayConfig::max_clients`] mappings are kept (lowered to what the open-file limit
//! leaves, one socket each). A mapping with no datagram either way for
//! [`RelayConfig::mapping_timeout`] expires: its socket closes and its slot is free for a new
//! client (a NAT's UDP mapping timeout, RFC 4787 REQ-5). Datagrams from new sources while the
//! table is full, or when no socket can be opened, are dropped and counted, and
//! [`RelayConfig::log`] hears of it (at most once per [`NOTICE_INTERVAL`]).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use coap_cc::Instant;
use netmodel::live::{ClientHosts, Driven, Live};
use netmodel::{HostId, Medium};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use crate::clock::Clock;

/// How often at most the relay tells its log that it is dropping new sources.
pub const NOTICE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Receives the relay's notices (a line of text each).
pub type NoticeFn = Box<dyn FnMut(&str) + Send>;

/// How many clients the relay maps, and for how long.
pub struct RelayConfig {
    /// Client addresses mapped at once (4096 by default); datagrams from further ones are dropped.
    pub max_clients: usize,
    /// A mapping idle this long (no datagram either way) expires (60 s by default).
    pub mapping_timeout: std::time::Duration,
    /// Where notices go (drops of new sources), if anywhere.
    pub log: Option<NoticeFn>,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig { max_clients: 4096, mapping_timeout: std::time::Duration::from_secs(60), log: None }
    }
}

impl std::fmt::Debug for RelayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayConfig")
            .field("max_clients", &self.max_clients)
            .field("mapping_timeout", &self.mapping_timeout)
            .finish_non_exhaustive()
    }
}

/// The server's host id in the model.
pub const SERVER: HostId = HostId(0);

/// What the relay counted.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayStats<R> {
    /// The model's own report (the bottleneck: both links' counters).
    pub network: R,
    /// Datagrams from new sources dropped because the client table was full.
    pub unmapped_drops: u64,
    /// Datagrams from new sources dropped because no upstream socket could be opened (e.g. the
    /// open-file limit).
    pub socket_errors: u64,
    /// Datagrams delivered by the model for a client whose mapping had expired (dropped).
    pub late_drops: u64,
    /// Clients mapped over the run.
    pub clients: u64,
    /// Mappings that expired.
    pub expired: u64,
    /// The client cap in force (the configured one, lowered to the open-file budget and to a
    /// listed model's client hosts).
    pub max_clients: usize,
}

/// One client's mapping.
struct Mapping {
    host: HostId,
    socket: Arc<UdpSocket>,
    reader: tokio::task::AbortHandle,
    last_seen: Instant,
}

/// The hosts new mappings take: numbered ones in turn (never reused, wrapping past `u32::MAX`
/// to the first), or listed ones, each back at the end of the queue when its mapping expires.
#[derive(Debug)]
enum HostPool {
    Numbered { first: u32, next: u32 },
    Listed(VecDeque<HostId>),
}

impl HostPool {
    fn new(hosts: ClientHosts) -> Self {
        match hosts {
            ClientHosts::Numbered { first } => HostPool::Numbered { first, next: first },
            ClientHosts::Listed(hosts) => HostPool::Listed(hosts.into()),
        }
    }

    /// The host the next mapping takes.
    fn peek(&self) -> Option<HostId> {
        match self {
            HostPool::Numbered { next, .. } => Some(HostId(*next)),
            HostPool::Listed(free) => free.front().copied(),
        }
    }

    /// Takes [`HostPool::peek`]'s host (there is one: the table is below its cap).
    fn take(&mut self) -> HostId {
        match self {
            HostPool::Numbered { first, next } => {
                let host = HostId(*next);
                *next = next.wrapping_add(1).max(*first);
                host
            }
            HostPool::Listed(free) => free.pop_front().expect("a free host when below the cap"),
        }
    }

    /// An expired mapping's host.
    fn give_back(&mut self, host: HostId) {
        if let HostPool::Listed(free) = self {
            free.push_back(host);
        }
    }
}

/// The client table: address ↔ host, both ways, with idle expiry, and what it counted.
struct Clients {
    by_addr: HashMap<SocketAddr, Mapping>,
    by_host: HashMap<HostId, SocketAddr>,
    /// The hosts new mappings take.
    pool: HostPool,
    max: usize,
    timeout: coap_cc::Duration,
    /// Where each mapping's reader hands the server's datagrams.
    down: mpsc::Sender<(HostId, Vec<u8>, Instant)>,
    upstream: SocketAddr,
    mapped: u64,
    expired: u64,
    unmapped_drops: u64,
    socket_errors: u64,
    last_notice: Option<Instant>,
}

impl Clients {
    /// The host of `client`, mapping it now if it is new and there is room (after expiring idle
    /// mappings) and a socket; `None` drops its datagram (counted, and told to `log`).
    async fn host_of(
        &mut self,
        client: SocketAddr,
        now: Instant,
        clock: Clock,
        log: &mut Option<NoticeFn>,
    ) -> Option<HostId> {
        if let Some(m) = self.by_addr.get_mut(&client) {
            m.last_seen = now;
            return Some(m.host);
        }
        if self.by_addr.len() >= self.max {
            self.expire(now);
        }
        if self.by_addr.len() >= self.max {
            self.unmapped_drops += 1;
        } else {
            let host = self.pool.peek().expect("a free host when below the cap");
            match open_upstream(self.upstream, host).await {
                Ok(socket) => return Some(self.insert(client, socket, now, clock)),
                Err(_) => self.socket_errors += 1,
            }
        }
        if let Some(log) = log.as_mut() {
            if self.last_notice.is_none_or(|t| now - t >= NOTICE_INTERVAL.into()) {
                self.last_notice = Some(now);
                log(&format!(
                    "dropping datagrams from new sources: {} mappings in use of {}; {} dropped for a full table, {} for want of a socket so far",
                    self.by_addr.len(), self.max, self.unmapped_drops, self.socket_errors
                ));
            }
        }
        None
    }

    /// Maps `client` to a new host whose datagrams from the server `socket` reads.
    fn insert(&mut self, client: SocketAddr, socket: Arc<UdpSocket>, now: Instant, clock: Clock) -> HostId {
        let host = self.pool.take();
        let (reader, tx) = (socket.clone(), self.down.clone());
        let task = tokio::spawn(async move {
            loop {
                // an ICMP error (say, the server was not up yet) surfaces here on Linux:
                // it must not end this client's return path
                let Ok(b) = recv_exact(&reader).await else { continue };
                if tx.send((host, b, clock.now())).await.is_err() {
                    break; // the relay stopped
                }
            }
        });
        self.by_addr.insert(client, Mapping { host, socket, reader: task.abort_handle(), last_seen: now });
        self.by_host.insert(host, client);
        self.mapped += 1;
        host
    }

    fn touch(&mut self, host: HostId, now: Instant) {
        if let Some(m) = self.by_host.get(&host).and_then(|a| self.by_addr.get_mut(a)) {
            m.last_seen = now;
        }
    }

    /// Removes the mappings idle for the mapping timeout.
    fn expire(&mut self, now: Instant) {
        let before = self.by_addr.len();
        let (by_host, pool, timeout) = (&mut self.by_host, &mut self.pool, self.timeout);
        self.by_addr.retain(|_, m| {
            let keep = now - m.last_seen < timeout;
            if !keep {
                m.reader.abort();
                by_host.remove(&m.host);
                pool.give_back(m.host);
            }
            keep
        });
        self.expired += (before - self.by_addr.len()) as u64;
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for m in self.by_addr.values() {
            m.reader.abort();
        }
    }
}

impl RelayStats<()> {
    /// These counts with the model's report.
    pub fn with_network<R>(self, network: R) -> RelayStats<R> {
        let RelayStats { network: (), unmapped_drops, socket_errors, late_drops, clients, expired, max_clients } = self;
        RelayStats { network, unmapped_drops, socket_errors, late_drops, clients, expired, max_clients }
    }
}

/// Relays between clients at `listen` and the server at `upstream` through `medium` until `stop`
/// completes. `overhead`: header bytes the model counts on top of each UDP payload (IP + UDP).
/// The server is [`SERVER`], the clients hosts 1, 2, … (the wired bottleneck's numbering).
pub async fn run<M: Medium + Send>(
    listen: SocketAddr,
    upstream: SocketAddr,
    medium: M,
    overhead: u32,
    cfg: RelayConfig,
    stop: impl Future<Output = ()>,
) -> std::io::Result<RelayStats<M::Report>>
where
    M::Event: Send,
{
    let mut live = Driven::new(medium);
    let hosts = RelayHosts { server: SERVER, clients: ClientHosts::Numbered { first: 1 }, overhead };
    let st = run_live(listen, upstream, &mut live, hosts, cfg, stop).await?;
    Ok(st.with_network(live.report()))
}

/// Where the relay's clients and server are in the model, and how it sizes their datagrams.
#[derive(Debug, Clone)]
pub struct RelayHosts {
    /// The server's host.
    pub server: HostId,
    /// The clients' hosts: numbered, the `i`-th client mapped host `first + i` (never reused);
    /// or listed, each taken by one mapping at a time (at most that many mappings at once).
    pub clients: ClientHosts,
    /// Header bytes the model counts on top of each UDP payload (IP + UDP; 0 for a model that
    /// adds its own).
    pub overhead: u32,
}

/// [`run`] of a model behind [`Live`] (whichever it is: a world's), its hosts as `hosts` says;
/// its report is the caller's to read.
pub async fn run_live(
    listen: SocketAddr,
    upstream: SocketAddr,
    live: &mut dyn Live,
    hosts: RelayHosts,
    mut cfg: RelayConfig,
    stop: impl Future<Output = ()>,
) -> std::io::Result<RelayStats<()>> {
    let RelayHosts { server, clients: client_hosts, overhead } = hosts;
    let listener = Arc::new(UdpSocket::bind(listen).await?);
    let clock = Clock::new();
    let mut max_clients = crate::within_fd_budget(cfg.max_clients);
    if let ClientHosts::Listed(hosts) = &client_hosts {
        max_clients = max_clients.min(hosts.len());
    }
    let (down_tx, mut down_rx) = mpsc::channel::<(HostId, Vec<u8>, Instant)>(4096);
    let mut clients = Clients {
        by_addr: HashMap::new(),
        by_host: HashMap::new(),
        max: max_clients,
        pool: HostPool::new(client_hosts),
        timeout: coap_cc::Duration::from(cfg.mapping_timeout),
        down: down_tx,
        upstream,
        mapped: 0,
        expired: 0,
        unmapped_drops: 0,
        socket_errors: 0,
        last_notice: None,
    };
    live.start();
    let mut late_drops = 0;
    let mut buf = vec![0u8; 65536];
    // sweep for idle mappings a few times per timeout
    let mut sweep = tokio::time::interval((cfg.mapping_timeout / 4).max(std::time::Duration::from_millis(10)));
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    loop {
        let next = live.next_at().map(|t| clock.tokio(t));
        tokio::select! {
            _ = &mut stop => break,
            _ = sweep.tick() => clients.expire(clock.now()),
            r = listener.recv_from(&mut buf) => {
                let Ok((n, client)) = r else { continue };
                let now = clock.now();
                let Some(host) = clients.host_of(client, now, clock, &mut cfg.log).await else { continue };
                live.offer(now, host, server, n as u32 + overhead, buf[..n].to_vec());
            }
            Some((host, bytes, t)) = down_rx.recv() => {
                clients.touch(host, clock.now());
                live.offer(t, server, host, bytes.len() as u32 + overhead, bytes);
            }
            _ = tokio::time::sleep_until(next.unwrap_or_else(tokio::time::Instant::now)), if next.is_some() => {
                let now = clock.now();
                while let Some((packet, bytes)) = live.next_due(now) {
                    let host = if packet.to == server { packet.from } else { packet.to };
                    let Some(client) = clients.by_host.get(&host).copied() else {
                        late_drops += 1; // its mapping expired while the packet was in flight
                        continue;
                    };
                    if packet.to == server {
                        if let Some(m) = clients.by_addr.get(&client) {
                            let _ = m.socket.send(&bytes).await;
                        }
                    } else {
                        let _ = listener.send_to(&bytes, client).await;
                    }
                }
            }
        }
    }
    live.finish(clock.now());
    Ok(RelayStats {
        network: (),
        unmapped_drops: clients.unmapped_drops,
        socket_errors: clients.socket_errors,
        late_drops,
        clients: clients.mapped,
        expired: clients.expired,
        max_clients,
    })
}

/// The next datagram on `socket`, in a buffer of its own size: its length is read first without
/// taking it (`MSG_PEEK | MSG_TRUNC`, which Linux answers with a UDP datagram's whole length),
/// so that a mapping waiting for the server holds no buffer (a 64-KiB one each made about
/// 100 KB per mapping).
async fn recv_exact(socket: &UdpSocket) -> std::io::Result<Vec<u8>> {
    use rustix::net::RecvFlags;
    loop {
        socket.readable().await?;
        let peek = || {
            let (_, len) = rustix::net::recv(socket, &mut [0u8; 0][..], RecvFlags::PEEK | RecvFlags::TRUNC)?;
            Ok(len)
        };
        let len = match socket.try_io(tokio::io::Interest::READABLE, peek) {
            Ok(len) => len,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        let mut b = vec![0u8; len];
        match socket.try_recv(&mut b) {
            Ok(n) => {
                b.truncate(n);
                return Ok(b);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

/// An upstream socket connected to the server, for client `host`: from an address of its own
/// when the server is on IPv4 loopback ([`loopback_source`]), else from the relay's address.
async fn open_upstream(upstream: SocketAddr, host: HostId) -> std::io::Result<Arc<UdpSocket>> {
    let any: SocketAddr = if upstream.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let own = match upstream {
        SocketAddr::V4(a) if a.ip().is_loopback() => Some(loopback_source(host)),
        _ => None,
    };
    // a system whose loopback is 127.0.0.1 alone refuses the address: the shared one then
    let sock = match own {
        Some(ip) => match UdpSocket::bind((ip, 0)).await {
            Ok(s) => s,
            Err(_) => UdpSocket::bind(any).await?,
        },
        None => UdpSocket::bind(any).await?,
    };
    sock.connect(upstream).await?;
    Ok(Arc::new(sock))
}

/// The loopback address client `host`'s datagrams reach a loopback server from:
/// 127.100.0.0–127.199.255.255, one per host (Linux routes all of 127/8 to `lo`). Each client
/// is then a source of its own to the server, as on the testbed, and above all to a server's
/// amplification limit, which verifies sources by IP address: with one shared address, one
/// client answering an Echo would verify every source the relay maps, a spoofed one included.
pub fn loopback_source(host: HostId) -> std::net::Ipv4Addr {
    let h = host.0;
    std::net::Ipv4Addr::new(127, 100 + ((h >> 16) % 100) as u8, (h >> 8) as u8, h as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_hosts_go_in_turn_and_skip_the_server_when_they_wrap() {
        let mut p = HostPool::Numbered { first: 1, next: u32::MAX };
        assert_eq!((p.peek(), p.take()), (Some(HostId(u32::MAX)), HostId(u32::MAX)));
        assert_eq!(p.take(), HostId(1), "past u32::MAX back to the first, never 0 (the server)");
        p.give_back(HostId(u32::MAX)); // never reused
        assert_eq!(p.take(), HostId(2));
    }

    #[test]
    fn listed_hosts_run_out_and_come_back_when_their_mapping_expires() {
        let mut p = HostPool::new(ClientHosts::Listed(vec![HostId(4), HostId(9)]));
        assert_eq!((p.take(), p.take()), (HostId(4), HostId(9)));
        assert_eq!(p.peek(), None, "both taken");
        p.give_back(HostId(4));
        assert_eq!((p.peek(), p.take()), (Some(HostId(4)), HostId(4)));
    }
}
