//! The book (docs/, built by mdBook from book.toml) stays whole and true:
//!
//! - SUMMARY.md names every page under docs/, every page it names exists,
//!   and every relative link between pages leads to a page that exists;
//! - docs/diagnostics.md lists every diagnostic code the source can emit,
//!   and no code the source does not emit;
//! - each command's reference page holds exactly what `arrayflow help CMD`
//!   prints, and docs/reference/commands.md what `arrayflow help` prints;
//!   `ARRAYFLOW_BLESS=1 cargo test --test docs_book` rewrites those blocks
//!   from the binary (read the diff before committing it);
//! - user-facing text (docs/, README.md, the fixtures' comments, comments
//!   in the source) does not read as a lab notebook: no issue numbers, no
//!   working sessions or helpers, no paths of a build machine;
//! - every file of the repository the docs name (`crates/model/src/hash.rs`,
//!   `tests/db.rs`, `fixtures/...`) exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// The repository's root, where `book.toml` is: this package's folder.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (relative to the root) whose name ends with one of
/// `exts`, relative to the root, sorted.
fn files(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let root = root();
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&d)) else {
            continue;
        };
        for e in entries {
            let p = d.join(e.expect("an entry").file_name());
            if root.join(&p).is_dir() {
                stack.push(p);
            } else if exts
                .iter()
                .any(|x| p.to_string_lossy().ends_with(&format!(".{x}")))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The targets of the Markdown links `](target)` of `text` that are
/// relative paths (not URLs, not anchors of the same page), without anchor.
fn relative_links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            let path = target.split('#').next().unwrap_or("");
            let external = target.contains("://") || target.starts_with("mailto:");
            (!external && !path.is_empty()).then(|| path.to_string())
        })
        .collect()
}

/// The repository paths `text` names: a top folder of the repository, then
/// a path that ends with a file extension (`src/lsp/mod.rs`, `tests/db.rs`).
fn repository_paths(text: &str) -> Vec<String> {
    const TOP: [&str; 8] = [
        "src/",
        "crates/",
        "tests/",
        "benches/",
        "fixtures/",
        "examples/",
        "rules/",
        "scripts/",
    ];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, _) in text.char_indices() {
        let before = text[..i].chars().next_back();
        if before.is_some_and(is_path_char) || !TOP.iter().any(|t| text[i..].starts_with(t)) {
            continue;
        }
        let end = text[i..]
            .find(|c: char| !is_path_char(c))
            .map_or(text.len(), |k| i + k);
        let path = text[i..end].trim_end_matches('.');
        let file = path.rsplit('/').next().unwrap_or("");
        // `examples/X/...` of a folder this repository does not have is
        // another project's (SMO's inputs).
        let ours = match path.strip_prefix("examples/") {
            Some(rest) => root()
                .join("examples")
                .join(rest.split('/').next().unwrap_or(""))
                .is_dir(),
            None => true,
        };
        if ours && file.contains('.') && !file.contains('*') {
            out.push(path.to_string());
        }
    }
    out
}

