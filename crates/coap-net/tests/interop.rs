//! Interoperability with libcoap (Debian's libcoap3-bin: coap-client-notls, coap-server-notls),
//! aiocoap and Californium (a small peer built from Maven Central, `tests/interop/californium`),
//! in both directions, plus robustness of our server on real sockets.
//!
//! The peers are installed by `scripts/test`, which sets COAPCC_INTEROP=1: then a missing peer
//! fails the test. Without it (a bare `cargo test`), tests whose peer is missing are skipped
//! with a note on stderr.
mod common;
use common::have;

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration as StdDuration;

use coap_cc::{CcConfig, Instant};
use coap_endpoint::{Config, Endpoint, Event, Request};
use coap_wire::{registry, Code, Message, MessageType};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Our server on a tokio runtime in the background.
struct OurServer {
    rt: tokio::runtime::Runtime,
    handle: coap_net::EndpointHandle,
    stats: std::sync::Arc<coap_net::resources::ServerStats>,
}

impl OurServer {
    fn start(cfg: Config) -> OurServer {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (handle, stats) = rt.block_on(coap_net::server("127.0.0.1:0".parse().unwrap(), cfg, 1)).unwrap();
        OurServer { rt, handle, stats }
    }
    /// As `coapcc server` runs by default: the amplification limit on (the ecosystem's clients
    /// must pass it: aiocoap's and Californium's never answer an Echo challenge).
    fn default() -> OurServer {
        OurServer::start(coap_net::config(CcConfig::parse("default").unwrap()))
    }
    fn uri(&self, path: &str) -> String {
        format!("coap://{}/{path}", self.handle.local_addr())
    }
    fn requests(&self) -> u64 {
        self.stats.requests.load(std::sync::atomic::Ordering::Relaxed)
    }
}

struct Peer(Child);
impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn libcoap_server() -> (Peer, SocketAddr) {
    let port = free_port();
    let child = Command::new("coap-server-notls")
        .args(["-A", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(StdDuration::from_millis(300));
    (Peer(child), format!("127.0.0.1:{port}").parse().unwrap())
}

/// A peer server that prints "ready" once it serves on 127.0.0.1:`port`.
fn ready_server(cmd: &mut Command, port: u16) -> (Peer, SocketAddr) {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut b = [0u8; 6];
    std::io::Read::read_exact(&mut out, &mut b).unwrap();
    assert_eq!(&b, b"ready\n");
    (Peer(child), format!("127.0.0.1:{port}").parse().unwrap())
}

fn aiocoap_server() -> (Peer, SocketAddr) {
    let port = free_port();
    let script: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "..", "..", "tests", "interop", "aiocoap_server.py"].iter().collect();
    ready_server(Command::new("python3").arg(script).arg(port.to_string()), port)
}

/// The Californium peer's runnable jar (`scripts/test` builds it with Maven), if it is there.
fn californium() -> Option<PathBuf> {
    let jar: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "..", "..", "tests", "interop", "californium", "target", "cf-peer.jar"]
            .iter()
            .collect();
    if !have("java") {
        return None;
    }
    if !jar.exists() {
        assert!(
            std::env::var("COAPCC_INTEROP").is_err(),
            "{} is missing but COAPCC_INTEROP is set (scripts/test builds it)",
            jar.display()
        );
        eprintln!("skipped: the Californium peer is not built (scripts/test builds it)");
        return None;
    }
    Some(jar)
}

fn californium_server(jar: &PathBuf) -> (Peer, SocketAddr) {
    let port = free_port();
    ready_server(Command::new("java").arg("-jar").arg(jar).args(["server", &port.to_string()]), port)
}

