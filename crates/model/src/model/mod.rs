//! The language-independent program model.
//!
//! Every front end (the `.loop` parser, a C front end, an IDE that embeds us)
//! lowers into a [`Program`]; every analysis reads only this. Names are resolved
//! to dense typed ids (`ParamId`, `ArrayId`, `CounterId`), so analyses never
//! compare strings. Expressions are kept whole, with their array accesses inline,
//! because the interpreter and the printer need them; the accesses of a
//! statement, in their canonical order, come from [`Stmt::accesses`].
//!
//! Equality is structural: spans never take part (see [`Span`]).

mod affine;
pub mod builder;
pub mod calls;
pub mod cint;
pub mod cover;
pub mod eval;
pub mod lift;
pub mod nodes;
mod span;

pub use affine::{affine_expr, Affine, Var};
pub use span::Span;

macro_rules! id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(
    /// Index into [`Program::params`].
    ParamId
);
id!(
    /// Index into [`Program::arrays`]. Scalars are 0-dimensional arrays.
    ArrayId
);
id!(
    /// Index into [`Program::counters`]: one per loop, even when two loops reuse a name.
    CounterId
);
id!(
    /// Statements numbered 0.. in textual order.
    StmtId
);
id!(
    /// Conditions (of `if`, `elsif` and `while`) numbered 0.. in textual order.
    CondId
);

/// A whole program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Program {
    pub params: Vec<Param>,
    /// Affine facts about parameters (`assume N >= 2;`).
    pub assumptions: Vec<Cond>,
    pub arrays: Vec<Array>,
    pub counters: Vec<Counter>,
    pub body: Vec<Node>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub default: Option<i64>,
    pub span: Span,
    /// Set when the parameter stands for an integer expression over earlier
    /// parameters that is not affine in them (C's `LEN/2`): the analysis
    /// treats it as a parameter of its own, so what it proves holds for
    /// every value, and its value follows theirs (`param_values`).
    pub derived: Option<Derived>,
}

/// What a derived parameter stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// Over earlier parameters, evaluated as C evaluates integer
    /// expressions ([`cint`]).
    pub expr: Expr,
    /// As the source spells it, for printing back (`LEN / 2`, `HALF`).
    pub text: String,
}

impl Derived {
    /// The text as an operand of a larger expression: in parentheses
    /// unless it is a name (`HALF`, `(LEN / 2)`).
    pub fn operand(&self) -> String {
        match self
            .text
            .bytes()
            .all(|b| b == b'_' || b.is_ascii_alphanumeric())
        {
            true => self.text.clone(),
            false => format!("({})", self.text),
        }
    }
}

/// The keyword an array was declared with. It does not matter to the analysis;
/// it is kept so that printing gives back what was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    Real,
    Int,
    Array,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub name: String,
    pub elem: ElemType,
    /// One inclusive range per dimension; empty for a scalar.
    pub dims: Vec<Range>,
    pub span: Span,
    /// Declared inside the analysed code (a C local of the region): no
    /// caller sees its contents, so its values are dead after the program.
    pub local: bool,
}

/// An inclusive range `lo..hi`, both affine in the parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: Bound,
    pub hi: Bound,
}

/// An expression that must be affine (a loop bound, a declared range), kept
/// both as written and in affine form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub expr: Expr,
    pub affine: Affine,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    For,
    /// The implicit counter of a `while` loop, counting trips from 0.
    While,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    pub name: String,
    pub kind: CounterKind,
    /// Whether the name was generated (an unnamed `while`).
    pub generated: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    For(For),
    While(While),
    If(If),
    Stmt(Stmt),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct For {
    pub counter: CounterId,
    pub lower: Bound,
    pub upper: Bound,
    /// A positive step; 1 when none was written.
    pub step: i64,
    /// Claimed parallel (`doall` instead of `do`): iterations may run in any order.
    pub parallel: bool,
    pub body: Vec<Node>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct While {
    pub counter: CounterId,
    pub cond: Condition,
    pub body: Vec<Node>,
    pub span: Span,
}

/// `if c1 then b1 elsif c2 then b2 ... else e end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct If {
    pub branches: Vec<(Condition, Vec<Node>)>,
    pub otherwise: Option<Vec<Node>>,
    pub span: Span,
}

/// A condition of an `if`, `elsif` or `while`, with the stable name that the
/// interpreter and the analyses use to identify its instances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub id: CondId,
    pub name: String,
    /// Whether the name was generated rather than written (`if [c] ... then`).
    pub generated: bool,
    pub cond: Cond,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    Cmp(CmpOp, Expr, Expr),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    /// `...`: unknown at analysis time.
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Int(i64),
    Param(ParamId),
    Counter(CounterId),
    /// A read of an array element (or of a scalar, with no subscripts).
    Access(Access),
    /// A call to an uninterpreted, pure function.
    Call(String, Vec<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `...`: an opaque value that reads nothing.
    Unknown,
}

