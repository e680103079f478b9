//! Cells cost only for the cells touched: every command, and the
//! language server, on programs that declare huge arrays and touch a few
//! cells, run as child processes under a 2 GB address-space limit: nothing
//! may allocate by the declared size (that ends in an allocation abort,
//! and the language server would die on opening such a file).
//!
//! The expected sources were checked by hand (the comments say why), and
//! `verify` checks σ against the interpreter's executions at these sizes.

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// The address-space limit of every child, in KiB (`ulimit -v`).
const LIMIT_KB: u64 = 2_000_000;

/// A huge array barely used: 10^8 + 1 cells declared, 4 written.
const BIG: &str = "param N = 100000000;\nreal B[0..N];\nfor i = 0 to 3 do\n  B[i] = 1;\nend\n";

/// Its 2-D variant: 10^10 cells declared.
const BIG2: &str =
    "param N = 100000;\nreal C[0..N, 0..N];\nfor i = 0 to 3 do\n  C[i, i] = 1;\nend\n";

/// Reads across kernels, of cells written and cells never written, in a
/// 1-D and a 2-D array.
const READS: &str = "param N = 100000000;
real B[0..N], A[0..N, 0..N];
for i = 0 to 3 do
  S: B[i] = 1;
end
for i = 2 to 5 do
  T: A[i, N] = B[i] + B[i + 1];
end
U: B[3] = A[2, N] + A[6, N];
V: use(B[N]);
";

/// A file holding `text`, in a directory of its own for each call: the
/// tests run in parallel threads and reuse names, and a shared path let one
/// test read another's half-written file.
fn file(name: &str, text: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("arrayflow-cells-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `sh -c 'ulimit -v LIMIT; exec "$0" "$@"'`: `program` under the limit.
fn limited(program: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB}; exec \"$0\" \"$@\""))
        .arg(program);
    c
}

