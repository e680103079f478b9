//! Random valid programs, built through [`crate::model::builder`].
//!
//! Deterministic per seed ([`crate::hash::SplitMix64`]). Every subscript stays
//! inside its declared range at the parameter defaults, by construction:
//!
//! - every `for` counter gets an interval that contains every value it can take
//!   at the defaults (interval arithmetic over its bounds and the intervals of
//!   the counters they mention);
//! - an affine subscript is a sum of terms whose interval `[a, b]` is no wider
//!   than the dimension's `[L, H]`, plus a constant `c` drawn from
//!   `[L - a, H - b]`, so it lies in `[L, H]`; a `while` counter (whose values
//!   depend on `--max-trips`) is never used in one;
//! - a quotient subscript `t / k + c` is handled the same way with the interval
//!   `[floor(a/k), floor(b/k)]` of `t / k` (Euclidean division by `k > 0` is
//!   floor division);
//! - any other non-affine subscript is either a call (the interpreter reduces
//!   it into the range) or `e % E + L` where `E` and `L` are the dimension's
//!   extent and lower bound as affine expressions: Euclidean `%` lies in
//!   `0..E-1`, so the subscript lies in `L..L+E-1`, at every parameter value.
//!
//! The interpreter checks every subscript too, so a flaw in this reasoning
//! would show up as an out-of-range error in the property tests.

use crate::hash::SplitMix64;
use crate::model::builder::{e, ProgramBuilder};
use crate::model::{
    Affine, ArrayId, BinOp, CmpOp, Cond, CounterId, Expr, ParamId, Program, Span, Var,
};

#[cfg(test)]
mod tests;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Size {
    #[default]
    Small,
    Medium,
    Large,
}

/// What the generator may use. [`GenOptions::all`] uses every form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOptions {
    pub size: Size,
    pub while_loops: bool,
    /// `...` as a condition.
    pub unknown_conditions: bool,
    /// Conditions that read arrays or call functions.
    pub data_conditions: bool,
    pub non_affine_subscripts: bool,
    /// How many parameters (`N`, `M`, `K`, `L`; at most 4): 0 draws one or
    /// two, as before this option. Each has its own default, and
    /// assumptions `N >= 2`, the others `>= 1`.
    pub params: usize,
}

impl GenOptions {
    pub fn all(size: Size) -> GenOptions {
        GenOptions {
            size,
            while_loops: true,
            unknown_conditions: true,
            data_conditions: true,
            non_affine_subscripts: true,
            params: 0,
        }
    }

    /// Static control: affine subscripts, no `while`, only affine conditions.
    /// On such programs the dataflow σ can be exact.
    pub fn static_control(size: Size) -> GenOptions {
        GenOptions {
            size,
            while_loops: false,
            unknown_conditions: false,
            data_conditions: false,
            non_affine_subscripts: false,
            params: 0,
        }
    }
}

/// A random valid program.
pub fn generate(seed: u64, options: &GenOptions) -> Program {
    Gen::new(seed, options).program()
}

/// An inclusive integer interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Iv {
    lo: i64,
    hi: i64,
}

impl Iv {
    fn point(v: i64) -> Iv {
        Iv { lo: v, hi: v }
    }
    fn add(self, o: Iv) -> Iv {
        Iv {
            lo: self.lo + o.lo,
            hi: self.hi + o.hi,
        }
    }
    fn scale(self, k: i64) -> Iv {
        let (a, b) = (self.lo * k, self.hi * k);
        Iv {
            lo: a.min(b),
            hi: a.max(b),
        }
    }
    fn width(self) -> i64 {
        self.hi - self.lo
    }
}

struct Dim {
    lo: i64,
    hi: i64,
    lo_affine: Affine,
    hi_affine: Affine,
}

struct ArrayInfo {
    id: ArrayId,
    dims: Vec<Dim>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopKind {
    For,
    While,
}

struct Scope {
    counter: CounterId,
    iv: Iv,
    kind: LoopKind,
    /// Whether source text can name the counter (an unnamed `while` has a
    /// generated name, which is reserved).
    named: bool,
}

struct Limits {
    stmts: usize,
    depth: usize,
    arrays: usize,
}

const PARAM_NAMES: [&str; 4] = ["N", "M", "K", "L"];
const COUNTER_NAMES: [&str; 6] = ["i", "j", "k", "l", "m", "n"];
const ARRAY_NAMES: [&str; 5] = ["A", "B", "C", "D", "E"];
const SCALAR_NAMES: [&str; 3] = ["x", "y", "z"];
const FUNCS: [&str; 4] = ["f", "g", "h", "foo"];

struct Gen<'o> {
    rng: SplitMix64,
    o: &'o GenOptions,
    limits: Limits,
    b: ProgramBuilder,
    params: Vec<(ParamId, i64)>,
    arrays: Vec<ArrayInfo>,
    scope: Vec<Scope>,
    stmts_left: usize,
    labels: usize,
    conds: usize,
    whiles: usize,
}

