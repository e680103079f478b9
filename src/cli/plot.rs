//! `arrayflow plot FILE [--param N=4] --stmt S [--stmt T] -o out.svg`: the
//! 2-D iteration domain of the statements, coloured by class, with data-flow
//! arrows (Figures 4 and 5 of the paper). Exit 0 on success, 1 when the
//! program has errors or cannot be plotted, 2 on usage or I/O errors.

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
    #[arg(long = "stmt", value_name = "LABEL", required = true)]
    pub stmts: Vec<String>,
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
