//! A mote's RPL timers (rpl-timers.c): the DIO trickle, DAOs and their lifetime, probing, DIS
//! before joining; each arms its next and sends what is due.

use super::*;

impl Mesh {
    /// The root starts trickle (at once, or at [`RplSpec::root_start_ns`], soliciting until
    /// then); in the converged mode every joined mote does and sets its DAO lifetime and probing
    /// timers; in start-up mode the others wait for a DIO, soliciting one.
    pub(in crate::mesh) fn rpl_start<S: Schedule<MeshEvent>>(&mut self, sched: &mut S) {
        let spec = self.rpl_spec();
        if spec.etx {
            self.rpl[self.root].rank = MIN_HOPRANKINC; // ROOT_RANK
        }
        for n in 0..self.rpl.len() {
            if !self.rpl[n].joined {
                if spec.startup {
                    // rpl_reset_periodic_timer: next_dis starts at 30 + U(60) − 5 and counts
                    // seconds; the DIS goes when it reaches 60, at the earliest after 1 s
                    // (a first DIS the run gives replaces the draw, which is made all the same)
                    let r = &mut self.rpl[n];
                    let start = DIS_INTERVAL_S / 2 + (DIS_INTERVAL_S * r.rand()) / RANDOM_RAND_MAX - DIS_START_DELAY_S;
                    let first = DIS_INTERVAL_S.saturating_sub(start).max(1) * CLOCK_SECOND;
                    let given = self.spec.dis_first_ns.get(n).copied().flatten();
                    let wake = given.map_or(at(0, first), Instant::from_nanos);
                    sched.wake(wake, MeshEvent::Rpl(n as u16, RplTimer::Dis));
                    if n == self.root {
                        let start = Instant::from_nanos(spec.root_start_ns);
                        sched.wake(start, MeshEvent::Rpl(n as u16, RplTimer::RootStart));
                    }
                }
                continue;
            }
            self.start_trickle(0, n, sched);
            if n != self.root {
                // converged: its DAO went at its join; the lifetime timer runs
                self.set_dao_lifetime_timer(0, n, sched);
            }
            self.start_probing(0, n, sched);
        }
    }

