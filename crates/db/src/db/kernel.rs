//! Kernels: the units of incremental analysis.
//!
//! A kernel is a top-level loop (`for` or `while`, with everything inside),
//! or a maximal run of the other top-level statements (assignments, calls,
//! `if`s) between loops. [`split`] cuts a program into kernels and gives each
//! a *local* program: every declaration, plus the kernel's nodes with
//! statement, condition and counter ids renumbered from 0, generated names
//! regenerated from the local ids, and spans relative to the kernel's start
//! (declarations carry no span). A local program depends only on the
//! declarations and on the kernel's own text, so an edit elsewhere in the file
//! leaves it equal and salsa reuses everything computed from it.
//!
//! [`augment`] wraps a local program for the dataflow analysis: an *entry*
//! write of every cell of every array the kernel reads, before the kernel,
//! and an *exit* read of every cell of every array it writes, after it. They
//! are loops over the declared cells in the program, but the lowering makes
//! them only for the cells the kernel touches ([`Augmented::frame`]).
//! docs/architecture.md ("Incremental analysis") proves that σ of the whole
//! program follows from these per-kernel results.

use crate::facts::Frame;
use crate::model::builder::{generated_cond_name, generated_stmt_label, generated_while_name};
use crate::model::*;

/// A kernel's local program, plus its relative spans in walk order:
/// [`Span`] compares equal to every span, so without the fingerprint salsa
/// would keep results that point at old positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelProgram {
    pub program: Program,
    spans: Vec<u32>,
}

/// Where a kernel sits in its file: what turns its local ids and relative
/// spans into the file's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Its position among the file's kernels.
    pub index: u32,
    /// The byte offset its relative spans count from.
    pub base: u32,
    /// The byte offset just past its last node.
    pub end: u32,
    pub stmts: IdRange,
    pub conds: IdRange,
    pub counters: IdRange,
}

/// Global ids `start..start + len` of one kind of element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdRange {
    pub start: u32,
    pub len: u32,
}

impl IdRange {
    pub fn contains(&self, id: u32) -> bool {
        id >= self.start && id - self.start < self.len
    }
}

/// The file's ids of a kernel's first statement and condition: what its
/// generated names follow. Kept apart from [`Placement`], so that what
/// needs only the names does not re-run when text before the kernel
/// changes length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirstIds {
    pub stmt: u32,
    pub cond: u32,
}

impl Placement {
    pub fn first_ids(&self) -> FirstIds {
        FirstIds {
            stmt: self.stmts.start,
            cond: self.conds.start,
        }
    }

    pub fn global_site(&self, site: Site) -> Site {
        match site {
            Site::Stmt(s) => Site::Stmt(StmtId(s.0 + self.stmts.start)),
            Site::Cond(c) => Site::Cond(CondId(c.0 + self.conds.start)),
        }
    }

    /// The local site of a global one, when it is in this kernel.
    pub fn local_site(&self, site: Site) -> Option<Site> {
        match site {
            Site::Stmt(s) if self.stmts.contains(s.0) => {
                Some(Site::Stmt(StmtId(s.0 - self.stmts.start)))
            }
            Site::Cond(c) if self.conds.contains(c.0) => {
                Some(Site::Cond(CondId(c.0 - self.conds.start)))
            }
            _ => None,
        }
    }

    pub fn global_counter(&self, c: CounterId) -> CounterId {
        CounterId(c.0 + self.counters.start)
    }

    /// A relative span made absolute.
    pub fn absolute(&self, span: Span) -> Span {
        if span.is_none() {
            return span;
        }
        Span {
            start: span.start.saturating_add(self.base),
            end: span.end.saturating_add(self.base),
        }
    }
}

/// One kernel of a program.
pub struct Part {
    pub program: KernelProgram,
    pub place: Placement,
}

