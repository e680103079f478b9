//! Program equivalence by experiment: run an original program A and a
//! transformed program B on the same seeds and compare what every read saw and
//! what every array of A ends up holding.
//!
//! An operation of B stands for the operation of A with the same base name
//! (`S.2` stands for `S`, see [`crate::model::base_label`]) and the same
//! iteration vector. `@copy` statements of B have no counterpart: their reads
//! are not compared, their writes are (through the final contents and through
//! the values later reads see).

use crate::hash::WordHash;
use crate::interp::{self, Cell, Interpreter, Options, Read, Run, RunError, SiteNames, Writer};
use crate::model::{base_label, ArrayId, Program, Site, Span};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// How to compare.
#[derive(Clone, Debug)]
pub struct EquivOptions {
    /// `--param` overrides; each applies to every program that declares it.
    pub params: Vec<(String, i64)>,
    /// Seeds `0..seeds` are tried.
    pub seeds: u64,
    /// Trips, budgets, the loop order of B (A always runs in program
    /// order) and the iteration vectors B's operations are named by
    /// (`run.iterations`: a rescheduled B's operations stand for A's). Its
    /// `params` and `seed` are set per program and per seed.
    pub run: Options,
    /// Arrays of A whose final contents are not results (temporaries): not
    /// compared, and B need not declare them. Their reads still are.
    pub scratch: Vec<String>,
}

impl Default for EquivOptions {
    fn default() -> Self {
        EquivOptions {
            params: Vec::new(),
            seeds: 50,
            run: Options {
                shuffle_parallel: true,
                ..Options::new(Vec::new())
            },
            scratch: Vec::new(),
        }
    }
}

/// The comparison could not be made: the programs do not fit together, or A
/// itself fails to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EquivError {
    pub message: String,
    /// Where, in the program named by `in_b`.
    pub span: Span,
    pub in_b: bool,
}

impl fmt::Display for EquivError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The two programs agree on every seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    pub seeds: u64,
    /// Reads compared, over all seeds.
    pub reads: u64,
    /// Array cells compared, over all seeds.
    pub cells: u64,
}

/// A value as one side saw it, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub value: i64,
    /// The writer, named in that program (`initial` for an initial value).
    pub writer: String,
}

/// The first difference found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub seed: u64,
    /// What differs: "read 0 of `R[2]`" or "final contents of `x[3]`".
    pub what: String,
    /// `None` when A never made this read.
    pub expected: Option<Seen>,
    /// `None` when B never made this read, or B's run failed.
    pub actual: Option<Seen>,
    /// B's run error, when B failed where A ran.
    pub failure: Option<String>,
    /// B's run stopped on a limit (`--max-steps`, `--max-cells`), not on an
    /// error of its own: the comparison was not made, rather than failed.
    pub limit: bool,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "mismatch on seed {}: {}", self.seed, self.what)?;
        let side = |s: &Option<Seen>, never: &str| match s {
            Some(s) => format!("{} written by {}", s.value, s.writer),
            None => never.to_string(),
        };
        writeln!(
            f,
            "  expected (A): {}",
            side(&self.expected, "A never makes this read")
        )?;
        match &self.failure {
            Some(e) => writeln!(f, "  actual   (B): the run failed: {e}"),
            None => writeln!(
                f,
                "  actual   (B): {}",
                side(&self.actual, "B never makes this read")
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agree(Agreement),
    Differ(Mismatch),
}

/// One comparison as a validation reads it: made and agreeing, not made,
/// differing, or B broken.
#[derive(Debug)]
pub enum Compared {
    Agree,
    /// Not made: B's run stopped on a limit (steps, cells) where A's did
    /// not (B's message), or A itself does not run here (None).
    NotMade(Option<String>),
    Differ(Mismatch),
    /// B fails where A runs: its error.
    Broken(String),
}

impl Compared {
    pub fn of(r: Result<Verdict, EquivError>) -> Compared {
        match r {
            Ok(Verdict::Agree(_)) => Compared::Agree,
            Ok(Verdict::Differ(m)) if m.limit => {
                Compared::NotMade(Some(m.failure.unwrap_or_default()))
            }
            Ok(Verdict::Differ(m)) => Compared::Differ(m),
            Err(e) if e.in_b => Compared::Broken(e.message),
            Err(_) => Compared::NotMade(None),
        }
    }
}

/// What a read is matched by: site kind and base name (as one id shared by
/// both programs, see [`BaseIds`]), access, iteration vector.
type Key<'a> = (u32, u32, &'a [i64]);

