//! An extension's own rules composed with the core's: `dataflow_engine!`
//! with an `include_source!` of an `ascent_source!` written here. The rule
//! added says every reader may also read the initial value, so σ by this
//! engine must be σ by the core engine with every `initial` flag set, read
//! for read, on generated programs (ARRAYFLOW_CASES, default 100).

use arrayflow::dataflow::{analyze_with, Config};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::kinds::Kinds;

mod rules {
    ascent::ascent_source! {
        /// Every reader of the batch (read or update) also sees the initial value.
        everything_initial:

        initial(x) <-- ctx(c), for &(x, _) in c.reads.iter().chain(c.updates);
    }
}

arrayflow::dataflow_engine! {
    struct Initial;
    include_source!(rules::everything_initial);
}

#[test]
fn an_added_rule_runs_with_the_core_rules() {
    let cases: u64 = std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let plain = Kinds::core();
    let added = Kinds::core().with_engine(&Initial);
    assert_ne!(plain, added);
    let mut reads = 0;
    for seed in 0..cases {
        let program = generate(seed, &GenOptions::all(Size::Small));
        let config = Config {
            max_trips: 2,
            ..Config::default()
        };
        let (Ok(a), Ok(b)) = (
            analyze_with(&program, &config, &plain),
            analyze_with(&program, &config, &added),
        ) else {
            continue;
        };
        let a: Vec<_> = a
            .sorted()
            .map(|r| (r.operation(), r.access(), r.sources()))
            .collect();
        let b: Vec<_> = b
            .sorted()
            .map(|r| (r.operation(), r.access(), r.sources()))
            .collect();
        assert_eq!(a.len(), b.len(), "seed {seed}");
        for ((oa, xa, mut sa), (ob, xb, sb)) in a.into_iter().zip(b) {
            assert_eq!((oa, xa), (ob, xb));
            sa.initial = true;
            assert_eq!(sa, sb, "seed {seed}");
            reads += 1;
        }
    }
    assert!(reads > 0);
}
