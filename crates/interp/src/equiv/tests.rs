//! Equivalence on programs built by hand: Example 1 of the maximal static
//! expansion paper against its expansion (Figure 3) and wrong variants. The
//! fixture tests (tests/equiv.rs) do the same from `.loop` files.

use super::*;
use crate::interp::tests::example1;
use crate::model::builder::{e, ProgramBuilder};
use crate::model::{Cond, Span};

/// Which expansion of Example 1 to build.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// Figure 3 with a copy-out, and a `doall` outer loop.
    Correct,
    /// No copy-out: `x` keeps its initial value.
    NoCopyOut,
    /// `R` reads the copy of iteration 1.
    WrongCopy,
}

fn expanded(v: Variant) -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(5)).unwrap();
    let x = b.scalar("x").unwrap();
    let xe = b.array("x_e", vec![(e::int(1), e::param(n))]).unwrap();
    let i = b
        .begin_for_at("i", e::int(1), e::param(n), 1, true, Span::NONE)
        .unwrap();
    let xi = || vec![e::counter(i)];
    b.assign(Some("T"), e::access(xe, xi()), None, e::unknown())
        .unwrap();
    b.begin_while(Some("w"), Cond::Unknown).unwrap();
    let fx = e::call("f", vec![e::read(xe, xi())]);
    b.assign(Some("S"), e::access(xe, xi()), None, fx).unwrap();
    b.end().unwrap();
    let r = if v == Variant::WrongCopy {
        vec![e::int(1)]
    } else {
        xi()
    };
    b.call(Some("R"), "use", vec![e::read(xe, r)]).unwrap();
    b.end().unwrap();
    if v != Variant::NoCopyOut {
        b.assign_at(
            None,
            true,
            e::access(x, vec![]),
            None,
            e::read(xe, vec![e::param(n)]),
            Span::NONE,
        );
    }
    b.finish().unwrap()
}

fn compare(b: &Program) -> Verdict {
    let o = EquivOptions {
        seeds: 20,
        ..EquivOptions::default()
    };
    equiv(&example1(), b, &o).unwrap()
}

#[test]
fn a_program_is_equivalent_to_itself_and_to_its_expansion() {
    let Verdict::Agree(a) = compare(&example1()) else {
        panic!("a program differs from itself")
    };
    assert_eq!(a.seeds, 20);
    assert!(a.reads > 20 * 5);
    assert!(
        matches!(compare(&expanded(Variant::Correct)), Verdict::Agree(_)),
        "{:?}",
        compare(&expanded(Variant::Correct))
    );
}

#[test]
fn a_missing_copy_out_is_caught_in_the_final_contents() {
    let Verdict::Differ(m) = compare(&expanded(Variant::NoCopyOut)) else {
        panic!("missing copy-out not detected")
    };
    assert_eq!(m.seed, 0);
    assert_eq!(m.what, "final contents of x");
    let expected = m.expected.unwrap();
    assert!(expected.writer.starts_with("S[5, ") || expected.writer == "T[5]");
    assert_eq!(m.actual.unwrap().writer, "initial");
}

#[test]
fn a_read_of_the_wrong_copy_is_caught() {
    let Verdict::Differ(m) = compare(&expanded(Variant::WrongCopy)) else {
        panic!("wrong copy not detected")
    };
    // R[1] reads x_e[1], rightly; R[2] is the first read that goes wrong.
    assert!(m.what.starts_with("read 0 of R[2]"), "{}", m.what);
    let (expected, actual) = (m.expected.clone().unwrap(), m.actual.clone().unwrap());
    assert!(expected.writer.starts_with("S[2, ") || expected.writer == "T[2]");
    assert!(actual.writer.starts_with("S[1, ") || actual.writer == "T[1]");
    let text = m.to_string();
    assert!(text.contains("expected (A)") && text.contains("actual   (B)"));
}

#[test]
fn unmatched_labels_and_missing_arrays_are_errors() {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    b.assign(Some("Q.1"), e::access(x, vec![]), None, e::int(0))
        .unwrap();
    let p = b.finish().unwrap();
    let err = equiv(&example1(), &p, &EquivOptions::default()).unwrap_err();
    assert!(err.message.contains("`Q.1`") && err.in_b, "{}", err.message);
    let err = equiv(
        &p,
        &ProgramBuilder::new().finish().unwrap(),
        &EquivOptions::default(),
    )
    .unwrap_err();
    assert!(err.message.contains("`x`"), "{}", err.message);
}
