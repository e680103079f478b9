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
//!   final value, live to the end. A temporary whose initial contents a
//!   read sees is an input: it arrives whole, those contents in their
//!   cells, its other cells free for any value.
//! - A layout gives every other value a cell; values live at once get
//!   different cells. The search tries the given cells plus 0, 1, 2, ...
//!   cells more, by backtracking (the value with the most cells already
//!   taken by its neighbours first; the added cells are interchangeable,
//!   so a value opens at most one new one).
//!
//! Checks:
//! - By hand: jacobi-1d at T = 1 needs 2N − 3 cells (see
//!   `one_step_of_jacobi_1d`), above one array, one row and two cells (N +
//!   2) from N = 6 on; heat-1d, jacobi-2d and heat-2d read B's frame before
//!   writing it, so B arrives whole beside A: 2N cells (2N² in 2-D) at
//!   every T, which the contraction keeps.
//! - On the four shipped stencils at small sizes, with only `A` a result:
//!   the live-value bound the report prints (`together`) is never above
//!   the least, and the contraction's cells never below it (1-D at N =
//!   5..8, 2-D at N = 4, 5, T = 1..3: the table in docs/expansion.md).
//! - The same on generated static-control programs, one array a result
//!   and the others temporaries.

mod support;

use arrayflow::dataflow::Config;
use arrayflow::dependence::brute;
use arrayflow::diagnostics::FileId;
use arrayflow::expansion;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{ArrayId, Program, Var};
use arrayflow::storage::{self, Schedule};
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

/// The values of one run and the cells given them: of the arrays `laid`
/// (the others, inputs nothing writes, are left where they are).
fn values(p: &Program, params: &[i64], laid: &[ArrayId], result_ids: &[ArrayId]) -> Values {
    let trace = brute::trace(p, params, 2_000_000).expect("static control");
    let mut given: HashMap<(ArrayId, Vec<i64>), usize> = HashMap::new();
    let mut label = |cell: &(ArrayId, Vec<i64>)| {
        let n = given.len();
        *given.entry(cell.clone()).or_insert(n)
    };
    let mut current: HashMap<(ArrayId, Vec<i64>), usize> = HashMap::new();
    let mut vals: Vec<Value> = Vec::new();
    let accesses = trace.accesses();
    // One operation at a time: its reads, then its writes.
    for one in accesses.chunk_by(|a, b| a.0 == b.0) {
        for &(op, array, cell, _, _) in one.iter().filter(|a| a.3 && laid.contains(&a.1)) {
            let key = (array, cell.to_vec());
            let v = match current.get(&key) {
                Some(&v) => v,
                None => {
                    vals.push(Value {
                        from: -1,
                        to: 0,
                        given: Some(label(&key)),
                    });
                    current.insert(key, vals.len() - 1);
                    vals.len() - 1
                }
            };
            vals[v].to = vals[v].to.max(2 * op as i64);
        }
        for &(op, array, cell, _, _) in one.iter().filter(|a| a.4 && laid.contains(&a.1)) {
            vals.push(Value {
                from: 2 * op as i64 + 1,
                to: 2 * op as i64 + 1,
                given: None,
            });
            current.insert((array, cell.to_vec()), vals.len() - 1);
        }
    }
    for (key, &v) in &current {
        if result_ids.contains(&key.0) {
            vals[v].to = i64::MAX;
            vals[v].given = Some(label(key));
        }
    }
    let at = |e: &arrayflow::model::Affine| {
        e.eval(|v| match v {
            Var::Param(q) => params[q.index()],
            Var::Counter(_) => unreachable!("declared bounds use parameters only"),
        })
        .unwrap()
    };
    let declared = |a: ArrayId| -> usize {
        (p.arrays[a.index()].dims.iter())
            .map(|r| (at(&r.hi.affine) - at(&r.lo.affine) + 1).max(0) as usize)
            .product()
    };
    // A result's cells no access touches hold their initial contents to
    // the end: given cells, live throughout, in conflict with every value.
    // A temporary whose initial contents are read arrives whole: its other
    // cells exist too, free for any value.
    let (mut untouched, mut free) = (0, 0);
    for &a in laid {
        let labelled = given.keys().filter(|k| k.0 == a).count();
        if result_ids.contains(&a) {
            let touched = current.keys().filter(|k| k.0 == a).count();
            untouched += declared(a).saturating_sub(touched);
        } else if labelled > 0 {
            free += declared(a).saturating_sub(labelled);
        }
    }
    let real = given.len();
    for k in 0..untouched {
        vals.push(Value {
            from: -1,
            to: i64::MAX,
            given: Some(real + k),
        });
    }
    Values {
        vals,
        fixed: real + untouched,
        free,
    }
}

/// What [`values`] finds.
struct Values {
    vals: Vec<Value>,
    /// Cells given to values: results' cells, temporaries' read inputs.
    fixed: usize,
    /// Cells that exist without a value given them: the rest of a
    /// temporary whose inputs are read.
    free: usize,
}

impl Values {
    /// The fewest cells, with the free ones counted: None past `budget`.
    fn least(&self, budget: u64) -> Option<usize> {
        least(&self.vals, self.fixed, budget).map(|k| k.max(self.fixed + self.free))
    }
}

