//! `coapcc`: the command-line face of the toolkit ([`coapcc::cli`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(coapcc::cli::status(std::env::args_os()))
}
