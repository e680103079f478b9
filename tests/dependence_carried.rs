//! `dependence::carried::loops` (relaxed problems first, memoised by the
//! references' shapes) against `carried::naive` (the exact tests on every
//! pair): the same loops on every fixture, on ARRAYFLOW_CASES generated
//! programs (default 200), and on expanded stencils, whose guarded copies of
//! one statement the relaxed problems must cover with a handful of tests.

mod support;

use arrayflow::dependence::carried;
use arrayflow::model::Program;
use std::collections::BTreeSet;

fn names(
    p: &Program,
    set: &std::collections::HashSet<arrayflow::model::CounterId>,
) -> BTreeSet<String> {
    set.iter()
        .map(|&c| format!("{}#{}", p.counter_decl(c).name, c.index()))
        .collect()
}

fn agree(p: &Program, what: &str) -> carried::Work {
    let (fast, work) = carried::loops(p);
    let naive = carried::naive(p);
    assert_eq!(names(p, &fast), names(p, &naive), "{what}");
    work
}

#[test]
fn fixtures_agree_with_the_exact_tests_on_every_pair() {
    let mut checked = 0;
    for path in support::fixtures::paths() {
        if let Some(p) = support::compile(&path) {
            agree(&p, &path.display().to_string());
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} fixtures compiled");
}

#[test]
fn generated_programs_agree() {
    let mut carrying = 0;
    for seed in 0..support::cases(200) {
        let p = support::generated(seed);
        agree(&p, &format!("generated program {seed}"));
        carrying += usize::from(!carried::naive(&p).is_empty());
    }
    // Not a vacuous comparison: most programs carry something.
    assert!(
        carrying * 2 > support::cases(200) as usize,
        "{carrying} carry a dependence"
    );
}

/// Expansion splits each stencil statement into one guarded copy per piece
/// of its reads' quasts (boundary or interior, per neighbour): heat-2d's two
/// statements become 32 (PolyBench's heat-3d's, 256). Their pairs share a
/// few shapes.
#[test]
fn expanded_stencils_need_few_exact_problems() {
    for name in ["jacobi2d", "heat2d"] {
        let path = std::path::PathBuf::from(format!("fixtures/c/kernels/{name}.loop"));
        let p = support::compile(&path).expect("the kernel compiles");
        let e = arrayflow::codegen::emit(&p, &Default::default()).expect("expanded");
        let work = agree(&e.program, name);
        assert!(work.pairs > 1000, "{name}: {work:?}");
        assert!(work.relaxed * 50 < work.pairs, "{name}: {work:?}");
        assert!(work.exact * 50 < work.pairs, "{name}: {work:?}");
        // The time loop carries the stencil; the space loops do not.
        let carried: BTreeSet<String> = (carried::loops(&e.program).0.iter())
            .map(|&c| e.program.counter_decl(c).name.clone())
            .collect();
        assert!(carried.contains("t"), "{name}: {carried:?}");
        assert!(
            !carried.contains("i") && !carried.contains("j"),
            "{name}: {carried:?}"
        );
    }
}

/// A `while` loop's direction stays `*`, which may be `=`: the loops inside
/// it may carry too. Here `k` carries `x` from S2 to S1 within one trip of
/// the `while`.
#[test]
fn a_while_direction_does_not_hide_the_loops_inside() {
    let text = "param N = 4;\nreal B[0..N];\nreal x;\n\
                for i = 0 to N do\n  while [w] ... do\n    for k = 0 to N do\n\
                      S1: B[i] = x;\n      S2: x = ...;\n    end\n  end\nend\n";
    let (p, d) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{d:?}"));
    let names: BTreeSet<String> = (carried::loops(&p).0.iter())
        .map(|&c| p.counter_decl(c).name.clone())
        .collect();
    assert!(names.contains("k"), "{names:?}");
    assert_eq!(names.len(), 3, "i (B and x), the while and k: {names:?}");
    agree(&p, "while");
}
