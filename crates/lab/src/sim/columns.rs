//! The columns of the CSV tables `sim --out` and sweeps write, and one record's values for them:
//! one definition for every writer (the files and the in-memory tables).

/// Nanoseconds as seconds with 9 decimals: the time format of every CSV file.
pub(crate) fn secs(ns: u64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

/// A resolved scenario's stack ([`netsim::Scenario::stack`]) from its JSON, of either world: `tcp[:...]`
/// for a bottleneck over TCP, else its `cc`.
pub(crate) fn stack_of(scenario: &serde_json::Value) -> String {
    if scenario["transport"] == "tcp" {
        serde_json::from_value::<netsim::tcp::TcpParams>(scenario["tcp"].clone()).map_or("tcp".into(), |p| p.to_spec())
    } else {
        scenario["cc"].as_str().unwrap_or_default().to_string()
    }
}

/// The `cc` and `cc_params` columns of every CSV, from a resolved spec: the algorithm's name
/// (`default`, `tcp`), and the parameters that differ from its defaults as `key=value,...` in
/// the algorithm's parameter order, e.g. `max_retransmit=20`, or [`NO_CC_PARAMS`] when none do.
pub(crate) fn cc_columns(spec: &str) -> [String; 2] {
    match spec.split_once(':') {
        Some((name, params)) if !params.is_empty() => [name.to_string(), params.to_string()],
        _ => [spec.split(':').next().unwrap_or(spec).to_string(), NO_CC_PARAMS.to_string()],
    }
}

/// `cc_params` of an algorithm run with its defaults. Never empty: pandas, polars and R read an
/// empty field as missing, and a `groupby(["cc", "cc_params"])` then drops those rows.
pub const NO_CC_PARAMS: &str = "defaults";

/// The columns of `exchanges.csv` after `cc`, `cc_params`.
pub(crate) const EXCHANGE_COLUMNS: [&str; 8] =
    ["rep", "client", "exchange", "start_s", "rtt_s", "retransmissions", "duplicates", "expired_rtos"];

/// Writes an exchange's row of `exchanges.csv` and its rows of `rto.csv` after the `cc` columns,
/// its client named `client`.
pub(crate) fn write_exchange<W: std::io::Write>(
    exchanges: &mut csv::Writer<W>,
    rto: &mut csv::Writer<W>,
    cc: &[String; 2],
    rep: u32,
    client: u32,
    e: &netsim::ExchangeRecord,
) -> csv::Result<()> {
    exchanges.write_record(cc.iter().cloned().chain([
        rep.to_string(),
        client.to_string(),
        e.index.to_string(),
        secs(e.start_ns),
        e.rtt_ns.map(secs).unwrap_or_default(),
        e.retransmissions.to_string(),
        e.duplicates.to_string(),
        e.expired_rtos_ns.len().to_string(),
    ]))?;
    for row in rto_rows(rep, client, e) {
        rto.write_record(cc.iter().cloned().chain(row))?;
    }
    Ok(())
}

/// The columns of `rto.csv` after `cc`, `cc_params`: one row per RTO armed for an exchange.
pub(crate) const RTO_COLUMNS: [&str; 6] = ["rep", "client", "exchange", "armed_s", "rto_s", "expired"];

/// An exchange's rows of `rto.csv` (after `cc`, `cc_params`), its client named `client`: each
/// RTO armed when the previous one expired, the last one `expired = false` if the exchange
/// ended while it ran.
pub(crate) fn rto_rows(rep: u32, client: u32, e: &netsim::ExchangeRecord) -> Vec<[String; 6]> {
    armed_rtos(e)
        .map(|(at, t, expired)| {
            [rep.to_string(), client.to_string(), e.index.to_string(), secs(at), secs(t), expired.to_string()]
        })
        .collect()
}

/// Every RTO armed for an exchange, as (armed at, RTO, expired), ns: each armed when the
/// previous one expired, the last one unexpired if the exchange ended while it ran.
pub(crate) fn armed_rtos(e: &netsim::ExchangeRecord) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
    let armed = e.expired_rtos_ns.iter().map(|&t| (t, true)).chain(e.last_rto_ns.map(|t| (t, false)));
    armed.scan(e.start_ns, |at, (t, expired)| {
        let row = (*at, t, expired);
        *at += t;
        Some(row)
    })
}

/// The per-client tables' columns after their leading ones (`sim --out`'s `cc`, a sweep's
/// parameters) and [`client_row`]'s values for them.
pub(crate) const CLIENT_COLUMNS: [&str; 8] =
    ["rep", "client", "fct_s", "exchanges", "failed", "retransmissions", "duplicates", "max_expired_rto_s"];

/// One client's values of [`CLIENT_COLUMNS`], the client named `client`.
pub(crate) fn client_row(rep: u32, client: u32, c: &netsim::ClientRecord) -> [String; 8] {
    [
        rep.to_string(),
        client.to_string(),
        c.fct_ns.map(secs).unwrap_or_default(),
        c.exchanges.to_string(),
        c.failed.to_string(),
        c.retransmissions.to_string(),
        c.duplicates.to_string(),
        secs(c.max_expired_rto_ns),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cc_columns_split_a_spec_and_name_the_defaults() {
        assert_eq!(cc_columns("default:max_retransmit=20"), ["default", "max_retransmit=20"]);
        assert_eq!(cc_columns("fasor:max_retransmit=20,dither=false"), ["fasor", "max_retransmit=20,dither=false"]);
        // no parameter off its default: a word, never an empty field (read as missing)
        assert_eq!(cc_columns("tcp"), ["tcp", "defaults"]);
        assert_eq!(cc_columns("cocoa:"), ["cocoa", "defaults"]);
    }
}
