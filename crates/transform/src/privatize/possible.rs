//! Privatization outside static control, proved for every parameter value
//! from the possible sources (`symbolic::fada`). Bounded σ at the samples
//! chooses the loops; a chosen loop L at depth d, with its private arrays
//! P, holds at every size when
//! - no dependence on an array outside P crosses L's iterations (the exact
//!   dependence tests, which read an unknown condition as "may run");
//! - every read of an array of P inside L has each possible source in L's
//!   current iteration (counters 0..=d equal), and never the initial value:
//!   no copy-in, no value between iterations;
//! - no read of an array of P outside L has a possible source in L: nothing
//!   live after it, so the private copies need no finalization;
//! - no condition reads an array of P (conditions have no possible sources).
//!
//! A possible source is a superset of σ, so each "no" holds for σ too.

use crate::model::{Affine, ArrayId, CounterKind, Program, Var};
use crate::symbolic::domain::{self, Dnf};
use crate::symbolic::prove::Prover;
use crate::symbolic::{fada, Outcome, Symbolic};

/// Ok when loop `l` is parallel with the arrays named `private` private
/// for every parameter value; else why not.
pub fn proves(
    program: &Program,
    l: crate::model::CounterId,
    private: &[String],
) -> Result<(), String> {
    if program.counter_decl(l).kind != CounterKind::For {
        return Err("a `while` loop".into());
    }
    let Some(d) = (crate::expansion::parallel::loops(program).into_iter())
        .find_map(|(c, d)| (c == l).then_some(d))
    else {
        return Err("a loop outside the program".into());
    };
    let names = private;
    let private: Vec<ArrayId> = (names.iter())
        .filter_map(|n| program.arrays.iter().position(|a| &a.name == n))
        .map(|k| ArrayId(k as u32))
        .collect();
    if private.len() != names.len() {
        return Err("a private array the program does not declare".into());
    }
    let shared = |a: ArrayId| !private.contains(&a);
    if crate::dependence::carried::carried_on(program, &shared).contains(&l) {
        return Err("a dependence on a shared array crosses its iterations".into());
    }
    for c in program.conditions() {
        if c.reads().iter().any(|a| private.contains(&a.array)) {
            return Err(format!("the condition `{}` reads a private array", c.name));
        }
    }
    if private.is_empty() {
        return Ok(());
    }
    // σ of the reads of the private arrays only.
    let stmts = program.stmts();
    let reads_private = |s: crate::model::StmtId| {
        (stmts[s.index()].reads().iter()).any(|a| private.contains(&a.array))
    };
    let sym: Symbolic = crate::symbolic::analyze_only(program, &reads_private);
    let places = domain::places(program);
    let in_l =
        |s: crate::model::StmtId| (places[s.index()].loops.get(d)).is_some_and(|x| x.counter == l);
    let mut prover = Prover::new(program).ok_or("the assumptions are not affine")?;
    let assumptions = prover.assumptions.clone();
    for r in sym.reads.iter().filter(|r| private.contains(&r.array)) {
        let name = &program.array_decl(r.array).name;
        let inside = in_l(r.stmt);
        match &r.outcome {
            Outcome::Fallback(why) => return Err(format!("a read of `{name}`: {why}")),
            Outcome::Possible(p) => {
                if inside && !p.initial.is_empty() {
                    return Err(format!(
                        "a read of `{name}` in the loop may see its initial value"
                    ));
                }
                for f in &p.families {
                    match (inside, in_l(f.stmt)) {
                        (true, false) => {
                            return Err(format!(
                                "a read of `{name}` in the loop may see a value from before it"
                            ))
                        }
                        (false, true) => {
                            return Err(format!(
                                "a read of `{name}` after the loop may see a value from it"
                            ))
                        }
                        (false, false) => {}
                        (true, true) => {
                            let mut other: Dnf = Vec::new();
                            for k in 0..=d {
                                let src = Affine::var(Var::Counter(fada::source_var(k)));
                                let at = Affine::var(Var::Counter(r.counters[k]));
                                other.extend(super::exact::differ(&src, &at).ok_or("overflow")?);
                            }
                            let what = || format!("a value of `{name}` may cross iterations");
                            prover.infeasible(&[&f.when, &other, &assumptions], &what)?;
                        }
                    }
                }
            }
            Outcome::Exact(q) => {
                for (_, src) in q.leaves() {
                    match (inside, src) {
                        (true, None) => {
                            return Err(format!(
                                "a read of `{name}` in the loop may see its initial value"
                            ))
                        }
                        (true, Some(s)) => {
                            let same = in_l(s.stmt)
                                && s.affine().is_some_and(|it| {
                                    (0..=d)
                                        .all(|k| it[k] == Affine::var(Var::Counter(r.counters[k])))
                                });
                            if !same {
                                return Err(format!("a value of `{name}` may cross iterations"));
                            }
                        }
                        (false, Some(s)) if in_l(s.stmt) => {
                            return Err(format!(
                                "a read of `{name}` after the loop may see a value from it"
                            ))
                        }
                        (false, _) => {}
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether every parallel verdict of `loops` (bounded σ at some sizes)
/// holds for every parameter value: parallel as written by the exact
/// dependence tests, parallel after privatization by [`proves`]. At least
/// one loop must be parallel: a report with none claims nothing to prove.
pub fn proves_report(program: &Program, loops: &[super::LoopPrivatization]) -> bool {
    let parallel: Vec<&super::LoopPrivatization> =
        loops.iter().filter(|l| l.parallel_after()).collect();
    if parallel.is_empty() {
        return false;
    }
    let carried = crate::dependence::carried::carried_on(program, &|_| true);
    parallel.iter().all(|l| {
        // A `while` loop's trips are not the exact tests' to count.
        if program.counter_decl(l.counter).kind != CounterKind::For {
            return false;
        }
        if l.parallel_before() {
            return !carried.contains(&l.counter);
        }
        let private: Vec<String> = l.private().map(str::to_string).collect();
        proves(program, l.counter, &private).is_ok()
    })
}
