//! Privatization (`privatize`): the paper's examples (maydan-digest.md §3.8,
//! Figures 10 and 13), small programs whose copy-in and finalization are
//! worked out by hand, and, on generated programs, two identities with the
//! independent memory-event scan of `expansion::parallel`: a loop is
//! parallel as it is exactly when it carries no dependence in the original
//! program, and parallel after privatization exactly when it carries none
//! in single-assignment form (one cell per write: only value flows remain).
//! ARRAYFLOW_CASES generated programs (default 300).

mod support;

use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::expansion::{self, parallel};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::Program;
use arrayflow::privatize::{analyze, Finalization, Instance, LoopPrivatization, Verdict};
use std::collections::BTreeSet;

fn program(text: &str) -> Program {
    let (p, d) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

fn loops(p: &Program) -> Vec<LoopPrivatization> {
    let exp = expansion::expand(p, &Config::default()).expect("expansion");
    analyze(p, &exp)
}

fn fixture(name: &str) -> Vec<LoopPrivatization> {
    let path = format!("{}/fixtures/papers/{name}", env!("CARGO_MANIFEST_DIR"));
    loops(&program(&std::fs::read_to_string(path).unwrap()))
}

fn cells(c: &[&[i64]]) -> BTreeSet<Vec<i64>> {
    c.iter().map(|c| c.to_vec()).collect()
}

fn verdict<'a>(l: &'a LoopPrivatization, array: &str) -> &'a Verdict {
    &l.arrays[array]
}

#[test]
fn figure_13_privatizes_work_in_j_without_initialization() {
    // Digest §3.8: data-flow distance (0) between the work references, so
    // no level-1 vector: j is parallel once work is private, and the writes
    // cover every cell read, so no initialization.
    let l = fixture("maydan-3.8-fig13-subst.loop");
    assert_eq!(l[0].name, "j");
    assert!(!l[0].parallel_before() && l[0].parallel_after());
    assert_eq!(l[0].private().collect::<Vec<_>>(), ["work"]);
    assert_eq!(
        verdict(&l[0], "work"),
        &Verdict::Privatizable {
            copy_in: BTreeSet::new(),
            finalization: Finalization::None
        }
    );
    assert_eq!(verdict(&l[0], "A"), &Verdict::Shared);
    assert!(l[0].approximate.is_empty());
    // The inner loops are parallel as they are.
    assert!(l[1..].iter().all(|l| l.parallel_before()));
}

#[test]
fn figure_13_variant_initializes_work_0_from_before_the_loop() {
    // Digest §3.8, modified variant: R1 at i = 0 reads work[0], written by
    // W0 before the loop only: still privatizable, work[0] copied in.
    let l = fixture("maydan-3.8-fig13-variant-subst.loop");
    assert!(l[0].parallel_after());
    assert_eq!(
        verdict(&l[0], "work"),
        &Verdict::Privatizable {
            copy_in: cells(&[&[0]]),
            finalization: Finalization::None
        }
    );
}

#[test]
fn figure_13_with_the_scalar_ii_is_approximate() {
    // work[ii - 1] is not affine: a may-write of the whole range, so σ
    // over-approximates and the answer must say so.
    let l = fixture("maydan-3.8-fig13.loop");
    assert!(l[0].approximate.contains("work"));
}

#[test]
fn figure_10_the_covering_write_makes_a_private() {
    // Digest §3.7: a[i] read after a[i] = ... in the same iteration; the
    // output dependence a[i+1] / a[i] across iterations goes with privacy.
    let l = fixture("maydan-3.7-fig10.loop");
    assert!(!l[0].parallel_before() && l[0].parallel_after());
}

const LAST: &str = "param N = 4;
real t;
real x;
real A[0..N];
real B[0..N];
for i = 0 to N do
  S1: t = A[i];
  S2: B[i] = t * 2;
end
S3: x = t;
";

