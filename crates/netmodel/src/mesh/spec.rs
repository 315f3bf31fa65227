//! What a mesh is made of, as the scenario resolves it: the radio medium ([`RadioSpec`]), each
//! mote's CPU ([`CpuSpec`]), its MAC and RDC, and the whole mesh ([`MeshSpec`]), with Contiki's
//! clock and CSMA constants.

use serde::{Deserialize, Serialize};

use super::*;

/// Positions within this much of a range boundary count as inside (layouts drawn on an exact
/// 10 m lattice with R = 10 m behave as their authors meant).
pub const RANGE_EPSILON_M: f64 = 1e-6;
/// Contiki's clock ticks per second (CLOCK_SECOND).
pub const CLOCK_SECOND: u64 = 128;
/// One Contiki clock tick, ns.
pub const TICK_NS: u64 = 1_000_000_000 / CLOCK_SECOND;
/// The binary exponential CSMA's macMaxBE (CSMA_MAX_BE).
pub const CSMA_MAX_BE: u32 = 4;
/// Its macMaxCSMABackoffs (CSMA_MAX_BACKOFF): collisions beyond this count a transmission.
pub const CSMA_MAX_BACKOFF: u32 = 5;

/// The radio medium: Cooja's UDGM, or its MRM ([`mrm`]) where `mrm` is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadioSpec {
    /// R: frames are received up to this distance, m.
    pub tx_range_m: f64,
    /// I: frames interfere up to this distance, m (ignored below R).
    pub interference_range_m: f64,
    /// Share of frames that reach anybody (per-frame draw at the sender).
    pub success_ratio_tx: f64,
    /// Share of frames received at distance R (falls quadratically from 1 at distance 0).
    pub success_ratio_rx: f64,
    /// The channel is sensed busy while a sender within this distance is on the air, m.
    pub cca_range_m: f64,
    /// From the transmit strobe to the first preamble symbol, µs.
    pub tx_turnaround_us: u32,
    /// Cooja's MRM instead of UDGM: reception by SNR, the capture effect. The converged tree
    /// links motes within `tx_range_m`; the interference range and the success ratios are
    /// UDGM's and unused.
    pub mrm: Option<mrm::MrmSpec>,
}

impl RadioSpec {
    /// The carrier-sense range derived from Cooja's signal strengths (−10 − 85·d/R dBm within R)
    /// and Contiki's CCA threshold (−90 dBm): R·81/85. Cooja hands MSPSim's CC2420 the signal as
    /// a whole number of dBm, cut towards zero (`Msp802154Radio`: `radio.setRSSI((int) avg)`),
    /// and the channel is clear below the threshold: busy from −90.99… dBm up, i.e. closer than
    /// R·81/85 (9.53 m at R = 10 m).
    pub fn derived_cca_range(tx_range_m: f64) -> f64 {
        tx_range_m * 81.0 / 85.0
    }
}

/// The CPU clock at which [`CpuSpec`]'s times are given, Hz: a Zolertia Z1 as Contiki runs its
/// MSP430F2617 (`F_CPU` 8 MHz in `platform/z1/platform-conf.h`, the clock the Cooja dataset's
/// motes ran at).
pub const CPU_REFERENCE_HZ: u32 = 8_000_000;

/// A Tmote Sky's CPU clock as Contiki runs its MSP430F1611, Hz (`F_CPU` 3.9 MHz in
/// `platform/sky/platform-conf.h`).
pub const SKY_CPU_HZ: u32 = 3_900_000;

/// The CPU delays of every mote, at [`CPU_REFERENCE_HZ`]: a mote whose clock is slower takes
/// them longer in proportion ([`MeshSpec::cpu_clocks_hz`]): the same firmware runs the same
/// cycles, and the radio's SPI clock is derived from the CPU's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSpec {
    /// A received frame's processing (RX FIFO read, decompression, IPv6/RPL/UDP), µs.
    pub rx_process_us: u32,
    /// A packet's preparation before the MAC (compression, framing, TX FIFO load), µs.
    pub tx_prepare_us: u32,
    /// A server's CoAP processing of a request, µs.
    pub app_us: u32,
    /// Received frames the radio holds while the CPU is busy.
    pub rx_fifo_frames: u32,
    /// A client's CoAP processing of a request it originates (Erbium builds the message and its
    /// transaction), µs, on top of `tx_prepare_us` (0: none).
    pub client_app_us: u32,
    /// The firmware's console: one byte of `printf` output, ns. Contiki's Z1 and Sky builds
    /// write to the UART without interrupts, so a mote's CPU waits for every byte (0: output
    /// costs nothing).
    pub uart_byte_ns: u32,
    /// Bytes a client prints after it sends a request (Erbium's `Initial interval N (MID)`).
    pub client_log_request_bytes: u32,
    /// Bytes a client prints when a response arrives, before it can send again (`Received ACK
    /// (MID)`, `counter (0) rto N`).
    pub client_log_response_bytes: u32,
}

