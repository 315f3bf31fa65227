//! Routing: mobility and routes, the serial line to the cloud, RPL (start-up, MRHOF, rank
//! errors, route tables), neighbour discovery.

use super::*;

/// A cloud host (host 2) behind the border router (mote 0, its one neighbour the server mote 1,
/// 9 m away; no address context). In: Internet 15 ms + serial line (48 + 15 + 2 SLIP = 65 bytes ·
/// 10 bits at 115200 baud = 5.642362 ms, rounded up) + the border router's rx 2 ms and prepare
/// 1 ms + turnaround 0.224 ms + the frame (IPHC 2 + 1 + hop limit 1 + 32 = 36; 36 + 16 + 15 = 67
/// bytes; MPDU 90: 3.072 ms) + the server's rx 2 ms and CoAP processing 1 ms = 29.938362 ms.
/// Out (20 bytes): prepare 1 +
/// turnaround 0.224 + the frame (IPHC 35, 71 bytes, MPDU 94: 3.2 ms) + rx 2 + prepare 1 + serial
/// (70 bytes: 6.076389 ms) + Internet 15 = 28.500389 ms, on the cloud's own lane.
#[test]
fn a_cloud_host_reaches_a_mote_through_the_serial_line() {
    let mut spec = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    spec.nodes[1].role = Role::Server;
    spec.cloud = Some(CloudSpec { hosts: 1, internet_delay_ns: 15 * MS, slip_baud: 115_200 });
    let mut m = Mesh::new(spec.clone(), 1, 0);
    assert_eq!(m.lanes(), 2);
    let h = run(&mut m, &[(0, 2, 1, 15)]);
    assert_eq!(h.delivered.iter().map(|d| (d.0, d.1.to.0)).collect::<Vec<_>>(), vec![(29_938_362, 1)]);
    assert_eq!(stats(&m)[0].forwarded, 1);
    let mut m = Mesh::new(spec, 1, 0);
    let h = run(&mut m, &[(0, 1, 2, 20)]);
    assert_eq!(h.delivered.iter().map(|d| (d.0, d.1.to.0)).collect::<Vec<_>>(), vec![(28_500_389, 2)]);
}

#[test]
fn rpl_control_frames_stay_out_of_the_data_accounting() {
    // a nullrdc chain with data and control traffic: every data packet is delivered or dropped
    // for one counted cause, and none of the driver's packets is a control packet
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec::default());
    let mut m = Mesh::new(s, 3, 0);
    let sends: Vec<_> = (0..200).map(|k| (k * 100 * MS, 2, 0, 15)).collect();
    let h = run_until(&mut m, &sends, 30 * 1_000_000_000);
    assert!(h.delivered.iter().map(|d| &d.1).chain(&h.discarded).all(|p| !rpl::is_control(p)));
    let st = stats(&m);
    let drops: u64 = st.iter().map(|x| x.drops.total()).sum();
    assert_eq!(h.delivered.len() as u64 + drops, 200);
    assert!(st.iter().map(|x| x.rpl_frames_sent).sum::<u64>() > 0);
}

#[test]
fn in_start_up_mode_the_dodag_forms_hop_by_hop_and_packets_wait_for_routes() {
    // nullrdc chain: border router 0 — mote 1 (9 m) — mote 2 (18 m). Only the root is in the
    // DODAG at 0; its first DIO goes in the second half of its first 524-tick interval
    // (2.05–4.09 s), so mote 1 joins then (rank 1) and mote 2 only through mote 1's DIO (rank 2).
    // A packet mote 2 sends at 0.5 s has no parent to go to (no_route); one at 200 s, after both
    // DAOs (2–6 s after each join) reached the root, is delivered to the root, and one the root
    // sends a second later goes down the route mote 2's DAO left.
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 5, 0);
    let h =
        run_until(&mut m, &[(500 * MS, 2, 0, 15), (200_000 * MS, 2, 0, 15), (201_000 * MS, 0, 2, 15)], 210_000 * MS);
    let st = stats(&m);
    assert_eq!(st[2].drops.no_route, 1);
    let to_root = h.delivered.iter().filter(|d| d.1.to == HostId(0)).count();
    let to_mote = h.delivered.iter().filter(|d| d.1.to == HostId(2)).count();
    assert_eq!((to_root, to_mote), (1, 1));
    // the report's tree is the one RPL formed
    Medium::finish(&mut m, Instant::from_nanos(210_000 * MS));
    let r = m.report();
    assert_eq!(
        r.nodes.iter().map(|n| (n.parent, n.rank)).collect::<Vec<_>>(),
        [(None, Some(0)), (Some(1), Some(1)), (Some(2), Some(2))]
    );
}

