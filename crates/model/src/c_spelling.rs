//! How an extension kind is written in C (docs/rules.md §6).
//!
//! The C front end knows no extension syntax of its own: it offers each
//! [`CSpelling`] of the run's kinds every call statement
//! (`memset(&A[i][0], 0, n * sizeof(double));`) and the end of every block,
//! inside a loop, that declares an array (`{ double T[5]; ... }`), with the
//! arguments already read into model terms. A spelling answers with model
//! statements, usually ones whose accesses carry its `@name`, which the
//! front end builds in place of the call (or at the block's end); the
//! kind's lowering then gives them their meaning, as for `.loop` text.

use crate::model::{Access, ArrayId, Expr, Range, Span, Subscript};

/// What a spelling makes of a call or a block's end: `None` when it is not
/// this kind's, `Some(Err(why))` when it is but cannot be modelled (the
/// front end warns with `why` and treats the call as any other call).
pub type Spelled = Option<Result<Vec<CStmt>, String>>;

/// How one extension kind is written in C.
pub trait CSpelling: Sync {
    /// The kind's name in messages.
    fn name(&self) -> &'static str;
    /// A call statement `f(args);`, as the statements that replace it.
    fn call(&self, call: &CCall<'_>) -> Spelled {
        let _ = call;
        None
    }
    /// The end of the block that declared `local`: statements that run
    /// there (after the block's last statement, on every trip of the loops
    /// around it).
    fn block_end(&self, local: &CLocal<'_>) -> Spelled {
        let _ = local;
        None
    }
}

/// A call statement with its arguments read.
pub struct CCall<'a> {
    /// The function's name as written.
    pub name: &'a str,
    pub args: &'a [CArg],
    /// The whole call expression.
    pub span: Span,
}

/// One argument of a call, read as the front end understands it.
#[derive(Clone, Debug)]
pub enum CArg {
    /// A pointer into an array: `&A[i][j]`, `A[i] + 2`, `A`, `*A + k`:
    /// the cell it points at, every subscript given (a row pointer `A[i]`
    /// points at `A[i][0]`), with the C type of the array's elements as
    /// written (`double`, or a typedef's name).
    Pointer {
        access: Access,
        elem: String,
        span: Span,
    },
    /// A size in bytes: `count` objects of C type `unit` (`n * sizeof(double)`,
    /// `sizeof(A[0])`, `sizeof A`: counted in elements of `A`).
    Size {
        count: Subscript,
        unit: String,
        span: Span,
    },
    /// Any other argument: its value.
    Value(Expr),
}

impl CArg {
    pub fn span(&self) -> Span {
        match self {
            CArg::Pointer { span, .. } | CArg::Size { span, .. } => *span,
            CArg::Value(e) => e.span,
        }
    }
}

/// An array declared in a block inside a loop: its lifetime ends with the
/// block, on every trip.
pub struct CLocal<'a> {
    /// Its name in C.
    pub name: &'a str,
    pub array: ArrayId,
    /// Its declared ranges in the model (C's `[n]` is `0..n-1`).
    pub dims: &'a [Range],
    /// The C type of its elements.
    pub elem: &'a str,
    /// The declaration.
    pub span: Span,
}

/// A statement to build: `target = value` (an `Expr::Unknown` value is
/// `...`).
#[derive(Clone, Debug)]
pub struct CStmt {
    pub target: Access,
    pub value: Expr,
}
