//! `coapcc league`: every algorithm on every network of the suite, ranked by regret
//! ([`lab::league`]).

use std::path::PathBuf;

use lab::sweep;

type Error = Box<dyn std::error::Error>;

/// Arguments of `coapcc league`.
#[derive(Debug, clap::Args)]
#[command(after_help = "The suite (plans/league.toml, version 2): the reference bottleneck with continuous \
    clients (50, 200, 400 × buffers 2500 B, 28 kB, infinite), random clients (100, 400 × 2500 B, infinite) \
    and 10 clients over the low and high link-error profiles; the mesh presets nitk-gst-cooja (and at UDGM RX \
    0.8), cloud-m2m-contikimac, cloud-burst-nullrdc, nitk-cocoapp-grid6x6 and -mobile-rwp with lossless \
    links, rttcoap-homog-57. Every algorithm but CoAP over TCP enters, on the same seeds in each cell \
    (paired). About 3 minutes on 2 cores.\n\n\
    Writes OUT/league/table.csv (the league table), cells.csv (every algorithm in every cell: figure, \
    95 % CI, regret, FCT p50/p90 or completed/s, Jain, retransmissions per exchange), league.md, regret.svg, \
    and the report OUT/report/index.html with the league first. Re-running skips finished cells.")]
pub struct Args {
    /// Results directory (a sweep's: cells/, clients.csv, …, and league/).
    #[arg(long)]
    out: PathBuf,
    /// Another entrant, added to every cell: a built-in with other parameters
    /// (`fasor:dither=false`) or an algorithm a program registered. Repeatable.
    #[arg(long = "cc", value_name = "NAME[:key=value,...]")]
    cc: Vec<String>,
    /// Another suite instead of the league's: a plan (as `coapcc sweep` takes) whose matrices
    /// list the entrants in `cc`; `--cc` and `--reps` apply to it as to the league's.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Replications of the wired cells (the suite's 10); the others keep the suite's ratio
    /// (error cells twice, mesh cells 1.5×, RTT-CoAP's collection half).
    #[arg(long, value_parser = crate::args::count, allow_negative_numbers = true, conflicts_with = "quick")]
    reps: Option<u32>,
    /// A first look: 3 replications a wired cell (about a minute); rankings of so few wander.
    #[arg(long)]
    quick: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_parser = crate::args::threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Run even if OUT holds another plan's results (they then mix).
    #[arg(long)]
    force: bool,
    /// Only rank what OUT holds (no run): any sweep's results directory, its cells that differ
    /// only in the algorithm taken as one league cell.
    #[arg(long, conflicts_with_all = ["plan", "cc", "reps", "quick"])]
    score_only: bool,
    /// Print the league (table and cells) as JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Runs `coapcc league`.
pub fn run(args: &Args) -> Result<(), Error> {
    let mut interrupted = None;
    if !args.score_only {
        let reps = if args.quick { Some(lab::plans::QUICK_REPS) } else { args.reps };
        let (suite, name) = match &args.plan {
            Some(p) => {
                (netsim::text_file::read_text(p, netsim::text_file::MAX_SCENARIO_BYTES)?, p.display().to_string())
            }
            None => (lab::league::SUITE.to_string(), format!("suite v{}", lab::league::SUITE_VERSION)),
        };
        let text = lab::league::plan(&suite, &args.cc, reps).map_err(|e| format!("{name}: {e}"))?;
        let plan = sweep::parse_plan(&text).map_err(|e| format!("{name}: {e}"))?;
        eprintln!(
            "coapcc league: {name}, {} cells ({} entrants) into {}",
            plan.cells.len(),
            plan.cells.iter().filter_map(|c| c.params.get("cc")).collect::<std::collections::BTreeSet<_>>().len(),
            args.out.display()
        );
        let o = sweep::run(&plan, &args.out, None, args.threads, args.force, &lab::stop::Stop::on_ctrl_c())
            .map_err(|e| e.to_string())?;
        eprintln!("coapcc league: {} cells run ({} already there) in {:.1} s", o.ran, o.skipped, o.wall_s);
        if o.interrupted > 0 {
            interrupted = Some(format!(
                "interrupted: {} cell(s) finished and kept, {} not run; the same command again runs only those \
                 (the league above ranks what finished)",
                o.ran + o.skipped,
                o.interrupted
            ));
        }
    }
    let league = lab::report::write_league(&args.out, &args.out.join("report")).map_err(|e| e.to_string())?;
    if args.json {
        crate::stdout::json(&serde_json::to_value(&league).map_err(|e| e.to_string())?)?;
    } else {
        print_table(&league)?;
    }
    eprintln!(
        "coapcc league: {} cells ranked; {}, {}, report {}",
        league.cells.len(),
        args.out.join(lab::league::DIR).join("table.csv").display(),
        args.out.join(lab::league::DIR).join("cells.csv").display(),
        args.out.join("report/index.html").display()
    );
    match interrupted {
        Some(why) => Err(Box::new(crate::Incomplete(why))),
        None => Ok(()),
    }
}

/// The league table on standard output.
fn print_table(league: &lab::league::League) -> Result<(), Error> {
    use lab::league::render::pct;
    let width = league.standings.iter().map(|s| s.algorithm.chars().count()).max().unwrap_or(9).max(9);
    let mut text = format!(
        "{:>4}  {:<width$}  {:>12}  {:>5}  {:>11}  {:>9}  {:>9}\n",
        "rank", "algorithm", "worst regret", "in", "mean regret", "within 3%", "mean Jain"
    );
    for (i, s) in league.standings.iter().enumerate() {
        text += &format!(
            "{:>4}  {:<width$}  {:>10} %  {:>5}  {:>9} %  {:>4} of {:<2}  {:>9.3}\n",
            i + 1,
            s.algorithm,
            pct(s.worst_regret),
            s.worst_cell,
            pct(s.mean_regret),
            s.within_3,
            s.cells,
            s.mean_jain
        );
    }
    crate::stdout::write(&text).map_err(Into::into)
}