#[test]
fn the_dodag_starts_when_the_root_takes_its_prefix() {
    // Border router 0 — mote 1 (9 m). The root takes its prefix at 10 s: its first DIO comes
    // 2.048–4.096 s later (the second half of Imin's 524-tick interval), so a packet mote 1
    // sends at 12 s finds no parent (no_route), one at 30 s goes; with the prefix at 0, the
    // DIO is out by 4.096 s and the packet at 12 s goes too.
    for (start_s, dropped) in [(10, 1), (0, 0)] {
        let mut s = spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
        s.rpl = Some(RplSpec { startup: true, root_start_ns: start_s * 1_000_000_000, ..RplSpec::default() });
        let mut m = Mesh::new(s, 5, 0);
        let h = run_until(&mut m, &[(12_000 * MS, 1, 0, 15), (30_000 * MS, 1, 0, 15)], 40_000 * MS);
        assert_eq!(stats(&m)[1].drops.no_route, dropped, "prefix at {start_s} s");
        assert_eq!(h.delivered.len() as u64, 2 - dropped, "prefix at {start_s} s");
    }
}

#[test]
fn a_no_path_dao_withdraws_a_route_only_after_contikis_delay() {
    // The chain above: by 100 s the root's route to mote 2 goes through mote 1. A No-Path DAO
    // from mote 1 for mote 2 flags the route, and Contiki keeps using it for
    // RPL_NOPATH_REMOVAL_DELAY (60 s): at 159.999 s the root still sends to mote 2 through
    // mote 1, at 160 s it has no route for it.
    let chain = || {
        let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
        s.rpl = Some(RplSpec { startup: true, ..RplSpec::default() });
        let mut m = Mesh::new(s, 5, 0);
        let h = run_until(&mut m, &[], 100_000 * MS);
        (m, h)
    };
    let t = 100_000 * MS;
    let (mut m, mut h) = chain();
    assert_eq!(m.rpl_next_hop(t, 0, 0, 2, 0), 1);
    m.dao_input(t, 0, 1, 2, true, &mut h);
    assert_eq!(m.rpl_next_hop(t + 59_999 * MS, 0, 0, 2, 0), 1);
    assert_eq!(m.rpl_next_hop(t + 60_000 * MS, 0, 0, 2, 0), NONE);
    // a second No-Path DAO does not restart the delay; one through another next hop (mote 2
    // itself) withdraws nothing
    let (mut m, mut h) = chain();
    m.dao_input(t, 0, 1, 2, true, &mut h);
    m.dao_input(t + 30_000 * MS, 0, 1, 2, true, &mut h);
    assert_eq!(m.rpl_next_hop(t + 60_000 * MS, 0, 0, 2, 0), NONE);
    let (mut m, mut h) = chain();
    m.dao_input(t, 0, 2, 2, true, &mut h);
    assert_eq!(m.rpl_next_hop(t + 600_000 * MS, 0, 0, 2, 0), 1);
    // a DAO for mote 2 within the delay sets the route again, for good
    let (mut m, mut h) = chain();
    m.dao_input(t, 0, 1, 2, true, &mut h);
    m.dao_input(t + 30_000 * MS, 0, 1, 2, false, &mut h);
    assert_eq!(m.rpl_next_hop(t + 600_000 * MS, 0, 0, 2, 0), 1);
}

#[test]
fn a_full_route_table_refuses_or_evicts_as_its_contiki_does() {
    // nullrdc chain: border router 0 — 1 — 2 — 3, 9 m apart, RPL forming its DODAG; mote 1's
    // table holds one route (the root's is unbounded). At 200 s the root sends to motes 2 and 3.
    let run_with = |evict_lru: bool, motes: u32| {
        let pos = [(0.0, 0.0), (9.0, 0.0), (18.0, 0.0), (27.0, 0.0)];
        let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
        s.rpl = Some(RplSpec {
            startup: true,
            max_routes: rpl::MaxRoutes { root: 0, motes },
            evict_lru,
            ..RplSpec::default()
        });
        let mut m = Mesh::new(s, 5, 0);
        let h = run_until(&mut m, &[(200_000 * MS, 0, 2, 15), (201_000 * MS, 0, 3, 15)], 210_000 * MS);
        (h.delivered.len(), stats(&m))
    };
    // unbounded: both arrive
    assert_eq!(run_with(false, 0).0, 2);
    // the GST firmware's Contiki: mote 1 keeps the first route and refuses the other mote's
    // DAO, which then never reaches the root: the root has no route for that packet
    let (got, st) = run_with(false, 1);
    assert_eq!(got, 1);
    assert!(st[1].routes_refused >= 1);
    assert_eq!((st[0].drops.no_route, st[1].drops.no_route), (1, 0));
    // Contiki 3.0: mote 1 evicts, so the root learns both routes, but mote 1 holds one at a
    // time: the packet for the other is on its way down without a route there, and is dropped
    let (got, st) = run_with(true, 1);
    assert_eq!(got, 1);
    assert!(st[1].routes_evicted >= 1);
    assert_eq!((st[0].drops.no_route, st[1].drops.no_route), (0, 1));
}