#[test]
fn finalization_from_the_last_iteration() {
    let l = loops(&program(LAST));
    assert_eq!(
        verdict(&l[0], "t"),
        &Verdict::Privatizable {
            copy_in: BTreeSet::new(),
            finalization: Finalization::LastIteration {
                cells: cells(&[&[]])
            }
        }
    );
    assert_eq!(verdict(&l[0], "B"), &Verdict::Shared);
}

#[test]
fn finalization_from_an_earlier_iteration_static_or_dynamic() {
    // t is written for i <= 2 only: x reads S1[2], not the last iteration.
    let text = LAST.replace(
        "  S1: t = A[i];\n  S2: B[i] = t * 2;\n",
        "  if i <= 2 then\n    S1: t = A[i];\n    S2: B[i] = t * 2;\n  end\n",
    );
    let fin = |text: &str| match verdict(&loops(&program(text))[0], "t") {
        Verdict::Privatizable { finalization, .. } => finalization.clone(),
        v => panic!("{v:?}"),
    };
    assert_eq!(
        fin(&text),
        Finalization::LastWriter {
            cells: cells(&[&[]]),
            dynamic: false
        }
    );
    // Under a data condition the last writer is known only at run time.
    let text = text.replace("if i <= 2 then", "if A[i] > 0 then");
    assert_eq!(
        fin(&text),
        Finalization::LastWriter {
            cells: cells(&[&[]]),
            dynamic: true
        }
    );
}

#[test]
fn a_reduction_carries_its_value() {
    let l = loops(&program(
        "param N = 4;\nreal s;\nreal A[0..N];\nfor i = 0 to N do\n  S: s = s + A[i];\nend\n",
    ));
    let at = |i: i64| Instance {
        site: "S".to_string(),
        iter: vec![i],
    };
    assert_eq!(
        verdict(&l[0], "s"),
        &Verdict::Carried {
            source: at(0),
            read: at(1)
        }
    );
    assert!(!l[0].parallel_after());
}

#[test]
fn parallel_before_and_after_agree_with_the_original_and_single_assignment_scans() {
    let cases = support::cases(300);
    let (mut loops_seen, mut gained) = (0, 0);
    for seed in 0..cases {
        let p = generate(seed, &GenOptions::all(Size::Small));
        let config = Config {
            max_trips: (seed % 3) as u32,
            ..Config::default()
        };
        let Ok(exp) = expansion::expand(&p, &config) else {
            continue;
        };
        let report = parallel::report(&p, &exp).expect("loops");
        let mine = analyze(&p, &exp);
        assert_eq!(report.len(), mine.len(), "seed {seed}");
        for (r, m) in report.iter().zip(&mine) {
            assert_eq!(r.counter, m.counter, "seed {seed}");
            assert_eq!(
                m.parallel_before(),
                !r.original.any(),
                "seed {seed}, loop {}: {m:?}\n{}",
                m.name,
                arrayflow::print::program(&p)
            );
            assert_eq!(
                m.parallel_after(),
                !r.sa.any(),
                "seed {seed}, loop {}: {m:?}\n{}",
                m.name,
                arrayflow::print::program(&p)
            );
            loops_seen += 1;
            gained += usize::from(m.parallel_after() && !m.parallel_before());
        }
    }
    // Privatization does make loops parallel on these programs.
    assert!(
        loops_seen >= cases as usize && gained > 0,
        "{loops_seen} loops, {gained} gained"
    );
}

