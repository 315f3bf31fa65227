//! ContikiMAC radio duty cycling, as Contiki 3.0 ships it (`core/net/mac/contikimac/contikimac.c`,
//! `core/net/mac/phase.c`; A. Dunkels, "The ContikiMAC Radio Duty Cycling Protocol", SICS
//! technical report T2011:13), on the mesh's radios.
//!
//! Every constant is Contiki's, in rtimer ticks of 1/32768 s (a Sky mote) with a channel-check
//! rate of 8 Hz: the wake-up interval (CYCLE_TIME) 4096 ticks = 125 ms; a wake-up is 2 CCAs of
//! 4 ticks 20 ticks apart; a sender first makes 6 such CCAs; copies of the frame follow each
//! other 13 ticks apart (INTER_PACKET_INTERVAL); energy in that gap is read as an ACK after 21
//! ticks more; a wake-up that senses energy listens 409 ticks (12.48 ms); with the receiver's
//! phase known the strobe starts GUARD_TIME = 520 ticks before its wake-up and lasts at most
//! 546 ticks (1/60 s), otherwise at most STROBE_TIME = 4176 ticks.
//!
//! The model, step by step (the **choices** are ours: the sources leave them open or they
//! abstract from the radio chip):
//! * Each mote wakes at φ + k·cycle, its phase φ drawn uniformly at t = 0 from its own stream
//!   ([`crate::Stream::Phase`]). A wake-up senses energy iff a frame from a sender within
//!   carrier-sense range is on the air at one of its two CCA instants (t, t + 20 ticks).
//!   Sensing energy turns the radio on for the listen window; it receives the next frame that
//!   *starts* while it listens, and a reception under way when the window ends is finished
//!   (**choice**: the silence-period and fast-sleep rules are not modelled). A radio that is off
//!   neither receives nor is disturbed, and a radio that turns on in the middle of a frame
//!   neither receives that frame nor is disturbed by it (**choice**).
//! * A data frame for the listening mote is ACKed by the radio 12 symbols (192 µs) after its last
//!   symbol (a 5-byte MPDU, 352 µs) and the radio turns off after the ACK; a copy of a packet the
//!   mote already took is ACKed and dropped as a duplicate (**choice**: duplicates are always
//!   recognised; Contiki remembers the last few sequence numbers). A copy that finds the RX FIFO
//!   full is not ACKed (**choice**). Frames for other motes leave the listener listening.
//! * Unicast send (the whole of it occupies the CPU, §5.5): with the receiver's phase known, the
//!   time to GUARD_TIME before its next wake-up is waited — in a timer (the CPU free) when it is
//!   more than one clock tick of 1/128 s, as `phase_wait` does, else busy. Then: a reception under
//!   way or a frame waiting for the CPU → COLLISION; 6 CCAs 20 ticks apart, one busy →
//!   COLLISION; then copies of the frame, each followed by the 13-tick gap: energy in the gap (a
//!   reception, a frame heard, the channel busy) → wait 21 ticks and read: the receiver's ACK →
//!   OK, anything else → COLLISION; no energy → the next copy, until the strobe time is over →
//!   NOACK. The sender's radio takes only ACKs during its strobe (**choice**: a data frame
//!   heard in a gap is lost as a collision).
//! * Phase learning (`phase.c`): an ACKed strobe records the start of the ACKed copy as the
//!   receiver's phase; NOACK counts against it, and the 16th NOACK, or one 30 s after the first,
//!   forgets it. A collision leaves it alone.
//! * Radio-on time: every wake-up's two CCAs (122 µs each) + listening + a sender's CCAs and
//!   whole strobe (its radio stays on for the ACKs) + the ACKs a mote sends. A wake-up the mote
//!   skips because it is sending is counted all the same (at most 244 µs per strobe). Counted to
//!   the end of the run (a radio on then counts until the end).
//! * Broadcast (RPL's DIOs, [`super::rpl`]): the 6 CCAs, then copies each followed by the gap,
//!   nothing read in the gaps, until the strobe time is over; then OK. A listening receiver
//!   takes a copy and its radio goes off; a ContikiMAC receiver drops copies it took already.