impl CpuSpec {
    /// The CPU delays without a client's CoAP processing and without console output.
    pub const fn new(rx_process_us: u32, tx_prepare_us: u32, app_us: u32, rx_fifo_frames: u32) -> Self {
        CpuSpec {
            rx_process_us,
            tx_prepare_us,
            app_us,
            rx_fifo_frames,
            client_app_us: 0,
            uart_byte_ns: 0,
            client_log_request_bytes: 0,
            client_log_response_bytes: 0,
        }
    }

    /// The CPU time of printing `bytes`, ns.
    pub(crate) fn print_ns(&self, bytes: u32) -> u64 {
        bytes as u64 * self.uart_byte_ns as u64
    }
}

/// A mote's MAC layer (the RDC is nullrdc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mac", rename_all = "snake_case")]
pub enum MacSpec {
    /// No queue, no retry: a busy channel drops the packet.
    Nullmac,
    /// Contiki's CSMA.
    Csma {
        /// Packet buffers shared by all neighbour queues (QUEUEBUF_CONF_NUM).
        queuebuf_num: u32,
        /// Neighbour queues that may exist at once (CSMA_MAX_NEIGHBOR_QUEUES).
        max_neighbor_queues: u32,
        /// Transmissions before a packet is dropped (SICSLOWPAN_MAX_MAC_TRANSMISSIONS).
        max_transmissions: u32,
        /// Its retry and pacing rules.
        #[serde(default, skip_serializing_if = "CsmaBackoff::is_timebase")]
        backoff: CsmaBackoff,
    },
}

/// The two CSMAs Contiki shipped (`core/net/mac/csma.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CsmaBackoff {
    /// Contiki 3.0: a COLLISION or NOACK retries after T + U{0 … 2^min(transmissions, 3)·T − 1}
    /// ticks; after a packet is freed the next one of its queue waits T (T: the RDC's channel
    /// check interval, 125 ms at 8 Hz).
    #[default]
    Timebase,
    /// Contiki's master from 2016 on (the NITK GST/GSRTC firmware's "Contiki 3.1"), IEEE
    /// 802.15.4's: with BE = min(collisions, 4), a send waits U{0 … (2^BE − 1)·T − 1} ticks
    /// (T: the RDC's channel check interval, or 1 tick without one); a COLLISION adds one to
    /// `collisions` (past 5 it starts over and counts a transmission); a NOACK counts a
    /// transmission and starts `collisions` over, so it retries at once; after a packet is
    /// freed the next one goes at once.
    BinaryExponential,
}

impl CsmaBackoff {
    pub(crate) fn is_timebase(&self) -> bool {
        *self == CsmaBackoff::Timebase
    }
}

/// A mote's radio duty cycling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rdc {
    /// nullrdc: the radio always on; its frames request no ACK.
    Nullrdc,
    /// ContikiMAC, duty cycled ([`contikimac`]).
    Contikimac,
    /// ContikiMAC with the radio kept on (Contiki's `NETSTACK_MAC.off(1)`, which the
    /// rpl-border-router calls once it is DODAG root): it listens all the time, and its
    /// unicasts still go ContikiMAC's way (ACK requested, the CCAs, copies until the ACK).
    ContikimacKeptOn,
}

