//! σ as JSON (for tools) and as grouped text (for people).
//!
//! Both list reads sorted by operation (site, then iteration vector), then
//! access index; sources are sorted the same way. Reads in conditions appear
//! under the condition's name (`_C1`, `_W2`, or the name given in brackets).

use super::grouped::{self, Coord, Group, Grouper, IterBox};
use super::Flow;
use crate::model::{CounterId, Node, Program, Site};
use std::io::{self, Write};

/// `{"params":{..},"max_trips":K,` of both JSON documents.
fn header(flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"{\"params\":{")?;
    for (k, (name, v)) in flow.params().iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        write!(out, "{sep}{}:{v}", quote(name))?;
    }
    write!(out, "}},\"max_trips\":{},", flow.max_trips())
}

/// Writes σ as one JSON document, one record per read instance
/// (`flow --instances`):
/// `{"params":{..},"max_trips":K,"reads":[{"stmt","iter","access","array","sources","initial"}]}`.
pub fn json(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    header(flow, out)?;
    out.write_all(b"\"reads\":[")?;
    // Names quoted once, not per instance.
    let sites: Vec<String> = (0..program.stmts().len())
        .map(|k| Site::Stmt(crate::model::StmtId(k as u32)))
        .chain((0..program.conditions().len()).map(|k| Site::Cond(crate::model::CondId(k as u32))))
        .map(|s| quote(flow.site_name(s)))
        .collect();
    let site_q = |s: Site| match s {
        Site::Stmt(x) => sites[x.index()].as_str(),
        Site::Cond(c) => sites[program.stmts().len() + c.index()].as_str(),
    };
    let arrays: Vec<String> = program.arrays.iter().map(|a| quote(&a.name)).collect();
    for (k, r) in flow.sorted().enumerate() {
        out.write_all(if k > 0 {
            b",\n{\"stmt\":"
        } else {
            b"\n{\"stmt\":"
        })?;
        out.write_all(site_q(r.site()).as_bytes())?;
        out.write_all(b",\"iter\":")?;
        ints(out, r.iter())?;
        write!(
            out,
            ",\"access\":{},\"array\":{},\"sources\":[",
            r.access(),
            arrays[r.array().index()]
        )?;
        for (j, (site, iter)) in r.writes().enumerate() {
            out.write_all(if j > 0 { b",{\"stmt\":" } else { b"{\"stmt\":" })?;
            out.write_all(site_q(site).as_bytes())?;
            out.write_all(b",\"iter\":")?;
            ints(out, iter)?;
            out.write_all(b"}")?;
        }
        write!(out, "],\"initial\":{}}}", r.initial())?;
    }
    out.write_all(b"\n]}\n")
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn ints(out: &mut impl Write, v: &[i64]) -> io::Result<()> {
    out.write_all(b"[")?;
    for (d, x) in v.iter().enumerate() {
        let sep = if d > 0 { "," } else { "" };
        write!(out, "{sep}{x}")?;
    }
    out.write_all(b"]")
}

/// The parameter values of an analysis, `N=4, M=2`, or `no parameters`.
pub fn sizes(flow: &Flow) -> String {
    let v: Vec<String> = flow
        .params()
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if v.is_empty() {
        "no parameters".to_string()
    } else {
        v.join(", ")
    }
}

/// The counters of the loops around every site, outermost first, by site
/// index (statements, then conditions).
pub fn site_loops(program: &Program) -> Vec<Vec<CounterId>> {
    fn walk(
        nodes: &[Node],
        stack: &mut Vec<CounterId>,
        n_stmts: usize,
        out: &mut [Vec<CounterId>],
    ) {
        for n in nodes {
            match n {
                Node::Stmt(s) => out[s.id.index()] = stack.clone(),
                Node::For(f) => {
                    stack.push(f.counter);
                    walk(&f.body, stack, n_stmts, out);
                    stack.pop();
                }
                Node::While(w) => {
                    stack.push(w.counter);
                    out[n_stmts + w.cond.id.index()] = stack.clone();
                    walk(&w.body, stack, n_stmts, out);
                    stack.pop();
                }
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        out[n_stmts + c.id.index()] = stack.clone();
                        walk(b, stack, n_stmts, out);
                    }
                    if let Some(b) = &i.otherwise {
                        walk(b, stack, n_stmts, out);
                    }
                }
            }
        }
    }
    let n_stmts = program.stmts().len();
    let mut out = vec![Vec::new(); n_stmts + program.conditions().len()];
    walk(&program.body, &mut Vec::new(), n_stmts, &mut out);
    out
}

