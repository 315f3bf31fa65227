//! IPv6 neighbour discovery as Contiki's uIP runs it, on a link-local star
//! ([`super::MeshSpec::nd`]).
//!
//! Source: Contiki 3.0 as the NITK CoCoA++ tree (SamyakJ2512/Design-and-Implementation-of-Adaptive-CoCoA)
//! builds its Z1 binaries: `core/net/nbr-table.c`, `core/net/ipv6/uip-ds6-nbr.c`, `uip-nd6.c`,
//! `uip-ds6.c`, `core/net/ip/tcpip.c`, `platform/z1/contiki-conf.h`. The evidence that it decides
//! a star's results: Cooja running those binaries (validation/cooja, runs `S-star32-…`), whose
//! server, read from its memory every 500 ms, holds 14 clients and one unresolved entry in its
//! 15-entry table and answers only those 14; the other clients' requests reach it and are dropped.
//!
//! What the model does, each rule as the code has it:
//! * **The neighbour table** holds `cache` entries (`NBR_TABLE_CONF_MAX_NEIGHBORS`, 15 on the Z1;
//!   the binary's `neighbor_addr_mem` has 15 slots), in the order they were allocated. A new entry
//!   when it is full evicts the first entry (`nbr_table_allocate`: not locked, used by the fewest
//!   tables, the oldest; on a star every entry is used by this table alone, so the oldest).
//!   An entry is keyed by its link-layer address; an entry made to resolve an address has none
//!   (`linkaddr_null`), and there is only one such key: a second unresolved destination takes
//!   the same entry over.
//! * **Sending** to a destination (`tcpip_ipv6_output`): with no entry, an unresolved one is made
//!   (INCOMPLETE, its NS count 1, its NS timer `retrans_ms`: 10 s on the Z1, whose
//!   `contiki-conf.h` sets `UIP_CONF_ND6_RETRANS_TIMER` to 10000, as the server's RAM shows
//!   in Cooja) and the packet is dropped
//!   (`UIP_CONF_IPV6_QUEUE_PKT` is 0); the NS written into the buffer is then thrown away when
//!   the send ran inside input processing (a server's response: `uip_process` drops the buffer
//!   after the application's call) and goes out at the next periodic run otherwise (a client's
//!   request from its timer: the periodic run's `tcpip_ipv6_output` sends what the buffer holds),
//!   unless a packet received before overwrites the buffer. INCOMPLETE: dropped. STALE: DELAY for
//!   5 s, sent. Otherwise sent.
//! * **The periodic run** (`uip_ds6_periodic`, every `CLOCK_SECOND / 10` ticks: 93.75 ms on a
//!   Z1) visits the entries in order: REACHABLE past its time becomes STALE; INCOMPLETE with
//!   3 NSs sent is removed, else when its NS timer expired and the buffer is empty sends a
//!   multicast NS; DELAY past its 5 s becomes PROBE; PROBE with 3 NSs is removed, else when its
//!   timer expired and the buffer is empty sends a unicast NS. The buffer takes one NS per run.
//! * **An NS for another mote** (a multicast NS goes to its target's solicited-node address) is
//!   dropped by IP input before ND sees it: these builds are routers (`UIP_CONF_ROUTER` 1 in the
//!   Z1's `contiki-conf.h`), and `uip_process` drops a packet for neither an address of the mote
//!   nor a multicast group it joined ("not for me and link local or multicast", `uip6.c`); its
//!   frame still overwrote uIP's buffer (6LoWPAN decompresses into it).
//! * **An NS received** (always with the sender's link-layer address) makes or updates the
//!   sender's entry before its target is looked at (`ns_input`): none, a new STALE entry (which
//!   may evict); another link-layer address (the unresolved entry), that address and STALE;
//!   INCOMPLETE otherwise, STALE. It is answered by a solicited NA.
//! * **An NA received** for an entry (`na_input`, solicited and override as Contiki sends them)
//!   sets its link-layer address and makes it REACHABLE for the reachable time.
//! * **Timers** are `stimer`s of whole seconds of the mote's clock, which starts at its boot. A
//!   mote boots at a uniform draw in `boot_spread_ns` (scenarios: the run's first second,
//!   **choice**: Cooja starts each mote after a random delay of up to `motedelay_us`, 1 s in the
//!   runs this was checked on; motes booted at one instant would send every NS in the same tick,
//!   where Cooja's spread them). Its boot sequence takes `tcpip_start_ns` before tcpip's periodic
//!   timer is armed (the runs fall on it plus multiples of the period) and `app_start_ns` before
//!   the application starts ([`super::Mesh::app_start_ns`]): on the star binaries 102 and 103
//!   ticks of the Z1's clock, as Cooja shows them (validation/cooja/traces/, the motes' `count`
//!   read from RAM: 100 ticks at the boot banner's last line, periodic NSs at ticks ≡ 6 mod 12,
//!   a client's first 10-s timer at tick 1,383 and its NS at 1,386). So a client's NS leaves 3
//!   ticks after its request, and a lost one is sent again at the first periodic run of the
//!   clock's 20th second, 9.2 s after the request. The reachable
//!   time is drawn once per mote as `uip_ds6_compute_reachable_time` does: half the base
//!   (`UIP_CONF_ND6_REACHABLE_TIME`, 600 s on the Z1) plus a 16-bit `random_rand()` shifted by 8
//!   (kept to 16 bits) plus another, the sum an `unsigned int` of 16 bits on the MSP430, in ms:
//!   300–365.535 s. Motes that share one random sequence (`shared_random`) draw the same. A
//!   build whose draw is known gives it as `reachable_ms`: the Z1 platform never calls
//!   `random_init`, so its binaries draw the same in every run (the CoCoA++ tree's server and
//!   client and the CoCoA tree's client: 322,247 ms each, read from `uip_ds6_if` in Cooja).
//! * Frames: an NS or NA is 40 bytes of ICMPv6 (header 4, reserved or flags 4, target 16, the
//!   link-layer address option 16), a 66-byte unicast frame; a multicast NS's destination, the
//!   solicited-node address, takes 5 bytes more inline than `ff02::1a`: 66 bytes too, as Cooja
//!   shows them (runs `S-star32-…`). They cost CPU as data does and go through the MAC like
//!   RPL's control messages ([`super::rpl`]).
//!
//! Not modelled: ND on RPL meshes, where Contiki's RPL adds its DIOs' senders to the table (the
//! spec refuses `nd` with a border router); duplicate address detection (off:
//! `UIP_ND6_DEF_MAXDADNS` is 0 on these builds with RPL); router solicitations.