/// The fewest cells holding `vals` with `fixed` given cells, or None when
/// the search ran past `budget` steps.
fn least(vals: &[Value], fixed: usize, budget: u64) -> Option<usize> {
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
        match colour(
            &adj,
            &mut cell,
            fixed,
            fixed + extra,
            fixed,
            &mut steps,
            budget,
        ) {
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
    budget: u64,
) -> Option<bool> {
    *steps += 1;
    if *steps > budget {
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
        match colour(adj, cell, fixed, cells, opened, steps, budget) {
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
    let a = ArrayId(p.arrays.iter().position(|a| a.name == "A").unwrap() as u32);
    let v = values(&p, &values_of, &written(&p), &[a]);
    v.least(BUDGET)
        .unwrap_or_else(|| panic!("{path} at T={t}, N={n}: over budget"))
}

/// By hand, jacobi-1d at T = 1 (A in place, the result; B a temporary):
/// when S(i) writes B[i], A's cells i..N-2 still hold values S(i + 1..)
/// reads (A[i - 1]'s is free: S(i) was its last read), so B[i] is in a cell
/// below i or in a cell of its own. When U(i) writes A[i] into cell i,
/// B[j] for j > i is still to be read, so B[j] is in no cell below j.
/// Both hold only for B[N - 2] in cell N - 2: the other N - 3 values of B
/// need cells of their own, 2N - 3 in all.
#[test]
fn one_step_of_jacobi_1d() {
    for n in 4..=7 {
        let j = least_at("fixtures/c/kernels/jacobi1d.loop", 1, n);
        assert_eq!(j as i64, 2 * n - 3, "jacobi-1d at T=1, N={n}");
    }
}

/// heat-1d, jacobi-2d and heat-2d read B's frame before any write of it
/// (`U` at i = 1 reads B[0], ...): B is an input of the program and
/// arrives whole, beside A, the result. So 2N cells (2N² in 2-D) exist
/// however the values are laid out, at every T, and the contraction
/// keeps exactly those.
#[test]
fn stencils_reading_b_keep_both_arrays() {
    // (kernel, dimensions, sizes): A and B, N cells per dimension.
    let cases: &[(&str, u32, &[i64])] = &[
        ("heat1d", 1, &[5, 6, 7]),
        ("jacobi2d", 2, &[4, 5]),
        ("heat2d", 2, &[4, 5]),
    ];
    for &(kernel, dims, ns) in cases {
        let cells = |n: i64| 2 * n.pow(dims);
        let path = format!("fixtures/c/kernels/{kernel}.loop");
        for &n in ns {
            for t in 1..=3 {
                let at_least = least_at(&path, t, n) as i64;
                let (_, contracted) = report(&path, t, n);
                assert_eq!(at_least, cells(n), "{kernel} at T={t}, N={n}");
                assert_eq!(contracted as i64, cells(n), "{kernel} at T={t}, N={n}");
            }
        }
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

/// Generated static-control programs (ARRAYFLOW_CASES, default 60) in
/// program order, the first array some statement writes the result and
/// every other a temporary: over the arrays the contraction lays out
/// (`Contraction::listed`), the live-value bound
/// (`Contraction::bound_all`) is never above the least, and the
/// contraction's cells (`Contraction::contracted_cells`) never below it. Programs whose search
/// runs past a small budget are left out; most are decided.
#[test]
fn generated_programs_between_the_bound_and_the_contraction() {
    let n = support::cases(60);
    let (mut decided, mut over, mut tried) = (0, 0, 0);
    let (mut bounded, mut at_bound, mut at_contraction) = (0, 0, 0);
    for seed in 0..n {
        let p = generate(seed, &GenOptions::static_control(Size::Small));
        let Ok(exp) = expansion::expand(&p, &Config::default()) else {
            continue;
        };
        let Some(&result) = written(&p).first() else {
            continue;
        };
        let temporaries: Vec<ArrayId> = (0..p.arrays.len() as u32)
            .map(ArrayId)
            .filter(|&a| a != result)
            .collect();
        let order = Schedule::new(&p, Some(&[])).unwrap();
        let Ok(c) = storage::contract_with(&p, &exp, &order, Some(&temporaries)) else {
            continue;
        };
        let params = p.param_values(&[]).unwrap();
        let Ok(_) = brute::trace(&p, &params, 2_000_000) else {
            continue;
        };
        tried += 1;
        // The arrays the contraction lays out: written at these sizes.
        let v = values(&p, &params, &c.listed(), &[result]);
        let Some(at_least) = v.least(2_000_000) else {
            over += 1;
            continue;
        };
        decided += 1;
        let contracted = c.contracted_cells() as usize;
        let text = arrayflow::print::program(&p);
        assert!(
            at_least <= contracted,
            "seed {seed}: least {at_least} above the contraction's {contracted}\n{text}"
        );
        at_contraction += usize::from(at_least == contracted);
        if let Some(live) = c.bound_all {
            bounded += 1;
            at_bound += usize::from(live as usize == at_least);
            assert!(
                live as usize <= at_least,
                "seed {seed}: {live} values live at once above the least {at_least}\n{text}"
            );
        }
    }
    eprintln!(
        "{decided} of {tried} programs decided, {over} over the budget; the least equal to \
         the contraction's cells in {at_contraction}, to the bound in {at_bound} of {bounded}"
    );
    assert!(
        decided * 2 >= tried && decided > 0,
        "{decided} of {tried} decided"
    );
}

/// The arrays some statement writes, in program text (each once).
fn written(p: &Program) -> Vec<ArrayId> {
    let mut out = Vec::new();
    for s in arrayflow::model::stmts_in(&p.body) {
        if let Some((a, _)) = s.write() {
            if !out.contains(&a.array) {
                out.push(a.array);
            }
        }
    }
    out
}
