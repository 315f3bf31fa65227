//! Retransmission-timeout and congestion-control algorithms for CoAP, every one of
//! of the literature, behind one trait (`coapcc algorithms` lists them with their sources).
//!
//! # Contract
//! No I/O, never reads a clock, never draws from a global RNG: time ([`Instant`]) and randomness
//! (`&mut dyn RngCore`) are passed in; decisions are returned. `no_std`; the `alloc` feature
//! (default) adds the [`registry`] that turns `name:key=value,...` into a boxed [`Controller`].
//! The same seed and the same calls give the same RTOs, bit for bit, on every platform.
//!
//! # Layout
//! * [`controller`]: the [`Controller`] trait and the values that cross it.
//! * [`algorithms`]: one module per algorithm, each citing its source.
//! * [`estimator`]: the RFC 6298 estimator; [`marking`]: accurate RTT by numbering transmissions.
//! * [`registry`]: names, sources, parameters, factories.
#![cfg_attr(not(any(test, feature = "std")), no_std)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod algorithms;
pub mod controller;
pub mod estimator;
pub mod marking;
pub mod params;
#[cfg(feature = "alloc")]
pub mod registry;

#[cfg(test)]
mod testutil;

pub use coap_time::{rng, Duration, Instant};
pub use controller::{Completion, Controller, Echo, ExchangeTimer, Marking, Metrics, Sample, Start};
#[cfg(feature = "alloc")]
pub use registry::{split_spec, CcConfig, SpecError, ALGORITHMS};

/// The time primitives ([`coap_time`]), where the algorithms name them.
pub mod time {
    pub use coap_time::{Duration, Instant};
}

/// The largest MAX_RETRANSMIT any algorithm accepts: the messaging layer keeps the send time of
/// every transmission of an exchange in a fixed array of `MAX_RETRANSMIT_LIMIT + 1` entries.
pub const MAX_RETRANSMIT_LIMIT: u32 = 30;
