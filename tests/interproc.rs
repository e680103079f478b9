//! σ at call granularity (src/interproc.rs): the answer from procedure
//! summaries contains the answer from inlining on every program, and equals
//! it whenever every summary at every call is exact. Programs: the fixtures
//! of fixtures/procs, and random programs with procedures and calls made
//! here (one-dimensional array parameters bound to whole arrays, rows and
//! columns of a matrix, two-dimensional ones, scalars passed as elements,
//! integer arguments as loop bounds and subscripts, guarded statements,
//! nested calls, aliased arguments); subscripts stay in range by
//! construction. ARRAYFLOW_CASES sets the count (default 100).

use arrayflow::diagnostics::FileId;
use arrayflow::facts::Config;
use arrayflow::hash::SplitMix64;
use arrayflow::interproc::compare;
use arrayflow::lower::compile_calls;
use std::fmt::Write;

fn cases() -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100)
}

#[derive(Clone, Copy, PartialEq)]
enum F {
    Vec,
    Mat,
    Scalar,
    Int,
}

struct Proc {
    name: String,
    formals: Vec<(String, F)>,
}

fn pick<'a, T>(r: &mut SplitMix64, xs: &'a [T]) -> &'a T {
    &xs[r.below(xs.len() as u64) as usize]
}

/// A read of a formal, in range, at loop counter `j` (1..=bound, bound ≤ N).
fn read(r: &mut SplitMix64, formals: &[(String, F)], j: &str) -> String {
    let (n, f) = pick(r, formals);
    let c = r.range(-1, 1);
    let at = if c == 0 {
        j.to_string()
    } else if c > 0 {
        format!("{j} + {c}")
    } else {
        format!("{j} - {}", -c)
    };
    match f {
        F::Vec => format!("{n}[{at}]"),
        F::Mat => format!("{n}[{at}, {}]", pick(r, &["1", "N", j])),
        F::Scalar => n.clone(),
        F::Int => n.clone(),
    }
}

fn procedure(r: &mut SplitMix64, k: usize, earlier: &[Proc], out: &mut String) -> Proc {
    let mut formals = vec![(
        "X".to_string(),
        if r.chance(1, 4) { F::Mat } else { F::Vec },
    )];
    if r.chance(1, 2) {
        formals.push(("Y".into(), F::Vec));
    }
    if r.chance(1, 2) {
        formals.push(("s".into(), F::Scalar));
    }
    if r.chance(1, 2) {
        formals.push(("m".into(), F::Int));
    }
    let decl: Vec<String> = formals
        .iter()
        .map(|(n, f)| match f {
            F::Vec => format!("real {n}[0..N + 1]"),
            F::Mat => format!("real {n}[0..N + 1, 0..N + 1]"),
            F::Scalar => format!("real {n}"),
            F::Int => format!("int {n}"),
        })
        .collect();
    let name = format!("p{k}");
    let _ = writeln!(out, "proc {name}({})", decl.join(", "));
    let has_m = formals.iter().any(|f| f.1 == F::Int);
    let arrays: Vec<(String, F)> = formals.iter().filter(|f| f.1 != F::Int).cloned().collect();
    for _ in 0..r.range(1, 3) {
        let bound = if has_m && r.chance(1, 2) { "m" } else { "N" };
        let _ = writeln!(out, "  for j = 1 to {bound} do");
        for _ in 0..r.range(1, 2) {
            let guarded = r.chance(1, 6);
            let ind = if guarded { "      " } else { "    " };
            if guarded {
                let _ = writeln!(out, "    if ... then");
            }
            let (t, f) = pick(r, &arrays).clone();
            let c = r.range(-1, 1);
            let at = if c == 0 {
                "j".to_string()
            } else if c > 0 {
                format!("j + {c}")
            } else {
                format!("j - {}", -c)
            };
            let target = match f {
                F::Vec => format!("{t}[{at}]"),
                F::Mat => format!("{t}[{at}, {}]", pick(r, &["1", "N", "j"])),
                _ => t.clone(),
            };
            let mut value = read(r, &formals, "j");
            if r.chance(1, 2) {
                value = format!("{value} + {}", read(r, &formals, "j"));
            }
            let op = if r.chance(1, 5) { "+=" } else { "=" };
            let _ = writeln!(out, "{ind}{target} {op} {value};");
            if guarded {
                let _ = writeln!(out, "    end");
            }
        }
        let _ = writeln!(out, "  end");
    }
    // A call of an earlier procedure taking one vector, passed X or Y.
    if let Some(q) = earlier.iter().find(|q| {
        q.formals
            .iter()
            .all(|f| matches!(f.1, F::Vec | F::Int | F::Scalar))
    }) {
        if r.chance(1, 3) && formals.iter().any(|f| f.1 == F::Vec) {
            let vecs: Vec<&String> = formals
                .iter()
                .filter(|f| f.1 == F::Vec)
                .map(|f| &f.0)
                .collect();
            let scal = formals
                .iter()
                .find(|f| f.1 == F::Scalar)
                .map(|f| f.0.clone());
            let args: Vec<String> = q
                .formals
                .iter()
                .map(|(_, f)| match f {
                    F::Vec => (*pick(r, &vecs)).clone(),
                    F::Scalar => scal.clone().unwrap_or_else(|| format!("{}[1]", vecs[0])),
                    _ => {
                        if has_m {
                            "m".into()
                        } else {
                            "N".into()
                        }
                    }
                })
                .collect();
            let _ = writeln!(out, "  call {}({});", q.name, args.join(", "));
        }
    }
    let _ = writeln!(out, "end\n");
    Proc { name, formals }
}

