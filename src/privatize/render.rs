//! Privatization as text (for people) and JSON (for tools); docs/expansion.md,
//! "Privatization".

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

fn instance(i: &Instance) -> String {
    let idx: Vec<String> = i.iter.iter().map(i64::to_string).collect();
    format!("{}[{}]", i.site, idx.join(", "))
}

/// One line per loop, then one per array it accesses.
pub fn text(params: &[(String, i64)], loops: &[LoopPrivatization]) -> String {
    let at: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let mut out = format!(
        "# privatization at {} (from σ at these sizes)\n",
        if at.is_empty() {
            "the program's sizes".to_string()
        } else {
            at.join(", ")
        }
    );
    for l in loops {
        let indent = "  ".repeat(l.depth);
        let what = if l.parallel_before() {
            "parallel".to_string()
        } else if l.parallel_after() {
            let private: Vec<&str> = l.private().collect();
            format!("parallel after privatizing {}", private.join(", "))
        } else {
            "not parallel".to_string()
        };
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
pub fn json(params: &[(String, i64)], loops: &[LoopPrivatization]) -> Value {
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
    json!({"params": params, "loops": loops})
}

/// The editor's remark on a loop that private copies make parallel:
/// "loop `j` is parallel once `work` is private (copy-in: none;
/// finalization: none)"; `None` for the other loops.
pub fn remark(l: &LoopPrivatization) -> Option<String> {
    if l.parallel_before() || !l.parallel_after() {
        return None;
    }
    let private: Vec<&str> = l.private().collect();
    let names: Vec<String> = private.iter().map(|n| format!("`{n}`")).collect();
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
    let detail = if let [one] = private.as_slice() {
        what(one)
    } else {
        let each: Vec<String> = private
            .iter()
            .map(|n| format!("`{n}`: {}", what(n)))
            .collect();
        each.join("; ")
    };
    let verb = if names.len() == 1 { "is" } else { "are" };
    Some(format!(
        "loop `{}` is parallel once {} {verb} private ({detail})",
        l.name,
        names.join(", ")
    ))
}
