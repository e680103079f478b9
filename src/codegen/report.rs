//! The report printed before an emitted program, as `#` comments.

use super::Emitted;
use crate::model::Program;
use std::fmt::Write;

/// "N ∈ {4, 5, 7, 1}" style list of the samples, one entry per parameter.
pub fn checked_at(p: &Program, e: &Emitted) -> String {
    let parts: Vec<String> = p
        .params
        .iter()
        .enumerate()
        .map(|(k, q)| {
            let mut vs: Vec<i64> = e.samples.iter().map(|s| s[k]).collect();
            vs.dedup();
            let vs: Vec<String> = vs.iter().map(i64::to_string).collect();
            format!("{} ∈ {{{}}}", q.name, vs.join(", "))
        })
        .collect();
    if parts.is_empty() {
        "checked (no parameters)".into()
    } else {
        format!("checked at {}", parts.join(", "))
    }
}

/// The report: per array its verdict, declarations with sizes (formula and
/// at each sample), the rectangular form's size; the doall loops.
pub fn text(p: &Program, e: &Emitted) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# maximal static expansion, {}", checked_at(p, e));
    for a in &e.arrays {
        let _ = writeln!(out, "# {}: {}", a.name, a.verdict);
        let _ = writeln!(
            out,
            "#   bounded classes at the samples: {}",
            list(&a.classes)
        );
        if !a.expanded {
            continue;
        }
        let mut total = vec![0i64; e.samples.len()];
        for d in &a.decls {
            let _ = writeln!(
                out,
                "#   {}: {} cells ({} at the samples)",
                d.name,
                d.formula,
                list(&d.cells)
            );
            for (t, c) in total.iter_mut().zip(&d.cells) {
                *t += c;
            }
        }
        let _ = writeln!(
            out,
            "#   renamed form (one array per label group): {} cells; rectangular form: {} cells",
            list(&total),
            list(&a.rectangular)
        );
    }
    let _ = writeln!(
        out,
        "# doall (no dependence carried at the samples): {}",
        if e.doall.is_empty() {
            "none".to_string()
        } else {
            e.doall.join(", ")
        }
    );
    out
}

fn list<T: ToString>(xs: &[T]) -> String {
    xs.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}
