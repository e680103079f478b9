//! Properties over generated programs (issue 4). Each runs on
//! `ARRAYFLOW_CASES` programs (default 1,000), sizes small, medium and large
//! in turn; `ARRAYFLOW_CASES=100000 cargo test --release --test properties`
//! is the long run.

use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, ErrorKind, Options};
use arrayflow::model::Program;

fn cases() -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn size(seed: u64) -> Size {
    [Size::Small, Size::Medium, Size::Large][(seed % 3) as usize]
}

fn programs() -> impl Iterator<Item = (u64, Program)> {
    (0..cases()).map(|seed| (seed, generate(seed, &GenOptions::all(size(seed)))))
}

/// Properties 1 and 2: the printed program passes `check` and parses back
/// to the same model.
#[test]
fn generated_programs_check_and_round_trip() {
    for (seed, p) in programs() {
        let text = arrayflow::print::program(&p);
        let mut files = SourceFiles::new();
        let id = files.add(format!("gen-{seed}.loop"), text.clone());
        let (parsed, diags) = arrayflow::lower::compile(files.source(id), id);
        assert!(
            !has_errors(&diags),
            "seed {seed}:\n{text}\n{}",
            files.render_all(&diags)
        );
        assert_eq!(parsed.as_ref(), Some(&p), "seed {seed}:\n{text}");
    }
}

/// Property 3: the interpreter never panics. At the defaults a generated
/// program runs to the end (its subscripts are in range by construction); at
/// other sizes it may stop on an out-of-range subscript or the step budget,
/// always with an error, never a panic.
#[test]
fn the_interpreter_never_panics() {
    for (seed, p) in programs() {
        let defaults = p.param_values(&[]).unwrap();
        for (k, max_trips) in [0u32, 2, 5].into_iter().enumerate() {
            let mut o = Options::new(defaults.clone());
            o.seed = seed * 3 + k as u64;
            o.max_trips = max_trips;
            o.max_steps = 2_000_000;
            if let Err(e) = run(&p, &o) {
                panic!("seed {seed}, max-trips {max_trips}: {e}");
            }
        }
        for n in [-1, 0, 1, 7] {
            let mut o = Options::new(
                p.param_values(&[("N".into(), n)])
                    .unwrap_or(defaults.clone()),
            );
            o.seed = seed;
            o.max_steps = 200_000;
            if let Err(e) = run(&p, &o) {
                assert!(
                    matches!(e.kind, ErrorKind::OutOfRange | ErrorKind::StepBudget),
                    "seed {seed}, N={n}: {e}"
                );
            }
        }
    }
}