#[test]
fn under_mrhof_on_etx_lost_acks_move_a_mote_between_equal_parents() {
    // At RX 0.8 a frame 9 m away arrives with 1 − 0.81 · 0.2 = 0.84, its ACK too: about a
    // quarter of mote 3's packets end without an ACK, each pulling its link's ETX towards 10.
    // By hop count the first parent heard stays (equal ranks never replace it); on ETX mote 3
    // moves between its two parents as their links' ETX cross (MRHOF's hysteresis: 0.75).
    let (_, hops) = cooja_diamond(false, 0.8);
    assert_eq!(hops[3].rpl_parent_switches, 0);
    let (delivered, st) = cooja_diamond(true, 0.8);
    assert!(st[3].rpl_parent_switches >= 2, "switches: {}", st[3].rpl_parent_switches);
    // no parent of 1 or 2 but the root: nothing to switch to
    assert_eq!((st[1].rpl_parent_switches, st[2].rpl_parent_switches), (0, 0));
    // every packet is delivered or dropped for a cause
    let drops: u64 = st.iter().map(|x| x.drops.total()).sum();
    assert_eq!(delivered as u64 + drops, 2999);
    // on perfect links every ACK comes: ETX falls to 1 on the parent used, and it stays
    let (_, perfect) = cooja_diamond(true, 1.0);
    assert_eq!(perfect[3].rpl_parent_switches, 0);
}

#[test]
fn a_parent_change_undone_before_the_next_dao_is_not_a_dao_parent_change() {
    // The diamond on perfect links: by 100 s mote 3 has joined through mote 1 or 2 and its DAO
    // went there. It moves to the other and sends a DAO: one change of the parent its DAOs go to.
    // It then moves back and forth again before its next DAO, which goes where the last one
    // did: three parent switches, still one change a trace of its DAOs shows.
    let pos = [(0.0, 0.0), (0.0, 9.0), (9.0, 0.0), (9.0, 9.0)];
    let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 11, 0);
    let mut h = run_until(&mut m, &[], 100_000 * MS);
    let t = 100_000 * MS;
    let first = m.rpl_parent(3);
    assert!(first == 1 || first == 2, "parent {first}");
    let other = 3 - first;
    m.switch_parent(t, 3, other, 2, &mut h);
    m.send_dao(t, 3, &mut h);
    m.switch_parent(t + MS, 3, first, 2, &mut h);
    m.switch_parent(t + 2 * MS, 3, other, 2, &mut h);
    m.send_dao(t + 3 * MS, 3, &mut h);
    let st = stats(&m);
    assert_eq!((st[3].rpl_parent_switches, st[3].rpl_dao_parent_changes), (3, 1));
}

#[test]
fn a_link_outcome_moves_the_rank_at_the_periodic_second_not_at_once() {
    // The diamond on perfect links with parents on ETX: by 100 s mote 3 has its parent. A lost
    // ACK on that link raises its ETX at once (link-stats), but Contiki only flags the parent;
    // the rank through it is computed again at the periodic timer's next second (101 s), which
    // the outcome schedules.
    let pos = [(0.0, 0.0), (0.0, 9.0), (9.0, 0.0), (9.0, 9.0)];
    let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, etx: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 11, 0);
    let mut h = run_until(&mut m, &[], 100_000 * MS);
    let t = 100_250 * MS;
    let (parent, rank) = (m.rpl_parent(3), m.rpl_rank(3));
    let woken = h.events.len();
    m.rpl_link_result(t, 3, parent, false, 1, &mut h);
    m.rpl_link_result(t + MS, 3, parent, false, 1, &mut h);
    assert_eq!(m.rpl_rank(3), rank, "not at once");
    // one wake, at 101 s, for both outcomes
    let wakes: Vec<_> = h.heap.iter().filter(|r| r.0 .2 >= woken).map(|r| r.0 .0).collect();
    assert_eq!(wakes, [101_000 * MS]);
    m.rpl_timer(101_000 * MS, 3, rpl::RplTimer::Periodic, &mut h);
    assert!(m.rpl_rank(3) > rank, "{} after {rank}", m.rpl_rank(3));
}

