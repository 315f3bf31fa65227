//! The `coapcc` command line's commands: argument parsing and presentation over the experiment
//! library ([`lab`]), the simulator and the real stack. src/main.rs dispatches to them.

pub use lab::{Incomplete, Usage};

/// A command that ends with another program's exit status (`emulate --clients-exec`'s): the
/// status is ours, as `--help` says, and the message tells what ended.
#[derive(Debug)]
pub struct ExitWith {
    /// The exit status (a signal's death as the shells give it: 128 + the signal).
    pub code: u8,
    /// What ended, and how.
    pub message: String,
}

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitWith {}

/// A [`Usage`] error, boxed.
pub(crate) fn usage(message: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    lab::usage(message)
}

pub mod algorithms;
mod args;
pub mod cli;
mod dump;
#[cfg(target_os = "linux")]
pub mod emulate;
pub mod experiments;
pub mod league;
pub mod net;
pub mod report;
pub mod sim;
pub mod stdout;
