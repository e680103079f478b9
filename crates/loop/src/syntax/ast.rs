//! The syntax tree: what was written, with a span on every node. Names are
//! interned ([`Name::sym`] resolves through [`File::names`]); nothing is
//! resolved or checked yet (that is `lower`'s job).
//!
//! Values and conditions share one expression type, [`Expr`], because a
//! parenthesised `(a < b)` and `(a + b)` cannot be told apart until after the
//! `)`. Lowering checks that each is used where it belongs.
//!
//! Expressions live in one arena per file ([`File::exprs`], children before
//! parents) and refer to each other by [`ExprId`]; argument and subscript
//! lists are ranges of [`File::lists`]. A whole file's expressions are a few
//! large allocations, close together in memory, rather than one per node.

use crate::model::{BinOp, CmpOp, ElemType, Span};
use lasso::{Rodeo, Spur};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name {
    pub sym: Spur,
    pub span: Span,
}

/// A parsed file.
pub struct File {
    pub items: Vec<Item>,
    /// The interner behind every [`Name`].
    pub names: Rodeo<Spur, NameHasher>,
    /// Every expression node.
    pub exprs: Vec<Expr>,
    /// The elements of every [`List`].
    pub lists: Vec<ExprId>,
    /// The kind annotations of [`ExprKind::Ext`] accesses.
    pub exts: Vec<Ext>,
}

/// `@name(args)` after an access, `A[i] @name(args)`: an access of an
/// extension kind (docs/language.md).
#[derive(Clone, Copy, Debug)]
pub struct Ext {
    pub kind: Name,
    pub args: List,
    /// From `@` to `)`.
    pub span: Span,
}

/// An expression of [`File::exprs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExprId(pub u32);

/// A list of expressions (arguments, subscripts): a range of [`File::lists`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct List {
    pub start: u32,
    pub len: u32,
}

/// The hasher of the interner and of name maps: names are short, and a tool
/// reading its user's own files needs no defence against crafted collisions.
pub type NameHasher = crate::hash::WordHash;

impl File {
    pub fn text(&self, name: Name) -> &str {
        self.names.resolve(&name.sym)
    }

    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    pub fn list(&self, l: List) -> &[ExprId] {
        &self.lists[l.start as usize..(l.start + l.len) as usize]
    }
}

/// A declaration or a statement. Blocks hold items too: declarations are only
/// allowed at the top level, but the parser accepts them anywhere and lowering
/// complains.
#[derive(Clone, Debug)]
pub enum Item {
    Param(Vec<ParamDecl>, Span),
    Assume(ExprId, Span),
    Array(ElemType, Vec<ArrayDecl>, Span),
    Stmt(Stmt),
    /// `proc name(formals) ... end` (extension): only at the top level.
    Proc(Proc),
}

/// A procedure definition (docs/language.md, *Procedures*).
#[derive(Clone, Debug)]
pub struct Proc {
    pub name: Name,
    pub formals: Vec<Formal>,
    pub body: Vec<Item>,
    /// From `proc` to the `)` of the parameter list.
    pub header: Span,
    pub span: Span,
}

/// One parameter of a procedure.
#[derive(Clone, Debug)]
pub struct Formal {
    pub name: Name,
    pub kind: FormalKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum FormalKind {
    /// `real X[lo..hi, ...]` (or `int`/`array` with brackets, or `real s`):
    /// an array passed by reference.
    Array(ElemType, Vec<(ExprId, ExprId)>),
    /// `int k`: an integer value, copied in.
    Int,
}

#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub name: Name,
    /// The default value, with the span of its literal. `None` inside when the
    /// literal overflowed (already reported).
    pub default: Option<(Option<i64>, Span)>,
}

#[derive(Clone, Debug)]
pub struct ArrayDecl {
    pub name: Name,
    pub dims: Vec<(ExprId, ExprId)>,
    pub span: Span,
}

/// A statement label as written: `S`, or a derived label `S.1.2`.
#[derive(Clone, Debug)]
pub struct Label {
    pub text: String,
    pub span: Span,
}

/// A bracketed name: `if [c] ...`, `while [w] ...`.
pub type CondName = Option<Name>;

#[derive(Clone, Debug)]
pub enum Stmt {
    For(For),
    While(While),
    If(If),
    Assign(Assign),
    Call(CallStmt),
    /// `call name(args);` (extension): a call of a procedure.
    ProcCall(ProcCall),
    /// `break;` (extension): leaves the innermost loop.
    Break(Span),
}

/// `L: call name(A, B[i, *], i + 1);`: array arguments are names or
/// sections (`*` for each dimension passed), the others affine values.
#[derive(Clone, Debug)]
pub struct ProcCall {
    pub prefix: Prefix,
    pub proc: Name,
    pub args: List,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct For {
    /// `None` when the header could not be read (already reported).
    pub counter: Option<Name>,
    pub lower: ExprId,
    pub upper: ExprId,
    pub step: Option<ExprId>,
    pub parallel: bool,
    pub body: Vec<Item>,
    /// From `for` to the end of the header (`do`).
    pub header: Span,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct While {
    pub name: CondName,
    pub cond: ExprId,
    pub body: Vec<Item>,
    pub header: Span,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Branch {
    pub name: CondName,
    pub cond: ExprId,
    pub body: Vec<Item>,
    /// The `if`/`elsif` header.
    pub header: Span,
}

#[derive(Clone, Debug)]
pub struct If {
    pub branches: Vec<Branch>,
    pub otherwise: Option<Vec<Item>>,
    pub span: Span,
}

/// What a statement starts with: `@copy` and a label, both optional.
#[derive(Clone, Debug, Default)]
pub struct Prefix {
    pub copy: bool,
    pub label: Option<Label>,
}

#[derive(Clone, Debug)]
pub struct Assign {
    pub prefix: Prefix,
    pub target: Name,
    pub subscripts: List,
    /// Span of `A[...]`.
    pub target_span: Span,
    /// `A[...] @name(args) = ...`: the target is an extension access.
    pub ext: Option<Ext>,
    pub op: Option<BinOp>,
    pub value: ExprId,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct CallStmt {
    pub prefix: Prefix,
    pub func: Name,
    pub args: List,
    pub span: Span,
}

/// The binary operators: arithmetic, comparisons, `and`, `or`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Infix {
    Bin(BinOp),
    Cmp(CmpOp),
    And,
    Or,
}

#[derive(Clone, Copy, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Height of the tree (a leaf is 1); bounded by the parser.
    pub height: u32,
}

#[derive(Clone, Copy, Debug)]
pub enum ExprKind {
    /// An integer literal, already negated when written `-5`. `None` when it
    /// overflowed (already reported).
    Int(Option<i64>),
    Name(Name),
    /// `A[i, j]` or `A[i][j]`, subscripts flattened.
    Index(Name, List),
    /// An `Index` followed by `@name(args)`: the index node and the
    /// annotation's position in [`File::exts`].
    Ext(ExprId, u32),
    Call(Name, List),
    /// `...`: an unknown value or an unknown condition.
    Unknown,
    Neg(ExprId),
    /// A binary operator with its two operands.
    Infix(Infix, ExprId, ExprId),
    Not(ExprId),
    /// `*` as a subscript of a call argument: the dimension passed whole.
    Star,
    /// Something the parser could not read (already reported).
    Error,
}
