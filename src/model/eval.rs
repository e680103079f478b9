//! The meaning of expressions and conditions: one evaluator shared by the
//! interpreter (which supplies memory) and the analyses (which evaluate static
//! guards and bounds at concrete parameter values), so both agree by
//! construction.
//!
//! Integer semantics: `+ - *` and unary `-` wrap (two's complement, 64 bits);
//! `/` and `%` are Euclidean (`%` is never negative); dividing by zero is an
//! error.

use super::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    DivisionByZero(Span),
    /// The environment cannot supply this value (for example `...` or an array
    /// element when evaluating statically).
    NotStatic(Span),
    /// Raised by the environment itself (for example an out-of-range subscript).
    Env(String, Span),
}

/// What an evaluation needs from outside the expression.
pub trait Env {
    fn param(&self, p: ParamId) -> i64;
    fn counter(&self, c: CounterId) -> i64;
    /// The value of an array element; `subscripts` are already evaluated.
    fn read(&mut self, access: &Access, subscripts: &[i64]) -> Result<i64, EvalError> {
        let _ = subscripts;
        Err(EvalError::NotStatic(access.span))
    }
    fn call(&mut self, func: &str, args: &[i64], span: Span) -> Result<i64, EvalError> {
        let _ = (func, args);
        Err(EvalError::NotStatic(span))
    }
    /// The value of one `...`; `position` numbers the `...` values of one
    /// statement or condition in evaluation order.
    fn unknown(&mut self, span: Span) -> Result<i64, EvalError> {
        Err(EvalError::NotStatic(span))
    }
    /// The outcome of an unknown condition (`...`).
    fn unknown_cond(&mut self, span: Span) -> Result<bool, EvalError> {
        Err(EvalError::NotStatic(span))
    }
}

pub fn binary(op: BinOp, l: i64, r: i64, span: Span) -> Result<i64, EvalError> {
    Ok(match op {
        BinOp::Add => l.wrapping_add(r),
        BinOp::Sub => l.wrapping_sub(r),
        BinOp::Mul => l.wrapping_mul(r),
        BinOp::Div if r == 0 => return Err(EvalError::DivisionByZero(span)),
        BinOp::Rem if r == 0 => return Err(EvalError::DivisionByZero(span)),
        BinOp::Div => l.wrapping_div_euclid(r),
        BinOp::Rem => l.wrapping_rem_euclid(r),
    })
}

/// Evaluates the subscripts of an access, left to right.
pub fn subscripts(a: &Access, env: &mut impl Env) -> Result<Vec<i64>, EvalError> {
    a.subscripts.iter().map(|s| expr(&s.expr, env)).collect()
}

/// Evaluates `args` left to right and passes the values to `f`; up to four
/// values stay on the stack (the interpreter evaluates many subscripts).
pub fn with_values<'a, E: Env, R>(
    args: impl ExactSizeIterator<Item = &'a Expr>,
    env: &mut E,
    f: impl FnOnce(&mut E, &[i64]) -> Result<R, EvalError>,
) -> Result<R, EvalError> {
    let n = args.len();
    if n <= 4 {
        let mut buf = [0i64; 4];
        for (slot, a) in buf.iter_mut().zip(args) {
            *slot = expr(a, env)?;
        }
        f(env, &buf[..n])
    } else {
        let vals = args.map(|a| expr(a, env)).collect::<Result<Vec<_>, _>>()?;
        f(env, &vals)
    }
}

/// Evaluates an expression. Sub-expressions are evaluated left to right, which
/// is the order of [`Stmt::accesses`].
pub fn expr(e: &Expr, env: &mut impl Env) -> Result<i64, EvalError> {
    match &e.kind {
        ExprKind::Int(n) => Ok(*n),
        ExprKind::Param(p) => Ok(env.param(*p)),
        ExprKind::Counter(c) => Ok(env.counter(*c)),
        ExprKind::Access(a) => {
            with_values(a.subscripts.iter().map(|s| &s.expr), env, |env, subs| {
                env.read(a, subs)
            })
        }
        ExprKind::Call(f, args) => {
            with_values(args.iter(), env, |env, vals| env.call(f, vals, e.span))
        }
        ExprKind::Neg(x) => Ok(expr(x, env)?.wrapping_neg()),
        ExprKind::Binary(op, l, r) => {
            let l = expr(l, env)?;
            let r = expr(r, env)?;
            binary(*op, l, r, e.span)
        }
        ExprKind::Unknown => env.unknown(e.span),
    }
}

pub fn compare(op: CmpOp, l: i64, r: i64) -> bool {
    match op {
        CmpOp::Eq => l == r,
        CmpOp::Ne => l != r,
        CmpOp::Lt => l < r,
        CmpOp::Le => l <= r,
        CmpOp::Gt => l > r,
        CmpOp::Ge => l >= r,
    }
}

/// Evaluates a condition. `and` and `or` evaluate both sides (no short
/// circuit), so every read of a condition happens on every test.
pub fn cond(c: &Cond, env: &mut impl Env) -> Result<bool, EvalError> {
    match c {
        Cond::Cmp(op, l, r) => {
            let l = expr(l, env)?;
            let r = expr(r, env)?;
            Ok(compare(*op, l, r))
        }
        Cond::And(a, b) => {
            let a = cond(a, env)?;
            Ok(cond(b, env)? && a)
        }
        Cond::Or(a, b) => {
            let a = cond(a, env)?;
            Ok(cond(b, env)? || a)
        }
        Cond::Not(a) => Ok(!cond(a, env)?),
        Cond::Unknown => env.unknown_cond(Span::NONE),
    }
}

/// An environment of concrete parameter and counter values only: evaluates
/// static expressions and conditions.
pub struct StaticEnv<'a> {
    pub params: &'a [i64],
    pub counters: &'a [i64],
}

impl Env for StaticEnv<'_> {
    fn param(&self, p: ParamId) -> i64 {
        self.params[p.index()]
    }
    fn counter(&self, c: CounterId) -> i64 {
        self.counters[c.index()]
    }
}
