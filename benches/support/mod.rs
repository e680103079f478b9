//! Code shared by the benchmarks: a counting global allocator (peak heap
//! use) and thread CPU time (the machine is shared, so wall time would count
//! other people's work).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Counting;

pub static CURRENT: AtomicUsize = AtomicUsize::new(0);
pub static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                    + (new_size - layout.size());
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// CPU time of this thread.
pub fn cpu() -> Duration {
    let ns = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()));
    match ns {
        Some(ns) => Duration::from_nanos(ns),
        None => Instant::now().duration_since(*START.get_or_init(Instant::now)),
    }
}

static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Runs `f`, returning its result and the CPU time it took.
pub fn cpu_time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = cpu();
    let r = f();
    (r, cpu() - t)
}

/// Runs `f`, returning its result, CPU time and peak heap bytes above what
/// was live before.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Duration, usize) {
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let (r, t) = cpu_time(f);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    (r, t, peak)
}

/// Criterion as the benches use it: 10 samples, short warm-up, 5 s each.
pub fn criterion() -> criterion::Criterion {
    criterion::Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
}
