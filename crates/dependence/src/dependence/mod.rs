//! Exact affine dependence analysis (Maydan's thesis, chapter 2; digest §1).
//!
//! Two references are dependent when some pair of their iterations touches
//! the same element, for some values of the symbolic parameters. The question
//! is an integer problem ([`Problem`]: `A x ≤ b` plus equalities) that the
//! cascade answers with the cheapest test exact on its class:
//!
//! 1. [`gcd`]: extended GCD on the equalities alone, a unimodular change of
//!    variables that removes them (not exact by itself: it ignores bounds);
//! 2. [`svpc`]: single variable per constraint;
//! 3. [`acyclic`]: the constraint graph has no cycle;
//! 4. [`residue`]: simple loop residue (difference constraints, Bellman-Ford);
//! 5. [`fourier`]: Fourier–Motzkin with integer back-substitution, extension
//!    (a) and a capped branch and bound.
//!
//! Only the applicability checks repeat; one test decides. Every answer
//! records which test decided and whether it is exact; only the last stage
//! can answer "maybe", with its reason. Arithmetic is checked `i64`, redone in
//! `i128` on overflow, and an overflow there is a "maybe" too.
//!
//! On top: [`direction`] (Burke–Cytron hierarchical refinement, pruning of
//! unused indices and GCD-constant distances, constant distances), [`memo`]
//! (two tables and per-test statistics), [`pairs`] (the problems of a
//! [`crate::model::Program`]'s reference pairs) and [`brute`] (enumeration,
//! the reference the tests are checked against). See docs/dependence.md.

pub mod acyclic;
pub mod brute;
pub mod carried;
mod cascade;
pub mod direction;
pub mod fourier;
pub mod gcd;
pub mod memo;
pub mod num;
pub mod pairs;
pub mod problem;
pub mod reduce;
pub mod report;
pub mod residue;
pub mod svpc;

pub use cascade::{Config, Tester};
pub use direction::{Dependence, Dir, DirVector, PairProblem};
pub use memo::{MemoMode, Stats, TestStats};
pub use pairs::RefId;
pub use problem::{Problem, Rows};
pub use report::{analyze, Kind, PairReport, RefName};

use serde::Serialize;

/// The test that decided a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// A subscript dimension is a different constant on each side: no test needed.
    Constant,
    Gcd,
    Svpc,
    Acyclic,
    LoopResidue,
    FourierMotzkin,
    /// Fourier–Motzkin needed more than one branch-and-bound node.
    BranchBound,
    /// Pair level only: every direction vector was refuted (or only the
    /// instance paired with itself was left), although `(*, …, *)` was not.
    Directions,
}

impl Test {
    /// The tests that decide single problems, in cascade order.
    pub const CASCADE: [Test; 7] = [
        Test::Constant,
        Test::Gcd,
        Test::Svpc,
        Test::Acyclic,
        Test::LoopResidue,
        Test::FourierMotzkin,
        Test::BranchBound,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::Constant => "constant",
            Test::Gcd => "gcd",
            Test::Svpc => "svpc",
            Test::Acyclic => "acyclic",
            Test::LoopResidue => "loop_residue",
            Test::FourierMotzkin => "fourier_motzkin",
            Test::BranchBound => "branch_bound",
            Test::Directions => "directions",
        }
    }
}

/// Why an answer is only "maybe dependent".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The numbers overflowed `i128`.
    Overflow,
    /// Branch and bound reached its node cap.
    BranchCap,
    /// Fourier–Motzkin produced too many constraints.
    Blowup,
    /// Direction refinement reached its cap on tests for one pair.
    DirectionCap,
}

impl Why {
    pub fn describe(self) -> &'static str {
        match self {
            Why::Overflow => "arithmetic overflowed 128 bits",
            Why::BranchCap => "branch and bound reached its node cap",
            Why::Blowup => "Fourier-Motzkin elimination produced too many constraints",
            Why::DirectionCap => "direction refinement reached its cap on tests for one pair",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Independent,
    Dependent,
    /// Outside every exact class within the limits: assumed dependent.
    Maybe(Why),
}

/// The answer to one problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Answer {
    pub verdict: Verdict,
    pub decided_by: Test,
}

impl Answer {
    pub fn new(verdict: Verdict, decided_by: Test) -> Answer {
        Answer {
            verdict,
            decided_by,
        }
    }

    fn of(dependent: bool, decided_by: Test) -> Answer {
        let verdict = if dependent {
            Verdict::Dependent
        } else {
            Verdict::Independent
        };
        Answer::new(verdict, decided_by)
    }

    /// Dependent or maybe dependent.
    pub fn dependent(&self) -> bool {
        self.verdict != Verdict::Independent
    }

    pub fn exact(&self) -> bool {
        !matches!(self.verdict, Verdict::Maybe(_))
    }
}
