//! `arrayflow deps FILE [--format text|json] [--stats] [--memo off|simple|improved]`:
//! every pair of references to the same array (at least one a write) with
//! whether they are dependent, the dependence kinds, direction vectors and
//! constant distances over their common loops, the test that decided and
//! whether the answer is exact. The answer holds for every value of the
//! parameters (symbolic, bounded only by `assume` facts).
//!
//! Pairs are analysed and printed one at a time: a program of n references
//! has up to n² of them, more than memory holds. `--max-pairs` refuses a
//! program with more (E0306) before any is analysed; the memory budget
//! (`--max-memory`, E0304) is polled as they go.

use super::{load, Format, Memory};
use crate::dependence::report::{self, PairReport, Scope};
use crate::dependence::{Config, MemoMode, Tester};
use crate::diagnostics::Diagnostic;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The default of `--max-pairs`.
pub const DEFAULT_MAX_PAIRS: u64 = 10_000_000;

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
    /// The most pairs of references to analyse; a program with more stops
    /// with an error (E0306) before any is printed.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PAIRS)]
    pub max_pairs: u64,
    #[command(flatten)]
    pub memory: Memory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Memo {
    Off,
    Simple,
    Improved,
    Auto,
}

/// Why the pairs stopped.
enum Stop {
    Write(std::io::Error),
    Memory(crate::budget::Exceeded),
}

/// Pairs analysed between two polls of the memory budget.
const POLL: u64 = 4096;

pub fn run(args: &Args) -> ExitCode {
    let limit = args.memory.install();
    let loaded = match load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let error = |d: Diagnostic| {
        let d = &super::in_file(&[d], loaded.file)[0];
        eprint!("{}", loaded.files.render(d));
        ExitCode::from(1)
    };
    let count = report::count(&loaded.program);
    if count > args.max_pairs {
        return error(Diagnostic::error(
            "E0306",
            format!(
                "the program has {count} pairs of references to the same array with a \
                 write, over the limit of {}; raise it with `--max-pairs N`",
                args.max_pairs
            ),
        ));
    }
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
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let json = args.format == Format::Json;
    let mut seen: u64 = 0;
    let mut text = String::new();
    let mut write = |p: PairReport, out: &mut dyn Write| -> Result<(), Stop> {
        seen += 1;
        if seen.is_multiple_of(POLL) {
            crate::budget::check(limit, || "the dependence tests of the pairs".into())
                .map_err(Stop::Memory)?;
        }
        if json {
            let v = serde_json::to_value(&p).map_err(|e| Stop::Write(e.into()))?;
            let sep = if seen == 1 { "" } else { "," };
            write!(out, "{sep}{v}").map_err(Stop::Write)
        } else {
            text.clear();
            report::render_pair(&p, &mut text);
            out.write_all(text.as_bytes()).map_err(Stop::Write)
        }
    };
    let run = (|| {
        if json {
            out.write_all(b"{\"pairs\":[").map_err(Stop::Write)?;
        }
        report::each(&loaded.program, &mut tester, Scope::All, |p| {
            write(p, &mut out)
        })?;
        if json {
            out.write_all(b"]").map_err(Stop::Write)?;
            if args.stats {
                write!(out, ",\"stats\":{}", report::stats_json(&tester.stats()))
                    .map_err(Stop::Write)?;
            }
            out.write_all(b"}\n").map_err(Stop::Write)?;
        } else {
            if count == 0 {
                out.write_all(report::NO_PAIR.as_bytes())
                    .map_err(Stop::Write)?;
            }
            if args.stats {
                write!(out, "\n{}", tester.stats().render()).map_err(Stop::Write)?;
            }
        }
        Ok(())
    })();
    match run {
        Ok(()) => super::finish(out.flush()),
        Err(Stop::Write(e)) => super::finish(Err(e)),
        Err(Stop::Memory(e)) => {
            let _ = out.flush();
            error(Diagnostic::error(
                "E0304",
                format!(
                    "`deps` reached {} of memory for {}, over the budget of {}; raise \
                     the budget with `--max-memory SIZE`",
                    crate::budget::show(e.bytes),
                    e.what,
                    crate::budget::show(e.limit)
                ),
            ))
        }
    }
}
