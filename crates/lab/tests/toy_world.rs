//! A third network model, written here, runs through the experiment library's sweep with no
//! change to the library or to the other worlds: a world registered under `env = "line"` (three
//! hosts on a lossless line, the client at one end, the server at the other, the middle host
//! relaying), named by a plan's `[base]`, its cells run, stored and summarised like any other;
//! and `sim` (the command line's and the Python package's call) runs and tabulates it.
//! Expected values are worked out by hand from the line's rule.

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{Config, Endpoint, Request};
use netmodel::workload::Batches;
use netmodel::{HostId, Medium, Packet, Schedule, Stream, WorkloadKind, WorkloadSpec};
use netsim::udp::{FixedResponse, UdpHost, UdpStack};
use netsim::worlds::{self, Runner, World, WorldScenario};
use netsim::{engine, Detail, NetworkReport, Progress, Recorder, RepResult};
use serde::{Deserialize, Serialize};

/// The line's scenario: every key, with its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct LineScenario {
    env: String,
    seed: u64,
    reps: u32,
    cc: String,
    exchanges: u32,
    hop_ms: u64,
}

impl Default for LineScenario {
    fn default() -> Self {
        LineScenario { env: "line".into(), seed: 1, reps: 1, cc: "default".into(), exchanges: 5, hop_ms: 10 }
    }
}

#[derive(Debug)]
struct LineWorld;

static LINE: LineWorld = LineWorld;

impl World for LineWorld {
    fn env(&self) -> &'static str {
        "line"
    }
    fn kind(&self) -> &'static str {
        "line"
    }
    fn title(&self) -> &'static str {
        "three-host line"
    }
    fn defaults(&self) -> toml::Table {
        toml::Table::try_from(LineScenario::default()).unwrap()
    }
    fn plan_reps(&self) -> Option<u32> {
        Some(1)
    }
    fn scenario(&self, table: toml::Table) -> Result<Box<dyn WorldScenario>, String> {
        let s: LineScenario = table.try_into().map_err(|e: toml::de::Error| e.to_string())?;
        let cc = CcConfig::parse(&s.cc).map_err(|e| e.to_string())?;
        // resolved: the algorithm with every parameter that differs written out
        Ok(Box::new(LineScenario { cc: cc.to_string(), ..s }))
    }
}

impl WorldScenario for LineScenario {
    fn world(&self) -> &'static dyn World {
        &LINE
    }
    fn reps(&self) -> u32 {
        self.reps
    }
    fn seed_mut(&mut self) -> &mut u64 {
        &mut self.seed
    }
    fn runner(&self) -> Result<Box<dyn Runner + '_>, String> {
        Ok(Box::new(LineRun { s: self, cc: CcConfig::parse(&self.cc).map_err(|e| e.to_string())? }))
    }
}

/// The packet has reached host `at` on its way.
#[derive(Debug, Clone, Copy)]
struct AtHost {
    packet: Packet,
    at: HostId,
}

/// Hosts 0..3 on a line; every hop takes `hop` and loses nothing.
#[derive(Debug)]
struct Line {
    hop: Duration,
    relayed: u64,
    delivered: u64,
}

impl Line {
    fn forward<S: Schedule<AtHost>>(&mut self, now: Instant, packet: Packet, at: HostId, sched: &mut S) {
        let next = if packet.to > at { HostId(at.0 + 1) } else { HostId(at.0 - 1) };
        if next == packet.to {
            self.delivered += 1;
            sched.deliver(now + self.hop, 0, packet);
        } else {
            sched.wake(now + self.hop, AtHost { packet, at: next });
        }
    }
}

impl Medium for Line {
    type Event = AtHost;
    type Report = (u64, u64);
    fn send<S: Schedule<AtHost>>(&mut self, now: Instant, packet: Packet, sched: &mut S) {
        self.forward(now, packet, packet.from, sched);
    }
    fn handle<S: Schedule<AtHost>>(&mut self, now: Instant, ev: AtHost, sched: &mut S) {
        self.relayed += 1;
        self.forward(now, ev.packet, ev.at, sched);
    }
    fn report(&self) -> (u64, u64) {
        (self.relayed, self.delivered)
    }
}

struct LineRun<'a> {
    s: &'a LineScenario,
    cc: CcConfig,
}

impl Runner for LineRun<'_> {
    fn run_rep(&self, rep: u32, progress: Option<&dyn Progress>) -> RepResult {
        self.run_rep_detail(rep, progress, Detail::Summary)
    }
    fn run_rep_detail(&self, rep: u32, progress: Option<&dyn Progress>, detail: Detail) -> RepResult {
        let s = self.s;
        let ep = |h: u32| Endpoint::new(Config::new(self.cc.clone()), Stream::Host(h).small_rng(s.seed, rep)).unwrap();
        let hosts = vec![
            UdpHost::client(ep(0), HostId(2), s.exchanges as usize),
            UdpHost::server(ep(1)),
            UdpHost::server(ep(2).with_handler(Box::new(FixedResponse::payload(vec![7; 10])))),
        ];
        let stack = UdpStack::new(hosts, Request::get("x"), 28).with_detail(detail);
        let spec = WorkloadSpec {
            kind: WorkloadKind::Continuous,
            exchanges: s.exchanges,
            batch_min: 1,
            batch_max: 1,
            start_spread_s: 0.0,
        };
        let workload = Batches::new(spec, 1, s.seed, rep);
        let line = Line { hop: Duration::from_millis(s.hop_ms), relayed: 0, delivered: 0 };
        let until = engine::Until::SafetyNet(Instant::ZERO + Duration::from_secs(3600));
        engine::run(line, stack, workload, Recorder::new(rep, progress), until).map_network(|(relayed, delivered)| {
            NetworkReport::Other(serde_json::json!({ "relayed": relayed, "delivered": delivered }))
        })
    }
}