/// Californium's client: one request; (exit status, stdout, stderr).
fn californium_client(jar: &PathBuf, args: &[&str]) -> (bool, Vec<u8>, String) {
    let out = Command::new("java").arg("-jar").arg(jar).arg("client").args(args).output().unwrap();
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Our client over a blocking socket, driven by hand: every datagram it sends is kept, so tests
/// can look at the bytes (tokens, options).
struct SyncClient {
    ep: Endpoint<SocketAddr, ChaCha8Rng>,
    sock: UdpSocket,
    epoch: std::time::Instant,
    sent: Vec<Vec<u8>>,
}

impl SyncClient {
    fn new(cc: &str) -> SyncClient {
        let ep = Endpoint::new(Config::new(CcConfig::parse(cc).unwrap()), ChaCha8Rng::seed_from_u64(3)).unwrap();
        #[allow(clippy::disallowed_methods)] // a test driver reads the wall clock
        let epoch = std::time::Instant::now();
        SyncClient { ep, sock: UdpSocket::bind("127.0.0.1:0").unwrap(), epoch, sent: Vec::new() }
    }
    fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }
    /// Runs one exchange to its end; returns the response code and payload.
    fn exchange(&mut self, dest: SocketAddr, path: &str) -> Option<(Code, Vec<u8>)> {
        self.ep.request(self.now(), dest, Request::get(path)).unwrap();
        let mut buf = Vec::new();
        let mut inbuf = [0u8; 2048];
        loop {
            while let Some(tx) = self.ep.poll_transmit(&mut buf) {
                self.sock.send_to(&buf[..tx.len], tx.dest).unwrap();
                self.sent.push(buf[..tx.len].to_vec());
            }
            while let Some(ev) = self.ep.poll_event() {
                match ev {
                    Event::Response { code, payload, .. } => return Some((code, payload)),
                    Event::Failed { .. } => return None,
                    _ => {}
                }
            }
            let wait =
                self.ep.poll_timeout().map(|t| t.as_nanos().saturating_sub(self.now().as_nanos()).max(1_000_000));
            self.sock.set_read_timeout(Some(StdDuration::from_nanos(wait.unwrap_or(1_000_000_000)))).unwrap();
            match self.sock.recv_from(&mut inbuf) {
                Ok((n, from)) => self.ep.handle_datagram(self.now(), from, &inbuf[..n]),
                Err(_) => self.ep.handle_timeout(self.now()),
            }
        }
    }

    /// Observes `path` for `secs` seconds, then cancels; returns the response's and every
    /// notification's Observe value (None: none) and payload.
    fn observe(&mut self, dest: SocketAddr, path: &str, secs: f64) -> Vec<(Option<u32>, Vec<u8>)> {
        let id = self.ep.observe(self.now(), dest, Request::get(path)).unwrap();
        let end = self.now().as_nanos() + (secs * 1e9) as u64;
        let (mut buf, mut inbuf, mut got) = (Vec::new(), [0u8; 2048], Vec::new());
        while self.now().as_nanos() < end {
            while let Some(tx) = self.ep.poll_transmit(&mut buf) {
                self.sock.send_to(&buf[..tx.len], tx.dest).unwrap();
            }
            while let Some(ev) = self.ep.poll_event() {
                let seq = |o: &[(u16, Vec<u8>)]| {
                    o.iter().find(|x| x.0 == registry::OBSERVE).and_then(|x| coap_endpoint::observe::value(&x.1))
                };
                match ev {
                    Event::Response { id: i, options, payload, .. } if i == id => got.push((seq(&options), payload)),
                    Event::Notification { id: i, seq, payload, .. } if i == id => got.push((seq, payload)),
                    _ => {}
                }
            }
            let left = end.saturating_sub(self.now().as_nanos()).max(1_000_000);
            let wait = self
                .ep
                .poll_timeout()
                .map_or(left, |t| t.as_nanos().saturating_sub(self.now().as_nanos()).clamp(1_000_000, left));
            self.sock.set_read_timeout(Some(StdDuration::from_nanos(wait))).unwrap();
            match self.sock.recv_from(&mut inbuf) {
                Ok((n, from)) => self.ep.handle_datagram(self.now(), from, &inbuf[..n]),
                Err(_) => self.ep.handle_timeout(self.now()),
            }
        }
        self.ep.cancel_observation(id);
        got
    }
}