/// Runs `arrayflow ARGS FILE` under the limit; panics unless it succeeds.
fn ok(args: &[&str], path: &PathBuf) -> String {
    let out: Output = limited(BIN).args(args).arg(path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "arrayflow {args:?} failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

#[test]
fn flow_sees_the_writes_of_earlier_kernels_and_the_initial_values() {
    let path = file("reads.loop", READS);
    let text = ok(&["flow"], &path);
    // B[i] for i = 2, 3 was written by S[i] in the first loop; B[4], B[5]
    // never were. B[i + 1] is S[3] at i = 2 only. A[2, N] is T[2];
    // A[6, N] and B[N] were never written.
    for line in [
        "T[i] reads B (access 0) from S[2]   for i = 2",
        "T[i] reads B (access 0) from S[3]   for i = 3",
        "T[i] reads B (access 0) from the initial value   for i = 4..5",
        "T[i] reads B (access 1) from S[3]   for i = 2",
        "T[i] reads B (access 1) from the initial value   for i = 3..5",
        "U reads A (access 0) from T[2]",
        "U reads A (access 1) from the initial value",
        "V reads B (access 0) from the initial value",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
    assert_eq!(text.matches(" reads ").count(), 8, "{text}");
}

#[test]
fn flow_of_the_issue_programs() {
    for (name, text) in [("big.loop", BIG), ("big2.loop", BIG2)] {
        let out = ok(&["flow", "--format", "json"], &file(name, text));
        let v: Value = serde_json::from_str(&out).unwrap();
        // Nothing reads: no sources at all.
        assert_eq!(v["accesses"], json!([]), "{out}");
        let out = ok(
            &["flow", "--format", "json", "--instances"],
            &file(name, text),
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["reads"], json!([]), "{out}");
    }
}

#[test]
fn expand_counts_declared_cells_without_making_them() {
    let out = ok(&["expand"], &file("big.loop", BIG));
    // 4 dead writes, so no class; the declared cells are only counted.
    assert!(
        out.contains("B: 100000001 / 0 (rectangular 100000001)"),
        "{out}"
    );
    let out = ok(&["expand"], &file("big2.loop", BIG2));
    assert!(out.contains("C: 10000200001 / 0"), "{out}");
    let out = ok(&["expand"], &file("reads.loop", READS));
    // T[2]'s write of A[2, N] is read by U: one class; S[2], S[3] and U's
    // write of B are read (by T and, for U, by no one: dead).
    assert!(out.contains("A: 10000000200000001 / 1 "), "{out}");
    assert!(
        out.contains("B: 100000001 cells declared, 4 written; 2 classes"),
        "{out}"
    );
}

/// The expanded program of the 10^8-cell array copies out the 4
/// cells written, not every declared one (which ended in E0601 when its
/// doall marks were checked), is proved (its labels are exact σ's, so the
/// emitter validates at small sizes only), and runs like the original at
/// N = 10^8.
#[test]
fn expand_emits_a_copy_out_of_the_cells_written() {
    let out = ok(&["expand", "--emit", "code"], &file("big.loop", BIG));
    assert!(out.contains("real B_1[0..3];"), "{out}");
    // Too big to read every final value: the copy-out replays the four
    // writes, each a copy from B_1.
    assert!(
        out.contains("for i = 0 to 3 doall\n  @copy copy_out: B[i] = B_1[i];\nend"),
        "{out}"
    );
    assert!(out.contains("static: proved for every N"), "{out}");
    assert!(out.contains("validated at (N=3)"), "{out}");
    // The interpreter, not the emitter's word: the emitted program reads
    // and leaves what the original does at N = 10^8.
    let emitted = file("big_expanded.loop", &out);
    let o = limited(BIN)
        .args(["equiv", "--seeds", "3"])
        .arg(file("big.loop", BIG))
        .arg(&emitted)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("equivalent"), "{text}");
}

#[test]
fn run_holds_the_touched_cells_only() {
    let path = file("reads.loop", READS);
    let out = ok(&["run", "--format", "json"], &path);
    let v: Value = serde_json::from_str(&out).unwrap();
    // T reads 2 cells 4 times, U 2 cells, V one.
    let reads = v["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 11, "{out}");
    let initial: Vec<&Value> = reads
        .iter()
        .filter(|r| r["writer"] == json!("initial"))
        .collect();
    // B[4], B[5] (twice: B[i] at 4, 5; B[i + 1] at 3, 4), B[6], A[6, N], B[N].
    assert_eq!(initial.len(), 7, "{out}");
    let b = &v["arrays"][0];
    assert_eq!(b["touched_only"], json!(true), "{out}");
    // B[0..6] and B[N].
    let index: Vec<&Value> = b["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["index"])
        .collect();
    let want: Vec<Value> = (0..=6).chain([100_000_000]).map(|i| json!([i])).collect();
    assert_eq!(index, want.iter().collect::<Vec<_>>(), "{out}");
    for (name, text) in [("big.loop", BIG), ("big2.loop", BIG2)] {
        let out = ok(&["run"], &file(name, text));
        assert!(out.contains("the 4 touched shown"), "{out}");
    }
}

#[test]
fn verify_and_deps() {
    for (name, text) in [
        ("big.loop", BIG),
        ("big2.loop", BIG2),
        ("reads.loop", READS),
    ] {
        let path = file(name, text);
        ok(&["verify"], &path);
        ok(&["deps"], &path);
    }
}

#[test]
fn the_language_server_answers_on_huge_arrays() {
    let script = file(
        "arrayflow-limited.sh",
        &format!("#!/bin/sh\nulimit -v {LIMIT_KB}\nexec \"{BIN}\" \"$@\"\n"),
    );
    Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    let mut c = Client::start(script.to_str().unwrap());
    for (k, (name, text)) in [
        ("big.loop", BIG),
        ("big2.loop", BIG2),
        ("reads.loop", READS),
    ]
    .into_iter()
    .enumerate()
    {
        let uri = format!("file:///work/{name}");
        c.open(&uri, text);
        let diags = c.diagnostics(&uri, 1);
        assert!(
            diags.iter().all(|d| d["severity"] != json!(1)),
            "{name}: {diags:?}"
        );
        if k == 2 {
            // Hover on U's read of A[2, N]: T at i = 2 wrote it (the
            // symbolic source, `T(2)`, for every parameter value).
            let at = text.find("A[2, N]").unwrap() + 1;
            let line = text[..at].matches('\n').count();
            let col = at - text[..at].rfind('\n').map_or(0, |p| p + 1);
            let h = c.call(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri},
                       "position": {"line": line, "character": col}}),
            );
            let value = h["result"]["contents"]["value"].as_str().unwrap_or("");
            assert!(value.contains("T(2)"), "{h}");
        }
    }
    c.shutdown();
}
