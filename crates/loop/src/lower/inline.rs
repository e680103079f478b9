//! Inlining a lowered [`Procedure`] at a call, at the model level: its
//! program is copied into the caller's builder with the formals bound to
//! the call's [`Actual`]s. Front ends that lower a callee's body to a
//! procedure without keeping a `.loop` syntax tree (the C front end) inline
//! through this; labels and condition names get the call's path as prefix
//! (`L.S`, `L._S1` for a generated label), as `.loop` inlining does.

use crate::model::affine_expr;
use crate::model::builder::{BuildError, ProgramBuilder};
use crate::model::calls::{Actual, CallSite, FormalKind, Procedure};
use crate::model::*;
use std::collections::HashMap;
use std::ops::Range;

/// What one inlined call added to the builder.
pub struct Spliced {
    pub stmts: Range<u32>,
    pub conds: Range<u32>,
    pub counters: Range<u32>,
    /// The callee's own call sites (`inner`) at this call: labels under
    /// the call's path, ids in the caller's numbering, arguments in the
    /// caller's terms; `parent` and `depth` are the callee's.
    pub sites: Vec<CallSite>,
}

struct Splicer<'a> {
    callee: &'a Program,
    /// Per callee parameter: its value in the caller.
    params: Vec<Expr>,
    /// Per callee array: the actual it is bound to.
    arrays: Vec<Option<&'a Actual>>,
    counters: HashMap<CounterId, CounterId>,
    /// `L.`; `None` keeps the labels and names (see [`rebase`]).
    prefix: Option<String>,
    live: Vec<String>,
    stmt_no: u32,
}

/// Inlines `callee` with `args` (one per formal): `outer` gives the
/// caller's value of a callee parameter that is not an integer formal (a
/// file parameter, by name); `live` names the loop counters open around
/// the call (a callee loop taking one of them is renamed).
pub fn splice(
    b: &mut ProgramBuilder,
    callee: &Procedure,
    args: &[Actual],
    outer: &dyn Fn(&str) -> Option<Expr>,
    prefix: &str,
    live: &[String],
    inner: &[CallSite],
) -> Result<Spliced, String> {
    let prog = &callee.program;
    let mut s = Splicer::new(callee, args, outer, Some(format!("{prefix}.")), live)?;
    let (s0, c0) = b.next_ids();
    let k0 = b.counts().2 as u32;
    s.nodes(b, &prog.body).map_err(|e| e.to_string())?;
    let (s1, c1) = b.next_ids();
    let sites = inner
        .iter()
        .map(|c| CallSite {
            label: format!("{prefix}.{}", c.label),
            stmts: c.stmts.start + s0.0..c.stmts.end + s0.0,
            conds: c.conds.start + c0.0..c.conds.end + c0.0,
            counters: c.counters.start + k0..c.counters.end + k0,
            args: c.args.iter().map(|a| s.actual(a)).collect(),
            ..c.clone()
        })
        .collect();
    Ok(Spliced {
        stmts: s0.0..s1.0,
        conds: c0.0..c1.0,
        counters: k0..b.counts().2 as u32,
        sites,
    })
}

