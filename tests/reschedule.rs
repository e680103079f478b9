//! Rescheduling to an affine schedule (`storage::reschedule`):
//! the fixtures in fixtures/reschedule/ (`expand --transform contract
//! --schedule FILE --emit code`, each naming its program and exit code,
//! the expected output beside it, checked by hand: Figure 1's `s[n]`
//! distributed into `doall i` for R and `for j: doall i` for S), plain
//! rescheduling worked out by hand, and generated static-control programs
//! under generated schedules (ARRAYFLOW_CASES, default 60): every
//! rescheduled program, plain (when the schedule keeps every dependence)
//! or contracted, agrees with the original under `equiv` through the
//! iteration map. Mutated rescheduled programs (a bound off by one) are
//! caught by the same comparison.

mod support;

use arrayflow::codegen::Options;
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::expansion;
use arrayflow::interp::IterationMap;
use arrayflow::model::{Node, Program};
use arrayflow::storage::{self, affine, emit, reschedule, Schedule, StorageError};
use std::sync::Arc;
use support::schedules::{generated, swapped};

fn root(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

/// `b` against the original `a` at `params` (none: the defaults) on
/// `seeds` seeds, `doall` shuffled, B's operations named through `it`.
fn compare(
    a: &Program,
    b: &Program,
    it: &IterationMap,
    params: Vec<(String, i64)>,
    seeds: u64,
) -> Result<Verdict, arrayflow::equiv::EquivError> {
    let mut o = EquivOptions {
        params,
        seeds,
        ..Default::default()
    };
    o.run.iterations = Some(Arc::new(it.clone()));
    equiv(a, b, &o)
}

#[test]
fn reschedule_fixtures_give_their_expected_output() {
    let fixtures = support::schedules::run_fixtures("fixtures/reschedule", &["--emit", "code"]);
    assert!(fixtures.len() >= 7);
    for f in fixtures {
        let (name, text, prog, exit, stderr) =
            (&f.name, &f.text, f.program.as_str(), f.exit, &f.stderr);
        if exit != 0 {
            assert!(stderr.contains("E0604"), "{name}");
            continue;
        }
        // Again at a size neither sampled nor validated by the emitter.
        let p = program(&std::fs::read_to_string(root(prog)).unwrap());
        let s = Schedule::affine(&p, affine::parse(&p, text).unwrap());
        let e = storage::pair::checked_with(&p, &s, &[], &Options::default()).unwrap();
        let it = e.iterations.as_deref().expect("rescheduled");
        match compare(&p, &e.program, it, support::defaults_plus(&p, 6), 5) {
            Ok(Verdict::Agree(_)) => {}
            other => panic!("{name}: {other:?}\n{}", e.text),
        }
    }
}

/// The rescheduled program's text, without declarations.
fn body(r: &reschedule::Rescheduled) -> String {
    arrayflow::print::body(&r.program, &r.program.body, 0)
}

#[test]
fn jacobi_1d_skewed_by_time_and_distributed() {
    let p = program(&std::fs::read_to_string(root("fixtures/c/kernels/jacobi1d.loop")).unwrap());
    // Skewed: i' = t + i, S's and U's rows apart at the second dimension.
    let a = affine::parse(&p, "{ S[t, i] -> [t, 0, t + i]; U[t, i] -> [t, 1, t + i] }").unwrap();
    let r = reschedule::scan(&p, &a).unwrap();
    assert_eq!(
        body(&r),
        "for t = 0 to T - 1 do
  for t2 = t + 1 to N + t - 2 do
    S: B[-t + t2] = __lit_0_d33333() * (A[-t + t2 - 1] + A[-t + t2] + A[-t + t2 + 1]);
  end
  for t2 = t + 1 to N + t - 2 do
    U: A[-t + t2] = B[-t + t2];
  end
end
"
    );
    // Each (t, i') names the original (t, i' - t).
    assert_eq!(
        r.iterations.0["S"],
        vec![vec![1, 0, 0, 0, 0], vec![-1, 1, 0, 0, 0]]
    );
    let agree = |b: &Program, params| {
        matches!(
            compare(&p, b, &r.iterations, params, 3),
            Ok(Verdict::Agree(_))
        )
    };
    assert!(agree(&r.program, Vec::new()));
    assert!(agree(&r.program, support::defaults_plus(&p, 4)));
    // Every new loop's bound one off, in turn: the comparison fails.
    let mut k = 0;
    loop {
        let mut m = r.program.clone();
        let mut n = 0;
        let mut hit = false;
        each_for(&mut m.body, &mut |f| {
            if n == k {
                f.upper.affine.constant -= 1;
                f.upper.expr = arrayflow::codegen::expr_of(&f.upper.affine);
                hit = true;
            }
            n += 1;
        });
        if !hit {
            break;
        }
        assert!(!agree(&m, Vec::new()), "loop {k} one short still agrees");
        k += 1;
    }
    assert_eq!(k, 3);
    // The time loop run backwards (a wrong order, not a wrong set).
    let m = r.program.clone();
    let mut o = EquivOptions {
        seeds: 5,
        ..Default::default()
    };
    o.run.iterations = Some(Arc::new(r.iterations.clone()));
    o.run.reverse = vec!["t".into()];
    assert!(matches!(equiv(&p, &m, &o), Ok(Verdict::Differ(_))));
}

fn each_for(nodes: &mut [Node], f: &mut dyn FnMut(&mut arrayflow::model::For)) {
    for n in nodes {
        match n {
            Node::For(l) => {
                f(l);
                each_for(&mut l.body, f);
            }
            Node::If(i) => {
                for (_, b) in &mut i.branches {
                    each_for(b, f);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn plain_rescheduling_of_figure_1_and_its_refusals() {
    let p =
        program(&std::fs::read_to_string(root("fixtures/papers/storage-figure1.loop")).unwrap());
    // The paper's θ without contraction: `s` is one cell, so the program
    // no longer computes the same (every S reads s after every R).
    let a = affine::parse(&p, "{ R[i] -> [0]; S[i, j] -> [j] }").unwrap();
    let r = reschedule::scan(&p, &a).unwrap();
    assert_eq!(
        body(&r),
        "for i = 1 to n doall
  R: s = 0;
end
for j = 1 to n do
  for i = 1 to n doall
    S: s = s + 1;
  end
end
"
    );
    assert!(matches!(
        compare(&p, &r.program, &r.iterations, Vec::new(), 3),
        Ok(Verdict::Differ(_))
    ));
    // A reversal of i (R first in each): every i computes the same, so the
    // values agree although the order of the i on `s` is reversed.
    let a = affine::parse(&p, "{ R[i] -> [-i, 0]; S[i, j] -> [-i, 1, j] }").unwrap();
    let r = reschedule::scan(&p, &a).unwrap();
    assert_eq!(
        body(&r),
        "for i = -n to -1 do
  R: s = 0;
  for j = 1 to n do
    S: s = s + 1;
  end
end
"
    );
    assert_eq!(r.iterations.0["R"], vec![vec![-1, 0, 0]]);
    assert_eq!(
        r.iterations.0["S"],
        vec![vec![-1, 0, 0, 0], vec![0, 1, 0, 0]]
    );
    let v = compare(&p, &r.program, &r.iterations, Vec::new(), 3);
    assert!(matches!(v, Ok(Verdict::Agree(_))), "{v:?}");
    let refused = |text: &str| reschedule::scan(&p, &affine::parse(&p, text).unwrap()).err();
    let e = refused("{ R[i] -> [2 * i]; S[i, j] -> [2 * i + 1, j] }").unwrap();
    assert!(
        e.message.contains("statement `R`") && e.message.contains("determinant 2"),
        "{e:?}"
    );
    assert_eq!(
        &std::fs::read_to_string(root("fixtures/papers/storage-figure1.loop")).unwrap()
            [e.span.range()],
        "R: s = 0"
    );
    let e = refused("{ R[i] -> [i]; S[i, j] -> [i, j, i + j] }").unwrap();
    assert!(e.message.contains("not independent"), "{e:?}");
    // R at i, S at i + j: the ranges 1 .. n and 2 .. 2n meet without
    // being a constant apart.
    let e = refused("{ R[i] -> [i]; S[i, j] -> [i + j] }").unwrap();
    assert!(e.message.contains("min/max"), "{e:?}");
    // Dynamic control: a while loop.
    let w = program(&std::fs::read_to_string(root("fixtures/papers/mse-example1.loop")).unwrap());
    let a = affine::parse(
        &w,
        "{ T[i] -> [i, 0]; S[i, w] -> [i, 1, w]; R[i] -> [i, 2] }",
    )
    .unwrap();
    let e = reschedule::scan(&w, &a).err().unwrap();
    assert!(e.message.contains("`while` loop"), "{e:?}");
}

#[derive(Default, Debug)]
struct Tally {
    identity: u64,
    twin: u64,
    plain: u64,
    plain_compared: u64,
    plain_refused: Vec<String>,
    emitted: u64,
    emitted_expanded: u64,
    /// Rescheduled and contracted, and proved for every parameter value
    /// (each also agrees under `equiv`).
    emitted_proved: u64,
    violated: u64,
    unmappable: u64,
    refused: Vec<String>,
}

#[test]
fn generated_programs_rescheduled_agree_with_the_original() {
    let n = support::cases(60);
    let mut t = Tally::default();
    for seed in 0..n {
        let Some((p, exp, mut rng, id)) = support::schedules::case(seed) else {
            continue;
        };
        let text = generated(&p, &mut rng, false);
        // The program's own order: rescheduled, and the same.
        let a = affine::parse(&p, &id).unwrap();
        match reschedule::scan(&p, &a) {
            Ok(r) => {
                t.identity += 1;
                match compare(&p, &r.program, &r.iterations, Vec::new(), 3) {
                    Ok(Verdict::Agree(_)) | Err(_) => {}
                    other => panic!(
                        "seed {seed}: {id}: {other:?}\n{}",
                        arrayflow::print::program(&r.program)
                    ),
                }
            }
            Err(e) => panic!("seed {seed}: {id}: {e:?}"),
        }
        // The generated schedule, then with its outermost loops
        // distributed, then interchanged.
        for text in [swapped(&text, 0, 0), swapped(&id, 1, 2), swapped(&id, 1, 3)] {
            one(&p, &exp, seed, &text, &mut t);
        }
    }
    eprintln!(
        "{} schedules of {n} programs: own order {} rescheduled; plain {} rescheduled ({} compared), {} refused; contracted {} rescheduled ({} with added dimensions, {} proved), {} as a doall marking, {} violate a flow dependence, {} without mapping, {} refused",
        3 * n,
        t.identity,
        t.plain,
        t.plain_compared,
        t.plain_refused.len(),
        t.emitted,
        t.emitted_expanded,
        t.emitted_proved,
        t.twin,
        t.violated,
        t.unmappable,
        t.refused.len()
    );
    for r in t.plain_refused.iter().chain(&t.refused) {
        eprintln!("  {r}");
    }
    assert!(t.plain_compared * 4 >= n, "{t:?}");
    assert!(t.emitted > 0, "{t:?}");
}

fn one(p: &Program, exp: &expansion::Expansion, seed: u64, text: &str, t: &mut Tally) {
    let a = affine::parse(p, text).unwrap();
    let s = Schedule::affine(p, a.clone());
    match reschedule::scan(p, &a) {
        Ok(r) => {
            t.plain += 1;
            // Plain rescheduling keeps the values when the schedule
            // keeps every dependence (at these sizes).
            let keeps = storage::contract(p, exp, &s)
                .is_ok_and(|c| c.dependences.iter().all(|d| d.verdict.neutral()));
            if keeps {
                t.plain_compared += 1;
                match compare(p, &r.program, &r.iterations, Vec::new(), 3) {
                    Ok(Verdict::Agree(_)) | Err(_) => {}
                    other => panic!(
                        "seed {seed}: {text}: {other:?}\n{}\n{}",
                        arrayflow::print::program(p),
                        arrayflow::print::program(&r.program)
                    ),
                }
            }
        }
        Err(e) => t.plain_refused.push(format!("seed {seed}: {}", e.message)),
    }
    match emit::checked(p, &s, &Options::default()) {
        Ok(e) => {
            let Some(it) = e.iterations.as_deref() else {
                t.twin += 1;
                return;
            };
            t.emitted += 1;
            t.emitted_expanded += u64::from(!e.arrays.is_empty());
            t.emitted_proved += u64::from(e.proof.proved());
            match compare(p, &e.program, it, support::defaults_plus(p, 6), 5) {
                Ok(Verdict::Agree(_)) | Err(_) => {}
                Ok(Verdict::Differ(m)) => panic!(
                    "seed {seed}: {text}: {m}\n{}\n{}",
                    arrayflow::print::program(p),
                    e.text
                ),
            }
        }
        Err(emit::EmitError::Storage(StorageError::Violated(_))) => t.violated += 1,
        Err(emit::EmitError::Storage(StorageError::Unmappable(_))) => t.unmappable += 1,
        Err(emit::EmitError::Reschedule(e)) => {
            t.refused.push(format!("seed {seed}: {}", e.message))
        }
        Err(emit::EmitError::Other(m)) => t.refused.push(format!("seed {seed}: {text}: {m}")),
        Err(other) => panic!("seed {seed}: {other:?}"),
    }
}

#[test]
fn an_iteration_map_names_operations_and_their_opaque_values() {
    // B runs A's S[i] (i = 6..8) as S[k] with i = k + 5: with the map its
    // `...` values and read keys are A's; without, they are not.
    let a = program(
        "param N = 3;\nreal A[0..9];\nfor i = 6 to 5 + N do\n  S: A[i] = A[i - 1] + ...;\nend\n",
    );
    let b = program(
        "param N = 3;\nreal A[0..9];\nfor k = 1 to N do\n  S: A[k + 5] = A[k + 4] + ...;\nend\n",
    );
    let mut it = IterationMap::default();
    it.0.insert("S".into(), vec![vec![1, 0, 5]]);
    assert!(matches!(
        compare(&a, &b, &it, Vec::new(), 3),
        Ok(Verdict::Agree(_))
    ));
    assert!(matches!(
        compare(&a, &b, &IterationMap::default(), Vec::new(), 3),
        Ok(Verdict::Differ(_))
    ));
    // A map one off names B's operations as other ones of A.
    it.0.insert("S".into(), vec![vec![1, 0, 4]]);
    assert!(matches!(
        compare(&a, &b, &it, Vec::new(), 3),
        Ok(Verdict::Differ(_))
    ));
}

/// What the emitted header says works: `arrayflow equiv ORIGINAL EMITTED
/// --schedule FILE` agrees on every rescheduled fixture, and without the
/// schedule Figure 1's operations are not matched (B's S[j, i] is A's
/// S[i, j]); a schedule A cannot be rescheduled to is E0604, one that does
/// not parse E0605.
#[test]
fn equiv_on_the_command_line_takes_the_schedule() {
    let dir = std::env::temp_dir().join(format!("arrayflow-resched-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = support::schedules::run_fixtures("fixtures/reschedule", &["--emit", "code"]);
    let mut compared = 0;
    for f in fixtures.iter().filter(|f| f.exit == 0) {
        let emitted = dir.join(format!("{}.loop", f.name));
        std::fs::write(&emitted, &f.stdout).unwrap();
        let (a, b) = (root(&f.program), emitted.display().to_string());
        let schedule = root(&format!("fixtures/reschedule/{}", f.name));
        let (code, out, err) =
            support::run(&["equiv", &a, &b, "--seeds", "5", "--schedule", &schedule]);
        assert_eq!(code, 0, "{}: {out}{err}", f.name);
        assert!(out.starts_with("equivalent on 5 seeds"), "{out}");
        compared += 1;
        if f.name == "figure1-paper.schedule" {
            let (code, out, _) = support::run(&["equiv", &a, &b, "--seeds", "5"]);
            assert_eq!(code, 1, "{out}");
            assert!(out.contains("mismatch"), "{out}");
        }
    }
    assert!(compared >= 5, "{compared}");
    let fig1 = root("fixtures/papers/storage-figure1.loop");
    let bad = dir.join("bad.schedule");
    for (text, code) in [
        ("{ R[i] -> [0]; S[i, j] -> [2 * j, i] }", "E0604"),
        ("{ R[i] -> [0]; Q[i, j] -> [j] }", "E0605"),
    ] {
        std::fs::write(&bad, text).unwrap();
        let (exit, _, err) = support::run(&[
            "equiv",
            &fig1,
            &fig1,
            "--schedule",
            &bad.display().to_string(),
        ]);
        assert_eq!(exit, 1, "{text}: {err}");
        assert!(err.contains(code), "{text}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
