//! Expanded programs valid for every parameter value: closed-form
//! labels inferred from the bounded expansion at several parameter vectors
//! (`infer`), then one `.loop` program with renamed arrays (one per label
//! group, footnote 4), versions `S.1`, `S.2` under affine `if`s, copy-in of
//! initial values, copy-out of final contents and `doall` loops.
//! docs/expansion.md §8 has the method and the results.

pub mod check;
mod exact;
pub use crate::fit;
mod boxes;
pub mod infer;
pub use crate::model::lift;
mod place;
pub mod prove;
pub mod read_name;
mod records;
pub mod report;
pub mod size;
pub mod vectors;

use crate::dataflow::Config;
use crate::expansion;
use crate::model::*;
use crate::readback;
use infer::{ArrayForm, Outcome, Sample, Sites, Test, Tree};
use std::collections::{HashMap, HashSet};

/// Read label trees by (site, access).
pub(crate) type Trees = HashMap<(Site, usize), Tree>;

/// Sizes and budgets of the analysis.
#[derive(Clone, Debug)]
pub struct Options {
    /// Base parameter values (overrides of the defaults).
    pub params: Vec<(String, i64)>,
    pub max_trips: u32,
    pub max_instances: u64,
    /// Emit arrays whose labels are checked at the samples and validated but
    /// not proved static (`--allow-unproved`); otherwise they fall back.
    pub allow_unproved: bool,
    /// Expand only these arrays, keeping the others as they are (the
    /// pairing with contraction, `storage::pair`); None: every array.
    pub only: Option<Vec<ArrayId>>,
    /// Arrays whose final contents are not results (`--temporaries`):
    /// no copy-out, so no final read ties their writes together, and
    /// validation does not compare them.
    pub scratch: Vec<ArrayId>,
    /// Labels from exact σ where every read of an array has it
    /// (`exact`); false infers every array's labels at the samples (to
    /// compare the two ways, in tests and benchmarks).
    pub exact: bool,
    /// `privatize --emit code` on C: reductions on real values too
    /// (`--reassociate`): OpenMP combines partial results in another
    /// order, which rounds differently.
    pub reassociate: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            params: Vec::new(),
            max_trips: 4,
            max_instances: 5_000_000,
            allow_unproved: false,
            only: None,
            scratch: Vec::new(),
            exact: true,
            reassociate: false,
        }
    }
}

/// One declaration the emitted program adds.
#[derive(Clone, Debug)]
pub struct Decl {
    pub name: String,
    /// Cells as a formula in the parameters.
    pub formula: String,
    /// Cells at each sample.
    pub cells: Vec<i64>,
    /// The formula as a polynomial (None: an extent uses a counter, or
    /// overflow).
    pub poly: Option<size::Poly>,
}

/// An expanded array's declarations, its rectangular size per sample and
/// as a formula.
type Declared = (Vec<Decl>, Vec<i64>, Option<size::Poly>);

/// What happened to one array.
#[derive(Clone, Debug)]
pub struct ArrayReport {
    pub name: String,
    /// "maximal", "static, not maximal: k of m classes" or "not expanded: why".
    pub verdict: String,
    pub maximal: bool,
    pub expanded: bool,
    pub decls: Vec<Decl>,
    /// Rectangular form: cells × groups × the largest κ box, per sample.
    pub rectangular: Vec<i64>,
    /// The rectangular size as a polynomial, when the groups' κ boxes have
    /// one formula (else the largest box differs between parameter values).
    pub rectangular_poly: Option<size::Poly>,
    /// Bounded class count per sample.
    pub classes: Vec<u64>,
    /// Label groups (renamed arrays).
    pub groups: usize,
    /// Σ over cells and samples of the distinct labels of the cell's
    /// classes, and of its classes (the k of m of the verdict).
    pub labels: u64,
    pub label_classes: u64,
    /// The symbolic proof that the labels are static (expanded arrays).
    pub proof: Option<prove::Proof>,
}

/// The emitted program and what was decided.
#[derive(Debug)]
pub struct Emitted {
    pub program: Program,
    pub text: String,
    /// The parameter vectors the closed forms were checked at.
    pub samples: Vec<Vec<i64>>,
    /// Unsampled vectors where `equiv` (original vs emitted) agreed.
    pub validated: Vec<Vec<i64>>,
    /// "validation stopped at N = …: `<limit>`; not validated there": vectors
    /// where the emitted program's checking run hit a limit.
    pub limits: Vec<String>,
    pub arrays: Vec<ArrayReport>,
    pub doall: Vec<String>,
    /// Why no loop is marked, when the marks failed validation.
    pub doall_note: Option<String>,
    /// The program the labels were inferred on (the input plus one virtual
    /// read of every cell at the end, `out_A`), and the labels of each
    /// expanded array over it.
    pub analysed: Program,
    pub labels: Vec<prove::Labels>,
    /// Constant loop bounds made parameters to sample at small sizes
    /// (`lift`): name and the constant, its default. `program` has them.
    pub lifted: Vec<(String, i64)>,
    /// Constraints on the parameters the exact σ assumed (`n >= -1`): the
    /// runs that complete, every access in its declared range.
    pub in_range: Vec<String>,
}

/// Computes the closed forms, emits the expanded program and validates it
/// against the original at unsampled parameter vectors; an array whose
/// closed form disagrees there, or (unless `o.allow_unproved`) whose labels
/// `prove` does not prove static, falls back to its next candidate, finally
/// to no expansion.
pub fn emit(program: &Program, o: &Options) -> Result<Emitted, String> {
    try_emit(program, o).map_err(String::from)
}

