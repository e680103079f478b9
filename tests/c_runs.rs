//! The C that arrayflow prints, compiled with `cc -fopenmp` and RUN on two
//! threads against the original printed the same way: the privatized
//! program (`privatize --emit code`, `doall` loops as `#pragma omp parallel
//! for`) and the expanded one (`expand --emit code`). Both functions get the
//! same fixed inputs; every array of the original must end bit for bit the
//! same. Needs `cc` with OpenMP (CI has gcc); without it the test fails
//! under CI=true and is skipped with a note elsewhere.

use arrayflow::diagnostics::FileId;
use arrayflow::model::{ElemType, Program};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn have_openmp(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        "#include <omp.h>\nint main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n",
    )
    .unwrap();
    let ok = Command::new("cc")
        .args(["-fopenmp", "-o"])
        .arg(dir.join("probe"))
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(std::env::var("CI").is_err(), "CI needs `cc -fopenmp`");
        eprintln!("note: no `cc -fopenmp` here: the emitted C is not run");
    }
    ok
}

fn parse(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}\n{text}"))
}

fn arrayflow(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("run arrayflow");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Cells of each array of `p` at its parameter defaults.
fn cells(p: &Program) -> Vec<u64> {
    let values = p.param_values(&[]).expect("defaults");
    p.arrays
        .iter()
        .map(|a| {
            a.dims
                .iter()
                .map(|r| {
                    let at = |b: &arrayflow::model::Bound| {
                        b.affine
                            .eval(|v| match v {
                                arrayflow::model::Var::Param(q) => values[q.index()],
                                arrayflow::model::Var::Counter(_) => 0,
                            })
                            .expect("a bound")
                    };
                    (at(&r.hi) - at(&r.lo) + 1).max(0) as u64
                })
                .product::<u64>()
                .max(1)
        })
        .collect()
}

fn ctype(e: ElemType) -> &'static str {
    if e == ElemType::Int {
        "int"
    } else {
        "double"
    }
}

/// `main` running `kernel_a` (the original `a`) and `kernel_b` (`b`) on
/// the same inputs, then comparing every array of `a`.
fn harness(a: &Program, b: &Program) -> String {
    harness_of(a, b, None)
}

/// As [`harness`], comparing only the arrays `live_out` names when given
/// (the others are temporaries `b` may lay out in other storage).
fn harness_of(a: &Program, b: &Program, live_out: Option<&[&str]>) -> String {
    let mut m = String::from("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nvoid kernel_a();\nvoid kernel_b();\n/* `...`: one value whatever the order threads ask in. */\ndouble unknown(void) { return 0.5; }\nint unknown_cond(void) { return 1; }\n\nint main(void) {\n");
    let args = |p: &Program, side: &str, m: &mut String| {
        let mut list: Vec<String> = p
            .params
            .iter()
            .map(|q| q.default.unwrap_or(0).to_string())
            .collect();
        // Locals of the region are declared inside the function.
        for (k, (arr, n)) in p.arrays.iter().zip(cells(p)).enumerate() {
            if arr.local {
                continue;
            }
            let t = ctype(arr.elem);
            let name = format!("{side}{k}");
            let _ = writeln!(m, "  {t} *{name} = calloc({n}, sizeof({t}));");
            // Inputs from the array's name and cell: the same on both sides.
            let seed: u64 = arr
                .name
                .bytes()
                .fold(7u64, |h, c| h.wrapping_mul(31).wrapping_add(c as u64))
                % 997;
            let _ = writeln!(
                m,
                "  for (long c = 0; c < {n}; c++) {name}[c] = ({t})((c * 37 + {seed}) % 101) / 4 + 1;"
            );
            list.push(name);
        }
        list
    };
    let la = args(a, "a", &mut m);
    let lb = args(b, "b", &mut m);
    let _ = writeln!(
        m,
        "  kernel_a({});\n  kernel_b({});",
        la.join(", "),
        lb.join(", ")
    );
    for (k, (arr, n)) in a.arrays.iter().zip(cells(a)).enumerate() {
        if arr.local || live_out.is_some_and(|l| !l.contains(&arr.name.as_str())) {
            continue;
        }
        let kb = b.array(&arr.name).expect("B keeps A's arrays").index();
        let t = ctype(arr.elem);
        let _ = writeln!(
            m,
            "  if (memcmp(a{k}, b{kb}, {n} * sizeof({t})) != 0) {{ printf(\"differ {}\\n\"); return 1; }}",
            arr.name
        );
    }
    m.push_str("  printf(\"same\\n\");\n  return 0;\n}\n");
    m
}

