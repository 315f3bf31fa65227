//! The option encoding shared by datagrams and stream frames (RFC 7252 §3.1, RFC 8323 §3.2).
//!
//! Each option is a delta from the previous option's number and a value length, each a 4-bit
//! nibble with extended forms: 13 → one more byte holding `x - 13`, 14 → two more bytes (network
//! order) holding `x - 269`; 15 is reserved (the delta nibble 15 only as part of the payload
//! marker 0xFF). Because nibbles below 13 are always used directly, the encoding is canonical:
//! decoding and re-encoding any valid input gives back the same bytes.

use crate::writer::Writer;
use crate::{Error, MAX_OPTION_VALUE_LEN, PAYLOAD_MARKER};

/// One option: its number and its (uninterpreted) value bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoapOption<'a> {
    /// The option number (see [`crate::registry`]).
    pub number: u16,
    /// The value, borrowed.
    pub value: &'a [u8],
}

/// The options of a message: either the validated bytes of a decoded message (zero copy) or a
/// caller's list for encoding. Both iterate as [`CoapOption`]s in order.
#[derive(Clone, Copy)]
pub struct Options<'a>(Repr<'a>);

#[derive(Clone, Copy)]
enum Repr<'a> {
    /// Bytes that [`split_options`] accepted (iteration cannot fail), and the number of the last
    /// option, which is the largest (0 when there is none).
    Encoded(&'a [u8], u16),
    /// A caller's list; encoding checks its order.
    List(&'a [CoapOption<'a>]),
}

impl<'a> Options<'a> {
    /// No options.
    pub const fn empty() -> Self {
        Options(Repr::List(&[]))
    }
    /// Options for encoding; they must be in non-decreasing order of number (checked by encode).
    pub const fn from_list(list: &'a [CoapOption<'a>]) -> Self {
        Options(Repr::List(list))
    }
    pub(crate) const fn from_validated(bytes: &'a [u8], last: u16) -> Self {
        Options(Repr::Encoded(bytes, last))
    }
    /// Iterates over the options in order.
    pub fn iter(&self) -> OptionsIter<'a> {
        match self.0 {
            Repr::Encoded(bytes, _) => OptionsIter { inner: IterRepr::Encoded { bytes, number: 0 } },
            Repr::List(list) => OptionsIter { inner: IterRepr::List(list.iter()) },
        }
    }
    /// The value of the first option with this number. A decoded message's options are in
    /// order: a number past its last one is answered at once, without a scan (the large numbers
    /// of experimental options, which most messages do not carry).
    pub fn get(&self, number: u16) -> Option<&'a [u8]> {
        if let Repr::Encoded(_, last) = self.0 {
            if number > last {
                return None;
            }
        }
        self.iter().find(|o| o.number == number).map(|o| o.value)
    }
    /// Every value of the options with this number, in order.
    pub fn get_all(&self, number: u16) -> impl Iterator<Item = &'a [u8]> {
        self.iter().filter(move |o| o.number == number).map(|o| o.value)
    }
    /// Whether there are no options.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
    /// Bytes the options take when encoded (without the payload marker).
    pub fn encoded_len(&self) -> usize {
        if let Repr::Encoded(bytes, _) = self.0 {
            return bytes.len();
        }
        let mut prev = 0u16;
        let mut len = 0;
        for o in self.iter() {
            let delta = o.number.wrapping_sub(prev);
            len += 1 + ext_len(delta as usize) + ext_len(o.value.len()) + o.value.len();
            prev = o.number;
        }
        len
    }
    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), Error> {
        if let Repr::Encoded(bytes, _) = self.0 {
            return w.put(bytes);
        }
        let mut prev = 0u16;
        for o in self.iter() {
            if o.number < prev {
                return Err(Error::OptionsOutOfOrder);
            }
            write_option_header(w, o.number - prev, o.value.len())?;
            w.put(o.value)?;
            prev = o.number;
        }
        Ok(())
    }
    /// Checks an encodable list before anything is written.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let mut prev = 0u16;
        for o in self.iter() {
            if o.number < prev {
                return Err(Error::OptionsOutOfOrder);
            }
            if o.value.len() > MAX_OPTION_VALUE_LEN {
                return Err(Error::OptionValueTooLong);
            }
            prev = o.number;
        }
        Ok(())
    }
}

