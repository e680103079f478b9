//! The contracted program (`expand --transform contract --emit code`):
//! every array the mapping adds dimensions to gets a new array `A_c` with
//! the original dimensions, then one per added loop (its counter for a
//! parallel loop, its counter `% d` for a folded sequential one):
//!
//! ```text
//! for c, e: @copy A_c[c, e] = A[c]; end             # copy-in
//! ... the program, schedule loops `doall`, A[x] -> A_c[x, e(...)] ...
//! for c: if e_last(c) in range: @copy A[c] = A_c[c, e_last(c)]; end
//! ```
//!
//! The places reads go to and the final values' places (`e_last`) are
//! affine functions fitted at `codegen`'s sample parameter vectors (the
//! counters, then the parameters); the program is then run against the
//! original by `equiv` with the `doall` loops shuffled, at the samples and at
//! `codegen`'s validation vectors. Nothing is proved for every parameter
//! value: the header says which sizes were checked.

use super::mapping::{self, Dim};
use super::{Order, Schedule, StorageError};
use crate::codegen::{expr_of, vectors, Names, Options};
use crate::expansion::{self, ExpansionError};
use crate::interp::IterationMap;
use crate::model::builder::e::{access, bin, counter, read};
use crate::model::*;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The pairing's first stage ([`super::pair`]), as the header reports it.
pub struct Mse {
    /// Per array expanded: `A -> A_1, A_2: …`, what MSE made of it.
    pub lines: Vec<String>,
    /// None when every array's labels are proved static; else why not.
    pub unproved: Option<String>,
    /// The program after the first stage (the second's input).
    pub program: Program,
    /// Constant loop bounds the first stage made parameters
    /// (`codegen::lift`), with their values.
    pub lifted: Vec<(String, i64)>,
    /// The sizes where `equiv` found the first stage's program agreeing
    /// with the original, named by its parameters.
    pub validated: Vec<Vec<(String, i64)>>,
}

impl std::fmt::Debug for Mse {
    // The program is long and says nothing the lines do not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mse")
            .field("lines", &self.lines)
            .field("unproved", &self.unproved)
            .finish_non_exhaustive()
    }
}

/// Why there is no contracted program.
#[derive(Debug)]
pub enum EmitError {
    Storage(StorageError),
    Expansion(ExpansionError),
    /// The program cannot be rescheduled to an affine schedule's order.
    Reschedule(super::reschedule::RescheduleError),
    Other(String),
    /// The pairing's contraction failed on the program its first stage
    /// made (whose sites `error` names).
    Paired {
        error: Box<EmitError>,
        stage: Box<Mse>,
    },
}

/// The contracted program and how it was checked.
pub struct Emitted {
    pub program: Program,
    pub text: String,
    pub parallel: Vec<String>,
    /// (`A -> A_c`, its added dimensions described), per contracted array.
    pub arrays: Vec<(String, Vec<String>)>,
    pub sampled: Vec<Vec<(String, i64)>>,
    pub validated: Vec<Vec<(String, i64)>>,
    /// Temporaries sharing storage: `T2 in T1`, one line per class.
    pub shared: Vec<String>,
    /// Sharing found at the samples but dropped: what and why.
    pub unshared: Option<String>,
    /// Temporaries laid out modulo a size (`modular`): `F -> F_m: (i) mod
    /// 2`, one line per array; and those found at the samples but dropped
    /// by the validation, with why.
    pub modular: Vec<String>,
    pub unmodular: Option<String>,
    /// The affine schedule the `doall` marking stands for, if any.
    pub affine: Option<String>,
    /// The storage proved for every parameter value, or why not
    /// (`storage::prove`).
    pub proof: super::prove::Proof,
    /// When the loops were rescheduled to the affine schedule's order: the
    /// original iteration of each statement's operations (`equiv` compares
    /// with the original through it).
    pub iterations: Option<Arc<IterationMap>>,
    /// The pairing's first stage, when arrays under dynamic control got
    /// maximal static expansion (`pair`); `program` contracts its output.
    pub mse: Option<Mse>,
    /// Buffers indexed modulo their extent unfolded first (`unfold`);
    /// `program` contracts the unfolded program.
    pub unfolded: Option<super::unfold::Unfolding>,
}

/// The loop-level schedule that orders every pair of operations as the
/// affine `schedule` does at every sample size (the loops it leaves
/// unordered at some sample made parallel: a loop of one trip at another
/// says nothing), or why there is none.
pub(crate) fn loop_level_twin(
    program: &Program,
    schedule: &Schedule,
    o: &Options,
) -> Result<Schedule, String> {
    let mut exps = Vec::new();
    let mut parallel = vec![false; program.counters.len()];
    // Sample by sample: a schedule with no twin (most) fails at the first.
    for v in vectors::samples(program, o)? {
        let mut config = crate::dataflow::Config::default();
        let names = program.params.iter().map(|q| q.name.clone());
        config.params = names.zip(v.iter().copied()).collect();
        (config.max_trips, config.max_instances) = (o.max_trips, o.max_instances);
        let Ok(exp) = expansion::expand(program, &config) else {
            continue;
        };
        let order = Order::new(program, &exp.inst.facts, schedule);
        let here = order.unordered_loops(program).ok_or_else(|| {
            format!(
                "at {} it reorders two operations in one iteration of every common loop \
                 (or there are more than 3,000 operations to compare)",
                show(&config.params)
            )
        })?;
        for (p, h) in parallel.iter_mut().zip(here) {
            *p |= h;
        }
        drop(order);
        exps.push((config.params, exp));
    }
    let twin = Schedule {
        parallel,
        affine: None,
    };
    for (params, exp) in &exps {
        if !Order::new(program, &exp.inst.facts, schedule).same_as(program, &twin) {
            return Err(format!(
                "at {} it orders the operations as no `doall` marking does",
                show(params)
            ));
        }
    }
    if exps.is_empty() {
        return Err("no sample size could be analysed".to_string());
    }
    Ok(twin)
}

/// The span of a site.
pub fn site_span(program: &Program, site: Site) -> Span {
    match site {
        Site::Stmt(s) => program
            .stmts()
            .get(s.index())
            .map_or(Span::NONE, |x| x.span),
        Site::Cond(c) => program
            .conditions()
            .get(c.index())
            .map_or(Span::NONE, |x| x.span),
    }
}

