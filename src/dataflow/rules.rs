//! The rule files of `rules/` (at the crate root, next to `src/`), compiled
//! as ascent sources; [`super::engine`] composes them with `include_source!`.

#[path = "../../rules/core.rs"]
pub mod core_rules;
#[path = "../../rules/may.rs"]
pub mod may;
#[path = "../../rules/must.rs"]
pub mod must;
#[path = "../../rules/update.rs"]
pub mod update;
