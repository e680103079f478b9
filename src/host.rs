//! The door for embedders: [`Host`] owns the incremental database and is
//! its only writer; [`Analysis`] is a snapshot that answers questions in
//! plain data (file ids, byte offsets, strings, structs with public
//! fields). An edit through the host cancels every question still running
//! on an older snapshot: those return [`Cancelled::Edit`], and the caller
//! asks again on a new snapshot. A [`Canceller`] stops the questions of one
//! snapshot without an edit ([`Cancelled::Request`]).
//!
//! ```
//! use arrayflow::{Host, Options};
//!
//! let mut host = Host::new(Options::default());
//! let file = host.set_file(
//!     "scale.loop",
//!     "param N = 4;\nreal A[0..N];\nfor i = 1 to N do\n  S: A[i] = A[i - 1];\nend\n"
//!         .to_string(),
//! );
//! let analysis = host.analysis();
//! assert!(analysis.diagnostics(file).unwrap().is_empty());
//! let loops = analysis.loops(file).unwrap();
//! assert_eq!(loops.len(), 1);
//! assert!(!loops[0].parallel, "S reads what the previous iteration wrote");
//! ```
//!
//! Questions run on any thread: an [`Analysis`] is `Send` and cheap to
//! clone. A snapshot must not be held on the thread that edits, since an
//! edit waits until every older snapshot has finished or been dropped.

use crate::change::SourceChange;
use crate::dataflow::grouped::AccessGroups;
use crate::datalog::Exported;
use crate::db::{self, Database, SourceFile};
use crate::diagnostics::{Diagnostic, SourceFiles};
use crate::kinds::Kinds;
use crate::model::calls::Calls;
use crate::model::{Program, Span};
use std::sync::Arc;

pub use crate::db::Level;

/// A file of a [`Host`]: stable while the host lives, and known to that
/// host only. A question about a file another host opened, or one this
/// host removed, answers [`Cancelled::NoSuchFile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    host: u32,
    index: u32,
}

impl FileId {
    /// The file's number in its host, from 0 in the order opened.
    pub fn index(self) -> u32 {
        self.index
    }
}

/// Tells hosts apart, so that a [`FileId`] is checked against its own.
static HOSTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The sizes and limits every analysis of a host runs with. The defaults
/// ([`Options::default`]) are the command line's: no parameter values
/// (each takes its declared default), 4 `while` trips, 50,000,000 access
/// instances per kernel and 4 GiB of memory; the language server starts
/// from them with 5,000,000 instances, so that a keystroke never waits on
/// a huge kernel.
#[derive(Clone, Debug)]
pub struct Options {
    /// Parameter values; parameters not listed take their declared default.
    pub params: Vec<(String, i64)>,
    /// How many trips a `while` loop may make before it counts as diverging.
    pub max_trips: u32,
    /// The most access instances one kernel's bounded analysis may create.
    pub max_instances: u64,
    /// The memory budget of every analysis, in bytes.
    pub max_memory: u64,
    /// The access kinds: the core's, and any an extension crate adds.
    pub kinds: Kinds,
}

impl Default for Options {
    fn default() -> Options {
        Options::from(crate::dataflow::Config::default())
    }
}

/// These sizes and limits, with the core access kinds.
impl From<crate::dataflow::Config> for Options {
    fn from(c: crate::dataflow::Config) -> Options {
        Options {
            params: c.params,
            max_trips: c.max_trips,
            max_instances: c.max_instances,
            max_memory: c.max_memory,
            kinds: Kinds::core(),
        }
    }
}

impl Options {
    fn config(&self) -> crate::dataflow::Config {
        crate::dataflow::Config {
            params: self.params.clone(),
            max_trips: self.max_trips,
            max_instances: self.max_instances,
            max_memory: self.max_memory,
        }
    }
}

