//! `arrayflow expand FILE [--param N=4] [--max-trips K] [--transform mse|sa]
//! [--format text|json]`: maximal static expansion at concrete sizes (classes,
//! labels, dead writes), or the single-assignment baseline; both with memory
//! and the loops that carry a dependence. Exit 0 on success, 1 when the
//! program has errors or the analysis cannot run at these sizes, 2 on usage or
//! I/O errors.

use super::{load, Budget, Format, Input};
use crate::codegen;
use crate::diagnostics::Diagnostic;
use crate::expansion::{self, parallel, render, sa, ExpansionError};
use std::io::Write;
use std::process::ExitCode;

/// `--transform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Transform {
    /// Maximal static expansion.
    #[default]
    Mse,
    /// Single assignment (fully indexed expansion), the baseline.
    Sa,
    /// The least expansion the parallel loops (`--parallel`, or the
    /// `doall` marks) need: storage under a schedule.
    Contract,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = Transform::Mse)]
    pub transform: Transform,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub budget: Budget,
    /// `--emit code`: print one expanded program valid for every parameter
    /// value (closed-form labels checked at several parameter vectors), in
    /// the input's language; `--emit c`: as C whatever the input.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// With `--emit`: also emit arrays whose labels are checked at the
    /// samples and validated but not proved static for every parameter
    /// value (the header says "checked, not proved"); without it they are
    /// not expanded (or take a proved, less expanded form).
    #[arg(long)]
    pub allow_unproved: bool,
    /// With `--emit` on a C file: emit C even where a value cannot be kept
    /// (a call to a function the file does not define and that is not
    /// `<math.h>`'s, a value read as `...`), with a warning; without it
    /// that is an error (E0911, docs/c.md).
    #[arg(long)]
    pub allow_opaque: bool,
    /// With `--transform contract`: the loops to run in parallel, by
    /// counter name (every other loop sequential); `i@12` is the `for i`
    /// loop on line 12, where sibling loops share the name `i`. Without it,
    /// the loops marked `doall`.
    #[arg(long, value_delimiter = ',')]
    pub parallel: Option<Vec<String>>,
    /// With `--transform contract`: an affine schedule in isl notation,
    /// `{ R[i] -> [0, i]; S[i, j] -> [j, i] }` (docs/expansion.md §10).
    #[arg(long, value_name = "FILE", conflicts_with = "parallel")]
    pub schedule: Option<std::path::PathBuf>,
    /// With `--transform contract`: arrays whose final contents are not
    /// results; those never live together on a cell share storage.
    #[arg(long, value_delimiter = ',', value_name = "ARRAYS")]
    pub temporaries: Option<Vec<String>>,
    /// With `--transform contract`: the arrays whose final contents are
    /// results (default: every array); every other array is a temporary.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ARRAYS",
        conflicts_with = "temporaries"
    )]
    pub live_out: Option<Vec<String>>,
    /// With `--emit`: write to FILE instead of stdout. On a C file printed
    /// back into its functions, the whole file as written (its
    /// `#include`s, macros, other functions, `main`) with each transformed
    /// function replaced in place, ready to compile (docs/c.md, C output).
    #[arg(short = 'o', long = "output", value_name = "FILE", requires = "emit")]
    pub output: Option<std::path::PathBuf>,
}

/// `--emit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The expanded program in the input's language (C for a C file, else
    /// `.loop`), after a report in comments.
    Code,
    /// The expanded program as C (docs/c.md, "C output").
    C,
}

