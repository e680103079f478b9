//! A run as text (for people) or JSON (for tools). Both list every traced
//! read in execution order, then the final contents of every declared array.

use super::{format_op, Contents, Options, Run, SiteNames, Writer};
use crate::model::Program;
use serde_json::{json, Value};

/// `S[1, 2]`, `initial`, or `T[3] (copied by _S4)` for a value a `@copy`
/// statement moved.
pub fn writer_text(run: &Run, names: &SiteNames, writer: Writer, origin: Writer) -> String {
    let name = |w| run.op(w).map_or("initial".to_string(), |o| names.op(o));
    if writer == origin {
        name(writer)
    } else {
        format!("{} (copied by {})", name(origin), name(writer))
    }
}

fn writer_json(run: &Run, names: &SiteNames, w: Writer) -> Value {
    match run.op(w) {
        None => json!("initial"),
        Some(op) => json!({"site": names.name(op.site), "iter": op.iter}),
    }
}

/// `N=5, M=2`.
fn params_text(program: &Program, options: &Options) -> String {
    let parts: Vec<String> = program
        .params
        .iter()
        .zip(&options.params)
        .map(|(p, v)| format!("{}={v}", p.name))
        .collect();
    if parts.is_empty() {
        "no parameters".into()
    } else {
        parts.join(", ")
    }
}

pub fn text(program: &Program, options: &Options, run: &Run) -> String {
    use std::fmt::Write;
    let names = SiteNames::new(program);
    let mut out = format!(
        "# seed {}, {}, max-trips {}: {} reads, {} steps\nreads:\n",
        options.seed,
        params_text(program, options),
        options.max_trips,
        run.reads.len(),
        run.steps
    );
    for r in &run.reads {
        let op = run.ops.get(r.op);
        let _ = writeln!(
            out,
            "  {} read {} = {} from {}",
            names.op(op),
            r.access,
            r.value,
            writer_text(run, &names, r.writer, r.origin)
        );
    }
    out.push_str("final contents:\n");
    for (a, c) in program.arrays.iter().zip(&run.arrays) {
        if c.touched.is_some() {
            let _ = writeln!(
                out,
                "  # {}: {} cells, the {} touched shown; the others hold their initial values",
                a.name,
                Contents::size(&c.dims).unwrap_or(0),
                c.held_len()
            );
        }
        for (k, cell) in c.held() {
            let _ = writeln!(
                out,
                "  {} = {} from {}",
                format_op(&a.name, &c.index(k)),
                cell.value,
                writer_text(run, &names, cell.writer, cell.origin)
            );
        }
    }
    out
}

/// `{"seed", "params", "max_trips", "steps", "reads": [...], "arrays": [...]}`.
/// A read or cell has `"origin"` only when a `@copy` moved its value.
pub fn json(program: &Program, options: &Options, run: &Run) -> Value {
    let names = SiteNames::new(program);
    let params: serde_json::Map<String, Value> = program
        .params
        .iter()
        .zip(&options.params)
        .map(|(p, v)| (p.name.clone(), json!(v)))
        .collect();
    let with_origin = |mut v: Value, writer: Writer, origin: Writer| {
        if writer != origin {
            v["origin"] = writer_json(run, &names, origin);
        }
        v
    };
    let reads: Vec<Value> = run
        .reads
        .iter()
        .map(|r| {
            let op = run.ops.get(r.op);
            let v = json!({
                "site": names.name(op.site),
                "iter": op.iter,
                "access": r.access,
                "value": r.value,
                "writer": writer_json(run, &names, r.writer),
            });
            with_origin(v, r.writer, r.origin)
        })
        .collect();
    let arrays: Vec<Value> = program
        .arrays
        .iter()
        .zip(&run.arrays)
        .map(|(a, c)| {
            let cells: Vec<Value> = c
                .held()
                .map(|(k, cell)| {
                    let v = json!({
                        "index": c.index(k),
                        "value": cell.value,
                        "writer": writer_json(run, &names, cell.writer),
                    });
                    with_origin(v, cell.writer, cell.origin)
                })
                .collect();
            let mut v = json!({"name": a.name, "dims": c.dims, "cells": cells});
            if c.touched.is_some() {
                // A sparse array: the cells not listed hold their initial values.
                v["touched_only"] = json!(true);
            }
            v
        })
        .collect();
    json!({
        "seed": options.seed,
        "params": params,
        "max_trips": options.max_trips,
        "steps": run.steps,
        "reads": reads,
        "arrays": arrays,
    })
}
