//! `arrayflow check FILE...`: parse and check every file; diagnostics go to
//! stderr (or, with `--format json`, one JSON document to stdout).
//! With `--rules RULES.dl`, the rule files are checked too and run over each
//! valid file's exported relations: their check relations' tuples are
//! diagnostics in the program (docs/rules.md §8), their `.output`
//! relations are printed to stdout.
//! Exit 0 when every file is valid (warnings allowed), 1 when any file or
//! rule file has an error (a `.deny` tuple included), 2 when a file cannot
//! be read.

use super::{read_source, Budget, Format, Sizes};
use crate::diagnostics::{has_errors, Diagnostic, SourceFiles};
use crate::host::Host;
use std::io::Write;
use std::path::{Path, PathBuf};
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
    /// The budgets of the analysis the rules (and extension kinds) read.
    #[command(flatten)]
    pub budget: Budget,
    /// Threads for the files of a directory (default: `ARRAYFLOW_THREADS`,
    /// else every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

pub fn run(args: &Args) -> ExitCode {
    args.budget.install();
    if args.files.iter().any(|p| p.is_dir()) {
        return directory(args);
    }
    let mut files = SourceFiles::new();
    let mut host = super::host(args.sizes.config(args.budget.max_instances));
    let mut all = Vec::new();
    let emit = |files: &SourceFiles, diags: Vec<Diagnostic>, all: &mut Vec<_>| match args.format {
        Format::Text => eprint!("{}", files.render_all(&diags)),
        Format::Json => all.extend(diags),
    };
    let rules = read_rules(&args.rules, &mut files, |files, diags| {
        emit(files, diags, &mut all)
    });
    host.set_rules(&rules.valid);
    let (mut unreadable, mut invalid) = (rules.unreadable, rules.invalid);
    // A file is not "ok" with rules that could not be read or checked.
    let rules_failed = unreadable || invalid;
    for path in &args.files {
        let checked = check_file(
            &mut host,
            path,
            &mut files,
            !args.rules.is_empty(),
            &mut std::io::stderr(),
        );
        let Some((diags, outputs)) = checked else {
            unreadable = true;
            continue;
        };
        print!("{outputs}");
        let ok = !has_errors(&diags) && !rules_failed;
        invalid |= has_errors(&diags);
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

/// The rule files named, each once (by canonical path, so that the same
/// file named twice does not report every finding twice).
fn rule_paths(rules: &[PathBuf]) -> Vec<&PathBuf> {
    let mut seen = std::collections::HashSet::new();
    rules
        .iter()
        .filter(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())))
        .collect()
}

/// The rule files of `--rules`, read and checked.
#[derive(Default)]
struct Rules {
    /// The valid ones, as (path, text), in the order named.
    valid: Vec<(String, String)>,
    /// Some could not be read (why is on stderr).
    unreadable: bool,
    /// Some have errors (given to `emit`).
    invalid: bool,
}

/// Reads and checks each rule file named (once): each is added to `files`,
/// and the errors of each invalid one go to `emit` as it is found.
fn read_rules(
    paths: &[PathBuf],
    files: &mut SourceFiles,
    mut emit: impl FnMut(&SourceFiles, Vec<Diagnostic>),
) -> Rules {
    let mut rules = Rules::default();
    for path in rule_paths(paths) {
        let Some(text) = read_source(path) else {
            rules.unreadable = true;
            continue;
        };
        let name = path.display().to_string();
        let id = files.add(name.clone(), text.clone());
        match crate::datalog::compile(&text, id) {
            Err(diags) => {
                rules.invalid = true;
                emit(files, diags);
            }
            Ok(_) => rules.valid.push((name, text)),
        }
    }
    rules
}

/// Checks one file in `host`, with the host's rules run when `rules` (some
/// were named): its diagnostics and the rules' outputs; `None` (after
/// saying why to `err`) when it cannot be read.
fn check_file(
    host: &mut Host,
    path: &Path,
    files: &mut SourceFiles,
    rules: bool,
    err: &mut dyn Write,
) -> Option<(Vec<Diagnostic>, String)> {
    let source = super::read_program_to(path, err)?;
    let name = path.display().to_string();
    let id = source.add_to(files, &name);
    let file = host.set_file(&name, source.text);
    let a = host.analysis();
    let mut parsed = super::sure(a.parse_diagnostics(file)).to_vec();
    parsed.extend(super::sure(a.kind_diagnostics(file)));
    let mut diags = super::in_file(&parsed, id);
    let mut outputs = String::new();
    if !has_errors(&diags) && rules {
        super::sure(a.prefetch_flows(file));
        diags.extend(super::in_file(
            super::sure(a.analysis_diagnostics(file)),
            id,
        ));
        // The dependence tests run only for rules that read them.
        if super::sure(a.rules_read_dependences()) {
            let deps = super::sure(a.dependence_diagnostics(file));
            diags.extend(super::in_file(&deps, id));
        }
        for r in super::sure(a.rule_reports(file)) {
            diags.extend(super::in_file(&r.diagnostics, id));
            outputs += &r.outputs;
        }
    }
    Some((diags, outputs))
}

/// `check DIR...`: the files of the directories (and the files named),
/// across threads, each file's diagnostics whole, then the table
/// (`super::project`). Rule files are checked once, first.
fn directory(args: &Args) -> ExitCode {
    if args.format == Format::Json {
        eprintln!("error: `--format json` checks files: name them instead of a directory");
        return ExitCode::from(2);
    }
    let paths = match super::project::expand(&args.files) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("error: {why}");
            return ExitCode::from(2);
        }
    };
    let config = args.sizes.config(args.budget.max_instances);
    let mut files = SourceFiles::new();
    let rules = read_rules(&args.rules, &mut files, |files, diags| {
        eprint!("{}", files.render_all(&diags))
    });
    let worst = if rules.unreadable {
        2
    } else {
        u8::from(rules.invalid)
    };
    let threads = match super::threads(args.threads) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let code = super::project::run(&paths, threads, false, |path| {
        let mut host = super::host(config.clone());
        host.set_rules(&rules.valid);
        let mut files = SourceFiles::new();
        let mut err = Vec::new();
        let Some((diags, outputs)) = check_file(
            &mut host,
            path,
            &mut files,
            !args.rules.is_empty(),
            &mut err,
        ) else {
            return super::project::Report {
                out: Vec::new(),
                err,
                code: 2,
                found: String::new(),
            };
        };
        let _ = write!(err, "{}", files.render_all(&diags));
        let failed = has_errors(&diags);
        let mut out = outputs;
        if !failed && worst == 0 {
            out += &format!("{}: ok\n", path.display());
        }
        let warnings = diags.len();
        super::project::Report {
            out: out.into_bytes(),
            err,
            code: u8::from(failed),
            found: match warnings {
                0 => "clean".to_string(),
                1 => "1 warning".to_string(),
                n => format!("{n} warnings"),
            },
        }
    });
    ExitCode::from(super::code_of(code).max(worst))
}
