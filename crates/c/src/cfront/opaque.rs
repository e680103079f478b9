//! Values of a C file that emitted C cannot keep (docs/c.md, "C output"):
//! the front end read them as `...` (a name C does not declare here, a
//! string, `sizeof`), printed back as `unknown()`, or a call that is a
//! barrier (a function the file does not define and that is not known to
//! be pure: `effects`): the analysis keeps it in order, but it reads and
//! writes the C program's arrays by their names, where a transformation
//! may have moved their values. `unknown()` as written is the front end's
//! spelling of `...` and is kept. The statements the front end adds for a
//! barrier are never printed (`cprint::effects`) and are not counted.

use super::cvalue;
use super::scan::{children, function_name};
use crate::model::*;
use std::collections::HashSet;

/// A value the emitted C cannot keep: where, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opaque {
    pub span: Span,
    pub what: String,
}

/// The functions `text` (C, as lowered: preprocessed when it was) defines.
pub fn defined_functions(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    if let Some(super::tree::Parsed { tree, .. }) = super::tree::parse(text) {
        for n in children(tree.root_node()) {
            if n.kind() == "function_definition" {
                out.insert(function_name(text, n).to_string());
            }
        }
    }
    out
}

/// The opaque values of `p`, lowered from the C `text`, in source order.
pub fn find(p: &Program, text: &str) -> Vec<Opaque> {
    let mut defined = defined_functions(text);
    // `#pragma arrayflow pure f, g` declares calls to them pure.
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["#pragma", "arrayflow", "pure", names @ ..] = words.as_slice() {
            let names = names.iter().flat_map(|n| n.split(','));
            defined.extend(names.filter(|n| !n.is_empty()).map(str::to_string));
        }
    }
    let mut out = Vec::new();
    let mut values: Vec<&Expr> = Vec::new();
    for s in p.stmts() {
        if arrayflow_cprint::effects::is_effect_stmt(p, s) {
            continue;
        }
        match &s.kind {
            StmtKind::Assign { target, value, .. } => {
                values.extend(target.subscripts.iter().map(|x| &x.expr));
                values.push(value);
            }
            StmtKind::Call { func, args } => {
                // `return(e)` is the front end's kept `return`.
                if func != "return" {
                    call(func, s.span, &defined, &mut out);
                }
                values.extend(args);
            }
        }
    }
    for c in p.conditions() {
        cond(&c.cond, &mut |e| values.push(e));
    }
    for e in values {
        value(e, text, &defined, &mut out);
    }
    out.sort_by_key(|o| (o.span.start, o.span.end));
    out.dedup();
    out
}

fn cond<'p>(c: &'p Cond, f: &mut impl FnMut(&'p Expr)) {
    match c {
        Cond::Cmp(_, l, r) => {
            f(l);
            f(r);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond(a, f);
            cond(b, f);
        }
        Cond::Not(a) => cond(a, f),
        // Only `unknown()` as written is the unknown condition.
        Cond::Unknown => {}
    }
}

fn value(e: &Expr, text: &str, defined: &HashSet<String>, out: &mut Vec<Opaque>) {
    match &e.kind {
        ExprKind::Unknown => {
            let written = text
                .get(e.span.start as usize..e.span.end as usize)
                .unwrap_or("");
            let spelled: String = written.split_whitespace().collect();
            if spelled != "unknown()" {
                out.push(Opaque {
                    span: e.span,
                    what: "a value the analysis reads as `...` (printed `unknown()`)".into(),
                });
            }
        }
        ExprKind::Call(name, args) => {
            call(name, e.span, defined, out);
            args.iter().for_each(|a| value(a, text, defined, out));
        }
        ExprKind::Access(a) => {
            (a.subscripts.iter()).for_each(|s| value(&s.expr, text, defined, out))
        }
        ExprKind::Neg(x) => value(x, text, defined, out),
        ExprKind::Binary(_, l, r) => {
            value(l, text, defined, out);
            value(r, text, defined, out);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) => {}
    }
}

/// A call the printer cannot print as the C it came from, or whose purity
/// nothing in the file shows.
fn call(name: &str, at: Span, defined: &HashSet<String>, out: &mut Vec<Opaque>) {
    let what = match name {
        _ if cvalue::literal_spelling(name).is_some()
            || cvalue::cast_type(name).is_some()
            || cvalue::operator(name).is_some()
            || name == "__select"
            || cvalue::is_pure(name)
            || defined.contains(name) =>
        {
            return
        }
        "__any" | "__init" => {
            "an access over-approximated as any element (W0904, W0905)".to_string()
        }
        "__call" => "a call through a function pointer".to_string(),
        _ => format!(
            "a call to `{name}`, which the file does not define and is not known to be pure: \
             the analysis orders it as a barrier, but it may read and write arrays by their C names, \
             whose values a transformation may have moved"
        ),
    };
    out.push(Opaque { span: at, what });
}
