//! `coapcc sim` on a mesh scenario (`env = "lln"`: `--preset nitk-…` or such a `--scenario`).

use std::fmt::Write as _;
use std::path::Path;

use netmodel::mesh::topology::Role;
use netsim::lln::{self, LlnScenario};
use netsim::summary::NetworkSummary;
use netsim::NetworkReport;

use crate::sim::Args;

type Error = Box<dyn std::error::Error>;

type Run = crate::sim::Run<LlnScenario>;

/// Runs every algorithm asked for (or the scenario's own list) over the mesh scenario `text`.
pub fn run(args: &Args, text: &str, origin: &str, stop: &crate::stop::Stop) -> Result<(), Error> {
    for (given, flag) in [
        (args.clients.is_some(), "--clients"),
        (args.buffer.is_some(), "--buffer"),
        (args.workload.is_some(), "--workload"),
        (args.errors.is_some(), "--errors"),
    ] {
        if given {
            return Err(crate::usage(format!(
                "{flag} is an option of the wired bottleneck; {origin} is a mesh scenario"
            )));
        }
    }
    let mut base = LlnScenario::from_toml(text).map_err(|e| format!("{origin}: {e}"))?;
    if let Some(v) = args.reps {
        base.reps = v;
    }
    if let Some(v) = args.seed {
        base.seed = v;
    }
    if let Some(d) = args.duration {
        base.duration_s = d;
    }
    let specs: Vec<String> = match (args.cc.is_empty(), base.algorithms.is_empty()) {
        (false, _) => args.cc.clone(),
        (true, false) => base.algorithms.clone(),
        (true, true) => vec![base.cc.clone()],
    };
    let mut scenarios = Vec::new();
    for cc in &specs {
        let s = LlnScenario { cc: cc.clone(), ..base.clone() };
        let res = s.resolve().map_err(|e| format!("{origin}: {e}"))?;
        // the resolved algorithm, every parameter written out
        let s = LlnScenario { cc: res.cc.to_string(), ..s };
        scenarios.push((s, res));
    }
    let workers = crate::sim::Workers::new(args.threads)?;
    // progress in simulated seconds: a run's length is fixed, the number of its exchanges is not
    // (under congestion they take longer than their clients' intervals)
    let total: u64 = scenarios.iter().map(|(s, _)| s.reps as u64 * s.duration_s as u64).sum();
    let runs = crate::sim::run_all(
        &workers,
        args.progress(total, crate::progress::Counting::SimulatedSeconds),
        stop,
        &scenarios,
        |(s, _)| (s.clone(), s.reps),
        |(s, res), r, told| lln::run_rep(s, res, r, told),
    )?;
    if let Some(dir) = &args.out {
        write_out(dir, &runs)?;
    }
    if !args.silent {
        if args.json {
            crate::stdout::json(&crate::sim::to_json(&runs)?)?;
            eprint!("{}", crate::sim::warning_lines(runs.iter().map(|r| (algorithm(r), &r.summary))));
        } else {
            crate::stdout::write(&table(&base, &runs))?;
        }
    }
    let done = runs.iter().map(|r| (algorithm(r), r.reps.len(), r.scenario.reps));
    crate::sim::interrupted(stop, done, scenarios.len())?;
    let cut = truncations(&runs);
    if cut.is_empty() {
        Ok(())
    } else {
        Err(Box::new(crate::Incomplete(cut.join("; "))))
    }
}

/// One sentence per run whose clients, taking turns, had not all finished when the run's
/// `duration_s` was up.
fn truncations(runs: &[Run]) -> Vec<String> {
    (runs.iter().filter(|r| r.summary.truncated_reps > 0))
        .map(|r| {
            let (s, cut) = (&r.scenario, r.summary.truncated_reps);
            crate::sim::cut_short(algorithm(r), cut, s.reps, "duration_s", s.duration_s)
                + "; their unfinished clients have no FCT"
        })
        .collect()
}

/// The run's algorithm by name (its scenario's `cc` has every parameter written out).
fn algorithm(r: &Run) -> &str {
    r.scenario.cc.split(':').next().unwrap_or("")
}

fn f(v: f64, digits: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.digits$}")
    }
}

