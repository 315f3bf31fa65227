//! Option registry: the options of RFC 7252 §5.10/§12.2, RFC 7641 (Observe), RFC 7959
//! (Block-Wise), RFC 7967 (No-Response), RFC 8323 §5 (signaling options, numbered per signaling
//! code), and the experimental transmission-number options used for accurate RTT samples.
//!
//! The critical / unsafe-to-forward / NoCacheKey properties are not stored: they are derived
//! from the number, as RFC 7252 §5.4.6 defines them (see [`is_critical`] and friends).

use crate::Code;

/// How an option's value is to be read (RFC 7252 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Zero-length.
    Empty,
    /// Opaque bytes.
    Opaque,
    /// Unsigned integer, network order, no leading zeros.
    Uint,
    /// UTF-8 string.
    String,
}

/// One registered option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDef {
    /// The option number.
    pub number: u16,
    /// Its registered name.
    pub name: &'static str,
    /// Value format.
    pub format: Format,
    /// Minimum value length in bytes.
    pub min_len: u16,
    /// Maximum value length in bytes.
    pub max_len: u16,
    /// May the option occur more than once?
    pub repeatable: bool,
    /// The document that defines it.
    pub source: &'static str,
}

impl OptionDef {
    /// RFC 7252 §5.4.6: odd numbers are critical.
    pub const fn critical(&self) -> bool {
        is_critical(self.number)
    }
    /// RFC 7252 §5.4.6: bit 1 set means unsafe to forward.
    pub const fn unsafe_to_forward(&self) -> bool {
        is_unsafe(self.number)
    }
    /// RFC 7252 §5.4.6: `(number & 0x1e) == 0x1c` means NoCacheKey.
    pub const fn no_cache_key(&self) -> bool {
        is_no_cache_key(self.number)
    }
}

/// RFC 7252 §5.4.6: "an option is identified as critical if its number is odd".
pub const fn is_critical(number: u16) -> bool {
    number & 0x01 != 0
}
/// RFC 7252 §5.4.6: unsafe-to-forward if bit 1 (value 2) of the number is set.
pub const fn is_unsafe(number: u16) -> bool {
    number & 0x02 != 0
}
/// RFC 7252 §5.4.6: NoCacheKey (only meaningful for safe-to-forward options) if bits 2–4 are 111.
pub const fn is_no_cache_key(number: u16) -> bool {
    number & 0x1e == 0x1c
}

pub const IF_MATCH: u16 = 1;
pub const URI_HOST: u16 = 3;
pub const ETAG: u16 = 4;
pub const IF_NONE_MATCH: u16 = 5;
pub const OBSERVE: u16 = 6;
pub const URI_PORT: u16 = 7;
pub const LOCATION_PATH: u16 = 8;
pub const URI_PATH: u16 = 11;
pub const CONTENT_FORMAT: u16 = 12;
pub const MAX_AGE: u16 = 14;
pub const URI_QUERY: u16 = 15;
pub const ACCEPT: u16 = 17;
pub const LOCATION_QUERY: u16 = 20;
pub const BLOCK2: u16 = 23;
pub const BLOCK1: u16 = 27;
pub const SIZE2: u16 = 28;
pub const PROXY_URI: u16 = 35;
pub const PROXY_SCHEME: u16 = 39;
pub const SIZE1: u16 = 60;
/// RFC 9175 §2.2.1: Echo, elective, safe-to-forward, NoCacheKey; 1–40 opaque bytes.
pub const ECHO: u16 = 252;
pub const NO_RESPONSE: u16 = 258;

/// Transmission number for accurate RTT samples (draft-ietf-core-fasor-02 §4.4 "Retransmission
/// Count"): 0 (empty) on the original, 1, 2, … on retransmissions, 255 on the first request to a
/// new peer to probe support; echoed in piggybacked responses.
///
/// 0xFE04 (65028) is the number Californium uses for its FASOR-inspired transmission-count option,
/// so that the two implementations interoperate. Note: from its number this option is elective
/// and safe-to-forward, but NOT NoCacheKey (65028 & 0x1e = 0x04), although the draft describes the
/// option as NoCacheKey; the bits follow the number.
pub const TRANSMISSION_NUMBER: u16 = 0xFE04;

