//! `arrayflow lsp`: the language server on stdio (see `crate::lsp` and
//! docs/editors.md). Exit 0 after `shutdown` and `exit`, 1 otherwise.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Accepted for clients that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: &Args) -> ExitCode {
    crate::lsp::run_with(super::kinds())
}
