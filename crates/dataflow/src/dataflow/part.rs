//! σ of one process's readers, for the dd engine spread over processes
//! (`dd::Cluster::spread`, docs/scaling.md): the records of a walk go to the
//! owner of the *write* (which alone can name its operation), which keeps
//! the (reader slot, write) pairs no conflict cancelled and ships each as
//! (slot, operation, and the operation's site and iteration vector when
//! another process owns the reader) to the reader's owner. There the
//! [`Flow`] of the stretch's readers is built in local ids: the stretch's
//! operations first, then the other stretches' sources, each once. A
//! frame's entry write is the exception: its visit and record go to the
//! reader's owner, which names it from its own record of the entry writes
//! (`Share::is_entry`).

use super::Flow;
use crate::facts::{Share, NONE};
use std::collections::HashMap;

/// The records a worker holds until the walk is done everywhere.
#[derive(Default)]
pub(super) struct Held {
    /// (reader slot, write) of each source visit, and of each cancelled one.
    pub(super) sources: Vec<(u64, u32)>,
    pub(super) cancelled: Vec<(u64, u32)>,
    /// The reader slot of each walk that reached the initial value.
    pub(super) initial: Vec<u64>,
    /// Walk steps seen here: visits, with conflicts counted once more.
    pub(super) visits: i64,
}

/// Tags of the words shipped ([`Held::ship`]).
pub(super) const SOURCE: i64 = 0;
pub(super) const INITIAL: i64 = 1;
pub(super) const STEPS: i64 = 2;

impl Held {
    /// A source visit of write `w` by reader slot `s` (`r` < 0: cancelled).
    pub(super) fn add_source(&mut self, s: u64, w: u32, r: isize) {
        let n = r.unsigned_abs();
        let into = if r > 0 {
            &mut self.sources
        } else {
            &mut self.cancelled
        };
        into.extend(std::iter::repeat_n((s, w), n));
        self.visits += r as i64;
    }

    /// A walk of reader slot `s` that reached the initial value.
    pub(super) fn add_initial(&mut self, s: u64, r: isize) {
        self.initial
            .extend(std::iter::repeat_n(s, r.unsigned_abs()));
        self.visits += r as i64;
    }

    /// Conflicts: each a walk step more.
    pub(super) fn add_steps(&mut self, r: isize) {
        self.visits += r as i64;
    }

    /// What this worker found, each item for the process `route` says:
    /// per surviving (slot, write) its operation, per initial the slot, the
    /// walk steps for process 0. This process's go straight into `local`
    /// (a write is mostly read in its own stretch); the others' are left,
    /// compact and in place, as (slot, operation or NONE for the initial
    /// value) with the steps, for [`Remote::words`]. The pairs are this
    /// worker's writes' (routed by write), so each is cancelled here or not
    /// at all.
    pub(super) fn ship(
        mut self,
        share: &Share,
        me: usize,
        route: impl Fn(usize) -> usize,
        local: &mut Part,
    ) -> Remote {
        self.sources.sort_unstable();
        self.cancelled.sort_unstable();
        let mut c = 0;
        let mut n = 0;
        let mut last: Option<(u64, u32)> = None;
        for k in 0..self.sources.len() {
            let (s, w) = self.sources[k];
            // A pair survives when it has more visits than cancellations.
            if self.sources.get(k + 1) == Some(&(s, w)) {
                continue;
            }
            let visits = self.sources[..=k]
                .iter()
                .rev()
                .take_while(|&&v| v == (s, w))
                .count();
            while c < self.cancelled.len() && self.cancelled[c] < (s, w) {
                c += 1;
            }
            let cancels = (self.cancelled[c..].iter())
                .take_while(|&&v| v == (s, w))
                .count();
            if visits <= cancels {
                continue;
            }
            let op = share.write_op(w);
            if last == Some((s, op)) {
                continue;
            }
            last = Some((s, op));
            if route((s >> 32) as usize) == me {
                local.receive(&[SOURCE, i64::from(s as u32), i64::from(op)]);
            } else {
                // In place: n is at most the start of this run.
                self.sources[n] = (s, op);
                n += 1;
            }
        }
        self.sources.truncate(n);
        drop(self.cancelled);
        for s in self.initial {
            if route((s >> 32) as usize) == me {
                local.receive(&[INITIAL, i64::from(s as u32)]);
            } else {
                self.sources.push((s, NONE));
            }
        }
        let mut steps = self.visits;
        if route(0) == me {
            local.steps += steps;
            steps = 0;
        }
        Remote {
            pairs: self.sources,
            steps,
        }
    }
}

/// Source records shipped to other processes ([`super::dd::shipped_sources`]).
pub(super) static SHIPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What a worker ships to other processes ([`Held::ship`]).
pub(super) struct Remote {
    pairs: Vec<(u64, u32)>,
    steps: i64,
}

