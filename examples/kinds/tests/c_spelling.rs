//! The C spellings (src/c.rs) against an independent reading of the same C:
//! generated kernels with `memset`/`memcpy` and arrays declared in loop
//! bodies, each also written element by element (a `for` loop of plain
//! assignments per call, and one writing every cell of a local array where
//! its block ends), which the core kinds analyse with no spelling at all.
//! σ of every read must be the same, up to the extra counter `t` of the
//! element loops: a section is one instance where the loop has many.
//! ARRAYFLOW_CASES kernels (default 200).

use arrayflow::dataflow::{analyze_with, Config, Flow};
use arrayflow::diagnostics::FileId;
use arrayflow::hash::SplitMix64;
use arrayflow::kinds::Kinds;
use arrayflow::model::Program;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

fn cases() -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// Decisions from the seed, reproducible.
type Mix = SplitMix64;

/// `0 .. n - 1`.
fn int(r: &mut Mix, n: i64) -> i64 {
    r.below(n as u64) as i64
}

/// Columns of `A` and `B` (rows are `0..=N`); `T` has [`LOCAL`] cells.
const COLS: i64 = 6;
const LOCAL: i64 = 4;

/// One kernel, twice: with the calls (`.0`) and element by element (`.1`).
/// Labels are shared, so sites match by name.
fn kernel(seed: u64) -> (String, String) {
    let mut r = Mix::new(seed);
    let head = format!(
        "void memset(); void memcpy();\n#define N {}\ndouble A[N + 1][{COLS}];\ndouble B[N + 1][{COLS}];\n\nvoid k(void) {{\n",
        1 + int(&mut r, 3)
    );
    let (mut calls, mut elems) = (head.clone(), head);
    let mut label = 0;
    for nest in 0..1 + r.below(3) {
        // One local array per loop body, named apart, so that its end's
        // label (`T1_end`) is the same in both versions.
        let t = format!("T{nest}");
        let in_loop = r.below(4) != 0;
        let local = in_loop && r.below(2) == 0;
        let row = |r: &mut Mix| {
            if in_loop && r.below(3) != 0 {
                "i".to_string()
            } else {
                int(r, 2).to_string()
            }
        };
        let mut c = String::new();
        let mut e = String::new();
        let ind = if in_loop { "    " } else { "  " };
        if in_loop {
            let open = "  for (int i = 0; i <= N; i++) {\n";
            c.push_str(open);
            e.push_str(open);
            if local {
                let decl = format!("    double {t}[{LOCAL}];\n");
                c.push_str(&decl);
                e.push_str(&decl);
            }
        }
        for _ in 0..1 + r.below(4) {
            label += 1;
            let (x, y) = if r.below(2) == 0 {
                ("A", "B")
            } else {
                ("B", "A")
            };
            match r.below(if local { 5 } else { 4 }) {
                0 => {
                    let (lo, n) = section(&mut r);
                    let dst = row(&mut r);
                    let _ = writeln!(
                        c,
                        "{ind}S{label}: memset(&{x}[{dst}][{lo}], 0, {n} * sizeof(double));"
                    );
                    let _ = writeln!(
                        e,
                        "{ind}for (int t = 0; t < {n}; t++) S{label}: {x}[{dst}][{lo} + t] = 0;"
                    );
                }
                1 => {
                    let (lo, n) = section(&mut r);
                    let lo2 = int(&mut r, COLS - n + 1);
                    let (dst, src) = (row(&mut r), row(&mut r));
                    let _ = writeln!(
                        c,
                        "{ind}S{label}: memcpy({x}[{dst}] + {lo}, &{y}[{src}][{lo2}], sizeof(double) * {n});"
                    );
                    let _ = writeln!(
                        e,
                        "{ind}for (int t = 0; t < {n}; t++) S{label}: {x}[{dst}][{lo} + t] = {y}[{src}][{lo2} + t];"
                    );
                }
                4 => {
                    // Through the local array.
                    let (k, m) = (int(&mut r, LOCAL), int(&mut r, LOCAL));
                    let (a, b) = (row(&mut r), int(&mut r, COLS));
                    let s = if r.below(2) == 0 {
                        format!("{ind}S{label}: {t}[{k}] = {x}[{a}][{b}];\n")
                    } else {
                        format!("{ind}S{label}: {x}[{a}][{b}] = {t}[{m}] + {t}[{k}];\n")
                    };
                    c.push_str(&s);
                    e.push_str(&s);
                }
                _ => {
                    let (a, b, d) = (row(&mut r), int(&mut r, COLS), int(&mut r, COLS));
                    let s = format!(
                        "{ind}S{label}: {x}[{a}][{b}] = {y}[{}][{d}] + {x}[{}][{}];\n",
                        row(&mut r),
                        row(&mut r),
                        int(&mut r, COLS)
                    );
                    c.push_str(&s);
                    e.push_str(&s);
                }
            }
        }
        if in_loop {
            if local {
                let _ = writeln!(
                    e,
                    "    for (int t = 0; t < {LOCAL}; t++) {t}_end: {t}[t] = 0;"
                );
            }
            c.push_str("  }\n");
            e.push_str("  }\n");
        }
        calls.push_str(&c);
        elems.push_str(&e);
    }
    calls.push_str("}\n");
    elems.push_str("}\n");
    (calls, elems)
}

