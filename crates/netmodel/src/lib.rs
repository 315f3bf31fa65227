//! Sans-IO network models for coapcc, below both of its drivers: the discrete-event simulator
//! (`netsim`) drives them in virtual time, the real-time relay (`coap-net`) on the wall clock.
//!
//! # Contract
//! No sockets, no clocks, no threads, no global RNG: time and seeded generators come in,
//! decisions come out. Nothing here prints.
//!
//! * [`medium`]: the [`Medium`] trait every network model implements (packets in; deliveries,
//!   drops and the model's own wake-ups out), host and packet identities.
//! * [`bottleneck`]: the wired reference bottleneck (two [`link::Link`]s with byte-counted
//!   tail-drop buffers, link errors from [`loss`], the router–server hop's FIFO jitter). It
//!   computes every path ahead and schedules no event of its own.
//! * [`mesh`]: the IEEE 802.15.4 / 6LoWPAN / RPL mesh of the low-power literature (Cooja's
//!   unit-disk medium, nullrdc or ContikiMAC, nullmac or Contiki's CSMA, a CPU per mote, min-hop
//!   routes, mobility, hosts behind the border router's serial line); it schedules its own
//!   events (frames, CPU jobs, MAC timers, moves).
//! * [`live`]: a model on the wall clock: [`live::Driven`] keeps its schedule and the bytes of
//!   the packets it carries, behind the object-safe [`live::Live`] the relay and the emulator
//!   drive.
//! * [`streams`]: the typed RNG streams of a replication, all in one place.
//! * [`chacha8`]: rand_chacha's ChaCha8 stream with a one-block buffer (what every host owns).
//! * [`workload`]: what clients do and when (continuous, random batches), as a [`Workload`].

pub mod bottleneck;
pub mod chacha8;
pub mod link;
pub mod live;
pub mod loss;
pub mod medium;
pub mod mesh;
pub mod streams;
pub mod workload;

pub use bottleneck::{Bottleneck, BottleneckReport, BottleneckSpec, HopSpec, LinkSpec};
pub use chacha8::ChaCha8Small;
pub use medium::{AirFrame, HostId, Medium, Packet, PacketId, Schedule};
pub use streams::{component_rng, SmallRngs, Stream};
pub use workload::{ClientSteps, ClientWorkload, Next, Periodic, RateSteps, Workload, WorkloadKind, WorkloadSpec};