/// Cuts `program` into kernels, in textual order.
pub fn split(program: &Program) -> Vec<Part> {
    let mut groups: Vec<&[Node]> = Vec::new();
    let body = &program.body;
    let mut k = 0;
    while k < body.len() {
        let start = k;
        if matches!(body[k], Node::For(_) | Node::While(_)) {
            k += 1;
        } else {
            while k < body.len() && !matches!(body[k], Node::For(_) | Node::While(_)) {
                k += 1;
            }
        }
        groups.push(&body[start..k]);
    }
    let mut next = (0u32, 0u32, 0u32);
    let mut parts = Vec::with_capacity(groups.len());
    for (index, nodes) in groups.into_iter().enumerate() {
        let mut count = Count::default();
        count.nodes(nodes);
        let place = Placement {
            index: index as u32,
            base: count.start,
            end: count.end,
            stmts: IdRange {
                start: next.0,
                len: count.stmts,
            },
            conds: IdRange {
                start: next.1,
                len: count.conds,
            },
            counters: IdRange {
                start: next.2,
                len: count.counters,
            },
        };
        next = (
            next.0 + count.stmts,
            next.1 + count.conds,
            next.2 + count.counters,
        );
        parts.push(Part {
            program: localize(program, nodes, &place),
            place,
        });
    }
    parts
}

/// Sizes and extent of a group of nodes.
#[derive(Default)]
struct Count {
    stmts: u32,
    conds: u32,
    counters: u32,
    start: u32,
    end: u32,
    seen: bool,
}

impl Count {
    fn span(&mut self, s: Span) {
        if s.is_none() {
            return;
        }
        if !self.seen {
            self.seen = true;
            self.start = s.start;
            self.end = s.end;
        }
        self.start = self.start.min(s.start);
        self.end = self.end.max(s.end);
    }

    fn nodes(&mut self, nodes: &[Node]) {
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    self.stmts += 1;
                    self.span(s.span);
                }
                Node::For(f) => {
                    self.counters += 1;
                    self.span(f.span);
                    self.nodes(&f.body);
                }
                Node::While(w) => {
                    self.counters += 1;
                    self.conds += 1;
                    self.span(w.span);
                    self.nodes(&w.body);
                }
                Node::If(i) => {
                    self.span(i.span);
                    for (c, b) in &i.branches {
                        self.conds += 1;
                        self.span(c.span);
                        self.nodes(b);
                    }
                    if let Some(b) = &i.otherwise {
                        self.nodes(b);
                    }
                }
            }
        }
    }
}

/// The local program of the kernel made of `nodes`.
fn localize(program: &Program, nodes: &[Node], place: &Placement) -> KernelProgram {
    let mut r = Relocate {
        shift: (place.stmts.start, place.conds.start, place.counters.start),
        base: None,
        spans: Vec::new(),
    };
    let params = program
        .params
        .iter()
        .map(|p| Param {
            span: Span::NONE,
            ..p.clone()
        })
        .collect();
    let assumptions = program.assumptions.iter().map(|c| r.cond(c)).collect();
    let arrays = program
        .arrays
        .iter()
        .map(|a| Array {
            name: a.name.clone(),
            elem: a.elem,
            dims: a
                .dims
                .iter()
                .map(|d| Range {
                    lo: r.bound(&d.lo),
                    hi: r.bound(&d.hi),
                })
                .collect(),
            span: Span::NONE,
            local: a.local,
        })
        .collect();
    r.base = Some(place.base);
    let counters = program
        .counters
        .get(place.counters.start as usize..(place.counters.start + place.counters.len) as usize)
        .unwrap_or(&[])
        .iter()
        .map(|c| Counter {
            span: r.span(c.span),
            ..c.clone()
        })
        .collect();
    let body = nodes.iter().map(|n| r.node(n)).collect();
    let mut local = Program {
        params,
        assumptions,
        arrays,
        counters,
        body,
    };
    rename_generated(&mut local, FirstIds::default());
    KernelProgram {
        program: local,
        spans: r.spans,
    }
}

/// Copies model elements with ids shifted down by `shift` (statements,
/// conditions, counters) and spans made relative to `base` (or removed when
/// there is no base).
struct Relocate {
    shift: (u32, u32, u32),
    base: Option<u32>,
    spans: Vec<u32>,
}

impl Relocate {
    fn span(&mut self, s: Span) -> Span {
        let Some(base) = self.base else {
            return Span::NONE;
        };
        if s.is_none() {
            return s;
        }
        let rel = Span {
            start: s.start.saturating_sub(base),
            end: s.end.saturating_sub(base),
        };
        self.spans.extend([rel.start, rel.end]);
        rel
    }

    fn counter(&self, c: CounterId) -> CounterId {
        CounterId(c.0.wrapping_sub(self.shift.2))
    }

