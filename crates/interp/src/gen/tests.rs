use super::*;
use crate::interp::{self, Options};
use crate::model::{Access, ExprKind, Node, StmtKind};
use std::collections::BTreeSet;

fn cases() -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

#[test]
fn generation_is_deterministic_per_seed() {
    let o = GenOptions::all(Size::Medium);
    assert_eq!(generate(11, &o), generate(11, &o));
    assert_ne!(generate(11, &o), generate(12, &o));
}

#[test]
fn affine_expr_has_the_affine_form_and_no_negative_literals() {
    let i = Var::Counter(CounterId(0));
    let n = Var::Param(ParamId(0));
    for terms in [
        vec![],
        vec![(i, 1)],
        vec![(i, -1)],
        vec![(i, -2), (n, 3)],
        vec![(i, -1), (n, -1)],
    ] {
        for constant in [-3, 0, 4] {
            let a = terms
                .iter()
                .fold(Affine::constant(constant), |acc, &(v, k)| {
                    acc.checked_add(&Affine::var(v).checked_scale(k).unwrap())
                        .unwrap()
                });
            let x = affine_expr(&a);
            assert_eq!(Affine::from_expr(&x), Some(a), "{x:?}");
            assert!(!has_negative_literal(&x));
        }
    }
}

fn has_negative_literal(x: &Expr) -> bool {
    match &x.kind {
        ExprKind::Int(n) => *n < 0,
        ExprKind::Neg(a) => has_negative_literal(a),
        ExprKind::Binary(_, a, b) => has_negative_literal(a) || has_negative_literal(b),
        ExprKind::Call(_, args) => args.iter().any(has_negative_literal),
        ExprKind::Access(a) => a.subscripts.iter().any(|s| has_negative_literal(&s.expr)),
        _ => false,
    }
}

/// Every run of a generated program at its defaults stays in range (and so
/// never stops with an error: division is only by positive constants).
#[test]
fn generated_programs_run_without_errors() {
    for size in [Size::Small, Size::Medium, Size::Large] {
        for seed in 0..cases() / 3 {
            let p = generate(seed, &GenOptions::all(size));
            for max_trips in [0, 3] {
                let mut o = Options::new(p.param_values(&[]).unwrap());
                o.seed = seed;
                o.max_trips = max_trips;
                o.max_steps = 5_000_000;
                if let Err(e) = interp::run(&p, &o) {
                    panic!("seed {seed} {size:?}: {e}\n{p:#?}");
                }
            }
        }
    }
}

/// The forms of the language contract that `p` uses.
fn features(p: &Program) -> BTreeSet<&'static str> {
    let mut f = BTreeSet::new();
    for a in &p.arrays {
        f.insert(match a.dims.len() {
            0 => "scalar",
            1 => "1-d array",
            2 => "2-d array",
            _ => "3-d array",
        });
    }
    nodes(&p.body, &mut f, 0);
    f
}

fn nodes(body: &[Node], f: &mut BTreeSet<&'static str>, depth: usize) {
    for n in body {
        match n {
            Node::For(l) => {
                if depth > 0 {
                    f.insert("nested for");
                }
                if l.lower.affine.uses_counters() || l.upper.affine.uses_counters() {
                    f.insert("triangular bounds");
                } else {
                    f.insert("rectangular bounds");
                }
                if l.step > 1 {
                    f.insert("step");
                }
                if l.upper.affine.vars().any(|v| matches!(v, Var::Param(_))) {
                    f.insert("parameter in bounds");
                }
                nodes(&l.body, f, depth + 1);
            }
            Node::While(w) => {
                f.insert("while");
                cond(&w.cond.cond, f);
                nodes(&w.body, f, depth + 1);
            }
            Node::If(i) => {
                if i.branches.len() > 1 {
                    f.insert("elsif");
                }
                if i.otherwise.is_some() {
                    f.insert("else");
                }
                for (c, b) in &i.branches {
                    cond(&c.cond, f);
                    nodes(b, f, depth + 1);
                }
                if let Some(b) = &i.otherwise {
                    nodes(b, f, depth + 1);
                }
            }
            Node::Stmt(s) => {
                match &s.kind {
                    StmtKind::Assign { op, value, .. } => {
                        if op.is_some() {
                            f.insert("compound assignment");
                        }
                        if has_call(value) {
                            f.insert("call");
                        }
                    }
                    StmtKind::Call { .. } => {
                        f.insert("call statement");
                    }
                }
                for a in s.accesses() {
                    subscripts(a.access, f);
                }
            }
        }
    }
}

fn subscripts(a: &Access, f: &mut BTreeSet<&'static str>) {
    for s in &a.subscripts {
        f.insert(if s.affine.is_some() {
            "affine subscript"
        } else {
            "non-affine subscript"
        });
    }
}

fn has_call(x: &Expr) -> bool {
    match &x.kind {
        ExprKind::Call(..) => true,
        ExprKind::Neg(a) => has_call(a),
        ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
        ExprKind::Access(a) => a.subscripts.iter().any(|s| has_call(&s.expr)),
        _ => false,
    }
}

fn cond(c: &Cond, f: &mut BTreeSet<&'static str>) {
    match c {
        Cond::Unknown => {
            f.insert("unknown condition");
        }
        Cond::Cmp(_, l, r) => {
            if l.is_static() && r.is_static() {
                f.insert("affine condition");
            } else {
                f.insert("data-dependent condition");
            }
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond(a, f);
            cond(b, f);
        }
        Cond::Not(a) => cond(a, f),
    }
}

const ALL_FEATURES: [&str; 21] = [
    "scalar",
    "1-d array",
    "2-d array",
    "3-d array",
    "nested for",
    "rectangular bounds",
    "triangular bounds",
    "step",
    "parameter in bounds",
    "while",
    "elsif",
    "else",
    "compound assignment",
    "call",
    "call statement",
    "affine subscript",
    "non-affine subscript",
    "unknown condition",
    "affine condition",
    "data-dependent condition",
    "nested for",
];

#[test]
fn every_form_of_the_contract_is_generated() {
    let mut seen = BTreeSet::new();
    let mut per_program = Vec::new();
    for seed in 0..100 {
        let f = features(&generate(seed, &GenOptions::all(Size::Large)));
        per_program.push(f.len());
        seen.extend(f);
    }
    for want in ALL_FEATURES {
        assert!(seen.contains(want), "no generated program has: {want}");
    }
    // Large programs use most forms each.
    let avg = per_program.iter().sum::<usize>() / per_program.len();
    assert!(avg >= 14, "a large program uses {avg} forms on average");
}

#[test]
fn static_control_programs_are_static() {
    for seed in 0..cases() {
        let p = generate(seed, &GenOptions::static_control(Size::Medium));
        let f = features(&p);
        for banned in [
            "while",
            "unknown condition",
            "data-dependent condition",
            "non-affine subscript",
        ] {
            assert!(!f.contains(banned), "seed {seed} has {banned}");
        }
        for c in p.conditions() {
            assert!(c.cond.is_static());
        }
    }
}
