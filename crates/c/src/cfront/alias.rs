//! What C pointers point to (docs/c.md, "Pointers and aliasing").
//!
//! A pointer variable that is not a function parameter resolves to an
//! array and an affine position in it when its value is known: a global
//! initialised or assigned exactly once in the file, or a local initialised
//! (or assigned once) and never assigned again, from `A`, `A + c`, `A - c`,
//! `&A[c]`, `A[c]` (a row) or another such pointer. An access through it is
//! then an access of that array (`xx[i + 1]` with `xx = flat + 63` is
//! `flat[i + 64]`), so dependences through the two names are exact.
//!
//! Any other pointer may point into every array of its element type that
//! is visible where it is used, into a variable whose address the file
//! takes, or into memory no variable names (one cell per element type,
//! `unknown_memory`): an access through it is a may-access of each
//! (`Place::Alias`), and its value is a scalar of the model that its
//! assignments write and its uses read.
//!
//! Array and pointer parameters of a function are arrays of their own,
//! distinct from each other when `restrict` says so or when every call of
//! the function in the file passes distinct objects (arrays, or pointers
//! the caller only sets from an allocation). Otherwise two parameters of
//! one element type, or a parameter and a global array of that type the
//! function uses, may overlap: a write to one is also a may-write of the
//! others (W0906).

use super::expr::{any, Place};
use super::fields::{Fields, F};
use super::lvalues::walk;
pub use super::pointee::{Pointee, PtrUse};
use super::scan::{children, without_casts};
use super::{span, text, Binding, CVar, Ctx, ModelRef, Region, Skip, VarId, W_MAY_ACCESS};
use crate::model::*;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Functions whose result is fresh memory: pointers set only from them
/// point to distinct objects.
const ALLOCATORS: &[&str] = &[
    "malloc",
    "calloc",
    "aligned_alloc",
    "memalign",
    "valloc",
    "_mm_malloc",
    "polybench_alloc_data",
];

/// What the file says about pointers, gathered before any region.
#[derive(Default)]
pub struct Aliases<'t> {
    /// Assignments, updates of each name as a whole: the enclosing
    /// function's start byte and the assignment's right side (`None` for an
    /// update or a compound assignment).
    writes: HashMap<&'t str, Vec<(usize, Option<Node<'t>>)>>,
    /// Names whose address the file takes (`&x`).
    address_taken: HashSet<&'t str>,
    /// Declared names (by start byte) of `restrict` pointers.
    restrict: HashSet<usize>,
    /// The calls of each function: their argument nodes.
    calls: HashMap<&'t str, Vec<Vec<Node<'t>>>>,
    /// Known pointer values (`None`: looked at, not known).
    values: HashMap<VarId, Option<Pointee>>,
    /// In the current region: what each array parameter (or global array)
    /// may overlap.
    pub groups: HashMap<VarId, Vec<VarId>>,
    /// The start byte of the function being lowered.
    func: usize,
    /// The cell of memory no variable names, one per element type.
    memory: Vec<(ElemType, VarId)>,
    /// A function is being lowered as a procedure, inlined at its calls
    /// with the caller's arrays: its parameters need no overlap groups.
    pub procedure: bool,
    /// Set by `pointer_root` when the root is an unknown pointer.
    pub unknown_root: Option<VarId>,
}

/// The start byte of the function around `n` (0 at file scope).
fn function_of(n: Node<'_>) -> usize {
    let mut up = n.parent();
    while let Some(p) = up {
        if p.kind() == "function_definition" {
            return p.start_byte();
        }
        up = p.parent();
    }
    0
}

/// `a + b`, without adding zeros.
fn plus(a: Expr, b: Expr, at: Span) -> Expr {
    match (&a.kind, &b.kind) {
        (ExprKind::Int(0), _) => b,
        (_, ExprKind::Int(0)) => a,
        (ExprKind::Int(x), ExprKind::Int(y)) if x.checked_add(*y).is_some() => {
            Expr::new(ExprKind::Int(x + y), at)
        }
        _ => Expr::new(ExprKind::Binary(BinOp::Add, Box::new(a), Box::new(b)), at),
    }
}

/// Whether an expression reads a loop counter.
fn uses_counters(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Counter(_) => true,
        ExprKind::Neg(x) => uses_counters(x),
        ExprKind::Binary(_, l, r) => uses_counters(l) || uses_counters(r),
        ExprKind::Call(_, args) => args.iter().any(uses_counters),
        ExprKind::Access(a) => a.subscripts.iter().any(|s| uses_counters(&s.expr)),
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Unknown => false,
    }
}

fn is_restrict(q: &str) -> bool {
    matches!(q, "restrict" | "__restrict" | "__restrict__")
}

/// Whether a call's result is fresh memory (`(double (*)[N]) malloc(...)`).
fn allocation(src: &str, n: Node<'_>) -> bool {
    let n = without_casts(n);
    n.kind() == "call_expression"
        && n.field(F::Function)
            .is_some_and(|f| f.kind() == "identifier" && ALLOCATORS.contains(&text(src, f)))
}

