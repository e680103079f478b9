//! Properties over generated programs. Each runs on
//! `ARRAYFLOW_CASES` programs (default 1,000), sizes small, medium and large
//! in turn; `ARRAYFLOW_CASES=100000 cargo test --release --test properties`
//! is the long run.

mod support;

use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, ErrorKind, Options};
use arrayflow::model::Program;

fn cases() -> u64 {
    support::cases(1000)
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

/// Property 4: σ is sound. Every read of a run of a generated program is
/// written by one of its sources in σ (or reads an initial value σ allows).
#[test]
fn verify_finds_no_violation() {
    for (seed, p) in programs() {
        let mut o = Options::new(p.param_values(&[]).unwrap());
        o.max_trips = 3;
        let report = arrayflow::verify::verify(&p, &[], &o, 2)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if let Some(v) = report.violations.first() {
            panic!("seed {seed}: {v}\n{}", arrayflow::print::program(&p));
        }
    }
}

/// Property 5: σ is exact on static control programs (affine subscripts and
/// conditions, no `while`): every executed read's σ is exactly its actual
/// writer (or exactly the initial value).
#[test]
fn sigma_is_exact_on_static_control_programs() {
    use arrayflow::dataflow::{analyze, Config};
    for seed in 0..cases() {
        let p = generate(seed, &GenOptions::static_control(size(seed)));
        let flow = analyze(&p, &Config::default()).unwrap();
        let o = Options::new(p.param_values(&[]).unwrap());
        let run = run(&p, &o).unwrap();
        for r in &run.reads {
            let op = run.ops.get(r.op).to_operation();
            let s = flow.sources(&op, r.access as usize).unwrap();
            match run.op(r.writer) {
                None => assert!(
                    s.initial && s.writes.is_empty(),
                    "seed {seed}: {op:?} {s:?}"
                ),
                Some(w) => assert!(
                    !s.initial && s.writes == vec![w.to_operation()],
                    "seed {seed}: {op:?} read {} from {w:?}, σ = {s:?}",
                    r.access
                ),
            }
        }
    }
}

/// The interpreter evaluates a subscript, and each side of a comparison, by
/// its affine form when it has one (`eval::subscript`, `eval::affine`): at
/// any counter and parameter values, small or near the ends of `i64` where
/// the arithmetic wraps, the form must give what the expression tree gives.
#[test]
fn affine_forms_evaluate_as_their_expressions() {
    use arrayflow::hash::SplitMix64;
    use arrayflow::model::eval::{self, StaticEnv};
    use arrayflow::model::{Affine, Cond};
    let mut compared = 0u64;
    for (seed, p) in programs() {
        let mut rng = SplitMix64::new(seed);
        let mut value = || match rng.below(4) {
            0 => rng.below(21) as i64 - 10,
            1 => rng.next_u64() as i64,
            2 => [i64::MIN, i64::MAX, 1 << 62, -(1 << 62)][rng.below(4) as usize],
            _ => (rng.next_u64() >> 20) as i64 - (1 << 43),
        };
        let params: Vec<i64> = p.params.iter().map(|_| value()).collect();
        let counters: Vec<i64> = p.counters.iter().map(|_| value()).collect();
        let mut env = StaticEnv {
            params: &params,
            counters: &counters,
        };
        let (stmts, conds) = (p.stmts(), p.conditions());
        let accesses = stmts
            .iter()
            .flat_map(|s| s.write().map(|w| w.0).into_iter().chain(s.reads()))
            .chain(conds.iter().flat_map(|c| c.reads()));
        for a in accesses {
            for s in a.subscripts.iter().filter(|s| s.affine.is_some()) {
                assert_eq!(
                    eval::subscript(s, &mut env),
                    eval::expr(&s.expr, &mut env),
                    "seed {seed}: {:?} at params {params:?}, counters {counters:?}",
                    s.expr
                );
                compared += 1;
            }
        }
        for c in &conds {
            let mut sides = Vec::new();
            let mut todo = vec![&c.cond];
            while let Some(c) = todo.pop() {
                match c {
                    Cond::Cmp(_, l, r) => sides.extend([l, r]),
                    Cond::And(a, b) | Cond::Or(a, b) => todo.extend([&**a, &**b]),
                    Cond::Not(a) => todo.push(a),
                    Cond::Unknown => {}
                }
            }
            for e in sides {
                if let Some(a) = Affine::from_expr(e) {
                    assert_eq!(
                        Ok(eval::affine(&a, &env)),
                        eval::expr(e, &mut env),
                        "seed {seed}: {e:?} at params {params:?}, counters {counters:?}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= cases(), "only {compared} affine forms");
}
