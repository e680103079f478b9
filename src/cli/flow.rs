//! `arrayflow flow FILE [--param N=4] [--max-trips 3] [--format text|json|isl]
//! [--max-instances N] [--symbolic] [--instances]`: the possible sources of
//! every read (σ) at concrete sizes, grouped per read access and streamed, through the analysis database (per kernel, then put
//! together: docs/architecture.md); with `--symbolic`, σ for every parameter
//! value where it is proved (docs/symbolic.md). Exit 0 on success, 1 when the program has errors
//! or the analysis cannot run at these sizes (a budget exceeded, say), 2 on
//! usage or I/O errors.

use super::{load_to, Budget, Input, Loaded};
use crate::dataflow;
use crate::dataflow::render::GroupWriter;
use crate::host::FlowError;
use crate::symbolic::isl::BoundedWriter;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = FlowFormat::Text)]
    pub format: FlowFormat,
    #[command(flatten)]
    pub budget: Budget,
    /// σ for every parameter value: a quast per read, proved exact, or the
    /// reason the read falls back to bounded σ (docs/symbolic.md).
    #[arg(long)]
    pub symbolic: bool,
    /// JSON: one record per read instance instead of the groups per read
    /// access (docs/flow.md, "One record per instance").
    #[arg(long)]
    pub instances: bool,
    /// What computes bounded σ: `rules` (the Datalog rules over the facts),
    /// `quasts` (each read instance's proved quast evaluated: static
    /// control only), `auto` (quasts past 10^5 access instances when every
    /// read has one and their samples are under half the instances, else
    /// rules), `dd` (the rules on timely/differential dataflow across
    /// workers and processes: docs/scaling.md). All give
    /// the same output (docs/flow.md).
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    pub engine: Engine,
    /// Threads for bounded σ (default: `ARRAYFLOW_THREADS`, else every
    /// core); the output is the same at every count (docs/scaling.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// σ at call granularity (each call instance one operation), from the
    /// procedures' summaries or by inlining (docs/regions.md §7).
    #[arg(long, value_enum, value_name = "HOW")]
    pub calls: Option<CallsMode>,
    #[command(flatten)]
    pub dd: DdArgs,
}

/// The options of the dd engine.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DdArgs {
    /// `--engine dd`: worker threads in each process (timely's `-w`).
    #[arg(long, value_name = "W", value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: Option<u16>,
    /// `--engine dd`: the number of processes (timely's `-n`); needs `--hosts`.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u16).range(1..))]
    pub processes: Option<u16>,
    /// `--engine dd`: this process's index, 0 to P-1 (timely's `-p`); 0 prints.
    #[arg(long, value_name = "I")]
    pub process: Option<u16>,
    /// `--engine dd`: a file with one `host:port` per line, a line per
    /// process in index order (timely's `-h`).
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<std::path::PathBuf>,
    /// `--engine dd`: seconds to wait for the other processes to connect
    /// (default 30).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub dd_timeout: Option<u64>,
}

impl DdArgs {
    /// Whether any dd option was given.
    pub fn given(&self) -> bool {
        self.workers.is_some()
            || self.processes.is_some()
            || self.process.is_some()
            || self.hosts.is_some()
            || self.dd_timeout.is_some()
    }
}

impl Args {
    /// Whether the dd engine runs the command.
    pub fn distributed(&self) -> bool {
        self.engine == Engine::Dd || self.dd.given()
    }
}

/// `--calls`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CallsMode {
    Summary,
    Inline,
}

/// `--engine`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    #[default]
    Auto,
    Rules,
    Quasts,
    /// The rules on differential dataflow (feature `dd`).
    Dd,
}

/// Access instances past which `--engine auto` tries the quasts: below,
/// the rules take milliseconds, less than finding the quasts.
const QUASTS_PAST: u64 = 100_000;

/// `--format text|json|isl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FlowFormat {
    #[default]
    Text,
    Json,
    /// isl notation: relations per read access.
    Isl,
}

