//! The least storage of a program's values at one size, in program order,
//! by exhaustive search: the plain reference for what any layout of cells
//! can reach (the contraction's modular mappings and sharing, or any
//! other), with no statement added.
//!
//! - The run is enumerated by `dependence::brute` (the loops themselves,
//!   not σ). A value is a write, or the initial contents of a cell that a
//!   read sees before any write. It is live from its write to its last
//!   read; an operation reads before it writes, so it may write over a
//!   value it is the last to read.
//! - The results (`--live-out`) arrive and leave in their own cells: the
//!   initial contents of a result's cell sit in that cell, and so does its
//!   final value, live to the end. A temporary's initial contents that a
//!   read sees arrive in its own cells too.
//! - A layout gives every other value a cell; values live at once get
//!   different cells. The search tries the given cells plus 0, 1, 2, ...
//!   cells more, by backtracking (the value with the most cells already
//!   taken by its neighbours first; the added cells are interchangeable,
//!   so a value opens at most one new one).
//!
//! Checks:
//! - At T = 1, worked out by hand (see `one_step_of_the_1d_stencils`):
//!   jacobi-1d needs 2N − 3 cells, heat-1d 2N − 1. Both are above one
//!   array, one row and two cells (N + 2) from N = 6 on: no layout of cells
//!   holds the 1-D stencils there for every parameter value.
//! - On the four shipped stencils at small sizes, with only `A` a result:
//!   the live-value bound the report prints (`together`) is never above
//!   the least, and the contraction's cells never below it (1-D at N =
//!   5..8, 2-D at N = 4, 5, T = 1..3: the table in docs/expansion.md).

mod support;

use arrayflow::dependence::brute;
use arrayflow::diagnostics::FileId;
use arrayflow::model::{ArrayId, Program, Var};
use std::collections::HashMap;
use support::run;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Search steps before the search gives up (a test failure, never a hang).
const BUDGET: u64 = 50_000_000;

fn read(path: &str) -> Program {
    let text = std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap();
    let (p, d) = arrayflow::lower::compile(&text, FileId(0));
    p.unwrap_or_else(|| panic!("{path}: {d:?}"))
}

/// One value: live over the closed interval `[from, to]` of half steps
/// (operation `o` reads at 2o, writes at 2o + 1), in `given` when it sits
/// in a cell of its own.
struct Value {
    from: i64,
    to: i64,
    given: Option<usize>,
}

/// The values of one run and the number of given cells.
fn values(p: &Program, params: &[i64], results: &[&str]) -> (Vec<Value>, usize) {
    let result_ids: Vec<ArrayId> = results
        .iter()
        .map(|n| ArrayId(p.arrays.iter().position(|a| a.name == *n).unwrap() as u32))
        .collect();
    let trace = brute::trace(p, params, 2_000_000).expect("static control");
    let mut given: HashMap<(ArrayId, Vec<i64>), usize> = HashMap::new();
    let mut label = |cell: &(ArrayId, Vec<i64>)| {
        let n = given.len();
        *given.entry(cell.clone()).or_insert(n)
    };
    let mut current: HashMap<(ArrayId, Vec<i64>), usize> = HashMap::new();
    let mut vals: Vec<Value> = Vec::new();
    for (op, array, cell, reads, writes) in trace.accesses() {
        let key = (array, cell.to_vec());
        let (r, w) = (2 * op as i64, 2 * op as i64 + 1);
        if reads {
            let v = match current.get(&key) {
                Some(&v) => v,
                None => {
                    vals.push(Value {
                        from: -1,
                        to: r,
                        given: Some(label(&key)),
                    });
                    current.insert(key.clone(), vals.len() - 1);
                    vals.len() - 1
                }
            };
            vals[v].to = vals[v].to.max(r);
        }
        if writes {
            vals.push(Value {
                from: w,
                to: w,
                given: None,
            });
            current.insert(key, vals.len() - 1);
        }
    }
    for (key, &v) in &current {
        if result_ids.contains(&key.0) {
            vals[v].to = i64::MAX;
            vals[v].given = Some(label(key));
        }
    }
    // A result's cells no access touches hold their initial contents to
    // the end: given cells, live throughout, in conflict with every value.
    for &a in &result_ids {
        let at = |e: &arrayflow::model::Affine| {
            e.eval(|v| match v {
                Var::Param(q) => params[q.index()],
                Var::Counter(_) => unreachable!("declared bounds use parameters only"),
            })
            .unwrap()
        };
        let cells: i64 = (p.arrays[a.index()].dims.iter())
            .map(|r| (at(&r.hi.affine) - at(&r.lo.affine) + 1).max(0))
            .product();
        let touched = current.keys().filter(|k| k.0 == a).count() as i64;
        for _ in touched..cells {
            let n = given.len();
            given.insert((a, vec![-1 - n as i64]), n);
            vals.push(Value {
                from: -1,
                to: i64::MAX,
                given: Some(n),
            });
        }
    }
    (vals, given.len())
}

