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

/// One value of the result tables, typed: a CSV file writes it as text, an in-memory table
/// ([`crate::tables`]) keeps its type; one definition of every row for both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell {
    /// A count or an index.
    Int(i64),
    /// A time, ns (None: none, an empty field or NaN); seconds in the tables.
    Secs(Option<u64>),
    /// A flag.
    Flag(bool),
}

impl Cell {
    /// As a CSV field.
    pub(crate) fn text(self) -> String {
        match self {
            Cell::Int(v) => v.to_string(),
            Cell::Secs(ns) => ns.map(secs).unwrap_or_default(),
            Cell::Flag(v) => v.to_string(),
        }
    }
}

/// The columns of `exchanges.csv` after `cc`, `cc_params`.
pub(crate) const EXCHANGE_COLUMNS: [&str; 8] =
    ["rep", "client", "exchange", "start_s", "rtt_s", "retransmissions", "duplicates", "expired_rtos"];

/// An exchange's values of [`EXCHANGE_COLUMNS`], its client named `client`.
pub(crate) fn exchange_cells(rep: u32, client: u32, e: &netsim::ExchangeRecord) -> [Cell; 8] {
    [
        Cell::Int(rep.into()),
        Cell::Int(client.into()),
        Cell::Int(e.index.into()),
        Cell::Secs(Some(e.start_ns)),
        Cell::Secs(e.rtt_ns),
        Cell::Int(e.retransmissions.into()),
        Cell::Int(e.duplicates.into()),
        Cell::Int(e.expired_rtos_ns.len() as i64),
    ]
}

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
    exchanges.write_record(cc.iter().cloned().chain(exchange_cells(rep, client, e).map(Cell::text)))?;
    for row in rto_cells(rep, client, e) {
        rto.write_record(cc.iter().cloned().chain(row.map(Cell::text)))?;
    }
    Ok(())
}

/// The columns of `rto.csv` after `cc`, `cc_params`: one row per RTO armed for an exchange.
pub(crate) const RTO_COLUMNS: [&str; 6] = ["rep", "client", "exchange", "armed_s", "rto_s", "expired"];

/// An exchange's rows of [`RTO_COLUMNS`], its client named `client`: each RTO armed when the
/// previous one expired, the last one `expired = false` if the exchange ended while it ran.
pub(crate) fn rto_cells(rep: u32, client: u32, e: &netsim::ExchangeRecord) -> impl Iterator<Item = [Cell; 6]> + '_ {
    armed_rtos(e).map(move |(at, t, expired)| {
        [
            Cell::Int(rep.into()),
            Cell::Int(client.into()),
            Cell::Int(e.index.into()),
            Cell::Secs(Some(at)),
            Cell::Secs(Some(t)),
            Cell::Flag(expired),
        ]
    })
}

/// Every RTO armed for an exchange, as (armed at, RTO, expired), ns: each armed when the
/// previous one expired, the last one unexpired if the exchange ended while it ran.
fn armed_rtos(e: &netsim::ExchangeRecord) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
    let armed = e.expired_rtos_ns.iter().map(|&t| (t, true)).chain(e.last_rto_ns.map(|t| (t, false)));
    armed.scan(e.start_ns, |at, (t, expired)| {
        let row = (*at, t, expired);
        *at += t;
        Some(row)
    })
}

/// The per-client tables' columns after their leading ones (`sim --out`'s `cc`, a sweep's
/// parameters) and [`client_cells`]' values for them.
pub(crate) const CLIENT_COLUMNS: [&str; 8] =
    ["rep", "client", "fct_s", "exchanges", "failed", "retransmissions", "duplicates", "max_expired_rto_s"];

/// One client's values of [`CLIENT_COLUMNS`], the client named `client`.
pub(crate) fn client_cells(rep: u32, client: u32, c: &netsim::ClientRecord) -> [Cell; 8] {
    [
        Cell::Int(rep.into()),
        Cell::Int(client.into()),
        Cell::Secs(c.fct_ns),
        Cell::Int(c.exchanges.into()),
        Cell::Int(c.failed.into()),
        Cell::Int(c.retransmissions.into()),
        Cell::Int(c.duplicates.into()),
        Cell::Secs(Some(c.max_expired_rto_ns)),
    ]
}

/// One client's values of [`CLIENT_COLUMNS`] as CSV fields.
pub(crate) fn client_row(rep: u32, client: u32, c: &netsim::ClientRecord) -> [String; 8] {
    client_cells(rep, client, c).map(Cell::text)
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

    #[test]
    fn a_cell_is_a_csv_field_of_nine_decimals_and_a_missing_time_is_empty() {
        let c = netsim::ClientRecord {
            client: 4,
            fct_ns: None,
            exchanges: 50,
            failed: 1,
            retransmissions: 7,
            duplicates: 2,
            max_expired_rto_ns: 2_500_000_001,
        };
        assert_eq!(client_row(3, 5, &c), ["3", "5", "", "50", "1", "7", "2", "2.500000001"]);
        assert_eq!(client_cells(3, 5, &c)[2], Cell::Secs(None));
        assert_eq!(Cell::Flag(false).text(), "false");
    }
}
