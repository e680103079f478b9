//! `arrayflow privatize FILE [--param N=4] [--max-trips K] [--format
//! text|json]`: per loop and array, whether private copies make the loop
//! parallel, with the copy-in and finalization they need (σ at concrete
//! sizes; docs/expansion.md, "Privatization"). Exit 0 on success, 1 when the
//! program has errors or the analysis cannot run at these sizes, 2 on usage
//! or I/O errors.

use super::{load, Budget, Format, Input};
use crate::expansion;
use crate::privatize::{self, render};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub budget: Budget,
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let config = args.input.sizes.config(args.budget.max_instances);
    let exp = match expansion::expand_with(&loaded.program, &config, &super::kinds()) {
        Ok(e) => e,
        Err(e) => {
            let d = super::expand::diagnostic(&e, loaded.file);
            eprint!("{}", loaded.files.render(&d));
            return ExitCode::from(1);
        }
    };
    let loops = privatize::analyze(&loaded.program, &exp);
    let params = exp.inst.facts.params.clone();
    match args.format {
        Format::Text => print!("{}", render::text(&params, &loops)),
        Format::Json => println!("{}", render::json(&params, &loops)),
    }
    ExitCode::SUCCESS
}
