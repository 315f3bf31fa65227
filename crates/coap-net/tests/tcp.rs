//! CoAP over TCP (RFC 8323) on real sockets: interop with libcoap both ways, CSM, Ping/Pong,
//! Release, and bad input that aborts a connection cleanly without harming the server.

mod common;
use common::have;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use coap_endpoint::Request;
use coap_wire::{registry, Code, Frame};

fn our_server() -> (tokio::runtime::Runtime, coap_net::tcp::TcpServer) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(coap_net::tcp::serve("127.0.0.1:0".parse().unwrap())).unwrap();
    (rt, s)
}

/// libcoap's example server on a free port (it serves TCP as well as UDP), once it is up.
fn libcoap_server() -> (std::process::Child, SocketAddr) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("coap-server-notls")
        .args(["-A", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    (child, format!("127.0.0.1:{port}").parse().unwrap())
}

/// Reads frames until the peer closes (or 2 s pass); returns them.
fn read_frames(s: &mut TcpStream) -> Vec<(Code, Vec<u8>)> {
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Ok((f, n)) = Frame::decode(&all[at..], u64::MAX) {
        out.push((f.code, f.payload.to_vec()));
        at += n;
    }
    out
}

const CSM: [u8; 2] = [0x00, 0xE1]; // Len 0, TKL 0, 7.01, no options

#[test]
fn libcoap_tcp_client_against_our_server() {
    if !have("coap-client-notls") {
        return;
    }
    let (_rt, s) = our_server();
    let uri = |p: &str| format!("coap+tcp://{}/{p}", s.local);
    let out = Command::new("coap-client-notls").arg(uri("test")).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end().as_bytes(), &coap_net::resources::TEST_PAYLOAD[..]);
    let out = Command::new("coap-client-notls").args(["-m", "put", "-e", "over-tcp", &uri("echo")]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "over-tcp");
}

#[test]
fn our_tcp_client_against_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (mut child, addr) = libcoap_server();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (r1, r2, pong) = rt.block_on(async {
        let c = coap_net::tcp::connect(addr).await.unwrap();
        // two requests on one connection, matched by token
        let (r1, r2) = tokio::join!(c.request(Request::get("time")), c.request(Request::get("no-such")));
        let pong = c.ping().await;
        c.release().await;
        (r1.unwrap(), r2.unwrap(), pong)
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r1.code, Code::CONTENT);
    assert!(!r1.payload.is_empty());
    assert_eq!(r2.code, Code::NOT_FOUND);
    assert!(pong, "libcoap answers Ping with Pong");
}

#[test]
fn large_bodies_block_wise_over_tcp_with_libcoap_both_ways() {
    if !have("coap-client-notls") || !have("coap-server-notls") {
        return;
    }
    let body = common::large_body();
    let file = std::env::temp_dir().join(format!("coapcc-tcp-large-{}.txt", std::process::id()));
    std::fs::write(&file, &body).unwrap();
    // libcoap's client POSTs 2,000 bytes in Block1 blocks of 512 to our /echo over TCP (RFC 8323
    // §6) and fetches the 2,000-byte answer in Block2 blocks: one whole request reached our handler
    let (_rt, s) = our_server();
    let uri = format!("coap+tcp://{}/echo", s.local);
    let out = Command::new("coap-client-notls")
        .args(["-m", "post", "-b", "512", "-f", file.to_str().unwrap(), &uri])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end().as_bytes(), &body[..]);
    assert_eq!(s.stats.requests.load(std::sync::atomic::Ordering::Relaxed), 1);
    // our client PUTs 2,000 bytes to libcoap's /example_data over TCP in blocks of 256 and GETs
    // them back in blocks of 256
    let (mut child, addr) = libcoap_server();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (put, get) = rt.block_on(async {
        let c = coap_net::tcp::connect(addr).await.unwrap();
        let put = Request { code: Code::PUT, payload: body.clone(), ..Request::get("example_data") };
        let put = c.transfer(put, Some(256), 1 << 20).await;
        let get = c.transfer(Request::get("example_data"), Some(256), 1 << 20).await;
        c.release().await;
        (put, get)
    });
    let _ = child.kill();
    let _ = child.wait();
    let (put, get) = (put.expect("a PUT response"), get.expect("a GET response"));
    assert!(put.code == Code::CHANGED || put.code == Code::CREATED, "{}", put.code);
    assert!(put.transmissions >= 8, "2,000 bytes in 256-byte blocks: 8 exchanges ({})", put.transmissions);
    assert_eq!((get.code, get.payload.len()), (Code::CONTENT, 2000));
    assert_eq!(get.payload, body);
    assert!(get.transmissions >= 8, "{}", get.transmissions);
}

