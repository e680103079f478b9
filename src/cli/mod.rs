//! The `arrayflow` command line. Each subcommand lives in its own file; this
//! one holds the argument definitions shared between them.
//!
//! Exit codes: 0 success, 1 the input has errors (or a check failed), 2 usage
//! or I/O errors.

pub mod check;
pub mod deps;
pub mod distributed;
pub mod equiv;
pub mod expand;
pub mod facts;
pub mod flow;
pub mod fmt;
pub mod gen;
pub mod live;
pub mod lsp;
pub mod model;
pub mod plot;
pub mod privatize;
pub mod project;
pub mod regions;
pub mod run;
pub mod verify;

use crate::diagnostics::{has_errors, Diagnostic, FileId, SourceFiles};
use crate::host::{Analysis, Cancellable, Host, Options};
use crate::kinds::Kinds;
use crate::model::Program;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::Path;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "arrayflow",
    version,
    about = "Instance-wise array dataflow and maximal static expansion"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub preprocess: Preprocess,
}

/// How C files are preprocessed (docs/c.md, "Preprocessing"); every
/// command takes these, before or after its name.
#[derive(Args, Debug, Clone)]
pub struct Preprocess {
    /// Run the system C preprocessor (`$CC`, else `cc`, with `-E` and `-I`
    /// the file's directory; its line markers map positions back to the
    /// file) on a C file first: `auto` when it includes a header that is not
    /// the C library's (PolyBench's `polybench.h`).
    #[arg(long, value_enum, default_value_t = crate::cfront::preprocess::Mode::Auto, global = true)]
    pub preprocess: crate::cfront::preprocess::Mode,
    /// A directory the preprocessor searches for headers (after the file's
    /// own); repeat for several.
    #[arg(short = 'I', value_name = "DIR", global = true)]
    pub include: Vec<String>,
    /// A macro for the preprocessor, `NAME` or `NAME=VALUE` (e.g.
    /// `-D MINI_DATASET`); repeat for several.
    #[arg(short = 'D', value_name = "NAME[=VALUE]", global = true)]
    pub define: Vec<String>,
}

/// The preprocessing options of this process's command (set once).
static PREPROCESS: std::sync::OnceLock<crate::cfront::preprocess::Options> =
    std::sync::OnceLock::new();

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and check `.loop` and C files; diagnostics go to stderr.
    Check(check::Args),
    /// Print a `.loop` file in canonical form (a C file: its `.loop` form).
    Fmt(fmt::Args),
    /// Exact affine dependence tests: every pair of references to the same
    /// array, with directions and distances over their common loops.
    Deps(deps::Args),
    /// Run a program: every read with its value and writer, then the final
    /// contents of every array.
    Run(run::Args),
    /// Check that a transformed program B reads and leaves the same values as
    /// the original A.
    Equiv(equiv::Args),
    /// Print a random valid program.
    Gen(gen::Args),
    /// The possible sources of every read (σ), at concrete sizes.
    Flow(flow::Args),
    /// Check σ against runs: every read's actual writer must be a source.
    Verify(verify::Args),
    /// Run the language server on stdin and stdout (docs/editors.md).
    Lsp(lsp::Args),
    /// Maximal static expansion at concrete sizes: classes, labels, dead
    /// writes, memory, parallel loops (or `--transform sa`, the baseline);
    /// `--emit code`: the expanded program for every parameter value.
    Expand(expand::Args),
    /// The program model in isl notation: domains, schedule, accesses.
    Model(model::Args),
    /// Draw a statement's 2-D iteration domain coloured by class (SVG).
    Plot(plot::Args),
    /// Per loop and array: private copies that make the loop parallel, with
    /// their copy-in and finalization (σ at concrete sizes).
    Privatize(privatize::Args),
    /// Write the relations run-time rules see, for other Datalog tools
    /// (docs/rules.md §8).
    Facts(facts::Args),
    /// Per loop and array: read, write and must-write regions as LMADs
    /// (docs/regions.md).
    Regions(regions::Args),
}