/// The expansion at the command's sizes, or exit 1 after its diagnostic
/// (`expand`, `plot`, `privatize`).
pub fn expanded(
    loaded: &super::Loaded,
    input: &Input,
    budget: &Budget,
) -> Result<expansion::Expansion, ExitCode> {
    let config = input.sizes.config(budget.max_instances);
    expansion::expand_with(&loaded.program, &config, &super::kinds()).map_err(|e| {
        eprint!("{}", loaded.files.render(&diagnostic(&e, loaded.file)));
        ExitCode::from(1)
    })
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if args.transform == Transform::Contract {
        return contract(args, &loaded);
    }
    if args.parallel.is_some()
        || args.schedule.is_some()
        || args.temporaries.is_some()
        || args.live_out.is_some()
    {
        eprintln!(
            "error: `--parallel`, `--schedule`, `--temporaries` and `--live-out` go with `--transform contract`"
        );
        return ExitCode::from(2);
    }
    if let Some(emit) = args.emit {
        // The baseline is a report: its program would be the expanded one.
        if args.transform == Transform::Sa {
            eprintln!(
                "error: `--emit` prints maximal static expansion's program; `--transform sa` (the single-assignment baseline) is a report only: drop one of them"
            );
            return ExitCode::from(2);
        }
        let c = emit == Emit::C || crate::cfront::is_c_path(&args.input.file);
        return emit_code(args, &loaded, c);
    }
    let exp = match expanded(&loaded, &args.input, &args.budget) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let program = &loaded.program;
    let base = sa::single_assignment(program, &exp);
    let loops = match parallel::report(program, &exp) {
        Ok(l) => l,
        Err(e) => {
            let e = ExpansionError::Dataflow(crate::dataflow::DataflowError::Memory(e));
            eprint!("{}", loaded.files.render(&diagnostic(&e, loaded.file)));
            return ExitCode::from(1);
        }
    };
    let mut loops = loops;
    if args.format == Format::Text {
        let names = parallel::loop_names(program, &loop_lines(&loaded));
        for l in &mut loops {
            l.name = names[l.counter.index()].clone();
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = match (args.transform, args.format) {
        (Transform::Mse, Format::Json) => render::json(&exp, &base, &loops, &mut out),
        (Transform::Mse, Format::Text) => render::text(&exp, &base, &loops, &mut out),
        (Transform::Sa, Format::Json) => render::sa_json(program, &exp, &base, &loops, &mut out),
        (Transform::Sa, Format::Text) => render::sa_text(program, &exp, &base, &loops, &mut out),
        // Answered by `contract` above.
        (Transform::Contract, _) => Ok(()),
    };
    super::finish(written.and_then(|()| out.flush()))
}

/// The diagnostic for an expansion error.
pub fn diagnostic(e: &ExpansionError, file: crate::diagnostics::FileId) -> Diagnostic {
    match e {
        ExpansionError::Dataflow(d) => super::flow::diagnostic(d, file),
        other => Diagnostic::error("E0501", other.to_string()),
    }
}

/// The line of every loop's `for` (or `while`) in the loaded file, by
/// counter id: reports name loops `i@LINE`.
pub(super) fn loop_lines(loaded: &super::Loaded) -> Vec<Option<u32>> {
    let mut out = vec![None; loaded.program.counters.len()];
    for (c, span) in parallel::loop_spans(&loaded.program) {
        if !span.is_none() {
            out[c.index()] = Some(loaded.files.line_of(loaded.file, span) as u32);
        }
    }
    out
}

/// The code generators' options from the sizes and budget flags.
pub(super) fn codegen_options(
    input: &Input,
    budget: &Budget,
    allow_unproved: bool,
) -> codegen::Options {
    codegen::Options {
        params: input.sizes.params.clone(),
        max_trips: input.sizes.max_trips,
        max_instances: budget.max_instances,
        allow_unproved,
        ..Default::default()
    }
}

/// Prints the expanded program, as C when `c` (the report's `#` lines
/// become `//` comments).
fn emit_code(args: &Args, loaded: &super::Loaded, c: bool) -> ExitCode {
    if c && !loaded.opaque_allowed(args.allow_opaque) {
        return ExitCode::from(1);
    }
    let o = codegen_options(&args.input, &args.budget, args.allow_unproved);
    match codegen::try_emit(&loaded.program, &o) {
        Ok(mut e) => {
            e.doall = parallel::doall_names(&loaded.program, &loop_lines(loaded), &e.program);
            let report = codegen::report::text(&loaded.program, &e);
            if c {
                let header = comments(&report);
                return match loaded.c_printed(&e.program, &[]) {
                    Ok(printed) => loaded.write_c(&header, &printed, args.output.as_deref()),
                    Err(code) => code,
                };
            }
            write_text(&(report + &e.text), args.output.as_deref())
        }
        Err(why) => {
            let d = Diagnostic::error(why.code().unwrap_or("E0601"), why.to_string());
            eprint!("{}", loaded.files.render(&d));
            ExitCode::from(1)
        }
    }
}

/// A report's `#` lines as C's `//` comments.
pub(super) fn comments(report: &str) -> String {
    (report.lines())
        .map(|l| format!("//{}\n", l.strip_prefix('#').unwrap_or(l)))
        .collect()
}

/// `text` on stdout, or in the file `out`.
pub(super) fn write_text(text: &str, out: Option<&std::path::Path>) -> ExitCode {
    match out {
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                ExitCode::from(2)
            }
        },
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            super::finish(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
        }
    }
}

