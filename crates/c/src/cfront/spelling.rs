//! Extension kinds in C: call statements and the ends of blocks that
//! declare arrays, offered to the run's [`CSpelling`]s
//! ([`crate::c_spelling`]). Without spellings (the core's kinds) nothing here
//! runs, and calls stay the may-writes of `stmt`.

use super::fields::{Fields, F};
use super::scan::{children, without_casts};
use super::stmt::Label;
use super::{span, Binding, Ctx, Skip, VarId, W_SPELLING};
use crate::c_spelling::{CArg, CCall, CLocal, CSpelling, CStmt, Spelled};
use crate::model::*;
use tree_sitter::Node;

/// What reading a call's arguments added, to drop when no spelling takes
/// the call (the ordinary path reads them again).
struct Checkpoint {
    diags: usize,
    escapes: usize,
    may_writes: usize,
}

impl<'t> Ctx<'t> {
    /// A call statement a spelling takes: its statements are built and
    /// `true` returned; `false` leaves the call to the ordinary path.
    pub(super) fn spelled_call(
        &mut self,
        e: Node<'t>,
        label: &mut Label<'t>,
        at: Span,
    ) -> Result<bool, Skip> {
        let (Some(func), Some(args)) = (e.field(F::Function), e.field(F::Arguments)) else {
            return Ok(false);
        };
        if self.spellings.is_empty() || func.kind() != "identifier" {
            return Ok(false);
        }
        let mark = self.checkpoint();
        let mut read = Vec::new();
        for a in children(args) {
            read.push(self.c_arg(a)?);
        }
        let call = CCall {
            name: self.text(func),
            args: &read,
            span: span(e),
        };
        let spellings = self.spellings.clone();
        let spelled = ask(&spellings, |s| s.call(&call));
        // Taken: what the arguments would let the callee write is modelled
        // by the spelling; its warnings about values stand.
        self.escapes.truncate(mark.escapes);
        self.may_writes.truncate(mark.may_writes);
        let Some((kind, stmts)) = spelled else {
            self.restore(&mark);
            return Ok(false);
        };
        match stmts {
            Ok(stmts) => {
                let label = self.stmt_label(label.take());
                self.build_spelled(label.as_deref(), stmts, at)?;
                Ok(true)
            }
            Err(why) => {
                self.restore(&mark);
                let name = self.text(func);
                self.not_spelled(format!("`{name}`, a {kind}, {why}"), span(e));
                Ok(false)
            }
        }
    }

    /// The end of a block inside a loop: the arrays it declared (from
    /// `scope[mark..]`) are offered to the spellings.
    pub(super) fn block_ends(&mut self, mark: usize) -> Result<(), Skip> {
        if self.spellings.is_empty() || self.loop_names.is_empty() {
            return Ok(());
        }
        let locals: Vec<VarId> = self.scope[mark..]
            .iter()
            .filter_map(|(_, b)| match b {
                Binding::Var(v) => Some(*v),
                _ => None,
            })
            .filter(|v| {
                let var = &self.vars[v.index()];
                !var.dims.is_empty() && var.pointers == 0 && var.array.is_some()
            })
            .collect();
        let spellings = self.spellings.clone();
        for v in locals {
            let var = &self.vars[v.index()];
            let (name, elem, at) = (var.name, var.ctype, var.span);
            let Some(array) = var.array else { continue };
            let local = CLocal {
                name,
                array,
                dims: &self.b.array_decl(array).dims,
                elem,
                span: at,
            };
            match ask(&spellings, |s| s.block_end(&local)) {
                Some((_, Ok(stmts))) => {
                    // Named after the array: `T_end` reads better in σ
                    // than a generated `_S7`.
                    let label = self.fresh_site(&format!("{name}_end"));
                    self.build_spelled(Some(&label), stmts, at)?
                }
                Some((kind, Err(why))) => {
                    self.not_spelled(format!("the end of `{name}`, a {kind}, {why}"), at)
                }
                None => {}
            }
        }
        Ok(())
    }

    fn build_spelled(
        &mut self,
        label: Option<&str>,
        stmts: Vec<CStmt>,
        at: Span,
    ) -> Result<(), Skip> {
        let n = stmts.len();
        for (k, s) in stmts.into_iter().enumerate() {
            let l = match label {
                Some(l) if n > 1 => Some(format!("{l}.{}", k + 1)),
                l => l.map(str::to_string),
            };
            self.b
                .assign_at(l.as_deref(), false, s.target, None, s.value, at);
        }
        Ok(())
    }

