//! tree-sitter-c field ids, looked up once: `child_by_field_name` looks the
//! name up on every call, which showed in profiles.

use std::sync::OnceLock;
use tree_sitter::{Node, TreeCursor};

macro_rules! fields {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A field of a tree-sitter-c node.
        #[derive(Clone, Copy)]
        pub enum F { $($variant),* }
        const NAMES: &[&str] = &[$($name),*];
    };
}

fields! {
    Alternative = "alternative", Argument = "argument", Arguments = "arguments", Body = "body",
    Condition = "condition", Consequence = "consequence", Declarator = "declarator",
    Directive = "directive", Field = "field", Function = "function", Index = "index",
    Initializer = "initializer", Label = "label", Left = "left", Name = "name",
    Operator = "operator", Parameters = "parameters", Right = "right", Size = "size",
    Type = "type", Update = "update", Value = "value",
}

fn ids() -> &'static [u16] {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_c::LANGUAGE.into();
        NAMES
            .iter()
            .map(|n| lang.field_id_for_name(n).map_or(0, |id| id.get()))
            .collect()
    })
}

/// `node.field(F::Left)`: the child in that field.
pub trait Fields<'t> {
    fn field(&self, f: F) -> Option<Node<'t>>;
    fn fields<'c>(&self, f: F, cursor: &'c mut TreeCursor<'t>) -> Vec<Node<'t>>;
}

impl<'t> Fields<'t> for Node<'t> {
    fn field(&self, f: F) -> Option<Node<'t>> {
        match ids()[f as usize] {
            0 => None,
            id => self.child_by_field_id(id),
        }
    }

    fn fields<'c>(&self, f: F, cursor: &'c mut TreeCursor<'t>) -> Vec<Node<'t>> {
        match std::num::NonZeroU16::new(ids()[f as usize]) {
            None => Vec::new(),
            Some(id) => self.children_by_field_id(id, cursor).collect(),
        }
    }
}