impl<'t> Aliases<'t> {
    /// Reads the whole file: whole-variable writes, addresses taken,
    /// `restrict` declarations and calls.
    pub fn scan(src: &'t str, root: Node<'t>) -> Aliases<'t> {
        let mut a = Aliases::default();
        walk(&[root], |n| match n.kind() {
            "assignment_expression" => {
                if let Some(l) = n.field(F::Left).map(without_casts) {
                    if l.kind() == "identifier" {
                        let plain = n.field(F::Operator).is_some_and(|o| text(src, o) == "=");
                        let rhs = n.field(F::Right).filter(|_| plain);
                        let w = (function_of(n), rhs);
                        a.writes.entry(text(src, l)).or_default().push(w);
                    }
                }
            }
            "update_expression" => {
                if let Some(x) = n.field(F::Argument).map(without_casts) {
                    if x.kind() == "identifier" {
                        let w = (function_of(n), None);
                        a.writes.entry(text(src, x)).or_default().push(w);
                    }
                }
            }
            "pointer_expression" => {
                let amp = n.field(F::Operator).is_some_and(|o| text(src, o) == "&");
                if let Some(x) = n.field(F::Argument).map(without_casts).filter(|_| amp) {
                    if x.kind() == "identifier" {
                        a.address_taken.insert(text(src, x));
                    }
                }
            }
            "type_qualifier" if is_restrict(text(src, n).trim()) => {
                // `double *restrict p`: the qualifier is a child of the
                // pointer declarator whose name it qualifies.
                let mut d = n.parent();
                while let Some(x) = d {
                    if x.kind() == "identifier" {
                        a.restrict.insert(x.start_byte());
                        break;
                    }
                    d = x.field(F::Declarator);
                }
            }
            "call_expression" => {
                let f = n.field(F::Function).filter(|f| f.kind() == "identifier");
                if let (Some(f), Some(args)) = (f, n.field(F::Arguments)) {
                    a.calls
                        .entry(text(src, f))
                        .or_default()
                        .push(children(args));
                }
            }
            _ => {}
        });
        a
    }

    /// Writes of `name` as a whole inside the function starting at `func`
    /// (every function when `func` is `None`).
    fn writes_of(&self, name: &str, func: Option<usize>) -> Vec<Option<Node<'t>>> {
        (self.writes.get(name).into_iter().flatten())
            .filter(|(f, _)| func.is_none_or(|g| *f == g))
            .map(|&(_, rhs)| rhs)
            .collect()
    }
}

impl<'t> Ctx<'t> {
    /// Whether the variable is a pointer object (`double *p`, `double
    /// (*p)[M]`), not an array of pointers.
    fn is_pointer_var(&self, v: VarId) -> bool {
        let var = &self.vars[v.index()];
        var.pointers > 0 && var.dims.first().is_some_and(Option::is_none) && !var.func_param
    }

    /// The number of dimensions of a variable's model object: a pointer
    /// that is not a parameter is a scalar cell holding its value.
    pub(super) fn model_dims(&self, v: VarId) -> usize {
        if self.is_pointer_var(v) {
            0
        } else {
            self.vars[v.index()].dims.len()
        }
    }

    /// A true array: declared with sizes, or a parameter (C passes it as a
    /// pointer; the model makes it an array).
    fn is_array_var(&self, v: VarId) -> bool {
        let var = &self.vars[v.index()];
        !var.dims.is_empty() && (var.pointers == 0 || var.func_param)
    }

    /// What an access through `v` reaches.
    pub(super) fn pointer_use(&mut self, v: VarId) -> Result<PtrUse, Skip> {
        let var = &self.vars[v.index()];
        if var.func_param {
            // A parameter the function moves (`p++`) is a pointer of
            // unknown value; otherwise an array of its own.
            let moved = !var.dims.is_empty()
                && !(self.alias.writes_of(var.name, Some(self.alias.func))).is_empty();
            return Ok(if moved {
                PtrUse::Unknown
            } else {
                PtrUse::NotPointer
            });
        }
        if !self.is_pointer_var(v) {
            return Ok(PtrUse::NotPointer);
        }
        if let Some(known) = self.alias.values.get(&v) {
            return Ok(known.clone().map_or(PtrUse::Unknown, PtrUse::Resolved));
        }
        let (name, init, global, pos) = (var.name, var.init, var.global, var.pos);
        let value = if self.alias.address_taken.contains(name) {
            None
        } else if global {
            // One definition in the whole file: its initialiser, or one
            // plain assignment (a use before it reads a null pointer).
            let writes = self.alias.writes_of(name, None);
            let def = match (init, writes.as_slice()) {
                (Some(i), []) => Some(i),
                (None, [Some(rhs)]) => Some(*rhs),
                _ => None,
            };
            self.alias.values.insert(v, None); // no cycles
            match def {
                Some(d) => self.pointee_of(d, true, 0)?,
                None => None,
            }
        } else if !self.in_region(pos) && init.is_some() {
            // Declared before a `#pragma scop` region, never assigned.
            let none = self.alias.writes_of(name, Some(self.alias.func)).is_empty();
            self.alias.values.insert(v, None);
            match init.filter(|_| none) {
                Some(i) => self.pointee_of(i, false, 0)?,
                None => None,
            }
        } else {
            // A local of the region: known from its declaration or its one
            // assignment when lowered there.
            return Ok(PtrUse::Unknown);
        };
        self.alias.values.insert(v, value.clone());
        Ok(value.map_or(PtrUse::Unknown, PtrUse::Resolved))
    }

