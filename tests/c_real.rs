//! Real-world C loop shapes (fixtures/c/real/): pointers into one array,
//! pointer parameters, calls with effects, `exit`, macro arithmetic in
//! bounds, strides, typedef'd floats, return values, names the output
//! could capture. Each fixture's opening comment works out by hand whether
//! its loop is parallel as written, after privatization, or not at all.
//!
//! Two checks per fixture:
//! - **No wrong verdict.** `privatize --format json` never calls a loop
//!   parallel (as written, after privatization) that the hand answer says
//!   is not, and `privatize --emit code` puts no `#pragma omp` on it.
//! - **The emitted C computes what the original does.** The function
//!   `privatize --emit code --allow-opaque` prints, and the one `expand
//!   --emit code --allow-opaque` prints, each spliced into the file
//!   in place of the original, builds with the fixture's driver
//!   (`NAME.main.c`) under `gcc -O2 -fopenmp -Wall
//!   -Werror=implicit-function-declaration` with no warning the original's
//!   build lacks, and prints byte for byte what the original prints (every
//!   result in `%a`) at 1, 2 and 4 OpenMP threads.
//!
//! A fixture the command refuses (a diagnostic and a non-zero exit) has
//! no verdict and no output to run: that is reported, not a failure, so
//! that the figures (verdicts found, missed, refused) stay visible.
//! Without gcc and OpenMP the run check is skipped, unless
//! `ARRAYFLOW_REQUIRE_GCC=1` (CI) makes that a failure.

mod support;

use std::path::{Path, PathBuf};

/// The hand answer for a fixture's loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Truth {
    /// Parallel as written.
    Parallel,
    /// Not parallel as written; parallel once some arrays are private.
    Private,
    /// Not parallel as written nor after privatization.
    Sequential,
}

/// (fixture, function, hand answer).
const CASES: &[(&str, &str, Truth)] = &[
    ("offset_pointer", "offset_pointer", Truth::Sequential),
    ("overlapping_params", "shift", Truth::Sequential),
    ("restrict_params", "axpy", Truth::Parallel),
    ("exit_in_loop", "exit_in_loop", Truth::Sequential),
    ("logging_call", "logging_call", Truth::Sequential),
    ("pure_math", "pure_math", Truth::Parallel),
    ("macro_half", "macro_half", Truth::Sequential),
    ("macro_split", "macro_split", Truth::Parallel),
    ("stride_five", "stride_five", Truth::Private),
    ("row_scratch", "row_scratch", Truth::Private),
    ("returns_sum", "returns_sum", Truth::Sequential),
    ("typedef_float", "typedef_float", Truth::Private),
    ("name_clash", "name_clash", Truth::Private),
    ("gather_scalar", "gather_scalar", Truth::Private),
    ("function_macro", "function_macro", Truth::Parallel),
    ("prefix_scan", "prefix_scan", Truth::Sequential),
    ("linear_rows", "linear_rows", Truth::Parallel),
    ("select_temp", "select_temp", Truth::Private),
];

/// (fixture, transformation, why): emitted C known not to be a drop-in
/// today. Each must still fail (a listed case that passes fails the test,
/// so the list stays true); any other failure fails the test.
const KNOWN: &[(&str, &str, &str)] = &[];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/c/real")
}

/// What the report says of the fixture's outermost loop: (parallel as
/// written, after privatization), or the command's stderr when it refuses.
fn report(path: &Path) -> Result<(bool, bool), String> {
    let path = path.to_string_lossy();
    let (code, out, err) = support::run(&["privatize", &path, "--format", "json"]);
    if code != 0 {
        return Err(err);
    }
    let v: serde_json::Value = serde_json::from_str(&out).expect("privatize --format json");
    let outer = (v["loops"].as_array().into_iter().flatten())
        .find(|l| l["depth"] == 0)
        .unwrap_or_else(|| panic!("{path}: no loop in the report\n{out}"));
    let flag = |k: &str| outer["parallel"][k].as_bool().unwrap_or(false);
    Ok((flag("before"), flag("after")))
}

