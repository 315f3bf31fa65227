//! Where the motes are and what each one does: the static topologies of the mesh literature.
//!
//! Coordinates in metres, node ids as the sources number them (1-based; node `id` is host
//! `id − 1`). Each layout is our reading of a publication's text or figure; those that are
//! readings rather than facts are marked **choice** and documented in `docs/mesh.md`:
//!
//! * `grid3x3` (NITK ch. 3, 5): the author's Cooja file, translated so the border router is at
//!   the origin; lattice neighbours 9.7–10.0 m apart. `grid3x3_ideal` the exact 10 m lattice.
//! * `grid3x3_v2` (NITK; the author's second Cooja file, `Cooja_fullbackoff_CC_Variant2_Grid.csc`,
//!   whose server is the mote the published client binary addresses): its positions, links
//!   8.73–9.97 m. Its Cooja ids 1, 2, 3, 11 (the server), 12, 13, 14, 15, 16 become 1–9 in that
//!   order, the server id 4 (ids here run 1..=n).
//! * `grid6x6` (NITK ch. 6; choice): 10 m lattice, id = 6·j + i + 1, border router id 15 at
//!   (20, 20), servers ids 6 (50, 0) and 31 (0, 50); 33 clients, each to its nearer server.
//! * `chain20` (choice): x = 10·k, border router k = 9, server k = 19, 18 clients.
//! * `flower36` (choice): server at the centre, 5 petals of 7 nodes on narrow ellipses
//!   (u = 20 − 11·cos(2πk/7) along the petal's axis, v = 4·sin(2πk/7)), the border router the
//!   innermost node of petal 0; the server is the only relay between petals.
//! * `dumbbell21` (choice, after Betzler et al. 2013): border router at the centre, the server and
//!   one client on the axis 10 m away, 9 clients on a half circle of radius 10 m around each.
//! * `halfdumbbell5` (choice): router at the centre, server 9 m right, 3 clients 8.6–9 m left.
//! * `iotlab_grid3x2` (choice): 3 × 2 lattice, border router (10, 0), server (20, 10).
//! * `flocklab30` (CLOUD; choice): 6 × 5 lattice 10 m apart, id = 6·j + i + 1, border router id
//!   15 at (20, 20), the 29 others servers (their clients are cloud hosts).

use std::f64::consts::PI;

use serde::{Deserialize, Serialize};

/// What a mote does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The RPL root; routes only (in the Cooja presets it has no Internet side).
    BorderRouter,
    /// A CoAP server.
    Server,
    /// A CoAP client; it routes for others too.
    Client,
    /// Routes only.
    Router,
}

/// One mote.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// The source's node id (ids are 1..=n in order).
    pub id: u32,
    /// What it does.
    pub role: Role,
    /// Position, m.
    pub x: f64,
    /// Position, m.
    pub y: f64,
}

/// Every named layout.
pub const LAYOUTS: &[(&str, &str)] = &[
    ("grid3x3", "NITK ch. 3/5 Cooja file: 9 motes, border router at the centre, server at a corner"),
    ("grid3x3_ideal", "the exact 10 m lattice of grid3x3"),
    ("grid3x3_v2", "NITK's second 3×3 Cooja file (the published client's server, Cooja id 11, is id 4)"),
    ("grid6x6", "NITK ch. 6: 36 motes 10 m apart, 2 servers at corners, 33 clients"),
    ("chain20", "NITK ch. 6: 20 motes in a line, border router at k = 9, server at the end"),
    ("flower36", "NITK ch. 6: 5 petals of 7 motes around a central server"),
    ("dumbbell21", "NITK ch. 6 / Betzler 2013: border router at the centre of a 21-mote dumbbell"),
    ("halfdumbbell5", "NITK ch. 4: 3 clients, a router, a server"),
    ("iotlab_grid3x2", "FIT/IoT-LAB Paris/Grenoble approximation: 3 × 2 lattice"),
    ("flocklab30", "CLOUD's FlockLab approximation: 6 × 5 lattice, border router at the centre, 29 servers"),
    ("circles57", "RTTCOAP: a collector (border router) at the centre, 56 motes on rings of 8, 16, 32, 10 m apart"),
    ("circles112", "RTTCOAP: a collector at the centre, 111 motes on rings of 8, 16, 32, 55, 10 m apart"),
];