/// A question was stopped before it had an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancelled {
    /// An edit through the host made the snapshot stale: ask again on a
    /// new [`Analysis`].
    Edit,
    /// The snapshot's [`Canceller`] was used.
    Request,
    /// What the question waited for failed on another thread.
    Failed,
    /// The [`FileId`] is not one of the snapshot's files: the host removed
    /// it, or another host opened it.
    NoSuchFile,
}

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cancelled::Edit => "cancelled by an edit",
            Cancelled::Request => "cancelled on request",
            Cancelled::Failed => "cancelled: what it waited for failed on another thread",
            Cancelled::NoSuchFile => "no such file: removed, or opened by another host",
        })
    }
}

impl std::error::Error for Cancelled {}

/// The answer to a question, or why there is none ([`Cancelled`]).
pub type Cancellable<T> = Result<T, Cancelled>;

/// Stops the questions running on one [`Analysis`] (not on its clones):
/// they return [`Cancelled::Request`]. Any thread may use it.
#[derive(Clone)]
pub struct Canceller(salsa::CancellationToken);

impl std::fmt::Debug for Canceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canceller")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Canceller {
    /// Stops the question running now, if any.
    pub fn cancel(&self) {
        self.0.cancel();
    }

    /// Whether a stop was asked and no question has seen it yet.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Parses and checks a text with the front end its path calls for (C for
/// `.c` and `.h`, `.loop` otherwise) and the core access kinds, without a
/// host; the diagnostics point into `file`.
pub fn compile(
    path: &std::path::Path,
    text: &str,
    file: crate::diagnostics::FileId,
) -> (Option<Program>, Vec<Diagnostic>) {
    db::compile(path, text, file)
}

/// The procedures and call sites of a text (`.loop` procedures, C
/// functions inlined at their calls), with the front end its path calls
/// for, without a host; spans point into `file`.
pub fn calls(path: &std::path::Path, text: &str, file: crate::diagnostics::FileId) -> Calls {
    db::calls(path, text, file)
}

/// The files, by id: their paths and database inputs, and the open ones
/// by path.
#[derive(Clone, Default)]
struct Files {
    /// The host's tag in its [`FileId`]s.
    host: u32,
    paths: Vec<String>,
    inputs: Vec<SourceFile>,
    /// The open files by path; a removed file is not here.
    by_path: std::collections::HashMap<String, u32>,
}

impl Files {
    /// The input of `file`, when it is one of these files and open.
    fn input(&self, file: FileId) -> Option<SourceFile> {
        let open = file.host == self.host
            && (self.paths.get(file.index as usize))
                .is_some_and(|p| self.by_path.get(p) == Some(&file.index));
        open.then(|| self.inputs[file.index as usize])
    }
}

/// Owns the database: files, settings and rules go in here.
pub struct Host {
    db: Database,
    files: Arc<Files>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("files", &self.files.by_path)
            .finish_non_exhaustive()
    }
}

/// Something to change in a [`Host`], applied with others by
/// [`Host::apply`]: a language server's batch of notifications.
#[derive(Clone, Debug)]
pub enum Change {
    /// Open a file, or replace its text ([`Host::set_file`]).
    File {
        /// The file's path: `.c` and `.h` are read as C.
        path: String,
        /// Its new text.
        text: String,
    },
    /// Close a file ([`Host::remove_file`]).
    Remove(String),
    /// New sizes and limits ([`Host::set_options`]).
    Options(Options),
    /// New run-time rule files ([`Host::set_rules`]).
    Rules(Vec<(String, String)>),
}

impl Host {
    /// An empty host with these options.
    pub fn new(options: Options) -> Host {
        let db = Database::with_kinds(options.config(), options.kinds.clone());
        let host = HOSTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Host {
            db,
            files: Arc::new(Files {
                host,
                ..Files::default()
            }),
        }
    }

    /// Opens a file, or replaces its text when `path` is open already.
    /// `.c` and `.h` paths are read as C (with the default feature `c`;
    /// without it they get E0900), every other path as `.loop` text.
    pub fn set_file(&mut self, path: &str, text: String) -> FileId {
        if let Some(file) = self.file(path) {
            self.db
                .set_text(self.files.inputs[file.index as usize], text);
            return file;
        }
        let input = self.db.add_file(path, text);
        let files = Arc::make_mut(&mut self.files);
        let index = files.paths.len() as u32;
        files.paths.push(path.to_string());
        files.inputs.push(input);
        files.by_path.insert(path.to_string(), index);
        FileId {
            host: files.host,
            index,
        }
    }

