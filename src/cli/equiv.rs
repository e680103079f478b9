//! `arrayflow equiv A B`: run an original program A and a transformed program
//! B on the same seeds; compare every read and the final contents of A's
//! live-out arrays (docs/interpreter.md). Exit 0 when they agree on every seed, 1 with
//! the first mismatch (or when the programs cannot be matched), 2 on usage or
//! I/O errors.

use super::run::{report, LoopOrder};
use super::{load, Sizes};
use crate::equiv::{equiv, EquivOptions, Verdict};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The original program.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The transformed program: its operations are matched to A's by base
    /// label (`S.2` stands for `S`) and iteration vector.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    #[command(flatten)]
    pub sizes: Sizes,
    /// How many seeds to try (0, 1, ...).
    #[arg(long, default_value_t = 50)]
    pub seeds: u64,
    #[command(flatten)]
    pub limits: super::run::Limits,
    #[command(flatten)]
    pub memory: super::Memory,
    /// Loops of B to reverse or shuffle.
    #[command(flatten)]
    pub order: LoopOrder,
    /// Run B's `doall` loops in order instead of shuffled.
    #[arg(long)]
    pub in_order: bool,
    /// B is A rescheduled to this affine schedule (`expand --transform
    /// contract --schedule FILE --emit code`): B's operations are named as
    /// the operations of A they stand for, by the iteration map the
    /// rescheduling of A gives.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// A loop of B over threads (`privatize --emit code`'s per-thread
    /// private copies: `for t = 0 to threads - 1 doall` around the loop
    /// it privatizes), named by its counter; repeat for several. Its
    /// counter is left out of B's iteration vectors, so B's operations
    /// are named as A's.
    #[arg(long, value_name = "COUNTER")]
    pub thread_loop: Vec<String>,
    /// Statements and conditions (base names) whose reads are not
    /// compared, in either program: a reduction B folds in blocks of
    /// iterations and combines in thread order (`privatize --emit code`'s
    /// maxima kept with their indices) reads other values than A; the
    /// final contents are compared.
    #[arg(long, value_delimiter = ',', value_name = "SITES")]
    pub unordered: Vec<String>,
    /// Arrays of A whose final contents are results, compared at the end
    /// (default: every array). The others need not exist in B, or may
    /// share its storage (`expand --transform contract --live-out`); every
    /// value read is compared either way.
    #[arg(long, value_delimiter = ',', value_name = "ARRAYS")]
    pub live_out: Option<Vec<String>>,
    /// Arrays of A whose final contents are not results: every array but
    /// these is live-out.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ARRAYS",
        conflicts_with = "live_out"
    )]
    pub temporaries: Option<Vec<String>>,
}

pub fn run(args: &Args) -> ExitCode {
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let mut o = EquivOptions {
        params: args.sizes.params.clone(),
        seeds: args.seeds,
        ..EquivOptions::default()
    };
    o.run.max_trips = args.sizes.max_trips;
    o.run.max_steps = args.limits.max_steps;
    o.run.max_cells = args.limits.max_cells;
    o.run.max_memory = args.memory.install();
    o.run.reverse = args.order.reverse.clone();
    o.run.shuffle = args.order.shuffle.clone();
    o.run.shuffle_parallel = !args.in_order;
    o.run.thread_loops = args.thread_loop.clone();
    o.run.unordered = args.unordered.clone();
    match super::live::scratch(&a.program, &args.live_out, &args.temporaries) {
        Ok(scratch) => o.scratch = scratch,
        Err(message) => {
            report(&a, "E0401", &message, crate::model::Span::NONE);
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &args.schedule {
        let affine = match super::expand::read_affine(&a.program, path) {
            Ok(s) => s,
            Err(code) => return code,
        };
        match crate::storage::reschedule::scan(&a.program, &affine) {
            Ok(r) => o.run.iterations = Some(std::sync::Arc::new(r.iterations)),
            Err(e) => {
                let message = format!("A cannot be rescheduled to the schedule: {}", e.message);
                report(&a, "E0604", &message, e.span);
                return ExitCode::from(1);
            }
        }
    }
    match equiv(&a.program, &b.program, &o) {
        Ok(Verdict::Agree(agreement)) => {
            println!(
                "equivalent on {} seeds (max-trips {}): {} reads and {} cells compared",
                agreement.seeds, o.run.max_trips, agreement.reads, agreement.cells
            );
            ExitCode::SUCCESS
        }
        Ok(Verdict::Differ(m)) => {
            print!("{m}");
            ExitCode::from(1)
        }
        Err(e) => {
            let side = if e.in_b { &b } else { &a };
            report(side, "E0401", &e.message, e.span);
            ExitCode::from(1)
        }
    }
}
