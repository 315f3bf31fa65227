//! `coapcc client -v 2`: one line per datagram, in libcoap's debug layout
//! (`v:1 t:CON c:GET i:3c1a {4a2b} [ Uri-Path:test ] :: 'payload'`), and the option and
//! content-format spellings the client accepts (`-t`, `-O`), as libcoap's client does.

use coap_wire::registry::{self, Format};
use coap_wire::{Message, MessageType};

/// One datagram described on one line; bytes that do not decode say so.
pub fn describe(bytes: &[u8]) -> String {
    let m = match Message::decode(bytes) {
        Ok(m) => m,
        Err(e) => return format!("{} bytes that are not a CoAP message ({e:?})", bytes.len()),
    };
    let ty = match m.ty {
        MessageType::Con => "CON",
        MessageType::Non => "NON",
        MessageType::Ack => "ACK",
        MessageType::Rst => "RST",
    };
    let code = match method(m.code.0) {
        Some(name) => name.to_string(),
        None => m.code.to_string(),
    };
    let mut s = format!("v:1 t:{ty} c:{code} i:{:04x} {{{}}} [", m.message_id, hex(m.token));
    let mut sep = " ";
    for o in m.options.iter() {
        let def = registry::lookup(o.number);
        let name = def.map_or_else(|| o.number.to_string(), |d| d.name.to_string());
        let block = matches!(o.number, registry::BLOCK1 | registry::BLOCK2);
        let value = match def.map(|d| d.format) {
            // libcoap's NUM/M/SIZE: `_` for the last block
            _ if block => match coap_endpoint::blockwise::Block::decode(o.value) {
                Some(b) => format!("{}/{}/{}", b.num, if b.more { 'M' } else { '_' }, b.size()),
                None => hex(o.value),
            },
            Some(Format::Uint) => coap_wire::decode_uint(o.value).map_or_else(|| hex(o.value), |v| v.to_string()),
            Some(Format::String) => String::from_utf8_lossy(o.value).into_owned(),
            Some(Format::Empty) => String::new(),
            _ => hex(o.value),
        };
        s += &format!("{sep}{name}:{value}");
        sep = ", ";
    }
    s += " ]";
    if !m.payload.is_empty() {
        match std::str::from_utf8(m.payload) {
            Ok(t) if !t.chars().any(char::is_control) => s += &format!(" :: '{t}'"),
            _ => s += &format!(" :: binary data length {}", m.payload.len()),
        }
    }
    s
}

fn method(code: u8) -> Option<&'static str> {
    Some(match code {
        1 => "GET",
        2 => "POST",
        3 => "PUT",
        4 => "DELETE",
        5 => "FETCH",
        6 => "PATCH",
        7 => "iPATCH",
        _ => return None,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Content-Format names (RFC 7252 §12.3 and the registry's common ones), with libcoap's short
/// forms.
const CONTENT_FORMATS: [(&str, &str, u16); 7] = [
    ("text/plain", "text", 0),
    ("application/link-format", "link", 40),
    ("application/xml", "xml", 41),
    ("application/octet-stream", "octet", 42),
    ("application/exi", "exi", 47),
    ("application/json", "json", 50),
    ("application/cbor", "cbor", 60),
];

/// `-t`: a Content-Format by number or name.
pub fn content_format(s: &str) -> Result<u16, String> {
    if let Ok(n) = s.parse::<u16>() {
        return Ok(n);
    }
    CONTENT_FORMATS.iter().find(|(long, short, _)| s == *long || s == *short).map(|c| c.2).ok_or_else(|| {
        let names: Vec<&str> = CONTENT_FORMATS.iter().map(|c| c.1).collect();
        format!("'{s}' is not a content format: a number, a media type, or one of {}", names.join(", "))
    })
}

/// `-O NUM,VALUE`: an option. The value is text, or hexadecimal after `0x`; a number for an
/// option registered as an unsigned integer.
pub fn option(s: &str) -> Result<(u16, Vec<u8>), String> {
    let (num, value) = s.split_once(',').unwrap_or((s, ""));
    let number: u16 = num.trim().parse().map_err(|_| format!("'{s}': expected NUM,VALUE with NUM an option number"))?;
    if let Some(h) = value.strip_prefix("0x") {
        let bytes: Result<Vec<u8>, _> = (0..h.len())
            .step_by(2)
            .map(|i| h.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()).ok_or(()))
            .collect();
        return bytes.map(|b| (number, b)).map_err(|_| format!("'{s}': '{value}' is not hexadecimal bytes"));
    }
    if registry::lookup(number).is_some_and(|d| d.format == Format::Uint) {
        if let Ok(v) = value.parse::<u32>() {
            let mut buf = [0u8; 4];
            return Ok((number, coap_wire::encode_uint(v, &mut buf).to_vec()));
        }
    }
    Ok((number, value.as_bytes().to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_in_libcoaps_layout() {
        // CON GET, MID 0x3c1a, token 4a 2b, Uri-Path "test" (delta 11, length 4), no payload
        let get = [0x42, 0x01, 0x3c, 0x1a, 0x4a, 0x2b, 0xb4, b't', b'e', b's', b't'];
        assert_eq!(describe(&get), "v:1 t:CON c:GET i:3c1a {4a2b} [ Uri-Path:test ]");
        // ACK 2.05, MID 0x3c1a, token 4a 2b, Content-Format 0 (delta 12, length 0), payload "hi"
        let ack = [0x62, 0x45, 0x3c, 0x1a, 0x4a, 0x2b, 0xc0, 0xff, b'h', b'i'];
        assert_eq!(describe(&ack), "v:1 t:ACK c:2.05 i:3c1a {4a2b} [ Content-Format:0 ] :: 'hi'");
        assert!(describe(&[0x80]).contains("not a CoAP message"));
        // ACK 2.05 with Block2 (23: delta 12 + 11, ext 10) = 0x2e: block 2, more, SZX 6 (1024 B);
        // then 0x22: block 2, last, SZX 2 (64 B)
        let block = |v: u8| [0x60, 0x45, 0x00, 0x01, 0xd1, 0x0a, v];
        assert_eq!(describe(&block(0x2e)), "v:1 t:ACK c:2.05 i:0001 {} [ Block2:2/M/1024 ]");
        assert_eq!(describe(&block(0x22)), "v:1 t:ACK c:2.05 i:0001 {} [ Block2:2/_/64 ]");
    }

    #[test]
    fn options_and_content_formats_as_libcoap_takes_them() {
        assert_eq!(content_format("json"), Ok(50));
        assert_eq!(content_format("application/cbor"), Ok(60));
        assert_eq!(content_format("42"), Ok(42));
        assert!(content_format("yaml").unwrap_err().contains("not a content format"));
        // Uri-Query (15) is a string; Max-Age (14) a uint; hex after 0x
        assert_eq!(option("15,a=1"), Ok((15, b"a=1".to_vec())));
        assert_eq!(option("14,300"), Ok((14, vec![0x01, 0x2c])));
        assert_eq!(option("65000,0x0a0B"), Ok((65000, vec![0x0a, 0x0b])));
        assert!(option("x,1").is_err() && option("15,0xzz").is_err());
    }
}