/// `--format text|json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// The file a command works on and the sizes to analyse or run it at.
#[derive(Args, Debug, Clone)]
pub struct Input {
    /// The `.loop` or C file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub sizes: Sizes,
}

/// Concrete values for a bounded analysis or a run.
#[derive(Args, Debug, Clone, Default)]
pub struct Sizes {
    /// A parameter value, `NAME=INT`; repeat for several. Parameters not given
    /// take their declared default.
    #[arg(long = "param", value_name = "NAME=INT", value_parser = parse_param)]
    pub params: Vec<(String, i64)>,
    /// The most iterations any one `while` loop instance may run.
    #[arg(long, default_value_t = 4)]
    pub max_trips: u32,
}

impl Sizes {
    /// The analysis configuration for these sizes and a budget of access
    /// instances.
    pub fn config(&self, max_instances: u64) -> crate::dataflow::Config {
        crate::dataflow::Config {
            params: self.params.clone(),
            max_trips: self.max_trips,
            max_instances,
            max_memory: crate::budget::limit(),
        }
    }
}

/// `--max-instances`, for the commands that run the bounded analysis.
#[derive(Args, Debug, Clone)]
pub struct Budget {
    /// The most access instances (one cell touched by one access of one
    /// operation) the analysis may create; it stops with an error past that.
    /// Loop iterations and the rules' walk steps are bounded by it too.
    #[arg(long, value_name = "N", default_value_t = crate::dataflow::DEFAULT_MAX_INSTANCES)]
    pub max_instances: u64,
    #[command(flatten)]
    pub memory: Memory,
}

impl Budget {
    /// Makes `--max-memory` the process's memory budget (`crate::budget`),
    /// which every analysis the command runs reads.
    pub fn install(&self) {
        self.memory.install();
    }
}

/// `--max-memory`, for every command that analyses or runs a program.
#[derive(Args, Debug, Clone)]
pub struct Memory {
    /// The most memory the command may hold, e.g. `512M`, `4G` (bytes, or
    /// K, M, G, T: powers of 1024); it stops with an error (E0304 in an
    /// analysis, E0400 in a run) past that. Default: half of the smallest of
    /// physical memory, `ulimit -v` and the cgroup limit.
    #[arg(long, value_name = "SIZE", value_parser = crate::budget::parse_size)]
    pub max_memory: Option<u64>,
}

impl Memory {
    /// Makes it the process's memory budget; returns the budget in force.
    pub fn install(&self) -> u64 {
        if let Some(m) = self.max_memory {
            crate::budget::set_limit(m);
        }
        crate::budget::limit()
    }
}

pub(crate) fn parse_param(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=INT, got `{s}`"))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|e| format!("`{value}` is not an integer: {e}"))?;
    Ok((name.trim().to_string(), value))
}

/// The `arrayflow` command with the core access kinds.
pub fn main() -> ExitCode {
    main_with(Kinds::core())
}

/// The access kinds of this process's command (set once by [`main_with`]).
static KINDS: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();

/// The access kinds every command of this process uses: those given to
/// [`main_with`], or the core's.
pub fn kinds() -> Kinds {
    KINDS.get().cloned().unwrap_or_default()
}

/// The `arrayflow` command (every subcommand, the language server
/// included) with the access kinds of `kinds`: the entry point of a binary
/// that adds kinds (docs/rules.md §5, `examples/kinds/`).
pub fn main_with(kinds: Kinds) -> ExitCode {
    // A second call in one process keeps the first set: commands read it.
    let _ = KINDS.set(kinds);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let _ = PREPROCESS.set(crate::cfront::preprocess::Options {
        mode: cli.preprocess.preprocess,
        include: cli.preprocess.include.clone(),
        define: cli.preprocess.define.clone(),
    });
    match &cli.command {
        Command::Check(a) => check::run(a),
        Command::Fmt(a) => fmt::run(a),
        Command::Deps(a) => deps::run(a),
        Command::Run(a) => run::run(a),
        Command::Equiv(a) => equiv::run(a),
        Command::Gen(a) => gen::run(a),
        Command::Flow(a) if a.distributed() => distributed::run(a),
        Command::Flow(a) => flow::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Lsp(a) => lsp::run(a),
        Command::Expand(a) => expand::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Privatize(a) => privatize::run(a),
        Command::Facts(a) => facts::run(a),
        Command::Model(a) => model::run(a),
        Command::Regions(a) => regions::run(a),
    }
}

