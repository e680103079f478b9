//! The pairing (issue 17): maximal static expansion where control is
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
//! The result is then compared with the original itself by `equiv`.
//! Affine schedules pair only when a `doall` marking stands for them (the
//! first stage renames and versions statements, which the schedule names).

use super::emit::{self, EmitError, Emitted};
use super::nodes;
use super::{Schedule, StorageError, Unmappable};
use crate::codegen::{self, report, Options};
use crate::model::{ArrayId, CounterId, Program};
use std::collections::HashMap;

/// The first stage, as the header reports it.
pub struct Mse {
    /// Per array expanded: `A -> A_1, A_2: …`, what MSE made of it.
    pub lines: Vec<String>,
    /// None when every array's labels are proved static; else why not.
    pub unproved: Option<String>,
    /// The program after the first stage (the second's input).
    pub program: Program,
}

impl std::fmt::Debug for Mse {
    // The program is long and says nothing the lines do not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mse")
            .field("lines", &self.lines)
            .field("unproved", &self.unproved)
            .finish_non_exhaustive()
    }
}

/// `emit::checked_with`, pairing maximal static expansion with the
/// contraction when an array under dynamic control needs expanding.
pub fn checked_with(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
) -> Result<Emitted, EmitError> {
    let first = match emit::checked_with(program, schedule, temporaries, o) {
        Err(EmitError::Storage(StorageError::Unmappable(u))) if u.dynamic => u,
        r => return r,
    };
    let schedule = match &schedule.affine {
        None => schedule.clone(),
        Some(a) => emit::loop_level_twin(program, schedule, o).map_err(|why| {
            EmitError::Other(format!(
                "no storage mapping for `{}`: {}; paired with maximal static expansion, the \
                 schedule must be one a `doall` marking stands for, and {} is not: {why}",
                first.array, first.reason, a.text
            ))
        })?,
    };
    let mut dynamic: Vec<ArrayId> = Vec::new();
    let mut next = first;
    loop {
        let Some(a) = program.array(&next.array).filter(|a| !dynamic.contains(a)) else {
            return Err(not_enough(program, &dynamic, next));
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
        let stage = stage_one(program, &dynamic, &only.scratch, &mse)?;
        let p1 = &mse.program;
        let s1 = schedule_of(program, &schedule, p1)?;
        let temps1: Vec<ArrayId> = (temporaries.iter())
            .filter(|a| !dynamic.contains(a))
            .filter_map(|&a| p1.array(&program.array_decl(a).name))
            .collect();
        match emit::checked_with(p1, &s1, &temps1, o) {
            Err(EmitError::Storage(StorageError::Unmappable(u))) if u.dynamic => next = u,
            Err(e) => {
                return Err(EmitError::Paired {
                    error: Box::new(e),
                    stage: Box::new(stage),
                })
            }
            Ok(mut e) => {
                end_to_end(program, temporaries, &e, &mse)?;
                e.mse = Some(stage);
                return Ok(e);
            }
        }
    }
}

/// The first stage's loops parallel where the original's are. A loop is
/// matched through the statements it holds (versions `S.1`, `S.2` by their
/// original's label) and its depth: names do not tell loops apart (two loops
/// may share a counter's name). Copy loops run in order.
fn schedule_of(
    program: &Program,
    schedule: &Schedule,
    p1: &Program,
) -> Result<Schedule, EmitError> {
    let internal =
        |why: &str| EmitError::Other(format!("internal error: the pairing's loops: {why}"));
    let original: HashMap<&str, Vec<CounterId>> = nodes::loop_chains(&program.body)
        .into_iter()
        .map(|(s, around)| (s.label.as_str(), around))
        .collect();
    let mut parallel: Vec<Option<bool>> = vec![None; p1.counters.len()];
    for (s, around) in nodes::loop_chains(&p1.body) {
        if s.copy {
            continue;
        }
        // The label itself, or with version suffixes taken off one by one.
        let mut label = s.label.as_str();
        while !original.contains_key(label) && label != crate::model::base_label(label) {
            label = label.rsplit_once('.').map_or(label, |(l, _)| l);
        }
        let was = original
            .get(label)
            .filter(|o| o.len() == around.len())
            .ok_or_else(|| internal(&format!("`{}` has no original", s.label)))?;
        for (&c1, &c0) in around.iter().zip(was) {
            let want = schedule.is_parallel(c0);
            match parallel[c1.index()].replace(want) {
                Some(had) if had != want => return Err(internal("a loop both parallel and not")),
                _ => {}
            }
        }
    }
    Ok(Schedule {
        parallel: parallel.into_iter().map(|p| p.unwrap_or(false)).collect(),
        affine: None,
    })
}

/// The first stage's report lines and proof, or why it did not expand an
/// array the pairing gave it.
fn stage_one(
    program: &Program,
    dynamic: &[ArrayId],
    scratch: &[ArrayId],
    mse: &codegen::Emitted,
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
            Some(p) => report::proved(&mse.program, mse, p),
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
    Ok(Mse {
        lines,
        unproved: (!unproved.is_empty()).then(|| unproved.join("; ")),
        program: mse.program.clone(),
    })
}

/// The paired program compared with the original itself, at the second
/// stage's validation sizes (the first stage's constant bounds made
/// parameters, `codegen::lift`, kept at their values).
fn end_to_end(
    program: &Program,
    temporaries: &[ArrayId],
    e: &Emitted,
    mse: &codegen::Emitted,
) -> Result<(), EmitError> {
    let own = |v: &Vec<(String, i64)>| -> Option<Vec<(String, i64)>> {
        let lifted = |n: &str| mse.lifted.iter().find(|(l, _)| l == n);
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
    let scratch: Vec<String> = (temporaries.iter())
        .map(|&a| program.array_decl(a).name.clone())
        .collect();
    emit::validate(program, &e.program, &at, &[], &scratch, None)
        .map(|_| ())
        .map_err(|e| match e {
            EmitError::Other(why) => EmitError::Other(format!("the paired program: {why}")),
            e => e,
        })
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
    EmitError::Other(format!(
        "no storage for the schedule: after maximal static expansion of {}, `{}` still needs \
         expanding and some write may miss its cell: {} (maximal static expansion keeps \
         together the writes one read may see, and the schedule runs them in parallel)",
        listed(program, dynamic),
        u.array,
        u.reason
    ))
}