/// A named layout's motes, in id order; None for an unknown name.
pub fn layout(name: &str) -> Option<Vec<NodeSpec>> {
    use Role::*;
    let n = |id: u32, role: Role, x: f64, y: f64| NodeSpec { id, role, x, y };
    let nodes = match name {
        "grid3x3" => {
            // the Cooja file's positions minus (0.0585, 60.1499)
            let p = [
                (0.0, 0.0),
                (-10.0508, 9.8793),
                (-0.1429, 9.7384),
                (9.7518, 9.7236),
                (-9.9381, 0.0079),
                (9.8149, -0.0185),
                (-10.1176, -9.9732),
                (-0.1444, -9.8241),
                (9.8241, -9.8032),
            ];
            grid3x3_roles(&p)
        }
        "grid3x3_ideal" => {
            let p = [
                (0.0, 0.0),
                (-10.0, 10.0),
                (0.0, 10.0),
                (10.0, 10.0),
                (-10.0, 0.0),
                (10.0, 0.0),
                (-10.0, -10.0),
                (0.0, -10.0),
                (10.0, -10.0),
            ];
            grid3x3_roles(&p)
        }
        "grid3x3_v2" => {
            // (Cooja id, role, x, y) in Cooja id order
            let p = [
                (1, BorderRouter, 0.0, 0.0),
                (2, Client, -9.204, 9.718),
                (3, Client, 0.187, 9.203),
                (11, Server, 8.851, -9.815),
                (12, Client, 9.975, 9.839),
                (13, Client, 9.617, 0.125),
                (14, Client, -9.151, 0.375),
                (15, Client, -8.881, -8.877),
                (16, Client, 0.120, -9.809),
            ];
            p.iter().enumerate().map(|(k, &(_, role, x, y))| n(k as u32 + 1, role, x, y)).collect()
        }
        "grid6x6" => (0..36u32)
            .map(|k| {
                let role = match k + 1 {
                    15 => BorderRouter,
                    6 | 31 => Server,
                    _ => Client,
                };
                n(k + 1, role, 10.0 * (k % 6) as f64, 10.0 * (k / 6) as f64)
            })
            .collect(),
        "chain20" => (0..20u32)
            .map(|k| {
                let role = match k {
                    9 => BorderRouter,
                    19 => Server,
                    _ => Client,
                };
                n(k + 1, role, 10.0 * k as f64, 0.0)
            })
            .collect(),
        "flower36" => {
            let mut v = vec![n(1, Server, 0.0, 0.0)];
            for p in 0..5u32 {
                let theta = 2.0 * PI * p as f64 / 5.0;
                for k in 0..7u32 {
                    let a = 2.0 * PI * k as f64 / 7.0;
                    let (u, w) = (20.0 - 11.0 * a.cos(), 4.0 * a.sin());
                    let (x, y) = (u * theta.cos() - w * theta.sin(), u * theta.sin() + w * theta.cos());
                    let role = if p == 0 && k == 0 { BorderRouter } else { Client };
                    v.push(n(v.len() as u32 + 1, role, x, y));
                }
            }
            v
        }
        "dumbbell21" => {
            let mut v = vec![n(1, BorderRouter, 0.0, 0.0), n(2, Server, 10.0, 0.0), n(3, Client, -10.0, 0.0)];
            for side in [1.0, -1.0] {
                for m in 0..9 {
                    let a = (-90.0 + 22.5 * m as f64).to_radians();
                    let id = v.len() as u32 + 1;
                    v.push(n(id, Client, side * (10.0 + 10.0 * a.cos()), 10.0 * a.sin()));
                }
            }
            v
        }
        "halfdumbbell5" => vec![
            n(1, BorderRouter, 0.0, 0.0),
            n(2, Server, 9.0, 0.0),
            n(3, Client, -7.0, -5.0),
            n(4, Client, -9.0, 0.0),
            n(5, Client, -7.0, 5.0),
        ],
        // CLOUD's 30 FlockLab motes (choice: positions are not given): a 6 × 5 lattice 10 m
        // apart, id = 6·j + i + 1, the border router id 15 at (20, 20), every other mote a server
        "flocklab30" => (0..30u32)
            .map(|k| {
                let role = if k + 1 == 15 { BorderRouter } else { Server };
                n(k + 1, role, 10.0 * (k % 6) as f64, 10.0 * (k / 6) as f64)
            })
            .collect(),
        "iotlab_grid3x2" => (0..6u32)
            .map(|k| {
                let (i, j) = (k % 3, k / 3);
                let role = match (i, j) {
                    (1, 0) => BorderRouter,
                    (2, 1) => Server,
                    _ => Client,
                };
                n(k + 1, role, 10.0 * i as f64, 10.0 * j as f64)
            })
            .collect(),
        "circles57" => circles(57),
        "circles112" => circles(112),
        _ => return None,
    };
    Some(nodes)
}

