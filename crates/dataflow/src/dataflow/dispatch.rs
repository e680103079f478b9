//! Which evaluation runs σ: the dd cluster when one is installed, the
//! parallel engine on a rayon pool of several threads, else the sequential
//! reference on this thread. They give the same result; the engine
//! ([`super::engine`]) knows none of them.

use super::engine::{evaluate_sequential, Cut, Engine, Kept, Limits};
use super::{DataflowError, Flow};
use crate::facts::Facts;

/// Evaluates σ for every read of `facts`.
pub(super) fn evaluate(
    engine: &dyn Engine,
    facts: Facts,
    max_visits: u64,
    max_memory: u64,
) -> Result<Flow, DataflowError> {
    evaluate_with(engine, facts, max_visits, max_memory, false).map(|(flow, _)| flow)
}

/// Evaluates σ and keeps the facts, with the access instances the initial
/// value reaches (one bit each).
pub(super) fn evaluate_keep(
    engine: &dyn Engine,
    facts: Facts,
    max_visits: u64,
    max_memory: u64,
) -> Result<(Flow, Facts, Vec<u64>), DataflowError> {
    let (flow, kept) = evaluate_with(engine, facts, max_visits, max_memory, true)?;
    let (facts, bits) = kept.unwrap_or_default();
    Ok((flow, facts, bits))
}

/// The sequential engine in a pool of one thread (or outside rayon with
/// one core), else the parallel one, which gives the same result
/// (`super::parallel`).
fn evaluate_with(
    engine: &dyn Engine,
    facts: Facts,
    max_visits: u64,
    max_memory: u64,
    keep: bool,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    let limits = Limits {
        max_visits,
        max_memory,
        keep,
        cut: Cut::DEFAULT,
    };
    evaluate_batched(engine, facts, limits)
}

/// [`evaluate_with`] with any [`Limits`] (tests cut small runs).
pub(super) fn evaluate_batched(
    engine: &dyn Engine,
    facts: Facts,
    limits: Limits,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    #[cfg(feature = "dd")]
    if let Some(cluster) = super::dd::installed() {
        return super::dd::evaluate(engine, facts, limits, &cluster);
    }
    if rayon::current_num_threads() > 1 {
        super::parallel::evaluate_with(engine, facts, limits)
    } else {
        evaluate_sequential(engine, facts, limits)
    }
}

/// σ of `program` with the core kinds, batches of at least `batch`
/// readers and `fuel` steps per walk in a batch, on the current rayon pool,
/// with the bits of the access instances the initial value reaches when
/// `keep`. For tests: the sequential and parallel engines compared on many
/// small batches and many walks run alone.
#[doc(hidden)]
pub fn analyze_cut(
    program: &crate::model::Program,
    config: &super::Config,
    (batch, fuel): (usize, u32),
    keep: bool,
) -> Result<(Flow, Vec<u64>), DataflowError> {
    let kinds = super::kinds::Kinds::core();
    let frame = crate::facts::Frame::default();
    let facts = crate::facts::lower_framed(program, config, kinds.all(), keep, &frame)?;
    let limits = Limits {
        max_visits: config.max_instances,
        max_memory: config.max_memory,
        keep,
        cut: Cut {
            batch: batch.max(1),
            fuel,
        },
    };
    let (flow, kept) = evaluate_batched(kinds.engine(), facts, limits)?;
    Ok((flow, kept.map(|(_, bits)| bits).unwrap_or_default()))
}
