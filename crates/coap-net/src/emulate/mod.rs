//! IP-level emulation: real stacks (the kernel's TCP, any CoAP implementation over UDP or TCP)
//! through a network model of `netmodel` driven by the wall clock.
//!
//! Two network namespaces, one for the clients and one for the server, each with a TUN device
//! ([`DEVICE`]) whose packets this process reads and writes. The server namespace has
//! [`SERVER_ADDR`]; the clients' namespace has an address per client ([`client_addr`]: client
//! `i` is `10.201.0.0 + i + 1`), so that hundreds of kernel TCP connections, or hundreds of CoAP
//! clients, share one namespace and are still told apart. Each packet from client `i` is handed to
//! the model from client `i`'s host to the server's ([`Hosts`]); each packet from the server to
//! client `i`'s address from the server's host to client `i`'s; what the model delivers is
//! written into the other namespace when it arrives. The wired bottleneck sees the IP packet's
//! total length, and the devices' MTU is its own, so the kernels' TCP segments fit it (MSS =
//! MTU − 40); a mesh sees the UDP payload (the CoAP message), as in the simulator, and carries
//! UDP only ([`Size`]).
//!
//! Both namespaces get the same sysctls ([`EmulatorConfig::sysctls`]: the kernel's TCP as the
//! experiment wants it; `net.ipv4.tcp_*` are per namespace) and route attributes
//! ([`EmulatorConfig::route_attrs`], e.g. `rto_min 200ms`); IPv6 is off in both, so no stray
//! router solicitations cross the model.
//!
//! # Setup and clean-up
//! [`Emulator::setup`] needs root and `/dev/net/tun` (a clear error otherwise) and iproute2's
//! `ip`. It first removes what emulators no longer running left behind (`netns::sweep`); its own
//! namespaces are removed, and what runs in them killed, when the [`Emulator`] is dropped. The
//! TUN devices live only as long as this process holds them.
//!
//! # Bounds
//! Packets are held only while the model holds them (its buffers bound them); the TCP tally
//! follows at most [`EmulatorConfig::max_flows`] connections. Packets that are not IPv4 between a
//! client address and the server are dropped and counted.

pub mod netns;
pub mod packet;
pub mod tally;
pub mod tun;

use std::future::Future;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering};

use coap_cc::Instant;
use netmodel::live::{Driven, Live};
use netmodel::{HostId, Medium};

use crate::clock::Clock;
use netns::Namespace;
use tally::{Tally, TcpReport};
use tun::Tun;

/// The server's address, in its namespace.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 1);
/// The clients' addresses follow this one.
pub const CLIENT_BASE: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 0);
/// Clients at most (the clients' /16).
pub const MAX_CLIENTS: u32 = 65_534;
/// The TUN device's name in each namespace.
pub const DEVICE: &str = "coapcc0";

/// Client `i`'s address.
pub fn client_addr(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(CLIENT_BASE) + i + 1)
}

/// The client an address belongs to, if it is one of `clients` clients'.
pub fn client_of(a: Ipv4Addr, clients: u32) -> Option<u32> {
    let i = u32::from(a).checked_sub(u32::from(CLIENT_BASE) + 1)?;
    (i < clients).then_some(i)
}

pub use netmodel::live::Size;

/// The model's hosts for the server and each client, and how it sizes packets.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// The server's host.
    pub server: HostId,
    /// Client `i`'s host.
    pub clients: Vec<HostId>,
    /// The size the model is given.
    pub size: Size,
}

impl Hosts {
    /// The wired bottleneck's: the server is host 0 ([`crate::relay::SERVER`]), client `i` host
    /// `i + 1`; IP sizes.
    pub fn wired(clients: u32) -> Hosts {
        Hosts { server: crate::relay::SERVER, clients: (1..=clients).map(HostId).collect(), size: Size::Ip }
    }

    /// A mesh's: the server's and the clients' motes (or cloud hosts); UDP payload sizes.
    pub fn mesh(server: HostId, clients: Vec<HostId>) -> Hosts {
        Hosts { server, clients, size: Size::UdpPayload }
    }

    /// The size of `ip` for the model, if it can carry it.
    fn size_of(&self, ip: &packet::Ipv4) -> Option<u32> {
        match self.size {
            Size::Ip => Some(u32::from(ip.len)),
            Size::UdpPayload => ip.udp_payload,
        }
    }
}

/// How to set the namespaces up.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Client addresses (1 to [`MAX_CLIENTS`]).
    pub clients: u32,
    /// MTU of both devices, bytes (the model's; at least 68).
    pub mtu: u32,
    /// Sysctls written in both namespaces (`net/ipv4/tcp_sack` style keys, values as text).
    pub sysctls: Vec<(String, String)>,
    /// Route attributes of both namespaces' routes (e.g. `["rto_min", "200ms"]`).
    pub route_attrs: Vec<String>,
    /// TCP connections the tally follows at once (65,536 by default).
    pub max_flows: usize,
}