#[test]
fn rpl_drops_a_packet_that_crosses_a_rank_inconsistency_twice() {
    // a chain root 0 — 1 — 2, 9 m apart, RPL on ETX; after 100 s mote 1 has joined below the
    // root (rank 128 + its link's ETX ≥ 256). A packet going up that comes from the root (rank
    // 128, closer than mote 1) crossed a loop: the first time it goes on, flagged, and mote 1
    // sends the sender a DIO; flagged already, it is dropped. Going down from the root is fine.
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, etx: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 5, 0);
    let mut h = run_until(&mut m, &[], 100_000 * MS);
    assert!(m.rpl_rank(1) >= 256 && m.rpl_rank(1) < 0xFFFF);
    let up_from_root = 128; // sender 0 (bits 16–31), rank 128, not down
    let mut p = Packet { id: PacketId(1), from: HostId(0), to: HostId(2), size: 15, note: up_from_root };
    let dio_to_root = |m: &Mesh| control_queued(m, 1, 0, |_| true);
    assert!(!dio_to_root(&m));
    assert!(!m.rpl_verify(100_000 * MS, 1, &mut p, &mut h));
    assert_ne!(p.note & (1 << 33), 0, "the rank error is set");
    assert!(dio_to_root(&m), "a DIO to the sender");
    assert!(m.rpl_verify(100_000 * MS, 1, &mut p, &mut h), "the second time it is dropped");
    let mut down = Packet { note: 128 | (1 << 32), ..p };
    down.note &= !(1 << 33);
    assert!(!m.rpl_verify(100_000 * MS, 1, &mut down, &mut h));
    assert_eq!(down.note & (1 << 33), 0);
}

/// A chain root 0 — 1 — 2, 9 m apart, nullmac on perfect links, RPL forming its DODAG with
/// parents on ETX: by 100 s mote 1 has a route to mote 2 through mote 2 itself.
fn etx_chain() -> (Mesh, Harness) {
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, etx: true, ..RplSpec::default() });
    let mut m = Mesh::new(s, 5, 0);
    let h = run_until(&mut m, &[], 100_000 * MS);
    (m, h)
}

/// Whether mote `n` has a control packet to mote `to` whose note passes `what` waiting for its
/// CPU.
fn control_queued(m: &Mesh, n: usize, to: u32, what: impl Fn(u64) -> bool) -> bool {
    let node = &m.nodes[n];
    std::iter::once(&node.current)
        .chain(node.jobs.iter())
        .any(|j| matches!(j, Job::Prepare(q) if rpl::is_control(q) && q.to == HostId(to) && what(q.note)))
}

/// Whether mote `n` has a No-Path DAO for `target` to mote `to` waiting for its CPU.
fn no_path_queued(m: &Mesh, n: usize, target: u32, to: u32) -> bool {
    control_queued(m, n, to, |note| matches!(rpl::decode(note), (rpl::Msg::Dao, a, 1, _) if a == target))
}

/// The hop-by-hop option of a packet the root (rank 128) sends down.
const DOWN_FROM_ROOT: u64 = 128 | 1 << 32;