/// [`emit`], telling a refusal by the memory budget (E0304) from the
/// other reasons: the form the command line reports.
pub fn try_emit(program: &Program, o: &Options) -> Result<Emitted, readback::Refusal> {
    if let Some(a) = program.first_ext_access() {
        let name = a.ext.as_ref().map_or("", |x| x.name.as_str());
        return Err(format!(
            "code generation validates with the interpreter, which cannot run an access of kind `@{name}`"
        )
        .into());
    }
    // Samples and validation vectors around small sizes (`vectors::base`).
    let base = vectors::base(program, o)?;
    if let Some(why) = vectors::too_large(program, &base, o) {
        // Constant loop bounds as parameters, then sampled small (the
        // lifted program has none left: no second lift).
        let Some(l) = lift::constant_bounds(program) else {
            return Err(why.into());
        };
        let mut e = try_emit(&l.program, o)?;
        e.lifted = l.added;
        return Ok(e);
    }
    let o = &Options {
        params: (program.params.iter())
            .zip(base)
            .map(|(q, v)| (q.name.clone(), v))
            .collect(),
        ..o.clone()
    };
    let mut names = Names::new(program);
    let results: Vec<ArrayId> = (written_arrays(program).into_iter())
        .filter(|a| !o.scratch.contains(a))
        .collect();
    // Small arrays' copy-out reads first: exact σ is computed over the
    // program with those alone (a prefix of `plus`, so its ids are
    // `plus`'s), since a read of every cell of a big array would cost its
    // cells at every sample; big arrays replay their writes instead.
    let at_base = program.param_values(&o.params)?;
    let (small, big_results): (Vec<ArrayId>, Vec<ArrayId>) =
        (results.iter()).partition(|&&a| declared_cells(program, a, &at_base) <= FRAME_CELLS);
    let (plus_small, _) = augment_arrays(program, &mut names.clone(), &small)?;
    let results: Vec<ArrayId> = small.iter().chain(&big_results).copied().collect();
    let (plus, outs) = augment_arrays(program, &mut names, &results)?;
    // The copy-out reads of a big array cost only for the cells the program
    // writes (`facts::Frame`); small arrays keep a read of every cell, on
    // which the copy-out's labels are fitted.
    let values = plus.param_values(&o.params)?;
    let stmts = plus.stmts();
    let frame = crate::facts::Frame {
        entry: Vec::new(),
        exit: (outs.iter())
            .filter_map(|&s| Some((stmts[s.index()].reads().first()?.array, s)))
            .filter(|&(a, _)| declared_cells(&plus, a, &values) > FRAME_CELLS)
            .collect(),
    };
    // σ for every parameter value: arrays all of whose reads have exact
    // quasts take their labels from them (`exact`), computed once, beside
    // the samples.
    let watch = arrayflow_model::cancel::current();
    let (samples, sym) = rayon::join(
        || samples(&plus, &frame, o),
        || {
            let _watch = arrayflow_model::cancel::enter(&watch);
            o.exact.then(|| crate::symbolic::analyze(&plus_small))
        },
    );
    let mut samples = samples?;
    // The samples' analyses poll the budget; what they leave is held
    // while the program is built and read back.
    readback::poll("the expansions at the sample sizes")?;
    let sites = Sites::new(&plus);
    // Only arrays whose labels are inferred need the pool of conditions
    // (quadratic in the subscripts of an array): built on first use.
    let pool = Pool::new(&plus);
    let out_ix: Vec<usize> = outs.iter().map(|s| s.index()).collect();
    // A vector where the first forms disagree with the original (typically
    // one where loops are empty) becomes a sample and inference runs again
    // (up to MAX_RESAMPLES times) before the fallback forms are tried.
    // The vectors stay those first unsampled: a vector sampled after a
    // disagreement is still validated (the report lists it).
    let sampled: Vec<Vec<i64>> = samples.iter().map(|s| s.values.clone()).collect();
    let vectors = vectors::validation(program, o, &sampled)?;
    let scratch = o
        .scratch
        .iter()
        .map(|&a| program.array_decl(a).name.clone());
    let mut originals =
        check::Originals::new(program, VALIDATION_SEEDS).with_scratch(scratch.collect());
    let big: Vec<ArrayId> = frame.exit.iter().map(|&(a, _)| a).collect();
    let base = Base {
        plus: &plus,
        outs: &outs,
        big: &big,
        names: &names,
    };
    let exact = Exact {
        sym: sym.as_ref(),
        outs: &outs,
        base: o.params.iter().map(|x| x.1).collect(),
    };
    let mut resampled = 0;
    let mut cands = loop {
        let cands = candidates(&plus, &sites, &samples, &pool, &out_ix, &exact, program, o);
        let ctx = Ctx {
            base: &base,
            samples: &samples,
            cands: &cands,
        };
        let mut e = ctx.build(&first_choice(&cands), true)?;
        // Labels all from exact σ are proved by construction: validation is
        // a test of the emitter, at small corners only.
        let small = vectors::corners(&vectors);
        let exact_only = cands.iter().all(|c| c.exact) && !small.is_empty();
        let checks = if exact_only { &small } else { &vectors };
        if let Ok(v) = validate(&mut originals, &e.program, checks) {
            // Unproved arrays are settled one by one below.
            if o.allow_unproved || e.arrays.iter().all(|r| report::unproved(r).is_none()) {
                e.validated = v.compared;
                e.limits = v.limits;
                e.in_range = in_range(program, sym.as_ref());
                return Ok(e);
            }
            break cands;
        }
        let failing = vectors
            .iter()
            .find(|v| validate(&mut originals, &e.program, std::slice::from_ref(*v)).is_err());
        let extra = failing.filter(|_| resampled < MAX_RESAMPLES).and_then(|v| {
            let values: Vec<i64> = v.iter().map(|x| x.1).collect();
            let exp = expansion::expand_framed(
                &plus,
                &config(&plus, &values, o),
                &crate::kinds::Kinds::core(),
                &frame,
            )
            .ok()?;
            Some(Sample { values, exp })
        });
        match extra {
            Some(s) => {
                samples.push(s);
                resampled += 1;
            }
            None => break cands,
        }
    };
    // Array by array, without doall marks (they are checked last):
    // the first candidate (most expanded first) that is proved (unless
    // unproved forms are allowed) and agrees with the original, given the
    // arrays already settled.
    for c in &mut cands {
        c.fit(&plus, &sites, &samples, &pool, false);
    }
    let ctx = Ctx {
        base: &base,
        samples: &samples,
        cands: &cands,
    };
    let checked = report::checked(
        program,
        &samples.iter().map(|s| s.values.clone()).collect::<Vec<_>>(),
    );
    let mut choice: Vec<Option<usize>> = vec![None; cands.len()];
    let mut notes: Vec<Option<Refusal>> = vec![None; cands.len()];
    for k in 0..cands.len() {
        for (c, (form, trees)) in cands[k].forms.iter().enumerate() {
            if !o.allow_unproved && !cands[k].is_exact(c) {
                let proof = prove::prove(&plus, &prove::Labels::new(form, trees));
                if let Some(why) = report::not_proved(&proof) {
                    notes[k].get_or_insert(Refusal::Unproved(format!(
                        "labels {checked} but not proved: {why}; pass --allow-unproved to emit"
                    )));
                    continue;
                }
            }
            choice[k] = Some(c);
            let trial = ctx.build(&choice, false)?;
            match validate(&mut originals, &trial.program, &vectors) {
                Ok(_) => break,
                Err(why) => {
                    notes[k].get_or_insert(Refusal::Disagrees(why));
                    choice[k] = None;
                }
            }
        }
    }
    let mut e = ctx.build(&choice, true)?;
    let v = match validate(&mut originals, &e.program, &vectors) {
        Ok(v) => v,
        Err(why) => {
            e = ctx.build(&choice, false)?;
            e.doall_note = Some(format!(
                "no loop marked doall: with the marks the program {why}"
            ));
            validate(&mut originals, &e.program, &vectors).map_err(|why| {
                // Doall loops run shuffled: an original whose own `doall`
                // carries a dependence disagrees with itself.
                match validate(&mut originals, program, &vectors) {
                    Err(own) => format!(
                        "the original program is not deterministic: {} (does a `doall` \
                         loop carry a dependence?)",
                        own.replacen(
                            "disagrees with the original",
                            "two runs with its `doall` loops shuffled disagree",
                            1
                        )
                    ),
                    Ok(_) => format!("internal error: the emitted program {why}"),
                }
            })?
        }
    };
    for (r, note) in e.arrays.iter_mut().zip(notes) {
        r.verdict = match (note, r.expanded) {
            (None, _) => continue,
            (Some(Refusal::Disagrees(why)), true) => {
                format!("{} (a more expanded closed form {why})", r.verdict)
            }
            (Some(Refusal::Disagrees(why)), false) => {
                format!("not expanded: every closed form {why}")
            }
            (Some(Refusal::Unproved(why)), true) => {
                format!("{} (a more expanded closed form: {why} it)", r.verdict)
            }
            (Some(Refusal::Unproved(why)), false) => format!("not expanded: {why} them"),
        };
    }
    e.validated = v.compared;
    e.limits = v.limits;
    e.in_range = in_range(program, sym.as_ref());
    Ok(e)
}

fn in_range(p: &Program, sym: Option<&crate::symbolic::Symbolic>) -> Vec<String> {
    sym.map_or(Vec::new(), |s| crate::symbolic::render::in_range(p, s))
}

/// Why a more expanded candidate of an array was not emitted.
#[derive(Clone)]
enum Refusal {
    /// "disagrees with the original at N = 6: ..." (validation).
    Disagrees(String),
    /// "labels checked at (N=4), … but not proved: why; pass
    /// --allow-unproved to emit" (the proof).
    Unproved(String),
}

/// How often a disagreeing validation vector is added to the samples.
const MAX_RESAMPLES: usize = 3;

/// Arrays with more cells than this are copied out through the frame (a
/// read of each cell written) rather than a read of every cell: reading
/// every cell costs at each sample as much as the cells, which a C array
/// with constant extents (PolyBench's `double A[1000][1200]`) keeps large
/// however small the samples' parameters are.
const FRAME_CELLS: u64 = 1 << 16;

/// The first candidate of every array that has one.
fn first_choice(cands: &[Candidates]) -> Vec<Option<usize>> {
    cands
        .iter()
        .map(|c| (!c.forms.is_empty()).then_some(0))
        .collect()
}

/// Exact σ of the analysed program (with its copy-out reads `outs`).
struct Exact<'a> {
    /// None: exact labels not asked for (`Options::exact`).
    sym: Option<&'a crate::symbolic::Symbolic>,
    outs: &'a [StmtId],
    /// The base parameter values (which of two boxes is smaller).
    base: Vec<i64>,
}