/// A reference to an array element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub array: ArrayId,
    pub subscripts: Vec<Subscript>,
    pub span: Span,
    /// An access of an extension kind (`A[i] @name(args)`): which kind and
    /// its arguments. `None` for every access the core kinds lower.
    pub ext: Option<Box<ExtAccess>>,
}

/// The kind annotation of an extension access, `@name(arg, ...)`: the name
/// an `AccessLowering::syntax` claims and affine
/// arguments it reads as it likes (docs/language.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtAccess {
    pub name: String,
    pub args: Vec<Subscript>,
    /// The span of `@name(...)`.
    pub span: Span,
}

/// One subscript: the expression as written, and its affine form when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscript {
    pub expr: Expr,
    pub affine: Option<Affine>,
}

impl Subscript {
    pub fn new(expr: Expr) -> Subscript {
        let affine = Affine::from_expr(&expr);
        Subscript { expr, affine }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub id: StmtId,
    /// The statement's label, e.g. `S`, or a derived label `S.1` (see
    /// docs/language.md), or a generated one when `label_generated`.
    pub label: String,
    pub label_generated: bool,
    /// A copy-in or copy-out statement added by a transformation (`@copy`):
    /// excluded from read traces, not from final contents.
    pub copy: bool,
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `target = value`, or `target op= value` when `op` is set.
    Assign {
        target: Access,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `f(args);`: reads its arguments, writes nothing.
    Call { func: String, args: Vec<Expr> },
}

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
    /// The target of a compound assignment: read, then written.
    Update,
}

impl AccessKind {
    pub fn reads(self) -> bool {
        matches!(self, AccessKind::Read | AccessKind::Update)
    }
    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::Update)
    }
}

/// An access together with what it does, as listed by [`Stmt::accesses`].
#[derive(Clone, Copy, Debug)]
pub struct AccessRef<'a> {
    pub access: &'a Access,
    pub kind: AccessKind,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    pub fn int(n: i64) -> Expr {
        Expr::new(ExprKind::Int(n), Span::NONE)
    }

    /// Collects the reads in this expression in canonical order: pre-order, left
    /// to right, an access before the reads inside its subscripts. This is the
    /// order in which they start in the source text.
    pub fn collect_reads<'a>(&'a self, out: &mut Vec<AccessRef<'a>>) {
        match &self.kind {
            ExprKind::Access(a) => {
                out.push(AccessRef {
                    access: a,
                    kind: AccessKind::Read,
                });
                a.collect_subscript_reads(out);
            }
            ExprKind::Call(_, args) => args.iter().for_each(|e| e.collect_reads(out)),
            ExprKind::Neg(e) => e.collect_reads(out),
            ExprKind::Binary(_, l, r) => {
                l.collect_reads(out);
                r.collect_reads(out);
            }
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
        }
    }

    /// A copy with every counter and every access (subscripts included)
    /// replaced: what a pass that renumbers or rewrites a program uses.
    pub fn map_parts(
        &self,
        counter: &dyn Fn(CounterId) -> CounterId,
        access: &dyn Fn(&Access) -> Access,
    ) -> Expr {
        let kind = match &self.kind {
            ExprKind::Counter(c) => ExprKind::Counter(counter(*c)),
            ExprKind::Access(a) => ExprKind::Access(access(a)),
            ExprKind::Call(f, args) => ExprKind::Call(
                f.clone(),
                args.iter().map(|a| a.map_parts(counter, access)).collect(),
            ),
            ExprKind::Neg(y) => ExprKind::Neg(Box::new(y.map_parts(counter, access))),
            ExprKind::Binary(op, l, r) => ExprKind::Binary(
                *op,
                Box::new(l.map_parts(counter, access)),
                Box::new(r.map_parts(counter, access)),
            ),
            k => k.clone(),
        };
        Expr::new(kind, self.span)
    }

    /// Whether the value depends on nothing but integers, counters and
    /// parameters, so it is known once parameters have values.
    pub fn is_static(&self) -> bool {
        match &self.kind {
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) => true,
            ExprKind::Neg(e) => e.is_static(),
            ExprKind::Binary(_, l, r) => l.is_static() && r.is_static(),
            ExprKind::Access(_) | ExprKind::Call(..) | ExprKind::Unknown => false,
        }
    }
}

impl Access {
    /// Whether `self` and `other` name one cell whatever the counters'
    /// values: the same array at equal affine subscripts (core kinds only).
    pub fn same_cell(&self, other: &Access) -> bool {
        self.array == other.array
            && self.ext.is_none()
            && other.ext.is_none()
            && self.subscripts.len() == other.subscripts.len()
            && (self.subscripts.iter().zip(&other.subscripts))
                .all(|(x, y)| x.affine.is_some() && x.affine == y.affine)
    }

