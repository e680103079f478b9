//! The C function a program's one region came from, so that a transformed
//! region can be printed back into it (`emit::program_in`): the function's
//! text before and after the region as the file spells it (its signature
//! with `static`, `DATA_TYPE` and PolyBench's macros kept), the names the
//! region sees there, and each array's element type as declared.

use super::fields::{Fields, F};
use super::scan::children;
use super::{text, Ctx};
use crate::diagnostics::FileId;
use crate::model::Span;
use tree_sitter::Node;

pub use arrayflow_cprint::origin::{Origin, Origins};

/// The functions of the regions of `text` (C, preprocessed or not), whose
/// spans `to_original` maps into `original`, the file as written; `None`
/// when the file has no region, two regions in one function, or one the
/// file's own text does not show.
pub fn find(
    text_: &str,
    original: &str,
    to_original: &dyn Fn(Span) -> Option<Span>,
) -> Option<Origins> {
    let tree = super::tree::parse(text_)?.tree;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut cx = Ctx::new(text_, FileId(0));
    let functions = cx.scan_file(root);
    let regions = cx.regions(root, &functions);
    if regions.is_empty() {
        return None;
    }
    let mut out = Origins {
        functions: Vec::new(),
        text: original.to_string(),
    };
    for r in &regions {
        // Two regions of one function would be two texts for one place.
        if out
            .functions
            .iter()
            .any(|o| o.source.0 == r.func.start_byte())
        {
            return None;
        }
        out.functions
            .push(find_one(text_, original, to_original, root, r)?);
    }
    Some(out)
}

/// The origin of the region `r` of `text_` (whose tree's root is `root`).
fn find_one(
    text_: &str,
    original: &str,
    to_original: &dyn Fn(Span) -> Option<Span>,
    root: Node<'_>,
    r: &super::scan::Region<'_>,
) -> Option<Origin> {
    let body = r.func.field(F::Body)?;
    let (start, end) = if r.pragma {
        (r.span.start as usize, r.span.end as usize)
    } else {
        (body.start_byte() + 1, body.end_byte() - 1)
    };
    let map = |at: usize| to_original(Span::new(at, at + 1)).map(|s| s.start as usize);
    let f_start = map(r.func.start_byte())?;
    let f_end = to_original(Span::new(r.func.end_byte() - 1, r.func.end_byte()))?.end as usize;
    // The region's ends: at a line start after `#pragma scop`, and the
    // start of `#pragma endscop`; in the original, the same lines.
    let (o_start, o_end) = if r.pragma {
        let line = text_[..start.saturating_sub(1)]
            .rfind('\n')
            .map_or(0, |k| k + 1);
        let p = map(line + indent(&text_[line..]))?;
        let after = original[p..]
            .find('\n')
            .map_or(original.len(), |k| p + k + 1);
        (after, map(end + indent(&text_[end..]))?)
    } else {
        (map(start - 1)? + 1, map(end)?)
    };
    if !(f_start <= o_start && o_start <= o_end && o_end <= f_end && f_end <= original.len()) {
        return None;
    }
    let mut o = Origin {
        name: r.func_name.to_string(),
        source: (r.func.start_byte(), r.func.end_byte()),
        at: (f_start, f_end),
        prefix: original.get(f_start..o_start)?.to_string(),
        suffix: original.get(o_end..f_end)?.to_string(),
        ..Origin::default()
    };
    // Globals, macros and functions of the file.
    for n in children(root) {
        match n.kind() {
            "declaration" => declared(text_, n, &mut o),
            "preproc_def" => {
                if let Some(name) = n.field(F::Name) {
                    o.visible.insert(text(text_, name).to_string());
                }
            }
            "function_definition" => {
                let name = super::scan::function_name(text_, n).to_string();
                o.functions.insert(name.clone());
                o.defined.insert(name);
            }
            _ => {}
        }
    }
    // The parameters, typed as the file writes them when its own text
    // parses with as many parameters.
    let params = parameters(text_, r.func);
    let spelled = spelled_types(original.get(f_start..f_end)?);
    let same = spelled.len() == params.len();
    for (k, (name, ty)) in params.into_iter().enumerate() {
        let ty = if same { spelled[k].clone() } else { ty };
        o.types.insert(name.clone(), ty);
        o.visible.insert(name);
    }
    // Locals declared before the region in the function's body.
    let mut only_declarations = true;
    for n in children(body).into_iter().filter(|n| n.end_byte() <= start) {
        if n.kind().starts_with("preproc") {
            continue; // `#pragma scop` itself
        }
        if n.kind() != "declaration" {
            only_declarations = false;
            continue;
        }
        let before = o.visible.clone();
        declared(text_, n, &mut o);
        let mut c = n.walk();
        for d in n.children_by_field_name("declarator", &mut c) {
            let name = declarator_name(text_, d).map(str::to_string);
            if let Some(name) = name.filter(|n| !before.contains(n)) {
                if only_declarations && d.kind() != "init_declarator" {
                    o.unset.insert(name.clone());
                }
                o.locals.insert(name);
            }
        }
    }
    if !only_declarations {
        o.unset.clear();
    }
    region_declarations(text_, body, start, end, &mut o.region_types);
    o.returns = result_type(original.get(f_start..f_end)?);
    o.identifiers = arrayflow_cprint::origin::identifiers(text_);
    o.identifiers
        .extend(arrayflow_cprint::origin::identifiers(original));
    // A function the region calls is declared where the file includes its
    // header (`exit` by `<stdlib.h>`): the function printed back into the
    // file must not declare it again.
    super::lvalues::walk(&r.items, |n| {
        let callee = (n.kind() == "call_expression")
            .then(|| n.field(F::Function))
            .flatten()
            .filter(|f| f.kind() == "identifier");
        if let Some(f) = callee {
            o.functions.insert(text(text_, f).to_string());
        }
    });
    Some(o)
}

