//! `arrayflow flow FILE [--param N=4] [--max-trips 3] [--format text|json]
//! [--max-instances N]`: the possible sources of every read (σ) at concrete
//! sizes. Exit 0 on success, 1 when the program has errors or the analysis
//! cannot run at these sizes (a budget exceeded, say), 2 on usage or I/O errors.

use super::{load, Format, Sizes};
use crate::dataflow::{self, Config, DataflowError, DEFAULT_MAX_INSTANCES};
use crate::diagnostics::Diagnostic;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C file to analyse.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub sizes: Sizes,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The most access instances (one cell touched by one access of one
    /// operation) the analysis may create; it stops with an error past that.
    /// Loop iterations and the rules' walk steps are bounded by it too.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_INSTANCES)]
    pub max_instances: u64,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let config = Config {
        params: args.sizes.params.clone(),
        max_trips: args.sizes.max_trips,
        max_instances: args.max_instances,
    };
    let flow = match dataflow::analyze(&loaded.program, &config) {
        Ok(f) => f,
        Err(e) => {
            let d = diagnostic(&e, loaded.file);
            eprint!("{}", loaded.files.render(&d));
            return ExitCode::from(1);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = match args.format {
        Format::Json => dataflow::render::json(&loaded.program, &flow, &mut out),
        Format::Text => dataflow::render::text(&loaded.program, &flow, &mut out),
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the result: {e}");
            ExitCode::from(2)
        }
    }
}

/// The diagnostic for an analysis error, pointing at the statement or
/// condition it is about when there is one.
pub fn diagnostic(e: &DataflowError, file: crate::diagnostics::FileId) -> Diagnostic {
    let code = match e {
        DataflowError::Params(_) => "E0301",
        DataflowError::Budget { .. } => "E0302",
        DataflowError::Eval { .. } => "E0303",
    };
    let d = Diagnostic::error(code, e.to_string());
    match e.span() {
        Some(span) if !span.is_none() => d.primary(file, span, "here"),
        _ => d,
    }
}
