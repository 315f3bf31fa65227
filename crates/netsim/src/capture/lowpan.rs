//! The mesh's frames as bytes, as a sniffer beside every mote would hear them: IEEE 802.15.4
//! frames (the 2003 format Contiki's framer writes, PAN 0xABCD, 8-byte addresses, PAN-ID
//! compression, the FCS), carrying 6LoWPAN IPHC (RFC 6282) compressed as the model's
//! [`Compression`] says for that hop, RPL's hop-by-hop option (RFC 6553), UDP and the CoAP
//! message; RPL (RFC 6550) and neighbour-discovery (RFC 4861) messages with the fields the model
//! keeps. Every frame is exactly as long as the model put it on the air (tested), so a capture's
//! airtime is the model's.
//!
//! Addresses: mote n (node index n − 1) has the link address 02:00:00:00:00:00:hi(n):lo(n), so
//! its interface identifier is ::n and its address fd00::n (fe80::n in a link-local mesh), as
//! [`Addressing::ipv6`] says; a cloud host's address is inline. Sequence numbers count each
//! sender's frames (the model keeps none); an ACK carries the sequence number of the frame it
//! acknowledges. A forwarded packet's hop limit counts the hops the capture saw it take. What the
//! model does not keep is written as its defaults or as padding of the same length: a DIO's
//! version (240) and its options (DODAG configuration and prefix information, as one PadN), a
//! DAO's sequence number (0), a DIS's body (PadN).
//!
//! The FCS is CRC-16/KERMIT (the ITU-T polynomial, LSB first), from the `crc` crate; the
//! checksums of UDP and ICMPv6 from `etherparse`'s one's-complement sum.

use etherparse::checksum::Sum16BitWords;
use netmodel::mesh::air::{OnAir, RplOption};
use netmodel::mesh::frame::{Compression, External, HopPlace};
use netmodel::{AirFrame, HostId};

use super::Addressing;

/// Contiki's IEEE802154_PANID.
const PAN_ID: u16 = 0xABCD;
/// RPL_DEFAULT_INSTANCE.
const RPL_INSTANCE: u8 = 0x1e;
/// RPL_LOLLIPOP_INIT: a DODAG's first version.
const RPL_VERSION: u8 = 240;
/// RPL_MOP_STORING_NO_MULTICAST in a DIO's flags byte.
const RPL_MOP_STORING: u8 = 2 << 3;
/// RPL_DEFAULT_LIFETIME in a DAO's transit information.
const RPL_LIFETIME: u8 = 0xFF;
/// ICMPv6's next-header value, and UDP's.
const ICMPV6: u8 = 58;
const UDP: u8 = 17;
/// The FCS's CRC.
const FCS: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_KERMIT);

/// The frame writer's state: the mesh's addressing and compression, each sender's sequence
/// number, and the hops each packet was seen to take.
#[derive(Debug)]
pub(super) struct Lowpan {
    motes: u32,
    compression: Compression,
    root: u16,
    /// Each node's next sequence number, and that of the last frame it sent.
    seq: Vec<(u8, u8)>,
    /// By packet id (the driver's pool slot, reused): the packet's ends and size, the last node
    /// that sent it, and the hops it took.
    hops: Vec<((HostId, HostId, u32), u16, u8)>,
    /// Each node's last datagrams on the air, one more than its MAC queue holds (the packet's id, ends and size, and its
    /// CoAP message), the oldest replaced first: for a copy sent after the driver took the packet
    /// back (ContikiMAC repeats a frame until it is acknowledged, CSMA retries a frame whose ACK
    /// was lost, while the receiver's answer may already use the packet's slot).
    recent: Vec<Vec<(Key, Vec<u8>)>>,
    /// How many datagrams each node keeps (filled as they come).
    keep: usize,
}

/// The most datagrams kept per node, whatever a scenario's queues hold.
const MAX_KEPT: usize = 256;

/// A packet's id, ends and size.
type Key = (u32, HostId, HostId, u32);

impl Lowpan {
    /// The writer of a mesh of `motes` motes whose MAC queues hold at most `queued` packets.
    pub(super) fn new(motes: u32, compression: Compression, root: u16, queued: u32) -> Self {
        let n = motes as usize;
        let keep = (queued as usize).saturating_add(1).min(MAX_KEPT);
        Lowpan { motes, compression, root, seq: vec![(0, 0); n], hops: Vec::new(), recent: vec![Vec::new(); n], keep }
    }

