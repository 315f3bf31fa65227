//! Block-wise transfers end to end: the server's limits and the client's steps.

use super::*;
use crate::server::{Handler, Reply, RequestId, Response};
use crate::Request;
use coap_cc::{Duration, Instant};
use coap_wire::MessageType;
use coap_wire::{CoapOption, Code, Options};

/// Answers POST with the body it got (2.04), GET with `len` bytes counting up (2.05).
#[derive(Debug)]
struct Echo {
    len: usize,
    bodies: Vec<usize>,
}

impl<A> Handler<A> for Echo {
    fn handle(&mut self, _: Instant, _: &A, _: RequestId, req: &Message<'_>) -> Reply {
        self.bodies.push(req.payload.len());
        match req.code {
            Code::POST => Reply::Now(Response::new(Code::CHANGED, req.payload.to_vec())),
            _ => Reply::Now(Response::new(Code::CONTENT, (0..self.len).map(|i| i as u8).collect::<Vec<u8>>())),
        }
    }
}

/// Hands `req` to the server as a decoded message would come.
fn serve(s: &mut Blockwise<u8, Echo>, now: Instant, req: &Request) -> Response {
    serve_from(s, 1, now, req)
}

fn serve_from<A: Ord + Clone + Send>(s: &mut Blockwise<A, Echo>, from: A, now: Instant, req: &Request) -> Response {
    let mut opts: Vec<CoapOption<'_>> = req.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
    opts.sort_by_key(|o| o.number);
    let m = Message {
        ty: MessageType::Con,
        code: req.code,
        message_id: 1,
        token: &[],
        options: Options::from_list(&opts),
        payload: &req.payload,
    };
    s.handle(now, &from, RequestId(0), &m).into_response().expect("answered now")
}

fn opt(r: &Response, n: u16) -> Option<&[u8]> {
    r.options.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_slice())
}

fn post(len: usize) -> Request {
    let mut r = Request::get("echo");
    r.code = Code::POST;
    r.payload = (0..len).map(|i| (i % 251) as u8).collect();
    r
}

#[test]
fn block_values() {
    // RFC 7959 §2.2: NUM << 4 | M << 3 | SZX
    assert_eq!(Block { num: 1, more: true, szx: 6 }.encode(), [0x1E]);
    assert_eq!(Block { num: 300, more: false, szx: 2 }.encode(), [0x12, 0xC2]);
    assert_eq!(Block::decode(&[0x12, 0xC2]), Some(Block { num: 300, more: false, szx: 2 }));
    assert_eq!(Block::decode(&[]), Some(Block { num: 0, more: false, szx: 0 }));
    assert_eq!(Block::decode(&[0x0F]), None, "SZX 7 is BERT");
    assert_eq!(Block::decode(&[1, 2, 3, 4]), None);
    assert_eq!(Block { num: 3, more: false, szx: 5 }.offset(), 3 * 512);
    assert_eq!(
        (Block::szx_of(16), Block::szx_of(1024), Block::szx_of(1000), Block::szx_of(2048)),
        (Some(0), Some(6), None, None)
    );
}

#[test]
fn a_2000_byte_post_in_512_byte_blocks_round_trips_whole() {
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default());
    let mut t = Transfer::new(post(2000), Some(512), 1 << 20).unwrap();
    let mut req = t.first();
    let (mut sent, mut firsts) = (Vec::new(), Vec::new());
    let done = loop {
        sent.push((req.payload.len(), req.options.iter().find(|o| o.0 == registry::BLOCK1).map(|o| o.1.clone())));
        let block2 = req.options.iter().find(|o| o.0 == registry::BLOCK2).map(|o| o.1.clone());
        let resp = serve(&mut s, Instant::ZERO, &req);
        let answered = resp.options.iter().find(|o| o.0 == registry::BLOCK2).map(|o| o.1.clone());
        firsts.push((block2, answered));
        match t.on_response(resp) {
            Step::Send(r) => req = r,
            Step::Done(r) => break r,
            Step::Failed(e) => panic!("{e}"),
        }
    };
    // four Block1 requests: 512, 512, 512 and 464 bytes (0x0D = num 0, M, SZX 5; 0x1D; 0x2D; 0x35),
    // the last with Block2 num 0 SZX 5 (0x05): the server answers it with the response's
    // first 512 bytes (it had sent its own 1,024), and the client asks for blocks 1 to 3
    let blocks: Vec<(usize, Option<Vec<u8>>)> = vec![
        (512, Some(vec![0x0D])),
        (512, Some(vec![0x1D])),
        (512, Some(vec![0x2D])),
        (464, Some(vec![0x35])),
        (0, None),
        (0, None),
        (0, None),
    ];
    assert_eq!(sent, blocks);
    // the last upload block asked for 512-byte blocks, and the answer is block 0 of 512, more
    assert_eq!(firsts[3], (Some(vec![0x05]), Some(vec![0x0D])));
    assert_eq!(s.inner.bodies, [2000], "the handler ran once, on the whole body");
    assert_eq!(done.code, Code::CHANGED);
    assert_eq!(done.payload, post(2000).payload);
    // the response is held for its follow-ups until it expires: its 2,000 bytes, its Block1
    // option (1 byte + 32), its key twice (Uri-Path "echo": 2 + 2 + 4 bytes) and 192
    assert_eq!(s.bytes_held(), 2000 + 33 + 2 * 8 + 192);
    assert_eq!(s.transfers(), (0, 1));
}