    /// The value of a pointer expression when it is a known position in an
    /// array. `file`: at file level, offsets must be constants and names
    /// are globals.
    fn pointee_of(
        &mut self,
        n: Node<'t>,
        file: bool,
        depth: usize,
    ) -> Result<Option<Pointee>, Skip> {
        if depth > 32 {
            return Ok(None);
        }
        let n = without_casts(n);
        match n.kind() {
            "identifier" => {
                let name = self.text(n);
                let v = match file {
                    true => self.globals.get(name).copied(),
                    false => match self.lookup(name) {
                        Some(Binding::Var(v)) => Some(v),
                        _ => None,
                    },
                };
                let Some(v) = v else { return Ok(None) };
                if self.is_array_var(v) {
                    if let PtrUse::Unknown = self.pointer_use(v)? {
                        return Ok(None); // a parameter the function moves
                    }
                    let d = self.vars[v.index()].dims.len();
                    let zero = Expr::new(ExprKind::Int(0), span(n));
                    return Ok(Some(Pointee {
                        var: v,
                        offsets: vec![zero; d],
                        level: 0,
                    }));
                }
                if self.is_pointer_var(v) {
                    // Another pointer (at file level, a global one: its
                    // own one definition).
                    return Ok(match self.pointer_use(v)? {
                        PtrUse::Resolved(p) => Some(p),
                        _ => None,
                    });
                }
                Ok(None)
            }
            "binary_expression" => {
                let op = n.field(F::Operator).map_or("", |o| self.text(o));
                let (Some(l), Some(r)) = (n.field(F::Left), n.field(F::Right)) else {
                    return Ok(None);
                };
                if op != "+" && op != "-" {
                    return Ok(None);
                }
                let (p, k) = match self.pointee_of(l, file, depth + 1)? {
                    Some(p) => (p, r),
                    None if op == "+" => match self.pointee_of(r, file, depth + 1)? {
                        Some(p) => (p, l),
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                };
                let Some(mut off) = self.offset(k, file)? else {
                    return Ok(None);
                };
                if op == "-" {
                    off = match off.kind {
                        ExprKind::Int(c) if c != i64::MIN => Expr::new(ExprKind::Int(-c), span(k)),
                        _ => Expr::new(ExprKind::Neg(Box::new(off)), span(k)),
                    };
                }
                Ok(self.moved(p, &[off], span(n)))
            }
            "pointer_expression" => {
                let amp = n.field(F::Operator).is_some_and(|o| self.text(o) == "&");
                let Some(arg) = n.field(F::Argument).map(without_casts).filter(|_| amp) else {
                    return Ok(None);
                };
                if arg.kind() != "subscript_expression" {
                    return Ok(None);
                }
                // `&A[i][j]`: a pointer to the element, moving in the last
                // subscripted dimension.
                let Some(mut p) = self.subscripted(arg, file, depth)? else {
                    return Ok(None);
                };
                p.level -= 1;
                Ok(Some(p))
            }
            "subscript_expression" => {
                // `A[i]` of a 2-D `A`: a row, as a pointer to its start.
                let Some(p) = self.subscripted(n, file, depth)? else {
                    return Ok(None);
                };
                let d = self.vars[p.var.index()].dims.len();
                Ok((p.level < d).then_some(p))
            }
            _ => Ok(None),
        }
    }

    /// `X[i]...[j]` with `X` a known pointer or an array: the position of
    /// that element (or row), `level` after its last subscript.
    fn subscripted(
        &mut self,
        n: Node<'t>,
        file: bool,
        depth: usize,
    ) -> Result<Option<Pointee>, Skip> {
        let (base, idx) = Self::chain(n);
        let Some(p) = self.pointee_of(base, file, depth + 1)? else {
            return Ok(None);
        };
        let mut offs = Vec::new();
        for &i in &idx {
            match self.offset(i, file)? {
                Some(o) => offs.push(o),
                None => return Ok(None),
            }
        }
        let Some(mut p) = self.moved(p, &offs, span(n)) else {
            return Ok(None);
        };
        p.level += idx.len();
        Ok(Some(p))
    }

    /// `p` moved by `offs` in its dimensions from `level` on.
    fn moved(&self, mut p: Pointee, offs: &[Expr], at: Span) -> Option<Pointee> {
        if p.level + offs.len() > p.offsets.len() {
            return None;
        }
        for (k, o) in offs.iter().enumerate() {
            let cur = std::mem::replace(
                &mut p.offsets[p.level + k],
                Expr::new(ExprKind::Unknown, at),
            );
            p.offsets[p.level + k] = plus(cur, o.clone(), at);
        }
        Some(p)
    }

    /// An offset in pointer arithmetic: a constant at file level; in a
    /// region, any static expression (parameters, counters, constants)
    /// whose evaluation reads nothing.
    fn offset(&mut self, n: Node<'t>, file: bool) -> Result<Option<Expr>, Skip> {
        if file {
            return Ok(self
                .const_value(n, 0)
                .map(|k| Expr::new(ExprKind::Int(k), span(n))));
        }
        let (esc, mw, diags) = (self.escapes.len(), self.may_writes.len(), self.diags.len());
        let e = self.value(n)?;
        let clean = e.is_static() && self.escapes.len() == esc && self.may_writes.len() == mw;
        if !clean {
            self.escapes.truncate(esc);
            self.may_writes.truncate(mw);
            self.diags.truncate(diags);
        }
        Ok(clean.then_some(e))
    }

    /// A pointer declared with an initialiser in the region, or given its
    /// one value by a plain assignment (`assignment`: that statement's
    /// right side): records its value when it is known and the function
    /// never assigns it otherwise. Returns whether it is known.
    pub(super) fn pointer_defined(
        &mut self,
        v: VarId,
        value: Node<'t>,
        assignment: bool,
    ) -> Result<bool, Skip> {
        if !self.is_pointer_var(v) {
            return Ok(false);
        }
        let name = self.vars[v.index()].name;
        let writes = self.alias.writes_of(name, Some(self.alias.func)).len();
        let once = match assignment {
            true => writes == 1 && self.vars[v.index()].init.is_none(),
            false => writes == 0,
        };
        if !once || self.alias.address_taken.contains(name) || self.vars[v.index()].global {
            return Ok(false);
        }
        let p = self.pointee_of(value, false, 0)?;
        // An assignment can sit in an inner block and its value be used
        // after it: only a value without loop counters holds there.
        let p = p.filter(|p| !assignment || p.offsets.iter().all(|o| !uses_counters(o)));
        let known = p.is_some();
        self.alias.values.insert(v, p);
        Ok(known)
    }

    /// `p = e;`, `p += k;`, `p++` for a pointer whose value is known: the
    /// model has nothing to do (its accesses are those of the array it
    /// points into). `Ok(true)` when the statement is taken care of.
    pub(super) fn pointer_assignment(
        &mut self,
        left: Node<'t>,
        rhs: Option<Node<'t>>,
    ) -> Result<bool, Skip> {
        let left = without_casts(left);
        if left.kind() != "identifier" {
            return Ok(false);
        }
        let Some(Binding::Var(v)) = self.lookup(self.text(left)) else {
            return Ok(false);
        };
        if !self.is_pointer_var(v) {
            return Ok(false);
        }
        let var = &self.vars[v.index()];
        if var.global {
            return Ok(matches!(self.pointer_use(v)?, PtrUse::Resolved(_)));
        }
        if self.in_region(var.pos) || var.init.is_none() {
            if let Some(r) = rhs {
                return self.pointer_defined(v, r, true);
            }
        }
        Ok(false)
    }

    /// `p[i][j]` with `p` a pointer the alias model follows: the access of
    /// the array it points into, or a may-access of everything it may
    /// point to. `None` for other bases.
    pub(super) fn pointer_access(
        &mut self,
        base: Node<'t>,
        idx: &[Node<'t>],
        at: Span,
    ) -> Result<Option<Place>, Skip> {
        let base = without_casts(base);
        if base.kind() != "identifier" || self.defines.contains_key(self.text(base)) {
            return Ok(None);
        }
        let Some(Binding::Var(v)) = self.lookup(self.text(base)) else {
            return Ok(None);
        };
        match self.pointer_use(v)? {
            PtrUse::NotPointer => Ok(None),
            PtrUse::Resolved(p) => {
                let (a, d) = match self.model_of(p.var, at)? {
                    ModelRef::Array(a, d) => (a, d),
                    ModelRef::Param(_) => return Ok(None),
                };
                let own = self.vars[v.index()].dims.len();
                let subs = self.subscripts(idx)?;
                if idx.len() == own && p.level + own == d {
                    let mut subscripts = Vec::new();
                    for (k, off) in p.offsets.into_iter().enumerate() {
                        let e = match k.checked_sub(p.level) {
                            Some(j) => plus(off, subs[j].expr.clone(), at),
                            None => off,
                        };
                        subscripts.push(Subscript::new(e));
                    }
                    return Ok(Some(Place::Exact(Access {
                        array: a,
                        subscripts,
                        span: at,
                        ext: None,
                    })));
                }
                // Another shape than the array's: some element of it.
                let reads: Vec<Expr> = subs.into_iter().map(|s| s.expr).collect();
                let mut subscripts = vec![any(reads, at)];
                subscripts.extend((1..d).map(|_| any(Vec::new(), at)));
                subscripts.truncate(d);
                let name = self.vars[p.var.index()].name;
                let why = format!(
                    "`{}` goes through a pointer into `{name}` with another shape",
                    self.text(base)
                );
                Ok(Some(Place::Over {
                    guard: d == 0,
                    access: Access {
                        array: a,
                        subscripts,
                        span: at,
                        ext: None,
                    },
                    why,
                }))
            }
            PtrUse::Unknown => {
                let mut reads = Vec::new();
                for &i in idx {
                    reads.push(self.value(i)?);
                }
                Ok(Some(self.alias_place(v, reads, at)?))
            }
        }
    }

    /// An access through the pointer `v` of unknown value: some element of
    /// every object it may point to. `reads` are the values the access
    /// reads besides (its subscripts).
    pub(super) fn alias_place(
        &mut self,
        v: VarId,
        mut reads: Vec<Expr>,
        at: Span,
    ) -> Result<Place, Skip> {
        if self.is_pointer_var(v) {
            // The pointer's own value.
            if let ModelRef::Array(a, 0) = self.model_of(v, at)? {
                let cell = Access {
                    array: a,
                    subscripts: Vec::new(),
                    span: at,
                    ext: None,
                };
                reads.push(Expr::new(ExprKind::Access(cell), at));
            }
        }
        let (elem, is_struct) = {
            let var = &self.vars[v.index()];
            (var.elem, var.is_struct)
        };
        let mut accesses = Vec::new();
        let mut names = Vec::new();
        for c in self.alias_candidates(elem, is_struct) {
            if c == v {
                continue;
            }
            let ModelRef::Array(a, d) = self.model_of(c, at)? else {
                continue;
            };
            let mut subscripts = Vec::new();
            if d > 0 {
                subscripts.push(any(std::mem::take(&mut reads), at));
                subscripts.extend((1..d).map(|_| any(Vec::new(), at)));
            }
            names.push(format!("`{}`", self.array_name(a)));
            accesses.push(Access {
                array: a,
                subscripts,
                span: at,
                ext: None,
            });
        }
        let why = format!(
            "`{}` is a pointer whose target is not known: it may point into {}",
            self.vars[v.index()].name,
            names.join(", ")
        );
        Ok(Place::Alias {
            accesses,
            reads,
            why,
        })
    }

    /// Every object a pointer of this element type may point to here: the
    /// arrays of that type in scope (parameters included), the variables of
    /// that type whose address the file takes, and the cell of memory no
    /// variable names.
    fn alias_candidates(&mut self, elem: ElemType, is_struct: bool) -> Vec<VarId> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut names: Vec<VarId> = (self.scope.iter().rev())
            .filter_map(|(_, b)| match b {
                Binding::Var(v) => Some(*v),
                _ => None,
            })
            .collect();
        let mut globals: Vec<VarId> = self.globals.values().copied().collect();
        globals.sort_by_key(|v| v.index());
        names.extend(globals);
        for v in names {
            let var = &self.vars[v.index()];
            if !seen.insert(var.name) || var.elem != elem || var.is_struct != is_struct {
                continue; // hidden by an inner declaration, or another type
            }
            let scalar = var.dims.is_empty() && self.alias.address_taken.contains(var.name);
            if (self.is_array_var(v) || scalar) && !(var.is_const && var.dims.is_empty()) {
                out.push(v);
            }
        }
        out.sort_by_key(|v| v.index());
        out.push(self.unknown_memory(elem));
        out
    }

    /// The cell standing for memory no variable names (what `malloc`
    /// returns, or anything a pointer of unknown origin reaches).
    fn unknown_memory(&mut self, elem: ElemType) -> VarId {
        if let Some(&(_, v)) = self.alias.memory.iter().find(|(e, _)| *e == elem) {
            return v;
        }
        let name = match elem {
            ElemType::Int => "unknown_memory_int",
            _ => "unknown_memory",
        };
        let v = self.new_var(CVar {
            name,
            pos: usize::MAX - self.alias.memory.len(),
            span: Span::NONE,
            elem,
            ctype: if elem == ElemType::Int {
                "int"
            } else {
                "double"
            },
            dims: Vec::new(),
            pointers: 0,
            is_const: false,
            // One opaque cell, never a parameter (as a struct is).
            is_struct: true,
            init: None,
            func_param: false,
            global: true,
            range: None,
            param: None,
            array: None,
        });
        self.alias.memory.push((elem, v));
        v
    }

    /// Starts a region: which array parameters may overlap each other or a
    /// global array the function uses (W0906 says which).
    pub(super) fn parameter_aliases(&mut self, r: &Region<'t>) -> Result<(), Skip> {
        self.alias.groups.clear();
        self.alias.func = r.func.start_byte();
        self.alias.unknown_root = None;
        let params: Vec<VarId> = (self.scope.iter())
            .filter_map(|(_, b)| match b {
                Binding::Var(v) => Some(*v),
                _ => None,
            })
            .filter(|&v| {
                let var = &self.vars[v.index()];
                var.func_param && !var.dims.is_empty() && !var.is_struct
            })
            .collect();
        if params.is_empty() || self.alias.procedure || self.distinct_at_every_call(r, &params) {
            return Ok(());
        }
        let open: Vec<VarId> = (params.iter().copied())
            .filter(|v| !self.alias.restrict.contains(&self.vars[v.index()].pos))
            .collect();
        // Global arrays the function names.
        let mut used = HashSet::new();
        walk(&[r.func], |n| {
            if n.kind() == "identifier" {
                used.insert(text(self.src, n));
            }
        });
        let mut globals: Vec<VarId> = (self.globals.values().copied())
            .filter(|&g| {
                let var = &self.vars[g.index()];
                used.contains(var.name)
                    && self.is_array_var(g)
                    && !var.is_struct
                    && !params
                        .iter()
                        .any(|&p| self.vars[p.index()].name == var.name)
            })
            .collect();
        globals.sort_by_key(|v| v.index());
        let members: Vec<VarId> = open.iter().chain(&globals).copied().collect();
        for &p in &open {
            let elem = self.vars[p.index()].elem;
            let others: Vec<VarId> = (members.iter().copied())
                .filter(|&q| q != p && self.vars[q.index()].elem == elem)
                .collect();
            if others.is_empty() {
                continue;
            }
            for &g in others.iter().filter(|g| globals.contains(g)) {
                self.alias.groups.entry(g).or_default().push(p);
            }
            let list: Vec<String> = (others.iter())
                .map(|q| format!("`{}`", self.vars[q.index()].name))
                .collect();
            let (name, at) = (self.vars[p.index()].name, self.vars[p.index()].span);
            let f = r.func_name;
            let callers = match self.alias.calls.get(f) {
                Some(_) => {
                    format!("a call of `{f}` in this file passes objects not known to be distinct")
                }
                None => format!("no call of `{f}` in this file shows that they are distinct"),
            };
            self.warn(
                super::W_POINTER,
                format!("`{name}` may overlap {}: {callers}, and it is not `restrict`; a write to one is also a may-write of the other", list.join(", ")),
                at,
                "may overlap",
                "declare the pointer parameters `restrict` (C99) when they never overlap",
            );
            self.alias.groups.insert(p, others);
        }
        Ok(())
    }

    /// Whether every call of the region's function in the file passes, for
    /// its array parameters, distinct objects none of which is a global the
    /// function uses. False when there is no call.
    fn distinct_at_every_call(&self, r: &Region<'t>, params: &[VarId]) -> bool {
        let Some(calls) = self.alias.calls.get(r.func_name) else {
            return false;
        };
        let positions: Vec<usize> = (params.iter())
            .filter_map(|p| self.param_pos.get(&self.vars[p.index()].pos).copied())
            .collect();
        if positions.len() != params.len() {
            return false;
        }
        calls.iter().all(|args| {
            let mut roots = Vec::new();
            for &k in &positions {
                let Some(&a) = args.get(k) else { return false };
                match self.distinct_object(a, r.func) {
                    Some(root) if !roots.contains(&root) => roots.push(root),
                    _ => return false,
                }
            }
            true
        })
    }

    /// The object an argument passes when it is a whole object of its own:
    /// an array of the caller (not a global `callee` names), or a pointer
    /// of the caller set only from allocations (`*C`, PolyBench's
    /// `POLYBENCH_ARRAY(C)`). Its declaration's start byte.
    fn distinct_object(&self, arg: Node<'t>, callee: Node<'t>) -> Option<usize> {
        let mut a = without_casts(arg);
        if a.kind() == "pointer_expression"
            && a.field(F::Operator).is_some_and(|o| self.text(o) == "*")
        {
            a = without_casts(a.field(F::Argument)?);
        }
        if a.kind() != "identifier" {
            return None;
        }
        let name = self.text(a);
        let caller = {
            let mut up = a.parent();
            while let Some(p) = up.filter(|p| p.kind() != "function_definition") {
                up = p.parent();
            }
            up?
        };
        // The caller's own declaration of the name, else a global.
        let mut decl = None;
        walk(&[caller], |n| {
            if matches!(n.kind(), "declaration" | "parameter_declaration")
                && n.start_byte() < a.start_byte()
            {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if let Some(dec) = super::decl::declarator(d) {
                        if text(self.src, dec.name) == name && !dec.function {
                            decl = Some((n, dec));
                        }
                    }
                }
            }
        });
        let Some((n, dec)) = decl else {
            // `T (*p)[N];` with `T` a typedef the parser does not know
            // (PolyBench's `base` in nussinov) reads as an expression: a
            // pointer of the caller all the same.
            if self.typedef_pointer_declared(caller, a, name) {
                return self
                    .set_from_allocations(name, caller, None)
                    .then_some(a.start_byte());
            }
            let &g = self.globals.get(name)?;
            let var = &self.vars[g.index()];
            let mut names_it = false;
            walk(&[callee], |x| {
                names_it |= x.kind() == "identifier" && text(self.src, x) == name
            });
            return (var.pointers == 0 && !var.dims.is_empty() && !names_it).then_some(var.pos);
        };
        if n.kind() == "parameter_declaration" || self.alias.address_taken.contains(name) {
            return None;
        }
        if dec.pointers == 0 {
            return (!dec.dims.is_empty()).then_some(dec.name.start_byte());
        }
        (self.set_from_allocations(name, caller, dec.init)).then_some(dec.name.start_byte())
    }

