//! Under a memory budget with no room for a second copy of the facts, the
//! lowering still runs in chunks where they are written in place
//! (`facts::lower::place` holds no copy), and only the stitched chunks
//! (`split`) are refused (the loop is then walked sequentially); the facts
//! are the sequential walk's either way.
//!
//! Its own binary: the budget needs the counting allocator, and the loop
//! counters (`placed_loops`, `split_loops`) must see no other test.

use arrayflow::budget;
use arrayflow::dataflow::{with_threads, Config};
use arrayflow::facts::{lower_split, placed_loops, split_loops, Frame, SplitAt};

#[global_allocator]
static ALLOC: budget::Counting<std::alloc::System> = budget::Counting::new(std::alloc::System);

fn compile(text: &str) -> arrayflow::model::Program {
    let (program, _) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    program.expect("the program checks")
}

/// A digest of every relation (`Facts`' `Debug` form, hashed as it is
/// written): two lowerings compared without holding both.
fn digest(f: &arrayflow::facts::Facts) -> u64 {
    use std::hash::Hasher;
    struct Sink(std::collections::hash_map::DefaultHasher);
    impl std::fmt::Write for Sink {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut sink = Sink(Default::default());
    std::fmt::write(&mut sink, format_args!("{f:?}")).expect("formats");
    sink.0.finish()
}

/// Lowers at `threads` with chunks forced (no size threshold); the digest
/// of the facts.
fn lower(
    threads: usize,
    program: &arrayflow::model::Program,
    config: &Config,
) -> Result<u64, String> {
    let kinds = arrayflow::kinds::Kinds::core();
    let at = SplitAt {
        instances: 0,
        ..SplitAt::default()
    };
    with_threads(threads, || {
        lower_split(program, config, kinds.all(), false, &Frame::default(), at)
            .map(|f| digest(&f))
            .map_err(|e| e.to_string())
    })
    .expect("a pool")
}

/// At `N = n`, a budget of 1.5 times what the facts take: room for them,
/// not for a copy beside them (the count's estimate, `Count::bytes`). The
/// facts must be megabytes: the counting allocator's count lags by up to
/// 256 KB a thread.
fn tight(program: &arrayflow::model::Program, n: i64) -> Config {
    let base = Config {
        params: vec![("N".to_string(), n)],
        max_instances: 10_000_000,
        ..Config::default()
    };
    let count = arrayflow::facts::count::of(program, &base)
        .expect("within budget")
        .expect("counted");
    Config {
        max_memory: count.bytes(false) * 3 / 2,
        ..base
    }
}

#[test]
fn a_tight_budget_refuses_the_stitch_but_not_the_chunks_written_in_place() {
    // A loop written in place (matmul), then one only stitched: 7 trips,
    // fewer than 4 a thread.
    let alike = compile(
        "param N = 4;\nreal C[0..N - 1, 0..N - 1];\nreal A[0..N - 1, 0..N - 1];\nreal B[0..N - 1, 0..N - 1];\n\
         for i = 0 to N - 1 do\n  for j = 0 to N - 1 do\n    S: C[i, j] = 0;\n    for k = 0 to N - 1 do\n      \
         T: C[i, j] += A[i, k] * B[k, j];\n    end\n  end\nend\n",
    );
    let few = compile(
        "param N = 4;\nreal A[0..6, 0..N - 1];\nreal B[0..N - 1, 0..N - 1];\n\
         for i = 0 to 6 do\n  for j = 0 to N - 1 do\n    for k = 0 to N - 1 do\n      \
         S: A[i, j] = A[i, j] + B[j, k];\n    end\n  end\nend\n",
    );
    let cases = [("alike", &alike, 40, true), ("few trips", &few, 120, false)];
    for (name, program, n, placed) in cases {
        let config = tight(program, n);
        assert!(config.max_memory > 2 << 20, "{name}: megabytes of facts");
        let one = lower(1, program, &config).expect("fits the budget");
        let (placed0, split0) = (placed_loops(), split_loops());
        let two = lower(2, program, &config).expect("fits the budget at 2 threads");
        assert_eq!(one, two, "{name}: the facts differ");
        assert_eq!(
            split_loops(),
            split0,
            "{name}: stitched under a tight budget"
        );
        assert_eq!(
            placed_loops() > placed0,
            placed,
            "{name}: written in place or not"
        );
        // With room for the copy, the guarded loop is stitched.
        let roomy = Config {
            max_memory: u64::MAX,
            ..config
        };
        let split1 = split_loops();
        assert_eq!(lower(2, program, &roomy).expect("fits"), one, "{name}");
        assert_eq!(
            split_loops() > split1,
            !placed,
            "{name}: stitched with room"
        );
    }
}
