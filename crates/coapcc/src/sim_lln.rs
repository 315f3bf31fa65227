//! `coapcc sim` on a mesh scenario (`env = "lln"`: `--preset nitk-…` or such a `--scenario`):
//! its table.

use std::fmt::Write as _;

use lab::sim::mesh::{algorithm, truncations};
use netmodel::mesh::topology::Role;
use netsim::lln::LlnScenario;
use netsim::summary::NetworkSummary;

type Run = lab::sim::Run<LlnScenario>;

fn f(v: f64, digits: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.digits$}")
    }
}

/// The mesh runs' table, as `coapcc sim` prints it.
pub(crate) fn table(base: &LlnScenario, runs: &[Run]) -> String {
    let mut out = String::new();
    let layout = base.topology.layout.as_deref().unwrap_or("explicit nodes");
    let _ = writeln!(
        out,
        "{}: {} ({}), {} s × {} rep(s), seed {}",
        base.name,
        layout,
        lab::sim::spelled(&base.stack.mac),
        base.duration_s,
        runs[0].scenario.reps,
        base.seed
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
    out += &lab::sim::warning_lines(runs.iter().map(|r| (algorithm(r), &r.summary)));
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
