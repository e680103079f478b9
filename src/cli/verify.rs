//! `arrayflow verify FILE`: check the dataflow analysis against runs. Every
//! executed read's actual writer (or the initial value) must be in σ. Exit 0
//! when no read breaks this, 1 with every violation (or when the program has
//! errors or a run fails), 2 on usage or I/O errors.
//!
//! `verify FILE --transform mse`: emit the expanded program (`expand --emit
//! code`) and run `equiv` (original vs emitted) at the given sizes, at
//! +1, +2 on every parameter, and at the corners (each parameter at 0 and at
//! 1 alone, every pair of parameters each at 0 or 1, the rest at the given
//! sizes); exit 0 when every comparison agrees, 1 on a mismatch (printed)
//! or when no program can be emitted.

use super::run::{options, report, Limits};
use super::{load, Input};
use crate::verify::{verify_with, VerifyError};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// How many seeds to run (0, 1, ...).
    #[arg(long, default_value_t = 100)]
    pub seeds: u64,
    #[command(flatten)]
    pub limits: Limits,
    #[command(flatten)]
    pub budget: super::Budget,
    /// Check a transformation instead of σ: `mse` compares the expanded
    /// program with the original at the given sizes, at +1 and +2 on every
    /// parameter, and at each parameter 0 and 1 (alone and in pairs, the
    /// rest at the given sizes); the last line lists the sizes compared.
    #[arg(long, value_enum)]
    pub transform: Option<Transform>,
    /// With `--transform mse`: also expand arrays whose labels are not
    /// proved static (`expand --allow-unproved`).
    #[arg(long)]
    pub allow_unproved: bool,
}

/// `--transform`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transform {
    /// Maximal static expansion, as `expand --emit code` prints it.
    Mse,
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if args.transform == Some(Transform::Mse) {
        return transform(args, &loaded);
    }
    let o = match options(&loaded.program, &args.input.sizes, &args.limits) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let config = args.input.sizes.config(args.budget.max_instances);
    match verify_with(&loaded.program, &config, &o, args.seeds) {
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
        Err(VerifyError::Analysis(e)) => {
            let d = super::flow::diagnostic(&e, loaded.file);
            eprint!("{}", loaded.files.render(&d));
            ExitCode::from(1)
        }
    }
}

fn transform(args: &Args, loaded: &super::Loaded) -> ExitCode {
    use crate::codegen::{self, check};
    use crate::equiv::Verdict;
    let p = &loaded.program;
    let o = codegen::Options {
        params: args.input.sizes.params.clone(),
        max_trips: args.input.sizes.max_trips,
        allow_unproved: args.allow_unproved,
        ..codegen::Options::default()
    };
    let emitted = match codegen::try_emit(p, &o) {
        Ok(e) => e,
        Err(why) => {
            let code = why.code().unwrap_or("E0601");
            eprint!(
                "{}",
                loaded.files.render(&crate::diagnostics::Diagnostic::error(
                    code,
                    why.to_string()
                ))
            );
            return ExitCode::from(1);
        }
    };
    let given = &args.input.sizes.params;
    let picked =
        check::shifted(p, given, &[0, 1, 2]).and_then(|near| Ok((near, check::corners(p, given)?)));
    let (mut vectors, (corners, refused)) = match picked {
        Ok(x) => x,
        Err(msg) => {
            eprintln!("error: {msg}");
            return ExitCode::from(2);
        }
    };
    for v in corners {
        if !vectors.contains(&v) {
            vectors.push(v);
        }
    }
    println!("# {}", codegen::report::checked_at(p, &emitted));
    for v in &refused {
        println!("{}: skipped, the assumptions do not hold", check::text(v));
    }
    let mut agreed = Vec::new();
    let mut originals = check::Originals::new(p, args.seeds)
        .with_limits(args.limits.max_steps, args.limits.max_cells);
    for (v, r) in originals.compare(&emitted.program, &vectors) {
        let at = if v.is_empty() {
            "no parameters".to_string()
        } else {
            check::text(&v)
        };
        match r {
            Ok(Verdict::Agree(a)) => {
                agreed.push(v.clone());
                println!(
                    "{at}: equivalent on {} seeds ({} reads, {} cells compared)",
                    a.seeds, a.reads, a.cells
                );
            }
            Ok(Verdict::Differ(m)) if m.limit => println!(
                "{at}: not compared, the expanded program stopped on a limit: {}",
                m.failure.unwrap_or_default()
            ),
            Ok(Verdict::Differ(m)) => {
                print!("{at}: {m}");
                println!("the expanded program is NOT equivalent");
                return ExitCode::from(1);
            }
            Err(e) if !e.in_b => println!("{at}: skipped, the original does not run: {e}"),
            Err(e) => {
                println!("{at}: the expanded program does not run: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if agreed.is_empty() {
        println!("no size where the original runs: nothing compared");
        return ExitCode::from(1);
    }
    println!(
        "mse: equivalent at {} parameter vectors: {}",
        agreed.len(),
        check::tuples(&agreed)
    );
    ExitCode::SUCCESS
}
