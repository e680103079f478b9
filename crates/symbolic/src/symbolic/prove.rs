//! The proof that a quast is σ for every parameter value satisfying the
//! program's assumptions. For each leaf, with `base` = assumptions ∧ the
//! read runs at x ∧ the leaf's path conditions hold:
//!
//! - a source leaf W(g): g is in W's domain, W(g) writes the cell the read
//!   reads, g ≺ x, and no write K(z) of that cell has g ≺ z ≺ x;
//! - a ⊥ leaf: no write K(z) of the cell has z ≺ x.
//!
//! Each is the integer infeasibility of a few conjunctions of affine
//! constraints over the parameters, x and z, decided by the exact tests of
//! `dependence` (the same cascade `deps` uses). A test that is not exact
//! (a cap, an overflow) leaves the quast unproved.

use super::domain::{self, Atom, Dnf, Place};
use super::quast::{Quast, Source, Test};
use crate::dependence::{Config, Problem, Tester, Verdict};
use crate::model::{Access, Affine, CounterId, Program, StmtId, Var};

/// How the exact tests answered a combination of cases they do not rule
/// out: its verdict, or None for an arithmetic overflow.
pub type Possible = Option<Verdict>;

/// Whether a quast was proved, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    Proved,
    NotProved(String),
}

/// A write statement of the read's array, with its place.
pub struct Writer<'p> {
    pub stmt: StmtId,
    pub access: &'p Access,
    pub place: &'p Place,
}

/// A writer's instance z over fresh counters: its point, domain and cell,
/// or why they are not affine.
struct Renamed {
    z: Vec<Affine>,
    dom: Dnf,
    cell: Vec<Affine>,
}

/// The writers of one array in textual order, each renamed once for every
/// read of the array, and grouped by shape: writers whose renamed domain
/// and cell are equal pose the same problem wherever no loop is common to
/// them and the source or the read, so one of each shape is tested there
/// (a program of n writers of one array made every read test all n).
pub struct Writers<'p> {
    pub list: Vec<Writer<'p>>,
    renamed: Vec<Result<Renamed, &'static str>>,
    /// Per shape, the textual positions (`Place::beta[0]`) of its writers,
    /// ascending, with their indices in `list`.
    shapes: Vec<Vec<(usize, usize)>>,
    by_stmt: std::collections::HashMap<StmtId, usize>,
}

fn top(p: &Place) -> usize {
    p.beta.first().copied().unwrap_or(0)
}

impl<'p> Writers<'p> {
    /// `list` in textual order.
    pub fn new(list: Vec<Writer<'p>>) -> Writers<'p> {
        let mut keys: std::collections::HashMap<String, usize> = Default::default();
        let (mut renamed, mut shapes) = (Vec::new(), Vec::new());
        let mut by_stmt = std::collections::HashMap::new();
        for (k, w) in list.iter().enumerate() {
            by_stmt.entry(w.stmt).or_insert(k);
            let r = Self::rename(w);
            let key = match &r {
                Ok(r) => format!("{:?}|{:?}", r.dom, r.cell),
                // Alone: its error is raised when it is tested.
                Err(_) => format!("#{k}"),
            };
            let next = shapes.len();
            let id = *keys.entry(key).or_insert(next);
            if id == next {
                shapes.push(Vec::new());
            }
            shapes[id].push((top(w.place), k));
            renamed.push(r);
        }
        for members in &mut shapes {
            members.sort_unstable();
        }
        Writers {
            list,
            renamed,
            shapes,
            by_stmt,
        }
    }

    fn rename(w: &Writer) -> Result<Renamed, &'static str> {
        let zc = w.place.counters();
        let map: Vec<(CounterId, Affine)> = zc
            .iter()
            .enumerate()
            .map(|(j, &c)| (c, Affine::var(Var::Counter(fresh(j)))))
            .collect();
        let z = vars_of(&zc)
            .iter()
            .map(|a| subst(a, &map))
            .collect::<Option<Vec<_>>>()
            .ok_or(TOO_BIG)?;
        let dom = subst_dnf(
            &w.place.domain().ok_or("a write's domain is not affine")?,
            &map,
        )
        .ok_or(TOO_BIG)?;
        let cell = subscripts(w.access)
            .ok_or("a write's subscripts are not affine")?
            .iter()
            .map(|a| subst(a, &map))
            .collect::<Option<Vec<_>>>()
            .ok_or(TOO_BIG)?;
        Ok(Renamed { z, dom, cell })
    }

