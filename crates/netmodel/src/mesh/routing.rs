//! RPL storing mode as its converged state: a minimum-hop tree rooted at the border router.
//!
//! With nullrdc no unicast frame is acknowledged, so every link's ETX estimate in Contiki stays 1
//! and MRHOF ranks by hop count. The tree is built once, before traffic (choice: parents never
//! change; RPL's control frames may still be on the air, and `rpl` can form the tree as RPL
//! runs instead): rank(root) = 0, rank(n) = 1 + the lowest rank among its neighbours
//! (breadth-first over the links, d ≤ R); the preferred parent is the neighbour of
//! rank(n) − 1 at the smallest distance, ties to the lower node id (choice: Contiki keeps the
//! first parent it hears, which needs the control traffic to reproduce). A scenario may pin a
//! node's parent among those candidates (the parent a run of Contiki's RPL chose): a pin that is
//! not one of them (under mobility, once links change) is ignored.
//!
//! Forwarding, as storing mode does it: a packet climbs towards the root until it reaches an
//! ancestor of its destination, then descends the tree. Next hops are precomputed for every
//! (node, destination) pair: the routing decision on the hot path is one table read.

#![allow(clippy::needless_range_loop)] // node indices address several tables at once

/// No route.
pub const NONE: u16 = u16::MAX;

/// The tree and its forwarding table.
#[derive(Debug, Clone)]
pub struct Routes {
    n: usize,
    /// Preferred parent (NONE for the root and unreachable nodes).
    pub parent: Vec<u16>,
    /// Hops to the root (u32::MAX: unreachable).
    pub rank: Vec<u32>,
    /// next[a·n + b]: a's next hop towards b.
    next: Vec<u16>,
}

impl Routes {
    /// The min-hop tree rooted at `root` over `n` nodes; `linked(a, b)` says whether a and b are
    /// within range and `dist(a, b)` how far apart they are.
    pub fn min_hop(
        n: usize,
        root: usize,
        linked: impl Fn(usize, usize) -> bool,
        dist: impl Fn(usize, usize) -> f64,
    ) -> Self {
        Self::min_hop_pinned(n, root, linked, dist, &[])
    }

    /// [`Routes::min_hop`] with some nodes' preferred parents pinned: `pins` holds (node,
    /// parent) index pairs; a pin whose parent is not a neighbour one rank closer is ignored.
    pub fn min_hop_pinned(
        n: usize,
        root: usize,
        linked: impl Fn(usize, usize) -> bool,
        dist: impl Fn(usize, usize) -> f64,
        pins: &[(usize, usize)],
    ) -> Self {
        let mut rank = vec![u32::MAX; n];
        rank[root] = 0;
        let mut frontier = vec![root];
        let mut level = 0;
        while !frontier.is_empty() {
            level += 1;
            let mut next_frontier = Vec::new();
            for &a in &frontier {
                for b in 0..n {
                    if rank[b] == u32::MAX && linked(a, b) {
                        rank[b] = level;
                        next_frontier.push(b);
                    }
                }
            }
            frontier = next_frontier;
        }
        let mut parent = vec![NONE; n];
        for b in 0..n {
            if b == root || rank[b] == u32::MAX {
                continue;
            }
            let candidate = |a: usize| rank[a] != u32::MAX && rank[a] + 1 == rank[b] && linked(a, b);
            let pinned = pins.iter().find(|p| p.0 == b).map(|p| p.1).filter(|&a| a < n && candidate(a));
            let best = pinned.or_else(|| {
                (0..n).filter(|&a| candidate(a)).min_by(|&a, &c| dist(a, b).total_cmp(&dist(c, b)).then(a.cmp(&c)))
            });
            parent[b] = best.map_or(NONE, |a| a as u16);
        }
        let mut routes = Routes { n, parent, rank, next: vec![NONE; n * n] };
        routes.fill_next();
        routes
    }

