//! What the relay's tests share: a fast bottleneck, loopback sockets, an echo server.
#![allow(dead_code)] // each test binary uses part of it

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use coap_net::relay::SERVER;
use netmodel::loss::LossModel;
use netmodel::{Bottleneck, BottleneckSpec, HopSpec, LinkSpec};

/// A bottleneck of 100 Mbit/s links (1 ms, 1 MiB buffers, this MTU) both ways: it delays and
/// never drops what the tests send.
pub fn fast_medium(mtu: u32) -> Bottleneck {
    let link = LinkSpec { rate_bps: 100_000_000, delay_ms: 1.0, buffer_bytes: 1 << 20, mtu, loss: LossModel::None };
    let spec = BottleneckSpec {
        uplink: link.clone(),
        downlink: link,
        server_hop: HopSpec { delay_min_ms: 0.0, delay_max_ms: 0.0 },
        ip_header_bytes: 20,
    };
    Bottleneck::new(&spec, SERVER, 1, 0)
}

/// A loopback socket that waits at most 2 s for a datagram.
pub fn socket() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s
}

/// Sends `msg` from `client` through the relay and returns what came back.
pub fn round_trip(client: &UdpSocket, relay: SocketAddr, msg: &[u8]) -> Option<Vec<u8>> {
    client.send_to(msg, relay).unwrap();
    let mut b = vec![0u8; 8192];
    client.recv(&mut b).ok().map(|n| b[..n].to_vec())
}

/// An echo server on a thread: it answers up to `n` datagrams with their bytes, to their source.
pub fn echo_server(n: usize) -> SocketAddr {
    let server = socket();
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut b = vec![0u8; 8192];
        for _ in 0..n {
            let Ok((len, from)) = server.recv_from(&mut b) else { return };
            let _ = server.send_to(&b[..len], from);
        }
    });
    addr
}
