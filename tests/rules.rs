//! Run-time Datalog rules (src/datalog): the datafrog evaluator against the
//! naive reference on generated rule sets (`ARRAYFLOW_CASES`, default 300),
//! the shipped rule files on their fixtures (expected findings checked by
//! hand, see the comments), every rule-file diagnostic, the Soufflé export
//! read back, and the database re-running only the rules after a rule edit.

use arrayflow::datalog::{self, check, syntax, syntax::Type, Symbols};
use arrayflow::db::{self, rules as dbr, Database};
use arrayflow::diagnostics::FileId;
use arrayflow::hash::SplitMix64 as Rng;

#[path = "support/lsp_client.rs"]
mod lsp_client;
mod naive_datalog;
mod support;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/rules");

/// Input relations of the generated rule sets: e0(x, y), e1(x), e2(x, y, z).
fn gen_schema() -> Vec<(String, Vec<(String, Type)>)> {
    [2usize, 1, 3]
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (
                format!("e{k}"),
                (0..n).map(|c| (format!("c{c}"), Type::Number)).collect(),
            )
        })
        .collect()
}

/// A random rule set over e0..e2 and p0..p3 (arities 1..3): 1–3 positive
/// atoms, sometimes a negated atom, a comparison, constants and `_`.
fn gen_rules(rng: &mut Rng) -> String {
    let arity = |r: usize| [1usize, 2, 3, 2][r];
    let mut s = String::new();
    for p in 0..4 {
        let cols: Vec<String> = (0..arity(p)).map(|c| format!("c{c}: number")).collect();
        s.push_str(&format!(".decl p{p}({})\n", cols.join(", ")));
    }
    let rel = |rng: &mut Rng| -> (String, usize) {
        let k = rng.below(7) as usize;
        if k < 3 {
            (format!("e{k}"), [2, 1, 3][k])
        } else {
            (format!("p{}", k - 3), arity(k - 3))
        }
    };
    let vars = ["X", "Y", "Z", "W"];
    for _ in 0..2 + rng.below(5) {
        let mut bound: Vec<&str> = Vec::new();
        let mut body = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let (name, n) = rel(rng);
            let args: Vec<String> = (0..n)
                .map(|_| match rng.below(10) {
                    0 => "_".to_string(),
                    1 => format!("{}", rng.below(4)),
                    _ => {
                        let v = vars[rng.below(4) as usize];
                        bound.push(v);
                        v.to_string()
                    }
                })
                .collect();
            body.push(format!("{name}({})", args.join(", ")));
        }
        bound.sort_unstable();
        bound.dedup();
        if bound.is_empty() {
            continue;
        }
        let pick = |rng: &mut Rng| bound[rng.below(bound.len() as u64) as usize];
        if rng.below(3) == 0 {
            let (name, n) = rel(rng);
            let args: Vec<String> = (0..n)
                .map(|_| {
                    if rng.below(4) == 0 {
                        "_".to_string()
                    } else {
                        pick(rng).to_string()
                    }
                })
                .collect();
            body.push(format!("!{name}({})", args.join(", ")));
        }
        if rng.below(3) == 0 {
            let op = ["=", "!=", "<", "<=", ">", ">="][rng.below(6) as usize];
            let right = if rng.below(2) == 0 {
                pick(rng).to_string()
            } else {
                rng.below(4).to_string()
            };
            body.push(format!("{} {op} {right}", pick(rng)));
        }
        let h = rng.below(4) as usize;
        let head: Vec<String> = (0..arity(h))
            .map(|_| {
                if rng.below(8) == 0 {
                    rng.below(3).to_string()
                } else {
                    pick(rng).to_string()
                }
            })
            .collect();
        s.push_str(&format!(
            "p{h}({}) :- {}.\n",
            head.join(", "),
            body.join(", ")
        ));
    }
    s
}

