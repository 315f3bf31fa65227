//! `coapcc sweep`, `merge`, `reproduce`: the experiment commands.

use std::path::PathBuf;

use crate::sweep;

type Error = Box<dyn std::error::Error>;

/// Arguments of `coapcc sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The plan: TOML with `seed`, `reps`, optional `[base]` scenario keys and a `[matrix]` of
    /// lists (e.g. `cc = ["default", "fasor"]`, `clients = [50, 100]`, `buffer = [2500, 1410000]`).
    plan: PathBuf,
    /// Results directory: cells/ID.json, cells/ID.clients.csv, clients.csv. Re-running skips
    /// finished cells.
    #[arg(long)]
    out: PathBuf,
    /// Run only shard K of N (1-based), chosen by cell id; combine with `coapcc merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Also write the HTML report into OUT/report.
    #[arg(long)]
    report: bool,
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/4")?;
    let (k, n): (u64, u64) = (k.parse().map_err(|_| "K is not a number")?, n.parse().map_err(|_| "N is not a number")?);
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: need 1 <= K <= N"));
    }
    Ok((k, n))
}

/// Runs `coapcc sweep`.
pub fn sweep(args: &SweepArgs) -> Result<(), Error> {
    let text = std::fs::read_to_string(&args.plan).map_err(|e| format!("cannot read {}: {e}", args.plan.display()))?;
    let plan = sweep::parse_plan(&text).map_err(|e| format!("{}: {e}", args.plan.display()))?;
    let o = sweep::run(&plan, &args.out, args.shard, args.threads).map_err(|e| e.to_string())?;
    eprintln!(
        "coapcc sweep: {} cells run, {} already finished, {} in other shards, {:.1} s; results in {}",
        o.ran,
        o.skipped,
        o.other_shards,
        o.wall_s,
        args.out.display()
    );
    if args.report {
        crate::report::write(&args.out, &args.out.join("report")).map_err(|e| e.to_string())?;
        eprintln!("coapcc sweep: report in {}", args.out.join("report/index.html").display());
    }
    Ok(())
}

/// Arguments of `coapcc merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Where the merged results go.
    #[arg(long)]
    out: PathBuf,
    /// Shard directories written by `coapcc sweep --shard`.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
}

/// Runs `coapcc merge`.
pub fn merge(args: &MergeArgs) -> Result<(), Error> {
    let n = sweep::merge(&args.out, &args.shards).map_err(|e| e.to_string())?;
    eprintln!("coapcc merge: {n} cells copied into {}", args.out.display());
    Ok(())
}

/// Arguments of `coapcc reproduce`.
#[derive(Debug, clap::Args)]
pub struct ReproduceArgs {
    /// What to reproduce: `thesis` (the literature's reference matrix; docs/bottleneck.md).
    #[arg(value_parser = ["thesis"])]
    what: String,
    /// Results and report directory.
    #[arg(long)]
    out: PathBuf,
    /// Replications per error-free cell (the literature: 20; error-prone cells get twice as many).
    #[arg(long, default_value_t = 20)]
    reps: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

/// The literature's reference matrix and the Full Backoff comparison (ANRW 2018), as a plan.
pub fn thesis_plan(reps: u32) -> String {
    format!(
        r#"# The reference matrix of the CoAP congestion-control literature (docs/bottleneck.md), as `coapcc reproduce thesis` runs it.
seed = 2019
reps = {reps}

# error-free: workloads x buffers x clients x algorithms
[[matrices]]
cc = ["default", "cocoa", "tcp", "fasor", "fasor_token"]
workload = ["continuous", "random"]
buffer = [2500, 14100, 28200, 1410000]
clients = [1, 50, 100, 200, 400]

# error-prone: 10 clients, the link-error profiles, twice the replications
[[matrices]]
cc = ["default", "cocoa", "tcp", "fasor", "fasor_token"]
workload = ["continuous", "random"]
clients = [10]
errors = ["none", "low", "medium", "high"]
reps = [{reps2}]

# Full Backoff (Järvinen et al., ANRW 2018)
[[matrices]]
cc = ["default", "default_fb1", "default_fb2", "cocoa", "cocoa_fb1", "cocoa_fb2"]
workload = ["continuous", "random"]
buffer = [2500, 14100, 28200, 1410000]
clients = [200, 400]
"#,
        reps2 = 2 * reps
    )
}

/// Runs `coapcc reproduce`.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), Error> {
    if args.reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let text = thesis_plan(args.reps);
    let plan = sweep::parse_plan(&text)?;
    eprintln!("coapcc reproduce thesis: {} cells into {}", plan.cells.len(), args.out.display());
    let o = sweep::run(&plan, &args.out, None, args.threads).map_err(|e| e.to_string())?;
    crate::report::write(&args.out, &args.out.join("report")).map_err(|e| e.to_string())?;
    eprintln!(
        "coapcc reproduce thesis: {} cells run ({} already there) in {:.1} s; report: {}",
        o.ran,
        o.skipped,
        o.wall_s,
        args.out.join("report/index.html").display()
    );
    Ok(())
}
