//! Block-wise transfers (RFC 7959) and Echo retries (RFC 9175), sans-IO, above the messaging
//! layer: each block is its own request/response exchange of the [`crate::Endpoint`].
//!
//! * Server: [`Blockwise`] wraps a [`Handler`]. A request body sent in Block1 blocks is
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
//!   download is not detected. A handler answering later ([`Reply::Later`]) gets no block-wise
//!   treatment of its response.
//! * Client: [`Transfer`] turns one request into the sequence of requests a block-wise exchange
//!   needs (Block1 uploads, Block2 downloads, a repeat with the server's Echo after 4.01) and
//!   hands back the whole response. A downloaded body beyond its limit fails the transfer.
//!
//! Block sizes are 16 to 1024 bytes (SZX 0–6); BERT (SZX 7, RFC 8323) is not supported.

use std::collections::{BTreeMap, BTreeSet};

use coap_cc::{Duration, Instant};
use coap_wire::{decode_uint, encode_uint, registry, CoapOption, Code, Message, Options};

use crate::server::{Handler, Reply, RequestId, Response};
use crate::Request;

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
const MAX_NUM: u32 = (1 << 20) - 1;

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

/// What a held transfer costs besides its body and key: the map entries, the index entry and
/// the bookkeeping, bytes (a round figure above what they take on a 64-bit machine).
const HELD_OVERHEAD: usize = 192;

/// What a transfer is keyed by: upload or download, the peer, the method and the request's URI
/// options.
type Key<A> = (Direction, A, u8, Vec<u8>);

/// Which way a held body goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Direction {
    Upload,
    Download,
}

#[derive(Debug)]
struct Held {
    body: Vec<u8>,
    /// For downloads: the response's code and options (Block2 and Size2 added per block).
    code: Code,
    options: Vec<(u16, Vec<u8>)>,
    touched: Instant,
    /// Blocks taken (uploads) or served (downloads) so far; from 2 on, protected from
    /// newcomers.
    blocks: u32,
}

impl Held {
    /// The bytes this transfer holds under `key`: its body, its options, its key (twice: in the
    /// map and in the index) and [`HELD_OVERHEAD`].
    fn cost<A>(&self, key: &Key<A>) -> usize {
        let options: usize = self.options.iter().map(|(_, v)| v.len() + 32).sum();
        self.body.len() + options + 2 * key.3.len() + HELD_OVERHEAD
    }

    /// One block so far: not yet protected from newcomers, and indexed in `fresh`.
    fn is_fresh(&self) -> bool {
        self.blocks < 2
    }
}

/// A [`Handler`] with block-wise transfers (see the module doc).
pub struct Blockwise<A, H> {
    inner: H,
    limits: BlockLimits,
    /// Uploads being reassembled and downloads being served.
    held: BTreeMap<Key<A>, Held>,
    /// The same transfers by last use: the first is the next to expire or to be evicted.
    by_use: BTreeSet<(Instant, Key<A>)>,
    /// The transfers of one block, by last use: the first is the next a newcomer may push out.
    fresh: BTreeSet<(Instant, Key<A>)>,
    /// Uploads in progress per source.
    uploads: BTreeMap<A, usize>,
    /// The source of a peer (the identity unless [`Blockwise::with_source_key`]).
    source_key: fn(&A) -> A,
    /// What every held transfer costs ([`Held::cost`]).
    bytes: usize,
}

