//! Loops with early exits (fixtures/c/exits/): `break` out of a search,
//! `continue` that skips elements, `return` from inside a loop, `switch`
//! with fall-through and `break`s inside its cases, `goto` out of a nest
//! and to the end of a loop body, a `break` that can never be taken, an
//! exit inside an inner loop of a parallel outer loop, a `while` loop left
//! by `break`, `do ... while` loops (alone, and one per row of a parallel
//! outer loop). Each fixture's opening comment works out by hand whether
//! its outermost loop is parallel as written, after privatization (the
//! exit flags the front end adds are private to each trip), or not at all.
//!
//! Checks per fixture:
//! - **The verdict is the hand answer.** `privatize --format json` says
//!   of the outermost loop exactly what the comment says at the sizes it
//!   analyses. A loop whose exit flag or data test carries a dependence is
//!   not proved parallel for every parameter value, so it gets no
//!   `#pragma omp` unless `--allow-unproved`; the fixtures in `PROVED`
//!   are proved, and get the pragma where they are parallel. `privatize --emit code` never
//!   puts a pragma on a loop that is not parallel, with or without
//!   `--allow-unproved`.
//! - **The emitted C computes what the original does.** The function
//!   `privatize --emit code` prints (with `--allow-unproved` too for a
//!   loop parallel after privatization, which it then marks: the exit
//!   flags are private copies of each thread) and the one `expand --emit code` prints, each spliced
//!   into the file in place of the original, and the whole file `privatize
//!   --emit code -o FILE` writes, each build with the fixture's driver
//!   (`NAME.main.c`, which prints every result, reals in `%a`) under `gcc
//!   -O2 -fopenmp -Wall` with no warning the original's build lacks, and
//!   print byte for byte what the original prints at 1, 2 and 4 OpenMP
//!   threads.
//! - **Every command is fast.** `flow`, `deps`, `privatize` and `expand`
//!   each take at most a second per fixture in a release build.
//!
//! Without gcc and OpenMP the run check is skipped, unless
//! `ARRAYFLOW_REQUIRE_GCC=1` (CI) makes that a failure.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The hand answer for a fixture's outermost loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Truth {
    /// Parallel as written.
    Parallel,
    /// Not parallel as written; parallel once some scalars are private.
    Private,
    /// Not parallel as written nor after privatization.
    Sequential,
}

/// (fixture and function, hand answer, parameters the file leaves open).
const CASES: &[(&str, Truth, &[&str])] = &[
    ("search_break", Truth::Sequential, &[]),
    ("skip_continue", Truth::Parallel, &[]),
    ("first_index", Truth::Sequential, &[]),
    ("switch_codes", Truth::Parallel, &[]),
    ("goto_out", Truth::Sequential, &[]),
    ("never_taken", Truth::Parallel, &[]),
    ("inner_break", Truth::Private, &[]),
    ("nested_continue", Truth::Private, &[]),
    ("guard_return", Truth::Parallel, &["n=64"]),
    ("return_in_loop", Truth::Sequential, &[]),
    ("switch_inner_break", Truth::Private, &[]),
    ("while_break", Truth::Sequential, &[]),
    ("goto_next", Truth::Private, &[]),
    ("sum_until", Truth::Sequential, &[]),
    ("find_in_matrix", Truth::Sequential, &[]),
    ("while_continue", Truth::Sequential, &[]),
    ("bounded_by_param", Truth::Parallel, &["n=64"]),
    ("search_index", Truth::Sequential, &[]),
    ("do_while", Truth::Sequential, &[]),
    ("do_rows", Truth::Private, &[]),
];

/// The fixtures whose outermost loop's verdict is proved for every
/// parameter value: their control is affine (`guard_return`), or it
/// reads memory but no dependence crosses the trips by the exact tests,
/// which read each such test as "may run" (docs/expansion.md §9.1,
/// *Privatization outside static control*).
const PROVED: &[&str] = &[
    "guard_return",
    "skip_continue",
    "switch_codes",
    "never_taken",
    "bounded_by_param",
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/c/exits")
}

/// `--param NAME=VALUE` for each of `params`.
fn param_args(params: &[&str]) -> Vec<String> {
    params
        .iter()
        .flat_map(|p| ["--param".to_string(), p.to_string()])
        .collect()
}