/// `flow` on the rules or quasts engine (the dd engine is
/// [`super::distributed::run`]; [`Args::distributed`] says which).
pub fn run(args: &Args) -> ExitCode {
    if args.input.file.is_dir() {
        return directory(args);
    }
    let threads = match super::threads(args.threads) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let here = || {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        run_to(args, &mut out, &mut std::io::stderr())
    };
    match dataflow::with_threads(threads, here) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: cannot start {threads} threads: {e}");
            ExitCode::from(2)
        }
    }
}

/// `flow DIR`: every `.loop` and `.c` file under DIR, files across the
/// threads, each file's output whole under a `==> FILE <==` line, then the
/// table (`super::project`).
fn directory(args: &Args) -> ExitCode {
    let files = match super::project::expand(std::slice::from_ref(&args.input.file)) {
        Ok(f) => f,
        Err(why) => {
            eprintln!("error: {why}");
            return ExitCode::from(2);
        }
    };
    let threads = match super::threads(args.threads) {
        Ok(n) => n,
        Err(code) => return code,
    };
    super::project::run(&files, threads, true, |path| {
        let mut one = args.clone();
        one.input.file = path.to_path_buf();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = super::code_of(run_to(&one, &mut out, &mut err));
        let found = if code == 0 {
            instances_of(&one)
        } else {
            String::new()
        };
        super::project::Report {
            out,
            err,
            code,
            found,
        }
    })
}

/// The access instances of the file of `args` at its sizes, for the table.
fn instances_of(args: &Args) -> String {
    let Some(source) = super::read_program_to(&args.input.file, &mut std::io::sink()) else {
        return String::new();
    };
    let file = crate::diagnostics::FileId(0);
    let Some(program) = crate::host::compile(&args.input.file, &source.text, file).0 else {
        return String::new();
    };
    let config = args.input.sizes.config(args.budget.max_instances);
    match instances(&program, &config) {
        Some(Ok(n)) => format!("{n} access instances"),
        Some(Err(n)) => format!("≥ {n} access instances"),
        None => String::new(),
    }
}

/// The command on one file, σ to `out` and diagnostics to `err`.
pub fn run_to(args: &Args, mut out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    if args.instances && (args.format != FlowFormat::Json || args.symbolic) {
        let _ = writeln!(
            err,
            "error: `--instances` prints one JSON record per read instance of bounded σ: use it with `--format json` and without `--symbolic`"
        );
        return ExitCode::from(2);
    }
    if args.instances && args.engine == Engine::Quasts {
        let _ = writeln!(err, "error: `--instances` records come from the rules engine: use it without `--engine quasts`");
        return ExitCode::from(2);
    }
    args.budget.install();
    let config = args.input.sizes.config(args.budget.max_instances);
    let loaded = match load_to(&args.input.file, config.clone(), err) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Some(mode) = args.calls {
        return calls(&loaded, &config, mode, args.format, out, err);
    }
    if args.symbolic {
        return symbolic(&loaded.program, args.format, out);
    }
    // At the file's own sizes (no `--param`), a program past
    // SYMBOLIC_PAST instances gets symbolic σ when every read has it: bounded σ
    // would take minutes there (PolyBench's atax at LARGE), the quasts a
    // second. `--param` asks for bounded σ at those sizes.
    let mut tried_quasts = false;
    if !args.instances && args.input.sizes.params.is_empty() {
        let big = match instances(&loaded.program, &config) {
            Some(Ok(n)) | Some(Err(n)) => n > SYMBOLIC_PAST,
            None => false,
        };
        if big {
            match symbolic_instead(&loaded, args, out, err) {
                Ok(code) => return code,
                // Not every read is exact: the quast engine would find the
                // same after analysing again.
                Err(_) if args.engine == Engine::Auto => tried_quasts = true,
                Err(_) => {}
            }
        }
    }
    let rules = matches!(args.engine, Engine::Rules | Engine::Dd);
    if !args.instances && !rules && !tried_quasts {
        match by_quasts(&loaded, args, &config, out) {
            Ok(Some(written)) => return super::finish(written.and_then(|()| out.flush())),
            Ok(None) => {}
            Err(why) => {
                let _ = writeln!(err, "error: `--engine quasts`: {why}");
                return ExitCode::from(1);
            }
        }
    }
    let analysis = loaded.analysis();
    // Small kernels side by side on the pool's threads (bounded σ only).
    super::sure(analysis.prefetch_flows(loaded.source));
    let written = if args.instances {
        // One record per instance: σ of the whole file first (on a
        // spread dd cluster, each process's readers').
        match super::sure(analysis.flow_instances(loaded.source, &mut out)) {
            Ok(written) => written,
            Err(e) => return analysis_failed(&loaded, e, args, out, err),
        }
    } else {
        // Grouped, streamed a site at a time: no whole-file σ is built.
        let r = match args.format {
            FlowFormat::Isl => super::sure(analysis.flow_groups(
                loaded.source,
                |program, (params, trips)| BoundedWriter::new(program, &params, trips, &mut out),
                |w, a| w.write(&a),
            ))
            .map(|r| r.and_then(|w| w.finish().map(|_| ()))),
            format => super::sure(analysis.flow_groups(
                loaded.source,
                |program, (params, trips)| {
                    GroupWriter::new(
                        program,
                        &params,
                        trips,
                        format == FlowFormat::Json,
                        &mut out,
                    )
                },
                |w, a| w.write(&a),
            ))
            .map(|r| r.and_then(|w| w.finish().map(|_| ()))),
        };
        match r {
            Ok(r) => r,
            Err(e) => return analysis_failed(&loaded, e, args, out, err),
        }
    };
    super::finish(written.and_then(|()| out.flush()))
}

