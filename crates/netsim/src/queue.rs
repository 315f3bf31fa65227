//! The event queue: integer-nanosecond times, ties broken by a rank (the mesh: the node id of
//! the mote an event acts at; 0 for every event of the wired bottleneck), then by insertion order.
//! The rank lives in the top 16 bits of the insertion number, so ranking costs nothing.
//!
//! Besides a binary heap for events at arbitrary times (timers), it keeps FIFO lanes for event
//! streams whose times never decrease (the deliveries of one network path, which are FIFO): a
//! lane costs O(1) per event instead of the heap's O(log n), and under congestion collapse most
//! events are deliveries. Popping takes the smallest (time, insertion number) over the heap and
//! the lanes' fronts, so the order is exactly that of a single heap. The earliest lane front is
//! remembered, and found again only when a lane is popped or an empty lane gets an entry, so a
//! pop from the heap does not look at the lanes.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// An entry: fires at `time`; `seq` orders entries of equal time by rank (its top 16 bits),
/// then by insertion. The two are one 128-bit key (time in the high half), so that ordering
/// entries is one comparison.
#[derive(Debug)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// Bits of `seq` below the rank.
const RANK_SHIFT: u32 = 48;

impl<E> Entry<E> {
    fn new(time: u64, seq: u64, event: E) -> Self {
        Entry { key: (time as u128) << 64 | seq as u128, event }
    }
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
    // the heap compares with `<=`: one reversed key comparison
    fn le(&self, o: &Self) -> bool {
        o.key <= self.key
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// A deterministic priority queue of events with FIFO lanes.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    lanes: Vec<VecDeque<Entry<E>>>,
    seq: u64,
    /// The earliest lane front: its key and lane (`NO_LANE` when every lane is empty). A lane's
    /// front changes only when it is popped or when it was empty, so this is recomputed then,
    /// not at every pop.
    first_lane: (u128, usize),
}

const NO_LANE: (u128, usize) = (u128::MAX, usize::MAX);

/// Whether a lane front of `key` comes before `first` (any front does when `first` is
/// `NO_LANE`, even one with the largest key).
fn before(key: u128, first: (u128, usize)) -> bool {
    key < first.0 || first.1 == usize::MAX
}

impl<E> EventQueue<E> {
    /// A queue with `lanes` FIFO lanes.
    pub fn new(lanes: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            lanes: (0..lanes).map(|_| VecDeque::new()).collect(),
            seq: 0,
            first_lane: NO_LANE,
        }
    }
    /// The ordering number of the next entry of rank `rank`.
    fn next_seq(&mut self, rank: u16) -> u64 {
        let seq = (rank as u64) << RANK_SHIFT | self.seq;
        self.seq += 1;
        debug_assert!(self.seq < 1 << RANK_SHIFT);
        seq
    }
    /// Schedules `event` at `time` (ns), rank 0.
    pub fn push(&mut self, time: u64, event: E) {
        self.push_ranked(time, 0, event);
    }
    /// Schedules `event` at `time` (ns); equal times pop in ascending `rank`, then in insertion
    /// order.
    pub fn push_ranked(&mut self, time: u64, rank: u16, event: E) {
        let seq = self.next_seq(rank);
        self.heap.push(Entry::new(time, seq, event));
    }
    /// Schedules `event` at `time` with `rank` on a FIFO lane; an entry that would pop before
    /// the lane's last one goes to the heap instead, so order stays exact.
    pub fn push_lane(&mut self, lane: usize, time: u64, rank: u16, event: E) {
        let entry = Entry::new(time, self.next_seq(rank), event);
        let l = &mut self.lanes[lane];
        match l.back() {
            Some(last) if last.key > entry.key => self.heap.push(entry),
            Some(_) => l.push_back(entry),
            None => {
                // the lane's new front
                if before(entry.key, self.first_lane) {
                    self.first_lane = (entry.key, lane);
                }
                l.push_back(entry);
            }
        }
    }