impl PartialEq for Options<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}
impl Eq for Options<'_> {}

impl core::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter().map(|o| (o.number, o.value))).finish()
    }
}

/// Iterator over [`Options`].
#[derive(Debug, Clone)]
pub struct OptionsIter<'a> {
    inner: IterRepr<'a>,
}

#[derive(Debug, Clone)]
enum IterRepr<'a> {
    Encoded { bytes: &'a [u8], number: u16 },
    List(core::slice::Iter<'a, CoapOption<'a>>),
}

impl<'a> Iterator for OptionsIter<'a> {
    type Item = CoapOption<'a>;
    fn next(&mut self) -> Option<CoapOption<'a>> {
        match &mut self.inner {
            IterRepr::List(it) => it.next().copied(),
            IterRepr::Encoded { bytes, number } => {
                // The bytes were validated by `split_options`; an error here is impossible, and
                // would end the iteration rather than panic.
                let (opt, rest) = read_option(bytes, *number).ok()??;
                *bytes = rest;
                *number = opt.number;
                Some(opt)
            }
        }
    }
}

/// Reads one option header and value at the start of `bytes`. `Ok(None)` at the end of the
/// options (no bytes left, or the payload marker). Inlined: every decoded option passes here.
#[inline]
fn read_option(bytes: &[u8], prev: u16) -> Result<Option<(CoapOption<'_>, &[u8])>, Error> {
    let Some((&first, mut rest)) = bytes.split_first() else { return Ok(None) };
    if first == PAYLOAD_MARKER {
        return Ok(None);
    }
    let delta = read_ext(first >> 4, &mut rest, Error::ReservedOptionDelta)?;
    let len = read_ext(first & 0x0f, &mut rest, Error::ReservedOptionLength)?;
    let number = u16::try_from(prev as u32 + delta).map_err(|_| Error::OptionNumberOverflow)?;
    let len = len as usize;
    if rest.len() < len {
        return Err(Error::Truncated);
    }
    let (value, rest) = rest.split_at(len);
    Ok(Some((CoapOption { number, value }, rest)))
}

#[inline]
fn read_ext(nibble: u8, rest: &mut &[u8], reserved: Error) -> Result<u32, Error> {
    match nibble {
        0..=12 => Ok(nibble as u32),
        13 => {
            let (&b, r) = rest.split_first().ok_or(Error::Truncated)?;
            *rest = r;
            Ok(b as u32 + 13)
        }
        14 => {
            if rest.len() < 2 {
                return Err(Error::Truncated);
            }
            let v = u16::from_be_bytes([rest[0], rest[1]]) as u32 + 269;
            *rest = &rest[2..];
            Ok(v)
        }
        _ => Err(reserved),
    }
}

/// Validates the options-and-payload part of a message and splits it into the options' bytes and
/// the payload (RFC 7252 §3: a marker followed by nothing is a format error).
pub(crate) fn split_options(bytes: &[u8]) -> Result<(Options<'_>, &[u8]), Error> {
    let mut rest = bytes;
    let mut number = 0u16;
    while let Some((opt, r)) = read_option(rest, number)? {
        number = opt.number;
        rest = r;
    }
    let options = &bytes[..bytes.len() - rest.len()];
    let payload = match rest.split_first() {
        None => &[][..],
        Some((_, [])) => return Err(Error::EmptyPayloadAfterMarker),
        Some((_, payload)) => payload,
    };
    Ok((Options::from_validated(options, number), payload))
}

/// Extra bytes the extended form of `x` needs (0, 1 or 2).
pub(crate) const fn ext_len(x: usize) -> usize {
    if x < 13 {
        0
    } else if x < 269 {
        1
    } else {
        2
    }
}

fn nibble(x: usize) -> u8 {
    match ext_len(x) {
        0 => x as u8,
        1 => 13,
        _ => 14,
    }
}

