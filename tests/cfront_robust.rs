//! The C front end never panics: mutated C fixtures, token soup and
//! arbitrary text all end with diagnostics or a program. And whenever a
//! program comes out, `fmt` prints it as a valid `.loop` program that parses
//! back to the same model (names are renamed where they would clash).
//! ARRAYFLOW_CASES sets the number of cases.

mod support;

use arrayflow::diagnostics::{has_errors, FileId};
use proptest::prelude::*;
use std::path::PathBuf;

fn cases() -> u32 {
    support::cases(256).try_into().unwrap_or(u32::MAX)
}

fn c_sources() -> Vec<String> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in ["fixtures/c", "fixtures/c/kernels"] {
        paths.extend(
            std::fs::read_dir(dir)
                .expect("fixture directory")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "c")),
        );
    }
    paths.sort();
    let mut out: Vec<String> = paths
        .into_iter()
        .map(|p| std::fs::read_to_string(p).expect("UTF-8 fixture"))
        .collect();
    // The examples of docs/c.md: every diagnostic's trigger.
    let doc = std::fs::read_to_string("docs/c.md").expect("docs/c.md");
    out.extend(
        doc.split("```c\n")
            .skip(1)
            .filter_map(|b| b.split("```").next())
            .map(str::to_string),
    );
    out
}

const TOKENS: &[&str] = &[
    "for",
    "while",
    "if",
    "else",
    "do",
    "int",
    "double",
    "const",
    "struct",
    "return",
    "break",
    "goto",
    "switch",
    "case",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "=",
    "+=",
    "-=",
    "++",
    "--",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    "&",
    "*",
    "->",
    ".",
    "?",
    ":",
    "+",
    "-",
    "/",
    "%",
    "<<",
    "i",
    "j",
    "k",
    "n",
    "N",
    "A",
    "B",
    "x",
    "p",
    "S:",
    "T:",
    "unknown()",
    "0",
    "1",
    "2",
    "9223372036854775807",
    "99999999999999999999",
    "1.5",
    "'a'",
    "\"s\"",
    "\n#pragma scop\n",
    "\n#pragma endscop\n",
    "\n#pragma arrayflow array A[1..N]\n",
    "\n#define N 4\n",
    "\n#define M (N+1)\n",
    "\n#pragma omp parallel for\n",
    "sizeof(A)",
    "f(A)",
    "g(&x)",
    "end",
    "_S1",
    "\n",
    " ",
];

/// Applies a list of edits (kind, position, length, token) to a source.
fn mutate(src: &str, edits: &[(u8, usize, usize, usize)]) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for &(kind, pos, len, tok) in edits {
        let at = if s.is_empty() { 0 } else { pos % (s.len() + 1) };
        let end = (at + len % 24).min(s.len());
        match kind % 4 {
            0 => {
                s.drain(at..end);
            }
            1 => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()].chars().collect();
                s.splice(at..at, t);
            }
            2 => {
                let copy: Vec<char> = s[at..end].to_vec();
                s.splice(at..at, copy);
            }
            _ => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()].chars().collect();
                s.splice(at..end, t);
            }
        }
    }
    s.into_iter().collect()
}

/// Names, numbers and comparisons a same-kind mutation puts in: swapping
/// one token for another of its kind keeps most files parseable, so these
/// mutants reach the lowering (counters used as arrays, arrays as counters,
/// loops turned around, names like `.loop` keywords).
const NAMES: &[&str] = &[
    "i", "j", "k", "n", "N", "A", "B", "x", "p", "s", "t", "end", "unknown", "f", "_S1",
];
const NUMBERS: &[&str] = &["0", "1", "2", "3", "100", "9223372036854775807"];
const COMPARISONS: &[&str] = &["<", "<=", ">", ">=", "!=", "=="];

fn same_kind(src: &str, picks: &[(usize, usize)]) -> String {
    // Byte ranges of identifiers, numbers and comparisons, in order.
    let b = src.as_bytes();
    let mut toks: Vec<(usize, usize, u8)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let w = &src[start..i];
            if !matches!(
                w,
                "for"
                    | "while"
                    | "if"
                    | "else"
                    | "int"
                    | "double"
                    | "void"
                    | "return"
                    | "define"
                    | "pragma"
                    | "const"
                    | "struct"
            ) {
                toks.push((start, i, 0));
            }
        } else if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            toks.push((start, i, 1));
        } else if b[i] == b'<' || b[i] == b'>' {
            i += if b.get(i + 1) == Some(&b'=') { 2 } else { 1 };
            toks.push((start, i, 2));
        } else {
            i += 1;
        }
    }
    if toks.is_empty() {
        return src.to_string();
    }
    let mut chosen: Vec<(usize, usize, &str)> = picks
        .iter()
        .map(|&(t, w)| {
            let (a, z, kind) = toks[t % toks.len()];
            let pool = [NAMES, NUMBERS, COMPARISONS][kind as usize];
            (a, z, pool[w % pool.len()])
        })
        .collect();
    chosen.sort_by_key(|c| std::cmp::Reverse(c.0));
    chosen.dedup_by_key(|c| c.0);
    let mut out = src.to_string();
    for (a, z, w) in chosen {
        out.replace_range(a..z, w);
    }
    out
}

