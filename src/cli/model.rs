//! `arrayflow model FILE --format isl`: the program model as isl/pet print
//! it: iteration domains, the original order as a 2d+1 schedule, and the
//! write and read access relations (docs/symbolic.md). Exit 0 on success,
//! 1 when the program has errors, 2 on usage or I/O errors.

use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
    #[arg(long, value_enum, default_value_t = ModelFormat::Isl)]
    pub format: ModelFormat,
}

/// `--format isl` (the only one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelFormat {
    #[default]
    Isl,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match super::load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let text = match args.format {
        ModelFormat::Isl => crate::symbolic::isl::model(&loaded.program),
    };
    let mut out = std::io::stdout().lock();
    super::finish(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}
