//! Reading an emitted program back: each transformation prints its program
//! and compiles the text again, so that what is checked (by `equiv`) is
//! what the user gets. The compiled form takes 32 to 53 bytes per byte of
//! text (the syntax tree and the model live at once), so a large output is
//! refused against the memory budget before it is parsed, and the live
//! bytes are polled after.

use crate::budget::{self, Exceeded};
use crate::model::{Derived, Expr, ExprKind, ParamId, Program};
use std::collections::HashMap;
use std::fmt;

/// Bytes compiling one byte of emitted text holds at its peak, rounded up
/// from profiles of programs of 4k–100k loops: about 32 for privatized
/// ones, 44–53 for expanded ones (shorter lines, more nodes per byte).
const BYTES_PER_TEXT_BYTE: u64 = 56;

/// Why a transformation gives no program: the memory budget (E0304), or
/// another reason, said in words.
#[derive(Debug)]
pub enum Refusal {
    Memory(Exceeded),
    Other(String),
}

impl Refusal {
    /// The diagnostic code the command line shows with it, if any.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Refusal::Memory(_) => Some("E0304"),
            Refusal::Other(_) => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Memory(e) => e.fmt(f),
            Refusal::Other(s) => f.write_str(s),
        }
    }
}

impl From<String> for Refusal {
    fn from(s: String) -> Refusal {
        Refusal::Other(s)
    }
}

impl From<&str> for Refusal {
    fn from(s: &str) -> Refusal {
        Refusal::Other(s.to_string())
    }
}

/// For callers that report every refusal as words.
impl From<Refusal> for String {
    fn from(r: Refusal) -> String {
        r.to_string()
    }
}

impl From<Exceeded> for Refusal {
    fn from(e: Exceeded) -> Refusal {
        Refusal::Memory(e)
    }
}

/// Fails when the live bytes are over the budget: called between the
/// steps of a transformation, which allocate in bulk.
pub fn poll(what: &str) -> Result<(), Refusal> {
    budget::check(budget::limit(), || what.to_string()).map_err(Refusal::Memory)
}

/// `text`, an emitted `.loop` program made from `from`, compiled; `what`
/// names it in the errors. `.loop` text has no derived parameters, so
/// those of `from` are given back by name.
pub fn compile_from(text: &str, what: &str, from: &Program) -> Result<Program, Refusal> {
    let mut p = compile(text, what)?;
    keep_derived(&mut p, from);
    Ok(p)
}

/// Gives the parameters of `p` that `from` derives (`Param::derived`) what
/// they stand for, read over `p`'s parameters.
pub fn keep_derived(p: &mut Program, from: &Program) {
    let by_name: HashMap<String, ParamId> = (p.params.iter().enumerate())
        .map(|(k, q)| (q.name.clone(), ParamId(k as u32)))
        .collect();
    let ids: HashMap<ParamId, ParamId> = (from.params.iter().enumerate())
        .filter_map(|(k, q)| Some((ParamId(k as u32), *by_name.get(&q.name)?)))
        .collect();
    for q in &from.params {
        let (Some(d), Some(&to)) = (&q.derived, by_name.get(&q.name)) else {
            continue;
        };
        if let Some(expr) = over(&d.expr, &ids) {
            let text = d.text.clone();
            p.params[to.index()].derived = Some(Derived { expr, text });
        }
    }
}

/// A derived parameter's expression with its parameters renumbered;
/// `None` when one is missing.
fn over(e: &Expr, ids: &HashMap<ParamId, ParamId>) -> Option<Expr> {
    let kind = match &e.kind {
        ExprKind::Param(q) => ExprKind::Param(*ids.get(q)?),
        ExprKind::Neg(x) => ExprKind::Neg(Box::new(over(x, ids)?)),
        ExprKind::Binary(op, l, r) => {
            ExprKind::Binary(*op, Box::new(over(l, ids)?), Box::new(over(r, ids)?))
        }
        ExprKind::Call(f, args) => {
            let args = args.iter().map(|a| over(a, ids)).collect::<Option<_>>()?;
            ExprKind::Call(f.clone(), args)
        }
        k => k.clone(),
    };
    Some(Expr::new(kind, e.span))
}

/// `text`, an emitted `.loop` program, compiled; `what` names it in the
/// errors. A text the compiler rejects is an internal error.
pub fn compile(text: &str, what: &str) -> Result<Program, Refusal> {
    let bytes = (text.len() as u64).saturating_mul(BYTES_PER_TEXT_BYTE);
    budget::reserve(bytes, budget::limit(), || {
        format!("reading back {what} ({} bytes of text)", text.len())
    })?;
    let (p, diags) = crate::lower::compile_errors(text, crate::diagnostics::FileId(0));
    match p {
        Some(p) if !diags.iter().any(|d| d.is_error()) => {
            poll(what)?;
            Ok(p)
        }
        _ => {
            let mut files = crate::diagnostics::SourceFiles::new();
            files.add(format!("<{what}>"), text.to_string());
            Err(Refusal::Other(format!(
                "internal error: {what} does not check:\n{}{text}",
                files.render_all(&diags)
            )))
        }
    }
}
