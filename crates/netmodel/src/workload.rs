//! What clients do and when: the reference testbed's workloads as [`Workload`] generators.
//!
//! * Continuous: a client runs its `exchanges` one after the other, the next as soon as the
//!   previous one ended (a response, or a failure).
//! * Random: the exchanges come in batches of uniformly `batch_min..=batch_max` (the last one
//!   cut to what is left); each batch after the first starts afresh, as a new short-lived device
//!   would (every congestion-control state reset; over TCP, a new connection).
//!
//! [`ClientSteps`] is one client's state with its own [`Stream::Workload`] generator; the
//! simulator ([`Batches`]) and the real load generator (`coapcc load`) both step it, so a seed
//! gives both the same batches.

use coap_time::{Duration, Instant};
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use crate::medium::HostId;
use crate::streams::Stream;

/// How clients issue their exchanges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// The next exchange as soon as the previous one ended.
    Continuous,
    /// Batches of uniformly `batch_min..=batch_max` exchanges, all state reset between them.
    Random,
}

/// A client's next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run an exchange now. `fresh`: it opens a batch after another, so the client starts afresh
    /// as a new device (congestion-control state reset; over TCP, a new connection).
    Exchange {
        /// A new batch after the first.
        fresh: bool,
    },
    /// Run the next exchange (not fresh) at this time, later than now: a periodic client
    /// waiting for its timer.
    At(Instant),
    /// Nothing to start now, but not done: a client with several exchanges open that may not
    /// start another (it is done when the last open one ends).
    Idle,
    /// The client has run all its exchanges.
    Done,
}

/// Arrivals whose interval steps: `intervals_ns[k]` during step k, each `step_ns` long; none
/// after the last step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateSteps {
    /// The interval in each step, ns.
    pub intervals_ns: Vec<u64>,
    /// A step's length, ns.
    pub step_ns: u64,
}

impl RateSteps {
    /// The arrival after one at `last` ns: `last` plus the interval of the step `last` fell in;
    /// None past the last step or at or after `until_ns`.
    pub fn next(&self, last: u64, until_ns: u64) -> Option<u64> {
        let k = (last / self.step_ns.max(1)) as usize;
        let next = last + *self.intervals_ns.get(k)?;
        (next < until_ns && next < self.intervals_ns.len() as u64 * self.step_ns).then_some(next)
    }

    /// The first interval, ns (0 without steps).
    pub fn first(&self) -> u64 {
        self.intervals_ns.first().copied().unwrap_or(0)
    }
}

/// The workload of every client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadSpec {
    /// Continuous or random.
    pub kind: WorkloadKind,
    /// Exchanges per client.
    pub exchanges: u32,
    /// Smallest batch (random).
    pub batch_min: u32,
    /// Largest batch (random).
    pub batch_max: u32,
    /// Each client starts at a uniform offset in [0, start_spread_s] seconds.
    pub start_spread_s: f64,
}

/// The size of a random-workload batch: uniform over `min..=max` exchanges, cut to the
/// `remaining` ones.
pub fn draw_batch(rng: &mut dyn RngCore, min: u32, max: u32, remaining: u32) -> u32 {
    let size = (coap_time::rng::uniform(rng, min as f64, max as f64 + 1.0) as u32).min(max);
    size.min(remaining)
}

/// One client's progress through its workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientWorkload {
    done: u32,
    batch_left: u32,
}

impl ClientWorkload {
    /// The client's first step (at its start).
    pub fn start(&mut self, spec: &WorkloadSpec, rng: &mut dyn RngCore) -> Next {
        self.step(spec, rng)
    }

    /// An exchange ended: the client's next step.
    pub fn ended(&mut self, spec: &WorkloadSpec, rng: &mut dyn RngCore) -> Next {
        self.done += 1;
        self.step(spec, rng)
    }

    /// Exchanges ended so far.
    pub fn done(&self) -> u32 {
        self.done
    }

    fn step(&mut self, spec: &WorkloadSpec, rng: &mut dyn RngCore) -> Next {
        if self.done >= spec.exchanges {
            return Next::Done;
        }
        let mut fresh = false;
        if spec.kind == WorkloadKind::Random && self.batch_left == 0 {
            fresh = self.done > 0;
            self.batch_left = draw_batch(rng, spec.batch_min, spec.batch_max, spec.exchanges - self.done);
        }
        self.batch_left = self.batch_left.saturating_sub(1);
        Next::Exchange { fresh }
    }
}