/// RFC 7641: libcoap's client observes our `/time` for 3 s (`-s 3`): the response and a
/// notification every second, each payload a 10-digit second (printed back to back).
#[test]
fn libcoap_observe_client_against_our_server() {
    if !have("coap-client-notls") {
        return;
    }
    let s = OurServer::default();
    common::libcoap_observes(&s.uri("time"));
}

/// Our client observes libcoap's `/time` for 3.5 s: the registration's answer carries Observe,
/// and the notifications that follow come with growing numbers.
#[test]
fn our_client_observes_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (_peer, addr) = libcoap_server();
    let mut c = SyncClient::new("default");
    let got = c.observe(addr, "time", 3.5);
    assert!(got.len() >= 3, "{got:?}");
    let seqs: Vec<u32> = got.iter().map(|g| g.0.expect("an Observe number")).collect();
    assert!(
        seqs.windows(2).all(|w| coap_endpoint::observe::is_fresh(w[0], Instant::ZERO, w[1], Instant::ZERO)),
        "{seqs:?}"
    );
    assert!(got.iter().all(|g| !g.1.is_empty()));
}

/// aiocoap's client (its Python API: its command-line client prints notifications to stderr
/// only on a terminal) observes our `/time` for 3.5 s: the response and 3 notifications with
/// growing Observe numbers.
#[test]
fn aiocoap_observes_our_server() {
    if !have("aiocoap-client") {
        return;
    }
    let s = OurServer::default();
    let script: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "..", "..", "tests", "interop", "aiocoap_observe.py"].iter().collect();
    let (ok, out) = run(Command::new("python3").arg(script).args([&s.uri("time"), "3.5"]));
    assert!(ok, "{out}");
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
    assert!(lines.len() >= 3, "{out}");
    assert_eq!(lines[0][0], "response");
    assert!(lines[1..].iter().all(|l| l[0] == "notification" && l[1] == "2.05"), "{out}");
    let seqs: Vec<u32> = lines.iter().map(|l| l[3].parse().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{out}");
}

/// Our client observes aiocoap's `/count` (a counter notified every 0.5 s) for 2.2 s.
#[test]
fn our_client_observes_aiocoap_server() {
    if !have("aiocoap-client") {
        return;
    }
    let (_peer, addr) = aiocoap_server();
    let mut c = SyncClient::new("default");
    let got = c.observe(addr, "count", 2.2);
    assert!(got.len() >= 4, "{got:?}");
    let values: Vec<u32> = got.iter().map(|g| String::from_utf8_lossy(&g.1).parse().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    assert!(got.iter().all(|g| g.0.is_some()));
}

#[test]
fn libcoap_client_against_our_server() {
    if !have("coap-client-notls") {
        return;
    }
    let s = OurServer::default();
    let (ok, out) = run(Command::new("coap-client-notls").args(["-m", "get", &s.uri("test")]));
    assert!(ok);
    assert_eq!(out.trim_end().as_bytes(), &coap_net::resources::TEST_PAYLOAD[..]);
    let (ok, out) = run(Command::new("coap-client-notls").args(["-m", "post", "-e", "interop", &s.uri("echo")]));
    assert!(ok && out.trim_end() == "interop", "{out}");
    let (ok, out) = run(Command::new("coap-client-notls").args(["-m", "get", &s.uri(".well-known/core")]));
    assert!(ok && out.contains("</test>"), "{out}");
}

#[test]
fn libcoap_client_with_loss_injection_still_completes() {
    if !have("coap-client-notls") {
        return;
    }
    let s = OurServer::default();
    // -l 1: libcoap does not send its first datagram; it retransmits after its RTO
    let (ok, out) = run(Command::new("coap-client-notls").args(["-l", "1", "-m", "get", &s.uri("test")]));
    assert!(ok);
    assert_eq!(out.trim_end().as_bytes(), &coap_net::resources::TEST_PAYLOAD[..]);
    assert_eq!(s.requests(), 1);
}

#[test]
fn aiocoap_client_against_our_server() {
    if !have("aiocoap-client") {
        return;
    }
    let s = OurServer::default();
    let (ok, out) = run(Command::new("aiocoap-client").arg(s.uri("test")));
    assert!(ok);
    assert_eq!(out.trim_end().as_bytes(), &coap_net::resources::TEST_PAYLOAD[..]);
    let (ok, out) = run(Command::new("aiocoap-client").args(["-m", "POST", "--payload", "interop", &s.uri("echo")]));
    assert!(ok && out.trim_end() == "interop", "{out}");
}

#[test]
fn our_client_against_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (_peer, addr) = libcoap_server();
    let mut c = SyncClient::new("default");
    let (code, payload) = c.exchange(addr, "time").expect("a response");
    assert_eq!(code, Code::CONTENT);
    assert!(!payload.is_empty());
    let (code, _) = c.exchange(addr, "no-such-resource").expect("a response");
    assert_eq!(code, Code::NOT_FOUND);
}