/// libcoap's TCP client observes our `/time` for 3 s (RFC 8323 §7): the response and the
/// notifications, ten digits each, in order.
#[test]
fn libcoap_tcp_client_observes_our_server() {
    if !have("coap-client-notls") {
        return;
    }
    let (_rt, s) = our_server();
    common::libcoap_observes(&format!("coap+tcp://{}/time", s.local));
}

/// Our TCP client observes `/time` of libcoap's server and of ours for 3.5 s each: the
/// registration's answer carries Observe, then notifications with growing numbers; releasing the
/// connection ends the observation at our server.
#[test]
fn our_tcp_client_observes_libcoap_and_our_server() {
    let observe = |addr: SocketAddr| {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let c = coap_net::tcp::connect(addr).await.unwrap();
            let mut rx = c.observe(Request::get("time")).await.unwrap();
            let mut got = Vec::new();
            let until = tokio::time::sleep(Duration::from_millis(3500));
            tokio::pin!(until);
            loop {
                tokio::select! {
                    r = rx.recv() => match r {
                        Some(r) => got.push(r.expect("a notification")),
                        None => break,
                    },
                    _ = &mut until => break,
                }
            }
            c.release().await;
            got
        })
    };
    let check = |got: &[coap_net::Reply]| {
        assert!(got.len() >= 3, "{}", got.len());
        let seqs: Vec<u32> = got
            .iter()
            .map(|r| {
                let o = r.options.iter().find(|o| o.0 == registry::OBSERVE).expect("Observe");
                coap_endpoint::observe::value(&o.1).unwrap()
            })
            .collect();
        assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{seqs:?}");
        assert!(got.iter().all(|r| r.code == Code::CONTENT && !r.payload.is_empty()));
    };
    let (rt, s) = our_server();
    check(&observe(s.local));
    drop(rt);
    if have("coap-server-notls") {
        let (mut child, addr) = libcoap_server();
        let got = observe(addr);
        let _ = child.kill();
        let _ = child.wait();
        check(&got);
    }
}

#[test]
fn many_requests_ping_and_release_with_our_server() {
    let (rt, s) = our_server();
    rt.block_on(async {
        let c = coap_net::tcp::connect(s.local).await.unwrap();
        let replies = futures_join(&c, 20).await;
        assert!(replies.iter().all(|r| r.code == Code::CONTENT && r.payload.len() == 60));
        assert!(c.ping().await);
        c.release().await;
    });
}

async fn futures_join(c: &coap_net::tcp::TcpClient, n: usize) -> Vec<coap_net::Reply> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let c = c.clone();
        set.spawn(async move { c.request(Request::get("test")).await.unwrap() });
    }
    let mut v = Vec::new();
    while let Some(r) = set.join_next().await {
        v.push(r.unwrap());
    }
    v
}

