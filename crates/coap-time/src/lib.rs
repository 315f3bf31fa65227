//! The sans-IO primitives everything above shares: time as integer nanoseconds ([`Instant`],
//! [`Duration`]: nothing here reads a clock, the caller passes `now` in) and draws from the
//! caller's generator ([`rng`]: a fixed mapping from its outputs, so a seed gives the same values
//! whatever `rand` a driver links). `no_std`. The controllers (`coap-cc`), the network models
//! (`netmodel`) and the drivers use them, so the models need not depend on the controllers.
#![cfg_attr(not(test), no_std)]

pub mod rng;
mod time;

pub use time::{Duration, Instant};
