//! A TCP segment as the model exchanges it, and its size on the wire.

use super::params::TcpParams;

/// Segment flags.
pub const SYN: u8 = 1;
/// Acknowledgement field valid.
pub const ACK: u8 = 2;
/// Sender has finished.
pub const FIN: u8 = 4;
/// Reset: the connection is gone.
pub const RST: u8 = 8;

/// At most this many SACK blocks fit beside the other options (no timestamps: 4, RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The SACK blocks of a segment (first a D-SACK block, if any, then the most recent first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    /// Appends `[start, end)` if there is room.
    pub fn push(&mut self, start: u64, end: u64) {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }
    /// The blocks.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    /// No block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A segment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    /// SYN | ACK | FIN | RST.
    pub flags: u8,
    /// First sequence number.
    pub seq: u64,
    /// Acknowledgement number (with ACK).
    pub ack: u64,
    /// SACK option (with ACK).
    pub sack: SackBlocks,
    /// Payload.
    pub payload: Vec<u8>,
    /// A retransmission (for statistics only; TCP does not carry it).
    pub retransmission: bool,
}

impl Segment {
    /// Sequence space it takes.
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64 + (self.flags & SYN != 0) as u64 + (self.flags & FIN != 0) as u64
    }
    /// Bytes on the wire: IPv4 (20) and TCP (20) headers, options, payload. SYN and SYN/ACK carry
    /// `syn_options` (MSS, window scale) and, with SACK, SACK-permitted (NOP, NOP, kind, length:
    /// 4 bytes, as Linux writes it without timestamps); a SACK option is NOP, NOP, kind, length
    /// and 8 bytes per block.
    pub fn wire_size(&self, p: &TcpParams) -> u32 {
        let syn = if self.flags & SYN != 0 { p.syn_options + if p.sack { 4 } else { 0 } } else { 0 };
        let n = self.sack.as_slice().len() as u32;
        let sack = if n > 0 { 4 + 8 * n } else { 0 };
        40 + syn + sack + self.payload.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes() {
        let p = TcpParams::default();
        let syn = Segment { flags: SYN, ..Segment::default() };
        assert_eq!(syn.wire_size(&p), 40 + 8 + 4); // MSS, window scale, SACK-permitted
        assert_eq!(syn.wire_size(&TcpParams { sack: false, ..p.clone() }), 48);
        let mut ack = Segment { flags: ACK, ..Segment::default() };
        assert_eq!(ack.wire_size(&p), 40);
        ack.sack.push(10, 20);
        ack.sack.push(30, 40);
        assert_eq!(ack.wire_size(&p), 40 + 4 + 16);
        for i in 0..4 {
            ack.sack.push(i, i + 1);
        }
        assert_eq!(ack.sack.as_slice().len(), 4, "four blocks at most");
        assert_eq!(ack.wire_size(&p), 40 + 4 + 32);
    }
}