/// Compiles C text and checks the properties; runs on a thread with a
/// small stack so that deep recursion would show.
fn check(src: String) -> Result<(), String> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let (program, diags) = arrayflow::cfront::compile(&src, FileId(0));
            if has_errors(&diags) != program.is_none() {
                return Err(format!("errors {diags:?} but program {program:?}"));
            }
            for d in &diags {
                for l in &d.labels {
                    if l.span.end as usize > src.len() || l.span.start > l.span.end {
                        return Err(format!("label out of the source: {d:?}"));
                    }
                }
            }
            if let Some(mut p) = program {
                // `.loop` has no locals: which C arrays are is not printed;
                // nor derived parameters: what one stands for is a comment.
                for a in &mut p.arrays {
                    a.local = false;
                }
                for q in &mut p.params {
                    q.derived = None;
                }
                let text = arrayflow::print::program(&p);
                let (q, diags) = arrayflow::lower::compile(&text, FileId(0));
                if has_errors(&diags) {
                    return Err(format!(
                        "fmt output does not parse: {diags:?}\n{text}\nfrom\n{src}"
                    ));
                }
                if q.as_ref() != Some(&p) {
                    return Err(format!(
                        "fmt output parses to another model:\n{text}\nfrom\n{src}"
                    ));
                }
            }
            Ok(())
        })
        .expect("thread")
        .join()
        .map_err(|_| "panicked".to_string())?
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_c_files_never_panic(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..6),
    ) {
        let sources = c_sources();
        let src = mutate(&sources[which % sources.len()], &edits);
        let r = check(src.clone());
        prop_assert!(r.is_ok(), "{}\n--- source:\n{src}", r.err().unwrap_or_default());
    }

    #[test]
    fn same_kind_mutants_never_panic(
        which in any::<usize>(),
        picks in prop::collection::vec((any::<usize>(), any::<usize>()), 1..5),
    ) {
        let sources = c_sources();
        let src = same_kind(&sources[which % sources.len()], &picks);
        let r = check(src.clone());
        prop_assert!(r.is_ok(), "{}\n--- source:\n{src}", r.err().unwrap_or_default());
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(any::<usize>(), 0..80)) {
        let src: String = toks.iter().map(|&t| TOKENS[t % TOKENS.len()]).collect::<Vec<_>>().join(" ");
        let r = check(src.clone());
        prop_assert!(r.is_ok(), "{}\n--- source:\n{src}", r.err().unwrap_or_default());
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,200}") {
        let r = check(src.clone());
        prop_assert!(r.is_ok(), "{}\n--- source:\n{src}", r.err().unwrap_or_default());
    }
}

#[test]
fn every_fixture_round_trips_through_fmt() {
    for src in c_sources() {
        check(src).unwrap();
    }
}

#[test]
fn deep_and_long_inputs() {
    let r = |s: &str, n: usize| s.repeat(n);
    let chain: String = (0..200)
        .map(|k| format!("#define M{} (M{k} + 1)\n", k + 1))
        .collect();
    let lets: String = (1..3000)
        .map(|k| format!("  int k{k} = k{} + 1;\n", k - 1))
        .collect();
    let cases = [
        // Statements nested deeper than lowering follows.
        format!(
            "double A[2];\nvoid f(void) {{\n{}A[0] = 1;\n{}}}\n",
            r("for (int i = 0; i < 2; i++) {\n", 300),
            r("}\n", 300)
        ),
        format!(
            "double A[2];\nvoid f(void) {{\n{}A[0] = 1;\n}}\n",
            r("if (A[1]) ", 3000)
        ),
        // A long `else if` chain is not deep: it is lowered iteratively.
        format!(
            "double A[2];\nvoid f(void) {{\nif (A[0]) A[1] = 0;\n{}\n}}\n",
            r("else if (A[1]) A[0] = 1;\n", 3000)
        ),
        // Deep expressions, subscripts, lvalues, declarators, macros.
        format!(
            "double A[2];\nvoid f(void) {{ A[0] = {}1; }}\n",
            r("-", 5000)
        ),
        format!(
            "int A[2];\nvoid f(void) {{ A[0] = {}0{}; }}\n",
            r("A[", 3000),
            r("]", 3000)
        ),
        format!(
            "#define N {}1{}\ndouble A[N];\nvoid f(void) {{ A[0] = N; }}\n",
            r("(", 5000),
            r(")", 5000)
        ),
        format!("#define M0 1\n{chain}double A[2];\nvoid f(void) {{ A[0] = M200; }}\n"),
        "#define A B\n#define B A\nint X[2];\nvoid f(void) { X[0] = A; }\n".to_string(),
        format!("void f(double {}p) {{ p[0] = 1; }}\n", r("*", 20000)),
        format!(
            "double x;\nvoid f(void) {{ {}x{} = 1; }}\n",
            r("(", 20000),
            r(")", 20000)
        ),
        format!("struct s x;\nvoid f(void) {{ x{} = 1; }}\n", r(".a", 20000)),
        // Locals each defined from the last: inlining stops at a depth.
        format!("double A[9];\nvoid f(void) {{\n  int k0 = 1;\n{lets}  A[k2999 % 9] = 0;\n}}\n"),
    ];
    for src in cases {
        check(src).unwrap();
    }
}
