//! The relay under many sources: mappings expire when idle and their slots serve new clients;
//! drops of new sources while the table is full are counted and told.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coap_net::relay::RelayConfig;
use common::relay::{echo_server, fast_medium, round_trip, socket};

#[test]
fn idle_mappings_expire_and_their_slots_serve_new_clients() {
    // an echo server: it answers every datagram with its bytes, to the source it came from
    let server_addr = echo_server(100);
    let relay_addr: SocketAddr = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    };
    let notices = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = notices.clone();
    let cfg = RelayConfig {
        max_clients: 2,
        mapping_timeout: Duration::from_millis(300),
        log: Some(Box::new(move |l: &str| log.lock().unwrap().push(l.to_string()))),
    };
    let medium = fast_medium(1500);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stop = async { tokio::time::sleep(Duration::from_secs(3)).await };
    let relay = rt.spawn(coap_net::relay::run(relay_addr, server_addr, medium, 28, cfg, stop));
    std::thread::sleep(Duration::from_millis(100));
    let (a, b, c) = (socket(), socket(), socket());
    assert_eq!(round_trip(&a, relay_addr, b"a1").as_deref(), Some(&b"a1"[..]));
    assert_eq!(round_trip(&b, relay_addr, b"b1").as_deref(), Some(&b"b1"[..]));
    // the table is full (2): a third source is dropped, and the log hears of it
    c.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    assert_eq!(round_trip(&c, relay_addr, b"c1"), None);
    assert!(notices.lock().unwrap().iter().any(|l| l.contains("dropping datagrams from new sources")));
    // after 300 ms without traffic both mappings expire: the third client is served now
    std::thread::sleep(Duration::from_millis(500));
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    assert_eq!(round_trip(&c, relay_addr, b"c2").as_deref(), Some(&b"c2"[..]));
    // and a returning client gets a new mapping
    assert_eq!(round_trip(&a, relay_addr, b"a2").as_deref(), Some(&b"a2"[..]));
    let st = rt.block_on(relay).unwrap().unwrap();
    assert_eq!((st.clients, st.unmapped_drops, st.max_clients), (4, 1, 2));
    assert!(st.expired >= 2, "{st:?}");
}

#[test]
fn each_client_reaches_a_loopback_server_from_an_address_of_its_own() {
    // a server that answers each datagram with the address it came from: two clients through
    // the relay arrive from two loopback addresses (a server's per-address Echo verification
    // then tells them apart), the same client twice from the same one
    let server = socket();
    let server_addr = server.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut b = [0u8; 64];
        for _ in 0..3 {
            let Ok((_, from)) = server.recv_from(&mut b) else { return };
            let _ = server.send_to(from.ip().to_string().as_bytes(), from);
        }
    });
    let relay_addr: SocketAddr = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stop = async { tokio::time::sleep(Duration::from_secs(2)).await };
    let relay =
        rt.spawn(coap_net::relay::run(relay_addr, server_addr, fast_medium(1500), 28, RelayConfig::default(), stop));
    std::thread::sleep(Duration::from_millis(100));
    let (a, b) = (socket(), socket());
    let seen = |s: &std::net::UdpSocket, m: &[u8]| String::from_utf8(round_trip(s, relay_addr, m).unwrap()).unwrap();
    let (first, second, again) = (seen(&a, b"a"), seen(&b, b"b"), seen(&a, b"a"));
    // hosts 1 and 2: 127.100.0.1 and 127.100.0.2
    assert_eq!((first.as_str(), second.as_str(), again.as_str()), ("127.100.0.1", "127.100.0.2", "127.100.0.1"));
    rt.block_on(relay).unwrap().unwrap();
}
