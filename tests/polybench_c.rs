//! C in, C out, the same numbers: every PolyBench/C kernel of
//! fixtures/c/polybench, transformed by arrayflow and spliced back into its
//! benchmark in place of the kernel function, prints the same arrays
//! (`POLYBENCH_DUMP_ARRAYS`) as the original, byte for byte (docs/c.md,
//! "C output").
//!
//! For each kernel, at the MINI and SMALL datasets, each transformation
//! (`expand --emit code`; `privatize --emit code`; `expand --transform
//! contract --parallel L --emit code`, `L` the outermost loop that carries
//! no dependence after maximal static expansion) is run with `-D
//! MINI_DATASET` (`-D SMALL_DATASET`: PolyBench declares the arrays with the
//! dataset's sizes, and whole-array copies use them) and the MINI dataset's
//! parameter values (the analyses' sizes; the output is for every value);
//! the output is spliced in, built once with `gcc -O2 -fopenmp -Wall
//! -Werror=implicit-function-declaration` and run with `OMP_NUM_THREADS`
//! 1, 2 and 4. A result is PASS (same dumps, no
//! warning the original's build does not have), SAME (the transformation
//! had nothing to do, said so, and its output still gives the same dumps)
//! or FAIL with the reason. scripts/polybench/known-failures lists the
//! failures known today, each with its reason: they are reported as KNOWN;
//! an unlisted failure, or a listed one that passes, fails the test.
//! scripts/polybench/harness.sh runs the same checks by hand.
//!
//! Without gcc and OpenMP the test prints that it skipped, unless
//! `ARRAYFLOW_REQUIRE_GCC=1` (CI) makes that a failure.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TRANSFORMS: [&str; 3] = ["expand", "privatize", "contract"];
const THREADS: [&str; 3] = ["1", "2", "4"];
const DATASETS: [&str; 2] = ["MINI", "SMALL"];
/// Kernels built and run at once.
const JOBS: usize = 2;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench() -> PathBuf {
    root().join("fixtures/c/polybench")
}

fn support_c() -> PathBuf {
    root().join("scripts/polybench/support.c")
}

/// Whether `gcc -fopenmp` builds and links a program here.
fn have_gcc_openmp(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n",
    )
    .unwrap();
    let built = Command::new("gcc")
        .args(["-fopenmp", "-o"])
        .arg(dir.join("probe"))
        .arg(&src)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    built
        && Command::new(dir.join("probe"))
            .status()
            .is_ok_and(|s| s.success())
}

fn arrayflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("the arrayflow binary runs")
}

/// `--param NAME=VALUE` for each parameter of the kernel at MINI (the
/// `param` lines of `arrayflow fmt`).
fn mini_params(file: &str) -> Vec<String> {
    let out = arrayflow(&["fmt", file, "-D", "MINI_DATASET"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut args = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("param ") else {
            continue;
        };
        let Some((name, value)) = rest.trim_end_matches(';').split_once(" = ") else {
            continue;
        };
        if value.parse::<i64>().is_ok() {
            args.push("--param".to_string());
            args.push(format!("{name}={value}"));
        }
    }
    args
}

/// The outermost loop of `expand`'s report that carries no dependence
/// after maximal static expansion (the MSE column is `none`).
fn parallel_loop(file: &str, params: &[String]) -> Option<String> {
    let mut args = vec!["expand", file];
    args.extend(params.iter().map(String::as_str));
    let out = arrayflow(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("loops: dependences carried"));
    lines.next()?;
    let mut best: Option<(usize, String)> = None;
    for line in lines.take_while(|l| l.starts_with(' ')) {
        let indent = line.len() - line.trim_start().len();
        let Some((name, columns)) = line.trim_start().split_once(" : ") else {
            continue;
        };
        let mse = columns.split('|').nth(1).map(str::trim);
        if mse == Some("none") && best.as_ref().is_none_or(|(i, _)| indent < *i) {
            best = Some((indent, name.to_string()));
        }
    }
    best.map(|(_, name)| name)
}

/// The kernel function's name: the benchmark defines `void kernel_NAME(`
/// at the start of a line.
fn kernel_name(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix("void kernel_")?;
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        rest[end..]
            .trim_start()
            .starts_with('(')
            .then(|| format!("kernel_{}", &rest[..end]))
    })
}

/// The benchmark with its kernel function replaced by `output`, which
/// must define it (a drop-in), else why not.
fn splice(benchmark: &str, output: &str) -> Result<String, String> {
    let name = kernel_name(benchmark).ok_or("the benchmark has no kernel function")?;
    support::cbuild::splice(benchmark, &name, output)
}