/// Bounded σ by the quast engine (`symbolic::bounded`), when `--engine`
/// asks for it and it applies: Ok(None) to leave it to the rules (`auto`
/// under [`QUASTS_PAST`] instances or without a quast for every read, and
/// past the instance budget, where the rules give E0302); Err(why) when
/// `--engine quasts` cannot be honoured.
fn by_quasts(
    loaded: &super::Loaded,
    args: &Args,
    config: &dataflow::Config,
    out: &mut dyn Write,
) -> Result<Option<std::io::Result<()>>, String> {
    let program = &loaded.program;
    let forced = args.engine == Engine::Quasts;
    let n = match instances(program, config) {
        Some(Ok(n)) => Some(n),
        Some(Err(_)) | None => None,
    };
    match n {
        Some(n) if n > config.max_instances => return Ok(None),
        None if !forced => return Ok(None),
        Some(n) if n <= QUASTS_PAST && !forced => return Ok(None),
        _ => {}
    }
    if let (Some(n), false) = (n, forced) {
        // The quasts are fitted to bounded σ at small sizes first: when
        // those cost about what bounded σ costs here (no parameters, or
        // sizes as small as the samples), the rules are cheaper.
        if sample_instances(program, config).saturating_mul(2) >= n {
            return Ok(None);
        }
    }
    let Ok(values) = program.param_values(&config.params) else {
        return Ok(None);
    };
    let sym = crate::symbolic::analyze(program);
    if let Some(why) = crate::symbolic::bounded::unusable(program, &sym, &values) {
        return if forced { Err(why) } else { Ok(None) };
    }
    let params: Vec<(String, i64)> = (program.params.iter())
        .zip(&values)
        .map(|(q, &v)| (q.name.clone(), v))
        .collect();
    let trips = config.max_trips;
    let r = match args.format {
        FlowFormat::Isl => BoundedWriter::new(program, &params, trips, out).map(|mut w| {
            let r = crate::symbolic::bounded::groups(program, &sym, &values, |a| w.write(&a));
            (r, w.finish().map(|_| ()))
        }),
        format => GroupWriter::new(program, &params, trips, format == FlowFormat::Json, out).map(
            |mut w| {
                let r = crate::symbolic::bounded::groups(program, &sym, &values, |a| w.write(&a));
                (r, w.finish().map(|_| ()))
            },
        ),
    };
    match r {
        Err(e) => Ok(Some(Err(e))),
        Ok((Err(why), _)) => Err(why),
        Ok((Ok(Err(e)), _)) => Ok(Some(Err(e))),
        Ok((Ok(Ok(())), fin)) => Ok(Some(fin)),
    }
}