impl<'a> Splicer<'a> {
    fn new(
        callee: &'a Procedure,
        args: &'a [Actual],
        outer: &dyn Fn(&str) -> Option<Expr>,
        prefix: Option<String>,
        live: &[String],
    ) -> Result<Splicer<'a>, String> {
        let prog = &callee.program;
        let mut params: Vec<Option<Expr>> = vec![None; prog.params.len()];
        let mut arrays = vec![None; prog.arrays.len()];
        for (f, a) in callee.formals.iter().zip(args) {
            match (f.kind, a) {
                (FormalKind::Int(p), Actual::Int(e)) => params[p.0 as usize] = Some(e.clone()),
                (FormalKind::Array(id, _), Actual::Array { .. }) => arrays[id.0 as usize] = Some(a),
                _ => return Err("an argument of the wrong kind".into()),
            }
        }
        let mut values = Vec::new();
        for (k, p) in params.into_iter().enumerate() {
            let name = &prog.params[k].name;
            match p.or_else(|| outer(name)) {
                Some(e) => values.push(e),
                None => return Err(format!("no parameter `{name}` at the call")),
            }
        }
        Ok(Splicer {
            callee: prog,
            params: values,
            arrays,
            counters: HashMap::new(),
            prefix,
            live: live.to_vec(),
            stmt_no: 0,
        })
    }

    fn nodes(&mut self, b: &mut ProgramBuilder, nodes: &[Node]) -> Result<(), BuildError> {
        for n in nodes {
            match n {
                Node::Stmt(st) => self.stmt(b, st),
                Node::For(f) => {
                    let name = self.counter_name(f.counter);
                    let lo = self.expr(&f.lower.expr);
                    let hi = self.expr(&f.upper.expr);
                    let c = b.begin_for_at(&name, lo, hi, f.step, f.parallel, f.span)?;
                    self.counters.insert(f.counter, c);
                    self.live.push(name);
                    self.nodes(b, &f.body)?;
                    self.live.pop();
                    b.end()?;
                }
                Node::While(w) => {
                    let name = self.cond_name(&w.cond);
                    let cond = self.cond(&w.cond.cond);
                    let c = b.begin_while_at(name.as_deref(), cond, w.span)?;
                    self.counters.insert(w.counter, c);
                    self.nodes(b, &w.body)?;
                    b.end()?;
                }
                Node::If(i) => {
                    for (k, (c, body)) in i.branches.iter().enumerate() {
                        let name = self.cond_name(c);
                        let cond = self.cond(&c.cond);
                        if k == 0 {
                            b.begin_if_at(name.as_deref(), cond, i.span)?;
                        } else {
                            b.elsif(name.as_deref(), cond, c.span)?;
                        }
                        self.nodes(b, body)?;
                    }
                    if let Some(e) = &i.otherwise {
                        b.otherwise()?;
                        self.nodes(b, e)?;
                    }
                    b.end()?;
                }
            }
        }
        Ok(())
    }

    fn stmt(&mut self, b: &mut ProgramBuilder, st: &Stmt) {
        self.stmt_no += 1;
        let label = match &self.prefix {
            None => (!st.label_generated).then(|| st.label.clone()),
            Some(p) if st.label_generated => Some(format!("{p}_S{}", self.stmt_no)),
            Some(p) => Some(format!("{p}{}", st.label)),
        };
        match &st.kind {
            StmtKind::Assign { target, op, value } => {
                let (t, v) = (self.access(target), self.expr(value));
                b.assign_at(label.as_deref(), st.copy, t, *op, v, st.span);
            }
            StmtKind::Call { func, args } => {
                let args = args.iter().map(|a| self.expr(a)).collect();
                b.call_at(label.as_deref(), st.copy, func, args, st.span);
            }
        }
    }

    /// The callee's counter name, unless a loop around the call has it.
    fn counter_name(&self, c: CounterId) -> String {
        let base = &self.callee.counters[c.0 as usize].name;
        let mut name = base.clone();
        let mut k = 1;
        while self.live.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        name
    }

    fn cond_name(&self, c: &Condition) -> Option<String> {
        let p = self.prefix.as_deref().unwrap_or("");
        (!c.generated).then(|| format!("{p}{}", c.name))
    }

    fn cond(&self, c: &Cond) -> Cond {
        c.map_exprs(&|e| self.expr(e))
    }

    fn expr(&self, e: &Expr) -> Expr {
        let kind = match &e.kind {
            ExprKind::Param(p) => return self.params[p.0 as usize].clone(),
            ExprKind::Counter(c) => ExprKind::Counter(self.counters.get(c).copied().unwrap_or(*c)),
            ExprKind::Access(a) => ExprKind::Access(self.access(a)),
            ExprKind::Call(f, args) => {
                ExprKind::Call(f.clone(), args.iter().map(|a| self.expr(a)).collect())
            }
            ExprKind::Neg(x) => ExprKind::Neg(Box::new(self.expr(x))),
            ExprKind::Binary(op, l, r) => {
                ExprKind::Binary(*op, Box::new(self.expr(l)), Box::new(self.expr(r)))
            }
            k => k.clone(),
        };
        fold(Expr::new(kind, e.span))
    }

    /// An inner call's argument in the caller's terms: a section of a
    /// formal is the same section of the formal's actual.
    fn actual(&self, a: &Actual) -> Actual {
        match a {
            Actual::Int(e) => Actual::Int(self.expr(e)),
            Actual::Array {
                array,
                fixed,
                offsets,
            } => {
                let fixed: Vec<Expr> = fixed
                    .iter()
                    .map(|f| f.clone().unwrap_or_else(|| Expr::int(0)))
                    .collect();
                let at = Access {
                    array: *array,
                    subscripts: fixed.into_iter().map(Subscript::new).collect(),
                    span: Span::NONE,
                    ext: None,
                };
                let outer = self.access(&at);
                // Which of the outer array's dimensions stay passed.
                let open: Vec<bool> = match self.arrays.get(array.0 as usize).copied().flatten() {
                    Some(Actual::Array { fixed: of, .. }) => {
                        let mut inner_open = a_open(a).into_iter();
                        of.iter()
                            .map(|f| f.is_none() && inner_open.next().unwrap_or(false))
                            .collect()
                    }
                    _ => a_open(a),
                };
                let outer_offsets: Vec<Expr> =
                    match self.arrays.get(array.0 as usize).copied().flatten() {
                        Some(Actual::Array {
                            offsets: oo,
                            fixed: of,
                            ..
                        }) => {
                            let mut inner = offsets.iter().map(|o| self.expr(o));
                            let mut k = 0;
                            let mut out = Vec::new();
                            let open_inner = a_open(a);
                            for f in of {
                                if f.is_none() {
                                    if open_inner.get(k).copied().unwrap_or(false) {
                                        let io = inner.next().unwrap_or_else(|| Expr::int(0));
                                        out.push(fold(crate::model::builder::e::add(
                                            io,
                                            oo[k].clone(),
                                        )));
                                    }
                                    k += 1;
                                }
                            }
                            out
                        }
                        _ => offsets.iter().map(|o| self.expr(o)).collect(),
                    };
                Actual::Array {
                    array: outer.array,
                    fixed: outer
                        .subscripts
                        .into_iter()
                        .zip(open)
                        .map(|(s, o)| (!o).then_some(s.expr))
                        .collect(),
                    offsets: outer_offsets,
                }
            }
        }
    }

    /// A formal's cell as the actual's cell (docs of [`Actual::Array`]).
    fn access(&self, a: &Access) -> Access {
        let subs: Vec<Expr> = a.subscripts.iter().map(|s| self.expr(&s.expr)).collect();
        let (array, subs) = match self.arrays.get(a.array.0 as usize).copied().flatten() {
            Some(Actual::Array {
                array,
                fixed,
                offsets,
            }) => {
                let mut passed = subs.into_iter().zip(offsets);
                let subs = fixed
                    .iter()
                    .map(|f| match f {
                        Some(x) => x.clone(),
                        None => passed.next().map_or_else(
                            || Expr::int(0),
                            |(x, o)| fold(crate::model::builder::e::add(x, o.clone())),
                        ),
                    })
                    .collect();
                (*array, subs)
            }
            _ => (a.array, subs),
        };
        Access {
            array,
            subscripts: subs.into_iter().map(Subscript::new).collect(),
            span: a.span,
            ext: a.ext.clone(),
        }
    }
}

