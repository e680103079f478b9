//! "Proved for every parameter value" means it: every generated program
//! whose expansion (`expand --emit code`: `codegen::emit` at the default
//! options) says "proved" for each array it expands is equivalent to the
//! original by `equiv` (the interpreter, an oracle independent of the
//! prover) at every parameter vector over {0, 1, 2, 3} where the original
//! runs: the full product for up to two parameters, else every parameter
//! at each value. Such small vectors are where loops are empty, which the
//! samples and validation vectors (around the defaults) may miss.
//! `ARRAYFLOW_CASES` programs (200 by default; 1,000 is the long run:
//! `ARRAYFLOW_CASES=1000 cargo test --release --test proved_equiv`), and the
//! fixtures of programs it found.

mod support;

use arrayflow::codegen::prove::Proof;
use arrayflow::codegen::{emit, report, Emitted, Options};
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::Program;

/// The values every parameter takes.
const VALUES: [i64; 4] = [0, 1, 2, 3];

/// The parameter vectors of `p` over [`VALUES`].
fn vectors(p: &Program) -> Vec<Vec<(String, i64)>> {
    let names: Vec<String> = p.params.iter().map(|q| q.name.clone()).collect();
    if names.len() <= 2 {
        let mut out = vec![Vec::new()];
        for n in &names {
            out = (out.iter())
                .flat_map(|v| {
                    VALUES.iter().map(move |&x| {
                        let mut v = v.clone();
                        v.push((n.clone(), x));
                        v
                    })
                })
                .collect();
        }
        out
    } else {
        (VALUES.iter())
            .map(|&x| names.iter().map(|n| (n.clone(), x)).collect())
            .collect()
    }
}

/// Whether the report says "proved" of every array it expands, and it
/// expands at least one.
fn all_proved(e: &Emitted) -> bool {
    let expanded: Vec<_> = e.arrays.iter().filter(|r| r.expanded).collect();
    !expanded.is_empty()
        && expanded
            .iter()
            .all(|r| r.proof == Some(Proof::Proved) && report::unproved(r).is_none())
}

/// What one program gave.
#[derive(Default)]
struct Tally {
    emitted: u64,
    proved: u64,
    /// Proved programs equivalent at every vector where the original runs.
    equivalent: u64,
    /// Vectors compared, and those the original does not run at (an
    /// assumption fails or an access leaves its range).
    compared: u64,
    skipped: u64,
}

/// Emits `p` and, when it is proved, compares it with the original at
/// every vector: Err says where it differs.
fn check(name: &str, p: &Program) -> Result<Tally, String> {
    let mut t = Tally::default();
    let Ok(e) = emit(p, &Options::default()) else {
        return Ok(t);
    };
    t.emitted = 1;
    if !all_proved(&e) {
        return Ok(t);
    }
    t.proved = 1;
    for v in vectors(p) {
        let o = EquivOptions {
            params: v.clone(),
            seeds: 3,
            ..EquivOptions::default()
        };
        match equiv(p, &e.program, &o) {
            Ok(Verdict::Agree(_)) => t.compared += 1,
            // The original does not run here: nothing to compare.
            Err(err) if !err.in_b => t.skipped += 1,
            Ok(other) => {
                return Err(format!(
                    "{name} at {v:?}: proved, yet {other:?}\n{}\n{}",
                    arrayflow::print::program(p),
                    e.text
                ))
            }
            Err(err) => {
                return Err(format!(
                    "{name} at {v:?}: proved, yet the expanded program fails: {}\n{}\n{}",
                    err.message,
                    arrayflow::print::program(p),
                    e.text
                ))
            }
        }
    }
    t.equivalent = 1;
    Ok(t)
}

/// Program `seed`: under all options or static control in turn, and for
/// three seeds in four without the generator's assumptions (`N >= 2`, the
/// others `>= 1`), so that the claim covers empty loops and the vectors
/// reach them.
fn program(seed: u64) -> Program {
    let o = if seed.is_multiple_of(2) {
        GenOptions::all(Size::Small)
    } else {
        GenOptions::static_control(Size::Small)
    };
    let mut p = generate(seed, &o);
    if seed % 4 >= 1 {
        p.assumptions.clear();
    }
    p
}

#[test]
fn proved_expansions_are_equivalent_at_small_sizes() {
    let cases = support::cases(200);
    let results = support::per_seed(cases, |seed| check(&format!("seed {seed}"), &program(seed)));
    let mut total = Tally::default();
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(t) => {
                total.emitted += t.emitted;
                total.proved += t.proved;
                total.equivalent += t.equivalent;
                total.compared += t.compared;
                total.skipped += t.skipped;
            }
            Err(why) => failures.push(why),
        }
    }
    eprintln!(
        "{cases} programs, {} emitted, {} proved, {} of them equivalent at every vector \
         ({} vectors compared, {} where the original does not run); {} failures",
        total.emitted,
        total.proved,
        total.equivalent,
        total.compared,
        total.skipped,
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The property must have something to check.
    assert!(total.proved * 5 >= cases, "only {} proved", total.proved);
    assert!(
        total.compared >= total.proved,
        "{} compared",
        total.compared
    );
}

/// The generated program of tests/data/empty-loop-final-value.loop: `A`'s
/// reads after the loop nest read the last iteration's label `(M, M)`,
/// fitted at samples where those reads never run with M = 0. The labels
/// used to be "proved" while the emitted program read `A_1[k + i, M, M]`
/// outside `A_1[.., 1..M, 1..M]` at M = 0, N ≥ 1; now the read takes the
/// original `A` where its label leaves the box, and the proof covers the
/// box. Compared at every M, N in 0..3 where the original runs, worked
/// out by hand: with M ≥ 1 the first nest runs, `S3` reads `B[j + 2]` up to
/// `B[M + 2]` and `S2` writes `B[j + i]` up to `B[2 * M]`, both within
/// `0..2 * N + 2` only if M ≤ 2N and M ≤ N + 1 (the other accesses stay in
/// range); M = 0 with N = 1..3, where the labels failed, are among them.
#[test]
fn final_values_after_an_empty_loop_nest() {
    let text = include_str!("data/empty-loop-final-value.loop");
    let (p, d) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{d:?}"));
    let e = emit(&p, &Options::default()).unwrap();
    let a = e.arrays.iter().find(|r| r.name == "A").unwrap();
    assert!(a.expanded, "{}", e.text);
    assert_eq!(a.proof, Some(Proof::Proved), "{}", e.text);
    let mut compared = Vec::new();
    for v in vectors(&p) {
        let o = EquivOptions {
            params: v.clone(),
            seeds: 3,
            ..EquivOptions::default()
        };
        match equiv(&p, &e.program, &o) {
            Ok(Verdict::Agree(_)) => compared.push((v[0].1, v[1].1)),
            Err(err) if !err.in_b => {}
            other => panic!("at {v:?}: {other:?}\n{}", e.text),
        }
    }
    let runs_original: Vec<(i64, i64)> = (0..4)
        .flat_map(|m| (0..4).map(move |n| (m, n)))
        .filter(|&(m, n)| m == 0 || m <= 2 * n && m <= n + 1)
        .collect();
    assert_eq!(compared, runs_original, "{}", e.text);
}