#[test]
fn our_client_against_aiocoap_server() {
    if !have("aiocoap-client") {
        return;
    }
    let (_peer, addr) = aiocoap_server();
    let mut c = SyncClient::new("cocoa");
    assert_eq!(c.exchange(addr, "test"), Some((Code::CONTENT, vec![b'x'; 60])));
}

#[test]
fn fasor_token_against_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (_peer, addr) = libcoap_server();
    let mut c = SyncClient::new("fasor_token");
    assert_eq!(c.exchange(addr, "time").map(|r| r.0), Some(Code::CONTENT));
    // the transmission number travelled in a 1-byte token, echoed by libcoap, so the exchange
    // gave an unambiguous sample: fastrto left its initial 2 s (1.5·RTT on loopback, floored at 1 ms)
    assert_eq!(Message::decode(&c.sent[0]).unwrap().token, &[0]);
    let rto = c.ep.controller(&addr).unwrap().metrics().rto.as_secs_f64();
    assert!(rto < 0.1, "{rto}");
}

#[test]
fn fasor_option_falls_back_against_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (_peer, addr) = libcoap_server();
    let mut c = SyncClient::new("fasor_option");
    assert_eq!(c.exchange(addr, "time").map(|r| r.0), Some(Code::CONTENT));
    assert_eq!(c.exchange(addr, "time").map(|r| r.0), Some(Code::CONTENT));
    // the first request probes with 255; libcoap treats the elective option as unknown and does
    // not echo it; so the second request goes without it (draft-ietf-core-fasor-02 §4.4)
    let first = Message::decode(&c.sent[0]).unwrap();
    assert_eq!(first.options.get(registry::TRANSMISSION_NUMBER), Some(&[255u8][..]));
    let second = Message::decode(&c.sent[1]).unwrap();
    assert_eq!(second.options.get(registry::TRANSMISSION_NUMBER), None);
}

#[test]
fn duplicate_con_gets_the_same_response() {
    let s = OurServer::default();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(StdDuration::from_secs(2))).unwrap();
    let req = Message { token: &[7, 7], ..Message::empty(MessageType::Con, 0x4242) };
    let opts = [coap_wire::CoapOption { number: registry::URI_PATH, value: b"test" }];
    let req = Message { code: Code::GET, options: coap_wire::Options::from_list(&opts), ..req }.to_vec().unwrap();
    let mut answers = Vec::new();
    for _ in 0..2 {
        sock.send_to(&req, s.handle.local_addr()).unwrap();
        let mut b = [0u8; 512];
        let n = sock.recv(&mut b).unwrap();
        answers.push(b[..n].to_vec());
    }
    assert_eq!(answers[0], answers[1]);
    let m = Message::decode(&answers[0]).unwrap();
    assert_eq!((m.ty, m.message_id, m.token, m.code), (MessageType::Ack, 0x4242, &[7u8, 7][..], Code::CONTENT));
    assert_eq!(s.requests(), 1, "the handler ran once");
}

