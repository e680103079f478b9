//! The quast (quasi-affine selection tree, Feautrier) of one read: affine
//! conditions on the read's counters and the parameters, and strides (k
//! divides an affine form: `a[i]` after `a[2 * i]` has its source where i
//! is even); leaves name the source statement and its iteration vector as
//! affine functions of them, divided by a constant where a stride makes
//! that exact, or ⊥ (the initial value). Printing in the program's names.

use super::domain::Atom;
use crate::model::{Affine, CounterId, Program, StmtId, Var};
use serde_json::{json, Value};

/// A source: statement `stmt` at iteration vector `iter / den`. `den` is
/// 1 except under a stride that makes the division exact (`W((i + 1) / 2)`
/// where i is odd); code that needs affine coordinates asks [`Source::affine`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub stmt: StmtId,
    pub iter: Vec<Affine>,
    pub den: i64,
}

impl Source {
    /// The iteration vector when it is affine (no division).
    pub fn affine(&self) -> Option<&[Affine]> {
        (self.den == 1).then_some(&self.iter[..])
    }
}

/// A condition on a quast path: `Ge(e)`: e ≥ 0; `Stride(e, k)`: k divides e.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test {
    Ge(Affine),
    Stride(Affine, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quast {
    /// The source, or None: the initial value (⊥).
    Leaf(Option<Source>),
    /// `if cond >= 0 then yes else no`.
    Split {
        cond: Affine,
        yes: Box<Quast>,
        no: Box<Quast>,
    },
    /// `if k divides expr then yes else no` (k ≥ 2).
    Stride {
        expr: Affine,
        k: i64,
        yes: Box<Quast>,
        no: Box<Quast>,
    },
}

/// The conditions on a path from the root (`(t, true)`: t holds).
pub type Path = Vec<(Test, bool)>;

/// A concrete source: statement and iteration vector, None for ⊥.
pub type Concrete = Option<(StmtId, Vec<i64>)>;

impl Quast {
    /// The source of the read at `iter` (the values of `counters`) and
    /// `params` (None on overflow).
    pub fn eval(&self, counters: &[CounterId], iter: &[i64], params: &[i64]) -> Option<Concrete> {
        let value = |a: &Affine| {
            a.eval(|v| match v {
                Var::Param(p) => params[p.index()],
                Var::Counter(c) => counters.iter().position(|&k| k == c).map_or(0, |k| iter[k]),
            })
        };
        let mut q = self;
        loop {
            match q {
                Quast::Leaf(None) => return Some(None),
                Quast::Leaf(Some(s)) => {
                    let it = (s.iter.iter())
                        .map(|a| {
                            let v = value(a)?;
                            (v % s.den == 0).then(|| v / s.den)
                        })
                        .collect::<Option<Vec<_>>>()?;
                    return Some(Some((s.stmt, it)));
                }
                Quast::Split { cond, yes, no } => q = if value(cond)? >= 0 { yes } else { no },
                Quast::Stride { expr, k, yes, no } => {
                    q = if value(expr)?.rem_euclid(*k) == 0 {
                        yes
                    } else {
                        no
                    }
                }
            }
        }
    }

    /// Every leaf with the conditions on its path (`(e, true)`: e ≥ 0).
    pub fn leaves(&self) -> Vec<(Path, Option<&Source>)> {
        fn walk<'a>(q: &'a Quast, path: &mut Path, out: &mut Vec<(Path, Option<&'a Source>)>) {
            match q {
                Quast::Leaf(s) => out.push((path.clone(), s.as_ref())),
                Quast::Split { cond, yes, no } => {
                    for (b, sub) in [(true, yes), (false, no)] {
                        path.push((Test::Ge(cond.clone()), b));
                        walk(sub, path, out);
                        path.pop();
                    }
                }
                Quast::Stride { expr, k, yes, no } => {
                    for (b, sub) in [(true, yes), (false, no)] {
                        path.push((Test::Stride(expr.clone(), *k), b));
                        walk(sub, path, out);
                        path.pop();
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// Whether every condition is an inequality and every leaf affine:
    /// what the analyses that take quasts apart without strides need.
    pub fn is_affine(&self) -> bool {
        match self {
            Quast::Leaf(s) => s.as_ref().is_none_or(|s| s.den == 1),
            Quast::Split { yes, no, .. } => yes.is_affine() && no.is_affine(),
            Quast::Stride { .. } => false,
        }
    }
}

/// Names for printing: the program's parameter, counter and statement
/// names.
pub struct Names<'p> {
    pub program: &'p Program,
    /// Statement labels by id, listed on first use: `Program::site_name`
    /// walks the whole program per call.
    labels: std::cell::OnceCell<Vec<&'p str>>,
}

impl<'p> Names<'p> {
    pub fn new(program: &'p Program) -> Names<'p> {
        Names {
            program,
            labels: std::cell::OnceCell::new(),
        }
    }

    /// A statement's label.
    pub fn label(&self, s: crate::model::StmtId) -> &'p str {
        let labels = self.labels.get_or_init(|| {
            (self.program.stmts().into_iter())
                .map(|s| s.label.as_str())
                .collect()
        });
        labels.get(s.index()).copied().unwrap_or("?")
    }

    pub fn var(&self, v: Var) -> &str {
        match v {
            Var::Param(p) => &self.program.params[p.index()].name,
            Var::Counter(c) => &self.program.counter_decl(c).name,
        }
    }

    /// `2*i - j + 1`.
    pub fn affine(&self, a: &Affine) -> String {
        affine_with(a, &|v| self.var(v).to_string())
    }

    /// `e ≥ 0` (or, negated, `e < 0`) as `lhs >= rhs` with positive terms
    /// on each side.
    pub fn cond(&self, e: &Affine, holds: bool) -> String {
        cond_with(e, holds, &|v| self.var(v).to_string())
    }

    /// `k divides e` (or, negated, does not) as `e mod k = 0` (`> 0`).
    pub fn test(&self, t: &Test, holds: bool) -> String {
        match t {
            Test::Ge(e) => self.cond(e, holds),
            Test::Stride(e, k) => {
                let op = if holds { "=" } else { ">" };
                let e = grouped(e, &|v| self.var(v).to_string());
                format!("{e} mod {k} {op} 0")
            }
        }
    }

    /// One coordinate of a source: `e`, or `(e) / k`.
    pub fn coord(&self, e: &Affine, den: i64) -> String {
        coord_with(e, den, &|v| self.var(v).to_string())
    }

    pub fn source(&self, s: Option<&Source>) -> String {
        match s {
            None => "initial".to_string(),
            Some(s) => {
                let it: Vec<String> = s.iter.iter().map(|a| self.coord(a, s.den)).collect();
                format!("{}({})", self.label(s.stmt), it.join(", "))
            }
        }
    }

    /// One line: `S(i, j - 1) if j >= 2, else R(i)`.
    pub fn line(&self, q: &Quast) -> String {
        match q {
            Quast::Leaf(s) => self.source(s.as_ref()),
            Quast::Split { cond, yes, no } => {
                let yes = match &**yes {
                    Quast::Leaf(s) => self.source(s.as_ref()),
                    other => format!("({})", self.line(other)),
                };
                format!("{yes} if {}, else {}", self.cond(cond, true), self.line(no))
            }
            Quast::Stride { expr, k, yes, no } => {
                let t = Test::Stride(expr.clone(), *k);
                let yes = match &**yes {
                    Quast::Leaf(s) => self.source(s.as_ref()),
                    other => format!("({})", self.line(other)),
                };
                format!("{yes} if {}, else {}", self.test(&t, true), self.line(no))
            }
        }
    }

    /// Indented `if … then … else …` lines, each prefixed by `indent`.
    pub fn tree(&self, q: &Quast, indent: &str, out: &mut String) {
        match q {
            Quast::Leaf(s) => {
                out.push_str(indent);
                out.push_str(&self.source(s.as_ref()));
                out.push('\n');
            }
            Quast::Split { cond, yes, no } => {
                let t = Test::Ge(cond.clone());
                self.tree_split(&t, yes, no, indent, out);
            }
            Quast::Stride { expr, k, yes, no } => {
                let t = Test::Stride(expr.clone(), *k);
                self.tree_split(&t, yes, no, indent, out);
            }
        }
    }

    fn tree_split(&self, t: &Test, yes: &Quast, no: &Quast, indent: &str, out: &mut String) {
        out.push_str(&format!("{indent}if {}:\n", self.test(t, true)));
        self.tree(yes, &format!("{indent}  "), out);
        out.push_str(&format!("{indent}else:\n"));
        self.tree(no, &format!("{indent}  "), out);
    }

    pub fn json(&self, q: &Quast) -> Value {
        match q {
            Quast::Leaf(None) => json!({ "initial": true }),
            Quast::Leaf(Some(s)) => json!({
                "statement": self.label(s.stmt),
                "iteration": s.iter.iter().map(|a| self.coord(a, s.den)).collect::<Vec<_>>(),
            }),
            Quast::Split { cond, yes, no } => json!({
                "if": self.cond(cond, true),
                "then": self.json(yes),
                "else": self.json(no),
            }),
            Quast::Stride { expr, k, yes, no } => json!({
                "if": self.test(&Test::Stride(expr.clone(), *k), true),
                "then": self.json(yes),
                "else": self.json(no),
            }),
        }
    }
}

/// `2*i - j + 1`, each variable named by `name`.
pub fn affine_with(a: &Affine, name: &dyn Fn(Var) -> String) -> String {
    let mut s = String::new();
    for &(v, c) in &a.terms {
        let name = name(v);
        let mag = c.unsigned_abs();
        if s.is_empty() {
            if c < 0 {
                s.push('-');
            }
        } else {
            s.push_str(if c < 0 { " - " } else { " + " });
        }
        if mag != 1 {
            s.push_str(&format!("{mag}*"));
        }
        s.push_str(&name);
    }
    match (s.is_empty(), a.constant) {
        (true, k) => k.to_string(),
        (false, 0) => s,
        (false, k) if k < 0 => format!("{s} - {}", k.unsigned_abs()),
        (false, k) => format!("{s} + {k}"),
    }
}

/// `e / den` as `j`, `i / 2` or `(i + 1) / 2`: divided out where den
/// divides every coefficient.
pub fn coord_with(e: &Affine, den: i64, name: &dyn Fn(Var) -> String) -> String {
    match divided(e, den) {
        Some(q) => affine_with(&q, name),
        None => format!("{} / {den}", grouped(e, name)),
    }
}

/// `e / den` when den divides every coefficient and the constant.
pub fn divided(e: &Affine, den: i64) -> Option<Affine> {
    let whole = e.terms.iter().all(|t| t.1 % den == 0) && e.constant % den == 0;
    whole.then(|| Affine {
        terms: e.terms.iter().map(|&(v, c)| (v, c / den)).collect(),
        constant: e.constant / den,
    })
}

/// `i`, or `(i + 1)` where a sum needs parentheses.
fn grouped(e: &Affine, name: &dyn Fn(Var) -> String) -> String {
    match (e.terms.as_slice(), e.constant) {
        ([(_, 1)], 0) => affine_with(e, name),
        _ => format!("({})", affine_with(e, name)),
    }
}

/// `e ≥ 0` (or, negated, `e < 0`) as `lhs >= rhs` with positive terms on
/// each side, each variable named by `name`.
pub fn cond_with(e: &Affine, holds: bool, name: &dyn Fn(Var) -> String) -> String {
    let split = |sign: i64| Affine {
        terms: e
            .terms
            .iter()
            .filter(|(_, c)| c.signum() == sign)
            .map(|&(v, c)| (v, c * sign))
            .collect(),
        constant: 0,
    };
    let (l, mut r) = (split(1), split(-1));
    if l.terms.is_empty() && !r.terms.is_empty() {
        // -j + 3 >= 0 reads better as 3 >= j, i.e. j <= 3.
        let op = if holds { "<=" } else { ">" };
        return format!("{} {op} {}", affine_with(&r, name), e.constant);
    }
    r.constant = -e.constant;
    let op = if holds { ">=" } else { "<" };
    format!("{} {op} {}", affine_with(&l, name), affine_with(&r, name))
}

/// An atom in isl notation: `j <= 3`, `i = j + 1`, `(i - 1) mod 2 = 0`.
pub fn atom_with(a: &Atom, name: &dyn Fn(Var) -> String) -> String {
    match a {
        Atom::Le(e) => cond_with(&e.checked_scale(-1).unwrap_or_default(), true, name),
        Atom::Eq(e) => cond_with(e, true, name)
            .replacen(">=", "=", 1)
            .replacen("<=", "=", 1),
        Atom::Stride(e, k) => format!("({}) mod {k} = 0", affine_with(e, name)),
        Atom::NotStride(e, k) => format!("({}) mod {k} > 0", affine_with(e, name)),
    }
}