/// `arrayflow ARGS FILE --param ...`: stdout, or the diagnostics.
fn arrayflow(args: &[&str], path: &Path, params: &[&str]) -> Result<String, String> {
    let p = path.to_string_lossy();
    let mut all: Vec<&str> = args.to_vec();
    all.push(&p);
    let extra = param_args(params);
    all.extend(extra.iter().map(String::as_str));
    let (code, out, err) = support::run(&all);
    match code {
        0 => Ok(out),
        _ => Err(format!("`{}` exits {code}:\n{err}", all.join(" "))),
    }
}

/// What the report says of the fixture's outermost loop at the sizes it
/// analyses, and whether that is proved for every parameter value.
fn verdict(path: &Path, params: &[&str]) -> Result<(Truth, bool), String> {
    let out = arrayflow(&["privatize", "--format", "json"], path, params)?;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    let outer = (v["loops"].as_array().into_iter().flatten())
        .find(|l| l["depth"] == 0)
        .ok_or_else(|| format!("no loop in the report\n{out}"))?;
    let flag = |k: &str| outer["parallel"][k].as_bool().unwrap_or(false);
    let truth = match (flag("before"), flag("after")) {
        (true, _) => Truth::Parallel,
        (false, true) => Truth::Private,
        (false, false) => Truth::Sequential,
    };
    Ok((truth, v["proved"] != false))
}

/// The fixture's emitted function (`transform --emit code`) spliced into
/// the file, and the whole file `privatize --emit code -o FILE` writes.
fn outputs(
    work: &Path,
    name: &str,
    params: &[&str],
    unproved: bool,
) -> Result<Vec<(String, String)>, String> {
    let path = dir().join(format!("{name}.c"));
    let original = std::fs::read_to_string(&path).unwrap();
    let mut out = Vec::new();
    let mut runs = vec![("privatize", false), ("expand", false)];
    if unproved {
        runs.push(("privatize", true));
    }
    for (transform, allow) in runs {
        let mut args = vec![transform, "--emit", "code"];
        if allow {
            args.push("--allow-unproved");
        }
        let emitted = arrayflow(&args, &path, params)?;
        if allow && !emitted.contains("#pragma omp parallel for") {
            return Err(format!("no pragma with --allow-unproved\n{emitted}"));
        }
        let spliced = support::cbuild::splice(&original, name, &emitted)
            .map_err(|why| format!("{transform}: {why}\n{emitted}"))?;
        out.push((args.join(" "), spliced));
    }
    let file = work.join(format!("{name}-whole.c"));
    let f = file.to_string_lossy();
    arrayflow(&["privatize", "--emit", "code", "-o", &f], &path, params)?;
    let whole = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    out.push(("privatize -o".to_string(), whole));
    Ok(out)
}