/// The exit code after writing a result: a closed pipe (`| head`) is not an
/// error of ours; any other write error is exit 2.
pub fn finish(written: std::io::Result<()>) -> ExitCode {
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the result: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--threads` of `flow` and `check`, else `ARRAYFLOW_THREADS` (0: every
/// core); `Err` after saying why `ARRAYFLOW_THREADS` is not a count.
pub fn threads(option: Option<u16>) -> Result<usize, ExitCode> {
    if let Some(n) = option {
        return Ok(usize::from(n));
    }
    match crate::dataflow::env_threads() {
        Ok(n) => Ok(n.unwrap_or(0)),
        Err(why) => {
            eprintln!("error: {why}");
            Err(ExitCode::from(2))
        }
    }
}

/// The number of an exit code made by this crate (0, 1 or 2).
pub fn code_of(code: ExitCode) -> u8 {
    if code == ExitCode::SUCCESS {
        0
    } else if code == ExitCode::from(1) {
        1
    } else {
        2
    }
}

/// C printed from a transformation ([`Loaded::c_printed`]).
pub enum CText {
    /// Into the file's functions.
    InPlace(crate::cfront::inplace::InPlace),
    /// As `void kernel(...)`.
    Kernel(String),
}

impl CText {
    /// What `--emit code` prints on stdout.
    pub fn text(&self) -> String {
        match self {
            CText::InPlace(done) => done.text(),
            CText::Kernel(text) => text.clone(),
        }
    }
}

/// A program loaded by [`load`], with the source its spans point into and the
/// host it was loaded into.
pub struct Loaded {
    pub program: Program,
    pub files: SourceFiles,
    pub file: FileId,
    pub host: Host,
    /// The file in `host`.
    pub source: crate::host::FileId,
    /// For a C file: the functions of its regions, which emitted C is
    /// printed back into (`cprint::inplace`).
    pub origin: Option<crate::cfront::emit::Origins>,
    /// For a C file: the text the program was lowered from (preprocessed
    /// when it was), which its spans point into.
    pub c_source: Option<String>,
}

impl Loaded {
    /// The text the program was lowered from: a preprocessed C file's
    /// preprocessor output, else the file's text. Whatever is lowered
    /// again beside the program (the calls' record) must start from it.
    pub fn lowered_text(&self) -> &str {
        match &self.c_source {
            Some(text) => text,
            None => self.files.source(self.file),
        }
    }

    /// What the verdicts on a C file assume beyond the model
    /// (`cfront::premises`); none for `.loop`.
    pub fn premises(&self) -> Vec<String> {
        match &self.c_source {
            Some(text) => crate::cfront::premises::premises(&self.program, text),
            None => Vec::new(),
        }
    }

    /// What the reports explain about names the C front end made
    /// (`cfront::premises::notes`); none for `.loop`.
    pub fn notes(&self) -> Vec<String> {
        match &self.c_source {
            Some(_) => crate::cfront::premises::notes(&self.program),
            None => Vec::new(),
        }
    }

    /// `Err` (after printing E0301) when `params` name a parameter the
    /// program lacks or break one of its assumptions (C's macro factors,
    /// `assume` in `.loop`). Commands that answer for every parameter value
    /// check this too, so that `--param` is never ignored in silence.
    pub fn check_params(&self, params: &[(String, i64)]) -> Result<(), ExitCode> {
        match self.program.check_overrides(params) {
            Ok(_) => Ok(()),
            Err(m) => {
                eprint!("{}", self.files.render(&Diagnostic::error("E0301", m)));
                Err(ExitCode::from(1))
            }
        }
    }

    /// A snapshot of the host to ask about the file.
    pub fn analysis(&self) -> Analysis {
        self.host.analysis()
    }

    /// `p` (a transformation of this file's program) as C: printed into
    /// the functions its regions came from where it splits back into them,
    /// else as `void kernel(...)` with a warning (W0913) saying why; loops
    /// of `omp` with OpenMP clauses. `Err` (after its diagnostic, E0913)
    /// when a function needs a value C does not have.
    pub fn c_printed(
        &self,
        p: &Program,
        omp: &[crate::cfront::emit::OmpLoop],
    ) -> Result<CText, ExitCode> {
        use crate::cfront::inplace::{in_place, NotInPlace};
        let kernel = || {
            CText::Kernel(crate::cfront::emit::program_of(
                p,
                "kernel",
                omp,
                &self.program,
            ))
        };
        let renamed = crate::cfront::emit::renamed_overlaps(p, &self.program);
        if !renamed.is_empty() {
            let d = Diagnostic::error(
                crate::cfront::E_RENAMED_OVERLAP,
                "the emitted C would lose what a pointer's overlap carries",
            )
            .note(format!(
                "{} of the transformed program copies an array that may overlap another; \
                 what the other's writes do to it, C does only to the original",
                renamed
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .note("`restrict`, or a caller in the file that passes distinct arrays, says they do not overlap (docs/c.md, Aliasing)");
            eprint!("{}", self.files.render(&d));
            return Err(ExitCode::from(1));
        }
        let Some(origins) = &self.origin else {
            return Ok(kernel());
        };
        match in_place(p, origins, &self.program, omp) {
            Ok(done) => Ok(CText::InPlace(done)),
            Err(NotInPlace::Kernel(why)) => {
                let d = Diagnostic::warning(
                    crate::cfront::W_NOT_IN_PLACE,
                    "printed as `void kernel(...)`, not in the file's functions",
                )
                .note(why)
                .note("docs/c.md, C output");
                eprint!("{}", self.files.render(&d));
                Ok(kernel())
            }
            Err(NotInPlace::Refused(why)) => {
                let d = Diagnostic::error(
                    crate::cfront::E_NO_EXTENT,
                    "the emitted C needs a size C does not have",
                )
                .note(why)
                .note(
                    "give the pointer's range with `#pragma arrayflow array` before the function \
                     (docs/c.md, Ranges)",
                );
                eprint!("{}", self.files.render(&d));
                Err(ExitCode::from(1))
            }
        }
    }

    /// [`Loaded::c_printed`] as text; where a function needs a value C does
    /// not have, `void kernel(...)` after the error (the language server's
    /// and `privatize`'s printer returns text).
    pub fn c_text(&self, p: &Program, omp: &[crate::cfront::emit::OmpLoop]) -> String {
        match self.c_printed(p, omp) {
            Ok(c) => c.text(),
            Err(_) => crate::cfront::emit::program_of(p, "kernel", omp, &self.program),
        }
    }

    /// Writes `header` (comments) and `c` to `out` (`-o`): for C printed
    /// into the file's functions, the whole file as written with each
    /// replaced; else stdout. Exit 1 when the whole file cannot be written
    /// (printed as `void kernel`).
    pub fn write_c(&self, header: &str, c: &CText, out: Option<&Path>) -> ExitCode {
        use std::io::Write as _;
        let mut header = header.to_string();
        for p in self.premises() {
            header.push_str(&format!("// assumes {p}\n"));
        }
        let header = header.as_str();
        let Some(path) = out else {
            let stdout = std::io::stdout();
            let mut o = std::io::BufWriter::new(stdout.lock());
            let written = o.write_all(header.as_bytes());
            let written = written.and_then(|()| o.write_all(c.text().as_bytes()));
            return finish(written.and_then(|()| o.flush()));
        };
        let text = match (c, &self.origin) {
            (CText::InPlace(done), Some(origins)) if self.c_source.is_some() => {
                done.file(&origins.text, header)
            }
            (CText::InPlace(_) | CText::Kernel(_), _) if self.c_source.is_some() => {
                eprintln!(
                    "error: `-o` writes the file with its functions replaced, but the program is \
                     printed as `void kernel(...)` (see the warning above); without `-o` it is \
                     printed on stdout"
                );
                return ExitCode::from(1);
            }
            _ => format!("{header}{}", c.text()),
        };
        match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                ExitCode::from(2)
            }
        }
    }

    /// Before emitting C from a C file: each value the output cannot keep
    /// (`cfront::opaque`) is an error on stderr (E0911), or a warning
    /// (W0911) when `allow`; `false` after an error.
    pub fn opaque_allowed(&self, allow: bool) -> bool {
        let Some(text) = &self.c_source else {
            return true;
        };
        let found = crate::cfront::opaque::find(&self.program, text);
        let note = if allow {
            "`--allow-opaque`: printed as the analysis read it; the output may not compute what the original does"
        } else {
            "the emitted C may not compute what the original does; `--allow-opaque` emits it anyway (docs/c.md, E0911)"
        };
        for o in &found {
            let d = if allow {
                Diagnostic::warning(crate::cfront::W_OPAQUE, "a value the emitted C cannot keep")
            } else {
                Diagnostic::error(crate::cfront::E_OPAQUE, "a value the emitted C cannot keep")
            };
            let d = d.primary(self.file, o.span, o.what.clone()).note(note);
            eprint!("{}", self.files.render(&d));
        }
        allow || found.is_empty()
    }
}

