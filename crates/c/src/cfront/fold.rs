//! Constant folding of the integer expressions the affine forms cannot
//! take: `LEN/2`, `LEN*LEN`, `(N + 1)/2`, `N % 4`, `1 << K` where every name
//! is a macro or `const` with a constant value (docs/c.md, *Folding*).
//! An expression affine in the parameters is left alone, so `LEN*2`,
//! `2*LEN` and `LEN - 1` still follow `--param LEN=...`; one that is not
//! affine but constant becomes its value, computed as C computes it
//! (`/` and `%` truncate toward zero), and no longer follows `--param`
//! (the front end says so). Parts of a larger expression fold on their
//! own: `i + LEN/2` is `i + 16000`.

use super::{Ctx, Undo, W_FOLDED};
use crate::model::cint;
use crate::model::*;
use std::collections::HashMap;

impl Ctx<'_> {
    /// `e` folded: a constant part that reads a macro or `const` is a
    /// derived parameter, which follows `--param`; a factor folded so that a
    /// product is affine keeps its value, and gets a warning.
    pub(super) fn folded(&mut self, e: Expr) -> Expr {
        if Affine::from_expr(&e).is_some() {
            return e;
        }
        let mut values = Constants::new();
        for ((name, default), &p) in &self.params_by_key {
            let Some(k) = *default else { continue };
            let is_macro = (self.defines.get(name.as_str()))
                .is_some_and(|d| d.body.as_ref().and_then(|b| b.constant()) == Some(k));
            let is_const = (self.vars.iter()).any(|v| v.name == name && v.is_const);
            if is_macro || is_const {
                let (spelling, word) = (name.clone(), name.clone());
                values.insert(
                    p,
                    Constant {
                        value: k,
                        spelling,
                        word,
                    },
                );
            }
        }
        values.extend(self.derived_params.iter().map(|(p, c)| (*p, c.clone())));
        let mut derive = |part: &Expr, v: i64| self.derived(part, v, &values);
        let f = fold(&e, &|p| values.get(&p).map(|c| c.value), &mut derive);
        if !f.used.is_empty() {
            let names: Vec<String> = (f.used.iter())
                .filter_map(|p| values.get(p))
                .map(|c| format!("`{}` = {}", c.spelling, c.value))
                .collect();
            // The folded value is the macro's only value the model can
            // hold: the program assumes it, so that a verdict "for every
            // parameter value" covers just that one and `--param` cannot
            // give the bounds another.
            for p in f.used.iter().copied() {
                let Some(c) = values.get(&p) else { continue };
                let at = Span::NONE;
                let pin = Cond::Cmp(
                    CmpOp::Eq,
                    Expr::new(ExprKind::Param(p), at),
                    Expr::new(ExprKind::Int(c.value), at),
                );
                if !self.b.assumes(&pin) {
                    self.b.assume(pin);
                }
            }
            for at in f.parts {
                let text = self.src.get(at.start as usize..at.end as usize);
                self.warn(
                    W_FOLDED,
                    format!(
                        "`{}` multiplies a variable: the analysis takes {}, an assumption of the program",
                        balanced(text.unwrap_or("this expression").trim()),
                        names.join(", ")
                    ),
                    at,
                    "folded to a constant",
                    "a factor of a variable is folded at the macro's value: `--param` may not give it another (docs/c.md, Folding)",
                );
            }
        }
        f.expr
    }

    /// The derived parameter (`Param::derived`) that stands for `part`,
    /// one per spelling and value: named after the macro whose whole body
    /// it is (`HALF`), else after its operators (`LEN_div_2`).
    fn derived(&mut self, part: &Expr, v: i64, names: &Constants) -> Expr {
        let text = spelling(part, names);
        let key = (text.clone(), Some(v));
        let p = match self.params_by_key.get(&key) {
            Some(&p) => p,
            None => {
                let (text, base) = match self.macro_bodies.get(&(part.span.start, part.span.end)) {
                    Some(&m) => (m.to_string(), m.to_string()),
                    None => (text, identifier(part, names)),
                };
                let model_name = self.global_name(&base);
                let id = (self.b.param_at(&model_name, Some(v), part.span)).unwrap_or(ParamId(0));
                let word = model_name.clone();
                let derived = Derived {
                    expr: part.clone(),
                    text,
                };
                let spelling = derived.operand();
                (self.derived_params).insert(
                    id,
                    Constant {
                        value: v,
                        spelling,
                        word,
                    },
                );
                self.b.derive(id, derived);
                self.params_by_key.insert(key.clone(), id);
                self.undo.push(Undo::ParamKey(key.0, key.1));
                self.undo.push(Undo::Derived(id));
                id
            }
        };
        Expr::new(ExprKind::Param(p), part.span)
    }
}