#[test]
fn exit_fixtures_get_their_hand_verdicts_and_run_like_the_original() {
    let work = std::env::temp_dir().join(format!("arrayflow-c-exits-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let gcc = support::cbuild::have_gcc_openmp(&work);
    let mut failures = Vec::new();
    let (mut ran, mut found, mut by_hand) = (0, 0, 0);
    for &(name, truth, params) in CASES {
        let path = dir().join(format!("{name}.c"));
        by_hand += usize::from(truth != Truth::Sequential);
        let proved = PROVED.contains(&name);
        match verdict(&path, params) {
            Ok((got, got_proved)) => {
                found += usize::from(got != Truth::Sequential && got_proved);
                if got != truth {
                    failures.push(format!(
                        "{name}: the report says {got:?}, by hand {truth:?}"
                    ));
                }
                if got_proved != proved {
                    failures.push(format!("{name}: proved {got_proved}, want {proved}"));
                }
            }
            Err(why) => failures.push(format!("{name}: {why}")),
        }
        let pragma_wanted = proved && truth != Truth::Sequential;
        for allow in [false, true] {
            let mut args = vec!["privatize", "--emit", "code"];
            if allow {
                args.push("--allow-unproved");
            }
            match arrayflow(&args, &path, params) {
                Ok(e) if truth == Truth::Sequential && e.contains("#pragma omp") => failures.push(
                    format!("{name}: a pragma on a loop that is not parallel\n{e}"),
                ),
                Ok(e) if !allow && pragma_wanted != e.contains("#pragma omp parallel for") => {
                    failures.push(format!(
                        "{name}: pragma {}, want {pragma_wanted}\n{e}",
                        !pragma_wanted
                    ))
                }
                Ok(_) => {}
                Err(why) => failures.push(format!("{name}: {why}")),
            }
        }
        if !gcc {
            continue;
        }
        // `--allow-unproved` marks the loops privatization makes parallel
        // at the sizes analysed (a loop parallel as written is marked only
        // when proved).
        let unproved = !proved && truth == Truth::Private;
        let texts = match outputs(&work, name, params, unproved) {
            Ok(t) => t,
            Err(why) => {
                failures.push(format!("{name}: {why}"));
                continue;
            }
        };
        let driver = dir().join(format!("{name}.main.c"));
        for (k, (how, text)) in texts.iter().enumerate() {
            let case = work.join(format!("{name}-{k}"));
            match support::cbuild::runs_like(&path, text, &driver, &dir(), &case) {
                Ok(()) => ran += 1,
                Err(why) => failures.push(format!("{name}, {how}: {why}")),
            }
        }
    }
    eprintln!(
        "{} fixtures: outer loop proved parallel in {found}, parallel by hand in {by_hand} \
         (the others unproved: control that reads memory); \
         {} failures; {ran} emitted programs ran like the original at 1, 2, 4 threads",
        CASES.len(),
        failures.len()
    );
    std::fs::remove_dir_all(&work).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each of `flow`, `deps`, `privatize` and `expand` on each fixture in at
/// most a second in a release build (four in a build with debug
/// assertions, which is slower: that bound only catches a blow-up). The
/// slowest is printed. `deps` takes the parameters as symbols.
#[test]
fn every_command_on_every_exit_fixture_takes_at_most_a_second() {
    let limit = match cfg!(debug_assertions) {
        true => Duration::from_secs(4),
        false => Duration::from_secs(1),
    };
    let mut slow = Vec::new();
    let mut worst = (Duration::ZERO, String::new());
    for &(name, _, params) in CASES {
        let path = dir().join(format!("{name}.c"));
        for command in ["flow", "deps", "privatize", "expand"] {
            let params = if command == "deps" { &[] } else { params };
            let start = Instant::now();
            let r = arrayflow(&[command], &path, params);
            let took = start.elapsed();
            if let Err(why) = r {
                slow.push(format!("{name}: {why}"));
            }
            if took > worst.0 {
                worst = (took, format!("{command} {name}"));
            }
            if took > limit {
                slow.push(format!("{command} {name}: {took:?}"));
            }
        }
    }
    eprintln!("slowest: {} in {:?}", worst.1, worst.0);
    assert!(slow.is_empty(), "{}", slow.join("\n"));
}

/// Emitted C stops a loop where its exit flag is set, as the original
/// did, when the loop runs in order: `break;` right after `broke = 1;`
/// (worked out from each fixture: search_break's loop i and inner_break's
/// loop j each break once; inner_break's loop i, made parallel with
/// `--allow-unproved`, keeps its inner `break`, which ends loop j only).
/// A `goto` or `return` out of a nest breaks the inner loop where the flag
/// is set, and the outer one after the inner loop (`if (flag != 0)
/// break;`). The run check above compares what these print with the
/// original's output.
#[test]
fn emitted_c_breaks_where_the_flag_is_set() {
    let breaks = |out: &str| {
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        (lines.windows(2))
            .filter(|w| w[0].ends_with("= 1;") && w[1] == "break;")
            .count()
    };
    for (name, allow, want) in [
        ("search_break", false, 1),
        ("inner_break", false, 1),
        ("inner_break", true, 1),
        ("goto_out", false, 1),
        ("find_in_matrix", false, 1),
    ] {
        let mut args = vec!["privatize", "--emit", "code"];
        if allow {
            args.push("--allow-unproved");
        }
        let out = arrayflow(&args, &dir().join(format!("{name}.c")), &[]).unwrap();
        assert_eq!(breaks(&out), want, "{name}:\n{out}");
        let outer = usize::from(["goto_out", "find_in_matrix"].contains(&name));
        assert_eq!(
            out.matches(" != 0) break;").count(),
            outer,
            "{name}:\n{out}"
        );
        assert_eq!(
            out.matches("break;").count(),
            want + outer,
            "{name}:\n{out}"
        );
    }
}