    /// The routes of a tree given by its parents (RPL as it ran: [`super::rpl`]): a node whose
    /// chain of parents does not reach `root` has no route.
    pub fn from_parents(root: usize, parent: Vec<u16>) -> Self {
        let n = parent.len();
        let mut rank = vec![u32::MAX; n];
        rank[root] = 0;
        for b in 0..n {
            let (mut at, mut hops) = (b, 0u32);
            while at != root && parent[at] != NONE && hops <= n as u32 {
                at = parent[at] as usize;
                hops += 1;
            }
            if at == root && hops <= n as u32 {
                rank[b] = hops;
            }
        }
        let parent = (0..n).map(|b| if rank[b] == u32::MAX || b == root { NONE } else { parent[b] }).collect();
        let mut routes = Routes { n, parent, rank, next: vec![NONE; n * n] };
        routes.fill_next();
        routes
    }

    fn ancestors(&self, mut a: usize) -> Vec<usize> {
        let mut v = vec![a];
        while self.parent[a] != NONE {
            a = self.parent[a] as usize;
            v.push(a);
        }
        v
    }

    fn fill_next(&mut self) {
        let n = self.n;
        let chains: Vec<Vec<usize>> = (0..n).map(|a| self.ancestors(a)).collect();
        for b in 0..n {
            if self.rank[b] == u32::MAX {
                continue;
            }
            // b's ancestors: the first hop down from ancestor x towards b is the node just
            // below x on b's chain
            let chain = &chains[b];
            for a in 0..n {
                if a == b || self.rank[a] == u32::MAX {
                    continue;
                }
                self.next[a * n + b] = match chain.iter().position(|&x| x == a) {
                    Some(i) => chain[i - 1] as u16,
                    None => self.parent[a],
                };
            }
        }
    }

    /// `a`'s next hop towards `b` (NONE: no route).
    pub fn next_hop(&self, a: usize, b: usize) -> u16 {
        self.next[a * self.n + b]
    }

