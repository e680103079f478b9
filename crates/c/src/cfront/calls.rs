//! Calls to functions defined in the same file (docs/c.md,
//! *Calls*). A `void` function called as a statement from another function
//! is lowered on its own into a [`Procedure`] (its array parameters as
//! arrays, its `int` parameters as parameters) and every call
//! `f(A, B[i], n, i + 1);` is inlined through [`crate::lower::splice`], the
//! model-level inliner, with a [`CallSite`] record as for `.loop` calls.
//! A function or call outside that form keeps the unknown-call reading
//! (W0905 may-writes).

use super::lvalues::walk;
use super::scan::children;
use super::*;
use crate::model::calls::{Actual, CallSite, Calls, Formal, FormalKind, Procedure};

#[derive(Default)]
pub(super) struct CProcs<'t> {
    pub calls: Calls,
    /// Per procedure: the calls inlined into its own program.
    inner: Vec<Vec<CallSite>>,
    by_name: HashMap<&'t str, usize>,
    /// Start bytes of the functions lowered as procedures (not regions
    /// unless a call is not inlined), and their procedures.
    pub funcs: HashMap<usize, usize>,
    /// Procedures with a call that was not inlined: their bodies are
    /// analysed as regions too, after the others.
    pub not_inlined: HashSet<usize>,
    /// Unlabelled calls so far in the program being built (`_P1`, ...).
    top_calls: u32,
}

impl CProcs<'_> {
    pub fn index_of(&self, func_start: usize) -> Option<usize> {
        self.funcs.get(&func_start).copied()
    }
}

impl<'t> Ctx<'t> {
    /// Lowers, in file order, every `void` function called as a statement
    /// in a region of another function.
    pub(super) fn lower_procs(&mut self, functions: &[Node<'t>], regions: &[Region<'t>]) {
        for &f in functions {
            let name = scan::function_name(self.src, f);
            let void = f.field(F::Type).is_some_and(|t| self.text(t) == "void");
            if !void || !self.called_elsewhere(regions, f, name) {
                continue;
            }
            let Some(r) = self.function_region(f) else {
                continue;
            };
            self.lower_proc(&r);
        }
    }