#[test]
fn a_large_get_comes_in_blocks_of_the_size_the_client_asks_for() {
    let mut s = Blockwise::new(Echo { len: 100, bodies: Vec::new() }, BlockLimits::default());
    let mut t = Transfer::new(Request::get("big"), Some(32), 1 << 20).unwrap();
    let first = serve(&mut s, Instant::ZERO, &t.first());
    // block 0 of 32 bytes, more, SZX 1 (0x09), and Size2 100
    assert_eq!(
        (first.payload.len(), opt(&first, registry::BLOCK2), opt(&first, registry::SIZE2)),
        (32, Some(&[0x09][..]), Some(&[100][..]))
    );
    let mut step = t.on_response(first);
    let mut n = 1;
    let body = loop {
        match step {
            Step::Send(r) => step = t.on_response(serve(&mut s, Instant::ZERO, &r)),
            Step::Done(r) => break r.payload,
            Step::Failed(e) => panic!("{e}"),
        }
        n += 1;
    };
    assert_eq!(n, 4, "100 bytes in blocks of 32: 32 + 32 + 32 + 4");
    assert_eq!(body, (0..100).map(|i| i as u8).collect::<Vec<u8>>());
    assert_eq!(s.inner.bodies.len(), 1, "the follow-ups are served from the held body");
}

#[test]
fn a_client_that_asked_for_small_blocks_keeps_asking_for_them() {
    // -b 16 (SZX 0); a server that answers block 0 in 64 bytes (SZX 2) anyway: the next
    // request asks for the block at offset 64 in 16-byte blocks, number 64 / 16 = 4, SZX 0
    let mut t = Transfer::new(Request::get("big"), Some(16), 1 << 20).unwrap();
    // Block2 0/0/16: the value 0, an empty uint
    assert_eq!(opt_of(&t.first().options, registry::BLOCK2), Some(vec![]));
    let mut first = Response::new(Code::CONTENT, vec![7u8; 64]);
    first.options.push((registry::BLOCK2, Block { num: 0, more: true, szx: 2 }.encode()));
    let Step::Send(next) = t.on_response(first) else { panic!("another block") };
    // Block2 value: num 4 << 4 | more 0 << 3 | szx 0 = 0x40
    assert_eq!(opt_of(&next.options, registry::BLOCK2), Some(vec![0x40]));
    // without -b, the server's size stays: block 1 of 64 bytes (0x12)
    let mut t = Transfer::new(Request::get("big"), None, 1 << 20).unwrap();
    let mut first = Response::new(Code::CONTENT, vec![7u8; 64]);
    first.options.push((registry::BLOCK2, Block { num: 0, more: true, szx: 2 }.encode()));
    let Step::Send(next) = t.on_response(first) else { panic!("another block") };
    assert_eq!(opt_of(&next.options, registry::BLOCK2), Some(vec![0x12]));
}

fn opt_of(options: &[(u16, Vec<u8>)], n: u16) -> Option<Vec<u8>> {
    options.iter().find(|o| o.0 == n).map(|o| o.1.clone())
}