#[test]
fn amplification_is_limited_with_an_echo_challenge() {
    let s = OurServer::default();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(StdDuration::from_secs(2))).unwrap();
    let opts = [coap_wire::CoapOption { number: registry::URI_PATH, value: b"test" }];
    let get = |mid: u16, echo: Option<&[u8]>| {
        let mut o = opts.to_vec();
        if let Some(e) = echo {
            o.push(coap_wire::CoapOption { number: registry::ECHO, value: e });
        }
        Message { code: Code::GET, options: coap_wire::Options::from_list(&o), ..Message::empty(MessageType::Con, mid) }
            .to_vec()
            .unwrap()
    };
    let ask = |req: &[u8]| {
        sock.send_to(req, s.handle.local_addr()).unwrap();
        let mut b = [0u8; 512];
        let n = sock.recv(&mut b).unwrap();
        b[..n].to_vec()
    };
    // a 9-byte GET /test gets 65 bytes: 38 more than 3× the request, taken from the 1,152-byte
    // allowance; the k-th is answered while 65 k ≤ 3 × 9 k + 1,152, that is for k ≤ 30
    let req = |mid| get(mid, None);
    assert_eq!(req(0).len(), 9);
    let mut answered = 0;
    let mut challenge = Vec::new();
    for mid in 1..=40 {
        let r = ask(&req(mid));
        if Message::decode(&r).unwrap().code != Code::CONTENT {
            challenge = r;
            break;
        }
        assert_eq!(r.len(), 65);
        answered += 1;
    }
    assert_eq!(answered, 30);
    // the 31st gets an 18-byte 4.01 with Echo (1,968 bytes sent of 1,989)
    let m = Message::decode(&challenge).unwrap();
    assert_eq!(m.code, Code::UNAUTHORIZED);
    assert_eq!(challenge.len(), 18);
    let echo = m.options.get(registry::ECHO).expect("an Echo option").to_vec();
    // a wrong Echo (12 bytes: 1,968 + 65 > 2,025) is challenged again; a duplicate of the 31st
    // gets the same answer as before
    assert_eq!(Message::decode(&ask(&get(32, Some(&[0u8])))).unwrap().code, Code::UNAUTHORIZED);
    assert_eq!(ask(&req(31)), challenge);
    // the right Echo is answered, and the source is verified
    let r = ask(&get(33, Some(&echo)));
    assert_eq!(Message::decode(&r).unwrap().code, Code::CONTENT);
    for mid in 34..64 {
        assert_eq!(Message::decode(&ask(&req(mid))).unwrap().code, Code::CONTENT, "verified for a while");
    }
}

#[test]
fn random_datagrams_never_stop_the_server() {
    let s = OurServer::default();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for i in 0..5000 {
        let mut d = vec![0u8; (rng.next_u32() % 64) as usize];
        rng.fill_bytes(&mut d);
        if i % 2 == 0 && d.len() >= 4 {
            d[0] = 0x40 | (d[0] & 0x0f); // a version-1 CON header, to reach the deeper parsing
        }
        sock.send_to(&d, s.handle.local_addr()).unwrap();
    }
    std::thread::sleep(StdDuration::from_millis(200));
    let mut c = SyncClient::new("default");
    assert_eq!(c.exchange(s.handle.local_addr(), "test").map(|r| r.0), Some(Code::CONTENT));
}

#[test]
fn server_state_stays_bounded_under_a_flood() {
    // room for 256 entries holding the 60-byte /test reply (the flood's requests come from one
    // unverified source, so they are answered with the smaller Echo challenge: more fit)
    let mut cfg = coap_net::config(CcConfig::parse("default").unwrap());
    let budget = 256 * (coap_endpoint::ENTRY_OVERHEAD + 2 * std::mem::size_of::<SocketAddr>() + 60);
    cfg.dedup_bytes = budget;
    cfg.exchange_lifetime = coap_cc::Duration::from_millis(500);
    let s = OurServer::start(cfg);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let opts = [coap_wire::CoapOption { number: registry::URI_PATH, value: b"test" }];
    for mid in 0..20_000u32 {
        let tok = mid.to_be_bytes();
        let m = Message {
            code: Code::GET,
            token: &tok,
            options: coap_wire::Options::from_list(&opts),
            ..Message::empty(MessageType::Con, mid as u16)
        };
        sock.send_to(&m.to_vec().unwrap(), s.handle.local_addr()).unwrap();
        if mid % 2000 == 0 {
            std::thread::sleep(StdDuration::from_millis(5));
        }
    }
    std::thread::sleep(StdDuration::from_millis(100));
    let st = s.rt.block_on(s.handle.state()).unwrap();
    assert!(st.dedup_bytes <= budget && st.dedup <= 400, "{st:?}");
    assert!(st.dedup > 0 && st.dedup_early_evictions > 0, "{st:?}");
    // entries expire after EXCHANGE_LIFETIME (0.5 s here): the next datagram's housekeeping drops them
    std::thread::sleep(StdDuration::from_millis(700));
    sock.send_to(&[0x40, 0x00, 0, 1], s.handle.local_addr()).unwrap(); // a ping
    std::thread::sleep(StdDuration::from_millis(100));
    assert_eq!(s.rt.block_on(s.handle.state()).unwrap().dedup, 0);
}

