//! A second network model needs no engine change: a lossless line of three hosts, written
//! here, runs under the unchanged engine with both stacks. Unlike the wired bottleneck it
//! hands each packet from host to host as an event of its own (`Schedule::wake`), as a
//! multi-hop mesh will.
//!
//! ```text
//! host 0 (client) ── 10 ms ── host 1 (relays) ── 10 ms ── host 2 (server)
//! ```

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{Config, Endpoint, Request};
use netmodel::workload::Batches;
use netmodel::{HostId, Medium, Packet, Schedule, Stream, WorkloadKind, WorkloadSpec};
use netsim::engine;
use netsim::tcp::TcpParams;
use netsim::tcp_stack::TcpStack;
use netsim::udp::{FixedResponse, UdpHost, UdpStack};
use netsim::{Recorder, RepResult};

const HOP: Duration = Duration::from_millis(10);
const EXCHANGES: u32 = 5;

/// The packet has reached host `at` on its way.
#[derive(Debug, Clone, Copy)]
struct AtHost {
    packet: Packet,
    at: HostId,
}

/// Hosts 0..3 on a line; every hop takes `HOP` and loses nothing.
#[derive(Debug, Default)]
struct Line {
    relayed: u64,
    delivered: u64,
}

impl Line {
    fn hop<S: Schedule<AtHost>>(&mut self, now: Instant, packet: Packet, at: HostId, sched: &mut S) {
        let next = if packet.to > at { HostId(at.0 + 1) } else { HostId(at.0 - 1) };
        if next == packet.to {
            self.delivered += 1;
            sched.deliver(now + HOP, 0, packet);
        } else {
            sched.wake(now + HOP, AtHost { packet, at: next });
        }
    }
}

impl Medium for Line {
    type Event = AtHost;
    type Report = (u64, u64);

    fn send<S: Schedule<AtHost>>(&mut self, now: Instant, packet: Packet, sched: &mut S) {
        self.hop(now, packet, packet.from, sched);
    }

    fn handle<S: Schedule<AtHost>>(&mut self, now: Instant, ev: AtHost, sched: &mut S) {
        self.relayed += 1;
        self.hop(now, ev.packet, ev.at, sched);
    }

    fn report(&self) -> (u64, u64) {
        (self.relayed, self.delivered)
    }
}

fn workload() -> Batches {
    let spec = WorkloadSpec {
        kind: WorkloadKind::Continuous,
        exchanges: EXCHANGES,
        batch_min: 1,
        batch_max: 1,
        start_spread_s: 0.0,
    };
    Batches::new(spec, 1, 1, 0) // one client: host 0
}

fn run<S: engine::Stack>(stack: S) -> RepResult<(u64, u64)> {
    run_until(stack, Duration::from_secs(100))
}

fn run_until<S: engine::Stack>(stack: S, safety_net: Duration) -> RepResult<(u64, u64)> {
    let limit = engine::Until::SafetyNet(Instant::ZERO + safety_net);
    engine::run(Line::default(), stack, workload(), Recorder::new(0, None), limit)
}

/// Host 0 runs the workload against host 2, which answers with 10 bytes; host 1 only relays.
fn udp_line() -> UdpStack {
    let ep = |h: u32| {
        let cfg = Config::new(CcConfig::new("default").unwrap());
        Endpoint::new(cfg, Stream::Host(h).small_rng(1, 0)).unwrap()
    };
    let hosts = vec![
        UdpHost::client(ep(0), HostId(2), EXCHANGES as usize),
        UdpHost::server(ep(1)), // relays in the model; its endpoint sees nothing
        UdpHost::server(ep(2).with_handler(Box::new(FixedResponse::payload(vec![7; 10])))),
    ];
    UdpStack::new(hosts, Request::get("x"), 28)
}

