//! The extent of a pointer parameter's dimension, which C does not say
//! (`x_dim0` of `double *x`, a parameter the front end adds without a
//! value): what the program accesses of it. A function printed back into
//! its place (`emit::program_in`) declares the parameter as a local set to
//! this value, so that the arrays and copy loops a transformation sizes by
//! it are sized by the cells the original touches.
//!
//! The value is `max + 1`, `max` the largest index the program accesses
//! in that dimension, when that is an affine function of the parameters
//! that the program provably reaches: for some access, the point of its
//! iteration domain that maximises its subscript (each loop counter at the
//! bound its coefficient favours, innermost first) is in its domain
//! whenever any access of the array runs, and no access goes beyond it
//! (Fourier–Motzkin, `linear::infeasible`). Then the transformed program,
//! valid for every value of the parameter, runs with the smallest one at
//! which the original stays in bounds, and touches no cell of the caller's
//! array past the last one the original touches.

use crate::linear::{facts, infeasible, Linear};
use crate::model::*;
use std::collections::HashMap;

/// An extent: `constant + Σ coeff·param`, by the parameters' names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extent {
    pub terms: Vec<(String, i64)>,
    pub constant: i64,
}

/// For each parameter without a value that is the extent of one array's
/// dimension (declared `0..q - 1`): its [`Extent`], or why there is none
/// (naming the array).
pub fn pointer_extents(p: &Program) -> HashMap<String, Result<Extent, String>> {
    let mut out = HashMap::new();
    for (qi, q) in p.params.iter().enumerate() {
        if q.default.is_some() {
            continue;
        }
        let qv = Var::Param(ParamId(qi as u32));
        let hi = Affine {
            terms: vec![(qv, 1)],
            constant: -1,
        };
        let dims: Vec<(ArrayId, usize)> = (p.arrays.iter().enumerate())
            .flat_map(|(a, arr)| {
                let hi = &hi;
                (arr.dims.iter().enumerate())
                    .filter(move |(_, r)| r.lo.affine == Affine::constant(0) && r.hi.affine == *hi)
                    .map(move |(k, _)| (ArrayId(a as u32), k))
            })
            .collect();
        let [(a, k)] = dims.as_slice() else {
            continue;
        };
        let name = &p.array_decl(*a).name;
        let e = extent(p, *a, *k, Some(qv)).map_err(|why| {
            format!(
                "`{name}` is a pointer whose extent C does not give (`{}`), and {why}",
                q.name
            )
        });
        out.insert(q.name.clone(), e);
    }
    out
}

/// One access of the array: its subscript in the dimension, and its
/// iteration domain (forms `>= 0` over counters and parameters).
struct Site {
    sub: Option<Linear>,
    forms: Vec<Linear>,
    /// The enclosing `for` loops, outermost first: counter, bounds, step.
    loops: Vec<(Var, Linear, Linear, i64)>,
    /// Whether `forms` are the whole domain (no `while`, no condition
    /// that is not affine around the access).
    exact: bool,
}

/// One past the largest index the program accesses of dimension `k` of
/// array `a`, affine in the parameters and reached for every parameter
/// value (the module's comment): in every run where the original stays in
/// bounds, the declared extent is at least this, and no access goes past
/// it. A private copy sized so holds every cell the program touches,
/// whatever the dataset the file is built for.
pub fn reached(p: &Program, a: ArrayId, k: usize) -> Result<Extent, String> {
    extent(p, a, k, None)
}

/// [`reached`], not in terms of `q` (the extent being worked out).
fn extent(p: &Program, a: ArrayId, k: usize, q: Option<Var>) -> Result<Extent, String> {
    let mut assumed = Vec::new();
    for c in &p.assumptions {
        assumed.extend(facts(c, true).unwrap_or_default());
    }
    let mut sites = Vec::new();
    let mut cx = Walk {
        a,
        k,
        forms: assumed,
        loops: Vec::new(),
        exact: true,
    };
    cx.nodes(&p.body, &mut sites);
    if sites.is_empty() {
        return Err("the program does not access it".into());
    }
    if sites.iter().any(|s| s.sub.is_none()) {
        return Err("an access's subscript is not affine".into());
    }
    for s in &sites {
        let Some(e) = candidate(s) else { continue };
        let mentions_q = q.is_some_and(|q| e.terms.contains_key(&q));
        if mentions_q || e.terms.keys().any(|v| matches!(v, Var::Counter(_))) {
            continue;
        }
        if dominates(s, &e, &sites) {
            return to_extent(p, &e).ok_or_else(|| "its extent overflows".into());
        }
    }
    Err("the largest index the program accesses is not an affine function of the parameters it reaches for every parameter value".into())
}

/// The largest subscript of site `s` plus one, as a form over parameters
/// (each loop counter replaced by the bound its coefficient favours,
/// innermost first), with the point that gives it; `None` when not exact.
fn candidate(s: &Site) -> Option<Linear> {
    if !s.exact {
        return None;
    }
    let mut f = s.sub.clone()?;
    for (v, lo, hi, step) in s.loops.iter().rev() {
        let c = f.terms.get(v).copied().unwrap_or(0);
        // With a step, the last iteration is not the upper bound.
        if c > 0 && *step != 1 {
            return None;
        }
        let by = if c > 0 { hi } else { lo };
        f = substitute(&f, *v, by)?;
    }
    f.constant = f.constant.checked_add(1)?;
    Some(f)
}

