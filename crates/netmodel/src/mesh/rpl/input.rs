//! What a mote does with the RPL messages it takes (rpl-icmp6.c, rpl-dag.c): DIS, DIO (by hop
//! count, or on ETX with MRHOF), DAO; joining the DODAG and changing parents.

use super::*;

impl Mesh {
    /// `n` processed a control packet.
    pub(in crate::mesh) fn rpl_input<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, p: Packet, sched: &mut S) {
        let from = p.from.0 as u16;
        let (msg, a, b, _) = decode(p.note);
        match msg {
            Msg::Dis if self.rpl[n].joined => self.reset_dio_timer(now, n, sched),
            Msg::Dis => {}
            Msg::Dao if self.rpl[n].joined => self.dao_input(now, n, from, a as u16, b != 0, sched),
            Msg::Dao => {}
            Msg::Dio => self.dio_input(now, n, from, a, b, sched),
        }
    }

    /// A DAO for `target` from `from` (storing mode): the route is set and the DAO goes on up. A
    /// No-Path DAO for a route through `from` flags it, and it goes on up; the route stays in use
    /// for [`RplSpec::nopath_removal_s`] (`dao_input`: RPL_NOPATH_REMOVAL_DELAY, counted down by
    /// the purge every second), unless a DAO for the target sets it again first. A No-Path DAO
    /// for a route already flagged, or through another next hop, changes nothing and goes no
    /// further. When the delay ends, Contiki's purge removes the route and, at a mote other than
    /// the root, sends its own No-Path DAO up: under `etx` ([`RplTimer::Purge`]); by hop count
    /// the route is just gone (**choice**: the ancestors flagged theirs already).
    pub(in crate::mesh) fn dao_input<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        from: u16,
        target: u16,
        no_path: bool,
        sched: &mut S,
    ) {
        if self.rpl_dynamic() {
            let spec = self.rpl_spec();
            let cap = if n == self.root { spec.max_routes.root } else { spec.max_routes.motes } as usize;
            // the table runs from the most recently used route to the least
            let etx = self.rpl_etx();
            let at = self.rpl[n].route(now, target, etx);
            let table = &mut self.rpl[n].table;
            match (at, no_path) {
                (Some(i), true) if table[i].hop == from && !table[i].withdrawn() => {
                    let until = now + spec.nopath_removal_s * 1_000_000_000;
                    (table[i].until_ns, table[i].no_path) = (until, true);
                    if etx {
                        sched.wake(Instant::from_nanos(until), MeshEvent::Rpl(n as u16, RplTimer::Purge));
                    }
                }
                (_, true) => return, // no route through `from` to withdraw: nothing to pass on
                (Some(i), false) => {
                    table[i] = Route::new(target, from);
                    table[..=i].rotate_right(1);
                }
                (None, false) => {
                    // routes whose No-Path delay is over are gone before a new one takes a place
                    table.retain(|r| r.live(now));
                    if cap > 0 && table.len() >= cap {
                        if !spec.evict_lru {
                            // refused: the DAO goes no further
                            self.nodes[n].stats.routes_refused += 1;
                            return;
                        }
                        table.pop();
                        self.nodes[n].stats.routes_evicted += 1;
                    }
                    table.insert(0, Route::new(target, from));
                }
            }
        }
        let parent = self.rpl_parent(n);
        if n != self.root && parent != NONE {
            self.rpl_send(now, n, Msg::Dao, target as u32, no_path as u32, parent, sched);
        }
    }

    /// A DIO from `from` advertising `dtsn` and `rank` (hops; 0xFFFF: none).
    pub(in crate::mesh) fn dio_input<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        from: u16,
        dtsn: u32,
        rank: u32,
        sched: &mut S,
    ) {
        let spec = self.rpl_spec();
        // an infinite rank: no DODAG to join through it (under ETX a joined mote takes it as
        // its sender's rank)
        if rank == INFINITE_RANK && !(spec.etx && self.rpl[n].joined) {
            return;
        }
        if spec.etx {
            return self.dio_input_etx(now, n, from, dtsn, rank, sched);
        }
        if !self.rpl[n].joined {
            if spec.startup {
                self.join(now, n, from, rank + 1, dtsn, sched);
            }
            return;
        }
        self.rpl[n].trickle.hear();
        if n == self.root {
            return;
        }
        let mut parent = self.rpl_parent(n);
        if spec.startup && from != parent && rank + 1 < self.rpl[n].rank {
            // a parent a hop closer to the root: MRHOF's hysteresis keeps equal ones out
            self.switch_parent(now, n, from, rank + 1, sched);
            parent = from;
        }
        if from == parent {
            if spec.startup {
                self.rpl[n].rank = rank + 1;
            }
            let r = &mut self.rpl[n];
            if dtsn > r.parent_dtsn {
                r.dtsn_out += 1;
                self.schedule_dao(now, n, sched);
            }
            self.rpl[n].parent_dtsn = dtsn;
        }
        // the parent selected again: a best parent that is not fresh is probed soon
        let probing = spec.probing_interval_ticks > 0;
        if probing && parent != NONE && !self.fresh(now, n, parent) {
            self.rpl[n].urgent = Some(parent);
            self.schedule_probing(now, n, sched);
        }
    }

    /// `rpl_process_dio` under MRHOF on ETX (start-up mode): the sender becomes a candidate
    /// with the rank and DTSN it advertises, the parent is selected again, and a greater DTSN
    /// from the preferred parent asks for a DAO.
    pub(in crate::mesh) fn dio_input_etx<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        from: u16,
        dtsn: u32,
        rank: u32,
        sched: &mut S,
    ) {
        let r = &mut self.rpl[n];
        let Some(i) = r.links.iter().position(|l| l.nbr == from) else { return };
        let l = &mut r.links[i];
        let consistent = l.order > 0 && l.rank == rank;
        let old_dtsn = std::mem::replace(&mut l.dtsn, dtsn);
        l.rank = rank;
        if l.order == 0 {
            r.candidates += 1;
            r.links[i].order = r.candidates;
        }
        if !r.joined {
            let via = r.links[i].rank_via();
            return self.join(now, n, from, via, dtsn, sched);
        }
        if consistent {
            r.trickle.hear();
        }
        if n == self.root {
            return;
        }
        if rank == INFINITE_RANK && from == self.rpl[n].parent {
            self.reset_dio_timer(now, n, sched);
        }
        // `rpl_process_parent_event` for the sender: its link, its rank, then the selection
        self.rpl_unusable_link(now, n, from, sched);
        if !self.candidate_rank_ok(now, n, from, sched) {
            return;
        }
        self.mrhof_select(now, n, sched);
        if from == self.rpl[n].parent && dtsn > old_dtsn {
            self.rpl[n].dtsn_out += 1;
            self.schedule_dao(now, n, sched);
        }
    }

    /// `rpl_select_dag` under MRHOF on ETX: the best candidate, or the best fresh one while the
    /// best is not fresh (which is then probed soon); a new preferred parent as
    /// [`Mesh::switch_parent`] says; the rank through it. Without a parent before, the lowest
    /// rank starts over at it. A rank more than MaxRankIncrease above the lowest
    /// (`acceptable_rank`) leaves the mote without a parent, its old one told by a No-Path DAO
    /// ("New rank unacceptable"), and starts a local repair; so does finding no acceptable
    /// candidate (no No-Path DAO then).
    pub(in crate::mesh) fn mrhof_select<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let r = &self.rpl[n];
        if !r.joined || n == self.root {
            return;
        }
        let last = r.parent;
        let Some(best) = r.best_parent(now, false) else {
            if last != NONE {
                self.local_repair(now, n, sched);
            }
            return;
        };
        let (chosen, urgent) = if best.is_fresh(now) || self.rpl_spec().probing_interval_ticks == 0 {
            (best, None)
        } else {
            (r.best_parent(now, true).unwrap_or(best), Some(best.nbr))
        };
        let (to, rank) = (chosen.nbr, chosen.rank_via());
        let r = &mut self.rpl[n];
        if last == NONE || rank < r.min_rank {
            r.min_rank = rank;
        }
        if !acceptable_rank(rank, r.min_rank) {
            // last is a parent: without one before, the lowest rank is this one
            self.nullify_parent(now, n, sched);
            self.local_repair(now, n, sched);
            return;
        }
        if to != last {
            self.switch_parent(now, n, to, rank, sched);
        } else {
            self.rpl[n].rank = rank;
        }
        if urgent.is_some() {
            self.rpl[n].urgent = urgent;
            self.schedule_probing(now, n, sched);
        }
    }

    /// `rpl_process_parent_event`'s rank check for candidate `nbr` under ETX: a rank the mote
    /// may not take (`acceptable_rank`, an infinite one too) nullifies it (`rpl_nullify_parent`:
    /// the preferred parent is dropped, told by a No-Path DAO, and the mote's rank is infinite)
    /// and nothing is selected. True: acceptable.
    pub(in crate::mesh) fn candidate_rank_ok<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        nbr: u16,
        sched: &mut S,
    ) -> bool {
        let r = &mut self.rpl[n];
        let Some(l) = r.link(nbr) else { return true };
        if acceptable_rank(l.rank, r.min_rank) {
            return true;
        }
        if nbr == r.parent {
            self.nullify_parent(now, n, sched);
        }
        false
    }

    /// `rpl_nullify_parent` of the preferred parent: the mote has none (infinite rank) and tells
    /// it with a No-Path DAO.
    fn nullify_parent<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let r = &mut self.rpl[n];
        let old = std::mem::replace(&mut r.parent, NONE);
        r.rank = u32::MAX;
        self.no_path_dao(now, n, n as u32, old, sched);
    }

    /// `rpl_local_repair`: the mote detaches (infinite rank, no parent; its DIOs say so), trickle
    /// back to Imin, its DTSN up. It joins again through the next candidate a selection takes.
    pub(in crate::mesh) fn local_repair<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        self.nodes[n].stats.rpl_local_repairs += 1;
        let r = &mut self.rpl[n];
        (r.parent, r.rank) = (NONE, u32::MAX);
        r.dtsn_out += 1;
        self.reset_dio_timer(now, n, sched);
    }

    /// `rpl_join_instance`: `from` becomes the parent; trickle from Imin, a DAO, probing.
    pub(in crate::mesh) fn join<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        from: u16,
        rank: u32,
        dtsn: u32,
        sched: &mut S,
    ) {
        let r = &mut self.rpl[n];
        r.joined = true;
        r.parent = from;
        (r.rank, r.min_rank) = (rank, rank);
        r.parent_dtsn = dtsn;
        self.start_trickle(now, n, sched);
        self.schedule_dao(now, n, sched);
        self.start_probing(now, n, sched);
    }

    /// A better parent (`rpl_select_dag` on a parent change): DTSN up, a DAO to the new parent,
    /// trickle back to Imin, a No-Path DAO to the old one. `rank`: the mote's rank through it.
    pub(in crate::mesh) fn switch_parent<S: Schedule<MeshEvent>>(
        &mut self,
        now: u64,
        n: usize,
        to: u16,
        rank: u32,
        sched: &mut S,
    ) {
        self.nodes[n].stats.rpl_parent_switches += 1;
        let r = &mut self.rpl[n];
        let old = r.parent;
        r.parent = to;
        r.rank = rank;
        r.dtsn_out += 1;
        self.schedule_dao(now, n, sched);
        self.reset_dio_timer(now, n, sched);
        if old != NONE {
            self.no_path_dao(now, n, n as u32, old, sched);
        }
    }
}
