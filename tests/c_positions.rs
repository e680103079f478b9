//! Diagnostics on a preprocessed C file land on the file's own
//! lines, from the command line and from the language server; only text
//! from a header is shown in the preprocessor's output (with a note).
//! The expected places are found in the file's text by the test itself.

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

fn arrayflow(args: &[&str]) -> (Option<i32>, String, String) {
    let o = std::process::Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arrayflow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 1-based (line, column) of `needle` in `text`, plus `skip` bytes.
fn place(text: &str, needle: &str, skip: usize) -> (usize, usize) {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle}")) + skip;
    let line = text[..at].matches('\n').count() + 1;
    (line, at - text[..at].rfind('\n').map_or(0, |k| k + 1) + 1)
}

/// PolyBench's gemm, unchanged but for one subscript that leaves C's range
/// (W0005 at `j+1`); the line is indented with a tab, which `cc -E` turns
/// into spaces.
fn gemm(dir: &Path) -> (PathBuf, String) {
    let src = format!("{}/fixtures/c/polybench", env!("CARGO_MANIFEST_DIR"));
    for f in ["gemm.h", "polybench.h"] {
        std::fs::copy(format!("{src}/{f}"), dir.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(format!("{src}/gemm.c")).unwrap();
    assert!(text.contains("\tC[i][j] *= beta;"));
    let text = text.replace("\tC[i][j] *= beta;", "\tC[i][j+1] *= beta;");
    let path = dir.join("gemm.c");
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

#[test]
fn a_polybench_diagnostic_is_on_the_line_of_the_file() {
    let dir = temp("c-positions");
    let (path, text) = gemm(&dir);
    let f = path.to_str().unwrap();
    let (line, col) = place(&text, "C[i][j+1] *= beta", 5);
    let (code, out, err) = arrayflow(&["check", f, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let d = &v["diagnostics"].as_array().unwrap()[0];
    assert_eq!(d["file"], f, "{d}");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(line as u64), Some(col as u64)),
        "{d}"
    );
    assert_eq!(d["end_column"].as_u64(), Some(col as u64 + 3), "{d}");
    // Text: the place, and the declaration's label on the macro's line.
    let (_, _, err) = arrayflow(&["check", f]);
    assert!(err.contains(&format!("{f}:{line}:{col}")), "{err}");
    // The kernel's parameter C (print_array has one too, before it).
    let kernel = text.find("void kernel_gemm(").unwrap();
    let (decl, _) = place(&text, "POLYBENCH_2D(C,NI,NJ,ni,nj)", 0);
    let decl = decl.max(
        place(&text[kernel..], "POLYBENCH_2D(C,NI,NJ,ni,nj)", 0).0
            + text[..kernel].matches('\n').count(),
    );
    assert!(
        err.contains(&format!("{decl} │"))
            && err.contains("POLYBENCH_2D(C,NI,NJ,ni,nj)")
            && !err.contains("(preprocessed)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn text_from_a_header_is_shown_in_the_preprocessors_output() {
    let dir = temp("c-header");
    std::fs::write(
        dir.join("k.h"),
        "#define N 4\ndouble H[N];\nvoid in_header(void) {\n  for (int i = 0; i < N; i++)\n    H[i + 1] = 0;\n}\n",
    )
    .unwrap();
    let text = "#include \"k.h\"\ndouble A[N];\nvoid k(void) {\n  for (int i = 0; i < N; i++)\n    A[i + 1] = H[i];\n}\n";
    let path = dir.join("k.c");
    std::fs::write(&path, text).unwrap();
    let f = path.to_str().unwrap();
    let (code, _, err) = arrayflow(&["check", f]);
    assert_eq!(code, Some(0), "{err}");
    // The file's own access, at its place.
    let (line, col) = place(text, "A[i + 1]", 2);
    assert!(err.contains(&format!("{f}:{line}:{col}")), "{err}");
    // The header's, in the output, said so.
    assert!(
        err.contains(&format!("{f} (preprocessed):"))
            && err.contains("comes from a header or a macro's definition"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_language_server_preprocesses_and_answers_on_the_files_lines() {
    let dir = temp("c-lsp");
    let (path, text) = gemm(&dir);
    let uri = format!("file://{}", path.display());
    let mut c = Client::start(BIN);
    c.open(&uri, &text);
    let diags = c.diagnostics(&uri, 1);
    // Preprocessed: PolyBench's arrays are declared, no W0901/E0902.
    assert!(
        !diags.iter().any(|d| d["code"]
            .as_str()
            .is_some_and(|c| c.starts_with("W09") || c.starts_with("E09"))),
        "{diags:?}"
    );
    let (line, col) = place(&text, "C[i][j+1] *= beta", 5);
    let w = diags
        .iter()
        .find(|d| d["code"] == "W0005")
        .unwrap_or_else(|| panic!("no W0005: {diags:?}"));
    assert_eq!(
        w["range"]["start"],
        json!({"line": line - 1, "character": col - 1}),
        "{w}"
    );
    // Hover on the read of A in `C[i][j] += alpha * A[i][k] * B[k][j];`,
    // asked and answered in the file's positions.
    let (l, k) = place(&text, "A[i][k] * B", 0);
    let h = c.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": l - 1, "character": k}}),
    );
    let value = h["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("reads `A`"), "{h}");
    assert_eq!(h["result"]["range"]["start"]["line"], l - 1, "{h}");
    // The lens of loop i is on `for (i = 0; i < _PB_NI; i++)`.
    let (for_i, _) = place(
        &text,
        "for (i = 0; i < _PB_NI; i++) {\n    for (j = 0; j < _PB_NJ; j++)\n\tC[i][j+1]",
        0,
    );
    let lenses = c.call(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert!(
        lenses["result"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["range"]["start"]["line"] == for_i - 1),
        "{lenses}"
    );
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The editor's `include`, `define` and `preprocess` settings are the
/// command line's `-I`, `-D` and `--preprocess`: a header found only in
/// `inc/`, which stops with `#error` unless `SMALL` is defined.
#[test]
fn the_editors_preprocessor_settings_are_the_command_lines() {
    let dir = temp("c-lsp-settings");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/sizes.h"),
        "#ifndef SMALL\n#error define SMALL\n#endif\n#define N 4\n",
    )
    .unwrap();
    let text = "#include \"sizes.h\"\nvoid k(double A[N]) {\n  for (int i = 1; i < N; i++)\n    A[i] = A[i - 1];\n}\n";
    let path = dir.join("main.c");
    std::fs::write(&path, text).unwrap();
    let uri = format!("file://{}", path.display());
    let inc = dir.join("inc").display().to_string();
    // The command line first, as the reference.
    let p = path.display().to_string();
    let (code, _, err) = arrayflow(&["check", &p, "-I", &inc, "-D", "SMALL"]);
    assert_eq!(code, Some(0), "{err}");
    let failed = |d: &[Value]| d.iter().any(|d| d["code"] == "W0302");
    let mut c = Client::start(BIN);
    c.open(&uri, text);
    let d = c.diagnostics(&uri, 1);
    assert!(
        failed(&d),
        "no header directory: the preprocessor fails: {d:?}"
    );
    let configure = |c: &mut Client, settings: Value| {
        c.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"arrayflow": settings}}),
        );
    };
    configure(&mut c, json!({"include": [inc], "define": ["SMALL"]}));
    let d = c.diagnostics(&uri, 1);
    assert!(!failed(&d), "-I and -D given: {d:?}");
    configure(&mut c, json!({"define": []}));
    let d = c.diagnostics(&uri, 1);
    let w = d.iter().find(|d| d["code"] == "W0302");
    let w = w.unwrap_or_else(|| panic!("SMALL no longer defined: {d:?}"));
    assert!(
        w["message"].as_str().unwrap_or("").contains("define SMALL"),
        "{w}"
    );
    configure(&mut c, json!({"define": ["SMALL"], "preprocess": "never"}));
    let d = c.diagnostics(&uri, 1);
    assert!(!failed(&d), "{d:?}");
    assert!(
        d.iter().any(|d| d["code"]
            .as_str()
            .is_some_and(|c| c.starts_with("W09") || c.starts_with("E09"))),
        "not preprocessed: `N` is unknown to the C front end: {d:?}"
    );
    configure(&mut c, json!({"preprocess": "sometimes"}));
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
