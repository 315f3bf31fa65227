//! RPL as Contiki runs it, on the air: its control traffic, over the converged DODAG or as the
//! DODAG forms; as the RPL of Contiki's master from 2016 (the NITK GST/GSRTC firmware's "Contiki 3.1":
//! `core/net/rpl/rpl-timers.c`, `rpl-dag.c`, `rpl-icmp6.c`, `core/net/link-stats.c`), storing mode, MRHOF.
//! By part: the DIO trickle timer (`trickle`, a type of its own), link-stats with MRHOF's
//! arithmetic (`link_stats`), a mote's timers (`timers`), what it does with the messages it takes
//! (`input`); here a mote's RPL state, its routes, sending, loop detection and link results.
//!
//! Two modes ([`RplSpec::startup`]):
//!
//! * **Converged**: the routes stay the converged tree of [`super::routing`] (every mote joined
//!   at t = 0, its preferred parent the tree's; parents never change, so nothing resets a
//!   trickle timer or sends a No-Path DAO), and this module adds the frames RPL keeps sending
//!   once the DODAG has formed, which take the air and the motes' CPUs from CoAP.
//! * **Start-up**: only the root has joined at t = 0 (**choice**: the root has its prefix and
//!   every mote has booted at 0), or none until [`RplSpec::root_start_ns`], when the border
//!   router takes its prefix (`set_prefix_64` calls `rpl_set_root`: trickle from Imin). A mote
//!   joins through the first DIO it takes from a mote of finite rank (`rpl_join_instance`: that
//!   mote is its parent, its rank one hop more; trickle from Imin, a DAO, probing). A joined
//!   mote takes a neighbour a hop closer to the root as its new parent (**choice**: MRHOF over
//!   nullrdc links whose ETX is 1, its hysteresis keeping
//!   equal-rank neighbours out: the first parent heard among equals stays): its DTSN goes up, a
//!   DAO is scheduled, trickle restarts at Imin, and a No-Path DAO goes to the old parent (which
//!   flags the route through its sender and keeps using it for RPL_NOPATH_REMOVAL_DELAY,
//!   [`RplSpec::nopath_removal_s`], as every ancestor it passes does). Its
//!   rank follows its parent's DIOs. Routes are what DAOs left (storing mode: each mote a table
//!   of (target, next hop) for its sub-DODAG); a packet for a target without a route goes up to
//!   the parent; the root without one, or a mote that has not joined, drops it (`no_route`).
//!   A table may be bounded ([`RplSpec::max_routes`], UIP_CONF_MAX_ROUTES; 0: unbounded). When a
//!   DAO finds it full, the GST firmware's Contiki refuses the route (`uip_ds6_route_add` frees
//!   the least recently used one only with UIP_DS6_ROUTE_REMOVE_LEAST_RECENTLY_USED, which
//!   nothing defines) and `dao_input` then drops the DAO, so the ancestors never learn it either
//!   (counted as `routes_refused`); Contiki 3.0 evicts the least recently used route instead
//!   ([`RplSpec::evict_lru`]: a lookup, by a DAO or a forwarded packet, makes a route the most
//!   recently used). An unjoined mote multicasts a DIS (64 bytes, as Cooja shows)
//!   when its `next_dis` counter, started at 25 + U(60) and counting seconds, reaches 60 (at the
//!   earliest after 1 s), then every 60 s until it joins; a joined mote that takes a DIS restarts
//!   trickle at Imin.
//!
//! **Parents on ETX** ([`RplSpec::etx`], start-up mode): parents as the 2016 RPL chooses them
//! with MRHOF (`rpl-mrhof.c`, ETX not squared) on link-stats' ETX (`link-stats.c`), instead of
//! by hop count:
//!
//! * Each link's ETX (128ths) starts at 2 and moves by an EWMA (weight 0.15 on a fresh link, 0.30
//!   before) towards the packet's transmissions, or 10 when the MAC reports no ACK, at each
//!   unicast's outcome: nullrdc without ACKs (the Z1 CoAP motes) reports every packet OK after
//!   one transmission; a Cooja mote's nullrdc waits for the ACK; CSMA reports the transmissions
//!   it made and NOACK when it gives up; a busy channel (COLLISION) changes nothing.
//! * A DIO's sender becomes a candidate parent with the rank it advertises (MRHOF's units: the
//!   root 128, RPL_MIN_HOPRANKINC). The best candidate has the lowest path cost (its rank plus
//!   the link's ETX; ETX above 8 or a cost above 256 is not acceptable), except that the
//!   preferred parent stays against any within 0.75 (PARENT_SWITCH_THRESHOLD 96); the neighbour
//!   table's order (first heard first) breaks ties for the later one. With probing, a best
//!   parent that is not fresh gives way to the best fresh one and is probed within 10 s. The
//!   mote's rank is max(parent's + 128, path cost). The parent is selected again at each DIO, and
//!   after an outcome on a candidate's link at the periodic timer's next second
//!   (`rpl_link_neighbor_callback` flags the parent, `handle_periodic_timer`'s
//!   `rpl_recalculate_ranks` selects; the seconds counted from boot, at 0). A new parent is a
//!   switch as above. MaxRankIncrease (896, `acceptable_rank`): a candidate advertising a rank
//!   more than 896 above the mote's lowest since it last had no parent (in whole hops; an
//!   infinite one too) is not taken, and when it is the preferred parent, the mote drops it (a
//!   No-Path DAO) and has none until a later selection; a selection that gives the mote such a
//!   rank, or finds no acceptable candidate, leaves it without a parent (a No-Path DAO to the old
//!   one in the first case) and starts a local repair (`rpl_local_repair`: infinite rank, which
//!   its DIOs advertise, trickle from Imin, DTSN up; counted, `rpl_local_repairs`). Cooja's
//!   motes repair 2–3 times a run on New-Grid at RX 0.8 (RPL's debug output, seeds 4, 6, 7), the
//!   model's 2.7 on average.
//! * A data packet carries RPL's hop-by-hop option (in its `note` inside the mesh: the sender's
//!   rank, the sender, whether it goes down, a rank-error flag). A packet going down from a
//!   sender not closer to the root, or up from one closer, crossed a loop: the receiver sends the
//!   sender a DIO at once and forwards it flagged; flagged already, it is dropped (`rpl_loop`)
//!   and the receiver's trickle restarts (`rpl_verify_hbh_header`). Parents chosen on ETX can
//!   form loops for a while (a mote's stale rank); by hop count none forms.
//! * Routes follow the links (`rpl_process_parent_event`, at a candidate's DIO and at the
//!   periodic second after an outcome on its link): a fresh link with an ETX above 8 ends every
//!   route through that neighbour ([`Mesh::rpl_unusable_link`]); `rpl_purge_routes`, woken when a
//!   route falls due, removes one a second and sends the parent a No-Path DAO for its target (a
//!   withdrawn route's too, when its delay is over; [`Mesh::rpl_purge`]); until then the route
//!   is in use. A packet on its way down that finds no route is dropped and its sender, if a
//!   candidate parent, gets a No-Path DAO for its destination ([`Mesh::rpl_forwarding_error`]).
//!   By hop count none of this (**choice**: the presets as they were).
//!
//! Every change of preferred parent after joining is counted (`rpl_parent_switches`), and apart
//! the changes of the parent its DAOs go to (`rpl_dao_parent_changes`: what a frame trace such as
//! Cooja's shows).
//!
//! In both modes the motes send RPL's periodic frames, as follows:
//!
//! * **DIO trickle** (`new_dio_interval`, `handle_dio_timer`): I = 2^k ms in clock ticks
//!   (CLOCK_SECOND = 128), k from Imin = 12 (4.096 s) up 8 doublings (1048.576 s); the DIO goes at
//!   I/2 + (I/2)·r/65535 (r = `random_rand()`, 16 bits) unless 10 consistent DIOs were heard in
//!   the interval (RPL_DIO_REDUNDANCY); the interval then ends and doubles. A multicast DIO is a
//!   link-layer broadcast: one frame from a nullrdc mote, a ContikiMAC train of copies for a
//!   whole strobe time from a ContikiMAC sender. Every mote starts at Imin at t = 0 (**choice**:
//!   the converged tree as if every mote joined at boot).
//! * **Counting DIOs**: the root counts every DIO it takes; another mote every DIO from a known
//!   neighbour of unchanged rank (all of them, converged). A nullrdc mote takes every copy of a
//!   ContikiMAC train (Contiki's nullrdc detects duplicates only with AUTOACK, which the Z1
//!   build leaves off), each a DIO; a ContikiMAC receiver drops copies it already took.
//! * **DAO refresh** (`RPL_DIO_REFRESH_DAO_ROUTES`): the root increments its DTSN after each
//!   multicast DIO; a mote whose preferred parent's DIO carries a greater DTSN increments its
//!   own and schedules a DAO after RPL_DAO_DELAY/2 + r mod RPL_DAO_DELAY (4 s); a DAO already
//!   scheduled stays. Scheduling a DAO also sets the lifetime timer: a DAO again after half the
//!   route lifetime (30 × 60 s) plus up to a quarter of it (`set_dao_lifetime_timer`); that
//!   DAO cancels a scheduled one. A mote that takes a DAO (storing mode) forwards it to its
//!   preferred parent; the root keeps it.
//! * **Probing** (RPL_WITH_PROBING): every RPL_PROBING_INTERVAL/2 + r mod RPL_PROBING_INTERVAL
//!   (60–180 s) a mote sends a unicast DIO to its probing target: the urgent one if any, else its
//!   preferred parent if that link is not fresh, else (r even) the best non-fresh candidate,
//!   else the candidate least recently sent to. A link is fresh when something was sent on it
//!   in the last 10 minutes and its freshness (+1 per transmission, at most 16, halved every 20
//!   minutes from boot) is at least 4. Processing any DIO selects the parent again: when the
//!   preferred parent (the best, **choice**: MRHOF's ranking is the converged tree's) is not
//!   fresh it becomes the urgent target and probing is rescheduled within r mod 10 s. The root
//!   does not probe. Candidates are the mote's neighbours within range, in node order
//!   (**choice**: the order of Contiki's neighbour table is the order DIOs were first heard).
//! * Every control message costs its sender `tx_prepare_us` and its receiver `rx_process_us` of
//!   CPU (**choice**: as a data packet), and goes through the sender's MAC like data: nullmac
//!   sends at once (a busy channel drops it), CSMA queues it (a broadcast has its own neighbour
//!   queue, as in Contiki).
//! * Frame sizes ([`super::frame::control_mpdu`]): a DIO is 76 bytes of ICMPv6 (header 4, base 24,
//!   DODAG configuration option 16, prefix information option 32), a DAO 34 (header 4, base 4 with
//!   no DODAGID, target option 20, transit information option 6): 97-byte broadcast and 102-byte
//!   unicast DIO frames and 60-byte DAO frames, as Cooja shows for the firmware.
//!
//! Control packets never reach the simulation driver: they are marked with [`CONTROL_ID`], and
//! their losses are counted apart from the data packets' (`rpl_dropped`).

