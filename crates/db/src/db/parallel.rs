//! σ of a file's kernels on rayon's threads (docs/scaling.md).
//!
//! Each kernel's σ depends on its own local program only (`kernel_flow`),
//! so kernels are independent. A large kernel already spreads its batches
//! over the threads (`dataflow::parallel`); the small ones (too few reads
//! for two batches) run sequentially inside, so they are what running
//! kernels side by side gains on. Small kernels only: two large ones at
//! once would hold both working sets, raising the peak memory (and so
//! which programs a memory budget refuses) over the sequential run's.
//! The results are the queries' own, computed earlier: what is printed is
//! the same at every thread count.

use super::{kernel_flow, kernels, settings, Database, SourceFile};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Access instances up to which a kernel counts as small: its σ runs on
/// one thread anyway (`dataflow::parallel` needs two batches of 8192
/// readers).
pub const SMALL: u64 = 1 << 14;

/// Kernels analysed by [`kernel_flows`] so far in this process (tests).
static PREFETCHED: AtomicU64 = AtomicU64::new(0);

#[doc(hidden)]
pub fn prefetched() -> u64 {
    PREFETCHED.load(Relaxed)
}

/// Computes σ of the small kernels of `file` side by side on the current
/// rayon pool's threads, before a command reads them in order. Nothing
/// when the pool has one thread, when the file has fewer than two small
/// kernels, or on a dd cluster (its runs connect the processes kernel by
/// kernel, in order, and the cluster is this thread's).
pub fn kernel_flows(db: &Database, file: SourceFile) {
    #[cfg(feature = "dd")]
    if crate::dataflow::dd::installed().is_some() {
        return;
    }
    if rayon::current_num_threads() < 2 {
        return;
    }
    let all = kernels(db, file);
    if all.len() < 2 {
        // Nothing to run side by side: no count either.
        return;
    }
    let config = settings(db);
    let small: Vec<_> = all
        .iter()
        .copied()
        .filter(|k| {
            let local = &k.program(db).program;
            // A kernel that cannot be counted up front stays in order.
            matches!(crate::facts::count::of(local, &config),
                Ok(Some(c)) if c.instances <= SMALL)
        })
        .collect();
    if small.len() < 2 {
        return;
    }
    small.par_iter().for_each_with(db.clone(), |db, &k| {
        let _ = kernel_flow(db, k);
        PREFETCHED.fetch_add(1, Relaxed);
    });
}
