//! Whether a parallel loop pays (docs/c.md, *When a parallel loop pays*):
//! the work of a loop nest as the number of statement instances it runs,
//! a sum of products of trip counts, printed as a C expression that
//! OpenMP's `if` clause evaluates where the loop starts. Below
//! [`PARALLEL_WORK`] the team is one thread: the loop runs as written,
//! without the cost of waking other threads for a few microseconds of work.
//!
//! The count is an estimate, used for cost only, never for correctness:
//! a loop whose bounds depend on counters of loops inside the nest (a
//! triangle) counts the box around it; the branches of an `if` all count;
//! a `while` loop has no count, and its nest gets no clause (it runs in
//! parallel, as without the model).

use crate::model::*;

/// The statement instances below which a loop (or a parallel region) runs
/// on one thread: about 0.1 ms of work at a nanosecond per instance, a
/// hundred times what opening a region costs when the threads spin
/// (a few microseconds with libgomp), and above what waking sleeping ones
/// costs on a loaded machine.
pub const PARALLEL_WORK: i64 = 100_000;

/// The macro the printed clauses compare the work with, defined as
/// [`PARALLEL_WORK`] unless the build defines it (`-D
/// ARRAYFLOW_PARALLEL_WORK=0` runs every parallel loop in parallel).
pub const THRESHOLD: &str = "ARRAYFLOW_PARALLEL_WORK";

/// The definition of [`THRESHOLD`], before the functions that use it.
pub fn threshold_definition() -> String {
    format!("#ifndef {THRESHOLD}\n#define {THRESHOLD} {PARALLEL_WORK}\n#endif\n")
}

/// A loop inside the nest being counted: its counter and bounds.
pub type Inside = (CounterId, Affine, Affine);

/// One term of the work: a product of trip counts, times a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Term {
    factors: Vec<Affine>,
    times: i64,
}

/// The work of `nodes`, `inside` the loops of the nest around them: a
/// sum of products of trip counts in the parameters and the counters of
/// the loops around the nest; `None` with a `while` loop.
fn work(nodes: &[Node], inside: &mut Vec<Inside>) -> Option<Vec<Term>> {
    let mut out: Vec<Term> = Vec::new();
    for n in nodes {
        match n {
            Node::Stmt(_) => add(
                &mut out,
                Term {
                    factors: Vec::new(),
                    times: 1,
                },
            ),
            Node::For(f) => {
                let trips = trips(f, inside)?;
                inside.push((f.counter, f.lower.affine.clone(), f.upper.affine.clone()));
                let body = work(&f.body, inside);
                inside.pop();
                for mut t in body? {
                    match &trips {
                        Trips::Constant(k) => t.times = t.times.checked_mul(*k)?,
                        Trips::Affine(a) => {
                            t.factors.push(a.clone());
                            t.factors.sort_by_key(|a| format!("{a:?}"));
                        }
                    }
                    add(&mut out, t);
                }
            }
            Node::If(i) => {
                for b in (i.branches.iter().map(|(_, b)| b)).chain(&i.otherwise) {
                    for t in work(b, inside)? {
                        add(&mut out, t);
                    }
                }
            }
            Node::While(_) => return None,
        }
    }
    Some(out)
}

fn add(sum: &mut Vec<Term>, t: Term) {
    match sum.iter_mut().find(|s| s.factors == t.factors) {
        Some(s) => s.times = s.times.saturating_add(t.times),
        None => sum.push(t),
    }
}

enum Trips {
    Constant(i64),
    Affine(Affine),
}

/// The trip count of `f` (step 1) or its bound (`(hi - lo) / step + 1`
/// rounded up to whole steps only where constant), over the box of the
/// loops `inside` the nest.
fn trips(f: &For, inside: &[Inside]) -> Option<Trips> {
    let lo = extreme(&f.lower.affine, inside, false)?;
    let hi = extreme(&f.upper.affine, inside, true)?;
    let d = hi.checked_sub(&lo)?;
    if d.is_constant() {
        let d = d.constant;
        return Some(Trips::Constant(if d < 0 { 0 } else { d / f.step + 1 }));
    }
    // A step: fewer trips than the span; the span bounds them.
    Some(Trips::Affine(d.checked_add(&Affine::constant(1))?))
}

/// The least (or greatest) value of `a` over the loops `inside`: each of
/// their counters, innermost first, replaced by the bound its
/// coefficient's sign picks.
fn extreme(a: &Affine, inside: &[Inside], greatest: bool) -> Option<Affine> {
    let mut a = a.clone();
    for (c, lo, hi) in inside.iter().rev() {
        let k = a.coeff(Var::Counter(*c));
        if k == 0 {
            continue;
        }
        let pick = if (k > 0) == greatest { hi } else { lo };
        let term = Affine::var(Var::Counter(*c)).checked_scale(k)?;
        a = a.checked_sub(&term)?.checked_add(&pick.checked_scale(k)?)?;
    }
    Some(a)
}

