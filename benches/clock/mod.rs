//! Clocks for the benchmarks: the machine is shared, so the figure for "one
//! core" is this thread's CPU time.

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use std::time::{Duration, Instant};

/// Benchmarks `run` twice: by wall-clock time, and by this thread's CPU time
/// (`NAME (thread CPU time)`). What `run` returns is dropped outside the
/// timing (a caller keeps it), each before the next run, so memory stays
/// flat.
pub fn wall_and_cpu<T>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    mut run: impl FnMut() -> T,
) {
    for (suffix, clock) in [
        ("", wall as fn() -> Duration),
        (" (thread CPU time)", thread_cpu),
    ] {
        g.bench_function(format!("{name}{suffix}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = clock();
                    let out = run();
                    total += clock().saturating_sub(start);
                    drop(out);
                }
                total
            })
        });
    }
}

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