/// The procedure with its parameters renumbered as summaries expect: the
/// caller's parameters (`file`, matched by name) first, then the integer
/// formals. `None` when it uses a parameter the caller lacks.
pub fn rebase(callee: &Procedure, file: &[Param]) -> Option<Procedure> {
    let mut b = ProgramBuilder::new();
    for p in file {
        b.param_at(&p.name, p.default, p.span).ok()?;
    }
    let mut args = Vec::new();
    let mut formals = Vec::new();
    for f in &callee.formals {
        let kind = match f.kind {
            FormalKind::Int(p) => {
                let id = b.param_at(&f.name, None, callee.program.params[p.0 as usize].span);
                let id = id.ok()?;
                args.push(Actual::Int(Expr::new(ExprKind::Param(id), Span::NONE)));
                FormalKind::Int(id)
            }
            FormalKind::Array(..) => FormalKind::Array(ArrayId(0), ElemType::Real),
        };
        formals.push(crate::model::calls::Formal {
            name: f.name.clone(),
            kind,
        });
    }
    // Arrays after the parameters: their ranges use them.
    let by_name = |n: &str| {
        let k = file.iter().position(|p| p.name == n)?;
        Some(Expr::new(ExprKind::Param(ParamId(k as u32)), Span::NONE))
    };
    let ints_only: Vec<Actual> = callee
        .formals
        .iter()
        .zip(&formals)
        .map(|(f, g)| match (f.kind, g.kind) {
            (FormalKind::Int(_), FormalKind::Int(id)) => {
                Actual::Int(Expr::new(ExprKind::Param(id), Span::NONE))
            }
            _ => Actual::Array {
                array: ArrayId(0),
                fixed: Vec::new(),
                offsets: Vec::new(),
            },
        })
        .collect();
    let ranges = Splicer::new(callee, &ints_only, &by_name, None, &[]).ok()?;
    let mut arrays = Vec::new();
    for (f, g) in callee.formals.iter().zip(formals.iter_mut()) {
        if let FormalKind::Array(id, elem) = f.kind {
            let decl = &callee.program.arrays[id.0 as usize];
            let dims = decl
                .dims
                .iter()
                .map(|r| (ranges.expr(&r.lo.expr), ranges.expr(&r.hi.expr)))
                .collect();
            let new = b.array_at(&decl.name, elem, dims, decl.span).ok()?;
            g.kind = FormalKind::Array(new, elem);
            arrays.push(Actual::Array {
                array: new,
                fixed: vec![None; decl.dims.len()],
                offsets: vec![Expr::int(0); decl.dims.len()],
            });
        }
    }
    let mut arrays = arrays.into_iter();
    let args: Vec<Actual> = callee
        .formals
        .iter()
        .map(|f| match f.kind {
            FormalKind::Int(_) => args.remove(0),
            FormalKind::Array(..) => arrays.next().unwrap_or(Actual::Int(Expr::int(0))),
        })
        .collect();
    let mut s = Splicer::new(callee, &args, &by_name, None, &[]).ok()?;
    s.nodes(&mut b, &callee.program.body).ok()?;
    Some(Procedure {
        name: callee.name.clone(),
        formals,
        program: b.finish().ok()?,
        span: callee.span,
    })
}

/// Per dimension of a section's array: whether it is passed.
fn a_open(a: &Actual) -> Vec<bool> {
    match a {
        Actual::Array { fixed, .. } => fixed.iter().map(Option::is_none).collect(),
        Actual::Int(_) => Vec::new(),
    }
}

/// An affine expression written out short (`j + 1 - 1` is `j`).
fn fold(e: Expr) -> Expr {
    match Affine::from_expr(&e) {
        Some(a)
            if !matches!(
                e.kind,
                ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_)
            ) =>
        {
            affine_expr(&a, e.span)
        }
        _ => e,
    }
}
