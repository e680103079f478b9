//! Procedures (docs/language.md, *Procedures*): `proc P(real
//! X[1..N], int k) ... end` and `L: call P(A, B[i, *], i + 1);`.
//!
//! Each definition is checked once and lowered on its own into a
//! [`Procedure`] (its formals as arrays and parameters); each call is
//! inlined into the program: integer arguments substituted (copy-in),
//! arrays by reference, sections by offset; labels and condition names
//! prefixed with the call's label (`L.S`, `L._S1` for an unlabelled
//! statement), counters and `while` names renamed only when they would
//! clash. The [`Calls`] record says which statements came from which call.
//! Procedures see their formals and the file's parameters, not the file's
//! arrays (E0123), so a summary over the formals says everything a call
//! touches.

use super::*;
use crate::model::calls::{
    Actual, CallSite, Calls, Formal as MFormal, FormalKind as MFormalKind, Procedure,
};

/// What lowering produced beside the program.
pub struct Lowered {
    pub calls: Calls,
}

/// A name's array as seen where it is used: the program's array, its
/// subscripts fixed by sections, and for each visible dimension the offset
/// added (`pass`) and the declared lower bound (`lows`), in the program's
/// terms.
#[derive(Clone)]
struct View {
    array: ArrayId,
    fixed: Vec<Option<Expr>>,
    pass: Vec<Expr>,
    lows: Vec<Expr>,
}

struct Frame {
    proc: usize,
    /// `L.` when inlining the call labelled `L`; empty for a definition.
    prefix: String,
    inline: bool,
    scope_base: usize,
    arrays: HashMap<Spur, View>,
    scalars: HashMap<Spur, Expr>,
    stmt_no: u32,
    call_no: u32,
    site: Option<usize>,
}

pub(super) struct State<'a> {
    fold: bool,
    names: HashMap<Spur, usize>,
    defs: Vec<&'a ast::Proc>,
    calls: Calls,
    frames: Vec<Frame>,
    params: Vec<(String, Option<i64>, Span)>,
    assumptions: Vec<Cond>,
    /// Printed names of the counters of open loops (renaming avoids them).
    live: Vec<String>,
    /// Labels and `while` names made by inlining (beside `Lowerer::sites`).
    owned_sites: HashMap<String, Span>,
    /// Open loops of the builder: a call instance's iteration-vector length.
    loops: usize,
    quiet: usize,
    top_calls: u32,
    /// The procedure being defined, and the outermost call being inlined.
    defining: Option<Spur>,
    call_span: Span,
    /// Per procedure: statements and conditions, nesting depth, and
    /// whether its definition had errors (then its calls are not inlined).
    shapes: Vec<(usize, usize, bool)>,
}