impl<A, H: core::fmt::Debug> core::fmt::Debug for Blockwise<A, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Blockwise")
            .field("inner", &self.inner)
            .field("transfers", &self.held.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

fn uri_key(req: &Message<'_>) -> Vec<u8> {
    let mut k = Vec::new();
    for o in req.options.iter().filter(|o| o.number == registry::URI_PATH || o.number == registry::URI_QUERY) {
        k.extend_from_slice(&o.number.to_be_bytes());
        k.extend_from_slice(&(o.value.len() as u16).to_be_bytes());
        k.extend_from_slice(o.value);
    }
    k
}

/// Sets option `number` of a request's or response's option list to `value` (replacing any).
fn set_option(options: &mut Vec<(u16, Vec<u8>)>, number: u16, value: Vec<u8>) {
    options.retain(|(n, _)| *n != number);
    options.push((number, value));
}

fn with_option(mut r: Response, number: u16, value: Vec<u8>) -> Response {
    set_option(&mut r.options, number, value);
    r
}

fn uint(v: usize) -> Vec<u8> {
    let mut b = [0u8; 4];
    encode_uint(u32::try_from(v).unwrap_or(u32::MAX), &mut b).to_vec()
}

impl<A: Ord + Clone, H> Blockwise<A, H> {
    /// Wraps `inner`.
    pub fn new(inner: H, limits: BlockLimits) -> Self {
        Blockwise {
            inner,
            limits,
            held: BTreeMap::new(),
            by_use: BTreeSet::new(),
            fresh: BTreeSet::new(),
            uploads: BTreeMap::new(),
            source_key: A::clone,
            bytes: 0,
        }
    }

    /// Counts uploads per `key(peer)` instead of per peer: the real-network drivers count per IP
    /// address, so that one host's ports share its uploads.
    pub fn with_source_key(mut self, key: fn(&A) -> A) -> Self {
        self.source_key = key;
        self
    }

    /// Bytes held by transfers in progress (at most [`BlockLimits::max_bytes`]): their bodies,
    /// options and keys, and what holding each costs besides.
    pub fn bytes_held(&self) -> usize {
        self.bytes
    }

    /// Transfers in progress: (uploads, downloads).
    pub fn transfers(&self) -> (usize, usize) {
        let uploads = self.held.keys().filter(|k| k.0 == Direction::Upload).count();
        (uploads, self.held.len() - uploads)
    }

    /// Forgets a transfer; returns its body.
    fn forget(&mut self, key: &Key<A>) -> Option<Vec<u8>> {
        let h = self.held.remove(key)?;
        self.bytes -= h.cost(key);
        let entry = (h.touched, key.clone());
        let indexed = self.by_use.remove(&entry);
        debug_assert!(indexed, "every held transfer is in the index");
        if h.is_fresh() {
            self.fresh.remove(&entry);
        }
        if key.0 == Direction::Upload {
            let source = (self.source_key)(&key.1);
            if let Some(n) = self.uploads.get_mut(&source) {
                *n -= 1;
                if *n == 0 {
                    self.uploads.remove(&source);
                }
            }
        }
        Some(h.body)
    }

    /// Holds `held` under `key` (replacing what was there), making room first: for a newcomer
    /// (one block) only by pushing out one-block transfers idle for the grace period. Whether
    /// it is held.
    fn hold(&mut self, key: Key<A>, held: Held, now: Instant) -> bool {
        self.forget(&key);
        let cost = held.cost(&key);
        if !self.make_room(cost, held.is_fresh(), now) {
            return false;
        }
        self.bytes += cost;
        if key.0 == Direction::Upload {
            *self.uploads.entry((self.source_key)(&key.1)).or_default() += 1;
        }
        self.by_use.insert((held.touched, key.clone()));
        if held.is_fresh() {
            self.fresh.insert((held.touched, key.clone()));
        }
        self.held.insert(key, held);
        true
    }

    /// Marks a held download used at `now` for one more block served; a reference to it.
    fn touch(&mut self, key: &Key<A>, now: Instant) -> Option<&Held> {
        let h = self.held.get_mut(key)?;
        let old = (h.touched, key.clone());
        if h.is_fresh() {
            self.fresh.remove(&old);
        }
        h.blocks = h.blocks.saturating_add(1);
        if h.touched != now {
            let entry = self.by_use.take(&old).unwrap_or_else(|| (now, key.clone()));
            h.touched = now;
            self.by_use.insert((now, entry.1));
        }
        Some(h)
    }

    /// Forgets the transfers unused for their lifetime: the oldest first, stopping at the first
    /// still alive (no scan of the others).
    fn expire(&mut self, now: Instant) {
        let life = self.limits.lifetime;
        while let Some((t, k)) = self.by_use.first() {
            if now < *t + life {
                return;
            }
            let k = k.clone();
            self.forget(&k);
        }
    }

    /// Makes room for `extra` bytes: the least recently used one-block transfers go first (for a
    /// `newcomer`, only those idle for the grace period), then, for a transfer's next block, the
    /// least recently used of all. Whether there is room.
    fn make_room(&mut self, extra: usize, newcomer: bool, now: Instant) -> bool {
        if extra > self.limits.max_bytes {
            return false;
        }
        while self.bytes + extra > self.limits.max_bytes {
            let grace = self.limits.newcomer_grace;
            let victim = match self.fresh.first() {
                Some((t, k)) if !newcomer || now >= *t + grace => k.clone(),
                _ if newcomer => return false,
                _ => match self.by_use.first() {
                    Some((_, k)) => k.clone(),
                    None => return false,
                },
            };
            self.forget(&victim);
        }
        true
    }

    /// Seconds until the oldest one-block transfer may give way to a newcomer (at least 1).
    fn retry_after(&self, now: Instant) -> usize {
        let grace = self.limits.newcomer_grace;
        let free_at = self.fresh.first().map_or(now + grace, |(t, _)| *t + grace);
        (free_at - now).as_secs_f64().ceil().max(1.0) as usize
    }

    /// Block `block` of a held download as the reply (4.02 for a block beyond the body).
    fn block_of(held: &Held, block: Block) -> Reply {
        let (start, size) = (block.offset(), block.size());
        if start >= held.body.len() && !(start == 0 && held.body.is_empty()) {
            return Reply::Now(Response::new(Code::BAD_OPTION, b"block beyond the body".to_vec()));
        }
        let end = (start + size).min(held.body.len());
        let more = end < held.body.len();
        let mut r =
            Response { code: held.code, options: held.options.clone(), payload: held.body[start..end].to_vec() };
        set_option(&mut r.options, registry::BLOCK2, Block { num: block.num, more, szx: block.szx }.encode());
        if block.num == 0 {
            set_option(&mut r.options, registry::SIZE2, uint(held.body.len()));
        }
        Reply::Now(r)
    }
}

impl<A: Ord + Clone + Send, H: Handler<A>> Blockwise<A, H> {
    /// Runs the inner handler on `req` with `body` (and without Block1/Size1), then sends its
    /// response block-wise when it is larger than the block size.
    fn complete(
        &mut self,
        now: Instant,
        from: &A,
        id: RequestId,
        req: &Message<'_>,
        body: &[u8],
        block1: Option<Block>,
    ) -> Reply {
        let opts: Vec<CoapOption<'_>> =
            req.options.iter().filter(|o| o.number != registry::BLOCK1 && o.number != registry::SIZE1).collect();
        let whole = Message { options: Options::from_list(&opts), payload: body, ..*req };
        let Some(mut resp) = self.inner.handle(now, from, id, &whole).into_response() else { return Reply::Later };
        if let Some(b) = block1 {
            set_option(&mut resp.options, registry::BLOCK1, Block { more: false, ..b }.encode());
        }
        // the client may ask for smaller blocks than ours (early negotiation, RFC 7959 §2.4)
        let asked = req.options.get(registry::BLOCK2).and_then(Block::decode).map(|b| b.szx);
        let ours = Block::szx_of(self.limits.block_size).unwrap_or(6);
        let szx = asked.map_or(ours, |a| a.min(ours));
        if resp.payload.len() <= 16 << szx {
            return Reply::Now(resp);
        }
        let held = Held { body: resp.payload, code: resp.code, options: resp.options, touched: now, blocks: 1 };
        let first = Self::block_of(&held, Block { num: 0, more: false, szx });
        let key = (Direction::Download, from.clone(), req.code.0, uri_key(req));
        // not held when there is no room: its later blocks are cut from the handler's answer
        self.hold(key, held, now);
        first
    }
}

impl<A: Ord + Clone + Send, H: Handler<A>> Handler<A> for Blockwise<A, H> {
    fn next_change(&self) -> Option<Instant> {
        self.inner.next_change()
    }

    /// The inner handler's changes (notifications are not sent block-wise: a representation
    /// larger than a message is not notified).
    fn changes(&mut self, now: Instant) -> Vec<crate::Change> {
        self.inner.changes(now)
    }

    fn handle(&mut self, now: Instant, from: &A, id: RequestId, req: &Message<'_>) -> Reply {
        self.expire(now);
        let bad = |what: &str| Reply::Now(Response::new(Code::BAD_REQUEST, format!("bad {what} option")));
        let key = |d: Direction| (d, from.clone(), req.code.0, uri_key(req));
        if let Some(v) = req.options.get(registry::BLOCK1) {
            let Some(b) = Block::decode(v) else { return bad("Block1") };
            if b.more && req.payload.len() != b.size() {
                return bad("Block1 (a block that is not the last must be full)");
            }
            if req.payload.len() > b.size() {
                return bad("Block1 (a block longer than its size)");
            }
            let k = key(Direction::Upload);
            if b.num == 0 {
                self.forget(&k);
                // a new upload that would be held (more blocks follow)
                let source = (self.source_key)(from);
                if b.more && self.uploads.get(&source).is_some_and(|&n| n >= self.limits.max_uploads_per_source) {
                    let why = "too many block-wise uploads in progress from this source";
                    return Reply::Now(Response::new(Code::SERVICE_UNAVAILABLE, why));
                }
            }
            let have = self.held.get(&k).map_or(0, |h| h.body.len());
            if b.offset() != have {
                //= https://www.rfc-editor.org/rfc/rfc7959#section-2.9.2
                //# 4.08 (Request Entity Incomplete) ... the server has not received the blocks
                //# of the request body that it needs to proceed.
                self.forget(&k);
                return Reply::Now(Response::new(Code::REQUEST_ENTITY_INCOMPLETE, Vec::new()));
            }
            let max = self.limits.max_body;
            let announced = req.options.get(registry::SIZE1).and_then(decode_uint).map_or(0, |v| v as usize);
            if have + req.payload.len() > max || announced > max {
                self.forget(&k);
                let r = Response::new(Code::REQUEST_ENTITY_TOO_LARGE, Vec::new());
                return Reply::Now(with_option(r, registry::SIZE1, uint(max)));
            }
            if !b.more {
                let mut body = self.forget(&k).unwrap_or_default();
                body.extend_from_slice(req.payload);
                return self.complete(now, from, id, req, &body, Some(b));
            }
            if b.num >= MAX_NUM {
                return bad("Block1 (block number)");
            }
            let mut body = self.forget(&k).unwrap_or_default();
            body.extend_from_slice(req.payload);
            let held = Held { body, code: Code::EMPTY, options: Vec::new(), touched: now, blocks: b.num + 1 };
            if !self.hold(k, held, now) {
                // a newcomer while every held one-block transfer is within its grace period:
                // come back when the oldest may give way (Max-Age, RFC 7252 §5.9.3.4)
                let why = "the server holds as many block-wise transfers as it can";
                let r = Response::new(Code::SERVICE_UNAVAILABLE, why);
                return Reply::Now(with_option(r, registry::MAX_AGE, uint(self.retry_after(now))));
            }
            let r = Response::new(Code::CONTINUE, Vec::new());
            return Reply::Now(with_option(r, registry::BLOCK1, Block { more: true, ..b }.encode()));
        }
        if let Some(v) = req.options.get(registry::BLOCK2) {
            let Some(b) = Block::decode(v) else { return bad("Block2") };
            if b.num > 0 {
                if let Some(held) = self.touch(&key(Direction::Download), now) {
                    return Self::block_of(held, b);
                }
                // not held (expired, evicted): the handler runs again and the block is cut from its
                // answer (the resources are idempotent for GET)
                let Some(resp) = self.inner.handle(now, from, id, req).into_response() else { return Reply::Later };
                let held = Held { body: resp.payload, code: resp.code, options: resp.options, touched: now, blocks: 1 };
                return Self::block_of(&held, b);
            }
        }
        self.complete(now, from, id, req, req.payload, None)
    }
}

/// The client side of one block-wise exchange (see the module doc).
#[derive(Debug, Clone)]
pub struct Transfer {
    /// The request without its body.
    base: Request,
    body: Vec<u8>,
    /// Block1 size for the upload (None: the body goes whole).
    upload_szx: Option<u8>,
    /// The Block2 size asked for (None: the server's).
    download_szx: Option<u8>,
    /// The last request sent (repeated with Echo after a 4.01).
    last: Request,
    received: Vec<u8>,
    max_body: usize,
    echo_tried: bool,
}

/// What to do after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send this request next.
    Send(Request),
    /// The whole response.
    Done(Response),
    /// The transfer cannot go on (why).
    Failed(String),
}

