//! A random program generator for tests, through `model::builder`: small
//! loop nests with `for`, `while` and `if`/`elsif`/`else`, static, unknown and
//! data-dependent conditions, affine and non-affine subscripts, compound
//! assignments and calls. Sizes stay small so that the naive reference runs
//! fast. (To be replaced by `src/gen` once it lands on main.)

use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::{ArrayId, BinOp, CmpOp, Cond, CounterId, Expr, ParamId, Program};

/// splitmix64: tiny and deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

struct Gen<'r> {
    rng: &'r mut Rng,
    b: ProgramBuilder,
    n: ParamId,
    arrays: Vec<(ArrayId, usize)>,
    /// Counters of the loops open where the builder is.
    counters: Vec<CounterId>,
    stmts: usize,
}

/// A random program; its parameter `N` defaults to a small value, sometimes
/// zero or negative.
pub fn program(rng: &mut Rng) -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(rng.range(-1, 3))).unwrap();
    let mut arrays = Vec::new();
    for k in 0..rng.range(1, 3) {
        let name = format!("a{k}");
        let id = match rng.below(3) {
            0 => (b.scalar(&name).unwrap(), 0),
            1 => {
                let hi = e::add(e::param(n), e::int(rng.range(0, 1)));
                (b.array(&name, vec![(e::int(0), hi)]).unwrap(), 1)
            }
            _ => (
                b.array(
                    &name,
                    vec![(e::int(0), e::int(2)), (e::int(1), e::param(n))],
                )
                .unwrap(),
                2,
            ),
        };
        arrays.push(id);
    }
    let mut g = Gen {
        rng,
        b,
        n,
        arrays,
        counters: Vec::new(),
        stmts: 0,
    };
    g.block(0);
    g.b.finish().unwrap()
}

impl Gen<'_> {
    fn block(&mut self, depth: usize) {
        for _ in 0..self.rng.range(1, 3) {
            self.node(depth);
        }
    }

    fn node(&mut self, depth: usize) {
        if depth >= 3 || self.stmts > 8 {
            return self.stmt();
        }
        match self.rng.below(10) {
            0..=1 => {
                let lo = self.bound();
                let hi = self.bound();
                let step = if self.rng.chance(20) { 2 } else { 1 };
                let name = format!("c{}", self.counters.len());
                let c = self.b.begin_for(&name, lo, hi, step).unwrap();
                self.counters.push(c);
                self.block(depth + 1);
                self.b.end().unwrap();
                self.counters.pop();
            }
            2 => {
                let cond = self.cond();
                let c = self.b.begin_while(None, cond).unwrap();
                self.counters.push(c);
                self.block(depth + 1);
                self.b.end().unwrap();
                self.counters.pop();
            }
            3..=4 => {
                let cond = self.cond();
                self.b.begin_if(None, cond).unwrap();
                self.block(depth + 1);
                for _ in 0..self.rng.below(3) {
                    let cond = self.cond();
                    self.b
                        .elsif(None, cond, arrayflow::model::Span::NONE)
                        .unwrap();
                    self.block(depth + 1);
                }
                if self.rng.chance(40) {
                    self.b.otherwise().unwrap();
                    self.block(depth + 1);
                }
                self.b.end().unwrap();
            }
            _ => self.stmt(),
        }
    }

    fn affine(&mut self) -> Expr {
        let counters = self.counters.clone();
        let base = match self.rng.below(4) {
            0 => e::int(self.rng.range(0, 2)),
            1 => e::param(self.n),
            _ if !counters.is_empty() => {
                let c = counters[self.rng.below(counters.len() as u64) as usize];
                e::counter(c)
            }
            _ => e::int(1),
        };
        match self.rng.below(4) {
            0 => e::add(base, e::int(1)),
            1 => e::sub(base, e::int(1)),
            _ => base,
        }
    }

    fn bound(&mut self) -> Expr {
        match self.rng.below(3) {
            0 => e::int(self.rng.range(0, 2)),
            1 => e::param(self.n),
            _ => self.affine(),
        }
    }

    fn subscript(&mut self) -> Expr {
        match self.rng.below(8) {
            0 => e::call("f", vec![self.affine()]),
            1 => {
                let (a, dims) = self.array();
                let subs = (0..dims).map(|_| self.affine()).collect();
                e::read(a, subs)
            }
            _ => self.affine(),
        }
    }

    fn array(&mut self) -> (ArrayId, usize) {
        self.arrays[self.rng.below(self.arrays.len() as u64) as usize]
    }

    fn access_parts(&mut self) -> (ArrayId, Vec<Expr>) {
        let (a, dims) = self.array();
        let subs = (0..dims).map(|_| self.subscript()).collect();
        (a, subs)
    }

    fn value(&mut self) -> Expr {
        match self.rng.below(4) {
            0 => e::unknown(),
            1 => e::int(1),
            2 => {
                let (a, s) = self.access_parts();
                e::read(a, s)
            }
            _ => {
                let (a, s) = self.access_parts();
                let (b, t) = self.access_parts();
                e::bin(BinOp::Add, e::read(a, s), e::read(b, t))
            }
        }
    }

    fn cond(&mut self) -> Cond {
        match self.rng.below(4) {
            0 | 1 => Cond::Unknown,
            2 => {
                let l = self.affine();
                let r = self.affine();
                let op = [CmpOp::Eq, CmpOp::Le, CmpOp::Gt][self.rng.below(3) as usize];
                e::cmp(op, l, r)
            }
            _ => {
                let (a, s) = self.access_parts();
                e::cmp(CmpOp::Gt, e::read(a, s), e::int(0))
            }
        }
    }

    fn stmt(&mut self) {
        self.stmts += 1;
        if self.rng.chance(20) {
            let v = self.value();
            self.b.call(None, "use", vec![v]).unwrap();
            return;
        }
        let (a, s) = self.access_parts();
        let target = e::access(a, s);
        let op = if self.rng.chance(25) {
            Some(BinOp::Add)
        } else {
            None
        };
        let v = self.value();
        self.b.assign(None, target, op, v).unwrap();
    }
}