/// The cost model on the loops `nests` (each counted with the loops
/// around it up to the pragma, `around`, whose counters have no value
/// where the clause is evaluated), the trip counts printed by `print`.
///
/// `None` when the work is not known (a `while` loop) or a constant at
/// least [`PARALLEL_WORK`]: parallel, no clause. Otherwise the work as C,
/// for `if(work >= THRESHOLD)`: a constant one too, so that the build can
/// still choose (`-D ARRAYFLOW_PARALLEL_WORK=0`).
pub fn pays(nests: &[(&For, Vec<Inside>)], print: &dyn Fn(&Affine) -> String) -> Option<String> {
    let mut sum: Vec<Term> = Vec::new();
    for (f, around) in nests {
        let mut inside = around.clone();
        let terms = work(&[Node::For((*f).clone())], &mut inside)?;
        for t in terms {
            add(&mut sum, t);
        }
    }
    let constant: i64 = (sum.iter())
        .filter(|t| t.factors.is_empty())
        .fold(0i64, |s, t| s.saturating_add(t.times));
    if sum.iter().all(|t| t.factors.is_empty()) {
        return (constant < PARALLEL_WORK).then(|| constant.to_string());
    }
    let mut text: Vec<String> = Vec::new();
    for t in sum.iter().filter(|t| !t.factors.is_empty()) {
        let mut p = String::from("(long)");
        for (k, a) in t.factors.iter().enumerate() {
            if k > 0 {
                p.push_str(" * ");
            }
            let s = print(a);
            if a.terms.len() == 1 && a.constant == 0 && a.terms[0].1 == 1 {
                p.push_str(&s);
            } else {
                p.push_str(&format!("({s})"));
            }
        }
        if t.times != 1 {
            p = format!("{} * {p}", t.times);
        }
        text.push(p);
    }
    if constant != 0 {
        text.push(constant.to_string());
    }
    Some(text.join(" + "))
}

/// The loops `inside` a nest for [`pays`]: none yet.
pub fn outermost() -> Vec<Inside> {
    Vec::new()
}

/// [`Inside`] of a loop.
pub fn inside(f: &For) -> Inside {
    (f.counter, f.lower.affine.clone(), f.upper.affine.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_loop(c: u32, lo: Affine, hi: Affine, body: Vec<Node>) -> For {
        For {
            counter: CounterId(c),
            lower: Bound {
                expr: affine_expr(&lo, Span::NONE),
                affine: lo,
            },
            upper: Bound {
                expr: affine_expr(&hi, Span::NONE),
                affine: hi,
            },
            step: 1,
            parallel: true,
            body,
            span: Span::NONE,
        }
    }

    fn n_minus_1() -> Affine {
        Affine::var(Var::Param(ParamId(0)))
            .checked_sub(&Affine::constant(1))
            .unwrap()
    }

    fn print(a: &Affine) -> String {
        format!("{:?}", a.terms.iter().map(|t| t.1).collect::<Vec<_>>()) + &a.constant.to_string()
    }

    #[test]
    fn constant_nests_are_decided_when_printed() {
        let small = for_loop(0, Affine::constant(0), Affine::constant(99), Vec::new());
        assert_eq!(pays(&[(&small, outermost())], &print).as_deref(), Some("0"));
        let inner = for_loop(1, Affine::constant(0), Affine::constant(999), Vec::new());
        let big = for_loop(
            0,
            Affine::constant(0),
            Affine::constant(99),
            vec![Node::For(inner)],
        );
        // 100 * 1000 loops, no statement: no work but the loops'.
        assert_eq!(pays(&[(&big, outermost())], &print).as_deref(), Some("0"));
    }

    #[test]
    fn a_triangle_counts_its_box() {
        // for i = 0 to N-1: for j = i to N-1: S  -> N * N instances at most.
        let i = Affine::var(Var::Counter(CounterId(0)));
        let inner = for_loop(
            1,
            i,
            n_minus_1(),
            vec![Node::Stmt(Stmt::copy(
                "S".into(),
                Access {
                    array: ArrayId(0),
                    subscripts: Vec::new(),
                    span: Span::NONE,
                    ext: None,
                },
                Expr::new(ExprKind::Int(0), Span::NONE),
            ))],
        );
        let outer = for_loop(0, Affine::constant(0), n_minus_1(), vec![Node::For(inner)]);
        let Some(text) = pays(&[(&outer, outermost())], &print) else {
            panic!("symbolic");
        };
        // Two factors N - 1 + 1 = N each (the box of j is 0 .. N-1).
        assert_eq!(text, "(long)[1]0 * [1]0");
    }
}
