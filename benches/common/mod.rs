//! Shared by the σ benchmarks (`#[path]`): the matmul sizes, a median wall
//! time with its peak heap, the load average, the read-by-read check.
#![allow(dead_code)]

use arrayflow::budget;
use arrayflow::dataflow::{Config, Flow};
use std::time::{Duration, Instant};

/// Sizes `N = n`, budgets out of the way.
pub fn config(n: i64) -> Config {
    Config {
        params: vec![("N".to_string(), n)],
        max_trips: 4,
        max_instances: 200_000_000,
        max_memory: u64::MAX,
    }
}

/// Panics unless `a` and `b` have the same reads, sources and initial flags.
pub fn same_reads(a: &Flow, b: &Flow) {
    assert_eq!(a.len(), b.len(), "same reads");
    for (x, y) in a.iter().zip(b.iter()) {
        assert!(
            x.initial() == y.initial() && x.writes().eq(y.writes()),
            "read {} differs",
            x.index()
        );
    }
}

/// Median wall time of 5 runs of `f` and the largest peak heap above what
/// was live before (the binary's allocator must be `budget::Counting`).
pub fn wall<T>(mut f: impl FnMut() -> T) -> (Duration, u64) {
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..5 {
        let before = budget::live().unwrap_or(0);
        budget::reset_peak();
        let t = Instant::now();
        let r = f();
        times.push(t.elapsed());
        peak = peak.max(budget::peak().unwrap_or(0).saturating_sub(before));
        drop(r);
    }
    times.sort();
    (times[2], peak)
}

/// The 1-minute load average.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

/// 9 alternating pairs of `run(1)` and `run(2)` (1 and 2 threads), so that
/// a change of load on the shared machine falls on both alike: the sorted
/// ratios of the pairs' times, and the fastest time at each count (the
/// run the machine's other tenants disturbed least). What `run` returns is
/// dropped after its time is taken, as in [`wall`]: freeing the result is
/// not part of computing it (and runs on one thread at every count).
pub fn alternating<T>(mut run: impl FnMut(usize) -> T) -> Pairs {
    let mut ratios = Vec::new();
    let mut best = [f64::MAX; 2];
    for _ in 0..9 {
        let [a, b] = [1, 2].map(|t| {
            let start = Instant::now();
            let r = run(t);
            let s = start.elapsed().as_secs_f64();
            drop(r);
            best[t - 1] = best[t - 1].min(s);
            s
        });
        ratios.push(a / b);
    }
    ratios.sort_by(f64::total_cmp);
    Pairs { ratios, best }
}

/// What [`alternating`] measured.
pub struct Pairs {
    /// The 9 ratios (1 thread / 2 threads), sorted.
    ratios: Vec<f64>,
    /// The fastest time at 1 and 2 threads, in seconds.
    best: [f64; 2],
}

impl Pairs {
    /// The median ratio and its range: `1.65x (1.21x to 1.96x)`.
    pub fn spread(&self) -> String {
        let r = &self.ratios;
        format!("{:.2}x ({:.2}x to {:.2}x)", r[4], r[0], r[8])
    }

    /// The fastest run at each count and their ratio: `323.5 / 190.2 ms, 1.70x`.
    pub fn fastest(&self) -> String {
        let [a, b] = self.best;
        format!("{:.1} / {:.1} ms, {:.2}x", a * 1e3, b * 1e3, a / b)
    }
}

/// Criterion as the σ benchmarks run it: 10 samples of 5 s after 0.5 s of
/// warm-up (a run takes up to a few hundred milliseconds).
pub fn criterion() -> criterion::Criterion {
    criterion::Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
}
