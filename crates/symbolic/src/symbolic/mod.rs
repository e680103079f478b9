//! σ for every parameter value (docs/symbolic.md): per read, a quast (Last Write
//! Tree) exact for every parameter value satisfying the assumptions, found
//! by sample-and-prove. `infer` fits a quast to bounded σ at small
//! parameter vectors; `prove` checks it with the exact tests of
//! `dependence`. A read outside static control (a `while`, an unknown or
//! memory-reading condition, a non-affine subscript, on its side or on a
//! write of its array) or whose quast is not proved falls back to bounded σ,
//! with the reason. `isl` prints quasts, the model and bounded σ in isl
//! notation. docs/symbolic.md.

pub mod bounded;
pub mod domain;
pub mod fada;
pub mod infer;
pub mod isl;
pub mod lifted;
pub mod project;
pub mod prove;
pub mod quast;
pub mod ranges;
pub mod render;
pub mod stride;

use crate::dataflow::{self, Config};
use crate::model::{ArrayId, CounterId, Program, Site, StmtId};
use domain::Place;
pub use quast::{Names, Quast, Source, Test};
use std::collections::HashMap;

/// What is known of one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// σ for every parameter value, proved.
    Exact(Quast),
    /// Outside static control: the set of possible sources (FADA), for
    /// every parameter value and trip count.
    Possible(fada::Possible),
    /// Bounded σ only, and why.
    Fallback(String),
}

/// One read access: statement, read index (`Stmt::reads()`), array, the
/// counters of its loops (outermost first), and what is known.
#[derive(Clone, Debug)]
pub struct ReadFlow {
    pub stmt: StmtId,
    pub read: usize,
    pub array: ArrayId,
    pub counters: Vec<CounterId>,
    pub outcome: Outcome,
}

/// Symbolic σ of a program.
#[derive(Clone, Debug)]
pub struct Symbolic {
    pub reads: Vec<ReadFlow>,
    /// The parameter vectors the quasts were fitted on.
    pub samples: Vec<Vec<i64>>,
    /// Reads in conditions, which always fall back: (condition name, read index).
    pub condition_reads: Vec<(String, usize)>,
    /// Constraints on the parameters some proof assumed: those of the runs
    /// that complete, where every access stays in its declared range.
    pub in_range: Vec<domain::Atom>,
}

/// The most access instances one sample may create.
const SAMPLE_BUDGET: u64 = 2_000_000;

/// Why a read of `stmt` cannot have an exact quast, if it cannot.
fn not_static(
    stmts: &[&crate::model::Stmt],
    places: &[Place],
    writes: &WritesOf,
    stmt: StmtId,
    read: usize,
) -> Option<String> {
    let s = stmts[stmt.index()];
    let access = s.reads()[read];
    if !access.is_affine() {
        return Some("the read's subscripts are not affine".into());
    }
    if let Some(why) = places[stmt.index()].not_static() {
        return Some(format!("the read is {why}"));
    }
    writes.get(&access.array).and_then(|w| w.not_static.clone())
}

/// Per array, its write statements in textual order and why the first of
/// them outside static control is (computed once, not per read).
struct ArrayWrites {
    stmts: Vec<StmtId>,
    not_static: Option<String>,
}

type WritesOf = HashMap<ArrayId, ArrayWrites>;

fn writes_of(stmts: &[&crate::model::Stmt], places: &[Place]) -> WritesOf {
    let mut out: WritesOf = HashMap::new();
    for w in stmts {
        let Some((a, _)) = w.write() else { continue };
        let e = out.entry(a.array).or_insert(ArrayWrites {
            stmts: Vec::new(),
            not_static: None,
        });
        e.stmts.push(w.id);
        if e.not_static.is_some() {
            continue;
        }
        if !a.is_affine() {
            e.not_static = Some(format!(
                "`{}` writes the array with a subscript that is not affine",
                w.label
            ));
        } else if let Some(why) = places[w.id.index()].not_static() {
            e.not_static = Some(format!("`{}` writes the array and is {why}", w.label));
        }
    }
    out
}

pub fn analyze(program: &Program) -> Symbolic {
    analyze_counted(program).0
}

