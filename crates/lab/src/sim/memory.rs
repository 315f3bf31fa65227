//! The memory a bottleneck run needs, estimated, and the refusal of a run the machine cannot hold.

use netsim::{Detail, Scenario};

type Error = Box<dyn std::error::Error>;

/// What a bottleneck client costs while its replication runs (endpoint, controller, workload,
/// the exchanges it finished in the last 247 s, its share of the event queue and of the server's
/// deduplication cache): measured as peak RSS, about 2.0 KB at 10,000 and 20,000 clients behind
/// a bottleneck scaled ×10 and ×20, and at 1,000,000 (docs/performance.md); counted
/// generously, as a refusal costs less than a machine driven into swap.
const LIVE_BYTES_PER_CLIENT: u64 = 6_000;
/// What a replication keeps of its RTTs until the summary: 8 bytes each up to netsim's exact cap,
/// then a sketch of at most about 240 KB (counted 256 KB).
const RTT_BYTES: u64 = 8;
const SKETCH_BYTES: u64 = 256 << 10;
/// With `--out`, every exchange's record.
const RECORD_BYTES_PER_EXCHANGE: u64 = 180;
const BASE_BYTES: u64 = 32 << 20;

/// What one replication of `s` keeps of its exchanges until the summary, bytes.
fn bytes_kept(s: &Scenario, detail: Detail) -> u64 {
    let exchanges = s.clients as u64 * s.exchanges as u64;
    match detail {
        Detail::Summary if exchanges > runstats::EXACT_CAP as u64 => {
            runstats::EXACT_CAP as u64 * RTT_BYTES + SKETCH_BYTES
        }
        Detail::Summary => exchanges * RTT_BYTES,
        Detail::Exchanges => exchanges * RECORD_BYTES_PER_EXCHANGE,
    }
}

/// The memory a run of `scenarios` needs, estimated: what every replication keeps of its
/// exchanges (`detail`), and the live state of `threads` replications at once.
fn memory_estimate(scenarios: &[Scenario], threads: usize, detail: Detail) -> u64 {
    let records: u64 = scenarios.iter().map(|s| s.reps as u64 * bytes_kept(s, detail)).sum();
    let live = scenarios
        .iter()
        .map(|s| s.clients as u64 * LIVE_BYTES_PER_CLIENT * (s.reps as u64).min(threads as u64))
        .max()
        .unwrap_or(0);
    BASE_BYTES + records + live
}

/// The memory the machine has available (Linux's MemAvailable), if it says.
fn memory_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Stops, with the estimate, a run that would not fit in the machine's available memory.
pub(crate) fn check_memory(scenarios: &[Scenario], threads: usize, detail: Detail) -> Result<(), Error> {
    let need = memory_estimate(scenarios, threads, detail);
    let Some(have) = memory_available() else { return Ok(()) };
    if need <= have {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
    let s = &scenarios[0];
    Err(format!(
        "this run would need about {:.1} GB ({} clients × {} exchanges × {} replication(s) × {} algorithm(s): about {} KB per \
         client while its replication runs, {} replication(s) at once, and {} MB a replication keeps for the summary), but \
         the machine has {:.1} GB available. Use fewer clients, exchanges or replications, or fewer --threads; \
         --ignore-memory runs it anyway",
        gb(need),
        s.clients,
        s.exchanges,
        s.reps,
        scenarios.len(),
        LIVE_BYTES_PER_CLIENT / 1000,
        (s.reps as usize).min(threads),
        bytes_kept(s, detail) >> 20,
        gb(have)
    )
    .into())
}
