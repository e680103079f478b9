//! The privatized program (`privatize --emit code`): each loop that becomes
//! parallel once its arrays are private runs over per-thread private
//! copies, with a copy-in and a finalization that are right for every
//! parameter value, whatever the analysed sizes said:
//!
//! ```text
//! for t = 0 to threads - 1 doall                     # one iteration per thread
//!   for c: @copy X_p[t, c] = X[c]; @copy X_w[t, c] = 0; end   # firstprivate
//!   for i = lo to hi do                               # in order, in each thread
//!     if t*(hi - lo + 1) <= threads*(i - lo) and threads*(i - lo) < (t + 1)*(hi - lo + 1) then
//!       ... X_p[t, e] for X[e]; @copy X_w[t, e] = 1 before each write ...
//!     end
//!   end
//! end
//! for c:                                              # last writer wins
//!   @copy X_l = 0;
//!   for t2 = 0 to threads - 1 do @copy X_l = X_l + X_w[t2, c] * (t2 - X_l); end
//!   @copy X[c] = X_p[X_l, c];
//! end
//! ```
//!
//! Thread `t` runs a block of consecutive iterations in increasing order,
//! and the blocks follow one another as `t` grows. That is enough: in a
//! loop parallel after privatization every value an iteration reads comes
//! from the iteration itself or from before the loop, so no earlier
//! iteration of the block wrote the cell (the copy still holds the value
//! from before the loop) or the iteration itself did (the copy holds it).
//! After the loop, the cell's last writer is in the last block that wrote
//! it, as the last write there; where no block wrote it, thread 0's copy
//! still holds the value from before the loop. Memory: the cells the loop
//! touches (`privatize::footprint`) once per thread for `X_p` and `X_w`,
//! whatever the number of iterations.
//!
//! `threads` is a parameter of the program (the C form sets it to
//! `omp_get_max_threads()`); the loop over `t` is no part of the
//! operations' names (`interp::Options::thread_loops`), so `equiv` compares
//! the privatized program with the original at any number of threads. What
//! is not proved is that the loop is parallel at every size: the analysis
//! ran at the given sizes, and `equiv` with `doall` shuffled checks others.

use super::footprint::{self, Footprint};
use super::nodes::{access, copy, e, int};
use super::reduction::ReduceOp;
use super::LoopPrivatization;
use crate::codegen::Names;
use crate::model::*;
use crate::readback::{self, Refusal};

/// (loop, its private arrays), per privatized loop.
pub type Privatized = Vec<(String, Vec<String>)>;

/// The privatized program and what was privatized.
pub struct Emitted {
    pub text: String,
    /// The text compiled back: what `equiv` runs.
    pub program: Program,
    /// (loop, its private arrays).
    pub loops: Vec<(String, Vec<String>)>,
    /// The thread count's parameter and the loops over threads, when a
    /// loop has per-thread copies: `equiv` runs need both
    /// ([`Threads::equiv_options`]).
    pub threads: Threads,
}

/// What per-thread private copies added to a program: the parameter that
/// counts the threads, and the counters of the loops over them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Threads {
    pub param: Option<String>,
    pub loops: Vec<String>,
    /// The statements and conditions of maxima kept with their indices
    /// ([`super::argmax`]): each thread folds its block in an order of its
    /// own, so `equiv` compares their results, not their reads
    /// (`interp::Options::unordered`).
    pub unordered: Vec<String>,
}

/// The thread counts `equiv` runs a privatized program at: one thread,
/// and three, whose blocks differ in size at most sizes and outnumber the
/// iterations at the smallest (two and four added nothing three did not
/// catch, and doubled the validation's time).
pub const CHECKED_THREADS: [i64; 2] = [1, 3];

impl Threads {
    /// `equiv`'s options comparing the original with the privatized
    /// program at `params` on `threads` threads (ignored when no loop has
    /// per-thread copies).
    pub fn equiv_options(
        &self,
        params: &[(String, i64)],
        threads: i64,
        seeds: u64,
    ) -> crate::equiv::EquivOptions {
        let mut o = crate::equiv::EquivOptions {
            params: params.to_vec(),
            seeds,
            ..Default::default()
        };
        if let Some(name) = &self.param {
            o.params.push((name.clone(), threads));
        }
        o.run.thread_loops = self.loops.clone();
        o.run.unordered = self.unordered.clone();
        o
    }
}

/// One private array of one loop: the original, the three new ones, and
/// the cells the loop touches, which they cover.
struct Private {
    x: ArrayId,
    cells: Footprint,
    /// `X_p[t, cells]`: thread `t`'s copy.
    copy: ArrayId,
    /// `X_w[t, cells]`: 1 where thread `t` wrote the cell.
    written: ArrayId,
    /// `X_l`: the last thread that wrote the cell being finalized.
    last: ArrayId,
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    e(ExprKind::Binary(op, Box::new(l), Box::new(r)))
}

fn read(array: ArrayId, subs: Vec<Expr>) -> Expr {
    e(ExprKind::Access(access(array, subs)))
}

/// The program with every loop that privatization makes parallel (the
/// outermost ones, `for` loops with bounds in the parameters alone)
/// privatized; `None` when there is none.
pub fn emit(program: &Program, chosen: &[Chosen]) -> Result<Option<Emitted>, Refusal> {
    let Some((p, done, threads)) = build(program, chosen, None) else {
        return Ok(None);
    };
    let text = crate::print::program(&p);
    // The built program is not needed once printed: freed before the text
    // is compiled back, the largest step.
    drop(p);
    readback::poll("the privatized program")?;
    let program = readback::compile_from(&text, "the privatized program", program)?;
    Ok(Some(Emitted {
        text,
        program,
        loops: done,
        threads,
    }))
}

/// The privatized program as C, for C input: a loop whose private arrays
/// all fit OpenMP's clauses ([`super::omp`]) keeps its body and gets them;
/// the others get the explicit code of [`emit`].
pub struct EmittedC {
    pub text: String,
    pub loops: Vec<(String, Vec<String>)>,
    /// Per privatized loop, what it got and why, for the header.
    pub notes: Vec<String>,
    /// The program printed: its arrays that are not local are the C
    /// function's parameters after the integer ones, in this order.
    pub program: Program,
}