impl<'a> State<'a> {
    pub(super) fn new(_tree: &ast::File, fold: bool) -> State<'a> {
        State {
            fold,
            names: HashMap::new(),
            defs: Vec::new(),
            calls: Calls::default(),
            frames: Vec::new(),
            params: Vec::new(),
            assumptions: Vec::new(),
            live: Vec::new(),
            owned_sites: HashMap::new(),
            loops: 0,
            quiet: 0,
            top_calls: 0,
            defining: None,
            call_span: Span::NONE,
            shapes: Vec::new(),
        }
    }

    pub(super) fn finish(self) -> Lowered {
        Lowered { calls: self.calls }
    }

    pub(super) fn quiet(&self) -> bool {
        self.quiet > 0
    }

    pub(super) fn global_param(&mut self, name: &str, default: Option<i64>, span: Span) {
        self.params.push((name.to_string(), default, span));
    }

    pub(super) fn assume(&mut self, c: &Cond) {
        self.assumptions.push(c.clone());
    }

    pub(super) fn in_proc(&self) -> bool {
        !self.frames.is_empty()
    }

    pub(super) fn inlining(&self) -> bool {
        self.frames.last().is_some_and(|f| f.inline)
    }

    pub(super) fn scope_base(&self) -> usize {
        self.frames.last().map_or(0, |f| f.scope_base)
    }

    pub(super) fn scalar(&self, sym: Spur) -> Option<Expr> {
        self.frames.last()?.scalars.get(&sym).cloned()
    }

    pub(super) fn is_formal_array(&self, sym: Spur) -> bool {
        self.frames
            .last()
            .is_some_and(|f| f.arrays.contains_key(&sym))
    }

    pub(super) fn owned_site(&self, text: &str) -> Option<Span> {
        self.owned_sites.get(text).copied()
    }

    pub(super) fn open_loop(&mut self, name: String) {
        self.live.push(name);
        self.loops += 1;
    }

    pub(super) fn close_loop(&mut self) {
        self.live.pop();
        self.loops -= 1;
    }

    /// Inside an inlined call: the statement's label with the call's path.
    pub(super) fn inlined_label(&mut self, written: Option<&str>) -> Option<String> {
        let f = self.frames.last_mut().filter(|f| f.inline)?;
        f.stmt_no += 1;
        Some(match written {
            Some(l) => format!("{}{l}", f.prefix),
            None => format!("{}_S{}", f.prefix, f.stmt_no),
        })
    }

    /// Inside an inlined call: a condition's name with the call's path.
    pub(super) fn inlined_cond(&self, written: &str) -> Option<String> {
        let f = self.frames.last().filter(|f| f.inline)?;
        Some(format!("{}{written}", f.prefix))
    }
}

/// `left + right`, kept affine and short when both are affine.
fn add(left: Expr, right: &Expr) -> Expr {
    let r = Affine::from_expr(right);
    if r.as_ref()
        .is_some_and(|r| r.is_constant() && r.constant == 0)
    {
        return left;
    }
    if let Some(sum) = Affine::from_expr(&left)
        .zip(r)
        .and_then(|(l, r)| l.checked_add(&r))
    {
        return affine_expr(&sum, left.span);
    }
    Expr::new(
        ExprKind::Binary(BinOp::Add, Box::new(left.clone()), Box::new(right.clone())),
        left.span,
    )
}

fn sub(left: Expr, right: &Expr) -> Expr {
    add(
        left,
        &Expr::new(ExprKind::Neg(Box::new(right.clone())), right.span),
    )
}

/// The contexts a definition is lowered in apart from the program's.
struct Saved<'a> {
    b: ProgramBuilder,
    sites: HashMap<&'a str, Span, NameHasher>,
    closed: SymMap<Span>,
    counters: u32,
    live: Vec<String>,
    owned_sites: HashMap<String, Span>,
    loops: usize,
}

impl<'a> Lowerer<'a> {
    /// A global, as a procedure sees it: parameters only.
    pub(super) fn global_in_proc(&self, sym: Spur) -> Option<(Global, Span)> {
        let g = self.globals.get(&sym).copied()?;
        if self.procs.in_proc() && matches!(g.0, Global::Array(..)) {
            return None;
        }
        Some(g)
    }

    /// E0123 for a file's array named inside a procedure.
    pub(super) fn hidden_global(&self, name: ast::Name) -> Option<Diagnostic> {
        if !self.procs.in_proc() {
            return None;
        }
        let &(Global::Array(..), decl) = self.globals.get(&name.sym)? else {
            return None;
        };
        let text = self.text(name);
        Some(
            Diagnostic::error(
                "E0123",
                format!("the array `{text}` is not visible in a procedure"),
            )
            .primary(self.file, name.span, "the file's array")
            .secondary(self.file, decl, "declared here")
            .note("a procedure sees its parameters and the file's parameters; pass the array as an argument"),
        )
    }

    /// A site name made by inlining; a clash is reported at the call.
    pub(super) fn inlined_site(&mut self, name: &str, _span: Span) {
        let first = self
            .sites
            .get(name)
            .copied()
            .or_else(|| self.procs.owned_site(name));
        if let Some(first) = first {
            if self.procs.quiet() && !self.procs.fold {
                let d = Diagnostic::error(
                    "E0110",
                    format!("the call makes the label `{name}`, which is used already"),
                )
                .primary(self.file, self.procs.call_span, "inlined here")
                .secondary(self.file, first, "first used here")
                .note("statements inlined at call `L` are labelled `L.S`; rename the call or the label");
                self.errors += 1;
                self.diags.push(d);
            }
            return;
        }
        self.procs
            .owned_sites
            .insert(name.to_string(), self.procs.call_span);
    }