#[test]
fn bad_sequences_and_oversized_bodies_are_refused() {
    let limits = BlockLimits { max_body: 1000, ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
    let block = |num: u32, more: bool, len: usize| {
        let mut r = post(len);
        r.options.push((registry::BLOCK1, Block { num, more, szx: 4 }.encode()));
        r
    };
    // block 1 before block 0: 4.08
    assert_eq!(serve(&mut s, Instant::ZERO, &block(1, true, 256)).code, Code::REQUEST_ENTITY_INCOMPLETE);
    // blocks 0..3 of 256 bytes: the fourth would make 1024 > 1000 bytes: 4.13 with Size1 1000
    for num in 0..3 {
        assert_eq!(serve(&mut s, Instant::ZERO, &block(num, true, 256)).code, Code::CONTINUE);
    }
    let r = serve(&mut s, Instant::ZERO, &block(3, true, 256));
    assert_eq!((r.code, opt(&r, registry::SIZE1)), (Code::REQUEST_ENTITY_TOO_LARGE, Some(&[0x03, 0xE8][..])));
    assert_eq!(s.bytes_held(), 0, "the refused upload is forgotten");
    // a block that is not the last must be full, and no block may be longer than its size
    assert_eq!(serve(&mut s, Instant::ZERO, &block(0, true, 100)).code, Code::BAD_REQUEST);
    assert_eq!(serve(&mut s, Instant::ZERO, &block(0, false, 257)).code, Code::BAD_REQUEST);
    assert!(s.inner.bodies.is_empty());
}

#[test]
fn transfers_expire_and_stay_within_their_byte_budget() {
    let limits = BlockLimits { max_bytes: 3000, lifetime: Duration::from_secs(10), ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 2000, bodies: Vec::new() }, limits);
    // each big GET of another path holds 2000 bytes, no option, its key twice (Uri-Path "a":
    // 2 + 2 + 1 bytes) and 192: 2,202; the second does not fit beside the first (3000 B
    // budget), which, idle for less than the grace period, is safe from it: not held
    serve(&mut s, Instant::ZERO, &Request::get("a"));
    serve(&mut s, Instant::from_nanos(1), &Request::get("b"));
    assert_eq!((s.bytes_held(), s.transfers()), (2202, (0, 1)));
    // 11 s later (a small POST, whose answer is not held) "b" has expired
    serve(&mut s, Instant::ZERO + Duration::from_secs(11), &post(10));
    assert_eq!((s.bytes_held(), s.transfers()), (0, (0, 0)));
}

#[test]
fn the_budget_counts_each_transfers_key_and_use_keeps_it_alive() {
    let limits = BlockLimits { lifetime: Duration::from_secs(10), ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 2000, bodies: Vec::new() }, limits);
    // a GET with a 1,000-byte Uri-Query: held with 2 · (2 + 2 + 1) + 2 · (2 + 2 + 1000) bytes
    // of key besides its 2,000-byte body and 192
    let mut long = Request::get("a");
    long.options.push((registry::URI_QUERY, vec![b'q'; 1000]));
    serve(&mut s, Instant::ZERO, &long);
    assert_eq!(s.bytes_held(), 2000 + 2 * 5 + 2 * 1004 + 192);
    // "b" at 1 s; "a"'s block 1 asked for at 5 s keeps "a" alive: at 12 s "b" (unused since
    // 1 s) has expired and "a" (since 5 s) has not; at 16 s both have
    serve(&mut s, Instant::ZERO + Duration::from_secs(1), &Request::get("b"));
    let mut next = long.clone();
    next.options.push((registry::BLOCK2, Block { num: 1, more: false, szx: 6 }.encode()));
    assert_eq!(serve(&mut s, Instant::ZERO + Duration::from_secs(5), &next).payload.len(), 2000 - 1024);
    serve(&mut s, Instant::ZERO + Duration::from_secs(12), &post(10));
    assert_eq!((s.bytes_held(), s.transfers()), (2000 + 2 * 5 + 2 * 1004 + 192, (0, 1)));
    serve(&mut s, Instant::ZERO + Duration::from_secs(16), &post(10));
    assert_eq!((s.bytes_held(), s.transfers()), (0, (0, 0)));
}

#[test]
fn a_source_may_hold_a_few_uploads_at_once() {
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default());
    let first_block = |path: &str| {
        let mut r = post(16);
        r.options = vec![(registry::URI_PATH, path.as_bytes().to_vec())];
        r.options.push((registry::BLOCK1, Block { num: 0, more: true, szx: 0 }.encode()));
        r
    };
    // four uploads from source 1 are held; the fifth is refused, another source's is not
    for p in ["a", "b", "c", "d"] {
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block(p)).code, Code::CONTINUE);
    }
    assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block("e")).code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(serve_from(&mut s, 2, Instant::ZERO, &first_block("e")).code, Code::CONTINUE);
    // a whole body in one block is not held: never refused
    assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &post(10)).code, Code::CHANGED);
    // "a" finished: room for another
    let mut last = post(10);
    last.options = vec![(registry::URI_PATH, b"a".to_vec())];
    last.options.push((registry::BLOCK1, Block { num: 1, more: false, szx: 0 }.encode()));
    assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &last).code, Code::CHANGED);
    assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block("e")).code, Code::CONTINUE);
    assert_eq!(s.transfers(), (5, 0));
}

/// Block `num` of a 1,024-byte-block upload to `path` (`more` unless it is the last).
fn upload_block(path: &str, num: u32, more: bool) -> Request {
    let mut r = post(1024);
    r.options = vec![(registry::URI_PATH, path.as_bytes().to_vec())];
    r.options.push((registry::BLOCK1, Block { num, more, szx: 6 }.encode()));
    r
}

