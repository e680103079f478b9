//! What the C front end learns about a file before lowering anything:
//! object-like and function-like macros, prototypes, file-scope variables,
//! `#pragma arrayflow array` ranges, and the regions to analyse.

use super::fields::{Fields, F};
use super::mini::{self, ArraySpec, Mini};
use super::{span, text, CVar, Ctx, VarId};
use crate::model::{ElemType, Span};
use tree_sitter::Node;

/// An object-like `#define`.
pub struct Define {
    pub name_span: Span,
    /// The body when it is an integer expression.
    pub body: Option<Mini>,
}

/// A region to analyse: the statements between `#pragma scop` and
/// `#pragma endscop`, or the body of a function.
pub struct Region<'t> {
    pub func: Node<'t>,
    pub func_name: &'t str,
    pub items: Vec<Node<'t>>,
    /// Where messages about the whole region point: the pragma or the
    /// function's name.
    pub anchor: Span,
    pub pragma: bool,
    /// The byte range of the region: declarations inside it are local.
    pub span: Span,
}

/// Children that carry meaning: named, and not comments.
pub fn children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| k.kind() != "comment")
        .collect()
}

/// A pragma's span without the line end tree-sitter includes in it.
pub fn pragma_span(n: Node<'_>) -> Span {
    let end = n
        .field(F::Argument)
        .or(n.field(F::Directive))
        .map_or(n.end_byte(), |x| x.end_byte());
    Span::new(n.start_byte(), end)
}

/// `#pragma WORDS` → WORDS (trimmed), for a `preproc_call` node.
pub fn pragma<'t>(src: &'t str, n: Node<'t>) -> Option<&'t str> {
    if n.kind() != "preproc_call" {
        return None;
    }
    let d = n.field(F::Directive)?;
    let dt: String = text(src, d)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if dt != "#pragma" {
        return None;
    }
    Some(n.field(F::Argument).map_or("", |a| text(src, a).trim()))
}

fn pragma_words<'t>(src: &'t str, n: Node<'t>) -> Vec<&'t str> {
    pragma(src, n).map_or_else(Vec::new, |p| p.split_whitespace().collect())
}

impl<'t> Ctx<'t> {
    /// Top-level items, looking through `#if`/`#ifdef` blocks and
    /// `extern "C" { }`.
    fn top_items(&self, n: Node<'t>, out: &mut Vec<Node<'t>>, depth: usize) {
        if depth > 64 {
            return;
        }
        for c in children(n) {
            match c.kind() {
                "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "preproc_elifdef"
                | "linkage_specification"
                | "declaration_list" => self.top_items(c, out, depth + 1),
                _ => out.push(c),
            }
        }
    }