/// A section `lo .. lo + n - 1` of a row, `n >= 1`.
fn section(r: &mut Mix) -> (i64, i64) {
    let n = 1 + int(r, COLS);
    (int(r, COLS - n + 1), n)
}

fn compile(text: &str, kinds: &Kinds, seed: u64) -> Program {
    let path = std::path::Path::new("kernel.c");
    let (program, diags) = arrayflow::db::compile_kinds(path, text, FileId(0), kinds);
    program.unwrap_or_else(|| panic!("seed {seed}: {diags:?}\n{text}"))
}

/// σ by (site name, the read's iteration without `t`, access), each a set
/// of (source name, its iteration without `t`) and whether the initial
/// value may be read.
type Seen = BTreeMap<(String, Vec<i64>, usize), (BTreeSet<(String, Vec<i64>)>, bool)>;

fn seen(flow: &Flow, depth: impl Fn(&str) -> usize) -> Seen {
    let mut out = Seen::new();
    for r in flow.iter() {
        let name = flow.site_name(r.site()).to_string();
        let it = r.iter()[..depth(&name).min(r.iter().len())].to_vec();
        let e = out.entry((name, it, r.access())).or_default();
        e.1 |= r.initial();
        for (s, w) in r.writes() {
            let name = flow.site_name(s).to_string();
            let w = w[..depth(&name).min(w.len())].to_vec();
            e.0.insert((name, w));
        }
    }
    out
}

#[test]
fn c_spellings_agree_with_the_same_c_written_element_by_element() {
    let kinds = arrayflow_kinds::kinds();
    let (mut sections, mut ends) = (0, 0);
    for seed in 0..cases() {
        let (calls, elems) = kernel(seed);
        let spelled = compile(&calls, &kinds, seed);
        let plain = compile(&elems, &Kinds::core(), seed);
        let text = arrayflow::print::program(&spelled);
        sections += text.matches("@section").count();
        ends += text.matches("@dead").count();
        assert!(
            !text.contains("__") && !text.contains("memset") && !text.contains("memcpy"),
            "seed {seed}: a call was not spelled\n{text}"
        );
        let config = Config::default();
        let a = analyze_with(&spelled, &config, &kinds).expect("spelled σ");
        let b = analyze_with(&plain, &config, &Kinds::core()).expect("element-wise σ");
        // Statements of the element loops sit one counter deeper: their
        // iterations are cut to the depth the spelled ones have.
        let mut depth = BTreeMap::new();
        for r in a.iter() {
            depth.insert(a.site_name(r.site()).to_string(), r.iter().len());
            for (s, w) in r.writes() {
                depth.insert(a.site_name(s).to_string(), w.len());
            }
        }
        let at = |n: &str| depth.get(n).copied().unwrap_or(usize::MAX);
        let got = seen(&a, at);
        let want = seen(&b, at);
        assert_eq!(got, want, "seed {seed}:\n{calls}\n{elems}\n{text}");
    }
    // The kernels do exercise both spellings.
    assert!(
        sections as u64 >= cases() && ends as u64 >= cases() / 8,
        "{sections} sections, {ends} lifetime ends"
    );
}
