//! Integer expressions evaluated as C evaluates them: `/` and `%` truncate
//! toward zero, a shift or an overflow C leaves undefined has no value, and
//! C's operators the model has no node for are the calls `__shl`, `__shr`,
//! `__bitand`, `__bitor`, `__bitxor` and `__bitnot`. The C front end folds
//! macro arithmetic with it, and a derived parameter ([`super::Derived`])
//! is computed with it from the parameters it reads.

use super::{BinOp, Expr, ExprKind, ParamId};

/// C's integer arithmetic on two values; `None` on overflow or division
/// by zero.
pub fn checked(op: BinOp, l: i64, r: i64) -> Option<i64> {
    match op {
        BinOp::Add => l.checked_add(r),
        BinOp::Sub => l.checked_sub(r),
        BinOp::Mul => l.checked_mul(r),
        BinOp::Div => l.checked_div(r),
        BinOp::Rem => l.checked_rem(r),
    }
}

/// The operator functions of C's integer operators.
pub fn is_bit_operator(f: &str) -> bool {
    matches!(
        f,
        "__shl" | "__shr" | "__bitand" | "__bitor" | "__bitxor" | "__bitnot"
    )
}

/// The value of `e` when every leaf is a literal or a parameter `value`
/// knows, as C computes it; `None` on overflow, division by zero, a shift C
/// leaves undefined (negative, or by 64 or more), or any other leaf. C
/// computes in `int` when every operand fits one (`#define LEN 32000`), so
/// then every step must fit 32 bits; a wider operand (`40000000000L`)
/// makes it `long`.
pub fn value(e: &Expr, param: &dyn Fn(ParamId) -> Option<i64>) -> Option<i64> {
    let mut wide = false;
    leaves(e, param, &mut wide)?;
    eval(e, param, wide)
}

/// Checks that every leaf has a value; `wide` when one does not fit `int`.
pub fn leaves(e: &Expr, param: &dyn Fn(ParamId) -> Option<i64>, wide: &mut bool) -> Option<()> {
    let mut leaf = |v: i64| *wide |= i32::try_from(v).is_err();
    match &e.kind {
        ExprKind::Int(k) => leaf(*k),
        ExprKind::Param(p) => leaf(param(*p)?),
        ExprKind::Neg(x) => leaves(x, param, wide)?,
        ExprKind::Binary(_, l, r) => {
            leaves(l, param, wide)?;
            leaves(r, param, wide)?;
        }
        ExprKind::Call(f, args) if is_bit_operator(f) => {
            for a in args {
                leaves(a, param, wide)?;
            }
        }
        ExprKind::Call(..) | ExprKind::Counter(_) | ExprKind::Access(_) | ExprKind::Unknown => {
            return None
        }
    }
    Some(())
}

fn eval(e: &Expr, param: &dyn Fn(ParamId) -> Option<i64>, wide: bool) -> Option<i64> {
    let got = eval_wide(e, param, wide)?;
    (wide || i32::try_from(got).is_ok()).then_some(got)
}

fn eval_wide(e: &Expr, param: &dyn Fn(ParamId) -> Option<i64>, wide: bool) -> Option<i64> {
    let v = |x: &Expr| eval(x, param, wide);
    let bits = if wide { 64 } else { 32 };
    match &e.kind {
        ExprKind::Int(k) => Some(*k),
        ExprKind::Param(p) => param(*p),
        ExprKind::Neg(x) => v(x)?.checked_neg(),
        ExprKind::Binary(op, l, r) => checked(*op, v(l)?, v(r)?),
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
