//! `arrayflow verify FILE`: check the dataflow analysis against runs. Every
//! executed read's actual writer (or the initial value) must be in σ. Exit 0
//! when no read breaks this, 1 with every violation (or when the program has
//! errors or a run fails), 2 on usage or I/O errors.

use super::run::{options, report, Limits};
use super::{load, Sizes};
use crate::verify::{verify, VerifyError};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C file to check.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub sizes: Sizes,
    /// How many seeds to run (0, 1, ...).
    #[arg(long, default_value_t = 100)]
    pub seeds: u64,
    #[command(flatten)]
    pub limits: Limits,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let o = match options(&loaded.program, &args.sizes, &args.limits) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match verify(&loaded.program, &args.sizes.params, &o, args.seeds) {
        Ok(r) if r.violations.is_empty() => {
            println!(
                "σ holds: {} reads checked on {} seeds (max-trips {})",
                r.reads, r.seeds, o.max_trips
            );
            ExitCode::SUCCESS
        }
        Ok(r) => {
            for v in &r.violations {
                println!("{v}");
            }
            println!(
                "{} of {} reads break σ on {} seeds",
                r.violations.len(),
                r.reads,
                r.seeds
            );
            ExitCode::from(1)
        }
        Err(VerifyError::Run(seed, e)) => {
            let msg = format!("seed {seed}: {}", e.message);
            report(&loaded, "E0400", &msg, e.span);
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
