//! The loop programs of digest §1 (fixtures/papers/maydan-1.*.loop), built
//! with the builder. Each function mirrors its fixture file line by line, so
//! the expected results (written from the digest) can be checked before the
//! parser exists; once it does, the fixture files are parsed and compared
//! with these models.

use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::{CmpOp, CounterId, Expr, Program};

fn c(k: CounterId) -> Expr {
    e::counter(k)
}

fn n(v: i64) -> Expr {
    e::int(v)
}

fn times(k: i64, x: Expr) -> Expr {
    e::mul(n(k), x)
}

/// Every fixture of digest §1 that is a program, by file stem.
pub fn program(stem: &str) -> Option<Program> {
    let mut b = ProgramBuilder::new();
    match stem {
        "maydan-1.1-genaffine-raw" => {
            let nn = b.scalar("n").ok()?;
            let i2 = b.scalar("i2").ok()?;
            let a = b.array("a", vec![(n(0), n(221))]).ok()?;
            b.assign(Some("C1"), e::access(nn, vec![]), None, n(100))
                .ok()?;
            b.assign(Some("C2"), e::access(i2, vec![]), None, n(0))
                .ok()?;
            b.begin_for("i", n(1), n(10), 1).ok()?;
            b.assign(
                Some("U"),
                e::access(i2, vec![]),
                None,
                e::add(e::read(i2, vec![]), n(2)),
            )
            .ok()?;
            let sub_w = e::add(e::read(i2, vec![]), e::read(nn, vec![]));
            let sub_r = e::add(
                e::add(e::read(i2, vec![]), times(2, e::read(nn, vec![]))),
                n(1),
            );
            b.assign(
                Some("S"),
                e::access(a, vec![sub_w]),
                None,
                e::add(e::read(a, vec![sub_r]), n(3)),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.1-genaffine" => {
            let a = b.array("a", vec![(n(0), n(221))]).ok()?;
            let i = b.begin_for("i", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(times(2, c(i)), n(100))]),
                None,
                e::add(e::read(a, vec![e::add(times(2, c(i)), n(201))]), n(3)),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.1-nonaffine-dim" => {
            let a = b.array("a", vec![(n(0), n(400)), (n(0), n(41))]).ok()?;
            let i = b.begin_for("i", n(10), n(20), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::mul(c(i), c(i)), times(2, c(i))]),
                None,
                e::add(e::read(a, vec![n(3), e::add(times(2, c(i)), n(1))]), n(3)),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.1-symbolic" => {
            let p = b.param("n", Some(5)).ok()?;
            let a = b
                .array("a", vec![(n(0), e::add(times(2, e::param(p)), n(11)))])
                .ok()?;
            let i = b.begin_for("i", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(c(i), e::param(p))]),
                None,
                e::add(
                    e::read(a, vec![e::add(e::add(c(i), times(2, e::param(p))), n(1))]),
                    n(3),
                ),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.2-gcd" | "maydan-1.8-memo-key" => {
            let a = b.array("a", vec![(n(1), n(20))]).ok()?;
            let i = b.begin_for("i", n(1), n(10), 1).ok()?;
            let read = e::read(a, vec![c(i)]);
            let value = if stem == "maydan-1.2-gcd" {
                read
            } else {
                e::add(read, n(3))
            };
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(c(i), n(10))]),
                None,
                value,
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.8-memo-a" | "maydan-1.8-memo-b" => {
            let a = b.array("a", vec![(n(1), n(20))]).ok()?;
            let i = b.begin_for("i", n(1), n(10), 1).ok()?;
            let hi = if stem == "maydan-1.8-memo-a" { 10 } else { 20 };
            b.begin_for("j", n(1), n(hi), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(c(i), n(10))]),
                None,
                e::add(e::read(a, vec![c(i)]), n(3)),
            )
            .ok()?;
            b.end().ok()?;
            b.end().ok()?;
        }
        "maydan-1.3-svpc" => {
            let a = b.array("a", vec![(n(1), n(20)), (n(1), n(20))]).ok()?;
            let i1 = b.begin_for("i1", n(1), n(10), 1).ok()?;
            let i2 = b.begin_for("i2", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![c(i1), c(i2)]),
                None,
                e::read(a, vec![e::add(c(i2), n(10)), e::add(c(i1), n(9))]),
            )
            .ok()?;
            b.end().ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-bounds-distance" => {
            let a = b.array("a", vec![(n(0), n(110))]).ok()?;
            let i = b.begin_for("i", n(1), n(8), 1).ok()?;
            let j = b.begin_for("j", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(times(10, c(i)), c(j))]),
                None,
                e::add(
                    e::read(a, vec![e::add(times(10, e::add(c(i), n(2))), c(j))]),
                    n(7),
                ),
            )
            .ok()?;
            b.end().ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-burke-cytron" => {
            let j = b.param("j", Some(1)).ok()?;
            b.assume(e::cmp(CmpOp::Ge, e::param(j), n(1)));
            b.assume(e::cmp(CmpOp::Le, e::param(j), n(10)));
            let a = b.array("a", vec![(n(1), n(11)), (n(1), n(10))]).ok()?;
            let i = b.begin_for("i", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(c(i), n(1)), e::param(j)]),
                None,
                e::read(a, vec![c(i), e::param(j)]),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-direction" => {
            let a = b.array("a", vec![(n(0), n(20)), (n(0), n(10))]).ok()?;
            let i = b.begin_for("i", n(0), n(10), 1).ok()?;
            let j = b.begin_for("j", n(0), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![c(i), c(j)]),
                None,
                e::add(e::read(a, vec![times(2, c(i)), c(j)]), n(7)),
            )
            .ok()?;
            b.end().ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-distance" => {
            let a = b.array("a", vec![(n(-3), n(10))]).ok()?;
            let i = b.begin_for("i", n(0), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![c(i)]),
                None,
                e::add(e::read(a, vec![e::sub(c(i), n(3))]), n(7)),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-gcd-pruning" => {
            let p = b.param("N", Some(10)).ok()?;
            let a = b.array("a", vec![(n(1), e::add(e::param(p), n(1)))]).ok()?;
            let i = b.begin_for("i", n(1), e::param(p), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![e::add(c(i), n(1))]),
                None,
                e::read(a, vec![c(i)]),
            )
            .ok()?;
            b.end().ok()?;
        }
        "maydan-1.7-unused-index" => {
            let a = b.array("a", vec![(n(1), n(11))]).ok()?;
            b.begin_for("i", n(1), n(10), 1).ok()?;
            let j = b.begin_for("j", n(1), n(10), 1).ok()?;
            b.assign(
                Some("S"),
                e::access(a, vec![c(j)]),
                None,
                e::read(a, vec![e::add(c(j), n(1))]),
            )
            .ok()?;
            b.end().ok()?;
            b.end().ok()?;
        }
        _ => return None,
    }
    b.finish().ok()
}
