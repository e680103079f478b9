//! The text `privatize --emit code` prints, shared by the command line and
//! the language server's code action: a header (the sizes analysed and
//! validated, the loops privatized), then the program as `.loop`, or as C
//! for C input, where loops get OpenMP clauses when they fit
//! ([`super::omp`]) and explicit private copies otherwise.

use super::emit;
use crate::model::Program;
use crate::readback::Refusal;

/// The privatized program with its header; the original, after a line
/// saying so, when no loop becomes parallel. `Err` when the analysis or
/// the validation refuses, or the memory budget is reached (E0304).
pub fn document(
    program: &Program,
    o: &crate::codegen::Options,
    c: bool,
) -> Result<String, Refusal> {
    let print = |p: &Program, omp: &[crate::cprint::emit::OmpLoop]| {
        crate::cprint::emit::program_omp(p, "kernel", omp)
    };
    document_with(program, o, c, &print)
}

/// [`document`], C printed by `print` (a program and its loops with
/// OpenMP clauses).
pub fn document_with(
    program: &Program,
    o: &crate::codegen::Options,
    c: bool,
    print: &dyn Fn(&Program, &[crate::cprint::emit::OmpLoop]) -> String,
) -> Result<String, Refusal> {
    let checked = emit::checked(program, o)?;
    let sizes = crate::codegen::check::tuples;
    let mark = if c { "//" } else { "#" };
    let basis = match &checked.basis {
        emit::Basis::Exact => "for every parameter value (exact σ)".to_string(),
        emit::Basis::Possible { .. } => {
            "for every parameter value (possible sources: control is not static)".to_string()
        }
        emit::Basis::Sampled { sizes: at, why } => {
            format!("at every size analysed,\n{mark}   {} ({why})", sizes(at))
        }
    };
    let reductions = c && !checked.reductions.is_empty();
    let inner = c && !checked.inner.is_empty();
    let Some(e) = &checked.emitted else {
        if reductions || inner {
            let what = match (reductions, inner) {
                (true, true) => "as reductions, and as written inside sequential loops",
                (true, false) => "as reductions",
                _ => "as written inside sequential loops",
            };
            let mut out =
                format!("{mark} arrayflow privatize --emit code: loops parallel {what} {basis}\n");
            out.push_str(&c_form(program, &checked, print)?);
            return Ok(out);
        }
        let mut out = if checked.unproved.is_empty() {
            format!(
                "{mark} arrayflow privatize --emit code: no loop becomes parallel by privatization {basis}\n"
            )
        } else {
            unproved_header(program, &checked.unproved, mark, &basis)
        };
        for n in &checked.reduction_notes {
            out.push_str(&format!("{mark} {n}\n"));
        }
        out.push_str(&if c {
            print(program, &[])
        } else {
            crate::print::program(program)
        });
        return Ok(out);
    };
    let mut out = format!(
        "{mark} arrayflow privatize --emit code: loops parallel (as written or after privatization) {basis},\n\
         {mark} and equivalent to the original (doall shuffled) at {}{}.\n",
        if checked.validated.is_empty() {
            "no size: each run hit an interpreter limit".to_string()
        } else if e.threads.param.is_some() {
            let counts: Vec<String> = emit::CHECKED_THREADS.iter().map(|n| n.to_string()).collect();
            format!(
                "{}, each with per-thread copies for {} threads",
                sizes(&checked.validated),
                counts.join(", ")
            )
        } else {
            sizes(&checked.validated)
        },
        match checked.basis {
            emit::Basis::Exact | emit::Basis::Possible { .. } => "",
            emit::Basis::Sampled { .. } => "; checked, not proved",
        }
    );
    for l in checked.limits.iter().take(3) {
        out.push_str(&format!("{mark} not compared at {l}\n"));
    }
    if !c {
        for (l, arrays) in &e.loops {
            out.push_str(&format!("{mark} loop {l}: private {}\n", arrays.join(", ")));
        }
        if let Some(threads) = &e.threads.param {
            // The loops over threads are no part of the operations' names.
            let mut flags: Vec<String> = (e.threads.loops.iter())
                .map(|t| format!(" --thread-loop {t}"))
                .collect();
            if !e.threads.unordered.is_empty() {
                flags.push(format!(" --unordered {}", e.threads.unordered.join(",")));
            }
            out.push_str(&format!(
                "{mark} per-thread copies: `{threads}` counts the threads; compare with\n\
                 {mark}   arrayflow equiv ORIGINAL THIS{}\n",
                flags.concat()
            ));
        }
        out.push_str(&e.text);
        return Ok(out);
    }
    out.push_str(&c_form(program, &checked, print)?);
    Ok(out)
}

/// C in, C out: `doall` is `#pragma omp parallel for`, with clauses where
/// they are exact, explicit private copies elsewhere, and `reduction`
/// clauses (docs/c.md, C output; docs/expansion.md §9.3); the notes on
/// each loop, then the program.
fn c_form(
    program: &Program,
    checked: &emit::Checked,
    print: &dyn Fn(&Program, &[crate::cprint::emit::OmpLoop]) -> String,
) -> Result<String, Refusal> {
    let mut out = String::new();
    // (A maximum kept with its index is combined in thread order, below.)
    let by_openmp = (checked.reductions.iter())
        .flat_map(|c| &c.reductions)
        .any(|r| !super::argmax::any(std::slice::from_ref(r)));
    if by_openmp {
        out.push_str(
            "// reductions: OpenMP combines each thread's partial result in an order of its own;\n\
             // on integers that gives the same values, on reals (--reassociate) they may differ\n\
             // in the last bits. The interpreter does not compare these loops: it reads values\n\
             // as uninterpreted terms, which another order of updates changes.\n",
        );
    }
    let chosen: Vec<emit::Chosen> = (checked.chosen.iter())
        .chain(&checked.reductions)
        .chain(&checked.inner)
        .cloned()
        .collect();
    let Some(ce) = emit::emit_c_with(program, &chosen, print) else {
        // Only reduction loops, and no clause fits one of their arrays.
        if checked.emitted.is_some() {
            return Err("internal error: the C form privatizes no loop".into());
        }
        out.push_str("// no OpenMP clause fits the arrays of the reduction loops\n");
        out.push_str(&print(program, &[]));
        return Ok(out);
    };
    for n in ce.notes.iter().chain(&checked.reduction_notes) {
        out.push_str(&format!("// {n}\n"));
    }
    out.push_str(&ce.text);
    Ok(out)
}

/// The header when loops are parallel after privatization at every sample
/// but exact σ could not prove it: none is marked parallel, since a sample
/// backs no verdict, and the header says which and how to emit them anyway.
fn unproved_header(
    program: &Program,
    unproved: &[emit::Chosen],
    mark: &str,
    basis: &str,
) -> String {
    let loops: Vec<String> = unproved
        .iter()
        .map(|c| {
            let name = &program.counters[c.counter.index()].name;
            if c.private.is_empty() {
                format!("`{name}`")
            } else {
                format!("`{name}` (private {})", c.private.join(", "))
            }
        })
        .collect();
    format!(
        "{mark} arrayflow privatize --emit code: no loop marked parallel: not proved for every parameter value.\n\
         {mark} Parallel after privatization {basis}: loop {};\n\
         {mark} `--allow-unproved` marks them parallel (checked at other sizes, not proved)\n",
        loops.join(", loop ")
    )
}
