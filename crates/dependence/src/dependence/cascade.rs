//! The cascade on one problem, with its memo tables: constant subscripts,
//! the GCD step (table without bounds), then SVPC, Acyclic, Loop Residue and
//! Fourier–Motzkin (table with bounds).

use super::gcd::{self, Lattice};
use super::memo::{Key, Memo, MemoMode, Stats};
use super::num::{Checked, Int};
use super::problem::{coeffs, normalize_ineq, rhs, Normal, Problem, Rows};
use super::{acyclic, fourier, reduce, residue, svpc, Answer, Test, Verdict, Why};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub memo: MemoMode,
    pub limits: fourier::Limits,
    /// The most problems direction refinement may test for one pair (the
    /// number of direction vectors can grow as 3^loops); past it the
    /// remaining components are `*`, conservatively.
    pub max_direction_tests: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            memo: MemoMode::default(),
            limits: fourier::Limits::default(),
            max_direction_tests: 1000,
        }
    }
}

#[derive(Clone, Debug)]
enum GcdEntry {
    /// No equalities: nothing to solve.
    Free,
    Independent,
    Lattice(Rc<Lattice<i64>>),
    /// Overflowed in `i64`: solved in `i128` each time (rare).
    Wide,
}

/// Answers dependence problems, remembering what it solved.
pub struct Tester {
    config: Config,
    gcd_table: Memo<GcdEntry>,
    exact_table: Memo<Answer>,
    stats: Stats,
    /// Reused buffers: the reduced problem and the keys are built for every
    /// problem, hits included.
    scratch: reduce::Scratch,
    reduced: Problem,
    key: Key,
}

impl Tester {
    pub fn new(config: Config) -> Tester {
        Tester {
            config,
            gcd_table: Memo::new(config.memo),
            exact_table: Memo::new(config.memo),
            stats: Stats::new(config.memo),
            scratch: reduce::Scratch::default(),
            reduced: Problem::new(0),
            key: Key::new(),
        }
    }

    pub fn config(&self) -> Config {
        self.config
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.switched_off = (
            self.gcd_table.switched_off(),
            self.exact_table.switched_off(),
        );
        s
    }

    /// Does the problem have an integer solution? `indices[v]` marks loop
    /// indices, whose bounds the improved key drops when they are unused.
    pub fn test(&mut self, p: &Problem, indices: &[bool]) -> Answer {
        self.stats.problems += 1;
        // The improved key is the problem with unused loops projected out;
        // that problem is then the one solved. Otherwise the problem is solved
        // as built.
        let mut reduced = std::mem::replace(&mut self.reduced, Problem::new(0));
        let changed = self.config.memo.improved_key()
            && reduce::drop_unused_into(p, indices, &mut self.scratch, &mut reduced);
        let answer = self.answer(if changed { &reduced } else { p });
        self.reduced = reduced;
        answer
    }

    /// [`Tester::test`] for a caller whose problems rarely repeat and have
    /// no loop indices to drop (the prover's search tests hundreds of
    /// distinct conjunctions): the GCD table only, as keying and storing
    /// every whole problem would cost more than solving it. Same answer.
    pub fn test_distinct(&mut self, p: &Problem) -> Answer {
        self.stats.problems += 1;
        self.compute(p)
    }

    /// The table with bounds first: a problem found there needs no GCD step.
    fn answer(&mut self, q: &Problem) -> Answer {
        if !self.exact_table.on() {
            return self.compute(q);
        }
        full_key(q, &mut self.key);
        if let Some(a) = self.exact_table.get(self.key.as_slice()) {
            self.stats.decided(a.decided_by, true, !a.dependent());
            return a;
        }
        let key = self.key.clone();
        let a = self.compute(q);
        self.exact_table.insert(key, a);
        a
    }

    fn compute(&mut self, q: &Problem) -> Answer {
        let entry = self.gcd_step(q);
        if let GcdEntry::Independent = entry {
            // Two different constants in one dimension need no test at all.
            let by = if constant_differs(q) {
                Test::Constant
            } else {
                Test::Gcd
            };
            self.stats.decided(by, false, true);
            return Answer::of(false, by);
        }
        let a = solve_exact(q, &entry, self.config.limits);
        self.stats.decided(a.decided_by, false, !a.dependent());
        a
    }

    /// The GCD step, through the table without bounds.
    fn gcd_step(&mut self, q: &Problem) -> GcdEntry {
        if q.eqs.is_empty() {
            return GcdEntry::Free;
        }
        let b = bounded(q);
        if !self.gcd_table.on() {
            let e = gcd_entry(q, b);
            self.count_gcd(&e, false);
            return e;
        }
        eq_key(q, b, &mut self.key);
        if let Some(e) = self.gcd_table.get(self.key.as_slice()) {
            self.count_gcd(&e, true);
            return e;
        }
        let e = gcd_entry(q, b);
        self.count_gcd(&e, false);
        self.gcd_table.insert(self.key.clone(), e.clone());
        e
    }

