//! Constant folding of the integer expressions the affine forms cannot
//! take: `LEN/2`, `LEN*LEN`, `(N + 1)/2`, `N % 4`, `1 << K` where every name
//! is a macro or `const` with a constant value (docs/c.md, *Folding*).
//! An expression affine in the parameters is left alone, so `LEN*2`,
//! `2*LEN` and `LEN - 1` still follow `--param LEN=...`; one that is not
//! affine but constant becomes its value, computed as C computes it
//! (`/` and `%` truncate toward zero), and no longer follows `--param`
//! (the front end says so). Parts of a larger expression fold on their
//! own: `i + LEN/2` is `i + 16000`.

use super::{Ctx, W_FOLDED};
use crate::model::*;
use std::collections::HashMap;

impl Ctx<'_> {
    /// `e` folded; a warning when a folded part read a macro or `const`,
    /// whose value it keeps whatever `--param` says.
    pub(super) fn folded(&mut self, e: Expr) -> Expr {
        if Affine::from_expr(&e).is_some() {
            return e;
        }
        let mut values: HashMap<ParamId, (i64, String)> = HashMap::new();
        for ((name, default), &p) in &self.params_by_key {
            let Some(k) = *default else { continue };
            let is_macro = (self.defines.get(name.as_str()))
                .is_some_and(|d| d.body.as_ref().and_then(|b| b.constant()) == Some(k));
            let is_const = (self.vars.iter()).any(|v| v.name == name && v.is_const);
            if is_macro || is_const {
                values.insert(p, (k, name.clone()));
            }
        }
        let f = fold(&e, &|p| values.get(&p).map(|v| v.0));
        if !f.used.is_empty() {
            let names: Vec<String> = (f.used.iter())
                .filter_map(|p| values.get(p))
                .map(|(k, n)| format!("`{n}` = {k}"))
                .collect();
            for at in f.parts {
                let text = self.src.get(at.start as usize..at.end as usize);
                self.warn(
                    W_FOLDED,
                    format!(
                        "`{}` is not affine in the parameters: it is folded at {}, and keeps that value whatever `--param` gives",
                        balanced(text.unwrap_or("this expression").trim()),
                        names.join(", ")
                    ),
                    at,
                    "folded to a constant",
                    "a loop bound, subscript or size folded so stays as it is when `--param` sets the macro (docs/c.md, Folding)",
                );
            }
        }
        f.expr
    }
}

/// An expression after folding, the parameters whose values went into
/// a folded part (empty when nothing was folded, or only literals), and
/// the parts folded that read one.
#[derive(Debug, PartialEq, Eq)]
pub struct Folded {
    pub expr: Expr,
    pub used: Vec<ParamId>,
    pub parts: Vec<Span>,
}

/// `text` with the parentheses it closes and does not open opened (a
/// macro body's part starts inside them).
fn balanced(text: &str) -> String {
    let open = text.matches('(').count();
    let close = text.matches(')').count();
    format!("{}{text}", "(".repeat(close.saturating_sub(open)))
}

/// Folds `e`; `constant` gives the value of a parameter that stands for a
/// macro or `const` (and `None` for any other parameter).
pub fn fold(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>) -> Folded {
    let mut f = Folded {
        expr: Expr::new(ExprKind::Unknown, e.span),
        used: Vec::new(),
        parts: Vec::new(),
    };
    f.expr = go(e, constant, &mut f);
    f.used.sort_by_key(|p| p.0);
    f.used.dedup();
    f
}

fn go(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>, used: &mut Folded) -> Expr {
    if Affine::from_expr(e).is_some() {
        return e.clone();
    }
    if let Some(v) = value(e, constant) {
        let before = used.used.len();
        params(e, &mut used.used);
        if used.used.len() > before {
            used.parts.push(e.span);
        }
        return Expr::new(ExprKind::Int(v), e.span);
    }
    // Constant, but C cannot compute it (overflow, a division by zero):
    // no part of it folds either.
    if leaves(e, constant, &mut false).is_some() {
        return e.clone();
    }
    let kind = match &e.kind {
        ExprKind::Neg(x) => ExprKind::Neg(Box::new(go(x, constant, used))),
        // `i*N`: the constant factor at its value makes it affine.
        ExprKind::Binary(BinOp::Mul, l, r) => {
            let (mut l, mut r) = (go(l, constant, used), go(r, constant, used));
            for side in [&mut l, &mut r] {
                if let (None, Some(v)) = (side_constant(side), value(side, constant)) {
                    params(side, &mut used.used);
                    used.parts.push(side.span);
                    *side = Expr::new(ExprKind::Int(v), side.span);
                    break;
                }
            }
            ExprKind::Binary(BinOp::Mul, Box::new(l), Box::new(r))
        }
        ExprKind::Binary(op, l, r) => ExprKind::Binary(
            *op,
            Box::new(go(l, constant, used)),
            Box::new(go(r, constant, used)),
        ),
        ExprKind::Call(f, args) if shift_or_bits(f) => ExprKind::Call(
            f.clone(),
            args.iter().map(|a| go(a, constant, used)).collect(),
        ),
        _ => return e.clone(),
    };
    Expr::new(kind, e.span)
}

