//! `coapcc sim`: the reference testbed in virtual time.

use std::path::PathBuf;

use lab::progress::{Counting, Progress};
use lab::sim::Request;
use lab::stop::Stop;
use netsim::loss::ErrorProfile;
use netsim::{Detail, WorkloadKind};

/// Arguments of `coapcc sim`. Unset options take the scenario file's values, and those default
/// to the `thesis` preset (docs/scenario.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Congestion control, `NAME[:key=value,...]` (see `coapcc algorithms`), or
    /// `tcp[:key=value,...]` for CoAP over TCP (the scenario's `transport`). Repeat to compare
    /// them on the same scenario and seeds. [default: the scenario's; thesis: default]
    #[arg(long = "cc", value_name = "SPEC")]
    pub(crate) cc: Vec<String>,
    /// Number of clients. [default: the scenario's; thesis: 50]
    #[arg(long, value_name = "N", value_parser = crate::args::count, allow_negative_numbers = true)]
    pub(crate) clients: Option<u32>,
    /// Buffer in front of both bottleneck directions, bytes (thesis: 2500; 1410000 is
    /// "infinite"; `infinite` is accepted for it).
    #[arg(long, value_name = "BYTES", value_parser = parse_buffer, allow_negative_numbers = true)]
    pub(crate) buffer: Option<u64>,
    /// Workload: continuous or random.
    #[arg(long, value_parser = ["continuous", "random"])]
    pub(crate) workload: Option<String>,
    /// Link-error profile of both directions: none, low (2 %), medium (10 %), high (18 %).
    #[arg(long, value_parser = ["none", "low", "medium", "high"])]
    pub(crate) errors: Option<String>,
    /// Replications (each with its own seed stream). [default: the scenario's; thesis: 1]
    #[arg(long, value_name = "R", value_parser = crate::args::count, allow_negative_numbers = true)]
    pub(crate) reps: Option<u32>,
    /// Master seed. [default: the scenario's; thesis: 1]
    #[arg(long, value_name = "S", value_parser = crate::args::seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Worker threads for replications (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "T", value_parser = crate::args::threads, allow_negative_numbers = true)]
    pub(crate) threads: Option<usize>,
    /// A TOML scenario (every key with its unit and default: docs/scenario.md, and for mesh
    /// scenarios, `env = "lln"`, docs/mesh.md; the presets written out: scenarios/).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub(crate) scenario: Option<PathBuf>,
    /// A named preset (`coapcc presets` lists them), e.g. `nitk-gst-cooja`; without --cc a
    /// mesh preset runs every algorithm its source compared.
    #[arg(long, value_name = "NAME")]
    pub(crate) preset: Option<String>,
    /// Sets one scenario key over the preset's or file's value, `KEY=VALUE` as a plan's matrix
    /// key (docs/scenario.md, docs/mesh.md): `--set radio.success_ratio_rx=1`, `--set
    /// cc_defaults.max_retransmit=\"4\"`, `--set downlink.delay_ms=100`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Simulated seconds per replication of a mesh scenario (shortens or lengthens its run).
    #[arg(long, value_name = "S", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    pub(crate) duration: Option<f64>,
    /// Print one JSON object on stdout instead of a table (with several --cc: {"runs": [...]}).
    #[arg(long)]
    pub(crate) json: bool,
    /// Write summary.json, clients.csv, exchanges.csv and rto.csv (and a mesh's nodes.csv) into
    /// this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// With --out, the CSV tables to write: any of clients, exchanges, rto, nodes, comma-separated
    /// (or all, none). exchanges.csv and rto.csv hold a row per exchange and per armed timer
    /// (hundreds of MB for a large run); without them the run keeps no per-exchange record.
    #[arg(long, value_name = "LIST", default_value = "all", value_parser = lab::sim::Tables::parse, requires = "out")]
    pub(crate) tables: lab::sim::Tables,
    /// Write replication 0 of each algorithm as a pcap file (Wireshark, tshark), at simulated
    /// time: on the bottleneck every packet its hosts send, CoAP in UDP or in the TCP model's
    /// segments in IPv4; on a mesh every 802.15.4 frame on the air (6LoWPAN, CoAP in UDP hop by
    /// hop, ACKs, RPL; tell Wireshark `-o 6lowpan.context0:fd00::/64`). With several algorithms,
    /// FILE's stem gets each one's name: run.pcap → run-cocoa.pcap.
    #[arg(long, value_name = "FILE")]
    pub(crate) pcap: Option<PathBuf>,
    /// Run even if the memory the run is estimated to need exceeds what the machine has available.
    #[arg(long)]
    pub(crate) ignore_memory: bool,
    /// No progress display on stderr (errors and warnings still go there). The run still counts
    /// its progress, so it takes the same steps as one that shows it.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

impl Args {
    /// The progress of a run of `total` units counted as `counting`: none for a library caller,
    /// never shown with `--quiet`.
    pub(crate) fn progress(&self, total: u64, counting: Counting) -> Option<Progress> {
        Some(if self.quiet { Progress::hidden(total, counting) } else { Progress::start(total, counting) })
    }
}

pub fn parse_buffer(s: &str) -> Result<u64, String> {
    match s {
        "infinite" | "inf" => Ok(1_410_000),
        _ => s.parse().map_err(|_| format!("'{s}' is not a byte count (or `infinite`)")),
    }
}

type Error = Box<dyn std::error::Error>;

/// Runs the command; Ctrl-C stops it early ([`Stop::on_ctrl_c`]).
pub fn run(args: &Args) -> Result<(), Error> {
    run_with(args, &Stop::on_ctrl_c())
}

/// Runs the command until `stop` is set: the results are then those of the replications that
/// finished, and the run is [`crate::Incomplete`].
fn run_with(args: &Args, stop: &Stop) -> Result<(), Error> {
    let req = Request {
        text: lab::sim::with_settings(
            lab::sim::scenario_text(args.preset.as_deref(), args.scenario.as_deref())?,
            &args.set,
        )?,
        cc: args.cc.clone(),
        clients: args.clients,
        buffer: args.buffer,
        workload: args.workload.as_deref().map(|w| {
            if w == "random" {
                WorkloadKind::Random
            } else {
                WorkloadKind::Continuous
            }
        }),
        errors: args.errors.as_deref().map(|e| ErrorProfile::parse(e).ok_or("bad --errors")).transpose()?,
        reps: args.reps,
        seed: args.seed,
        threads: args.threads,
        duration: args.duration,
        // per-exchange records only for --out's exchanges.csv and rto.csv
        detail: if args.out.is_some() && args.tables.per_exchange() { Detail::Exchanges } else { Detail::Summary },
        ignore_memory: args.ignore_memory,
        pcap: args.pcap.clone(),
    };
    let (runs, asked) = lab::sim::run(&req, stop, |total, counting| args.progress(total, counting))?;
    if let Some(dir) = &args.out {
        runs.write_out(dir, args.tables)?;
    }
    if args.json {
        crate::stdout::json(&runs.to_json()?)?;
        eprint!("{}", runs.warning_lines());
    } else {
        crate::stdout::write(&runs.table())?;
    }
    runs.check(stop, asked)
}