fn analysis_failed(
    loaded: &super::Loaded,
    e: FlowError,
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if let FlowError::Analysis(d) = e {
        // Over the budget at the file's own sizes: σ for every parameter
        // value instead, when it is exact for every read. Sizes given with
        // `--param` ask for bounded σ there: E0302 stays.
        let mut d = d;
        if d.code == "E0302" && !args.instances && args.input.sizes.params.is_empty() {
            match symbolic_instead(loaded, args, out, err) {
                Ok(code) => return code,
                Err(why) => d = d.note(why),
            }
        }
        let d = &super::in_file(&[d], loaded.file)[0];
        let _ = write!(err, "{}", loaded.files.render(d));
    }
    ExitCode::from(1)
}

/// Access instances past which `flow` with no `--param` prefers symbolic σ
/// (when exact): about a few seconds of bounded σ in the release build.
const SYMBOLIC_PAST: u64 = 4_000_000;

/// Prints symbolic σ, with a note saying why and how exact, when every read
/// of the program has a proved quast or a set of possible sources; else why
/// not.
fn symbolic_instead(
    loaded: &super::Loaded,
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<ExitCode, String> {
    let program = &loaded.program;
    let sym = crate::symbolic::analyze(program);
    let mut inexact = sym.reads.iter().filter_map(|r| match &r.outcome {
        crate::symbolic::Outcome::Exact(_) | crate::symbolic::Outcome::Possible(_) => None,
        crate::symbolic::Outcome::Fallback(why) => Some((r, why.as_str())),
    });
    if let Some((r, why)) = inexact.next() {
        return Err(format!(
            "σ for every parameter value (`--symbolic`) is not exact here: read {} of `{}`: {why}{}",
            r.read,
            program.stmts()[r.stmt.index()].label,
            match inexact.count() {
                0 => String::new(),
                n => format!(" ({n} more reads not exact)"),
            }
        ));
    }
    if let Some((c, _)) = sym.condition_reads.first() {
        return Err(format!(
            "σ for every parameter value (`--symbolic`) does not cover the reads of condition `{c}`"
        ));
    }
    let config = args.input.sizes.config(args.budget.max_instances);
    let needs = match instances(program, &config) {
        Some(Ok(n)) => format!("{n} access instances"),
        Some(Err(n)) => format!("at least {n} access instances"),
        None => format!("more than {} access instances", config.max_instances),
    };
    let at = match program.param_values(&config.params) {
        Ok(v) => (program.params.iter())
            .zip(v)
            .map(|(q, x)| format!("{}={x}", q.name))
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => String::new(),
    };
    // Reads outside static control get sets of possible sources, not σ.
    let possible = (sym.reads.iter())
        .filter(|r| matches!(r.outcome, crate::symbolic::Outcome::Possible(_)))
        .count();
    let given = match possible {
        0 => "exact for every parameter value".to_string(),
        n => format!(
            "for every parameter value: possible sources (not exact) for the {n} read{} outside static control{}",
            if n == 1 { "" } else { "s" },
            if n < sym.reads.len() { ", exact for the others" } else { "" }
        ),
    };
    let _ = writeln!(
        err,
        "note: bounded σ needs {needs} at {at} (budget {}, symbolic σ preferred past {SYMBOLIC_PAST}); σ given symbolically, {given} (docs/flow.md)",
        config.max_instances
    );
    Ok(print_symbolic(program, &sym, args.format, out))
}

/// Access instances of the whole program at `config`'s sizes, when they
/// can be counted cheaply: `Ok(exactly)` or, past what the count can hold,
/// `Err(at least)`.
fn instances(
    program: &crate::model::Program,
    config: &dataflow::Config,
) -> Option<Result<u64, u64>> {
    let params = program.param_values(&config.params).ok()?;
    let dims = crate::facts::count::dims(program, &params).ok()?;
    let names: Vec<(String, i64)> = (program.params.iter())
        .zip(&params)
        .map(|(q, &v)| (q.name.clone(), v))
        .collect();
    let unbounded = dataflow::Config {
        max_instances: u64::MAX,
        ..config.clone()
    };
    match crate::facts::count::count(program, &unbounded, &params, &dims, &names, &[]) {
        Ok(c) => Some(Ok(c?.instances)),
        Err(crate::facts::LowerError::Budget { count, .. }) => Some(Err(count)),
        Err(_) => None,
    }
}

/// The access instances of the first samples symbolic σ runs bounded σ at
/// (`symbolic::infer::Samples::first`), counted without lowering.
fn sample_instances(program: &crate::model::Program, config: &dataflow::Config) -> u64 {
    let samples = crate::symbolic::infer::samples(program).first();
    samples
        .iter()
        .map(|v| {
            let at = dataflow::Config {
                params: (program.params.iter())
                    .zip(v)
                    .map(|(q, &x)| (q.name.clone(), x))
                    .collect(),
                max_trips: 1,
                ..config.clone()
            };
            match instances(program, &at) {
                Some(Ok(n)) | Some(Err(n)) => n,
                None => 0,
            }
        })
        .fold(0u64, u64::saturating_add)
}

/// `--symbolic`: σ for every parameter value.
fn symbolic(program: &crate::model::Program, format: FlowFormat, out: &mut dyn Write) -> ExitCode {
    print_symbolic(program, &crate::symbolic::analyze(program), format, out)
}

fn print_symbolic(
    program: &crate::model::Program,
    sym: &crate::symbolic::Symbolic,
    format: FlowFormat,
    out: &mut dyn Write,
) -> ExitCode {
    let text = match format {
        FlowFormat::Text => crate::symbolic::render::text(program, sym),
        FlowFormat::Json => crate::symbolic::render::json(program, sym),
        FlowFormat::Isl => crate::symbolic::isl::symbolic(program, sym),
    };
    super::finish(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

pub use crate::dataflow::diagnostic;

/// `flow --calls summary|inline`: σ at call granularity, with a header
/// saying whether the summaries were exact and how the two compare.
fn calls(
    loaded: &Loaded,
    config: &crate::facts::Config,
    mode: CallsMode,
    format: FlowFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if format != FlowFormat::Text {
        let _ = writeln!(err, "error: `--calls` prints text only");
        return ExitCode::from(2);
    }
    let source = loaded.lowered_text();
    let path = std::path::Path::new(loaded.files.name(loaded.file));
    let calls = crate::host::calls(path, source, loaded.file);
    let p = &loaded.program;
    let c = match crate::interproc::compare(p, &calls, config) {
        Ok(c) => c,
        Err(crate::interproc::Error::Dataflow(e)) => {
            let d = diagnostic(&e, loaded.file);
            let _ = write!(err, "{}", loaded.files.render_all(&[d]));
            return ExitCode::from(1);
        }
        Err(crate::interproc::Error::Sizes(why)) => {
            let d = crate::diagnostics::Diagnostic::error("E0301", why);
            let _ = write!(err, "{}", loaded.files.render_all(&[d]));
            return ExitCode::from(1);
        }
    };
    let sizes: Vec<String> = p
        .param_values(&config.params)
        .unwrap_or_default()
        .iter()
        .zip(&p.params)
        .map(|(v, q)| format!("{}={v}", q.name))
        .collect();
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        out,
        "# sources at call granularity ({}) at {}, max-trips {}; summaries exact: {}; summary contains inline: {}; equal: {}",
        if mode == CallsMode::Summary { "summary" } else { "inline" },
        sizes.join(", "),
        config.max_trips,
        yes(c.exact),
        yes(c.sound()),
        yes(c.equal())
    );
    let flow = if mode == CallsMode::Summary {
        &c.summary
    } else {
        &c.inline
    };
    let _ = write!(out, "{}", crate::interproc::render(p, &calls, flow));
    ExitCode::SUCCESS
}