use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;

mod input;
mod link_stats;
mod timers;
mod trickle;

use link_stats::{acceptable_rank, best_parent, LinkStat, INFINITE_RANK, MIN_HOPRANKINC};
use trickle::{Fired, Trickle};

use super::frame::control_mpdu;
use super::routing::NONE;
use super::{Job, MacSpec, Mesh, MeshEvent, CLOCK_SECOND, TICK_NS};
use crate::medium::{Packet, Schedule};
use crate::{HostId, PacketId};
use coap_time::Instant;

/// A frame's destination when it is a link-layer broadcast.
pub const BROADCAST: u16 = u16::MAX - 1;
/// The driver handle of a control packet (the mesh's own; never handed to the driver).
pub const CONTROL_ID: PacketId = PacketId(u32::MAX);
/// ICMPv6 bytes of a DIO.
pub const DIO_ICMP_BYTES: u32 = 76;
/// ICMPv6 bytes of a DAO.
pub const DAO_ICMP_BYTES: u32 = 34;
/// ICMPv6 bytes of a DIS: what makes Cooja's 64-byte DIS frame (a measurement; the firmware's
/// DIS carries more than the 2-byte base of RFC 6550).
pub const DIS_ICMP_BYTES: u32 = 43;
/// RPL_DIS_INTERVAL and RPL_DIS_START_DELAY, s.
const DIS_INTERVAL_S: u64 = 60;
const DIS_START_DELAY_S: u64 = 5;
/// `random_rand()`'s range: 16 bits.
const RANDOM_RAND_MAX: u64 = 65_535;
/// The periodic timer's period (`handle_periodic_timer`, CLOCK_SECOND), ns.
const PERIODIC_NS: u64 = 1_000_000_000;
/// The urgent probing delay's range, ticks (`random_rand() % (CLOCK_SECOND * 10)`).
const URGENT_PROBING_TICKS: u64 = 10 * CLOCK_SECOND;
/// A data packet's hop-by-hop option in its `note` (`topology.rpl_etx`): the sender's rank
/// (bits 0–15), the sender (16–31), the down flag (32) and the rank-error flag (33).
pub(super) const HBH_DOWN: u64 = 1 << 32;
pub(super) const HBH_RANK_ERR: u64 = 1 << 33;

