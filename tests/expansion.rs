//! Maximal static expansion against a naive reference: the plainest
//! union-find over the naive σ (tests/naive, crepe), written here. The
//! expected class counts of docs/expansion.md §4 are checked against both. On generated
//! programs: the engine's labels are static (the sources of a read share one
//! label) and maximal (writes of one cell in different naive classes get
//! different labels). ARRAYFLOW_CASES sets the number of programs.

#[allow(dead_code)]
mod kernels;
#[allow(dead_code)]
mod naive;
mod support;

use arrayflow::dataflow::Config;
use arrayflow::expansion::{expand, Expansion};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{Operation, Program};
use kernels::fixture;
use naive::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The naive classes: R* by the plainest union-find.
struct Naive {
    /// Live write operations.
    live: BTreeSet<Operation>,
    /// Dead write operations.
    dead: BTreeSet<Operation>,
    /// Class (root) of every live write.
    root: HashMap<Operation, usize>,
    /// |W(c)/R*| for every written cell.
    per_cell: BTreeMap<Cell, usize>,
    /// The cells every write may write.
    writes: Vec<(Operation, Vec<Cell>)>,
    full: naive::Full,
    /// Root of each read's sources.
    read_root: BTreeMap<(Operation, usize), usize>,
}

fn find(parent: &mut Vec<usize>, x: usize) -> usize {
    if parent[x] == x {
        x
    } else {
        let r = find(parent, parent[x]);
        parent[x] = r;
        r
    }
}

fn naive(program: &Program, params: &[(String, i64)], max_trips: u32) -> Naive {
    let full = naive::full(program, params, max_trips);
    // Elements: writes, then the initial value of each cell.
    let mut id: HashMap<Operation, usize> = HashMap::new();
    for (k, (op, _)) in full.writes.iter().enumerate() {
        id.insert(op.clone(), k);
    }
    let mut init: HashMap<Cell, usize> = HashMap::new();
    let mut parent: Vec<usize> = (0..full.writes.len()).collect();
    let mut live = BTreeSet::new();
    let mut elems_of_read: BTreeMap<(Operation, usize), Vec<usize>> = BTreeMap::new();
    for (key, s) in &full.sigma {
        let mut elems: Vec<usize> = s.writes.iter().map(|w| id[w]).collect();
        live.extend(s.writes.iter().cloned());
        for c in full.initial_cells.get(key).into_iter().flatten() {
            let n = parent.len();
            let e = *init.entry(c.clone()).or_insert(n);
            if e == n {
                parent.push(n);
            }
            elems.push(e);
        }
        for w in elems.windows(2) {
            let (a, b) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
            parent[a] = b;
        }
        elems_of_read.insert(key.clone(), elems);
    }
    let mut root = HashMap::new();
    let mut per_cell: BTreeMap<Cell, BTreeSet<usize>> = BTreeMap::new();
    let mut dead = BTreeSet::new();
    for (op, cells) in &full.writes {
        for c in cells {
            per_cell.entry(c.clone()).or_default();
        }
        if live.contains(op) {
            let r = find(&mut parent, id[op]);
            root.insert(op.clone(), r);
            for c in cells {
                per_cell.entry(c.clone()).or_default().insert(r);
            }
        } else {
            dead.insert(op.clone());
        }
    }
    let read_root = elems_of_read
        .into_iter()
        .filter_map(|(k, e)| e.first().map(|&x| (k, find(&mut parent, x))))
        .collect();
    Naive {
        live,
        dead,
        root,
        per_cell: per_cell.into_iter().map(|(c, s)| (c, s.len())).collect(),
        writes: full.writes.clone(),
        full,
        read_root,
    }
}

fn config(params: &[(&str, i64)], max_trips: u32) -> Config {
    Config {
        params: params.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        max_trips,
        ..Config::default()
    }
}

/// Checks the engine against the naive reference; returns the number of
/// classes.
fn check(program: &Program, config: &Config) -> Result<usize, String> {
    let exp = expand(program, config).map_err(|e| e.to_string())?;
    let n = naive(program, &config.params, config.max_trips);
    agree(&exp, &n)?;
    Ok(n.per_cell.values().sum())
}