pub use crate::host::compile;

/// The answer of a question a command asks: nothing edits a command's host
/// while it asks, so nothing cancels it.
fn sure<T>(answer: Cancellable<T>) -> T {
    answer.expect("a command's question is never cancelled")
}

/// A host with these sizes and limits and the command's access kinds.
pub fn host(config: crate::dataflow::Config) -> Host {
    Host::new(Options {
        kinds: kinds(),
        ..config.into()
    })
}

/// Reads, parses and checks one `.loop` or C file: what every command that
/// takes a program starts with. Diagnostics (warnings included) are printed to
/// stderr. A file that cannot be read gives `Err(2)`; a program with errors
/// gives `Err(1)`; the caller returns that code.
pub fn load(path: &Path) -> Result<Loaded, ExitCode> {
    load_with(path, crate::dataflow::Config::default())
}

/// [`load`] into a database with these analysis settings.
pub fn load_with(path: &Path, config: crate::dataflow::Config) -> Result<Loaded, ExitCode> {
    load_to(path, config, &mut std::io::stderr())
}

/// [`load_with`], printing the diagnostics to `err` (a directory's files
/// each print to a buffer of their own: `project`).
pub fn load_to(
    path: &Path,
    config: crate::dataflow::Config,
    err: &mut dyn std::io::Write,
) -> Result<Loaded, ExitCode> {
    let program = read_program_to(path, err).ok_or(ExitCode::from(2))?;
    let origin = crate::cfront::is_c_path(path)
        .then(|| program.origin())
        .flatten();
    let c_source = crate::cfront::is_c_path(path).then(|| program.text.clone());
    let mut host = host(config);
    let name = path.display().to_string();
    let mut files = SourceFiles::new();
    let file = program.add_to(&mut files, &name);
    let source = host.set_file(&name, program.text);
    let analysis = host.analysis();
    let diags = in_file(sure(analysis.parse_diagnostics(source)), file);
    let _ = write!(err, "{}", files.render_all(&diags));
    let program = match sure(analysis.program(source)) {
        Some(program) if !has_errors(&diags) => program.clone(),
        _ => return Err(ExitCode::from(1)),
    };
    Ok(Loaded {
        program,
        files,
        file,
        host,
        source,
        origin,
        c_source,
    })
}