    /// A node's link address in canonical order.
    fn mac(node: u16) -> [u8; 8] {
        let [hi, lo] = (node + 1).to_be_bytes();
        [0x02, 0, 0, 0, 0, 0, hi, lo]
    }

    /// A host's IPv6 address in the mesh.
    fn ipv6(&self, h: HostId) -> [u8; 16] {
        if self.compression.link_local && h.0 < self.motes {
            Self::link_local(h.0 as u16)
        } else {
            Addressing::ipv6(h, self.motes)
        }
    }

    /// A node's link-local address.
    fn link_local(node: u16) -> [u8; 16] {
        let mut a = [0u8; 16];
        a[..2].copy_from_slice(&[0xfe, 0x80]);
        a[14..].copy_from_slice(&(node + 1).to_be_bytes());
        a
    }

    /// Writes `frame` into `out` (cleared first); `coap` is a data frame's CoAP message. False
    /// when a data frame's message is missing (its packet no longer the driver's).
    pub(super) fn write(
        &mut self,
        ports: &Addressing,
        frame: &AirFrame,
        coap: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        let what = OnAir::of(frame, self.motes as usize);
        if what == OnAir::Ack {
            let acked = frame.receiver.and_then(|r| self.seq.get(r as usize)).map_or(0, |s| s.1);
            out.extend_from_slice(&[0x02, 0x00, acked]);
        } else {
            self.mac_header(frame, out);
            match what {
                OnAir::Data { hop, rpl } => {
                    let Some(k) = self.remember(frame, coap) else { return false };
                    let hop_limit = self.hop_limit(frame, hop);
                    let coap = &self.recent[frame.sender as usize][k].1;
                    self.datagram(ports, frame, hop, rpl, hop_limit, coap, out);
                }
                control => self.control(frame, control, out),
            }
        }
        let fcs = FCS.checksum(out);
        out.extend_from_slice(&fcs.to_le_bytes());
        true
    }

    /// Where in the sender's recent datagrams the one `frame` carries is: `coap` (the packet still
    /// the driver's) made the newest, in this packet's entry, a new one or the oldest's; else the
    /// entry kept for this packet. None when neither has it.
    fn remember(&mut self, frame: &AirFrame, coap: Option<&[u8]>) -> Option<usize> {
        let p = &frame.packet;
        let key = (p.id.0, p.from, p.to, p.size);
        let recent = &mut self.recent[frame.sender as usize];
        let found = recent.iter().position(|r| r.0 == key);
        let Some(c) = coap else { return found };
        if found.is_none() && recent.len() < self.keep {
            recent.push((key, Vec::new()));
        }
        let k = found.unwrap_or(recent.len() - 1);
        recent[..=k].rotate_right(1);
        recent[0].0 = key;
        recent[0].1.clear();
        recent[0].1.extend_from_slice(c);
        Some(0)
    }

    /// Frame control, sequence number, PAN, destination and source (little-endian on the air).
    fn mac_header(&mut self, frame: &AirFrame, out: &mut Vec<u8>) {
        let s = &mut self.seq[frame.sender as usize];
        let seq = s.0;
        *s = (seq.wrapping_add(1), seq);
        match frame.receiver {
            // data, ACK request, PAN-ID compression, 8-byte destination and source
            Some(r) => {
                out.extend_from_slice(&[0x61, 0xCC, seq]);
                out.extend_from_slice(&PAN_ID.to_le_bytes());
                out.extend(Self::mac(r).iter().rev());
            }
            // data, PAN-ID compression, the short broadcast address, 8-byte source
            None => {
                out.extend_from_slice(&[0x41, 0xC8, seq]);
                out.extend_from_slice(&PAN_ID.to_le_bytes());
                out.extend_from_slice(&[0xFF, 0xFF]);
            }
        }
        out.extend(Self::mac(frame.sender).iter().rev());
    }

