//! The C syntax tree of a text, parsed once. Compiling a file, finding the
//! function its region came from (`origin`) and listing the functions it
//! defines (`opaque`) each need the tree of the same text; a preprocessed
//! PolyBench file, with its system headers, takes tens of milliseconds to
//! parse. The last text parsed keeps its tree, for every thread (the
//! database lowers on its own threads, the command line finds the origin
//! on the main one): a tree is reference-counted, so a copy is cheap.
//!
//! The C grammar takes a directive only where a block item may stand, so
//! `#pragma omp parallel for` between a brace-less `for (...)` header and
//! its body is a syntax error to it, though compilers accept it. Where the
//! text does not parse, such pragma lines are read as blanks (every byte
//! a space, so positions stay), and the statement each one precedes is
//! remembered: that loop is `doall` as if the pragma stood in a block.

use std::sync::{Arc, Mutex};

/// A text's tree, and each pragma read as blank: the start byte of the
/// statement it applies to, and its words after `#pragma`.
#[derive(Clone)]
pub(crate) struct Parsed {
    pub tree: tree_sitter::Tree,
    pub pragma_before: Arc<Vec<(usize, String)>>,
}

/// The last text parsed and its tree.
static LAST: Mutex<Option<(String, Parsed)>> = Mutex::new(None);

/// The cache, even after a thread panicked holding it (it only holds a
/// finished parse).
fn last() -> std::sync::MutexGuard<'static, Option<(String, Parsed)>> {
    LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The tree of `text`; `None` when the grammar cannot be loaded (a build
/// problem) or the parser gives up.
pub(crate) fn parse(text: &str) -> Option<Parsed> {
    let cached = match &*last() {
        Some((t, p)) if t == text => Some(p.clone()),
        _ => None,
    };
    if cached.is_some() {
        return cached;
    }
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
    let mut parsed = Parsed {
        tree: parser.parse(text, None)?,
        pragma_before: Arc::new(Vec::new()),
    };
    if parsed.tree.root_node().has_error() {
        let (blanked, before) = blank_header_pragmas(text);
        if !before.is_empty() {
            if let Some(t) = parser.parse(&blanked, None) {
                if !t.root_node().has_error() {
                    parsed = Parsed {
                        tree: t,
                        pragma_before: Arc::new(before),
                    };
                }
            }
        }
    }
    *last() = Some((text.to_string(), parsed.clone()));
    Some(parsed)
}

/// `text` with each `#pragma` line that follows a control header's `)` (or
/// `else`) made blank; for each, the start of the next token and its words.
fn blank_header_pragmas(text: &str) -> (String, Vec<(usize, String)>) {
    let mut out = text.as_bytes().to_vec();
    let mut before = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let Some(words) = line.trim().strip_prefix("#pragma") else {
            continue;
        };
        let prev = text[..start].trim_end();
        if !(prev.ends_with(')') || prev.ends_with("else")) {
            continue;
        }
        for b in &mut out[start..start + line.trim_end_matches(['\n', '\r']).len()] {
            *b = b' ';
        }
        let rest = &text[line_start..];
        let at = line_start + (rest.len() - rest.trim_start().len());
        before.push((at, words.trim().to_string()));
    }
    // Only spaces replaced ASCII and UTF-8 bytes of whole lines.
    (
        String::from_utf8(out).unwrap_or_else(|_| text.to_string()),
        before,
    )
}
