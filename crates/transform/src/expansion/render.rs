//! `arrayflow expand` output: JSON for tools, a per-array summary for people.

use super::parallel::{Carried, LoopReport};
use super::sa::{ReadKind, SaReport};
use super::Expansion;
use crate::model::{ArrayId, Program};
use std::io::{self, Write};

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn ints(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(","))
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "null".to_string(), |l| l.to_string())
}

fn params_json(exp: &Expansion) -> String {
    let ps: Vec<String> = exp
        .inst
        .flow
        .params()
        .iter()
        .map(|(n, v)| format!("{}:{v}", quote(n)))
        .collect();
    format!("{{{}}}", ps.join(","))
}

fn kinds_json(c: &Carried) -> String {
    let mut v = Vec::new();
    for (on, name) in [(c.flow, "flow"), (c.anti, "anti"), (c.output, "output")] {
        if on {
            v.push(quote(name));
        }
    }
    format!("[{}]", v.join(","))
}

/// Memory per array: original, MSE, SA (cells actually used, and declared
/// rectangular sizes).
pub struct Memory {
    pub name: String,
    pub original: u64,
    pub mse: u64,
    pub mse_declared: u64,
    pub dead_cells: u64,
    pub sa: u64,
    pub sa_declared: u64,
}

pub fn memory(exp: &Expansion, sa: &SaReport) -> Vec<Memory> {
    exp.arrays
        .iter()
        .map(|a| {
            let (sa_cells, sa_declared) = sa.memory(a.array);
            Memory {
                name: a.name.clone(),
                original: a.cells_before,
                mse: a.classes,
                mse_declared: a.cells_before * u64::from(a.max_classes_per_cell.max(1)),
                dead_cells: a.dead_writes,
                sa: sa_cells,
                sa_declared,
            }
        })
        .collect()
}

/// Writes `"key":[` then the items, one a line, then `]`.
fn list<T>(
    out: &mut impl Write,
    key: &str,
    items: impl IntoIterator<Item = T>,
    item: impl Fn(T) -> String,
) -> io::Result<()> {
    write!(out, "{}:[", quote(key))?;
    for (k, x) in items.into_iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        write!(out, "{sep}\n{}", item(x))?;
    }
    out.write_all(b"\n]")
}

fn tail_json(out: &mut impl Write, mem: &[Memory], loops: &[LoopReport]) -> io::Result<()> {
    out.write_all(b",\n")?;
    list(out, "memory", mem, |m| {
        format!(
            "{{\"array\":{},\"original\":{},\"mse\":{},\"mse_declared\":{},\"dead_cells\":{},\"sa\":{},\"sa_declared\":{}}}",
            quote(&m.name), m.original, m.mse, m.mse_declared, m.dead_cells, m.sa, m.sa_declared
        )
    })?;
    out.write_all(b",\n")?;
    list(out, "loops", loops, |l| {
        format!(
            "{{\"loop\":{},\"depth\":{},\"original\":{},\"mse\":{},\"sa\":{},\"mse_keeps_sa\":{}}}",
            quote(&l.name),
            l.depth,
            kinds_json(&l.original),
            kinds_json(&l.mse),
            kinds_json(&l.sa),
            l.mse_keeps_sa()
        )
    })?;
    out.write_all(b"}\n")
}

/// The MSE result as one JSON document (docs/expansion.md §7).
pub fn json(
    exp: &Expansion,
    sa: &SaReport,
    loops: &[LoopReport],
    out: &mut impl Write,
) -> io::Result<()> {
    let flow = &exp.inst.flow;
    let facts = &exp.inst.facts;
    let c = &exp.classes;
    writeln!(
        out,
        "{{\"params\":{},\"max_trips\":{},",
        params_json(exp),
        flow.max_trips()
    )?;
    list(out, "arrays", &exp.arrays, |a| {
        let per: Vec<String> = a
            .classes_per_cell
            .iter()
            .map(|(i, n)| format!("[{},{n}]", ints(i)))
            .collect();
        format!(
            "{{\"name\":{},\"cells_before\":{},\"cells_written\":{},\"classes\":{},\"dead_writes\":{},\"max_classes_per_cell\":{},\"classes_per_cell\":[{}]}}",
            quote(&a.name),
            a.cells_before,
            a.cells_written,
            a.classes,
            a.dead_writes,
            a.max_classes_per_cell,
            per.join(",")
        )
    })?;
    out.write_all(b",\n")?;
    let mut order: Vec<usize> = (0..c.write_ops.len()).collect();
    order.sort_by(|&a, &b| {
        let (oa, ob) = (c.write_ops[a], c.write_ops[b]);
        (facts.site(oa), facts.op_iter(oa)).cmp(&(facts.site(ob), facts.op_iter(ob)))
    });
    list(out, "writes", order, |w| {
        let op = c.write_ops[w];
        let cell = if c.write_may[w] {
            "null".to_string()
        } else {
            c.write_cells(w)
                .first()
                .and_then(|&cell| exp.cell(cell))
                .map_or_else(|| "null".to_string(), |(_, i)| ints(&i))
        };
        format!(
            "{{\"stmt\":{},\"iter\":{},\"cell\":{cell},\"may\":{},\"label\":{},\"dead\":{}}}",
            quote(flow.site_name(facts.site(op))),
            ints(facts.op_iter(op)),
            c.write_may[w],
            opt(c.write_label(w)),
            !c.live[w]
        )
    })?;
    out.write_all(b",\n")?;
    list(out, "reads", flow.sorted(), |r| {
        format!(
            "{{\"stmt\":{},\"iter\":{},\"access\":{},\"label\":{},\"initial\":{}}}",
            quote(flow.site_name(r.site())),
            ints(r.iter()),
            r.access(),
            opt(c.read_label(r.index())),
            r.initial()
        )
    })?;
    tail_json(out, &memory(exp, sa), loops)
}

