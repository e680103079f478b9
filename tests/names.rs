//! Name resolution as docs/language.md documents it, checked on the model.

use arrayflow::diagnostics::{has_errors, FileId};
use arrayflow::model::*;

fn program(source: &str) -> Program {
    let (p, diags) = arrayflow::lower::compile(source, FileId(0));
    assert!(!has_errors(&diags), "{diags:#?}");
    p.expect("valid")
}

fn codes(source: &str) -> Vec<&'static str> {
    let (_, diags) = arrayflow::lower::compile(source, FileId(0));
    diags.iter().map(|d| d.code).collect()
}

fn value(s: &Stmt) -> &Expr {
    match &s.kind {
        StmtKind::Assign { value, .. } => value,
        StmtKind::Call { .. } => panic!("not an assignment"),
    }
}

#[test]
fn a_while_name_is_its_counter_in_the_condition_and_the_body() {
    let p = program("real A[0..9];\nwhile [w] w < 5 do\n  A[w] = w;\nend\nuse(A[0]);\n");
    let c = &p.conditions()[0];
    assert_eq!((c.name.as_str(), c.generated), ("w", false));
    let Cond::Cmp(CmpOp::Lt, l, _) = &c.cond else {
        panic!("{:?}", c.cond)
    };
    assert_eq!(l.kind, ExprKind::Counter(CounterId(0)));
    assert_eq!(p.counters[0].kind, CounterKind::While);
    assert_eq!(value(p.stmts()[0]).kind, ExprKind::Counter(CounterId(0)));
}

#[test]
fn a_name_can_be_a_scalar_and_a_function() {
    let p = program("real f;\nf = f(f);\nuse(f);\n");
    let ExprKind::Call(name, args) = &value(p.stmts()[0]).kind else {
        panic!()
    };
    assert_eq!(name, "f");
    assert!(matches!(args[0].kind, ExprKind::Access(_)));
}

#[test]
fn sequential_loops_reuse_a_counter_name_with_distinct_counters() {
    let p = program(
        "real A[1..4];\nfor i = 1 to 4 do A[i] = 0; end\nfor i = 1 to 4 do use(A[i]); end\n",
    );
    assert_eq!(p.counters.len(), 2);
    assert_eq!(p.counters[0].name, p.counters[1].name);
}

#[test]
fn declarations_may_follow_their_uses() {
    let p =
        program("for i = 1 to N do\n  A[i] = i;\nend\nuse(A[1]);\nparam N = 3;\nreal A[1..N];\n");
    assert_eq!(p.params[0].name, "N");
    assert_eq!(p.arrays[0].dims.len(), 1);
}

#[test]
fn generated_names_follow_textual_order() {
    let p = program("real x;\nwhile ... do\n  if ... then x = 1; end\nend\nuse(x);\n");
    let names: Vec<&str> = p.conditions().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["_W1", "_C2"]);
    let labels: Vec<&str> = p.stmts().iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["_S1", "_S2"]);
}

#[test]
fn names_that_would_be_ambiguous_are_errors() {
    assert_eq!(
        codes("param i = 2;\nfor i = 1 to 3 do use(i); end\n"),
        ["E0106"]
    );
    assert_eq!(codes("real x;\nparam x;\nuse(x);\n"), ["E0112"]);
    assert_eq!(
        codes("real A[1..3];\nfor i = 1 to 3 do\n  while [i] ... do use(A[i]); end\nend\n"),
        ["E0111"]
    );
}

#[test]
fn negative_literals_and_euclidean_division_are_the_model_s() {
    let p = program("real x;\nx = -9223372036854775808 + -7 / 2;\nuse(x);\n");
    let ExprKind::Binary(BinOp::Add, l, r) = &value(p.stmts()[0]).kind else {
        panic!()
    };
    assert_eq!(l.kind, ExprKind::Int(i64::MIN));
    let mut env = eval::StaticEnv {
        params: &[],
        counters: &[],
    };
    assert_eq!(eval::expr(r, &mut env), Ok(-4));
}