/// [`analyze`], with the number of problems its proofs gave the exact
/// tests (memo hits included): what the proofs cost, counted.
pub fn analyze_counted(program: &Program) -> (Symbolic, u64) {
    analyze_some(program, &|_| true)
}

/// [`analyze`] for the reads of the statements `keep` accepts only (the
/// others have no entry in `reads`): what a hover on one statement needs.
/// Each read's outcome is the one [`analyze`] gives it, since the rounds of
/// samples a read sees do not depend on the other reads.
pub fn analyze_stmt(program: &Program, stmt: StmtId) -> Symbolic {
    analyze_some(program, &|s| s == stmt).0
}

/// [`analyze`] for the reads of the statements `keep` accepts only; see
/// [`analyze_stmt`].
pub fn analyze_only(program: &Program, keep: &dyn Fn(StmtId) -> bool) -> Symbolic {
    analyze_some(program, keep).0
}

/// Loops with many constant trips (PolyBench's `for t = 1 to TSTEPS`) keep
/// their size at every sample: they are made parameters first
/// (`model::lift`), sampled small, and the quasts, proved for every value
/// of the new parameters, are taken at the constants (`lifted`). Reads
/// whose quast is not exact that way are analysed again as written.
fn analyze_some(program: &Program, keep: &dyn Fn(StmtId) -> bool) -> (Symbolic, u64) {
    let Some(l) = crate::model::lift::constant_bounds(program) else {
        return analyze_plain(program, keep);
    };
    let (mut sym, mut problems) = analyze_plain(&l.program, keep);
    let n = program.params.len();
    let consts: Vec<(crate::model::ParamId, i64)> = (l.added.iter().enumerate())
        .map(|(k, (_, v))| (crate::model::ParamId((n + k) as u32), *v))
        .collect();
    let mut redo: std::collections::HashSet<(StmtId, usize)> = Default::default();
    for r in &mut sym.reads {
        let at = match &r.outcome {
            Outcome::Exact(q) => lifted::at(q, &consts),
            _ => None,
        };
        match at {
            Some(q) => r.outcome = Outcome::Exact(q),
            None => {
                redo.insert((r.stmt, r.read));
            }
        }
    }
    sym.samples.iter_mut().for_each(|v| v.truncate(n));
    sym.samples.dedup();
    sym.in_range = lifted::atoms_at(&sym.in_range, &consts);
    if !redo.is_empty() {
        let stmts: std::collections::HashSet<StmtId> = redo.iter().map(|r| r.0).collect();
        let (plain, more) = analyze_plain(program, &|s| keep(s) && stmts.contains(&s));
        problems += more;
        let mut at: HashMap<(StmtId, usize), Outcome> = (plain.reads.into_iter())
            .filter(|r| redo.contains(&(r.stmt, r.read)))
            .map(|r| ((r.stmt, r.read), r.outcome))
            .collect();
        for r in &mut sym.reads {
            if let Some(o) = at.remove(&(r.stmt, r.read)) {
                r.outcome = o;
            }
        }
        for a in plain.in_range {
            if !sym.in_range.contains(&a) {
                sym.in_range.push(a);
            }
        }
    }
    (sym, problems)
}