#[test]
fn an_unusable_link_ends_the_routes_through_it_at_the_next_purge() {
    // rpl_process_parent_event: a fresh link whose ETX is above 8 (1024) is not usable, and
    // every route through it gets lifetime 0; rpl_purge_routes removes it at the periodic
    // timer's next second and sends the parent a No-Path DAO for its target. Four frames to
    // mote 2 make the link fresh (freshness 4); twelve outcomes without an ACK move its ETX by
    // 0.15 of the way to 10 · 128 each, from at most 2 · 128 (a new link) to at least 1052 (from
    // 128: 300, 447, 572, 678, 768, 845, 910, 965, 1012, 1052 after ten).
    let (mut m, mut h) = etx_chain();
    let t = 100_250 * MS;
    assert_eq!(m.rpl_next_hop(t, 1, 0, 2, DOWN_FROM_ROOT), 2);
    for _ in 0..4 {
        m.rpl_link_sent(t, 1, 2);
    }
    for _ in 0..12 {
        m.rpl_link_result(t, 1, 2, false, 1, &mut h);
    }
    // the outcomes flag mote 2 as a candidate; at 101 s its event ends the route (lifetime 0),
    // which stays in use until the purge at 102 s
    m.rpl_timer(101_000 * MS, 1, rpl::RplTimer::Periodic, &mut h);
    assert_eq!(m.rpl_next_hop(101_500 * MS, 1, 0, 2, DOWN_FROM_ROOT), 2);
    assert!(!no_path_queued(&m, 1, 2, 0));
    m.rpl_timer(102_000 * MS, 1, rpl::RplTimer::Purge, &mut h);
    assert!(no_path_queued(&m, 1, 2, 0), "the purge tells the parent");
    // without the route a packet on its way down has none; one of mote 1's own goes up
    assert_eq!(m.rpl_next_hop(102_000 * MS, 1, 0, 2, DOWN_FROM_ROOT), NONE);
    assert_eq!(m.rpl_next_hop(102_000 * MS, 1, 1, 2, 0), 0);
}

#[test]
fn a_packet_on_its_way_down_without_a_route_is_dropped_and_answered_with_a_no_path_dao() {
    // rpl_update_header_empty: mote 1 has no route to mote 0's own address (nothing below it
    // is mote 0); a packet for it coming down from the root (its down flag set) is a forwarding
    // error: dropped, and the root, a candidate parent of mote 1, gets a No-Path DAO for it.
    // The same packet going up (no down flag) goes on to the parent.
    let (mut m, mut h) = etx_chain();
    let t = 100_250 * MS;
    let p = Packet { id: PacketId(1), from: HostId(2), to: HostId(0), size: 15, note: DOWN_FROM_ROOT };
    let before = stats(&m)[1].drops.no_route;
    m.route(t, 1, p, &mut h);
    assert_eq!(stats(&m)[1].drops.no_route, before + 1);
    assert!(no_path_queued(&m, 1, 0, 0));
    assert_eq!(m.rpl_next_hop(t, 1, 2, 0, 0), 0);
}

#[test]
fn on_etx_a_withdrawn_route_ends_with_a_no_path_dao_of_its_own() {
    // A No-Path DAO from mote 2 flags mote 1's route to it for 60 s and goes up at once; when
    // the 60 s are over, the purge removes mote 1's route and tells the parent again
    // (`rpl_purge_routes`), a second chance where the first was lost.
    let (mut m, mut h) = etx_chain();
    let t = 100_250 * MS;
    m.dao_input(t, 1, 2, 2, true, &mut h);
    assert!(no_path_queued(&m, 1, 2, 0), "forwarded at once");
    m.nodes[1].jobs.clear();
    m.nodes[1].current = Job::Idle;
    assert_eq!(m.rpl_next_hop(t + 59_999 * MS, 1, 0, 2, DOWN_FROM_ROOT), 2);
    m.rpl_timer(t + 60_000 * MS, 1, rpl::RplTimer::Purge, &mut h);
    assert!(no_path_queued(&m, 1, 2, 0), "the purge's own");
    assert_eq!(m.rpl_next_hop(t + 60_000 * MS, 1, 0, 2, DOWN_FROM_ROOT), NONE);
}

#[test]
fn a_rank_above_max_rank_increase_detaches_the_mote_until_a_dio_lets_it_join_again() {
    // rpl_select_dag: mote 2's rank through mote 1 is at least mote 1's advertised rank plus one
    // hop (128). A DIO from mote 1 advertising the highest rank mote 2 may still take as a
    // candidate (in whole hops, its lowest rank plus MaxRankIncrease 896) puts mote 2's own a
    // hop above that: "New rank unacceptable": no parent, a No-Path DAO to mote 1, a local
    // repair (infinite rank). Mote 1's next DIO with its own rank lets it join again.
    let (mut m, mut h) = etx_chain();
    let t = 100_250 * MS;
    assert_eq!(m.rpl_parent(2), 1);
    let (own, min) = (m.rpl_rank(1), m.rpl_min_rank(2));
    let highest = (min + 896) / 128 * 128 + 127;
    m.dio_input(t, 2, 1, 0, highest, &mut h);
    assert_eq!((m.rpl_parent(2), m.rpl_rank(2)), (NONE, u32::MAX));
    assert!(no_path_queued(&m, 2, 2, 1));
    assert_eq!(stats(&m)[2].rpl_local_repairs, 1);
    let switches = stats(&m)[2].rpl_parent_switches;
    m.dio_input(t + 1_000 * MS, 2, 1, 0, own, &mut h);
    assert_eq!(m.rpl_parent(2), 1);
    assert_eq!(stats(&m)[2].rpl_parent_switches, switches + 1);
    assert!(m.rpl_rank(2) < u32::MAX);
}

