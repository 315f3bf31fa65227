//! The radio channel: Cooja's unit-disk medium (UDGM, "distance loss") or its multi-path ray
//! medium ([`super::mrm`]): who a frame reaches, interferes and is sensed by; the transmission
//! and reception draws; a frame's start and end, and MSPSim's CC2420 RX FIFO holding a partial
//! frame. The RDCs ([`super::contikimac`], [`super::nullrdc`]) decide what an ended frame means.

use coap_time::Instant;
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;

use super::air;
use super::contikimac;
use super::frame::{self, HopPlace};
use super::mrm;
use super::report::Cause;
use super::routing::NONE;
use super::rpl::{is_control, BROADCAST};
use super::{traffic, Mesh, MeshEvent, RadioSpec, RANGE_EPSILON_M, RX_CALIBRATE_NS, RX_FIFO_BYTES, RX_WAIT_NS};
use crate::medium::{AirFrame, Packet, Schedule};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Pending,
    Lost(Cause),
}

#[derive(Debug)]
pub(super) struct Frame {
    pub(super) packet: Packet,
    /// An ACK (ContikiMAC), not a data frame.
    pub(super) ack: bool,
    pub(super) dest: u16,
    pub(super) airtime: u64,
    /// Its MPDU, bytes.
    pub(super) mpdu: u32,
    /// When its first symbol went on the air, ns.
    pub(super) start_ns: u64,
    pub(super) fate: Fate,
    pub(super) receivers: Vec<u16>,
    pub(super) interfered: Vec<u16>,
    /// Who sensed it (kept: links change under mobility while a frame is on the air).
    pub(super) sensed: Vec<u16>,
}

impl Frame {
    /// It passed its transmission draw: it is on the air for everybody in range.
    pub(super) fn on_air(&self) -> bool {
        self.fate != Fate::Lost(Cause::TxFail)
    }
}

/// A receiver a sender's frames may reach.
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    /// The probability that it takes a frame (UDGM: within R; MRM: by the SNR).
    pub(super) p: f64,
    pub(super) to: u16,
    /// MRM: the frame's mean signal there, dBm.
    pub(super) signal_dbm: f32,
}

/// Per-node lists in one array (compressed sparse rows).
#[derive(Debug, Default)]
pub(super) struct Csr<T> {
    pub(super) start: Vec<u32>,
    pub(super) items: Vec<T>,
}