fn gen_inputs(rng: &mut Rng) -> Vec<Vec<Vec<i64>>> {
    [2usize, 1, 3]
        .iter()
        .map(|&n| {
            (0..rng.below(12))
                .map(|_| (0..n).map(|_| rng.below(5) as i64).collect())
                .collect()
        })
        .collect()
}

#[test]
fn datafrog_evaluation_equals_the_naive_reference_on_generated_rule_sets() {
    let mut rng = Rng::new(15);
    let (mut checked, mut rejected, mut derived) = (0, 0, 0usize);
    for case in 0..support::cases(300) {
        let text = gen_rules(&mut rng);
        let inputs = gen_inputs(&mut rng);
        let (items, errors) = syntax::parse(&text, FileId(0));
        assert!(errors.is_empty(), "case {case}: {errors:?}\n{text}");
        let Ok(rules) = check::check(&items, &gen_schema(), FileId(0)) else {
            // Unsafe or unstratifiable: the generator does not avoid them.
            rejected += 1;
            continue;
        };
        let symbols = Symbols::default();
        let fast = datalog::evaluate(&rules, &inputs, &symbols);
        let (slow, _) = naive_datalog::evaluate(&rules, &inputs, &symbols);
        for (k, (f, s)) in fast.relations.iter().zip(&slow).enumerate() {
            // An input no rule reads is left empty by the evaluator.
            if k < inputs.len() && f.is_empty() {
                continue;
            }
            assert_eq!(
                f, s,
                "case {case}, relation {k}:\n{text}\ninputs {inputs:?}"
            );
        }
        derived += slow[3..].iter().map(Vec::len).sum::<usize>();
        checked += 1;
    }
    assert!(
        checked * 2 > rejected,
        "{checked} checked, {rejected} rejected"
    );
    assert!(derived > checked, "the rule sets derive almost nothing");
}

/// Recursion and negation by hand: reachability and its complement.
#[test]
fn transitive_closure_and_stratified_negation_by_hand() {
    let text = ".decl path(x: number, y: number)\n\
                path(X, Y) :- e0(X, Y).\n\
                path(X, Z) :- path(X, Y), e0(Y, Z).\n\
                .decl node(x: number)\n\
                node(X) :- e0(X, _).\nnode(Y) :- e0(_, Y).\n\
                .decl unreach(x: number, y: number)\n\
                unreach(X, Y) :- node(X), node(Y), !path(X, Y), X != Y.\n";
    let (items, errors) = syntax::parse(text, FileId(0));
    assert!(errors.is_empty());
    let rules = check::check(&items, &gen_schema(), FileId(0)).unwrap();
    // 1 → 2 → 3 → 1 is a cycle; 4 → 1.
    let edges = vec![vec![1, 2], vec![2, 3], vec![3, 1], vec![4, 1]];
    let out = datalog::evaluate(&rules, &[edges, vec![], vec![]], &Symbols::default());
    let path = &out.relations[rules.relation("path").unwrap()];
    // From each of 1, 2, 3: all of 1, 2, 3 (9 pairs); from 4: 1, 2, 3.
    assert_eq!(path.len(), 12, "{path:?}");
    let unreach = &out.relations[rules.relation("unreach").unwrap()];
    // Nothing reaches 4: (1,4), (2,4), (3,4).
    assert_eq!(unreach, &vec![vec![1, 4], vec![2, 4], vec![3, 4]]);
}

