//! IEEE 802.15.4 PHY timing and the frame sizes of Contiki 3.0's 6LoWPAN (HC06 / RFC 6282 IPHC,
//! RFC 4944 fragments) for one hop of a packet.
//!
//! * 2.4 GHz O-QPSK PHY (IEEE 802.15.4-2006): 250 kbit/s, one byte = 2 symbols = 32 µs; a PPDU is
//!   the MPDU plus 6 bytes (4-byte preamble, SFD, length), so a frame of `m` MPDU bytes is on the
//!   air for (6 + m)·32 µs; aMaxPHYPacketSize = 127 MPDU bytes including the 2-byte FCS.
//! * MAC header (Contiki's framer with 8-byte addresses and PAN-ID compression): 21 bytes for a
//!   unicast data frame, plus the FCS: at most 104 bytes of 6LoWPAN payload per frame.
//! * IPHC as Contiki's `sicslowpan.c` writes it, recompressed at every hop against that hop's
//!   link addresses (route-over): 2 bytes of dispatch and base; one CID byte whenever an address
//!   uses the context; traffic class and flow label elided; the next header inline (1 byte)
//!   unless it is UDP; the hop limit elided when 64 (originated) and inline (1 byte) once a
//!   forwarder has decremented it; a global address whose prefix is the context costs 0 bytes when
//!   its interface identifier is this hop's link address (the sender as source, the next hop as
//!   destination) and 8 otherwise; without a context match every global address is 16 bytes.
//! * Contiki inserts an 8-byte Hop-by-Hop header with the RPL option (RFC 6553) into every unicast
//!   UDP packet: the next header is then not UDP, so the HBH header and the 8-byte UDP header go
//!   uncompressed. Without it, UDP is NHC-compressed: 1 byte, ports inline (4: CoAP's ports are not
//!   in the compressible ranges) and the checksum (2): 7 bytes.
//! * Fragmentation (RFC 4944, as Contiki does it): above 104 bytes, a FRAG1 frame (4-byte header,
//!   the IPHC bytes and as many further bytes as fit, a multiple of 8) and FRAGN frames (5-byte
//!   header, multiples of 8 bytes, the last one what is left).

/// One byte on the air, ns (250 kbit/s).
pub const BYTE_NS: u64 = 32_000;
/// One symbol (O-QPSK: four bits), ns; the unit of the radio's turnarounds.
pub const SYMBOL_NS: u64 = BYTE_NS / 2;
/// PHY bytes around the MPDU: preamble (4), SFD (1), length (1).
pub const PHY_OVERHEAD: u32 = 6;
/// aMaxPHYPacketSize: the largest MPDU, FCS included.
pub const MAX_MPDU: u32 = 127;
/// MAC header of a unicast data frame with 8-byte addresses and PAN-ID compression.
pub const MAC_HEADER: u32 = 21;
/// MAC header of a broadcast data frame: frame control (2), sequence number (1), destination
/// PAN (2), the short broadcast address 0xffff (2), the 8-byte source.
pub const MAC_HEADER_BROADCAST: u32 = 15;
/// Frame check sequence.
pub const FCS: u32 = 2;
/// The most 6LoWPAN bytes one unicast frame carries.
pub const MAX_LOWPAN_PAYLOAD: u32 = MAX_MPDU - MAC_HEADER - FCS;
/// A hardware ACK's MPDU: frame control, sequence number, FCS.
pub const ACK_MPDU: u32 = 5;
/// FRAG1 header.
pub const FRAG1_HEADER: u32 = 4;
/// FRAGN header.
pub const FRAGN_HEADER: u32 = 5;

/// SLIP's frame delimiter (RFC 1055).
pub const SLIP_END: u8 = 0xC0;
/// SLIP's escape byte.
pub const SLIP_ESC: u8 = 0xDB;
/// An uncompressed IPv6 packet's bytes before its UDP payload: IPv6 (40) + UDP (8) headers.
pub const IPV6_UDP_HEADERS: u32 = 48;

/// Bytes a SLIP frame of `packet` takes on the serial line: END, the packet with END and ESC
/// escaped as two bytes each, END (RFC 1055; tunslip6 and Contiki's slip.c).
pub fn slip_len(packet: &[u8]) -> u32 {
    2 + packet.iter().map(|&b| if b == SLIP_END || b == SLIP_ESC { 2 } else { 1 }).sum::<u32>()
}