fn agree(exp: &Expansion, n: &Naive) -> Result<(), String> {
    // Live and dead writes.
    let mut labels: HashMap<Operation, Option<u32>> = HashMap::new();
    for (op, label, live) in exp.writes() {
        if live != n.live.contains(&op) {
            return Err(format!("{op:?}: engine live = {live}"));
        }
        if !live && !n.dead.contains(&op) {
            return Err(format!("{op:?}: dead for the engine only"));
        }
        if live != label.is_some() {
            return Err(format!("{op:?}: live {live} but label {label:?}"));
        }
        labels.insert(op, label);
    }
    if labels.len() != n.writes.len() {
        return Err(format!(
            "{} writes in the engine, {} in the reference",
            labels.len(),
            n.writes.len()
        ));
    }
    // Classes per cell.
    let mut per_cell: BTreeMap<Cell, usize> = BTreeMap::new();
    for a in &exp.arrays {
        for (index, k) in &a.classes_per_cell {
            per_cell.insert((a.array.0, index.clone()), *k as usize);
        }
    }
    if per_cell != n.per_cell {
        return Err(format!(
            "classes per cell: engine {per_cell:?}, reference {:?}",
            n.per_cell
        ));
    }
    // Static: the sources of every read carry one label, the read's.
    let read_labels: HashMap<(Operation, usize), Option<u32>> =
        exp.reads().map(|(op, a, l)| ((op, a), l)).collect();
    for (key, s) in &n.full.sigma {
        let got = read_labels.get(key).copied().flatten();
        let mut seen: BTreeSet<Option<u32>> = BTreeSet::new();
        for w in &s.writes {
            seen.insert(labels.get(w).copied().flatten());
        }
        if seen.len() > 1 {
            return Err(format!("{key:?}: sources carry labels {seen:?}"));
        }
        if let Some(&l) = seen.iter().next() {
            if l != got || l.is_none() {
                return Err(format!("{key:?}: read label {got:?}, sources {l:?}"));
            }
        }
        // A read with no live write in its class has no label.
        let has_live = n.root.values().any(|&r| Some(&r) == n.read_root.get(key));
        if has_live != got.is_some() {
            return Err(format!(
                "{key:?}: label {got:?}, class has live writes: {has_live}"
            ));
        }
    }
    // Maximal: writes of one cell in different classes get different
    // labels; in one class, one label.
    let mut by_cell: BTreeMap<&Cell, Vec<&Operation>> = BTreeMap::new();
    for (op, cells) in &n.writes {
        if n.live.contains(op) {
            for c in cells {
                by_cell.entry(c).or_default().push(op);
            }
        }
    }
    for (c, ops) in by_cell {
        for (k, a) in ops.iter().enumerate() {
            for b in &ops[k + 1..] {
                let same_class = n.root[*a] == n.root[*b];
                let same_label = labels[*a] == labels[*b];
                if same_class != same_label {
                    return Err(format!(
                        "cell {c:?}: {a:?} and {b:?}: same class {same_class}, same label {same_label}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The expected classes: (fixture, parameters, max-trips, classes).
const TABLE: &[(&str, i64, u32, usize)] = &[
    ("mse-example1.loop", 5, 3, 5),
    ("mse-example2.loop", 4, 4, 19),
    ("mse-example2.loop", 5, 4, 25),
    ("mse-example3.loop", 5, 4, 25),
];

#[test]
fn expected_class_counts_engine_and_reference() {
    for &(file, n, trips, want) in TABLE {
        let program = fixture(file);
        let got = check(&program, &config(&[("N", n)], trips)).unwrap();
        assert_eq!(got, want, "{file} N={n}: reference");
        let exp = expand(&program, &config(&[("N", n)], trips)).unwrap();
        assert_eq!(exp.classes.total as usize, want, "{file} N={n}: engine");
    }
}

#[test]
fn example2_classes_per_cell() {
    let program = fixture("mse-example2.loop");
    let want = [0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 0];
    let n = naive(&program, &[("N".to_string(), 4)], 4);
    let reference: Vec<usize> = (1..=15).map(|c| n.per_cell[&(0, vec![c])]).collect();
    assert_eq!(reference, want, "reference");
    let exp = expand(&program, &config(&[("N", 4)], 4)).unwrap();
    let a = &exp.arrays[0];
    let engine: Vec<usize> = a.classes_per_cell.iter().map(|x| x.1 as usize).collect();
    assert_eq!(engine, want, "engine");
    assert_eq!(
        (a.cells_before, a.cells_written, a.max_classes_per_cell),
        (15, 15, 2)
    );
    // Cells 1 and 15 have only dead writes: S[1, 8] and S[8, 1].
    let dead = |i: &[i64]| exp.is_dead(&kernels_op(&program, "S", i));
    assert_eq!(dead(&[1, 8]), Some(true));
    assert_eq!(dead(&[8, 1]), Some(true));
    assert_eq!(a.dead_writes as usize, n.dead.len());
}

fn kernels_op(program: &Program, label: &str, iter: &[i64]) -> Operation {
    let s = program
        .stmts()
        .iter()
        .find(|s| s.label == label)
        .unwrap()
        .id;
    Operation {
        site: arrayflow::model::Site::Stmt(s),
        iter: iter.to_vec(),
    }
}

/// Example 1: x gets one class per i, labelled i (Figure 3 / formula (10)).
#[test]
fn example1_labels_are_i() {
    let program = fixture("mse-example1.loop");
    let exp = expand(&program, &config(&[("N", 5)], 3)).unwrap();
    for i in 1..=5 {
        assert_eq!(
            exp.write_label(&kernels_op(&program, "T", &[i])),
            Some(i as u32)
        );
        for w in 0..3 {
            assert_eq!(
                exp.write_label(&kernels_op(&program, "S", &[i, w])),
                Some(i as u32)
            );
        }
        assert_eq!(
            exp.read_label(&kernels_op(&program, "R", &[i]), 0),
            Some(i as u32)
        );
    }
}

/// Example 3: labels i for S and T (Step 4 of §6.3), one label per operation
/// although S may write every cell.
#[test]
fn example3_labels_are_i() {
    let program = fixture("mse-example3.loop");
    let exp = expand(&program, &config(&[("N", 5)], 4)).unwrap();
    for i in 1..=5 {
        assert_eq!(
            exp.write_label(&kernels_op(&program, "S", &[i])),
            Some(i as u32)
        );
        for j in 1..=5 {
            assert_eq!(
                exp.write_label(&kernels_op(&program, "T", &[i, j])),
                Some(i as u32)
            );
        }
    }
}

/// Example 2: the middle band splits at j = N (Figure 5.a); cells outside
/// it have one class.
#[test]
fn example2_partition_splits_at_j_n() {
    let program = fixture("mse-example2.loop");
    let n = 4;
    let exp = expand(&program, &config(&[("N", n)], 4)).unwrap();
    for i in 1..=2 * n {
        for j in 1..=2 * n {
            let op = kernels_op(&program, "S", &[i, j]);
            let Some(label) = exp.write_label(&op) else {
                continue;
            };
            let c = i - j + 2 * n;
            if c <= n || c >= 3 * n {
                assert_eq!(label, 1, "S[{i}, {j}] cell {c}");
            }
            // Two writes of one cell: same label iff same side of j = N
            // (j ≤ N: the initial value's class, first; j > N: T's class).
            for j2 in 1..=2 * n {
                let i2 = i - j + j2;
                let Some(l2) = exp.write_label(&kernels_op(&program, "S", &[i2, j2])) else {
                    continue;
                };
                assert_eq!(
                    label == l2,
                    (j <= n) == (j2 <= n),
                    "S[{i},{j}] S[{i2},{j2}]"
                );
            }
        }
    }
}

fn cases() -> u64 {
    support::cases(1000)
}

#[test]
fn static_and_maximal_on_generated_programs() {
    let mut classes = 0;
    for seed in 0..cases() {
        let program = generate(seed, &GenOptions::all(Size::Small));
        let trips = (seed % 3) as u32;
        match check(&program, &config(&[], trips)) {
            Ok(k) => classes += k,
            Err(e) => panic!(
                "seed {seed}, max-trips {trips}: {e}\n{}",
                arrayflow::print::program(&program)
            ),
        }
    }
    assert!(classes > 0, "the generated programs had no classes at all");
}

#[test]
fn fixtures_agree_with_reference() {
    for file in [
        "polly-two-writes.loop",
        "polly-read-before-write.loop",
        "polly-read-after-write.loop",
        "polly-phi.loop",
        "polly-phi-ssa.loop",
        "polly-fie.loop",
        "polly-mse-intro.loop",
        "storage-figure1.loop",
    ] {
        let program = fixture(file);
        check(&program, &config(&[], 3)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}