#[test]
fn every_file_the_docs_name_exists() {
    let mut pages = files("docs", &["md"]);
    pages.push(PathBuf::from("README.md"));
    pages.extend(files("crates", &["md"]));
    let mut missing = Vec::new();
    for page in &pages {
        for path in repository_paths(&read(page)) {
            if !root().join(&path).exists() {
                missing.push(format!("{}: {path}", page.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but missing:\n{}",
        missing.join("\n")
    );
    // The scan finds paths at all.
    let found = repository_paths("see `crates/model/src/hash.rs` and tests/db.rs.");
    assert_eq!(found, ["crates/model/src/hash.rs", "tests/db.rs"]);
}

#[test]
fn the_summary_names_every_page_and_every_link_leads_somewhere() {
    let root = root();
    let summary = read(Path::new("docs/SUMMARY.md"));
    let named: BTreeSet<String> = relative_links(&summary).into_iter().collect();
    for page in &named {
        assert!(
            root.join("docs").join(page).is_file(),
            "SUMMARY.md names {page}, which does not exist"
        );
    }
    let pages = files("docs", &["md"]);
    assert!(pages.len() > 20, "{} pages", pages.len());
    for p in &pages {
        let rel = p
            .strip_prefix("docs")
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel != "SUMMARY.md" {
            assert!(named.contains(&rel), "SUMMARY.md does not name docs/{rel}");
        }
        let dir = root.join(p).parent().unwrap().to_path_buf();
        for link in relative_links(&read(p)) {
            assert!(
                dir.join(&link).exists(),
                "{}: the link to {link} leads nowhere",
                p.display()
            );
        }
    }
    let book = read(Path::new("book.toml"));
    assert!(book.contains("src = \"docs\""), "book.toml: {book}");
}

/// The diagnostic codes written as string literals (`"E0101"`) in the Rust
/// files under `dir`.
fn codes_in_source(dir: &str, into: &mut BTreeSet<String>) {
    for p in files(dir, &["rs"]) {
        let text = read(&p);
        for (i, _) in text.match_indices('"') {
            let Some(code) = text.get(i + 1..i + 6) else {
                continue;
            };
            let b = code.as_bytes();
            if (b[0] == b'E' || b[0] == b'W')
                && b[1..].iter().all(u8::is_ascii_digit)
                && text[i + 6..].starts_with('"')
            {
                into.insert(code.to_string());
            }
        }
    }
}

#[test]
fn the_diagnostics_page_lists_every_code_the_source_emits() {
    let mut emitted = BTreeSet::new();
    // The source is in src/, or in the crates of a workspace.
    codes_in_source("src", &mut emitted);
    codes_in_source("crates", &mut emitted);
    assert!(emitted.len() > 60, "only {} codes found", emitted.len());
    let page = read(Path::new("docs/diagnostics.md"));
    let listed: BTreeSet<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| ["))
        .map(|l| l[..5].to_string())
        .collect();
    let missing: Vec<_> = emitted.difference(&listed).collect();
    assert!(missing.is_empty(), "docs/diagnostics.md lacks {missing:?}");
    let stale: Vec<_> = listed.difference(&emitted).collect();
    assert!(
        stale.is_empty(),
        "docs/diagnostics.md lists {stale:?}, which the source never emits"
    );
}

/// `arrayflow help ARGS`, with trailing spaces removed from each line.
fn help(args: &[&str]) -> String {
    let o = std::process::Command::new(BIN)
        .arg("help")
        .args(args)
        .output()
        .expect("run arrayflow");
    assert!(o.status.success(), "arrayflow help {args:?}");
    let text = String::from_utf8(o.stdout).expect("UTF-8");
    text.lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

/// The commands `arrayflow help` lists (but `help` itself).
fn commands(overview: &str) -> Vec<String> {
    overview
        .split("Commands:\n")
        .nth(1)
        .expect("a command list")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The text of the ```` ```text ```` block after `marker` in `page`, and
/// where it starts and ends.
fn block_after(page: &str, marker: &str) -> Option<(usize, usize)> {
    let at = page.find(marker)?;
    let open = at + page[at..].find("```text\n")? + "```text\n".len();
    let close = open + page[open..].find("```")?;
    Some((open, close))
}

#[test]
fn the_command_reference_is_the_help_text() {
    let bless = std::env::var_os("ARRAYFLOW_BLESS").is_some();
    let overview = help(&[]);
    let cmds = commands(&overview);
    assert!(cmds.len() >= 15, "{cmds:?}");
    let mut pages = vec![(
        PathBuf::from("docs/reference/commands.md"),
        "<!-- help -->".to_string(),
        overview.clone(),
    )];
    for c in &cmds {
        pages.push((
            PathBuf::from(format!("docs/reference/{c}.md")),
            format!("<!-- help: {c} -->"),
            help(&[c]),
        ));
    }
    let mut stale = Vec::new();
    for (path, marker, text) in pages {
        let page = read(&path);
        let (open, close) = block_after(&page, &marker)
            .unwrap_or_else(|| panic!("{}: no {marker} followed by a text block", path.display()));
        if page[open..close] != text {
            if bless {
                let new = format!("{}{text}{}", &page[..open], &page[close..]);
                std::fs::write(root().join(&path), new).expect("write the page");
            }
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty() || bless,
        "not what `arrayflow help` prints (ARRAYFLOW_BLESS=1 rewrites them): {stale:?}"
    );
    let overview_page = read(Path::new("docs/reference/commands.md"));
    for c in &cmds {
        assert!(
            overview_page.contains(&format!("[`{c}`]({c}.md)")),
            "docs/reference/commands.md does not link {c}"
        );
    }
}

/// What user-facing text must not contain, as (what, test on a lowercased
/// line).
fn notebook_words(line: &str) -> Option<&'static str> {
    let l = line.to_lowercase();
    let words: Vec<&str> = l
        .split(|c: char| !c.is_alphanumeric() && c != '#')
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| {
        let w = w.trim_start_matches('#');
        !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())
    };
    for pair in words.windows(2) {
        if matches!(pair[0], "issue" | "issues" | "session" | "sessions") && number(pair[1]) {
            return Some("an issue or session number");
        }
    }
    if words
        .iter()
        .any(|w| w.starts_with('#') && w.len() > 1 && number(w))
    {
        return Some("an issue reference (#N)");
    }
    if words
        .iter()
        .any(|w| matches!(*w, "session" | "sessions" | "helper" | "helpers"))
    {
        return Some("a session or a helper");
    }
    for path in ["/work/", "/tmp/shared", "shared/papers", "shared/design"] {
        if l.contains(path) {
            return Some("a path of the build machine");
        }
    }
    None
}

/// The comment lines of a fixture (`#` in `.loop`, `//` and `/* */` lines
/// in C, every line of Markdown and of rule files' `//` comments).
fn comment_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            match ext {
                "loop" => t.starts_with('#') || l.contains(" # "),
                "c" | "h" | "dl" => {
                    t.starts_with("//")
                        || t.starts_with("/*")
                        || t.starts_with('*')
                        || l.contains("//")
                }
                _ => true,
            }
        })
        .map(|(n, l)| (n + 1, l.to_string()))
        .collect()
}

#[test]
fn user_facing_text_is_not_a_lab_notebook() {
    let mut found = Vec::new();
    let mut scanned = 0;
    let mut scan = |path: &Path, lines: Vec<(usize, String)>| {
        scanned += 1;
        for (n, l) in lines {
            if let Some(what) = notebook_words(&l) {
                found.push(format!("{}:{n}: {what}: {}", path.display(), l.trim()));
            }
        }
    };
    let mut pages = files("docs", &["md"]);
    pages.push(PathBuf::from("README.md"));
    for p in pages {
        let text = read(&p);
        scan(
            &p,
            text.lines()
                .enumerate()
                .map(|(n, l)| (n + 1, l.to_string()))
                .collect(),
        );
    }
    for p in files("fixtures", &["loop", "c", "h", "md", "dl"]) {
        let text = read(&p);
        scan(&p, comment_lines(&p, &text));
    }
    // Comments in the source: issue numbers and build-machine paths only
    // (the language server's protocol has sessions, the C output helpers).
    let mut source = files("src", &["rs"]);
    source.extend(files("crates", &["rs"]));
    for p in source {
        let text = read(&p);
        for (n, l) in text.lines().enumerate() {
            let Some(comment) = l.find("//").map(|i| &l[i..]) else {
                continue;
            };
            if let Some(what @ ("an issue or session number" | "a path of the build machine")) =
                notebook_words(comment)
            {
                found.push(format!("{}:{}: {what}: {}", p.display(), n + 1, l.trim()));
            }
        }
    }
    assert!(scanned > 100, "only {scanned} files scanned");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_word_check_can_fail() {
    assert!(notebook_words("Issue 20. Until session 10 a window was").is_some());
    assert!(notebook_words("see #36 for the plan").is_some());
    assert!(notebook_words("With a helper's build running").is_some());
    assert!(notebook_words("the contract (/work/shared/design/language.md)").is_some());
    assert!(notebook_words("figures at `16ecc9b` (2026-11-21): 181 ms").is_none());
    assert!(notebook_words("#define N 4").is_none());
    assert!(notebook_words("| [E0101](language.md#e0101-not-declared) |").is_none());
}
