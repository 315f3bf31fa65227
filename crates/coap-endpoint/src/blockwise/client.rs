//! The client side of a block-wise exchange: [`Transfer`] (see the module doc of [`super`]).

use coap_wire::{registry, Code};

use super::{set_option, uint, Block, MAX_NUM};
use crate::server::Response;
use crate::Request;

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
