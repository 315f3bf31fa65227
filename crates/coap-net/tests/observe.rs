//! An observation whose notifications come faster than the application reads them ends with
//! [`RequestFailure::Overrun`], not silently (loopback only; bounded in time).

use coap_cc::CcConfig;
use coap_endpoint::Request;
use coap_net::RequestFailure;
use coap_wire::{registry, CoapOption, Code, Message, MessageType, Options};

fn encode(m: &Message<'_>) -> Vec<u8> {
    let mut out = vec![0; m.encoded_len()];
    m.encode(&mut out).unwrap();
    out
}

#[tokio::test]
async fn notifications_faster_than_they_are_read_end_the_observation_with_an_error() {
    let server = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let h = coap_net::client(([127, 0, 0, 1], 0).into(), CcConfig::parse("default").unwrap(), 1, None).await.unwrap();
    let mut rx = h.observe(addr, Request::get("fast")).await.unwrap();
    let mut buf = [0u8; 1500];
    let (n, from) =
        tokio::time::timeout(std::time::Duration::from_secs(10), server.recv_from(&mut buf)).await.unwrap().unwrap();
    let reg = Message::decode(&buf[..n]).unwrap();
    let token = reg.token.to_vec();
    // the registration's answer, then 200 NON notifications at once, none of them read yet
    for seq in 1..=201u32 {
        let value = (seq as u16).to_be_bytes();
        let opts = [CoapOption { number: registry::OBSERVE, value: &value }];
        let (ty, mid) = if seq == 1 { (MessageType::Ack, reg.message_id) } else { (MessageType::Non, seq as u16) };
        let m = Message {
            ty,
            code: Code::CONTENT,
            message_id: mid,
            token: &token,
            options: Options::from_list(&opts),
            payload: b"x",
        };
        server.send_to(&encode(&m), from).await.unwrap();
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // what the receiver holds: the response and notifications, then the overrun, then the end
    let (mut ok, mut overrun) = (0, false);
    while let Some(r) = tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv()).await.unwrap() {
        match r {
            Ok(_) => ok += 1,
            Err(e) => {
                assert_eq!(e, RequestFailure::Overrun);
                overrun = true;
            }
        }
    }
    assert!(overrun, "told that notifications were lost");
    assert!(ok > 1 && ok < 201, "{ok} replies kept");
}
