//! σ as JSON (for tools) and as grouped text (for people).
//!
//! Both list reads sorted by operation (site, then iteration vector), then
//! access index; sources are sorted the same way. Reads in conditions appear
//! under the condition's name (`_C1`, `_W2`, or the name given in brackets).

use super::{Flow, Read};
use crate::model::{CounterId, Node, Program, Site};
use std::collections::hash_map::{Entry, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes σ as one JSON document:
/// `{"params":{..},"max_trips":K,"reads":[{"stmt","iter","access","array","sources","initial"}]}`.
pub fn json(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"{\"params\":{")?;
    for (k, (name, v)) in flow.params().iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        write!(out, "{sep}{}:{v}", quote(name))?;
    }
    write!(out, "}},\"max_trips\":{},\"reads\":[", flow.max_trips())?;
    for (k, r) in flow.sorted().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let array = &program.array_decl(r.array()).name;
        write!(
            out,
            "{sep}\n{{\"stmt\":{},\"iter\":{},\"access\":{},\"array\":{},\"sources\":[",
            quote(flow.site_name(r.site())),
            ints(r.iter()),
            r.access(),
            quote(array)
        )?;
        for (j, (site, iter)) in r.writes().enumerate() {
            let sep = if j > 0 { "," } else { "" };
            write!(
                out,
                "{sep}{{\"stmt\":{},\"iter\":{}}}",
                quote(flow.site_name(site)),
                ints(iter)
            )?;
        }
        write!(out, "],\"initial\":{}}}", r.initial())?;
    }
    out.write_all(b"\n]}\n")
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn ints(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(","))
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

struct Text<'a> {
    program: &'a Program,
    flow: &'a Flow,
    loops: Vec<Vec<CounterId>>,
}