/// RTT-CoAP's 1-byte transmission counter (Ancillotti & Bruno), echoed by the receiver. The source
/// calls it critical and safe-to-forward but gives no number: 65001 (0xFDE9) is chosen from the
/// experimental range 65000–65535 (RFC 7252 §12.2) as the first odd (critical) number there whose
/// bit 1 is clear (safe-to-forward).
pub const RTT_COAP_TRANSMISSION_COUNTER: u16 = 65001;

/// Where a server echoes RTT-CoAP's counter in its response: 65000 (0xFDE8), the elective,
/// safe-to-forward number just below it. The request's option is critical (the server must know
/// it), but an echo under a critical number would make a client that does not know it reject the
/// response (RFC 7252 §5.4.1); an elective echo is ignored by such a client.
pub const RTT_COAP_COUNTER_ECHO: u16 = 65000;

/// The option a response echoes the request option `number` in: [`RTT_COAP_COUNTER_ECHO`] for
/// RTT-CoAP's counter; the transmission number (already elective) is echoed under its own number.
pub const fn echo_number(number: u16) -> u16 {
    match number {
        RTT_COAP_TRANSMISSION_COUNTER => RTT_COAP_COUNTER_ECHO,
        n => n,
    }
}

const fn def(
    number: u16,
    name: &'static str,
    format: Format,
    min_len: u16,
    max_len: u16,
    repeatable: bool,
    source: &'static str,
) -> OptionDef {
    OptionDef { number, name, format, min_len, max_len, repeatable, source }
}

use Format::*;

/// Options of requests and responses, by number.
pub static OPTIONS: &[OptionDef] = &[
    def(IF_MATCH, "If-Match", Opaque, 0, 8, true, "RFC 7252"),
    def(URI_HOST, "Uri-Host", String, 1, 255, false, "RFC 7252"),
    def(ETAG, "ETag", Opaque, 1, 8, true, "RFC 7252"),
    def(IF_NONE_MATCH, "If-None-Match", Empty, 0, 0, false, "RFC 7252"),
    def(OBSERVE, "Observe", Uint, 0, 3, false, "RFC 7641"),
    def(URI_PORT, "Uri-Port", Uint, 0, 2, false, "RFC 7252"),
    def(LOCATION_PATH, "Location-Path", String, 0, 255, true, "RFC 7252"),
    def(URI_PATH, "Uri-Path", String, 0, 255, true, "RFC 7252"),
    def(CONTENT_FORMAT, "Content-Format", Uint, 0, 2, false, "RFC 7252"),
    def(MAX_AGE, "Max-Age", Uint, 0, 4, false, "RFC 7252"),
    def(URI_QUERY, "Uri-Query", String, 0, 255, true, "RFC 7252"),
    def(ACCEPT, "Accept", Uint, 0, 2, false, "RFC 7252"),
    def(LOCATION_QUERY, "Location-Query", String, 0, 255, true, "RFC 7252"),
    def(BLOCK2, "Block2", Uint, 0, 3, false, "RFC 7959"),
    def(BLOCK1, "Block1", Uint, 0, 3, false, "RFC 7959"),
    def(SIZE2, "Size2", Uint, 0, 4, false, "RFC 7959"),
    def(PROXY_URI, "Proxy-Uri", String, 1, 1034, false, "RFC 7252"),
    def(PROXY_SCHEME, "Proxy-Scheme", String, 1, 255, false, "RFC 7252"),
    def(SIZE1, "Size1", Uint, 0, 4, false, "RFC 7252"),
    def(ECHO, "Echo", Opaque, 1, 40, false, "RFC 9175"),
    def(NO_RESPONSE, "No-Response", Uint, 0, 1, false, "RFC 7967"),
    def(RTT_COAP_COUNTER_ECHO, "Transmission-Counter-Echo", Uint, 0, 1, false, "RTT-CoAP's echo (experimental number)"),
    def(RTT_COAP_TRANSMISSION_COUNTER, "Transmission-Counter", Uint, 0, 1, false, "RTT-CoAP (experimental number)"),
    def(
        TRANSMISSION_NUMBER,
        "Retransmission-Count",
        Uint,
        0,
        1,
        false,
        "draft-ietf-core-fasor-02 §4.4 (Californium's number)",
    ),
];

