//! `arrayflow check FILE...`: parse and check every file; diagnostics go to
//! stderr (or, with `--format json`, one JSON document to stdout).
//! Exit 0 when every file is valid (warnings allowed), 1 when any file has an
//! error, 2 when a file cannot be read.

use super::{read_source, Format};
use crate::diagnostics::{has_errors, SourceFiles};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The `.loop` or C files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    let mut files = SourceFiles::new();
    let db = crate::db::Database::with_kinds(Default::default(), super::kinds());
    let mut all = Vec::new();
    let (mut unreadable, mut invalid) = (false, false);
    for path in &args.files {
        let Some(source) = read_source(path) else {
            unreadable = true;
            continue;
        };
        let name = path.display().to_string();
        let file = db.add_file(name.clone(), source);
        let id = files.add(name, file.text(&db).clone());
        let mut diags = crate::db::parse(&db, file).diagnostics.clone();
        diags.extend(crate::db::kind_diagnostics(&db, file));
        let diags = super::in_file(&diags, id);
        invalid |= has_errors(&diags);
        match args.format {
            Format::Text => {
                eprint!("{}", files.render_all(&diags));
                if !has_errors(&diags) {
                    println!("{}: ok", path.display());
                }
            }
            Format::Json => all.extend(diags),
        }
    }
    if args.format == Format::Json {
        println!("{}", files.to_json(&all));
    }
    if unreadable {
        ExitCode::from(2)
    } else if invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
