//! Captures: the pcap a run writes, read back byte by byte by hand (the pcap format, the IP and
//! UDP headers and their checksums as their RFCs define them), and a captured run's results
//! equal to the same run without the capture.

use std::io::Write;
use std::sync::{Arc, Mutex};

use coap_wire::{Code, Message, MessageType};
use netsim::capture::Capture;
use netsim::mesh::MeshScenario;
use netsim::{Detail, Scenario};

/// A writer whose bytes the test reads after the capture is finished.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One captured packet: its time (ns) and its bytes.
type Record = (u64, Vec<u8>);

/// The records of a little-endian, nanosecond, raw-IP pcap (its global header checked).
fn records(file: &[u8]) -> Vec<Record> {
    records_of(file, 101) // LINKTYPE_RAW
}

/// The records of a little-endian, nanosecond pcap of link type `linktype`.
fn records_of(file: &[u8], linktype: u32) -> Vec<Record> {
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(u32_at(file, 0), 0xa1b2_3c4d, "magic of a nanosecond pcap");
    assert_eq!((file[4], file[6]), (2, 4), "version 2.4");
    assert_eq!(u32_at(file, 20), linktype, "link type");
    let mut out = Vec::new();
    let mut i = 24;
    while i < file.len() {
        let (s, ns, incl, orig) = (u32_at(file, i), u32_at(file, i + 4), u32_at(file, i + 8), u32_at(file, i + 12));
        assert_eq!(incl, orig, "whole packets");
        assert!(ns < 1_000_000_000);
        let t = s as u64 * 1_000_000_000 + ns as u64;
        out.push((t, file[i + 16..i + 16 + incl as usize].to_vec()));
        i += 16 + incl as usize;
    }
    out
}

