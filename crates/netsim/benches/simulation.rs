//! Simulator speed in events per second (criterion's "elements"): a calm cell and the heaviest
//! reference cell (400 clients, infinite buffer, DefaultCoAP in congestion collapse).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::mesh::{self, MeshScenario};
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
    cell(
        c,
        "100 clients, 2500 B, tcp",
        Scenario { clients: 100, transport: netsim::TransportKind::Tcp, ..Scenario::thesis() },
    );
}

/// The mesh: one replication of each NITK CoCoA++ preset's static topology (cocoa, 1080 s), and
/// the GST preset's 3×3 grid (default, 600 s).
fn mesh(c: &mut Criterion) {
    let mut g = c.benchmark_group("mesh");
    g.sample_size(10);
    for (preset, cc) in
        [("nitk-cocoapp-grid6x6", "cocoa"), ("nitk-cocoapp-chain20", "cocoa"), ("nitk-gst-cooja", "default")]
    {
        let text = mesh::presets::text(preset).unwrap();
        let s = MeshScenario { cc: cc.into(), ..MeshScenario::from_toml(text).unwrap() };
        let res = s.resolve().unwrap();
        g.throughput(Throughput::Elements(mesh::run_rep(&s, &res, 0, None).events));
        g.bench_function(format!("{preset} {cc}, 1 rep"), |b| b.iter(|| mesh::run_rep(&s, &res, 0, None)));
    }
    g.finish();
}

criterion_group!(benches, simulation, mesh);
criterion_main!(benches);
