//! The printer and the parser agree: for generated valid programs `m`,
//! `parse(print(m)) == m` and printing is a fixed point. Programs are built
//! through `ProgramBuilder` from a seed (ARRAYFLOW_CASES sets the case count).

mod support;

use arrayflow::diagnostics::{has_errors, FileId};
use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::*;
use proptest::prelude::*;

fn cases() -> u32 {
    support::cases(256).try_into().unwrap_or(u32::MAX)
}

/// splitmix64: a tiny deterministic generator driven by the proptest seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

struct Gen {
    r: Rng,
    b: ProgramBuilder,
    params: Vec<ParamId>,
    /// (array, number of dimensions)
    arrays: Vec<(ArrayId, usize)>,
    /// Counters that may be written in the text (not generated `while` names).
    scope: Vec<CounterId>,
    counters: u32,
    sites: u32,
    stmts: usize,
}

const OPS: [BinOp; 5] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem];
const CMPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

impl Gen {
    fn int(&mut self) -> i64 {
        match self.r.below(20) {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => self.r.below(41) as i64 - 20,
        }
    }

    /// An affine expression of the parameters and the counters in scope.
    fn affine(&mut self, counters: bool) -> Expr {
        let mut x = e::int(self.r.below(5) as i64);
        for _ in 0..self.r.below(3) {
            let v = if counters && !self.scope.is_empty() && self.r.chance(50) {
                e::counter(self.r.pick(&self.scope))
            } else {
                e::param(self.r.pick(&self.params))
            };
            let term = if self.r.chance(30) {
                e::mul(e::int(self.r.below(4) as i64 + 2), v)
            } else {
                v
            };
            x = if self.r.chance(70) {
                e::add(x, term)
            } else {
                e::sub(term, x)
            };
        }
        x
    }

    fn access(&mut self, depth: u32) -> Access {
        let (a, dims) = self.r.pick(&self.arrays);
        let subs = (0..dims)
            .map(|_| {
                if self.r.chance(70) {
                    self.affine(true)
                } else {
                    self.value(depth + 1)
                }
            })
            .collect();
        e::access(a, subs)
    }

    fn value(&mut self, depth: u32) -> Expr {
        let leaf = depth >= 3 || self.r.chance(35);
        if leaf {
            return match self.r.below(6) {
                0 => e::int(self.int()),
                1 => e::param(self.r.pick(&self.params)),
                2 if !self.scope.is_empty() => e::counter(self.r.pick(&self.scope)),
                3 => e::unknown(),
                _ => {
                    let a = self.access(depth);
                    Expr::new(ExprKind::Access(a), Span::NONE)
                }
            };
        }
        match self.r.below(4) {
            0 => e::neg(self.value(depth + 1)),
            1 => {
                let n = self.r.below(3);
                let args = (0..n).map(|_| self.value(depth + 1)).collect();
                e::call(self.r.pick(&["f", "g", "x"]), args)
            }
            _ => {
                let op = self.r.pick(&OPS);
                e::bin(op, self.value(depth + 1), self.value(depth + 1))
            }
        }
    }

    fn cond(&mut self, depth: u32) -> Cond {
        if depth >= 2 || self.r.chance(40) {
            return if self.r.chance(15) {
                Cond::Unknown
            } else {
                let op = self.r.pick(&CMPS);
                e::cmp(op, self.value(depth + 1), self.value(depth + 1))
            };
        }
        match self.r.below(3) {
            0 => Cond::Not(Box::new(self.cond(depth + 1))),
            1 => Cond::And(
                Box::new(self.cond(depth + 1)),
                Box::new(self.cond(depth + 1)),
            ),
            _ => Cond::Or(
                Box::new(self.cond(depth + 1)),
                Box::new(self.cond(depth + 1)),
            ),
        }
    }

    fn site(&mut self, prefix: &str) -> Option<String> {
        self.sites += 1;
        match self.r.below(4) {
            0 => None,
            1 => Some(format!("{prefix}{}.{}", self.sites, self.r.below(3) + 1)),
            _ => Some(format!("{prefix}{}", self.sites)),
        }
    }

    fn stmt(&mut self) {
        self.stmts += 1;
        let label = self.site("S");
        let copy = self.r.chance(10);
        if self.r.chance(75) {
            let target = self.access(1);
            let op = if self.r.chance(30) {
                Some(self.r.pick(&OPS))
            } else {
                None
            };
            let value = self.value(0);
            self.b
                .assign_at(label.as_deref(), copy, target, op, value, Span::NONE);
        } else {
            let args = (0..self.r.below(3)).map(|_| self.value(1)).collect();
            let func = self.r.pick(&["use", "f", "A"]);
            self.b
                .call_at(label.as_deref(), copy, func, args, Span::NONE);
        }
    }

