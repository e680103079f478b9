//! Programs built through `model::builder`, shared by the tests and the
//! dataflow benchmark: the paper's three examples and generated kernels.

use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::{BinOp, CmpOp, Cond, Program};

/// Example 1 (Figure 1), as in fixtures/papers/mse-example1.loop.
pub fn example1() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(5)).unwrap();
    let x = b.scalar("x").unwrap();
    b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    b.assign(Some("T"), e::access(x, vec![]), None, e::unknown())
        .unwrap();
    b.begin_while(None, Cond::Unknown).unwrap();
    let fx = e::call("f", vec![e::read(x, vec![])]);
    b.assign(Some("S"), e::access(x, vec![]), None, fx).unwrap();
    b.end().unwrap();
    b.call(Some("R"), "use", vec![e::read(x, vec![])]).unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

/// Example 2 (Figure 4).
pub fn example2() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(4)).unwrap();
    let four_n_1 = e::sub(e::mul(e::int(4), e::param(n)), e::int(1));
    let a = b.array("A", vec![(e::int(1), four_n_1)]).unwrap();
    let two_n = || e::mul(e::int(2), e::param(n));
    let i = b.begin_for("i", e::int(1), two_n(), 1).unwrap();
    let j = b.begin_for("j", e::int(1), two_n(), 1).unwrap();
    let sub = || e::add(e::sub(e::counter(i), e::counter(j)), two_n());
    b.begin_if(None, Cond::Unknown).unwrap();
    let rhs = e::call("f", vec![e::read(a, vec![sub()])]);
    b.assign(Some("S"), e::access(a, vec![sub()]), None, rhs)
        .unwrap();
    b.end().unwrap();
    b.begin_if(None, e::cmp(CmpOp::Eq, e::counter(j), e::param(n)))
        .unwrap();
    let t = e::access(a, vec![e::add(e::counter(i), e::param(n))]);
    b.assign(Some("T"), t, None, e::unknown()).unwrap();
    b.end().unwrap();
    b.end().unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

/// Example 3 (Figure 7.a).
pub fn example3() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(5)).unwrap();
    let a = b.array("A", vec![(e::int(1), e::param(n))]).unwrap();
    let i = b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    let j = b.begin_for("j", e::int(1), e::param(n), 1).unwrap();
    b.assign(
        Some("T"),
        e::access(a, vec![e::counter(j)]),
        None,
        e::unknown(),
    )
    .unwrap();
    b.end().unwrap();
    let foo_i = e::call("foo", vec![e::counter(i)]);
    b.assign(Some("S"), e::access(a, vec![foo_i]), None, e::unknown())
        .unwrap();
    let bar = e::call("bar", vec![e::counter(i)]);
    b.call(Some("R"), "use", vec![e::read(a, vec![bar])])
        .unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

/// `for i: if ... then S: x = ...; end; R: use(x); end` — R(i) may read
/// every earlier S and the initial value: quadratic output.
pub fn guarded_scalar() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(4)).unwrap();
    let x = b.scalar("x").unwrap();
    b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    b.begin_if(None, Cond::Unknown).unwrap();
    b.assign(Some("S"), e::access(x, vec![]), None, e::unknown())
        .unwrap();
    b.end().unwrap();
    b.call(Some("R"), "use", vec![e::read(x, vec![])]).unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

/// C[i][j] += A[i][k] * B[k][j].
pub fn matmul() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(64)).unwrap();
    let last = || e::sub(e::param(n), e::int(1));
    let dims = || vec![(e::int(0), last()); 2];
    let (a, bb, c) = (
        b.array("A", dims()).unwrap(),
        b.array("B", dims()).unwrap(),
        b.array("C", dims()).unwrap(),
    );
    let i = b.begin_for("i", e::int(0), last(), 1).unwrap();
    let j = b.begin_for("j", e::int(0), last(), 1).unwrap();
    let k = b.begin_for("k", e::int(0), last(), 1).unwrap();
    let (i, j, k) = (e::counter(i), e::counter(j), e::counter(k));
    let rhs = e::mul(
        e::read(a, vec![i.clone(), k.clone()]),
        e::read(bb, vec![k, j.clone()]),
    );
    b.assign(Some("S"), e::access(c, vec![i, j]), Some(BinOp::Add), rhs)
        .unwrap();
    for _ in 0..3 {
        b.end().unwrap();
    }
    b.finish().unwrap()
}