impl Transfer {
    /// A transfer of `req`. With `block_size` (16–1024), a body larger than it is uploaded in
    /// Block1 blocks of that size, and responses are asked for in blocks of that size; without,
    /// the body goes whole (it must fit a message) and the server chooses. Downloaded bodies
    /// beyond `max_body` fail.
    pub fn new(req: Request, block_size: Option<usize>, max_body: usize) -> Result<Self, String> {
        let szx = match block_size {
            Some(s) => {
                Some(Block::szx_of(s).ok_or_else(|| format!("block size {s} is not a power of two from 16 to 1024"))?)
            }
            None => None,
        };
        let mut base = req;
        let body = std::mem::take(&mut base.payload);
        if let Some(z) = szx {
            if body.len().div_ceil(16 << z) > MAX_NUM as usize + 1 {
                return Err(format!("a body of {} bytes needs more than 2^20 blocks of {} bytes", body.len(), 16 << z));
            }
        }
        let upload_szx = szx.filter(|&z| body.len() > 16 << z);
        let mut t = Transfer {
            last: base.clone(),
            base,
            body,
            upload_szx,
            download_szx: szx,
            received: Vec::new(),
            max_body,
            echo_tried: false,
        };
        t.last = t.upload_request(0);
        Ok(t)
    }