fn table(base: &LlnScenario, runs: &[Run]) -> String {
    let mut out = String::new();
    let layout = base.topology.layout.as_deref().unwrap_or("explicit nodes");
    let _ = writeln!(
        out,
        "{}: {} ({}), {} s × {} rep(s), seed {}",
        base.name, layout, base.stack.mac, base.duration_s, runs[0].scenario.reps, base.seed
    );
    if let Some(a) = &base.approximation {
        let _ = writeln!(out, "approximation: {a}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<12} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>9} {:>6}",
        "algorithm", "trans/s", "FCT mean", "FCT p50", "retx/run", "PDR", "Jain", "RTO mean", "RTO max", "failed"
    );
    for r in runs {
        let (m, s) = (r.summary.lln.as_ref(), &r.summary);
        let Some(m) = m else { continue };
        let name = algorithm(r);
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>9} {:>6}",
            name,
            f(m.transactions_per_s, 2),
            f(m.fct_mean_s, 2),
            f(s.fct_s.p50, 2),
            f(m.retransmissions_total, 0),
            f(m.pdr, 3),
            f(m.jain_fairness, 3),
            f(m.rto_s.mean, 2),
            f(m.rto_s.max_mean, 2),
            s.failed_exchanges
        );
    }
    if let NetworkSummary::Mesh(mesh) = &runs[0].summary.network {
        let d = &mesh.drops;
        let _ = writeln!(
            out,
            "\nframe/packet losses ({}; all reps): collision {}, cca_busy {}, queue_full {}, no_neighbor_queue {}, \
             rx_overflow {}, tx_fail {}, rx_fail {}, no_route {}",
            algorithm(&runs[0]),
            d.collision,
            d.cca_busy,
            d.queue_full,
            d.no_neighbor_queue,
            d.rx_overflow,
            d.tx_fail,
            d.rx_fail,
            d.no_route
        );
        let rpl_sent: u64 = mesh.nodes.iter().map(|n| n.stats.rpl_frames_sent).sum();
        if rpl_sent > 0 {
            let by_br: u64 =
                mesh.nodes.iter().filter(|n| n.role == Role::BorderRouter).map(|n| n.stats.rpl_frames_sent).sum();
            let lost: u64 = mesh.nodes.iter().map(|n| n.stats.rpl_dropped).sum();
            let refused: u64 = mesh.nodes.iter().map(|n| n.stats.routes_refused).sum();
            let evicted: u64 = mesh.nodes.iter().map(|n| n.stats.routes_evicted).sum();
            let tables = if refused + evicted > 0 {
                format!("; full route tables refused {refused} routes and evicted {evicted}")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "RPL control ({}; all reps): {} frames on the air ({} by the border router), {} control packets lost{}",
                algorithm(&runs[0]),
                rpl_sent,
                by_br,
                lost,
                tables
            );
        }
        if let Some(dc) = &mesh.duty_cycle {
            // the copies of the ContikiMAC senders (beside nullrdc motes, a kept-on border
            // router's); duplicates are counted where they arrive
            let st =
                mesh.nodes.iter().filter(|n| n.contikimac).fold(netmodel::mesh::NodeStats::default(), |mut a, n| {
                    a.merge(&n.stats);
                    a
                });
            let duplicates: u64 = mesh.nodes.iter().map(|n| n.stats.duplicates).sum();
            let c = &st.copy_drops;
            let _ = writeln!(
                out,
                "ContikiMAC ({}; all reps): radio on {:.2} % of the time on average (border router {:.2} %, \
                 highest mote {} {:.2} %); {:.1} copies per packet handed over ({} copies, {} handed over, \
                 {} duplicates); copies lost: asleep {}, collision {}, rx_fail {}, rx_overflow {}; \
                 CSMA gave up on {} packets ({} of them taken already: lost ACKs)",
                algorithm(&runs[0]),
                dc.mean * 100.0,
                dc.border_router * 100.0,
                dc.max_node,
                dc.max * 100.0,
                st.frames_sent as f64 / st.handed_over.max(1) as f64,
                st.frames_sent,
                st.handed_over,
                duplicates,
                c.asleep,
                c.collision,
                c.rx_fail,
                c.rx_overflow,
                d.csma_retry_limit + st.given_up_after_handover,
                st.given_up_after_handover
            );
        }
    }
    let cut = truncations(runs);
    if !cut.is_empty() {
        let _ = write!(out, "\nINCOMPLETE: {}\n", cut.join("\nINCOMPLETE: "));
    }
    out += &crate::sim::warning_lines(runs.iter().map(|r| (algorithm(r), &r.summary)));
    let _ = writeln!(
        out,
        "\ntrans/s: completed exchanges per second; FCT: first request to the {}th success (s), mean over clients; \
         retx/run: retransmissions per replication; RTO max: per-run maximum, averaged.",
        base.workload.fct_successes
    );
    let events: u64 = runs.iter().map(|r| r.summary.events).sum();
    let wall: f64 = runs.iter().map(|r| r.wall_s).sum();
    let _ =
        writeln!(out, "{events} events in {wall:.2} s wall ({:.1} M events/s)", events as f64 / wall.max(1e-9) / 1e6);
    out
}

