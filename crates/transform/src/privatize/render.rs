//! Privatization as text (for people) and JSON (for tools); docs/expansion.md,
//! "Privatization".

use super::exact::{Decision, ExactLoop, Last};
use super::{Finalization, Instance, LoopPrivatization, Verdict};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Cells listed in text, at most; the JSON has them all.
const SHOWN: usize = 6;

fn cells(array: &str, cells: &BTreeSet<Vec<i64>>) -> String {
    let mut s = String::new();
    for (k, c) in cells.iter().take(SHOWN).enumerate() {
        let sep = if k > 0 { ", " } else { "" };
        let idx: Vec<String> = c.iter().map(i64::to_string).collect();
        let _ = write!(s, "{sep}{array}[{}]", idx.join(", "));
    }
    if cells.len() > SHOWN {
        let _ = write!(s, " and {} more", cells.len() - SHOWN);
    }
    s
}

/// What a loop is: "parallel", "parallel after privatizing A, B", or "not
/// parallel".
fn state<'a>(before: bool, after: bool, private: impl Iterator<Item = &'a str>) -> String {
    if before {
        "parallel".to_string()
    } else if after {
        let private: Vec<&str> = private.collect();
        format!("parallel after privatizing {}", private.join(", "))
    } else {
        "not parallel".to_string()
    }
}

fn instance(i: &Instance) -> String {
    let idx: Vec<String> = i.iter.iter().map(i64::to_string).collect();
    format!("{}[{}]", i.site, idx.join(", "))
}

/// One line per loop, then one per array it accesses. `cut`: the trips
/// each `while` loop was analysed for, when the program has one (the
/// verdicts then hold for those trips only, not at the sizes' full runs).
/// `proved`: every parallel verdict holds for every parameter value
/// ([`super::possible::proves_report`]).
pub fn text(
    params: &[(String, i64)],
    loops: &[LoopPrivatization],
    cut: Option<u32>,
    proved: bool,
) -> String {
    let at: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let at = if at.is_empty() {
        "the program's sizes".to_string()
    } else {
        at.join(", ")
    };
    let cut = match cut {
        Some(k) => format!(", each `while` loop cut at {k} trips"),
        None => String::new(),
    };
    let mut out = match proved {
        true => format!(
            "# privatization at {at}{cut}; its parallel verdicts proved for every parameter \
             value (possible sources: control is not static)\n"
        ),
        false => {
            format!("# privatization at {at}{cut} (from σ at these sizes; not proved for others)\n")
        }
    };
    for l in loops {
        let indent = "  ".repeat(l.depth);
        let what = state(l.parallel_before(), l.parallel_after(), l.private());
        let _ = writeln!(out, "{indent}loop {}: {what}", l.name);
        for (name, v) in &l.arrays {
            let line = match v {
                Verdict::Shared => "shared".to_string(),
                Verdict::Carried { source, read } => format!(
                    "not privatizable: {} writes a value {} reads in a later iteration",
                    instance(source),
                    instance(read)
                ),
                Verdict::Privatizable {
                    copy_in,
                    finalization,
                } => {
                    let copy = if copy_in.is_empty() {
                        "no copy-in".to_string()
                    } else {
                        format!("copy-in {}", cells(name, copy_in))
                    };
                    let fin = match finalization {
                        Finalization::None => "nothing live after".to_string(),
                        Finalization::LastIteration { cells: c } => {
                            format!("last iteration writes back {}", cells(name, c))
                        }
                        Finalization::LastWriter { cells: c, dynamic } => format!(
                            "each cell from its last writer{}: {}",
                            if *dynamic {
                                " (decided at run time)"
                            } else {
                                ""
                            },
                            cells(name, c)
                        ),
                    };
                    format!("private; {copy}; {fin}")
                }
            };
            let approx = if l.approximate.contains(name) {
                " (approximate: a may-access, σ over-approximated)"
            } else {
                ""
            };
            let _ = writeln!(out, "{indent}  {name}: {line}{approx}");
        }
    }
    out
}

fn cells_json(c: &BTreeSet<Vec<i64>>) -> Value {
    json!(c.iter().collect::<Vec<_>>())
}

