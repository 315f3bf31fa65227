//! link-stats.c's per-neighbour statistics (ETX as an EWMA of transmissions, freshness) and
//! RPL's MRHOF over them (rpl-mrhof.c, ETX not squared: path cost, acceptability, the rank
//! through a parent, the best parent with the switch threshold's hysteresis), Contiki master
//! 2016-06-30 (23a0449).

/// link-stats.c: freshness target, cap, expiry and half-life.
pub(super) const FRESHNESS_TARGET: u32 = 4;
pub(super) const FRESHNESS_MAX: u32 = 16;
pub(super) const FRESHNESS_EXPIRATION_NS: u64 = 10 * 60 * 1_000_000_000;
pub(super) const FRESHNESS_HALF_LIFE_NS: u64 = 20 * 60 * 1_000_000_000;
/// link-stats.c: ETX in 128ths (LINK_STATS_ETX_DIVISOR), a new link's (ETX_INIT 2), a packet
/// without an ACK's (ETX_NOACK_PENALTY 10), and the EWMA's weights in 100ths (EWMA_ALPHA for a
/// fresh link, EWMA_BOOTSTRAP_ALPHA before).
pub(super) const ETX_DIVISOR: u32 = 128;
pub(super) const ETX_INIT: u32 = 2 * ETX_DIVISOR;
pub(super) const ETX_NOACK_PENALTY: u32 = 10;
pub(super) const EWMA_SCALE: u32 = 100;
pub(super) const EWMA_ALPHA: u32 = 15;
pub(super) const EWMA_BOOTSTRAP_ALPHA: u32 = 30;
/// rpl-mrhof.c (ETX not squared): a parent's link metric and path cost above these are not
/// acceptable; a new best parent must be this much better than the preferred one.
pub(super) const MAX_LINK_METRIC: u32 = 1024;
pub(super) const MAX_PATH_COST: u32 = 32768;
pub(super) const PARENT_SWITCH_THRESHOLD: u32 = 96;
/// rpl-private.h under MRHOF: RPL_MIN_HOPRANKINC, also the root's rank; INFINITE_RANK.
pub(super) const MIN_HOPRANKINC: u32 = 128;
/// rpl-private.h: RPL_MAX_RANKINC (7 · RPL_MIN_HOPRANKINC), the DODAG configuration's
/// MaxRankIncrease (Cooja's DIOs carry 896).
pub(super) const MAX_RANKINC: u32 = 7 * MIN_HOPRANKINC;
pub(super) const INFINITE_RANK: u32 = 0xFFFF;

/// One link's statistics (link-stats.c) as far as probing reads them.
#[derive(Debug, Clone, Copy)]
pub(super) struct LinkStat {
    pub(super) nbr: u16,
    /// The last transmission on it, ns (0: never).
    pub(super) last_tx: u64,
    pub(super) freshness: u32,
    /// Half-lives applied to `freshness` (20-minute periods since boot).
    pub(super) halvings: u64,
    /// `etx`: the link's ETX in 128ths; the rank and DTSN its last DIO carried
    /// ([`INFINITE_RANK`]: none heard, so no parent candidate) and when it was first heard
    /// among the candidates (1, 2, …: Contiki's neighbour table order; 0: never).
    pub(super) etx: u32,
    pub(super) rank: u32,
    pub(super) dtsn: u32,
    pub(super) order: u32,
    /// `etx`: an outcome on the link since the periodic timer's last second
    /// (RPL_PARENT_FLAG_UPDATED).
    pub(super) updated: bool,
}

impl LinkStat {
    pub(super) fn new(nbr: u16) -> Self {
        LinkStat {
            nbr,
            last_tx: 0,
            freshness: 0,
            halvings: 0,
            etx: ETX_INIT,
            rank: INFINITE_RANK,
            dtsn: 0,
            order: 0,
            updated: false,
        }
    }

    /// A packet's outcome in its ETX (`link_stats_packet_sent`): an EWMA towards its
    /// transmissions, or ETX_NOACK_PENALTY without an ACK, weighted more while the link is not
    /// fresh (its freshness counts the frames already, [`Mesh::rpl_link_sent`]).
    pub(super) fn record(&mut self, now: u64, acked: bool, numtx: u32) {
        let packet = if acked { numtx } else { ETX_NOACK_PENALTY } * ETX_DIVISOR;
        let alpha = if self.is_fresh(now) { EWMA_ALPHA } else { EWMA_BOOTSTRAP_ALPHA };
        self.etx = (self.etx * (EWMA_SCALE - alpha) + packet * alpha) / EWMA_SCALE;
    }

    /// MRHOF's path cost through this neighbour (`parent_path_cost`).
    pub(super) fn path_cost(&self) -> u32 {
        (self.rank + self.etx).min(0xFFFF)
    }

    /// `parent_is_acceptable`.
    pub(super) fn acceptable(&self) -> bool {
        self.etx <= MAX_LINK_METRIC && self.path_cost() <= MAX_PATH_COST
    }