#[test]
fn bad_input_aborts_the_connection_not_the_server() {
    let (_rt, s) = our_server();
    // 1. a frame announcing more than the advertised Max-Message-Size (1152)
    let mut t = TcpStream::connect(s.local).unwrap();
    t.write_all(&CSM).unwrap();
    t.write_all(&[0xE0, 0x10, 0x00, 0x01]).unwrap(); // Len 14: 269 + 4096 bytes
    let frames = read_frames(&mut t);
    assert_eq!(frames[0].0, Code::CSM, "the server's CSM comes first");
    let abort = frames.iter().find(|f| f.0 == Code::ABORT).expect("7.05 Abort");
    assert!(String::from_utf8_lossy(&abort.1).contains("Max-Message-Size"));
    // 2. garbage (a reserved token length)
    let mut t = TcpStream::connect(s.local).unwrap();
    t.write_all(&CSM).unwrap();
    t.write_all(&[0x0F, 0x01, 0x02]).unwrap();
    assert!(read_frames(&mut t).iter().any(|f| f.0 == Code::ABORT));
    // 3. a request before any CSM
    let mut t = TcpStream::connect(s.local).unwrap();
    t.write_all(&[0x01, 0x01, 0x07]).unwrap();
    assert!(read_frames(&mut t).iter().any(|f| f.0 == Code::ABORT));
    // 4. random bytes on many connections, then a normal exchange still works
    for i in 0..50u8 {
        let mut t = TcpStream::connect(s.local).unwrap();
        let junk: Vec<u8> = (0..200u32).map(|j| (j as u8).wrapping_mul(31).wrapping_add(i)).collect();
        let _ = t.write_all(&junk);
    }
    let mut t = TcpStream::connect(s.local).unwrap();
    t.write_all(&CSM).unwrap();
    let get = Frame {
        code: Code::GET,
        token: &[9],
        options: coap_wire::Options::from_list(&[coap_wire::CoapOption { number: registry::URI_PATH, value: b"test" }]),
        payload: &[],
    };
    t.write_all(&get.to_vec().unwrap()).unwrap();
    t.shutdown(std::net::Shutdown::Write).unwrap();
    let frames = read_frames(&mut t);
    assert!(frames.iter().any(|f| f.0 == Code::CONTENT && f.1.len() == 60), "{frames:?}");
}

/// A server whose connections idle out after 300 ms and must send their CSM and finish each
/// frame within 300 ms, at most `max` of them.
fn strict_server(max: usize) -> (tokio::runtime::Runtime, coap_net::tcp::TcpServer) {
    let ms = coap_cc::Duration::from_millis(300);
    let limits = coap_endpoint::StreamLimits { csm: Some(ms), frame: Some(ms), idle: Some(ms), response: None };
    server_with(coap_net::tcp::TcpServerConfig {
        max_connections: max,
        limits,
        max_per_source: 256,
        ..Default::default()
    })
}

fn server_with(cfg: coap_net::tcp::TcpServerConfig) -> (tokio::runtime::Runtime, coap_net::tcp::TcpServer) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(coap_net::tcp::serve_with("127.0.0.1:0".parse().unwrap(), cfg)).unwrap();
    (rt, s)
}

/// Our server with room for two connections (a minute's idle timeout, 256 per source).
fn capped_at_two() -> (tokio::runtime::Runtime, coap_net::tcp::TcpServer) {
    server_with(coap_net::tcp::TcpServerConfig {
        max_connections: 2,
        limits: coap_net::tcp::server_limits(coap_cc::Duration::from_secs(60)),
        max_per_source: 256,
        ..Default::default()
    })
}

