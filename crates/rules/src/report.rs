//! Check relations as diagnostics: every tuple of a `.check` relation is a
//! warning (W1101), of a `.deny` relation an error (E1101), pointing at the
//! program entity of its first column of type `access`, `site` or `loop`
//! (the rule writer chooses by the column order); the other entity columns
//! become secondary labels. `{Column}` in the message is replaced
//! by the tuple's value (a symbol by its text).

use super::check::Rules;
use super::syntax::Type;
use super::{Exported, Output};
use arrayflow_model::diagnostics::{Diagnostic, FileId};

/// The diagnostics of every check relation, in the program file `file`.
pub fn diagnostics(
    rules: &Rules,
    out: &Output,
    exported: &Exported,
    file: FileId,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for check in &rules.checks {
        let rel = &rules.relations[check.rel];
        let primary = rel
            .cols
            .iter()
            .position(|(_, t)| matches!(t, Type::Access | Type::Site | Type::Loop));
        for row in &out.relations[check.rel] {
            let mut message = check.message.clone();
            for (k, (name, ty)) in rel.cols.iter().enumerate() {
                let text = if ty.is_symbol() {
                    out.symbols.name(row[k]).to_string()
                } else {
                    row[k].to_string()
                };
                message = message.replace(&format!("{{{name}}}"), &text);
            }
            let mut d = if check.deny {
                Diagnostic::error("E1101", message)
            } else {
                Diagnostic::warning("W1101", message)
            };
            let mut placed = false;
            if let Some(p) = primary {
                if let Some(span) = exported.span(rel.cols[p].1, row[p]) {
                    d = d.primary(file, span, format!("`{}`", rel.name));
                    placed = true;
                }
            }
            for (k, (name, ty)) in rel.cols.iter().enumerate() {
                if Some(k) == primary || !matches!(ty, Type::Site | Type::Access | Type::Loop) {
                    continue;
                }
                if let Some(span) = exported.span(*ty, row[k]) {
                    d = d.secondary(file, span, name.clone());
                }
            }
            if !placed {
                d = d.note(format!(
                    "the tuple's {} names nothing in the program",
                    primary.map_or("entity", |p| rel.cols[p].0.as_str())
                ));
            }
            diags.push(d.note(format!("from check relation `{}`", rel.name)));
        }
    }
    diags
}

/// The `.output` relations as text: one `name(v1, v2)` line per tuple,
/// symbols in double quotes.
pub fn outputs(rules: &Rules, out: &Output) -> String {
    let mut s = String::new();
    for &r in &rules.outputs {
        let rel = &rules.relations[r];
        for row in &out.relations[r] {
            let vals: Vec<String> = rel
                .cols
                .iter()
                .zip(row)
                .map(|((_, t), &v)| {
                    if t.is_symbol() {
                        format!("{:?}", out.symbols.name(v))
                    } else {
                        v.to_string()
                    }
                })
                .collect();
            s.push_str(&format!("{}({})\n", rel.name, vals.join(", ")));
        }
    }
    s
}
