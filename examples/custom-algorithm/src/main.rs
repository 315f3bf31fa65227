//! Registers `min_rtt` and runs it beside CoCoA on one cell of the reference testbed
//! (`cargo run --release -p custom-algorithm [CLIENTS]`, default 50 continuous clients, medium
//! link errors: 10 % on average, in bursts): the
//! same simulator, scenario and seeds as `coapcc sim --cc cocoa`, with an algorithm the
//! toolkit did not ship.

use netsim::{run_rep, Scenario, Summary};
use std::process::ExitCode;

fn main() -> ExitCode {
    let clients = match std::env::args().nth(1).map(|a| a.parse::<u32>()) {
        None => 50,
        Some(Ok(n)) if (1..=1000).contains(&n) => n,
        Some(_) => {
            eprintln!("usage: custom-algorithm [CLIENTS]   (CLIENTS: 1 to 1000, default 50)");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = custom_algorithm::register() {
        eprintln!("custom-algorithm: {e}");
        return ExitCode::FAILURE;
    }
    println!("{clients} continuous clients, the thesis testbed (2500-byte buffers), medium link errors");
    println!("{:<28} {:>10} {:>10} {:>10} {:>8}", "algorithm", "FCT p10 s", "FCT p50 s", "FCT p90 s", "retx");
    for cc in ["cocoa", "min_rtt", "min_rtt:factor=2,margin=0.5"] {
        let mut scn = Scenario::thesis();
        scn.clients = clients;
        scn.errors = netsim::loss::ErrorProfile::Medium;
        scn.cc = cc.to_string();
        let resolved = scn.resolve().and_then(|scn| Ok((scn.transport()?, scn)));
        let (transport, scn) = match resolved {
            Ok(t) => t,
            Err(e) => {
                eprintln!("custom-algorithm: {e}");
                return ExitCode::FAILURE;
            }
        };
        let reps: Vec<_> = (0..scn.reps).map(|r| run_rep(&scn, &transport, r, None)).collect();
        let s = Summary::new(&reps);
        let retx: u64 = reps.iter().flat_map(|r| &r.clients).map(|c| u64::from(c.retransmissions)).sum();
        println!("{cc:<28} {:>10.1} {:>10.1} {:>10.1} {retx:>8}", s.fct_s.p10, s.fct_s.p50, s.fct_s.p90);
    }
    ExitCode::SUCCESS
}