/// Waits (at most 5 s) until the server holds `n` connections.
fn wait_connections(s: &coap_net::tcp::TcpServer, n: usize) -> bool {
    for _ in 0..250 {
        if s.connections.load(std::sync::atomic::Ordering::Relaxed) == n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_malformed_complete_frame_aborts_instead_of_buffering_what_follows() {
    let (_rt, s) = our_server();
    let mut t = TcpStream::connect(s.local).unwrap();
    t.write_all(&CSM).unwrap();
    // Len 2, GET, then an option announcing 7 bytes of which the frame holds 1
    t.write_all(&[0x20, 0x01, 0x77, 0x00]).unwrap();
    // what follows is never buffered: the server aborts and closes at once
    t.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    for _ in 0..16 {
        if t.write_all(&[0u8; 65536]).is_err() {
            break;
        }
    }
    let frames = read_frames(&mut t);
    let abort = frames.iter().find(|f| f.0 == Code::ABORT).expect("7.05 Abort");
    assert!(String::from_utf8_lossy(&abort.1).contains("malformed"), "{frames:?}");
    assert!(wait_connections(&s, 0), "the connection is closed");
}

#[test]
fn silent_slow_and_idle_connections_are_closed_and_the_cap_frees_up() {
    let (_rt, s) = strict_server(3);
    // 1. silent: no CSM within 300 ms → Abort
    let mut silent = TcpStream::connect(s.local).unwrap();
    // 2. slowloris: a CSM, then one byte of a frame and nothing more → Abort after 300 ms
    let mut slow = TcpStream::connect(s.local).unwrap();
    slow.write_all(&CSM).unwrap();
    slow.write_all(&[0x31]).unwrap();
    // 3. idle: a CSM and nothing more → Release after 300 ms
    let mut idle = TcpStream::connect(s.local).unwrap();
    idle.write_all(&CSM).unwrap();
    assert!(wait_connections(&s, 3));
    let codes = |t: &mut TcpStream| read_frames(t).into_iter().map(|f| f.0).collect::<Vec<_>>();
    assert_eq!(codes(&mut slow), [Code::CSM, Code::ABORT]);
    assert_eq!(codes(&mut idle), [Code::CSM, Code::RELEASE]);
    assert_eq!(codes(&mut silent), [Code::CSM, Code::ABORT]);
    assert!(wait_connections(&s, 0));
    let st = &s.tcp_stats;
    assert_eq!(st.aborted.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(st.idle_closed.load(std::sync::atomic::Ordering::Relaxed), 1);
    // the slots are free again: a legitimate client is served
    let rt = tokio::runtime::Runtime::new().unwrap();
    let r = rt.block_on(async {
        let c = coap_net::tcp::connect(s.local).await.unwrap();
        c.request(Request::get("test")).await
    });
    assert_eq!(r.unwrap().code, Code::CONTENT);
}

#[test]
fn a_client_gives_up_on_a_server_that_never_sends_its_csm() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let keep = std::thread::spawn(move || {
        // accept, never write, hold the socket for 3 s
        let (s, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        drop(s);
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut limits = coap_net::tcp::CLIENT_LIMITS;
    limits.csm = Some(coap_cc::Duration::from_millis(300));
    let within = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(2), coap_net::tcp::connect_with(addr, limits)).await
    });
    let err = within.expect("gave up within 2 s").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
    keep.join().unwrap();
}

#[test]
fn a_client_gives_up_on_a_server_that_never_answers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let keep = std::thread::spawn(move || {
        // a CSM, then silence
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(&CSM).unwrap();
        std::thread::sleep(Duration::from_secs(3));
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut limits = coap_net::tcp::CLIENT_LIMITS;
    limits.response = Some(coap_cc::Duration::from_millis(300));
    let r = rt.block_on(async {
        let c = coap_net::tcp::connect_with(addr, limits).await.unwrap();
        tokio::time::timeout(Duration::from_secs(2), c.request(Request::get("test"))).await
    });
    let r = r.expect("answered within 2 s");
    assert_eq!(r, Err(coap_net::RequestFailure::ResponseDeadline));
    assert_eq!(r.unwrap_err().to_string(), "no response within the response deadline: the connection was aborted");
    keep.join().unwrap();
}

/// Connections kept open by keep-alives alone (2-byte empty frames, no request) do not lock out a
/// client that sends requests: at the cap, a new connection closes the one that has carried no
/// request for longest. And one source keeps at most `max_per_source` connections.
#[test]
fn keep_alives_cannot_lock_requests_out_and_a_source_has_a_cap() {
    let (rt, s) = capped_at_two();
    // two connections that send their CSM and then empty frames (keep-alives) only
    let mut squatters: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(s.local).unwrap()).collect();
    for t in &mut squatters {
        t.write_all(&CSM).unwrap();
        t.write_all(&[0x00, 0x00]).unwrap();
    }
    assert!(wait_connections(&s, 2));
    // two clients with requests, both connections kept: each makes room by closing a squatter
    // (the second one's, not the first client's, which carried a request since)
    let clients = rt.block_on(async {
        let mut kept = Vec::new();
        for _ in 0..2 {
            let c = coap_net::tcp::connect(s.local).await.unwrap();
            assert_eq!(c.request(Request::get("test")).await.unwrap().code, Code::CONTENT);
            kept.push(c);
        }
        // the first client is still served
        assert_eq!(kept[0].request(Request::get("test")).await.unwrap().code, Code::CONTENT);
        kept
    });
    assert_eq!(s.tcp_stats.evicted.load(std::sync::atomic::Ordering::Relaxed), 2);
    // the squatters were closed: their reads end (CSM, then nothing)
    for t in &mut squatters {
        assert_eq!(read_frames(t).into_iter().map(|f| f.0).collect::<Vec<_>>(), [Code::CSM]);
    }
    drop(clients);
    // one source: at most 2 connections with max_per_source = 2; the third is closed at accept
    let (_rt2, s2) = server_with(coap_net::tcp::TcpServerConfig {
        max_connections: 100,
        limits: coap_net::tcp::server_limits(coap_cc::Duration::from_secs(60)),
        max_per_source: 2,
        ..Default::default()
    });
    let _held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(s2.local).unwrap()).collect();
    assert!(wait_connections(&s2, 2));
    let mut third = TcpStream::connect(s2.local).unwrap();
    assert!(read_frames(&mut third).is_empty(), "closed at accept, no CSM");
    assert_eq!(s2.tcp_stats.refused.load(std::sync::atomic::Ordering::Relaxed), 1);
}

/// A long-lived observer's connection carries notifications, not requests: connections opened
/// at the cap close each other (and the idle ones), never the observer's (the third probe saw it
/// closed 0.4 s into a stream of new connections).
#[test]
fn new_connections_at_the_cap_do_not_close_a_long_lived_observer() {
    let (rt, s) = capped_at_two();
    let got = rt.block_on(async {
        let c = coap_net::tcp::connect(s.local).await.unwrap();
        let mut rx = c.observe(Request::get("time")).await.unwrap();
        // the registration's answer; then, while notifications come every second, twelve new
        // connections (CSM only), one every 250 ms, each making room at the cap of 2
        assert_eq!(rx.recv().await.unwrap().unwrap().code, Code::CONTENT);
        let mut squatters = Vec::new();
        let mut notes = 0;
        for _ in 0..12 {
            let mut t = tokio::net::TcpStream::connect(s.local).await.unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut t, &CSM).await.unwrap();
            squatters.push(t);
            let deadline = tokio::time::Instant::now() + Duration::from_millis(250);
            while let Ok(Some(n)) = tokio::time::timeout_at(deadline, rx.recv()).await {
                assert!(n.is_ok(), "{n:?}");
                notes += 1;
            }
        }
        (notes, c)
    });
    // 3 s of notifications, one a second: the observation lived through it
    assert!(got.0 >= 2, "{} notifications", got.0);
    assert!(s.tcp_stats.evicted.load(std::sync::atomic::Ordering::Relaxed) >= 10);
}

