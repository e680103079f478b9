//! The report printed before an emitted program, as `#` comments.

use super::prove::Proof;
use super::size::Poly;
use super::{ArrayReport, Emitted};
use crate::model::Program;
use std::fmt::Write;

/// "(N=4, M=3), (N=5, M=4)": `vectors` as tuples of `p`'s parameters.
fn values(p: &Program, vectors: &[Vec<i64>]) -> String {
    let named: Vec<super::check::Vector> = vectors
        .iter()
        .map(|v| {
            (p.params.iter().map(|q| q.name.clone()))
                .zip(v.iter().copied())
                .collect()
        })
        .collect();
    super::check::tuples(&named)
}

/// "checked at (N=4), (N=5), validated at (N=6), (N=9)": where the closed
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

/// "checked at (N=4), (N=5)" ("checked" without parameters): where
/// the closed forms were inferred.
pub fn checked(p: &Program, samples: &[Vec<i64>]) -> String {
    if p.params.is_empty() {
        "checked".to_string()
    } else {
        format!("checked at {}", values(p, samples))
    }
}

/// Why `proof` is not a proof ("`S` may be a source of the read of `A` in
/// `T` (access 0) with another label", "unknown: …"); None when it is one.
pub fn not_proved(proof: &Proof) -> Option<String> {
    match proof {
        Proof::Proved => None,
        Proof::Refuted(why) => Some(why.clone()),
        Proof::Unknown(why) => Some(format!("unknown: {why}")),
    }
}

/// Why an expanded array's labels are not proved; None when they are or
/// the array is not expanded.
pub fn unproved(a: &ArrayReport) -> Option<String> {
    a.proof.as_ref().filter(|_| a.expanded).and_then(not_proved)
}

/// "proved for every N with N >= 0" or "checked at (N=4), … (not proved:
/// why)": what the symbolic proof (`prove`) established for one array.
pub fn proved(p: &Program, e: &Emitted, proof: &Proof) -> String {
    let Some(why) = not_proved(proof) else {
        let names: Vec<&str> = p.params.iter().map(|q| q.name.as_str()).collect();
        let whom = if names.is_empty() {
            return "proved (every source's label equals its read's label)".into();
        } else {
            format!("every {}", names.join(", "))
        };
        let assumed: Vec<String> = p
            .assumptions
            .iter()
            .map(|c| crate::print::cond(p, c))
            .collect();
        let with = if assumed.is_empty() {
            String::new()
        } else {
            format!(" with {}", assumed.join(" and "))
        };
        // Constraints of the runs that complete, where a proof used them.
        let runs = match e.in_range.is_empty() {
            true => String::new(),
            false => format!(" at which the run completes ({})", e.in_range.join(" and ")),
        };
        return format!(
            "proved for {whom}{with}{runs} (every source's label equals its read's label)"
        );
    };
    format!("{} (not proved: {why})", checked(p, &e.samples))
}

/// The report: per array its verdict, declarations with sizes (formula and
/// at each sample), the rectangular form's size; the doall loops.
pub fn text(p: &Program, e: &Emitted) -> String {
    let mut out = String::new();
    // With lifted bounds the samples have the added parameters too.
    let with_lifted;
    let p = if e.lifted.is_empty() {
        p
    } else {
        with_lifted = Program {
            params: e.program.params.clone(),
            ..p.clone()
        };
        &with_lifted
    };
    let _ = writeln!(out, "# maximal static expansion, {}", checked_at(p, e));
    if !e.lifted.is_empty() {
        let added: Vec<String> = e.lifted.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        let _ = writeln!(
            out,
            "# constant loop bounds made parameters to sample at small sizes: {}; the program below has them as parameters with those defaults",
            added.join(", ")
        );
    }
    for limit in &e.limits {
        let _ = writeln!(out, "# {limit}");
    }
    for a in &e.arrays {
        let _ = writeln!(out, "# {}: {}", a.name, a.verdict);
        if let Some(proof) = &a.proof {
            let _ = writeln!(out, "#   static: {}", proved(p, e, proof));
        }
        let _ = writeln!(
            out,
            "#   bounded classes at the samples: {}",
            list(&a.classes)
        );
        if !a.expanded {
            continue;
        }
        let mut total = vec![0i64; e.samples.len()];
        let mut total_poly = Some(Poly::constant(0));
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
            total_poly = total_poly.and_then(|t| t.add(d.poly.as_ref()?));
        }
        let _ = writeln!(
            out,
            "#   renamed form (one array per label group): {}; rectangular form: {}",
            sized(p, total_poly.as_ref(), &total),
            sized(p, a.rectangular_poly.as_ref(), &a.rectangular)
        );
    }
    if let Some(note) = &e.doall_note {
        let _ = writeln!(out, "# {note}");
    }
    let _ = writeln!(
        out,
        "# doall (no dependence carried at the samples nor, by the exact tests, at any size): {}",
        if e.doall.is_empty() {
            "none".to_string()
        } else {
            e.doall.join(", ")
        }
    );
    out
}

/// "6 * N - 1 cells (23, 29, 41, 5 at the samples)", or the values alone
/// without a formula.
fn sized(p: &Program, poly: Option<&Poly>, at: &[i64]) -> String {
    match poly {
        Some(f) => format!("{} cells ({} at the samples)", f.text(p), list(at)),
        None => format!("{} cells at the samples", list(at)),
    }
}

fn list<T: ToString>(xs: &[T]) -> String {
    xs.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}
