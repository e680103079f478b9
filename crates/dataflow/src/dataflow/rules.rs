//! The rule files of `rules/` (at the crate root, next to `src/`), compiled
//! as ascent sources; [`crate::dataflow_engine!`] composes them with
//! `include_source!`. Public so that an engine built in another crate
//! includes the same sources: `dataflow_core`, `dataflow_must`,
//! `dataflow_may`, `dataflow_update` (docs/rules.md §3, §5).

#[path = "../../rules/core.rs"]
pub mod core_rules;
#[path = "../../rules/may.rs"]
pub mod may;
#[path = "../../rules/must.rs"]
pub mod must;
#[path = "../../rules/update.rs"]
pub mod update;