/// Numbers the (site kind, base name) pairs of both programs, so that read
/// keys hash as words.
#[derive(Default)]
struct BaseIds<'p>(HashMap<(bool, &'p str), u32>);

impl<'p> BaseIds<'p> {
    fn id(&mut self, cond: bool, name: &'p str) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry((cond, base_label(name))).or_insert(next)
    }

    /// The id of every statement, then of every condition, of `p`.
    fn sites(&mut self, p: &'p Program) -> (Vec<u32>, Vec<u32>) {
        (
            p.stmts().iter().map(|s| self.id(false, &s.label)).collect(),
            p.conditions()
                .iter()
                .map(|c| self.id(true, &c.name))
                .collect(),
        )
    }
}

struct Side<'p> {
    program: &'p Program,
    interpreter: Interpreter<'p>,
    names: SiteNames,
    options: Options,
    /// Base-name ids of statements and conditions.
    stmt_base: Vec<u32>,
    cond_base: Vec<u32>,
    /// Per statement, then per condition: whether its reads are left out
    /// (`Options::unordered`).
    stmt_unordered: Vec<bool>,
    cond_unordered: Vec<bool>,
}

impl<'p> Side<'p> {
    fn new(
        program: &'p Program,
        o: &EquivOptions,
        in_b: bool,
        ids: &mut BaseIds<'p>,
    ) -> Result<Side<'p>, EquivError> {
        let overrides: Vec<(String, i64)> = o
            .params
            .iter()
            .filter(|(n, _)| program.param(n).is_some())
            .cloned()
            .collect();
        let params = program
            .param_values(&overrides)
            .map_err(|message| EquivError {
                message: format!("{}: {message}", if in_b { "B" } else { "A" }),
                span: Span::NONE,
                in_b,
            })?;
        let mut options = o.run.clone();
        options.params = params;
        if !in_b {
            options.reverse.clear();
            options.shuffle.clear();
            options.shuffle_parallel = false;
            options.iterations = None;
            options.thread_loops.clear();
        }
        let (stmt_base, cond_base) = ids.sites(program);
        let unordered = |name: &str| options.unordered.iter().any(|u| u == base_label(name));
        let stmt_unordered = program
            .stmts()
            .iter()
            .map(|s| unordered(&s.label))
            .collect();
        let cond_unordered = (program.conditions().iter())
            .map(|c| unordered(&c.name))
            .collect();
        Ok(Side {
            program,
            interpreter: Interpreter::new(program),
            names: SiteNames::new(program),
            options,
            stmt_base,
            cond_base,
            stmt_unordered,
            cond_unordered,
        })
    }

    fn run(&mut self, seed: u64) -> Result<Run, RunError> {
        self.options.seed = seed;
        self.interpreter.run(&self.options)
    }

    /// Whether read `r` is left out of the comparison.
    fn unordered(&self, run: &Run, r: &Read) -> bool {
        match run.ops.get(r.op).site {
            Site::Stmt(s) => self.stmt_unordered[s.index()],
            Site::Cond(c) => self.cond_unordered[c.index()],
        }
    }

    fn key<'r>(&'r self, run: &'r Run, r: &Read) -> Key<'r> {
        let op = run.ops.get(r.op);
        let base = match op.site {
            Site::Stmt(s) => self.stmt_base[s.index()],
            Site::Cond(c) => self.cond_base[c.index()],
        };
        (base, r.access, op.iter)
    }

    /// A writer's name, with the `@copy` statement that moved it if any.
    fn writer(&self, run: &Run, writer: Writer, origin: Writer) -> String {
        interp::output::writer_text(run, &self.names, writer, origin)
    }
}

/// Compares `a` (the original) with `b` (the transformed program).
pub fn equiv(a: &Program, b: &Program, o: &EquivOptions) -> Result<Verdict, EquivError> {
    Original::new(a, o).equiv(b)
}

