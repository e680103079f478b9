//! Affine schedules (`expand --transform contract --schedule FILE`): the
//! fixtures in fixtures/storage/ (each names its program, its exit
//! code, and has its expected output beside it, worked out by hand: the
//! paper's Figure 1 schedule gives s[n]), and an independent check of every
//! mapping: the operations run in the order of their times, equal times in
//! shuffled orders, against the mapping's places, each read must find the
//! value σ says it reads. Generated programs get generated schedules (the
//! 2d + 1 form of their own order, counters dropped or skewed);
//! ARRAYFLOW_CASES of them (default 100).

mod support;

use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::expansion::{self, Expansion};
use arrayflow::hash::SplitMix64;
use arrayflow::model::{Program, Site};
use arrayflow::storage::mapping::ReadPlace;
use arrayflow::storage::{self, affine, Contraction, Dim, Order, Schedule, StorageError};
use std::collections::HashMap;
use support::schedules::generated;

fn root(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

#[test]
fn schedule_fixtures_give_their_expected_output() {
    let fixtures = support::schedules::run_fixtures("fixtures/storage", &[]);
    assert!(fixtures.len() >= 10);
    for f in fixtures {
        let (name, text, prog, exit) = (&f.name, &f.text, f.program.as_str(), f.exit);
        // The mapping under the simulated schedule, for those accepted.
        if exit == 0 {
            let p = program(&std::fs::read_to_string(root(prog)).unwrap());
            let a = affine::parse(&p, text).unwrap();
            let s = Schedule::affine(&p, a);
            let exp = expansion::expand(&p, &Config::default()).unwrap();
            let c = storage::contract(&p, &exp, &s).unwrap();
            for seed in 0..3 {
                simulate(&p, &exp, &s, &c, seed).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            // The oracle can fail: without its added dimensions an expanded
            // array loses values under some tie order.
            if c.mapping.arrays.iter().any(|m| !m.dims.is_empty()) {
                let mut less = c;
                for m in &mut less.mapping.arrays {
                    m.dims.clear();
                }
                assert!(
                    (0..3).any(|seed| simulate(&p, &exp, &s, &less, seed).is_err()),
                    "{name}: the simulation misses the lost values"
                );
            }
        }
    }
}

#[test]
fn emit_code_under_an_affine_schedule_as_its_doall_marking_when_there_is_one() {
    let fig1 = "fixtures/papers/storage-figure1.loop";
    let paper = "fixtures/storage/figure1-paper.schedule";
    // The paper's wavefront orders R[2] before S[1, 1], which `i` parallel
    // would not: no `doall` marking stands for it, the loops are
    // rescheduled (tests/reschedule.rs has the program).
    let out = contract_cli(fig1, &["--schedule", paper, "--emit", "code"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the loops rescheduled to its order"),
        "{text}"
    );
    // Time sequential, the two statements' rows in order and every i at
    // once: the schedule is the marking `i` parallel, and the program
    // emitted is the one `--parallel i@7,i@10` (both `i` loops) gives.
    let jacobi = "fixtures/c/kernels/jacobi1d.loop";
    let rows = "fixtures/storage/jacobi1d-rows.schedule";
    let by_schedule = contract_cli(jacobi, &["--schedule", rows, "--emit", "code"]);
    assert_eq!(by_schedule.status.code(), Some(0));
    let by_loops = contract_cli(jacobi, &["--parallel", "i@7,i@10", "--emit", "code"]);
    let text = String::from_utf8_lossy(&by_schedule.stdout).to_string();
    assert!(
        text.starts_with("# affine schedule { S[t, i] -> [t, 0]; U[t, i] -> [t, 1] }"),
        "{text}"
    );
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        body(&text),
        body(&String::from_utf8_lossy(&by_loops.stdout))
    );
    // The program's own order: no loop parallel.
    let own = contract_cli(
        fig1,
        &[
            "--schedule",
            "fixtures/storage/figure1-sequential.schedule",
            "--emit",
            "code",
        ],
    );
    assert!(
        String::from_utf8_lossy(&own.stdout).contains("# storage under a schedule: parallel none")
    );
    // `--parallel` and `--schedule` together: a usage error.
    let out = contract_cli(fig1, &["--parallel", "i", "--schedule", paper]);
    assert_eq!(out.status.code(), Some(2));
    // Deep nesting is an error, not a stack overflow.
    let deep = format!(
        "{{ R[i] -> [0]; S[i, j] -> [{}j{}] }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let p = program(&std::fs::read_to_string(root(fig1)).unwrap());
    let e = affine::parse(&p, &deep).unwrap_err();
    assert!(e.message.contains("nested"), "{e:?}");
}

/// `arrayflow expand FILE --transform contract ARGS...` in the crate's root.
fn contract_cli(file: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["expand", file, "--transform", "contract"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// Runs the operations of `exp` in the order of their times under `s`,
/// equal times in an order drawn from `seed`, every access at its place
/// under `c`'s mapping (a write at its cell and its added dimensions' loop
/// counters, reduced; a read where the mapping fitted it). Each read must
/// find the value σ gives it: its source's write, or the initial value
/// (a place not written yet). Reads with several possible sources are not
/// checked (none in static control).
fn simulate(
    p: &Program,
    exp: &Expansion,
    s: &Schedule,
    c: &Contraction,
    seed: u64,
) -> Result<(), String> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let order = Order::new(p, f, s);
    let mut rng = SplitMix64::new(seed);
    let tie: Vec<u64> = (0..f.n_ops()).map(|_| rng.next_u64()).collect();
    let mut ops: Vec<u32> = (0..f.n_ops() as u32).collect();
    ops.sort_by(|&a, &b| {
        order
            .time(a)
            .cmp(order.time(b))
            .then(tie[a as usize].cmp(&tie[b as usize]))
    });
    let mut accs: Vec<Vec<u32>> = vec![Vec::new(); f.n_ops()];
    for x in 0..f.n_accs() as u32 {
        accs[f.op(x) as usize].push(x);
    }
    let maps = &c.mapping.arrays;
    let ranges = &c.mapping.ranges;
    let reduce = |d: Dim, v: i64| match d {
        Dim::Expand(_) => v,
        Dim::Fold(_, m) => v.rem_euclid(m),
    };
    // place -> the operation whose value it holds
    let mut memory: HashMap<(u32, Vec<i64>), u32> = HashMap::new();
    for &op in &ops {
        let site: Site = f.site(op);
        let iter = f.op_iter(op);
        // Reads first: an update reads the value before it writes.
        for &x in &accs[op as usize] {
            if !f.is_read(x) {
                continue;
            }
            let cell = f.acc_cell[x as usize];
            let Some((a, _)) = f.cells.locate(cell as usize) else {
                continue;
            };
            let m = &maps[a.index()];
            let slot = f.acc_slot[x as usize] as usize;
            let sources = flow.source_ops(slot);
            let initial = exp.inst.initial_at(x);
            if sources.len() + usize::from(initial) != 1 {
                continue;
            }
            let place: Vec<i64> = if m.dims.is_empty() {
                Vec::new()
            } else {
                match m.reads.get(&(site, f.slots[slot].access as usize)) {
                    Some(ReadPlace::Original) => {
                        if !initial {
                            return Err(format!("{site:?}{iter:?} reads the original array"));
                        }
                        continue;
                    }
                    Some(ReadPlace::Fitted(fits)) => m
                        .dims
                        .iter()
                        .zip(fits)
                        .map(|(&d, (coef, k))| {
                            let v = coef.iter().zip(iter).map(|(c, x)| c * x).sum::<i64>() + k;
                            reduce(d, v)
                        })
                        .collect(),
                    None => return Err(format!("no place for a read of {site:?}")),
                }
            };
            let found = memory.get(&(cell, place.clone())).copied();
            let want = sources.first().copied();
            if found != want {
                return Err(format!(
                    "read of cell {cell} at place {place:?} by {} {iter:?} finds {found:?}, \
                     σ says {want:?}",
                    p.site_name(site)
                ));
            }
        }
        for &x in &accs[op as usize] {
            if !f.is_write(x) {
                continue;
            }
            let cell = f.acc_cell[x as usize];
            let Some((a, _)) = f.cells.locate(cell as usize) else {
                continue;
            };
            let place: Vec<i64> = maps[a.index()]
                .dims
                .iter()
                .map(|&d| {
                    let v = order
                        .counter_at(op, d.counter())
                        .unwrap_or(ranges[d.counter().index()].0);
                    reduce(d, v)
                })
                .collect();
            memory.insert((cell, place), op);
        }
    }
    Ok(())
}

#[test]
fn generated_programs_under_generated_affine_schedules() {
    // Every accepted mapping is checked by simulation on 3 tie orders and
    // holds the live-value bound; the program's own order (identity)
    // must be accepted with no dimension added and every dependence
    // neutral (sequential programs are fixed points).
    let n = support::cases(100);
    let (mut accepted, mut violated, mut unmappable, mut expanded) = (0, 0, 0, 0);
    for seed in 0..n {
        let Some((p, exp, mut rng, id)) = support::schedules::case(seed) else {
            continue;
        };
        let a = affine::parse(&p, &id).unwrap_or_else(|e| panic!("seed {seed}: {e:?} in {id}"));
        let s = Schedule::affine(&p, a);
        let c = storage::contract(&p, &exp, &s)
            .unwrap_or_else(|e| panic!("seed {seed}: identity {id}: {e:?}"));
        assert!(
            c.mapping.arrays.iter().all(|m| m.dims.is_empty()),
            "seed {seed}"
        );
        assert!(c.dependences.iter().all(|d| d.verdict.neutral()));
        let text = generated(&p, &mut rng, false);
        let s = Schedule::affine(&p, affine::parse(&p, &text).unwrap());
        match storage::contract(&p, &exp, &s) {
            Ok(c) => {
                accepted += 1;
                if c.mapping.arrays.iter().any(|m| !m.dims.is_empty()) {
                    expanded += 1;
                }
                for seed2 in 0..3 {
                    simulate(&p, &exp, &s, &c, seed2).unwrap_or_else(|e| {
                        panic!(
                            "seed {seed}: {e}\n{text}\n{}",
                            arrayflow::print::program(&p)
                        )
                    });
                }
                for m in &c.mapping.arrays {
                    if let Some(b) = c.bound[m.array.index()] {
                        let held = m.cells + if m.dims.is_empty() { 0 } else { m.original };
                        assert!(held >= b, "seed {seed}: {} {held} < {b}", m.name);
                    }
                }
            }
            Err(StorageError::Violated(_)) => violated += 1,
            Err(StorageError::Unmappable(u)) => {
                eprintln!("seed {seed}: no mapping: {}", u.reason);
                unmappable += 1
            }
        }
    }
    eprintln!(
        "{n} programs: {accepted} accepted ({expanded} with added dimensions), \
         {violated} refused (flow dependence), {unmappable} without mapping"
    );
    assert!(accepted * 4 >= n, "{accepted} of {n}");
    assert!(expanded > 0);
}
