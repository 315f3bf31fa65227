//! `[stack]`: the motes' and the border router's network stack (MAC, RDC, 6LoWPAN, RPL, CPU).

use netmodel::mesh::CsmaBackoff;
use serde::{Deserialize, Serialize};

use super::keys::{Mac, Mote, RdcName, RouteTableFull};

/// The border router's own MAC settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct BrStack {
    /// Its MAC (else the motes').
    pub mac: Option<Mac>,
    /// Its packet buffers (else the motes').
    pub queuebuf_num: Option<u32>,
    /// Its radio duty cycling, `nullrdc` or `contikimac` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdc: Option<RdcName>,
    /// Under ContikiMAC, its radio kept on (the rpl-border-router's `NETSTACK_MAC.off(1)`):
    /// always listening, its unicasts still sent the ContikiMAC way.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_radio_on: bool,
    /// Its route table (else the motes'; RPL start-up only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_routes: Option<u32>,
    /// Its platform, `z1` or `sky` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mote: Option<Mote>,
}

/// The motes' network stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Stack {
    /// `nullmac` or `csma`.
    pub mac: Mac,
    /// `nullrdc` (radio always on) or `contikimac` (every mote, the border router too).
    pub rdc: RdcName,
    /// ContikiMAC: wake-ups per second (a power of two, 1–128; Contiki's default 8).
    #[serde(skip_serializing_if = "is_default_rate")]
    pub channel_check_rate: u32,
    /// ContikiMAC: learn the receivers' wake-up phases (WITH_PHASE_OPTIMIZATION).
    #[serde(skip_serializing_if = "is_true")]
    pub phase_optimization: bool,
    /// CSMA packet buffers (QUEUEBUF_CONF_NUM).
    pub queuebuf_num: u32,
    /// CSMA neighbour queues.
    pub csma_max_neighbor_queues: u32,
    /// CSMA transmissions per packet.
    pub csma_max_transmissions: u32,
    /// CSMA's retry and pacing rules: `timebase` (Contiki 3.0) or `binary_exponential`
    /// (Contiki's master from 2016 on, IEEE 802.15.4's; the NITK GST/GSRTC firmware's).
    #[serde(skip_serializing_if = "is_timebase")]
    pub csma_backoff: CsmaBackoff,
    /// The mesh prefix is Contiki's address context 0.
    pub context_matches_lln_prefix: bool,
    /// RPL's Hop-by-Hop option in every packet.
    pub rpl_hbh_option: bool,
    /// CPU: a received frame, µs.
    pub rx_process_us: u32,
    /// CPU: a packet before the MAC, µs.
    pub tx_prepare_us: u32,
    /// CPU: a server's CoAP processing, µs.
    pub app_us: u32,
    /// Frames the radio holds while the CPU is busy.
    pub rx_fifo_frames: u32,
    /// CPU: a client's CoAP processing of a request it originates, µs (0: none).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_app_us: u32,
    /// The firmware's console: one byte of blocking `printf` output, ns (0: output costs
    /// nothing). MSPSim's UART shifts a byte out in 8·UBR + 1 cycles: 69,125 ns on a Z1 or Sky at
    /// 8 MHz and 115,200 baud (real hardware, with start and stop bits: 86,806 ns).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub uart_byte_ns: u32,
    /// Bytes a client prints after it sends a request.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_log_request_bytes: u32,
    /// Bytes a client prints when a response arrives, before its next request.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_log_response_bytes: u32,
    /// Routes a mote's table holds (UIP_CONF_MAX_ROUTES; 0: unbounded). Only where RPL forms
    /// its DODAG (`topology.rpl_startup`): the converged tree is a table that holds them all.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub max_routes: u32,
    /// What a full route table does with a new route: `refuse` it (and the DAO goes no further:
    /// the GST firmware's Contiki) or `evict_lru` (Contiki 3.0).
    #[serde(skip_serializing_if = "is_refuse")]
    pub route_table_full: RouteTableFull,
    /// The motes' platform, whose CPU clock scales the CPU delays: `z1` (8 MHz, the clock the
    /// delays are given at) or `sky` (3.9 MHz).
    #[serde(skip_serializing_if = "is_z1")]
    pub mote: Mote,
    /// MSPSim's CC2420 as Cooja emulates it: a reception cut short by the mote's own
    /// transmission stays in the RX FIFO and the frames after it are lost until the FIFO
    /// overflows (`netmodel::mesh::MeshSpec::partial_frame_stall`); on for the presets of Cooja
    /// studies, off for hardware.
    pub partial_frame_stall: bool,
    /// MSPSim's CC2420 between frames: 12 symbols after the mote's own transmission and 8 after
    /// a frame it took before it searches for the next one, which it synchronises on only from
    /// its preamble's first byte (`netmodel::mesh::MeshSpec::rx_turnaround`). Unset: as
    /// `partial_frame_stall` (both are MSPSim's CC2420: on where a scenario emulates it, off for
    /// hardware and Cooja motes); unset is not written, so a scenario that does not state it keeps
    /// its serialised form, and with it the seed a plan derives for its cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_turnaround: Option<bool>,
    /// IPv6 neighbour discovery as Contiki's uIP runs it, with this many entries in every
    /// mote's neighbour table (NBR_TABLE_CONF_MAX_NEIGHBORS: 15 on the Z1); 0: not modelled
    /// (every neighbour resolved). Link-local stars only (`netmodel::mesh::nd`).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub neighbor_cache: u32,
    /// With `neighbor_cache`: every mote's reachable time, ms, where the firmware's draw is known
    /// (a Z1 build never seeds its generator, so it draws the same in every run); 0: each mote
    /// draws it as `uip_ds6_compute_reachable_time` does, 300–365.5 s.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub neighbor_reachable_ms: u32,
    /// The border router's overrides.
    pub br: BrStack,
}

impl Default for Stack {
    fn default() -> Self {
        Stack {
            mac: Mac::Nullmac,
            rdc: RdcName::Nullrdc,
            channel_check_rate: 8,
            phase_optimization: false,
            queuebuf_num: 8,
            csma_max_neighbor_queues: 2,
            csma_max_transmissions: 4,
            csma_backoff: CsmaBackoff::BinaryExponential,
            context_matches_lln_prefix: true,
            rpl_hbh_option: true,
            rx_process_us: 2000,
            tx_prepare_us: 1000,
            app_us: 1000,
            rx_fifo_frames: 1,
            client_app_us: 1000,
            uart_byte_ns: 69_125,
            client_log_request_bytes: 28,
            client_log_response_bytes: 39,
            max_routes: 20,
            route_table_full: RouteTableFull::Refuse,
            mote: Mote::Z1,
            partial_frame_stall: true,
            rx_turnaround: None,
            neighbor_cache: 0,
            neighbor_reachable_ms: 0,
            br: BrStack {
                mac: Some(Mac::Csma),
                queuebuf_num: Some(4),
                rdc: Some(RdcName::Contikimac),
                keep_radio_on: true,
                max_routes: Some(48),
                mote: None,
            },
        }
    }
}

fn is_refuse(s: &RouteTableFull) -> bool {
    *s == RouteTableFull::Refuse
}

fn is_z1(s: &Mote) -> bool {
    *s == Mote::Z1
}

fn is_default_rate(r: &u32) -> bool {
    *r == 8
}

fn is_timebase(s: &CsmaBackoff) -> bool {
    *s == CsmaBackoff::Timebase
}

fn is_true(b: &bool) -> bool {
    *b
}
