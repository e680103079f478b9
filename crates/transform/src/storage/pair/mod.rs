//! The pairing: maximal static expansion where control is
//! dynamic, contraction under the schedule everywhere else.
//!
//! Contraction expands an array only along loop dimensions, which needs
//! every write to land on its cell; an array some write of which may miss
//! its cell (a non-affine subscript, an unknown condition) and that the
//! schedule needs expanded gets maximal static expansion instead. Two
//! stages, each checked as on its own:
//!
//! 1. `codegen::emit` expands only those arrays (`Options::only`): labels
//!    proved static (`codegen::prove`) and validated by `equiv`;
//! 2. `emit::checked_with` contracts that program under the same loops:
//!    proved by `prove`, validated by `equiv` with the `doall` loops
//!    shuffled.
//!
//! The result is then compared with the original itself by `equiv`. The
//! schedule is carried to the first stage's program by `carry` (loops and
//! statements matched to the original's; an affine schedule gets a leading
//! dimension for the copies before and after the body).

mod carry;

use super::emit::{self, EmitError, Emitted};
use super::{unfold, Schedule, StorageError, Unmappable};
use crate::codegen::{self, report, Options};
use crate::model::{ArrayId, Program};
use carry::schedule_of;
pub use carry::{original_span, stmts_on};

pub use super::emit::Mse;

/// `emit::checked_with`, pairing maximal static expansion with the
/// contraction when an array under dynamic control needs expanding; and,
/// when temporaries are indexed modulo their extent, the same of the
/// program with them unfolded (`unfold`) if that declares fewer cells,
/// compared with the original itself by `equiv`.
pub fn checked_with(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
) -> Result<Emitted, EmitError> {
    let plain = || checked_paired(program, schedule, temporaries, o);
    let Ok(Some(u)) = unfold::unfold(program, temporaries) else {
        return plain();
    };
    let Ok(mut e) = checked_paired(&u.program, schedule, temporaries, o) else {
        return plain();
    };
    // The original's contraction never lays out the unfolded arrays in
    // fewer cells (their subscripts are not affine there), and does to the
    // others what the unfolded program's does: fewer cells than declared
    // is fewer than it gives.
    let cells = |p: &Program| unfold::declared_cells(p);
    if cells(&e.program) >= cells(program) {
        return plain();
    }
    let mut at: Vec<Vec<(String, i64)>> = Vec::new();
    for v in e.validated.iter().chain(&e.sampled) {
        if !at.contains(v) {
            at.push(v.clone());
        }
    }
    if against_original(program, temporaries, &e, &at).is_err() {
        return plain();
    }
    e.unfolded = Some(u.unfolding);
    Ok(e)
}

/// `emit::checked_with`, paired with maximal static expansion where
/// control is dynamic.
fn checked_paired(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
) -> Result<Emitted, EmitError> {
    let first = match emit::checked_with(program, schedule, temporaries, o) {
        Err(EmitError::Storage(StorageError::Unmappable(u))) if u.dynamic => u,
        r => return r,
    };
    let second = |p1: &Program, s1: &Schedule, t1: &[ArrayId]| emit::checked_with(p1, s1, t1, o);
    let (mut e, stage) = paired(program, schedule, temporaries, o, first, second)?;
    end_to_end(program, temporaries, &e, &stage)?;
    e.mse = Some(stage);
    Ok(e)
}

/// The first stage's program as the paired report sees it: its
/// expansion at the report's sizes and the schedule carried to it.
pub struct Reported {
    pub program: Program,
    pub expansion: crate::expansion::Expansion,
    pub schedule: Schedule,
}

/// `storage::contract_with` at the sizes of `config` (the report of
/// `expand --transform contract` without `--emit`, and `plot`), paired as
/// `checked_with` pairs: then the contraction of the first stage's program,
/// with the first stage's lines in `Contraction::paired`, and that program.
///
/// Temporaries indexed modulo their extent are unfolded first when that
/// gives fewer cells, as in `checked_with`; then the contraction and the
/// program are the unfolded one's.
pub fn contract_with(
    program: &Program,
    exp: &crate::expansion::Expansion,
    schedule: &Schedule,
    temporaries: Option<&[ArrayId]>,
    o: &Options,
    config: &crate::dataflow::Config,
) -> Result<(super::Contraction, Option<Reported>), EmitError> {
    let refused = match temporaries.map(|t| (t, unfold::unfold(program, t))) {
        Some((_, Ok(Some(u)))) => {
            if let Some(r) = unfolded_report(program, u, schedule, temporaries, o, config) {
                return Ok(r);
            }
            None
        }
        Some((t, Err(why))) => Some((t, why)),
        _ => None,
    };
    let mut plain = contract_paired(program, exp, schedule, temporaries, o, config);
    // Say why the buffers stay as they are.
    if let (Some((t, why)), Ok((c, _))) = (&refused, &mut plain) {
        for a in unfold::candidates(program, t) {
            let reason = format!("indexed modulo its extent, and not unfolded: {why}");
            c.modular_refused.retain(|(x, _)| *x != a);
            c.modular_refused.push((a, reason));
        }
    }
    plain
}

