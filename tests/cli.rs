//! The `arrayflow` binary: exit codes, where output goes, JSON, `fmt`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn arrayflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally, not by a signal")
}

fn loop_files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "loop"))
        .collect();
    out.sort();
    out
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arrayflow-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_paper_fixture_passes_check() {
    let files = loop_files("fixtures/papers");
    assert!(!files.is_empty());
    for f in files {
        let o = arrayflow(&["check", s(&f)]);
        assert_eq!(
            code(&o),
            0,
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn every_error_fixture_fails_check_with_located_diagnostics() {
    for f in loop_files("fixtures/errors") {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let o = arrayflow(&["check", s(&f)]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let expected = if name.starts_with("warn-") { 0 } else { 1 };
        assert_eq!(code(&o), expected, "{name}: {stderr}");
        // file:line:column in the rendered text
        assert!(
            stderr.contains(&format!("{}:", f.display())),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}");
    }
}

#[test]
fn check_several_files_reports_the_worst() {
    let good = "fixtures/papers/mse-example1.loop";
    let bad = "fixtures/errors/missing-end.loop";
    assert_eq!(code(&arrayflow(&["check", good, good])), 0);
    assert_eq!(code(&arrayflow(&["check", good, bad])), 1);
    assert_eq!(code(&arrayflow(&["check", bad, "no/such/file.loop"])), 2);
}

#[test]
fn unusable_inputs_exit_2_with_a_message() {
    let missing = arrayflow(&["check", "no/such/file.loop"]);
    assert_eq!(code(&missing), 2);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
    // `check DIR` checks the directory's files (tests/scaling_projects.rs);
    // a command that takes one file says it is a directory.
    let dir = arrayflow(&["fmt", "fixtures"]);
    assert_eq!(code(&dir), 2);
    assert!(String::from_utf8_lossy(&dir.stderr).contains("is a directory"));
    let latin1 = tmp("latin1.loop", b"real x;\nx = 1; # caf\xe9\n");
    let o = arrayflow(&["check", s(&latin1)]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not UTF-8"));
    assert_eq!(code(&arrayflow(&["fmt", "no/such/file.loop"])), 2);
    // usage errors
    assert_eq!(code(&arrayflow(&["check"])), 2);
    assert_eq!(code(&arrayflow(&["frobnicate"])), 2);
    assert_eq!(code(&arrayflow(&["check", "--format", "xml", "a.loop"])), 2);
}

#[test]
fn binary_garbage_and_empty_files_end_cleanly() {
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 128) as u8).collect();
    let g = tmp("garbage.loop", &bytes);
    let o = arrayflow(&["check", s(&g)]);
    assert_eq!(code(&o), 1);
    let e = tmp("empty.loop", b"");
    let o = arrayflow(&["check", s(&e)]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("W0003"));
}

#[test]
fn json_format_has_the_documented_fields() {
    let o = arrayflow(&[
        "check",
        "--format",
        "json",
        "fixtures/errors/counter-outside-loop.loop",
    ]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let d = &v["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "column",
            "end_column",
            "end_line",
            "file",
            "line",
            "message",
            "severity"
        ]
    );
    assert_eq!(d["message"], "the counter `i` is used outside its loop");
    assert_eq!(d["file"], "fixtures/errors/counter-outside-loop.loop");
    // `R: use(A[i]);` on line 7: the `i` is column 10.
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(7), Some(10))
    );
    assert_eq!(
        (d["end_line"].as_u64(), d["end_column"].as_u64()),
        (Some(7), Some(11))
    );
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 1);

    let ok = arrayflow(&[
        "check",
        "--format",
        "json",
        "fixtures/papers/mse-example2.loop",
    ]);
    assert_eq!(code(&ok), 0);
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout).trim(),
        r#"{"diagnostics":[]}"#
    );
}

#[test]
fn fmt_is_idempotent_on_every_fixture() {
    for f in loop_files("fixtures/papers") {
        let once = arrayflow(&["fmt", s(&f)]);
        assert_eq!(code(&once), 0, "{}", f.display());
        let text = String::from_utf8(once.stdout).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let again_path = tmp(&name, text.as_bytes());
        let twice = arrayflow(&["fmt", s(&again_path)]);
        assert_eq!(code(&twice), 0);
        assert_eq!(String::from_utf8(twice.stdout).unwrap(), text, "{name}");
        // The header comment survives; the program is unchanged.
        let source = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with(source.lines().next().unwrap()));
    }
}

#[test]
fn fmt_prints_the_canonical_form() {
    let messy = tmp(
        "messy.loop",
        b"# header\nparam N=4;real A[1..N] ;\nfor i=1 to N do S:A[i]=A[i]+(1);\n  if i==N then use(A[i]) ; end if end for\n",
    );
    let o = arrayflow(&["fmt", s(&messy)]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "# header\nparam N = 4;\nreal A[1..N];\n\nfor i = 1 to N do\n  S: A[i] = A[i] + 1;\n  if i == N then\n    use(A[i]);\n  end\nend\n"
    );
    let bad = arrayflow(&["fmt", "fixtures/errors/missing-end.loop"]);
    assert_eq!(code(&bad), 1);
    assert!(bad.stdout.is_empty());
}

/// `verify --transform mse`: example 2's expanded program is equivalent at
/// N = 5, 6, 7 and at the corners N = 0, 1 (exit 0, one line per size, the
/// vectors compared listed last); corners the assumptions rule out are
/// skipped and said so; a program with errors exits 1.
#[test]
fn verify_transform_mse() {
    let o = arrayflow(&[
        "verify",
        "fixtures/papers/mse-example2.loop",
        "--transform",
        "mse",
        "--param",
        "N=5",
        "--seeds",
        "4",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    for n in [5, 6, 7, 0, 1] {
        assert!(
            out.contains(&format!("N = {n}: equivalent on 4 seeds")),
            "{out}"
        );
    }
    assert!(
        out.contains("mse: equivalent at 5 parameter vectors: (N=5), (N=6), (N=7), (N=0), (N=1)\n"),
        "{out}"
    );
    // T and N at 0 and 1, alone and together, the other at its default;
    // N = 0 breaks the assumption.
    let two = tmp(
        "two-params.loop",
        b"param T = 3;\nparam N = 5;\nassume N >= 1;\nreal A[0..N];\n\
          for t = 1 to T do\n  for i = 1 to N do\n    S: A[i] = A[i - 1] + 1;\n  end\nend\n",
    );
    let o = arrayflow(&[
        "verify",
        two.to_str().unwrap(),
        "--transform",
        "mse",
        "--seeds",
        "2",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    for v in ["T = 3, N = 0", "T = 0, N = 0", "T = 1, N = 0"] {
        assert!(
            out.contains(&format!("{v}: skipped, the assumptions do not hold")),
            "{out}"
        );
    }
    assert!(
        out.contains(
            "mse: equivalent at 8 parameter vectors: (T=3, N=5), (T=4, N=6), (T=5, N=7), \
             (T=0, N=5), (T=1, N=5), (T=3, N=1), (T=0, N=1), (T=1, N=1)\n"
        ),
        "{out}"
    );
    let bad = tmp("bad-mse.loop", b"real A[1..3];\nS: A[1] = B[2];\n");
    let o = arrayflow(&["verify", bad.to_str().unwrap(), "--transform", "mse"]);
    assert_eq!(code(&o), 1);
}