/// Facts, and rules with no positive atom (constants only).
#[test]
fn facts_and_rules_of_constants() {
    let text = ".decl p(x: number)\np(7).\np(1) :- !e1(1).\np(2) :- !e1(3).\np(3) :- 1 < 2.\n\
                p(4) :- 2 < 1.\n.decl q(x: number, s: symbol)\nq(X, \"a\") :- p(X), !e1(X).\n";
    let (items, errors) = syntax::parse(text, FileId(0));
    assert!(errors.is_empty(), "{errors:?}");
    let rules = check::check(&items, &gen_schema(), FileId(0)).unwrap();
    let out = datalog::evaluate(
        &rules,
        &[vec![], vec![vec![3], vec![7]], vec![]],
        &Symbols::default(),
    );
    let p = &out.relations[rules.relation("p").unwrap()];
    assert_eq!(p, &vec![vec![1], vec![3], vec![7]]);
    let q = &out.relations[rules.relation("q").unwrap()];
    let a = out.symbols.get("a").unwrap();
    assert_eq!(q, &vec![vec![1, a]]);
}

/// `arrayflow check FILE --rules RULES` in a database: the rule findings.
fn findings(loop_file: &str, rules_file: &str) -> Vec<(String, String)> {
    let db = Database::default();
    let text = std::fs::read_to_string(format!("{FIXTURES}/{loop_file}")).unwrap();
    let file = db.add_file(loop_file, text.clone());
    let rules = std::fs::read_to_string(format!("{FIXTURES}/{rules_file}")).unwrap();
    let rf = dbr::RuleFile::new(&db, rules_file.to_string(), rules);
    assert!(dbr::compiled_rules(&db, rf).is_ok());
    assert!(db::analysis_diagnostics(&db, file).is_empty());
    let res = dbr::rule_results(&db, file, rf);
    let mut out: Vec<(String, String)> = res
        .diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.code, "W1101");
            let span = d.labels[0].span;
            (text[span.range()].to_string(), d.message.clone())
        })
        .collect();
    out.sort();
    out
}

/// uninitialized.loop: P reads B[i] before anything writes B (R writes B[0]
/// later); Q's first iteration reads `s` (never written before) and A[0]
/// (P writes A[1..N] only). T reads B[0], which R may have written: not
/// reported (it also may see the initial value, but a write reached it).
#[test]
fn reads_no_write_reached() {
    let got = findings("uninitialized.loop", "uninitialized.dl");
    let msg = |a: &str, s: &str| {
        format!("`{a}` is read by {s} where no write reached it: only its initial value is seen")
    };
    assert_eq!(
        got,
        vec![
            ("A[i]".to_string(), msg("A", "Q")),
            ("B[i]".to_string(), msg("B", "P")),
            ("s".to_string(), msg("s", "Q")),
        ]
    );
}

/// carried.loop (hand-derived in its comment): every loop that carries the
/// value of each read, which the rule finds through `loop_depth`.
#[test]
fn the_loops_that_carry_each_read() {
    let got = findings("carried.loop", "carried.dl");
    let msg = |l: &str| format!("loop `{l}` carries the value this reads");
    let want = vec![
        ("A[i - 1, j]".to_string(), msg("i")),
        ("A[i, j - 1]".to_string(), msg("j")),
        ("x".to_string(), msg("_W1")),
        ("x".to_string(), msg("i")),
        ("x".to_string(), msg("i")),
    ];
    assert_eq!(got, want);
}

/// doall_flow.loop: loop 1 (doall) carries A[i-1] → A[i] from Sum to Sum;
/// loop 2 (doall) reads what loop 1 wrote: nothing carried; loop 3 carries
/// C[i-1] → C[i] but is not marked doall.
#[test]
fn doall_loops_that_carry_a_flow() {
    let got = findings("doall_flow.loop", "doall_flow.dl");
    assert_eq!(got.len(), 1, "{got:?}");
    // The loop's header.
    assert_eq!(got[0].0, "for i = 1 to N doall");
    assert_eq!(
        got[0].1,
        "loop `i` is marked doall but carries a flow of `A` from Sum to Sum"
    );
}

/// The rule file's own diagnostics: code and the text the primary label covers.
fn rule_errors(text: &str) -> Vec<(&'static str, String)> {
    match datalog::compile(text, FileId(0)) {
        Ok(_) => Vec::new(),
        Err(diags) => diags
            .iter()
            .map(|d| (d.code, text[d.labels[0].span.range()].to_string()))
            .collect(),
    }
}

