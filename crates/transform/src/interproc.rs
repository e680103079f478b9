//! σ at call granularity (docs/regions.md §7): every instance of
//! a call is one operation. Two ways to compute it, at concrete sizes, with
//! the bounded engine (`dataflow::analyze`):
//!
//! - **inline**: σ of the inlined program, each access instance inside a
//!   call mapped to its call instance (the call's site and the first
//!   `depth` entries of the iteration vector); a call's reads keep only
//!   their sources outside that call instance (what is read before the call
//!   writes it);
//! - **summary**: σ of a program where each call is replaced by statements
//!   for its translated summary (`regions::summary::at_call`): reads of USE,
//!   then may-writes of MOD (under `if ...`), then must-writes of KILL, each
//!   LMAD a loop nest `for t = 0 to span step stride` over `A[base + Σ t]`.
//!
//! Both programs are first **linearised**: every array becomes one
//! dimension of its row-major size at these sizes, so an LMAD (a set of
//! offsets) is an affine access. For affine subscripts within their ranges
//! this changes no source; a non-affine subscript then may touch every
//! offset of its array (not only of its dimension), identically in both.
//!
//! A call's reads are compared per (call instance, array): the union of the
//! sources of its reads of that array. The summary's answer must contain
//! the inlined one always and equal it when every summary involved is
//! exact (tests/interproc.rs).

use crate::dataflow::{self, DataflowError};
use crate::facts::Config;
use crate::model::builder::{e, ProgramBuilder};
use crate::model::calls::Calls;
use crate::model::*;
use crate::regions::summary::{self, CallSummary};
use crate::regions::{Lmad, Poly};
use std::collections::{BTreeMap, BTreeSet};

/// An operation at call granularity.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    /// An operation outside every call (sites of the inlined program).
    Op(Site, Vec<i64>),
    /// An instance of call site `k` (`Calls::sites`).
    Call(usize, Vec<i64>),
}

/// A read at call granularity.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadKey {
    /// A read outside every call: operation and access index.
    Op(Site, Vec<i64>, usize),
    /// The reads of one array by one call instance.
    Call(usize, Vec<i64>, ArrayId),
}

/// σ at call granularity: each read's sources, and whether the initial
/// value reaches it.
pub type CallFlow = BTreeMap<ReadKey, (BTreeSet<Unit>, bool)>;

/// Both answers for one program at one set of sizes.
#[derive(Debug)]
pub struct Comparison {
    pub inline: CallFlow,
    pub summary: CallFlow,
    /// Every summary at every call exact, and every LMAD expressible.
    pub exact: bool,
}

impl Comparison {
    /// The summary answer contains the inlined one, read by read.
    pub fn sound(&self) -> bool {
        self.inline.iter().all(|(k, (src, init))| {
            self.summary
                .get(k)
                .is_some_and(|(s, i)| src.is_subset(s) && (!init || *i))
        })
    }

    pub fn equal(&self) -> bool {
        self.inline == self.summary
    }
}

/// Where a statement or condition of a rebuilt program comes from.
#[derive(Clone, Debug)]
enum Origin {
    Site(Site),
    /// Summary statements of call site `k`: `read` for the USE reads.
    Call(usize),
}

struct Rebuild<'a> {
    p: &'a Program,
    calls: &'a Calls,
    values: &'a [i64],
    b: ProgramBuilder,
    /// Old counter → new counter.
    counters: BTreeMap<CounterId, CounterId>,
    /// Row-major multipliers and lower bounds per array, at these sizes.
    shape: Vec<(Vec<i64>, Vec<i64>)>,
    stmts: Vec<Origin>,
    conds: Vec<Origin>,
    /// The summaries at the outermost calls (`None`: inline).
    summaries: Option<&'a BTreeMap<usize, Vec<CallSummary>>>,
    exact: bool,
    fresh: u32,
}