/// Whether `p` is one of the mesh's own control packets.
pub fn is_control(p: &Packet) -> bool {
    p.id == CONTROL_ID
}

/// RPL's parameters (Contiki's defaults in [`RplSpec::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RplSpec {
    /// Trickle's Imin, as log2 of milliseconds (RPL_DIO_INTERVAL_MIN).
    pub dio_interval_min: u32,
    /// Trickle's doublings (RPL_DIO_INTERVAL_DOUBLINGS).
    pub dio_interval_doublings: u32,
    /// DIOs heard in an interval that suppress the mote's own (RPL_DIO_REDUNDANCY; 0: never).
    pub dio_redundancy: u32,
    /// RPL_DAO_DELAY, clock ticks.
    pub dao_delay_ticks: u64,
    /// The routes' lifetime (default lifetime × lifetime unit), s.
    pub dao_lifetime_s: u64,
    /// RPL_PROBING_INTERVAL, clock ticks (0: no probing).
    pub probing_interval_ticks: u64,
    /// RPL_DIO_REFRESH_DAO_ROUTES: the root's multicast DIOs ask for fresh DAOs.
    pub refresh_dao_routes: bool,
    /// The DODAG forms as the run goes (only the root has joined at t = 0; see the module doc);
    /// false: the converged tree from the start.
    pub startup: bool,
    /// Start-up mode: the routes a mote's table holds (UIP_CONF_MAX_ROUTES), the border
    /// router's and every other mote's (0: unbounded).
    pub max_routes: MaxRoutes,
    /// A full table evicts its least recently used route (Contiki 3.0) instead of refusing the
    /// new one (the GST firmware's Contiki).
    pub evict_lru: bool,
    /// RPL_NOPATH_REMOVAL_DELAY, s: a route a No-Path DAO withdraws stays in use this long
    /// (`dao_input`); a DAO for its target in the meantime makes it whole again.
    pub nopath_removal_s: u64,
    /// Start-up mode: parents chosen as Contiki's MRHOF chooses them, on each link's ETX as
    /// link-stats learns it from the MAC's outcomes, with ranks in MRHOF's units and RPL's loop
    /// detection (see the module doc); false: by hop count, the first heard among equals.
    pub etx: bool,
    /// Start-up mode: when the root starts the DODAG (`rpl_set_root`, as the border router takes
    /// its prefix), ns; until then it is in no DODAG and solicits as every other mote does.
    pub root_start_ns: u64,
}

