//! The memory budget: how many bytes an analysis may hold, how many it holds
//! now, and the error when it would take more.
//!
//! Two mechanisms, because either alone lets an allocation abort the process:
//! - *estimates* before every large allocation (instances × bytes per
//!   instance): [`reserve`] refuses a request that would go over before
//!   anything is allocated;
//! - *polling*: [`check`] is called in the engine's hot loops and fails once
//!   the live bytes exceed the limit.
//!
//! Live bytes are known only when the binary installs [`Counting`] as its
//! global allocator (`src/main.rs`); a library user without it gets the
//! estimates alone ([`live`] is `None`). Each thread passes its changes on
//! in steps of up to 256 KB (`SLACK`), so the count and the peak lag the
//! truth by at most that much per thread.
//!
//! The limit is process-wide ([`set_limit`], `--max-memory`): live bytes are
//! too. Its default is half of the smallest of physical memory, the
//! address-space limit (`ulimit -v`) and the cgroup's memory limit, so that
//! the default also holds under `ulimit -v`; the other half is headroom for
//! the allocation that crosses the limit between two polls.

use std::alloc::{GlobalAlloc, Layout};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The limit in bytes; 0 until set or first read (then the default).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// A global allocator that counts the bytes live and their peak, around
/// another allocator.
pub struct Counting<A> {
    inner: A,
}

impl<A> Counting<A> {
    pub const fn new(inner: A) -> Counting<A> {
        Counting { inner }
    }
}

/// Marks the allocator installed: a load first, since a store on every
/// allocation would make every thread's allocations write one cache line.
fn installed() {
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
}

/// Bytes a thread allocates (or frees) before it updates the shared count:
/// one shared counter written on every allocation made threads queue on its
/// cache line. The count lags by at most this much per thread.
const SLACK: isize = 256 * 1024;

