//! The real-network commands as a user runs them.

use std::process::{Command, Stdio};

/// A UDP port nothing listens on: an address no test binds (they use 127.0.0.1) and a port below
/// the ephemeral range. (A port freed by `free_port` may be drawn again as the ephemeral port of
/// the very client that sends to it: a socket connected to itself gets its own requests.)
const CLOSED: &str = "127.0.0.3:9";

fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn load_reports_exchanges_in_flight_on_ctrl_c() {
    // a socket that never answers: every exchange stays in flight until interrupted
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://{}/test", silent.local_addr().unwrap());
    let child = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["load", "--server", &uri, "--clients", "3", "--exchanges", "5", "--cc", "default"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "an interrupted run is incomplete: {err}");
    assert!(err.contains("interrupted with 3 exchange(s) in flight"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 clients × 5 exchanges"));
}

#[test]
fn load_and_client_against_our_server() {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["server", "--bind", &format!("127.0.0.1:{port}"), "--duration", "20"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let uri = format!("coap://127.0.0.1:{port}/test");
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args([
            "load",
            "--server",
            &uri,
            "--clients",
            "4",
            "--exchanges",
            "25",
            "--cc",
            "fasor",
            "--json",
            "--seed",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exchanges"], 100);
    assert_eq!(v["failed_exchanges"], 0);
    assert!(v["fct_s"]["p50"].as_f64().unwrap() > 0.0);
    // every exchange is in the histogram; how many needed a retransmission depends on the
    // machine's scheduling (FASOR has no RTO floor: on a busy loopback its ~1 ms timer can
    // expire before the server is scheduled), so the count is not asserted
    let hist: Vec<u64> = v["retransmissions_hist"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
    assert_eq!(hist.iter().sum::<u64>(), 100);
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(["client", "-v", "1", &uri]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 60, "the payload as it is, no newline into a pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exchange 1, first transmission at") && err.contains("RTO") && err.contains("response 2.05 after"),
        "{err}"
    );
    // -w adds the newline; -o writes the payload into a file, nothing on stdout
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(["client", "-w", &uri]).output().unwrap();
    assert!(out.status.success() && out.stdout.len() == 61 && out.stdout.ends_with(b"\n"));
    let file = std::env::temp_dir().join(format!("coapcc-client-o-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["client", "-o", file.to_str().unwrap(), &uri])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap().len(), 60);
    let _ = std::fs::remove_file(&file);
    // RFC 7641: /time observed for 2.5 s: the response, then a notification each second
    let time = format!("coap://127.0.0.1:{port}/time");
    let out =
        Command::new(env!("CARGO_BIN_EXE_coapcc")).args(["client", "-v", "1", "-s", "2.5", &time]).output().unwrap();
    assert!(out.status.success());
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    assert!(lines.len() >= 3 && lines.iter().all(|l| l.len() == 10), "{lines:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("response 2.05 (Observe") && err.contains("notification 2.05 (Observe"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(["client", "-s", "1", &uri]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not observable"));
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn client_failure_is_a_clear_error() {
    // a socket that never answers: the retransmissions run out
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://{}/test", silent.local_addr().unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["client", "--cc", "default:max_retransmit=0,ack_timeout=0.2", &uri])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no response"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(["client", "http://example.com/"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("only coap://"));
}

#[test]
fn relay_survives_a_server_that_starts_late() {
    // the first request reaches the server's port before the server is up (an ICMP error on the
    // relay's upstream socket); the retransmission must still come back through the relay
    let (relay_port, server_port) = (free_port(), free_port());
    let bin = env!("CARGO_BIN_EXE_coapcc");
    let mut relay = Command::new(bin)
        .args([
            "relay",
            "--listen",
            &format!("127.0.0.1:{relay_port}"),
            "--upstream",
            &format!("127.0.0.1:{server_port}"),
        ])
        .args(["--duration", "15"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let client = Command::new(bin)
        .args(["client", "--cc", "default:ack_timeout=1", &format!("coap://127.0.0.1:{relay_port}/test")])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    let mut server = Command::new(bin)
        .args(["server", "--bind", &format!("127.0.0.1:{server_port}"), "--duration", "12"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = client.wait_with_output().unwrap();
    let _ = (relay.kill(), server.kill(), relay.wait(), server.wait());
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 60);
}

#[test]
fn relay_carries_coap_over_a_mesh() {
    // a mesh preset's first server and its client motes between the client and the server (RTT-
    // CoAP's collection: perfect links, converged routes): the exchange crosses the modelled radio
    // and comes back, and the client's address took the server's first client mote
    let (relay_port, server_port) = (free_port(), free_port());
    let bin = env!("CARGO_BIN_EXE_coapcc");
    let mut server = Command::new(bin)
        .args(["server", "--bind", &format!("127.0.0.1:{server_port}"), "--duration", "20"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let relay = Command::new(bin)
        .args(["relay", "--preset", "rttcoap-homog-57", "--listen", &format!("127.0.0.1:{relay_port}")])
        .args(["--upstream", &format!("127.0.0.1:{server_port}"), "--duration", "8"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = Command::new(bin).args(["client", &format!("coap://127.0.0.1:{relay_port}/test")]).output().unwrap();
    let relay = relay.wait_with_output().unwrap();
    let _ = (server.kill(), server.wait());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout.len(), 60);
    let err = String::from_utf8_lossy(&relay.stderr);
    assert!(
        err.contains("mesh rttcoap-homog-57") && err.contains("1 clients mapped") && err.contains("motes reported"),
        "{err}"
    );
}

fn coapcc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().unwrap()
}

#[test]
fn the_uri_scheme_chooses_the_transport() {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["server", "--tcp", "--bind", &format!("127.0.0.1:{port}"), "--duration", "20"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // only a TCP server listens: a run over UDP would fail every exchange
    let tcp = format!("coap+tcp://127.0.0.1:{port}/test");
    let out = coapcc(&["load", "--server", &tcp, "--clients", "2", "--exchanges", "3", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["cc"].as_str(), v["exchanges"].as_u64(), v["failed_exchanges"].as_u64()),
        (Some("tcp"), Some(6), Some(0))
    );
    let out = coapcc(&["client", &tcp]);
    assert!(out.status.success() && out.stdout.len() == 60, "{}", String::from_utf8_lossy(&out.stderr));
    // block-wise over TCP (RFC 8323 §6): /test's 60 bytes in 16-byte Block2 blocks, whole
    let out = coapcc(&["client", "-b", "16", "-v", "1", &tcp]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && out.stdout.len() == 60, "{err}");
    assert!(err.contains("4 transmission(s)"), "four exchanges of 16 bytes: {err}");
    // Observe over TCP (RFC 8323 §7): the response and a notification a second, a line each
    let time = format!("coap+tcp://127.0.0.1:{port}/time");
    let out = coapcc(&["client", "-s", "2.5", "-v", "1", &time]);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert!(out.status.success() && lines.len() >= 2, "{lines:?} {err}");
    assert!(lines.iter().all(|l| l.len() == 10 && l.bytes().all(|b| b.is_ascii_digit())), "{lines:?}");
    assert!(err.contains("notification 2.05") && err.contains("released the connection"), "{err}");
    let _ = server.kill();
    let _ = server.wait();
    // a --cc that contradicts the scheme is an error, before anything is sent
    let out = coapcc(&["load", "--server", &tcp, "--cc", "cocoa"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--cc cocoa conflicts with coap+tcp://"), "{err}");
    let udp = format!("coap://127.0.0.1:{port}/test");
    let out = coapcc(&["load", "--server", &udp, "--cc", "tcp"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--cc tcp needs a coap+tcp:// URI"), "{err}");
    // a refused connection names the address
    let out = coapcc(&["load", "--server", &tcp, "--clients", "1", "--exchanges", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(&format!("127.0.0.1:{port}")) && err.contains("refused"), "{err}");
}

#[test]
fn load_beyond_the_open_file_limit_says_how_to_raise_it() {
    let cmd = format!(
        "ulimit -n 64 && exec {} load --server coap://127.0.0.1:{}/test --clients 100 --exchanges 1",
        env!("CARGO_BIN_EXE_coapcc"),
        free_port()
    );
    let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--clients 100 needs a socket per client") && err.contains("ulimit -n"),
        "{err}"
    );
}

#[test]
fn load_whose_every_exchange_failed_is_incomplete() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://{}/test", silent.local_addr().unwrap());
    let cc = "default:max_retransmit=0,ack_timeout=0.2";
    let out = coapcc(&["load", "--server", &uri, "--clients", "2", "--exchanges", "1", "--cc", cc]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("every exchange (2) failed: no answer from coap://127.0.0.1:"), "{err}");
}

#[test]
fn client_speaks_libcoaps_options_and_reports_unreachable_ports() {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["server", "--bind", &format!("localhost:{port}"), "--duration", "20"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // -m in any case, -e payload, -t content format, -O option, -v 2: every datagram decoded
    let uri = format!("coap://127.0.0.1:{port}/echo");
    let out = coapcc(&["client", "-m", "POST", "-e", "hello", "-t", "json", "-O", "15,a=1", "-v", "2", &uri]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello");
    let sent = err.lines().find(|l| l.contains("sent to")).unwrap_or_default();
    assert!(
        sent.contains("t:CON c:POST") && sent.contains("Content-Format:50") && sent.contains("Uri-Query:a=1"),
        "{err}"
    );
    assert!(sent.ends_with(":: 'hello'"), "{sent}");
    assert!(err.lines().any(|l| l.contains("received from") && l.contains("t:ACK c:2.04")), "{err}");
    // -N: a NON request gets its answer too
    let out = coapcc(&["client", "-N", &format!("coap://127.0.0.1:{port}/test")]);
    assert!(out.status.success() && out.stdout.len() == 60);
    let _ = server.kill();
    let _ = server.wait();
    // a closed port: the ICMP port unreachable is reported (not 85 s of retransmissions)
    let closed = format!("coap://{CLOSED}/test");
    let out = coapcc(&["client", "-B", "30", &closed]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("port unreachable"), "{err}");
    // a silent server: -B bounds the wait
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://{}/test", silent.local_addr().unwrap());
    let out = coapcc(&["client", "-B", "0.5", &uri]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no response within 0.5 s (-B)"), "{err}");
}

#[test]
#[allow(clippy::disallowed_methods)] // the wall clock bounds how long "at once" may take
fn load_against_a_closed_port_says_so_at_once() {
    let uri = format!("coap://{CLOSED}/test");
    let start = std::time::Instant::now();
    let out = coapcc(&["load", "--server", &uri, "--clients", "3", "--exchanges", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!("{:?}: {err} {}", out.status, String::from_utf8_lossy(&out.stdout));
    assert!(!out.status.success() && err.contains("port unreachable"), "{said}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "not after the retransmissions: {:?}",
        start.elapsed()
    );
}

#[test]
fn an_observing_client_deregisters_on_exit() {
    use coap_wire::{registry, Code, Message, MessageType};
    // a stand-in server: it registers the client (2.05 with Observe 7) and waits for what comes
    let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    server.set_read_timeout(Some(std::time::Duration::from_secs(15))).unwrap();
    let uri = format!("coap://{}/obs", server.local_addr().unwrap());
    let client = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["client", "-s", "1", "-v", "1", &uri])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 1500];
    let answer = |buf: &[u8], observe: Option<&[u8]>, to| {
        let req = Message::decode(buf).unwrap();
        let mut opts = Vec::new();
        if let Some(v) = observe {
            opts.push(coap_wire::CoapOption { number: registry::OBSERVE, value: v });
        }
        let m = Message {
            ty: MessageType::Ack,
            code: Code::CONTENT,
            message_id: req.message_id,
            token: req.token,
            options: coap_wire::Options::from_list(&opts),
            payload: b"42",
        };
        let mut out = vec![0; m.encoded_len()];
        m.encode(&mut out).unwrap();
        server.send_to(&out, to).unwrap();
    };
    let (n, from) = server.recv_from(&mut buf).unwrap();
    let reg = Message::decode(&buf[..n]).unwrap();
    assert_eq!(reg.options.get(registry::OBSERVE), Some(&[][..]), "registration: Observe 0");
    let token = reg.token.to_vec();
    answer(&buf[..n], Some(&[7]), from);
    // after its 1 s: a GET with the same token, the same Uri-Path and Observe 1
    let (n, from) = server.recv_from(&mut buf).unwrap();
    let bye = Message::decode(&buf[..n]).unwrap();
    assert_eq!((bye.code, bye.token), (Code::GET, &token[..]));
    assert_eq!(bye.options.get(registry::OBSERVE), Some(&[1u8][..]));
    assert_eq!(bye.options.get(registry::URI_PATH), Some(&b"obs"[..]));
    answer(&buf[..n], None, from);
    let out = client.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("deregistered: 2.05"), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
}

/// A stand-in server on loopback that answers every request with an ACK carrying `code`,
/// `options` and `payload`, until it has heard nothing for 3 s; its address.
fn stand_in(code: coap_wire::Code, options: Vec<(u16, Vec<u8>)>, payload: &'static [u8]) -> std::net::SocketAddr {
    use coap_wire::{CoapOption, Message, MessageType, Options};
    let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    server.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        while let Ok((n, from)) = server.recv_from(&mut buf) {
            let Ok(req) = Message::decode(&buf[..n]) else { continue };
            let opts: Vec<CoapOption<'_>> = options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
            let m = Message {
                ty: MessageType::Ack,
                code,
                message_id: req.message_id,
                token: req.token,
                options: Options::from_list(&opts),
                payload,
            };
            let mut out = vec![0; m.encoded_len()];
            m.encode(&mut out).unwrap();
            let _ = server.send_to(&out, from);
        }
    });
    addr
}

#[test]
fn load_against_a_server_that_refuses_everything_says_so() {
    // 4.01 with an Echo, to the repeat with that Echo too: every exchange refused
    let addr = stand_in(coap_wire::Code::UNAUTHORIZED, vec![(coap_wire::registry::ECHO, b"abcd".to_vec())], &[]);
    let out = coapcc(&["load", "--server", &format!("coap://{addr}/test"), "--clients", "2", "--exchanges", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("every exchange (4) failed") && err.contains("refused each with 4.01 Unauthorized"), "{err}");
}

#[test]
fn load_counts_a_failed_block_wise_transfer_as_a_failure() {
    // block 0 of 16 bytes "with more to come", whatever block is asked for: the client's second
    // request (block 1) gets block 0 again and the transfer fails, its two exchanges answered
    let block0 = coap_endpoint::Block { num: 0, more: true, szx: 0 }.encode();
    let addr = stand_in(coap_wire::Code::CONTENT, vec![(coap_wire::registry::BLOCK2, block0)], &[b'x'; 16]);
    let uri = format!("coap://{addr}/test");
    let out = coapcc(&["load", "--server", &uri, "--clients", "1", "--exchanges", "2", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 2 transfers × 2 answered exchanges each; both transfers failed
    assert_eq!((v["exchanges"].as_u64(), v["failed_exchanges"].as_u64()), (Some(4), Some(2)), "{v}");
}
