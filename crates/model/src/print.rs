//! The canonical printer: [`Program`] back to `.loop` text.
//!
//! Declarations first (parameters, assumptions, arrays, one per line), a blank
//! line, then the body with a two-space indent. Binary operators get a space
//! on each side; parentheses appear only where precedence or left
//! associativity needs them. Generated labels and names are omitted, written
//! ones printed, so parsing the output gives back an equal program.
//!
//! Two forms print specially so that this holds: a negative integer `Int(-5)`
//! prints as `-5` (the parser reads `-5` as one literal), and a negation of a
//! literal `Neg(Int(5))` prints as `-(5)`.

use crate::model::*;
use std::fmt::Write;

/// The whole program as canonical text, ending with a newline.
pub fn program(p: &Program) -> String {
    let mut out = declarations(p);
    if !out.is_empty() && !p.body.is_empty() {
        out.push('\n');
    }
    nodes(p, &p.body, 0, &mut out);
    out
}

/// The declarations, one per line.
pub fn declarations(p: &Program) -> String {
    let mut out = String::new();
    for q in &p.params {
        match (q.default, &q.derived) {
            (Some(v), Some(d)) if d.text != q.name => {
                let _ = writeln!(out, "param {} = {v}; // {}", q.name, d.text);
            }
            (Some(v), _) => {
                let _ = writeln!(out, "param {} = {v};", q.name);
            }
            (None, _) => {
                let _ = writeln!(out, "param {};", q.name);
            }
        }
    }
    for a in &p.assumptions {
        let _ = writeln!(out, "assume {};", cond(p, a));
    }
    for k in 0..p.arrays.len() {
        out.push_str(&array_decl(p, ArrayId(k as u32)));
        out.push_str(";\n");
    }
    out
}

/// `real A[1..N, 0..M]` (no `;`).
pub fn array_decl(p: &Program, id: ArrayId) -> String {
    let a = p.array_decl(id);
    let mut out = String::new();
    let kw = match a.elem {
        ElemType::Real => "real",
        ElemType::Int => "int",
        ElemType::Array => "array",
    };
    out.push_str(kw);
    out.push(' ');
    out.push_str(&a.name);
    if !a.dims.is_empty() {
        out.push('[');
        for (k, r) in a.dims.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}..{}", expr(p, &r.lo.expr), expr(p, &r.hi.expr));
        }
        out.push(']');
    }
    out
}

/// Statements at an indentation depth (a procedure's body: 1).
pub fn body(p: &Program, body: &[Node], depth: usize) -> String {
    let mut out = String::new();
    nodes(p, body, depth, &mut out);
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn named(c: &Condition) -> String {
    if c.generated {
        String::new()
    } else {
        format!("[{}] ", c.name)
    }
}

fn nodes(p: &Program, body: &[Node], depth: usize, out: &mut String) {
    for n in body {
        indent(out, depth);
        match n {
            Node::Stmt(s) => stmt(p, s, out),
            Node::For(f) => {
                let c = p.counter_decl(f.counter);
                let _ = write!(
                    out,
                    "for {} = {} to {}",
                    c.name,
                    expr(p, &f.lower.expr),
                    expr(p, &f.upper.expr)
                );
                if f.step != 1 {
                    let _ = write!(out, " step {}", f.step);
                }
                out.push_str(if f.parallel { " doall\n" } else { " do\n" });
                nodes(p, &f.body, depth + 1, out);
                indent(out, depth);
                out.push_str("end\n");
            }
            Node::While(w) => {
                let _ = writeln!(out, "while {}{} do", named(&w.cond), cond(p, &w.cond.cond));
                nodes(p, &w.body, depth + 1, out);
                indent(out, depth);
                out.push_str("end\n");
            }
            Node::If(i) => {
                for (k, (c, b)) in i.branches.iter().enumerate() {
                    if k > 0 {
                        indent(out, depth);
                    }
                    let kw = if k == 0 { "if" } else { "elsif" };
                    let _ = writeln!(out, "{kw} {}{} then", named(c), cond(p, &c.cond));
                    nodes(p, b, depth + 1, out);
                }
                if let Some(e) = &i.otherwise {
                    indent(out, depth);
                    out.push_str("else\n");
                    nodes(p, e, depth + 1, out);
                }
                indent(out, depth);
                out.push_str("end\n");
            }
        }
    }
}

fn stmt(p: &Program, s: &Stmt, out: &mut String) {
    if s.copy {
        out.push_str("@copy ");
    }
    if !s.label_generated {
        let _ = write!(out, "{}: ", s.label);
    }
    match &s.kind {
        StmtKind::Assign { target, op, value } => {
            let op = match op {
                None => "=",
                Some(BinOp::Add) => "+=",
                Some(BinOp::Sub) => "-=",
                Some(BinOp::Mul) => "*=",
                Some(BinOp::Div) => "/=",
                Some(BinOp::Rem) => "%=",
            };
            let _ = writeln!(out, "{} {op} {};", access(p, target), expr(p, value));
        }
        StmtKind::Call { func, args } => {
            let _ = writeln!(out, "{func}({});", list(p, args));
        }
    }
}

fn list(p: &Program, xs: &[Expr]) -> String {
    xs.iter().map(|x| expr(p, x)).collect::<Vec<_>>().join(", ")
}

/// An access as written: `A[i, j]`, or `x` for a scalar.
pub fn access(p: &Program, a: &Access) -> String {
    let name = &p.array_decl(a.array).name;
    if a.subscripts.is_empty() {
        return name.clone();
    }
    let subs: Vec<String> = a.subscripts.iter().map(|s| expr(p, &s.expr)).collect();
    match &a.ext {
        None => format!("{name}[{}]", subs.join(", ")),
        Some(x) => {
            let args: Vec<String> = x.args.iter().map(|s| expr(p, &s.expr)).collect();
            format!(
                "{name}[{}] @{}({})",
                subs.join(", "),
                x.name,
                args.join(", ")
            )
        }
    }
}

/// Binding strength: sums 1, products 2, negation (and negative literals) 3,
/// atoms 4.
fn prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => 1,
        ExprKind::Binary(..) => 2,
        ExprKind::Neg(_) => 3,
        ExprKind::Int(n) if *n < 0 => 3,
        _ => 4,
    }
}