    /// The open file with this path.
    pub fn file(&self, path: &str) -> Option<FileId> {
        (self.files.by_path.get(path)).map(|&index| FileId {
            host: self.files.host,
            index,
        })
    }

    /// Replaces the text of a file the host has; [`Cancelled::NoSuchFile`]
    /// for a file it removed or never had.
    pub fn set_text(&mut self, file: FileId, text: String) -> Result<(), Cancelled> {
        let input = self.files.input(file).ok_or(Cancelled::NoSuchFile)?;
        self.db.set_text(input, text);
        Ok(())
    }

    /// Closes a file: its id answers [`Cancelled::NoSuchFile`] from now
    /// on, and its path opens as a new file. Its text is dropped; whether
    /// it was open is returned.
    pub fn remove_file(&mut self, file: FileId) -> bool {
        let Some(input) = self.files.input(file) else {
            return false;
        };
        self.db.set_text(input, String::new());
        let files = Arc::make_mut(&mut self.files);
        files.by_path.remove(&files.paths[file.index as usize]);
        true
    }

    /// Applies the changes in order, as one edit: questions running on an
    /// older snapshot are cancelled once, and nothing is recomputed before
    /// the next question. The files opened, in the order of their changes.
    pub fn apply(&mut self, changes: Vec<Change>) -> Vec<FileId> {
        let mut opened = Vec::new();
        for c in changes {
            match c {
                Change::File { path, text } => opened.push(self.set_file(&path, text)),
                Change::Remove(path) => {
                    if let Some(file) = self.file(&path) {
                        self.remove_file(file);
                    }
                }
                Change::Options(o) => self.set_options(&o),
                Change::Rules(r) => self.set_rules(&r),
            }
        }
        opened
    }

    /// Sets the options' sizes and limits (the kinds stay those the host
    /// was made with). Only what differs counts as an edit.
    pub fn set_options(&mut self, options: &Options) {
        self.db.configure(options.config());
    }

    /// Sets the run-time rule files, as `(path, text)` pairs
    /// (docs/rules.md): their findings join every file's diagnostics.
    pub fn set_rules(&mut self, rules: &[(String, String)]) {
        db::rules::set_rules(&mut self.db, rules);
    }

    /// A snapshot to ask questions on.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            db: self.db.clone(),
            files: self.files.clone(),
        }
    }
}

/// What is known of one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopReport {
    /// The loop's counter, as written.
    pub counter: String,
    /// Where the loop is.
    pub span: Span,
    /// Whether it is marked `doall` in the source.
    pub marked_parallel: bool,
    /// Whether its iterations may run in parallel as written: it carries
    /// no dependence, by the exact tests, at any size.
    pub parallel: bool,
    /// Whether they may once its kernel is expanded (`None`: the
    /// expansion failed).
    pub parallel_after_expansion: Option<bool>,
    /// The memory-based dependences it carries, described.
    pub dependences: Vec<String>,
}

/// An analysis remark: not a problem, a fact about the program.
pub use crate::db::Remark;

/// What one rule file says about one program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RuleReport {
    /// The check relations' tuples as diagnostics in the program.
    pub diagnostics: Vec<Diagnostic>,
    /// The `.output` relations, one `name(values)` line per tuple.
    pub outputs: String,
}

/// Why σ of a whole file is not available.
pub use crate::db::resolve::FileFlowError as FlowError;

/// A named thing of a file, for an outline, and what it names.
pub use crate::db::ide::{Symbol, SymbolKind};

/// A snapshot of a [`Host`]: every question is answered for the files as
/// they were when it was taken.
#[derive(Clone)]
pub struct Analysis {
    db: Database,
    files: Arc<Files>,
}

impl std::fmt::Debug for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analysis")
            .field("files", &self.files.by_path)
            .finish_non_exhaustive()
    }
}

