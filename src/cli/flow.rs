//! `arrayflow flow FILE [--param N=4] [--max-trips 3] [--format text|json|isl]
//! [--max-instances N] [--symbolic] [--instances]`: the possible sources of
//! every read (σ) at concrete sizes, grouped per read access and streamed, through the analysis database (per kernel, then put
//! together: docs/architecture.md); with `--symbolic`, σ for every parameter
//! value where it is proved (docs/symbolic.md). Exit 0 on success, 1 when the program has errors
//! or the analysis cannot run at these sizes (a budget exceeded, say), 2 on
//! usage or I/O errors.

use super::{load_with, Budget, Input};
use crate::dataflow::render::GroupWriter;
use crate::dataflow::{self, DataflowError};
use crate::db::resolve::{file_flow, file_groups, FileFlowError};
use crate::diagnostics::Diagnostic;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = FlowFormat::Text)]
    pub format: FlowFormat,
    #[command(flatten)]
    pub budget: Budget,
    /// σ for every parameter value: a quast per read, proved exact, or the
    /// reason the read falls back to bounded σ (docs/symbolic.md).
    #[arg(long)]
    pub symbolic: bool,
    /// JSON: one record per read instance instead of the groups per read
    /// access (docs/interpreter.md, "flow output").
    #[arg(long)]
    pub instances: bool,
}

/// `--format text|json|isl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FlowFormat {
    #[default]
    Text,
    Json,
    /// isl notation: relations per read access.
    Isl,
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    let config = args.input.sizes.config(args.budget.max_instances);
    let loaded = match load_with(&args.input.file, config) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if args.symbolic {
        return symbolic(&loaded.program, args.format);
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = match (args.format, args.instances) {
        (FlowFormat::Text | FlowFormat::Json, false) => {
            // Grouped, streamed a site at a time: no whole-file σ is built.
            let json = args.format == FlowFormat::Json;
            let r = file_groups(
                &loaded.db,
                loaded.source,
                |program, (params, trips)| {
                    GroupWriter::new(program, &params, trips, json, &mut out)
                },
                |w, a| w.write(&a),
            );
            match r {
                Ok(r) => r.and_then(|w| w.finish().map(|_| ())),
                Err(e) => return analysis_failed(&loaded, e),
            }
        }
        (format, _) => {
            let flow = match file_flow(&loaded.db, loaded.source) {
                Ok(f) => f,
                Err(e) => return analysis_failed(&loaded, e),
            };
            match format {
                FlowFormat::Isl => out.write_all(crate::symbolic::isl::bounded(&flow).as_bytes()),
                _ => dataflow::render::json(&loaded.program, &flow, &mut out),
            }
        }
    };
    super::finish(written.and_then(|()| out.flush()))
}

fn analysis_failed(loaded: &super::Loaded, e: FileFlowError) -> ExitCode {
    if let FileFlowError::Analysis(d) = e {
        let d = &super::in_file(&[d], loaded.file)[0];
        eprint!("{}", loaded.files.render(d));
    }
    ExitCode::from(1)
}

/// `--symbolic`: σ for every parameter value.
fn symbolic(program: &crate::model::Program, format: FlowFormat) -> ExitCode {
    let sym = crate::symbolic::analyze(program);
    let text = match format {
        FlowFormat::Text => crate::symbolic::render::text(program, &sym),
        FlowFormat::Json => crate::symbolic::render::json(program, &sym),
        FlowFormat::Isl => crate::symbolic::isl::symbolic(program, &sym),
    };
    let mut out = std::io::stdout().lock();
    super::finish(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
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