    /// The integer solutions of the equalities (through the GCD table, not
    /// counted in the statistics); `None` when there are none or the numbers
    /// overflow `i64`.
    pub fn lattice(&mut self, p: &Problem) -> Option<Rc<Lattice<i64>>> {
        if p.eqs.is_empty() {
            return Some(Rc::new(Lattice::identity(p.n())));
        }
        let b = bounded(p);
        let entry = if !self.gcd_table.on() {
            gcd_entry(p, b)
        } else {
            eq_key(p, b, &mut self.key);
            match self.gcd_table.get(self.key.as_slice()) {
                Some(e) => e,
                None => {
                    let e = gcd_entry(p, b);
                    self.gcd_table.insert(self.key.clone(), e.clone());
                    e
                }
            }
        };
        match entry {
            GcdEntry::Lattice(l) => Some(l),
            GcdEntry::Free => Some(Rc::new(Lattice::identity(p.n()))),
            GcdEntry::Independent | GcdEntry::Wide => None,
        }
    }

    fn count_gcd(&mut self, e: &GcdEntry, hit: bool) {
        self.stats.gcd(hit, matches!(e, GcdEntry::Independent));
    }
}

/// Some subscript dimension compares two different constants.
fn constant_differs(p: &Problem) -> bool {
    p.eqs
        .iter()
        .any(|r| coeffs(r).iter().all(|&c| c == 0) && rhs(r) != 0)
}

/// Which variables some inequality mentions, one bit each (variables past
/// the 64th always count as mentioned): the GCD step's pivot preference, so
/// part of its key (answers must not depend on the order problems come in).
fn bounded(p: &Problem) -> u64 {
    let n = p.n();
    let mut bits = if n >= 64 { !0u64 } else { 0 };
    for row in p.ineqs.iter() {
        for (j, &c) in coeffs(row).iter().enumerate().take(64) {
            bits |= u64::from(c != 0) << j;
        }
    }
    bits
}

fn gcd_entry(p: &Problem, bounded: u64) -> GcdEntry {
    if p.eqs.is_empty() {
        return GcdEntry::Free;
    }
    match gcd::solve(&p.eqs, bounded) {
        Ok(None) => GcdEntry::Independent,
        Ok(Some(l)) => GcdEntry::Lattice(Rc::new(l)),
        Err(_) => match gcd::solve(&p.eqs.widen(i128::from), bounded) {
            Ok(None) => GcdEntry::Independent,
            _ => GcdEntry::Wide,
        },
    }
}

/// The equalities, without bounds (only which variables have some).
fn eq_key(p: &Problem, bounded: u64, key: &mut Key) {
    key.clear();
    key.push(p.n() as i64);
    key.push(bounded as i64);
    key.extend_from_slice(p.eqs.raw());
}

/// The whole problem.
fn full_key(p: &Problem, key: &mut Key) {
    key.clear();
    key.push(p.n() as i64);
    key.push(p.eqs.len() as i64);
    key.extend_from_slice(p.eqs.raw());
    key.extend_from_slice(p.ineqs.raw());
}

/// The exact tests on a problem whose equalities have integer solutions.
fn solve_exact(p: &Problem, entry: &GcdEntry, limits: fourier::Limits) -> Answer {
    let mut stage = Test::Gcd;
    let narrow = match entry {
        GcdEntry::Lattice(l) => l
            .transform(&p.ineqs)
            .and_then(|rows| cascade(rows, limits, &mut stage)),
        GcdEntry::Free => cascade(p.ineqs.clone(), limits, &mut stage),
        GcdEntry::Independent | GcdEntry::Wide => Err(super::num::Overflow),
    };
    if let Ok(a) = narrow {
        return a;
    }
    stage = Test::Gcd;
    let wide = (|| -> Checked<Answer> {
        let Some(l) = gcd::solve(&p.eqs.widen(i128::from), bounded(p))? else {
            return Ok(Answer::of(false, Test::Gcd));
        };
        let rows = l.transform(&p.ineqs.widen(i128::from))?;
        cascade(rows, limits, &mut stage)
    })();
    wide.unwrap_or(Answer::new(Verdict::Maybe(Why::Overflow), stage))
}

