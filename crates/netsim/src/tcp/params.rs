//! The TCP model's parameters: a scenario's `[tcp]` table (with `transport = "tcp"`), or
//! `tcp:key=value,...` where the tools list what to compare (`sim --cc`). The defaults are the reference testbed's
//! Linux 4.9 (Debian 9) as configured there; every Linux mechanism has a switch whose other
//! position is the textbook behaviour (the mechanisms and their sources: [`super`]).

use super::rtt::RtoRule;

/// When a tail loss probe is scheduled, as one Linux generation or another does it
/// (`tcp_schedule_loss_probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TlpRule {
    /// Linux 4.9 (the reference testbed's): in the Open state only, when the connection is
    /// limited by its window or its application; 2·SRTT, with one segment out at least
    /// 1.5·SRTT + 200 ms (the delayed ACK), 10 ms at least.
    #[default]
    #[serde(rename = "linux_4_9")]
    Linux49,
    /// Linux 5 and 6 (RACK-TLP, RFC 8985, as this machine's 6.18 runs it): in the Open or CWR
    /// state, whatever limits the connection; 2·SRTT plus 200 ms with one segment out, plus
    /// 2 ms otherwise. And as from 4.13 (`tcp_ack`'s FLAG_SET_XMIT_TIMER), only an ACK that
    /// acknowledges data sets the probe or RTO timer again, where 4.9 schedules a probe at every
    /// ACK that finds the RTO pending, duplicate ACKs included.
    #[serde(rename = "linux_6")]
    Linux6,
}

impl TlpRule {
    /// The parameter's spelling.
    pub fn name(self) -> &'static str {
        match self {
            TlpRule::Linux49 => "linux_4_9",
            TlpRule::Linux6 => "linux_6",
        }
    }

    fn is_default(&self) -> bool {
        *self == TlpRule::default()
    }
}

/// TCP parameters (a scenario's `[tcp]` table, or `tcp:key=value,...`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpParams {
    /// Maximum segment size: the MTU less 40 header bytes (derived from the scenario's MTU and
    /// IP header, not a key).
    #[serde(skip)]
    pub mss: u32,
    /// Initial congestion window, segments (Linux: 10, RFC 6928).
    pub init_cwnd: u32,
    /// RTO before any sample, s (Linux's TCP_TIMEOUT_INIT: 1, in 4.9 as in 6.x and not settable
    /// there; the thesis states 2, which a Linux 4.9 host could not have used).
    pub initial_rto: f64,
    /// Lower bound of the RTO, s (Linux TCP_RTO_MIN: 0.2).
    pub min_rto: f64,
    /// Upper bound of the RTO, s (Linux TCP_RTO_MAX: 120).
    pub max_rto: f64,
    /// SYN and SYN/ACK retransmissions before giving up (the testbed: 40).
    pub syn_retries: u32,
    /// `tcp_syn_linear_timeouts` (Linux 6.5 and later: 4; 4.9 has none): a connecting SYN's first
    /// this many retransmissions wait the initial RTO without backing off, and the connection
    /// gives up after `syn_retries` + this many retransmissions (a count, as 6.5's
    /// `tcp_write_timeout` has it for SYN_SENT). Read in a capture of Linux 6.18: SYNs at 0, 1.02
    /// and 2.05 s (docs/tcp-mechanisms.md). Left out of a scenario's JSON at 0 (cell ids of
    /// results from before it).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub syn_linear_timeouts: u32,
    /// Delayed-ACK timer, s (the testbed: a constant 200 ms).
    pub delayed_ack: f64,
    /// Nagle's algorithm (Linux's, with Minshall's refinement).
    pub nagle: bool,
    /// Bytes of TCP options in SYN and SYN/ACK besides SACK-permitted (MSS 4 + window scale 4).
    pub syn_options: u32,
    /// `tcp_retries2` (Linux: 15).
    pub retries2: u32,
    /// How the RTO is computed (`rto=linux|rfc6298`).
    pub rto: RtoRule,
    /// SACK and D-SACK (`tcp_sack`, `tcp_dsack`; Linux: on) with FACK-style loss marking and
    /// D-SACK undo; off: NewReno's duplicate-ACK counting.
    pub sack: bool,
    /// F-RTO (`tcp_frto`; Linux: 2, on).
    pub frto: bool,
    /// `tcp_early_retrans`: 0 off, 1 early retransmit, 2 delayed early retransmit, 3 delayed early
    /// retransmit and tail loss probe, 4 tail loss probe only (Linux 4.9: 3).
    pub early_retrans: u32,
    /// When a tail loss probe goes ([`TlpRule`]; left out of a scenario's JSON at its default,
    /// so results from before it keep their cell ids).
    #[serde(skip_serializing_if = "TlpRule::is_default")]
    pub tlp: TlpRule,
    /// Linux's timer wheel at this many ticks a second (`CONFIG_HZ`; Debian's kernels: 250): the
    /// retransmission timer (RTO, loss probe, early retransmit; a SYN's) runs at the next bucket
    /// boundary of its level, 8^level ticks, as `kernel/time/timer.c` has it from 4.8 on, so the
    /// timers of a host's connections that fall due within one bucket run together (read in a
    /// capture of Linux 6.18: docs/tcp-mechanisms.md). 0: at the exact time.
    pub timer_hz: u32,
    /// RACK detection of lost retransmissions (`tcp_recovery` = 1; Linux 4.9: on).
    pub rack: bool,
    /// `tcp_slow_start_after_idle` (Linux: on).
    pub slow_start_after_idle: bool,
    /// Linux's quick-ACK and interactive (ping-pong) modes of the delayed ACK (Linux: on); off:
    /// an ACK for every second full-sized segment, else after the timer.
    pub quickack: bool,
    /// Linux's retry limits are times (`retransmits_timed_out`: the backoff series that `retries2`,
    /// `syn_retries` and the orphan limit stand for); off: counts of expired RTOs.
    pub retries_by_time: bool,
    /// Linux's end of a connection: an orphan (closed by its application) gives up after
    /// `tcp_orphan_retries` (0, which Linux reads as 8 while its RTO is below the maximum), waits
    /// at most `fin_timeout` in FIN_WAIT_2, and TIME_WAIT lasts `time_wait`; off: orphans retry
    /// as long as `retries2` allows, FIN_WAIT_2 waits forever, TIME_WAIT lasts 2·MSL = 240 s.
    pub linux_close: bool,
    /// `tcp_orphan_retries` (Linux: 0, read as 8).
    pub orphan_retries: u32,
    /// `tcp_fin_timeout`, s (Linux: 60).
    pub fin_timeout: f64,
    /// TIME_WAIT, s (Linux TCP_TIMEWAIT_LEN: 60).
    pub time_wait: f64,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            mss: 296 - 40,
            init_cwnd: 10,
            initial_rto: 1.0,
            min_rto: 0.2,
            max_rto: 120.0,
            syn_retries: 40,
            syn_linear_timeouts: 0,
            delayed_ack: 0.2,
            nagle: true,
            syn_options: 8,
            retries2: 15,
            rto: RtoRule::Linux,
            sack: true,
            frto: true,
            early_retrans: 3,
            tlp: TlpRule::Linux49,
            timer_hz: 250,
            rack: true,
            slow_start_after_idle: true,
            quickack: true,
            retries_by_time: true,
            linux_close: true,
            orphan_retries: 0,
            fin_timeout: 60.0,
            time_wait: 60.0,
        }
    }
}

