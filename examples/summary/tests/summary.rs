//! The summary of a directory: one line per file, in path order, with the
//! loops parallel as written and after expansion, checked by hand.

use std::process::Command;

#[test]
fn a_directory_of_programs() {
    let dir = std::env::temp_dir().join(format!("arrayflow-summary-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    // A scan: i carries S's write to S's read; single assignment does not
    // remove a true dependence.
    std::fs::write(
        dir.join("a-scan.loop"),
        "param N = 4;\nreal A[0..N];\nfor i = 1 to N do\n  S: A[i] = A[i - 1];\nend\n",
    )
    .unwrap();
    // One scalar cell overwritten by every i: output and anti dependences
    // only, which expansion removes.
    std::fs::write(
        sub.join("b-temp.loop"),
        "param N = 4;\nreal T[0..0];\nreal B[1..N];\nfor i = 1 to N do\n  S: T[0] = ...;\n  R: B[i] = T[0];\nend\n",
    )
    .unwrap();
    std::fs::write(dir.join("c-bad.loop"), "real A[1..2];\nS: A[1] = C[1];\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a program\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_arrayflow-summary"))
        .arg(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    let d = dir.to_string_lossy();
    let expected = format!(
        "{d}/a-scan.loop: 1 loop(s), 0 parallel as written, 0 after expansion\n\
         {d}/c-bad.loop: 1 error(s)\n\
         {d}/sub/b-temp.loop: 1 loop(s), 0 parallel as written, 1 after expansion\n"
    );
    assert_eq!(
        out,
        expected,
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "a file has errors");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_directory() {
    let o = Command::new(env!("CARGO_BIN_EXE_arrayflow-summary"))
        .arg("/nonexistent/arrayflow-summary")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/arrayflow-summary"));
}
