//! PolyBench/C 4.2.1 as shipped (fixtures/c/polybench, issue 21): every
//! kernel is preprocessed (its arrays are declared through `polybench.h`
//! macros), its parameters take their defaults from `main`'s calls, and
//! it goes through `check` and `deps` with no option but the file, and
//! through `flow`, `expand --emit code` and `verify --transform mse` at
//! the MINI dataset (`-D MINI_DATASET`: at the default LARGE sizes `flow`
//! needs more access instances than the default budget, E0302). `verify`
//! runs the original and the expanded program in the interpreter and
//! compares every value read (2 seeds, with 10^7 steps: floyd-warshall's
//! expanded program takes more than the default 10^6 at n = 60). Two kernels at a
//! time (2 cores). `expand` and `verify` are the costly part (several
//! minutes for all 30 on the CI machine): they run on every fifth kernel
//! in name order (2mm, cholesky, durbin, gesummv, lu, symm), on all 30 with
//! `ARRAYFLOW_CASES=30` or more.

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

/// What is wrong with one kernel, if anything; `expand` and `verify` too
/// when `expanded`.
fn kernel(name: &str, expanded: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let mini = ["-D", "MINI_DATASET"];
    let mut runs: Vec<(Vec<&str>, &str)> = vec![
        (vec!["check", name], ": ok"),
        (vec!["deps", name], ""),
        (
            [&["flow", name][..], &mini].concat(),
            "# sources of every read",
        ),
    ];
    if expanded {
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
        runs.push((
            [&["expand", name, "--emit", "code"][..], &mini].concat(),
            "maximal static expansion",
        ));
        runs.push(([&verify[..], &mini].concat(), "mse: equivalent"));
    }
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
    let every = std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n >= 30);
    let queue = Mutex::new(all.into_iter().enumerate().collect::<Vec<_>>());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((k, p)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let name = p.file_name().unwrap().to_str().unwrap().to_string();
                let bad = kernel(&name, every || k % 5 == 0);
                failures.lock().unwrap().extend(bad);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
