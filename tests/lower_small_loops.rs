//! The parallel lowering skips top-level loops too small to pay for their
//! chunks' setup (a copy of per-site tables each): a program of many small
//! loops is walked sequentially (100,000 loops of 4 trips took over ten
//! minutes in `facts` when each was cut into chunks), a large loop still
//! runs in chunks. Its own binary: the loop counters must see no other
//! test.

use arrayflow::dataflow::{with_threads, Config};
use arrayflow::facts::{lower_split, placed_loops, split_loops, Frame, SplitAt};

fn compile(text: &str) -> arrayflow::model::Program {
    let (program, _) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    program.expect("the program checks")
}

/// The facts (their `Debug` form) at `threads`, with the real thresholds
/// but for the program size (any program is large enough); the loops
/// placed or stitched meanwhile.
fn lower(threads: usize, program: &arrayflow::model::Program) -> (String, u64) {
    let kinds = arrayflow::kinds::Kinds::core();
    let at = SplitAt {
        instances: 1,
        ..SplitAt::default()
    };
    let before = placed_loops() + split_loops();
    let facts = with_threads(threads, || {
        lower_split(
            program,
            &Config::default(),
            kinds.all(),
            false,
            &Frame::default(),
            at,
        )
        .map(|f| format!("{f:?}"))
        .map_err(|e| e.to_string())
    })
    .expect("a pool")
    .expect("lowers");
    (facts, placed_loops() + split_loops() - before)
}

#[test]
fn small_loops_are_walked_sequentially_large_ones_in_chunks() {
    // 300 loops of 4 trips and one statement: 4 operations each, against
    // 300 sites.
    let mut small = String::from("real A[1..5];\n");
    for k in 0..300 {
        small.push_str(&format!("for i = 1 to 4 do S{k}: A[i] = A[i + 1]; end\n"));
    }
    let small = compile(&small);
    let (sequential, _) = lower(1, &small);
    let (parallel, cut) = lower(2, &small);
    assert_eq!(cut, 0);
    assert_eq!(parallel, sequential);
    // One loop of 64 trips: 64 operations against 1 site.
    let large = compile("real A[1..65];\nfor i = 1 to 64 do S: A[i] = A[i + 1]; end\n");
    let (sequential, _) = lower(1, &large);
    let (parallel, cut) = lower(2, &large);
    assert_eq!(cut, 1);
    assert_eq!(parallel, sequential);
}
