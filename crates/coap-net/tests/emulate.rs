//! IP-level emulation (`coap_net::emulate`) with real kernel stacks in two network namespaces:
//! a UDP and a TCP exchange take the delay worked out by hand from the links, and the uplink's
//! buffer drops what does not fit. Each test runs at most a few seconds.
//!
//! They need root, `/dev/net/tun` and iproute2's `ip`; elsewhere they are skipped with a message,
//! unless `COAPCC_EMULATE` is set (as `scripts/test` does where it can run them): then a missing
//! requirement fails them.
#![cfg(target_os = "linux")]

use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

use coap_net::emulate::{client_addr, EmulateStats, Emulator, EmulatorConfig, Hosts, SERVER_ADDR};
use netmodel::bottleneck::{BottleneckReport, BottleneckSpec, HopSpec, LinkSpec};
use netmodel::loss::LossModel;

/// Whether the emulation can run here; says why not, or fails where it must run.
fn available() -> bool {
    match coap_net::emulate::netns::requirements() {
        Ok(()) => true,
        Err(e) if std::env::var_os("COAPCC_EMULATE").is_some() => panic!("COAPCC_EMULATE is set but {e}"),
        Err(e) => {
            eprintln!("skipped: IP-level emulation cannot run here: {e}");
            false
        }
    }
}

/// The thesis links (60 kbit/s 200 ms up, 30 kbit/s 400 ms down, MTU 296) with `buffer` bytes
/// each way and a fixed 15 ms server hop, so that delays are exact.
fn links(buffer: u64) -> BottleneckSpec {
    let link =
        |rate_bps, delay_ms| LinkSpec { rate_bps, delay_ms, buffer_bytes: buffer, mtu: 296, loss: LossModel::None };
    BottleneckSpec {
        uplink: link(60_000, 200.0),
        downlink: link(30_000, 400.0),
        server_hop: HopSpec { delay_min_ms: 15.0, delay_max_ms: 15.0 },
        ip_header_bytes: 20,
    }
}

fn config(clients: u32) -> EmulatorConfig {
    let mut cfg = EmulatorConfig::new(clients, 296);
    cfg.sysctls = vec![("net/ipv4/tcp_timestamps".into(), "0".into())];
    cfg
}

/// The emulator running over [`links`] with 2500-byte buffers, on the current runtime.
struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<(Emulator, std::io::Result<EmulateStats<BottleneckReport>>)>,
}

impl Running {
    fn start(mut emu: Emulator, clients: u32) -> Running {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let medium = netmodel::Bottleneck::new(&links(2500), coap_net::relay::SERVER, 1, 0);
        let task = tokio::spawn(async move {
            let hosts = Hosts::wired(clients);
            let st = emu
                .run(&hosts, medium, async {
                    let _ = stopped.await;
                })
                .await;
            (emu, st)
        });
        Running { stop, task }
    }