    /// The first request to send.
    pub fn first(&self) -> Request {
        self.last.clone()
    }

    fn with(mut req: Request, number: u16, value: Vec<u8>) -> Request {
        set_option(&mut req.options, number, value);
        req
    }

    /// The request carrying upload block `num` (or the whole body without block-wise upload).
    fn upload_request(&self, num: u32) -> Request {
        let Some(szx) = self.upload_szx else {
            let mut r = self.base.clone();
            r.payload = self.body.clone();
            return match self.download_szx {
                Some(z) => Self::with(r, registry::BLOCK2, Block { num: 0, more: false, szx: z }.encode()),
                None => r,
            };
        };
        let b = Block { num, more: false, szx };
        let start = b.offset().min(self.body.len());
        let end = (start + b.size()).min(self.body.len());
        let mut r = self.base.clone();
        r.payload = self.body[start..end].to_vec();
        let b = Block { more: end < self.body.len(), ..b };
        r = Self::with(r, registry::BLOCK1, b.encode());
        // the last upload block asks for the response's block size (RFC 7959 §2.4: a Block2
        // with NUM 0 on the request the first response block answers; §3.2 combines them)
        if let (false, Some(z)) = (b.more, self.download_szx) {
            r = Self::with(r, registry::BLOCK2, Block { num: 0, more: false, szx: z }.encode());
        }
        if num == 0 {
            r = Self::with(r, registry::SIZE1, uint(self.body.len()));
        }
        r
    }