/// The single-assignment baseline as JSON.
pub fn sa_json(
    program: &Program,
    exp: &Expansion,
    sa: &SaReport,
    loops: &[LoopReport],
    out: &mut impl Write,
) -> io::Result<()> {
    let (phi, phi_inst) = sa.phi_reads();
    writeln!(
        out,
        "{{\"params\":{},\"max_trips\":{},\"transform\":\"sa\",\"phi_reads\":{phi},\"phi_instances\":{phi_inst},",
        params_json(exp),
        exp.inst.flow.max_trips()
    )?;
    let name = |a: crate::model::ArrayId| program.array_decl(a).name.clone();
    list(out, "arrays", &sa.arrays, |a| {
        format!(
            "{{\"array\":{},\"stmt\":{},\"name\":{},\"cells\":{},\"declared\":{}}}",
            quote(&name(a.array)),
            quote(&a.stmt),
            quote(&format!("{}_{}", name(a.array), a.stmt)),
            a.cells,
            a.declared
        )
    })?;
    out.write_all(b",\n")?;
    list(out, "reads", &sa.reads, |r| {
        let (kind, from, reasons) = match &r.kind {
            ReadKind::Direct { stmt } => ("direct", quote(stmt), String::new()),
            ReadKind::Original => ("original", "null".to_string(), String::new()),
            ReadKind::Phi(rs) => {
                let v: Vec<String> = rs.iter().map(|r| quote(r.describe())).collect();
                ("phi", "null".to_string(), v.join(","))
            }
        };
        format!(
            "{{\"stmt\":{},\"access\":{},\"array\":{},\"instances\":{},\"kind\":\"{kind}\",\"from\":{from},\"reasons\":[{reasons}]}}",
            quote(&r.site_name),
            r.access,
            quote(&name(r.array)),
            r.instances
        )
    })?;
    out.write_all(b",\n")?;
    list(out, "polly", &sa.polly, |(a, cases)| {
        let v: Vec<String> = cases
            .iter()
            .map(|c| {
                format!(
                    "{{\"case\":{},\"handling\":{}}}",
                    quote(c.describe()),
                    quote(c.handling())
                )
            })
            .collect();
        format!(
            "{{\"array\":{},\"gives_up\":[{}]}}",
            quote(&name(*a)),
            v.join(",")
        )
    })?;
    tail_json(out, &memory(exp, sa), loops)
}

fn index(i: &[i64]) -> String {
    let v: Vec<String> = i.iter().map(i64::to_string).collect();
    v.join(", ")
}

/// Runs of cells (consecutive in the last dimension, same count).
fn ranges(cells: &[(Vec<i64>, u32)]) -> Vec<(Vec<i64>, Vec<i64>, u32)> {
    let mut out: Vec<(Vec<i64>, Vec<i64>, u32)> = Vec::new();
    for (i, n) in cells {
        if let Some(last) = out.last_mut() {
            let k = i.len();
            let next = k > 0
                && last.1.len() == k
                && last.1[..k - 1] == i[..k - 1]
                && last.1[k - 1] + 1 == i[k - 1];
            if next && last.2 == *n {
                last.1 = i.clone();
                continue;
            }
        }
        out.push((i.clone(), i.clone(), *n));
    }
    out
}

fn loops_text(out: &mut impl Write, mem: &[Memory], loops: &[LoopReport]) -> io::Result<()> {
    writeln!(out, "memory (cells): original / MSE / single assignment")?;
    for m in mem {
        writeln!(
            out,
            "  {}: {} / {} (rectangular {}) + {} private for dead writes / {} (rectangular {})",
            m.name, m.original, m.mse, m.mse_declared, m.dead_cells, m.sa, m.sa_declared
        )?;
    }
    writeln!(
        out,
        "loops: dependences carried (original | MSE | single assignment)"
    )?;
    for l in loops {
        writeln!(
            out,
            "  {}{} : {} | {} | {}{}",
            "  ".repeat(l.depth),
            l.name,
            l.original.describe(),
            l.mse.describe(),
            l.sa.describe(),
            if l.mse_keeps_sa() {
                ""
            } else {
                "   (MSE loses SA's parallelism)"
            }
        )?;
    }
    Ok(())
}

