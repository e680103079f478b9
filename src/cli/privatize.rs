//! `arrayflow privatize FILE [--param N=4] [--max-trips K] [--format
//! text|json]`: per loop and array, whether private copies make the loop
//! parallel, with the copy-in and finalization they need: from exact σ, for
//! every parameter value, where the program is static control; from σ at
//! the given sizes elsewhere (docs/expansion.md, "Privatization"). Exit 0 on success, 1 when the
//! program has errors or the analysis cannot run at these sizes, 2 on usage
//! or I/O errors.

use super::{load, Budget, Format, Input};
use crate::diagnostics::Diagnostic;
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
    /// Print the privatized program instead, in the input's language: on a
    /// `.loop` file, `.loop` text where each loop that private copies make
    /// parallel runs `doall` over them (docs/expansion.md §9.1); on a C file,
    /// C with OpenMP `parallel for` and `private`, `firstprivate`,
    /// `lastprivate` clauses where they are exact (§9.3).
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// With `--emit` on a C file: emit C even where a value cannot be kept
    /// (a call to a function the file does not define and that is not
    /// `<math.h>`'s, a value read as `...`), with a warning; without it
    /// that is an error (E0911, docs/c.md).
    #[arg(long)]
    pub allow_opaque: bool,
    /// With `--emit code` on a C file: give loops that reduce real values
    /// (`s += A[i]` on `double`) OpenMP's `reduction` clause too. Each
    /// thread sums its own iterations and the partial sums are added at
    /// the end, in another order than the loop's, so the result may
    /// differ in the last bits. Reductions on integers get the clause
    /// without it.
    #[arg(long)]
    pub reassociate: bool,
    /// With `--emit code`: mark parallel the loops that privatization makes
    /// parallel at every size analysed even where exact σ cannot prove it
    /// for every parameter value (outside static control); the header says
    /// "checked, not proved". Without it such loops stay sequential.
    #[arg(long)]
    pub allow_unproved: bool,
    /// With `--emit code`: write to FILE instead of stdout. On a C file
    /// printed back into its functions, the whole file as written (its
    /// `#include`s, macros, other functions, `main`) with each transformed
    /// function replaced in place, ready to compile (docs/c.md, C output).
    #[arg(short = 'o', long = "output", value_name = "FILE", requires = "emit")]
    pub output: Option<std::path::PathBuf>,
}

/// `--emit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The privatized program, in the input's language (`.loop` or C).
    Code,
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    let loaded = match load(&args.input.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(code) = loaded.check_params(&args.input.sizes.params) {
        return code;
    }
    if args.emit.is_some() {
        return emit(args, &loaded);
    }
    let lines = super::expand::loop_lines(&loaded);
    let names = crate::expansion::parallel::loop_names(&loaded.program, &lines);
    // Exact σ decides for every parameter value where it exists; bounded σ
    // at the given sizes elsewhere.
    let premises = loaded.premises();
    let notes = loaded.notes();
    let why = match privatize::exact::analyze(&loaded.program) {
        Ok(mut loops) => {
            match args.format {
                Format::Text => {
                    for l in &mut loops {
                        l.name = names[l.counter.index()].clone();
                    }
                    print!("{}", render::exact_text(&loops));
                    footer(&premises, &notes);
                }
                Format::Json => {
                    println!(
                        "{}",
                        assuming(render::exact_json(&loops), &premises, &notes)
                    )
                }
            }
            return ExitCode::SUCCESS;
        }
        Err(why) => why,
    };
    let exp = match super::expand::expanded(&loaded, &args.input, &args.budget) {
        Ok(e) => e,
        Err(code) => return code,
    };
    eprintln!("note: privatization at the given sizes only: {why}");
    let mut loops = privatize::analyze(&loaded.program, &exp);
    let proved = privatize::possible::proves_report(&loaded.program, &loops);
    let params = exp.inst.facts.params.clone();
    // Text names loops `i@LINE`; JSON keeps the counter (and its depth).
    if args.format == Format::Text {
        for l in &mut loops {
            l.name = names[l.counter.index()].clone();
        }
    }
    match args.format {
        Format::Text => {
            let whiles = (loaded.program.counters.iter())
                .any(|c| c.kind == crate::model::CounterKind::While);
            let cut = whiles.then_some(args.input.sizes.max_trips);
            print!("{}", render::text(&params, &loops, cut, proved));
            footer(&premises, &notes);
        }
        Format::Json => println!(
            "{}",
            assuming(render::json(&params, &loops, proved), &premises, &notes)
        ),
    }
    ExitCode::SUCCESS
}

/// The text report's last lines: what its verdicts assume, and what names
/// the front end made stand for.
fn footer(premises: &[String], notes: &[String]) {
    premises.iter().for_each(|p| println!("# assumes {p}"));
    notes.iter().for_each(|n| println!("# {n}"));
}

/// The JSON report with what its verdicts assume (`"assumes"`, a list of
/// sentences) and what names the front end made stand for (`"notes"`),
/// when there are any.
fn assuming(
    mut report: serde_json::Value,
    premises: &[String],
    notes: &[String],
) -> serde_json::Value {
    if let Some(o) = report.as_object_mut() {
        for (key, lines) in [("assumes", premises), ("notes", notes)] {
            if !lines.is_empty() {
                o.insert(key.into(), serde_json::json!(lines));
            }
        }
    }
    report
}

fn emit(args: &Args, loaded: &super::Loaded) -> ExitCode {
    let program = &loaded.program;
    let o = crate::codegen::Options {
        params: args.input.sizes.params.clone(),
        max_trips: args.input.sizes.max_trips,
        max_instances: args.budget.max_instances,
        allow_unproved: args.allow_unproved,
        reassociate: args.reassociate,
        ..Default::default()
    };
    let c = crate::cfront::is_c_path(&args.input.file);
    if c && !loaded.opaque_allowed(args.allow_opaque) {
        return ExitCode::from(1);
    }
    // The language server's code action prints the same text; the last C
    // printed is kept for `-o` (the document ends with it).
    let printed = std::cell::RefCell::new(None);
    let print = |p: &crate::model::Program, omp: &[crate::cfront::emit::OmpLoop]| {
        let c = loaded.c_printed(p, omp);
        let text = match &c {
            Ok(c) => c.text(),
            Err(_) => crate::cfront::emit::program_of(p, "kernel", omp, program),
        };
        *printed.borrow_mut() = Some(c);
        text
    };
    match privatize::document::document_with(program, &o, c, &print) {
        Ok(text) => match printed.into_inner() {
            Some(Err(code)) => code,
            Some(Ok(c)) => {
                let body = c.text();
                match text.strip_suffix(body.as_str()) {
                    Some(header) => loaded.write_c(header, &c, args.output.as_deref()),
                    None => super::expand::write_text(&text, args.output.as_deref()),
                }
            }
            None => super::expand::write_text(&text, args.output.as_deref()),
        },
        Err(e) => {
            match e.code() {
                Some(code) => eprint!(
                    "{}",
                    loaded.files.render(&Diagnostic::error(code, e.to_string()))
                ),
                None => eprintln!("error: {e}"),
            }
            ExitCode::from(1)
        }
    }
}