    /// The file-level pass: macros, prototypes, globals, enumerators,
    /// `#pragma arrayflow array` at file scope, counter names. Returns the
    /// function definitions in file order.
    pub fn scan_file(&mut self, root: Node<'t>) -> Vec<Node<'t>> {
        let mut items = Vec::new();
        self.top_items(root, &mut items, 0);
        let mut functions = Vec::new();
        let mut file_pragmas = Vec::new();
        for n in items {
            match n.kind() {
                "preproc_def" => self.define(n),
                "preproc_function_def" => {
                    if let Some(name) = n.field(F::Name) {
                        let params = n.field(F::Parameters).map_or_else(Vec::new, |ps| {
                            (children(ps).into_iter())
                                .filter(|p| p.kind() == "identifier")
                                .map(|p| text(self.src, p))
                                .collect()
                        });
                        let body = n.field(F::Value).map_or("", |v| text(self.src, v));
                        self.fn_macros.insert(text(self.src, name), (params, body));
                    }
                }
                "function_definition" => {
                    if let Some(d) = n.field(F::Declarator) {
                        self.prototype(d);
                    }
                    functions.push(n);
                }
                "declaration" => {
                    for v in self.declaration(n, true) {
                        let name = self.vars[v.index()].name;
                        self.globals.entry(name).or_insert(v);
                    }
                }
                "preproc_call" => file_pragmas.push(n),
                "type_definition" => self.typedef(n),
                _ => {}
            }
            self.enumerators(n);
        }
        for p in file_pragmas {
            self.range_pragma(p, &[]);
        }
        functions
    }

    fn define(&mut self, n: Node<'t>) {
        let Some(name) = n.field(F::Name) else {
            return;
        };
        let key = text(self.src, name);
        if self.defines.contains_key(key) {
            return; // the first definition counts (docs/c.md)
        }
        let body = n
            .field(F::Value)
            .and_then(|v| mini::define_body(text(self.src, v), v.start_byte()));
        self.defines.insert(
            key,
            Define {
                name_span: span(name),
                body,
            },
        );
    }

    /// Records which parameters of a declared function are pointers to
    /// `const` (the function only reads through them).
    pub fn prototype(&mut self, d: Node<'t>) {
        let mut d = d;
        while d.kind() != "function_declarator" {
            match d.field(F::Declarator) {
                Some(inner) => d = inner,
                None => return,
            }
        }
        let (Some(name), Some(params)) = (d.field(F::Declarator), d.field(F::Parameters)) else {
            return;
        };
        if name.kind() != "identifier" {
            return;
        }
        let read_only = children(params)
            .into_iter()
            .map(|p| {
                let is_const = has_const(self.src, p);
                let indirect = p.field(F::Declarator).is_some_and(|d| {
                    matches!(
                        d.kind(),
                        "pointer_declarator"
                            | "array_declarator"
                            | "abstract_pointer_declarator"
                            | "abstract_array_declarator"
                    )
                });
                is_const && indirect
            })
            .collect();
        self.protos.entry(text(self.src, name)).or_insert(read_only);
    }

    /// Enumerators with a value anywhere in a declaration: constants.
    fn enumerators(&mut self, n: Node<'t>) {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if x.kind() == "enumerator" {
                if let (Some(name), Some(value)) = (x.field(F::Name), x.field(F::Value)) {
                    let v = self.new_var(CVar {
                        name: text(self.src, name),
                        pos: name.start_byte(),
                        span: span(name),
                        elem: ElemType::Int,
                        ctype: "int",
                        dims: Vec::new(),
                        pointers: 0,
                        is_const: true,
                        is_struct: false,
                        init: Some(value),
                        func_param: false,
                        global: true,
                        range: None,
                        param: None,
                        array: None,
                    });
                    let key = self.vars[v.index()].name;
                    self.globals.entry(key).or_insert(v);
                }
                continue;
            }
            if matches!(
                x.kind(),
                "declaration" | "enum_specifier" | "enumerator_list" | "type_definition"
            ) {
                stack.extend(children(x));
            }
        }
    }

    /// `#pragma arrayflow array A[lo..hi]...`: the declared range of `A` for
    /// the analysis. `A` is looked up in `local` (innermost last), then
    /// among the globals.
    pub fn range_pragma(&mut self, n: Node<'t>, local: &[(&'t str, VarId)]) {
        let words = pragma_words(self.src, n);
        if words.first() != Some(&"arrayflow") {
            return;
        }
        let Some(arg) = n.field(F::Argument) else {
            return;
        };
        let t = text(self.src, arg);
        let rest = t
            .trim_start()
            .strip_prefix("arrayflow")
            .map(str::trim_start)
            .unwrap_or("");
        // `#pragma arrayflow pure f, g`: calls to them are pure (docs/c.md,
        // Calls).
        if let Some(names) = rest.strip_prefix("pure") {
            let names = names.split(|c: char| c.is_whitespace() || c == ',');
            self.declared_pure.extend(names.filter(|n| !n.is_empty()));
            return;
        }
        let Some(spec_text) = rest.strip_prefix("array") else {
            self.warn(
                super::W_PRAGMA,
                "unknown `#pragma arrayflow`; ignored",
                pragma_span(n),
                "not understood",
                "the forms are `#pragma arrayflow array NAME[lo..hi]...` and `#pragma arrayflow pure NAME...`",
            );
            return;
        };
        let base = arg.start_byte() + (t.len() - spec_text.len());
        let spec: Option<ArraySpec> = mini::array_spec(spec_text, base);
        let Some(((name, name_span), dims)) = spec else {
            self.warn(
                super::W_PRAGMA,
                "malformed `#pragma arrayflow array`; ignored",
                pragma_span(n),
                "expected `NAME[lo..hi]...`",
                "bounds are integer expressions of constants and parameters, inclusive",
            );
            return;
        };
        let var = local
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
            .or_else(|| self.globals.get(name.as_str()).copied());
        let Some(v) = var else {
            self.warn(
                super::W_PRAGMA,
                format!("`#pragma arrayflow array`: no array `{name}` is declared here; ignored"),
                name_span,
                "unknown name",
                "the pragma must follow the array's declaration in the same scope",
            );
            return;
        };
        let declared = self.vars[v.index()].dims.len();
        if declared != dims.len() {
            self.warn(
                super::W_PRAGMA,
                format!(
                    "`#pragma arrayflow array`: `{name}` has {declared} dimension(s), the pragma gives {}; ignored",
                    dims.len()
                ),
                name_span,
                "wrong number of ranges",
                "give one `[lo..hi]` per dimension",
            );
            return;
        }
        self.vars[v.index()].range = Some(dims);
    }

    /// Every `#pragma scop` / `#pragma endscop` node, in file order. Only
    /// nodes that hold statements are searched.
    fn scop_pragmas(&self, root: Node<'t>) -> Vec<(Node<'t>, bool)> {
        let mut out = Vec::new();
        if !self.src.contains("scop") {
            return out;
        }
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let mut c = n.walk();
            let kids: Vec<Node<'t>> = n.children(&mut c).collect();
            for k in kids.into_iter().rev() {
                match k.kind() {
                    "preproc_call" => match pragma_words(self.src, k).as_slice() {
                        ["scop"] => out.push((k, true)),
                        ["endscop"] => out.push((k, false)),
                        _ => {}
                    },
                    "function_definition"
                    | "compound_statement"
                    | "for_statement"
                    | "while_statement"
                    | "do_statement"
                    | "if_statement"
                    | "else_clause"
                    | "labeled_statement"
                    | "switch_statement"
                    | "case_statement"
                    | "preproc_if"
                    | "preproc_ifdef"
                    | "preproc_else"
                    | "preproc_elif"
                    | "preproc_elifdef"
                    | "linkage_specification"
                    | "declaration_list"
                    | "ERROR" => stack.push(k),
                    _ => {}
                }
            }
        }
        out.sort_by_key(|(n, _)| n.start_byte());
        out
    }

    /// The regions of the file: pragma regions when there is any `#pragma
    /// scop`, else every function body.
    pub fn regions(&mut self, root: Node<'t>, functions: &[Node<'t>]) -> Vec<Region<'t>> {
        let pragmas = self.scop_pragmas(root);
        if pragmas.is_empty() {
            return functions
                .iter()
                .filter_map(|&f| self.function_region(f))
                .collect();
        }
        let mut out: Vec<Region<'t>> = Vec::new();
        let mut k = 0;
        while k < pragmas.len() {
            let (p, is_start) = pragmas[k];
            k += 1;
            if !is_start {
                self.warn(
                    super::W_PRAGMA,
                    "`#pragma endscop` without a `#pragma scop` before it; ignored",
                    pragma_span(p),
                    "no region is open",
                    "a region is the statements between `#pragma scop` and `#pragma endscop` in one block",
                );
                continue;
            }
            let end = pragmas.get(k).copied();
            let paired = match end {
                Some((e, false)) => e.parent() == p.parent(),
                _ => false,
            };
            if !paired {
                self.warn(
                    super::W_PRAGMA,
                    "`#pragma scop` without a matching `#pragma endscop` in the same block; the region is skipped",
                    pragma_span(p),
                    "region not closed",
                    "put `#pragma endscop` after the last statement of the region, in the same block",
                );
                continue;
            }
            let Some((e, _)) = end else { continue };
            k += 1;
            let Some(parent) = p.parent() else { continue };
            let items: Vec<Node<'t>> = children(parent)
                .into_iter()
                .filter(|c| c.start_byte() > p.start_byte() && c.end_byte() <= e.start_byte())
                .collect();
            if parent.kind() == "translation_unit" {
                for f in items.iter().filter(|f| f.kind() == "function_definition") {
                    if let Some(r) = self.function_region(*f) {
                        out.push(r);
                    }
                }
                continue;
            }
            let mut func = parent;
            while func.kind() != "function_definition" {
                match func.parent() {
                    Some(up) => func = up,
                    None => break,
                }
            }
            if func.kind() != "function_definition" {
                self.warn(
                    super::W_PRAGMA,
                    "`#pragma scop` outside a function; the region is skipped",
                    pragma_span(p),
                    "not in a function body",
                    "regions are statements of a function body",
                );
                continue;
            }
            out.push(Region {
                func,
                func_name: function_name(self.src, func),
                items,
                anchor: pragma_span(p),
                pragma: true,
                span: Span::new(p.end_byte(), e.start_byte()),
            });
        }
        out
    }

    pub(super) fn function_region(&self, f: Node<'t>) -> Option<Region<'t>> {
        let body = f.field(F::Body)?;
        let name_span = function_name_node(f).map_or(span(f), span);
        Some(Region {
            func: f,
            func_name: function_name(self.src, f),
            items: children(body),
            anchor: name_span,
            pragma: false,
            span: span(body),
        })
    }
}

fn function_name_node(f: Node<'_>) -> Option<Node<'_>> {
    let mut d = f.field(F::Declarator)?;
    loop {
        if d.kind() == "identifier" {
            return Some(d);
        }
        d = d.field(F::Declarator)?;
    }
}

pub fn function_name<'t>(src: &'t str, f: Node<'t>) -> &'t str {
    function_name_node(f).map_or("?", |n| text(src, n))
}

/// Whether a declaration or parameter declaration has a `const` qualifier
/// on its base type.
pub fn has_const(src: &str, n: Node<'_>) -> bool {
    children(n)
        .iter()
        .any(|c| c.kind() == "type_qualifier" && text(src, *c) == "const")
}

/// The expression inside parentheses and casts: `((double *) &A[0])` is
/// `&A[0]`.
pub fn without_casts(mut n: Node<'_>) -> Node<'_> {
    loop {
        n = match n.kind() {
            "parenthesized_expression" => match children(n).first() {
                Some(&x) => x,
                None => return n,
            },
            "cast_expression" => match n.field(F::Value) {
                Some(x) => x,
                None => return n,
            },
            _ => return n,
        }
    }
}