/// [`emit`] as C defining `void function(..)`.
pub fn emit_c(program: &Program, chosen: &[Chosen], function: &str) -> Option<EmittedC> {
    emit_c_with(program, chosen, &|p, omp| {
        crate::cprint::emit::program_omp(p, function, omp)
    })
}

/// [`emit_c`], printed by `print`.
pub fn emit_c_with(
    program: &Program,
    chosen: &[Chosen],
    print: &dyn Fn(&Program, &[crate::cprint::emit::OmpLoop]) -> String,
) -> Option<EmittedC> {
    let mut omp = Clauses {
        locals: super::omp::Locals::new(program),
        ..Clauses::default()
    };
    let (p, loops, _) = build(program, chosen, Some(&mut omp))?;
    Some(EmittedC {
        text: print(&p, &omp.loops),
        loops,
        notes: omp.notes,
        program: p,
    })
}

/// What the C form gathers: the loops with clauses, and a note per loop.
#[derive(Default)]
struct Clauses {
    loops: Vec<crate::cprint::emit::OmpLoop>,
    notes: Vec<String>,
    locals: super::omp::Locals,
}

/// The program with the chosen loops privatized, (loop, arrays) for each,
/// and what per-thread copies added; with `clauses`, loops whose arrays
/// all fit OpenMP clauses are only marked parallel and listed there.
fn build(
    program: &Program,
    chosen: &[Chosen],
    clauses: Option<&mut Clauses>,
) -> Option<(Program, Privatized, Threads)> {
    let mut p = program.clone();
    let mut names = Names::new(program);
    let mut done = Vec::new();
    let body = std::mem::take(&mut p.body);
    let mut cx = Rewrite {
        chosen,
        names: &mut names,
        done: &mut done,
        clauses,
        outer: Vec::new(),
        threads: None,
        thread_loops: Vec::new(),
        unordered: Vec::new(),
    };
    p.body = cx.nodes(body, &mut p);
    let threads = Threads {
        param: cx.threads.map(|q| p.params[q.index()].name.clone()),
        loops: cx.thread_loops,
        unordered: cx.unordered,
    };
    if done.is_empty() {
        return None;
    }
    // Inserted statements and conditions renumber generated labels (`_S3`
    // is the third statement): the derived `_S3.1` keeps matching `_S3`
    // under `equiv`.
    keep_generated_labels(&mut p.body);
    Some((p, done, threads))
}

/// A loop to privatize and its arrays to make private.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub counter: CounterId,
    pub private: Vec<String>,
    /// The arrays it reduces and their operators: only in the C form,
    /// where OpenMP's `reduction` clause combines partial results.
    pub reductions: Vec<(String, ReduceOp)>,
}

/// The loops that reductions make parallel (in the C form): every array
/// private, shared or a reduction, each sum or product on an integer array
/// or `reassociate` (sums of reals in another order round differently), and
/// no loop around it parallel as written, after privatization, or with
/// reductions (one parallel loop per nest, the outermost). With a note for
/// each loop left sequential because of real values.
pub fn choose_reductions(
    program: &Program,
    loops: &[super::exact::ExactLoop],
    reassociate: bool,
) -> (Vec<Chosen>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    // The loops around the current one (pre-order), with whether any of
    // them is parallel one way or another.
    let mut around: Vec<bool> = Vec::new();
    for l in loops {
        around.truncate(l.depth);
        let inside_parallel = around.iter().any(|&b| b);
        let mut parallel = l.parallel_before() || l.parallel_after();
        if l.parallel_with_reductions() && !inside_parallel {
            // Sums and products of reals round by their order; a maximum
            // or a minimum does not.
            let real: Vec<&str> = (l.reductions())
                .filter(|(x, op, _)| {
                    matches!(op, ReduceOp::Add | ReduceOp::Mul)
                        && program
                            .array(x)
                            .is_some_and(|a| program.array_decl(a).elem != ElemType::Int)
                })
                .map(|(x, _, _)| x)
                .collect();
            if real.is_empty() || reassociate {
                parallel = true;
                out.push(Chosen {
                    counter: l.counter,
                    private: l.private().map(str::to_string).collect(),
                    reductions: l
                        .reductions()
                        .map(|(x, op, _)| (x.to_string(), op))
                        .collect(),
                });
            } else {
                notes.push(format!(
                    "loop {}: a reduction on {} (real values): left sequential, since partial \
                     results combined in another order round differently; --reassociate allows it",
                    l.name,
                    real.join(", ")
                ));
            }
        }
        around.push(parallel);
    }
    (out, notes)
}

/// The loops exact σ makes parallel after privatization and not before,
/// outside any loop chosen already, and the outermost loops (not inside
/// any loop) that are parallel as they are: one parallel loop per nest. A
/// loop parallel as written inside a sequential loop is left to
/// [`choose_inner`] (the C form only, where the printer can give the nest
/// one parallel region).
pub fn choose_exact(loops: &[super::exact::ExactLoop]) -> Vec<Chosen> {
    let mut out = Vec::new();
    // Whether each loop around the current one (pre-order) is chosen.
    let mut around: Vec<bool> = Vec::new();
    for l in loops {
        around.truncate(l.depth);
        let inside_chosen = around.iter().any(|&b| b);
        let gains = l.parallel_after() && !l.parallel_before();
        let outermost = l.depth == 0 && l.parallel_before();
        let chosen = !inside_chosen && (gains || outermost);
        if chosen {
            out.push(Chosen {
                counter: l.counter,
                private: l.private().map(str::to_string).collect(),
                reductions: Vec::new(),
            });
        }
        around.push(chosen);
    }
    out
}

/// In the C form, the loops parallel as written inside loops that are
/// not parallel in any way (as written, after privatization or with
/// reductions), outside every loop chosen already: a time step's sweeps.
/// The printer runs them in one parallel region around the sequential
/// loops where every thread can take the same path to them, else each
/// with a parallel loop of its own; the cost model decides whether either
/// pays (docs/c.md, C output).
pub fn choose_inner(loops: &[super::exact::ExactLoop], taken: &[Chosen]) -> Vec<Chosen> {
    let mut out = Vec::new();
    // Whether each loop around the current one (pre-order) is parallel in
    // some way, or chosen.
    let mut around: Vec<bool> = Vec::new();
    for l in loops {
        around.truncate(l.depth);
        let busy = l.parallel_before()
            || l.parallel_after()
            || l.parallel_with_reductions()
            || taken.iter().any(|c| c.counter == l.counter);
        if l.depth > 0 && l.parallel_before() && !around.iter().any(|&b| b) {
            out.push(Chosen {
                counter: l.counter,
                private: Vec::new(),
                reductions: Vec::new(),
            });
        }
        around.push(busy);
    }
    out
}