std::thread_local! {
    static DELTA: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

/// Adds `d` bytes to this thread's pending change; past [`SLACK`] either
/// way, to the shared count (and the peak).
fn change(d: isize) {
    let pending = DELTA.try_with(|c| {
        let v = c.get() + d;
        if v.abs() < SLACK {
            c.set(v);
            0
        } else {
            c.set(0);
            v
        }
    });
    // During thread teardown the thread-local is gone: count directly.
    let v = pending.unwrap_or(d);
    if v > 0 {
        let now = LIVE.fetch_add(v as usize, Relaxed) + v as usize;
        // A load first: the peak rarely moves, and a plain load is cheap.
        if now > PEAK.load(Relaxed) {
            PEAK.fetch_max(now, Relaxed);
        }
    } else if v < 0 {
        // Saturating: bytes a finished thread allocated but never passed on
        // may be freed by another; the count must not wrap below zero.
        let n = v.unsigned_abs();
        let _ = LIVE.fetch_update(Relaxed, Relaxed, |x| Some(x.saturating_sub(n)));
    }
}

fn grew(size: usize) {
    change(size as isize);
}

// SAFETY: every method forwards to `inner` with the same arguments; the
// counters are only bookkeeping and never unwind.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc(layout);
        if !p.is_null() {
            installed();
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc_zeroed(layout);
        if !p.is_null() {
            installed();
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.inner.dealloc(ptr, layout);
        change(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.inner.realloc(ptr, layout, new_size);
        if !p.is_null() {
            change(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes live now, when the counting allocator is installed.
pub fn live() -> Option<u64> {
    INSTALLED.load(Relaxed).then(|| LIVE.load(Relaxed) as u64)
}

/// The most bytes live at once since the start (or [`reset_peak`]), when
/// the counting allocator is installed.
pub fn peak() -> Option<u64> {
    INSTALLED.load(Relaxed).then(|| PEAK.load(Relaxed) as u64)
}

/// Starts measuring the peak from the bytes live now (benchmarks).
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The memory budget in bytes (the default until [`set_limit`]).
pub fn limit() -> u64 {
    match LIMIT.load(Relaxed) {
        0 => {
            let d = default_limit();
            // Another thread may have set it meanwhile: keep theirs.
            let _ = LIMIT.compare_exchange(0, d, Relaxed, Relaxed);
            LIMIT.load(Relaxed)
        }
        n => n,
    }
}

/// Sets the memory budget of every later analysis in this process
/// (`--max-memory`, the language server's `maxMemory`). 0 means the default.
pub fn set_limit(bytes: u64) {
    LIMIT.store(if bytes == 0 { default_limit() } else { bytes }, Relaxed);
}

/// Half of the smallest of: physical memory, the soft address-space limit,
/// the cgroup memory limit. Without any of them (not Linux): 8 GiB.
pub fn default_limit() -> u64 {
    let mut m = u64::MAX;
    for v in [physical(), address_space(), cgroup()]
        .into_iter()
        .flatten()
    {
        m = m.min(v);
    }
    if m == u64::MAX {
        8 << 30
    } else {
        (m / 2).max(64 << 20)
    }
}

fn physical() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

fn address_space() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    // "Max address space  <soft>  <hard>  bytes": the soft limit.
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn cgroup() -> Option<u64> {
    let text = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok()?;
    text.trim().parse().ok()
}

/// A request that would hold more bytes than the budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// What needed the memory, e.g. "the access instances (12000000)".
    pub what: String,
    /// Bytes it needed (live, with what the threads have not passed on
    /// yet, plus the estimate), or the live bytes seen (with the same).
    pub bytes: u64,
    pub limit: u64,
    /// Refused before allocating, from an estimate (else: seen live).
    pub estimated: bool,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.estimated {
            "would need"
        } else {
            "reached"
        };
        write!(
            f,
            "the analysis {how} {} of memory for {}, over the budget of {}; lower \
             the parameters with `--param NAME=INT`, or raise the budget with `--max-memory SIZE`",
            show(self.bytes),
            self.what,
            show(self.limit)
        )
    }
}

impl std::error::Error for Exceeded {}

/// The most bytes the shared count may lag behind the heap: [`SLACK`] per
/// thread that may hold a pending change (every core's worker, plus the
/// main thread and one more).
fn lag() -> u64 {
    static LAG: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LAG.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores as u64 + 2) * SLACK as u64
    })
}

/// Fails when the live bytes, counted with what the threads have not yet
/// passed on, may exceed `limit` (never without the counting allocator).
/// Cheap: two relaxed loads.
pub fn check(limit: u64, what: impl FnOnce() -> String) -> Result<(), Exceeded> {
    match live() {
        Some(now) if now.saturating_add(lag()) > limit => Err(Exceeded {
            what: what(),
            bytes: now.saturating_add(lag()),
            limit,
            estimated: false,
        }),
        _ => Ok(()),
    }
}

/// Fails when `bytes` more than the live bytes (with their lag; or `bytes`
/// alone, without the counting allocator) would exceed `limit`: call
/// before allocating them.
pub fn reserve(bytes: u64, limit: u64, what: impl FnOnce() -> String) -> Result<(), Exceeded> {
    // With the lag: what the count may not show yet is counted as needed.
    let total = match live() {
        Some(now) => now.saturating_add(lag()).saturating_add(bytes),
        None => bytes,
    };
    if total > limit {
        return Err(Exceeded {
            what: what(),
            bytes: total,
            limit,
            estimated: true,
        });
    }
    Ok(())
}

/// Parses a size: an integer of bytes with an optional suffix K, M, G, T
/// (powers of 1024; a trailing `B`/`iB` is allowed), e.g. `512M`, `2GiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (digits, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("`{t}` is not a size (an integer with K, M, G or T)"))?;
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{t}` is too large"))?;
    if bytes == 0 {
        return Err("the memory budget must be positive".to_string());
    }
    Ok(bytes)
}

/// A byte count for messages: `1.5 GiB`, `300 MiB`, `12 KiB`, `80 B`.
pub fn show(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (name, shift) in UNITS {
        if bytes >= 1 << shift {
            let v = bytes as f64 / (1u64 << shift) as f64;
            return if v < 10.0 {
                format!("{v:.1} {name}")
            } else {
                format!("{v:.0} {name}")
            };
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("3kb"), Ok(3 << 10));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn sizes_show() {
        assert_eq!(show(80), "80 B");
        assert_eq!(show(3 << 29), "1.5 GiB");
        assert_eq!(show(300 << 20), "300 MiB");
    }

    #[test]
    fn reserve_refuses_over_the_limit() {
        let e = reserve(u64::MAX / 2, 1 << 20, || "x".to_string()).unwrap_err();
        assert!(e.estimated);
        assert_eq!(e.limit, 1 << 20);
        assert!(reserve(0, u64::MAX, || "x".to_string()).is_ok());
    }

    #[test]
    fn default_limit_is_positive() {
        assert!(default_limit() >= 64 << 20);
    }
}
