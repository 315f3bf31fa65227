//! The statistics of `coapcc load` (the real stack's clients against a real server), in the
//! simulator's terms: the fields of a simulation's [`Summary`] that a real run has, computed by
//! the same definitions (`runstats`: one quantile rule, one RTT sketch), so `load --json` and
//! `sim --json` can be read side by side.

use coap_net::load::LoadResult;
use netsim::summary::NetworkSummary;
use netsim::Summary;
use runstats::{Distribution, Tail};

/// A load run's summary from its clients' streamed statistics.
///
/// A request the server refused (4.01 again after the repeat with its Echo) is an exchange that
/// failed; a failed block-wise transfer is a failed exchange whose blocks were each answered.
pub fn summary(r: &LoadResult) -> Summary {
    let mut hist: Vec<u64> = Vec::new();
    for c in &r.clients {
        runstats::add_histogram(&mut hist, &c.retransmissions_hist);
    }
    let fcts: Vec<f64> = r.clients.iter().filter_map(|c| c.fct()).map(|d| d.as_secs_f64()).collect();
    let (rtt_s, rtt_s_relative_error) = runstats::distribution(std::iter::once(&r.rtts));
    let mut s = Summary {
        clients_without_fct: (r.clients.len() - fcts.len()) as u64,
        fct_s: Distribution::of(fcts),
        exchanges: r.clients.iter().map(|c| c.tally.exchanges + c.refused).sum(),
        failed_exchanges: r
            .clients
            .iter()
            .map(|c| (c.tally.failed + c.refused + c.failed_transfers).min(c.tally.exchanges + c.refused))
            .sum(),
        retransmissions_hist: hist,
        rtt_s,
        rtt_s_relative_error,
        unnecessary_retx_per_client: Tail::of(r.clients.iter().map(|c| c.tally.duplicates as f64).collect()),
        max_expired_rto_per_client_s: Tail::of(
            r.clients.iter().map(|c| c.tally.max_expired_rto.as_secs_f64()).collect(),
        ),
        lln: None,
        network: NetworkSummary::Real,
        events: 0,
        truncated_reps: 0,
        warnings: Vec::new(),
    };
    s.warnings = s.warnings_of(r.clients.len() as u64);
    s
}

/// Requests sent: every exchange's first transmission and its retransmissions.
/// (`hist[i]`: exchanges with `i` retransmissions.)
pub fn requests_sent(exchanges: u64, hist: &[u64]) -> u64 {
    exchanges + hist.iter().enumerate().map(|(i, n)| i as u64 * n).sum::<u64>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn requests_are_first_transmissions_and_retransmissions() {
        // 3 exchanges without a retransmission, 2 with one, 1 with two: 6 + 2 + 2
        assert_eq!(super::requests_sent(6, &[3, 2, 1]), 10);
        assert_eq!(super::requests_sent(0, &[]), 0);
    }
}