#[test]
fn an_infinite_rank_from_the_parent_drops_it_without_a_local_repair() {
    // rpl_process_parent_event: a candidate's rank the mote may not take (here infinite, the
    // rank a detached mote advertises) nullifies it; the preferred parent goes, told by a
    // No-Path DAO, and nothing else is selected until the next event.
    let (mut m, mut h) = etx_chain();
    let t = 100_250 * MS;
    m.dio_input(t, 2, 1, 0, 0xFFFF, &mut h);
    assert_eq!((m.rpl_parent(2), m.rpl_rank(2)), (NONE, u32::MAX));
    assert!(no_path_queued(&m, 2, 2, 1));
    assert_eq!(stats(&m)[2].rpl_local_repairs, 0);
}

/// A link-local star: the server first at the origin, clients at `pos`, neighbour discovery with
/// a table of `cache` entries, every mote booted at 0.
fn nd_star(clients: &[(f64, f64)], cache: u32) -> Mesh {
    let mut pos = vec![(0.0, 0.0)];
    pos.extend_from_slice(clients);
    let mut s = spec(&pos, MacSpec::Nullmac, radio(1.0, 1.0));
    s.nodes[0].role = Role::Server;
    s.compression.link_local = true;
    s.rpl = None;
    s.nd = Some(NdSpec {
        cache,
        base_reachable_ms: 600_000,
        retrans_ms: 10_000,
        shared_random: false,
        reachable_ms: None,
        boot_spread_ns: 0,
        tcpip_start_ns: 0,
        app_start_ns: 0,
    });
    Mesh::new(s, 1, 0)
}

#[test]
fn neighbour_discovery_drops_the_first_packet_and_resolves_with_an_ns_and_an_na() {
    let mut m = nd_star(&[(5.0, 0.0)], 15);
    // the client's request at 0 finds no entry: dropped, its NS goes at the first periodic run
    // (12 ticks: 93.75 ms); the server's NA resolves it; the request at 1 s goes through
    let h = run_until(&mut m, &[(0, 1, 0, 15), (1_000 * MS, 1, 0, 15)], 10_000 * MS);
    assert_eq!(h.delivered.iter().map(|d| d.1.id.0).collect::<Vec<_>>(), [1]);
    assert_eq!(h.discarded.iter().map(|p| p.id.0).collect::<Vec<_>>(), [0]);
    let st = stats(&m);
    assert_eq!(st[1].drops.nd_unresolved, 1);
    // the NS goes on the air at 93.75 ms + 1 ms preparation + 224 µs turnaround
    assert_eq!(h.starts[0], (93_750_000 + 1_000_000 + 224_000, 1));
    // the server's NA makes its entry for the client DELAY (5 s of its clock: at 5 s), then
    // PROBE at the run after it, whose unicast NS the client answers: two frames each by 10 s
    assert_eq!((st[0].nd_frames_sent, st[1].nd_frames_sent), (2, 2));
    assert_eq!((st[0].nd_frames_received, st[1].nd_frames_received), (2, 2));
    // (DELAY becomes PROBE in the run at 5.0625 s, the 54th; the NS goes in the next: 5.15625 s)
    assert_eq!(h.starts.iter().filter(|s| s.1 == 0).nth(1).map(|s| s.0 / 1000), Some(5_157_474));
}

