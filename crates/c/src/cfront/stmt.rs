//! C statements into the model: blocks, declarations, assignments, calls,
//! `for`, `while` and `if`.
//!
//! A `for` loop becomes a model `for` when its start and bound are affine:
//! `for (i = lb; i < ub; i += k)` is `for i = lb to ub - 1 step k`; a
//! decreasing loop `for (i = ub; i >= lb; i -= k)` counts upward as
//! `for i' = lb to ub step k` with `i = ub + lb - i'` substituted in its
//! body. Any other `for` loop whose header still has the supported shape is
//! run as a `while` loop whose trip counter `w` gives `i = start + step*w`.

use super::expr::{any, arith_op, op_function, Place};
use super::fields::{Fields, F};
use super::induction::{LoopScalars, Trip};
use super::lvalues::{assigned_names, init_name, lvalue_root, walk};
use super::scan::{children, pragma};
use super::{affine_expr, span, Binding, Ctx, ModelRef, Region, Skip};
use super::{W_AS_WHILE, W_CALL_WRITES, W_LABEL, W_LOOP, W_MAY_ACCESS, W_UNSUPPORTED};
use crate::model::builder::BuildError;
use crate::model::*;
use tree_sitter::Node;

pub(super) type Label<'t> = Option<(&'t str, Span)>;

/// An inlined initialiser may be this deep; a deeper one (a chain of locals
/// each defined from the last) makes the local a scalar instead, so that
/// inlining cannot build expressions of unbounded depth.
const MAX_LET_DEPTH: usize = 64;

/// Whether an expression nests deeper than `limit` (looks no deeper).
fn deeper_than(e: &Expr, limit: usize) -> bool {
    if limit == 0 {
        return true;
    }
    match &e.kind {
        ExprKind::Neg(x) => deeper_than(x, limit - 1),
        ExprKind::Binary(_, l, r) => deeper_than(l, limit - 1) || deeper_than(r, limit - 1),
        ExprKind::Call(_, args) => args.iter().any(|a| deeper_than(a, limit - 1)),
        ExprKind::Access(a) => a.subscripts.iter().any(|s| deeper_than(&s.expr, limit - 1)),
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => false,
    }
}

fn mentions(src: &str, n: Node<'_>, name: &str) -> bool {
    let mut found = false;
    walk(&[n], |x| {
        if x.kind() == "identifier" && src.get(x.byte_range()) == Some(name) {
            found = true;
        }
    });
    found
}

fn mirror(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}

