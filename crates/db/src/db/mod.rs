//! The incremental analysis database (salsa).
//!
//! Inputs: [`SourceFile`] (path and text) and the singleton [`Settings`]
//! (parameter values, `while` trips, the budget). Tracked queries, cheapest
//! first:
//!
//! - [`parse`]: the whole front end (`lower::compile`) on one file: the
//!   program and its diagnostics. Re-runs on every edit of the file (it is
//!   linear and fast).
//! - [`kernels`]: the file cut into kernels ([`kernel`]), each a salsa
//!   tracked struct whose `program` field is the kernel's local program.
//!   Re-runs on every edit; unchanged kernels keep an equal field, so what
//!   was computed from them stays valid.
//! - [`kernel_flow`]: σ of one kernel (its local program with entry writes
//!   and exit reads, [`kernel::augment`]). Re-runs only when that kernel's
//!   text, the declarations or the settings change.
//! - [`kernel_loops`]: the flow dependences each loop of a kernel carries
//!   by σ (value-based, at the analysed sizes); [`kernel_deps`]: the
//!   memory-based dependences each carries, by the exact tests (symbolic).
//! - [`remark::kernel_remarks`]: the remarks on one kernel's loops and
//!   arrays, in relative spans and the file's names.
//! - [`analysis_diagnostics`], [`remarks`]: per file, from all of the above,
//!   in the file's ids and positions.
//!
//! Per-kernel results hold only local ids and relative spans; the per-file
//! steps translate them with the kernel's [`Placement`]. σ across kernels is
//! put together by [`resolve`] (an entry write stands for whatever reaches the
//! kernel's start, found in the earlier kernels' exit reads).

pub mod deps;
pub mod exits;
pub mod ide;
pub mod kernel;
pub mod parallel;
pub mod privatize;
pub mod remark;
pub mod resolve;
pub mod rules;

pub use kernel::{KernelProgram, Placement};
pub use remark::{remarks, Level, Remark};

use crate::dataflow::{self, Config, DataflowError, Flow};
use crate::diagnostics::{Diagnostic, FileId};
use crate::kinds::Kinds;
use crate::model::{ArrayId, CounterId, Program, Site};
use kernel::Augmented;
use salsa::Setter;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One source file.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

/// The sizes and limits of every bounded analysis of the database.
#[salsa::input(singleton)]
pub struct Settings {
    /// Parameter values; parameters not listed take their default.
    #[returns(ref)]
    pub params: Vec<(String, i64)>,
    #[returns(copy)]
    pub max_trips: u32,
    /// The most access instances one kernel's analysis may create.
    #[returns(copy)]
    pub max_instances: u64,
    /// The memory budget of every analysis, in bytes (`crate::budget`).
    #[returns(copy)]
    pub max_memory: u64,
    /// The access kinds: which `@name` accesses the front end takes, how
    /// they lower, and the rules' engine. Fixed when the database is made.
    #[returns(ref)]
    pub kinds: Kinds,
}

/// Diagnostics of [`parse`] and of the per-file steps point into this file id.
pub const FILE: FileId = FileId(0);

/// The database.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    /// Set while an edit waits for the questions running on other handles
    /// to stop: what their engines poll ([`Database::watch`]).
    editing: Arc<AtomicBool>,
}

/// What a question asked on one handle polls: an edit through any handle,
/// or this handle's cancellation token. It unwinds with salsa's own
/// payloads, so the question ends as salsa's cancellation does, from any
/// thread the engines started.
struct Stale {
    editing: Arc<AtomicBool>,
    token: salsa::CancellationToken,
}

impl arrayflow_model::cancel::Watch for Stale {
    fn stale(&self) -> bool {
        self.editing.load(Ordering::Relaxed) || self.token.is_cancelled()
    }

    fn stop(&self) -> ! {
        let why = if self.editing.load(Ordering::Relaxed) {
            salsa::Cancelled::PendingWrite
        } else {
            salsa::Cancelled::Local
        };
        std::panic::resume_unwind(Box::new(why))
    }
}

