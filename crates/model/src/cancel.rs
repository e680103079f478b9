//! Stopping a long computation whose answer is no longer wanted.
//!
//! A question asked through the database runs with a [`Watch`] installed
//! on its thread ([`watching`]). The engines call [`poll`] at points a few
//! milliseconds apart (each operation lowered, each batch of reads, each
//! class, each statement printed); when the watch says the answer is
//! stale, `poll` unwinds the way the database expects, and the question
//! returns "cancelled". Threads an engine starts get the same watch
//! ([`current`], then [`watching`] inside the thread), so work split over
//! threads stops too. Without a watch (the command line, a layer's own
//! tests) `poll` only reads one thread-local.

use std::cell::RefCell;
use std::sync::Arc;

/// Tells whether the question running is stale, and unwinds it.
pub trait Watch: Send + Sync {
    /// Whether the answer is no longer wanted.
    fn stale(&self) -> bool;
    /// Unwinds the current thread (never returns).
    fn stop(&self) -> !;
}

thread_local! {
    static WATCH: RefCell<Option<Arc<dyn Watch>>> = const { RefCell::new(None) };
}

/// Runs `f` with `watch` installed on this thread (and the one before
/// restored after, also when `f` unwinds).
pub fn watching<R>(watch: Option<Arc<dyn Watch>>, f: impl FnOnce() -> R) -> R {
    let _entered = enter(&watch);
    f()
}

/// Installs `watch` on this thread until the guard is dropped: the first
/// line of a closure another thread runs, with the watch [`current`] gave
/// where the work was split.
pub fn enter(watch: &Option<Arc<dyn Watch>>) -> Entered {
    let before = WATCH.with(|w| std::mem::replace(&mut *w.borrow_mut(), watch.clone()));
    Entered(before)
}

/// Restores the watch [`enter`] replaced.
pub struct Entered(Option<Arc<dyn Watch>>);

impl Drop for Entered {
    fn drop(&mut self) {
        let before = self.0.take();
        WATCH.with(|w| *w.borrow_mut() = before);
    }
}

/// The watch of this thread, to hand to the threads a computation starts.
pub fn current() -> Option<Arc<dyn Watch>> {
    WATCH.with(|w| w.borrow().clone())
}

/// Unwinds when the question running on this thread is stale.
#[inline]
pub fn poll() {
    let stale = WATCH.with(|w| w.borrow().as_ref().filter(|w| w.stale()).cloned());
    if let Some(w) = stale {
        w.stop();
    }
}

/// [`poll`] at every 4096th `i`: for loops whose steps take nanoseconds.
#[inline]
pub fn poll_every(i: usize) {
    if i.is_multiple_of(4096) {
        poll();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Flag(AtomicBool);
    impl Watch for Flag {
        fn stale(&self) -> bool {
            self.0.load(Ordering::Relaxed)
        }
        fn stop(&self) -> ! {
            std::panic::resume_unwind(Box::new("stopped"))
        }
    }

    #[test]
    fn poll_unwinds_only_under_a_stale_watch_and_the_watch_is_restored() {
        poll();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let watch: Arc<dyn Watch> = flag.clone();
        watching(Some(watch.clone()), poll);
        flag.0.store(true, Ordering::Relaxed);
        let stopped = std::panic::AssertUnwindSafe(|| watching(Some(watch.clone()), poll));
        let r = std::panic::catch_unwind(stopped);
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"stopped"));
        assert!(current().is_none(), "restored after unwinding");
        poll();
        let moved = watching(Some(watch), current);
        let r = std::thread::spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| watching(moved, poll)))
        });
        assert!(r.join().unwrap().is_err(), "carried to another thread");
    }
}