/// The best closed form of every written array, its read labels fitted:
/// from exact σ where every read of the array has it, else inferred at the
/// samples.
#[allow(clippy::too_many_arguments)]
fn candidates(
    plus: &Program,
    sites: &Sites,
    samples: &[Sample],
    pool: &Pool,
    out_ix: &[usize],
    exact: &Exact,
    program: &Program,
    o: &Options,
) -> Vec<Candidates> {
    let mut cands: Vec<Candidates> = Vec::new();
    let index = (exact.sym).map(|sym| exact::Index::new(plus, sym, exact.outs));
    for a in written_arrays(program) {
        // An array the pairing leaves to contraction gets no form.
        let asked = o.only.as_ref().is_none_or(|only| only.contains(&a));
        let mut c = Candidates {
            array: a,
            forms: Vec::new(),
            pending: Vec::new(),
            alts: Vec::new(),
            recs: Vec::new(),
            why: "left to the contraction under the schedule".into(),
            exact: false,
            replay: false,
        };
        if asked {
            let not_exact = match index.as_ref().map(|ix| {
                exact::form(plus, sites, ix, a, &exact.base).and_then(|f| {
                    let writes = ix.writing(a);
                    obstacle(plus, &writes, &f.form, &f.trees).map_or(Ok(f), Err)
                })
            }) {
                Some(Ok(f)) => {
                    c.forms.push((f.form, f.trees));
                    c.exact = true;
                    c.replay = f.replay;
                    cands.push(c);
                    continue;
                }
                Some(Err(why)) => Some(why),
                None => None,
            };
            c.recs = infer::array_records(plus, sites, samples, a, out_ix);
            c.why = "no write runs at the samples".into();
            if let Some((best, alts)) =
                infer::array_form(plus, sites, samples, a, pool.get(), &c.recs)
            {
                c.pending.push(best);
                c.alts = alts;
            }
            // The other forms are built and fitted only if the first fails
            // validation.
            c.fit(plus, sites, samples, pool, true);
            // Why the labels are not from exact σ comes first.
            if let Some(why) = not_exact {
                c.why = format!("{why}; {}", c.why);
            }
        }
        cands.push(c);
    }
    cands
}

/// The closed forms of one array that passed inference, best first, or why
/// there is none.
struct Candidates {
    array: ArrayId,
    forms: Vec<(ArrayForm, Trees)>,
    /// Forms not yet fitted, best first, then the splits of forms not yet
    /// built.
    pending: Vec<ArrayForm>,
    alts: Vec<HashMap<usize, Vec<Affine>>>,
    /// The array's records at the samples.
    recs: Vec<records::Recs>,
    why: String,
    /// The first form is single assignment from exact σ (`exact`): proved
    /// by construction, nothing sampled.
    exact: bool,
    /// That form's copy-out replays the writes (`exact::Exact::replay`).
    replay: bool,
}

impl Candidates {
    /// Whether form `k` takes its labels from exact σ.
    fn is_exact(&self, k: usize) -> bool {
        self.exact && k == 0
    }

    /// Fits the read labels of the pending forms in order, keeping those
    /// that can be emitted; with `first`, stops at the first kept.
    fn fit(&mut self, plus: &Program, sites: &Sites, samples: &[Sample], pool: &Pool, first: bool) {
        loop {
            if self.pending.is_empty() {
                if self.alts.is_empty() {
                    return;
                }
                let array = self.array;
                self.pending = std::mem::take(&mut self.alts)
                    .into_iter()
                    .map(|s| infer::form_with(plus, sites, samples, array, s, &self.recs))
                    .collect();
            }
            let form = self.pending.remove(0);
            let trees = infer::read_trees(plus, sites, samples, &form, pool.get(), &self.recs).map(
                |mut t| {
                    // Labels fitted at the samples, made to exist at every size.
                    prove::guard_boxes(plus, &form, &mut t);
                    t
                },
            );
            match trees {
                Err(why) => self.why = why,
                Ok(t) => match obstacle(plus, &writing(plus, form.array), &form, &t) {
                    Some(why) => self.why = why,
                    None => {
                        self.forms.push((form, t));
                        if first {
                            return;
                        }
                    }
                },
            }
        }
    }
}

/// What every emission of one program shares.
struct Base<'a> {
    plus: &'a Program,
    outs: &'a [StmtId],
    /// Arrays too big to copy out cell by cell (the frame's): their
    /// copy-out runs over the cells of each group read.
    big: &'a [ArrayId],
    names: &'a Names,
}

/// One emission's inputs: the shared ones, the samples and the candidates.
struct Ctx<'a> {
    base: &'a Base<'a>,
    samples: &'a [Sample],
    cands: &'a [Candidates],
}

impl Ctx<'_> {
    /// The program with candidate `choice[k]` for array k (None: not
    /// expanded); `parallel` marks the loops carrying no dependence.
    fn build(
        &self,
        choice: &[Option<usize>],
        parallel: bool,
    ) -> Result<Emitted, readback::Refusal> {
        let (plus, samples) = (self.base.plus, self.samples);
        let mut g = Gen {
            src: plus,
            q: plus.clone(),
            names: self.base.names.clone(),
            arrays: HashMap::new(),
            trees: HashMap::new(),
            outs: self.base.outs.iter().copied().collect(),
            big: self.base.big.iter().copied().collect(),
            copy_group: None,
            replay: HashSet::new(),
            nstmt: 0,
        };
        let mut reports = Vec::new();
        let mut labels = Vec::new();
        let mut copy_in: Vec<Node> = Vec::new();
        for (c, pick) in self.cands.iter().zip(choice) {
            let a = c.array;
            let (outcome, trees) = match pick.and_then(|k| c.forms.get(k)) {
                Some((form, t)) => (Outcome::Expanded(Box::new(form.clone())), t.clone()),
                None if c.forms.is_empty() => (Outcome::NotExpanded(c.why.clone()), Trees::new()),
                None => (
                    Outcome::NotExpanded("no closed form validated".into()),
                    Trees::new(),
                ),
            };
            let decl = plus.array_decl(a).clone();
            let classes: Vec<u64> = samples
                .iter()
                .map(|s| s.exp.arrays[a.index()].classes)
                .collect();
            let mut rep = ArrayReport {
                name: decl.name.clone(),
                verdict: String::new(),
                maximal: false,
                expanded: false,
                decls: Vec::new(),
                rectangular: Vec::new(),
                rectangular_poly: None,
                classes,
                groups: 0,
                labels: 0,
                label_classes: 0,
                proof: None,
            };
            match outcome {
                Outcome::NotExpanded(why) => rep.verdict = format!("not expanded: {why}"),
                Outcome::Expanded(form) => match g.declare(&form, samples, &mut copy_in) {
                    Ok((decls, rect, rect_poly)) => {
                        rep.expanded = true;
                        rep.maximal = form.labels == form.classes;
                        rep.verdict = if rep.maximal && form.shared > 0 {
                            format!(
                                "maximal, but for {} live-out-only classes (Σ over the samples) \
                                 sharing the cell of a class whose last read comes before them",
                                form.shared
                            )
                        } else if rep.maximal {
                            "maximal".into()
                        } else {
                            format!(
                                "static, not maximal: {} of {} classes",
                                form.labels, form.classes
                            )
                        };
                        for n in &form.notes {
                            rep.verdict.push_str(&format!("; {n}"));
                        }
                        rep.decls = decls;
                        rep.rectangular = rect;
                        rep.rectangular_poly = rect_poly;
                        rep.groups = form.kappa.len();
                        rep.labels = form.labels;
                        rep.label_classes = form.classes;
                        let mut l = prove::Labels::new(&form, &trees);
                        if g.big.contains(&a) {
                            g.copy_out_within_groups(&mut l);
                        }
                        let exact = pick.is_some_and(|k| c.is_exact(k));
                        if exact && c.replay {
                            g.replay.insert(a);
                        }
                        rep.proof = Some(if exact {
                            prove::Proof::Proved
                        } else {
                            prove::prove(plus, &l)
                        });
                        labels.push(l);
                        g.trees.extend(trees);
                    }
                    Err(why) => rep.verdict = format!("not expanded: {why}"),
                },
            }
            reports.push(rep);
        }
        let body = g.body();
        let replay = g.replay();
        g.q.body = copy_in.into_iter().chain(body).chain(replay).collect();
        let text = print::program(&g.q);
        // Freed before the text is compiled back, the largest step.
        drop(g);
        let mut program = readback::compile_from(&text, "the expanded program", plus)?;
        let doall = if parallel {
            mark_parallel(&mut program)
        } else {
            Vec::new()
        };
        let text = print::program(&program);
        Ok(Emitted {
            program,
            text,
            samples: samples.iter().map(|s| s.values.clone()).collect(),
            validated: Vec::new(),
            limits: Vec::new(),
            arrays: reports,
            doall,
            doall_note: None,
            analysed: plus.clone(),
            labels,
            lifted: Vec::new(),
            in_range: Vec::new(),
        })
    }
}