/// Clears the editing flag when the edit is done (or unwinds).
struct Editing(Arc<AtomicBool>);

impl Drop for Editing {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Default for Database {
    fn default() -> Database {
        Database::new(Config::default())
    }
}

impl Database {
    /// A database with these settings and the core access kinds.
    pub fn new(config: Config) -> Database {
        Database::with_kinds(config, Kinds::core())
    }

    /// A database with these settings and access kinds.
    pub fn with_kinds(config: Config, kinds: Kinds) -> Database {
        Database::with_storage(salsa::Storage::default(), config, kinds)
    }

    /// A database whose salsa events (query executions, cancellation
    /// checks) go to `callback`.
    pub fn with_events(
        config: Config,
        callback: Box<dyn Fn(salsa::Event) + Send + Sync + 'static>,
    ) -> Database {
        Database::with_storage(salsa::Storage::new(Some(callback)), config, Kinds::core())
    }

    fn with_storage(storage: salsa::Storage<Database>, config: Config, kinds: Kinds) -> Database {
        let db = Database {
            storage,
            editing: Arc::default(),
        };
        Settings::new(
            &db,
            config.params,
            config.max_trips,
            config.max_instances,
            config.max_memory,
            kinds,
        );
        db
    }

    /// The access kinds of the database.
    pub fn kinds(&self) -> Kinds {
        kinds(self)
    }

    /// Adds a file.
    pub fn add_file(&self, path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile::new(self, path.into(), text.into())
    }

    /// Replaces a file's text (a new revision: stale computations on other
    /// handles are cancelled).
    pub fn set_text(&mut self, file: SourceFile, text: String) {
        let _editing = self.editing();
        file.set_text(self).to(text);
    }

    /// Marks an edit under way: the questions other handles are running
    /// stop at their next poll, so salsa's wait for them is short.
    fn editing(&self) -> Editing {
        self.editing.store(true, Ordering::Relaxed);
        Editing(self.editing.clone())
    }

    /// What a question asked on this handle polls while it runs
    /// ([`arrayflow_model::cancel`]).
    pub fn watch(&self) -> Arc<dyn arrayflow_model::cancel::Watch> {
        Arc::new(Stale {
            editing: self.editing.clone(),
            token: salsa::Database::cancellation_token(self),
        })
    }

    pub fn config(&self) -> Config {
        let s = Settings::get(self);
        Config {
            params: s.params(self).clone(),
            max_trips: s.max_trips(self),
            max_instances: s.max_instances(self),
            max_memory: s.max_memory(self),
        }
    }