impl<T: Copy> Csr<T> {
    pub(super) fn build(n: usize, mut f: impl FnMut(usize, &mut Vec<T>)) -> Self {
        let mut c = Csr { start: vec![0], items: Vec::new() };
        for i in 0..n {
            f(i, &mut c.items);
            c.start.push(c.items.len() as u32);
        }
        c
    }
    pub(super) fn of(&self, i: usize) -> &[T] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Links, interference and carrier sense between `n` motes `d` ([`distances`]) apart.
pub(super) fn geometry(r: &RadioSpec, n: usize, d: &[f64]) -> (Csr<Link>, Csr<u16>, Csr<u16>) {
    let reach = r.tx_range_m + RANGE_EPSILON_M;
    let interfere = r.interference_range_m.max(r.tx_range_m) + RANGE_EPSILON_M;
    let dist = |a: usize, b: usize| d[a * n + b];
    let links = Csr::build(n, |s, v| {
        for q in (0..n).filter(|&q| q != s) {
            let d = dist(s, q);
            match &r.mrm {
                // MRM: every receiver the SNR may reach, with the frame's signal there
                Some(m) => {
                    let p = m.reception(d);
                    if p >= mrm::P_MIN {
                        v.push(Link { p, to: q as u16, signal_dbm: m.signal_dbm(d) as f32 });
                    }
                }
                None if d <= reach => {
                    let p = 1.0 - (d * d) / (r.tx_range_m * r.tx_range_m) * (1.0 - r.success_ratio_rx);
                    v.push(Link { p: p.clamp(0.0, 1.0), to: q as u16, signal_dbm: 0.0 });
                }
                None => {}
            }
        }
    });
    // under MRM a frame disturbs only the receivers it reaches (its links)
    let interferes = Csr::build(n, |s, v| {
        if r.mrm.is_none() {
            v.extend((0..n).filter(|&q| q != s && dist(s, q) > reach && dist(s, q) <= interfere).map(|q| q as u16))
        }
    });
    let cs = r.cca_range_m + RANGE_EPSILON_M;
    let senses = Csr::build(n, |s, v| v.extend((0..n).filter(|&q| q != s && dist(s, q) <= cs).map(|q| q as u16)));
    (links, interferes, senses)
}

pub(super) fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Mesh {
    /// A data frame goes on the air after the turnaround.
    pub(super) fn transmit<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, p: Packet, nh: u16, sched: &mut S) {
        if self.nodes[n].rx_from != NONE {
            // half duplex: the reception in progress is lost (a ContikiMAC sender's CCAs before a
            // strobe: modelled on nullrdc motes only); MSPSim's RX FIFO keeps what the radio
            // synchronised on
            let node = &mut self.nodes[n];
            node.rx_ok = false;
            let synced = std::mem::replace(&mut node.rx_sync, false);
            if self.spec.partial_frame_stall && synced && !node.cm {
                self.keep_partial_frame(now, n);
            }
        }
        let node = &mut self.nodes[n];
        node.transmitting = true;
        let mpdu = if is_control(&p) {
            p.size
        } else {
            let hop = HopPlace::of(&p, n, nh as usize, self.spec.nodes.len());
            self.spec.compression.frames(hop, p.size).mpdu(0)
        };
        let airtime = self.spec.airtime_ns(mpdu);
        node.stats.frame_sent(traffic(&p));
        node.stats.tx_busy_ns += airtime;
        let f = &mut self.frames[n];
        f.packet = p;
        f.ack = false;
        f.dest = nh;
        f.airtime = airtime;
        f.mpdu = mpdu;
        f.fate = Fate::Pending;
        let turnaround_ns = self.spec.radio.tx_turnaround_us as u64 * 1000;
        sched.wake(Instant::from_nanos(now + turnaround_ns), MeshEvent::FrameStart(n as u16));
    }