/// A parameter with a value at folding: a macro, a `const` or a derived
/// parameter.
#[derive(Clone, Debug)]
pub struct Constant {
    pub value: i64,
    /// How C spells it as an operand: `LEN`, `(LEN / 2)`.
    pub spelling: String,
    /// Its model name, for the name of a parameter derived from it.
    pub word: String,
}

type Constants = HashMap<ParamId, Constant>;

/// How C spells a constant expression: `LEN / 2`, `(N + 1) / 2`, `1 << K`.
fn spelling(e: &Expr, names: &Constants) -> String {
    let mut out = String::new();
    spell(e, names, &mut out);
    out
}

fn spell(e: &Expr, names: &Constants, out: &mut String) {
    let operand = |x: &Expr, wrap: bool, out: &mut String| {
        out.push_str(if wrap { "(" } else { "" });
        spell(x, names, out);
        out.push_str(if wrap { ")" } else { "" });
    };
    match &e.kind {
        ExprKind::Int(v) => out.push_str(&v.to_string()),
        ExprKind::Param(p) => out.push_str(names.get(p).map_or("?", |c| c.spelling.as_str())),
        ExprKind::Neg(x) => {
            out.push('-');
            operand(x, c_precedence(x) <= UNARY, out);
        }
        _ => match c_operator(e).as_ref().map(|(op, xs)| (*op, xs.as_slice())) {
            Some((op, [x])) => {
                out.push_str(op);
                operand(x, c_precedence(x) <= UNARY, out);
            }
            Some((op, [l, r])) => {
                // Operands of shifts and bitwise operators that are
                // operations themselves get parentheses, as gcc's
                // -Wparentheses asks.
                let me = c_precedence(e);
                let wrap = |x: &Expr, tie| {
                    let p = c_precedence(x);
                    p < me || (tie && p == me) || (me <= SHIFT && p < UNARY)
                };
                operand(l, wrap(l, false), out);
                out.push_str(&format!(" {op} "));
                operand(r, wrap(r, true), out);
            }
            _ => out.push('?'),
        },
    }
}

/// A model name for a constant expression: its names, numbers and
/// operators in words (`LEN_div_2`, `N_plus_1_div_2`).
fn identifier(e: &Expr, names: &Constants) -> String {
    let mut words = Vec::new();
    word(e, names, &mut words);
    words.join("_")
}

fn word(e: &Expr, names: &Constants, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Int(v) if *v < 0 => out.push(format!("minus{}", v.unsigned_abs())),
        ExprKind::Int(v) => out.push(v.to_string()),
        ExprKind::Param(p) => out.push(names.get(p).map_or(String::new(), |c| c.word.clone())),
        ExprKind::Neg(x) => {
            out.push("minus".into());
            word(x, names, out);
        }
        _ => match c_operator(e).as_ref().map(|(op, xs)| (*op, xs.as_slice())) {
            Some((op, [x])) => {
                out.push(operator_word(op).into());
                word(x, names, out);
            }
            Some((op, [l, r])) => {
                word(l, names, out);
                out.push(operator_word(op).into());
                word(r, names, out);
            }
            _ => {}
        },
    }
}

/// C's binding strength of a unary operator.
const UNARY: u8 = 14;
/// C's binding strength of `<<` and `>>`.
const SHIFT: u8 = 11;

/// C's binding strength of the operator at the top of `e` (higher binds
/// tighter); atoms bind tightest.
fn c_precedence(e: &Expr) -> u8 {
    match (&e.kind, c_operator(e)) {
        (ExprKind::Int(v), _) if *v < 0 => UNARY,
        (ExprKind::Neg(_), _) => UNARY,
        (_, Some((_, xs))) if xs.len() == 1 => UNARY,
        (_, Some((op, _))) => match op {
            "*" | "/" | "%" => 13,
            "+" | "-" => 12,
            "<<" | ">>" => SHIFT,
            "&" => 8,
            "^" => 7,
            _ => 6,
        },
        _ => 15,
    }
}

/// The C operator at the top of `e` and its operands.
fn c_operator(e: &Expr) -> Option<(&'static str, Vec<&Expr>)> {
    match &e.kind {
        ExprKind::Binary(op, l, r) => {
            let op = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::Rem => "%",
            };
            Some((op, vec![&**l, &**r]))
        }
        ExprKind::Call(f, args) => {
            let op = match f.as_str() {
                "__shl" => "<<",
                "__shr" => ">>",
                "__bitand" => "&",
                "__bitor" => "|",
                "__bitxor" => "^",
                "__bitnot" => "~",
                _ => return None,
            };
            Some((op, args.iter().collect()))
        }
        _ => None,
    }
}

