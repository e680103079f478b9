//! σ on generated kernels: read-access instances per second, peak memory per
//! access instance (a counting global allocator), and a direct baseline (a
//! simulation in program order with a last-writer table, exact for must-only
//! programs without unknown conditions).
//!
//! `cargo bench --bench dataflow` runs criterion timings, then prints a table
//! of figures. `ARRAYFLOW_BENCH_QUICK=1` skips criterion and prints the table
//! only (one timed run per kernel); `ARRAYFLOW_BENCH_ONLY=matmul` keeps the
//! kernels whose name contains the text.

#[allow(dead_code)]
#[path = "../tests/kernels/mod.rs"]
mod kernels;

use arrayflow::dataflow::{analyze, Config};
use arrayflow::model::{Node, Program, Var};
use kernels::{example3, jacobi, matmul, while_kernel};
use std::sync::atomic::Ordering;
use support::{cpu_time as time, CURRENT, PEAK};

#[allow(dead_code)]
mod support;

/// The direct baseline: every operation in program order, each read looked
/// up in a dense last-writer table, its source recorded. Only for-loops and
/// affine accesses inside the declared ranges (must-only kernels, where it is
/// exact). Returns the sources, one per read (u32::MAX: the initial value).
fn baseline(program: &Program, params: &[i64]) -> Vec<u32> {
    struct Sim<'a> {
        params: &'a [i64],
        counters: Vec<i64>,
        layout: Vec<(usize, Vec<(i64, i64)>)>,
        last: Vec<u32>,
        op: u32,
        out: Vec<u32>,
    }
    impl Sim<'_> {
        fn eval(&self, f: &arrayflow::model::Affine) -> i64 {
            f.eval(|v| match v {
                Var::Param(p) => self.params[p.index()],
                Var::Counter(c) => self.counters[c.index()],
            })
            .unwrap_or(0)
        }
        fn cell(&self, a: &arrayflow::model::Access) -> usize {
            let (base, dims) = &self.layout[a.array.index()];
            let mut lin = 0usize;
            for (s, &(lo, ext)) in a.subscripts.iter().zip(dims) {
                let v = s.affine.as_ref().map_or(lo, |f| self.eval(f));
                lin = lin * ext as usize + (v - lo) as usize;
            }
            base + lin
        }
        fn block(&mut self, nodes: &[Node]) {
            for n in nodes {
                match n {
                    Node::For(f) => {
                        let (lo, hi) = (self.eval(&f.lower.affine), self.eval(&f.upper.affine));
                        let mut v = lo;
                        while v <= hi {
                            self.counters[f.counter.index()] = v;
                            self.block(&f.body);
                            v += f.step;
                        }
                    }
                    Node::Stmt(s) => {
                        let mut write = None;
                        for a in s.accesses() {
                            let cell = self.cell(a.access);
                            if a.kind.reads() {
                                self.out.push(self.last[cell]);
                            }
                            if a.kind.writes() {
                                write = Some(cell);
                            }
                        }
                        if let Some(cell) = write {
                            self.last[cell] = self.op;
                        }
                        self.op += 1;
                    }
                    Node::While(_) | Node::If(_) => {}
                }
            }
        }
    }
    let mut layout = Vec::new();
    let mut total = 0usize;
    for a in &program.arrays {
        let ev = |b: &arrayflow::model::Bound| {
            b.affine
                .eval(|v| match v {
                    Var::Param(p) => params[p.index()],
                    Var::Counter(_) => 0,
                })
                .unwrap_or(0)
        };
        let dims: Vec<(i64, i64)> = a
            .dims
            .iter()
            .map(|r| (ev(&r.lo), (ev(&r.hi) - ev(&r.lo) + 1).max(0)))
            .collect();
        let size: i64 = dims.iter().map(|d| d.1).product();
        layout.push((total, dims));
        total += size as usize;
    }
    let mut sim = Sim {
        params,
        counters: vec![0; program.counters.len()],
        layout,
        last: vec![u32::MAX; total],
        op: 0,
        out: Vec::new(),
    };
    sim.block(&program.body);
    sim.out
}

struct Kernel {
    name: String,
    program: Program,
    config: Config,
    /// The baseline applies (must-only, no unknown conditions).
    exact: bool,
}

fn kernels() -> Vec<Kernel> {
    let cfg = |ps: &[(&str, i64)]| Config {
        params: ps.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        max_trips: 4,
        max_instances: 200_000_000,
        max_memory: u64::MAX,
    };
    let mut out = Vec::new();
    for n in [64, 128, 256] {
        out.push(Kernel {
            name: format!("matmul N={n}"),
            program: matmul(),
            config: cfg(&[("N", n)]),
            exact: true,
        });
    }
    out.push(Kernel {
        name: "jacobi-2d N=256 T=20".to_string(),
        program: jacobi(),
        config: cfg(&[("N", 256), ("T", 20)]),
        exact: true,
    });
    out.push(Kernel {
        name: "while N=1000 M=64 trips=4".to_string(),
        program: while_kernel(),
        config: cfg(&[("N", 1000), ("M", 64)]),
        exact: false,
    });
    out.push(Kernel {
        name: "non-affine (example 3) N=1000".to_string(),
        program: example3(),
        config: cfg(&[("N", 1000)]),
        exact: false,
    });
    out
}

fn figures(kernels: &[Kernel]) {
    println!(
        "\n| benchmark | access inst. | read inst. | CPU time | read inst./s | peak B/access inst. | baseline CPU time | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for k in kernels {
        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let (flow, t) = time(|| analyze(&k.program, &k.config).expect("analysis"));
        let peak = PEAK.load(Ordering::Relaxed) - before;
        let st = flow.stats();
        drop(flow);
        let rate = st.read_instances as f64 / t.as_secs_f64();
        let per = peak as f64 / st.access_instances.max(1) as f64;
        let (base, ratio) = if k.exact {
            let values = k.program.param_values(&k.config.params).expect("sizes");
            let (out, bt) = time(|| baseline(&k.program, &values));
            assert_eq!(
                out.len() as u64,
                st.read_instances,
                "baseline counts the same reads"
            );
            (
                format!("{:.3} s", bt.as_secs_f64()),
                format!("{:.2}x", t.as_secs_f64() / bt.as_secs_f64()),
            )
        } else {
            ("n/a".to_string(), "n/a".to_string())
        };
        println!(
            "| {} | {} | {} | {:.3} s | {:.2} M/s | {:.1} | {} | {} |",
            k.name,
            st.access_instances,
            st.read_instances,
            t.as_secs_f64(),
            rate / 1e6,
            per,
            base,
            ratio
        );
    }
}

fn main() {
    // ARRAYFLOW_BENCH_ONLY=text keeps the kernels whose name contains it.
    let only = std::env::var("ARRAYFLOW_BENCH_ONLY").unwrap_or_default();
    let kernels: Vec<Kernel> = kernels()
        .into_iter()
        .filter(|k| k.name.contains(&only))
        .collect();
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("dataflow");
        for k in &kernels {
            if k.name.contains("N=256") && k.name.starts_with("matmul") {
                continue; // timed once in the table: one run takes seconds
            }
            g.bench_function(&k.name, |b| {
                b.iter(|| analyze(&k.program, &k.config).expect("analysis"))
            });
        }
        g.finish();
    }
    figures(&kernels);
}