#[test]
fn every_rule_file_diagnostic() {
    let cases: &[(&str, &str, &str)] = &[
        ("p(X) :- read(X, _, _)", "E1001", ""),
        (".decl p(x: number)\np(X) :- read(X _, _).", "E1001", "_"),
        (".decl p(x: integer)", "E1001", "integer"),
        (
            ".decl p(x: number)\np(X) :- reads(X, _, _).",
            "E1002",
            "reads",
        ),
        (".check nothing \"m\"", "E1002", "nothing"),
        (
            ".decl p(x: number)\np(X) :- read(X, _).",
            "E1003",
            "read(X, _)",
        ),
        (
            ".decl p(x: number, y: number)\np(X, Y) :- initial(X).",
            "E1004",
            "Y",
        ),
        (
            ".decl p(x: number)\np(X) :- initial(X), !source(X, Y).",
            "E1004",
            "Y",
        ),
        (
            ".decl p(x: number)\np(X) :- initial(X), Y > 1.",
            "E1004",
            "Y",
        ),
        (".decl p(x: number)\np(_) :- initial(X).", "E1004", "_"),
        (
            ".decl p(x: number)\n.decl q(x: number)\np(X) :- initial(X), !q(X).\nq(X) :- p(X).",
            "E1005",
            "!q(X)",
        ),
        (".decl p(s: site)\np(S) :- op(S, _).", "E1006", "S"),
        (
            ".decl p(s: site)\np(S) :- site(S, _), S < \"a\".",
            "E1006",
            "S < \"a\"",
        ),
        (
            ".decl p(x: number)\np(X) :- read(X, _, _), X = \"a\".",
            "E1006",
            "X = \"a\"",
        ),
        (".decl site(x: number)", "E1007", "site"),
        (".decl p(x: number)\n.decl p(x: number)", "E1007", "p"),
        ("initial(1).", "E1007", "initial"),
        (".decl p(x: number)\n.check p \"m\"", "E1008", "p"),
        (
            ".decl p(s: site)\n.check p \"at {t}\"",
            "E1008",
            "\"at {t}\"",
        ),
    ];
    for (text, code, covered) in cases {
        let got = rule_errors(text);
        assert!(
            got.iter().any(|(c, t)| c == code && t == covered),
            "{text}\nwanted {code} on `{covered}`, got {got:?}"
        );
    }
    // A valid file with every construct gives none.
    let ok = ".decl p(x: access, s: site) // comment\n/* block */ # also a comment\n\
              p(X, S) :- read(R, O, X), op(O, S), !initial(R), R >= 0, S != \"T\".\n\
              .output p\n.check p \"{s}\"\n.deny p \"{x}\"\n.input site\n";
    assert_eq!(rule_errors(ok), vec![]);
}

