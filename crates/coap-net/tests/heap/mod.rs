//! Live heap bytes, for the tests that bound what a component keeps: the test binary's global
//! allocator counts (stats_alloc). Included only by those tests, each a binary of one test, so
//! that nothing else allocates meanwhile.

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Heap bytes in use.
pub fn live() -> isize {
    let s = GLOBAL.stats();
    s.bytes_allocated as isize - s.bytes_deallocated as isize + s.bytes_reallocated
}
