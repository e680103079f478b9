//! `arrayflow flow FILE [--param N=4] [--max-trips 3] [--format text|json]
//! [--max-instances N]`: the possible sources of every read (σ) at concrete
//! sizes, through the analysis database (per kernel, then put together:
//! docs/architecture.md). Exit 0 on success, 1 when the program has errors
//! or the analysis cannot run at these sizes (a budget exceeded, say), 2 on
//! usage or I/O errors.

use super::{load_with, Budget, Format, Input};
use crate::dataflow::{self, DataflowError};
use crate::db::resolve::{file_flow, FileFlowError};
use crate::diagnostics::Diagnostic;
use std::io::Write;
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
    let config = args.input.sizes.config(args.budget.max_instances);
    let loaded = match load_with(&args.input.file, config) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let flow = match file_flow(&loaded.db, loaded.source) {
        Ok(f) => f,
        Err(FileFlowError::Analysis(d)) => {
            let d = &super::in_file(&[d], loaded.file)[0];
            eprint!("{}", loaded.files.render(d));
            return ExitCode::from(1);
        }
        Err(FileFlowError::Invalid) => return ExitCode::from(1),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = match args.format {
        Format::Json => dataflow::render::json(&loaded.program, &flow, &mut out),
        Format::Text => dataflow::render::text(&loaded.program, &flow, &mut out),
    };
    super::finish(written.and_then(|()| out.flush()))
}

/// The diagnostic for an analysis error, pointing at the statement or
/// condition it is about when there is one.
pub fn diagnostic(e: &DataflowError, file: crate::diagnostics::FileId) -> Diagnostic {
    let code = match e {
        DataflowError::Params(_) => "E0301",
        DataflowError::Budget { .. } => "E0302",
        DataflowError::Eval { .. } => "E0303",
        DataflowError::Memory(_) => "E0304",
    };
    let d = Diagnostic::error(code, e.to_string());
    match e.span() {
        Some(span) if !span.is_none() => d.primary(file, span, "here"),
        _ => d,
    }
}