/// The MPDU of an RPL control message of `icmp_bytes` (ICMPv6 header and body) between
/// link-local addresses, both derived from the MAC addresses and elided: IPHC dispatch and base
/// (2), the next header inline (ICMPv6, 1), the hop limit (64) elided; a broadcast's destination
/// ff02::1a in one byte.
pub fn control_mpdu(broadcast: bool, icmp_bytes: u32) -> u32 {
    let (mac, iphc) = if broadcast { (MAC_HEADER_BROADCAST, 4) } else { (MAC_HEADER, 3) };
    mac + FCS + iphc + icmp_bytes
}

/// Time to send `bytes` over a UART at `baud` with 10 bits per byte (8N1), ns.
pub fn serial_ns(bytes: u32, baud: u32) -> u64 {
    (bytes as u64 * 10 * 1_000_000_000).div_ceil(baud.max(1) as u64)
}

/// Time on the air of a frame of `mpdu` bytes, ns.
pub fn airtime_ns(mpdu: u32) -> u64 {
    (PHY_OVERHEAD + mpdu) as u64 * BYTE_NS
}

/// How packets are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The mesh's global prefix is Contiki's address context 0 (false for the NITK firmware,
    /// which addresses `fd00::` while its context is `aaaa::`).
    pub context_matches_lln_prefix: bool,
    /// Contiki's RPL Hop-by-Hop option in every unicast UDP packet.
    pub rpl_hbh_option: bool,
    /// Link-local addresses (a mesh without a border router, one hop): both are derived from
    /// the link addresses and elided, with no context byte.
    pub link_local: bool,
}

/// Where on its path a hop is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopPlace {
    /// The sender of this hop is the packet's source (hop limit still 64).
    pub originated: bool,
    /// The receiver of this hop is the packet's destination.
    pub last: bool,
    /// Which of the packet's ends is outside the mesh (a cloud host behind the border router),
    /// if one is.
    pub external: External,
}

/// A packet end outside the mesh: its address goes inline (16 bytes) on every hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum External {
    /// Both ends are motes.
    None,
    /// The source is outside (the packet entered at the border router).
    Source,
    /// The destination is outside (the packet leaves through the border router).
    Destination,
}

impl HopPlace {
    /// A hop of a packet between two motes.
    pub const fn local(originated: bool, last: bool) -> Self {
        HopPlace { originated, last, external: External::None }
    }
}

impl Compression {
    /// IPHC bytes of the IPv6 header on this hop.
    pub fn iphc_bytes(&self, hop: HopPlace) -> u32 {
        let mut n = 2; // dispatch + IPHC base
        n += u32::from(self.rpl_hbh_option); // next header inline unless UDP
        n += u32::from(!hop.originated); // hop limit 63, 62, ... inline
        if self.link_local {
            // fe80:: addresses from the sender's and the receiver's link addresses: 0 bytes
        } else if self.context_matches_lln_prefix {
            n += 1; // CID byte (the mote's address uses the context)
                    // an address outside the mesh is inline; a mote's costs 0 when it is this hop's
                    // link address (the sender as source, the next hop as destination), else 8
            n += match hop.external {
                External::Source => 16,
                _ if hop.originated => 0,
                _ => 8,
            };
            n += match hop.external {
                External::Destination => 16,
                _ if hop.last => 0,
                _ => 8,
            };
        } else {
            n += 16 + 16;
        }
        n
    }

    /// Bytes after IPHC before the CoAP message: HBH (8) + UDP (8), or NHC-compressed UDP (7).
    pub fn transport_bytes(&self) -> u32 {
        if self.rpl_hbh_option {
            16
        } else {
            7
        }
    }

    /// The frames of one hop of a CoAP message of `coap_bytes`.
    pub fn frames(&self, hop: HopPlace, coap_bytes: u32) -> Frames {
        let iphc = self.iphc_bytes(hop);
        Frames { iphc, rest: self.transport_bytes() + coap_bytes }
    }
}

/// The frames that carry one packet over one hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frames {
    iphc: u32,
    /// Bytes carried uncompressed after the IPHC header.
    rest: u32,
}

impl Frames {
    /// 6LoWPAN payload without fragmentation: IPHC + the rest.
    pub fn lowpan_payload(&self) -> u32 {
        self.iphc + self.rest
    }

    /// Bytes after the IPHC header that the first fragment carries.
    fn first_share(&self) -> u32 {
        (MAX_LOWPAN_PAYLOAD - FRAG1_HEADER - self.iphc) & !7
    }

