//! LMADs from the program model: a reference over the loops of a section
//! (row-major linearisation over the declared extents, one dimension per
//! loop counter the offset moves with, digest §1.3), and every loop's
//! read, write and must-write regions per array.

use super::lmad::{Dim, Lmad};
use super::ops;
use super::poly::Poly;
use crate::model::{Access, AccessRef, Affine, ArrayId, Cond, CounterId, Node, Program, Span, Var};
use std::collections::{BTreeMap, BTreeSet};

/// A loop around a reference, as the builder sees it.
#[derive(Clone, Debug)]
pub enum Frame {
    For {
        counter: CounterId,
        lo: Affine,
        hi: Affine,
        step: i64,
    },
    While {
        counter: CounterId,
    },
}

impl Frame {
    fn counter(&self) -> CounterId {
        match self {
            Frame::For { counter, .. } | Frame::While { counter } => *counter,
        }
    }
}

/// Why a region is a superset of the offsets accessed.
pub mod why {
    pub const NON_AFFINE: &str = "a non-affine subscript: the whole array";
    pub const SIGN: &str = "the sign of a stride depends on the parameters: the whole array";
    pub const WHILE_COUNTER: &str = "a subscript moves with a while loop's trips: the whole array";
    pub const OVERFLOW: &str = "arithmetic overflow: the whole array";
    pub const IN_WHILE: &str = "inside a while loop (it may run no trip)";
    pub const GUARD: &str = "under a guard";
    pub const NON_RECTANGULAR: &str =
        "non-rectangular loops: spans taken at their largest over the outer counters";
    pub const DECREASING_STEP: &str =
        "a decreasing walk over a loop with a step and symbolic bounds: every offset between";
    pub const EXTENSION: &str = "an extension access kind";
    pub const HULL: &str = "references merged into one covering descriptor";
}

fn subst(a: &Affine, v: Var, by: &Affine) -> Option<Affine> {
    let k = a.coeff(v);
    if k == 0 {
        return Some(a.clone());
    }
    a.checked_sub(&Affine::var(v).checked_scale(k)?)?
        .checked_add(&by.checked_scale(k)?)
}

/// The declared extents of an array (`hi − lo + 1` per dimension).
pub fn extents(p: &Program, array: ArrayId) -> Option<Vec<Poly>> {
    p.arrays[array.index()]
        .dims
        .iter()
        .map(|r| {
            Poly::from_affine(&r.hi.affine)
                .sub(&Poly::from_affine(&r.lo.affine))?
                .add_const(1)
        })
        .collect()
}

/// Every cell of the array: the fallback region, inexact.
pub fn whole(p: &Program, array: ArrayId) -> Lmad {
    let size = extents(p, array).and_then(|e| {
        e.iter()
            .try_fold(Poly::constant(1), |acc, x| acc.mul(x))
            .and_then(|s| s.add_const(-1))
    });
    let span = size.unwrap_or_else(|| Poly::constant(i64::MAX));
    Lmad::new(Poly::default(), vec![Dim::new(Poly::constant(1), span)])
        .inexact()
        .normalize()
}

/// The LMAD of `access` over the loops `loops` (outermost first), with
/// the reasons it is inexact; the counters of loops outside stay symbolic.
pub fn reference(
    p: &Program,
    access: &Access,
    loops: &[Frame],
    values: &dyn Fn(Var) -> Option<i64>,
) -> (Lmad, Vec<&'static str>) {
    let mut why = Vec::new();
    if access.ext.is_some() {
        why.push(why::EXTENSION);
    }
    match offsets(p, access, loops, values, &mut why) {
        Ok(l) => (l, why),
        Err(reason) => {
            why.push(reason);
            (whole(p, access.array), why)
        }
    }
}

