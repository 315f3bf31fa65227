//! Block-wise transfers (RFC 7959) and Echo retries (RFC 9175), sans-IO, above the messaging
//! layer: each block is its own request/response exchange of the [`crate::Endpoint`].
//!
//! * Server: [`Blockwise`] wraps a [`Handler`](crate::server::Handler). A request body sent in Block1 blocks is
//!   reassembled (each block acknowledged with 2.31 Continue) and handed to the inner handler
//!   whole; a body beyond [`BlockLimits::max_body`] is refused with 4.13 and Size1, a block out
//!   of sequence with 4.08. A response larger than the block size (the server's, or the smaller
//!   one a request's Block2 asks for) is sent as Block2 blocks with Size2 on the first; the
//!   whole body is kept for the follow-up requests. Transfers in progress are bounded in total
//!   bytes ([`BlockLimits::max_bytes`], counting each one's body, key and options), in uploads
//!   per source address ([`BlockLimits::max_uploads_per_source`]: 5.03 beyond; a source is what
//!   [`Blockwise::with_source_key`] makes of a peer, its IP address on the real network), and
//!   expire after [`BlockLimits::lifetime`].
//! * When the budget is spent, transfers that have made progress (a second block taken or
//!   served) are protected from newcomers: a new transfer may only push out one that has not
//!   (one block) and has been idle for [`BlockLimits::newcomer_grace`], the oldest first; if
//!   there is none, a new upload is refused with 5.03 and a new download is not held (its later
//!   blocks are cut from the handler's answer again). A transfer's next block may push out any,
//!   the one-block ones first. So a flood of uploads that never send a second block (the third
//!   probe's 12,000 a second) fills the budget with its own and recycles them, and cannot push
//!   out a slow legitimate upload, nor one that has just begun (its first block is safe for the
//!   grace period, time for its second).
//! * Transfers are indexed by their last use (and the one-block ones once more), so expiry and
//!   eviction take the oldest in O(log n) without scanning the others (a scan per request let
//!   100,000 held uploads slow a server 180-fold). No ETag: a resource that
//!   changes between two blocks of one
//!   download is not detected. A handler answering later ([`Reply::Later`](crate::server::Reply::Later)) gets no block-wise
//!   treatment of its response.
//! * Client: [`Transfer`] turns one request into the sequence of requests a block-wise exchange
//!   needs (Block1 uploads, Block2 downloads, a repeat with the server's Echo after 4.01) and
//!   hands back the whole response. A downloaded body beyond its limit fails the transfer.
//!
//! Block sizes are 16 to 1024 bytes (SZX 0–6); BERT (SZX 7, RFC 8323) is not supported.

mod client;
mod server;
#[cfg(test)]
mod tests;

pub use client::{Step, Transfer};
pub use server::Blockwise;

use coap_cc::Duration;
use coap_wire::{decode_uint, encode_uint, registry, Message};

use crate::server::Response;

/// A Block1 or Block2 option value (RFC 7959 §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// The block number (at most 2^20 − 1).
    pub num: u32,
    /// More blocks follow.
    pub more: bool,
    /// log2(size) − 4: 0 (16 bytes) to 6 (1024 bytes).
    pub szx: u8,
}

impl Block {
    /// The block size in bytes.
    pub fn size(self) -> usize {
        16 << self.szx
    }

    /// Where this block starts in the body.
    pub fn offset(self) -> usize {
        self.num as usize * self.size()
    }

    /// Decodes an option value (0–3 bytes); `None` for SZX 7 (BERT, not supported) or a value
    /// longer than 3 bytes.
    pub fn decode(value: &[u8]) -> Option<Block> {
        if value.len() > 3 {
            return None;
        }
        let v = decode_uint(value)?;
        let szx = (v & 7) as u8;
        (szx < 7).then_some(Block { num: v >> 4, more: v & 8 != 0, szx })
    }

    /// The option value.
    pub fn encode(self) -> Vec<u8> {
        let mut b = [0u8; 4];
        encode_uint((self.num << 4) | (u32::from(self.more) << 3) | u32::from(self.szx), &mut b).to_vec()
    }

    /// The SZX of a block size: a power of two from 16 to 1024.
    pub fn szx_of(size: usize) -> Option<u8> {
        (16..=1024).contains(&size).then_some(())?;
        size.is_power_of_two().then(|| (size.trailing_zeros() - 4) as u8)
    }
}

/// The largest block number (20 bits).
pub(super) const MAX_NUM: u32 = (1 << 20) - 1;

/// Bounds of the server's block-wise transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLimits {
    /// The largest request body reassembled (4.13 beyond it), bytes.
    pub max_body: usize,
    /// The server's block size for responses (16–1024), bytes.
    pub block_size: usize,
    /// Bytes held over all transfers in progress (uploads and downloads); the oldest go first.
    pub max_bytes: usize,
    /// A transfer without a block for this long is forgotten (RFC 7252's EXCHANGE_LIFETIME).
    pub lifetime: Duration,
    /// Uploads one source may have in progress at once; a new one beyond is answered 5.03.
    pub max_uploads_per_source: usize,
    /// How long a transfer of one block is safe from newcomers when the budget is spent (see
    /// the module doc).
    pub newcomer_grace: Duration,
}

impl Default for BlockLimits {
    fn default() -> Self {
        BlockLimits {
            max_body: 1 << 20,
            block_size: 1024,
            max_bytes: 16 << 20,
            lifetime: Duration::from_secs(247),
            max_uploads_per_source: 4,
            newcomer_grace: Duration::from_secs(10),
        }
    }
}

/// A request's URI options (path and query), as bytes to key a transfer by.
pub(super) fn uri_key(req: &Message<'_>) -> Vec<u8> {
    let mut k = Vec::new();
    for o in req.options.iter().filter(|o| o.number == registry::URI_PATH || o.number == registry::URI_QUERY) {
        k.extend_from_slice(&o.number.to_be_bytes());
        k.extend_from_slice(&(o.value.len() as u16).to_be_bytes());
        k.extend_from_slice(o.value);
    }
    k
}

/// Sets option `number` of a request's or response's option list to `value` (replacing any).
pub(super) fn set_option(options: &mut Vec<(u16, Vec<u8>)>, number: u16, value: Vec<u8>) {
    options.retain(|(n, _)| *n != number);
    options.push((number, value));
}

/// `r` with option `number` set to `value`.
pub(super) fn with_option(mut r: Response, number: u16, value: Vec<u8>) -> Response {
    set_option(&mut r.options, number, value);
    r
}

/// `v` as CoAP's variable-length unsigned integer.
pub(super) fn uint(v: usize) -> Vec<u8> {
    let mut b = [0u8; 4];
    encode_uint(u32::try_from(v).unwrap_or(u32::MAX), &mut b).to_vec()
}