/// The builder only refuses what the generator never makes (duplicate names,
/// non-affine bounds, bad steps, unbalanced nesting, depth over 200).
fn built<T, E: std::fmt::Debug>(r: Result<T, E>) -> T {
    r.expect("the generator only builds valid models")
}

impl<'o> Gen<'o> {
    fn new(seed: u64, o: &'o GenOptions) -> Gen<'o> {
        let limits = match o.size {
            Size::Small => Limits {
                stmts: 6,
                depth: 3,
                arrays: 3,
            },
            Size::Medium => Limits {
                stmts: 16,
                depth: 4,
                arrays: 4,
            },
            Size::Large => Limits {
                stmts: 40,
                depth: 5,
                arrays: 5,
            },
        };
        Gen {
            rng: SplitMix64::new(seed),
            o,
            stmts_left: limits.stmts,
            limits,
            b: ProgramBuilder::new(),
            params: Vec::new(),
            arrays: Vec::new(),
            scope: Vec::new(),
            labels: 0,
            conds: 0,
            whiles: 0,
        }
    }

    fn program(mut self) -> Program {
        self.declarations();
        while self.stmts_left > 0 {
            self.item(0);
        }
        built(self.b.finish())
    }

    fn declarations(&mut self) {
        let n_default = self.rng.range(2, 4);
        let n = built(self.b.param("N", Some(n_default)));
        self.params.push((n, n_default));
        self.b.assume(e::cmp(CmpOp::Ge, e::param(n), e::int(2)));
        let more = match self.o.params {
            // One draw, so that the programs of every seed stay as they were.
            0 => usize::from(self.rng.chance(1, 2)),
            k => k.min(PARAM_NAMES.len()) - 1,
        };
        for name in &PARAM_NAMES[1..=more] {
            let default = self.rng.range(1, 3);
            let m = built(self.b.param(name, Some(default)));
            self.params.push((m, default));
            self.b.assume(e::cmp(CmpOp::Ge, e::param(m), e::int(1)));
        }
        let arrays = self.rng.range(1, self.limits.arrays as i64) as usize;
        for name in &ARRAY_NAMES[..arrays] {
            let rank = self.rng.range(1, 3) as usize;
            let dims: Vec<(Affine, Affine)> = (0..rank).map(|_| self.range()).collect();
            self.declare(name, dims);
        }
        let scalars = self.rng.range(1, SCALAR_NAMES.len() as i64) as usize;
        for name in &SCALAR_NAMES[..scalars] {
            self.declare(name, Vec::new());
        }
    }

    fn declare(&mut self, name: &str, dims: Vec<(Affine, Affine)>) {
        let exprs = dims
            .iter()
            .map(|(lo, hi)| (affine_expr(lo), affine_expr(hi)))
            .collect();
        let id = built(self.b.array(name, exprs));
        let dims = dims
            .into_iter()
            .map(|(lo_affine, hi_affine)| Dim {
                lo: self.eval(&lo_affine),
                hi: self.eval(&hi_affine),
                lo_affine,
                hi_affine,
            })
            .collect();
        self.arrays.push(ArrayInfo { id, dims });
    }

    /// A declared range, non-empty whenever `N >= 2` and `M >= 1`.
    fn range(&mut self) -> (Affine, Affine) {
        let n = self.param_affine(0);
        let lo = Affine::constant(self.rng.range(-1, 1));
        let hi = match self.rng.below(4) {
            0 => n.checked_add(&Affine::constant(1)),
            1 => n.checked_scale(2),
            2 if self.params.len() > 1 => n.checked_add(&self.param_affine(1)),
            _ => Some(n),
        };
        (lo, hi.expect("small constants"))
    }

    fn param_affine(&self, k: usize) -> Affine {
        Affine::var(Var::Param(self.params[k].0))
    }

    fn eval(&self, a: &Affine) -> i64 {
        self.interval(a).lo
    }

    /// The interval of an affine expression over the counters in scope, at
    /// the parameter defaults.
    fn interval(&self, a: &Affine) -> Iv {
        a.terms.iter().fold(Iv::point(a.constant), |acc, &(v, c)| {
            let iv = match v {
                Var::Param(p) => Iv::point(
                    self.params
                        .iter()
                        .find(|(q, _)| *q == p)
                        .map_or(0, |&(_, d)| d),
                ),
                Var::Counter(c) => self
                    .scope
                    .iter()
                    .find(|s| s.counter == c)
                    .map_or(Iv::point(0), |s| s.iv),
            };
            acc.add(iv.scale(c))
        })
    }

    fn for_counters(&self) -> Vec<(CounterId, Iv)> {
        self.scope
            .iter()
            .filter(|s| s.kind == LoopKind::For)
            .map(|s| (s.counter, s.iv))
            .collect()
    }

    // ---- structure ----

    fn item(&mut self, depth: usize) {
        let nest = depth < self.limits.depth && self.stmts_left > 1;
        let roll = self.rng.below(10);
        match roll {
            0..=2 if nest => self.for_loop(depth),
            3 if nest && self.o.while_loops => self.while_loop(depth),
            4 | 5 if nest => self.if_node(depth),
            _ => self.stmt(),
        }
    }

    fn block(&mut self, depth: usize) {
        self.item(depth + 1);
        while self.stmts_left > 0 && self.rng.chance(1, 3) {
            self.item(depth + 1);
        }
    }

    fn for_loop(&mut self, depth: usize) {
        let outer = self.for_counters();
        let n = self.param_affine(0);
        let (lo, hi) = match (self.rng.below(4), outer.last()) {
            // Triangular: from or up to an outer counter.
            (0, Some(&(c, _))) => (Affine::var(Var::Counter(c)), n.clone()),
            (1, Some(&(c, _))) => (Affine::constant(1), Affine::var(Var::Counter(c))),
            _ => {
                let lo = Affine::constant(self.rng.range(0, 2));
                let hi = match self.rng.below(3) {
                    0 if self.params.len() > 1 => self.param_affine(1),
                    1 => n.checked_add(&Affine::constant(1)).expect("small"),
                    _ => n.clone(),
                };
                (lo, hi)
            }
        };
        let step = *self.rng.pick(&[1, 1, 1, 2, 3]);
        let iv = Iv {
            lo: self.interval(&lo).lo,
            hi: self.interval(&hi).hi,
        };
        let name = COUNTER_NAMES[self.scope.len() % COUNTER_NAMES.len()];
        // Loops nest at most `depth` deep, so names never repeat on a path.
        let counter = built(
            self.b
                .begin_for(name, affine_expr(&lo), affine_expr(&hi), step),
        );
        self.scope.push(Scope {
            counter,
            iv,
            kind: LoopKind::For,
            named: true,
        });
        self.block(depth);
        self.scope.pop();
        built(self.b.end());
    }

    fn while_loop(&mut self, depth: usize) {
        self.whiles += 1;
        let name = format!("w{}", self.whiles);
        let name = self.rng.chance(1, 2).then_some(name);
        let cond = self.condition();
        let counter = built(self.b.begin_while(name.as_deref(), cond));
        self.scope.push(Scope {
            counter,
            iv: Iv::point(0),
            kind: LoopKind::While,
            named: name.is_some(),
        });
        self.block(depth);
        self.scope.pop();
        built(self.b.end());
    }

    fn cond_name(&mut self) -> Option<String> {
        self.conds += 1;
        let name = format!("c{}", self.conds);
        self.rng.chance(1, 3).then_some(name)
    }

    fn if_node(&mut self, depth: usize) {
        let name = self.cond_name();
        let cond = self.condition();
        built(self.b.begin_if(name.as_deref(), cond));
        self.block(depth);
        while self.stmts_left > 0 && self.rng.chance(1, 3) {
            let name = self.cond_name();
            let cond = self.condition();
            built(self.b.elsif(name.as_deref(), cond, Span::NONE));
            self.block(depth);
        }
        if self.stmts_left > 0 && self.rng.chance(1, 2) {
            built(self.b.otherwise());
            self.block(depth);
        }
        built(self.b.end());
    }

    fn next_label(&mut self) -> Option<String> {
        self.labels += 1;
        let label = format!("S{}", self.labels);
        self.rng.chance(2, 3).then_some(label)
    }

    fn stmt(&mut self) {
        self.stmts_left = self.stmts_left.saturating_sub(1);
        let label = self.next_label();
        if self.rng.chance(1, 6) {
            let args = (0..self.rng.range(1, 2)).map(|_| self.read()).collect();
            built(self.b.call(label.as_deref(), "use", args));
            return;
        }
        let arr = self.rng.below(self.arrays.len() as u64) as usize;
        let target = self.access(arr, 0);
        let op = match self.rng.below(8) {
            0 => Some(BinOp::Add),
            1 => Some(BinOp::Sub),
            2 => Some(BinOp::Mul),
            _ => None,
        };
        let value = self.expr(2);
        built(self.b.assign(label.as_deref(), target, op, value));
    }

    // ---- expressions ----

    /// A read of a random array or scalar.
    fn read(&mut self) -> Expr {
        let arr = self.rng.below(self.arrays.len() as u64) as usize;
        let a = self.access(arr, 0);
        Expr::new(crate::model::ExprKind::Access(a), Span::NONE)
    }

    fn access(&mut self, arr: usize, nesting: usize) -> crate::model::Access {
        let dims = self.arrays[arr].dims.len();
        let subs = (0..dims).map(|d| self.subscript(arr, d, nesting)).collect();
        e::access(self.arrays[arr].id, subs)
    }

    /// A subscript inside dimension `d` of array `arr` (see the module docs).
    fn subscript(&mut self, arr: usize, d: usize, nesting: usize) -> Expr {
        let (lo, hi) = (self.arrays[arr].dims[d].lo, self.arrays[arr].dims[d].hi);
        if self.o.non_affine_subscripts && nesting == 0 && self.rng.chance(1, 4) {
            return self.non_affine_subscript(arr, d, nesting);
        }
        let terms = self.terms();
        fit(&terms, self.interval(&terms), lo, hi, &mut self.rng)
    }

    /// A random sum of counter and parameter terms (no constant).
    fn terms(&mut self) -> Affine {
        let counters = self.for_counters();
        let mut a = Affine::default();
        for _ in 0..self.rng.below(3) {
            let v = if !counters.is_empty() && self.rng.chance(4, 5) {
                Var::Counter(self.rng.pick(&counters).0)
            } else {
                Var::Param(self.rng.pick(&self.params).0)
            };
            let k = *self.rng.pick(&[1, 1, 1, -1, 2]);
            a = a
                .checked_add(&Affine::var(v).checked_scale(k).expect("small"))
                .expect("small");
        }
        a
    }

    fn non_affine_subscript(&mut self, arr: usize, d: usize, nesting: usize) -> Expr {
        let dim = &self.arrays[arr].dims[d];
        let (lo, hi) = (dim.lo, dim.hi);
        let extent = dim
            .hi_affine
            .checked_sub(&dim.lo_affine)
            .and_then(|x| x.checked_add(&Affine::constant(1)))
            .expect("small");
        let lower = dim.lo_affine.clone();
        let counters = self.for_counters();
        let whiles: Vec<CounterId> = self
            .scope
            .iter()
            .filter(|s| s.kind == LoopKind::While && s.named)
            .map(|s| s.counter)
            .collect();
        let base = match self.rng.below(6) {
            // A call: reduced into the range by the interpreter.
            0 => return self.call(1),
            // A quotient, fitted like an affine subscript.
            1 if !counters.is_empty() => {
                let terms = self.terms();
                if terms.is_constant() {
                    return fit(&terms, Iv::point(0), lo, hi, &mut self.rng);
                }
                let k = self.rng.range(2, 3);
                let iv = self.interval(&terms);
                let q = Iv {
                    lo: iv.lo.div_euclid(k),
                    hi: iv.hi.div_euclid(k),
                };
                let quotient = e::bin(BinOp::Div, affine_expr(&terms), e::int(k));
                return offset(quotient, q, lo, hi, &mut self.rng);
            }
            2 if counters.len() >= 2 => {
                let a = self.rng.pick(&counters).0;
                let b = self.rng.pick(&counters).0;
                e::mul(e::counter(a), e::counter(b))
            }
            3 if !whiles.is_empty() => e::counter(*self.rng.pick(&whiles)),
            4 => e::unknown(),
            _ => {
                let other = self.rng.below(self.arrays.len() as u64) as usize;
                let a = self.access(other, nesting + 1);
                Expr::new(crate::model::ExprKind::Access(a), Span::NONE)
            }
        };
        let rem = e::bin(BinOp::Rem, base, affine_expr(&extent));
        if lower.is_constant() {
            add_constant(rem, lower.constant)
        } else {
            e::add(rem, affine_expr(&lower))
        }
    }

    fn call(&mut self, depth: usize) -> Expr {
        let f = *self.rng.pick(&FUNCS);
        let args = (0..self.rng.range(1, 2))
            .map(|_| self.expr(depth))
            .collect();
        e::call(f, args)
    }

    /// A value expression; `depth` bounds its nesting.
    fn expr(&mut self, depth: usize) -> Expr {
        let leaf = depth == 0 || self.rng.chance(1, 3);
        if leaf {
            let counters = self.for_counters();
            return match self.rng.below(6) {
                0 => e::int(self.rng.range(0, 9)),
                1 if !counters.is_empty() => e::counter(self.rng.pick(&counters).0),
                2 => e::param(self.rng.pick(&self.params).0),
                3 => e::unknown(),
                _ => self.read(),
            };
        }
        match self.rng.below(5) {
            0 => self.call(depth - 1),
            1 => e::neg(self.expr(depth - 1)),
            2 => {
                // Division only by a positive constant: never by zero.
                let op = *self.rng.pick(&[BinOp::Div, BinOp::Rem]);
                let l = self.expr(depth - 1);
                e::bin(op, l, e::int(self.rng.range(2, 5)))
            }
            _ => {
                let op = *self.rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
                let l = self.expr(depth - 1);
                let r = self.expr(depth - 1);
                e::bin(op, l, r)
            }
        }
    }

    // ---- conditions ----

    fn condition(&mut self) -> Cond {
        let c = self.simple_condition();
        match self.rng.below(8) {
            0 => Cond::Not(Box::new(c)),
            1 => Cond::And(Box::new(c), Box::new(self.simple_condition())),
            2 => Cond::Or(Box::new(c), Box::new(self.simple_condition())),
            _ => c,
        }
    }

    fn simple_condition(&mut self) -> Cond {
        let op = *self.rng.pick(&[
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ]);
        match self.rng.below(3) {
            0 if self.o.unknown_conditions => Cond::Unknown,
            1 if self.o.data_conditions => {
                let l = self.read();
                let r = if self.rng.chance(1, 2) {
                    e::int(0)
                } else {
                    self.expr(1)
                };
                e::cmp(op, l, r)
            }
            _ => {
                let mut l = self.terms();
                if l.is_constant() {
                    // A comparison of constants decides nothing.
                    l = self.param_affine(0);
                }
                let c = self.rng.range(-1, 4);
                let r = affine_expr(&Affine::constant(c));
                e::cmp(op, affine_expr(&l), r)
            }
        }
    }
}

/// `terms + c` inside `[lo, hi]`, dropping `terms` when its interval is too wide.
fn fit(terms: &Affine, iv: Iv, lo: i64, hi: i64, rng: &mut SplitMix64) -> Expr {
    if iv.width() > hi - lo {
        return affine_expr(&Affine::constant(rng.range(lo, hi)));
    }
    let c = rng.range(lo - iv.lo, hi - iv.hi);
    affine_expr(
        &terms
            .checked_add(&Affine::constant(c))
            .expect("small constants"),
    )
}

/// `x + c` inside `[lo, hi]` where `x` lies in `iv`, or a constant when `iv`
/// is too wide.
fn offset(x: Expr, iv: Iv, lo: i64, hi: i64, rng: &mut SplitMix64) -> Expr {
    if iv.width() > hi - lo {
        return affine_expr(&Affine::constant(rng.range(lo, hi)));
    }
    add_constant(x, rng.range(lo - iv.lo, hi - iv.hi))
}

/// `x + c`, `x - |c|` or `x`.
fn add_constant(x: Expr, c: i64) -> Expr {
    match c.cmp(&0) {
        std::cmp::Ordering::Less => e::sub(x, e::int(c.unsigned_abs() as i64)),
        std::cmp::Ordering::Equal => x,
        std::cmp::Ordering::Greater => e::add(x, e::int(c)),
    }
}

/// A readable expression with exactly this affine form: positive terms first,
/// no negative literals (the language has no signed literals).
pub fn affine_expr(a: &Affine) -> Expr {
    let term = |(v, k): (Var, i64)| {
        let x = match v {
            Var::Param(p) => e::param(p),
            Var::Counter(c) => e::counter(c),
        };
        if k.unsigned_abs() == 1 {
            x
        } else {
            e::mul(e::int(k.unsigned_abs() as i64), x)
        }
    };
    let plus = a.terms.iter().copied().filter(|&(_, k)| k > 0);
    let minus = a.terms.iter().copied().filter(|&(_, k)| k < 0);
    let mut c = a.constant;
    let mut acc = plus.map(term).reduce(e::add);
    for t in minus {
        acc = Some(match acc {
            Some(x) => e::sub(x, term(t)),
            // `c - i` reads better than `-i + c`.
            None if c > 0 => e::sub(e::int(std::mem::take(&mut c)), term(t)),
            None => e::neg(term(t)),
        });
    }
    match acc {
        None if c < 0 => e::neg(e::int(c.unsigned_abs() as i64)),
        None => e::int(c),
        Some(x) => add_constant(x, c),
    }
}
