//! Privatization from exact σ, for every parameter value (maydan-digest.md
//! §3.8 with Last Write Trees): the decisions of [`super::analyze`] read
//! off the reads' quasts and the exact dependence tests instead of the
//! instances at one size, so they hold at every size and cost the same at
//! PolyBench's defaults as at MINI.
//!
//! For loop L at depth d, with i the read's counters and w a quast leaf's
//! source iteration (affine in i and the parameters), on the leaf's piece:
//! - **carried**: w is in L, in the same execution (w_k = i_k for k < d)
//!   and another iteration (w_d ≠ i_d);
//! - **copy-in**: a read in L sees ⊥, a source outside L, or one in another
//!   execution of L;
//! - **live after L**: a read outside L, or in another execution, sees a
//!   source in L; it is from the last iteration unless w_d + step ≤ hi;
//! - **memory conflict** (what makes private copies worth having): a write
//!   in L and another access in L reach the same cell in two iterations of
//!   one execution.
//!
//! Each question is an integer feasibility problem for `dependence`'s exact
//! tests; an answer they cannot give ("maybe") counts as feasible, which
//! keeps every decision safe (a loop is then not parallel, or a copy-in or
//! a last-writer finalization is kept). Programs outside static control
//! have no quasts: the caller falls back to bounded σ.

use super::reduction::{self, ReduceOp};
use crate::model::{Access, Affine, ArrayId, CounterId, Program, StmtId, Var};
use crate::symbolic::domain::{self, Atom, Dnf, Place};
use crate::symbolic::prove::{self, Prover};
use crate::symbolic::{Names, Outcome, Quast, Source};
use std::collections::BTreeMap;

/// What privatization does for one array in one loop, for every parameter
/// value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// No dependence on the array crosses iterations of the loop.
    Shared,
    /// Memory dependences cross iterations, values do not.
    Private {
        /// The reads that may see a value from before the loop's current
        /// execution (`S: A[i - 1]`), each once.
        copy_in: Vec<String>,
        finalization: Last,
    },
    /// A value flows across iterations: the source (`S(i - 1, j)`) and the
    /// read (`T(i, j)`) of the first such pair found.
    Carried { source: String, read: String },
    /// Values flow across iterations only through one cell (`cell`,
    /// `s` or `X[i]`) that every write of the array in the loop updates
    /// with `op` ([`super::reduction`]): carried, but the iterations may
    /// run in any order and combine partial results, where reassociating
    /// `op` is allowed.
    Reduction {
        op: ReduceOp,
        cell: String,
        source: String,
        read: String,
    },
}

/// Where the values live after the loop come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Last {
    /// Nothing the loop writes is read after it.
    None,
    /// From the last iteration.
    LastIteration,
    /// Each cell from the iteration that wrote it last (known statically).
    LastWriter,
}

/// One loop and what privatization makes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactLoop {
    pub counter: CounterId,
    pub name: String,
    pub depth: usize,
    /// Every array the loop accesses, by name.
    pub arrays: BTreeMap<String, Decision>,
}

impl ExactLoop {
    pub fn parallel_before(&self) -> bool {
        self.arrays.values().all(|d| *d == Decision::Shared)
    }

    pub fn parallel_after(&self) -> bool {
        (self.arrays.values()).all(|d| matches!(d, Decision::Shared | Decision::Private { .. }))
    }

    /// Parallel once the privatizable arrays are private and the
    /// reductions combine partial results, with at least one reduction.
    pub fn parallel_with_reductions(&self) -> bool {
        self.reductions().next().is_some()
            && (self.arrays.values()).all(|d| !matches!(d, Decision::Carried { .. }))
    }

    /// The reductions: (array, operator, cell).
    pub fn reductions(&self) -> impl Iterator<Item = (&str, ReduceOp, &str)> {
        self.arrays.iter().filter_map(|(n, d)| match d {
            Decision::Reduction { op, cell, .. } => Some((n.as_str(), *op, cell.as_str())),
            _ => None,
        })
    }

    pub fn private(&self) -> impl Iterator<Item = &str> {
        self.arrays
            .iter()
            .filter(|(_, d)| matches!(d, Decision::Private { .. }))
            .map(|(n, _)| n.as_str())
    }
}

/// One read with its quast.
struct ReadAt<'p> {
    stmt: StmtId,
    access: &'p Access,
    quast: &'p Quast,
}

