//! The server side of block-wise transfers: [`Blockwise`] around a [`Handler`], its transfers
//! bounded in bytes, per source and in time (see the module doc of [`super`]).

use std::collections::{BTreeMap, BTreeSet};

use coap_cc::Instant;
use coap_wire::{decode_uint, registry, CoapOption, Code, Message, Options};

use super::{set_option, uint, uri_key, with_option, Block, BlockLimits, MAX_NUM};
use crate::server::{Handler, Reply, RequestId, Response};

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
    pub(super) inner: H,
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