impl Analysis {
    /// Runs a query, turning salsa's cancellation into ours. The answer
    /// may borrow from the snapshot.
    fn with<'a, T>(&'a self, f: impl FnOnce(&'a Database) -> T) -> Cancellable<T> {
        let watch = Some(self.db.watch());
        let run = || arrayflow_model::cancel::watching(watch, || f(&self.db));
        salsa::Cancelled::catch(std::panic::AssertUnwindSafe(run)).map_err(|c| match c {
            salsa::Cancelled::PendingWrite => Cancelled::Edit,
            salsa::Cancelled::Local => Cancelled::Request,
            _ => Cancelled::Failed,
        })
    }

    /// What stops the questions running on this snapshot.
    pub fn canceller(&self) -> Canceller {
        Canceller(salsa::Database::cancellation_token(&self.db))
    }

    /// [`Analysis::with`] on a file of the snapshot; [`Cancelled::NoSuchFile`]
    /// for any other.
    fn with_file<'a, T>(
        &'a self,
        file: FileId,
        f: impl FnOnce(&'a Database) -> T,
    ) -> Cancellable<T> {
        self.files.input(file).ok_or(Cancelled::NoSuchFile)?;
        self.with(f)
    }

    /// A file [`Analysis::with_file`] checked.
    fn input(&self, file: FileId) -> SourceFile {
        self.files.inputs[file.index as usize]
    }

    /// The path a file was opened with, when it is one of the snapshot's.
    pub fn path(&self, file: FileId) -> Option<&str> {
        self.files.input(file)?;
        Some(&self.files.paths[file.index as usize])
    }

    /// The file's text.
    pub fn text(&self, file: FileId) -> Cancellable<String> {
        self.with_file(file, |db| self.input(file).text(db).clone())
    }

    /// The file's program, when it has no errors.
    pub fn program(&self, file: FileId) -> Cancellable<Option<&Program>> {
        self.with_file(file, |db| db::parse(db, self.input(file)).program.as_ref())
    }

    /// The front end's errors and warnings alone.
    pub fn parse_diagnostics(&self, file: FileId) -> Cancellable<&[Diagnostic]> {
        self.with_file(file, |db| {
            db::parse(db, self.input(file)).diagnostics.as_slice()
        })
    }

    /// The extension kinds' checks on a valid file, or the error that kept
    /// σ from being found; nothing for a program without extension
    /// accesses.
    pub fn kind_diagnostics(&self, file: FileId) -> Cancellable<Vec<Diagnostic>> {
        self.with_file(file, |db| db::kind_diagnostics(db, self.input(file)))
    }

    /// The analyses' errors: budgets and sizes σ was refused at.
    pub fn analysis_diagnostics(&self, file: FileId) -> Cancellable<&[Diagnostic]> {
        self.with_file(file, |db| {
            db::analysis_diagnostics(db, self.input(file)).as_slice()
        })
    }

    /// E0304 for each kernel whose carried dependences (what the loop
    /// remarks and the rules read) go over the memory budget.
    pub fn dependence_diagnostics(&self, file: FileId) -> Cancellable<Vec<Diagnostic>> {
        self.with_file(file, |db| db::deps_diagnostics(db, self.input(file)))
    }

    /// The run-time rules' findings on the file (rule files with errors
    /// give none).
    pub fn rule_diagnostics(&self, file: FileId) -> Cancellable<Vec<Diagnostic>> {
        self.with_file(file, |db| db::rules::rule_diagnostics(db, self.input(file)))
    }

    /// Per rule file of the host, in the order set, what it says about the
    /// file: its findings and its `.output` relations.
    pub fn rule_reports(&self, file: FileId) -> Cancellable<Vec<RuleReport>> {
        self.with_file(file, |db| {
            let input = self.input(file);
            (db::rules::rule_files(db).iter())
                .map(|&r| {
                    let res = db::rules::rule_results(db, input, r);
                    RuleReport {
                        diagnostics: res.diagnostics.clone(),
                        outputs: res.outputs.clone(),
                    }
                })
                .collect()
        })
    }

    /// Whether a valid rule file of the host reads `dep_carried`, the one
    /// relation that needs the dependence tests.
    pub fn rules_read_dependences(&self) -> Cancellable<bool> {
        self.with(|db| db::rules::need_deps(db, db::rules::rule_files(db)))
    }