    pub fn collect_subscript_reads<'a>(&'a self, out: &mut Vec<AccessRef<'a>>) {
        for s in &self.subscripts {
            s.expr.collect_reads(out);
        }
    }

    /// All subscripts affine: the access touches exactly one known cell.
    pub fn is_affine(&self) -> bool {
        self.subscripts.iter().all(|s| s.affine.is_some())
    }
}

impl Stmt {
    /// `@copy label: target = value;`, a statement a transformation adds
    /// (its id is given when the printed program is read back).
    pub fn copy(label: String, target: Access, value: Expr) -> Stmt {
        Stmt {
            id: StmtId(0),
            label,
            label_generated: false,
            copy: true,
            kind: StmtKind::Assign {
                target,
                op: None,
                value,
            },
            span: Span::NONE,
        }
    }

    /// Every access of the statement in canonical order: the target (as `Write`,
    /// or `Update` for a compound assignment), the reads in its subscripts, then
    /// the reads of the right-hand side, each in source order.
    pub fn accesses(&self) -> Vec<AccessRef<'_>> {
        let mut out = Vec::new();
        self.collect_accesses(&mut out);
        out
    }

    /// [`Stmt::accesses`], appended to `out`.
    pub fn collect_accesses<'a>(&'a self, out: &mut Vec<AccessRef<'a>>) {
        match &self.kind {
            StmtKind::Assign { target, op, value } => {
                out.push(AccessRef {
                    access: target,
                    kind: if op.is_some() {
                        AccessKind::Update
                    } else {
                        AccessKind::Write
                    },
                });
                target.collect_subscript_reads(out);
                value.collect_reads(out);
            }
            StmtKind::Call { args, .. } => args.iter().for_each(|e| e.collect_reads(out)),
        }
    }

    /// The reads, numbered as the `access` index of every output: the implicit
    /// read of a compound target first, then in source order.
    pub fn reads(&self) -> Vec<&Access> {
        self.accesses()
            .into_iter()
            .filter(|a| a.kind.reads())
            .map(|a| a.access)
            .collect()
    }

    /// The access this statement writes, if any.
    pub fn write(&self) -> Option<(&Access, AccessKind)> {
        match &self.kind {
            StmtKind::Assign { target, op, .. } => Some((
                target,
                if op.is_some() {
                    AccessKind::Update
                } else {
                    AccessKind::Write
                },
            )),
            StmtKind::Call { .. } => None,
        }
    }

    /// The label without a derived-version suffix: `S` for `S.2`.
    pub fn base_label(&self) -> &str {
        base_label(&self.label)
    }
}

/// The label without a derived-version suffix: `S` for `S.2.1`. Name
/// segments stay (`L.S`, statement `S` inlined at call `L`, is its own
/// base; `L.S.2` has base `L.S`).
pub fn base_label(label: &str) -> &str {
    let mut end = label.len();
    while let Some(dot) = label[..end].rfind('.') {
        let seg = &label[dot + 1..end];
        if seg.is_empty() || !seg.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        end = dot;
    }
    &label[..end]
}

impl Cond {
    /// The same condition with every compared expression mapped.
    pub fn map_exprs(&self, f: &dyn Fn(&Expr) -> Expr) -> Cond {
        match self {
            Cond::Cmp(op, l, r) => Cond::Cmp(*op, f(l), f(r)),
            Cond::And(a, b) => Cond::And(Box::new(a.map_exprs(f)), Box::new(b.map_exprs(f))),
            Cond::Or(a, b) => Cond::Or(Box::new(a.map_exprs(f)), Box::new(b.map_exprs(f))),
            Cond::Not(a) => Cond::Not(Box::new(a.map_exprs(f))),
            Cond::Unknown => Cond::Unknown,
        }
    }

    pub fn collect_reads<'a>(&'a self, out: &mut Vec<AccessRef<'a>>) {
        match self {
            Cond::Cmp(_, l, r) => {
                l.collect_reads(out);
                r.collect_reads(out);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                a.collect_reads(out);
                b.collect_reads(out);
            }
            Cond::Not(a) => a.collect_reads(out),
            Cond::Unknown => {}
        }
    }

    /// Known once parameters and counters have values: no `...`, no array
    /// element, no call.
    pub fn is_static(&self) -> bool {
        match self {
            Cond::Cmp(_, l, r) => l.is_static() && r.is_static(),
            Cond::And(a, b) | Cond::Or(a, b) => a.is_static() && b.is_static(),
            Cond::Not(a) => a.is_static(),
            Cond::Unknown => false,
        }
    }
}