/// Why the two answers could not be computed.
#[derive(Debug)]
pub enum Error {
    Dataflow(DataflowError),
    /// Parameter values, or an array whose size is not positive.
    Sizes(String),
}

impl From<DataflowError> for Error {
    fn from(e: DataflowError) -> Error {
        Error::Dataflow(e)
    }
}

fn eval_affine(a: &Affine, values: &[i64]) -> Option<i64> {
    let mut v = a.constant;
    for &(x, k) in &a.terms {
        let Var::Param(q) = x else { return None };
        v = v.checked_add(k.checked_mul(values[q.index()])?)?;
    }
    Some(v)
}

/// An affine form with the parameters replaced by their values.
fn fix_params(a: &Affine, values: &[i64]) -> Option<Affine> {
    let mut out = Affine::constant(a.constant);
    for &(x, k) in &a.terms {
        match x {
            Var::Param(q) => {
                out = out.checked_add(&Affine::constant(k.checked_mul(values[q.index()])?))?
            }
            Var::Counter(_) => out = out.checked_add(&Affine::var(x).checked_scale(k)?)?,
        }
    }
    Some(out)
}

impl<'a> Rebuild<'a> {
    fn new(
        p: &'a Program,
        calls: &'a Calls,
        values: &'a [i64],
        summaries: Option<&'a BTreeMap<usize, Vec<CallSummary>>>,
    ) -> Result<Rebuild<'a>, Error> {
        let mut b = ProgramBuilder::new();
        for q in &p.params {
            let id = (b.param_at(&q.name, q.default, q.span))
                .map_err(|e| Error::Sizes(e.to_string()))?;
            if let Some(d) = &q.derived {
                b.derive(id, d.clone());
            }
        }
        let mut shape = Vec::new();
        for a in &p.arrays {
            let mut lo = Vec::new();
            let mut ext = Vec::new();
            for r in &a.dims {
                let l = eval_affine(&r.lo.affine, values);
                let h = eval_affine(&r.hi.affine, values);
                let (Some(l), Some(h)) = (l, h) else {
                    return Err(Error::Sizes(format!("the ranges of `{}`", a.name)));
                };
                lo.push(l);
                ext.push((h - l + 1).max(1));
            }
            let mut mult = vec![1i64; ext.len()];
            for d in (0..ext.len().saturating_sub(1)).rev() {
                mult[d] = mult[d + 1]
                    .checked_mul(ext[d + 1])
                    .ok_or_else(|| Error::Sizes(format!("the size of `{}`", a.name)))?;
            }
            let size = ext.iter().try_fold(1i64, |s, &x| s.checked_mul(x));
            let size = size.ok_or_else(|| Error::Sizes(format!("the size of `{}`", a.name)))?;
            let dims = if a.dims.is_empty() {
                Vec::new()
            } else {
                vec![(e::int(0), e::int(size - 1))]
            };
            b.array_at(&a.name, a.elem, dims, a.span)
                .map_err(|e| Error::Sizes(e.to_string()))?;
            shape.push((mult, lo));
        }
        Ok(Rebuild {
            p,
            calls,
            values,
            b,
            counters: BTreeMap::new(),
            shape,
            stmts: Vec::new(),
            conds: Vec::new(),
            summaries,
            exact: true,
            fresh: 0,
        })
    }

    fn expr(&self, x: &Expr) -> Expr {
        x.map_parts(&|c| self.counters[&c], &|a| self.access(a))
    }

    fn cond(&self, c: &Cond) -> Cond {
        c.map_exprs(&|e| self.expr(e))
    }

    /// `A[s1, ..., sn]` as `A[Σ λ_d (s_d − lo_d)]`.
    fn access(&self, a: &Access) -> Access {
        let (mult, lo) = &self.shape[a.array.index()];
        if a.subscripts.is_empty() {
            return e::access(a.array, Vec::new());
        }
        let affine = a.subscripts.iter().zip(mult.iter().zip(lo)).try_fold(
            Affine::constant(0),
            |acc, (s, (&m, &l))| {
                let x = fix_params(s.affine.as_ref()?, self.values)?;
                let x = x.checked_sub(&Affine::constant(l))?.checked_scale(m)?;
                let x = self.rename(&x)?;
                acc.checked_add(&x)
            },
        );
        let sub = match affine {
            Some(x) => crate::lower::affine_expr(&x, a.span),
            None => {
                // Non-affine: kept as an expression (a may-access).
                let mut sum = e::int(0);
                for (s, (&m, &l)) in a.subscripts.iter().zip(mult.iter().zip(lo)) {
                    let part = e::mul(e::int(m), e::sub(self.expr(&s.expr), e::int(l)));
                    sum = e::add(sum, part);
                }
                sum
            }
        };
        let mut out = e::access(a.array, vec![sub]);
        out.span = a.span;
        out
    }

    fn rename(&self, x: &Affine) -> Option<Affine> {
        let mut out = Affine::constant(x.constant);
        for &(v, k) in &x.terms {
            let v = match v {
                Var::Counter(c) => Var::Counter(*self.counters.get(&c)?),
                v => v,
            };
            out = out.checked_add(&Affine::var(v).checked_scale(k)?)?;
        }
        Some(out)
    }

    /// The outermost call a node was inlined from: a loop by its counter,
    /// an `if` by its first condition, a statement by its id.
    fn call_of(&self, n: &Node) -> Option<usize> {
        match n {
            Node::Stmt(s) => self.calls.site_of_stmt(s.id.0),
            Node::For(f) => self.calls.site_of_counter(f.counter.0),
            Node::While(w) => self.calls.site_of_counter(w.counter.0),
            Node::If(i) => self.calls.site_of_cond(i.branches[0].0.id.0),
        }
    }

    fn nodes(&mut self, nodes: &[Node]) -> Result<(), Error> {
        let mut done: BTreeSet<usize> = BTreeSet::new();
        for n in nodes {
            if let (Some(sums), Some(k)) = (self.summaries, self.call_of(n)) {
                if done.insert(k) {
                    let s = sums.get(&k).cloned().unwrap_or_default();
                    self.summary_stmts(k, &s)?;
                }
                continue;
            }
            self.node(n)?;
        }
        Ok(())
    }

    fn err(e: crate::model::builder::BuildError) -> Error {
        Error::Sizes(e.to_string())
    }

    fn node(&mut self, n: &Node) -> Result<(), Error> {
        match n {
            Node::Stmt(s) => {
                self.stmts.push(Origin::Site(Site::Stmt(s.id)));
                match &s.kind {
                    StmtKind::Assign { target, op, value } => {
                        let t = self.access(target);
                        let v = self.expr(value);
                        self.b.assign_at(Some(&s.label), s.copy, t, *op, v, s.span);
                    }
                    StmtKind::Call { func, args } => {
                        let args = args.iter().map(|a| self.expr(a)).collect();
                        self.b.call_at(Some(&s.label), s.copy, func, args, s.span);
                    }
                }
            }
            Node::For(f) => {
                let lo = self.expr(&f.lower.expr);
                let hi = self.expr(&f.upper.expr);
                let name = self.p.counter_decl(f.counter).name.clone();
                let c = self
                    .b
                    .begin_for_at(&name, lo, hi, f.step, f.parallel, f.span)
                    .map_err(Self::err)?;
                self.counters.insert(f.counter, c);
                self.nodes(&f.body)?;
                self.b.end().map_err(Self::err)?;
            }
            Node::While(w) => {
                self.conds.push(Origin::Site(Site::Cond(w.cond.id)));
                // The condition may use its own counter: the next id.
                let (_, _, next) = self.b.counts();
                self.counters.insert(w.counter, CounterId(next as u32));
                let c = self.cond(&w.cond.cond);
                self.b
                    .begin_while_at(Some(&w.cond.name), c, w.span)
                    .map_err(Self::err)?;
                self.nodes(&w.body)?;
                self.b.end().map_err(Self::err)?;
            }
            Node::If(i) => {
                for (k, (c, body)) in i.branches.iter().enumerate() {
                    self.conds.push(Origin::Site(Site::Cond(c.id)));
                    let cc = self.cond(&c.cond);
                    if k == 0 {
                        self.b.begin_if_at(Some(&c.name), cc, i.span)
                    } else {
                        self.b.elsif(Some(&c.name), cc, i.span)
                    }
                    .map_err(Self::err)?;
                    self.nodes(body)?;
                }
                if let Some(body) = &i.otherwise {
                    self.b.otherwise().map_err(Self::err)?;
                    self.nodes(body)?;
                }
                self.b.end().map_err(Self::err)?;
            }
        }
        Ok(())
    }

    /// A polynomial over the caller's counters (parameters fixed) as an
    /// affine form of the rebuilt program's counters.
    fn poly_affine(&self, x: &Poly) -> Option<Affine> {
        let fixed = x.partial(&|v| match v {
            Var::Param(q) => self.values.get(q.index()).copied(),
            Var::Counter(_) => None,
        })?;
        let mut out = Affine::constant(fixed.as_constant().unwrap_or(0));
        if fixed.as_constant().is_some() {
            return Some(out);
        }
        // Affine: every term one counter (checked by rebuilding it).
        let mut back = Poly::constant(0);
        for v in fixed.vars().collect::<BTreeSet<_>>() {
            let k = fixed
                .partial(&|w| Some(i64::from(w == v)))?
                .as_constant()?
                .checked_sub(fixed.partial(&|_| Some(0))?.as_constant()?)?;
            let Var::Counter(c) = v else { return None };
            out = out.checked_add(
                &Affine::var(Var::Counter(*self.counters.get(&c)?)).checked_scale(k)?,
            )?;
            back = back.add(&Poly::var(v).scale(k)?)?;
        }
        out.constant = fixed.partial(&|_| Some(0))?.as_constant()?;
        let back = back.add_const(out.constant)?;
        (back == fixed).then_some(out)
    }

    /// One LMAD as a loop nest around `body(access)`; `false` when it is
    /// not expressible (symbolic strides or spans, a non-affine base).
    fn lmad_loops(
        &mut self,
        array: ArrayId,
        l: &Lmad,
        body: &mut dyn FnMut(&mut Self, Access),
    ) -> Result<bool, Error> {
        let Some(base) = self.poly_affine(&l.base) else {
            return Ok(false);
        };
        let mut dims = Vec::new();
        for d in &l.dims {
            let (Some(st), Some(sp)) = (self.poly_affine(&d.stride), self.poly_affine(&d.span))
            else {
                return Ok(false);
            };
            if !st.is_constant() || st.constant <= 0 {
                return Ok(false);
            }
            dims.push((st.constant, sp));
        }
        let mut guards = Vec::new();
        for w in &l.when {
            let Some(w) = self.poly_affine(w) else {
                return Ok(false);
            };
            if w.is_constant() {
                if w.constant < 0 {
                    return Ok(true);
                }
            } else {
                guards.push(w);
            }
        }
        for g in &guards {
            let c = e::cmp(
                CmpOp::Ge,
                crate::lower::affine_expr(g, Span::NONE),
                e::int(0),
            );
            self.b.begin_if(None, c).map_err(Self::err)?;
            self.conds.push(Origin::Call(usize::MAX));
        }
        let mut sub = base;
        for (st, sp) in &dims {
            self.fresh += 1;
            let name = format!("t{}", self.fresh);
            let c = self
                .b
                .begin_for_at(
                    &name,
                    e::int(0),
                    crate::lower::affine_expr(sp, Span::NONE),
                    *st,
                    false,
                    Span::NONE,
                )
                .map_err(Self::err)?;
            sub = sub
                .checked_add(&Affine::var(Var::Counter(c)))
                .ok_or_else(|| Error::Sizes("overflow".into()))?;
        }
        let access = if self.p.arrays[array.index()].dims.is_empty() {
            e::access(array, Vec::new())
        } else {
            e::access(array, vec![crate::lower::affine_expr(&sub, Span::NONE)])
        };
        body(self, access);
        for _ in 0..dims.len() + guards.len() {
            self.b.end().map_err(Self::err)?;
        }
        Ok(true)
    }

    fn summary_stmts(&mut self, k: usize, s: &[CallSummary]) -> Result<(), Error> {
        if !summary::call_exact(s) {
            self.exact = false;
        }
        let label = self.calls.sites[k].label.clone();
        let guards_before = self.conds.len();
        for part in 0..3 {
            for a in s {
                let region = [&a.uses, &a.mods, &a.kill][part];
                for l in &region.lmads {
                    self.fresh += 1;
                    let lab = format!("{label}.{}{}", ["use", "mod", "kill"][part], self.fresh);
                    let mut emit = |me: &mut Self, acc: Access| {
                        me.stmts.push(Origin::Call(k));
                        match part {
                            0 => {
                                me.b.call_at(
                                    Some(&lab),
                                    false,
                                    "use",
                                    vec![Expr::new(ExprKind::Access(acc), Span::NONE)],
                                    Span::NONE,
                                );
                            }
                            // MOD under an unknown condition (a may-write),
                            // KILL plain (a must-write).
                            _ => {
                                let may = part == 1;
                                if may {
                                    if me.b.begin_if(None, Cond::Unknown).is_err() {
                                        return;
                                    }
                                    me.conds.push(Origin::Call(k));
                                }
                                me.b.assign_at(
                                    Some(&lab),
                                    false,
                                    acc,
                                    None,
                                    e::unknown(),
                                    Span::NONE,
                                );
                                if may {
                                    let _ = me.b.end();
                                }
                            }
                        }
                    };
                    if !self.lmad_loops(a.array, l, &mut emit)? {
                        // Not expressible: the whole array, may-accessed.
                        self.exact = false;
                        if part < 2 {
                            let size = self.p.arrays[a.array.index()].dims.len();
                            let acc = if size == 0 {
                                e::access(a.array, Vec::new())
                            } else {
                                e::access(a.array, vec![e::call("any", Vec::new())])
                            };
                            emit(self, acc);
                        }
                    }
                }
            }
        }
        for o in &mut self.conds[guards_before..] {
            if matches!(o, Origin::Call(usize::MAX)) {
                *o = Origin::Call(k);
            }
        }
        // Distinct labels per statement: the builder numbers them apart.
        Ok(())
    }
}

