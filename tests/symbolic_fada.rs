//! Possible sources where control is not static (`symbolic::fada`),
//! checked against bounded σ (itself checked against a naive reference in
//! dataflow_agree.rs) at parameter vectors and `while` trip caps, on the
//! paper fixtures and generated programs with `while` loops, unknown and
//! data-dependent conditions and non-affine subscripts (60 by default;
//! ARRAYFLOW_CASES raises it); and on the three examples of
//! maximal-static-expansion.txt against its formulas (1)-(4), checked by
//! hand.

mod support;

use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{Program, Site, StmtId};
use arrayflow::symbolic::{self, fada::Possible, Outcome};
use support::fixtures::{load, loop_files};
use support::symbolic::{compare_possible, vectors};

fn paper(name: &str) -> Program {
    load(format!("fixtures/papers/{name}"))
}

/// Possible-source sets compared at every vector, trips 1..=3.
fn check(program: &Program, sym: &symbolic::Symbolic) -> usize {
    let mut n = 0;
    for v in vectors(program) {
        for trips in 1..=3 {
            n += compare_possible(program, sym, &v, trips).unwrap_or(0);
        }
    }
    n
}

#[test]
fn paper_fixtures_agree_with_bounded_sigma() {
    let paths = loop_files("fixtures/papers");
    let (mut sets, mut compared) = (0, 0);
    for path in paths {
        let program = load(&path);
        let sym = symbolic::analyze(&program);
        sets += sym
            .reads
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Possible(_)))
            .count();
        compared += check(&program, &sym);
    }
    eprintln!("{sets} reads with possible-source sets, {compared} read instances compared");
    assert!(sets >= 4, "{sets} sets");
    assert!(compared > 1_000, "{compared} compared");
}

#[test]
fn generated_programs_agree_with_bounded_sigma() {
    let cases = support::cases(60);
    let (mut sets, mut fallback, mut compared) = (0, 0, 0);
    for seed in 0..cases {
        let program = generate(seed, &GenOptions::all(Size::Small));
        let sym = symbolic::analyze(&program);
        for r in &sym.reads {
            match &r.outcome {
                Outcome::Possible(_) => sets += 1,
                Outcome::Fallback(_) => fallback += 1,
                Outcome::Exact(_) => {}
            }
        }
        compared += check(&program, &sym);
    }
    eprintln!("{sets} sets, {fallback} fallbacks, {compared} read instances compared");
    assert!(sets > fallback, "{sets} sets against {fallback} fallbacks");
}

/// The sets of one read of `label`.
fn set<'s>(program: &Program, sym: &'s symbolic::Symbolic, label: &str) -> &'s Possible {
    let r = sym
        .reads
        .iter()
        .find(|r| program.site_name(Site::Stmt(r.stmt)) == label)
        .unwrap();
    match &r.outcome {
        Outcome::Possible(p) => p,
        other => panic!("{label}: {other:?}"),
    }
}

fn stmt(program: &Program, label: &str) -> StmtId {
    program
        .stmts()
        .iter()
        .find(|s| s.label == label)
        .unwrap()
        .id
}

fn counters(
    sym: &symbolic::Symbolic,
    program: &Program,
    label: &str,
) -> Vec<arrayflow::model::CounterId> {
    let r = sym
        .reads
        .iter()
        .find(|r| program.site_name(Site::Stmt(r.stmt)) == label)
        .unwrap();
    r.counters.clone()
}

