//! The C syntax tree of a text, parsed once. Compiling a file, finding the
//! function its region came from (`origin`) and listing the functions it
//! defines (`opaque`) each need the tree of the same text; a preprocessed
//! PolyBench file, with its system headers, takes tens of milliseconds to
//! parse. The last text parsed on each thread keeps its tree: a tree is
//! reference-counted, so a copy is cheap.

use std::cell::RefCell;

thread_local! {
    static LAST: RefCell<Option<(String, tree_sitter::Tree)>> = const { RefCell::new(None) };
}

/// The tree of `text`; `None` when the grammar cannot be loaded (a build
/// problem) or the parser gives up.
pub(crate) fn parse(text: &str) -> Option<tree_sitter::Tree> {
    let cached = LAST.with(|l| match &*l.borrow() {
        Some((t, tree)) if t == text => Some(tree.clone()),
        _ => None,
    });
    if cached.is_some() {
        return cached;
    }
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
    let tree = parser.parse(text, None)?;
    LAST.with(|l| *l.borrow_mut() = Some((text.to_string(), tree.clone())));
    Some(tree)
}