use coap_time::Instant;
use rand_core::RngCore;

use super::frame::{airtime_ns, ACK_MPDU};
use super::rpl::BROADCAST;
use super::{traffic, Cause, Job, MacSpec, Mesh, MeshEvent, Packet, NONE};
use crate::medium::Schedule;

/// rtimer ticks per second on the Sky mote.
pub const RTIMER_HZ: u64 = 32_768;

/// `ticks` rtimer ticks in ns (rounded down).
pub const fn rt(ticks: u64) -> u64 {
    ticks * 1_000_000_000 / RTIMER_HZ
}

/// The 802.15.4 turnaround before the radio's automatic ACK: 12 symbols of 16 µs.
pub const ACK_TURNAROUND_NS: u64 = 12 * super::frame::SYMBOL_NS;
/// ContikiMAC's parameters (Contiki 3.0's values by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContikimacSpec {
    /// Wake-ups per second (NETSTACK_RDC_CHANNEL_CHECK_RATE; a power of two).
    pub channel_check_rate: u32,
    /// Phase optimisation (WITH_PHASE_OPTIMIZATION).
    pub phase_optimization: bool,
}

impl Default for ContikimacSpec {
    fn default() -> Self {
        ContikimacSpec { channel_check_rate: 8, phase_optimization: true }
    }
}

/// Contiki's timing constants, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// CYCLE_TIME: the wake-up interval.
    pub cycle: u64,
    /// CCA_CHECK_TIME: one CCA with the radio on.
    pub cca_check: u64,
    /// CCA_CHECK_TIME + CCA_SLEEP_TIME: from one CCA to the next.
    pub cca_spacing: u64,
    /// CCA_COUNT_MAX_TX: the sender's CCAs before a strobe.
    pub cca_count_tx: u32,
    /// INTER_PACKET_INTERVAL: the gap after each copy.
    pub inter_packet: u64,
    /// AFTER_ACK_DETECTECT_WAIT_TIME: from energy in the gap to reading the ACK.
    pub after_ack: u64,
    /// LISTEN_TIME_AFTER_PACKET_DETECTED.
    pub listen: u64,
    /// GUARD_TIME = 10·CHECK_TIME + CHECK_TIME_TX.
    pub guard: u64,
    /// STROBE_TIME = CYCLE_TIME + 2·CHECK_TIME.
    pub strobe: u64,
    /// MAX_PHASE_STROBE_TIME.
    pub max_phase_strobe: u64,
}

impl ContikimacSpec {
    /// The constants for this channel-check rate (the formulas of `contikimac.c`, in ticks).
    pub fn timing(&self) -> Timing {
        let cycle = RTIMER_HZ / self.channel_check_rate.max(1) as u64;
        let (cca_check, cca_sleep) = (RTIMER_HZ / 8192, RTIMER_HZ / 2000);
        let check_time = 2 * (cca_check + cca_sleep);
        let check_time_tx = 6 * (cca_check + cca_sleep);
        Timing {
            cycle: rt(cycle),
            cca_check: rt(cca_check),
            cca_spacing: rt(cca_check + cca_sleep),
            cca_count_tx: 6,
            inter_packet: rt(RTIMER_HZ / 2500),
            after_ack: rt(RTIMER_HZ / 1500),
            listen: rt(RTIMER_HZ / 80),
            guard: rt(10 * check_time + check_time_tx),
            strobe: rt(cycle + 2 * check_time),
            max_phase_strobe: rt(RTIMER_HZ / 60),
        }
    }
}

/// `phase.c`: NOACKs before a learned phase is forgotten.
pub const MAX_NOACKS: u32 = 16;
/// `phase.c`: a NOACK this long after the first of a run forgets the phase, ns.
pub const MAX_NOACKS_TIME_NS: u64 = 30_000_000_000;

