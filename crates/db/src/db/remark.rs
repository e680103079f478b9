//! Remarks: facts about a program that an editor shows beside it, not
//! problems. For every loop, the dependences it carries (exact tests) and
//! whether it is parallel as written or after expansion (σ at the analysed
//! sizes); the loops private copies make parallel; each array's classes of
//! live writes.
//!
//! They are made per kernel ([`kernel_remarks`], spans relative to the
//! kernel), so an edit writes again only the remarks of the kernels it
//! touched; [`remarks`] puts them in the file's positions. [`whole_file`]
//! makes the same list from the whole program at once, the plain way: the
//! reference tests/db.rs compares with.

use super::kernel::named_as_in_file;
use super::privatize::kernel_privatization;
use super::{
    deps, ide, kernel_expansion, kernel_status, kernels, loop_status, parse, settings, Kernel,
    LoopStatus, Names, Placement, SourceFile,
};
use crate::model::{ArrayId, Program, Span};

/// How much a remark matters to an editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// A fact, e.g. a dependence a loop carries.
    Information,
    /// Something the user may act on, e.g. a loop that is parallel.
    Hint,
}

/// An analysis remark: not a problem, a fact about the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    /// Information or a hint.
    pub level: Level,
    /// What it is about.
    pub span: Span,
    /// The remark.
    pub message: String,
}

impl Remark {
    /// The remark in the file's positions, from a kernel's relative ones.
    fn placed(&self, place: &Placement) -> Remark {
        Remark {
            span: place.absolute(self.span),
            ..self.clone()
        }
    }
}

/// The most dependences listed per loop; the rest are counted.
const LISTED: usize = 6;

/// A kernel's remarks, in spans relative to its start.
#[derive(Debug, Default)]
pub struct KernelRemarks {
    /// On its loops: the dependences each carries, whether it is parallel.
    pub loops: Vec<Remark>,
    /// On its loops that private copies make parallel.
    pub private: Vec<Remark>,
    /// Per array it writes, the remark on the array's declaration (which is
    /// outside the kernel).
    pub classes: Vec<(ArrayId, String)>,
}