type Fit = (Vec<i64>, i64);
type Points = Vec<(Vec<i64>, i64)>;
/// Per added dimension the points of the instances with a source, and the
/// instances that see the initial value.
type ReadPoints = (Vec<Points>, Vec<Vec<i64>>);

/// What the samples say about one contracted array.
#[derive(Default)]
struct Gathered {
    /// Per read access: points per added dimension, and the instances
    /// that see the initial value (counters, then parameters).
    reads: BTreeMap<(Site, usize), ReadPoints>,
    /// Final values: (cell index, params) -> the last writer's index.
    last: Vec<Points>,
    /// Per added dimension: params -> its loop's first and last counter
    /// values (where it runs).
    ranges: Vec<(Points, Points)>,
}

/// One sample's expansion and storage mapping.
type Analysed = (
    Vec<i64>,
    expansion::Expansion,
    Result<super::Mapped, super::StorageError>,
);

/// Each sample analysed on its own thread, in the samples' order. The
/// caller stops at the first sample (in order) whose mapping fails, or
/// whose expansion fails if it is the first: samples after one that failed
/// are not analysed (None), those before it always are, so what the caller
/// reports does not depend on the threads.
fn analyse_samples(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
    samples: Vec<Vec<i64>>,
) -> Vec<Option<Result<Analysed, crate::expansion::ExpansionError>>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let named = |v: &[i64]| -> Vec<(String, i64)> {
        let names = program.params.iter().map(|q| q.name.clone());
        names.zip(v.iter().copied()).collect()
    };
    let failed = AtomicUsize::new(usize::MAX);
    let watch = arrayflow_model::cancel::current();
    samples
        .into_par_iter()
        .enumerate()
        .map(|(k, v)| {
            let _watch = arrayflow_model::cancel::enter(&watch);
            if k > failed.load(Ordering::Relaxed) {
                return None;
            }
            let mut config = crate::dataflow::Config::default();
            (config.params, config.max_trips) = (named(&v), o.max_trips);
            config.max_instances = o.max_instances;
            let exp = match expansion::expand(program, &config) {
                Ok(exp) => exp,
                Err(e) => {
                    if k == 0 {
                        failed.fetch_min(k, Ordering::Relaxed);
                    }
                    return Some(Err(e));
                }
            };
            let order = Order::new(program, &exp.inst.facts, schedule);
            let mapped = super::mapped(program, &exp, &order, Some(temporaries));
            drop(order);
            if mapped.is_err() {
                failed.fetch_min(k, Ordering::Relaxed);
            }
            Some(Ok((v, exp, mapped)))
        })
        .collect()
}

/// The contracted program for every parameter value as far as it can be
/// checked (see the module documentation).
pub fn checked(program: &Program, schedule: &Schedule, o: &Options) -> Result<Emitted, EmitError> {
    checked_with(program, schedule, &[], o)
}

/// `checked`, the `temporaries` (arrays whose final contents are not
/// results) sharing storage where `colour` finds they can at every sample;
/// `equiv` then does not compare their final contents.
pub fn checked_with(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
) -> Result<Emitted, EmitError> {
    // Under an affine schedule: the `doall` marking that orders the
    // operations exactly as it does at every sample, if there is one; else
    // the mapping under the schedule and the loops rescheduled to its order.
    let mut rescan = None;
    if let Some(a) = &schedule.affine {
        if let Ok(twin) = loop_level_twin(program, schedule, o) {
            let mut e = checked_with(program, &twin, temporaries, o)?;
            e.affine = Some(a.text.clone());
            return Ok(e);
        }
        rescan = Some(a);
    }
    let mut exps = Vec::new();
    let mut mods = Vec::new();
    let mut dims: Vec<Vec<Dim>> = vec![Vec::new(); program.arrays.len()];
    let mut sharings = Vec::new();
    let samples = vectors::samples(program, o).map_err(EmitError::Other)?;
    // Each sample is analysed on its own (in parallel); merged in order, so
    // the result and the error reported do not depend on the threads.
    // With temporaries the proof most likely needs symbolic σ (storage
    // shared or laid out modulo a size): it runs beside the samples.
    let watch = arrayflow_model::cancel::current();
    let (analysed, sigma) = rayon::join(
        || analyse_samples(program, schedule, temporaries, o, samples),
        || {
            let _watch = arrayflow_model::cancel::enter(&watch);
            (!temporaries.is_empty()).then(|| crate::symbolic::analyze(program))
        },
    );
    for (k, sample) in analysed.into_iter().enumerate() {
        // Not analysed: after a sample whose failure returned below.
        let Some(sample) = sample else { continue };
        let (v, exp, mapped) = match sample {
            Ok(x) => x,
            Err(e) if k == 0 => return Err(EmitError::Expansion(e)),
            // A size the analysis cannot take says nothing about the others.
            Err(_) => continue,
        };
        let super::Mapped {
            mapping,
            sharing,
            modular,
            refused,
        } = mapped.map_err(EmitError::Storage)?;
        mods.push((v.clone(), modular, refused));
        for a in &mapping.arrays {
            merge(&mut dims[a.array.index()], &a.dims);
        }
        sharings.push(sharing);
        exps.push((v, exp));
    }
    let at: Vec<super::colour::AtSample> = (exps.iter().zip(&sharings))
        .map(|((v, exp), s)| (v.as_slice(), s.as_ref(), exp))
        .collect();
    let (classes, unfit) = super::colour::across(program, schedule, &at);
    drop(at);
    let mut gathered: Vec<Gathered> = dims
        .iter()
        .map(|d| Gathered {
            last: vec![Vec::new(); d.len()],
            ranges: vec![(Vec::new(), Vec::new()); d.len()],
            ..Default::default()
        })
        .collect();
    for (v, exp) in &exps {
        gather(program, exp, schedule, &dims, v, &mut gathered)?;
    }
    let mut p = program.clone();
    set_parallel(&mut p.body, schedule);
    let mut names = Names::new(program);
    let mut plan = Vec::new();
    for (k, ds) in dims.iter().enumerate() {
        if ds.is_empty() {
            continue;
        }
        plan.push(Plan::new(
            program,
            &mut p,
            &mut names,
            ArrayId(k as u32),
            ds,
            &gathered[k],
        )?);
    }
    let laid = super::modular::across(&mods);
    // An array the contraction expands at some sample keeps its storage;
    // one laid out modulo a size is in no class.
    let classes: Vec<Vec<ArrayId>> = classes
        .into_iter()
        .filter(|cl| cl.iter().all(|a| dims[a.index()].is_empty()))
        .filter(|cl| {
            (cl.iter()).all(|a| laid.iter().all(|l| l.array != *a && !l.merged.contains(a)))
        })
        .collect();
    // The proof needs only the places: it runs beside the rest (the
    // validation's `equiv` runs are most of the time), with the sharing
    // the rest first tries.
    let layouts = layouts_of(program, &plan, &p, &classes, &laid);
    // Without the modular mappings, then without the sharing, in case a
    // validation size drops them.
    let unlaid = (!laid.is_empty()).then(|| layouts_of(program, &plan, &p, &classes, &[]));
    let plain = (!classes.is_empty()).then(|| layouts_of(program, &plan, &p, &[], &[]));
    let time = match rescan {
        Some(a) => super::prove::Time::Affine(a),
        None => super::prove::Time::Loops(&schedule.parallel),
    };
    let proved = |layouts: Result<Vec<super::prove::Layout>, String>| match layouts {
        Ok(l) => super::prove::prove_with(program, time, &l, sigma.as_ref()),
        Err(why) => super::prove::Proof::NotProved(why),
    };
    let watch = arrayflow_model::cancel::current();
    let (proof, emitted) = rayon::join(
        || proved(layouts),
        || {
            let _watch = arrayflow_model::cancel::enter(&watch);
            rest(
                program,
                schedule,
                temporaries,
                o,
                p,
                names,
                plan,
                (classes.clone(), laid.clone()),
                exps,
                rescan,
            )
        },
    );
    let mut e = emitted?;
    if !unfit.is_empty() {
        let mut u: Vec<String> = e.unshared.take().into_iter().collect();
        u.extend(unfit);
        e.unshared = Some(u.join("; "));
    }
    e.proof = if e.modular.is_empty() && !laid.is_empty() {
        // The modular mappings were dropped at a validation size: the
        // proof again without them (and without the sharing if it went).
        match e.shared.is_empty() && !classes.is_empty() {
            true => proved(plain.expect("classes")),
            false => proved(unlaid.expect("laid")),
        }
    } else if e.shared.is_empty() && !classes.is_empty() {
        // The sharing was dropped at a validation size: the proof again
        // without it.
        proved(plain.expect("classes"))
    } else {
        proof
    };
    Ok(e)
}