/// Seeds of each validation run.
const VALIDATION_SEEDS: u64 = 3;

/// What validation established.
#[derive(Debug, Default)]
pub struct Validated {
    /// The vectors compared (those where the original runs).
    pub compared: Vec<Vec<i64>>,
    /// "validation stopped at N = …: `<limit>`; not validated there": where
    /// the emitted program's run hit a limit (steps, cells) the original's
    /// did not; not a disagreement.
    pub limits: Vec<String>,
}

/// Runs `equiv` (original vs emitted) at `vectors`; Err: "disagrees with
/// the original at N = 6: final contents of `A[3]`".
pub fn validate(
    original: &mut check::Originals,
    emitted: &Program,
    vectors: &[check::Vector],
) -> Result<Validated, String> {
    use crate::equiv::Verdict;
    let mut out = Validated::default();
    for (v, r) in original.compare(emitted, vectors) {
        let at = check::text(&v);
        match r {
            Ok(Verdict::Agree(_)) => out.compared.push(v.iter().map(|x| x.1).collect()),
            Ok(Verdict::Differ(m)) if m.limit => out.limits.push(format!(
                "validation stopped at {at}: {}; not validated there",
                m.failure.unwrap_or_default()
            )),
            Ok(Verdict::Differ(m)) => {
                return Err(format!("disagrees with the original at {at}: {}", m.what))
            }
            Err(e) if !e.in_b => {}
            Err(e) => return Err(format!("does not run at {at}: {}", e.message)),
        }
    }
    Ok(out)
}

use crate::print;

/// The arrays some statement writes, in id order.
pub(crate) fn written_arrays(p: &Program) -> Vec<ArrayId> {
    let mut v: Vec<ArrayId> = p
        .stmts()
        .iter()
        .filter_map(|s| s.write().map(|(a, _)| a.array))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Why a form cannot be emitted: a condition whose read label needs a
/// split, a compound assignment whose target has subscript reads, or a
/// dead write with subscript reads sent to a scratch group.
fn obstacle(
    p: &Program,
    writes: &[&Stmt],
    form: &ArrayForm,
    trees: &HashMap<(Site, usize), Tree>,
) -> Option<String> {
    // The first such read (the map's order is not stable).
    let split = trees
        .iter()
        .filter(|(key, t)| matches!((key.0, t), (Site::Cond(_), Tree::Split(..))))
        .map(|(key, _)| *key)
        .min();
    if let Some((site, k)) = split {
        return Some(format!(
            "{} needs a piecewise label",
            read_name::read_of(p, site, k)
        ));
    }
    for s in writes {
        if let StmtKind::Assign {
            target,
            op: Some(_),
            ..
        } = &s.kind
        {
            let mut r = Vec::new();
            target.collect_subscript_reads(&mut r);
            if target.array == form.array && !r.is_empty() {
                return Some(format!(
                    "`{}` is a compound assignment with reads in its subscripts",
                    s.label
                ));
            }
        }
    }
    // A dead write placed in a scratch group keeps only its κ subscripts:
    // reads in its own subscripts would not run.
    // Gathered once: a scan of every atom per statement was quadratic.
    let scratch: std::collections::HashSet<usize> = (form.atom_group.iter())
        .filter(|(_, &g)| form.scratch.get(g).copied().unwrap_or(false))
        .map(|(&(k, _), _)| k)
        .collect();
    for s in writes {
        let Some((target, _)) = s.write().filter(|(t, _)| t.array == form.array) else {
            continue;
        };
        let mut r = Vec::new();
        target.collect_subscript_reads(&mut r);
        if scratch.contains(&s.id.index()) && !r.is_empty() {
            return Some(format!(
                "`{}` is a dead write with reads in its subscripts",
                s.label
            ));
        }
    }
    None
}

/// The statements writing `a`, in program order.
fn writing(p: &Program, a: ArrayId) -> Vec<&Stmt> {
    let stmts = p.stmts().into_iter();
    stmts
        .filter(|s| s.write().is_some_and(|(t, _)| t.array == a))
        .collect()
}

/// [`infer::pool`] of a program, built on first use.
struct Pool<'a> {
    program: &'a Program,
    built: std::cell::OnceCell<Vec<Affine>>,
}

