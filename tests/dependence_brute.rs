//! The dependence analysis against brute-force enumeration on random small
//! affine programs. `ARRAYFLOW_CASES` sets the number of programs.

mod support;

use arrayflow::dependence::brute::{self, Found};
use arrayflow::dependence::{analyze, Config, Dir, MemoMode, PairReport, Tester};
use arrayflow::model::Program;
use std::collections::BTreeSet;
use support::gen::{self, Rng, Shape};

/// The sign vectors a list of direction vectors stands for (`*` expanded).
fn expand(directions: &[Vec<Dir>]) -> BTreeSet<Vec<Dir>> {
    let mut out = BTreeSet::new();
    for v in directions {
        let mut acc: Vec<Vec<Dir>> = vec![Vec::new()];
        for d in v {
            acc = acc
                .into_iter()
                .flat_map(|p| {
                    d.signs().iter().map(move |&s| {
                        let mut p = p.clone();
                        p.push(s);
                        p
                    })
                })
                .collect();
        }
        out.extend(acc);
    }
    out
}

fn describe(program: &Program, p: &PairReport, found: &Found) -> String {
    format!(
        "{program:#?}\npair {} -> {}: reported {:?} kinds {:?} distances {:?} by {:?} exact {} notes {:?}\nbrute force: {:?} kinds {:?} distances {:?}",
        p.src, p.dst, p.directions, p.kinds, p.distances, p.decided_by, p.exact, p.notes,
        found.directions, found.kinds, found.distances
    )
}

/// Checks one pair against what enumeration found at one size. `all` says
/// the enumeration covers every execution (no parameter), so an exact
/// answer must match it exactly.
fn check(program: &Program, p: &PairReport, found: &Found, all: bool) -> Result<(), String> {
    let reported = expand(&p.directions);
    let fail = |what: &str| Err(format!("{what}\n{}", describe(program, p, found)));
    if !found.directions.is_subset(&reported) {
        return fail("a direction enumeration found is missing");
    }
    let kinds: BTreeSet<_> = p.kinds.iter().copied().collect();
    if !found.kinds.is_subset(&kinds) {
        return fail("a kind enumeration found is missing");
    }
    for v in &p.dependence.vectors {
        if let Some(d) = &v.distance {
            let same_signs: BTreeSet<&Vec<i64>> = found
                .distances
                .iter()
                .filter(|x| x.iter().map(|&k| Dir::of(k)).collect::<Vec<_>>() == v.dirs)
                .collect();
            if same_signs.iter().any(|x| *x != d) {
                return fail("a constant distance is not the only one");
            }
            if all && p.exact && same_signs.is_empty() {
                return fail("a distance for a direction enumeration never saw");
            }
        }
    }
    if all && p.exact {
        if reported != found.directions {
            return fail("exact directions differ from enumeration");
        }
        if kinds != found.kinds {
            return fail("exact kinds differ from enumeration");
        }
    }
    Ok(())
}

fn memo_for(seed: u64) -> MemoMode {
    [MemoMode::Improved, MemoMode::Off, MemoMode::Simple][(seed % 3) as usize]
}

#[test]
fn concrete_programs_match_enumeration() {
    let n = support::cases(1500);
    let (mut pairs, mut dependent, mut inexact) = (0, 0, 0);
    for seed in 0..n {
        let shape = Shape {
            nonaffine: seed % 7 == 0,
            dims: 1 + (seed % 2) as usize,
            ..Shape::AFFINE
        };
        let program = gen::program(&mut Rng::new(seed), shape);
        let trace = brute::trace(&program, &[], 1_000_000).expect("enumerable");
        let mut tester = Tester::new(Config {
            memo: memo_for(seed),
            ..Config::default()
        });
        for p in analyze(&program, &mut tester) {
            pairs += 1;
            let found = trace.pair(p.src_id, p.dst_id);
            if let Err(e) = check(&program, &p, &found, true) {
                panic!("seed {seed}: {e}");
            }
            dependent += u64::from(found.dependent());
            if !p.exact {
                inexact += 1;
                // Only what the program itself makes approximate may be
                // inexact: a non-affine subscript or a `!=` guard.
                assert!(
                    !p.notes.is_empty(),
                    "seed {seed}: inexact without a reason\n{}",
                    describe(&program, &p, &found)
                );
            }
            // Constant distances are found: a direction of an exact pair whose
            // enumerated distance is unique must report it.
            for v in p
                .dependence
                .vectors
                .iter()
                .filter(|v| p.exact && v.distance.is_none())
            {
                if v.dirs.contains(&Dir::Star) {
                    continue;
                }
                let d: BTreeSet<_> = found
                    .distances
                    .iter()
                    .filter(|x| x.iter().map(|&k| Dir::of(k)).collect::<Vec<_>>() == v.dirs)
                    .collect();
                assert!(
                    d.len() != 1,
                    "seed {seed}: constant distance {d:?} of {:?} not found\n{}",
                    v.dirs,
                    describe(&program, &p, &found)
                );
            }
        }
    }
    eprintln!(
        "{n} programs, {pairs} pairs, {dependent} dependent, {inexact} inexact (non-affine or `!=`)"
    );
    assert!(pairs > n, "too few pairs generated");
    assert!(
        dependent * 5 > pairs,
        "too few dependent pairs to be a test"
    );
}

#[test]
fn parametric_programs_are_sound_at_every_size() {
    let n = support::cases(1500) / 3;
    for seed in 0..n {
        let shape = Shape {
            param: true,
            nonaffine: seed % 5 == 0,
            ..Shape::AFFINE
        };
        let program = gen::program(&mut Rng::new(1_000_000 + seed), shape);
        let mut tester = Tester::new(Config {
            memo: memo_for(seed),
            ..Config::default()
        });
        let report = analyze(&program, &mut tester);
        for size in [0, 1, 2, 3, 5] {
            let trace = brute::trace(&program, &[size], 1_000_000).expect("enumerable");
            for p in &report {
                let found = trace.pair(p.src_id, p.dst_id);
                if let Err(e) = check(&program, p, &found, false) {
                    panic!("seed {seed}, N = {size}: {e}");
                }
            }
        }
    }
}
