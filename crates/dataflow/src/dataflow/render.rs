//! σ as JSON (for tools) and as grouped text (for people).
//!
//! Both list reads sorted by operation (site, then iteration vector), then
//! access index; sources are sorted the same way. Reads in conditions appear
//! under the condition's name (`_C1`, `_W2`, or the name given in brackets).

use super::grouped::{self, AccessGroups, Coord, Group, IterBox};
use super::Flow;
use crate::model::{CounterId, Program, Site};
use std::io::{self, Write};

/// `{"params":{..},"max_trips":K,` of both JSON documents.
fn header(params: &[(String, i64)], max_trips: u32, out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"{\"params\":{")?;
    for (k, (name, v)) in params.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        write!(out, "{sep}{}:{v}", quote(name))?;
    }
    write!(out, "}},\"max_trips\":{max_trips},")
}

/// Writes σ as one JSON document, one record per read instance
/// (`flow --instances`):
/// `{"params":{..},"max_trips":K,"reads":[{"stmt","iter","access","array","sources","initial"}]}`.
pub fn json(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    json_head(flow.params(), flow.max_trips(), out)?;
    let records = Records::new(program, flow);
    for (k, r) in flow.sorted().enumerate() {
        out.write_all(if k > 0 { b",\n" } else { b"\n" })?;
        records.write(&r, out)?;
    }
    json_tail(out)
}

/// The document of [`json`] up to its first record.
pub fn json_head(params: &[(String, i64)], max_trips: u32, out: &mut impl Write) -> io::Result<()> {
    header(params, max_trips, out)?;
    out.write_all(b"\"reads\":[")
}

/// The document of [`json`] after its last record.
pub fn json_tail(out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"\n]}\n")
}

/// The records of [`json`], one at a time (the names quoted once, not per
/// instance): pieces of the document rendered where the reads are
/// (`dataflow::merge`, a spread dd run).
pub struct Records {
    sites: Vec<String>,
    n_stmts: usize,
    arrays: Vec<String>,
}

impl Records {
    /// The records of `flow`'s reads, `program`'s sites and arrays.
    pub fn new(program: &Program, flow: &Flow) -> Records {
        Records::named(program, |s| flow.site_name(s).to_string())
    }

    /// Sites named by `name`.
    pub fn named(program: &Program, name: impl Fn(Site) -> String) -> Records {
        let sites: Vec<String> = (0..program.stmts().len())
            .map(|k| Site::Stmt(crate::model::StmtId(k as u32)))
            .chain(
                (0..program.conditions().len()).map(|k| Site::Cond(crate::model::CondId(k as u32))),
            )
            .map(|s| quote(&name(s)))
            .collect();
        Records {
            sites,
            n_stmts: program.stmts().len(),
            arrays: program.arrays.iter().map(|a| quote(&a.name)).collect(),
        }
    }

    fn site_q(&self, s: Site) -> &str {
        match s {
            Site::Stmt(x) => self.sites[x.index()].as_str(),
            Site::Cond(c) => self.sites[self.n_stmts + c.index()].as_str(),
        }
    }

    /// One record, without a separator.
    pub fn write(&self, r: &super::Read<'_>, out: &mut impl Write) -> io::Result<()> {
        let head = (r.site(), r.iter(), r.access(), r.array());
        self.write_parts(head, r.writes(), r.initial(), out)
    }

    /// [`Records::write`] of a read given by its parts: (site, iteration
    /// vector, access index, array), its sources in order, its initial flag.
    pub fn write_parts<'a>(
        &self,
        (site, iter, access, array): (Site, &[i64], usize, crate::model::ArrayId),
        writes: impl Iterator<Item = (Site, &'a [i64])>,
        initial: bool,
        out: &mut impl Write,
    ) -> io::Result<()> {
        out.write_all(b"{\"stmt\":")?;
        out.write_all(self.site_q(site).as_bytes())?;
        out.write_all(b",\"iter\":")?;
        ints(out, iter)?;
        write!(
            out,
            ",\"access\":{},\"array\":{},\"sources\":[",
            access,
            self.arrays[array.index()]
        )?;
        for (j, (site, iter)) in writes.enumerate() {
            out.write_all(if j > 0 { b",{\"stmt\":" } else { b"{\"stmt\":" })?;
            out.write_all(self.site_q(site).as_bytes())?;
            out.write_all(b",\"iter\":")?;
            ints(out, iter)?;
            out.write_all(b"}")?;
        }
        write!(out, "],\"initial\":{initial}}}")
    }
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
    sizes_of(flow.params())
}

fn sizes_of(params: &[(String, i64)]) -> String {
    let v: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
    if v.is_empty() {
        "no parameters".to_string()
    } else {
        v.join(", ")
    }
}

pub use crate::model::nodes::site_loops;

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

/// Writes grouped σ as the groups come, as text or JSON (`arrayflow flow`):
/// the header when made, a site's accesses per [`GroupWriter::write`], the
/// tail at [`GroupWriter::finish`].
pub struct GroupWriter<'p, W: Write> {
    program: &'p Program,
    loops: Vec<Vec<CounterId>>,
    sites: SiteNames<'p>,
    json: bool,
    first: bool,
    out: W,
}