use rand_core::RngCore;

use super::frame::control_mpdu;
use super::rpl::{BROADCAST, CONTROL_ID};
use super::{Job, Mesh, MeshEvent, CLOCK_SECOND, TICK_NS};
use crate::medium::{Packet, Schedule};
use crate::HostId;
use coap_time::Instant;

/// Neighbour discovery's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdSpec {
    /// Entries in a mote's neighbour table (NBR_TABLE_CONF_MAX_NEIGHBORS).
    pub cache: u32,
    /// The base reachable time, ms (UIP_CONF_ND6_REACHABLE_TIME).
    pub base_reachable_ms: u32,
    /// The time between NSs for one entry, ms (UIP_CONF_ND6_RETRANS_TIMER).
    pub retrans_ms: u32,
    /// Every mote draws its reachable time from one random sequence.
    pub shared_random: bool,
    /// Every mote's reachable time, ms, where the firmware's draw is known (a build that never
    /// seeds its generator draws the same in every run); `None`: drawn.
    pub reachable_ms: Option<u32>,
    /// Motes boot at uniform draws in `0..boot_spread_ns` (0: all at 0).
    pub boot_spread_ns: u64,
    /// From a mote's boot (its clock's start) to tcpip's first periodic run, ns: the periodic
    /// runs fall on this plus multiples of their period.
    pub tcpip_start_ns: u64,
    /// From a mote's boot to its application's start (a client's first request, or the timer
    /// before it), ns ([`super::Mesh::app_start_ns`]).
    pub app_start_ns: u64,
}

impl NdSpec {
    /// The NS timer in the whole seconds of an `stimer` (`uip_ds6_if.retrans_timer / 1000`).
    fn retrans_s(&self) -> u64 {
        u64::from(self.retrans_ms) / 1000
    }
}