/// The loops parallel after privatization at every analysed size and not
/// parallel as they are at some, each with the arrays private at any (a
/// private copy of an array no dependence crosses is harmless).
pub fn choose(analyses: &[Vec<LoopPrivatization>]) -> Vec<Chosen> {
    choose_sampled(analyses, false)
}

/// [`choose`], and with `written` the outermost loops parallel as written
/// at every sample too (for a proof of every choice, `super::possible`).
fn choose_sampled(analyses: &[Vec<LoopPrivatization>], written: bool) -> Vec<Chosen> {
    let Some(first) = analyses.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .filter_map(|(k, l)| {
            let at: Vec<&LoopPrivatization> = analyses.iter().filter_map(|a| a.get(k)).collect();
            let ok = at.len() == analyses.len()
                && at
                    .iter()
                    .all(|m| m.counter == l.counter && m.parallel_after())
                && (at.iter().any(|m| !m.parallel_before()) || (written && l.depth == 0));
            ok.then(|| {
                let private: std::collections::BTreeSet<String> = (at.iter())
                    .flat_map(|m| m.private().map(str::to_string))
                    .collect();
                Chosen {
                    counter: l.counter,
                    private: private.into_iter().collect(),
                    reductions: Vec::new(),
                }
            })
        })
        .collect()
}

fn keep_generated_labels(nodes: &mut [Node]) {
    fn keep(c: &mut Condition) {
        if c.generated {
            c.name = format!("{}.1", c.name);
            c.generated = false;
        }
    }
    for n in nodes {
        match n {
            Node::Stmt(s) if s.label_generated => {
                s.label = format!("{}.1", s.label);
                s.label_generated = false;
            }
            Node::Stmt(_) => {}
            Node::For(f) => keep_generated_labels(&mut f.body),
            Node::While(w) => {
                keep(&mut w.cond);
                keep_generated_labels(&mut w.body);
            }
            Node::If(i) => {
                for (c, b) in &mut i.branches {
                    keep(c);
                    keep_generated_labels(b);
                }
                if let Some(b) = &mut i.otherwise {
                    keep_generated_labels(b);
                }
            }
        }
    }
}

struct Rewrite<'a> {
    chosen: &'a [Chosen],
    names: &'a mut Names,
    done: &'a mut Vec<(String, Vec<String>)>,
    clauses: Option<&'a mut Clauses>,
    /// The loops around the nodes being rewritten, outermost first.
    outer: Vec<footprint::Bounds>,
    /// The thread count, once a loop has per-thread copies.
    threads: Option<ParamId>,
    /// The counters of the loops over threads.
    thread_loops: Vec<String>,
    /// [`Threads::unordered`].
    unordered: Vec<String>,
}

