//! A pcap capture of a run, for Wireshark, tshark or any pcap reader, at simulated time (the run
//! starts at the epoch):
//!
//! * **the wired bottleneck**: every datagram a host hands to the network, as it is sent (those
//!   the network then loses included), with its real CoAP bytes in IPv4 and UDP headers (link
//!   type raw IP, 101), or CoAP over TCP's segments;
//! * **the mesh**: every IEEE 802.15.4 frame a mote puts on the air, as a sniffer beside every
//!   mote would hear it (link type 802.15.4 with FCS, 195): 6LoWPAN-compressed CoAP over UDP hop
//!   by hop, link-layer retransmissions, ACKs, RPL and neighbour discovery (`capture/lowpan.rs`). A cloud
//!   host's datagrams appear on the radio hops they take; the serial line and the wired side of
//!   the border router are not captured.
//!
//! As smoltcp wraps any device in a pcap writer, [`Tapped`] wraps any stack whose packets carry
//! their bytes ([`Captured`]) and writes what it sends, and what the medium puts on the air,
//! through [`Capture`]; the stack, the medium and the results are those of the run without it
//! (the capture only reads).
//!
//! Addresses: on the bottleneck client c at 10.0.0.0 + c + 1 (10.0.0.1, …), the server at
//! 10.255.255.254; on the mesh mote n (host n − 1) at fd00::n (fe80::n in a link-local mesh),
//! a cloud host k (after the motes) at 2001:db8::k + 1. Servers listen on 5683 (CoAP's port,
//! which Wireshark dissects, over UDP and over TCP); over UDP every other host sends from
//! 49152 + its host index mod 16384, over TCP a client's connection k from 49152 + k mod 16384.
//! A TCP segment's header is the model's: its flags, sequence and acknowledgement numbers (the
//! initial sequence numbers 0), SACK blocks, and in a SYN the options Linux writes without
//! timestamps (MSS, NOP, NOP, SACK-permitted, NOP, window scale 0), so that every packet is as
//! long as the model put it on the link; the window field is 65,535 (the model has no receive
//! window).
//!
//! The format is written by `pcap-file` and the IP headers, checksums included, by `etherparse`.

mod lowpan;

use std::io::Write;
use std::time::Duration;

use coap_cc::Instant;
use etherparse::PacketBuilder;
use netmodel::mesh::frame::Compression;
use netmodel::{AirFrame, HostId, Next, Packet, PacketId};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::engine::{Context, Records, Stack};
use crate::tcp::{Segment, ACK, FIN, RST, SYN};

/// CoAP's port (RFC 7252 §6.1 over UDP, RFC 8323 §8.1 over TCP), where servers listen.
pub const COAP_PORT: u16 = 5683;

/// Where each host is on the captured network.
#[derive(Debug, Clone)]
pub enum Addressing {
    /// The wired bottleneck: IPv4, the server at `server`.
    Bottleneck {
        /// The server's host.
        server: HostId,
        /// CoAP over TCP: its SYNs' options.
        tcp: Option<SynOptions>,
    },
    /// The mesh: IPv6 over 802.15.4, hosts below `motes` are motes; `servers` listen on
    /// [`COAP_PORT`].
    Mesh {
        /// Motes (hosts 0 … motes − 1); later hosts are cloud hosts.
        motes: u32,
        /// The hosts that serve.
        servers: Vec<HostId>,
        /// How each hop compresses a datagram.
        compression: Compression,
        /// The DODAG's root (its address is a DIO's DODAGID).
        root: u16,
        /// The most packets a mote's MAC queue holds (a copy of any of them may go on the air
        /// after the driver took the packet back).
        queued: u32,
    },
}

/// What a SYN carries besides its header, as the TCP model counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynOptions {
    /// The MSS it announces.
    pub mss: u16,
    /// SACK-permitted (with SACK on).
    pub sack: bool,
    /// Bytes of MSS and window scale (`syn_options`: 8 as Linux writes them).
    pub bytes: u32,
}

impl SynOptions {
    /// The options' bytes: MSS, (NOP, NOP, SACK-permitted,) NOP, window scale 0, as Linux
    /// orders them without timestamps; other `bytes` than 8 as that many NOPs (rounded up to a
    /// whole word).
    fn write(&self, out: &mut Vec<u8>) {
        let [hi, lo] = self.mss.to_be_bytes();
        if self.bytes == 8 {
            out.extend_from_slice(&[2, 4, hi, lo]);
        } else {
            out.resize(out.len() + self.bytes.next_multiple_of(4) as usize, 1);
        }
        if self.sack {
            out.extend_from_slice(&[1, 1, 4, 2]);
        }
        if self.bytes == 8 {
            out.extend_from_slice(&[1, 3, 3, 0]);
        }
    }
}