/// The fewest cells holding `vals` with `fixed` given cells, or None when
/// the search ran past its budget.
fn least(vals: &[Value], fixed: usize) -> Option<usize> {
    let n = vals.len();
    let meet = |a: &Value, b: &Value| a.from <= b.to && b.from <= a.to;
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for a in 0..n {
        for b in a + 1..n {
            if meet(&vals[a], &vals[b]) {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
    }
    for (a, v) in vals.iter().enumerate() {
        let clash = adj[a]
            .iter()
            .any(|&b| v.given.is_some() && vals[b].given == v.given);
        assert!(!clash, "two values live at once in one given cell");
    }
    let mut steps = 0u64;
    for extra in 0.. {
        let mut cell: Vec<Option<usize>> = vals.iter().map(|v| v.given).collect();
        match colour(&adj, &mut cell, fixed, fixed + extra, fixed, &mut steps) {
            Some(true) => return Some(fixed + extra),
            Some(false) => {}
            None => return None,
        }
    }
    unreachable!()
}

/// Backtracking: Some(true) when every value gets one of `cells` cells
/// (`opened` of them used so far; the ones from `fixed` on are
/// interchangeable), None past the budget.
fn colour(
    adj: &[Vec<usize>],
    cell: &mut [Option<usize>],
    fixed: usize,
    cells: usize,
    opened: usize,
    steps: &mut u64,
) -> Option<bool> {
    *steps += 1;
    if *steps > BUDGET {
        return None;
    }
    // The uncoloured value whose neighbours take the most cells.
    let mut pick: Option<(usize, usize, Vec<bool>)> = None;
    for v in (0..cell.len()).filter(|&v| cell[v].is_none()) {
        let mut taken = vec![false; cells];
        for &u in &adj[v] {
            if let Some(c) = cell[u] {
                taken[c] = true;
            }
        }
        let k = taken.iter().filter(|&&t| t).count();
        if k == cells {
            return Some(false);
        }
        if pick.as_ref().is_none_or(|p| k > p.1) {
            pick = Some((v, k, taken));
        }
    }
    let Some((v, _, taken)) = pick else {
        return Some(true);
    };
    let limit = cells.min(opened + 1).max(fixed);
    for c in (0..limit).filter(|&c| !taken[c]) {
        cell[v] = Some(c);
        let opened = opened.max(c + 1);
        match colour(adj, cell, fixed, cells, opened, steps) {
            Some(false) => {}
            other => return other,
        }
    }
    cell[v] = None;
    Some(false)
}

fn least_at(path: &str, t: i64, n: i64) -> usize {
    let p = read(path);
    let values_of = p.param_values(&[("T".into(), t), ("N".into(), n)]).unwrap();
    let (vals, fixed) = values(&p, &values_of, &["A"]);
    least(&vals, fixed).unwrap_or_else(|| panic!("{path} at T={t}, N={n}: over budget"))
}

/// By hand, jacobi-1d at T = 1 (A in place, the result; B a temporary):
/// when S(i) writes B[i], A's cells i..N-2 still hold values S(i + 1..)
/// reads (A[i - 1]'s is free: S(i) was its last read), so B[i] is in a cell
/// below i or in a cell of its own. When U(i) writes A[i] into cell i,
/// B[j] for j > i is still to be read, so B[j] is in no cell below j.
/// Both hold only for B[N - 2] in cell N - 2: the other N - 3 values of B
/// need cells of their own, 2N - 3 in all. heat-1d's U(i) reads B at i - 1,
/// i and i + 1, so B[j] stays live through U(j + 1): the same count, and
/// B[0], B[N - 1], initial contents U reads, in their own cells: 2N - 1.
#[test]
fn one_step_of_the_1d_stencils() {
    for n in 4..=7 {
        let j = least_at("fixtures/c/kernels/jacobi1d.loop", 1, n);
        assert_eq!(j as i64, 2 * n - 3, "jacobi-1d at T=1, N={n}");
        let h = least_at("fixtures/c/kernels/heat1d.loop", 1, n);
        assert_eq!(h as i64, 2 * n - 1, "heat-1d at T=1, N={n}");
    }
}

/// The figure on the `together` line ("K values live at once") and the
/// contracted total ("C contracted").
fn report(path: &str, t: i64, n: i64) -> (usize, usize) {
    let (tp, np) = (format!("T={t}"), format!("N={n}"));
    let (rc, out, err) = run(&[
        "expand",
        &format!("{ROOT}/{path}"),
        "--transform",
        "contract",
        "--live-out",
        "A",
        "--param",
        &tp,
        "--param",
        &np,
    ]);
    assert_eq!(rc, 0, "{path}: {err}");
    let line = out.lines().find(|l| l.contains("together:")).unwrap();
    let number = |k: usize| -> usize {
        let part = line.split("; ").nth(k).unwrap();
        let word = part.split_whitespace().find(|w| w.parse::<usize>().is_ok());
        word.and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    (number(1), number(0))
}

/// The live-value bound is a lower bound and the contraction a layout: the
/// least lies between them.
#[test]
fn the_least_lies_between_the_bound_and_the_contraction() {
    let cases: &[(&str, &[i64], &[i64])] = &[
        ("jacobi1d", &[1, 2, 3], &[5, 6, 7, 8]),
        ("heat1d", &[1, 2, 3], &[5, 6, 7]),
        ("jacobi2d", &[1, 2, 3], &[4, 5]),
        ("heat2d", &[1, 2, 3], &[4, 5]),
    ];
    for &(kernel, ts, ns) in cases {
        let path = format!("fixtures/c/kernels/{kernel}.loop");
        for &t in ts {
            for &n in ns {
                let at_least = least_at(&path, t, n);
                let (live, contracted) = report(&path, t, n);
                assert!(
                    live <= at_least && at_least <= contracted,
                    "{kernel} at T={t}, N={n}: live {live}, least {at_least}, contracted {contracted}"
                );
            }
        }
    }
}