/// The original program A at one set of options, compared with several
/// programs B: A's runs are made once (on first use) and shared, as A runs
/// in program order whatever B is.
pub struct Original<'p> {
    a: &'p Program,
    o: EquivOptions,
    /// A's side and the base-name ids after A's sites (B's come next).
    side: Result<(Side<'p>, BaseIds<'p>), EquivError>,
    /// A's run by seed, once made.
    runs: Vec<Option<Result<Run, RunError>>>,
}

impl<'p> Original<'p> {
    pub fn new(a: &'p Program, o: &EquivOptions) -> Original<'p> {
        let mut ids = BaseIds::default();
        let side = Side::new(a, o, false, &mut ids).map(|s| (s, ids));
        Original {
            a,
            o: o.clone(),
            side,
            runs: Vec::new(),
        }
    }

    /// `equiv(a, b, o)`.
    pub fn equiv(&mut self, b: &Program) -> Result<Verdict, EquivError> {
        let (a, o) = (self.a, &self.o);
        for (name, _) in &o.params {
            if a.param(name).is_none() && b.param(name).is_none() {
                return Err(EquivError {
                    message: format!("`--param {name}=...`: neither program declares `{name}`"),
                    span: Span::NONE,
                    in_b: false,
                });
            }
        }
        let (sa, ids) = self.side.as_mut().map_err(|e| e.clone())?;
        let mut ids = BaseIds(ids.0.clone());
        let mut sb = Side::new(b, o, true, &mut ids)?;
        match_sites(a, b)?;
        match_arrays(sa, &sb, &o.scratch)?;
        let mut total = Agreement {
            seeds: o.seeds,
            reads: 0,
            cells: 0,
        };
        for seed in 0..o.seeds {
            let k = seed as usize;
            if self.runs.len() <= k {
                self.runs.resize_with(k + 1, || None);
            }
            let ra = self.runs[k].get_or_insert_with(|| sa.run(seed));
            let ra = ra.as_ref().map_err(|e| EquivError {
                message: format!("A fails on seed {seed}: {e}"),
                span: e.span,
                in_b: false,
            })?;
            let rb = match sb.run(seed) {
                Ok(r) => r,
                Err(e) => {
                    return Ok(Verdict::Differ(Mismatch {
                        seed,
                        what: "B's run".into(),
                        expected: None,
                        actual: None,
                        limit: matches!(
                            e.kind,
                            interp::ErrorKind::StepBudget
                                | interp::ErrorKind::TooLarge
                                | interp::ErrorKind::Memory
                        ),
                        failure: Some(e.message),
                    }))
                }
            };
            if let Some(m) = compare_reads(sa, ra, &sb, &rb, seed)? {
                return Ok(Verdict::Differ(m));
            }
            if let Some(m) = compare_contents(sa, ra, &sb, &rb, seed, &o.scratch) {
                return Ok(Verdict::Differ(m));
            }
            total.reads += ra.reads.len() as u64;
            total.cells += ra.arrays.iter().map(|c| c.held_len() as u64).sum::<u64>();
            sb.interpreter.recycle(rb);
        }
        Ok(Verdict::Agree(total))
    }
}

/// Every operation of B that reads must stand for an operation of A.
fn match_sites(a: &Program, b: &Program) -> Result<(), EquivError> {
    let stmts: HashSet<&str> = a.stmts().iter().map(|s| base_label(&s.label)).collect();
    let conds: HashSet<&str> = a.conditions().iter().map(|c| base_label(&c.name)).collect();
    for s in b.stmts() {
        if !s.copy && !stmts.contains(base_label(&s.label)) {
            return Err(EquivError {
                message: format!(
                    "statement `{}` of B matches no statement of A: its label must be \
                     one of A's labels, or a derived label `{}.k` of one, or the \
                     statement must be marked `@copy`",
                    s.label,
                    base_label(&s.label)
                ),
                span: s.span,
                in_b: true,
            });
        }
    }
    for c in b.conditions() {
        if !c.reads().is_empty() && !conds.contains(base_label(&c.name)) {
            return Err(EquivError {
                message: format!(
                    "condition `{}` of B reads arrays but matches no condition of A: \
                     name it after one of A's conditions (`if [c] ...`)",
                    c.name
                ),
                span: c.span,
                in_b: true,
            });
        }
    }
    Ok(())
}

/// A program's arrays by name: looked up once per array of the other
/// side (a search per lookup made wide programs quadratic).
fn array_ids(p: &Program) -> HashMap<&str, ArrayId> {
    let ids = p.arrays.iter().enumerate();
    ids.map(|(k, a)| (a.name.as_str(), ArrayId(k as u32)))
        .collect()
}

/// Names as a set.
fn names(list: &[String]) -> HashSet<&str> {
    list.iter().map(String::as_str).collect()
}

/// Every array of A must exist in B with the same shape at these parameters.
fn match_arrays(a: &Side, b: &Side, scratch: &[String]) -> Result<(), EquivError> {
    let (b_ids, scratch) = (array_ids(b.program), names(scratch));
    for (k, arr) in a.program.arrays.iter().enumerate() {
        // A temporary's final contents are not compared: B may drop it,
        // share its storage or lay it out in fewer cells.
        if scratch.contains(arr.name.as_str()) {
            continue;
        }
        let shape = |side: &Side, id| shape_of(side.program, id, &side.options.params);
        let Some(&id_b) = b_ids.get(arr.name.as_str()) else {
            return Err(EquivError {
                message: format!(
                    "B does not declare `{}`, which A declares: if its final contents are not \
                     a result (a temporary B removed, shared or laid out in fewer cells), name \
                     the arrays that are with `--live-out`",
                    arr.name
                ),
                span: Span::NONE,
                in_b: true,
            });
        };
        let id_a = ArrayId(k as u32);
        if shape(a, id_a) != shape(b, id_b) {
            return Err(EquivError {
                message: format!(
                    "B declares `{}` with other dimensions than A does at these parameters",
                    arr.name
                ),
                span: b.program.array_decl(id_b).span,
                in_b: true,
            });
        }
    }
    Ok(())
}

fn shape_of(p: &Program, id: crate::model::ArrayId, params: &[i64]) -> Option<Vec<(i64, i64)>> {
    let mut env = crate::model::eval::StaticEnv {
        params,
        counters: &[],
    };
    p.array_decl(id)
        .dims
        .iter()
        .map(|r| {
            let lo = crate::model::eval::expr(&r.lo.expr, &mut env).ok()?;
            let hi = crate::model::eval::expr(&r.hi.expr, &mut env).ok()?;
            Some((lo, hi))
        })
        .collect()
}

/// The first read that differs: A's reads in order (missing in B or another
/// value), then B's reads that A never made. Two reads of one run with one
/// key cannot be told apart: an error (A's checked before B's).
fn compare_reads(
    sa: &Side,
    ra: &Run,
    sb: &Side,
    rb: &Run,
    seed: u64,
) -> Result<Option<Mismatch>, EquivError> {
    let in_a = index(sa, ra, false, seed)?;
    // For each read of A, the read of B with its key (+1; 0: none yet).
    let mut matched = vec![0u32; ra.reads.len()];
    let mut extra: HashSet<Key, WordHash> = HashSet::default();
    let mut first_extra = None;
    for (k, r) in rb.reads.iter().enumerate() {
        if sb.unordered(rb, r) {
            continue;
        }
        let key = sb.key(rb, r);
        let dup = match in_a.get(&key) {
            Some(&ka) => std::mem::replace(&mut matched[ka as usize], k as u32 + 1) != 0,
            None => {
                first_extra.get_or_insert(r);
                !extra.insert(key)
            }
        };
        if dup {
            return Err(duplicate(sb, rb, r, true, seed));
        }
    }
    let what = |side: &Side, run: &Run, r: &Read| {
        let op = run.ops.get(r.op);
        format!("read {} of {}", r.access, side.names.op(op))
    };
    for (r, &m) in ra.reads.iter().zip(&matched) {
        if sa.unordered(ra, r) {
            continue;
        }
        let expected = || Seen {
            value: r.value,
            writer: sa.writer(ra, r.writer, r.origin),
        };
        let Some(s) = m.checked_sub(1).map(|k| &rb.reads[k as usize]) else {
            return Ok(Some(Mismatch {
                seed,
                what: what(sa, ra, r),
                expected: Some(expected()),
                actual: None,
                failure: None,
                limit: false,
            }));
        };
        if s.value != r.value {
            return Ok(Some(Mismatch {
                seed,
                what: match (what(sa, ra, r), what(sb, rb, s)) {
                    (x, y) if x == y => x,
                    (x, y) => format!("{x} (B: {y})"),
                },
                expected: Some(expected()),
                actual: Some(Seen {
                    value: s.value,
                    writer: sb.writer(rb, s.writer, s.origin),
                }),
                failure: None,
                limit: false,
            }));
        }
    }
    if let Some(s) = first_extra {
        return Ok(Some(Mismatch {
            seed,
            what: what(sb, rb, s),
            expected: None,
            actual: Some(Seen {
                value: s.value,
                writer: sb.writer(rb, s.writer, s.origin),
            }),
            failure: None,
            limit: false,
        }));
    }
    Ok(None)
}

/// The reads of a run by key, as positions in `run.reads`.
fn index<'r>(
    side: &'r Side,
    run: &'r Run,
    in_b: bool,
    seed: u64,
) -> Result<HashMap<Key<'r>, u32, WordHash>, EquivError> {
    let mut out = HashMap::with_capacity_and_hasher(run.reads.len(), WordHash::default());
    for (k, r) in run.reads.iter().enumerate() {
        if side.unordered(run, r) {
            continue;
        }
        if out.insert(side.key(run, r), k as u32).is_some() {
            return Err(duplicate(side, run, r, in_b, seed));
        }
    }
    Ok(out)
}

