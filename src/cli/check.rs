//! `arrayflow check FILE...`: parse and check every file; diagnostics go to
//! stderr (or, with `--format json`, one JSON document to stdout).
//! With `--rules RULES.dl`, the rule files are checked too and run over each
//! valid file's exported relations: their check relations' tuples are
//! diagnostics in the program (docs/rules.md §8), their `.output`
//! relations are printed to stdout.
//! Exit 0 when every file is valid (warnings allowed), 1 when any file or
//! rule file has an error (a `.deny` tuple included), 2 when a file cannot
//! be read.

use super::{read_source, Format, Sizes};
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
    /// A Datalog rule file to run over every valid file; repeat for several.
    #[arg(long = "rules", value_name = "RULES.dl")]
    pub rules: Vec<PathBuf>,
    /// The sizes the rules' instance relations are computed at.
    #[command(flatten)]
    pub sizes: Sizes,
}

pub fn run(args: &Args) -> ExitCode {
    let mut files = SourceFiles::new();
    let db = crate::db::Database::with_kinds(
        args.sizes.config(crate::dataflow::DEFAULT_MAX_INSTANCES),
        super::kinds(),
    );
    let mut all = Vec::new();
    let (mut unreadable, mut invalid) = (false, false);
    let emit =
        |files: &SourceFiles, diags: Vec<crate::diagnostics::Diagnostic>, all: &mut Vec<_>| {
            match args.format {
                Format::Text => eprint!("{}", files.render_all(&diags)),
                Format::Json => all.extend(diags),
            }
        };
    let mut rule_files = Vec::new();
    for path in &args.rules {
        let Some(text) = read_source(path) else {
            unreadable = true;
            continue;
        };
        let name = path.display().to_string();
        let rf = crate::db::rules::RuleFile::new(&db, name.clone(), text.clone());
        let id = files.add(name, text);
        if let Err(diags) = crate::db::rules::compiled_rules(&db, rf) {
            invalid = true;
            emit(&files, super::in_file(diags, id), &mut all);
        } else {
            rule_files.push(rf);
        }
    }
    for path in &args.files {
        let Some(source) = super::read_program(path) else {
            unreadable = true;
            continue;
        };
        let name = path.display().to_string();
        let id = source.add_to(&mut files, &name);
        let file = db.add_file(name, source.text);
        let mut parsed = crate::db::parse(&db, file).diagnostics.clone();
        parsed.extend(crate::db::kind_diagnostics(&db, file));
        let mut diags = super::in_file(&parsed, id);
        let valid = !has_errors(&diags);
        if valid && !args.rules.is_empty() {
            diags.extend(super::in_file(
                crate::db::analysis_diagnostics(&db, file),
                id,
            ));
            for &rf in &rule_files {
                let res = crate::db::rules::rule_results(&db, file, rf);
                diags.extend(super::in_file(&res.diagnostics, id));
                print!("{}", res.outputs);
            }
        }
        invalid |= has_errors(&diags);
        let ok = !has_errors(&diags);
        emit(&files, diags, &mut all);
        if args.format == Format::Text && ok {
            println!("{}: ok", path.display());
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