/// Compiles `a` and `b` as C with OpenMP and runs them on two threads.
fn run_both(dir: &Path, name: &str, a: &Program, b: &Program) -> String {
    run_text(
        dir,
        name,
        a,
        &arrayflow::cfront::emit::program(b, "kernel_b"),
        b,
    )
}

/// Compiles the original `a` (printed as C) and the C text `b` (defining
/// `kernel_b` with the parameters of `b_model`'s arrays), and runs them on
/// two threads.
fn run_text(dir: &Path, name: &str, a: &Program, b: &str, b_model: &Program) -> String {
    run_files(dir, name, a, b, harness(a, b_model))
}

/// Compiles `a` (printed as C), the C text `b` and the `main` text, and
/// runs them on two threads.
fn run_files(dir: &Path, name: &str, a: &Program, b: &str, main: String) -> String {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let files = sources(&d, a, b, main);
    compile_and_run(&d, name, &files)
}

/// `a` printed as C (`kernel_a`), the C text `b` and the `main` text,
/// written into `d`.
fn sources(d: &Path, a: &Program, b: &str, main: String) -> Vec<PathBuf> {
    [
        ("a.c", arrayflow::cfront::emit::program(a, "kernel_a")),
        ("b.c", b.to_string()),
        ("main.c", main),
    ]
    .into_iter()
    .map(|(f, text)| {
        let path = d.join(f);
        std::fs::write(&path, text).unwrap();
        path
    })
    .collect()
}

/// `cc -fopenmp` on `files`, then the program on two threads: its output.
fn compile_and_run(d: &Path, name: &str, files: &[PathBuf]) -> String {
    compile_and_run_at(d, name, files, &[2]).remove(0)
}