/// A stream whose generator is made at its first draw: most workloads (continuous, no start
/// spread) draw nothing, and a ChaCha8 generator is 320 bytes per client. The draws are those of
/// the stream made at once.
#[derive(Debug, Clone)]
struct LazyStream {
    stream: Stream,
    seed: u64,
    rep: u32,
    rng: Option<Box<ChaCha8Rng>>,
}

impl LazyStream {
    fn rng(&mut self) -> &mut ChaCha8Rng {
        let (stream, seed, rep) = (self.stream, self.seed, self.rep);
        self.rng.get_or_insert_with(|| Box::new(stream.rng(seed, rep)))
    }
}

impl RngCore for LazyStream {
    fn next_u32(&mut self) -> u32 {
        self.rng().next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.rng().next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.rng().fill_bytes(dest)
    }
}

/// One client's workload drawing from its own stream, [`Stream::Workload`]`(client)` of
/// replication `rep`.
#[derive(Debug, Clone)]
pub struct ClientSteps {
    state: ClientWorkload,
    rng: LazyStream,
}

impl ClientSteps {
    /// Client `client` of replication `rep` of a run seeded with `seed`.
    pub fn new(client: u32, seed: u64, rep: u32) -> Self {
        let rng = LazyStream { stream: Stream::Workload(client), seed, rep, rng: None };
        ClientSteps { state: ClientWorkload::default(), rng }
    }

    /// A uniform start offset in [0, `spread_s`] seconds (no draw when the spread is 0).
    pub fn start_offset(&mut self, spread_s: f64) -> f64 {
        coap_time::rng::uniform(&mut self.rng, 0.0, spread_s)
    }

    /// The client's first step.
    pub fn start(&mut self, spec: &WorkloadSpec) -> Next {
        self.state.start(spec, &mut self.rng)
    }

    /// An exchange ended: the client's next step.
    pub fn ended(&mut self, spec: &WorkloadSpec) -> Next {
        self.state.ended(spec, &mut self.rng)
    }

    /// Exchanges ended so far.
    pub fn done(&self) -> u32 {
        self.state.done()
    }
}

/// What drives the clients of a run: who starts when, and what each does after an exchange.
pub trait Workload {
    /// Hosts that run the workload (the run ends when every one is done).
    fn hosts(&self) -> u32;
    /// Each such host and its start time, in the order the driver schedules the starts. Called
    /// once, before the run.
    fn starts(&mut self) -> Vec<(HostId, Instant)>;
    /// `host` starts at `now`: its first step.
    fn start(&mut self, host: HostId, now: Instant) -> Next;
    /// One of `host`'s exchanges ended (a response or a failure) at `now`: its next step.
    fn ended(&mut self, host: HostId, now: Instant) -> Next;
    /// An open-loop host's next exchange after the one it just started at `now` (its arrivals
    /// do not wait for exchanges to end: they queue in the endpoint); None when it has no more,
    /// and for every host of a closed-loop workload (the default).
    fn next_arrival(&mut self, _host: HostId, _now: Instant) -> Option<Instant> {
        None
    }
    /// How many exchanges `host` keeps open at once: the driver asks [`Workload::start`] this
    /// many times when it starts. 1 by default.
    fn parallel(&self, _host: HostId) -> u32 {
        1
    }
    /// `host` is done at `now`: a host to start then and when (a workload whose hosts run one
    /// after the other; [`Workload::starts`] gave only the first). None by default.
    fn after_done(&mut self, _host: HostId, _now: Instant) -> Option<(HostId, Instant)> {
        None
    }
}

/// The reference workload of `clients` hosts `0..clients`, continuous or random. Client `i`
/// draws its start offset, then its batch sizes, from its own [`Stream::Workload`]`(i)`: what
/// one client draws does not depend on when the others draw, and the real load generator,
/// stepping the same [`ClientSteps`], gets the same batches.
#[derive(Debug)]
pub struct Batches {
    spec: WorkloadSpec,
    clients: Vec<ClientSteps>,
}

impl Batches {
    /// Hosts `0..clients` of replication `rep` of a run seeded with `seed`.
    pub fn new(spec: WorkloadSpec, clients: u32, seed: u64, rep: u32) -> Self {
        let clients = (0..clients).map(|c| ClientSteps::new(c, seed, rep)).collect();
        Batches { spec, clients }
    }
}

