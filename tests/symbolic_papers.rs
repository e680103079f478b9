//! Symbolic σ against the papers' formulas, written here by hand from the
//! texts (maydan-digest.md §3: the Last Write Trees of the Feautrier
//! fixture, Figure 3, the loop-independent and degenerate nests; the matmul
//! kernel by hand), compared at every read instance of several parameter
//! vectors. The three examples of maximal-static-expansion.txt are outside
//! static control (a `while`, an unknown condition, non-affine subscripts):
//! their formulas (1)-(4) are sets of possible sources, checked in
//! symbolic_fada.rs; here, that they get sets and never quasts.

mod support;

use arrayflow::dataflow::{analyze, Config};
use arrayflow::model::Site;
use arrayflow::symbolic::{self, Outcome};
use support::fixtures::load;

type Want = fn(&[i64], &[i64]) -> Option<(&'static str, Vec<i64>)>;

/// The quast of read `read` of `label` equals `want(iteration, params)` at
/// every instance, at each parameter vector of `params`.
fn expect(rel: &str, label: &str, read: usize, params: &[&[i64]], want: Want) {
    let program = load(rel);
    let sym = symbolic::analyze(&program);
    let stmt = program
        .stmts()
        .iter()
        .find(|s| s.label == label)
        .unwrap()
        .id;
    let rf = sym
        .reads
        .iter()
        .find(|r| r.stmt == stmt && r.read == read)
        .unwrap();
    let Outcome::Exact(q) = &rf.outcome else {
        panic!("{rel}: {label} read {read}: {:?}", rf.outcome)
    };
    let mut seen = 0;
    for values in params {
        let named: Vec<(String, i64)> = program
            .params
            .iter()
            .zip(values.iter())
            .map(|(p, &v)| (p.name.clone(), v))
            .collect();
        let flow = analyze(
            &program,
            &Config {
                params: named,
                ..Config::default()
            },
        )
        .unwrap();
        for r in flow.iter() {
            if r.site() != Site::Stmt(stmt) || r.access() != read {
                continue;
            }
            let got = q.eval(&rf.counters, r.iter(), values).unwrap();
            let got = got.map(|(s, it)| (program.site_name(Site::Stmt(s)), it));
            let exp = want(r.iter(), values).map(|(s, it)| (s.to_string(), it));
            assert_eq!(
                got,
                exp,
                "{rel} {label} read {read} at {:?}, params {values:?}",
                r.iter()
            );
            seen += 1;
        }
    }
    assert!(seen > 0);
}

const FEAUTRIER: &str = "fixtures/papers/maydan-3.3-feautrier.loop";

#[test]
fn feautrier_fixture_matches_the_digest_table() {
    // Params (l, n); reads a[j,k-1], a[j,k+1], a[j-1,k], a[j+1,k].
    let ps: &[&[i64]] = &[&[2, 6], &[3, 5], &[1, 7], &[2, 3], &[4, 4]];
    expect(FEAUTRIER, "S", 0, ps, |x, _| {
        (x[2] >= 3).then(|| ("S", vec![x[0], x[1], x[2] - 1]))
    });
    expect(FEAUTRIER, "S", 1, ps, |x, p| {
        (x[2] <= p[1] - 2 && x[0] > 1).then(|| ("S", vec![x[0] - 1, x[1], x[2] + 1]))
    });
    expect(FEAUTRIER, "S", 2, ps, |x, _| {
        (x[1] >= 3).then(|| ("S", vec![x[0], x[1] - 1, x[2]]))
    });
    expect(FEAUTRIER, "S", 3, ps, |x, p| {
        (x[1] <= p[1] - 2 && x[0] > 1).then(|| ("S", vec![x[0] - 1, x[1] + 1, x[2]]))
    });
}

#[test]
fn figure_3_reads_the_previous_iteration() {
    expect(
        "fixtures/papers/maydan-3.6-fig3.loop",
        "R",
        0,
        &[&[]],
        |x, _| (x[1] >= 12).then(|| ("W", vec![x[0], x[1] - 1])),
    );
}

#[test]
fn loop_independent_tree_of_figure_4b() {
    expect(
        "fixtures/papers/maydan-3.4-loop-independent.loop",
        "R",
        0,
        &[&[]],
        |x, _| {
            if x[1] > 11 {
                Some(("W", vec![x[0], x[1] - 1]))
            } else if x[0] > 11 {
                Some(("W", vec![x[0] - 1, 15]))
            } else {
                None
            }
        },
    );
}

#[test]
fn full_degeneracy_gives_bottom_when_the_write_loop_is_empty() {
    // Params (m, n).
    expect(
        "fixtures/papers/maydan-3.4-full-degeneracy.loop",
        "R",
        0,
        &[&[3, 0], &[3, 2], &[1, 1], &[2, 5], &[4, -1]],
        |x, p| (x[0] > 1 && p[1] >= 1).then(|| ("W", vec![x[0] - 1, p[1]])),
    );
}

#[test]
fn partial_degeneracy_uses_max_of_the_bounds() {
    expect(
        "fixtures/papers/maydan-3.4-partial-degeneracy.loop",
        "R",
        0,
        &[&[10], &[12], &[13], &[5], &[15], &[16]],
        |x, p| {
            if x[1] > 12 {
                Some(("W", vec![x[0], x[1] - 1]))
            } else if x[0] > p[0].max(12) {
                Some(("W", vec![x[0] - 1, x[0] - 1]))
            } else {
                None
            }
        },
    );
}

#[test]
fn matmul_accumulates_from_the_previous_k_or_the_initialisation() {
    let ps: &[&[i64]] = &[&[1], &[3], &[5]];
    let m = "fixtures/c/kernels/matmul.loop";
    expect(m, "T", 0, ps, |x, _| {
        Some(if x[2] >= 1 {
            ("T", vec![x[0], x[1], x[2] - 1])
        } else {
            ("S", vec![x[0], x[1]])
        })
    });
    expect(m, "T", 1, ps, |_, _| None);
    expect(m, "T", 2, ps, |_, _| None);
}

/// Outside static control: never a quast, but the sets of possible sources
/// (their formulas are checked in symbolic_fada.rs).
#[test]
fn mse_examples_get_sets_not_quasts() {
    let cases = [
        ("fixtures/papers/mse-example1.loop", "S", "`while`"),
        ("fixtures/papers/mse-example1.loop", "R", "`while`"),
        ("fixtures/papers/mse-example2.loop", "S", "not affine"),
        ("fixtures/papers/mse-example3.loop", "R", "not affine"),
    ];
    for (rel, label, why) in cases {
        let program = load(rel);
        let sym = symbolic::analyze(&program);
        let stmt = program
            .stmts()
            .iter()
            .find(|s| s.label == label)
            .unwrap()
            .id;
        let r = sym.reads.iter().find(|r| r.stmt == stmt).unwrap();
        assert!(
            matches!(&r.outcome, Outcome::Possible(_)),
            "{rel} {label} ({why}): {:?}",
            r.outcome
        );
    }
}

#[test]
fn hover_line_reads_like_the_papers() {
    let program = load("fixtures/c/kernels/matmul.loop");
    let t = program.stmts().iter().find(|s| s.label == "T").unwrap().id;
    assert_eq!(
        symbolic::hover_line(&program, Site::Stmt(t), 0).as_deref(),
        Some("T(i, j, k - 1) if k >= 1, else S(i, j)")
    );
}

/// By hand: `R` reads `a[i]` after `W` wrote `a[2 * i]` in the same loop,
/// so W(i / 2) where i is even (W(0) in the same iteration at i = 0), the
/// initial value where i is odd: a quast split by a stride.
#[test]
fn a_source_by_parity_is_a_stride_split() {
    let ps: &[&[i64]] = &[&[8], &[0], &[1], &[5], &[13]];
    expect(
        "fixtures/papers/maydan-3.8-related-work.loop",
        "R",
        0,
        ps,
        |x, _| (x[0] % 2 == 0).then(|| ("W", vec![x[0] / 2])),
    );
    let program = load("fixtures/papers/maydan-3.8-related-work.loop");
    let sym = symbolic::analyze(&program);
    let Outcome::Exact(q) = &sym.reads[0].outcome else {
        panic!("{:?}", sym.reads[0].outcome)
    };
    assert_eq!(
        symbolic::Names::new(&program).line(q),
        "W(i / 2) if i mod 2 = 0, else initial"
    );
}

/// By hand (Figure 13 after substitution): in iteration j, `work[i]` was
/// written by W1 at (i + 1) / 2 where i is odd (2i' - 1 = i), by W2 at i / 2
/// where i is even; `work[i + N2P]` likewise by the parity of i + N2P.
#[test]
fn figure_13_sources_by_parity() {
    let rel = "fixtures/papers/maydan-3.8-fig13-subst.loop";
    let ps: &[&[i64]] = &[&[7, 4], &[5, 3], &[3, 1], &[9, 5]];
    expect(rel, "R1", 0, ps, |x, _| {
        let (j, i) = (x[0], x[1]);
        Some(match i % 2 {
            0 => ("W2", vec![j, i / 2]),
            _ => ("W1", vec![j, (i + 1) / 2]),
        })
    });
    expect(rel, "R2", 0, ps, |x, p| {
        let (j, c) = (x[0], x[1] + p[1]);
        Some(match c % 2 {
            0 => ("W2", vec![j, c / 2]),
            _ => ("W1", vec![j, (c + 1) / 2]),
        })
    });
}

/// By hand: `a[i + n] = a[i + 2n + 1]` for i in 1..10 over `a[0..2n + 11]`
/// reads a cell written earlier only where n + 1 < 0, and there the write
/// at i = 1 (`a[1 + n]`) leaves the declared range, so the run stops. The
/// source is the initial value for every run that completes, which is
/// every n >= -1.
#[test]
fn a_dependence_only_where_the_run_stops_is_no_source() {
    let rel = "fixtures/papers/maydan-1.1-symbolic.loop";
    let ps: &[&[i64]] = &[&[5], &[-1], &[0], &[30]];
    expect(rel, "S", 0, ps, |_, _| None);
    let program = load(rel);
    let sym = symbolic::analyze(&program);
    let names = symbolic::Names::new(&program);
    let shown: Vec<String> = (sym.in_range.iter())
        .map(|a| symbolic::quast::atom_with(a, &|v| names.var(v).to_string()))
        .collect();
    assert_eq!(shown, ["n >= -1"]);
}
