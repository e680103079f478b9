//! The `arrayflow` command line. Each subcommand lives in its own file; this
//! one holds the argument definitions shared between them.
//!
//! Exit codes: 0 success, 1 the input has errors (or a check failed), 2 usage
//! or I/O errors.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "arrayflow",
    version,
    about = "Instance-wise array dataflow and maximal static expansion"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {}

/// `--format text|json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Concrete values for a bounded analysis or a run.
#[derive(Args, Debug, Clone, Default)]
pub struct Sizes {
    /// A parameter value, `NAME=INT`; repeat for several. Parameters not given
    /// take their declared default.
    #[arg(long = "param", value_name = "NAME=INT", value_parser = parse_param)]
    pub params: Vec<(String, i64)>,
    /// The most iterations any one `while` loop instance may run.
    #[arg(long, default_value_t = 4)]
    pub max_trips: u32,
}

fn parse_param(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=INT, got `{s}`"))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|e| format!("`{value}` is not an integer: {e}"))?;
    Ok((name.trim().to_string(), value))
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {}
}
