//! Memoization (digest §1.8): two tables, one keyed on the equalities alone
//! (for the GCD step, which ignores bounds) and one on the whole problem (for
//! the exact tests), and per-test statistics.

use super::Test;
use serde::Serialize;
use serde::Serializer;
use std::collections::{BTreeMap, HashMap};

/// Which key the tables use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoMode {
    /// No tables: every problem is solved.
    Off,
    /// The problem as built, bounds of every loop included.
    Simple,
    /// The thesis' improved key: bounds of unused loop indices dropped.
    Improved,
    /// The improved key, in tables that pay for themselves: each stops
    /// (and frees its entries) when fewer than a quarter of its first
    /// [`WARMUP`] lookups hit, and holds at most [`MAX_ENTRIES`] (on
    /// 400 statements of varied subscripts 7% hit, and the tables cost
    /// more time and memory than they saved). Same answers as `Improved`.
    #[default]
    Auto,
}

impl MemoMode {
    /// Whether problems are reduced (unused loops projected out) first.
    pub fn improved_key(self) -> bool {
        matches!(self, MemoMode::Improved | MemoMode::Auto)
    }
}

/// Lookups after which an `Auto` table judges its hit rate.
pub const WARMUP: u64 = 4096;
/// The most entries an `Auto` table holds.
pub const MAX_ENTRIES: usize = 1 << 18;

/// A memo table; under [`MemoMode::Auto`] it switches itself off when it
/// does not pay, and stays bounded.
#[derive(Debug)]
pub struct Memo<V> {
    table: Table<V>,
    mode: MemoMode,
    lookups: u64,
    hits: u64,
    /// Switched off by `Auto` (or the mode is `Off`).
    off: bool,
}

impl<V: Clone> Memo<V> {
    pub fn new(mode: MemoMode) -> Memo<V> {
        Memo {
            table: Table::default(),
            mode,
            lookups: 0,
            hits: 0,
            off: mode == MemoMode::Off,
        }
    }

    /// Whether to build a key and look up at all.
    pub fn on(&self) -> bool {
        !self.off
    }

    pub fn get(&mut self, key: &[i64]) -> Option<V> {
        self.lookups += 1;
        let v = self.table.get(key).cloned();
        self.hits += u64::from(v.is_some());
        v
    }

    /// Stores an answer just computed (after a missed [`Memo::get`]).
    pub fn insert(&mut self, key: Key, v: V) {
        if self.mode == MemoMode::Auto {
            if self.lookups >= WARMUP && self.hits * 4 < self.lookups {
                self.off = true;
                self.table = Table::default();
                return;
            }
            if self.table.len() >= MAX_ENTRIES {
                return;
            }
        }
        self.table.insert(key, v);
    }

    /// Whether `Auto` switched the table off.
    pub fn switched_off(&self) -> bool {
        self.off && self.mode != MemoMode::Off
    }
}

/// A flattened problem: `[n, rows of equalities.., marker, rows of inequalities..]`.
pub type Key = Vec<i64>;

/// Keys are short vectors of integers: SipHash would cost more than many
/// of the tests.
pub type Table<V> = HashMap<Key, V, crate::hash::WordHash>;

/// Counts for one test. For the GCD step: `calls` problems reached it, `hits`
/// were answered by the table, `unique` were computed. For an exact test:
/// `calls` answers it gave (a memo hit counts for the test that decided the
/// first time), `hits` of them from the table, `unique` computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TestStats {
    pub calls: u64,
    pub hits: u64,
    pub unique: u64,
    /// How many of the calls answered "independent".
    pub independent: u64,
}

impl TestStats {
    fn count(&mut self, hit: bool, independent: bool) {
        self.calls += 1;
        if hit {
            self.hits += 1;
        } else {
            self.unique += 1;
        }
        if independent {
            self.independent += 1;
        }
    }
}

/// What the tester did, over every problem it was given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub memo: MemoMode,
    /// `Auto` switched the table off: (without bounds, with bounds).
    pub switched_off: (bool, bool),
    /// Problems given to the cascade (direction refinement included).
    pub problems: u64,
    /// The GCD step (its table is keyed without bounds).
    pub gcd: TestStats,
    /// The test that decided, per test in [`Test::CASCADE`] order (their
    /// table is keyed with bounds).
    #[serde(serialize_with = "by_name")]
    decided: [TestStats; Test::CASCADE.len()],
}

fn by_name<S: Serializer>(d: &[TestStats; Test::CASCADE.len()], s: S) -> Result<S::Ok, S::Error> {
    let map: BTreeMap<&str, &TestStats> = Test::CASCADE.iter().map(|t| t.name()).zip(d).collect();
    map.serialize(s)
}

fn slot(test: Test) -> Option<usize> {
    Test::CASCADE.iter().position(|&t| t == test)
}

impl Stats {
    pub fn new(memo: MemoMode) -> Stats {
        Stats {
            memo,
            ..Stats::default()
        }
    }

    pub(super) fn gcd(&mut self, hit: bool, independent: bool) {
        self.gcd.count(hit, independent);
    }

    pub(super) fn decided(&mut self, test: Test, hit: bool, independent: bool) {
        if let Some(k) = slot(test) {
            self.decided[k].count(hit, independent);
        }
    }

    /// The counts of the test that decided.
    pub fn of(&self, test: Test) -> TestStats {
        slot(test).map_or_else(TestStats::default, |k| self.decided[k])
    }

    /// Every deciding test with its counts, in cascade order.
    pub fn per_test(&self) -> impl Iterator<Item = (Test, TestStats)> + '_ {
        Test::CASCADE
            .iter()
            .copied()
            .zip(self.decided.iter().copied())
    }

    /// Hits over calls of the table with bounds (the exact tests).
    pub fn exact_hit_rate(&self) -> f64 {
        let (calls, hits) = self
            .per_test()
            .filter(|(t, _)| !matches!(t, Test::Constant | Test::Gcd))
            .fold((0, 0), |(c, h), (_, s)| (c + s.calls, h + s.hits));
        ratio(hits, calls)
    }

    /// Hits over calls of the table without bounds (the GCD step).
    pub fn gcd_hit_rate(&self) -> f64 {
        ratio(self.gcd.hits, self.gcd.calls)
    }

    /// A table, one line per test.
    pub fn render(&self) -> String {
        let mut out = format!(
            "memo {:?}: {} problems; hit rate {:.1}% without bounds (gcd), {:.1}% with bounds\n",
            self.memo,
            self.problems,
            100.0 * self.gcd_hit_rate(),
            100.0 * self.exact_hit_rate()
        );
        for (off, which) in [
            (self.switched_off.0, "without bounds"),
            (self.switched_off.1, "with bounds"),
        ] {
            if off {
                out.push_str(&format!(
                    "the table {which} switched itself off: under 25% of its first {WARMUP} lookups hit\n"
                ));
            }
        }
        out.push_str("test              calls     hits   unique  independent\n");
        let rows = std::iter::once(("gcd (step)", self.gcd))
            .chain(self.per_test().map(|(t, s)| (t.name(), s)));
        for (name, s) in rows {
            out.push_str(&format!(
                "{name:<16} {:>6} {:>8} {:>8} {:>12}\n",
                s.calls, s.hits, s.unique, s.independent
            ));
        }
        out
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
