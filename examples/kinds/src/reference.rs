//! The meaning of the example kinds for arrayflow's reference semantics
//! (`arrayflow::dataflow::reference`): the cells each access touches,
//! worked out from the model with `model::eval`, not through the lowering.

use arrayflow::dataflow::reference::Cell;
use arrayflow::model::eval::{self, StaticEnv};
use arrayflow::model::{Access, AccessKind, Program};

/// The cells of a `@section` or `@dead` access (both must-accesses of the
/// section `A[.., lo]` ..= `A[.., hi - 1]`); `None` for any other access.
pub fn meaning(
    _: &Program,
    a: &Access,
    _: AccessKind,
    env: &StaticEnv,
) -> Option<(Vec<Cell>, bool)> {
    let x = a.ext.as_ref()?;
    if x.name != "section" && x.name != "dead" {
        return None;
    }
    let value = |e| eval::expr(e, &mut StaticEnv { ..*env }).ok();
    let mut index: Vec<i64> = a
        .subscripts
        .iter()
        .map(|s| value(&s.expr))
        .collect::<Option<_>>()?;
    let hi = value(&x.args[0].expr)?;
    let lo = *index.last()?;
    let d = index.len() - 1;
    let cells = (lo..hi)
        .map(|v| {
            index[d] = v;
            (a.array.0, index.clone())
        })
        .collect();
    Some((cells, true))
}
