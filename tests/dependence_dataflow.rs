//! Soundness of `deps` against the bounded engine and against enumeration,
//! on the shared random program generator (while loops, unknown and
//! data-dependent conditions, non-affine subscripts included).
//!
//! - Every source σ gives (a write that a read may see) is a flow dependence
//!   `deps` reports, with the instance pair's direction among its vectors.
//! - On static-control programs, every conflicting pair of instances that
//!   enumeration finds (flow, anti or output) is reported.
//!
//! Each at several concrete sizes; `ARRAYFLOW_CASES` sets the number of
//! programs.

mod support;

use arrayflow::dependence::brute;
use arrayflow::dependence::{analyze, Config, Dir, Kind, PairReport, RefId, Tester};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{Program, Site};
use std::collections::HashMap;

/// Position, among its site's accesses, of read `k` (`Stmt::reads()` order).
fn read_position(program: &Program, site: Site, k: usize) -> usize {
    match site {
        Site::Stmt(s) => {
            let stmt = program.stmts()[s.index()];
            stmt.accesses()
                .iter()
                .enumerate()
                .filter(|(_, a)| a.kind.reads())
                .nth(k)
                .map(|(p, _)| p)
                .expect("read exists")
        }
        Site::Cond(_) => k,
    }
}

fn by_refs(report: &[PairReport]) -> HashMap<(RefId, RefId), &PairReport> {
    let mut m = HashMap::new();
    for p in report {
        m.insert((p.src_id, p.dst_id), p);
        m.insert((p.dst_id, p.src_id), p);
    }
    m
}

/// Whether the pair allows an instance of `a` at `ia` and one of `b` at
/// `ib`: the sign vector of the distance, oriented as the pair is, must be
/// among its directions.
fn allows(p: &PairReport, a: RefId, ia: &[i64], ib: &[i64]) -> bool {
    let (from, to) = if p.src_id == a { (ia, ib) } else { (ib, ia) };
    let common = p.loops.len();
    let signs: Vec<Dir> = (0..common).map(|k| Dir::of(to[k] - from[k])).collect();
    p.directions
        .iter()
        .any(|v| v.iter().zip(&signs).all(|(d, s)| *d == Dir::Star || d == s))
}

fn sizes(program: &Program) -> Vec<Vec<(String, i64)>> {
    let mut out = vec![Vec::new()];
    for delta in [-1, 1, 3] {
        out.push(
            program
                .params
                .iter()
                .map(|p| (p.name.clone(), p.default.unwrap_or(2) + delta))
                .collect(),
        );
    }
    out
}

#[test]
fn every_source_of_the_bounded_engine_is_a_reported_flow() {
    let n = support::cases(600);
    let (mut checked, mut programs) = (0u64, 0u64);
    for seed in 0..n {
        let options = if seed % 4 == 0 {
            GenOptions::static_control(Size::Small)
        } else {
            GenOptions::all(Size::Small)
        };
        let program = generate(seed, &options);
        let report = analyze(&program, &mut Tester::new(Config::default()));
        let pairs = by_refs(&report);
        for params in sizes(&program) {
            let config = arrayflow::dataflow::Config {
                params,
                max_trips: 3,
                max_instances: 200_000,
                ..arrayflow::dataflow::Config::default()
            };
            let Ok(flow) = arrayflow::dataflow::analyze(&program, &config) else {
                continue;
            };
            programs += 1;
            for r in flow.iter() {
                let read = RefId {
                    site: r.site(),
                    position: read_position(&program, r.site(), r.access()),
                };
                for (wsite, witer) in r.writes() {
                    let write = RefId {
                        site: wsite,
                        position: 0,
                    };
                    let p = pairs.get(&(write, read)).unwrap_or_else(|| {
                        panic!("seed {seed}: no pair for a source of {:?}", r.operation())
                    });
                    let ok = p.dependent
                        && p.kinds.contains(&Kind::Flow)
                        && allows(p, write, witer, r.iter());
                    assert!(
                        ok,
                        "seed {seed}, sizes {:?}: {:?} reads from {wsite:?}{witer:?}, but deps says {p:?}\n{program:#?}",
                        config.params,
                        r.operation()
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{programs} analyses, {checked} sources checked");
    assert!(checked > n, "too few sources to be a test");
}

#[test]
fn every_conflict_of_static_programs_is_reported() {
    let n = support::cases(600);
    let mut conflicts = 0u64;
    for seed in 0..n {
        let program = generate(10_000 + seed, &GenOptions::static_control(Size::Small));
        let report = analyze(&program, &mut Tester::new(Config::default()));
        for params in sizes(&program) {
            let Ok(values) = program.param_values(&params) else {
                continue;
            };
            let Ok(trace) = brute::trace(&program, &values, 200_000) else {
                continue;
            };
            for p in &report {
                let found = trace.pair(p.src_id, p.dst_id);
                if !p.dependent {
                    assert!(
                        !found.dependent(),
                        "seed {seed}, {params:?}: {p:?}\n{found:?}"
                    );
                    continue;
                }
                for v in &found.directions {
                    let covered = p
                        .directions
                        .iter()
                        .any(|d| d.iter().zip(v).all(|(r, s)| *r == Dir::Star || r == s));
                    assert!(covered, "seed {seed}, {params:?}: {v:?} missing from {p:?}");
                }
                assert!(
                    found.kinds.iter().all(|k| p.kinds.contains(k)),
                    "seed {seed}: {p:?}"
                );
                conflicts += found.directions.len() as u64;
            }
        }
    }
    assert!(conflicts > n, "too few conflicts to be a test");
}