/// Signaling options of RFC 8323 §5: their numbers are only meaningful with their code.
pub static SIGNALING_OPTIONS: &[(Code, OptionDef)] = &[
    (Code::CSM, def(2, "Max-Message-Size", Uint, 0, 4, false, "RFC 8323 §5.3.1")),
    (Code::CSM, def(4, "Block-Wise-Transfer", Empty, 0, 0, false, "RFC 8323 §5.3.2")),
    (Code::PING, def(2, "Custody", Empty, 0, 0, false, "RFC 8323 §5.4.1")),
    (Code::PONG, def(2, "Custody", Empty, 0, 0, false, "RFC 8323 §5.4.1")),
    (Code::RELEASE, def(2, "Alternative-Address", String, 1, 255, true, "RFC 8323 §5.5")),
    (Code::RELEASE, def(4, "Hold-Off", Uint, 0, 3, false, "RFC 8323 §5.5")),
    (Code::ABORT, def(2, "Bad-CSM-Option", Uint, 0, 2, false, "RFC 8323 §5.6")),
];

/// CSM option 2 (RFC 8323 §5.3.1).
pub const CSM_MAX_MESSAGE_SIZE: u16 = 2;
/// CSM option 4 (RFC 8323 §5.3.2).
pub const CSM_BLOCK_WISE_TRANSFER: u16 = 4;
/// Ping/Pong option 2 (RFC 8323 §5.4.1).
pub const PING_CUSTODY: u16 = 2;
/// Release option 2 (RFC 8323 §5.5).
pub const RELEASE_ALTERNATIVE_ADDRESS: u16 = 2;
/// Release option 4 (RFC 8323 §5.5).
pub const RELEASE_HOLD_OFF: u16 = 4;
/// Abort option 2 (RFC 8323 §5.6).
pub const ABORT_BAD_CSM_OPTION: u16 = 2;

/// The definition of a request/response option.
pub fn lookup(number: u16) -> Option<&'static OptionDef> {
    OPTIONS.iter().find(|d| d.number == number)
}

/// The definition of a signaling option of `code`.
pub fn lookup_signaling(code: Code, number: u16) -> Option<&'static OptionDef> {
    SIGNALING_OPTIONS.iter().find(|(c, d)| *c == code && d.number == number).map(|(_, d)| d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_follow_rfc7252_table() {
        // RFC 7252 §5.10 table: C = critical, U = unsafe, N = NoCacheKey.
        let d = |n| lookup(n).unwrap();
        assert!(d(URI_HOST).critical() && d(URI_HOST).unsafe_to_forward()); // 3: C U
        assert!(!d(ETAG).critical() && !d(ETAG).unsafe_to_forward()); // 4: elective, safe
        assert!(d(URI_PATH).critical() && d(URI_PATH).unsafe_to_forward()); // 11: C U
        assert!(!d(MAX_AGE).critical() && d(MAX_AGE).unsafe_to_forward()); // 14: U
        assert!(!d(CONTENT_FORMAT).critical() && !d(CONTENT_FORMAT).unsafe_to_forward()); // 12
        assert!(d(SIZE1).no_cache_key() && !d(SIZE1).critical()); // 60: N (0b111100)
        assert!(d(SIZE2).no_cache_key()); // 28 = 0b11100: N (RFC 7959)
        assert!(!d(ACCEPT).no_cache_key() && d(ACCEPT).critical()); // 17: C
                                                                    // The transmission number: elective, safe, not NoCacheKey (see its doc).
        let t = d(TRANSMISSION_NUMBER);
        assert_eq!(t.number, 65028);
        assert!(!t.critical() && !t.unsafe_to_forward() && !t.no_cache_key());
        let r = d(RTT_COAP_TRANSMISSION_COUNTER);
        assert!(r.critical() && !r.unsafe_to_forward());
        // its echo: elective and safe-to-forward, so that a client not knowing it ignores it
        let e = d(echo_number(RTT_COAP_TRANSMISSION_COUNTER));
        assert!(!e.critical() && !e.unsafe_to_forward());
        assert_eq!(echo_number(TRANSMISSION_NUMBER), TRANSMISSION_NUMBER);
    }

    #[test]
    fn numbers_unique_and_sorted() {
        assert!(OPTIONS.windows(2).all(|w| w[0].number < w[1].number));
        assert_eq!(lookup_signaling(Code::CSM, 2).unwrap().name, "Max-Message-Size");
        assert_eq!(lookup_signaling(Code::ABORT, 2).unwrap().name, "Bad-CSM-Option");
        assert!(lookup_signaling(Code::GET, 2).is_none());
    }
}