impl EmulatorConfig {
    /// `clients` clients, MTU `mtu`, the kernel's defaults.
    pub fn new(clients: u32, mtu: u32) -> Self {
        EmulatorConfig { clients, mtu, sysctls: Vec::new(), route_attrs: Vec::new(), max_flows: 65_536 }
    }
}

/// What the emulator counted.
#[derive(Debug, Clone)]
pub struct EmulateStats<R> {
    /// The model's own report.
    pub network: R,
    /// Packets from the clients handed to the model.
    pub up_packets: u64,
    /// Packets from the server handed to the model.
    pub down_packets: u64,
    /// Packets dropped as not IPv4 between a client address and the server.
    pub foreign: u64,
    /// Packets the model delivered that a device refused.
    pub write_errors: u64,
    /// What the TCP segments showed.
    pub tcp: TcpReport,
}

impl EmulateStats<()> {
    /// These counts with the model's report.
    pub fn with_network<R>(self, network: R) -> EmulateStats<R> {
        let EmulateStats { network: (), up_packets, down_packets, foreign, write_errors, tcp } = self;
        EmulateStats { network, up_packets, down_packets, foreign, write_errors, tcp }
    }
}

/// The namespaces, their devices, and the emulation between them.
#[derive(Debug)]
pub struct Emulator {
    clients_ns: Namespace,
    server_ns: Namespace,
    tuns: Option<(OwnedFd, OwnedFd)>,
    cfg: EmulatorConfig,
    /// Sysctls this kernel does not have (not written).
    pub missing_sysctls: Vec<String>,
    /// Namespaces of emulators no longer running that setup removed.
    pub swept: Vec<String>,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Emulator {
    /// Makes the namespaces and devices, sets the addresses, routes and sysctls.
    pub fn setup(cfg: EmulatorConfig) -> io::Result<Emulator> {
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if cfg.clients == 0 || cfg.clients > MAX_CLIENTS {
            return Err(bad(format!("clients must be 1 to {MAX_CLIENTS}, not {}", cfg.clients)));
        }
        if !(68..=65_535).contains(&cfg.mtu) {
            return Err(bad(format!("the MTU must be 68 to 65535 bytes, not {}", cfg.mtu)));
        }
        netns::requirements()?;
        let swept = netns::sweep()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = |side: &str| format!("{}{}-{n}-{side}", netns::PREFIX, std::process::id());
        let clients_ns = Namespace::create(&name("c"))?;
        let server_ns = Namespace::create(&name("s"))?;
        let mut settings: Vec<(String, String)> =
            ["all", "default"].iter().map(|w| (format!("net/ipv6/conf/{w}/disable_ipv6"), "1".to_string())).collect();
        settings.extend(cfg.sysctls.iter().cloned());
        // one kernel: both namespaces lack the same keys
        let missing = clients_ns.sysctls(&settings)?;
        server_ns.sysctls(&settings)?;
        let tun_c = clients_ns.run_in(|| tun::create(DEVICE))?;
        let tun_s = server_ns.run_in(|| tun::create(DEVICE))?;
        let attrs = cfg.route_attrs.join(" ");
        // the first client's address on the device (a command that binds none sends from it);
        // every client's through one local route of the clients' /16 (Linux's "AnyIP": a
        // socket may bind any address of it and receives what is sent to it), so that setting
        // 65,534 clients up is one line, not 65,534 addresses (each added in time linear in
        // those before it: 32,000 took 69 s)
        let c = format!(
            "link set {DEVICE} mtu {} up\naddr add {}/32 dev {DEVICE}\nroute add local {CLIENT_BASE}/16 dev lo\nroute add {SERVER_ADDR}/32 dev {DEVICE} {attrs}\n",
            cfg.mtu,
            client_addr(0)
        );
        netns::ip(&["-n", clients_ns.name(), "-batch", "-"], Some(&c))?;
        let s = format!(
            "link set {DEVICE} mtu {} up\naddr add {SERVER_ADDR}/32 dev {DEVICE}\nroute add {CLIENT_BASE}/16 dev {DEVICE} {attrs}\n",
            cfg.mtu
        );
        netns::ip(&["-n", server_ns.name(), "-batch", "-"], Some(&s))?;
        Ok(Emulator { clients_ns, server_ns, tuns: Some((tun_c, tun_s)), cfg, missing_sysctls: missing, swept })
    }

    /// The clients' namespace.
    pub fn clients_ns(&self) -> &Namespace {
        &self.clients_ns
    }

    /// The server's namespace.
    pub fn server_ns(&self) -> &Namespace {
        &self.server_ns
    }

    /// Emulates `medium` between the namespaces until `stop` completes (once per emulator).
    pub async fn run<M: Medium + Send>(
        &mut self,
        hosts: &Hosts,
        medium: M,
        stop: impl Future<Output = ()>,
    ) -> io::Result<EmulateStats<M::Report>>
    where
        M::Event: Send,
    {
        let mut live = Driven::new(medium);
        let stats = self.run_live(hosts, &mut live, stop).await?;
        Ok(stats.with_network(live.report()))
    }

    /// [`Emulator::run`] of a model behind [`Live`] (whichever it is: a world's); its report is
    /// the caller's to read.
    pub async fn run_live(
        &mut self,
        hosts: &Hosts,
        live: &mut dyn Live,
        stop: impl Future<Output = ()>,
    ) -> io::Result<EmulateStats<()>> {
        let (fc, fs) = self.tuns.take().ok_or_else(|| io::Error::other("the emulator already ran"))?;
        if hosts.clients.len() < self.cfg.clients as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "fewer hosts than clients"));
        }
        let (tun_c, tun_s) = (Tun::new(fc)?, Tun::new(fs)?);
        let clients = self.cfg.clients;
        let clock = Clock::new();
        let mut tally = Tally::new(clients, self.cfg.max_flows);
        let (mut up_packets, mut down_packets, mut foreign, mut write_errors) = (0u64, 0u64, 0u64, 0u64);
        let (mut bc, mut bs) = (vec![0u8; 65_536], vec![0u8; 65_536]);
        let mut sweep = tokio::time::interval(std::time::Duration::from_secs(60));
        sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        live.start();
        tokio::pin!(stop);
        loop {
            let next = live.next_at().map(|t| clock.tokio(t));
            tokio::select! {
                _ = &mut stop => break,
                _ = sweep.tick() => tally.sweep(clock.now()),
                r = tun_c.recv(&mut bc) => {
                    let Ok(n) = r else { continue };
                    let admitted = admit(&bc[..n], true, clock.now(), hosts, clients, live, &mut tally);
                    *(if admitted { &mut up_packets } else { &mut foreign }) += 1;
                }
                r = tun_s.recv(&mut bs) => {
                    let Ok(n) = r else { continue };
                    let admitted = admit(&bs[..n], false, clock.now(), hosts, clients, live, &mut tally);
                    *(if admitted { &mut down_packets } else { &mut foreign }) += 1;
                }
                _ = tokio::time::sleep_until(next.unwrap_or_else(tokio::time::Instant::now)), if next.is_some() => {
                    let now = clock.now();
                    while let Some((p, bytes)) = live.next_due(now) {
                        let up = p.to == hosts.server;
                        // admitted, so it parses and its client address is one of ours
                        if let Some(ip) = packet::parse(&bytes) {
                            let client = client_of(if up { ip.src } else { ip.dst }, clients);
                            if let (Some(i), Some(t)) = (client, ip.tcp) {
                                tally.delivered(i, up, &t);
                            }
                        }
                        let out = if up { &tun_s } else { &tun_c };
                        if out.send(&bytes).is_err() {
                            write_errors += 1;
                        }
                    }
                }
            }
        }
        live.finish(clock.now());
        Ok(EmulateStats { network: (), up_packets, down_packets, foreign, write_errors, tcp: tally.report().clone() })
    }
}

