//! `arrayflow run FILE`: execute a program deterministically and print every
//! read (with the value and who wrote it) and the final contents of every
//! array. See docs/interpreter.md. Exit 0 when the run ends, 1 when the
//! program has errors or the run stops on one, 2 on usage or I/O errors.

use super::{load, Format, Input, Loaded, Sizes};
use crate::diagnostics::Diagnostic;
use crate::interp::{self, Options};
use crate::model::{Program, Span};
use std::process::ExitCode;

/// Budgets that stop a runaway run.
#[derive(clap::Args, Debug, Clone)]
pub struct Limits {
    /// The most steps (statements, condition tests, loop iterations) a run
    /// may take.
    #[arg(long, default_value_t = interp::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// The most array cells all arrays together may hold.
    #[arg(long, default_value_t = interp::DEFAULT_MAX_CELLS)]
    pub max_cells: u64,
}

/// Reordered loops, by counter name.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LoopOrder {
    /// Run every instance of the `for` loops with this counter last iteration
    /// first; repeat for several.
    #[arg(long = "reverse-loop", value_name = "COUNTER")]
    pub reverse: Vec<String>,
    /// Run every instance of the `for` loops with this counter in a seeded
    /// random order; repeat for several.
    #[arg(long = "shuffle-loop", value_name = "COUNTER")]
    pub shuffle: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// The seed of every hashed value (initial contents, `...`, calls,
    /// unknown conditions, shuffles).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub limits: Limits,
    #[command(flatten)]
    pub memory: super::Memory,
    #[command(flatten)]
    pub order: LoopOrder,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    args.memory.install();
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let mut options = match options(&loaded.program, &args.input.sizes, &args.limits) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // The declared ranges as the analyses evaluate them: a bound past 64-bit
    // integers is E0303, as in `flow`, not a range that wrapped around.
    if let Err(crate::facts::LowerError::Eval { what, span }) =
        crate::facts::count::dims(&loaded.program, &options.params)
    {
        report(&loaded, "E0303", &what, span);
        return ExitCode::from(1);
    }
    options.seed = args.seed;
    options.reverse = args.order.reverse.clone();
    options.shuffle = args.order.shuffle.clone();
    match interp::run(&loaded.program, &options) {
        Ok(r) => {
            match args.format {
                Format::Text => print!("{}", interp::output::text(&loaded.program, &options, &r)),
                Format::Json => println!("{}", interp::output::json(&loaded.program, &options, &r)),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            report(&loaded, "E0400", &e.message, e.span);
            ExitCode::from(1)
        }
    }
}

/// Interpreter options from the command line: parameter values (the
/// overrides, else the defaults), trips and budgets. Bad values are reported
/// here and give exit code 2.
pub fn options(program: &Program, sizes: &Sizes, limits: &Limits) -> Result<Options, ExitCode> {
    let params = program.param_values(&sizes.params).map_err(|msg| {
        eprintln!("error: {msg}");
        ExitCode::from(2)
    })?;
    let mut o = Options::new(params);
    o.max_trips = sizes.max_trips;
    o.max_steps = limits.max_steps;
    o.max_cells = limits.max_cells;
    // `o.max_memory` is the budget in force: `--max-memory`, when the
    // command has it, is installed before.
    Ok(o)
}

/// Prints an error as a diagnostic pointing into the source, when it has a
/// place.
pub fn report(loaded: &Loaded, code: &'static str, message: &str, span: Span) {
    let mut d = Diagnostic::error(code, message);
    if !span.is_none() {
        d = d.primary(loaded.file, span, "here");
    }
    eprint!("{}", loaded.files.render(&d));
}