    /// A mote joins the DODAG's trickle: from Imin.
    pub(in crate::mesh) fn start_trickle<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let imin = self.rpl_spec().dio_interval_min;
        self.rpl[n].trickle.start(imin);
        self.new_dio_interval(now, n, sched);
    }

    /// A mote in the DODAG starts probing (not the root; not without probing).
    pub(in crate::mesh) fn start_probing<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        if n != self.root && self.rpl_spec().probing_interval_ticks > 0 {
            self.schedule_probing(now, n, sched);
        }
    }

    /// Whether `n`'s link to `nbr` is fresh (link-stats).
    pub(in crate::mesh) fn fresh(&self, now: u64, n: usize, nbr: u16) -> bool {
        self.rpl[n].link(nbr).is_some_and(|l| l.is_fresh(now))
    }

    pub(in crate::mesh) fn rpl_timer<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        t: RplTimer,
        sched: &mut S,
    ) {
        let r = &self.rpl[n];
        match t {
            RplTimer::Dio(gen) if r.trickle.is_current(gen) => self.dio_timer(now, n, sched),
            RplTimer::Dao(gen) if r.dao_pending && gen == r.dao_gen => {
                self.rpl[n].dao_pending = false;
                self.send_dao(now, n, sched);
            }
            RplTimer::Lifetime(gen) if gen == r.lifetime_gen => {
                // handle_dao_timer from the lifetime timer: a scheduled DAO is cancelled, this one
                // goes, and the lifetime timer (expired) is set again
                self.rpl[n].dao_pending = false;
                self.send_dao(now, n, sched);
                self.set_dao_lifetime_timer(now, n, sched);
            }
            RplTimer::Probe(gen) if gen == r.probe_gen => {
                if let Some(target) = self.probing_target(now, n) {
                    let (dtsn, rank) = (self.rpl[n].dtsn_out, rank_field(self.rpl_rank(n)));
                    self.rpl_send(now, n, Msg::Dio, dtsn, rank, target, sched);
                }
                self.rpl[n].urgent = None;
                self.schedule_probing(now, n, sched);
            }
            RplTimer::Periodic => {
                // `rpl_recalculate_ranks`: each flagged candidate's event, then the selection
                self.rpl[n].updated = false;
                let mut select = false;
                for i in 0..self.rpl[n].links.len() {
                    let l = &mut self.rpl[n].links[i];
                    if std::mem::take(&mut l.updated) {
                        let nbr = l.nbr;
                        self.rpl_unusable_link(now, n, nbr, sched);
                        select |= self.candidate_rank_ok(now, n, nbr, sched);
                    }
                }
                if select {
                    self.mrhof_select(now, n, sched);
                }
            }
            RplTimer::Purge => self.rpl_purge(now, n, sched),
            RplTimer::RootStart => {
                self.rpl[n].joined = true;
                self.start_trickle(now, n, sched);
            }
            RplTimer::Dis if !r.joined => {
                self.rpl_send(now, n, Msg::Dis, 0, 0, BROADCAST, sched);
                sched.wake(at(now, DIS_INTERVAL_S * CLOCK_SECOND), MeshEvent::Rpl(n as u16, RplTimer::Dis));
            }
            _ => {}
        }
    }

    pub(in crate::mesh) fn new_dio_interval<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let r = &mut self.rpl[n];
        let rand = r.rand();
        let (ticks, gen) = r.trickle.new_interval(rand);
        sched.wake(at(now, ticks), MeshEvent::Rpl(n as u16, RplTimer::Dio(gen)));
    }

    /// `rpl_reset_dio_timer`: back to Imin, unless there already.
    pub(in crate::mesh) fn reset_dio_timer<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let min = self.rpl_spec().dio_interval_min;
        if self.rpl[n].trickle.reset(min) {
            self.new_dio_interval(now, n, sched);
        }
    }

    pub(in crate::mesh) fn dio_timer<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let spec = self.rpl_spec();
        let rank = rank_field(self.rpl_rank(n));
        let r = &mut self.rpl[n];
        match r.trickle.fire(spec.dio_redundancy, spec.dio_interval_min + spec.dio_interval_doublings) {
            Fired::Dio { send, rest } => {
                if send {
                    let dtsn = r.dtsn_out;
                    if n == self.root && spec.refresh_dao_routes {
                        r.dtsn_out += 1;
                    }
                    self.rpl_send(now, n, Msg::Dio, dtsn, rank, BROADCAST, sched);
                }
                let gen = self.rpl[n].trickle.gen();
                sched.wake(at(now, rest), MeshEvent::Rpl(n as u16, RplTimer::Dio(gen)));
            }
            Fired::Over => self.new_dio_interval(now, n, sched),
        }
    }

    pub(in crate::mesh) fn send_dao<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let parent = self.rpl_parent(n);
        if parent != NONE {
            self.rpl_send(now, n, Msg::Dao, n as u32, 0, parent, sched);
        }
    }

    pub(in crate::mesh) fn schedule_dao<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let delay = self.rpl_spec().dao_delay_ticks;
        let r = &mut self.rpl[n];
        if r.dao_pending {
            return;
        }
        let ticks = if delay == 0 { 0 } else { delay / 2 + r.rand() % delay };
        r.dao_pending = true;
        r.dao_gen = r.dao_gen.wrapping_add(1);
        sched.wake(at(now, ticks), MeshEvent::Rpl(n as u16, RplTimer::Dao(r.dao_gen)));
        self.set_dao_lifetime_timer(now, n, sched);
    }

    pub(in crate::mesh) fn set_dao_lifetime_timer<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        sched: &mut S,
    ) {
        let half = self.rpl_spec().dao_lifetime_s * CLOCK_SECOND / 2;
        let r = &mut self.rpl[n];
        let ticks = half + r.rand() % (half / 2).max(1);
        r.lifetime_gen = r.lifetime_gen.wrapping_add(1);
        sched.wake(at(now, ticks), MeshEvent::Rpl(n as u16, RplTimer::Lifetime(r.lifetime_gen)));
    }

    pub(in crate::mesh) fn schedule_probing<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let interval = self.rpl_spec().probing_interval_ticks;
        let r = &mut self.rpl[n];
        let ticks =
            if r.urgent.is_some() { r.rand() % URGENT_PROBING_TICKS } else { interval / 2 + r.rand() % interval };
        r.probe_gen = r.probe_gen.wrapping_add(1);
        sched.wake(at(now, ticks), MeshEvent::Rpl(n as u16, RplTimer::Probe(r.probe_gen)));
    }

    /// `get_probing_target`.
    pub(in crate::mesh) fn probing_target(&mut self, now: u64, n: usize) -> Option<u16> {
        if let Some(u) = self.rpl[n].urgent {
            return Some(u);
        }
        let parent = self.rpl_parent(n);
        if parent != NONE && !self.fresh(now, n, parent) {
            return Some(parent);
        }
        let etx = self.rpl_spec().etx;
        if self.rpl[n].rand() % 2 == 0 {
            // the best non-fresh candidate: the lowest rank, the first in table order (MRHOF:
            // the candidates heard, by the rank through them)
            let best = if etx {
                (self.rpl[n].ordered().filter(|l| !l.is_fresh(now))).min_by_key(|l| l.rank_via()).map(|l| l.nbr)
            } else {
                (self.rpl[n].links.iter().filter(|l| !l.is_fresh(now)))
                    .min_by_key(|l| self.rpl_rank(l.nbr as usize))
                    .map(|l| l.nbr)
            };
            if best.is_some() {
                return best;
            }
        }
        // the least recently sent to, the first in table order
        let mut target: Option<(u16, u64)> = None;
        for l in &self.rpl[n].links {
            if etx && l.order == 0 {
                continue;
            }
            let age = now - l.last_tx;
            if target.is_none_or(|(_, a)| age > a) {
                target = Some((l.nbr, age));
            }
        }
        target.map(|t| t.0)
    }
}