impl TcpParams {
    /// Parses `key=value,...` over the defaults.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut p = TcpParams::default();
        for kv in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("tcp: '{kv}' is not of the form key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let num = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("tcp: bad value '{v}' for {k}"))
            };
            let int = || {
                v.parse::<u32>().map_err(|_| format!("tcp: bad value '{v}' for {k}: expected a non-negative integer"))
            };
            let flag =
                || v.parse::<bool>().map_err(|_| format!("tcp: bad value '{v}' for {k}: expected true or false"));
            match k {
                "init_cwnd" => p.init_cwnd = int()?,
                "initial_rto" => p.initial_rto = num()?,
                "min_rto" => p.min_rto = num()?,
                "max_rto" => p.max_rto = num()?,
                "syn_retries" => p.syn_retries = int()?,
                "syn_linear_timeouts" => p.syn_linear_timeouts = int()?,
                "delayed_ack" => p.delayed_ack = num()?,
                "nagle" => p.nagle = flag()?,
                "syn_options" => p.syn_options = int()?,
                "retries2" => p.retries2 = int()?,
                "rto" => {
                    p.rto = match v {
                        "linux" => RtoRule::Linux,
                        "rfc6298" => RtoRule::Rfc6298,
                        _ => return Err(format!("tcp: bad value '{v}' for rto: expected linux or rfc6298")),
                    }
                }
                "tlp" => {
                    p.tlp = match v {
                        "linux_4_9" => TlpRule::Linux49,
                        "linux_6" => TlpRule::Linux6,
                        _ => return Err(format!("tcp: bad value '{v}' for tlp: expected linux_4_9 or linux_6")),
                    }
                }
                "timer_hz" => p.timer_hz = int()?,
                "sack" => p.sack = flag()?,
                "frto" => p.frto = flag()?,
                "early_retrans" => p.early_retrans = int()?,
                "rack" => p.rack = flag()?,
                "slow_start_after_idle" => p.slow_start_after_idle = flag()?,
                "quickack" => p.quickack = flag()?,
                "retries_by_time" => p.retries_by_time = flag()?,
                "linux_close" => p.linux_close = flag()?,
                "orphan_retries" => p.orphan_retries = int()?,
                "fin_timeout" => p.fin_timeout = num()?,
                "time_wait" => p.time_wait = num()?,
                _ => {
                    let names: Vec<&str> = TcpParams::default().table().iter().map(|r| r.0).collect();
                    return Err(format!("tcp has no parameter '{k}'; valid parameters: {}", names.join(", ")));
                }
            }
        }
        p.validate()?;
        Ok(p)
    }

    /// Checks the values a key's type lets through (a `[tcp]` table is read by serde; `parse`
    /// checks its numbers as it reads them).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.min_rto > 0.0 && self.min_rto <= self.max_rto && self.initial_rto > 0.0 && self.max_rto.is_finite()) {
            return Err("tcp: need 0 < min_rto <= max_rto (finite) and initial_rto > 0".into());
        }
        if self.init_cwnd == 0 {
            return Err("tcp: init_cwnd must be at least 1 (segment)".into());
        }
        if self.timer_hz != 0 && !(100..=1000).contains(&self.timer_hz) {
            return Err(format!("tcp: bad value '{}' for timer_hz: expected 0 or 100 to 1000", self.timer_hz));
        }
        if self.early_retrans > 4 {
            return Err(format!("tcp: bad value '{}' for early_retrans: expected 0 to 4", self.early_retrans));
        }
        for (k, v) in [
            ("initial_rto", self.initial_rto),
            ("delayed_ack", self.delayed_ack),
            ("fin_timeout", self.fin_timeout),
            ("time_wait", self.time_wait),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("tcp: {k} must be a finite number >= 0"));
            }
        }
        Ok(())
    }

    /// `tcp[:key=value,...]` with the parameters that differ from the defaults.
    pub fn to_spec(&self) -> String {
        let d = TcpParams::default();
        let mut parts = Vec::new();
        macro_rules! diff {
            ($($f:ident),*) => { $( if self.$f != d.$f { parts.push(format!("{}={}", stringify!($f), self.$f)); } )* };
        }
        diff!(init_cwnd, initial_rto, min_rto, max_rto, syn_retries, delayed_ack, nagle, syn_options, retries2);
        if self.rto != d.rto {
            parts.push(format!("rto={}", self.rto.name()));
        }
        diff!(sack, frto, early_retrans);
        if self.tlp != d.tlp {
            parts.push(format!("tlp={}", self.tlp.name()));
        }
        diff!(timer_hz, syn_linear_timeouts);
        diff!(
            rack,
            slow_start_after_idle,
            quickack,
            retries_by_time,
            linux_close,
            orphan_retries,
            fin_timeout,
            time_wait
        );
        if parts.is_empty() {
            "tcp".into()
        } else {
            format!("tcp:{}", parts.join(","))
        }
    }

    /// Every parameter: name, value, meaning (for `coapcc algorithms` and error messages).
    pub fn table(&self) -> Vec<(&'static str, String, &'static str)> {
        vec![
            ("init_cwnd", self.init_cwnd.to_string(), "Initial congestion window, segments (Linux, RFC 6928)."),
            ("initial_rto", self.initial_rto.to_string(), "RTO before any sample, s (Linux: 1; the thesis states 2)."),
            ("min_rto", self.min_rto.to_string(), "Linux's rto_min, s: the least variance term of the RTO."),
            ("max_rto", self.max_rto.to_string(), "Upper bound of the RTO, s (Linux)."),
            ("syn_retries", self.syn_retries.to_string(), "SYN and SYN/ACK retransmissions (the testbed: 40)."),
            (
                "syn_linear_timeouts",
                self.syn_linear_timeouts.to_string(),
                "tcp_syn_linear_timeouts: SYN retransmissions at the initial RTO before backing off (Linux 6.5+: 4; 4.9: 0).",
            ),
            ("delayed_ack", self.delayed_ack.to_string(), "Delayed-ACK timer, s (the testbed: constant 200 ms)."),
            ("nagle", self.nagle.to_string(), "Nagle's algorithm with Minshall's rule (the testbed: on)."),
            (
                "syn_options",
                self.syn_options.to_string(),
                "Option bytes of SYN and SYN/ACK besides SACK-permitted (MSS, window scale).",
            ),
            (
                "retries2",
                self.retries2.to_string(),
                "tcp_retries2: how long a connection retransmits without progress (Linux: 15).",
            ),
            (
                "rto",
                self.rto.name().to_string(),
                "RTO rule: linux (SRTT + max(variance, rto_min)) or rfc6298 (SRTT + 4·RTTVAR, clamped).",
            ),
            ("sack", self.sack.to_string(), "SACK and D-SACK with FACK loss marking and D-SACK undo; false: NewReno."),
            ("frto", self.frto.to_string(), "F-RTO spurious-timeout detection (RFC 5682; tcp_frto)."),
            (
                "early_retrans",
                self.early_retrans.to_string(),
                "tcp_early_retrans: 0 off, 1/2 (delayed) early retransmit, 3 both and tail loss probes, 4 probes only.",
            ),
            (
                "tlp",
                self.tlp.name().to_string(),
                "When a tail loss probe goes: linux_4_9 (the testbed's) or linux_6 (Linux 5-6: 2·SRTT + 200 ms with one segment out).",
            ),
            (
                "timer_hz",
                self.timer_hz.to_string(),
                "Linux's timer wheel at this HZ (Debian's 250): retransmission timers run at their bucket's boundary; 0: exact.",
            ),
            ("rack", self.rack.to_string(), "RACK detection of lost retransmissions (tcp_recovery = 1)."),
            (
                "slow_start_after_idle",
                self.slow_start_after_idle.to_string(),
                "Window restart after an idle RTO (tcp_slow_start_after_idle).",
            ),
            (
                "quickack",
                self.quickack.to_string(),
                "Linux's quick-ACK and ping-pong modes; false: an ACK per two full segments, else the timer.",
            ),
            (
                "retries_by_time",
                self.retries_by_time.to_string(),
                "Retry limits as Linux's times (retransmits_timed_out); false: counts of expired RTOs.",
            ),
            (
                "linux_close",
                self.linux_close.to_string(),
                "Linux's orphan retries, FIN_WAIT_2 timeout and 60-s TIME_WAIT; false: none of them, 240-s TIME_WAIT.",
            ),
            (
                "orphan_retries",
                self.orphan_retries.to_string(),
                "tcp_orphan_retries (0: Linux's 8 while the RTO is below its maximum).",
            ),
            ("fin_timeout", self.fin_timeout.to_string(), "tcp_fin_timeout, s: an orphan's longest FIN_WAIT_2."),
            ("time_wait", self.time_wait.to_string(), "TIME_WAIT, s (Linux TCP_TIMEWAIT_LEN)."),
        ]
    }

    /// Tail loss probes are on (`tcp_early_retrans` 3 or 4; Linux sends them only with SACK).
    pub fn tlp(&self) -> bool {
        self.sack && self.early_retrans >= 3
    }

    /// (Delayed) early retransmit is on (`tcp_early_retrans` 1 to 3).
    pub fn early_retransmit(&self) -> bool {
        (1..=3).contains(&self.early_retrans)
    }

    /// TIME_WAIT's length, s.
    pub fn time_wait_len(&self) -> f64 {
        if self.linux_close {
            self.time_wait
        } else {
            240.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_and_round_trip() {
        assert_eq!(TcpParams::parse("").unwrap(), TcpParams::default());
        let p = TcpParams::parse("initial_rto=2,nagle=false,rto=rfc6298,sack=false").unwrap();
        assert_eq!(p.to_spec(), "tcp:initial_rto=2,nagle=false,rto=rfc6298,sack=false");
        assert_eq!(TcpParams::parse(&p.to_spec()["tcp:".len()..]).unwrap(), p);
        assert!(TcpParams::parse("rto=1").unwrap_err().contains("linux or rfc6298"));
        assert!(TcpParams::parse("foo=1").unwrap_err().contains("valid parameters"));
        assert!(TcpParams::parse("early_retrans=5").is_err());
        assert!(!TcpParams::parse("sack=false").unwrap().tlp(), "Linux sends loss probes only with SACK");
        // every parameter listed can be written back as it is listed
        let d = TcpParams::default();
        for (name, value, _) in d.table() {
            assert_eq!(TcpParams::parse(&format!("{name}={value}")).unwrap(), d, "{name}");
        }
        assert_eq!(d.table().len(), 24);
        let six = TcpParams::parse("tlp=linux_6").unwrap();
        assert_eq!((six.tlp, six.to_spec().as_str()), (TlpRule::Linux6, "tcp:tlp=linux_6"));
        assert!(TcpParams::parse("tlp=4.13").unwrap_err().contains("linux_4_9 or linux_6"));
        // the default is left out of a scenario's JSON (cell ids of results from before it)
        assert!(!serde_json::to_string(&d).unwrap().contains("tlp"));
        assert!(serde_json::to_string(&six).unwrap().contains("\"tlp\":\"linux_6\""));
        assert!(!serde_json::to_string(&d).unwrap().contains("syn_linear"));
        let linear = TcpParams::parse("syn_linear_timeouts=4").unwrap();
        assert_eq!(linear.to_spec(), "tcp:syn_linear_timeouts=4");
    }
}
