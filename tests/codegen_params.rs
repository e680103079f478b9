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

/// What the programs of one worker gave.
#[derive(Default)]
struct Counts {
    programs: u64,
    skipped: u64,
    compared: u64,
    no_run: u64,
    expanded: u64,
    fell_back: u64,
    unequal_small: u64,
    corner_vectors: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.programs += o.programs;
        self.skipped += o.skipped;
        self.compared += o.compared;
        self.no_run += o.no_run;
        self.expanded += o.expanded;
        self.fell_back += o.fell_back;
        self.unequal_small += o.unequal_small;
        self.corner_vectors += o.corner_vectors;
    }
}

/// Program `seed`: generated, emitted and compared; its vectors come from
/// a generator of its own, so the programs can be checked on any thread.
fn check(seed: u64, n: &mut Counts) {
    let mut rng = SplitMix64::new(14 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let opts = GenOptions {
        params: 2 + (seed % 3) as usize,
        ..if seed.is_multiple_of(2) {
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
            n.skipped += 1;
            return;
        }
    };
    n.programs += 1;
    for r in &e.arrays {
        n.expanded += u64::from(r.expanded);
        n.fell_back += u64::from(r.verdict.contains("pass --allow-unproved"));
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
    n.corner_vectors += corners.len() as u64;
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
                n.compared += 1;
                n.unequal_small += u64::from(small_unequal);
            }
            // Generated subscripts are in range only at the defaults:
            // where the original itself fails there is nothing to match.
            Err(x) if !x.in_b => n.no_run += 1,
            Ok(Verdict::Differ(m)) if m.limit => n.no_run += 1,
            Ok(Verdict::Differ(m)) => panic!(
                "seed {seed} at {params:?}: {m}\n{}{}",
                report::text(&a, &e),
                e.text
            ),
            Err(x) => panic!("seed {seed} at {params:?}: {x}\n{}", e.text),
        }
    }
}

#[test]
fn emitted_programs_agree_at_independent_parameter_vectors() {
    let cases = support::cases(CASES);
    // The longest test of the suite: its programs are independent.
    let mut n = Counts::default();
    for c in support::per_seed(cases, |seed| {
        let mut c = Counts::default();
        check(seed, &mut c);
        c
    }) {
        n.add(c);
    }
    eprintln!(
        "{} programs ({} skipped), {} arrays expanded, {} fell back as unproved; {} vectors \
         compared ({} small with unequal parameters), {} where the original does not run",
        n.programs, n.skipped, n.expanded, n.fell_back, n.compared, n.unequal_small, n.no_run
    );
    assert!(n.skipped * 10 <= cases, "{} of {cases} skipped", n.skipped);
    // The property must have something to check.
    assert!(
        n.compared >= n.programs * 3,
        "{} of {} programs",
        n.compared,
        n.programs
    );
    assert!(
        n.unequal_small * 10 >= n.compared,
        "{} of {}",
        n.unequal_small,
        n.compared
    );
    assert!(n.expanded > 0);
    assert!(
        n.corner_vectors >= n.programs.min(CORNER_CASES),
        "{} corners",
        n.corner_vectors
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