/// The first instant in `[start, end)` at which a mote waking at `phase + k·cycle` makes one
/// of its two CCAs (at the wake-up and `spacing` later).
pub fn first_check_in(phase: u64, cycle: u64, spacing: u64, start: u64, end: u64) -> Option<u64> {
    let next = |offset: u64| {
        let base = phase + offset;
        if start <= base {
            base
        } else {
            base + (start - base).div_ceil(cycle) * cycle
        }
    };
    let t = next(0).min(next(spacing));
    (t < end).then_some(t)
}

/// `phase_wait`: how long to wait before strobing to a receiver whose phase was recorded at
/// `sync` (≤ `now`): until GUARD_TIME before its next wake-up at least GUARD_TIME away; in a
/// timer of whole clock ticks when that is more than one tick, else busy.
pub fn phase_wait(sync: u64, now: u64, t: &Timing) -> Wait {
    let behind = (now - sync) % t.cycle; // how far into the receiver's cycle we are
    let mut wait = (t.cycle - behind) % t.cycle;
    if wait < t.guard {
        wait += t.cycle;
    }
    let ticks = (wait - t.guard) / super::TICK_NS;
    if ticks > 1 {
        Wait::Defer(ticks * super::TICK_NS)
    } else {
        Wait::Busy(wait - t.guard)
    }
}

/// What `phase_wait` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Come back after this long (a ctimer; the CPU is free meanwhile).
    Defer(u64),
    /// Busy-wait this long, then send.
    Busy(u64),
}

/// A learned wake-up phase (`struct phase`).
#[derive(Debug, Clone, Copy)]
pub(super) struct PhaseEntry {
    nbr: u16,
    time: u64,
    noacks: u32,
    first_noack: u64,
}

/// What the RDC says of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TxResult {
    Ok,
    NoAck,
    Collision,
}

/// Where a ContikiMAC radio is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Radio {
    #[default]
    Off,
    /// Always on: a nullrdc mote, or a ContikiMAC one with its radio kept on, when idle.
    On,
    /// On after a wake-up sensed energy.
    Listen,
    /// Sending its automatic ACK, then off.
    Ack,
    /// Busy with a unicast send: CCAs, copies, gaps.
    Send,
}

/// One unicast send in progress.
#[derive(Debug, Clone, Copy)]
pub(super) struct Strobe {
    pub(super) packet: Packet,
    pub(super) nbr: u16,
    /// The receiver's phase was known (the strobe is short).
    known: bool,
    /// The receiver has taken this packet (now or in an earlier strobe).
    pub(super) passed: bool,
    /// Pre-strobe CCAs made.
    ccas: u32,
    /// When the copies began, and when the last one was started.
    t0: u64,
    txtime: u64,
    /// A frame completed at the sender during the gap / the receiver's ACK arrived.
    heard: bool,
    acked: bool,
}

/// A mote's ContikiMAC state.
#[derive(Debug, Default)]
pub(super) struct Duty {
    pub(super) phase: u64,
    pub(super) radio: Radio,
    /// Since when the radio is on (listening or sending its ACK).
    on_since: u64,
    listen_until: u64,
    listen_gen: u32,
    /// The wake-up last scheduled to sense energy (frames on the air together schedule it once).
    wake_at: u64,
    pub(super) strobe: Option<Strobe>,
    phases: Vec<PhaseEntry>,
    /// Radio-on time beyond the wake-ups' CCAs, ns.
    pub(super) extra_on_ns: u64,
    /// The radio never sleeps (nullrdc, or kept on): it returns to `On`, not `Off`.
    pub(super) always_on: bool,
}

impl Duty {
    pub(super) fn new(rng: &mut impl RngCore, cycle: u64) -> Self {
        Duty { phase: rng.next_u64() % cycle, wake_at: u64::MAX, ..Default::default() }
    }

    /// A radio that never sleeps, beside ContikiMAC motes: it has no wake-ups.
    pub(super) fn always_on() -> Self {
        Duty { radio: Radio::On, wake_at: u64::MAX, always_on: true, ..Default::default() }
    }