    /// Finds the earliest lane front again (after its lane was popped).
    fn find_first_lane(&mut self) {
        let mut first = NO_LANE;
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(front) = l.front() {
                if before(front.key, first) {
                    first = (front.key, i);
                }
            }
        }
        self.first_lane = first;
    }

    /// The earliest event, ties in insertion order.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        // the lane with the earliest front, if it is earlier than the heap's top (an empty heap
        // reads as the largest key, which any lane's front beats, even one with that key)
        let (key, lane) = self.first_lane;
        let lane_first = match self.heap.peek() {
            Some(top) => lane != usize::MAX && key < top.key,
            None => lane != usize::MAX,
        };
        let e = if lane_first {
            let e = self.lanes[lane].pop_front()?;
            self.find_first_lane();
            e
        } else {
            self.heap.pop()?
        };
        Some((e.time(), e.event))
    }
    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }
    /// No events waiting?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_insertion_order() {
        let mut q = EventQueue::new(0);
        q.push(5, 'a');
        q.push(1, 'b');
        q.push(5, 'c');
        q.push(1, 'd');
        let order: String = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(order, "bdac");
    }

    #[test]
    fn lanes_merge_exactly_like_one_heap() {
        // the same pushes into a lane-less queue and into lanes pop in the same order
        let pushes =
            [(0, 3, 'a'), (1, 3, 'b'), (2, 1, 'c'), (0, 3, 'd'), (1, 7, 'e'), (2, 2, 'f'), (0, 2, 'g'), (2, 9, 'h')];
        let mut plain = EventQueue::new(0);
        let mut laned = EventQueue::new(2);
        for (lane, t, e) in pushes {
            plain.push(t, e);
            if lane < 2 {
                laned.push_lane(lane, t, 0, e);
            } else {
                laned.push(t, e);
            }
        }
        let a: String = std::iter::from_fn(|| plain.pop().map(|e| e.1)).collect();
        let b: String = std::iter::from_fn(|| laned.pop().map(|e| e.1)).collect();
        assert_eq!(a, "cfgabdeh");
        assert_eq!(a, b);
    }

    #[test]
    fn equal_times_pop_by_rank_then_insertion() {
        let mut q = EventQueue::new(1);
        q.push_ranked(5, 3, 'a');
        q.push_ranked(5, 1, 'b');
        q.push_lane(0, 5, 2, 'c');
        q.push_lane(0, 5, 1, 'd'); // would pop before the lane's 'c': goes to the heap
        q.push_ranked(4, 9, 'e');
        q.push(5, 'f');
        q.push_ranked(5, 1, 'g');
        let order: String = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(order, "efbdgca");
    }

    proptest::proptest! {
        #[test]
        fn interleaved_pushes_and_pops_keep_the_order_of_one_heap(
            ops in proptest::collection::vec((0u8..5, 0u64..50), 1..200),
        ) {
            // op 0–2: push on lane op (FIFO lanes get times that mostly grow), 3: push on the
            // heap, 4: pop; every pop must equal the lane-less queue's
            let mut plain = EventQueue::new(0);
            let mut laned = EventQueue::new(3);
            let mut clock = [0u64; 3];
            for (n, &(op, dt)) in ops.iter().enumerate() {
                match op {
                    0..=2 => {
                        let lane = op as usize;
                        // a time before the lane's last now and then: it goes to the heap
                        clock[lane] = if dt % 7 == 0 { clock[lane].saturating_sub(dt) } else { clock[lane] + dt };
                        plain.push(clock[lane], n);
                        laned.push_lane(lane, clock[lane], 0, n);
                    }
                    3 => {
                        plain.push(dt, n);
                        laned.push(dt, n);
                    }
                    _ => proptest::prop_assert_eq!(plain.pop(), laned.pop()),
                }
            }
            while let Some(e) = plain.pop() {
                proptest::prop_assert_eq!(Some(e), laned.pop());
            }
            proptest::prop_assert!(laned.pop().is_none());
        }
    }
}
