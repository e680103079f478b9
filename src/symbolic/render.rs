//! Text and JSON of symbolic σ (`arrayflow flow --symbolic`).

use super::quast::Names;
use super::{Outcome, Symbolic};
use crate::model::{Program, Site, Var};
use serde_json::json;
use std::fmt::Write;

fn head(program: &Program, r: &super::ReadFlow) -> (String, String) {
    let stmt = program.stmts()[r.stmt.index()];
    let access = crate::print::access(program, stmt.reads()[r.read]);
    let names = Names { program };
    let counters: Vec<&str> = r
        .counters
        .iter()
        .map(|&c| names.var(Var::Counter(c)))
        .collect();
    (access, format!("({})", counters.join(", ")))
}

pub fn text(program: &Program, sym: &Symbolic) -> String {
    let names = Names { program };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# σ for every parameter value satisfying the assumptions; quasts fitted at {} parameter vectors and proved",
        sym.samples.len()
    );
    for r in &sym.reads {
        let label = program.site_name(Site::Stmt(r.stmt));
        let (access, at) = head(program, r);
        match &r.outcome {
            Outcome::Exact(q) => {
                let _ = writeln!(out, "{label}{at} reads {access} (access {}) from:", r.read);
                names.tree(q, "  ", &mut out);
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
    let names = Names { program };
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
                "statement": program.site_name(Site::Stmt(r.stmt)),
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