/// An operator in words, for a name.
fn operator_word(op: &str) -> &'static str {
    match op {
        "+" => "plus",
        "-" => "minus",
        "*" => "times",
        "/" => "div",
        "%" => "mod",
        "<<" => "shl",
        ">>" => "shr",
        "&" => "and",
        "|" => "or",
        "^" => "xor",
        _ => "not",
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
/// macro or `const` (and `None` for any other parameter), and `derive`
/// makes the parameter that stands for a constant part that reads one.
pub fn fold(
    e: &Expr,
    constant: &dyn Fn(ParamId) -> Option<i64>,
    derive: &mut dyn FnMut(&Expr, i64) -> Expr,
) -> Folded {
    let mut f = Folded {
        expr: Expr::new(ExprKind::Unknown, e.span),
        used: Vec::new(),
        parts: Vec::new(),
    };
    f.expr = Fold {
        constant,
        derive,
        out: &mut f,
    }
    .go(e);
    f.used.sort_by_key(|p| p.0);
    f.used.dedup();
    f
}

struct Fold<'a> {
    constant: &'a dyn Fn(ParamId) -> Option<i64>,
    derive: &'a mut dyn FnMut(&Expr, i64) -> Expr,
    out: &'a mut Folded,
}

impl Fold<'_> {
    fn go(&mut self, e: &Expr) -> Expr {
        if Affine::from_expr(e).is_some() {
            return e.clone();
        }
        if let Some(v) = cint::value(e, self.constant) {
            let mut read = Vec::new();
            params(e, &mut read);
            return match read.is_empty() {
                true => Expr::new(ExprKind::Int(v), e.span),
                false => (self.derive)(e, v),
            };
        }
        // Constant, but C cannot compute it (overflow, a division by zero):
        // no part of it folds either.
        if cint::leaves(e, self.constant, &mut false).is_some() {
            return e.clone();
        }
        let kind = match &e.kind {
            ExprKind::Neg(x) => ExprKind::Neg(Box::new(self.go(x))),
            // `i*N`: only the constant factor at its value makes it affine,
            // a value that then stays fixed.
            ExprKind::Binary(BinOp::Mul, l, r) => {
                let value = |x: &Expr| match x.kind {
                    ExprKind::Int(_) => None,
                    _ => cint::value(x, self.constant),
                };
                let (l, r) = match (value(l), value(r)) {
                    (Some(v), _) => (self.fixed(l, v), self.go(r)),
                    (_, Some(v)) => (self.go(l), self.fixed(r, v)),
                    _ => (self.go(l), self.go(r)),
                };
                ExprKind::Binary(BinOp::Mul, Box::new(l), Box::new(r))
            }
            ExprKind::Binary(op, l, r) => {
                ExprKind::Binary(*op, Box::new(self.go(l)), Box::new(self.go(r)))
            }
            ExprKind::Call(f, args) if cint::is_bit_operator(f) => {
                ExprKind::Call(f.clone(), args.iter().map(|a| self.go(a)).collect())
            }
            _ => return e.clone(),
        };
        Expr::new(kind, e.span)
    }

    /// `e` at its value `v`, recorded as a part folded for good.
    fn fixed(&mut self, e: &Expr, v: i64) -> Expr {
        params(e, &mut self.out.used);
        self.out.parts.push(e.span);
        Expr::new(ExprKind::Int(v), e.span)
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
    /// The expression folded (a derived part is `ParamId(100 + k)` for the
    /// k-th part derived), the macros folded for good, and the values of
    /// the parts derived.
    fn folded(x: Box<Expr>) -> (Expr, Vec<ParamId>, Vec<i64>) {
        let mut derived = Vec::new();
        let mut derive = |part: &Expr, v: i64| {
            derived.push(v);
            Expr::new(
                ExprKind::Param(ParamId(99 + derived.len() as u32)),
                part.span,
            )
        };
        let f = fold(&x, &constant, &mut derive);
        (f.expr, f.used, derived)
    }

    const P: ExprKind = ExprKind::Param(ParamId(100));

    #[test]
    fn macro_arithmetic_is_a_derived_parameter_at_its_value() {
        // LEN/2 = 16000; LEN*LEN = 1024000000; (N+1)/2 = 4; N%4 = 3.
        for (x, v) in [
            (bin(BinOp::Div, par(LEN), int(2)), 16000),
            (bin(BinOp::Mul, par(LEN), par(LEN)), 1_024_000_000),
            (bin(BinOp::Div, bin(BinOp::Add, par(N), int(1)), int(2)), 4),
            (bin(BinOp::Rem, par(N), int(4)), 3),
            // 1 << N = 128, LEN >> 4 = 2000.
            (call("__shl", vec![int(1), par(N)]), 128),
            (call("__shr", vec![par(LEN), int(4)]), 2000),
        ] {
            let (x, fixed, derived) = folded(x);
            assert_eq!((x.kind, fixed, derived), (P, vec![], vec![v]));
        }
    }

    #[test]
    fn c_division_truncates_toward_zero() {
        // C: -7/2 == -3 and -7%2 == -1 (the model's Euclidean ones: -4, 1).
        let (_, _, v) = folded(bin(BinOp::Div, e(ExprKind::Neg(par(N))), int(2)));
        assert_eq!(v, vec![-3]);
        let (_, _, v) = folded(bin(BinOp::Rem, e(ExprKind::Neg(par(N))), int(2)));
        assert_eq!(v, vec![-1]);
    }

    #[test]
    fn affine_forms_stay_parametric() {
        for x in [
            bin(BinOp::Mul, par(LEN), int(2)),
            bin(BinOp::Mul, int(2), par(LEN)),
            bin(BinOp::Sub, par(LEN), int(1)),
        ] {
            let want = (*x).clone();
            assert_eq!(folded(x), (want, vec![], vec![]));
        }
    }

    #[test]
    fn literal_arithmetic_folds_without_a_parameter() {
        let (x, fixed, derived) = folded(bin(BinOp::Div, int(7), int(2)));
        assert_eq!((x.kind, fixed, derived), (ExprKind::Int(3), vec![], vec![]));
    }

    #[test]
    fn a_constant_factor_of_a_counter_is_fixed_and_the_rest_derived() {
        // i*N + (N >> 1) is 7i + P with P = 3.
        let i = e(ExprKind::Counter(CounterId(0)));
        let x = bin(
            BinOp::Add,
            bin(BinOp::Mul, i, par(N)),
            call("__shr", vec![par(N), int(1)]),
        );
        let (x, fixed, derived) = folded(x);
        assert_eq!((fixed, derived), (vec![N], vec![3]));
        let a = Affine::from_expr(&x).expect("affine");
        assert_eq!(
            (a.terms, a.constant),
            (
                vec![
                    (Var::Param(ParamId(100)), 1),
                    (Var::Counter(CounterId(0)), 7)
                ],
                0
            )
        );
    }

    #[test]
    fn parts_fold_inside_a_larger_expression() {
        // i + LEN/2 is i + P with P = 16000, which is affine.
        let i = e(ExprKind::Counter(CounterId(0)));
        let (x, fixed, derived) = folded(bin(BinOp::Add, i, bin(BinOp::Div, par(LEN), int(2))));
        assert_eq!((fixed, derived), (vec![], vec![16000]));
        assert!(Affine::from_expr(&x).is_some());
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
            assert_eq!(folded(x), (want, vec![], vec![]));
        }
    }

    fn names() -> Constants {
        let c = |n: &str, value| Constant {
            value,
            spelling: n.into(),
            word: n.into(),
        };
        HashMap::from([(LEN, c("LEN", 32000)), (N, c("N", 7))])
    }

    #[test]
    fn c_spelling_puts_parentheses_where_c_needs_them() {
        let n = names();
        let cases = [
            (bin(BinOp::Div, par(LEN), int(2)), "LEN / 2", "LEN_div_2"),
            (
                bin(BinOp::Div, bin(BinOp::Add, par(N), int(1)), int(2)),
                "(N + 1) / 2",
                "N_plus_1_div_2",
            ),
            (
                bin(BinOp::Sub, par(N), bin(BinOp::Sub, par(LEN), int(1))),
                "N - (LEN - 1)",
                "N_minus_LEN_minus_1",
            ),
            (
                call("__shl", vec![int(1), bin(BinOp::Add, par(N), int(1))]),
                "1 << (N + 1)",
                "1_shl_N_plus_1",
            ),
            (
                bin(BinOp::Add, call("__shl", vec![int(1), par(N)]), int(1)),
                "(1 << N) + 1",
                "1_shl_N_plus_1",
            ),
            (
                e(ExprKind::Neg(e(ExprKind::Neg(par(N))))),
                "-(-N)",
                "minus_minus_N",
            ),
            (
                bin(BinOp::Mul, par(LEN), e(ExprKind::Neg(par(N)))),
                "LEN * -N",
                "LEN_times_minus_N",
            ),
        ];
        for (x, c, word) in cases {
            assert_eq!(spelling(&x, &n), c);
            assert_eq!(identifier(&x, &n), word);
        }
    }
}