#[test]
fn a_boot_sequence_sets_the_periodic_runs_and_the_application_start() {
    // booted at 0, tcpip armed at tick 102 and the application at 103 (the star binaries): a
    // request one 10-s timer after the application starts, at tick 1383, leaves its NS at the
    // periodic run of tick 1386 (102 + 107·12); the NS timer runs to the clock's 20th second,
    // whose first periodic run is tick 2562, when the lost NS goes again
    let mut m = nd_star(&[(5.0, 0.0)], 15);
    let nd = m.spec.nd.as_mut().unwrap();
    (nd.tcpip_start_ns, nd.app_start_ns) = (102 * TICK_NS, 103 * TICK_NS);
    let mut m = Mesh::new(m.spec.clone(), 1, 0);
    assert_eq!(m.app_start_ns(1), Some(103 * TICK_NS));
    let request = (103 + 1280) * TICK_NS;
    let h = run_until(&mut m, &[(request, 1, 0, 15)], 12_000 * MS);
    assert_eq!(h.starts[0], (1386 * TICK_NS + 1_000_000 + 224_000, 1));
    // the same at the edge of the range with RX 0 (UDGM: a reception succeeds with probability
    // 1 − (d/R)²·(1 − RX), here 0.0002): the NS is not answered
    let mut m = nd_star(&[(9.999, 0.0)], 15);
    let nd = m.spec.nd.as_mut().unwrap();
    (nd.tcpip_start_ns, nd.app_start_ns) = (102 * TICK_NS, 103 * TICK_NS);
    m.spec.radio = radio(1.0, 0.0);
    let mut m = Mesh::new(m.spec.clone(), 1, 0);
    let h = run_until(&mut m, &[(request, 1, 0, 15)], 21_000 * MS);
    let ns: Vec<u64> = h.starts.iter().filter(|s| s.1 == 1).map(|s| s.0).collect();
    assert_eq!(ns, [1386 * TICK_NS + 1_224_000, 2562 * TICK_NS + 1_224_000]);
}

#[test]
fn a_multicast_ns_for_another_mote_is_dropped_by_its_hearers() {
    // two clients within range of each other: each one's multicast NS for the server reaches
    // the other, whose IP input drops it (a router build, not its solicited-node group): the
    // server learns both, neither client the other
    let mut m = nd_star(&[(5.0, 0.0), (0.0, 5.0)], 15);
    let h = run_until(&mut m, &[(0, 1, 0, 15), (500 * MS, 2, 0, 15)], 2_000 * MS);
    assert!(h.starts.iter().any(|s| s.1 == 2), "the second client's NS went out");
    assert!(m.nd[0].knows(1) && m.nd[0].knows(2));
    assert!(m.nd[1].knows(0) && m.nd[2].knows(0));
    assert!(!m.nd[1].knows(2) && !m.nd[2].knows(1));
}

#[test]
fn a_server_answers_only_the_clients_in_its_neighbour_table() {
    // three clients, a table of two: A's, B's and C's NSs (at the runs after 0, 200 and 400 ms)
    // leave B and C in the server's table; at 1 s each client asks and the server answers at
    // once: A's answer takes B's entry for an unresolved one and is dropped, B's takes that same
    // entry over and is dropped, C's goes (no NS from the server before its 10-s timer)
    // (120° apart on a 9-m circle: 15.6 m from each other, beyond the range, so no client hears
    // another's NS)
    let mut m = nd_star(&[(9.0, 0.0), (-4.5, 7.794), (-4.5, -7.794)], 2);
    let sends = [
        (0, 1, 0, 15),
        (200 * MS, 2, 0, 15),
        (400 * MS, 3, 0, 15),
        (1_000 * MS, 1, 0, 15),
        (1_200 * MS, 2, 0, 15),
        (1_400 * MS, 3, 0, 15),
        (1_100 * MS, 0, 1, 15),
        (1_300 * MS, 0, 2, 15),
        (1_500 * MS, 0, 3, 15),
    ];
    let h = run_until(&mut m, &sends, 1_900 * MS);
    let to_clients: Vec<u32> = h.delivered.iter().filter(|d| d.1.from.0 == 0).map(|d| d.1.to.0).collect();
    assert_eq!(to_clients, [3]);
    let st = stats(&m);
    assert_eq!(st[0].drops.nd_unresolved, 2);
    // three requests of the second round reach the server (the clients resolved it first)
    assert_eq!(h.delivered.iter().filter(|d| d.1.to.0 == 0).count(), 3);
    assert_eq!(st[0].nd_frames_sent, 3); // its three NAs; nothing else before 1.9 s
}

