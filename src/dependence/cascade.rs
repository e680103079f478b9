//! The cascade on one problem, with its memo tables: constant subscripts,
//! the GCD step (table without bounds), then SVPC, Acyclic, Loop Residue and
//! Fourier–Motzkin (table with bounds).

use super::gcd::{self, Lattice};
use super::memo::{Key, MemoMode, Stats, Table};
use super::num::{Checked, Int};
use super::problem::{coeffs, normalize_ineq, rhs, Normal, Problem, Rows};
use super::{acyclic, fourier, reduce, residue, svpc, Answer, Test, Verdict, Why};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Config {
    pub memo: MemoMode,
    pub limits: fourier::Limits,
}

#[derive(Clone, Debug)]
enum GcdEntry {
    Independent,
    Lattice(Rc<Lattice<i64>>),
    /// Overflowed in `i64`: solved in `i128` each time (rare).
    Wide,
}

/// Answers dependence problems, remembering what it solved.
pub struct Tester {
    config: Config,
    gcd_table: Table<GcdEntry>,
    exact_table: Table<Answer>,
    stats: Stats,
}

impl Tester {
    pub fn new(config: Config) -> Tester {
        Tester {
            config,
            gcd_table: Table::default(),
            exact_table: Table::default(),
            stats: Stats::new(config.memo),
        }
    }

    pub fn config(&self) -> Config {
        self.config
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Does the problem have an integer solution? `indices[v]` marks loop
    /// indices, whose bounds the improved key may drop when they are unused.
    pub fn test(&mut self, p: &Problem, indices: &[bool]) -> Answer {
        self.stats.problems += 1;
        let reduced = match self.config.memo {
            MemoMode::Simple => None,
            MemoMode::Off | MemoMode::Improved => reduce::drop_unused(p, indices),
        };
        let q = reduced.as_ref().unwrap_or(p);
        if constant_differs(q) {
            self.stats.decided(Test::Constant, false, true);
            return Answer::of(false, Test::Constant);
        }
        let memo = self.config.memo != MemoMode::Off;
        let w = weights(q);
        let entry = if memo {
            let key = eq_key(q, &w);
            match self.gcd_table.get(&key) {
                Some(e) => {
                    let e = e.clone();
                    self.count_gcd(&e, true);
                    e
                }
                None => {
                    let e = gcd_entry(q, &w);
                    self.count_gcd(&e, false);
                    self.gcd_table.insert(key, e.clone());
                    e
                }
            }
        } else {
            let e = gcd_entry(q, &w);
            self.count_gcd(&e, false);
            e
        };
        if let GcdEntry::Independent = entry {
            self.stats.decided(Test::Gcd, false, true);
            return Answer::of(false, Test::Gcd);
        }
        if memo {
            let key = full_key(q);
            if let Some(&a) = self.exact_table.get(&key) {
                self.stats.decided(a.decided_by, true, !a.dependent());
                return a;
            }
            let a = solve_exact(q, &entry, self.config.limits);
            self.stats.decided(a.decided_by, false, !a.dependent());
            self.exact_table.insert(key, a);
            a
        } else {
            let a = solve_exact(q, &entry, self.config.limits);
            self.stats.decided(a.decided_by, false, !a.dependent());
            a
        }
    }

    /// The integer solutions of the equalities (through the GCD table, not
    /// counted in the statistics); `None` when there are none or the numbers
    /// overflow `i64`.
    pub fn lattice(&mut self, p: &Problem) -> Option<Rc<Lattice<i64>>> {
        let w = weights(p);
        let entry = if self.config.memo == MemoMode::Off {
            gcd_entry(p, &w)
        } else {
            self.gcd_table
                .entry(eq_key(p, &w))
                .or_insert_with(|| gcd_entry(p, &w))
                .clone()
        };
        match entry {
            GcdEntry::Lattice(l) => Some(l),
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

/// How many inequalities mention each variable (the GCD step's pivot
/// preference; part of its key, so answers do not depend on memo order).
fn weights(p: &Problem) -> Vec<u32> {
    let mut w = vec![0u32; p.n()];
    for row in p.ineqs.iter() {
        for (j, &c) in coeffs(row).iter().enumerate() {
            w[j] += u32::from(c != 0);
        }
    }
    w
}

fn gcd_entry(p: &Problem, w: &[u32]) -> GcdEntry {
    match gcd::solve(&p.eqs, w) {
        Ok(None) => GcdEntry::Independent,
        Ok(Some(l)) => GcdEntry::Lattice(Rc::new(l)),
        Err(_) => match gcd::solve(&p.eqs.widen(i128::from), w) {
            Ok(None) => GcdEntry::Independent,
            _ => GcdEntry::Wide,
        },
    }
}

/// The equalities, without bounds (only how many bounds each variable has).
fn eq_key(p: &Problem, w: &[u32]) -> Key {
    let mut k = Vec::with_capacity(1 + w.len() + p.eqs.raw().len());
    k.push(p.n() as i64);
    k.extend(w.iter().map(|&x| x as i64));
    k.extend_from_slice(p.eqs.raw());
    k
}

fn full_key(p: &Problem) -> Key {
    let mut k = Vec::with_capacity(2 + p.eqs.raw().len() + p.ineqs.raw().len());
    k.push(p.n() as i64);
    k.push(p.eqs.len() as i64);
    k.extend_from_slice(p.eqs.raw());
    k.extend_from_slice(p.ineqs.raw());
    k
}

/// The exact tests on a problem whose equalities have integer solutions.
fn solve_exact(p: &Problem, entry: &GcdEntry, limits: fourier::Limits) -> Answer {
    let mut stage = Test::Gcd;
    if let GcdEntry::Lattice(l) = entry {
        let narrow = l
            .transform(&p.ineqs)
            .and_then(|rows| cascade(rows, limits, &mut stage));
        if let Ok(a) = narrow {
            return a;
        }
    }
    stage = Test::Gcd;
    let wide = (|| -> Checked<Answer> {
        let Some(l) = gcd::solve(&p.eqs.widen(i128::from), &weights(p))? else {
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
        assert_eq!((s.gcd.calls, s.gcd.hits, s.gcd.unique), (3, 2, 1));
        let svpc = s.decided[&Test::Svpc];
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