    /// A counter's printed name: as written, or inside an inlined call a
    /// fresh one when it would clash with a name in the program.
    pub(super) fn counter_name(&self, text: &str) -> String {
        if !self.procs.inlining() {
            return text.to_string();
        }
        let taken = |c: &str| {
            self.procs.live.iter().any(|l| l == c)
                || self
                    .tree
                    .names
                    .get(c)
                    .is_some_and(|s| self.globals.contains_key(&s))
                || self.sites.contains_key(c)
                || self.procs.owned_sites.contains_key(c)
        };
        if !taken(text) {
            return text.to_string();
        }
        (1..)
            .map(|k| format!("{text}_{k}"))
            .find(|c| !taken(c))
            .unwrap_or_default()
    }

    /// `X[s...]` for a formal array `X`: the program's array and subscripts.
    /// `None` when `name` is no formal array.
    pub(super) fn formal_access(
        &mut self,
        name: ast::Name,
        subscripts: Vec<Subscript>,
        span: Span,
    ) -> Option<Option<Access>> {
        let view = self.procs.frames.last()?.arrays.get(&name.sym)?.clone();
        if view.pass.len() != subscripts.len() {
            self.rank_error(name, view.pass.len(), subscripts.len(), span);
            return Some(None);
        }
        let mut passed = subscripts.into_iter().zip(&view.pass);
        let mut subs = Vec::with_capacity(view.fixed.len());
        for f in &view.fixed {
            let e = match f {
                Some(e) => e.clone(),
                None => match passed.next() {
                    Some((s, off)) => add(s.expr, off),
                    None => dummy(),
                },
            };
            subs.push(Subscript::new(e));
        }
        Some(Some(Access {
            array: view.array,
            subscripts: subs,
            span,
            ext: None,
        }))
    }

    /// E0102 for an array parameter or section with the wrong count of
    /// subscripts.
    fn rank_error(&mut self, name: ast::Name, dims: usize, subs: usize, span: Span) {
        let text = self.text(name);
        let d = Diagnostic::error(
            "E0102",
            format!(
                "`{text}` has {} but is used with {}",
                plural(dims, "dimension"),
                plural(subs, "subscript")
            ),
        )
        .primary(self.file, span, "here");
        self.error(d);
    }

    /// The array a name stands for where it is used, if any.
    fn view(&self, sym: Spur) -> Option<View> {
        if let Some(f) = self.procs.frames.last() {
            return f.arrays.get(&sym).cloned();
        }
        let &(Global::Array(id, dims), _) = self.globals.get(&sym)? else {
            return None;
        };
        let decl = self.b.array_decl(id);
        Some(View {
            array: id,
            fixed: vec![None; dims],
            pass: vec![Expr::int(0); dims],
            lows: decl.dims.iter().map(|r| r.lo.expr.clone()).collect(),
        })
    }