/// The value of a literal, the only constant `go` leaves unfolded.
fn side_constant(e: &Expr) -> Option<i64> {
    match e.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    }
}

/// The operator functions of C's integer operators that fold.
fn shift_or_bits(f: &str) -> bool {
    matches!(
        f,
        "__shl" | "__shr" | "__bitand" | "__bitor" | "__bitxor" | "__bitnot"
    )
}

/// The value of `e` when every leaf is a literal or a constant parameter,
/// as C computes it; `None` on overflow, division by zero, a shift C
/// leaves undefined (negative, or by 64 or more), or any other leaf. C
/// computes in `int` when every operand fits one (`#define LEN 32000`), so
/// then every step must fit 32 bits; a wider operand (`40000000000L`)
/// makes it `long`.
pub fn value(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>) -> Option<i64> {
    let mut wide = false;
    leaves(e, constant, &mut wide)?;
    eval(e, constant, wide)
}

/// Checks that every leaf has a value; `wide` when one does not fit `int`.
fn leaves(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>, wide: &mut bool) -> Option<()> {
    let mut leaf = |v: i64| *wide |= i32::try_from(v).is_err();
    match &e.kind {
        ExprKind::Int(k) => leaf(*k),
        ExprKind::Param(p) => leaf(constant(*p)?),
        ExprKind::Neg(x) => leaves(x, constant, wide)?,
        ExprKind::Binary(_, l, r) => {
            leaves(l, constant, wide)?;
            leaves(r, constant, wide)?;
        }
        ExprKind::Call(_, args) => {
            for a in args {
                leaves(a, constant, wide)?;
            }
        }
        ExprKind::Counter(_) | ExprKind::Access(_) | ExprKind::Unknown => return None,
    }
    Some(())
}

fn eval(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>, wide: bool) -> Option<i64> {
    let got = eval_wide(e, constant, wide)?;
    (wide || i32::try_from(got).is_ok()).then_some(got)
}

fn eval_wide(e: &Expr, constant: &dyn Fn(ParamId) -> Option<i64>, wide: bool) -> Option<i64> {
    let v = |x: &Expr| eval(x, constant, wide);
    let bits = if wide { 64 } else { 32 };
    match &e.kind {
        ExprKind::Int(k) => Some(*k),
        ExprKind::Param(p) => constant(*p),
        ExprKind::Neg(x) => v(x)?.checked_neg(),
        ExprKind::Binary(op, l, r) => super::mini::checked(*op, v(l)?, v(r)?),
        ExprKind::Call(f, args) => match (f.as_str(), args.as_slice()) {
            ("__bitnot", [x]) => Some(!v(x)?),
            (f, [l, r]) => {
                let (l, r) = (v(l)?, v(r)?);
                match f {
                    "__shl" => {
                        let shifted =
                            l.checked_shl(u32::try_from(r).ok().filter(|&r| r < bits)?)?;
                        (l >= 0 && shifted >> r == l).then_some(shifted)
                    }
                    "__shr" => (l >= 0 && (0..bits as i64).contains(&r)).then(|| l >> r),
                    "__bitand" => Some(l & r),
                    "__bitor" => Some(l | r),
                    "__bitxor" => Some(l ^ r),
                    _ => None,
                }
            }
            _ => None,
        },
        ExprKind::Counter(_) | ExprKind::Access(_) | ExprKind::Unknown => None,
    }
}

