//! `arrayflow plot FILE [--param N=4] --stmt S [--stmt T] -o out.svg`: the
//! 2-D iteration domain of the statements, coloured by class, with data-flow
//! arrows (Figures 4 and 5 of the paper); with `--transform contract
//! [--parallel i]`, coloured by the storage place each write goes to under
//! the schedule (`storage::plot`). Exit 0 on success, 1 when the program
//! has errors or cannot be plotted, 2 on usage or I/O errors.

use super::{load, Budget, Input};
use crate::expansion::plot;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// A statement label to draw; repeat for several statements that share
    /// their two outer loops.
    #[arg(
        long = "stmt",
        value_name = "LABEL",
        required_unless_present = "transform"
    )]
    pub stmts: Vec<String>,
    /// `contract`: the storage mapping under the schedule (every statement
    /// in a loop unless `--stmt` says which); `mse` (the default): classes.
    #[arg(long, value_enum)]
    pub transform: Option<super::expand::Transform>,
    /// With `--transform contract`: the loops to run in parallel, by
    /// counter name or `i@LINE` (the `for i` loop on that line), else the
    /// `doall` marks.
    #[arg(long, value_delimiter = ',')]
    pub parallel: Option<Vec<String>>,
    /// The SVG file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// An arrow from every possible source, not only from the latest.
    #[arg(long)]
    pub all_arrows: bool,
    #[command(flatten)]
    pub budget: Budget,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let program = &loaded.program;
    let mut stmts = Vec::new();
    for label in &args.stmts {
        match program.stmts().iter().find(|s| s.label == *label) {
            Some(s) => stmts.push(s.id),
            None => {
                eprintln!("error: the program has no statement labelled `{label}`");
                return ExitCode::from(2);
            }
        }
    }
    args.budget.install();
    let exp = match super::expand::expanded(&loaded, &args.input, &args.budget) {
        Ok(e) => e,
        Err(code) => return code,
    };
    match args.transform {
        Some(super::expand::Transform::Contract) => return contract(args, &loaded, &exp, &stmts),
        Some(super::expand::Transform::Sa) => {
            eprintln!("error: `plot` draws `--transform mse` or `contract`");
            return ExitCode::from(2);
        }
        _ if args.parallel.is_some() => {
            eprintln!("error: `--parallel` goes with `--transform contract`");
            return ExitCode::from(2);
        }
        _ => {}
    }
    match plot::plot(program, &exp, &stmts, &args.output, args.all_arrows) {
        Ok(s) => {
            eprintln!(
                "wrote {}: {} operations, {} classes, {} arrows",
                args.output.display(),
                s.operations,
                s.classes,
                s.arrows
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `--transform contract`: the storage mapping under the schedule.
fn contract(
    args: &Args,
    loaded: &super::Loaded,
    exp: &crate::expansion::Expansion,
    stmts: &[crate::model::StmtId],
) -> ExitCode {
    use crate::storage::{self, Order, Schedule};
    let program = &loaded.program;
    let lines = super::expand::loop_lines(loaded);
    let schedule = match Schedule::picked(program, args.parallel.as_deref(), &lines) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let fail = |e: &storage::emit::EmitError| {
        let d = super::expand::storage_diagnostic(program, e, loaded.file, &lines);
        eprint!("{}", loaded.files.render(&d));
        ExitCode::from(1)
    };
    // Paired when an array under dynamic control needs expanding: then
    // the plot is of the first stage's program.
    let o = super::expand::codegen_options(&args.input, &args.budget, false);
    let config = args.input.sizes.config(args.budget.max_instances);
    let (c, reported) =
        match storage::pair::contract_with(program, exp, &schedule, None, &o, &config) {
            Ok(x) => x,
            Err(e) => return fail(&e),
        };
    let (shown, exp, schedule, stmts) = match &reported {
        None => (program, exp, &schedule, stmts.to_vec()),
        Some(r) => {
            for l in &c.paired {
                eprintln!("paired with maximal static expansion: {l}");
            }
            let stmts1 = storage::pair::stmts_on(program, stmts, &r.program);
            (&r.program, &r.expansion, &r.schedule, stmts1)
        }
    };
    let order = Order::new(shown, &exp.inst.facts, schedule);
    match storage::plot::plot(shown, exp, &order, &c.mapping, &stmts, &args.output) {
        Ok(s) => {
            eprintln!(
                "wrote {}: {} writes, {} storage places",
                args.output.display(),
                s.operations,
                s.places
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
