//! The random streams of a replication, all in one place.
//!
//! Every random draw of a run comes from ChaCha8 seeded with the master seed, on a stream of its
//! own: `replication << 32 | component`. A component number names who draws ([`Stream`]), so
//! adding a component never shifts another's draws, and results do not depend on the order in
//! which threads or hosts run.
//!
//! Component numbers (32 bits): hosts `0..2^28` are their own index; per-host kinds put a kind
//! in the top nibble (`1`: the host's workload, `2`: its MAC, `3`: its radio's transmissions,
//! `4`: its mobility, `5`: its radio duty-cycle phase, `6`: its background traffic, `7`: its RPL timers, `8`: its neighbour discovery); `0xFFFF_00xx` are the singletons of the wired
//! bottleneck (their values predate this module and are kept so that recorded results stay
//! the same; `0xFFFF_0006` was a workload stream shared by all clients, replaced by
//! [`Stream::Workload`] and not to be reused).

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Who draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stream {
    /// Host `i`'s stack: Message IDs, tokens, RTO dither (`i < 2^28`).
    Host(u32),
    /// Host `i`'s workload: its start offset and batch sizes.
    Workload(u32),
    /// Node `i`'s link layer (MAC backoffs) in models that have one;
    /// the wired bottleneck has none.
    Mac(u32),
    /// Node `i`'s radio as a sender: the mesh's per-frame transmission-success draws.
    Radio(u32),
    /// Node `i`'s movements (the mesh's mobility models).
    Mobility(u32),
    /// Node `i`'s ContikiMAC wake-up phase.
    Phase(u32),
    /// Host `i`'s background traffic (its phase).
    Background(u32),
    /// Node `i`'s RPL timers (trickle, DAO delays, probing): Contiki's `random_rand()`.
    Rpl(u32),
    /// Node `i`'s neighbour discovery (its reachable time): Contiki's `random_rand()`.
    Nd(u32),
    /// The mesh's pursue target.
    PursueTarget,
    /// The mesh's layout jitter (every mote's displacement, in id order).
    Layout,
    /// Which clients of a CLOUD burst run are the continuous group.
    BurstGroups,
    /// The wired bottleneck's server.
    Server,
    /// The bottleneck's uplink errors.
    UplinkLoss,
    /// The bottleneck's downlink errors.
    DownlinkLoss,
    /// Router → server jitter.
    UpHop,
    /// Server → router jitter.
    DownHop,
}

impl Stream {
    /// The component number.
    pub fn component(self) -> u32 {
        match self {
            Stream::Host(i) => i & 0x0FFF_FFFF,
            Stream::Workload(i) => 0x1000_0000 | (i & 0x0FFF_FFFF),
            Stream::Mac(i) => 0x2000_0000 | (i & 0x0FFF_FFFF),
            Stream::Radio(i) => 0x3000_0000 | (i & 0x0FFF_FFFF),
            Stream::Mobility(i) => 0x4000_0000 | (i & 0x0FFF_FFFF),
            Stream::Phase(i) => 0x5000_0000 | (i & 0x0FFF_FFFF),
            Stream::Background(i) => 0x6000_0000 | (i & 0x0FFF_FFFF),
            Stream::Rpl(i) => 0x7000_0000 | (i & 0x0FFF_FFFF),
            Stream::Nd(i) => 0x8000_0000 | (i & 0x0FFF_FFFF),
            Stream::Server => 0xFFFF_0001,
            Stream::UplinkLoss => 0xFFFF_0002,
            Stream::DownlinkLoss => 0xFFFF_0003,
            Stream::UpHop => 0xFFFF_0004,
            Stream::DownHop => 0xFFFF_0005,
            Stream::PursueTarget => 0xFFFF_0007,
            Stream::BurstGroups => 0xFFFF_0008,
            Stream::Layout => 0xFFFF_0009,
        }
    }

    /// The generator of this component in replication `rep` of a run seeded with `seed`.
    pub fn rng(self, seed: u64, rep: u32) -> ChaCha8Rng {
        component_rng(seed, rep, self.component())
    }

    /// The same stream as [`Stream::rng`] in a generator a third of the size (for what every
    /// host owns: see [`crate::chacha8`]). Many of them: [`SmallRngs`].
    pub fn small_rng(self, seed: u64, rep: u32) -> crate::ChaCha8Small {
        SmallRngs::new(seed, rep).get(self)
    }
}

/// The small generators of replication `rep` of a run seeded with `seed` ([`Stream::small_rng`]'s
/// streams), sharing one key: what a simulation's hosts draw from.
#[derive(Debug)]
pub struct SmallRngs {
    base: crate::ChaCha8Small,
    rep: u32,
}

impl SmallRngs {
    /// The generators of replication `rep` of a run seeded with `seed`.
    pub fn new(seed: u64, rep: u32) -> Self {
        SmallRngs { base: crate::ChaCha8Small::from_rng(&ChaCha8Rng::seed_from_u64(seed)), rep }
    }

    /// The generator of `stream`, at its start.
    pub fn get(&self, stream: Stream) -> crate::ChaCha8Small {
        self.base.on_stream(stream_id(self.rep, stream.component()))
    }
}

/// The ChaCha stream of `component` in replication `rep`.
fn stream_id(rep: u32, component: u32) -> u64 {
    ((rep as u64) << 32) | component as u64
}

/// ChaCha8 seeded with `seed`, on stream `rep << 32 | component`.
pub fn component_rng(seed: u64, rep: u32, component: u32) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id(rep, component));
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::RngCore;

    #[test]
    fn components_are_distinct_and_streams_independent() {
        let all = [
            Stream::Host(0),
            Stream::Host(999_999),
            Stream::Workload(0),
            Stream::Workload(999_999),
            Stream::Mac(0),
            Stream::Mac(999_999),
            Stream::Radio(0),
            Stream::Radio(999_999),
            Stream::Mobility(0),
            Stream::Mobility(999_999),
            Stream::Phase(0),
            Stream::Background(0),
            Stream::Rpl(0),
            Stream::Rpl(999_999),
            Stream::PursueTarget,
            Stream::BurstGroups,
            Stream::Server,
            Stream::UplinkLoss,
            Stream::DownlinkLoss,
            Stream::UpHop,
            Stream::DownHop,
        ];
        let mut c: Vec<u32> = all.iter().map(|s| s.component()).collect();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), all.len());
        assert_ne!(Stream::Host(1).rng(7, 0).next_u64(), Stream::Host(1).rng(7, 1).next_u64());
        assert_ne!(Stream::Host(1).rng(7, 0).next_u64(), Stream::Workload(1).rng(7, 0).next_u64());
        assert_eq!(Stream::Server.rng(7, 3).next_u64(), Stream::Server.rng(7, 3).next_u64());
    }
}