/// Route table sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MaxRoutes {
    /// The border router's.
    pub root: u32,
    /// Every other mote's.
    pub motes: u32,
}

impl Default for RplSpec {
    fn default() -> Self {
        RplSpec {
            dio_interval_min: 12,
            dio_interval_doublings: 8,
            dio_redundancy: 10,
            dao_delay_ticks: 4 * CLOCK_SECOND,
            dao_lifetime_s: 30 * 60,
            probing_interval_ticks: 120 * CLOCK_SECOND,
            refresh_dao_routes: true,
            startup: false,
            max_routes: MaxRoutes::default(),
            evict_lru: false,
            nopath_removal_s: 60,
            etx: false,
            root_start_ns: 0,
        }
    }
}

/// An RPL timer of one mote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RplTimer {
    /// The trickle timer (generation: a reset replaces it).
    Dio(u32),
    /// The DAO delay (generation).
    Dao(u32),
    /// The DAO lifetime timer (generation).
    Lifetime(u32),
    /// The probing timer (generation).
    Probe(u32),
    /// An unjoined mote's DIS.
    Dis,
    /// The root takes its prefix and starts the DODAG.
    RootStart,
    /// The periodic timer's second (`handle_periodic_timer`: `rpl_recalculate_ranks`), woken
    /// only when a candidate's link has news.
    Periodic,
    /// `etx`: the periodic timer's `rpl_purge_routes`, woken when a route falls due.
    Purge,
}

/// What a control packet carries (in its `note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Msg {
    Dio,
    Dao,
    Dis,
}

/// One mote's RPL state.
#[derive(Debug)]
pub(super) struct RplNode {
    joined: bool,
    /// Start-up mode: its preferred parent and rank in hops (NONE and u32::MAX before it joins;
    /// the converged mode reads the converged tree's instead).
    parent: u16,
    rank: u32,
    /// `etx`: the lowest rank it has had since it last had no parent (`dag->min_rank`).
    min_rank: u32,
    /// Start-up mode: its downward routes learnt from DAOs, the most recently used first.
    table: Vec<Route>,
    /// The parent its last DAO went to (NONE: none yet).
    dao_parent: u16,
    /// `etx`: a candidate's link had an outcome since the last periodic second
    /// (RPL_PARENT_FLAG_UPDATED), and that second is scheduled.
    updated: bool,
    /// Its DIO trickle timer.
    trickle: Trickle,
    dtsn_out: u32,
    /// The DTSN its preferred parent sent last.
    parent_dtsn: u32,
    dao_pending: bool,
    dao_gen: u32,
    lifetime_gen: u32,
    probe_gen: u32,
    urgent: Option<u16>,
    /// Its broadcasts so far (their link-layer sequence), and the last broadcast it took as
    /// (sender, sequence), for a ContikiMAC receiver's duplicate detection.
    seq: u32,
    last_taken: (u16, u32),
    links: Vec<LinkStat>,
    /// `etx`: candidate parents heard so far.
    candidates: u32,
    rng: ChaCha8Rng,
}

