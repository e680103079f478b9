//! `arrayflow deps FILE [--format text|json] [--stats] [--memo off|simple|improved]`:
//! every pair of references to the same array (at least one a write) with
//! whether they are dependent, the dependence kinds, direction vectors and
//! constant distances over their common loops, the test that decided and
//! whether the answer is exact. The answer holds for every value of the
//! parameters (symbolic, bounded only by `assume` facts).

use super::{load, Format};
use crate::dependence::{report, Config, MemoMode, Tester};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C file to analyse.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also print how often each test ran and the memo hit rates.
    #[arg(long)]
    pub stats: bool,
    /// The memo key: none, the problem as built, or the thesis' improved key
    /// (bounds of unused loops dropped); `auto`, the improved key in tables
    /// that switch themselves off when under a quarter of their first 4096
    /// lookups hit (docs/dependence.md, "Memoization").
    #[arg(long, value_enum, default_value_t = Memo::Auto)]
    pub memo: Memo,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Memo {
    Off,
    Simple,
    Improved,
    Auto,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let memo = match args.memo {
        Memo::Off => MemoMode::Off,
        Memo::Simple => MemoMode::Simple,
        Memo::Improved => MemoMode::Improved,
        Memo::Auto => MemoMode::Auto,
    };
    let mut tester = Tester::new(Config {
        memo,
        ..Config::default()
    });
    let pairs = report::analyze(&loaded.program, &mut tester);
    let stats = args.stats.then(|| tester.stats());
    match args.format {
        Format::Text => {
            print!("{}", report::render_text(&pairs));
            if let Some(s) = &stats {
                print!("\n{}", s.render());
            }
        }
        Format::Json => println!("{}", report::to_json(&pairs, stats.as_ref())),
    }
    ExitCode::SUCCESS
}
