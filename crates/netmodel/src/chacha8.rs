//! ChaCha8 that keeps one block: the stream of `rand_chacha::ChaCha8Rng`, word for word, in
//! 96 bytes instead of 320.
//!
//! Every simulated host's endpoint owns a generator (Message IDs, tokens, RTO dither). rand_chacha's
//! generator, and the `chacha20` crate's, buffer four 64-byte blocks, so at a million hosts the
//! buffers alone take 256 MB, while a host draws a handful of words per exchange. No crate offers
//! the same stream with a smaller buffer, so this module writes the ChaCha block function (D. J.
//! Bernstein's original layout, as rand_chacha uses it: 64-bit block counter in words 12–13,
//! 64-bit stream in words 14–15; RFC 8439 §2.1–2.3 for the quarter round, with 8 rounds instead
//! of 20) and hands the words out exactly as rand_core's `BlockRng` does: `next_u64` is two
//! consecutive words, low first; `fill_bytes` takes whole words little-endian and drops what is
//! left of the last. The tests compare it with rand_chacha over long runs of mixed draws, so
//! every simulated result stays the same. The key is shared: every host of a replication draws
//! from the run's one key on a stream of its own ([`ChaCha8Small::on_stream`]), so the hosts
//! hold one copy of it between them.

use std::sync::Arc;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Words in a block.
const BLOCK: usize = 16;

/// "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// A ChaCha8 stream generator with a one-block buffer; see the module documentation.
#[derive(Debug, Clone)]
pub struct ChaCha8Small {
    key: Arc<[u32; 8]>,
    stream: u64,
    /// The counter of the next block to generate.
    counter: u64,
    buf: [u32; BLOCK],
    /// The next word of `buf` to hand out (`BLOCK`: none left).
    index: u8,
}

impl ChaCha8Small {
    /// The generator keyed with `seed` on `stream`, at the stream's start: the words of
    /// `ChaCha8Rng::from_seed(seed)` after `set_stream(stream)`.
    pub fn new(seed: [u8; 32], stream: u64) -> Self {
        let mut key = [0u32; 8];
        for (k, b) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        ChaCha8Small { key: Arc::new(key), stream, counter: 0, buf: [0; BLOCK], index: BLOCK as u8 }
    }

    /// A generator of the same key on `stream`, at its start, sharing the key.
    pub fn on_stream(&self, stream: u64) -> Self {
        ChaCha8Small { key: self.key.clone(), stream, counter: 0, buf: [0; BLOCK], index: BLOCK as u8 }
    }

    /// The same stream as `rng` from its start (its seed and stream; not its position).
    pub fn from_rng(rng: &ChaCha8Rng) -> Self {
        ChaCha8Small::new(rng.get_seed(), rng.get_stream())
    }

    /// Computes the next block into the buffer.
    fn refill(&mut self) {
        self.buf = block::<4>(&self.key, self.counter, self.stream);
        self.counter = self.counter.wrapping_add(1);
        self.index = 0;
    }
}

/// The ChaCha block of `key`, block `counter` and `stream` after `DOUBLE_ROUNDS` double rounds
/// (4 for ChaCha8, 10 for ChaCha20).
fn block<const DOUBLE_ROUNDS: usize>(key: &[u32; 8], counter: u64, stream: u64) -> [u32; BLOCK] {
    let (c, s, k) = (counter, stream, key);
    let input: [u32; BLOCK] = [
        SIGMA[0],
        SIGMA[1],
        SIGMA[2],
        SIGMA[3],
        k[0],
        k[1],
        k[2],
        k[3],
        k[4],
        k[5],
        k[6],
        k[7],
        c as u32,
        (c >> 32) as u32,
        s as u32,
        (s >> 32) as u32,
    ];
    let mut x = input;
    for _ in 0..DOUBLE_ROUNDS {
        // the columns, then the diagonals
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    for (a, b) in x.iter_mut().zip(input) {
        *a = a.wrapping_add(b);
    }
    x
}

/// The ChaCha quarter round on words `a`, `b`, `c`, `d` of `x`.
#[inline(always)]
fn quarter(x: &mut [u32; BLOCK], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

impl RngCore for ChaCha8Small {
    fn next_u32(&mut self) -> u32 {
        if self.index as usize >= BLOCK {
            self.refill();
        }
        let w = self.buf[self.index as usize];
        self.index += 1;
        w
    }

    fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32() as u64;
        let hi = self.next_u32() as u64;
        hi << 32 | lo
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(4) {
            let w = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

impl SeedableRng for ChaCha8Small {
    type Seed = [u8; 32];
    fn from_seed(seed: [u8; 32]) -> Self {
        ChaCha8Small::new(seed, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same draws from both generators, mixing words, pairs of words and byte fills of
    /// every length up to 70 (so draws straddle block and four-block boundaries at every
    /// offset), must give the same values.
    fn same_stream(seed: u64, stream: u64) {
        let mut reference = ChaCha8Rng::seed_from_u64(seed);
        reference.set_stream(stream);
        let mut small = ChaCha8Small::from_rng(&reference);
        for i in 0..3000usize {
            match i % 3 {
                0 => assert_eq!(small.next_u32(), reference.next_u32(), "draw {i}"),
                1 => assert_eq!(small.next_u64(), reference.next_u64(), "draw {i}"),
                _ => {
                    let n = i % 71;
                    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                    small.fill_bytes(&mut a);
                    reference.fill_bytes(&mut b);
                    assert_eq!(a, b, "draw {i}");
                }
            }
        }
    }

    #[test]
    fn it_gives_rand_chachas_stream_word_for_word() {
        for (seed, stream) in [(0, 0), (1, 7), (42, (3 << 32) | 0x1000_0005), (u64::MAX, u64::MAX)] {
            same_stream(seed, stream);
        }
    }

    #[test]
    fn the_block_function_gives_rfc_8439s_test_vector() {
        // RFC 8439 §2.3.2 (ChaCha20): key 00 01 .. 1f, block count 1, nonce 00 00 00 09 00 00 00
        // 4a 00 00 00 00. The original layout has the same words: counter word 12 = 1, word 13
        // = 0x09000000, words 14–15 = 0x4a000000, 0.
        let mut key = [0u32; 8];
        for (i, k) in key.iter_mut().enumerate() {
            let b = 4 * i as u32;
            *k = u32::from_le_bytes([b as u8, b as u8 + 1, b as u8 + 2, b as u8 + 3]);
        }
        let out = block::<10>(&key, 1 | 0x0900_0000 << 32, 0x4a00_0000);
        let expected = [
            0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3, 0x466482d2,
            0x09aa9f07, 0x05d7c214, 0xa2028bd9, 0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2,
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn a_generator_on_another_stream_shares_the_key_and_gives_that_streams_words() {
        let mut reference = ChaCha8Rng::seed_from_u64(9);
        let base = ChaCha8Small::from_rng(&reference);
        let mut other = base.on_stream(5);
        assert!(Arc::ptr_eq(&base.key, &other.key));
        reference.set_stream(5);
        for _ in 0..40 {
            assert_eq!(other.next_u32(), reference.next_u32());
        }
    }

    #[test]
    fn it_is_smaller_than_rand_chachas() {
        assert!(std::mem::size_of::<ChaCha8Small>() <= 96);
        assert!(std::mem::size_of::<ChaCha8Rng>() >= 300);
    }
}
