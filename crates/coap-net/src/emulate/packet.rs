//! The few fields of an IPv4 packet (and of the TCP segment in it) the emulator reads. Bytes
//! from the namespaces' stacks are still checked: a packet too short for what its headers
//! claim is not one of these (`None`).

use std::net::Ipv4Addr;

/// An IPv4 packet's addresses and size, and its TCP segment if it carries one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4 {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Total length (header included), bytes: what the network model carries.
    pub len: u16,
    /// The TCP segment, for protocol 6.
    pub tcp: Option<TcpSeg>,
    /// The UDP payload's length, for protocol 17.
    pub udp_payload: Option<u32>,
}

/// A TCP segment's ports, sequence space and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSeg {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number of its first byte (of the SYN or FIN, if it carries one).
    pub seq: u32,
    /// Payload bytes.
    pub payload: u32,
    /// SYN flag.
    pub syn: bool,
    /// FIN flag.
    pub fin: bool,
    /// RST flag.
    pub rst: bool,
}

impl TcpSeg {
    /// Sequence numbers it occupies (payload, plus one each for SYN and FIN).
    pub fn seq_len(&self) -> u32 {
        self.payload + self.syn as u32 + self.fin as u32
    }
}

/// Reads `b` as an IPv4 packet.
pub fn parse(b: &[u8]) -> Option<Ipv4> {
    let first = *b.first()?;
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 || b.len() < ihl {
        return None;
    }
    let len = u16::from_be_bytes([b[2], b[3]]);
    if usize::from(len) < ihl || usize::from(len) > b.len() {
        return None;
    }
    let addr = |i: usize| Ipv4Addr::new(b[i], b[i + 1], b[i + 2], b[i + 3]);
    let (src, dst) = (addr(12), addr(16));
    // a fragment other than the first has no TCP header
    let first_fragment = u16::from_be_bytes([b[6], b[7]]) & 0x1fff == 0;
    let body = &b[ihl..usize::from(len)];
    let tcp = if b[9] == 6 && first_fragment { tcp(body) } else { None };
    let udp_payload = (b[9] == 17 && first_fragment && body.len() >= 8).then(|| body.len() as u32 - 8);
    Some(Ipv4 { src, dst, len, tcp, udp_payload })
}

fn tcp(t: &[u8]) -> Option<TcpSeg> {
    if t.len() < 20 {
        return None;
    }
    let doff = usize::from(t[12] >> 4) * 4;
    if doff < 20 || doff > t.len() {
        return None;
    }
    let flags = t[13];
    Some(TcpSeg {
        sport: u16::from_be_bytes([t[0], t[1]]),
        dport: u16::from_be_bytes([t[2], t[3]]),
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        payload: (t.len() - doff) as u32,
        fin: flags & 0x01 != 0,
        syn: flags & 0x02 != 0,
        rst: flags & 0x04 != 0,
    })
}

#[cfg(test)]
pub(crate) fn build(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    tcp: Option<(u16, u16, u32, u8, usize)>,
    udp_payload: usize,
) -> Vec<u8> {
    // a test packet: IPv4 (20 B) + TCP (20 B, ports, seq, flags, payload) or UDP (8 B + payload)
    let body = match tcp {
        Some((sp, dp, seq, flags, n)) => {
            let mut t = vec![0u8; 20 + n];
            t[0..2].copy_from_slice(&sp.to_be_bytes());
            t[2..4].copy_from_slice(&dp.to_be_bytes());
            t[4..8].copy_from_slice(&seq.to_be_bytes());
            t[12] = 5 << 4;
            t[13] = flags;
            t
        }
        None => vec![0u8; 8 + udp_payload],
    };
    let mut p = vec![0u8; 20];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&((20 + body.len()) as u16).to_be_bytes());
    p[8] = 64;
    p[9] = if tcp.is_some() { 6 } else { 17 };
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    p.extend(body);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_and_short_packets_refused() {
        let (a, b) = (Ipv4Addr::new(10, 201, 0, 1), Ipv4Addr::new(10, 200, 0, 1));
        let p = build(a, b, Some((40000, 5683, 7, 0x02, 0)), 0);
        let ip = parse(&p).unwrap();
        assert_eq!((ip.src, ip.dst, ip.len), (a, b, 40));
        let t = ip.tcp.unwrap();
        assert_eq!((t.sport, t.dport, t.seq, t.payload, t.syn, t.fin, t.rst), (40000, 5683, 7, 0, true, false, false));
        assert_eq!(t.seq_len(), 1);
        let d = parse(&build(a, b, Some((1, 2, 100, 0x11, 70)), 0)).unwrap().tcp.unwrap();
        assert_eq!((d.payload, d.fin, d.seq_len()), (70, true, 71));
        assert_eq!(ip.udp_payload, None);
        let u = parse(&build(a, b, None, 60)).unwrap();
        assert_eq!((u.len, u.tcp, u.udp_payload), (88, None, Some(60)));
        // every truncation of a valid packet is refused or read within its bytes
        for n in 0..p.len() {
            assert_eq!(parse(&p[..n]), None, "{n} bytes");
        }
        assert_eq!(parse(&[0x60; 40]), None); // IPv6
    }
}