/// Every loop's decisions; `Err` says why the program has no exact σ (then
/// bounded σ decides, at concrete sizes).
pub fn analyze(program: &Program) -> Result<Vec<ExactLoop>, String> {
    // Reductions written with `if` (`super::guarded`) read as their updates.
    match super::guarded::folded(program) {
        Some(view) => analyze_static(&view),
        None => analyze_static(program),
    }
}

/// [`analyze`] on a program whose guarded updates are folded.
fn analyze_static(program: &Program) -> Result<Vec<ExactLoop>, String> {
    if program.first_ext_access().is_some() {
        return Err("an access of a custom kind has no quast".into());
    }
    let places = domain::places(program);
    let stmts = program.stmts();
    for s in &stmts {
        if let Some(why) = places[s.id.index()].not_static() {
            return Err(format!("`{}` is {why}", s.label));
        }
        let write = s.write().map(|(a, _)| a);
        if let Some(a) = s.reads().into_iter().chain(write).find(|a| !a.is_affine()) {
            let name = &program.array_decl(a.array).name;
            return Err(format!(
                "`{}` accesses `{name}` with a subscript that is not affine",
                s.label
            ));
        }
    }
    let sym = crate::symbolic::analyze(program);
    if let Some((c, _)) = sym.condition_reads.first() {
        return Err(format!("the condition `{c}` reads memory"));
    }
    let mut reads = Vec::new();
    for r in &sym.reads {
        let Outcome::Exact(q) = &r.outcome else {
            let s = stmts[r.stmt.index()];
            return Err(format!(
                "the read of `{}` in `{}` has no exact σ",
                program.array_decl(r.array).name,
                s.label
            ));
        };
        if !q.is_affine() {
            let s = stmts[r.stmt.index()];
            return Err(format!(
                "the source of the read of `{}` in `{}` depends on a counter modulo a stride",
                program.array_decl(r.array).name,
                s.label
            ));
        }
        reads.push(ReadAt {
            stmt: r.stmt,
            access: stmts[r.stmt.index()].reads()[r.read],
            quast: q,
        });
    }
    let mut prover =
        Prover::new(program).ok_or("the assumptions are not affine, so σ is not exact")?;
    let mut cx = Cx {
        program,
        groups: super::argmax::folded_groups(program),
        stmts: &stmts,
        names: Names::new(program),
        places: &places,
        prover: &mut prover,
    };
    // Per loop, its statements; per statement, the reads there or with a
    // quast leaf there: a loop looks only at those (a read with neither in
    // the loop decides nothing about it), so many loops cost linear time.
    let mut stmts_in: std::collections::HashMap<CounterId, Vec<StmtId>> = Default::default();
    for s in &stmts {
        for l in &places[s.id.index()].loops {
            stmts_in.entry(l.counter).or_default().push(s.id);
        }
    }
    let mut touching: Vec<Vec<usize>> = vec![Vec::new(); stmts.len()];
    for (k, r) in reads.iter().enumerate() {
        touching[r.stmt.index()].push(k);
        for src in r.quast.leaves().into_iter().filter_map(|(_, s)| s) {
            touching[src.stmt.index()].push(k);
        }
    }
    let mut out = Vec::new();
    for (counter, depth) in crate::expansion::parallel::loops(program) {
        if program.counter_decl(counter).kind != crate::model::CounterKind::For {
            return Err("a `while` loop has no quast".into());
        }
        let members = stmts_in.get(&counter).map_or(&[][..], |v| &v[..]);
        let mut near: Vec<usize> = (members.iter())
            .flat_map(|s| touching[s.index()].iter().copied())
            .collect();
        near.sort_unstable();
        near.dedup();
        let near: Vec<&ReadAt> = near.iter().map(|&k| &reads[k]).collect();
        let inside: Vec<&crate::model::Stmt> = members.iter().map(|s| stmts[s.index()]).collect();
        out.push(cx.decide(counter, depth, &near, &inside)?);
    }
    Ok(out)
}

struct Cx<'a, 'p> {
    program: &'p Program,
    /// The keyed groups (argmax) the folded program has.
    groups: Vec<super::argmax::Folded>,
    /// Made once: `Program::stmts` walks the whole program.
    stmts: &'a [&'p crate::model::Stmt],
    names: Names<'p>,
    places: &'a [Place],
    prover: &'a mut Prover<'p>,
}

/// What one (loop, array) gathers.
#[derive(Default)]
struct Acc {
    inside: bool,
    conflict: bool,
    carried: Option<(String, String)>,
    copy_in: Vec<String>,
    live_out: bool,
    not_last: bool,
}

fn var(c: CounterId) -> Affine {
    Affine::var(Var::Counter(c))
}