/// One mistake, one diagnostic: an atom that does not resolve leaves its
/// variables unbound without their uses being called unsafe (E1004), and
/// arithmetic and aggregates, which the dialect lacks, are named as such.
#[test]
fn each_mistake_gets_one_diagnostic_that_names_it() {
    // (rule file, the (code, covered text) of every diagnostic, words the
    // first one says)
    type Diags = &'static [(&'static str, &'static str)];
    let cases: &[(&str, Diags, &str)] = &[
        (
            ".decl p(x: number, y: number)\np(X, Y) :- reads(X, Y), X > 1, !initial(Y).",
            &[("E1002", "reads")],
            "unknown relation",
        ),
        (
            ".decl p(x: number)\np(X) :- read(X, _), X > 1.",
            &[("E1003", "read(X, _)")],
            "3 columns",
        ),
        (
            ".decl p(x: number)\np(Y) :- initial(X), Y = X + 1.",
            &[("E1001", "+")],
            "no arithmetic",
        ),
        (
            ".decl p(x: number)\np(Y) :- initial(X), Y = X - 1.",
            &[("E1001", "-")],
            "no arithmetic",
        ),
        (
            ".decl p(x: number)\np(Y) :- initial(X), p(X * 2).",
            &[("E1001", "*")],
            "no arithmetic",
        ),
        (
            ".decl p(n: number)\np(N) :- N = count : { initial(_) }.",
            &[("E1001", "count")],
            "no aggregates",
        ),
        (
            ".decl p(n: number)\np(N) :- N = sum X : { initial(X) }.",
            &[("E1001", "sum")],
            "no aggregates",
        ),
        // The next clause is still read: its own mistake is reported.
        (
            ".decl p(n: number)\np(N) :- N = count : initial(_).\np(X) :- nothing(X).",
            &[("E1001", "count"), ("E1002", "nothing")],
            "no aggregates",
        ),
        // A variable may be called `count`; a negative number is a number.
        (
            ".decl p(n: number)\np(count) :- initial(count), count > -1.",
            &[],
            "",
        ),
    ];
    for (text, want, says) in cases {
        let diags = match datalog::compile(text, FileId(0)) {
            Ok(_) => Vec::new(),
            Err(d) => d,
        };
        let got: Vec<(&str, &str)> = diags
            .iter()
            .map(|d| (d.code, &text[d.labels[0].span.range()]))
            .collect();
        assert_eq!(&got, want, "{text}");
        if let Some(d) = diags.first() {
            assert!(d.message.contains(says), "{text}: {}", d.message);
        }
    }
}

