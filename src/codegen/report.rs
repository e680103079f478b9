//! The report printed before an emitted program, as `#` comments.

use super::Emitted;
use crate::model::Program;
use std::fmt::Write;

/// "N ∈ {4, 5, 7, 1}, M ∈ {…}": the values of each parameter in `vectors`.
fn values(p: &Program, vectors: &[Vec<i64>]) -> String {
    p.params
        .iter()
        .enumerate()
        .map(|(k, q)| {
            let mut vs: Vec<i64> = vectors.iter().filter_map(|s| s.get(k).copied()).collect();
            vs.dedup();
            let vs: Vec<String> = vs.iter().map(i64::to_string).collect();
            format!("{} ∈ {{{}}}", q.name, vs.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "checked at N ∈ {4, 5, 7, 1}, validated at N ∈ {6, 9}": where the closed
/// forms were inferred and checked, and where `equiv` confirmed the emitted
/// program at sizes not sampled.
pub fn checked_at(p: &Program, e: &Emitted) -> String {
    if p.params.is_empty() {
        return "checked (no parameters)".into();
    }
    let validated = if e.validated.is_empty() {
        "not validated at any unsampled size (the original does not run there)".to_string()
    } else {
        format!("validated at {}", values(p, &e.validated))
    };
    format!("checked at {}, {validated}", values(p, &e.samples))
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
    if let Some(note) = &e.doall_note {
        let _ = writeln!(out, "# {note}");
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