/// RTTCOAP's concentric circles (choice: the ring sizes are not given): the collector (the
/// border router) at the origin, ring k of radius 10·k m with 8 motes on the first and twice the
/// previous ring's on each next, the last ring taking what is left; mote j of a ring of n at the
/// angle 2πj/n. Every other mote is a client (a source).
fn circles(total: u32) -> Vec<NodeSpec> {
    let mut v = vec![NodeSpec { id: 1, role: Role::BorderRouter, x: 0.0, y: 0.0 }];
    let (mut ring, mut size) = (1u32, 8u32);
    while (v.len() as u32) < total {
        let left = total - v.len() as u32;
        let n = if left < size { left } else { size };
        for j in 0..n {
            let a = 2.0 * PI * j as f64 / n as f64;
            let r = 10.0 * ring as f64;
            v.push(NodeSpec { id: v.len() as u32 + 1, role: Role::Client, x: r * a.cos(), y: r * a.sin() });
        }
        ring += 1;
        size *= 2;
    }
    v
}

fn grid3x3_roles(p: &[(f64, f64); 9]) -> Vec<NodeSpec> {
    (0..9)
        .map(|k| {
            let role = match k {
                0 => Role::BorderRouter,
                8 => Role::Server,
                _ => Role::Client,
            };
            NodeSpec { id: k as u32 + 1, role, x: p[k].0, y: p[k].1 }
        })
        .collect()
}

/// Euclidean distance, m.
pub fn distance(a: &NodeSpec, b: &NodeSpec) -> f64 {
    (a.x - b.x).hypot(a.y - b.y)
}

/// Each client's server: the nearest one, ties to the lower id. Indexed like `nodes`; None for
/// nodes that are not clients (or when there is no server).
pub fn assign_servers(nodes: &[NodeSpec]) -> Vec<Option<usize>> {
    nodes
        .iter()
        .map(|c| {
            if c.role != Role::Client {
                return None;
            }
            let servers = nodes.iter().enumerate().filter(|(_, s)| s.role == Role::Server);
            servers.min_by(|(i, a), (j, b)| distance(c, a).total_cmp(&distance(c, b)).then(i.cmp(j))).map(|(i, _)| i)
        })
        .collect()
}