impl Remote {
    /// The words to ship, made as they are taken, each with the process
    /// it goes to: `[SOURCE, slot, op]` (with the operation's site and
    /// iteration vector the first time it goes to that process),
    /// `[INITIAL, slot]`, `[STEPS, n]`.
    pub(super) fn words<'a>(
        self,
        share: &'a Share,
        route: impl Fn(usize) -> usize + 'a,
    ) -> impl Iterator<Item = (usize, Vec<i64>)> + 'a {
        let mut sent: std::collections::HashSet<(usize, u32)> = Default::default();
        let steps = (self.steps != 0).then(|| (route(0), vec![STEPS, self.steps]));
        let pairs = self.pairs.into_iter().map(move |(s, op)| {
            let to = route((s >> 32) as usize);
            let slot = i64::from(s as u32);
            if op == NONE {
                return (to, vec![INITIAL, slot]);
            }
            SHIPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut words = vec![SOURCE, slot, i64::from(op)];
            if sent.insert((to, op)) {
                words.push(i64::from(share.site(op)));
                words.extend_from_slice(share.op_iter(op));
            }
            (to, words)
        });
        pairs.chain(steps)
    }
}

/// What a process receives for its readers.
#[derive(Default)]
pub(super) struct Part {
    /// (slot, operation) of each source.
    sources: Vec<(u32, u32)>,
    /// Site and iteration vector of the sources other processes own.
    foreign: HashMap<u32, (u32, Vec<i64>)>,
    initial: Vec<u32>,
    /// Walk steps of the whole run (process 0).
    pub(super) steps: i64,
}

impl Part {
    /// Room for `n` sources (one per reader: matmul exactly).
    pub(super) fn reserve(&mut self, n: usize) {
        self.sources.reserve_exact(n);
    }

    /// One shipped item ([`Held::ship`]).
    pub(super) fn receive(&mut self, words: &[i64]) {
        match words {
            [SOURCE, s, o, rest @ ..] => {
                self.sources.push((*s as u32, *o as u32));
                if let [site, iter @ ..] = rest {
                    (self.foreign)
                        .entry(*o as u32)
                        .or_insert_with(|| (*site as u32, iter.to_vec()));
                }
            }
            [INITIAL, s] => self.initial.push(*s as u32),
            [STEPS, n] => self.steps += n,
            _ => {}
        }
    }

    /// The flow of `share`'s readers, in local ids (module documentation).
    pub(super) fn flow(mut self, share: Share) -> Flow {
        let (base_op, base_slot, base_iters) = share.bases();
        // Entry writes of earlier stretches, resolved here: named by the
        // share's own record of them.
        for &(_, o) in &self.sources {
            if share.is_entry_op(o) && !self.foreign.contains_key(&o) {
                let named = (share.site(o), share.op_iter(o).to_vec());
                self.foreign.insert(o, named);
            }
        }
        let last_op = (share.accs())
            .filter(|&x| share.is_read(x))
            .map(|x| share.op(x))
            .max();
        let readers = share.accs().filter(|&x| share.is_read(x)).count();
        let mut facts = share.facts;
        // Process 0 holds every operation: its own stretch's are those up to
        // its last reader's (the others' slots are not its readers').
        let own_ops = last_op.map_or(0, |o| (o + 1 - base_op) as usize);
        let own_slots = facts
            .slots
            .partition_point(|s| s.op < base_op + own_ops as u32);
        facts.slots.truncate(own_slots);
        facts.op_site.truncate(own_ops);
        facts.op_iter_start.truncate(own_ops + 1);
        let iters_end = facts.op_iter_start.last().map_or(0, |&e| e - base_iters);
        facts.iters.truncate(iters_end as usize);
        for v in &mut facts.op_iter_start {
            *v -= base_iters;
        }
        for s in &mut facts.slots {
            s.op -= base_op;
        }
        let mut flow = Flow::start(&facts);
        flow.stats.runs = 1;
        flow.stats.read_instances = readers as u64;
        flow.stats.walk_steps = self.steps.max(0) as u64;
        // Other processes' sources get local ids after the stretch's.
        let mut local: HashMap<u32, u32> = HashMap::new();
        let own = |o: u32| o >= base_op && ((o - base_op) as usize) < own_ops;
        let mut foreign: Vec<u32> = self.foreign.keys().copied().collect();
        foreign.sort_unstable();
        for o in foreign {
            if own(o) {
                continue;
            }
            let (site, iter) = &self.foreign[&o];
            local.insert(o, facts.op_site.len() as u32);
            facts.op_site.push(*site);
            facts.iters.extend_from_slice(iter);
            facts.op_iter_start.push(facts.iters.len() as u32);
        }
        let site_of = |o: u32| facts.op_site[o as usize];
        // Slot by slot, its sources ordered by (site, operation).
        self.sources.sort_unstable();
        self.sources.dedup();
        let mut ops: Vec<(u32, u32, u32)> = Vec::new();
        let mut k = 0;
        for s in 0..own_slots as u32 {
            ops.clear();
            while k < self.sources.len() && self.sources[k].0 < base_slot + s {
                k += 1; // not a reader of this stretch
            }
            while k < self.sources.len() && self.sources[k].0 == base_slot + s {
                let o = self.sources[k].1;
                k += 1;
                let l = if own(o) {
                    o - base_op
                } else {
                    local.get(&o).copied().unwrap_or(NONE)
                };
                if l != NONE {
                    ops.push((site_of(l), o, l));
                }
            }
            ops.sort_unstable();
            flow.src.extend(ops.iter().map(|&(_, _, l)| l));
            flow.src_start.push(flow.src.len() as u32);
        }
        for s in self.initial {
            if let Some(l) = s.checked_sub(base_slot) {
                flow.set_initial(l);
            }
        }
        flow.adopt(facts);
        // Kept while later kernels run: the stretch's tables were cut out
        // of larger ones.
        flow.shrink();
        flow
    }
}