    /// The writers that may write between an instance at textual position
    /// `from` and one at `to` (`from` None: from the start): every writer
    /// at `from` or `to`, and one of each shape strictly between (where its
    /// instances all follow the first and precede the second).
    fn between(&self, from: Option<usize>, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for members in &self.shapes {
            let at = |t: usize| {
                let lo = members.partition_point(|&(u, _)| u < t);
                let hi = members.partition_point(|&(u, _)| u <= t);
                &members[lo..hi]
            };
            if let Some(f) = from.filter(|&f| f != to) {
                out.extend(at(f).iter().map(|&(_, k)| k));
            }
            let first = match from {
                Some(f) => members.partition_point(|&(u, _)| u <= f),
                None => 0,
            };
            if let Some(&(t, k)) = members.get(first) {
                if t < to {
                    out.push(k);
                }
            }
            out.extend(at(to).iter().map(|&(_, k)| k));
        }
        out.sort_unstable();
        out
    }
}

/// The read being proved.
pub struct Read<'p> {
    pub access: &'p Access,
    pub place: &'p Place,
}

pub struct Prover<'p> {
    pub program: &'p Program,
    pub tester: Tester,
    pub assumptions: Dnf,
    /// The parameter constraints of runs that complete (`ranges`) and the
    /// assumptions with them (None: they add nothing), found on the first
    /// failed proof.
    ranged: Option<(Vec<Atom>, Option<Dnf>)>,
    /// Those constraints, once a proof needed them.
    pub in_range: Vec<Atom>,
}

/// Counter ids for the killer's instance z, disjoint from the program's.
pub fn fresh(k: usize) -> CounterId {
    CounterId(u32::MAX - k as u32)
}

/// `a` with counters replaced (`map`: counter -> value).
pub fn subst(a: &Affine, map: &[(CounterId, Affine)]) -> Option<Affine> {
    let mut out = Affine::constant(a.constant);
    for &(v, c) in &a.terms {
        let val = match v {
            Var::Counter(k) => match map.iter().find(|(m, _)| *m == k) {
                Some((_, e)) => e.clone(),
                None => Affine::var(v),
            },
            Var::Param(_) => Affine::var(v),
        };
        out = out.checked_add(&val.checked_scale(c)?)?;
    }
    Some(out)
}

pub fn subst_dnf(d: &Dnf, map: &[(CounterId, Affine)]) -> Option<Dnf> {
    d.iter()
        .map(|conj| {
            conj.iter()
                .map(|a| Some(a.with(subst(a.expr(), map)?)))
                .collect()
        })
        .collect()
}

/// `a ≺ b` in execution order: a DNF with one conjunction per level.
pub fn precedes(a: &[Affine], pa: &Place, b: &[Affine], pb: &Place) -> Option<Dnf> {
    let common = pa.common(pb);
    let mut out = Vec::new();
    for l in 0..=common {
        let mut conj = Vec::new();
        for k in 0..l {
            conj.push(Atom::Eq(a[k].checked_sub(&b[k])?));
        }
        if l < common {
            conj.push(Atom::Le(
                a[l].checked_sub(&b[l])?.checked_add(&Affine::constant(1))?,
            ));
        } else if pa.order >= pb.order {
            continue;
        }
        out.push(conj);
    }
    Some(out)
}

/// `¬(a ≺ b)`: b ≺ a, or b and a the same point of the common loops with a
/// not textually before b.
fn not_precedes(a: &[Affine], pa: &Place, b: &[Affine], pb: &Place) -> Option<Dnf> {
    let common = pa.common(pb);
    let mut out = Vec::new();
    for l in 0..=common {
        let mut conj = Vec::new();
        for k in 0..l {
            conj.push(Atom::Eq(a[k].checked_sub(&b[k])?));
        }
        if l < common {
            conj.push(Atom::Le(
                b[l].checked_sub(&a[l])?.checked_add(&Affine::constant(1))?,
            ));
        } else if pa.order < pb.order {
            continue;
        }
        out.push(conj);
    }
    Some(out)
}

pub fn vars_of(counters: &[CounterId]) -> Vec<Affine> {
    counters
        .iter()
        .map(|&c| Affine::var(Var::Counter(c)))
        .collect()
}