    /// Whether every value the caller gives the pointer `name` (its
    /// initialiser `init` and its assignments) is a fresh allocation.
    fn set_from_allocations(&self, name: &str, caller: Node<'t>, init: Option<Node<'t>>) -> bool {
        if self.alias.address_taken.contains(name) {
            return false;
        }
        let mut defs = self.alias.writes_of(name, Some(caller.start_byte()));
        defs.extend(init.map(Some));
        !defs.is_empty()
            && defs
                .iter()
                .all(|d| d.is_some_and(|d| allocation(self.src, d)))
    }

    /// Whether `caller` declares `name` before `at` as `T (*name)[...]`
    /// with `T` a typedef name, which the parser reads as the expression
    /// `T(*name)[...]` (a call, subscripted).
    fn typedef_pointer_declared(&self, caller: Node<'t>, at: Node<'t>, name: &str) -> bool {
        let mut found = false;
        walk(&[caller], |n| {
            if n.kind() != "expression_statement" || n.start_byte() >= at.start_byte() {
                return;
            }
            let Some(e) = children(n).into_iter().next() else {
                return;
            };
            let call = if e.kind() == "subscript_expression" {
                e.field(F::Argument)
            } else {
                Some(e)
            };
            let Some(call) = call.filter(|c| c.kind() == "call_expression") else {
                return;
            };
            let typedef = call.field(F::Function).is_some_and(|f| {
                f.kind() == "identifier" && self.typedefs.contains_key(self.text(f))
            });
            let args = call.field(F::Arguments).map(children).unwrap_or_default();
            let pointer = matches!(args.as_slice(), [p] if p.kind() == "pointer_expression"
                && p.field(F::Argument).is_some_and(|x| self.text(without_casts(x)) == name));
            found |= typedef && pointer;
        });
        found
    }