fn duplicate(side: &Side, run: &Run, r: &Read, in_b: bool, seed: u64) -> EquivError {
    let op = run.ops.get(r.op);
    EquivError {
        message: format!(
            "two operations of {} go by the same name {} (seed {seed}): \
             versions of one statement must not run at the same iteration",
            if in_b { "B" } else { "A" },
            crate::interp::format_op(side.names.base(op.site), op.iter)
        ),
        span: Span::NONE,
        in_b,
    }
}

fn compare_contents(
    sa: &Side,
    ra: &Run,
    sb: &Side,
    rb: &Run,
    seed: u64,
    scratch: &[String],
) -> Option<Mismatch> {
    let (b_ids, scratch) = (array_ids(sb.program), names(scratch));
    for (arr, ca) in sa.program.arrays.iter().zip(&ra.arrays) {
        if scratch.contains(arr.name.as_str()) {
            continue;
        }
        let id_b = *b_ids
            .get(arr.name.as_str())
            .expect("checked by match_arrays");
        let cb = &rb.arrays[id_b.index()];
        // The cells either run holds; a cell one run did not touch holds
        // its initial value, the same in both (name, index and seed).
        let at: Box<dyn Iterator<Item = usize>> = if ca.touched.is_none() && cb.touched.is_none() {
            Box::new(0..ca.cells.len().min(cb.cells.len()))
        } else {
            let mut at: Vec<usize> = ca.held().chain(cb.held()).map(|(k, _)| k).collect();
            at.sort_unstable();
            at.dedup();
            Box::new(at.into_iter())
        };
        let initial = |k: usize| Cell {
            value: crate::interp::initial_value(seed, &arr.name, &ca.index(k)),
            writer: Writer::Initial,
            origin: Writer::Initial,
        };
        for k in at {
            let x = ca.get(k).unwrap_or_else(|| initial(k));
            let y = cb.get(k).unwrap_or_else(|| initial(k));
            if x.value != y.value {
                let index = ca.index(k);
                let cell = if index.is_empty() {
                    arr.name.clone()
                } else {
                    let parts: Vec<String> = index.iter().map(i64::to_string).collect();
                    format!("{}[{}]", arr.name, parts.join(", "))
                };
                return Some(Mismatch {
                    seed,
                    what: format!("final contents of {cell}"),
                    expected: Some(Seen {
                        value: x.value,
                        writer: sa.writer(ra, x.writer, x.origin),
                    }),
                    actual: Some(Seen {
                        value: y.value,
                        writer: sb.writer(rb, y.writer, y.origin),
                    }),
                    failure: None,
                    limit: false,
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