impl Workload for Batches {
    fn hosts(&self) -> u32 {
        self.clients.len() as u32
    }

    fn starts(&mut self) -> Vec<(HostId, Instant)> {
        let spread = self.spec.start_spread_s;
        (self.clients.iter_mut().enumerate())
            .map(|(c, w)| {
                let offset = w.start_offset(spread);
                (HostId(c as u32), Instant::ZERO + Duration::from_secs_f64(offset))
            })
            .collect()
    }

    fn start(&mut self, host: HostId, _: Instant) -> Next {
        self.clients[host.index()].start(&self.spec)
    }

    fn ended(&mut self, host: HostId, _: Instant) -> Next {
        self.clients[host.index()].ended(&self.spec)
    }
}

/// Periodic blocking clients (Contiki's `er-example-client` loop): request k is sent at
/// max(the end of request k − 1, t0 + k·interval) — periodic while the network keeps up, back to
/// back while it catches up, never more than one outstanding — until `until`. Each client's
/// start t0 is uniform in [0, `start_spread_s`] from its own [`Stream::Workload`].
#[derive(Debug, Clone)]
pub struct Periodic {
    clients: Vec<HostId>,
    /// Host index → position in `clients` (u32::MAX: not a client).
    slot: Vec<u32>,
    interval_ns: Vec<u64>,
    t0: Vec<u64>,
    k: Vec<u64>,
    /// A client's fixed start (instead of a drawn offset), ns.
    fixed_start: Vec<Option<u64>>,
    /// A client's most exchanges.
    limit: Vec<u64>,
    /// Request k goes at t0 + (k + 1)·interval: the client arms its timer before its first.
    first_after_interval: bool,
    /// One client after the other, in `clients` order, each starting this long after the
    /// previous one is done (ns); None: all start at their own offsets.
    chain_gap_ns: Option<u64>,
    /// Exchanges a back-to-back client keeps open at once (1: one after the other).
    parallel: u32,
    /// Open-loop arrivals instead: the interval in each step of `step_ns`, and each client's
    /// latest arrival.
    open_loop: Option<RateSteps>,
    last_arrival: Vec<u64>,
    /// Per client with `parallel` > 1: exchanges started, exchanges open, done said.
    started: Vec<u64>,
    open: Vec<u32>,
    done: Vec<bool>,
    until_ns: u64,
    start_spread_s: f64,
    seed: u64,
    rep: u32,
}

impl Periodic {
    /// `clients` with their intervals (ns), all stopping at `until_ns`.
    pub fn new(clients: &[(HostId, u64)], until_ns: u64, start_spread_s: f64, seed: u64, rep: u32) -> Self {
        let hosts = clients.iter().map(|c| c.0.index() + 1).max().unwrap_or(0);
        let mut slot = vec![u32::MAX; hosts];
        for (i, c) in clients.iter().enumerate() {
            slot[c.0.index()] = i as u32;
        }
        Periodic {
            clients: clients.iter().map(|c| c.0).collect(),
            slot,
            interval_ns: clients.iter().map(|c| c.1).collect(),
            t0: vec![0; clients.len()],
            k: vec![0; clients.len()],
            fixed_start: vec![None; clients.len()],
            limit: vec![u64::MAX; clients.len()],
            first_after_interval: false,
            chain_gap_ns: None,
            parallel: 1,
            open_loop: None,
            last_arrival: vec![0; clients.len()],
            started: vec![0; clients.len()],
            open: vec![0; clients.len()],
            done: vec![false; clients.len()],
            until_ns,
            start_spread_s,
            seed,
            rep,
        }
    }

    /// Client `host` starts at `start_ns` (no drawn offset) and stops after `limit` exchanges
    /// (CLOUD's burst group: 50 back to back from 450 s).
    pub fn with_schedule(mut self, host: HostId, start_ns: u64, limit: u64) -> Self {
        if let Some(i) = self.client_slot(host) {
            self.limit[i] = limit;
        }
        self.with_start(host, start_ns)
    }

    /// Client `host` starts at `start_ns` instead of a drawn offset (a mote whose boot the
    /// network model draws).
    pub fn with_start(mut self, host: HostId, start_ns: u64) -> Self {
        if let Some(i) = self.client_slot(host) {
            self.fixed_start[i] = Some(start_ns);
        }
        self
    }