    fn swap_in(&mut self, b: ProgramBuilder) -> Saved<'a> {
        Saved {
            b: std::mem::replace(&mut self.b, b),
            sites: std::mem::replace(&mut self.sites, HashMap::with_hasher(NameHasher::default())),
            closed: std::mem::replace(&mut self.closed, SymMap::new(self.tree)),
            counters: std::mem::replace(&mut self.counters, 0),
            live: std::mem::take(&mut self.procs.live),
            owned_sites: std::mem::take(&mut self.procs.owned_sites),
            loops: std::mem::replace(&mut self.procs.loops, 0),
        }
    }

    fn swap_out(&mut self, s: Saved<'a>) -> ProgramBuilder {
        self.sites = s.sites;
        self.closed = s.closed;
        self.counters = s.counters;
        self.procs.live = s.live;
        self.procs.owned_sites = s.owned_sites;
        self.procs.loops = s.loops;
        std::mem::replace(&mut self.b, s.b)
    }

    /// A definition: checked and lowered on its own.
    pub(super) fn proc_def(&mut self, p: &'a ast::Proc, top: bool) {
        let text = self.text(p.name);
        if !top || self.procs.in_proc() {
            let d = Diagnostic::error("E0122", "procedures are defined only at the top level")
                .primary(self.file, p.header, "inside a block")
                .note("move the definition out of the loop, `if` or procedure");
            self.error(d);
            return;
        }
        if let Some(&k) = self.procs.names.get(&p.name.sym) {
            let d = Diagnostic::error("E0112", format!("the procedure `{text}` is defined twice"))
                .primary(self.file, p.name.span, "defined again here")
                .secondary(
                    self.file,
                    self.procs.defs[k].name.span,
                    "first defined here",
                );
            self.error(d);
            return;
        }
        let index = self.procs.defs.len();
        let mut b = ProgramBuilder::new();
        for (name, default, span) in &self.procs.params {
            let _ = b.param_at(name, *default, *span);
        }
        for a in &self.procs.assumptions {
            b.assume(a.clone());
        }
        let saved = self.swap_in(b);
        let mut frame = Frame {
            proc: index,
            prefix: String::new(),
            inline: false,
            scope_base: self.scope.len(),
            arrays: HashMap::new(),
            scalars: HashMap::new(),
            stmt_no: 0,
            call_no: 0,
            site: None,
        };
        let mut formals = Vec::new();
        let mut seen: HashMap<Spur, Span> = HashMap::new();
        for f in &p.formals {
            let name = self.text(f.name);
            let clash = seen.get(&f.name.sym).copied().or_else(|| {
                self.globals
                    .get(&f.name.sym)
                    .filter(|(g, _)| matches!(g, Global::Param(_)))
                    .map(|&(_, s)| s)
            });
            if let Some(first) = clash {
                let d = Diagnostic::error("E0112", format!("`{name}` is declared twice"))
                    .primary(self.file, f.name.span, "this parameter")
                    .secondary(self.file, first, "already declared here");
                self.error(d);
                continue;
            }
            seen.insert(f.name.sym, f.name.span);
            if let ast::FormalKind::Int = f.kind {
                if let Ok(id) = self.b.param_at(name, None, f.name.span) {
                    frame
                        .scalars
                        .insert(f.name.sym, Expr::new(ExprKind::Param(id), f.name.span));
                    formals.push(MFormal {
                        name: name.to_string(),
                        kind: MFormalKind::Int(id),
                    });
                }
            }
        }
        // Ranges may use the integer formals: lower them in the frame.
        self.procs.frames.push(frame);
        for f in &p.formals {
            let ast::FormalKind::Array(elem, dims) = &f.kind else {
                continue;
            };
            if self.is_formal_array_sym(f.name.sym) {
                continue;
            }
            let mut ranges = Vec::new();
            for &(lo, hi) in dims {
                let lo = self.bound(lo, "a declared range");
                let hi = self.bound(hi, "a declared range");
                ranges.push((lo, hi));
            }
            let lows: Vec<Expr> = ranges.iter().map(|(lo, _)| lo.clone()).collect();
            let name = self.text(f.name);
            match self.b.array_at(name, *elem, ranges, f.span) {
                Ok(id) => {
                    let n = lows.len();
                    if let Some(fr) = self.procs.frames.last_mut() {
                        fr.arrays.insert(
                            f.name.sym,
                            View {
                                array: id,
                                fixed: vec![None; n],
                                pass: vec![Expr::int(0); n],
                                lows,
                            },
                        );
                    }
                    formals.push(MFormal {
                        name: name.to_string(),
                        kind: MFormalKind::Array(id, *elem),
                    });
                }
                Err(_) => continue,
            }
        }
        // Keep the declaration order of the formals.
        formals.sort_by_key(|f| p.formals.iter().position(|g| self.text(g.name) == f.name));
        self.procs.defining = Some(p.name.sym);
        let errors = self.errors;
        self.block(&p.body, false);
        let broken = self.errors > errors;
        self.procs.defining = None;
        self.procs.frames.pop();
        let b = self.swap_out(saved);
        let program = b.finish().unwrap_or_default();
        self.procs.names.insert(p.name.sym, index);
        self.procs.defs.push(p);
        self.procs.shapes.push((
            program.stmts().len() + program.conditions().len(),
            nesting(&program.body),
            broken,
        ));
        self.procs.calls.procs.push(Procedure {
            name: text.to_string(),
            formals,
            program,
            span: p.header,
        });
    }

    fn is_formal_array_sym(&self, sym: Spur) -> bool {
        self.procs.is_formal_array(sym)
    }

    fn arg_error(&mut self, span: Span, msg: String, label: &str, def: &ast::Proc) {
        let d = Diagnostic::error("E0120", msg)
            .primary(self.file, span, label.to_string())
            .secondary(self.file, def.header, "the procedure");
        self.error(d);
    }

    /// `L: call P(args);`: checked, then inlined (or kept, when folding).
    pub(super) fn proc_call(&mut self, c: &'a ast::ProcCall) {
        let name = self.text(c.proc);
        if c.prefix.copy {
            let d = Diagnostic::error("E0002", "`@copy` does not apply to a procedure call")
                .primary(self.file, c.span, "a call");
            self.error(d);
        }
        if self.procs.defining == Some(c.proc.sym) {
            let d = Diagnostic::error("E0121", format!("the procedure `{name}` calls itself"))
                .primary(self.file, c.span, "a recursive call")
                .note("procedures are inlined at their calls, so they cannot be recursive");
            self.error(d);
            return;
        }
        let Some(&index) = self.procs.names.get(&c.proc.sym) else {
            let later = self
                .tree
                .items
                .iter()
                .any(|i| matches!(i, Item::Proc(p) if p.name.sym == c.proc.sym));
            let mut d = Diagnostic::error(
                "E0118",
                format!("no procedure `{name}` is defined before this call"),
            )
            .primary(self.file, c.proc.span, "unknown procedure");
            if later {
                d = d.note("it is defined further down: define a procedure before its calls");
            }
            self.error(d);
            return;
        };
        if self.procs.frames.iter().any(|f| f.proc == index) {
            return; // recursion through a bad definition, reported there
        }
        let def = self.procs.defs[index];
        if !self.procs.fold && !self.fits(index, c, def) {
            return;
        }
        let args = self.tree.list(c.args);
        if args.len() != def.formals.len() {
            let d = Diagnostic::error(
                "E0119",
                format!(
                    "`{name}` takes {} but is given {}",
                    plural(def.formals.len(), "argument"),
                    plural(args.len(), "argument")
                ),
            )
            .primary(self.file, c.span, "this call")
            .secondary(self.file, def.header, "the procedure");
            self.error(d);
            return;
        }
        if self.procs.fold {
            let label = self.prefix(&c.prefix);
            let values: Vec<Expr> = args.iter().map(|&a| self.fold_arg(a)).collect();
            self.b.call_at(
                label.as_deref(),
                false,
                &format!("call {name}"),
                values,
                c.span,
            );
            return;
        }
        // The arguments, in the caller's terms.
        let mut scalars = HashMap::new();
        let mut sections = Vec::new();
        let mut actuals = Vec::new();
        let mut ok = true;
        for (f, &a) in def.formals.iter().zip(args) {
            let e = *self.tree.expr(a);
            match &f.kind {
                ast::FormalKind::Int => {
                    let v = self.value(a);
                    if matches!(e.kind, ast::ExprKind::Error) {
                        ok = false;
                        continue;
                    }
                    if Affine::from_expr(&v).is_none() {
                        let fname = self.text(f.name);
                        self.arg_error(
                            e.span,
                            format!("the argument of `int {fname}` must be affine"),
                            "not affine",
                            def,
                        );
                        ok = false;
                        continue;
                    }
                    scalars.insert(f.name.sym, v.clone());
                    actuals.push(Actual::Int(v));
                }
                ast::FormalKind::Array(_, dims) => match self.section(a, dims.len(), f, def) {
                    Some(s) => sections.push((f.name.sym, s, dims)),
                    None => ok = false,
                },
            }
        }
        if !ok {
            return;
        }
        let written = c.prefix.label.as_ref().map(|l| l.text.clone());
        let (path, parent) = match self.procs.frames.last_mut() {
            Some(f) => {
                f.call_no += 1;
                let own = written.unwrap_or_else(|| format!("_P{}", f.call_no));
                if f.inline {
                    (format!("{}{own}", f.prefix), f.site)
                } else {
                    (own, None)
                }
            }
            None => {
                self.procs.top_calls += 1;
                (
                    written.unwrap_or_else(|| format!("_P{}", self.procs.top_calls)),
                    None,
                )
            }
        };
        if !self.procs.inlining() {
            if let Some(l) = &c.prefix.label {
                self.site_name(&l.text, l.span);
            }
        }
        // Calls inside a definition are inlined into its own program only.
        let record = self.procs.defining.is_none();
        if parent.is_none() && !self.procs.inlining() {
            self.procs.call_span = c.span;
        }
        let (s0, c0) = self.b.next_ids();
        let k0 = self.b.counts().2 as u32;
        let site = self.procs.calls.sites.len();
        if record {
            self.procs.calls.sites.push(CallSite {
                label: path.clone(),
                proc: index,
                parent,
                depth: self.procs.loops,
                stmts: s0.0..s0.0,
                conds: c0.0..c0.0,
                counters: k0..k0,
                args: Vec::new(),
                span: c.span,
            });
        }
        self.procs.quiet += 1;
        self.procs.frames.push(Frame {
            proc: index,
            prefix: format!("{path}."),
            inline: true,
            scope_base: self.scope.len(),
            arrays: HashMap::new(),
            scalars,
            stmt_no: 0,
            call_no: 0,
            site: record.then_some(site),
        });
        // The formals' lower bounds, with the integer arguments bound.
        let mut arrays = HashMap::new();
        let mut views = Vec::new();
        for (sym, s, dims) in sections {
            let mut pass = Vec::new();
            for (k, &(lo, _)) in dims.iter().enumerate() {
                let lx = self.value(lo);
                pass.push(sub(add(s.pass[k].clone(), &s.lows[k]), &lx));
            }
            let lows = dims.iter().map(|&(lo, _)| self.value(lo)).collect();
            let v = View {
                array: s.array,
                fixed: s.fixed,
                pass,
                lows,
            };
            views.push((sym, v.clone()));
            arrays.insert(sym, v);
        }
        if let Some(f) = self.procs.frames.last_mut() {
            f.arrays = arrays;
        }
        // Actuals in the formals' order.
        let mut by_formal = Vec::new();
        let mut ints = actuals.into_iter();
        for f in &def.formals {
            match f.kind {
                ast::FormalKind::Int => by_formal.extend(ints.next()),
                ast::FormalKind::Array(..) => {
                    if let Some((_, v)) = views.iter().find(|(s, _)| *s == f.name.sym) {
                        by_formal.push(Actual::Array {
                            array: v.array,
                            fixed: v.fixed.clone(),
                            offsets: v.pass.clone(),
                        });
                    }
                }
            }
        }
        self.block(&def.body, false);
        self.procs.frames.pop();
        self.procs.quiet -= 1;
        let (s1, c1) = self.b.next_ids();
        if let Some(rec) = self.procs.calls.sites.get_mut(site).filter(|_| record) {
            rec.stmts = s0.0..s1.0;
            rec.conds = c0.0..c1.0;
            rec.counters = k0..self.b.counts().2 as u32;
            rec.args = by_formal;
        }
    }

    /// E0124 when inlining the call would pass [`MAX_INLINED`] statements
    /// and conditions or nest loops and `if`s past [`MAX_DEPTH`] (each
    /// procedure's own program says how much it adds: a chain of calls
    /// doubling at each level would otherwise never end).
    fn fits(&mut self, index: usize, c: &ast::ProcCall, def: &ast::Proc) -> bool {
        let (size, depth, broken) = self.procs.shapes[index];
        if broken {
            return false; // its errors are reported at the definition
        }
        let (s, k) = self.b.next_ids();
        let now = s.0 as usize + k.0 as usize;
        let why = if now.saturating_add(size) > MAX_INLINED {
            format!(
                "inlining this call makes more than {MAX_INLINED} statements and conditions (it adds {size})"
            )
        } else if self.b.depth() + depth > MAX_DEPTH {
            format!(
                "inlining this call nests loops and `if`s {} deep; the limit is {MAX_DEPTH}",
                self.b.depth() + depth
            )
        } else {
            return true;
        };
        let d = Diagnostic::error("E0124", why)
            .primary(self.file, c.span, "this call")
            .secondary(self.file, def.header, "the procedure")
            .note("calls are inlined; split the work over fewer nested calls");
        // Reported even inside a procedure being inlined: it is the call's.
        self.errors += 1;
        self.diags.push(d);
        false
    }

    /// An array argument: a name or a section `B[i, *]` with `rank` stars
    /// (a name passes every dimension).
    fn section(
        &mut self,
        a: ast::ExprId,
        rank: usize,
        f: &ast::Formal,
        def: &ast::Proc,
    ) -> Option<View> {
        let e = *self.tree.expr(a);
        let fname = self.text(f.name);
        let (n, subs): (ast::Name, &[ast::ExprId]) = match e.kind {
            ast::ExprKind::Name(n) => (n, &[]),
            ast::ExprKind::Index(n, l) => (n, self.tree.list(l)),
            ast::ExprKind::Error => return None,
            _ => {
                self.arg_error(
                    e.span,
                    format!("`{fname}` is an array: pass an array or a section"),
                    "not an array",
                    def,
                );
                return None;
            }
        };
        let Some(v) = self
            .view(n.sym)
            .filter(|_| self.counter_in_scope(n.sym).is_none())
        else {
            if self.global_in_proc(n.sym).is_some() || self.counter_in_scope(n.sym).is_some() {
                self.arg_error(
                    e.span,
                    format!("`{fname}` is an array: pass an array or a section"),
                    "not an array",
                    def,
                );
            } else {
                self.undeclared(n, "array");
            }
            return None;
        };
        let whole = matches!(e.kind, ast::ExprKind::Name(_));
        if !whole && subs.len() != v.pass.len() {
            self.rank_error(n, v.pass.len(), subs.len(), e.span);
            return None;
        }
        let mut fixed = v.fixed.clone();
        let mut pass = Vec::new();
        let mut lows = Vec::new();
        // Which of the array's dimensions each visible one is.
        let visible: Vec<usize> = (0..fixed.len()).filter(|&d| fixed[d].is_none()).collect();
        for (k, &d) in visible.iter().enumerate() {
            let star = whole || matches!(self.tree.expr(subs[k]).kind, ast::ExprKind::Star);
            if star {
                pass.push(v.pass[k].clone());
                lows.push(v.lows[k].clone());
            } else {
                let x = self.value(subs[k]);
                fixed[d] = Some(add(x, &v.pass[k]));
            }
        }
        if pass.len() != rank {
            let shown = if whole {
                "the whole array"
            } else {
                "this section"
            };
            self.arg_error(
                e.span,
                format!(
                    "`{fname}` has {} but {shown} has {}",
                    plural(rank, "dimension"),
                    plural(pass.len(), "dimension")
                ),
                "rank mismatch",
                def,
            );
            return None;
        }
        Some(View {
            array: v.array,
            fixed,
            pass,
            lows,
        })
    }

    /// An argument as printed by `fmt`: an array, a section (`*` kept), a value.
    fn fold_arg(&mut self, a: ast::ExprId) -> Expr {
        let e = *self.tree.expr(a);
        let (n, subs): (ast::Name, &[ast::ExprId]) = match e.kind {
            ast::ExprKind::Name(n) => (n, &[]),
            ast::ExprKind::Index(n, l) => (n, self.tree.list(l)),
            _ => return self.value(a),
        };
        if self.counter_in_scope(n.sym).is_some() || self.procs.scalar(n.sym).is_some() {
            return self.value(a);
        }
        let Some(v) = self.view(n.sym) else {
            return self.value(a);
        };
        let subscripts = subs
            .iter()
            .map(|&s| {
                let x = if matches!(self.tree.expr(s).kind, ast::ExprKind::Star) {
                    Expr::new(
                        ExprKind::Call("*".into(), Vec::new()),
                        self.tree.expr(s).span,
                    )
                } else {
                    self.value(s)
                };
                Subscript::new(x)
            })
            .collect();
        Expr::new(
            ExprKind::Access(Access {
                array: v.array,
                subscripts,
                span: e.span,
                ext: None,
            }),
            e.span,
        )
    }
}