/// ICMPv6 bytes of an NS or NA with a link-layer address option.
pub const ND_ICMP_BYTES: u32 = 40;
/// What a multicast NS's solicited-node destination adds to the frame (IPHC's 48-bit inline form
/// against `ff02::1a`'s 8-bit one).
pub const SOLICITED_NODE_EXTRA: u32 = 5;
/// UIP_ND6_MAX_MULTICAST_SOLICIT and UIP_ND6_MAX_UNICAST_SOLICIT.
const MAX_SOLICIT: u8 = 3;
/// UIP_ND6_DELAY_FIRST_PROBE_TIME, s.
const DELAY_FIRST_PROBE_S: u64 = 5;
/// A note's kinds (beside RPL's 1–3).
pub(super) const KIND_NS: u64 = 4;
pub(super) const KIND_NA: u64 = 5;
/// The mesh's [`crate::streams::Stream::Nd`] of the sequence motes share (`shared_random`): past
/// any mote's index.
pub(super) const SHARED_STREAM: u32 = 0x0FFF_FFFF;
/// The unresolved entry's link-layer key (`linkaddr_null`).
const NULL_LL: u16 = u16::MAX;

/// Whether `p` is a neighbour discovery message.
pub fn is_nd(p: &Packet) -> bool {
    p.id == CONTROL_ID && matches!(p.note & 0xFF, KIND_NS | KIND_NA)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Incomplete,
    Reachable,
    Stale,
    Delay,
    Probe,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Its key: the neighbour's link-layer address (a mote index), or [`NULL_LL`].
    ll: u16,
    /// The IPv6 address it resolves (a mote index).
    ip: u16,
    state: State,
    /// The `reachable` stimer's expiry, whole seconds.
    reachable_s: u64,
    /// The `sendns` stimer's expiry, whole seconds.
    sendns_s: u64,
    nscount: u8,
}

/// A mote's neighbour discovery state.
#[derive(Debug)]
pub(super) struct NdNode {
    /// The table, in allocation order.
    entries: Vec<Entry>,
    reachable_s: u64,
    /// When it booted, ns: its clock's seconds and its periodic runs count from there.
    pub(super) boot_ns: u64,
    /// tcpip's periodic timer's start, ns.
    tcpip_ns: u64,
    /// The target of an NS left in uIP's buffer by a send outside input processing.
    pending_ns: Option<u16>,
    /// The periodic run a wake-up is scheduled for, ns (u64::MAX: none).
    wake_ns: u64,
}

impl NdNode {
    /// A mote that boots at `boot`, or else at a draw of `own`, and draws its reachable time from
    /// `shared`, the sequence motes share, or else from `own`.
    pub(super) fn new<R: RngCore>(spec: &NdSpec, own: &mut R, shared: Option<&mut R>, boot: Option<u64>) -> Self {
        let drawn = own.next_u64() % spec.boot_spread_ns.max(1);
        let boot_ns = boot.unwrap_or(drawn);
        let rng = shared.unwrap_or(own);
        // uip_ds6_compute_reachable_time: (uint16_t)(random_rand() << 8) + (uint16_t)random_rand(),
        // a sum of two unsigned ints, 16 bits on the MSP430
        let a = (rng.next_u32() & 0xFFFF) << 8 & 0xFFFF;
        let b = rng.next_u32() & 0xFFFF;
        // MIN_RANDOM_FACTOR(base) + draw % (MAX_RANDOM_FACTOR(base) − MIN_RANDOM_FACTOR(base))
        let base = spec.base_reachable_ms as u64;
        let drawn = base / 2 + ((a + b) & 0xFFFF) as u64 % base.max(1);
        let ms = spec.reachable_ms.map_or(drawn, u64::from);
        NdNode {
            entries: Vec::with_capacity(spec.cache as usize),
            reachable_s: ms / 1000,
            boot_ns,
            tcpip_ns: boot_ns + spec.tcpip_start_ns,
            pending_ns: None,
            wake_ns: u64::MAX,
        }
    }

