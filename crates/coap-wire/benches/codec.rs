//! Codec speed: the reference workload's request and response, decoded and encoded.

use coap_wire::{registry, CoapOption, Code, Message, MessageType, Options};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn codec(c: &mut Criterion) {
    let opts = [CoapOption { number: registry::URI_PATH, value: b"hello" }];
    let req = Message {
        ty: MessageType::Con,
        code: Code::GET,
        message_id: 0x1234,
        token: &[],
        options: Options::from_list(&opts),
        payload: &[],
    };
    let resp = Message {
        ty: MessageType::Ack,
        code: Code::CONTENT,
        message_id: 0x1234,
        token: &[],
        options: Options::empty(),
        payload: &[0x2A; 60],
    };
    let (req_bytes, resp_bytes) = (req.to_vec().unwrap(), resp.to_vec().unwrap());
    let mut g = c.benchmark_group("coap-wire");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode request", |b| b.iter(|| Message::decode(black_box(&req_bytes)).unwrap()));
    g.bench_function("decode response", |b| b.iter(|| Message::decode(black_box(&resp_bytes)).unwrap()));
    let mut buf = [0u8; 128];
    g.bench_function("encode request", |b| b.iter(|| black_box(&req).encode(&mut buf).unwrap()));
    g.bench_function("encode response", |b| b.iter(|| black_box(&resp).encode(&mut buf).unwrap()));
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
