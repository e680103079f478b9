//! `expand --emit code` on a program whose size does not shrink with its
//! parameters (a time loop of the constant 60,000 steps: over a million
//! access instances at every sample): the constant becomes a parameter
//! with that default (`codegen::lift`), the header says so, and the
//! emitted program at its defaults is equivalent to the original (the
//! interpreter, `equiv`, at N = 3 with the 60,000 steps run).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

const LONG: &str = "param N = 6;
real A[0..N + 1];
real B[0..N + 1];
for t = 1 to 60000 do
  for i = 1 to N do
    S: B[i] = A[i - 1] + A[i + 1];
  end
  for i = 1 to N do
    U: A[i] = B[i];
  end
end
";

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(BIN).args(args).output().expect("runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_constant_time_loop_is_lifted_and_the_result_is_equivalent() {
    let dir = std::env::temp_dir().join(format!("arrayflow-lift-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let original = dir.join("long.loop");
    std::fs::write(&original, LONG).unwrap();
    let o = original.to_str().unwrap();
    let (code, out, err) = run(&["expand", o, "--emit", "code"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(
            "# constant loop bounds made parameters to sample at small sizes: bound_60000 = 60000"
        ),
        "{out}"
    );
    assert!(out.contains("param bound_60000 = 60000;"), "{out}");
    assert!(out.contains("for t = 1 to bound_60000 do"), "{out}");
    let emitted = dir.join("emitted.loop");
    std::fs::write(&emitted, &out).unwrap();
    let e = emitted.to_str().unwrap();
    // The single-assignment program tests up to three conditions per
    // statement instance: more steps than the original's 360,000.
    let (code, out, err) = run(&[
        "equiv",
        o,
        e,
        "--param",
        "N=3",
        "--seeds",
        "2",
        "--max-steps",
        "10000000",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("equivalent"), "{out}");
    // Without lifting, the same program with a short loop is sampled as it
    // is: no parameter added.
    let short = dir.join("short.loop");
    std::fs::write(&short, LONG.replace("60000", "10")).unwrap();
    let (code, out, err) = run(&["expand", short.to_str().unwrap(), "--emit", "code"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("bound_"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