    fn nodes(&mut self, depth: usize) {
        let n = self.r.below(4) + usize::from(depth == 0) as u64;
        for _ in 0..n {
            if self.stmts > 40 || depth >= 4 || self.r.chance(50) {
                self.stmt();
                continue;
            }
            match self.r.below(3) {
                0 => {
                    let name = format!("i{depth}");
                    let (lo, hi) = (self.affine(true), self.affine(true));
                    let step = self.r.below(3) as i64 + 1;
                    let parallel = self.r.chance(20);
                    let c = self
                        .b
                        .begin_for_at(&name, lo, hi, step, parallel, Span::NONE)
                        .expect("affine bounds");
                    self.counters += 1;
                    self.scope.push(c);
                    self.nodes(depth + 1);
                    self.scope.pop();
                    self.b.end().expect("open loop");
                }
                1 => {
                    let name = self.site("w");
                    let id = CounterId(self.counters);
                    if name.is_some() {
                        self.scope.push(id);
                    }
                    let cond = self.cond(0);
                    let name = name.map(|n| n.replace('.', "_"));
                    self.b
                        .begin_while_at(name.as_deref(), cond, Span::NONE)
                        .expect("while");
                    self.counters += 1;
                    self.nodes(depth + 1);
                    if name.is_some() {
                        self.scope.pop();
                    }
                    self.b.end().expect("open while");
                }
                _ => {
                    let name = self.site("c");
                    let cond = self.cond(0);
                    self.b
                        .begin_if_at(name.as_deref(), cond, Span::NONE)
                        .expect("if");
                    self.nodes(depth + 1);
                    for _ in 0..self.r.below(3) {
                        let name = self.site("c");
                        let cond = self.cond(0);
                        self.b
                            .elsif(name.as_deref(), cond, Span::NONE)
                            .expect("elsif");
                        self.nodes(depth + 1);
                    }
                    if self.r.chance(50) {
                        self.b.otherwise().expect("else");
                        self.nodes(depth + 1);
                    }
                    self.b.end().expect("open if");
                }
            }
        }
    }
}

fn generate(seed: u64) -> Program {
    let mut g = Gen {
        r: Rng(seed),
        b: ProgramBuilder::new(),
        params: Vec::new(),
        arrays: Vec::new(),
        scope: Vec::new(),
        counters: 0,
        sites: 0,
        stmts: 0,
    };
    for name in ["N", "M", "K"].iter().take(g.r.below(3) as usize + 1) {
        let default = g.r.chance(80).then(|| g.r.below(6) as i64 + 1);
        let p = g.b.param_at(name, default, Span::NONE).expect("fresh");
        g.params.push(p);
    }
    if g.r.chance(50) {
        let p = g.r.pick(&g.params);
        g.b.assume(e::cmp(CmpOp::Ge, e::param(p), e::int(1)));
    }
    for name in ["A", "B", "C", "x"].iter().take(g.r.below(4) as usize + 1) {
        let ndims = if *name == "x" {
            0
        } else {
            g.r.below(4) as usize
        };
        let dims = (0..ndims)
            .map(|_| (e::int(g.r.below(2) as i64), g.affine(false)))
            .collect();
        let elem = g.r.pick(&[ElemType::Real, ElemType::Int, ElemType::Array]);
        let a =
            g.b.array_at(name, elem, dims, Span::NONE)
                .expect("affine ranges");
        g.arrays.push((a, ndims));
    }
    g.nodes(0);
    g.b.finish().expect("balanced")
}

fn parse(text: &str) -> Program {
    let (program, diags) = arrayflow::lower::compile(text, FileId(0));
    assert!(!has_errors(&diags), "{text}\n{diags:#?}");
    program.expect("no errors")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn parse_of_print_is_identity(seed in any::<u64>()) {
        let m = generate(seed);
        let text = arrayflow::print::program(&m);
        let back = parse(&text);
        prop_assert_eq!(&back, &m, "{}", text);
        prop_assert_eq!(arrayflow::print::program(&back), text);
    }
}

#[test]
fn generated_programs_are_varied() {
    // The generator must reach every kind of node, or the property above
    // proves less than it claims.
    let text: String = (0..64)
        .map(|s| arrayflow::print::program(&generate(s)))
        .collect();
    for needle in [
        "for ", " doall", "while [", "while ", "elsif", "else\n", "@copy", ".1: ", " % ", "...",
        " step ", "not ", " or ", " and ", "-(", "assume", "int ", "array ", "+=", "if [c",
    ] {
        assert!(text.contains(needle), "no `{needle}` in generated programs");
    }
}

#[test]
fn printer_output_is_canonical() {
    let src = "param N=4;real A[1..4*N-1];\nfor i=1 to 2*N do if [c] ... then S: A[i-(1+i)+2*N] = -(5) + -5 * -A[(i)]; end end";
    let p = parse(src);
    let text = arrayflow::print::program(&p);
    assert_eq!(
        text,
        "param N = 4;\nreal A[1..4 * N - 1];\n\nfor i = 1 to 2 * N do\n  if [c] ... then\n    S: A[i - (1 + i) + 2 * N] = -(5) + -5 * -A[i];\n  end\nend\n"
    );
}
