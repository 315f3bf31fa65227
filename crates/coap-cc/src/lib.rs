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
//! * [`algorithms`](mod@algorithms): one module per algorithm, each citing its source.
//! * [`estimator`]: the RFC 6298 estimator; [`marking`]: accurate RTT by numbering transmissions.
//! * [`factory`]: [`ControllerFactory`], what an algorithm provides to be configured and built;
//!   [`params`]: its named, typed parameters.
//! * [`registry`]: names, sources, parameters, factories; [`register`] adds an algorithm of your
//!   own (`std`).
//! * [`testing`] (`std`): a stand-in controller that records its calls, for tests of drivers.
#![cfg_attr(not(any(test, feature = "std")), no_std)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod algorithms;
pub mod controller;
pub mod estimator;
#[cfg(feature = "alloc")]
pub mod factory;
pub mod marking;
pub mod params;
#[cfg(feature = "alloc")]
pub mod registry;
#[cfg(feature = "std")]
pub mod testing;

#[cfg(test)]
mod testutil;

pub use coap_time::{rng, Duration, Instant};
pub use controller::{
    Completion, Controller, Echo, ExchangeTimer, Marking, Metrics, Sample, Start, TimerState, TIMER_STATE_WORDS,
};
#[cfg(feature = "alloc")]
pub use factory::{ControllerFactory, Violation};
/// The RNG trait the controllers draw from (re-exported so an algorithm crate needs no
/// `rand_core` of its own).
pub use rand_core::{self, RngCore};
#[cfg(feature = "std")]
pub use registry::register;
#[cfg(feature = "alloc")]
pub use registry::{algorithms, split_spec, Algorithm, CcConfig, RegisterError, SpecError, ALGORITHMS};

/// The time primitives ([`coap_time`]), where the algorithms name them.
pub mod time {
    pub use coap_time::{Duration, Instant};
}

/// The largest MAX_RETRANSMIT any algorithm accepts: the messaging layer keeps the send time of
/// every transmission of an exchange in a fixed array of `MAX_RETRANSMIT_LIMIT + 1` entries.
pub const MAX_RETRANSMIT_LIMIT: u32 = 30;