    /// After a write to `target`: a may-write of every array it may overlap.
    pub(super) fn overlapping_writes(
        &mut self,
        target: &Access,
        op: Option<BinOp>,
        value: &Expr,
        at: Span,
    ) -> Result<(), Skip> {
        if self.alias.groups.is_empty() {
            return Ok(());
        }
        let owner = (self.alias.groups.keys().copied())
            .find(|v| self.vars[v.index()].array == Some(target.array));
        let Some(owner) = owner else { return Ok(()) };
        let others = self.alias.groups[&owner].clone();
        for q in others {
            let ModelRef::Array(a, d) = self.model_of(q, at)? else {
                continue;
            };
            let access = Access {
                array: a,
                subscripts: (0..d).map(|_| any(Vec::new(), at)).collect(),
                span: target.span,
                ext: None,
            };
            // Marked as an effect: the C printer drops it (the write it
            // stands for is the one C makes through the other parameter).
            let marked = Expr::new(
                ExprKind::Call(
                    format!("{}overlap", arrayflow_cprint::cvalue::EFFECT),
                    vec![value.clone()],
                ),
                at,
            );
            self.b.assign_at(None, false, access, op, marked, at);
        }
        Ok(())
    }

    /// A read through a [`Place::Alias`]: the uninterpreted `__alias` of
    /// everything it may read.
    pub(super) fn alias_read(
        &mut self,
        accesses: Vec<Access>,
        reads: Vec<Expr>,
        why: &str,
        at: Span,
    ) -> Expr {
        self.warn(
            W_MAY_ACCESS,
            format!("{why}: over-approximated as a read of any element of each"),
            at,
            "may read any of them",
            "a pointer known to be set once from an array (`p = A + 1`) is read as that array",
        );
        let mut args: Vec<Expr> = (accesses.into_iter())
            .map(|a| Expr::new(ExprKind::Access(a), at))
            .collect();
        args.extend(reads);
        Expr::new(ExprKind::Call("__alias".to_string(), args), at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&tree_sitter_c::LANGUAGE.into()).unwrap();
        p.parse(src, None).unwrap()
    }