/// `cc -fopenmp` on `files`, then the program on each of `threads`
/// threads: its outputs.
fn compile_and_run_at(d: &Path, name: &str, files: &[PathBuf], threads: &[u32]) -> Vec<String> {
    let exe = d.join("run");
    let out = Command::new("cc")
        .args(["-std=gnu99", "-O1", "-fopenmp", "-w", "-o"])
        .arg(&exe)
        .args(files)
        .arg("-lm")
        .output()
        .expect("cc");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (threads.iter())
        .map(|n| {
            let out = Command::new(&exe)
                .env("OMP_NUM_THREADS", n.to_string())
                .output()
                .expect("run");
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect()
}

fn fixture(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn privatized_and_expanded_c_run_like_the_original() {
    // One directory for this test binary's process (nothing else writes it).
    let dir = std::env::temp_dir().join(format!("arrayflow-c-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if !have_openmp(&dir) {
        return;
    }
    let mut ran = 0;
    // Scalars private with a finalization from an earlier iteration.
    let last = "param N = 6;\nreal t;\nreal x;\nreal A[0..N];\nreal B[0..N];\nfor i = 0 to N do\n  if i <= 3 then\n    S1: t = A[i] * 2;\n    S2: B[i] = t + 1;\n  end\nend\nS3: x = t;\n";
    let lastp = dir.join("last.loop");
    std::fs::write(&lastp, last).unwrap();
    for path in [
        fixture("fixtures/papers/maydan-3.8-fig13-subst.loop"),
        fixture("fixtures/papers/maydan-3.8-fig13-variant-subst.loop"),
        lastp.to_string_lossy().into_owned(),
    ] {
        let a = parse(&std::fs::read_to_string(&path).unwrap());
        // Outside what exact σ decides: emitted only when asked.
        let b = parse(&arrayflow(&[
            "privatize",
            "--emit",
            "code",
            "--allow-unproved",
            &path,
        ]));
        assert!(arrayflow::print::program(&b).contains("doall"), "{path}");
        let got = run_both(&dir, &format!("priv{ran}"), &a, &b);
        assert_eq!(got.trim(), "same", "privatized {path}");
        ran += 1;
    }
    for f in [
        "matmul", "jacobi1d", "jacobi2d", "lu", "seidel2d", "trisolve",
    ] {
        let path = fixture(&format!("fixtures/c/kernels/{f}.loop"));
        let a = parse(&std::fs::read_to_string(&path).unwrap());
        let b = parse(&arrayflow(&["expand", "--emit", "code", &path]));
        let got = run_both(&dir, &format!("mse_{f}"), &a, &b);
        assert_eq!(got.trim(), "same", "expanded {f}");
        ran += 1;
    }
    assert_eq!(ran, 9);
    // The comparison sees a difference: R1 changed by one.
    let path = fixture("fixtures/papers/maydan-3.8-fig13-subst.loop");
    let text = std::fs::read_to_string(&path).unwrap();
    let a = parse(&text);
    let wrong = parse(&text.replace("R1: A[i, j] = work[i];", "R1: A[i, j] = work[i] + 1;"));
    assert_eq!(run_both(&dir, "wrong", &a, &wrong).trim(), "differ A");
    std::fs::remove_dir_all(&dir).ok();
}

/// `privatize --emit code` on C: the loop as it was, under `#pragma omp
/// parallel for` with OpenMP's own clauses over local copies (docs/
/// expansion.md §9.3), run on two threads against the sequential original.
/// The clause each fixture needs was worked out by hand (the comments in
/// fixtures/c/privatize/ say why). Cases: 5 fixtures, 3 PolyBench kernels
/// (MINI_DATASET), then one mutation that must be caught.
#[test]
fn openmp_clauses_run_like_the_original() {
    let dir = std::env::temp_dir().join(format!("arrayflow-c-clauses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if !have_openmp(&dir) {
        return;
    }
    // The pragma lines each fixture gets are checked in tests/privatize.rs.
    let cases = ["fig13", "temp", "rowtemp", "copyin", "dead", "local"];
    for name in cases {
        let path = fixture(&format!("fixtures/c/privatize/{name}.c"));
        let (a, d) =
            arrayflow::cfront::compile(&std::fs::read_to_string(&path).unwrap(), FileId(0));
        let a = a.unwrap_or_else(|| panic!("{d:?}"));
        let out = arrayflow(&["privatize", "--emit", "code", "--allow-unproved", &path]);
        assert!(out.contains("private("), "{name}:\n{out}");
        // Clauses only: the signature is the original's.
        assert!(!out.contains("_w["), "{name}: explicit copies\n{out}");
        let b = privatized(&a);
        assert!(b.contains("private("), "{name}:\n{b}");
        assert_eq!(run_c(&dir, name, &a, &b).trim(), "same", "{name}:\n{b}");
    }
    // PolyBench/C at MINI_DATASET, where clauses apply: deriche's scalars,
    // doitgen's `sum`, symm's `temp2` (docs/expansion.md §9.3).
    let o = arrayflow::cfront::preprocess::Options {
        define: vec!["MINI_DATASET".to_string()],
        ..Default::default()
    };
    for (name, clauses) in [("deriche", 4), ("doitgen", 1), ("symm", 1)] {
        let path = fixture(&format!("fixtures/c/polybench/{name}.c"));
        let text = std::fs::read_to_string(&path).unwrap();
        let pre = arrayflow::cfront::preprocess::run(Path::new(&path), text, &o)
            .unwrap_or_else(|e| panic!("{name}: {}", e.for_command()));
        let (a, d) = arrayflow::cfront::compile(&pre.text, FileId(0));
        let a = a.unwrap_or_else(|| panic!("{d:?}"));
        let out = arrayflow(&["privatize", "--emit", "code", &path, "-D", "MINI_DATASET"]);
        let b = privatized(&a);
        // Loops with a clause on a variable of the kernel: a counter the
        // function declares outside its loop (`private(j)`) is not one.
        let counters: Vec<&str> = a.counters.iter().map(|c| c.name.as_str()).collect();
        for text in [&out, &b] {
            let n = (text.lines())
                .filter(|l| privatizes_a_variable(l, &counters))
                .count();
            assert_eq!(n, clauses, "{name}:\n{text}");
        }
        assert_eq!(run_c(&dir, name, &a, &b).trim(), "same", "{name}:\n{b}");
    }
    // Clauses and explicit copies in one function (mixed.c): the emitted
    // signature has the private copies' arrays after the original ones,
    // so the harness passes the printed program's arrays.
    let path = fixture("fixtures/c/privatize/mixed.c");
    let (a, _) = arrayflow::cfront::compile(&std::fs::read_to_string(&path).unwrap(), FileId(0));
    let a = a.unwrap();
    let checked = arrayflow::privatize::emit::checked(&a, &unproved_too()).unwrap();
    let ce = arrayflow::privatize::emit::emit_c(&a, &checked.chosen, "kernel_b").unwrap();
    assert!(ce.text.contains("lastprivate(t_p)") && ce.text.contains("u_w["));
    assert_eq!(
        run_text(&dir, "mixed", &a, &ce.text, &ce.program).trim(),
        "same",
        "{}",
        ce.text
    );
    // Reductions on integers (fixtures/c/reduction/): the same values on
    // two threads; with the wrong operator in the clause, the threads'
    // partial results start from the wrong identity (or, in a maximum
    // written with `if`, the guard never lets a value in).
    for (name, clause, wrong) in [
        ("integer", "reduction(+:s)", "reduction(*:s)"),
        ("triangular", "reduction(+:x_r)", "reduction(*:x_r)"),
        // Written with `if`: a maximum's threads start from the least int.
        ("guarded", "reduction(max:m)", "reduction(min:m)"),
        ("guarded", "reduction(+:pos)", "reduction(*:pos)"),
    ] {
        let path = fixture(&format!("fixtures/c/reduction/{name}.c"));
        let (a, _) =
            arrayflow::cfront::compile(&std::fs::read_to_string(&path).unwrap(), FileId(0));
        let a = a.unwrap();
        let b = privatized(&a);
        assert!(b.contains(clause), "{name}:\n{b}");
        assert_eq!(run_c(&dir, name, &a, &b).trim(), "same", "{name}:\n{b}");
        let bad = b.replace(clause, wrong);
        assert_ne!(
            run_c(&dir, "wrong-op", &a, &bad).trim(),
            "same",
            "{name}:\n{bad}"
        );
    }
    // Without lastprivate, the copy Figure 13's loop writes is lost: the
    // caller sees `work` as it was before the loop.
    let path = fixture("fixtures/c/privatize/fig13.c");
    let (a, _) = arrayflow::cfront::compile(&std::fs::read_to_string(&path).unwrap(), FileId(0));
    let a = a.unwrap();
    let out = privatized(&a).replace(" lastprivate(work_p)", "");
    assert_eq!(run_c(&dir, "no-last", &a, &out).trim(), "differ work");
    std::fs::remove_dir_all(&dir).ok();
}

/// Reductions read by their meaning (fixtures/c/reduction/argmax.c,
/// argmax2d.c, meaning.c): `privatize --emit code`, compiled with `cc
/// -fopenmp` and run on 1, 2 and 4 threads against the sequential
/// original, every array bit for bit the same. The maxima and minima kept
/// with their indices are combined in thread order with the comparison as
/// written; with the other tie rule in the combination (`>=` for `>`, `>`
/// for `>=`), a run on several threads takes another index among equal
/// values.
#[test]
fn reductions_by_meaning_run_like_the_original_at_1_2_4_threads() {
    let dir = std::env::temp_dir().join(format!("arrayflow-c-keyed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if !have_openmp(&dir) {
        return;
    }
    // The function as a kernel of its own: the loop over threads takes
    // the thread count as its first parameter, set to the number OpenMP
    // runs (`privatize --emit code` into the file's own function sets it
    // to `omp_get_max_threads()`).
    let run = |name: &str, a: &Program, b: &Program, text: &str| -> Vec<String> {
        [1, 2, 4]
            .iter()
            .map(|&n| {
                let d = dir.join(format!("{name}-{n}"));
                std::fs::create_dir_all(&d).unwrap();
                let mut b = b.clone();
                for q in &mut b.params {
                    if q.name == "threads" {
                        q.default = Some(n as i64);
                    }
                }
                let files = sources(&d, a, text, harness(a, &b));
                compile_and_run_at(&d, name, &files, &[n]).remove(0)
            })
            .collect()
    };
    let emitted = |a: &Program| {
        let checked = arrayflow::privatize::emit::checked(a, &unproved_too()).unwrap();
        let chosen: Vec<_> = (checked.chosen.iter())
            .chain(&checked.reductions)
            .cloned()
            .collect();
        arrayflow::privatize::emit::emit_c(a, &chosen, "kernel_b").unwrap()
    };
    let compile = |name: &str| {
        let path = fixture(&format!("fixtures/c/reduction/{name}.c"));
        let text = std::fs::read_to_string(&path).unwrap();
        let o = arrayflow::cfront::preprocess::Options::default();
        let pre = arrayflow::cfront::preprocess::run(Path::new(&path), text, &o)
            .unwrap_or_else(|e| panic!("{name}: {}", e.for_command()));
        arrayflow::cfront::compile(&pre.text, FileId(0)).0.unwrap()
    };
    // What each loop gets, worked out by hand in the fixtures' comments.
    for (name, wants) in [
        (
            "argmax",
            &["#pragma omp parallel for\n", "first_p[t_1][0] > first)"][..],
        ),
        (
            "argmax2d",
            &["#pragma omp parallel for\n", "m_p[t_1][0] > m)"][..],
        ),
        (
            "meaning",
            &[
                "reduction(+:dot)",
                "reduction(+:rev)",
                "reduction(+:pos)",
                "reduction(max:hi)",
                "reduction(max:top)",
                "reduction(min:low)",
            ][..],
        ),
    ] {
        let a = compile(name);
        let ce = emitted(&a);
        for w in wants {
            assert!(ce.text.contains(w), "{name}: {w}\n{}", ce.text);
        }
        for (n, got) in [1, 2, 4].iter().zip(run(name, &a, &ce.program, &ce.text)) {
            assert_eq!(got.trim(), "same", "{name} on {n} threads:\n{}", ce.text);
        }
    }
    // The other tie rule in the combination: another index among ties
    // (`pos` holds the indices; the maxima are the same).
    let a = compile("argmax");
    let ce = emitted(&a);
    for (right, wrong) in [
        ("first_p[t_1][0] > first)", "first_p[t_1][0] >= first)"),
        ("last_p[t_1][0] >= last)", "last_p[t_1][0] > last)"),
    ] {
        let bad = ce.text.replace(right, wrong);
        assert_ne!(bad, ce.text);
        let got = run("wrong-tie", &a, &ce.program, &bad);
        assert_eq!(got[0].trim(), "same", "one thread: nothing to combine");
        assert_eq!(got[1].trim(), "differ pos", "{bad}");
        assert_eq!(got[2].trim(), "differ pos", "{bad}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `privatize --emit code` on `a` as a function of its own, `void
/// kernel_b(...)` with the model's signature (the command prints C into the
/// file's own function instead: tests/privatize.rs checks its pragma lines
/// and tests/polybench_c.rs runs those drop-ins in their benchmarks).
/// Whether `line` is an OpenMP `parallel for` with a data-sharing clause
/// (`private`, `firstprivate`, `lastprivate`) naming something other than
/// one of `counters`.
fn privatizes_a_variable(line: &str, counters: &[&str]) -> bool {
    let Some(mut rest) = line.trim().strip_prefix("#pragma omp parallel for") else {
        return false;
    };
    while let Some((clause, after)) = rest.split_once('(') {
        let Some((list, next)) = after.split_once(')') else {
            return false;
        };
        if clause.trim().ends_with("private")
            && list.split(',').any(|v| !counters.contains(&v.trim()))
        {
            return true;
        }
        rest = next;
    }
    false
}

/// Options that emit loops parallel at every sample but not proved (the
/// fixtures outside static control), as `--allow-unproved` does.
fn unproved_too() -> arrayflow::codegen::Options {
    arrayflow::codegen::Options {
        allow_unproved: true,
        ..Default::default()
    }
}

fn privatized(a: &Program) -> String {
    arrayflow::privatize::document::document(a, &unproved_too(), true)
        .unwrap()
        .replace("void kernel(", "void kernel_b(")
}

/// Compiles the original `a` (printed as C) and the C text `b` (defining
/// `kernel_b` with `a`'s signature), and runs them on two threads.
fn run_c(dir: &Path, name: &str, a: &Program, b: &str) -> String {
    run_text(dir, name, a, b, a)
}

/// Temporaries in fewer cells (modular mappings and shared storage,
/// `expand --transform contract --live-out`) printed as C, compiled and run
/// against the original: the live-out arrays bit for bit the same, in
/// program order and with the space loops parallel (OpenMP, two threads).
/// Then blur with its modulus one row short: the run differs.
#[test]
fn temporaries_in_fewer_cells_run_like_the_original_in_c() {
    let dir = std::env::temp_dir().join(format!("arrayflow-c-modular-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if !have_openmp(&dir) {
        return;
    }
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("fixtures/storage/modular-fibonacci.loop", &["R"], &[]),
        ("fixtures/storage/modular-heat1d.loop", &["Out"], &[]),
        ("fixtures/storage/modular-heat1d.loop", &["Out"], &["i"]),
        (
            "fixtures/storage/modular-heat1d-double-buffer.loop",
            &["Out"],
            &[],
        ),
        (
            "fixtures/storage/modular-heat1d-double-buffer.loop",
            &["Out"],
            &["i"],
        ),
        (
            "fixtures/storage/modular-heat1d-buffers.loop",
            &["Out"],
            &[],
        ),
        ("fixtures/storage/modular-blur.loop", &["out"], &[]),
        ("fixtures/storage/modular-blur.loop", &["out"], &["x"]),
        ("fixtures/storage/jacobi2d-smoothing.loop", &["A4"], &[]),
        ("fixtures/c/kernels/jacobi1d.loop", &["A"], &[]),
    ];
    let emit = |path: &str, live: &[&str], par: &[&str]| {
        let live = live.join(",");
        let mut args = vec![
            "expand",
            path,
            "--transform",
            "contract",
            "--live-out",
            &live,
            "--emit",
            "code",
        ];
        let par = par.join(",");
        if !par.is_empty() {
            args.extend(["--parallel", &par]);
        }
        arrayflow(&args)
    };
    for (k, &(f, live, par)) in cases.iter().enumerate() {
        let path = fixture(f);
        let a = parse(&std::fs::read_to_string(&path).unwrap());
        let text = emit(&path, live, par);
        assert!(
            text.contains("in fewer cells") || text.contains("sharing storage"),
            "{f}\n{text}"
        );
        let b = parse(&text);
        let c = arrayflow::cfront::emit::program(&b, "kernel_b");
        assert!(c.contains("af_mod") || !text.contains('%'), "{f}\n{c}");
        let got = run_files(
            &dir,
            &format!("m{k}"),
            &a,
            &c,
            harness_of(&a, &b, Some(live)),
        );
        assert_eq!(got.trim(), "same", "{f} {par:?}\n{c}");
    }
    // Blur in program order keeps three rows live: 2N cells lose one.
    let path = fixture("fixtures/storage/modular-blur.loop");
    let a = parse(&std::fs::read_to_string(&path).unwrap());
    let text = emit(&path, &["out"], &[]);
    let short = text.replace("% (2 * N + 1)", "% (2 * N)");
    assert_ne!(short, text);
    let b = parse(&short);
    let c = arrayflow::cfront::emit::program(&b, "kernel_b");
    let got = run_files(&dir, "short", &a, &c, harness_of(&a, &b, Some(&["out"])));
    assert_eq!(got.trim(), "differ out");
    std::fs::remove_dir_all(&dir).ok();
}