    /// `host`'s position among the clients, if it is one.
    fn client_slot(&self, host: HostId) -> Option<usize> {
        self.slot.get(host.index()).filter(|&&i| i != u32::MAX).map(|&i| i as usize)
    }

    /// Each client's first request goes one interval after its start, as Contiki's example
    /// client arms its timer first: request k at t0 + (k + 1)·interval.
    pub fn first_after_interval(mut self) -> Self {
        self.first_after_interval = true;
        self
    }

    /// The clients run one after the other, in the order given, each with at most `limit`
    /// exchanges back to back; the first starts at 0, each next one `gap_ns` after the previous
    /// one is done (CLOUD's baseline: each server in turn).
    pub fn chained(mut self, gap_ns: u64, limit: u64) -> Self {
        self.chain_gap_ns = Some(gap_ns);
        self.limit.iter_mut().for_each(|l| *l = limit);
        self
    }

    /// Back-to-back clients (interval 0) keep up to `parallel` exchanges open: a new one starts
    /// whenever fewer are open, until their limit or the end (CLOUD's clients with NSTART 4).
    /// Clients with an interval are not affected.
    pub fn with_parallel(mut self, parallel: u32) -> Self {
        self.parallel = parallel.max(1);
        self
    }

    /// Open-loop clients (RTTCOAP's sources): each generates an exchange every interval,
    /// whether the ones before have ended or not (they wait in its endpoint, a FIFO); the
    /// interval is `intervals_ns[k]` during step k (each `step_ns` long), and the arrivals stop
    /// after the last step. A client's first arrival is uniform in [0, `intervals_ns[0]`) (a
    /// random phase, from its own stream); the clients' own intervals are not used.
    pub fn open_loop(mut self, steps: RateSteps) -> Self {
        self.start_spread_s = steps.first() as f64 / 1e9;
        self.open_loop = Some(steps);
        self
    }

    fn is_parallel(&self, i: usize) -> bool {
        self.parallel > 1 && self.interval_ns[i] == 0
    }

    /// A parallel client's next step; `ending`: one of its exchanges ended.
    fn step_parallel(&mut self, i: usize, now: Instant, ending: bool) -> Next {
        if ending {
            self.open[i] -= 1;
        }
        if self.done[i] {
            return Next::Idle;
        }
        let at = self.t0[i].max(now.as_nanos());
        if self.started[i] < self.limit[i] && at < self.until_ns && self.open[i] < self.parallel {
            self.started[i] += 1;
            self.open[i] += 1;
            Next::Exchange { fresh: false }
        } else if self.open[i] == 0 {
            self.done[i] = true;
            Next::Done
        } else {
            Next::Idle
        }
    }

    fn step(&mut self, host: HostId, now: Instant) -> Next {
        let i = self.slot[host.index()] as usize;
        if self.k[i] >= self.limit[i] {
            return Next::Done;
        }
        let due = self.t0[i] + (self.k[i] + u64::from(self.first_after_interval)) * self.interval_ns[i];
        let at = due.max(now.as_nanos());
        if at >= self.until_ns {
            Next::Done
        } else if at == now.as_nanos() {
            Next::Exchange { fresh: false }
        } else {
            Next::At(Instant::from_nanos(at))
        }
    }
}

impl Workload for Periodic {
    fn hosts(&self) -> u32 {
        self.clients.len() as u32
    }

    fn starts(&mut self) -> Vec<(HostId, Instant)> {
        if self.chain_gap_ns.is_some() {
            return self.clients.first().map(|&h| (h, Instant::ZERO)).into_iter().collect();
        }
        let mut v = Vec::with_capacity(self.clients.len());
        for (i, &h) in self.clients.iter().enumerate() {
            self.t0[i] = match self.fixed_start[i] {
                Some(t) => t,
                None => {
                    let mut rng = Stream::Workload(h.0).rng(self.seed, self.rep);
                    let offset = coap_time::rng::uniform(&mut rng, 0.0, self.start_spread_s);
                    Duration::from_secs_f64(offset).as_nanos()
                }
            };
            v.push((h, Instant::from_nanos(self.t0[i])));
        }
        v
    }

    fn parallel(&self, host: HostId) -> u32 {
        let i = self.slot[host.index()] as usize;
        if self.is_parallel(i) {
            self.parallel
        } else {
            1
        }
    }

