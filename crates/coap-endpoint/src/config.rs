//! Endpoint configuration: the RFC 7252 §4.8.2 derived times and this implementation's bounds.

use coap_cc::{CcConfig, Duration};

/// What an endpoint needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// The congestion-control algorithm; one controller per destination is built from it.
    pub cc: CcConfig,
    /// Length of the tokens this endpoint makes (0–8). With token marking one more byte, the
    /// transmission number, goes in front.
    pub token_len: usize,
    /// How long a CON request's response is cached for duplicates, and how long a finished
    /// exchange is kept to count duplicate responses (RFC 7252 §4.8.2: 247 s).
    pub exchange_lifetime: Duration,
    /// The same for NON (RFC 7252 §4.8.2: 145 s); also how long a NON request waits for a response.
    pub non_lifetime: Duration,
    /// Memory budget of the deduplication cache, bytes (64 MiB by default). Entries are kept for
    /// their lifetime within it; when full, the oldest go early and are counted
    /// ([`crate::Endpoint::dedup_early_evictions`]). Each entry costs
    /// [`crate::ENTRY_OVERHEAD`] bytes plus its peer address and its reply's options and payload.
    pub dedup_bytes: usize,
    /// At most this many requests answered later (and as many separate responses awaiting
    /// their ACK); beyond, a slow request gets 5.03.
    pub max_deferred: usize,
    /// A handler that answers later gets an empty ACK after this long.
    pub separate_ack_delay: Duration,
    /// Requests whose encoding exceeds this are refused (RFC 7252 §4.6: 1152 by default).
    pub max_message_size: usize,
    /// Echo the transmission-number options in piggybacked responses (a server that knows them).
    pub echo_transmission_numbers: bool,
    /// Emit [`crate::Event::Transmission`] for every request transmission (for logs).
    pub transmission_events: bool,
    /// When a CON request that gets no answer fails.
    pub give_up: GiveUp,
    /// The amplification limit (RFC 9175 §2.4, applied as RFC 9000 §8.1 bounds an unvalidated
    /// address; see [`crate::amplification`]): what the server role sends to a source not
    /// verified yet counts against this many times the bytes received from it plus
    /// `amplification_allowance`; past it a request gets 4.01 Unauthorized with an Echo option,
    /// and notifications and retransmissions stop. A repeat carrying the Echo, or an ACK or RST
    /// of a CON sent to the source, verifies it. `None` (the default here; on with 3 in
    /// `coap-net`'s servers): off.
    pub amplification_factor: Option<u32>,
    /// Bytes an unverified source may be sent beyond the factor in each `echo_lifetime`
    /// (1,152: one datagram of RFC 7252 §4.6).
    pub amplification_allowance: usize,
    /// How long a verified source stays verified, how long an Echo value is accepted, and how
    /// long an unverified source's account lasts before it starts afresh.
    pub echo_lifetime: Duration,
    /// Verified sources remembered at once (the oldest are forgotten first).
    pub max_verified: usize,
    /// Unverified sources with an account at once; while all are in their window, a new
    /// source's answers are held to the factor × the request each answers.
    pub max_accounts: usize,
    /// Finished exchanges kept at once to count late duplicate responses (each for
    /// `exchange_lifetime`); beyond, the oldest retire early and are counted
    /// ([`crate::Endpoint::early_retirements`]): a duplicate of one of them arrives uncounted.
    /// Unbounded by default (the simulator counts every duplicate); the real-network drivers
    /// bound it, so a long fast run's memory does not grow with its rate × 247 s.
    pub max_finished: usize,
    /// Deliver each exchange's report ([`crate::Event::Retired`]) as soon as it finishes, with
    /// `duplicates` 0: the duplicates that come later are counted only in
    /// [`crate::Endpoint::duplicates_received`]. A finished exchange then keeps only what
    /// recognises a duplicate (about 40 bytes, not its report) until it retires: the simulator's
    /// choice when no per-exchange output is asked for. Off by default.
    pub report_at_finish: bool,
    /// Copy each response's payload into its event ([`crate::Event::Response`],
    /// [`crate::Event::Notification`]). Off, the payload comes empty: no allocation per response
    /// for a driver that only counts them (the simulator's clients). On by default.
    pub response_payloads: bool,
    /// Observers a server keeps at once (RFC 7641); beyond, a registration's answer goes
    /// without the Observe option (the client is not added).
    pub max_observers: usize,
    /// Observations a client keeps at once; beyond, a registration's notifications are not
    /// followed (they get RST).
    pub max_observations: usize,
    /// The seed of the deduplication cache's hash. `None` (the default): drawn per cache from
    /// the address-space layout and the time, so a peer cannot aim its Message IDs at one
    /// bucket. A fixed seed makes every lookup take the same steps in every run (the simulator's
    /// choice: its profile-guided build is trained on such runs). Results never depend on it.
    pub dedup_hash_seed: Option<u64>,
}

/// When a CON request that gets no answer fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GiveUp {
    /// When the timer after the last retransmission expires (RFC 7252; Californium, libcoap).
    #[default]
    AfterLastTimer,
    /// At the instant of the last retransmission: the transaction is freed as it is sent, and a
    /// response to it is ignored (Contiki 3.0's Erbium).
    AtLastSend,
}

impl GiveUp {
    /// `after_last_timer` or `at_last_send`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "after_last_timer" => Some(GiveUp::AfterLastTimer),
            "at_last_send" => Some(GiveUp::AtLastSend),
            _ => None,
        }
    }

    /// The name [`GiveUp::parse`] takes.
    pub fn name(self) -> &'static str {
        match self {
            GiveUp::AfterLastTimer => "after_last_timer",
            GiveUp::AtLastSend => "at_last_send",
        }
    }
}

impl Config {
    /// Defaults around `cc`.
    pub fn new(cc: CcConfig) -> Self {
        Config {
            cc,
            token_len: 0,
            exchange_lifetime: Duration::from_secs(247),
            non_lifetime: Duration::from_secs(145),
            dedup_bytes: 64 << 20,
            max_deferred: 4096,
            separate_ack_delay: Duration::from_millis(200),
            max_message_size: 1152,
            echo_transmission_numbers: true,
            transmission_events: false,
            give_up: GiveUp::AfterLastTimer,
            amplification_factor: None,
            amplification_allowance: 1152,
            echo_lifetime: Duration::from_secs(60),
            max_verified: 16384,
            max_accounts: 16384,
            max_finished: usize::MAX,
            report_at_finish: false,
            response_payloads: true,
            max_observers: 1024,
            max_observations: 64,
            dedup_hash_seed: None,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.token_len > coap_wire::MAX_TOKEN_LEN - 1 {
            return Err(ConfigError("token_len must be at most 7 (one byte is kept for token marking)"));
        }
        if self.dedup_bytes < 4 * crate::ENTRY_OVERHEAD {
            return Err(ConfigError("dedup_bytes must hold a few entries (at least 640 bytes)"));
        }
        if self.max_deferred == 0 {
            return Err(ConfigError("max_deferred must be at least 1"));
        }
        if self.max_message_size < 64 {
            return Err(ConfigError("max_message_size must be at least 64"));
        }
        Ok(())
    }
}

/// An impossible configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigError(pub &'static str);

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}
impl std::error::Error for ConfigError {}