    /// The packet's hop limit on this hop: 64 where it originated, one less per node that
    /// forwarded it (a packet from outside the mesh was forwarded once by the border router).
    fn hop_limit(&mut self, frame: &AirFrame, hop: HopPlace) -> u8 {
        let p = &frame.packet;
        let key = (p.from, p.to, p.size);
        let i = p.id.0 as usize;
        if self.hops.len() <= i {
            self.hops.resize(i + 1, ((HostId(u32::MAX), HostId(u32::MAX), 0), u16::MAX, 0));
        }
        let entry = &mut self.hops[i];
        if hop.originated || entry.0 != key {
            *entry = (key, frame.sender, u8::from(!hop.originated));
        } else if entry.1 != frame.sender {
            entry.1 = frame.sender;
            entry.2 = entry.2.saturating_add(1);
        }
        64u8.saturating_sub(entry.2)
    }

    /// IPHC, RPL's hop-by-hop option, UDP and the CoAP message.
    #[allow(clippy::too_many_arguments)]
    fn datagram(
        &self,
        ports: &Addressing,
        frame: &AirFrame,
        hop: HopPlace,
        rpl: RplOption,
        hop_limit: u8,
        coap: &[u8],
        out: &mut Vec<u8>,
    ) {
        let c = self.compression;
        let p = &frame.packet;
        let (src, dst) = (self.ipv6(p.from), self.ipv6(p.to));
        // 011, traffic class and flow label elided; the next header inline (the HBH header) or
        // NHC; the hop limit 64 elided where it originated
        let mut b0 = 0x78;
        if !c.rpl_hbh_option {
            b0 |= 0x04;
        }
        if hop.originated {
            b0 |= 0x02;
        }
        // (CID, SAC, SAM, DAC, DAM) and the inline address bytes
        let (b1, src_inline, dst_inline): (u8, &[u8], &[u8]) = if c.link_local {
            (0x33, &[], &[])
        } else if c.context_matches_lln_prefix {
            let (s, si): (u8, &[u8]) = match hop.external {
                External::Source => (0x00, &src),
                _ if hop.originated => (0x70, &[]),
                _ => (0x50, &src[8..]),
            };
            let (d, di): (u8, &[u8]) = match hop.external {
                External::Destination => (0x00, &dst),
                _ if hop.last => (0x07, &[]),
                _ => (0x05, &dst[8..]),
            };
            (0x80 | s | d, si, di)
        } else {
            (0x00, &src, &dst)
        };
        out.extend_from_slice(&[b0, b1]);
        if b1 & 0x80 != 0 {
            out.push(0x00); // context 0 for both
        }
        if c.rpl_hbh_option {
            out.push(0x00); // hop-by-hop options
        }
        if !hop.originated {
            out.push(hop_limit);
        }
        out.extend_from_slice(src_inline);
        out.extend_from_slice(dst_inline);
        let (sport, dport) = (ports.port(p.from), ports.port(p.to));
        let len = 8 + coap.len() as u16;
        let mut udp = [0u8; 8];
        udp[..2].copy_from_slice(&sport.to_be_bytes());
        udp[2..4].copy_from_slice(&dport.to_be_bytes());
        udp[4..6].copy_from_slice(&len.to_be_bytes());
        let sum = checksum(&src, &dst, UDP, &[&udp, coap]);
        if c.rpl_hbh_option {
            let flags = if rpl.down { 0x80 } else { 0 } | if rpl.rank_error { 0x40 } else { 0 };
            let [rh, rl] = rpl.sender_rank.to_be_bytes();
            out.extend_from_slice(&[UDP, 0, 0x63, 4, flags, RPL_INSTANCE, rh, rl]);
            udp[6..].copy_from_slice(&sum);
            out.extend_from_slice(&udp);
        } else {
            // NHC UDP: ports and checksum inline
            out.push(0xF0);
            out.extend_from_slice(&udp[..4]);
            out.extend_from_slice(&sum);
        }
        out.extend_from_slice(coap);
    }