    fn next_arrival(&mut self, host: HostId, _now: Instant) -> Option<Instant> {
        let steps = self.open_loop.as_ref()?;
        let i = self.slot[host.index()] as usize;
        let next = steps.next(self.last_arrival[i], self.until_ns)?;
        self.last_arrival[i] = next;
        Some(Instant::from_nanos(next))
    }

    fn start(&mut self, host: HostId, now: Instant) -> Next {
        let i = self.slot[host.index()] as usize;
        if self.open_loop.is_some() {
            self.last_arrival[i] = now.as_nanos();
            return if now.as_nanos() < self.until_ns { Next::Exchange { fresh: false } } else { Next::Done };
        }
        if self.is_parallel(i) {
            return self.step_parallel(i, now, false);
        }
        self.step(host, now)
    }

    fn ended(&mut self, host: HostId, now: Instant) -> Next {
        let i = self.slot[host.index()] as usize;
        if self.open_loop.is_some() {
            return Next::Idle; // arrivals come on their own
        }
        if self.is_parallel(i) {
            return self.step_parallel(i, now, true);
        }
        self.k[i] += 1;
        self.step(host, now)
    }

    fn after_done(&mut self, host: HostId, now: Instant) -> Option<(HostId, Instant)> {
        let gap = self.chain_gap_ns?;
        let i = self.slot[host.index()] as usize + 1;
        let &next = self.clients.get(i)?;
        self.t0[i] = now.as_nanos() + gap;
        Some((next, Instant::from_nanos(self.t0[i])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn batches_are_uniform_over_min_to_max_and_cut_to_what_is_left() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        // testbed: batches of uniformly 1..10 exchanges, each size with probability 1/10
        let mut seen = [0u32; 11];
        for _ in 0..20_000 {
            seen[draw_batch(&mut rng, 1, 10, 50) as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        for (size, &n) in seen.iter().enumerate().skip(1) {
            assert!((1800..2200).contains(&n), "size {size} drawn {n} times in 20000, expected ~2000");
        }
        // the last batch is shorter: it never runs past the client's 50th exchange
        for _ in 0..100 {
            assert!(draw_batch(&mut rng, 1, 10, 3) <= 3);
            assert_eq!(draw_batch(&mut rng, 4, 4, 50), 4);
        }
    }

    fn spec(kind: WorkloadKind, exchanges: u32, batch: u32) -> WorkloadSpec {
        WorkloadSpec { kind, exchanges, batch_min: batch, batch_max: batch, start_spread_s: 0.0 }
    }

    #[test]
    fn continuous_runs_every_exchange_without_a_fresh_start() {
        let s = spec(WorkloadKind::Continuous, 3, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut w = ClientWorkload::default();
        assert_eq!(w.start(&s, &mut rng), Next::Exchange { fresh: false });
        assert_eq!(w.ended(&s, &mut rng), Next::Exchange { fresh: false });
        assert_eq!(w.ended(&s, &mut rng), Next::Exchange { fresh: false });
        assert_eq!(w.ended(&s, &mut rng), Next::Done);
        assert_eq!(w.done(), 3);
    }

    #[test]
    fn random_batches_start_afresh_after_each_batch() {
        // 7 exchanges in batches of 3: 3 + 3 + 1, fresh at the 4th and the 7th
        let s = spec(WorkloadKind::Random, 7, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut w = ClientWorkload::default();
        let mut steps = vec![w.start(&s, &mut rng)];
        for _ in 0..7 {
            steps.push(w.ended(&s, &mut rng));
        }
        let fresh: Vec<usize> =
            steps.iter().enumerate().filter(|(_, n)| **n == Next::Exchange { fresh: true }).map(|(i, _)| i).collect();
        assert_eq!(fresh, [3, 6]);
        assert_eq!(steps[7], Next::Done);
    }

    fn random(exchanges: u32) -> WorkloadSpec {
        WorkloadSpec { kind: WorkloadKind::Random, exchanges, batch_min: 1, batch_max: 10, start_spread_s: 0.0 }
    }

    /// Each client's steps under `Batches`, the clients stepped in the given order until done.
    fn steps_in_order(order: &[u32], seed: u64) -> Vec<Vec<Next>> {
        let mut b = Batches::new(random(20), 3, seed, 0);
        let mut steps: Vec<Vec<Next>> = (0..3).map(|c| vec![b.start(HostId(c), Instant::ZERO)]).collect();
        for _ in 0..20 {
            for &c in order {
                steps[c as usize].push(b.ended(HostId(c), Instant::ZERO));
            }
        }
        steps
    }

    #[test]
    fn a_client_draws_the_same_batches_whatever_the_others_do_and_as_the_load_generator_does() {
        let a = steps_in_order(&[0, 1, 2], 5);
        let b = steps_in_order(&[2, 0, 1], 5);
        assert_eq!(a, b, "one client's batches do not depend on the order the clients draw");
        // the load generator steps client 1 alone, with its own stream of replication 0
        let mut w = ClientSteps::new(1, 5, 0);
        let mut alone = vec![w.start(&random(20))];
        for _ in 0..20 {
            alone.push(w.ended(&random(20)));
        }
        assert_eq!(a[1], alone);
        assert_ne!(a[0], a[1], "clients draw different batches");
    }

    #[test]
    fn periodic_clients_wait_for_their_timer_or_catch_up() {
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        // one client, 100 ms interval, stops at 1 s, starts at 0
        let mut w = Periodic::new(&[(HostId(4), 100_000_000)], 1_000_000_000, 0.0, 1, 0);
        assert_eq!(w.starts(), vec![(HostId(4), ms(0))]);
        assert_eq!(w.start(HostId(4), ms(0)), Next::Exchange { fresh: false });
        // request 0 ended at 30 ms: request 1 at 100 ms
        assert_eq!(w.ended(HostId(4), ms(30)), Next::At(ms(100)));
        // request 1 ended at 350 ms (late): request 2 (due 200 ms) goes at once
        assert_eq!(w.ended(HostId(4), ms(350)), Next::Exchange { fresh: false });
        // request 2 ended at 360 ms: request 3 was due at 300 ms: at once; then back on the grid
        assert_eq!(w.ended(HostId(4), ms(360)), Next::Exchange { fresh: false });
        assert_eq!(w.ended(HostId(4), ms(370)), Next::At(ms(400)));
        // request 4 ended at 999 ms: request 5 (due 500 ms) still starts before the end
        assert_eq!(w.ended(HostId(4), ms(999)), Next::Exchange { fresh: false });
        // request 5 ended at 1 s: nothing starts at or after the end
        assert_eq!(w.ended(HostId(4), ms(1000)), Next::Done);
    }

    #[test]
    fn a_client_that_arms_its_timer_first_sends_one_interval_after_its_given_start() {
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        // starts at 30 ms (given, not drawn from the 1-s spread), 100-ms timer armed first
        let mut w = Periodic::new(&[(HostId(2), 100_000_000)], 1_000_000_000, 1.0, 1, 0)
            .with_start(HostId(2), 30_000_000)
            .first_after_interval();
        assert_eq!(w.starts(), vec![(HostId(2), ms(30))]);
        assert_eq!(w.start(HostId(2), ms(30)), Next::At(ms(130)));
        assert_eq!(w.start(HostId(2), ms(130)), Next::Exchange { fresh: false });
        // request 0 ended at 150 ms: request 1 at 230 ms
        assert_eq!(w.ended(HostId(2), ms(150)), Next::At(ms(230)));
        // a host that is not a client is left alone
        let w = Periodic::new(&[(HostId(2), 100_000_000)], 1_000_000_000, 0.0, 1, 0).with_start(HostId(7), 5);
        assert_eq!(w.fixed_start, vec![None]);
    }

    #[test]
    fn a_lazy_stream_draws_what_the_stream_made_at_once_draws() {
        let mut lazy = LazyStream { stream: Stream::Workload(3), seed: 9, rep: 2, rng: None };
        let mut eager = Stream::Workload(3).rng(9, 2);
        assert!(lazy.rng.is_none(), "nothing made before the first draw");
        let (mut a, mut b) = ([0u8; 5], [0u8; 5]);
        lazy.fill_bytes(&mut a);
        eager.fill_bytes(&mut b);
        assert_eq!(a, b);
        assert_eq!((lazy.next_u32(), lazy.next_u64()), (eager.next_u32(), eager.next_u64()));
    }

    #[test]
    fn chained_clients_start_one_after_the_other() {
        let s = |t: u64| Instant::from_nanos(t * 1_000_000_000);
        let clients = [(HostId(4), 0), (HostId(7), 0), (HostId(9), 0)];
        let mut w = Periodic::new(&clients, 100_000_000_000, 1.0, 1, 0).chained(5_000_000_000, 2);
        assert_eq!(w.starts(), vec![(HostId(4), s(0))], "only the first starts by itself");
        assert_eq!(w.start(HostId(4), s(0)), Next::Exchange { fresh: false });
        assert_eq!(w.ended(HostId(4), s(1)), Next::Exchange { fresh: false });
        assert_eq!(w.ended(HostId(4), s(3)), Next::Done, "2 exchanges");
        assert_eq!(w.after_done(HostId(4), s(3)), Some((HostId(7), s(8))), "5 s later, the next");
        assert_eq!(w.start(HostId(7), s(8)), Next::Exchange { fresh: false });
        assert_eq!(w.ended(HostId(7), s(9)), Next::Exchange { fresh: false });
        assert_eq!(w.ended(HostId(7), s(10)), Next::Done);
        assert_eq!(w.after_done(HostId(7), s(10)), Some((HostId(9), s(15))));
        assert_eq!(w.after_done(HostId(9), s(20)), None, "the last");
        // a client whose turn comes after the end never runs
        let mut w = Periodic::new(&clients, 12_000_000_000, 1.0, 1, 0).chained(5_000_000_000, 2);
        w.starts();
        assert_eq!(w.after_done(HostId(4), s(9)), Some((HostId(7), s(14))));
        assert_eq!(w.start(HostId(7), s(14)), Next::Done);
    }

    #[test]
    fn a_parallel_client_keeps_that_many_exchanges_open() {
        let s = |t: u64| Instant::from_nanos(t * 1_000_000_000);
        let (a, b) = (HostId(0), HostId(1));
        // a: back to back, 5 exchanges, 2 open at once; b: periodic (1 s), not affected
        let mut w = Periodic::new(&[(a, 0), (b, 1_000_000_000)], 100_000_000_000, 0.0, 1, 0)
            .with_schedule(a, 0, 5)
            .with_parallel(2);
        w.starts();
        assert_eq!((w.parallel(a), w.parallel(b)), (2, 1));
        let ex = Next::Exchange { fresh: false };
        assert_eq!([w.start(a, s(0)), w.start(a, s(0))], [ex, ex], "2 open");
        assert_eq!(w.ended(a, s(1)), ex, "the 3rd");
        assert_eq!(w.ended(a, s(1)), ex, "the 4th");
        assert_eq!(w.ended(a, s(2)), ex, "the 5th");
        assert_eq!(w.ended(a, s(3)), Next::Idle, "5 started, one still open");
        assert_eq!(w.ended(a, s(4)), Next::Done, "the last one ended");
        assert_eq!(w.start(b, s(0)), ex);
        assert_eq!(w.ended(b, s(0)), Next::At(s(1)), "periodic as before");
    }

    #[test]
    fn open_loop_arrivals_follow_the_rate_steps() {
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        let a = HostId(3);
        // 100 ms apart for the first second, then 400 ms, then nothing after 2 s
        let mut w = Periodic::new(&[(a, 0)], 10_000_000_000, 0.0, 7, 0)
            .open_loop(RateSteps { intervals_ns: vec![100_000_000, 400_000_000], step_ns: 1_000_000_000 });
        let (_, t0) = w.starts()[0];
        assert!(t0 < ms(100), "a random phase within the first interval");
        assert_eq!(w.start(a, t0), Next::Exchange { fresh: false });
        // each arrival's interval is the one of the step the arrival before it fell in: with the
        // phase t0 < 100 ms, t0 + 100·k for k = 1..10 (t0 + 900 is still in the first second),
        // then t0 + 1400 and t0 + 1800; t0 + 2200 is past the steps
        let t0 = t0.as_nanos();
        let mut expect: Vec<u64> = (1..=10).map(|k| t0 + k * 100_000_000).collect();
        expect.extend([t0 + 1_400_000_000, t0 + 1_800_000_000]);
        let mut at = vec![];
        while let Some(t) = w.next_arrival(a, ms(0)) {
            at.push(t.as_nanos());
        }
        assert_eq!(at, expect);
        assert_eq!(w.ended(a, ms(5)), Next::Idle, "an ended exchange starts nothing");
    }
}
