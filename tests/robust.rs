//! No input makes the front end panic or overflow the stack: arbitrary bytes,
//! token soup, mutated fixtures, 10,000-deep nesting and a 100 MB file all
//! end with diagnostics or a program.

mod support;

use arrayflow::diagnostics::{has_errors, Diagnostic, FileId};
use arrayflow::lower::compile;
use proptest::prelude::*;
use std::path::PathBuf;

fn cases() -> u32 {
    support::cases(256).try_into().unwrap_or(u32::MAX)
}

fn fixture_sources() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["fixtures/papers", "fixtures/errors"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("fixture directory")
            .map(|e| e.expect("entry").path())
            .collect();
        paths.sort();
        for p in paths {
            out.push(std::fs::read_to_string(p).expect("UTF-8 fixture"));
        }
    }
    out
}

const TOKENS: &[&str] = &[
    "param",
    "assume",
    "real",
    "int",
    "array",
    "for",
    "to",
    "step",
    "do",
    "doall",
    "while",
    "if",
    "then",
    "elsif",
    "else",
    "end",
    "and",
    "or",
    "not",
    "N",
    "A",
    "x",
    "i",
    "f",
    "S",
    "@copy",
    "@",
    "copy",
    "0",
    "1",
    "99999999999999999999",
    ";",
    ",",
    ":",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "(",
    ")",
    "[",
    "]",
    "..",
    "...",
    ".",
    "#",
    "\n",
    "$",
    "_S1",
];

/// Compiles and renders, so the renderer is exercised too.
fn check(source: &str) -> Vec<Diagnostic> {
    let mut files = arrayflow::diagnostics::SourceFiles::new();
    let id = files.add("input.loop", source);
    let (program, diags) = compile(files.source(id), id);
    assert_eq!(program.is_some(), !has_errors(&diags));
    let _ = files.render_all(&diags);
    let _ = files.to_json(&diags);
    if let Some(p) = program {
        // A valid program prints and parses back to itself.
        let text = arrayflow::print::program(&p);
        let (again, d2) = compile(&text, FileId(0));
        assert!(!has_errors(&d2), "{text}");
        assert_eq!(again.as_ref(), Some(&p));
    }
    diags
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup_never_panics(toks in proptest::collection::vec(proptest::sample::select(TOKENS), 0..300)) {
        check(&toks.join(" "));
    }

    #[test]
    fn mutated_fixtures_never_panic(
        pick in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..4, proptest::sample::select(TOKENS)), 1..6),
    ) {
        let sources = fixture_sources();
        let mut bytes = sources[pick.index(sources.len())].clone().into_bytes();
        for (at, kind, tok) in edits {
            let i = at.index(bytes.len() + 1);
            match kind {
                0 => { bytes.splice(i..i, tok.bytes()); }
                1 => { let j = (i + 8).min(bytes.len()); bytes.drain(i..j); }
                2 => { let j = (i + 40).min(bytes.len()); let dup: Vec<u8> = bytes[i..j].to_vec(); bytes.splice(i..i, dup); }
                _ => { if i < bytes.len() { bytes[i] ^= 0x20; } }
            }
        }
        check(&String::from_utf8_lossy(&bytes));
    }
}

fn codes(source: &str) -> Vec<&'static str> {
    check(source).iter().map(|d| d.code).collect()
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_crash() {
    let n = 10_000;
    let loops = format!(
        "param N = 2;\nreal x;\n{}x = 1;\n{}",
        (0..n)
            .map(|k| format!("for i{k} = 1 to N do\n"))
            .collect::<String>(),
        "end\n".repeat(n)
    );
    assert_eq!(codes(&loops), ["E0005"]);
    let whiles = format!(
        "real x;\n{}x = 1;\n{}",
        "while ... do\n".repeat(n),
        "end\n".repeat(n)
    );
    assert_eq!(codes(&whiles), ["E0005"]);
    let ifs = format!(
        "real x;\n{}x = 1;\n{}",
        "if ... then\n".repeat(n),
        "end if\n".repeat(n)
    );
    assert_eq!(codes(&ifs), ["E0005"]);
    // Unclosed as well: still one diagnostic for the depth, one for `end`.
    let open = format!(
        "real x;\n{}x = 1;\n",
        (0..n)
            .map(|k| format!("for i{k} = 1 to 2 do\n"))
            .collect::<String>()
    );
    assert_eq!(codes(&open), ["E0005", "E0003"]);
}

