//! CoAP on real networks, driving the same [`coap_endpoint`] and [`coap_cc`] code as the
//! simulator.
//!
//! * [`driver`]: one tokio task per endpoint and UDP socket; [`EndpointHandle`] to use it.
//! * [`resources`]: the server's resources (`/test`, `/time`, `/echo`, `/.well-known/core`).
//! * [`load`]: N concurrent clients with the reference workload (`coapcc load`).
//! * [`tcp`]: CoAP over TCP (RFC 8323) with the OS's TCP: server and client connections.
//! * [`relay`]: a userspace link emulator applying a netsim scenario's bottleneck in real time
//!   (`coapcc relay`), since the kernel's netem is not available everywhere.
//!
//! This crate reads the wall clock (it is a driver); it prints nothing: logs go to callbacks.

pub mod clock;
pub mod driver;
#[cfg(target_os = "linux")]
pub mod emulate;
pub mod load;
pub mod relay;
pub mod resources;
pub mod tcp;

use std::net::SocketAddr;
use std::sync::Arc;

use coap_cc::CcConfig;
use coap_endpoint::{Config, Endpoint};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::net::UdpSocket;

pub use clock::Clock;
pub use driver::{
    DatagramLogFn, Direction, EndpointHandle, LogFn, Logs, Reply, RequestFailure, RetiredFn, StateSize, TransmissionLog,
};

/// File descriptors a server or relay leaves for everything but its sockets (listener, runtime,
/// logs).
const FD_RESERVE: u64 = 32;

/// `wanted` sockets, lowered to what the process's open-file limit leaves (its soft limit less a
/// reserve), at least 1. The TCP server's connection cap and the relay's client cap go through it.
pub fn within_fd_budget(wanted: usize) -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let budget = soft.map_or(usize::MAX, |s| s.saturating_sub(FD_RESERVE) as usize);
    wanted.min(budget).max(1)
}

/// A seed from the operating system, for runs that need no reproducibility.
pub fn os_seed() -> u64 {
    let mut rng = ChaCha8Rng::from_os_rng();
    rand_core::RngCore::next_u64(&mut rng)
}

/// Finished exchanges an endpoint of the real-network drivers keeps at once to count late
/// duplicate responses (a few hundred bytes each): a client's memory stays bounded however fast
/// and long it runs; the oldest retire early, counted, past it.
pub const MAX_FINISHED: usize = 1024;

/// The endpoint configuration the real-network drivers use: transmission events on, for logs
/// and RTTs; the amplification limit on (RFC 9175 §2.4, see [`coap_endpoint::amplification`]:
/// what goes to a source not verified yet is at most 3× what came from it plus 1,152 bytes,
/// past which requests get an Echo challenge); at most [`MAX_FINISHED`] finished exchanges kept.
pub fn config(cc: CcConfig) -> Config {
    let mut c = Config::new(cc);
    c.transmission_events = true;
    c.amplification_factor = Some(3);
    c.max_finished = MAX_FINISHED;
    c
}

/// The source an address belongs to for the amplification limit: its IP address (the port
/// zeroed), so that a spoofer cannot multiply the allowance over a victim's ports.
pub fn source_key(a: &SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip(), 0)
}

/// A client endpoint on `bind` (port 0: any).
pub async fn client(bind: SocketAddr, cc: CcConfig, seed: u64, log: Option<LogFn>) -> std::io::Result<EndpointHandle> {
    let logs = Logs { transmissions: log, ..Logs::default() };
    client_with(bind, cc, seed, ClientOptions { connect: None, logs }).await
}

/// How [`client_with`] sets its endpoint up.
#[derive(Debug, Default)]
pub struct ClientOptions {
    /// Connect the socket to this one server: the endpoint then talks to it alone, and an ICMP
    /// port unreachable from it fails the waiting exchanges at once
    /// ([`RequestFailure::Unreachable`]) instead of leaving them to time out.
    pub connect: Option<SocketAddr>,
    /// What to log.
    pub logs: Logs,
}

/// A client endpoint on `bind` (port 0: any), set up as `opts` says.
pub async fn client_with(
    bind: SocketAddr,
    cc: CcConfig,
    seed: u64,
    opts: ClientOptions,
) -> std::io::Result<EndpointHandle> {
    let socket = UdpSocket::bind(bind).await?;
    if let Some(server) = opts.connect {
        socket.connect(server).await?;
    }
    let ep = Endpoint::new(config(cc), ChaCha8Rng::seed_from_u64(seed))
        .map_err(|e| std::io::Error::other(e.to_string()))?
        .with_source_key(source_key);
    Ok(driver::spawn(socket, ep, Clock::new(), opts.logs, false))
}

/// A server on `bind` serving [`resources::Resources`] with block-wise transfers
/// ([`coap_endpoint::Blockwise`], its default limits: bodies up to 1 MiB, 16 MiB held in all);
/// [`EndpointHandle::finish`] stops it.
pub async fn server(
    bind: SocketAddr,
    cfg: Config,
    seed: u64,
) -> std::io::Result<(EndpointHandle, Arc<resources::ServerStats>)> {
    let socket = UdpSocket::bind(bind).await?;
    let res = resources::Resources::default();
    let stats = res.stats.clone();
    let res = coap_endpoint::Blockwise::new(res, coap_endpoint::BlockLimits::default()).with_source_key(source_key);
    let ep = Endpoint::new(cfg, ChaCha8Rng::seed_from_u64(seed))
        .map_err(|e| std::io::Error::other(e.to_string()))?
        .with_handler(Box::new(res))
        .with_source_key(source_key);
    Ok((driver::spawn(socket, ep, Clock::new(), Logs::default(), true), stats))
}
