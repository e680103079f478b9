//! isl notation: quasts as relations `[N] -> { R[i, j] -> S[i, j - 1] : … }`
//! with the initial-value part as a domain set; the model (domains, the
//! original order as a 2d+1 schedule, access relations) as pet prints it;
//! bounded σ as concrete maps. What isl cannot say (a `while`'s trip count,
//! an unknown condition, a non-affine subscript) is over-approximated and
//! marked with a `#` comment line.

use super::domain::{self, Atom, Dnf, Place};
use super::fada::Possible;
use super::quast::{atom_with, Names, Quast};
use super::{Outcome, Symbolic};
use crate::dataflow::grouped::{AccessGroups, Coord};
use crate::model::{Access, Program, Site, StmtId};
use std::fmt::Write as _;

/// A name isl accepts as a tuple name.
pub fn tuple(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

struct Isl<'p> {
    program: &'p Program,
    names: Names<'p>,
    places: Vec<Place>,
    sites: crate::model::SiteNames,
}

impl<'p> Isl<'p> {
    fn new(program: &'p Program) -> Isl<'p> {
        Isl {
            program,
            names: Names::new(program),
            places: domain::places(program),
            sites: program.site_names(),
        }
    }

    fn params(&self) -> String {
        let p: Vec<&str> = self
            .program
            .params
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        format!("[{}]", p.join(", "))
    }

    fn stmt(&self, s: StmtId) -> String {
        tuple(self.sites.get(Site::Stmt(s)))
    }

    /// `S[i, j]`.
    fn instance(&self, s: StmtId) -> String {
        let vars: Vec<&str> = self.places[s.index()]
            .loops
            .iter()
            .map(|l| self.names.var(crate::model::Var::Counter(l.counter)))
            .collect();
        format!("{}[{}]", self.stmt(s), vars.join(", "))
    }

    fn atom(&self, a: &Atom) -> String {
        super::quast::atom_with(a, &|v| self.names.var(v).to_string())
    }

    fn dnf(&self, d: &Dnf) -> String {
        let conj = |c: &Vec<Atom>| {
            if c.is_empty() {
                "true".to_string()
            } else {
                c.iter()
                    .map(|a| self.atom(a))
                    .collect::<Vec<_>>()
                    .join(" and ")
            }
        };
        match d.len() {
            0 => "false".into(),
            1 => conj(&d[0]),
            _ => d
                .iter()
                .map(|c| format!("({})", conj(c)))
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }

    /// The constraints of a statement's domain (with the assumptions), and
    /// whether they over-approximate it.
    fn domain(&self, s: StmtId) -> (String, bool) {
        let place = &self.places[s.index()];
        let mut d: Dnf = vec![Vec::new()];
        let mut approx = false;
        for a in &self.program.assumptions {
            match domain::dnf(a, true).and_then(|x| domain::and(&d, &x)) {
                Some(x) => d = x,
                None => approx = true,
            }
        }
        let mut rows = Vec::new();
        for l in &place.loops {
            let c = crate::model::Affine::var(crate::model::Var::Counter(l.counter));
            if l.is_while {
                approx = true;
                rows.push(Atom::Le(c.checked_scale(-1).unwrap_or_default()));
            } else {
                rows.push(Atom::Le(l.lo.checked_sub(&c).unwrap_or_default()));
                rows.push(Atom::Le(c.checked_sub(&l.hi).unwrap_or_default()));
                if l.step != 1 {
                    rows.push(Atom::Stride(
                        c.checked_sub(&l.lo).unwrap_or_default(),
                        l.step,
                    ));
                }
            }
        }
        d = domain::and(&d, &vec![rows]).unwrap_or(d);
        for (c, b) in &place.guards {
            match domain::dnf(c, *b).and_then(|x| domain::and(&d, &x)) {
                Some(x) => d = x,
                None => approx = true,
            }
        }
        (self.dnf(&d), approx)
    }

    /// `A[i, j - 1]`, and whether a non-affine subscript was widened.
    /// The cell, and for a non-affine subscript `o{k}` its declared range
    /// (any cell of it, as the engines take it: docs/rules.md §1).
    fn cell(&self, a: &Access) -> (String, Vec<String>) {
        let decl = self.program.array_decl(a.array);
        let mut ranges = Vec::new();
        let subs: Vec<String> = a
            .subscripts
            .iter()
            .enumerate()
            .map(|(k, s)| match &s.affine {
                Some(e) => self.names.affine(e),
                None => {
                    if let Some(r) = decl.dims.get(k) {
                        ranges.push(format!(
                            "{} <= o{k} <= {}",
                            self.names.affine(&r.lo.affine),
                            self.names.affine(&r.hi.affine)
                        ));
                    }
                    format!("o{k}")
                }
            })
            .collect();
        (
            format!("{}[{}]", tuple(&decl.name), subs.join(", ")),
            ranges,
        )
    }

    fn access_map(&self, s: StmtId, a: &Access) -> (String, bool) {
        let (dom, d_approx) = self.domain(s);
        let (cell, ranges) = self.cell(a);
        let approx = !ranges.is_empty();
        let mut cs = vec![dom];
        cs.extend(ranges);
        (
            format!("{} -> {} : {}", self.instance(s), cell, cs.join(" and ")),
            d_approx || approx,
        )
    }
}

/// `arrayflow model FILE --format isl`.
pub fn model(program: &Program) -> String {
    let isl = Isl::new(program);
    let p = isl.params();
    let mut out = String::new();
    let stmts = program.stmts();
    let _ = writeln!(out, "# domains, schedule (original order, 2d+1) and accesses; `#` lines mark over-approximations");
    let _ = writeln!(out, "params: {p}");
    let mut doms = Vec::new();
    for s in &stmts {
        let (d, approx) = isl.domain(s.id);
        if approx {
            let _ = writeln!(
                out,
                "# domain of {}: over-approximated (while or unknown condition)",
                s.label
            );
        }
        doms.push(format!("{} : {}", isl.instance(s.id), d));
    }
    let _ = writeln!(out, "domain: {p} -> {{ {} }}", doms.join("; "));
    let depth = isl
        .places
        .iter()
        .map(|pl| pl.loops.len())
        .max()
        .unwrap_or(0);
    let mut sched = Vec::new();
    for s in &stmts {
        let pl = &isl.places[s.id.index()];
        let mut dims = Vec::new();
        for (k, b) in pl.beta.iter().enumerate() {
            dims.push(b.to_string());
            if let Some(l) = pl.loops.get(k) {
                dims.push(
                    isl.names
                        .var(crate::model::Var::Counter(l.counter))
                        .to_string(),
                );
            }
        }
        while dims.len() < 2 * depth + 1 {
            dims.push("0".into());
        }
        sched.push(format!("{} -> [{}]", isl.instance(s.id), dims.join(", ")));
    }
    let _ = writeln!(out, "schedule: {p} -> {{ {} }}", sched.join("; "));
    let mut writes = Vec::new();
    for s in &stmts {
        if let Some((a, _)) = s.write() {
            let (m, approx) = isl.access_map(s.id, a);
            if approx {
                let _ = writeln!(out, "# write of {}: may (over-approximated)", s.label);
            }
            writes.push(m);
        }
    }
    let _ = writeln!(out, "write: {p} -> {{ {} }}", writes.join("; "));
    for s in &stmts {
        for (k, a) in s.reads().into_iter().enumerate() {
            let (m, approx) = isl.access_map(s.id, a);
            if approx {
                let _ = writeln!(out, "# read {} {k}: over-approximated", s.label);
            }
            let _ = writeln!(out, "read {} {k}: {p} -> {{ {m} }}", tuple(&s.label));
        }
    }
    out
}

/// `arrayflow flow FILE --symbolic --format isl`: per read, `source` (the
/// relation read → source) and `initial` (where the initial value is
/// read), or `fallback` and why.
pub fn symbolic(program: &Program, sym: &Symbolic) -> String {
    let isl = Isl::new(program);
    let p = isl.params();
    let mut out = String::new();
    // The parameters the quasts are claimed for, where a proof assumed the
    // runs that complete (every access in its declared range).
    let context = super::render::in_range(program, sym);
    if !context.is_empty() {
        let _ = writeln!(out, "context: {p} -> {{ : {} }}", context.join(" and "));
    }
    for r in &sym.reads {
        let label = isl.stmt(r.stmt);
        let key = format!("{label} {}", r.read);
        match &r.outcome {
            Outcome::Fallback(why) => {
                let _ = writeln!(out, "fallback {key}: {why}");
            }
            Outcome::Possible(set) => {
                let (src, init) = possible(&isl, r.stmt, set);
                let _ = writeln!(out, "possible {key}: {p} -> {{ {} }}", src.join("; "));
                let _ = writeln!(out, "initial {key}: {p} -> {{ {} }}", init.join("; "));
            }
            Outcome::Exact(q) => {
                let (src, init) = relation(&isl, r.stmt, q);
                let _ = writeln!(out, "source {key}: {p} -> {{ {} }}", src.join("; "));
                let _ = writeln!(out, "initial {key}: {p} -> {{ {} }}", init.join("; "));
            }
        }
    }
    out
}

/// The pieces of the source relation and of the initial set.
fn relation(isl: &Isl, stmt: StmtId, q: &Quast) -> (Vec<String>, Vec<String>) {
    let (dom, _) = isl.domain(stmt);
    let inst = isl.instance(stmt);
    let (mut src, mut init) = (Vec::new(), Vec::new());
    for (path, leaf) in q.leaves() {
        let mut cs = vec![format!("({dom})")];
        cs.extend(path.iter().map(|(t, b)| isl.names.test(t, *b)));
        let cs = cs.join(" and ");
        match leaf {
            None => init.push(format!("{inst} : {cs}")),
            Some(s) => {
                // A division is exact under the leaf's stride: isl's floor.
                let it: Vec<String> = (s.iter.iter())
                    .map(|a| match s.den {
                        1 => isl.names.affine(a),
                        d => format!("floor(({})/{d})", isl.names.affine(a)),
                    })
                    .collect();
                src.push(format!(
                    "{inst} -> {}[{}] : {cs}",
                    isl.stmt(s.stmt),
                    it.join(", ")
                ));
            }
        }
    }
    (src, init)
}

/// `arrayflow flow FILE --format isl`: bounded σ at the given sizes, per
/// read access, as a concrete map (`source`) and set (`initial`), written
/// as each access's groups arrive (`db::resolve::file_groups`): a piece per
/// group box and source, so matmul at N=128 is a few pieces, not one per
/// instance. The reader's coordinates are `i0, i1, …`.
pub struct BoundedWriter<W: std::io::Write> {
    sites: crate::model::SiteNames,
    out: W,
}

impl<W: std::io::Write> BoundedWriter<W> {
    /// Writes the header line.
    pub fn new(
        program: &Program,
        params: &[(String, i64)],
        max_trips: u32,
        mut out: W,
    ) -> std::io::Result<Self> {
        let sizes: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
        writeln!(
            out,
            "# bounded σ at {}, max-trips {max_trips}",
            sizes.join(" ")
        )?;
        Ok(BoundedWriter {
            sites: program.site_names(),
            out,
        })
    }

    /// The `source` and `initial` lines of each access.
    pub fn write(&mut self, accesses: &[AccessGroups]) -> std::io::Result<()> {
        for a in accesses {
            let reader = tuple(self.sites.get(a.site));
            let (mut src, mut init) = (Vec::new(), Vec::new());
            for g in &a.groups {
                for b in &g.boxes {
                    let vars: Vec<String> = (0..b.len()).map(|d| format!("i{d}")).collect();
                    let me = format!("{reader}[{}]", vars.join(", "));
                    let cs: Vec<String> = (b.iter().enumerate())
                        .map(|(d, &(lo, hi))| match lo == hi {
                            true => format!("i{d} = {lo}"),
                            false => format!("{lo} <= i{d} <= {hi}"),
                        })
                        .collect();
                    let cs = match cs.is_empty() {
                        true => String::new(),
                        false => format!(" : {}", cs.join(" and ")),
                    };
                    for w in &g.sources {
                        let it: Vec<String> = (w.iter.iter().enumerate())
                            .map(|(d, c)| match *c {
                                Coord::Same(0) => format!("i{d}"),
                                Coord::Same(k) if k < 0 => format!("i{d} - {}", -(k as i128)),
                                Coord::Same(k) => format!("i{d} + {k}"),
                                Coord::Int(v) => v.to_string(),
                            })
                            .collect();
                        let name = tuple(self.sites.get(w.site));
                        src.push(format!("{me} -> {name}[{}]{cs}", it.join(", ")));
                    }
                    if g.initial {
                        init.push(format!("{me}{cs}"));
                    }
                }
            }
            let key = format!("{reader} {}", a.access);
            writeln!(self.out, "source {key}: {{ {} }}", src.join("; "))?;
            writeln!(self.out, "initial {key}: {{ {} }}", init.join("; "))?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The pieces of the may-source relation and of the initial set.
fn possible(isl: &Isl, stmt: StmtId, set: &Possible) -> (Vec<String>, Vec<String>) {
    let (dom, _) = isl.domain(stmt);
    let inst = isl.instance(stmt);
    let with = |atoms: &[Atom], name: &dyn Fn(crate::model::Var) -> String| {
        let mut cs = vec![format!("({dom})")];
        cs.extend(atoms.iter().map(|a| atom_with(a, name)));
        cs.join(" and ")
    };
    let mut src = Vec::new();
    for f in &set.families {
        let name = |v: crate::model::Var| f.name(isl.program, v);
        let out: Vec<String> = (0..f.counters.len())
            .map(|k| name(crate::model::Var::Counter(super::fada::source_var(k))))
            .collect();
        for conj in &f.when {
            src.push(format!(
                "{inst} -> {}[{}] : {}",
                isl.stmt(f.stmt),
                out.join(", "),
                with(conj, &name)
            ));
        }
    }
    let name = |v: crate::model::Var| isl.names.var(v).to_string();
    let init = set
        .initial
        .iter()
        .map(|c| format!("{inst} : {}", with(c, &name)))
        .collect();
    (src, init)
}