#[test]
fn deep_expressions_are_a_diagnostic_not_a_crash() {
    let n = 10_000;
    let parens = format!("real x;\nx = {}1{};\n", "(".repeat(n), ")".repeat(n));
    assert_eq!(codes(&parens), ["E0006"]);
    let negs = format!("real x;\nx = {}x;\n", "- ".repeat(n));
    assert_eq!(codes(&negs), ["E0006"]);
    let nots = format!("real x;\nif {}... then x = 1; end\n", "not ".repeat(n));
    assert_eq!(codes(&nots), ["E0006"]);
    let chain = format!("real x;\nx = 1{};\n", " + x".repeat(100_000));
    assert_eq!(codes(&chain), ["E0006"]);
    let subs = format!(
        "real A[0..9];\nA[0] = {}0{};\n",
        "A[".repeat(n),
        "]".repeat(n)
    );
    assert_eq!(codes(&subs), ["E0006"]);
    let calls = format!("real x;\nx = {}0{};\n", "f(".repeat(n), ")".repeat(n));
    assert_eq!(codes(&calls), ["E0006"]);
    // Just under the limit is fine.
    let ok = format!(
        "real x;\nx = {}1{};\nuse(x);\n",
        "(".repeat(200),
        ")".repeat(200)
    );
    assert_eq!(codes(&ok), Vec::<&str>::new());
}

#[test]
fn garbage_stops_after_a_bounded_number_of_errors() {
    let source = "x = ; ".repeat(100_000);
    let diags = check(&source);
    // Each phase stops at the limit: syntax errors, then undeclared `x`.
    let limit = arrayflow::syntax::parser::MAX_ERRORS + 1;
    assert!(diags.len() <= 2 * limit, "{}", diags.len());
    assert_eq!(diags.iter().filter(|d| d.code == "E0008").count(), 2);
    // A valid file with very many semantic errors is bounded too.
    let many = "y = 1;\n".repeat(100_000);
    let diags = check(&many);
    assert_eq!(diags.len(), limit);
}

#[test]
fn a_100_mb_file_is_checked() {
    // One million statements of about 100 bytes each.
    let mut source = String::with_capacity(101 << 20);
    source.push_str("param N = 4;\nreal A[1..N];\nfor i = 1 to N do\n");
    let line =
        "  A[i] = A[i] + f(i, N) * 2; # a comment that pads every line out to a round size\n";
    while source.len() < 100 << 20 {
        source.push_str(line);
    }
    source.push_str("end\n");
    let (program, diags) = compile(&source, FileId(0));
    assert!(diags.is_empty(), "{diags:?}");
    let program = program.expect("valid");
    assert!(program.stmts().len() > 1_000_000);
}

#[test]
fn the_deepest_valid_program_is_handled() {
    // 200 nested loops around an expression 211 levels deep (a chain of 150
    // sums over 60 nested negations, parsed 121 calls deep): valid, and it is
    // checked, printed and parsed again (in `check`) without overflow.
    let depth = arrayflow::model::builder::MAX_DEPTH;
    let expr = format!("{}x{}", "-(".repeat(60), ")".repeat(60));
    let source = format!(
        "real x;\n{}x = {expr} + {};\nuse(x);\n{}",
        (0..depth)
            .map(|k| format!("for i{k} = 1 to 1 do\n"))
            .collect::<String>(),
        (0..150)
            .map(|k| format!("i{k}"))
            .collect::<Vec<_>>()
            .join(" + "),
        "end\n".repeat(depth)
    );
    assert_eq!(codes(&source), Vec::<&str>::new());
}
