//! Privatization from exact σ (`privatize::exact`), against the plain
//! analysis of the instances at concrete sizes (`privatize::analyze`), which
//! it must cover at every size: a decision for every parameter value is
//! never more optimistic than the one at any size.
//! - Shared for every value ⇒ shared at each size (or not accessed there);
//! - carried at some size ⇒ carried;
//! - a copy-in at some size ⇒ a copy-in (or carried);
//! - a value live after the loop at some size ⇒ live after (or carried),
//!   and from an earlier iteration than the last ⇒ last writer (or carried).
//!
//! Then the privatized programs of static-control generated programs, which
//! exact σ decides, are never refused by validation and agree with the
//! original at sizes nobody sampled, 0 and 1 included. ARRAYFLOW_CASES
//! generated programs (default 300).

mod support;

use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::Program;
use arrayflow::privatize::exact::{self, Decision, Last};
use arrayflow::privatize::{analyze, Finalization, Verdict};

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

/// Each parameter at `f(default)`.
fn sizes(p: &Program, f: impl Fn(i64) -> i64) -> Vec<(String, i64)> {
    (p.params.iter())
        .map(|x| (x.name.clone(), f(x.default.unwrap_or(2))))
        .collect()
}

/// Checks the implications above at the sizes `at`; Err says which failed.
/// Sizes at which the original stops (an access leaves its declared range)
/// are skipped: the decisions are for the runs that complete.
fn covers(p: &Program, ex: &[exact::ExactLoop], at: &[(String, i64)]) -> Result<bool, String> {
    let values: Vec<i64> = at.iter().map(|x| x.1).collect();
    if arrayflow::interp::run(p, &arrayflow::interp::Options::new(values)).is_err() {
        return Ok(false);
    }
    let config = Config {
        params: at.to_vec(),
        max_trips: 2,
        ..Config::default()
    };
    let Ok(exp) = arrayflow::expansion::expand(p, &config) else {
        return Ok(false);
    };
    let concrete = analyze(p, &exp);
    for (e, c) in ex.iter().zip(&concrete) {
        if e.counter != c.counter {
            return Err(format!("loop order: {} vs {}", e.name, c.name));
        }
        for (name, v) in &c.arrays {
            let d = e.arrays.get(name);
            // A reduction carries values too (through its cell).
            let carried = matches!(
                d,
                Some(Decision::Carried { .. } | Decision::Reduction { .. })
            );
            let (copy, last) = match d {
                Some(Decision::Private {
                    copy_in,
                    finalization,
                }) => (!copy_in.is_empty(), Some(*finalization)),
                _ => (false, None),
            };
            let ok = match v {
                Verdict::Shared => true,
                Verdict::Carried { .. } => carried,
                Verdict::Privatizable {
                    copy_in,
                    finalization,
                } => {
                    let copy_ok = copy_in.is_empty() || copy || carried;
                    let last_ok = match finalization {
                        Finalization::None => true,
                        Finalization::LastIteration { .. } => {
                            carried || matches!(last, Some(Last::LastIteration | Last::LastWriter))
                        }
                        Finalization::LastWriter { .. } => {
                            carried || last == Some(Last::LastWriter)
                        }
                    };
                    // Not shared for every value: a conflict at this size.
                    copy_ok && last_ok && d.is_some_and(|d| *d != Decision::Shared)
                }
            };
            if !ok {
                return Err(format!(
                    "loop {}, array {name}: exact {d:?}, at {at:?} {v:?}",
                    c.name
                ));
            }
        }
    }
    Ok(true)
}

#[test]
fn exact_decisions_cover_the_decisions_at_every_size_tried() {
    let cases = support::cases(300);
    let (mut exact_programs, mut compared, mut gained) = (0, 0, 0);
    for seed in 0..cases {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        let Ok(ex) = exact::analyze(&p) else { continue };
        exact_programs += 1;
        gained += ex
            .iter()
            .filter(|l| l.parallel_after() && !l.parallel_before())
            .count();
        // Generated subscripts are mostly in range near the defaults only:
        // sizes there count most.
        let sizes_tried: [fn(i64) -> i64; 8] = [
            |d| d,
            |d| d + 1,
            |d| d + 2,
            |d| d + 3,
            |d| d - 1,
            |_| 0,
            |_| 1,
            |_| 2,
        ];
        for f in sizes_tried {
            let at = sizes(&p, f);
            match covers(&p, &ex, &at) {
                Ok(true) => compared += 1,
                Ok(false) => {}
                Err(why) => panic!("seed {seed}: {why}\n{}", arrayflow::print::program(&p)),
            }
        }
    }
    eprintln!("{exact_programs} static-control programs, {compared} sizes compared, {gained} loops gained");
    assert!(
        // Two of the eight sizes per program run, at least.
        exact_programs * 4 >= cases && compared >= exact_programs * 2 && gained > 0,
        "{exact_programs} exact, {compared} compared, {gained} gained"
    );
}

