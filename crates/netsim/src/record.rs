//! What one replication leaves behind.

use serde::Serialize;

use crate::link::LinkStats;

/// One exchange.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeRecord {
    /// The client.
    pub client: u32,
    /// Its index among the client's exchanges.
    pub index: u32,
    /// First transmission, ns.
    pub start_ns: u64,
    /// First transmission to response, ns (None if it failed).
    pub rtt_ns: Option<u64>,
    /// Retransmissions sent.
    pub retransmissions: u32,
    /// The RTOs that expired, ns.
    pub expired_rtos_ns: Vec<u64>,
    /// Responses that arrived after the first.
    pub duplicates: u32,
}

/// One client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientRecord {
    /// The client.
    pub client: u32,
    /// First transmission of the first request to the first response to the last, ns (None if
    /// the last exchange failed).
    pub fct_ns: Option<u64>,
    /// Exchanges run.
    pub exchanges: u32,
    /// Exchanges that failed.
    pub failed: u32,
    /// Retransmissions sent.
    pub retransmissions: u32,
    /// Duplicate responses received (unnecessary retransmissions).
    pub duplicates: u32,
    /// The largest RTO that expired, ns.
    pub max_expired_rto_ns: u64,
}

/// One replication.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepResult {
    /// Replication number.
    pub rep: u32,
    /// Per client.
    pub clients: Vec<ClientRecord>,
    /// Per exchange, by client then index.
    pub exchanges: Vec<ExchangeRecord>,
    /// Clients → router.
    pub uplink: LinkStats,
    /// Router → clients.
    pub downlink: LinkStats,
    /// Downlink busy time spent on responses that arrived as duplicates, ns.
    pub wasted_downlink_ns: u64,
    /// Events processed.
    pub events: u64,
    /// Virtual time when the last client finished, ns.
    pub end_ns: u64,
}
