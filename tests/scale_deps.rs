//! Dependence analysis at scale: pairs streamed, never held; the memory
//! budget and the pair limit end a run with a diagnostic; loop dependences
//! test only the pairs inside a common loop.

use arrayflow::dependence::report::{self, Scope};
use arrayflow::dependence::{Config, Tester};
use std::process::Command;

/// `n` statements `S<k>: A[1] = A[2];`, each outside any loop, or all in
/// one loop.
fn pattern(n: usize, in_loop: bool) -> String {
    let mut s = String::from("param N = 4;\nreal A[1..2];\n");
    if in_loop {
        s.push_str("for i = 1 to N do\n");
    }
    for k in 0..n {
        s.push_str(&format!("S{k}: A[1] = A[2];\n"));
    }
    if in_loop {
        s.push_str("end\n");
    }
    s
}

fn compile(text: &str) -> arrayflow::model::Program {
    let (program, diags) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    program.unwrap_or_else(|| panic!("the pattern compiles: {diags:?}"))
}

fn file(text: &str) -> tempfile_path::Path {
    tempfile_path::Path::new(text)
}

/// A file under the target's temporary directory, removed on drop.
mod tempfile_path {
    pub struct Path(pub std::path::PathBuf);
    impl Path {
        pub fn new(text: &str) -> Path {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            let p = dir.join(format!(
                "scale-deps-{}-{}.loop",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let mut f = std::fs::File::create(&p).expect("creates");
            f.write_all(text.as_bytes()).expect("writes");
            Path(p)
        }
    }
    use std::io::Write;
    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn arrayflow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// n statements: n writes and n reads of A, so n(n+1)/2 write pairs and
/// n² write-read pairs; `count` finds that without analysing any, and
/// `each` visits exactly that many.
#[test]
fn pairs_are_counted_and_visited() {
    for n in [1, 2, 7, 40] {
        let p = compile(&pattern(n, false));
        let want = (n * (n + 1) / 2 + n * n) as u64;
        assert_eq!(report::count(&p), want, "n = {n}");
        let mut tester = Tester::new(Config::default());
        let mut seen = 0u64;
        report::each(&p, &mut tester, Scope::All, |_| {
            seen += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(seen, want, "n = {n}");
    }
}

/// Loop dependences look only at pairs inside a common loop: none for
/// statements outside loops (were all n² tested, 2,000 statements took 45 s
/// and 2 GB), every pair when one loop holds them all.
#[test]
fn loop_dependences_skip_pairs_outside_loops() {
    let visit = |text: &str| {
        let p = compile(text);
        let mut tester = Tester::new(Config::default());
        let mut seen = 0u64;
        report::each(&p, &mut tester, Scope::CommonLoop, |_| {
            seen += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        (seen, tester.stats().problems)
    };
    assert_eq!(visit(&pattern(2000, false)), (0, 0));
    let (seen, problems) = visit(&pattern(30, true));
    assert_eq!(seen, 30 * 31 / 2 + 30 * 30);
    assert!(problems > 0);
    // Two loops in sequence: no pair across them.
    let two = "param N = 4;\nreal A[1..N];\nfor i = 1 to N do S: A[i] = A[i]; end\n\
               for j = 1 to N do T: A[j] = A[j]; end\n";
    assert_eq!(visit(two).0, 2 * (1 + 1));
    let p = compile(&pattern(2000, false));
    let carried = arrayflow::db::deps::carried_by_loop(&p).expect("fits");
    assert!(carried.is_empty());
}

/// `deps` streams: 1,000 statements (1.5 million pairs, which took about
/// 500 MB when they were collected before printing) run within 48 MiB, and
/// print every pair.
#[test]
fn deps_streams_under_a_small_budget() {
    let f = file(&pattern(1000, false));
    let path = f.0.to_str().unwrap();
    let (code, out, err) = arrayflow(&["deps", path, "--max-memory", "48M"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1000 * 1001 / 2 + 1000 * 1000);
    assert_eq!(
        out.lines().nth(2),
        Some("A: S0 write -> S1 write: dependent (output) [svpc, exact]")
    );
}

/// Over the memory budget, `deps` ends with E0304, not an allocation abort.
#[test]
fn deps_over_the_budget_is_e0304() {
    let f = file(&pattern(300, false));
    let path = f.0.to_str().unwrap();
    let (code, _, err) = arrayflow(&["deps", path, "--max-memory", "64K"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("E0304"), "{err}");
}

/// Past `--max-pairs`, E0306 before any pair is analysed or printed.
#[test]
fn deps_past_the_pair_limit_is_e0306() {
    let f = file(&pattern(100, false));
    let path = f.0.to_str().unwrap();
    let (code, out, err) = arrayflow(&["deps", path, "--max-pairs", "15049"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("E0306") && err.contains("15050 pairs"),
        "{err}"
    );
    assert!(out.is_empty());
    let (code, out, err) = arrayflow(&["deps", path, "--max-pairs", "15050"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 15050);
}