/// The contracted program from the plans, validated.
#[allow(clippy::too_many_arguments)]
fn rest(
    program: &Program,
    schedule: &Schedule,
    temporaries: &[ArrayId],
    o: &Options,
    mut p: Program,
    mut names: Names,
    plan: Vec<Plan>,
    (classes, laid): (Vec<Vec<ArrayId>>, Vec<super::modular::Laid>),
    exps: Vec<(Vec<i64>, expansion::Expansion)>,
    rescan: Option<&super::affine::AffineSchedule>,
) -> Result<Emitted, EmitError> {
    let named = |v: &[i64]| -> Vec<(String, i64)> {
        let names = program.params.iter().map(|q| q.name.clone());
        names.zip(v.iter().copied()).collect()
    };
    let body = std::mem::take(&mut p.body);
    let mut rewritten = Vec::new();
    for pl in &plan {
        rewritten.extend(pl.copy_in(&mut p, &mut names));
    }
    let mut loops = Vec::new();
    let main = rewrite(body, &plan, &mut loops);
    let (main, iterations) = match rescan {
        Some(a) => {
            let (b, it) =
                super::reschedule::body_of(&mut p, main, a).map_err(EmitError::Reschedule)?;
            (b, Some(Arc::new(it)))
        }
        None => (main, None),
    };
    rewritten.extend(main);
    for pl in &plan {
        rewritten.extend(pl.copy_out(&mut p, &mut names));
    }
    p.body = rewritten;
    super::reschedule::derive_generated_labels(&mut p.body);
    let shared: Vec<String> = classes
        .iter()
        .map(|cl| {
            let n: Vec<&str> = cl[1..]
                .iter()
                .map(|&a| program.array_decl(a).name.as_str())
                .collect();
            format!("{} in {}", n.join(", "), program.array_decl(cl[0]).name)
        })
        .collect();
    let arrays = plan
        .iter()
        .map(|pl| {
            let what = pl
                .dims
                .iter()
                .map(|&d| super::render::describe_dim(program, d, false))
                .collect();
            (
                format!(
                    "{} -> {}",
                    program.array_decl(pl.x).name,
                    p.array_decl(pl.c).name
                ),
                what,
            )
        })
        .collect();
    let sampled: Vec<Vec<(String, i64)>> = exps.iter().map(|(v, _)| named(v)).collect();
    let raw: Vec<Vec<i64>> = exps.iter().map(|(v, _)| v.clone()).collect();
    drop(exps);
    let at = vectors::validation(program, o, &raw).map_err(EmitError::Other)?;
    let scratch: Vec<String> = temporaries
        .iter()
        .map(|&a| program.array_decl(a).name.clone())
        .collect();
    // Sharing found at the samples may not hold at a validation size
    // (lifetimes that depend on the parameters): then none is emitted.
    let mut unshared = None;
    let mut unmodular = None;
    // Modular mappings likewise: without them when a validation size
    // refutes them (then the sharing alone, then neither).
    let mut attempts = vec![(classes.clone(), laid.clone())];
    if !laid.is_empty() {
        attempts.push((classes.clone(), Vec::new()));
    }
    if !classes.is_empty() {
        attempts.push((Vec::new(), Vec::new()));
    }
    for (classes, laid) in attempts {
        let mut q = p.clone();
        let mut fresh = names.clone();
        let new_names = super::modular::apply(&mut q, &laid, &mut fresh);
        let modular: Vec<String> = (laid.iter().zip(&new_names))
            .map(|(l, n)| super::modular::line(program, n, l))
            .collect();
        let mut dropped = classes.clone();
        dropped.extend(super::modular::groups(&laid));
        super::colour::apply(&mut q, &dropped);
        let mut text = crate::print::program(&q);
        let (back, diags) = crate::lower::compile_errors(&text, crate::diagnostics::FileId(0));
        let Some(mut back) = back.filter(|_| !diags.iter().any(|d| d.is_error())) else {
            return Err(EmitError::Other(format!(
                "internal error: the contracted program does not check: {diags:?}\n{text}"
            )));
        };
        let mut parallel = schedule.names(program);
        if rescan.is_some() {
            // The rescheduled loops that carry no dependence run `doall`.
            parallel = crate::codegen::mark_parallel(&mut back);
            let mut seen = std::collections::HashSet::new();
            parallel.retain(|n| seen.insert(n.clone()));
            text = crate::print::program(&back);
        }
        match validate(program, &back, &at, &sampled, &scratch, iterations.as_ref()) {
            Ok(validated) => {
                return Ok(Emitted {
                    // Set by the caller.
                    proof: super::prove::Proof::NotProved(String::new()),
                    program: back,
                    text,
                    parallel,
                    arrays,
                    sampled,
                    validated,
                    affine: rescan.map(|a| a.text.clone()),
                    iterations,
                    mse: None,
                    unfolded: None,
                    shared: if classes.is_empty() {
                        Vec::new()
                    } else {
                        shared
                    },
                    unshared,
                    modular,
                    unmodular,
                });
            }
            Err(EmitError::Other(why)) if !laid.is_empty() => {
                unmodular = Some(format!("{}: {why}", modular.join("; ")));
            }
            Err(EmitError::Other(why)) if !classes.is_empty() => {
                unshared = Some(format!("{}: {why}", shared.join("; ")));
            }
            Err(e) => return Err(e),
        }
    }
    unreachable!("the attempt without sharing returns")
}

