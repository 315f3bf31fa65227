//! `coapcc sweep`, `merge`, `reproduce`: the experiment commands.

use std::path::PathBuf;

use lab::plans::{plan, Overrides};
use lab::sweep;

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
    #[arg(long, value_parser = crate::args::threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Also write the HTML report into OUT/report.
    #[arg(long)]
    report: bool,
    /// Run even if OUT holds another plan's results (they then mix; this plan's text is kept as
    /// OUT/plan-HASH.toml).
    #[arg(long)]
    force: bool,
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
    let text = netsim::text_file::read_text(&args.plan, netsim::text_file::MAX_SCENARIO_BYTES)?;
    let plan = sweep::parse_plan(&text).map_err(|e| format!("{}: {e}", args.plan.display()))?;
    let stop = lab::stop::Stop::on_ctrl_c();
    let o = sweep::run(&plan, &args.out, args.shard, args.threads, args.force, &stop).map_err(|e| e.to_string())?;
    eprintln!(
        "coapcc sweep: {} cells run, {} already finished, {} in other shards, {:.1} s; results in {}",
        o.ran,
        o.skipped,
        o.other_shards,
        o.wall_s,
        args.out.display()
    );
    interrupted(&o)?;
    if o.other_shards > 0 {
        eprintln!("coapcc sweep: this shard is complete; `coapcc merge` the shards' directories for the whole plan");
    }
    if args.report {
        lab::report::write(&args.out, &args.out.join("report")).map_err(|e| e.to_string())?;
        eprintln!("coapcc sweep: report in {}", args.out.join("report/index.html").display());
    }
    sweep::Notes::of(&plan, &args.out).tell("coapcc sweep")
}

/// An [`crate::Incomplete`] error if the sweep was stopped before every cell finished.
fn interrupted(o: &sweep::SweepOutcome) -> Result<(), Error> {
    if o.interrupted == 0 {
        return Ok(());
    }
    Err(Box::new(crate::Incomplete(format!(
        "interrupted: {} cell(s) finished and kept, {} not run; the same command again runs only those",
        o.ran + o.skipped,
        o.interrupted
    ))))
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
    /// Merge even if the directories hold results of different plans.
    #[arg(long)]
    force: bool,
}

/// Runs `coapcc merge`.
pub fn merge(args: &MergeArgs) -> Result<(), Error> {
    let o = sweep::merge(&args.out, &args.shards, args.force).map_err(|e| e.to_string())?;
    eprintln!("coapcc merge: {} cells copied into {}", o.copied, args.out.display());
    match &o.plan {
        Some(p) if o.present == p.cells.len() => {
            eprintln!("coapcc merge: all {} cells of plan {} are present", p.cells.len(), p.plan)
        }
        Some(p) => eprintln!(
            "coapcc merge: {} of the {} cells of plan {} are present; {} missing (shards not merged yet, or not run)",
            o.present,
            p.cells.len(),
            p.plan,
            p.cells.len() - o.present
        ),
        None => eprintln!("coapcc merge: the directories record no plan (no plan.json or plan.toml)"),
    }
    Ok(())
}

