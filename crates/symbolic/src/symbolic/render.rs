//! Text and JSON of symbolic σ (`arrayflow flow --symbolic`).

use super::domain::Atom;
use super::fada::Possible;
use super::quast::{affine_with, atom_with, Names};
use super::{Outcome, Symbolic};
use crate::model::{Program, Site, Var};
use serde_json::json;
use std::fmt::Write;

fn head(program: &Program, r: &super::ReadFlow) -> (String, String) {
    let stmt = program.stmts()[r.stmt.index()];
    let access = crate::print::access(program, stmt.reads()[r.read]);
    let names = Names::new(program);
    let counters: Vec<&str> = r
        .counters
        .iter()
        .map(|&c| names.var(Var::Counter(c)))
        .collect();
    (access, format!("({})", counters.join(", ")))
}

/// The parameter constraints some proof assumed (`n >= -1`): those of the
/// runs that complete, where every access stays in its declared range.
pub fn in_range(program: &Program, sym: &Symbolic) -> Vec<String> {
    let names = Names::new(program);
    let name = |v: Var| names.var(v).to_string();
    sym.in_range.iter().map(|a| atom_with(a, &name)).collect()
}

/// ` and n >= -1 (every access in its declared range: other runs stop)`
/// where a proof assumed it.
fn in_range_note(program: &Program, sym: &Symbolic) -> String {
    match in_range(program, sym) {
        atoms if atoms.is_empty() => String::new(),
        atoms => format!(
            " and {} (every access in its declared range: other runs stop)",
            atoms.join(" and ")
        ),
    }
}

pub fn text(program: &Program, sym: &Symbolic) -> String {
    let names = Names::new(program);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# σ for every parameter value satisfying the assumptions{}; quasts fitted at {} parameter vectors and proved",
        in_range_note(program, sym),
        sym.samples.len()
    );
    for r in &sym.reads {
        let label = names.label(r.stmt);
        let (access, at) = head(program, r);
        match &r.outcome {
            Outcome::Exact(q) => {
                let _ = writeln!(out, "{label}{at} reads {access} (access {}) from:", r.read);
                names.tree(q, "  ", &mut out);
            }
            Outcome::Possible(p) => {
                let _ = writeln!(
                    out,
                    "{label}{at} reads {access} (access {}) from one of (possible sources: control is not static):",
                    r.read
                );
                for line in possible_lines(program, p) {
                    let _ = writeln!(out, "  {line}");
                }
            }
            Outcome::Fallback(why) => {
                let _ = writeln!(
                    out,
                    "{label}{at} reads {access} (access {}): bounded σ only: {why}",
                    r.read
                );
            }
        }
    }
    for (c, k) in &sym.condition_reads {
        let _ = writeln!(
            out,
            "{c} reads (access {k}): bounded σ only: a read in a condition"
        );
    }
    out
}

pub fn json(program: &Program, sym: &Symbolic) -> String {
    let names = Names::new(program);
    let reads: Vec<_> = sym
        .reads
        .iter()
        .map(|r| {
            let (access, _) = head(program, r);
            let counters: Vec<&str> = r
                .counters
                .iter()
                .map(|&c| names.var(Var::Counter(c)))
                .collect();
            let mut v = json!({
                "statement": names.label(r.stmt),
                "access": r.read,
                "array": program.array_decl(r.array).name,
                "text": access,
                "counters": counters,
            });
            match &r.outcome {
                Outcome::Exact(q) => {
                    v["exact"] = json!(true);
                    v["quast"] = names.json(q);
                }
                Outcome::Possible(p) => {
                    v["exact"] = json!(false);
                    v["possible"] = json!(possible_lines(program, p));
                }
                Outcome::Fallback(why) => {
                    v["exact"] = json!(false);
                    v["fallback"] = json!(why);
                }
            }
            v
        })
        .collect();
    let conds: Vec<_> = sym
        .condition_reads
        .iter()
        .map(|(c, k)| json!({ "condition": c, "access": k, "exact": false, "fallback": "a read in a condition" }))
        .collect();
    let params: Vec<&str> = program.params.iter().map(|p| p.name.as_str()).collect();
    let v = json!({
        "params": params,
        "samples": sym.samples,
        "reads": reads,
        "condition_reads": conds,
    });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// One line per case: `S(i, _W1' - 1) where _W1' >= 1`, `initial where j <= 3`.
pub fn possible_lines(program: &Program, p: &Possible) -> Vec<String> {
    let mut out = Vec::new();
    for f in &p.families {
        let name = |v: Var| f.name(program, v);
        let label = program.site_name(Site::Stmt(f.stmt));
        for c in f.cases() {
            let it: Vec<String> = c.iter.iter().map(|a| affine_with(a, &name)).collect();
            out.push(format!(
                "{label}({}){}",
                it.join(", "),
                constraints(&c.rest, &name)
            ));
        }
    }
    let name = |v: Var| Names::new(program).var(v).to_string();
    for c in &p.initial {
        out.push(format!("initial{}", constraints(c, &name)));
    }
    out
}

fn constraints(atoms: &[Atom], name: &dyn Fn(Var) -> String) -> String {
    if atoms.is_empty() {
        return String::new();
    }
    let a: Vec<String> = atoms.iter().map(|a| atom_with(a, name)).collect();
    format!(" where {}", a.join(" and "))
}