impl Rewrite<'_> {
    fn nodes(&mut self, nodes: Vec<Node>, p: &mut Program) -> Vec<Node> {
        let mut out = Vec::new();
        // What follows each node: whether a private array is dead after it.
        let all = if self.clauses.is_some() {
            nodes.clone()
        } else {
            Vec::new()
        };
        for (k, n) in nodes.into_iter().enumerate() {
            match n {
                Node::For(mut f) => {
                    // Explicit private copies are sized by the loop's
                    // bounds; a reduction loop has clauses or nothing.
                    let target = (self.chosen.iter())
                        .find(|l| l.counter == f.counter)
                        .filter(|l| {
                            !l.reductions.is_empty()
                                || l.private.is_empty()
                                || !f.lower.affine.uses_counters()
                                    && !f.upper.affine.uses_counters()
                        });
                    match target {
                        Some(l) if super::argmax::any(&l.reductions) => {
                            let loop_name = p.counter_decl(f.counter).name.clone();
                            match self.keyed(f.clone(), l, p) {
                                Some(nodes) => {
                                    out.extend(nodes);
                                    let cells = l.reductions.iter().map(|(x, _)| x.clone());
                                    self.done.push((loop_name, cells.collect()));
                                }
                                None => out.push(Node::For(f)),
                            }
                        }
                        Some(l) if !l.reductions.is_empty() => {
                            let xs: Vec<ArrayId> =
                                l.private.iter().filter_map(|name| p.array(name)).collect();
                            let after = all.get(k + 1..).unwrap_or(&[]);
                            if self.with_clauses(&mut f, after, &xs, &l.reductions, p) {
                                let loop_name = p.counter_decl(f.counter).name.clone();
                                self.done.push((loop_name, l.private.clone()));
                            } else {
                                self.outer.push(footprint::bounds(&f));
                                f.body = self.nodes(f.body, p);
                                self.outer.pop();
                            }
                            out.push(Node::For(f));
                        }
                        Some(l) => {
                            let arrays = l.private.clone();
                            let xs: Vec<ArrayId> =
                                arrays.iter().filter_map(|name| p.array(name)).collect();
                            let loop_name = p.counter_decl(f.counter).name.clone();
                            let after = all.get(k + 1..).unwrap_or(&[]);
                            if xs.is_empty() && self.clauses.is_none() {
                                // Parallel as written: nothing to copy per
                                // thread, the loop is only marked.
                                f.parallel = true;
                                out.push(Node::For(f));
                            } else if !self.with_clauses(&mut f, after, &xs, &[], p) {
                                let threads = self.threads(p);
                                let privates: Vec<Private> = xs
                                    .into_iter()
                                    .map(|x| declare(p, self.names, x, &f, &self.outer, threads))
                                    .collect();
                                let t =
                                    privatize(&mut f, &privates, threads, p, self.names, &mut out);
                                self.per_thread(t, threads, &loop_name, &privates, p);
                            } else {
                                out.push(Node::For(f));
                            }
                            self.done.push((loop_name, arrays));
                        }
                        None => {
                            self.outer.push(footprint::bounds(&f));
                            f.body = self.nodes(f.body, p);
                            self.outer.pop();
                            out.push(Node::For(f));
                        }
                    }
                }
                Node::While(mut w) => {
                    self.outer.push((w.counter, None));
                    w.body = self.nodes(w.body, p);
                    self.outer.pop();
                    out.push(Node::While(w));
                }
                Node::If(mut i) => {
                    i.branches = i
                        .branches
                        .into_iter()
                        .map(|(c, b)| (c, self.nodes(b, p)))
                        .collect();
                    i.otherwise = i.otherwise.map(|b| self.nodes(b, p));
                    out.push(Node::If(i));
                }
                Node::Stmt(s) => out.push(Node::Stmt(s)),
            }
        }
        out
    }

    /// The parameter counting threads, declared on first use (`threads
    /// >= 1` assumed: the C form sets it to `omp_get_max_threads()`).
    fn threads(&mut self, p: &mut Program) -> ParamId {
        if let Some(q) = self.threads {
            return q;
        }
        p.params.push(Param {
            name: self.names.fresh("threads"),
            default: Some(4),
            span: Span::NONE,
            derived: None,
        });
        let q = ParamId(p.params.len() as u32 - 1);
        let at_least_one = Cond::Cmp(CmpOp::Ge, e(ExprKind::Param(q)), int(1));
        p.assumptions.push(at_least_one);
        self.threads = Some(q);
        q
    }

    /// Records the loop over threads `t` of `loop_name`: for `equiv`, and
    /// in the C form for the printer, with a note giving the memory.
    fn per_thread(
        &mut self,
        t: CounterId,
        threads: ParamId,
        loop_name: &str,
        privates: &[Private],
        p: &Program,
    ) {
        self.thread_loops.push(p.counter_decl(t).name.clone());
        let Some(c) = self.clauses.as_deref_mut() else {
            return;
        };
        let per_thread: Vec<String> = (privates.iter())
            .map(|v| {
                let cells = (v.cells.dims.iter())
                    .map(|r| extent(p, r))
                    .collect::<Vec<_>>()
                    .join(") * (");
                let cells = if cells.is_empty() { "1".into() } else { cells };
                format!(
                    "{} and {}, ({cells}) cells each",
                    p.array_decl(v.copy).name,
                    p.array_decl(v.written).name
                )
            })
            .collect();
        c.notes.push(format!(
            "loop {loop_name}: per-thread private copies ({}): each thread runs a block of \
             consecutive iterations on its copy, and each cell is copied back from the last \
             block that wrote it; memory per thread, whatever the number of iterations: {}",
            p.params[threads.index()].name,
            per_thread.join("; ")
        ));
        c.loops.push(crate::cprint::emit::OmpLoop {
            counter: t,
            arrays: Vec::new(),
            reductions: Vec::new(),
            threads: Some(p.params[threads.index()].name.clone()),
        });
    }

    /// Loop `f` of `l`, whose reductions are keyed groups (argmax), as
    /// the two passes of [`super::argmax::emit`]: the loop over threads,
    /// then the partials combined in thread order. `None`, with a note in
    /// the C form, when the loop has anything else to privatize.
    fn keyed(&mut self, f: For, l: &Chosen, p: &mut Program) -> Option<Vec<Node>> {
        let name = p.counter_decl(f.counter).name.clone();
        let note = |c: Option<&mut Clauses>, why: &str| {
            if let Some(c) = c {
                c.notes.push(format!("loop {name}: left sequential: {why}"));
            }
        };
        if !super::argmax::only(&l.reductions, !l.private.is_empty()) {
            let why = "a maximum kept with its index next to other reductions or private arrays";
            note(self.clauses.as_deref_mut(), why);
            return None;
        }
        let arrays: Vec<ArrayId> = (l.reductions.iter())
            .filter_map(|(x, _)| p.array(x))
            .collect();
        let threads = self.threads(p);
        let th = super::argmax::Threads {
            param: threads,
            names: self.names,
            block: &block_of,
        };
        let Some((nodes, t, sites)) = super::argmax::emit(f, &arrays, p, th) else {
            note(
                self.clauses.as_deref_mut(),
                "internal error: no keyed group found",
            );
            return None;
        };
        self.thread_loops.push(p.counter_decl(t).name.clone());
        self.unordered.extend(sites);
        let Some(c) = self.clauses.as_deref_mut() else {
            return Some(nodes);
        };
        let cells: Vec<&str> = l.reductions.iter().map(|(x, _)| x.as_str()).collect();
        c.notes.push(format!(
            "loop {name}: {} kept with the extreme they go with: each thread folds its block \
             of consecutive iterations into partials with the comparison as written, and the \
             partials are combined in thread order with the same comparison (ties as in the \
             original)",
            cells.join(", ")
        ));
        c.loops.push(crate::cprint::emit::OmpLoop {
            counter: t,
            arrays: Vec::new(),
            reductions: Vec::new(),
            threads: Some(p.params[threads.index()].name.clone()),
        });
        Some(nodes)
    }

    /// In the C form, marks `f` parallel with OpenMP clauses when every
    /// array of `xs` fits one, with the `reductions`; notes what it got,
    /// or why not.
    fn with_clauses(
        &mut self,
        f: &mut For,
        after: &[Node],
        xs: &[ArrayId],
        reductions: &[(String, ReduceOp)],
        p: &Program,
    ) -> bool {
        let Some(c) = self.clauses.as_deref_mut() else {
            return false;
        };
        let name = &p.counter_decl(f.counter).name;
        let mut arrays = Vec::new();
        let mut whys = Vec::new();
        for &x in xs {
            let array = &p.array_decl(x).name;
            match super::omp::clause(p, f, after, x, &c.locals) {
                Ok((o, why)) => {
                    let kind = match (o.first, o.last) {
                        (false, false) => "private",
                        (true, false) => "firstprivate",
                        (false, true) => "lastprivate",
                        (true, true) => "firstprivate lastprivate",
                    };
                    whys.push(format!("{array}: {kind} ({why})"));
                    arrays.push(o);
                }
                Err(why) => {
                    c.notes
                        .push(format!("loop {name}: no OpenMP clause fits {array}: {why}"));
                    return false;
                }
            }
        }
        let mut omp_reductions = Vec::new();
        for (array, op) in reductions {
            let Some(cell) = p.array(array).and_then(|x| updated_cell(&f.body, x)) else {
                c.notes
                    .push(format!("loop {name}: internal error: no update of {array}"));
                return false;
            };
            whys.push(format!(
                "{}: reduction({}) (every iteration updates it, nothing else in the loop \
                 touches it)",
                crate::print::access(p, &cell),
                op.openmp(),
            ));
            omp_reductions.push(crate::cprint::emit::OmpReduction {
                cell,
                op: op.openmp(),
            });
        }
        c.notes.push(if whys.is_empty() {
            format!("loop {name}: parallel as written (no dependence crosses its iterations)")
        } else {
            format!("loop {name}: OpenMP clauses; {}", whys.join("; "))
        });
        f.parallel = true;
        c.loops.push(crate::cprint::emit::OmpLoop {
            counter: f.counter,
            arrays,
            reductions: omp_reductions,
            threads: None,
        });
        true
    }
}

