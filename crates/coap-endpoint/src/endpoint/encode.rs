//! Encoding the endpoint's requests and responses, and reading what a message carries.

use super::*;

/// A response's options, sorted by number as they are encoded.
pub(super) fn sorted_options(resp: &Response) -> SmallVec<[CoapOption<'_>; 8]> {
    let mut options: SmallVec<[CoapOption<'_>; 8]> =
        resp.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
    options.sort_by_key(|o| o.number);
    options
}

/// A response's options and payload, owned.
pub(super) type Answer = (Vec<(u16, Vec<u8>)>, Vec<u8>);

/// The token of an encoded message (one the endpoint made itself).
pub(super) fn token_of(bytes: &[u8]) -> Token {
    let tkl = bytes.first().map_or(0, |b| (b & 0x0F) as usize).min(8);
    Token::new(bytes.get(4..4 + tkl).unwrap_or(&[]))
}

/// What the application gets of a response: its options (less the transmission-number echoes,
/// which are the endpoint's own business) and its payload (if `payload`, else none).
pub(super) fn answer(msg: &Message<'_>, payload: bool) -> Answer {
    let own = |n: u16| n == registry::TRANSMISSION_NUMBER || n == registry::RTT_COAP_COUNTER_ECHO;
    let options = msg.options.iter().filter(|o| !own(o.number)).map(|o| (o.number, o.value.to_vec())).collect();
    (options, if payload { msg.payload.to_vec() } else { Vec::new() })
}

/// Encodes a response at the end of the arena `out`, returning where it stands. `echo_from`: the
/// request whose transmission-number options a piggybacked response echoes (when `echo`).
pub(super) fn encode_response(
    out: &mut Vec<u8>,
    echo: bool,
    ty: MessageType,
    mid: u16,
    token: &[u8],
    resp: &Response,
    echo_from: Option<&Message<'_>>,
) -> Option<(usize, usize)> {
    let mut options = sorted_options(resp);
    if let (true, Some(req)) = (echo, echo_from) {
        // only the options this server knows, each under its echo number (elective)
        for number in ECHOED {
            if let Some(value) = req.options.get(number) {
                let number = registry::echo_number(number);
                let at = options.iter().position(|o| o.number > number).unwrap_or(options.len());
                options.insert(at, CoapOption { number, value });
            }
        }
    }
    let m = Message {
        ty,
        code: resp.code,
        message_id: mid,
        token,
        options: Options::from_list(&options),
        payload: &resp.payload,
    };
    let start = out.len();
    out.resize(start + m.encoded_len(), 0);
    match m.encode(&mut out[start..]) {
        Ok(len) => {
            out.truncate(start + len);
            Some((start, len))
        }
        Err(_) => {
            out.truncate(start);
            None
        }
    }
}

/// Appends a message whose options and payload are already encoded (`tail`): its header and
/// token (RFC 7252 §3: version 1, type, token length; code; Message ID), then `tail`. The
/// token must be at most 8 bytes. Inlined: it is on the path of every transmission.
#[inline(always)]
pub(super) fn put_with_tail(out: &mut Vec<u8>, ty: MessageType, code: Code, mid: u16, token: &[u8], tail: &[u8]) {
    out.extend_from_slice(&[(Message::VERSION << 6) | ((ty as u8) << 4) | token.len() as u8, code.0]);
    out.extend_from_slice(&mid.to_be_bytes());
    out.extend_from_slice(token);
    out.extend_from_slice(tail);
}

/// Appends the latest transmission of `ex`, with its marking, to `out`: its length, or None
/// (and `out` unchanged) if it cannot be encoded in `max` bytes.
pub(super) fn encode_request<A>(ex: &Exchange<A>, out: &mut Vec<u8>, max: usize) -> Option<usize> {
    let n = ex.sent.len().saturating_sub(1) as u8;
    let mut token = [0u8; 9];
    let base = ex.token.as_slice();
    let token: &[u8] = match ex.marking {
        Marking::Token => {
            token[0] = n;
            token[1..1 + base.len()].copy_from_slice(base);
            &token[..1 + base.len()]
        }
        _ => base,
    };
    let ty = if ex.confirmable { MessageType::Con } else { MessageType::Non };
    let marking = match ex.marking {
        Marking::Option { number, probe } => Some((number, probe)),
        _ => None,
    };
    if let (None, Some(tail)) = (marking, ex.req.tail()) {
        // header and token (RFC 7252 §3), then the options and payload encoded once
        if token.len() > coap_wire::MAX_TOKEN_LEN {
            return None;
        }
        let len = 4 + token.len() + tail.len();
        if len > max {
            return None;
        }
        put_with_tail(out, ty, ex.req.code, ex.mid, token, tail);
        return Some(len);
    }
    // a marking option goes among the request's: the whole message is encoded
    let mut value = [0u8; 4];
    let mut options: SmallVec<[CoapOption<'_>; 8]> =
        ex.req.options.iter().map(|(num, v)| CoapOption { number: *num, value: v }).collect();
    if let Some((number, probe)) = marking {
        let v: &[u8] = match (n, probe) {
            (0, true) => &[255],
            _ => encode_uint(n as u32, &mut value),
        };
        let at = options.iter().position(|o| o.number > number).unwrap_or(options.len());
        options.insert(at, CoapOption { number, value: v });
    }
    let m = Message {
        ty,
        code: ex.req.code,
        message_id: ex.mid,
        token,
        options: Options::from_list(&options),
        payload: &ex.req.payload,
    };
    let len = m.encoded_len();
    if len > max {
        return None;
    }
    let start = out.len();
    out.resize(start + len, 0);
    let written = m.encode(&mut out[start..]).ok();
    out.truncate(start + written.unwrap_or(0));
    written
}

/// Whether a request carries a critical option that must be treated as unrecognized: one not
/// registered or among the registered ones this side does not serve (`unsupported`), one whose
/// length is outside its registered range, or a repetition of one that is not repeatable (the
/// options come in order, so a repetition follows its first occurrence).
pub(crate) fn bad_critical_option(options: &coap_wire::Options<'_>, unsupported: &[u16]) -> bool {
    let mut previous = None;
    options.iter().any(|o| {
        let repeated = previous == Some(o.number);
        previous = Some(o.number);
        registry::is_critical(o.number)
            && match registry::lookup(o.number).filter(|_| !unsupported.contains(&o.number)) {
                None => true,
                Some(d) => {
                    let len = o.value.len();
                    len < usize::from(d.min_len) || len > usize::from(d.max_len) || (repeated && !d.repeatable)
                }
            }
    })
}
