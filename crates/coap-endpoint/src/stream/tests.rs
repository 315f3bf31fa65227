//! The stream connection's unit tests.

use super::*;
use crate::NotFound;

fn pair() -> (StreamConnection<u8>, StreamConnection<u8>) {
    (StreamConnection::new(1, 1152, None), StreamConnection::new(2, 1152, Some(Box::new(NotFound))))
}

fn shuttle(a: &mut StreamConnection<u8>, b: &mut StreamConnection<u8>) {
    for _ in 0..4 {
        let x = a.take_output();
        b.handle_bytes(Instant::ZERO, &x);
        let y = b.take_output();
        a.handle_bytes(Instant::ZERO, &y);
    }
}

/// Answers every request with 2.05, Observe 5 and `len` bytes.
#[derive(Debug)]
struct Big(usize);

impl Handler<u8> for Big {
    fn handle(&mut self, _: Instant, _: &u8, _: RequestId, _: &coap_wire::Message<'_>) -> Reply {
        let mut r = Response::new(Code::CONTENT, vec![b'x'; self.0]);
        r.options.push((registry::OBSERVE, vec![5]));
        Reply::Now(r)
    }
}

/// The code, options and payload length of the answer to `req` from a server answering
/// with `Big(len)`, the client's Max-Message-Size being `client_max`.
fn answer(client_max: u64, len: usize, req: &Request) -> (Code, Vec<u16>, usize) {
    let mut c = StreamConnection::new(1u8, client_max, None);
    let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(Big(len)) as Box<dyn Handler<u8>>));
    // the client's CSM first (the server must know its Max-Message-Size), then the request
    s.handle_bytes(Instant::ZERO, &c.take_output());
    c.handle_bytes(Instant::ZERO, &s.take_output());
    c.request(Instant::ZERO, req).unwrap();
    shuttle(&mut c, &mut s);
    loop {
        match c.poll_event() {
            Some(StreamEvent::Response { code, options, payload, .. }) => {
                return (code, options.iter().map(|o| o.0).collect(), payload.len())
            }
            Some(_) => {}
            None => panic!("no answer"),
        }
    }
}

#[test]
fn what_streams_do_not_serve_is_refused_or_said() {
    // a plain GET: 2.05 with its 100 bytes, without the Observe the handler added (not a
    // registration: the client learns it is not an observer)
    assert_eq!(answer(1152, 100, &Request::get("a")), (Code::CONTENT, vec![], 100));
    // Block2 and Block1 (critical) are not served over streams: 4.02, as is an unknown
    // critical option (9) and a Uri-Path longer than 255 bytes
    let with = |n: u16, v: Vec<u8>| {
        let mut r = Request::get("a");
        r.options.push((n, v));
        r
    };
    for req in [with(registry::BLOCK2, vec![0x02]), with(registry::BLOCK1, vec![0x08]), with(9, vec![1])] {
        assert_eq!(answer(1152, 100, &req).0, Code::BAD_OPTION, "{req:?}");
    }
    assert_eq!(answer(1152, 100, &Request::get(&"p".repeat(256))).0, Code::BAD_OPTION);
    // a client that takes at most 200-byte messages: 150 bytes of payload fit, 300 do not
    // (5.00 with the reason instead of a message it would refuse)
    assert_eq!(answer(200, 150, &Request::get("a")).0, Code::CONTENT);
    let (code, _, len) = answer(200, 300, &Request::get("a"));
    assert_eq!(code, Code::INTERNAL_SERVER_ERROR);
    assert!(len > 0 && len < 200);
}

/// Answers with the request's body (POST), or with `len` bytes.
struct EchoOr(usize);

impl Handler<u8> for EchoOr {
    fn handle(&mut self, _: Instant, _: &u8, _: RequestId, req: &coap_wire::Message<'_>) -> Reply {
        let body = if req.code == Code::POST { req.payload.to_vec() } else { vec![b'y'; self.0] };
        Reply::Now(Response::new(Code::CONTENT, body))
    }
}