#[test]
fn the_command_prints_text_and_json() {
    let file = format!(
        "{}/fixtures/papers/maydan-3.8-fig13-variant-subst.loop",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(args)
            .output()
            .expect("run arrayflow");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let text = run(&["privatize", &file]);
    assert!(
        text.contains("loop j@15: parallel after privatizing work"),
        "{text}"
    );
    assert!(
        text.contains("work: private; copy-in work[0]; nothing live after"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&run(&["privatize", &file, "--format", "json"])).expect("json");
    let j = &v["loops"][0];
    assert_eq!(j["loop"], "j");
    assert_eq!(j["parallel"]["after"], true);
    let work = j["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["array"] == "work")
        .unwrap();
    assert_eq!(work["verdict"], "private");
    assert_eq!(work["copy_in"], serde_json::json!([[0]]));
    // Unknown file: exit 2, not a panic.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["privatize", "/nonexistent.loop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The privatized program of `p` (sampled and validated) and its loops
/// over threads, if a loop gains; `Err` when validation found a size
/// where it differs.
fn privatized(p: &Program) -> Result<Option<Privatized>, String> {
    let o = arrayflow::codegen::Options {
        allow_unproved: true,
        ..Default::default()
    };
    let c = arrayflow::privatize::emit::checked(p, &o)?;
    Ok(c.emitted.map(|e| {
        let (b, d) = arrayflow::lower::compile(&e.text, FileId(0));
        let b = b.unwrap_or_else(|| panic!("{d:?}\n{}", e.text));
        (b, e.threads)
    }))
}

type Privatized = (Program, arrayflow::privatize::emit::Threads);

/// `b` (privatized, with per-thread copies) agrees with `a` at `params`
/// at each thread count `privatize` checks (`CHECKED_THREADS`).
fn equivalent(
    a: &Program,
    (b, threads): &Privatized,
    params: &[(String, i64)],
    seeds: u64,
) -> Result<(), String> {
    for n in arrayflow::privatize::emit::CHECKED_THREADS {
        let o = threads.equiv_options(params, n, seeds);
        match arrayflow::equiv::equiv(a, b, &o) {
            Ok(arrayflow::equiv::Verdict::Agree(_)) => {}
            Ok(arrayflow::equiv::Verdict::Differ(m)) => return Err(format!("{m:?} ({n} threads)")),
            Err(e) => return Err(format!("{} ({n} threads)", e.message)),
        }
    }
    Ok(())
}

#[test]
fn the_privatized_figure_13_runs_doall_and_agrees_at_other_sizes() {
    let path = format!(
        "{}/fixtures/papers/maydan-3.8-fig13-variant-subst.loop",
        env!("CARGO_MANIFEST_DIR")
    );
    let a = program(&std::fs::read_to_string(path).unwrap());
    let b = privatized(&a).expect("validated").expect("j gains");
    let text = arrayflow::print::program(&b.0);
    // One iteration per thread; each runs its block of j in order.
    assert!(text.contains("for t = 0 to threads - 1 doall"), "{text}");
    assert!(text.contains("for j = 1 to N1 step 2 do\n"), "{text}");
    assert!(
        text.contains("real work_p[0..threads - 1, 0..2 * N2P];"),
        "{text}"
    );
    for (n1, n2p) in [(7, 4), (1, 1), (3, 2), (10, 6)] {
        let params = [("N1".to_string(), n1), ("N2P".to_string(), n2p)];
        equivalent(&a, &b, &params, 20)
            .unwrap_or_else(|m| panic!("N1={n1}, N2P={n2p}: {m}\n{text}"));
    }
}

/// Private copies cover the cells the loop touches (rows and columns below
/// `m` and `n`), not the declared 1000 × 1200: a cell of the box is copied
/// only where it is inside the declared range, which `m - 1 <= 999` need
/// not be for every `m`. Checked by hand on trmm's shape; then run.
#[test]
fn private_copies_cover_the_cells_the_loop_touches() {
    let a = program(
        "param m = 4;\nparam n = 5;\nreal A[0..999, 0..999];\nreal B[0..999, 0..1199];\n\
         for i = 0 to m - 1 do\n  for j = 0 to n - 1 do\n    for k = i + 1 to m - 1 do\n\
               S1: B[i, j] += A[k, i] * B[k, j];\n    end\n    S2: B[i, j] = f(B[i, j]);\n  end\nend\n",
    );
    let b = privatized(&a).expect("validated").expect("i gains");
    let text = arrayflow::print::program(&b.0);
    assert!(
        text.contains("real B_p[0..threads - 1, 0..m - 1, 0..n - 1];"),
        "{text}"
    );
    assert!(text.contains("int B_l;"), "{text}");
    assert!(text.contains("c_1 <= 1199"), "the column guard: {text}");
    assert!(text.contains("for t = 0 to threads - 1 doall"), "{text}");
    assert!(text.contains("for i = 0 to m - 1 do\n"), "{text}");
    for (m, n) in [(0, 0), (1, 1), (1, 3), (4, 5), (7, 2)] {
        let params = [("m".to_string(), m), ("n".to_string(), n)];
        equivalent(&a, &b, &params, 5).unwrap_or_else(|e| panic!("m={m}, n={n}: {e}\n{text}"));
    }
}

/// A guard keeps `w[i - 1]` from reading below the array; the box of the
/// loop still starts at `M - 1`, which may be `-1`, so the copies are
/// guarded by the declared lower bound (worked out by hand), then run at
/// sizes where the guard matters (`M = 0`) and where it does not.
#[test]
fn a_box_past_the_declared_range_is_guarded() {
    let a = program(
        "param T = 3;\nparam M = 1;\nparam N = 5;\nreal A[0..T, 0..N];\nreal w[0..N];\n\
         for t = 0 to T do\n  for i = M to N do\n    S1: w[i] = ...;\n  end\n\
           for i = M to N do\n    if [g] i >= 1 then\n      S2: A[t, i] = w[i - 1];\n    end\n  end\nend\n",
    );
    let b = privatized(&a).expect("validated").expect("t gains");
    let text = arrayflow::print::program(&b.0);
    // `t` is taken: the loop over threads counts with `t_1`.
    assert!(
        text.contains("real w_p[0..threads - 1, M - 1..N];"),
        "{text}"
    );
    assert!(text.contains("if [in] -c <= 0 then"), "{text}");
    for (t, m, n) in [(2, 0, 3), (0, 0, 0), (3, 2, 6), (1, 4, 2)] {
        let params = [("T".into(), t), ("M".into(), m), ("N".into(), n)];
        equivalent(&a, &b, &params, 5).unwrap_or_else(|e| panic!("{params:?}: {e}\n{text}"));
    }
}

#[test]
fn privatized_generated_programs_agree_with_the_original_with_doall_shuffled() {
    let cases = support::cases(500);
    let (mut checked, mut refused) = (0, 0);
    for seed in 0..cases {
        let p = generate(seed, &GenOptions::all(Size::Small));
        let b = match privatized(&p) {
            Ok(Some(b)) => b,
            Ok(None) => continue,
            // Validation caught a size where the sampled verdict fails.
            Err(m) => {
                assert!(
                    m.contains("differs from the original at"),
                    "seed {seed}: {m}"
                );
                refused += 1;
                continue;
            }
        };
        // Sizes neither sampled nor validated: every parameter at base+7
        // and +9.
        for delta in [7, 9] {
            let params: Vec<(String, i64)> = p
                .params
                .iter()
                .map(|x| (x.name.clone(), x.default.unwrap_or(2) + delta))
                .collect();
            if let Err(m) = equivalent(&p, &b, &params, 3) {
                assert!(
                    m.starts_with("A fails"),
                    "seed {seed} at {params:?}: {m}\nA:\n{}\nB:\n{}",
                    arrayflow::print::program(&p),
                    arrayflow::print::program(&b.0)
                );
            }
        }
        checked += 1;
    }
    eprintln!("{checked} privatized and validated, {refused} refused by validation");
    // Validation refuses few: the sampled verdict mostly holds.
    assert!(
        checked * 20 >= cases && refused * 4 <= checked,
        "{checked} programs gained a loop, {refused} refused"
    );
}

#[test]
fn c_in_gives_openmp_c_out() {
    let dir = std::env::temp_dir().join(format!("arrayflow-privatize-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.c");
    std::fs::write(
        &src,
        "#define N 6\ndouble A[N + 1], B[N + 1];\ndouble t, x;\nvoid k(void) {\n  for (int i = 0; i <= N; i++) {\n    t = A[i] * 2;\n    B[i] = t + 1;\n  }\n  x = t;\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["privatize", "--emit", "code"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = String::from_utf8(out.stdout).unwrap();
    assert!(c.starts_with("// arrayflow privatize"), "{c}");
    assert!(c.contains("#pragma omp parallel for"), "{c}");
    // Printed into the file's function `k`: the file with `k` replaced.
    let source = std::fs::read_to_string(&src).unwrap();
    let head = "void k(void) {";
    assert!(c.contains(head), "{c}");
    let start = source.find(head).unwrap();
    let end = source[start..].find("\n}").unwrap() + start + 2;
    let code = c.find("/* Printed by arrayflow").unwrap();
    let spliced = format!("{}{}{}", &source[..start], &c[code..], &source[end..]);
    let emitted = dir.join("out.c");
    std::fs::write(&emitted, &spliced).unwrap();
    let cc = std::process::Command::new("cc")
        .args(["-std=c99", "-fopenmp", "-Wno-unused-label", "-c", "-o"])
        .arg(dir.join("out.o"))
        .arg(&emitted)
        .output();
    match cc {
        Ok(o) => assert!(
            o.status.success(),
            "{}\n{c}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(_) => assert!(std::env::var("CI").is_err(), "CI needs cc"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The `#pragma` lines of printed C without their `if(work >=
/// ARRAYFLOW_PARALLEL_WORK)` clause (the cost test, docs/c.md *When a
/// parallel loop pays*), which must end the line when it is there.
fn pragma_clauses(c: &str) -> Vec<&str> {
    let pragmas = c
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("#pragma"));
    pragmas
        .map(|l| match l.find(" if(") {
            Some(at) => {
                assert!(l.ends_with(" >= ARRAYFLOW_PARALLEL_WORK)"), "{l}");
                &l[..at]
            }
            None => l,
        })
        .collect()
}

/// `privatize --emit code` on the C fixtures of fixtures/c/privatize/: the
/// OpenMP pragma lines, worked out by hand from docs/expansion.md §9.3
/// (each fixture's comment says why); tests/c_runs.rs runs them. 6 files.
#[test]
fn openmp_clauses_as_worked_out_by_hand() {
    let cases: [(&str, &[&str]); 8] = [
        (
            "fig13",
            &["#pragma omp parallel for firstprivate(work_p) lastprivate(work_p)"],
        ),
        (
            "temp",
            &[
                // `t` is a variable of the function printed into (a
                // global): the clauses name it, no copy.
                "#pragma omp parallel for private(t)",
                // S4's loop reads t and writes C[i]: parallel as written.
                "#pragma omp parallel for",
                "#pragma omp parallel for lastprivate(t)",
            ],
        ),
        ("rowtemp", &["#pragma omp parallel for lastprivate(w_p)"]),
        (
            "copyin",
            &["#pragma omp parallel for firstprivate(w_p) lastprivate(w_p)"],
        ),
        // Then Z's loop, writing w[c] only: parallel as written.
        (
            "dead",
            &[
                "#pragma omp parallel for firstprivate(w_p)",
                "#pragma omp parallel for",
            ],
        ),
        // A conditional write: no clause fits, explicit private copies.
        ("lastwriter", &["#pragma omp parallel for"]),
        // Locals of the kernel: `private` on the local itself, no copy;
        // `lastprivate` where a later statement reads the local.
        (
            "local",
            &[
                "#pragma omp parallel for private(row)",
                "#pragma omp parallel for private(s)",
                "#pragma omp parallel for lastprivate(last)",
                // S8's loop updates C[j] from last[j]: parallel as written.
                "#pragma omp parallel for",
            ],
        ),
        // One loop with a clause, one with explicit copies.
        (
            "mixed",
            &[
                "#pragma omp parallel for lastprivate(t)",
                "#pragma omp parallel for",
            ],
        ),
    ];
    for (name, pragmas) in cases {
        let path = format!(
            "{}/fixtures/c/privatize/{name}.c",
            env!("CARGO_MANIFEST_DIR")
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(["privatize", "--emit", "code", "--allow-unproved", &path])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c = String::from_utf8(out.stdout).unwrap();
        assert_eq!(pragma_clauses(&c), pragmas, "{name}:\n{c}");
        let explicit = c.contains("_w[");
        assert_eq!(
            explicit,
            ["lastwriter", "mixed"].contains(&name),
            "{name}:\n{c}"
        );
    }
    let path = format!(
        "{}/fixtures/c/privatize/lastwriter.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["privatize", "--emit", "code", "--allow-unproved", &path])
        .output()
        .unwrap();
    let c = String::from_utf8(out.stdout).unwrap();
    assert!(
        c.contains("// loop i: no OpenMP clause fits t: a write under a condition"),
        "{c}"
    );
}

/// Reductions in the C form, worked out by hand in the comments of
/// fixtures/c/reduction/: the pragma lines, with and without
/// `--reassociate` (tests/c_runs.rs runs them).
#[test]
fn reduction_clauses_as_worked_out_by_hand() {
    let cases: [(&str, bool, &[&str]); 6] = [
        (
            "integer",
            false,
            &["#pragma omp parallel for reduction(|:bits) reduction(max:m) reduction(+:s)"],
        ),
        // The cell x[i] is read into a local the clause names.
        (
            "triangular",
            false,
            &["#pragma omp parallel for reduction(+:x_r)"],
        ),
        // Reals: sequential unless reassociating is allowed.
        ("real", false, &[]),
        ("real", true, &["#pragma omp parallel for reduction(+:s)"]),
        ("not-reductions", false, &[]),
        ("not-reductions", true, &[]),
    ];
    for (name, reassociate, pragmas) in cases {
        let path = format!(
            "{}/fixtures/c/reduction/{name}.c",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut args = vec!["privatize", "--emit", "code", &path];
        if reassociate {
            args.push("--reassociate");
        }
        let (code, c, err) = support::run(&args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(pragma_clauses(&c), pragmas, "{name}:\n{c}");
        if name == "integer" {
            // Three statements in a loop of N trips: the work is 3N.
            assert!(
                c.contains("if(3 * (long)N >= ARRAYFLOW_PARALLEL_WORK)"),
                "{c}"
            );
        }
        if name == "real" && !reassociate {
            assert!(
                c.contains("// loop i: a reduction on s (real values): left sequential"),
                "{c}"
            );
        }
        if name == "triangular" {
            assert!(
                c.contains("int x_r = x[i];") && c.contains("x[i] = x_r;"),
                "{c}"
            );
        }
    }
}

/// Outside static control a verdict holds at the analysed sizes only, so
/// `--emit code` marks no loop parallel on it: fig13.c's `j` is parallel
/// after privatizing `work` at every sample (its source depends on a
/// counter modulo the step 2, which exact σ does not decide), and the
/// program comes out sequential, with a header saying why and what
/// `--allow-unproved` does.
#[test]
fn unproved_verdicts_mark_no_loop_parallel() {
    let path = format!(
        "{}/fixtures/c/privatize/fig13.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["privatize", "--emit", "code", &path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let c = String::from_utf8(out.stdout).unwrap();
    assert!(!c.contains("#pragma omp"), "{c}");
    assert!(
        c.starts_with(
            "// arrayflow privatize --emit code: no loop marked parallel: \
             not proved for every parameter value.\n"
        ),
        "{c}"
    );
    assert!(c.contains(": loop `j` (private work);\n"), "{c}");
    // The report says the same of its verdicts.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["privatize", &path])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "# privatization at N1=7, N2P=4 (from σ at these sizes; not proved for others)\n"
        ),
        "{text}"
    );
}

/// A row of scratch privatized inside a 2-D nest (iteration i writes then
/// reads `a[i .. N - 1]`, and reads `a[N]`, which nothing writes): one copy
/// of `a`'s N + 1 cells per thread, not one per iteration of `i` (worked
/// out by hand: `a_p` and `a_w` are `threads` rows of `0..N`, no `N × N`).
/// The emitted `.loop` is compared with the original on the command line
/// as its header says, at several sizes and thread counts; without
/// `--thread-loop` the operations inside the loop over threads are named
/// by one more counter and `equiv` reports a mismatch.
#[test]
fn a_row_privatized_in_a_nest_takes_one_copy_per_thread() {
    let dir = std::env::temp_dir().join(format!("arrayflow-privatize-row-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let original = dir.join("row.loop");
    std::fs::write(
        &original,
        "param N = 6;\nreal a[0..N];\nreal b[0..N - 1, 0..N - 1];\nreal c[0..N - 1, 0..N - 1];\n\
         for i = 0 to N - 1 do\n  for j = i to N - 1 do\n    S1: a[j] = c[i, j] + a[N];\n  end\n\
           for j = i to N - 1 do\n    S2: b[i, j] = h(a[j]);\n  end\nend\n",
    )
    .unwrap();
    let path = original.to_string_lossy().to_string();
    let (code, out, err) = support::run(&["privatize", "--emit", "code", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("real a_p[0..threads - 1, 0..N];"), "{out}");
    assert!(out.contains("int a_w[0..threads - 1, 0..N];"), "{out}");
    assert!(out.contains("for t = 0 to threads - 1 doall"), "{out}");
    assert!(out.contains("equiv ORIGINAL THIS --thread-loop t"), "{out}");
    let emitted = dir.join("row.private.loop");
    std::fs::write(&emitted, &out).unwrap();
    let emitted = emitted.to_string_lossy().to_string();
    for (n, threads) in [(0, 1), (1, 2), (4, 3), (7, 2), (7, 5), (9, 4)] {
        let (n, threads) = (format!("N={n}"), format!("threads={threads}"));
        let args = ["equiv", &path, &emitted, "--param", &n, "--param", &threads];
        let (code, out, err) = support::run(&[&args[..], &["--thread-loop", "t"]].concat());
        assert_eq!(code, 0, "{n}, {threads}: {out}{err}");
    }
    let (code, out, _) = support::run(&["equiv", &path, &emitted]);
    assert_eq!(code, 1, "the loop over threads named: {out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A loop parallel as written needs no copies: it is marked `doall` as it
/// is, with no loop over threads; only the loop that privatizes `t` gets
/// one.
#[test]
fn a_loop_parallel_as_written_gets_no_thread_loop() {
    let text = "param N = 8;\nreal A[0..N], B[0..N], t;\n\
                for i = 0 to N do S: A[i] = B[i] + 1; end\n\
                for j = 0 to N do T: t = A[j]; U: B[j] = t; end\n";
    let (a, d) = arrayflow::lower::compile(text, FileId(0));
    let a = a.unwrap_or_else(|| panic!("{d:?}"));
    let (b, threads) = privatized(&a).unwrap().expect("loops privatized");
    let printed = arrayflow::print::program(&b);
    assert!(
        printed.contains("for i = 0 to N doall\n  S: A[i] = B[i] + 1;\nend"),
        "{printed}"
    );
    assert_eq!(threads.loops.len(), 1, "{printed}");
    equivalent(&a, &(b, threads), &[("N".to_string(), 5)], 2).unwrap();
}
