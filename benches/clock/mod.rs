//! Clocks for the benchmarks: the machine is shared, so the figure for "one
//! core" is this thread's CPU time.

use std::time::{Duration, Instant};

/// Time since an arbitrary origin.
pub fn wall() -> Duration {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed()
}

/// CPU time this thread has run (Linux: /proc/thread-self/schedstat, in
/// nanoseconds); wall time where that is not available.
pub fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(wall, Duration::from_nanos)
}
