//! How the endpoint's long-lived queues grow and shrink: by a quarter, not double, and back down
//! when they are less than half full. A simulation holds thousands of endpoints, each with
//! queues of a few dozen entries (finished exchanges), and a server's deduplication queue is its
//! largest allocation: a doubling queue holds up to twice what it needs, at the worst moment.
//! (Tested through the finished exchanges' queues: `finished::tests`.)

use std::collections::VecDeque;

/// Makes room for one more entry in `q`, growing it by a quarter (at least `at_least` entries)
/// when it is full.
pub(crate) fn room_for_one<T>(q: &mut VecDeque<T>, at_least: usize) {
    if q.len() == q.capacity() {
        q.reserve_exact((q.len() / 4).max(at_least));
    }
}

/// Gives memory back when `q` is less than half full, keeping a quarter to spare.
pub(crate) fn shrink_if_sparse<T>(q: &mut VecDeque<T>) {
    if q.capacity() > 8 && q.len() < q.capacity() / 2 {
        q.shrink_to(q.len() + q.len() / 4);
    }
}