fn analyze_plain(program: &Program, keep: &dyn Fn(StmtId) -> bool) -> (Symbolic, u64) {
    let places = domain::places(program);
    let stmts = program.stmts();
    let mut prover = prove::Prover::new(program);
    let writes = writes_of(&stmts, &places);
    let mut reads = Vec::new();
    let mut pending = Vec::new();
    for s in stmts.iter().filter(|s| keep(s.id)) {
        for (k, a) in s.reads().into_iter().enumerate() {
            let outcome = match (
                not_static(&stmts, &places, &writes, s.id, k),
                prover.as_mut(),
            ) {
                (_, None) => Outcome::Fallback("the assumptions are not affine".into()),
                (Some(why), Some(p)) => match fada::possible(p, &places, s.id, k) {
                    Ok(set) => Outcome::Possible(fada::Possible { why, ..set }),
                    Err(no) => Outcome::Fallback(format!("{why}; possible sources: {no}")),
                },
                (None, Some(_)) => {
                    pending.push(reads.len());
                    Outcome::Fallback("not fitted".into())
                }
            };
            reads.push(ReadFlow {
                stmt: s.id,
                read: k,
                array: a.array,
                counters: places[s.id.index()].counters(),
                outcome,
            });
        }
    }
    let condition_reads = program
        .conditions()
        .iter()
        .flat_map(|c| (0..c.reads().len()).map(move |k| (c.name.clone(), k)))
        .collect();
    let Some(mut prover) = prover.filter(|_| !pending.is_empty()) else {
        let sym = Symbolic {
            reads,
            samples: Vec::new(),
            condition_reads,
            in_range: Vec::new(),
        };
        return (sym, 0);
    };
    // Points only for the reads asked about (the others' vectors stay empty).
    let mut points: Points = stmts
        .iter()
        .map(|s| vec![Vec::new(); if keep(s.id) { s.reads().len() } else { 0 }])
        .collect();
    let mut used = Vec::new();
    let all = infer::samples(program);
    // Rounds, each for the reads the ones before left unproved: a few
    // vectors first (most static-control reads are proved from them, and
    // the fit's cost is its points), then the rest of `all`, then larger
    // values (a bound the small ones never pass, as max(n, 12)), then
    // parameters far apart. The proof keeps every round sound.
    let w = wanted(&points, &reads, &pending);
    sample(program, &all.first(), &w, &mut points, &mut used);
    // The writers of each array, prepared once for every read of it.
    let mut writers: HashMap<ArrayId, prove::Writers> = HashMap::new();
    for (&array, w) in &writes {
        let list = w
            .stmts
            .iter()
            .filter_map(|&id| {
                let (a, _) = stmts[id.index()].write()?;
                Some(prove::Writer {
                    stmt: id,
                    access: a,
                    place: &places[id.index()],
                })
            })
            .collect();
        writers.insert(array, prove::Writers::new(list));
    }
    let none = prove::Writers::new(Vec::new());
    for round in 0..4 {
        let mut failed = Vec::new();
        for &k in &pending {
            let w = writers.get(&reads[k].array).unwrap_or(&none);
            let outcome = fit_and_prove(&stmts, &places, &reads[k], &points, w, &mut prover);
            if !matches!(outcome, Outcome::Exact(_)) {
                failed.push(k);
            }
            reads[k].outcome = outcome;
        }
        // The last round only helps loops with a step (see below).
        let stepped = places.iter().any(|p| p.loops.iter().any(|l| l.step > 1));
        if round == 3 || (round == 2 && !stepped) || failed.is_empty() {
            break;
        }
        let next = match round {
            0 => all.all.clone(),
            1 => {
                let far: Vec<i64> = all.base.iter().map(|b| b + 12).collect();
                infer::around(program, &far)
            }
            // Parameters apart (12, 20, 28, ... above the base): a loop
            // from one parameter to another with a step then runs more
            // than once (`for i = l to u step 6`).
            _ => {
                let apart: Vec<i64> = (all.base.iter().enumerate())
                    .map(|(k, b)| b + 12 + 8 * k as i64)
                    .collect();
                infer::around(program, &apart)
            }
        };
        let more: Vec<Vec<i64>> = next.into_iter().filter(|v| !used.contains(v)).collect();
        if more.is_empty() {
            continue;
        }
        // Later rounds sample only the reads still unproved; the points of
        // the proved ones are no longer needed.
        let w = wanted(&points, &reads, &failed);
        for (ps, w) in points.iter_mut().zip(&w) {
            for (p, &keep) in ps.iter_mut().zip(w) {
                if !keep {
                    *p = Vec::new();
                }
            }
        }
        sample(program, &more, &w, &mut points, &mut used);
        pending = failed;
    }
    let sym = Symbolic {
        reads,
        samples: used,
        condition_reads,
        in_range: std::mem::take(&mut prover.in_range),
    };
    (sym, prover.tester.stats().problems)
}

/// Read instances with one source (or none), per statement (by index) and read.
type Points = Vec<Vec<Vec<infer::Point>>>;

/// The reads `pending` (indices into `reads`), as a mask shaped like `points`.
fn wanted(points: &Points, reads: &[ReadFlow], pending: &[usize]) -> Vec<Vec<bool>> {
    let mut w: Vec<Vec<bool>> = points.iter().map(|v| vec![false; v.len()]).collect();
    for &k in pending {
        w[reads[k].stmt.index()][reads[k].read] = true;
    }
    w
}