/// The report of the unfolded program, when its arrays take fewer cells
/// than the original declares (as in `checked_with`: the original's own
/// contraction never lays the unfolded arrays out in fewer).
fn unfolded_report(
    program: &Program,
    u: unfold::Unfolded,
    schedule: &Schedule,
    temporaries: Option<&[ArrayId]>,
    o: &Options,
    config: &crate::dataflow::Config,
) -> Option<(super::Contraction, Option<Reported>)> {
    let exp1 = crate::expansion::expand(&u.program, config).ok()?;
    let (mut c, reported) =
        contract_paired(&u.program, &exp1, schedule, temporaries, o, config).ok()?;
    // The memory table's "original" column: what the program declares.
    for a in &mut c.mapping.arrays {
        a.original = crate::codegen::declared_cells(program, a.array, &c.params);
    }
    if c.contracted_cells() >= c.original_cells() {
        return None;
    }
    c.unfolded = u.unfolding.lines;
    let reported = reported.unwrap_or(Reported {
        program: u.program,
        expansion: exp1,
        schedule: schedule.clone(),
    });
    Some((c, Some(reported)))
}

/// `storage::contract_with`, paired with maximal static expansion where
/// control is dynamic.
fn contract_paired(
    program: &Program,
    exp: &crate::expansion::Expansion,
    schedule: &Schedule,
    temporaries: Option<&[ArrayId]>,
    o: &Options,
    config: &crate::dataflow::Config,
) -> Result<(super::Contraction, Option<Reported>), EmitError> {
    let first = match super::contract_with(program, exp, schedule, temporaries) {
        Err(StorageError::Unmappable(u)) if u.dynamic => u,
        r => {
            let mut c = r.map_err(EmitError::Storage)?;
            if let Some(t) = temporaries {
                super::modular::fill_formulas(program, schedule, t, o, &mut c);
            }
            return Ok((c, None));
        }
    };
    let temps = temporaries.unwrap_or_default();
    let second = |p1: &Program, s1: &Schedule, t1: &[ArrayId]| {
        let exp1 = crate::expansion::expand(p1, config).map_err(EmitError::Expansion)?;
        let t1 = temporaries.map(|_| t1);
        let c = super::contract_with(p1, &exp1, s1, t1).map_err(EmitError::Storage)?;
        Ok((c, exp1, s1.clone()))
    };
    let ((mut c, expansion, schedule), stage) = paired(program, schedule, temps, o, first, second)?;
    c.paired = stage.lines;
    let reported = Reported {
        program: stage.program,
        expansion,
        schedule,
    };
    Ok((c, Some(reported)))
}

/// The pairing's loop: the arrays under dynamic control that the schedule
/// needs expanded get maximal static expansion, one more each time
/// `second` (the contraction of the first stage's program) meets one.
fn paired<T>(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
    first: Unmappable,
    second: impl Fn(&Program, &Schedule, &[ArrayId]) -> Result<T, EmitError>,
) -> Result<(T, Mse), EmitError> {
    let mut dynamic: Vec<ArrayId> = Vec::new();
    let mut next = first;
    let mut last: Option<Mse> = None;
    loop {
        let Some(a) = program.array(&next.array).filter(|a| !dynamic.contains(a)) else {
            let error = Box::new(not_enough(program, &dynamic, next));
            return Err(match last {
                Some(stage) => EmitError::Paired {
                    error,
                    stage: Box::new(stage),
                },
                None => *error,
            });
        };
        dynamic.push(a);
        // A temporary's final contents are not read: no copy-out ties its
        // writes together.
        let only = Options {
            only: Some(dynamic.clone()),
            scratch: (temporaries.iter())
                .filter(|a| dynamic.contains(a))
                .copied()
                .collect(),
            ..o.clone()
        };
        let mse = codegen::emit(program, &only).map_err(|why| {
            EmitError::Other(format!(
                "maximal static expansion of {}, for the pairing: {why}",
                listed(program, &dynamic)
            ))
        })?;
        let stage = stage_one(program, &dynamic, &only.scratch, mse)?;
        let p1 = &stage.program;
        let s1 = schedule_of(program, schedule, p1)?;
        let temps1: Vec<ArrayId> = (temporaries.iter())
            .filter(|a| !dynamic.contains(a))
            .filter_map(|&a| p1.array(&program.array_decl(a).name))
            .collect();
        match second(p1, &s1, &temps1) {
            Err(EmitError::Storage(StorageError::Unmappable(u))) if u.dynamic => {
                next = u;
                last = Some(stage);
            }
            Err(e) => {
                return Err(EmitError::Paired {
                    error: Box::new(e),
                    stage: Box::new(stage),
                })
            }
            Ok(t) => return Ok((t, stage)),
        }
    }
}