/// A Cooja-mote diamond: the border router at (0, 0), motes 1 and 2 one hop from it, mote 3
/// 9 m from both and 12.7 m from the root (out of range): two candidate parents of equal rank.
/// Mote 3 sends to the root every 100 ms for 300 s; RX ratio `p_rx`; RPL forms its DODAG,
/// parents by MRHOF on ETX when `etx`.
fn cooja_diamond(etx: bool, p_rx: f64) -> (usize, Vec<NodeStats>) {
    let pos = [(0.0, 0.0), (0.0, 9.0), (9.0, 0.0), (9.0, 9.0)];
    let mut s = spec(&pos, MacSpec::Nullmac, RadioSpec { tx_turnaround_us: 0, cca_range_m: 10.0, ..radio(1.0, p_rx) });
    s.cpu = CpuSpec::new(CoojaMoteSpec::RX_PROCESS_US, CoojaMoteSpec::TX_PREPARE_US, 0, 1);
    s.cooja_mote = Some(CoojaMoteSpec::MEASURED);
    s.rpl = Some(RplSpec { startup: true, etx, ..RplSpec::default() });
    let mut m = Mesh::new(s, 11, 0);
    let sends: Vec<_> = (1..3000).map(|k| (k * 100 * MS, 3, 0, 15)).collect();
    let h = run_until(&mut m, &sends, 310_000 * MS);
    (h.delivered.len(), stats(&m))
}

/// Mobility from a trace: mote 1 leaves the border router's range at 1 s (to 100 m) and comes
/// back at 3 s; the trace then starts over from 3 s (away at 4 s, back at 6 s). Its packets
/// reach the router while it is in range and are dropped for want of a route otherwise; its
/// trail holds where it was every second.
#[test]
fn a_mote_that_moves_away_loses_its_route_and_finds_it_again() {
    use super::mobility::{Area, MobilitySource, MobilitySpec, Move};
    let moves = vec![Move { mote: 1, t: 1.0, x: 100.0, y: 0.0 }, Move { mote: 1, t: 3.0, x: 9.0, y: 0.0 }];
    let mobility = MobilitySpec {
        area: Area { x_min: 0.0, y_min: 0.0, x_max: 100.0, y_max: 100.0 },
        sample_s: 1.0,
        trail_every_s: 1.0,
        source: MobilitySource::Trace(moves),
    };
    let spec =
        MeshSpec { mobility: Some(mobility), ..spec(&[(0.0, 0.0), (9.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0)) };
    let mut m = Mesh::new(spec, 1, 0);
    let s = 1_000_000_000;
    let sends = [(s / 2, 1, 0, 15), (2 * s, 1, 0, 15), (3 * s + s / 2, 1, 0, 15), (4 * s + s / 2, 1, 0, 15)];
    let h = run_until(&mut m, &sends, 5 * s + s / 2);
    assert_eq!(h.delivered.len(), 2, "the sends at 0.5 s and 3.5 s");
    let st = stats(&m);
    assert_eq!(st[1].drops.no_route, 2, "the sends at 2 s and 4.5 s");
    assert_eq!(m.positions()[1], (100.0, 0.0), "away again since 4 s");
    let r = m.report();
    // at 0 (start), 1, 2, 3, 4 s; the point of 5 s is taken at the next move (6 s), after the run
    assert_eq!(r.nodes[1].trail, vec![[9.0, 0.0], [100.0, 0.0], [100.0, 0.0], [9.0, 0.0], [100.0, 0.0]]);
    assert!(r.nodes[0].trail.is_empty(), "the router does not move");
}

#[test]
fn a_mote_out_of_the_dodag_solicits_it_when_the_run_says() {
    // the chain above: mote 2 is out of the DODAG until after the root's first DIO (2.05 s at
    // the earliest). Its first DIS, given at 1.234 s, is prepared (1 ms) and goes on the air after
    // the 224-µs turnaround: its first frame starts at 1.235224 s. Drawn, a DIS goes a whole
    // number of seconds after boot, so its frame would start at 1.001224 s or n + 0.001224 s.
    let mut s = spec(&[(0.0, 0.0), (9.0, 0.0), (18.0, 0.0)], MacSpec::Nullmac, radio(1.0, 1.0));
    s.rpl = Some(RplSpec { startup: true, ..RplSpec::default() });
    s.dis_first_ns = vec![None, None, Some(1_234 * MS)];
    let mut m = Mesh::new(s.clone(), 5, 0);
    let h = run_until(&mut m, &[], 2_000 * MS);
    let first = h.starts.iter().find(|st| st.1 == 2).map(|st| st.0);
    assert_eq!(first, Some(1_235_224_000));
    s.dis_first_ns.clear();
    let mut m = Mesh::new(s, 5, 0);
    let h = run_until(&mut m, &[], 2_000 * MS);
    let drawn = h.starts.iter().find(|st| st.1 == 2).map(|st| st.0);
    assert!(drawn.is_none_or(|t| t % 1_000_000_000 == 1_224_000), "{drawn:?}");
}
