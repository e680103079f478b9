//! The regions of a program as text (the paper's `A^{strides}_{spans} + base`),
//! JSON, and isl sets of offsets (docs/regions.md).

use super::build::{Region, Section, SectionRegions};
use super::lmad::Lmad;
use super::poly::Poly;
use crate::model::{Program, Span, Var};
use serde_json::{json, Value};
use std::fmt::Write;

/// The name of a parameter or counter.
pub fn name(p: &Program, v: Var) -> String {
    match v {
        Var::Param(x) => p.params[x.index()].name.clone(),
        Var::Counter(c) => p.counters[c.index()].name.clone(),
    }
}

/// One LMAD: `a^{1,8}_{3,24} + 3`, with its conditions.
pub fn lmad_text(p: &Program, array: &str, l: &Lmad) -> String {
    let show = |x: &Poly| x.show(&|v| name(p, v));
    let mut out = array.to_string();
    if !l.dims.is_empty() {
        let strides: Vec<String> = l.dims.iter().map(|d| show(&d.stride)).collect();
        let spans: Vec<String> = l.dims.iter().map(|d| show(&d.span)).collect();
        let _ = write!(out, "^{{{}}}_{{{}}}", strides.join(", "), spans.join(", "));
    }
    let base = show(&l.base);
    match base.strip_prefix('-') {
        Some(_) => {
            let _ = write!(out, " + ({base})");
        }
        None => {
            let _ = write!(out, " + {base}");
        }
    }
    for (i, w) in l.when.iter().enumerate() {
        let _ = write!(
            out,
            "{} {} >= 0",
            if i == 0 { " if" } else { " and" },
            show(w)
        );
    }
    out
}

pub fn region_text(p: &Program, array: &str, r: &Region, must: bool) -> String {
    let body = if r.lmads.is_empty() {
        "none".to_string()
    } else {
        let parts: Vec<String> = r.lmads.iter().map(|l| lmad_text(p, array, l)).collect();
        parts.join(" ∪ ")
    };
    if r.exact || r.lmads.is_empty() {
        return format!("{body}  (exact)");
    }
    if must {
        return format!("{body}  (exact: only exact writes enter)");
    }
    let notes: Vec<&str> = r.notes.iter().copied().collect();
    format!("{body}  (over-approximate: {})", notes.join("; "))
}

/// `loop i2 at 9:3` or `program`.
fn section_title(p: &Program, s: &Section, at: &dyn Fn(Span) -> (usize, usize)) -> String {
    match s {
        Section::Loop { counter, span } => {
            let (l, c) = at(*span);
            format!("loop {} at {l}:{c}", p.counters[counter.index()].name)
        }
        Section::Program => "program".to_string(),
    }
}

pub fn text(
    p: &Program,
    sections: &[SectionRegions],
    at: &dyn Fn(Span) -> (usize, usize),
) -> String {
    let mut out = String::new();
    for s in sections {
        let _ = writeln!(out, "{}:", section_title(p, &s.section, at));
        if s.arrays.is_empty() {
            let _ = writeln!(out, "  no access");
        }
        for a in &s.arrays {
            let n = &p.arrays[a.array.index()].name;
            let _ = writeln!(out, "  {n}");
            let _ = writeln!(out, "    read        {}", region_text(p, n, &a.read, false));
            let _ = writeln!(
                out,
                "    write       {}",
                region_text(p, n, &a.write, false)
            );
            let _ = writeln!(
                out,
                "    must-write  {}",
                region_text(p, n, &a.must_write, true)
            );
        }
    }
    out
}

fn poly_json(p: &Program, x: &Poly) -> Value {
    match x.as_constant() {
        Some(c) => json!(c),
        None => json!(x.show(&|v| name(p, v))),
    }
}

