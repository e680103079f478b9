//! `expand --emit code` never emits a wrong program. For generated
//! programs with two to four parameters (independent defaults), the emitted
//! program must be equivalent to the original (`equiv`, the independent
//! oracle: both programs run by the interpreter, doall loops shuffled) at
//! 10 random parameter vectors each, drawn independently per parameter:
//! half small (0..=3, so parameters unequal and small), half around the
//! defaults (default..=default+5), then, for the first 400, every corner (each parameter at 0
//! and at 1 with the others at their defaults, and every pair of those,
//! where the assumptions hold). Unproved arrays fall back (the default
//! `Options`), so every emitted program must agree wherever the original
//! runs. Fixed seeds; `ARRAYFLOW_CASES` sets the number of programs
//! (default 1,000: see the comment at `CASES`).

mod support;

use arrayflow::codegen::{emit, report, Options};
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::hash::SplitMix64;
use arrayflow::model::Program;

/// Programs checked by default.
const CASES: u64 = 1000;
/// Programs also compared at every corner.
const CORNER_CASES: u64 = 400;
/// Parameter vectors per program.
const VECTORS: usize = 10;
/// Seeds per vector.
const SEEDS: u64 = 2;

/// A random vector that satisfies the assumptions (up to 20 draws).
fn vector(p: &Program, rng: &mut SplitMix64, small: bool) -> Option<Vec<(String, i64)>> {
    let defaults = p.param_values(&[]).ok()?;
    (0..20).find_map(|_| {
        let v: Vec<(String, i64)> = p
            .params
            .iter()
            .zip(&defaults)
            .map(|(q, &d)| {
                let x = if small {
                    rng.range(0, 3)
                } else {
                    rng.range(d, d + 5)
                };
                (q.name.clone(), x)
            })
            .collect();
        p.param_values(&v).is_ok().then_some(v)
    })
}

#[test]
fn emitted_programs_agree_at_independent_parameter_vectors() {
    let cases = support::cases(CASES);
    let mut rng = SplitMix64::new(14);
    let (mut programs, mut skipped, mut compared, mut no_run) = (0u64, 0u64, 0u64, 0u64);
    let (mut expanded, mut fell_back, mut unequal_small) = (0u64, 0u64, 0u64);
    let mut corner_vectors = 0u64;
    for seed in 0..cases {
        let opts = GenOptions {
            params: 2 + (seed % 3) as usize,
            ..if seed % 2 == 0 {
                GenOptions::static_control(Size::Small)
            } else {
                GenOptions::all(Size::Small)
            }
        };
        let a = generate(seed, &opts);
        let e = match emit(&a, &Options::default()) {
            Ok(e) => e,
            Err(_) => {
                // The bounded analysis cannot run (sizes, budget).
                skipped += 1;
                continue;
            }
        };
        programs += 1;
        for r in &e.arrays {
            expanded += u64::from(r.expanded);
            fell_back += u64::from(r.verdict.contains("pass --allow-unproved"));
            // Without --allow-unproved no expanded array is unproved.
            assert!(
                report::unproved(r).is_none(),
                "seed {seed}: {} emitted unproved: {}",
                r.name,
                r.verdict
            );
        }
        // Random vectors, then the corners: each parameter at 0 and at 1
        // with the others at their defaults, and every pair of those.
        let random: Vec<Vec<(String, i64)>> = (0..VECTORS)
            .filter_map(|k| vector(&a, &mut rng, k % 2 == 0))
            .collect();
        // (The first 400 programs: 200 of them static control.)
        let corners = match seed < CORNER_CASES {
            true => arrayflow::codegen::check::corners(&a, &[]).map_or(Vec::new(), |c| c.0),
            false => Vec::new(),
        };
        corner_vectors += corners.len() as u64;
        for params in random.into_iter().chain(corners) {
            let small_unequal =
                params.iter().all(|x| x.1 <= 3) && params.iter().any(|x| x.1 != params[0].1);
            let o = EquivOptions {
                params: params.clone(),
                seeds: SEEDS,
                ..EquivOptions::default()
            };
            match equiv(&a, &e.program, &o) {
                Ok(Verdict::Agree(_)) => {
                    compared += 1;
                    unequal_small += u64::from(small_unequal);
                }
                // Generated subscripts are in range only at the defaults:
                // where the original itself fails there is nothing to match.
                Err(x) if !x.in_b => no_run += 1,
                Ok(Verdict::Differ(m)) if m.limit => no_run += 1,
                Ok(Verdict::Differ(m)) => panic!(
                    "seed {seed} at {params:?}: {m}\n{}{}",
                    report::text(&a, &e),
                    e.text
                ),
                Err(x) => panic!("seed {seed} at {params:?}: {x}\n{}", e.text),
            }
        }
    }
    eprintln!(
        "{programs} programs ({skipped} skipped), {expanded} arrays expanded, {fell_back} \
         fell back as unproved; {compared} vectors compared ({unequal_small} small with unequal \
         parameters), {no_run} where the original does not run"
    );
    assert!(skipped * 10 <= cases, "{skipped} of {cases} skipped");
    // The property must have something to check.
    assert!(
        compared >= programs * 3,
        "{compared} of {programs} programs"
    );
    assert!(
        unequal_small * 10 >= compared,
        "{unequal_small} of {compared}"
    );
    assert!(expanded > 0);
    assert!(
        corner_vectors >= programs.min(CORNER_CASES),
        "{corner_vectors} corners"
    );
}

/// With `allow_unproved` unproved arrays are emitted, and the header says
/// so: "checked at …, (not proved: …)".
#[test]
fn allow_unproved_emits_and_says_so() {
    let (mut with, mut header_ok) = (0, 0);
    for seed in 0..support::cases(60) {
        let opts = GenOptions {
            params: 2,
            ..GenOptions::static_control(Size::Small)
        };
        let a = generate(seed, &opts);
        let o = Options {
            allow_unproved: true,
            ..Options::default()
        };
        let Ok(e) = emit(&a, &o) else { continue };
        let header = report::text(&a, &e);
        for r in e.arrays.iter().filter(|r| report::unproved(r).is_some()) {
            with += 1;
            header_ok += usize::from(header.contains("(not proved: ") && r.expanded);
        }
    }
    assert!(with > 0, "no unproved array among the generated programs");
    assert_eq!(with, header_ok);
}
