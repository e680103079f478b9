//! isl notation: quasts as relations `[N] -> { R[i, j] -> S[i, j - 1] : … }`
//! with the initial-value part as a domain set; the model (domains, the
//! original order as a 2d+1 schedule, access relations) as pet prints it;
//! bounded σ as concrete maps. What isl cannot say (a `while`'s trip count,
//! an unknown condition, a non-affine subscript) is over-approximated and
//! marked with a `#` comment line.

use super::domain::{self, Atom, Dnf, Place};
use super::quast::{Names, Quast};
use super::{Outcome, Symbolic};
use crate::dataflow::Flow;
use crate::model::{Access, Program, Site, StmtId};
use std::fmt::Write;

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
}

impl<'p> Isl<'p> {
    fn new(program: &'p Program) -> Isl<'p> {
        Isl {
            program,
            names: Names { program },
            places: domain::places(program),
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
        tuple(&self.program.site_name(Site::Stmt(s)))
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
        match a {
            Atom::Le(e) => self
                .names
                .cond(&e.checked_scale(-1).unwrap_or_default(), true),
            Atom::Eq(e) => self
                .names
                .cond(e, true)
                .replacen(">=", "=", 1)
                .replacen("<=", "=", 1),
            Atom::Stride(e, k) => format!("({}) mod {k} = 0", self.names.affine(e)),
            Atom::NotStride(e, k) => format!("({}) mod {k} > 0", self.names.affine(e)),
        }
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
    fn cell(&self, a: &Access) -> (String, bool) {
        let mut approx = false;
        let subs: Vec<String> = a
            .subscripts
            .iter()
            .enumerate()
            .map(|(k, s)| match &s.affine {
                Some(e) => self.names.affine(e),
                None => {
                    approx = true;
                    format!("o{k}")
                }
            })
            .collect();
        (
            format!(
                "{}[{}]",
                tuple(&self.program.array_decl(a.array).name),
                subs.join(", ")
            ),
            approx,
        )
    }

    fn access_map(&self, s: StmtId, a: &Access) -> (String, bool) {
        let (dom, d_approx) = self.domain(s);
        let (cell, c_approx) = self.cell(a);
        (
            format!("{} -> {} : {}", self.instance(s), cell, dom),
            d_approx || c_approx,
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
    for r in &sym.reads {
        let label = tuple(&program.site_name(Site::Stmt(r.stmt)));
        let key = format!("{label} {}", r.read);
        match &r.outcome {
            Outcome::Fallback(why) => {
                let _ = writeln!(out, "fallback {key}: {why}");
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
        cs.extend(path.iter().map(|(e, b)| isl.names.cond(e, *b)));
        let cs = cs.join(" and ");
        match leaf {
            None => init.push(format!("{inst} : {cs}")),
            Some(s) => {
                let it: Vec<String> = s.iter.iter().map(|a| isl.names.affine(a)).collect();
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
/// read access, as concrete maps and sets.
pub fn bounded(flow: &Flow) -> String {
    let mut out = String::new();
    let sizes: Vec<String> = flow
        .params()
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let _ = writeln!(
        out,
        "# bounded σ at {}, max-trips {}",
        sizes.join(" "),
        flow.max_trips()
    );
    let mut keys: Vec<(Site, usize)> = Vec::new();
    let mut src: Vec<Vec<String>> = Vec::new();
    let mut init: Vec<Vec<String>> = Vec::new();
    let vec = |v: &[i64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for r in flow.sorted() {
        let key = (r.site(), r.access());
        let k = match keys.iter().position(|x| *x == key) {
            Some(k) => k,
            None => {
                keys.push(key);
                src.push(Vec::new());
                init.push(Vec::new());
                keys.len() - 1
            }
        };
        let me = format!("{}[{}]", tuple(flow.site_name(r.site())), vec(r.iter()));
        for (ws, wi) in r.writes() {
            src[k].push(format!(
                "{me} -> {}[{}]",
                tuple(flow.site_name(ws)),
                vec(wi)
            ));
        }
        if r.initial() {
            init[k].push(me);
        }
    }
    for (k, (site, acc)) in keys.iter().enumerate() {
        let label = tuple(flow.site_name(*site));
        let _ = writeln!(out, "source {label} {acc}: {{ {} }}", src[k].join("; "));
        let _ = writeln!(out, "initial {label} {acc}: {{ {} }}", init[k].join("; "));
    }
    out
}