#[test]
fn udp_over_a_three_host_line() {
    let r = run(udp_line());
    // each exchange: request 2 hops, response 2 hops, 10 ms each: 40 ms; 5 back to back
    assert_eq!(r.clients.len(), 1);
    assert_eq!(r.clients[0].fct_ns, Some(5 * 40_000_000));
    assert_eq!((r.clients[0].exchanges, r.clients[0].failed, r.clients[0].retransmissions), (5, 0, 0));
    assert!(r.exchanges.iter().all(|e| e.rtt_ns == Some(40_000_000)));
    // 10 datagrams, each relayed once by host 1 (the model's own events) and delivered once
    assert_eq!(r.network, (10, 10));
    // events: the start, 10 relays, 10 deliveries (timers never fire: RTOs are 2 s or more)
    assert_eq!(r.events, 21);
    assert!(!r.truncated);
    assert_eq!(r.end_ns, 5 * 40_000_000);
}

#[test]
fn a_workload_that_finished_before_the_safety_net_is_not_truncated() {
    // the five exchanges end at 200 ms; the retransmission timer of the last one (armed at
    // 160 ms for an RTO of 2 to 3 s) is left in the queue, past a safety net of 1 s: the run
    // is complete, and it ends at 200 ms, not at the net
    let r = run_until(udp_line(), Duration::from_secs(1));
    assert_eq!(r.clients[0].fct_ns, Some(5 * 40_000_000));
    assert!(!r.truncated);
    assert_eq!(r.end_ns, 5 * 40_000_000);
    assert_eq!(r.events, 21);
}

#[test]
fn tcp_over_a_three_host_line() {
    let stack = TcpStack::new(
        TcpParams::default(),
        3,
        &[(HostId(0), HostId(2))],
        true,
        Request::get("x"),
        &[7; 10],
        EXCHANGES as usize,
    );
    let r = run(stack);
    // continuous: the clock starts after the handshake and the CSMs; then every request
    // carries the ACK of the previous response and every response the ACK of its request,
    // so each exchange is one 40 ms round trip
    assert_eq!(r.clients[0].fct_ns, Some(5 * 40_000_000));
    assert_eq!((r.clients[0].exchanges, r.clients[0].failed, r.clients[0].retransmissions), (5, 0, 0));
    let (relayed, delivered) = r.network;
    assert_eq!(relayed, delivered, "every segment crosses host 1 once");
    assert!(!r.truncated);
}

/// On every send, wakes itself at hosts 2, 1, 0 (in that order) 1 ms later, all at one time;
/// records the hosts in the order their events are handled. `HOST` chooses the model's ordering.
#[derive(Debug, Default)]
struct Fanout<const HOST: bool> {
    handled: Vec<u32>,
}

impl<const HOST: bool> Medium for Fanout<HOST> {
    type Event = HostId;
    type Report = Vec<u32>;
    const HOST_ORDER: bool = HOST;

    fn event_host(event: &HostId) -> HostId {
        *event
    }
    fn send<S: Schedule<HostId>>(&mut self, now: Instant, packet: Packet, sched: &mut S) {
        for h in [2, 1, 0] {
            sched.wake(now + Duration::from_millis(1), HostId(h));
        }
        sched.discard(packet);
    }
    fn handle<S: Schedule<HostId>>(&mut self, _now: Instant, ev: HostId, _sched: &mut S) {
        self.handled.push(ev.0);
    }
    fn report(&self) -> Vec<u32> {
        self.handled.clone()
    }
}

fn fanout<const HOST: bool>() -> Vec<u32> {
    let ep = |h: u32| {
        let cfg = Config::new(CcConfig::new("default").unwrap());
        Endpoint::new(cfg, Stream::Host(h).small_rng(1, 0)).unwrap()
    };
    let hosts = vec![UdpHost::client(ep(0), HostId(2), 1), UdpHost::server(ep(1)), UdpHost::server(ep(2))];
    // ends before the first retransmission: one send, three events
    let until = engine::Until::Planned(Instant::ZERO + Duration::from_millis(100));
    let stack = UdpStack::new(hosts, Request::get("x"), 28);
    engine::run(Fanout::<HOST>::default(), stack, workload(), Recorder::new(0, None), until).network
}

#[test]
fn equal_time_events_act_in_host_order_when_the_model_asks() {
    assert_eq!(fanout::<true>(), [0, 1, 2], "host order");
    assert_eq!(fanout::<false>(), [2, 1, 0], "scheduling order");
}