impl Text<'_> {
    fn loops(&self, site: Site) -> &[CounterId] {
        let k = match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.program.stmts().len() + c.index(),
        };
        self.loops.get(k).map_or(&[], Vec::as_slice)
    }

    fn counter_name(&self, c: CounterId) -> &str {
        &self.program.counter_decl(c).name
    }

    /// `R[i]`: the reader with its counters' names.
    fn reader(&self, site: Site) -> String {
        let names: Vec<&str> = self
            .loops(site)
            .iter()
            .map(|&c| self.counter_name(c))
            .collect();
        with_iter(self.flow.site_name(site), &names.join(", "))
    }

    /// Each coordinate of a source relative to the reader: the reader's
    /// counter name plus an offset when both sit in that loop.
    fn coords(&self, r: &Read, site: Site, iter: &[i64]) -> Vec<Coord> {
        let mine = self.loops(r.site());
        let theirs = self.loops(site);
        iter.iter()
            .enumerate()
            .map(|(d, &v)| {
                if d < mine.len() && d < theirs.len() && mine[..=d] == theirs[..=d] {
                    let name = self.counter_name(mine[d]).to_string();
                    if let Some(k) = v.checked_sub(r.iter()[d]) {
                        return Coord::Name(name, k);
                    }
                }
                Coord::Int(v)
            })
            .collect()
    }

    /// "T[i] or S[i, 0..2] or the initial value".
    fn sources(&self, r: &Read) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut group: Option<(Site, Vec<Coord>, i64, i64)> = None;
        let flush = |g: &mut Option<(Site, Vec<Coord>, i64, i64)>, parts: &mut Vec<String>| {
            if let Some((site, prefix, lo, hi)) = g.take() {
                let mut c: Vec<String> = prefix.iter().map(Coord::show).collect();
                c.push(if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}..{hi}")
                });
                parts.push(with_iter(self.flow.site_name(site), &c.join(", ")));
            }
        };
        for (site, iter) in r.writes() {
            let mut coords = self.coords(r, site, iter);
            // Runs of plain integers in the last coordinate fold into a range.
            if let Some(Coord::Int(last)) = coords.last().cloned() {
                coords.pop();
                match &mut group {
                    Some((s, p, _, hi)) if *s == site && *p == coords && *hi + 1 == last => {
                        *hi = last;
                    }
                    _ => {
                        flush(&mut group, &mut parts);
                        group = Some((site, coords, last, last));
                    }
                }
                continue;
            }
            flush(&mut group, &mut parts);
            let c: Vec<String> = coords.iter().map(Coord::show).collect();
            parts.push(with_iter(self.flow.site_name(site), &c.join(", ")));
        }
        flush(&mut group, &mut parts);
        if r.initial() {
            parts.push("the initial value".to_string());
        }
        if parts.is_empty() {
            "nothing (it reads no cell)".to_string()
        } else {
            parts.join(" or ")
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Coord {
    Name(String, i64),
    Int(i64),
}

impl Coord {
    fn show(&self) -> String {
        match self {
            Coord::Name(n, 0) => n.clone(),
            Coord::Name(n, k) if *k > 0 => format!("{n}+{k}"),
            Coord::Name(n, k) => format!("{n}{k}"),
            Coord::Int(v) => v.to_string(),
        }
    }
}

fn with_iter(name: &str, iter: &str) -> String {
    if iter.is_empty() {
        name.to_string()
    } else {
        format!("{name}[{iter}]")
    }
}

/// The iteration vectors of a group of readers: a box of ranges when they
/// fill one, else their count and extremes.
fn describe_group(names: &[&str], iters: &[&[i64]]) -> String {
    if names.is_empty() || iters.is_empty() {
        return String::new();
    }
    let dims = names.len();
    let mut lo = iters[0].to_vec();
    let mut hi = iters[0].to_vec();
    for it in iters {
        for d in 0..dims.min(it.len()) {
            lo[d] = lo[d].min(it[d]);
            hi[d] = hi[d].max(it[d]);
        }
    }
    let size = (0..dims).try_fold(1u128, |n, d| n.checked_mul((hi[d] - lo[d] + 1) as u128));
    let is_box = size == Some(iters.len() as u128);
    if is_box {
        let parts: Vec<String> = (0..dims)
            .map(|d| {
                if lo[d] == hi[d] {
                    format!("{} = {}", names[d], lo[d])
                } else {
                    format!("{} = {}..{}", names[d], lo[d], hi[d])
                }
            })
            .collect();
        format!("for {}", parts.join(", "))
    } else {
        format!(
            "for {} instances from [{}] to [{}]",
            iters.len(),
            join(iters[0]),
            join(iters[iters.len() - 1])
        )
    }
}

fn join(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    parts.join(", ")
}

/// Writes σ for people: one line per group of read instances of one access
/// whose sources read the same relative to the reader, e.g.
/// `R[i] reads x from T[i] or S[i, 0..2]   for i = 1..5`.
pub fn text(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    let t = Text {
        program,
        flow,
        loops: site_loops(program),
    };
    writeln!(
        out,
        "# sources of every read at {}, max-trips {}",
        sizes(flow),
        flow.max_trips()
    )?;
    // Per (site, access), readers whose sources read the same relative to
    // them form one line, in order of first appearance.
    let mut lines: Vec<(Read, String, Vec<&[i64]>)> = Vec::new();
    let mut index: HashMap<(Site, usize, String), usize> = HashMap::new();
    let mut reads: Vec<Read> = flow.sorted().collect();
    reads.sort_by_key(|r| (r.site(), r.access()));
    for r in reads {
        let line = t.sources(&r);
        match index.entry((r.site(), r.access(), line)) {
            Entry::Occupied(e) => lines[*e.get()].2.push(r.iter()),
            Entry::Vacant(e) => {
                let line = e.key().2.clone();
                e.insert(lines.len());
                lines.push((r, line, vec![r.iter()]));
            }
        }
    }
    for (r, line, iters) in &lines {
        let names: Vec<&str> = t
            .loops(r.site())
            .iter()
            .map(|&c| t.counter_name(c))
            .collect();
        let mut s = String::new();
        let _ = write!(
            s,
            "{} reads {} (access {}) from {}",
            t.reader(r.site()),
            program.array_decl(r.array()).name,
            r.access(),
            line
        );
        let group = describe_group(&names, iters);
        if !group.is_empty() {
            let _ = write!(s, "   {group}");
        }
        writeln!(out, "{s}")?;
    }
    Ok(())
}