/// Cooja's own mote: Contiki's `cooja` platform compiled for the host and run by Cooja through
/// JNI (a "Cooja mote", as Cooja's menu calls it), on Cooja's radio for it (`ContikiRadio`,
/// `platform/cooja/dev/cooja-radio.c`). Evidence: Contiki's `platform/cooja` (the NITK author's
/// Contiki 3.1 tree) and Cooja 3.x's `ContikiRadio.java`, and the frames of native runs of the
/// NITK author's code in Cooja (`validation/cooja`, runs `N-…`):
/// * the firmware takes no simulated time; the mote runs when an event is due, at Cooja's
///   1-ms ticks: a frame taken is ACKed 1 ms after it ended and forwarded (or answered, or a
///   client's next request sent) 3.096 ms after it ended (median over every hop of the runs;
///   the scenario's CPU keys are these, [`CoojaMoteSpec::RX_PROCESS_US`] and
///   [`CoojaMoteSpec::TX_PREPARE_US`]);
/// * the platform sets NULLRDC_CONF_802154_AUTOACK and NULLRDC_CONF_SEND_802154_ACK: every
///   unicast asks for an ACK, nullrdc sends it in software, and the sender waits the whole
///   ACK_WAIT_TIME (RTIMER_SECOND/500) before it looks: an ACK received is MAC_TX_OK, none
///   MAC_TX_NOACK (which CSMA retries and nullmac ignores);
/// * nullrdc reports a COLLISION when the radio is receiving, or holds a frame not yet read
///   before a unicast; `cooja-radio.c` sends on CCA (COOJA_TRANSMIT_ON_CCA), busy when the
///   signal is above −95 dBm: within R on UDGM (−10 − 85·d/R dBm);
/// * `ContikiRadio` puts a frame on the air for 8·size/250 kbit/s, its size without the 2-byte
///   FCS and with no PHY header: 32 µs per byte of the MPDU less 2 ([`CoojaMoteSpec::airtime_ns`]);
///   no turnaround (RADIO_DELAY_BEFORE_TX 0);
/// * CLOCK_SECOND is 1000: CSMA's backoff period over nullrdc (one tick) is 1 ms;
/// * nullmac's send blocks through the ACK wait, and Erbium takes a transmission's time and arms
///   its timer when the send returns (`coap_send_transaction`): 2.096 ms after the frame when
///   the ACK came, 2.000 ms when none did (12,695 and 875 client frames of
///   `N-eifel-grid3x3-tx1.0-rx0.95-s1`), at once when nothing went on the air; CSMA's once the
///   packet is queued. The mesh tells the driver ([`crate::Schedule::send_returned`]);
/// * a CSMA mote's next frame (a retry, or the next packet queued) goes on the air 2 ms after its
///   unicast's ACK wait ended, 2.096 ms after it when the ACK came (its 96 µs on the air): 4.000
///   and 4.096 ms after the frame's end. Measured on the border router of the half-dumbbell runs
///   (`N-default-halfdumbbell-…`, RX 1.0 and 0.95): of its unicasts that followed another within
///   5.5 ms, 840 followed an unacknowledged one 4.000 ms after its end (and 39 4.096 ms), 737 an
///   acknowledged one 4.096 ms after (and 3 at 4.3–4.6 ms), one 3.1 ms after; none sooner. On
///   the 3×3 grid (`N-default-grid3x3-tx1.0-rx1.0-s1`, `N-eifel-grid3x3-tx1.0-rx0.95-…`): 1,713
///   of 2,554 within 4.0–4.1 ms of an unacknowledged frame, 28 at 3.0–3.9 ms, none sooner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoojaMoteSpec {
    /// A unicast frame taken is ACKed this long after it ended, ns.
    pub ack_delay_ns: u64,
    /// A unicast's sender waits this long after its frame before it looks for the ACK, ns.
    pub ack_wait_ns: u64,
    /// The clock tick (1/CLOCK_SECOND), ns.
    pub tick_ns: u64,
    /// A CSMA mote's next frame goes on the air this long after a unicast's ACK wait ended
    /// (and the ACK's airtime later when one came), ns.
    pub csma_next_ns: u64,
}

impl CoojaMoteSpec {
    /// As measured and as the platform's sources say (see the type's doc).
    pub const MEASURED: CoojaMoteSpec =
        CoojaMoteSpec { ack_delay_ns: 1_000_000, ack_wait_ns: 2_000_000, tick_ns: 1_000_000, csma_next_ns: 2_000_000 };
    /// From a frame's end to the ACK (the mote's next tick): the CPU's share before the stack
    /// takes the packet, µs.
    pub const RX_PROCESS_US: u32 = 1000;
    /// The rest of the 3.096 ms from a frame's end to the next frame's start, µs.
    pub const TX_PREPARE_US: u32 = 2096;
    /// A frame of `mpdu` bytes on the air, ns.
    pub fn airtime_ns(mpdu: u32) -> u64 {
        mpdu.saturating_sub(2) as u64 * frame::BYTE_NS
    }
}