/// RFC 1071: the one's complement of the one's complement sum of 16-bit words.
fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    for p in parts {
        for w in p.chunks(2) {
            sum += u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32;
        }
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet's (source, destination, ports, UDP payload), its header checksum and UDP
/// checksum checked (a header and a sum over it, with its checksum in place, of 0).
fn ipv4_udp(p: &[u8]) -> ([u8; 4], [u8; 4], u16, u16, Vec<u8>) {
    assert_eq!(p[0], 0x45, "IPv4, a 20-byte header");
    assert_eq!(u16::from_be_bytes([p[2], p[3]]) as usize, p.len(), "total length");
    assert_eq!(p[9], 17, "UDP");
    assert_eq!(checksum(&[&p[..20]]), 0, "IPv4 header checksum");
    let (src, dst) = (p[12..16].try_into().unwrap(), p[16..20].try_into().unwrap());
    let udp = &p[20..];
    assert_eq!(u16::from_be_bytes([udp[4], udp[5]]) as usize, udp.len(), "UDP length");
    let pseudo = [&p[12..20], &[0, 17], &(udp.len() as u16).to_be_bytes()[..]].concat();
    assert_eq!(checksum(&[&pseudo, udp]), 0, "UDP checksum");
    let port = |i: usize| u16::from_be_bytes([udp[i], udp[i + 1]]);
    (src, dst, port(0), port(2), udp[8..].to_vec())
}

/// Replication 0 of the resolved scenario `s` over `t`, captured: its result, the packets the
/// capture counted and the records it wrote.
fn run_captured(s: &Scenario, t: &netsim::Transport) -> (netsim::RepResult, u64, Vec<Record>) {
    let buf = Shared::default();
    let mut cap = Capture::new(Box::new(buf.clone()), netsim::addressing(s, t)).unwrap();
    let result = netsim::run_rep_captured(s, t, 0, None, Detail::Exchanges, &mut cap);
    let n = cap.finish().unwrap();
    let recs = records(&buf.0.lock().unwrap());
    (result, n, recs)
}

/// The capture of replication 0 of scenario `s` (resolved here), as records.
fn capture_of(s: Scenario) -> Vec<Record> {
    let s = s.resolve().unwrap();
    run_captured(&s, &s.transport().unwrap()).2
}

#[test]
fn a_bottleneck_capture_holds_every_datagram_sent_in_ipv4_and_changes_nothing() {
    // 2 clients, 3 exchanges each, no losses: an RTT of 0.63 s under an RTO of 2–3 s, so no
    // retransmission: 6 requests and 6 responses
    let s = Scenario { cc: "default".into(), clients: 2, exchanges: 3, ..Scenario::thesis() }.resolve().unwrap();
    let t = s.transport().unwrap();
    let plain = netsim::run_rep_with(&s, &t, 0, None, Detail::Exchanges);
    let (captured, n, recs) = run_captured(&s, &t);
    assert_eq!(n, 12);
    assert_eq!(
        (&plain.clients, &plain.exchanges, plain.events),
        (&captured.clients, &captured.exchanges, captured.events)
    );
    assert_eq!(recs.len(), 12);
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    let server = [10, 255, 255, 254];
    let (mut requests, mut responses) = (0, 0);
    for (_, p) in &recs {
        let (src, dst, sport, dport, coap) = ipv4_udp(p);
        let m = Message::decode(&coap).unwrap();
        if dst == server {
            // the calibration's request: 4-byte header + Uri-Path "hello", in 20 + 8 bytes: 38
            assert_eq!(p.len(), 38);
            assert!(src == [10, 0, 0, 1] || src == [10, 0, 0, 2], "{src:?}");
            assert_eq!((sport, dport), (49152 + src[3] as u16 - 1, 5683));
            assert_eq!((m.ty, m.code), (MessageType::Con, Code::GET));
            requests += 1;
        } else {
            // the response: 4 + marker + 60 bytes of payload, piggybacked: 93
            assert_eq!((src, sport), (server, 5683));
            assert_eq!(p.len(), 93);
            assert_eq!((m.ty, m.code), (MessageType::Ack, Code::CONTENT));
            responses += 1;
        }
    }
    assert_eq!((requests, responses), (6, 6));
    // the first request goes when its client starts, as the run recorded
    let first = plain.exchanges.iter().map(|e| e.start_ns).min().unwrap();
    assert_eq!(recs[0].0, first);
}

/// A TCP segment of an IPv4 packet: (ports, seq, ack, flags, options, payload), its IPv4 and
/// TCP checksums checked (RFC 793's pseudo header).
fn ipv4_tcp(p: &[u8]) -> ((u16, u16), u32, u32, u8, Vec<u8>, Vec<u8>) {
    assert_eq!(p[0], 0x45);
    assert_eq!(u16::from_be_bytes([p[2], p[3]]) as usize, p.len(), "total length");
    assert_eq!(p[9], 6, "TCP");
    assert_eq!(checksum(&[&p[..20]]), 0, "IPv4 header checksum");
    let tcp = &p[20..];
    let pseudo = [&p[12..20], &[0, 6], &(tcp.len() as u16).to_be_bytes()[..]].concat();
    assert_eq!(checksum(&[&pseudo, tcp]), 0, "TCP checksum");
    let be16 = |i: usize| u16::from_be_bytes([tcp[i], tcp[i + 1]]);
    let be32 = |i: usize| u32::from_be_bytes(tcp[i..i + 4].try_into().unwrap());
    let header = (tcp[12] >> 4) as usize * 4;
    ((be16(0), be16(2)), be32(4), be32(8), tcp[13], tcp[20..header].to_vec(), tcp[header..].to_vec())
}

#[test]
fn a_tcp_capture_holds_every_segment_with_its_coap_frames_and_changes_nothing() {
    // one client, CoAP over TCP, 3 exchanges on the thesis's link (MTU 296: MSS 256)
    let s = Scenario { transport: netsim::TransportKind::Tcp, clients: 1, exchanges: 3, ..Scenario::thesis() }
        .resolve()
        .unwrap();
    let t = s.transport().unwrap();
    let plain = netsim::run_rep_with(&s, &t, 0, None, Detail::Exchanges);
    let (captured, n, recs) = run_captured(&s, &t);
    assert_eq!(
        (&plain.clients, &plain.exchanges, plain.events),
        (&captured.clients, &captured.exchanges, captured.events)
    );
    assert_eq!(recs.len() as u64, n);
    let (syn, ack, fin) = (0x02, 0x10, 0x01);
    // the handshake: the client's SYN from 10.0.0.1:49152 (its connection 0), sequence 0, with
    // MSS 256, NOP, NOP, SACK-permitted, NOP, window scale 0: 20 + 20 + 12 = 52 bytes; the
    // server's SYN/ACK acknowledging 1, as long
    let mss_sack_ws = vec![2, 4, 1, 0, 1, 1, 4, 2, 1, 3, 3, 0];
    let (ports, seq, _, flags, options, payload) = ipv4_tcp(&recs[0].1);
    assert_eq!(
        (ports, seq, flags, &options, payload.len(), recs[0].1.len()),
        ((49152, 5683), 0, syn, &mss_sack_ws, 0, 52)
    );
    assert_eq!(&recs[0].1[12..20], &[10, 0, 0, 1, 10, 255, 255, 254]);
    let (ports, seq, ackn, flags, options, _) = ipv4_tcp(&recs[1].1);
    assert_eq!((ports, seq, ackn, flags, options), ((5683, 49152), 0, 1, syn | ack, mss_sack_ws));
    // each direction's bytes, in sequence order, are the RFC 8323 frames the endpoints wrote:
    // the client's CSM and 3 GETs, the server's CSM and 3 responses 2.05
    let mut streams = [std::collections::BTreeMap::new(), std::collections::BTreeMap::new()];
    let mut fins = 0;
    for (_, p) in &recs {
        let ((sport, _), seq, _, flags, _, payload) = ipv4_tcp(p);
        fins += (flags & fin != 0) as u32;
        if !payload.is_empty() {
            streams[usize::from(sport == 5683)].insert(seq, payload); // a retransmission: the same bytes
        }
    }
    let codes = |stream: &std::collections::BTreeMap<u32, Vec<u8>>| {
        let bytes: Vec<u8> = stream.values().flatten().copied().collect();
        let mut at = 0;
        let mut codes = Vec::new();
        while at < bytes.len() {
            let (f, len) = coap_wire::Frame::decode(&bytes[at..], 1 << 16).unwrap();
            codes.push(f.code);
            at += len;
        }
        codes
    };
    let csm = Code::new(7, 1);
    assert_eq!(codes(&streams[0]), [csm, Code::GET, Code::GET, Code::GET]);
    assert_eq!(codes(&streams[1]), [csm, Code::CONTENT, Code::CONTENT, Code::CONTENT]);
    assert_eq!(fins, 0, "a continuous client keeps its connection to the end");
}

/// An immediate ACK leaves before the application's answer, as Linux sends it from the receive
/// path before the application reads: the server's first GET arrives in quick-ACK mode (quick
/// ACKs granted with the client's CSM, the server not yet interactive), so a pure ACK of it goes
/// ahead of its 2.05, with the same acknowledgement number; the 2.05, sent within the delayed-ACK
/// time of the GET, makes the connection interactive, and the next GETs' ACKs ride on their
/// responses.
#[test]
fn a_quick_ack_goes_before_the_servers_answer() {
    let s = Scenario { transport: netsim::TransportKind::Tcp, clients: 1, exchanges: 3, ..Scenario::thesis() };
    let server: Vec<_> =
        capture_of(s).iter().map(|(_, p)| ipv4_tcp(p)).filter(|&((sport, _), ..)| sport == 5683).collect();
    let mut ahead = Vec::new();
    for (i, (_, _, ackn, _, _, payload)) in server.iter().enumerate() {
        if payload.len() > 5 {
            // a 2.05 (the CSM is 5 bytes): is the segment before it a pure ACK of the same data?
            let (_, _, prev_ack, _, _, prev_payload) = &server[i - 1];
            ahead.push(prev_payload.is_empty() && prev_ack == ackn);
        }
    }
    assert_eq!(ahead, [true, false, false]);
}

/// `token_bytes`: every request carries a token that long, over UDP and over TCP, and its response
/// the same token (4 bytes: `coapcc load`'s requests; the UDP request 38 + 4 = 42 bytes, the
/// response 93 + 4 = 97; over TCP, RFC 8323's frames: the GET Len/TKL, code, token and its
/// 6-byte Uri-Path, 1 + 1 + 4 + 6 = 12 bytes; the 2.05's 61-byte body (marker and payload) needs
/// the extended length byte, 1 + 1 + 1 + 4 + 61 = 68).
#[test]
fn token_bytes_sets_every_requests_token() {
    for transport in [netsim::TransportKind::Udp, netsim::TransportKind::Tcp] {
        let s = Scenario { transport, clients: 1, exchanges: 3, token_bytes: 4, ..Scenario::thesis() };
        let mut seen = Vec::new();
        for (_, p) in &capture_of(s) {
            if transport == netsim::TransportKind::Udp {
                let coap = ipv4_udp(p).4;
                let m = Message::decode(&coap).unwrap();
                seen.push((m.code, m.token.len(), p.len()));
            } else {
                let payload = ipv4_tcp(p).5;
                let mut at = 0;
                while at < payload.len() {
                    let (f, len) = coap_wire::Frame::decode(&payload[at..], 1 << 16).unwrap();
                    if f.code == Code::GET || f.code == Code::CONTENT {
                        seen.push((f.code, f.token.len(), len));
                    }
                    at += len;
                }
            }
        }
        let (get, content) = if transport == netsim::TransportKind::Udp { (42, 97) } else { (12, 68) };
        assert_eq!(seen.len(), 6, "{transport:?}: {seen:?}");
        for (code, token, len) in seen {
            assert_eq!((token, len), (4, if code == Code::GET { get } else { content }), "{transport:?} {code:?}");
        }
    }
}

/// IEEE 802.15.4's FCS (802.15.4-2006 §7.2.1.9): the ITU-T CRC-16, x^16 + x^12 + x^5 + 1, from
/// 0, each byte least significant bit first; sent least significant byte first.
fn fcs(bytes: &[u8]) -> [u8; 2] {
    let mut crc: u16 = 0;
    for &b in bytes {
        for i in 0..8 {
            let bit = (b >> i) & 1;
            let top = (crc & 1) as u8;
            crc >>= 1;
            if top ^ bit == 1 {
                crc ^= 0x8408; // the polynomial, bits reversed
            }
        }
    }
    crc.to_le_bytes()
}

#[test]
fn a_mesh_capture_is_802_15_4_frames_on_the_air_and_changes_nothing() {
    // nitk-gst-cooja: Cooja motes' nullrdc (software ACKs), the mesh's prefix as the address context,
    // RPL's hop-by-hop option in every datagram; the server is mote 9
    let text = netsim::mesh::presets::text("nitk-gst-cooja").unwrap();
    let mut s = MeshScenario::from_toml(text).unwrap();
    s.duration_s = 120.0;
    let res = s.resolve().unwrap();
    let plain = netsim::mesh::run_rep(&s, &res, 0, None);
    let buf = Shared::default();
    let mut cap = Capture::new(Box::new(buf.clone()), netsim::mesh::addressing(&res)).unwrap();
    let captured = netsim::mesh::run_rep_captured(&s, &res, 0, None, &mut cap);
    let n = cap.finish().unwrap();
    assert_eq!((&plain.clients, plain.events), (&captured.clients, captured.events));
    let recs = records_of(&buf.0.lock().unwrap(), 195); // LINKTYPE_IEEE802_15_4_WITHFCS
    assert_eq!(recs.len() as u64, n);
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    let (mut requests, mut responses, mut control, mut acks) = (0u64, 0u64, 0u64, 0u64);
    for (_, f) in &recs {
        assert!(f.len() <= 127, "aMaxPHYPacketSize");
        let (body, sum) = f.split_at(f.len() - 2);
        assert_eq!(sum, fcs(body), "FCS");
        // a data frame with PAN-ID compression and 8-byte addresses to one mote (an ACK
        // requested), or to the broadcast address; PAN 0xABCD
        let unicast = match [f[0], f[1]] {
            [0x02, 0x00] => {
                assert_eq!(f.len(), 5, "an ACK: frame control, sequence number, FCS");
                acks += 1;
                continue;
            }
            [0x61, 0xCC] => true,
            [0x41, 0xC8] => false,
            fc => panic!("frame control {fc:02x?}"),
        };
        assert_eq!(&f[3..5], &[0xCD, 0xAB]);
        let payload = &body[if unicast { 21 } else { 15 }..];
        // IPHC dispatch 011, traffic class and flow label elided
        assert_eq!(payload[0] & 0xF8, 0x78);
        if payload[1] & 0x80 == 0 {
            control += 1; // link-local RPL and ND: no context
            continue;
        }
        // a datagram: addresses against context 0 (a CID byte of 0), the next header (0:
        // hop-by-hop options) inline
        assert_eq!((payload[2], payload[3]), (0, 0));
        let src_mac = |k: usize| f[if unicast { 13 } else { 7 } + k];
        // the message after the 8-byte HBH header and the 8-byte UDP header
        let rest_at = 4 + usize::from(payload[0] & 0x03 == 0); // the hop limit inline when forwarded
        let inline_addrs = [(payload[1] >> 4) & 0x03, payload[1] & 0x03]
            .iter()
            .map(|m| match m {
                3 => 0,
                1 => 8,
                _ => panic!("address mode {m}"),
            })
            .sum::<usize>();
        let hbh = &payload[rest_at + inline_addrs..];
        assert_eq!(&hbh[..4], &[17, 0, 0x63, 4], "RPL option, then UDP");
        assert_eq!(hbh[5], 0x1e, "RPL instance");
        let udp = &hbh[8..];
        let coap = &udp[8..];
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]) as usize, udp.len(), "UDP length");
        let m = Message::decode(coap).unwrap();
        let (sport, dport) = (u16::from_be_bytes([udp[0], udp[1]]), u16::from_be_bytes([udp[2], udp[3]]));
        if m.code == Code::GET {
            assert_eq!(dport, 5683);
            if payload[0] & 0x03 == 0x02 {
                // originated: hop limit 64 elided, the source from the sender's link address
                // 02:…:00:0n (written least significant byte first): client n at port 49152 + n − 1
                assert_eq!((payload[1] >> 4) & 0x03, 3);
                assert_eq!(sport, 49152 + src_mac(0) as u16 - 1);
                // the 15-byte request in 21 + 2 + CID + next header + HBH (8) + UDP (8) + 15
                // + FCS: 58 bytes, and the server's IID (8) unless it is the next hop: 66
                // (netmodel's frame.rs)
                assert_eq!(f.len(), 58 + inline_addrs);
                assert_eq!(inline_addrs == 0, f[5] == 9, "the server, mote 9, is the next hop");
                // the UDP checksum over the restored addresses fd00::n and fd00::9 (RFC 8200
                // §8.1's pseudo-header: addresses, upper-layer length, next header 17)
                let addr = |n: u8| [&[0xfd, 0][..], &[0; 13], &[n]].concat();
                let pseudo =
                    [addr(src_mac(0)), addr(9), (udp.len() as u32).to_be_bytes().to_vec(), vec![0, 0, 0, 17]].concat();
                assert_eq!(checksum(&[&pseudo, udp]), 0, "UDP checksum");
                requests += 1;
            }
        } else {
            assert_eq!((m.code, sport), (Code::CONTENT, 5683));
            responses += 1;
        }
    }
    let done: u64 = plain.clients.iter().map(|c| c.exchanges as u64).sum();
    assert!(
        requests >= done && responses >= done && done > 0,
        "{requests} requests, {responses} responses, {done} done"
    );
    assert!(control > 0, "RPL's control messages");
    // the Cooja motes' nullrdc acknowledges what it takes
    assert!(acks > 0, "{acks} ACKs");
}
