//! PolyBench/C 4.2.1 as shipped (fixtures/c/polybench): every
//! kernel is preprocessed (its arrays are declared through `polybench.h`
//! macros), its parameters take their defaults from `main`'s calls, and
//! it goes through `check` and `deps` with no option but the file, and
//! through `flow`, `expand --emit code` and `verify --transform mse` at
//! the MINI dataset (`-D MINI_DATASET`: bounded σ and equivalence there;
//! LARGE with no option is tests/polybench_flow.rs). `verify`
//! runs the original and the expanded program in the interpreter and
//! compares every value read (2 seeds, with 10^7 steps: floyd-warshall's
//! expanded program takes more than the default 10^6 at n = 60). Two kernels at a
//! time (2 cores): 56 s for the 30 in the test profile on the CI machine.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/c/polybench");

fn kernels() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("fixtures/c/polybench")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}

/// (exit code, stdout, stderr) of the binary on `args`, run in the
/// fixtures directory.
fn arrayflow(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .current_dir(DIR)
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// What is wrong with one kernel, if anything.
fn kernel(name: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mini = ["-D", "MINI_DATASET"];
    let verify = [
        "verify",
        name,
        "--transform",
        "mse",
        "--max-steps",
        "10000000",
        "--seeds",
        "2",
    ];
    let runs: Vec<(Vec<&str>, &str)> = vec![
        (vec!["check", name], ": ok"),
        (vec!["deps", name], ""),
        (
            [&["flow", name][..], &mini].concat(),
            "# sources of every read",
        ),
        (
            [&["expand", name, "--emit", "code"][..], &mini].concat(),
            "maximal static expansion",
        ),
        ([&verify[..], &mini].concat(), "mse: equivalent"),
    ];
    for (args, want) in runs {
        let (code, out, err) = arrayflow(&args);
        let unsupported = err.contains("warning[W09") || err.contains("error[");
        if code != Some(0)
            || unsupported
            || !out.contains(want)
            || !err.contains("was preprocessed")
        {
            bad.push(format!(
                "{}: exit {code:?}\n{}\n{}",
                args.join(" "),
                err.lines().take(8).collect::<Vec<_>>().join("\n"),
                out.lines().take(3).collect::<Vec<_>>().join("\n")
            ));
        }
    }
    bad
}

#[test]
fn every_polybench_kernel_is_accepted_analysed_and_expanded() {
    let all = kernels();
    assert_eq!(all.len(), 30, "{all:?}");
    let queue = Mutex::new(all);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(p) = queue.lock().unwrap().pop() else {
                    return;
                };
                let name = p.file_name().unwrap().to_str().unwrap().to_string();
                let bad = kernel(&name);
                failures.lock().unwrap().extend(bad);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