    /// Takes a response to the last request sent.
    pub fn on_response(&mut self, resp: Response) -> Step {
        let get = |n: u16| resp.options.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_slice());
        //= https://www.rfc-editor.org/rfc/rfc9175#section-2.3
        //# ... the client ... sends the request again with the Echo option value
        if resp.code == Code::UNAUTHORIZED && !self.echo_tried {
            if let Some(echo) = get(registry::ECHO) {
                self.echo_tried = true;
                self.base = Self::with(self.base.clone(), registry::ECHO, echo.to_vec());
                self.last = Self::with(self.last.clone(), registry::ECHO, echo.to_vec());
                return Step::Send(self.last.clone());
            }
        }
        if resp.code == Code::CONTINUE {
            let Some(ack) = get(registry::BLOCK1).and_then(Block::decode) else {
                return Step::Failed("2.31 Continue without a Block1 option".into());
            };
            let sent =
                self.last.options.iter().find(|(n, _)| *n == registry::BLOCK1).and_then(|(_, v)| Block::decode(v));
            let (Some(mine), Some(sent)) = (self.upload_szx, sent) else {
                return Step::Failed("2.31 Continue to a request that was not a block".into());
            };
            if ack.num != sent.num || !sent.more {
                return Step::Failed("2.31 Continue for a block we did not send".into());
            }
            // the server may ask for smaller blocks (RFC 7959 §2.5): go on from the next offset in its size
            let szx = ack.szx.min(mine);
            let next_offset = sent.offset() + sent.size();
            self.upload_szx = Some(szx);
            let num = (next_offset / (16 << szx)) as u32;
            self.last = self.upload_request(num);
            return Step::Send(self.last.clone());
        }
        let Some(b) = get(registry::BLOCK2).and_then(Block::decode) else {
            if !self.received.is_empty() {
                return Step::Failed("a block-wise response ended without Block2".into());
            }
            return Step::Done(resp);
        };
        if b.offset() != self.received.len() {
            return Step::Failed(format!(
                "block {} at offset {} after {} bytes",
                b.num,
                b.offset(),
                self.received.len()
            ));
        }
        if self.received.len() + resp.payload.len() > self.max_body {
            return Step::Failed(format!("response body larger than {} bytes", self.max_body));
        }
        if b.more && resp.payload.len() != b.size() {
            return Step::Failed("a block that is not the last is not full".into());
        }
        self.received.extend_from_slice(&resp.payload);
        if !b.more {
            let mut r = resp;
            r.options.retain(|(n, _)| *n != registry::BLOCK2);
            r.payload = std::mem::take(&mut self.received);
            return Step::Done(r);
        }
        // the next block: the request without its body and Block1, asking for the block at the
        // offset reached, in our size if we chose a smaller one than the server's (RFC 7959
        // §2.4: a later request may ask for a smaller block; its number then counts in that size)
        let szx = self.download_szx.map_or(b.szx, |mine| mine.min(b.szx));
        let num = (self.received.len() / (16 << szx)) as u32;
        if num > MAX_NUM {
            return Step::Failed("too many blocks".into());
        }
        let mut next = self.base.clone();
        next.options.retain(|(n, _)| *n != registry::BLOCK1 && *n != registry::SIZE1);
        self.last = Self::with(next, registry::BLOCK2, Block { num, more: false, szx }.encode());
        Step::Send(self.last.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coap_wire::MessageType;

    /// Answers POST with the body it got (2.04), GET with `len` bytes counting up (2.05).
    #[derive(Debug)]
    struct Echo {
        len: usize,
        bodies: Vec<usize>,
    }

    impl<A> Handler<A> for Echo {
        fn handle(&mut self, _: Instant, _: &A, _: RequestId, req: &Message<'_>) -> Reply {
            self.bodies.push(req.payload.len());
            match req.code {
                Code::POST => Reply::Now(Response::new(Code::CHANGED, req.payload.to_vec())),
                _ => Reply::Now(Response::new(Code::CONTENT, (0..self.len).map(|i| i as u8).collect::<Vec<u8>>())),
            }
        }
    }

    /// Hands `req` to the server as a decoded message would come.
    fn serve(s: &mut Blockwise<u8, Echo>, now: Instant, req: &Request) -> Response {
        serve_from(s, 1, now, req)
    }

    fn serve_from<A: Ord + Clone + Send>(s: &mut Blockwise<A, Echo>, from: A, now: Instant, req: &Request) -> Response {
        let mut opts: Vec<CoapOption<'_>> =
            req.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
        opts.sort_by_key(|o| o.number);
        let m = Message {
            ty: MessageType::Con,
            code: req.code,
            message_id: 1,
            token: &[],
            options: Options::from_list(&opts),
            payload: &req.payload,
        };
        s.handle(now, &from, RequestId(0), &m).into_response().expect("answered now")
    }

    fn opt(r: &Response, n: u16) -> Option<&[u8]> {
        r.options.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_slice())
    }

    fn post(len: usize) -> Request {
        let mut r = Request::get("echo");
        r.code = Code::POST;
        r.payload = (0..len).map(|i| (i % 251) as u8).collect();
        r
    }

    #[test]
    fn block_values() {
        // RFC 7959 §2.2: NUM << 4 | M << 3 | SZX
        assert_eq!(Block { num: 1, more: true, szx: 6 }.encode(), [0x1E]);
        assert_eq!(Block { num: 300, more: false, szx: 2 }.encode(), [0x12, 0xC2]);
        assert_eq!(Block::decode(&[0x12, 0xC2]), Some(Block { num: 300, more: false, szx: 2 }));
        assert_eq!(Block::decode(&[]), Some(Block { num: 0, more: false, szx: 0 }));
        assert_eq!(Block::decode(&[0x0F]), None, "SZX 7 is BERT");
        assert_eq!(Block::decode(&[1, 2, 3, 4]), None);
        assert_eq!(Block { num: 3, more: false, szx: 5 }.offset(), 3 * 512);
        assert_eq!(
            (Block::szx_of(16), Block::szx_of(1024), Block::szx_of(1000), Block::szx_of(2048)),
            (Some(0), Some(6), None, None)
        );
    }