/// The most statements and conditions inlining may make (E0124).
pub const MAX_INLINED: usize = 100_000;

/// How deep loops and `if`s nest in `nodes`.
fn nesting(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Stmt(_) => 0,
            Node::For(f) => 1 + nesting(&f.body),
            Node::While(w) => 1 + nesting(&w.body),
            Node::If(i) => {
                let b = i
                    .branches
                    .iter()
                    .map(|(_, b)| nesting(b))
                    .max()
                    .unwrap_or(0);
                1 + b.max(i.otherwise.as_deref().map_or(0, nesting))
            }
        })
        .max()
        .unwrap_or(0)
}

/// [`compile`] also returning the procedures and call sites.
pub fn compile_calls(source: &str, file: FileId) -> (Option<Program>, Calls, Vec<Diagnostic>) {
    if let Some(d) = too_large(source, file) {
        return (None, Calls::default(), vec![d]);
    }
    let (tree, mut diags) = crate::syntax::parse(source, file);
    by_position(&mut diags);
    let syntax_ok = !has_errors(&diags);
    let (program, lowered, mut more) = lower_calls(&tree, file, &CoreSyntax, false);
    by_position(&mut more);
    diags.extend(more);
    if has_errors(&diags) {
        return (None, lowered.calls, diags);
    }
    if syntax_ok {
        diags.extend(warnings::check(&program, file));
    }
    (Some(program), lowered.calls, diags)
}