    fn node(&mut self, n: &Node) -> Node {
        match n {
            Node::Stmt(s) => Node::Stmt(self.stmt(s)),
            Node::For(f) => Node::For(For {
                counter: self.counter(f.counter),
                lower: self.bound(&f.lower),
                upper: self.bound(&f.upper),
                step: f.step,
                parallel: f.parallel,
                body: f.body.iter().map(|n| self.node(n)).collect(),
                span: self.span(f.span),
            }),
            Node::While(w) => Node::While(While {
                counter: self.counter(w.counter),
                cond: self.condition(&w.cond),
                body: w.body.iter().map(|n| self.node(n)).collect(),
                span: self.span(w.span),
            }),
            Node::If(i) => Node::If(If {
                branches: i
                    .branches
                    .iter()
                    .map(|(c, b)| (self.condition(c), b.iter().map(|n| self.node(n)).collect()))
                    .collect(),
                otherwise: i
                    .otherwise
                    .as_ref()
                    .map(|b| b.iter().map(|n| self.node(n)).collect()),
                span: self.span(i.span),
            }),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        let kind = match &s.kind {
            StmtKind::Assign { target, op, value } => StmtKind::Assign {
                target: self.access(target),
                op: *op,
                value: self.expr(value),
            },
            StmtKind::Call { func, args } => StmtKind::Call {
                func: func.clone(),
                args: args.iter().map(|e| self.expr(e)).collect(),
            },
        };
        Stmt {
            id: StmtId(s.id.0.wrapping_sub(self.shift.0)),
            label: s.label.clone(),
            label_generated: s.label_generated,
            copy: s.copy,
            kind,
            span: self.span(s.span),
        }
    }

    fn condition(&mut self, c: &Condition) -> Condition {
        Condition {
            id: CondId(c.id.0.wrapping_sub(self.shift.1)),
            name: c.name.clone(),
            generated: c.generated,
            cond: self.cond(&c.cond),
            span: self.span(c.span),
        }
    }

    fn cond(&mut self, c: &Cond) -> Cond {
        match c {
            Cond::Cmp(op, l, r) => Cond::Cmp(*op, self.expr(l), self.expr(r)),
            Cond::And(a, b) => Cond::And(Box::new(self.cond(a)), Box::new(self.cond(b))),
            Cond::Or(a, b) => Cond::Or(Box::new(self.cond(a)), Box::new(self.cond(b))),
            Cond::Not(a) => Cond::Not(Box::new(self.cond(a))),
            Cond::Unknown => Cond::Unknown,
        }
    }

    fn bound(&mut self, b: &Bound) -> Bound {
        let expr = self.expr(&b.expr);
        Bound {
            affine: Affine::from_expr(&expr).unwrap_or_else(|| b.affine.clone()),
            expr,
        }
    }

    fn access(&mut self, a: &Access) -> Access {
        Access {
            array: a.array,
            subscripts: a
                .subscripts
                .iter()
                .map(|s| Subscript::new(self.expr(&s.expr)))
                .collect(),
            span: self.span(a.span),
            ext: a.ext.as_ref().map(|x| {
                Box::new(crate::model::ExtAccess {
                    name: x.name.clone(),
                    args: x
                        .args
                        .iter()
                        .map(|s| Subscript::new(self.expr(&s.expr)))
                        .collect(),
                    span: self.span(x.span),
                })
            }),
        }
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        let kind = match &e.kind {
            ExprKind::Int(v) => ExprKind::Int(*v),
            ExprKind::Param(p) => ExprKind::Param(*p),
            ExprKind::Counter(c) => ExprKind::Counter(self.counter(*c)),
            ExprKind::Access(a) => ExprKind::Access(self.access(a)),
            ExprKind::Call(f, args) => {
                ExprKind::Call(f.clone(), args.iter().map(|x| self.expr(x)).collect())
            }
            ExprKind::Neg(x) => ExprKind::Neg(Box::new(self.expr(x))),
            ExprKind::Binary(op, l, r) => {
                ExprKind::Binary(*op, Box::new(self.expr(l)), Box::new(self.expr(r)))
            }
            ExprKind::Unknown => ExprKind::Unknown,
        };
        Expr {
            kind,
            span: self.span(e.span),
        }
    }
}

/// A kernel's local program under the names the file gives its sites and
/// loops: generated names follow the file's ids (`first`, asked for only
/// when there is a generated name), the local program's its own.
pub fn named_as_in_file(
    local: &Program,
    first: impl FnOnce() -> FirstIds,
) -> std::borrow::Cow<'_, Program> {
    let generated = local.stmts().iter().any(|s| s.label_generated)
        || local.conditions().iter().any(|c| c.generated);
    if !generated {
        return std::borrow::Cow::Borrowed(local);
    }
    let mut p = local.clone();
    rename_generated(&mut p, first());
    std::borrow::Cow::Owned(p)
}