    fn not_spelled(&mut self, what: String, at: Span) {
        self.warn(
            W_SPELLING,
            format!("{what}: not modelled as that kind"),
            at,
            "read as C",
            "the construct is analysed as plain C instead (a call may write what it gets by address)",
        );
    }

    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            diags: self.diags.len(),
            escapes: self.escapes.len(),
            may_writes: self.may_writes.len(),
        }
    }

    fn restore(&mut self, c: &Checkpoint) {
        self.diags.truncate(c.diags);
        self.escapes.truncate(c.escapes);
        self.may_writes.truncate(c.may_writes);
    }

    /// One argument: a pointer into an array, a size, or a value.
    fn c_arg(&mut self, n: Node<'t>) -> Result<CArg, Skip> {
        let n = without_casts(n);
        if let Some(p) = self.pointer_arg(n)? {
            return Ok(p);
        }
        if let Some((count, unit)) = self.size_arg(n)? {
            return Ok(CArg::Size {
                count: Subscript::new(folded(count)),
                unit,
                span: span(n),
            });
        }
        Ok(CArg::Value(self.value(n)?))
    }

    /// `&A[i][j]`, `&A[i]`, `A[i]`, `A`, and any of them `+ e`.
    fn pointer_arg(&mut self, n: Node<'t>) -> Result<Option<CArg>, Skip> {
        let Some((access, _, v)) = self.pointer_cell(n)? else {
            return Ok(None);
        };
        Ok(Some(CArg::Pointer {
            access,
            elem: normal(self.vars[v.index()].ctype),
            span: span(n),
        }))
    }

    /// The cell a pointer expression points at, and the dimension that
    /// pointer arithmetic moves (the first one not given).
    fn pointer_cell(&mut self, n: Node<'t>) -> Result<Option<(Access, usize, VarId)>, Skip> {
        let n = without_casts(n);
        let at = span(n);
        match n.kind() {
            "pointer_expression" if n.field(F::Operator).map(|o| self.text(o)) == Some("&") => {
                let Some(arg) = n.field(F::Argument).map(without_casts) else {
                    return Ok(None);
                };
                if arg.kind() != "subscript_expression" {
                    return Ok(None);
                }
                self.element_pointer(arg, true, at)
            }
            "subscript_expression" => self.element_pointer(n, false, at),
            "identifier" => self.element_pointer(n, false, at),
            "binary_expression" => {
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let (Some(l), Some(r)) = (n.field(F::Left), n.field(F::Right)) else {
                    return Ok(None);
                };
                if op != "+" && op != "-" {
                    return Ok(None);
                }
                let (p, off) = match self.pointer_cell(l)? {
                    Some(p) => (p, r),
                    None if op == "+" => match self.pointer_cell(r)? {
                        Some(p) => (p, l),
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                };
                let (mut access, level, v) = p;
                let off = self.value(off)?;
                let k = level.min(access.subscripts.len().saturating_sub(1));
                let Some(s) = access.subscripts.get_mut(k) else {
                    return Ok(None);
                };
                let op = if op == "+" { BinOp::Add } else { BinOp::Sub };
                let moved = Expr::new(
                    ExprKind::Binary(op, Box::new(s.expr.clone()), Box::new(off)),
                    at,
                );
                *s = Subscript::new(folded(moved));
                access.span = at;
                Ok(Some((access, level, v)))
            }
            _ => Ok(None),
        }
    }

    /// `A[i]...` with `k` of the array's `d` subscripts: the cell with the
    /// missing ones 0 (`&A[i][j]` with all `d` points at that cell).
    fn element_pointer(
        &mut self,
        n: Node<'t>,
        addressed: bool,
        at: Span,
    ) -> Result<Option<(Access, usize, VarId)>, Skip> {
        let (base, idx) = Self::chain(n);
        if base.kind() != "identifier" || self.defines.contains_key(self.text(base)) {
            return Ok(None);
        }
        match self.lookup(self.text(base)) {
            Some(Binding::Var(v)) if !self.vars[v.index()].dims.is_empty() => {}
            _ => return Ok(None),
        }
        let (array, d, v) = self.array_of(base)?;
        // A full subscript list is an element, not a pointer, unless `&`.
        if idx.len() > d || (idx.len() == d && !addressed) {
            return Ok(None);
        }
        let mut subscripts = self.subscripts(&idx)?;
        let level = if idx.len() == d { d - 1 } else { idx.len() };
        subscripts.extend((idx.len()..d).map(|_| Subscript::new(Expr::new(ExprKind::Int(0), at))));
        let access = Access {
            array,
            subscripts,
            span: at,
            ext: None,
        };
        Ok(Some((access, level, v)))
    }

    /// `sizeof(T)`, `sizeof A`, `sizeof(A[i])`, and `e * ` any of them: a
    /// count of objects and their C type.
    fn size_arg(&mut self, n: Node<'t>) -> Result<Option<(Expr, String)>, Skip> {
        let n = without_casts(n);
        let at = span(n);
        match n.kind() {
            "sizeof_expression" => Ok(self.size_of(n, at)),
            "binary_expression" if n.field(F::Operator).map(|o| self.text(o)) == Some("*") => {
                let (Some(l), Some(r)) = (n.field(F::Left), n.field(F::Right)) else {
                    return Ok(None);
                };
                let (size, times) = match self.size_arg(l)? {
                    Some(s) => (s, r),
                    None => match self.size_arg(r)? {
                        Some(s) => (s, l),
                        None => return Ok(None),
                    },
                };
                let times = self.value(times)?;
                let count = Expr::new(
                    ExprKind::Binary(BinOp::Mul, Box::new(times), Box::new(size.0)),
                    at,
                );
                Ok(Some((count, size.1)))
            }
            _ => Ok(None),
        }
    }

    /// One `sizeof`: of a type (one object of it), or of an array or a
    /// part of one (its elements).
    fn size_of(&mut self, n: Node<'t>, at: Span) -> Option<(Expr, String)> {
        let one = |t: &str| Some((Expr::new(ExprKind::Int(1), at), normal(t)));
        if let Some(t) = n.field(F::Type) {
            // `sizeof(A)` parses as a type name when `A` could be one.
            let name = self.text(t);
            if !self.names_array(name) {
                return one(name);
            }
            return self.elements_of(name, 0, at);
        }
        let mut x = without_casts(n.field(F::Value)?);
        if x.kind() == "subscript_expression" {
            let (base, idx) = Self::chain(x);
            if base.kind() != "identifier" {
                return None;
            }
            return self.elements_of(self.text(base), idx.len(), at);
        }
        if x.kind() == "pointer_expression" {
            x = without_casts(x.field(F::Argument)?);
            return self.elements_of(self.text(x), 1, at);
        }
        (x.kind() == "identifier")
            .then(|| self.elements_of(self.text(x), 0, at))
            .flatten()
    }

    fn names_array(&self, name: &str) -> bool {
        matches!(self.lookup(name.trim()), Some(Binding::Var(v)) if !self.vars[v.index()].dims.is_empty())
    }

    /// The elements of `A` with its first `given` dimensions fixed: the
    /// product of the other extents, when the declaration gives them.
    fn elements_of(&mut self, name: &str, given: usize, at: Span) -> Option<(Expr, String)> {
        let Some(Binding::Var(v)) = self.lookup(name.trim()) else {
            return None;
        };
        let var = &self.vars[v.index()];
        if var.pointers > 0 || given > var.dims.len() {
            return None;
        }
        let (ctype, array) = (var.ctype, var.array?);
        let mut count = Expr::new(ExprKind::Int(1), at);
        for r in &self.b.array_decl(array).dims[given..] {
            let len = Expr::new(
                ExprKind::Binary(
                    BinOp::Add,
                    Box::new(Expr::new(
                        ExprKind::Binary(
                            BinOp::Sub,
                            Box::new(r.hi.expr.clone()),
                            Box::new(r.lo.expr.clone()),
                        ),
                        at,
                    )),
                    Box::new(Expr::new(ExprKind::Int(1), at)),
                ),
                at,
            );
            count = Expr::new(
                ExprKind::Binary(BinOp::Mul, Box::new(count), Box::new(len)),
                at,
            );
        }
        Some((count, normal(ctype)))
    }
}

/// The first spelling that takes something, with its kind's name.
fn ask(
    spellings: &[&'static dyn CSpelling],
    f: impl Fn(&dyn CSpelling) -> Spelled,
) -> Option<(&'static str, Result<Vec<CStmt>, String>)> {
    spellings.iter().find_map(|&s| f(s).map(|r| (s.name(), r)))
}

/// An affine expression in its canonical form (`8 * 1` is `8`).
fn folded(e: Expr) -> Expr {
    match Affine::from_expr(&e) {
        Some(a) => super::affine_expr(&a, e.span),
        None => e,
    }
}

/// A C type as written, with its spacing made canonical (`unsigned  int`
/// is `unsigned int`).
fn normal(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}