impl<'a> Pool<'a> {
    fn new(program: &'a Program) -> Pool<'a> {
        Pool {
            program,
            built: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> &[Affine] {
        self.built.get_or_init(|| infer::pool(self.program))
    }
}

/// Names in use, and fresh ones.
#[derive(Clone)]
pub(crate) struct Names(HashSet<String>, HashMap<String, usize>);

impl Names {
    pub(crate) fn new(p: &Program) -> Names {
        let mut s: HashSet<String> = HashSet::new();
        s.extend(p.params.iter().map(|x| x.name.clone()));
        s.extend(p.arrays.iter().map(|x| x.name.clone()));
        s.extend(p.counters.iter().map(|x| x.name.clone()));
        s.extend(p.stmts().iter().map(|x| x.label.clone()));
        s.extend(p.conditions().iter().map(|x| x.name.clone()));
        Names(s, HashMap::new())
    }

    /// `base`, else `base_1`, `base_2`, ...: the first name not in use.
    /// Names are only ever added, so the first free suffix of a base never
    /// goes down: the search resumes where the last one for `base` ended
    /// (the same name as a search from 0, in linear time over many calls).
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let from = self.1.get(base).copied().unwrap_or(0);
        let (k, n) = (from..)
            .map(|k| {
                let n = if k == 0 {
                    base.to_string()
                } else {
                    format!("{base}_{k}")
                };
                (k, n)
            })
            .find(|(_, n)| !self.0.contains(n))
            .expect("some suffix is free");
        self.1.insert(base.to_string(), k + 1);
        self.0.insert(n.clone());
        n
    }
}

/// `base`, else `base_1`, `base_2`, ...: the first name not `taken`.
pub(crate) fn fresh_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    (0..)
        .map(|k| {
            if k == 0 {
                base.to_string()
            } else {
                format!("{base}_{k}")
            }
        })
        .find(|n| !taken(n))
        .expect("some suffix is free")
}

/// The number of cells array `a` declares at parameter values `values`.
pub(crate) fn declared_cells(p: &Program, a: ArrayId, values: &[i64]) -> u64 {
    let at = |b: &Bound| {
        b.affine.eval(|v| match v {
            Var::Param(q) => values[q.index()],
            Var::Counter(_) => 0,
        })
    };
    p.array_decl(a).dims.iter().fold(1u64, |n, r| {
        let extent = match (at(&r.lo), at(&r.hi)) {
            (Some(lo), Some(hi)) if hi >= lo => (hi as i128 - lo as i128 + 1) as u64,
            (Some(_), Some(_)) => 0,
            _ => u64::MAX,
        };
        n.saturating_mul(extent)
    })
}

/// The program with one virtual read of every cell of each of `arrays`
/// (the written arrays whose contents are results) at the end, so that
/// copy-out gets closed forms too.
pub(crate) fn augment_arrays(
    p: &Program,
    names: &mut Names,
    arrays: &[ArrayId],
) -> Result<(Program, Vec<StmtId>), String> {
    let mut text = print::program(p);
    let mut labels = Vec::new();
    for &a in arrays {
        let decl = p.array_decl(a);
        let label = names.fresh(&format!("out_{}", decl.name));
        let mut subs = Vec::new();
        for (d, r) in decl.dims.iter().enumerate() {
            let c = names.fresh(&format!("o{}", d + 1));
            text.push_str(&format!(
                "for {c} = {} to {} do\n",
                print::expr(p, &r.lo.expr),
                print::expr(p, &r.hi.expr)
            ));
            subs.push(c);
        }
        let acc = if subs.is_empty() {
            decl.name.clone()
        } else {
            format!("{}[{}]", decl.name, subs.join(", "))
        };
        text.push_str(&format!("{label}: use({acc});\n"));
        for _ in &decl.dims {
            text.push_str("end\n");
        }
        labels.push(label);
    }
    let plus = readback::compile_from(&text, "the program with copy-out reads", p)?;
    let outs = plus
        .stmts()
        .iter()
        .filter(|s| labels.contains(&s.label))
        .map(|s| s.id)
        .collect();
    Ok((plus, outs))
}

fn config(p: &Program, v: &[i64], o: &Options) -> Config {
    Config {
        params: p
            .params
            .iter()
            .zip(v)
            .map(|(q, &x)| (q.name.clone(), x))
            .collect(),
        max_trips: o.max_trips,
        max_instances: o.max_instances,
        max_memory: crate::budget::limit(),
    }
}

fn samples(
    plus: &Program,
    frame: &crate::facts::Frame,
    o: &Options,
) -> Result<Vec<Sample>, String> {
    use rayon::prelude::*;
    // Each sample is an analysis of its own: they run side by side, and the
    // results are read in the vectors' order, as one after another would.
    let watch = arrayflow_model::cancel::current();
    let runs: Vec<_> = vectors::samples(plus, o)?
        .into_par_iter()
        .filter_map(|v| {
            let _watch = arrayflow_model::cancel::enter(&watch);
            let cfg = config(plus, &v, o);
            plus.param_values(&cfg.params).ok()?;
            Some(
                expansion::expand_framed(plus, &cfg, &crate::kinds::Kinds::core(), frame)
                    .map(|exp| Sample { values: v, exp }),
            )
        })
        .collect();
    let mut out = Vec::new();
    let mut first_err = None;
    for run in runs {
        match run {
            Ok(sample) => out.push(sample),
            Err(e) if out.is_empty() => {
                first_err.get_or_insert(e.to_string());
            }
            Err(_) => {}
        }
    }
    if out.is_empty() {
        return Err(first_err.unwrap_or_else(|| "no parameter vector to analyse".into()));
    }
    Ok(out)
}

/// A new `for` counter named `name` in `p`.
pub(crate) fn push_counter(p: &mut Program, name: String) -> CounterId {
    p.counters.push(Counter {
        name,
        kind: CounterKind::For,
        generated: false,
        span: Span::NONE,
    });
    CounterId(p.counters.len() as u32 - 1)
}

/// Marks every `for` loop that carries no dependence for any parameter
/// value, by the exact tests (`dependence::carried`). They never miss a
/// dependence, so running the program's cells at sample sizes would add
/// nothing; `doall` marks are still validated by running the program.
pub(crate) fn mark_parallel(p: &mut Program) -> Vec<String> {
    let carried = crate::dependence::carried::loops(p).0;
    let mut names = Vec::new();
    fn mark(nodes: &mut [Node], carried: &HashSet<CounterId>, names: &mut Vec<CounterId>) {
        for n in nodes {
            match n {
                Node::For(f) => {
                    if !carried.contains(&f.counter) {
                        f.parallel = true;
                        names.push(f.counter);
                    }
                    mark(&mut f.body, carried, names);
                }
                Node::While(w) => mark(&mut w.body, carried, names),
                Node::If(i) => {
                    for (_, b) in &mut i.branches {
                        mark(b, carried, names);
                    }
                    if let Some(b) = &mut i.otherwise {
                        mark(b, carried, names);
                    }
                }
                Node::Stmt(_) => {}
            }
        }
    }
    let mut ids = Vec::new();
    mark(&mut p.body, &carried, &mut ids);
    for c in ids {
        names.push(p.counter_decl(c).name.clone());
    }
    names
}

/// An affine function as an expression.
pub fn expr_of(a: &Affine) -> Expr {
    let mut e: Option<Expr> = None;
    let bin = |op, l: Expr, r: Expr| {
        Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), Span::NONE)
    };
    for &(v, c) in &a.terms {
        if c == 0 {
            continue;
        }
        let var = Expr::new(
            match v {
                Var::Param(p) => ExprKind::Param(p),
                Var::Counter(k) => ExprKind::Counter(k),
            },
            Span::NONE,
        );
        let term = |m: i64| {
            if m == 1 {
                var.clone()
            } else {
                bin(BinOp::Mul, Expr::int(m), var.clone())
            }
        };
        e = Some(match e {
            None if c < 0 => Expr::new(ExprKind::Neg(Box::new(term(-c))), Span::NONE),
            None => term(c),
            Some(x) if c < 0 => bin(BinOp::Sub, x, term(-c)),
            Some(x) => bin(BinOp::Add, x, term(c)),
        });
    }
    match e {
        None => Expr::int(a.constant),
        Some(x) if a.constant > 0 => bin(BinOp::Add, x, Expr::int(a.constant)),
        Some(x) if a.constant < 0 => bin(BinOp::Sub, x, Expr::int(-a.constant)),
        Some(x) => x,
    }
}

/// A label condition as the program writes it: `j <= N - 1`, or
/// `(i + 1) % 2 == 0` for a stride (`%` is Euclidean; zero either way).
fn test_cond(t: &Test) -> Cond {
    match t {
        Test::Le(e) => le_zero(e),
        Test::Stride(e, k) => Cond::Cmp(
            CmpOp::Eq,
            Expr::new(
                ExprKind::Binary(BinOp::Rem, Box::new(expr_of(e)), Box::new(Expr::int(*k))),
                Span::NONE,
            ),
            Expr::int(0),
        ),
    }
}

/// e ≤ 0 written as (positive terms) <= (the rest), e.g. `j <= N - 1`.
pub(crate) fn le_zero(e: &Affine) -> Cond {
    let mut l = Affine::constant(e.constant.max(0));
    let mut r = Affine::constant(-e.constant.min(0));
    for &(v, c) in &e.terms {
        if c > 0 {
            l.terms.push((v, c));
        } else {
            r.terms.push((v, -c));
        }
    }
    if l.terms.is_empty() && l.constant == 0 {
        return Cond::Cmp(CmpOp::Le, expr_of(e), Expr::int(0));
    }
    Cond::Cmp(CmpOp::Le, expr_of(&l), expr_of(&r))
}

fn affine_text(p: &Program, a: &Affine) -> String {
    print::expr(p, &expr_of(a))
}

/// The access a copy-out read `out_A: use(A[o1, ..])` reads.
fn copied(s: &Stmt) -> Option<&Access> {
    let StmtKind::Call { args, .. } = &s.kind else {
        return None;
    };
    match &args.first()?.kind {
        ExprKind::Access(a) => Some(a),
        _ => None,
    }
}

/// The code generator's state.
struct Gen<'a> {
    src: &'a Program,
    q: Program,
    names: Names,
    /// Expanded arrays: form and the new array of each group.
    arrays: HashMap<ArrayId, (ArrayForm, Vec<ArrayId>)>,
    trees: HashMap<(Site, usize), Tree>,
    outs: HashSet<StmtId>,
    big: HashSet<ArrayId>,
    /// While emitting one group's copy-out nest: that group (the cells
    /// other groups hold are left out).
    copy_group: Option<usize>,
    /// Arrays copied out by replaying their writes (`exact::Exact::replay`).
    replay: HashSet<ArrayId>,
    nstmt: usize,
}

