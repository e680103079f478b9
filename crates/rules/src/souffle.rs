//! `arrayflow facts --format souffle DIR`: the exported relations as
//! Soufflé input files (one `NAME.facts` TSV file per relation, symbols as
//! their text) and `inputs.dl` declaring them with `.input` directives, so
//! a rule file that includes it runs under Soufflé. [`read_dir`] reads such
//! a directory back (the test that the files carry everything).

use super::relations::schema;
use super::syntax::Type;
use super::{Exported, Row, Symbols};
use std::path::Path;

/// The `.dl` header declaring the exported relations as inputs.
pub fn declarations() -> String {
    let mut s = String::from(
        "// The relations arrayflow exports (src/datalog/relations.rs).\n\
         .type site <: symbol\n.type access <: number\n.type loop <: number\n\n",
    );
    for (name, cols) in schema() {
        let cols: Vec<String> = cols
            .iter()
            .map(|(c, t)| format!("{}: {}", c.to_lowercase(), t.name()))
            .collect();
        s.push_str(&format!(
            ".decl {name}({})\n.input {name}\n",
            cols.join(", ")
        ));
    }
    s
}

/// Writes `inputs.dl` and one `.facts` file per exported relation.
pub fn write_dir(e: &Exported, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("inputs.dl"), declarations())?;
    for ((name, cols), rows) in schema().iter().zip(&e.relations) {
        let mut text = String::new();
        for row in rows {
            let vals: Vec<String> = cols
                .iter()
                .zip(row)
                .map(|((_, t), &v)| {
                    if t.is_symbol() {
                        e.symbols.name(v).to_string()
                    } else {
                        v.to_string()
                    }
                })
                .collect();
            text.push_str(&vals.join("\t"));
            text.push('\n');
        }
        std::fs::write(dir.join(format!("{name}.facts")), text)?;
    }
    Ok(())
}

/// Reads the `.facts` files of a directory written by [`write_dir`]: the
/// relations (indexed like `schema()`) and their symbols.
pub fn read_dir(dir: &Path) -> Result<(Vec<Vec<Row>>, Symbols), String> {
    let mut symbols = Symbols::default();
    let mut rels = Vec::new();
    for (name, cols) in schema() {
        let path = dir.join(format!("{name}.facts"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let mut rows = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() != cols.len() {
                return Err(format!(
                    "{}:{}: {} fields, `{name}` has {}",
                    path.display(),
                    n + 1,
                    fields.len(),
                    cols.len()
                ));
            }
            let mut row = Vec::with_capacity(cols.len());
            for ((_, t), f) in cols.iter().zip(fields) {
                row.push(if t.is_symbol() {
                    symbols.intern(f)
                } else {
                    f.parse::<i64>().map_err(|_| {
                        format!(
                            "{}:{}: `{f}` is not a {}",
                            path.display(),
                            n + 1,
                            Type::name(*t)
                        )
                    })?
                });
            }
            rows.push(row);
        }
        rels.push(rows);
    }
    Ok((rels, symbols))
}