/// The remarks of one kernel: depends on its local program, the names the
/// file gives its sites, and the settings; not on where it sits.
#[salsa::tracked(returns(ref), no_eq)]
pub fn kernel_remarks<'db>(db: &'db dyn salsa::Database, kernel: Kernel<'db>) -> KernelRemarks {
    let named = named_as_in_file(&kernel.program(db).program, || kernel.first(db));
    let program: &Program = &named;
    let sizes = ide::sizes(&settings(db), program);
    let names = Names::new(program);
    let spans = ide::loop_spans(program);
    let mut loops = Vec::new();
    for l in kernel_status(db, kernel, true, true, |s| s, |c| c) {
        let span = spans[l.counter.index()];
        loop_remarks(program, &names, &sizes, &l, span, &mut loops);
    }
    let mut private = Vec::new();
    if let Ok((found, exact)) = kernel_privatization(db, kernel) {
        for (c, message) in found {
            private.push(private_remark(spans[c.index()], message, *exact, &sizes));
        }
    }
    let classes = match kernel_expansion(db, kernel) {
        Ok(e) => (e.classes.iter())
            .map(|&(a, classes, written, most)| {
                let name = &program.array_decl(a).name;
                let k = kernel.index(db);
                (a, class_remark(name, classes, written, most, k, &sizes))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    KernelRemarks {
        loops,
        private,
        classes,
    }
}

/// The remarks of a file: every kernel's loop remarks, then every
/// privatization remark, then every array's classes, in kernel order.
#[salsa::tracked(no_eq)]
pub fn remarks(db: &dyn salsa::Database, file: SourceFile) -> Vec<Remark> {
    let Some(program) = &parse(db, file).program else {
        return Vec::new();
    };
    let all: Vec<(Placement, &KernelRemarks)> = (kernels(db, file).iter())
        .map(|&k| (k.place(db), kernel_remarks(db, k)))
        .collect();
    let mut out = Vec::new();
    for (place, r) in &all {
        out.extend(r.loops.iter().map(|r| r.placed(place)));
    }
    let assumes = super::premises(db, file);
    for (place, r) in &all {
        out.extend(r.private.iter().map(|r| assuming(r.placed(place), assumes)));
    }
    for (_, r) in &all {
        out.extend(r.classes.iter().map(|(a, message)| Remark {
            level: Level::Hint,
            span: program.array_decl(*a).span,
            message: message.clone(),
        }));
    }
    out
}

/// The remarks of a file's loops that private copies make parallel, at
/// their loop headers.
pub fn private_remarks(db: &dyn salsa::Database, file: SourceFile) -> Vec<Remark> {
    let mut out = Vec::new();
    for &k in kernels(db, file) {
        let place = k.place(db);
        out.extend(
            kernel_remarks(db, k)
                .private
                .iter()
                .map(|r| assuming(r.placed(&place), super::premises(db, file))),
        );
    }
    out
}

/// A privatization remark with what its verdict assumes beyond the model
/// (`super::premises`), so that "for every parameter value" never hides
/// an assumption the user did not see.
fn assuming(mut r: Remark, premises: &[String]) -> Remark {
    for p in premises {
        r.message.push_str(&format!("; assumes {p}"));
    }
    r
}

/// [`remarks`] from the whole program and [`loop_status`], with no
/// per-kernel step of its own: the reference the tests compare with.
pub fn whole_file(db: &dyn salsa::Database, file: SourceFile) -> Vec<Remark> {
    let Some(program) = &parse(db, file).program else {
        return Vec::new();
    };
    let sizes = ide::sizes(&settings(db), program);
    let names = Names::new(program);
    let spans = ide::loop_spans(program);
    let mut out = Vec::new();
    for l in loop_status(db, file) {
        loop_remarks(
            program,
            &names,
            &sizes,
            &l,
            spans[l.counter.index()],
            &mut out,
        );
    }
    let ks = kernels(db, file);
    for &k in ks {
        let place = k.place(db);
        if let Ok((found, exact)) = kernel_privatization(db, k) {
            for (c, message) in found {
                let span = spans[place.global_counter(*c).index()];
                out.push(private_remark(span, message, *exact, &sizes));
            }
        }
    }
    for (k, &kern) in ks.iter().enumerate() {
        let Ok(e) = kernel_expansion(db, kern) else {
            continue;
        };
        for &(a, classes, written, most) in &e.classes {
            let decl = program.array_decl(a);
            out.push(Remark {
                level: Level::Hint,
                span: decl.span,
                message: class_remark(&decl.name, classes, written, most, k, &sizes),
            });
        }
    }
    out
}

/// The remarks on one loop: the dependences it carries (the first
/// [`LISTED`], then a count), and whether it is parallel.
fn loop_remarks(
    program: &Program,
    names: &Names,
    sizes: &str,
    l: &LoopStatus,
    span: Span,
    out: &mut Vec<Remark>,
) {
    let name = &program.counter_decl(l.counter).name;
    let mut push = |level, message| {
        out.push(Remark {
            level,
            span,
            message,
        })
    };
    for d in l.deps.iter().take(LISTED) {
        let doall = if l.doall { "; it is marked doall" } else { "" };
        push(
            Level::Information,
            format!(
                "loop {name} carries {}{doall}",
                super::describe_dep(program, names, d)
            ),
        );
    }
    if l.deps.len() > LISTED {
        push(
            Level::Information,
            format!(
                "loop {name} carries {} more dependences",
                l.deps.len() - LISTED
            ),
        );
    }
    if l.deps_failed {
        push(
            Level::Information,
            format!("loop {name}: its dependences were not computed: over the memory budget"),
        );
        return;
    }
    let arrays = |deps: &[deps::CarriedDep]| super::dep_arrays(program, deps);
    match &l.flows {
        _ if l.deps.is_empty() => push(Level::Hint, format!("loop {name} is parallel")),
        // σ at the analysed sizes: a fact there, not proved for others.
        _ if l.after_mse == Some(false) => push(
            Level::Information,
            format!(
                "after expanding {}, loop {name} is parallel (maximal static expansion {sizes}; \
                 not proved for other sizes)",
                arrays(&l.deps)
            ),
        ),
        Some(f) if f.is_empty() => push(
            Level::Information,
            format!(
                "after expanding {}, loop {name} is parallel: no value flows between \
                 its iterations {sizes} (not proved for other sizes)",
                arrays(&l.deps)
            ),
        ),
        _ => {}
    }
}

/// A loop private copies make parallel, for every parameter value when
/// `exact`, else at the analysed sizes: a hint (an editor offers to apply
/// it) only in the first case; in the second it is information.
fn private_remark(span: Span, message: &str, exact: bool, sizes: &str) -> Remark {
    let (level, at) = if exact {
        (Level::Hint, "for every parameter value".to_string())
    } else {
        (
            Level::Information,
            format!("{sizes} (not proved for others)"),
        )
    };
    Remark {
        level,
        span,
        message: format!("{message} {at}"),
    }
}

/// An array's classes of live writes in kernel `k` (from 0).
fn class_remark(
    name: &str,
    classes: u64,
    written: u64,
    most: u32,
    k: usize,
    sizes: &str,
) -> String {
    format!(
        "{name}: {classes} classes of live writes over {written} written cells \
         (expansion ×{most} at most per cell) in kernel {} {sizes}",
        k + 1
    )
}
