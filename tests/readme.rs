//! README.md and the book (docs/) stay true.
//!
//! - Every indented `arrayflow ...` line of README.md runs with exit 0 on the
//!   shipped examples, and installing uses `--locked` (the versions in
//!   Cargo.lock, the ones the tests ran with).
//! - Every ```` ```console ```` block of README.md and docs/ is a transcript:
//!   each `$ arrayflow ARGS` line is run from the repository's root, and the
//!   lines after it, up to the next `$ ` line or the end of the block, must
//!   be what it prints (its standard output, then its standard error).
//!   In the expected lines, a line `...` stands for any number of lines
//!   (none included), `[..]` inside a line for any text on that line, and a
//!   last line `[exit status: N]` for an exit status N (0 without it).
//!   Trailing spaces, and blank lines at the end, are ignored.

use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// The repository's root, where `book.toml` is: this package's folder.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// The indented command lines of README.md that start with `arrayflow `.
fn commands(readme: &str) -> Vec<Vec<String>> {
    readme
        .lines()
        .filter_map(|l| l.strip_prefix("    arrayflow "))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// `args` with every `.svg` output moved to the scratch directory, so that
/// running the examples writes nothing into the checkout.
fn scratch_outputs(args: &[String]) -> Vec<String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    args.iter()
        .map(|a| {
            if a.ends_with(".svg") {
                let name = Path::new(a).file_name().unwrap_or_default();
                dir.join(name).to_string_lossy().into_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

#[test]
fn install_uses_the_lock_file() {
    let r = readme();
    assert!(
        r.contains("    cargo install --locked --path ."),
        "README.md"
    );
    assert!(!r.contains("    cargo install --path"), "README.md");
}

#[test]
fn every_command_shown_runs() {
    let cmds = commands(&readme());
    assert!(cmds.len() >= 8, "README.md shows {} commands", cmds.len());
    for cmd in cmds {
        // The server waits on stdin: `tests/lsp.rs` covers it.
        if cmd[0] == "lsp" {
            continue;
        }
        let o = std::process::Command::new(BIN)
            .args(scratch_outputs(&cmd))
            .current_dir(root())
            .output()
            .expect("run arrayflow");
        assert!(
            o.status.success(),
            "`arrayflow {}` failed: {}",
            cmd.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !o.stdout.is_empty() || cmd[0] == "check" || cmd[0] == "plot",
            "{cmd:?}"
        );
    }
}

/// One `$ arrayflow ...` line of a console block and what it must print.
#[derive(Debug)]
struct Example {
    /// Where it is, `FILE:LINE`.
    at: String,
    args: Vec<String>,
    expected: Vec<String>,
    status: i32,
}

/// The console blocks' examples of one Markdown text.
fn examples(file: &str, text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    for (n, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", n + 1);
        if !in_block {
            in_block = line.trim() == "```console";
            continue;
        }
        if line.trim() == "```" {
            in_block = false;
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            assert_eq!(
                words.first().map(String::as_str),
                Some("arrayflow"),
                "{at}: a console block runs `arrayflow` only"
            );
            out.push(Example {
                at,
                args: words[1..].to_vec(),
                expected: Vec::new(),
                status: 0,
            });
            continue;
        }
        let ex = out
            .last_mut()
            .unwrap_or_else(|| panic!("{at}: output before any `$ arrayflow` line"));
        if let Some(s) = line
            .strip_prefix("[exit status: ")
            .and_then(|s| s.strip_suffix(']'))
        {
            ex.status = s.parse().unwrap_or_else(|_| panic!("{at}: {line}"));
        } else {
            assert_eq!(ex.status, 0, "{at}: output after the exit status");
            ex.expected.push(line.trim_end().to_string());
        }
    }
    assert!(!in_block, "{file}: a console block is not closed");
    out
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether `lines` match `pattern`, where a `...` line stands for any number
/// of lines.
fn lines_match(pattern: &[String], lines: &[&str]) -> bool {
    match pattern.split_first() {
        None => lines.is_empty(),
        Some((p, rest)) if p == "..." => {
            (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..]))
        }
        Some((p, rest)) => {
            !lines.is_empty() && line_matches(p, lines[0]) && lines_match(rest, &lines[1..])
        }
    }
}

/// The Markdown files of the book (docs/, recursively) and README.md,
/// relative to the root.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![PathBuf::from("README.md")];
    let mut stack = vec![PathBuf::from("docs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(root.join(&d)).expect("docs/") {
            let p = d.join(e.expect("an entry").file_name());
            if root.join(&p).is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_matcher_can_fail() {
    let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&p(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(lines_match(&p(&["a", "...", "b"]), &["a", "b"]));
    assert!(!lines_match(&p(&["a", "...", "d"]), &["a", "b", "c"]));
    assert!(!lines_match(&p(&["a", "b"]), &["a", "b", "c"]));
    assert!(line_matches("x = [..] ms", "x = 12 ms"));
    assert!(!line_matches("x = [..] ms", "x = 12 s"));
    assert!(!line_matches("a[..]b[..]c", "acb"));
    let ex = examples(
        "t.md",
        "```console\n$ arrayflow check f\nline\n[exit status: 1]\n```\n",
    );
    assert_eq!(ex.len(), 1);
    assert_eq!((ex[0].status, ex[0].expected.len()), (1, 1));
}

#[test]
fn every_console_example_prints_what_it_shows() {
    let root = root();
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(root.join(&file)).expect("a page");
        for ex in examples(&file.to_string_lossy(), &text) {
            let o = std::process::Command::new(BIN)
                .args(scratch_outputs(&ex.args))
                .current_dir(&root)
                .env("NO_COLOR", "1")
                .output()
                .expect("run arrayflow");
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            // Blank lines at the end (after a diagnostic) are not shown.
            let mut lines: Vec<&str> = printed.lines().map(str::trim_end).collect();
            while lines.last() == Some(&"") {
                lines.pop();
            }
            let mut expected = ex.expected.clone();
            while expected.last().is_some_and(String::is_empty) {
                expected.pop();
            }
            let status = o.status.code().unwrap_or(-1);
            if status != ex.status || !lines_match(&expected, &lines) {
                failures.push(format!(
                    "{}: `arrayflow {}` exited {status} (expected {}) and printed:\n{printed}",
                    ex.at,
                    ex.args.join(" "),
                    ex.status
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 20, "only {checked} console examples");
}
