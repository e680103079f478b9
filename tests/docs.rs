//! docs/language.md is the reference: every diagnostic code the source can
//! emit has a section there, and each section's example gives that code.

use arrayflow::diagnostics::{has_errors, FileId};

fn doc() -> String {
    std::fs::read_to_string("docs/language.md").expect("docs/language.md")
}

/// (code, example) for every `### CODE ...` section of docs/language.md;
/// the example is the first ```loop block of the section, if any.
fn sections(doc: &str) -> Vec<(String, Option<String>)> {
    code_sections(doc, "```loop\n")
}

/// (code, first example opening with `fence`) for every `### CODE` section,
/// CODE being `E` or `W` and four digits.
fn code_sections(doc: &str, fence: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for part in doc.split("\n### ").skip(1) {
        let code = part.split_whitespace().next().unwrap_or("").to_string();
        let is_code = code.len() == 5
            && (code.starts_with('E') || code.starts_with('W'))
            && code[1..].chars().all(|c| c.is_ascii_digit());
        if !is_code {
            continue;
        }
        let body = part.split("\n## ").next().unwrap_or("");
        let example = body
            .split(fence)
            .nth(1)
            .and_then(|b| b.split("```").next())
            .map(str::to_string);
        out.push((code, example));
    }
    out
}

fn codes(source: &str) -> Vec<&'static str> {
    let (_, diags) = arrayflow::lower::compile(source, FileId(0));
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn every_example_gives_its_code() {
    let doc = doc();
    let mut checked = 0;
    for (code, example) in sections(&doc) {
        let generated = match code.as_str() {
            "E0005" => Some(format!(
                "real x;\n{}x = 1;\n{}",
                "while ... do\n".repeat(201),
                "end\n".repeat(201)
            )),
            "E0006" => Some(format!(
                "real x;\nx = {}1{};\n",
                "(".repeat(300),
                ")".repeat(300)
            )),
            "E0008" => Some("y = 1;\n".repeat(150)),
            "E0124" => {
                let mut s = "real A[1..4];\nproc p0(real X[1..4])\n  X[1] = 0;\nend\n".to_string();
                for k in 1..18 {
                    s += &format!(
                        "proc p{k}(real X[1..4])\n  call p{}(X);\n  call p{}(X);\nend\n",
                        k - 1,
                        k - 1
                    );
                }
                Some(s + "call p17(A);\nuse(A[1]);\n")
            }
            _ => None,
        };
        let Some(source) = example.or(generated) else {
            continue;
        };
        let got = codes(&source);
        assert!(
            got.contains(&code.as_str()),
            "{code}: got {got:?} for\n{source}"
        );
        checked += 1;
    }
    assert!(checked >= 26, "only {checked} examples");
}

#[test]
fn every_code_in_the_source_is_documented() {
    let doc = doc();
    let c_doc = std::fs::read_to_string("docs/c.md").expect("docs/c.md");
    let documented: Vec<String> = sections(&doc)
        .into_iter()
        .chain(c_sections(&c_doc))
        .map(|(c, _)| c)
        .collect();
    let mut stack = vec![
        std::path::PathBuf::from("src"),
        std::path::PathBuf::from("crates"),
    ];
    let mut found = 0;
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, _) in text.match_indices("\"E0").chain(text.match_indices("\"W0")) {
            let code = &text[i + 1..(i + 6).min(text.len())];
            if code[1..].chars().all(|c| c.is_ascii_digit()) {
                found += 1;
                assert!(
                    documented.iter().any(|d| d == code),
                    "{code} (in {}) has no section in docs/language.md or docs/c.md",
                    p.display()
                );
            }
        }
    }
    assert!(found > 20);
}

