//! PolyBench/C 4.2.1 (fixtures/c/polybench) with no option but the file,
//! so at its own LARGE_DATASET sizes:
//! - `flow FILE` on the kernels whose bounded σ is over the default
//!   instance budget there ([`OVER_BUDGET`]; 12 by default, 20 with
//!   `ARRAYFLOW_CASES=20`):
//!   exit 0 with symbolic σ and a note when it is exact for every read,
//!   and then the output must be the library's `symbolic::analyze`
//!   rendered, every quast agreeing with bounded σ at every read instance
//!   at small parameter vectors, sampled and not (tests/support/symbolic.rs,
//!   the checker of tests/symbolic.rs); else E0302 (none of the 20 since the
//!   lexicographic splits of `symbolic::infer`). Kernels within the budget get bounded σ at LARGE, which takes
//!   minutes for some (atax): not run here.
//! - `expand FILE --emit code`: exit 0 with an expanded program (closed
//!   forms sampled at small sizes, proved or validated for every parameter
//!   value); heat-3d, whose time loop is the constant TSTEPS = 500 (no
//!   parameter: too large to sample), with that bound made a parameter
//!   (`codegen::lift`) and a header line saying so; each run is
//!   killed after `LIMIT` and counted a failure. Every fifth kernel and
//!   heat-3d by default (the 30 take about 90 s in the release profile);
//!   `ARRAYFLOW_CASES=30` runs all.
//!
//! Two kernels at a time (2 cores).

mod support;

use arrayflow::model::Program;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/c/polybench");

/// The longest one command may run in the test profile.
const LIMIT: Duration = Duration::from_secs(60);

fn kernels() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("fixtures/c/polybench")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}

/// (exit code, stdout, stderr, seconds) of the binary on `args` in the
/// fixtures directory; exit None when killed at `LIMIT`.
fn arrayflow(args: &[&str]) -> (Option<i32>, String, String, f64) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .current_dir(DIR)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let secs = start.elapsed().as_secs_f64();
    (code, out.join().unwrap(), err.join().unwrap(), secs)
}

