//! Walks over the syntax tree that statements share: every node under a
//! root, the variable an lvalue is rooted at, the names a stretch of
//! statements may change, a `for` header's counter.

use super::fields::{Fields, F};
use super::scan::children;
use std::collections::HashSet;
use tree_sitter::Node;

/// Visits every node under `roots` (iteratively: no recursion on input).
pub fn walk<'t>(roots: &[Node<'t>], mut f: impl FnMut(Node<'t>)) {
    for &root in roots {
        // A cursor made from `root` never leaves it.
        let mut c = root.walk();
        'tree: loop {
            f(c.node());
            if c.goto_first_child() {
                continue;
            }
            loop {
                if c.goto_next_sibling() {
                    break;
                }
                if !c.goto_parent() {
                    break 'tree;
                }
            }
        }
    }
}

/// The variable an lvalue is rooted at (`A` in `A[i].x`, `*(A + 1)`).
pub fn lvalue_root<'t>(src: &'t str, n: Node<'t>) -> Option<&'t str> {
    let mut n = n;
    for _ in 0..1000 {
        match n.kind() {
            "identifier" => return src.get(n.byte_range()),
            "subscript_expression"
            | "field_expression"
            | "pointer_expression"
            | "update_expression" => n = n.field(F::Argument)?,
            "cast_expression" => n = n.field(F::Value)?,
            "parenthesized_expression" | "binary_expression" => {
                n = n.field(F::Left).or_else(|| children(n).first().copied())?
            }
            _ => return None,
        }
    }
    None
}

/// Names of the variables the statements may change: assigned, updated,
/// passed by address or passed whole to a call.
pub fn assigned_names<'t>(src: &'t str, roots: &[Node<'t>]) -> HashSet<&'t str> {
    prescan(src, roots).0
}

/// [`assigned_names`], and the names `for` loops count with, in one walk.
pub fn prescan<'t>(src: &'t str, roots: &[Node<'t>]) -> (HashSet<&'t str>, Vec<&'t str>) {
    let mut out = HashSet::new();
    let mut counters = Vec::new();
    walk(roots, |n| {
        let target = match n.kind() {
            "assignment_expression" => n.field(F::Left),
            "update_expression" => n.field(F::Argument),
            "argument_list" => {
                for a in children(n) {
                    if let Some(name) = lvalue_root(src, a) {
                        out.insert(name);
                    }
                }
                None
            }
            "for_statement" => {
                if let Some((name, _)) = n.field(F::Initializer).and_then(|i| init_name(src, i)) {
                    counters.push(name);
                }
                None
            }
            _ => None,
        };
        if let Some(name) = target.and_then(|t| lvalue_root(src, t)) {
            out.insert(name);
        }
    });
    (out, counters)
}

/// `int i = lb` or `i = lb`: the counter's name and start.
pub fn init_name<'t>(src: &'t str, init: Node<'t>) -> Option<(&'t str, Node<'t>)> {
    match init.kind() {
        "declaration" => {
            let mut c = init.walk();
            let decls: Vec<Node<'t>> = init.fields(F::Declarator, &mut c);
            let [d] = decls.as_slice() else { return None };
            if d.kind() != "init_declarator" {
                return None;
            }
            let name = d.field(F::Declarator)?;
            (name.kind() == "identifier")
                .then(|| Some((src.get(name.byte_range())?, d.field(F::Value)?)))?
        }
        "init_declarator" => {
            let name = init.field(F::Declarator)?;
            (name.kind() == "identifier")
                .then(|| Some((src.get(name.byte_range())?, init.field(F::Value)?)))?
        }
        "assignment_expression" => {
            let left = init.field(F::Left)?;
            let op = init.field(F::Operator)?;
            (left.kind() == "identifier" && src.get(op.byte_range()) == Some("="))
                .then(|| Some((src.get(left.byte_range())?, init.field(F::Right)?)))?
        }
        _ => None,
    }
}