pub fn region_json(p: &Program, array: &str, r: &Region) -> Value {
    let lmads: Vec<Value> = r
        .lmads
        .iter()
        .map(|l| {
            json!({
                "text": lmad_text(p, array, l),
                "base": poly_json(p, &l.base),
                "strides": l.dims.iter().map(|d| poly_json(p, &d.stride)).collect::<Vec<_>>(),
                "spans": l.dims.iter().map(|d| poly_json(p, &d.span)).collect::<Vec<_>>(),
                "when_nonnegative": l.when.iter().map(|w| poly_json(p, w)).collect::<Vec<_>>(),
                "exact": l.exact,
            })
        })
        .collect();
    json!({ "exact": r.exact, "why_inexact": r.notes, "lmads": lmads })
}

pub fn json(
    p: &Program,
    sections: &[SectionRegions],
    at: &dyn Fn(Span) -> (usize, usize),
) -> Value {
    let sections: Vec<Value> = sections
        .iter()
        .map(|s| {
            let mut v = match &s.section {
                Section::Loop { counter, span } => {
                    let (l, c) = at(*span);
                    json!({"section": "loop", "counter": p.counters[counter.index()].name,
                           "line": l, "column": c})
                }
                Section::Program => json!({"section": "program"}),
            };
            let arrays: Vec<Value> = s
                .arrays
                .iter()
                .map(|a| {
                    let n = &p.arrays[a.array.index()].name;
                    json!({
                        "array": n,
                        "read": region_json(p, n, &a.read),
                        "write": region_json(p, n, &a.write),
                        "must_write": region_json(p, n, &a.must_write),
                    })
                })
                .collect();
            v["arrays"] = json!(arrays);
            v
        })
        .collect();
    json!({ "sections": sections })
}

/// One region as an isl set of offsets:
/// `[N, i] -> { a[o] : exists (k0, k1 : o = τ + δ0*k0 + δ1*k1 and 0 <= δ0*k0 <= σ0 ...) }`.
/// isl reads it when every stride is a constant and the rest affine.
pub fn isl_set(p: &Program, array: &str, ls: &[Lmad]) -> String {
    let show = |x: &Poly| x.render(&|v| name(p, v), "*");
    let mut vars = std::collections::BTreeSet::new();
    for l in ls {
        vars.extend(l.vars());
    }
    let params: Vec<String> = vars.into_iter().map(|v| name(p, v)).collect();
    let pieces: Vec<String> = ls
        .iter()
        .map(|l| {
            let ks: Vec<String> = (0..l.dims.len()).map(|k| format!("k{k}")).collect();
            let mut sum = show(&l.base);
            let mut cons = Vec::new();
            for (k, d) in l.dims.iter().enumerate() {
                let step = format!("({})*k{k}", show(&d.stride));
                let _ = write!(sum, " + {step}");
                cons.push(format!("0 <= {step} <= {}", show(&d.span)));
            }
            cons.extend(l.when.iter().map(|w| format!("{} >= 0", show(w))));
            let eq = format!("o = {sum}");
            if ks.is_empty() {
                cons.insert(0, eq);
                format!("{array}[o] : {}", cons.join(" and "))
            } else {
                cons.insert(0, eq);
                format!(
                    "{array}[o] : exists ({} : {})",
                    ks.join(", "),
                    cons.join(" and ")
                )
            }
        })
        .collect();
    format!("[{}] -> {{ {} }}", params.join(", "), pieces.join("; "))
}

pub fn isl(
    p: &Program,
    sections: &[SectionRegions],
    at: &dyn Fn(Span) -> (usize, usize),
) -> String {
    let mut out = String::new();
    for s in sections {
        let _ = writeln!(out, "# {}", section_title(p, &s.section, at));
        for a in &s.arrays {
            let n = &p.arrays[a.array.index()].name;
            for (kind, r) in [
                ("read", &a.read),
                ("write", &a.write),
                ("must-write", &a.must_write),
            ] {
                let exact = if r.exact { "exact" } else { "over-approximate" };
                let _ = writeln!(out, "{n} {kind} ({exact}): {}", isl_set(p, n, &r.lmads));
            }
        }
    }
    out
}