/// σ at call granularity from a rebuilt program's σ.
fn project(calls: &Calls, flow: &dataflow::Flow, stmts: &[Origin], conds: &[Origin]) -> CallFlow {
    let unit = |site: Site, iter: &[i64]| -> Unit {
        let origin = match site {
            Site::Stmt(s) => &stmts[s.index()],
            Site::Cond(c) => &conds[c.index()],
        };
        let own = match origin {
            Origin::Site(Site::Stmt(s)) => calls.site_of_stmt(s.0).map(|k| (k, *s, true)),
            Origin::Site(Site::Cond(c)) => calls.site_of_cond(c.0).map(|k| (k, StmtId(c.0), false)),
            Origin::Call(k) => Some((*k, StmtId(0), true)),
        };
        match (own, origin) {
            (Some((k, _, _)), _) => Unit::Call(k, iter[..calls.sites[k].depth].to_vec()),
            (None, Origin::Site(s)) => Unit::Op(*s, iter.to_vec()),
            (None, Origin::Call(_)) => unreachable!("a call origin always has its site"),
        }
    };
    let mut out = CallFlow::new();
    for r in flow.iter() {
        let me = unit(r.site(), r.iter());
        let key = match &me {
            Unit::Call(k, it) => ReadKey::Call(*k, it.clone(), r.array()),
            Unit::Op(s, it) => ReadKey::Op(*s, it.clone(), r.access()),
        };
        let srcs: BTreeSet<Unit> = r
            .writes()
            .map(|(s, it)| unit(s, it))
            .filter(|u| !(matches!(me, Unit::Call(..)) && *u == me))
            .collect();
        let init = r.initial();
        if matches!(me, Unit::Call(..)) && srcs.is_empty() && !init {
            continue; // not upward exposed
        }
        let slot = out.entry(key).or_default();
        slot.0.extend(srcs);
        slot.1 |= init;
    }
    out
}