impl RplNode {
    pub(super) fn new(joined: bool, root: bool, neighbours: impl Iterator<Item = u16>, rng: ChaCha8Rng) -> Self {
        RplNode {
            joined,
            parent: NONE,
            rank: if root { 0 } else { u32::MAX },
            min_rank: u32::MAX,
            table: Vec::new(),
            dao_parent: NONE,
            updated: false,
            trickle: Trickle::default(),
            dtsn_out: 0,
            parent_dtsn: 0,
            dao_pending: false,
            dao_gen: 0,
            lifetime_gen: 0,
            probe_gen: 0,
            urgent: None,
            seq: 0,
            last_taken: (NONE, 0),
            links: neighbours.map(LinkStat::new).collect(),
            candidates: 0,
            rng,
        }
    }

    fn rand(&mut self) -> u64 {
        (self.rng.next_u32() & 0xFFFF) as u64
    }

    /// Where its table holds a route to `target` still in use at `now`; one whose No-Path delay
    /// is over is dropped (Contiki's purge, once a second) and counts as none, unless `purged`:
    /// then the purge removes it ([`RplTimer::Purge`], `etx`), and until then it is in use, as
    /// Contiki's lookup finds a route whatever its lifetime.
    fn route(&mut self, now: u64, target: u16, purged: bool) -> Option<usize> {
        let i = self.table.iter().position(|r| r.target == target)?;
        if purged || self.table[i].live(now) {
            return Some(i);
        }
        self.table.remove(i);
        None
    }

    fn link(&self, nbr: u16) -> Option<&LinkStat> {
        self.links.iter().find(|l| l.nbr == nbr)
    }

    fn link_mut(&mut self, nbr: u16) -> Option<&mut LinkStat> {
        self.links.iter_mut().find(|l| l.nbr == nbr)
    }

    /// `etx`: the candidate parents in the order they were first heard (Contiki's neighbour
    /// table); a mote has a handful of neighbours, so each is looked up in turn.
    fn ordered(&self) -> impl Iterator<Item = &LinkStat> {
        (1..=self.candidates).filter_map(|k| self.links.iter().find(|l| l.order == k))
    }

    /// `etx`: MRHOF's best parent among the candidates (`best_parent` folding the neighbour
    /// table with the OF's `best_parent`), only fresh ones if `fresh_only`.
    fn best_parent(&self, now: u64, fresh_only: bool) -> Option<&LinkStat> {
        best_parent(self.ordered(), self.parent, now, fresh_only)
    }
}

/// A downward route a DAO left (storing mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Route {
    target: u16,
    hop: u16,
    /// When it is removed, ns (`u64::MAX`: not due): a No-Path DAO through `hop` flags the route
    /// and Contiki keeps using it for RPL_NOPATH_REMOVAL_DELAY, [`RplSpec::nopath_removal_s`];
    /// under `etx` an unusable link to `hop` ends it at the periodic timer's next second.
    until_ns: u64,
    /// A No-Path DAO through `hop` flagged it (RPL_ROUTE_NOPATH_RECEIVED).
    no_path: bool,
}

impl Route {
    fn new(target: u16, hop: u16) -> Self {
        Route { target, hop, until_ns: u64::MAX, no_path: false }
    }

    fn live(&self, now: u64) -> bool {
        now < self.until_ns
    }

    /// Whether a No-Path DAO has withdrawn it (it is in use until `until_ns`).
    fn withdrawn(&self) -> bool {
        self.no_path
    }
}

/// A control packet's `note`: its kind, two 16-bit fields (a DIO: DTSN and rank; a DAO: its
/// target and whether it is a No-Path DAO) and the sender's broadcast sequence.
fn encode(msg: Msg, a: u32, b: u32, seq: u32) -> u64 {
    let kind = match msg {
        Msg::Dio => 1,
        Msg::Dao => 2,
        Msg::Dis => 3,
    };
    kind | ((a & 0xFFFF) as u64) << 8 | ((b & 0xFFFF) as u64) << 24 | ((seq & 0xFF_FFFF) as u64) << 40
}

pub(super) fn decode(note: u64) -> (Msg, u32, u32, u32) {
    let msg = match note & 0xFF {
        2 => Msg::Dao,
        3 => Msg::Dis,
        _ => Msg::Dio,
    };
    (msg, (note >> 8) as u32 & 0xFFFF, (note >> 24) as u32 & 0xFFFF, (note >> 40) as u32)
}

/// A rank as a DIO carries it (16 bits; unjoined: all ones).
fn rank_field(rank: u32) -> u32 {
    rank.min(0xFFFF)
}

fn at(now: u64, ticks: u64) -> Instant {
    Instant::from_nanos(now + ticks * TICK_NS)
}

impl Mesh {
    fn rpl_spec(&self) -> RplSpec {
        self.spec.rpl.expect("RPL control traffic is on")
    }

    /// Whether the DODAG forms as the run goes (else the converged routes hold throughout).
    pub(super) fn rpl_dynamic(&self) -> bool {
        self.spec.rpl.is_some_and(|r| r.startup)
    }