/// The first stage's report lines and proof, or why it did not expand an
/// array the pairing gave it.
fn stage_one(
    program: &Program,
    dynamic: &[ArrayId],
    scratch: &[ArrayId],
    mse: codegen::Emitted,
) -> Result<Mse, EmitError> {
    let mut lines = Vec::new();
    let mut unproved = Vec::new();
    for &a in dynamic {
        let name = &program.array_decl(a).name;
        let r = (mse.arrays.iter().find(|r| &r.name == name))
            .ok_or_else(|| EmitError::Other(format!("internal error: no report on `{name}`")))?;
        if !r.expanded {
            return Err(EmitError::Other(format!(
                "no storage mapping for `{name}`: some write may miss its cell, so contraction \
                 cannot expand it, and maximal static expansion did not: {}",
                r.verdict
            )));
        }
        let decls: Vec<String> = r
            .decls
            .iter()
            .map(|d| format!("{} ({} cells)", d.name, d.formula))
            .collect();
        let proof = match &r.proof {
            Some(p) => report::proved(&mse.program, &mse, p),
            None => "not proved: no proof".to_string(),
        };
        if let Some(why) = report::unproved(r) {
            unproved.push(format!("`{name}`: {why}"));
        }
        let temporary = match scratch.contains(&a) {
            true => "; a temporary: its final contents not copied out",
            false => "",
        };
        lines.push(format!(
            "{name} -> {}: maximal static expansion (some write may miss its cell), labels \
             {proof}{temporary}",
            decls.join(", ")
        ));
    }
    let validated = (mse.validated.iter())
        .map(|v| {
            let names = mse.program.params.iter().map(|q| q.name.clone());
            names.zip(v.iter().copied()).collect()
        })
        .collect();
    Ok(Mse {
        lines,
        unproved: (!unproved.is_empty()).then(|| unproved.join("; ")),
        program: mse.program,
        lifted: mse.lifted,
        validated,
    })
}

/// The paired program compared with the original itself, at the second
/// stage's sizes where the first stage's program was not found agreeing
/// with the original (elsewhere both stages were: the first stage against
/// the original, the second against the first), the first stage's
/// constant bounds made parameters (`codegen::lift`) kept at their values.
fn end_to_end(
    program: &Program,
    temporaries: &[ArrayId],
    e: &Emitted,
    stage: &Mse,
) -> Result<(), EmitError> {
    let own = |v: &Vec<(String, i64)>| -> Option<Vec<(String, i64)>> {
        if stage.validated.contains(v) {
            return None;
        }
        let lifted = |n: &str| stage.lifted.iter().find(|(l, _)| l == n);
        (v.iter())
            .all(|(n, x)| lifted(n).is_none_or(|(_, d)| d == x))
            .then(|| {
                v.iter()
                    .filter(|(n, _)| lifted(n).is_none())
                    .cloned()
                    .collect()
            })
    };
    let mut at: Vec<Vec<(String, i64)>> = Vec::new();
    for v in e.validated.iter().chain(&e.sampled).filter_map(own) {
        if !at.contains(&v) {
            at.push(v);
        }
    }
    against_original(program, temporaries, e, &at).map_err(|e| match e {
        EmitError::Other(why) => EmitError::Other(format!("the paired program: {why}")),
        e => e,
    })
}

/// `e`'s program compared with the original itself by `equiv` at the
/// sizes `at`, the temporaries' final contents left out.
fn against_original(
    program: &Program,
    temporaries: &[ArrayId],
    e: &Emitted,
    at: &[Vec<(String, i64)>],
) -> Result<(), EmitError> {
    let scratch: Vec<String> = (temporaries.iter())
        .map(|&a| program.array_decl(a).name.clone())
        .collect();
    emit::validate(
        program,
        &e.program,
        at,
        &[],
        &scratch,
        e.iterations.as_ref(),
    )
    .map(|_| ())
}

/// "`H`" or "`H` and `G`".
fn listed(program: &Program, arrays: &[ArrayId]) -> String {
    let v: Vec<String> = (arrays.iter())
        .map(|&a| format!("`{}`", program.array_decl(a).name))
        .collect();
    v.join(" and ")
}

/// An array of the first stage's output (or one it expanded already) the
/// schedule still needs expanded: MSE does not separate what it runs
/// together.
fn not_enough(program: &Program, dynamic: &[ArrayId], u: Unmappable) -> EmitError {
    // "parallel i needs it expanded, …": the loop, without the advice to
    // use maximal static expansion, which was just used.
    let under = match u.dynamic {
        true => u
            .reason
            .split(" needs it expanded")
            .next()
            .unwrap_or(&u.reason),
        false => &u.reason,
    };
    let reason = format!(
        "after maximal static expansion of {} it still needs expanding under {under}, and \
         some write may miss its cell: maximal static expansion keeps together the writes one \
         read may see, and the schedule runs them in parallel (which of them is last depends \
         on the order they run)",
        listed(program, dynamic),
    );
    EmitError::Storage(StorageError::Unmappable(Unmappable {
        reason,
        dynamic: false,
        ..u
    }))
}
