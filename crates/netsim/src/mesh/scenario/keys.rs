//! The mesh scenario's named values, typed: what a key may say is what its enum has, so a
//! scenario with any other value is refused where it is read, naming the key and the values
//! it takes. Each serialises as the text the scenario files write.

use serde::{Deserialize, Serialize};

/// `radio.medium`: Cooja's unit-disk graph medium (distance loss) or its multi-path ray tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Medium {
    /// UDGM.
    #[default]
    Udgm,
    /// MRM, on open ground.
    Mrm,
}

/// `stack.mac`, `stack.br.mac`: no MAC, or Contiki's CSMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mac {
    /// nullmac.
    #[default]
    Nullmac,
    /// CSMA.
    Csma,
}

/// `stack.rdc`, `stack.br.rdc`: the radio always on, or ContikiMAC's duty cycling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RdcName {
    /// nullrdc.
    #[default]
    Nullrdc,
    /// ContikiMAC.
    Contikimac,
}

/// `stack.route_table_full`: what a full route table does with a new route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteTableFull {
    /// Refuse it (the DAO goes no further: the GST firmware's Contiki).
    #[default]
    Refuse,
    /// Evict the least recently used route (Contiki 3.0).
    EvictLru,
}

/// `stack.mote`, `stack.br.mote`: the platform, whose CPU clock scales the CPU delays (Z1, Sky),
/// or Cooja's own mote on Cooja's own radio ([`netmodel::mesh::CoojaMoteSpec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mote {
    /// Zolertia Z1: 8 MHz as Contiki runs it (the clock the delays are given at).
    #[default]
    Z1,
    /// Tmote Sky: 3.9 MHz.
    Sky,
    /// Cooja's own mote (Contiki's `cooja` platform compiled for the host): no CPU time, Cooja's
    /// 1-ms ticks, its radio, nullrdc's software ACKs.
    Cooja,
}

impl Mote {
    /// The CPU clock as Contiki runs it, Hz.
    pub fn clock_hz(self) -> u32 {
        match self {
            Mote::Z1 | Mote::Cooja => netmodel::mesh::CPU_REFERENCE_HZ,
            Mote::Sky => netmodel::mesh::SKY_CPU_HZ,
        }
    }
}

/// `topology.routing`: RPL in storing mode over min-hop routes (the one the model has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// RPL storing mode, min-hop objective.
    #[default]
    RplStoringMinhop,
}

/// `workload.kind`: what the clients do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Each client sends every `interval_ms` (or at `offered_load_kbps`), one exchange at a time.
    #[default]
    PeriodicBlocking,
    /// Each client sends its next request as soon as the last one ends.
    Continuous,
    /// CLOUD's burst: groups of clients start together ([`super::BurstKeys`]).
    Burst,
    /// CLOUD's baseline: the clients one after the other ([`super::BaselineKeys`]).
    Baseline,
    /// RTTCOAP's collection: every mote sends to the collector ([`super::CollectKeys`]).
    Collect,
}

/// `endpoint.give_up`: when an exchange whose last retransmission went unanswered fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GiveUpAt {
    /// When the last retransmission is sent (Erbium's rule).
    #[default]
    AtLastSend,
    /// When the timer armed for the last retransmission expires (RFC 7252's reading).
    AfterLastTimer,
}

impl From<GiveUpAt> for coap_endpoint::GiveUp {
    fn from(g: GiveUpAt) -> Self {
        match g {
            GiveUpAt::AtLastSend => coap_endpoint::GiveUp::AtLastSend,
            GiveUpAt::AfterLastTimer => coap_endpoint::GiveUp::AfterLastTimer,
        }
    }
}