    /// Changes the settings; only the fields that differ become new input.
    pub fn configure(&mut self, config: Config) {
        if self.config() == config {
            return;
        }
        let _editing = self.editing();
        let s = Settings::get(self);
        if *s.params(self) != config.params {
            s.set_params(self).to(config.params);
        }
        if s.max_trips(self) != config.max_trips {
            s.set_max_trips(self).to(config.max_trips);
        }
        if s.max_instances(self) != config.max_instances {
            s.set_max_instances(self).to(config.max_instances);
        }
        if s.max_memory(self) != config.max_memory {
            s.set_max_memory(self).to(config.max_memory);
        }
    }
}

/// A file after the front end.
pub struct Parsed {
    /// The program, when the file has no error.
    pub program: Option<Program>,
    /// Errors and warnings of the front end, pointing into [`FILE`].
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses and checks a source with the front end its path calls for: the C
/// front end for `.c` and `.h` files, the `.loop` one for anything else.
/// Every command and the language server go through here, so they all
/// accept both languages.
pub fn compile(
    path: &std::path::Path,
    source: &str,
    file: FileId,
) -> (Option<Program>, Vec<Diagnostic>) {
    compile_kinds(path, source, file, &Kinds::core())
}

/// The procedures and call sites of a file (`.loop` procedures, C
/// functions inlined at their calls), with the front end its path calls for.
pub fn calls(path: &std::path::Path, source: &str, file: FileId) -> crate::model::calls::Calls {
    if is_c_path(path) {
        #[cfg(feature = "c")]
        return crate::cfront::compile_calls(source, file).1;
    }
    crate::lower::compile_calls(source, file).1
}

/// [`compile`], with the extension accesses of `kinds`: their `@name`
/// syntax in `.loop`, their C spellings in C.
pub fn compile_kinds(
    path: &std::path::Path,
    source: &str,
    file: FileId,
    kinds: &Kinds,
) -> (Option<Program>, Vec<Diagnostic>) {
    if is_c_path(path) {
        #[cfg(feature = "c")]
        return crate::cfront::compile_with(source, file, kinds.c_spellings());
        #[cfg(not(feature = "c"))]
        return (None, vec![no_c_front_end()]);
    }
    crate::lower::compile_kinds(source, file, kinds)
}

/// What the verdicts on a file assume beyond its model, as sentences that
/// follow "assumes" (`cfront::premises`): none for `.loop`, whose
/// assumptions the user wrote.
#[salsa::tracked(returns(ref), no_eq)]
pub fn premises(db: &dyn salsa::Database, file: SourceFile) -> Vec<String> {
    #[cfg(feature = "c")]
    if let Some(program) = &parse(db, file).program {
        if is_c_path(std::path::Path::new(file.path(db))) {
            return crate::cfront::premises::premises(program, file.text(db));
        }
    }
    let _ = (db, file);
    Vec::new()
}

/// Whether a path names a C file (`.c` or `.h`).
pub use arrayflow_cprint::is_c_path;

/// E0900 on a C file when the build has no C front end.
#[cfg(not(feature = "c"))]
fn no_c_front_end() -> Diagnostic {
    Diagnostic::error("E0900", "this build of arrayflow reads no C")
        .note("the C front end is the `c` feature of the arrayflow crates (on by default)")
}

/// Parses and checks a file. Never backdated: its diagnostics hold absolute
/// positions, which change with edits that leave the program equal.
#[salsa::tracked(no_eq)]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> Parsed {
    let path = std::path::Path::new(file.path(db));
    let (program, diagnostics) = compile_kinds(path, file.text(db), FILE, &kinds(db));
    Parsed {
        program,
        diagnostics,
    }
}

/// One kernel of a file.
#[salsa::tracked]
pub struct Kernel<'db> {
    /// Its position in the file: the identity a kernel keeps across edits.
    /// Without one, every kernel had the same identity, and creating n of
    /// them took time quadratic in n (100,000 loops: a minute).
    #[returns(copy)]
    pub index: usize,
    #[tracked]
    #[returns(ref)]
    pub program: KernelProgram,
    #[tracked]
    #[returns(copy)]
    pub place: Placement,
    /// Part of `place`: what the generated names of its sites follow.
    #[tracked]
    #[returns(copy)]
    pub first: kernel::FirstIds,
}

/// The kernels of a valid file, in order (none when the file has errors).
#[salsa::tracked]
pub fn kernels(db: &dyn salsa::Database, file: SourceFile) -> Vec<Kernel<'_>> {
    let Some(program) = &parse(db, file).program else {
        return Vec::new();
    };
    kernel::split(program)
        .into_iter()
        .enumerate()
        .map(|(k, p)| Kernel::new(db, k, p.program, p.place, p.place.first_ids()))
        .collect()
}

/// σ of one kernel, on its augmented local program.
pub struct KernelFlow {
    pub augmented: Augmented,
    pub result: Result<Flow, DataflowError>,
}

