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
/// of its reads' quasts (boundary or interior, per neighbour): heat-3d's two
/// statements become 256. Their pairs share a few shapes.
#[test]
fn expanded_stencils_need_few_exact_problems() {
    for name in ["jacobi-2d", "heat-3d"] {
        let path = std::path::PathBuf::from(format!("fixtures/c/polybench/{name}.c"));
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