/// Regenerates the generated names of a program from its ids, counted from
/// `first` (the file's ids of a local program's first statement and
/// condition; zero for the local names).
fn rename_generated(p: &mut Program, first: FirstIds) {
    fn walk(nodes: &mut [Node], counters: &mut [Counter], first: FirstIds) {
        let stmt = |s: StmtId| StmtId(s.0 + first.stmt);
        let cond = |c: CondId| CondId(c.0 + first.cond);
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    if s.label_generated {
                        s.label = generated_stmt_label(stmt(s.id));
                    }
                }
                Node::For(f) => walk(&mut f.body, counters, first),
                Node::While(w) => {
                    if w.cond.generated {
                        w.cond.name = generated_while_name(cond(w.cond.id));
                        if let Some(c) = counters.get_mut(w.counter.index()) {
                            c.name = w.cond.name.clone();
                        }
                    }
                    walk(&mut w.body, counters, first);
                }
                Node::If(i) => {
                    for (c, b) in &mut i.branches {
                        if c.generated {
                            c.name = generated_cond_name(cond(c.id));
                        }
                        walk(b, counters, first);
                    }
                    if let Some(b) = &mut i.otherwise {
                        walk(b, counters, first);
                    }
                }
            }
        }
    }
    walk(&mut p.body, &mut p.counters, first);
}

/// Label prefixes of the statements [`augment`] adds (not valid labels of
/// the language, so no clash is possible).
pub const ENTRY: &str = "<entry>";
pub const EXIT: &str = "<exit>";

/// What [`augment`] added to a local program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Augmented {
    /// Arrays with an entry write, in order: entry statement k writes `entry[k]`.
    pub entry: Vec<ArrayId>,
    /// Arrays with an exit read, in order, after the kernel's statements.
    pub exit: Vec<ArrayId>,
    /// The kernel's own statements.
    pub body_stmts: u32,
}

/// What a statement of an augmented program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Entry(ArrayId),
    Body(StmtId),
    Exit(ArrayId),
}

impl Augmented {
    pub fn role(&self, s: StmtId) -> Role {
        let e = self.entry.len() as u32;
        if s.0 < e {
            Role::Entry(self.entry[s.index()])
        } else if s.0 - e < self.body_stmts {
            Role::Body(StmtId(s.0 - e))
        } else {
            let k = (s.0 - e - self.body_stmts) as usize;
            Role::Exit(self.exit.get(k).copied().unwrap_or(ArrayId(0)))
        }
    }

    /// The augmented statement of a kernel statement.
    pub fn body_stmt(&self, s: StmtId) -> StmtId {
        StmtId(s.0 + self.entry.len() as u32)
    }

    /// The exit statement of an array, if the kernel writes it.
    pub fn exit_stmt(&self, a: ArrayId) -> Option<StmtId> {
        let k = self.exit.iter().position(|&x| x == a)?;
        Some(StmtId(self.exit_start().0 + k as u32))
    }

    /// The entry and exit statements, lowered only for the cells the
    /// kernel touches.
    pub fn frame(&self) -> Frame {
        Frame {
            entry: (self.entry.iter().enumerate())
                .map(|(k, &a)| (a, StmtId(k as u32)))
                .collect(),
            exit: (self.exit.iter().enumerate())
                .map(|(k, &a)| (a, StmtId(self.exit_start().0 + k as u32)))
                .collect(),
        }
    }

    fn exit_start(&self) -> StmtId {
        StmtId(self.entry.len() as u32 + self.body_stmts)
    }

    /// The kernel site of an augmented site, `None` for entry and exit statements.
    pub fn body_site(&self, site: Site) -> Option<Site> {
        match site {
            Site::Stmt(s) => match self.role(s) {
                Role::Body(b) => Some(Site::Stmt(b)),
                _ => None,
            },
            Site::Cond(c) => Some(Site::Cond(c)),
        }
    }
}