pub fn subscripts(a: &Access) -> Option<Vec<Affine>> {
    a.subscripts.iter().map(|s| s.affine.clone()).collect()
}

/// A quast path as atoms; None on overflow.
pub fn path_atoms(path: &[(Test, bool)]) -> Option<Vec<Atom>> {
    path.iter()
        .map(|(t, holds)| match (t, holds) {
            (Test::Ge(e), true) => e.checked_scale(-1).map(Atom::Le),
            (Test::Ge(e), false) => e.checked_add(&Affine::constant(1)).map(Atom::Le),
            (Test::Stride(e, k), true) => Some(Atom::Stride(e.clone(), *k)),
            (Test::Stride(e, k), false) => Some(Atom::NotStride(e.clone(), *k)),
        })
        .collect()
}

/// A leaf's iteration vector as affine forms, and the atoms that define
/// them: the coordinates themselves when there is no division, else fresh
/// variables g with den·g = the numerator (exact under the leaf's stride).
fn leaf_point(s: &Source) -> Option<(Vec<Affine>, Vec<Atom>)> {
    if s.den == 1 {
        return Some((s.iter.clone(), Vec::new()));
    }
    let mut g = Vec::new();
    let mut atoms = Vec::new();
    for (d, num) in s.iter.iter().enumerate() {
        let v = Affine::var(Var::Counter(quotient(d)));
        atoms.push(Atom::Eq(v.checked_scale(s.den)?.checked_sub(num)?));
        g.push(v);
    }
    Some((g, atoms))
}

/// Counter ids for a divided leaf's coordinates, disjoint from the
/// program's and from [`fresh`]'s (loop nests are at most 200 deep).
fn quotient(d: usize) -> CounterId {
    CounterId(u32::MAX - 1024 - d as u32)
}

const TOO_BIG: &str = "a condition expanded to too many cases";