/// SVPC, Acyclic, Loop Residue, Fourier–Motzkin on equality-free rows.
/// `stage` tracks the test running, to name it if the numbers overflow.
fn cascade<T: Int>(
    mut rows: Rows<T>,
    limits: fourier::Limits,
    stage: &mut Test,
) -> Checked<Answer> {
    *stage = Test::Svpc;
    let mut violated = false;
    let mut trivial = false;
    for i in 0..rows.len() {
        match normalize_ineq(rows.row_mut(i))? {
            Normal::Constant(true) => trivial = true,
            Normal::Constant(false) => violated = true,
            Normal::Vars => {}
        }
    }
    if violated {
        return Ok(Answer::of(false, Test::Svpc));
    }
    if trivial {
        rows.retain(|r| coeffs(r).iter().any(|c| !c.is_zero()));
    }
    if let Some(dep) = svpc::test(&rows)? {
        return Ok(Answer::of(dep, Test::Svpc));
    }
    *stage = Test::Acyclic;
    let rest = match acyclic::test(&rows)? {
        acyclic::Outcome::Independent => return Ok(Answer::of(false, Test::Acyclic)),
        acyclic::Outcome::Dependent => return Ok(Answer::of(true, Test::Acyclic)),
        acyclic::Outcome::Stuck(rest) => rest,
    };
    *stage = Test::LoopResidue;
    if let Some(dep) = residue::test(&rest)? {
        return Ok(Answer::of(dep, Test::LoopResidue));
    }
    *stage = Test::FourierMotzkin;
    let (outcome, branched) = fourier::test(&rest, limits)?;
    let by = if branched {
        Test::BranchBound
    } else {
        Test::FourierMotzkin
    };
    Ok(match outcome {
        fourier::Outcome::Independent => Answer::of(false, by),
        fourier::Outcome::Dependent => Answer::of(true, by),
        fourier::Outcome::Blowup => Answer::new(Verdict::Maybe(Why::Blowup), by),
        fourier::Outcome::Cap => Answer::new(Verdict::Maybe(Why::BranchCap), by),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tester(memo: MemoMode) -> Tester {
        Tester::new(Config {
            memo,
            ..Config::default()
        })
    }

    /// `for i = 1 to 10: a[i + 10] vs a[i]` over (i, i'), digest §1.2.
    fn gcd_example() -> Problem {
        let mut p = Problem::new(2);
        p.add_eq(&[1, -1], -10);
        p.add_le(&[-1, 0], -1);
        p.add_le(&[1, 0], 10);
        p.add_le(&[0, -1], -1);
        p.add_le(&[0, 1], 10);
        p
    }

    #[test]
    fn gcd_example_is_independent_by_svpc() {
        let a = tester(MemoMode::Off).test(&gcd_example(), &[true, true]);
        assert_eq!(a, Answer::of(false, Test::Svpc));
    }

    #[test]
    fn same_equalities_other_bounds_hit_the_gcd_table() {
        let mut t = tester(MemoMode::Improved);
        let mut other = gcd_example();
        other.add_le(&[1, 0], 9);
        t.test(&gcd_example(), &[false, false]);
        t.test(&other, &[false, false]);
        let s = t.stats();
        assert_eq!((s.gcd.calls, s.gcd.hits, s.gcd.unique), (2, 1, 1));
        assert_eq!(s.of(Test::Svpc).unique, 2);
    }

    #[test]
    fn parity_is_independent_by_gcd() {
        // a[2i] vs a[2i' + 1].
        let mut p = Problem::new(2);
        p.add_eq(&[2, -2], 1);
        let a = tester(MemoMode::Off).test(&p, &[true, true]);
        assert_eq!(a, Answer::of(false, Test::Gcd));
    }

    #[test]
    fn memo_hits_count() {
        let mut t = tester(MemoMode::Improved);
        for _ in 0..3 {
            t.test(&gcd_example(), &[true, true]);
        }
        let s = t.stats();
        assert_eq!(s.problems, 3);
        // Found in the table with bounds, the repeats skip the GCD step.
        assert_eq!((s.gcd.calls, s.gcd.hits, s.gcd.unique), (1, 0, 1));
        let svpc = s.of(Test::Svpc);
        assert_eq!(
            (svpc.calls, svpc.hits, svpc.unique, svpc.independent),
            (3, 2, 1, 3)
        );
    }

    #[test]
    fn huge_coefficients_fall_back_to_i128() {
        // x = 2^62 * y with 1 <= y <= 2 and x <= 2^63 - 1: x = 2^62 works.
        let big = 1i64 << 62;
        let mut p = Problem::new(2);
        p.add_eq(&[1, -big], 0);
        p.add_le(&[0, -1], -1);
        p.add_le(&[0, 1], 2);
        p.add_le(&[1, 0], i64::MAX);
        p.add_le(&[-3, 0], i64::MAX);
        let a = tester(MemoMode::Off).test(&p, &[false, false]);
        assert!(a.exact(), "{a:?}");
        assert!(a.dependent());
    }
}