/// Arrays read and arrays written by a program's statements and conditions,
/// each sorted.
pub fn arrays_used(p: &Program) -> (Vec<ArrayId>, Vec<ArrayId>) {
    let mut read = vec![false; p.arrays.len()];
    let mut written = vec![false; p.arrays.len()];
    for s in p.stmts() {
        for a in s.accesses() {
            if a.kind.reads() {
                read[a.access.array.index()] = true;
            }
            if a.kind.writes() {
                written[a.access.array.index()] = true;
            }
        }
    }
    for c in p.conditions() {
        for a in c.reads() {
            read[a.array.index()] = true;
        }
    }
    let ids = |v: Vec<bool>| {
        v.iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(k, _)| ArrayId(k as u32))
            .collect()
    };
    (ids(read), ids(written))
}

/// The local program with entry writes and exit reads (see the module
/// documentation).
pub fn augment(local: &Program) -> (Program, Augmented) {
    let (read, written) = arrays_used(local);
    let aug = Augmented {
        body_stmts: local.stmts().len() as u32,
        entry: read,
        exit: written,
    };
    let e = aug.entry.len() as u32;
    let mut r = Relocate {
        // Shifting down by the two's complement shifts up by `e`.
        shift: (e.wrapping_neg(), 0, 0),
        base: Some(0),
        spans: Vec::new(),
    };
    let mut body: Vec<Node> = Vec::new();
    let mut counters = local.counters.clone();
    for (k, &a) in aug.entry.iter().enumerate() {
        let target = |subs| Access {
            array: a,
            subscripts: subs,
            span: Span::NONE,
            ext: None,
        };
        let kind = |subs| StmtKind::Assign {
            target: target(subs),
            op: None,
            value: Expr::new(ExprKind::Unknown, Span::NONE),
        };
        body.push(cell_loops(
            local,
            a,
            &mut counters,
            StmtId(k as u32),
            ENTRY,
            kind,
        ));
    }
    body.extend(local.body.iter().map(|n| r.node(n)));
    for (k, &a) in aug.exit.iter().enumerate() {
        let kind = |subs| StmtKind::Call {
            func: "use".to_string(),
            args: vec![Expr::new(
                ExprKind::Access(Access {
                    array: a,
                    subscripts: subs,
                    span: Span::NONE,
                    ext: None,
                }),
                Span::NONE,
            )],
        };
        let id = StmtId(e + aug.body_stmts + k as u32);
        body.push(cell_loops(local, a, &mut counters, id, EXIT, kind));
    }
    let program = Program {
        params: local.params.clone(),
        assumptions: local.assumptions.clone(),
        arrays: local.arrays.clone(),
        counters,
        body,
    };
    (program, aug)
}

/// A loop nest over every declared cell of array `a` around one statement
/// whose accesses index the cell by the loops' counters.
fn cell_loops(
    p: &Program,
    a: ArrayId,
    counters: &mut Vec<Counter>,
    id: StmtId,
    label: &str,
    kind: impl FnOnce(Vec<Subscript>) -> StmtKind,
) -> Node {
    let dims = &p.array_decl(a).dims;
    let ids: Vec<CounterId> = dims
        .iter()
        .enumerate()
        .map(|(d, _)| {
            counters.push(Counter {
                name: format!("{label}{d}"),
                kind: CounterKind::For,
                generated: true,
                span: Span::NONE,
            });
            CounterId(counters.len() as u32 - 1)
        })
        .collect();
    let subs = ids
        .iter()
        .map(|&c| Subscript::new(Expr::new(ExprKind::Counter(c), Span::NONE)))
        .collect();
    let mut node = Node::Stmt(Stmt {
        id,
        label: format!("{label}{}", id.0),
        label_generated: false,
        copy: false,
        kind: kind(subs),
        span: Span::NONE,
    });
    for (d, range) in dims.iter().enumerate().rev() {
        node = Node::For(For {
            counter: ids[d],
            lower: range.lo.clone(),
            upper: range.hi.clone(),
            step: 1,
            parallel: false,
            body: vec![node],
            span: Span::NONE,
        });
    }
    node
}
