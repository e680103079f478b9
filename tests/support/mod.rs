//! Shared by the integration tests (and the benchmark, through `#[path]`).
#![allow(dead_code)]

pub mod fixtures;
pub mod gen;
pub mod symbolic;

/// How many random cases a property test runs: `ARRAYFLOW_CASES`, else `default`.
pub fn cases(default: u64) -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every parameter of `p` at its default + `k`: a size the emitters
/// neither sample nor validate (storage tests).
pub fn defaults_plus(p: &arrayflow::model::Program, k: i64) -> Vec<(String, i64)> {
    p.params
        .iter()
        .zip(p.param_values(&[]).unwrap())
        .map(|(q, v)| (q.name.clone(), v + k))
        .collect()
}
