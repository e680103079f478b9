//! `check DIR` and `flow DIR` (src/cli/project.rs) on temporary directories
//! of good, bad and unreadable files: exit codes, each file's diagnostics
//! whole and in path order (the same bytes as `check FILE` one file at a
//! time), the σ of each file (the same bytes as `flow FILE`), the table's
//! rows (instances counted by hand), the same output at 1 and 3 threads,
//! and what is left out (hidden directories, other extensions).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// Prefix sums at N=8: I has 1 write and 1 read, S (i = 1..7) 1 write and
/// 2 reads: 2 + 7 × 3 = 23 access instances.
const PREFIX: &str = "param N = 8;
int B[0..N - 1];
int A[0..N - 1];
I: B[0] = A[0];
for i = 1 to N - 1 do
  S: B[i] = B[i - 1] + A[i];
end
";

/// 3 iterations of 1 write and 1 read: 6 access instances.
const BUMP: &str = "param N = 3;
int A[0..N - 1];
for i = 0 to N - 1 do
  S: A[i] = A[i] + 1;
end
";

/// A missing `;`: E0002 first.
const BAD: &str = "param N = 4\nint A[0..N - 1];\nS: A[0] = 1;\n";

/// A temporary directory with a fixed layout; removed on drop.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str, unreadable: bool) -> Dir {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("scaling-projects-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let put = |rel: &str, bytes: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    put("a/prefix.loop", PREFIX.as_bytes());
    put("a/sub/bump.loop", BUMP.as_bytes());
    put("b/bad.loop", BAD.as_bytes());
    put("b/zbad.loop", b"int A[0..3];\nS: A[0] = B[0];\n");
    put("notes.txt", b"not a program");
    put(".hidden/h.loop", b"this is not a program");
    if unreadable {
        put("c/latin1.c", b"int x = 1; /* caf\xe9 */\n");
    }
    Dir(root)
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The table's row of `file`: its words without the time.
fn row(stdout: &str, file: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(file) && l.ends_with(" ms"))
        .unwrap_or_else(|| panic!("no row for {file} in\n{stdout}"));
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    words[..words.len() - 2].to_vec()
}

fn files(d: &Dir) -> Vec<String> {
    [
        "a/prefix.loop",
        "a/sub/bump.loop",
        "b/bad.loop",
        "b/zbad.loop",
    ]
    .iter()
    .map(|f| d.0.join(f).display().to_string())
    .collect()
}

/// Everything but the times of the table.
fn timeless(stdout: &str) -> String {
    stdout
        .lines()
        .map(|l| match (l.rsplit_once("  "), l.rsplit_once(", ")) {
            _ if !l.ends_with(" ms") => l.to_string(),
            // The last line: "4 files, 2 ok, 2 failed, 8.3 ms".
            (_, Some((head, _))) if l.contains(" files, ") => head.to_string(),
            (Some((head, _)), _) => head.trim_end().to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn check_dir_reports_every_file_in_order() {
    let d = dir("check", false);
    let root = d.0.display().to_string();
    let (code, out, err) = run(&["check", &root, "--threads", "3"]);
    assert_eq!(code, Some(1), "a file has errors: {out}{err}");
    let f = files(&d);
    // Each file's diagnostics whole, in path order: what `check FILE`
    // prints for each, one after the other.
    let mut want = String::new();
    for file in &f {
        want += &run(&["check", file]).2;
    }
    assert_eq!(err, want);
    assert!(err.contains("E0002"), "{err}");
    assert!(!err.contains(".hidden") && !out.contains("notes.txt"));
    assert!(out.contains(&format!("{}: ok", f[0])));
    assert!(!out.contains(&format!("{}: ok", f[2])));
    assert_eq!(row(&out, &f[0]), [f[0].as_str(), "ok", "clean"]);
    assert_eq!(row(&out, &f[2]), [f[2].as_str(), "error", "E0002"]);
    let zbad = run(&["check", &f[3]]).2;
    let code3 = &zbad[zbad.find("error[").unwrap() + 6..zbad.find(']').unwrap()];
    assert_eq!(row(&out, &f[3]), [f[3].as_str(), "error", code3]);
    assert!(out.contains("4 files, 2 ok, 2 failed"), "{out}");
    // Rows in path order.
    let at = |s: &String| out.rfind(s.as_str()).unwrap();
    assert!(at(&f[0]) < at(&f[1]) && at(&f[1]) < at(&f[2]) && at(&f[2]) < at(&f[3]));
    // The same at one thread.
    let (code1, out1, err1) = run(&["check", &root, "--threads", "1"]);
    assert_eq!((code1, timeless(&out1), err1), (code, timeless(&out), err));
}

#[test]
fn an_unreadable_file_is_exit_2() {
    let d = dir("unreadable", true);
    let (code, out, err) = run(&["check", &d.0.display().to_string()]);
    assert_eq!(code, Some(2), "{out}{err}");
    let latin = d.0.join("c/latin1.c").display().to_string();
    assert!(err.contains("is not UTF-8"), "{err}");
    assert_eq!(
        row(&out, &latin),
        [latin.as_str(), "unreadable", "see", "above"]
    );
}

#[test]
fn flow_dir_prints_each_file_then_the_table() {
    let d = dir("flow", false);
    let root = d.0.display().to_string();
    let (code, out, err) = run(&["flow", &root, "--threads", "2"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let f = files(&d);
    // Each good file's σ is what `flow FILE` prints, under its header.
    for file in &f[..2] {
        let (c, one, _) = run(&["flow", file]);
        assert_eq!(c, Some(0));
        assert!(
            out.contains(&format!("==> {file} <==\n{one}")),
            "{file}: {one} in\n{out}"
        );
    }
    assert_eq!(row(&out, &f[0]), [&f[0], "ok", "23", "access", "instances"]);
    assert_eq!(row(&out, &f[1]), [&f[1], "ok", "6", "access", "instances"]);
    assert_eq!(row(&out, &f[2]), [f[2].as_str(), "error", "E0002"]);
    // --param reaches every file: prefix at N=4 is 2 + 3 × 3 instances.
    let (_, out4, _) = run(&["flow", &root, "--param", "N=4"]);
    assert_eq!(
        row(&out4, &f[0]),
        [&f[0], "ok", "11", "access", "instances"]
    );
    let (code1, out1, err1) = run(&["flow", &root, "--threads", "1"]);
    assert_eq!((code1, timeless(&out1), err1), (code, timeless(&out), err));
}

#[test]
fn good_files_only_exit_0() {
    let d = dir("good", false);
    std::fs::remove_dir_all(d.0.join("b")).unwrap();
    let (code, out, err) = run(&["flow", &d.0.display().to_string()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("2 files, 2 ok, 0 failed"), "{out}");
    let (code, out, _) = run(&["check", &d.0.display().to_string()]);
    assert_eq!(code, Some(0));
    assert!(out.contains("2 files, 2 ok, 0 failed"), "{out}");
}

#[test]
fn empty_dirs_and_json_are_refused() {
    let d = dir("empty", false);
    let empty = d.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = run(&["check", &empty.display().to_string()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no `.loop` or `.c` file"), "{err}");
    let (code, _, err) = run(&["flow", &empty.display().to_string()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no `.loop` or `.c` file"), "{err}");
    let (code, _, err) = run(&["check", &d.0.display().to_string(), "--format", "json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--format json"), "{err}");
}
