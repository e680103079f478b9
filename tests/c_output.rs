//! The C that `privatize --emit code`, `expand --emit code` and `expand
//! --transform contract --parallel i --emit code` print for the fixtures of
//! fixtures/c/output/ (typedef'd floats and casts, names the output must
//! not take, functions with a result, macros called like functions,
//! pointer parameters: `privatize` only, the others need their extents),
//! spliced into the file in place of its function, built with `gcc -O2
//! -fopenmp -Wall -Werror=implicit-function-declaration` with the
//! fixture's driver (`NAME.main`, which prints every array with `%a`) and
//! run at 1, 2 and 4 threads: the output must be byte for byte the
//! original's, and the build must warn no more than the original's.
//! Without gcc and OpenMP the test says it skipped, unless
//! `ARRAYFLOW_REQUIRE_GCC=1` makes that a failure.

mod support;

use std::path::{Path, PathBuf};

const THREADS: [&str; 3] = ["1", "2", "4"];
const PRIVATIZE: &[&str] = &["privatize", "--emit", "code"];
const EXPAND: &[&str] = &["expand", "--emit", "code"];
const CONTRACT: &[&str] = &[
    "expand",
    "--transform",
    "contract",
    "--parallel",
    "i",
    "--emit",
    "code",
];
const ALL: &[Args] = &[PRIVATIZE, EXPAND, CONTRACT];
/// The contraction with no loop made parallel.
const CONTRACT_ONLY: Args = &["expand", "--transform", "contract", "--emit", "code"];

/// A command's arguments.
type Args = &'static [&'static str];

/// Each fixture, the parameters it needs, and the transformations run.
const FIXTURES: &[(&str, Args, &[Args])] = &[
    ("typedef-float", &[], ALL),
    ("fresh-names", &[], ALL),
    ("returns", &[], ALL),
    ("macros", &[], ALL),
    // Its loop carries the sum: no `--parallel i`.
    ("sum", &[], &[PRIVATIZE, EXPAND, CONTRACT_ONLY]),
    (
        "pointers",
        &[
            "--param",
            "n=37",
            "--param",
            "a_dim0=40",
            "--param",
            "b_dim0=40",
        ],
        &[PRIVATIZE],
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/c/output")
}

fn arrayflow(args: &[&str], params: &[&str], file: &Path) -> String {
    let file = file.to_string_lossy();
    let all: Vec<&str> = args.iter().chain(params).copied().chain([&*file]).collect();
    let (code, out, err) = support::run(&all);
    assert_eq!(code, 0, "{args:?} {file}: {err}");
    out
}

/// `file` with its function replaced by `output`: the function starts at
/// the first line at column 0 that `output` has too and that opens a
/// definition, and ends at the first `}` at column 0 after it.
fn drop_in(file: &str, output: &str) -> String {
    let head = file
        .lines()
        .find(|l| {
            !l.starts_with([' ', '\t', '/', '#', '{', '}'])
                && l.contains('(')
                && !l.ends_with(';')
                && output.lines().any(|o| o == *l)
        })
        .unwrap_or_else(|| panic!("the output is not the file's function:\n{output}"));
    // The line itself, not the same words in a comment above it.
    let start = file.find(&format!("\n{head}\n")).unwrap() + 1;
    let end = file[start..].find("\n}").unwrap() + start + 2;
    format!("{}{output}{}", &file[..start], &file[end..])
}

/// `c` written as `name`.c in `work` and built into `name`: its warnings.
fn build(work: &Path, name: &str, c: &str) -> Result<Vec<String>, String> {
    let src = work.join(format!("{name}.c"));
    std::fs::write(&src, c).unwrap();
    support::cbuild::gcc(&[src.as_path()], None, &work.join(name))
}

#[test]
fn emitted_functions_drop_in_and_compute_what_the_file_does() {
    let work = std::env::temp_dir().join(format!("arrayflow-c-output-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    if !support::cbuild::have_gcc_openmp(&work) {
        std::fs::remove_dir_all(&work).ok();
        return;
    }
    let mut checked = 0;
    for &(name, params, transforms) in FIXTURES {
        let file = dir().join(format!("{name}.c"));
        let text = std::fs::read_to_string(&file).unwrap();
        let main = std::fs::read_to_string(dir().join(format!("{name}.main"))).unwrap();
        let original = format!("{text}{main}");
        let base = build(&work, name, &original)
            .unwrap_or_else(|e| panic!("{name}: the original does not build:\n{e}"));
        let expected = support::cbuild::run(&work.join(name), "1");
        for (k, &args) in transforms.iter().enumerate() {
            let output = arrayflow(args, params, &file);
            let c = format!("{}{main}", drop_in(&text, &output));
            let built = format!("{name}-{k}");
            let warned = build(&work, &built, &c)
                .unwrap_or_else(|e| panic!("{name} {args:?}: does not build:\n{e}\n{c}"));
            let new: Vec<&String> = warned.iter().filter(|w| !base.contains(w)).collect();
            assert!(new.is_empty(), "{name} {args:?}: new warnings {new:?}\n{c}");
            for threads in THREADS {
                assert_eq!(
                    support::cbuild::run(&work.join(&built), threads),
                    expected,
                    "{name} {args:?} at {threads} threads:\n{c}"
                );
                checked += 1;
            }
        }
    }
    std::fs::remove_dir_all(&work).ok();
    let cases: usize = FIXTURES.iter().map(|(_, _, t)| t.len()).sum();
    assert_eq!(checked, cases * THREADS.len());
}