    /// Where the radio goes when it is done: off, or on if it never sleeps.
    fn idle(&self) -> Radio {
        if self.always_on {
            Radio::On
        } else {
            Radio::Off
        }
    }

    pub(super) fn known_phase(&self, nbr: u16) -> Option<u64> {
        self.phases.iter().find(|e| e.nbr == nbr).map(|e| e.time)
    }

    fn phase_update(&mut self, nbr: u16, time: u64, result: TxResult, now: u64) {
        let at = self.phases.iter().position(|e| e.nbr == nbr);
        match (at, result) {
            (Some(i), TxResult::Ok) => {
                self.phases[i].time = time;
                self.phases[i].noacks = 0;
            }
            (Some(i), TxResult::NoAck) => {
                let e = &mut self.phases[i];
                e.noacks += 1;
                if e.noacks == 1 {
                    e.first_noack = now;
                }
                if e.noacks >= MAX_NOACKS || now >= e.first_noack + MAX_NOACKS_TIME_NS {
                    self.phases.remove(i);
                }
            }
            (None, TxResult::Ok) => self.phases.push(PhaseEntry { nbr, time, noacks: 0, first_noack: 0 }),
            _ => {}
        }
    }

    /// The run ends at `end`: a radio still on counts until then.
    pub(super) fn close(&mut self, end: u64) {
        match self.radio {
            Radio::Listen | Radio::Ack => {
                self.extra_on_ns += end.saturating_sub(self.on_since);
                self.on_since = end;
            }
            Radio::Send => {
                if let Some(st) = self.strobe.as_mut().filter(|st| st.t0 > 0) {
                    self.extra_on_ns += end.saturating_sub(st.t0);
                    st.t0 = end;
                }
            }
            Radio::Off | Radio::On => {}
        }
    }

    /// Radio-on time until `end` ns: every wake-up's two CCAs and the rest (all of it for a
    /// radio that never sleeps).
    pub(super) fn radio_on_ns(&self, t: &Timing, end: u64) -> u64 {
        if self.always_on {
            return end;
        }
        let wakeups = if end >= self.phase { (end - self.phase) / t.cycle + 1 } else { 0 };
        wakeups * 2 * t.cca_check + self.extra_on_ns
    }
}

impl Mesh {
    fn timing(&self) -> Timing {
        self.cm_timing.expect("a ContikiMAC mesh")
    }

    /// Sensing motes whose wake-up falls within a frame of `s` on the air `[start, end)` sense
    /// it then.
    pub(super) fn cm_frame_sensed<S: Schedule<MeshEvent>>(&mut self, s: usize, start: u64, end: u64, sched: &mut S) {
        let t = self.timing();
        for i in 0..self.frames[s].sensed.len() {
            let r = self.frames[s].sensed[i] as usize;
            let d = &mut self.nodes[r].duty;
            if d.always_on {
                continue;
            }
            if let Some(at) = first_check_in(d.phase, t.cycle, t.cca_spacing, start, end) {
                if at != d.wake_at {
                    d.wake_at = at;
                    sched.wake(Instant::from_nanos(at), MeshEvent::Wake(r as u16));
                }
            }
        }
    }

