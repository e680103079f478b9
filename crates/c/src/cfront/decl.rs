//! C declarations: types, declarators, and the variables they declare.

use super::fields::{Fields, F};
use super::scan::{children, has_const};
use super::{span, text, CVar, Ctx, VarId};
use crate::model::ElemType;
use tree_sitter::Node;

/// What a declarator says about its variable.
pub struct Declarator<'t> {
    pub name: Node<'t>,
    /// One entry per dimension, outermost first: the size when written.
    pub dims: Vec<Option<Node<'t>>>,
    /// How many of the dimensions are pointers.
    pub pointers: usize,
    pub init: Option<Node<'t>>,
    pub function: bool,
}

/// Unwraps a declarator: `*p`, `A[N][M]`, `x = 1`, `(*p)[M]`, `f(int)`.
pub fn declarator<'t>(d: Node<'t>) -> Option<Declarator<'t>> {
    declarator_at(d, 0)
}

/// Declarators nest at most this deep (`int ****...p`); deeper ones declare
/// nothing the front end follows.
const MAX_DECLARATOR: usize = 64;

fn declarator_at<'t>(d: Node<'t>, depth: usize) -> Option<Declarator<'t>> {
    if depth > MAX_DECLARATOR {
        return None;
    }
    let inner = |n: Option<Node<'t>>| n.and_then(|n| declarator_at(n, depth + 1));
    match d.kind() {
        "identifier" | "field_identifier" => Some(Declarator {
            name: d,
            dims: Vec::new(),
            pointers: 0,
            init: None,
            function: false,
        }),
        "init_declarator" => {
            let mut inner = inner(d.field(F::Declarator))?;
            inner.init = d.field(F::Value);
            Some(inner)
        }
        "array_declarator" => {
            let mut inner = inner(d.field(F::Declarator))?;
            inner.dims.push(d.field(F::Size));
            Some(inner)
        }
        "pointer_declarator" => {
            let mut inner = inner(d.field(F::Declarator))?;
            inner.dims.push(None);
            inner.pointers += 1;
            Some(inner)
        }
        "parenthesized_declarator" | "attributed_declarator" => {
            children(d).into_iter().find_map(|c| inner(Some(c)))
        }
        "function_declarator" => {
            let mut inner = inner(d.field(F::Declarator))?;
            inner.function = true;
            Some(inner)
        }
        _ => None,
    }
}

/// The element type of a type specifier, and whether it is a struct or union.
pub fn elem_type(src: &str, ty: Option<Node<'_>>) -> (ElemType, bool) {
    let Some(ty) = ty else {
        return (ElemType::Int, false); // implicit int
    };
    match ty.kind() {
        "struct_specifier" | "union_specifier" => (ElemType::Real, true),
        "enum_specifier" => (ElemType::Int, false),
        "sized_type_specifier" => {
            let t = text(src, ty);
            if t.contains("double") || t.contains("float") {
                (ElemType::Real, false)
            } else {
                (ElemType::Int, false)
            }
        }
        "primitive_type" => match text(src, ty) {
            "float" | "double" | "void" => (ElemType::Real, false),
            _ => (ElemType::Int, false),
        },
        "type_identifier" => {
            let t = text(src, ty);
            let int = matches!(
                t,
                "size_t" | "ssize_t" | "ptrdiff_t" | "intptr_t" | "uintptr_t"
            ) || ((t.starts_with("int") || t.starts_with("uint")) && t.ends_with("_t"));
            (if int { ElemType::Int } else { ElemType::Real }, false)
        }
        _ => (ElemType::Real, false),
    }
}

impl<'t> Ctx<'t> {
    /// Registers the variables a `declaration` (or `parameter_declaration`)
    /// declares; functions declared there are recorded as prototypes. The
    /// same declarator always gives the same variable.
    pub fn declaration(&mut self, n: Node<'t>, global: bool) -> Vec<VarId> {
        let (elem, is_struct) = self.elem_type_of(n.field(F::Type));
        let ctype = n.field(F::Type).map_or("int", |t| text(self.src, t));
        let is_const = has_const(self.src, n);
        let param = n.kind() == "parameter_declaration";
        let mut out = Vec::new();
        let mut c = n.walk();
        let decls: Vec<Node<'t>> = n.fields(F::Declarator, &mut c);
        for d in decls {
            let Some(dec) = declarator(d) else { continue };
            if dec.function {
                self.prototype(d);
                continue;
            }
            let pos = dec.name.start_byte();
            if let Some(&v) = self.var_at.get(&pos) {
                out.push(v);
                continue;
            }
            let v = self.new_var(CVar {
                name: text(self.src, dec.name),
                pos,
                span: span(dec.name),
                elem,
                ctype,
                dims: dec.dims,
                pointers: dec.pointers,
                is_const,
                is_struct,
                init: dec.init,
                func_param: param,
                global: global && !param,
                range: None,
                param: None,
                array: None,
            });
            out.push(v);
        }
        out
    }
}