pub use crate::diagnostics::in_file;

/// The text of a source file, or `None` after printing why it cannot be
/// used: missing, a directory, unreadable, or not UTF-8.
pub fn read_source(path: &Path) -> Option<String> {
    read_source_to(path, &mut std::io::stderr())
}

/// [`read_source`], printing why not to `err`.
pub fn read_source_to(path: &Path, err: &mut dyn std::io::Write) -> Option<String> {
    let shown = path.display();
    if path.is_dir() {
        let _ = writeln!(err, "error: `{shown}` is a directory, not a source file");
        return None;
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            let _ = writeln!(err, "error: cannot read `{shown}`: {e}");
            return None;
        }
    };
    match String::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let _ = writeln!(
                err,
                "error: `{shown}` is not UTF-8 text (invalid byte at offset {at})"
            );
            None
        }
    }
}

/// A program file as the front end reads it: for a C file that is
/// preprocessed (see [`Preprocess`]), the preprocessor's output, with the
/// way back to the file's own lines.
pub struct Source {
    pub text: String,
    pre: Option<std::sync::Arc<crate::cfront::preprocess::Preprocessed>>,
}

impl Source {
    /// The functions of the file's regions ([`crate::cfront::origin`]).
    pub fn origin(&self) -> Option<crate::cfront::emit::Origins> {
        match &self.pre {
            None => crate::cfront::origin::find(&self.text, &self.text, &|s| Some(s)),
            Some(pre) => {
                crate::cfront::origin::find(&pre.text, &pre.original, &|s| pre.to_original(s))
            }
        }
    }

