//! `arrayflow regions FILE [--format text|json|isl] [--param NAME=INT]`:
//! per loop (innermost outward) and for the whole program, each array's
//! read, write and must-write regions as LMADs (docs/regions.md). Without
//! `--param` the regions are symbolic in the parameters; a `--param` fixes
//! that parameter. Exit 0 on success, 1 when the program has errors (or a
//! `--param` names no parameter: E0301), 2 on usage or I/O errors.

use crate::diagnostics::Diagnostic;
use crate::model::Var;
use crate::regions::{build, render, summary};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
    #[arg(long, value_enum, default_value_t = RegionFormat::Text)]
    pub format: RegionFormat,
    /// A parameter value, `NAME=INT`; repeat for several. Parameters not
    /// given stay symbolic.
    #[arg(long = "param", value_name = "NAME=INT", value_parser = super::parse_param)]
    pub params: Vec<(String, i64)>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RegionFormat {
    #[default]
    Text,
    Json,
    Isl,
}

pub fn run(args: &Args) -> ExitCode {
    let loaded = match super::load(&args.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let p = &loaded.program;
    let mut values = vec![None; p.params.len()];
    for (n, v) in &args.params {
        match p.params.iter().position(|q| &q.name == n) {
            Some(i) => values[i] = Some(*v),
            None => {
                let d = Diagnostic::error(
                    "E0301",
                    format!("`--param {n}=…`: the program declares no parameter `{n}`"),
                );
                eprint!("{}", loaded.files.render_all(&[d]));
                return ExitCode::from(1);
            }
        }
    }
    // A procedure's integer parameters come after the file's: symbolic.
    let value = |v: Var| match v {
        Var::Param(x) => values.get(x.index()).copied().flatten(),
        Var::Counter(_) => None,
    };
    let sections = build::regions(p, &value);
    let at = |s: crate::model::Span| loaded.files.location(loaded.file, s.start as usize);
    let source = loaded.lowered_text();
    let calls = crate::host::calls(&args.file, source, loaded.file);
    let text = match args.format {
        RegionFormat::Text => {
            render::text(p, &sections, &at) + &summary::text(p, &calls, &value, &at)
        }
        RegionFormat::Json => {
            let mut v = render::json(p, &sections, &at);
            if !calls.procs.is_empty() {
                let s = summary::json(p, &calls, &value, &at);
                v["procedures"] = s["procedures"].clone();
                v["calls"] = s["calls"].clone();
            }
            format!("{v}\n")
        }
        RegionFormat::Isl => render::isl(p, &sections, &at) + &summary::isl(p, &calls, &value, &at),
    };
    let mut out = std::io::stdout().lock();
    super::finish(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}