    /// Its clock's whole seconds at `now`.
    fn secs(&self, now: u64) -> u64 {
        now.saturating_sub(self.boot_ns) / 1_000_000_000
    }

    /// The instant its clock reaches second `s`, ns.
    fn at(&self, s: u64) -> u64 {
        self.boot_ns + s * 1_000_000_000
    }

    fn find(&self, ip: u16) -> Option<usize> {
        self.entries.iter().position(|e| e.ip == ip)
    }

    /// Whether its table has an entry for mote `ip`.
    #[cfg(test)]
    pub(super) fn knows(&self, ip: u16) -> bool {
        self.find(ip).is_some()
    }

    /// nbr_table_add_lladdr + uip_ds6_nbr_add: the entry keyed `ll` (reused, or allocated at the
    /// end, the oldest evicted when full), reset to resolve `ip` in `state`.
    fn add(&mut self, cap: usize, ll: u16, ip: u16, state: State) -> usize {
        let fresh = Entry { ll, ip, state, reachable_s: 0, sendns_s: 0, nscount: 0 };
        if let Some(i) = self.entries.iter().position(|e| e.ll == ll) {
            self.entries[i] = fresh;
            return i;
        }
        if self.entries.len() >= cap.max(1) {
            self.entries.remove(0);
        }
        self.entries.push(fresh);
        self.entries.len() - 1
    }
}

impl Mesh {
    fn nd_spec(&self) -> NdSpec {
        self.spec.nd.expect("neighbour discovery on")
    }

    /// The periodic run's period, ns (CLOCK_SECOND / 10 ticks).
    fn nd_period_ns(&self) -> u64 {
        match self.spec.cooja_mote {
            Some(c) => (1_000_000_000 / c.tick_ns) / 10 * c.tick_ns,
            None => CLOCK_SECOND / 10 * TICK_NS,
        }
    }

