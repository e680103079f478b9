//! The ascent engine agrees with the naive crepe transcription of the
//! definition on random programs. ARRAYFLOW_CASES sets the number of cases.

mod gen;
#[allow(dead_code)]
mod naive;

use arrayflow::dataflow::{analyze, Config, Flow, Sources};
use arrayflow::model::{Operation, Program};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn engine(flow: &Flow) -> BTreeMap<(Operation, usize), Sources> {
    flow.iter()
        .map(|r| ((r.operation(), r.access()), r.sources()))
        .collect()
}

fn cases() -> u32 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn check(program: &Program, max_trips: u32) -> Result<(), TestCaseError> {
    let config = Config {
        max_trips,
        ..Config::default()
    };
    let flow = analyze(program, &config).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let want = naive::sigma(program, &[], max_trips);
    let got = engine(&flow);
    prop_assert_eq!(&got, &want, "program: {:#?}", program);
    // Every read can also be looked up by its operation.
    for ((op, a), s) in &want {
        let found = flow.sources(op, *a);
        prop_assert_eq!(found.as_ref(), Some(s));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]
    #[test]
    fn engine_agrees_with_naive(seed in any::<u64>(), max_trips in 0u32..4) {
        let program = gen::program(&mut gen::Rng::new(seed));
        check(&program, max_trips)?;
    }
}
