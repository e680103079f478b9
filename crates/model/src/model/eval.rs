//! The meaning of expressions and conditions: one evaluator shared by the
//! interpreter (which supplies memory) and the analyses (which evaluate static
//! guards and bounds at concrete parameter values), so both agree by
//! construction.
//!
//! Integer semantics: `+ - *` and unary `-` wrap (two's complement, 64 bits);
//! `/` and `%` are Euclidean (`%` is never negative); dividing by zero is an
//! error where the environment says so ([`Env::by_zero`]: in static
//! evaluation it is; in a run, whose values are hashed, it is a value).

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
    /// `l / 0` or `l % 0` (`op`): an error unless the environment gives it
    /// a value.
    fn by_zero(&mut self, op: BinOp, l: i64, span: Span) -> Result<i64, EvalError> {
        let _ = (op, l);
        Err(EvalError::DivisionByZero(span))
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

/// [`binary`], with a division by zero left to the environment.
pub fn binary_in(
    op: BinOp,
    l: i64,
    r: i64,
    span: Span,
    env: &mut impl Env,
) -> Result<i64, EvalError> {
    match op {
        BinOp::Div | BinOp::Rem if r == 0 => env.by_zero(op, l, span),
        _ => binary(op, l, r, span),
    }
}

/// Evaluates the subscripts of an access, left to right.
pub fn subscripts(a: &Access, env: &mut impl Env) -> Result<Vec<i64>, EvalError> {
    a.subscripts.iter().map(|s| subscript(s, env)).collect()
}

/// The value of an affine form, in the wrapping arithmetic of [`expr`].
pub fn affine(a: &Affine, env: &impl Env) -> i64 {
    a.terms.iter().fold(a.constant, |acc, &(v, c)| {
        let x = match v {
            Var::Param(p) => env.param(p),
            Var::Counter(c) => env.counter(c),
        };
        acc.wrapping_add(c.wrapping_mul(x))
    })
}

/// Evaluates a subscript: by its affine form when it has one. The form is
/// an exact rewrite of the expression over the integers (`Affine::from_expr`
/// checks every step) and wrapping arithmetic is the integers modulo 2^64,
/// so both give the same value; the form reads and calls nothing.
pub fn subscript(s: &Subscript, env: &mut impl Env) -> Result<i64, EvalError> {
    match &s.affine {
        Some(a) => Ok(affine(a, env)),
        None => expr(&s.expr, env),
    }
}

/// Evaluates `args` left to right and passes the values to `f`; up to four
/// values stay on the stack (the interpreter evaluates many subscripts).
pub fn with_values<'a, E: Env, R>(
    args: impl ExactSizeIterator<Item = &'a Expr>,
    env: &mut E,
    f: impl FnOnce(&mut E, &[i64]) -> Result<R, EvalError>,
) -> Result<R, EvalError> {
    with_each(args, env, expr, f)
}

/// [`with_values`] for the subscripts of an access ([`subscript`]).
pub fn with_subscripts<E: Env, R>(
    a: &Access,
    env: &mut E,
    f: impl FnOnce(&mut E, &[i64]) -> Result<R, EvalError>,
) -> Result<R, EvalError> {
    with_each(a.subscripts.iter(), env, subscript, f)
}

fn with_each<'a, T: 'a, E: Env, R>(
    args: impl ExactSizeIterator<Item = &'a T>,
    env: &mut E,
    eval: impl Fn(&'a T, &mut E) -> Result<i64, EvalError>,
    f: impl FnOnce(&mut E, &[i64]) -> Result<R, EvalError>,
) -> Result<R, EvalError> {
    let n = args.len();
    if n <= 4 {
        let mut buf = [0i64; 4];
        for (slot, a) in buf.iter_mut().zip(args) {
            *slot = eval(a, env)?;
        }
        f(env, &buf[..n])
    } else {
        let vals = args.map(|a| eval(a, env)).collect::<Result<Vec<_>, _>>()?;
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
        ExprKind::Access(a) => with_subscripts(a, env, |env, subs| env.read(a, subs)),
        ExprKind::Call(f, args) => {
            with_values(args.iter(), env, |env, vals| env.call(f, vals, e.span))
        }
        ExprKind::Neg(x) => Ok(expr(x, env)?.wrapping_neg()),
        ExprKind::Binary(op, l, r) => {
            let l = expr(l, env)?;
            let r = expr(r, env)?;
            binary_in(*op, l, r, e.span, env)
        }
        ExprKind::Unknown => env.unknown(e.span),
    }
}

/// A condition that compares two affine expressions, as the two affine
/// forms: it reads and calls nothing, and [`AffineCmp::holds`] gives what
/// [`cond`] gives (the forms are exact, see [`affine`]) without the tree.
#[derive(Clone, Debug)]
pub struct AffineCmp(CmpOp, Affine, Affine);

impl AffineCmp {
    pub fn of(c: &Cond) -> Option<AffineCmp> {
        match c {
            Cond::Cmp(op, l, r) => {
                Some(AffineCmp(*op, Affine::from_expr(l)?, Affine::from_expr(r)?))
            }
            _ => None,
        }
    }

    /// The operator and the two sides.
    pub fn parts(&self) -> (CmpOp, &Affine, &Affine) {
        (self.0, &self.1, &self.2)
    }

    pub fn holds(&self, env: &impl Env) -> bool {
        compare(self.0, affine(&self.1, env), affine(&self.2, env))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `2*N - i + 1` at N = 2^62, i = -5: the tree wraps at `2*N` (to
    /// i64::MIN), the form at `1 + 2*N`; both end at i64::MIN + 6.
    #[test]
    fn affine_subscripts_wrap_as_the_tree_does() {
        let (n, i) = (ParamId(0), CounterId(0));
        let e = |k| Expr::new(k, Span::NONE);
        let two_n = e(ExprKind::Binary(
            BinOp::Mul,
            Box::new(Expr::int(2)),
            Box::new(e(ExprKind::Param(n))),
        ));
        let minus_i = e(ExprKind::Binary(
            BinOp::Sub,
            Box::new(two_n),
            Box::new(e(ExprKind::Counter(i))),
        ));
        let s = Subscript::new(e(ExprKind::Binary(
            BinOp::Add,
            Box::new(minus_i),
            Box::new(Expr::int(1)),
        )));
        assert!(s.affine.is_some());
        let mut env = StaticEnv {
            params: &[1 << 62],
            counters: &[-5],
        };
        assert_eq!(expr(&s.expr, &mut env), Ok(i64::MIN + 6));
        assert_eq!(subscript(&s, &mut env), Ok(i64::MIN + 6));
    }
}
