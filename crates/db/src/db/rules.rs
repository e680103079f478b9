//! Run-time Datalog rules in the database (docs/rules.md §8). A rule file is an
//! input ([`RuleFile`]); [`exported`] (the relations a program exports,
//! crates/rules/src/relations.rs) depends on the program only, and
//! [`rule_results`] on one program and one rule file, so editing a rule file
//! re-runs that file's check and evaluation and nothing of the analyses.

use super::{loop_status_with, parse, settings, SourceFile};
use crate::diagnostics::{Diagnostic, FileId};
use arrayflow_rules::{self as datalog, relations::LoopInfo, Exported, Rules};

/// A rule file.
#[salsa::input]
pub struct RuleFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

/// Diagnostics of a rule file itself point into this file id.
pub const RULES: FileId = FileId(1);

/// The relations a valid file exports (`None` when it has errors). The
/// instance relations come from the whole program's expansion at the
/// settings' sizes; they are empty when that analysis fails (its error is
/// among [`super::analysis_diagnostics`], and `Exported::failed` says why).
#[salsa::tracked(returns(ref))]
pub fn exported(db: &dyn salsa::Database, file: SourceFile) -> Option<Exported> {
    export(db, file, true)
}

/// [`exported`] with `dep_carried` left empty: for rules that do not read
/// it, so that no dependence test runs.
#[salsa::tracked(returns(ref))]
pub fn exported_without_deps(db: &dyn salsa::Database, file: SourceFile) -> Option<Exported> {
    export(db, file, false)
}

/// The relations a rule set reads: without the dependence tests when it
/// does not read `dep_carried`.
pub fn exported_for<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    rules: &Rules,
) -> &'db Option<Exported> {
    if rules.reads(datalog::relations::DEP_CARRIED) {
        exported(db, file)
    } else {
        exported_without_deps(db, file)
    }
}

/// Whether any valid rule file of `rules` reads `dep_carried`, the one
/// relation that needs the dependence tests.
pub fn need_deps(db: &dyn salsa::Database, rules: &[RuleFile]) -> bool {
    rules.iter().any(|&r| {
        compiled_rules(db, r)
            .as_ref()
            .is_ok_and(|r| r.reads(datalog::relations::DEP_CARRIED))
    })
}

fn export(db: &dyn salsa::Database, file: SourceFile, deps: bool) -> Option<Exported> {
    let program = parse(db, file).program.as_ref()?;
    let exp = crate::expansion::expand_with(program, &settings(db), &super::kinds(db));
    let spans = super::ide::loop_spans(program);
    let loops: Vec<LoopInfo> = loop_status_with(db, file, deps, false)
        .into_iter()
        .map(|l| LoopInfo {
            counter: l.counter,
            span: spans[l.counter.index()],
            doall: l.doall,
            flows: l
                .flows
                .unwrap_or_default()
                .iter()
                .map(|c| (c.array, c.from, c.to))
                .collect(),
            deps: l
                .deps
                .iter()
                .map(|d| {
                    let kind = match d.kind {
                        crate::dependence::Kind::Flow => "flow",
                        crate::dependence::Kind::Anti => "anti",
                        crate::dependence::Kind::Output => "output",
                    };
                    (kind, d.array, d.from, d.to)
                })
                .collect(),
        })
        .collect();
    let mut e = datalog::relations::export(program, exp.as_ref().ok(), &loops);
    e.failed = exp.err().map(|e| e.to_string());
    Some(e)
}

/// A rule file parsed and checked; its diagnostics point into [`RULES`].
#[salsa::tracked(returns(ref))]
pub fn compiled_rules(db: &dyn salsa::Database, rules: RuleFile) -> Result<Rules, Vec<Diagnostic>> {
    datalog::compile(rules.text(db), RULES)
}

/// What one rule file says about one program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RuleResults {
    /// The check relations' diagnostics, pointing into the program ([`super::FILE`]).
    pub diagnostics: Vec<Diagnostic>,
    /// The `.output` relations, one `name(values)` line per tuple.
    pub outputs: String,
}

/// Evaluates a rule file over a program's exported relations (nothing when
/// either has errors).
#[salsa::tracked(returns(ref))]
pub fn rule_results(db: &dyn salsa::Database, file: SourceFile, rules: RuleFile) -> RuleResults {
    let Ok(r) = compiled_rules(db, rules) else {
        return RuleResults::default();
    };
    let Some(e) = exported_for(db, file, r) else {
        return RuleResults::default();
    };
    if let Some(why) = &e.failed {
        // Over empty instance relations, rules would report what is not so.
        let d = Diagnostic::error(
            "E1102",
            format!(
                "the rules of `{}` were not run: the analysis they read failed",
                rules.path(db)
            ),
        )
        .note(why.clone());
        return RuleResults {
            diagnostics: vec![d],
            outputs: String::new(),
        };
    }
    let out = datalog::evaluate(r, &e.relations, &e.symbols);
    RuleResults {
        diagnostics: datalog::report::diagnostics(r, &out, e, super::FILE),
        outputs: datalog::report::outputs(r, &out),
    }
}

/// The rule files every document of a database is checked with (the
/// language server's `rules` setting).
#[salsa::input(singleton)]
pub struct RuleSet {
    #[returns(ref)]
    pub files: Vec<RuleFile>,
}

/// Makes `files` (path, text) the database's rule files: a file already
/// there with the same path keeps its input (and its results when its text
/// is unchanged).
pub fn set_rules(db: &mut super::Database, files: &[(String, String)]) {
    use salsa::Setter;
    let old: Vec<RuleFile> = match RuleSet::try_get(db) {
        Some(s) => s.files(db).clone(),
        None => Vec::new(),
    };
    let mut new = Vec::new();
    for (path, text) in files {
        match old.iter().find(|f| f.path(db) == path) {
            Some(&f) => {
                if f.text(db) != text {
                    f.set_text(db).to(text.clone());
                }
                new.push(f);
            }
            None => new.push(RuleFile::new(db, path.clone(), text.clone())),
        }
    }
    match RuleSet::try_get(db) {
        Some(s) if *s.files(db) != new => {
            s.set_files(db).to(new);
        }
        Some(_) => {}
        None => {
            RuleSet::new(db, new);
        }
    }
}

/// The rule files of the database's [`RuleSet`], in the order set (none
/// before [`set_rules`]).
pub fn rule_files(db: &dyn salsa::Database) -> &[RuleFile] {
    match RuleSet::try_get(db) {
        Some(set) => set.files(db),
        None => &[],
    }
}

/// The findings of every rule file of the database's [`RuleSet`] on
/// `file` (rule files with errors give none).
pub fn rule_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    rule_files(db)
        .iter()
        .flat_map(|&r| rule_results(db, file, r).diagnostics.clone())
        .collect()
}