/// `src` built for the dataset `d` (`MINI`, `SMALL`).
fn gcc(src: &Path, exe: &Path, d: &str) -> Output {
    Command::new("gcc")
        .args([
            "-O2",
            "-fopenmp",
            "-Wall",
            "-Wno-unknown-pragmas",
            "-Werror=implicit-function-declaration",
            "-D",
            &format!("{d}_DATASET"),
            "-D",
            "POLYBENCH_DUMP_ARRAYS",
            // Every parallel loop and region in parallel, whatever the
            // cost model says of the dataset's sizes: 2 and 4 threads
            // check the parallel code.
            "-D",
            "ARRAYFLOW_PARALLEL_WORK=0",
            "-I",
        ])
        .arg(bench())
        .arg(src)
        .arg(support_c())
        .args(["-lm", "-o"])
        .arg(exe)
        .output()
        .expect("gcc runs")
}

/// The arrays the program dumps (its stderr) with `threads` OpenMP
/// threads, or why there are none.
fn dump(exe: &Path, threads: &str) -> Result<Vec<u8>, String> {
    let mut child = Command::new(exe)
        .env("OMP_NUM_THREADS", threads)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("does not start: {e}"))?;
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).map(|_| v)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("runs over 60 s with {threads} threads"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let bytes = reader.join().unwrap().expect("stderr read");
    if !status.success() {
        return Err(format!("crashes with {threads} threads ({status})"));
    }
    Ok(bytes)
}

/// One result: (transformation, dataset, verdict, reason).
type Verdict = (String, &'static str, &'static str, String);

/// Every transformation of one kernel at every dataset, checked.
fn kernel(k: &str, work: &Path) -> Vec<Verdict> {
    let file = bench().join(format!("{k}.c"));
    let params = mini_params(file.to_str().unwrap());
    let parallel = parallel_loop(file.to_str().unwrap(), &params);
    let mut out = Vec::new();
    for d in DATASETS {
        let w = work.join(k).join(d);
        std::fs::create_dir_all(&w).unwrap();
        out.extend(dataset(&file, d, &params, parallel.as_deref(), &w));
    }
    out
}

/// Every transformation of the kernel in `file` at the dataset `d`.
fn dataset(
    file: &Path,
    d: &'static str,
    params: &[String],
    parallel: Option<&str>,
    w: &Path,
) -> Vec<Verdict> {
    let file_s = file.to_str().unwrap().to_string();
    let benchmark = std::fs::read_to_string(file).unwrap();
    let fail = |t: &str, why: String| vec![(t.to_string(), d, "FAIL", why)];
    let orig = w.join("orig");
    let built = gcc(file, &orig, d);
    if !built.status.success() {
        return fail("original", "the original does not build".to_string());
    }
    let base = support::cbuild::warnings(&String::from_utf8_lossy(&built.stderr));
    let expected = match dump(&orig, "1") {
        Ok(d) => d,
        Err(e) => return fail("original", e),
    };
    let mut out = Vec::new();
    for t in TRANSFORMS {
        let mut args: Vec<String> = match t {
            "expand" => vec!["expand".into(), "--emit".into(), "code".into()],
            "privatize" => vec!["privatize".into(), "--emit".into(), "code".into()],
            _ => match parallel {
                Some(l) => [
                    "expand",
                    "--transform",
                    "contract",
                    "--parallel",
                    l,
                    "--emit",
                    "code",
                ]
                .map(String::from)
                .to_vec(),
                None => {
                    out.push((
                        t.to_string(),
                        d,
                        "SAME",
                        "no loop is parallel after expansion: nothing to contract".to_string(),
                    ));
                    continue;
                }
            },
        };
        args.extend([file_s.clone(), "-D".into(), format!("{d}_DATASET")]);
        args.extend(params.iter().cloned());
        let run = arrayflow(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        let (v, why) = check(t, d, &run, &text, &benchmark, w, &base, &expected);
        out.push((t.to_string(), d, v, why));
    }
    out
}

/// The verdict on one transformation's output `text` at the dataset `d`.
#[allow(clippy::too_many_arguments)]
fn check(
    t: &str,
    d: &str,
    run: &Output,
    text: &str,
    benchmark: &str,
    w: &Path,
    base: &[String],
    expected: &[u8],
) -> (&'static str, String) {
    if !run.status.success() {
        let err = String::from_utf8_lossy(&run.stderr);
        let first = err.lines().find(|l| l.contains("error")).unwrap_or("");
        return ("FAIL", format!("arrayflow: {first}"));
    }
    // The values are C's own: no stand-in for a value the model could not
    // read, no helper for the model's integer division.
    for helper in ["unknown(", "af_div(", "af_mod("] {
        if text.contains(helper) {
            return ("FAIL", format!("the output calls {helper}..)"));
        }
    }
    let spliced = match splice(benchmark, text) {
        Ok(s) => s,
        Err(e) => return ("FAIL", format!("not a drop-in: {e}")),
    };
    let src = w.join(format!("{t}.c"));
    std::fs::write(&src, spliced).unwrap();
    let exe = w.join(t);
    let built = gcc(&src, &exe, d);
    let stderr = String::from_utf8_lossy(&built.stderr);
    if !built.status.success() {
        let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
        return ("FAIL", format!("does not build: {first}"));
    }
    let mut base = base.to_vec();
    for m in support::cbuild::warnings(&stderr) {
        match base.iter().position(|b| *b == m) {
            Some(k) => {
                base.remove(k);
            }
            None => return ("FAIL", format!("warnings: {m}")),
        }
    }
    for n in THREADS {
        match dump(&exe, n) {
            Err(e) => return ("FAIL", e),
            Ok(d) if d != expected => {
                return ("FAIL", format!("dumps differ with {n} threads"));
            }
            Ok(_) => {}
        }
    }
    if text.contains("no loop becomes parallel") {
        (
            "SAME",
            "nothing to do, said so; the output gives the same dumps".to_string(),
        )
    } else {
        ("PASS", String::new())
    }
}

/// scripts/polybench/known-failures: `KERNEL TRANSFORM # reason` lines.
fn known_failures() -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(root().join("scripts/polybench/known-failures")).unwrap();
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
        let mut words = entry.split_whitespace();
        let (Some(k), Some(t), None) = (words.next(), words.next(), words.next()) else {
            panic!("known-failures: not `KERNEL TRANSFORM # reason`: {line}");
        };
        assert!(
            !reason.trim().is_empty(),
            "known-failures: no reason given: {line}"
        );
        out.insert((k.to_string(), t.to_string()), reason.trim().to_string());
    }
    out
}