    /// Hops from `a` to `b` along the routes (None: no route).
    pub fn hops(&self, a: usize, b: usize) -> Option<u32> {
        let (mut at, mut hops) = (a, 0);
        while at != b {
            let nh = self.next_hop(at, b);
            if nh == NONE || hops > self.n as u32 {
                return None;
            }
            at = nh as usize;
            hops += 1;
        }
        Some(hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::topology::{distance, layout, NodeSpec, Role};

    fn routes(nodes: &[NodeSpec], range: f64) -> Routes {
        let root = nodes.iter().position(|n| n.role == Role::BorderRouter).unwrap();
        Routes::min_hop(
            nodes.len(),
            root,
            |a, b| a != b && distance(&nodes[a], &nodes[b]) <= range + 1e-6,
            |a, b| distance(&nodes[a], &nodes[b]),
        )
    }

    /// ids are 1-based in the sources; indices here are id − 1.
    fn parent_id(r: &Routes, id: usize) -> usize {
        r.parent[id - 1] as usize + 1
    }

    #[test]
    fn grid3x3_tree_and_paths() {
        let r = routes(&layout("grid3x3").unwrap(), 10.0);
        // the 4 lattice neighbours of the BR (3, 5, 6, 8) hang from it; corners from the
        // nearer rank-1 neighbour: 9 from 6 (9.785 m) rather than 8 (9.969 m); 2 from 5
        // (|(-0.1127, 9.8714)| = 9.872) rather than 3 (9.909); 4 from 6 (|(0.0631, 9.7421)| =
        // 9.742) rather than 3 (9.895); 7 from 8 (|(9.9732, 0.1491)| = 9.974) rather than 5
        // (|(0.1795, 9.9811)| = 9.983)
        for id in [3, 5, 6, 8] {
            assert_eq!(parent_id(&r, id), 1);
        }
        assert_eq!([parent_id(&r, 9), parent_id(&r, 2), parent_id(&r, 4), parent_id(&r, 7)], [6, 5, 6, 8]);
        // client 5 → server 9: up to the BR (the common ancestor), down through 6
        assert_eq!(r.next_hop(4, 8), 0);
        assert_eq!(r.next_hop(0, 8), 5);
        assert_eq!(r.hops(4, 8), Some(3));
        // client 6 is 9's parent: one hop; client 8 is 9's neighbour but goes via the BR
        assert_eq!(r.hops(5, 8), Some(1));
        assert_eq!(r.hops(7, 8), Some(3));
        // client 4 shares parent 6 with the server: 4 → 6 → 9
        assert_eq!(r.hops(3, 8), Some(2));
        assert_eq!(r.hops(8, 3), Some(2));
    }

    #[test]
    fn a_pinned_parent_among_the_candidates_reroutes_and_others_are_ignored() {
        let nodes = layout("grid3x3").unwrap();
        let root = 0;
        let linked = |a: usize, b: usize| a != b && distance(&nodes[a], &nodes[b]) <= 10.0 + 1e-6;
        let dist = |a: usize, b: usize| distance(&nodes[a], &nodes[b]);
        // the server (9) under 8, as Cooja's RPL chose: 8 is 9.969 m away and rank 1 like 6
        let r = Routes::min_hop_pinned(9, root, linked, dist, &[(8, 7)]);
        assert_eq!(parent_id(&r, 9), 8);
        // client 6 now reaches the server through the BR and 8: 6 → 1 → 8 → 9
        assert_eq!(r.hops(5, 8), Some(3));
        assert_eq!(r.hops(7, 8), Some(1));
        // client 4 (under 6) likewise: 4 → 6 → 1 → 8 → 9
        assert_eq!(r.hops(3, 8), Some(4));
        // pins that are no candidates: 9 under the BR (not a neighbour), 6 under 8 (same rank)
        let r = Routes::min_hop_pinned(9, root, linked, dist, &[(8, 0), (5, 7)]);
        assert_eq!([parent_id(&r, 9), parent_id(&r, 6)], [6, 1]);
    }

    #[test]
    fn chain_and_grid6x6_hop_counts() {
        let r = routes(&layout("chain20").unwrap(), 10.0);
        // the chain: BR k = 9, server k = 19: client k = 0 climbs 9 hops and descends 10
        assert_eq!(r.hops(0, 19), Some(19));
        assert_eq!(r.hops(18, 19), Some(1));
        assert_eq!(r.rank[19], 10);
        let r = routes(&layout("grid6x6").unwrap(), 10.0);
        // servers at (50, 0) and (0, 50), BR at (20, 20): 5 hops from the BR each
        assert_eq!((r.rank[5], r.rank[30]), (5, 5));
        // ties: id 6 (50, 0) has two rank-4 neighbours 10 m away, 5 (40, 0) and 12 (50, 10):
        // the lower id. 6's chain: 6, 5, 4, 3, 9, 15 (each time the lower id of two equals);
        // 12's chain: 12, 11, 10, 9, 15. They meet at 9: 12 → 11 → 10 → 9 → 3 → 4 → 5 → 6
        assert_eq!(r.parent[5], 4);
        assert_eq!(r.parent[11], 10);
        assert_eq!(r.hops(11, 5), Some(7));
        assert_eq!(r.next_hop(8, 5), 2); // 9 → 3 on the way down
    }

    #[test]
    fn flower_traffic_turns_at_the_server() {
        let r = routes(&layout("flower36").unwrap(), 10.0);
        // ranks: server 1; petal 0 nodes 1–3 from the BR (its innermost node); other petals 2–5
        assert_eq!(r.rank[0], 1);
        let petal = |p: usize| (0..7).map(|k| r.rank[1 + 7 * p + k]).collect::<Vec<_>>();
        assert_eq!(petal(0).iter().max(), Some(&3));
        for p in 1..5 {
            let ranks = petal(p);
            assert_eq!((ranks.iter().min(), ranks.iter().max()), (Some(&2), Some(&5)), "petal {p}");
        }
        // a petal-1 client reaches the server without passing the BR
        let inner = 1 + 7;
        assert_eq!(r.hops(inner, 0), Some(1));
    }

    #[test]
    fn an_isolated_node_has_no_route() {
        let mut nodes = layout("halfdumbbell5").unwrap();
        nodes[4].x = 100.0;
        let r = routes(&nodes, 10.0);
        assert_eq!(r.next_hop(4, 1), NONE);
        assert_eq!(r.next_hop(1, 4), NONE);
        assert_eq!(r.hops(2, 1), Some(2));
    }
}
