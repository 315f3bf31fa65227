//! Simulator speed in events per second (criterion's "elements"): a calm cell and the heaviest
//! reference cell (400 clients, infinite buffer, DefaultCoAP in congestion collapse).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::{run_rep, Scenario};

fn cell(c: &mut Criterion, name: &str, scn: Scenario) {
    let scn = scn.resolve().unwrap();
    let t = scn.transport().unwrap();
    let events = run_rep(&scn, &t, 0, None).events;
    let mut g = c.benchmark_group("netsim");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function(name, |b| b.iter(|| run_rep(&scn, &t, 0, None)));
    g.finish();
}

fn simulation(c: &mut Criterion) {
    cell(c, "50 clients, 2500 B, default", Scenario { clients: 50, ..Scenario::thesis() });
    let mut heavy = Scenario { clients: 400, ..Scenario::thesis() };
    heavy.uplink.buffer_bytes = 1_410_000;
    heavy.downlink.buffer_bytes = 1_410_000;
    cell(c, "400 clients, infinite buffer, default (collapse)", heavy);
    cell(c, "100 clients, 2500 B, tcp", Scenario { clients: 100, cc: "tcp".into(), ..Scenario::thesis() });
}

criterion_group!(benches, simulation);
criterion_main!(benches);