/// The cell the first write of `x` in `body` updates.
fn updated_cell(body: &[Node], x: ArrayId) -> Option<Access> {
    body.iter().find_map(|n| match n {
        Node::Stmt(s) => match &s.kind {
            StmtKind::Assign { target, .. } if target.array == x => Some(target.clone()),
            _ => None,
        },
        Node::For(f) => updated_cell(&f.body, x),
        Node::While(w) => updated_cell(&w.body, x),
        Node::If(i) => (i.branches.iter().map(|(_, b)| b))
            .chain(i.otherwise.as_ref())
            .find_map(|b| updated_cell(b, x)),
    })
}

/// `X_p[0 .. threads - 1, D]`, `X_w[0 .. threads - 1, D]` over the cells
/// `D` the loop touches, and the scalar `X_l`: the thread is the first
/// subscript, so that each thread's copy is one block of memory.
fn declare(
    p: &mut Program,
    names: &mut Names,
    x: ArrayId,
    l: &For,
    outer: &[footprint::Bounds],
    threads: ParamId,
) -> Private {
    let decl = p.array_decl(x).clone();
    let cells = footprint::of(p, outer, l, x);
    let last_thread = Affine::var(Var::Param(threads))
        .checked_sub(&Affine::constant(1))
        .expect("a small bound");
    let per_thread = Range {
        lo: constant_bound(0),
        hi: Bound {
            expr: crate::model::affine_expr(&last_thread, Span::NONE),
            affine: last_thread,
        },
    };
    let mut add = |name: String, elem: ElemType, per_thread: Option<&Range>| {
        p.arrays.push(Array {
            name,
            elem,
            dims: match per_thread {
                Some(t) => std::iter::once(t.clone())
                    .chain(cells.dims.iter().cloned())
                    .collect(),
                None => Vec::new(),
            },
            span: Span::NONE,
            // Used in the finalization only: a local of the C function.
            local: per_thread.is_none(),
        });
        ArrayId(p.arrays.len() as u32 - 1)
    };
    Private {
        x,
        copy: add(
            names.fresh(&format!("{}_p", decl.name)),
            decl.elem,
            Some(&per_thread),
        ),
        written: add(
            names.fresh(&format!("{}_w", decl.name)),
            ElemType::Int,
            Some(&per_thread),
        ),
        last: add(
            names.fresh(&format!("{}_l", decl.name)),
            ElemType::Int,
            None,
        ),
        cells,
    }
}

fn constant_bound(v: i64) -> Bound {
    Bound {
        expr: int(v),
        affine: Affine::constant(v),
    }
}

/// The number of cells of `r`, as the model prints it (`LEN + 5`).
fn extent(p: &Program, r: &Range) -> String {
    let n =
        (r.hi.affine.checked_sub(&r.lo.affine)).and_then(|d| d.checked_add(&Affine::constant(1)));
    match n {
        Some(n) => crate::print::expr(p, &crate::model::affine_expr(&n, Span::NONE)),
        None => format!(
            "{} - ({}) + 1",
            crate::print::expr(p, &r.hi.expr),
            crate::print::expr(p, &r.lo.expr)
        ),
    }
}

/// A loop nest over the cells `cells` covers, around the statements `body`
/// makes from the cell's subscripts (under a guard where the box may leave
/// the declared range).
fn over_cells(
    p: &mut Program,
    names: &mut Names,
    cells: &Footprint,
    body: impl FnOnce(&[Expr], &mut Names) -> Vec<Node>,
) -> Vec<Node> {
    let dims = cells.dims.clone();
    let counters: Vec<CounterId> = (0..dims.len())
        .map(|_| crate::codegen::push_counter(p, names.fresh("c")))
        .collect();
    let subs: Vec<Expr> = counters.iter().map(|&c| e(ExprKind::Counter(c))).collect();
    let mut nodes = body(&subs, names);
    for (d, lower, declared) in &cells.clamp {
        let c = Affine::var(Var::Counter(counters[*d]));
        // lower: declared - c <= 0; upper: c - declared <= 0.
        let outside = match lower {
            true => declared.checked_sub(&c),
            false => c.checked_sub(declared),
        };
        let Some(outside) = outside else { continue };
        nodes = vec![Node::If(If {
            branches: vec![(
                Condition {
                    id: CondId(0),
                    name: names.fresh("in"),
                    generated: false,
                    cond: crate::codegen::le_zero(&outside),
                    span: Span::NONE,
                },
                nodes,
            )],
            otherwise: None,
            span: Span::NONE,
        })];
    }
    for (r, &c) in dims.iter().zip(&counters).rev() {
        nodes = vec![Node::For(For {
            counter: c,
            lower: r.lo.clone(),
            upper: r.hi.clone(),
            step: 1,
            parallel: false,
            body: nodes,
            span: Span::NONE,
        })];
    }
    nodes
}

/// The thread `t`, then the subscripts `c` of a cell.
fn with_thread(t: &Expr, c: &[Expr]) -> Vec<Expr> {
    std::iter::once(t.clone())
        .chain(c.iter().cloned())
        .collect()
}