#[test]
fn block_wise_transfers_both_ways_with_a_blockwise_handler() {
    let inner = crate::Blockwise::new(EchoOr(2500), crate::BlockLimits::default());
    let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(inner) as Box<dyn Handler<u8>>)).with_blockwise();
    let mut c = StreamConnection::new(1u8, 1152, None);
    let mut run = |req: Request, block: Option<usize>| {
        let mut t = crate::Transfer::new(req, block, 1 << 20).unwrap();
        let mut next = t.first();
        for _ in 0..100 {
            c.request(Instant::ZERO, &next).unwrap();
            shuttle(&mut c, &mut s);
            let Some(StreamEvent::Response { code, options, payload, .. }) =
                core::iter::from_fn(|| c.poll_event()).find(|e| matches!(e, StreamEvent::Response { .. }))
            else {
                panic!("no answer")
            };
            match t.on_response(Response { code, options, payload }) {
                crate::Step::Send(r) => next = r,
                crate::Step::Done(r) => return r,
                crate::Step::Failed(why) => panic!("{why}"),
            }
        }
        panic!("no end")
    };
    // 3,000 bytes up in 512-byte Block1 blocks, reassembled and echoed back in Block2 blocks
    let body: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let up = run(Request { code: Code::POST, payload: body.clone(), ..Request::get("e") }, Some(512));
    assert_eq!((up.code, up.payload), (Code::CONTENT, body));
    // a 2,500-byte answer to a plain GET comes in the server's 1,024-byte blocks
    let down = run(Request::get("d"), None);
    assert_eq!(down.payload, vec![b'y'; 2500]);
}

/// Answers GET with 2.05 "v", and with Observe 9 when asked to register.
struct Observable;

impl Handler<u8> for Observable {
    fn handle(&mut self, _: Instant, _: &u8, _: RequestId, req: &coap_wire::Message<'_>) -> Reply {
        let mut r = Response::new(Code::CONTENT, b"v".to_vec());
        if req.options.get(registry::OBSERVE).is_some() {
            r.options.push((registry::OBSERVE, vec![9]));
        }
        Reply::Now(r)
    }
}

fn observe_of(options: &[(u16, Vec<u8>)]) -> Option<u32> {
    options.iter().find(|o| o.0 == registry::OBSERVE).and_then(|o| crate::observe::value(&o.1))
}