impl Addressing {
    /// What a capture of this network holds, for messages.
    pub fn records(&self) -> &'static str {
        match self {
            Addressing::Bottleneck { .. } => "packets sent",
            Addressing::Mesh { .. } => "802.15.4 frames on the air",
        }
    }

    fn is_server(&self, h: HostId) -> bool {
        match self {
            Addressing::Bottleneck { server, .. } => h == *server,
            Addressing::Mesh { servers, .. } => servers.contains(&h),
        }
    }

    /// The UDP port of `h`.
    pub fn port(&self, h: HostId) -> u16 {
        if self.is_server(h) {
            COAP_PORT
        } else {
            49152 + (h.0 % 16384) as u16
        }
    }

    /// The IPv4 address of a bottleneck host.
    pub fn ipv4(h: HostId, server: HostId) -> [u8; 4] {
        if h == server {
            [10, 255, 255, 254]
        } else {
            (0x0A00_0000u32 + h.0 + 1).to_be_bytes()
        }
    }

    /// The IPv6 address of a mesh host.
    pub fn ipv6(h: HostId, motes: u32) -> [u8; 16] {
        let (prefix, iid): ([u8; 4], u32) =
            if h.0 < motes { ([0xfd, 0, 0, 0], h.0 + 1) } else { ([0x20, 0x01, 0x0d, 0xb8], h.0 - motes + 1) };
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&prefix);
        a[12..].copy_from_slice(&iid.to_be_bytes());
        a
    }
}

/// A pcap file being written.
pub struct Capture {
    out: PcapWriter<Box<dyn Write + Send>>,
    addressing: Addressing,
    /// The mesh's frame writer.
    lowpan: Option<lowpan::Lowpan>,
    frame: Vec<u8>,
    written: u64,
    /// The first write that failed: the capture stops there and [`Capture::finish`] says why.
    failed: Option<String>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture").field("addressing", &self.addressing).field("written", &self.written).finish()
    }
}

impl Capture {
    /// Writes the pcap header to `out` (buffer it: every datagram is a write).
    pub fn new(out: Box<dyn Write + Send>, addressing: Addressing) -> Result<Self, String> {
        let lowpan = match &addressing {
            Addressing::Mesh { motes, compression, root, queued, .. } => {
                Some(lowpan::Lowpan::new(*motes, *compression, *root, *queued))
            }
            Addressing::Bottleneck { .. } => None,
        };
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 65_535,
            datalink: if lowpan.is_some() { DataLink::IEEE802_15_4 } else { DataLink::RAW },
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let out = PcapWriter::with_header(out, header).map_err(|e| e.to_string())?;
        Ok(Capture { out, addressing, lowpan, frame: Vec::with_capacity(1500), written: 0, failed: None })
    }

    /// `from` sent `coap` (a UDP payload) to `to` at `now`: written on the bottleneck (the
    /// mesh writes the frames that carry it, [`Capture::air`]).
    pub fn udp(&mut self, now: Instant, from: HostId, to: HostId, coap: &[u8]) {
        let Addressing::Bottleneck { server, .. } = self.addressing else { return };
        if self.failed.is_some() {
            return;
        }
        let a = &self.addressing;
        self.frame.clear();
        let built = PacketBuilder::ipv4(Addressing::ipv4(from, server), Addressing::ipv4(to, server), 64)
            .udp(a.port(from), a.port(to))
            .write(&mut self.frame, coap)
            .map_err(|e| e.to_string());
        self.record(now, built);
    }

    /// A frame on the mesh's air, `coap` the message of the datagram it carries.
    pub fn air(&mut self, frame: &AirFrame, coap: Option<&[u8]>) {
        let Some(lowpan) = &mut self.lowpan else { return };
        if self.failed.is_some() {
            return;
        }
        let at = frame.at.as_nanos();
        let built = if !lowpan.write(&self.addressing, frame, coap, &mut self.frame) {
            Err(format!("a frame at {at} ns carries a datagram the capture no longer has"))
        } else if self.frame.len() != frame.mpdu as usize {
            // the bytes and the model's sizes follow the same rules (netmodel's frame.rs)
            Err(format!("a frame at {at} ns is {} bytes where the model sent {}", self.frame.len(), frame.mpdu))
        } else {
            Ok(())
        };
        self.record(frame.at, built);
    }