fn instance_json(i: &Instance) -> Value {
    json!({"site": i.site, "iter": i.iter})
}

/// `{"params":{..},"loops":[{"loop","depth","parallel":{"before","after"},
/// "arrays":[{"array","verdict",..}]}]}`.
pub fn json(params: &[(String, i64)], loops: &[LoopPrivatization], proved: bool) -> Value {
    let params: serde_json::Map<String, Value> =
        params.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
    let loops: Vec<Value> = loops
        .iter()
        .map(|l| {
            let arrays: Vec<Value> = l
                .arrays
                .iter()
                .map(|(name, v)| match v {
                    Verdict::Shared => json!({"array": name, "verdict": "shared"}),
                    Verdict::Carried { source, read } => json!({
                        "array": name,
                        "verdict": "carried",
                        "source": instance_json(source),
                        "read": instance_json(read),
                    }),
                    Verdict::Privatizable {
                        copy_in,
                        finalization,
                    } => {
                        let fin = match finalization {
                            Finalization::None => json!({"kind": "none"}),
                            Finalization::LastIteration { cells } => {
                                json!({"kind": "last-iteration", "cells": cells_json(cells)})
                            }
                            Finalization::LastWriter { cells, dynamic } => json!({
                                "kind": "last-writer",
                                "dynamic": dynamic,
                                "cells": cells_json(cells),
                            }),
                        };
                        json!({
                            "array": name,
                            "verdict": "private",
                            "copy_in": cells_json(copy_in),
                            "finalization": fin,
                        })
                    }
                })
                .collect();
            json!({
                "loop": l.name,
                "depth": l.depth,
                "approximate": l.approximate,
                "parallel": {"before": l.parallel_before(), "after": l.parallel_after()},
                "arrays": arrays,
            })
        })
        .collect();
    json!({"exact": false, "proved": proved, "params": params, "loops": loops})
}

/// The editor's remark on a loop that private copies make parallel:
/// "loop `j` is parallel once `work` is private (copy-in: none;
/// finalization: none)"; `None` for the other loops.
pub fn remark(l: &LoopPrivatization) -> Option<String> {
    if l.parallel_before() || !l.parallel_after() {
        return None;
    }
    let private: Vec<&str> = l.private().collect();
    let what = |name: &str| -> String {
        let Some(Verdict::Privatizable {
            copy_in,
            finalization,
        }) = l.arrays.get(name)
        else {
            return String::new();
        };
        let copy = if copy_in.is_empty() {
            "none".to_string()
        } else {
            cells(name, copy_in)
        };
        let fin = match finalization {
            Finalization::None => "none",
            Finalization::LastIteration { .. } => "last iteration",
            Finalization::LastWriter { dynamic: false, .. } => "each cell from its last writer",
            Finalization::LastWriter { dynamic: true, .. } => {
                "each cell from its last writer, decided at run time"
            }
        };
        let approx = if l.approximate.contains(name) {
            "; approximate: a may-access"
        } else {
            ""
        };
        format!("copy-in: {copy}; finalization: {fin}{approx}")
    };
    Some(sentence(&l.name, &private, &what))
}

/// The copy-in of a decision from exact σ: "no copy-in", or "copy-in for
/// S: A[i - 1], T: A[0]" (the reads that may see a value from before).
fn exact_copy_in(copy_in: &[String]) -> String {
    if copy_in.is_empty() {
        "no copy-in".to_string()
    } else {
        format!("copy-in for {}", copy_in.join(", "))
    }
}

fn exact_last(l: Last) -> &'static str {
    match l {
        Last::None => "nothing live after",
        Last::LastIteration => "the last iteration writes back",
        Last::LastWriter => "each cell from its last writer",
    }
}