/// σ of one kernel: depends on its local program and the settings only.
#[salsa::tracked(no_eq)]
pub fn kernel_flow<'db>(db: &'db dyn salsa::Database, kernel: Kernel<'db>) -> KernelFlow {
    let local = &kernel.program(db).program;
    let config = settings(db);
    let (program, augmented) = kernel::augment(local);
    // The entry writes and exit reads cost only for the cells the kernel
    // touches, and do not count against its budget.
    let result = dataflow::analyze_framed(&program, &config, &kinds(db), &augmented.frame());
    KernelFlow { augmented, result }
}

/// The access kinds of the database (the core's before settings exist).
fn kinds(db: &dyn salsa::Database) -> Kinds {
    match Settings::try_get(db) {
        Some(s) => s.kinds(db).clone(),
        None => Kinds::core(),
    }
}

fn settings(db: &dyn salsa::Database) -> Config {
    match Settings::try_get(db) {
        Some(s) => Config {
            params: s.params(db).clone(),
            max_trips: s.max_trips(db),
            max_instances: s.max_instances(db),
            max_memory: s.max_memory(db),
        },
        None => Config::default(),
    }
}

/// A flow dependence a loop carries, at the analysed sizes: some read of
/// `array` by `to` in one iteration of the loop may read a value `from` wrote
/// in an earlier iteration (`distance` iterations before, from `min` to `max`)
/// of the same instance of the loops around it. Local ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Carried {
    pub array: ArrayId,
    pub from: Site,
    pub to: Site,
    pub min: i64,
    pub max: i64,
}

/// One loop of a kernel with the flow dependences it carries. Local ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopFlow {
    pub counter: CounterId,
    /// Claimed parallel (`doall`).
    pub doall: bool,
    pub carried: Vec<Carried>,
}

/// The loops of a kernel and the flow dependences each carries (empty when
/// σ could not be computed).
#[salsa::tracked]
pub fn kernel_loops<'db>(db: &'db dyn salsa::Database, kernel: Kernel<'db>) -> Vec<LoopFlow> {
    let kf = kernel_flow(db, kernel);
    let local = &kernel.program(db).program;
    match &kf.result {
        Ok(flow) => resolve::carried(local, &kf.augmented, flow),
        Err(_) => Vec::new(),
    }
}

/// Analysis errors of a file: bad parameter values once, then each
/// kernel's budget or evaluation error, in the file's positions and names.
#[salsa::tracked(no_eq)]
pub fn analysis_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let Some(program) = &parse(db, file).program else {
        return Vec::new();
    };
    let config = settings(db);
    if let Err(m) = program.param_values(&config.params) {
        return vec![Diagnostic::error("E0301", m)];
    }
    let mut out = Vec::new();
    for &k in kernels(db, file) {
        if let Err(e) = &kernel_flow(db, k).result {
            out.push(kernel_error(program, k.program(db), k.place(db), e));
        }
    }
    if out.is_empty() {
        out.extend(kind_diagnostics(db, file));
    }
    out
}

/// The diagnostics of the extension kinds' checks (`Kinds::with_check`) on
/// a valid file, from σ of the whole file, or the analysis error that kept
/// σ from being found (a kind's lowering error among them). Programs without
/// an extension access never pay for it.
pub fn kind_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let kinds = kinds(db);
    let Some(program) = &parse(db, file).program else {
        return Vec::new();
    };
    // Extension accesses are lowered (so checked) by their kinds' code
    // alone: analysed even without checks to run.
    if program.first_ext_access().is_none() {
        return Vec::new();
    }
    match resolve::file_flow(db, file) {
        Ok(flow) if kinds.has_checks() => kinds.diagnose(program, &flow, FILE),
        Ok(_) => Vec::new(),
        Err(resolve::FileFlowError::Analysis(d)) => vec![d],
        Err(resolve::FileFlowError::Invalid) => Vec::new(),
    }
}