impl Prover<'_> {
    pub fn new(program: &Program) -> Option<Prover<'_>> {
        let mut assumptions: Dnf = vec![Vec::new()];
        for a in &program.assumptions {
            assumptions = domain::and(&assumptions, &domain::dnf(a, true)?)?;
        }
        Some(Prover {
            program,
            tester: Tester::new(Config::default()),
            assumptions,
            ranged: None,
            in_range: Vec::new(),
        })
    }

    /// The assumptions with the range constraints, computed once.
    fn ranged(&mut self) -> Option<Dnf> {
        let (_, with) = self.ranged.get_or_insert_with(|| {
            let places = domain::places(self.program);
            let atoms = super::ranges::in_range(self.program, &places);
            let with = (!atoms.is_empty())
                .then(|| domain::and(&self.assumptions, &vec![atoms.clone()]))
                .flatten();
            (atoms, with)
        });
        with.clone()
    }

    /// Is every conjunction of one disjunct per factor integer-infeasible?
    /// If not, `what`, with why when the tests could not tell.
    pub fn infeasible(
        &mut self,
        factors: &[&Dnf],
        what: &dyn Fn() -> String,
    ) -> Result<(), String> {
        match self.first_possible(factors, &mut || Ok::<(), String>(()))? {
            None => Ok(()),
            Some(Some(Verdict::Maybe(why))) => Err(format!("{} ({})", what(), why.describe())),
            Some(None) => Err(format!("{}: arithmetic overflow", what())),
            Some(Some(_)) => Err(what()),
        }
    }

    /// The first conjunction of one disjunct per factor that the exact
    /// tests do not prove integer-infeasible, as they answered it; None
    /// when there is none. The combinations are walked
    /// depth first, and before branching over a factor's disjuncts the
    /// prefix so far is tested: a prefix already infeasible rules out
    /// every combination that extends it, which spares the product of the
    /// cases below it. A disjunct whose bounds plainly contradict the
    /// prefix needs no test (`domain::clashes_with`). `count` runs before
    /// each exact test, so that a budget may stop the walk.
    pub fn first_possible<E>(
        &mut self,
        factors: &[&Dnf],
        count: &mut dyn FnMut() -> Result<(), E>,
    ) -> Result<Option<Possible>, E> {
        if factors.iter().any(|f| f.is_empty()) {
            return Ok(None);
        }
        let mut atoms: Vec<&Atom> = Vec::new();
        self.walk(factors, &mut atoms, count)
    }

    fn walk<'a, E>(
        &mut self,
        factors: &[&'a Dnf],
        atoms: &mut Vec<&'a Atom>,
        count: &mut dyn FnMut() -> Result<(), E>,
    ) -> Result<Option<Possible>, E> {
        let Some((first, rest)) = factors.split_first() else {
            count()?;
            return Ok(match self.test(atoms) {
                Some(Verdict::Independent) => None,
                other => Some(other),
            });
        };
        if first.len() > 1 && !atoms.is_empty() {
            count()?;
            if matches!(self.test(atoms), Some(Verdict::Independent)) {
                return Ok(None);
            }
        }
        for conj in first.iter() {
            if domain::clashes_with(atoms, conj) {
                continue;
            }
            let len = atoms.len();
            atoms.extend(conj.iter());
            let found = self.walk(rest, atoms, count)?;
            atoms.truncate(len);
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    pub fn test(&mut self, atoms: &[&Atom]) -> Option<Verdict> {
        let mut vars: Vec<Var> = Vec::new();
        let mut extra = 0;
        for a in atoms {
            for v in a.expr().vars() {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            // A stride needs a quotient; a non-stride, a quotient and a rest.
            extra += match a {
                Atom::Stride(..) => 1,
                Atom::NotStride(..) => 2,
                _ => 0,
            };
        }
        let n = vars.len() + extra;
        let mut next = vars.len();
        let mut p = Problem::new(n);
        let mut row = vec![0i64; n];
        for a in atoms {
            let e = a.expr();
            row.iter_mut().for_each(|c| *c = 0);
            for &(v, c) in &e.terms {
                let j = vars.iter().position(|&w| w == v)?;
                row[j] = c;
            }
            let b = e.constant.checked_neg()?;
            match a {
                Atom::Le(_) => p.add_le(&row, b),
                Atom::Eq(_) => p.add_eq(&row, b),
                // e = k·q
                Atom::Stride(_, k) => {
                    row[next] = -k;
                    next += 1;
                    p.add_eq(&row, b);
                }
                // e = k·q + r, 1 ≤ r ≤ k - 1
                Atom::NotStride(_, k) => {
                    row[next] = -k;
                    row[next + 1] = -1;
                    p.add_eq(&row, b);
                    let mut r = vec![0i64; n];
                    r[next + 1] = -1;
                    p.add_le(&r, -1);
                    r[next + 1] = 1;
                    p.add_le(&r, k - 1);
                    next += 2;
                }
            }
        }
        Some(self.tester.test_distinct(&p).verdict)
    }

    /// Proves `q` is σ of `read` given the writers of its array.
    /// Where the proof fails, it is tried again for the runs that
    /// complete (every access in its declared range): a dependence that
    /// exists only where the program would stop is no source.
    pub fn prove(&mut self, q: &Quast, read: &Read, writers: &Writers) -> Proof {
        let why = match self.prove_all(q, read, writers) {
            Ok(()) => return Proof::Proved,
            Err(why) => why,
        };
        if let Some(ranged) = self.ranged() {
            let plain = std::mem::replace(&mut self.assumptions, ranged);
            let again = self.prove_all(q, read, writers);
            self.assumptions = plain;
            if again.is_ok() {
                self.in_range = self.ranged.as_ref().map_or(Vec::new(), |r| r.0.clone());
                return Proof::Proved;
            }
        }
        Proof::NotProved(why)
    }

    fn prove_all(&mut self, q: &Quast, read: &Read, writers: &Writers) -> Result<(), String> {
        let name = |s: StmtId| self.program.site_name(crate::model::Site::Stmt(s));
        let x = vars_of(&read.place.counters());
        let cell = subscripts(read.access).ok_or("the read's subscripts are not affine")?;
        let dom = read
            .place
            .domain()
            .ok_or("the read's domain is not affine")?;
        let dom = domain::and(&self.assumptions, &dom).ok_or(TOO_BIG)?;
        let constant = |a: &Affine| a.terms.is_empty().then_some(a.constant);
        for (path, leaf) in q.leaves() {
            let mut conj = path_atoms(&path).ok_or(TOO_BIG)?;
            let point = match leaf {
                Some(s) => {
                    let (g, defs) = leaf_point(s).ok_or(TOO_BIG)?;
                    conj.extend(defs);
                    Some(g)
                }
                None => None,
            };
            let base = domain::and(&dom, &vec![conj]).ok_or(TOO_BIG)?;
            let src = match (leaf, &point) {
                (Some(s), Some(g)) => {
                    self.source_leaf(&base, s.stmt, g, &x, &cell, read, writers)?;
                    let k = *writers
                        .by_stmt
                        .get(&s.stmt)
                        .ok_or("the source does not write the array")?;
                    Some(&writers.list[k])
                }
                _ => None,
            };
            // No write of the cell between the leaf and the read (or before
            // the read at all, for ⊥). Writers elsewhere in the program
            // order cannot be between them.
            let candidates = writers.between(src.map(|w| top(w.place)), top(read.place));
            for k in candidates {
                let w = &writers.list[k];
                let r = writers.renamed[k].as_ref().map_err(|e| e.to_string())?;
                // A different constant in one dimension: never the cell.
                if r.cell.iter().zip(&cell).any(
                    |(a, b)| matches!((constant(a), constant(b)), (Some(x), Some(y)) if x != y),
                ) {
                    continue;
                }
                let mut same = Vec::new();
                for (a, b) in r.cell.iter().zip(&cell) {
                    same.push(Atom::Eq(a.checked_sub(b).ok_or(TOO_BIG)?));
                }
                let same = vec![same];
                let before_read = precedes(&r.z, w.place, &x, read.place).ok_or(TOO_BIG)?;
                let what = || {
                    match leaf {
                    Some(s) => format!(
                        "an instance of `{}` may write the cell between the source `{}` and the read",
                        name(w.stmt),
                        name(s.stmt)
                    ),
                    None => format!(
                        "an instance of `{}` may write the cell before the read where the quast says the initial value",
                        name(w.stmt)
                    ),
                }
                };
                match (&point, src) {
                    (Some(g), Some(src)) => {
                        let after_src = precedes(g, src.place, &r.z, w.place).ok_or(TOO_BIG)?;
                        self.infeasible(&[&base, &r.dom, &same, &after_src, &before_read], &what)?
                    }
                    _ => self.infeasible(&[&base, &r.dom, &same, &before_read], &what)?,
                }
            }
        }
        Ok(())
    }

    /// The leaf `stmt(g)` is in its domain, writes the cell, and precedes.
    #[allow(clippy::too_many_arguments)]
    fn source_leaf(
        &mut self,
        base: &Dnf,
        stmt: StmtId,
        g: &[Affine],
        x: &[Affine],
        cell: &[Affine],
        read: &Read,
        writers: &Writers,
    ) -> Result<(), String> {
        let program = self.program;
        let label = || program.site_name(crate::model::Site::Stmt(stmt));
        let w = writers
            .by_stmt
            .get(&stmt)
            .map(|&k| &writers.list[k])
            .ok_or_else(|| format!("`{}` does not write the array read", label()))?;
        let map: Vec<(CounterId, Affine)> = w
            .place
            .counters()
            .into_iter()
            .zip(g.iter().cloned())
            .collect();
        if map.len() != g.len() {
            return Err(format!(
                "the leaf `{}` has the wrong number of counters",
                label()
            ));
        }
        let outside = w.place.outside().ok_or("a write's domain is not affine")?;
        let outside = subst_dnf(&outside, &map).ok_or(TOO_BIG)?;
        self.infeasible(&[base, &outside], &|| {
            format!("the source `{}` may lie outside its domain", label())
        })?;
        let wcell = subscripts(w.access).ok_or("a write's subscripts are not affine")?;
        let mut differ: Dnf = Vec::new();
        for (a, b) in wcell.iter().zip(cell) {
            let d = subst(a, &map)
                .and_then(|a| a.checked_sub(b))
                .ok_or(TOO_BIG)?;
            differ.extend(
                domain::negate(&Atom::Eq(d))
                    .ok_or(TOO_BIG)?
                    .into_iter()
                    .map(|a| vec![a]),
            );
        }
        self.infeasible(&[base, &differ], &|| {
            format!("the source `{}` may write another cell", label())
        })?;
        let late = not_precedes(g, w.place, x, read.place).ok_or(TOO_BIG)?;
        self.infeasible(&[base, &late], &|| {
            format!("the source `{}` may not precede the read", label())
        })
    }
}
