//! A client's memory does not grow with the exchanges it runs (the blocks of a block-wise
//! transfer are each an exchange: up to 2^20 of them): the driver kept every retired
//! exchange's report (216 bytes) for a `finish` nobody read. Live heap bytes are counted by a
//! counting allocator (stats_alloc); this file holds one test so that nothing else allocates meanwhile.

mod heap;

use coap_cc::CcConfig;
use coap_endpoint::Request;
#[test]
fn a_client_running_many_exchanges_keeps_no_state_per_exchange() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        // a server whose deduplication cache is small, so that it does not grow either
        let mut cfg = coap_net::config(CcConfig::parse("default").unwrap());
        cfg.dedup_bytes = 16 << 10;
        let (server, _) = coap_net::server("127.0.0.1:0".parse().unwrap(), cfg, 1).await.unwrap();
        let dest = server.local_addr();
        let client = coap_net::client("127.0.0.1:0".parse().unwrap(), CcConfig::parse("default").unwrap(), 2, None)
            .await
            .unwrap();
        let mut sizes = Vec::new();
        // past the first 1,024, finished exchanges retire early (bounded): what grows after
        // that is what is kept per exchange
        for n in [1500, 8000] {
            for _ in 0..n {
                let r = client.transfer(dest, Request::get("test"), None, 1 << 20).await.expect("a response");
                assert_eq!(r.code, coap_wire::Code::CONTENT);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            sizes.push(heap::live());
        }
        // 8,000 more exchanges: the old driver kept a report of each (its vector grew from
        // 1,024 to 16,384 slots: about 6 MB)
        let growth = sizes[1] - sizes[0];
        assert!(growth < 256 << 10, "{growth} bytes more after 8,000 more exchanges");
        client.finish().await;
        server.finish().await;
    });
}
