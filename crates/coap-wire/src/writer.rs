//! A bounds-checked cursor over the caller's output buffer.

use crate::Error;

pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> Writer<'b> {
    pub(crate) fn new(buf: &'b mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let end = self.pos.checked_add(bytes.len()).ok_or(Error::BufferTooSmall)?;
        let dst = self.buf.get_mut(self.pos..end).ok_or(Error::BufferTooSmall)?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    pub(crate) fn byte(&mut self, b: u8) -> Result<(), Error> {
        self.put(&[b])
    }

    pub(crate) fn written(&self) -> usize {
        self.pos
    }
}