fn program(seed: u64) -> String {
    let mut r = SplitMix64::new(seed);
    let mut out = String::new();
    let n = r.range(2, 4);
    let _ = writeln!(out, "param N = {n};");
    out.push_str("real A[0..N + 1];\nreal C[0..N + 1];\nreal B[0..N + 1, 0..N + 1];\nreal x;\n\n");
    let mut procs: Vec<Proc> = Vec::new();
    for k in 0..r.range(1, 3) as usize {
        let p = procedure(&mut r, k, &procs, &mut out);
        procs.push(p);
    }
    if r.chance(1, 2) {
        out.push_str("for i = 0 to N + 1 do\n  A[i] = ...;\n  B[i, 1] = ...;\nend\n");
    }
    out.push_str("x = ...;\n");
    let mut label = 0;
    for _ in 0..r.range(2, 4) {
        if r.chance(1, 4) {
            let _ = writeln!(out, "for i = 1 to N do\n  C[i] = A[i - 1] + B[i, i];\nend");
            continue;
        }
        let q = pick(&mut r, &procs);
        let in_loop = r.chance(1, 2);
        let idx: &[&str] = if in_loop {
            &["i", "1", "N"]
        } else {
            &["1", "N"]
        };
        let args: Vec<String> = q
            .formals
            .iter()
            .map(|(_, f)| match f {
                F::Vec => match r.below(4) {
                    0 => "A".into(),
                    1 => "C".into(),
                    2 => format!("B[{}, *]", pick(&mut r, idx)),
                    _ => format!("B[*, {}]", pick(&mut r, idx)),
                },
                F::Mat => "B".into(),
                F::Scalar => match r.below(3) {
                    0 => "x".into(),
                    1 => format!("A[{}]", pick(&mut r, idx)),
                    _ => format!("B[{}, 1]", pick(&mut r, idx)),
                },
                F::Int => (*pick(&mut r, idx)).to_string(),
            })
            .collect();
        label += 1;
        let call = format!("L{label}: call {}({});", q.name, args.join(", "));
        if in_loop {
            let _ = writeln!(out, "for i = 1 to N do\n  {call}\nend");
        } else {
            let _ = writeln!(out, "{call}");
        }
    }
    out.push_str("R: use(A[1], A[N], C[1], C[N], B[1, 1], B[N, N], B[1, N], x);\n");
    out
}

fn check(name: &str, source: &str) -> (bool, bool) {
    let (p, calls, diags) = compile_calls(source, FileId(0));
    let p = p.unwrap_or_else(|| panic!("{name}: {diags:?}\n{source}"));
    let c = compare(&p, &calls, &Config::default()).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    assert!(
        c.sound(),
        "{name}: summary σ misses an inlined source\n{source}\ninline {:?}\nsummary {:?}",
        c.inline,
        c.summary
    );
    if c.exact {
        assert!(
            c.equal(),
            "{name}: exact summaries but σ differs\n{source}\ninline {:?}\nsummary {:?}",
            c.inline,
            c.summary
        );
    }
    (c.exact, c.equal())
}

#[test]
fn fixtures_summary_contains_inline() {
    for name in ["rows", "grid"] {
        let source = std::fs::read_to_string(format!("fixtures/procs/{name}.loop")).unwrap();
        check(name, &source);
    }
}

#[test]
fn generated_programs_summary_contains_inline_and_equals_it_when_exact() {
    let n = cases();
    let (mut exact, mut equal, mut equal_inexact) = (0, 0, 0);
    for seed in 0..n {
        let source = program(seed);
        let (x, e) = check(&format!("seed {seed}"), &source);
        exact += u64::from(x);
        equal += u64::from(e);
        equal_inexact += u64::from(e && !x);
    }
    eprintln!(
        "{n} programs: summaries exact at every call in {exact}, σ equal in {equal} ({equal_inexact} of them with an inexact summary); summary ⊇ inline in all"
    );
    // The generator must exercise both sides of the claim.
    assert!(exact > 0 && exact < n, "exact in {exact} of {n}");
}