/// Registers the line once for the tests of this file (registration is for the process).
fn register_line() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| worlds::register(&LINE).unwrap());
}

#[test]
fn a_world_of_its_own_runs_through_a_sweep() {
    register_line();
    let plan = lab::sweep::parse_plan(
        "seed = 4\nreps = 2\n[base]\nenv = \"line\"\nexchanges = 3\n[matrix]\ncc = [\"default\", \"cocoa\"]\nhop_ms = [10, 25]\n",
    )
    .unwrap();
    assert_eq!(plan.cells.len(), 4);
    let dir = tempfile::tempdir().unwrap();
    let o = lab::sweep::run(&plan, dir.path(), None, Some(1), false, &lab::stop::Stop::default()).unwrap();
    assert_eq!((o.ran, o.skipped), (4, 0));
    for cell in &plan.cells {
        let s: &LineScenario = cell.scenario.as_any().downcast_ref().expect("a line cell");
        let text = std::fs::read_to_string(dir.path().join("cells").join(format!("{}.json", cell.id))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        // each exchange: the request two hops, the response two hops; three back to back
        let secs = |ms: u64| (ms * 1_000_000) as f64 / 1e9;
        assert_eq!(v["rtt_s"]["p50"].as_f64(), Some(secs(4 * s.hop_ms)), "{}", cell.id);
        assert_eq!(v["fct_s"]["p50"].as_f64(), Some(secs(3 * 4 * s.hop_ms)), "{}", cell.id);
        assert_eq!(v["exchanges"].as_u64(), Some(2 * 3));
        // each replication: 6 datagrams, each relayed once by the middle host and delivered once
        let reps = v["network"]["reps"].as_array().unwrap();
        assert_eq!(reps.len(), 2);
        assert!(reps.iter().all(|r| r["relayed"] == 6 && r["delivered"] == 6), "{reps:?}");
        assert_eq!(v["network"]["model"], "other");
        assert_eq!(v["scenario"]["env"], "line");
    }
    // the tidy table has every cell's client rows
    let tidy = std::fs::read_to_string(dir.path().join("clients.csv")).unwrap();
    assert_eq!(tidy.lines().count(), 1 + 4 * 2);
    // the report takes its cells too
    let n = lab::report::write(dir.path(), &dir.path().join("report")).unwrap();
    assert_eq!(n, 4);
    // its figures are named by the world's title and the parameters the plan varies
    let html = std::fs::read_to_string(dir.path().join("report").join("index.html")).unwrap();
    assert!(
        html.contains("<h3>three-host line, hop_ms=10</h3>") && html.contains("<h3>three-host line, hop_ms=25</h3>")
    );
    // a scenario naming an env nobody registered is refused with the known ones
    let e = lab::sweep::parse_plan("[base]\nenv = \"lora\"\n").unwrap_err();
    assert!(e.contains("env = \"lora\": unknown") && e.contains("\"line\" is the three-host line"), "{e}");
}

#[test]
fn a_world_of_its_own_runs_through_sim_and_its_tables() {
    register_line();
    let dir = tempfile::tempdir().unwrap();
    let text = "env = \"line\"\nexchanges = 3\nhop_ms = 10\n".to_string();
    let req = lab::sim::Request {
        text: Some((text.clone(), "line.toml".into())),
        cc: vec!["default".into(), "cocoa".into()],
        reps: Some(2),
        ..Default::default()
    };
    let o = lab::sim::run_library(&req, Some(dir.path()), &lab::stop::Stop::default()).unwrap();
    assert_eq!(o.incomplete, None);
    // two algorithms: {"runs": [...]}, each 2 replications of 3 back-to-back exchanges, an RTT
    // of 4 hops of 10 ms and an FCT of 3 of them
    let runs = o.summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (r, cc) in runs.iter().zip(["default", "cocoa"]) {
        assert_eq!(r["exchanges"], 2 * 3);
        assert_eq!(r["rtt_s"]["p50"].as_f64(), Some(0.04));
        assert_eq!(r["fct_s"]["p50"].as_f64(), Some(0.12));
        assert!(r["scenario"]["cc"].as_str().unwrap().starts_with(cc), "{r}");
        assert_eq!(r["scenario"]["reps"], 2);
    }
    // the tables every world has: a client a replication, an exchange a row, an RTO a row
    let rows: std::collections::BTreeMap<&str, usize> = o.tables.iter().map(|(n, t)| (*n, t.len())).collect();
    assert_eq!(rows, [("clients", 2 * 2), ("exchanges", 2 * 2 * 3), ("rto", 2 * 2 * 3)].into_iter().collect());
    let clients = std::fs::read_to_string(dir.path().join("clients.csv")).unwrap();
    assert_eq!(clients.lines().count(), 1 + 2 * 2);
    assert!(clients.lines().skip(1).all(|l| l.starts_with("default,") || l.starts_with("cocoa,")), "{clients}");
    assert!(dir.path().join("summary.json").exists() && !dir.path().join("nodes.csv").exists());
    // the built-in worlds' options are refused, naming the world
    let bad = lab::sim::Request { clients: Some(3), ..req.clone() };
    let e = lab::sim::run_library(&bad, None, &lab::stop::Stop::default()).unwrap_err().to_string();
    assert!(e.contains("--clients is an option of the built-in worlds") && e.contains("three-host line"), "{e}");
}