/// A kernel's analysis error as a diagnostic of the file.
pub fn kernel_error(
    program: &Program,
    local: &KernelProgram,
    place: Placement,
    e: &DataflowError,
) -> Diagnostic {
    let global_name = |name: &str| -> String {
        let local = &local.program;
        let site = local
            .stmts()
            .iter()
            .find(|s| s.label == name)
            .map(|s| Site::Stmt(s.id))
            .or_else(|| {
                local
                    .conditions()
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| Site::Cond(c.id))
            });
        match site {
            Some(s) => program.site_name(place.global_site(s)),
            None => name.to_string(),
        }
    };
    let e = match e {
        DataflowError::Budget {
            unit,
            site,
            span,
            count,
            max,
            params,
        } => DataflowError::Budget {
            unit,
            site: global_name(site),
            span: place.absolute(*span),
            count: *count,
            max: *max,
            params: params.clone(),
        },
        DataflowError::Eval { what, span } => {
            // The message names a condition by its local name, in backquotes.
            let mut what = what.clone();
            let quoted = what.split('`').nth(1).map(str::to_string);
            if let Some(name) = quoted {
                what = what.replacen(
                    &format!("`{name}`"),
                    &format!("`{}`", global_name(&name)),
                    1,
                );
            }
            DataflowError::Eval {
                what,
                span: place.absolute(*span),
            }
        }
        e => e.clone(),
    };
    crate::dataflow::diagnostic(&e, FILE)
}

/// The memory-based dependences each loop of a kernel carries (local ids),
/// by the exact dependence tests: they hold for every parameter value. Err
/// when they would not fit the memory budget.
#[salsa::tracked]
pub fn kernel_deps<'db>(
    db: &'db dyn salsa::Database,
    kernel: Kernel<'db>,
) -> Result<Vec<(CounterId, Vec<deps::CarriedDep>)>, crate::budget::Exceeded> {
    deps::carried_by_loop(&kernel.program(db).program).map(|m| m.into_iter().collect())
}

/// E0304 for each kernel whose carried dependences (what loop remarks and
/// rules use) go over the memory budget. Apart from
/// [`analysis_diagnostics`], which σ alone gives: only what uses the
/// dependences pays for them.
pub fn deps_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    kernels(db, file)
        .iter()
        .filter_map(|&k| kernel_deps(db, k).as_ref().err())
        .map(|e| Diagnostic::error("E0304", e.to_string()))
        .collect()
}

/// Maximal static expansion of one kernel (its local program, at the
/// settings' sizes): what the lenses, the array hover and the summary show.
pub struct KernelExpansion {
    /// Per array: memory before and after (cells).
    pub memory: Vec<(ArrayId, u64, u64)>,
    /// Per written array: classes of live writes, cells written, most
    /// classes of one cell.
    pub classes: Vec<(ArrayId, u64, u64, u32)>,
    /// Per loop (local counter): carries a dependence as written, after MSE.
    pub loops: Vec<(CounterId, bool, bool)>,
    /// `arrayflow expand`'s text for the kernel.
    pub text: String,
}

/// Expansion of one kernel. A kernel boundary acts as a copy-out and
/// copy-in point: reads of values from earlier kernels count as reads of
/// the initial value here (docs/architecture.md).
#[salsa::tracked(no_eq)]
pub fn kernel_expansion<'db>(
    db: &'db dyn salsa::Database,
    kernel: Kernel<'db>,
) -> Result<KernelExpansion, String> {
    use crate::expansion::{self, parallel, render, sa};
    let local = &kernel.program(db).program;
    let config = settings(db);
    let exp = expansion::expand_with(local, &config, &kinds(db)).map_err(|e| e.to_string())?;
    let base = sa::single_assignment(local, &exp);
    let loops = parallel::report(local, &exp).map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    render::text(&exp, &base, &loops, &mut text).map_err(|e| e.to_string())?;
    let memory = render::memory(&exp, &base)
        .iter()
        .zip(&exp.arrays)
        .map(|(m, a)| (a.array, m.original, m.mse))
        .collect();
    let classes = exp
        .arrays
        .iter()
        .filter(|a| a.cells_written > 0)
        .map(|a| (a.array, a.classes, a.cells_written, a.max_classes_per_cell))
        .collect();
    Ok(KernelExpansion {
        memory,
        classes,
        loops: loops
            .iter()
            .map(|l| (l.counter, l.original.any(), l.mse.any()))
            .collect(),
        text: String::from_utf8_lossy(&text).into_owned(),
    })
}