    /// The relations the file exports to run-time rules (docs/rules.md
    /// §8); `None` when it has errors.
    pub fn exported(&self, file: FileId) -> Cancellable<Option<&Exported>> {
        self.with_file(file, |db| {
            db::rules::exported(db, self.input(file)).as_ref()
        })
    }

    /// Computes σ of the file's small kernels side by side on the current
    /// rayon pool's threads, before questions that read them in order.
    pub fn prefetch_flows(&self, file: FileId) -> Cancellable<()> {
        self.with_file(file, |db| db::parallel::kernel_flows(db, self.input(file)))
    }

    /// σ of the whole file grouped per read access, streamed: `start` makes
    /// a state from the program and its sizes (parameter values, `while`
    /// trips), then `each` gets it with each site's accesses in site order
    /// as soon as they are complete; the state is given back.
    pub fn flow_groups<'a, S, E>(
        &'a self,
        file: FileId,
        start: impl FnOnce(&'a Program, (Vec<(String, i64)>, u32)) -> Result<S, E>,
        each: impl FnMut(&mut S, Vec<AccessGroups>) -> Result<(), E>,
    ) -> Cancellable<Result<Result<S, E>, FlowError>> {
        self.with_file(file, |db| {
            db::resolve::file_groups(db, self.input(file), start, each)
        })
    }

    /// σ of the whole file as one JSON record per read instance, written to
    /// `out`; the inner error is `out`'s.
    pub fn flow_instances(
        &self,
        file: FileId,
        out: &mut impl std::io::Write,
    ) -> Cancellable<Result<std::io::Result<()>, FlowError>> {
        self.with_file(file, |db| {
            db::resolve::file_instances(db, self.input(file), out)
        })
    }

    /// The file's errors and warnings: the front end's, the analyses'
    /// (budgets, sizes) and the run-time rules' findings. Their labels
    /// point into `file`'s id as [`Analysis::render`] numbers it.
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Vec<Diagnostic>> {
        self.with_file(file, |db| {
            let input = self.input(file);
            let mut out = db::parse(db, input).diagnostics.clone();
            out.extend(db::analysis_diagnostics(db, input).iter().cloned());
            out.extend(db::rules::rule_diagnostics(db, input));
            out
        })
    }

    /// The remarks an editor shows beside the code: parallel loops, what
    /// expansion and privatization would change.
    pub fn remarks(&self, file: FileId) -> Cancellable<Vec<Remark>> {
        self.with_file(file, |db| db::remarks(db, self.input(file)).to_vec())
    }

    /// What is known at a byte offset: for a read, its sources (σ); for a
    /// loop, whether it is parallel; for an array, its expansion.
    pub fn hover(&self, file: FileId, offset: u32) -> Cancellable<Option<(Span, String)>> {
        self.with_file(file, |db| db::ide::hover(db, self.input(file), offset))
    }

    /// The statements that may have written the value read at a byte
    /// offset.
    pub fn sources(&self, file: FileId, offset: u32) -> Cancellable<Vec<Span>> {
        self.with_file(file, |db| db::ide::definition(db, self.input(file), offset))
    }

    /// One lens per loop: its header, and what is known of it in a line.
    pub fn code_lenses(&self, file: FileId) -> Cancellable<Vec<(Span, String)>> {
        self.with_file(file, |db| db::ide::lenses(db, self.input(file)))
    }

    /// Parameters, arrays, labelled statements and named conditions, in
    /// the order of the text; none when the file has errors.
    pub fn symbols(&self, file: FileId) -> Cancellable<Vec<Symbol>> {
        self.with_file(file, |db| {
            let Some(program) = &db::parse(db, self.input(file)).program else {
                return Vec::new();
            };
            db::ide::symbols(program)
        })
    }

    /// Each kernel's maximal static expansion at the host's sizes, as
    /// `arrayflow expand` summarizes it, kernel by kernel.
    pub fn expansion_summary(&self, file: FileId) -> Cancellable<String> {
        self.with_file(file, |db| db::ide::expansion_summary(db, self.input(file)))
    }

