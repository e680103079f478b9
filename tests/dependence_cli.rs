//! `arrayflow deps` end to end: JSON shape, text, stats, exit codes.

use std::process::Command;

fn deps(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .arg("deps")
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// This fixture's write/read pair is anti (the read of a[2k][j] at i = k
/// runs before the write at i = 2k), not flow.
#[test]
fn json_of_the_direction_example() {
    let (code, out, err) = deps(&[
        "fixtures/papers/maydan-1.7-direction.loop",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let pairs = v["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 2);
    let p = &pairs[1];
    let want = serde_json::json!({
        "array": "a",
        "src": {"stmt": "S", "access": "write"},
        "dst": {"stmt": "S", "access": 0},
        "dependent": true,
        "kinds": ["anti"],
        "directions": [["0", "0"], ["-", "0"]],
        "distances": [[0, 0]],
        "decided_by": "svpc",
        "exact": true,
        "loops": ["i", "j"]
    });
    assert_eq!(p, &want);
    assert!(v.get("stats").is_none());
}

#[test]
fn stats_in_text_and_json() {
    let (code, out, _) = deps(&["fixtures/papers/maydan-1.8-memo-a.loop", "--stats"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("a: S write -> S read 0: independent [svpc, exact]"),
        "{out}"
    );
    assert!(out.contains("hit rate"), "{out}");
    assert!(out.contains("svpc"), "{out}");
    let (_, out, _) = deps(&[
        "fixtures/papers/maydan-1.8-memo-a.loop",
        "--stats",
        "--format",
        "json",
        "--memo",
        "off",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["stats"]["memo"], "off");
    assert_eq!(v["stats"]["gcd"]["hits"], 0);
    assert!(v["stats"]["problems"].as_u64().unwrap() >= 2);
}

#[test]
fn conservative_answers_say_why() {
    let (code, out, _) = deps(&["fixtures/papers/maydan-1.1-genaffine-raw.loop"]);
    assert_eq!(code, 0);
    assert!(out.contains("a: S write -> S read 2: dependent (flow, anti); loops (i); directions (*) [svpc, conservative]"), "{out}");
    assert!(
        out.contains("note: subscript 1 is not affine on both sides"),
        "{out}"
    );
}

#[test]
fn exit_codes() {
    let (code, _, err) = deps(&["fixtures/no-such-file.loop"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = deps(&["fixtures/errors/undeclared.loop"]);
    assert_eq!(code, 1);
    let (code, _, _) = deps(&[]);
    assert_eq!(code, 2);
}