    /// A wake-up sensed energy: listen, unless the radio is busy already.
    pub(super) fn cm_wake<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let t = self.timing();
        let d = &mut self.nodes[n].duty;
        if d.wake_at == now {
            d.wake_at = u64::MAX;
        }
        if d.radio != Radio::Off {
            return;
        }
        d.radio = Radio::Listen;
        d.on_since = now;
        d.listen_until = now + t.listen;
        d.listen_gen = d.listen_gen.wrapping_add(1);
        sched.wake(Instant::from_nanos(d.listen_until), MeshEvent::ListenEnd(n as u16, d.listen_gen));
    }

    fn radio_off(&mut self, now: u64, n: usize) {
        let d = &mut self.nodes[n].duty;
        if matches!(d.radio, Radio::Listen | Radio::Ack) {
            d.extra_on_ns += now - d.on_since;
        }
        d.radio = d.idle();
        d.listen_gen = d.listen_gen.wrapping_add(1);
    }

    /// The listen window is over: off, unless a frame is being received (then at its end).
    pub(super) fn cm_listen_end(&mut self, now: u64, n: usize, gen: u32) {
        let node = &self.nodes[n];
        if node.duty.radio == Radio::Listen && node.duty.listen_gen == gen && node.rx_from == NONE {
            self.radio_off(now, n);
        }
    }

    /// A frame ended at a listening mote that was not its addressee.
    pub(super) fn cm_heard_other(&mut self, now: u64, r: usize) {
        let d = &self.nodes[r].duty;
        if d.radio == Radio::Listen && now >= d.listen_until && self.nodes[r].rx_from == NONE {
            self.radio_off(now, r);
        }
    }

    /// A nullrdc frame (no ACK requested) arrived intact at `r` beside ContikiMAC motes: lost
    /// when `r` is strobing (in its gap it reads only ACKs); a listening mote takes it and its
    /// radio goes off, as `input_packet` does.
    pub(super) fn cm_nullrdc_frame_lost(&mut self, now: u64, r: usize) -> bool {
        match self.nodes[r].duty.radio {
            Radio::Send => {
                if let Some(st) = self.nodes[r].duty.strobe.as_mut() {
                    st.heard = true;
                }
                true
            }
            Radio::Listen => {
                self.radio_off(now, r);
                false
            }
            _ => false,
        }
    }

    /// A data copy from `s` arrived intact at its addressee `r`: take it (or drop a duplicate),
    /// then ACK. False when the RX FIFO is full (no ACK; the copy is lost).
    pub(super) fn cm_take<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, r: usize, sched: &mut S) -> bool {
        let passed = self.nodes[s].duty.strobe.is_some_and(|st| st.passed);
        let control = super::rpl::is_control(&self.frames[s].packet);
        if passed {
            // (a control packet's duplicate is not a data frame's)
            if !control {
                self.nodes[r].stats.duplicates += 1;
            }
        } else {
            let fifo = self.spec.cpu.rx_fifo_frames;
            if self.nodes[r].rx_pending >= fifo {
                return false;
            }
            let p = self.frames[s].packet;
            let rn = &mut self.nodes[r];
            rn.rx_pending += 1;
            rn.stats.frame_received(traffic(&p));
            if !control {
                self.nodes[s].stats.handed_over += 1;
            }
            if let Some(st) = self.nodes[s].duty.strobe.as_mut() {
                st.passed = true;
            }
            self.push_job(now, r, Job::Rx(p), sched);
        }
        // the radio's automatic ACK, then the radio goes off
        let rn = &mut self.nodes[r];
        rn.stats.acks_sent += 1;
        rn.transmitting = true;
        rn.duty.radio = Radio::Ack;
        rn.duty.listen_gen = rn.duty.listen_gen.wrapping_add(1);
        let packet = self.frames[s].packet;
        let f = &mut self.frames[r];
        f.packet = packet;
        f.dest = s as u16;
        f.airtime = airtime_ns(ACK_MPDU);
        f.mpdu = ACK_MPDU;
        f.ack = true;
        f.fate = super::Fate::Pending;
        sched.wake(Instant::from_nanos(now + ACK_TURNAROUND_NS), MeshEvent::FrameStart(r as u16));
        true
    }

    /// An ACK frame of `r` ended: its addressee (in a gap) has it if received intact.
    pub(super) fn cm_ack_end(&mut self, now: u64, r: usize, to: usize, arrived: bool) {
        if arrived {
            if let Some(st) = self.nodes[to].duty.strobe.as_mut() {
                if st.nbr as usize == r {
                    st.acked = true;
                }
            }
        }
        if arrived || self.nodes[to].duty.radio == Radio::Send {
            if let Some(st) = self.nodes[to].duty.strobe.as_mut() {
                st.heard = true;
            }
        }
        self.nodes[r].transmitting = false;
        self.radio_off(now, r);
    }

    /// A strobe's copy from `s` ended; `missed`: why it did not arrive. Its addressee takes it
    /// (and ACKs) or it is a lost copy (not a lost packet); the sender listens for the ACK in
    /// the gap.
    pub(super) fn cm_copy_end<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        s: usize,
        dest: usize,
        missed: Option<Cause>,
        sched: &mut S,
    ) {
        let lost = match missed {
            Some(cause) => Some(cause),
            // a sender in its gap takes only ACKs: the frame waits in its radio (energy)
            None if self.nodes[dest].duty.radio == Radio::Send => {
                if let Some(st) = self.nodes[dest].duty.strobe.as_mut() {
                    st.heard = true;
                }
                Some(Cause::Collision)
            }
            None if !self.cm_take(now, s, dest, sched) => Some(Cause::RxOverflow),
            None => None,
        };
        if let Some(cause) = lost {
            if !super::rpl::is_control(&self.frames[s].packet) {
                self.nodes[s].stats.copy_drops.add(cause);
            }
            self.cm_heard_other(now, dest);
        }
        self.cm_copy_over(now, s, sched);
    }

    /// A copy of `s` (unicast or broadcast) is off the air: the gap after it begins.
    pub(super) fn cm_copy_over<S: Schedule<MeshEvent>>(&mut self, now: u64, s: usize, sched: &mut S) {
        self.nodes[s].transmitting = false;
        sched.wake(Instant::from_nanos(now + self.timing().inter_packet), MeshEvent::Gap(s as u16));
    }

    /// The CPU takes a unicast send. False when it returned at once (deferred or COLLISION).
    pub(super) fn cm_send<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        p: Packet,
        nh: u16,
        sched: &mut S,
    ) -> bool {
        let t = self.timing();
        let passed = self.nodes[n].csma.passed(nh);
        let node = &mut self.nodes[n];
        let known = if self.spec.contikimac.phase_optimization { node.duty.known_phase(nh) } else { None };
        node.duty.strobe = Some(Strobe {
            packet: p,
            nbr: nh,
            known: known.is_some(),
            passed,
            ccas: 0,
            t0: 0,
            txtime: 0,
            heard: false,
            acked: false,
        });
        match known.map(|sync| phase_wait(sync, now, &t)) {
            Some(Wait::Defer(d)) => {
                node.duty.strobe = None;
                sched.wake(Instant::from_nanos(now + d), MeshEvent::Deferred(n as u16, nh, p));
                false
            }
            Some(Wait::Busy(d)) if d > 0 => {
                sched.wake(Instant::from_nanos(now + d), MeshEvent::SendNow(n as u16));
                true
            }
            _ => self.cm_send_now(now, n, sched),
        }
    }

    /// After the phase wait: a reception under way → COLLISION; else the CCAs begin.
    /// False when the send is over (COLLISION, its outcome handled).
    pub(super) fn cm_send_now<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) -> bool {
        let node = &mut self.nodes[n];
        let busy = node.rx_from != NONE || node.rx_pending > 0 || node.transmitting;
        if busy {
            self.cm_outcome(now, n, TxResult::Collision, sched);
            return false;
        }
        if node.duty.radio == Radio::Listen {
            self.radio_off(now, n);
        }
        self.nodes[n].duty.radio = Radio::Send;
        self.cm_tx_cca(now, n, sched)
    }

    /// One of the sender's CCAs; after the last, the first copy. False when COLLISION ended it.
    pub(super) fn cm_tx_cca<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) -> bool {
        let t = self.timing();
        let node = &mut self.nodes[n];
        let st = node.duty.strobe.as_mut().expect("a send in progress");
        if st.ccas == t.cca_count_tx {
            st.t0 = now;
            self.cm_copy(now, n, sched);
            return true;
        }
        node.duty.extra_on_ns += t.cca_check;
        if node.cca_busy > 0 {
            self.cm_outcome(now, n, TxResult::Collision, sched);
            return false;
        }
        st.ccas += 1;
        sched.wake(Instant::from_nanos(now + t.cca_spacing), MeshEvent::TxCca(n as u16));
        true
    }

    /// The next copy of the frame goes out.
    fn cm_copy<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let st = self.nodes[n].duty.strobe.as_mut().expect("a send in progress");
        st.txtime = now;
        st.heard = false;
        st.acked = false;
        let (p, nh) = (st.packet, st.nbr);
        self.transmit(now, n, p, nh, sched);
    }

    /// The gap after a copy is over: energy → read the ACK later; none → the next copy or NOACK.
    pub(super) fn cm_gap<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let t = self.timing();
        let node = &self.nodes[n];
        let st = node.duty.strobe.expect("a send in progress");
        // a broadcast's copies go on for the whole strobe time, nothing read in the gaps
        let broadcast = st.nbr == BROADCAST;
        if !broadcast && (st.heard || node.rx_from != NONE || node.cca_busy > 0) {
            sched.wake(Instant::from_nanos(now + t.after_ack), MeshEvent::AckRead(n as u16));
            return;
        }
        let over = now >= st.t0 + t.strobe || (st.known && now >= st.t0 + t.max_phase_strobe);
        if over {
            let result = if broadcast { TxResult::Ok } else { TxResult::NoAck };
            self.cm_outcome(now, n, result, sched);
            self.run_next(now, n, sched);
        } else {
            self.cm_copy(now, n, sched);
        }
    }

    /// The ACK is read: ours → OK, anything else → COLLISION.
    pub(super) fn cm_ack_read<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let acked = self.nodes[n].duty.strobe.is_some_and(|st| st.acked);
        let result = if acked { TxResult::Ok } else { TxResult::Collision };
        self.cm_outcome(now, n, result, sched);
        self.run_next(now, n, sched);
    }

    /// The send is over: learn the phase, account the radio, and tell the MAC.
    fn cm_outcome<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, result: TxResult, sched: &mut S) {
        let node = &mut self.nodes[n];
        let st = node.duty.strobe.take().expect("a send in progress");
        if node.duty.radio == Radio::Send {
            if st.t0 > 0 {
                node.duty.extra_on_ns += now - st.t0;
            }
            node.duty.radio = node.duty.idle();
        }
        let sent = result != TxResult::Collision && st.nbr != BROADCAST;
        if sent {
            node.duty.phase_update(st.nbr, st.txtime, result, now);
        }
        let mac = node.mac;
        if sent {
            self.rpl_link_sent(now, n, st.nbr);
        }
        // link-stats hears of every outcome but a busy channel (COLLISION)
        match (mac, result) {
            (MacSpec::Nullmac, TxResult::Ok) => self.rpl_link_result(now, n, st.nbr, true, 1, sched),
            (MacSpec::Nullmac, r) => {
                if r == TxResult::NoAck {
                    self.rpl_link_result(now, n, st.nbr, false, 1, sched);
                }
                let cause = if r == TxResult::NoAck { Cause::NoAck } else { Cause::CcaBusy };
                self.lose(n, cause, st.packet, st.passed, sched);
            }
            (MacSpec::Csma { .. }, TxResult::Ok) => self.csma_acked(now, n, st.nbr, sched),
            (MacSpec::Csma { .. }, r) => {
                let csma = &mut self.nodes[n].csma;
                csma.set_head_passed(st.nbr, st.passed);
                if r == TxResult::NoAck {
                    csma.count_noack(st.nbr);
                    self.csma_after_failure(now, n, st.nbr, false, sched);
                } else {
                    self.csma_after_failure(now, n, st.nbr, true, sched);
                }
            }
        }
    }

    /// A packet the MAC gives up on: a drop, unless the next hop took it already (its ACK was
    /// lost), which is counted apart.
    pub(super) fn lose<S: Schedule<MeshEvent>>(
        &mut self,
        n: usize,
        cause: Cause,
        p: Packet,
        passed: bool,
        sched: &mut S,
    ) {
        if passed {
            if !super::rpl::is_control(&p) {
                self.nodes[n].stats.given_up_after_handover += 1;
            }
        } else {
            self.drop_packet(n, cause, p, sched);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contikis_constants_at_8_hz() {
        let t = ContikimacSpec::default().timing();
        assert_eq!(t.cycle, 125_000_000);
        // 4 ticks; 20 ticks; 13; 21; 409; 520; 4176; 546 (ns = ticks · 10⁹ / 32768, rounded down)
        assert_eq!(t.cca_check, 122_070);
        assert_eq!(t.cca_spacing, 610_351);
        assert_eq!(t.inter_packet, 396_728);
        assert_eq!(t.after_ack, 640_869);
        assert_eq!(t.listen, 12_481_689);
        assert_eq!(t.guard, 15_869_140);
        assert_eq!(t.strobe, 127_441_406);
        assert_eq!(t.max_phase_strobe, 16_662_597);
    }

    #[test]
    fn a_wakeup_finds_a_frame_on_the_air_at_either_cca() {
        let (cycle, sp) = (125_000_000, 610_351);
        let ms = 1_000_000;
        // phase 10 ms: CCAs at 10, 10.61, 135, 135.61 ms …
        assert_eq!(first_check_in(10 * ms, cycle, sp, 130 * ms, 132 * ms), None);
        assert_eq!(first_check_in(10 * ms, cycle, sp, 134 * ms, 136 * ms), Some(135 * ms));
        assert_eq!(first_check_in(10 * ms, cycle, sp, 135 * ms + 1, 137 * ms), Some(135 * ms + sp));
        assert_eq!(first_check_in(10 * ms, cycle, sp, 0, 5 * ms), None);
        assert_eq!(first_check_in(10 * ms, cycle, sp, 0, 10 * ms + 1), Some(10 * ms));
        // the frame ends just as the CCA happens: not on the air any more
        assert_eq!(first_check_in(10 * ms, cycle, sp, 9 * ms, 10 * ms), None);
    }

    #[test]
    fn phase_wait_waits_to_guard_time_before_the_next_wakeup() {
        let t = ContikimacSpec::default().timing();
        let ms = 1_000_000;
        // phase recorded at 3 ms; at 50 ms the next wake-up is 128 ms, 78 ms away ≥ guard: wait
        // 78 − 15.869 = 62.13 ms, 7 whole ticks of 7.8125 ms (> 1) in a timer = 54.6875 ms
        assert_eq!(phase_wait(3 * ms, 50 * ms, &t), Wait::Defer(7 * 7_812_500));
        // at 110 ms the next is 128 ms, 18 ms away: 2.13 ms busy
        assert_eq!(phase_wait(3 * ms, 110 * ms, &t), Wait::Busy(18 * ms - t.guard));
        // at 120 ms it is 8 ms away, less than the guard: the one after (253 ms), 133 ms away
        assert_eq!(phase_wait(3 * ms, 120 * ms, &t), Wait::Defer(14 * 7_812_500));
    }

    #[test]
    fn a_phase_is_forgotten_after_16_noacks_or_30_s() {
        let mut d = Duty::default();
        d.phase_update(4, 7, TxResult::NoAck, 0);
        assert_eq!(d.known_phase(4), None, "a NOACK learns nothing");
        d.phase_update(4, 7, TxResult::Ok, 0);
        assert_eq!(d.known_phase(4), Some(7));
        for i in 0..15 {
            d.phase_update(4, 9, TxResult::NoAck, i);
        }
        assert_eq!(d.known_phase(4), Some(7));
        d.phase_update(4, 9, TxResult::NoAck, 20);
        assert_eq!(d.known_phase(4), None);
        d.phase_update(4, 8, TxResult::Ok, 0);
        d.phase_update(4, 9, TxResult::NoAck, 1_000);
        d.phase_update(4, 9, TxResult::NoAck, 1_000 + MAX_NOACKS_TIME_NS - 1);
        assert_eq!(d.known_phase(4), Some(8));
        d.phase_update(4, 9, TxResult::NoAck, 1_000 + MAX_NOACKS_TIME_NS);
        assert_eq!(d.known_phase(4), None);
    }
}
