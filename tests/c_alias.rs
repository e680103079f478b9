//! Pointers in C (docs/c.md, "Pointers and aliasing"): the programs of
//! fixtures/c/alias, each with its dependences and loop verdicts worked out
//! by hand in its header comment, through `deps` and `privatize` as a user
//! runs them. A pointer set once into an array is that array at an offset;
//! any other pointer, and parameters that may overlap, never let a loop
//! through them be called parallel.

use std::process::Command;

fn arrayflow(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?}: {}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn fixture(name: &str) -> String {
    format!("{}/fixtures/c/alias/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The verdict of every loop `privatize` reports, in order (`parallel`,
/// `not parallel`, `parallel after privatizing X`).
fn verdicts(name: &str, params: &[&str]) -> Vec<String> {
    let path = fixture(name);
    let mut args = vec!["privatize", path.as_str()];
    for p in params {
        args.extend(["--param", p]);
    }
    (arrayflow(&args).lines())
        .filter(|l| l.starts_with("loop "))
        .map(|l| l.split_once(": ").map_or("", |(_, v)| v).to_string())
        .collect()
}

fn deps(name: &str) -> String {
    arrayflow(&["deps", &fixture(name)])
}

#[test]
fn a_global_pointer_into_another_array_carries_its_distance() {
    // xx = flat + 63: S writes flat[i + 64], read as flat[i] 64 trips on;
    // T reads flat[i + 64] 64 trips before it writes it.
    let d = deps("offset.c");
    assert!(
        d.contains("flat: S write -> S read 0: dependent (flow); loops (i); directions (+); distances (64) [acyclic, exact]"),
        "{d}"
    );
    assert!(
        d.contains("flat: T write -> T read 0: dependent (anti); loops (i); directions (-); distances (-64)"),
        "{d}"
    );
    assert_eq!(
        verdicts("offset.c", &[]),
        ["not parallel", "parallel after privatizing flat"]
    );
}

#[test]
fn a_local_pointer_set_once_is_its_array() {
    // q = A + 1: S writes A[i + 1] and reads A[i] (distance 1); T reads
    // A[i + 1] and writes B[i].
    let d = deps("local.c");
    assert!(
        d.contains("A: S write -> S read 0: dependent (flow); loops (i); directions (+); distances (1) [acyclic, exact]"),
        "{d}"
    );
    assert_eq!(verdicts("local.c", &[]), ["not parallel", "parallel"]);
}

#[test]
fn a_pointer_of_unknown_value_is_a_may_alias() {
    // p is A or B: the write through it may hit A[i + 1] that a later
    // trip reads. The loop over B alone is parallel.
    assert_eq!(
        verdicts("unknown.c", &["mode=1"]),
        ["not parallel", "parallel"]
    );
}

#[test]
fn parameters_overlap_unless_restrict_or_the_calls_say_otherwise() {
    let sizes = ["n=8", "a_dim0=8", "b_dim0=9"];
    // No call and no `restrict`: a[i] may be b[i + 1].
    assert_eq!(verdicts("params.c", &sizes), ["not parallel"]);
    assert_eq!(verdicts("restrict.c", &sizes), ["parallel"]);
    // `shift` is only called with distinct arrays (inlined twice: both
    // parallel); `twice` is inlined for (X, Y), parallel, and also called
    // with (Z + 1, Z), so its own loop may carry a dependence.
    assert_eq!(
        verdicts("callers.c", &["n=16", "a_dim0=16", "b_dim0=17"]),
        ["parallel", "parallel", "parallel", "not parallel"]
    );
}