/// Example 1, formula (1): σ(S(i, w)) = {S(i, w-1)} if w > 0, else {T(i)};
/// σ(R(i)) = {T(i)} ∪ {S(i, w) : w ≥ 0}. Checked for every trip count up
/// to 12, past any bounded run's cap.
#[test]
fn mse_example1_formula() {
    let p = paper("mse-example1.loop");
    let sym = symbolic::analyze(&p);
    let (s, t, r) = (stmt(&p, "S"), stmt(&p, "T"), stmt(&p, "R"));
    let at_s = set(&p, &sym, "S");
    let at_r = set(&p, &sym, "R");
    let (cs, cr) = (counters(&sym, &p, "S"), counters(&sym, &p, "R"));
    let _ = r;
    for n in 1..=6 {
        for i in 1..=n {
            for w in 0..12 {
                for i2 in 0..=n + 1 {
                    for w2 in -1..14 {
                        let want = i2 == i && w > 0 && w2 == w - 1;
                        assert_eq!(
                            at_s.contains(&cs, &[i, w], &[n], Some((s, &[i2, w2]))),
                            want
                        );
                        let want = i2 == i && w2 >= 0;
                        assert_eq!(at_r.contains(&cr, &[i], &[n], Some((s, &[i2, w2]))), want);
                    }
                    assert_eq!(
                        at_s.contains(&cs, &[i, w], &[n], Some((t, &[i2]))),
                        i2 == i && w == 0
                    );
                    assert_eq!(at_r.contains(&cr, &[i], &[n], Some((t, &[i2]))), i2 == i);
                }
                assert!(!at_s.contains(&cs, &[i, w], &[n], None));
            }
            assert!(!at_r.contains(&cr, &[i], &[n], None));
        }
    }
}

/// Example 2, formula (2): for j ≤ N, {S(i', j') : 1 ≤ i' ≤ 2N ∧ 1 ≤ j' < j
/// ∧ i' - j' = i - j}; for j > N, {S(i', j') : 1 ≤ i' ≤ 2N ∧ N < j' < j ∧
/// i' - j' = i - j} ∪ {T(i', N) : 1 ≤ i' ≤ i ∧ i' = i - j + N}. The paper
/// leaves out the initial value: by hand, A[i - j + 2N] is written before
/// S(i, j) by no must-write (T) when j ≤ N or when i - j + N < 1.
#[test]
fn mse_example2_formula() {
    let p = paper("mse-example2.loop");
    let sym = symbolic::analyze(&p);
    let (s, t) = (stmt(&p, "S"), stmt(&p, "T"));
    let at = set(&p, &sym, "S");
    let c = counters(&sym, &p, "S");
    for n in 1..=5 {
        for i in 1..=2 * n {
            for j in 1..=2 * n {
                for i2 in 0..=2 * n + 1 {
                    for j2 in 0..=2 * n + 1 {
                        let inside = (1..=2 * n).contains(&i2) && i2 - j2 == i - j;
                        let want = inside
                            && if j <= n {
                                1 <= j2 && j2 < j
                            } else {
                                n < j2 && j2 < j
                            };
                        assert_eq!(
                            at.contains(&c, &[i, j], &[n], Some((s, &[i2, j2]))),
                            want,
                            "N={n} S({i},{j}) from S({i2},{j2})"
                        );
                        let want = j > n && j2 == n && 1 <= i2 && i2 <= i && i2 == i - j + n;
                        assert_eq!(
                            at.contains(&c, &[i, j], &[n], Some((t, &[i2, j2]))),
                            want,
                            "N={n} S({i},{j}) from T({i2},{j2})"
                        );
                    }
                }
                let initial = j <= n || i - j + n < 1;
                assert_eq!(at.contains(&c, &[i, j], &[n], None), initial);
            }
        }
    }
}

/// Example 3, formula (4): σ(R(i)) = {S(i)} ∪ {T(i, j) : 1 ≤ j ≤ N}.
#[test]
fn mse_example3_formula() {
    let p = paper("mse-example3.loop");
    let sym = symbolic::analyze(&p);
    let (s, t) = (stmt(&p, "S"), stmt(&p, "T"));
    let at = set(&p, &sym, "R");
    let c = counters(&sym, &p, "R");
    for n in 1..=6 {
        for i in 1..=n {
            for i2 in 0..=n + 1 {
                assert_eq!(at.contains(&c, &[i], &[n], Some((s, &[i2]))), i2 == i);
                for j2 in 0..=n + 1 {
                    let want = i2 == i && (1..=n).contains(&j2);
                    assert_eq!(at.contains(&c, &[i], &[n], Some((t, &[i2, j2]))), want);
                }
            }
            assert!(!at.contains(&c, &[i], &[n], None));
        }
    }
}
