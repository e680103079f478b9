//! The syntax tree: what was written, with a span on every node. Names are
//! interned ([`Name::sym`] resolves through [`File::names`]); nothing is
//! resolved or checked yet (that is `lower`'s job).
//!
//! Values and conditions share one expression type, [`Expr`], because a
//! parenthesised `(a < b)` and `(a + b)` cannot be told apart until after the
//! `)`. Lowering checks that each is used where it belongs.

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
    pub names: Rodeo,
}

impl File {
    pub fn text(&self, name: Name) -> &str {
        self.names.resolve(&name.sym)
    }
}

/// A declaration or a statement. Blocks hold items too: declarations are only
/// allowed at the top level, but the parser accepts them anywhere and lowering
/// complains.
#[derive(Clone, Debug)]
pub enum Item {
    Param(Vec<ParamDecl>, Span),
    Assume(Expr, Span),
    Array(ElemType, Vec<ArrayDecl>, Span),
    Stmt(Stmt),
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
    pub dims: Vec<(Expr, Expr)>,
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
}

#[derive(Clone, Debug)]
pub struct For {
    /// `None` when the header could not be read (already reported).
    pub counter: Option<Name>,
    pub lower: Expr,
    pub upper: Expr,
    pub step: Option<Expr>,
    pub parallel: bool,
    pub body: Vec<Item>,
    /// From `for` to the end of the header (`do`).
    pub header: Span,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct While {
    pub name: CondName,
    pub cond: Expr,
    pub body: Vec<Item>,
    pub header: Span,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Branch {
    pub name: CondName,
    pub cond: Expr,
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
    pub subscripts: Vec<Expr>,
    /// Span of `A[...]`.
    pub target_span: Span,
    pub op: Option<BinOp>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct CallStmt {
    pub prefix: Prefix,
    pub func: Name,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Height of the tree (a leaf is 1); bounded by the parser.
    pub height: u32,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal, already negated when written `-5`. `None` when it
    /// overflowed (already reported).
    Int(Option<i64>),
    Name(Name),
    /// `A[i, j]` or `A[i][j]`, subscripts flattened.
    Index(Name, Vec<Expr>),
    Call(Name, Vec<Expr>),
    /// `...`: an unknown value or an unknown condition.
    Unknown,
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// Something the parser could not read (already reported).
    Error,
}

impl Expr {
    pub fn leaf(kind: ExprKind, span: Span) -> Expr {
        Expr {
            kind,
            span,
            height: 1,
        }
    }

    pub fn error(span: Span) -> Expr {
        Expr::leaf(ExprKind::Error, span)
    }

    /// A node over its children; the height follows from theirs.
    pub fn node(kind: ExprKind, span: Span) -> Expr {
        let height = 1 + match &kind {
            ExprKind::Index(_, xs) | ExprKind::Call(_, xs) => {
                xs.iter().map(|x| x.height).max().unwrap_or(0)
            }
            ExprKind::Neg(x) | ExprKind::Not(x) => x.height,
            ExprKind::Binary(_, l, r)
            | ExprKind::Cmp(_, l, r)
            | ExprKind::And(l, r)
            | ExprKind::Or(l, r) => l.height.max(r.height),
            _ => 0,
        };
        Expr { kind, span, height }
    }
}