    /// How many frames: 1, or the RFC 4944 fragments.
    pub fn count(&self) -> u32 {
        if self.lowpan_payload() <= MAX_LOWPAN_PAYLOAD {
            return 1;
        }
        let per = (MAX_LOWPAN_PAYLOAD - FRAGN_HEADER) & !7;
        1 + (self.rest - self.first_share()).div_ceil(per)
    }

    /// The MPDU bytes of frame `k` (0-based, < [`Frames::count`]).
    pub fn mpdu(&self, k: u32) -> u32 {
        let overhead = MAC_HEADER + FCS;
        if self.count() == 1 {
            return overhead + self.lowpan_payload();
        }
        let first = self.first_share();
        if k == 0 {
            return overhead + FRAG1_HEADER + self.iphc + first;
        }
        let per = (MAX_LOWPAN_PAYLOAD - FRAGN_HEADER) & !7;
        let left = self.rest - first - (k - 1) * per;
        overhead + FRAGN_HEADER + left.min(per)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NITK: Compression =
        Compression { context_matches_lln_prefix: false, rpl_hbh_option: true, link_local: false };
    const CTX: Compression = Compression { context_matches_lln_prefix: true, rpl_hbh_option: true, link_local: false };
    const ORIGIN_LAST: HopPlace = HopPlace::local(true, true);
    const ORIGIN: HopPlace = HopPlace::local(true, false);
    const MIDDLE: HopPlace = HopPlace::local(false, false);
    const LAST: HopPlace = HopPlace::local(false, true);

    #[test]
    fn rpl_control_frames_have_the_sizes_cooja_shows() {
        // DIO: ICMPv6 header 4 + base 24 (instance, version, rank 2, flags, DTSN, flags,
        // reserved, DODAGID 16) + DODAG configuration 16 + prefix information 32 = 76 bytes;
        // DAO: 4 + base 4 + target option 20 (type, length, flags, prefix length, 16 bytes) +
        // transit information 6 = 34. Cooja: DIO 97 broadcast, 102 unicast; DAO 60.
        assert_eq!(control_mpdu(true, 4 + 24 + 16 + 32), 97);
        assert_eq!(control_mpdu(false, 4 + 24 + 16 + 32), 102);
        assert_eq!(control_mpdu(false, 4 + 4 + 20 + 6), 60);
    }

    #[test]
    fn airtime_is_32_us_per_byte_with_the_6_byte_phy_header() {
        assert_eq!(airtime_ns(89), 3_040_000); // (6 + 89)·32 µs
        assert_eq!(airtime_ns(ACK_MPDU), 352_000); // 11 bytes
        assert_eq!(airtime_ns(MAX_MPDU), 133 * 32_000);
        assert_eq!(MAX_LOWPAN_PAYLOAD, 104);
    }

    /// The worked sizes: NITK's request (CoAP 15 bytes) and response (20 bytes).
    #[test]
    fn worked_sizes_of_the_nitk_messages() {
        // no context: 2 + next header 1 + 16 + 16 = 35; forwarded: + hop limit
        assert_eq!(NITK.iphc_bytes(ORIGIN), 35);
        assert_eq!(NITK.iphc_bytes(ORIGIN_LAST), 35);
        assert_eq!(NITK.iphc_bytes(MIDDLE), 36);
        let req = NITK.frames(ORIGIN, 15);
        assert_eq!((req.lowpan_payload(), req.count(), req.mpdu(0)), (66, 1, 89));
        assert_eq!(airtime_ns(req.mpdu(0)), 3_040_000);
        let fwd = NITK.frames(MIDDLE, 15);
        assert_eq!((fwd.lowpan_payload(), fwd.mpdu(0)), (67, 90));
        assert_eq!(airtime_ns(90), 3_072_000);
        assert_eq!((NITK.frames(ORIGIN, 20).mpdu(0), NITK.frames(LAST, 20).mpdu(0)), (94, 95));
        assert_eq!((airtime_ns(94), airtime_ns(95)), (3_200_000, 3_232_000));
    }

    #[test]
    fn worked_sizes_with_the_address_context() {
        // one hop, both IIDs from the link addresses: 2 + CID 1 + next header 1
        assert_eq!(CTX.iphc_bytes(ORIGIN_LAST), 4);
        assert_eq!(CTX.frames(ORIGIN_LAST, 15).mpdu(0), 58);
        assert_eq!(airtime_ns(58), 2_048_000);
        // originated, multi-hop: the destination's IID is not the next hop's: + 8
        assert_eq!(CTX.iphc_bytes(ORIGIN), 12);
        assert_eq!((CTX.frames(ORIGIN, 15).lowpan_payload(), CTX.frames(ORIGIN, 15).mpdu(0)), (43, 66));
        // in the middle: hop limit + 8 + 8
        assert_eq!(CTX.iphc_bytes(MIDDLE), 21);
        assert_eq!(CTX.frames(MIDDLE, 15).mpdu(0), 75);
        assert_eq!(airtime_ns(75), 2_592_000);
        // last hop of a forwarded packet: source 8, destination derivable
        assert_eq!(CTX.iphc_bytes(LAST), 2 + 1 + 1 + 1 + 8);
    }

    /// A cloud host's packet (CLOUD: context matches): its address is inline. Entering at the
    /// border router (hop limit 63 from there: inline), the last hop: 2 + next header 1 + hop
    /// limit 1 + CID 1 + source 16 + destination 0 = 21; a hop before the last: + 8 = 29. A mote's
    /// answer out, originated: 2 + 1 + CID 1 + source 0 + destination 16 = 20; forwarded: + hop
    /// limit 1 + source 8 = 29.
    /// SLIP: 4 bytes, one END and one ESC among them: END + 1 + 2 + 2 + 1 + END = 8 bytes;
    /// 80 bits at 115200 baud = 694.444… µs (rounded up to the nanosecond).
    #[test]
    fn slip_serialization_with_escaping() {
        assert_eq!(slip_len(&[0x45, SLIP_END, SLIP_ESC, 0x01]), 8);
        assert_eq!(serial_ns(8, 115_200), 694_445);
        // a 63-byte CoAP message in an uncompressed IPv6/UDP packet without escapes: 48 + 63 + 2
        assert_eq!(slip_len(&[0u8; 111]), 113);
        assert_eq!(serial_ns(113, 115_200), 9_809_028);
    }

    #[test]
    fn an_address_outside_the_mesh_goes_inline() {
        let inbound = |last| HopPlace { originated: false, last, external: External::Source };
        let outbound = |originated| HopPlace { originated, last: false, external: External::Destination };
        assert_eq!(CTX.iphc_bytes(inbound(true)), 21);
        assert_eq!(CTX.iphc_bytes(inbound(false)), 29);
        assert_eq!(CTX.iphc_bytes(outbound(true)), 20);
        assert_eq!(CTX.iphc_bytes(outbound(false)), 29);
        // without a context every address is inline anyway
        assert_eq!(NITK.iphc_bytes(inbound(true)), NITK.iphc_bytes(LAST));
    }

    #[test]
    fn without_the_hbh_option_udp_is_nhc_compressed() {
        let c = Compression { context_matches_lln_prefix: false, rpl_hbh_option: false, link_local: false };
        assert_eq!(c.iphc_bytes(ORIGIN), 2 + 32); // next header compressed
        assert_eq!(c.frames(ORIGIN, 15).lowpan_payload(), 34 + 7 + 15);
    }

    #[test]
    fn an_mpdu_above_127_bytes_fragments_as_rfc_4944_says() {
        // 104 bytes of 6LoWPAN payload fit: 35 + 16 + 53
        assert_eq!(NITK.frames(ORIGIN, 53).count(), 1);
        assert_eq!(NITK.frames(ORIGIN, 53).mpdu(0), 127);
        // 105 do not: FRAG1 carries 4 + 35 + floor8(104 − 4 − 35 = 65) = 64 bytes of the 70 after
        // IPHC (16 + 54); FRAGN the other 6
        let f = NITK.frames(ORIGIN, 54);
        assert_eq!(f.count(), 2);
        assert_eq!(f.mpdu(0), 23 + 4 + 35 + 64);
        assert_eq!(f.mpdu(1), 23 + 5 + 6);
        // 216 after IPHC: 64 in FRAG1, then FRAGN payloads of floor8(99) = 96: 96 and 56
        let f = NITK.frames(ORIGIN, 200);
        assert_eq!(f.count(), 3);
        assert_eq!([f.mpdu(0), f.mpdu(1), f.mpdu(2)], [126, 23 + 5 + 96, 23 + 5 + 56]);
        for k in 0..f.count() {
            assert!(f.mpdu(k) <= MAX_MPDU);
        }
    }
}