    /// A hint at each loop that private copies make parallel.
    pub fn privatization_remarks(&self, file: FileId) -> Cancellable<Vec<Remark>> {
        self.with_file(file, |db| db::remark::private_remarks(db, self.input(file)))
    }

    /// Every loop, with its dependences and whether it is parallel.
    pub fn loops(&self, file: FileId) -> Cancellable<Vec<LoopReport>> {
        self.with_file(file, |db| {
            let input = self.input(file);
            let Some(program) = &db::parse(db, input).program else {
                return Vec::new();
            };
            let names = db::Names::new(program);
            (db::loop_status(db, input).iter())
                .map(|l| LoopReport {
                    counter: program.counters[l.counter.index()].name.clone(),
                    span: db::ide::loop_span(program, l.counter),
                    marked_parallel: l.doall,
                    parallel: !l.deps_failed && l.deps.is_empty(),
                    parallel_after_expansion: l.after_mse.map(|carries| !carries),
                    dependences: (l.deps.iter())
                        .map(|d| db::describe_dep(program, &names, d))
                        .collect(),
                })
                .collect()
        })
    }

    /// The file rewritten by maximal static expansion, with its report as
    /// comments (`arrayflow expand --emit code`), or why not.
    pub fn expansion(&self, file: FileId) -> Cancellable<Result<String, String>> {
        self.with_file(file, |db| match db::expanded_code(db, self.input(file)) {
            Ok((_, text)) => Ok(text.clone()),
            Err(e) => Err(e.clone()),
        })
    }

    /// The file with the loops privatization makes parallel marked
    /// (`arrayflow privatize --emit code`: C for C files), or why not.
    pub fn privatization(&self, file: FileId) -> Cancellable<Result<String, String>> {
        self.with_file(file, |db| {
            db::privatize::privatized_code(db, self.input(file)).clone()
        })
    }

    /// [`Analysis::expansion`] as edits to the file's text in the host.
    pub fn expansion_change(
        &self,
        file: FileId,
    ) -> Cancellable<Result<SourceChange<FileId>, String>> {
        self.change(file, self.expansion(file)?)
    }

    /// [`Analysis::privatization`] as edits to the file's text in the host.
    pub fn privatization_change(
        &self,
        file: FileId,
    ) -> Cancellable<Result<SourceChange<FileId>, String>> {
        self.change(file, self.privatization(file)?)
    }

    fn change(
        &self,
        file: FileId,
        new: Result<String, String>,
    ) -> Cancellable<Result<SourceChange<FileId>, String>> {
        let old = self.text(file)?;
        Ok(new.map(|new| SourceChange::between(file, &old, &new)))
    }

    /// Per loop and array, the regions read and written, as LMADs, in
    /// `arrayflow regions` text; `None` when the file has errors.
    pub fn regions(&self, file: FileId) -> Cancellable<Option<String>> {
        let text = self.text(file)?;
        self.with_file(file, |db| {
            let input = self.input(file);
            let program = db::parse(db, input).program.as_ref()?;
            // Parameters the options give are fixed; the others stay symbolic.
            let params = db.config().params;
            let values = |v: crate::model::Var| match v {
                crate::model::Var::Param(x) => (params.iter())
                    .find(|(n, _)| program.params.get(x.index()).is_some_and(|p| &p.name == n))
                    .map(|&(_, v)| v),
                crate::model::Var::Counter(_) => None,
            };
            let sections = crate::regions::build::regions(program, &values);
            let files = self.source_files(file, &text);
            let at = |s: Span| files.location(crate::diagnostics::FileId(0), s.start as usize);
            Some(crate::regions::render::text(program, &sections, &at))
        })
    }

    fn source_files(&self, file: FileId, text: &str) -> SourceFiles {
        let mut files = SourceFiles::new();
        files.add(self.path(file).unwrap_or_default(), text.to_string());
        files
    }

    /// Diagnostics as the command line prints them, with the lines they
    /// point at (no colours).
    pub fn render(&self, file: FileId, diags: &[Diagnostic]) -> Cancellable<String> {
        let text = self.text(file)?;
        let diags = crate::diagnostics::in_file(diags, crate::diagnostics::FileId(0));
        Ok(self.source_files(file, &text).render_all(&diags))
    }
}
