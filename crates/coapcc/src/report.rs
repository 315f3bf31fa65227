//! `coapcc report`: the HTML report of a results directory ([`lab::report`]).

use std::path::PathBuf;

/// Arguments of `coapcc report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A results directory written by `coapcc sweep` or `coapcc reproduce`.
    dir: PathBuf,
    /// Where to write index.html (default: DIR/report).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `coapcc report`.
pub fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("report"));
    let n = lab::report::write(&args.dir, &out).map_err(|e| e.to_string())?;
    eprintln!("coapcc report: {n} cells; {}", out.join("index.html").display());
    Ok(())
}