/// Bounded σ at each sample, added to `points` for the reads `wanted`
/// marks; the samples that ran go to `used`. The samples are independent
/// runs, so they run on every core; their points are added in sample order.
fn sample(
    program: &Program,
    samples: &[Vec<i64>],
    wanted: &[Vec<bool>],
    points: &mut Points,
    used: &mut Vec<Vec<i64>>,
) {
    use rayon::prelude::*;
    let watch = arrayflow_model::cancel::current();
    let found: Vec<Option<Vec<(usize, usize, infer::Point)>>> = samples
        .par_iter()
        .map(|sample| {
            let _watch = arrayflow_model::cancel::enter(&watch);
            let config = Config {
                params: program
                    .params
                    .iter()
                    .zip(sample)
                    .map(|(p, &v)| (p.name.clone(), v))
                    .collect(),
                max_trips: 1,
                max_instances: SAMPLE_BUDGET,
                max_memory: crate::budget::limit(),
            };
            let flow = dataflow::analyze(program, &config).ok()?;
            let mut got = Vec::new();
            for r in flow.iter() {
                let Site::Stmt(s) = r.site() else { continue };
                let want = wanted.get(s.index()).and_then(|w| w.get(r.access()));
                if want != Some(&true) {
                    continue;
                }
                let mut writes = r.writes();
                let concrete = match (r.initial(), writes.next(), writes.next()) {
                    (true, None, _) => None,
                    (false, Some((Site::Stmt(ws), it)), None) => Some((ws, it.to_vec())),
                    (false, Some((Site::Cond(_), _)), None) => continue,
                    // Several possible sources: not static; the proof decides.
                    _ => continue,
                };
                let it = r.iter();
                let mut x = infer::Coords::with_capacity(it.len() + sample.len());
                x.extend_from_slice(it);
                x.extend_from_slice(sample);
                got.push((s.index(), r.access(), (x, concrete)));
            }
            Some(got)
        })
        .collect();
    for (sample, got) in samples.iter().zip(found) {
        let Some(got) = got else { continue };
        used.push(sample.clone());
        for (s, k, p) in got {
            points[s][k].push(p);
        }
    }
}

fn fit_and_prove(
    stmts: &[&crate::model::Stmt],
    places: &[Place],
    r: &ReadFlow,
    points: &Points,
    writers: &prove::Writers,
    prover: &mut prove::Prover,
) -> Outcome {
    let place = &places[r.stmt.index()];
    let fitter = infer::Fitter {
        counters: &r.counters,
        n_params: prover.program.params.len(),
        place,
        places,
        steps: std::cell::Cell::new(infer::FIT_STEPS),
    };
    let pts: Vec<&infer::Point> = points
        .get(r.stmt.index())
        .and_then(|v| v.get(r.read))
        .map_or(Vec::new(), |v| v.iter().collect());
    let access = stmts[r.stmt.index()].reads()[r.read];
    let read = prove::Read { access, place };
    // Strides of the writers' subscripts: a split by residue class, tried
    // where no affine quast fits or none is proved.
    let strided = || {
        let writes: Vec<&crate::model::Access> = writers.list.iter().map(|w| w.access).collect();
        let cands = stride::candidates(access, &writes);
        fitter.strided(&pts, &cands)
    };
    let Some(q) = fitter.fit(&pts) else {
        return match strided() {
            Some(q) => match prover.prove(&q, &read, writers) {
                prove::Proof::Proved => Outcome::Exact(q),
                prove::Proof::NotProved(why) => Outcome::Fallback(format!(
                    "no quast without strides fits bounded σ at the samples, and the one split by a stride is not proved: {why}"
                )),
            },
            None if fitter.exhausted() => Outcome::Fallback(format!(
                "the search for a quast stopped after {} point tests ({} sample points): bounded σ decides",
                infer::FIT_STEPS,
                pts.len()
            )),
            None => Outcome::Fallback("no quast fits bounded σ at the samples".into()),
        };
    };
    match prover.prove(&q, &read, writers) {
        prove::Proof::Proved => Outcome::Exact(q),
        prove::Proof::NotProved(why) => {
            // A leaf the samples never saw at its domain's edge: guarded by
            // its domain, ⊥ outside, and proved again.
            if let Some(g) = fitter.guarded(&q) {
                if prover.prove(&g, &read, writers) == prove::Proof::Proved {
                    return Outcome::Exact(g);
                }
            }
            // A fit through the samples that only looks affine there.
            if let Some(s) = strided() {
                if prover.prove(&s, &read, writers) == prove::Proof::Proved {
                    return Outcome::Exact(s);
                }
            }
            Outcome::Fallback(format!("not proved: {why}"))
        }
    }
}

