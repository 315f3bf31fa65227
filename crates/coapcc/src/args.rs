//! Value parsers shared by the commands' options: each names what the value must be, so a user
//! who writes `--clients -5` or `--reps 0` reads the rule, not a parser's complaint. The options
//! that take them also allow a leading `-` (`allow_negative_numbers`), so that a negative number
//! reaches the parser instead of being taken for a flag.

/// A whole number ≥ 1 (clients, replications, exchanges, threads).
pub(crate) fn count(s: &str) -> Result<u32, String> {
    match s.parse::<i128>() {
        Ok(v) if v >= 1 && v <= u32::MAX as i128 => Ok(v as u32),
        Ok(v) if v < 1 => Err(format!("must be at least 1, not {v}")),
        Ok(_) => Err(format!("'{s}' is too large (at most {})", u32::MAX)),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// [`count`] as a `usize` (worker threads).
pub(crate) fn threads(s: &str) -> Result<usize, String> {
    count(s).map(|v| v as usize)
}

/// A seed: a whole number from 0 to 2^64 − 1.
pub(crate) fn seed(s: &str) -> Result<u64, String> {
    match s.parse::<i128>() {
        Ok(v) if (0..=u64::MAX as i128).contains(&v) => Ok(v as u64),
        _ => Err(format!("'{s}' is not a seed (a whole number from 0 to {})", u64::MAX)),
    }
}

/// A socket address, `IP:PORT` or `HOST:PORT` (`localhost:5683`), the host resolved now (its
/// IPv4 address when it has one).
pub(crate) fn socket_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let bad = || format!("'{s}' is not an address: HOST:PORT, e.g. 127.0.0.1:5683, [::1]:5683 or localhost:5683");
    let addrs: Vec<std::net::SocketAddr> = s.to_socket_addrs().map_err(|_| bad())?.collect();
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied().ok_or_else(bad)
}

/// The longest time any option takes, s: 10^9 (about 32 years), far below what a clock or a
/// timer can hold (the simulator's nanoseconds reach 584 years; a wall-clock deadline of 10^300
/// seconds overflowed and panicked).
pub(crate) const MAX_SECS: f64 = 1e9;

/// A number of seconds > 0 and at most [`MAX_SECS`].
pub(crate) fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_SECS => Ok(v),
        Ok(v) if v > MAX_SECS => Err(format!("'{s}' seconds is too long (at most {MAX_SECS:e})")),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parser_says_what_the_value_must_be() {
        assert_eq!(count("5"), Ok(5));
        assert_eq!(count("-5").unwrap_err(), "must be at least 1, not -5");
        assert_eq!(count("0").unwrap_err(), "must be at least 1, not 0");
        assert!(count("x").unwrap_err().contains("not a whole number"));
        assert!(count("5000000000").unwrap_err().contains("too large"));
        assert_eq!(seed("0"), Ok(0));
        assert_eq!(seed("18446744073709551615"), Ok(u64::MAX));
        assert!(seed("-1").unwrap_err().contains("not a seed"));
        assert_eq!(socket_addr("localhost:5683"), Ok(([127, 0, 0, 1], 5683).into()));
        assert_eq!(socket_addr("[::1]:7"), Ok((std::net::Ipv6Addr::LOCALHOST, 7).into()));
        assert!(socket_addr("localhost").unwrap_err().contains("HOST:PORT"));
        assert_eq!(positive_secs("0.5"), Ok(0.5));
        assert!(positive_secs("-1").is_err() && positive_secs("inf").is_err() && positive_secs("0").is_err());
        assert!(positive_secs("nan").is_err());
        assert_eq!(positive_secs("1e9"), Ok(1e9));
        assert!(positive_secs("1e300").unwrap_err().contains("too long"));
    }
}