fn write_ext(w: &mut Writer<'_>, x: usize) -> Result<(), Error> {
    match ext_len(x) {
        0 => Ok(()),
        1 => w.byte((x - 13) as u8),
        _ => {
            let v = u16::try_from(x - 269).map_err(|_| Error::OptionValueTooLong)?;
            w.put(&v.to_be_bytes())
        }
    }
}

fn write_option_header(w: &mut Writer<'_>, delta: u16, len: usize) -> Result<(), Error> {
    if len > MAX_OPTION_VALUE_LEN {
        return Err(Error::OptionValueTooLong);
    }
    w.byte((nibble(delta as usize) << 4) | nibble(len))?;
    write_ext(w, delta as usize)?;
    write_ext(w, len)
}

/// Writes `v` as a CoAP uint option value (RFC 7252 §3.2: network order, no leading zero bytes,
/// 0 as the empty string) into `buf` and returns the used part.
pub fn encode_uint(v: u32, buf: &mut [u8; 4]) -> &[u8] {
    *buf = v.to_be_bytes();
    let skip = (v.leading_zeros() / 8) as usize;
    &buf[skip..]
}

/// Reads a uint option value of at most 4 bytes (leading zeros are tolerated, as §3.2 asks).
pub fn decode_uint(value: &[u8]) -> Option<u32> {
    if value.len() > 4 {
        return None;
    }
    Some(value.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uint_values_are_minimal() {
        let mut b = [0; 4];
        assert_eq!(encode_uint(0, &mut b), &[] as &[u8]);
        assert_eq!(encode_uint(255, &mut b), &[0xff]);
        assert_eq!(encode_uint(256, &mut b), &[0x01, 0x00]);
        assert_eq!(encode_uint(0x0102_0304, &mut b), &[1, 2, 3, 4]);
        assert_eq!(decode_uint(&[0, 0, 1]), Some(1));
        assert_eq!(decode_uint(&[1, 2, 3, 4, 5]), None);
    }

    #[test]
    fn extended_delta_and_length_forms() {
        // Option 11 (Uri-Path) of 13 bytes: delta 11 direct, length 13 → nibble 13, ext 0.
        // Then option 300 (delta 289 → nibble 14, ext 289-269 = 20 = 0x0014), length 0.
        let v = [b'x'; 13];
        let list = [CoapOption { number: 11, value: &v }, CoapOption { number: 300, value: &[] }];
        let opts = Options::from_list(&list);
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        opts.write(&mut w).unwrap();
        let n = w.written();
        assert_eq!(n, opts.encoded_len());
        assert_eq!(&buf[..2], &[0xBD, 0x00]);
        assert_eq!(&buf[15..18], &[0xE0, 0x00, 0x14]);
        let (decoded, payload) = split_options(&buf[..n]).unwrap();
        assert!(payload.is_empty());
        assert_eq!(decoded, opts);
    }

    #[test]
    fn get_answers_past_a_decoded_messages_last_option_at_once() {
        // decoded: Uri-Path (delta 11) then delta 289 (nibble 14, 0x0014): options 11 and 300
        let bytes = [0xB1, b'a', 0xE0, 0x00, 0x14, PAYLOAD_MARKER, 1];
        let (decoded, payload) = split_options(&bytes).unwrap();
        assert_eq!(payload, &[1][..]);
        // a number past the last one is not there; the ones before are found as by a scan
        assert_eq!((decoded.get(301), decoded.get(300), decoded.get(11)), (None, Some(&[][..]), Some(&b"a"[..])));
        assert_eq!(decoded.get(12), None);
        // no options (only a payload, or nothing): nothing is found, not even number 0
        for bytes in [&[PAYLOAD_MARKER, 7][..], &[]] {
            let (none, _) = split_options(bytes).unwrap();
            assert_eq!((none.get(0), none.get(11)), (None, None));
        }
        // a list (its order is checked only when encoded) is scanned whole
        let list = [CoapOption { number: 60, value: &[6] }, CoapOption { number: 11, value: &[1] }];
        assert_eq!(
            (Options::from_list(&list).get(11), Options::from_list(&list).get(60)),
            (Some(&[1][..]), Some(&[6][..]))
        );
    }
}