#[test]
fn uploads_are_counted_per_source_address() {
    // peers 101-105 are one source (one address, five ports): four uploads, then 5.03
    let mut s =
        Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default()).with_source_key(|a: &u32| a / 100);
    for peer in 101..105 {
        assert_eq!(serve_from(&mut s, peer, Instant::ZERO, &upload_block("u", 0, true)).code, Code::CONTINUE);
    }
    assert_eq!(serve_from(&mut s, 105, Instant::ZERO, &upload_block("u", 0, true)).code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(serve_from(&mut s, 201, Instant::ZERO, &upload_block("u", 0, true)).code, Code::CONTINUE);
}

#[test]
fn a_flood_of_first_blocks_pushes_out_neither_a_slow_upload_nor_its_first_block() {
    // a legitimate upload of ten 1,024-byte blocks, one every 2 s, and from its first block
    // on 2,000 uploads a second from new sources that never send a second block, into a
    // 1-MB budget (about 800 of them: full in 0.4 s; the third probe's flood, 12,000 a
    // second into 16 MB, cut an upload like this one at its second block with 4.08)
    let limits = BlockLimits { max_bytes: 1 << 20, ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
    let at = |ms: u64| Instant::ZERO + Duration::from_millis(ms);
    let (mut flood, mut refused, mut held) = (1u32, 0, 0);
    let mut legit = Vec::new();
    for ms in 0..25_000u64 {
        if ms % 2_000 == 0 && legit.len() < 10 {
            let num = legit.len() as u32;
            legit.push(serve_from(&mut s, 0, at(ms), &upload_block("legit", num, num < 9)).code);
        }
        for _ in 0..2 {
            match serve_from(&mut s, flood, at(ms), &upload_block("f", 0, true)).code {
                Code::CONTINUE => held += 1,
                Code::SERVICE_UNAVAILABLE => refused += 1,
                c => panic!("{c:?}"),
            }
            flood += 1;
        }
        assert!(s.bytes_held() <= 1 << 20);
    }
    let mut want = vec![Code::CONTINUE; 9];
    want.push(Code::CHANGED);
    assert_eq!(legit, want, "every block taken, the body handed on whole");
    assert_eq!(s.inner.bodies.last(), Some(&(10 * 1024)));
    // the flood recycles its own: refused while every one-block upload held is younger
    // than the grace period (10 s), then its oldest give way to newer ones
    assert!(refused > 40_000 && held > 1_600, "{refused} refused, {held} held");
}

#[test]
fn a_newcomer_refused_for_want_of_room_is_told_when_to_come_back() {
    let limits = BlockLimits { max_bytes: 1024 + 2 * 5 + 192, ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
    assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &upload_block("a", 0, true)).code, Code::CONTINUE);
    let r = serve_from(&mut s, 2, Instant::ZERO, &upload_block("b", 0, true));
    assert_eq!((r.code, opt(&r, registry::MAX_AGE)), (Code::SERVICE_UNAVAILABLE, Some(&[10][..])));
}

#[test]
fn a_transfers_next_block_may_push_out_any_other() {
    // two uploads fill the budget; a third's first block is refused (both are within the
    // grace period); the first's second block pushes out the second (one block), and the
    // first upload goes on
    let limits = BlockLimits { max_bytes: 2 * (1024 + 2 * 5 + 192) + 100, ..BlockLimits::default() };
    let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
    let t0 = Instant::ZERO;
    assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 0, true)).code, Code::CONTINUE);
    assert_eq!(serve_from(&mut s, 2, t0, &upload_block("b", 0, true)).code, Code::CONTINUE);
    assert_eq!(serve_from(&mut s, 3, t0, &upload_block("c", 0, true)).code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 1, true)).code, Code::CONTINUE);
    assert_eq!(s.transfers(), (1, 0));
    assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 2, false)).code, Code::CHANGED);
    // after the grace period a one-block upload gives way to a newcomer
    let later = t0 + Duration::from_secs(10);
    assert_eq!(serve_from(&mut s, 2, t0, &upload_block("b", 0, true)).code, Code::CONTINUE);
    assert_eq!(serve_from(&mut s, 3, t0, &upload_block("c", 0, true)).code, Code::CONTINUE);
    assert_eq!(serve_from(&mut s, 4, later, &upload_block("d", 0, true)).code, Code::CONTINUE);
    assert_eq!(s.transfers(), (2, 0));
}

#[test]
fn an_echo_challenge_is_answered_once_with_its_value() {
    let mut t = Transfer::new(Request::get("test"), None, 1 << 20).unwrap();
    let mut challenge = Response::new(Code::UNAUTHORIZED, Vec::new());
    challenge.options.push((registry::ECHO, vec![1, 2, 3]));
    let Step::Send(again) = t.on_response(challenge.clone()) else { panic!("repeats") };
    assert!(again.options.contains(&(registry::ECHO, vec![1, 2, 3])));
    // a second 4.01 is the answer
    assert_eq!(t.on_response(challenge.clone()), Step::Done(challenge));
}