/// Pushes onto `out` the set-up, the loop over private copies and the
/// finalization; under `if lo <= hi` where the loop's bounds may cross by
/// more than one ([`may_cross`]).
fn privatize(
    f: &mut For,
    privates: &[Private],
    threads: ParamId,
    p: &mut Program,
    names: &mut Names,
    out: &mut Vec<Node>,
) -> CounterId {
    let guard = may_cross(p, f).then(|| Condition {
        id: CondId(0),
        name: names.fresh("runs"),
        generated: false,
        cond: Cond::Cmp(CmpOp::Le, f.lower.expr.clone(), f.upper.expr.clone()),
        span: Span::NONE,
    });
    let mut nodes = Vec::new();
    let t = fill(f, privates, threads, p, names, &mut nodes);
    match guard {
        Some(c) => out.push(Node::If(If {
            branches: vec![(c, nodes)],
            otherwise: None,
            span: Span::NONE,
        })),
        None => out.extend(nodes),
    }
    t
}

/// Whether `hi < lo - 1` at some parameter values the assumptions allow
/// (`i <= LEN - 6` at `LEN = 1`; `i <= N - 1` at `N = -1`, as nothing says
/// `N >= 0`): the slot `lo - 1` of `X_p` (declared `lo - 1 .. hi`), which
/// the set-up and the finalization use, does not exist there. The loop is
/// empty there, and the privatized program under `if lo <= hi` leaves the
/// arrays as the loop does. True where the tests cannot tell.
fn may_cross(p: &Program, f: &For) -> bool {
    use crate::symbolic::domain::{self, Atom};
    let crossed = (f.upper.affine.checked_sub(&f.lower.affine))
        .and_then(|d| d.checked_add(&Affine::constant(2)))
        .map(|d| vec![vec![Atom::Le(d)]]);
    let mut assumed = Some(vec![Vec::new()]);
    for a in &p.assumptions {
        assumed = assumed.and_then(|x| domain::and(&x, &domain::dnf(a, true)?));
    }
    let (Some(crossed), Some(assumed)) = (crossed, assumed) else {
        return true;
    };
    let Some(mut prover) = crate::symbolic::prove::Prover::new(p) else {
        return true;
    };
    !matches!(
        prover.first_possible(&[&assumed, &crossed], &mut || Ok::<(), ()>(())),
        Ok(None)
    )
}

/// The loop over threads around `f` (each thread's copy-in, then its
/// block of `f`'s iterations on its copies), then the finalization; the
/// counter of the loop over threads.
fn fill(
    f: &mut For,
    privates: &[Private],
    threads: ParamId,
    p: &mut Program,
    names: &mut Names,
    out: &mut Vec<Node>,
) -> CounterId {
    let t = crate::codegen::push_counter(p, names.fresh("t"));
    let te = e(ExprKind::Counter(t));
    let all = e(ExprKind::Param(threads));
    let mut head = Vec::new();
    for v in privates {
        head.extend(over_cells(p, names, &v.cells, |c, names| {
            let at = with_thread(&te, c);
            vec![
                copy(
                    names.fresh("copy_in"),
                    access(v.copy, at.clone()),
                    read(v.x, c.to_vec()),
                ),
                copy(names.fresh("unwritten"), access(v.written, at), int(0)),
            ]
        }));
    }
    let body = std::mem::take(&mut f.body);
    let body = rewrite_body(body, privates, &te, names);
    f.body = vec![Node::If(If {
        branches: vec![(
            Condition {
                id: CondId(0),
                name: names.fresh("mine"),
                generated: false,
                cond: block_of(f, &te, &all),
                span: Span::NONE,
            },
            body,
        )],
        otherwise: None,
        span: Span::NONE,
    })];
    f.parallel = false;
    head.push(Node::For(f.clone()));
    let last_thread = Affine::var(Var::Param(threads))
        .checked_sub(&Affine::constant(1))
        .expect("a small bound");
    let upper = Bound {
        expr: crate::model::affine_expr(&last_thread, Span::NONE),
        affine: last_thread,
    };
    out.push(Node::For(For {
        counter: t,
        lower: constant_bound(0),
        upper: upper.clone(),
        step: 1,
        parallel: true,
        body: head,
        span: Span::NONE,
    }));
    for v in privates {
        let t2 = crate::codegen::push_counter(p, names.fresh("t"));
        let at = e(ExprKind::Counter(t2));
        let l = || read(v.last, Vec::new());
        out.extend(over_cells(p, names, &v.cells, |c, names| {
            let step = bin(
                BinOp::Mul,
                read(v.written, with_thread(&at, c)),
                bin(BinOp::Sub, at.clone(), l()),
            );
            let update = copy(
                names.fresh("last"),
                access(v.last, Vec::new()),
                bin(BinOp::Add, l(), step),
            );
            vec![
                copy(names.fresh("none"), access(v.last, Vec::new()), int(0)),
                Node::For(For {
                    counter: t2,
                    lower: constant_bound(0),
                    upper: upper.clone(),
                    step: 1,
                    parallel: false,
                    body: vec![update],
                    span: Span::NONE,
                }),
                copy(
                    names.fresh("copy_out"),
                    access(v.x, c.to_vec()),
                    read(v.copy, with_thread(&l(), c)),
                ),
            ]
        }));
    }
    t
}

/// Whether iteration `i` of `f` is in thread `t`'s block of `all`:
/// `t*n <= all*(i - lo) < (t + 1)*n`, `n = hi - lo + 1`. The blocks cut
/// `lo .. hi` into `all` runs of consecutive values in increasing order
/// of `t` (of at most one more iteration than the others where the step
/// is 1), with no division.
fn block_of(f: &For, t: &Expr, all: &Expr) -> Cond {
    let affine =
        |a: Option<Affine>| crate::model::affine_expr(&a.expect("a small bound"), Span::NONE);
    let i = Affine::var(Var::Counter(f.counter));
    let n = affine(
        (f.upper.affine.checked_sub(&f.lower.affine))
            .and_then(|d| d.checked_add(&Affine::constant(1))),
    );
    let from = bin(
        BinOp::Mul,
        all.clone(),
        affine(i.checked_sub(&f.lower.affine)),
    );
    let first = bin(BinOp::Mul, t.clone(), n.clone());
    let next = bin(BinOp::Mul, bin(BinOp::Add, t.clone(), int(1)), n);
    Cond::And(
        Box::new(Cond::Cmp(CmpOp::Le, first, from.clone())),
        Box::new(Cond::Cmp(CmpOp::Lt, from, next)),
    )
}