    pub(super) fn frame_start<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, sched: &mut S) {
        let p_tx = self.spec.radio.success_ratio_tx;
        let visible = p_tx >= 1.0 || unit(&mut self.nodes[s].tx_rng) <= p_tx;
        let f = &mut self.frames[s];
        f.start_ns = now;
        if !visible {
            f.fate = Fate::Lost(Cause::TxFail);
        } else {
            for &r in self.senses.of(s) {
                self.nodes[r as usize].cca_busy += 1;
                f.sensed.push(r);
            }
            let dest = f.dest;
            let duty = self.cm_timing.is_some();
            let capture = self.spec.radio.mrm.map(|m| (m.capture, m.capture_threshold_db as f32));
            for &Link { p, to: r, signal_dbm } in self.links.of(s) {
                let rn = &mut self.nodes[r as usize];
                if duty && rn.duty.radio == contikimac::Radio::Off {
                    // ContikiMAC: a radio that is off hears nothing and is not disturbed
                    if r == dest {
                        f.fate = Fate::Lost(Cause::Asleep);
                    }
                    continue;
                }
                let lost = match capture {
                    // UDGM: a failed draw interferes, and so does any frame at a busy radio
                    // (which draws nothing)
                    None => {
                        if rn.transmitting || rn.interfered > 0 {
                            Some(Cause::Collision)
                        } else if rn.rx_from != NONE {
                            rn.rx_ok = false;
                            Some(Cause::Collision)
                        } else if p < 1.0 && unit(&mut rn.rng) > p {
                            Some(Cause::RxFail)
                        } else {
                            None
                        }
                    }
                    // MRM with the capture effect: a failed draw disturbs nobody; a frame not
                    // 3 dB weaker than the one a radio takes takes the radio over
                    Some((true, threshold)) => {
                        // every receiver draws: the frame disturbs only where it may be taken
                        if !(p >= 1.0 || unit(&mut rn.rng) <= p) {
                            if r == dest {
                                f.fate = Fate::Lost(Cause::RxFail);
                            }
                            continue;
                        }
                        if rn.transmitting || rn.interfered > 0 {
                            Some(Cause::Collision)
                        } else if rn.rx_from != NONE && signal_dbm < rn.rx_signal_dbm - threshold {
                            if r == dest {
                                f.fate = Fate::Lost(Cause::Collision);
                            }
                            continue;
                        } else {
                            // a frame under way is dropped there (frame_end finds its receiver gone)
                            None
                        }
                    }
                    // MRM without it: as UDGM, but every receiver draws (MRM.java), and the
                    // frame interferes wherever it reaches, whatever the draw: it spoils a
                    // reception under way
                    Some((false, _)) => {
                        let drawn = p >= 1.0 || unit(&mut rn.rng) <= p;
                        let busy = rn.transmitting || rn.interfered > 0 || rn.rx_from != NONE;
                        if rn.rx_from != NONE {
                            rn.rx_ok = false;
                        }
                        match (drawn, busy) {
                            (false, _) => Some(Cause::RxFail),
                            (true, true) => Some(Cause::Collision),
                            (true, false) => None,
                        }
                    }
                };
                match lost {
                    Some(cause) => {
                        rn.interfered += 1;
                        f.interfered.push(r);
                        if r == dest {
                            f.fate = Fate::Lost(cause);
                        }
                    }
                    None => {
                        // MSPSim's CC2420 not yet searching again: it never synchronises
                        let synced = !(self.spec.rx_turnaround && now < rn.rx_ready_ns);
                        if !synced && r == dest {
                            f.fate = Fate::Lost(Cause::RxTurnaround);
                        }
                        rn.rx_from = s as u16;
                        rn.rx_ok = synced;
                        rn.rx_sync = synced;
                        rn.rx_signal_dbm = signal_dbm;
                        f.receivers.push(r);
                    }
                }
            }
            for &r in self.interferes.of(s) {
                let rn = &mut self.nodes[r as usize];
                if duty && rn.duty.radio == contikimac::Radio::Off {
                    continue;
                }
                rn.interfered += 1;
                if rn.rx_from != NONE {
                    rn.rx_ok = false;
                }
                f.interfered.push(r);
            }
            if duty {
                let end = now + f.airtime;
                self.cm_frame_sensed(s, now, end, sched);
            }
        }
        let f = &self.frames[s];
        let (receiver, ack, mpdu, packet) = (air::receiver(f.dest), f.ack, f.mpdu, f.packet);
        sched.on_air(&AirFrame { at: Instant::from_nanos(now), sender: s as u16, receiver, ack, mpdu, packet });
        sched.wake(Instant::from_nanos(now + f.airtime), MeshEvent::FrameEnd(s as u16));
    }

    pub(super) fn frame_end<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, sched: &mut S) {
        let f = &mut self.frames[s];
        let (p, dest, ack) = (f.packet, f.dest, f.ack);
        let mut fate = f.fate;
        let mut arrived = false;
        if f.on_air() {
            for &r in &f.sensed {
                self.nodes[r as usize].cca_busy -= 1;
            }
            for &r in &f.interfered {
                self.nodes[r as usize].interfered -= 1;
            }
            let turnaround = self.spec.rx_turnaround;
            for &r in &f.receivers {
                let rn = &mut self.nodes[r as usize];
                if rn.rx_from as usize != s {
                    // MRM's capture effect: a later frame took the radio over
                    if r == dest {
                        fate = Fate::Lost(Cause::Collision);
                    }
                    continue;
                }
                rn.rx_from = NONE;
                if turnaround && rn.rx_sync {
                    // it synchronised at or after rx_ready_ns: RX_WAIT from the frame's end
                    rn.rx_ready_ns = now + RX_WAIT_NS;
                }
                if r == dest {
                    if rn.rx_ok {
                        arrived = true;
                    } else if fate == Fate::Pending {
                        fate = Fate::Lost(Cause::Collision);
                    }
                } else if dest == BROADCAST && rn.rx_ok {
                    self.heard.push(r);
                }
                // frames for other motes are discarded by the radio's address filter
            }
        }
        f.interfered.clear();
        f.sensed.clear();
        if self.spec.rx_turnaround {
            // its own frame (or ACK) is over: the radio calibrates before it receives again
            self.nodes[s].rx_ready_ns = now + RX_CALIBRATE_NS;
        }
        if ack && self.spec.cooja_mote.is_some() {
            self.frames[s].receivers.clear();
            return self.soft_ack_end(now, s, dest as usize, arrived, sched);
        }
        // why a frame that did not arrive was lost
        let missed = (!arrived).then_some(match fate {
            Fate::Lost(cause) => cause,
            Fate::Pending => Cause::OutOfRange,
        });
        if self.cm_timing.is_some() {
            // listeners that heard a frame for somebody else may close their window now
            for i in 0..self.frames[s].receivers.len() {
                let r = self.frames[s].receivers[i] as usize;
                if r != dest as usize {
                    self.cm_heard_other(now, r);
                }
            }
            if ack {
                self.frames[s].receivers.clear();
                return self.cm_ack_end(now, s, dest as usize, arrived);
            }
        }
        self.frames[s].receivers.clear();
        if dest == BROADCAST {
            self.broadcast_end(now, s, p, sched);
            if self.nodes[s].cm {
                // a train's copy: the next one after the gap
                return self.cm_copy_over(now, s, sched);
            }
        } else if self.nodes[s].cm {
            return self.cm_copy_end(now, s, dest as usize, missed, sched);
        } else {
            let taken = self.unicast_end(now, s, dest as usize, p, arrived, missed, sched);
            if let Some(c) = self.spec.cooja_mote {
                // nullrdc ACKs what it took at the mote's next run; the sender waits for it
                if taken {
                    sched.wake(Instant::from_nanos(now + c.ack_delay_ns), MeshEvent::SoftAck(dest, s as u16));
                }
                self.nodes[s].transmitting = false;
                self.nodes[s].ack_wait = Some((dest, false));
                sched.wake(Instant::from_nanos(now + c.ack_wait_ns), MeshEvent::AckWaitEnd(s as u16));
                return;
            }
        }
        self.nodes[s].transmitting = false;
        if self.is_csma(s) {
            // with nullrdc every transmission reports OK: the packet is freed
            self.csma_free_head(now, s, dest, sched);
        }
        self.run_next(now, s, sched);
    }

    /// MSPSim's CC2420: `n` starts to transmit while it receives: the bytes received so far
    /// (after the preamble and SFD: the length byte and the MPDU's first bytes) stay in its RX
    /// FIFO; past 128 bytes the FIFO overflows and the driver flushes it.
    pub(super) fn keep_partial_frame(&mut self, now: u64, n: usize) {
        let f = &self.frames[self.nodes[n].rx_from as usize];
        let on_air = (now.saturating_sub(f.start_ns) / frame::BYTE_NS) as u32;
        // preamble (4) and SFD (1) are not stored; the length byte and the MPDU are
        let mut kept = on_air.saturating_sub(5).min(f.mpdu + 1);
        // a frame for another mote is rejected (its bytes taken back) once its destination
        // address is in: the length byte, FCF, sequence number, PAN id, 8-byte address
        if f.ack || (f.dest != BROADCAST && f.dest as usize != n && kept > 13) {
            kept = 0;
        }
        let node = &mut self.nodes[n];
        node.fifo_stall = match node.fifo_stall + kept {
            b if b > RX_FIFO_BYTES => 0,
            b => b,
        };
    }

    /// MSPSim's CC2420: whether a frame of `mpdu` bytes that `r`'s radio takes is lost behind a
    /// partial frame (it is stored but never signalled; one that overflows the FIFO is lost and
    /// the driver flushes the FIFO).
    pub(super) fn stalled(&mut self, r: usize, mpdu: u32) -> bool {
        let node = &mut self.nodes[r];
        if node.fifo_stall == 0 {
            return false;
        }
        node.fifo_stall += mpdu + 1;
        if node.fifo_stall > RX_FIFO_BYTES {
            node.fifo_stall = 0;
        }
        true
    }
}
