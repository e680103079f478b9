//! Semantic checks, and lowering of the syntax tree to a [`Program`] through
//! [`ProgramBuilder`].
//!
//! Name resolution. Parameters and arrays (scalars included) share one global
//! namespace and may be declared anywhere at the top level, in any order.
//! Loop counters are scoped to their loop; a `while [w]` name is the counter
//! of its `while` and is in scope in its condition and body. A counter may
//! not take the name of a parameter, an array or a counter in scope, so a
//! bare name means the same thing wherever it can be seen: the counter in
//! scope, else the parameter, else the array. Function names (`f(x)`) are a
//! namespace of their own: a name may be both a scalar and a function.
//! Statement labels and condition names form the namespace of sites and must
//! be unique; names of the form `_S1`, `_C1`, `_W1` are reserved for
//! generated names.
//!
//! Lowering goes on after an error, to report as much as possible in one run;
//! [`compile`] returns a program only when there was no error.

mod inline;
mod procs;
mod ranges;
mod walk;
mod warnings;

pub use crate::model::affine_expr;
pub use inline::{rebase, splice, Spliced};
pub use procs::{compile_calls, format_procs, proc_header};

use crate::diagnostics::{has_errors, Diagnostic, FileId};
use crate::kind_syntax::{CoreSyntax, KindSyntax};
use crate::model::builder::{BuildError, ProgramBuilder, MAX_DEPTH};
use crate::model::*;
use crate::syntax::ast::{self, Item, NameHasher};
use crate::syntax::parser::MAX_ERRORS;
use lasso::{Key, Spur};
use std::collections::HashMap;

/// The largest source accepted: spans are 32-bit byte offsets.
pub const MAX_SOURCE: usize = u32::MAX as usize;

/// Parses and checks `source`. Returns the program when there is no error,
/// and every diagnostic (errors and warnings) in source order per phase.
pub fn compile(source: &str, file: FileId) -> (Option<Program>, Vec<Diagnostic>) {
    compile_with(source, file, true, &CoreSyntax)
}

/// [`compile`] accepting the extension accesses (`A[i] @name(args)`) of
/// the kinds in `kinds`; any other `@name` is error E0116.
pub fn compile_kinds(
    source: &str,
    file: FileId,
    kinds: &dyn KindSyntax,
) -> (Option<Program>, Vec<Diagnostic>) {
    compile_with(source, file, true, kinds)
}

/// [`compile`] without the warnings: for programs the tool wrote itself
/// (the expanded program, re-read to check it), where only errors matter.
pub fn compile_errors(source: &str, file: FileId) -> (Option<Program>, Vec<Diagnostic>) {
    compile_with(source, file, false, &CoreSyntax)
}

fn compile_with(
    source: &str,
    file: FileId,
    warn: bool,
    kinds: &dyn KindSyntax,
) -> (Option<Program>, Vec<Diagnostic>) {
    if let Some(d) = too_large(source, file) {
        return (None, vec![d]);
    }
    let (tree, mut diags) = crate::syntax::parse(source, file);
    by_position(&mut diags);
    let syntax_ok = !has_errors(&diags);
    let (program, mut more) = lower_kinds(&tree, file, kinds);
    by_position(&mut more);
    diags.extend(more);
    if has_errors(&diags) {
        return (None, diags);
    }
    if syntax_ok && warn {
        diags.extend(warnings::check(&program, file));
    }
    (Some(program), diags)
}

/// E0007 for a source over [`MAX_SOURCE`] bytes (every front end's limit).
pub fn too_large(source: &str, file: FileId) -> Option<Diagnostic> {
    (source.len() > MAX_SOURCE).then(|| {
        Diagnostic::error(
            "E0007",
            format!(
                "the file is {} bytes; the limit is {MAX_SOURCE}",
                source.len()
            ),
        )
        .primary(file, Span::NONE, "too large")
        .note("source positions are 32-bit byte offsets")
    })
}

/// The warnings about a valid program from any front end (W0001 to W0003,
/// W0005),
/// W0001 only for the arrays `unread_of` accepts.
pub fn model_warnings(
    p: &Program,
    file: FileId,
    unread_of: &dyn Fn(ArrayId) -> bool,
) -> Vec<Diagnostic> {
    warnings::check_filtered(p, file, unread_of)
}

/// Sorts diagnostics by where their first label starts (stable).
fn by_position(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| d.labels.first().map_or(0, |l| l.span.start));
}

/// Checks a syntax tree and lowers it. The program is only meaningful when
/// no error was reported.
pub fn lower(tree: &ast::File, file: FileId) -> (Program, Vec<Diagnostic>) {
    lower_kinds(tree, file, &CoreSyntax)
}

/// [`lower`], taking the extension accesses of the kinds in `kinds`.
pub fn lower_kinds(
    tree: &ast::File,
    file: FileId,
    kinds: &dyn KindSyntax,
) -> (Program, Vec<Diagnostic>) {
    let (program, _, diags) = lower_calls(tree, file, kinds, false);
    (program, diags)
}