#[test]
fn the_decisions_worked_out_by_hand() {
    let p = program(
        "param N = 4;\nreal t;\nreal A[0..N];\nreal B[0..N];\nreal x;\n\
         for i = 0 to N do\n  S1: t = A[i];\n  S2: B[i] = t;\nend\nR: x = t;\n",
    );
    let ex = exact::analyze(&p).expect("static control");
    // t is written then read in each iteration; after the loop R reads the
    // last iteration's value.
    assert_eq!(
        ex[0].arrays["t"],
        Decision::Private {
            copy_in: vec![],
            finalization: Last::LastIteration
        }
    );
    assert_eq!(ex[0].arrays["A"], Decision::Shared);
    // Written only while i <= 2: R reads S1(2), an earlier iteration when
    // N > 2, whatever N is here.
    let p = program(
        "param N = 2;\nreal t;\nreal A[0..N];\nreal B[0..N];\nreal x;\n\
         for i = 0 to N do\n  if i <= 2 then\n    S1: t = A[i];\n  end\n  S2: B[i] = A[i];\nend\nR: x = t;\n",
    );
    let ex = exact::analyze(&p).expect("static control");
    assert_eq!(
        ex[0].arrays["t"],
        Decision::Private {
            copy_in: vec![],
            finalization: Last::LastWriter
        }
    );
    // A sum carries its value from S(i - 1) to S(i), only through its
    // own update of `s`: a reduction.
    let p = program(
        "param N = 4;\nreal s;\nreal A[0..N];\nfor i = 0 to N do\n  S: s = s + A[i];\nend\n",
    );
    let ex = exact::analyze(&p).expect("static control");
    assert_eq!(
        ex[0].arrays["s"],
        Decision::Reduction {
            op: arrayflow::privatize::reduction::ReduceOp::Add,
            cell: "s".into(),
            source: "S(i - 1)".into(),
            read: "S(i)".into()
        }
    );
    // Read by another statement as well: a running sum, carried.
    let p = program(
        "param N = 4;\nreal s;\nreal A[0..N];\nfor i = 0 to N do\n  S: s = s + A[i];\n  R: A[i] = s;\nend\n",
    );
    let ex = exact::analyze(&p).expect("static control");
    assert!(
        matches!(ex[0].arrays["s"], Decision::Carried { .. }),
        "{:?}",
        ex[0]
    );
    // Every iteration reads w[0], written before the loop: copy-in of that
    // read only.
    let p = program(
        "param N = 4;\nreal w[0..N];\nreal A[0..N, 0..N];\nW0: w[0] = ...;\n\
         for j = 0 to N do\n  for i = 1 to N do\n    W: w[i] = A[j, i];\n  end\n  \
         for i = 1 to N do\n    R: A[j, i] = w[i] + w[0];\n  end\nend\n",
    );
    let ex = exact::analyze(&p).expect("static control");
    assert_eq!(
        ex[0].arrays["w"],
        Decision::Private {
            copy_in: vec!["R: w[0]".into()],
            finalization: Last::None
        }
    );
}