/// The point of site `s` that [`candidate`] picks: each counter as a
/// form over parameters, outermost first.
fn point(s: &Site) -> Option<Vec<(Var, Linear)>> {
    let mut f = s.sub.clone()?;
    let mut chosen = Vec::new();
    for (v, lo, hi, _) in s.loops.iter().rev() {
        let c = f.terms.get(v).copied().unwrap_or(0);
        let by = if c > 0 { hi } else { lo };
        f = substitute(&f, *v, by)?;
        chosen.push((*v, by.clone()));
    }
    chosen.reverse();
    // Outer counters first: each bound in terms of the outer ones.
    let mut out: Vec<(Var, Linear)> = Vec::new();
    for (v, mut by) in chosen {
        for (w, at) in &out {
            by = substitute(&by, *w, at)?;
        }
        out.push((v, by));
    }
    Some(out)
}

/// Whether `e`, the extent site `s` gives, is every access's: no access
/// reaches index `e` or past it, and whenever any access runs, `s`'s point
/// is in its domain (so index `e - 1` is accessed).
fn dominates(s: &Site, e: &Linear, sites: &[Site]) -> bool {
    let Some(at) = point(s) else {
        return false;
    };
    let mut reached = Vec::new();
    for form in &s.forms {
        let mut f = form.clone();
        for (v, by) in &at {
            match substitute(&f, *v, by) {
                Some(g) => f = g,
                None => return false,
            }
        }
        // The point fails this form: `-f - 1 >= 0`.
        reached.push(Linear::of(&Affine::constant(0)).minus(&f, -1));
    }
    sites.iter().all(|t| {
        let Some(sub) = &t.sub else { return false };
        let mut past = t.forms.clone();
        past.push(sub.minus(e, 0));
        infeasible(&past)
            && reached.iter().all(|r| {
                let mut fails = t.forms.clone();
                fails.push(r.clone());
                infeasible(&fails)
            })
    })
}

/// `f` with `v` replaced by `by`.
fn substitute(f: &Linear, v: Var, by: &Linear) -> Option<Linear> {
    let c = f.terms.get(&v).copied().unwrap_or(0);
    if c == 0 {
        return Some(f.clone());
    }
    let mut rest = f.clone();
    rest.terms.remove(&v);
    let scaled = Linear {
        terms: (by.terms.iter())
            .map(|(w, k)| Some((*w, k.checked_mul(c)?)))
            .collect::<Option<_>>()?,
        constant: by.constant.checked_mul(c)?,
    };
    rest.combine(1, &scaled, 1)
}

fn to_extent(p: &Program, e: &Linear) -> Option<Extent> {
    let mut terms = Vec::new();
    for (v, c) in &e.terms {
        let Var::Param(q) = v else { return None };
        terms.push((p.params[q.index()].name.clone(), i64::try_from(*c).ok()?));
    }
    Some(Extent {
        terms,
        constant: i64::try_from(e.constant).ok()?,
    })
}

/// The walk that collects the [`Site`]s of one array's dimension.
struct Walk {
    a: ArrayId,
    k: usize,
    forms: Vec<Linear>,
    loops: Vec<(Var, Linear, Linear, i64)>,
    exact: bool,
}

impl Walk {
    fn site(&self, acc: &Access, out: &mut Vec<Site>) {
        if acc.array != self.a {
            return;
        }
        let sub = (acc.subscripts.get(self.k))
            .and_then(|s| s.affine.as_ref())
            .map(Linear::of);
        out.push(Site {
            sub,
            forms: self.forms.clone(),
            loops: self.loops.clone(),
            exact: self.exact,
        });
    }

    fn cond(&self, c: &Cond, out: &mut Vec<Site>) {
        let mut reads = Vec::new();
        c.collect_reads(&mut reads);
        for r in reads {
            self.site(r.access, out);
        }
    }

    fn nodes(&mut self, body: &[Node], out: &mut Vec<Site>) {
        for n in body {
            match n {
                Node::Stmt(s) => {
                    for r in s.accesses() {
                        self.site(r.access, out);
                    }
                }
                Node::For(f) => {
                    let v = Var::Counter(f.counter);
                    let c = Linear::of(&Affine::var(v));
                    let (lo, hi) = (Linear::of(&f.lower.affine), Linear::of(&f.upper.affine));
                    let known = self.forms.len();
                    self.forms.push(c.minus(&lo, 0));
                    self.forms.push(hi.minus(&c, 0));
                    self.loops.push((v, lo, hi, f.step));
                    self.nodes(&f.body, out);
                    self.loops.pop();
                    self.forms.truncate(known);
                }
                Node::While(w) => {
                    self.cond(&w.cond.cond, out);
                    let exact = std::mem::replace(&mut self.exact, false);
                    self.nodes(&w.body, out);
                    self.exact = exact;
                }
                Node::If(i) => {
                    let known = self.forms.len();
                    let exact = self.exact;
                    // The later branches run where the earlier ones fail.
                    let (mut failed, mut failed_exact) = (Vec::new(), true);
                    for (c, b) in &i.branches {
                        self.cond(&c.cond, out);
                        self.forms.extend(failed.iter().cloned());
                        let here = facts(&c.cond, true);
                        self.exact = exact && failed_exact && here.is_some();
                        self.forms.extend(here.unwrap_or_default());
                        self.nodes(b, out);
                        self.forms.truncate(known);
                        match facts(&c.cond, false) {
                            Some(f) => failed.extend(f),
                            None => failed_exact = false,
                        }
                    }
                    if let Some(b) = &i.otherwise {
                        self.forms.extend(failed);
                        self.exact = exact && failed_exact;
                        self.nodes(b, out);
                        self.forms.truncate(known);
                    }
                    self.exact = exact;
                }
            }
        }
    }
}
