//! A relay's memory per live client mapping: each mapping's reader held a 64-KiB receive buffer
//! while it waited (about 100 KB per mapping with its task); now it reads each datagram into a
//! buffer of the datagram's size. Live heap bytes are counted by a counting allocator
//! (stats_alloc); this file holds one test so that nothing else allocates meanwhile.

mod common;
mod heap;

use std::time::Duration;

use coap_net::relay::RelayConfig;
use common::relay::{echo_server, fast_medium, round_trip, socket};
#[test]
fn a_live_mapping_holds_no_receive_buffer() {
    let server_addr = echo_server(1000);
    let relay_addr = socket().local_addr().unwrap();
    let cfg = RelayConfig { max_clients: 1000, mapping_timeout: Duration::from_secs(60), log: None };
    let medium = fast_medium(9000);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stop = async {
        let _ = stop_rx.await;
    };
    let relay = rt.spawn(coap_net::relay::run(relay_addr, server_addr, medium, 28, cfg, stop));
    std::thread::sleep(Duration::from_millis(100));
    // a datagram larger than any buffer a mapping keeps comes back whole
    let first = socket();
    let big: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    assert_eq!(round_trip(&first, relay_addr, &big), Some(big));
    let mut clients = vec![first];
    for _ in 0..20 {
        let c = socket();
        assert_eq!(round_trip(&c, relay_addr, b"warm").as_deref(), Some(&b"warm"[..]));
        clients.push(c);
    }
    std::thread::sleep(Duration::from_millis(50));
    let before = heap::live();
    for _ in 0..200 {
        let c = socket();
        assert_eq!(round_trip(&c, relay_addr, b"hello").as_deref(), Some(&b"hello"[..]));
        clients.push(c);
    }
    std::thread::sleep(Duration::from_millis(50));
    let per_mapping = (heap::live() - before) / 200;
    // the reader's 64-KiB buffer alone made 65,536 bytes each
    assert!(per_mapping < 8 << 10, "{per_mapping} bytes per live mapping");
    let _ = stop_tx.send(());
    let st = rt.block_on(relay).unwrap().unwrap();
    assert_eq!(st.clients, 221);
}
