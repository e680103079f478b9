//! `arrayflow facts FILE --format souffle DIR`: the relations the program
//! exports to run-time rules (crates/rules/src/relations.rs), written as Soufflé
//! input files: `DIR/NAME.facts` (tab-separated) per relation and
//! `DIR/inputs.dl` declaring them with `.input`.

use super::{Budget, Input};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FactsFormat {
    /// Soufflé: tab-separated `.facts` files and an `inputs.dl`.
    Souffle,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[command(flatten)]
    pub budget: Budget,
    #[arg(long, value_enum)]
    pub format: FactsFormat,
    /// The directory to write (created when missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn run(args: &Args) -> ExitCode {
    // Before the configuration, which reads the budget in force.
    args.budget.install();
    let config = args.input.sizes.config(args.budget.max_instances);
    let loaded = match super::load_with(&args.input.file, config) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let a = loaded.analysis();
    let mut errors = super::sure(a.analysis_diagnostics(loaded.source)).to_vec();
    errors.extend(super::sure(a.dependence_diagnostics(loaded.source)));
    let errors = super::in_file(&errors, loaded.file);
    if !errors.is_empty() {
        eprint!("{}", loaded.files.render_all(&errors));
        return ExitCode::from(1);
    }
    let Some(exported) = super::sure(a.exported(loaded.source)) else {
        return ExitCode::from(1);
    };
    match crate::datalog::souffle::write_dir(exported, &args.dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", args.dir.display());
            ExitCode::from(2)
        }
    }
}