    /// Stops it; what it counted (its namespaces are removed here).
    async fn stop(self) -> EmulateStats<BottleneckReport> {
        self.stop.send(()).unwrap();
        let (_emu, st) = self.task.await.unwrap();
        st.unwrap()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Milliseconds from `t`.
fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Wall-clock slack allowed beyond the model's delay (scheduling on a loaded 2-core machine).
const SLACK_MS: f64 = 40.0;

#[test]
fn a_udp_exchange_takes_the_links_delay() {
    if !available() {
        return;
    }
    let emu = Emulator::setup(config(10)).unwrap();
    let server = emu.server_ns().run_in(|| std::net::UdpSocket::bind((SERVER_ADDR, 7000))).unwrap();
    // client 3's address: the emulator maps it to client 3's host
    let client = emu.clients_ns().run_in(|| std::net::UdpSocket::bind((client_addr(3), 0))).unwrap();
    let rt = runtime();
    rt.block_on(async move {
        let running = Running::start(emu, 10);
        let echo = std::thread::spawn(move || {
            server.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut buf = [0u8; 1500];
            let (n, from) = server.recv_from(&mut buf).expect("the request arrives");
            assert_eq!(n, 100);
            server.send_to(&[7u8; 200], from).unwrap();
            from
        });
        let waited = tokio::task::spawn_blocking(move || {
            client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let t = Instant::now();
            client.send_to(&[1u8; 100], (SERVER_ADDR, 7000)).unwrap();
            let mut buf = [0u8; 1500];
            let n = client.recv(&mut buf).expect("the answer arrives");
            (n, ms_since(t))
        })
        .await
        .unwrap();
        let from: SocketAddr = echo.join().unwrap();
        assert_eq!(from.ip(), client_addr(3));
        // by hand: the request is an IP packet of 20 + 8 + 100 = 128 B: 128·8/60000 s =
        // 17.067 ms on the uplink, 200 ms propagation, 15 ms hop; the answer 228 B: 15 ms hop,
        // 228·8/30000 s = 60.8 ms, 400 ms: 707.867 ms in all
        let (n, ms) = waited;
        assert_eq!(n, 200);
        let expected = 17.067 + 200.0 + 15.0 + 15.0 + 60.8 + 400.0;
        assert!(ms >= expected - 1.0 && ms <= expected + SLACK_MS, "{ms:.3} ms, expected {expected:.3} ms");
        let st = running.stop().await;
        assert_eq!((st.up_packets, st.down_packets), (1, 1));
        assert_eq!((st.network.uplink.offered, st.network.downlink.offered), (1, 1));
    });
}

#[test]
fn a_tcp_exchange_takes_the_links_delay() {
    if !available() {
        return;
    }
    let emu = Emulator::setup(config(10)).unwrap();
    let listener = emu
        .server_ns()
        .run_in(|| {
            let l = std::net::TcpListener::bind((SERVER_ADDR, 7001))?;
            l.set_nonblocking(true)?;
            Ok(l)
        })
        .unwrap();
    let socket = emu
        .clients_ns()
        .run_in(|| {
            let s = tokio::net::TcpSocket::new_v4()?;
            s.bind(SocketAddr::from((client_addr(0), 0)))?;
            Ok(s)
        })
        .unwrap();
    let rt = runtime();
    rt.block_on(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let running = Running::start(emu, 10);
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 100];
            s.read_exact(&mut buf).await.unwrap();
            s.write_all(&[7u8; 200]).await.unwrap();
            let _ = s.read(&mut buf).await; // until the client closes
        });
        let deadline = Duration::from_secs(20);
        let mut conn =
            tokio::time::timeout(deadline, socket.connect((SERVER_ADDR, 7001).into())).await.unwrap().unwrap();
        // the handshake's last ACK leaves the uplink long before the request is written
        tokio::time::sleep(Duration::from_secs(1)).await;
        let t = Instant::now();
        conn.write_all(&[1u8; 100]).await.unwrap();
        let mut buf = [0u8; 200];
        tokio::time::timeout(deadline, conn.read_exact(&mut buf)).await.unwrap().unwrap();
        let ms = ms_since(t);
        // by hand (no TCP options: timestamps off): the request is 20 + 20 + 100 = 140 B,
        // 140·8/60000 s = 18.667 ms, 200 ms, 15 ms; the response (the ACK rides on it) 240 B:
        // 15 ms, 240·8/30000 s = 64 ms, 400 ms: 712.667 ms
        let expected = 18.667 + 200.0 + 15.0 + 15.0 + 64.0 + 400.0;
        assert!(ms >= expected - 1.0 && ms <= expected + SLACK_MS, "{ms:.3} ms, expected {expected:.3} ms");
        drop(conn);
        let _ = tokio::time::timeout(deadline, server).await;
        let st = running.stop().await;
        // one data segment each way, none retransmitted
        assert_eq!((st.tcp.up.data_segments, st.tcp.down.data_segments), (1, 1));
        assert_eq!((st.tcp.up.retransmissions, st.tcp.down.retransmissions), (0, 0));
        assert_eq!(st.network.uplink.buffer_drops + st.network.downlink.buffer_drops, 0);
    });
}

#[test]
fn the_uplink_buffer_drops_what_does_not_fit() {
    if !available() {
        return;
    }
    let emu = Emulator::setup(config(2)).unwrap();
    let server = emu.server_ns().run_in(|| std::net::UdpSocket::bind((SERVER_ADDR, 7002))).unwrap();
    let client = emu.clients_ns().run_in(|| std::net::UdpSocket::bind((client_addr(1), 0))).unwrap();
    let rt = runtime();
    rt.block_on(async move {
        let running = Running::start(emu, 2);
        // twenty 250-byte IP packets (within the 296-byte MTU) at once: one takes
        // 250·8/60000 s = 33.3 ms to send, so all arrive while the first is on the link; the
        // 2500-byte buffer (the packet being sent included) holds ten: ten reach the server,
        // ten are dropped
        let t = Instant::now();
        for _ in 0..20 {
            client.send_to(&[0u8; 222], (SERVER_ADDR, 7002)).unwrap();
        }
        let sent_ms = ms_since(t);
        let got = tokio::task::spawn_blocking(move || {
            server.set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
            let mut buf = [0u8; 1500];
            let mut n = 0;
            while server.recv(&mut buf).is_ok() {
                n += 1;
            }
            n
        })
        .await
        .unwrap();
        let st = running.stop().await;
        assert!(sent_ms < 30.0, "the burst took {sent_ms:.1} ms: not a burst");
        assert_eq!(got, 10);
        assert_eq!((st.network.uplink.offered, st.network.uplink.buffer_drops), (20, 10));
        assert_eq!(st.network.uplink.max_queue_bytes, 2500);
    });
}