    /// An RPL or neighbour-discovery message between link-local addresses.
    fn control(&self, frame: &AirFrame, what: OnAir, out: &mut Vec<u8>) {
        let src = Self::link_local(frame.sender);
        let nd = matches!(what, OnAir::Ns { .. } | OnAir::Na { .. });
        // next header inline (ICMPv6); hop limit elided: 255 for ND, 64 for RPL
        out.extend_from_slice(&[0x78 | if nd { 0x03 } else { 0x02 }]);
        let dst = match (frame.receiver, what) {
            (Some(r), _) => {
                out.extend_from_slice(&[0x33, ICMPV6]);
                Self::link_local(r)
            }
            (None, OnAir::Ns { target }) => {
                // the solicited-node address ff02::1:ffXX:XXXX, 40 bits inline (DAM 01)
                let [hi, lo] = (target + 1).to_be_bytes();
                out.extend_from_slice(&[0x39, ICMPV6, 0x02, 0x01, 0xFF, 0x00, hi, lo]);
                let mut a = [0u8; 16];
                a[..2].copy_from_slice(&[0xff, 0x02]);
                a[11..].copy_from_slice(&[0x01, 0xFF, 0x00, hi, lo]);
                a
            }
            (None, _) => {
                // ff02::1a (all RPL nodes), 8 bits inline (DAM 11)
                out.extend_from_slice(&[0x3B, ICMPV6, 0x1a]);
                let mut a = [0u8; 16];
                a[..2].copy_from_slice(&[0xff, 0x02]);
                a[15] = 0x1a;
                a
            }
        };
        let icmp_len = (frame.mpdu as usize).saturating_sub(out.len() + 2);
        let start = out.len();
        match what {
            OnAir::Dio { dtsn, rank } => {
                let [rh, rl] = rank.to_be_bytes();
                out.extend_from_slice(&[
                    155,
                    0x01,
                    0,
                    0,
                    RPL_INSTANCE,
                    RPL_VERSION,
                    rh,
                    rl,
                    RPL_MOP_STORING,
                    dtsn,
                    0,
                    0,
                ]);
                out.extend_from_slice(&self.global(self.root));
            }
            OnAir::Dao { target, no_path } => {
                out.extend_from_slice(&[155, 0x02, 0, 0, RPL_INSTANCE, 0, 0, 0]);
                out.extend_from_slice(&[5, 18, 0, 128]);
                out.extend_from_slice(&self.global(target));
                out.extend_from_slice(&[6, 4, 0, 0, 0, if no_path { 0 } else { RPL_LIFETIME }]);
            }
            OnAir::Dis => out.extend_from_slice(&[155, 0x00, 0, 0, 0, 0]),
            // a solicitation with the sender's link address (option 1); an advertisement (router,
            // solicited, override) with the target's, the sender's own (option 2)
            OnAir::Ns { target } | OnAir::Na { target } => {
                let (ty, flags, option) = if matches!(what, OnAir::Ns { .. }) { (135, 0, 1) } else { (136, 0xE0, 2) };
                out.extend_from_slice(&[ty, 0, 0, 0, flags, 0, 0, 0]);
                out.extend_from_slice(&Self::link_local(target));
                out.extend_from_slice(&[option, 2]);
                out.extend_from_slice(&Self::mac(frame.sender));
                out.extend_from_slice(&[0; 6]);
            }
            // not control messages: `write` sends them elsewhere
            OnAir::Data { .. } | OnAir::Ack => {}
        }
        // what the model does not keep: one PadN option of the rest (a single byte: Pad1)
        let written = out.len() - start;
        if let Some(rest) = icmp_len.checked_sub(written).filter(|&r| r > 0) {
            if rest == 1 {
                out.push(0);
            } else {
                out.push(1);
                out.push((rest - 2) as u8);
                out.resize(out.len() + rest - 2, 0);
            }
        }
        let sum = checksum(&src, &dst, ICMPV6, &[&out[start..]]);
        out[start + 2..start + 4].copy_from_slice(&sum);
    }

    /// A mote's global address (a DODAG's root, a DAO's target).
    fn global(&self, node: u16) -> [u8; 16] {
        Addressing::ipv6(HostId(u32::from(node)), self.motes)
    }
}

/// The one's-complement checksum of an upper-layer message over IPv6's pseudo-header
/// (RFC 8200 §8.1), as its two bytes.
fn checksum(src: &[u8; 16], dst: &[u8; 16], next_header: u8, parts: &[&[u8]]) -> [u8; 2] {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut sum = Sum16BitWords::new()
        .add_16bytes(*src)
        .add_16bytes(*dst)
        .add_4bytes((len as u32).to_be_bytes())
        .add_4bytes([0, 0, 0, next_header]);
    for p in parts {
        sum = sum.add_slice(p);
    }
    sum.to_ones_complement_with_no_zero().to_be().to_be_bytes()
}