    fn called_elsewhere(&self, regions: &[Region<'t>], f: Node<'t>, name: &str) -> bool {
        let mut found = false;
        for r in regions.iter().filter(|r| r.func != f) {
            walk(&r.items, |n| {
                found |= n.kind() == "call_expression"
                    && n.parent()
                        .is_some_and(|p| p.kind() == "expression_statement")
                    && n.field(F::Function)
                        .is_some_and(|c| c.kind() == "identifier" && self.text(c) == name);
            });
        }
        found
    }

    fn lower_proc(&mut self, r: &Region<'t>) {
        let saved_b = std::mem::take(&mut self.b);
        let saved_sites = std::mem::take(&mut self.procs.calls.sites);
        let saved_top = std::mem::replace(&mut self.procs.top_calls, 0);
        let names = self.array_names.clone();
        let (locals_at, diags_at, vars_at) = (self.locals.len(), self.diags.len(), self.vars.len());
        let before: Vec<bool> = self.vars.iter().map(|v| v.array.is_some()).collect();
        self.assigned = lvalues::prescan(self.src, &r.items).0;
        // Inlining passes the caller's arrays: no overlap to assume here.
        self.alias.procedure = true;
        let ok = self.lower_region(r);
        self.alias.procedure = false;
        let mut why = None;
        let mut formals = Vec::new();
        // Scalars passed by value: inlining binds them to the caller's
        // cell, which is right only while the callee does not assign them.
        let mut by_value = Vec::new();
        if ok {
            if let Some(g) = (0..vars_at).find(|&k| !before[k] && self.vars[k].array.is_some()) {
                why = Some(format!(
                    "it uses `{}`, which is not one of its parameters",
                    self.vars[g].name
                ));
            }
            for k in vars_at..self.vars.len() {
                let v = &self.vars[k];
                if !v.func_param {
                    continue;
                }
                let kind = match (v.array, v.param) {
                    (Some(a), _) => {
                        if v.dims.is_empty() && v.pointers == 0 {
                            by_value.push((a, v.name));
                        }
                        FormalKind::Array(a, v.elem)
                    }
                    (None, Some(p)) => FormalKind::Int(p),
                    (None, None) if v.dims.is_empty() && v.pointers == 0 => {
                        match self.b.param_at(v.name, None, v.span) {
                            Ok(p) => FormalKind::Int(p),
                            Err(_) => {
                                why = Some(format!("its parameter `{}` is unused", v.name));
                                continue;
                            }
                        }
                    }
                    _ => {
                        why = Some(format!("its parameter `{}` is unused", v.name));
                        continue;
                    }
                };
                formals.push(Formal {
                    name: v.name.to_string(),
                    kind,
                });
            }
            // Its own arrays would have no place in the caller.
            let local = (0..self.b.counts().1 as u32).map(ArrayId).find(|&a| {
                !formals
                    .iter()
                    .any(|f| matches!(f.kind, FormalKind::Array(id, _) if id == a))
            });
            if let Some(a) = local {
                let name = &self.b.array_decl(a).name;
                why = Some(if super::cvalue::is_effects_array(name) {
                    "it makes a call that is a barrier".to_string()
                } else {
                    format!("it uses `{name}`, which is not one of its parameters")
                });
            }
            self.rollback();
        }
        let b = std::mem::replace(&mut self.b, saved_b);
        let inner = std::mem::replace(&mut self.procs.calls.sites, saved_sites);
        self.procs.top_calls = saved_top;
        self.array_names = names;
        self.locals.truncate(locals_at);
        if !ok {
            // Lowered again as a region, which says why it is skipped.
            self.diags.truncate(diags_at);
            return;
        }
        let program = b.finish().unwrap_or_default();
        let assigned = by_value.iter().find(|(a, _)| {
            program
                .stmts()
                .iter()
                .any(|s| s.write().is_some_and(|(t, _)| t.array == *a))
        });
        if let (None, Some((_, name))) = (&why, assigned) {
            why = Some(format!(
                "it assigns its parameter `{name}`, which C passes by value"
            ));
        }
        if let Some(why) = why {
            self.warn(
                W_CALL_WRITES,
                format!("calls to `{}` are not inlined: {why}", r.func_name),
                r.anchor,
                "this function",
                "a call to it may write the arrays it is passed (docs/c.md, Calls)",
            );
            return;
        }
        self.procs
            .funcs
            .insert(r.func.start_byte(), self.procs.calls.procs.len());
        self.procs
            .by_name
            .insert(r.func_name, self.procs.calls.procs.len());
        self.procs.inner.push(inner);
        self.procs.calls.procs.push(Procedure {
            name: r.func_name.to_string(),
            formals,
            program,
            span: r.anchor,
        });
    }

    /// `L: f(args);` for a procedure `f`: inlined, and `true`. `false`
    /// (nothing changed) when `f` is not one or an argument is outside the
    /// forms inlining takes: the caller reads it as an unknown call.
    pub(super) fn proc_call(
        &mut self,
        e: Node<'t>,
        label: stmt::Label<'t>,
        at: Span,
    ) -> Result<bool, Skip> {
        let Some(func) = e.field(F::Function).filter(|f| f.kind() == "identifier") else {
            return Ok(false);
        };
        let Some(&index) = self.procs.by_name.get(self.text(func)) else {
            return Ok(false);
        };
        let args = e.field(F::Arguments).map(children).unwrap_or_default();
        let fits = args.len() == self.procs.calls.procs[index].formals.len();
        let (esc, mw, dg) = (self.escapes.len(), self.may_writes.len(), self.diags.len());
        let actuals = fits.then(|| self.actuals(index, &args)).flatten();
        self.escapes.truncate(esc);
        self.may_writes.truncate(mw);
        let Some(actuals) = actuals else {
            self.diags.truncate(dg);
            self.procs.not_inlined.insert(index);
            self.warn(
                W_CALL_WRITES,
                format!("this call to `{}` is not inlined", self.text(func)),
                at,
                "read as an unknown call",
                "inlining takes a whole array, a row `B[i]`, an element for a scalar, and affine integers (docs/c.md, Calls)",
            );
            return Ok(false);
        };
        let path = match self.stmt_label(label) {
            Some(l) => l,
            None => {
                self.procs.top_calls += 1;
                format!("_P{}", self.procs.top_calls)
            }
        };
        // The callee's file parameters (`#define`s, globals), by name.
        let callee = &self.procs.calls.procs[index];
        let formal = |k: usize| {
            callee
                .formals
                .iter()
                .any(|f| matches!(f.kind, FormalKind::Int(p) if p.0 as usize == k))
        };
        let wanted: Vec<(usize, String, Option<i64>)> = (callee.program.params.iter())
            .enumerate()
            .filter(|&(k, _)| !formal(k))
            .map(|(k, p)| (k, p.name.clone(), p.default))
            .collect();
        let mut outer: Vec<Option<Expr>> = vec![None; callee.program.params.len()];
        for (k, n, d) in wanted {
            outer[k] = Some(Expr::new(ExprKind::Param(self.param_for(&n, d, at)), at));
        }
        let callee = &self.procs.calls.procs[index];
        let by_name = |n: &str| {
            let k = callee.program.params.iter().position(|p| p.name == n)?;
            outer.get(k).cloned().flatten()
        };
        let inner = &self.procs.inner[index];
        let live = self.loop_names.clone();
        let done =
            crate::lower::splice(&mut self.b, callee, &actuals, &by_name, &path, &live, inner)
                .map_err(|why| self.unsupported_stmt(format!("inlining this call ({why})"), at))?;
        let depth = self.loop_names.len();
        let top = self.procs.calls.sites.len();
        self.procs.calls.sites.push(CallSite {
            label: path,
            proc: index,
            parent: None,
            depth,
            stmts: done.stmts,
            conds: done.conds,
            counters: done.counters,
            args: actuals,
            span: at,
        });
        for s in done.sites {
            self.procs.calls.sites.push(CallSite {
                parent: Some(s.parent.map_or(top, |p| top + 1 + p)),
                depth: s.depth + depth,
                ..s
            });
        }
        Ok(true)
    }

    /// The arguments in the caller's terms, `None` when one is outside the
    /// forms inlining takes.
    fn actuals(&mut self, index: usize, args: &[Node<'t>]) -> Option<Vec<Actual>> {
        let formals = self.procs.calls.procs[index].formals.clone();
        let mut out = Vec::new();
        for (f, &a) in formals.iter().zip(args) {
            match f.kind {
                FormalKind::Int(_) => {
                    let v = self.value(a).ok()?;
                    Affine::from_expr(&v)?;
                    out.push(Actual::Int(v));
                }
                FormalKind::Array(id, _) => {
                    let (base, idx) = Self::chain(a);
                    if base.kind() != "identifier" {
                        return None;
                    }
                    let (array, dims, _) = self.array_of(base).ok()?;
                    let rank = self.procs.calls.procs[index].program.arrays[id.0 as usize]
                        .dims
                        .len();
                    if idx.len() + rank != dims {
                        return None;
                    }
                    let mut fixed: Vec<Option<Expr>> = Vec::new();
                    for &i in &idx {
                        fixed.push(Some(self.value(i).ok()?));
                    }
                    // Offsets: the caller's lower bound less the formal's.
                    let lows: Vec<Expr> = self.b.array_decl(array).dims[idx.len()..]
                        .iter()
                        .map(|r| r.lo.expr.clone())
                        .collect();
                    let formal_lows =
                        &self.procs.calls.procs[index].program.arrays[id.0 as usize].dims;
                    let mut offsets = Vec::new();
                    for (lo, f) in lows.into_iter().zip(formal_lows) {
                        let k = Affine::from_expr(&f.lo.expr).filter(|a| a.is_constant())?;
                        offsets.push(crate::lower::affine_expr(
                            &Affine::from_expr(&lo)?.checked_add(&Affine::constant(-k.constant))?,
                            Span::NONE,
                        ));
                    }
                    fixed.extend((0..rank).map(|_| None));
                    out.push(Actual::Array {
                        array,
                        fixed,
                        offsets,
                    });
                }
            }
        }
        Some(out)
    }
}
