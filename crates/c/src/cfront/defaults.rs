//! Defaults for a function's integer parameters from its calls in the file:
//! PolyBench's `main` has `int ni = 20;` and calls
//! `kernel_gemm(ni, nj, nk, ...)`, so `ni` of the kernel defaults to 20
//! instead of needing `--param ni=20`. An argument counts when it is a
//! constant expression, or a local of the caller initialised with one and
//! never assigned in that function; every call must agree, else no default.

use super::fields::{Fields, F};
use super::lvalues::{lvalue_root, walk};
use super::scan::children;
use super::Ctx;
use std::collections::HashMap;
use tree_sitter::Node;

/// (function, parameter position) → the value every call passes, or None
/// where calls disagree or pass something else.
pub type CallDefaults<'t> = HashMap<(&'t str, usize), Option<i64>>;

impl<'t> Ctx<'t> {
    /// Every call of a named function in the file, argument by argument.
    pub(super) fn call_defaults(&self, root: Node<'t>) -> CallDefaults<'t> {
        let mut out = CallDefaults::new();
        walk(&[root], |n| {
            if n.kind() != "call_expression" {
                return;
            }
            let Some(f) = n.field(F::Function).filter(|f| f.kind() == "identifier") else {
                return;
            };
            let Some(args) = n.field(F::Arguments) else {
                return;
            };
            let name = self.text(f);
            for (k, a) in children(args).into_iter().enumerate() {
                let v = self.argument_value(a);
                let slot = out.entry((name, k)).or_insert(v);
                if *slot != v {
                    *slot = None;
                }
            }
        });
        out
    }

    /// A constant argument, or a caller's local with a constant initialiser
    /// that the caller never assigns.
    fn argument_value(&self, a: Node<'t>) -> Option<i64> {
        if let Some(v) = self.const_value(a, 0) {
            return Some(v);
        }
        if a.kind() != "identifier" {
            return None;
        }
        let name = self.text(a);
        let mut init = None;
        let mut up = a.parent();
        let mut func = None;
        while let Some(n) = up {
            if n.kind() == "compound_statement" && init.is_none() {
                init = children(n)
                    .into_iter()
                    .filter(|d| d.kind() == "declaration" && d.start_byte() < a.start_byte())
                    .filter_map(|d| self.initialiser_of(d, name))
                    .next_back();
            }
            if n.kind() == "function_definition" {
                func = Some(n);
                break;
            }
            up = n.parent();
        }
        let (init, func) = (init?, func?);
        if self.assigns(func, name) {
            return None;
        }
        self.const_value(init, 0)
    }

    /// The initialiser of `name` in a declaration (`int ni = 20, nj = 25;`).
    fn initialiser_of(&self, d: Node<'t>, name: &str) -> Option<Node<'t>> {
        children(d)
            .into_iter()
            .filter(|c| c.kind() == "init_declarator")
            .find(|c| {
                c.field(F::Declarator)
                    .is_some_and(|x| x.kind() == "identifier" && self.text(x) == name)
            })
            .and_then(|c| c.field(F::Value))
    }

    /// Whether the function assigns `name` (`=`, `op=`, `++`, `--`) or takes
    /// its address.
    /// (`lvalues::assigned_names` would also count every name passed to a
    /// call, as arrays are, and the kernel call passes `ni` by value.)
    fn assigns(&self, func: Node<'t>, name: &str) -> bool {
        let mut found = false;
        walk(&[func], |n| {
            let target = match n.kind() {
                "assignment_expression" => n.field(F::Left),
                "update_expression" => n.field(F::Argument),
                "pointer_expression" if self.text(n).starts_with('&') => n.field(F::Argument),
                _ => None,
            };
            found |= target.and_then(|t| lvalue_root(self.src, t)) == Some(name);
        });
        found
    }
}