#[test]
fn privatized_static_programs_are_never_refused() {
    let cases = support::cases(300);
    let mut checked = 0;
    for seed in 0..cases {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        if exact::analyze(&p).is_err() {
            continue;
        }
        let c = arrayflow::privatize::emit::checked(&p, &Default::default())
            .unwrap_or_else(|m| panic!("seed {seed}: {m}\n{}", arrayflow::print::program(&p)));
        assert_eq!(c.basis, arrayflow::privatize::emit::Basis::Exact);
        let Some(e) = c.emitted else { continue };
        let (b, d) = arrayflow::lower::compile(&e.text, FileId(0));
        let b = b.unwrap_or_else(|| panic!("{d:?}\n{}", e.text));
        // Per-thread copies: at one thread, and at three (blocks of
        // unequal sizes, threads with no iteration at the small sizes).
        let sizes_threads = ([|_| 0, |_| 1, |d| d + 7] as [fn(i64) -> i64; 3])
            .into_iter()
            .flat_map(|f| [1, 3].map(|n| (f, n)));
        for (f, n) in sizes_threads {
            let o = e.threads.equiv_options(&sizes(&p, f), n, 2);
            match arrayflow::equiv::equiv(&p, &b, &o) {
                Ok(arrayflow::equiv::Verdict::Agree(_)) => {}
                Ok(arrayflow::equiv::Verdict::Differ(m)) => panic!(
                    "seed {seed} at {:?}: {}\n{}\n{}",
                    o.params,
                    m.what,
                    arrayflow::print::program(&p),
                    e.text
                ),
                // The original itself fails there (a range).
                Err(e) if !e.in_b => {}
                Err(e) => panic!("seed {seed}: {}", e.message),
            }
        }
        checked += 1;
    }
    eprintln!("{checked} privatized from exact σ, each compared at three sizes");
    assert!(checked > 0);
}

/// A stride-5 loop whose body updates `a[i]` .. `a[i + 4]` from
/// `a[i + 1]` .. `a[i + 5]` (the C `for (i = 0; i < LEN - 5; i += 5)`), and
/// its 2-D twin: exact σ makes `i` parallel once `a` is private (each
/// iteration reads the next one's first cell before it is written). The
/// private copies are declared `lo - 1 .. hi` over the iterations, slot
/// `lo - 1` holding the value from before the loop; at N < 5 the loop's
/// bounds cross by more than one (`0 .. N - 6`), that slot does not exist,
/// and validation refused the program as "internal error: exact σ said the
/// loops are parallel". The privatized program now runs under
/// `if lo <= hi`, with one copy per thread (no slot per iteration), and
/// agrees with the original at every N from 0 to 12 on 1, 2 and 5 threads
/// (by hand, the original runs at each: `a[i + 5]` ≤ `a[N - 1]`).
#[test]
fn stride_loops_whose_bounds_cross_are_privatized_at_every_size() {
    let one = "param N = 20;\nreal a[0..N + 4]; real b[0..N];\n\
               for i = 0 to N - 6 step 5 do\n\
               S0: a[i] = a[i + 1] * b[i];\n  S1: a[i + 1] = a[i + 2] * b[i];\n\
               S2: a[i + 2] = a[i + 3] * b[i];\n  S3: a[i + 3] = a[i + 4] * b[i];\n\
               S4: a[i + 4] = a[i + 5] * b[i];\nend\n";
    let two = "param N = 20;\nreal a[0..3, 0..N + 4]; real b[0..N];\n\
               for i = 0 to N - 6 step 5 do\n  for j = 0 to 3 do\n\
               S0: a[j, i] = a[j, i + 1] * b[i];\n  S1: a[j, i + 1] = a[j, i + 2] * b[i];\n\
               S2: a[j, i + 2] = a[j, i + 3] * b[i];\n  S3: a[j, i + 3] = a[j, i + 4] * b[i];\n\
               S4: a[j, i + 4] = a[j, i + 5] * b[i];\n  end\nend\n";
    for text in [one, two] {
        let p = program(text);
        let c = arrayflow::privatize::emit::checked(&p, &Default::default())
            .unwrap_or_else(|m| panic!("{m}\n{text}"));
        assert_eq!(c.basis, arrayflow::privatize::emit::Basis::Exact);
        let e = c.emitted.expect("a loop made parallel");
        assert_eq!(e.loops.len(), 1, "{}", e.text);
        let b = program(&e.text);
        for (n, threads) in (0..=12).flat_map(|n| [1, 2, 5].map(|t| (n, t))) {
            let o = e.threads.equiv_options(&[("N".into(), n)], threads, 2);
            let v = arrayflow::equiv::equiv(&p, &b, &o);
            assert!(
                matches!(v, Ok(arrayflow::equiv::Verdict::Agree(_))),
                "N = {n}, {threads} threads: {v:?}\n{}",
                e.text
            );
        }
    }
}