/// [`lower_kinds`], also returning the record of procedures and calls;
/// `fold` keeps each call as one statement `call P(args)` (for printing).
fn lower_calls(
    tree: &ast::File,
    file: FileId,
    kinds: &dyn KindSyntax,
    fold: bool,
) -> (Program, procs::Lowered, Vec<Diagnostic>) {
    let mut l = Lowerer {
        tree,
        kinds,
        file,
        diags: Vec::new(),
        b: ProgramBuilder::new(),
        globals: SymMap::new(tree),
        scope: Vec::new(),
        closed: SymMap::new(tree),
        sites: HashMap::with_hasher(NameHasher::default()),
        counters: 0,
        errors: 0,
        procs: procs::State::new(tree, fold),
        breaks: Vec::new(),
    };
    l.declarations(&tree.items);
    l.block(&tree.items, true);
    let program = std::mem::take(&mut l.b).finish().unwrap_or_default();
    let lowered = l.procs.finish();
    (program, lowered, l.diags)
}

/// A map keyed by interned names: a vector indexed by the key, since every
/// name of the file is interned already.
struct SymMap<T> {
    slots: Vec<Option<T>>,
}

impl<T> SymMap<T> {
    fn new(tree: &ast::File) -> SymMap<T> {
        SymMap {
            slots: std::iter::repeat_with(|| None)
                .take(tree.names.len())
                .collect(),
        }
    }
    fn get(&self, k: &Spur) -> Option<&T> {
        self.slots.get(k.into_usize()).and_then(Option::as_ref)
    }
    fn contains_key(&self, k: &Spur) -> bool {
        self.get(k).is_some()
    }
    fn insert(&mut self, k: Spur, v: T) {
        if let Some(slot) = self.slots.get_mut(k.into_usize()) {
            *slot = Some(v);
        }
    }
}

#[derive(Clone, Copy)]
enum Global {
    Param(ParamId),
    Array(ArrayId, usize),
}

#[derive(Clone, Copy)]
struct InScope {
    sym: Spur,
    id: CounterId,
    span: Span,
}

struct Lowerer<'a> {
    tree: &'a ast::File,
    /// The kinds whose `@name` accesses are accepted.
    kinds: &'a dyn KindSyntax,
    file: FileId,
    diags: Vec<Diagnostic>,
    b: ProgramBuilder,
    globals: SymMap<(Global, Span)>,
    /// Counters in scope, innermost last.
    scope: Vec<InScope>,
    /// Counters of loops already closed, for "used outside its loop".
    closed: SymMap<Span>,
    /// Statement labels and condition names.
    sites: HashMap<&'a str, Span, NameHasher>,
    /// Counters created so far (the next one's id).
    counters: u32,
    errors: usize,
    /// Procedures, calls and the frame of the call being inlined.
    procs: procs::State<'a>,
    /// The `break` flag of each enclosing loop, innermost last (`None`
    /// for a loop without `break`).
    breaks: Vec<Option<ArrayId>>,
}

/// Generated site names look like `_S12`, `_C3`, `_W1`: reserved for them.
pub fn reserved(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 3
        && b[0] == b'_'
        && matches!(b[1], b'S' | b'C' | b'W')
        && b[2..].iter().all(u8::is_ascii_digit)
}

fn dummy() -> Expr {
    Expr::int(0)
}

/// Whether `s` may `break` the loop around it (a `break` of its own, or
/// in an `if`; one inside a loop leaves that loop).
fn breaks(s: &ast::Stmt) -> bool {
    let any = |items: &[Item]| {
        items
            .iter()
            .any(|i| matches!(i, Item::Stmt(s) if breaks(s)))
    };
    match s {
        ast::Stmt::Break(_) => true,
        ast::Stmt::If(i) => {
            i.branches.iter().any(|b| any(&b.body)) || i.otherwise.as_deref().is_some_and(any)
        }
        _ => false,
    }
}

fn item_span(i: &Item) -> Span {
    match i {
        Item::Stmt(ast::Stmt::For(f)) => f.span,
        Item::Stmt(ast::Stmt::While(w)) => w.span,
        Item::Stmt(ast::Stmt::If(x)) => x.span,
        Item::Stmt(ast::Stmt::Assign(a)) => a.span,
        Item::Stmt(ast::Stmt::Call(c)) => c.span,
        Item::Stmt(ast::Stmt::ProcCall(c)) => c.span,
        Item::Stmt(ast::Stmt::Break(at)) => *at,
        _ => Span::NONE,
    }
}

/// The scalar flag `a` as an access.
fn flag_access(a: ArrayId, at: Span) -> Access {
    Access {
        array: a,
        subscripts: Vec::new(),
        span: at,
        ext: None,
    }
}

/// `a == 0`: no `break` taken.
fn flag_clear(a: ArrayId) -> Cond {
    Cond::Cmp(
        CmpOp::Eq,
        Expr::new(ExprKind::Access(flag_access(a, Span::NONE)), Span::NONE),
        Expr::int(0),
    )
}

