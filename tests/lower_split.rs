//! The lowering of a top-level loop in parallel chunks (`facts::lower`'s
//! `place` and `split`) makes exactly the facts of the sequential walk:
//! every relation, the cell table when kept, and the same error when a
//! budget runs out.
//!
//! The oracle is the sequential walk (one thread), which the rules engine's
//! results rest on (tests/dataflow_agree.rs checks σ from it against the
//! naive reference). Chunks are forced on every program (no size
//! threshold) at 2, 3 and 5 threads, so a loop of a few trips is cut into
//! chunks of one or two iterations: open ends at every chunk border. Loops
//! of at least 4 trips per thread whose trips are alike are written in
//! place (`place`), the others stitched (`split`); the chunks written in
//! place flush their scratch after every trip (2 threads), after a few
//! instances (5 threads) or only at their end (3 threads).
//! Programs: every fixture, and generated programs with every form
//! (unknown conditions, `while` loops, non-affine and compound accesses:
//! guards whose scopes the chunks open), 60 by default, more with
//! `ARRAYFLOW_CASES`; each at its default sizes and with budgets of access
//! instances that run out part-way.

mod support;

use arrayflow::dataflow::{with_threads, Config};
use arrayflow::facts::{
    lower_split, place_mispredicted, placed_loops, split_loops, Facts, Frame, SplitAt,
};
use arrayflow::model::Program;

type Lowered = Result<Facts, String>;

fn lower(threads: usize, program: &Program, config: &Config, keep: bool) -> Lowered {
    let kinds = arrayflow::kinds::Kinds::core();
    let at = match threads {
        1 => SplitAt {
            instances: u64::MAX,
            ..SplitAt::default()
        },
        2 => SplitAt {
            instances: 0,
            flush: 0,
            place_trips: 0,
        },
        3 => SplitAt {
            instances: 0,
            ..SplitAt::default()
        },
        _ => SplitAt {
            instances: 0,
            flush: 3,
            place_trips: 0,
        },
    };
    with_threads(threads, || {
        lower_split(program, config, kinds.all(), keep, &Frame::default(), at)
            .map_err(|e| e.to_string())
    })
    .expect("a pool")
}

/// Compares the split lowering with the sequential one on `program`;
/// returns how many lowerings made several operations (where a split
/// could happen).
fn compare(name: &str, program: &Program) -> usize {
    let mut split = 0;
    for keep in [false, true] {
        let base = Config {
            max_instances: 2_000_000,
            ..Config::default()
        };
        let one = lower(1, program, &base, keep);
        let mut budgets = vec![base.max_instances];
        if let Ok(f) = &one {
            let n = f.n_accs() as u64;
            budgets.extend([n / 2, n.saturating_sub(1)]);
            split += usize::from(f.n_ops() > 1);
        }
        for max in budgets {
            let config = Config {
                max_instances: max,
                ..base.clone()
            };
            let one = lower(1, program, &config, keep);
            for threads in [2, 3, 5] {
                let other = lower(threads, program, &config, keep);
                match (&one, &other) {
                    (Ok(a), Ok(b)) => assert!(
                        a == b,
                        "{name}, budget {max}, keep {keep}, {threads} threads: the facts differ"
                    ),
                    (a, b) => assert_eq!(
                        a.as_ref().err(),
                        b.as_ref().err(),
                        "{name}, budget {max}, keep {keep}, {threads} threads"
                    ),
                }
            }
        }
    }
    split
}

#[test]
fn fixtures_lower_the_same_in_chunks() {
    let mut programs = 0;
    let mut split = 0;
    for path in support::fixtures::paths() {
        if let Some(program) = support::fixtures::compile(&path) {
            programs += 1;
            split += compare(&path.display().to_string(), &program);
        }
    }
    assert!(programs > 50, "{programs} fixtures compiled");
    assert!(split > 100, "{split} lowerings with several operations");
    assert!(
        split_loops() > 100,
        "{} loops stitched from chunks",
        split_loops()
    );
    assert!(
        placed_loops() > 100,
        "{} loops written in place",
        placed_loops()
    );
    assert_eq!(place_mispredicted(), 0, "chunks sized wrong");
}

#[test]
fn generated_programs_lower_the_same_in_chunks() {
    use arrayflow::gen::{generate, GenOptions, Size};
    for seed in 0..support::cases(60) {
        let size = if seed % 3 == 0 {
            Size::Medium
        } else {
            Size::Small
        };
        let program = generate(seed, &GenOptions::all(size));
        compare(&format!("generated program {seed}"), &program);
    }
    assert_eq!(place_mispredicted(), 0, "chunks sized wrong");
}

/// Programs whose later chunks cannot be walked on their own: a read
/// outside the dense layout (the cell is numbered on use) or a subscript
/// that overflows (an evaluation error) late in the loop. The first chunk is
/// walked in place, so the rest must be walked after it, sequentially, to
/// give the same facts or the same error.
#[test]
fn chunks_that_fail_fall_back_after_the_first() {
    let texts = [
        "param N = 12;\nreal A[0..N - 1];\nfor i = 0 to N - 1 do\n  S: A[i] = A[i + 1] + 1;\nend\n",
        "param N = 12;\nreal A[0..N - 1];\nreal B[0..N - 1];\nfor i = 0 to N - 1 do\n  for j = 0 to 2 do\n    S: A[i] = A[i] + B[2 * i - 12];\n  end\nend\n",
        "param N = 12;\nreal A[0..N - 1];\nfor i = 0 to N - 1 do\n  S: A[i] = A[4611686018427387904 * (i - 9)];\nend\n",
    ];
    for text in texts {
        let (program, _) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
        let program = program.expect("the program checks");
        compare(text, &program);
    }
}