#[test]
fn real_c_shapes_get_no_wrong_verdict_and_their_output_runs_like_the_original() {
    let work = std::env::temp_dir().join(format!("arrayflow-c-real-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let gcc = support::cbuild::have_gcc_openmp(&work);
    let mut wrong = Vec::new();
    let mut failed = Vec::new();
    let (mut found, mut missed, mut refused, mut refused_code, mut ran) = (0, 0, 0, 0, 0);
    let mut known_failures = 0;
    for &(name, function, truth) in CASES {
        let path = dir().join(format!("{name}.c"));
        match report(&path) {
            Ok((before, after)) => {
                let says_parallel = before || after;
                match truth {
                    Truth::Sequential if says_parallel => wrong.push(format!(
                        "{name}: the report calls loop parallel (before {before}, after {after})"
                    )),
                    Truth::Private if before => {
                        wrong.push(format!("{name}: the report calls loop parallel as written"))
                    }
                    Truth::Sequential => {}
                    _ if says_parallel => found += 1,
                    _ => missed += 1,
                }
            }
            Err(_) => refused += 1,
        }
        for transform in ["privatize", "expand"] {
            let p = path.to_string_lossy();
            let (code, emitted, err) =
                support::run(&[transform, "--emit", "code", "--allow-opaque", &p]);
            if code != 0 {
                eprintln!("{name}: {transform} --emit code refuses:\n{err}");
                refused_code += 1;
                continue;
            }
            // Expansion's copy loops are parallel whatever the loop is.
            if transform == "privatize"
                && truth == Truth::Sequential
                && emitted.contains("#pragma omp")
            {
                wrong.push(format!("{name}: a pragma on a loop that is not parallel"));
            }
            if !gcc {
                continue;
            }
            let known = KNOWN.iter().any(|&(k, t, _)| k == name && t == transform);
            let case = work.join(format!("{name}-{transform}"));
            match support::cbuild::runs_like_the_original(&dir(), name, function, &emitted, &case) {
                Ok(()) if known => failed.push(format!(
                    "{name}, {transform}: listed in KNOWN but runs like the original now"
                )),
                Ok(()) => ran += 1,
                Err(_) if known => known_failures += 1,
                Err(why) => failed.push(format!("{name}, {transform}: {why}")),
            }
        }
    }
    eprintln!(
        "{} fixtures: {found} parallel loops found, {missed} missed, {refused} reports refused, \
         {} wrong verdicts; {ran} emitted programs ran like the original at 1, 2, 4 threads, \
         {} failed, {known_failures} known failures, {refused_code} refused",
        CASES.len(),
        wrong.len(),
        failed.len()
    );
    std::fs::remove_dir_all(&work).ok();
    assert!(
        wrong.is_empty() && failed.is_empty(),
        "wrong verdicts:\n{}\n\nemitted C that fails:\n{}",
        wrong.join("\n"),
        failed.join("\n\n")
    );
}

/// Every `malloc` of the emitted C is checked: `row_scratch`'s private
/// copies (`a_p`, `a_w`: 2,408 and 1,204 bytes per thread) built with a
/// `malloc` that fails from 2,000 bytes up (the linker's `--wrap`) stop
/// the program before the kernel writes anything, with the message on
/// stderr and exit status 1. The original, which allocates nothing, runs
/// to the end under the same `malloc`.
#[test]
fn a_failed_allocation_stops_the_emitted_program_with_a_message() {
    let work = std::env::temp_dir().join(format!("arrayflow-c-real-oom-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    if !support::cbuild::have_gcc_openmp(&work) {
        return;
    }
    let path = dir().join("row_scratch.c");
    let (code, emitted, err) =
        support::run(&["privatize", "--emit", "code", &path.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    let original = std::fs::read_to_string(&path).unwrap();
    let spliced = support::cbuild::splice(&original, "row_scratch", &emitted).unwrap();
    let new_src = work.join("row_scratch.c");
    std::fs::write(&new_src, &spliced).unwrap();
    let wrap = work.join("failing_malloc.c");
    std::fs::write(
        &wrap,
        "#include <stddef.h>\nvoid *__real_malloc(size_t);\n\
         void *__wrap_malloc(size_t n) { return n >= 2000 ? NULL : __real_malloc(n); }\n",
    )
    .unwrap();
    let driver = dir().join("row_scratch.main.c");
    let run = |src: &Path, exe: &str| {
        let exe = work.join(exe);
        let built = std::process::Command::new("gcc")
            .args(["-O2", "-fopenmp", "-I"])
            .arg(dir())
            .args([src, &driver, &wrap])
            .args(["-Wl,--wrap=malloc", "-o"])
            .arg(&exe)
            .output()
            .expect("gcc runs");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let out = std::process::Command::new(&exe)
            .env("OMP_NUM_THREADS", "2")
            .output()
            .expect("the program runs");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, out, _) = run(&path, "original");
    assert_eq!(
        (code, out.lines().next()),
        (Some(0), Some("hand result: yes"))
    );
    let (code, out, err) = run(&new_src, "emitted");
    assert_eq!(code, Some(1), "{out}{err}\n{spliced}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err, "out of memory for a_p, a_w\n");
    std::fs::remove_dir_all(&work).ok();
}