    /// Whether parents follow MRHOF on ETX, with RPL's loop detection (start-up mode only).
    pub(super) fn rpl_etx(&self) -> bool {
        self.spec.rpl.as_ref().is_some_and(|r| r.startup && r.etx)
    }

    /// `n`'s preferred parent now (NONE: none).
    pub(super) fn rpl_parent(&self, n: usize) -> u16 {
        if self.rpl_dynamic() {
            self.rpl[n].parent
        } else {
            self.routes.parent[n]
        }
    }

    /// `etx`: the lowest rank `n` has had since it last had no parent.
    #[cfg(test)]
    pub(super) fn rpl_min_rank(&self, n: usize) -> u32 {
        self.rpl[n].min_rank
    }

    pub(super) fn rpl_rank(&self, n: usize) -> u32 {
        if self.rpl_dynamic() {
            self.rpl[n].rank
        } else {
            self.routes.rank[n]
        }
    }

    /// Start-up mode: `n`'s next hop towards mote `dest` for a packet from mote `src` whose
    /// hop-by-hop option is `note`: the route a DAO left, else up to its parent; the root without
    /// a route, or a mote that has not joined, has none (NONE), and so has a mote without a route
    /// for a packet on its way down (Contiki's forwarding error, `rpl_update_header_empty`, which
    /// drops it and sends a No-Path DAO back, [`Mesh::rpl_forwarding_error`]). Under `etx` a
    /// packet is on its way down when its option says so (the sender had a route for it); by hop
    /// count, without the option, when it comes from outside `n`'s sub-DODAG (**choice**: no
    /// No-Path DAO back). Under LRU eviction the route becomes the most recently used.
    pub(super) fn rpl_next_hop(&mut self, now: u64, n: usize, src: usize, dest: usize, note: u64) -> u16 {
        let lru = self.spec.rpl.is_some_and(|r| r.evict_lru);
        let etx = self.rpl_etx();
        match self.rpl[n].route(now, dest as u16, etx) {
            Some(i) => {
                let table = &mut self.rpl[n].table;
                let hop = table[i].hop;
                if lru {
                    table[..=i].rotate_right(1);
                }
                hop
            }
            None if n == self.root => NONE,
            None if etx && note & HBH_DOWN != 0 => NONE,
            None if !etx && src != n && !self.rpl_ancestor(n, src) => NONE,
            None => self.rpl[n].parent,
        }
    }