/// An expression as canonical text.
pub fn expr(p: &Program, e: &Expr) -> String {
    let mut out = String::new();
    write_expr(p, e, &mut out);
    out
}

fn write_expr(p: &Program, e: &Expr, out: &mut String) {
    match &e.kind {
        ExprKind::Int(n) => {
            let _ = write!(out, "{n}");
        }
        ExprKind::Param(q) => out.push_str(&p.params[q.index()].name),
        ExprKind::Counter(c) => out.push_str(&p.counter_decl(*c).name),
        ExprKind::Access(a) => out.push_str(&access(p, a)),
        // `*`: a dimension passed whole to a procedure (`fmt` of a call).
        ExprKind::Call(f, args) if f == "*" && args.is_empty() => out.push('*'),
        ExprKind::Call(f, args) => {
            let _ = write!(out, "{f}({})", list(p, args));
        }
        ExprKind::Unknown => out.push_str("..."),
        ExprKind::Neg(x) => {
            out.push('-');
            let wrap = matches!(x.kind, ExprKind::Int(_)) || prec(x) < 4;
            paren(p, x, wrap, out);
        }
        ExprKind::Binary(op, l, r) => {
            let me = prec(e);
            paren(p, l, prec(l) < me, out);
            out.push_str(match op {
                BinOp::Add => " + ",
                BinOp::Sub => " - ",
                BinOp::Mul => " * ",
                BinOp::Div => " / ",
                BinOp::Rem => " % ",
            });
            paren(p, r, prec(r) <= me, out);
        }
    }
}

fn paren(p: &Program, e: &Expr, wrap: bool, out: &mut String) {
    wrapped(out, wrap, |out| write_expr(p, e, out));
}

/// Writes `inner`, in parentheses when `wrap`.
fn wrapped(out: &mut String, wrap: bool, inner: impl FnOnce(&mut String)) {
    if wrap {
        out.push('(');
    }
    inner(out);
    if wrap {
        out.push(')');
    }
}

/// Binding strength: `or` 1, `and` 2, `not` 3, comparisons and `...` 4.
fn cprec(c: &Cond) -> u8 {
    match c {
        Cond::Or(..) => 1,
        Cond::And(..) => 2,
        Cond::Not(_) => 3,
        Cond::Cmp(..) | Cond::Unknown => 4,
    }
}

/// A condition as canonical text.
pub fn cond(p: &Program, c: &Cond) -> String {
    let mut out = String::new();
    write_cond(p, c, &mut out);
    out
}

fn write_cond(p: &Program, c: &Cond, out: &mut String) {
    match c {
        Cond::Unknown => out.push_str("..."),
        Cond::Cmp(op, l, r) => {
            let _ = write!(out, "{} {} {}", expr(p, l), cmp_op(*op), expr(p, r));
        }
        Cond::Not(a) => {
            out.push_str("not ");
            cparen(p, a, cprec(a) < 3, out);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            let me = cprec(c);
            cparen(p, a, cprec(a) < me, out);
            out.push_str(if me == 1 { " or " } else { " and " });
            cparen(p, b, cprec(b) <= me, out);
        }
    }
}

/// A comparison operator, spelled the same in `.loop` and C.
pub fn cmp_op(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn cparen(p: &Program, c: &Cond, wrap: bool, out: &mut String) {
    wrapped(out, wrap, |out| write_cond(p, c, out));
}
