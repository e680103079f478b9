//! Random small affine loop programs for the dependence property tests and
//! the benchmark corpus: a few `for` loops (rectangular or triangular, some
//! with a step), statements reading and writing one array with affine
//! subscripts, optionally affine guards, a parameter in bounds or subscripts,
//! and non-affine subscripts.

use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::{ArrayId, BinOp, CmpOp, Cond, CounterId, Expr, ParamId, Program};

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    pub fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// A parameter `N` may appear in bounds and subscripts.
    pub param: bool,
    /// Guards `if <affine comparison>` (sometimes `!=`, sometimes `else`).
    pub guards: bool,
    /// Subscripts that multiply two counters.
    pub nonaffine: bool,
    /// Array dimensions (1 or 2).
    pub dims: usize,
    /// Deepest loop nest.
    pub depth: usize,
    /// Largest coefficient of a counter in a subscript.
    pub coeff: i64,
}

impl Shape {
    pub const AFFINE: Shape = Shape {
        param: false,
        guards: true,
        nonaffine: false,
        dims: 2,
        depth: 3,
        coeff: 2,
    };
}

struct Gen<'r> {
    rng: &'r mut Rng,
    shape: Shape,
    b: ProgramBuilder,
    a: ArrayId,
    n: Option<ParamId>,
    scope: Vec<CounterId>,
    loops: usize,
    stmts: usize,
}

/// A program with two to four statements over array `a`.
pub fn program(rng: &mut Rng, shape: Shape) -> Program {
    let mut b = ProgramBuilder::new();
    let n = shape.param.then(|| b.param("N", Some(4)).expect("fresh"));
    if let Some(n) = n {
        b.assume(e::cmp(CmpOp::Ge, e::param(n), e::int(0)));
    }
    let dims = (0..shape.dims)
        .map(|_| (e::int(-1000), e::int(1000)))
        .collect();
    let a = b.array("a", dims).expect("fresh");
    let mut g = Gen {
        rng,
        shape,
        b,
        a,
        n,
        scope: Vec::new(),
        loops: 0,
        stmts: 0,
    };
    g.block(0);
    while g.stmts < 2 {
        g.stmt();
    }
    g.b.finish().expect("balanced")
}

impl Gen<'_> {
    fn block(&mut self, depth: usize) {
        let items = self.rng.range(1, 2);
        for _ in 0..items {
            if self.stmts >= 4 {
                return;
            }
            if depth < self.shape.depth && self.loops < 4 && self.rng.percent(60) {
                self.nest(depth);
            } else {
                self.stmt();
            }
        }
    }

    fn nest(&mut self, depth: usize) {
        let lo_c = self.rng.range(-1, 2);
        let lo = match (self.scope.last(), self.rng.range(0, 3)) {
            (Some(&outer), 0) => e::add(e::counter(outer), e::int(lo_c)),
            _ => e::int(lo_c),
        };
        let hi = match (self.scope.last(), self.n, self.rng.range(0, 5)) {
            (Some(&outer), _, 0) => e::add(e::counter(outer), e::int(self.rng.range(0, 2))),
            (_, Some(n), 1) => e::add(e::param(n), e::int(self.rng.range(-1, 1))),
            _ => e::int(lo_c + self.rng.range(0, 4)),
        };
        let step = if self.rng.percent(10) { 2 } else { 1 };
        let name = format!("i{}", self.loops);
        self.loops += 1;
        let c = self.b.begin_for(&name, lo, hi, step).expect("affine");
        self.scope.push(c);
        self.block(depth + 1);
        if self.stmts == 0 {
            self.stmt();
        }
        self.scope.pop();
        self.b.end().expect("open");
    }

    fn subscript(&mut self) -> Expr {
        if self.shape.nonaffine && !self.scope.is_empty() && self.rng.percent(8) {
            let x = self.scope[self.rng.range(0, self.scope.len() as i64 - 1) as usize];
            let y = self.scope[self.rng.range(0, self.scope.len() as i64 - 1) as usize];
            return e::mul(e::counter(x), e::counter(y));
        }
        let mut s = e::int(self.rng.range(-3, 3));
        for &c in &self.scope {
            let k = match self.rng.range(0, 4) {
                0 | 1 => 0,
                2 => 1,
                _ => self.rng.range(-self.shape.coeff, self.shape.coeff),
            };
            if k != 0 {
                s = e::add(s, e::mul(e::int(k), e::counter(c)));
            }
        }
        if let Some(n) = self.n {
            if self.rng.percent(20) {
                s = e::add(s, e::param(n));
            }
        }
        s
    }

    fn access_subs(&mut self) -> Vec<Expr> {
        (0..self.shape.dims).map(|_| self.subscript()).collect()
    }

    fn guard(&mut self) -> Cond {
        let x = self.scope[self.rng.range(0, self.scope.len() as i64 - 1) as usize];
        let lhs = e::mul(e::int(self.rng.range(1, 2)), e::counter(x));
        let rhs = match self.scope.first() {
            Some(&y) if y != x && self.rng.percent(50) => {
                e::add(e::counter(y), e::int(self.rng.range(-1, 1)))
            }
            _ => e::int(self.rng.range(0, 3)),
        };
        let op = match self.rng.range(0, 9) {
            0 => CmpOp::Ne,
            1 | 2 => CmpOp::Eq,
            3 | 4 => CmpOp::Le,
            5 | 6 => CmpOp::Ge,
            7 => CmpOp::Lt,
            _ => CmpOp::Gt,
        };
        let c = e::cmp(op, lhs, rhs);
        if self.rng.percent(15) {
            Cond::Not(Box::new(c))
        } else {
            c
        }
    }

    fn stmt(&mut self) {
        let guarded = self.shape.guards && !self.scope.is_empty() && self.rng.percent(25);
        let in_else = guarded && self.rng.percent(30);
        if guarded {
            let g = self.guard();
            self.b.begin_if(None, g).expect("depth");
            if in_else {
                self.b.otherwise().expect("if");
            }
        }
        let reads = self.rng.range(0, 2);
        let mut value = e::unknown();
        for k in 0..reads {
            let subs = self.access_subs();
            let r = e::read(self.a, subs);
            value = if k == 0 { r } else { e::add(value, r) };
        }
        let op = self.rng.percent(15).then_some(BinOp::Add);
        let target = self.access_subs();
        if self.rng.percent(15) {
            // A statement that only reads: use(a[..]).
            let subs = self.access_subs();
            self.b
                .call(None, "use", vec![e::read(self.a, subs)])
                .expect("call");
        } else {
            self.b
                .assign(None, e::access(self.a, target), op, value)
                .expect("assign");
        }
        self.stmts += 1;
        if guarded {
            self.b.end().expect("if");
        }
    }
}
