//! The `coapcc` command line's commands: argument parsing and presentation over the experiment
//! library ([`lab`]), the simulator and the real stack. src/main.rs dispatches to them.

pub use lab::{Incomplete, Usage};

/// A [`Usage`] error, boxed.
pub(crate) fn usage(message: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    lab::usage(message)
}

pub mod algorithms;
mod args;
mod dump;
#[cfg(target_os = "linux")]
pub mod emulate;
pub mod experiments;
pub mod net;
pub mod report;
pub mod sim;
mod sim_lln;
pub mod stdout;