    /// `etx`: a packet on its way down found no route at `n` (`rpl_update_header_empty`'s
    /// forwarding error): `n` drops it and sends the mote it came from, if that is a candidate
    /// parent, a No-Path DAO for the packet's destination (which withdraws the sender's route
    /// through `n`, as any No-Path DAO does).
    pub(super) fn rpl_forwarding_error<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        p: &Packet,
        sched: &mut S,
    ) {
        if !self.rpl_etx() || n == self.root || p.note & HBH_DOWN == 0 || is_control(p) {
            return;
        }
        let sender = (p.note >> 16 & 0xFFFF) as u16;
        if self.rpl[n].link(sender).is_some_and(|l| l.order > 0) {
            self.no_path_dao(now, n, p.to.0, sender, sched);
        }
    }

    /// `etx`: `rpl_process_parent_event`'s first check, for candidate `nbr` (after its DIO, or
    /// at the periodic second after an outcome on its link): when the link is fresh and its ETX
    /// is not acceptable (above 8), every route through `nbr` ends (lifetime 0), and the purge at
    /// the periodic timer's next second removes it.
    pub(super) fn rpl_unusable_link<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, nbr: u16, sched: &mut S) {
        if !self.rpl_etx() || n == self.root {
            return;
        }
        let r = &mut self.rpl[n];
        if r.link(nbr).is_none_or(|l| l.reachable(now)) {
            return;
        }
        let next = (now / PERIODIC_NS + 1) * PERIODIC_NS;
        let mut any = false;
        for route in r.table.iter_mut().filter(|x| x.hop == nbr) {
            route.until_ns = route.until_ns.min(next);
            any = true;
        }
        if any {
            sched.wake(Instant::from_nanos(next), MeshEvent::Rpl(n as u16, RplTimer::Purge));
        }
    }

    /// `etx`: `rpl_purge_routes` at `n`: the routes due are removed; a mote other than the root
    /// removes one a second and tells its preferred parent with a No-Path DAO for its target
    /// (the root removes them all and tells nobody).
    pub(super) fn rpl_purge<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let root = n == self.root;
        let r = &mut self.rpl[n];
        let Some(i) = r.table.iter().position(|x| !x.live(now)) else { return };
        if root {
            r.table.retain(|x| x.live(now));
            return;
        }
        let target = r.table.remove(i).target;
        let parent = r.parent;
        if r.table.iter().any(|x| !x.live(now)) {
            sched.wake(Instant::from_nanos(now + PERIODIC_NS), MeshEvent::Rpl(n as u16, RplTimer::Purge));
        }
        if parent != NONE {
            self.no_path_dao(now, n, target as u32, parent, sched);
        }
    }

    /// Start-up mode: whether `a` is on `m`'s path of parents to the root.
    fn rpl_ancestor(&self, a: usize, m: usize) -> bool {
        let mut x = m;
        // a path of parents is at most n long (a loop, which RPL's ranks rule out, ends it too)
        for _ in 0..self.rpl.len() {
            let p = self.rpl[x].parent;
            if p == NONE {
                return false;
            }
            if p as usize == a {
                return true;
            }
            x = p as usize;
        }
        false
    }

    /// Start-up mode: the tree as it stands, for the report.
    pub(super) fn rpl_routes(&self) -> super::routing::Routes {
        super::routing::Routes::from_parents(self.root, self.rpl.iter().map(|r| r.parent).collect())
    }

    /// A control message from `n` to `to` (a neighbour or [`BROADCAST`]) is prepared for its MAC.
    #[allow(clippy::too_many_arguments)]
    fn rpl_send<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        msg: Msg,
        a: u32,
        b: u32,
        to: u16,
        sched: &mut S,
    ) {
        let broadcast = to == BROADCAST;
        let r = &mut self.rpl[n];
        if broadcast {
            r.seq += 1;
        }
        if msg == Msg::Dao && b == 0 {
            // a DAO that is not No-Path goes to the preferred parent
            if r.dao_parent != NONE && r.dao_parent != to {
                self.nodes[n].stats.rpl_dao_parent_changes += 1;
            }
            r.dao_parent = to;
        }
        let icmp = match msg {
            Msg::Dio => DIO_ICMP_BYTES,
            Msg::Dao => DAO_ICMP_BYTES,
            Msg::Dis => DIS_ICMP_BYTES,
        };
        let p = Packet {
            id: CONTROL_ID,
            from: HostId(n as u32),
            to: HostId(to as u32),
            size: control_mpdu(broadcast, icmp),
            note: encode(msg, a, b, r.seq),
        };
        self.push_job(now, n, Job::Prepare(p), sched);
    }

    /// A No-Path DAO from `n` to `to` withdrawing its route to `target` (a DAO of lifetime 0).
    pub(super) fn no_path_dao<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        target: u32,
        to: u16,
        sched: &mut S,
    ) {
        self.rpl_send(now, n, Msg::Dao, target, 1, to, sched);
    }

    /// A prepared control packet goes to the MAC.
    pub(super) fn rpl_to_mac<S: Schedule<MeshEvent>>(&mut self, n: usize, p: Packet, sched: &mut S) {
        let nh = p.to.0 as u16;
        match self.nodes[n].mac {
            MacSpec::Nullmac => self.nodes[n].jobs.push_front(Job::Send(p, nh)),
            MacSpec::Csma { .. } => self.csma_enqueue(n, p, nh, sched),
        }
    }

    /// A broadcast copy from `s` arrived intact at `r`: whether `r` takes it (a ContikiMAC
    /// receiver drops a copy it took already).
    pub(super) fn rpl_fresh_broadcast(&mut self, s: usize, r: usize, p: &Packet) -> bool {
        if !self.nodes[r].cm {
            return true;
        }
        let key = (s as u16, decode(p.note).3);
        let rn = &mut self.rpl[r];
        if rn.last_taken == key {
            return false;
        }
        rn.last_taken = key;
        true
    }

    /// The MAC's outcome of a unicast packet from `n` to `nbr` (link-stats'
    /// `link_stats_packet_sent`): `acked` false is MAC_TX_NOACK, `numtx` its transmissions. Under
    /// `etx` the link's ETX moves by its EWMA at once and, for a candidate parent, the parent is
    /// selected again at the periodic timer's next second.
    pub(super) fn rpl_link_result<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        nbr: u16,
        acked: bool,
        numtx: u32,
        sched: &mut S,
    ) {
        if !self.rpl_etx() {
            return;
        }
        let Some(l) = self.rpl[n].link_mut(nbr) else { return };
        l.record(now, acked, numtx);
        // `rpl_link_neighbor_callback` flags a candidate parent; `rpl_recalculate_ranks` selects
        // the parent again at the periodic timer's next second (counted from boot, at 0)
        l.updated |= l.order > 0;
        if l.order > 0 && !self.rpl[n].updated {
            self.rpl[n].updated = true;
            let next = (now / PERIODIC_NS + 1) * PERIODIC_NS;
            sched.wake(Instant::from_nanos(next), MeshEvent::Rpl(n as u16, RplTimer::Periodic));
        }
    }

    /// `etx`: the hop-by-hop option `n` puts on a data packet it sends to `nh` (its rank, itself,
    /// whether the packet goes down), keeping a rank error already signalled.
    pub(super) fn rpl_hbh(&self, n: usize, nh: u16, note: u64) -> u64 {
        let down = if nh != self.rpl[n].parent { HBH_DOWN } else { 0 };
        (note & HBH_RANK_ERR) | down | (n as u64) << 16 | rank_field(self.rpl[n].rank) as u64
    }

    /// `etx`: `rpl_verify_hbh_header` at `n` for a data packet it received. A packet going down
    /// from a sender that is not closer to the root, or up from one that is, crossed a loop:
    /// `n` sends the sender a DIO at once, and the packet goes on with the rank error set, or,
    /// set already, is dropped and trickle restarts. A signalled error updates the sender's
    /// rank. True: drop it.
    pub(super) fn rpl_verify<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        p: &mut Packet,
        sched: &mut S,
    ) -> bool {
        let note = p.note;
        let (rank, sender) = ((note & 0xFFFF) as u32, (note >> 16 & 0xFFFF) as u16);
        let err = note & HBH_RANK_ERR != 0;
        if err {
            if let Some(l) = self.rpl[n].link_mut(sender).filter(|l| l.order > 0) {
                l.rank = rank;
            }
        }
        let closer = rank < self.rpl[n].rank;
        if (note & HBH_DOWN != 0) == closer {
            return false;
        }
        let (dtsn, own) = (self.rpl[n].dtsn_out, rank_field(self.rpl_rank(n)));
        self.rpl_send(now, n, Msg::Dio, dtsn, own, sender, sched);
        if err {
            self.reset_dio_timer(now, n, sched);
            return true;
        }
        p.note |= HBH_RANK_ERR;
        false
    }

    /// `n` transmitted a unicast frame to `nbr` (link-stats: one transmission).
    pub(super) fn rpl_link_sent(&mut self, now: u64, n: usize, nbr: u16) {
        let Some(r) = self.rpl.get_mut(n) else { return };
        if let Some(l) = r.links.iter_mut().find(|l| l.nbr == nbr) {
            l.sent(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::link_stats::INFINITE_RANK;
    use super::*;
    use rand_core::SeedableRng;

    /// A mote whose preferred parent is `parent`, with candidates (neighbour, rank, ETX) heard
    /// in this order.
    fn candidates(parent: u16, c: &[(u16, u32, u32)]) -> RplNode {
        let mut r = RplNode::new(true, false, c.iter().map(|x| x.0), ChaCha8Rng::seed_from_u64(1));
        for (k, &(nbr, rank, etx)) in c.iter().enumerate() {
            let l = r.link_mut(nbr).unwrap();
            (l.rank, l.etx, l.order) = (rank, etx, k as u32 + 1);
        }
        r.candidates = c.len() as u32;
        r.parent = parent;
        r
    }

    #[test]
    fn mrhof_keeps_its_parent_within_the_switch_threshold() {
        // path costs: 1 → 256 + 300 = 556, 2 → 256 + 200 = 456: 100 apart, more than 96
        let r = candidates(1, &[(1, 256, 300), (2, 256, 200)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(2));
        // 2 → 466: 90 apart, the preferred parent stays (either order of hearing)
        let r = candidates(1, &[(1, 256, 300), (2, 256, 210)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(1));
        let r = candidates(1, &[(2, 256, 210), (1, 256, 300)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(1));
        // no preferred parent among them: the lower cost, a tie to the later heard
        let r = candidates(9, &[(1, 256, 300), (2, 256, 210)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(2));
        let r = candidates(9, &[(1, 256, 200), (2, 256, 200)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(2));
        // a link above ETX 8 (1024) or an infinite rank is no candidate
        let r = candidates(1, &[(1, 128, 1025), (2, INFINITE_RANK, 128), (3, 512, 300)]);
        assert_eq!(r.best_parent(0, false).map(|p| p.nbr), Some(3));
        // none fresh: none when only fresh ones may be taken
        assert!(r.best_parent(0, true).is_none());
    }

    #[test]
    fn rank_through_a_parent_is_its_path_cost_at_least_a_hop_above() {
        let r = candidates(1, &[(1, 256, 300), (2, 256, 100)]);
        // 256 + 300; 256 + max(128, 100)
        assert_eq!(r.link(1).unwrap().rank_via(), 556);
        assert_eq!(r.link(2).unwrap().rank_via(), 384);
    }

    #[test]
    fn notes_carry_kind_dtsn_and_sequence() {
        assert_eq!(decode(encode(Msg::Dao, 7, 1, 3)), (Msg::Dao, 7, 1, 3));
        assert_eq!(decode(encode(Msg::Dio, 250, 0xFFFF, 1 << 20)), (Msg::Dio, 250, 0xFFFF, 1 << 20));
        assert_eq!(decode(encode(Msg::Dis, 0, 0, 9)), (Msg::Dis, 0, 0, 9));
    }
}