/// The canonical text of a file with procedures (`arrayflow fmt`): the
/// declarations, each procedure, then the body with its calls; `None`
/// when the file defines no procedure (then `print::program` is the text)
/// or does not compile.
pub fn format_procs(source: &str, file: FileId) -> Option<String> {
    let (tree, diags) = crate::syntax::parse(source, file);
    if has_errors(&diags) || !tree.items.iter().any(|i| matches!(i, Item::Proc(_))) {
        return None;
    }
    let (program, lowered, diags) = lower_calls(&tree, file, &CoreSyntax, true);
    if has_errors(&diags) {
        return None;
    }
    let mut out = crate::print::declarations(&program);
    if !out.is_empty() {
        out.push('\n');
    }
    for p in &lowered.calls.procs {
        out.push_str(&proc_header(p));
        out.push('\n');
        out.push_str(&crate::print::body(&p.program, &p.program.body, 1));
        out.push_str("end\n\n");
    }
    out.push_str(&crate::print::body(&program, &program.body, 0));
    Some(out)
}

/// `proc P(real X[1..N], int k)`.
pub fn proc_header(p: &Procedure) -> String {
    let formals: Vec<String> = p
        .formals
        .iter()
        .map(|f| match f.kind {
            MFormalKind::Int(_) => format!("int {}", f.name),
            MFormalKind::Array(id, _) => crate::print::array_decl(&p.program, id),
        })
        .collect();
    format!("proc {}({})", p.name, formals.join(", "))
}