/// Both answers at the sizes of `config` (parameters from it, else the
/// defaults).
pub fn compare(p: &Program, calls: &Calls, config: &Config) -> Result<Comparison, Error> {
    let values = p.param_values(&config.params).map_err(Error::Sizes)?;
    let value = |v: Var| match v {
        Var::Param(q) => values.get(q.index()).copied(),
        Var::Counter(_) => None,
    };
    let summaries: Vec<_> = calls
        .procs
        .iter()
        .map(|q| summary::summarize(q, &value))
        .collect();
    let mut at = BTreeMap::new();
    for (k, site) in calls.sites.iter().enumerate() {
        if site.parent.is_none() {
            at.insert(
                k,
                summary::at_call(p, calls, site, &summaries[site.proc], &value),
            );
        }
    }
    let mut inline = Rebuild::new(p, calls, &values, None)?;
    inline.nodes(&p.body)?;
    let (istmts, iconds) = (
        std::mem::take(&mut inline.stmts),
        std::mem::take(&mut inline.conds),
    );
    let ip = inline.b.finish().map_err(Rebuild::err)?;
    let mut sum = Rebuild::new(p, calls, &values, Some(&at))?;
    sum.nodes(&p.body)?;
    let exact = sum.exact;
    let (sstmts, sconds) = (
        std::mem::take(&mut sum.stmts),
        std::mem::take(&mut sum.conds),
    );
    let sp = sum.b.finish().map_err(Rebuild::err)?;
    let iflow = dataflow::analyze(&ip, config)?;
    let sflow = dataflow::analyze(&sp, config)?;
    Ok(Comparison {
        inline: project(calls, &iflow, &istmts, &iconds),
        summary: project(calls, &sflow, &sstmts, &sconds),
        exact,
    })
}