/// Hands a packet read from the clients' namespace (`up`) or the server's to the model, if it is
/// IPv4 between one of the `clients` client addresses and the server and the model can carry it
/// (TCP segments counted on the way); whether it did.
fn admit(
    bytes: &[u8],
    up: bool,
    now: Instant,
    hosts: &Hosts,
    clients: u32,
    live: &mut dyn Live,
    tally: &mut Tally,
) -> bool {
    let Some(ip) = packet::parse(bytes) else { return false };
    let (client_side, server_side) = if up { (ip.src, ip.dst) } else { (ip.dst, ip.src) };
    let (Some(i), Some(size)) = (client_of(client_side, clients), hosts.size_of(&ip)) else { return false };
    if server_side != SERVER_ADDR {
        return false;
    }
    if let Some(t) = &ip.tcp {
        tally.sent(i, up, t, now);
    }
    let client = hosts.clients[i as usize];
    let (from, to) = if up { (client, hosts.server) } else { (hosts.server, client) };
    live.offer(now, from, to, size, bytes.to_vec());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_addresses_map_both_ways() {
        assert_eq!(client_addr(0), Ipv4Addr::new(10, 201, 0, 1));
        assert_eq!(client_addr(299), Ipv4Addr::new(10, 201, 1, 44));
        assert_eq!(client_of(Ipv4Addr::new(10, 201, 1, 44), 300), Some(299));
        assert_eq!(client_of(Ipv4Addr::new(10, 201, 1, 44), 299), None);
        assert_eq!(client_of(CLIENT_BASE, 10), None);
        assert_eq!(client_of(SERVER_ADDR, 10), None);
        assert_eq!(client_of(client_addr(MAX_CLIENTS - 1), MAX_CLIENTS), Some(MAX_CLIENTS - 1));
    }
}