    #[test]
    fn a_2000_byte_post_in_512_byte_blocks_round_trips_whole() {
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default());
        let mut t = Transfer::new(post(2000), Some(512), 1 << 20).unwrap();
        let mut req = t.first();
        let (mut sent, mut firsts) = (Vec::new(), Vec::new());
        let done = loop {
            sent.push((req.payload.len(), req.options.iter().find(|o| o.0 == registry::BLOCK1).map(|o| o.1.clone())));
            let block2 = req.options.iter().find(|o| o.0 == registry::BLOCK2).map(|o| o.1.clone());
            let resp = serve(&mut s, Instant::ZERO, &req);
            let answered = resp.options.iter().find(|o| o.0 == registry::BLOCK2).map(|o| o.1.clone());
            firsts.push((block2, answered));
            match t.on_response(resp) {
                Step::Send(r) => req = r,
                Step::Done(r) => break r,
                Step::Failed(e) => panic!("{e}"),
            }
        };
        // four Block1 requests: 512, 512, 512 and 464 bytes (0x0D = num 0, M, SZX 5; 0x1D; 0x2D; 0x35),
        // the last with Block2 num 0 SZX 5 (0x05): the server answers it with the response's
        // first 512 bytes (it had sent its own 1,024), and the client asks for blocks 1 to 3
        let blocks: Vec<(usize, Option<Vec<u8>>)> = vec![
            (512, Some(vec![0x0D])),
            (512, Some(vec![0x1D])),
            (512, Some(vec![0x2D])),
            (464, Some(vec![0x35])),
            (0, None),
            (0, None),
            (0, None),
        ];
        assert_eq!(sent, blocks);
        // the last upload block asked for 512-byte blocks, and the answer is block 0 of 512, more
        assert_eq!(firsts[3], (Some(vec![0x05]), Some(vec![0x0D])));
        assert_eq!(s.inner.bodies, [2000], "the handler ran once, on the whole body");
        assert_eq!(done.code, Code::CHANGED);
        assert_eq!(done.payload, post(2000).payload);
        // the response is held for its follow-ups until it expires: its 2,000 bytes, its Block1
        // option (1 byte + 32), its key twice (Uri-Path "echo": 2 + 2 + 4 bytes) and 192
        assert_eq!(s.bytes_held(), 2000 + 33 + 2 * 8 + 192);
        assert_eq!(s.transfers(), (0, 1));
    }

    #[test]
    fn a_large_get_comes_in_blocks_of_the_size_the_client_asks_for() {
        let mut s = Blockwise::new(Echo { len: 100, bodies: Vec::new() }, BlockLimits::default());
        let mut t = Transfer::new(Request::get("big"), Some(32), 1 << 20).unwrap();
        let first = serve(&mut s, Instant::ZERO, &t.first());
        // block 0 of 32 bytes, more, SZX 1 (0x09), and Size2 100
        assert_eq!(
            (first.payload.len(), opt(&first, registry::BLOCK2), opt(&first, registry::SIZE2)),
            (32, Some(&[0x09][..]), Some(&[100][..]))
        );
        let mut step = t.on_response(first);
        let mut n = 1;
        let body = loop {
            match step {
                Step::Send(r) => step = t.on_response(serve(&mut s, Instant::ZERO, &r)),
                Step::Done(r) => break r.payload,
                Step::Failed(e) => panic!("{e}"),
            }
            n += 1;
        };
        assert_eq!(n, 4, "100 bytes in blocks of 32: 32 + 32 + 32 + 4");
        assert_eq!(body, (0..100).map(|i| i as u8).collect::<Vec<u8>>());
        assert_eq!(s.inner.bodies.len(), 1, "the follow-ups are served from the held body");
    }

    #[test]
    fn a_client_that_asked_for_small_blocks_keeps_asking_for_them() {
        // -b 16 (SZX 0); a server that answers block 0 in 64 bytes (SZX 2) anyway: the next
        // request asks for the block at offset 64 in 16-byte blocks, number 64 / 16 = 4, SZX 0
        let mut t = Transfer::new(Request::get("big"), Some(16), 1 << 20).unwrap();
        // Block2 0/0/16: the value 0, an empty uint
        assert_eq!(opt_of(&t.first().options, registry::BLOCK2), Some(vec![]));
        let mut first = Response::new(Code::CONTENT, vec![7u8; 64]);
        first.options.push((registry::BLOCK2, Block { num: 0, more: true, szx: 2 }.encode()));
        let Step::Send(next) = t.on_response(first) else { panic!("another block") };
        // Block2 value: num 4 << 4 | more 0 << 3 | szx 0 = 0x40
        assert_eq!(opt_of(&next.options, registry::BLOCK2), Some(vec![0x40]));
        // without -b, the server's size stays: block 1 of 64 bytes (0x12)
        let mut t = Transfer::new(Request::get("big"), None, 1 << 20).unwrap();
        let mut first = Response::new(Code::CONTENT, vec![7u8; 64]);
        first.options.push((registry::BLOCK2, Block { num: 0, more: true, szx: 2 }.encode()));
        let Step::Send(next) = t.on_response(first) else { panic!("another block") };
        assert_eq!(opt_of(&next.options, registry::BLOCK2), Some(vec![0x12]));
    }

    fn opt_of(options: &[(u16, Vec<u8>)], n: u16) -> Option<Vec<u8>> {
        options.iter().find(|o| o.0 == n).map(|o| o.1.clone())
    }

    #[test]
    fn bad_sequences_and_oversized_bodies_are_refused() {
        let limits = BlockLimits { max_body: 1000, ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
        let block = |num: u32, more: bool, len: usize| {
            let mut r = post(len);
            r.options.push((registry::BLOCK1, Block { num, more, szx: 4 }.encode()));
            r
        };
        // block 1 before block 0: 4.08
        assert_eq!(serve(&mut s, Instant::ZERO, &block(1, true, 256)).code, Code::REQUEST_ENTITY_INCOMPLETE);
        // blocks 0..3 of 256 bytes: the fourth would make 1024 > 1000 bytes: 4.13 with Size1 1000
        for num in 0..3 {
            assert_eq!(serve(&mut s, Instant::ZERO, &block(num, true, 256)).code, Code::CONTINUE);
        }
        let r = serve(&mut s, Instant::ZERO, &block(3, true, 256));
        assert_eq!((r.code, opt(&r, registry::SIZE1)), (Code::REQUEST_ENTITY_TOO_LARGE, Some(&[0x03, 0xE8][..])));
        assert_eq!(s.bytes_held(), 0, "the refused upload is forgotten");
        // a block that is not the last must be full, and no block may be longer than its size
        assert_eq!(serve(&mut s, Instant::ZERO, &block(0, true, 100)).code, Code::BAD_REQUEST);
        assert_eq!(serve(&mut s, Instant::ZERO, &block(0, false, 257)).code, Code::BAD_REQUEST);
        assert!(s.inner.bodies.is_empty());
    }

    #[test]
    fn transfers_expire_and_stay_within_their_byte_budget() {
        let limits = BlockLimits { max_bytes: 3000, lifetime: Duration::from_secs(10), ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 2000, bodies: Vec::new() }, limits);
        // each big GET of another path holds 2000 bytes, no option, its key twice (Uri-Path "a":
        // 2 + 2 + 1 bytes) and 192: 2,202; the second does not fit beside the first (3000 B
        // budget), which, idle for less than the grace period, is safe from it: not held
        serve(&mut s, Instant::ZERO, &Request::get("a"));
        serve(&mut s, Instant::from_nanos(1), &Request::get("b"));
        assert_eq!((s.bytes_held(), s.transfers()), (2202, (0, 1)));
        // 11 s later (a small POST, whose answer is not held) "b" has expired
        serve(&mut s, Instant::ZERO + Duration::from_secs(11), &post(10));
        assert_eq!((s.bytes_held(), s.transfers()), (0, (0, 0)));
    }

    #[test]
    fn the_budget_counts_each_transfers_key_and_use_keeps_it_alive() {
        let limits = BlockLimits { lifetime: Duration::from_secs(10), ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 2000, bodies: Vec::new() }, limits);
        // a GET with a 1,000-byte Uri-Query: held with 2 · (2 + 2 + 1) + 2 · (2 + 2 + 1000) bytes
        // of key besides its 2,000-byte body and 192
        let mut long = Request::get("a");
        long.options.push((registry::URI_QUERY, vec![b'q'; 1000]));
        serve(&mut s, Instant::ZERO, &long);
        assert_eq!(s.bytes_held(), 2000 + 2 * 5 + 2 * 1004 + 192);
        // "b" at 1 s; "a"'s block 1 asked for at 5 s keeps "a" alive: at 12 s "b" (unused since
        // 1 s) has expired and "a" (since 5 s) has not; at 16 s both have
        serve(&mut s, Instant::ZERO + Duration::from_secs(1), &Request::get("b"));
        let mut next = long.clone();
        next.options.push((registry::BLOCK2, Block { num: 1, more: false, szx: 6 }.encode()));
        assert_eq!(serve(&mut s, Instant::ZERO + Duration::from_secs(5), &next).payload.len(), 2000 - 1024);
        serve(&mut s, Instant::ZERO + Duration::from_secs(12), &post(10));
        assert_eq!((s.bytes_held(), s.transfers()), (2000 + 2 * 5 + 2 * 1004 + 192, (0, 1)));
        serve(&mut s, Instant::ZERO + Duration::from_secs(16), &post(10));
        assert_eq!((s.bytes_held(), s.transfers()), (0, (0, 0)));
    }

    #[test]
    fn a_source_may_hold_a_few_uploads_at_once() {
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default());
        let first_block = |path: &str| {
            let mut r = post(16);
            r.options = vec![(registry::URI_PATH, path.as_bytes().to_vec())];
            r.options.push((registry::BLOCK1, Block { num: 0, more: true, szx: 0 }.encode()));
            r
        };
        // four uploads from source 1 are held; the fifth is refused, another source's is not
        for p in ["a", "b", "c", "d"] {
            assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block(p)).code, Code::CONTINUE);
        }
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block("e")).code, Code::SERVICE_UNAVAILABLE);
        assert_eq!(serve_from(&mut s, 2, Instant::ZERO, &first_block("e")).code, Code::CONTINUE);
        // a whole body in one block is not held: never refused
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &post(10)).code, Code::CHANGED);
        // "a" finished: room for another
        let mut last = post(10);
        last.options = vec![(registry::URI_PATH, b"a".to_vec())];
        last.options.push((registry::BLOCK1, Block { num: 1, more: false, szx: 0 }.encode()));
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &last).code, Code::CHANGED);
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &first_block("e")).code, Code::CONTINUE);
        assert_eq!(s.transfers(), (5, 0));
    }

    /// Block `num` of a 1,024-byte-block upload to `path` (`more` unless it is the last).
    fn upload_block(path: &str, num: u32, more: bool) -> Request {
        let mut r = post(1024);
        r.options = vec![(registry::URI_PATH, path.as_bytes().to_vec())];
        r.options.push((registry::BLOCK1, Block { num, more, szx: 6 }.encode()));
        r
    }

    #[test]
    fn uploads_are_counted_per_source_address() {
        // peers 101-105 are one source (one address, five ports): four uploads, then 5.03
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, BlockLimits::default())
            .with_source_key(|a: &u32| a / 100);
        for peer in 101..105 {
            assert_eq!(serve_from(&mut s, peer, Instant::ZERO, &upload_block("u", 0, true)).code, Code::CONTINUE);
        }
        assert_eq!(serve_from(&mut s, 105, Instant::ZERO, &upload_block("u", 0, true)).code, Code::SERVICE_UNAVAILABLE);
        assert_eq!(serve_from(&mut s, 201, Instant::ZERO, &upload_block("u", 0, true)).code, Code::CONTINUE);
    }

    #[test]
    fn a_flood_of_first_blocks_pushes_out_neither_a_slow_upload_nor_its_first_block() {
        // a legitimate upload of ten 1,024-byte blocks, one every 2 s, and from its first block
        // on 2,000 uploads a second from new sources that never send a second block, into a
        // 1-MB budget (about 800 of them: full in 0.4 s; the third probe's flood, 12,000 a
        // second into 16 MB, cut an upload like this one at its second block with 4.08)
        let limits = BlockLimits { max_bytes: 1 << 20, ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
        let at = |ms: u64| Instant::ZERO + Duration::from_millis(ms);
        let (mut flood, mut refused, mut held) = (1u32, 0, 0);
        let mut legit = Vec::new();
        for ms in 0..25_000u64 {
            if ms % 2_000 == 0 && legit.len() < 10 {
                let num = legit.len() as u32;
                legit.push(serve_from(&mut s, 0, at(ms), &upload_block("legit", num, num < 9)).code);
            }
            for _ in 0..2 {
                match serve_from(&mut s, flood, at(ms), &upload_block("f", 0, true)).code {
                    Code::CONTINUE => held += 1,
                    Code::SERVICE_UNAVAILABLE => refused += 1,
                    c => panic!("{c:?}"),
                }
                flood += 1;
            }
            assert!(s.bytes_held() <= 1 << 20);
        }
        let mut want = vec![Code::CONTINUE; 9];
        want.push(Code::CHANGED);
        assert_eq!(legit, want, "every block taken, the body handed on whole");
        assert_eq!(s.inner.bodies.last(), Some(&(10 * 1024)));
        // the flood recycles its own: refused while every one-block upload held is younger
        // than the grace period (10 s), then its oldest give way to newer ones
        assert!(refused > 40_000 && held > 1_600, "{refused} refused, {held} held");
    }

    #[test]
    fn a_newcomer_refused_for_want_of_room_is_told_when_to_come_back() {
        let limits = BlockLimits { max_bytes: 1024 + 2 * 5 + 192, ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
        assert_eq!(serve_from(&mut s, 1, Instant::ZERO, &upload_block("a", 0, true)).code, Code::CONTINUE);
        let r = serve_from(&mut s, 2, Instant::ZERO, &upload_block("b", 0, true));
        assert_eq!((r.code, opt(&r, registry::MAX_AGE)), (Code::SERVICE_UNAVAILABLE, Some(&[10][..])));
    }

    #[test]
    fn a_transfers_next_block_may_push_out_any_other() {
        // two uploads fill the budget; a third's first block is refused (both are within the
        // grace period); the first's second block pushes out the second (one block), and the
        // first upload goes on
        let limits = BlockLimits { max_bytes: 2 * (1024 + 2 * 5 + 192) + 100, ..BlockLimits::default() };
        let mut s = Blockwise::new(Echo { len: 0, bodies: Vec::new() }, limits);
        let t0 = Instant::ZERO;
        assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 0, true)).code, Code::CONTINUE);
        assert_eq!(serve_from(&mut s, 2, t0, &upload_block("b", 0, true)).code, Code::CONTINUE);
        assert_eq!(serve_from(&mut s, 3, t0, &upload_block("c", 0, true)).code, Code::SERVICE_UNAVAILABLE);
        assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 1, true)).code, Code::CONTINUE);
        assert_eq!(s.transfers(), (1, 0));
        assert_eq!(serve_from(&mut s, 1, t0, &upload_block("a", 2, false)).code, Code::CHANGED);
        // after the grace period a one-block upload gives way to a newcomer
        let later = t0 + Duration::from_secs(10);
        assert_eq!(serve_from(&mut s, 2, t0, &upload_block("b", 0, true)).code, Code::CONTINUE);
        assert_eq!(serve_from(&mut s, 3, t0, &upload_block("c", 0, true)).code, Code::CONTINUE);
        assert_eq!(serve_from(&mut s, 4, later, &upload_block("d", 0, true)).code, Code::CONTINUE);
        assert_eq!(s.transfers(), (2, 0));
    }

    #[test]
    fn an_echo_challenge_is_answered_once_with_its_value() {
        let mut t = Transfer::new(Request::get("test"), None, 1 << 20).unwrap();
        let mut challenge = Response::new(Code::UNAUTHORIZED, Vec::new());
        challenge.options.push((registry::ECHO, vec![1, 2, 3]));
        let Step::Send(again) = t.on_response(challenge.clone()) else { panic!("repeats") };
        assert!(again.options.contains(&(registry::ECHO, vec![1, 2, 3])));
        // a second 4.01 is the answer
        assert_eq!(t.on_response(challenge.clone()), Step::Done(challenge));
    }
}