impl<'p, W: Write> GroupWriter<'p, W> {
    /// Writes the header: the sizes, `{"params":..,"max_trips":..,"accesses":[`
    /// in JSON.
    pub fn new(
        program: &'p Program,
        params: &[(String, i64)],
        max_trips: u32,
        json: bool,
        mut out: W,
    ) -> io::Result<GroupWriter<'p, W>> {
        if json {
            header(params, max_trips, &mut out)?;
            out.write_all(b"\"accesses\":[")?;
        } else {
            writeln!(
                out,
                "# sources of every read at {}, max-trips {max_trips}",
                sizes_of(params)
            )?;
        }
        let stmts = program.stmts();
        Ok(GroupWriter {
            program,
            loops: site_loops(program),
            sites: SiteNames {
                n_stmts: stmts.len(),
                names: stmts
                    .iter()
                    .map(|s| s.label.as_str())
                    .chain(program.conditions().iter().map(|c| c.name.as_str()))
                    .collect(),
            },
            json,
            first: true,
            out,
        })
    }

    fn site_name(&self, site: Site) -> &'p str {
        self.sites.get(site)
    }

    /// The names of the counters around a site, outermost first.
    fn counter_names(&self, site: Site) -> Vec<&'p str> {
        let k = self.sites.index(site);
        let p = self.program;
        self.loops.get(k).map_or(Vec::new(), |l| {
            l.iter().map(|&c| p.counter_decl(c).name.as_str()).collect()
        })
    }

    /// Writes the groups of some accesses.
    pub fn write(&mut self, accesses: &[AccessGroups]) -> io::Result<()> {
        for a in accesses {
            if self.json {
                self.json_access(a)?;
            } else {
                self.text_access(a)?;
            }
        }
        Ok(())
    }

    /// One line per group, e.g.
    /// `R[i] reads x (access 0) from T[i] or S[i, 0..2]   for i = 1..5`.
    fn text_access(&mut self, a: &AccessGroups) -> io::Result<()> {
        let names = self.counter_names(a.site);
        let reader = with_iter(self.site_name(a.site), &names.join(", "));
        let array = &self.program.array_decl(a.array).name;
        let site_name = |s: Site| self.sites.get(s).to_string();
        for group in &a.groups {
            let from = sources_text(&site_name, &names, group);
            let iters = describe_boxes(&names, &group.boxes);
            let sep = if iters.is_empty() { "" } else { "   " };
            writeln!(
                self.out,
                "{reader} reads {array} (access {}) from {from}{sep}{iters}",
                a.access
            )?;
        }
        Ok(())
    }

    fn json_access(&mut self, a: &AccessGroups) -> io::Result<()> {
        let names = self.counter_names(a.site);
        let site_name = |s: Site| self.sites.get(s).to_string();
        let out = &mut self.out;
        out.write_all(if self.first { b"\n{" } else { b",\n{" })?;
        self.first = false;
        let total: u64 = a.groups.iter().map(|g| g.count).sum();
        write!(
            out,
            "\"stmt\":{},\"access\":{},\"array\":{},\"counters\":[",
            quote(&site_name(a.site)),
            a.access,
            quote(&self.program.array_decl(a.array).name)
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
                let name = quote(&site_name(src.site));
                write!(out, "{sep}{{\"stmt\":{name},\"iter\":[")?;
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
        out.write_all(b"]}")
    }

    /// Writes the tail and hands the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        if self.json {
            self.out.write_all(b"\n]}\n")?;
        }
        Ok(self.out)
    }
}

/// Site names by site index (statements, then conditions).
struct SiteNames<'p> {
    names: Vec<&'p str>,
    n_stmts: usize,
}

impl<'p> SiteNames<'p> {
    fn index(&self, site: Site) -> usize {
        match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.n_stmts + c.index(),
        }
    }

    fn get(&self, site: Site) -> &'p str {
        self.names.get(self.index(site)).copied().unwrap_or("")
    }
}

fn grouped(program: &Program, flow: &Flow, json: bool, out: &mut impl Write) -> io::Result<()> {
    let mut w = GroupWriter::new(program, flow.params(), flow.max_trips(), json, out)?;
    grouped::for_each::<io::Error>(program, flow, |a| w.write(&a))?;
    w.finish().map(|_| ())
}

/// Writes σ for people: one line per group of read instances of one access
/// whose sources read the same relative to the reader (`grouped`).
pub fn text(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    grouped(program, flow, false, out)
}

/// Writes σ grouped as one JSON document (docs/interpreter.md, "flow output"):
/// `{"params":{..},"max_trips":K,"accesses":[{"stmt","access","array",
/// "counters","instances","groups":[{"sources":[{"stmt","iter"}],"initial",
/// "text","instances","iters"}]}]}`. A source coordinate is an integer, or
/// `[k]`: the reader's coordinate at that position plus k; `iters` lists
/// disjoint boxes of reader iterations, `[lo,hi]` per counter.
pub fn json_grouped(program: &Program, flow: &Flow, out: &mut impl Write) -> io::Result<()> {
    grouped(program, flow, true, out)
}