/// `--transform contract`: the schedule, then the contraction report or
/// (`--emit code`) the contracted program.
fn contract(args: &Args, loaded: &super::Loaded) -> ExitCode {
    use crate::storage::{self, Schedule};
    let program = &loaded.program;
    let lines = loop_lines(loaded);
    // Under `--parallel` or the `doall` marks, the parallel loops are the
    // original's, named with their lines.
    let parallel_names = |s: &Schedule| -> Option<Vec<String>> {
        let names = parallel::loop_names(program, &lines);
        let fors = crate::storage::nodes::fors(&program.body);
        (args.schedule.is_none()).then(|| {
            (fors.iter().filter(|f| s.is_parallel(f.counter)))
                .map(|f| names[f.counter.index()].clone())
                .collect()
        })
    };
    let schedule = match &args.schedule {
        Some(path) => affine_schedule(program, path),
        None => Schedule::picked(program, args.parallel.as_deref(), &lines).map_err(|e| {
            eprint!(
                "{}",
                loaded
                    .files
                    .render(&Diagnostic::error("E0603", e.to_string()))
            );
            ExitCode::from(1)
        }),
    };
    let schedule = match schedule {
        Ok(s) => s,
        Err(code) => return code,
    };
    let temporaries: Vec<_> = match super::live::scratch(program, &args.live_out, &args.temporaries)
    {
        Ok(names) => names.iter().filter_map(|n| program.array(n)).collect(),
        Err(message) => {
            let d = Diagnostic::error("E0606", message);
            eprint!("{}", loaded.files.render(&d));
            return ExitCode::from(1);
        }
    };
    let fail = |d: Diagnostic| {
        eprint!("{}", loaded.files.render(&d));
        ExitCode::from(1)
    };
    let o = codegen_options(&args.input, &args.budget, args.allow_unproved);
    if args.emit.is_some() {
        if !loaded.opaque_allowed(args.allow_opaque) {
            return ExitCode::from(1);
        }
        return match storage::pair::checked_with(program, &schedule, &temporaries, &o) {
            Ok(mut e) => {
                if let Some(names) = parallel_names(&schedule).filter(|_| e.iterations.is_none()) {
                    e.parallel = names;
                }
                if crate::cfront::is_c_path(&args.input.file) {
                    let header = comments(&storage::emit::header(&e));
                    return match loaded.c_printed(&e.program, &[]) {
                        Ok(printed) => loaded.write_c(&header, &printed, args.output.as_deref()),
                        Err(code) => code,
                    };
                }
                write_text(
                    &(storage::emit::header(&e) + &e.text),
                    args.output.as_deref(),
                )
            }
            Err(e) => fail(storage_diagnostic(program, &e, loaded.file, &lines)),
        };
    }
    let exp = match expanded(loaded, &args.input, &args.budget) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let given = args.temporaries.is_some() || args.live_out.is_some();
    let temps = given.then_some(temporaries.as_slice());
    let config = args.input.sizes.config(args.budget.max_instances);
    // With the pairing, the report is of the first stage's program.
    let (mut c, reported) =
        match storage::pair::contract_with(program, &exp, &schedule, temps, &o, &config) {
            Ok(x) => x,
            Err(e) => return fail(storage_diagnostic(program, &e, loaded.file, &lines)),
        };
    let reported = reported.as_ref().map_or(program, |r| &r.program);
    // Text names loops `i@LINE`; JSON keeps the counters.
    if args.format == Format::Text {
        if let Some(names) = parallel_names(&schedule) {
            c.parallel = names;
        }
        let lines = parallel::lines_in(program, &lines, reported);
        c.name_loops(parallel::loop_names(reported, &lines));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = match args.format {
        Format::Json => storage::render::json(reported, &c, &mut out),
        Format::Text => storage::render::text(reported, &c, &mut out),
    };
    super::finish(written.and_then(|()| out.flush()))
}

/// E0602 (a parallel loop breaks a flow dependence), E0604 (no storage
/// mapping or no contracted program).
pub(super) fn storage_diagnostic(
    program: &crate::model::Program,
    e: &crate::storage::emit::EmitError,
    file: crate::diagnostics::FileId,
    lines: &[Option<u32>],
) -> Diagnostic {
    let span = |site| crate::storage::emit::site_span(program, site);
    diagnostic_at(program, &span, e, file, lines)
}

/// `storage_diagnostic` naming `program`'s sites, placed by `span`, and
/// its loops by their `lines` (by counter id).
fn diagnostic_at(
    program: &crate::model::Program,
    span: &dyn Fn(crate::model::Site) -> crate::model::Span,
    e: &crate::storage::emit::EmitError,
    file: crate::diagnostics::FileId,
    lines: &[Option<u32>],
) -> Diagnostic {
    use crate::storage::emit::EmitError;
    use crate::storage::StorageError;
    match e {
        EmitError::Storage(StorageError::Violated(v)) => {
            let names = parallel::loop_names(program, lines);
            let v: Vec<crate::storage::Violation> = (v.iter().cloned())
                .map(|mut o| {
                    if let Some(n) = o.counter.and_then(|c| names.get(c.index())) {
                        o.loop_name = n.clone();
                    }
                    o
                })
                .collect();
            let first = &v[0];
            let show = |t: &[i64]| {
                let v: Vec<String> = t.iter().map(|x| x.to_string()).collect();
                format!("[{}]", v.join(", "))
            };
            let message = match &first.times {
                Some((ts, tr)) => format!(
                    "the schedule breaks a flow dependence: {} reads `{}` (its read {}) written by \
                     {}, which is not scheduled before it (times {} and {})",
                    first.read,
                    first.array,
                    first.access,
                    first.source,
                    show(ts),
                    show(tr)
                ),
                None => format!(
                    "parallel loop `{}` breaks a flow dependence: {} reads `{}` (its read {}) \
                     written by {} in another iteration of `{}`",
                    first.loop_name,
                    first.read,
                    first.array,
                    first.access,
                    first.source,
                    first.loop_name
                ),
            };
            let mut d = Diagnostic::error("E0602", message)
                .primary(file, span(first.read_site), "this read")
                .secondary(file, span(first.source_site), "its source");
            for o in &v {
                let by = match &o.times {
                    Some(_) => "the schedule".to_string(),
                    None => format!("`{}`", o.loop_name),
                };
                d = d.note(format!(
                    "{by} breaks {} flow pair(s) {} -> {} on {} (e.g. {} -> {})",
                    o.count,
                    program.site_name(o.source_site),
                    program.site_name(o.read_site),
                    o.array,
                    o.source,
                    o.read
                ));
            }
            d
        }
        EmitError::Storage(StorageError::Unmappable(u)) => {
            let d = Diagnostic::error(
                "E0604",
                format!("no storage mapping for `{}`: {}", u.array, u.reason),
            );
            match u.site {
                Some(s) => d.primary(file, span(s), "here"),
                None => d,
            }
        }
        EmitError::Expansion(x) => diagnostic(x, file),
        EmitError::Reschedule(r) => {
            let d = Diagnostic::error(
                "E0604",
                format!(
                    "no `doall` marking orders the operations as the schedule does, and the \
                     program cannot be rescheduled to its order: {}; without `--emit` the \
                     mapping is reported",
                    r.message
                ),
            );
            match r.span.is_none() {
                true => d,
                false => d.primary(file, r.span, "here"),
            }
        }
        EmitError::Other(msg) => Diagnostic::error("E0604", msg.clone()),
        // The sites are the first stage's program's, placed at their
        // originals.
        EmitError::Paired { error, stage } => {
            let p1 = &stage.program;
            let original = |site| crate::storage::pair::original_span(program, p1, site);
            let lines = parallel::lines_in(program, lines, p1);
            diagnostic_at(p1, &original, error, file, &lines).note(format!(
                "after maximal static expansion, first, of the arrays under dynamic control: {}",
                stage.lines.join("; ")
            ))
        }
    }
}

/// `--schedule FILE`: the affine schedule, or exit 2 when FILE cannot be
/// read, 1 after E0605 pointing into it.
fn affine_schedule(
    program: &crate::model::Program,
    path: &std::path::Path,
) -> Result<crate::storage::Schedule, ExitCode> {
    read_affine(program, path).map(|a| crate::storage::Schedule::affine(program, a))
}

/// The affine schedule in FILE (`--schedule`), or exit 2 when FILE cannot
/// be read, 1 after E0605 pointing into it.
pub(super) fn read_affine(
    program: &crate::model::Program,
    path: &std::path::Path,
) -> Result<crate::storage::affine::AffineSchedule, ExitCode> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return Err(ExitCode::from(2));
        }
    };
    match crate::storage::affine::parse(program, &text) {
        Ok(a) => Ok(a),
        Err(e) => {
            let mut files = crate::diagnostics::SourceFiles::new();
            let file = files.add(path.display().to_string(), text);
            let d = Diagnostic::error("E0605", format!("schedule: {}", e.message))
                .primary(file, e.span, "here");
            eprint!("{}", files.render(&d));
            Err(ExitCode::from(1))
        }
    }
}