/// `S[1, 2]` or `call L[3]` (the call's label and its instance).
fn unit_text(p: &Program, calls: &Calls, u: &Unit) -> String {
    let iter = |it: &[i64]| {
        if it.is_empty() {
            String::new()
        } else {
            let v: Vec<String> = it.iter().map(i64::to_string).collect();
            format!("[{}]", v.join(", "))
        }
    };
    match u {
        Unit::Op(s, it) => format!("{}{}", p.site_name(*s), iter(it)),
        Unit::Call(k, it) => format!("call {}{}", calls.sites[*k].label, iter(it)),
    }
}

/// One line per read at call granularity: `R reads access 0 from call L[2]`,
/// `call L[2] reads B from I, the initial value`.
pub fn render(p: &Program, calls: &Calls, flow: &CallFlow) -> String {
    let mut out = String::new();
    for (k, (srcs, init)) in flow {
        let who = match k {
            ReadKey::Op(s, it, a) => format!(
                "{} reads access {a}",
                unit_text(p, calls, &Unit::Op(*s, it.clone()))
            ),
            ReadKey::Call(c, it, array) => format!(
                "{} reads {}",
                unit_text(p, calls, &Unit::Call(*c, it.clone())),
                p.arrays[array.index()].name
            ),
        };
        let mut from: Vec<String> = srcs.iter().map(|u| unit_text(p, calls, u)).collect();
        if *init {
            from.push("the initial value".into());
        }
        out.push_str(&format!("{who} from {}\n", from.join(", ")));
    }
    out
}