#[test]
fn the_first_program_is_valid() {
    let doc = doc();
    let first = doc
        .split("```loop\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let (program, diags) = arrayflow::lower::compile(first, FileId(0));
    assert!(!has_errors(&diags), "{diags:?}");
    assert!(program.is_some());
}

/// (code, first ```c example) for every `### CODE` section of docs/c.md.
fn c_sections(doc: &str) -> Vec<(String, Option<String>)> {
    code_sections(doc, "```c\n")
}

/// Codes only a binary with a crate's access kinds reports
/// (examples/kinds/tests/commands.rs checks their examples).
const NEEDS_EXTENSION_KINDS: &[&str] = &["W0910"];

/// Codes only a build without the C front end (feature `c`) reports; the
/// test binary always has it.
const NEEDS_A_BUILD_WITHOUT_C: &[&str] = &["E0900"];

/// Codes only a command that emits C reports, with its arguments before
/// the file: checked through the binary.
const EMITTING: &[(&str, &[&str])] = &[
    ("E0911", &["expand", "--emit", "code"]),
    ("W0911", &["expand", "--emit", "code", "--allow-opaque"]),
    ("W0913", &["expand", "--emit", "code"]),
    ("E0913", &["expand", "--emit", "code"]),
    ("E0914", &["expand", "--emit", "code"]),
];

/// The codes `arrayflow ARGS FILE` reports for the C `source`.
fn emitted_codes(args: &[&str], source: &str) -> String {
    let dir = std::env::temp_dir().join(format!("arrayflow-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.c", args.len()));
    std::fs::write(&file, source).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .arg(&file)
        .output()
        .expect("the binary runs");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_c_example_gives_its_code() {
    let doc = std::fs::read_to_string("docs/c.md").expect("docs/c.md");
    let mut checked = 0;
    for (code, example) in c_sections(&doc) {
        let example = example.unwrap_or_else(|| panic!("{code} has no example"));
        if NEEDS_EXTENSION_KINDS.contains(&code.as_str())
            || NEEDS_A_BUILD_WITHOUT_C.contains(&code.as_str())
        {
            continue;
        }
        if let Some((_, args)) = EMITTING.iter().find(|(c, _)| *c == code) {
            let err = emitted_codes(args, &example);
            assert!(
                err.contains(&format!("[{code}]")),
                "{code}: got {err} for\n{example}"
            );
            checked += 1;
            continue;
        }
        let (_, diags) = arrayflow::cfront::compile(&example, FileId(0));
        let got: Vec<&str> = diags.iter().map(|d| d.code).collect();
        assert!(
            got.contains(&code.as_str()),
            "{code}: got {got:?} for\n{example}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} examples");
}

#[test]
fn the_first_c_kernel_is_valid_and_lowers_as_shown() {
    let doc = std::fs::read_to_string("docs/c.md").expect("docs/c.md");
    let mut blocks = doc.split("```c\n").skip(1);
    let kernel = blocks.next().and_then(|b| b.split("```").next()).unwrap();
    let (program, diags) = arrayflow::cfront::compile(kernel, FileId(0));
    assert!(!has_errors(&diags), "{diags:?}");
    let shown = doc
        .split("lowers to\n\n```\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    assert_eq!(arrayflow::print::program(&program.unwrap()), shown);
}

/// docs/expansion.md §8.1 shows emitted programs in blocks opening with
/// ```` ```loop emitted:FILE ````: each must be exactly what `expand
/// fixtures/papers/FILE --emit code` prints after its report.
#[test]
fn the_emitted_programs_in_the_docs_are_current() {
    let doc = std::fs::read_to_string("docs/expansion.md").expect("docs/expansion.md");
    let mut checked = 0;
    for part in doc.split("```loop emitted:").skip(1) {
        let (name, rest) = part.split_once('\n').expect("a file name line");
        let shown = rest.split("```").next().expect("a closing fence");
        let path = format!("fixtures/papers/{name}");
        let text = std::fs::read_to_string(&path).expect("the fixture");
        let (p, diags) = arrayflow::lower::compile(&text, FileId(0));
        assert!(!has_errors(&diags), "{path}");
        let e = arrayflow::codegen::emit(&p.expect("a program"), &Default::default())
            .unwrap_or_else(|m| panic!("{path}: {m}"));
        assert_eq!(shown.trim(), e.text.trim(), "docs/expansion.md, {name}");
        checked += 1;
    }
    assert_eq!(checked, 4, "the four examples of §8.1");
}