/// Every array written, laid out as its plan says (or kept, or sharing a
/// class's storage), for the proof; None when a place overflows.
fn layouts_of(
    program: &Program,
    plans: &[Plan],
    p: &Program,
    classes: &[Vec<ArrayId>],
    laid: &[super::modular::Laid],
) -> Result<Vec<super::prove::Layout>, String> {
    use super::prove::Layout;
    let overflow = || "a place overflowed".to_string();
    let class_of = |a: ArrayId| classes.iter().find(|cl| cl.contains(&a));
    let laid_of = |a: ArrayId| laid.iter().find(|l| l.array == a || l.merged.contains(&a));
    let mut layouts = Vec::new();
    for a in crate::codegen::written_arrays(program) {
        if let Some(l) = laid_of(a) {
            if l.array == a {
                layouts.push(super::modular::layout(program, l)?);
            }
            continue;
        }
        layouts.push(match (plans.iter().find(|pl| pl.x == a), class_of(a)) {
            (Some(pl), _) => pl.layout(program, p).ok_or_else(overflow)?,
            (None, Some(cl)) if cl[0] == a => Layout::shared(program, cl).ok_or_else(overflow)?,
            (None, Some(_)) => continue,
            (None, None) => Layout::identity(program, a),
        });
    }
    Ok(layouts)
}

/// `back` compared with `program` by `equiv` (3 seeds, `doall` shuffled,
/// `scratch`'s final contents not compared) at the validation vectors
/// `at`, as `codegen` validates MSE; at the samples only when none of
/// those could be compared (the original fails there). The vectors
/// compared.
pub(crate) fn validate(
    program: &Program,
    back: &Program,
    at: &[Vec<(String, i64)>],
    samples: &[Vec<(String, i64)>],
    scratch: &[String],
    iterations: Option<&Arc<IterationMap>>,
) -> Result<Vec<Vec<(String, i64)>>, EmitError> {
    for vs in [at, samples] {
        // Every size on its own thread; the first failure in order is
        // reported, as a sequential loop would.
        let watch = arrayflow_model::cancel::current();
        let verdicts: Vec<_> = vs
            .par_iter()
            .map(|v| {
                let _watch = arrayflow_model::cancel::enter(&watch);
                let mut eo = crate::equiv::EquivOptions {
                    params: v.clone(),
                    seeds: 3,
                    scratch: scratch.to_vec(),
                    ..Default::default()
                };
                eo.run.iterations = iterations.cloned();
                crate::equiv::equiv(program, back, &eo)
            })
            .collect();
        let mut compared = Vec::new();
        for (v, verdict) in vs.iter().zip(verdicts) {
            use crate::equiv::Compared;
            match Compared::of(verdict) {
                Compared::Agree => compared.push(v.clone()),
                // A run limit (steps, cells) in the contracted program's
                // run, e.g. whole-array copies over declared sizes much
                // larger than the analysed ones, or the original itself
                // failing: not compared there; the header lists the sizes
                // compared.
                Compared::NotMade(_) => {}
                Compared::Differ(m) => {
                    return Err(EmitError::Other(format!(
                        "the contracted program differs from the original at {}: {}{} (the mapping found at the samples does not hold there)",
                        show(v),
                        m.what,
                        m.failure.map(|f| format!(" fails: {f}")).unwrap_or_default()
                    )))
                }
                Compared::Broken(message) => {
                    return Err(EmitError::Other(format!(
                        "internal error: the contracted program: {message}"
                    )))
                }
            }
        }
        if !compared.is_empty() {
            return Ok(compared);
        }
    }
    Ok(Vec::new())
}