/// The names of the counters around a site, outermost first.
fn counter_names<'p>(program: &'p Program, g: &Grouper, site: Site) -> Vec<&'p str> {
    g.loops(site)
        .iter()
        .map(|&c| program.counter_decl(c).name.as_str())
        .collect()
}

/// A source coordinate for people: the reader's counter plus an offset, or
/// the value.
fn show_coord(names: &[&str], d: usize, c: Coord) -> String {
    match (c, names.get(d)) {
        (Coord::Same(0), Some(n)) => (*n).to_string(),
        (Coord::Same(k), Some(n)) if k > 0 => format!("{n}+{k}"),
        (Coord::Same(k), Some(n)) => format!("{n}{k}"),
        (Coord::Same(k), None) | (Coord::Int(k), _) => k.to_string(),
    }
}

/// "T[i] or S[i, 0..2] or the initial value": a group's sources, runs of
/// integers in the last coordinate folded into a range.
fn sources_text(flow_names: &dyn Fn(Site) -> String, names: &[&str], group: &Group) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(Site, &[Coord], i64, i64)> = None;
    let flush = |run: &mut Option<(Site, &[Coord], i64, i64)>, parts: &mut Vec<String>| {
        if let Some((site, prefix, lo, hi)) = run.take() {
            let mut c: Vec<String> = (0..prefix.len())
                .map(|d| show_coord(names, d, prefix[d]))
                .collect();
            c.push(if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..{hi}")
            });
            parts.push(with_iter(&flow_names(site), &c.join(", ")));
        }
    };
    for src in &group.sources {
        if let Some((Coord::Int(last), prefix)) = src.iter.split_last() {
            match &mut run {
                Some((s, p, _, hi)) if *s == src.site && *p == prefix && *hi + 1 == *last => {
                    *hi = *last;
                }
                _ => {
                    flush(&mut run, &mut parts);
                    run = Some((src.site, prefix, *last, *last));
                }
            }
            continue;
        }
        flush(&mut run, &mut parts);
        let c: Vec<String> = (0..src.iter.len())
            .map(|d| show_coord(names, d, src.iter[d]))
            .collect();
        parts.push(with_iter(&flow_names(src.site), &c.join(", ")));
    }
    flush(&mut run, &mut parts);
    if group.initial {
        parts.push("the initial value".to_string());
    }
    if parts.is_empty() {
        "nothing (it reads no cell)".to_string()
    } else {
        parts.join(" or ")
    }
}

fn with_iter(name: &str, iter: &str) -> String {
    if iter.is_empty() {
        name.to_string()
    } else {
        format!("{name}[{iter}]")
    }
}

/// The reader iterations of a group: `for i = 1..5, j = 0` per box, boxes
/// separated by `; `; empty for a reader outside every loop.
fn describe_boxes(names: &[&str], boxes: &[IterBox]) -> String {
    if names.is_empty() || boxes.is_empty() {
        return String::new();
    }
    let each: Vec<String> = boxes
        .iter()
        .map(|b| {
            let parts: Vec<String> = b
                .iter()
                .enumerate()
                .map(|(d, &(lo, hi))| {
                    let n = names.get(d).copied().unwrap_or("?");
                    if lo == hi {
                        format!("{n} = {lo}")
                    } else {
                        format!("{n} = {lo}..{hi}")
                    }
                })
                .collect();
            parts.join(", ")
        })
        .collect();
    format!("for {}", each.join("; "))
}