/// 2-D Jacobi: T sweeps of a 5-point stencil into B, then a copy back.
pub fn jacobi() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(256)).unwrap();
    let t = b.param("T", Some(20)).unwrap();
    let dims = || vec![(e::int(0), e::sub(e::param(n), e::int(1))); 2];
    let (a, bb) = (b.array("A", dims()).unwrap(), b.array("B", dims()).unwrap());
    let inner = || e::sub(e::param(n), e::int(2));
    b.begin_for("t", e::int(1), e::param(t), 1).unwrap();
    let i = b.begin_for("i", e::int(1), inner(), 1).unwrap();
    let j = b.begin_for("j", e::int(1), inner(), 1).unwrap();
    let at = |di: i64, dj: i64| {
        e::read(
            a,
            vec![
                e::add(e::counter(i), e::int(di)),
                e::add(e::counter(j), e::int(dj)),
            ],
        )
    };
    let sum = [at(1, 0), at(0, -1), at(0, 1), at(0, 0)]
        .into_iter()
        .fold(at(-1, 0), e::add);
    let target = e::access(bb, vec![e::counter(i), e::counter(j)]);
    b.assign(Some("S"), target, None, sum).unwrap();
    b.end().unwrap();
    b.end().unwrap();
    let i = b.begin_for("i2", e::int(1), inner(), 1).unwrap();
    let j = b.begin_for("j2", e::int(1), inner(), 1).unwrap();
    let back = e::read(bb, vec![e::counter(i), e::counter(j)]);
    b.assign(
        Some("U"),
        e::access(a, vec![e::counter(i), e::counter(j)]),
        None,
        back,
    )
    .unwrap();
    for _ in 0..3 {
        b.end().unwrap();
    }
    b.finish().unwrap()
}

/// Example 1 of the paper, scaled: a `while` loop per outer iteration
/// updating a row, and a use of the row after it.
pub fn while_kernel() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(1000)).unwrap();
    let m = b.param("M", Some(64)).unwrap();
    let x = b.array("x", vec![(e::int(1), e::param(m))]).unwrap();
    let y = b
        .array(
            "y",
            vec![(e::int(1), e::param(n)), (e::int(1), e::param(m))],
        )
        .unwrap();
    let i = b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    let j = b.begin_for("j", e::int(1), e::param(m), 1).unwrap();
    b.assign(
        Some("T"),
        e::access(x, vec![e::counter(j)]),
        None,
        e::unknown(),
    )
    .unwrap();
    b.end().unwrap();
    b.begin_while(None, Cond::Unknown).unwrap();
    let j = b.begin_for("j", e::int(1), e::param(m), 1).unwrap();
    let rhs = e::read(x, vec![e::counter(j)]);
    b.assign(
        Some("S"),
        e::access(x, vec![e::counter(j)]),
        Some(BinOp::Add),
        rhs,
    )
    .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    let j = b.begin_for("j", e::int(1), e::param(m), 1).unwrap();
    let target = e::access(y, vec![e::counter(i), e::counter(j)]);
    b.assign(Some("R"), target, None, e::read(x, vec![e::counter(j)]))
        .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

/// The path of a paper fixture.
pub fn fixture_path(name: &str) -> String {
    format!("{}/fixtures/papers/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The program of a paper fixture, parsed and checked.
pub fn fixture(name: &str) -> Program {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let (program, diags) = arrayflow::lower::compile(&text, arrayflow::diagnostics::FileId(0));
    assert!(!arrayflow::diagnostics::has_errors(&diags), "{path}");
    program.unwrap()
}