fn show(v: &[(String, i64)]) -> String {
    if v.is_empty() {
        return "no parameters".into();
    }
    v.iter()
        .map(|(n, x)| format!("{n}={x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `#` header: what was contracted, and where it was checked.
pub fn header(e: &Emitted) -> String {
    let sizes = crate::codegen::check::tuples;
    let checked = if e.validated.is_empty() {
        "checked by equiv nowhere: at every size tried the original fails or a run reaches an \
         interpreter limit"
            .to_string()
    } else {
        format!(
            "checked by equiv with the doall loops shuffled at {}",
            sizes(&e.validated)
        )
    };
    let mut h = e.affine.as_ref().map_or(String::new(), |a| match e.iterations {
        None => format!("# affine schedule {a}: ordering the operations as this doall marking does at every sample\n"),
        Some(_) => format!("# affine schedule {a}: the loops rescheduled to its order (each statement's original counters recovered from the new ones), those carrying no dependence doall\n# compare with `arrayflow equiv ORIGINAL THIS --schedule SCHEDULE`: the schedule names this program's operations as the original's\n"),
    });
    h += &format!(
        "# storage under a schedule: parallel {}\n# mapping found at {}; {checked}\n# {}\n",
        if e.parallel.is_empty() {
            "none".to_string()
        } else {
            e.parallel.join(", ")
        },
        sizes(&e.sampled),
        proof_line(e),
    );
    if let Some(m) = &e.mse {
        h.push_str(
            "# paired with maximal static expansion, first (then the contraction of its output):\n",
        );
        for l in &m.lines {
            h.push_str(&format!("# {l}\n"));
        }
    }
    if let Some(u) = &e.unfolded {
        h.push_str(
            "# buffers indexed modulo their extent unfolded, first (then the contraction of that program):\n",
        );
        for l in &u.lines {
            h.push_str(&format!("# {l}\n"));
        }
    }
    if e.arrays.is_empty() {
        h.push_str(
            "# no array needs expansion: the original storage with the loops marked doall\n",
        );
    }
    for (a, dims) in &e.arrays {
        h.push_str(&format!("# {a}: {}\n", dims.join(", ")));
    }
    for s in &e.shared {
        h.push_str(&format!(
            "# temporaries sharing storage: {s} (never live together on a cell)\n"
        ));
    }
    for m in &e.modular {
        h.push_str(&format!(
            "# temporary in fewer cells: {m} (cells live together never share a place)\n"
        ));
    }
    if let Some(u) = &e.unmodular {
        h.push_str(&format!(
            "# temporaries not in fewer cells after all: {u}\n"
        ));
    }
    if let Some(u) = &e.unshared {
        h.push_str(&format!(
            "# temporaries not sharing storage after all: {u}\n"
        ));
    }
    h
}

/// What the proof says, in the header.
fn proof_line(e: &Emitted) -> String {
    let unproved_mse = e.mse.as_ref().and_then(|m| m.unproved.as_ref());
    if let Some(why) = unproved_mse {
        return format!(
            "not proved for every parameter value: the maximal static expansion's labels are not proved static: {why}"
        );
    }
    let mse = match (&e.mse, &e.unfolded) {
        (Some(_), _) => {
            "the maximal static expansion's labels static, and in its output ".to_string()
        }
        (None, Some(u)) => format!(
            "the original the unfolded program modulo the extents ({} exact tests), and in it ",
            u.tests
        ),
        (None, None) => String::new(),
    };
    match &e.proof {
        super::prove::Proof::Proved { tests } => {
            let loops = if e.iterations.is_some() {
                "; the rescheduled loops marked `doall` carry no dependence by the exact tests, at any size"
            } else {
                ""
            };
            format!("proved for every parameter value: {mse}each read sees its source's place, which nothing the schedule may run in between overwrites ({tests} exact tests){loops}")
        }
        super::prove::Proof::NotProved(why) => {
            format!("not proved for every parameter value: {why}")
        }
    }
}

/// Adds `new`'s dimensions to `into` (a fold keeps the largest modulus).
fn merge(into: &mut Vec<Dim>, new: &[Dim]) {
    for &d in new {
        match into.iter_mut().find(|x| x.counter() == d.counter()) {
            Some(Dim::Fold(_, m)) => {
                if let Dim::Fold(_, n) = d {
                    *m = (*m).max(n);
                }
            }
            Some(_) => {}
            None => into.push(d),
        }
    }
}

/// The points of one sample: every read of a contracted array, with its
/// sources' places, and every cell's last writer.
fn gather(
    program: &Program,
    exp: &expansion::Expansion,
    schedule: &Schedule,
    dims: &[Vec<Dim>],
    params: &[i64],
    out: &mut [Gathered],
) -> Result<(), EmitError> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let order = Order::new(program, f, schedule);
    let ranges = mapping::loop_ranges(program, exp, &order);
    let raw = |op: u32, d: Dim| mapping::raw(&order, &ranges, op, d);
    let with_params = |x: &[i64]| -> Vec<i64> { x.iter().chain(params).copied().collect() };
    for r in flow.iter() {
        let a = r.array().index();
        let ds = &dims[a];
        if ds.is_empty() {
            continue;
        }
        let op = f.slots[r.index()].op;
        let entry = out[a]
            .reads
            .entry((r.site(), r.access()))
            .or_insert_with(|| (vec![Vec::new(); ds.len()], Vec::new()));
        let mut place: Option<Vec<i64>> = None;
        for &src in flow.source_ops(r.index()) {
            let v: Vec<i64> = ds.iter().map(|&d| raw(src, d)).collect();
            if place.as_ref().is_some_and(|p| *p != v) {
                return Err(EmitError::Other(format!(
                    "{} has sources at two places at {}",
                    crate::codegen::read_name::read_of(program, r.site(), r.access()),
                    show(f.params.as_slice())
                )));
            }
            place = Some(v);
        }
        let x = with_params(f.op_iter(op));
        match place {
            Some(v) => {
                for (k, y) in v.into_iter().enumerate() {
                    entry.0[k].push((x.clone(), y));
                }
            }
            None => entry.1.push(x),
        }
    }
    for (a, ds) in dims.iter().enumerate() {
        for (k, d) in ds.iter().enumerate() {
            let (lo, extent) = ranges[d.counter().index()];
            if extent > 0 {
                out[a].ranges[k].0.push((params.to_vec(), lo));
                out[a].ranges[k].1.push((params.to_vec(), lo + extent - 1));
            }
        }
    }
    let mut last: BTreeMap<u32, u32> = BTreeMap::new();
    for x in 0..f.n_accs() as u32 {
        if f.is_write(x) {
            last.insert(f.acc_cell[x as usize], f.op(x));
        }
    }
    for (cell, op) in last {
        let Some((a, index)) = f.cells.locate(cell as usize) else {
            continue;
        };
        for (k, &d) in dims[a.index()].iter().enumerate() {
            out[a.index()].last[k].push((with_params(&index), raw(op, d)));
        }
    }
    Ok(())
}

/// An affine function over `vars` as an expression.
fn fitted(fit: &Fit, vars: &[Var]) -> Option<Expr> {
    fitted_affine(fit, vars).map(|a| expr_of(&a))
}

fn fitted_affine(fit: &Fit, vars: &[Var]) -> Option<Affine> {
    let mut a = Affine::constant(fit.1);
    for (&c, &v) in fit.0.iter().zip(vars) {
        if c != 0 {
            a = a.checked_add(&Affine::var(v).checked_scale(c)?)?;
        }
    }
    Some(a)
}

fn params(program: &Program) -> Vec<Var> {
    (0..program.params.len())
        .map(|q| Var::Param(ParamId(q as u32)))
        .collect()
}

/// One contracted array: the original `x`, the new `c`, its dimensions and
/// the fitted places.
struct Plan {
    x: ArrayId,
    c: ArrayId,
    dims: Vec<Dim>,
    /// Per added dimension: the loop's bounds.
    bounds: Vec<(Bound, Bound)>,
    /// Per read access: None (the original array) or fits per dimension.
    reads: BTreeMap<(Site, usize), Option<Vec<Fit>>>,
    /// Per dimension, the last writer's place over (cell, params).
    last: Vec<Option<Fit>>,
    loops_of: Vec<Vec<CounterId>>,
    n_stmts: usize,
    params: Vec<Var>,
}

impl Plan {
    fn new(
        src: &Program,
        p: &mut Program,
        names: &mut Names,
        x: ArrayId,
        dims: &[Dim],
        g: &Gathered,
    ) -> Result<Plan, EmitError> {
        let decl = src.array_decl(x).clone();
        let fors = for_nodes(src);
        let mut bounds = Vec::new();
        let mut extra = Vec::new();
        for &d in dims {
            let Some((lo, hi)) = fors.get(&d.counter()).cloned() else {
                return Err(EmitError::Other(format!(
                    "`{}` would be indexed by the `while` loop `{}`",
                    decl.name,
                    src.counter_decl(d.counter()).name
                )));
            };
            // Bounds in other counters: the range the loop's counter spans
            // at the samples, fitted in the parameters.
            let (lo, hi) = if lo.affine.uses_counters() || hi.affine.uses_counters() {
                let k = bounds.len();
                let fit = |pts: &Points| {
                    let a = crate::fit::simplest(pts, 0)?;
                    let e = fitted(&a, &params(src))?;
                    let affine = Affine::from_expr(&e)?;
                    Some(Bound { expr: e, affine })
                };
                match (fit(&g.ranges[k].0), fit(&g.ranges[k].1)) {
                    (Some(l), Some(h)) => (l, h),
                    _ => {
                        return Err(EmitError::Other(format!(
                            "`{}` would be expanded along `{}`, whose range at the samples is no affine function of the parameters",
                            decl.name,
                            src.counter_decl(d.counter()).name
                        )))
                    }
                }
            } else {
                (lo, hi)
            };
            extra.push(match d {
                Dim::Expand(_) => Range {
                    lo: lo.clone(),
                    hi: hi.clone(),
                },
                Dim::Fold(_, m) => Range {
                    lo: constant_bound(0),
                    hi: constant_bound(m - 1),
                },
            });
            bounds.push((lo, hi));
        }
        p.arrays.push(Array {
            name: names.fresh(&format!("{}_c", decl.name)),
            elem: decl.elem,
            dims: decl.dims.iter().cloned().chain(extra).collect(),
            span: Span::NONE,
            local: false,
        });
        let c = ArrayId(p.arrays.len() as u32 - 1);
        let loops_of = crate::dataflow::render::site_loops(src);
        let mut reads = BTreeMap::new();
        // How far below and above its loop's range a read of an initial
        // value goes in each expanded dimension (it reads the copy-in
        // there), at the samples.
        let mut margins = vec![(0i64, 0i64); dims.len()];
        for (&(site, access), (points, initial)) in &g.reads {
            if points[0].is_empty() {
                reads.insert((site, access), None);
                continue;
            }
            let n = loops_of[site_index(src, site)].len();
            let fits = points
                .iter()
                .map(|pts| crate::fit::simplest(pts, n))
                .collect::<Option<Vec<Fit>>>()
                .ok_or_else(|| {
                    EmitError::Other(format!(
                        "read {access} of {}: the place of its value in `{}` is no affine function of its counters and the parameters",
                        src.site_name(site),
                        decl.name
                    ))
                })?;
            for x in initial {
                let at = &x[n..];
                for (k, fit) in fits.iter().enumerate() {
                    let (los, his) = &g.ranges[k];
                    let find = |pts: &Points| pts.iter().find(|p| p.0 == at).map(|p| p.1);
                    if let (Some(lo), Some(hi)) = (find(los), find(his)) {
                        let v = fit.0.iter().zip(x).fold(fit.1, |acc, (c, v)| {
                            acc.saturating_add(c.saturating_mul(*v))
                        });
                        margins[k].0 = margins[k].0.max(lo.saturating_sub(v));
                        margins[k].1 = margins[k].1.max(v.saturating_sub(hi));
                    }
                }
            }
            reads.insert((site, access), Some(fits));
        }
        for (k, &(below, above)) in margins.iter().enumerate() {
            if let Dim::Expand(_) = dims[k] {
                let widen = |b: &Bound, by: i64| {
                    let affine = b.affine.checked_add(&Affine::constant(by))?;
                    Some(Bound {
                        expr: expr_of(&affine),
                        affine,
                    })
                };
                let r = &mut p.arrays[c.index()].dims[decl.dims.len() + k];
                if let (Some(lo), Some(hi)) = (widen(&r.lo, -below), widen(&r.hi, above)) {
                    *r = Range { lo, hi };
                }
            }
        }
        let last = g
            .last
            .iter()
            .map(|pts| {
                if pts.is_empty() {
                    return Ok(None);
                }
                crate::fit::simplest(pts, decl.dims.len())
                    .map(Some)
                    .ok_or_else(|| {
                        EmitError::Other(format!(
                            "the final value of `{}`'s cells: its place is no affine function of the cell and the parameters",
                            decl.name
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Plan {
            x,
            c,
            dims: dims.to_vec(),
            bounds,
            reads,
            last,
            loops_of,
            n_stmts: src.stmts().len(),
            params: params(src),
        })
    }

    /// Where the contracted program's accesses of `x` go, for the proof
    /// (`p`: the program with `c` declared).
    fn layout(&self, src: &Program, p: &Program) -> Option<super::prove::Layout> {
        let n = src.array_decl(self.x).dims.len();
        let extra = &p.array_decl(self.c).dims[n..];
        let folds = self
            .dims
            .iter()
            .map(|d| match d {
                Dim::Expand(_) => None,
                Dim::Fold(_, m) => Some(*m),
            })
            .collect();
        let ranges = self
            .dims
            .iter()
            .zip(extra)
            .map(|(d, r)| match d {
                Dim::Expand(_) => Some((r.lo.affine.clone(), r.hi.affine.clone())),
                Dim::Fold(..) => None,
            })
            .collect();
        let mut writes = std::collections::HashMap::new();
        let mut reads = std::collections::HashMap::new();
        for s in src.stmts() {
            let loops = &self.loops_of[s.id.index()];
            if s.write().is_some_and(|(a, _)| a.array == self.x) {
                let place = (0..self.dims.len())
                    .map(|k| {
                        let l = self.dims[k].counter();
                        if loops.contains(&l) {
                            Affine::var(Var::Counter(l))
                        } else {
                            self.bounds[k].0.affine.clone()
                        }
                    })
                    .collect();
                writes.insert(s.id, place);
            }
            let vars: Vec<Var> = loops
                .iter()
                .map(|&c| Var::Counter(c))
                .chain(self.params.iter().copied())
                .collect();
            for (k, a) in s.reads().into_iter().enumerate() {
                if a.array != self.x {
                    continue;
                }
                let place = match self.reads.get(&(Site::Stmt(s.id), k)) {
                    Some(Some(fits)) => Some(
                        fits.iter()
                            .map(|f| fitted_affine(f, &vars))
                            .collect::<Option<Vec<_>>>()?,
                    ),
                    _ => None,
                };
                reads.insert((s.id, k), place);
            }
        }
        let cells: Vec<Var> = (0..n)
            .map(|k| Var::Counter(super::prove::cell(k)))
            .chain(self.params.iter().copied())
            .collect();
        let last = self
            .last
            .iter()
            .map(|f| f.as_ref().and_then(|f| fitted_affine(f, &cells)))
            .collect::<Option<Vec<_>>>();
        Some(super::prove::Layout {
            array: self.x,
            folds,
            ranges,
            writes,
            reads,
            last,
            shared: Vec::new(),
            modular: None,
        })
    }

    /// `index % d` for a folded dimension.
    fn reduce(&self, k: usize, index: Expr) -> Expr {
        match self.dims[k] {
            Dim::Expand(_) => index,
            Dim::Fold(_, m) => bin(BinOp::Rem, index, Expr::int(m)),
        }
    }

    /// The place a write of statement `s` (inside `loops`) goes to.
    fn write_place(&self, loops: &[CounterId]) -> Vec<Expr> {
        (0..self.dims.len())
            .map(|k| {
                let l = self.dims[k].counter();
                let raw = if loops.contains(&l) {
                    counter(l)
                } else {
                    self.bounds[k].0.expr.clone()
                };
                self.reduce(k, raw)
            })
            .collect()
    }

    /// The place read `(site, access)` goes to; None: the original array.
    fn read_place(&self, site: Site, access: usize) -> Option<Vec<Expr>> {
        let fits = self.reads.get(&(site, access))?.as_ref()?;
        let k = match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.n_stmts + c.index(),
        };
        let vars: Vec<Var> = self.loops_of[k]
            .iter()
            .map(|&c| Var::Counter(c))
            .chain(self.params.iter().copied())
            .collect();
        fits.iter()
            .enumerate()
            .map(|(d, fit)| fitted(fit, &vars).map(|x| self.reduce(d, x)))
            .collect()
    }

    fn copy_in(&self, p: &mut Program, names: &mut Names) -> Vec<Node> {
        let x = self.x;
        let c = self.c;
        let dims = p.array_decl(c).dims.clone();
        let n = p.array_decl(x).dims.len();
        nest(p, names, &dims, |subs, names| {
            vec![Node::Stmt(Stmt::copy(
                names.fresh("copy_in"),
                access(c, subs.to_vec()),
                read(x, subs[..n].to_vec()),
            ))]
        })
    }

    fn copy_out(&self, p: &mut Program, names: &mut Names) -> Vec<Node> {
        if self.last.iter().any(Option::is_none) {
            return Vec::new();
        }
        let (x, c) = (self.x, self.c);
        let dims = p.array_decl(x).dims.clone();
        let n = dims.len();
        let extra: Vec<Range> = p.array_decl(c).dims[n..].to_vec();
        nest(p, names, &dims, |subs, names| {
            let vars: Vec<Var> = subs
                .iter()
                .map(|s| match s.kind {
                    ExprKind::Counter(k) => Var::Counter(k),
                    _ => Var::Counter(CounterId(0)),
                })
                .chain(self.params.iter().copied())
                .collect();
            let mut place = subs.to_vec();
            let mut guard: Option<Cond> = None;
            for (k, fit) in self.last.iter().enumerate() {
                let Some(at) = fit.as_ref().and_then(|f| fitted(f, &vars)) else {
                    return Vec::new();
                };
                if let Dim::Expand(_) = self.dims[k] {
                    let r = &extra[k];
                    let inside = Cond::And(
                        Box::new(Cond::Cmp(CmpOp::Le, r.lo.expr.clone(), at.clone())),
                        Box::new(Cond::Cmp(CmpOp::Le, at.clone(), r.hi.expr.clone())),
                    );
                    guard = Some(match guard {
                        None => inside,
                        Some(g) => Cond::And(Box::new(g), Box::new(inside)),
                    });
                }
                place.push(self.reduce(k, at));
            }
            let stmt = Node::Stmt(Stmt::copy(
                names.fresh("copy_out"),
                access(x, subs.to_vec()),
                read(c, place),
            ));
            match guard {
                None => vec![stmt],
                Some(cond) => vec![Node::If(If {
                    branches: vec![(
                        Condition {
                            id: CondId(0),
                            name: names.fresh("in_range"),
                            generated: false,
                            cond,
                            span: Span::NONE,
                        },
                        vec![stmt],
                    )],
                    otherwise: None,
                    span: Span::NONE,
                })],
            }
        })
    }
}

fn constant_bound(v: i64) -> Bound {
    Bound {
        expr: Expr::int(v),
        affine: Affine::constant(v),
    }
}

fn site_index(p: &Program, site: Site) -> usize {
    match site {
        Site::Stmt(s) => s.index(),
        Site::Cond(c) => p.stmts().len() + c.index(),
    }
}

/// The bounds of every `for` loop by counter.
fn for_nodes(p: &Program) -> BTreeMap<CounterId, (Bound, Bound)> {
    super::nodes::fors(&p.body)
        .into_iter()
        .map(|f| (f.counter, (f.lower.clone(), f.upper.clone())))
        .collect()
}

/// A loop nest over the ranges `dims` around what `body` makes of its
/// counters (nothing when it makes nothing).
fn nest(
    p: &mut Program,
    names: &mut Names,
    dims: &[Range],
    body: impl FnOnce(&[Expr], &mut Names) -> Vec<Node>,
) -> Vec<Node> {
    let mut counters = Vec::with_capacity(dims.len());
    for _ in dims {
        let name = names.fresh("c");
        counters.push(CounterId(p.counters.len() as u32));
        p.counters.push(Counter {
            name,
            kind: CounterKind::For,
            generated: false,
            span: Span::NONE,
        });
    }
    let subs: Vec<Expr> = counters.iter().map(|&c| counter(c)).collect();
    let inner = body(&subs, names);
    if inner.is_empty() {
        return inner;
    }
    dims.iter()
        .zip(counters)
        .rev()
        .fold(inner, |nodes, (r, counter)| {
            vec![Node::For(For {
                counter,
                lower: r.lo.clone(),
                upper: r.hi.clone(),
                step: 1,
                parallel: false,
                body: nodes,
                span: Span::NONE,
            })]
        })
}

/// Marks the schedule's loops `doall` and every other `for` loop `do`.
fn set_parallel(nodes: &mut [Node], s: &Schedule) {
    super::nodes::each_mut(nodes, &mut |n| {
        if let Node::For(f) = n {
            f.parallel = s.is_parallel(f.counter);
        }
    });
}

/// The body with contracted arrays' accesses rewritten; `loops` is the
/// stack of counters around.
fn rewrite(nodes: Vec<Node>, plans: &[Plan], loops: &mut Vec<CounterId>) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        out.push(match n {
            Node::Stmt(mut s) => {
                rewrite_stmt(&mut s, plans, loops);
                Node::Stmt(s)
            }
            Node::For(mut f) => {
                loops.push(f.counter);
                f.body = rewrite(f.body, plans, loops);
                loops.pop();
                Node::For(f)
            }
            Node::While(mut w) => {
                loops.push(w.counter);
                rewrite_cond_of(&mut w.cond, plans);
                w.body = rewrite(w.body, plans, loops);
                loops.pop();
                Node::While(w)
            }
            Node::If(mut i) => {
                for (c, b) in &mut i.branches {
                    rewrite_cond_of(c, plans);
                    *b = rewrite(std::mem::take(b), plans, loops);
                }
                i.otherwise = i.otherwise.map(|b| rewrite(b, plans, loops));
                Node::If(i)
            }
        });
    }
    out
}

/// The access read `k` of `site` becomes, if its array is contracted.
fn read_access(plans: &[Plan], site: Site, k: usize, a: &Access) -> Option<Access> {
    let pl = plans.iter().find(|pl| pl.x == a.array)?;
    let place = pl.read_place(site, k)?;
    let mut n = a.clone();
    n.array = pl.c;
    n.subscripts.extend(place.into_iter().map(Subscript::new));
    Some(n)
}

fn rewrite_cond_of(c: &mut Condition, plans: &[Plan]) {
    let site = Site::Cond(c.id);
    crate::codegen::rewrite_cond(&mut c.cond, &mut 0, &mut |k, a| {
        read_access(plans, site, k, a)
    });
}

fn rewrite_stmt(s: &mut Stmt, plans: &[Plan], loops: &[CounterId]) {
    let site = Site::Stmt(s.id);
    let mut k = 0;
    match &mut s.kind {
        StmtKind::Assign { target, op, value } => {
            let update_read = op.map(|_| {
                k = 1;
                read_access(plans, site, 0, target)
            });
            let mut t = target.clone();
            for sub in &mut t.subscripts {
                crate::codegen::rewrite_expr(&mut sub.expr, &mut k, &mut |i, a| {
                    read_access(plans, site, i, a)
                });
            }
            crate::codegen::rewrite_expr(value, &mut k, &mut |i, a| read_access(plans, site, i, a));
            let w = match plans.iter().find(|pl| pl.x == t.array) {
                Some(pl) => {
                    let mut w = t.clone();
                    w.array = pl.c;
                    w.subscripts
                        .extend(pl.write_place(loops).into_iter().map(Subscript::new));
                    w
                }
                None => t.clone(),
            };
            if let Some(r) = update_read {
                // The compound's read goes where its value is, which may
                // not be where the write goes.
                let r = r.unwrap_or_else(|| t.clone());
                if r != w {
                    let o = op.take().unwrap_or(BinOp::Add);
                    let v = std::mem::replace(value, Expr::int(0));
                    *value = bin(o, Expr::new(ExprKind::Access(r), Span::NONE), v);
                }
            }
            *target = w;
        }
        StmtKind::Call { args, .. } => {
            for a in args {
                crate::codegen::rewrite_expr(a, &mut k, &mut |i, x| read_access(plans, site, i, x));
            }
        }
    }
}