/// Arguments of `coapcc reproduce`.
#[derive(Debug, clap::Args)]
pub struct ReproduceArgs {
    /// What to reproduce: `thesis` (the wired bottleneck's reference matrix; docs/bottleneck.md),
    /// `nitk` (the NITK thesis's Cooja experiments on the mesh, static and mobile, and its
    /// FIT/IoT-LAB ones as approximations; docs/mesh.md), `cloud` (CLOUD's cloud clients behind
    /// a border router: baseline, many-to-many and burst, with nullrdc and ContikiMAC;
    /// docs/mesh.md) or `rttcoap` (RTTCOAP's collection on concentric circles: homogeneous and
    /// mixed; docs/mesh.md).
    #[arg(value_parser = ["thesis", "nitk", "cloud", "rttcoap"])]
    what: String,
    /// Results and report directory.
    #[arg(long)]
    out: PathBuf,
    /// Replications per cell. thesis: 20 per error-free cell (the literature's), error-prone
    /// cells twice as many; nitk: the sources' counts (5 for GST/GSRTC, 30 for CoCoA++).
    #[arg(long, value_parser = crate::args::count, allow_negative_numbers = true, conflicts_with = "quick")]
    reps: Option<u32>,
    /// A first look in a few minutes: 3 replications per cell (thesis: 6 for the error-prone
    /// cells), the same report. Figures of so few replications wander more than the full run's.
    #[arg(long)]
    quick: bool,
    /// nitk, cloud and rttcoap: simulated seconds per replication instead of the presets' (600,
    /// 900, 1080, 6900 and 7600 s).
    #[arg(long, value_name = "S", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// nitk only: also the CoCoA++ offered-load levels (0.5 … 2.5 kbit/s per client on the four
    /// static and the four mobile topologies).
    #[arg(long)]
    loads: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = crate::args::threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Run even if OUT holds another plan's results (say, of other --reps): they then mix, and
    /// this plan's text is kept as OUT/plan-HASH.toml.
    #[arg(long)]
    force: bool,
    /// Print the comparison with the publications as JSON on standard output: every published
    /// figure and claim beside the cell(s) that ran its experiment (the rows of the report's
    /// published.csv), with the counts within 10 % and holding.
    #[arg(long)]
    json: bool,
}

/// Runs `coapcc reproduce`.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), Error> {
    let what = args.what.as_str();
    let reps = if args.quick { Some(lab::plans::QUICK_REPS) } else { args.reps };
    let text = match what {
        "nitk" | "cloud" | "rttcoap" => {
            if args.duration.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
                return Err(crate::usage("--duration must be a positive number of seconds"));
            }
            if what != "nitk" && args.loads {
                return Err(crate::usage("--loads applies to `reproduce nitk`"));
            }
            plan(what, &Overrides { reps, duration_s: args.duration, loads: args.loads })?
        }
        _ => {
            if args.duration.is_some() || args.loads {
                return Err(crate::usage("--duration and --loads apply to `reproduce nitk`, `cloud` and `rttcoap`"));
            }
            plan("thesis", &Overrides { reps, ..Overrides::default() })?
        }
    };
    let plan = sweep::parse_plan(&text)?;
    eprintln!("coapcc reproduce {what}: {} cells into {}", plan.cells.len(), args.out.display());
    let o = sweep::run(&plan, &args.out, None, args.threads, args.force, &lab::stop::Stop::on_ctrl_c())
        .map_err(|e| e.to_string())?;
    if o.ran + o.skipped > 0 {
        // stopped or not, the report of what finished
        lab::report::write(&args.out, &args.out.join("report")).map_err(|e| e.to_string())?;
    }
    interrupted(&o)?;
    // the comparison with the publications, once: the counts, and with --json every row
    let rows = lab::report::published_rows(&args.out).map_err(|e| e.to_string())?;
    let (figures, claims) = lab::report::published_within(&rows);
    if let Some((within, of)) = figures {
        eprintln!(
            "coapcc reproduce {what}: {within} of {of} published figures with a cell here reproduced within 10 % \
             (the report's first section; docs/reproduction.md)"
        );
    }
    if let Some((hold, of)) = claims {
        eprintln!("coapcc reproduce {what}: {hold} of {of} stated comparisons with both cells here hold");
    }
    if args.json {
        // the comparison as the report's published.csv has it, with the run's counts
        let count = |c: Option<(usize, usize)>| c.map_or(serde_json::json!(null), |(n, of)| serde_json::json!([n, of]));
        let out = serde_json::json!({
            "what": what,
            "cells_run": o.ran,
            "cells_already_there": o.skipped,
            "wall_s": o.wall_s,
            "report": args.out.join("report/index.html"),
            "figures_within_10_percent": count(figures),
            "claims_holding": count(claims),
            "published": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    }
    eprintln!(
        "coapcc reproduce {what}: {} cells run ({} already there) in {:.1} s; report: {}",
        o.ran,
        o.skipped,
        o.wall_s,
        args.out.join("report/index.html").display()
    );
    sweep::Notes::of(&plan, &args.out).tell(&format!("coapcc reproduce {what}"))
}