fn unparen(n: Node<'_>) -> Node<'_> {
    let mut n = n;
    while n.kind() == "parenthesized_expression" {
        match children(n).first() {
            Some(&x) => n = x,
            None => break,
        }
    }
    n
}

impl<'t> Ctx<'t> {
    pub(super) fn build<T>(&self, r: Result<T, BuildError>, at: Span) -> Result<T, Skip> {
        r.map_err(|e| {
            self.skip(
                W_UNSUPPORTED,
                format!("the program cannot be built here ({e})"),
                at,
                "here",
                "",
            )
        })
    }

    /// The statements of a region, with its early exits (`exits`).
    pub fn region_body(&mut self, r: &Region<'t>) -> Result<(), Skip> {
        self.enter_exits(r.func, &r.items, r.pragma)?;
        self.seq(&r.items)?;
        self.exits_region_end(r.anchor);
        Ok(())
    }

    /// `L: stmt` → (label, stmt); other statements unchanged.
    pub(super) fn unlabel(&self, n: Node<'t>) -> (Label<'t>, Node<'t>) {
        if n.kind() != "labeled_statement" {
            return (None, n);
        }
        let label = n.field(F::Label).map(|l| (self.text(l), span(l)));
        let inner = children(n)
            .into_iter()
            .rfind(|c| c.kind() != "statement_identifier")
            .unwrap_or(n);
        (label, inner)
    }

    /// The site name a C label gives a statement, if it can.
    pub(super) fn stmt_label(&mut self, label: Label<'t>) -> Option<String> {
        let (text, at) = label?;
        if !self.region_labels.insert(text) {
            self.warn(
                W_LABEL,
                format!("the label `{text}` is used twice; this statement gets a generated name"),
                at,
                "used again",
                "",
            );
            return None;
        }
        if let Some(s) = self.label_site(text, false) {
            return Some(s);
        }
        self.warn(
            W_LABEL,
            format!("the label `{text}` cannot name a statement (reserved or a `.loop` keyword); a name is generated"),
            at,
            "not usable",
            "names like `_S1`, `_C1`, `_W1` are generated names",
        );
        None
    }

    /// The site a C label names: the label itself, or, when an earlier
    /// function took it, `<function>_<label>`. `None` for a reserved name
    /// or a `.loop` keyword.
    fn label_site(&mut self, text: &str, counter_too: bool) -> Option<String> {
        if let Some(s) = self.claim_site(text, counter_too) {
            return Some(s);
        }
        if !Self::usable(text) || super::reserved(text) {
            return None;
        }
        let name = Self::fresh(&format!("{}_{text}", self.func_name), |n| {
            !self.sites.contains(n)
                && !super::reserved(n)
                && !(counter_too
                    && (self.taken.contains(n) || self.loop_names.iter().any(|l| l == n)))
        });
        self.claim_site(&name, counter_too)
    }

    /// The name a C label gives an `if` or `while` condition, if it can.
    fn cond_label(&mut self, label: Label<'t>, is_while: bool) -> Option<String> {
        let (text, at) = label?;
        self.region_labels.insert(text);
        let got = self.label_site(text, is_while);
        if got.is_none() {
            self.warn(
                W_LABEL,
                format!("the label `{text}` cannot name this condition (reserved, a keyword, or the name of an array or enclosing loop); a name is generated"),
                at,
                "not usable",
                "",
            );
        }
        got
    }

    pub(super) fn ignore_label(&mut self, label: Label<'t>, what: &str) {
        if let Some((text, at)) = label {
            self.warn(
                W_LABEL,
                format!("the label `{text}` on {what} names nothing; ignored"),
                at,
                "ignored",
                "labels name assignments and calls, and `if`/`while` conditions",
            );
        }
    }

    pub fn stmt(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        self.nested(span(n), |cx| cx.stmt_inner(n, label))
    }

    fn stmt_inner(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let at = span(n);
        // `#pragma omp parallel for` applies to the statement right after it,
        // also where it stands between a header and its statement.
        let omp = std::mem::take(&mut self.omp_next)
            || (self.pragma_before.iter())
                .any(|(at, p)| *at == n.start_byte() && is_omp_for(Some(p)));
        match n.kind() {
            "compound_statement" => {
                self.ignore_label(label, "a block");
                let mark = self.scope.len();
                self.seq(&children(n))?;
                self.block_ends(mark)?;
                self.scope.truncate(mark);
                Ok(())
            }
            "expression_statement" => match children(n).first() {
                Some(&e) => self.expr_stmt(e, label, at),
                None => Ok(()),
            },
            "declaration" => self.local_declaration(n, label),
            "for_statement" => {
                self.ignore_label(label, "a `for` loop");
                self.for_loop(n, omp)
            }
            "while_statement" => self.while_loop(n, label),
            "if_statement" => self.if_stmt(n, label),
            "labeled_statement" => {
                let (inner_label, inner) = self.unlabel(n);
                if label.is_some() {
                    self.ignore_label(label, "a labelled statement");
                }
                self.stmt(inner, inner_label)
            }
            "preproc_call" => {
                let p = pragma(self.src, n).unwrap_or("");
                if p.starts_with("arrayflow") {
                    self.scoped_range_pragma(n);
                }
                self.omp_next = is_omp_for(Some(p));
                Ok(())
            }
            "type_definition" | "struct_specifier" | "union_specifier" | "enum_specifier" | ";" => {
                Ok(())
            }
            "return_statement" | "break_statement" | "continue_statement" | "goto_statement" => {
                self.jump(n, label)
            }
            "switch_statement" => self.switch_stmt(n, label),
            "do_statement" => self.do_loop(n, label),
            "ERROR" => Err(Skip(None)),
            k if k.starts_with("preproc_") => {
                Err(self
                    .unsupported_stmt("a preprocessor conditional inside a region".to_string(), at))
            }
            other => Err(self.unsupported_stmt(format!("the statement `{other}`"), at)),
        }
    }

    pub(super) fn unsupported_stmt(&self, what: String, at: Span) -> Skip {
        self.skip(
            W_UNSUPPORTED,
            format!("{what} is not supported"),
            at,
            "not supported",
            "docs/c.md lists the supported subset of C",
        )
    }

    fn expr_stmt(&mut self, e: Node<'t>, label: Label<'t>, at: Span) -> Result<(), Skip> {
        match e.kind() {
            "assignment_expression" => self.assign(e, label, at),
            "update_expression" => {
                let arg = e.field(F::Argument).ok_or(Skip(None))?;
                if self.pointer_assignment(arg, None)? {
                    return Ok(());
                }
                let op = e.field(F::Operator).map_or("++", |o| self.text(o));
                let op = if op == "--" { BinOp::Sub } else { BinOp::Add };
                let place = self.place(arg)?;
                let one = Expr::new(ExprKind::Int(1), span(e));
                self.emit_assign(label, place, Some(op), one, at, arg)
            }
            "call_expression" => {
                if self.proc_call(e, label, at)? {
                    return Ok(());
                }
                let mut label = label;
                if self.spelled_call(e, &mut label, at)? {
                    return Ok(());
                }
                let v = self.value(e)?;
                let writes = !self.may_writes.is_empty();
                let barrier = self.may_writes.iter().any(|w| w.barrier);
                let label = self.stmt_label(label);
                if writes && !barrier {
                    return self.flush_writes(label.as_deref(), true);
                }
                // A barrier's statements precede the call, which stays.
                self.flush_writes(label.as_deref(), false)?;
                self.leftover_escapes();
                if let ExprKind::Call(f, args) = v.kind {
                    self.b.call_at(label.as_deref(), false, &f, args, at);
                }
                Ok(())
            }
            "cast_expression" | "parenthesized_expression" => {
                let inner = if e.kind() == "cast_expression" {
                    e.field(F::Value)
                } else {
                    children(e).first().copied()
                };
                match inner {
                    Some(x) => self.expr_stmt(x, label, at),
                    None => Ok(()),
                }
            }
            "comma_expression" => {
                Err(self.unsupported_stmt("a `,` expression".to_string(), span(e)))
            }
            _ => {
                // An expression statement without effect, except calls in it.
                let _ = self.value(e)?;
                let label = self.stmt_label(label);
                self.flush(label.as_deref(), true)
            }
        }
    }

    fn assign(&mut self, e: Node<'t>, label: Label<'t>, at: Span) -> Result<(), Skip> {
        let (Some(left), Some(right), Some(op)) =
            (e.field(F::Left), e.field(F::Right), e.field(F::Operator))
        else {
            return Err(Skip(None));
        };
        let op = self.text(op);
        // A pointer whose value the alias model knows: nothing to model.
        let plain = (op == "=").then_some(right);
        if self.pointer_assignment(left, plain)? {
            return Ok(());
        }
        // `a = b = c;` (deriche's `a1 = a5 = k;`): first `b = c`, then `a`
        // gets `b`'s new value, read back (the value of an assignment is its
        // left side's after it).
        let mut right = right;
        while right.kind() == "parenthesized_expression" && children(right).len() == 1 {
            right = children(right)[0];
        }
        let chained = right.kind() == "assignment_expression";
        if chained {
            self.assign(right, None, at)?;
        }
        let place = self.place(left)?;
        let mut value = match chained {
            true => self.value(right.field(F::Left).ok_or(Skip(None))?)?,
            false => self.value(right)?,
        };
        let op = match op {
            "=" => None,
            o => {
                let base = o.trim_end_matches('=');
                match arith_op(base) {
                    Some(b) => Some(b),
                    None => {
                        // `x <<= k` is `x = __shl(x, k)`.
                        let target = match &place {
                            Place::Exact(a) | Place::Over { access: a, .. } => {
                                Expr::new(ExprKind::Access(a.clone()), span(left))
                            }
                            Place::Alias { accesses, .. } => {
                                let args = (accesses.iter())
                                    .map(|a| Expr::new(ExprKind::Access(a.clone()), span(left)))
                                    .collect();
                                Expr::new(ExprKind::Call("__alias".to_string(), args), span(left))
                            }
                            Place::Not(_) => Expr::new(ExprKind::Unknown, span(left)),
                        };
                        value = Expr::new(
                            ExprKind::Call(op_function(base).to_string(), vec![target, value]),
                            span(e),
                        );
                        None
                    }
                }
            }
        };
        self.emit_assign(label, place, op, value, at, left)
    }

    /// Emits the statements a call's may-writes add, then the assignment.
    fn emit_assign(
        &mut self,
        label: Label<'t>,
        place: Place,
        op: Option<BinOp>,
        value: Expr,
        at: Span,
        left: Node<'t>,
    ) -> Result<(), Skip> {
        if let Place::Not(what) = &place {
            return Err(self.skip(
                W_UNSUPPORTED,
                format!("an assignment to something the model cannot write: {what}"),
                span(left),
                "assigned here",
                "assignments write array elements and scalar variables",
            ));
        }
        if let Some(root) = lvalue_root(self.src, left) {
            self.exited.remove(root);
        }
        let label = self.stmt_label(label);
        self.flush(label.as_deref(), false)?;
        // A followed integer local: what it holds now is known, and an
        // update of a known value needs no read of it (`induction`).
        let (op, value) = match self.forward(left, op, &value, at) {
            Some(v) => (None, v),
            None => (op, value),
        };
        match place {
            Place::Exact(access) => {
                self.b.assign_at(
                    label.as_deref(),
                    false,
                    access.clone(),
                    op,
                    value.clone(),
                    at,
                );
                self.overlapping_writes(&access, op, &value, at)?;
            }
            Place::Alias {
                accesses,
                reads,
                why,
            } => {
                self.warn(
                    W_MAY_ACCESS,
                    format!("{why}: over-approximated as a may-write of any element of each"),
                    span(left),
                    "may write any of them",
                    "a pointer known to be set once from an array (`p = A + 1`) is written as that array",
                );
                // The values the access reads go with the write (into the
                // first array's `__any`, else around the value).
                let value = match reads.is_empty() {
                    true => value,
                    false => {
                        let mut args = vec![value];
                        args.extend(reads);
                        Expr::new(ExprKind::Call("__alias".to_string(), args), at)
                    }
                };
                let mut label = label;
                for access in accesses {
                    let guard = access.subscripts.is_empty();
                    let l = label.take();
                    self.may_assign(l.as_deref(), access, guard, op, value.clone(), at)?;
                }
            }
            Place::Over { access, guard, why } => {
                let name = self.array_name(access.array);
                self.warn(
                    W_MAY_ACCESS,
                    if guard {
                        format!("{why}: over-approximated as a may-write of the whole variable or element that holds it")
                    } else {
                        format!("{why}: over-approximated as a may-write of any element of `{name}`")
                    },
                    span(left),
                    "may write",
                    "a may-write does not hide earlier writes from later reads",
                );
                self.may_assign(label.as_deref(), access, guard, op, value, at)?;
            }
            Place::Not(_) => {}
        }
        Ok(())
    }

    /// A write that may or may not happen: an unknown `if` around it when
    /// the access names one cell.
    fn may_assign(
        &mut self,
        label: Option<&str>,
        access: Access,
        guard: bool,
        op: Option<BinOp>,
        value: Expr,
        at: Span,
    ) -> Result<(), Skip> {
        if guard {
            let r = self.b.begin_if_at(None, Cond::Unknown, at);
            self.build(r, at)?;
        }
        self.b
            .assign_at(label, false, access.clone(), op, value.clone(), at);
        self.overlapping_writes(&access, op, &value, at)?;
        if guard {
            let r = self.b.end();
            self.build(r, at)?;
        }
        Ok(())
    }

    /// Emits pending may-writes of calls (and reports stray escapes);
    /// `whole` as in [`Ctx::flush_writes`].
    pub(super) fn flush(&mut self, label: Option<&str>, whole: bool) -> Result<(), Skip> {
        if !self.may_writes.is_empty() {
            self.flush_writes(label, whole)?;
        }
        self.leftover_escapes();
        Ok(())
    }

    /// One statement per array a call may write: `A[__any()] = f(...)`.
    /// With `whole`, they are the C statement itself (labelled `S`, or
    /// `S.1`, `S.2`, ... when several); otherwise they precede it and get
    /// derived labels.
    fn flush_writes(&mut self, label: Option<&str>, whole: bool) -> Result<(), Skip> {
        let writes = std::mem::take(&mut self.may_writes);
        let n = writes.len();
        for (k, w) in writes.into_iter().enumerate() {
            let name = self.array_name(w.target.array);
            if w.barrier && !w.what.is_empty() {
                self.warn(
                    W_CALL_WRITES,
                    w.what,
                    w.span,
                    "a barrier",
                    "a call to a function the file does not define is ordered with every access it may reach, and no loop around it is parallel (docs/c.md, Calls)",
                );
            } else if !w.barrier {
                self.warn(
                W_CALL_WRITES,
                format!(
                    "`{}` gets {} by address: assumed to write {} (a may-write)",
                    w.func,
                    w.what,
                    if w.exact {
                        "it".to_string()
                    } else {
                        format!("any element of `{name}`")
                    }
                ),
                w.span,
                "may be written by the call",
                "calls are pure except through what they get by address; declare the parameter `const` if the function only reads it",
            );
            }
            let l = match label {
                Some(l) if whole && n == 1 => Some(l.to_string()),
                Some(l) if whole => Some(format!("{l}.{}", k + 1)),
                Some(l) => Some(format!("{l}.{}", k + 1)),
                None => None,
            };
            let at = w.value.span;
            self.may_assign(l.as_deref(), w.target, w.exact, None, w.value, at)?;
        }
        Ok(())
    }

    fn leftover_escapes(&mut self) {
        let escapes = std::mem::take(&mut self.escapes);
        for e in escapes {
            self.warn(
                W_MAY_ACCESS,
                format!(
                    "the address of {} is used outside a call: modelled as a read of {}",
                    e.what,
                    if e.exact { "it" } else { "any element" }
                ),
                e.span,
                "address taken",
                "",
            );
        }
    }

    pub(super) fn no_writes_in(&mut self, what: &str, at: Span) -> Result<(), Skip> {
        if self.may_writes.is_empty() {
            self.leftover_escapes();
            return Ok(());
        }
        Err(self.skip(
            W_UNSUPPORTED,
            format!(
                "a call that may write (it gets something by address, or is not pure) in {what}"
            ),
            at,
            "here",
            "move the call into a statement of its own",
        ))
    }

    fn local_declaration(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let mut label = label;
        for v in self.declaration(n, false) {
            let (name, init, pointers, dims, is_const) = {
                let var = &self.vars[v.index()];
                (
                    var.name,
                    var.init,
                    var.pointers,
                    var.dims.len(),
                    var.is_const,
                )
            };
            let scalar_int = dims == 0
                && self.vars[v.index()].elem == ElemType::Int
                && !self.vars[v.index()].is_struct;
            let Some(init) = init else {
                self.scope.push((name, Binding::Var(v)));
                continue;
            };
            if pointers > 0 {
                // A pointer set once from an array is that array; another
                // is a cell of the model holding its value (`alias`).
                self.scope.push((name, Binding::Var(v)));
                if !self.pointer_defined(v, init, false)? {
                    let e = self.value(init)?;
                    self.init_assign(v, e, label.take(), span(n))?;
                }
                continue;
            }
            if scalar_int && is_const && self.const_value(init, 0).is_some() {
                self.scope.push((name, Binding::Var(v)));
                continue; // a parameter with its value as default
            }
            if scalar_int && !self.assigned.contains(name) {
                let e = self.value(init)?;
                if e.is_static()
                    && !deeper_than(&e, MAX_LET_DEPTH)
                    && self.may_writes.is_empty()
                    && self.escapes.is_empty()
                {
                    self.scope.push((name, Binding::Let(e)));
                    continue;
                }
                self.scope.push((name, Binding::Var(v)));
                self.init_assign(v, e, label.take(), span(n))?;
                continue;
            }
            self.scope.push((name, Binding::Var(v)));
            if init.kind() == "initializer_list" {
                self.init_list(v, init, label.take())?;
                continue;
            }
            let e = self.value(init)?;
            self.init_assign(v, e, label.take(), span(n))?;
        }
        Ok(())
    }

    fn init_assign(
        &mut self,
        v: super::VarId,
        value: Expr,
        label: Label<'t>,
        at: Span,
    ) -> Result<(), Skip> {
        let var_span = self.vars[v.index()].span;
        let value = self.forward_init(v, value);
        match self.model_of(v, var_span)? {
            ModelRef::Array(a, 0) => {
                let label = self.stmt_label(label);
                self.flush(label.as_deref(), false)?;
                let target = Access {
                    array: a,
                    subscripts: Vec::new(),
                    span: var_span,
                    ext: None,
                };
                self.b
                    .assign_at(label.as_deref(), false, target, None, value, at);
                Ok(())
            }
            ModelRef::Array(a, d) => {
                let label = self.stmt_label(label);
                self.flush(label.as_deref(), false)?;
                let target = Access {
                    array: a,
                    subscripts: (0..d).map(|_| any(Vec::new(), at)).collect(),
                    span: var_span,
                    ext: None,
                };
                self.warn(
                    W_MAY_ACCESS,
                    format!("the initialiser of `{}` is not a list: over-approximated as a may-write of any element", self.vars[v.index()].name),
                    at,
                    "may write",
                    "",
                );
                self.b
                    .assign_at(label.as_deref(), false, target, None, value, at);
                Ok(())
            }
            ModelRef::Param(_) => Ok(()),
        }
    }

    /// `double w[3] = {a, b, c};`: one assignment per element given; nested
    /// lists for more dimensions. Designated initialisers are a may-write.
    fn init_list(&mut self, v: super::VarId, list: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let var_span = self.vars[v.index()].span;
        let (a, d) = match self.model_of(v, var_span)? {
            ModelRef::Array(a, d) => (a, d),
            ModelRef::Param(_) => return Ok(()),
        };
        let mut label = self.stmt_label(label);
        let mut cells: Vec<(Vec<i64>, Node<'t>)> = Vec::new();
        let mut todo = vec![(list, Vec::new())];
        let mut designated = false;
        while let Some((l, prefix)) = todo.pop() {
            for (k, item) in children(l).into_iter().enumerate().rev() {
                let mut idx = prefix.clone();
                idx.push(k as i64);
                match item.kind() {
                    "initializer_list" if idx.len() < d => todo.push((item, idx)),
                    "initializer_pair" | "initializer_list" => designated = true,
                    _ if idx.len() == d => cells.push((idx, item)),
                    _ => designated = true,
                }
            }
        }
        if d == 0 || designated {
            // Every value in the list, in source order.
            let mut args = Vec::new();
            let mut stack = vec![list];
            while let Some(x) = stack.pop() {
                match x.kind() {
                    "initializer_list" => stack.extend(children(x).into_iter().rev()),
                    "initializer_pair" => stack.extend(x.field(F::Value)),
                    _ => args.push(self.value(x)?),
                }
            }
            let value = Expr::new(ExprKind::Call("__init".to_string(), args), span(list));
            let target = Access {
                array: a,
                subscripts: (0..d).map(|_| any(Vec::new(), span(list))).collect(),
                span: var_span,
                ext: None,
            };
            if d > 0 {
                self.warn(
                    W_MAY_ACCESS,
                    "a designated or irregular initialiser: over-approximated as a may-write of any element",
                    span(list),
                    "may write",
                    "",
                );
            }
            self.flush(label.as_deref(), false)?;
            self.b
                .assign_at(label.as_deref(), false, target, None, value, span(list));
            return Ok(());
        }
        cells.sort_by(|x, y| x.0.cmp(&y.0));
        for (idx, item) in cells {
            let value = self.value(item)?;
            self.flush(label.as_deref(), false)?;
            let at = span(item);
            let subscripts = idx
                .iter()
                .map(|&k| Subscript::new(Expr::new(ExprKind::Int(k), at)))
                .collect();
            let target = Access {
                array: a,
                subscripts,
                span: at,
                ext: None,
            };
            self.b
                .assign_at(label.take().as_deref(), false, target, None, value, at);
        }
        Ok(())
    }

    /// `for (init; test; update) body`.
    fn for_loop(&mut self, n: Node<'t>, parallel: bool) -> Result<(), Skip> {
        let body = n.field(F::Body).ok_or(Skip(None))?;
        let header = header_span(n, body);
        let bad = |cx: &Self, what: &str| {
            cx.skip(
                W_LOOP,
                format!("this `for` loop {what}"),
                header,
                "loop header",
                "supported: `for (int i = lb; i < ub; i++)` with `<`, `<=`, `>`, `>=` tests and `i++`, `i--`, `i += k`, `i -= k` updates (k a constant, or a parameter: then run as a `while` loop)",
            )
        };
        let Some(init) = n.field(F::Initializer) else {
            return Err(bad(self, "has no initialisation"));
        };
        let Some(test) = n.field(F::Condition) else {
            return Err(bad(self, "has no test"));
        };
        let Some(update) = n.field(F::Update) else {
            return Err(bad(self, "has no update"));
        };
        // `for (i = 0, j = n - 1; i < n; i++, j--)`: the counter is the
        // one the test compares; the others are set before the loop and
        // updated after each trip (`induction`).
        let (init, others_init, update, others_update) =
            match self.second_counters(init, test, update) {
                Some(split) => split,
                None => (init, Vec::new(), update, Vec::new()),
            };
        let Some((name, start_node)) = init_name(self.src, init) else {
            return Err(bad(self, "does not start with `int i = lb` or `i = lb`"));
        };
        // A step that is a parameter (`i += inc`): run as a `while` loop,
        // `step` its direction and `stride` its size.
        let (step, stride) = match self.update_step(update, name) {
            Some(k) => (k, None),
            None => match self.parameter_step(update, name, body)? {
                Some((sign, by)) => (sign, Some(by)),
                None => return Err(bad(
                    self,
                    "has an update other than a step of its counter by a constant or a parameter",
                )),
            },
        };
        if mentions(self.src, start_node, name) {
            return Err(bad(self, "starts from a value that reads its own counter"));
        }
        let declared = init.kind() == "declaration" || init.kind() == "init_declarator";
        let start = self.value(start_node)?;
        let start = self.folded(start);
        self.no_writes_in("a loop header", header)?;
        let scope_mark = self.scope.len();
        for &part in &others_init {
            self.header_assign(part, name)?;
        }
        self.loop_exits(n, body)?;
        // A trip a jump may cut short runs no update after it: no
        // induction variables then.
        let ivs = (!self.trip_may_end_early(body)).then_some(name);
        let mut scalars = self.enter_loop(&[init, update], body, &others_update, ivs)?;
        let form = test_form(self.src, unparen(test), name);
        let counting = match form {
            _ if stride.is_some() => None,
            Some((op @ (CmpOp::Lt | CmpOp::Le), e)) if step > 0 => Some((op, e)),
            Some((op @ (CmpOp::Gt | CmpOp::Ge), e)) if step < 0 => Some((op, e)),
            _ => None,
        };
        let mut reason = match stride {
            Some(_) => "its step is a parameter, not a constant",
            None => "its test is not `i < ub`, `i <= ub` (counting up) or `i > lb`, `i >= lb` (counting down)",
        };
        if let Some((op, bound_node)) = counting {
            let bound = self.value(bound_node)?;
            let bound = self.folded(bound);
            self.no_writes_in("a loop header", header)?;
            let (sa, ba) = (Affine::from_expr(&start), Affine::from_expr(&bound));
            if let (Some(sa), Some(ba)) = (sa, ba) {
                let one = Affine::constant(1);
                let adjusted = match op {
                    CmpOp::Lt => ba.checked_sub(&one),
                    CmpOp::Gt => ba.checked_add(&one),
                    _ => Some(ba.clone()),
                };
                if let Some(adj) = adjusted {
                    let adj_expr = if matches!(op, CmpOp::Lt | CmpOp::Gt) {
                        affine_expr(&adj, bound.span)
                    } else {
                        bound
                    };
                    let model_name = self.counter_name(name);
                    let (lo, hi, lo_a) = if step > 0 {
                        (start, adj_expr, sa.clone())
                    } else {
                        (adj_expr, start, adj.clone())
                    };
                    let bounds = (lo.clone(), hi.clone());
                    let first = if step > 0 { lo.clone() } else { hi.clone() };
                    self.keep_counter(n, name, declared, step, first, header)?;
                    let r = self
                        .b
                        .begin_for_at(&model_name, lo, hi, step.abs(), parallel, header);
                    let id = self.build(r, header)?;
                    if let Some(trips) = Affine::var(Var::Counter(id)).checked_sub(&lo_a) {
                        let divisor = step.abs();
                        let counter = Var::Counter(id);
                        let trip = Trip {
                            trips,
                            divisor,
                            counter,
                        };
                        self.start_trip(&mut scalars, &trip, span(init));
                    }
                    let counter = Expr::new(ExprKind::Counter(id), span(init));
                    let c_value = if step > 0 {
                        counter
                    } else {
                        // i = ub + lb - i'
                        let sub = sa
                            .checked_add(&lo_a)
                            .and_then(|s| s.checked_sub(&Affine::var(Var::Counter(id))));
                        match sub {
                            Some(s) => affine_expr(&s, span(init)),
                            None => return Err(bad(self, "has bounds too large for 64 bits")),
                        }
                    };
                    self.counter_names.insert(model_name.clone());
                    self.loop_names.push(model_name);
                    self.scope.push((name, Binding::Counter(c_value)));
                    self.loop_body(body, name, declared, scope_mark, &others_update, &scalars)?;
                    let (lo, hi) = bounds;
                    return self.counter_after(n, step, lo, hi, header);
                }
            }
            reason = "its start or bound is not affine";
        }
        // Run as a `while` loop: i = start + step*w.
        if Affine::from_expr(&start).is_none() {
            let changed = assigned_names(self.src, &[body]);
            let mut reads_changed = None;
            walk(&[start_node], |x| {
                if x.kind() == "identifier" {
                    if let Some(t) = self.src.get(x.byte_range()) {
                        if changed.contains(t) {
                            reads_changed = Some(t);
                        }
                    }
                }
            });
            if let Some(t) = reads_changed {
                return Err(bad(
                    self,
                    &format!("starts from a value that reads `{t}`, which the loop changes"),
                ));
            }
        }
        let site = self.fresh_site(name);
        let w = CounterId(self.b.counts().2 as u32);
        let w_expr = Expr::new(ExprKind::Counter(w), span(init));
        let stepped = if let Some((by, _)) = &stride {
            Expr::new(
                ExprKind::Binary(BinOp::Mul, Box::new(by.clone()), Box::new(w_expr)),
                span(update),
            )
        } else if step == 1 {
            w_expr
        } else {
            Expr::new(
                ExprKind::Binary(
                    BinOp::Mul,
                    Box::new(Expr::new(ExprKind::Int(step.abs()), span(update))),
                    Box::new(w_expr),
                ),
                span(init),
            )
        };
        let c_value = match Affine::from_expr(&start).and_then(|sa| {
            let sw = Affine::from_expr(&stepped)?;
            if step > 0 {
                sa.checked_add(&sw)
            } else {
                sa.checked_sub(&sw)
            }
        }) {
            Some(a) => affine_expr(&a, span(init)),
            None => Expr::new(
                ExprKind::Binary(
                    if step > 0 { BinOp::Add } else { BinOp::Sub },
                    Box::new(start),
                    Box::new(stepped),
                ),
                span(init),
            ),
        };
        self.scope.push((name, Binding::Counter(c_value)));
        let cond = self.cond(test)?;
        self.no_writes_in("a loop test", header)?;
        let cond = self.loop_test(cond, header)?;
        let start_text = self.text(start_node);
        let start_text = match start_node.kind() {
            "binary_expression" | "conditional_expression" | "cast_expression" => {
                format!("({start_text})")
            }
            _ => start_text.to_string(),
        };
        let sign = if step > 0 { '+' } else { '-' };
        let times = match &stride {
            Some((_, text)) => format!("{text}*"),
            None if step.abs() == 1 => String::new(),
            None => format!("{}*", step.abs()),
        };
        if let Some((by, text)) = &stride {
            // A step of 0 or one away from the bound never ends the loop in
            // C: the analysis takes the step to be at least 1, and says so.
            let at_least_one =
                Cond::Cmp(CmpOp::Ge, by.clone(), Expr::new(ExprKind::Int(1), by.span));
            self.b.assume(at_least_one);
            self.warn(
                W_AS_WHILE,
                format!("this `for` loop steps by `{text}`: it is analysed for `{text} >= 1`, an assumption of the program"),
                span(update),
                "assumed at least 1",
                "`--param` values that break it are refused; a loop whose step is 0 or counts away from its bound does not end",
            );
        }
        self.warn(
            W_AS_WHILE,
            format!(
                "this `for` loop is analysed as a `while` loop named `{site}`, because {reason}: \
                 C's `{name}` is `{start_text} {sign} {times}{site}`, where the counter `{site}` \
                 counts trips from 0"
            ),
            header,
            "run as a `while` loop",
            "bounded analyses stop a `while` loop after `--max-trips` trips",
        );
        let r = self.b.begin_while_at(Some(&site), cond, header);
        self.build(r, header)?;
        let trip = Trip {
            trips: Affine::var(Var::Counter(w)),
            divisor: 1,
            counter: Var::Counter(w),
        };
        self.start_trip(&mut scalars, &trip, span(init));
        self.counter_names.insert(site.clone());
        self.loop_names.push(site);
        self.loop_body(body, name, declared, scope_mark, &others_update, &scalars)
    }

    /// A `for` header that sets or steps several variables: the counter's
    /// initialisation and update (the counter is the variable the test
    /// compares, stepped by a constant), then the others' initialisations
    /// (none reading the counter) and updates. `None` for a header of one
    /// counter, or one where no such counter is found.
    #[allow(clippy::type_complexity)]
    fn second_counters(
        &self,
        init: Node<'t>,
        test: Node<'t>,
        update: Node<'t>,
    ) -> Option<(Node<'t>, Vec<Node<'t>>, Node<'t>, Vec<Node<'t>>)> {
        let inits = match init.kind() {
            "declaration" => {
                let mut c = init.walk();
                init.children_by_field_name("declarator", &mut c).collect()
            }
            _ => comma_parts(init),
        };
        let updates = comma_parts(update);
        if inits.len() < 2 && updates.len() < 2 {
            return None;
        }
        let name_of = |part: Node<'t>| init_name(self.src, part).map(|(n, _)| n);
        let (k, name) = (updates.iter().enumerate()).find_map(|(k, &u)| {
            let target = match u.kind() {
                "update_expression" => u.field(F::Argument),
                "assignment_expression" => u.field(F::Left),
                _ => None,
            }?;
            let name = self.text(target);
            let counts = test_form(self.src, unparen(test), name).is_some()
                && self.update_step(u, name).is_some();
            counts.then_some((k, name))
        })?;
        let first = inits.iter().position(|&p| name_of(p) == Some(name))?;
        let others: Vec<Node<'t>> = (inits.iter().enumerate())
            .filter(|&(j, _)| j != first)
            .map(|(_, &p)| p)
            .collect();
        if others.iter().any(|&p| mentions(self.src, p, name)) {
            return None;
        }
        let rest = (updates.iter().enumerate())
            .filter(|&(j, _)| j != k)
            .map(|(_, &u)| u)
            .collect();
        Some((inits[first], others, updates[k], rest))
    }

    /// One of the other variables a `for` header sets: `j = n - 1` (an
    /// assignment) or `j = n - 1` of `int i = 0, j = n - 1` (declared for
    /// the loop).
    fn header_assign(&mut self, part: Node<'t>, counter: &str) -> Result<(), Skip> {
        if part.kind() != "init_declarator" {
            return self.assign(part, None, span(part));
        }
        let Some(decl) = part.parent() else {
            return Err(Skip(None));
        };
        for v in self.declaration(decl, false) {
            let (name, pos, init) = {
                let var = &self.vars[v.index()];
                (var.name, var.pos, var.init)
            };
            if name == counter || !part.byte_range().contains(&pos) {
                continue;
            }
            self.scope.push((name, Binding::Var(v)));
            if let Some(init) = init {
                let e = self.value(init)?;
                self.init_assign(v, e, None, span(part))?;
            }
        }
        Ok(())
    }

    fn loop_body(
        &mut self,
        body: Node<'t>,
        name: &'t str,
        declared: bool,
        scope_mark: usize,
        others_update: &[Node<'t>],
        scalars: &LoopScalars<'t>,
    ) -> Result<(), Skip> {
        let opened = self.trip_start(span(body))?;
        if scalars.has_wraps() && body.kind() == "compound_statement" {
            // A block whose statements may read a wrap-around variable.
            let mark = self.scope.len();
            for (k, c) in children(body).into_iter().enumerate() {
                let split = self.split_wrapped(scalars, k, c, |cx, s, first| {
                    let (label, inner) = cx.unlabel(s);
                    let e = children(inner).first().copied().ok_or(Skip(None))?;
                    cx.expr_stmt(e, label.filter(|_| first), span(inner))
                })?;
                if !split {
                    self.stmt(c, None)?;
                }
            }
            self.block_ends(mark)?;
            self.scope.truncate(mark);
        } else {
            self.stmt(body, None)?;
        }
        // The header's updates of the other counters end each trip.
        for &u in others_update {
            self.expr_stmt(u, None, span(u))?;
        }
        self.trip_end(opened, span(body))?;
        self.leave_loop(scalars);
        self.scope.truncate(scope_mark);
        self.loop_names.pop();
        let r = self.b.end();
        self.build(r, span(body))?;
        self.loop_done();
        if !declared {
            self.exited.insert(name);
        }
        Ok(())
    }

    /// The step of `i += e`, `i -= e`, `i = i + e`, `i = e + i` or
    /// `i = i - e` where `e` is affine in the parameters, not a constant,
    /// and nothing in `body` assigns what it reads: its sign and its value,
    /// with the source's text.
    fn parameter_step(
        &mut self,
        u: Node<'t>,
        name: &str,
        body: Node<'t>,
    ) -> Result<Option<(i64, Stride)>, Skip> {
        let Some((sign, e)) = self.step_term(u, name) else {
            return Ok(None);
        };
        let changed = assigned_names(self.src, &[body]);
        let mut reads_changed = mentions(self.src, e, name);
        walk(&[e], |x| {
            if x.kind() == "identifier" {
                reads_changed |=
                    (self.src.get(x.byte_range())).is_some_and(|t| changed.contains(t));
            }
        });
        if reads_changed {
            return Ok(None);
        }
        let by = self.value(e)?;
        let by = self.folded(by);
        let in_params = Affine::from_expr(&by).is_some_and(|a| {
            !a.is_constant() && a.terms.iter().all(|(v, _)| matches!(v, Var::Param(_)))
        });
        Ok(in_params.then(|| (sign, (by, self.text(e).to_string()))))
    }

    /// `i++`, `++i`, `i--`, `i += k`, `i -= k`, `i = i + k`, `i = i - k`
    /// with k a constant: the signed step.
    fn update_step(&self, u: Node<'t>, name: &str) -> Option<i64> {
        let u = unparen(u);
        if u.kind() == "update_expression" {
            let arg = u.field(F::Argument)?;
            if arg.kind() != "identifier" || self.text(arg) != name {
                return None;
            }
            return match self.text(u.field(F::Operator)?) {
                "++" => Some(1),
                "--" => Some(-1),
                _ => None,
            };
        }
        let (sign, k) = self.step_term(u, name)?;
        let step = self.const_value(k, 0)?.checked_mul(sign)?;
        (step != 0).then_some(step)
    }

    /// The term an assignment adds to the counter `name`: `i += e`,
    /// `i -= e`, `i = i + e`, `i = e + i`, `i = i - e` give `e` with the
    /// sign it is added with.
    fn step_term(&self, u: Node<'t>, name: &str) -> Option<(i64, Node<'t>)> {
        let u = unparen(u);
        let is_counter = |x: Node<'_>| x.kind() == "identifier" && self.text(x) == name;
        if u.kind() != "assignment_expression" || !is_counter(u.field(F::Left)?) {
            return None;
        }
        let right = u.field(F::Right)?;
        match self.text(u.field(F::Operator)?) {
            "+=" => Some((1, right)),
            "-=" => Some((-1, right)),
            "=" => {
                let r = unparen(right);
                if r.kind() != "binary_expression" {
                    return None;
                }
                let (l, e) = (r.field(F::Left)?, r.field(F::Right)?);
                match self.text(r.field(F::Operator)?) {
                    "+" if is_counter(l) => Some((1, e)),
                    "+" if is_counter(e) => Some((1, l)),
                    "-" if is_counter(l) => Some((-1, e)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The test of a `while`, `if` or `else if` whose body is in `body`: its
    /// name (from a C label), its condition, and its header's span. With
    /// `once` (an `if`'s first test, run once where it stands), what its
    /// calls may write goes before it; elsewhere it skips the region.
    pub(super) fn test(
        &mut self,
        n: Node<'t>,
        body: F,
        label: Label<'t>,
        is_while: bool,
        once: bool,
    ) -> Result<(Option<String>, Cond, Node<'t>, Span), Skip> {
        let (Some(c), Some(body)) = (n.field(F::Condition), n.field(body)) else {
            return Err(Skip(None));
        };
        let header = header_span(n, body);
        let name = self.cond_label(label, is_while);
        let cond = self.cond(c)?;
        if once {
            self.flush(None, false)?;
        }
        self.no_writes_in("a test", header)?;
        Ok((name, cond, body, header))
    }

    fn while_loop(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let parts: Vec<Node<'t>> = n.field(F::Condition).into_iter().collect();
        let body = n.field(F::Body).ok_or(Skip(None))?;
        self.loop_exits(n, body)?;
        let scalars = self.enter_loop(&parts, body, &[], None)?;
        let (name, cond, body, header) = self.test(n, F::Body, label, true, false)?;
        let trips = Trips {
            n,
            name,
            cond,
            header,
            body,
        };
        self.model_while(trips, &scalars, |_| Ok(()))
    }

    /// `do body while (test);` is `while` its `break` flag is clear, with
    /// the flag set at the end of each trip where `test` fails: `while (1)
    /// { body; if (!(test)) break; }`, the test read after the body.
    fn do_loop(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let (Some(body), Some(test)) = (n.field(F::Body), n.field(F::Condition)) else {
            return Err(Skip(None));
        };
        self.loop_exits(n, body)?;
        let set = self.stops_by_flag(n)?;
        let scalars = self.enter_loop(&[test], body, &[], None)?;
        let name = self.cond_label(label, true);
        let header = span(n);
        let one = Expr::new(ExprKind::Int(1), header);
        let cond = Cond::Cmp(CmpOp::Ne, one, Expr::new(ExprKind::Int(0), header));
        let trips = Trips {
            n,
            name,
            cond,
            header,
            body,
        };
        self.model_while(trips, &scalars, |cx| {
            let cond = cx.cond(test)?;
            cx.no_writes_in("a test", span(test))?;
            cx.test_at_trip_end(n, &set, cond, span(test))
        })
    }

    /// The model's `while` loop of a C loop: each trip runs `body`, then
    /// `end_of_trip`; the test has the loop's flags added.
    fn model_while(
        &mut self,
        t: Trips<'t>,
        scalars: &LoopScalars<'t>,
        end_of_trip: impl FnOnce(&mut Self) -> Result<(), Skip>,
    ) -> Result<(), Skip> {
        let cond = self.loop_test(t.cond, t.header)?;
        let r = self.b.begin_while_at(t.name.as_deref(), cond, t.header);
        self.build(r, t.header)?;
        let opened = self.trip_start(span(t.body))?;
        if let Some(n) = &t.name {
            self.counter_names.insert(n.clone());
        }
        self.loop_names.push(t.name.unwrap_or_default());
        let mark = self.scope.len();
        self.stmt(t.body, None)?;
        self.scope.truncate(mark);
        end_of_trip(self)?;
        self.trip_end(opened, span(t.body))?;
        self.loop_names.pop();
        self.leave_loop(scalars);
        let r = self.b.end();
        self.build(r, span(t.n))?;
        self.loop_done();
        Ok(())
    }

    fn if_stmt(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let (name, cond, then, header) = self.test(n, F::Consequence, label, false, true)?;
        let before = self.known_snapshot();
        let r = self.b.begin_if_at(name.as_deref(), cond, header);
        self.build(r, header)?;
        self.branch(then)?;
        let mut alt = n.field(F::Alternative);
        while let Some(else_clause) = alt {
            let Some(&inner) = children(else_clause).first() else {
                break;
            };
            let (inner_label, stmt) = self.unlabel(inner);
            self.known.clone_from(&before);
            if stmt.kind() == "if_statement" {
                let (name, cond, then, header) =
                    self.test(stmt, F::Consequence, inner_label, false, false)?;
                let r = self.b.elsif(name.as_deref(), cond, header);
                self.build(r, header)?;
                self.branch(then)?;
                alt = stmt.field(F::Alternative);
            } else {
                let r = self.b.otherwise();
                self.build(r, span(else_clause))?;
                self.branch(inner)?;
                alt = None;
            }
        }
        self.after_branches(before, n);
        let r = self.b.end();
        self.build(r, span(n))
    }

    pub(super) fn branch(&mut self, s: Node<'t>) -> Result<(), Skip> {
        let mark = self.scope.len();
        self.stmt(s, None)?;
        self.scope.truncate(mark);
        Ok(())
    }
}

/// A step that is not a constant: its size in the model, and as written.
type Stride = (Expr, String);

/// A C loop lowered as the model's `while`: its node, name, test, header
/// and body.
struct Trips<'t> {
    n: Node<'t>,
    name: Option<String>,
    cond: Cond,
    header: Span,
    body: Node<'t>,
}

/// From a `for`, `while` or `if` keyword to the `)` closing its header.
fn header_span(n: Node<'_>, body: Node<'_>) -> Span {
    let mut c = n.walk();
    let end = n
        .children(&mut c)
        .filter(|k| k.end_byte() <= body.start_byte())
        .last()
        .map_or(body.start_byte(), |k| k.end_byte());
    Span::new(n.start_byte(), end)
}

/// `i OP e` or `e OP i` (mirrored) where `e` does not mention `i`.
fn test_form<'t>(src: &str, test: Node<'t>, name: &str) -> Option<(CmpOp, Node<'t>)> {
    if test.kind() != "binary_expression" {
        return None;
    }
    let op = match src.get(test.field(F::Operator)?.byte_range())? {
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        _ => return None,
    };
    let (l, r) = (
        unparen(test.field(F::Left)?),
        unparen(test.field(F::Right)?),
    );
    let is_counter =
        |x: Node<'_>| x.kind() == "identifier" && src.get(x.byte_range()) == Some(name);
    if is_counter(l) && !mentions(src, r, name) {
        Some((op, r))
    } else if is_counter(r) && !mentions(src, l, name) {
        Some((mirror(op), l))
    } else {
        None
    }
}

/// The operands of a `,` expression, in order (the node itself otherwise).
fn comma_parts(n: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut todo = vec![n];
    while let Some(x) = todo.pop() {
        if x.kind() == "comma_expression" {
            todo.extend(children(x).into_iter().rev());
        } else {
            out.push(x);
        }
    }
    out
}

/// `#pragma omp parallel for` or `#pragma omp for`: the next loop is
/// claimed parallel.
fn is_omp_for(p: Option<&str>) -> bool {
    let Some(p) = p else { return false };
    let words: Vec<&str> = p.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["omp", "parallel", "for", ..] | ["omp", "for", ..]
    )
}
