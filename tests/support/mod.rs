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