fn params(e: &Expr, out: &mut Vec<ParamId>) {
    match &e.kind {
        ExprKind::Param(p) => out.push(*p),
        ExprKind::Neg(x) => params(x, out),
        ExprKind::Binary(_, l, r) => {
            params(l, out);
            params(r, out);
        }
        ExprKind::Call(_, args) => args.iter().for_each(|a| params(a, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: ParamId = ParamId(0);
    const N: ParamId = ParamId(1);
    /// Not a macro: a function parameter.
    const M: ParamId = ParamId(2);

    fn constant(p: ParamId) -> Option<i64> {
        match p.0 {
            0 => Some(32000),
            1 => Some(7),
            _ => None,
        }
    }

    fn e(k: ExprKind) -> Box<Expr> {
        Box::new(Expr::new(k, Span::NONE))
    }
    fn int(v: i64) -> Box<Expr> {
        e(ExprKind::Int(v))
    }
    fn par(p: ParamId) -> Box<Expr> {
        e(ExprKind::Param(p))
    }
    fn bin(op: BinOp, l: Box<Expr>, r: Box<Expr>) -> Box<Expr> {
        e(ExprKind::Binary(op, l, r))
    }
    fn call(f: &str, args: impl IntoIterator<Item = Box<Expr>>) -> Box<Expr> {
        e(ExprKind::Call(
            f.into(),
            args.into_iter().map(|a| *a).collect(),
        ))
    }
    fn folded(x: Box<Expr>) -> (Expr, Vec<ParamId>) {
        let f = fold(&x, &constant);
        (f.expr, f.used)
    }

    #[test]
    fn macro_arithmetic_folds_to_its_value() {
        // LEN/2 = 16000; LEN*LEN = 1024000000; (N+1)/2 = 4; N%4 = 3.
        let (x, used) = folded(bin(BinOp::Div, par(LEN), int(2)));
        assert_eq!((x.kind, used), (ExprKind::Int(16000), vec![LEN]));
        let (x, _) = folded(bin(BinOp::Mul, par(LEN), par(LEN)));
        assert_eq!(x.kind, ExprKind::Int(1_024_000_000));
        let (x, used) = folded(bin(BinOp::Div, bin(BinOp::Add, par(N), int(1)), int(2)));
        assert_eq!((x.kind, used), (ExprKind::Int(4), vec![N]));
        let (x, _) = folded(bin(BinOp::Rem, par(N), int(4)));
        assert_eq!(x.kind, ExprKind::Int(3));
        // 1 << N = 128, LEN >> 4 = 2000.
        let (x, _) = folded(call("__shl", vec![int(1), par(N)]));
        assert_eq!(x.kind, ExprKind::Int(128));
        let (x, _) = folded(call("__shr", vec![par(LEN), int(4)]));
        assert_eq!(x.kind, ExprKind::Int(2000));
    }

    #[test]
    fn c_division_truncates_toward_zero() {
        // C: -7/2 == -3 and -7%2 == -1 (the model's Euclidean ones: -4, 1).
        let (x, _) = folded(bin(BinOp::Div, e(ExprKind::Neg(par(N))), int(2)));
        assert_eq!(x.kind, ExprKind::Int(-3));
        let (x, _) = folded(bin(BinOp::Rem, e(ExprKind::Neg(par(N))), int(2)));
        assert_eq!(x.kind, ExprKind::Int(-1));
    }

    #[test]
    fn affine_forms_stay_parametric() {
        for x in [
            bin(BinOp::Mul, par(LEN), int(2)),
            bin(BinOp::Mul, int(2), par(LEN)),
            bin(BinOp::Sub, par(LEN), int(1)),
        ] {
            let want = (*x).clone();
            let (got, used) = folded(x);
            assert_eq!(got, want);
            assert!(used.is_empty());
        }
    }

    #[test]
    fn literal_arithmetic_folds_without_a_parameter() {
        let (x, used) = folded(bin(BinOp::Div, int(7), int(2)));
        assert_eq!((x.kind, used), (ExprKind::Int(3), vec![]));
    }

    #[test]
    fn a_constant_factor_makes_a_product_affine() {
        // i*N + (N >> 1) is 7i + 3.
        let i = e(ExprKind::Counter(CounterId(0)));
        let x = bin(
            BinOp::Add,
            bin(BinOp::Mul, i, par(N)),
            call("__shr", vec![par(N), int(1)]),
        );
        let (x, used) = folded(x);
        assert_eq!(used, vec![N]);
        let a = Affine::from_expr(&x).expect("affine");
        assert_eq!(
            (a.terms, a.constant),
            (vec![(Var::Counter(CounterId(0)), 7)], 3)
        );
    }

    #[test]
    fn parts_fold_inside_a_larger_expression() {
        // i + LEN/2 is i + 16000, which is affine.
        let i = e(ExprKind::Counter(CounterId(0)));
        let (x, used) = folded(bin(BinOp::Add, i, bin(BinOp::Div, par(LEN), int(2))));
        assert_eq!(used, vec![LEN]);
        let a = Affine::from_expr(&x).expect("affine");
        assert_eq!(a.constant, 16000);
    }

    #[test]
    fn what_is_not_constant_is_kept() {
        // M is no macro; division by zero and bad shifts do not fold.
        for x in [
            bin(BinOp::Div, par(M), int(2)),
            bin(BinOp::Div, par(LEN), int(0)),
            call("__shl", vec![int(1), int(32)]),
            call("__shl", vec![int(-1), int(1)]),
            call("__shr", vec![int(8), int(-1)]),
            // 32000³ overflows C's `int`.
            bin(BinOp::Mul, par(LEN), bin(BinOp::Mul, par(LEN), par(LEN))),
            bin(BinOp::Mul, par(LEN), int(i64::MAX)),
        ] {
            let want = (*x).clone();
            let (got, used) = folded(x);
            assert_eq!(got, want);
            assert!(used.is_empty());
        }
    }
}