#[test]
fn observe_over_a_stream_registers_notifies_in_order_and_ends() {
    let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(Observable) as Box<dyn Handler<u8>>));
    let mut c = StreamConnection::new(1u8, 1152, None);
    let events = |c: &mut StreamConnection<u8>| core::iter::from_fn(|| c.poll_event()).collect::<Vec<_>>();
    let id = c.observe(Instant::ZERO, &Request::get("a/b")).unwrap();
    shuttle(&mut c, &mut s);
    // the registration's answer carries the connection's first Observe number
    let first = events(&mut c);
    let Some(StreamEvent::Response { id: rid, options, .. }) =
        first.iter().find(|e| matches!(e, StreamEvent::Response { .. }))
    else {
        panic!("{first:?}")
    };
    assert_eq!((*rid, observe_of(options)), (id, Some(1)));
    assert_eq!(s.observation_count(), 1);
    // three changes of a/b (and one of another path) arrive in order, as notifications of `id`
    for _ in 0..3 {
        assert_eq!(s.notify(Instant::ZERO, "a/b", &Response::new(Code::CONTENT, b"w".to_vec())), 1);
    }
    assert_eq!(s.notify(Instant::ZERO, "other", &Response::new(Code::CONTENT, Vec::new())), 0);
    shuttle(&mut c, &mut s);
    let seqs: Vec<Option<u32>> = events(&mut c)
        .iter()
        .map(|e| match e {
            StreamEvent::Notification { id: n, options, .. } if *n == id => observe_of(options),
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(seqs, vec![Some(2), Some(3), Some(4)]);
    // a 4.04 is the last: without Observe, and both sides forget the observation
    s.notify(Instant::ZERO, "a/b", &Response::new(Code::NOT_FOUND, Vec::new()));
    shuttle(&mut c, &mut s);
    let last = events(&mut c);
    assert!(
        matches!(&last[..], [StreamEvent::Notification { code: Code::NOT_FOUND, options, .. }] if options.is_empty())
    );
    assert_eq!((s.observation_count(), c.observation_count()), (0, 0));
    // a GET with Observe 1 and the token deregisters
    c.observe(Instant::ZERO, &Request::get("a/b")).unwrap();
    shuttle(&mut c, &mut s);
    assert_eq!(s.observation_count(), 1);
    events(&mut c);
    let mut key = [0u8; 8];
    key[..4].copy_from_slice(&(c.next_token as u32).to_be_bytes());
    let bye =
        [CoapOption { number: registry::OBSERVE, value: &[1] }, CoapOption { number: registry::URI_PATH, value: b"a" }];
    write_frame(&mut c.out, Code::GET, &key[..4], &bye, &[]);
    shuttle(&mut c, &mut s);
    assert_eq!(s.observation_count(), 0);
    // at most MAX_STREAM_OBSERVERS per connection: the next registration is answered
    // without Observe
    for _ in 0..MAX_STREAM_OBSERVERS + 1 {
        c.request(Instant::ZERO, &Request { options: vec![(registry::OBSERVE, vec![])], ..Request::get("x") });
    }
    shuttle(&mut c, &mut s);
    let answers = events(&mut c);
    let observed =
        answers.iter().filter(|e| matches!(e, StreamEvent::Response { options, .. } if observe_of(options).is_some()));
    assert_eq!((observed.count(), s.observation_count()), (MAX_STREAM_OBSERVERS, MAX_STREAM_OBSERVERS));
}

#[test]
fn csm_then_requests_matched_by_token_even_byte_by_byte() {
    let (mut c, mut s) = pair();
    let id1 = c.request(Instant::ZERO, &Request::get("a")).unwrap();
    let id2 = c.request(Instant::ZERO, &Request::get("b")).unwrap();
    // deliver the client's bytes one at a time: frames are reassembled
    for b in c.take_output() {
        s.handle_bytes(Instant::ZERO, &[b]);
    }
    let back = s.take_output();
    c.handle_bytes(Instant::ZERO, &back);
    assert_eq!(c.poll_event(), Some(StreamEvent::Ready { max_message_size: 1152 }));
    assert_eq!(
        c.poll_event(),
        Some(StreamEvent::Response { id: id1, code: Code::NOT_FOUND, options: vec![], payload: vec![] })
    );
    assert_eq!(
        c.poll_event(),
        Some(StreamEvent::Response { id: id2, code: Code::NOT_FOUND, options: vec![], payload: vec![] })
    );
    assert_eq!(c.outstanding(), 0);
}

#[test]
fn empty_tokens_are_matched_in_order_and_other_lengths_by_value() {
    for len in [0, 1, 8] {
        let (c, mut s) = pair();
        let mut c = c.with_token_len(len);
        let ids = [
            c.request(Instant::ZERO, &Request::get("a")).unwrap(),
            c.request(Instant::ZERO, &Request::get("b")).unwrap(),
        ];
        let out = c.take_output();
        // CSM (3 bytes: Len/TKL, code, Max-Message-Size 1152 in 2 bytes after its header)
        // then a GET: Len/TKL, code, token, Uri-Path "a" (2 bytes)
        let (csm, n) = Frame::decode(&out, 1152).unwrap();
        assert_eq!(csm.code, Code::CSM);
        let (get, _) = Frame::decode(&out[n..], 1152).unwrap();
        assert_eq!(get.token.len(), len);
        s.handle_bytes(Instant::ZERO, &out);
        c.handle_bytes(Instant::ZERO, &s.take_output());
        let got: Vec<u64> = std::iter::from_fn(|| c.poll_event())
            .filter_map(|e| match e {
                StreamEvent::Response { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        assert_eq!(got, ids, "token length {len}");
        assert_eq!(c.outstanding(), 0);
    }
}

#[test]
fn ping_pong_and_release() {
    let (mut c, mut s) = pair();
    shuttle(&mut c, &mut s);
    c.ping();
    shuttle(&mut c, &mut s);
    assert!(std::iter::from_fn(|| c.poll_event()).any(|e| e == StreamEvent::Pong));
    c.release();
    shuttle(&mut c, &mut s);
    assert!(s.is_closed());
    assert!(std::iter::from_fn(|| s.poll_event()).any(|e| e == StreamEvent::Closed(CloseReason::Released)));
}

fn t(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

fn closed_with(c: &mut StreamConnection<u8>) -> Option<CloseReason> {
    std::iter::from_fn(|| c.poll_event()).find_map(|e| match e {
        StreamEvent::Closed(r) => Some(r),
        _ => None,
    })
}

const LIMITS: StreamLimits = StreamLimits {
    csm: Some(Duration::from_millis(1000)),
    frame: Some(Duration::from_millis(500)),
    idle: Some(Duration::from_millis(3000)),
    response: Some(Duration::from_millis(2000)),
};

#[test]
fn a_complete_frame_that_does_not_decode_aborts_and_nothing_after_it_is_kept() {
    // the 4 bytes `20 01 77 00`: Len 2, GET, an option of length 7 with 1 byte left in the frame
    let mut s = StreamConnection::<u8>::new(2, 1152, Some(Box::new(NotFound)));
    let _ = s.take_output();
    s.handle_bytes(Instant::ZERO, &[0x00, 0xE1]); // the peer's CSM
    s.handle_bytes(Instant::ZERO, &[0x20, 0x01, 0x77, 0x00]);
    assert!(s.is_closed());
    assert!(matches!(closed_with(&mut s), Some(CloseReason::Aborted(d)) if d.contains("malformed")));
    for _ in 0..100 {
        s.handle_bytes(Instant::ZERO, &[0u8; 4096]);
    }
    assert_eq!(s.buffered(), 0);
}

#[test]
fn deadlines_close_stuck_connections() {
    // no CSM: Abort at 1000 ms, not before
    let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
    assert_eq!(s.poll_timeout(), Some(t(1000)));
    s.handle_timeout(t(999));
    assert!(!s.is_closed());
    s.handle_timeout(t(1000));
    assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Csm)));
    assert_eq!(s.poll_timeout(), None);
    // a frame begun at 200 ms, one more byte at 600 ms: still due at 200 + 500 = 700 ms
    let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
    s.handle_bytes(t(100), &[0x00, 0xE1]);
    s.handle_bytes(t(200), &[0x30]);
    s.handle_bytes(t(600), &[0x01]);
    assert_eq!(s.poll_timeout(), Some(t(700)));
    s.handle_timeout(t(700));
    assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Frame)));
    // a frame begun long after the CSM: not idle while it is in progress, so the idle limit
    // (3100 ms) does not apply and the frame limit (2900 + 500 ms) does
    let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
    s.handle_bytes(t(100), &[0x00, 0xE1]);
    s.handle_bytes(t(2900), &[0x31]);
    assert_eq!(s.poll_timeout(), Some(t(3400)));
    s.handle_timeout(t(3400));
    assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Frame)));
    // idle: the last complete frame at 100 ms, released (7.04) at 3100 ms
    let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
    s.handle_bytes(t(100), &[0x00, 0xE1]);
    let _ = s.take_output();
    assert_eq!(s.poll_timeout(), Some(t(3100)));
    s.handle_timeout(t(3100));
    assert_eq!(closed_with(&mut s), Some(CloseReason::Idle));
    assert_eq!(Frame::decode(&s.take_output(), 1152).unwrap().0.code, Code::RELEASE);
    // a request sent at 400 ms and never answered: Abort at 2400 ms (idle does not apply meanwhile)
    let mut c = StreamConnection::<u8>::new(1, 1152, None).with_limits(t(0), LIMITS);
    c.handle_bytes(t(100), &[0x00, 0xE1]);
    c.request(t(400), &Request::get("a")).unwrap();
    assert_eq!(c.poll_timeout(), Some(t(2400)));
    c.handle_timeout(t(2400));
    assert_eq!(closed_with(&mut c), Some(CloseReason::TimedOut(Deadline::Response)));
}

