//! Tokens held inline.

/// A token of 0–8 bytes, `Copy` and ordered (a map key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Token {
    len: u8,
    bytes: [u8; 8],
}

impl Token {
    /// `bytes` must be at most 8 long; longer input is cut (the decoder never gives more).
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let len = bytes.len().min(8);
        let mut t = Token { len: len as u8, bytes: [0; 8] };
        t.bytes[..len].copy_from_slice(&bytes[..len]);
        t
    }
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// Does `received` name the exchange of `token` that has sent `n_sent` transmissions (with the
/// transmission number in front under token marking)?
pub(crate) fn token_matches(token_marked: bool, token: &[u8], n_sent: usize, received: &[u8]) -> bool {
    if token_marked {
        received.split_first().is_some_and(|(&n, rest)| (n as usize) < n_sent && rest == token)
    } else {
        received == token
    }
}
