//! The ascent engine, and the public plain-Rust reference
//! (`dataflow::reference`), agree with the naive crepe transcription of the
//! definition on random programs from `arrayflow::gen`, at their default
//! sizes and at zero and negative parameter values. ARRAYFLOW_CASES sets the
//! number of cases.

#[allow(dead_code)]
mod naive;
mod support;

use arrayflow::dataflow::{analyze, Config, Flow, Sources};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{Operation, Program};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn engine(flow: &Flow) -> BTreeMap<(Operation, usize), Sources> {
    flow.iter()
        .map(|r| ((r.operation(), r.access()), r.sources()))
        .collect()
}

fn cases() -> u32 {
    support::cases(300).try_into().unwrap_or(u32::MAX)
}

fn check(program: &Program, params: &[(String, i64)], max_trips: u32) -> Result<(), TestCaseError> {
    let config = Config {
        params: params.to_vec(),
        max_trips,
        ..Config::default()
    };
    // A static condition that divides by zero at these sizes is not a
    // program to compare on.
    let flow = match analyze(program, &config) {
        Err(arrayflow::dataflow::DataflowError::Eval { .. }) => {
            return Err(TestCaseError::reject("eval"))
        }
        other => other.map_err(|e| TestCaseError::fail(e.to_string()))?,
    };
    let want = naive::sigma(program, params, max_trips);
    let got = engine(&flow);
    prop_assert_eq!(
        &got,
        &want,
        "program: {}",
        arrayflow::print::program(program)
    );
    // The public plain-Rust reference (what extension crates test their
    // kinds against) says the same as the crepe transcription.
    let plain = arrayflow::dataflow::reference::sigma(
        program,
        params,
        max_trips,
        &arrayflow::dataflow::reference::core_cells,
    )
    .map_err(TestCaseError::fail)?;
    prop_assert_eq!(&plain, &want, "reference vs naive");
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
    fn engine_agrees_with_naive(seed in any::<u64>(), max_trips in 0u32..4, sizes in 0u8..4) {
        let size = if seed % 4 == 0 { Size::Medium } else { Size::Small };
        let program = generate(seed, &GenOptions::all(size));
        // Defaults, or every parameter at -1, 0 or 1 when the program's
        // assumptions allow it.
        let small: Vec<(String, i64)> = program
            .params
            .iter()
            .map(|p| (p.name.clone(), i64::from(sizes) - 2))
            .collect();
        let params = if sizes > 0 && program.param_values(&small).is_ok() {
            small
        } else {
            Vec::new()
        };
        check(&program, &params, max_trips)?;
    }
}