/// The loop's body on thread `t`'s copies: `X[e]` is `X_p[t, e]`, and a
/// write of `X[e]` is preceded by `@copy X_w[t, e] = 1`.
fn rewrite_body(nodes: Vec<Node>, privates: &[Private], t: &Expr, names: &mut Names) -> Vec<Node> {
    let on_copy = |a: &mut Access| on_copy(a, privates, t);
    let mut out = Vec::new();
    for n in nodes {
        match n {
            Node::Stmt(mut s) => {
                let mut flag = None;
                match &mut s.kind {
                    StmtKind::Assign { target, value, .. } => {
                        for x in &mut target.subscripts {
                            walk_expr(&mut x.expr, &on_copy);
                            *x = Subscript::new(x.expr.clone());
                        }
                        if let Some(v) = privates.iter().find(|v| v.x == target.array) {
                            let subs: Vec<Expr> =
                                target.subscripts.iter().map(|x| x.expr.clone()).collect();
                            let label = names.fresh(&format!("{}_written", s.label));
                            let at = access(v.written, with_thread(t, &subs));
                            flag = Some(copy(label, at, int(1)));
                            on_copy(target);
                        }
                        walk_expr(value, &on_copy);
                    }
                    StmtKind::Call { args, .. } => {
                        for x in args {
                            walk_expr(x, &on_copy);
                        }
                    }
                }
                out.extend(flag);
                out.push(Node::Stmt(s));
            }
            Node::For(mut f) => {
                f.body = rewrite_body(f.body, privates, t, names);
                out.push(Node::For(f));
            }
            Node::While(mut w) => {
                walk_cond(&mut w.cond.cond, &on_copy);
                w.body = rewrite_body(w.body, privates, t, names);
                out.push(Node::While(w));
            }
            Node::If(mut b) => {
                for (c, body) in &mut b.branches {
                    walk_cond(&mut c.cond, &on_copy);
                    *body = rewrite_body(std::mem::take(body), privates, t, names);
                }
                b.otherwise = b.otherwise.map(|o| rewrite_body(o, privates, t, names));
                out.push(Node::If(b));
            }
        }
    }
    out
}

/// `a` on thread `t`'s copy when it is an access of a private array:
/// `X[e]` becomes `X_p[t, e]`.
fn on_copy(a: &mut Access, privates: &[Private], t: &Expr) {
    if let Some(v) = privates.iter().find(|v| v.x == a.array) {
        a.array = v.copy;
        a.subscripts.insert(0, Subscript::new(t.clone()));
    }
}