impl Symbolic {
    /// Whether the quasts are claimed at the parameter values `params`
    /// (one per parameter): `in_range` holds there. Elsewhere some access
    /// leaves its declared range and the run stops.
    pub fn claims(&self, params: &[i64]) -> bool {
        self.in_range.iter().all(|a| {
            let v = a.expr().eval(|v| match v {
                // The atoms are on the parameters only.
                crate::model::Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
                crate::model::Var::Counter(_) => 0,
            });
            match (a, v) {
                (domain::Atom::Le(_), Some(x)) => x <= 0,
                (domain::Atom::Eq(_), Some(x)) => x == 0,
                (domain::Atom::Stride(_, k), Some(x)) => x.rem_euclid(*k) == 0,
                (domain::Atom::NotStride(_, k), Some(x)) => x.rem_euclid(*k) != 0,
                (_, None) => false,
            }
        })
    }

    /// The symbolic source of read `read` of `stmt`, if exact.
    pub fn quast(&self, stmt: StmtId, read: usize) -> Option<&Quast> {
        self.reads
            .iter()
            .find(|r| r.stmt == stmt && r.read == read)
            .and_then(|r| match &r.outcome {
                Outcome::Exact(q) => Some(q),
                Outcome::Fallback(_) | Outcome::Possible(_) => None,
            })
    }
}

/// What a hover says of a read for every parameter value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hover {
    /// The source, one line: "S(i, j - 1) if j >= 2, else R(i)".
    Exact(String),
    /// The possible sources outside static control: "T(i); S(i, _W1')
    /// where _W1' >= 0".
    Possible(String),
}

/// What hovers say of every read of `program` whose source is known for
/// every parameter value, by (statement, read): one analysis for them all
/// ([`stmt_hovers`] for one statement's reads).
pub fn hovers(program: &Program) -> HashMap<(StmtId, usize), Hover> {
    hover_lines(program, &analyze(program))
}

/// What hovers say of the reads of one statement, by read index: the
/// language server asks per statement, so that an edit followed by a hover
/// fits and proves the quasts of that statement only.
pub fn stmt_hovers(program: &Program, stmt: StmtId) -> HashMap<usize, Hover> {
    (hover_lines(program, &analyze_stmt(program, stmt)).into_iter())
        .map(|((_, k), h)| (k, h))
        .collect()
}

fn hover_lines(program: &Program, sym: &Symbolic) -> HashMap<(StmtId, usize), Hover> {
    let names = Names::new(program);
    sym.reads
        .iter()
        .filter_map(|r| {
            let h = match &r.outcome {
                Outcome::Exact(q) => Hover::Exact(names.line(q)),
                Outcome::Possible(p) => {
                    Hover::Possible(render::possible_lines(program, p).join("; "))
                }
                Outcome::Fallback(_) => return None,
            };
            Some(((r.stmt, r.read), h))
        })
        .collect()
}

/// The symbolic source of a read for a hover, if known.
pub fn hover(program: &Program, site: Site, read: usize) -> Option<Hover> {
    let Site::Stmt(stmt) = site else { return None };
    hovers(program).remove(&(stmt, read))
}

/// The one-line symbolic source for a hover ("S(i, j - 1) if j >= 2, else
/// R(i)"), when the read has an exact quast.
pub fn hover_line(program: &Program, site: Site, read: usize) -> Option<String> {
    match hover(program, site, read)? {
        Hover::Exact(line) => Some(line),
        Hover::Possible(_) => None,
    }
}