/// The file rewritten by maximal static expansion (`arrayflow expand
/// --emit code`: the report as comments, then the program), for the whole
/// file at once: the emitted code is one program, not one per kernel.
#[salsa::tracked(no_eq)]
pub fn expanded_code(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Result<(Program, String), String> {
    let program = parse(db, file)
        .program
        .as_ref()
        .ok_or("the file has errors")?;
    let mut e = crate::codegen::emit(program, &codegen_options(db))?;
    let lines = crate::expansion::parallel::source_lines(program, file.text(db));
    e.doall = crate::expansion::parallel::doall_names(program, &lines, &e.program);
    let text = format!("{}{}", crate::codegen::report::text(program, &e), e.text);
    Ok((e.program, text))
}

/// What is known of one loop, in the file's ids.
pub struct LoopStatus {
    pub counter: CounterId,
    pub doall: bool,
    /// Memory-based dependences it carries (exact tests, symbolic).
    pub deps: Vec<deps::CarriedDep>,
    /// They went over the memory budget: `deps` is empty, and says nothing.
    pub deps_failed: bool,
    /// Flow dependences it carries by σ; `None` when σ failed.
    pub flows: Option<Vec<Carried>>,
    /// Whether it still carries a dependence after maximal static
    /// expansion of its kernel; `None` when the expansion failed.
    pub after_mse: Option<bool>,
}

/// Every loop of a file with its dependences, in the file's ids.
pub fn loop_status(db: &dyn salsa::Database, file: SourceFile) -> Vec<LoopStatus> {
    loop_status_with(db, file, true, true)
}

/// [`loop_status`] computing the memory-based dependences only when `deps`
/// (else `deps` is empty) and each kernel's expansion only when `mse` (else
/// `after_mse` is `None`): what a caller does not read costs nothing.
pub fn loop_status_with(
    db: &dyn salsa::Database,
    file: SourceFile,
    deps: bool,
    mse: bool,
) -> Vec<LoopStatus> {
    let mut out = Vec::new();
    for &k in kernels(db, file) {
        let place = k.place(db);
        out.extend(kernel_status(
            db,
            k,
            deps,
            mse,
            |s| place.global_site(s),
            |c| place.global_counter(c),
        ));
    }
    out
}

/// [`loop_status_with`] of one kernel, its sites and counters named by
/// `site` and `counter` (the file's ids, or the local ones).
pub(crate) fn kernel_status<'db>(
    db: &'db dyn salsa::Database,
    k: Kernel<'db>,
    with_deps: bool,
    mse: bool,
    site: impl Fn(Site) -> Site,
    counter: impl Fn(CounterId) -> CounterId,
) -> Vec<LoopStatus> {
    let ok = kernel_flow(db, k).result.is_ok();
    let computed = with_deps.then(|| kernel_deps(db, k));
    let deps: &[(CounterId, Vec<deps::CarriedDep>)] = match computed {
        Some(Ok(d)) => d,
        _ => &[],
    };
    let deps_failed = computed.is_some_and(|d| d.is_err());
    let exp = mse.then(|| kernel_expansion(db, k).as_ref().ok()).flatten();
    let mut out = Vec::new();
    for l in kernel_loops_all(db, k) {
        let after_mse = exp.and_then(|e| {
            e.loops
                .iter()
                .find(|(c, _, _)| *c == l.counter)
                .map(|&(_, _, mse)| mse)
        });
        let deps = deps
            .iter()
            .find(|(c, _)| *c == l.counter)
            .map(|(_, d)| {
                d.iter()
                    .map(|d| deps::CarriedDep {
                        from: site(d.from),
                        to: site(d.to),
                        ..d.clone()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let flows = ok.then(|| {
            l.carried
                .iter()
                .map(|c| Carried {
                    from: site(c.from),
                    to: site(c.to),
                    ..c.clone()
                })
                .collect()
        });
        out.push(LoopStatus {
            counter: counter(l.counter),
            doall: l.doall,
            deps,
            deps_failed,
            flows,
            after_mse,
        });
    }
    out
}

/// The loops of a kernel with the flows σ finds they carry, or with none
/// when σ failed (the loops are still listed).
fn kernel_loops_all<'db>(db: &'db dyn salsa::Database, kernel: Kernel<'db>) -> Vec<LoopFlow> {
    match &kernel_flow(db, kernel).result {
        Ok(_) => kernel_loops(db, kernel).clone(),
        Err(_) => resolve::loops(&kernel.program(db).program),
    }
}

/// The names of a program's sites, looked up without walking the program
/// (`Program::site_name` lists every statement on each call).
pub struct Names {
    sites: Vec<String>,
    n_stmts: usize,
}

impl Names {
    pub fn new(program: &Program) -> Names {
        let stmts = program.stmts();
        let n_stmts = stmts.len();
        let sites = stmts
            .iter()
            .map(|s| s.label.clone())
            .chain(program.conditions().iter().map(|c| c.name.clone()))
            .collect();
        Names { sites, n_stmts }
    }

    pub fn site(&self, site: Site) -> &str {
        self.sites
            .get(site_index(self.n_stmts, site))
            .map_or("?", String::as_str)
    }
}

/// A site's index among statements then conditions.
fn site_index(n_stmts: usize, site: Site) -> usize {
    match site {
        Site::Stmt(s) => s.index(),
        Site::Cond(c) => n_stmts + c.index(),
    }
}

/// The loops around every site of a program, outermost first.
pub struct SiteLoops {
    loops: Vec<Vec<CounterId>>,
    n_stmts: usize,
}

impl SiteLoops {
    pub fn new(program: &Program) -> SiteLoops {
        SiteLoops {
            loops: crate::dataflow::render::site_loops(program),
            n_stmts: program.stmts().len(),
        }
    }

    pub fn of(&self, site: Site) -> &[CounterId] {
        self.loops
            .get(site_index(self.n_stmts, site))
            .map_or(&[], Vec::as_slice)
    }

    /// The loops around both sites.
    pub fn common(&self, a: Site, b: Site) -> &[CounterId] {
        let (x, y) = (self.of(a), self.of(b));
        let n = x.iter().zip(y).take_while(|(p, q)| p == q).count();
        &x[..n]
    }
}

/// `a flow dependence on A (S → T, distance 1)`.
pub fn describe_dep(program: &Program, names: &Names, d: &deps::CarriedDep) -> String {
    let kind = match d.kind {
        crate::dependence::Kind::Flow => "a flow",
        crate::dependence::Kind::Anti => "an anti",
        crate::dependence::Kind::Output => "an output",
    };
    let dist = match d.distance {
        Some((a, b)) => format!(", {}", ide::distance(a, b)),
        None => String::new(),
    };
    format!(
        "{kind} dependence on {} ({} → {}{dist})",
        program.array_decl(d.array).name,
        names.site(d.from),
        names.site(d.to),
    )
}

/// The arrays of a loop's carried dependences, by name, sorted.
pub fn dep_arrays(program: &Program, deps: &[deps::CarriedDep]) -> String {
    let mut names: Vec<&str> = deps
        .iter()
        .map(|d| program.array_decl(d.array).name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

/// The code generators' options from the database's settings (sizes and
/// budget), as the commands build them from their flags.
pub(crate) fn codegen_options(db: &dyn salsa::Database) -> crate::codegen::Options {
    let c = settings(db);
    crate::codegen::Options {
        params: c.params,
        max_trips: c.max_trips,
        max_instances: c.max_instances,
        ..Default::default()
    }
}
