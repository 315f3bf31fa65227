//! What clients do and when: the reference testbed's workloads as [`Workload`] generators.
//!
//! * Continuous: a client runs its `exchanges` one after the other, the next as soon as the
//!   previous one ended (a response, or a failure).
//! * Random: the exchanges come in batches of uniformly `batch_min..=batch_max` (the last one
//!   cut to what is left); each batch after the first starts afresh, as a new short-lived device
//!   would (every congestion-control state reset; over TCP, a new connection).
//!
//! [`ClientWorkload`] is one client's state; the simulator and the real load generator
//! (`coapcc load`) both step it with the client's own [`Stream::Workload`](crate::Stream) generator, so a seed
//! gives both the same batches.

use coap_cc::{Duration, Instant};
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
    /// The client has run all its exchanges.
    Done,
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
    let size = (coap_cc::rng::uniform(rng, min as f64, max as f64 + 1.0) as u32).min(max);
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

/// What drives the clients of a run: who starts when, and what each does after an exchange.
pub trait Workload {
    /// Hosts that run the workload (the run ends when every one is done).
    fn hosts(&self) -> u32;
    /// Each such host and its start time, in the order the driver schedules the starts. Called
    /// once, before the run.
    fn starts(&mut self) -> Vec<(HostId, Instant)>;
    /// `host` starts: its first step.
    fn start(&mut self, host: HostId) -> Next;
    /// One of `host`'s exchanges ended (a response or a failure): its next step.
    fn ended(&mut self, host: HostId) -> Next;
}

/// The reference workload of `clients` hosts `0..clients`, continuous or random.
#[derive(Debug)]
pub struct Batches {
    spec: WorkloadSpec,
    clients: Vec<ClientWorkload>,
    rng: ChaCha8Rng,
}

impl Batches {
    /// Hosts `0..clients` of replication `rep`.
    pub fn new(spec: WorkloadSpec, clients: u32, seed: u64, rep: u32) -> Self {
        Batches {
            spec,
            clients: vec![ClientWorkload::default(); clients as usize],
            rng: Stream::SharedWorkload.rng(seed, rep),
        }
    }
}

impl Workload for Batches {
    fn hosts(&self) -> u32 {
        self.clients.len() as u32
    }

    fn starts(&mut self) -> Vec<(HostId, Instant)> {
        let spread = self.spec.start_spread_s;
        (0..self.clients.len() as u32)
            .map(|c| {
                let offset = coap_cc::rng::uniform(&mut self.rng, 0.0, spread);
                (HostId(c), Instant::ZERO + Duration::from_secs_f64(offset))
            })
            .collect()
    }

    fn start(&mut self, host: HostId) -> Next {
        self.clients[host.index()].start(&self.spec, &mut self.rng)
    }

    fn ended(&mut self, host: HostId) -> Next {
        self.clients[host.index()].ended(&self.spec, &mut self.rng)
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
}