/// Everything the mesh model needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSpec {
    /// The motes, in id order.
    pub nodes: Vec<NodeSpec>,
    /// Each mote's MAC, indexed like `nodes`.
    pub macs: Vec<MacSpec>,
    /// The medium.
    pub radio: RadioSpec,
    /// CPU delays.
    pub cpu: CpuSpec,
    /// 6LoWPAN compression.
    pub compression: Compression,
    /// Moving motes (None: every mote stays where `nodes` puts it).
    pub mobility: Option<MobilitySpec>,
    /// Hosts outside the mesh, behind the border router (None: the motes are all there is).
    pub cloud: Option<CloudSpec>,
    /// ContikiMAC's parameters, for the motes `rdcs` gives ContikiMAC.
    pub contikimac: ContikimacSpec,
    /// Each mote's radio duty cycling, indexed like `nodes` (a mote it does not list: nullrdc).
    pub rdcs: Vec<Rdc>,
    /// Preferred parents pinned among RPL's candidates, (node, parent) as indices ([`routing`]).
    pub pinned_parents: Vec<(usize, usize)>,
    /// When each mote boots, ns, where the run gives it (None, or an empty list: drawn in
    /// [`nd::NdSpec::boot_spread_ns`]); used where the model boots motes (`nd`).
    pub boots_ns: Vec<Option<u64>>,
    /// When each mote not yet in the DODAG sends its first DIS, ns, where the run gives it (None,
    /// or an empty list: drawn as `rpl_reset_periodic_timer` draws it); RPL start-up only. A Z1
    /// seeds Contiki's generator with its id, so Cooja's motes solicit at the same instants in
    /// every seed (`validation/cooja/traces/grid6x6-noprefix.first-dis.csv`).
    pub dis_first_ns: Vec<Option<u64>>,
    /// RPL's control traffic on the air over the converged routes ([`rpl`]; None: silent routes).
    pub rpl: Option<RplSpec>,
    /// Every mote moved from `nodes`' position by a uniform draw in ±`jitter_m` per axis, per
    /// replication ([`Stream::Layout`]; 0: none).
    pub jitter_m: f64,
    /// Each mote's CPU clock, Hz, indexed like `nodes` (empty: every mote at
    /// [`CPU_REFERENCE_HZ`]); it scales the [`CpuSpec`] delays, not the console's bytes.
    pub cpu_clocks_hz: Vec<u32>,
    /// Every mote a Cooja mote on Cooja's own radio (None: Z1 or Sky motes on MSPSim's CC2420).
    pub cooja_mote: Option<CoojaMoteSpec>,
    /// MSPSim's CC2420 (contiki-os/mspsim 47ae45c, `CC2420.java`), as Cooja emulates Z1 and Sky
    /// motes: a reception cut short by the mote's own transmission leaves its bytes in the
    /// 128-byte RX FIFO, and since MSPSim raises FIFOP for a completed frame only when the FIFO
    /// held nothing before it (`rxFIFO.length() <= rxlen + 1`), Contiki's driver, which reads on
    /// FIFOP, hears of no later frame: the frames the radio takes pile up behind the partial one,
    /// lost, until one overflows the FIFO, which the driver flushes (FIFOP high with FIFO low).
    /// Frames for other motes are rejected by address and leave nothing. (A CC2420 on a board
    /// raises FIFOP by its threshold whatever the FIFO held: our reading is that the driver then
    /// reads the partial frame, finds its length or CRC wrong and goes on; nothing stalls.)
    pub partial_frame_stall: bool,
    /// MSPSim's CC2420 (`CC2420.java`, as for `partial_frame_stall`) between frames: after its
    /// own transmission (a frame or an ACK) the radio calibrates for 12 symbols (RX_CALIBRATE),
    /// after a frame it synchronised on it waits 8 (RX_WAIT), and only then searches for the next
    /// SFD, which it takes only after four zero bytes of preamble (`receivedByte`): a frame whose
    /// first symbol reaches it earlier is never synchronised on, and the radio, busy with it as
    /// Cooja's medium sees it (a destination that is receiving), takes nothing until it ends.
    /// Measured in Cooja (runs F of `validation/cooja`, `docs/mesh.md`): the border router's
    /// second ContikiMAC copy, 0.5 ms after a client's ACK it missed, never reaches that client.
    pub rx_turnaround: bool,
    /// IPv6 neighbour discovery as Contiki's uIP runs it, on a link-local star (`nd`;
    /// None: every neighbour resolved, no ND traffic).
    pub nd: Option<super::NdSpec>,
}