/// Our client's block-wise transfer of `req` to `dest` in blocks of `block` bytes.
fn transfer(dest: SocketAddr, req: Request, block: usize) -> coap_net::Reply {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let h = coap_net::client("127.0.0.1:0".parse().unwrap(), CcConfig::parse("default").unwrap(), 5, None)
            .await
            .unwrap();
        tokio::time::timeout(StdDuration::from_secs(20), h.transfer(dest, req, Some(block), 1 << 20))
            .await
            .expect("within 20 s")
            .expect("a response")
    })
}

fn with_body(code: Code, path: &str, body: Vec<u8>) -> Request {
    Request { code, payload: body, ..Request::get(path) }
}

#[test]
fn large_bodies_block_wise_with_libcoap_both_ways() {
    if !have("coap-client-notls") || !have("coap-server-notls") {
        return;
    }
    let body = common::large_body();
    let file = std::env::temp_dir().join(format!("coapcc-large-{}.txt", std::process::id()));
    std::fs::write(&file, &body).unwrap();
    // libcoap's client POSTs 2,000 bytes in Block1 blocks of 512 to our /echo, and fetches the
    // 2,000-byte answer in Block2 blocks
    let s = OurServer::default();
    let out = Command::new("coap-client-notls")
        .args(["-m", "post", "-b", "512", "-f", file.to_str().unwrap(), &s.uri("echo")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end().as_bytes(), &body[..]);
    assert_eq!(s.requests(), 1, "our handler saw one whole request, not its blocks");
    // our client PUTs 2,000 bytes to libcoap's /example_data in blocks of 256 and GETs them back
    let (_peer, addr) = libcoap_server();
    let put = transfer(addr, with_body(Code::PUT, "example_data", body.clone()), 256);
    assert!(put.code == Code::CHANGED || put.code == Code::CREATED, "{}", put.code);
    let get = transfer(addr, Request::get("example_data"), 256);
    assert_eq!((get.code, get.payload.len()), (Code::CONTENT, 2000));
    assert_eq!(get.payload, body);
    assert!(get.transmissions >= 8, "2,000 bytes in 256-byte blocks: 8 exchanges");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn large_bodies_block_wise_with_aiocoap_both_ways() {
    if !have("aiocoap-client") {
        return;
    }
    let body = common::large_body();
    let s = OurServer::default();
    let (ok, out) = run(Command::new("aiocoap-client").args([
        "-m",
        "POST",
        "--payload",
        std::str::from_utf8(&body).unwrap(),
        &s.uri("echo"),
    ]));
    assert!(ok, "{out}");
    assert_eq!(out.trim_end().as_bytes(), &body[..]);
    assert_eq!(s.requests(), 1);
    // our client POSTs to aiocoap's /echo in blocks of 512 and gets the body back block-wise
    let (_peer, addr) = aiocoap_server();
    let r = transfer(addr, with_body(Code::POST, "echo", body.clone()), 512);
    assert_eq!(r.code, Code::CHANGED);
    assert_eq!(r.payload, body);
}

#[test]
fn californium_client_against_our_server() {
    let Some(jar) = californium() else { return };
    // Californium's client does not answer Echo challenges: its small answers fit the
    // amplification limit's allowance, its large body came with enough bytes of its own
    let s = OurServer::default();
    let (ok, out, err) = californium_client(&jar, &["GET", &s.uri("test")]);
    assert!(ok, "{err}");
    assert_eq!(out, coap_net::resources::TEST_PAYLOAD);
    // a 2,000-byte POST goes in Block1 blocks (Californium's default: above 1,024-byte messages,
    // 512-byte blocks); our handler sees the whole body once, and the answer comes back in Block2
    let body = common::large_body();
    let file = std::env::temp_dir().join(format!("coapcc-cf-large-{}.txt", std::process::id()));
    std::fs::write(&file, &body).unwrap();
    let (ok, out, err) = californium_client(&jar, &["POST", &s.uri("echo"), file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    assert!(ok, "{err}");
    assert!(err.starts_with("2.04"), "{err}");
    assert_eq!(out, body);
    assert_eq!(s.requests(), 2, "our handler saw GET /test and one whole POST, not its blocks");
}

#[test]
fn our_client_against_californium_server() {
    let Some(jar) = californium() else { return };
    let (_peer, addr) = californium_server(&jar);
    let mut c = SyncClient::new("cocoa");
    assert_eq!(c.exchange(addr, "test"), Some((Code::CONTENT, vec![b'x'; 60])));
    // RTT-CoAP's transmission counter is critical in requests (its source says so): Californium,
    // which does not know it, must refuse it with 4.02 Bad Option (RFC 7252 §5.4.1), not ignore it
    let mut c = SyncClient::new("rtt_coap");
    assert_eq!(c.exchange(addr, "test").map(|r| r.0), Some(Code::BAD_OPTION));
    // block-wise both ways: 2,000 bytes POSTed in blocks of 512 and echoed; a 2,000-byte GET
    // that Californium splits into Block2 blocks
    let body = common::large_body();
    let r = transfer(addr, with_body(Code::POST, "echo", body.clone()), 512);
    assert_eq!(r.code, Code::CHANGED);
    assert_eq!(r.payload, body);
    let get = transfer(addr, Request::get("large"), 512);
    assert_eq!((get.code, get.payload.len()), (Code::CONTENT, 2000));
    assert_eq!(get.payload, body);
    assert!(get.transmissions >= 4, "2,000 bytes in 512-byte blocks: 4 exchanges, not {}", get.transmissions);
}

/// hedge (coapcc's own algorithm) against the three ecosystems' servers: its transmission number
/// travels in the token's first byte, which every server echoes unchanged (the responses match
/// the numbered token), and the exchanges give RTT samples. After the first the RTO is a few
/// milliseconds on loopback, so a slow peer may be sent a retransmission: numbered 1.
fn hedge_against(addr: SocketAddr, path: &str) {
    let mut c = SyncClient::new("hedge");
    for _ in 0..2 {
        assert_eq!(c.exchange(addr, path).map(|r| r.0), Some(Code::CONTENT));
    }
    assert_eq!(Message::decode(&c.sent[0]).unwrap().token, &[0]);
    for d in &c.sent {
        let token = Message::decode(d).unwrap().token.to_vec();
        assert!(token.len() == 1 && token[0] <= 4, "{token:?}");
    }
    // the responses were matched by the numbered token, and timed: the estimator holds a sample
    // (its value depends on how fast the peer answers: a JVM's first answer may take a second)
    let m = c.ep.controller(&addr).unwrap().metrics();
    assert!(m.srtt.is_some(), "{m:?}");
}

#[test]
fn hedge_against_libcoap_server() {
    if !have("coap-server-notls") {
        return;
    }
    let (_peer, addr) = libcoap_server();
    hedge_against(addr, "time");
}

#[test]
fn hedge_against_aiocoap_server() {
    if !have("aiocoap-client") {
        return;
    }
    let (_peer, addr) = aiocoap_server();
    hedge_against(addr, "test");
}

#[test]
fn hedge_against_californium_server() {
    let Some(jar) = californium() else { return };
    let (_peer, addr) = californium_server(&jar);
    hedge_against(addr, "test");
}
