//! The bounded walk of a program's iterations at the default parameter
//! values that W0002 (statements that never run, `warnings`) and W0005
//! (subscripts out of range, `ranges`) share: its budget, its steps, and
//! how it decides a condition.

use crate::model::eval::{self, StaticEnv};
use crate::model::*;

/// Work allowed to the search for statements that never run.
pub(super) const BUDGET: u64 = 2_000_000;
/// Trips tried for a `while` whose trip count is unknown but whose counter
/// matters to some guard inside it.
pub(super) const WHILE_TRIPS: i64 = 64;

/// "with N = 5, M = 3": the parameter values a warning holds at, if any.
pub(super) fn values_note(p: &Program, params: &[i64]) -> Option<String> {
    let values: Vec<String> = p
        .params
        .iter()
        .zip(params)
        .map(|(q, v)| format!("{} = {v}", q.name))
        .collect();
    (!values.is_empty()).then(|| format!("with {}", values.join(", ")))
}

/// One step of a bounded walk: false, and `incomplete` set, once `budget`
/// is spent.
pub(super) fn tick(budget: &mut u64, incomplete: &mut bool) -> bool {
    if *budget == 0 {
        *incomplete = true;
        return false;
    }
    *budget -= 1;
    true
}

/// `Some(outcome)` for a static condition at these values, `None` when it
/// may go either way. One that cannot be evaluated sets `incomplete`.
pub(super) fn test(
    statics: &[bool],
    c: &Condition,
    params: &[i64],
    counters: &[i64],
    incomplete: &mut bool,
) -> Option<bool> {
    if !statics[c.id.index()] {
        return None;
    }
    let mut env = StaticEnv { params, counters };
    match eval::cond(&c.cond, &mut env) {
        Ok(b) => Some(b),
        Err(_) => {
            *incomplete = true;
            Some(false)
        }
    }
}