impl Condition {
    /// The reads of the condition, in source order.
    pub fn reads(&self) -> Vec<&Access> {
        let mut out = Vec::new();
        self.cond.collect_reads(&mut out);
        out.into_iter().map(|a| a.access).collect()
    }
}

impl Program {
    pub fn param(&self, name: &str) -> Option<ParamId> {
        self.params
            .iter()
            .position(|p| p.name == name)
            .map(|i| ParamId(i as u32))
    }

    pub fn array(&self, name: &str) -> Option<ArrayId> {
        self.arrays
            .iter()
            .position(|a| a.name == name)
            .map(|i| ArrayId(i as u32))
    }

    pub fn array_decl(&self, id: ArrayId) -> &Array {
        &self.arrays[id.index()]
    }

    pub fn counter_decl(&self, id: CounterId) -> &Counter {
        &self.counters[id.index()]
    }

    /// Every statement, in textual order (so `stmts()[k].id == StmtId(k)`).
    /// The first access of an extension kind (`A[i] @name(args)`), if any:
    /// layers that know only the core kinds (the interpreter, the exact
    /// dependence tests, code generation) refuse programs that have one.
    pub fn first_ext_access(&self) -> Option<&Access> {
        let mut out = Vec::new();
        for s in self.stmts() {
            s.collect_accesses(&mut out);
        }
        for c in self.conditions() {
            c.cond.collect_reads(&mut out);
        }
        out.into_iter().map(|a| a.access).find(|a| a.ext.is_some())
    }

    pub fn stmts(&self) -> Vec<&Stmt> {
        let mut out = Vec::new();
        walk_stmts(&self.body, &mut out);
        out
    }

    /// Every condition, in textual order (so `conditions()[k].id == CondId(k)`).
    pub fn conditions(&self) -> Vec<&Condition> {
        let mut out = Vec::new();
        walk_conditions(&self.body, &mut out);
        out
    }
}

/// Every statement of `nodes`, in textual order.
pub fn stmts_in(nodes: &[Node]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    walk_stmts(nodes, &mut out);
    out
}

fn walk_stmts<'a>(nodes: &'a [Node], out: &mut Vec<&'a Stmt>) {
    for n in nodes {
        match n {
            Node::Stmt(s) => out.push(s),
            Node::For(f) => walk_stmts(&f.body, out),
            Node::While(w) => walk_stmts(&w.body, out),
            Node::If(i) => {
                for (_, b) in &i.branches {
                    walk_stmts(b, out);
                }
                if let Some(e) = &i.otherwise {
                    walk_stmts(e, out);
                }
            }
        }
    }
}

fn walk_conditions<'a>(nodes: &'a [Node], out: &mut Vec<&'a Condition>) {
    for n in nodes {
        match n {
            Node::Stmt(_) => {}
            Node::For(f) => walk_conditions(&f.body, out),
            Node::While(w) => {
                out.push(&w.cond);
                walk_conditions(&w.body, out);
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    out.push(c);
                    walk_conditions(b, out);
                }
                if let Some(e) = &i.otherwise {
                    walk_conditions(e, out);
                }
            }
        }
    }
}

/// Where an operation's accesses come from: a statement, or the test of a
/// condition (whose reads are reported under the condition's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Site {
    Stmt(StmtId),
    Cond(CondId),
}

/// An operation: one instance of a site, named by its iteration vector (the
/// counters of the loops around it, outermost first; a `while` counter counts
/// trips from 0). A `while` condition's test before trip k has k as its last
/// entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Operation {
    pub site: Site,
    pub iter: Vec<i64>,
}

/// Every site's name, made in one walk of the program: for callers that
/// name many sites, since [`Program::site_name`] walks the statements on
/// each call.
#[derive(Clone, Debug, Default)]
pub struct SiteNames {
    stmts: Vec<String>,
    conds: Vec<String>,
}

impl SiteNames {
    /// The name of `site`, as [`Program::site_name`] gives it.
    pub fn get(&self, site: Site) -> &str {
        let name = match site {
            Site::Stmt(s) => self.stmts.get(s.index()),
            Site::Cond(c) => self.conds.get(c.index()),
        };
        name.map_or("", String::as_str)
    }
}

impl Program {
    /// Every site's name at once ([`SiteNames`]).
    pub fn site_names(&self) -> SiteNames {
        SiteNames {
            stmts: self.stmts().iter().map(|s| s.label.clone()).collect(),
            conds: (self.conditions().iter()).map(|c| c.name.clone()).collect(),
        }
    }

    /// The name a site goes by in every output: a statement's label or a
    /// condition's name.
    pub fn site_name(&self, site: Site) -> String {
        match site {
            Site::Stmt(s) => self.stmts()[s.index()].label.clone(),
            Site::Cond(c) => self.conditions()[c.index()].name.clone(),
        }
    }
}