    #[test]
    fn scan_counts_whole_writes_addresses_restrict_and_calls() {
        let src = "double *xx, *yy; double flat[9];\n\
                   void setup(void) { xx = flat + 3; yy = flat; yy++; }\n\
                   void f(double *restrict a, double *b) { double *q; q = &flat[1]; g(&q); }\n\
                   int main(void) { f(flat, flat); f(xx, yy); return 0; }\n";
        let t = parse(src);
        let a = Aliases::scan(src, t.root_node());
        assert_eq!(a.writes_of("xx", None).len(), 1);
        assert!(a.writes_of("xx", None)[0].is_some());
        assert_eq!(a.writes_of("yy", None).len(), 2);
        assert!(a.writes_of("yy", None).iter().any(Option::is_none));
        assert!(a.address_taken.contains("q"));
        assert!(!a.address_taken.contains("xx"));
        let at = src.find("restrict a").unwrap() + "restrict ".len();
        assert!(a.restrict.contains(&at));
        assert_eq!(a.restrict.len(), 1);
        assert_eq!(a.calls["f"].len(), 2);
    }

    #[test]
    fn allocations_are_seen_through_casts() {
        let src = "void m(void) { double (*C)[4] = (double (*)[4]) malloc(32); double *d = f(1); }";
        let t = parse(src);
        let mut found = Vec::new();
        walk(&[t.root_node()], |n| {
            if n.kind() == "init_declarator" {
                found.push(allocation(src, n.field(F::Value).unwrap()));
            }
        });
        assert_eq!(found, vec![true, false]);
    }
}