/// The kernel as the command line loads it (preprocessed, LARGE sizes).
fn load(path: &Path) -> Program {
    let original = std::fs::read_to_string(path).expect("read the kernel");
    let text = arrayflow::cfront::preprocess::run(
        path,
        original,
        &arrayflow::cfront::preprocess::Options {
            mode: arrayflow::cfront::preprocess::Mode::Always,
            include: Vec::new(),
            define: Vec::new(),
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
    .text;
    let mut files = arrayflow::diagnostics::SourceFiles::new();
    let file = files.add(path.display().to_string(), text.clone());
    let (p, diags) = arrayflow::db::compile(path, &text, file);
    p.unwrap_or_else(|| panic!("{}: {:?}", path.display(), diags))
}

/// The kernels whose bounded σ at LARGE is over the default instance
/// budget (per kernel of the file, as the command counts: found with
/// `flow FILE` in the release profile, where each of these stops at once
/// on the budget and the others compute bounded σ, for minutes in some),
/// cheapest symbolic analysis first; `true` where symbolic σ is exact for
/// every read. The first `ARRAYFLOW_CASES` (default 12) are run.
const OVER_BUDGET: [(&str, bool); 20] = [
    ("syrk.c", true),
    ("trmm.c", true),
    ("gemm.c", true),
    ("syr2k.c", true),
    ("gramschmidt.c", true),
    ("jacobi-2d.c", true),
    ("symm.c", true),
    ("seidel-2d.c", true),
    ("deriche.c", true),
    ("nussinov.c", true),
    ("fdtd-2d.c", true),
    ("doitgen.c", true),
    ("ludcmp.c", true),
    ("lu.c", true),
    ("2mm.c", true),
    ("3mm.c", true),
    ("cholesky.c", true),
    ("floyd-warshall.c", true),
    ("adi.c", true),
    ("heat-3d.c", true),
];

/// What is wrong with `flow FILE` on one kernel, if anything; adds to
/// `counts` (kernels given symbolically, kept E0302, read instances
/// compared).
fn flow(path: &Path, counts: &Mutex<(usize, usize, usize)>) -> Option<String> {
    let name = path.file_name().unwrap().to_str().unwrap();
    let program = load(path);
    let symbolic = OVER_BUDGET
        .iter()
        .chain(&PAST_SYMBOLIC)
        .find(|k| k.0 == name)?
        .1;
    let (code, out, err, secs) = arrayflow(&["flow", name]);
    let head = || err.lines().take(6).collect::<Vec<_>>().join("\n");
    let sym = arrayflow::symbolic::analyze(&program);
    let exact = sym
        .reads
        .iter()
        .all(|r| matches!(r.outcome, arrayflow::symbolic::Outcome::Exact(_)));
    if exact != symbolic {
        return Some(format!(
            "flow {name}: symbolic σ exact: {exact}, expected {symbolic}"
        ));
    }
    if !exact {
        counts.lock().unwrap().1 += 1;
        return (code != Some(1) || !err.contains("error[E0302]") || !out.is_empty()).then(|| {
            format!(
                "flow {name}: symbolic σ not exact, so E0302 expected; exit {code:?}\n{}",
                head()
            )
        });
    }
    if code != Some(0) || !err.contains("σ given symbolically, exact for every parameter value") {
        return Some(format!(
            "flow {name}: exit {code:?} after {secs:.1} s\n{}",
            head()
        ));
    }
    if out != arrayflow::symbolic::render::text(&program, &sym) {
        return Some(format!(
            "flow {name}: the output is not symbolic::analyze's"
        ));
    }
    let n = support::symbolic::check_everywhere(&program, &sym);
    let mut c = counts.lock().unwrap();
    c.0 += 1;
    c.2 += n;
    None
}

/// Kernels within the instance budget at LARGE but past the 4·10⁶
/// instances where `flow` with no `--param` prefers symbolic σ (bounded σ
/// took 22-190 s there in the test profile); all exact.
const PAST_SYMBOLIC: [(&str, bool); 4] = [
    ("atax.c", true),
    ("bicg.c", true),
    ("gemver.c", true),
    ("mvt.c", true),
];

/// Kernels too large to sample as they are (checked by hand: heat-3d's
/// time loop runs the constant TSTEPS = 500 steps), which `expand --emit
/// code` samples with that bound made a parameter.
const TOO_LARGE: [&str; 1] = ["heat-3d.c"];

/// What is wrong with `expand FILE --emit code` on one kernel, if anything.
fn expand(path: &Path) -> Option<String> {
    let name = path.file_name().unwrap().to_str().unwrap();
    let (code, out, err, secs) = arrayflow(&["expand", name, "--emit", "code"]);
    eprintln!("expand {name}: {secs:.1} s");
    let ok = if TOO_LARGE.contains(&name) {
        code == Some(0)
            && out.contains(
                "constant loop bounds made parameters to sample at small sizes: bound_500 = 500",
            )
            && out.contains("int bound_500")
    } else {
        code == Some(0) && out.contains("maximal static expansion") && !err.contains("error[")
    };
    (!ok).then(|| {
        format!(
            "expand {name} --emit code: exit {code:?} after {secs:.1} s\n{}",
            err.lines().take(6).collect::<Vec<_>>().join("\n")
        )
    })
}

/// Runs `f` on `all`, two at a time; the failures.
fn each_kernel(all: Vec<PathBuf>, f: impl Fn(&Path) -> Option<String> + Sync) -> Vec<String> {
    let queue = Mutex::new(all);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(p) = queue.lock().unwrap().pop() else {
                    return;
                };
                if let Some(bad) = f(&p) {
                    failures.lock().unwrap().push(bad);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn flow_with_no_option_over_the_budget_gives_exact_symbolic_sigma() {
    let all = kernels();
    assert_eq!(all.len(), 30, "{all:?}");
    let n = support::cases(12) as usize;
    let picked: Vec<PathBuf> = OVER_BUDGET
        .iter()
        .take(n)
        .chain(&PAST_SYMBOLIC)
        .map(|k| Path::new(DIR).join(k.0))
        .collect();
    let counts = Mutex::new((0, 0, 0));
    let failures = each_kernel(picked, |p| flow(p, &counts));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let (symbolic, kept, compared) = counts.into_inner().unwrap();
    eprintln!("{symbolic} kernels given symbolically, {kept} kept E0302, {compared} read instances compared");
    assert!(symbolic >= 1 && compared > 10_000, "{symbolic}, {compared}");
}

#[test]
fn expand_emit_code_with_no_option_finishes() {
    let all = kernels();
    assert_eq!(all.len(), 30, "{all:?}");
    let n = support::cases(6) as usize;
    let step = (30 / n.clamp(1, 30)).max(1);
    let picked: Vec<PathBuf> = (all.iter().enumerate())
        .filter(|(k, p)| {
            k % step == 0 || TOO_LARGE.contains(&p.file_name().unwrap().to_str().unwrap())
        })
        .map(|(_, p)| p.clone())
        .collect();
    let failures = each_kernel(picked, expand);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