impl Gen<'_> {
    /// Declares the group arrays of one form; copy-in loops go to `copy_in`.
    fn declare(
        &mut self,
        form: &ArrayForm,
        samples: &[Sample],
        copy_in: &mut Vec<Node>,
    ) -> Result<Declared, String> {
        let decl = self.src.array_decl(form.array).clone();
        let declared: Vec<(Affine, Affine)> = decl
            .dims
            .iter()
            .map(|r| (r.lo.affine.clone(), r.hi.affine.clone()))
            .collect();
        let mut boxes = Vec::new();
        let mut cell_boxes = Vec::new();
        for gb in &form.boxes {
            boxes.push(
                gb.kappa
                    .clone()
                    .ok_or("a label counter has no affine box")?,
            );
            cell_boxes.push(gb.cells.clone().unwrap_or_else(|| declared.clone()));
        }
        let mut decls = Vec::new();
        let mut ids = Vec::new();
        let orig_ext: Vec<Affine> = decl
            .dims
            .iter()
            .map(|r| extent(&r.lo.affine, &r.hi.affine))
            .collect::<Option<_>>()
            .ok_or("array bounds overflow")?;
        let eval = |a: &Affine, v: &[i64]| {
            a.eval(|x| match x {
                Var::Param(p) => v[p.index()],
                Var::Counter(_) => 0,
            })
        };
        let mut rect = vec![0i64; samples.len()];
        let mut max_k = vec![0i64; samples.len()];
        let bound = |a: &Affine| Bound {
            expr: expr_of(a),
            affine: a.clone(),
        };
        let mut scratch_cells = vec![0i64; samples.len()];
        let mut scratch_poly = Some(size::Poly::constant(0));
        let mut kappa_polys: Vec<Option<size::Poly>> = Vec::new();
        for (g, b) in boxes.iter().enumerate() {
            let name = self.names.fresh(&format!("{}_{}", decl.name, g + 1));
            let mut dims = Vec::new();
            let mut exts = Vec::new();
            for (lo, hi) in &cell_boxes[g] {
                dims.push(Range {
                    lo: bound(lo),
                    hi: bound(hi),
                });
                exts.push(extent(lo, hi).ok_or("label bounds overflow")?);
            }
            let n_cells = exts.len();
            for (lo, hi) in b {
                dims.push(Range {
                    lo: bound(lo),
                    hi: bound(hi),
                });
                exts.push(extent(lo, hi).ok_or("label bounds overflow")?);
            }
            let cells: Vec<i64> = samples
                .iter()
                .map(|s| {
                    exts.iter()
                        .map(|e| eval(e, &s.values).unwrap_or(0).max(0))
                        .product()
                })
                .collect();
            if form.scratch[g] {
                for (t, c) in scratch_cells.iter_mut().zip(&cells) {
                    *t += c;
                }
            }
            for (k, s) in samples.iter().enumerate().filter(|_| !form.scratch[g]) {
                let kb: i64 = exts[n_cells..]
                    .iter()
                    .map(|e| eval(e, &s.values).unwrap_or(0).max(0))
                    .product();
                max_k[k] = max_k[k].max(kb);
            }
            let formula = if exts.is_empty() {
                "1".to_string()
            } else {
                exts.iter()
                    .map(|e| format!("({})", affine_text(self.src, e)))
                    .collect::<Vec<_>>()
                    .join("·")
            };
            let product = |es: &[Affine]| {
                es.iter().try_fold(size::Poly::constant(1), |p, e| {
                    p.mul(&size::Poly::affine(e)?)
                })
            };
            let poly = product(&exts);
            if form.scratch[g] {
                scratch_poly = scratch_poly.and_then(|t| t.add(poly.as_ref()?));
            } else {
                let k = product(&exts[n_cells..]);
                kappa_polys.push(k);
            }
            decls.push(Decl {
                name: name.clone(),
                formula,
                cells,
                poly,
            });
            let id = ArrayId(self.q.arrays.len() as u32);
            self.q.arrays.push(Array {
                name,
                elem: decl.elem,
                dims,
                span: Span::NONE,
                local: false,
            });
            ids.push(id);
            if form.copy_in[g] {
                copy_in.push(self.copy_loops(&cell_boxes[g], form.array, id, b));
            }
        }
        for (k, s) in samples.iter().enumerate() {
            let c: i64 = orig_ext
                .iter()
                .map(|e| eval(e, &s.values).unwrap_or(0).max(0))
                .product();
            let groups = form.scratch.iter().filter(|&&x| !x).count() as i64;
            rect[k] = c * groups * max_k[k] + scratch_cells[k];
        }
        // cells × groups × κ box + scratch, when every group has one κ box.
        let rect_poly = match kappa_polys.split_first() {
            Some((first, rest)) if rest.iter().all(|k| k == first) => orig_ext
                .iter()
                .try_fold(size::Poly::constant(kappa_polys.len() as i64), |p, e| {
                    p.mul(&size::Poly::affine(e)?)
                })
                .and_then(|p| p.mul(first.as_ref()?))
                .and_then(|p| p.add(scratch_poly.as_ref()?)),
            _ => None,
        };
        self.arrays.insert(form.array, (form.clone(), ids));
        Ok((decls, rect, rect_poly))
    }

    fn new_counter(&mut self, base: &str) -> CounterId {
        let name = self.names.fresh(base);
        push_counter(&mut self.q, name)
    }

    fn label(&mut self, base: &str) -> String {
        self.nstmt += 1;
        self.names.fresh(base)
    }

    /// `for c.. for k..: @copy A_g[c.., k..] = A[c..]`.
    fn copy_loops(
        &mut self,
        cells: &[(Affine, Affine)],
        a: ArrayId,
        g: ArrayId,
        b: &[(Affine, Affine)],
    ) -> Node {
        let mut ranges: Vec<(Affine, Affine)> = cells.to_vec();
        let n_orig = ranges.len();
        ranges.extend(b.iter().cloned());
        let counters: Vec<CounterId> = (0..ranges.len())
            .map(|k| self.new_counter(&format!("c{}", k + 1)))
            .collect();
        let var = |c: CounterId| Expr::new(ExprKind::Counter(c), Span::NONE);
        let sub = |c: CounterId| Subscript::new(var(c));
        let target = Access {
            array: g,
            subscripts: counters.iter().map(|&c| sub(c)).collect(),
            span: Span::NONE,
            ext: None,
        };
        let src = Access {
            array: a,
            subscripts: counters[..n_orig].iter().map(|&c| sub(c)).collect(),
            span: Span::NONE,
            ext: None,
        };
        let label = self.label("copy_in");
        let value = Expr::new(ExprKind::Access(src), Span::NONE);
        let mut node = Node::Stmt(Stmt::copy(label, target, value));
        for (k, (lo, hi)) in ranges.iter().enumerate().rev() {
            node = Node::For(For {
                counter: counters[k],
                lower: Bound {
                    expr: expr_of(lo),
                    affine: lo.clone(),
                },
                upper: Bound {
                    expr: expr_of(hi),
                    affine: hi.clone(),
                },
                step: 1,
                parallel: false,
                body: vec![node],
                span: Span::NONE,
            });
        }
        node
    }

    fn body(&mut self) -> Vec<Node> {
        let body = self.src.body.clone();
        self.nodes(&body)
    }

    /// The copy-out of the `replay` arrays: the program's loops and affine
    /// conditions around their writes, each write a copy from its group, in
    /// program order (the last write of every cell is copied last).
    fn replay(&mut self) -> Vec<Node> {
        let body = self.src.body.clone();
        self.replay_nodes(&body)
    }

    fn replay_nodes(&mut self, nodes: &[Node]) -> Vec<Node> {
        let mut out = Vec::new();
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    let Some((t, _)) = s.write().filter(|(t, _)| self.replay.contains(&t.array))
                    else {
                        continue;
                    };
                    let Some(w) = self.write_access(s, t, &|_| true) else {
                        continue;
                    };
                    let label = self.label("copy_out");
                    let value = Expr::new(ExprKind::Access(w), Span::NONE);
                    out.push(Node::Stmt(Stmt::copy(label, t.clone(), value)));
                }
                Node::For(f) => {
                    let body = self.replay_nodes(&f.body);
                    if !body.is_empty() {
                        out.push(Node::For(For {
                            body,
                            parallel: false,
                            ..f.clone()
                        }));
                    }
                }
                // Not static: no replayed array is written inside.
                Node::While(_) => {}
                Node::If(i) => {
                    let mut i = i.clone();
                    let mut any = false;
                    for (c, b) in &mut i.branches {
                        *b = self.replay_nodes(b);
                        any |= !b.is_empty();
                        c.name = self.names.fresh("r");
                        c.generated = false;
                    }
                    if let Some(b) = &mut i.otherwise {
                        *b = self.replay_nodes(b);
                        any |= !b.is_empty();
                    }
                    if any {
                        out.push(Node::If(i));
                    }
                }
            }
        }
        out
    }

    fn nodes(&mut self, nodes: &[Node]) -> Vec<Node> {
        let mut out = Vec::new();
        for n in nodes {
            match n {
                Node::Stmt(s) => out.extend(self.stmt(s)),
                Node::For(f) => {
                    if let Some(nodes) = self.copy_out_by_group(f) {
                        out.extend(nodes);
                        continue;
                    }
                    let mut f = f.clone();
                    let had_body = !f.body.is_empty();
                    f.body = self.nodes(&f.body);
                    // The copy-out nest of an array kept as it is: its
                    // final reads gone, nothing left to run.
                    if had_body && f.body.is_empty() {
                        continue;
                    }
                    out.push(Node::For(f));
                }
                Node::While(w) => {
                    let mut w = w.clone();
                    self.condition(&mut w.cond);
                    w.body = self.nodes(&w.body);
                    out.push(Node::While(w));
                }
                Node::If(i) => {
                    let mut i = i.clone();
                    for (c, b) in &mut i.branches {
                        self.condition(c);
                        *b = self.nodes(b);
                    }
                    if let Some(b) = &mut i.otherwise {
                        *b = self.nodes(b);
                    }
                    out.push(Node::If(i));
                }
            }
        }
        out
    }

    /// The labels a big array's copy-out reads as emitted by
    /// [`Gen::copy_out_by_group`]: a group's label within its cells, the
    /// original array outside them (the pieces outside may overlap: they
    /// all read the original).
    fn copy_out_within_groups(&self, l: &mut prove::Labels) {
        let Some((_, ids)) = self.arrays.get(&l.array) else {
            return;
        };
        for (&(site, k), pieces) in l.reads.iter_mut() {
            let Site::Stmt(s) = site else { continue };
            if k != 0 || !self.outs.contains(&s) {
                continue;
            }
            let Some(read) = self.src.stmts()[s.index()].reads().first().copied() else {
                continue;
            };
            let mut out = Vec::new();
            for p in pieces.iter() {
                let Some((g, _)) = &p.label else {
                    out.push(p.clone());
                    continue;
                };
                let cells = &self.q.arrays[ids[*g].index()].dims;
                // lo - o ≤ 0 and o - hi ≤ 0 for every dimension.
                let within: Option<Vec<Affine>> = (read.subscripts.iter().zip(cells))
                    .flat_map(|(sub, r)| {
                        let o = sub.affine.clone();
                        [
                            o.clone().and_then(|o| r.lo.affine.checked_sub(&o)),
                            o.and_then(|o| o.checked_sub(&r.hi.affine)),
                        ]
                    })
                    .collect();
                let Some(within) = within else {
                    out.push(p.clone());
                    continue;
                };
                let mut inside = p.clone();
                inside
                    .conds
                    .extend(within.iter().map(|e| (Test::Le(e.clone()), true)));
                out.push(inside);
                for e in within {
                    let mut outside = p.clone();
                    outside.conds.push((Test::Le(e), false));
                    outside.label = None;
                    out.push(outside);
                }
            }
            *pieces = out;
        }
    }

    /// A big array's copy-out: instead of one nest over every declared cell
    /// (10^8 of them for `real B[0..N]` with N = 10^8, however few are
    /// written), one nest per group the copy-out reads, over that group's
    /// cells, guarded by the declared range where the bounds differ. Cells
    /// outside every group were never written and keep their value. None:
    /// not such a nest.
    fn copy_out_by_group(&mut self, f: &For) -> Option<Vec<Node>> {
        let mut nest = vec![f];
        while let [Node::For(inner)] = &nest.last()?.body[..] {
            nest.push(inner);
        }
        let [Node::Stmt(s)] = &nest.last()?.body[..] else {
            return None;
        };
        let orig = copied(s)?;
        if !self.outs.contains(&s.id) || !self.big.contains(&orig.array) {
            return None;
        }
        let ids = self.arrays.get(&orig.array)?.1.clone();
        let mut groups = Vec::new();
        self.trees.get(&(Site::Stmt(s.id), 0))?.groups(&mut groups);
        let decl = self.src.array_decl(orig.array).clone();
        if nest.len() != decl.dims.len() {
            return None;
        }
        let mut out = Vec::new();
        for g in groups {
            let cells = self.q.arrays[ids.get(g)?.index()].dims.clone();
            self.copy_group = Some(g);
            let mut body = self.stmt(s);
            self.copy_group = None;
            for (d, l) in nest.iter().enumerate().rev() {
                let (within, range) = (cells.get(d)?, &decl.dims[d]);
                let o = Affine::var(Var::Counter(l.counter));
                let mut guards = Vec::new();
                if within.lo.affine != range.lo.affine {
                    guards.push(range.lo.affine.checked_sub(&o)?);
                }
                if within.hi.affine != range.hi.affine {
                    guards.push(o.checked_sub(&range.hi.affine)?);
                }
                for e in guards {
                    body = vec![Node::If(If {
                        branches: vec![(
                            Condition {
                                id: CondId(0),
                                name: self.names.fresh("v"),
                                generated: false,
                                cond: le_zero(&e),
                                span: Span::NONE,
                            },
                            body,
                        )],
                        otherwise: None,
                        span: Span::NONE,
                    })];
                }
                body = vec![Node::For(For {
                    counter: l.counter,
                    lower: within.lo.clone(),
                    upper: within.hi.clone(),
                    step: 1,
                    parallel: false,
                    body,
                    span: Span::NONE,
                })];
            }
            out.extend(body);
        }
        Some(out)
    }

    /// Names a generated condition explicitly (its identity stays) and
    /// rewrites its reads.
    fn condition(&mut self, c: &mut Condition) {
        if c.generated {
            c.name = format!("{}.1", c.name);
            c.generated = false;
        }
        let site = Site::Cond(c.id);
        let truth = |_: &Test| true;
        let mut k = 0;
        rewrite_cond(&mut c.cond, &mut k, &mut |idx, acc| {
            self.read_access(site, idx, acc, &truth)
        });
    }

    /// The expanded form of read `idx` of `site` under `truth`.
    fn read_access(
        &self,
        site: Site,
        idx: usize,
        acc: &Access,
        truth: &dyn Fn(&Test) -> bool,
    ) -> Option<Access> {
        let (form, ids) = self.arrays.get(&acc.array)?;
        let _ = form;
        let tree = self.trees.get(&(site, idx))?;
        let (g, ks) = tree.leaf(truth).as_ref()?;
        let mut a = acc.clone();
        a.array = *ids.get(*g)?;
        for k in ks {
            a.subscripts.push(Subscript::new(expr_of(k)));
        }
        Some(a)
    }

    fn write_access(
        &self,
        s: &Stmt,
        acc: &Access,
        truth: &dyn Fn(&Test) -> bool,
    ) -> Option<Access> {
        let (form, ids) = self.arrays.get(&acc.array)?;
        let bits = form.splits.get(&s.id.index()).map_or(0, |cs| {
            cs.iter().enumerate().fold(0, |b, (k, e)| {
                if truth(&Test::Le(e.clone())) {
                    b | 1 << k
                } else {
                    b
                }
            })
        });
        let g = *form.atom_group.get(&(s.id.index(), bits))?;
        let mut a = acc.clone();
        a.array = *ids.get(g)?;
        if form.scratch.get(g) == Some(&true) {
            a.subscripts.clear();
        }
        for &c in &form.kappa[g] {
            a.subscripts
                .push(Subscript::new(Expr::new(ExprKind::Counter(c), Span::NONE)));
        }
        Some(a)
    }

    /// The versions of one statement under the affine conditions its labels
    /// depend on.
    fn stmt(&mut self, s: &Stmt) -> Vec<Node> {
        let site = Site::Stmt(s.id);
        let mut conds: Vec<Test> = Vec::new();
        if let Some((acc, _)) = s.write() {
            if let Some((form, _)) = self.arrays.get(&acc.array) {
                if let Some(es) = form.splits.get(&s.id.index()) {
                    conds.extend(es.iter().cloned().map(Test::Le));
                }
            }
        }
        let n_reads = s.reads().len();
        for k in 0..n_reads {
            if let Some(t) = self.trees.get(&(site, k)) {
                t.conditions(&mut conds);
            }
        }
        let is_out = self.outs.contains(&s.id);
        let versions = 1usize << conds.len();
        let mut leaves = Vec::new();
        for v in 0..versions {
            let truth = |e: &Test| {
                conds
                    .iter()
                    .position(|c| c == e)
                    .is_some_and(|k| v >> (conds.len() - 1 - k) & 1 == 0)
            };
            let mut st = s.clone();
            if is_out {
                st = self.copy_out(&st, &truth);
                // A copy of the original array onto itself: nothing to do.
                if let StmtKind::Assign { target, value, .. } = &st.kind {
                    if matches!(&value.kind, ExprKind::Access(a) if a == target) {
                        leaves.push(None);
                        continue;
                    }
                }
            } else {
                st.label_generated = false;
                self.rewrite_stmt(&mut st, &truth);
            }
            leaves.push(Some(st));
        }
        // Nest: condition k splits the versions in halves; a condition whose
        // two halves are the same statements is left out.
        let mut it = leaves.into_iter();
        let tree = Version::nest(&conds, &mut it);
        let mut n = 0;
        tree.count(&mut n);
        let mut k = 0;
        self.emit_version(tree, s, is_out, n, &mut k)
    }

    /// The nodes of a pruned version tree; statements labelled in order
    /// (`S.1`, `S.2`, ... when several remain).
    fn emit_version(
        &mut self,
        t: Version,
        s: &Stmt,
        is_out: bool,
        n: usize,
        k: &mut usize,
    ) -> Vec<Node> {
        match t {
            Version::Leaf(None) => Vec::new(),
            Version::Leaf(Some(mut st)) => {
                *k += 1;
                st.label = if is_out {
                    self.label("copy_out")
                } else if n > 1 {
                    format!("{}.{}", s.label, k)
                } else if s.label_generated {
                    format!("{}.1", s.label)
                } else {
                    s.label.clone()
                };
                vec![Node::Stmt(st)]
            }
            Version::If(e, yes, no) => {
                let yes = self.emit_version(*yes, s, is_out, n, k);
                let no = self.emit_version(*no, s, is_out, n, k);
                // Only the else side runs something: test ¬(e ≤ 0), 1 - e ≤ 0
                // (¬ of a stride as written).
                let (cond, yes, no) = match (yes.is_empty(), &e) {
                    (true, Test::Le(e)) => match e
                        .checked_scale(-1)
                        .and_then(|x| x.checked_add(&Affine::constant(1)))
                    {
                        Some(f) => (le_zero(&f), no, Vec::new()),
                        None => (test_cond(&Test::Le(e.clone())), yes, no),
                    },
                    (true, Test::Stride(..)) => {
                        (Cond::Not(Box::new(test_cond(&e))), no, Vec::new())
                    }
                    (false, _) => (test_cond(&e), yes, no),
                };
                let name = self.names.fresh("v");
                vec![Node::If(If {
                    branches: vec![(
                        Condition {
                            id: CondId(0),
                            name,
                            generated: false,
                            cond,
                            span: Span::NONE,
                        },
                        yes,
                    )],
                    otherwise: (!no.is_empty()).then_some(no),
                    span: Span::NONE,
                })]
            }
        }
    }

    /// The copy-out statement (labelled when emitted).
    fn copy_out(&mut self, s: &Stmt, truth: &dyn Fn(&Test) -> bool) -> Stmt {
        let label = String::new();
        let Some(orig) = copied(s) else {
            return s.clone();
        };
        let site = Site::Stmt(s.id);
        let group = self
            .trees
            .get(&(site, 0))
            .and_then(|t| t.leaf(truth).as_ref());
        let other_group = self
            .copy_group
            .is_some_and(|g| group.is_some_and(|(h, _)| *h != g));
        let value = match other_group {
            // Another group's nest copies it: nothing here.
            true => orig.clone(),
            false => self
                .read_access(site, 0, orig, truth)
                .unwrap_or_else(|| orig.clone()),
        };
        Stmt {
            id: s.id,
            label,
            label_generated: false,
            copy: true,
            kind: StmtKind::Assign {
                target: orig.clone(),
                op: None,
                value: Expr::new(ExprKind::Access(value), Span::NONE),
            },
            span: Span::NONE,
        }
    }

    fn rewrite_stmt(&self, st: &mut Stmt, truth: &dyn Fn(&Test) -> bool) {
        let site = Site::Stmt(st.id);
        let s0 = st.clone();
        let mut k = 0;
        match &mut st.kind {
            StmtKind::Assign { target, op, value } => {
                let orig_target = target.clone();
                let update_read = if op.is_some() {
                    let r = self.read_access(site, 0, &orig_target, truth);
                    k = 1;
                    Some(r)
                } else {
                    None
                };
                let mut t = target.clone();
                for sub in &mut t.subscripts {
                    rewrite_expr(&mut sub.expr, &mut k, &mut |i, a| {
                        self.read_access(site, i, a, truth)
                    });
                }
                rewrite_expr(value, &mut k, &mut |i, a| {
                    self.read_access(site, i, a, truth)
                });
                let w = self
                    .write_access(&s0, &t, truth)
                    .unwrap_or_else(|| t.clone());
                if let Some(r) = update_read {
                    let r = r.unwrap_or_else(|| t.clone());
                    if r != w {
                        let o = op.take().unwrap_or(BinOp::Add);
                        let v = std::mem::replace(value, Expr::int(0));
                        *value = Expr::new(
                            ExprKind::Binary(
                                o,
                                Box::new(Expr::new(ExprKind::Access(r), Span::NONE)),
                                Box::new(v),
                            ),
                            Span::NONE,
                        );
                    }
                }
                *target = w;
            }
            StmtKind::Call { args, .. } => {
                for a in args {
                    rewrite_expr(a, &mut k, &mut |i, x| self.read_access(site, i, x, truth));
                }
            }
        }
    }
}