    /// Adds the file to `files` so that diagnostics show the file's own
    /// lines, and the preprocessor's output only for text from headers.
    pub fn add_to(&self, files: &mut SourceFiles, name: &str) -> FileId {
        match &self.pre {
            None => files.add(name, self.text.clone()),
            Some(pre) => {
                let p = pre.clone();
                files.add_mapped(
                    name,
                    pre.original.clone(),
                    format!("{name} (preprocessed)"),
                    pre.text.clone(),
                    Box::new(move |span| p.to_original(span)),
                    "this text comes from a header or a macro's definition: \
                     the position is in the preprocessor's output (`cc -E`)",
                )
            }
        }
    }
}

/// [`read_source`], then the preprocessor on a C file that wants it; `None`
/// after printing why it failed.
pub fn read_program(path: &Path) -> Option<Source> {
    read_program_to(path, &mut std::io::stderr())
}

/// [`read_program`], printing notes and errors to `err`.
pub fn read_program_to(path: &Path, err: &mut dyn std::io::Write) -> Option<Source> {
    use crate::cfront::preprocess;
    let text = read_source_to(path, err)?;
    let o = PREPROCESS.get_or_init(preprocess::Options::default);
    if !crate::cfront::is_c_path(path) || !preprocess::wanted(&text, o) {
        return Some(Source { text, pre: None });
    }
    match preprocess::run(path, text.clone(), o) {
        Ok(pre) => {
            let _ = writeln!(
                err,
                "note: `{}` was preprocessed (`cc -E`): positions below are in the file, \
                 except for text from headers",
                path.display()
            );
            Some(Source {
                text: pre.text.clone(),
                pre: Some(std::sync::Arc::new(pre)),
            })
        }
        // Wanted only for macros called like functions: without a
        // preprocessor they stay uninterpreted calls (W0907), as before.
        Err(why)
            if o.mode == preprocess::Mode::Auto
                && preprocess::foreign_includes(&text).is_empty() =>
        {
            let _ = writeln!(
                err,
                "note: `{}` calls macros the front end does not expand, and preprocessing failed: {}",
                path.display(),
                why.for_command()
            );
            Some(Source { text, pre: None })
        }
        Err(why) => {
            let _ = writeln!(err, "error: `{}`: {}", path.display(), why.for_command());
            None
        }
    }
}