/// The variables declared between `start` and `end` in `n`, with their
/// type as written (the `for` headers' counters too).
fn region_declarations(
    src: &str,
    n: Node<'_>,
    start: usize,
    end: usize,
    out: &mut std::collections::HashMap<String, String>,
) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if n.end_byte() <= start || n.start_byte() >= end {
            continue;
        }
        if n.kind() == "declaration" && n.start_byte() >= start {
            let ty = n.field(F::Type).map_or("", |t| text(src, t));
            let mut c = n.walk();
            for d in n.children_by_field_name("declarator", &mut c) {
                if let Some(name) = declarator_name(src, d) {
                    out.insert(name.to_string(), ty.to_string());
                }
            }
            continue;
        }
        stack.extend(children(n));
    }
}

/// The result type of the function the text `f` defines, as written
/// (`double`, `DATA_TYPE`, `real_t *`); `None` for `void` or when it does
/// not parse as one.
fn result_type(f: &str) -> Option<String> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
    let tree = parser.parse(f, None)?;
    let def = children(tree.root_node())
        .into_iter()
        .find(|n| n.kind() == "function_definition")?;
    let ty = text(f, def.field(F::Type)?).to_string();
    let mut stars = String::new();
    let mut d = def.field(F::Declarator);
    while let Some(x) = d.filter(|x| x.kind() == "pointer_declarator") {
        stars.push('*');
        d = x.field(F::Declarator);
    }
    match (ty.as_str(), stars.is_empty()) {
        ("void", true) => None,
        (_, true) => Some(ty),
        _ => Some(format!("{ty} {stars}")),
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The name a declarator declares (`C` of `C[20][25]`, `p` of `*p = 0`).
fn declarator_name<'t>(src: &'t str, mut d: Node<'_>) -> Option<&'t str> {
    loop {
        match d.kind() {
            "identifier" => return Some(text(src, d)),
            "function_declarator" => return None,
            _ => d = d.field(F::Declarator)?,
        }
    }
}

/// The names a declaration declares, with its type; a function
/// declaration's name goes to `functions`.
fn declared(src: &str, n: Node<'_>, o: &mut Origin) {
    let ty = n.field(F::Type).map_or("", |t| text(src, t)).to_string();
    let mut c = n.walk();
    for d in n.children_by_field_name("declarator", &mut c) {
        match declarator_name(src, d) {
            Some(name) => {
                o.visible.insert(name.to_string());
                o.types.insert(name.to_string(), ty.clone());
            }
            None => {
                let mut f = d;
                while f.kind() != "function_declarator" {
                    match f.field(F::Declarator) {
                        Some(x) => f = x,
                        None => break,
                    }
                }
                if let Some(name) = f.field(F::Declarator) {
                    o.functions.insert(text(src, name).to_string());
                }
            }
        }
    }
}

/// The parameter declarations of a function definition.
fn parameter_decls(f: Node<'_>) -> Vec<Node<'_>> {
    let mut d = f.field(F::Declarator);
    while let Some(x) = d.filter(|x| x.kind() != "function_declarator") {
        d = x.field(F::Declarator);
    }
    let Some(list) = d.and_then(|d| d.field(F::Parameters)) else {
        return Vec::new();
    };
    children(list)
        .into_iter()
        .filter(|p| p.kind() == "parameter_declaration")
        .collect()
}

/// The parameters of a function definition: (name, type text).
fn parameters(src: &str, f: Node<'_>) -> Vec<(String, String)> {
    parameter_decls(f)
        .into_iter()
        .filter_map(|p| {
            let name = declarator_name(src, p.field(F::Declarator)?)?;
            let ty = p.field(F::Type).map_or("", |t| text(src, t));
            Some((name.to_string(), ty.to_string()))
        })
        .collect()
}

/// The parameter types of the function the text `f` defines, as written
/// (`DATA_TYPE` where the preprocessed text says `double`); empty when
/// it does not parse as one.
fn spelled_types(f: &str) -> Vec<String> {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .is_err()
    {
        return Vec::new();
    }
    let Some(tree) = parser.parse(f, None) else {
        return Vec::new();
    };
    let Some(def) = children(tree.root_node())
        .into_iter()
        .find(|n| n.kind() == "function_definition")
    else {
        return Vec::new();
    };
    parameter_decls(def)
        .into_iter()
        .map(|p| p.field(F::Type).map_or("", |t| text(f, t)).to_string())
        .collect()
}
