//! `coapcc`: the command-line face of the toolkit.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod algorithms;

/// coapcc — congestion control for CoAP: every retransmission-timeout algorithm of the
/// literature, one implementation, on a simulated reference bottleneck and on real networks.
#[derive(Debug, Parser)]
#[command(name = "coapcc", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every congestion-control algorithm with its source and its parameters' defaults.
    ///
    /// Names and parameters are what `--cc NAME[:key=value,...]` takes, e.g.
    /// `fasor:max_retransmit=20` or `cocoa:aging=false`.
    Algorithms(algorithms::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Algorithms(args) => algorithms::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("coapcc: error: {e}");
            ExitCode::FAILURE
        }
    }
}