/// `f` applied to every access of `e`, inner ones (in subscripts) first.
/// Not `codegen::rewrite_expr`: that one appends subscripts after the
/// original ones, and the thread is the first.
fn walk_expr(e: &mut Expr, f: &dyn Fn(&mut Access)) {
    match &mut e.kind {
        ExprKind::Access(a) => {
            for s in &mut a.subscripts {
                walk_expr(&mut s.expr, f);
                *s = Subscript::new(s.expr.clone());
            }
            f(a);
        }
        ExprKind::Call(_, args) => args.iter_mut().for_each(|x| walk_expr(x, f)),
        ExprKind::Neg(x) => walk_expr(x, f),
        ExprKind::Binary(_, l, r) => {
            walk_expr(l, f);
            walk_expr(r, f);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
    }
}

/// [`walk_expr`] on every expression of `c`.
fn walk_cond(c: &mut Cond, f: &dyn Fn(&mut Access)) {
    match c {
        Cond::Cmp(_, l, r) => {
            walk_expr(l, f);
            walk_expr(r, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            walk_cond(a, f);
            walk_cond(b, f);
        }
        Cond::Not(a) => walk_cond(a, f),
        Cond::Unknown => {}
    }
}

/// Parameter values by name: one size.
type Params = Vec<(String, i64)>;

/// What [`checked`] did: the program (if a loop gained), what decided it,
/// and the sizes it was validated at.
pub struct Checked {
    pub emitted: Option<Emitted>,
    /// The loops privatized, with their private arrays.
    pub chosen: Vec<Chosen>,
    pub basis: Basis,
    pub validated: Vec<Vec<(String, i64)>>,
    /// Sizes where the privatized program's run hit an interpreter limit,
    /// with the limit: not compared there.
    pub limits: Vec<String>,
    /// Loops that reductions make parallel, for the C form
    /// ([`choose_reductions`]); the interpreter does not run them, since
    /// it reads values as uninterpreted terms, which another order of
    /// updates changes.
    pub reductions: Vec<Chosen>,
    /// Why reductions on real values were left sequential.
    pub reduction_notes: Vec<String>,
    /// Loops parallel as written inside sequential loops, for the C form
    /// ([`choose_inner`]; exact σ only). Nothing to copy: the interpreter
    /// has nothing to compare beyond the shuffled `doall` it would run.
    pub inner: Vec<Chosen>,
    /// Loops parallel after privatization at every sample but not proved
    /// for every parameter value: not emitted unless `allow_unproved`
    /// (no loop is marked parallel on a verdict the analysis cannot back).
    pub unproved: Vec<Chosen>,
}

/// What the privatization was decided from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Exact σ: for every parameter value.
    Exact,
    /// Bounded σ at these sizes (outside static control), and why exact σ
    /// could not decide.
    Sampled {
        sizes: Vec<Vec<(String, i64)>>,
        why: String,
    },
    /// Chosen by bounded σ at these sizes, and every chosen loop proved
    /// for every parameter value from the possible sources
    /// ([`super::possible`]).
    Possible { sizes: Vec<Vec<(String, i64)>> },
}

/// Privatization for every parameter value: from exact σ where the
/// program is static control ([`super::exact`]); elsewhere analysed at
/// `codegen`'s sample vectors (each parameter moved alone, small values)
/// and emitted for the loops that gain at all of them. Either way the
/// program is then run against the original with `doall` shuffled at
/// small validation vectors; a disagreement is an error naming the size.
pub fn checked(program: &Program, o: &crate::codegen::Options) -> Result<Checked, Refusal> {
    use crate::codegen::vectors;
    let named = |v: &[i64]| -> Vec<(String, i64)> {
        program
            .params
            .iter()
            .zip(v)
            .map(|(q, &x)| (q.name.clone(), x))
            .collect()
    };
    // Samples and validation around small sizes, whatever the given ones.
    let o = &crate::codegen::Options {
        params: named(&vectors::base(program, o)?),
        ..o.clone()
    };
    let mut reductions = (Vec::new(), Vec::new());
    let mut inner = Vec::new();
    let (chosen, basis) = match super::exact::analyze(program) {
        Ok(loops) => {
            let (all, notes) = choose_reductions(program, &loops, o.reassociate);
            // Maxima kept with their indices are combined in thread order,
            // the same values at any thread count: emitted in the `.loop`
            // form too, and checked like per-thread copies.
            let (keyed, by_openmp): (Vec<Chosen>, Vec<Chosen>) = (all.into_iter())
                .partition(|l| super::argmax::only(&l.reductions, !l.private.is_empty()));
            reductions = (by_openmp, notes);
            let mut chosen = choose_exact(&loops);
            chosen.extend(keyed);
            let taken: Vec<Chosen> = chosen.iter().chain(&reductions.0).cloned().collect();
            inner = choose_inner(&loops, &taken);
            (chosen, Basis::Exact)
        }
        Err(why) => {
            let mut analyses = Vec::new();
            let mut sizes = Vec::new();
            for v in vectors::samples(program, o)? {
                let config = crate::dataflow::Config {
                    params: named(&v),
                    max_trips: o.max_trips,
                    max_instances: o.max_instances,
                    ..Default::default()
                };
                // A size the analysis cannot take (a subscript out of range
                // there) says nothing about the others.
                if let Ok(exp) = crate::expansion::expand(program, &config) {
                    analyses.push(super::analyze(program, &exp));
                    sizes.push(named(&v));
                }
            }
            // Each chosen loop (the outermost ones parallel as written
            // too), proved for every parameter value where the possible
            // sources say so; all of them, or the samples decide.
            let all = choose_sampled(&analyses, true);
            let proved = !all.is_empty()
                && (all.iter()).all(|c| {
                    c.reductions.is_empty()
                        && super::possible::proves(program, c.counter, &c.private).is_ok()
                });
            match proved {
                true => (all, Basis::Possible { sizes }),
                false => (choose(&analyses), Basis::Sampled { sizes, why }),
            }
        }
    };
    readback::poll("the privatization of the loops")?;
    let (reductions, reduction_notes) = reductions;
    let (chosen, unproved) = match basis {
        Basis::Sampled { .. } if !o.allow_unproved => (Vec::new(), chosen),
        _ => (chosen, Vec::new()),
    };
    let Some(emitted) = emit(program, &chosen)? else {
        return Ok(Checked {
            emitted: None,
            chosen,
            basis,
            validated: Vec::new(),
            limits: Vec::new(),
            reductions,
            reduction_notes,
            unproved,
            inner,
        });
    };
    let b = &emitted.program;
    let raw: Vec<Vec<i64>> = match &basis {
        Basis::Exact => Vec::new(),
        Basis::Sampled { sizes, .. } | Basis::Possible { sizes } => sizes
            .iter()
            .map(|v| v.iter().map(|&(_, x)| x).collect())
            .collect(),
    };
    let mut validated = Vec::new();
    let mut limits = Vec::new();
    let mut sizes = vectors::validation(program, o, &raw)?;
    if basis == Basis::Exact && !vectors::corners(&sizes).is_empty() {
        sizes = vectors::corners(&sizes);
    }
    // At each size, at every thread count of CHECKED_THREADS where a loop
    // has per-thread copies (its blocks then differ), else once.
    let counts: &[i64] = match emitted.threads.param {
        Some(_) => &CHECKED_THREADS,
        None => &CHECKED_THREADS[..1],
    };
    let runs: Vec<(Params, i64)> = sizes
        .into_iter()
        .flat_map(|v| counts.iter().map(move |&n| (v.clone(), n)))
        .collect();
    use crate::equiv::Compared;
    use rayon::prelude::*;
    // The runs are compared side by side and read in order, as one after
    // another would be: the first difference is the one reported.
    let watch = arrayflow_model::cancel::current();
    let compared: Vec<(Params, i64, Compared)> = runs
        .into_par_iter()
        .map(|(v, n)| {
            let _watch = arrayflow_model::cancel::enter(&watch);
            let eo = emitted.threads.equiv_options(&v, n, 3);
            let c = Compared::of(crate::equiv::equiv(program, b, &eo));
            (v, n, c)
        })
        .collect();
    for (v, n, compared) in compared {
        let last = n == *counts.last().expect("a count");
        // The size, with the thread count where it matters.
        let mut at = v.clone();
        at.extend((emitted.threads.param.clone()).map(|name| (name, n)));
        match compared {
            // A size counts as validated once, after its last thread count.
            Compared::Agree if last => validated.push(v),
            Compared::Agree => {}
            // A run limit (steps, cells) in the privatized program's run:
            // not compared there, rather than different.
            Compared::NotMade(Some(why)) => limits.push(format!("{at:?}: {why}")),
            Compared::Differ(m) => {
                let why = match basis {
                    Basis::Exact => "internal error: exact σ said the loops are parallel",
                    Basis::Possible { .. } => {
                        "internal error: the possible sources said the loops are parallel"
                    }
                    Basis::Sampled { .. } => "loops parallel at the samples are not at every size",
                };
                let failure = m.failure.map(|f| format!(": {f}")).unwrap_or_default();
                return Err(Refusal::Other(format!(
                    "the privatized program differs from the original at {at:?}: {}{failure} ({why})",
                    m.what
                )));
            }
            Compared::Broken(message) => {
                return Err(Refusal::Other(format!(
                    "internal error: the privatized program: {message}"
                )))
            }
            // The original itself fails at this size: no comparison.
            Compared::NotMade(None) => {}
        }
    }
    Ok(Checked {
        emitted: Some(emitted),
        chosen,
        basis,
        validated,
        limits,
        reductions,
        reduction_notes,
        unproved,
        inner,
    })
}