/// The versions of one statement under its conditions, before labelling.
#[derive(PartialEq)]
enum Version {
    /// None: nothing to run (a copy of an array onto itself).
    Leaf(Option<Stmt>),
    If(Test, Box<Version>, Box<Version>),
}

impl Version {
    /// Condition k splits the versions in halves; two halves that are the
    /// same (labels aside: they are not assigned yet) become one.
    fn nest(conds: &[Test], leaves: &mut std::vec::IntoIter<Option<Stmt>>) -> Version {
        let Some((e, rest)) = conds.split_first() else {
            return Version::Leaf(leaves.next().flatten());
        };
        let yes = Version::nest(rest, leaves);
        let no = Version::nest(rest, leaves);
        if yes == no {
            return yes;
        }
        Version::If(e.clone(), Box::new(yes), Box::new(no))
    }

    fn count(&self, n: &mut usize) {
        match self {
            Version::Leaf(l) => *n += usize::from(l.is_some()),
            Version::If(_, a, b) => {
                a.count(n);
                b.count(n);
            }
        }
    }
}

/// `hi - lo + 1`.
pub(crate) fn extent(lo: &Affine, hi: &Affine) -> Option<Affine> {
    hi.checked_sub(lo)?.checked_add(&Affine::constant(1))
}

/// An access rewrite: given a read's index (in `Expr::collect_reads`
/// order) and its original access, the access to put there, whose extra
/// trailing subscripts are kept after the rewritten original ones.
pub(crate) type Rw<'a> = dyn FnMut(usize, &Access) -> Option<Access> + 'a;

