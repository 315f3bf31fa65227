//! The command line itself: its arguments and their dispatch to the commands, and the exit
//! status of what they return. `src/main.rs` runs it; so does the Python package's `coapcc`
//! command (the same binary's behaviour, in the package's extension).

use crate::{algorithms, experiments, league, net, report, sim, Incomplete, Usage};
use clap::{Parser, Subcommand};

/// coapcc — congestion control for CoAP: every retransmission-timeout algorithm of the
/// literature, one implementation, on a simulated reference bottleneck and on real networks.
#[derive(Debug, Parser)]
#[command(
    name = "coapcc",
    version,
    about = "coapcc: congestion control for CoAP: every RTO/congestion-control algorithm of the literature, \
             simulated on the reference bottleneck and run on real networks with the same code",
    after_help = "Start with:  coapcc sim --clients 100 --buffer infinite --cc default --cc fasor\n\
                  Then:        coapcc algorithms;  coapcc reproduce thesis --out results/thesis\n\n\
                  Exit status: 0 done; 1 error; 2 bad usage; 3 finished incomplete (a replication cut at \
                  max_time_s, every exchange failed, or interrupted: the report says what finished)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate the reference testbed (N clients behind the constrained bottleneck) or a
    /// low-power mesh (`--preset nitk-…`), in virtual time, with the real endpoint and
    /// congestion-control code.
    ///
    /// Defaults are the `thesis` preset of the reference testbed (50 continuous clients × 50
    /// exchanges, 30/60 kbit/s with 400/200 ms, 2500-byte buffers, MAX_RETRANSMIT 20). Example:
    /// `coapcc sim --clients 100 --buffer infinite --cc default --cc fasor`.
    Sim(sim::Args),
    /// List every named scenario preset (the wired `thesis` bottleneck and the mesh
    /// literature's: `nitk-…`) with a one-line description; run one with `coapcc sim --preset NAME`.
    Presets(PresetsArgs),
    /// List every congestion-control algorithm with its source and its parameters' defaults.
    ///
    /// Names and parameters are what `--cc NAME[:key=value,...]` takes, e.g.
    /// `fasor:max_retransmit=20` or `cocoa:aging=false`.
    Algorithms(algorithms::Args),
    /// Run a plan: the cartesian product of scenario parameters × replications, on all cores,
    /// resumable and shardable; one JSON per cell and a tidy per-client CSV.
    Sweep(experiments::SweepArgs),
    /// Combine the results directories of `sweep --shard` runs.
    Merge(experiments::MergeArgs),
    /// Run a publication's experiments and write their report: `thesis` (the reference matrix), `nitk`, `cloud`, `rttcoap` (the mesh).
    Reproduce(experiments::ReproduceArgs),
    /// Every algorithm on every network of a fixed suite (bottleneck and mesh), ranked by regret:
    /// how far each falls behind the best of each cell. A sweep: resumable, `--cc` adds entrants.
    League(league::Args),
    /// Write an HTML report (plots and tables, self-contained, opens offline) of a results directory.
    Report(report::Args),
    /// Serve /test (60-byte payload), /time, /echo and /.well-known/core over CoAP/UDP (or TCP with --tcp).
    Server(net::ServerArgs),
    /// Send one request and print the response's payload on stdout.
    Client(net::ClientArgs),
    /// Run N concurrent clients with the reference workload against a real server.
    Load(net::LoadArgs),
    /// A userspace link emulator: relay UDP through the reference bottleneck (or a mesh) in real time.
    Relay(net::RelayArgs),
    /// IP-level emulation: real stacks (the kernel's TCP, any CoAP implementation) through the
    /// reference bottleneck or a mesh in real time, between two network namespaces (root).
    #[cfg(target_os = "linux")]
    Emulate(crate::emulate::Args),
}

/// Arguments of `coapcc presets`.
#[derive(Debug, clap::Args)]
struct PresetsArgs {
    /// One JSON array instead: `name`, `network` (`bottleneck` or `mesh`) and `description` of each.
    #[arg(long)]
    json: bool,
}

/// `coapcc presets`: the wired bottleneck's first, then the meshes', by name.
fn presets(args: &PresetsArgs) -> Result<(), Box<dyn std::error::Error>> {
    use netsim::mesh::presets::{describe, listed, same_network};
    let described = |name: &str, text: &str| {
        let same = same_network(name);
        if same.is_empty() {
            describe(text)
        } else {
            format!("{} (the network of {})", describe(text), same.join(", "))
        }
    };
    let list = listed();
    if args.json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|(name, text)| {
                let network = netsim::worlds::of_text(text).map_or("bottleneck", |w| w.kind());
                serde_json::json!({ "name": name, "network": network, "description": described(name, text) })
            })
            .collect();
        return crate::stdout::json(&serde_json::Value::Array(v));
    }
    let width = list.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0);
    let text: String = list.iter().map(|(name, text)| format!("{name:<width$}  {}\n", described(name, text))).collect();
    crate::stdout::write(&text).map_err(Into::into)
}

/// Parses `args` (the program's name first) and runs the command; the exit status (0 done, 1 an
/// error, 2 bad usage, 3 incomplete, or a clients' command's own). Clap prints `--help`,
/// `--version` and usage errors itself and exits the process.
pub fn status<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Algorithms(args) => algorithms::run(&args),
        Command::Presets(args) => presets(&args),
        Command::Sim(args) => sim::run(&args),
        Command::Sweep(args) => experiments::sweep(&args),
        Command::Merge(args) => experiments::merge(&args),
        Command::Reproduce(args) => experiments::reproduce(&args),
        Command::League(args) => league::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Server(args) => net::server(&args),
        Command::Client(args) => net::client(&args),
        Command::Load(args) => net::load(&args),
        Command::Relay(args) => net::relay(&args),
        #[cfg(target_os = "linux")]
        Command::Emulate(args) => crate::emulate::run(&args),
    };
    match result {
        Ok(()) => 0,
        // the reader of our output stopped reading (`| head`): a normal end
        Err(e) if crate::stdout::closed(e.as_ref()) => 0,
        Err(e) if e.is::<Usage>() => {
            eprintln!("coapcc: error: {e} (see --help)");
            2
        }
        Err(e) if e.is::<crate::ExitWith>() => {
            let code = e.downcast_ref::<crate::ExitWith>().map_or(1, |x| x.code);
            eprintln!("coapcc: {e}");
            code
        }
        Err(e) if e.is::<Incomplete>() => {
            eprintln!("coapcc: incomplete: {e}");
            3
        }
        Err(e) => {
            eprintln!("coapcc: error: {e}");
            1
        }
    }
}