    /// Schedules `n`'s next periodic run at or after `at` (ns) and after `now`, unless one is due
    /// before.
    fn nd_wake<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, at: u64, sched: &mut S) {
        let period = self.nd_period_ns();
        let nd = &mut self.nd[n];
        // the first run of its periodic timer at or after both
        let since = at.max(now + 1).max(nd.tcpip_ns) - nd.tcpip_ns;
        let tick = nd.tcpip_ns + since.div_ceil(period) * period;
        if tick < nd.wake_ns {
            nd.wake_ns = tick;
            sched.wake(Instant::from_nanos(tick), MeshEvent::NdTick(n as u16));
        }
    }

    /// The instant (ns) from which `n` has periodic work: an entry's timer, or an NS in its buffer.
    fn nd_next_work(&self, now: u64, n: usize) -> Option<u64> {
        let nd = &self.nd[n];
        if nd.pending_ns.is_some() {
            return Some(now);
        }
        let at = |s: u64| nd.at(s);
        nd.entries
            .iter()
            .filter_map(|e| match e.state {
                // the third NS sent: removed at the next run, answered or not
                State::Incomplete | State::Probe if e.nscount >= MAX_SOLICIT => Some(now),
                State::Incomplete | State::Probe => Some(at(e.sendns_s)),
                State::Delay | State::Reachable => Some(at(e.reachable_s)),
                State::Stale => None,
            })
            .min()
            .map(|t| t.max(now))
    }

    fn nd_rearm<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        if let Some(t) = self.nd_next_work(now, n) {
            self.nd_wake(now, n, t, sched);
        }
    }

    /// tcpip_ipv6_output's neighbour part for a unicast from `n` to `dest`: whether it goes out.
    /// `in_input`: the send runs inside input processing (its NS is thrown away).
    pub(super) fn nd_resolve<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        dest: u16,
        in_input: bool,
        sched: &mut S,
    ) -> bool {
        let spec = self.nd_spec();
        let (cap, retrans_s) = (spec.cache as usize, spec.retrans_s());
        let nd = &mut self.nd[n];
        let go = match nd.find(dest) {
            None => {
                let t = nd.secs(now);
                let i = nd.add(cap, NULL_LL, dest, State::Incomplete);
                let e = &mut nd.entries[i];
                e.nscount = 1;
                e.sendns_s = t + retrans_s;
                if !in_input {
                    nd.pending_ns = Some(dest);
                }
                false
            }
            Some(i) => {
                let t = nd.secs(now);
                let e = &mut nd.entries[i];
                match e.state {
                    State::Incomplete => false,
                    State::Stale => {
                        e.state = State::Delay;
                        e.reachable_s = t + DELAY_FIRST_PROBE_S;
                        e.nscount = 0;
                        true
                    }
                    _ => true,
                }
            }
        };
        self.nd_rearm(now, n, sched);
        go
    }

    /// uip_ds6_periodic, then tcpip_ipv6_output of what the buffer holds.
    pub(super) fn nd_tick<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        if self.nd[n].wake_ns != now {
            return; // superseded by an earlier run
        }
        self.nd[n].wake_ns = u64::MAX;
        let retrans_s = self.nd_spec().retrans_s();
        let nd = &mut self.nd[n];
        let t = nd.secs(now);
        let mut buffer = nd.pending_ns.take().map(|target| (target, true));
        let mut i = 0;
        while i < nd.entries.len() {
            let e = &mut nd.entries[i];
            match e.state {
                State::Reachable if t >= e.reachable_s => e.state = State::Stale,
                State::Incomplete | State::Probe if e.nscount >= MAX_SOLICIT => {
                    nd.entries.remove(i);
                    continue;
                }
                State::Incomplete | State::Probe if t >= e.sendns_s && buffer.is_none() => {
                    e.nscount += 1;
                    e.sendns_s = t + retrans_s;
                    buffer = Some((e.ip, e.state == State::Incomplete));
                }
                State::Delay if t >= e.reachable_s => {
                    e.state = State::Probe;
                    e.nscount = 0;
                    e.sendns_s = 0;
                }
                _ => {}
            }
            i += 1;
        }
        if let Some((target, multicast)) = buffer {
            let to = if multicast { BROADCAST } else { target };
            // a unicast NS goes to an entry in PROBE: it resolves
            self.nd_send(now, n, KIND_NS, target, to, sched);
        }
        self.nd_rearm(now, n, sched);
    }

    fn nd_send<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, kind: u64, target: u16, to: u16, sched: &mut S) {
        let broadcast = to == BROADCAST;
        let extra = if broadcast { SOLICITED_NODE_EXTRA } else { 0 };
        let p = Packet {
            id: CONTROL_ID,
            from: HostId(n as u32),
            to: HostId(to as u32),
            size: control_mpdu(broadcast, ND_ICMP_BYTES + extra),
            note: kind | (target as u64) << 8,
        };
        self.push_job(now, n, Job::Prepare(p), sched);
    }

    /// `n` took a packet: uIP's buffer holds it now (an NS left there is gone).
    pub(super) fn nd_packet_in(&mut self, n: usize) {
        self.nd[n].pending_ns = None;
    }

    /// An NS or NA reached `n`.
    pub(super) fn nd_input<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, p: Packet, sched: &mut S) {
        let cap = self.nd_spec().cache as usize;
        let from = p.from.0 as u16;
        let target = (p.note >> 8) as u16;
        if p.note & 0xFF == KIND_NS && target as usize != n {
            return; // to another mote's solicited-node address: dropped by IP input
        }
        let nd = &mut self.nd[n];
        if p.note & 0xFF == KIND_NS {
            match nd.find(from) {
                None => {
                    nd.add(cap, from, from, State::Stale);
                }
                Some(i) => {
                    let e = &mut nd.entries[i];
                    if e.ll != from {
                        e.ll = from;
                        e.state = State::Stale;
                    } else if e.state == State::Incomplete {
                        e.state = State::Stale;
                    }
                }
            }
            if self.nd_resolve(now, n, from, true, sched) {
                self.nd_send(now, n, KIND_NA, n as u16, from, sched);
            }
        } else if let Some(i) = nd.find(target) {
            let reachable = nd.secs(now) + nd.reachable_s;
            let e = &mut nd.entries[i];
            e.ll = from;
            e.state = State::Reachable;
            e.reachable_s = reachable;
            e.nscount = 0;
        }
        self.nd_rearm(now, n, sched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(cap: usize) -> NdNode {
        NdNode {
            entries: Vec::with_capacity(cap),
            reachable_s: 400,
            boot_ns: 0,
            tcpip_ns: 0,
            pending_ns: None,
            wake_ns: u64::MAX,
        }
    }

    #[test]
    fn a_full_table_evicts_its_oldest_and_one_unresolved_entry_serves_every_destination() {
        let mut nd = node(3);
        for m in [1, 2, 3] {
            nd.add(3, m, m, State::Stale);
        }
        // a fourth neighbour's NS: mote 1, allocated first, goes
        nd.add(3, 4, 4, State::Stale);
        assert_eq!(nd.entries.iter().map(|e| e.ip).collect::<Vec<_>>(), [2, 3, 4]);
        // resolving 5 takes the null key (evicting 2); resolving 6 takes the same entry over
        nd.add(3, NULL_LL, 5, State::Incomplete);
        nd.add(3, NULL_LL, 6, State::Incomplete);
        assert_eq!(nd.entries.iter().map(|e| (e.ll, e.ip)).collect::<Vec<_>>(), [(3, 3), (4, 4), (NULL_LL, 6)]);
        assert_eq!(nd.find(5), None);
    }

    /// Draws from a list: a u64 is the boot's draw, u32s are `random_rand()`'s.
    struct Seq(Vec<u32>);
    impl RngCore for Seq {
        fn next_u32(&mut self) -> u32 {
            self.0.remove(0)
        }
        fn next_u64(&mut self) -> u64 {
            self.next_u32() as u64
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {}
    }

    #[test]
    fn the_reachable_time_is_half_the_base_plus_two_16_bit_draws_in_ms() {
        let spec = NdSpec {
            cache: 15,
            base_reachable_ms: 600_000,
            retrans_ms: 10_000,
            shared_random: false,
            reachable_ms: None,
            boot_spread_ns: 1_000_000_000,
            tcpip_start_ns: 0,
            app_start_ns: 0,
        };
        // boot at 250 ms; 0x0100 << 8 kept to 16 bits is 0, + 40 000: 300 000 + 40 000 ms
        // (without the cast's truncation it would be 65 536 more: 405 s)
        let nd = NdNode::new(&spec, &mut Seq(vec![250_000_000, 0x0100, 40_000]), None, None);
        assert_eq!((nd.boot_ns, nd.reachable_s), (250_000_000, 340));
        // (0xFFFF << 8) kept to 16 bits is 0xFF00, + 0xFFFF is 0x1FEFF, 0xFEFF (65 279) in 16 bits:
        // 365 279 ms
        assert_eq!(NdNode::new(&spec, &mut Seq(vec![0, 0xFFFF, 0xFFFF]), None, None).reachable_s, 365);
        // 0x00FF << 8 is 0xFF00, + 0x0100 wraps to 0: the smallest, 300 s
        assert_eq!(NdNode::new(&spec, &mut Seq(vec![0, 0x00FF, 0x0100]), None, None).reachable_s, 300);
        // a known draw replaces it (the random draws are still taken: the boot is unchanged)
        let known = NdSpec { reachable_ms: Some(322_247), ..spec };
        let nd = NdNode::new(&known, &mut Seq(vec![250_000_000, 0x0100, 40_000]), None, None);
        assert_eq!((nd.boot_ns, nd.reachable_s), (250_000_000, 322));
        // a shared sequence gives the draw, the mote's own the boot
        let nd = NdNode::new(&spec, &mut Seq(vec![7]), Some(&mut Seq(vec![0, 40_000])), None);
        assert_eq!((nd.boot_ns, nd.reachable_s), (7, 340));
        // a given boot replaces the draw
        let nd = NdNode::new(&spec, &mut Seq(vec![7]), Some(&mut Seq(vec![0, 40_000])), Some(90_532_000));
        assert_eq!((nd.boot_ns, nd.reachable_s), (90_532_000, 340));
    }

    #[test]
    fn frames_are_66_bytes_as_cooja_shows_them() {
        assert_eq!(control_mpdu(false, ND_ICMP_BYTES), 66);
        assert_eq!(control_mpdu(true, ND_ICMP_BYTES + SOLICITED_NODE_EXTRA), 66);
    }
}