/// A fresh directory for a test's builds, or `None` (the test is skipped)
/// where gcc -fopenmp cannot build and run a program, which
/// `ARRAYFLOW_REQUIRE_GCC=1` makes a failure.
fn work_dir(prefix: &str) -> Option<PathBuf> {
    let work = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    if have_gcc_openmp(&work) {
        return Some(work);
    }
    std::fs::remove_dir_all(&work).ok();
    assert!(
        std::env::var("ARRAYFLOW_REQUIRE_GCC").as_deref() != Ok("1"),
        "ARRAYFLOW_REQUIRE_GCC=1 but gcc -fopenmp does not build and run a program here"
    );
    eprintln!("skipped: gcc -fopenmp does not build and run a program here");
    None
}

#[test]
fn transformed_kernels_are_drop_ins() {
    let Some(work) = work_dir("arrayflow-polybench-c") else {
        return;
    };
    let mut kernels: Vec<String> = std::fs::read_dir(bench())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    kernels.sort();
    assert_eq!(kernels.len(), 30, "PolyBench/C has 30 kernels");
    let known = known_failures();
    for (k, t) in known.keys() {
        assert!(
            kernels.contains(k) && TRANSFORMS.contains(&t.as_str()),
            "known-failures: no kernel {k} or transformation {t}"
        );
    }

    let queue = Mutex::new(kernels.clone());
    let results = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..JOBS {
            s.spawn(|| loop {
                let Some(k) = queue.lock().unwrap().pop() else {
                    break;
                };
                let r = kernel(&k, &work);
                results.lock().unwrap().insert(k, r);
            });
        }
    });
    let results = results.into_inner().unwrap();

    let mut counts: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (k, rs) in &results {
        for (t, d, verdict, why) in rs {
            let listed = known.get(&(k.clone(), t.clone()));
            let shown = match (*verdict, listed) {
                ("FAIL", Some(_)) => "KNOWN",
                ("FAIL", None) => {
                    wrong.push(format!("{k} {t} {d}: {why}"));
                    "FAIL"
                }
                (v, Some(reason)) => {
                    wrong.push(format!(
                        "{k} {t} {d}: {v}, but known-failures lists it ({reason}): remove it"
                    ));
                    v
                }
                (v, None) => v,
            };
            *counts.entry((t.clone(), shown)).or_default() += 1;
            println!("{k:<16} {t:<10} {d:<6} {shown:<6} {why}");
        }
    }
    println!();
    for t in TRANSFORMS {
        let c = |v| counts.get(&(t.to_string(), v)).copied().unwrap_or(0);
        println!(
            "{t:<10} PASS {} SAME {} KNOWN {} FAIL {}",
            c("PASS"),
            c("SAME"),
            c("KNOWN"),
            c("FAIL")
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let total: usize = results.values().map(Vec::len).sum();
    assert_eq!(
        total,
        30 * TRANSFORMS.len() * DATASETS.len(),
        "a result for every kernel, transformation and dataset"
    );

    // The checks see a wrong kernel: gemm expanded, then one product by
    // `alpha` doubled; and an output that does not define the kernel
    // function.
    let file = bench().join("gemm.c");
    let file_s = file.to_str().unwrap();
    let benchmark = std::fs::read_to_string(&file).unwrap();
    let w = work.join("mutants");
    std::fs::create_dir_all(&w).unwrap();
    let orig = w.join("orig");
    let built = gcc(&file, &orig, "MINI");
    let base = support::cbuild::warnings(&String::from_utf8_lossy(&built.stderr));
    let expected = dump(&orig, "1").unwrap();
    let mut args = vec!["expand", "--emit", "code", file_s, "-D", "MINI_DATASET"];
    let params = mini_params(file_s);
    args.extend(params.iter().map(String::as_str));
    let run = arrayflow(&args);
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(
        check("expand", "MINI", &run, &text, &benchmark, &w, &base, &expected).0,
        "PASS"
    );
    assert!(text.contains("alpha * "), "{text}");
    let doubled = text.replacen("alpha * ", "2 * alpha * ", 1);
    let (v, why) = check(
        "doubled", "MINI", &run, &doubled, &benchmark, &w, &base, &expected,
    );
    assert_eq!((v, why.as_str()), ("FAIL", "dumps differ with 1 threads"));
    let renamed = text.replace("kernel_gemm", "kernel_other");
    let (v, why) = check(
        "renamed", "MINI", &run, &renamed, &benchmark, &w, &base, &expected,
    );
    assert_eq!(v, "FAIL");
    assert!(why.starts_with("not a drop-in"), "{why}");
    std::fs::remove_dir_all(&work).ok();
}

/// One output for every dataset: `privatize --emit code` run once, at
/// MINI, spliced in and built at SMALL and MEDIUM, prints what the
/// original prints at each, with 1, 2 and 4 threads (every parallel loop
/// run in parallel: `ARRAYFLOW_PARALLEL_WORK=0`). doitgen has a private
/// copy (`sum_p`, sized by `np`, not by the dataset's constant), gemm a
/// parallel loop as written, jacobi-2d and lu a parallel region around
/// their sequential loop (with `omp single` in lu).
#[test]
fn one_output_fits_every_dataset() {
    let Some(work) = work_dir("arrayflow-polybench-fit") else {
        return;
    };
    let forms: [(&str, &[&str]); 4] = [
        (
            "doitgen",
            &["sum_p[np > 0 ? np : 1]", "#pragma omp parallel for"],
        ),
        ("gemm", &["#pragma omp parallel for"]),
        (
            "jacobi-2d",
            &[
                "#pragma omp parallel private(t, i, j) if(",
                "#pragma omp for",
            ],
        ),
        (
            "lu",
            &[
                "#pragma omp parallel private(",
                "#pragma omp single",
                "#pragma omp for",
            ],
        ),
    ];
    let mut wrong = Vec::new();
    for (k, expected) in forms {
        let file = bench().join(format!("{k}.c"));
        let file_s = file.to_str().unwrap();
        let mut args = vec!["privatize", "--emit", "code", file_s, "-D", "MINI_DATASET"];
        let params = mini_params(file_s);
        args.extend(params.iter().map(String::as_str));
        let run = arrayflow(&args);
        assert!(
            run.status.success(),
            "{k}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        for e in expected {
            assert!(text.contains(e), "{k}: no `{e}` in\n{text}");
        }
        let benchmark = std::fs::read_to_string(&file).unwrap();
        let src = work.join(format!("{k}.c"));
        std::fs::write(&src, splice(&benchmark, &text).unwrap()).unwrap();
        for d in ["SMALL", "MEDIUM"] {
            let orig = work.join(format!("{k}.orig.{d}"));
            assert!(
                gcc(&file, &orig, d).status.success(),
                "{k}: original at {d}"
            );
            let want = dump(&orig, "1").unwrap();
            let exe = work.join(format!("{k}.{d}"));
            let built = gcc(&src, &exe, d);
            if !built.status.success() {
                wrong.push(format!("{k} at {d}: does not build"));
                continue;
            }
            for n in THREADS {
                match dump(&exe, n) {
                    Ok(got) if got == want => {}
                    Ok(_) => wrong.push(format!("{k} at {d}: dumps differ with {n} threads")),
                    Err(e) => wrong.push(format!("{k} at {d}: {e}")),
                }
            }
        }
    }
    std::fs::remove_dir_all(&work).ok();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
