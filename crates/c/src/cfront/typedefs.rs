//! `typedef`s of the file: a cast or declaration through a typedef's name
//! (`typedef float real_t;`, `(real_t) x`) means what the named type
//! means, and the emitted C keeps the name as written.

use super::fields::{Fields, F};
use super::scan::children;
use super::{text, Ctx};
use crate::model::{ElemType, Expr, ExprKind, Span};
use tree_sitter::Node;

/// Typedefs name typedefs at most this deep (`typedef a b; typedef b c;`).
const MAX_CHAIN: usize = 16;

impl<'t> Ctx<'t> {
    /// Records the names a `type_definition` gives, with the type they
    /// stand for as written (`float`, `unsigned long`, another typedef).
    pub fn typedef(&mut self, n: Node<'t>) {
        let Some(ty) = n.field(F::Type) else { return };
        let ty = text(self.src, ty);
        let mut c = n.walk();
        for d in n.fields(F::Declarator, &mut c) {
            // A plain name only: `typedef float vec[4];` or a pointer is
            // not a scalar type a cast can name.
            if d.kind() == "type_identifier" {
                self.typedefs.insert(text(self.src, d), ty);
            }
        }
    }

    /// The type `ty` stands for with every typedef replaced (`real_t` is
    /// `float`); `ty` itself when it is not a typedef.
    pub fn resolved(&self, ty: &'t str) -> &'t str {
        let mut ty = ty.trim();
        for _ in 0..MAX_CHAIN {
            match self.typedefs.get(ty) {
                Some(t) => ty = t.trim(),
                None => break,
            }
        }
        ty
    }

    /// `(T)(x)` that the parser read as a call through a function pointer
    /// because it does not know `T` is a type: the typedef's name and `x`.
    pub fn typedef_cast(&self, call: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        let func = call.field(F::Function)?;
        if func.kind() != "parenthesized_expression" {
            return None;
        }
        let inside = children(func);
        let [name] = inside.as_slice() else {
            return None;
        };
        let name = (name.kind() == "identifier").then(|| text(self.src, *name))?;
        if !self.typedefs.contains_key(name) {
            return None;
        }
        let args = children(call.field(F::Arguments)?);
        let [x] = args.as_slice() else {
            return None;
        };
        Some((name, *x))
    }
}

impl Ctx<'_> {
    /// `(ty) x`: a cast to a floating type (through typedefs) changes the
    /// value C computes, so it is the function `cvalue::cast` names, which
    /// the printer gives back as written; an integer cast is transparent,
    /// so that subscripts stay affine.
    pub fn cast_to(&self, ty: &str, x: Expr, at: Span) -> Expr {
        let base = self.resolved(ty);
        if !super::cvalue::is_floating(base) {
            return x;
        }
        let kept = (base != ty.trim()).then_some(ty.trim());
        Expr::new(ExprKind::Call(super::cvalue::cast(base, kept), vec![x]), at)
    }
}

impl<'t> Ctx<'t> {
    /// [`super::decl::elem_type`] through typedefs: `typedef int idx_t;`
    /// declares integers, `typedef float real_t;` reals.
    pub fn elem_type_of(&self, ty: Option<Node<'t>>) -> (ElemType, bool) {
        let named = ty.filter(|t| t.kind() == "type_identifier");
        let Some(base) = named
            .map(|t| text(self.src, t))
            .filter(|t| self.typedefs.contains_key(t))
            .map(|t| self.resolved(t))
        else {
            return super::decl::elem_type(self.src, ty);
        };
        let words: Vec<&str> = base.split_whitespace().collect();
        if words.iter().any(|w| *w == "struct" || *w == "union") {
            (ElemType::Real, true)
        } else if words.iter().any(|w| *w == "float" || *w == "double") {
            (ElemType::Real, false)
        } else if words.iter().all(|w| INTEGER_WORDS.contains(w)) {
            (ElemType::Int, false)
        } else {
            (ElemType::Real, false)
        }
    }
}

/// The words of C's integer types (`unsigned long int`, `_Bool`).
const INTEGER_WORDS: &[&str] = &[
    "char", "short", "int", "long", "signed", "unsigned", "_Bool", "const", "volatile",
];