#[test]
fn no_limits_no_deadline() {
    let (mut c, _) = pair();
    c.request(Instant::ZERO, &Request::get("a")).unwrap();
    assert_eq!(c.poll_timeout(), None);
    c.handle_timeout(Instant::from_nanos(u64::MAX));
    assert!(!c.is_closed());
}

#[test]
fn bad_input_aborts() {
    // a first message that is not a CSM
    let mut s = StreamConnection::<u8>::new(2, 1152, Some(Box::new(NotFound)));
    let _ = s.take_output();
    s.handle_bytes(Instant::ZERO, &[0x01, 0x01, 0x07]); // GET with token 7, no CSM before
    let out = s.take_output();
    let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
    assert_eq!(f.code, Code::ABORT);
    assert!(s.is_closed());
    // a frame announcing more than our Max-Message-Size
    let mut s = StreamConnection::<u8>::new(2, 1152, None);
    let _ = s.take_output();
    s.handle_bytes(Instant::ZERO, &[0xF0, 0x00, 0x10, 0x00, 0x00]);
    let out = s.take_output();
    let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
    assert_eq!(f.code, Code::ABORT);
    assert!(String::from_utf8_lossy(f.payload).contains("exceeds Max-Message-Size"));
    // garbage: reserved token length
    let mut s = StreamConnection::<u8>::new(2, 1152, None);
    let _ = s.take_output();
    s.handle_bytes(Instant::ZERO, &[0x0F, 0xFF]);
    assert_eq!(Frame::decode(&s.take_output(), u64::MAX).unwrap().0.code, Code::ABORT);
    // an unknown critical CSM option (9): Abort with Bad-CSM-Option 9
    let mut s = StreamConnection::<u8>::new(2, 1152, None);
    let _ = s.take_output();
    s.handle_bytes(Instant::ZERO, &[0x10, 0xE1, 0x90]);
    let out = s.take_output();
    let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
    assert_eq!(f.code, Code::ABORT);
    assert_eq!(f.options.get(registry::ABORT_BAD_CSM_OPTION), Some(&[9u8][..]));
}