/// The examples of docs/language.md's E1xxx sections (```datalog blocks)
/// give their code.
#[test]
fn documented_rule_examples_give_their_code() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/language.md")).unwrap();
    let mut checked = 0;
    for part in doc.split("\n### ").skip(1) {
        let code = &part[..5];
        if !code.starts_with("E10") {
            continue;
        }
        let example = part
            .split("```datalog\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .unwrap_or_else(|| panic!("{code} has no ```datalog example"));
        let got = rule_errors(example);
        assert!(got.iter().any(|(c, _)| *c == code), "{code}: {got:?}");
        checked += 1;
    }
    assert_eq!(checked, 8);
}

/// The Soufflé export read back gives the same findings and outputs as the
/// relations in memory, on every paper fixture that analyses.
#[test]
fn souffle_files_read_back_give_the_same_results() {
    let rules_text = format!(
        "{}\n.output unreached\n{}\n.output bad_doall\n\
         .decl rstar(a: number, b: number)\nrstar(A, B) :- related(A, B).\nrstar(A, C) :- rstar(A, B), related(B, C).\n.output rstar\n\
         .decl cells(c: number, a: symbol, d: number, v: number)\ncells(C, A, D, V) :- write(_, _, C, 1), cell(C, A), cell_index(C, D, V).\n.output cells\n",
        std::fs::read_to_string(format!("{FIXTURES}/uninitialized.dl")).unwrap(),
        std::fs::read_to_string(format!("{FIXTURES}/doall_flow.dl")).unwrap()
    );
    let rules = datalog::compile(&rules_text, FileId(0)).unwrap();
    let dir = std::env::temp_dir().join(format!("arrayflow-souffle-{}", std::process::id()));
    let papers = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/papers");
    let mut checked = 0;
    for entry in std::fs::read_dir(papers).unwrap() {
        let path = entry.unwrap().path();
        let db = Database::default();
        let file = db.add_file(
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        );
        let Some(e) = dbr::exported(&db, file) else {
            continue;
        };
        if !db::analysis_diagnostics(&db, file).is_empty() {
            continue;
        }
        datalog::souffle::write_dir(e, &dir).unwrap();
        let (rels, symbols) = datalog::souffle::read_dir(&dir).unwrap();
        let a = datalog::evaluate(&rules, &e.relations, &e.symbols);
        let b = datalog::evaluate(&rules, &rels, &symbols);
        let (ta, tb) = (
            datalog::report::outputs(&rules, &a),
            datalog::report::outputs(&rules, &b),
        );
        assert_eq!(ta, tb, "{}", path.display());
        checked += 1;
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(checked > 40, "only {checked} fixtures");
    let dl = datalog::souffle::declarations();
    assert!(
        dl.contains(".decl read(r: number, o: number, x: access)\n.input read\n"),
        "{dl}"
    );
}

/// Editing a rule file re-runs its check and evaluation, not the exported
/// relations, and not another rule file's evaluation.
#[test]
fn a_rule_edit_reruns_only_that_rule_file() {
    let (mut db, log) = support::logging_db();
    let text = std::fs::read_to_string(format!("{FIXTURES}/doall_flow.loop")).unwrap();
    let file = db.add_file("d.loop", text);
    let read = |n: &str| std::fs::read_to_string(format!("{FIXTURES}/{n}")).unwrap();
    let a = dbr::RuleFile::new(&db, "a.dl".into(), read("doall_flow.dl"));
    let b = dbr::RuleFile::new(&db, "b.dl".into(), read("uninitialized.dl"));
    assert_eq!(dbr::rule_results(&db, file, a).diagnostics.len(), 1);
    let before_b = dbr::rule_results(&db, file, b).diagnostics.len();
    let count = |name: &str| log.lock().unwrap().iter().filter(|n| *n == name).count();
    // Neither file reads `dep_carried`: the relations without it.
    assert_eq!(count("exported_without_deps"), 1);
    assert_eq!(count("exported"), 0);
    assert_eq!(count("rule_results"), 2);
    log.lock().unwrap().clear();
    // The edit: report every loop that carries a flow, marked or not.
    use salsa::Setter;
    let edited = read("doall_flow.dl").replace("loop(L, C, 1)", "loop(L, C, _)");
    a.set_text(&mut db).to(edited);
    assert_eq!(dbr::rule_results(&db, file, a).diagnostics.len(), 2);
    assert_eq!(dbr::rule_results(&db, file, b).diagnostics.len(), before_b);
    assert_eq!(
        count("exported_without_deps"),
        0,
        "{:?}",
        log.lock().unwrap()
    );
    assert_eq!(count("kernel_flow"), 0);
    assert_eq!(count("compiled_rules"), 1);
    assert_eq!(count("rule_results"), 1);
}

/// The dependence tests run only for rules that read `dep_carried`: a rule
/// set that does not read it makes no `kernel_deps` execution; one that
/// does gets the carried dependences (Sum's and Run's loops, by hand: each
/// reads its own write of the iteration before).
#[test]
fn only_rules_that_read_dep_carried_run_the_dependence_tests() {
    let (db, log) = support::logging_db();
    let text = std::fs::read_to_string(format!("{FIXTURES}/doall_flow.loop")).unwrap();
    let file = db.add_file("d.loop", text);
    let count = |name: &str| log.lock().unwrap().iter().filter(|n| *n == name).count();
    let flows = std::fs::read_to_string(format!("{FIXTURES}/doall_flow.dl")).unwrap();
    let a = dbr::RuleFile::new(&db, "a.dl".into(), flows);
    assert_eq!(dbr::rule_results(&db, file, a).diagnostics.len(), 1);
    assert!(!dbr::need_deps(&db, &[a]));
    assert_eq!(count("kernel_flow"), 3);
    assert_eq!(count("kernel_deps"), 0, "{:?}", log.lock().unwrap());
    assert_eq!(count("kernel_expansion"), 0, "{:?}", log.lock().unwrap());
    let deps = ".decl carries(l: loop, from: site, array: symbol)\n\
                carries(L, F, A) :- dep_carried(L, \"flow\", F, _, A).\n\
                .output carries\n";
    let b = dbr::RuleFile::new(&db, "b.dl".into(), deps.to_string());
    assert!(dbr::need_deps(&db, &[a, b]));
    let out = dbr::rule_results(&db, file, b).outputs.clone();
    assert_eq!(count("kernel_deps"), 3, "{:?}", log.lock().unwrap());
    assert!(
        out.contains("carries(") && out.contains("Sum") && out.contains("Run"),
        "{out}"
    );
    assert!(!out.contains("Copy"), "{out}");
}

fn arrayflow(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_line() {
    let f = |n: &str| format!("{FIXTURES}/{n}");
    // Findings are warnings: exit 0, pointing into the program.
    let (code, out, err) = arrayflow(&[
        "check",
        &f("doall_flow.loop"),
        "--rules",
        &f("doall_flow.dl"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "warning[W1101]: loop `i` is marked doall but carries a flow of `A` from Sum to Sum"
        ),
        "{err}"
    );
    assert!(err.contains("doall_flow.loop:7:1"), "{err}");
    assert!(out.contains("doall_flow.loop: ok"), "{out}");
    // `.deny` makes them errors; `.output` prints the relation.
    let dir = std::env::temp_dir().join(format!("arrayflow-cli-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let deny = dir.join("deny.dl");
    let text = std::fs::read_to_string(f("doall_flow.dl"))
        .unwrap()
        .replace(".check", ".deny")
        + ".output bad_doall\n";
    std::fs::write(&deny, text).unwrap();
    let (code, out, err) = arrayflow(&[
        "check",
        &f("doall_flow.loop"),
        "--rules",
        deny.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error[E1101]"), "{err}");
    assert!(
        out.contains("bad_doall(0, \"i\", \"Sum\", \"Sum\", \"A\")"),
        "{out}"
    );
    // A wrong rule file: its diagnostics, exit 1.
    let bad = dir.join("bad.dl");
    std::fs::write(&bad, ".decl p(x: number)\np(X) :- reads(X).\n").unwrap();
    let (code, _, err) = arrayflow(&[
        "check",
        &f("doall_flow.loop"),
        "--rules",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error[E1002]: unknown relation `reads`") && err.contains("bad.dl:2:9"),
        "{err}"
    );
    // The Soufflé export.
    let out_dir = dir.join("souffle");
    let (code, _, err) = arrayflow(&[
        "facts",
        &f("doall_flow.loop"),
        "--format",
        "souffle",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let carried = std::fs::read_to_string(out_dir.join("flow_carried.facts")).unwrap();
    assert!(carried.contains("0\tSum\tSum\tA\n"), "{carried}");
    assert!(std::fs::read_to_string(out_dir.join("inputs.dl"))
        .unwrap()
        .contains(".input flow_carried"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The language server: rule files from `initializationOptions` give
/// findings on the document; a settings change to another file replaces them.
#[test]
fn the_language_server_publishes_rule_findings() {
    use serde_json::json;
    let f = |n: &str| format!("{FIXTURES}/{n}");
    let mut c = lsp_client::Client::start_with(
        env!("CARGO_BIN_EXE_arrayflow"),
        json!({"rules": [f("doall_flow.dl")]}),
    );
    let u = "file:///work/doall_flow.loop";
    c.open(u, &std::fs::read_to_string(f("doall_flow.loop")).unwrap());
    let diags = c.diagnostics(u, 1);
    let found: Vec<&serde_json::Value> = diags.iter().filter(|d| d["code"] == "W1101").collect();
    assert_eq!(found.len(), 1, "{diags:?}");
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": 6, "character": 0})
    );
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"arrayflow": {"rules": [f("uninitialized.dl")]}}}),
    );
    c.wait("findings of the new rule file", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == u
            && !v.to_string().contains("marked doall but carries")
            && v.to_string().contains("W1101")
    });
    c.shutdown();
}