#[cfg(test)]
mod lowering {
    //! What accesses through pointers lower to, worked out by hand.
    use crate::cfront::compile;
    use crate::diagnostics::{has_errors, FileId};

    fn model(src: &str) -> String {
        let (p, diags) = compile(src, FileId(0));
        assert!(!has_errors(&diags), "{diags:#?}");
        crate::print::program(&p.expect("a program"))
    }

    fn has(model: &str, line: &str) {
        assert!(model.contains(line), "`{line}` not in\n{model}");
    }

    #[test]
    fn a_global_pointer_set_once_is_its_array() {
        let m = model(
            "#define L 10\ndouble flat[L + 4], a[L];\ndouble *xx;\n\
             void setup(void) { xx = flat + 3; }\n\
             void k(void) { for (int i = 0; i < L - 1; i++) xx[i + 1] = flat[i] + a[i]; }\n",
        );
        // xx[i + 1] is flat[3 + i + 1]; `xx` itself is no array.
        has(&m, "flat[3 + (i + 1)] = flat[i] + a[i];");
        assert!(!m.contains("xx"), "{m}");
    }

    #[test]
    fn local_pointers_from_an_element_or_a_row() {
        let m = model(
            "double A[8], B[4][4];\nvoid k(void) {\n double *q = &A[2];\n double *r = B[1];\n\
             for (int i = 0; i < 4; i++) { q[i] = r[i]; *r = 1; }\n}\n",
        );
        has(&m, "A[2 + i] = B[1, i];");
        // `*r` is some element of the row's array (W0904).
        has(&m, "B[__any(), __any()] = 1;");
    }