/// A readable per-array summary.
pub fn text(
    exp: &Expansion,
    sa: &SaReport,
    loops: &[LoopReport],
    out: &mut impl Write,
) -> io::Result<()> {
    let flow = &exp.inst.flow;
    let facts = &exp.inst.facts;
    let c = &exp.classes;
    writeln!(
        out,
        "maximal static expansion at {} (max-trips {})",
        crate::dataflow::render::sizes(flow),
        flow.max_trips()
    )?;
    // The writes of each array, in order, found once (not a scan of every
    // write per array).
    let mut writes_of: std::collections::HashMap<ArrayId, Vec<usize>> = Default::default();
    for w in 0..c.write_ops.len() {
        if let Some((array, _)) = c.write_cells(w).first().and_then(|&cell| exp.cell(cell)) {
            writes_of.entry(array).or_default().push(w);
        }
    }
    for a in &exp.arrays {
        if a.cells_written == 0 {
            continue;
        }
        writeln!(
            out,
            "\n{}: {} cells declared, {} written; {} classes of live writes (at most {} per cell); {} dead writes",
            a.name, a.cells_before, a.cells_written, a.classes, a.max_classes_per_cell, a.dead_writes
        )?;
        writeln!(out, "  expansion factor per cell range:")?;
        for (lo, hi, n) in ranges(&a.classes_per_cell) {
            let cells = if lo == hi {
                format!("{}[{}]", a.name, index(&lo))
            } else {
                format!("{}[{} .. {}]", a.name, index(&lo), index(&hi))
            };
            let note = if n == 0 { " (only dead writes)" } else { "" };
            writeln!(out, "    {cells}: x{n}{note}")?;
        }
        // A sample of labels: the first writes of each statement.
        writeln!(out, "  labels (sample):")?;
        // Writes seen per site (a map: one entry per statement).
        let mut shown: std::collections::HashMap<usize, usize> = Default::default();
        for &w in writes_of.get(&a.array).map_or(&[][..], Vec::as_slice) {
            let op = c.write_ops[w];
            let site = facts.site(op);
            let n = shown.entry(facts.site_index(site)).or_insert(0);
            *n += 1;
            let n = *n;
            if n <= 4 {
                let label = c
                    .write_label(w)
                    .map_or_else(|| "dead".to_string(), |l| format!("label {l}"));
                writeln!(
                    out,
                    "    {}[{}] -> {label}",
                    flow.site_name(site),
                    index(facts.op_iter(op))
                )?;
            }
        }
    }
    let dead: u64 = exp.arrays.iter().map(|a| a.dead_writes).sum();
    writeln!(
        out,
        "\n{} classes in all; {} dead writes (not counted in classes)",
        c.total, dead
    )?;
    loops_text(out, &memory(exp, sa), loops)
}

/// The single-assignment baseline, for people.
pub fn sa_text(
    program: &Program,
    exp: &Expansion,
    sa: &SaReport,
    loops: &[LoopReport],
    out: &mut impl Write,
) -> io::Result<()> {
    let (phi, phi_inst) = sa.phi_reads();
    writeln!(out, "single assignment (fully indexed expansion)")?;
    for a in &sa.arrays {
        writeln!(
            out,
            "  {}_{}: {} cells written ({} declared)",
            program.array_decl(a.array).name,
            a.stmt,
            a.cells,
            a.declared
        )?;
    }
    writeln!(out, "reads: {phi} need a φ-function ({phi_inst} instances)")?;
    for r in &sa.reads {
        let what = match &r.kind {
            ReadKind::Direct { stmt } => format!(
                "reads {}_{} directly",
                program.array_decl(r.array).name,
                stmt
            ),
            ReadKind::Original => "reads the original array".to_string(),
            ReadKind::Phi(rs) => {
                let v: Vec<&str> = rs.iter().map(|r| r.describe()).collect();
                format!("φ: {}", v.join("; "))
            }
        };
        writeln!(
            out,
            "  {} read {} of {} ({} instances): {what}",
            r.site_name,
            r.access,
            program.array_decl(r.array).name,
            r.instances
        )?;
    }
    if !sa.polly.is_empty() {
        writeln!(out, "where Polly's pass gives up, and what happens here:")?;
        for (a, cases) in &sa.polly {
            for c in cases {
                writeln!(
                    out,
                    "  {}: {} -> {}",
                    program.array_decl(*a).name,
                    c.describe(),
                    c.handling()
                )?;
            }
        }
    }
    loops_text(out, &memory(exp, sa), loops)
}