/// `a ≠ b` as a DNF.
pub(super) fn differ(a: &Affine, b: &Affine) -> Option<Dnf> {
    let one = Affine::constant(1);
    Some(vec![
        vec![Atom::Le(a.checked_sub(b)?.checked_add(&one)?)],
        vec![Atom::Le(b.checked_sub(a)?.checked_add(&one)?)],
    ])
}

/// `a_k = b_k` for every k of `ks`, as one conjunction.
fn equal(a: &[Affine], b: &[Affine], ks: std::ops::Range<usize>) -> Option<Dnf> {
    let conj = ks
        .map(|k| Some(Atom::Eq(a[k].checked_sub(&b[k])?)))
        .collect::<Option<Vec<_>>>()?;
    Some(vec![conj])
}

/// `a_k ≠ b_k` for some k of `ks`.
fn any_differ(a: &[Affine], b: &[Affine], ks: std::ops::Range<usize>) -> Option<Dnf> {
    let mut out = Vec::new();
    for k in ks {
        out.extend(differ(&a[k], &b[k])?);
    }
    Some(out)
}

impl<'p> Cx<'_, 'p> {
    fn in_loop(&self, stmt: StmtId, counter: CounterId, depth: usize) -> bool {
        (self.places[stmt.index()].loops.get(depth)).is_some_and(|l| l.counter == counter)
    }

    /// Whether the conjunction of one disjunct per factor may be
    /// integer-feasible (an unknown or overflowing answer counts as yes).
    fn feasible(&mut self, factors: &[Option<Dnf>]) -> bool {
        let Some(fs) = factors.iter().cloned().collect::<Option<Vec<Dnf>>>() else {
            return true;
        };
        let mut all: Vec<&Dnf> = fs.iter().collect();
        let assumptions = self.prover.assumptions.clone();
        all.push(&assumptions);
        self.prover.infeasible(&all, &String::new).is_err()
    }

    fn domain(&self, stmt: StmtId) -> Option<Dnf> {
        self.places[stmt.index()].domain()
    }

    fn instance(&self, stmt: StmtId, iter: &[Affine]) -> String {
        let it: Vec<String> = iter.iter().map(|a| self.names.affine(a)).collect();
        let label = &self.stmts[stmt.index()].label;
        format!("{label}({})", it.join(", "))
    }

    /// Loop `counter` at depth `d` from its statements `members` and the
    /// reads in it or with a source in it.
    fn decide(
        &mut self,
        counter: CounterId,
        d: usize,
        reads: &[&ReadAt],
        members: &[&crate::model::Stmt],
    ) -> Result<ExactLoop, String> {
        let mut acc: BTreeMap<crate::model::ArrayId, Acc> = BTreeMap::new();
        // Memory conflicts: a write in L against every access in L.
        let inside: Vec<(StmtId, &Access, bool)> = (members.iter())
            .flat_map(|s| {
                let w = s.write().map(|(a, _)| (s.id, a, true));
                s.reads().into_iter().map(|a| (s.id, a, false)).chain(w)
            })
            .collect();
        for &(_, a, _) in &inside {
            acc.entry(a.array).or_default().inside = true;
        }
        for &(w, wa, is_write) in &inside {
            if !is_write || acc[&wa.array].conflict {
                continue;
            }
            for &(o, oa, _) in &inside {
                if oa.array == wa.array && self.conflict(w, wa, o, oa, d) {
                    acc.get_mut(&wa.array).expect("inside").conflict = true;
                    break;
                }
            }
        }
        for &r in reads {
            let r_in = self.in_loop(r.stmt, counter, d);
            let rp = &self.places[r.stmt.index()];
            let i = prove::vars_of(&rp.counters());
            let dom = self.domain(r.stmt);
            for (path, src) in r.quast.leaves() {
                let piece = prove::path_atoms(&path).map(|p| vec![p]);
                let w_in = src.is_some_and(|s| self.in_loop(s.stmt, counter, d));
                match src {
                    Some(s) if w_in && r_in => {
                        let same = equal(&s.iter, &i, 0..d);
                        let other = differ(&s.iter[d], &i[d]);
                        if acc[&r.access.array].carried.is_none()
                            && self.feasible(&[dom.clone(), piece.clone(), same, other])
                        {
                            let pair = (self.instance(s.stmt, &s.iter), self.instance(r.stmt, &i));
                            acc.get_mut(&r.access.array).expect("entry").carried = Some(pair);
                        }
                        let elsewhere = any_differ(&s.iter, &i, 0..d);
                        if d > 0 && self.feasible(&[dom.clone(), piece.clone(), elsewhere.clone()])
                        {
                            self.copy_in(&mut acc, r);
                            self.live_out(&mut acc, r, s, d, &[dom.clone(), piece, elsewhere]);
                        }
                    }
                    // (r in L, so w is not: the arm below cannot apply.)
                    _ if r_in && self.feasible(&[dom.clone(), piece.clone()]) => {
                        self.copy_in(&mut acc, r);
                    }
                    Some(s) if w_in => {
                        self.live_out(&mut acc, r, s, d, &[dom.clone(), piece]);
                    }
                    _ => {}
                }
            }
        }
        let mut arrays = BTreeMap::new();
        for (x, a) in acc.into_iter().filter(|(_, a)| a.inside) {
            let decision = match a.carried {
                Some((source, read)) => match self.reduction(x, d, members) {
                    Some((op, cell)) => Decision::Reduction {
                        op,
                        cell,
                        source,
                        read,
                    },
                    None => Decision::Carried { source, read },
                },
                None if !a.conflict => Decision::Shared,
                None => Decision::Private {
                    copy_in: a.copy_in,
                    finalization: match (a.live_out, a.not_last) {
                        (false, _) => Last::None,
                        (true, false) => Last::LastIteration,
                        (true, true) => Last::LastWriter,
                    },
                },
            };
            arrays.insert(self.program.array_decl(x).name.clone(), decision);
        }
        self.whole_groups(&mut arrays, members);
        Ok(ExactLoop {
            counter,
            name: self.program.counter_decl(counter).name.clone(),
            depth: d,
            arrays,
        })
    }

    /// A keyed group (argmax) is one reduction of all its cells or none:
    /// where one of them is not a reduction, the others are carried too.
    fn whole_groups(
        &self,
        arrays: &mut BTreeMap<String, Decision>,
        members: &[&crate::model::Stmt],
    ) {
        let name = |s: StmtId| {
            let w = self.stmts[s.index()].write().map(|(a, _)| a.array);
            w.map(|x| self.program.array_decl(x).name.clone())
        };
        for g in &self.groups {
            if !members.iter().any(|s| s.id == g.key) {
                continue;
            }
            let cells: Vec<String> = std::iter::once(g.key)
                .chain(g.kept.iter().copied())
                .filter_map(name)
                .collect();
            let whole = (cells.iter()).all(
                |x| matches!(arrays.get(x), Some(Decision::Reduction { op, .. }) if *op == g.op),
            );
            if whole {
                continue;
            }
            for x in &cells {
                if let Some(Decision::Reduction { source, read, .. }) = arrays.get(x) {
                    let carried = Decision::Carried {
                        source: source.clone(),
                        read: read.clone(),
                    };
                    arrays.insert(x.clone(), carried);
                }
            }
        }
    }

    /// Records read `r` as one that needs the value from before.
    fn copy_in(&self, acc: &mut BTreeMap<crate::model::ArrayId, Acc>, r: &ReadAt) {
        let label = &self.stmts[r.stmt.index()].label;
        let what = format!("{label}: {}", crate::print::access(self.program, r.access));
        let a = acc.entry(r.access.array).or_default();
        if !a.copy_in.contains(&what) {
            a.copy_in.push(what);
        }
    }

    /// Records that `r`, on the piece `cond`, reads `s`'s value after L's
    /// execution, and whether `s` may be before L's last iteration there.
    fn live_out(
        &mut self,
        acc: &mut BTreeMap<crate::model::ArrayId, Acc>,
        r: &ReadAt,
        s: &Source,
        d: usize,
        cond: &[Option<Dnf>],
    ) {
        if !self.feasible(cond) {
            return;
        }
        let a = acc.entry(r.access.array).or_default();
        a.live_out = true;
        if a.not_last {
            return;
        }
        // w_d + step ≤ hi, hi's outer counters at w's values.
        let l = &self.places[s.stmt.index()].loops;
        let outer: Vec<(CounterId, Affine)> =
            (0..d).map(|k| (l[k].counter, s.iter[k].clone())).collect();
        let later = prove::subst(&l[d].hi, &outer).and_then(|hi| {
            let e = s.iter[d]
                .checked_add(&Affine::constant(l[d].step))?
                .checked_sub(&hi)?;
            Some(vec![vec![Atom::Le(e)]])
        });
        let mut factors = cond.to_vec();
        factors.push(later);
        let not_last = self.feasible(&factors);
        acc.get_mut(&r.access.array).expect("entry").not_last |= not_last;
    }

    /// Whether array `x`'s values cross iterations of the loop at depth `d`
    /// only through one reduction cell: every write of `x` among
    /// `members` updates that cell with one operator, the cell does not
    /// move with the loop or the loops inside it, and no other access of
    /// `x` in the loop may touch it in the same execution. Then every
    /// value read in the loop from a write in it is the cell's, read by an
    /// update. The operator and the cell as written.
    fn reduction(
        &mut self,
        x: ArrayId,
        d: usize,
        members: &[&crate::model::Stmt],
    ) -> Option<(ReduceOp, String)> {
        let mut found: Option<(ReduceOp, &Access, StmtId)> = None;
        let mut others: Vec<(StmtId, &Access)> = Vec::new();
        // A group's kept values read its key in their condition, as its
        // update does.
        let reads_key = |s: StmtId| {
            (self.groups.iter()).any(|g| {
                g.kept.contains(&s)
                    && self.stmts[g.key.index()]
                        .write()
                        .is_some_and(|(t, _)| t.array == x)
            })
        };
        for s in members {
            let Some(target) = s.write().map(|(a, _)| a).filter(|a| a.array == x) else {
                if !reads_key(s.id) {
                    others.extend(
                        s.reads()
                            .into_iter()
                            .filter(|a| a.array == x)
                            .map(|a| (s.id, a)),
                    );
                }
                continue;
            };
            let group = (self.groups.iter()).find(|g| g.key == s.id || g.kept.contains(&s.id));
            let (op, parts) = match group {
                Some(g) => (g.op, super::argmax::parts(s)?),
                None => reduction::update(self.program, s)?,
            };
            let inner = &self.places[s.id.index()].loops[d..];
            let moves = |a: &Affine| inner.iter().any(|l| a.coeff(Var::Counter(l.counter)) != 0);
            if (target.subscripts.iter()).any(|sub| sub.affine.as_ref().is_none_or(moves)) {
                return None;
            }
            match found {
                // A group's cell has one update.
                Some((ReduceOp::ArgMax | ReduceOp::ArgMin, ..)) => return None,
                Some((o, t, _)) if o != op || !t.same_cell(target) => return None,
                Some(_) => {}
                None => found = Some((op, target, s.id)),
            }
            let mut rs = Vec::new();
            for e in parts {
                e.collect_reads(&mut rs);
            }
            // (A key's condition reads its own cell, as its update does.)
            others.extend(
                rs.iter()
                    .filter(|r| r.access.array == x && !r.access.same_cell(target))
                    .map(|r| (s.id, r.access)),
            );
        }
        let (op, target, w) = found?;
        for (o, oa) in others {
            if self.touches(w, target, o, oa, d, false) {
                return None;
            }
        }
        Some((op, crate::print::access(self.program, target)))
    }

    /// Whether write `wa` of `w` and access `oa` of `o`, both in the loop at
    /// depth `d`, may touch one cell in two iterations of one execution.
    fn conflict(&mut self, w: StmtId, wa: &Access, o: StmtId, oa: &Access, d: usize) -> bool {
        self.touches(w, wa, o, oa, d, true)
    }

    /// Whether access `wa` of `w` and `oa` of `o`, both in the loop at depth
    /// `d`, may touch one cell in one execution of it, in two iterations
    /// when `apart`.
    fn touches(
        &mut self,
        w: StmtId,
        wa: &Access,
        o: StmtId,
        oa: &Access,
        d: usize,
        apart: bool,
    ) -> bool {
        let (pw, po) = (&self.places[w.index()], &self.places[o.index()]);
        let i = prove::vars_of(&pw.counters());
        // The other instance's counters, renamed.
        let map: Vec<(CounterId, Affine)> = (po.counters().iter().enumerate())
            .map(|(k, &c)| (c, var(prove::fresh(k))))
            .collect();
        let j: Vec<Affine> = map.iter().map(|(_, a)| a.clone()).collect();
        let cell = (|| {
            let sw = prove::subscripts(wa)?;
            let so = prove::subscripts(oa)?;
            let conj = sw
                .iter()
                .zip(&so)
                .map(|(a, b)| Some(Atom::Eq(a.checked_sub(&prove::subst(b, &map)?)?)))
                .collect::<Option<Vec<_>>>()?;
            Some(vec![conj])
        })();
        let dom_o = self.domain(o).and_then(|dnf| prove::subst_dnf(&dnf, &map));
        let mut factors = vec![self.domain(w), dom_o, equal(&i, &j, 0..d), cell];
        if apart {
            factors.push(differ(&i[d], &j[d]));
        }
        self.feasible(&factors)
    }
}