    /// `rpl_parent_is_reachable` without neighbour unreachability detection (the firmware sends
    /// no NS): a link without fresh statistics is assumed usable, a fresh one when MRHOF's
    /// `parent_has_usable_link` says so (ETX at most 8).
    pub(super) fn reachable(&self, now: u64) -> bool {
        !self.is_fresh(now) || self.etx <= MAX_LINK_METRIC
    }

    /// A unicast frame went to it (`link_stats_packet_sent`'s freshness update).
    pub(super) fn sent(&mut self, now: u64) {
        self.freshness = (self.freshness_at(now) + 1).min(FRESHNESS_MAX);
        self.halvings = now / FRESHNESS_HALF_LIFE_NS;
        self.last_tx = now.max(1);
    }

    /// `rank_via_parent`: at least a hop's increment above the parent.
    pub(super) fn rank_via(&self) -> u32 {
        (self.rank + MIN_HOPRANKINC).min(0xFFFF).max(self.path_cost())
    }

    /// Its freshness at `now`, the halvings since its last update applied.
    pub(super) fn freshness_at(&self, now: u64) -> u32 {
        let h = now / FRESHNESS_HALF_LIFE_NS - self.halvings;
        if h >= 32 {
            0
        } else {
            self.freshness >> h
        }
    }

    pub(super) fn is_fresh(&self, now: u64) -> bool {
        self.last_tx > 0 && now - self.last_tx < FRESHNESS_EXPIRATION_NS && self.freshness_at(now) >= FRESHNESS_TARGET
    }
}

/// `acceptable_rank`: a rank is acceptable when finite and, in whole hops (`DAG_RANK`), at most
/// MaxRankIncrease above the lowest rank the mote has had (`min_rank`).
pub(super) fn acceptable_rank(rank: u32, min_rank: u32) -> bool {
    rank < INFINITE_RANK && rank / MIN_HOPRANKINC <= min_rank.saturating_add(MAX_RANKINC) / MIN_HOPRANKINC
}

/// MRHOF's best parent among `candidates` in the order they were first heard (`best_parent`
/// folding the neighbour table with the OF's `best_parent`), the preferred one `parent`; only
/// fresh ones if `fresh_only`.
pub(super) fn best_parent<'a>(
    candidates: impl Iterator<Item = &'a LinkStat>,
    parent: u16,
    now: u64,
    fresh_only: bool,
) -> Option<&'a LinkStat> {
    let mut best: Option<&LinkStat> = None;
    for p in candidates {
        if p.rank == INFINITE_RANK || (fresh_only && !p.is_fresh(now)) || !p.acceptable() {
            continue;
        }
        let Some(b) = best else {
            best = Some(p);
            continue;
        };
        let (c1, c2) = (b.path_cost(), p.path_cost());
        // the preferred parent stays against one within the switch threshold
        let close = c1 < c2 + PARENT_SWITCH_THRESHOLD && c1 + PARENT_SWITCH_THRESHOLD > c2;
        best = Some(if close && b.nbr == parent {
            b
        } else if (close && p.nbr == parent) || c1 >= c2 {
            p
        } else {
            b
        });
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_fresh_after_four_transmissions_within_ten_minutes() {
        let mut l = LinkStat::new(1);
        assert!(!l.is_fresh(1));
        l.freshness = 4;
        l.last_tx = 5;
        assert!(l.is_fresh(5 + FRESHNESS_EXPIRATION_NS - 1));
        assert!(!l.is_fresh(5 + FRESHNESS_EXPIRATION_NS));
        l.freshness = 8;
        l.last_tx = FRESHNESS_HALF_LIFE_NS - 10;
        // 8 halved at 20 minutes is 4: still fresh; at 40 minutes 2, and stale anyway
        assert_eq!(l.freshness_at(FRESHNESS_HALF_LIFE_NS), 4);
        assert!(l.is_fresh(FRESHNESS_HALF_LIFE_NS));
        assert_eq!(l.freshness_at(2 * FRESHNESS_HALF_LIFE_NS), 2);
    }

    #[test]
    fn etx_follows_link_stats_ewma() {
        // a new link starts at ETX 2 (256); an ACKed packet sent once while the link is not
        // fresh: (256·70 + 128·30) / 100 = 217.6 → 217
        let mut l = LinkStat::new(3);
        l.record(1, true, 1);
        assert_eq!(l.etx, 217);
        // fresh now: a packet without an ACK counts 10 transmissions at weight 15:
        // (217·85 + 1280·15) / 100 = 376.45 → 376
        l.freshness = FRESHNESS_TARGET;
        l.last_tx = 1;
        l.record(2, false, 1);
        assert_eq!(l.etx, 376);
        // three transmissions before the ACK: (376·85 + 384·15) / 100 = 377.2 → 377
        l.record(3, true, 3);
        assert_eq!(l.etx, 377);
    }
}