/// Rewrites the reads of an expression in `Expr::collect_reads` order.
pub(crate) fn rewrite_expr(e: &mut Expr, k: &mut usize, f: &mut Rw) {
    match &mut e.kind {
        ExprKind::Access(a) => {
            let me = *k;
            *k += 1;
            let orig = a.clone();
            for s in &mut a.subscripts {
                rewrite_expr(&mut s.expr, k, f);
            }
            // The label comes from the original access; the subscripts
            // keep their rewritten reads.
            if let Some(mut n) = f(me, &orig) {
                let extra = n.subscripts.split_off(orig.subscripts.len());
                n.subscripts = a.subscripts.clone();
                n.subscripts.extend(extra);
                *a = n;
            }
        }
        ExprKind::Call(_, args) => args.iter_mut().for_each(|x| rewrite_expr(x, k, f)),
        ExprKind::Neg(x) => rewrite_expr(x, k, f),
        ExprKind::Binary(_, l, r) => {
            rewrite_expr(l, k, f);
            rewrite_expr(r, k, f);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
    }
}

pub(crate) fn rewrite_cond(c: &mut Cond, k: &mut usize, f: &mut Rw) {
    match c {
        Cond::Cmp(_, l, r) => {
            rewrite_expr(l, k, f);
            rewrite_expr(r, k, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            rewrite_cond(a, k, f);
            rewrite_cond(b, k, f);
        }
        Cond::Not(a) => rewrite_cond(a, k, f),
        Cond::Unknown => {}
    }
}