/// [`text`] for decisions from exact σ, which hold at every size.
pub fn exact_text(loops: &[ExactLoop]) -> String {
    let mut out = "# privatization for every parameter value (from exact σ)\n".to_string();
    for l in loops {
        let indent = "  ".repeat(l.depth);
        let mut what = state(l.parallel_before(), l.parallel_after(), l.private());
        if l.parallel_with_reductions() {
            let red: Vec<&str> = l.reductions().map(|(n, _, _)| n).collect();
            let private: Vec<&str> = l.private().collect();
            what = format!(
                "not parallel as written; parallel as a reduction on {}",
                red.join(", ")
            );
            if !private.is_empty() {
                what += &format!(", privatizing {}", private.join(", "));
            }
        }
        let _ = writeln!(out, "{indent}loop {}: {what}", l.name);
        for (name, d) in &l.arrays {
            let line = match d {
                Decision::Shared => "shared".to_string(),
                Decision::Carried { source, read } => format!(
                    "not privatizable: {source} writes a value {read} reads in a later iteration"
                ),
                Decision::Reduction { op, cell, .. } => format!(
                    "reduction ({}) on {cell}: every iteration updates it, and nothing else in \
                     the loop touches it",
                    op.openmp()
                ),
                Decision::Private {
                    copy_in,
                    finalization,
                } => format!(
                    "private; {}; {}",
                    exact_copy_in(copy_in),
                    exact_last(*finalization)
                ),
            };
            let _ = writeln!(out, "{indent}  {name}: {line}");
        }
    }
    out
}

/// [`json()`] for decisions from exact σ: `"exact": true`, no sizes; copy-in
/// lists the reads (`"S: A[i - 1]"`), finalization has no cells.
pub fn exact_json(loops: &[ExactLoop]) -> Value {
    let loops: Vec<Value> = loops
        .iter()
        .map(|l| {
            let arrays: Vec<Value> = (l.arrays.iter())
                .map(|(name, d)| match d {
                    Decision::Shared => json!({"array": name, "verdict": "shared"}),
                    Decision::Carried { source, read } => json!({
                        "array": name, "verdict": "carried", "source": source, "read": read,
                    }),
                    Decision::Reduction {
                        op,
                        cell,
                        source,
                        read,
                    } => json!({
                        "array": name, "verdict": "reduction", "op": op.openmp(), "cell": cell,
                        "source": source, "read": read,
                    }),
                    Decision::Private {
                        copy_in,
                        finalization,
                    } => json!({
                        "array": name,
                        "verdict": "private",
                        "copy_in": copy_in,
                        "finalization": {"kind": match finalization {
                            Last::None => "none",
                            Last::LastIteration => "last-iteration",
                            Last::LastWriter => "last-writer",
                        }},
                    }),
                })
                .collect();
            json!({
                "loop": l.name,
                "depth": l.depth,
                "parallel": {
                    "before": l.parallel_before(),
                    "after": l.parallel_after(),
                    "with_reductions": l.parallel_with_reductions(),
                },
                "arrays": arrays,
            })
        })
        .collect();
    json!({"exact": true, "loops": loops})
}

/// [`remark`] for decisions from exact σ.
pub fn exact_remark(l: &ExactLoop) -> Option<String> {
    if l.parallel_before() || !l.parallel_after() {
        return None;
    }
    let private: Vec<&str> = l.private().collect();
    let what = |name: &str| -> String {
        let Some(Decision::Private {
            copy_in,
            finalization,
        }) = l.arrays.get(name)
        else {
            return String::new();
        };
        let copy = if copy_in.is_empty() {
            "none".to_string()
        } else {
            copy_in.join(", ")
        };
        let fin = match finalization {
            Last::None => "none",
            Last::LastIteration => "last iteration",
            Last::LastWriter => "each cell from its last writer",
        };
        format!("copy-in: {copy}; finalization: {fin}")
    };
    Some(sentence(&l.name, &private, &what))
}

/// "loop `j` is parallel once `work` is private (detail)", with each
/// array's detail from `what`.
fn sentence(name: &str, private: &[&str], what: &dyn Fn(&str) -> String) -> String {
    let names: Vec<String> = private.iter().map(|n| format!("`{n}`")).collect();
    let detail = if let [one] = private {
        what(one)
    } else {
        let each: Vec<String> = private
            .iter()
            .map(|n| format!("`{n}`: {}", what(n)))
            .collect();
        each.join("; ")
    };
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!(
        "loop `{name}` is parallel once {} {verb} private ({detail})",
        names.join(", ")
    )
}