impl<'a> Lowerer<'a> {
    fn text(&self, n: ast::Name) -> &'a str {
        self.tree.names.resolve(&n.sym)
    }

    /// Records an error; past [`MAX_ERRORS`] they are counted, not kept.
    fn error(&mut self, d: Diagnostic) {
        if self.procs.quiet() {
            // A procedure's body is checked once, at its definition.
            return;
        }
        self.errors += 1;
        if self.errors <= MAX_ERRORS {
            self.diags.push(d);
        } else if self.errors == MAX_ERRORS + 1 {
            let at = d.labels.first().map_or(Span::NONE, |l| l.span);
            self.diags.push(
                Diagnostic::error(
                    "E0008",
                    format!("too many errors; only the first {MAX_ERRORS} are shown"),
                )
                .primary(self.file, at, "more errors from here on"),
            );
        }
    }

    fn build_error(&mut self, e: BuildError, span: Span) {
        let d = Diagnostic::error("E0099", format!("cannot build the program: {e}"))
            .primary(self.file, span, "here");
        self.error(d);
    }

    // ---- declarations -------------------------------------------------

    /// Parameters first (ranges and assumptions use them), then arrays and
    /// assumptions, all from the top level.
    fn declarations(&mut self, items: &[Item]) {
        // Misplaced declarations count too (E0009 is reported once, by
        // `block`), so that their uses do not also say "undeclared".
        let mut all = Vec::new();
        collect_declarations(items, &mut all);
        for item in &all {
            if let Item::Param(decls, _) = item {
                for d in decls {
                    self.param(d);
                }
            }
        }
        for item in all {
            match item {
                Item::Array(elem, decls, _) => {
                    for d in decls {
                        self.array(*elem, d);
                    }
                }
                Item::Assume(cond, _) => {
                    let c = self.cond(*cond);
                    if !self.is_affine_cond(&c) {
                        let span = self.tree.expr(*cond).span;
                        let d = Diagnostic::error("E0108", "an assumption must be affine")
                            .primary(self.file, span, "not affine in the parameters")
                            .note("assumptions compare affine expressions of parameters, joined by `and`, `or`, `not`");
                        self.error(d);
                    }
                    self.procs.assume(&c);
                    self.b.assume(c);
                }
                _ => {}
            }
        }
    }

    fn is_affine_cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Cmp(_, l, r) => Affine::from_expr(l).is_some() && Affine::from_expr(r).is_some(),
            Cond::And(a, b) | Cond::Or(a, b) => self.is_affine_cond(a) && self.is_affine_cond(b),
            Cond::Not(a) => self.is_affine_cond(a),
            Cond::Unknown => false,
        }
    }

    /// Registers a global name; false (with an error) if it is taken.
    fn declare(&mut self, name: ast::Name, g: Global) -> bool {
        if let Some(&(_, first)) = self.globals.get(&name.sym) {
            let text = self.text(name);
            let d = Diagnostic::error("E0112", format!("`{text}` is declared twice"))
                .primary(self.file, name.span, "declared again here")
                .secondary(self.file, first, "first declared here");
            self.error(d);
            return false;
        }
        self.globals.insert(name.sym, (g, name.span));
        true
    }

    fn param(&mut self, d: &ast::ParamDecl) {
        let text = self.text(d.name);
        let default = d.default.and_then(|(v, _)| v);
        if self.globals.contains_key(&d.name.sym) {
            self.declare(d.name, Global::Param(ParamId(0)));
            return;
        }
        match self.b.param_at(text, default, d.name.span) {
            Ok(id) => {
                self.procs.global_param(text, default, d.name.span);
                self.declare(d.name, Global::Param(id));
            }
            Err(e) => self.build_error(e, d.name.span),
        }
    }

    fn array(&mut self, elem: ElemType, d: &ast::ArrayDecl) {
        let mut dims = Vec::new();
        for (lo, hi) in &d.dims {
            let lo = self.bound(*lo, "a declared range");
            let hi = self.bound(*hi, "a declared range");
            dims.push((lo, hi));
        }
        if self.globals.contains_key(&d.name.sym) {
            self.declare(d.name, Global::Param(ParamId(0)));
            return;
        }
        let ndims = dims.len();
        match self.b.array_at(self.text(d.name), elem, dims, d.span) {
            Ok(id) => {
                self.declare(d.name, Global::Array(id, ndims));
            }
            Err(e) => self.build_error(e, d.span),
        }
    }

    /// An expression that must be affine; a dummy after an error.
    fn bound(&mut self, id: ast::ExprId, what: &str) -> Expr {
        let x = self.value(id);
        let e = self.tree.expr(id);
        if matches!(e.kind, ast::ExprKind::Error) {
            return dummy();
        }
        if Affine::from_expr(&x).is_none() {
            let d = Diagnostic::error("E0108", format!("{what} must be affine"))
                .primary(self.file, e.span, "not affine")
                .note("affine: an integer combination of counters and parameters plus a constant, such as `2*N - i + 1`; no array elements, calls, `...`, products of variables, `/` or `%`");
            self.error(d);
            return dummy();
        }
        x
    }

    // ---- statements ---------------------------------------------------

    fn block(&mut self, items: &'a [Item], top: bool) {
        // After a statement that may `break`, the rest runs only if it did
        // not (docs/language.md, `break`).
        let mut guards = 0;
        for (k, item) in items.iter().enumerate() {
            match item {
                Item::Stmt(s) => {
                    self.stmt(s);
                    let flag = self.breaks.last().copied().flatten();
                    if let (Some(flag), true) = (flag, k + 1 < items.len() && breaks(s)) {
                        let at = items[k + 1..]
                            .iter()
                            .map(item_span)
                            .fold(Span::NONE, |a, b| if a == Span::NONE { b } else { a.to(b) });
                        match self.b.begin_if_at(None, flag_clear(flag), at) {
                            Ok(_) => guards += 1,
                            Err(e) => self.build_error(e, at),
                        }
                    }
                }
                Item::Proc(p) => self.proc_def(p, top),
                Item::Param(_, span) | Item::Assume(_, span) | Item::Array(_, _, span) => {
                    if !top {
                        let d = Diagnostic::error("E0009", "declarations must be at the top level")
                            .primary(self.file, *span, "inside a loop or `if`")
                            .note("move the declaration before the loops; declarations are global");
                        self.error(d);
                    }
                }
            }
        }
        for _ in 0..guards {
            self.end(Span::NONE);
        }
    }

    /// Before a loop whose body has a `break`: its flag, cleared.
    fn break_flag(&mut self, body: &[Item], at: Span) -> Option<ArrayId> {
        if self.procs.in_proc() || !body.iter().any(|i| matches!(i, Item::Stmt(s) if breaks(s))) {
            return None;
        }
        let name = (0..)
            .map(|k| match k {
                0 => "broke".to_string(),
                k => format!("broke_{k}"),
            })
            .find(|n| {
                self.tree.names.get(n.as_str()).is_none()
                    && !(0..self.b.counts().1)
                        .any(|a| self.b.array_decl(ArrayId(a as u32)).name == *n)
            })?;
        match self.b.array_at(&name, ElemType::Int, Vec::new(), at) {
            Ok(a) => {
                let zero = Expr::int(0);
                self.b
                    .assign_at(None, false, flag_access(a, at), None, zero, at);
                Some(a)
            }
            Err(e) => {
                self.build_error(e, at);
                None
            }
        }
    }

    fn site_name(&mut self, text: &'a str, span: Span) {
        if reserved(text) {
            let d = Diagnostic::error("E0113", format!("`{text}` is a reserved name"))
                .primary(self.file, span, "reserved")
                .note("names like `_S1`, `_C1` and `_W1` are generated for unnamed statements and conditions");
            self.error(d);
            return;
        }
        if let Some(first) = self
            .sites
            .get(text)
            .copied()
            .or_else(|| self.procs.owned_site(text))
        {
            let d = Diagnostic::error("E0110", format!("the label `{text}` is used twice"))
                .primary(self.file, span, "used again here")
                .secondary(self.file, first, "first used here")
                .note("statement labels and condition names must be unique");
            self.error(d);
            return;
        }
        self.sites.insert(text, span);
    }

    fn stmt(&mut self, s: &'a ast::Stmt) {
        match s {
            ast::Stmt::For(f) => self.for_loop(f),
            ast::Stmt::While(w) => self.while_loop(w),
            ast::Stmt::If(i) => self.if_stmt(i),
            ast::Stmt::Assign(a) => self.assign(a),
            ast::Stmt::Call(c) => {
                self.call_of_array(c.func, c.span);
                let label = self.prefix(&c.prefix);
                let args = self.values(c.args);
                let func = self.text(c.func);
                self.b
                    .call_at(label.as_deref(), c.prefix.copy, func, args, c.span);
            }
            ast::Stmt::ProcCall(c) => self.proc_call(c),
            ast::Stmt::Break(at) => match self.breaks.last().copied() {
                // A procedure has no scalars of its own for the flag.
                _ if self.procs.in_proc() => {
                    let d = Diagnostic::error("E0126", "`break` inside a procedure")
                        .primary(self.file, *at, "in a procedure")
                        .note("`break` is lowered to a flag, a scalar of the file; pass one in and test it instead");
                    self.error(d);
                }
                Some(Some(flag)) => {
                    let one = Expr::int(1);
                    self.b
                        .assign_at(None, false, flag_access(flag, *at), None, one, *at);
                }
                _ => {
                    let d = Diagnostic::error("E0125", "`break` outside a loop")
                        .primary(self.file, *at, "no loop around it")
                        .note("`break` leaves the innermost `for` or `while` loop around it");
                    self.error(d);
                }
            },
        }
    }

    /// The statement's label: as written, or inside an inlined call the
    /// call's label path before it (`L.S`, `L._S1` when none is written).
    fn prefix(&mut self, p: &'a ast::Prefix) -> Option<String> {
        if let Some(label) = self
            .procs
            .inlined_label(p.label.as_ref().map(|l| l.text.as_str()))
        {
            let span = p.label.as_ref().map_or(Span::NONE, |l| l.span);
            self.inlined_site(&label, span);
            return Some(label);
        }
        let l = p.label.as_ref()?;
        self.site_name(&l.text, l.span);
        Some(l.text.clone())
    }

    /// Counters in scope: inside a procedure only its own.
    fn counter_in_scope(&self, sym: Spur) -> Option<InScope> {
        self.scope[self.procs.scope_base()..]
            .iter()
            .rev()
            .find(|c| c.sym == sym)
            .copied()
    }

    /// A block past the depth limit was reported and emptied by the parser.
    fn too_deep(&self) -> bool {
        self.b.depth() >= MAX_DEPTH
    }

    fn for_loop(&mut self, f: &'a ast::For) {
        if self.too_deep() {
            return;
        }
        let lower = self.bound(f.lower, "a loop bound");
        let upper = self.bound(f.upper, "a loop bound");
        let step = match f.step {
            None => 1,
            Some(e) => self.step(e),
        };
        let name = match f.counter {
            Some(n) => {
                self.check_counter_name(n);
                self.counter_name(self.text(n))
            }
            None => "?".to_string(),
        };
        let flag = self.break_flag(&f.body, f.header);
        match self
            .b
            .begin_for_at(&name, lower, upper, step, f.parallel, f.header)
        {
            Ok(id) => {
                self.counters += 1;
                self.procs.open_loop(name);
                if let Some(n) = f.counter {
                    self.scope.push(InScope {
                        sym: n.sym,
                        id,
                        span: n.span,
                    });
                }
                // A trip after a `break` does nothing.
                let guarded = match flag {
                    Some(a) => self.b.begin_if_at(None, flag_clear(a), f.header).is_ok(),
                    None => false,
                };
                self.breaks.push(flag);
                self.block(&f.body, false);
                self.breaks.pop();
                if guarded {
                    self.end(f.span);
                }
                if let Some(n) = f.counter {
                    self.scope.pop();
                    self.closed.insert(n.sym, n.span);
                }
                self.procs.close_loop();
                self.end(f.span);
            }
            Err(e) => self.build_error(e, f.header),
        }
    }

    fn step(&mut self, id: ast::ExprId) -> i64 {
        let x = self.value(id);
        let e = self.tree.expr(id);
        match Affine::from_expr(&x) {
            Some(a) if a.is_constant() && a.constant > 0 => a.constant,
            Some(a) if a.is_constant() => {
                let d = Diagnostic::error("E0109", format!("step {} is not positive", a.constant))
                    .primary(self.file, e.span, "must be at least 1")
                    .note("loops count upwards; to count down, rewrite the subscripts");
                self.error(d);
                1
            }
            _ => {
                if !matches!(e.kind, ast::ExprKind::Error) {
                    let d =
                        Diagnostic::error("E0109", "a step must be a positive integer constant")
                            .primary(self.file, e.span, "not a constant");
                    self.error(d);
                }
                1
            }
        }
    }

    /// A `for` counter may not hide a counter in scope, a parameter or an array.
    fn check_counter_name(&mut self, n: ast::Name) {
        let text = self.text(n);
        if let Some(outer) = self.counter_in_scope(n.sym) {
            let d = Diagnostic::error(
                "E0105",
                format!("the counter `{text}` shadows an outer counter"),
            )
            .primary(self.file, n.span, "shadows the outer one")
            .secondary(self.file, outer.span, "outer counter")
            .note("give the inner loop another counter name");
            self.error(d);
        } else if let Some((g, first)) = self.global_in_proc(n.sym) {
            let what = match g {
                Global::Param(_) => "a parameter",
                Global::Array(..) => "an array",
            };
            let d = Diagnostic::error(
                "E0106",
                format!("the counter `{text}` has the name of {what}"),
            )
            .primary(self.file, n.span, "this counter")
            .secondary(self.file, first, "declared here");
            self.error(d);
        }
    }

    fn end(&mut self, span: Span) {
        if let Err(e) = self.b.end() {
            self.build_error(e, span);
        }
    }

    fn while_loop(&mut self, w: &'a ast::While) {
        if self.too_deep() {
            return;
        }
        let name = w.name.map(|n| {
            let text = self.text(n);
            self.check_while_name(n);
            if self.procs.inlining() {
                let fresh = self.counter_name(text);
                self.inlined_site(&fresh, n.span);
                fresh
            } else {
                self.site_name(text, n.span);
                text.to_string()
            }
        });
        // The condition sees the loop's own counter (the trip number).
        let id = CounterId(self.counters);
        if let Some(n) = w.name {
            self.scope.push(InScope {
                sym: n.sym,
                id,
                span: n.span,
            });
        }
        let cond = self.cond(w.cond);
        // A `while` loop with a `break` also tests its flag.
        let flag = self.break_flag(&w.body, w.header);
        let cond = match flag {
            Some(a) => Cond::And(Box::new(cond), Box::new(flag_clear(a))),
            None => cond,
        };
        match self.b.begin_while_at(name.as_deref(), cond, w.header) {
            Ok(c) => {
                self.counters += 1;
                let _ = c;
                self.procs.open_loop(name.clone().unwrap_or_default());
                self.breaks.push(flag);
                self.block(&w.body, false);
                self.breaks.pop();
                self.procs.close_loop();
                self.end(w.span);
            }
            Err(e) => self.build_error(e, w.header),
        }
        if let Some(n) = w.name {
            self.scope.pop();
            self.closed.insert(n.sym, n.span);
        }
    }

    fn check_while_name(&mut self, n: ast::Name) {
        let text = self.text(n);
        let other = if let Some(c) = self.counter_in_scope(n.sym) {
            Some((c.span, "a counter in scope"))
        } else {
            self.global_in_proc(n.sym).map(|(g, span)| match g {
                Global::Param(_) => (span, "a parameter"),
                Global::Array(..) => (span, "an array"),
            })
        };
        if let Some((span, what)) = other {
            let d = Diagnostic::error(
                "E0111",
                format!("the `while` name `{text}` clashes with {what}"),
            )
            .primary(self.file, n.span, "this `while` name")
            .secondary(self.file, span, "already names this")
            .note("a `while` name is also its trip counter, so it must be free");
            self.error(d);
        }
    }

    fn cond_name(&mut self, n: Option<ast::Name>) -> Option<String> {
        n.map(|n| {
            let text = self.text(n);
            if let Some(name) = self.procs.inlined_cond(text) {
                self.inlined_site(&name, n.span);
                return name;
            }
            self.site_name(text, n.span);
            text.to_string()
        })
    }

    fn if_stmt(&mut self, i: &'a ast::If) {
        if self.too_deep() {
            return;
        }
        for (k, br) in i.branches.iter().enumerate() {
            let name = self.cond_name(br.name);
            let cond = self.cond(br.cond);
            let r = if k == 0 {
                self.b.begin_if_at(name.as_deref(), cond, br.header)
            } else {
                self.b.elsif(name.as_deref(), cond, br.header)
            };
            if let Err(e) = r {
                self.build_error(e, br.header);
                return;
            }
            self.block(&br.body, false);
        }
        if let Some(body) = &i.otherwise {
            if let Err(e) = self.b.otherwise() {
                self.build_error(e, i.span);
                return;
            }
            self.block(body, false);
        }
        self.end(i.span);
    }

    fn assign(&mut self, a: &'a ast::Assign) {
        let label = self.prefix(&a.prefix);
        let subs = self.tree.list(a.subscripts);
        let mut target = self.access(a.target, subs, a.target_span, true);
        if let (Some(t), Some(x)) = (&mut target, &a.ext) {
            t.ext = self.ext(x);
            let kind = if a.op.is_some() {
                AccessKind::Update
            } else {
                AccessKind::Write
            };
            if t.ext.is_none() || !self.claimed(t, kind) {
                target = None;
            }
        }
        let value = self.value(a.value);
        if let Some(target) = target {
            self.b
                .assign_at(label.as_deref(), a.prefix.copy, target, a.op, value, a.span);
        }
    }

    /// The annotation `@name(args)` of an extension access: E0116 when no
    /// kind of the set has that name, E0117 when the arguments do not fit.
    fn ext(&mut self, x: &ast::Ext) -> Option<Box<ExtAccess>> {
        let name = self.text(x.kind).to_string();
        let Some(arity) = self.kinds.arity_of(&name) else {
            let known: Vec<String> = (self.kinds.names().iter())
                .map(|n| format!("`@{n}`"))
                .collect();
            let d = Diagnostic::error("E0116", format!("unknown access kind `@{name}`"))
                .primary(self.file, x.kind.span, "no access kind of this name")
                .note(if known.is_empty() {
                    "this build has no extension access kinds (docs/rules.md §5 adds one)"
                        .to_string()
                } else {
                    format!("the access kinds of this build: {}", known.join(", "))
                });
            self.error(d);
            return None;
        };
        let ids = self.tree.list(x.args);
        let mut args = Vec::with_capacity(ids.len());
        for &id in ids {
            let v = self.value(id);
            let s = Subscript::new(v);
            if s.affine.is_none() {
                let d = Diagnostic::error(
                    "E0117",
                    format!("the arguments of `@{name}` must be affine"),
                )
                .primary(self.file, s.expr.span, "not affine")
                .note("affine: integers, parameters and loop counters with + and -, and products by constants");
                self.error(d);
                return None;
            }
            args.push(s);
        }
        if args.len() != arity {
            let d = Diagnostic::error(
                "E0117",
                format!(
                    "`@{name}` takes {} but is given {}",
                    plural(arity, "argument"),
                    plural(args.len(), "argument")
                ),
            )
            .primary(self.file, x.span, "here");
            self.error(d);
            return None;
        }
        Some(Box::new(ExtAccess {
            name,
            args,
            span: x.span,
        }))
    }

    /// Whether the kind an extension access names takes it in this
    /// position (a read, a write, an update): E0117 when not.
    fn claimed(&mut self, a: &Access, kind: AccessKind) -> bool {
        let Some(x) = &a.ext else { return true };
        if self.kinds.takes(a, kind) {
            return true;
        }
        let what = match kind {
            AccessKind::Read => "a read",
            AccessKind::Write => "an assignment's target",
            AccessKind::Update => "a compound assignment's target",
        };
        let d = Diagnostic::error("E0117", format!("`@{}` does not take this access", x.name))
            .primary(self.file, a.span, format!("{what} of this shape"))
            .note(format!(
                "the kind `@{}` decides which accesses it takes (its `claims`)",
                x.name
            ));
        self.error(d);
        false
    }

    // ---- expressions --------------------------------------------------

    /// An array access `name[subscripts]` (a scalar when there are none).
    /// `write` says it is an assignment's target.
    fn access(
        &mut self,
        name: ast::Name,
        subs: &[ast::ExprId],
        span: Span,
        write: bool,
    ) -> Option<Access> {
        let subscripts: Vec<Subscript> = subs
            .iter()
            .map(|&s| Subscript::new(self.value(s)))
            .collect();
        let text = self.text(name);
        if let Some(c) = self.counter_in_scope(name.sym) {
            let (code, msg) = if write {
                (
                    "E0103",
                    format!("cannot assign to the loop counter `{text}`"),
                )
            } else {
                ("E0115", format!("`{text}` is a loop counter, not an array"))
            };
            let d = Diagnostic::error(code, msg)
                .primary(
                    self.file,
                    span,
                    if write {
                        "assigned here"
                    } else {
                        "subscripted here"
                    },
                )
                .secondary(self.file, c.span, "the counter of this loop")
                .note("a counter only changes as its loop runs");
            self.error(d);
            return None;
        }
        if self.procs.in_proc() {
            if let Some(a) = self.formal_access(name, subscripts.clone(), span) {
                return a;
            }
        }
        match self.global_in_proc(name.sym) {
            Some((Global::Param(_), first)) => {
                let (code, msg) = if write {
                    ("E0114", format!("cannot assign to the parameter `{text}`"))
                } else {
                    ("E0115", format!("`{text}` is a parameter, not an array"))
                };
                let d = Diagnostic::error(code, msg)
                    .primary(self.file, span, "here")
                    .secondary(self.file, first, "declared as a parameter here");
                self.error(d);
                None
            }
            Some((Global::Array(id, dims), first)) => {
                if dims != subscripts.len() {
                    let msg = if dims == 0 {
                        format!("`{text}` is a scalar and takes no subscripts")
                    } else {
                        format!(
                            "`{text}` has {} but is used with {}",
                            plural(dims, "dimension"),
                            plural(subscripts.len(), "subscript")
                        )
                    };
                    let d = Diagnostic::error("E0102", msg)
                        .primary(
                            self.file,
                            span,
                            format!("{} here", plural(subscripts.len(), "subscript")),
                        )
                        .secondary(self.file, first, "declared here");
                    self.error(d);
                    return None;
                }
                Some(Access {
                    array: id,
                    subscripts,
                    span,
                    ext: None,
                })
            }
            None => {
                self.undeclared(name, if subs.is_empty() { "name" } else { "array" });
                None
            }
        }
    }

    /// `A(i)` where `A` is an array: legal (functions have their own
    /// namespace) but most likely meant `A[i]`.
    fn call_of_array(&mut self, f: ast::Name, span: Span) {
        if let Some(&(Global::Array(_, dims), decl)) = self.globals.get(&f.sym) {
            if dims > 0 {
                let text = self.text(f);
                let d = Diagnostic::warning(
                    "W0004",
                    format!("`{text}(...)` calls a function, but `{text}` is an array"),
                )
                .primary(self.file, span, "a call to an uninterpreted function")
                .secondary(self.file, decl, "the array")
                .note(format!("an element of the array is written `{text}[...]`"));
                self.diags.push(d);
            }
        }
    }

    fn undeclared(&mut self, name: ast::Name, what: &str) {
        let text = self.text(name);
        let d = if let Some(&loop_span) = self.closed.get(&name.sym) {
            Diagnostic::error(
                "E0104",
                format!("the counter `{text}` is used outside its loop"),
            )
            .primary(self.file, name.span, "not inside that loop here")
            .secondary(self.file, loop_span, "the loop it counts")
        } else if let Some(d) = self.hidden_global(name) {
            d
        } else {
            let hint = if what == "array" {
                format!("declare it, e.g. `real {text}[1..N];`")
            } else {
                format!("declare it (`real {text};` or `param {text};`), or check the spelling")
            };
            Diagnostic::error("E0101", format!("`{text}` is not declared"))
                .primary(self.file, name.span, format!("undeclared {what}"))
                .note(hint)
        };
        self.error(d);
    }

    /// Lowers an expression used as a value.
    fn values(&mut self, list: ast::List) -> Vec<Expr> {
        let ids = self.tree.list(list);
        ids.iter().map(|&a| self.value(a)).collect()
    }

    fn value(&mut self, id: ast::ExprId) -> Expr {
        use ast::ExprKind as K;
        let e = *self.tree.expr(id);
        let kind = match e.kind {
            K::Int(Some(n)) => ExprKind::Int(n),
            K::Int(None) | K::Error => return dummy(),
            K::Star => {
                let d = Diagnostic::error(
                    "E0120",
                    "`*` stands only for a dimension passed to a procedure",
                )
                .primary(self.file, e.span, "not a subscript of a call's argument")
                .note("write `call P(B[i, *])` to pass row `i` of `B`");
                self.error(d);
                return dummy();
            }
            K::Unknown => ExprKind::Unknown,
            K::Name(n) => {
                if let Some(c) = self.counter_in_scope(n.sym) {
                    ExprKind::Counter(c.id)
                } else if let Some(x) = self.procs.scalar(n.sym) {
                    return Expr::new(x.kind, e.span);
                } else if self.procs.is_formal_array(n.sym) {
                    match self.access(n, &[], e.span, false) {
                        Some(a) => ExprKind::Access(a),
                        None => return dummy(),
                    }
                } else {
                    match self.global_in_proc(n.sym) {
                        Some((Global::Param(p), _)) => ExprKind::Param(p),
                        Some(_) => match self.access(n, &[], e.span, false) {
                            Some(a) => ExprKind::Access(a),
                            None => return dummy(),
                        },
                        None => {
                            self.undeclared(n, "name");
                            return dummy();
                        }
                    }
                }
            }
            K::Index(n, subs) => match self.access(n, self.tree.list(subs), e.span, false) {
                Some(a) => ExprKind::Access(a),
                None => return dummy(),
            },
            K::Ext(index, at) => {
                let mut inner = self.value(index);
                let x = self.tree.exts[at as usize];
                match (&mut inner.kind, self.ext(&x)) {
                    (ExprKind::Access(a), Some(ext)) => a.ext = Some(ext),
                    _ => return dummy(),
                }
                if let ExprKind::Access(a) = &inner.kind {
                    if !self.claimed(a, AccessKind::Read) {
                        return dummy();
                    }
                }
                inner.span = e.span;
                inner.kind
            }
            K::Call(f, args) => {
                self.call_of_array(f, e.span);
                let args = self.values(args);
                ExprKind::Call(self.text(f).to_string(), args)
            }
            K::Neg(x) => ExprKind::Neg(Box::new(self.value(x))),
            K::Infix(ast::Infix::Bin(op), l, r) => {
                ExprKind::Binary(op, Box::new(self.value(l)), Box::new(self.value(r)))
            }
            K::Infix(..) | K::Not(..) => {
                let d = Diagnostic::error("E0010", "expected a value, found a condition")
                    .primary(self.file, e.span, "this is a condition")
                    .note("conditions only stand after `if`, `elsif`, `while` and `assume`");
                self.error(d);
                return dummy();
            }
        };
        Expr::new(kind, e.span)
    }

    /// Lowers an expression used as a condition.
    fn cond(&mut self, id: ast::ExprId) -> Cond {
        use ast::ExprKind as K;
        let e = *self.tree.expr(id);
        match e.kind {
            K::Unknown | K::Error => Cond::Unknown,
            K::Infix(ast::Infix::Cmp(op), l, r) => Cond::Cmp(op, self.value(l), self.value(r)),
            K::Infix(ast::Infix::And, l, r) => {
                Cond::And(Box::new(self.cond(l)), Box::new(self.cond(r)))
            }
            K::Infix(ast::Infix::Or, l, r) => {
                Cond::Or(Box::new(self.cond(l)), Box::new(self.cond(r)))
            }
            K::Not(a) => Cond::Not(Box::new(self.cond(a))),
            _ => {
                let d = Diagnostic::error("E0010", "expected a condition, found a value")
                    .primary(self.file, e.span, "this is a value")
                    .note("compare it, e.g. `x != 0`, or write `...` for an unknown condition");
                self.error(d);
                Cond::Unknown
            }
        }
    }
}

/// Every declaration, in source order, at any depth.
fn collect_declarations<'t>(items: &'t [Item], out: &mut Vec<&'t Item>) {
    for item in items {
        match item {
            Item::Stmt(ast::Stmt::For(f)) => collect_declarations(&f.body, out),
            Item::Stmt(ast::Stmt::While(w)) => collect_declarations(&w.body, out),
            Item::Stmt(ast::Stmt::If(i)) => {
                for b in &i.branches {
                    collect_declarations(&b.body, out);
                }
                if let Some(e) = &i.otherwise {
                    collect_declarations(e, out);
                }
            }
            Item::Stmt(_) | Item::Proc(_) => {}
            decl => out.push(decl),
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