/// Writes σ for people: one line per group of read instances of one access
/// whose sources read the same relative to the reader (`grouped`), e.g.
/// `R[i] reads x (access 0) from T[i] or S[i, 0..2]   for i = 1..5`.
pub fn text(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "# sources of every read at {}, max-trips {}",
        sizes(flow),
        flow.max_trips()
    )?;
    let site_name = |s: Site| flow.site_name(s).to_string();
    grouped::for_each::<io::Error>(program, flow, |g, accesses| {
        for a in accesses {
            let names = counter_names(program, g, a.site);
            let reader = with_iter(flow.site_name(a.site), &names.join(", "));
            let array = &program.array_decl(a.array).name;
            for group in &a.groups {
                let from = sources_text(&site_name, &names, group);
                write!(
                    out,
                    "{reader} reads {array} (access {}) from {from}",
                    a.access
                )?;
                let iters = describe_boxes(&names, &group.boxes);
                if !iters.is_empty() {
                    write!(out, "   {iters}")?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    })
}

/// Writes σ grouped as one JSON document, a site at a time (docs/interpreter.md
/// has the schema): `{"params":{..},"max_trips":K,"accesses":[{"stmt",
/// "access","array","counters","instances","groups":[{"sources":[{"stmt",
/// "iter"}],"initial","text","instances","iters"}]}]}`. A source coordinate
/// is an integer, or `[k]`: the reader's coordinate at that position plus k;
/// `iters` lists disjoint boxes of reader iterations, `[lo,hi]` per counter.
pub fn json_grouped(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    header(flow, out)?;
    out.write_all(b"\"accesses\":[")?;
    let site_name = |s: Site| flow.site_name(s).to_string();
    let mut first = true;
    grouped::for_each::<io::Error>(program, flow, |g, accesses| {
        for a in accesses {
            let names = counter_names(program, g, a.site);
            out.write_all(if first { b"\n{" } else { b",\n{" })?;
            first = false;
            let total: u64 = a.groups.iter().map(|g| g.count).sum();
            write!(
                out,
                "\"stmt\":{},\"access\":{},\"array\":{},\"counters\":[",
                quote(flow.site_name(a.site)),
                a.access,
                quote(&program.array_decl(a.array).name)
            )?;
            for (k, n) in names.iter().enumerate() {
                out.write_all(if k > 0 { b"," } else { b"" })?;
                out.write_all(quote(n).as_bytes())?;
            }
            write!(out, "],\"instances\":{total},\"groups\":[")?;
            for (j, group) in a.groups.iter().enumerate() {
                out.write_all(if j > 0 { b",\n {" } else { b"\n {" })?;
                out.write_all(b"\"sources\":[")?;
                for (k, src) in group.sources.iter().enumerate() {
                    let sep = if k > 0 { "," } else { "" };
                    write!(
                        out,
                        "{sep}{{\"stmt\":{},\"iter\":[",
                        quote(flow.site_name(src.site))
                    )?;
                    for (d, c) in src.iter.iter().enumerate() {
                        let sep = if d > 0 { "," } else { "" };
                        match c {
                            Coord::Same(k) => write!(out, "{sep}[{k}]")?,
                            Coord::Int(v) => write!(out, "{sep}{v}")?,
                        }
                    }
                    out.write_all(b"]}")?;
                }
                let from = sources_text(&site_name, &names, group);
                write!(
                    out,
                    "],\"initial\":{},\"text\":{},\"instances\":{},\"iters\":[",
                    group.initial,
                    quote(&from),
                    group.count
                )?;
                for (k, b) in group.boxes.iter().enumerate() {
                    out.write_all(if k > 0 { b",[" } else { b"[" })?;
                    for (d, (lo, hi)) in b.iter().enumerate() {
                        let sep = if d > 0 { "," } else { "" };
                        write!(out, "{sep}[{lo},{hi}]")?;
                    }
                    out.write_all(b"]")?;
                }
                out.write_all(b"]}")?;
            }
            out.write_all(b"]}")?;
        }
        Ok(())
    })?;
    out.write_all(b"\n]}\n")
}