fn offsets(
    p: &Program,
    access: &Access,
    loops: &[Frame],
    values: &dyn Fn(Var) -> Option<i64>,
    why: &mut Vec<&'static str>,
) -> Result<Lmad, &'static str> {
    let array = &p.arrays[access.array.index()];
    // Known parameter values first, so that the strides' signs are known.
    let ext = extents(p, access.array)
        .and_then(|e| {
            e.iter()
                .map(|x| x.partial(values))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or(why::OVERFLOW)?;
    // Row-major: the last dimension has stride 1.
    let mut lambda = vec![Poly::constant(1); ext.len()];
    for k in (0..ext.len().saturating_sub(1)).rev() {
        lambda[k] = lambda[k + 1].mul(&ext[k + 1]).ok_or(why::OVERFLOW)?;
    }
    let mut subs = Vec::new();
    for (s, r) in access.subscripts.iter().zip(&array.dims) {
        let a = s.affine.as_ref().ok_or(why::NON_AFFINE)?;
        subs.push(a.checked_sub(&r.lo.affine).ok_or(why::OVERFLOW)?);
    }
    // (stride, multiplier, extent): span = multiplier · extent.
    let mut dims: Vec<(Poly, Poly, Affine)> = Vec::new();
    let mut conds: Vec<Affine> = Vec::new();
    for f in loops.iter().rev() {
        let v = Var::Counter(f.counter());
        let coefs: Vec<i64> = subs.iter().map(|s| s.coeff(v)).collect();
        let (lo, hi, step) = match f {
            Frame::While { .. } if coefs.iter().all(|&c| c == 0) => {
                why.push(why::IN_WHILE);
                continue;
            }
            Frame::While { .. } => return Err(why::WHILE_COUNTER),
            Frame::For { lo, hi, step, .. } => (lo, hi, *step),
        };
        let trip = hi.checked_sub(lo).ok_or(why::OVERFLOW)?;
        let mut a = Poly::default();
        for (c, l) in coefs.iter().zip(&lambda) {
            a = a
                .add(&l.scale(*c).ok_or(why::OVERFLOW)?)
                .ok_or(why::OVERFLOW)?;
        }
        // Extents are positive, so the coefficients' common sign is the stride's.
        let sign = if coefs.iter().all(|&c| c >= 0) && !a.is_zero() {
            1
        } else if coefs.iter().all(|&c| c <= 0) && !a.is_zero() {
            -1
        } else {
            match a.as_constant() {
                Some(0) => 0,
                Some(c) => c.signum(),
                None => return Err(why::SIGN),
            }
        };
        // The region is empty unless every loop runs.
        conds.push(trip.clone());
        if sign == 0 {
            continue;
        }
        let abs = a.scale(sign).ok_or(why::OVERFLOW)?;
        let strided = abs.scale(step).ok_or(why::OVERFLOW)?;
        let start = match (step, trip.is_constant(), sign) {
            (1, _, 1) => {
                dims.push((abs.clone(), abs, trip));
                lo.clone()
            }
            (1, _, _) => {
                dims.push((abs.clone(), abs, trip));
                hi.clone()
            }
            (_, true, _) => {
                let e = trip.constant;
                let last = if e >= 0 { e - e % step } else { e };
                dims.push((strided, abs, Affine::constant(last)));
                let first = if sign > 0 { 0 } else { last.max(0) };
                lo.checked_add(&Affine::constant(first))
                    .ok_or(why::OVERFLOW)?
            }
            (_, false, 1) => {
                // σ = |a|·(hi − lo): rounding down to a multiple of the
                // stride is the LMAD's own.
                dims.push((strided, abs, trip));
                lo.clone()
            }
            _ => {
                why.push(why::DECREASING_STEP);
                dims.push((abs.clone(), abs, trip));
                hi.clone()
            }
        };
        for s in &mut subs {
            *s = subst(s, v, &start).ok_or(why::OVERFLOW)?;
        }
    }
    let mut base = Poly::default();
    for (s, l) in subs.iter().zip(&lambda) {
        base = base
            .add(&Poly::from_affine(s).mul(l).ok_or(why::OVERFLOW)?)
            .ok_or(why::OVERFLOW)?;
    }
    // Spans and conditions that move with a summarised counter: at their
    // largest, innermost counter first (its bounds name only outer ones).
    let mut widened = false;
    let mut widen = |e: &Affine| -> Result<Affine, &'static str> {
        let mut e = e.clone();
        for f in loops.iter().rev() {
            let v = Var::Counter(f.counter());
            let k = e.coeff(v);
            if k == 0 {
                continue;
            }
            widened = true;
            match f {
                Frame::While { .. } => return Err(why::WHILE_COUNTER),
                Frame::For { lo, hi, .. } => {
                    e = subst(&e, v, if k > 0 { hi } else { lo }).ok_or(why::OVERFLOW)?;
                }
            }
        }
        Ok(e)
    };
    let mut out = Vec::new();
    for (stride, mult, e) in &dims {
        let e = widen(e)?;
        let span = mult.mul(&Poly::from_affine(&e)).ok_or(why::OVERFLOW)?;
        out.push(Dim::new(stride.clone(), span));
    }
    let mut when = Vec::new();
    for c in &conds {
        when.push(Poly::from_affine(&widen(c)?));
    }
    if widened {
        why.push(why::NON_RECTANGULAR);
    }
    let mut l = Lmad::new(base, out);
    l.when = when;
    l.exact = why.is_empty();
    Ok(l.normalize())
}

/// A section of the program whose regions are summarised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    Loop {
        counter: CounterId,
        span: Span,
    },
    /// The whole program (what a procedure's summary will be).
    Program,
}

/// A set of offsets as LMADs; `exact` false: a superset (for a
/// must-write region: never, only exact LMADs enter it).
#[derive(Clone, Debug, Default)]
pub struct Region {
    pub lmads: Vec<Lmad>,
    pub exact: bool,
    pub notes: BTreeSet<&'static str>,
}

#[derive(Clone, Debug)]
pub struct ArrayRegions {
    pub array: ArrayId,
    pub read: Region,
    pub write: Region,
    pub must_write: Region,
}

#[derive(Clone, Debug)]
pub struct SectionRegions {
    pub section: Section,
    pub arrays: Vec<ArrayRegions>,
}

