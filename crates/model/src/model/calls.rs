//! The record of procedures and call sites a front end keeps beside the
//! [`Program`] it built (docs/language.md, *Procedures*). The program
//! itself holds no procedure: every call is inlined into it, and this
//! record says which of its statements and conditions came from which call,
//! so that later layers (summaries, σ at call granularity, the language
//! server) can map results back.

use super::{Affine, ArrayId, ElemType, Expr, ParamId, Program, Span};
use std::ops::Range;

/// Every procedure of a file and every call the program inlined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// In declaration order.
    pub procs: Vec<Procedure>,
    /// Every call site the program holds, outer calls before the calls
    /// inlined inside them (textual order of the inlined program).
    pub sites: Vec<CallSite>,
}

/// A procedure, lowered on its own: a [`Program`] whose arrays are the
/// array parameters and whose parameters are the file's parameters
/// followed by the integer parameters (calls inside are inlined).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Procedure {
    pub name: String,
    pub formals: Vec<Formal>,
    pub program: Program,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formal {
    pub name: String,
    pub kind: FormalKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormalKind {
    /// An array by reference: its id in [`Procedure::program`].
    Array(ArrayId, ElemType),
    /// An integer value: its parameter in [`Procedure::program`].
    Int(ParamId),
}

/// One call statement of the inlined program (one per place it was
/// inlined: a call inside a procedure appears once per call of that
/// procedure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The call's label path: `L`, or `L.M` for call `M` inside the
    /// procedure called at `L`. Inlined statements are labelled
    /// `<label>.<statement's label>`.
    pub label: String,
    /// Index into [`Calls::procs`].
    pub proc: usize,
    /// The enclosing call site, for a call inside a procedure.
    pub parent: Option<usize>,
    /// How many loops of the program surround the call: a call instance is
    /// named by the first `depth` entries of its statements' iteration
    /// vectors.
    pub depth: usize,
    /// The statements (`StmtId`s) and conditions (`CondId`s) inlined.
    pub stmts: Range<u32>,
    pub conds: Range<u32>,
    /// The loops' counters (`CounterId`s) inlined.
    pub counters: Range<u32>,
    /// One per formal, in the program's terms.
    pub args: Vec<Actual>,
    pub span: Span,
}

/// What a formal is bound to at a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actual {
    /// The formal's cell `(x_1, ..., x_r)` is the array's cell whose
    /// subscript `d` is `fixed[d]` when given, else `x_e + offset[e]` for
    /// the `e`-th dimension passed (`*`, or every dimension of a whole
    /// array).
    Array {
        array: ArrayId,
        fixed: Vec<Option<Expr>>,
        offsets: Vec<Expr>,
    },
    /// An integer value (affine in the program's counters and parameters).
    Int(Expr),
}

impl Actual {
    /// The affine forms of the fixed subscripts and offsets, or `None` when
    /// one is not affine.
    pub fn affine_parts(&self) -> Option<(Vec<Option<Affine>>, Vec<Affine>)> {
        match self {
            Actual::Array { fixed, offsets, .. } => {
                let f = fixed
                    .iter()
                    .map(|e| match e {
                        Some(e) => Affine::from_expr(e).map(Some),
                        None => Some(None),
                    })
                    .collect::<Option<Vec<_>>>()?;
                let o = offsets
                    .iter()
                    .map(Affine::from_expr)
                    .collect::<Option<Vec<_>>>()?;
                Some((f, o))
            }
            Actual::Int(_) => None,
        }
    }
}

impl Calls {
    /// The outermost call site whose inlined statements hold `stmt`.
    pub fn site_of_stmt(&self, stmt: u32) -> Option<usize> {
        self.sites
            .iter()
            .position(|s| s.parent.is_none() && s.stmts.contains(&stmt))
    }

    /// The outermost call site whose inlined loops hold the counter.
    pub fn site_of_counter(&self, counter: u32) -> Option<usize> {
        self.sites
            .iter()
            .position(|s| s.parent.is_none() && s.counters.contains(&counter))
    }

    /// The outermost call site whose inlined conditions hold `cond`.
    pub fn site_of_cond(&self, cond: u32) -> Option<usize> {
        self.sites
            .iter()
            .position(|s| s.parent.is_none() && s.conds.contains(&cond))
    }
}
