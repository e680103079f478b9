//! The LMAD operations and builder against brute-force enumeration of
//! offsets. Exact results must equal the enumerated set, inexact ones be
//! supersets, decided containment and emptiness answers must be true.
//!
//! Cases: 2,000 of each kind by default (ARRAYFLOW_CASES sets the number):
//! constant LMAD pairs and lists, LMADs symbolic in one parameter N checked
//! at N = -2..=6, and random loop nests (rectangular, triangular, steps,
//! guards, one or two dimensions, extents in N) whose regions are compared
//! with the offsets their loops touch.

use arrayflow::diagnostics::FileId;
use arrayflow::model::{ParamId, Var};
use arrayflow::regions::build::{self, Section};
use arrayflow::regions::{ops, Dim, Lmad, Poly};
use std::collections::BTreeSet;

#[path = "support/gen.rs"]
#[allow(dead_code)]
mod gen;
use gen::Rng;

fn cases() -> usize {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

const N: Var = Var::Param(ParamId(0));

/// The offsets an LMAD stands for, straight from the definition: every
/// `τ + Σ k_d·δ_d` with `0 ≤ k_d·|δ_d| ≤ σ_d`, nothing when a span or a
/// condition is negative (no normalisation involved).
fn raw(l: &Lmad, n: i64) -> BTreeSet<i64> {
    let ev = |p: &Poly| p.eval(&|_| n).expect("small");
    let mut out = BTreeSet::new();
    if l.when.iter().any(|w| ev(w) < 0) {
        return out;
    }
    let mut cur = vec![ev(&l.base)];
    for d in &l.dims {
        let (s, sp) = (ev(&d.stride), ev(&d.span));
        if sp < 0 {
            return out;
        }
        let mut next = Vec::new();
        for &c in &cur {
            let mut k = 0;
            loop {
                next.push(c + k * s);
                k += 1;
                if s == 0 || k * s.abs() > sp {
                    break;
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        cur = next;
    }
    out.extend(cur);
    out
}

fn random_const(r: &mut Rng) -> Lmad {
    let dims = (0..r.range(0, 3))
        .map(|_| {
            let mut s = r.range(-4, 6);
            if s == 0 && r.percent(80) {
                s = 1;
            }
            Dim::consts(s, r.range(0, 14))
        })
        .collect();
    Lmad::new(Poly::constant(r.range(-5, 20)), dims)
}

fn lin(a: i64, b: i64) -> Poly {
    Poly::constant(a)
        .add(&Poly::var(N).scale(b).unwrap())
        .unwrap()
}

fn random_symbolic(r: &mut Rng) -> Lmad {
    let dims = (0..r.range(1, 3))
        .map(|_| {
            let s = r.range(1, 4);
            let span = if r.percent(60) {
                lin(r.range(-1, 3), r.range(0, 2)).scale(s).unwrap()
            } else {
                lin(r.range(-2, 8), r.range(0, 3))
            };
            Dim::new(Poly::constant(s), span)
        })
        .collect();
    let mut l = Lmad::new(lin(r.range(-3, 10), r.range(-1, 2)), dims);
    if r.percent(40) {
        l.when.push(lin(r.range(-2, 1), 1));
    }
    l
}

/// A second LMAD related to `a` so that unions and containment fire.
fn related(r: &mut Rng, a: &Lmad, symbolic: bool) -> Lmad {
    let a = a.normalize();
    match r.range(0, 4) {
        0 if symbolic => random_symbolic(r),
        0 => random_const(r),
        1 | 2 if !a.dims.is_empty() => {
            let mut b = a.clone();
            let k = r.range(0, b.dims.len() as i64 - 1) as usize;
            let s = b.dims[k].stride.clone();
            b.base = b.base.add(&s.scale(r.range(-3, 4)).unwrap()).unwrap();
            if r.percent(50) {
                b.dims[k].span = b.dims[k]
                    .span
                    .add(&s.scale(r.range(-2, 3)).unwrap())
                    .unwrap();
            }
            b
        }
        3 if !a.dims.is_empty() => {
            let k = r.range(0, a.dims.len() as i64 - 1) as usize;
            let parts = ops::interleave(&a, k, r.range(1, 4));
            match parts {
                Some(p) => p[r.range(0, p.len() as i64 - 1) as usize].clone(),
                None => a.clone(),
            }
        }
        _ => {
            let mut b = a.clone();
            b.base = b.base.add_const(r.range(-2, 2)).unwrap();
            b
        }
    }
}

fn values(symbolic: bool) -> Vec<i64> {
    if symbolic {
        (-2..=6).collect()
    } else {
        vec![0]
    }
}

fn check_ops(r: &mut Rng, symbolic: bool) -> [usize; 4] {
    let a = if symbolic {
        random_symbolic(r)
    } else {
        random_const(r)
    };
    let b = related(r, &a, symbolic);
    let mut fired = [0usize; 4];
    let ns = values(symbolic);
    let norm = a.normalize();
    let co = ops::coalesce(&a);
    for &n in &ns {
        assert_eq!(raw(&norm, n), raw(&a, n), "normalize {a:?} at {n}");
        assert_eq!(raw(&co, n), raw(&a, n), "coalesce {a:?} -> {co:?} at {n}");
    }
    for k in 0..norm.dims.len() {
        for m in 1..=4 {
            if let Some(parts) = ops::interleave(&norm, k, m) {
                fired[0] += 1;
                for &n in &ns {
                    let u: BTreeSet<i64> = parts.iter().flat_map(|p| raw(p, n)).collect();
                    assert_eq!(
                        u,
                        raw(&a, n),
                        "interleave {a:?} dim {k} n {m} at {n}: {parts:?}"
                    );
                }
            }
        }
    }
    if let Some(u) = ops::union(&a, &b) {
        fired[1] += 1;
        assert!(u.exact);
        for &n in &ns {
            let want: BTreeSet<i64> = raw(&a, n).union(&raw(&b, n)).copied().collect();
            assert_eq!(raw(&u, n), want, "union {a:?} ∪ {b:?} = {u:?} at {n}");
        }
    }
    let contains = ops::contains(&a, &b);
    let disjoint = ops::disjoint(&a, &b);
    if !symbolic {
        assert!(contains.is_some() && disjoint.is_some(), "{a:?} {b:?}");
    }
    for &n in &ns {
        let (ra, rb) = (raw(&a, n), raw(&b, n));
        if let Some(x) = contains {
            assert_eq!(x, rb.is_subset(&ra), "contains {a:?} ⊇ {b:?} at {n}");
        }
        if let Some(x) = disjoint {
            assert_eq!(x, ra.is_disjoint(&rb), "disjoint {a:?} {b:?} at {n}");
        }
    }
    fired[2] += usize::from(contains.is_some());
    fired[3] += usize::from(disjoint.is_some());
    // Aggregation of a few related LMADs, with and without the hull.
    let mut list = vec![a.clone(), b];
    for _ in 0..r.range(0, 2) {
        let x = related(r, &a, symbolic);
        list.push(x);
    }
    let hull = r.percent(50);
    let (ls, exact) = ops::aggregate(&list, hull);
    for &n in &ns {
        let want: BTreeSet<i64> = list.iter().flat_map(|l| raw(l, n)).collect();
        let got: BTreeSet<i64> = ls.iter().flat_map(|l| raw(l, n)).collect();
        if exact {
            assert_eq!(got, want, "aggregate {list:?} = {ls:?} at {n}");
        } else {
            assert!(
                got.is_superset(&want),
                "aggregate {list:?} ⊉ at {n}: {ls:?}"
            );
        }
    }
    if let Some(h) = ops::hull(&list) {
        for &n in &ns {
            let want: BTreeSet<i64> = list.iter().flat_map(|l| raw(l, n)).collect();
            assert!(
                raw(&h, n).is_superset(&want),
                "hull {list:?} = {h:?} at {n}"
            );
        }
    }
    fired
}

#[test]
fn constant_operations_match_enumeration() {
    let mut r = Rng::new(19);
    let mut fired = [0; 4];
    for _ in 0..cases() {
        let f = check_ops(&mut r, false);
        (0..4).for_each(|i| fired[i] += f[i]);
    }
    // The generator must exercise every operation, not only the declines.
    assert!(fired.iter().all(|&f| f > cases() / 20), "{fired:?}");
}

#[test]
fn symbolic_operations_hold_at_every_value() {
    let mut r = Rng::new(1998);
    let mut fired = [0; 4];
    for _ in 0..cases() {
        let f = check_ops(&mut r, true);
        (0..4).for_each(|i| fired[i] += f[i]);
    }
    assert!(fired[0] > 0 && fired[1] > 0, "{fired:?}");
}

/// A subscript: coefficients per counter, of N, and the constant.
type Sub = (Vec<i64>, i64, i64);

/// A random loop nest: its text and what the oracle needs.
struct Nest {
    text: String,
    /// Per loop: (lower, upper, step) as functions of N and outer counters.
    loops: Vec<(Bnd, Bnd, i64)>,
    extents: Vec<Bnd>,
    /// Per statement: subscripts (coefficients per counter, of N, constant),
    /// whether it writes, whether it is guarded by `i0 + ... <= N`.
    stmts: Vec<(Vec<Sub>, bool, bool)>,
}

/// `c + n·N + Σ k·counter`.
#[derive(Clone)]
struct Bnd {
    c: i64,
    n: i64,
    k: Vec<i64>,
}

impl Bnd {
    fn eval(&self, n: i64, it: &[i64]) -> i64 {
        self.c + self.n * n + self.k.iter().zip(it).map(|(a, b)| a * b).sum::<i64>()
    }
    fn text(&self, names: &[&str]) -> String {
        let mut s = format!("{}", self.c);
        if self.n != 0 {
            s += &format!(" + {} * N", self.n);
        }
        for (k, name) in self.k.iter().zip(names) {
            if *k != 0 {
                s += &format!(" + {k} * {name}");
            }
        }
        s
    }
}

const NAMES: [&str; 3] = ["i", "j", "k"];

fn random_nest(r: &mut Rng) -> Nest {
    let depth = r.range(1, 3) as usize;
    let mut loops = Vec::new();
    let mut text = String::from("param N = 3;\n");
    let dims = r.range(1, 2) as usize;
    let extents: Vec<Bnd> = (0..dims)
        .map(|_| Bnd {
            c: r.range(2, 6),
            n: r.range(0, 1),
            k: vec![],
        })
        .collect();
    let ranges: Vec<String> = extents
        .iter()
        .map(|e| format!("0..{}", e.text(&[])))
        .collect();
    text += &format!("real A[{}];\n", ranges.join(", "));
    for d in 0..depth {
        let mut k = vec![0; d];
        let lo = if d > 0 && r.percent(30) {
            k[d - 1] = 1;
            Bnd {
                c: 0,
                n: 0,
                k: k.clone(),
            }
        } else {
            Bnd {
                c: r.range(-1, 2),
                n: 0,
                k: vec![0; d],
            }
        };
        let mut k = vec![0; d];
        let hi = if d > 0 && r.percent(30) {
            k[d - 1] = 1;
            Bnd {
                c: r.range(0, 2),
                n: 0,
                k,
            }
        } else {
            Bnd {
                c: r.range(-1, 3),
                n: r.range(0, 1),
                k,
            }
        };
        let step = if r.percent(25) { r.range(2, 3) } else { 1 };
        text += &format!(
            "{}for {} = {} to {}{} do\n",
            "  ".repeat(d),
            NAMES[d],
            lo.text(&NAMES),
            hi.text(&NAMES),
            if step > 1 {
                format!(" step {step}")
            } else {
                String::new()
            }
        );
        loops.push((lo, hi, step));
    }
    let mut stmts = Vec::new();
    for w in [true, false] {
        let subs: Vec<Sub> = (0..dims)
            .map(|_| {
                (
                    (0..depth).map(|_| r.range(-2, 2)).collect(),
                    r.range(0, 1),
                    r.range(-2, 4),
                )
            })
            .collect();
        let guarded = r.percent(20);
        let sub_text: Vec<String> = subs
            .iter()
            .map(|(k, n, c)| {
                Bnd {
                    c: *c,
                    n: *n,
                    k: k.clone(),
                }
                .text(&NAMES)
            })
            .collect();
        let pad = "  ".repeat(depth);
        let access = format!("A[{}]", sub_text.join(", "));
        let stmt = if w {
            format!("{access} = 1;")
        } else {
            format!("use({access});")
        };
        if guarded {
            let sum: Vec<&str> = NAMES[..depth].to_vec();
            text += &format!(
                "{pad}if {} <= N then\n{pad}  {stmt}\n{pad}end\n",
                sum.join(" + ")
            );
        } else {
            text += &format!("{pad}{stmt}\n");
        }
        stmts.push((subs, w, guarded));
    }
    for d in (0..depth).rev() {
        text += &format!("{}end\n", "  ".repeat(d));
    }
    Nest {
        text,
        loops,
        extents,
        stmts,
    }
}

/// Every iteration vector of loops `from..` with the outer ones fixed.
fn iterations(nest: &Nest, n: i64, outer: &[i64], out: &mut Vec<Vec<i64>>) {
    let d = outer.len();
    if d == nest.loops.len() {
        out.push(outer.to_vec());
        return;
    }
    let (lo, hi, step) = &nest.loops[d];
    let (lo, hi) = (lo.eval(n, outer), hi.eval(n, outer));
    let mut v = lo;
    while v <= hi {
        let mut it = outer.to_vec();
        it.push(v);
        iterations(nest, n, &it, out);
        v += step;
    }
}

/// The offsets statement `s` touches in the loops below `outer`
/// (row-major over the extents at N = n); with `in_range`, only those of
/// cells inside the declared bounds (a whole-array fallback covers only
/// those).
fn touched(nest: &Nest, s: usize, n: i64, outer: &[i64], in_range: bool) -> BTreeSet<i64> {
    let mut its = Vec::new();
    iterations(nest, n, outer, &mut its);
    let ext: Vec<i64> = nest.extents.iter().map(|e| e.eval(n, &[]) + 1).collect();
    let (subs, _, guarded) = &nest.stmts[s];
    let mut out = BTreeSet::new();
    for it in its {
        if *guarded && it.iter().sum::<i64>() > n {
            continue;
        }
        let mut off = 0;
        let mut inside = true;
        for (d, (k, kn, c)) in subs.iter().enumerate() {
            let v = c + kn * n + k.iter().zip(&it).map(|(a, b)| a * b).sum::<i64>();
            inside &= (0..ext[d]).contains(&v);
            off = off * ext[d] + v;
        }
        if inside || !in_range {
            out.insert(off);
        }
    }
    out
}

fn offsets_at(ls: &[Lmad], n: i64, counters: &[i64]) -> BTreeSet<i64> {
    ls.iter()
        .flat_map(|l| {
            let c = l
                .eval(&|v| match v {
                    Var::Param(_) => n,
                    Var::Counter(c) => counters[c.index()],
                })
                .expect("small");
            raw(&c, n)
        })
        .collect()
}

#[test]
fn builder_regions_match_the_loops() {
    let mut r = Rng::new(2026);
    let (mut exact_seen, mut inexact_seen) = (0, 0);
    for case in 0..cases() {
        let nest = random_nest(&mut r);
        let (p, diags) = arrayflow::lower::compile(&nest.text, FileId(0));
        let p = p.unwrap_or_else(|| panic!("{}\n{diags:?}", nest.text));
        let fixed = case % 2 == 0;
        let n = r.range(0, 4);
        let secs = build::regions(&p, &|v| match v {
            Var::Param(_) if fixed => Some(n),
            _ => None,
        });
        // Sections come innermost outward: loop d's section is number depth-1-d,
        // the program's last.
        let depth = nest.loops.len();
        for (si, sec) in secs.iter().enumerate() {
            let d = match sec.section {
                Section::Loop { .. } => depth - 1 - si,
                Section::Program => 0,
            };
            let mut outers = Vec::new();
            let mut all = Vec::new();
            iterations(
                &Nest {
                    loops: nest.loops[..d].to_vec(),
                    ..clone_nest(&nest)
                },
                n,
                &[],
                &mut all,
            );
            outers.extend(all);
            let Some(a) = sec.arrays.first() else {
                continue;
            };
            for outer in &outers {
                let mut counters = vec![0; p.counters.len()];
                counters[..outer.len()].copy_from_slice(outer);
                let write = touched(&nest, 0, n, outer, false);
                let read = touched(&nest, 1, n, outer, false);
                for (region, want, must, s) in [
                    (&a.write, &write, false, 0),
                    (&a.read, &read, false, 1),
                    (&a.must_write, &write, true, 0),
                ] {
                    let got = offsets_at(&region.lmads, n, &counters);
                    if must {
                        assert!(
                            got.is_subset(want),
                            "must-write {got:?} ⊄ {want:?}\n{}",
                            nest.text
                        );
                        if !nest.stmts[0].2 && a.write.exact {
                            assert_eq!(&got, want, "must-write\n{}", nest.text);
                        }
                    } else if region.exact {
                        exact_seen += 1;
                        assert_eq!(
                            &got, want,
                            "exact region at N={n} outer {outer:?}: {:?}\n{}",
                            region.lmads, nest.text
                        );
                    } else {
                        inexact_seen += 1;
                        let want = &touched(&nest, s, n, outer, true);
                        assert!(
                            got.is_superset(want),
                            "region at N={n} outer {outer:?}: {:?}\n{}",
                            region.lmads,
                            nest.text
                        );
                    }
                }
            }
        }
    }
    assert!(
        exact_seen > 0 && inexact_seen > 0,
        "{exact_seen} {inexact_seen}"
    );
}

fn clone_nest(n: &Nest) -> Nest {
    Nest {
        text: String::new(),
        loops: n.loops.clone(),
        extents: n.extents.clone(),
        stmts: vec![],
    }
}
