//! `-o FILE` on `expand --emit code` and `privatize --emit code` for a C
//! file writes the whole translation unit: the file as written (its
//! `#include`s, macros, globals, other functions, `main`) with each
//! transformed function replaced in place (docs/c.md, C output). That file
//! must compile unchanged with `gcc -Wall -Werror=implicit-function-declaration
//! -fopenmp` and give what the original file gives, at 1, 2 and 4 OpenMP
//! threads:
//! - every fixture of fixtures/c/real, built with its driver
//!   (`NAME.main.c`), every result printed in `%a`;
//! - PolyBench/C kernels at MINI, built with `POLYBENCH_DUMP_ARRAYS`, every
//!   array dumped.
//!
//! The expected output is the original file's, built and run by gcc; the
//! text outside the transformed functions must be the file's, byte for
//! byte. Without gcc and OpenMP the test skips, unless
//! `ARRAYFLOW_REQUIRE_GCC=1` (CI) makes that a failure.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

const THREADS: [&str; 3] = ["1", "2", "4"];

/// (fixture, transformation, the error code of the refusal): the
/// commands that refuse to write C for a fixture, by design. A listed
/// case that writes a file, or refuses with another code, fails the test.
const REFUSED: &[(&str, &str, &str)] = &[
    // The expansion copies `y`, which may overlap `x` (no `restrict`):
    // the copy would miss what writes through `x` do to it.
    ("overlapping_params", "expand", "E0914"),
];
const TRANSFORMS: [&str; 2] = ["privatize", "expand"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn work(name: &str) -> PathBuf {
    let w = std::env::temp_dir().join(format!("arrayflow-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&w).unwrap();
    w
}

/// `transform --emit code --allow-opaque FILE -o out` (and `extra`): the
/// file written, or why not.
fn written(transform: &str, file: &Path, out: &Path, extra: &[&str]) -> Result<String, String> {
    let (f, o) = (file.to_string_lossy(), out.to_string_lossy());
    let mut args = vec![transform, "--emit", "code", "--allow-opaque", &f, "-o", &o];
    args.extend(extra);
    let (code, stdout, err) = support::run(&args);
    if code != 0 {
        return Err(format!("exit {code}:\n{err}"));
    }
    if !stdout.is_empty() {
        return Err(format!("`-o` printed on stdout too:\n{stdout}"));
    }
    std::fs::read_to_string(out).map_err(|e| format!("no file written: {e}"))
}

/// Whether `new` is `old` with some of its byte ranges replaced: every
/// line of `old` outside the functions `changed` is in `new`, in order.
fn keeps_the_rest(old: &str, new: &str, changed: &[(usize, usize)]) -> Result<(), String> {
    let mut rest = new;
    let mut at = 0;
    for &(s, e) in changed.iter().chain([&(old.len(), old.len())]) {
        for line in old[at..s].lines().filter(|l| !l.trim().is_empty()) {
            match rest.find(line) {
                Some(k) => rest = &rest[k + line.len()..],
                None => return Err(format!("the line `{line}` of the file is missing")),
            }
        }
        at = e;
    }
    Ok(())
}

/// The byte ranges of the functions `new` defines that `old` defines too
/// and whose text changed.
fn changed_functions(old: &str, new: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for name in function_names(old) {
        let (Some((s, e)), Some((s2, e2))) = (
            support::cbuild::function(old, &name),
            support::cbuild::function(new, &name),
        ) else {
            continue;
        };
        if old[s..e] != new[s2..e2] {
            out.push((s, e));
        }
    }
    out.sort();
    out
}

/// Names of functions defined at column 0 (`void f(`, `static double g(`).
fn function_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with(|c: char| c.is_whitespace() || c == '#' || c == '/' || c == '*') {
            continue;
        }
        let Some(open) = line.find('(') else { continue };
        let before = line[..open].trim_end();
        let name: String = (before.chars().rev())
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() && support::cbuild::function(text, &name).is_some() {
            out.push(name);
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn whole_files_of_real_c_shapes_compile_and_run_like_the_original() {
    let w = work("c-whole-real");
    if !support::cbuild::have_gcc_openmp(&w) {
        return;
    }
    let dir = root().join("fixtures/c/real");
    let mut names: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            Some(n.strip_suffix(".main.c")?.to_string())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 15, "fixtures: {names:?}");
    let mut failed = Vec::new();
    let mut ran = 0;
    for name in &names {
        let file = dir.join(format!("{name}.c"));
        let driver = dir.join(format!("{name}.main.c"));
        let original = std::fs::read_to_string(&file).unwrap();
        let exe = w.join(format!("{name}-original"));
        support::cbuild::gcc(&[&file, &driver], Some(&dir), &exe)
            .unwrap_or_else(|e| panic!("{name}: the original does not build: {e}"));
        let want = support::cbuild::run(&exe, "1");
        for t in TRANSFORMS {
            let out = w.join(format!("{name}-{t}.c"));
            let refused = REFUSED.iter().find(|&&(n, x, _)| n == name && x == t);
            let text = match (written(t, &file, &out, &[]), refused) {
                (Ok(_), Some(_)) => {
                    failed.push(format!(
                        "{name}, {t}: listed in REFUSED but writes a file now"
                    ));
                    continue;
                }
                (Ok(text), None) => text,
                (Err(why), Some((_, _, code))) if why.contains(&format!("[{code}]")) => continue,
                (Err(why), _) => {
                    failed.push(format!("{name}, {t}: {why}"));
                    continue;
                }
            };
            let changed = changed_functions(&original, &text);
            if let Err(why) = keeps_the_rest(&original, &text, &changed) {
                failed.push(format!("{name}, {t}: {why}\n{text}"));
                continue;
            }
            let exe = w.join(format!("{name}-{t}"));
            if let Err(e) = support::cbuild::gcc(&[&out, &driver], Some(&dir), &exe) {
                failed.push(format!("{name}, {t}: does not build:\n{e}\n{text}"));
                continue;
            }
            for threads in THREADS {
                if support::cbuild::run(&exe, threads) != want {
                    failed.push(format!(
                        "{name}, {t}: other output at {threads} threads\n{text}"
                    ));
                    break;
                }
            }
            ran += 1;
        }
    }
    eprintln!(
        "{} whole files ran like the original at 1, 2, 4 threads, {} failed",
        ran,
        failed.len()
    );
    std::fs::remove_dir_all(&w).ok();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// `src` (a PolyBench benchmark) built at MINI with its arrays dumped.
fn polybench_gcc(src: &Path, exe: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("gcc")
        .args([
            "-O2",
            "-fopenmp",
            "-Wall",
            "-Werror=implicit-function-declaration",
            "-D",
            "MINI_DATASET",
            "-D",
            "POLYBENCH_DUMP_ARRAYS",
            "-I",
        ])
        .arg(root().join("fixtures/c/polybench"))
        .arg(src)
        .arg(root().join("scripts/polybench/support.c"))
        .args(["-lm", "-o"])
        .arg(exe)
        .output()
        .expect("gcc runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(support::cbuild::warnings(&stderr))
    } else {
        Err(stderr)
    }
}

/// The arrays a PolyBench program dumps (on stderr) with `threads` threads.
fn dumped(exe: &Path, threads: &str) -> Vec<u8> {
    let out = Command::new(exe)
        .env("OMP_NUM_THREADS", threads)
        .output()
        .expect("the program runs");
    assert!(out.status.success(), "{}: {:?}", exe.display(), out.status);
    out.stderr
}

#[test]
fn whole_polybench_files_compile_and_dump_what_the_original_dumps() {
    let w = work("c-whole-polybench");
    if !support::cbuild::have_gcc_openmp(&w) {
        return;
    }
    let bench = root().join("fixtures/c/polybench");
    let mut failed = Vec::new();
    let mut ran = 0;
    for k in ["gemm", "atax", "jacobi-2d"] {
        let file = bench.join(format!("{k}.c"));
        let exe = w.join(format!("{k}-original"));
        let base = polybench_gcc(&file, &exe).unwrap_or_else(|e| panic!("{k}: {e}"));
        let want = dumped(&exe, "1");
        assert!(!want.is_empty(), "{k}: the original dumps nothing");
        let original = std::fs::read_to_string(&file).unwrap();
        for t in TRANSFORMS {
            let out = w.join(format!("{k}-{t}.c"));
            let text = match written(t, &file, &out, &["-D", "MINI_DATASET"]) {
                Ok(text) => text,
                Err(why) => {
                    failed.push(format!("{k}, {t}: {why}"));
                    continue;
                }
            };
            // `main`, the initialisation and the dump are the file's own.
            for f in ["main", "init_array", "print_array"] {
                let (s, e) = support::cbuild::function(&original, f).unwrap();
                if !text.contains(&original[s..e]) {
                    failed.push(format!("{k}, {t}: `{f}` is not as the file writes it"));
                }
            }
            let exe = w.join(format!("{k}-{t}"));
            match polybench_gcc(&out, &exe) {
                Err(e) => {
                    failed.push(format!("{k}, {t}: does not build:\n{e}\n{text}"));
                    continue;
                }
                Ok(warned) => {
                    let new: Vec<&String> = warned.iter().filter(|x| !base.contains(x)).collect();
                    if !new.is_empty() {
                        failed.push(format!("{k}, {t}: new warnings {new:?}"));
                    }
                }
            }
            for threads in THREADS {
                if dumped(&exe, threads) != want {
                    failed.push(format!("{k}, {t}: other arrays at {threads} threads"));
                    break;
                }
            }
            ran += 1;
        }
    }
    eprintln!("{ran} whole PolyBench files dumped what the original dumps");
    std::fs::remove_dir_all(&w).ok();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