/// The LMADs of one kind of access and why some are inexact.
type Pile = (Vec<Lmad>, BTreeSet<&'static str>);

/// What a section gathers before aggregation: reads, writes, must-writes.
#[derive(Default)]
struct Gathered {
    arrays: BTreeMap<ArrayId, [Pile; 3]>,
}

struct Open {
    section: Section,
    /// Index into the frame stack where the section's loops start.
    depth: usize,
    /// Guards open when the section was entered.
    guards: usize,
    gathered: Gathered,
}

struct Walker<'a> {
    p: &'a Program,
    values: &'a dyn Fn(Var) -> Option<i64>,
    frames: Vec<Frame>,
    guards: usize,
    open: Vec<Open>,
    done: Vec<SectionRegions>,
}

/// Every loop's regions (loops innermost outward, in textual order of
/// their ends), then the whole program's; `values` fixes the parameters it
/// knows (the rest stay symbolic).
pub fn regions(p: &Program, values: &dyn Fn(Var) -> Option<i64>) -> Vec<SectionRegions> {
    let mut w = Walker {
        p,
        values,
        frames: Vec::new(),
        guards: 0,
        open: vec![Open {
            section: Section::Program,
            depth: 0,
            guards: 0,
            gathered: Gathered::default(),
        }],
        done: Vec::new(),
    };
    w.nodes(&p.body);
    if let Some(o) = w.open.pop() {
        w.close(o);
    }
    w.done
}

impl Walker<'_> {
    fn nodes(&mut self, nodes: &[Node]) {
        for n in nodes {
            self.node(n);
        }
    }

    fn enter(&mut self, frame: Frame, span: Span) {
        self.open.push(Open {
            section: Section::Loop {
                counter: frame.counter(),
                span,
            },
            depth: self.frames.len(),
            guards: self.guards,
            gathered: Gathered::default(),
        });
        self.frames.push(frame);
    }

    fn leave(&mut self) {
        self.frames.pop();
        if let Some(o) = self.open.pop() {
            self.close(o);
        }
    }

    fn node(&mut self, n: &Node) {
        match n {
            Node::For(f) => {
                self.enter(
                    Frame::For {
                        counter: f.counter,
                        lo: f.lower.affine.clone(),
                        hi: f.upper.affine.clone(),
                        step: f.step,
                    },
                    f.span,
                );
                self.nodes(&f.body);
                self.leave();
            }
            Node::While(wl) => {
                self.enter(
                    Frame::While {
                        counter: wl.counter,
                    },
                    wl.span,
                );
                self.cond(&wl.cond.cond);
                self.nodes(&wl.body);
                self.leave();
            }
            Node::If(i) => {
                for (k, (c, body)) in i.branches.iter().enumerate() {
                    // Only the first condition is always evaluated.
                    self.guards += usize::from(k > 0);
                    self.cond(&c.cond);
                    self.guards += 1;
                    self.nodes(body);
                    self.guards -= 1 + usize::from(k > 0);
                }
                if let Some(e) = &i.otherwise {
                    self.guards += 1;
                    self.nodes(e);
                    self.guards -= 1;
                }
            }
            Node::Stmt(s) => {
                for a in s.accesses() {
                    self.access(a);
                }
            }
        }
    }

    fn cond(&mut self, c: &Cond) {
        let mut reads = Vec::new();
        collect_cond_reads(c, &mut reads);
        for r in reads {
            self.access(r);
        }
    }

    fn access(&mut self, r: AccessRef<'_>) {
        for i in 0..self.open.len() {
            let (depth, guards) = (self.open[i].depth, self.open[i].guards);
            let (lmad, mut why) = reference(self.p, r.access, &self.frames[depth..], self.values);
            let guarded = self.guards > guards;
            if guarded {
                why.push(why::GUARD);
            }
            let mut lmad = lmad.partial(self.values).unwrap_or(lmad);
            if guarded {
                lmad.exact = false;
            }
            let slots = self.open[i]
                .gathered
                .arrays
                .entry(r.access.array)
                .or_default();
            let mut put = |k: usize, notes: &[&'static str]| {
                slots[k].0.push(lmad.clone());
                slots[k].1.extend(notes.iter().copied());
            };
            if r.kind.reads() {
                put(0, &why);
            }
            if r.kind.writes() {
                put(1, &why);
                if lmad.exact {
                    put(2, &[]);
                }
            }
        }
    }

    fn close(&mut self, o: Open) {
        let mut arrays = Vec::new();
        for (array, [r, w, m]) in o.gathered.arrays {
            let region = |(ls, notes): Pile| {
                let (lmads, exact) = ops::aggregate(&ls, false);
                Region {
                    lmads,
                    exact,
                    notes,
                }
            };
            arrays.push(ArrayRegions {
                array,
                read: region(r),
                write: region(w),
                must_write: region(m),
            });
        }
        self.done.push(SectionRegions {
            section: o.section,
            arrays,
        });
    }
}

fn collect_cond_reads<'a>(c: &'a Cond, out: &mut Vec<AccessRef<'a>>) {
    match c {
        Cond::Cmp(_, l, r) => {
            l.collect_reads(out);
            r.collect_reads(out);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            collect_cond_reads(a, out);
            collect_cond_reads(b, out);
        }
        Cond::Not(a) => collect_cond_reads(a, out),
        Cond::Unknown => {}
    }
}
