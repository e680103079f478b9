//! The cells of an array that one loop touches, as a box of ranges affine in
//! the parameters: what a private copy must hold. A copy over the declared
//! range costs the declared cells at every iteration (PolyBench's trmm
//! declares `B[1000][1200]` whatever `m` and `n`).

use crate::model::*;

/// A loop's counter and bounds (affine in outer counters and parameters);
/// a `while` counter has none.
pub(super) type Bounds = (CounterId, Option<(Affine, Affine)>);

pub(super) fn bounds(f: &For) -> Bounds {
    let range = (f.lower.affine.clone(), f.upper.affine.clone());
    (f.counter, Some(range))
}

/// The box of cells of `x` that a loop touches, and where it may leave the
/// declared range (the box ignores `if` guards: `if i > 0` around
/// `A[i - 1]` still puts `A[-1]` in it).
pub(super) struct Footprint {
    pub dims: Vec<Range>,
    /// (dimension, is a lower bound, declared bound): a cell of the box
    /// is in the array only when it is on the right side of these.
    pub clamp: Vec<(usize, bool, Affine)>,
}

/// Per dimension of `x`, the range its subscripts take inside `f`, `outer`
/// being the loops around `f` (outermost first). A dimension keeps its
/// declared range where a subscript is not affine, depends on a `while`
/// counter, or where two accesses' bounds cannot be ordered for every
/// parameter value.
pub(super) fn of(p: &Program, outer: &[Bounds], f: &For, x: ArrayId) -> Footprint {
    let decl = p.array_decl(x).dims.clone();
    let mut chain = outer.to_vec();
    chain.push(bounds(f));
    let mut dims: Vec<Dim> = decl.iter().map(|_| Dim::Untouched).collect();
    walk(&f.body, &mut chain, x, &mut |a, chain| {
        for (d, s) in dims.iter_mut().zip(&a.subscripts) {
            let range = s
                .affine
                .as_ref()
                .and_then(|s| Some((extreme(s, chain, false)?, extreme(s, chain, true)?)));
            d.widen(range);
        }
    });
    let mut out = Footprint {
        dims: Vec::new(),
        clamp: Vec::new(),
    };
    for (k, (d, r)) in dims.into_iter().zip(decl).enumerate() {
        let Dim::Within(lo, hi) = d else {
            out.dims.push(r);
            continue;
        };
        // Inside the declared range when provably so, else clamped.
        let lo = max(&lo, &r.lo.affine).unwrap_or_else(|| {
            out.clamp.push((k, true, r.lo.affine.clone()));
            lo
        });
        let hi = min(&hi, &r.hi.affine).unwrap_or_else(|| {
            out.clamp.push((k, false, r.hi.affine.clone()));
            hi
        });
        out.dims.push(Range {
            lo: bound(lo),
            hi: bound(hi),
        });
    }
    out
}

/// What the accesses seen so far say of one dimension.
enum Dim {
    Untouched,
    Within(Affine, Affine),
    Declared,
}

impl Dim {
    fn widen(&mut self, range: Option<(Affine, Affine)>) {
        *self = match (std::mem::replace(self, Dim::Declared), range) {
            (Dim::Untouched, Some((lo, hi))) => Dim::Within(lo, hi),
            (Dim::Within(a, b), Some((lo, hi))) => match (min(&a, &lo), max(&b, &hi)) {
                (Some(lo), Some(hi)) => Dim::Within(lo, hi),
                _ => Dim::Declared,
            },
            _ => Dim::Declared,
        };
    }
}

/// Calls `visit` on every access of `x` in `nodes` (statements and
/// conditions), with the loops around it.
fn walk(
    nodes: &[Node],
    chain: &mut Vec<Bounds>,
    x: ArrayId,
    visit: &mut impl FnMut(&Access, &[Bounds]),
) {
    let reads = |c: &Cond, chain: &[Bounds], visit: &mut dyn FnMut(&Access, &[Bounds])| {
        let mut out = Vec::new();
        c.collect_reads(&mut out);
        out.iter()
            .filter(|a| a.access.array == x)
            .for_each(|a| visit(a.access, chain));
    };
    for n in nodes {
        match n {
            Node::Stmt(s) => (s.accesses().iter())
                .filter(|a| a.access.array == x)
                .for_each(|a| visit(a.access, chain)),
            Node::For(f) => {
                chain.push(bounds(f));
                walk(&f.body, chain, x, visit);
                chain.pop();
            }
            Node::While(w) => {
                chain.push((w.counter, None));
                reads(&w.cond.cond, chain, visit);
                walk(&w.body, chain, x, visit);
                chain.pop();
            }
            Node::If(i) => {
                for (c, body) in &i.branches {
                    reads(&c.cond, chain, visit);
                    walk(body, chain, x, visit);
                }
                if let Some(body) = &i.otherwise {
                    walk(body, chain, x, visit);
                }
            }
        }
    }
}

/// The least (or greatest) value of `a` over the loops of `chain`, affine in
/// the parameters: each counter, innermost first, replaced by the bound its
/// coefficient's sign picks.
fn extreme(a: &Affine, chain: &[Bounds], greatest: bool) -> Option<Affine> {
    let mut a = a.clone();
    for (c, range) in chain.iter().rev() {
        let k = a.coeff(Var::Counter(*c));
        if k == 0 {
            continue;
        }
        let (lo, hi) = range.as_ref()?;
        let pick = if (k > 0) == greatest { hi } else { lo };
        let term = Affine::var(Var::Counter(*c)).checked_scale(k)?;
        a = a.checked_sub(&term)?.checked_add(&pick.checked_scale(k)?)?;
    }
    (!a.uses_counters()).then_some(a)
}

/// `a - b` when it is a constant.
fn difference(a: &Affine, b: &Affine) -> Option<i64> {
    let d = a.checked_sub(b)?;
    d.is_constant().then(|| d.eval(|_| 0)).flatten()
}

fn min(a: &Affine, b: &Affine) -> Option<Affine> {
    Some(if difference(a, b)? <= 0 { a } else { b }.clone())
}

fn max(a: &Affine, b: &Affine) -> Option<Affine> {
    Some(if difference(a, b)? >= 0 { a } else { b }.clone())
}

fn bound(a: Affine) -> Bound {
    Bound {
        expr: crate::model::affine_expr(&a, Span::NONE),
        affine: a,
    }
}
