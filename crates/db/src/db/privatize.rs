//! Privatization in the database: the remark on each loop that private
//! copies make parallel, per kernel (an edit that leaves a kernel's local
//! program equal reuses it; [`super::remark`] places them), and the
//! privatized file for the code action.

use super::{kinds, parse, settings, Kernel, SourceFile};
use crate::model::CounterId;

/// Per loop (local counter) that privatization makes parallel, the remark
/// ([`crate::privatize::render::remark`]) and whether it holds for every
/// parameter value: by exact σ of the kernel's local program where it is
/// static control, else by σ at the settings' sizes, proved for every
/// value where the possible sources back it (`privatize::possible`). A kernel boundary
/// acts as a copy-out point: reads in later kernels do not count towards
/// the finalization the remark names (the code action's program finalizes
/// every cell).
#[salsa::tracked(no_eq)]
pub fn kernel_privatization<'db>(
    db: &'db dyn salsa::Database,
    kernel: Kernel<'db>,
) -> Result<(Vec<(CounterId, String)>, bool), String> {
    // Its messages name loops and statements as the file does.
    let named = super::kernel::named_as_in_file(&kernel.program(db).program, || kernel.first(db));
    let local: &crate::model::Program = &named;
    if let Ok(loops) = crate::privatize::exact::analyze(local) {
        let remarks = (loops.iter())
            .filter_map(|l| crate::privatize::render::exact_remark(l).map(|m| (l.counter, m)))
            .collect();
        return Ok((remarks, true));
    }
    let config = settings(db);
    let exp =
        crate::expansion::expand_with(local, &config, &kinds(db)).map_err(|e| e.to_string())?;
    let loops = crate::privatize::analyze(local, &exp);
    let remarks = (loops.iter())
        .filter_map(|l| crate::privatize::render::remark(l).map(|m| (l.counter, m)))
        .collect();
    // Outside static control, the possible sources may still prove them.
    Ok((
        remarks,
        crate::privatize::possible::proves_report(local, &loops),
    ))
}

/// The file rewritten by privatization (`arrayflow privatize --emit code`:
/// the header, then the program; C for a C file).
#[salsa::tracked(no_eq)]
pub fn privatized_code(db: &dyn salsa::Database, file: SourceFile) -> Result<String, String> {
    let program = parse(db, file)
        .program
        .as_ref()
        .ok_or("the file has errors")?;
    let o = super::codegen_options(db);
    let is_c = super::is_c_path(std::path::Path::new(file.path(db)));
    // C goes back into the function it came from, as the command prints it.
    #[cfg(feature = "c")]
    if is_c {
        let text = file.text(db);
        let origin = crate::cfront::origin::find(text, text, &|s| Some(s));
        let print = |p: &crate::model::Program, omp: &[crate::cfront::emit::OmpLoop]| {
            crate::cfront::inplace::program_into(p, origin.as_ref(), program, omp)
        };
        let text = crate::privatize::document::document_with(program, &o, true, &print)
            .map_err(String::from)?;
        return Ok(with_premises(&text, super::premises(db, file)));
    }
    crate::privatize::document::document(program, &o, is_c).map_err(String::from)
}

/// `text` (a header of `//` lines, then C) with an "assumes" line per
/// premise at the header's end, as `arrayflow privatize --emit code`
/// prints it.
#[cfg(feature = "c")]
fn with_premises(text: &str, premises: &[String]) -> String {
    let body = (text.lines())
        .take_while(|l| l.starts_with("//"))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(text.len());
    let mut out = text[..body].to_string();
    for p in premises {
        out.push_str(&format!("// assumes {p}\n"));
    }
    out.push_str(&text[body..]);
    out
}