/// What a fake server sends after its CSM, and what the client's waiting request is told.
fn client_failure_after(bytes: &'static [u8], frame_deadline_ms: u64) -> coap_net::RequestFailure {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let keep = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(&CSM).unwrap();
        // the client's CSM and request first (read and ignored: "test" is in the request), then
        // the bytes
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut seen = Vec::new();
        let mut b = [0u8; 256];
        while !seen.windows(4).any(|w| w == b"test") {
            match s.read(&mut b) {
                Ok(n) if n > 0 => seen.extend_from_slice(&b[..n]),
                _ => break,
            }
        }
        s.write_all(bytes).unwrap();
        std::thread::sleep(Duration::from_secs(2));
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut limits = coap_net::tcp::CLIENT_LIMITS;
    limits.frame = Some(coap_cc::Duration::from_millis(frame_deadline_ms));
    let r = rt.block_on(async {
        let c = coap_net::tcp::connect_with(addr, limits).await.unwrap();
        tokio::time::timeout(Duration::from_secs(2), c.request(Request::get("test"))).await
    });
    keep.join().unwrap();
    r.expect("told within 2 s").unwrap_err()
}

#[test]
fn a_client_names_a_bad_frame_a_stalled_frame_and_a_closed_connection() {
    use coap_net::RequestFailure;
    // a frame whose extended length (Len 15: a 4-byte length follows) says 4 GB: beyond our
    // Max-Message-Size from its header alone (it was "could not be sent (larger than a
    // message?)")
    assert_eq!(client_failure_after(&[0xF0, 0xFF, 0xFF, 0xFF, 0xFF], 10_000), RequestFailure::BadFrame);
    // a frame begun (Len 5, TKL 0, 2.05, 2 of its 5 bytes) and never finished (it was "answered
    // with Reset")
    assert_eq!(client_failure_after(&[0x50, 0x45, 0xFF, b'a'], 300), RequestFailure::FrameDeadline);
    // 7.04 Release: the connection closed before the response
    assert_eq!(client_failure_after(&[0x00, 0xE4], 10_000), RequestFailure::ConnectionClosed);
}