/// Checks a layout: ids 1..=n in order, finite positions, and one border router, or none and one
/// server (a link-local star: its clients talk to the server over one hop, without RPL).
pub fn validate(nodes: &[NodeSpec]) -> Result<(), String> {
    if nodes.len() < 2 || nodes.len() > 4096 {
        return Err("topology: a mesh has 2 to 4096 motes".into());
    }
    for (k, n) in nodes.iter().enumerate() {
        if n.id != k as u32 + 1 {
            return Err(format!(
                "topology: node ids must be 1, 2, 3, … in order (found {} at position {})",
                n.id,
                k + 1
            ));
        }
        if !(n.x.is_finite() && n.y.is_finite()) {
            return Err(format!("topology: node {} has a position that is not a finite number", n.id));
        }
    }
    let roots = nodes.iter().filter(|n| n.role == Role::BorderRouter).count();
    if roots > 1 {
        return Err(format!("topology: at most one border_router (found {roots})"));
    }
    if roots == 0 && nodes.iter().filter(|n| n.role == Role::Server).count() != 1 {
        return Err("topology: without a border_router (link-local, one hop) exactly one server is needed".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(nodes: &[NodeSpec], role: Role) -> usize {
        nodes.iter().filter(|n| n.role == role).count()
    }

    #[test]
    fn every_layout_has_the_sources_roles() {
        for (name, (n, servers, clients)) in [
            ("grid3x3", (9, 1, 7)),
            ("grid3x3_ideal", (9, 1, 7)),
            ("grid3x3_v2", (9, 1, 7)),
            ("grid6x6", (36, 2, 33)),
            ("chain20", (20, 1, 18)),
            ("flower36", (36, 1, 34)),
            ("dumbbell21", (21, 1, 19)),
            ("halfdumbbell5", (5, 1, 3)),
            ("iotlab_grid3x2", (6, 1, 4)),
            ("flocklab30", (30, 29, 0)), // its clients are cloud hosts
            ("circles57", (57, 0, 56)),  // the collector is the border router
            ("circles112", (112, 0, 111)),
        ] {
            let l = layout(name).unwrap();
            assert_eq!((l.len(), count(&l, Role::Server), count(&l, Role::Client)), (n, servers, clients), "{name}");
            validate(&l).unwrap();
        }
        assert!(layout("nope").is_none());
        assert_eq!(LAYOUTS.len(), 12);
    }

    #[test]
    fn grid3x3_v2_has_the_second_files_links() {
        // E5: links of 8.73–9.97 m; the pairs within carrier-sense distance include the border
        // router with Cooja's 3 and 14 (ids 3 and 7 here) and the server with Cooja's 16 (id 9)
        let l = layout("grid3x3_v2").unwrap();
        assert_eq!((l[3].id, l[3].role), (4, Role::Server));
        let d = |a: usize, b: usize| distance(&l[a - 1], &l[b - 1]);
        for (a, b) in [(1, 3), (1, 7), (2, 3), (2, 7), (4, 9), (7, 8), (8, 9)] {
            assert!((8.7..10.0).contains(&d(a, b)), "{a}–{b}: {}", d(a, b));
        }
        // a diagonal is beyond range (Cooja 1–16 is 9.81 m, but 1–15, the corner, is 12.5 m)
        assert!(d(1, 8) > 12.0);
    }

    #[test]
    fn circles_rings_and_chords() {
        let l = layout("circles112").unwrap();
        // rings of 8, 16, 32 and the 55 left, at 10, 20, 30, 40 m
        let ring_of = |k: usize| (l[k].x.hypot(l[k].y) / 10.0).round() as u32;
        let sizes: Vec<usize> = (1..=4).map(|r| (1..l.len()).filter(|&k| ring_of(k) == r).count()).collect();
        assert_eq!(sizes, [8, 16, 32, 55]);
        // chords: 2·r·sin(π/n)
        for (first, r, n) in [(1, 10.0, 8.0), (9, 20.0, 16.0), (25, 30.0, 32.0), (57, 40.0, 55.0)] {
            let chord = 2.0 * r * (PI / n).sin();
            assert!((distance(&l[first], &l[first + 1]) - chord).abs() < 1e-9);
        }
        assert!((2.0 * 10.0 * (PI / 8.0).sin() - 7.6537).abs() < 1e-4);
        assert!((2.0 * 40.0 * (PI / 55.0).sin() - 4.5671).abs() < 1e-4);
        // the first mote of each ring is radially aligned with the one before, 10 m out
        assert!((distance(&l[1], &l[9]) - 10.0).abs() < 1e-9);
        assert_eq!(layout("circles57").unwrap().len(), 57);
    }

    #[test]
    fn grid3x3_lattice_neighbours_are_just_under_10_m() {
        let l = layout("grid3x3").unwrap();
        // 1–5 (BR to the left client): hypot(9.9381, 0.0079)
        assert!((distance(&l[0], &l[4]) - 9.9381).abs() < 1e-3);
        // 6–9: hypot(0.0092, 9.7847) = 9.7847; 8–9: 9.9685
        assert!((distance(&l[5], &l[8]) - 9.7847).abs() < 1e-3);
        assert!((distance(&l[7], &l[8]) - 9.9686).abs() < 1e-3);
        // diagonals about 14 m: 1–9 is hypot(9.8241, 9.8032) = 13.878
        assert!((distance(&l[0], &l[8]) - 13.878).abs() < 1e-3);
    }

    #[test]
    fn flower_petals_touch_only_through_the_server() {
        let l = layout("flower36").unwrap();
        // innermost petal nodes 9 m from the server, the others further than 10 m
        for p in 0..5 {
            for k in 0..7 {
                let d = distance(&l[0], &l[1 + 7 * p + k]);
                if k == 0 {
                    assert!((d - 9.0).abs() < 1e-9);
                } else {
                    assert!(d > 10.0, "petal {p} node {k} at {d}");
                }
            }
        }
        // nodes of different petals are never within 10 m (≥ 10.39 m)
        let mut closest = f64::MAX;
        for a in 1..36 {
            for b in 1..36 {
                if (a - 1) / 7 != (b - 1) / 7 {
                    closest = closest.min(distance(&l[a], &l[b]));
                }
            }
        }
        assert!((10.3..10.5).contains(&closest), "{closest}");
        assert_eq!(l[1].role, Role::BorderRouter);
    }

    #[test]
    fn dumbbell_half_circles_are_10_m_from_their_axis_node() {
        let l = layout("dumbbell21").unwrap();
        for k in 3..12 {
            assert!((distance(&l[k], &l[1]) - 10.0).abs() < 1e-9); // right: around the server
            assert!((distance(&l[k + 9], &l[2]) - 10.0).abs() < 1e-9); // left: around client 3
            assert!(distance(&l[k], &l[0]) >= 14.1); // ≥ 14.1 m from the border router
        }
        // neighbours on a half circle: 2·10·sin(11.25°) = 3.90 m
        assert!((distance(&l[3], &l[4]) - 3.9018).abs() < 1e-3);
    }

    #[test]
    fn grid6x6_clients_go_to_the_nearer_server_ties_to_id_6() {
        let l = layout("grid6x6").unwrap();
        let s = assign_servers(&l);
        assert_eq!(s[0], Some(5)); // id 1 at (0, 0): both 50 m away, tie → id 6
        assert_eq!(s[1], Some(5)); // id 2 at (10, 0): 40 vs 50.99
        assert_eq!(s[6], Some(30)); // id 7 at (0, 10): 50.99 vs 40
        assert_eq!(s[14], None); // the border router
        assert_eq!(s[5], None); // a server
    }
}