    #[test]
    fn pointers_from_pointers_and_into_arrays_of_structs() {
        // yy = xx - 2 = &F[8] - 2 = F + 6; r[i].x writes the cell P[i]
        // (under an unknown `if`: a field).
        let m = model(
            "#define L 8\nstruct pt { double x; } P[4];\ndouble F[2 * L];\ndouble *xx, *yy;\n\
             void s(void) { xx = &F[L]; yy = xx - 2; }\n\
             void k(void) {\n struct pt *r = P;\n for (int i = 0; i < 4; i++) r[i].x = yy[i];\n}\n",
        );
        has(&m, "P[i] = F[6 + i];");
    }

    #[test]
    fn a_pointer_set_once_in_the_region_holds_after_it() {
        let m = model(
            "double A[8];\nvoid k(int n) {\n double *q;\n q = A + n;\n\
             for (int i = 0; i < 4; i++) q[i] = 0;\n}\n",
        );
        has(&m, "A[n + i] = 0;");
    }

    #[test]
    fn a_pointer_set_twice_may_point_into_every_array_of_its_type() {
        let m = model(
            "double A[4], B[4];\nint C[4];\ndouble *p;\nvoid s(int k) { if (k) p = A; else p = B; }\n\
             void k(void) { for (int i = 0; i < 4; i++) p[i] = C[i]; }\n",
        );
        // The pointer is a cell of the model; the write is a may-write of
        // each `double` array and of memory no variable names, and reads
        // the pointer; `C` is an `int` array.
        has(&m, "p = A[__any()];");
        has(&m, "A[__any(i, p)] = C[i];");
        has(&m, "B[__any()] = C[i];");
        has(&m, "unknown_memory = C[i];");
        assert!(!m.contains("C[__any"), "{m}");
    }

    #[test]
    fn a_pointer_whose_address_is_taken_is_not_known() {
        let m = model(
            "double A[4];\nvoid g(double **);\nvoid k(void) {\n double *q = A;\n g(&q);\n q[0] = 1;\n}\n",
        );
        has(&m, "A[__any(0, q)] = 1;");
    }

    #[test]
    fn parameters_distinct_at_every_call_do_not_overlap() {
        // PolyBench's shape: the caller's pointers come from allocations.
        let src = "void f(int n, double a[4], double b[4]) {\n\
                   for (int i = 0; i < n; i++) a[i] = b[i];\n}\n\
                   int main(void) {\n double (*x)[4] = (double (*)[4]) malloc(32);\n double (*y)[4];\n\
                   y = (double (*)[4]) malloc(32);\n f(4, *x, *y);\n return 0;\n}\n";
        let m = model(src);
        assert!(!m.contains("__any()] = __effect_overlap(b[i])"), "{m}");
        // Through a typedef the parser does not know, `T (*y)[4];` reads as
        // an expression (PolyBench's nussinov): still the caller's pointer.
        let t = format!(
            "typedef double real;\n{}",
            src.replace(" double (*y)[4];", " real (*y)[4];")
        );
        let m = model(&t);
        assert!(!m.contains("__any()] = __effect_overlap(b[i])"), "{m}");
        // One call passing the same object twice: they may overlap.
        let m = model(&src.replace("f(4, *x, *y);", "f(4, *x, *y);\n f(4, *x, *x);"));
        has(&m, "b[__any()] = __effect_overlap(b[i]);");
        // `restrict` on one of them is enough.
        let m = model(
            &src.replace("f(4, *x, *y);", "f(4, *x, *x);")
                .replace("double a[4]", "double a[restrict 4]"),
        );
        assert!(!m.contains("__any()] = __effect_overlap(b[i])"), "{m}");
    }

    #[test]
    fn a_parameter_may_overlap_a_global_array_the_function_uses() {
        let m = model("double G[4];\nvoid f(double a[4]) {\n for (int i = 0; i < 3; i++) G[i + 1] = a[i];\n}\n");
        has(&m, "a[__any()] = __effect_overlap(a[i]);");
    }
}