    /// `from` sent `seg` of its connection `conn` (numbered by the client that opened it) to
    /// `to` at `now`: CoAP over TCP on the bottleneck.
    pub fn tcp(&mut self, now: Instant, from: HostId, to: HostId, conn: u32, seg: &Segment) {
        if self.failed.is_some() {
            return;
        }
        let Addressing::Bottleneck { server, tcp: Some(syn) } = self.addressing else {
            self.failed = Some("a TCP segment in a capture of no TCP run".into());
            return;
        };
        let port = |h: HostId| if h == server { COAP_PORT } else { 49152 + (conn % 16384) as u16 };
        let mut options = Vec::new();
        if seg.flags & SYN != 0 {
            syn.write(&mut options);
        }
        let blocks = seg.sack.as_slice();
        if !blocks.is_empty() {
            options.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
            for &(a, b) in blocks {
                options.extend_from_slice(&(a as u32).to_be_bytes());
                options.extend_from_slice(&(b as u32).to_be_bytes());
            }
        }
        let mut b = PacketBuilder::ipv4(Addressing::ipv4(from, server), Addressing::ipv4(to, server), 64).tcp(
            port(from),
            port(to),
            seg.seq as u32,
            u16::MAX,
        );
        if seg.flags & SYN != 0 {
            b = b.syn();
        }
        if seg.flags & FIN != 0 {
            b = b.fin();
        }
        if seg.flags & RST != 0 {
            b = b.rst();
        }
        if seg.flags & ACK != 0 {
            b = b.ack(seg.ack as u32);
        }
        if !seg.payload.is_empty() {
            b = b.psh();
        }
        self.frame.clear();
        let built = match b.options_raw(&options) {
            Ok(b) => b.write(&mut self.frame, &seg.payload).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        self.record(now, built);
    }

    /// Writes the packet in `frame` (if it was built) at `now`.
    fn record(&mut self, now: Instant, built: Result<(), String>) {
        let written = built.and_then(|()| {
            let at = Duration::from_nanos(now.as_nanos());
            let packet = PcapPacket::new(at, self.frame.len() as u32, &self.frame);
            self.out.write_packet(&packet).map(drop).map_err(|e| e.to_string())
        });
        match written {
            Ok(()) => self.written += 1,
            Err(e) => self.failed = Some(e),
        }
    }

    /// Flushes the file: the packets (or frames) written, or why the capture failed.
    pub fn finish(self) -> Result<u64, String> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut out = self.out.into_writer();
        out.flush().map_err(|e| e.to_string())?;
        Ok(self.written)
    }
}

/// A packet's payload that a capture can write: its bytes and what they travel in.
pub trait Captured {
    /// Writes this payload, sent by `from` to `to` at `now`, to `capture`.
    fn capture(&self, capture: &mut Capture, now: Instant, from: HostId, to: HostId);
    /// A datagram's bytes, for the frames that carry it (none: no frame writer knows it).
    fn datagram(&self) -> Option<&[u8]> {
        None
    }
}

/// A UDP datagram's CoAP bytes.
impl Captured for Vec<u8> {
    fn capture(&self, capture: &mut Capture, now: Instant, from: HostId, to: HostId) {
        capture.udp(now, from, to, self);
    }
    fn datagram(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// A stack whose sends are captured.
#[derive(Debug)]
pub struct Tapped<'c, S> {
    inner: S,
    capture: &'c mut Capture,
}

impl<'c, S> Tapped<'c, S> {
    /// `inner`, its sends written to `capture`.
    pub fn new(inner: S, capture: &'c mut Capture) -> Self {
        Tapped { inner, capture }
    }
}

/// The engine's context as the wrapped stack sees it: every send also goes to the capture.
struct TapCtx<'a, C> {
    ctx: &'a mut C,
    capture: &'a mut Capture,
}

impl<P: Captured, C: Context<P>> Context<P> for TapCtx<'_, C> {
    fn now(&self) -> Instant {
        self.ctx.now()
    }
    fn stopping(&self) -> bool {
        self.ctx.stopping()
    }
    fn send(&mut self, from: HostId, to: HostId, size: u32, fill: impl FnOnce(&mut P)) -> PacketId {
        let now = self.ctx.now();
        let capture = &mut *self.capture;
        self.ctx.send(from, to, size, |p| {
            fill(p);
            p.capture(capture, now, from, to);
        })
    }
    fn timer(&mut self, host: HostId, slot: u32, gen: u32, at: Instant) {
        self.ctx.timer(host, slot, gen, at)
    }
    fn start(&mut self, host: HostId) -> Next {
        self.ctx.start(host)
    }
    fn parallel(&self, host: HostId) -> u32 {
        self.ctx.parallel(host)
    }
    fn next_arrival(&mut self, host: HostId) -> Option<Instant> {
        self.ctx.next_arrival(host)
    }
    fn ended(&mut self, host: HostId) -> Next {
        self.ctx.ended(host)
    }
}

impl<S: Stack> Stack for Tapped<'_, S>
where
    S::Payload: Captured,
{
    type Payload = S::Payload;

    fn start<C: Context<S::Payload>>(&mut self, ctx: &mut C, host: HostId) {
        self.inner.start(&mut TapCtx { ctx, capture: self.capture }, host)
    }
    fn receive<C: Context<S::Payload>>(&mut self, ctx: &mut C, packet: &Packet, payload: &S::Payload) -> bool {
        self.inner.receive(&mut TapCtx { ctx, capture: self.capture }, packet, payload)
    }
    fn timeout<C: Context<S::Payload>>(&mut self, ctx: &mut C, host: HostId, slot: u32, gen: u32) -> bool {
        self.inner.timeout(&mut TapCtx { ctx, capture: self.capture }, host, slot, gen)
    }
    fn finish(self) -> Records {
        self.inner.finish()
    }
    fn send_returned<C: Context<S::Payload>>(&mut self, ctx: &mut C, host: HostId, packet: PacketId) {
        self.inner.send_returned(&mut TapCtx { ctx, capture: self.capture }, host, packet)
    }
    const TAPS_AIR: bool = true;
    fn on_air(&mut self, frame: &AirFrame, payload: Option<&S::Payload>) {
        self.capture.air(frame, payload.and_then(Captured::datagram));
    }
}