/// The RX FIFO of the CC2420, bytes.
pub const RX_FIFO_BYTES: u32 = 128;

/// MSPSim's CC2420 after a transmission: RX_CALIBRATE, 12 symbols, ns
/// ([`MeshSpec::rx_turnaround`]).
pub const RX_CALIBRATE_NS: u64 = 12 * frame::SYMBOL_NS;

/// MSPSim's CC2420 after a frame it synchronised on: RX_WAIT, 8 symbols, ns.
pub const RX_WAIT_NS: u64 = 8 * frame::SYMBOL_NS;

/// Hosts on the Internet side of the border router (CLOUD): hosts `n ..= n + hosts − 1` after the
/// `n` motes. Their packets cross a constant Internet delay and the border router host's serial
/// SLIP line to the border router mote (and back): FIFO each way, the host side's queue unbounded;
/// the line carries the uncompressed IPv6/UDP packet (48 header bytes + CoAP) framed by SLIP, no
/// byte escaped (**choice**: the model carries sizes, not bytes; an END or ESC byte in a real
/// packet costs one byte more).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CloudSpec {
    /// How many.
    pub hosts: u32,
    /// One-way Internet delay, ns.
    pub internet_delay_ns: u64,
    /// The serial line's rate, baud (10 bits per byte).
    pub slip_baud: u32,
}

impl MeshSpec {
    /// A frame of `mpdu` bytes on the air, ns.
    pub fn airtime_ns(&self, mpdu: u32) -> u64 {
        match self.cooja_mote {
            Some(_) => CoojaMoteSpec::airtime_ns(mpdu),
            None => frame::airtime_ns(mpdu),
        }
    }

    /// Mote `i`'s radio duty cycling.
    pub fn rdc(&self, i: usize) -> Rdc {
        self.rdcs.get(i).copied().unwrap_or(Rdc::Nullrdc)
    }

    /// The border router (the RPL root); without one, the server of a link-local star (routes
    /// are then its one-hop links).
    pub fn root(&self) -> usize {
        let role = |r: Role| self.nodes.iter().position(|x| x.role == r);
        role(Role::BorderRouter).or_else(|| role(Role::Server)).unwrap_or(0)
    }

    /// Whether the motes talk over link-local addresses, one hop, without a border router.
    pub fn link_local(&self) -> bool {
        !self.nodes.iter().any(|x| x.role == Role::BorderRouter)
    }

    /// The motes' starting positions.
    pub fn positions(&self) -> Vec<Point> {
        self.nodes.iter().map(|n| (n.x, n.y)).collect()
    }

    /// The converged routes: the min-hop tree over the links (d ≤ R) rooted at the border
    /// router, the motes at their starting positions.
    pub fn routes(&self) -> Routes {
        self.routes_at(&self.positions())
    }

    /// The converged routes with the motes at `pos`.
    pub fn routes_at(&self, pos: &[Point]) -> Routes {
        self.routes_by(&distances(pos))
    }

    /// The converged routes over the distance matrix `d` ([`distances`]).
    pub(crate) fn routes_by(&self, d: &[f64]) -> Routes {
        let n = self.nodes.len();
        let reach = self.radio.tx_range_m + RANGE_EPSILON_M;
        let dist = |a: usize, b: usize| d[a * n + b];
        let root = self.root();
        Routes::min_hop_pinned(n, root, |a, b| a != b && dist(a, b) <= reach, dist, &self.pinned_parents)
    }
}

/// Every pair's distance, row-major (`d[a·n + b]`).
pub fn distances(pos: &[Point]) -> Vec<f64> {
    let n = pos.len();
    let mut d = vec![0.0; n * n];
    for a in 0..n {
        for b in a + 1..n {
            let v = (pos[a].0 - pos[b].0).hypot(pos[a].1 - pos[b].1);
            d[a * n + b] = v;
            d[b * n + a] = v;
        }
    }
    d
}