fn write_out(dir: &Path, runs: &[Run]) -> Result<(), Error> {
    crate::sim::write_summary(dir, runs)?;
    let mut clients = csv::Writer::from_path(dir.join("clients.csv"))?;
    clients.write_record(["cc", "cc_params"].into_iter().chain(crate::sim::CLIENT_COLUMNS))?;
    let mut ex = csv::Writer::from_path(dir.join("exchanges.csv"))?;
    ex.write_record(["cc", "cc_params"].into_iter().chain(crate::sim::EXCHANGE_COLUMNS))?;
    let mut rto = csv::Writer::from_path(dir.join("rto.csv"))?;
    rto.write_record(["cc", "cc_params"].into_iter().chain(crate::sim::RTO_COLUMNS))?;
    let mut nodes = csv::Writer::from_path(dir.join("nodes.csv"))?;
    nodes.write_record([
        "cc",
        "cc_params",
        "rep",
        "node",
        "role",
        "x",
        "y",
        "parent",
        "rank",
        "originated",
        "forwarded",
        "delivered",
        "frames_sent",
        "frames_received",
        "drops",
        "radio_on_ns",
        "rpl_frames_sent",
        "rpl_frames_received",
        "rpl_dropped",
    ])?;
    for r in runs {
        let cc = crate::sim::cc_columns(&r.scenario.cc);
        for rep in &r.reps {
            // a mesh client is named by its node id (host i is node i + 1), as in a sweep's table
            for c in &rep.clients {
                clients.write_record(cc.iter().cloned().chain(crate::sim::client_row(rep.rep, c.client + 1, c)))?;
            }
            for e in &rep.exchanges {
                // a mesh client is named by its node id
                crate::sim::write_exchange(&mut ex, &mut rto, &cc, rep.rep, e.client + 1, e)?;
            }
            if let NetworkReport::Mesh(m) = &rep.network {
                for n in &m.report.nodes {
                    let st = &n.stats;
                    nodes.write_record(cc.iter().cloned().chain([
                        rep.rep.to_string(),
                        n.id.to_string(),
                        serde_json::to_value(n.role)?.as_str().unwrap_or("").to_string(),
                        format!("{:.4}", n.x),
                        format!("{:.4}", n.y),
                        n.parent.map(|p| p.to_string()).unwrap_or_default(),
                        n.rank.map(|p| p.to_string()).unwrap_or_default(),
                        st.originated.to_string(),
                        st.forwarded.to_string(),
                        st.delivered.to_string(),
                        st.frames_sent.to_string(),
                        st.frames_received.to_string(),
                        st.drops.total().to_string(),
                        // nullrdc: the radio is always on
                        if st.radio_on_ns > 0 { st.radio_on_ns } else { m.duration_ns }.to_string(),
                        st.rpl_frames_sent.to_string(),
                        st.rpl_frames_received.to_string(),
                        st.rpl_dropped.to_string(),
                    ]))?;
                }
            }
        }
    }
    clients.flush()?;
    ex.flush()?;
    rto.flush()?;
    nodes.flush()?;
    Ok(())
}
